"""Multi-scale recurrent modules driven by a clock: MS-LMN and Clockwork RNN.

Both modules split their recurrent state into ``g`` modules (blocks of units)
ordered from fastest to slowest. Module ``k`` (0-based here, ``k + 1`` in the
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
    _check_init_radius,
    active_batch_sizes,
    check_bool,
    check_choice,
    check_input,
    check_nonnegative_float,
    check_positive_int,
    check_step_input,
    gather_last,
    mask_from_lengths,
    reverse_padded,
    sort_by_length,
    stabilize_memory_,
    zero_padded,
)
from ._penalties import norm_stabilizer_penalty, orthogonality_penalty
from .parametrizations import _SpectralRadiusNormalization

__all__ = ["ClockworkRNN", "MultiScaleLMN"]


# --------------------------------------------------------------------------- #
# Clock and block structure (shared by MultiScaleLMN and ClockworkRNN)
# --------------------------------------------------------------------------- #
def _default_periods(n_modules: int) -> tuple[int, ...]:
    """Periods ``1, 2, ..., 2**(g-1)`` (Carta et al. 2021 eq. 6: ``t mod 2^(k-1)``)."""
    return tuple(2**k for k in range(n_modules))


def _check_periods(periods: object, n_modules: int) -> tuple[int, ...]:
    """Validate strictly increasing positive integer periods, one per module."""
    if periods is None:
        return _default_periods(n_modules)
    try:
        values = tuple(periods)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"periods must be a sequence of {n_modules} positive ints, got {periods!r}"
        ) from None
    if len(values) != n_modules:
        raise ValueError(
            f"periods must have one entry per module (n_modules={n_modules}), "
            f"got {len(values)} in {periods!r}"
        )
    out = []
    for p in values:
        if isinstance(p, bool) or not isinstance(p, int | np.integer) or p < 1:
            raise ValueError(f"periods must be positive ints, got {periods!r}")
        out.append(int(p))
    if any(b <= a for a, b in zip(out, out[1:], strict=False)):
        raise ValueError(
            f"periods must be strictly increasing (fastest module first), "
            f"got {periods!r}"
        )
    return tuple(out)


def _is_nested(periods: Sequence[int]) -> bool:
    """Whether each period divides the next, so active modules form a prefix."""
    return all(b % a == 0 for a, b in zip(periods, periods[1:], strict=False))


def _active_modules(periods: Sequence[int], t: Tensor) -> Tensor:
    """Boolean ``(..., g)`` tensor: module ``k`` is updated at step ``t``."""
    p = torch.tensor(periods, dtype=torch.int64, device=t.device)
    return (t.unsqueeze(-1) % p) == 0


def _active_prefix_counts(
    periods: Sequence[int], t_start: int, n_steps: int
) -> list[int]:
    """Number of active modules at steps ``t_start .. t_start + n_steps - 1``.

    Only meaningful for nested periods, where the active modules are the
    first ``count`` ones (Carta et al. 2021 eq. 9: ``i_max^t``).
    """
    t = np.arange(t_start, t_start + n_steps, dtype=np.int64)
    return (t[:, None] % np.asarray(periods, dtype=np.int64) == 0).sum(1).tolist()


def _block_upper_mask(
    n_modules: int,
    block_size: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> Tensor:
    """0/1 mask of the block upper-triangular recurrent matrix.

    Entry ``[i, j]`` is 1 when the module of row ``i`` reads the module of
    column ``j``, i.e. when ``module(j) >= module(i)`` (a module reads itself
    and the slower modules).
    """
    module = torch.arange(n_modules * block_size, device=device) // block_size
    return (module.unsqueeze(0) >= module.unsqueeze(1)).to(dtype=dtype)


def _state_counter(
    t: object, n: int, device: torch.device, name: str = "state"
) -> Tensor:
    """Validate the step counter of a clocked state (int64 ``(N,)``, >= 0)."""
    if isinstance(t, int) and not isinstance(t, bool):
        t = torch.full((n,), t, dtype=torch.int64)
    if not isinstance(t, Tensor) or t.is_floating_point() or t.shape != (n,):
        raise ValueError(
            f"{name} step counter must be an int or an int64 tensor of shape "
            f"({n},), got {t!r}"
        )
    if n > 0 and int(t.min()) < 0:
        raise ValueError(f"{name} step counter must be >= 0, got {t!r}")
    return t.to(device=device, dtype=torch.int64)


def _check_tensor_state(
    value: object, shape: tuple[int, ...], like: Tensor, name: str
) -> Tensor:
    if not isinstance(value, Tensor) or tuple(value.shape) != shape:
        got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
        raise ValueError(f"{name} must be a tensor of shape {shape}, got {got}")
    return value.to(device=like.device, dtype=like.dtype)


def _uniform_start(t0: Tensor) -> int | None:
    """The common start step of a batch, or None when sequences differ."""
    if t0.numel() == 0:
        return 0
    lo, hi = int(t0.min()), int(t0.max())
    return lo if lo == hi else None


# --------------------------------------------------------------------------- #
# The MS-LMN recurrence kernel (shared clock, sorted batch)
# --------------------------------------------------------------------------- #
class _MultiScaleScan(torch.autograd.Function):
    """MS-LMN recurrence, active-prefix update (Carta et al. 2021 and 2020a, eq. 9-10).

    Inputs: ``xp`` (T, N, H) = W_xh x_t + b_h of a batch sorted by decreasing
    length; ``m0`` (N, M); ``weight_mh`` (H, M); ``weight_hm`` (M, H); the
    effective (masked) ``weight_mm`` (M, M); ``units[t]`` = number of active
    memory units at step t (a prefix, eq. 9); ``batch_sizes[t]`` = sequences
    still running (None: all); ``truncate``: cut dh_t/dm_{t-1} (Carta et al. 2020b §2).

    Outputs ``hs`` (T, N, H) (zero rows for finished sequences) and ``ms``
    (T, N, M): inactive modules (eq. 10) and finished sequences carry their
    memory. The backward is a hand-written BPTT: per step one product with
    ``[W_mh; W_mm[:a]]``; the weight gradients are single products over all
    steps of the zero-padded step gradients ``G = [dL/dpre_h | dL/dm_new]``.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        xp: Tensor,
        m0: Tensor,
        weight_mh: Tensor,
        weight_hm: Tensor,
        weight_mm: Tensor,
        units: list[int],
        batch_sizes: list[int] | None,
        truncate: bool,
    ) -> tuple[Tensor, Tensor]:
        T, N, H = xp.shape
        M = m0.shape[1]
        # m_{t-1} is read by h_t (W_mh) and by the active memory rows
        # (W_mm[:a]): one product with the first H + a rows of w_read.
        w_read = torch.cat([weight_mh, weight_mm], dim=0)  # (H + M, M)
        hs = xp.new_zeros(T, N, H)
        # states[0] = m_0 and states[t + 1] = m_t: the backward reads m_{t-1}
        # for all steps as one contiguous block.
        states = xp.new_empty(T + 1, N, M)
        states[0] = m0
        for t in range(T):
            a = units[t]
            b = N if batch_sizes is None else batch_sizes[t]
            m_prev, m = states[t], states[t + 1]
            z = torch.mm(m_prev[:b], w_read[: H + a].t())  # (b, H + a)
            h = hs[t, :b]
            torch.add(xp[t, :b], z[:, :H], out=h)
            h.tanh_()
            torch.addmm(z[:, H:], h, weight_hm[:a].t(), out=m[:b, :a])
            if a < M:  # eq. 10: slower modules keep their state
                m[:b, a:] = m_prev[:b, a:]
            if b < N:  # finished sequences keep their state
                m[b:] = m_prev[b:]
        ctx.save_for_backward(hs, states, weight_mh, weight_hm, weight_mm)
        ctx.units = units
        ctx.batch_sizes = batch_sizes
        ctx.truncate = truncate
        return hs, states[1:]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx, g_hs: Tensor, g_ms: Tensor
    ) -> tuple[Tensor | None, ...]:
        hs, states, weight_mh, weight_hm, weight_mm = ctx.saved_tensors
        units, batch_sizes, truncate = ctx.units, ctx.batch_sizes, ctx.truncate
        T, N, H = hs.shape
        M = states.shape[2]
        w_read = torch.cat([weight_mh, weight_mm], dim=0)  # (H + M, M)
        # G[t, n] = [dL/dpre_t | dL/dm_new_t], zero where nothing was computed.
        G = hs.new_zeros(T, N, H + M)
        g_next = torch.zeros_like(states[0])  # dL/dm_t through m_{t+1}
        for t in range(T - 1, -1, -1):
            a = units[t]
            b = N if batch_sizes is None else batch_sizes[t]
            gm = g_ms[t] + g_next  # total dL/dm_t, a fresh tensor
            g_new = G[t, :b, H : H + a]
            g_new.copy_(gm[:b, :a])
            # dL/dh_t = g_h + g_new W_hm[:a]; dL/dpre_t = dL/dh_t (1 - h_t^2)
            g_pre = G[t, :b, :H]
            torch.addmm(g_hs[t, :b], g_new, weight_hm[:a], out=g_pre)
            g_pre.mul_(1.0 - hs[t, :b] * hs[t, :b])
            # Carried units pass their gradient to m_{t-1} unchanged; the
            # recomputed ones reach m_{t-1} through [W_mh; W_mm[:a]].
            if truncate:
                read = torch.mm(g_new, weight_mm[:a])
            else:
                read = torch.mm(G[t, :b, : H + a], w_read[: H + a])
            gm[:b, :a] = read[:, :a]
            gm[:b, a:] += read[:, a:]
            g_next = gm
        G2 = G.reshape(T * N, H + M)
        g_read = G2.t() @ states[:-1].reshape(T * N, M)  # (H + M, M)
        g_hm = G2[:, H:].t() @ hs.reshape(T * N, H)  # (M, H)
        return (
            G[..., :H].contiguous(),
            g_next,
            g_read[:H],
            g_hm,
            g_read[H:],
            None,
            None,
            None,
        )


