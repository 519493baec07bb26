"""Copy task: LMN vs LSTM vs tanh RNN (Carta et al. 2020b §5.1, Table 1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..datasets import make_copy_task
from ..estimators import LMNClassifier, RNNClassifier
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

# S = 10 symbols from K = 8 classes, as in Carta et al. 2020b §5.1.
# ``runs``: (T, training sequences, epochs). 'full' has the T of Table 1
# (100 and 500); 'quick' uses T = 30 to fit its budget. ``control_at``: the T
# at which the controlled run (the LMN with a truncated gradient) is trained.
_SIZES = {
    "test": {"runs": [(5, 64, 1)], "n_test": 32, "hidden": 8, "control_at": 5},
    "quick": {
        "runs": [(30, 2000, 25)],
        "n_test": 500,
        "hidden": 64,
        "control_at": None,
    },
    "full": {
        "runs": [(100, 4000, 50), (500, 2000, 40)],
        "n_test": 1000,
        "hidden": 64,
        "control_at": 500,
    },
}
#: The controlled run: the experiment's LMN with the gradient from ``h_t`` to
#: ``m_{t-1}`` cut, which Carta et al. 2020b §2 name as the condition for a
#: constant gradient through an orthogonal memory (their experiments use the
#: full gradient).
_CONTROL = "LMN, truncated gradient"
_PAPER = {
    ("LMN", 100): "100",
    ("LMN", 500): "100",
    ("LSTM", 100): "99.7",
    ("LSTM", 500): "99.4",
    ("tanh RNN", 100): "fails",
    ("tanh RNN", 500): "fails",
}
_N_SYMBOLS, _N_CLASSES = 10, 8


def _every(values, holds) -> bool:
    """Whether ``holds`` is true of every value, each measured: a diverged
    fit (NaN) makes a claim fail whatever its place among the delays
    (``min``/``max`` skip a NaN that is not first)."""
    return bool(values) and all(not math.isnan(v) and holds(v) for v in values)


def _models(hidden: int, epochs: int, seed: int) -> dict:
    common = dict(
        target="timestep",
        max_iter=epochs,
        batch_size=64,
        learning_rate_init=1e-3,
        # a separate validation set; the weights of the epoch of lowest
        # validation loss are kept, within a fixed budget
        early_stopping=True,
        n_iter_no_change=10 * epochs,
        tol=0.0,
        random_state=seed,
    )
    return {
        # Carta et al. 2020b §5.1 trains the LMN with an orthogonal memory matrix
        "LMN": pinned(
            LMNClassifier,
            hidden_size=hidden,
            memory_size=hidden,
            memory_matrix="orthogonal",
            **common,
        ),
        "LSTM": pinned(RNNClassifier, cell="lstm", hidden_size=hidden, **common),
        "tanh RNN": pinned(RNNClassifier, cell="elman", hidden_size=hidden, **common),
        _CONTROL: pinned(
            LMNClassifier,
            hidden_size=hidden,
            memory_size=hidden,
            memory_matrix="orthogonal",
            truncate_gradient=True,
            **common,
        ),
    }


def _gradient_reach(n_features: int, hidden: int, X, seed: int) -> dict:
    """How strongly the copied steps' outputs depend on the first inputs.

    A freshly initialized LMN of the experiment's configuration (``hidden``
    units, orthogonal memory; torch seeded with ``seed``, not trained), on
    the sequences ``X`` as given: the norm of the gradient of the summed
    outputs of the last S steps with respect to the first S inputs, with
    the full gradient and with the gradient from ``h_t`` to ``m_{t-1}``
    cut, the spectral radius of the linearized memory map ``W_mm + W_hm
    W_mh`` and the mean norm of the final memory state. The experiment
    passes the raw one-hot steps; the estimators standardize them, which
    scales the norms but keeps the contrast (standardized inputs, seed 0:
    the full gradient grows from 601 at T = 100 to 3 810 at T = 500, the
    cut one goes from 100 to 67).
    """
    import torch

    from ..nn import LMN
    from ..nn.parametrizations import spectral_radius

    S = _N_SYMBOLS
    x = torch.as_tensor(np.asarray(X), dtype=torch.float32)
    out = {}
    for truncate in (False, True):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = LMN(
                n_features,
                hidden,
                hidden,
                memory_matrix="orthogonal",
                truncate_gradient=truncate,
            )
        xg = x.clone().requires_grad_(True)
        memory = net(xg)[0]
        (grad,) = torch.autograd.grad(memory[:, -S:].sum(), xg)
        out["truncated" if truncate else "full"] = float(grad[:, :S].norm())
        if not truncate:
            layer = net.layers[0]
            with torch.no_grad():
                linear_map = layer.weight_mm + layer.weight_hm @ layer.weight_mh
                out["radius"] = float(spectral_radius(linear_map))
                out["memory_norm"] = float(memory[:, -1].norm(dim=1).mean())
    return out


@single_threaded
def copy_task(preset: str, output_dir: Path, log, *, seed: int = 0) -> ExperimentResult:
    """Train the three models on the copy task and score the copied symbols.

    Per-step targets (``target='timestep'``); the score is the accuracy on the
    last S steps, where the S input symbols must be reproduced (a memoryless
    model scores 1/K = 0.125 there at best). The LMN uses an orthogonal memory
    matrix (``memory_matrix='orthogonal'``), Adam with learning rate 1e-3 and
    minibatches of 64; all models have 64 hidden units and a fixed epoch
    budget, and the full gradient (as the paper's experiments).

    A controlled run (``full`` at T = 500, ``test``) trains the same LMN with
    the gradient from ``h_t`` to ``m_{t-1}`` cut (``truncate_gradient=True``;
    the paper names this cut as the condition for a constant gradient
    through the orthogonal memory). The LMN claim's detail also gives, for
    a freshly initialized LMN of the experiment's configuration, how
    strongly the copied steps' outputs depend on the first inputs with
    either gradient (:func:`_gradient_reach`).

    Budgets: ``quick`` T = 30, 2000 sequences, 25 epochs (about 20 s on two
    idle cores); ``full`` T = 100 with 4000 sequences for 50 epochs and
    T = 500 with 2000 sequences for 40 epochs (measured with one thread at
    T = 500: 9.5e-6 s per sequence step for the LMN, 4.7e-6 for the LSTM,
    1.7e-6 for the RNN, so about 6 minutes at T = 100 and 18 minutes at
    T = 500 with the controlled run, 24 minutes in all). The paper trains
    for many more iterations; with this budget the LSTM may not have left
    the plateau yet, which the table reports as is.
    """
    sizes = sizes_for(_SIZES, preset)
    result = ExperimentResult("copy-task")
    curves: dict[str, list[float]] = {}
    accs: dict[tuple[str, int], float] = {}
    S = _N_SYMBOLS
    delays = [delay for delay, _, _ in sizes["runs"]]
    valid_curves: dict[tuple[str, int], list[float]] = {}
    reach: dict[int, dict] = {}
    for delay, n_train, epochs in sizes["runs"]:
        X, y = make_copy_task(
            n_train,
            n_symbols=S,
            delay=delay,
            n_classes=_N_CLASSES,
            random_state=0,
        )
        X_test, y_test = make_copy_task(
            sizes["n_test"],
            n_symbols=S,
            delay=delay,
            n_classes=_N_CLASSES,
            random_state=1,
        )
        X_val, y_val = make_copy_task(
            sizes["n_test"],
            n_symbols=S,
            delay=delay,
            n_classes=_N_CLASSES,
            random_state=2,
        )
        reach[delay] = _gradient_reach(X[0].shape[1], sizes["hidden"], X[:64], seed)
        for name, est in _models(sizes["hidden"], epochs, seed).items():
            if name == _CONTROL and delay != sizes["control_at"]:
                continue
            task = f"copy task T={delay}, S={S}, K={_N_CLASSES} (test)"
            if name == _CONTROL:
                paper = "(controlled run: not the paper's set-up)"
            else:  # the paper reports T = 100 and 500 only: quote T = 100 otherwise
                paper = _PAPER.get((name, delay), f"{_PAPER[name, 100]} (at T=100)")
            est, _ = fit_timed(
                est, X, y, log, f"{name} (T={delay})", X_val=X_val, y_val=y_val
            )
            if est is None:
                accs[name, delay] = math.nan
                metric = "accuracy on the last S steps (%)"
                result.rows.append(Row(task, name, metric, math.nan, paper, DIVERGED))
                continue
            pred = np.asarray(est.predict(X_test))
            acc = float(np.mean(pred[:, -S:] == y_test[:, -S:]))
            accs[name, delay] = acc
            curves[f"{name} (T={delay})"] = list(est.loss_curve_)
            valid_curves[name, delay] = list(est.validation_loss_curve_ or [])
            log(f"{name} (T={delay}): accuracy on the copied symbols {acc:.4f}")
            result.rows.append(
                Row(
                    task,
                    name,
                    "accuracy on the last S steps (%)",
                    100 * acc,
                    paper,
                    f"{n_train} sequences; " + kept_epoch(est),
                )
            )
        result.rows.append(
            Row(
                f"copy task T={delay}, S={S}, K={_N_CLASSES} (test)",
                "memoryless baseline",
                "accuracy on the last S steps (%)",
                100.0 / _N_CLASSES,
                "12.5",
                "1/K",
            )
        )
    chance = 1.0 / _N_CLASSES
    lmn = [accs["LMN", d] for d in delays]
    rnn = [accs["tanh RNN", d] for d in delays]
    lstm = [accs["LSTM", d] for d in delays]
    at_t = ", ".join(f"T = {d}" for d in delays)
    smaller = "" if set(delays) >= {100, 500} else f"{at_t}; the paper: T = 100 and 500"

    def pct(values):
        return ", ".join(f"{100 * a:.1f}%" for a in values)

    def trend(name):
        # the learning curve where the budget is short of the paper's: the
        # validation loss per step at the first, middle and last epoch, next
        # to the memoryless solution's (uniform over K on the last S steps)
        parts = []
        for d in delays:
            c = valid_curves.get((name, d), [])
            if not c:
                continue
            memoryless = S * math.log(_N_CLASSES) / (d + 2 * S)
            parts.append(
                f"T = {d}: {c[0]:.3g} -> {c[len(c) // 2]:.3g} -> {c[-1]:.3g} "
                f"(memoryless solution {memoryless:.3g})"
            )
        return (
            "; validation loss per step at the first, middle and last epoch: "
            + ", ".join(parts)
            if parts
            else ""
        )

    def why():
        # the controlled run and the gradient at initialization: what keeps
        # the full-gradient LMN on the plateau at long delays
        parts = [
            f"{_CONTROL} {100 * accs[_CONTROL, d]:.1f}% at T = {d}"
            for d in delays
            if (_CONTROL, d) in accs
        ]
        parts += [
            f"at initialization, gradient norm of the copied steps' outputs "
            f"w.r.t. the first S (raw one-hot) inputs at T = {d}: "
            f"{r['full']:.3g} full, "
            f"{r['truncated']:.3g} truncated (linearized memory map radius "
            f"{r['radius']:.2f}, final memory norm {r['memory_norm']:.3g})"
            for d, r in reach.items()
        ]
        return "; " + "; ".join(parts) if parts else ""

    result.claims.append(
        Claim(
            "The LMN solves the copy task (>= 95% of the copied symbols) "
            "(Carta et al. 2020b Table 1)",
            _every(lmn, lambda a: a >= 0.95),
            f"LMN accuracy {pct(lmn)} at {at_t}" + trend("LMN") + why(),
            smaller_than_paper=smaller,
        )
    )
    result.claims.append(
        Claim(
            "The tanh RNN fails the copy task (<= 1/K + 5 points: no better "
            "than memoryless) (Carta et al. 2020b Table 1)",
            _every(rnn, lambda a: a <= chance + 0.05),
            f"tanh RNN accuracy {pct(rnn)} at {at_t}; 1/K = {100 * chance:.1f}%",
            smaller_than_paper=smaller,
        )
    )
    result.claims.append(
        Claim(
            "The LSTM beats the memoryless baseline (>= 1/K + 5 points) "
            "(Carta et al. 2020b §5.1: it beats it but does not solve the task "
            "optimally)",
            _every(lstm, lambda a: a >= chance + 0.05),
            f"LSTM accuracy {pct(lstm)} at {at_t} after "
            f"{[e for _, _, e in sizes['runs']]} epochs; the paper trains "
            "for many more iterations" + trend("LSTM"),
            smaller_than_paper=smaller,
        )
    )
    result.notes += [
        "Selection: the weights of the epoch of lowest loss on a separate "
        "validation set (as many sequences as the test set), within a fixed "
        "epoch budget; accuracy on the last S steps only.",
        "Deviation: budget. The paper trains 10 000 batches of 64 with 100 "
        f"units; here {sizes['hidden']} units and "
        + ", ".join(
            f"{n * e // 64} batches of 64 at T = {d}" for d, n, e in sizes["runs"]
        )
        + " (the CPU budget).",
    ]
    if preset == "full":
        result.notes.append(
            "Controlled runs, recorded once "
            "(`python -m sklmn.benchmarks bench copy-budget`): with the full gradient "
            "the LMN stays on the memoryless plateau with 4x the budget (seed 0, "
            "160 epochs, 5000 batches of 64, half the paper's: validation "
            "loss 0.0401 from epoch 40 to 160, 12.4% of the copied symbols), "
            "with raw one-hot inputs (`standardize=False`, 40 epochs: 12.7%; "
            "the LSTM 11.2%) and with a stable start (a free memory matrix, "
            "the linearized memory map scaled to radius 1, 40 epochs: 12.7%);"
            " the LSTM with 3x the budget (seed 0, 120 epochs, 3840 batches) "
            "stays there too (12.5%, validation loss 0.0400), while at T = "
            "100 the paper's budget lifts it off the plateau (seed 0, 160 "
            "epochs of 4000 sequences, 10 080 batches: 30.0% of the copied "
            "symbols, validation loss 0.138 against the plateau's 0.173 and "
            "still falling; 18% at the preset's 50 epochs), and so does a "
            "forget-gate bias of 5 (the papers' value on generation; the copy"
            " task's is not stated; the experiment pins 1): 27.2% at T = 100 "
            "in the preset's 50 epochs, but 12.3% at T = 500 in its 40 (seed "
            "0). With the gradient from `h_t` to `m_{t-1}` cut (the "
            "controlled row) the LMN leaves the plateau: 90.2% (seed 0) and "
            "75.8% (seed 1) after 120 epochs (3840 batches; validation loss "
            "down to about 0.007 and 0.018 against the plateau's 0.040, with "
            "spikes), and with the paper's budget it solves the task or "
            "nearly: 96.7%, 94.1% and 98.1% (seeds 0, 1, 2; 320 epochs, 10 "
            "240 batches; validation loss down to 0.0034, 0.0055 and 0.0012; "
            "20-23 minutes each). What keeps the full-gradient LMN on the "
            "plateau at T = 500 is the gradient through its hidden layer: the"
            " orthogonal memory plus the feedback `W_hm W_mh` makes a "
            "linearized memory map of radius about 1.1 at initialization, and"
            " the copied steps' gradient with respect to the first inputs "
            "grows with T (full) instead of staying constant (truncated; the "
            "claim's detail gives both). The paper reports the full gradient "
            "(its §2 names the cut as the condition for a constant gradient) "
            "with 100 units and a learning rate and a soft orthogonality "
            "penalty chosen on a validation set; which of these lets its "
            "full-gradient LMN reach 100% at T = 500 is not measured here."
        )
    path = plot_curves(
        output_dir / "copy_task_loss.png",
        curves,
        ylabel="training cross-entropy per step",
        title="Copy task: training loss",
    )
    if path is not None:
        result.plots.append(path)
    return result
