"""Validation helpers of the estimators: ``class_weight`` (checked like
``sample_weight``), the targets given to ``score`` and ``fit``'s validation
data, the device."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import torch


def check_class_weight(class_weight, classes: np.ndarray) -> None:
    """Refuse a ``class_weight`` dict that ``sample_weight`` would refuse.

    The weights must be finite, non-negative numbers, not all zero, and
    every key must be a class of ``y`` (``classes``).

    Parameters
    ----------
    class_weight : dict, 'balanced' or None
        The classifier's parameter ('balanced' and None need no check).
    classes : ndarray
        The classes of the training target.

    Raises
    ------
    ValueError
        Naming the bad label and weight.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators._checks import check_class_weight
    >>> check_class_weight({0: 1.0, 1: 2.0}, np.array([0, 1]))
    >>> check_class_weight({0: -1, 1: 3}, np.array([0, 1]))
    Traceback (most recent call last):
    ...
    ValueError: class_weight must hold non-negative weights, got -1 for class 0.
    """
    if not isinstance(class_weight, dict):
        return
    known = set(classes.tolist())
    unknown = [label for label in class_weight if label not in known]
    if unknown:
        raise ValueError(
            f"class_weight names labels that are not classes of y: "
            f"{unknown[:10]!r:.200}; the classes are {classes.tolist()!r:.200}."
        )
    for label, weight in class_weight.items():
        if isinstance(weight, bool | np.bool_) or not isinstance(weight, Real):
            raise ValueError(
                f"class_weight must map classes to numbers, got {weight!r:.100} "
                f"for class {label!r}."
            )
        if not math.isfinite(weight):
            raise ValueError(
                f"class_weight must hold finite weights, got {weight!r} for class "
                f"{label!r}."
            )
        if weight < 0:
            raise ValueError(
                f"class_weight must hold non-negative weights, got {weight!r} for "
                f"class {label!r}."
            )
    if class_weight and not any(class_weight.values()) and len(class_weight) == len(
        known
    ):
        raise ValueError(
            "class_weight must contain at least one non-zero weight, got "
            f"{class_weight!r:.200}."
        )


def float_values(y) -> np.ndarray:
    """``y`` as a float64 array for a range check (empty when it is not
    numeric: the scorer's own validation reports that).

    Examples
    --------
    >>> from sklmn.estimators._checks import float_values
    >>> float_values([1, 2]).tolist(), float_values(["a"]).size
    ([1.0, 2.0], 0)
    """
    try:
        values = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return np.zeros(0)
    return values[np.isfinite(values)] if values.size else values


def check_same_target_kind(context, problem: str, n_classes: int, est) -> None:
    """Refuse a validation target (``context='y_val'``) of another kind or
    number of classes than the training target ``y`` of ``est``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from sklmn.estimators._checks import check_same_target_kind
    >>> est = SimpleNamespace(_problem="multiclass", classes_=[0, 1])
    >>> check_same_target_kind(None, "multilabel", 3, est)  # not y_val
    >>> check_same_target_kind("y_val", "multilabel", 3, est)
    Traceback (most recent call last):
    ...
    ValueError: y_val must be the same kind of target as y, ...
    """
    if context != "y_val":
        return
    raise ValueError(
        f"y_val must be the same kind of target as y, with its classes; got a "
        f"{problem} target with {n_classes} classes, y is a {est._problem} "
        f"target with {len(est.classes_)}."
    )


def check_device(device, requested) -> None:
    """Refuse torch devices that hold no data (``'meta'``).

    Examples
    --------
    >>> import torch
    >>> from sklmn.estimators._checks import check_device
    >>> check_device(torch.device("cpu"), "cpu")
    >>> check_device(torch.device("meta"), "meta")
    Traceback (most recent call last):
    ...
    ValueError: device='meta' cannot train or predict: ...
    """
    if device.type == "meta":
        raise ValueError(
            f"device={requested!r} cannot train or predict: tensors on the meta "
            "device hold no data. Use device='cpu' or 'cuda'."
        )


def resolve_device(device) -> torch.device:
    """The torch device of an estimator's ``device`` parameter, refused with a
    ``ValueError`` naming it when it is not a device, holds no data
    (``'meta'``) or is a CUDA device on a machine without CUDA.

    Examples
    --------
    >>> from sklmn.estimators._checks import resolve_device
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("gpu")
    Traceback (most recent call last):
    ...
    ValueError: device must be a torch device such as 'cpu' or 'cuda', got 'gpu'
    """
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(
            f"device must be a torch device such as 'cpu' or 'cuda', got "
            f"{device!r}"
        ) from None
    check_device(resolved, device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available "
            "on this machine; use device='cpu'."
        )
    return resolved
