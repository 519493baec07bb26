"""The sequence input contract shared by every sklmn estimator.

sklmn reads sequences in the layouts that scikit-learn, PyTorch and tslearn
users already have:

* an ndarray ``(n_samples, n_timesteps, n_features)``, batch first;
* an ndarray ``(n_samples, n_timesteps)``: univariate sequences (this is what
  scikit-learn's estimator checks and tabular code pass);
* a list of arrays ``(T_i, n_features)`` or ``(T_i,)``: variable length.

Trailing time steps that are NaN in every feature are padding (tslearn's
convention). A NaN or an infinity anywhere else is an error that says where.

Everything is validated into a :class:`Sequences` object: a fresh, zero-padded
array plus the length of every sequence. The caller's data is never modified.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._compat import _check_feature_names, _check_sample_weight
from ._layout import (
    INPUT_LAYOUTS,  # noqa: F401 - re-exported: the estimators import it from here
    _as_sequence_item,
    _from_channels_first_input,
    _is_sequence_list,
    _warn_if_channels_first,
    check_input_layout,
    from_channels_first,
    layout_statistics,
    looks_channels_first,
    restore_input_layout,
    to_channels_first,
)

__all__ = [
    "Sequences",
    "check_sequences",
    "validate_sequences",
    "pad_sequences",
    "unpad_sequences",
    "lengths_to_mask",
    "check_sequence_weights",
    "format_like_input",
    "to_channels_first",
    "from_channels_first",
    "layout_statistics",
    "looks_channels_first",
    "check_input_layout",
    "restore_input_layout",
]


@dataclass(frozen=True)
class Sequences:
    """A validated batch of sequences, padded to a common length.

    Instances are built by :func:`check_sequences`; they own their arrays.

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Sequences, zero at padded positions.
    lengths : ndarray of shape (n_samples,), dtype int64
        Number of valid time steps of every sequence (at least 1).
    ragged : bool
        True when the input was a list of arrays (variable-length layout).
    univariate : bool
        True when the input had no feature axis (``(n, T)`` array or a list of
        1-D arrays).

    Examples
    --------
    >>> from sklmn.utils.sequences import check_sequences
    >>> seqs = check_sequences([[1.0, 2.0, 3.0], [4.0]])
    >>> seqs.data.shape, seqs.lengths.tolist(), seqs.ragged, seqs.univariate
    ((2, 3, 1), [3, 1], True, True)
    >>> seqs.mask.tolist()
    [[True, True, True], [True, False, False]]
    """

    data: np.ndarray
    lengths: np.ndarray
    ragged: bool
    univariate: bool

    @property
    def n_samples(self) -> int:
        """Number of sequences."""
        return self.data.shape[0]

    @property
    def n_timesteps(self) -> int:
        """Length of the longest sequence (the padded length)."""
        return self.data.shape[1]

    @property
    def n_features(self) -> int:
        """Number of features per time step."""
        return self.data.shape[2]

    @property
    def n_steps_total(self) -> int:
        """Number of valid time steps over all sequences."""
        return int(self.lengths.sum())

    @property
    def mask(self) -> np.ndarray:
        """Boolean array ``(n_samples, n_timesteps)``, True at valid steps."""
        return lengths_to_mask(self.lengths, self.n_timesteps)

    def sequences(self) -> list[np.ndarray]:
        """List of the unpadded sequences, each a ``(T_i, n_features)`` view."""
        return unpad_sequences(self.data, self.lengths)


def _as_float_array(x, dtype, input_name: str, where: str) -> np.ndarray:
    """Convert one array-like to a float array with informative errors."""
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # inhomogeneous nested lists
        raise ValueError(
            f"{input_name}{where} could not be read as a numeric array: {exc}"
        ) from None
    if arr.dtype == object and arr.ndim == 0:
        # not an array-like (a generator, a dict, ...): numpy wraps it whole
        raise TypeError(
            f"{input_name}{where} must be an array-like of numbers, got "
            f"{type(x).__name__}: convert it to a list or an array first."
        )
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(
            f"Complex data not supported: {input_name}{where} has dtype {arr.dtype}."
        )
    if arr.dtype.kind in "USV":
        raise TypeError(
            f"{input_name}{where} has non-numeric dtype {arr.dtype}; sequences "
            "must hold numbers."
        )
    if arr.dtype.kind in "mM":
        raise TypeError(
            f"{input_name}{where} has dtype {arr.dtype} (dates or time "
            "differences); sequences must hold numbers: convert them explicitly "
            "(e.g. to seconds) first."
        )
    if arr.dtype.kind == "b" or arr.dtype.kind in "iuf":
        _check_dtype_range(arr, dtype, input_name, where)
        return np.array(arr, dtype=dtype, copy=True)
    # object arrays: float() gives the clear TypeError/ValueError for strings,
    # dicts... but converts numpy dates to numbers
    if arr.dtype == object and any(
        isinstance(v, np.datetime64 | np.timedelta64) for v in arr.flat
    ):
        raise TypeError(
            f"{input_name}{where} contains numpy dates or time differences; "
            "sequences must hold numbers: convert them explicitly first."
        )
    missing = None
    if arr.dtype == object and arr.size:
        # None and pandas' NA are missing values: padding in trailing steps
        missing = np.frompyfunc(_is_missing, 1, 1)(arr).astype(bool)
        if missing.any():
            arr = arr.copy()
            arr[missing] = np.nan
        else:
            missing = None
    try:
        values = np.array(arr, dtype=np.float64, copy=True)
    except OverflowError as exc:  # a Python integer beyond float64
        raise ValueError(
            f"{input_name}{where} contains a value too large for float64: {exc}."
        ) from None
    except (TypeError, ValueError) as exc:
        if arr.dtype == object and any(np.ndim(v) > 0 for v in arr.flat):
            # cells that are sequences: a nested DataFrame (sktime's
            # 'nested_univ', one Series per channel) or a 2-D object array
            raise ValueError(
                f"{input_name}{where} has cells that are themselves sequences "
                f"(an object array of shape {arr.shape}, e.g. a nested "
                "DataFrame with one series per channel); sklmn reads a list "
                "of (T_i, n_features) arrays: e.g. [np.column_stack(row) for "
                "row in X.to_numpy()] for a nested DataFrame."
            ) from None
        raise type(exc)(
            f"{input_name}{where} contains non-numeric values: {exc}"
        ) from None
    if missing is not None:
        _check_missing(values, missing, input_name, where, item=bool(where))
    _check_dtype_range(values, dtype, input_name, where)
    return values.astype(dtype, copy=False)


def _is_missing(value) -> bool:
    """None or a pandas missing value (``pd.NA``, ``pd.NaT``)."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def _check_missing(values, missing, input_name: str, where: str, item: bool):
    """Refuse missing values (None, pd.NA) inside a sequence: they may only
    fill trailing steps (padding), like NaN."""
    data, marks = (values[None], missing[None]) if item else (values, missing)
    if data.ndim == 2:
        data, marks = data[..., None], marks[..., None]
    if data.ndim != 3:
        return  # the layout error is reported by the caller
    lengths = _trailing_padding_lengths(data)
    bad = marks & lengths_to_mask(lengths, data.shape[1])[:, :, None]
    if bad.any():
        i, t, f = (int(v) for v in np.argwhere(bad)[0])
        inside = f"at time step {t}"
        if not item:
            inside = f"inside sequence {i} {inside}"
        raise ValueError(
            f"Input {input_name}{where} contains a missing value (None or pd.NA) "
            f"{inside} (feature {f}); {int(bad.sum())} missing value(s) in total. "
            "Missing values are read as padding only in trailing time steps "
            "missing in every feature."
        )


