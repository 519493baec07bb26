"""Sequence generation from zero input (Carta et al. 2021 §5.4, Table 4, Fig. 9)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..datasets import load_generation_signal
from ..estimators import LMNRegressor, MultiScaleLMNRegressor, RNNRegressor
from ..metrics import normalized_mse
from ._exp_common import (
    DIVERGED,
    fit_timed,
    n_parameters,
    ordering_holds,
    single_threaded,
    sizes_for,
)
from ._plotting import pyplot
from ._runner import Claim, ExperimentResult, Row, register

_SIZES = {
    "test": {"epochs": 2, "n_samples": 40, "n_modules": 3},
    "quick": {"epochs": 800, "n_samples": 300, "n_modules": 9},
    "full": {"epochs": 4000, "n_samples": 300, "n_modules": 9},
}
#: Carta et al. 2021 Table 4, NMSE (x 1e-3) with about 1000 parameters per model.
_PAPER = {
    "MS-LMN": "0.116e-3",
    "Clockwork RNN": "12.5e-3",
    "LSTM": "20.7e-3",
    "LMN": "38.4e-3",
    "RNN": "79.5e-3",
}


def _models(epochs: int, n_modules: int) -> dict:
    # Sizes chosen for about 1000 trainable scalars each (counted with the
    # full shape of the block-structured matrices), as in Carta et al. 2021 Table 4.
    common = dict(
        target="timestep",
        max_iter=epochs,
        batch_size=1,
        learning_rate_init=1e-2,
        alpha=0.0,
        n_iter_no_change=epochs + 1,
        tol=0.0,
        random_state=0,
    )
    return {
        # 9 modules of 2 memory units, periods 1 .. 256 (Carta et al. 2021 §5.4)
        "MS-LMN": MultiScaleLMNRegressor(
            hidden_size=16, memory_size=2, n_modules=n_modules, **common
        ),
        "Clockwork RNN": RNNRegressor(
            cell="clockwork", hidden_size=3 * n_modules, n_modules=n_modules, **common
        ),
        "LSTM": RNNRegressor(cell="lstm", hidden_size=15, **common),
        "LMN": LMNRegressor(hidden_size=18, memory_size=18, **common),
        "RNN": RNNRegressor(cell="elman", hidden_size=31, **common),
    }


@register(
    "sequence-generation",
    "generate a 300-sample recording from zero input: MS-LMN vs Clockwork RNN "
    "vs LSTM vs LMN vs RNN (Carta et al. 2021 Table 4)",
)
@single_threaded
def sequence_generation(preset: str, output_dir: Path, log) -> ExperimentResult:
    """Fit each model to the single bundled sequence and report its NMSE.

    The input is all zeros (one feature); the models produce the signal from
    their biases and recurrences alone (no extra constant channel is needed:
    every sklmn cell has a hidden bias). Per-step regression
    (``target='timestep'``), Adam with learning rate 1e-2 (better than 3e-3
    for every model in a 400-epoch trial), no L2 penalty,
    one sequence per epoch. The NMSE is measured on the training sequence
    itself, as in the paper (the task is to memorize and replay it).

    Sizes (trainable scalars, block-structured matrices counted with their
    full shape): MS-LMN 16 hidden units and 9 modules of 2 memory units
    (periods 1 .. 256, 951), Clockwork RNN 9 modules of 3 units (811), LSTM
    15 units (1096), LMN 18 + 18 units (1027), RNN 31 units (1086).

    Budgets: ``quick`` 800 epochs (about 40 s on two idle cores); ``full``
    4000 epochs (measured with one thread per 400 epochs: MS-LMN 7.8 s,
    Clockwork RNN 4.6 s, LMN 3.6 s, RNN 3.3 s, LSTM 0.7 s: about 3.5 minutes
    in all).
    """
    sizes = sizes_for(_SIZES, preset)
    result = ExperimentResult("sequence-generation")
    X, y = load_generation_signal(n_samples=sizes["n_samples"], return_X_y=True)
    nmse: dict[str, float] = {}
    preds: dict[str, np.ndarray] = {}
    for name, est in _models(sizes["epochs"], sizes["n_modules"]).items():
        est, _ = fit_timed(est, X, y, log, name)
        if est is None:
            nmse[name] = math.nan
            task = f"sequence generation ({sizes['n_samples']} samples)"
            result.rows.append(
                Row(task, name, "NMSE", math.nan, _PAPER[name], DIVERGED)
            )
            continue
        pred = np.asarray(est.predict(X), dtype=float)
        preds[name] = pred[0]
        nmse[name] = float(normalized_mse(y[0], pred[0]))
        n_par = n_parameters(est)
        log(f"{name}: NMSE {nmse[name]:.4g} with {n_par} parameters")
        result.rows.append(
            Row(
                f"sequence generation ({sizes['n_samples']} samples)",
                name,
                "NMSE",
                nmse[name],
                _PAPER[name],
                f"{n_par} parameters, {est.n_iter_} epochs",
            )
        )
    order = list(_PAPER)
    best = min(nmse, key=lambda k: (math.isnan(nmse[k]), nmse[k]))
    result.claims.append(
        Claim(
            "The MS-LMN generates the sequence with the lowest NMSE "
            "(Carta et al. 2021 Table 4)",
            best == "MS-LMN" and not math.isnan(nmse["MS-LMN"]),
            "NMSE " + ", ".join(f"{k} {v:.3g}" for k, v in nmse.items()),
        )
    )
    result.claims.append(
        Claim(
            "Full ordering MS-LMN < Clockwork RNN < LSTM < LMN < RNN "
            "(Carta et al. 2021 Table 4)",
            ordering_holds([nmse[k] for k in order], higher_is_better=False),
            "sklmn ranking: "
            + " < ".join(sorted(nmse, key=lambda k: (math.isnan(nmse[k]), nmse[k]))),
        )
    )
    multi = float(np.max([nmse["MS-LMN"], nmse["Clockwork RNN"]]))
    single = float(np.min([nmse["LSTM"], nmse["LMN"], nmse["RNN"]]))
    result.claims.append(
        Claim(
            "The multi-scale models (MS-LMN, Clockwork RNN) beat the "
            "single-scale ones (LSTM, LMN, RNN) (Carta et al. 2021 Table 4)",
            bool(multi < single),  # False when any NMSE is NaN
            f"worst multi-scale NMSE {multi:.3g}, best single-scale {single:.3g}",
        )
    )
    plt = pyplot()
    if plt is not None and preds:
        fig, axes = plt.subplots(len(preds), 1, figsize=(6, 1.6 * len(preds)))
        for ax, (name, pred) in zip(np.atleast_1d(axes), preds.items(), strict=True):
            ax.plot(y[0], color="0.6", lw=2, label="target")
            ax.plot(pred, color="C3", lw=1, label=f"{name} (NMSE {nmse[name]:.3g})")
            ax.legend(loc="upper right", fontsize=7)
            ax.set_yticks([])
        np.atleast_1d(axes)[-1].set_xlabel("time step")
        fig.suptitle("Sequence generation from zero input (Carta et al. 2021 Fig. 9)")
        fig.tight_layout()
        path = output_dir / "sequence_generation.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        result.plots.append(path)
    return result