# --------------------------------------------------------------------------- #
# Multi-scale LMN
# --------------------------------------------------------------------------- #
class MultiScaleLMN(RecurrentModule):
    r"""Multi-scale Linear Memory Network (Carta et al. 2021 §3.2, 2020a §3).

    A tanh functional layer reads the input and all memory modules; the linear
    memory is split into ``n_modules`` modules of ``memory_size`` units, module
    ``k`` (0-based) being updated every ``2**k`` steps:

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
    memory_size : int
        Number of memory units *per module* ``N_m``.
    n_modules : int
        Number of memory modules ``g``.
    output : {'memory', 'hidden'}, default='memory'
        Output sequence: all memory modules concatenated (``g * N_m``
        features, LMN-m in Carta et al. 2021) or the hidden state (``N_h`` features).
    memory_matrix : {'free', 'spectral'}, default='free'
        ``'free'``: the masked matrix is used as is. ``'spectral'``: the
        masked matrix is divided by its spectral radius (+ 1e-3) with the
        latch rule of Helfrich & Ye 2020 §4 (as ``LMN(memory_matrix='spectral')``); the
        spectral radius of a block-triangular matrix is the largest one of its
        diagonal blocks. ``'orthogonal'`` is not offered: an orthogonal
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

    Attributes
    ----------
    weight_xh : Parameter of shape (hidden_size, input_size)
    weight_mh : Parameter of shape (hidden_size, n_modules * memory_size)
    bias_h : Parameter of shape (hidden_size,)
    weight_hm : Parameter of shape (n_modules * memory_size, hidden_size)
    weight_mm : Parameter of shape (n_modules * memory_size,) * 2
        Raw memory matrix; only its block upper triangle is used.
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
    ) -> None:
        super().__init__()
        self.init_radius = _check_init_radius(init_radius)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.memory_size = check_positive_int("memory_size", memory_size)
        self.n_modules = check_positive_int("n_modules", n_modules)
        self.output = check_choice("output", output, ("memory", "hidden"))
        self.memory_matrix = check_choice(
            "memory_matrix", memory_matrix, ("free", "spectral")
        )
        self.orthogonality_penalty = check_nonnegative_float(
            "orthogonality_penalty", orthogonality_penalty
        )
        self.norm_penalty = check_nonnegative_float("norm_penalty", norm_penalty)
        self.truncate_gradient = check_bool("truncate_gradient", truncate_gradient)
        factory = {"device": device, "dtype": dtype}
        H, M = self.hidden_size, self.n_modules * self.memory_size
        self.weight_xh = nn.Parameter(torch.empty(H, self.input_size, **factory))
        self.weight_mh = nn.Parameter(torch.empty(H, M, **factory))
        self.bias_h = nn.Parameter(torch.empty(H, **factory))
        self.weight_hm = nn.Parameter(torch.empty(M, H, **factory))
        self.weight_mm = nn.Parameter(torch.empty(M, M, **factory))
        self.register_buffer(
            "memory_mask",
            _block_upper_mask(
                self.n_modules,
                self.memory_size,
                device=self.weight_mm.device,
                dtype=self.weight_mm.dtype,
            ),
            persistent=False,
        )
        if self.memory_matrix == "spectral":
            # Normalizes the *masked* matrix, so the masked blocks keep a zero
            # gradient (the eigenvector gradient of rho is not triangular).
            self.memory_normalization = _SpectralRadiusNormalization(
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
            )

    # ------------------------------------------------------------------ #
    @property
    def periods(self) -> tuple[int, ...]:
        """Update period of every module, fastest first."""
        return _default_periods(self.n_modules)

    @property
    def total_memory_size(self) -> int:
        """Number of memory units of all modules, ``n_modules * memory_size``."""
        return self.n_modules * self.memory_size

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
        """
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < self.n_modules:
            raise ValueError(
                f"module index must be an int in 0..{self.n_modules - 1}, got {k!r}"
            )
        return slice(k * self.memory_size, (k + 1) * self.memory_size)

    def reset_parameters(self) -> None:
        """Re-initialize all parameters.

        ``W_xh``, ``W_mh``, ``W_hm`` uniform in ``±1/sqrt(fan_in)`` (as
        :class:`torch.nn.RNN`); ``W_mm`` block diagonal with random orthogonal
        diagonal blocks (so it is orthogonal, like the LMN's, Carta et al. 2020b) and
        zero off-diagonal blocks; bias zero. Then ``W_mm`` and ``W_mh`` are
        scaled so that the linearized memory map (all modules active) has
        spectral radius at most ``init_radius``. Both directions when
        bidirectional.
        """
        with torch.no_grad():
            for weight in (self.weight_xh, self.weight_mh, self.weight_hm):
                bound = 1.0 / math.sqrt(weight.shape[1])
                weight.uniform_(-bound, bound)
            self.weight_mm.zero_()
            for k in range(self.n_modules):
                rows = self.module_slice(k)
                nn.init.orthogonal_(self.weight_mm[rows, rows])
            self.bias_h.zero_()
            if self.init_radius is not None:
                stabilize_memory_(
                    self.weight_mm, self.weight_hm, self.weight_mh, self.init_radius
                )
        if getattr(self, "reverse", None) is not None:
            self.reverse.reset_parameters()

    def extra_repr(self) -> str:
        s = (
            f"{self.input_size}, {self.hidden_size}, memory_size={self.memory_size}, "
            f"n_modules={self.n_modules}"
        )
        if self.output != "memory":
            s += f", output={self.output!r}"
        if self.truncate_gradient:
            s += ", truncate_gradient=True"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def masked_weight_mm(self) -> Tensor:
        """The effective block upper-triangular memory matrix.

        ``weight_mm * memory_mask``, divided by its spectral radius when
        ``memory_matrix='spectral'`` (and the latch is on).
        """
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
        h = _check_tensor_state(state[0], (n, self.hidden_size), like, "state h")
        m = _check_tensor_state(state[1], (n, self.total_memory_size), like, "state m")
        t = _state_counter(state[2] if len(state) == 3 else 0, n, like.device)
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
        h = _check_tensor_state(state[0], (n, 2 * H), like, "state h")
        m = _check_tensor_state(state[1], (n, 2 * M), like, "state m")
        if len(state) == 3:
            t = _state_counter(state[2], n, like.device)
            if n > 0 and bool((t != 0).any()):
                raise ValueError(
                    "a bidirectional MultiScaleLMN reads every sequence from its "
                    "first step: the state step counter must be 0, got "
                    f"{t.tolist()!r:.60}"
                )
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
    ) -> tuple[Tensor, Tensor, tuple[Tensor, Tensor, Tensor]]:
        """Run the recurrence and return both state sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
        lengths : Tensor of shape (N,), optional
        state : tuple (h, m, t), optional

        Returns
        -------
        h_seq : Tensor of shape (N, T, hidden_size * num_directions)
            Hidden states (padded steps are zero). Incremental training fits
            the new module's LAES on them, subsampled with the new module's
            period at phase 0 (steps ``0, p, 2p, ...``; for the reverse
            direction, of the sequences read backwards).
        m_seq : Tensor of shape (N, T, n_modules * memory_size * num_directions)
            Memory states (padded steps are zero).
        state : tuple (h, m, t)
            Final state at each sequence's last valid step (the reverse
            direction's after reading the whole sequence backwards).

        Examples
        --------
        >>> net = MultiScaleLMN(2, 3, 2, 2)
        >>> h_seq, m_seq, _ = net.forward_states(torch.zeros(1, 4, 2))
        >>> h_seq.shape, m_seq.shape
        (torch.Size([1, 4, 3]), torch.Size([1, 4, 4]))
        """
        if self.reverse is None:
            return self._forward_states_one(x, lengths, state)
        lengths, _ = check_input(x, lengths, self.input_size)
        state_f, state_r = self._split_state(state, x.shape[0], x)
        h_f, m_f, final_f = self._forward_states_one(x, lengths, state_f)
        penalty_f = self._last_penalty
        # The reverse direction runs forwards on the reversed valid parts
        # (padding stays in place, so it never reaches the outputs); its
        # outputs are reversed back to the input's time order.
        h_r, m_r, final_r = self.reverse.forward_states(
            reverse_padded(x, lengths), lengths, state_r
        )
        penalty_r = self.reverse._last_penalty
        if penalty_f is None or penalty_r is None:
            self._last_penalty = penalty_r if penalty_f is None else penalty_f
        else:
            self._last_penalty = penalty_f + penalty_r
        h_seq = torch.cat([h_f, reverse_padded(h_r, lengths)], dim=2)
        m_seq = torch.cat([m_f, reverse_padded(m_r, lengths)], dim=2)
        final = (
            torch.cat([final_f[0], final_r[0]], dim=1),
            torch.cat([final_f[1], final_r[1]], dim=1),
            final_f[2],
        )
        return h_seq, m_seq, final

    def _forward_states_one(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, Tensor, tuple[Tensor, Tensor, Tensor]]:
        """:meth:`forward_states` of the forward direction alone."""
        lengths, T = check_input(x, lengths, self.input_size)
        N = x.shape[0]
        _, m0, t0 = self._check_state(state, N, x)
        W_mm = self.masked_weight_mm()
        # Padded inputs are zeroed so that NaN padding cannot leak into the
        # gradients (0 * NaN) of the input weights.
        x = zero_padded(x, lengths)
        start = _uniform_start(t0)
        if start is not None:
            # Shared clock: sort the batch by decreasing length so that step t
            # only updates the prefix of sequences still running (finished
            # ones carry their state, as packed sequences do).
            if lengths is None:
                batch_sizes, inverse = None, None
            else:
                sorted_lengths, order, inverse = sort_by_length(lengths)
                batch_sizes = active_batch_sizes(sorted_lengths, T)
                order = order.to(x.device)
                x, m0_run = x[order], m0[order]
            m_init = m0 if lengths is None else m0_run
            # Inputs projected once for all steps, time-major (T, N, H).
            xp = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h)
            hs, ms = self._run_prefix(xp, m_init, W_mm, start, batch_sizes)
            if inverse is not None:  # unsort along the (contiguous) batch axis
                inverse = inverse.to(x.device)
                hs, ms = hs[:, inverse], ms[:, inverse]
            h_seq, m_seq = hs.transpose(0, 1), ms.transpose(0, 1)
        else:
            # Sequences at different phases: per-sequence masks of the active
            # units (clock and validity), full update then selection.
            steps = t0.unsqueeze(1) + torch.arange(T, device=t0.device)
            active = _active_modules(self.periods, steps)  # (N, T, g)
            if lengths is not None:
                valid = mask_from_lengths(lengths, T, device=active.device)
                active = active & valid.unsqueeze(-1)
            active = active.repeat_interleave(self.memory_size, dim=2)
            xp = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h)
            hs, ms = self._run_masked(xp, m0, W_mm, active.transpose(0, 1))
            h_seq = torch.stack(hs, dim=1)
            m_seq = torch.stack(ms, dim=1)
        t_end = t0 + (T if lengths is None else lengths.to(t0.device))
        final = (gather_last(h_seq, lengths), gather_last(m_seq, lengths), t_end)
        self._last_penalty = self._penalty(W_mm, m0, m_seq, lengths)
        return zero_padded(h_seq, lengths), zero_padded(m_seq, lengths), final

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
        counts = _active_prefix_counts(self.periods, start, xp.shape[0])
        units = [c * self.memory_size for c in counts]
        return _MultiScaleScan.apply(
            xp.contiguous(),
            m,
            self.weight_mh,
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
    ) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
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

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
        state : tuple (h, m, t)
            Final state at each sequence's last valid step.
        """
        h_seq, m_seq, final = self.forward_states(x, lengths, state)
        return (m_seq if self.output == "memory" else h_seq), final

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
        active = _active_modules(self.periods, t).repeat_interleave(
            self.memory_size, dim=1
        )
        xp_t = F.linear(x_t, self.weight_xh, self.bias_h)
        h, m = self._cell_masked(xp_t, m, self.masked_weight_mm(), active)
        return (m if self.output == "memory" else h), (h, m, t + 1)

    # ------------------------------------------------------------------ #
    @torch.no_grad()
    def grow_(self, n_new: int = 1) -> list[slice]:
        """Append ``n_new`` slower modules in place, with all new weights zero.

        The new module ``g`` (0-based) has period ``2**g``. Its rows of
        ``weight_hm`` and ``weight_mm`` and its columns of ``weight_mh`` and
        ``weight_mm`` are zero, so its state stays zero and the function
        computed on the old memory coordinates (and the hidden states) does
        not change; the output gains ``n_new * memory_size`` zero features.
        Incremental training (Carta et al. 2021 Alg. 2) then sets the new module's
        blocks with :meth:`set_module_` from a LAES ``(A, B)``.

        The Parameters are replaced by larger ones: rebuild the optimizer
        (and any readout reading the memory) after growing. A bidirectional
        network grows both directions; its output is then ``[forward
        modules, reverse modules]``, so the reverse direction's old
        coordinates move by ``n_new * memory_size``.

        Parameters
        ----------
        n_new : int, default=1
            Number of modules to add.

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
        """
        n_new = check_positive_int("n_new", n_new)
        H, M_old = self.hidden_size, self.total_memory_size
        extra = n_new * self.memory_size
        M = M_old + extra

        def grown(old: Tensor, shape: tuple[int, int]) -> nn.Parameter:
            new = old.new_zeros(shape)
            new[: old.shape[0], : old.shape[1]] = old
            return nn.Parameter(new, requires_grad=old.requires_grad)

        g_old = self.n_modules
        self.weight_mh = grown(self.weight_mh, (H, M))
        self.weight_hm = grown(self.weight_hm, (M, H))
        self.weight_mm = grown(self.weight_mm, (M, M))
        self.n_modules = g_old + n_new
        self.memory_mask = _block_upper_mask(
            self.n_modules,
            self.memory_size,
            device=self.weight_mm.device,
            dtype=self.weight_mm.dtype,
        )
        if self.reverse is not None:
            self.reverse.grow_(n_new)
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

        Sets ``weight_hm[rows_k] = weight_hm`` (``(memory_size, hidden_size)``,
        the LAES ``A``) and ``weight_mm[rows_k, rows_k] = weight_mm``
        (``(memory_size, memory_size)``, the LAES ``B``), as in Carta et al. 2021 Alg.
        2. With ``memory_matrix='spectral'`` setting ``weight_mm`` restarts the
        latch rule, so the block is used as is while the spectral radius of
        the masked matrix stays <= 1.

        Parameters
        ----------
        k : int
            Module index (0-based).
        weight_hm : Tensor or ndarray of shape (memory_size, hidden_size), optional
        weight_mm : Tensor or ndarray of shape (memory_size, memory_size), optional
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
        n_m = self.memory_size
        for name, value, shape, cols in (
            ("weight_hm", weight_hm, (n_m, self.hidden_size), slice(None)),
            ("weight_mm", weight_mm, (n_m, n_m), rows),
        ):
            if value is None:
                continue
            param = getattr(self, name)
            value = torch.as_tensor(value, device=param.device, dtype=param.dtype)
            if tuple(value.shape) != shape:
                raise ValueError(
                    f"{name} block of module {k} must have shape {shape}, "
                    f"got {tuple(value.shape)}"
                )
            param[rows, cols] = value
        if self.memory_normalization is not None and weight_mm is not None:
            # As for an assigned LMN weight: restart the latch rule
            # (Helfrich & Ye 2020 §4).
            self.memory_normalization.right_inverse(self.weight_mm)


# --------------------------------------------------------------------------- #
# Clockwork RNN
# --------------------------------------------------------------------------- #
class ClockworkRNN(RecurrentModule):
    r"""Clockwork RNN (Koutník et al., 2014) with a tanh nonlinearity.

    The hidden state is split into ``n_modules`` modules of ``module_size``
    units; module ``k`` (0-based) has period ``periods[k]`` and is updated at
    steps ``t`` with ``t mod periods[k] = 0`` (``t`` from 0 at each
    sequence's start), otherwise it keeps its state:

    .. math::

        h_{k,t} = \tanh\Big(W^{xh}_k x_t + \sum_{i \ge k} W^{hh}_{k,i}
                  h_{i,t-1} + b_k\Big) \quad \text{if } t \bmod p_k = 0

    A module reads itself and the slower modules (block upper-triangular
    ``W^{hh}``, the same convention as :class:`MultiScaleLMN`). The output is
    the full hidden state.

    Parameters
    ----------
    input_size : int
        Number of input features.
    module_size : int
        Units per module; ``hidden_size = n_modules * module_size``.
    n_modules : int
        Number of modules.
    periods : sequence of int, optional
        Strictly increasing periods, fastest first (default ``2**k``). When
        each period divides the next, the active modules form a prefix and a
        step costs one sliced product; otherwise a masked update is used.
    bidirectional : bool, default=False
        Add a reverse direction, a second Clockwork RNN with the same settings
        (:attr:`reverse`) that reads each sequence's valid part backwards, its
        clock starting at the last valid step; outputs and states are
        concatenated ``[forward, reverse]`` (``output_size`` doubles).
        Padding never changes the outputs.
    device : torch.device, optional
    dtype : torch.dtype, optional

    Attributes
    ----------
    weight_xh : Parameter of shape (hidden_size, input_size)
    weight_hh : Parameter of shape (hidden_size, hidden_size)
        Raw recurrent matrix; only its block upper triangle is used.
    bias_h : Parameter of shape (hidden_size,)
    hidden_mask : Tensor
        0/1 block upper-triangular mask (buffer).
    hidden_size : int
        Units per direction, ``n_modules * module_size``.
    output_size : int
        ``hidden_size`` times 2 if bidirectional.
    reverse : ClockworkRNN or None
        The reverse direction when ``bidirectional``; the parameters above
        are the forward direction's.
    num_directions : int
        2 if bidirectional, else 1.

    Notes
    -----
    The state is a tuple ``(h, t)`` with the int64 step counter ``t``
    (``(N,)``, index of each sequence's next step). With
    ``bidirectional=True``, ``h`` is ``(N, 2 * hidden_size)`` (forward, then
    reverse: its state after reading the whole sequence backwards), a given
    state must have a zero step counter and :meth:`step` is not available.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import ClockworkRNN
    >>> _ = torch.manual_seed(0)
    >>> net = ClockworkRNN(3, module_size=4, n_modules=3)
    >>> net.periods, net.output_size
    ((1, 2, 4), 12)
    >>> out, (h, t) = net(torch.randn(2, 6, 3), lengths=torch.tensor([6, 2]))
    >>> out.shape, t.tolist()
    (torch.Size([2, 6, 12]), [6, 2])
    >>> bi = ClockworkRNN(3, module_size=4, n_modules=3, bidirectional=True)
    >>> bi(torch.randn(2, 6, 3), lengths=[6, 2])[0].shape
    torch.Size([2, 6, 24])
    """

    def __init__(
        self,
        input_size: int,
        module_size: int,
        n_modules: int,
        *,
        periods: Sequence[int] | None = None,
        bidirectional: bool = False,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.module_size = check_positive_int("module_size", module_size)
        self.n_modules = check_positive_int("n_modules", n_modules)
        self.periods = _check_periods(periods, self.n_modules)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.hidden_size = self.n_modules * self.module_size
        self.output_size = self.hidden_size * self.num_directions
        factory = {"device": device, "dtype": dtype}
        M = self.hidden_size
        self.weight_xh = nn.Parameter(torch.empty(M, self.input_size, **factory))
        self.weight_hh = nn.Parameter(torch.empty(M, M, **factory))
        self.bias_h = nn.Parameter(torch.empty(M, **factory))
        self.register_buffer(
            "hidden_mask",
            _block_upper_mask(
                self.n_modules,
                self.module_size,
                device=self.weight_hh.device,
                dtype=self.weight_hh.dtype,
            ),
            persistent=False,
        )
        self.reset_parameters()
        self.reverse = None
        if self.bidirectional:
            self.reverse = ClockworkRNN(
                input_size,
                module_size,
                n_modules,
                periods=self.periods,
                device=device,
                dtype=dtype,
            )

    def reset_parameters(self) -> None:
        """Re-initialize: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` weights over
        the blocks in use, zeros below the block diagonal and zero biases
        (both directions when bidirectional)."""
        with torch.no_grad():
            bound = 1.0 / math.sqrt(self.input_size)
            self.weight_xh.uniform_(-bound, bound)
            self.weight_hh.zero_()
            n = self.module_size
            for k in range(self.n_modules):
                bound = 1.0 / math.sqrt((self.n_modules - k) * n)
                self.weight_hh[k * n : (k + 1) * n, k * n :].uniform_(-bound, bound)
            self.bias_h.zero_()
        if getattr(self, "reverse", None) is not None:
            self.reverse.reset_parameters()

    def extra_repr(self) -> str:
        s = (
            f"{self.input_size}, module_size={self.module_size}, "
            f"n_modules={self.n_modules}, periods={self.periods}"
        )
        return s + (", bidirectional=True" if self.bidirectional else "")

    def masked_weight_hh(self) -> Tensor:
        """The effective block upper-triangular recurrent matrix."""
        return self.weight_hh * self.hidden_mask

    def _check_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            h = torch.zeros(n, self.hidden_size, device=like.device, dtype=like.dtype)
            return h, torch.zeros(n, dtype=torch.int64, device=like.device)
        if isinstance(state, Tensor):
            state = (state,)
        if not isinstance(state, tuple | list) or len(state) not in (1, 2):
            raise ValueError(
                f"state must be a tuple (h, t) or a tensor h, got {state!r:.60}"
            )
        h = _check_tensor_state(state[0], (n, self.hidden_size), like, "state h")
        t = _state_counter(state[1] if len(state) == 2 else 0, n, like.device)
        return h, t

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | Sequence[int] | None = None,
        state: tuple | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Run the Clockwork RNN over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
        lengths : Tensor of shape (N,), optional
        state : tuple (h, t), optional

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Hidden states, zero on padded steps.
        state : tuple (h, t)
            Final state at each sequence's last valid step (the reverse
            direction's after reading the whole sequence backwards).
        """
        if self.reverse is None:
            return self._forward_one(x, lengths, state)
        lengths, _ = check_input(x, lengths, self.input_size)
        state_f, state_r = self._split_state(state, x.shape[0], x)
        out_f, (h_f, t_end) = self._forward_one(x, lengths, state_f)
        # reverse direction: forwards on the reversed valid parts, its
        # output reversed back (padding stays in place and zero)
        out_r, (h_r, _) = self.reverse(reverse_padded(x, lengths), lengths, state_r)
        out = torch.cat([out_f, reverse_padded(out_r, lengths)], dim=2)
        return out, (torch.cat([h_f, h_r], dim=1), t_end)

    def _split_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[Tensor | None, Tensor | None]:
        """Per-direction initial ``h`` of a bidirectional network."""
        if state is None:
            return None, None
        if isinstance(state, Tensor):
            state = (state,)
        if not isinstance(state, tuple | list) or len(state) not in (1, 2):
            raise ValueError(
                f"state must be a tuple (h, t) or a tensor h, got {state!r:.60}"
            )
        H = self.hidden_size
        h = _check_tensor_state(state[0], (n, 2 * H), like, "state h")
        if len(state) == 2:
            t = _state_counter(state[1], n, like.device)
            if n > 0 and bool((t != 0).any()):
                raise ValueError(
                    "a bidirectional ClockworkRNN reads every sequence from its "
                    "first step: the state step counter must be 0, got "
                    f"{t.tolist()!r:.60}"
                )
        return h[:, :H], h[:, H:]

    def _forward_one(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """:meth:`forward` of the forward direction alone."""
        lengths, T = check_input(x, lengths, self.input_size)
        N, M = x.shape[0], self.hidden_size
        h, t0 = self._check_state(state, N, x)
        W_hh = self.masked_weight_hh()
        # Finished sequences keep running on zeroed inputs: their states stay
        # bounded (tanh) and are never read; outputs are zeroed and the final
        # state gathered at the last valid step. Zeroing also keeps NaN
        # padding out of the gradients.
        x = zero_padded(x, lengths)
        xp = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h)  # (T, N, M)
        xs = xp.unbind(0)  # per-step views with one backward for all steps
        start = _uniform_start(t0)
        hs: list[Tensor] = []
        if start is not None and _is_nested(self.periods):
            counts = _active_prefix_counts(self.periods, start, T)
            W_T = {a: W_hh[:a].T for a in {c * self.module_size for c in counts}}
            for t in range(T):
                a = counts[t] * self.module_size
                h_a = torch.tanh(torch.addmm(xs[t][:, :a], h, W_T[a]))
                h = h_a if a == M else torch.cat([h_a, h[:, a:]], dim=1)
                hs.append(h)
        else:
            steps = t0.unsqueeze(1) + torch.arange(T, device=t0.device)
            active = _active_modules(self.periods, steps).repeat_interleave(
                self.module_size, dim=2
            )
            for t in range(T):
                h = self._cell_masked(xs[t], h, W_hh, active[:, t])
                hs.append(h)
        h_seq = torch.stack(hs, dim=1)
        t_end = t0 + (T if lengths is None else lengths.to(t0.device))
        return zero_padded(h_seq, lengths), (gather_last(h_seq, lengths), t_end)

    @staticmethod
    def _cell_masked(xp_t: Tensor, h: Tensor, W_hh: Tensor, active: Tensor) -> Tensor:
        h_new = torch.tanh(torch.addmm(xp_t, h, W_hh.T))
        return torch.where(active, h_new, h)

    def step(
        self, x_t: Tensor, state: tuple | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """One time step; iterating it over ``t`` equals :meth:`forward`.

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : tuple (h, t), optional

        Returns
        -------
        y_t : Tensor of shape (N, hidden_size)
        state : tuple (h, t + 1)

        Examples
        --------
        >>> net = ClockworkRNN(2, 3, 2)
        >>> y, (h, t) = net.step(torch.ones(1, 2))
        >>> y.shape, t.tolist()
        (torch.Size([1, 6]), [1])
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional ClockworkRNN: the "
                "reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        h, t = self._check_state(state, x_t.shape[0], x_t)
        active = _active_modules(self.periods, t).repeat_interleave(
            self.module_size, dim=1
        )
        xp_t = F.linear(x_t, self.weight_xh, self.bias_h)
        h = self._cell_masked(xp_t, h, self.masked_weight_hh(), active)
        return h, (h, t + 1)
