"""Why the multi-scale LAES start is weak on long univariate series.

The multi-scale LMN's LAES start (``pretrainer='auto'``) fits one LAES per
module, each on the inputs subsampled at the module's clock, independently.
On a smooth univariate series every module then encodes nearly the same
directions (the leading principal directions of the history, seen at four
resolutions), so four modules of 8 components hold little more than one.
This script measures it without the network, in numpy, on the tuning sets
(ArrowHead, BasicMotions, ItalyPowerDemand; equal lengths): the test
accuracy of a logistic regression (``C`` 1, ``LAESInitializer``'s default, and 10)
on the final states of

- ``independent``: module ``k`` (period ``2**k``) from the SVD of its own
  data matrix Ξ_k (the reversed subsampled histories), the papers'
  construction (``LAESInitializer(modules='independent')``);
- ``residual``: module ``k`` from the SVD of Ξ_k with the part that the
  faster modules' states already explain (least squares over the rows)
  removed first (what ``LAESInitializer(modules='residual')`` builds, the
  multi-scale estimators' start);
- ``residual, slow first``: the same, slowest module first;
- ``one LAES``: a single LAES with as many components as all the modules
  (the LMN's start).

Each module's encoder is the LAES recursion ``m_t = A x_t + B m_{t-1}`` with
``A = Vᵀ E`` and ``B = Vᵀ S V`` (``E`` places the step at the top of the
history, ``S`` shifts the history by one step), ``V`` the leading right
singular vectors; with the residual matrices the recursion is an
approximation (their row space is not shift-invariant). The encoding is
linear (the network's start passes the inputs through ``tanh``), and every
feature is standardized by its training mean and standard deviation, as the
estimators do. Not the library's code path: a measurement of the
construction.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench ms-redundancy [--components 8]

About 10 seconds. Results are recorded in ``docs/training.md`` ("What the
defaults do not fix yet").
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

DATASETS = ("ArrowHead", "BasicMotions", "ItalyPowerDemand")
N_MODULES = 4


def histories(A: np.ndarray, period: int) -> np.ndarray:
    """``(n, L, L * d)``: at every clock tick ``j`` of the subsampled series
    ``A[:, ::period]`` (``L`` ticks of ``d`` features), its reversed
    history, zero-padded."""
    S = A[:, ::period]
    n, L, d = S.shape
    H = np.zeros((n, L, L * d))
    for j in range(L):
        H[:, j, : (j + 1) * d] = S[:, j::-1].reshape(n, -1)
    return H


def encode(A: np.ndarray, period: int, V: np.ndarray) -> np.ndarray:
    """Final states ``(n, p)`` of the LAES recursion with basis ``V``."""
    S = A[:, ::period]
    _, L, d = S.shape
    E = np.zeros((L * d, d))
    E[:d] = np.eye(d)
    A_in, B = V.T @ E, V.T @ np.eye(L * d, k=-d) @ V
    m = np.zeros((A.shape[0], V.shape[1]))
    for j in range(L):
        m = S[:, j] @ A_in.T + m @ B.T
    return m


def module_bases(A: np.ndarray, p: int, order, residual: bool) -> dict:
    """``{k: V_k}`` for the modules in ``order``."""
    T = A.shape[1]
    bases: dict = {}
    for k in order:
        period = 2**k
        H = histories(A, period)
        Xi = H.reshape(-1, H.shape[2])
        if residual and bases:
            ticks = np.arange(0, T, period)
            # the earlier modules' (exact) states at this module's ticks
            states = []
            for j, V in bases.items():
                H = histories(A, 2**j)
                states.append(H[:, np.minimum(ticks // 2**j, H.shape[1] - 1)] @ V)
            M = np.concatenate(states, axis=2).reshape(Xi.shape[0], -1)
            coef, *_ = np.linalg.lstsq(M, Xi, rcond=None)
            Xi = Xi - M @ coef
        _, _, Vt = np.linalg.svd(Xi, full_matrices=False)
        bases[k] = Vt[:p].T
    return bases


def accuracy(F_train, y_train, F_test, y_test, C: float) -> float:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=C, max_iter=5000).fit(F_train, y_train)
    return float(model.score(F_test, y_test))


def main(argv=None) -> None:
    from sklmn.datasets import load_timeseries_dataset

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", type=int, default=8)
    args = parser.parse_args(argv)
    p = args.components
    variants = {
        "independent": (range(N_MODULES), False),
        "residual": (range(N_MODULES), True),
        "residual, slow first": (range(N_MODULES - 1, -1, -1), True),
    }
    print("| dataset | construction | C=1 | C=10 |")
    print("|---|---|---|---|")
    for name in DATASETS:
        X_train, X_test, y_train, y_test = load_timeseries_dataset(name, split="both")
        A_train, A_test = (
            np.stack([np.asarray(x, float).reshape(len(x), -1) for x in X])
            for X in (X_train, X_test)
        )
        steps = A_train.reshape(-1, A_train.shape[2])
        mu, sd = steps.mean(axis=0), steps.std(axis=0)
        A_train, A_test = (A_train - mu) / sd, (A_test - mu) / sd
        rows = {}
        for label, (order, residual) in variants.items():
            bases = module_bases(A_train, p, order, residual)
            F = [
                np.hstack([encode(A, 2**k, bases[k]) for k in sorted(bases)])
                for A in (A_train, A_test)
            ]
            rows[f"{label}, {N_MODULES} x {p}"] = F
        (V,) = module_bases(A_train, N_MODULES * p, [0], False).values()
        rows[f"one LAES of {N_MODULES * p}"] = [
            encode(A, 1, V) for A in (A_train, A_test)
        ]
        for label, (F_train, F_test) in rows.items():
            cells = [accuracy(F_train, y_train, F_test, y_test, C) for C in (1.0, 10.0)]
            print(
                f"| {name} | {label} | " + " | ".join(f"{c:.3f}" for c in cells) + " |"
            )


if __name__ == "__main__":
    main()
