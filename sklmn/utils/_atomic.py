"""All-or-nothing ``fit`` for estimators that assign their fitted state."""

from __future__ import annotations

import functools

__all__ = ["atomic_fit"]


def atomic_fit(fit):
    """Make ``fit`` all or nothing.

    On any exception (``KeyboardInterrupt`` included) the estimator gets back
    every attribute it had before the call. The snapshot is shallow: the
    wrapped method must assign new objects to its fitted attributes rather
    than mutate the existing ones in place.

    Parameters
    ----------
    fit : callable
        A method ``fit(self, *args, **kwargs)``.

    Returns
    -------
    wrapper : callable
        The same method, all or nothing.

    Examples
    --------
    >>> class Est:
    ...     @atomic_fit
    ...     def fit(self, fail):
    ...         self.coef_ = 1
    ...         if fail:
    ...             raise ValueError("bad data")
    ...         return self
    >>> est = Est().fit(False)
    >>> del est.coef_
    >>> try:
    ...     est.fit(True)
    ... except ValueError:
    ...     pass
    >>> hasattr(est, "coef_")
    False
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper
