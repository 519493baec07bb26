"""Process-wide torch state of the estimators: threads, seeded RNG, dtype.

torch's intra-op thread count, the thread pools of numpy's and scipy's BLAS,
torch's global random generators and its default dtype belong to the process, not to an
estimator: fits that set them take turns through the locks here
(``n_threads`` and ``random_state`` of the estimators).
"""

from __future__ import annotations

import contextlib
import sys
import threading

import torch
from threadpoolctl import ThreadpoolController

from ._auto import auto_threads
from ._persist import machine_threads

__all__: list[str] = []

# torch's global RNG is shared by all threads: fits running concurrently in
# threads (joblib's threading backend, dask thread workers) would interleave
# their seeded draws, so seeded blocks run one at a time (reentrant: a
# pretrainer may fit another estimator inside)
_TORCH_RNG_LOCK = threading.RLock()
# torch's thread count is process-wide: estimators that set it take turns
_TORCH_THREADS_LOCK = threading.RLock()


def _resolved_threads(n_threads, module: torch.nn.Module, batch_size: int):
    """The threads of a call with ``n_threads`` (``'auto'`` resolved for
    ``module`` run on batches of ``batch_size``; None: as is)."""
    if not isinstance(n_threads, str):
        return n_threads
    size = sum(p.numel() for p in module.parameters())
    return auto_threads(batch_size * size, torch.get_num_threads())


# the BLAS libraries threadpoolctl found, and the number of imported modules
# then: finding them scans the loaded shared objects, so it is done again
# only after new imports (which may load another BLAS)
_BLAS_CONTROLLER: list = [None, -1]


def _blas_controller():
    """threadpoolctl's controller of the loaded BLAS libraries (cached)."""
    if _BLAS_CONTROLLER[1] != len(sys.modules):
        _BLAS_CONTROLLER[0] = ThreadpoolController().select(user_api="blas")
        _BLAS_CONTROLLER[1] = len(sys.modules)
    return _BLAS_CONTROLLER[0]


@contextlib.contextmanager
def _blas_limits(count: int):
    """Limit the BLAS thread pools of numpy and scipy to ``count`` threads
    inside the block (each pool on its own: one already at or below
    ``count`` is left as it is, never raised).

    The fit's numpy and scipy work (the LAES pretraining, the readout) then
    runs with the threads of its torch work: an idle OpenBLAS worker spins
    (busy-waits) after each parallel call, taking a core's share from the
    fit's own thread on a busy machine.
    """
    blas = _blas_controller()
    with contextlib.ExitStack() as stack:
        for info in blas.info():
            if info["num_threads"] > count:
                pool = blas.select(filepath=info["filepath"])
                stack.enter_context(pool.limit(limits=count))
        yield


@contextlib.contextmanager
def _torch_threads(n_threads, *, wait: bool = True, blas: bool = False):
    """``torch.set_num_threads(n_threads)`` inside the block (None: as is).

    With ``blas=True`` the BLAS thread pools of numpy and scipy are limited
    to the same count (:func:`_blas_limits`; a fit, whose pretraining and
    readout use them, not a prediction). With ``wait=False``
    (``n_threads='auto'``) a call whose thread count another thread of the
    process holds runs as is instead of waiting: fits in threads (joblib's
    threading backend) stay concurrent.
    """
    if n_threads is None:
        yield
        return
    count = machine_threads(n_threads)
    if count == torch.get_num_threads() and not blas:
        yield
        return
    if not _TORCH_THREADS_LOCK.acquire(blocking=wait):
        yield
        return
    try:
        with contextlib.ExitStack() as stack:
            if blas:
                stack.enter_context(_blas_limits(count))
            previous = torch.get_num_threads()
            if count != previous:
                torch.set_num_threads(count)
                stack.callback(torch.set_num_threads, previous)
            yield
    finally:
        _TORCH_THREADS_LOCK.release()


@contextlib.contextmanager
def _seeded_torch(seed: int):
    """Seed torch's global RNGs, set its default dtype to float32 (the
    training precision) and turn gradients on inside the block (a fit);
    restore all three afterwards.

    Under a float64 default the modules and draws of a fit were float64
    while its data are float32: the fit failed, and a seed drew other
    starting weights. Inside the caller's ``torch.no_grad()`` or
    ``torch.inference_mode()`` the fit failed at its first backward pass.
    """
    devices = (
        list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    )
    # grad and inference modes are per thread: no lock needed for them
    with (
        _TORCH_RNG_LOCK,
        torch.random.fork_rng(devices=devices),
        torch.inference_mode(False),
        torch.enable_grad(),
    ):
        torch.manual_seed(seed)
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float32)
        try:
            yield
        finally:
            torch.set_default_dtype(default)
