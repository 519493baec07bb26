"""Fine-tune a pretrained start, or keep it? Held-out validation measured.

On the small classification sets of the tuning subset (BasicMotions,
ItalyPowerDemand, ArrowHead; 36-67 training series) the LAES start of the LMN
and of the multi-scale LMN (``pretrainer='auto'``: LAES initialization with a
logistic-regression readout) is a strong model by itself, and fine-tuning it
by gradient descent can end below it: the training loss keeps falling while
the test accuracy falls. Without held-out sequences the best-weights rule
(the start is a candidate, judged on the training loss) cannot see it. This
script measures, per model and dataset, the test accuracy of

- ``default``: the library default (no validation split on these sets);
- ``start``: the pretrained start alone (one epoch at learning rate 1e-9, so
  the kept weights are the start's);
- ``validation``: ``early_stopping=True``: 10% of the series held out (the
  pretrainer sees the other 90%), the weights of the epoch of lowest
  validation loss kept (the start is epoch 0);
- ``refit``: the number of fine-tuning epochs chosen as in ``validation``,
  then a fresh fit on all training series for that many epochs (the start
  alone when the validation chose epoch 0).

Usage::

    .venv/bin/python -m sklmn.benchmarks bench validation [--seeds 0 1 2 ...] [--jobs 2]

Prints one row per model and dataset (mean test accuracy over the seeds and
the epochs the validation chose), then the means over the datasets. Data:
the time-series suite's archive files (``bash dev.sh data``).
"""

from __future__ import annotations

import argparse
import warnings
from collections import defaultdict

import numpy as np
from joblib import Parallel, delayed

DATASETS = ("BasicMotions", "ItalyPowerDemand", "ArrowHead")
VARIANTS = ("default", "start", "validation", "refit")


def _models():
    from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier

    return {
        "LMN": lambda **kw: LMNClassifier(**kw),
        "MS-LMN (pretrainer='auto')": lambda **kw: MultiScaleLMNClassifier(
            pretrainer="auto", **kw
        ),
    }


def _one(model: str, dataset: str, seed: int) -> tuple:
    from .._timeseries.datasets import _archive_loader

    make = _models()[model]
    X_train, X_test, y_train, y_test = _archive_loader(dataset)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = make(random_state=seed).fit(X_train, y_train)
        start = make(random_state=seed, max_iter=1, learning_rate_init=1e-9)
        start.fit(X_train, y_train)
        validated = make(random_state=seed, early_stopping=True)
        validated.fit(X_train, y_train)
        epochs = int(validated.best_epoch_)
        if epochs == 0:
            refit = start
        else:
            refit = make(
                random_state=seed,
                early_stopping=False,
                max_iter=epochs,
                n_iter_no_change=10**6,
            ).fit(X_train, y_train)
    scores = [est.score(X_test, y_test) for est in (default, start, validated, refit)]
    return model, dataset, seed, epochs, scores


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    )
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    tasks = [(m, d, s) for m in _models() for d in DATASETS for s in args.seeds]
    results = Parallel(n_jobs=args.jobs)(delayed(_one)(*t) for t in tasks)
    cells: dict = defaultdict(list)
    chosen: dict = defaultdict(list)
    for model, dataset, _, epochs, scores in results:
        cells[model, dataset].append(scores)
        chosen[model, dataset].append(epochs)
    print(f"seeds: {args.seeds}")
    print("| model | dataset | " + " | ".join(VARIANTS) + " | epochs chosen |")
    print("|---" * (len(VARIANTS) + 3) + "|")
    for model in _models():
        means = []
        for dataset in DATASETS:
            m = np.mean(cells[model, dataset], axis=0)
            means.append(m)
            row = " | ".join(f"{v:.3f}" for v in m)
            print(f"| {model} | {dataset} | {row} | {chosen[model, dataset]} |")
        row = " | ".join(f"**{v:.3f}**" for v in np.mean(means, axis=0))
        print(f"| {model} | mean | {row} | |")


if __name__ == "__main__":
    main()
