"""The start's readout at the penalties around the one it chose: how far
the test accuracy moves where the cross-validation cannot tell them apart.

Usage::

    python -m sklmn.benchmarks bench start-neighbours --models lmn mslmn \\
        --datasets ArrowHead OSULeaf --seeds 0

Each fit is the default classifier with ``random_state`` = the seed. The
network is copied when training begins (the LAES start, before the
projection's steps), and on that copy's pooled features (the blocks its
``pooling`` leaves out are zero) the start's logistic readout is fitted
again at every penalty ``C`` of ``--C`` as the start fits it
(``sklmn.pretraining._common``): the cross-validated accuracy on the
training sequences that the start's choice of ``C`` compares, and the
test accuracy of the readout refitted on every training sequence.

Prints one Markdown row per set, model and seed: the ``C`` the start
chose, the test accuracy of the start and of the fitted default model,
and ``cross-validated / test`` accuracy at each ``C`` (at the chosen
``C``, the start's own readout again).
"""

from __future__ import annotations

import argparse
import copy
import warnings

import numpy as np

from ...pretraining._common import cv_logistic_score, logistic_readout
from .._timeseries.datasets import DATASETS
from .._timeseries.probes import StartProbe
from ._classifiers import CLASSIFIERS, accuracy, add_fit_arguments

__all__ = ["main"]


def _one(cls, seed, data, Cs) -> dict:
    """One fit and its start's readout at every ``C`` of ``Cs``."""
    X_train, X_test, y_train, y_test = data
    est = cls(random_state=seed)
    est._leading_callbacks = [("neighbours_start", StartProbe())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X_train, y_train)
        final = accuracy(est, X_test, y_test)
        start = copy.deepcopy(est)
        probe = next(
            cb for _, cb in est.net_.callbacks_ if isinstance(cb, StartProbe)
        )
        start.net_.module_ = probe.module_
        own = accuracy(start, X_test, y_test)
        F, F_test = start._readout_features(X_train), start._readout_features(X_test)
    labels = np.searchsorted(est.classes_, y_train)
    test = np.searchsorted(est.classes_, y_test)
    targets = np.eye(len(est.classes_))[labels]
    cells = {}
    for C in Cs:
        cv = cv_logistic_score(F, targets, "multiclass", C, None)
        W, b = logistic_readout(F, targets, "multiclass", C)
        cells[C] = (cv, float(np.mean((F_test @ W.T + b).argmax(axis=1) == test)))
    return {
        "seed": seed,
        "C": est.pretrainer_.C_,
        "start": own,
        "final": final,
        "cells": cells,
    }


def main(argv=None) -> int:
    """Print the table; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument(
        "--C", nargs="+", type=float, default=[0.1, 0.3, 1.0, 3.0, 10.0, 100.0]
    )
    args = parser.parse_args(argv)
    head = " | ".join(f"C = {C:g}" for C in args.C)
    print(f"| set | model | seed | C chosen | start's test | model's test | {head} |")
    print("|---" * (len(args.C) + 6) + "|")
    for name in args.datasets:
        data = DATASETS[name].load()
        for model in args.models:
            for seed in args.seeds:
                fit = _one(CLASSIFIERS[model], seed, data, args.C)
                cells = " | ".join(
                    f"{cv:.3f} / {test:.3f}" for cv, test in fit["cells"].values()
                )
                print(
                    f"| {name} | {model} | {seed} | {fit['C']:g} | "
                    f"{fit['start']:.3f} | {fit['final']:.3f} | {cells} |",
                    flush=True,
                )
    return 0
