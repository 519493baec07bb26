"""Ξ, its Gram matrix and its FFT operator against explicit references."""

import numpy as np
import pytest
from scipy.sparse.linalg import aslinearoperator

from sklmn.laes import (
    XiOperator,
    build_xi,
    randomized_svd_operator,
    solve_gram,
    xi_frobenius_sq,
    xi_lag_moments,
)
from sklmn.laes._solvers import solve_dense


def _random_batch(rng, lengths, a):
    lengths = np.asarray(lengths)
    data = rng.normal(size=(len(lengths), lengths.max(), a))
    data[np.arange(lengths.max())[None, :] >= lengths[:, None]] = 0.0
    return data, lengths


def _naive_xi(data, lengths, L):
    """One row per step: [x_t, x_{t-1}, ..., x_0, 0, ...] (python loops)."""
    a = data.shape[2]
    rows = []
    for q, l in enumerate(lengths):
        for t in range(l):
            row = np.zeros(L * a)
            for k in range(t + 1):
                row[k * a : (k + 1) * a] = data[q, t - k]
            rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("lengths", [[5], [4, 1, 6, 6, 2], [3, 3, 3]])
@pytest.mark.parametrize("a", [1, 3])
@pytest.mark.parametrize("extra_lags", [0, 2])
def test_build_xi_matches_naive(lengths, a, extra_lags):
    rng = np.random.default_rng(0)
    data, lengths = _random_batch(rng, lengths, a)
    L = lengths.max() + extra_lags
    expected = _naive_xi(data, lengths, L)
    np.testing.assert_array_equal(build_xi(data, lengths, L), expected)
    np.testing.assert_allclose(
        xi_frobenius_sq(data, lengths), (expected**2).sum(), rtol=1e-12
    )


