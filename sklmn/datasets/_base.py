"""Shared helpers of the dataset loaders: cache folder and bundled files."""

from __future__ import annotations

import numbers
import os
from importlib import resources
from pathlib import Path

from sklearn.utils import Bunch

__all__ = ["get_data_home"]

_ENV_VAR = "SKLMN_DATA"


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the folder where sklmn caches converted datasets.

    Nothing is ever downloaded: the folder only holds files that sklmn derives
    locally (for example the Bach chorale piano rolls converted from the
    ``music21`` corpus at a non-default time step).

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        Folder to use. When None, the environment variable ``SKLMN_DATA`` is
        used if set, else ``~/.cache/sklmn``. ``~`` is expanded.

    Returns
    -------
    data_home : pathlib.Path
        The folder, created if it did not exist.

    Examples
    --------
    >>> import tempfile
    >>> from sklmn.datasets import get_data_home
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     get_data_home(tmp).is_dir()
    True
    """
    if data_home is None:
        data_home = os.environ.get(_ENV_VAR) or os.path.join("~", ".cache", "sklmn")
    if not isinstance(data_home, str | os.PathLike):
        raise TypeError(
            "data_home must be a str, a path-like object or None, got "
            f"{type(data_home).__name__}: {data_home!r}."
        )
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _bundled_path(name: str) -> Path:
    """Path of a file shipped in ``sklmn/datasets/data/``."""
    return Path(str(resources.files("sklmn.datasets").joinpath("data", name)))


def _split_result(X, y, parts: dict, split, return_X_y: bool, **extra):
    """What a loader with splits returns: ``(X, y)`` of ``split`` (the whole
    set for None) with ``return_X_y``, else the Bunch of ``data`` and
    ``target`` (the same), the ``parts`` (``X_<name>``, ``y_<name>``, ...)
    and the ``extra`` fields."""
    if split is not None:
        X, y = parts[f"X_{split}"], parts[f"y_{split}"]
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, **parts, **extra)


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            f"{name} must be a bool, got {type(value).__name__}: {value!r}."
        )
    return value


def check_int(name: str, value, minimum: int) -> int:
    """Validate an integer parameter of a loader or generator (>= ``minimum``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int, got {type(value).__name__}: {value!r}."
        )
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}.")
    return int(value)
