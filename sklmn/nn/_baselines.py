"""Baseline recurrent modules: Elman RNN, LSTM and GRU over ``torch.nn``.

Thin wrappers of :class:`torch.nn.RNN`, :class:`torch.nn.LSTM` and
:class:`torch.nn.GRU` (``batch_first=True``) that follow the sklmn module
protocol: ``lengths`` handled with packed sequences (padded steps change
neither the state nor the output, padded outputs are exactly zero), a
``step`` method for streaming inference, a zero penalty (``return_penalty``)
and zero biases at initialization (except the LSTM forget gate bias,
``forget_bias``, 1 by default: Gers et al. 2000; Jozefowicz et al. 2015).
``recurrent_init='orthogonal'`` starts every recurrent matrix (each gate's
block for the LSTM and GRU) as a random orthogonal matrix, the "RNN (ortho
init.)" baseline of Carta, Sperduti & Bacciu (2020b).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ._base import RecurrentModule
from ._checks import (
    check_bool,
    check_choice,
    check_dropout,
    check_input,
    check_positive_int,
    check_step_input,
)
from ._laes_weights import (
    as_numpy,
    check_components,
    check_scale,
    elman_layer_from_laes_,
    resolve_layer,
)

__all__ = ["GRU", "LSTM", "ElmanRNN"]

State = Tensor | tuple[Tensor, Tensor]

#: Initializations of the recurrent matrices (``recurrent_init``).
RECURRENT_INITS = ("uniform", "orthogonal")


@torch.no_grad()
def orthogonal_blocks_(weight: Tensor, hidden_size: int) -> Tensor:
    """Fill each ``(hidden_size, hidden_size)`` row block of a recurrent
    weight with its own random orthogonal matrix (:func:`torch.nn.init.\
orthogonal_`), in place: one block for an Elman or linear RNN, one per gate
    for the LSTM (4) and GRU (3).

    Examples
    --------
    >>> w = orthogonal_blocks_(torch.empty(6, 3), 3)
    >>> torch.allclose(w[3:] @ w[3:].T, torch.eye(3), atol=1e-6)
    True
    """
    for block in weight.split(hidden_size, dim=0):
        nn.init.orthogonal_(block)
    return weight


class _TorchRecurrent(RecurrentModule):
    """Shared implementation: the wrapped module is ``self.rnn``."""

    _rnn_class: type[nn.RNNBase]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        recurrent_init: str = "uniform",
        **rnn_kwargs: object,
    ) -> None:
        super().__init__()
        self.recurrent_init = check_choice(
            "recurrent_init", recurrent_init, RECURRENT_INITS
        )
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.num_layers = check_positive_int("num_layers", num_layers)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.dropout = check_dropout("dropout", dropout)
        self.num_directions = 2 if self.bidirectional else 1
        self.output_size = self.hidden_size * self.num_directions
        self.rnn = self._rnn_class(
            self.input_size,
            self.hidden_size,
            num_layers=self.num_layers,
            bidirectional=self.bidirectional,
            dropout=self.dropout,
            batch_first=True,
            **rnn_kwargs,
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weights uniform in ``±1/sqrt(hidden_size)`` (as torch), biases zero;
        with ``recurrent_init='orthogonal'`` every recurrent weight
        ``weight_hh_*`` is then redrawn random orthogonal, one block per gate
        (:func:`orthogonal_blocks_`)."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            for name, param in self.rnn.named_parameters():
                if name.startswith("weight"):
                    nn.init.uniform_(param, -bound, bound)
                else:
                    nn.init.zeros_(param)
            if getattr(self, "recurrent_init", "uniform") == "orthogonal":
                for name, param in self.rnn.named_parameters():
                    if name.startswith("weight_hh"):
                        orthogonal_blocks_(param, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if getattr(self, "recurrent_init", "uniform") != "uniform":
            s += f", recurrent_init={self.recurrent_init!r}"
        return s

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | None = None,
        state: State | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple[Tensor, State] | tuple[Tensor, State, Tensor]:
        """Run over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input sequences.
        lengths : Tensor of shape (N,), optional
            Valid lengths (values in ``1..T``); default all ``T``.
        state : Tensor or tuple of Tensor, optional
            Initial state as for the wrapped torch module (``h0`` of shape
            (num_layers * num_directions, N, hidden_size); ``(h0, c0)`` for
            the LSTM). Default zero.
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (these
            modules have none: a zero scalar).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Zero at padded steps.
        state : Tensor or tuple of Tensor
            Final state at each sequence's last valid step.
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        lengths, T = check_input(x, lengths, self.input_size)
        if lengths is None:
            out, state = self.rnn(x, state)
            return self._forward_result(out, state, None, return_penalty)
        packed = pack_padded_sequence(
            x, lengths, batch_first=True, enforce_sorted=False
        )
        out, state = self.rnn(packed, state)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        return self._forward_result(out, state, None, return_penalty)

    def step(self, x_t: Tensor, state: State | None = None) -> tuple[Tensor, State]:
        """Advance one time step (streaming inference, unidirectional only).

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : Tensor or tuple of Tensor, optional
            Previous state as returned by ``forward`` or ``step``.

        Returns
        -------
        y_t : Tensor of shape (N, output_size)
        state : Tensor or tuple of Tensor
        """
        if self.bidirectional:
            raise RuntimeError(
                f"step() is not available for a bidirectional {type(self).__name__}:"
                " the reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        out, state = self.rnn(x_t.unsqueeze(1), state)
        return out[:, 0], state


class ElmanRNN(_TorchRecurrent):
    """Elman RNN ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Wraps :class:`torch.nn.RNN` (``batch_first=True``) with the sklmn module
    protocol.

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Number of hidden units.
    num_layers : int, default=1
        Number of stacked layers.
    bidirectional : bool, default=False
        Add a reverse direction; outputs are concatenated.
    dropout : float, default=0.0
        Dropout between layers (training mode).
    nonlinearity : {'tanh', 'relu'}, default='tanh'
        Activation function.
    recurrent_init : {'uniform', 'orthogonal'}, default='uniform'
        Initialization of the recurrent matrices ``W_hh``: uniform in
        ``±1/sqrt(hidden_size)`` like the input weights (torch's), or a
        random orthogonal matrix (:func:`torch.nn.init.orthogonal_`), the
        "RNN (ortho init.)" baseline of Carta, Sperduti & Bacciu (2020b);
        the input weights are uniform either way (see
        ``docs/user_guide/baselines.md``).

    Attributes
    ----------
    rnn : torch.nn.RNN
        The wrapped module (parameters ``weight_ih_l0`` ...).
    output_size : int
        ``hidden_size`` times 2 if bidirectional.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> rnn = ElmanRNN(3, 4)
    >>> out, h = rnn(torch.randn(2, 5, 3), lengths=torch.tensor([5, 2]))
    >>> out.shape, h.shape, bool((out[1, 2:] == 0).all())
    (torch.Size([2, 5, 4]), torch.Size([1, 2, 4]), True)
    >>> W = ElmanRNN(3, 4, recurrent_init="orthogonal").rnn.weight_hh_l0.detach()
    >>> torch.allclose(W @ W.T, torch.eye(4), atol=1e-6)
    True
    """

    _rnn_class = nn.RNN

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        nonlinearity: str = "tanh",
        recurrent_init: str = "uniform",
    ) -> None:
        nonlinearity = check_choice("nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            dropout=dropout,
            recurrent_init=recurrent_init,
            nonlinearity=nonlinearity,
        )
        self.nonlinearity = nonlinearity

    def check_laes_init(self, caller: str = "init_from_laes_") -> None:
        """Raise a ValueError if the network cannot hold a LAES start (the
        construction needs the tanh nonlinearity).

        Examples
        --------
        >>> ElmanRNN(2, 3, nonlinearity="relu").check_laes_init("my pretrainer")
        Traceback (most recent call last):
        ...
        ValueError: my pretrainer needs an Elman RNN with nonlinearity='tanh', ...
        """
        if self.rnn.nonlinearity != "tanh":
            raise ValueError(
                f"{caller} needs an Elman RNN with nonlinearity='tanh', got "
                f"nonlinearity={self.rnn.nonlinearity!r}"
            )

    def laes_capacity(self, n_features: int) -> list[tuple[int, str]]:
        """Bounds on the LAES components of one layer, ``(bound, reason)``:
        the network's ``hidden_size``.

        Examples
        --------
        >>> ElmanRNN(2, 3).laes_capacity(2)
        [(3, 'the network has hidden_size=3')]
        """
        H = self.hidden_size
        return [(H, f"the network has hidden_size={H}")]

    def laes_output_scale(self, input_scale: float) -> float:
        """Ratio of a LAES-initialized unit's output to the LAES state while
        the tanh stays linear: the input scale (``W_ih = s A``).

        Examples
        --------
        >>> ElmanRNN(2, 3).laes_output_scale(0.1)
        0.1
        """
        return float(input_scale)

    @torch.no_grad()
    def layer_outputs(self, i: int, x: Tensor, lengths: Tensor | None) -> Tensor:
        """Output sequences of layer ``i`` (both directions, concatenated)
        for its input sequences ``x`` (batch-first): the input of layer
        ``i + 1``, zero on padded steps.

        Examples
        --------
        >>> rnn = ElmanRNN(2, 3, num_layers=2, bidirectional=True)
        >>> rnn.layer_outputs(1, torch.randn(4, 5, 6), None).shape
        torch.Size([4, 5, 6])
        """
        resolve_layer(self, i, 0)
        like = getattr(self.rnn, f"weight_ih_l{i}")
        with torch.random.fork_rng(devices=[]):  # leave the seeded stream alone
            single = ElmanRNN(
                like.shape[1], self.hidden_size, bidirectional=self.bidirectional
            )
        single = single.to(dtype=like.dtype, device=like.device)
        for name, param in single.rnn.named_parameters():
            param.copy_(getattr(self.rnn, name.replace("_l0", f"_l{i}")))
        return single(x.to(like.dtype), lengths)[0]

    def init_from_laes_(
        self,
        A: object,
        B: object,
        mean: object | None = None,
        *,
        layer: int | None = None,
        direction: int = 0,
        input_scale: float = 1.0,
        partial: bool = False,
    ) -> ElmanRNN:
        """Initialize from a linear autoencoder for sequences.

        Pasa & Sperduti (2014), Carta et al. 2020b §3.2 eq. 3: with ``p``
        components and input scale ``s``, the first ``p`` units of the layer
        get ``W_ih = s A``, ``W_hh = B`` (they read no other unit),
        ``b_ih = -s A mean`` (zero when ``mean`` is None) and ``b_hh = 0``, so
        ``h_t = tanh(s A (x_t - mean) + B h_{t-1})``: ``s`` times the LAES
        state while the tanh stays linear (:meth:`laes_output_scale`).

        Parameters
        ----------
        A : array-like of shape (p, layer input size)
            LAES input matrix.
        B : array-like of shape (p, p)
            LAES state matrix.
        mean : array-like of shape (layer input size,), optional
            Feature mean used to center the LAES input.
        layer : int, optional
            The layer to set (0-based); None: the network must have a single
            unidirectional layer.
        direction : {0, 1}, default=0
            0: the forward direction; 1: the reverse one of a bidirectional
            network.
        input_scale : float, default=1.0
            ``s`` above (``> 0``).
        partial : bool, default=False
            False: ``p == hidden_size`` (every unit). True: ``p <=
            hidden_size``; the other units keep their random rows.

        Returns
        -------
        self : ElmanRNN

        Examples
        --------
        >>> rnn = ElmanRNN(2, 3).init_from_laes_(torch.ones(3, 2), torch.eye(3))
        >>> rnn.rnn.weight_hh_l0.diagonal()
        tensor([1., 1., 1.], grad_fn=<DiagonalBackward0>)
        """
        init_layer_from_laes_(
            self,
            self.rnn,
            A,
            B,
            mean,
            layer=layer,
            direction=direction,
            input_scale=input_scale,
            partial=partial,
        )
        return self