@pytest.mark.parametrize("lengths", [[7], [4, 1, 9, 9, 2, 5, 3], [1, 1]])
@pytest.mark.parametrize("a", [1, 4])
@pytest.mark.parametrize("max_chunk_bytes", [2**26, 512])
@pytest.mark.parametrize("bucket_ratio", [1.0, 1.5, 100.0])
@pytest.mark.parametrize("workers", [None, 2])
def test_xi_operator_products_match_explicit(
    lengths, a, max_chunk_bytes, bucket_ratio, workers
):
    rng = np.random.default_rng(1)
    data, lengths = _random_batch(rng, lengths, a)
    L = lengths.max() + 1  # one extra all-zero lag block
    xi = _naive_xi(data, lengths, L)
    op = XiOperator(
        data,
        lengths,
        L,
        bucket_ratio=bucket_ratio,
        max_chunk_bytes=max_chunk_bytes,
        workers=workers,
    )
    assert op.shape == xi.shape
    V = rng.normal(size=(xi.shape[1], 5))
    U = rng.normal(size=(xi.shape[0], 5))
    np.testing.assert_allclose(op.matmat(V), xi @ V, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(op.rmatmat(U), xi.T @ U, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(op.matvec(V[:, 0]), xi @ V[:, 0], atol=1e-10)
    np.testing.assert_allclose(op.rmatvec(U[:, 0]), xi.T @ U[:, 0], atol=1e-10)
    np.testing.assert_allclose(op.T @ U, xi.T @ U, atol=1e-10)


def test_xi_operator_does_not_keep_or_modify_input():
    rng = np.random.default_rng(2)
    data, lengths = _random_batch(rng, [3, 5], 2)
    before = data.copy()
    op = XiOperator(data, lengths)
    data[:] = 0.0  # the operator holds its own copies
    assert np.abs(op.matmat(np.ones((op.shape[1], 1)))).sum() > 0
    data[:] = before
    op.rmatmat(np.ones((op.shape[0], 2)))
    np.testing.assert_array_equal(data, before)


@pytest.mark.parametrize("lengths", [[6], [4, 1, 6, 6, 2], [2, 3]])
@pytest.mark.parametrize("a", [1, 3])
@pytest.mark.parametrize("extra_lags", [0, 3])
def test_gram_matches_explicit(lengths, a, extra_lags):
    rng = np.random.default_rng(3)
    data, lengths = _random_batch(rng, lengths, a)
    L = lengths.max() + extra_lags
    xi = _naive_xi(data, lengths, L)
    mom = xi_lag_moments(data, lengths, L, with_sums=True)
    gram = mom["gram"].reshape(L * a, L * a)
    np.testing.assert_allclose(gram, xi.T @ xi, rtol=1e-12, atol=1e-12)
    # the sums re-center the Gram matrix on any shift mu (padding stays 0)
    mu = rng.normal(size=a)
    shifted = data - mu
    shifted[np.arange(data.shape[1])[None, :] >= lengths[:, None]] = 0.0
    xi_mu = _naive_xi(shifted, lengths, L)
    s1, count = mom["s1"], mom["count"]
    gram_mu = (
        mom["gram"]
        - np.einsum("ijc,d->icjd", s1, mu)
        - np.einsum("c,jid->icjd", mu, s1)
        + np.einsum("ij,c,d->icjd", count, mu, mu)
    ).reshape(L * a, L * a)
    np.testing.assert_allclose(gram_mu, xi_mu.T @ xi_mu, rtol=1e-10, atol=1e-10)


def test_lag_moments_rejects_short_n_lags():
    data = np.zeros((1, 4, 1))
    with pytest.raises(ValueError, match="n_lags=2 is smaller"):
        xi_lag_moments(data, np.array([4]), 2)
    with pytest.raises(ValueError, match="n_lags=3 is smaller"):
        XiOperator(data, np.array([4]), 3)
    # the explicit reference and the dense solver dropped the older lags
    with pytest.raises(ValueError, match="n_lags=3 is smaller"):
        build_xi(data, np.array([4]), 3)
    with pytest.raises(ValueError, match="n_lags=2 is smaller"):
        solve_dense(data, np.array([4]), 1, 2)


def test_dense_solver_refuses_large_xi():
    data = np.zeros((2, 10, 3))
    with pytest.raises(ValueError, match="solver='dense' would build a Ξ of 20 x 30"):
        solve_dense(data, np.array([10, 10]), 2, max_bytes=100)


@pytest.mark.parametrize("lengths", [[5, 2], [0, 2], [-1, 2], [2], [2.5, 2]])
@pytest.mark.parametrize(
    "func", [build_xi, xi_lag_moments, XiOperator, xi_frobenius_sq]
)
def test_lengths_that_do_not_fit_the_data_are_refused(func, lengths):
    # an IndexError deep inside, or a silently wrong Ξ, norm or operator
    data = np.ones((2, 3, 1))
    with pytest.raises(ValueError, match=r"lengths must hold one integer in \[1, 3\]"):
        func(data, np.array(lengths))


def test_whole_float_lengths_are_accepted():
    data = np.random.default_rng(0).normal(size=(2, 3, 1))
    np.testing.assert_array_equal(
        build_xi(data, np.array([3.0, 2.0])), build_xi(data, np.array([3, 2]))
    )


def test_solvers_refuse_a_number_of_components_the_matrix_lacks():
    # solve_dense and randomized_svd_operator returned fewer components than
    # asked (or none), solve_gram failed inside scipy's eigh
    data = np.random.default_rng(0).normal(size=(2, 3, 1))
    lengths = np.array([3, 2])
    op = aslinearoperator(np.eye(3))
    message = r"n_components must be an integer in \[1, 3\]"
    for bad in (0, 4, 2.5, True):
        with pytest.raises(ValueError, match=message):
            solve_dense(data, lengths, bad)
        with pytest.raises(ValueError, match=r"in \[1, 3\] .*got " + str(bad)):
            solve_gram(np.eye(3), bad)
        with pytest.raises(ValueError, match=r"in \[1, 3\] .*got " + str(bad)):
            randomized_svd_operator(op, bad)
    assert solve_dense(data, lengths, np.int64(3))[1].shape == (3, 3)
