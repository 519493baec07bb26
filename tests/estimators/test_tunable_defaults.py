"""Parameters of the objects behind the estimators' ``'auto'`` rules are
tunable by passing the object; on the rule itself the error says so."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklmn.estimators import (
    LMNClassifier,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    RNNClassifier,
)
from sklmn.pretraining import LAESInitializer


def _data(n=24, T=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, T, 2))
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    return X, y


def _small(**params):
    return LMNClassifier(
        hidden_size=3, memory_size=3, max_iter=2, random_state=0, **params
    )


def test_grid_over_auto_pretrainer_says_what_to_pass():
    X, y = _data()
    search = GridSearchCV(_small(), {"pretrainer__alpha": [1e-3, 1e-1]}, cv=2)
    with pytest.raises(ValueError, match=r"pretrainer='auto'.*LAESInitializer"):
        search.fit(X, y)


def test_grid_over_pretrainer_object_reaches_its_parameters():
    X, y = _data()
    grid = {"pretrainer": [LAESInitializer()], "pretrainer__alpha": [1e-3, 1e-1]}
    search = GridSearchCV(_small(), grid, cv=2).fit(X, y)
    alphas = [p["pretrainer__alpha"] for p in search.cv_results_["params"]]
    assert alphas == [1e-3, 1e-1]
    assert search.best_estimator_.pretrainer_.alpha in (1e-3, 1e-1)
    # and with the object as the estimator's own parameter
    search = GridSearchCV(
        _small(pretrainer=LAESInitializer()), {"pretrainer__alpha": [1e-2]}, cv=2
    ).fit(X, y)
    assert search.best_estimator_.pretrainer.alpha == 1e-2


def test_rule_parameter_is_stored_untouched():
    est = _small()
    with pytest.raises(ValueError, match="pretrainer__alpha"):
        est.set_params(pretrainer__alpha=0.5)
    assert est.pretrainer == "auto"
    assert clone(est).get_params()["pretrainer"] == "auto"
    # the object and its parameter set in one call
    est.set_params(pretrainer=LAESInitializer(), pretrainer__alpha=0.5)
    assert est.pretrainer.alpha == 0.5


def test_other_estimators_name_the_object():
    with pytest.raises(ValueError, match="LAESInitializer"):
        MultiScaleLMNRegressor().set_params(pretrainer__alpha=0.5)


def test_nested_parameter_of_a_none_parameter_says_what_to_pass():
    # incremental=None (the multi-scale default) and pretrainer=None (the
    # baselines' default) raised "AttributeError: 'NoneType' object has no
    # attribute 'set_params'"
    X, y = _data()
    search = GridSearchCV(
        MultiScaleLMNClassifier(hidden_size=3, memory_size=2, max_iter=1),
        {"incremental__epochs_per_module": [1, 2]},
        cv=2,
    )
    with pytest.raises(ValueError, match=r"incremental=None.*IncrementalTraining"):
        search.fit(X, y)
    est = RNNClassifier()
    with pytest.raises(ValueError, match=r"pretrainer=None holds no object"):
        est.set_params(pretrainer__alpha=0.5)
    assert est.pretrainer is None
    est.set_params(pretrainer=LAESInitializer(), pretrainer__alpha=0.5)
    assert est.pretrainer.alpha == 0.5
    # a name that is not a parameter keeps scikit-learn's error
    with pytest.raises(ValueError, match="Invalid parameter 'nonsense'"):
        est.set_params(nonsense__alpha=0.5)
