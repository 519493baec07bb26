"""Fine-tuning the memory, in hindsight: the test accuracy of every epoch, and
what one optimizer step on each parameter group does to the LAES start.

Usage::

    python -m sklmn.benchmarks bench memory-hindsight curves \\
        --models lmn "lmn:memory_matrix=schur,memory_lr_scale=0.01" \\
        --datasets ArrowHead BasicMotions ItalyPowerDemand --seeds 0 1 \\
        --epochs 150 --out curves.jsonl
    python -m sklmn.benchmarks bench memory-hindsight step \\
        --models "lmn:memory_matrix=schur" lmn --datasets ArrowHead

``curves``: each model (a time-series suite spec, ``name:param=value,...``)
is fitted for ``--epochs`` epochs with no stopping rule; the network is
copied when training begins (the start, after any pretraining) and after
every epoch, and every copy is scored on the test split afterwards. Prints,
per fit, the start's accuracy, the best epoch in hindsight, the accuracy of
the weights the estimator's own rule would keep (the lowest training loss),
the last epoch's, and the loss spikes (epoch loss above twice the minimum
of all earlier ones); ``--out`` appends one JSON line per fit with the
curves.

``step``: from the start, four epochs in which only one parameter group
trains (the others frozen), for each group: the training loss per epoch
shows which group's steps leave the start's basin.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import warnings

import numpy as np
import torch
from skorch.callbacks import Callback

from .._timeseries.datasets import DATASETS, _dataset_info
from .._timeseries.models import model_registry_for, parse_model_spec
from .._timeseries.runner import count_loss_spikes

#: parameter groups of ``step`` (substrings of parameter names)
GROUPS = {
    "all": ("",),
    "readout": ("readout",),
    "input (W_xh, b_h)": ("weight_xh", "bias_h"),
    "W_hm": ("weight_hm",),
    "feedback W_mh": ("weight_mh",),
    "memory W_mm (free)": ("weight_mm",),
    "Schur eigenvalues": ("memory.eigen",),
    "Schur block shapes": ("memory.skew",),
    "Schur upper part": ("memory.upper",),
}


class _Snapshots(Callback):
    def on_train_begin(self, net, **kwargs):
        self.states_ = [copy.deepcopy(net.module_.state_dict())]

    def on_epoch_end(self, net, **kwargs):
        self.states_.append(copy.deepcopy(net.module_.state_dict()))


class _Only(Callback):
    def __init__(self, keys):
        self.keys = keys

    def on_train_begin(self, net, **kwargs):
        for name, param in net.module_.named_parameters():
            if not any(k in name for k in self.keys):
                param.requires_grad_(False)


def _estimator(spec, seed, info, epochs, callbacks):
    base, overrides, _ = parse_model_spec(spec)
    est = model_registry_for([spec])[base]["classification"](seed, info)
    est = est[0] if isinstance(est, tuple) else est
    est.set_params(**overrides)
    return est.set_params(
        max_iter=epochs,
        early_stopping=False,
        n_iter_no_change=10**6,
        callbacks=list(callbacks),
    )


def _load(name):
    data = DATASETS[name].load()
    return data, _dataset_info(name, "classification", data)


def _curves(args) -> None:
    for ds in args.datasets:
        (X_train, X_test, y_train, y_test), info = _load(ds)
        y_test = np.asarray(y_test)
        for spec in args.models:
            for seed in args.seeds:
                est = _estimator(spec, seed, info, args.epochs, [("snap", _Snapshots())])
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X_train, y_train)
                seconds = time.perf_counter() - t0
                kept = float(np.mean(est.predict(X_test) == y_test))
                states = dict(est.net_.callbacks_)["snap"].states_
                acc = []
                for state in states:
                    est.net_.module_.load_state_dict(state)
                    acc.append(float(np.mean(est.predict(X_test) == y_test)))
                loss = [float(v) for v in est.loss_curve_]
                rec = {
                    "dataset": ds, "model": spec, "seed": seed, "accuracy": acc,
                    "loss": loss, "kept": kept, "spikes": count_loss_spikes(loss),
                    "fit_seconds": round(seconds, 2),
                }
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                a = np.asarray(acc)
                print(
                    f"| {ds} | {spec} | {seed} | {a[0]:.3f} | {a.max():.3f} "
                    f"(epoch {int(a.argmax())}) | {kept:.3f} | {a[-1]:.3f} | "
                    f"{rec['spikes']} |",
                    flush=True,
                )


def _step(args) -> None:
    for ds in args.datasets:
        (X_train, _, y_train, _), info = _load(ds)
        for spec in args.models:
            for label, keys in GROUPS.items():
                est = _estimator(spec, 0, info, 4, [("only", _Only(keys))])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        est.fit(X_train, y_train)
                    except RuntimeError:  # no parameter of this group
                        continue
                curve = ", ".join(f"{v:.3f}" for v in est.loss_curve_)
                print(f"| {ds} | {spec} | {label} | {curve} |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["curves", "step"])
    parser.add_argument("--models", nargs="+", default=["lmn"])
    parser.add_argument(
        "--datasets", nargs="+", default=["ArrowHead", "BasicMotions", "ItalyPowerDemand"]
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.what == "curves":
        print("| dataset | model | seed | start | best in hindsight | kept | last | spikes |")
        print("|---|---|---|---|---|---|---|---|")
        _curves(args)
    else:
        print("| dataset | model | trained group | training loss per epoch (start first) |")
        print("|---|---|---|---|")
        _step(args)
    return 0
