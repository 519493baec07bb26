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
order (the sequences are the same on every seed). ``--merge`` runs nothing:
it merges the records of several seeds (the runner's ``merge_seeds``) into
the Markdown report of ``--report`` and the runner's raw JSON next to it::

    .venv/bin/python -m sklmn.benchmarks bench enrnn-split --merge \
        benchmarks/results_enrnn_split_T750-seed*.json \
        --report benchmarks/results_enrnn_split_T750.md

The records are cited by the claim registry (``_claims.py``) and
``docs/user_guide/papers.md``.
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

from .._exp_common import int_at_least
from .._exp_enrnn import enrnn_split
from .._experiments import FULL_ONLY
from .._runner import _write_json, format_markdown, merge_seeds
from .claim_tables import result_from_record


def _merge(parser, args, argv) -> int:
    """Merge the records of several seeds into one report and its raw JSON."""
    if args.report is None:
        parser.error("--merge needs --report (the Markdown report to write)")
    records = [json.loads(path.read_text()) for path in args.merge]
    settings = {(r["settings"]["length"], r["settings"]["preset"]) for r in records}
    if len(settings) != 1:
        parser.error(f"the records mix lengths or presets: {sorted(settings)}")
    runs = sorted((result_from_record(r["result"]) for r in records),
                  key=lambda r: r.seeds[0])  # fmt: skip
    seeds = [r.seeds[0] for r in runs]
    if len(set(seeds)) != len(seeds):
        parser.error(f"the records repeat a seed: {seeds}")
    ((length, preset),) = settings
    merged = merge_seeds(runs)
    lines = format_markdown([merged], preset, full_only=FULL_ONLY).split("\n")
    commands = "; ".join(f"`{r['command'].strip()}`" for r in records)
    header = (
        f"The enrnn-split experiment at T = {length}, seeds "
        f"{', '.join(map(str, seeds))}, one run per seed ({commands}), merged "
        "with `python -m sklmn.benchmarks bench enrnn-split "
        + " ".join(argv if argv is not None else []) + "` (the runner's "
        "`merge_seeds`; raw records of every seed in the JSON of the same "
        "name). Plots: the first seed's."
    )
    lines[1:2] = ["", header, ""]
    args.report.write_text("\n".join(lines))
    _write_json(args.report.with_suffix(".json"), [merged], {merged.name: runs}, preset)
    print(f"report: {args.report}", flush=True)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=750, help="T (default 750)")
    parser.add_argument("--seed", type=int_at_least(0), default=0,
                        help="the models' seed")  # fmt: skip
    parser.add_argument(
        "--preset", default="full", choices=("full", "test"),
        help="the experiment's sizes other than T (default full)",
    )  # fmt: skip
    parser.add_argument("--out", default=None, help="JSON file for the raw record")
    parser.add_argument("--merge", nargs="+", type=Path, default=None,
                        help="records of several seeds to merge (runs nothing)")
    parser.add_argument("--report", type=Path, default=None,
                        help="with --merge: the Markdown report to write")
    args = parser.parse_args(argv)
    if args.merge:
        return _merge(parser, args, argv)
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