def _check_dtype_range(arr, dtype, input_name: str, where: str) -> None:
    """Refuse finite values too large for ``dtype`` (float32: the precision
    of the networks), which the conversion would turn into infinity."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or arr.dtype.kind != "f":
        return
    if arr.dtype.itemsize <= dtype.itemsize:
        return
    limit = float(np.finfo(dtype).max)
    with np.errstate(invalid="ignore"):
        big = np.isfinite(arr) & (np.abs(arr) > limit)
    if big.any():
        index = tuple(int(v) for v in np.argwhere(big)[0])
        raise ValueError(
            f"Input {input_name}{where} contains the value {float(arr[index]):.4g} "
            f"at index {index}, too large for {dtype.name} (max {limit:.4g}), "
            f"the precision the model computes in. Rescale {input_name}."
        )


def _trailing_padding_lengths(data: np.ndarray) -> np.ndarray:
    """Length of each sequence once trailing all-NaN steps are removed."""
    n, T, _ = data.shape
    if T == 0:  # a list of sequences that are all empty
        return np.zeros(n, dtype=np.int64)
    all_nan = np.isnan(data).all(axis=2)  # (n, T)
    # index of the last step that is not entirely NaN, +1
    not_pad = ~all_nan
    any_valid = not_pad.any(axis=1)
    last = T - np.argmax(not_pad[:, ::-1], axis=1)
    return np.where(any_valid, last, 0).astype(np.int64)


def _check_finite(data: np.ndarray, lengths: np.ndarray, input_name: str) -> None:
    """Raise if a NaN or inf sits inside a sequence (not in its padding)."""
    mask = lengths_to_mask(lengths, data.shape[1])
    bad = ~np.isfinite(data) & mask[:, :, None]
    if bad.any():
        i, t, f = (int(v) for v in np.argwhere(bad)[0])
        value = data[i, t, f]
        kind = "NaN" if np.isnan(value) else "infinity"
        n_bad = int(bad.sum())
        raise ValueError(
            f"Input {input_name} contains {kind} inside sequence {i} at time step "
            f"{t} (feature {f}); {n_bad} non-finite value(s) in total. Only "
            "trailing time steps that are NaN in every feature are read as "
            "padding; NaN or inf values (infinity or a value too large) elsewhere "
            "are not allowed."
        )


def _from_list(X, dtype, input_name: str) -> tuple[np.ndarray, bool]:
    """Stack a list of sequences into a NaN-padded array; report univariate."""
    items = []
    ndims = set()
    for i, x in enumerate(X):
        arr = _as_float_array(x, dtype, input_name, f"[{i}]")
        if arr.ndim == 0:
            raise ValueError(
                f"{input_name}[{i}] is a scalar; each item of a list of sequences "
                "must be an array of shape (T_i,) or (T_i, n_features)."
            )
        if arr.ndim > 2:
            raise ValueError(
                f"{input_name}[{i}] has {arr.ndim} dimensions (shape {arr.shape}); "
                "each sequence must have shape (T_i,) or (T_i, n_features)."
            )
        ndims.add(arr.ndim)
        if arr.ndim == 1:
            arr = arr[:, None]
        items.append(arr)
    if not items:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=(0,)) while a minimum of 1 is "
            f"required: {input_name} is an empty list of sequences."
        )
    if len(ndims) > 1:
        raise ValueError(
            f"{input_name} mixes 1-D sequences (T_i,) and 2-D sequences "
            "(T_i, n_features); use one layout for every sequence."
        )
    n_features = {a.shape[1] for a in items}
    if len(n_features) > 1:
        first = items[0].shape[1]
        j = next(k for k, a in enumerate(items) if a.shape[1] != first)
        raise ValueError(
            f"Inconsistent numbers of features in {input_name}: sequence 0 has "
            f"{first} features per time step but sequence {j} has "
            f"{items[j].shape[1]}. Channels-first sequences (n_channels, T_i)? "
            "Pass input_layout='channels_first' to the estimator, or convert "
            "them with sklmn.utils.sequences.from_channels_first."
        )
    if items[0].shape[1] == 0:
        # every step "all NaN" over no feature: it read as an empty sequence
        raise ValueError(
            f"{input_name} has 0 features per time step ({input_name}[0] has "
            f"shape {items[0].shape})."
        )
    data, _ = pad_sequences(items, value=np.nan, dtype=dtype)
    return data, ndims == {1}


def check_sequences(
    X,
    *,
    dtype=np.float64,
    input_name: str = "X",
    ensure_min_length: int = 1,
) -> Sequences:
    """Validate sequences and return a padded copy with their lengths.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_timesteps, n_features) or \
            (n_samples, n_timesteps), or list of array-like, or Sequences
        Sequences in one of the layouts of the module docstring. Trailing time
        steps that are NaN in every feature are padding. A
        :class:`Sequences` (already validated, e.g. the padded data and
        lengths an estimator works with) is copied without a round trip
        through a list.
    dtype : numpy dtype, default=np.float64
        Floating dtype of the returned data (another dtype is refused: NaN
        padding has no integer value).
    input_name : str, default="X"
        Name used in error messages.
    ensure_min_length : int, default=1
        Minimum number of valid time steps of every sequence (an empty
        sequence is refused whatever its value).

    Returns
    -------
    sequences : Sequences
        Validated copy; padded positions hold zeros.

    Raises
    ------
    ValueError
        For NaN/inf inside a sequence, an empty sequence, inconsistent feature
        counts, complex data, arrays with 1 or more than 3 dimensions, no
        samples, values too large for ``dtype``, a ``dtype`` that is not
        floating or an ``ensure_min_length`` that is not a non-negative
        integer; for text in an object array (a DataFrame column of
        strings) that is not a number (numeric text, ``'1.5'``, is read as
        its number, as scikit-learn does).
    TypeError
        For arrays of strings, bytes or dates, objects that are not numbers
        (dicts, ...), or a scalar/unsupported input.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import check_sequences
    >>> X = np.zeros((2, 4, 3))
    >>> X[1, 2:] = np.nan            # sequence 1 has 2 valid steps
    >>> seqs = check_sequences(X)
    >>> seqs.lengths.tolist(), seqs.n_features
    ([4, 2], 3)
    >>> check_sequences([[0.0, np.inf]])
    Traceback (most recent call last):
    ...
    ValueError: Input X contains infinity inside sequence 0 at time step 1 ...
    """
    dtype = _check_float_dtype(dtype)
    _check_count("ensure_min_length", ensure_min_length)
    if isinstance(X, Sequences):
        # validated already: a copy that owns its arrays (callers may modify
        # the data in place), in the requested dtype, where its values fit
        _check_dtype_range(X.data, dtype, input_name, "")
        if int(X.lengths.min()) < ensure_min_length:
            raise ValueError(
                f"{input_name} needs at least {ensure_min_length} time steps per "
                f"sequence; the shortest has {int(X.lengths.min())}."
            )
        return Sequences(
            np.array(X.data, dtype=dtype),
            np.array(X.lengths, dtype=np.int64),
            X.ragged,
            X.univariate,
        )
    if X is None or isinstance(X, str | bytes | numbers.Number):
        raise TypeError(
            f"{input_name} must be an array-like of sequences, got "
            f"{type(X).__name__}: {X!r}."
        )
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(
            f"Sparse input is not supported for {input_name}: sequences must be "
            "dense arrays or lists of arrays (convert with X.toarray())."
        )
    if hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):
        X = X.to_numpy()  # pandas DataFrame: rows are univariate sequences
    if _is_sequence_list(X) and not _looks_rectangular_list(X):
        data, univariate = _from_list(X, dtype, input_name)
        ragged = True
    else:
        arr = _as_float_array(X, dtype, input_name, "")
        if arr.ndim == 1:
            raise ValueError(
                f"Expected 2D array (n_samples, n_timesteps) or 3D array "
                f"(n_samples, n_timesteps, n_features), got 1D array instead: "
                f"{input_name} has shape {arr.shape}. Reshape your data with "
                "X.reshape(1, -1) if it is a single univariate sequence, or pass "
                "a list of sequences."
            )
        if arr.ndim not in (2, 3):
            raise ValueError(
                f"Found array with dim {arr.ndim}: {input_name} has shape "
                f"{arr.shape}, but sequences must be 2-D (n_samples, n_timesteps) "
                "or 3-D (n_samples, n_timesteps, n_features)."
            )
        if arr.shape[0] == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={arr.shape}) while a "
                f"minimum of 1 is required: {input_name} has no sequences."
            )
        univariate = arr.ndim == 2
        if univariate:
            arr = arr[:, :, None]
        if arr.shape[1] == 0:
            raise ValueError(
                f"Found array with 0 feature(s) (shape={arr.shape[:2]}) while a "
                f"minimum of 1 is required: {input_name} has sequences of length 0."
            )
        if arr.shape[2] == 0:
            raise ValueError(
                f"{input_name} has 0 features per time step (shape {arr.shape})."
            )
        data, ragged = arr, False
    # trailing all-NaN steps are padding, in lists (after padding with NaN)
    # and in arrays alike
    lengths = _trailing_padding_lengths(data)
    empty = np.flatnonzero(lengths < max(ensure_min_length, 1))
    if empty.size:
        i = int(empty[0])
        if lengths[i] == 0:
            raise ValueError(
                f"Sequence {i} of {input_name} is empty (every time step is NaN "
                "padding or it has length 0); every sequence needs at least "
                f"{max(ensure_min_length, 1)} valid time step(s)."
            )
        raise ValueError(
            f"Sequence {i} of {input_name} has {int(lengths[i])} valid time "
            f"step(s); at least {ensure_min_length} are required."
        )
    _check_finite(data, lengths, input_name)
    T_max = int(lengths.max())
    data = data[:, :T_max]
    data[~lengths_to_mask(lengths, T_max)] = 0.0
    return Sequences(
        data=np.ascontiguousarray(data),
        lengths=lengths,
        ragged=ragged,
        univariate=univariate,
    )


def _check_count(name: str, value, suffix: str = "") -> None:
    """Refuse ``value`` unless it is a non-negative integer (not a bool)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < 0
    ):
        raise ValueError(
            f"{name} must be a non-negative integer{suffix}, got {value!r}."
        )


