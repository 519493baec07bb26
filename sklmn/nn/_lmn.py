"""Linear Memory Network (Carta et al. 2021 §3.1, Carta et al. 2020b §2).

One LMN layer computes, with zero initial memory ``m_0``::

    h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)
    m_t = W_hm h_t + W_mm m_{t-1} (+ b_m)

and outputs the memory sequence (``output='memory'``; LMN-m in Carta et al. 2021, LMN-B
in Bacciu et al. 2019) or the hidden sequence (``output='hidden'``; LMN-h / LMN-A).

Speed: the input projection ``W_xh x_t + b_h`` is one matmul for all steps;
the recurrence runs in :func:`~sklmn.nn._scan.lmn_scan`, an autograd
function whose backward is a hand-written BPTT: one fused matmul
``[g_pre | g_m] @ [W_mh; W_mm]`` per step and the weight gradients as single
matmuls over all steps. Variable lengths are handled as packed sequences: the
batch is sorted by decreasing length and step ``t`` only updates the prefix of
sequences still running (outputs of finished sequences are exactly zero, their
final state is read at their last valid step). The kernel lives in
:mod:`sklmn.nn._scan` (``lmn_scan`` is still importable from this module).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import parametrize

from ._base import (
    DEFAULT_INIT_RADIUS,
    RecurrentModule,
    add_feedback,
    check_feedback_output,
    check_init_radius,
    stabilize_memory_,
)
from ._checks import (
    check_bool,
    check_choice,
    check_dropout,
    check_input,
    check_nonnegative_float,
    check_positive_int,
    check_step_input,
)
from ._lmn_laes import LMNLAESMixin, LMNLayerLAESMixin
from ._lmn_schur import LMNLayerSchurMixin, check_ring, memory_output_basis
from ._padding import reverse_padded, zero_padded
from ._penalties import norm_stabilizer_penalty, orthogonality_penalty
from ._scan import SortedBatch, lmn_scan
from .parametrizations import (
    PicklableParametrizationsMixin,
    spectral_radius_normalization,
)

__all__ = ["LMN", "LMNLayer", "lmn_scan"]

_OUTPUTS = ("memory", "hidden")
_MEMORY_MATRICES = ("free", "orthogonal", "spectral", "schur")



# --------------------------------------------------------------------------- #
# One layer
# --------------------------------------------------------------------------- #
class LMNLayer(
    LMNLayerSchurMixin,
    LMNLayerLAESMixin,
    PicklableParametrizationsMixin,
    RecurrentModule,
):
    """One unidirectional Linear Memory Network layer (Carta et al. 2021 §3.1).

    ``h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)``,
    ``m_t = W_hm h_t + W_mm m_{t-1} (+ b_m)``, zero initial memory.

    Parameters
    ----------
    input_size : int
        Number of input features ``d``.
    hidden_size : int
        Number of hidden (functional) units ``H``.
    memory_size : int
        Number of memory units ``M``.
    output : {'memory', 'hidden'}, default='memory'
        Output the memory sequence ``m_t`` or the hidden sequence ``h_t``.
    memory_matrix : {'free', 'orthogonal', 'spectral', 'schur'}, default='free'
        ``'orthogonal'``: ``weight_mm`` is constrained orthogonal with
        :func:`torch.nn.utils.parametrizations.orthogonal`; ``'spectral'``:
        spectral radius normalized below one with
        :func:`sklmn.nn.parametrizations.spectral_radius_normalization`;
        ``'schur'``: held in real Schur form (a
        :class:`~sklmn.nn._stable_memory.SchurMemory`), spectral radius below
        one whatever its parameters, random start on the ring
        ``0.9 <= |lambda| <= 0.999`` (see ``docs/memory.md``).
    memory_bias : bool, default=False
        Add a memory bias ``b_m``.
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t-1}`` (Carta et al. 2020b §2).
    init_radius : float or None, default=0.95
        Stable initialization: after the random draw, ``W_mm`` and ``W_mh``
        are scaled by one factor so that the linearized memory map
        ``W_mm + W_hm W_mh`` has at most this spectral radius (see
        :func:`sklmn.nn._base.stabilize_memory_`). None keeps the raw draw.
        Not applied with ``memory_matrix='orthogonal'`` (an orthogonal
        ``W_mm`` has radius one by construction).
    ring : tuple (r_min, r_max, max_angle) or None, default=None
        Random start of a ``'schur'`` memory (ignored otherwise): eigenvalue
        moduli uniform on the ring ``r_min <= |lambda| <= r_max`` (their
        squares uniform), angles uniform in ``[0, max_angle]``, the rows of
        ``W_hm`` scaled by ``sqrt(1 - |lambda|^2)`` (Orvieto et al. 2023).
        None: ``(0.9, 0.999, pi / 20)`` (see ``docs/memory.md``, "Training
        from scratch").
    feedback : bool, default=True
        Whether the hidden units read the memory (``W_mh``). False:
        ``weight_mh`` is a buffer of zeros that no training step moves, so
        the linearized memory map ``W_mm + W_hm D W_mh`` is ``W_mm`` for
        every ``D`` (below one with a ``'schur'`` memory, see
        ``docs/memory.md``, "The feedback bound").

    Attributes
    ----------
    weight_xh : Parameter of shape (H, d)
    weight_mh : Parameter of shape (H, M)
        A buffer of zeros when ``feedback=False``.
    bias_h : Parameter of shape (H,)
    weight_hm : Parameter of shape (M, H)
    weight_mm : Tensor of shape (M, M)
        A parameter, or a parametrized tensor for ``'orthogonal'`` and
        ``'spectral'``; for ``'schur'`` the dense matrix computed from
        :attr:`memory` (read-only: set it with :meth:`set_memory_`).
    memory : SchurMemory
        Only for ``memory_matrix='schur'``: the parameters of ``W_mm``.
    memory_basis : Tensor of shape (M, M)
        Only for ``memory_matrix='schur'``: the orthogonal ``Q`` of the
        memory coordinates (``m = Q m'``) relative to the weights last given
        to :meth:`set_memory_` and the LAES start (identity at construction).
    bias_m : Parameter of shape (M,) or None
    output_size : int
        ``M`` for ``output='memory'``, ``H`` for ``output='hidden'``.

    Notes
    -----
    Penalties (soft orthogonality, norm stabilizer) are configured on
    :class:`LMN`; the penalty of an ``LMNLayer`` forward pass is zero.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> layer = LMNLayer(3, 5, 4)
    >>> out, (h, m) = layer(torch.randn(2, 7, 3), lengths=torch.tensor([7, 2]))
    >>> out.shape, h.shape, m.shape
    (torch.Size([2, 7, 4]), torch.Size([2, 5]), torch.Size([2, 4]))
    >>> bool((out[1, 2:] == 0).all()) and torch.equal(m[1], out[1, 1])
    True
    """

    #: modules pickled before the option existed read their memory
    feedback: bool = True

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        memory_size: int,
        *,
        output: str = "memory",
        memory_matrix: str = "free",
        memory_bias: bool = False,
        truncate_gradient: bool = False,
        init_radius: float | None = DEFAULT_INIT_RADIUS,
        ring: tuple | None = None,
        feedback: bool = True,
    ) -> None:
        super().__init__()
        self.init_radius = check_init_radius(init_radius)
        self.ring = check_ring(ring)
        self.feedback = check_bool("feedback", feedback)
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.memory_size = check_positive_int("memory_size", memory_size)
        self.output = check_choice("output", output, _OUTPUTS)
        check_feedback_output(self.feedback, self.output)
        self.memory_matrix = check_choice(
            "memory_matrix", memory_matrix, _MEMORY_MATRICES
        )
        self.memory_bias = check_bool("memory_bias", memory_bias)
        self.truncate_gradient = check_bool("truncate_gradient", truncate_gradient)
        self.output_size = self.memory_size if output == "memory" else hidden_size
        H, M, d = self.hidden_size, self.memory_size, self.input_size
        self.weight_xh = nn.Parameter(torch.empty(H, d))
        add_feedback(self, torch.empty(H, M))
        self.bias_h = nn.Parameter(torch.empty(H))
        self.weight_hm = nn.Parameter(torch.empty(M, H))
        if self.memory_matrix == "schur":
            self._add_schur_memory(M)
        else:
            self.weight_mm = nn.Parameter(torch.empty(M, M))
        if self.memory_bias:
            self.bias_m = nn.Parameter(torch.empty(M))
        else:
            self.register_parameter("bias_m", None)
        self.reset_parameters()
        if self.memory_matrix == "orthogonal":
            nn.utils.parametrizations.orthogonal(self, "weight_mm")
        elif self.memory_matrix == "spectral":
            spectral_radius_normalization(self, "weight_mm")

    def reset_parameters(self) -> None:
        """Re-initialize the parameters.

        ``W_xh``, ``W_mh``, ``W_hm`` uniform in ``±1/sqrt(fan_in)`` (as
        :class:`torch.nn.RNN`), ``W_mm`` random orthogonal (Carta et al. 2020b),
        biases zero; then ``W_mm`` and ``W_mh`` are scaled so that the
        linearized memory map has spectral radius at most ``init_radius``.
        """
        with torch.no_grad():
            for weight in (self.weight_xh, self.weight_mh, self.weight_hm):
                bound = 1.0 / math.sqrt(weight.shape[1])
                nn.init.uniform_(weight, -bound, bound)
            if not self.feedback:  # drawn all the same: one random stream
                self.weight_mh.zero_()
            nn.init.zeros_(self.bias_h)
            if self.bias_m is not None:
                nn.init.zeros_(self.bias_m)
            M = self.memory_size
            q = nn.init.orthogonal_(self.weight_hm.new_empty(M, M))
            if self.init_radius is not None and self.memory_matrix != "orthogonal":
                stabilize_memory_(q, self.weight_hm, self.weight_mh, self.init_radius)
            if self.memory_matrix == "schur":
                self._reset_schur_memory_()
            elif parametrize.is_parametrized(self, "weight_mm"):
                self.weight_mm = q
            else:
                self.weight_mm.copy_(q)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}, {self.memory_size}"
        if self.output != "memory":
            s += f", output={self.output!r}"
        if self.memory_matrix != "free":
            s += f", memory_matrix={self.memory_matrix!r}"
        if self.memory_bias:
            s += ", memory_bias=True"
        if self.truncate_gradient:
            s += ", truncate_gradient=True"
        if not self.feedback:
            s += ", feedback=False"
        return s

    # -- internal API shared with LMN ------------------------------------- #
    def _weights(self) -> tuple[Tensor, ...]:
        """The effective weights ``(W_xh, b_h, W_mh, W_hm, W_mm, b_m)``.

        A parametrized ``W_mm`` (``'orthogonal'``, ``'spectral'``) is
        evaluated here, once: a forward pass calls this once per layer and
        passes the tuple down to :meth:`_scan` / :meth:`_cell`, so no
        process-wide cache (``parametrize.cached()``, shared by every thread)
        is needed.
        """
        return (
            self.weight_xh,
            self.bias_h,
            self.weight_mh,
            self.weight_hm,
            self.weight_mm,
            self.bias_m,
        )

    def _scan(
        self,
        x_tm: Tensor,
        m0: Tensor,
        batch_sizes: list[int] | None,
        weights: tuple[Tensor, ...],
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Recurrence on time-major sorted input ``x_tm`` (T, N, d) with the
        effective ``weights`` of :meth:`_weights`. Returns time-major ``hs``,
        ``ms`` and the final states (see :func:`lmn_scan`).
        """
        W_xh, b_h, W_mh, W_hm, W_mm, b_m = weights
        return lmn_scan(
            x_tm,
            m0,
            W_xh,
            b_h,
            W_mh if self.feedback else None,  # None: the kernel without it
            W_hm,
            W_mm,
            b_m,
            batch_sizes,
            self.truncate_gradient,
        )

    @staticmethod
    def _cell(
        x_t: Tensor, m: Tensor, weights: tuple[Tensor, ...]
    ) -> tuple[Tensor, Tensor]:
        """One step ``(x_t, m_{t-1}) -> (h_t, m_t)`` with plain autograd ops
        and the effective ``weights`` of :meth:`_weights`."""
        W_xh, b_h, W_mh, W_hm, W_mm, b_m = weights
        h = torch.tanh(F.linear(x_t, W_xh, b_h) + F.linear(m, W_mh))
        m = F.linear(h, W_hm, b_m) + F.linear(m, W_mm)
        return h, m

    def _initial_memory(self, state: object, n: int, like: Tensor) -> Tensor:
        m0 = _memory_of(state)
        if m0 is None:
            return like.new_zeros(n, self.memory_size)
        if not isinstance(m0, Tensor) or m0.shape != (n, self.memory_size):
            got = tuple(m0.shape) if isinstance(m0, Tensor) else type(m0).__name__
            raise ValueError(
                f"initial memory must have shape {(n, self.memory_size)}, got {got}"
            )
        return m0.to(device=like.device, dtype=like.dtype)

    # -- protocol ---------------------------------------------------------- #
    def forward(
        self,
        x: Tensor,
        lengths: Tensor | None = None,
        state: tuple[Tensor | None, Tensor] | Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the layer over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input.
        lengths : Tensor of shape (N,), optional
            Valid lengths (values in ``1..T``).
        state : tuple (h0, m0) or Tensor m0, optional
            Initial state; ``m0`` of shape (N, memory_size). ``h0`` is ignored
            (``h_t`` does not depend on ``h_{t-1}``). Default zero.
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (zero:
            the penalties are configured on :class:`LMN`).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Zero at padded steps.
        state : tuple (h, m)
            Final hidden (N, H) and memory (N, M) at each last valid step.
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        lengths, T = check_input(x, lengths, self.input_size)
        # padded steps are never read, but their input reaches the gradient
        # of W_xh (0 * NaN): zeroed, so that NaN padding cannot leak into it
        x = zero_padded(x, lengths)
        n = x.shape[0]
        m0 = self._initial_memory(state, n, x)
        batch = SortedBatch(lengths, T, x.device)
        hs, ms, h_n, m_n = self._scan(
            batch.time_major(x), batch.sort(m0), batch.batch_sizes, self._weights()
        )
        out = (ms if self.output == "memory" else hs).transpose(0, 1)
        out, h_n, m_n = batch.unsort(out), batch.unsort(h_n), batch.unsort(m_n)
        # padded steps of hs / ms are exactly zero (see lmn_scan)
        return self._forward_result(out, (h_n, m_n), None, return_penalty)

    def step(
        self, x_t: Tensor, state: tuple[Tensor | None, Tensor] | Tensor | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Advance one time step (streaming inference).

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : tuple (h, m) or Tensor m, optional
            Previous state (default zero).

        Returns
        -------
        y_t : Tensor of shape (N, output_size)
        state : tuple (h, m)
        """
        check_step_input(x_t, self.input_size)
        m = self._initial_memory(state, x_t.shape[0], x_t)
        h, m = self._cell(x_t, m, self._weights())
        return (m if self.output == "memory" else h), (h, m)

    # -- weight setting ---------------------------------------------------- #
    # (the LAES initialization: :class:`~sklmn.nn._lmn_laes.LMNLayerLAESMixin`)


# --------------------------------------------------------------------------- #
# Stacked / bidirectional LMN
# --------------------------------------------------------------------------- #
class LMN(LMNLAESMixin, RecurrentModule):
    """Stacked, optionally bidirectional Linear Memory Network (Carta et al. 2021 §3.1).

    Each layer computes ``h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)`` and
    ``m_t = W_hm h_t + W_mm m_{t-1} (+ b_m)`` from zero initial memory and
    passes its output sequence (memory or hidden) to the next layer.

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Hidden (functional) units per layer and direction.
    memory_size : int
        Memory units per layer and direction.
    num_layers : int, default=1
        Number of stacked layers.
    output : {'memory', 'hidden'}, default='memory'
        Sequence each layer outputs (LMN-m / LMN-h in Carta et al. 2021).
    bidirectional : bool, default=False
        Add a reverse-direction layer at every level; outputs are concatenated
        ``[forward, reverse]``. The reverse direction reads each sequence's
        valid part backwards (padding stays padding).
    memory_matrix : {'free', 'orthogonal', 'spectral', 'schur'}, default='free'
        Constraint on ``W_mm`` (see :class:`LMNLayer`).
    memory_bias : bool, default=False
        Add a memory bias ``b_m``.
    orthogonality_penalty : float, default=0.0
        lambda of the soft orthogonality penalty ``lambda ||W_mm^T W_mm - I||_F^2``
        summed over layers (Carta et al. 2020b §2.1), returned by
        ``forward(..., return_penalty=True)``.
    norm_penalty : float, default=0.0
        beta of the norm stabilizer ``beta mean_t (||m_t|| - ||m_{t-1}||)^2``
        on every layer's memory (Carta et al. 2020b §2.1), summed over layers.
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t-1}`` (Carta et al. 2020b §2).
    dropout : float, default=0.0
        Dropout on each layer's output except the last (training mode only).
    init_radius : float or None, default=0.95
        Stable initialization of every layer and direction (see
        :class:`LMNLayer`).
    ring : tuple (r_min, r_max, max_angle) or None, default=None
        Random start of every layer's ``'schur'`` memory (see
        :class:`LMNLayer`).
    feedback : bool, default=True
        Whether every layer's hidden units read its memory (see
        :class:`LMNLayer`).

    Attributes
    ----------
    layers : nn.ModuleList of LMNLayer
        Forward-direction layers.
    layers_reverse : nn.ModuleList of LMNLayer or None
        Reverse-direction layers when ``bidirectional``.
    output_size : int
        ``memory_size`` (or ``hidden_size``) times 2 if bidirectional.

    Notes
    -----
    The state is a tuple ``(h, m)`` of tensors of shape
    ``(num_layers * num_directions, N, hidden_size)`` and
    ``(num_layers * num_directions, N, memory_size)``, ordered as in
    :class:`torch.nn.RNN` (layer-major). Only ``m`` is read as initial state.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> lmn = LMN(3, 8, 4, num_layers=2, bidirectional=True, norm_penalty=0.1)
    >>> x = torch.randn(5, 6, 3)
    >>> out, (h, m) = lmn(x, lengths=torch.tensor([6, 6, 3, 2, 1]))
    >>> out.shape, h.shape, m.shape
    (torch.Size([5, 6, 8]), torch.Size([4, 5, 8]), torch.Size([4, 5, 4]))
    >>> out, (h, m), penalty = lmn(
    ...     x, lengths=torch.tensor([6, 6, 3, 2, 1]), return_penalty=True
    ... )
    >>> penalty.item() > 0, penalty.requires_grad
    (True, True)
    """

    #: modules pickled before the option existed read their memory
    feedback: bool = True

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        memory_size: int,
        *,
        num_layers: int = 1,
        output: str = "memory",
        bidirectional: bool = False,
        memory_matrix: str = "free",
        memory_bias: bool = False,
        orthogonality_penalty: float = 0.0,
        norm_penalty: float = 0.0,
        truncate_gradient: bool = False,
        dropout: float = 0.0,
        init_radius: float | None = DEFAULT_INIT_RADIUS,
        ring: tuple | None = None,
        feedback: bool = True,
    ) -> None:
        super().__init__()
        self.init_radius = check_init_radius(init_radius)
        self.ring = check_ring(ring)
        self.feedback = check_bool("feedback", feedback)
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.memory_size = check_positive_int("memory_size", memory_size)
        self.num_layers = check_positive_int("num_layers", num_layers)
        self.output = check_choice("output", output, _OUTPUTS)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.memory_matrix = check_choice(
            "memory_matrix", memory_matrix, _MEMORY_MATRICES
        )
        self.memory_bias = check_bool("memory_bias", memory_bias)
        self.orthogonality_penalty = check_nonnegative_float(
            "orthogonality_penalty", orthogonality_penalty
        )
        self.norm_penalty = check_nonnegative_float("norm_penalty", norm_penalty)
        self.truncate_gradient = check_bool("truncate_gradient", truncate_gradient)
        self.dropout = check_dropout("dropout", dropout)
        self.num_directions = 2 if self.bidirectional else 1
        per_direction = memory_size if output == "memory" else hidden_size
        self.output_size = per_direction * self.num_directions

        def make(layer_input: int) -> LMNLayer:
            return LMNLayer(
                layer_input,
                hidden_size,
                memory_size,
                output=output,
                memory_matrix=memory_matrix,
                memory_bias=memory_bias,
                truncate_gradient=truncate_gradient,
                init_radius=init_radius,
                ring=self.ring,
                feedback=self.feedback,
            )

        sizes = [input_size] + [self.output_size] * (self.num_layers - 1)
        self.layers = nn.ModuleList(make(s) for s in sizes)
        if self.bidirectional:
            self.layers_reverse = nn.ModuleList(make(s) for s in sizes)
        else:
            self.layers_reverse = None

    def reset_parameters(self) -> None:
        """Re-initialize every layer (see :meth:`LMNLayer.reset_parameters`)."""
        for layer in self._all_layers():
            layer.reset_parameters()

    def _all_layers(self) -> list[LMNLayer]:
        """Layers in state order: layer-major, forward before reverse."""
        out = []
        for i, layer in enumerate(self.layers):
            out.append(layer)
            if self.layers_reverse is not None:
                out.append(self.layers_reverse[i])
        return out

    def output_basis(self) -> Tensor | None:
        """The turn of the output back to the coordinates of the memory
        matrices its last layer was set to (:func:`memory_output_basis`):
        the block-diagonal ``memory_basis`` of the last layer's directions
        for a ``'schur'`` memory output, None otherwise. The readout reads the
        output's extrema in those coordinates, which do not commute with a
        turn (the extrema block of :class:`~sklmn.training.SequenceNet`).

        Returns
        -------
        basis : Tensor of shape (output_size, output_size) or None

        Examples
        --------
        >>> from sklmn.nn import LMN
        >>> LMN(2, 3, 4, memory_matrix="schur").output_basis().shape
        torch.Size([4, 4])
        >>> LMN(2, 3, 4).output_basis() is None
        True
        """
        if self.output != "memory":
            return None
        last = [self.layers[-1]]
        if self.layers_reverse is not None:
            last.append(self.layers_reverse[-1])
        return memory_output_basis(last)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}, {self.memory_size}"
        return s if self.feedback else s + ", feedback=False"

    def _initial_memory(self, state: object, n: int, like: Tensor) -> Tensor | None:
        m0 = _memory_of(state)
        if m0 is None:
            return None
        shape = (self.num_layers * self.num_directions, n, self.memory_size)
        if not isinstance(m0, Tensor) or tuple(m0.shape) != shape:
            got = tuple(m0.shape) if isinstance(m0, Tensor) else type(m0).__name__
            raise ValueError(f"initial memory must have shape {shape}, got {got}")
        return m0.to(device=like.device, dtype=like.dtype)

    def _penalty(
        self,
        memories: list[tuple[Tensor, Tensor]],
        lengths,
        memory_matrices: list[Tensor],
    ) -> Tensor | None:
        """The penalties of a forward pass; ``memory_matrices`` are the
        effective ``W_mm`` of the layers in state order, as evaluated by
        that forward pass."""
        total = None
        if self.orthogonality_penalty > 0:
            for W_mm in memory_matrices:
                term = orthogonality_penalty(W_mm, scale=self.orthogonality_penalty)
                total = term if total is None else total + term
        if self.norm_penalty > 0:
            for ms, m0 in memories:
                term = norm_stabilizer_penalty(
                    ms.transpose(0, 1),
                    lengths,
                    initial_state=m0,
                    scale=self.norm_penalty,
                )
                total = term if total is None else total + term
        return total

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | None = None,
        state: tuple[Tensor | None, Tensor] | Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the network over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input.
        lengths : Tensor of shape (N,), optional
            Valid lengths (values in ``1..T``); default all ``T``.
        state : tuple (h0, m0) or Tensor m0, optional
            ``m0`` of shape (num_layers * num_directions, N, memory_size);
            ``h0`` is ignored. Default zero.
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass
            (``orthogonality_penalty`` and ``norm_penalty``), to add to the
            training loss.

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Last layer's output sequence, zero at padded steps.
        state : tuple (h, m)
            Final hidden and memory states at each sequence's last valid step,
            shapes (num_layers * num_directions, N, hidden_size / memory_size).
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: the penalties summed over layers
            and directions, differentiable w.r.t. the parameters (zero when
            none is configured).
        """
        lengths, T = check_input(x, lengths, self.input_size)
        # padded steps are never read, but their input reaches the gradient
        # of W_xh (0 * NaN): zeroed, so that NaN padding cannot leak into it
        x = zero_padded(x, lengths)
        n = x.shape[0]
        m0_all = self._initial_memory(state, n, x)
        batch = SortedBatch(lengths, T, x.device)
        batch_sizes, sorted_lengths = batch.batch_sizes, batch.lengths
        m0_all = batch.sort(m0_all, dim=1)
        inp = batch.time_major(x)  # time-major (T, N, d), sorted
        h_last, m_last, memories = [], [], []
        memory_matrices = []  # the effective W_mm, evaluated once per layer
        for i in range(self.num_layers):
            directions = [self.layers[i]]
            if self.layers_reverse is not None:
                directions.append(self.layers_reverse[i])
            outs = []
            for j, layer in enumerate(directions):
                k = i * self.num_directions + j
                if m0_all is None:
                    m0 = inp.new_zeros(n, self.memory_size)
                else:
                    m0 = m0_all[k]
                seq = inp if j == 0 else _reverse_tm(inp, sorted_lengths)
                weights = layer._weights()
                memory_matrices.append(weights[4])
                hs, ms, h_n, m_n = layer._scan(seq, m0, batch_sizes, weights)
                out = ms if self.output == "memory" else hs
                if j == 1:
                    out = _reverse_tm(out, sorted_lengths)
                outs.append(out)
                h_last.append(h_n)
                m_last.append(m_n)
                memories.append((ms, m0))
            inp = outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)
            if self.dropout > 0 and i < self.num_layers - 1:
                inp = F.dropout(inp, self.dropout, self.training)
        penalty = self._penalty(memories, sorted_lengths, memory_matrices)
        out = inp.transpose(0, 1)
        h_n, m_n = torch.stack(h_last), torch.stack(m_last)
        out = batch.unsort(out)
        h_n, m_n = batch.unsort(h_n, dim=1), batch.unsort(m_n, dim=1)
        # padded steps are exactly zero (lmn_scan output, reversal keeps them)
        return self._forward_result(out, (h_n, m_n), penalty, return_penalty)

    def step(
        self, x_t: Tensor, state: tuple[Tensor | None, Tensor] | Tensor | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Advance one time step (streaming inference, unidirectional only).

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : tuple (h, m) or Tensor m, optional
            Previous state as returned by ``forward`` or ``step``.

        Returns
        -------
        y_t : Tensor of shape (N, output_size)
        state : tuple (h, m)

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> lmn = LMN(2, 4, 3)
        >>> x = torch.randn(1, 5, 2)
        >>> out, _ = lmn(x)
        >>> state = None
        >>> for t in range(5):
        ...     y, state = lmn.step(x[:, t], state)
        >>> torch.allclose(y, out[:, -1], atol=1e-5)
        True
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional LMN: the reverse "
                "direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        m_all = self._initial_memory(state, x_t.shape[0], x_t)
        hs, ms = [], []
        inp = x_t
        for i, layer in enumerate(self.layers):
            if m_all is None:
                m = x_t.new_zeros(x_t.shape[0], self.memory_size)
            else:
                m = m_all[i]
            h, m = layer._cell(inp, m, layer._weights())
            hs.append(h)
            ms.append(m)
            inp = m if self.output == "memory" else h
            if self.dropout > 0 and i < self.num_layers - 1:
                inp = F.dropout(inp, self.dropout, self.training)
        return inp, (torch.stack(hs), torch.stack(ms))

    # -- weight setting ---------------------------------------------------- #
    # (from_elman, the LAES and unrolled starts:
    # :class:`~sklmn.nn._lmn_laes.LMNLAESMixin`)


def _memory_of(state: object) -> object:
    """``m0`` of a state given as a pair ``(h0, m0)`` or as ``m0`` itself."""
    if not isinstance(state, tuple | list):
        return state
    if len(state) != 2:
        raise ValueError(
            "state must be a pair (h0, m0) or a tensor m0, got a "
            f"{type(state).__name__} of {len(state)} items"
        )
    return state[1]


def _reverse_tm(x_tm: Tensor, lengths: Tensor | None) -> Tensor:
    """Reverse the valid part of time-major sequences (T, N, ...)."""
    return reverse_padded(x_tm.transpose(0, 1), lengths).transpose(0, 1)
