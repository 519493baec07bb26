"""The training callbacks of smooth fine-tuning of a pretrained start.

Fine-tuning a LAES start moves the input path of every memory mode by about
the learning rate per Adam step, and a change of a mode's input is
multiplied by its gain ``1 / (1 - |lambda|)``, up to thousands for the slow
modes of a LAES memory on long sequences; the first steps then push the
training loss up (a spike). :class:`LinearWarmup` raises the learning rate
over the first epochs, and :class:`ModeInputNormalization` trains the input
of each mode of a ``'schur'`` memory in units of its gain (the input
normalization of Orvieto et al. 2023, "Resurrecting Recurrent Neural
Networks for Long Sequences"). The estimators' ``fine_tuning='smooth'``
uses both (measurements: ``docs/memory.md``, "Smooth fine-tuning as the
default").
"""

from __future__ import annotations

import torch
from skorch.callbacks import Callback
from torch.nn.utils import parametrize

from ..nn._checks import check_positive_int

__all__ = [
    "LinearWarmup",
    "ModeInputNormalization",
    "carry_optimizer_state",
    "input_normalization_factors",
    "normalize_mode_inputs_",
    "remove_input_normalization",
]

#: smallest mode gain factor ``1 - |lambda|`` (a mode at the edge of
#: stability still trains)
_MIN_MODE_FACTOR = 1e-4


class LinearWarmup(Callback):
    """Raise every optimizer group's learning rate linearly over the first
    epochs.

    In epoch ``e`` (1-based) of the first ``epochs``, each group trains at
    ``e / epochs`` of its rate; from epoch ``epochs`` on at its full rate.
    The factor is applied relative to the rate each group has when the
    epoch begins, so that other schedules (``learning_rate='adaptive'``)
    compose with it.

    Parameters
    ----------
    epochs : int
        Length of the warm-up in epochs (1: none).

    Examples
    --------
    >>> import torch
    >>> from sklmn._training._smooth import LinearWarmup
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> from sklmn.nn import LMN
    >>> data = SequenceDataset(torch.randn(8, 5, 2), torch.full((8,), 5),
    ...                        torch.randn(8, 1))
    >>> warmup = LinearWarmup(4)
    >>> net = make_sequence_net(
    ...     SequenceNet(LMN(2, 4, 4), 1), problem="continuous", per_step=False,
    ...     lr=1e-2, max_epochs=2, batch_size=8,
    ...     callbacks=[("warmup", warmup)]).fit(data)
    >>> warmup.epoch_, warmup.factor_  # stopped inside the warm-up
    (2, 1.0)
    >>> round(net.optimizer_.param_groups[0]["lr"], 6)  # restored at the end
    0.01
    """

    def __init__(self, epochs: int):
        self.epochs = check_positive_int("epochs", epochs)

    def on_train_begin(self, net, **kwargs):
        self.epoch_ = 0
        self.factor_ = 1.0 / self.epochs
        for group in net.optimizer_.param_groups:
            group["lr"] = group["lr"] * self.factor_

    def on_epoch_begin(self, net, **kwargs):
        self.epoch_ += 1
        factor = min(1.0, self.epoch_ / self.epochs)
        if factor == self.factor_:
            return
        for group in net.optimizer_.param_groups:
            group["lr"] = group["lr"] * (factor / self.factor_)
        self.factor_ = factor

    def on_train_end(self, net, **kwargs):
        # a fit stopped inside the warm-up leaves the optimizer at full rate
        # (a later partial_fit resumes it)
        if getattr(self, "factor_", 1.0) != 1.0:
            for group in net.optimizer_.param_groups:
                group["lr"] = group["lr"] / self.factor_
            self.factor_ = 1.0


