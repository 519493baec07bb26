"""Epoch time of the LMN and multi-scale LMN classifiers: the Schur memory
against the free one (no start), and the residual fine-tuning against the
full one (LAES start), one thread, interleaved.

Usage: python -m sklmn.benchmarks bench epoch-time [--rounds 7] [--epochs 4]
[--regressors]

Each round fits every variant once for ``--epochs`` epochs (no stopping
rule) on random data of a suite set's shape, the variants in turn (so that
a change of machine load hits them alike), and keeps the duration of every
epoch but the first (skorch's ``history[:, 'dur']``). Prints, per shape and
variant, the median epoch time in ms and its ratio to the reference variant
(the first of its pair). The residual and full fine-tuning are compared
at the same batch size (the residual's, 16), so the ratio is the cost of
the frozen start's forward pass per step. The smooth fine-tuning (the
classifiers' default with a LAES start) is compared with the full one at
the default batch size; without early stopping both train on every
sequence (the smooth default's held-out quarter is left out).

``--regressors``: instead, the LMN and multi-scale LMN regressors with the
trained feedback (``feedback='free'``) against their default without it,
on random data of the adding problem's shape (2000 sequences of 50 steps,
2 features; no start above 1000 sequences).
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np

from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)

#: (label, estimator class, parameters); pairs: reference, then compared
PAIRS = [
    (
        ("LMN, no start, free memory", LMNClassifier,
         dict(pretrainer=None, memory_matrix="free", batch_size=16)),
        ("LMN, no start, Schur memory (default)", LMNClassifier,
         dict(pretrainer=None)),
    ),
    (
        ("LMN, LAES start, full, batches of 16", LMNClassifier,
         dict(fine_tuning="full", batch_size=16)),
        ("LMN, LAES start, residual", LMNClassifier,
         dict(fine_tuning="residual", batch_size=16)),
    ),
    (
        ("MS-LMN, no start, free memory", MultiScaleLMNClassifier,
         dict(pretrainer=None, memory_matrix="free", batch_size=16)),
        ("MS-LMN, no start, Schur memory (default)", MultiScaleLMNClassifier,
         dict(pretrainer=None)),
    ),
    (
        ("MS-LMN, LAES start, full, batches of 16", MultiScaleLMNClassifier,
         dict(fine_tuning="full", batch_size=16)),
        ("MS-LMN, LAES start, residual", MultiScaleLMNClassifier,
         dict(fine_tuning="residual", batch_size=16)),
    ),
    (
        ("LMN, LAES start, full (free memory)", LMNClassifier,
         dict(fine_tuning="full")),
        ("LMN, LAES start, smooth (default)", LMNClassifier, dict()),
    ),
    (
        ("MS-LMN, LAES start, full (free memory)", MultiScaleLMNClassifier,
         dict(fine_tuning="full")),
        ("MS-LMN, LAES start, smooth (default)", MultiScaleLMNClassifier, dict()),
    ),
]

#: random data of these suite sets' shapes (sequences, steps, features, classes)
SHAPES = {
    "36 x 251 x 1 (ArrowHead-like)": (36, 251, 1, 3),
    "40 x 100 x 6 (BasicMotions-like)": (40, 100, 6, 4),
}

#: ``--regressors``: the trained feedback against the default without it
REGRESSOR_PAIRS = [
    (
        ("LMN regressor, feedback='free'", LMNRegressor, dict(feedback="free")),
        ("LMN regressor, no feedback (default)", LMNRegressor, dict()),
    ),
    (
        ("MS-LMN regressor, feedback='free'", MultiScaleLMNRegressor,
         dict(feedback="free")),
        ("MS-LMN regressor, no feedback (default)", MultiScaleLMNRegressor,
         dict()),
    ),
]

#: ``--regressors``: (sequences, steps, features, None: a real target)
REGRESSION_SHAPES = {"2000 x 50 x 2 (adding-problem-like)": (2000, 50, 2, None)}


def _epoch_times(cls, params, X, y, epochs) -> list:
    est = cls(
        max_iter=epochs, early_stopping=False, n_iter_no_change=10**6,
        n_threads=1, random_state=0, **params,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return [float(d) for d in est.net_.history[:, "dur"]][1:]


def main(argv=None):
    """Print the median epoch times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--regressors", action="store_true")
    args = parser.parse_args(argv)
    pairs, shapes = PAIRS, SHAPES
    if args.regressors:
        pairs, shapes = REGRESSOR_PAIRS, REGRESSION_SHAPES
    print("| data | variant | median epoch ms | ratio |")
    print("|---|---|---|---|")
    for shape, (n, T, d, k) in shapes.items():
        rng = np.random.RandomState(0)
        X = rng.randn(n, T, d)
        y = rng.randn(n) if k is None else np.arange(n) % k
        variants = [v for pair in pairs for v in pair]
        times = {label: [] for label, _, _ in variants}
        for _ in range(args.rounds):
            for label, cls, params in variants:
                times[label] += _epoch_times(cls, params, X, y, args.epochs)
        for ref, other in pairs:
            base = statistics.median(times[ref[0]])
            for label, _, _ in (ref, other):
                med = statistics.median(times[label])
                print(f"| {shape} | {label} | {1000 * med:.1f} | {med / base:.2f} |")
    return 0
