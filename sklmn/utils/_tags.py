"""The scikit-learn input tags of the estimators that read sequences."""

from __future__ import annotations

__all__: list[str] = []


class _SequenceInputTagsMixin:
    """Declare the sequence inputs in ``__sklearn_tags__``: 2-D ``X`` are
    univariate sequences ``(n, T)``, 3-D ``X`` are ``(n, T, d)``.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> from sklmn.utils._tags import _SequenceInputTagsMixin
    >>> class Reader(_SequenceInputTagsMixin, BaseEstimator):
    ...     pass
    >>> Reader().__sklearn_tags__().input_tags.three_d_array
    True
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True
        tags.input_tags.three_d_array = True
        return tags
