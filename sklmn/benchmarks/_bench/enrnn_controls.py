r"""Controlled runs of the ENRNN claims that failed in the full preset.

The full preset's ``enrnn-adding`` and ``enrnn-copy`` experiments (Helfrich
& Ye 2020 §5.1-5.2, Figs. 1-2) train on a small training set seen many
times (2250 adding sequences for 10 epochs, 1000 copy sequences for 8
epochs), a few per cent of the paper's budget. There the ENRNN did not
leave the adding baseline at T = 750 and ended above the LSTM on the copy
task at T = 2000. These runs change one thing, the paper's way of feeding
the data: every sequence is new (the paper draws 100 000 adding and
20 000 copy training sequences), and a larger budget than the experiment's,
with the experiment's models and settings otherwise (``_exp_enrnn``:
coupling, Adam 1e-3, gradient clipping at norm 1, no L2 penalty, the
adding targets standardized). Training runs in chunks of fresh sequences
(``warm_start=True``, the optimizer state carried over, one epoch each);
after every chunk the validation score is recorded (the learning curve),
and the test score on the experiment's test set at the end.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench enrnn-controls --task adding \
        --out benchmarks/results_enrnn_control_adding.json
    .venv/bin/python -m sklmn.benchmarks bench enrnn-controls --task copy \
        --out benchmarks/results_enrnn_control_copy.json
    .venv/bin/python -m sklmn.benchmarks bench enrnn-controls --task adding \
        --seed 1 --out benchmarks/results_enrnn_control_adding-seed1.json

Defaults: adding 15 chunks of 5000 sequences (75 000 presentations, 12.5%
of the paper's 600 000), copy 10 chunks of 1000 (500 iterations of batches
of 20, 12.5% of the paper's 4000); one torch thread. ``--seed`` sets the
models' initialization and batch order (seed 0 by default); the sequences
are the same on every seed. The recorded JSON and
the command are cited by the claim registry (``_claims.py``) and
``docs/user_guide/papers.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn import __version__
from sklmn.datasets import make_adding_problem, make_copy_task
from sklmn.estimators import (
    ENRNNClassifier,
    ENRNNRegressor,
    RNNClassifier,
    RNNRegressor,
)

from .._exp_common import int_at_least, pinned

_BASELINE_ADDING = 1.0 / 6.0
_PAPER_ADDING = 600_000
_PAPER_COPY_ITERATIONS = 4000


def _adding(args):
    T = args.length
    common = dict(max_iter=1, batch_size=50, learning_rate_init=1e-3, alpha=0.0,
                  random_state=args.seed)  # fmt: skip
    models = {
        "ENRNN (coupling)": lambda: pinned(
            ENRNNRegressor, hidden_size=96, short_size=64, coupling=True, **common
        ),
        "LSTM": lambda: pinned(RNNRegressor, cell="lstm", hidden_size=60, **common),
    }
    # the experiment's test set (data seed 1); validation: data seed 2;
    # training chunks: data seeds 100, 101, ...
    X_test, y_test = make_adding_problem(args.n_test, length=T, random_state=1)
    X_val, y_val = make_adding_problem(args.n_val, length=T, random_state=2)

    def score(est, X, y):
        return float(np.mean((np.asarray(est.predict(X), dtype=float) - y) ** 2))

    def chunk(i):
        return make_adding_problem(args.chunk, length=T, random_state=100 + i)

    presented = args.chunks * args.chunk
    budget = (
        f"{presented} fresh sequences of T = {T} = "
        f"{100 * presented / _PAPER_ADDING:.1f}% of the paper's {_PAPER_ADDING}"
    )
    return models, chunk, score, (X_val, y_val), (X_test, y_test), budget, {
        "task": f"adding problem T = {T}",
        "metric": "MSE (target units)",
        "baseline": _BASELINE_ADDING,
        "baseline_name": "predict 1 (0.167)",
        "claims": ["adding-converges", "adding-baseline"],
    }


def _copy(args):
    T, S, K = args.length, 10, 8
    common = dict(target="timestep", max_iter=1, batch_size=20,
                  learning_rate_init=1e-3, random_state=args.seed)  # fmt: skip
    models = {
        "ENRNN (coupling)": lambda: pinned(
            ENRNNClassifier, hidden_size=172, short_size=20, coupling=True, **common
        ),
        "LSTM": lambda: pinned(RNNClassifier, cell="lstm", hidden_size=68, **common),
    }

    def data(n, seed):
        return make_copy_task(n, n_symbols=S, delay=T, n_classes=K, random_state=seed)

    # the experiment's test (data seed 1) and validation (seed 2) sets
    X_test, y_test = data(args.n_test, 1)
    X_val, y_val = data(args.n_val, 2)

    def score(est, X, y):
        proba = np.asarray(est.predict_proba(X), dtype=float)
        picked = np.take_along_axis(proba, np.asarray(y)[..., None], axis=-1)
        return float(-np.mean(np.log(np.clip(picked, 1e-12, None))))

    def chunk(i):
        return data(args.chunk, 100 + i)

    iterations = args.chunks * math.ceil(args.chunk / 20)
    budget = (
        f"{iterations} iterations of batches of 20 on {args.chunks * args.chunk} "
        f"fresh sequences = {100 * iterations / _PAPER_COPY_ITERATIONS:.1f}% of "
        f"the paper's {_PAPER_COPY_ITERATIONS}"
    )
    return models, chunk, score, (X_val, y_val), (X_test, y_test), budget, {
        "task": f"copy task T = {T}, S = {S}, K = {K}",
        "metric": "cross-entropy per step",
        "baseline": S * math.log(K) / (T + 2 * S),
        "baseline_name": "memoryless 10 log 8 / (T + 20)",
        "claims": ["copy2000-order", "copy2000-enrnn"],
    }


_DEFAULTS = {
    "adding": {"length": 750, "chunk": 5000, "chunks": 15, "n_val": 500, "n_test": 500},
    "copy": {"length": 2000, "chunk": 1000, "chunks": 10, "n_val": 200, "n_test": 200},
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(_DEFAULTS), required=True)
    parser.add_argument("--models", nargs="*", default=["ENRNN (coupling)", "LSTM"])
    parser.add_argument("--length", type=int_at_least(2), default=None,
                        help="T (task default)")  # fmt: skip
    parser.add_argument("--chunk", type=int_at_least(1), default=None,
                        help="fresh training sequences per chunk (one epoch each)")
    parser.add_argument("--chunks", type=int_at_least(1), default=None)
    parser.add_argument("--n-val", type=int_at_least(1), default=None)
    parser.add_argument("--n-test", type=int_at_least(1), default=None)
    parser.add_argument("--seed", type=int_at_least(0), default=0,
                        help="the models' seed")  # fmt: skip
    parser.add_argument("--out", default=None, help="JSON file for the raw record")
    args = parser.parse_args(argv)
    for key, value in _DEFAULTS[args.task].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    torch.set_num_threads(1)
    build = _adding if args.task == "adding" else _copy
    models, chunk, score, (X_val, y_val), (X_test, y_test), budget, info = build(args)
    unknown = sorted(set(args.models) - set(models))
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {sorted(models)}")
    record = {
        "command": "python -m sklmn.benchmarks bench enrnn-controls "
        + " ".join(argv if argv is not None else []),
        **info,
        "budget": budget,
        "settings": {k: getattr(args, k) for k in _DEFAULTS[args.task]} | {
            "seed": args.seed, "models": args.models},
        "environment": f"sklmn {__version__}, torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}, one torch thread",
        "models": {},
    }  # fmt: skip

    def save():
        # after every chunk, so that a run cut short keeps its curve so far
        if args.out:
            with open(args.out, "w") as stream:
                json.dump(record, stream, indent=1)
                stream.write("\n")

    for name in args.models:
        est = models[name]()
        presented, curve = [], []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for i in range(args.chunks):
            X, y = chunk(i)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                est.fit(X, y)
            if i == 0:
                est.set_params(warm_start=True)
            presented.append((i + 1) * args.chunk)
            curve.append(score(est, X_val, y_val))
            print(f"{name}: {presented[-1]} sequences, validation {curve[-1]:.5g}",
                  flush=True)  # fmt: skip
            record["models"][name] = {
                "sequences_presented": presented,
                "validation": curve,
                "test_last": None,
                "cpu_seconds": round(time.process_time() - cpu0, 1),
                "wall_seconds": round(time.perf_counter() - wall0, 1),
            }
            save()
        test = score(est, X_test, y_test)
        record["models"][name] = {
            "sequences_presented": presented,
            "validation": curve,
            "test_last": test,
            "cpu_seconds": round(time.process_time() - cpu0, 1),
            "wall_seconds": round(time.perf_counter() - wall0, 1),
        }
        print(f"{name}: test {test:.5g} (baseline {info['baseline']:.5g}); "
              f"{record['models'][name]['cpu_seconds']} CPU s", flush=True)  # fmt: skip
        save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
