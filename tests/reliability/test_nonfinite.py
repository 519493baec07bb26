"""No silent NaN: non-finite outputs raise, and inputs or targets that cannot
be represented are rejected with a message naming the problem."""

import re
import warnings

import numpy as np
import pytest
import torch

from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.laes import LAESTransformer


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of short runs
        return est.fit(X, y)


def _amplify_memory(est, factor=3.0):
    """Give the trained memory spectral radius ``factor``: its state then
    overflows float64 on sequences of a few hundred steps."""
    with torch.no_grad():
        w = est.net_.module_.recurrent.layers[0].weight_mm
        w.copy_(factor * torch.eye(w.shape[0]))


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(8, 50, 1)
    return X, (X[:, :, 0].sum(axis=1) > 0).astype(int), X[:, :, 0].mean(axis=1)


def test_classifier_never_maps_nan_to_a_class(data):
    X, yc, _ = data
    clf = _fit(
        LMNClassifier(hidden_size=4, memory_size=4, max_iter=3, memory_matrix="free"),
        X,
        yc,
    )
    _amplify_memory(clf)
    rng = np.random.RandomState(1)
    long = [rng.randn(10, 1), rng.randn(1000, 1), rng.randn(5, 1)]
    for method in (clf.predict_proba, clf.predict):
        with pytest.raises(FloatingPointError, match=r"1 of 3 sequences \(indices 1;"):
            method(long)
    # short sequences still predict
    assert clf.predict([long[0], long[2]]).shape == (2,)


def test_regressor_and_timestep_outputs_are_checked(data):
    X, _, yr = data
    reg = _fit(
        LMNRegressor(hidden_size=4, memory_size=4, max_iter=2, memory_matrix="free"),
        X,
        yr,
    )
    _amplify_memory(reg)
    long = np.random.RandomState(1).randn(2, 1000, 1)
    with pytest.raises(FloatingPointError, match=r"2 of 2 sequences \(indices 0, 1"):
        reg.predict(long)
    steps = _fit(
        LMNRegressor(
            hidden_size=4, memory_size=4, max_iter=2, target="timestep",
            memory_matrix="free",
        ),
        X,
        X[:, :, 0],
    )
    _amplify_memory(steps)
    with pytest.raises(FloatingPointError, match="not finite"):
        steps.predict(long)


def test_laes_transform_raises_on_non_finite_states():
    rng = np.random.RandomState(0)
    laes = LAESTransformer(n_components=2).fit(rng.randn(6, 5, 2))
    laes.B_ = 10.0 * np.eye(2)  # an expanding state: 10**400 overflows
    long = [rng.randn(3, 2), rng.randn(400, 2)]
    with pytest.raises(FloatingPointError, match=r"1 of 2 sequences \(indices 1\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy overflow
            laes.transform(long)


def test_laes_rescales_values_whose_moments_would_overflow():
    # huge values are fitted on X divided by a power of two (exact): the model
    # of X * c is the model of X with its singular values times c
    X = np.random.RandomState(0).randn(12, 6, 2)
    ref = LAESTransformer(n_components=3).fit(X)
    for solver in ("auto", "gram", "dense", "matrix_free"):
        laes = LAESTransformer(n_components=3, solver=solver, random_state=0)
        Z = laes.fit_transform(X * 1e160)
        assert np.isfinite(Z).all()
        np.testing.assert_allclose(
            laes.singular_values_ / 1e160, ref.singular_values_, rtol=1e-7
        )
    # a later batch far larger than the first (whose scale the statistics
    # keep) overflows them: refused
    laes = LAESTransformer(n_components=3).partial_fit(X)
    with pytest.raises(ValueError, match=r"too large for LAES: max \|X\| = 2.55"):
        laes.partial_fit(X * 1e160)
    assert laes.n_samples_seen_ == 12


@pytest.mark.parametrize("dtype", ["datetime64[s]", "timedelta64[ms]"])
def test_dates_are_not_silently_converted(dtype):
    X = np.arange(24).reshape(4, 3, 2).astype(dtype)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(TypeError, match=re.escape(f"dtype {dtype} (dates or time")):
        LMNClassifier(max_iter=1).fit(X, y)
    with pytest.raises(TypeError, match="dates or time"):
        LAESTransformer(n_components=1).fit([x for x in X])
    as_objects = np.empty(X.shape, dtype=object)  # numpy scalars float()
    for index in np.ndindex(X.shape):
        as_objects[index] = X[index]
    with pytest.raises(TypeError, match="dates or time"):
        LMNClassifier(max_iter=1).fit(as_objects, y)


@pytest.mark.parametrize("target", ["sequence", "timestep"])
def test_targets_beyond_float32_are_named(target):
    rng = np.random.RandomState(0)
    X = rng.randn(6, 4, 1)
    y = np.full(6, 1e39) if target == "sequence" else np.full((6, 4), 1e39)
    with pytest.raises(ValueError, match=r"y has values too large for float32.*1e\+39"):
        LMNRegressor(max_iter=1, target=target).fit(X, y)
