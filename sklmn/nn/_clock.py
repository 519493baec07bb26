"""The clock and block structure shared by the multi-scale modules.

:class:`~sklmn.nn.MultiScaleLMN` and :class:`~sklmn.nn.ClockworkRNN` split
their recurrent state into ``g`` modules ordered from fastest to slowest;
module ``k`` (0-based) has a period ``p_k`` and is updated at the steps ``t``
with ``t mod p_k = 0`` (``t`` counted from 0 at each sequence's first
element). A module reads itself and the slower modules: the recurrent matrix
is block upper-triangular (:func:`block_upper_mask`). With nested periods the
active modules form a prefix (:func:`is_nested`, :func:`active_prefix_counts`).
A clocked state carries an int64 step counter per sequence
(:func:`check_step_counter`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "active_modules",
    "active_prefix_counts",
    "block_upper_mask",
    "check_module_sizes",
    "check_bidirectional_counter",
    "check_periods",
    "check_state_tensor",
    "check_step_counter",
    "default_periods",
    "is_nested",
    "module_of_units",
    "module_sizes",
    "uniform_start",
]


def default_periods(n_modules: int) -> tuple[int, ...]:
    """Periods ``1, 2, ..., 2**(g-1)`` (Carta et al. 2021 eq. 6: ``t mod 2^(k-1)``)."""
    return tuple(2**k for k in range(n_modules))


def check_periods(periods: object, n_modules: int) -> tuple[int, ...]:
    """Validate strictly increasing positive integer periods, one per module."""
    if periods is None:
        return default_periods(n_modules)
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


def is_nested(periods: Sequence[int]) -> bool:
    """Whether each period divides the next, so active modules form a prefix."""
    return all(b % a == 0 for a, b in zip(periods, periods[1:], strict=False))


def active_modules(periods: Sequence[int], t: Tensor) -> Tensor:
    """Boolean ``(..., g)`` tensor: module ``k`` is updated at step ``t``."""
    p = torch.tensor(periods, dtype=torch.int64, device=t.device)
    return (t.unsqueeze(-1) % p) == 0


def active_prefix_counts(
    periods: Sequence[int], t_start: int, n_steps: int
) -> list[int]:
    """Number of active modules at steps ``t_start .. t_start + n_steps - 1``.

    Only meaningful for nested periods, where the active modules are the
    first ``count`` ones (Carta et al. 2021 eq. 9: ``i_max^t``).
    """
    t = np.arange(t_start, t_start + n_steps, dtype=np.int64)
    return (t[:, None] % np.asarray(periods, dtype=np.int64) == 0).sum(1).tolist()


def block_upper_mask(
    n_modules: int,
    block_size: int | tuple,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> Tensor:
    """0/1 mask of the block upper-triangular recurrent matrix.

    Entry ``[i, j]`` is 1 when the module of row ``i`` reads the module of
    column ``j``, i.e. when ``module(j) >= module(i)`` (a module reads itself
    and the slower modules). ``block_size`` is the units of every module, or
    a tuple of ``n_modules`` sizes.
    """
    module = module_of_units(n_modules, block_size, device=device)
    return (module.unsqueeze(0) >= module.unsqueeze(1)).to(dtype=dtype)


def check_module_sizes(memory_size: object, n_modules: int) -> int | tuple:
    """Validate the memory units of a multi-scale network's modules.

    ``memory_size`` is a positive int (every module) or a sequence of
    ``n_modules`` positive ints (fastest module first). Returns the int, or
    the tuple of ints (a sequence of equal sizes returns the int).

    Examples
    --------
    >>> check_module_sizes(4, 3), check_module_sizes([4, 2], 2)
    (4, (4, 2))
    >>> check_module_sizes((3, 3), 2)
    3
    """
    if isinstance(memory_size, int | np.integer) and not isinstance(memory_size, bool):
        if memory_size < 1:
            raise ValueError(f"memory_size must be a positive int, got {memory_size!r}")
        return int(memory_size)
    sizes = tuple(memory_size) if isinstance(memory_size, tuple | list) else None
    if (
        sizes is None
        or len(sizes) != n_modules
        or any(
            isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1
            for n in sizes
        )
    ):
        raise ValueError(
            "memory_size must be a positive int or a sequence of "
            f"{n_modules} positive ints (one per module), got {memory_size!r}"
        )
    sizes = tuple(int(n) for n in sizes)
    return sizes[0] if len(set(sizes)) == 1 else sizes


def module_sizes(memory_size: int | tuple, n_modules: int) -> tuple[int, ...]:
    """The units of every module: ``n_modules`` times an int, or the tuple.

    Examples
    --------
    >>> module_sizes(4, 3), module_sizes((4, 2), 2)
    ((4, 4, 4), (4, 2))
    """
    if isinstance(memory_size, int | np.integer):
        return (int(memory_size),) * n_modules
    return tuple(memory_size)


def module_of_units(
    n_modules: int, block_size: int | tuple, device: torch.device | str | None = None
) -> Tensor:
    """The module index of every unit (int64), for modules of ``block_size``
    units each or of the sizes in the tuple ``block_size``."""
    sizes = module_sizes(block_size, n_modules)
    if len(sizes) != n_modules:
        raise ValueError(f"{n_modules} module sizes expected, got {block_size!r}")
    return torch.repeat_interleave(
        torch.arange(n_modules, device=device),
        torch.tensor(sizes, dtype=torch.int64, device=device),
    )


def check_step_counter(
    t: object, n: int, device: torch.device, name: str = "state"
) -> Tensor:
    """Validate the step counter of a clocked state (int64 ``(N,)``, >= 0)."""
    if isinstance(t, int | np.integer) and not isinstance(t, bool):
        t = torch.full((n,), int(t), dtype=torch.int64)
    if (
        not isinstance(t, Tensor)
        or t.is_floating_point()
        or t.is_complex()
        or t.dtype == torch.bool  # a mask, not a step index
        or t.shape != (n,)
    ):
        raise ValueError(
            f"{name} step counter must be an int or an int64 tensor of shape "
            f"({n},), got {t!r}"
        )
    if n > 0 and int(t.min()) < 0:
        raise ValueError(f"{name} step counter must be >= 0, got {t!r}")
    return t.to(device=device, dtype=torch.int64)


def check_state_tensor(
    value: object, shape: tuple[int, ...], like: Tensor, name: str
) -> Tensor:
    """Validate the shape of a state tensor; move it to ``like``'s device/dtype."""
    if not isinstance(value, Tensor) or tuple(value.shape) != shape:
        got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
        raise ValueError(f"{name} must be a tensor of shape {shape}, got {got}")
    return value.to(device=like.device, dtype=like.dtype)


def uniform_start(t0: Tensor) -> int | None:
    """The common start step of a batch, or None when sequences differ."""
    if t0.numel() == 0:
        return 0
    lo, hi = int(t0.min()), int(t0.max())
    return lo if lo == hi else None


def check_bidirectional_counter(
    t: object, n: int, device: torch.device, owner: str
) -> None:
    """A bidirectional clocked module reads every sequence from its first
    step: the step counter of a given state must be zero."""
    t = check_step_counter(t, n, device)
    if n > 0 and bool((t != 0).any()):
        raise ValueError(
            f"a bidirectional {owner} reads every sequence from its "
            "first step: the state step counter must be 0, got "
            f"{t.tolist()!r:.60}"
        )