def init_layer_from_laes_(
    module: nn.Module,
    owner: nn.Module,
    A: object,
    B: object,
    mean: object | None,
    *,
    layer: int | None,
    direction: int,
    input_scale: float,
    partial: bool,
) -> None:
    """The LAES start of one layer and direction of an Elman or linear RNN
    (Pasa & Sperduti 2014): ``module`` has ``num_layers``,
    ``num_directions``, ``hidden_size``, ``input_size`` and
    ``check_laes_init``; ``owner`` holds torch-named weights
    (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``...). See
    :meth:`ElmanRNN.init_from_laes_` for the arguments."""
    layer = resolve_layer(module, layer, direction)
    module.check_laes_init()
    H = module.hidden_size
    d = module.input_size if layer == 0 else H * module.num_directions
    a_shape = tuple(np.shape(A.detach() if isinstance(A, Tensor) else A))
    p = a_shape[0] if len(a_shape) == 2 and partial else H
    if partial:
        A_np = as_numpy(A, "A", (p, d))
        check_components(p, H, "hidden_size")
    else:
        try:
            A_np = as_numpy(A, "A", (H, d))
        except ValueError:
            raise ValueError(
                f"A must have shape (hidden_size, input_size) = {(H, d)}, got "
                f"{a_shape}"
            ) from None
    B_np = as_numpy(B, "B", (p, p))
    mu = np.zeros(d) if mean is None else as_numpy(mean, "mean", (d,))
    s = check_scale(input_scale)
    elman_layer_from_laes_(owner, layer, direction, A_np, B_np, mu, s)


