"""The archive format shared by the writer and the reader: its names and
limits, the errors of :func:`~sklmn.persistence.load` and the allow-list."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from ..utils._registry import registered_safe_classes

#: Version of the archive layout written by :func:`save`.
FORMAT_VERSION = 1

_FORMAT_NAME = "sklmn-safe-estimator"
_MANIFEST = "manifest.json"


#: Default ``max_bytes`` of :func:`load`: the most bytes the archive members
#: it reads may hold uncompressed (1 GiB).
MAX_BYTES = 2**30

_MAX_MEMBERS = 100_000
_MAX_DEPTH = 64  # nesting of JSON values and estimators

#: the keys of a dict saved as ``[key, value]`` pairs (a dict with keys other
#: than strings, such as ``class_weight={0: 2.0}``), read back as such
_DICT_KEY_TYPES = (bool, int, float, str, type(None), np.bool_, np.integer, np.floating)


class ModelFileError(ValueError):
    """A file cannot be loaded by :func:`load`: not an archive written by
    :func:`save`, corrupt, tampered with, or exceeding the loader's limits.

    Every failure of :func:`load` to read a file it could open raises this
    exception (or its subclass :class:`UntrustedTypeError`).

    Examples
    --------
    >>> from sklmn.persistence import ModelFileError
    >>> issubclass(ModelFileError, ValueError)
    True
    """


class UntrustedTypeError(ModelFileError):
    """A saved file names a class outside the allow-list of :func:`load`.

    Examples
    --------
    >>> from sklmn.persistence import ModelFileError, UntrustedTypeError
    >>> issubclass(UntrustedTypeError, ModelFileError)
    True
    """


#: Public names of the classes :func:`load` accepts without ``trusted=`` (the
#: estimators, transformers and pretrainers of sklmn, registered by their
#: packages when :mod:`sklmn` is imported).
SAFE_CLASSES: frozenset[str] = frozenset(registered_safe_classes())


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


_KINDS = {
    "int": _is_int,
    # an int, or a tuple of positive ints (the sizes of a network's modules)
    "sizes": lambda v: _is_int(v)
    or (isinstance(v, tuple) and bool(v) and all(_is_int(n) and n > 0 for n in v)),
    "float": lambda v: (
        isinstance(v, int | float | np.integer | np.floating)
        and not isinstance(v, bool | np.bool_)
    ),
    "bool": lambda v: isinstance(v, bool | np.bool_),
    "str": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, np.ndarray),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "estimator": lambda v: isinstance(v, BaseEstimator),
}


def _first_nonfinite(value: Any, depth: int = 0):
    """A non-finite number in ``value`` (lists, tuples, dicts, arrays), or
    None; nested estimators are checked on their own."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, float | np.floating | complex | np.complexfloating):
        return None if np.isfinite(value) else value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and value.size:
            bad = ~np.isfinite(value)
            if bad.any():
                return value.reshape(-1)[np.argmax(bad.reshape(-1))]
        return None
    if isinstance(value, list | tuple):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return None
    for item in items:
        found = _first_nonfinite(item, depth + 1)
        if found is not None:
            return found
    return None

