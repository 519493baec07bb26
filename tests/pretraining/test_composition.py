"""The pretraining objects are scikit-learn estimators that grid searches reach."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklmn.datasets import load_sequential_digits
from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier
from sklmn.laes import LAESTransformer
from sklmn.pretraining import IncrementalTraining, LAESInitializer, UnrolledPretrainer


@pytest.mark.parametrize(
    "obj, bad",
    [
        (LAESInitializer(), {"alpha": -1.0}),
        (UnrolledPretrainer(), {"max_iter": 0}),
        (IncrementalTraining(), {"epochs_per_module": 0}),
    ],
)
def test_params_are_cloned_and_validated(obj, bad):
    twin = clone(obj)
    assert twin is not obj and twin.get_params() == obj.get_params()
    name, value = next(iter(bad.items()))
    with pytest.raises(ValueError, match=name):
        twin.set_params(**bad)._validate_params()


def test_grid_search_tunes_nested_pretrainer_parameters():
    X, y = load_sequential_digits(mode="row", return_X_y=True)
    X, y = X[:240], y[:240]
    pipe = make_pipeline(
        LMNClassifier(
            hidden_size=8, memory_size=8, max_iter=1, pretrainer=LAESInitializer()
        )
    )
    grid = GridSearchCV(
        pipe,
        {
            "lmnclassifier__pretrainer__n_components": [1, 8],
            "lmnclassifier__pretrainer__center": [True, False],
        },
        cv=2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        grid.fit(X, y)
    # one LAES component remembers much less of the digit than eight
    assert grid.best_params_["lmnclassifier__pretrainer__n_components"] == 8
    assert grid.best_score_ > 0.6
    fitted = grid.best_estimator_[-1]
    assert fitted.pretrainer_.laes_.n_components_ == 8


def test_grid_search_tunes_epochs_per_module():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 8, 1)
    y = (X[:, 0, 0] > 0).astype(int)
    clf = MultiScaleLMNClassifier(
        hidden_size=6,
        memory_size=2,
        n_modules=2,
        max_iter=4,
        incremental=IncrementalTraining(min_improvement=-np.inf),
        random_state=0,
    )
    grid = GridSearchCV(clf, {"incremental__epochs_per_module": [1, 2]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        grid.fit(X, y)
    added = grid.best_estimator_.module_history_[1]["epoch_added"]
    assert added == grid.best_params_["incremental__epochs_per_module"]


def test_linear_rnn_pipeline():
    # the papers' "linear RNN": LAES final states + a linear classifier
    X, y = load_sequential_digits(mode="row", return_X_y=True)
    pipe = make_pipeline(
        LAESTransformer(24, center=True), LogisticRegression(max_iter=500)
    )
    pipe.fit(X[:1200], y[:1200])
    assert pipe.score(X[1200:], y[1200:]) > 0.85
