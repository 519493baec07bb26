"""Grid search and cross-validation in parallel: determinism and threads."""

import os
import warnings

import numpy as np
import pytest
import torch
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from skorch.callbacks import Callback

from sklmn.estimators import LMNClassifier, RNNRegressor
from sklmn.pretraining import UnrolledPretrainer


class RecordThreads(Callback):
    """torch's intra-op thread count when training starts (in the worker)."""

    def on_train_begin(self, net, **kwargs):
        self.n_threads_ = torch.get_num_threads()
        self.pid_ = os.getpid()


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = [rng.randn(rng.randint(3, 8), 2) for _ in range(30)]
    y = np.array([int(x[0, 0] > 0) for x in X])
    return X, y


def _grid_search(n_jobs, backend=None):
    X, y = _data()
    search = GridSearchCV(
        LMNClassifier(hidden_size=3, memory_size=2, max_iter=3, random_state=0),
        {"learning_rate_init": [0.01, 0.05], "memory_size": [2, 3]},
        cv=KFold(3),
        n_jobs=n_jobs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 3 epochs
        if backend is None:
            return search.fit(X, y)
        with parallel_backend(backend):
            return search.fit(X, y)


@pytest.fixture(scope="module")
def sequential_search():
    return _grid_search(1)


@pytest.mark.parametrize("backend", [None, "threading"])
def test_grid_search_n_jobs_2_equals_sequential(sequential_search, backend):
    """loky processes (default) and threads give the sequential results; in
    threads the seeded parts of concurrent fits must not interleave on torch's
    global RNG."""
    sequential, parallel = sequential_search, _grid_search(2, backend)
    assert parallel.best_params_ == sequential.best_params_
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(
            parallel.cv_results_[key], sequential.cv_results_[key]
        )
    X, _ = _data()
    np.testing.assert_array_equal(
        parallel.best_estimator_.predict_proba(X),
        sequential.best_estimator_.predict_proba(X),
    )


def test_loky_workers_do_not_oversubscribe_threads():
    """joblib's loky backend sets OMP_NUM_THREADS = cpu_count // n_jobs in its
    workers before torch is imported there, and torch honours it."""
    X, y = _data()
    reg = RNNRegressor(
        hidden_size=3,
        max_iter=1,
        random_state=0,
        n_threads=None,  # torch's setting in the worker ('auto' lowers it)
        callbacks=[("threads", RecordThreads())],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = cross_validate(
            reg, X, y.astype(float), cv=2, n_jobs=2, return_estimator=True
        )
    recorded = [dict(e.net_.callbacks_)["threads"] for e in result["estimator"]]
    assert all(r.pid_ != os.getpid() for r in recorded)  # ran in workers
    expected = max(1, (os.cpu_count() or 1) // 2)
    assert [r.n_threads_ for r in recorded] == [expected, expected]


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMNClassifier(hidden_size=3, memory_size=2, max_iter=3),
        lambda: LMNClassifier(
            hidden_size=3, memory_size=2, max_iter=3, early_stopping=True
        ),
        # a pretrainer without a seed of its own gets one from the fit's
        lambda: LMNClassifier(
            hidden_size=3,
            memory_size=2,
            max_iter=3,
            pretrainer=UnrolledPretrainer(max_iter=3),
        ),
    ],
)
def test_same_random_state_gives_identical_models(make):
    X, y = _data()
    fits = []
    for i in range(2):
        np.random.seed(i)  # noqa: NPY002 (the global state differs per fit)
        torch.manual_seed(i)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(make().set_params(random_state=7).fit(X, y))
    a, b = fits
    assert a.loss_curve_ == b.loss_curve_
    for key, value in a.net_.module_.state_dict().items():
        torch.testing.assert_close(
            b.net_.module_.state_dict()[key], value, rtol=0, atol=0
        )
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_unseeded_estimator_leaves_the_pretrainer_unseeded():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeded = LMNClassifier(
            hidden_size=3,
            memory_size=2,
            max_iter=1,
            pretrainer=UnrolledPretrainer(max_iter=1),
            random_state=0,
        ).fit(X, y)
        unseeded = LMNClassifier(
            hidden_size=3,
            memory_size=2,
            max_iter=1,
            pretrainer=UnrolledPretrainer(max_iter=1),
        ).fit(X, y)
    assert isinstance(seeded.pretrainer_.random_state, int)
    assert seeded.pretrainer.random_state is None  # the parameter is untouched
    assert unseeded.pretrainer_.random_state is None
