"""``LMNClassifier(memory_size='auto')``: the memory's units by the training
set's size, checked on the network the fit builds."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.estimators._auto import auto_memory_size
from sklmn.persistence import load, save


def _data(n, T=6, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, :2, 0].sum(1) > 0).astype(int)


def _units(est):
    return [layer.weight_mm.shape[0] for layer in est.net_.module_.recurrent.layers]


@pytest.mark.parametrize(
    ("n_samples", "started", "units"),
    [(1, True, 32), (127, True, 32), (128, True, 64), (5000, True, 64),
     (128, False, 32), (5000, False, 32)],
)
def test_rule(n_samples, started, units):
    assert auto_memory_size(n_samples, started) == units


def test_default_is_auto_and_the_fit_builds_its_units():
    assert LMNClassifier().memory_size == "auto"
    X, y = _data(130)
    small = LMNClassifier(hidden_size=4, max_iter=1, random_state=0).fit(
        X[:127], y[:127]
    )
    assert small.memory_size_ == 32 and _units(small) == [32]
    large = LMNClassifier(
        hidden_size=4, max_iter=1, num_layers=2, random_state=0
    ).fit(X[:128], y[:128])
    assert large.memory_size_ == 64 and _units(large) == [64, 64]
    # without a start (pretrainer=None) the memory stays at 32 units
    scratch = LMNClassifier(
        hidden_size=4, max_iter=1, pretrainer=None, random_state=0
    ).fit(X, y)
    assert scratch.memory_size_ == 32 and _units(scratch) == [32]
    assert scratch.memory_size == "auto"  # the parameter is left as given


def test_a_number_is_kept_and_recorded():
    X, y = _data(130)
    est = LMNClassifier(hidden_size=4, memory_size=5, max_iter=1, random_state=0)
    est.fit(X, y)
    assert est.memory_size_ == 5 and _units(est) == [5]
    reg = LMNRegressor(hidden_size=4, memory_size=3, max_iter=1, random_state=0)
    reg.fit(X[:40], y[:40].astype(float))
    assert reg.memory_size_ == 3 and _units(reg) == [3]


def test_auto_fit_equals_the_number_it_resolves_to():
    X, y = _data(130)
    auto = LMNClassifier(hidden_size=4, max_iter=2, random_state=0).fit(X, y)
    fixed = LMNClassifier(
        hidden_size=4, memory_size=64, max_iter=2, random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(
        auto.predict_proba(X), fixed.predict_proba(X), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("bad", [0, -3, "large", 2.5])
def test_bad_values_are_refused(bad):
    X, y = _data(20)
    with pytest.raises(InvalidParameterError, match="memory_size"):
        LMNClassifier(memory_size=bad, max_iter=1).fit(X, y)
    # the regressor has no 'auto' rule
    if bad == "large":
        with pytest.raises(InvalidParameterError, match="memory_size"):
            LMNRegressor(memory_size="auto", max_iter=1).fit(X, y.astype(float))


def test_saved_and_pickled_models_rebuild_the_fitted_units(tmp_path):
    X, y = _data(130)
    est = LMNClassifier(hidden_size=4, max_iter=1, random_state=0).fit(X, y)
    path = tmp_path / "model.sklmn"
    save(est, path)
    for copy in (load(path), pickle.loads(pickle.dumps(est))):
        assert copy.memory_size == "auto" and copy.memory_size_ == 64
        assert _units(copy) == [64]
        np.testing.assert_allclose(
            copy.predict_proba(X), est.predict_proba(X), rtol=1e-6, atol=1e-7
        )


def test_a_refit_on_fewer_sequences_resolves_again():
    X, y = _data(130)
    est = LMNClassifier(hidden_size=4, max_iter=1, random_state=0).fit(X, y)
    assert est.memory_size_ == 64
    est.fit(X[:40], y[:40])
    assert est.memory_size_ == 32 and _units(est) == [32]
    assert clone(est).get_params()["memory_size"] == "auto"


def test_the_fitted_units_are_a_size_a_file_bounds():
    # persistence.load bounds every size the network is rebuilt from by the
    # saved weights: the resolved units are one of them
    X, y = _data(130)
    est = LMNClassifier(hidden_size=4, max_iter=1, random_state=0).fit(X, y)
    assert est._sklmn_state_()["sizes"]["memory_size_"] == 64
