"""Top right singular vectors of Ξ: dense, Gram and matrix-free solvers.

Every solver returns ``(singular_values, components)`` with singular values in
descending order and ``components`` of shape ``(p, L a)`` (rows are the right
singular vectors ``U[:, i]ᵀ`` of Carta et al. 2021 §2.3), signs fixed by
:func:`flip_signs` so that the solvers agree up to rotations inside degenerate
singular subspaces.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator
from sklearn.utils import check_random_state

from ._xi import build_xi

__all__ = [
    "flip_signs",
    "solve_dense",
    "solve_gram",
    "randomized_svd_operator",
]

#: The dense solver refuses to build a Ξ larger than this (bytes).
DENSE_MAX_BYTES = 2 * 1024**3


def _check_n_components(n_components, bound: int, shape: tuple) -> int:
    """``n_components`` as an int in ``[1, bound]`` (``bound = min(shape)``,
    the most singular vectors the matrix of ``shape`` has)."""
    if (
        isinstance(n_components, bool)
        or not isinstance(n_components, Integral)
        or not 1 <= n_components <= bound
    ):
        raise ValueError(
            f"n_components must be an integer in [1, {bound}] (min of the "
            f"shape {shape}), got {n_components!r}."
        )
    return int(n_components)


def flip_signs(components: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of every row positive (in place).

    The convention of :func:`sklearn.utils.extmath.svd_flip` with
    ``u_based_decision=False``.

    Parameters
    ----------
    components : ndarray of shape (p, n)

    Returns
    -------
    components : ndarray of shape (p, n)
        The same array, rows with flipped signs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes._solvers import flip_signs
    >>> flip_signs(np.array([[0.1, -0.9], [0.6, 0.3]]))
    array([[-0.1,  0.9],
           [ 0.6,  0.3]])
    """
    if components.size:
        idx = np.argmax(np.abs(components), axis=1)
        signs = np.sign(components[np.arange(components.shape[0]), idx])
        signs[signs == 0] = 1.0
        components *= signs[:, None]
    return components


def solve_dense(
    data: np.ndarray,
    lengths: np.ndarray,
    n_components: int,
    n_lags: int | None = None,
    *,
    max_bytes: int = DENSE_MAX_BYTES,
) -> tuple[np.ndarray, np.ndarray]:
    """Build Ξ and take its thin SVD (reference solver, small data only).

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Zero-padded sequences.
    lengths : ndarray of shape (n_samples,)
    n_components : int
        Number of singular vectors, between 1 and ``min(Ξ.shape)``.
    n_lags : int, default=None
    max_bytes : int, default=DENSE_MAX_BYTES
        Refuse (ValueError) when Ξ would need more memory than this.

    Returns
    -------
    singular_values : ndarray of shape (n_components,)
    components : ndarray of shape (n_components, n_lags * n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes._solvers import solve_dense
    >>> data = np.array([[[1.0], [2.0], [3.0]]])
    >>> s, comps = solve_dense(data, np.array([3]), 2)
    >>> np.round(s, 3)
    array([4.403, 0.719])
    """
    lengths = np.asarray(lengths)
    L = int(lengths.max()) if n_lags is None else int(n_lags)
    shape = (int(lengths.sum()), L * data.shape[2])
    n_components = _check_n_components(n_components, min(shape), shape)
    n_bytes = 8 * int(lengths.sum()) * L * data.shape[2]
    if n_bytes > max_bytes:
        raise ValueError(
            f"solver='dense' would build a Ξ of {int(lengths.sum())} x "
            f"{L * data.shape[2]} float64 ({n_bytes / 1024**3:.2f} GiB), more "
            f"than the cap of {max_bytes / 1024**3:.2f} GiB; use solver='gram' "
            "or solver='matrix_free'."
        )
    xi = build_xi(data, lengths, L)
    try:
        _, s, vt = scipy.linalg.svd(xi, full_matrices=False, check_finite=False)
    except np.linalg.LinAlgError:  # gesdd occasionally fails to converge
        _, s, vt = scipy.linalg.svd(
            xi, full_matrices=False, check_finite=False, lapack_driver="gesvd"
        )
    return s[:n_components].copy(), flip_signs(vt[:n_components].copy())


