"""``class_weight`` is checked like ``sample_weight``; the per-step scores
check ``sample_weight`` like the sequence scores."""

import warnings

import numpy as np
import pytest

from sklmn.estimators import (
    ENRNNClassifier,
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    RNNClassifier,
)

CLASSIFIERS = [
    RNNClassifier(hidden_size=3, max_iter=1, random_state=0),
    ENRNNClassifier(hidden_size=3, max_iter=1, random_state=0),
    LMNClassifier(hidden_size=3, memory_size=2, max_iter=1, random_state=0),
    MultiScaleLMNClassifier(
        hidden_size=3, memory_size=2, n_modules=2, max_iter=1, random_state=0
    ),
]


def _data(n=12, T=5, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, T, 2), np.arange(n) % 2


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize(
    "class_weight, match",
    [
        ({0: np.inf, 1: 1}, "finite weights, got inf for class 0"),
        ({0: np.nan, 1: 1}, "finite weights, got nan for class 0"),
        ({0: -1, 1: 3}, "non-negative weights, got -1 for class 0"),
        ({0: 0, 1: 0}, "at least one non-zero weight"),
        ({0: 1, 1: 1, 7: 2}, r"not classes of y: \[7\]"),
        ({0: "a", 1: 1}, "map classes to numbers"),
    ],
)
def test_class_weight_is_checked_like_sample_weight(est, class_weight, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        est.set_params(class_weight=class_weight).fit(X, y)
    assert not hasattr(est, "net_")


def test_class_weight_is_checked_by_partial_fit():
    X, y = _data()
    est = LMNClassifier(hidden_size=3, memory_size=2, class_weight={0: -1, 1: 1})
    with pytest.raises(ValueError, match="non-negative"):
        est.partial_fit(X, y, classes=[0, 1])


@pytest.fixture(scope="module")
def per_step_models():
    rng = np.random.RandomState(0)
    X = rng.randn(6, 4, 2)
    Y = (rng.randn(6, 4) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LMNClassifier(
            hidden_size=3, memory_size=2, target="timestep", max_iter=1,
            random_state=0,
        ).fit(X, Y)
        reg = LMNRegressor(
            hidden_size=3, memory_size=2, target="timestep", max_iter=1,
            random_state=0,
        ).fit(X, rng.randn(6, 4))
    return X, Y, clf, reg


@pytest.mark.parametrize("which", ["clf", "reg"])
@pytest.mark.parametrize(
    "weight, match",
    [
        ([np.nan, 1, 1, 1, 1, 1], "NaN"),
        ([0, 0, 0, 0, 0, 0], "non-zero"),
        ([np.inf, 1, 1, 1, 1, 1], "infinity"),
        ([1, 1, 1], r"\(6,\)"),
        ([-1, 1, 1, 1, 1, 1], "(?i)negative"),
    ],
)
def test_per_step_score_checks_sample_weight(per_step_models, which, weight, match):
    X, Y, clf, reg = per_step_models
    est, y = (clf, Y) if which == "clf" else (reg, Y.astype(float))
    with pytest.raises(ValueError, match=match):
        est.score(X, y, sample_weight=np.array(weight, dtype=float))
    assert np.isfinite(est.score(X, y, sample_weight=np.ones(6)))
