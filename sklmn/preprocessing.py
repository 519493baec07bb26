"""Sequence-aware preprocessing: standardization over all valid time steps.

scikit-learn's :class:`~sklearn.preprocessing.StandardScaler` standardizes the
columns of a 2-D array; for sequences (the README's input contract) the
statistics of a feature are taken over every valid time step of every training
sequence, and
padding is never counted. :class:`SequenceStandardScaler` does this and returns
its output in the layout of its input, so that it can precede any sklmn
estimator in a :class:`~sklearn.pipeline.Pipeline`.

:func:`_sequence_moments` is the plain numpy computation underneath, usable
without the scikit-learn layer (e.g. by an estimator that scales its inputs).

The flat layout, for the scikit-learn tools that accept only a 2-D ``X``
(bagging, one-vs-one, chains, ``permutation_importance``, stacking with
``passthrough=True``): :func:`flatten_sequences` / :class:`FlattenSequences`
turn sequences into ``(n_samples, n_timesteps * n_features)`` (NaN after the
end of shorter sequences) and :class:`SequenceReshaper`, first step of a
pipeline, reads the rows back as sequences for the sklmn estimator behind it.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .utils._compat import Interval, StrOptions, _fit_context
from .utils._doc_link import _DocLinkMixin
from .utils._registry import register_safe_classes
from .utils._tags import _SequenceInputTagsMixin
from .utils.sequences import (
    INPUT_LAYOUTS,
    Sequences,
    lengths_to_mask,
    restore_input_layout,
    validate_sequences,
)

__all__ = [
    "FlattenSequences",
    "SequenceReshaper",
    "SequenceStandardScaler",
    "flatten_sequences",
]


def _sequence_moments(
    data: np.ndarray, lengths=None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-feature mean and variance over the valid time steps of padded data.

    Two-pass algorithm in float64: the mean first, then the mean squared
    deviation from it (population variance, ``ddof=0``, as
    :class:`~sklearn.preprocessing.StandardScaler`). Padded positions are never
    read, whatever they hold (zeros, NaN, garbage).

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Padded sequences (batch first).
    lengths : array-like of int of shape (n_samples,), default=None
        Number of valid time steps of every sequence (``0..n_timesteps``);
        None means every step is valid.

    Returns
    -------
    mean : ndarray of shape (n_features,), dtype float64
        Mean over all valid steps.
    var : ndarray of shape (n_features,), dtype float64
        Population variance over all valid steps (``>= 0``).
    count : int
        Number of valid time steps (``lengths.sum()``).

    Raises
    ------
    ValueError
        If ``data`` is not 3-D, ``lengths`` has the wrong shape or values
        outside ``0..n_timesteps``, or there is no valid step.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import _sequence_moments
    >>> data = np.array([[[1.0], [3.0]], [[5.0], [np.nan]]])
    >>> mean, var, count = _sequence_moments(data, [2, 1])
    >>> mean.tolist(), var.tolist(), count
    ([3.0], [2.6666666666666665], 3)
    """
    data = np.asarray(data)
    if data.ndim != 3:
        raise ValueError(
            "data must be a padded array of shape (n_samples, n_timesteps, "
            f"n_features), got an array of shape {data.shape}."
        )
    n, T, _ = data.shape
    if lengths is None:
        valid = data.reshape(n * T, -1)
    else:
        lengths = np.asarray(lengths)
        if lengths.shape != (n,) or not (
            np.issubdtype(lengths.dtype, np.integer) or lengths.dtype == bool
        ):
            raise ValueError(
                f"lengths must be {n} integers (one per sequence), got shape "
                f"{lengths.shape} and dtype {lengths.dtype}."
            )
        if n and (lengths.min() < 0 or lengths.max() > T):
            raise ValueError(
                f"lengths must lie in 0..{T} (n_timesteps), got values from "
                f"{int(lengths.min())} to {int(lengths.max())}."
            )
        valid = data[lengths_to_mask(lengths, T)]
    count = int(valid.shape[0])
    if count == 0:
        raise ValueError("Cannot compute moments: there is no valid time step.")
    valid = valid.astype(np.float64, copy=False)
    largest = np.max(np.abs(valid), axis=0)
    tiny, huge = 2.0**-480, 2.0**480
    if ((largest <= huge) & ((largest >= tiny) | (largest == 0))).all():
        mean = valid.mean(axis=0)
        var = np.mean((valid - mean) ** 2, axis=0)
        return mean, var, count
    # tiny or huge values: each feature scaled by a power of two near its
    # largest magnitude (exact), so that the squares neither underflow nor
    # overflow; a variance beyond float64 stays infinite (callers check)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = _power_of_two(largest)
        mean = (valid / scale).mean(axis=0) * scale
        deviation = valid - mean
        spread = _power_of_two(np.max(np.abs(deviation), axis=0))
        std = np.sqrt(np.mean((deviation / spread) ** 2, axis=0)) * spread
        var = std**2
    return mean, var, count