class _ModeGain(torch.nn.Module):
    """``W_hm = diag(max(1 - |lambda|, 1e-4)) V``: the parametrization of a
    layer's ``weight_hm`` by the input ``V`` of its Schur modes in units of
    their gain (the moduli are read without gradient, at every access)."""

    def __init__(self, layer: torch.nn.Module):
        super().__init__()
        self.__dict__["layer"] = layer  # not a submodule (no cycle)
        # the layer's parameter order, restored with the plain parameter
        self.parameter_order = tuple(layer._parameters)

    def factor(self, like: torch.Tensor) -> torch.Tensor:
        moduli = self.layer.memory.eigenvalue_moduli().to(like)
        return (1.0 - moduli).clamp_min(_MIN_MODE_FACTOR)[:, None]

    def forward(self, V: torch.Tensor) -> torch.Tensor:
        return self.factor(V) * V

    def right_inverse(self, W: torch.Tensor) -> torch.Tensor:
        return W / self.factor(W)


def memory_layers(module: torch.nn.Module) -> list:
    """The submodules of ``module`` that hold a memory input ``W_hm``: the
    layers of an LMN, the directions of a multi-scale LMN."""
    return [m for m in module.modules() if hasattr(m, "weight_hm")]


def _schur_layers(module: torch.nn.Module) -> list:
    """The :func:`memory_layers` of ``module`` whose memory is a
    ``'schur'`` memory."""
    return [
        layer
        for layer in memory_layers(module)
        if getattr(layer, "memory_matrix", None) == "schur"
    ]


class ModeInputNormalization(Callback):
    """Train the input of each mode of a ``'schur'`` memory in units of the
    mode's gain.

    At the beginning of training, the memory input ``W_hm`` of every Schur
    layer (LMN) or direction (multi-scale LMN) of ``net.module_.recurrent``
    is parametrized as ``W_hm = diag(1 - |lambda|) V`` with ``V`` trained,
    ``|lambda|`` the modulus of the eigenvalue of each coordinate's block
    (``SchurMemory.eigenvalue_moduli``; ``1 - |lambda|`` floored at 1e-4):
    one Adam step moves a mode's input by about the learning rate divided
    by the mode's gain ``1 / (1 - |lambda|)``, as in the input
    normalization of Orvieto et al. 2023. The function of the network is
    unchanged at the start; the optimizer is rebuilt over the new
    parameters. The parametrization stays
    while the net trains (the best-weights snapshots hold ``V``);
    :func:`remove_input_normalization` writes ``W_hm`` back as a plain
    parameter. A module without a Schur memory is left alone.

    Examples
    --------
    >>> import torch
    >>> from sklmn._training._smooth import (
    ...     ModeInputNormalization, remove_input_normalization)
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> from sklmn.nn import LMN
    >>> data = SequenceDataset(torch.randn(8, 5, 2), torch.full((8,), 5),
    ...                        torch.randn(8, 1))
    >>> module = SequenceNet(LMN(2, 4, 4, memory_matrix="schur"), 1)
    >>> net = make_sequence_net(
    ...     module, problem="continuous", per_step=False, lr=1e-2,
    ...     max_epochs=2, batch_size=8,
    ...     callbacks=[("normalize", ModeInputNormalization())]).fit(data)
    >>> remove_input_normalization(net.module_)
    1
    >>> type(net.module_.recurrent.layers[0].weight_hm).__name__
    'Parameter'
    """

    def on_train_begin(self, net, **kwargs):
        if normalize_mode_inputs_(net.module_):
            net.initialize_optimizer()


def normalize_mode_inputs_(module: torch.nn.Module) -> int:
    """Parametrize the memory input of every Schur layer (LMN) or direction
    (multi-scale LMN) of ``module.recurrent`` as ``W_hm = diag(1 -
    |lambda|) V`` (what :class:`ModeInputNormalization` does at the
    beginning of training); the number of such layers. The function of the
    network is unchanged.

    Examples
    --------
    >>> from sklmn._training._smooth import normalize_mode_inputs_
    >>> from sklmn.nn import LMN
    >>> from sklmn.training import SequenceNet
    >>> normalize_mode_inputs_(SequenceNet(LMN(2, 4, 4, memory_matrix="schur"), 1))
    1
    """
    layers = _schur_layers(module.recurrent)
    for layer in layers:
        if not parametrize.is_parametrized(layer, "weight_hm"):
            parametrize.register_parametrization(layer, "weight_hm", _ModeGain(layer))
    return len(layers)


