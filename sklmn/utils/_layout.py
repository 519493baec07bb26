"""Layouts of sequence input: sklmn's batch-first ``(n, T, d)`` and the
channels-first ``(n, d, T)`` of sktime, aeon and pyts.

The conversions, the ``input_layout`` parameter's helpers and the rule of
the warning that batch-first input looks channels-first (its measurement is
in docs/user_guide/input.md). Public names are re-exported by
:mod:`sklmn.utils.sequences`; ``seqs`` arguments are its ``Sequences``.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "INPUT_LAYOUTS",
    "check_input_layout",
    "from_channels_first",
    "layout_statistics",
    "looks_channels_first",
    "restore_input_layout",
    "to_channels_first",
]


#: the ``input_layout`` parameter of the transformers, up to what their
#: output does (their docstrings go on after ``arrays)``)
INPUT_LAYOUT_DOC = """\
    input_layout : {'batch_first', 'channels_first'} or None, default=None
        Layout of 3-D input sequences. None: sklmn's ``(n_samples,
        n_timesteps, n_features)``, with a warning in ``fit`` when the data
        look channels-first; ``'batch_first'``: the same without the check;
        ``'channels_first'``: ``(n_samples, n_channels, n_timepoints)`` as
        sktime, aeon and pyts store it (lists of ``(n_channels, T_i)``
        arrays)"""


def fill_input_layout_doc(cls):
    """Class decorator: the line ``%(input_layout)s`` (indented by 4 spaces,
    like the docstring) of ``cls``'s docstring becomes :data:`INPUT_LAYOUT_DOC`."""
    if cls.__doc__:
        cls.__doc__ = cls.__doc__.replace("    %(input_layout)s", INPUT_LAYOUT_DOC)
    return cls


class _InputLayoutPicklesMixin:
    """``__setstate__`` of the transformers that gained ``input_layout``:
    objects pickled before it existed read batch-first data (None)."""

    def __setstate__(self, state):
        state = dict(state)
        state.setdefault("input_layout", None)
        super().__setstate__(state)


def _is_sequence_list(X) -> bool:
    """True for a list/tuple or 1-D object array whose items are sequences."""
    if isinstance(X, np.ndarray):
        return X.dtype == object and X.ndim == 1
    return isinstance(X, list | tuple)


#: ``validate_sequences`` warns that multivariate input looks channels-first
#: when neighbouring features are correlated across sequences at least this
#: much (the mean correlation; a time axis read as features) ...
_CHANNELS_FIRST_MIN_FEATURE_CORR = 0.45
#: ... and by this much more than neighbouring time steps (the real time
#: axis of batch-first data is the smoother one); see
#: docs/user_guide/input.md for the measurement
_CHANNELS_FIRST_MIN_CORR_GAP = 0.3
#: ... or whatever the correlations when it has one step and at least 10
#: features, or at least this many times more features than steps
_CHANNELS_FIRST_RATIO = 20
#: sequences and pairs of neighbouring columns the correlations are
#: estimated on (a seeded subsample of larger data)
_LAYOUT_SAMPLE_ROWS, _LAYOUT_SAMPLE_PAIRS = 256, 512