def _check_finite_float(name: str, value: object) -> float:
    """Validate a finite real number (bools rejected); return it as a float."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
    ):
        raise ValueError(f"{name} must be a finite float, got {value!r}")
    return float(value)


class LSTM(_TorchRecurrent):
    """Long short-term memory wrapped from :class:`torch.nn.LSTM`.

    Weights are uniform in ``±1/sqrt(hidden_size)`` (as torch); biases are zero
    except the forget gate bias, which starts at ``forget_bias`` in every layer
    and direction. The state is the tuple ``(h, c)``.

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Number of hidden units.
    num_layers : int, default=1
        Number of stacked layers.
    bidirectional : bool, default=False
        Add a reverse direction; outputs are concatenated.
    dropout : float, default=0.0
        Dropout between layers (training mode).
    forget_bias : float, default=1.0
        Initial total bias of the forget gate, ``b_ih + b_hh`` on the forget
        slice (torch's gate order is input, forget, cell, output): it is
        written to ``bias_ih`` and the forget slice of ``bias_hh`` is 0, in
        every layer and direction (:meth:`reset_parameters`). A positive value
        makes the cell remember by default at the start of training. 0 is the
        expected forget bias of torch's own initialization (all biases uniform
        around 0; here they are exactly 0); 1 is the usual choice (Gers et al.
        2000) and Keras' ``unit_forget_bias=True`` (Jozefowicz, Zaremba &
        Sutskever 2015, "An empirical exploration of recurrent network
        architectures"); larger values such as 5 are used by Carta, Sperduti &
        Bacciu for the sequence generation task with long sequences.
    recurrent_init : {'uniform', 'orthogonal'}, default='uniform'
        Initialization of the recurrent weights: uniform in
        ``±1/sqrt(hidden_size)`` (torch's), or each gate's
        ``(hidden_size, hidden_size)`` block of ``weight_hh`` a random
        orthogonal matrix (:func:`orthogonal_blocks_`).

    Attributes
    ----------
    rnn : torch.nn.LSTM
        The wrapped module.
    output_size : int
        ``hidden_size`` times 2 if bidirectional.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> lstm = LSTM(3, 4)
    >>> out, (h, c) = lstm(torch.randn(2, 5, 3))
    >>> out.shape, h.shape, c.shape
    (torch.Size([2, 5, 4]), torch.Size([1, 2, 4]), torch.Size([1, 2, 4]))
    >>> lstm.rnn.bias_ih_l0[4:8]
    tensor([1., 1., 1., 1.], grad_fn=<SliceBackward0>)
    >>> LSTM(3, 2, forget_bias=5.0).rnn.bias_ih_l0.tolist()
    [0.0, 0.0, 5.0, 5.0, 0.0, 0.0, 0.0, 0.0]
    """

    _rnn_class = nn.LSTM

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        forget_bias: float = 1.0,
        recurrent_init: str = "uniform",
    ) -> None:
        # set before the base __init__, whose reset_parameters() reads it
        self.forget_bias = _check_finite_float("forget_bias", forget_bias)
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            dropout=dropout,
            recurrent_init=recurrent_init,
        )

    def reset_parameters(self) -> None:
        """Torch-style uniform weights, zero biases, forget gate bias ``forget_bias``.

        The forget slice ``[hidden_size:2*hidden_size]`` of every ``bias_ih``
        (all layers, both directions) is ``forget_bias`` and that of every
        ``bias_hh`` is 0, so that their sum is ``forget_bias``.
        """
        super().reset_parameters()
        H = self.hidden_size
        with torch.no_grad():
            for name, param in self.rnn.named_parameters():
                if name.startswith("bias_ih"):
                    # torch gate order: input, forget, cell, output
                    param[H : 2 * H].fill_(self.forget_bias)

    def extra_repr(self) -> str:
        extra = super().extra_repr()
        if self.forget_bias != 1.0:
            extra += f", forget_bias={self.forget_bias}"
        return extra


class GRU(_TorchRecurrent):
    """Gated recurrent unit wrapped from :class:`torch.nn.GRU`.

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Number of hidden units.
    num_layers : int, default=1
        Number of stacked layers.
    bidirectional : bool, default=False
        Add a reverse direction; outputs are concatenated.
    dropout : float, default=0.0
        Dropout between layers (training mode).
    recurrent_init : {'uniform', 'orthogonal'}, default='uniform'
        Initialization of the recurrent weights: uniform in
        ``±1/sqrt(hidden_size)`` (torch's), or each gate's
        ``(hidden_size, hidden_size)`` block of ``weight_hh`` a random
        orthogonal matrix (:func:`orthogonal_blocks_`).

    Attributes
    ----------
    rnn : torch.nn.GRU
        The wrapped module.
    output_size : int
        ``hidden_size`` times 2 if bidirectional.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> gru = GRU(3, 4, bidirectional=True)
    >>> out, h = gru(torch.randn(2, 5, 3))
    >>> out.shape, h.shape
    (torch.Size([2, 5, 8]), torch.Size([2, 2, 4]))
    """

    _rnn_class = nn.GRU

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        recurrent_init: str = "uniform",
    ) -> None:
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            dropout=dropout,
            recurrent_init=recurrent_init,
        )
