"""Grid search on a dask.distributed cluster through joblib's dask backend."""

import warnings

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV, KFold

from sklmn.estimators import LMNClassifier

distributed = pytest.importorskip("dask.distributed")


def test_grid_search_on_local_dask_cluster_equals_sequential():
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(3, 8), 2) for _ in range(24)]
    y = np.array([int(x[0, 0] > 0) for x in X])

    def search():
        return GridSearchCV(
            LMNClassifier(hidden_size=3, memory_size=2, max_iter=2, random_state=0),
            {"learning_rate_init": [0.01, 0.05]},
            cv=KFold(2),
            n_jobs=-1,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 2 epochs
        sequential = search().set_params(n_jobs=1).fit(X, y)
        with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,  # logging.ERROR
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            with parallel_backend("dask"):
                on_dask = search().fit(X, y)
            workers = client.run(lambda: __import__("torch").get_num_threads())
    assert on_dask.best_params_ == sequential.best_params_
    np.testing.assert_array_equal(
        on_dask.cv_results_["mean_test_score"],
        sequential.cv_results_["mean_test_score"],
    )
    # dask's nanny starts workers with OMP_NUM_THREADS=1: no oversubscription
    assert set(workers.values()) == {1}
