"""The spline readout's margin: how many more training sequences its
cross-validation must get right than the linear readout's.

Usage::

    python -m sklmn.benchmarks bench spline-choice --models lmn mslmn \\
        --datasets ArrowHead BasicMotions ItalyPowerDemand OSULeaf ACSF1 \\
        --seeds 0 1 2 3 4 --out choice.jsonl

Each fit is the default classifier with
``fine_tuning=ProjectionFineTuning(splines=False)`` (the network the
projection leaves, with its linear readout) and ``random_state`` = the
seed. On its pooled features (``ReadoutFeatures``' columns) the two
readouts that the projection's last step compares are cross-validated
on the training sequences as it does (``sklmn._training._projection``: a
logistic readout of the standardized features and one of the features'
spline basis, 9 quantile knots, each at its best ``C`` of 5 stratified
folds); the spline readout, refitted on every training sequence at its
``C``, is scored on the test split beside the network's own readout.

Prints one Markdown row per set and model: the margin of every seed (the
splines' cross-validated accuracy minus the linear one's, in training
sequences), and for each margin rule (the splines taken when the margin
is above 0, 1, 2 or 3 sequences) the mean change of the test accuracy
against the network's own readout, in points. ``--out`` appends one JSON
line per fit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import warnings

import numpy as np

from ..._training._projection import _fit_logistic, choose_splines
from ..._training._splines import hat_basis
from ...pretraining import ProjectionFineTuning
from .._timeseries.datasets import DATASETS
from ._classifiers import CLASSIFIERS, accuracy, add_fit_arguments

__all__ = ["main"]

_RULES = (0, 1, 2, 3)


def _one(cls, seed, data) -> dict:
    """One fit: the margin and the test accuracies of both readouts."""
    X_train, X_test, y_train, y_test = data
    est = cls(random_state=seed, fine_tuning=ProjectionFineTuning(splines=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X_train, y_train)
        F, F_test = est._readout_features(X_train), est._readout_features(X_test)
        labels = np.searchsorted(est.classes_, y_train)
        test = np.searchsorted(est.classes_, y_test)
        choice = choose_splines(F, labels)
        knots, scores = choice["knots"], choice["scores"]
        model = _fit_logistic(hat_basis(F, knots), labels, None, choice["C"])
        own = accuracy(est, X_test, y_test)
    return {
        "seed": int(seed),
        "n_train": len(labels),
        "margin": float((scores["splines"] - scores["linear"]) * len(labels)),
        "own": own,
        "splines": float(np.mean(model.predict(hat_basis(F_test, knots)) == test)),
    }


def main(argv=None) -> int:
    """Print the table; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rules = " | ".join(f"margin > {k}" for k in _RULES)
    print(f"| set | model | margins (sequences) | {rules} |")
    print("|---" * (len(_RULES) + 3) + "|")
    for name in args.datasets:
        data = DATASETS[name].load()
        for model in args.models:
            fits = [_one(CLASSIFIERS[model], seed, data) for seed in args.seeds]
            if args.out:
                with open(args.out, "a") as f:
                    for fit in fits:
                        row = {"dataset": name, "model": model, **fit}
                        f.write(json.dumps(row) + "\n")
            cells = []
            for k in _RULES:
                change = [
                    fit["splines"] - fit["own"] if fit["margin"] > k + 1e-9 else 0.0
                    for fit in fits
                ]
                cells.append(f"{100 * statistics.mean(change):+.1f}")
            margins = ", ".join(f"{fit['margin']:.0f}" for fit in fits)
            row = " | ".join(cells)
            print(f"| {name} | {model} | {margins} | {row} |", flush=True)
    return 0
