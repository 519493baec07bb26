"""``MultiScaleLMNClassifier(memory_size='auto', hidden_size='auto')``: a
first module as large as the LMN's memory and slower modules of 12 units,
checked on the network the fit builds; explicit per-module sizes."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from sklmn.estimators import MultiScaleLMNClassifier, MultiScaleLMNRegressor
from sklmn.estimators._auto import auto_module_sizes
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining


def _data(n, T=8, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, :2, 0].sum(1) > 0).astype(int)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few epochs do not converge
        return est.fit(X, y)


def _built(est):
    rec = est.net_.module_.recurrent
    return rec.memory_sizes, rec.hidden_size


@pytest.mark.parametrize(
    ("n_samples", "started", "n_modules", "sizes"),
    [(36, True, 4, (32, 12, 12, 12)), (99, True, 2, (32, 12)),
     (100, True, 4, 12), (99, True, 1, 32),
     (36, False, 4, 12), (5000, False, 3, 12)],
)
def test_rule(n_samples, started, n_modules, sizes):
    assert auto_module_sizes(n_samples, started, n_modules) == sizes


def test_defaults_are_auto_and_the_fit_builds_them():
    est = MultiScaleLMNClassifier()
    assert est.memory_size == "auto" and est.hidden_size == "auto"
    X, y = _data(130)
    small = _fit(MultiScaleLMNClassifier(max_iter=1, random_state=0), X[:40], y[:40])
    assert small.memory_size_ == (32, 12, 12, 12) and small.hidden_size_ == 68
    assert _built(small) == ((32, 12, 12, 12), 68)
    large = _fit(
        MultiScaleLMNClassifier(n_modules=2, max_iter=1, random_state=0), X, y
    )
    assert large.memory_size_ == 12 and _built(large) == ((12, 12), 24)
    # the start's penalty: the LMN's for a leading module, C = 3 otherwise
    assert small.pretrainer_.C == 1.0 and large.pretrainer_.C == 3.0
    # without a start: modules of 12 units, as many hidden units
    scratch = _fit(
        MultiScaleLMNClassifier(max_iter=1, pretrainer=None, random_state=0),
        X[:40],
        y[:40],
    )
    assert scratch.memory_size_ == 12 and _built(scratch) == ((12,) * 4, 48)
    assert scratch.memory_size == "auto"  # the parameters are left as given


def test_given_sizes_are_kept():
    X, y = _data(40)
    est = _fit(
        MultiScaleLMNClassifier(
            hidden_size=5, memory_size=[4, 2], n_modules=2, max_iter=1,
            random_state=0,
        ),
        X,
        y,
    )
    assert est.memory_size_ == (4, 2) and _built(est) == ((4, 2), 5)
    assert est.memory_size == [4, 2]  # user data unchanged
    reg = _fit(
        MultiScaleLMNRegressor(
            hidden_size=4, memory_size=(3, 1), n_modules=2, max_iter=1,
            random_state=0,
        ),
        X,
        y.astype(float),
    )
    assert _built(reg) == ((3, 1), 4)


def test_auto_fit_equals_the_sizes_it_resolves_to():
    X, y = _data(40)
    auto = _fit(MultiScaleLMNClassifier(n_modules=2, max_iter=2, random_state=0), X, y)
    fixed = _fit(
        MultiScaleLMNClassifier(
            hidden_size=44, memory_size=(32, 12), n_modules=2, max_iter=2,
            random_state=0,
        ),
        X,
        y,
    )
    np.testing.assert_allclose(
        auto.predict_proba(X), fixed.predict_proba(X), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    ("bad", "match"),
    [((4, 0), r"\(4, 0\)"), ((4, 2, 2), r"sequence of 2 positive ints"),
     ("large", "memory_size"), (2.5, "memory_size")],
)
def test_bad_sizes_are_refused(bad, match):
    X, y = _data(20)
    est = MultiScaleLMNClassifier(memory_size=bad, n_modules=2, max_iter=1)
    with pytest.raises((ValueError, InvalidParameterError), match=match):
        est.fit(X, y)
    with pytest.raises(InvalidParameterError, match="hidden_size"):
        MultiScaleLMNClassifier(hidden_size="large", max_iter=1).fit(X, y)
    with pytest.raises(InvalidParameterError, match="memory_size"):
        MultiScaleLMNRegressor(memory_size="auto", max_iter=1).fit(X, y * 1.0)


def test_saved_and_pickled_models_rebuild_the_sizes(tmp_path):
    X, y = _data(40)
    est = _fit(
        MultiScaleLMNClassifier(n_modules=2, max_iter=2, random_state=0), X, y
    )
    path = tmp_path / "ms.sklmn"
    save(est, path)
    for copy in (load(path), pickle.loads(pickle.dumps(est))):
        assert copy.memory_size_ == (32, 12) and _built(copy) == ((32, 12), 44)
        np.testing.assert_allclose(
            copy.predict_proba(X), est.predict_proba(X), rtol=1e-5, atol=1e-6
        )
    assert clone(est).memory_size == "auto"


def test_incremental_growth_adds_the_modules_sizes():
    X, y = _data(40)
    est = _fit(
        MultiScaleLMNClassifier(
            hidden_size=8, memory_size=(4, 2, 3), n_modules=3, max_iter=6,
            incremental=IncrementalTraining(epochs_per_module=2),
            random_state=0,
        ),
        X,
        y,
    )
    assert _built(est) == ((4, 2, 3), 8)
    assert [stage["n_modules"] for stage in est.module_history_] == [1, 2, 3]


def test_a_failed_fit_keeps_the_fitted_model():
    X, y = _data(40)
    est = _fit(
        MultiScaleLMNClassifier(n_modules=2, max_iter=1, random_state=0), X, y
    )
    proba = est.predict_proba(X)
    est.set_params(memory_size=(4, 0))
    with pytest.raises(ValueError, match=r"\(4, 0\)"):
        est.fit(X, y)
    assert est.memory_size_ == (32, 12) and est.hidden_size_ == 44
    np.testing.assert_allclose(est.predict_proba(X), proba, rtol=1e-6, atol=1e-7)