def _power_of_two(values: np.ndarray) -> np.ndarray:
    """A power of two of the magnitude of each value (1 for 0, inf, NaN)."""
    values = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(values) & (values > 0)
    out = np.ones_like(values)
    out[ok] = np.ldexp(1.0, np.frexp(values[ok])[1] - 1)  # at most the value
    return out


def _combine_moments(
    mean_a: np.ndarray,
    var_a: np.ndarray,
    n_a: int,
    mean_b: np.ndarray,
    var_b: np.ndarray,
    n_b: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Moments of the union of two sets (Chan, Golub & LeVeque 1979).

    ``M2 = M2_a + M2_b + delta**2 n_a n_b / n`` with ``M2 = n var`` and
    ``delta = mean_b - mean_a``; exact up to rounding.
    """
    n = n_a + n_b
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / n)
    m2 = var_a * n_a + var_b * n_b + delta**2 * (n_a * n_b / n)
    return mean, m2 / n, n


def _is_constant_feature(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """True where the variance is within the rounding error of the two-pass
    algorithm (Chan, Golub & LeVeque), as scikit-learn's StandardScaler."""
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


def _scale_from_var(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """Standard deviations, with 1 for (near-)constant features."""
    scale = np.sqrt(var)
    scale[_is_constant_feature(var, mean, n)] = 1.0
    return scale


def _timesteps_per_item(X, seqs: Sequences, input_layout=None):
    """Original time length(s) of the input, padding included.

    ``check_sequences`` trims padding that every sequence shares (and, for a
    list, the trailing NaN steps of every item); the output is padded back to
    these lengths so that it has the shape of the input. Channels-first
    input (``input_layout``) has its steps on the last axis.
    """
    last = input_layout == "channels_first"
    if seqs.ragged:
        return [np.shape(x)[-1] if last and np.ndim(x) == 2 else len(x) for x in X]
    shape = getattr(X, "shape", None)  # ndarray, DataFrame: no conversion
    if shape is None:  # nested lists, array-likes with __array__ only
        shape = np.asarray(X).shape
    return int(shape[2] if last and len(shape) == 3 else shape[1])


def _format_output(values: np.ndarray, seqs: Sequences, original) -> object:
    """Put per-step values (padded, garbage at padding) in the input layout."""
    n, T, d = values.shape
    if seqs.ragged:
        out = []
        for i, (length, total) in enumerate(zip(seqs.lengths, original, strict=True)):
            item = np.full((total, d), np.nan)
            item[:length] = values[i, :length]
            out.append(item[:, 0].copy() if seqs.univariate else item)
        return out
    out = np.full((n, original, d), np.nan)
    out[:, :T] = values
    out[:, :T][~seqs.mask] = np.nan
    return out[:, :, 0].copy() if seqs.univariate else out


class SequenceStandardScaler(
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
    auto_wrap_output_keys=None,
):
    """Standardize features over all valid time steps of all sequences.

    The sequence counterpart of :class:`~sklearn.preprocessing.StandardScaler`:
    ``z = (x - mean_) / scale_`` at every valid time step, where the mean and
    the standard deviation of every feature are taken over every valid time
    step of every training sequence (padding is ignored). Features with zero
    variance (up to rounding) get ``scale_ = 1``, as in scikit-learn.

    Inputs follow the sklmn sequence contract (:mod:`sklmn.utils.sequences`):
    a padded array ``(n_samples, n_timesteps, n_features)`` whose trailing
    all-NaN steps are padding, a 2-D array ``(n_samples, n_timesteps)`` of
    univariate sequences, or a list of ``(T_i, n_features)`` / ``(T_i,)``
    arrays. :meth:`transform` and :meth:`inverse_transform` return float64
    data in the layout and shape of their input: a padded array stays padded
    (NaN at the padded steps), a 2-D array stays 2-D, a list stays a list of
    arrays of the same shapes. The input is never modified.

    Parameters
    ----------
    with_mean : bool, default=True
        Center the data (subtract ``mean_``) before scaling.
    with_std : bool, default=True
        Scale the data to unit variance (divide by ``scale_``).
    input_layout : {'batch_first', 'channels_first'} or None, default=None
        Layout of 3-D input sequences. None: sklmn's ``(n_samples,
        n_timesteps, n_features)``, with a warning in ``fit`` when the data
        look channels-first; ``'batch_first'``: the same without the check;
        ``'channels_first'``: ``(n_samples, n_channels, n_timepoints)`` as
        sktime, aeon and pyts store it (lists of ``(n_channels, T_i)``
        arrays), in which :meth:`transform` and :meth:`inverse_transform`
        also return sequences. See docs/user_guide/input.md.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features_in_,)
        Mean of every feature over the valid training steps (computed whatever
        ``with_mean``; subtracted only when ``with_mean=True``).
    var_ : ndarray of shape (n_features_in_,)
        Population variance (``ddof=0``) of every feature over the valid
        training steps (computed whatever ``with_std``).
    scale_ : ndarray of shape (n_features_in_,) or None
        ``sqrt(var_)`` with 1 for (near-)constant features; None when
        ``with_std=False``.
    n_samples_seen_ : int
        Number of valid time steps seen (over all sequences and, for
        :meth:`partial_fit`, all calls), not the number of sequences.
    n_features_in_ : int
        Number of features per time step.

    See Also
    --------
    sklearn.preprocessing.StandardScaler : The same for fixed-size vectors.
        On the flat layout of :class:`FlattenSequences` it standardizes every
        (time step, feature) column separately, not every feature.
    SequenceReshaper : Reads the flat 2-D layout back as sequences; put
        ``SequenceReshaper(n_features=d)`` before this scaler to standardize
        sequences inside a 2-D-only scikit-learn tool (bagging, one-vs-one,
        classifier chains, ``permutation_importance``, ...).

    Notes
    -----
    Statistics are accumulated in float64 with the two-pass algorithm;
    :meth:`partial_fit` merges the mean and variance of every batch with the
    previous ones by the parallel update of Chan, Golub & LeVeque (1979), so
    that ``partial_fit`` over batches equals ``fit`` on their union up to
    rounding.

    Outputs are sequences, not tables: ``set_output`` (pandas / polars
    output) is not supported.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import SequenceStandardScaler
    >>> X = [np.array([[0.0, 10.0], [2.0, 10.0]]), np.array([[4.0, 10.0]])]
    >>> scaler = SequenceStandardScaler().fit(X)
    >>> scaler.mean_, scaler.scale_, scaler.n_samples_seen_
    (array([ 2., 10.]), array([1.63299316, 1.        ]), 3)
    >>> [z.round(3).tolist() for z in scaler.transform(X)]
    [[[-1.225, 0.0], [0.0, 0.0]], [[1.225, 0.0]]]

    Padding (trailing all-NaN steps) is ignored and kept:

    >>> X_pad = np.array([[[0.0], [2.0]], [[4.0], [np.nan]]])
    >>> SequenceStandardScaler().fit_transform(X_pad)[:, :, 0].round(3)
    array([[-1.225,  0.   ],
           [ 1.225,    nan]])

    In a pipeline before an sklmn estimator:

    >>> from sklearn.pipeline import make_pipeline
    >>> from sklmn import LMNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = [100 + 50 * rng.randn(rng.randint(3, 6), 2) for _ in range(20)]
    >>> y = np.array([int(x[0, 0] > 100) for x in X])
    >>> model = make_pipeline(
    ...     SequenceStandardScaler(),
    ...     LMNClassifier(hidden_size=4, memory_size=4, max_iter=3, random_state=0),
    ... ).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    """

    #: Fitted attributes that :func:`sklmn.persistence.load` may set
    _fitted_attributes: dict = {
        "n_features_in_": "int",
        "feature_names_in_": "array",
        "mean_": "array",
        "var_": "array",
        "scale_": "array",
        "n_samples_seen_": "int",
    }

    _parameter_constraints: dict = {
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "input_layout": [None, StrOptions(set(INPUT_LAYOUTS))],
    }

    def __init__(self, *, with_mean=True, with_std=True, input_layout=None):
        self.with_mean = with_mean
        self.with_std = with_std
        self.input_layout = input_layout

    def __setstate__(self, state):
        # objects pickled before input_layout existed read batch-first data
        state = dict(state)
        state.setdefault("input_layout", None)
        super().__setstate__(state)

    def _reset(self) -> None:
        for attr in ("mean_", "var_", "scale_", "n_samples_seen_"):
            if hasattr(self, attr):
                delattr(self, attr)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Compute the mean and standard deviation of every feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Training sequences (see :mod:`sklmn.utils.sequences`).
        y : None
            Ignored.

        Returns
        -------
        self : SequenceStandardScaler
        """
        self._reset()
        return self._partial_fit(X)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Update the mean and standard deviation with a batch of sequences.

        The statistics of the batch are merged with those of the previous
        calls exactly (parallel update of Chan, Golub & LeVeque), so that
        ``partial_fit`` over batches equals ``fit`` on their union up to
        rounding. The batches may have different sequence lengths and
        layouts, not different numbers of features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            A batch of sequences.
        y : None
            Ignored.

        Returns
        -------
        self : SequenceStandardScaler
        """
        return self._partial_fit(X)

    def _partial_fit(self, X):
        first = not hasattr(self, "n_samples_seen_")
        seqs = validate_sequences(self, X, reset=first)
        mean, var, count = _sequence_moments(seqs.data, seqs.lengths)
        if not first:
            with np.errstate(over="ignore", invalid="ignore"):
                mean, var, count = _combine_moments(
                    self.mean_, self.var_, self.n_samples_seen_, mean, var, count
                )
        if not (np.isfinite(mean).all() and np.isfinite(var).all()):
            bad = int(np.flatnonzero(~(np.isfinite(mean) & np.isfinite(var)))[0])
            raise ValueError(
                f"X has values too large for SequenceStandardScaler: the variance "
                f"of feature {bad} overflows float64 (max |X| = "
                f"{float(np.max(np.abs(seqs.data[seqs.mask][:, bad]))):.4g}). "
                "Rescale X (for example divide it by a constant)."
            )
        valid = seqs.data[seqs.mask]
        spread = np.ptp(valid, axis=0) if valid.size else np.zeros_like(var)
        lost = (var < np.finfo(np.float64).tiny) & (spread > 1e-6 * np.abs(mean))
        if self.with_std and lost.any():
            bad = int(np.flatnonzero(lost)[0])
            raise ValueError(
                f"X has values too small for SequenceStandardScaler: the variance "
                f"of feature {bad} underflows float64 (its values span "
                f"{float(spread[bad]):.4g}). Rescale X (for example multiply it "
                "by a constant)."
            )
        self.mean_, self.var_, self.n_samples_seen_ = mean, var, int(count)
        self.scale_ = _scale_from_var(var, mean, count) if self.with_std else None
        return self

    def _apply(self, X, inverse: bool):
        check_is_fitted(self)
        seqs = validate_sequences(self, X, reset=False)
        original = _timesteps_per_item(X, seqs, self.input_layout)
        values = seqs.data  # a fresh float64 copy: safe to modify in place
        largest = float(np.max(np.abs(values[seqs.mask]), initial=0.0))
        with np.errstate(over="ignore", invalid="ignore"):
            if inverse:
                if self.with_std:
                    values *= self.scale_
                if self.with_mean:
                    values += self.mean_
            else:
                if self.with_mean:
                    values -= self.mean_
                if self.with_std:
                    values /= self.scale_
            bad = ~np.isfinite(values[seqs.mask])
        if bad.any():
            what = "X * scale_ + mean_" if inverse else "(X - mean_) / scale_"
            name = "inverse_transform" if inverse else "transform"
            raise FloatingPointError(
                f"{name} of X gives {int(bad.sum())} non-finite values: {what} "
                f"overflows float64 (max |X| = {largest:.4g}). The values of X "
                "are too large for this scaler."
            )
        return restore_input_layout(self, _format_output(values, seqs, original))

    def transform(self, X):
        """Standardize sequences: ``(x - mean_) / scale_`` at every valid step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Sequences with ``n_features_in_`` features per time step.

        Returns
        -------
        X_tr : ndarray or list of ndarray, float64
            Same layout and shape as ``X``; NaN at the padded steps of a padded
            array (and at the trailing all-NaN steps of list items).
        """
        return self._apply(X, inverse=False)

    def inverse_transform(self, X):
        """Undo :meth:`transform`: ``x * scale_ + mean_`` at every valid step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Standardized sequences with ``n_features_in_`` features per step.

        Returns
        -------
        X_orig : ndarray or list of ndarray, float64
            Same layout and shape as ``X``.
        """
        return self._apply(X, inverse=True)


# ---------------------------------------------------------------------------
# The flat layout: sequences as 2-D tables for 2-D-only scikit-learn tools
# ---------------------------------------------------------------------------


class FlattenSequences(
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    TransformerMixin,
    BaseEstimator,
    auto_wrap_output_keys=None,
):
    """Turn sequences into the flat 2-D layout ``(n, n_timesteps * n_features)``.

    Meta-estimators and tools of scikit-learn that validate a 2-D ``X``
    (:class:`~sklearn.ensemble.BaggingClassifier`,
    :class:`~sklearn.multiclass.OneVsOneClassifier`,
    :class:`~sklearn.multioutput.ClassifierChain`,
    :func:`~sklearn.inspection.permutation_importance`, ...) refuse 3-D arrays
    and lists of sequences. Flatten the sequences once with this transformer
    (or :func:`flatten_sequences`), hand the flat table to the tool, and put
    a :class:`SequenceReshaper` in front of the sklmn estimator so that the
    estimator sees sequences again.

    The flat layout is ``X_flat = X.reshape(n_samples, n_timesteps *
    n_features)`` (C order, time major): column ``t * n_features + j`` holds
    feature ``j`` at time step ``t``. Sequences shorter than ``n_timesteps``
    are padded with NaN after their end, so that reshaping back gives
    trailing all-NaN steps, which every sklmn estimator reads as padding.

    Parameters
    ----------
    n_timesteps : int or None, default=None
        Width of the layout in time steps. None: the padded length of the
        training input (the longest training sequence for a list). Sequences
        longer than ``n_timesteps_`` are refused at transform time (never
        truncated silently).
    input_layout : {'batch_first', 'channels_first'} or None, default=None
        Layout of 3-D input sequences. None: sklmn's ``(n_samples,
        n_timesteps, n_features)``, with a warning in ``fit`` when the data
        look channels-first; ``'batch_first'``: the same without the check;
        ``'channels_first'``: ``(n_samples, n_channels, n_timepoints)`` as
        sktime, aeon and pyts store it (lists of ``(n_channels, T_i)``
        arrays), in which :meth:`inverse_transform` also returns sequences.
        See docs/user_guide/input.md.

    Attributes
    ----------
    n_timesteps_ : int
        Number of time steps of the flat layout.
    n_features_in_ : int
        Number of features per time step.

    See Also
    --------
    flatten_sequences : The same as a function.
    SequenceReshaper : The inverse, for use inside a pipeline.
    SequenceStandardScaler : Standardization per feature over all time steps;
        :class:`~sklearn.preprocessing.StandardScaler` on the flat layout
        standardizes every (time step, feature) column on its own instead.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import FlattenSequences
    >>> X = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0]])]
    >>> FlattenSequences().fit_transform(X)
    array([[ 1.,  2.,  3.,  4.],
           [ 5.,  6., nan, nan]])
    """

    _fitted_attributes: dict = {
        "n_features_in_": "int",
        "feature_names_in_": "array",
        "n_timesteps_": "int",
    }

    _parameter_constraints: dict = {
        "n_timesteps": [Interval(Integral, 1, None, closed="left"), None],
        "input_layout": [None, StrOptions(set(INPUT_LAYOUTS))],
    }

    def __init__(self, *, n_timesteps=None, input_layout=None):
        self.n_timesteps = n_timesteps
        self.input_layout = input_layout

    def __setstate__(self, state):
        # objects pickled before input_layout existed read batch-first data
        state = dict(state)
        state.setdefault("input_layout", None)
        super().__setstate__(state)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the number of features per step and the layout's width.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Sequences (see :mod:`sklmn.utils.sequences`).
        y : None
            Ignored.

        Returns
        -------
        self : FlattenSequences
        """
        seqs = validate_sequences(self, X, reset=True)
        original = _timesteps_per_item(X, seqs, self.input_layout)
        longest = max(original) if isinstance(original, list) else original
        if self.n_timesteps is None:
            self.n_timesteps_ = int(longest)
        else:
            if seqs.n_timesteps > self.n_timesteps:
                raise ValueError(
                    f"n_timesteps={self.n_timesteps} is shorter than the longest "
                    f"training sequence ({seqs.n_timesteps} steps)."
                )
            self.n_timesteps_ = int(self.n_timesteps)
        return self

    def transform(self, X):
        """Flatten sequences into ``(n_samples, n_timesteps_ * n_features_in_)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Sequences of at most ``n_timesteps_`` valid steps with
            ``n_features_in_`` features per step.

        Returns
        -------
        X_flat : ndarray of shape (n_samples, n_timesteps_ * n_features_in_)
            Float64, NaN after the end of every sequence.
        """
        check_is_fitted(self)
        seqs = validate_sequences(self, X, reset=False)
        if seqs.n_timesteps > self.n_timesteps_:
            raise ValueError(
                f"X has sequences of {seqs.n_timesteps} valid steps, longer than "
                f"the {self.n_timesteps_} steps of the flat layout fitted; refit "
                "with a larger n_timesteps (sequences are never truncated)."
            )
        n, T, d = seqs.data.shape
        out = np.full((n, self.n_timesteps_, d), np.nan)
        out[:, :T][seqs.mask] = seqs.data[seqs.mask]
        return out.reshape(n, self.n_timesteps_ * d)

    def inverse_transform(self, X):
        """Reshape the flat layout back into NaN-padded sequences.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps_ * n_features_in_)
            Flat layout.

        Returns
        -------
        X_seq : ndarray of shape (n_samples, n_timesteps_, n_features_in_)
        """
        check_is_fitted(self)
        X = check_array(X, ensure_all_finite="allow-nan", dtype=np.float64)
        width = self.n_timesteps_ * self.n_features_in_
        if X.shape[1] != width:
            raise ValueError(
                f"X has {X.shape[1]} columns, expected {width} "
                f"({self.n_timesteps_} steps x {self.n_features_in_} features)."
            )
        return restore_input_layout(
            self, X.reshape(X.shape[0], self.n_timesteps_, self.n_features_in_)
        )


def flatten_sequences(X, *, n_timesteps=None):
    """Return sequences in the flat layout ``(n_samples, n_timesteps * n_features)``.

    Shorthand for ``FlattenSequences(n_timesteps=n_timesteps).fit_transform(X)``,
    in the layout described there (column ``t * n_features + j`` holds feature
    ``j`` at time step ``t``; shorter sequences are padded with NaN).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
        Sequences (see :mod:`sklmn.utils.sequences`).
    n_timesteps : int or None, default=None
        Width in time steps (at least the longest sequence); None: the padded
        length of ``X`` (the longest sequence of a list). Give the same value
        for training and test data of different lengths.

    Returns
    -------
    X_flat : ndarray of shape (n_samples, n_timesteps * n_features)

    See Also
    --------
    FlattenSequences : The same as a transformer.
    SequenceReshaper : The inverse, for use inside a pipeline.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import flatten_sequences
    >>> flatten_sequences([[1.0, 2.0, 3.0], [4.0]])
    array([[ 1.,  2.,  3.],
           [ 4., nan, nan]])
    >>> flatten_sequences(np.zeros((5, 4, 3)), n_timesteps=6).shape
    (5, 18)
    """
    return FlattenSequences(n_timesteps=n_timesteps).fit_transform(X)


class SequenceReshaper(
    _DocLinkMixin, TransformerMixin, BaseEstimator, auto_wrap_output_keys=None
):
    """Read the flat 2-D layout back as sequences, inside a pipeline.

    The first step of a pipeline that lets an sklmn estimator sit inside a
    scikit-learn tool that only accepts 2-D ``X``: the tool handles the flat
    table ``(n_samples, n_timesteps * n_features)`` (bootstrap rows, permute
    columns, append predictions ...) and this step reshapes every row it
    receives into a sequence ``(n_timesteps, n_features)`` for the estimator::

        BaggingClassifier(make_pipeline(SequenceReshaper(n_features=d),
                                        LMNClassifier()))

    The flat layout is ``X_flat = X.reshape(n_samples, n_timesteps *
    n_features)`` (C order, time major): column ``t * n_features + j`` holds
    feature ``j`` at time step ``t``. Sequences shorter than ``n_timesteps``
    are padded with NaN after their end, so that reshaping back gives
    trailing all-NaN steps, which every sklmn estimator reads as padding.

    Some tools add columns to ``X`` before it reaches the estimator:
    :class:`~sklearn.multioutput.ClassifierChain` and
    :class:`~sklearn.multioutput.RegressorChain` append the previous targets
    of the chain, :class:`~sklearn.ensemble.StackingClassifier` with
    ``passthrough=True`` puts the base estimators' predictions before ``X``
    for the final estimator. Set ``n_timesteps`` and these extra columns are
    read as *static* features: their values are repeated at every valid time
    step, after the sequence's own features (output ``(n_samples,
    n_timesteps, n_features + n_static_)``). Without ``n_timesteps`` the
    width must be a multiple of ``n_features`` and every column is a
    sequence value.

    Parameters
    ----------
    n_features : int, default=1
        Number of features per time step in the flat layout.
    n_timesteps : int or None, default=None
        Number of time steps of the flat layout. None: ``n_features_in_ //
        n_features`` (no static columns). When set, the columns beyond
        ``n_timesteps * n_features`` are static features.
    static_columns : {'last', 'first'}, default='last'
        Where the static columns are: after the flat sequences (chains) or
        before them (the final estimator of a stacking ensemble with
        ``passthrough=True``). Used only when there are static columns.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns of the flat input.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when fitted on a DataFrame with string column names.
    n_timesteps_ : int
        Number of time steps of every output sequence.
    n_static_ : int
        Number of static columns (0 without ``n_timesteps``).

    See Also
    --------
    FlattenSequences : The inverse transformation (sequences to flat layout).
    SequenceStandardScaler : Standardization per feature over all valid time
        steps. Put it after this step to standardize sequences inside a
        tool; :class:`~sklearn.preprocessing.StandardScaler` applied to the
        flat layout standardizes each (time step, feature) column separately,
        which is rarely what a recurrent model needs.

    Notes
    -----
    Variable-length sequences are NaN-padded in the flat layout. Tools that
    tolerate NaN in ``X`` pass them through (bagging, one-vs-one,
    ``permutation_importance``, ``StandardScaler``, stacking); those that
    require finite values (the chains) need sequences of equal length:
    crop or resample them first. Tools that select or reorder columns
    (``BaggingClassifier(max_features<1.0)`` or ``bootstrap_features=True``)
    break the layout and must not be used with it.
    :func:`~sklearn.inspection.permutation_importance` on the flat layout
    measures the importance of every (time step, feature) cell:
    ``result.importances_mean.reshape(n_timesteps, n_features)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.preprocessing import SequenceReshaper
    >>> X_flat = np.arange(12.0).reshape(2, 6)
    >>> SequenceReshaper(n_features=2).fit_transform(X_flat)[0]
    array([[0., 1.],
           [2., 3.],
           [4., 5.]])

    Two static columns after a flat sequence of 2 steps x 2 features:

    >>> SequenceReshaper(n_features=2, n_timesteps=2).fit_transform(X_flat)[0]
    array([[0., 1., 4., 5.],
           [2., 3., 4., 5.]])

    With :class:`~sklearn.ensemble.BaggingClassifier`:

    >>> from sklearn.ensemble import BaggingClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklmn import LMNClassifier
    >>> from sklmn.preprocessing import flatten_sequences
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(30, 5, 2)
    >>> y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    >>> model = make_pipeline(
    ...     SequenceReshaper(n_features=2),
    ...     LMNClassifier(hidden_size=4, memory_size=4, max_iter=2,
    ...                   pretrainer=None, random_state=0),
    ... )
    >>> bag = BaggingClassifier(model, n_estimators=2, random_state=0)
    >>> bag.fit(flatten_sequences(X), y).predict(flatten_sequences(X[:3])).shape
    (3,)
    """

    _fitted_attributes: dict = {
        "n_features_in_": "int",
        "feature_names_in_": "array",
        "n_timesteps_": "int",
        "n_static_": "int",
    }

    _parameter_constraints: dict = {
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_timesteps": [Interval(Integral, 1, None, closed="left"), None],
        "static_columns": [StrOptions({"last", "first"})],
    }

    def __init__(self, *, n_features=1, n_timesteps=None, static_columns="last"):
        self.n_features = n_features
        self.n_timesteps = n_timesteps
        self.static_columns = static_columns

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _layout(self, width: int) -> tuple[int, int]:
        d = self.n_features
        if self.n_timesteps is None:
            if width % d:
                raise ValueError(
                    f"X has {width} columns, not a multiple of n_features={d}. "
                    "If some columns are not sequence values (e.g. the targets "
                    "a ClassifierChain appends), set n_timesteps so that the "
                    "extra columns are read as static features."
                )
            return width // d, 0
        needed = self.n_timesteps * d
        if width < needed:
            raise ValueError(
                f"X has {width} columns, fewer than n_timesteps * n_features = "
                f"{self.n_timesteps} * {d} = {needed}."
            )
        return self.n_timesteps, width - needed

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the layout of the flat table.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_columns)
            Flat layout, NaN after the end of shorter sequences.
        y : None
            Ignored.

        Returns
        -------
        self : SequenceReshaper
        """
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=np.float64)
        self.n_timesteps_, self.n_static_ = self._layout(X.shape[1])
        return self

    def transform(self, X):
        """Reshape every row into a sequence.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Flat layout.

        Returns
        -------
        X_seq : ndarray of shape (n_samples, n_timesteps_, n_features + n_static_)
            Float64 sequences; the steps that are NaN in every sequence
            feature stay NaN (static features included), so that sklmn
            estimators read them as padding.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64
        )
        n, T, d, k = X.shape[0], self.n_timesteps_, self.n_features, self.n_static_
        if k and self.static_columns == "first":
            static, flat = X[:, :k], X[:, k:]
        else:
            flat, static = X[:, : T * d], X[:, T * d :]
        seq = flat.reshape(n, T, d)
        if not k:
            return seq.copy()
        out = np.empty((n, T, d + k))
        out[:, :, :d] = seq
        out[:, :, d:] = static[:, None, :]
        out[np.isnan(seq).all(axis=2)] = np.nan
        return out

    def inverse_transform(self, X):
        """Flatten sequences back into the flat layout (static columns included).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps_, n_features + n_static_)
            Sequences as returned by :meth:`transform`.

        Returns
        -------
        X_flat : ndarray of shape (n_samples, n_features_in_)
        """
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        T, d, k = self.n_timesteps_, self.n_features, self.n_static_
        if X.ndim == 2 and d + k == 1:
            X = X[:, :, None]
        if X.ndim != 3 or X.shape[1:] != (T, d + k):
            raise ValueError(
                f"X must have shape (n_samples, {T}, {d + k}), got {X.shape}."
            )
        flat = X[:, :, :d].reshape(len(X), T * d)
        if not k:
            return flat
        # the static values of a sequence, from its first valid step
        static = np.full((len(X), k), np.nan)
        valid = ~np.isnan(X[:, :, :d]).all(axis=2)
        has_valid = valid.any(axis=1)
        first = valid.argmax(axis=1)
        static[has_valid] = X[has_valid, first[has_valid], d:]
        parts = [static, flat] if self.static_columns == "first" else [flat, static]
        return np.hstack(parts)


# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
