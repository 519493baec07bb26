"""LAES and the scaler on tiny and huge values, LAES partial_fit state:
no silent non-finite or degenerate result, updates all or nothing."""

import unittest.mock as mock
import warnings

import numpy as np
import pytest

from sklmn.estimators import LMNRegressor
from sklmn.laes import LAESTransformer
from sklmn.preprocessing import SequenceStandardScaler


@pytest.fixture
def X():
    return np.random.RandomState(0).randn(6, 5, 2)


# ---------------------------------------------------------- LAES state
def test_interrupted_partial_fit_leaves_the_model_as_it_was(X):
    laes = LAESTransformer(2).partial_fit(X)
    before = laes.singular_values_.copy()
    with mock.patch("sklmn.laes._laes.solve_gram", side_effect=KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            laes.partial_fit(X)
    assert laes.n_samples_seen_ == 6
    assert laes._gram_state["n_steps"] == 30
    np.testing.assert_allclose(laes.singular_values_, before, rtol=1e-12)
    laes.partial_fit(X)  # the retry counts the batch once
    union = LAESTransformer(2).fit(np.concatenate([X, X]))
    np.testing.assert_allclose(laes.singular_values_, union.singular_values_, rtol=1e-9)


@pytest.mark.parametrize("solver", ["dense", "matrix_free"])
def test_partial_fit_after_a_non_gram_fit_continues_its_statistics(X, solver):
    X2 = np.random.RandomState(1).randn(4, 5, 2)
    laes = LAESTransformer(2, solver=solver, random_state=0).fit(X).partial_fit(X2)
    union = LAESTransformer(2).fit(np.concatenate([X, X2]))
    np.testing.assert_allclose(laes.singular_values_, union.singular_values_, rtol=1e-7)
    assert laes.n_samples_seen_ == 10


@pytest.mark.parametrize("solver", ["dense", "matrix_free", "gram"])
def test_partial_fit_checks_features_against_the_fitted_model(X, solver):
    laes = LAESTransformer(2, solver=solver, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        laes.partial_fit(np.zeros((3, 5, 3)))
    assert laes.n_features_in_ == 2


def test_partial_fit_refuses_a_fit_that_kept_no_statistics(X):
    laes = LAESTransformer(2, solver="dense").fit(X)
    del laes._gram_state  # as a fit too large for the Gram statistics
    with pytest.raises(ValueError, match="cannot continue this fit"):
        laes.partial_fit(X)


# ------------------------------------------------------- LAES numerics
@pytest.mark.parametrize("solver", ["gram", "dense"])
@pytest.mark.parametrize("factor", [1e-200, 1e-160, 1e153])
def test_laes_fit_on_tiny_and_huge_values(X, solver, factor):
    ref = LAESTransformer(2, solver=solver).fit(X)
    laes = LAESTransformer(2, solver=solver).fit(X * factor)
    np.testing.assert_allclose(
        laes.singular_values_ / factor, ref.singular_values_, rtol=1e-9
    )
    np.testing.assert_allclose(
        np.abs(laes.transform(X)), np.abs(ref.transform(X)), rtol=1e-7, atol=1e-9
    )


@pytest.mark.parametrize("factor", [1e-200, 1e153])
def test_laes_score_on_tiny_and_huge_values(X, factor):
    laes = LAESTransformer(1).fit(X)
    np.testing.assert_allclose(laes.score(X * factor), laes.score(X), rtol=1e-9)
    np.testing.assert_allclose(
        laes.reconstruction_error(X * factor), laes.reconstruction_error(X), rtol=1e-9
    )


def test_laes_inverse_transform_of_huge_codes_is_refused():
    X = np.array([[[1.5e308]], [[0.5e308]]])
    laes = LAESTransformer(1, center=True).fit(X)
    code = 1.7e308 * np.sign(laes.A_[0, 0])
    with pytest.raises(FloatingPointError, match="inverse_transform of Z"):
        laes.inverse_transform([[code]])


def test_partial_fit_batches_near_the_limit_accumulate_finite(X):
    laes = LAESTransformer(2)
    for _ in range(8):
        laes.partial_fit(X * 1e153)
    union = LAESTransformer(2).fit(np.concatenate([X] * 8))
    assert np.isfinite(laes.singular_values_).all()
    np.testing.assert_allclose(
        laes.singular_values_ / 1e153, union.singular_values_, rtol=1e-9
    )
    np.testing.assert_allclose(
        laes.explained_variance_ratio_, union.explained_variance_ratio_, rtol=1e-9
    )


# ----------------------------------------------------------- the scaler
def test_scaler_on_huge_values(X):
    ref = SequenceStandardScaler().fit(X)
    scaler = SequenceStandardScaler().fit(X * 1e154)
    assert np.isfinite(scaler.var_).all()
    np.testing.assert_allclose(scaler.scale_ / 1e154, ref.scale_, rtol=1e-12)
    np.testing.assert_allclose(scaler.transform(X * 1e154), ref.transform(X), atol=1e-9)


def test_scaler_refuses_variances_beyond_float64(X):
    with pytest.raises(ValueError, match="too large.*feature 0"):
        SequenceStandardScaler().fit(X * 1e306)
    with pytest.raises(ValueError, match="too small.*feature 0"):
        SequenceStandardScaler().fit(X * 1e-200)


def test_scaler_inverse_transform_checks_its_output(X):
    scaler = SequenceStandardScaler().fit(X * 1e150)
    with pytest.raises(FloatingPointError, match="inverse_transform of X"):
        scaler.inverse_transform(X * 1e300)


# -------------------------------------------------- estimators' scores
def test_regressor_score_refuses_targets_that_fit_refuses(X):
    y = np.random.RandomState(1).randn(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = LMNRegressor(hidden_size=3, memory_size=2, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="too large for float32"):
        reg.fit(X, y * 1e200)
    with pytest.raises(ValueError, match="too large for float32"):
        reg.score(X, y * 1e200)
    assert np.isfinite(reg.score(X, y))