def _neighbour_correlation(data: np.ndarray, axis: int) -> float:
    """Mean correlation, across sequences, of neighbouring entries along
    ``axis`` (1: time steps, 2: features) of padded ``data`` (NaN at padded
    steps); NaN when no pair has three valid sequences and some variance."""
    a = np.moveaxis(data, axis, 1)
    first = a[:, :-1].reshape(len(a), -1)
    second = a[:, 1:].reshape(len(a), -1)
    if first.shape[1] == 0:
        return float("nan")
    rng = np.random.default_rng(0)
    if first.shape[1] > _LAYOUT_SAMPLE_PAIRS:
        cols = rng.choice(first.shape[1], _LAYOUT_SAMPLE_PAIRS, replace=False)
        first, second = first[:, cols], second[:, cols]
    valid = np.isfinite(first) & np.isfinite(second)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        x, y = np.where(valid, first, 0.0), np.where(valid, second, 0.0)
        # a correlation does not change with the scale of its columns: scaled
        # to at most 1, the squares below cannot overflow (inputs near 1e250)
        scale = np.maximum(np.abs(x).max(axis=0), np.abs(y).max(axis=0))
        scale[scale == 0] = 1.0
        x, y = x / scale, y / scale
        mx, my = x.sum(axis=0) / count, y.sum(axis=0) / count
        dx, dy = np.where(valid, x - mx, 0.0), np.where(valid, y - my, 0.0)
        sxx, syy = (dx * dx).sum(axis=0), (dy * dy).sum(axis=0)
        corr = (dx * dy).sum(axis=0) / np.sqrt(sxx * syy)
    keep = (count >= 3) & (sxx > 0) & (syy > 0) & np.isfinite(corr)
    return float(corr[keep].mean()) if keep.any() else float("nan")


def layout_statistics(seqs) -> dict:
    """What the channels-first warning reads of validated input.

    Parameters
    ----------
    seqs : Sequences
        Validated input.

    Returns
    -------
    stats : dict
        ``'n_timesteps'``, ``'n_features'``, ``'time_corr'`` and
        ``'feature_corr'``: the mean correlation across sequences of
        neighbouring time steps (of one feature) and of neighbouring features
        (at one step), on a subsample of at most 256 sequences and 512 pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import check_sequences, layout_statistics
    >>> walk = np.cumsum(np.random.default_rng(0).normal(size=(50, 30, 2)), axis=1)
    >>> stats = layout_statistics(check_sequences(walk))
    >>> stats["time_corr"] > 0.8
    True
    """
    data = seqs.data
    if data.shape[0] > _LAYOUT_SAMPLE_ROWS:
        rows = np.random.default_rng(0).choice(
            data.shape[0], _LAYOUT_SAMPLE_ROWS, replace=False
        )
        data, mask = data[rows], seqs.mask[rows]
    else:
        mask = seqs.mask
    data = np.where(mask[:, :, None], data, np.nan).astype(np.float64)
    return {
        "n_timesteps": seqs.n_timesteps,
        "n_features": seqs.n_features,
        "time_corr": _neighbour_correlation(data, 1),
        "feature_corr": _neighbour_correlation(data, 2),
    }


def _wide_shape(T: int, d: int) -> bool:
    """The shape part of the rule: one step and at least 10 features, or at
    least 20 times more features than steps (for ``d > max(T, 2)``)."""
    return d >= _CHANNELS_FIRST_RATIO * max(T, 1) or (T == 1 and d >= 10)


def looks_channels_first(stats: dict) -> bool:
    """The rule of the channels-first warning (docs/user_guide/input.md).

    Multivariate input with more features than steps that has one step
    and at least 10 features, or at least 20 times more features than
    steps, or whose neighbouring features are correlated across sequences
    (mean at least 0.45) clearly more than its neighbouring steps (by at
    least 0.3): a time axis read as features.

    Parameters
    ----------
    stats : dict
        As returned by :func:`layout_statistics`.

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklmn.utils.sequences import looks_channels_first
    >>> looks_channels_first(
    ...     {"n_timesteps": 3, "n_features": 100, "time_corr": 0.1,
    ...      "feature_corr": 0.95})
    True
    """
    T, d = stats["n_timesteps"], stats["n_features"]
    if d <= max(T, 2):
        return False
    if _wide_shape(T, d):
        return True
    feature, time = stats["feature_corr"], stats["time_corr"]
    if not np.isfinite(feature):
        return False
    time = 0.0 if not np.isfinite(time) else time
    return (
        feature >= _CHANNELS_FIRST_MIN_FEATURE_CORR
        and feature - time >= _CHANNELS_FIRST_MIN_CORR_GAP
    )


