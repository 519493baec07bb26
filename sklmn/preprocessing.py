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

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from ._flat_layout import (
    FlattenSequences,
    SequenceReshaper,
    _timesteps_per_item,
    flatten_sequences,
)
from .utils._atomic import atomic_fit
from .utils._compat import StrOptions, _fit_context
from .utils._doc_link import _DocLinkMixin
from .utils._layout import _InputLayoutPicklesMixin, fill_input_layout_doc
from .utils._registry import register_safe_classes
from .utils._tags import _SequenceInputTagsMixin, _SequenceOutputMixin
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


@fill_input_layout_doc
class SequenceStandardScaler(
    _SequenceOutputMixin,
    _InputLayoutPicklesMixin,
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
    %(input_layout)s, in which :meth:`transform` and :meth:`inverse_transform`
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

    Outputs are sequences, not tables: ``set_output`` accepts the default
    output only (pandas / polars output is refused), so that a pipeline's
    ``set_output`` configures it.

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
        "scale_": "array?",
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

    def _reset(self) -> None:
        for attr in ("mean_", "var_", "scale_", "n_samples_seen_"):
            if hasattr(self, attr):
                delattr(self, attr)

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def fit(self, X, y=None):
        """Compute the mean and standard deviation of every feature.

        All or nothing: if it raises (e.g. on values too large), the scaler
        keeps the statistics it had before the call.

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
    @atomic_fit
    def partial_fit(self, X, y=None):
        """Update the mean and standard deviation with a batch of sequences.

        The statistics of the batch are merged with those of the previous
        calls exactly (parallel update of Chan, Golub & LeVeque), so that
        ``partial_fit`` over batches equals ``fit`` on their union up to
        rounding. The batches may have different sequence lengths and
        layouts, not different numbers of features. A call that raises
        leaves the statistics as they were.

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
        # inverse_transform reads the output of transform, an array: column
        # names are not checked (as scikit-learn's scalers do)
        seqs = validate_sequences(
            self, X, reset=False, check_feature_names=not inverse
        )
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


# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
