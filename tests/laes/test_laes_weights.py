"""Weighted LAES statistics: a weight per sequence multiplies its rows of Ξ."""

import numpy as np
import pytest

from sklmn.laes import LAESTransformer, build_xi, xi_lag_moments
from sklmn.utils.sequences import check_sequences


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(rng.integers(3, 7), 2)) for _ in range(6)]
    X[0] = rng.normal(size=(8, 2))  # the longest, weight 2 below
    return X, np.array([2, 0, 1, 3, 1, 1])


def _repeat(X, w):
    return [X[i] for i in range(len(X)) for _ in range(int(w[i]))]


def _assert_same_fit(a, b):
    for name in ("singular_values_", "components_", "mean_", "A_", "B_"):
        np.testing.assert_allclose(
            getattr(a, name), getattr(b, name), rtol=1e-8, atol=1e-10, err_msg=name
        )
    np.testing.assert_allclose(
        a.explained_variance_ratio_, b.explained_variance_ratio_, atol=1e-10
    )


@pytest.mark.parametrize("solver", ["dense", "gram", "matrix_free"])
@pytest.mark.parametrize("center", [False, True])
def test_integer_weights_equal_repeated_sequences(data, solver, center):
    X, w = data
    kw = dict(n_components=4, solver=solver, center=center, random_state=0)
    w_copy = w.copy()
    weighted = LAESTransformer(**kw).fit(X, sample_weight=w)
    assert np.array_equal(w, w_copy)
    _assert_same_fit(weighted, LAESTransformer(**kw).fit(_repeat(X, w)))


def test_partial_fit_weights_add_up(data):
    X, w = data
    laes = LAESTransformer(n_components=4, center=True)
    laes.partial_fit(X[:3], sample_weight=w[:3]).partial_fit(X[3:], sample_weight=w[3:])
    ref = LAESTransformer(n_components=4, center=True, solver="gram")
    _assert_same_fit(laes, ref.fit(X, sample_weight=w))
    _assert_same_fit(laes, ref.fit(_repeat(X, w)))


def test_weighted_gram_against_explicit_xi(data):
    X, w = data
    from sklmn.utils.sequences import check_sequences

    seqs = check_sequences(X)
    gram = xi_lag_moments(seqs.data, seqs.lengths, weights=w)["gram"]
    xi = build_xi(seqs.data, seqs.lengths)
    row_w = np.repeat(w, seqs.lengths).astype(float)
    L, a = seqs.n_timesteps, seqs.n_features
    np.testing.assert_allclose(
        gram.reshape(L * a, L * a), xi.T @ (row_w[:, None] * xi), atol=1e-10
    )


def test_equal_weights_are_no_weights(data):
    X, _ = data
    a = LAESTransformer(n_components=3).fit(X)
    b = LAESTransformer(n_components=3).fit(X, sample_weight=np.full(len(X), 0.5))
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-10)


def test_invalid_weights(data):
    X, w = data
    with pytest.raises(ValueError, match="non-zero|positive sum"):
        LAESTransformer().fit(X, sample_weight=np.zeros(len(X)))
    with pytest.raises(ValueError, match="Negative values"):
        LAESTransformer().fit(X, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="shape"):
        LAESTransformer().fit(X, sample_weight=w[:3])


@pytest.mark.parametrize("center", [False, True])
def test_weight_of_a_single_sequence_counts_once(data, center):
    # one sequence: the two layouts of the lag products shared their memory,
    # so the weight multiplied both factors (w^2 in the Gram statistics)
    X, _ = data
    seqs = check_sequences(X[:1])
    mom = xi_lag_moments(seqs.data, seqs.lengths, weights=[3.0], with_sums=True)
    plain = xi_lag_moments(seqs.data, seqs.lengths, with_sums=True)
    np.testing.assert_allclose(mom["gram"], 3.0 * plain["gram"], rtol=1e-12)
    np.testing.assert_allclose(mom["s1"], 3.0 * plain["s1"], rtol=1e-12)
    np.testing.assert_allclose(mom["count"], 3.0 * plain["count"], rtol=1e-12)
    kw = dict(n_components=3, center=center)
    laes = LAESTransformer(**kw)
    for x, weight in zip(X, [2.0, 1.0, 3.0, 1.0, 1.0, 0.5], strict=True):
        laes.partial_fit([x], sample_weight=[weight])  # one sequence a batch
    ref = LAESTransformer(**kw, solver="dense")
    _assert_same_fit(laes, ref.fit(X, sample_weight=[2.0, 1.0, 3.0, 1.0, 1.0, 0.5]))
    single = LAESTransformer(**kw, solver="gram").fit(X[:1], sample_weight=[4.0])
    unweighted = LAESTransformer(**kw, solver="dense").fit(X[:1])
    np.testing.assert_allclose(
        single.singular_values_, 2.0 * unweighted.singular_values_, rtol=1e-10
    )
