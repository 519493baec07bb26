"""Bach chorales next-step prediction (Carta et al. 2021 §5.1, Tables 1-3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from sklearn.base import clone

from ..datasets import load_bach_chorales, load_polyphonic_music
from ..estimators import LMNClassifier, RNNClassifier
from ..metrics import frame_level_accuracy
from ._exp_common import (
    DIVERGED,
    fit_timed,
    kept_epoch,
    ordering_holds,
    pinned,
    pretraining_or_reason,
    single_threaded,
    sizes_for,
)
from ._plotting import plot_curves
from ._real_data import data_note, locate
from ._runner import Claim, ExperimentResult, Row

_SIZES = {
    "test": {
        "max_chorales": 30,
        "epochs": 1,
        "hidden": 8,
        "lr": 1e-3,
        "pre_lr": 1e-2,
        "pre_epochs": 1,
        "k": 2,
        "controls": True,
    },
    "quick": {
        "max_chorales": None,
        "epochs": 60,
        "hidden": 48,
        "lr": 1e-3,
        "pre_lr": 1e-2,
        "pre_epochs": 10,
        "k": 5,
        # the quick preset shows the claims once, without the controlled runs
        "controls": False,
    },
    "full": {
        "max_chorales": None,
        "epochs": 150,
        "hidden": 100,
        "lr": 1e-3,
        "pre_lr": 5e-3,
        "pre_epochs": 40,
        "k": 10,
        "controls": True,
    },
}
#: Carta et al. 2021 Table 3, JSB Chorales frame-level accuracy (%) on the test set.
#: Learning rate of the controlled runs of the LMNs.
_CONTROL_LR = 3e-4
_PAPER = {"pretrained LMN": "34.49", "LMN": "33.98", "LSTM": "32.64", "RNN": "31.00"}


def _tuned_accuracy(est, X_valid, y_valid, X_test, y_test) -> tuple[float, float]:
    """Frame-level accuracy on the test split at a threshold tuned on validation.

    A classifier predicts a key when its probability exceeds 0.5; with about
    4 of 88 keys sounding per frame the best frame-level accuracy is reached
    at a lower threshold, so it is picked on the validation split (as a
    decision threshold usually is) and then applied to the test split.
    """
    grid = np.round(np.arange(0.05, 0.55, 0.05), 2)
    p_valid = est.predict_proba(X_valid)
    scores = [
        frame_level_accuracy(y_valid, [(p > t).astype(int) for p in p_valid])
        for t in grid
    ]
    best = float(grid[int(np.argmax(scores))])
    p_test = est.predict_proba(X_test)
    test = frame_level_accuracy(y_test, [(p > best).astype(int) for p in p_test])
    return float(test), best


def _models(sizes: dict, seed: int) -> tuple[dict, dict, str | None]:
    """The experiment's models, its controlled runs, and why pretraining is
    missing (None when it is available)."""
    h, epochs = sizes["hidden"], sizes["epochs"]
    common = dict(
        target="timestep",
        max_iter=epochs,
        batch_size=16,
        learning_rate_init=sizes["lr"],
        alpha=1e-5,
        gradient_clipping=1.0,
        early_stopping=True,  # on the validation split (X_val below)
        validation_metric="loss",
        n_iter_no_change=10 * epochs,  # fixed budget, best epoch restored
        tol=0.0,
        random_state=seed,
        # the papers feed the binary piano-roll frames as they are; a
        # standardized rarely sounding key becomes a +-30 input, which the
        # LMN's linear memory carries into overconfident predictions
        standardize=False,
    )
    models: dict = {}
    pretraining, reason = pretraining_or_reason("UnrolledPretrainer")
    if pretraining is not None:
        models["pretrained LMN"] = pinned(
            LMNClassifier,
            hidden_size=h,
            memory_size=h,
            pretrainer=pretraining.UnrolledPretrainer(
                tape_length=sizes["k"],
                max_iter=sizes["pre_epochs"],
                learning_rate_init=sizes["pre_lr"],
                batch_size="auto",
                alpha=0.0,
                n_components=None,
                solver="auto",
                random_state=seed,
            ),
            **common,
        )
    models["LMN"] = pinned(LMNClassifier, hidden_size=h, memory_size=h, **common)
    models["LSTM"] = pinned(RNNClassifier, cell="lstm", hidden_size=h, **common)
    models["RNN"] = pinned(RNNClassifier, cell="elman", hidden_size=h, **common)
    # controlled runs, same budget: standardized inputs (the library
    # default, which earlier runs of this experiment used) and the
    # pretrained LMN at a lower learning rate
    controlled = {
        f"{base}, standardized inputs": clone(models[base]).set_params(standardize=True)
        for base in ("LMN", "RNN")
    }
    if "pretrained LMN" in models:
        controlled[f"pretrained LMN, lr {_CONTROL_LR:g}"] = clone(
            models["pretrained LMN"]
        ).set_params(learning_rate_init=_CONTROL_LR)
    return models, controlled, reason


@single_threaded
def chorales(
    preset: str, output_dir: Path, log, *, seed: int = 0, data_dir=None
) -> ExperimentResult:
    """Next-step prediction of the bundled Bach chorales, frame-level accuracy.

    88-key binary frames (one per quarter note), multilabel per-step targets
    (``target='timestep'``, binary cross-entropy; the binary frames are the
    inputs as they are, ``standardize=False``), scored with the
    frame-level accuracy on the test split, with the decision threshold
    tuned on the validation split (the accuracy at the default 0.5 is in the
    row's note).
    Models: LMN pretrained with the unrolled RNN (Carta et al. 2021 Alg. 1,
    :class:`~sklmn.pretraining.UnrolledPretrainer`, tape length ``k``), LMN
    (random init), LSTM and Elman RNN, all with the same number of hidden
    units (the LMNs with as many memory units). Adam with learning rate 1e-3
    (Carta et al. 2021 §5.1) and gradient clipping at norm 1, minibatches of
    16 chorales; each model ends with the weights of its epoch of lowest
    loss on the validation split of the data set (the paper's early
    stopping on the validation set, here within a fixed budget). A "repeat
    the previous frame" row gives the trivial baseline.

    Budgets: ``quick`` 48 units, 60 epochs, URNN tape 5 for 10 epochs (about
    40 s on two idle cores); ``full`` 100 units, 150 epochs, tape 10 for 40
    epochs (measured with one thread 0.12 s per epoch for the LMN and the RNN
    at 48 units, about twice that at 100 units, the LSTM about twice the
    LMN: about 4 minutes in all). Short budgets leave the models well below
    the paper's 31 to 34%.

    With ``data_dir`` holding ``music/JSB Chorales.pickle`` (the pickle of
    Boulanger-Lewandowski et al. 2012, the paper's data), that set and its
    split replace the music21 stand-in.
    """
    sizes = sizes_for(_SIZES, preset)
    result = ExperimentResult("chorales")
    path = locate("chorales", data_dir)
    if path is not None:
        data = load_polyphonic_music(path)
    else:
        data = load_bach_chorales(max_chorales=sizes["max_chorales"])
    result.data = data_note(
        "chorales", data_dir, path, "the Bach chorales of music21's corpus"
    )
    X, y = data.X_train, data.y_train
    X_test, y_test = data.X_test, data.y_test
    log(f"{len(X)} training / {len(X_test)} test chorales")
    h, epochs = sizes["hidden"], sizes["epochs"]
    models, controlled, reason = _models(sizes, seed)
    if not sizes["controls"]:
        controlled = {}
    acc: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    for name, est in {**models, **controlled}.items():
        paper = _PAPER.get(name, "(controlled run: not the paper's set-up)")
        est, _ = fit_timed(est, X, y, log, name, X_val=data.X_valid, y_val=data.y_valid)
        if est is None:
            acc[name] = math.nan
            task, metric = "JSB chorales, next step (test)", "frame-level accuracy (%)"
            result.rows.append(Row(task, name, metric, math.nan, paper, DIVERGED))
            continue
        at_half = float(est.score(X_test, y_test))
        acc[name], threshold = _tuned_accuracy(
            est, data.X_valid, data.y_valid, X_test, y_test
        )
        if name in models:
            curves[name] = list(est.validation_loss_curve_ or [])
        log(
            f"{name}: test frame-level accuracy {acc[name]:.4f} at threshold "
            f"{threshold} ({at_half:.4f} at 0.5)"
        )
        result.rows.append(
            Row(
                "JSB chorales, next step (test)",
                name,
                "frame-level accuracy (%)",
                100 * acc[name],
                paper,
                f"{h} units, {kept_epoch(est)}; decision threshold {threshold} "
                f"(best on the validation split; {100 * at_half:.2f}% at 0.5)",
            )
        )
    result.rows.append(
        Row(
            "JSB chorales, next step (test)",
            "repeat the previous frame",
            "frame-level accuracy (%)",
            100 * float(frame_level_accuracy(y_test, X_test)),
            "",
            "trivial baseline",
        )
    )
    control_text = "".join(
        f"; controlled run {k}: {100 * acc[k]:.2f}%" for k in controlled
    )
    acc = {k: v for k, v in acc.items() if k in models}
    smaller = (
        ""
        if preset == "full"
        else f"{h} units, {epochs} epochs (full preset: 100 units, 150 epochs)"
    )
    result.notes += [
        "Selection: the weights of the epoch of lowest validation loss on the "
        "data set's validation split; the decision threshold of the reported "
        "frame-level accuracy is the best of 0.05, 0.10, ..., 0.50 on the "
        "same validation split (the accuracy at 0.5 is in each row's note).",
        "Paper's settings: Adam with learning rate 1e-3; the binary 88-key "
        "frames as inputs, not standardized (the library's default "
        "standardize=True is switched off).",
        f"Deviation: {epochs} epochs at most (the paper: early stopping "
        "without a stated budget); the unrolled pretraining runs "
        f"{sizes['pre_epochs']} epochs at learning rate {sizes['pre_lr']:g} "
        "(its budget is not stated).",
        "Not stated in the paper, set here: L2 penalty 1e-5, batches of 16 "
        "chorales, gradient clipping at norm 1.",
        (
            "Controlled runs (rows marked so, not in the verdicts), same budget: "
            "the LMN and the RNN on standardized inputs (the library default, "
            "used by earlier runs of this experiment, where the LMN trailed the "
            "RNN), and the pretrained LMN at learning rate "
            f"{_CONTROL_LR:g} instead of the paper's 1e-3 (it kept an early "
            "epoch in earlier runs)."
            if controlled
            else "Controlled runs (standardized inputs, a lower learning rate): "
            "only in the full preset."
        ),
    ]
    if preset == "full":
        result.notes.append(
            "Controlled runs of the pretraining, recorded once (seed 0, "
            "`python -m sklmn.benchmarks bench chorales-pretraining`). The transfer is "
            "faithful: the LAES of the unrolled RNN's hidden sequences keeps "
            "99.87% of their energy in the 100 memory units, and the "
            "transferred memory matrix has spectral radius 0.962 (a lasting "
            "memory, not a 10-step tape). What it transfers is a weaker "
            "model: the unrolled RNN has converged to a training loss of "
            "0.138 (0.139 halfway through its 40 epochs; 0.128 after 150), "
            "and fine-tuning from its start ends at a higher validation loss "
            "than from a random start (0.1168 at epoch 59 against 0.1107 at "
            "epoch 106; test 23.8% against 26.5%). Neither 250 memory units "
            "(in the paper's grid: pretrained 24.5%, LMN 26.2%) nor 150 "
            "epochs of the unrolled RNN (24.6%, validation loss 0.1169) "
            "closes the gap. Not explained: the paper chose each model's "
            "sizes and L2 penalty on the validation set from a grid (its "
            "Table 2), on other chorale files."
        )
    if "pretrained LMN" not in models:
        result.rows.append(
            Row(
                "JSB chorales, next step (test)",
                "pretrained LMN",
                "frame-level accuracy (%)",
                float("nan"),
                _PAPER["pretrained LMN"],
                reason,
            )
        )
        result.claims.append(
            Claim("Pretrained LMN >= LMN (Carta et al. 2021 Table 3)", None, reason)
        )
    else:
        result.claims.append(
            Claim(
                "Unrolled pretraining improves the LMN: pretrained LMN >= LMN "
                "(Carta et al. 2021 Table 3)",
                acc["pretrained LMN"] >= acc["LMN"],
                f"frame-level accuracy at the validation-tuned threshold: "
                f"pretrained {100 * acc['pretrained LMN']:.2f}% vs "
                f"{100 * acc['LMN']:.2f}%" + control_text,
                smaller_than_paper=smaller,
            )
        )
    result.claims.append(
        Claim(
            "LMN >= RNN on the chorales (Carta et al. 2021 Table 3)",
            ordering_holds([acc["LMN"], acc["RNN"]]),
            "frame-level accuracy at the validation-tuned threshold: "
            + ", ".join(f"{k} {100 * v:.2f}%" for k, v in acc.items())
            + control_text,
            smaller_than_paper=smaller,
        )
    )
    path = plot_curves(
        output_dir / "chorales_validation.png",
        curves,
        ylabel="validation loss (binary cross-entropy per key)",
        title="JSB chorales, validation split (selects the kept epoch)",
    )
    if path is not None:
        result.plots.append(path)
    return result
