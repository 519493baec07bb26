"""The adding problem with few training sequences: a linear start that stalls.

On the adding problem (Hochreiter & Schmidhuber 1997; sequences of length
50) the target is the sum of the two values whose marker is set, a sum of
products of two inputs (value times marker), which no linear model of the
history represents. The LAES
start of the LMN regressors (``pretrainer='auto'``: at most 1000 training
sequences) is such a linear model; fine-tuning did not leave it, and
``'auto'`` now discards a start whose leave-one-out R² is not above 0.01
(the network then starts from the training mean). This script measures, at 500 and
2000 training sequences (1000 test sequences, one data seed), the test RMSE
of the LMN and multi-scale LMN regressors with their defaults and without
pretraining, next to ``RNNRegressor(cell='lstm')`` and the training mean.
At 2000 sequences ``'auto'`` does not pretrain, so the two LMN rows agree.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench adding-small [--seeds 0 1 2]

About 8 minutes on 2 cores. Results are recorded in ``docs/training.md``
("A regression start that explains nothing").
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

SIZES = (500, 2000)
N_TEST = 1000
LENGTH = 50


def models():
    """(name, factory of a seeded estimator) pairs."""
    from sklmn.estimators import LMNRegressor, MultiScaleLMNRegressor, RNNRegressor

    return (
        ("LMNRegressor()", lambda s: LMNRegressor(random_state=s)),
        (
            "LMNRegressor(pretrainer=None)",
            lambda s: LMNRegressor(pretrainer=None, random_state=s),
        ),
        ("MultiScaleLMNRegressor()", lambda s: MultiScaleLMNRegressor(random_state=s)),
        (
            "MultiScaleLMNRegressor(pretrainer=None)",
            lambda s: MultiScaleLMNRegressor(pretrainer=None, random_state=s),
        ),
        (
            "RNNRegressor(cell='lstm')",
            lambda s: RNNRegressor(cell="lstm", random_state=s),
        ),
    )


def rmse(y_true, y_pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y_pred) - np.asarray(y_true)) ** 2)))


def main(argv=None) -> None:
    from sklmn.datasets import make_adding_problem

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    data = {}
    for n in SIZES:
        X, y = make_adding_problem(n + N_TEST, length=LENGTH, random_state=0)
        data[n] = (X[:n], y[:n], X[n:], y[n:])
    header = " | ".join(f"{n} training sequences" for n in SIZES)
    print(f"| model | {header} |")
    print("|---|" + "---|" * len(SIZES))
    means = [rmse(data[n][3], np.full(N_TEST, data[n][1].mean())) for n in SIZES]
    print("| training mean | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    start = time.perf_counter()
    for name, make in models():
        cells = []
        for n in SIZES:
            X_train, y_train, X_test, y_test = data[n]
            scores = []
            for seed in args.seeds:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = make(seed).fit(X_train, y_train)
                scores.append(rmse(y_test, est.predict(X_test)))
            cells.append(
                f"{np.mean(scores):.3f} ± {np.std(scores, ddof=1):.3f} "
                f"({', '.join(f'{s:.3f}' for s in scores)})"
            )
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
