"""Check every sequence estimator on a CUDA device.

For each estimator (the LMN, multi-scale LMN, ENRNN and every ``RNN*`` cell,
classifiers and regressors, with the pretrainers that their defaults or the
papers use) on small generated data:

1. ``fit`` with ``device='cuda'``: the parameters live on the GPU, the fit
   ends with finite predictions;
2. the fitted network moved to the CPU predicts what it predicted on the GPU
   (largest difference of the predicted probabilities / values, float32);
3. ``pickle`` and :func:`sklmn.persistence.save` / ``load`` round trips
   predict the same;
4. the same estimator fitted on the CPU (same seed): its test score next to
   the GPU fit's (the two differ by float rounding along the training, not
   by more than the usual seed-to-seed spread);
5. fit time on a larger set (2000 sequences, 200 steps, 16 features, 5
   epochs): CPU against GPU, LMN against torch's cuDNN LSTM.

Usage::

    python -m sklmn.benchmarks bench check-gpu [--quick]

On a machine without CUDA it says so and exits with status 0. It exits with
status 1 when a check fails. Results are recorded in
``benchmarks/results_gpu.md``.
"""

from __future__ import annotations

import argparse
import copy
import os
import pickle
import sys
import tempfile
import time
import traceback

import numpy as np
import torch

TOL = 1e-4  # float32 forward on two devices: different kernels, same math
# torch's cuDNN RNN kernels (LSTM, GRU, Elman cells) compute in TF32 on
# Ampere and later GPUs unless torch.backends.cudnn.allow_tf32 is False: a
# 10-bit mantissa, so their outputs differ from the CPU's by up to ~1e-3
TOL_TF32 = 3e-3
CUDNN_CELLS = ("'lstm'", "'gru'", "'elman'")


