"""The LMN regressor's start on targets that are linear in the history.

A regression target is often (nearly) a linear function of the input
history, which ``RidgeCV`` on the flattened series fits well. The LMN
regressors' ``pretrainer='auto'`` start is a ridge readout of the LAES
states, so it can represent such a target only (i) in as many directions of
the history as the memory has units and (ii) as far as the hidden ``tanh``
that the LAES initialization puts between the input and the memory is
linear. This script measures both on generated data: the test RMSE of
``LMNRegressor`` with ``memory_size`` 32 or 64 and the start's input scale
``s`` (``LAESInitializer(input_scale=s)``) 1 or 0.1, next to ``RidgeCV``
on the flattened standardized series and the training mean.

The tasks (300 training and 1000 test sequences of 50 steps, 3 features;
inputs AR(1)-smoothed Gaussian noise, ``x_t = 0.8 x_{t-1} + 0.6 e_t``; the
target a fixed random linear function of the inputs plus noise of standard
deviation 0.1 times the signal's):

- ``whole history``: weights on every step and feature, decaying with
  the age of the step (``0.97 ** age``);
- ``first 10 steps``: weights on the first 10 steps only (the oldest ones,
  which the last-step readout must carry through 40 more steps).

Usage::

    .venv/bin/python -m sklmn.benchmarks bench regressor-start [--seeds 0 1 2]

About 6 minutes on 2 cores. Results are recorded in ``docs/training.md``
("The regressor's memory").
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

N_TRAIN, N_TEST, LENGTH, N_FEATURES = 300, 1000, 50, 3
VARIANTS = ((32, 1.0), (64, 1.0), (32, 0.1), (64, 0.1))


def make_task(kind: str, seed: int, length: int = LENGTH, n_features: int = N_FEATURES):
    """``(X_train, y_train, X_test, y_test)`` of one generated task."""
    rng = np.random.RandomState(seed)
    n = N_TRAIN + N_TEST
    X = np.zeros((n, length, n_features))
    for t in range(length):
        noise = rng.randn(n, n_features)
        X[:, t] = noise if t == 0 else 0.8 * X[:, t - 1] + 0.6 * noise
    W = rng.randn(length, n_features)
    if kind == "whole history":
        W *= 0.97 ** np.arange(length - 1, -1, -1)[:, None]
    else:  # the first 10 steps only
        W[10:] = 0.0
    signal = np.einsum("ntd,td->n", X, W)
    y = signal + 0.1 * signal.std() * rng.randn(n)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def lmn_regressor(memory_size: int, input_scale: float, seed: int):
    """``LMNRegressor`` with the library defaults but these two settings."""
    from sklmn.estimators import LMNRegressor

    class _Variant(LMNRegressor):
        _auto_laes_params = {"input_scale": input_scale}

    return _Variant(memory_size=memory_size, random_state=seed)


def rmse(y_true, y_pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y_pred) - np.asarray(y_true)) ** 2)))


def _fit_one(kind: str, seed: int, variant, shape) -> tuple:
    import torch

    torch.set_num_threads(1)
    X_train, y_train, X_test, y_test = make_task(kind, seed, *shape)
    if variant == "ridge":
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = make_pipeline(StandardScaler(), RidgeCV(np.logspace(-4, 4, 17)))
        model.fit(X_train.reshape(N_TRAIN, -1), y_train)
        score = rmse(y_test, model.predict(X_test.reshape(N_TEST, -1)))
        return kind, seed, variant, score, 0.0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lmn_regressor(*variant, seed).fit(X_train, y_train)
    seconds = time.perf_counter() - start
    kept = model.pretrainer_ is not None
    return kind, seed, (*variant, kept), rmse(y_test, model.predict(X_test)), seconds


def main(argv=None) -> None:
    from joblib import Parallel, delayed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--variants",
        nargs="+",
        default=[f"{m}:{s}" for m, s in VARIANTS],
        metavar="MEMORY:SCALE",
        help="memory_size:input_scale pairs (default: %(default)s)",
    )
    parser.add_argument("--length", type=int, default=LENGTH)
    parser.add_argument("--features", type=int, default=N_FEATURES)
    args = parser.parse_args(argv)
    shape = (args.length, args.features)
    variants = [(int(v.split(":")[0]), float(v.split(":")[1])) for v in args.variants]
    kinds = ("whole history", "first 10 steps")
    start = time.perf_counter()
    jobs = [
        delayed(_fit_one)(kind, seed, variant, shape)
        for kind in kinds
        for seed in args.seeds
        for variant in ("ridge", *variants)
    ]
    results = Parallel(n_jobs=args.jobs)(jobs)
    table: dict = {}
    starts: dict = {}
    seconds: dict = {}
    for kind, _seed, variant, value, fit_seconds in results:
        key = variant if variant == "ridge" else variant[:2]
        table.setdefault((kind, key), []).append(value)
        if variant != "ridge":
            starts.setdefault((kind, key), []).append(variant[2])
            seconds.setdefault(key, []).append(fit_seconds)
    print(f"| model | {' | '.join(kinds)} | fit s |")
    print("|---|" + "---|" * (len(kinds) + 1))
    means = []
    for kind in kinds:
        _, y_train, _, y_test = make_task(kind, args.seeds[0], *shape)
        means.append(rmse(y_test, np.full(N_TEST, y_train.mean())))
    print(
        "| training mean (first seed) | "
        + " | ".join(f"{m:.3f}" for m in means)
        + " | |"
    )
    rows = [("RidgeCV, flattened", "ridge")] + [
        (f"LMNRegressor(memory_size={m}), input_scale={s}", (m, s))
        for m, s in variants
    ]
    for label, key in rows:
        cells = []
        for kind in kinds:
            values = np.array(table[(kind, key)])
            cell = f"{values.mean():.3f} ± {values.std():.3f}"
            if key != "ridge":
                cell += f" ({sum(starts[(kind, key)])}/{len(values)} starts kept)"
            cells.append(cell)
        fit = "" if key == "ridge" else f"{np.median(seconds[key]):.1f}"
        print(f"| {label} | " + " | ".join(cells) + f" | {fit} |")
    print(
        f"\n{len(jobs)} fits, {args.length} steps x {args.features} features, "
        f"seeds {args.seeds}, {time.perf_counter() - start:.0f} s (fit s: median "
        "seconds of one LMN fit, one torch thread, two fits at a time)"
    )


if __name__ == "__main__":
    main()
