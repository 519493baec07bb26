"""Trainable linear RNN, optionally with an orthogonal recurrent matrix.

``h_t = W_hh h_{t-1} + W_ih x_t + b_ih + b_hh``: an Elman RNN without its
nonlinearity. It is the "linear RNN" and "RNN (linear orthogonal)" baseline of
Carta, Sperduti & Bacciu (2020b), *Autoencoder-based Initialization for
Recurrent Neural Networks with a Linear Memory* (Tables 1-2 and 4), and, with
the weights of a linear autoencoder for sequences (Pasa & Sperduti 2014),
exactly that autoencoder's encoder.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import parametrize

from ._base import RecurrentModule
from ._baselines import RECURRENT_INITS, init_layer_from_laes_, orthogonal_blocks_
from ._checks import (
    check_bool,
    check_choice,
    check_dropout,
    check_input,
    check_positive_int,
    check_step_input,
)
from ._laes_weights import resolve_layer
from ._padding import mask_from_lengths, reverse_padded, zero_padded
from .parametrizations import PicklableParametrizationsMixin

__all__ = ["LinearRNN"]

#: Constraints on the recurrent matrix (``recurrent_matrix``).
RECURRENT_MATRICES = ("free", "orthogonal")


class LinearRNN(PicklableParametrizationsMixin, RecurrentModule):
    r"""Linear RNN ``h_t = W_hh h_{t-1} + W_ih x_t + b_ih + b_hh``.

    An Elman RNN without nonlinearity, stacked and bidirectional like
    :class:`torch.nn.RNN` (same parameter names and state layout), with
    lengths handled by masking (padded steps change neither the state nor the
    output; padded outputs are exactly zero). The recurrent matrix is free or
    held orthogonal during training
    (:func:`torch.nn.utils.parametrizations.orthogonal`, the constraint of
    the LMN's ``memory_matrix='orthogonal'``):
    Carta, Sperduti & Bacciu (2020b) compare against both, the "linear RNN"
    and the "RNN (linear orthogonal)".

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Number of hidden units (per direction).
    num_layers : int, default=1
        Number of stacked layers.
    bidirectional : bool, default=False
        Add a reverse direction reading each sequence's valid part backwards;
        outputs are concatenated ``[forward, reverse]``.
    dropout : float, default=0.0
        Dropout between layers (training mode).
    recurrent_matrix : {'free', 'orthogonal'}, default='free'
        ``'orthogonal'``: every ``W_hh`` is constrained orthogonal (spectral
        radius one: the state neither fades nor explodes, the constant
        gradient propagation of orthogonal RNNs).
    recurrent_init : {'uniform', 'orthogonal'}, default='uniform'
        Initialization of ``W_hh``: uniform in ``±1/sqrt(hidden_size)``, or
        random orthogonal (:func:`torch.nn.init.orthogonal_`). With
        ``recurrent_matrix='orthogonal'`` the start is orthogonal either way
        (a uniform draw is projected onto the orthogonal matrices).

    Attributes
    ----------
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} : Tensor
        The weights of layer ``k`` as in :class:`torch.nn.RNN` (suffix
        ``_reverse`` for the reverse direction); ``weight_hh_l{k}`` is
        parametrized with ``recurrent_matrix='orthogonal'``.
    output_size : int
        ``hidden_size`` times 2 if bidirectional.
    num_directions : int
        2 if bidirectional, else 1.

    Notes
    -----
    The state is a tensor ``(num_layers * num_directions, N, hidden_size)``,
    ordered as in :class:`torch.nn.RNN` (layer-major, forward before
    reverse); the initial state defaults to zero. Each forward pass evaluates
    each parametrized matrix once. Weights are uniform in
    ``±1/sqrt(hidden_size)`` and biases zero at initialization, as for
    :class:`~sklmn.nn.ElmanRNN`. The module follows the LAES protocol of
    :class:`~sklmn.nn.ElmanRNN` (:meth:`init_from_laes_`): with the weights
    of a linear autoencoder for sequences it computes that autoencoder's
    state exactly, at any input scale.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> rnn = LinearRNN(3, 4, num_layers=2, bidirectional=True)
    >>> out, h = rnn(torch.randn(2, 5, 3), lengths=torch.tensor([5, 2]))
    >>> out.shape, h.shape, bool((out[1, 2:] == 0).all())
    (torch.Size([2, 5, 8]), torch.Size([4, 2, 4]), True)
    >>> ortho = LinearRNN(3, 4, recurrent_matrix="orthogonal")
    >>> W = ortho.weight_hh_l0.detach()
    >>> torch.allclose(W @ W.T, torch.eye(4), atol=1e-5)
    True
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
        recurrent_matrix: str = "free",
        recurrent_init: str = "uniform",
    ) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.num_layers = check_positive_int("num_layers", num_layers)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.dropout = check_dropout("dropout", dropout)
        self.recurrent_matrix = check_choice(
            "recurrent_matrix", recurrent_matrix, RECURRENT_MATRICES
        )
        self.recurrent_init = check_choice(
            "recurrent_init", recurrent_init, RECURRENT_INITS
        )
        self.bias = True  # the LAES helpers read it, as on torch.nn.RNN
        self.num_directions = 2 if self.bidirectional else 1
        self.output_size = self.hidden_size * self.num_directions
        H = self.hidden_size
        for i in range(self.num_layers):
            d = self.input_size if i == 0 else self.output_size
            for sfx in self._suffixes(i):
                self.register_parameter(
                    "weight_ih" + sfx, nn.Parameter(torch.empty(H, d))
                )
                self.register_parameter(
                    "weight_hh" + sfx, nn.Parameter(torch.empty(H, H))
                )
                self.register_parameter("bias_ih" + sfx, nn.Parameter(torch.empty(H)))
                self.register_parameter("bias_hh" + sfx, nn.Parameter(torch.empty(H)))
        self.reset_parameters()
        if self.recurrent_matrix == "orthogonal":
            for i in range(self.num_layers):
                for sfx in self._suffixes(i):
                    nn.utils.parametrizations.orthogonal(self, "weight_hh" + sfx)

    def _suffixes(self, i: int) -> list[str]:
        """Parameter name suffixes of layer ``i``, forward first."""
        sfx = [f"_l{i}"]
        if self.bidirectional:
            sfx.append(f"_l{i}_reverse")
        return sfx

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Weights uniform in ``±1/sqrt(hidden_size)``, biases zero; with
        ``recurrent_init='orthogonal'`` each ``W_hh`` random orthogonal."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for i in range(self.num_layers):
            for sfx in self._suffixes(i):
                nn.init.uniform_(getattr(self, "weight_ih" + sfx), -bound, bound)
                like = getattr(self, "weight_ih" + sfx)
                # drawn on the weights' device: a parametrized W_hh takes
                # the storage of the value assigned to it
                w_hh = like.new_empty(self.hidden_size, self.hidden_size)
                nn.init.uniform_(w_hh, -bound, bound)
                if self.recurrent_init == "orthogonal":
                    orthogonal_blocks_(w_hh, self.hidden_size)
                if parametrize.is_parametrized(self, "weight_hh" + sfx):
                    setattr(self, "weight_hh" + sfx, w_hh)  # projected if needed
                else:
                    getattr(self, "weight_hh" + sfx).copy_(w_hh)
                nn.init.zeros_(getattr(self, "bias_ih" + sfx))
                nn.init.zeros_(getattr(self, "bias_hh" + sfx))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bidirectional:
            s += ", bidirectional=True"
        if self.recurrent_matrix != "free":
            s += f", recurrent_matrix={self.recurrent_matrix!r}"
        if self.recurrent_init != "uniform":
            s += f", recurrent_init={self.recurrent_init!r}"
        return s

    def _weights(self, sfx: str) -> tuple[Tensor, Tensor, Tensor]:
        """``(W_ih, W_hh, b)`` of one layer and direction, ``W_hh``
        evaluated once (parametrized or not) and ``b = b_ih + b_hh``."""
        return (
            getattr(self, "weight_ih" + sfx),
            getattr(self, "weight_hh" + sfx),
            getattr(self, "bias_ih" + sfx) + getattr(self, "bias_hh" + sfx),
        )

    @staticmethod
    def _scan(
        x: Tensor,
        h: Tensor,
        weights: tuple[Tensor, Tensor, Tensor],
        valid: list[Tensor] | None,
    ) -> tuple[Tensor, Tensor]:
        """The recurrence on batch-first ``x`` from ``h``: the output
        sequence (raw at padded steps) and the state at each sequence's last
        valid step."""
        W_ih, W_hh, b = weights
        # unbind (not proj[:, t]): its backward stacks the per-step gradients
        proj = F.linear(x, W_ih, b).unbind(1)
        w_t = W_hh.mT
        outputs = []
        for t in range(len(proj)):
            h_new = torch.addmm(proj[t], h, w_t)
            h = h_new if valid is None else torch.where(valid[t], h_new, h)
            outputs.append(h_new)
        return torch.stack(outputs, dim=1), h

    def _initial_state(self, state: Tensor | None, n: int, like: Tensor) -> Tensor:
        shape = (self.num_layers * self.num_directions, n, self.hidden_size)
        if state is None:
            return like.new_zeros(shape)
        if not isinstance(state, Tensor) or tuple(state.shape) != shape:
            got = tuple(state.shape) if isinstance(state, Tensor) else type(state)
            raise ValueError(f"state must be a tensor of shape {shape}, got {got}")
        return state.to(device=like.device, dtype=like.dtype)

    def _layer(
        self,
        i: int,
        inp: Tensor,
        lengths: Tensor | None,
        valid: list[Tensor] | None,
        h0: Tensor,
    ) -> tuple[Tensor, list[Tensor]]:
        """Output of layer ``i`` (directions concatenated, zero at padded
        steps) and its final states, forward first."""
        outs, last = [], []
        for j, sfx in enumerate(self._suffixes(i)):
            seq = inp if j == 0 else reverse_padded(inp, lengths)
            k = i * self.num_directions + j
            out, h_n = self._scan(seq, h0[k], self._weights(sfx), valid)
            out = zero_padded(out, lengths)
            outs.append(out if j == 0 else reverse_padded(out, lengths))
            last.append(h_n)
        return (outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)), last

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | None = None,
        state: Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple[Tensor, Tensor] | tuple[Tensor, Tensor, Tensor]:
        """Run over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input sequences.
        lengths : Tensor of shape (N,), optional
            Valid lengths (values in ``1..T``); default all ``T``.
        state : Tensor of shape (num_layers * num_directions, N, hidden_size), optional
            Initial state (default zero).
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (none:
            a zero scalar).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            The last layer's output, zero at padded steps.
        state : Tensor of shape (num_layers * num_directions, N, hidden_size)
            Final state at each sequence's last valid step.
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        lengths, n_steps = check_input(x, lengths, self.input_size)
        # NaN padding must not reach the input weights' gradient (0 * NaN)
        x = zero_padded(x, lengths)
        h0 = self._initial_state(state, x.shape[0], x)
        valid = None
        if lengths is not None:
            mask = mask_from_lengths(lengths, n_steps, device=x.device)
            valid = list(mask.unsqueeze(-1).unbind(1))
        inp, last = x, []
        for i in range(self.num_layers):
            inp, h_n = self._layer(i, inp, lengths, valid, h0)
            last.extend(h_n)
            if self.dropout > 0 and i < self.num_layers - 1:
                inp = F.dropout(inp, self.dropout, self.training)
        return self._forward_result(inp, torch.stack(last), None, return_penalty)

    def step(self, x_t: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Advance one time step (streaming inference, unidirectional only).

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : Tensor of shape (num_layers, N, hidden_size), optional
            Previous state as returned by ``forward`` or ``step``.

        Returns
        -------
        y_t : Tensor of shape (N, hidden_size)
        state : Tensor of shape (num_layers, N, hidden_size)

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> rnn = LinearRNN(2, 3, num_layers=2).eval()
        >>> x = torch.randn(4, 6, 2)
        >>> state = None
        >>> for t in range(6):
        ...     y, state = rnn.step(x[:, t], state)
        >>> torch.allclose(y, rnn(x)[0][:, -1], atol=1e-5)
        True
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional LinearRNN: the "
                "reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        h0 = self._initial_state(state, x_t.shape[0], x_t)
        inp, hs = x_t, []
        for i in range(self.num_layers):
            W_ih, W_hh, b = self._weights(f"_l{i}")
            inp = torch.addmm(F.linear(inp, W_ih, b), h0[i], W_hh.mT)
            hs.append(inp)
            if self.dropout > 0 and i < self.num_layers - 1:
                inp = F.dropout(inp, self.dropout, self.training)
        return hs[-1], torch.stack(hs)

    # -- LAES protocol (see ElmanRNN and docs/extending.md) ---------------- #
    def check_laes_init(self, caller: str = "init_from_laes_") -> None:
        """Raise a ValueError if the network cannot hold a LAES start (an
        orthogonal recurrent matrix cannot hold the LAES matrix ``B``).

        Examples
        --------
        >>> LinearRNN(2, 3, recurrent_matrix="orthogonal").check_laes_init("mine")
        Traceback (most recent call last):
        ...
        ValueError: mine cannot set an orthogonal recurrent matrix ...
        """
        if self.recurrent_matrix != "free":
            raise ValueError(
                f"{caller} cannot set an orthogonal recurrent matrix to the "
                "LAES matrix B: use a LinearRNN with recurrent_matrix='free', "
                f"got recurrent_matrix={self.recurrent_matrix!r}"
            )

    def laes_capacity(self, n_features: int) -> list[tuple[int, str]]:
        """Bounds on the LAES components of one layer, ``(bound, reason)``:
        the network's ``hidden_size``.

        Examples
        --------
        >>> LinearRNN(2, 3).laes_capacity(2)
        [(3, 'the network has hidden_size=3')]
        """
        H = self.hidden_size
        return [(H, f"the network has hidden_size={H}")]

    def laes_output_scale(self, input_scale: float) -> float:
        """Ratio of a LAES-initialized unit's output to the LAES state: the
        input scale (``W_ih = s A``; exact, the network is linear).

        Examples
        --------
        >>> LinearRNN(2, 3).laes_output_scale(0.1)
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
        >>> rnn = LinearRNN(2, 3, num_layers=2, bidirectional=True)
        >>> rnn.layer_outputs(1, torch.randn(4, 5, 6), None).shape
        torch.Size([4, 5, 6])
        """
        resolve_layer(self, i, 0)
        like = getattr(self, f"weight_ih_l{i}")
        x = x.to(dtype=like.dtype, device=like.device)
        lengths, n_steps = check_input(x, lengths, like.shape[1])
        valid = None
        if lengths is not None:
            mask = mask_from_lengths(lengths, n_steps, device=x.device)
            valid = list(mask.unsqueeze(-1).unbind(1))
        h0 = x.new_zeros(
            self.num_layers * self.num_directions, x.shape[0], self.hidden_size
        )
        return self._layer(i, x, lengths, valid, h0)[0]

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
    ) -> LinearRNN:
        """Initialize from a linear autoencoder for sequences.

        The first ``p`` units of the layer get ``W_ih = s A``, ``W_hh = B``
        (they read no other unit), ``b_ih = -s A mean`` and ``b_hh = 0``, so
        that they hold ``s`` times the LAES state ``y_t = A (x_t - mean) + B
        y_{t-1}`` exactly (Pasa & Sperduti 2014; the "linear-RNN" of Carta,
        Sperduti & Bacciu 2020b, Table 4). The arguments are those of
        :meth:`ElmanRNN.init_from_laes_`.

        Returns
        -------
        self : LinearRNN

        Examples
        --------
        >>> rnn = LinearRNN(2, 3).init_from_laes_(torch.ones(3, 2), 0.5 * torch.eye(3))
        >>> out, _ = rnn(torch.ones(1, 2, 2))
        >>> out[0, :, 0].tolist()  # 2, then 2 + 0.5 * 2
        [2.0, 3.0]
        """
        init_layer_from_laes_(
            self,
            self,
            A,
            B,
            mean,
            layer=layer,
            direction=direction,
            input_scale=input_scale,
            partial=partial,
        )
        return self
