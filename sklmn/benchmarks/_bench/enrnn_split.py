r"""The ENRNN state split (Helfrich & Ye 2020 Fig. 6) at another T, raw JSON.

The full preset's ``enrnn-split`` experiment trains the ENRNN of n = 160
units split between its long-term and short-term states on the adding
problem at T = 200 (the paper: 750), so that a seed's seven fits fit a CPU
budget. This script runs the same experiment (its sequences, epochs, models
and claims) at the T of ``--length``, for one seed, and writes the record
of that seed (rows with each split's validation curve, claims, set-up
notes, CPU seconds) as JSON, and the plot of the validation curves next to
it. At ``--length 750`` the claims are tested at the paper's T.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench enrnn-split --length 750 \
        --seed 0 --out benchmarks/results_enrnn_split_T750-seed0.json

One torch thread. ``--seed`` sets the models' initialization and batch
order (the sequences are the same on every seed). The records are cited by
the claim registry (``_claims.py``) and ``docs/user_guide/papers.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

import torch

from sklmn import __version__

from .._exp_enrnn import enrnn_split


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=750, help="T (default 750)")
    parser.add_argument("--seed", type=int, default=0, help="the models' seed")
    parser.add_argument(
        "--preset", default="full", choices=("full", "test"),
        help="the experiment's sizes other than T (default full)",
    )  # fmt: skip
    parser.add_argument("--out", default=None, help="JSON file for the raw record")
    args = parser.parse_args(argv)
    if args.length < 2:
        parser.error(f"--length must be >= 2, got {args.length}")
    torch.set_num_threads(1)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = enrnn_split(
            args.preset, Path(tmp), lambda m: print(m, flush=True),
            seed=args.seed, length=args.length,
        )  # fmt: skip
        result.seeds = [args.seed]
        result.cpu_seconds = round(time.process_time() - cpu0, 1)
        result.seconds = round(time.perf_counter() - wall0, 1)
        plots = []
        if args.out:
            for plot in result.plots:
                target = Path(args.out).with_suffix(".png")
                shutil.copyfile(plot, target)
                plots.append(str(target))
    record = {
        "command": "python -m sklmn.benchmarks bench enrnn-split "
        + " ".join(argv if argv is not None else []),
        "settings": {"length": args.length, "seed": args.seed, "preset": args.preset},
        "environment": f"sklmn {__version__}, torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}, one torch thread",
        "result": {**dataclasses.asdict(result), "plots": plots},
    }
    for claim in result.claims:
        verdict = {True: "holds", False: "does not hold"}.get(claim.reproduced, "-")
        print(f"{claim.text}: {verdict} ({claim.detail})", flush=True)
    if args.out:
        with open(args.out, "w") as stream:
            json.dump(record, stream, indent=1, default=str)
            stream.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