def solve_gram(gram: np.ndarray, n_components: int) -> tuple[np.ndarray, np.ndarray]:
    """Top eigenvectors of ΞᵀΞ = right singular vectors of Ξ.

    Uses :func:`scipy.linalg.eigh` with ``subset_by_index`` (only the top
    ``n_components`` eigenpairs). Eigenvalues are ``sigma^2``: the condition
    number is squared, which affects only the accuracy of the *small* singular
    values, not the leading subspace.

    Parameters
    ----------
    gram : ndarray of shape (m, m)
        Symmetric ΞᵀΞ.
    n_components : int
        Number of eigenvectors, between 1 and ``m``.

    Returns
    -------
    singular_values : ndarray of shape (n_components,)
    components : ndarray of shape (n_components, m)

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes._solvers import solve_gram
    >>> s, comps = solve_gram(np.diag([1.0, 9.0, 4.0]), 2)
    >>> s, comps
    (array([3., 2.]), array([[0., 1., 0.],
           [0., 0., 1.]]))
    """
    m = gram.shape[0]
    n_components = _check_n_components(n_components, m, gram.shape)
    w, v = scipy.linalg.eigh(
        gram, subset_by_index=[m - n_components, m - 1], check_finite=False
    )
    s = np.sqrt(np.clip(w[::-1], 0.0, None))
    return s, flip_signs(np.ascontiguousarray(v[:, ::-1].T))


def randomized_svd_operator(
    op: LinearOperator,
    n_components: int,
    *,
    n_oversamples: int = 10,
    n_iter: int = 4,
    random_state=None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Randomized SVD (Halko et al. 2011, Alg. 4.4 + 5.1) of a linear operator.

    Only block products ``op @ V`` and ``op.T @ U`` are used. Between power
    iterations the blocks are normalized by an LU factorization with partial
    pivoting (as :func:`sklearn.utils.extmath.randomized_range_finder`; about 4x
    cheaper than a thin QR on tall blocks, and it keeps the span), and the
    final range basis by a thin QR; the condition number is never squared.
    Costs ``2 n_iter + 2`` block products with ``n_components + n_oversamples``
    columns.

    Parameters
    ----------
    op : LinearOperator of shape (N, m)
    n_components : int
        Number of singular vectors, between 1 and ``min(N, m)``.
    n_oversamples : int, default=10
    n_iter : int, default=4
        Number of power iterations.
    random_state : int, RandomState instance or None, default=None
    progress : bool, default=False
        Show a tqdm progress bar over block products.

    Returns
    -------
    singular_values : ndarray of shape (n_components,)
        Approximate largest singular values of ``op``, in decreasing order.
    components : ndarray of shape (n_components, m)
        Their right singular vectors, one a row.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse.linalg import aslinearoperator
    >>> from sklmn.laes._solvers import randomized_svd_operator
    >>> M = np.diag([5.0, 3.0, 1.0, 0.0])
    >>> s, comps = randomized_svd_operator(aslinearoperator(M), 2, random_state=0)
    >>> np.round(s, 6), np.round(np.abs(comps), 6)
    (array([5., 3.]), array([[1., 0., 0., 0.],
           [0., 1., 0., 0.]]))
    """
    rng = check_random_state(random_state)
    N, m = op.shape
    n_components = _check_n_components(n_components, min(N, m), op.shape)
    k = int(min(n_components + n_oversamples, N, m))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=2 * n_iter + 2, desc="LAES randomized SVD (products)")

    def step(fn, M):
        out = fn(M)
        if bar is not None:
            bar.update(1)
        return out

    def lu(M):  # cheap normalizer between power iterations (spans range(M))
        return scipy.linalg.lu(M, permute_l=True, check_finite=False)[0]

    def qr(M):
        return scipy.linalg.qr(M, mode="economic", check_finite=False)[0]

    Q = step(op.matmat, rng.standard_normal(size=(m, k)))
    for _ in range(n_iter):
        Z = lu(step(op.rmatmat, lu(Q)))
        Q = step(op.matmat, Z)
        del Z
    Q = qr(Q)
    Bt = step(op.rmatmat, Q)  # (m, k) = (Qᵀ op)ᵀ
    if bar is not None:
        bar.close()
    # Qᵀ op = W S Vtᵀ  <=>  Bt = Vt S Wᵀ
    vt, s, _ = scipy.linalg.svd(Bt, full_matrices=False, check_finite=False)
    p = min(n_components, k)
    return s[:p].copy(), flip_signs(np.ascontiguousarray(vt[:, :p].T))
