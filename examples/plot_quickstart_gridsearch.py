"""
=====================================================
Tuning an LMN classifier with a pipeline and a search
=====================================================

sklmn estimators are ordinary scikit-learn estimators: they take sequences as
3-D arrays ``(n_sequences, n_timesteps, n_features)`` (or lists of 2-D arrays
of different lengths), and fit in pipelines, grid searches and
cross-validation like any classifier.

Here an :class:`~sklmn.estimators.LMNClassifier` reads scikit-learn's 8x8
digits one image row per step (8 steps of 8 pixels) and sits in a
:class:`~sklearn.pipeline.Pipeline` behind a standardization step;
:class:`~sklearn.model_selection.GridSearchCV` tunes its memory size and
learning rate through the nested ``lmnclassifier__<name>`` parameters.
"""

# %%
# Data: digits as sequences of rows
# ---------------------------------
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline

from sklmn.datasets import load_sequential_digits
from sklmn.estimators import LMNClassifier

quick = os.environ.get("SKLMN_EXAMPLE_QUICK") == "1"
# Small recurrent models train fastest on one thread (intra-op parallelism
# costs more than it saves at these sizes), and the fixed epoch budgets below
# are meant to end before convergence.
torch.set_num_threads(1)
warnings.filterwarnings("ignore", category=ConvergenceWarning)
X, y = load_sequential_digits(mode="row", return_X_y=True)  # (1797, 8, 8)
n = 300 if quick else 800
X_train, X_test, y_train, y_test = train_test_split(
    X[:n], y[:n], test_size=0.25, stratify=y[:n], random_state=0
)
print(f"train {X_train.shape}, test {X_test.shape}")


# %%
# A sequence-aware preprocessing step
# -----------------------------------
# scikit-learn's scalers expect 2-D input, so a few lines standardize every
# feature with its mean and standard deviation over all time steps of the
# training sequences. Any transformer that keeps the ``(n, T, d)`` layout can
# precede an sklmn model in a pipeline.
class SequenceStandardizer(TransformerMixin, BaseEstimator):
    """Standardize each feature over all time steps of all sequences."""

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        steps = X.reshape(-1, X.shape[-1])
        self.mean_ = steps.mean(axis=0)
        self.scale_ = np.where(steps.std(axis=0) > 0, steps.std(axis=0), 1.0)
        return self

    def transform(self, X):
        return (np.asarray(X, dtype=float) - self.mean_) / self.scale_


pipe = make_pipeline(
    SequenceStandardizer(),
    LMNClassifier(hidden_size=32, max_iter=10 if quick else 25, random_state=0),
)

# %%
# Grid search over nested parameters
# ----------------------------------
param_grid = {
    "lmnclassifier__memory_size": [8, 32],
    "lmnclassifier__learning_rate_init": [3e-3, 1e-2],
}
search = GridSearchCV(pipe, param_grid, cv=2 if quick else 3, n_jobs=1)
search.fit(X_train, y_train)
print("best parameters:", search.best_params_)
print(f"cross-validated accuracy {search.best_score_:.3f}")
print(f"test accuracy            {search.score(X_test, y_test):.3f}")

# %%
# Cross-validated accuracy of every candidate
# -------------------------------------------
res = search.cv_results_
labels = [
    f"m={p['lmnclassifier__memory_size']}\nlr={p['lmnclassifier__learning_rate_init']:g}"
    for p in res["params"]
]
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(range(len(labels)), res["mean_test_score"], yerr=res["std_test_score"])
ax.set_xticks(range(len(labels)), labels)
ax.set_ylabel("CV accuracy")
ax.set_title("LMNClassifier grid search on row-wise digits")
fig.tight_layout()
out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
fig.savefig(os.path.join(out_dir, "quickstart_gridsearch.png"), dpi=80)
