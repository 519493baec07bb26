"""The flat 2-D layout of sequences, for the scikit-learn tools that accept
only a 2-D ``X``: :class:`~sklmn.preprocessing.FlattenSequences`,
:func:`~sklmn.preprocessing.flatten_sequences` and
:class:`~sklmn.preprocessing.SequenceReshaper`, public in
:mod:`sklmn.preprocessing` (their ``__module__``: saved files and pickles
name them there).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .utils._atomic import atomic_fit
from .utils._compat import Interval, StrOptions, _fit_context
from .utils._doc_link import _DocLinkMixin
from .utils._layout import _InputLayoutPicklesMixin, fill_input_layout_doc
from .utils._tags import _SequenceInputTagsMixin, _SequenceOutputMixin
from .utils.sequences import (
    INPUT_LAYOUTS,
    Sequences,
    restore_input_layout,
    validate_sequences,
)

__all__ = ["FlattenSequences", "SequenceReshaper", "flatten_sequences"]

#: the public module of the classes and function defined here
_PUBLIC_MODULE = "sklmn.preprocessing"


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


@fill_input_layout_doc
class FlattenSequences(
    _InputLayoutPicklesMixin,
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    TransformerMixin,
    BaseEstimator,
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

    The columns are named ``{feature}_t{step}`` by
    :meth:`get_feature_names_out` (``x0_t0, x1_t0, ..., x0_t1, ...`` by
    default), so the transformer works with
    :meth:`~sklearn.pipeline.Pipeline.get_feature_names_out`,
    :class:`~sklearn.compose.ColumnTransformer` and ``set_output`` (pandas
    or polars output of :meth:`transform`).

    Parameters
    ----------
    n_timesteps : int or None, default=None
        Width of the layout in time steps. None: the padded length of the
        training input (the longest training sequence for a list). Sequences
        longer than ``n_timesteps_`` are refused at transform time (never
        truncated silently).
    %(input_layout)s, in which :meth:`inverse_transform` also returns sequences.
        See docs/user_guide/input.md.

    Attributes
    ----------
    n_timesteps_ : int
        Number of time steps of the flat layout.
    n_features_in_ : int
        Number of features per time step.
    feature_names_in_ : ndarray of shape (n_columns,)
        Column names, when fitted on a 2-D DataFrame (univariate sequences,
        one column per time step) with string column names.

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
    >>> flat = FlattenSequences().fit(X)
    >>> flat.transform(X)
    array([[ 1.,  2.,  3.,  4.],
           [ 5.,  6., nan, nan]])
    >>> flat.get_feature_names_out()
    array(['x0_t0', 'x1_t0', 'x0_t1', 'x1_t1'], dtype=object)
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

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def fit(self, X, y=None):
        """Record the number of features per step and the layout's width.

        A call that raises leaves a fitted transformer as it was.

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

    def get_feature_names_out(self, input_features=None):
        """Names of the flat columns: ``{feature}_t{step}``, time major.

        Column ``t * n_features_in_ + j`` is named ``f"{name_j}_t{t}"``,
        where ``name_j`` is the name of feature ``j`` of a time step.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            The names of the ``n_features_in_`` features of a time step;
            None: ``x0``, ..., ``x{n_features_in_ - 1}``. The column names
            seen in ``fit`` (``feature_names_in_``: the time-step columns
            of a 2-D DataFrame, as :class:`~sklearn.compose.ColumnTransformer`
            passes them) are also accepted, and only checked: the feature
            of such univariate sequences is then named ``x0``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            ``n_timesteps_ * n_features_in_`` names.

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.preprocessing import FlattenSequences
        >>> flat = FlattenSequences().fit(np.zeros((3, 2, 2)))
        >>> flat.get_feature_names_out(["pitch", "volume"])
        array(['pitch_t0', 'volume_t0', 'pitch_t1', 'volume_t1'], dtype=object)
        """
        check_is_fitted(self)
        names = [f"x{j}" for j in range(self.n_features_in_)]
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            seen = getattr(self, "feature_names_in_", None)
            if given.ndim != 1:
                raise ValueError(
                    "input_features must be a 1-D array-like of str, got shape "
                    f"{given.shape}."
                )
            if seen is not None and np.array_equal(given, seen):
                pass  # the time-step columns of a 2-D DataFrame: checked
            elif len(given) == self.n_features_in_:
                names = [str(name) for name in given]
            elif seen is not None and len(given) == len(seen):
                raise ValueError(
                    "input_features is not equal to feature_names_in_ (the "
                    "column names seen in fit)."
                )
            else:
                expected = f"{self.n_features_in_} (n_features_in_)"
                if seen is not None:
                    expected += f" or the {len(seen)} column names seen in fit"
                raise ValueError(
                    f"input_features should have length {expected}, got "
                    f"{len(given)}."
                )
        return np.asarray(
            [f"{name}_t{t}" for t in range(self.n_timesteps_) for name in names],
            dtype=object,
        )

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
    _SequenceOutputMixin,
    _DocLinkMixin,
    TransformerMixin,
    BaseEstimator,
    auto_wrap_output_keys=None,
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
    @atomic_fit
    def fit(self, X, y=None):
        """Check the layout of the flat table.

        A call that raises leaves a fitted transformer as it was.

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


for _obj in (FlattenSequences, SequenceReshaper, flatten_sequences):
    _obj.__module__ = _PUBLIC_MODULE
del _obj
