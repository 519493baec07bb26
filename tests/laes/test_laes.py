"""LAESTransformer against straightforward references written here."""

import numpy as np
import pytest

from sklmn.laes import LAESTransformer

SOLVERS = ["dense", "gram", "matrix_free"]


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _ragged(rng, lengths, a, offset=0.0):
    return [rng.normal(size=(l, a)) + offset for l in lengths]


def _ref_xi(seqs, mean, L):
    """Reference Ξ: one row per step, the reversed centered prefix, zero-padded."""
    a = seqs[0].shape[1]
    rows = []
    for s in seqs:
        s = s - mean
        for t in range(len(s)):
            row = np.zeros(L * a)
            row[: (t + 1) * a] = s[t::-1].ravel()
            rows.append(row)
    return np.array(rows)


def _ref_projection_error(xi, comps):
    """||Ξ - Ξ U Uᵀ||_F^2 / ||Ξ||_F^2 for U = comps.T (orthonormal columns)."""
    return ((xi - xi @ comps.T @ comps) ** 2).sum() / (xi**2).sum()


def _ref_encode(s, A, B):
    m = np.zeros(A.shape[0])
    states = []
    for x in s:
        m = A @ x + B @ m
        states.append(m)
    return np.array(states)


def _ref_prefix_error(seqs, A, B, mean):
    """Encode every prefix, decode it backwards step by step, compare."""
    num = den = 0.0
    for s in seqs:
        s = s - mean
        states = _ref_encode(s, A, B)
        for t in range(len(s)):
            m = states[t]
            for k in range(t, -1, -1):
                num += ((s[k] - A.T @ m) ** 2).sum()
                den += (s[k] ** 2).sum()
                m = B.T @ m
    return num / den


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("center", [False, True])
def test_exact_round_trip_mixed_lengths(rng, solver, center):
    seqs = _ragged(rng, [5, 2, 7, 7, 3, 1, 6], 2, offset=3.0)
    laes = LAESTransformer(solver=solver, center=center, random_state=0).fit(seqs)
    assert laes.n_components_ == 14  # min(31 steps, 7 * 2)
    lengths = [len(s) for s in seqs]
    back = laes.inverse_transform(laes.transform(seqs), lengths=lengths)
    assert isinstance(back, list)
    for b, s in zip(back, seqs, strict=True):
        np.testing.assert_allclose(b, s, rtol=1e-8, atol=1e-8 * np.abs(s).max())
    assert laes.reconstruction_error(seqs) < 1e-10
    np.testing.assert_allclose(laes.explained_variance_ratio_.sum(), 1.0, rtol=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
def test_exact_round_trip_rank_deficient(rng, solver):
    # fewer steps than columns: p = rank(Ξ) = 9 < L * a = 18
    seqs = _ragged(rng, [6, 3], 3)
    laes = LAESTransformer(solver=solver, random_state=0).fit(seqs)
    assert laes.n_components_ == 9
    back = laes.inverse_transform(laes.transform(seqs), lengths=[6, 3])
    for b, s in zip(back, seqs, strict=True):
        np.testing.assert_allclose(b, s, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("n_components", [1, 3, 6])
def test_truncated_matches_dense_reference(rng, solver, center, n_components):
    seqs = _ragged(rng, [8, 5, 8, 3, 6, 8, 2, 7], 2, offset=1.0)
    mean = np.concatenate(seqs).mean(axis=0) if center else np.zeros(2)
    xi = _ref_xi(seqs, mean, 8)
    _, s_ref, vt_ref = np.linalg.svd(xi, full_matrices=False)
    ref = vt_ref[:n_components]
    laes = LAESTransformer(
        n_components, solver=solver, center=center, n_iter=10, random_state=0
    ).fit(seqs)
    np.testing.assert_allclose(laes.mean_, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(laes.singular_values_, s_ref[:n_components], rtol=1e-7)
    np.testing.assert_allclose(
        _ref_projection_error(xi, laes.components_),
        _ref_projection_error(xi, ref),
        rtol=1e-7,
    )
    # same subspace: all principal angles are 0
    cosines = np.linalg.svd(ref @ laes.components_.T, compute_uv=False)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-7)
    # same signs as the deterministic convention (spectrum has no ties here)
    np.testing.assert_allclose(np.abs(np.diag(ref @ laes.components_.T)), 1.0)
    np.testing.assert_allclose(
        laes.explained_variance_ratio_, s_ref[:n_components] ** 2 / (xi**2).sum()
    )
    # A = U[:a]ᵀ, B = U[a:]ᵀ U[:-a] (Carta et al. 2021 §2.3)
    U = laes.components_.T
    np.testing.assert_allclose(laes.A_, U[:2].T)
    np.testing.assert_allclose(laes.B_, U[2:].T @ U[:-2], atol=1e-14)
    np.testing.assert_allclose(
        laes.reconstruction_error(seqs),
        _ref_prefix_error(seqs, laes.A_, laes.B_, mean),
        rtol=1e-8,
    )


def test_transform_matches_naive_loop(rng):
    seqs = _ragged(rng, [4, 6, 1], 3)
    laes = LAESTransformer(3, center=True).fit(seqs)
    ref = [_ref_encode(s, laes.A_, laes.B_) for s in [s - laes.mean_ for s in seqs]]
    np.testing.assert_allclose(laes.transform(seqs), [r[-1] for r in ref], atol=1e-12)
    laes.set_params(return_sequences=True)
    states = laes.transform(seqs)
    assert isinstance(states, list)
    for st, r in zip(states, ref, strict=True):
        np.testing.assert_allclose(st, r, atol=1e-12)
    # padded array in, padded array out with NaN at padding
    X = np.full((3, 6, 3), np.nan)
    for i, s in enumerate(seqs):
        X[i, : len(s)] = s
    states = laes.transform(X)
    assert states.shape == (3, 6, 3)
    assert np.isnan(states[2, 1:]).all() and not np.isnan(states[1]).any()
    np.testing.assert_allclose(states[0, :4], ref[0], atol=1e-12)


def test_univariate_2d_input(rng):
    X = rng.normal(size=(10, 5))
    laes = LAESTransformer(3).fit(X)
    assert laes.n_features_in_ == 1 and laes.max_length_ == 5
    assert laes.transform(X).shape == (10, 3)
    assert laes.set_params(return_sequences=True).transform(X).shape == (10, 5, 3)
    back = (
        LAESTransformer()
        .fit(X)
        .inverse_transform(LAESTransformer().fit(X).transform(X))
    )
    np.testing.assert_allclose(back[:, :, 0], X, atol=1e-10)


def test_inverse_transform_lengths(rng):
    seqs = _ragged(rng, [4, 6], 2)
    laes = LAESTransformer().fit(seqs)
    Z = laes.transform(seqs)
    assert laes.inverse_transform(Z).shape == (2, 6, 2)
    assert laes.inverse_transform(Z, lengths=3).shape == (2, 3, 2)
    out = laes.inverse_transform(Z, lengths=np.array([4, 6]))
    assert [o.shape for o in out] == [(4, 2), (6, 2)]
    with pytest.raises(ValueError, match="lengths must be a positive int"):
        laes.inverse_transform(Z, lengths=[0, 2])
    with pytest.raises(ValueError, match=r"Z must have shape \(n_samples, 10\)"):
        laes.inverse_transform(Z[:, :3])


@pytest.mark.parametrize("lengths", [[4, 6], [5, 5]])
def test_inverse_transform_of_per_step_states_says_what_to_pass(rng, lengths):
    # the per-step states of return_sequences=True (a list of arrays for
    # ragged data, a 3-D array for a padded array) used to fail in numpy
    # ("inhomogeneous shape") or check_array ("Found array with dim 3")
    seqs = _ragged(rng, lengths, 2)
    if len(set(lengths)) == 1:
        seqs = np.stack(seqs)
    laes = LAESTransformer(3, return_sequences=True).fit(seqs)
    Z = laes.transform(seqs)
    with pytest.raises(ValueError, match="holds a state per time step"):
        laes.inverse_transform(Z)
    # the way out the message names decodes like the final states
    back = laes.inverse_transform([z[-1] for z in Z], lengths=[len(z) for z in Z])
    final = laes.set_params(return_sequences=False).transform(seqs)
    expected = laes.inverse_transform(final, lengths=lengths)
    for a, b in zip(back, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("center", [False, True])
def test_partial_fit_equals_fit(rng, center):
    batches = [
        _ragged(rng, [3, 2], 2, offset=2.0),
        _ragged(rng, [6, 1, 4], 2, offset=2.0),  # longer: the Gram grows
        _ragged(rng, [5], 2, offset=2.0),
    ]
    inc = LAESTransformer(4, center=center)
    for b in batches:
        inc.partial_fit(b)
    full = LAESTransformer(4, center=center, solver="gram").fit(sum(batches, []))
    assert inc.max_length_ == full.max_length_ == 6
    assert inc.n_steps_total_ == full.n_steps_total_ == 21
    assert inc.n_samples_seen_ == 6
    for attr in ("mean_", "singular_values_", "explained_variance_ratio_"):
        np.testing.assert_allclose(getattr(inc, attr), getattr(full, attr), rtol=1e-9)
    np.testing.assert_allclose(inc.components_, full.components_, atol=1e-8)
    np.testing.assert_allclose(inc.B_, full.B_, atol=1e-8)


def test_matrix_free_deterministic_given_random_state(rng):
    seqs = _ragged(rng, [30, 12, 25], 3)
    a = LAESTransformer(5, solver="matrix_free", n_iter=1, random_state=7).fit(seqs)
    b = LAESTransformer(5, solver="matrix_free", n_iter=1, random_state=7).fit(seqs)
    np.testing.assert_array_equal(a.components_, b.components_)


def test_caller_arrays_unmodified(rng):
    X = rng.normal(size=(4, 5, 2)) + 1.0
    X[1, 3:] = np.nan
    seqs = _ragged(rng, [3, 4], 2)
    X0, seqs0 = X.copy(), [s.copy() for s in seqs]
    for solver in SOLVERS:
        laes = LAESTransformer(3, solver=solver, center=True, random_state=0)
        laes.fit(X).transform(X)
        laes.reconstruction_error(X)
        laes.fit(seqs).partial_fit(seqs)
        Z = laes.transform(seqs)
        Z0 = Z.copy()
        laes.inverse_transform(Z)
        np.testing.assert_array_equal(Z, Z0)
    np.testing.assert_array_equal(X, X0)
    for s, s0 in zip(seqs, seqs0, strict=True):
        np.testing.assert_array_equal(s, s0)


def test_centering_never_encodes_padding(rng):
    # the same sequences as a NaN-padded array and as a list give one model
    seqs = _ragged(rng, [2, 5], 2, offset=4.0)
    X = np.full((2, 5, 2), np.nan)
    X[0, :2], X[1] = seqs
    m1 = LAESTransformer(3, center=True).fit(X)
    m2 = LAESTransformer(3, center=True).fit(seqs)
    np.testing.assert_allclose(m1.components_, m2.components_, atol=1e-12)
    np.testing.assert_allclose(m1.transform(X), m2.transform(seqs), atol=1e-12)
    np.testing.assert_allclose(m1.mean_, np.concatenate(seqs).mean(axis=0))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_components": 0}, "n_components"),
        ({"n_components": 2.5}, "n_components"),
        ({"solver": "svd"}, "'svd'"),
        ({"n_iter": -1}, "n_iter"),
        ({"n_oversamples": "x"}, "n_oversamples"),
        ({"center": "yes"}, "center"),
    ],
)
def test_bad_params_name_the_value(params, match):
    with pytest.raises(ValueError, match=match):
        LAESTransformer(**params).fit(np.ones((3, 4)))


def test_too_many_components_and_feature_mismatch(rng):
    X = rng.normal(size=(2, 3, 2))
    with pytest.raises(ValueError, match=r"n_components=7 must be at most .* = 6"):
        LAESTransformer(7).fit(X)
    laes = LAESTransformer(2).fit(X)
    with pytest.raises(ValueError, match="X has 3 features per time step, but"):
        laes.transform(rng.normal(size=(2, 3, 3)))
    with pytest.raises(ValueError, match="X has 3 features per time step"):
        laes.partial_fit(rng.normal(size=(2, 3, 3)))


def test_feature_names_and_tags(rng):
    laes = LAESTransformer(3).fit(rng.normal(size=(5, 4, 2)))
    names = laes.get_feature_names_out()
    assert names.dtype == object and names.tolist() == ["laes0", "laes1", "laes2"]
    tags = laes.__sklearn_tags__()
    assert tags.input_tags.two_d_array and tags.input_tags.three_d_array


def test_auto_solver_rule(rng):
    assert LAESTransformer(2).fit(rng.normal(size=(3, 6, 2))).solver_ == "gram"
    wide = LAESTransformer(2, random_state=0).fit(rng.normal(size=(1, 4100, 1)))
    assert wide.solver_ == "matrix_free"


def test_score_is_one_minus_error(rng):
    X = rng.normal(size=(6, 5, 2))
    laes = LAESTransformer(3).fit(X)
    np.testing.assert_allclose(laes.score(X), 1 - laes.reconstruction_error(X))
    # held-out data longer than the training sequences is still encoded/decoded
    X_long = rng.normal(size=(2, 8, 2))
    assert 0.0 < laes.reconstruction_error(X_long)


@pytest.mark.parametrize("solver", ["gram", "matrix_free"])
def test_verbose_shows_progress(rng, solver, capsys):
    X = rng.normal(size=(4, 6, 2))
    LAESTransformer(2, solver=solver, verbose=1, random_state=0).fit(X)
    assert "LAES" in capsys.readouterr().err
    LAESTransformer(2, solver=solver, random_state=0).fit(X)
    assert "LAES" not in capsys.readouterr().err


def test_gram_solver_refuses_huge_gram(rng):
    X = rng.normal(size=(1, 16385))
    with pytest.raises(ValueError, match="ΞᵀΞ of size 16385 x 16385"):
        LAESTransformer(2, solver="gram").fit(X)
    with pytest.raises(ValueError, match="ΞᵀΞ of size 16385 x 16385"):
        LAESTransformer(2).partial_fit(X)


@pytest.mark.parametrize("center", [False, True])
def test_partial_fit_refuses_a_changed_center(rng, center):
    # center=True -> False mixed centered and raw moments silently; the
    # other way failed adding the missing sums (None)
    X = rng.normal(size=(5, 4, 2)) + 2.0
    laes = LAESTransformer(3, center=center).fit(X)
    fitted = {k: v for k, v in vars(laes).items() if k.endswith("_")}
    laes.set_params(center=not center)
    with pytest.raises(ValueError, match=f"accumulated with center={center}"):
        laes.partial_fit(X)
    assert all(getattr(laes, k) is v for k, v in fitted.items())
    laes.set_params(center=center).partial_fit(X[:2])
    ref = LAESTransformer(3, center=center, solver="dense").fit(np.r_[X, X[:2]])
    np.testing.assert_allclose(
        laes.singular_values_, ref.singular_values_, rtol=1e-10, atol=1e-12
    )
