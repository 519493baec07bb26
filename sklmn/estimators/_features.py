"""The features a fitted sequence estimator's readout reads, as a transformer."""

from __future__ import annotations

from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    MetaEstimatorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.validation import check_is_fitted

from ..utils._doc_link import _DocLinkMixin
from ..utils._tags import _SequenceInputTagsMixin
from ._base import _BaseSequenceEstimator
from ._lmn import LMNClassifier

__all__ = ["ReadoutFeatures"]


class ReadoutFeatures(
    ClassNamePrefixFeaturesOutMixin,
    MetaEstimatorMixin,
    TransformerMixin,
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    BaseEstimator,
):
    """One row per sequence: what the readout of a fitted network reads.

    ``fit`` fits a clone of ``estimator`` (a sequence classifier or
    regressor of :mod:`sklmn.estimators` with ``target='sequence'``);
    ``transform`` returns, for every sequence, the input of its linear
    readout: the recurrent output pooled over the valid steps as the
    fitted network pools it (``pooling``: the last step, and the mean, the
    maximum and the minimum where chosen). The estimator's own prediction
    is that readout applied to these rows (a regressor's output
    unstandardized; with ``fine_tuning='residual'``, plus the frozen
    start's output).

    The rows are a flat table, so any scikit-learn model can read the
    sequences through the network: a tree ensemble, for instance, reads
    thresholds of the pooled memory that a linear readout cannot (see
    ``docs/results.md``, "The readout's features").

    Parameters
    ----------
    estimator : estimator object or None, default=None
        The sequence estimator to fit (cloned); None:
        :class:`~sklmn.estimators.LMNClassifier` with its defaults.

    Attributes
    ----------
    estimator_ : estimator object
        The fitted clone of ``estimator``.
    n_features_in_ : int
        Number of features per time step of the fitted sequences.

    See Also
    --------
    sklmn.estimators.LMNClassifier : the default network.
    sklmn.preprocessing.FlattenSequences : sequences flattened as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import ExtraTreesClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklmn.estimators import LMNClassifier, ReadoutFeatures
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 12, 1)
    >>> y = (X[:, :4, 0].sum(1) > 0).astype(int)
    >>> lmn = LMNClassifier(hidden_size=4, memory_size=4, max_iter=2,
    ...                     random_state=0)
    >>> model = make_pipeline(
    ...     ReadoutFeatures(lmn), ExtraTreesClassifier(random_state=0)
    ... ).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    >>> ReadoutFeatures(lmn).fit(X, y).transform(X[:3]).shape[0]
    3
    """

    _parameter_constraints: dict = {
        "estimator": [_BaseSequenceEstimator, None],
    }

    def __init__(self, estimator=None):
        self.estimator = estimator

    def _estimator(self):
        """``estimator``, or the default network when it is None."""
        return LMNClassifier() if self.estimator is None else self.estimator

    def _checked_estimator(self):
        est = self._estimator()
        target = est.get_params(deep=False).get("target", "sequence")
        if target != "sequence":
            raise ValueError(
                "ReadoutFeatures needs an estimator with target='sequence' "
                f"(one readout row per sequence), got target={target!r}"
            )
        return est

    def fit(self, X, y=None, **fit_params):
        """Fit a clone of ``estimator`` on the sequences ``X``.

        Parameters
        ----------
        X : array-like or list of array-like
            Training sequences (any layout of :mod:`sklmn.utils.sequences`).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets of the estimator.
        **fit_params : dict
            Passed to the estimator's ``fit`` (``sample_weight``, ...).

        Returns
        -------
        self : ReadoutFeatures
        """
        self._validate_params()
        est = clone(self._checked_estimator()).fit(X, y, **fit_params)
        self.estimator_ = est
        self.n_features_in_ = est.n_features_in_
        return self

    @property
    def _n_features_out(self) -> int:
        """Number of columns of :meth:`transform` (for
        ``get_feature_names_out``)."""
        return int(self.estimator_.net_.module_.readout.in_features)

    def transform(self, X):
        """The readout's input of every sequence of ``X``.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences with ``n_features_in_`` features per step.

        Returns
        -------
        features : ndarray of shape (n_samples, n_features_out)
            float64 rows in the order of ``X``.
        """
        check_is_fitted(self)
        return self.estimator_._readout_features(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        allow_nan = self._estimator().__sklearn_tags__().input_tags.allow_nan
        tags.input_tags.allow_nan = allow_nan
        return tags
