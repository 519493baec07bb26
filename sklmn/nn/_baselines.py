"""Baseline recurrent modules: Elman RNN, LSTM and GRU over ``torch.nn``.

Thin wrappers of :class:`torch.nn.RNN`, :class:`torch.nn.LSTM` and
:class:`torch.nn.GRU` (``batch_first=True``) that follow the sklmn module
protocol: ``lengths`` handled with packed sequences (padded steps change
neither the state nor the output, padded outputs are exactly zero), a
``step`` method for streaming inference, a zero penalty (``return_penalty``)
and zero biases at initialization (except the LSTM forget gate bias,
``forget_bias``, 1 by default: Gers et al. 2000; Jozefowicz et al. 2015).
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ._base import (
    RecurrentModule,
    check_bool,
    check_choice,
    check_dropout,
    check_input,
    check_positive_int,
    check_step_input,
)

__all__ = ["GRU", "LSTM", "ElmanRNN"]

State = Tensor | tuple[Tensor, Tensor]


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
        **rnn_kwargs: object,
    ) -> None:
        super().__init__()
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
        """Weights uniform in ``±1/sqrt(hidden_size)`` (as torch), biases zero."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            for name, param in self.rnn.named_parameters():
                if name.startswith("weight"):
                    nn.init.uniform_(param, -bound, bound)
                else:
                    nn.init.zeros_(param)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"

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
            Batch-first input.
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
    ) -> None:
        nonlinearity = check_choice("nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            dropout=dropout,
            nonlinearity=nonlinearity,
        )
        self.nonlinearity = nonlinearity

    def init_from_laes_(
        self, A: object, B: object, mean: object | None = None
    ) -> ElmanRNN:
        """Initialize from a linear autoencoder for sequences.

        Pasa & Sperduti (2014), Carta et al. 2020b §3.2 eq. 3: ``W_ih = A``,
        ``W_hh = B``, ``b_ih = -A mean`` (zero when ``mean`` is None),
        ``b_hh = 0``, so ``h_t = tanh(A (x_t - mean) + B h_{t-1})``.

        Parameters
        ----------
        A : array-like of shape (hidden_size, input_size)
            LAES input matrix.
        B : array-like of shape (hidden_size, hidden_size)
            LAES state matrix.
        mean : array-like of shape (input_size,), optional
            Feature mean used to center the LAES input.

        Returns
        -------
        self : ElmanRNN

        Examples
        --------
        >>> rnn = ElmanRNN(2, 3).init_from_laes_(torch.ones(3, 2), torch.eye(3))
        >>> rnn.rnn.weight_hh_l0.diagonal()
        tensor([1., 1., 1.], grad_fn=<DiagonalBackward0>)
        """
        if self.num_layers != 1 or self.bidirectional:
            raise ValueError(
                "init_from_laes_ needs a single unidirectional layer, got "
                f"num_layers={self.num_layers}, bidirectional={self.bidirectional}"
            )
        like = self.rnn.weight_ih_l0
        H, d = self.hidden_size, self.input_size
        A_t = torch.as_tensor(A, dtype=like.dtype, device=like.device)
        B_t = torch.as_tensor(B, dtype=like.dtype, device=like.device)
        if tuple(A_t.shape) != (H, d):
            raise ValueError(
                f"A must have shape (hidden_size, input_size) = {(H, d)}, got "
                f"{tuple(A_t.shape)}"
            )
        if tuple(B_t.shape) != (H, H):
            raise ValueError(f"B must have shape {(H, H)}, got {tuple(B_t.shape)}")
        with torch.no_grad():
            self.rnn.weight_ih_l0.copy_(A_t)
            self.rnn.weight_hh_l0.copy_(B_t)
            self.rnn.bias_hh_l0.zero_()
            if mean is None:
                self.rnn.bias_ih_l0.zero_()
            else:
                mu = torch.as_tensor(mean, dtype=like.dtype, device=like.device)
                if tuple(mu.shape) != (d,):
                    raise ValueError(
                        f"mean must have shape {(d,)}, got {tuple(mu.shape)}"
                    )
                self.rnn.bias_ih_l0.copy_(-(A_t @ mu))
        return self


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
    ) -> None:
        # set before the base __init__, whose reset_parameters() reads it
        self.forget_bias = _check_finite_float("forget_bias", forget_bias)
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            dropout=dropout,
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
