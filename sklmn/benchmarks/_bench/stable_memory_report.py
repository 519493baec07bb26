"""Markdown tables of ``bench stable-memory`` results (JSON lines).

Usage: python -m sklmn.benchmarks bench stable-memory-report [--compact]
       results.jsonl [variant ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

import numpy as np


def compact(rows, variants):
    """One row per variant: per set 'start → final (spikes; epochs; fit s)',
    the mean final accuracy and the largest radii over all sets."""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["dataset"], r["variant"])].append(r)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    head = " | ".join(datasets)
    print(f"| variant | {head} | mean final | max ρ(W_mm) | max ρ(J(I)) "
          "| max ρ(J(D)) |")
    print("|---" * (len(datasets) + 5) + "|")
    for v in variants:
        cells, finals, radii = [], [], []
        for ds in datasets:
            g = groups.get((ds, v))
            if not g:
                cells.append("")
                continue
            f = lambda k, g=g: np.mean([r[k] for r in g])  # noqa: E731
            cells.append(
                f"{f('start'):.3f} → {f('final'):.3f} "
                f"({sum(r['spikes'] for r in g)}; {f('epochs'):.0f}; "
                f"{f('fit_time'):.0f} s)"
            )
            finals.append(f("final"))
            radii += [r for r in g if "rho_mm_max" in r]
        mean = f"{np.mean(finals):.3f}" if len(finals) == len(datasets) else ""
        rad = [
            f"{max(r[k] for r in radii):.4f}" if radii else ""
            for k in ("rho_mm_max", "rho_I_max", "rho_D_max")
        ]
        print(f"| {v} | {' | '.join(cells)} | {mean} | {' | '.join(rad)} |")


def main(argv=None):
    """Print the tables of the results file (``--compact``: one row per variant)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="the JSON lines of bench stable-memory")
    parser.add_argument(
        "variants", nargs="*", help="variants to show, in this order (default: all)"
    )
    parser.add_argument("--compact", action="store_true", help="one row per variant")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    path, variants = args.path, args.variants
    if args.compact:
        rows = [json.loads(line) for line in open(path)]
        return compact(
            rows, variants or list(dict.fromkeys(r["variant"] for r in rows))
        )
    rows = [json.loads(line) for line in open(path)]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["dataset"], r["variant"])].append(r)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    variants = variants or list(dict.fromkeys(r["variant"] for r in rows))
    print("| set | variant | seeds | start → final | spikes | epochs | fit s "
          "| max ρ(W_mm) | max ρ(J(I)) | max ρ(J(D)) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for v in variants:
        for ds in datasets:
            g = groups.get((ds, v))
            if not g:
                continue
            f = lambda k, g=g: np.mean([r[k] for r in g])  # noqa: E731
            m = lambda k, g=g: (  # noqa: E731
                f"{max(r[k] for r in g):.4f}" if k in g[0] else ""
            )
            print(
                f"| {ds} | {v} | {len(g)} | {f('start'):.3f} → {f('final'):.3f} "
                f"| {sum(r['spikes'] for r in g)} | {f('epochs'):.0f} "
                f"| {f('fit_time'):.1f} | {m('rho_mm_max')} | {m('rho_I_max')} "
                f"| {m('rho_D_max')} |"
            )
    # means over the sets
    print()
    print("| variant | mean start → final (sets with all seeds) |")
    print("|---|---|")
    for v in variants:
        per = [groups[(ds, v)] for ds in datasets if (ds, v) in groups]
        if len(per) < len(datasets):
            continue
        s = np.mean([np.mean([r["start"] for r in g]) for g in per])
        fi = np.mean([np.mean([r["final"] for r in g]) for g in per])
        print(f"| {v} | {s:.3f} → {fi:.3f} |")

