"""Validation of the classifiers' ``class_weight`` (like ``sample_weight``)
and of the targets given to ``score``."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np


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
    >>> from sklmn.estimators._weights import check_class_weight
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
    >>> from sklmn.estimators._weights import float_values
    >>> float_values([1, 2]).tolist(), float_values(["a"]).size
    ([1.0, 2.0], 0)
    """
    try:
        values = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return np.zeros(0)
    return values[np.isfinite(values)] if values.size else values
