"""The ring of the ``'schur'`` memory chosen by cross-validation: a
``GridSearchCV`` over ``memory_ring`` on each training set, against each
ring alone, for a classifier trained without a start.

Usage::

    python -m sklmn.benchmarks bench ring-cv --model lmn \\
        --datasets ItalyPowerDemand BasicMotions ArrowHead --seeds 0 1 2 3 4

``--reservoir``: no training; prints, per set and seed, the scores that
``memory_ring='auto'`` compares (``sklmn.estimators._ring.choose_ring`` on
the estimator's standardized training sequences) and the ring it picks.

Each fit is the suite's ``<model>:pretrainer=None`` with ``random_state`` =
the seed; the grid holds the model's own ring (``None``) and the rings of
``--angles`` (``(0.9, 0.999, a * pi)`` for each ``a``); ``GridSearchCV``
uses 3 stratified folds of the training sequences and refits the best ring
on all of them. Prints one Markdown row per set: the test accuracy of each
ring alone and of the grid search (mean over the seeds), and how often the
search chose each ring.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV

from ...estimators import LMNClassifier, MultiScaleLMNClassifier, _lmn, _ring
from .._timeseries.datasets import DATASETS

__all__ = ["main"]

_MODELS = {"lmn": LMNClassifier, "mslmn": MultiScaleLMNClassifier}


def _label(ring) -> str:
    return "default" if ring is None else f"pi*{ring[2] / math.pi:g}"


def main(argv=None) -> int:
    """Print the table; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(_MODELS), default="lmn")
    parser.add_argument("--datasets", nargs="+", default=["ItalyPowerDemand"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--angles", nargs="+", type=float, default=[0.5])
    parser.add_argument("--reservoir", action="store_true")
    args = parser.parse_args(argv)
    if args.reservoir:
        return _reservoir(args)
    rings = [None] + [(0.9, 0.999, a * math.pi) for a in args.angles]
    labels = [_label(r) for r in rings]
    print("| set | " + " | ".join(labels) + " | grid search | chosen | seconds |")
    print("|---" * (len(rings) + 4) + "|")
    for name in args.datasets:
        X_train, X_test, y_train, y_test = DATASETS[name].load()
        y_test = np.asarray(y_test)
        alone = {label: [] for label in labels}
        searched, chosen, seconds = [], [], []
        for seed in args.seeds:
            est = _MODELS[args.model](pretrainer=None, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for ring, label in zip(rings, labels, strict=True):
                    fit = est.set_params(memory_ring=ring).fit(X_train, y_train)
                    alone[label].append(np.mean(fit.predict(X_test) == y_test))
                t0 = time.perf_counter()
                grid = GridSearchCV(
                    est.set_params(memory_ring=None), {"memory_ring": rings}, cv=3
                ).fit(X_train, y_train)
                seconds.append(time.perf_counter() - t0)
            searched.append(np.mean(grid.predict(X_test) == y_test))
            chosen.append(_label(grid.best_params_["memory_ring"]))
        cells = [f"{statistics.mean(alone[label]):.3f}" for label in labels]
        counts = ", ".join(f"{label} {chosen.count(label)}" for label in labels)
        print(
            f"| {name} | " + " | ".join(cells)
            + f" | {statistics.mean(searched):.3f} | {counts} | "
            f"{statistics.mean(seconds):.0f} |",
            flush=True,
        )
    return 0


def _ring_text(ring) -> str:
    return f"({ring[0]:g}, {ring[1]:g}, π·{ring[2] / math.pi:g})"


class _Chosen(Exception):
    """Raised by the patched ``_plan_fit`` to stop a fit once the ring is
    chosen (nothing is trained)."""


def _reservoir(args) -> int:
    names = ["model's ring"] + [_ring_text(r) for r in _ring.RING_CANDIDATES]
    print("| set | seed | " + " | ".join(names) + " | chosen |")
    print("|---" * (len(names) + 3) + "|")
    cls = _MODELS[args.model]
    for name in args.datasets:
        X_train, _, y_train, _ = DATASETS[name].load()
        for seed in args.seeds:
            est = cls(pretrainer=None, random_state=seed)
            found = {}
            original = _ring.choose_ring

            def spy(*a, found=found, original=original, **k):
                found["result"] = original(*a, **k)
                raise _Chosen

            _ring_lookup = _lmn.choose_ring
            _lmn.choose_ring = spy
            try:
                est.fit(X_train, y_train)
            except _Chosen:
                pass
            finally:
                _lmn.choose_ring = _ring_lookup
            ring, scores = found.get("result", (None, {}))
            cells = [f"{v:.3f}" for v in scores.values()] or [""] * len(names)
            default = next(iter(scores), None)
            label = "model's" if ring == default else _ring_text(ring)
            row = f"| {name} | {seed} | " + " | ".join(cells)
            print(row + f" | {label} |", flush=True)
    return 0
