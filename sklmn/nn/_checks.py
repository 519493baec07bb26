"""Validation of the arguments and inputs of the recurrent modules of
:mod:`sklmn.nn`, with messages that name the bad value."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "check_bool",
    "check_choice",
    "check_dropout",
    "check_input",
    "check_nonnegative_float",
    "check_positive_int",
    "check_step_input",
]


# --------------------------------------------------------------------------- #
# Parameter validation
# --------------------------------------------------------------------------- #
def check_positive_int(name: str, value: object) -> int:
    """Validate that ``value`` is a positive integer (bools are rejected).

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer >= 1.

    Examples
    --------
    >>> check_positive_int("hidden_size", 3)
    3
    >>> check_positive_int("hidden_size", 0)
    Traceback (most recent call last):
    ...
    ValueError: hidden_size must be a positive int, got 0
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or int(value) < 1
    ):
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_nonnegative_float(name: str, value: object) -> float:
    """Validate that ``value`` is a finite real number >= 0.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : float
        ``value`` as a Python float.

    Raises
    ------
    ValueError
        If ``value`` is not a finite non-negative real number.

    Examples
    --------
    >>> check_nonnegative_float("norm_penalty", 1)
    1.0
    >>> check_nonnegative_float("norm_penalty", -0.5)
    Traceback (most recent call last):
    ...
    ValueError: norm_penalty must be a finite float >= 0, got -0.5
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (0.0 <= float(value) < float("inf"))
    ):
        raise ValueError(f"{name} must be a finite float >= 0, got {value!r}")
    return float(value)


def check_dropout(name: str, value: object) -> float:
    """Validate a dropout probability in ``[0, 1)``.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : float
        ``value`` as a Python float.

    Raises
    ------
    ValueError
        If ``value`` is not a real number in ``[0, 1)``.

    Examples
    --------
    >>> check_dropout("dropout", 0.25)
    0.25
    >>> check_dropout("dropout", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: dropout must be a float in [0, 1), got 1.0
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (0.0 <= float(value) < 1.0)
    ):
        raise ValueError(f"{name} must be a float in [0, 1), got {value!r}")
    return float(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """Validate that ``value`` is one of ``choices``.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.
    choices : sequence of str
        Allowed values.

    Returns
    -------
    value : str
        The validated value.

    Raises
    ------
    ValueError
        If ``value`` is not in ``choices``.

    Examples
    --------
    >>> check_choice("output", "memory", ("memory", "hidden"))
    'memory'
    >>> check_choice("output", "state", ("memory", "hidden"))
    Traceback (most recent call last):
    ...
    ValueError: output must be one of ('memory', 'hidden'), got 'state'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)!r}, got {value!r}")
    return value


def check_bool(name: str, value: object) -> bool:
    """Validate that ``value`` is a bool.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : bool
        The validated value.

    Raises
    ------
    ValueError
        If ``value`` is not a bool.

    Examples
    --------
    >>> check_bool("bidirectional", True)
    True
    >>> check_bool("bidirectional", "yes")
    Traceback (most recent call last):
    ...
    ValueError: bidirectional must be a bool, got 'yes'
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return value


# --------------------------------------------------------------------------- #
# Input validation
# --------------------------------------------------------------------------- #
def check_input(
    x: Tensor,
    lengths: Tensor | Sequence[int] | None,
    input_size: int | None = None,
    *,
    names: tuple[str, str] = ("x", "input_size"),
) -> tuple[Tensor | None, int]:
    """Validate a batch-first input and its lengths.

    Parameters
    ----------
    x : Tensor of shape (N, T, input_size)
        Batch-first floating point input.
    lengths : Tensor or sequence of int of shape (N,), or None
        Valid length of every sequence, values in ``1..T``. ``None`` means
        every sequence has length ``T``.
    input_size : int, optional
        Expected size of the last dimension of ``x``.
    names : tuple of str, default=("x", "input_size")
        How the messages name ``x`` and ``input_size`` (the caller's names).

    Returns
    -------
    lengths : Tensor of shape (N,) or None
        int64 lengths on the CPU, or ``None`` when ``lengths`` is ``None`` or
        every length equals ``T`` (fast path: no masking needed).
    T : int
        Number of time steps.

    Raises
    ------
    ValueError
        On wrong dimensions, sizes, dtypes or out-of-range lengths.

    Examples
    --------
    >>> x = torch.zeros(2, 5, 3)
    >>> check_input(x, [5, 2], input_size=3)
    (tensor([5, 2]), 5)
    >>> check_input(x, None)
    (None, 5)
    >>> check_input(x, [5, 5])
    (None, 5)
    """
    x_name, size_name = names
    if not isinstance(x, Tensor):
        raise ValueError(f"{x_name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3:
        raise ValueError(
            f"{x_name} must have shape (N, T, {size_name}), got {tuple(x.shape)} "
            f"({x.dim()} dimensions)"
        )
    if not x.is_floating_point():
        raise ValueError(
            f"{x_name} must be a floating point tensor, got dtype {x.dtype}"
        )
    n, t = x.shape[0], x.shape[1]
    if input_size is not None and x.shape[2] != input_size:
        raise ValueError(
            f"{x_name} has {x.shape[2]} features per time step, expected "
            f"{size_name}={input_size}"
        )
    if t < 1:
        raise ValueError(f"{x_name} must have at least one time step, got T={t}")
    if lengths is None:
        return None, t
    if isinstance(lengths, Tensor):
        # a bool tensor is a mask (all True would read as lengths of 1)
        if (
            lengths.is_floating_point()
            or lengths.is_complex()
            or lengths.dtype == torch.bool
        ):
            raise ValueError(f"lengths must be integers, got dtype {lengths.dtype}")
        lengths = lengths.detach().to(device="cpu", dtype=torch.int64)
    else:
        values = list(lengths)
        if any(isinstance(v, bool | np.bool_) for v in values):
            raise ValueError(f"lengths must be integers, got booleans {values!r:.100}")
        lengths = torch.as_tensor(values, dtype=torch.int64)
        # the cast truncates: 2.5 would silently become 2
        if not torch.equal(
            lengths.double(), torch.as_tensor(values, dtype=torch.float64)
        ):
            raise ValueError(f"lengths must be integers, got {values!r:.100}")
    if lengths.shape != (n,):
        raise ValueError(
            f"lengths must have shape ({n},) to match x, got {tuple(lengths.shape)}"
        )
    if n == 0:  # every length is T, vacuously
        return None, t
    lo, hi = int(lengths.min()), int(lengths.max())
    if lo < 1 or hi > t:
        raise ValueError(
            f"lengths must be in 1..{t} (T of x), got values in {lo}..{hi}"
        )
    if lo == t:
        return None, t
    return lengths, t


def check_step_input(x_t: Tensor, input_size: int) -> None:
    """Validate one time step ``x_t`` of shape ``(N, input_size)``.

    Parameters
    ----------
    x_t : Tensor of shape (N, input_size)
        Input at one time step.
    input_size : int
        Expected number of features.

    Raises
    ------
    ValueError
        If ``x_t`` has the wrong shape or is not floating point.

    Examples
    --------
    >>> check_step_input(torch.zeros(4, 3), 3)
    >>> check_step_input(torch.zeros(4, 2, 3), 3)
    Traceback (most recent call last):
    ...
    ValueError: x_t must have shape (N, 3), got (4, 2, 3)
    """
    if not isinstance(x_t, Tensor):
        raise ValueError(f"x_t must be a torch.Tensor, got {type(x_t).__name__}")
    if x_t.dim() != 2 or x_t.shape[1] != input_size:
        raise ValueError(
            f"x_t must have shape (N, {input_size}), got {tuple(x_t.shape)}"
        )
    if not x_t.is_floating_point():
        raise ValueError(f"x_t must be a floating point tensor, got {x_t.dtype}")