def _integer_lengths(given: np.ndarray, message: str) -> np.ndarray:
    """``given`` (numeric lengths) as int64, refusing a fractional, NaN or
    negative entry with ``message`` and the first bad value."""
    with np.errstate(invalid="ignore"):  # NaN: refused below
        lengths = given.astype(np.int64)
    bad = (lengths != given) | (lengths < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{message}, got {given[i].item()!r} for sequence {i}.")
    return lengths


def _check_float_dtype(dtype) -> np.dtype:
    """``dtype`` as a numpy floating dtype, else a ValueError naming it."""
    try:
        checked = np.dtype(dtype)
    except TypeError:
        checked = None
    if checked is None or checked.kind != "f":
        raise ValueError(
            f"dtype must be a floating dtype (np.float32, np.float64, ...), got "
            f"{dtype!r}: padding is NaN, which no integer holds."
        )
    return checked


def _looks_rectangular_list(X) -> bool:
    """True if a list is a plain nested list of numbers forming an n-D array.

    A list of equal-length flat lists (``[[1, 2], [3, 4]]``) is the usual 2-D
    layout of scikit-learn code; it is read exactly like the ndarray it forms.
    A list of ndarrays is always a list of sequences, even when they are
    all of equal length (so that outputs come back as a list).
    """
    if isinstance(X, np.ndarray):
        return False
    if not all(isinstance(x, list | tuple) for x in X):
        return False
    if not X:
        return False
    try:
        arr = np.asarray(X)
    except ValueError:
        return False
    return arr.dtype != object


def validate_sequences(
    estimator,
    X,
    *,
    reset: bool,
    dtype=np.float64,
    input_name: str = "X",
    check_feature_names: bool = True,
) -> Sequences:
    """Validate ``X`` for an estimator and set or check ``n_features_in_``.

    A pandas (or other dataframe-protocol) ``X`` with string column names (a
    2-D frame holds univariate sequences, one column per time step) also
    sets ``feature_names_in_`` when ``reset=True``, as scikit-learn does;
    otherwise its names are checked against ``feature_names_in_``:
    ``ValueError`` when they differ (e.g. reordered columns), a
    ``UserWarning`` when names were seen in ``fit`` but ``X`` has none, or
    the reverse.

    Parameters
    ----------
    estimator : object
        The estimator; ``n_features_in_`` (features per time step) is set on it
        when ``reset=True`` and compared with ``X`` otherwise.
    X : sequences
        Any layout accepted by :func:`check_sequences`.
    reset : bool
        True in ``fit``; False in ``predict``/``transform``. With True and
        no ``input_layout`` set on the estimator, a ``UserWarning`` is raised
        when multivariate input looks channels-first (the rule of
        :func:`looks_channels_first`), pointing at the estimator's
        ``input_layout`` and :func:`from_channels_first`.
    dtype : numpy dtype, default=np.float64
        Floating dtype of the returned data.
    input_name : str, default="X"
        Name of ``X`` in error messages (``"X_val"`` for validation data).
    check_feature_names : bool, default=True
        Set or check ``feature_names_in_`` as described above. False for
        the input of an ``inverse_transform``, which scikit-learn does not
        check: the output of ``transform`` is an array without names.

    Returns
    -------
    sequences : Sequences

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import validate_sequences
    >>> class Est:
    ...     pass
    >>> est = Est()
    >>> _ = validate_sequences(est, np.zeros((3, 5, 2)), reset=True)
    >>> est.n_features_in_
    2
    >>> validate_sequences(est, np.zeros((3, 5)), reset=False)
    Traceback (most recent call last):
    ...
    ValueError: X has 1 features per time step, but Est is expecting 2 ...
    """
    layout = check_input_layout(getattr(estimator, "input_layout", None))
    if layout == "channels_first":
        X = _from_channels_first_input(X, input_name)
    seqs = check_sequences(X, dtype=dtype, input_name=input_name)
    name = type(estimator).__name__
    # column names of a DataFrame (2-D: one column per time step) as
    # scikit-learn handles them: set on reset, else checked (ValueError when
    # they differ, a warning when present on one side only)
    if check_feature_names:
        _check_feature_names(estimator, X, reset=reset)
    if reset:
        if layout is None:
            _warn_if_channels_first(seqs, name)
        estimator.n_features_in_ = seqs.n_features
    else:
        expected = getattr(estimator, "n_features_in_", None)
        if expected is not None and seqs.n_features != expected:
            raise ValueError(
                f"{input_name} has {seqs.n_features} features per time step, but "
                f"{name} is "
                f"expecting {expected} features per time step as input."
            )
    return seqs


def pad_sequences(
    seqs, *, value: float = 0.0, dtype=np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """Stack variable-length sequences into one padded array.

    Parameters
    ----------
    seqs : list of array-like of shape (T_i,) or (T_i, n_features)
        Sequences; 1-D items are read as univariate.
    value : float, default=0.0
        Fill value of the padded positions.
    dtype : numpy dtype, default=np.float64
        Dtype of the result.

    Returns
    -------
    padded : ndarray of shape (n_samples, max_i T_i, n_features)
    lengths : ndarray of shape (n_samples,), dtype int64

    Raises
    ------
    ValueError
        For no sequences, a sequence that is not 1-D or 2-D, inconsistent
        feature counts, complex values (real ``dtype``), strings that are
        not numbers, values too large for a floating ``dtype``, or a
        ``value`` that an integer ``dtype`` cannot hold (NaN); the message
        names the sequence.
    TypeError
        For objects that are not numbers (dicts, ...) in a sequence.

    Examples
    --------
    >>> from sklmn.utils.sequences import pad_sequences
    >>> padded, lengths = pad_sequences([[1.0, 2.0], [3.0]])
    >>> padded[:, :, 0].tolist(), lengths.tolist()
    ([[1.0, 2.0], [3.0, 0.0]], [2, 1])
    """
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        # NaN (or 0.5) cast to an integer dtype is garbage, not padding
        with np.errstate(invalid="ignore"):
            exact = np.asarray(value).astype(dtype) == np.asarray(value)
        if not exact:
            raise ValueError(
                f"value={value!r} cannot be stored in dtype {dtype}: pass an "
                "integer fill value or a floating dtype."
            )
    arrays = [_padding_item(s, dtype, i) for i, s in enumerate(seqs)]
    if not arrays:
        raise ValueError("pad_sequences needs at least one sequence, got none.")
    arrays = [_as_sequence_item(a, f"seqs[{i}]") for i, a in enumerate(arrays)]
    n_features = arrays[0].shape[1]
    for i, a in enumerate(arrays):
        if a.shape[1] != n_features:
            # never broadcast (a single feature would fill every column)
            raise ValueError(
                f"Inconsistent numbers of features in seqs: sequence 0 has "
                f"{n_features} features per time step but sequence {i} has "
                f"{a.shape[1]}."
            )
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    out = np.full(
        (len(arrays), int(lengths.max()) if lengths.size else 0, n_features),
        value,
        dtype=dtype,
    )
    for i, a in enumerate(arrays):
        out[i, : a.shape[0]] = a
    return out, lengths


def _padding_item(seq, dtype: np.dtype, i: int) -> np.ndarray:
    """Sequence ``i`` of :func:`pad_sequences` in ``dtype``, with errors that
    name it (and no value turned into an infinity by a narrower dtype)."""
    name = f"seqs[{i}]"
    try:
        raw = np.asarray(seq)
    except ValueError as exc:  # inhomogeneous nested lists
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if raw.dtype.kind == "c" and dtype.kind != "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {raw.dtype}.")
    _check_dtype_range(raw, dtype, "seqs", f"[{i}]")
    try:
        return np.asarray(raw, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise type(exc)(
            f"{name} could not be converted to dtype {dtype}: {exc}"
        ) from None


def unpad_sequences(padded: np.ndarray, lengths) -> list[np.ndarray]:
    """Split a padded array back into a list of sequences (views).

    Parameters
    ----------
    padded : ndarray of shape (n_samples, n_timesteps, ...)
        Padded sequences.
    lengths : array-like of shape (n_samples,)
        Valid length of each sequence.

    Returns
    -------
    sequences : list of ndarray
        ``padded[i, :lengths[i]]`` for every i.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import unpad_sequences
    >>> [s.shape for s in unpad_sequences(np.zeros((2, 3, 1)), [3, 1])]
    [(3, 1), (1, 1)]
    """
    padded = np.asarray(padded)
    if padded.ndim < 2:
        raise ValueError(
            f"padded must have at least 2 dimensions (n_samples, n_timesteps, "
            f"...), got an array of shape {padded.shape}."
        )
    given = np.asarray(lengths)
    if given.dtype.kind not in "biuf" or given.shape != (padded.shape[0],):
        raise ValueError(
            f"lengths has shape {given.shape}, expected ({padded.shape[0]},)."
        )
    # a negative length would slice from the end, a longer one be cut silently
    message = (
        f"lengths must be integers in [0, {padded.shape[1]}] (the padded length)"
    )
    lengths = _integer_lengths(given, message)
    too_long = np.flatnonzero(lengths > padded.shape[1])
    if too_long.size:
        i = int(too_long[0])
        raise ValueError(f"{message}, got {given[i].item()!r} for sequence {i}.")
    return [padded[i, : int(n)] for i, n in enumerate(lengths)]


def lengths_to_mask(lengths, n_timesteps: int | None = None) -> np.ndarray:
    """Boolean mask of valid time steps.

    Parameters
    ----------
    lengths : array-like of shape (n_samples,)
        Valid length of each sequence: non-negative integers.
    n_timesteps : int, default=None
        Padded length; ``max(lengths)`` when None. A length above it makes
        its row all True (the first ``n_timesteps`` steps are valid).

    Returns
    -------
    mask : ndarray of shape (n_samples, n_timesteps), dtype bool

    Raises
    ------
    ValueError
        For lengths that are not a 1-D array of non-negative integers, or a
        negative or non-integer ``n_timesteps``.

    Examples
    --------
    >>> from sklmn.utils.sequences import lengths_to_mask
    >>> lengths_to_mask([2, 1], 3).astype(int).tolist()
    [[1, 1, 0], [1, 0, 0]]
    """
    given = np.asarray(lengths)
    if given.ndim != 1 or (given.size and given.dtype.kind not in "biuf"):
        raise ValueError(
            f"lengths must be a 1-D array of non-negative integers, got an "
            f"array of shape {given.shape} and dtype {given.dtype}."
        )
    # a fractional length was truncated, a negative one an empty row
    lengths = _integer_lengths(given, "lengths must be non-negative integers")
    if n_timesteps is None:
        n_timesteps = int(lengths.max()) if lengths.size else 0
    else:
        _check_count("n_timesteps", n_timesteps, " or None")
    return np.arange(n_timesteps)[None, :] < lengths[:, None]


def format_like_input(values: np.ndarray, seqs: Sequences, *, fill=np.nan):
    """Return per-time-step values in the layout of the validated input.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_timesteps, k)
        One output vector per (padded) time step.
    seqs : Sequences
        The validated input the values belong to.
    fill : scalar, default=np.nan
        Value written at padded steps when the input was a padded array
        (NaN is read back as padding by :func:`check_sequences`). Integer
        or boolean values become float64 when ``fill`` is not an integer.

    Returns
    -------
    out : ndarray of shape (n_samples, n_timesteps, k) or list of ndarray
        A list of ``(T_i, k)`` arrays when the input was a list, else a padded
        array with ``fill`` at padded steps.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import check_sequences, format_like_input
    >>> seqs = check_sequences([[1.0, 2.0], [3.0]])
    >>> out = format_like_input(seqs.data * 10, seqs)
    >>> [o.ravel().tolist() for o in out]
    [[10.0, 20.0], [30.0]]
    """
    values = np.asarray(values)
    if values.shape[:2] != (seqs.n_samples, seqs.n_timesteps):
        raise ValueError(
            f"values has shape {values.shape}, expected "
            f"({seqs.n_samples}, {seqs.n_timesteps}, ...)."
        )
    if seqs.ragged:
        return [np.array(v) for v in unpad_sequences(values, seqs.lengths)]
    out = np.array(values, copy=True)
    if fill is not None:
        # a float fill (NaN, numpy's or Python's) in integer or boolean
        # values: float values, not a NaN cast to an integer or to True
        if out.dtype.kind in "biu" and np.asarray(fill).dtype.kind not in "biu":
            out = out.astype(np.float64)
        out[~seqs.mask] = fill
    return out


def check_sequence_weights(sample_weight, seqs: Sequences) -> np.ndarray | None:
    """Validated float64 copy of per-sequence weights (None stays None).

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        One non-negative weight per sequence.
    seqs : Sequences
        The validated sequences the weights belong to.

    Returns
    -------
    weight : ndarray of shape (n_samples,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import check_sequence_weights, check_sequences
    >>> seqs = check_sequences(np.zeros((2, 3, 1)))
    >>> check_sequence_weights([1, 2], seqs).tolist()
    [1.0, 2.0]
    >>> check_sequence_weights([0, 0], seqs)
    Traceback (most recent call last):
    ...
    ValueError: Sample weights must contain at least one non-zero number.
    """
    if sample_weight is None:
        return None
    # scikit-learn refuses negative, non-finite and all-zero weights
    weight = _check_sample_weight(
        sample_weight, seqs.data, dtype=np.float64, ensure_non_negative=True
    )
    return np.array(weight, copy=True)
