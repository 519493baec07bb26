"""Time and peak memory of the LAES solvers against the dense reference.

Usage::

    python -m sklmn.benchmarks bench laes --preset speed  # dense vs gram vs matrix_free
    python -m sklmn.benchmarks bench laes --preset small  # the same, Ξ 18 000 x 960
    python -m sklmn.benchmarks bench laes --preset musedata  # 250k steps, L=4000, a=88
    python -m sklmn.benchmarks bench laes --preset tiny  # smoke run (seconds)

Every solver runs in its own subprocess (``OMP/OPENBLAS/MKL_NUM_THREADS`` and
the FFT threads ``n_jobs`` = ``--threads``, default 2) on the same seeded
synthetic data. The subprocess reports the wall time of
``LAESTransformer.fit`` (after a warm-up fit on 3 sequences), the peak of the
memory that numpy allocates during the fit (``tracemalloc``), the process peak RSS
(``ru_maxrss``, includes the interpreter, the data and the input validation)
read right after the fit, and two errors of the fitted model on its training
data:

* ``proj err``: ``||Ξ - Ξ U Uᵀ||_F^2 / ||Ξ||_F^2``, computed exactly with the
  FFT operator (the quantity a truncated SVD minimizes; equal errors mean the
  solvers found equally good subspaces);
* ``laes err``: :meth:`LAESTransformer.reconstruction_error`, encode-then-decode
  of every prefix.

CPU time is user+system of the fitting process (all its threads): with the CPU
shared by other jobs it shows how much work the fit did. Ratios are to the
first row (``dense`` when it runs) in the same run. The
``musedata`` preset has no feasible dense/Gram reference on the full data
(dense Ξ: 250 000 x 352 000 float64 = 700 GB); it first fits the matrix-free
solver on the full data, then checks its accuracy on a subsample (every
sequence cropped to its first ``--crop`` steps) where the Gram solver is
exact. Synthetic piano rolls: 88 keys, 4-8 voices holding notes for a few
steps and moving by small intervals (binary, sparse, temporally correlated).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

PRESETS = {
    # Ξ ~400 000 x 480 (1.5 GB): many sequences, dense SVD >= 10 s
    "speed": dict(
        kind="gaussian_ar",
        n_seqs=10_000,
        min_len=20,
        max_len=60,
        n_features=8,
        n_components=50,
        solvers=["dense", "gram", "matrix_free"],
    ),
    # Ξ ~18 000 x 960
    "small": dict(
        kind="gaussian_ar",
        n_seqs=450,
        min_len=20,
        max_len=60,
        n_features=16,
        n_components=50,
        solvers=["dense", "gram", "matrix_free"],
    ),
    "musedata": dict(
        kind="piano_roll",
        n_seqs=783,
        total_steps=250_000,
        max_len=4000,
        n_features=88,
        n_components=100,
        solvers=["matrix_free"],
        crop=48,
        crop_solvers=["gram", "matrix_free"],
    ),
    "tiny": dict(
        kind="gaussian_ar",
        n_seqs=40,
        min_len=5,
        max_len=30,
        n_features=4,
        n_components=10,
        solvers=["dense", "gram", "matrix_free"],
    ),
}


def make_data(cfg: dict, seed: int = 0) -> list[np.ndarray]:
    """Seeded synthetic sequences for a preset (list of (T_i, a) arrays)."""
    rng = np.random.default_rng(seed)
    a = cfg["n_features"]
    if cfg["kind"] == "gaussian_ar":
        lengths = rng.integers(cfg["min_len"], cfg["max_len"] + 1, size=cfg["n_seqs"])
        lengths[0] = cfg["max_len"]
        mix = rng.normal(size=(a, a)) / np.sqrt(a)
        out = []
        for l in lengths:
            e = rng.normal(size=(l, a))
            x = np.empty((l, a))
            prev = np.zeros(a)
            for t in range(l):  # AR(1) with decay 0.8 and mixed channels
                prev = 0.8 * prev + e[t]
                x[t] = prev
            out.append(x @ mix)
        return out
    # piano roll: log-normal lengths rescaled to the total, longest = max_len
    n = cfg["n_seqs"]
    lengths = rng.lognormal(np.log(250.0), 0.8, size=n)
    lengths *= (cfg["total_steps"] - cfg["max_len"]) / lengths[1:].sum()
    lengths = np.clip(lengths.astype(int), 10, cfg["max_len"])
    lengths[0] = cfg["max_len"]
    out = []
    for l in lengths:
        roll = np.zeros((l, a))
        n_voices = int(rng.integers(4, 9))
        base = int(rng.integers(30, 50))
        for v in range(n_voices):
            durations = rng.geometric(0.3, size=l)
            seg = np.searchsorted(np.cumsum(durations), np.arange(l), side="right")
            steps = rng.integers(-3, 4, size=seg.max() + 1)
            pitch = np.clip(base + 5 * v + np.cumsum(steps) // 2, 0, a - 1)
            roll[np.arange(l), pitch[seg]] = 1.0
        out.append(roll)
    return out


def _crop(seqs: list[np.ndarray], crop: int) -> list[np.ndarray]:
    return [s[:crop] for s in seqs]


def worker(args: dict) -> dict:
    """Fit one solver and measure it (runs in a fresh subprocess)."""
    import resource
    import tracemalloc

    from sklmn.laes import LAESTransformer, XiOperator, xi_frobenius_sq
    from sklmn.utils.sequences import check_sequences

    cfg = PRESETS[args["preset"]]
    seqs = make_data(cfg, args["seed"])
    if args.get("crop"):
        seqs = _crop(seqs, args["crop"])
    laes = LAESTransformer(
        cfg["n_components"],
        solver=args["solver"],
        n_iter=args["n_iter"],
        random_state=0,
        n_jobs=args["threads"],
    )
    # warm-up on 3 sequences: lazy imports and BLAS/FFT start-up are not solver cost
    warm = laes.get_params()
    LAESTransformer(**{**warm, "n_components": 1}).fit(seqs[:3])
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    laes.fit(seqs)
    fit_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    res = dict(
        solver=laes.solver_,
        fit_s=fit_s,
        cpu_s=cpu_s,
        peak_bytes=peak,
        maxrss_bytes=rss,
        n_steps=laes.n_steps_total_,
        n_columns=laes.components_.shape[1],
    )
    if not args.get("skip_errors"):
        s = check_sequences(seqs)
        norm_sq = xi_frobenius_sq(s.data, s.lengths)
        op = XiOperator(s.data, s.lengths, laes.max_length_, workers=args["threads"])
        del s
        proj = op.matmat(laes.components_.T)
        res["proj_err"] = 1.0 - float((proj**2).sum()) / norm_sq
        res["laes_err"] = laes.reconstruction_error(seqs)
    return res


def run_worker(preset, solver, seed, threads, n_iter, crop=None, skip_errors=False):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    payload = json.dumps(
        dict(
            preset=preset,
            solver=solver,
            seed=seed,
            threads=threads,
            n_iter=n_iter,
            crop=crop,
            skip_errors=skip_errors,
        )
    )
    proc = subprocess.run(
        [
            sys.executable, "-m", "sklmn.benchmarks", "bench", "laes",
            "--worker", payload,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return dict(solver=solver, error=proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict], title: str) -> str:
    lines = [
        f"\n**{title}**\n",
        "| solver | fit (s) | CPU (s) | time ratio | peak numpy (MB) "
        "| peak RSS (MB) | proj err | laes err | proj err / first |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ref = next((r for r in rows if "fit_s" in r), None)
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['solver']} | failed: {r['error']} ||||||||")
            continue
        ratio = ref["fit_s"] / r["fit_s"]
        perr = r.get("proj_err", float("nan"))
        rel = perr / ref.get("proj_err", float("nan"))
        lines.append(
            f"| {r['solver']} | {r['fit_s']:.2f} | {r['cpu_s']:.1f} | {ratio:.1f}x | "
            f"{r['peak_bytes'] / 1e6:.0f} | {r['maxrss_bytes'] / 1e6:.0f} | "
            f"{perr:.5f} | {r.get('laes_err', float('nan')):.5f} | {rel:.4f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="speed")
    parser.add_argument("--solvers", nargs="*", help="override the preset's solvers")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-iter", default="auto", help="power iterations")
    parser.add_argument("--crop", type=int, help="musedata: subsample crop length")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        w = json.loads(args.worker)
        if w["n_iter"] != "auto":
            w["n_iter"] = int(w["n_iter"])
        print(json.dumps(worker(w)))
        return
    cfg = PRESETS[args.preset]
    solvers = args.solvers or cfg["solvers"]
    print(
        f"preset={args.preset} threads={args.threads} n_iter={args.n_iter} "
        f"n_components={cfg['n_components']} cfg={ {k: v for k, v in cfg.items()} }"
    )
    rows = [
        run_worker(args.preset, s, args.seed, args.threads, args.n_iter)
        for s in solvers
    ]
    print(table(rows, f"{args.preset}: full data"), flush=True)
    if "crop" in cfg:
        crop = args.crop or cfg["crop"]
        rows = [
            run_worker(args.preset, s, args.seed, args.threads, args.n_iter, crop)
            for s in cfg["crop_solvers"]
        ]
        print(table(rows, f"{args.preset}: every sequence cropped to {crop} steps"))


if __name__ == "__main__":
    main()
