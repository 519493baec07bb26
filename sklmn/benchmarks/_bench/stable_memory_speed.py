"""Forward + backward time of the LMN / MS-LMN with the old memory and the
Schur memory (free and bounded feedback), one thread.

Usage: python -m sklmn.benchmarks bench stable-memory-speed
"""

from __future__ import annotations

import math
import time

import torch

from sklmn.nn import LMN, MultiScaleLMN

from .stable_memory import make_stable_


def bench(make, x, lengths, reps=15):
    net = make()
    for _ in range(3):
        net(x, lengths=lengths)[0].sum().backward()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        net(x, lengths=lengths)[0].pow(2).mean().backward()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main(argv=None):
    """Print the median forward + backward times (no options)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ring = (0.4, 0.99, math.pi)
    for name, (n, T, d) in {"ArrowHead-like": (36, 251, 1),
                            "BasicMotions-like": (40, 100, 6)}.items():
        x = torch.randn(n, T, d)
        lengths = torch.full((n,), T)
        rows = {
            "LMN old": lambda: LMN(d, 32, 32),
            "LMN schur free": lambda: make_stable_(LMN(d, 32, 32), "free", ring, True),
            "LMN schur bounded": lambda: make_stable_(
                LMN(d, 32, 32), "bounded", ring, True),
            "MS-LMN old": lambda: MultiScaleLMN(d, 48, 12, 4),
            "MS-LMN schur free": lambda: make_stable_(
                MultiScaleLMN(d, 48, 12, 4), "free", ring, True),
            "MS-LMN schur bounded": lambda: make_stable_(
                MultiScaleLMN(d, 48, 12, 4), "bounded", ring, True),
        }
        for label, make in rows.items():
            print(f"{name} | {label} | {1000 * bench(make, x, lengths):.1f} ms")

