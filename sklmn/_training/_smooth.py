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

from numbers import Integral

import torch
from skorch.callbacks import Callback
from torch.nn.utils import parametrize

__all__ = ["LinearWarmup", "ModeInputNormalization", "remove_input_normalization"]

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
        if (
            not isinstance(epochs, Integral)
            or isinstance(epochs, bool)
            or epochs < 1
        ):
            raise ValueError(
                f"LinearWarmup: epochs must be a positive integer, got {epochs!r}"
            )
        self.epochs = epochs

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

    def factor(self, like: torch.Tensor) -> torch.Tensor:
        moduli = self.layer.memory.eigenvalue_moduli().to(like)
        return (1.0 - moduli).clamp_min(_MIN_MODE_FACTOR)[:, None]

    def forward(self, V: torch.Tensor) -> torch.Tensor:
        return self.factor(V) * V

    def right_inverse(self, W: torch.Tensor) -> torch.Tensor:
        return W / self.factor(W)


def _schur_layers(recurrent: torch.nn.Module) -> list:
    """The layers (LMN) or directions (multi-scale LMN) of ``recurrent``
    whose memory is a ``'schur'`` memory."""
    if hasattr(recurrent, "_all_layers"):  # LMN
        layers = recurrent._all_layers()
    else:  # multi-scale LMN: the directions
        layers = [recurrent, getattr(recurrent, "reverse", None)]
    return [
        layer
        for layer in layers
        if layer is not None and getattr(layer, "memory_matrix", None) == "schur"
    ]


class ModeInputNormalization(Callback):
    """Train the input of each mode of a ``'schur'`` memory in units of the
    mode's gain.

    At the beginning of training, the memory input ``W_hm`` of every Schur
    layer (LMN) or direction (multi-scale LMN) of ``net.module_.recurrent``
    is parametrized as ``W_hm = diag(1 - |lambda|) V`` with ``V`` trained,
    ``|lambda|`` the modulus of the eigenvalue of each coordinate's block
    (``SchurMemory.eigenvalue_moduli``, floored at 1e-4): one Adam step
    moves a mode's input by about the learning rate divided by the mode's
    gain ``1 / (1 - |lambda|)``, as in the input normalization of Orvieto
    et al. 2023. The function of the network is unchanged at the start; the
    optimizer is rebuilt over the new parameters. The parametrization stays
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
        layers = _schur_layers(net.module_.recurrent)
        for layer in layers:
            if not parametrize.is_parametrized(layer, "weight_hm"):
                parametrize.register_parametrization(
                    layer, "weight_hm", _ModeGain(layer)
                )
        if layers:
            net.initialize_optimizer()


@torch.no_grad()
def remove_input_normalization(module: torch.nn.Module) -> int:
    """Write back, as a plain parameter, the ``weight_hm`` of every layer of
    ``module`` that :class:`ModeInputNormalization` parametrized.

    Unlike ``torch.nn.utils.parametrize.remove_parametrizations``, the
    layer's parametrized class is left as it is (the layer gets its
    original class back): copies of the module taken during training
    (``copy.deepcopy`` shares that class) keep working.

    Parameters
    ----------
    module : torch.nn.Module
        A network (or its recurrent module) trained with the callback.

    Returns
    -------
    int
        Number of parametrizations removed.
    """
    removed = 0
    for layer in list(module.modules()):
        if not (
            parametrize.is_parametrized(layer, "weight_hm")
            and any(
                isinstance(p, _ModeGain) for p in layer.parametrizations["weight_hm"]
            )
        ):
            continue
        value = layer.weight_hm.detach().clone()
        original = layer.parametrizations["weight_hm"].original
        if list(layer.parametrizations.keys()) == ["weight_hm"]:
            # what remove_parametrizations does, without deleting the
            # property from the class the copies share
            del layer._modules["parametrizations"]
            layer.__class__ = layer.__class__.__bases__[0]
            original.data = value
            layer.register_parameter("weight_hm", original)
        else:  # other parametrizations on the layer: torch's own removal
            parametrize.remove_parametrizations(
                layer, "weight_hm", leave_parametrized=True
            )
        removed += 1
    return removed
