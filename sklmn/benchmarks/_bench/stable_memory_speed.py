"""Forward + backward time of the LMN / MS-LMN with the free memory and the
Schur memory (the library's ``memory_matrix='schur'``, and the prototype's
bounded feedback), one thread, interleaved.

Usage: python -m sklmn.benchmarks bench stable-memory-speed [--rounds 21]

Every variant runs one forward + backward per round, the variants in turn
(so that a change of machine load hits them alike); prints the median over
the rounds in ms and its ratio to the free memory of the same module.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from sklmn.nn import LMN, MultiScaleLMN

from .stable_memory import make_stable_


def _step(net, x, lengths) -> float:
    t0 = time.perf_counter()
    net(x, lengths=lengths)[0].pow(2).mean().backward()
    return time.perf_counter() - t0


def main(argv=None):
    """Print the median forward + backward times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ring = (0.4, 0.99, math.pi)
    print("| batch | variant | median ms | ratio to free |")
    print("|---|---|---|---|")
    for name, (n, T, d) in {
        "36 x 251 x 1 (ArrowHead-like)": (36, 251, 1),
        "40 x 100 x 6 (BasicMotions-like)": (40, 100, 6),
    }.items():
        x = torch.randn(n, T, d)
        lengths = torch.full((n,), T)
        nets = {
            "LMN free": LMN(d, 32, 32),
            "LMN schur": LMN(d, 32, 32, memory_matrix="schur"),
            "LMN schur, bounded feedback (prototype)": make_stable_(
                LMN(d, 32, 32), "bounded", ring, True
            ),
            "MS-LMN free": MultiScaleLMN(d, 48, 12, 4),
            "MS-LMN schur": MultiScaleLMN(d, 48, 12, 4, memory_matrix="schur"),
            "MS-LMN schur, bounded feedback (prototype)": make_stable_(
                MultiScaleLMN(d, 48, 12, 4), "bounded", ring, True
            ),
        }
        times = {label: [] for label in nets}
        for _label, net in nets.items():  # warm-up
            for _ in range(3):
                _step(net, x, lengths)
        for _ in range(args.rounds):
            for label, net in nets.items():
                times[label].append(_step(net, x, lengths))
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        for label, t in med.items():
            base = med["MS-LMN free" if label.startswith("MS") else "LMN free"]
            print(f"| {name} | {label} | {1000 * t:.1f} | {t / base:.2f} |")
    return 0
