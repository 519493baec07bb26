r"""The defaults of large training sets on a generated classification task.

Above 1000 training sequences the estimators do not pretrain
(``pretrainer='auto'``), hold out a validation split
(``early_stopping='auto'``) and train on minibatches of 32
(``batch_size='auto'``); without a start, ``pooling='auto'`` trains from
both readout blocks. The time-series suite has no classification set that
large, so this script measures these rules on generated online handwriting
(:func:`sklmn.datasets.make_online_handwriting`, the first 10 words of its
vocabulary, 3 pen samples per unit of path: 6-56 steps of 3 features):
2000 training sequences by 20 writers, 500 test sequences by 5 other
writers. Test accuracy of

- ``LMNClassifier()`` with the current defaults, and with the norm
  stabilizer (``norm_penalty=0.1``);
- the former defaults (``batch_size=200``, ``pooling='last'``,
  ``norm_penalty=0``), and the first two changes alone;
- the LMN with a LAES start (what ``pretrainer='auto'`` would give if it
  pretrained above 1000 sequences);
- ``MultiScaleLMNClassifier()`` (no norm stabilizer by default) and with
  ``norm_penalty=0.1``;
- ``RNNClassifier(cell='lstm')`` at 32 and at 200 per batch;
- the LMN, multi-scale LMN, LSTM and GRU at ``learning_rate_init=0.001``
  (``'auto'`` gives 0.003 above 1000 sequences), the LMN at 0.01.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench large-sets [--seeds 0 1 2 3] \
        [--only NAME ...]

About 11 minutes on 2 cores (2 fits at a time, one thread each). Needs the
optional ``Hershey-Fonts`` package (``pip install 'sklmn[handwriting]'``).
Results are recorded in ``docs/training.md`` ("Large training sets").
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

#: name -> (estimator class in sklmn.estimators, parameters)
CONFIGS = {
    "LMN, norm_penalty=0.1": ("LMNClassifier", {"norm_penalty": 0.1}),
    "LMNClassifier() (defaults)": ("LMNClassifier", {}),
    "former defaults (batch 200, pooling 'last', norm_penalty=0)": (
        "LMNClassifier",
        {
            "batch_size": 200,
            "pooling": "last",
            "norm_penalty": 0.0,
            "learning_rate_init": 1e-3,
        },
    ),
    "LMN, learning_rate_init=0.001": ("LMNClassifier", {"learning_rate_init": 1e-3}),
    "LMN, learning_rate_init=0.01": ("LMNClassifier", {"learning_rate_init": 1e-2}),
    "norm_penalty=0, batch 200": (
        "LMNClassifier",
        {"batch_size": 200, "norm_penalty": 0.0},
    ),
    "norm_penalty=0, pooling 'last'": (
        "LMNClassifier",
        {"pooling": "last", "norm_penalty": 0.0},
    ),
    "with the LAES start": ("LMNClassifier", {"pretrainer": "laes"}),
    "LMN, Schur memory (memory_matrix='schur')": (
        "LMNClassifier",
        {"memory_matrix": "schur"},
    ),
    "MultiScaleLMNClassifier() (defaults)": ("MultiScaleLMNClassifier", {}),
    "MS-LMN, Schur memory (memory_matrix='schur')": (
        "MultiScaleLMNClassifier",
        {"memory_matrix": "schur"},
    ),
    "MS-LMN, norm_penalty=0.1": ("MultiScaleLMNClassifier", {"norm_penalty": 0.1}),
    "MS-LMN, learning_rate_init=0.001": (
        "MultiScaleLMNClassifier",
        {"learning_rate_init": 1e-3},
    ),
    "RNNClassifier(cell='lstm') (defaults)": ("RNNClassifier", {"cell": "lstm"}),
    "LSTM, batch 200": ("RNNClassifier", {"cell": "lstm", "batch_size": 200}),
    "LSTM, learning_rate_init=0.001": (
        "RNNClassifier",
        {"cell": "lstm", "learning_rate_init": 1e-3},
    ),
    "RNNClassifier(cell='gru') (defaults)": ("RNNClassifier", {"cell": "gru"}),
    "GRU, learning_rate_init=0.001": (
        "RNNClassifier",
        {"cell": "gru", "learning_rate_init": 1e-3},
    ),
}
N_WORDS, N_WRITERS, N_TEST_WRITERS, N_SAMPLES = 10, 25, 5, 2500


def data():
    """Writer-independent training and test sequences and their words."""
    from sklmn.datasets import make_online_handwriting
    from sklmn.datasets._handwriting import HANDWRITING_VOCABULARY

    X, y, writer = make_online_handwriting(
        N_SAMPLES,
        vocabulary=list(HANDWRITING_VOCABULARY)[:N_WORDS],
        n_writers=N_WRITERS,
        point_density=3.0,
        random_state=0,
        return_writers=True,
    )
    train = writer < N_WRITERS - N_TEST_WRITERS
    split = [
        [x for x, t in zip(X, train, strict=True) if t == keep]
        for keep in (True, False)
    ]
    return split[0], split[1], y[train], y[~train]


def fit_and_score(name: str, seed: int, split) -> tuple:
    """``(name, seed, test accuracy, fit seconds, epochs)`` of one fit."""
    from sklmn import estimators
    from sklmn.pretraining import LAESInitializer

    X_train, X_test, y_train, y_test = split
    cls, params = CONFIGS[name]
    params = dict(params)
    if params.get("pretrainer") == "laes":  # the start of pretrainer='auto'
        params["pretrainer"] = LAESInitializer(
            alpha="gcv", readout="auto", random_state=seed
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est = getattr(estimators, cls)(**params, random_state=seed, n_threads=1)
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    return name, seed, float(est.score(X_test, y_test)), seconds, int(est.n_iter_)


def main(argv=None) -> None:
    from joblib import Parallel, delayed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(CONFIGS),
        metavar="NAME",
        help="run only these rows (default: all)",
    )
    args = parser.parse_args(argv)
    names = args.only or list(CONFIGS)
    split = data()
    print(f"{len(split[0])} training and {len(split[1])} test sequences")
    results = Parallel(n_jobs=args.jobs)(
        delayed(fit_and_score)(name, seed, split)
        for seed in args.seeds
        for name in names
    )
    print("| model | test accuracy | per seed | s / epochs |")
    print("|---|---|---|---|")
    for name in names:
        rows = [r for r in results if r[0] == name]
        acc = np.array([r[2] for r in rows])
        spread = acc.std(ddof=1) if len(acc) > 1 else 0.0
        seeds = ", ".join(f"{a:.3f}" for a in acc)
        cost = (
            f"{np.mean([r[3] for r in rows]):.0f} / {np.mean([r[4] for r in rows]):.0f}"
        )
        print(f"| {name} | {acc.mean():.3f} ± {spread:.3f} | {seeds} | {cost} |")


if __name__ == "__main__":
    main()
