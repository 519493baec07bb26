"""``bench start-neighbours``: the start's readout refitted at the penalty
the start chose predicts as the start does."""

import numpy as np

from sklmn.benchmarks._bench.start_neighbours import _one
from sklmn.estimators import LMNClassifier


def test_the_chosen_penalty_reproduces_the_start():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 12, 1)
    y = (X[:, :4, 0].sum(1) > 0).astype(int)
    data = (X[:40], X[40:], y[:40], y[40:])
    fit = _one(LMNClassifier, 0, data, [0.1, 1.0, 10.0])
    assert fit["C"] in fit["cells"]
    cv, test = fit["cells"][fit["C"]]
    # the start's readout is the logistic readout at C of the same rows
    assert abs(test - fit["start"]) <= 1 / 40 + 1e-12
    for cv, test in fit["cells"].values():
        assert 0.0 <= cv <= 1.0 and 0.0 <= test <= 1.0
