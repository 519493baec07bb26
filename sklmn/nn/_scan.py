"""The recurrence kernels of :mod:`sklmn.nn` and the batch layout they run on.

Two hand-written autograd functions, each with its BPTT backward:

- :func:`lmn_scan` (:class:`_LMNScan`): the LMN recurrence
  ``h_t = tanh(W_xh x_t + b_h + W_mh m_{t-1})``,
  ``m_t = W_hm h_t + W_mm m_{t-1} (+ b_m)``; one fused matmul
  ``[g_pre | g_m] @ [W_mh; W_mm]`` per step in the backward and the weight
  gradients as single matmuls over all steps;
- :func:`multiscale_scan` (:class:`_MultiScaleScan`): the MS-LMN recurrence
  with a clock shared by the batch, updating the active prefix of the memory
  modules (Carta et al. 2021 and 2020a, eq. 9-10).

Both take a time-major batch sorted by decreasing length, in which step ``t``
only updates the prefix of ``batch_sizes[t]`` sequences still running (as
packed sequences do). :class:`SortedBatch` builds that layout from
batch-first tensors and lengths, and puts the results back in input order:
the layers call it as sort, time-major, run the kernel, unsort.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import torch
from torch import Tensor

from ._padding import active_batch_sizes, sort_by_length

__all__ = ["SortedBatch", "lmn_scan", "multiscale_scan", "set_cuda_graphs"]


# --------------------------------------------------------------------------- #
# The batch layout of the kernels
# --------------------------------------------------------------------------- #
class SortedBatch:
    """A batch sorted by decreasing length for the kernels, and the way back.

    Without lengths every sequence runs to the end: nothing is sorted and
    ``batch_sizes`` is None.

    Parameters
    ----------
    lengths : Tensor of shape (N,) or None
        Valid lengths (values in ``1..T``).
    T : int
        Number of time steps.
    device : torch.device or str
        Device of the tensors that :meth:`sort` and :meth:`unsort` receive.

    Attributes
    ----------
    lengths : Tensor of shape (N,) or None
        The lengths in decreasing order (on the device of the given lengths).
    batch_sizes : list of int of length T, or None
        Number of sequences still running at each step (see
        :func:`sklmn.nn._padding.active_batch_sizes`).

    Examples
    --------
    >>> batch = SortedBatch(torch.tensor([2, 3]), 3, "cpu")
    >>> batch.lengths, batch.batch_sizes
    (tensor([3, 2]), [2, 2, 1])
    >>> x = torch.tensor([[1.0], [2.0]])
    >>> batch.sort(x).flatten().tolist()
    [2.0, 1.0]
    >>> batch.unsort(batch.sort(x)).flatten().tolist()
    [1.0, 2.0]
    """

    def __init__(
        self, lengths: Tensor | None, T: int, device: torch.device | str
    ) -> None:
        self.lengths = None
        self.batch_sizes = None
        self._order = self._inverse = None
        if lengths is not None:
            sorted_lengths, order, inverse = sort_by_length(lengths)
            self.lengths = sorted_lengths
            self._order, self._inverse = order.to(device), inverse.to(device)
            self.batch_sizes = active_batch_sizes(sorted_lengths, T)

    @staticmethod
    def _take(tensor: Tensor | None, index: Tensor | None, dim: int) -> Tensor | None:
        if tensor is None or index is None:
            return tensor
        return tensor[(slice(None),) * dim + (index,)]

    def sort(self, tensor: Tensor | None, dim: int = 0) -> Tensor | None:
        """Rows of ``tensor`` along the batch axis ``dim`` in length order."""
        return self._take(tensor, self._order, dim)

    def unsort(self, tensor: Tensor | None, dim: int = 0) -> Tensor | None:
        """Rows of a sorted ``tensor`` along ``dim`` back in input order."""
        return self._take(tensor, self._inverse, dim)

    def time_major(self, x: Tensor) -> Tensor:
        """Batch-first ``x`` (N, T, ...) sorted and made time-major (T, N, ...)."""
        return self.sort(x).transpose(0, 1)


# --------------------------------------------------------------------------- #
# CUDA graphs of the time loops
# --------------------------------------------------------------------------- #
# On a GPU a time loop is bound by the launch of its small kernels (a few per
# step) and by Python, not by arithmetic: replaying the loop as one captured
# CUDA graph removes both. A graph is captured for a shape (T, N, sizes,
# batch sizes, dtype, device) the second time that shape is seen (training
# repeats the shapes of its minibatches; ragged batches whose lengths never
# repeat stay eager), and the most recent few are kept.
_GRAPHS_ENABLED = True
_MAX_GRAPHS = 8
_GRAPHS: OrderedDict = OrderedDict()  # key -> _GraphedSteps, or None (failed)
_SEEN: OrderedDict = OrderedDict()  # key -> None, keys seen once
_GRAPHS_LOCK = threading.Lock()


def set_cuda_graphs(enabled: bool) -> bool:
    """Turn the CUDA-graph replay of the LMN time loop on or off.

    On a CUDA device, :func:`lmn_scan` (the recurrence of
    :class:`~sklmn.nn.LMN` and of the LMN estimators) captures its forward
    and backward time loops as CUDA graphs the second time it meets a batch
    shape and replays them afterwards: the same kernels in the same order
    (the results are unchanged), without a kernel launch from Python per
    step. On by default; has no effect on the CPU. Each captured graph keeps
    buffers the size of its loop's inputs and states; up to 8 shapes are
    kept (the most recently used) for the life of the process, also while
    the replay is off.

    Parameters
    ----------
    enabled : bool
        Whether to use CUDA graphs.

    Returns
    -------
    previous : bool
        The setting before the call.

    Examples
    --------
    >>> from sklmn.nn import set_cuda_graphs
    >>> previous = set_cuda_graphs(False)
    >>> set_cuda_graphs(previous)
    False
    """
    global _GRAPHS_ENABLED
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool, got {enabled!r}")
    with _GRAPHS_LOCK:
        previous, _GRAPHS_ENABLED = _GRAPHS_ENABLED, enabled
    return previous


def _key(batch_sizes: list[int] | None) -> tuple[int, ...] | None:
    return None if batch_sizes is None else tuple(batch_sizes)


class _GraphedSteps:
    """A time loop captured as a CUDA graph over buffers of its own.

    ``run(**inputs)`` copies the inputs into the buffers and replays the
    graph; the outputs are read from ``buffers`` (copy them before the next
    run). ``lock`` serializes the runs of threads sharing the graph.
    """

    def __init__(self, fn, tensors: dict[str, Tensor], static: dict) -> None:
        self.buffers = {k: v.detach().clone() for k, v in tensors.items()}
        self.lock = threading.Lock()
        device = next(iter(self.buffers.values())).device
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):  # warm-up: library handles, workspaces
            fn(**self.buffers, **static)
        torch.cuda.current_stream(device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            fn(**self.buffers, **static)

    def run(self, **inputs: Tensor) -> None:
        for name, value in inputs.items():
            self.buffers[name].copy_(value)
        self.graph.replay()


def _cuda_graph(kind: str, key: tuple, fn, tensors, **static):
    """The graph of ``fn`` for ``key``, or None to run it eagerly.

    ``tensors()`` gives the call's tensors (the shapes of the buffers);
    ``static`` the non-tensor arguments of ``fn``, fixed by ``key``.
    """
    device = key[0]
    if (
        not _GRAPHS_ENABLED
        or device.type != "cuda"
        or torch.cuda.is_current_stream_capturing()
    ):
        return None
    # a graph captured under torch.inference_mode has inference buffers,
    # which cannot be written outside it: one graph per mode
    key = (kind, torch.is_inference_mode_enabled(), *key)
    with _GRAPHS_LOCK:
        if key in _GRAPHS:
            _GRAPHS.move_to_end(key)
            return _GRAPHS[key]
        if key not in _SEEN:  # first time: eager
            _SEEN[key] = None
            while len(_SEEN) > 4 * _MAX_GRAPHS:
                _SEEN.popitem(last=False)
            return None
        del _SEEN[key]
        try:
            steps = _GraphedSteps(fn, tensors(), static)
        except RuntimeError:  # capture unsupported here: stay eager
            steps = None
        _GRAPHS[key] = steps
        while len(_GRAPHS) > _MAX_GRAPHS:
            _GRAPHS.popitem(last=False)
        return steps


# --------------------------------------------------------------------------- #
# The LMN recurrence
# --------------------------------------------------------------------------- #
def _last_indices(batch_sizes: list[int] | None, T: int, N: int) -> list[int]:
    """Last valid step of each (length-sorted) sequence from the batch sizes."""
    if batch_sizes is None:
        return [T - 1] * N
    last = []
    t = T - 1
    for n in range(N):  # rows sorted by decreasing length
        while batch_sizes[t] <= n:
            t -= 1
        last.append(t)
    return last


def _lmn_forward_steps(
    Z: Tensor,
    hs: Tensor,
    m0: Tensor,
    w_read: Tensor,
    w_hm_t: Tensor,
    *,
    batch_sizes: list[int] | None,
) -> None:
    """The forward time loop of :class:`_LMNScan`, in place.

    ``Z`` (T, N, H+M) holds ``[W_xh x_t + b_h | b_m]`` on entry; ``m_t`` is
    accumulated in place in its last M columns and ``h_t`` written to ``hs``
    (T, N, H); padded steps are set to zero.
    """
    T, N, _ = Z.shape
    H = hs.shape[2]
    ms = Z[..., H:]
    m_prev = m0
    for t in range(T):
        b = N if batch_sizes is None else batch_sizes[t]
        z = Z[t, :b]
        z.addmm_(m_prev[:b], w_read)
        h = hs[t, :b]
        torch.tanh(z[:, :H], out=h)
        z[:, H:].addmm_(h, w_hm_t)
        if b < N:
            hs[t, b:] = 0.0
            ms[t, b:] = 0.0
        m_prev = ms[t]


def _lmn_backward_steps(
    G: Tensor,
    hs: Tensor,
    weight_hm: Tensor,
    w: Tensor,
    g_m0: Tensor,
    *,
    batch_sizes: list[int] | None,
    truncate: bool,
) -> None:
    """The backward time loop of :class:`_LMNScan` (BPTT), in place.

    ``G`` (T, N, H+M) holds the direct gradients ``[dL/dh_t | dL/dm_t]`` on
    entry and ``[dL/dpre_t | dL/dm_t]`` on exit; ``w`` is ``[W_mh; W_mm]``
    (or ``W_mm`` alone when ``truncate``); ``g_m0`` (N, M) receives
    ``dL/dm_0``.
    """
    T, N, _ = G.shape
    H = hs.shape[2]
    tanh_backward = torch.ops.aten.tanh_backward.grad_input
    for t in range(T - 1, -1, -1):
        b = N if batch_sizes is None else batch_sizes[t]
        if b < N:  # padded steps are constants: no gradient
            G[t, b:] = 0.0
        g = G[t, :b]
        gm, gpre = g[:, H:], g[:, :H]
        # dL/dh_t = g_h + g_m W_hm;  dL/dpre_t = dL/dh_t * (1 - h_t^2)
        gpre.addmm_(gm, weight_hm)
        tanh_backward(gpre, hs[t, :b], grad_input=gpre)
        # dL/dm_{t-1} += dL/dpre_t W_mh + dL/dm_t W_mm, accumulated in place
        # into G[t-1] (b_{t-1} >= b_t)
        src = gm if truncate else g
        if t > 0:
            G[t - 1, :b, H:].addmm_(src, w)
        else:  # b_0 = N
            torch.mm(src, w, out=g_m0)


def _scan_outputs(ctx, hs: Tensor, ms: Tensor, batch_sizes, bias_m, saved):
    """Record on ``ctx`` what the backward of an LMN scan needs (the tensors
    ``saved``, the batch sizes, the last valid step of each sequence) and
    return the scan's outputs ``hs, ms, h_last, m_last``."""
    T, N = hs.shape[0], hs.shape[1]
    last = _last_indices(batch_sizes, T, N)
    rows = torch.arange(N, device=hs.device)
    last_t = torch.tensor(last, dtype=torch.int64, device=hs.device)
    ctx.save_for_backward(*saved)
    ctx.batch_sizes = batch_sizes
    ctx.has_bias_m = bias_m is not None
    ctx.last = (last_t, rows)
    ctx.set_materialize_grads(False)
    return hs, ms, hs[last_t, rows], ms[last_t, rows]


