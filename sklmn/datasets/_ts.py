"""Reader of the ``.ts`` text format of the UCR/UEA time series archives.

Written from the format's description (the ``.ts`` file format pages of the
aeon and sktime documentation): a file holds optional ``#`` comment lines, a
header of ``@keyword value`` lines closed by ``@data``, then one case per
line. Within a case, dimensions (channels) are separated by ``:``, the values
of one dimension by ``,``, ``?`` marks a missing value, and the last
``:``-field is the class label (``@classLabel true``) or the numeric target
(``@targetLabel true``).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

__all__ = ["load_ts_file"]

_MISSING_OPTIONS = ("raise", "interpolate")
_BOOL_TAGS = {
    "timestamps": "@timeStamps",
    "missing": "@missing",
    "univariate": "@univariate",
    "equallength": "@equalLength",
    "targetlabel": "@targetLabel",
}
_INT_TAGS = {
    "dimension": "@dimensions",
    "dimensions": "@dimensions",
    "serieslength": "@seriesLength",
}


def load_ts_file(path, *, missing="raise", return_metadata=False):
    """Read a ``.ts`` file of the UCR/UEA archives into sklmn's ragged layout.

    Parameters
    ----------
    path : str, path-like or file object
        The file: a path, a binary or text file object (for example
        ``zipfile.ZipFile.open(member)``, to read straight from a wheel or a
        zip archive), or an object with an ``open()`` method such as
        :class:`zipfile.Path` or an :mod:`importlib.resources` traversable.
        The text must be UTF-8 (a byte-order mark is ignored).
    missing : {'raise', 'interpolate'}, default='raise'
        What to do with missing values (``?``, or ``NaN`` written out) that
        are not trailing padding. Time steps missing in *every* dimension at
        the end of a case are always dropped: the case is simply shorter
        (sklmn's padding convention). Any other missing value, including a
        dimension shorter than the other dimensions of its case, raises a
        ValueError naming the line and the dimension with ``'raise'``. With
        ``'interpolate'`` it is filled by linear interpolation between the
        observed values of its dimension, and by the nearest observed value
        before the first or after the last one (so a shorter dimension is
        extended with its last value). A dimension with no observed value
        raises in both modes.
    return_metadata : bool, default=False
        Also return a dict describing the header and the content.

    Returns
    -------
    X : list of ndarray of shape (T_i, n_dimensions), dtype float64
        One array per case, time first (sklmn's variable-length layout;
        every estimator accepts it as is).
    y : ndarray of shape (n_cases,) or None
        Class labels as strings, exactly as written in the file, when the
        header says ``@classLabel true``; floats when it says
        ``@targetLabel true`` (regression); None when the file has no labels.
    metadata : dict
        Only when ``return_metadata=True``: ``problem_name`` (str or None),
        ``univariate``, ``equal_length``, ``missing`` (the header's flags,
        None when absent), ``series_length`` (int or None), ``n_dimensions``,
        ``class_labels`` (list of str or None), ``task``
        (``'classification'``, ``'regression'`` or None), ``n_cases`` and
        ``n_filled`` (values filled by ``missing='interpolate'``).

    Raises
    ------
    ValueError
        For a malformed header, ``@timeStamps true`` (time-stamped series are
        not supported), a case with the wrong number of dimensions or length,
        a value that is not a number, an infinite value, a class label not
        declared by ``@classLabel``, a non-numeric regression target, or a
        missing value inside a series (with ``missing='raise'``). Messages
        start with the file's name and the line.

    Notes
    -----
    Header keywords are case-insensitive (``@timestamps`` and
    ``@timeStamps`` are the same); unknown keywords are ignored with a
    warning. Comment lines start with ``#`` and may appear anywhere. When the
    header declares ``@equalLength true`` with ``@seriesLength n``, every
    dimension of every case must hold ``n`` values (``?`` included).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklmn.datasets import load_ts_file
    >>> text = '''# two cases, two dimensions, the second case is shorter
    ... @problemName toy
    ... @univariate false
    ... @dimensions 2
    ... @equalLength false
    ... @classLabel true up down
    ... @data
    ... 1,2,3:4,5,6:up
    ... 7,8:9,10:down
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "toy.ts")
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    ...     X, y = load_ts_file(path)
    >>> [x.shape for x in X]
    [(3, 2), (2, 2)]
    >>> X[1].tolist()
    [[7.0, 9.0], [8.0, 10.0]]
    >>> y.tolist()
    ['up', 'down']

    A missing value inside a series is refused unless interpolated:

    >>> import io
    >>> gap = io.StringIO("@classLabel true a b\\n@data\\n1,?,3:a\\n")
    >>> load_ts_file(gap)
    Traceback (most recent call last):
    ...
    ValueError: StringIO: line 3, dimension 0: missing value at time step 1 ...
    >>> _ = gap.seek(0)
    >>> X, y = load_ts_file(gap, missing="interpolate")
    >>> X[0].ravel().tolist()
    [1.0, 2.0, 3.0]
    """
    if missing not in _MISSING_OPTIONS:
        raise ValueError(f"missing must be one of {_MISSING_OPTIONS}, got {missing!r}.")
    if not isinstance(return_metadata, bool):
        raise TypeError(
            "return_metadata must be a bool, got "
            f"{type(return_metadata).__name__}: {return_metadata!r}."
        )
    text, source = _read_text(path)
    parser = _Parser(source, missing)
    try:
        X, y = parser.parse(text)
    except ValueError as exc:  # say which file: the line alone is not enough
        raise ValueError(f"{source}: {exc}") from None
    if return_metadata:
        return X, y, parser.metadata(len(X))
    return X, y


def _read_text(path) -> tuple[str, str]:
    """Whole text of ``path`` (a path, a file object or an openable object)."""
    if isinstance(path, str | os.PathLike):
        source = os.fspath(path)
        with open(path, "rb") as f:
            raw = f.read()
    elif hasattr(path, "read"):
        source = getattr(path, "name", None) or type(path).__name__
        raw = path.read()
    elif hasattr(path, "open"):
        source = str(path)
        with path.open("rb") as f:
            raw = f.read()
    else:
        raise TypeError(
            "path must be a str, a path-like object, a file object or an object "
            f"with an open() method, got {type(path).__name__}: {path!r}."
        )
    if isinstance(raw, bytes | bytearray):
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source} is not UTF-8 text: {exc}") from None
    elif isinstance(raw, str):
        text = raw[1:] if raw.startswith("\ufeff") else raw
    else:
        raise TypeError(
            f"reading {source} returned {type(raw).__name__}, expected bytes or str."
        )
    return text, str(source)


def _parse_bool(value: str, tag: str, lineno: int) -> bool:
    low = value.lower()
    if low not in ("true", "false"):
        raise ValueError(f"line {lineno}: {tag} must be true or false, got {value!r}.")
    return low == "true"


class _Parser:
    """State of one parse: header fields, then cases."""

    def __init__(self, source: str, missing: str):
        self.source = source
        self.missing = missing
        self.header: dict[str, object] = {}
        self.header_line: dict[str, int] = {}
        self.class_labels: list[str] | None = None
        self.n_dims: int | None = None
        self.n_dims_origin = ""  # where n_dims comes from, for error messages
        self.first_length: int | None = None
        self.n_filled = 0

    # -- header ---------------------------------------------------------------
    def _header_line(self, line: str, lineno: int) -> bool:
        """Record one ``@`` line; True when it is ``@data``."""
        parts = line[1:].split()
        if not parts:
            raise ValueError(f"line {lineno}: empty header keyword '@'.")
        key, values = parts[0].lower(), parts[1:]
        if key == "data":
            if values:
                raise ValueError(
                    f"line {lineno}: @data takes no value, got {' '.join(values)!r}."
                )
            return True
        canonical = "dimensions" if key == "dimension" else key
        if canonical in self.header_line:
            raise ValueError(
                f"line {lineno}: @{parts[0]} repeats the header keyword of line "
                f"{self.header_line[canonical]}."
            )
        if key == "problemname":
            self.header["problemname"] = " ".join(values) or None
        elif key in _BOOL_TAGS:
            tag = _BOOL_TAGS[key]
            if len(values) != 1:
                raise ValueError(
                    f"line {lineno}: {tag} takes one value (true or false), got "
                    f"{' '.join(values)!r}."
                )
            flag = _parse_bool(values[0], tag, lineno)
            if key == "timestamps" and flag:
                raise ValueError(
                    f"line {lineno}: @timeStamps true is not supported: sklmn reads "
                    "series of values at regular steps, not (timestamp, value) "
                    "pairs. Resample the series to a regular grid first."
                )
            self.header[key] = flag
        elif key in _INT_TAGS:
            tag = _INT_TAGS[key]
            try:
                (value,) = values
                number = int(value)
            except ValueError:
                raise ValueError(
                    f"line {lineno}: {tag} takes one positive integer, got "
                    f"{' '.join(values)!r}."
                ) from None
            if number < 1:
                raise ValueError(f"line {lineno}: {tag} must be >= 1, got {number}.")
            self.header[canonical] = number
        elif key == "classlabel":
            if not values:
                raise ValueError(
                    f"line {lineno}: @classLabel needs true (followed by the labels) "
                    "or false."
                )
            flag = _parse_bool(values[0], "@classLabel", lineno)
            if flag and len(values) < 2:
                raise ValueError(
                    f"line {lineno}: @classLabel true must be followed by the class "
                    "labels."
                )
            if not flag and len(values) > 1:
                raise ValueError(
                    f"line {lineno}: @classLabel false takes no labels, got "
                    f"{' '.join(values[1:])!r}."
                )
            self.header["classlabel"] = flag
            if flag:
                self.class_labels = list(dict.fromkeys(values[1:]))
        else:
            warnings.warn(
                f"{self.source}, line {lineno}: unknown header keyword @{parts[0]} "
                "ignored.",
                UserWarning,
                stacklevel=4,
            )
            return False
        self.header_line[canonical] = lineno
        return False

    def _check_header(self, lineno: int) -> None:
        h = self.header
        if h.get("classlabel") and h.get("targetlabel"):
            raise ValueError(
                f"line {self.header_line['targetlabel']}: @targetLabel true and "
                f"@classLabel true (line {self.header_line['classlabel']}) cannot "
                "both be set."
            )
        if "dimensions" in h:
            self.n_dims = int(h["dimensions"])
            line = self.header_line["dimensions"]
            self.n_dims_origin = f"declared by @dimensions on line {line}"
            if h.get("univariate") and self.n_dims != 1:
                raise ValueError(
                    f"line {line}: @dimensions {self.n_dims} contradicts "
                    f"@univariate true (line {self.header_line['univariate']})."
                )
        elif h.get("univariate"):
            self.n_dims = 1
            line = self.header_line["univariate"]
            self.n_dims_origin = f"declared by @univariate true on line {line}"

    # -- cases ------------------------------------------------------------------
    def _values(self, field: str, lineno: int, dim: int) -> np.ndarray:
        """Floats of one dimension; NaN for missing values."""
        tokens = [t.strip() for t in field.split(",")]
        if tokens == [""]:
            raise ValueError(f"line {lineno}, dimension {dim}: no values.")
        try:
            values = np.array(tokens, dtype=np.float64)
        except ValueError:
            values = np.empty(len(tokens))
            for i, tok in enumerate(tokens):
                if tok == "?":
                    values[i] = np.nan
                    continue
                try:
                    values[i] = float(tok)
                except ValueError:
                    raise ValueError(
                        f"line {lineno}, dimension {dim}: value {i} is {tok!r}, not a "
                        "number (missing values are written '?')."
                    ) from None
        if np.isinf(values).any():
            i = int(np.flatnonzero(np.isinf(values))[0])
            raise ValueError(
                f"line {lineno}, dimension {dim}: value {i} is {tokens[i]!r}; "
                "infinite values are not allowed."
            )
        return values

    def _case(self, line: str, lineno: int):
        fields = line.split(":")
        label = None
        if self.header.get("classlabel") or self.header.get("targetlabel"):
            if len(fields) < 2:
                raise ValueError(
                    f"line {lineno}: expected dimensions followed by ':' and a "
                    "label, found no ':'."
                )
            label = fields[-1].strip()
            fields = fields[:-1]
            if not label:
                raise ValueError(
                    f"line {lineno}: the label (after the last ':') is empty."
                )
        if self.n_dims is None:
            self.n_dims = len(fields)
            self.n_dims_origin = f"as the first case, on line {lineno}"
        elif len(fields) != self.n_dims:
            raise ValueError(
                f"line {lineno}: the case has {len(fields)} dimension(s), expected "
                f"{self.n_dims} ({self.n_dims_origin})."
            )
        dims = [self._values(f, lineno, j) for j, f in enumerate(fields)]
        self._check_lengths(dims, lineno)
        return self._assemble(dims, lineno), self._label(label, lineno)

    def _check_lengths(self, dims: list[np.ndarray], lineno: int) -> None:
        if not self.header.get("equallength"):
            return
        expected = self.header.get("serieslength", self.first_length)
        where = (
            f"@seriesLength on line {self.header_line['serieslength']}"
            if "serieslength" in self.header
            else "@equalLength true and the first case"
        )
        for j, d in enumerate(dims):
            if expected is None:
                self.first_length = expected = len(d)
            elif len(d) != expected:
                raise ValueError(
                    f"line {lineno}, dimension {j}: {len(d)} values, expected "
                    f"{expected} ({where})."
                )

    def _assemble(self, dims: list[np.ndarray], lineno: int) -> np.ndarray:
        T = max(len(d) for d in dims)
        case = np.full((T, len(dims)), np.nan)
        for j, d in enumerate(dims):
            case[: len(d), j] = d
        observed = ~np.isnan(case).all(axis=1)
        if not observed.any():
            raise ValueError(f"line {lineno}: the case has no observed value.")
        case = case[: int(np.flatnonzero(observed)[-1]) + 1]
        if not np.isnan(case).any():
            return case
        for j in range(case.shape[1]):
            col = case[:, j]
            gaps = np.isnan(col)
            if not gaps.any():
                continue
            if gaps.all():
                raise ValueError(
                    f"line {lineno}, dimension {j}: no observed value in this "
                    "dimension."
                )
            if self.missing == "raise":
                t = int(np.flatnonzero(gaps)[0])
                if t >= len(dims[j]):
                    raise ValueError(
                        f"line {lineno}, dimension {j}: {len(dims[j])} values but "
                        f"the case is {len(col)} steps long; pass "
                        "missing='interpolate' to extend it with its last value."
                    )
                raise ValueError(
                    f"line {lineno}, dimension {j}: missing value at time step {t} "
                    "inside the series (sklmn only accepts trailing padding missing "
                    "in every dimension); pass missing='interpolate' to fill it."
                )
            steps = np.arange(len(col))
            col[gaps] = np.interp(steps[gaps], steps[~gaps], col[~gaps])
            self.n_filled += int(gaps.sum())
        return case

    def _label(self, label: str | None, lineno: int):
        if label is None:
            return None
        if self.header.get("targetlabel"):
            try:
                value = float(label)
            except ValueError:
                raise ValueError(
                    f"line {lineno}: regression target {label!r} is not a number."
                ) from None
            if not math.isfinite(value):
                raise ValueError(
                    f"line {lineno}: regression target {label!r} is not finite."
                )
            return value
        if label not in self.class_labels:
            raise ValueError(
                f"line {lineno}: class label {label!r} is not among the labels "
                f"declared by @classLabel (line {self.header_line['classlabel']}): "
                f"{self.class_labels}."
            )
        return label

    # -- driver -----------------------------------------------------------------
    def parse(self, text: str):
        in_data = False
        X, labels = [], []
        for lineno, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if not in_data:
                if not line.startswith("@"):
                    raise ValueError(
                        f"line {lineno}: data line before the @data header line."
                    )
                if self._header_line(line, lineno):
                    in_data = True
                    self._check_header(lineno)
                continue
            if line.startswith("@"):
                raise ValueError(
                    f"line {lineno}: header line {line.split()[0]!r} after @data."
                )
            case, label = self._case(line, lineno)
            X.append(case)
            labels.append(label)
        if not in_data:
            raise ValueError("no @data line; is this a .ts file?")
        if not X:
            raise ValueError("no case after the @data line.")
        if self.header.get("targetlabel"):
            y = np.asarray(labels, dtype=np.float64)
        elif self.header.get("classlabel"):
            y = np.asarray(labels, dtype=str)
        else:
            y = None
        return X, y

    def metadata(self, n_cases: int) -> dict:
        h = self.header
        task = None
        if h.get("classlabel"):
            task = "classification"
        elif h.get("targetlabel"):
            task = "regression"
        return {
            "problem_name": h.get("problemname"),
            "univariate": h.get("univariate"),
            "equal_length": h.get("equallength"),
            "missing": h.get("missing"),
            "series_length": h.get("serieslength"),
            "n_dimensions": self.n_dims,
            "class_labels": self.class_labels,
            "task": task,
            "n_cases": n_cases,
            "n_filled": self.n_filled,
        }
