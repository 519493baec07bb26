"""Adding problem: ENRNN and LSTM vs the 0.167 baseline (Helfrich & Ye 2020 §5.1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..datasets import make_adding_problem
from ..estimators import ENRNNRegressor, RNNRegressor
from ._exp_common import (
    DIVERGED,
    fit_timed,
    kept_epoch,
    pinned,
    single_threaded,
    sizes_for,
)
from ._plotting import plot_curves
from ._runner import Claim, ExperimentResult, Row

_SIZES = {
    "test": {"length": 10, "n_train": 64, "n_test": 32, "epochs": 1, "hidden": 8},
    "quick": {
        "length": 50,
        "n_train": 2000,
        "n_test": 1000,
        "epochs": 30,
        "hidden": 64,
    },
    "full": {
        "length": 200,
        "n_train": 10000,
        "n_test": 2000,
        "epochs": 40,
        "hidden": 64,
    },
}
_BASELINE = 1.0 / 6.0


def _raw_units(est) -> list[float]:
    """``loss_curve_`` in the units of the targets (the baseline's units).

    With ``standardize=True`` the regressors train on standardized targets,
    so ``loss_curve_`` is an MSE in units of the target variance; times
    ``target_scale_**2`` it is the MSE of the targets themselves.
    """
    scale = getattr(est, "target_scale_", None)
    factor = 1.0 if scale is None else float(np.ravel(scale)[0]) ** 2
    return [float(v) * factor for v in est.loss_curve_]


@single_threaded
def adding_problem(
    preset: str, output_dir: Path, log, *, seed: int = 0
) -> ExperimentResult:
    """Train the ENRNN and an LSTM on the adding problem; report the test MSE.

    The baseline predicts 1 (the mean target) and scores 1/6 ≈ 0.167; Helfrich & Ye 2020
    Fig. 1 shows the ENRNN going well below it at T = 750. This is sklmn's
    shortened variant (T = 200, no coupling, other sizes, an L2 penalty);
    the paper's set-up runs in the ``enrnn-adding`` experiment. Both
    models have 64 (long-term) units (the ENRNN adds 16 short-term units),
    Adam with learning rate 3e-3 (1e-3 had not left the plateau after 30
    quick epochs), minibatches of 50, a fixed epoch budget.

    Budgets: ``quick`` T = 50, 2000 sequences, 30 epochs (about 15 s on two
    idle cores); ``full`` T = 200, 10000 sequences, 40 epochs (measured with
    one thread at T = 200: 2.4e-6 s per sequence step for the ENRNN and
    2.8e-6 for the LSTM, so about 3 and 4 minutes, 7 minutes in all).
    """
    sizes = sizes_for(_SIZES, preset)
    result = ExperimentResult("adding-problem")
    T = sizes["length"]
    X, y = make_adding_problem(sizes["n_train"], length=T, random_state=0)
    X_test, y_test = make_adding_problem(sizes["n_test"], length=T, random_state=1)
    common = dict(
        max_iter=sizes["epochs"],
        batch_size=50,
        learning_rate_init=3e-3,
        # 10% of the training sequences validate: the weights of the epoch
        # of lowest validation loss are kept (a fixed budget otherwise)
        early_stopping=True,
        validation_fraction=0.1,
        n_iter_no_change=10 * sizes["epochs"],
        tol=0.0,
        random_state=seed,
    )
    models = {
        # eps = 0 (Helfrich & Ye 2020 §3) comes with the pinned ENRNN settings
        "ENRNN": pinned(
            ENRNNRegressor,
            hidden_size=sizes["hidden"],
            short_size=max(sizes["hidden"] // 4, 2),
            **common,
        ),
        "LSTM": pinned(
            RNNRegressor, cell="lstm", hidden_size=sizes["hidden"], **common
        ),
    }
    mse: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    for name, est in models.items():
        est, _ = fit_timed(est, X, y, log, name)
        if est is None:
            mse[name] = math.nan
            task = f"adding problem T={T} (test)"
            result.rows.append(Row(task, name, "MSE", math.nan, "", DIVERGED))
            continue
        pred = np.asarray(est.predict(X_test), dtype=float)
        mse[name] = float(np.mean((pred - y_test) ** 2))
        curves[name] = _raw_units(est)
        log(f"{name}: test MSE {mse[name]:.4f} (baseline {_BASELINE:.3f})")
        result.rows.append(
            Row(
                f"adding problem T={T} (test)",
                name,
                "MSE",
                mse[name],
                "well below 0.167" if name == "ENRNN" else "",
                f"{sizes['n_train']} sequences; " + kept_epoch(est),
            )
        )
    result.rows.append(
        Row(
            f"adding problem T={T} (test)",
            "predict 1",
            "MSE",
            float(np.mean((1.0 - y_test) ** 2)),
            "0.167",
            "baseline",
        )
    )
    result.claims.append(
        Claim(
            "The ENRNN beats the 0.167 baseline on the adding problem "
            "(MSE < 0.05) (Helfrich & Ye 2020 Fig. 1, shortened)",
            bool(mse["ENRNN"] < 0.05),
            f"ENRNN test MSE {mse['ENRNN']:.4f} at T = {T}, weights of the "
            f"epoch of lowest validation loss within {sizes['epochs']} epochs "
            f"(LSTM {mse['LSTM']:.4f})",
            smaller_than_paper=""
            if T >= 200
            else f"T = {T}; the paper: T = 750",
        )
    )
    result.notes += [
        "Selection: the weights of the epoch of lowest validation loss (10% "
        "of the training sequences held out), within a fixed epoch budget.",
        "Paper's setting: ENRNN eps = 0 (the short-term matrix divided by "
        "its spectral radius exactly).",
        f"Deviation: {sizes['epochs']} epochs of {sizes['n_train']} sequences "
        "(the paper trains far longer); Adam 3e-3, batches of 50, "
        "gradient clipping at norm 1 are sklmn's choices for this budget.",
        f"Deviations from Helfrich & Ye 2020 §5.1 (Fig. 1): T = {T} (the paper: "
        f"750); no coupling block (the paper's ENRNN has one); "
        f"{sizes['hidden']} long-term and {max(sizes['hidden'] // 4, 2)} "
        "short-term units and an LSTM of "
        f"{sizes['hidden']} (the paper: 96/64 and 60, ~15k parameters each); "
        "the estimators' L2 penalty 1e-4 (the paper states none). The claim "
        "is 'beats the baseline', not the paper's 'converges before the "
        "LSTM': the enrnn-adding experiment (full preset) tests that at the "
        "paper's T, sizes and coupling.",
    ]
    path = plot_curves(
        output_dir / "adding_problem_loss.png",
        curves,
        ylabel="training MSE (target units)",
        title=f"Adding problem, T = {T}",
        hline=(_BASELINE, "baseline (predict 1)"),
    )
    if path is not None:
        result.plots.append(path)
    return result
