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


class _SequenceOutputMixin:
    """``set_output`` of a transformer whose output is sequences, not a
    table: the default output only, so that ``Pipeline.set_output`` (which
    configures every step) works on a pipeline that holds it.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> from sklmn.utils._tags import _SequenceOutputMixin
    >>> class Scaler(_SequenceOutputMixin, BaseEstimator):
    ...     pass
    >>> Scaler().set_output(transform="default")
    Scaler()
    """

    def set_output(self, *, transform=None):
        """Set the output container: sequences (the default) only.

        Parameters
        ----------
        transform : {'default'} or None, default=None
            ``'default'`` and None keep the output as it is (sequences);
            a table container (``'pandas'``, ``'polars'``) cannot hold
            sequences and is refused.

        Returns
        -------
        self : object
            The transformer.

        Raises
        ------
        ValueError
            If ``transform`` names a table container.
        """
        if transform is not None and not (
            isinstance(transform, str) and transform == "default"
        ):
            raise ValueError(
                f"{type(self).__name__} returns sequences, not a table: "
                f"set_output supports transform='default' or None only, got "
                f"transform={transform!r}"
            )
        return self
