"""scikit-learn's 8x8 digits read as sequences (a small sequential MNIST)."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits
from sklearn.utils import Bunch, check_random_state

from ._base import _check_bool

__all__ = ["load_sequential_digits"]

_DESCR = """\
Sequential digits
-----------------
scikit-learn's 1797 handwritten digits (8x8 images, 10 classes) read as
sequences, the offline stand-in for sequential / permuted MNIST (Carta et al. 2020b
§5.2). ``mode='pixel'`` gives 64 steps of one pixel (row-major scan),
``mode='row'`` 8 steps of one 8-pixel row. With ``permuted=True`` the 64 pixels
are shuffled by a fixed permutation drawn from ``random_state`` (same
permutation for every image). Pixel values are scaled to [0, 1] (divided by
16).
"""


def load_sequential_digits(
    *, mode: str = "pixel", permuted: bool = False, random_state=0, return_X_y=False
):
    """Load scikit-learn's digits as sequences (sequential / permuted digits).

    Parameters
    ----------
    mode : {'pixel', 'row'}, default='pixel'
        One pixel per step (64 steps, 1 feature) or one row per step (8 steps,
        8 features).
    permuted : bool, default=False
        Apply a fixed random permutation to the 64 pixels before reading them
        (the permuted-MNIST variant).
    random_state : int, RandomState instance or None, default=0
        Seed of the permutation (only used when ``permuted=True``).
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (X, float64 of shape (1797, 64, 1) or (1797, 8, 8)),
        ``target`` (y, int64 of shape (1797,)), ``permutation`` (ndarray of the
        pixel order, identity when not permuted), ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Examples
    --------
    >>> from sklmn.datasets import load_sequential_digits
    >>> X, y = load_sequential_digits(return_X_y=True)
    >>> X.shape, y.shape
    ((1797, 64, 1), (1797,))
    >>> load_sequential_digits(mode="row").data.shape
    (1797, 8, 8)
    """
    if mode not in ("pixel", "row"):
        raise ValueError(f"mode must be 'pixel' or 'row', got {mode!r}.")
    permuted = _check_bool("permuted", permuted)
    return_X_y = _check_bool("return_X_y", return_X_y)
    digits = load_digits()
    images = digits.data / 16.0  # (n, 64) row-major
    if permuted:
        permutation = check_random_state(random_state).permutation(64)
    else:
        permutation = np.arange(64)
    images = images[:, permutation]
    if mode == "pixel":
        X = images[:, :, None]
    else:
        X = images.reshape(-1, 8, 8)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = digits.target.astype(np.int64)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, permutation=permutation, DESCR=_DESCR)