def _warn_if_channels_first(seqs, name: str) -> None:
    """Warn when multivariate input looks like channels-first ``(n, d, T)``
    (the rule of :func:`looks_channels_first`)."""
    if seqs.univariate or seqs.n_features <= max(seqs.n_timesteps, 2):
        return
    stats = layout_statistics(seqs)
    if not looks_channels_first(stats):
        return
    T, d = seqs.n_timesteps, seqs.n_features
    if _wide_shape(T, d):
        # the shape rule fired, whatever the correlations
        why = (
            ", a single step of many features"
            if T == 1
            else f", at least {_CHANNELS_FIRST_RATIO} times more features than steps"
        )
    else:
        why = (
            f", and neighbouring features are more alike (correlation "
            f"{stats['feature_corr']:.2f}) than neighbouring steps "
            f"({stats['time_corr']:.2f})"
        )
    warnings.warn(
        f"X passed to {name} has sequences of at most {T} time step(s) with {d} "
        f"features per step{why}: this looks like channels-first data "
        f"(n_samples, n_channels, n_timepoints) as sktime, aeon or pyts store "
        f"it, while sklmn reads (n_samples, n_timesteps, n_features) by "
        f"default. If so, pass input_layout='channels_first' to {name}, or "
        f"convert the data with sklmn.utils.sequences.from_channels_first(X). "
        f"If the layout is right, pass input_layout='batch_first' to silence "
        f"this warning (no rule separates every channels-first set from every "
        f"short, wide panel; docs/user_guide/input.md).",
        UserWarning,
        stacklevel=3,
    )


#: the values of the ``input_layout`` parameter of estimators and transformers
INPUT_LAYOUTS = ("batch_first", "channels_first")


def check_input_layout(layout):
    """Validate an ``input_layout`` parameter value (None, ``'batch_first'``
    or ``'channels_first'``) and return it.

    Parameters
    ----------
    layout : str or None
        The value.

    Returns
    -------
    layout : str or None

    Examples
    --------
    >>> from sklmn.utils.sequences import check_input_layout
    >>> check_input_layout("channels_first")
    'channels_first'
    """
    if layout is None or (isinstance(layout, str) and layout in INPUT_LAYOUTS):
        return layout
    raise ValueError(
        f"input_layout must be None, 'batch_first' or 'channels_first', got "
        f"{layout!r}."
    )


def _from_channels_first_input(X, input_name: str):
    """``X`` read in the channels-first layout, as sklmn's batch-first one: a
    3-D array ``(n, d, T)`` or a list of 2-D ``(d, T_i)`` arrays is
    transposed; 2-D arrays (univariate ``(n, T)``) and DataFrames, which
    have one reading, pass unchanged. A 1-D object array or a pandas Series
    of ``(d, T_i)`` arrays is a list of sequences, as ``check_sequences``
    reads it."""
    if hasattr(X, "columns"):
        return X
    if hasattr(X, "iloc") and hasattr(X, "to_numpy"):
        # a Series: of sequences (object), else one row of numbers, which
        # check_sequences refuses as 1-D
        values = X.to_numpy()
        if not _is_sequence_list(values):
            return X
        X = values
    if _is_sequence_list(X):
        items = [_item_array(x, f"{input_name}[{i}]") for i, x in enumerate(X)]
        if items and all(x.ndim == 2 for x in items):
            return from_channels_first(items)
        return X
    array = np.asarray(X)
    if array.ndim == 3:
        return from_channels_first(array)
    return X


def restore_input_layout(estimator, out):
    """Sequences returned by ``estimator`` (batch-first, or a list) in the
    layout of its ``input_layout``: channels-first when set so, else as is.

    Parameters
    ----------
    estimator : object
        An estimator or transformer with an ``input_layout`` parameter.
    out : ndarray of shape (n_samples, n_timesteps, n_features) or list
        Sequences in sklmn's layout.

    Returns
    -------
    out : ndarray or list of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import SequenceStandardScaler
    >>> from sklmn.utils.sequences import restore_input_layout
    >>> scaler = SequenceStandardScaler(input_layout="channels_first")
    >>> restore_input_layout(scaler, np.zeros((2, 10, 3))).shape
    (2, 3, 10)
    """
    if getattr(estimator, "input_layout", None) != "channels_first":
        return out
    if isinstance(out, list):
        return [np.asarray(x).T.copy() for x in out]
    out = np.asarray(out)
    return to_channels_first(out) if out.ndim == 3 else out


def _as_sequence_item(a: np.ndarray, name: str) -> np.ndarray:
    """``a``, one sequence of a list, as ``(T_i, n_features)``: a 1-D item
    is univariate; any other shape is refused, naming the item ``name``."""
    if a.ndim == 1:
        return a[:, None]
    if a.ndim != 2:
        raise ValueError(
            f"{name} has shape {a.shape}; every sequence must have shape "
            "(T_i,) or (T_i, n_features)."
        )
    return a


def _item_array(x, name: str) -> np.ndarray:
    """``np.asarray(x)`` for item ``name`` of a list of sequences, with an
    error that names it when ``x`` is a ragged nested list."""
    try:
        return np.asarray(x)
    except ValueError as exc:
        raise ValueError(f"{name} could not be read as an array: {exc}") from None


def to_channels_first(X):
    """Convert sklmn's ``(n, T, d)`` layout to channels-first ``(n, d, T)``.

    sktime, aeon and pyts store multivariate series as ``(n_instances,
    n_channels, n_timepoints)``; this is the inverse of
    :func:`from_channels_first`.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_timesteps, n_features) or list of \
            ndarray of shape (T_i, n_features) or (T_i,)
        Batch-first sequences (1-D items are univariate).

    Returns
    -------
    X_cf : ndarray of shape (n_samples, n_features, n_timesteps) or list of \
            ndarray of shape (n_features, T_i)
        A new array (or list of new arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import to_channels_first
    >>> to_channels_first(np.zeros((4, 10, 3))).shape
    (4, 3, 10)
    """
    if _is_sequence_list(X):
        return [
            np.array(
                _as_sequence_item(_item_array(x, f"X[{i}]"), f"X[{i}]").T, copy=True
            )
            for i, x in enumerate(X)
        ]
    arr = np.asarray(X)
    if arr.ndim != 3:
        raise ValueError(
            f"to_channels_first expects a 3-D array (n, T, d) or a list of 2-D "
            f"arrays, got an array of shape {arr.shape}."
        )
    return np.ascontiguousarray(arr.transpose(0, 2, 1))


def from_channels_first(X):
    """Convert channels-first ``(n, d, T)`` data to sklmn's ``(n, T, d)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_channels, n_timepoints) or list of \
            ndarray of shape (n_channels, T_i)
        Data in the sktime / aeon / pyts layout.

    Returns
    -------
    X_bf : ndarray of shape (n_samples, n_timepoints, n_channels) or list of \
            ndarray of shape (T_i, n_channels)
        A new array (or list of new arrays) in sklmn's batch-first layout.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.utils.sequences import from_channels_first
    >>> from_channels_first(np.zeros((4, 3, 10))).shape
    (4, 10, 3)
    """
    if _is_sequence_list(X):
        out = []
        for i, x in enumerate(X):
            a = _item_array(x, f"X[{i}]")
            if a.ndim != 2:
                raise ValueError(
                    f"X[{i}] has shape {a.shape}; channels-first sequences must be "
                    "2-D (n_channels, T_i)."
                )
            out.append(np.array(a.T, copy=True))
        return out
    arr = np.asarray(X)
    if arr.ndim != 3:
        raise ValueError(
            f"from_channels_first expects a 3-D array (n, d, T) or a list of 2-D "
            f"arrays, got an array of shape {arr.shape}."
        )
    return np.ascontiguousarray(arr.transpose(0, 2, 1))
