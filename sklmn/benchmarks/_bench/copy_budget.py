r"""Is the copy task at T = 500 a matter of budget? One model, a longer run.

The full preset's copy task (Carta et al. 2020b, "Autoencoder-based
initialization for recurrent neural networks with a linear memory", §5.1,
Table 1) trains for 1250 batches of 64 at T = 500 (the paper: 10 000
batches, 100 units), and every model ends on the memoryless plateau
(validation loss per step ``S log K / (T + 2S)``, 12.5% of the copied
symbols). This script trains one of the experiment's models (the same
settings, ``sklmn.benchmarks._exp_copy``) for more epochs, optionally
with other estimator settings, and prints the validation loss every tenth
of the run and the test accuracy on the copied symbols.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench copy-budget --epochs 160
    .venv/bin/python -m sklmn.benchmarks bench copy-budget --epochs 40 \
        --set standardize=False
    .venv/bin/python -m sklmn.benchmarks bench copy-budget --epochs 40 --model LSTM \
        --set standardize=False
    .venv/bin/python -m sklmn.benchmarks bench copy-budget --epochs 120 \
        --set truncate_gradient=True
    .venv/bin/python -m sklmn.benchmarks bench copy-budget --epochs 40 \
        --set "memory_matrix='free'" --init-radius 1.0

One torch thread; about 4-5 s per epoch for the LMN with 64 units at
T = 500 (2000 training sequences, 31 batches). Results are recorded in
the copy-task notes of the papers' report (``sklmn/benchmarks/_exp_copy.py``)
and in the README.
"""

from __future__ import annotations

import argparse
import ast
import math
import time

import numpy as np
import torch

from .._exp_common import int_at_least


def main(argv=None) -> None:
    from sklmn.datasets import make_copy_task

    from .._exp_copy import _N_CLASSES, _N_SYMBOLS, _models
    from .._timeseries.models import with_init_radius

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="LMN", choices=["LMN", "LSTM", "tanh RNN"])
    parser.add_argument("--epochs", type=int_at_least(1), default=160)
    parser.add_argument("--delay", type=int_at_least(1), default=500)
    parser.add_argument("--n-train", type=int_at_least(1), default=2000)
    parser.add_argument("--hidden", type=int_at_least(1), default=64)
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    parser.add_argument(
        "--init-radius", type=float, default=None,
        help="LMN only: spectral radius of the linearized memory map at "
        "initialization (the library's scheme; needs memory_matrix='free')",
    )  # fmt: skip
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="PARAM=VALUE",
        help="estimator settings changed from the experiment's",
    )  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    params = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        try:
            params[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            sep = ""
        if not (sep and key):
            parser.error(
                f"--set: expected PARAM=VALUE (a Python literal), got {item!r}"
            )
    S, K, T = _N_SYMBOLS, _N_CLASSES, args.delay

    def data(n, seed):
        return make_copy_task(n, n_symbols=S, delay=T, n_classes=K, random_state=seed)

    # the experiment's data seeds: training 0, test 1, validation 2
    (X, y), (X_test, y_test), (X_val, y_val) = (
        data(args.n_train, 0), data(1000, 1), data(1000, 2)
    )  # fmt: skip
    try:
        est = _models(args.hidden, args.epochs, args.seed)[args.model]
        est.set_params(**params)
    except ValueError as exc:  # an unknown parameter name
        parser.error(f"--set: {exc}")
    if args.init_radius is not None:
        est = with_init_radius(type(est), args.init_radius)(**est.get_params())
        params["init_radius"] = args.init_radius
    start = time.perf_counter()
    est.fit(X, y, X_val=X_val, y_val=y_val)
    seconds = time.perf_counter() - start
    pred = np.asarray(est.predict(X_test))
    acc = float(np.mean(pred[:, -S:] == y_test[:, -S:]))
    curve = est.validation_loss_curve_
    step = max(1, len(curve) // 10)
    batches = args.epochs * math.ceil(args.n_train / 64)
    print(
        f"{args.model}, T = {T}, {args.epochs} epochs ({batches} batches of "
        f"64), {params or 'experiment settings'}"
    )
    print(
        f"test accuracy on the copied symbols: {100 * acc:.1f}% (1/K = {100 / K:.1f}%)"
    )
    print(f"memoryless validation loss per step: {S * math.log(K) / (T + 2 * S):.4f}")
    print(
        "validation loss every tenth of the run: "
        + ", ".join(f"{v:.4f}" for v in curve[::step])
        + f"; last {curve[-1]:.4f}"
    )
    print(f"{seconds:.0f} s")


if __name__ == "__main__":
    main()