def _mode_gains(module: torch.nn.Module) -> list:
    """``(layer, gain)`` for every layer of ``module`` whose ``weight_hm``
    :class:`ModeInputNormalization` parametrized (``gain``: its
    ``_ModeGain``)."""
    found = []
    for layer in module.modules():
        if parametrize.is_parametrized(layer, "weight_hm"):
            for p in layer.parametrizations["weight_hm"]:
                if isinstance(p, _ModeGain):
                    found.append((layer, p))
                    break
    return found


@torch.no_grad()
def remove_input_normalization(module: torch.nn.Module) -> int:
    """Write back, as a plain parameter, the ``weight_hm`` of every layer of
    ``module`` that :class:`ModeInputNormalization` parametrized.

    Unlike ``torch.nn.utils.parametrize.remove_parametrizations``, the
    layer's parametrized class is left as it is (the layer gets its
    original class back): copies of the module taken during training
    (``copy.deepcopy`` shares that class) keep working. ``weight_hm`` gets
    its place back among the layer's parameters (the order of the same
    module built anew).

    Parameters
    ----------
    module : torch.nn.Module
        A network (or its recurrent module) trained with the callback.

    Returns
    -------
    int
        Number of parametrizations removed.

    Examples
    --------
    >>> from torch.nn.utils import parametrize
    >>> from sklmn.nn import LMN
    >>> from sklmn._training._smooth import _ModeGain, remove_input_normalization
    >>> lmn = LMN(2, 3, 4, memory_matrix="schur", memory_bias=True)
    >>> layer = lmn.layers[0]
    >>> names = [name for name, _ in lmn.named_parameters()]
    >>> _ = parametrize.register_parametrization(layer, "weight_hm", _ModeGain(layer))
    >>> remove_input_normalization(lmn)
    1
    >>> [name for name, _ in lmn.named_parameters()] == names
    True
    """
    gains = _mode_gains(module)
    for layer, gain in gains:
        value = layer.weight_hm.detach().clone()
        original = layer.parametrizations["weight_hm"].original
        if list(layer.parametrizations.keys()) == ["weight_hm"]:
            # what remove_parametrizations does, without deleting the
            # property from the class the copies share
            order = gain.parameter_order
            del layer._modules["parametrizations"]
            layer.__class__ = layer.__class__.__bases__[0]
            original.data = value
            layer.register_parameter("weight_hm", original)
            # weight_hm back at its place among the layer's parameters (the
            # order of a module built anew, which positional optimizer
            # states follow)
            rank = {name: i for i, name in enumerate(order)}
            items = sorted(
                layer._parameters.items(),
                key=lambda item: rank.get(item[0], len(rank)),
            )
            layer._parameters.clear()
            layer._parameters.update(items)
        else:  # other parametrizations on the layer: torch's own removal
            parametrize.remove_parametrizations(
                layer, "weight_hm", leave_parametrized=True
            )
    return len(gains)


#: the optimizer state entries that follow the gradient (divided by the mode
#: factor when ``V`` becomes ``W_hm``) or its square (divided by its square);
#: the other entries (Adam's step, RMSprop's momentum of normalized steps)
#: carry over as they are
_FIRST_ORDER_STATE = {
    torch.optim.Adam: ("exp_avg",),
    torch.optim.AdamW: ("exp_avg",),
    torch.optim.SGD: ("momentum_buffer",),
    torch.optim.RMSprop: ("grad_avg",),
}
_SECOND_ORDER_STATE = {
    torch.optim.Adam: ("exp_avg_sq", "max_exp_avg_sq"),
    torch.optim.AdamW: ("exp_avg_sq", "max_exp_avg_sq"),
    torch.optim.SGD: (),
    torch.optim.RMSprop: ("square_avg",),
}


