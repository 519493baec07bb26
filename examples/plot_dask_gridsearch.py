"""
======================================================
Grid search on a dask cluster (and on local processes)
======================================================

sklmn estimators are ordinary scikit-learn estimators, so
:class:`~sklearn.model_selection.GridSearchCV` runs their fits in parallel
through joblib: on local processes with ``n_jobs`` (joblib's default *loky*
backend) or on a `dask.distributed <https://distributed.dask.org>`_ cluster
with ``joblib.parallel_backend("dask")``.

Both backends start their workers with ``OMP_NUM_THREADS`` set (loky:
``cpu_count // n_jobs``; dask's nanny: 1), which torch reads when it is
imported in the worker, so parallel fits do not oversubscribe the CPU. With an
integer ``random_state`` the results do not depend on where the fits ran.

This example starts a small in-process :class:`~dask.distributed.LocalCluster`
(two single-threaded workers; ``processes=True`` gives worker processes but,
like any script that starts processes, then needs an
``if __name__ == "__main__":`` guard); on a real cluster you would connect a
:class:`~dask.distributed.Client` to its scheduler address instead. dask is an
optional dependency (``pip install sklmn[dask]``); without it the example runs
the sequential and loky searches only.
"""

# %%
# A small sequence classification task
# ------------------------------------
import os
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from joblib import parallel_backend
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

from sklmn.estimators import LMNClassifier

warnings.simplefilter("ignore", ConvergenceWarning)  # short trainings

rng = np.random.RandomState(0)
# does the sequence start above zero? (the model must remember the beginning)
X = [rng.randn(rng.randint(4, 10), 2) for _ in range(45)]
y = np.array([int(x[0, 0] > 0) for x in X])

param_grid = {"learning_rate_init": [0.01, 0.05], "memory_size": [2, 4]}


def make_search(n_jobs):
    # a small model, its LAES start fine-tuned by three plain epochs
    # (fine_tuning="full": the default projection's steps would take most of
    # each fit; the backends, not the model, are the subject here)
    model = LMNClassifier(
        hidden_size=4, memory_size=2, max_iter=3, fine_tuning="full", random_state=0
    )
    return GridSearchCV(
        model,
        param_grid,
        cv=KFold(3),
        n_jobs=n_jobs,
    )


# %%
# Sequential, loky and dask searches
# ----------------------------------
results = {}
start = time.perf_counter()
results["sequential"] = make_search(n_jobs=1).fit(X, y)
print(f"sequential: {time.perf_counter() - start:.1f}s")

start = time.perf_counter()
results["loky (n_jobs=2)"] = make_search(n_jobs=2).fit(X, y)
print(f"loky, 2 processes: {time.perf_counter() - start:.1f}s")

try:
    from dask.distributed import Client, LocalCluster
except ImportError:
    print("dask.distributed is not installed (pip install sklmn[dask]): skipped.")
else:
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR
        ) as cluster,
        Client(cluster),
    ):
        start = time.perf_counter()
        with parallel_backend("dask"):
            results["dask (2 workers)"] = make_search(n_jobs=-1).fit(X, y)
        print(f"dask, 2 workers: {time.perf_counter() - start:.1f}s")

reference = results["sequential"].cv_results_["mean_test_score"]
for name, search in results.items():
    same = np.array_equal(search.cv_results_["mean_test_score"], reference)
    print(f"{name:>18}: best {search.best_params_}, same scores: {same}")

# %%
# The scores do not depend on the backend
# ---------------------------------------
labels = [
    f"lr={p['learning_rate_init']}\nmemory={p['memory_size']}"
    for p in results["sequential"].cv_results_["params"]
]
positions = np.arange(len(labels))
width = 0.8 / len(results)
fig, ax = plt.subplots(figsize=(7, 3.5))
for i, (name, search) in enumerate(results.items()):
    ax.bar(
        positions + i * width,
        search.cv_results_["mean_test_score"],
        width,
        label=name,
    )
ax.set_xticks(positions + width * (len(results) - 1) / 2, labels)
ax.set_ylabel("mean CV accuracy")
ax.set_ylim(0, 1)
ax.legend(loc="lower right")
ax.set_title("GridSearchCV of LMNClassifier on three joblib backends")
fig.tight_layout()
fig.savefig(
    os.path.join(os.environ.get("SKLMN_OUTPUT_DIR", "."), "dask_gridsearch.png"),
    dpi=80,
)
