"""Shared helpers of the loaders of the papers' real data sets (files the
user already has: nothing is downloaded)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

__all__: list[str] = []


def check_path(name: str, value) -> Path:
    """``value`` as a Path (str or path-like, ``~`` expanded)."""
    if isinstance(value, bool) or not isinstance(value, str | os.PathLike):
        raise TypeError(
            f"{name} must be a str or a path-like object, got "
            f"{type(value).__name__}: {value!r}."
        )
    return Path(value).expanduser()


def require_dir(path: Path, what: str, layout: str) -> Path:
    """``path`` if it is a folder, else a FileNotFoundError naming ``layout``."""
    if not path.is_dir():
        raise FileNotFoundError(
            f"{what}: {str(path)!r} is not a folder. Expected layout: {layout}"
        )
    return path


def find_child(folder: Path, names, what: str, layout: str) -> Path:
    """The first entry of ``folder`` whose name is one of ``names`` (compared
    without case), else a FileNotFoundError naming the expected layout."""
    wanted = [n.lower() for n in names]
    entries = {entry.name.lower(): entry for entry in sorted(folder.iterdir())}
    for name in wanted:
        if name in entries:
            return entries[name]
    raise FileNotFoundError(
        f"{what}: none of {list(names)} found in {str(folder)!r}. "
        f"Expected layout: {layout}"
    )


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``, gunzipped when the file starts with the gzip
    magic number."""
    with open(path, "rb") as stream:
        head = stream.read(2)
    if head == b"\x1f\x8b":
        with gzip.open(path, "rb") as stream:
            return stream.read()
    return path.read_bytes()
