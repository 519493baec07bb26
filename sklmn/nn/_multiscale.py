"""Multi-scale Linear Memory Network (MS-LMN), a recurrence driven by a clock.

The MS-LMN (like the Clockwork RNN of :mod:`sklmn.nn._clockwork`) splits its
recurrent state into ``g`` modules (blocks of units) ordered from fastest to
slowest. Module ``k`` (0-based here, ``k + 1`` in the
papers) has a period ``p_k`` and is updated at the steps ``t`` with
``t mod p_k = 0``; otherwise it keeps its state. ``t`` counts from 0 at each
sequence's first element, so every module sees the first input.

A module reads itself and all *slower* modules: the recurrent matrix is block
upper-triangular, row block ``k`` (the update of module ``k``) using column
blocks ``k .. g-1`` (Carta et al. 2020a eq. 7, ``sum_{i=k}^{g}``; the ``sum_{i=1}^{k}``
of Carta et al. 2021 eq. 7 is a typo, both papers' block matrices agree with 2020a).

With nested periods (each period divides the next one, e.g. the default
``2**k``) the modules active at a step always form a prefix ``0 .. a-1``, so a
single sliced matrix product updates all of them (Carta et al. 2021 and 2020a, eq. 9-10)
and the cost of a step grows with the number of *active* units, not with ``g``.

The clock and block structure live in :mod:`sklmn.nn._clock`, the recurrence
kernel in :mod:`sklmn.nn._scan`; the Clockwork RNN, once defined here, in
:mod:`sklmn.nn._clockwork` (still importable from this module).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

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
    check_input,
    check_nonnegative_float,
    check_positive_int,
    check_step_input,
)
from ._clock import (
    active_modules,
    active_prefix_counts,
    block_upper_mask,
    check_bidirectional_counter,
    check_module_sizes,
    check_state_tensor,
    check_step_counter,
    default_periods,
    module_of_units,
    module_sizes,
    uniform_start,
)

# Pickles written when ClockworkRNN was defined in this module name it
# ``sklmn.nn._multiscale.ClockworkRNN``: keep that path importable.
from ._clockwork import ClockworkRNN as ClockworkRNN
from ._lmn_laes import MultiScaleLAESMixin
from ._lmn_schur import MultiScaleSchurMixin, check_ring, memory_output_basis
from ._padding import gather_last, mask_from_lengths, reverse_padded, zero_padded
from ._penalties import norm_stabilizer_penalty, orthogonality_penalty
from ._scan import SortedBatch, multiscale_scan
from .parametrizations import SpectralRadiusNormalization

__all__ = ["MultiScaleLMN"]


# --------------------------------------------------------------------------- #
# Multi-scale LMN
# --------------------------------------------------------------------------- #
class MultiScaleLMN(MultiScaleSchurMixin, MultiScaleLAESMixin, RecurrentModule):
    r"""Multi-scale Linear Memory Network (Carta et al. 2021 §3.2, 2020a §3).

    A tanh functional layer reads the input and all memory modules; the linear
    memory is split into ``n_modules`` modules of ``memory_size`` units (or
    of the sizes in the tuple ``memory_size``), module ``k`` (0-based) being
    updated every ``2**k`` steps:

    .. math::

        h_t &= \tanh(W^{xh} x_t + W^{mh} m_{t-1} + b_h) \\
        m_{k,t} &= W^{hm}_k h_t + \sum_{i \ge k} W^{mm}_{k,i} m_{i,t-1}
                   \quad \text{if } t \bmod 2^k = 0,
                   \text{ else } m_{k,t-1}

    with ``t`` counted from 0 at each sequence's first element. ``W^{mm}``
    is block upper-triangular (a module reads itself and slower modules): the
    mask is applied once per forward, so the masked blocks never contribute and
    their gradients are exactly zero. The modules active at a step form a
    prefix and are updated by one sliced product (eq. 9-10).

    Parameters
    ----------
    input_size : int
        Number of input features ``d``.
    hidden_size : int
        Number of functional (hidden) units ``N_h``.
    memory_size : int or tuple of int
        Number of memory units *per module* ``N_m``, or a tuple of
        ``n_modules`` sizes, fastest module first (modules of different
        sizes: ``g * N_m`` below is then their sum). A tuple of equal
        sizes is stored as the int.
    n_modules : int
        Number of memory modules ``g``.
    output : {'memory', 'hidden'}, default='memory'
        Output sequence: all memory modules concatenated (``g * N_m``
        features, LMN-m in Carta et al. 2021) or the hidden state (``N_h`` features).
    memory_matrix : {'free', 'spectral', 'schur'}, default='free'
        ``'free'``: the masked matrix is used as is. ``'spectral'``: the
        masked matrix is divided by its spectral radius (+ 1e-3) with the
        latch rule of Helfrich & Ye 2020 §4 (as ``LMN(memory_matrix='spectral')``); the
        spectral radius of a block-triangular matrix is the largest one of its
        diagonal blocks. ``'schur'``: held in real Schur form by one
        :class:`~sklmn.nn._stable_memory.SchurMemory` with one orthogonal
        change of coordinates per module, spectral radius below one whatever
        its parameters (all modules active, and any leading set of them),
        random start on the ring ``0.9 <= |lambda| <= 0.999`` (see
        ``docs/memory.md``). ``'orthogonal'`` is not offered: an orthogonal
        block-triangular matrix is block diagonal (no module could read the
        slower ones); use ``orthogonality_penalty`` for a soft constraint.
    orthogonality_penalty : float, default=0.0
        ``lambda`` of the soft orthogonality term
        ``lambda * ||W_mm^T W_mm - I||_F^2`` on the masked memory matrix.
    norm_penalty : float, default=0.0
        ``beta`` of the norm stabilizer
        ``beta * mean_t (||m_t|| - ||m_{t-1}||)^2`` over valid steps.
    truncate_gradient : bool, default=False
        Stop the gradient from ``h_t`` to ``m_{t-1}`` (the memory is then
        trained only through its own recurrence and the output).
    init_radius : float or None, default=0.95
        Stable initialization: ``W_mm`` and ``W_mh`` are scaled by one factor
        so that the linearized memory map with all modules active,
        ``W_mm + W_hm W_mh``, has at most this spectral radius (see
        :func:`sklmn.nn._base.stabilize_memory_`). None keeps the raw draw.
    bidirectional : bool, default=False
        Add a reverse direction, a second multi-scale LMN with the same
        settings (:attr:`reverse`) that reads each sequence's valid part
        backwards, its clock starting at the last valid step; the outputs
        (and the states) are concatenated ``[forward, reverse]``, so
        ``output_size`` doubles. Padding never changes the outputs.
    device : torch.device, optional
        Device of the parameters.
    dtype : torch.dtype, optional
        Floating point type of the parameters.
    ring : tuple (r_min, r_max, max_angle) or None, default=None
        Random start of a ``'schur'`` memory (ignored otherwise): every
        module's eigenvalue moduli uniform on the ring
        ``r_min <= |lambda| <= r_max`` (their squares uniform), angles
        uniform in ``[0, max_angle]``, the rows of ``W_hm`` scaled by
        ``sqrt(1 - |lambda|^2)``. None: ``(0.9, 0.999, pi / 10)`` (see
        ``docs/memory.md``, "Training from scratch").
    feedback : bool, default=True
        Whether the hidden units read the memory (``W_mh``). False:
        ``weight_mh`` is a buffer of zeros that no training step moves, so
        the linearized memory map ``W_mm + W_hm D W_mh`` is ``W_mm`` for
        every ``D`` (see ``docs/memory.md``, "The feedback bound").

    Attributes
    ----------
    weight_xh : Parameter of shape (hidden_size, input_size)
    weight_mh : Parameter of shape (hidden_size, total_memory_size)
        A buffer of zeros when ``feedback=False``.
    bias_h : Parameter of shape (hidden_size,)
    weight_hm : Parameter of shape (total_memory_size, hidden_size)
    weight_mm : Parameter of shape (total_memory_size,) * 2
        Raw memory matrix; only its block upper triangle is used. For
        ``'schur'`` the dense matrix computed from :attr:`memory`
        (read-only: set it with :meth:`set_memory_` or :meth:`set_module_`).
    memory : SchurMemory
        Only for ``memory_matrix='schur'``: the parameters of ``W_mm``.
    memory_basis : Tensor of shape (total_memory_size,) * 2
        Only for ``memory_matrix='schur'``: the orthogonal, block diagonal
        ``Q`` of the memory coordinates (``m = Q m'``) relative to the
        weights last given to :meth:`set_memory_`, :meth:`set_module_` and
        the LAES starts (identity at construction).
    memory_mask : Tensor
        0/1 block upper-triangular mask (buffer).
    memory_normalization : Module or None
        Spectral-radius normalization of the masked matrix (with its
        ``latched`` buffer) for ``memory_matrix='spectral'``.
    periods : tuple of int
        Update period of every module, ``(1, 2, ..., 2**(g-1))``.
    output_size : int
        ``g * N_m`` (memory) or ``N_h`` (hidden), times 2 if bidirectional.
    reverse : MultiScaleLMN or None
        The reverse direction (unidirectional, same settings) when
        ``bidirectional``; the parameters above are the forward direction's.
    num_directions : int
        2 if bidirectional, else 1.

    Notes
    -----
    The state is a tuple ``(h, m, t)``: last hidden state ``(N, N_h)``,
    memory ``(N, g * N_m)`` and the int64 step counter ``(N,)`` (the index of
    the next step of each sequence), so that ``step`` and a ``forward`` that
    continues from a state keep the clock; a tuple ``(h, m)`` means ``t = 0``.
    With variable lengths the batch is processed sorted by length, so finished
    sequences cost nothing and carry their state unchanged (a linear memory
    left running on padding could overflow).

    :meth:`grow_` appends modules in place (incremental training, Carta et al. 2021 Alg.
    2); it replaces the Parameters, so optimizers must be rebuilt afterwards.

    With ``bidirectional=True`` the state concatenates the two directions'
    ``h`` ``(N, 2 N_h)`` and ``m`` ``(N, 2 g N_m)``; the reverse direction's
    final state is the one after reading the whole sequence backwards (as in
    :class:`torch.nn.RNN`). Every sequence is read from its first step, so a
    given state must have a zero step counter, and :meth:`step` is not
    available (the reverse direction needs the whole sequence). Both
    directions grow together.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import MultiScaleLMN
    >>> _ = torch.manual_seed(0)
    >>> net = MultiScaleLMN(3, hidden_size=8, memory_size=4, n_modules=3)
    >>> net.periods, net.output_size
    ((1, 2, 4), 12)
    >>> out, (h, m, t) = net(torch.randn(2, 5, 3), lengths=torch.tensor([5, 3]))
    >>> out.shape, m.shape, t.tolist()
    (torch.Size([2, 5, 12]), torch.Size([2, 12]), [5, 3])
    >>> net.grow_()
    [slice(12, 16, None)]
    >>> net.n_modules, net.output_size
    (4, 16)
    >>> bi = MultiScaleLMN(3, 8, 4, 2, bidirectional=True)
    >>> out, (h, m, t) = bi(torch.randn(2, 5, 3), lengths=[5, 3])
    >>> out.shape, h.shape, m.shape
    (torch.Size([2, 5, 16]), torch.Size([2, 16]), torch.Size([2, 16]))
    """

    #: modules pickled before the option existed read their memory
    feedback: bool = True

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        memory_size: int,
        n_modules: int,
        *,
        output: str = "memory",
        memory_matrix: str = "free",
        orthogonality_penalty: float = 0.0,
        norm_penalty: float = 0.0,
        truncate_gradient: bool = False,
        init_radius: float | None = DEFAULT_INIT_RADIUS,
        bidirectional: bool = False,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        ring: tuple | None = None,
        feedback: bool = True,
    ) -> None:
        super().__init__()
        self.init_radius = check_init_radius(init_radius)
        self.ring = check_ring(ring)
        self.feedback = check_bool("feedback", feedback)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.n_modules = check_positive_int("n_modules", n_modules)
        self.memory_size = check_module_sizes(memory_size, self.n_modules)
        self.output = check_choice("output", output, ("memory", "hidden"))
        check_feedback_output(self.feedback, self.output)
        self.memory_matrix = check_choice(
            "memory_matrix", memory_matrix, ("free", "spectral", "schur")
        )
        self.orthogonality_penalty = check_nonnegative_float(
            "orthogonality_penalty", orthogonality_penalty
        )
        self.norm_penalty = check_nonnegative_float("norm_penalty", norm_penalty)
        self.truncate_gradient = check_bool("truncate_gradient", truncate_gradient)
        factory = {"device": device, "dtype": dtype}
        H, M = self.hidden_size, self.total_memory_size
        self.weight_xh = nn.Parameter(torch.empty(H, self.input_size, **factory))
        add_feedback(self, torch.empty(H, M, **factory))
        self.bias_h = nn.Parameter(torch.empty(H, **factory))
        self.weight_hm = nn.Parameter(torch.empty(M, H, **factory))
        if self.memory_matrix == "schur":
            self._add_schur_memory(M, factory)
        else:
            self.weight_mm = nn.Parameter(torch.empty(M, M, **factory))
        self.register_buffer(
            "memory_mask",
            block_upper_mask(
                self.n_modules,
                self.memory_size,
                device=self.weight_xh.device,
                dtype=self.weight_xh.dtype,
            ),
            persistent=False,
        )
        if self.memory_matrix == "spectral":
            # Normalizes the *masked* matrix, so the masked blocks keep a zero
            # gradient (the eigenvector gradient of rho is not triangular).
            self.memory_normalization = SpectralRadiusNormalization(
                eps=1e-3, latch=True
            )
        else:
            self.memory_normalization = None
        self.reset_parameters()
        # The reverse direction: the same module, drawn after the forward one
        # (a unidirectional network keeps its random stream).
        self.reverse = None
        if self.bidirectional:
            self.reverse = MultiScaleLMN(
                input_size,
                hidden_size,
                memory_size,
                n_modules,
                output=output,
                memory_matrix=memory_matrix,
                orthogonality_penalty=orthogonality_penalty,
                norm_penalty=norm_penalty,
                truncate_gradient=truncate_gradient,
                init_radius=init_radius,
                device=device,
                dtype=dtype,
                ring=self.ring,
                feedback=self.feedback,
            )

    # ------------------------------------------------------------------ #
    @property
    def periods(self) -> tuple[int, ...]:
        """Update period of every module, fastest first."""
        return default_periods(self.n_modules)

    @property
    def memory_sizes(self) -> tuple[int, ...]:
        """Memory units of every module, fastest first.

        Examples
        --------
        >>> MultiScaleLMN(2, 3, (4, 2), 2).memory_sizes
        (4, 2)
        """
        return module_sizes(self.memory_size, self.n_modules)

    @property
    def total_memory_size(self) -> int:
        """Number of memory units of all modules (``n_modules * memory_size``
        for modules of one size)."""
        return sum(self.memory_sizes)

    def _prefix_units(self, counts: list[int]) -> list[int]:
        """Memory units of the first ``c`` modules, for every ``c`` in
        ``counts`` (the active prefix of each step)."""
        stops = np.cumsum((0, *self.memory_sizes)).tolist()
        return [stops[c] for c in counts]

    def _unit_modules(self, device) -> Tensor:
        """The module index of every memory unit."""
        return module_of_units(self.n_modules, self.memory_size, device=device)

    @property
    def output_size(self) -> int:  # type: ignore[override]
        """Features of the output: ``g * N_m`` (memory) or ``N_h`` (hidden),
        times 2 if bidirectional."""
        per = self.total_memory_size if self.output == "memory" else self.hidden_size
        return per * self.num_directions

    def module_slice(self, k: int) -> slice:
        """Memory coordinates of module ``k`` (0-based, fastest first).

        Parameters
        ----------
        k : int
            Module index in ``0 .. n_modules - 1``.

        Returns
        -------
        slice
            Rows of ``weight_hm`` / ``weight_mm`` (and columns of
            ``weight_mh`` / ``weight_mm``) that belong to module ``k``.

        Examples
        --------
        >>> MultiScaleLMN(2, 3, 4, 3).module_slice(1)
        slice(4, 8, None)
        >>> MultiScaleLMN(2, 3, (4, 2, 2), 3).module_slice(2)
        slice(6, 8, None)
        """
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < self.n_modules:
            raise ValueError(
                f"module index must be an int in 0..{self.n_modules - 1}, got {k!r}"
            )
        sizes = self.memory_sizes
        start = sum(sizes[:k])
        return slice(start, start + sizes[k])

    def reset_parameters(self) -> None:
        """Re-initialize all parameters.

        ``W_xh``, ``W_mh``, ``W_hm`` uniform in ``±1/sqrt(fan_in)`` (as
        :class:`torch.nn.RNN`); ``W_mm`` block diagonal with random orthogonal
        diagonal blocks (so it is orthogonal, like the LMN's, Carta et al. 2020b) and
        zero off-diagonal blocks; bias zero. Then ``W_mm`` and ``W_mh`` are
        scaled so that the linearized memory map (all modules active) has
        spectral radius at most ``init_radius``. With ``'schur'`` the
        orthogonal draw only sets that factor of ``W_mh``; the memory
        matrix then starts on the ring (see ``docs/memory.md``) and the
        rows of ``W_hm`` are scaled by ``sqrt(1 - |lambda|^2)``. With
        ``'spectral'`` the latch rule restarts (the normalization is off
        again until a training forward finds a spectral radius above one).
        Both directions when bidirectional.
        """
        with torch.no_grad():
            for weight in (self.weight_xh, self.weight_mh, self.weight_hm):
                bound = 1.0 / math.sqrt(weight.shape[1])
                weight.uniform_(-bound, bound)
            if not self.feedback:  # drawn all the same: one random stream
                self.weight_mh.zero_()
            M = self.total_memory_size
            q = self.weight_hm.new_zeros(M, M)
            for k in range(self.n_modules):
                rows = self.module_slice(k)
                nn.init.orthogonal_(q[rows, rows])
            self.bias_h.zero_()
            if self.init_radius is not None:
                stabilize_memory_(q, self.weight_hm, self.weight_mh, self.init_radius)
            if self.memory_matrix == "schur":
                self._reset_schur_memory_()
            else:
                self.weight_mm.copy_(q)
            normalization = getattr(self, "memory_normalization", None)
            if normalization is not None:  # 'spectral': the latch reopens
                normalization.right_inverse(self.weight_mm)
        if getattr(self, "reverse", None) is not None:
            self.reverse.reset_parameters()

    def extra_repr(self) -> str:
        s = (
            f"{self.input_size}, {self.hidden_size}, memory_size={self.memory_size}, "
            f"n_modules={self.n_modules}"
        )
        if self.output != "memory":
            s += f", output={self.output!r}"
        if self.memory_matrix != "free":
            s += f", memory_matrix={self.memory_matrix!r}"
        if self.truncate_gradient:
            s += ", truncate_gradient=True"
        if self.bidirectional:
            s += ", bidirectional=True"
        if not self.feedback:
            s += ", feedback=False"
        return s

    def output_basis(self) -> Tensor | None:
        """The turn of the output back to the coordinates of the memory
        matrices the modules were set to (:func:`memory_output_basis`): the
        block-diagonal ``memory_basis`` of the directions for a ``'schur'``
        memory output, None otherwise (see :meth:`LMN.output_basis`).

        Returns
        -------
        basis : Tensor of shape (output_size, output_size) or None

        Examples
        --------
        >>> from sklmn.nn import MultiScaleLMN
        >>> net = MultiScaleLMN(2, 3, 2, n_modules=2, memory_matrix="schur")
        >>> net.output_basis().shape
        torch.Size([4, 4])
        """
        if self.output != "memory":
            return None
        reverse = getattr(self, "reverse", None)  # modules saved before
        directions = [self] if reverse is None else [self, reverse]
        return memory_output_basis(directions)

    def masked_weight_mm(self) -> Tensor:
        """The effective block upper-triangular memory matrix.

        ``weight_mm * memory_mask``, divided by its spectral radius when
        ``memory_matrix='spectral'`` (and the latch is on); for ``'schur'``
        the dense matrix of :attr:`memory` (block upper-triangular by
        construction).
        """
        if self.memory_matrix == "schur":
            return self.memory()
        W = self.weight_mm * self.memory_mask
        if self.memory_normalization is not None:
            W = self.memory_normalization(W)
        return W

    # ------------------------------------------------------------------ #
    def _check_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        if state is None:
            h = torch.zeros(n, self.hidden_size, device=like.device, dtype=like.dtype)
            m = torch.zeros(
                n, self.total_memory_size, device=like.device, dtype=like.dtype
            )
            return h, m, torch.zeros(n, dtype=torch.int64, device=like.device)
        if not isinstance(state, tuple | list) or len(state) not in (2, 3):
            raise ValueError(
                f"state must be a tuple (h, m, t) or (h, m), got {state!r:.60}"
            )
        h = check_state_tensor(state[0], (n, self.hidden_size), like, "state h")
        m = check_state_tensor(state[1], (n, self.total_memory_size), like, "state m")
        t = check_step_counter(state[2] if len(state) == 3 else 0, n, like.device)
        return h, m, t

    def _split_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[tuple | None, tuple | None]:
        """Per-direction initial states ``(h, m)`` of a bidirectional network."""
        if state is None:
            return None, None
        if not isinstance(state, tuple | list) or len(state) not in (2, 3):
            raise ValueError(
                f"state must be a tuple (h, m, t) or (h, m), got {state!r:.60}"
            )
        H, M = self.hidden_size, self.total_memory_size
        h = check_state_tensor(state[0], (n, 2 * H), like, "state h")
        m = check_state_tensor(state[1], (n, 2 * M), like, "state m")
        if len(state) == 3:
            check_bidirectional_counter(state[2], n, like.device, "MultiScaleLMN")
        return (h[:, :H], m[:, :M]), (h[:, H:], m[:, M:])

    def _penalty(
        self, W_mm: Tensor, m0: Tensor, m_seq: Tensor, lengths: Tensor | None
    ) -> Tensor | None:
        """Soft orthogonality and norm stabilizer (Carta et al. 2020b §2.1), or None."""
        total = None
        if self.orthogonality_penalty > 0:
            total = orthogonality_penalty(W_mm, self.orthogonality_penalty)
        if self.norm_penalty > 0:
            term = norm_stabilizer_penalty(
                m_seq, lengths, initial_state=m0, scale=self.norm_penalty
            )
            total = term if total is None else total + term
        return total

    def forward_states(
        self,
        x: Tensor,
        lengths: Tensor | Sequence[int] | None = None,
        state: tuple | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the recurrence and return both state sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
        lengths : Tensor of shape (N,), optional
        state : tuple (h, m, t), optional
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (see
            :meth:`forward`).

        Returns
        -------
        h_seq : Tensor of shape (N, T, hidden_size * num_directions)
            Hidden states (padded steps are zero). Incremental training fits
            the new module's LAES on them, subsampled with the new module's
            period at phase 0 (steps ``0, p, 2p, ...``; for the reverse
            direction, of the sequences read backwards).
        m_seq : Tensor of shape (N, T, total_memory_size * num_directions)
            Memory states (padded steps are zero).
        state : tuple (h, m, t)
            Final state at each sequence's last valid step (the reverse
            direction's after reading the whole sequence backwards).
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: the regularization term.

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 2)
        >>> h_seq, m_seq, _ = net.forward_states(torch.zeros(1, 4, 2))
        >>> h_seq.shape, m_seq.shape
        (torch.Size([1, 4, 3]), torch.Size([1, 4, 4]))
        """
        h_seq, m_seq, final, penalty = self._forward_states(x, lengths, state)
        self._last_penalty = penalty  # for the deprecated penalty() only
        if not return_penalty:
            return h_seq, m_seq, final
        if penalty is None:
            penalty = self._zero_scalar()
        return h_seq, m_seq, final, penalty

    def _forward_states(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, Tensor, tuple[Tensor, Tensor, Tensor], Tensor | None]:
        """:meth:`forward_states` and the penalty (None: no penalty)."""
        if self.reverse is None:
            return self._forward_states_one(x, lengths, state)
        lengths, _ = check_input(x, lengths, self.input_size)
        state_f, state_r = self._split_state(state, x.shape[0], x)
        h_f, m_f, final_f, penalty_f = self._forward_states_one(x, lengths, state_f)
        # The reverse direction runs forwards on the reversed valid parts
        # (padding stays in place, so it never reaches the outputs); its
        # outputs are reversed back to the input's time order.
        h_r, m_r, final_r, penalty_r = self.reverse._forward_states(
            reverse_padded(x, lengths), lengths, state_r
        )
        if penalty_f is None or penalty_r is None:
            penalty = penalty_r if penalty_f is None else penalty_f
        else:
            penalty = penalty_f + penalty_r
        h_seq = torch.cat([h_f, reverse_padded(h_r, lengths)], dim=2)
        m_seq = torch.cat([m_f, reverse_padded(m_r, lengths)], dim=2)
        final = (
            torch.cat([final_f[0], final_r[0]], dim=1),
            torch.cat([final_f[1], final_r[1]], dim=1),
            final_f[2],
        )
        return h_seq, m_seq, final, penalty

    def _forward_states_one(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, Tensor, tuple[Tensor, Tensor, Tensor], Tensor | None]:
        """:meth:`_forward_states` of the forward direction alone."""
        lengths, T = check_input(x, lengths, self.input_size)
        N = x.shape[0]
        _, m0, t0 = self._check_state(state, N, x)
        W_mm = self.masked_weight_mm()
        # Padded inputs are zeroed so that NaN padding cannot leak into the
        # gradients (0 * NaN) of the input weights.
        x = zero_padded(x, lengths)
        start = uniform_start(t0)
        if start is not None:
            # Shared clock: sort the batch by decreasing length so that step t
            # only updates the prefix of sequences still running (finished
            # ones carry their state, as packed sequences do).
            batch = SortedBatch(lengths, T, x.device)
            # Inputs projected once for all steps, time-major (T, N, H).
            xp = F.linear(batch.time_major(x), self.weight_xh, self.bias_h)
            hs, ms = self._run_prefix(
                xp, batch.sort(m0), W_mm, start, batch.batch_sizes
            )
            # unsort along the (contiguous) batch axis
            hs, ms = batch.unsort(hs, dim=1), batch.unsort(ms, dim=1)
            h_seq, m_seq = hs.transpose(0, 1), ms.transpose(0, 1)
        else:
            # Sequences at different phases: per-sequence masks of the active
            # units (clock and validity), full update then selection.
            steps = t0.unsqueeze(1) + torch.arange(T, device=t0.device)
            active = active_modules(self.periods, steps)  # (N, T, g)
            if lengths is not None:
                valid = mask_from_lengths(lengths, T, device=active.device)
                active = active & valid.unsqueeze(-1)
            active = active[..., self._unit_modules(active.device)]
            xp = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h)
            hs, ms = self._run_masked(xp, m0, W_mm, active.transpose(0, 1))
            h_seq = torch.stack(hs, dim=1)
            m_seq = torch.stack(ms, dim=1)
        t_end = t0 + (T if lengths is None else lengths.to(t0.device))
        final = (gather_last(h_seq, lengths), gather_last(m_seq, lengths), t_end)
        penalty = self._penalty(W_mm, m0, m_seq, lengths)
        return zero_padded(h_seq, lengths), zero_padded(m_seq, lengths), final, penalty

    def _run_prefix(
        self,
        xp: Tensor,
        m: Tensor,
        W_mm: Tensor,
        start: int,
        batch_sizes: list[int] | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Recurrence with a clock shared by the batch (eq. 9-10).

        ``xp`` (T, N, H) are the projected inputs of a batch sorted by
        decreasing length; ``batch_sizes[t]`` sequences are still running at
        step ``t`` (None: all). Returns time-major ``hs`` (T, N, H) (zero for
        finished sequences) and ``ms`` (T, N, M) (finished sequences carry
        their state).
        """
        counts = active_prefix_counts(self.periods, start, xp.shape[0])
        units = self._prefix_units(counts)
        return multiscale_scan(
            xp,
            m,
            self.weight_mh if self.feedback else None,  # None: no feedback
            self.weight_hm,
            W_mm,
            units,
            batch_sizes,
            self.truncate_gradient,
        )

    def _cell_masked(
        self, xp_t: Tensor, m: Tensor, W_mm: Tensor, active: Tensor
    ) -> tuple[Tensor, Tensor]:
        """One step with a per-sequence set of active memory units."""
        m_in = m.detach() if self.truncate_gradient else m
        h = torch.tanh(torch.addmm(xp_t, m_in, self.weight_mh.T))
        m_new = torch.addmm(m @ W_mm.T, h, self.weight_hm.T)
        return h, torch.where(active, m_new, m)

    def _run_masked(
        self, xp: Tensor, m: Tensor, W_mm: Tensor, active: Tensor
    ) -> tuple[list[Tensor], list[Tensor]]:
        """Recurrence with a per-sequence clock (sequences at different phases)."""
        hs: list[Tensor] = []
        ms: list[Tensor] = []
        xs = xp.unbind(0)  # per-step views with one backward for all steps
        for t in range(xp.shape[0]):
            h, m = self._cell_masked(xs[t], m, W_mm, active[t])
            hs.append(h)
            ms.append(m)
        return hs, ms

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | Sequence[int] | None = None,
        state: tuple | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the MS-LMN over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
            Batch-first input.
        lengths : Tensor of shape (N,), optional
            Valid lengths in ``1..T``; padded steps change nothing and their
            output is zero.
        state : tuple (h, m, t), optional
            Initial state (default: zeros and ``t = 0``).
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass
            (``orthogonality_penalty`` and ``norm_penalty``; both directions
            summed when bidirectional), to add to the training loss.

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
        state : tuple (h, m, t)
            Final state at each sequence's last valid step.
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: the penalty, differentiable
            w.r.t. the parameters (zero when none is configured).

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 2, orthogonality_penalty=0.1)
        >>> out, state, penalty = net(torch.ones(1, 4, 2), return_penalty=True)
        >>> out.shape, penalty.requires_grad
        (torch.Size([1, 4, 4]), True)
        """
        h_seq, m_seq, final, penalty = self._forward_states(x, lengths, state)
        output = m_seq if self.output == "memory" else h_seq
        return self._forward_result(output, final, penalty, return_penalty)

    def step(
        self, x_t: Tensor, state: tuple | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
        """One time step; iterating it over ``t`` equals :meth:`forward`.

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : tuple (h, m, t), optional
            The step counter ``t`` selects the active modules per sequence.

        Returns
        -------
        y_t : Tensor of shape (N, output_size)
        state : tuple (h, m, t + 1)

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 2)
        >>> y, state = net.step(torch.ones(4, 2))
        >>> y.shape, state[2].tolist()
        (torch.Size([4, 4]), [1, 1, 1, 1])
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional MultiScaleLMN: the "
                "reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        _, m, t = self._check_state(state, x_t.shape[0], x_t)
        active = active_modules(self.periods, t)[:, self._unit_modules(t.device)]
        xp_t = F.linear(x_t, self.weight_xh, self.bias_h)
        h, m = self._cell_masked(xp_t, m, self.masked_weight_mm(), active)
        return (m if self.output == "memory" else h), (h, m, t + 1)

    # ------------------------------------------------------------------ #
    @torch.no_grad()
    def grow_(self, n_new: int = 1, memory_size: int | None = None) -> list[slice]:
        """Append ``n_new`` slower modules in place, with all new weights zero.

        The new module ``g`` (0-based) has period ``2**g``. Its rows of
        ``weight_hm`` and ``weight_mm`` and its columns of ``weight_mh`` and
        ``weight_mm`` are zero, so its state stays zero and the function
        computed on the old memory coordinates (and the hidden states) does
        not change; the output gains ``n_new * N`` zero features (``N`` the
        new modules' size).
        With ``memory_matrix='schur'`` the new coordinates are ``1 x 1``
        blocks of eigenvalue zero (the dense matrix is zero there too) and
        the old modules keep their parameters and coordinates.
        Incremental training (Carta et al. 2021 Alg. 2) then sets the new module's
        blocks with :meth:`set_module_` from a LAES ``(A, B)``.

        The Parameters are replaced by larger ones: rebuild the optimizer
        (and any readout reading the memory) after growing. A bidirectional
        network grows both directions; its output is then ``[forward
        modules, reverse modules]``, so the reverse direction's old
        coordinates move by ``n_new * N``.

        Parameters
        ----------
        n_new : int, default=1
            Number of modules to add.
        memory_size : int, optional
            Memory units ``N`` of each new module (default: those of the
            last module).

        Returns
        -------
        slices : list of slice
            Memory coordinates of the new modules (see :meth:`module_slice`),
            in each direction's own memory.

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 1)
        >>> net.grow_(2), net.periods
        ([slice(2, 4, None), slice(4, 6, None)], (1, 2, 4))
        >>> net.grow_(memory_size=1), net.memory_sizes
        ([slice(6, 7, None)], (2, 2, 2, 1))
        """
        n_new = check_positive_int("n_new", n_new)
        sizes = self.memory_sizes
        N = sizes[-1] if memory_size is None else memory_size
        N = check_positive_int("memory_size", N)
        H, M_old = self.hidden_size, self.total_memory_size
        M = M_old + n_new * N

        def grown(old: Tensor, shape: tuple[int, int]) -> nn.Parameter:
            new = old.new_zeros(shape)
            new[: old.shape[0], : old.shape[1]] = old
            return nn.Parameter(new, requires_grad=old.requires_grad)

        g_old = self.n_modules
        if self.feedback:
            self.weight_mh = grown(self.weight_mh, (H, M))
        else:  # the zero buffer, grown
            self.weight_mh = self.weight_mh.new_zeros(H, M)
        self.weight_hm = grown(self.weight_hm, (M, H))
        if self.memory_matrix == "schur":
            self._grow_schur_(n_new, N)
        else:
            self.weight_mm = grown(self.weight_mm, (M, M))
        self.n_modules = g_old + n_new
        self.memory_size = check_module_sizes((*sizes, *[N] * n_new), self.n_modules)
        self.memory_mask = block_upper_mask(
            self.n_modules,
            self.memory_size,
            device=self.weight_xh.device,
            dtype=self.weight_xh.dtype,
        )
        if self.reverse is not None:
            self.reverse.grow_(n_new, N)
        return [self.module_slice(k) for k in range(g_old, self.n_modules)]

    @torch.no_grad()
    def set_module_(
        self,
        k: int,
        *,
        weight_hm: Tensor | np.ndarray | None = None,
        weight_mm: Tensor | np.ndarray | None = None,
        direction: int = 0,
    ) -> None:
        """Overwrite module ``k``'s encoder block and diagonal memory block.

        Sets ``weight_hm[rows_k] = weight_hm`` (``(N_k, hidden_size)``, the LAES
        ``A``) and ``weight_mm[rows_k, rows_k] = weight_mm`` (``(N_k, N_k)``,
        the LAES ``B``; ``N_k`` module ``k``'s size), as in Carta et al. 2021
        Alg. 2. With ``memory_matrix='spectral'`` setting ``weight_mm`` restarts
        the latch rule, so the block is used as is while the spectral radius of
        the masked matrix stays <= 1. With ``'schur'``, ``weight_mm`` (and
        ``weight_hm`` when given with it) are in the module's coordinates before
        the call; the block is held in real Schur form ``Q_k T_k Q_k^T`` and
        module ``k``'s coordinates turn by ``Q_k`` (its rows of ``weight_hm``,
        its columns of ``weight_mh``, its off-diagonal blocks and its block of
        ``memory_basis``), the other modules' coordinates unchanged; a reader of
        the memory outside the network multiplies its columns of module ``k`` by
        ``Q_k`` (the ``memory_basis`` block). Eigenvalues of modulus above the
        bound are scaled down to it.

        Parameters
        ----------
        k : int
            Module index (0-based).
        weight_hm : Tensor or ndarray of shape (N_k, hidden_size), optional
        weight_mm : Tensor or ndarray of shape (N_k, N_k), optional
        direction : {0, 1}, default=0
            0: the forward direction; 1: the reverse direction of a
            bidirectional network (:attr:`reverse`).

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 2)
        >>> net.set_module_(1, weight_mm=torch.eye(2))
        >>> net.weight_mm.detach()[2:, 2:]
        tensor([[1., 0.],
                [0., 1.]])
        """
        if isinstance(direction, bool) or direction not in (0, 1):
            raise ValueError(f"direction must be 0 or 1, got {direction!r}")
        if direction == 1:
            if self.reverse is None:
                raise ValueError(
                    "direction=1 needs a bidirectional MultiScaleLMN, got "
                    "bidirectional=False"
                )
            self.reverse.set_module_(k, weight_hm=weight_hm, weight_mm=weight_mm)
            return
        rows = self.module_slice(k)
        n_m = self.memory_sizes[k]
        values = {}
        for name, value, shape in (
            ("weight_hm", weight_hm, (n_m, self.hidden_size)),
            ("weight_mm", weight_mm, (n_m, n_m)),
        ):
            if value is None:
                continue
            like = self.weight_hm
            # a Schur block is decomposed in float64
            dtype = torch.float64 if name == "weight_mm" else like.dtype
            value = torch.as_tensor(value).detach().to(like.device, dtype)
            if tuple(value.shape) != shape:
                raise ValueError(
                    f"{name} block of module {k} must have shape {shape}, "
                    f"got {tuple(value.shape)}"
                )
            values[name] = value
        if "weight_hm" in values:
            self.weight_hm[rows] = values["weight_hm"]
        if "weight_mm" in values:
            if self.memory_matrix == "schur":
                self._set_schur_module_(k, values["weight_mm"])
            else:
                self.weight_mm[rows, rows] = values["weight_mm"].to(self.weight_mm)
        if self.memory_normalization is not None and weight_mm is not None:
            # As for an assigned LMN weight: restart the latch rule
            # (Helfrich & Ye 2020 §4).
            self.memory_normalization.right_inverse(self.weight_mm)
