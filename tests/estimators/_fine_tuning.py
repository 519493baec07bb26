"""Small data and small LMN estimators shared by the fine-tuning tests."""

import numpy as np

from sklmn.estimators import MultiScaleLMNClassifier, MultiScaleLMNRegressor


def data(n=40, T=10, d=2, seed=0):
    """``n`` random sequences and a class given by their first three steps."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, :3, 0].sum(1) > 0).astype(int)


def small(cls, default_max_iter, **params):
    """A small seeded instance of the LMN estimator ``cls`` (``max_iter``
    ``default_max_iter`` unless given)."""
    sizes = dict(hidden_size=6, memory_size=4)
    if cls in (MultiScaleLMNClassifier, MultiScaleLMNRegressor):
        sizes["n_modules"] = 2
    return cls(**sizes, random_state=0, **{"max_iter": default_max_iter, **params})
