"""Seeded generators of the synthetic memory tasks used in the papers."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._base import _check_bool, check_int

__all__ = ["make_copy_task", "make_adding_problem"]


def make_copy_task(
    n_samples: int = 1000,
    *,
    n_symbols: int = 10,
    delay: int = 100,
    n_classes: int = 8,
    one_hot: bool = True,
    random_state=None,
):
    """Generate the copy task (Carta et al. 2020b §5.1, after Jose et al. 2018).

    Each input has length ``2 * n_symbols + delay``: ``n_symbols`` (S) symbols
    drawn uniformly from ``n_classes`` (K) classes, then ``delay - 1`` blanks,
    one delimiter, and S blanks. The target is ``delay + n_symbols`` blanks
    followed by the S input symbols: the model must remember S symbols for T
    steps. Symbols are coded ``0 .. K-1``, the blank is ``K`` and the delimiter
    ``K + 1`` (it never appears in the target).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of sequences.
    n_symbols : int, default=10
        S, the number of symbols to copy.
    delay : int, default=100
        T, the number of steps between the end of the symbols and the start of
        the answer (the delimiter sits at step ``S + T - 1``).
    n_classes : int, default=8
        K, the size of the symbol alphabet.
    one_hot : bool, default=True
        Return the input one-hot encoded (``K + 2`` features per step);
        otherwise integer codes of shape ``(n_samples, 2S + T)``.
    random_state : int, RandomState instance or None, default=None
        Seed of the symbol draws.

    Returns
    -------
    X : ndarray of shape (n_samples, 2S + T, K + 2) or (n_samples, 2S + T)
        Inputs (float64 one-hot, or int64 codes).
    y : ndarray of shape (n_samples, 2S + T), dtype int64
        Per-step targets in ``0 .. K`` (K = blank). Score a model on the last
        S steps, ``y[:, -S:]``; a memoryless baseline gets ``1 / K`` there.

    Examples
    --------
    >>> from sklmn.datasets import make_copy_task
    >>> X, y = make_copy_task(2, n_symbols=3, delay=4, n_classes=5, random_state=0)
    >>> X.shape, y.shape
    ((2, 10, 7), (2, 10))
    >>> X.argmax(axis=2)[0].tolist()
    [4, 0, 3, 5, 5, 5, 6, 5, 5, 5]
    >>> y[0].tolist()
    [5, 5, 5, 5, 5, 5, 5, 4, 0, 3]
    """
    n_samples = check_int("n_samples", n_samples, 1)
    S = check_int("n_symbols", n_symbols, 1)
    T = check_int("delay", delay, 1)
    K = check_int("n_classes", n_classes, 2)
    one_hot = _check_bool("one_hot", one_hot)
    rng = check_random_state(random_state)
    length = 2 * S + T
    blank, delimiter = K, K + 1
    symbols = rng.randint(0, K, size=(n_samples, S))
    codes = np.full((n_samples, length), blank, dtype=np.int64)
    codes[:, :S] = symbols
    codes[:, S + T - 1] = delimiter
    y = np.full((n_samples, length), blank, dtype=np.int64)
    y[:, S + T :] = symbols
    if not one_hot:
        return codes, y
    X = np.zeros((n_samples, length, K + 2))
    np.put_along_axis(X, codes[:, :, None], 1.0, axis=2)
    return X, y


def make_adding_problem(
    n_samples: int = 1000,
    *,
    length: int = 200,
    random_state=None,
):
    """Generate the adding problem (Helfrich & Ye 2020 §5.1, Hochreiter & Schmidhuber).

    Two channels per step: a value drawn from U[0, 1) and a marker that is 1
    at exactly two steps, one drawn uniformly in ``[0, T/2)`` and one in
    ``[T/2, T)``, and 0 elsewhere. The target is the sum of the two marked
    values. Always predicting 1 gives an expected MSE of 1/6 ≈ 0.167.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of sequences.
    length : int, default=200
        T, the sequence length (at least 2).
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, length, 2)
        Values (channel 0) and markers (channel 1).
    y : ndarray of shape (n_samples,)
        Sum of the two marked values.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.datasets import make_adding_problem
    >>> X, y = make_adding_problem(5, length=10, random_state=0)
    >>> X.shape, y.shape
    ((5, 10, 2), (5,))
    >>> bool(np.allclose(y, (X[:, :, 0] * X[:, :, 1]).sum(axis=1)))
    True
    """
    n_samples = check_int("n_samples", n_samples, 1)
    T = check_int("length", length, 2)
    rng = check_random_state(random_state)
    half = T // 2
    values = rng.uniform(0.0, 1.0, size=(n_samples, T))
    first = rng.randint(0, half, size=n_samples)
    second = rng.randint(half, T, size=n_samples)
    markers = np.zeros((n_samples, T))
    rows = np.arange(n_samples)
    markers[rows, first] = 1.0
    markers[rows, second] = 1.0
    X = np.stack([values, markers], axis=2)
    y = values[rows, first] + values[rows, second]
    return X, y