def _direct_gradients(ctx, hs: Tensor, M: int, g_hs, g_ms, g_h_last, g_m_last):
    """``[dL/dh_t | dL/dm_t]`` (T, N, H+M), contiguous: the direct gradients
    of an LMN scan's four outputs (None: zero)."""
    T, N, H = hs.shape
    G = hs.new_empty(T, N, H + M)
    for part, grad in ((G[..., :H], g_hs), (G[..., H:], g_ms)):
        if grad is None:
            part.zero_()
        else:
            part.copy_(grad)
    last_t, rows = ctx.last
    if g_h_last is not None:
        G[last_t, rows, :H] += g_h_last
    if g_m_last is not None:
        G[last_t, rows, H:] += g_m_last
    return G


class _LMNScan(torch.autograd.Function):
    """LMN recurrence over a time-major, length-sorted input.

    Inputs: ``x`` (T, N, d); ``m0`` (N, M); the layer's weights (``bias_m``
    may be None); ``batch_sizes`` (T non-increasing ints, or None for all N);
    ``truncate`` (cut dh_t/dm_{t-1}).
    Outputs: ``hs`` (T, N, H), ``ms`` (T, N, M), exactly zero at padded steps
    (which receive no gradient), and the final states ``h_last``, ``m_last``
    (N, H), (N, M) at each sequence's last valid step.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        x: Tensor,
        m0: Tensor,
        weight_xh: Tensor,
        bias_h: Tensor,
        weight_mh: Tensor,
        weight_hm: Tensor,
        weight_mm: Tensor,
        bias_m: Tensor | None,
        batch_sizes: list[int] | None,
        truncate: bool,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        T, N, d = x.shape
        H, M = weight_xh.shape[0], m0.shape[1]
        # Z_t = [W_xh x_t + b_h | b_m] for all steps in one matmul; then
        # m_{t-1} (read by both W_mh and W_mm) adds m_{t-1} [W_mh; W_mm]^T.
        w_in = torch.cat([weight_xh, weight_xh.new_zeros(M, d)], dim=0)
        b_in = torch.cat([bias_h, bias_m if bias_m is not None else m0.new_zeros(M)])
        x2 = x.reshape(T * N, d)
        Z = torch.addmm(b_in, x2, w_in.t()).view(T, N, H + M)
        w_read = torch.cat([weight_mh, weight_mm], dim=0).t()  # (M, H+M)
        w_hm_t = weight_hm.t()  # (H, M)
        steps = _cuda_graph(
            "forward",
            (x.device, x.dtype, T, N, H, M, _key(batch_sizes)),
            _lmn_forward_steps,
            lambda: {
                "Z": Z,
                "hs": x.new_empty(T, N, H),
                "m0": m0,
                "w_read": w_read,
                "w_hm_t": w_hm_t,
            },
            batch_sizes=batch_sizes,
        )
        if steps is None:
            hs = x.new_empty(T, N, H)
            _lmn_forward_steps(Z, hs, m0, w_read, w_hm_t, batch_sizes=batch_sizes)
            ms = Z[..., H:].contiguous()
        else:
            with steps.lock:
                steps.run(Z=Z, m0=m0, w_read=w_read, w_hm_t=w_hm_t)
                hs = steps.buffers["hs"].clone()
                ms = steps.buffers["Z"][..., H:].contiguous()
        ctx.truncate = truncate
        return _scan_outputs(
            ctx,
            hs,
            ms,
            batch_sizes,
            bias_m,
            (x2, hs, ms, m0, weight_xh, weight_mh, weight_hm, weight_mm),
        )

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        g_hs: Tensor | None,
        g_ms: Tensor | None,
        g_h_last: Tensor | None,
        g_m_last: Tensor | None,
    ) -> tuple[Tensor | None, ...]:
        x2, hs, ms, m0, weight_xh, weight_mh, weight_hm, weight_mm = ctx.saved_tensors
        batch_sizes, truncate = ctx.batch_sizes, ctx.truncate
        T, N, H = hs.shape
        M = m0.shape[1]
        w_read = torch.cat([weight_mh, weight_mm], dim=0)  # (H+M, M)
        # G[t] = [dL/dpre_t | dL/dm_t]: initialized with the direct gradients
        # of the outputs, completed backwards in time (BPTT).
        G = _direct_gradients(ctx, hs, M, g_hs, g_ms, g_h_last, g_m_last)
        # Carta et al. 2020b §2 truncation drops W_mh from dL/dm_{t-1}
        w = weight_mm if truncate else w_read
        steps = _cuda_graph(
            "backward",
            (hs.device, hs.dtype, T, N, H, M, _key(batch_sizes), truncate),
            _lmn_backward_steps,
            lambda: {
                "G": G,
                "hs": hs,
                "weight_hm": weight_hm,
                "w": w,
                "g_m0": m0.new_empty(N, M),
            },
            batch_sizes=batch_sizes,
            truncate=truncate,
        )
        if steps is None:
            g_m0 = m0.new_empty(N, M)
            _lmn_backward_steps(
                G, hs, weight_hm, w, g_m0, batch_sizes=batch_sizes, truncate=truncate
            )
        else:
            with steps.lock:
                steps.run(G=G, hs=hs, weight_hm=weight_hm, w=w)
                G = steps.buffers["G"].clone()
                g_m0 = steps.buffers["g_m0"].clone()
        # Weight gradients: one matmul over all steps, m_{t-1} = [m0, ms[:-1]].
        G2 = G.view(T * N, H + M)
        g_pre = G2[:, :H]
        g_read = G[0].t() @ m0
        if T > 1:
            g_read.addmm_(G2[N:].t(), ms[:-1].reshape((T - 1) * N, M))
        g_hm = G2[:, H:].t() @ hs.reshape(T * N, H)
        g_x = None
        if ctx.needs_input_grad[0]:
            g_x = (g_pre @ weight_xh).view(T, N, weight_xh.shape[1])
        g_xh = g_pre.t() @ x2
        g_bh = g_pre.sum(dim=0)
        g_bm = G2[:, H:].sum(dim=0) if ctx.has_bias_m else None
        return (
            g_x,
            g_m0,
            g_xh,
            g_bh,
            g_read[:H],
            g_hm,
            g_read[H:],
            g_bm,
            None,
            None,
        )


class _MemoryScan(torch.autograd.Function):
    """The LMN recurrence without feedback (``W_mh = 0``): the hidden states
    ``h_t = tanh(W_xh x_t + b_h)`` of all steps in one matmul, then the
    linear memory ``m_t = u_t + W_mm m_{t-1}`` (``u_t = W_hm h_t + b_m``,
    also one matmul) as the only time loop, forward and backward.

    Inputs and outputs as :class:`_LMNScan`, without ``weight_mh`` and
    ``truncate`` (no gradient flows from ``h_t`` to ``m_{t-1}``).
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        x: Tensor,
        m0: Tensor,
        weight_xh: Tensor,
        bias_h: Tensor,
        weight_hm: Tensor,
        weight_mm: Tensor,
        bias_m: Tensor | None,
        batch_sizes: list[int] | None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        T, N, d = x.shape
        H, M = weight_xh.shape[0], m0.shape[1]
        x2 = x.reshape(T * N, d)
        hs = torch.tanh(torch.addmm(bias_h, x2, weight_xh.t())).view(T, N, H)
        if bias_m is None:
            ms = (hs.reshape(T * N, H) @ weight_hm.t()).view(T, N, M)
        else:
            ms = torch.addmm(bias_m, hs.reshape(T * N, H), weight_hm.t())
            ms = ms.view(T, N, M)
        w_mm_t = weight_mm.t()
        m_prev = m0
        for t in range(T):
            b = N if batch_sizes is None else batch_sizes[t]
            ms[t, :b].addmm_(m_prev[:b], w_mm_t)
            if b < N:
                hs[t, b:] = 0.0
                ms[t, b:] = 0.0
            m_prev = ms[t]
        return _scan_outputs(
            ctx,
            hs,
            ms,
            batch_sizes,
            bias_m,
            (x2, hs, ms, m0, weight_xh, weight_hm, weight_mm),
        )

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        g_hs: Tensor | None,
        g_ms: Tensor | None,
        g_h_last: Tensor | None,
        g_m_last: Tensor | None,
    ) -> tuple[Tensor | None, ...]:
        x2, hs, ms, m0, weight_xh, weight_hm, weight_mm = ctx.saved_tensors
        batch_sizes = ctx.batch_sizes
        T, N, H = hs.shape
        M = m0.shape[1]
        G = _direct_gradients(ctx, hs, M, g_hs, g_ms, g_h_last, g_m_last)
        # dL/dm_{t-1} += dL/dm_t W_mm, backwards in time (padded steps are
        # constants: no gradient)
        g_m0 = m0.new_empty(N, M)
        for t in range(T - 1, -1, -1):
            b = N if batch_sizes is None else batch_sizes[t]
            if b < N:
                G[t, b:] = 0.0
            if t > 0:
                G[t - 1, :b, H:].addmm_(G[t, :b, H:], weight_mm)
            else:  # b_0 = N
                torch.mm(G[0, :, H:], weight_mm, out=g_m0)
        G2 = G.view(T * N, H + M)
        gm2 = G2[:, H:]
        hs2 = hs.reshape(T * N, H)
        # dL/dh_t = g_h + dL/dm_t W_hm;  dL/dpre_t = dL/dh_t * (1 - h_t^2)
        g_pre = torch.addmm(G2[:, :H], gm2, weight_hm)
        torch.ops.aten.tanh_backward.grad_input(g_pre, hs2, grad_input=g_pre)
        g_mm = gm2[:N].t() @ m0
        if T > 1:
            g_mm.addmm_(gm2[N:].t(), ms[:-1].reshape((T - 1) * N, M))
        g_x = None
        if ctx.needs_input_grad[0]:
            g_x = (g_pre @ weight_xh).view(T, N, weight_xh.shape[1])
        return (
            g_x,
            g_m0,
            g_pre.t() @ x2,
            g_pre.sum(dim=0),
            gm2.t() @ hs2,
            g_mm,
            gm2.sum(dim=0) if ctx.has_bias_m else None,
            None,
        )


def lmn_scan(
    x: Tensor,
    m0: Tensor,
    weight_xh: Tensor,
    bias_h: Tensor,
    weight_mh: Tensor | None,
    weight_hm: Tensor,
    weight_mm: Tensor,
    bias_m: Tensor | None = None,
    batch_sizes: Sequence[int] | None = None,
    truncate_gradient: bool = False,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Run the LMN recurrence on a time-major batch.

    Computes ``h_t = tanh(W_xh x_t + b_h + W_mh m_{t-1})`` and
    ``m_t = W_hm h_t + W_mm m_{t-1} (+ b_m)`` for ``t = 1..T`` with a
    hand-written backward (fast BPTT). Differentiable (first order) with
    respect to every tensor argument.

    Parameters
    ----------
    x : Tensor of shape (T, N, d)
        Time-major input.
    m0 : Tensor of shape (N, M)
        Initial memory.
    weight_xh : Tensor of shape (H, d)
    bias_h : Tensor of shape (H,)
    weight_mh : Tensor of shape (H, M) or None
        None: no feedback (``W_mh = 0``); the hidden states of all steps
        are then computed at once and the time loop runs the linear memory
        alone (the same result as a zero ``weight_mh``, which gets no
        gradient).
    weight_hm : Tensor of shape (M, H)
    weight_mm : Tensor of shape (M, M)
    bias_m : Tensor of shape (M,), optional
    batch_sizes : sequence of int of length T, optional
        Number of sequences still running at each step; the batch must be
        sorted by decreasing length (see :func:`sklmn.nn._padding.sort_by_length`
        and :func:`sklmn.nn._padding.active_batch_sizes`).
        ``None``: all sequences have length ``T``.
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t-1}`` (Carta et al. 2020b §2).

    Returns
    -------
    hs : Tensor of shape (T, N, H)
        Hidden states, exactly zero at padded steps (which get no gradient).
    ms : Tensor of shape (T, N, M)
        Memory states, same convention.
    h_last : Tensor of shape (N, H)
        Hidden state at each sequence's last valid step.
    m_last : Tensor of shape (N, M)
        Memory at each sequence's last valid step.

    Examples
    --------
    >>> x = torch.zeros(3, 2, 1)
    >>> m0 = torch.ones(2, 2)
    >>> w_xh, b_h, w_mh = torch.zeros(4, 1), torch.zeros(4), torch.zeros(4, 2)
    >>> w_hm, w_mm = torch.zeros(2, 4), torch.eye(2)
    >>> hs, ms, h_last, m_last = lmn_scan(
    ...     x, m0, w_xh, b_h, w_mh, w_hm, w_mm, batch_sizes=[2, 2, 1]
    ... )
    >>> ms[:, :, 0]
    tensor([[1., 1.],
            [1., 1.],
            [1., 0.]])
    >>> m_last
    tensor([[1., 1.],
            [1., 1.]])
    """
    T, N = x.shape[0], x.shape[1]
    if batch_sizes is not None:
        batch_sizes = [int(b) for b in batch_sizes]
        if len(batch_sizes) != T:
            raise ValueError(
                f"batch_sizes must have length T={T}, got {len(batch_sizes)}"
            )
        if batch_sizes[0] != N or any(
            b1 < b2 for b1, b2 in zip(batch_sizes, batch_sizes[1:], strict=False)
        ):
            raise ValueError(
                f"batch_sizes must be non-increasing and start at N={N} (every "
                f"sequence has at least one step), got {batch_sizes}"
            )
        if batch_sizes[-1] == N:
            batch_sizes = None
    if weight_mh is None:
        return _MemoryScan.apply(
            x,
            m0.contiguous(),
            weight_xh,
            bias_h,
            weight_hm,
            weight_mm,
            bias_m,
            batch_sizes,
        )
    return _LMNScan.apply(
        x,
        m0.contiguous(),
        weight_xh,
        bias_h,
        weight_mh,
        weight_hm,
        weight_mm,
        bias_m,
        batch_sizes,
        bool(truncate_gradient),
    )


# --------------------------------------------------------------------------- #
# The MS-LMN recurrence (shared clock, sorted batch)
# --------------------------------------------------------------------------- #
def _multiscale_memory_steps(
    xp: Tensor,
    states: Tensor,
    weight_hm: Tensor,
    weight_mm: Tensor,
    units: list[int],
    batch_sizes: list[int] | None,
) -> tuple[Tensor, Tensor]:
    """The forward time loop of :class:`_MultiScaleScan` without feedback.

    ``h_t = tanh(xp_t)`` and ``u_t = W_hm h_t`` for all steps at once, then
    the active rows ``m_t[:a] = u_t[:a] + W_mm[:a] m_{t-1}`` step by step;
    ``states`` (T + 1, N, M) is filled in place (``states[0] = m_0``).
    Returns ``hs`` (zero rows for finished sequences) and ``states``.
    """
    T, N, H = xp.shape
    M = states.shape[2]
    hs = torch.tanh(xp)
    U = (hs.reshape(T * N, H) @ weight_hm.t()).view(T, N, M)
    for t in range(T):
        a = units[t]
        b = N if batch_sizes is None else batch_sizes[t]
        m_prev, m = states[t], states[t + 1]
        torch.addmm(U[t, :b, :a], m_prev[:b], weight_mm[:a].t(), out=m[:b, :a])
        if a < M:  # eq. 10: slower modules keep their state
            m[:b, a:] = m_prev[:b, a:]
        if b < N:  # finished sequences keep their state
            m[b:] = m_prev[b:]
            hs[t, b:] = 0.0
    return hs, states


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
        # states[0] = m_0 and states[t + 1] = m_t: the backward reads m_{t-1}
        # for all steps as one contiguous block.
        states = xp.new_empty(T + 1, N, M)
        states[0] = m0
        ctx.units = units
        ctx.batch_sizes = batch_sizes
        ctx.feedback = weight_mh is not None
        # without feedback only W_mm reads m_{t-1}, as in the truncation
        ctx.truncate = truncate or not ctx.feedback
        if not ctx.feedback:  # h_t and W_hm h_t of all steps at once
            hs, states = _multiscale_memory_steps(
                xp, states, weight_hm, weight_mm, units, batch_sizes
            )
            ctx.save_for_backward(hs, states, weight_hm, weight_mm)
            return hs, states[1:]
        # m_{t-1} is read by h_t (W_mh) and by the active memory rows
        # (W_mm[:a]): one product with the first H + a rows of w_read.
        w_read = torch.cat([weight_mh, weight_mm], dim=0)  # (H + M, M)
        hs = xp.new_zeros(T, N, H)
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
        ctx.save_for_backward(hs, states, weight_hm, weight_mm, weight_mh)
        return hs, states[1:]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx, g_hs: Tensor, g_ms: Tensor
    ) -> tuple[Tensor | None, ...]:
        hs, states, weight_hm, weight_mm, *feedback = ctx.saved_tensors
        units, batch_sizes, truncate = ctx.units, ctx.batch_sizes, ctx.truncate
        T, N, H = hs.shape
        M = states.shape[2]
        if ctx.feedback:
            w_read = torch.cat([feedback[0], weight_mm], dim=0)  # (H + M, M)
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
        # (H + M, M) with the feedback; (M, M) without (no W_mh to train)
        read_rows = G2 if ctx.feedback else G2[:, H:]
        g_read = read_rows.t() @ states[:-1].reshape(T * N, M)
        g_hm = G2[:, H:].t() @ hs.reshape(T * N, H)  # (M, H)
        return (
            G[..., :H].contiguous(),
            g_next,
            g_read[:H] if ctx.feedback else None,
            g_hm,
            g_read[-M:],
            None,
            None,
            None,
        )


def multiscale_scan(
    xp: Tensor,
    m0: Tensor,
    weight_mh: Tensor | None,
    weight_hm: Tensor,
    weight_mm: Tensor,
    units: list[int],
    batch_sizes: list[int] | None = None,
    truncate_gradient: bool = False,
) -> tuple[Tensor, Tensor]:
    """Run the MS-LMN recurrence with a shared clock on a time-major batch.

    Computes ``h_t = tanh(xp_t + W_mh m_{t-1})`` and, for the first
    ``units[t]`` memory units (the active modules, a prefix),
    ``m_t = W_hm h_t + W_mm m_{t-1}``; the other units, and the sequences
    already finished, keep their memory. Hand-written backward (first order).

    Parameters
    ----------
    xp : Tensor of shape (T, N, H)
        Projected inputs ``W_xh x_t + b_h``, time-major.
    m0 : Tensor of shape (N, M)
        Initial memory.
    weight_mh : Tensor of shape (H, M) or None
        None: no feedback (``W_mh = 0``); the hidden states of all steps are
        then computed at once and the time loop updates the memory alone
        (the same result as a zero ``weight_mh``, which gets no gradient).
    weight_hm : Tensor of shape (M, H)
    weight_mm : Tensor of shape (M, M)
        The effective (masked) memory matrix.
    units : list of int of length T
        Number of active memory units at each step.
    batch_sizes : list of int of length T, optional
        Sequences still running at each step, for a batch sorted by
        decreasing length (see :class:`SortedBatch`); None: all.
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t-1}`` (Carta et al. 2020b §2).

    Returns
    -------
    hs : Tensor of shape (T, N, H)
        Hidden states, zero rows for finished sequences.
    ms : Tensor of shape (T, N, M)
        Memory states; finished sequences carry their memory.

    Examples
    --------
    >>> xp, m0 = torch.zeros(3, 1, 1), torch.ones(1, 2)
    >>> w_mh, w_hm, w_mm = torch.zeros(1, 2), torch.zeros(2, 1), 2 * torch.eye(2)
    >>> hs, ms = multiscale_scan(xp, m0, w_mh, w_hm, w_mm, units=[2, 1, 2])
    >>> ms[:, 0]
    tensor([[2., 2.],
            [4., 2.],
            [8., 4.]])
    """
    return _MultiScaleScan.apply(
        xp.contiguous(),
        m0,
        weight_mh,
        weight_hm,
        weight_mm,
        units,
        batch_sizes,
        truncate_gradient,
    )