@torch.no_grad()
def input_normalization_factors(module: torch.nn.Module) -> dict:
    """The mode factors ``diag(1 - |lambda|)`` (a column, floored at 1e-4)
    of every ``weight_hm`` of ``module`` that :class:`ModeInputNormalization`
    parametrized, keyed by the trained parameter ``V`` (the parameter object
    :func:`remove_input_normalization` makes ``weight_hm`` again).

    Parameters
    ----------
    module : torch.nn.Module
        A network (or its recurrent module) trained with the callback.

    Returns
    -------
    dict
        ``{V: factor}``, ``factor`` of shape ``(memory_size, 1)``.

    Examples
    --------
    >>> from torch.nn.utils import parametrize
    >>> from sklmn.nn import LMN
    >>> from sklmn._training._smooth import _ModeGain, input_normalization_factors
    >>> lmn = LMN(2, 3, 4, memory_matrix="schur")
    >>> layer = lmn.layers[0]
    >>> _ = parametrize.register_parametrization(layer, "weight_hm", _ModeGain(layer))
    >>> [tuple(f.shape) for f in input_normalization_factors(lmn).values()]
    [(4, 1)]
    """
    factors = {}
    for layer, gain in _mode_gains(module):
        original = layer.parametrizations["weight_hm"].original
        factors[original] = gain.factor(original).detach().clone()
    return factors


@torch.no_grad()
def carry_optimizer_state(previous, optimizer, factors: dict) -> None:
    """Carry the per-parameter state of ``previous`` (the optimizer that
    trained with :class:`ModeInputNormalization`) over to ``optimizer``
    (rebuilt over the same parameter objects once
    :func:`remove_input_normalization` wrote ``W_hm`` back).

    The state of every other parameter is copied as it is; that of a
    ``V`` of ``factors`` is expressed for ``W_hm = factor * V`` (a gradient
    of ``W_hm`` is that of ``V`` divided by the factor): Adam's first
    moment divided by the factor and its second moment by its square (SGD's
    momentum and RMSprop's averages alike). An optimizer of another kind
    starts the state of ``W_hm`` anew.

    Parameters
    ----------
    previous, optimizer : torch.optim.Optimizer
        The optimizer of the training and the rebuilt one.
    factors : dict
        :func:`input_normalization_factors` of the module, taken before the
        removal.

    Examples
    --------
    >>> import torch
    >>> from sklmn._training._smooth import carry_optimizer_state
    >>> p = torch.nn.Parameter(torch.ones(2, 3))
    >>> old = torch.optim.Adam([p])
    >>> p.grad = torch.ones(2, 3)
    >>> old.step()
    >>> new = torch.optim.Adam([p])
    >>> carry_optimizer_state(old, new, {p: torch.tensor([[0.5], [1.0]])})
    >>> new.state[p]["exp_avg"][:, 0]
    tensor([0.2000, 0.1000])
    """
    kind = type(previous)
    for group in optimizer.param_groups:
        for param in group["params"]:
            state = previous.state.get(param)
            if not state:
                continue
            state = {
                key: value.clone() if torch.is_tensor(value) else value
                for key, value in state.items()
            }
            factor = factors.get(param)
            if factor is not None:
                if kind not in _FIRST_ORDER_STATE:
                    continue  # unknown units: a fresh state
                for key in _FIRST_ORDER_STATE[kind]:
                    if torch.is_tensor(state.get(key)):
                        state[key] = state[key] / factor.to(state[key])
                for key in _SECOND_ORDER_STATE[kind]:
                    if torch.is_tensor(state.get(key)):
                        state[key] = state[key] / factor.to(state[key]) ** 2
            optimizer.state[param] = state
