"""Process-wide torch state of the estimators: threads and seeded RNG.

torch's intra-op thread count and its global random generators belong to
the process, not to an estimator: fits that set them take turns through the
locks here (``n_threads`` and ``random_state`` of the estimators).
"""

from __future__ import annotations

import contextlib
import threading

import torch

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


@contextlib.contextmanager
def _torch_threads(n_threads, *, wait: bool = True):
    """``torch.set_num_threads(n_threads)`` inside the block (None: as is).

    With ``wait=False`` (``n_threads='auto'``) a call whose thread count
    another thread of the process holds runs as is instead of waiting: fits
    in threads (joblib's threading backend) stay concurrent.
    """
    if n_threads is None or machine_threads(n_threads) == torch.get_num_threads():
        yield
        return
    if not _TORCH_THREADS_LOCK.acquire(blocking=wait):
        yield
        return
    try:
        previous = torch.get_num_threads()
        torch.set_num_threads(machine_threads(n_threads))
        try:
            yield
        finally:
            torch.set_num_threads(previous)
    finally:
        _TORCH_THREADS_LOCK.release()


@contextlib.contextmanager
def _seeded_torch(seed: int):
    """Seed torch's global RNGs inside the block and restore them afterwards."""
    devices = (
        list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    )
    with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