def make_data(n: int, length: int, n_features: int, seed: int):
    """Sequences whose class is the sign of the sum of feature 0 and whose
    regression target is that sum (scaled to unit variance)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, length, n_features)).astype(np.float32)
    target = X[:, :, 0].sum(axis=1) / np.sqrt(length)
    return X, (target > 0).astype(int), target


def estimators(quick: bool):
    """``(name, task, factory(device))`` of the checked configurations."""
    import sklmn as sk

    it = 5 if quick else 30
    small = {"hidden_size": 16, "max_iter": it}
    out = [
        (
            "LMNClassifier",
            "clf",
            lambda d: sk.LMNClassifier(**small, memory_size=16, device=d),
        ),
        (
            "LMNClassifier(pooling='last+mean')",
            "clf",
            lambda d: sk.LMNClassifier(
                **small, memory_size=16, pooling="last+mean", device=d
            ),
        ),
        (
            "LMNClassifier(pretrainer=None, bidirectional)",
            "clf",
            lambda d: sk.LMNClassifier(
                **small, memory_size=16, pretrainer=None, bidirectional=True, device=d
            ),
        ),
        (
            "LMNClassifier(UnrolledPretrainer)",
            "clf",
            lambda d: sk.LMNClassifier(
                **small,
                memory_size=16,
                pretrainer=sk.UnrolledPretrainer(max_iter=it),
                device=d,
            ),
        ),
        (
            "LMNClassifier(fine_tuning='residual')",
            "clf",
            lambda d: sk.LMNClassifier(
                **small, memory_size=16, fine_tuning="residual", device=d
            ),
        ),
        (
            "LMNClassifier(fine_tuning='projection')",
            "clf",
            lambda d: sk.LMNClassifier(
                **small, memory_size=16, fine_tuning="projection", device=d
            ),
        ),
        (
            "LMNClassifier(pretrainer=None, memory_ring=(0.5, 0.999, pi))",
            "clf",
            lambda d: sk.LMNClassifier(
                **small,
                memory_size=16,
                pretrainer=None,
                memory_ring=(0.5, 0.999, np.pi),
                device=d,
            ),
        ),
        (
            "LMNClassifier(input_expansion=8)",
            "clf",
            lambda d: sk.LMNClassifier(
                **small, memory_size=16, input_expansion=8, device=d
            ),
        ),
        (
            "MultiScaleLMNClassifier",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(**small, memory_size=4, device=d),
        ),
        (
            "MultiScaleLMNClassifier(pretrainer=None)",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(
                **small, memory_size=4, pretrainer=None, device=d
            ),
        ),
        (
            "MultiScaleLMNClassifier(fine_tuning='residual')",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(
                **small, memory_size=4, fine_tuning="residual", device=d
            ),
        ),
        (
            "MultiScaleLMNClassifier(fine_tuning='projection')",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(
                **small, memory_size=4, fine_tuning="projection", device=d
            ),
        ),
        (
            "MultiScaleLMNClassifier(input_expansion=8)",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(
                **small, memory_size=4, input_expansion=8, device=d
            ),
        ),
        (
            "MultiScaleLMNClassifier(IncrementalTraining)",
            "clf",
            lambda d: sk.MultiScaleLMNClassifier(
                **small,
                memory_size=4,
                incremental=sk.IncrementalTraining(epochs_per_module=2),
                device=d,
            ),
        ),
        (
            "ENRNNClassifier",
            "clf",
            lambda d: sk.ENRNNClassifier(max_iter=it, device=d),
        ),
        (
            "LMNRegressor",
            "reg",
            lambda d: sk.LMNRegressor(**small, memory_size=16, device=d),
        ),
        (
            "MultiScaleLMNRegressor",
            "reg",
            lambda d: sk.MultiScaleLMNRegressor(**small, memory_size=4, device=d),
        ),
        (
            "ENRNNRegressor",
            "reg",
            lambda d: sk.ENRNNRegressor(max_iter=it, device=d),
        ),
        (
            "RNNRegressor(cell='lstm')",
            "reg",
            lambda d: sk.RNNRegressor(**small, cell="lstm", device=d),
        ),
    ]
    for cell in ("lstm", "gru", "elman", "clockwork", "unrolled"):
        out.append(
            (
                f"RNNClassifier(cell={cell!r})",
                "clf",
                lambda d, c=cell: sk.RNNClassifier(**small, cell=c, device=d),
            )
        )
    return out


def outputs(est, X, task):
    return est.predict_proba(X) if task == "clf" else est.predict(X)


def on_cpu(est):
    """A copy of the fitted estimator whose network lives on the CPU."""
    c = copy.deepcopy(est)
    c.net_.module_.to("cpu")
    c.net_.device = "cpu"
    c.set_params(device="cpu")
    return c


def check_one(name, task, factory, data, seed):
    from sklmn import persistence

    X_tr, X_te, y_tr, y_te = data[task]
    row = {"name": name}
    t0 = time.perf_counter()
    gpu = factory("cuda").set_params(random_state=seed).fit(X_tr, y_tr)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    row["fit_s_gpu"] = time.perf_counter() - t0
    devices = {p.device.type for p in gpu.net_.module_.parameters()}
    row["params_on"] = ",".join(sorted(devices))
    out_gpu = outputs(gpu, X_te, task)
    row["finite"] = bool(np.isfinite(out_gpu).all())
    row["cpu_copy_diff"] = float(
        np.abs(outputs(on_cpu(gpu), X_te, task) - out_gpu).max()
    )
    row["pickle_diff"] = float(
        np.abs(outputs(pickle.loads(pickle.dumps(gpu)), X_te, task) - out_gpu).max()
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.sklmn")
        persistence.save(gpu, path)
        row["save_load_diff"] = float(
            np.abs(outputs(persistence.load(path), X_te, task) - out_gpu).max()
        )
    t0 = time.perf_counter()
    cpu = factory("cpu").set_params(random_state=seed).fit(X_tr, y_tr)
    row["fit_s_cpu"] = time.perf_counter() - t0
    row["score_gpu"] = gpu.score(X_te, y_te)
    row["score_cpu"] = cpu.score(X_te, y_te)
    row["n_iter"] = f"{gpu.n_iter_}/{cpu.n_iter_}"
    tf32 = torch.backends.cudnn.allow_tf32 and any(c in name for c in CUDNN_CELLS)
    row["tol"] = TOL_TF32 if tf32 else TOL
    row["ok"] = (
        row["params_on"] == "cuda"
        and row["finite"]
        and row["cpu_copy_diff"] < row["tol"]
        and max(row["pickle_diff"], row["save_load_diff"]) < TOL
    )
    return row


def speed(n_epochs: int, threads: int):
    """Fit seconds per epoch, 2000 x 200 x 16, CPU vs GPU."""
    from sklmn import LMNClassifier, RNNClassifier

    X, y, _ = make_data(2000, 200, 16, seed=1)
    rows = []
    configs = [
        (
            "LMNClassifier(pretrainer=None), 128/128",
            lambda d: LMNClassifier(
                hidden_size=128, memory_size=128, pretrainer=None, device=d
            ),
        ),
        (
            "LMNClassifier(pretrainer=None, memory_ring=None), 128/128",
            lambda d: LMNClassifier(
                hidden_size=128,
                memory_size=128,
                pretrainer=None,
                memory_ring=None,
                device=d,
            ),
        ),
        (
            "LMNClassifier(pretrainer=None, memory_matrix='free'), 128/128",
            lambda d: LMNClassifier(
                hidden_size=128,
                memory_size=128,
                pretrainer=None,
                memory_matrix="free",
                device=d,
            ),
        ),
        (
            "LMNClassifier() (LAES start), 128/128",
            lambda d: LMNClassifier(hidden_size=128, memory_size=128, device=d),
        ),
        (
            "RNNClassifier(cell='lstm'), 128",
            lambda d: RNNClassifier(hidden_size=128, cell="lstm", device=d),
        ),
    ]
    for name, factory in configs:
        times = {}
        for dev in ("cpu", "cuda"):
            est = factory(dev).set_params(
                max_iter=n_epochs,
                n_iter_no_change=n_epochs + 1,
                batch_size=64,
                random_state=0,
                n_threads=threads,
            )
            t0 = time.perf_counter()
            est.fit(X, y)
            if dev == "cuda":
                torch.cuda.synchronize()
            times[dev] = (time.perf_counter() - t0) / est.n_iter_
        rows.append((name, times["cpu"], times["cuda"]))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 epochs per fit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=8, help="CPU threads (speed)")
    parser.add_argument("--speed-epochs", type=int, default=3)
    parser.add_argument(
        "--no-tf32", action="store_true", help="cuDNN and matmuls in full float32"
    )
    parser.add_argument("--only", default="", help="estimators whose name has this")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: nothing checked")
        return 0
    if args.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    print(
        f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
        f"cuDNN TF32: {torch.backends.cudnn.allow_tf32}"
    )
    Xc, yc, yr = make_data(400, 40, 3, seed=args.seed)
    data = {
        "clf": (Xc[:300], Xc[300:], yc[:300], yc[300:]),
        "reg": (Xc[:300], Xc[300:], yr[:300], yr[300:]),
    }
    failed = 0
    print(
        "\n| estimator | params on | finite | max diff CPU copy | pickle | "
        "save/load | test score GPU / CPU fit | epochs GPU/CPU | fit s GPU / CPU | "
        "tolerance | ok |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, task, factory in estimators(args.quick):
        if args.only not in name:
            continue
        try:
            r = check_one(name, task, factory, data, args.seed)
        except Exception:  # report every failure, then go on
            failed += 1
            print(f"| {name} | FAILED | | | | | | | | | no |")
            traceback.print_exc(file=sys.stdout)
            continue
        failed += not r["ok"]
        print(
            f"| {name} | {r['params_on']} | {r['finite']} | {r['cpu_copy_diff']:.1e} "
            f"| {r['pickle_diff']:.1e} | {r['save_load_diff']:.1e} "
            f"| {r['score_gpu']:.3f} / {r['score_cpu']:.3f} | {r['n_iter']} "
            f"| {r['fit_s_gpu']:.1f} / {r['fit_s_cpu']:.1f} | {r['tol']:.0e} "
            f"| {'yes' if r['ok'] else 'NO'} |",
            flush=True,
        )
    if args.no_speed:
        print(f"\n{failed} check(s) failed")
        return 1 if failed else 0
    print(
        f"\nSpeed: seconds per epoch, 2000 sequences x 200 steps x 16 features, "
        f"batch 64 (CPU: {args.threads} threads)\n"
    )
    print("| estimator | CPU s/epoch | GPU s/epoch | CPU / GPU |")
    print("|---|---|---|---|")
    for name, cpu_s, gpu_s in speed(args.speed_epochs, args.threads):
        print(
            f"| {name} | {cpu_s:.2f} | {gpu_s:.2f} | {cpu_s / gpu_s:.1f} |", flush=True
        )
    print(f"\n{failed} check(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
