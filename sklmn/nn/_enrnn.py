"""Eigenvalue Normalized RNN (ENRNN, Helfrich & Ye 2020), stacked and bidirectional,
and the modReLU activation."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from . import _checks
from ._base import RecurrentModule
from ._padding import mask_from_lengths, reverse_padded, zero_padded
from .parametrizations import (
    PicklableParametrizationsMixin,
    cayley_orthogonal,
    scaled_rotation_init_,
    scornn_skew_init_,
    spectral_radius_normalization,
)

__all__ = ["ENRNN", "ModReLU", "modrelu"]

_ACTIVATIONS = ("modrelu", "relu", "tanh")


def modrelu(z: Tensor, bias: Tensor) -> Tensor:
    r"""modReLU activation for real inputs (Helfrich & Ye 2020 §4).

    :math:`\sigma(z) = \frac{z}{|z|}\,\mathrm{ReLU}(|z| + b)`, i.e.
    ``sign(z) * relu(|z| + b)`` for real ``z``: the magnitude is shifted by
    the learnable bias ``b`` and clipped at zero, the sign is kept. With
    ``b = 0`` it is the identity; ``b < 0`` creates a dead zone
    ``|z| <= -b``. ``sigma(0) = 0``.

    Parameters
    ----------
    z : Tensor of shape (..., n)
        Pre-activations.
    bias : Tensor of shape (n,)
        Bias ``b``, broadcast over the leading dimensions.

    Returns
    -------
    out : Tensor of shape (..., n)

    Examples
    --------
    >>> modrelu(torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0]), torch.tensor(-1.0))
    tensor([-1., -0.,  0.,  0.,  1.])
    """
    return torch.sign(z) * torch.relu(z.abs() + bias)


class ModReLU(nn.Module):
    r"""modReLU activation with a learnable bias per feature (Helfrich & Ye 2020 §4).

    ``sign(z) * relu(|z| + b)``; see :func:`modrelu`.

    Parameters
    ----------
    num_features : int
        Size ``n`` of the last dimension of the input.

    Attributes
    ----------
    bias : torch.nn.Parameter of shape (num_features,)
        The bias ``b``, initialized to zero.

    Examples
    --------
    >>> act = ModReLU(3)
    >>> with torch.no_grad():
    ...     act.bias.fill_(-1.0)
    Parameter containing:
    tensor([-1., -1., -1.], requires_grad=True)
    >>> act(torch.tensor([[-3.0, 0.5, 2.0]]))
    tensor([[-2.,  0.,  1.]], grad_fn=<MulBackward0>)
    """

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.num_features = _checks.check_positive_int("num_features", num_features)
        self.bias = nn.Parameter(torch.zeros(self.num_features))

    def reset_parameters(self) -> None:
        """Set the bias to zero."""
        nn.init.zeros_(self.bias)

    def forward(self, z: Tensor) -> Tensor:
        return modrelu(z, self.bias)

    def extra_repr(self) -> str:
        return f"{self.num_features}"


class ENRNN(PicklableParametrizationsMixin, RecurrentModule):
    r"""Eigenvalue Normalized RNN, long- and short-term states (Helfrich & Ye 2020 §3).

    The hidden state ``h_t = [h_t^{(L)}; h_t^{(S)}]`` has a long-term part of
    size ``hidden_size`` (``q`` in Helfrich & Ye 2020) with an orthogonal recurrent
    matrix and a short-term part of size ``short_size`` (``n - q``) whose recurrent
    matrix has spectral radius below one (Helfrich & Ye 2020 eq. 3):

    .. math::

        h_t^{(L)} &= \sigma(U^{(L)} x_t + W^{(L)} h_{t-1}^{(L)}
                     + W^{(C)} h_{t-1}^{(S)} + b^{(L)}) \\
        h_t^{(S)} &= \sigma(U^{(S)} x_t + W^{(S)} h_{t-1}^{(S)} + b^{(S)})

    - :math:`W^{(L)} = (I + A)^{-1}(I - A) D` (scoRNN;
      :func:`~sklmn.nn.parametrizations.cayley_orthogonal` on
      ``weight_long``, ``D`` with ``n_negative`` entries -1);
    - :math:`W^{(S)} = T / (\rho(T) + \epsilon)` (Helfrich & Ye 2020 §3.1;
      :func:`~sklmn.nn.parametrizations.spectral_radius_normalization` on
      ``weight_short`` with the latch rule of Helfrich & Ye 2020 §4: ``W^{(S)} = T``
      until :math:`\rho(T) > 1` is first seen in training);
    - :math:`W^{(C)}` (``weight_coupling``), the coupling block from the short-
      to the long-term state (Helfrich & Ye 2020 eq. 2), only with ``coupling=True``;
      without it the model is Helfrich & Ye 2020 eq. 1.

    The output is the whole hidden state ``h_t`` (the readout of Helfrich & Ye 2020,
    :math:`y_t = V^{(L)} h^{(L)}_t + V^{(S)} h^{(S)}_t + c`, is a linear layer
    on it, left to the caller).

    Helfrich & Ye 2020 §5 compare single-layer networks but note that the
    ENRNN "can be stacked in multiple layers": ``num_layers > 1`` stacks
    layers (layer ``i + 1`` reads the output sequence of layer ``i``) and
    ``bidirectional=True`` adds a reverse direction at every layer (outputs
    concatenated ``[forward, reverse]``). Every layer and direction is a
    single-layer ENRNN with its own orthogonal long-term matrix,
    eigenvalue-normalized short-term matrix (and latch) and coupling block,
    all with the settings above.

    Parameters
    ----------
    input_size : int
        Number of input features ``d``.
    hidden_size : int
        Size of the long-term state :math:`h^{(L)}`.
    short_size : int
        Size of the short-term state :math:`h^{(S)}`.
    n_negative : int, default=0
        Number of -1 entries of the scoRNN matrix ``D``, in
        ``0..hidden_size`` (tuned in multiples of 10% of the size in
        Helfrich & Ye 2020 §5).
    eps : float, default=1e-3
        :math:`\epsilon \ge 0` of the normalization (Helfrich & Ye 2020 use 0 in their
        experiments, which puts the dominant eigenvalue of :math:`W^{(S)}` on the unit
        circle).
    latch : bool, default=True
        Apply the latch rule of Helfrich & Ye 2020 §4 (``False``: normalize
        from the start).
    coupling : bool, default=False
        Add the coupling block :math:`W^{(C)}` (Helfrich & Ye 2020 eq. 2-3).
    normalize : bool, default=True
        Normalize the short-term matrix; ``False`` trains :math:`W^{(S)} = T`
        unconstrained (for ablations and benchmarks).
    activation : {'modrelu', 'relu', 'tanh'}, default='modrelu'
        :math:`\sigma`. With ``'modrelu'`` the bias ``b`` is the modReLU bias
        (:func:`modrelu`); otherwise it is added to the pre-activation.
    num_layers : int, default=1
        Number of stacked layers.
    bidirectional : bool, default=False
        Add a reverse direction at every layer, reading each sequence's valid
        part backwards.

    Attributes
    ----------
    weight_ih : torch.nn.Parameter of shape (hidden_size + short_size, input_size)
        :math:`[U^{(L)}; U^{(S)}]`, Glorot-uniform initialization.
    weight_long : Tensor of shape (hidden_size, hidden_size)
        :math:`W^{(L)}` (parametrized; the free matrix is
        ``parametrizations.weight_long.original``, scoRNN initialization).
    weight_short : Tensor of shape (short_size, short_size)
        :math:`W^{(S)}` (parametrized when ``normalize``; ``T`` is
        ``parametrizations.weight_short.original``), initialized with the
        scaled 2x2 rotations of Helfrich & Ye 2020 eq. 5.
    weight_coupling : torch.nn.Parameter of shape (hidden_size, short_size) or None
        :math:`W^{(C)}`, Glorot-uniform initialization (Helfrich & Ye 2020 §4).
    bias : torch.nn.Parameter of shape (hidden_size + short_size,)
        :math:`[b^{(L)}; b^{(S)}]`, zero initialization.
    cell_size : int
        ``hidden_size + short_size``: the state of one layer and direction.
    output_size : int
        ``cell_size``, times 2 if bidirectional.
    extra_cells : torch.nn.ModuleList of ENRNN or None
        The single-layer ENRNNs of the other layers and directions, in state
        order after this one (layer-major, forward before reverse); None for
        one unidirectional layer. The parameters above are those of the first
        layer's forward direction.
    cells : list of ENRNN
        ``[self, *extra_cells]``, every layer and direction in state order.

    Notes
    -----
    ``forward`` evaluates the recurrent matrix once and passes it to its
    time loop: one Cayley solve and one eigendecomposition per call, then
    one ``(N, n) x (n, n)`` product per step with the block matrix
    :math:`W = [[W^{(L)}, W^{(C)}], [0, W^{(S)}]]`.
    The input projection is computed once for all steps. The state is a
    tensor ``(N, hidden_size + short_size)`` for one unidirectional layer;
    with several layers or directions it concatenates the states of
    :attr:`cells` along the last axis, ``(N, num_layers * num_directions *
    cell_size)``. The initial state defaults to zero (Helfrich & Ye 2020
    §4). The biases start at zero, so with modReLU the
    recurrence is linear at initialization until the biases move. ``step`` re-evaluates
    the matrix at every call unless the caller passes it
    (``step(x_t, state, recurrent_matrix=W)`` with ``W =
    rnn.recurrent_matrix()`` computed once). No process-wide cache
    (:func:`torch.nn.utils.parametrize.cached`, shared by every thread) is
    used, so models can be trained and used from different threads.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> rnn = ENRNN(2, 6, 4, n_negative=3, coupling=True)
    >>> x = torch.randn(3, 5, 2)
    >>> output, state = rnn(x, lengths=torch.tensor([5, 2, 4]))
    >>> output.shape, state.shape, rnn.output_size
    (torch.Size([3, 5, 10]), torch.Size([3, 10]), 10)
    >>> W = rnn.weight_long.detach()
    >>> torch.allclose(W.T @ W, torch.eye(6), atol=1e-5)
    True
    >>> float(output.detach()[1, 2:].abs().max())  # padded steps are zero
    0.0
    >>> deep = ENRNN(2, 6, 4, num_layers=2, bidirectional=True)
    >>> output, state = deep(x, lengths=torch.tensor([5, 2, 4]))
    >>> output.shape, state.shape, len(deep.cells)
    (torch.Size([3, 5, 20]), torch.Size([3, 40]), 4)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        short_size: int,
        *,
        n_negative: int = 0,
        eps: float = 1e-3,
        latch: bool = True,
        coupling: bool = False,
        normalize: bool = True,
        activation: str = "modrelu",
        num_layers: int = 1,
        bidirectional: bool = False,
    ) -> None:
        super().__init__()
        self.input_size = _checks.check_positive_int("input_size", input_size)
        self.hidden_size = _checks.check_positive_int("hidden_size", hidden_size)
        self.short_size = _checks.check_positive_int("short_size", short_size)
        if (
            isinstance(n_negative, bool)
            or not isinstance(n_negative, numbers.Integral)
            or not (0 <= int(n_negative) <= self.hidden_size)
        ):
            raise ValueError(
                f"n_negative must be an int in 0..hidden_size={self.hidden_size}, "
                f"got {n_negative!r}"
            )
        self.n_negative = int(n_negative)
        self.eps = _checks.check_nonnegative_float("eps", eps)
        self.latch = _checks.check_bool("latch", latch)
        self.coupling = _checks.check_bool("coupling", coupling)
        self.normalize = _checks.check_bool("normalize", normalize)
        self.activation = _checks.check_choice("activation", activation, _ACTIVATIONS)
        self.num_layers = _checks.check_positive_int("num_layers", num_layers)
        self.bidirectional = _checks.check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.cell_size = self.hidden_size + self.short_size
        self.output_size = self.cell_size * self.num_directions

        n, q, s = self.cell_size, self.hidden_size, self.short_size
        self.weight_ih = nn.Parameter(torch.empty(n, self.input_size))
        self.weight_long = nn.Parameter(torch.empty(q, q))
        self.weight_short = nn.Parameter(torch.empty(s, s))
        if self.coupling:
            self.weight_coupling = nn.Parameter(torch.empty(q, s))
        else:
            self.register_parameter("weight_coupling", None)
        self.bias = nn.Parameter(torch.empty(n))
        cayley_orthogonal(self, "weight_long", n_negative=self.n_negative)
        if self.normalize:
            with torch.no_grad():
                scaled_rotation_init_(self.weight_short)  # rho < 1: no latch
            spectral_radius_normalization(
                self, "weight_short", eps=self.eps, latch=self.latch
            )
        self.register_module("extra_cells", None)
        self.reset_parameters()
        if self.num_layers * self.num_directions > 1:
            settings = dict(
                n_negative=self.n_negative,
                eps=self.eps,
                latch=self.latch,
                coupling=self.coupling,
                normalize=self.normalize,
                activation=self.activation,
            )
            sizes = [self.input_size] + [self.output_size] * (self.num_layers - 1)
            cells = [
                ENRNN(sizes[k // self.num_directions], q, s, **settings)
                for k in range(1, self.num_layers * self.num_directions)
            ]
            self.extra_cells = nn.ModuleList(cells)

    def __setstate__(self, state: dict) -> None:
        # modules pickled before stacking existed: one unidirectional layer
        state = dict(state)
        state.setdefault("num_layers", 1)
        state.setdefault("bidirectional", False)
        state.setdefault("num_directions", 1)
        state.setdefault("cell_size", state["hidden_size"] + state["short_size"])
        super().__setstate__(state)
        self._modules.setdefault("extra_cells", None)

    @property
    def cells(self) -> list[ENRNN]:
        """Every layer and direction in state order (this module first)."""
        extra = self._modules.get("extra_cells")
        return [self, *(extra if extra is not None else ())]

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Re-initialize every parameter (Helfrich & Ye 2020 §4).

        ``weight_ih`` and ``weight_coupling``: Glorot uniform; the free matrix
        of ``weight_long``: scoRNN initialization
        (:func:`~sklmn.nn.parametrizations.scornn_skew_init_`); ``T`` of
        ``weight_short``: Helfrich & Ye 2020 eq. 5
        (:func:`~sklmn.nn.parametrizations.scaled_rotation_init_`), which also
        re-opens the latch; ``bias``: zero. The same for every layer and
        direction.
        """
        nn.init.xavier_uniform_(self.weight_ih)
        if self.weight_coupling is not None:
            nn.init.xavier_uniform_(self.weight_coupling)
        nn.init.zeros_(self.bias)
        scornn_skew_init_(self.parametrizations.weight_long.original)
        T = scaled_rotation_init_(torch.empty_like(self._short_free()))
        if self.normalize:
            self.weight_short = T  # right_inverse: stores T, re-opens the latch
        else:
            self.weight_short.copy_(T)
        for cell in self.cells[1:]:
            cell.reset_parameters()

    def _short_free(self) -> Tensor:
        """The unconstrained short-term matrix ``T``."""
        if self.normalize:
            return self.parametrizations.weight_short.original
        return self.weight_short

    def recurrent_matrix(self) -> Tensor:
        """Recurrent matrix ``W = [[W_L, W_C], [0, W_S]]`` (Helfrich & Ye 2020 eq. 2).

        Of the first layer's forward direction; ``cells[k].recurrent_matrix()``
        is that of the others.

        Returns
        -------
        W : Tensor of shape (cell_size, cell_size)
            Block upper-triangular (block diagonal without coupling).

        Examples
        --------
        >>> rnn = ENRNN(1, 2, 2)
        >>> W = rnn.recurrent_matrix().detach()
        >>> bool((W[2:, :2] == 0).all() and (W[:2, 2:] == 0).all())
        True
        """
        w_long, w_short = self.weight_long, self.weight_short
        if self.weight_coupling is not None:
            top = torch.cat([w_long, self.weight_coupling], dim=1)
        else:
            top = torch.cat(
                [w_long, w_long.new_zeros(w_long.shape[0], self.short_size)], 1
            )
        bottom = torch.cat(
            [w_short.new_zeros(self.short_size, self.hidden_size), w_short], dim=1
        )
        return torch.cat([top, bottom], dim=0)

    def _activate(self, z: Tensor) -> Tensor:
        if self.activation == "modrelu":
            return modrelu(z, self.bias)
        if self.activation == "relu":
            return torch.relu(z)
        return torch.tanh(z)

    def _project(self, x: Tensor) -> Tensor:
        """``U x (+ b)`` for every step at once (the bias goes inside modReLU)."""
        if self.activation == "modrelu":
            return x @ self.weight_ih.mT
        return torch.addmm(
            self.bias, x.reshape(-1, x.shape[-1]), self.weight_ih.mT
        ).reshape(x.shape[:-1] + (self.cell_size,))

    def _initial_state(self, state: Tensor | None, n: int, ref: Tensor) -> Tensor:
        """The initial state of every cell, concatenated (``(N, n_cells *
        cell_size)``)."""
        size = self.cell_size * len(self.cells)
        if state is None:
            return ref.new_zeros(n, size)
        if not isinstance(state, Tensor) or state.shape != (n, size):
            shape = tuple(state.shape) if isinstance(state, Tensor) else type(state)
            raise ValueError(
                f"state must be a tensor of shape ({n}, {size}), got {shape}"
            )
        return state.to(device=ref.device, dtype=ref.dtype)

    def _run(
        self, x: Tensor, h: Tensor, valid: list[Tensor] | None, lengths
    ) -> tuple[Tensor, Tensor]:
        """This cell's recurrence over batch-first ``x`` from ``h``: the
        output (zero on padded steps) and the state at each sequence's last
        valid step."""
        # the parametrized matrices are evaluated once, here (no process-wide
        # parametrize.cached(): it is shared by every thread)
        w_t = self.recurrent_matrix().mT
        # unbind (not proj[:, t]): its backward stacks the per-step
        # gradients once instead of scattering each into a full-size zero.
        proj = self._project(x).unbind(1)
        outputs = []
        for t in range(len(proj)):
            h_new = self._activate(torch.addmm(proj[t], h, w_t))
            h = h_new if valid is None else torch.where(valid[t], h_new, h)
            outputs.append(h_new)
        return zero_padded(torch.stack(outputs, dim=1), lengths), h

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | None = None,
        state: Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple[Tensor, Tensor] | tuple[Tensor, Tensor, Tensor]:
        """Run the recurrence over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input.
        lengths : Tensor of shape (N,), optional
            Valid lengths (values in ``1..T``); padded steps leave the state
            unchanged and their output is zero.
        state : Tensor of shape (N, num_layers * num_directions * cell_size), optional
            Initial state ``[h^{(L)}_0; h^{(S)}_0]`` (default zero), of every
            cell in :attr:`cells` order.
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (the
            ENRNN has none: a zero scalar).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            ``h_t`` of the last layer at every step (directions concatenated;
            zero on padded steps).
        state : Tensor of shape (N, num_layers * num_directions * cell_size)
            ``h`` of every cell at each sequence's last valid step.
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        lengths, n_steps = _checks.check_input(x, lengths, self.input_size)
        # NaN padding must not reach the input weights' gradient (0 * NaN)
        x = zero_padded(x, lengths)
        h0 = self._initial_state(state, x.shape[0], x).split(self.cell_size, 1)
        valid = None
        if lengths is not None:
            valid = mask_from_lengths(lengths, n_steps, device=x.device)
            valid = valid.unsqueeze(-1).unbind(1)
        cells, inp, last = self.cells, x, []
        for i in range(self.num_layers):
            outs = []
            for j in range(self.num_directions):
                k = i * self.num_directions + j
                seq = inp if j == 0 else reverse_padded(inp, lengths)
                out, h = cells[k]._run(seq, h0[k], valid, lengths)
                outs.append(out if j == 0 else reverse_padded(out, lengths))
                last.append(h)
            inp = outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)
        h = last[0] if len(last) == 1 else torch.cat(last, dim=1)
        return self._forward_result(inp, h, None, return_penalty)

    def step(
        self,
        x_t: Tensor,
        state: Tensor | None = None,
        *,
        recurrent_matrix: Tensor | Sequence[Tensor] | None = None,
    ) -> tuple[Tensor, Tensor]:
        """One time step (streaming inference, unidirectional only);
        iterating it equals ``forward``.

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
            Input at the current step.
        state : Tensor of shape (N, num_layers * cell_size), optional
            Previous state (default zero).
        recurrent_matrix : Tensor or list of Tensor, optional
            The value of :meth:`recurrent_matrix` (shape ``(cell_size,
            cell_size)``), computed once by the caller
            for a loop of steps (with ``num_layers > 1``: a list of the
            matrices of :attr:`cells`, one per layer); default: evaluated at
            this call (one Cayley solve and one eigendecomposition per layer).

        Returns
        -------
        y_t : Tensor of shape (N, cell_size)
            The new hidden state ``h_t`` of the last layer (the output).
        state : Tensor of shape (N, num_layers * cell_size)
            The new state of every layer (for one layer, the same tensor as
            ``y_t``), to pass to the next call.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> rnn = ENRNN(2, 3, 3).eval()
        >>> x = torch.randn(4, 6, 2)
        >>> state = None
        >>> for t in range(6):
        ...     y, state = rnn.step(x[:, t], state)
        >>> torch.allclose(y, rnn(x)[0][:, -1], atol=1e-5)
        True
        >>> W = rnn.recurrent_matrix()  # once for the whole loop
        >>> state = None
        >>> for t in range(6):
        ...     y, state = rnn.step(x[:, t], state, recurrent_matrix=W)
        >>> torch.allclose(y, rnn(x)[0][:, -1], atol=1e-5)
        True
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional ENRNN: the reverse "
                "direction needs the whole sequence"
            )
        _checks.check_step_input(x_t, self.input_size)
        n = self.cell_size
        h = self._initial_state(state, x_t.shape[0], x_t).split(n, 1)
        if recurrent_matrix is None:
            matrices = [None] * self.num_layers
        elif self.num_layers == 1:
            matrices = [recurrent_matrix]
        elif (
            isinstance(recurrent_matrix, Tensor)
            or not isinstance(recurrent_matrix, Sequence)
            or len(recurrent_matrix) != self.num_layers
        ):
            raise ValueError(
                f"recurrent_matrix must be a list of {self.num_layers} tensors "
                f"of shape ({n}, {n}) (one per layer), got "
                f"{type(recurrent_matrix).__name__}"
            )
        else:
            matrices = list(recurrent_matrix)
        inp, new = x_t, []
        for cell, h_k, w in zip(self.cells, h, matrices, strict=True):
            if w is None:
                w = cell.recurrent_matrix()
            elif not isinstance(w, Tensor) or tuple(w.shape) != (n, n):
                got = tuple(w.shape) if isinstance(w, Tensor) else type(w).__name__
                raise ValueError(
                    f"recurrent_matrix must be a tensor of shape ({n}, {n}), got {got}"
                )
            else:
                w = w.to(device=x_t.device, dtype=x_t.dtype)
            inp = cell._activate(torch.addmm(cell._project(inp), h_k, w.mT))
            new.append(inp)
        return inp, (new[0] if len(new) == 1 else torch.cat(new, dim=1))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}, {self.short_size}"
        s += f", n_negative={self.n_negative}, eps={self.eps}"
        if not self.latch:
            s += ", latch=False"
        if self.coupling:
            s += ", coupling=True"
        if not self.normalize:
            s += ", normalize=False"
        if self.activation != "modrelu":
            s += f", activation={self.activation!r}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s
