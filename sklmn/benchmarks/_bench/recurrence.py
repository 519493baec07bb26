"""Forward+backward time of the sklmn recurrent modules vs torch.nn baselines.

Usage::

    python -m sklmn.benchmarks bench recurrence --batch 64 --T 200 --threads 2 \
        --repeats 7 --device cpu

Prints a Markdown table: median and minimum milliseconds per forward+backward
(sum of the output as loss) and the ratios to ``torch.nn.RNN(256)``,
``torch.nn.LSTM(128)`` and ``LMN(128, 128)`` measured in the same run: ratio
of the medians, ratio of the minima (the most robust figure when other
processes share the CPU) and the median over rounds of the ratio within a
round ("per-round").
Input size 16; LMN with N_h = N_m = 128. Rows for modules written elsewhere
in ``sklmn.nn`` (MultiScaleLMN, ClockworkRNN, ENRNN) appear when importable.
Timings are interleaved over repeats (round-robin, the starting row rotating
every round) so that load from other processes affects every row alike; the
table gives each row's median and minimum over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

Entry = tuple[nn.Module, Callable[[torch.Tensor], torch.Tensor]]


def _entry(module: nn.Module, mixed_lengths: bool = False) -> Entry:
    def run(x: torch.Tensor) -> torch.Tensor:
        if not mixed_lengths:
            return module(x)[0]
        # lengths spread uniformly in T/2..T (packed / sorted-prefix path)
        n, t = x.shape[0], x.shape[1]
        lengths = torch.linspace(t, t // 2, n).round().long()
        return module(x, lengths=lengths)[0]

    return module, run


def _eager_entry(module: nn.Module) -> Entry:
    """An entry whose forward and backward run with the CUDA-graph replay of
    the LMN loop off (the backward inside ``run``; it returns a leaf whose
    own backward costs nothing)."""
    from sklmn.nn import set_cuda_graphs

    def run(x: torch.Tensor) -> torch.Tensor:
        previous = set_cuda_graphs(False)
        try:
            module(x)[0].sum().backward()
        finally:
            set_cuda_graphs(previous)
        return torch.zeros((), device=x.device, requires_grad=True)

    return module, run


def build_models(d: int, device: str) -> dict[str, Entry]:
    """Name -> (module, callable(x) returning an output) for available models."""
    import sklmn.nn as snn

    models: dict[str, Entry] = {}
    models["torch.nn.RNN(256)"] = _entry(nn.RNN(d, 256, batch_first=True))
    models["torch.nn.LSTM(128)"] = _entry(nn.LSTM(d, 128, batch_first=True))
    models["torch.nn.GRU(128)"] = _entry(nn.GRU(d, 128, batch_first=True))
    models["LMN(128, 128)"] = _entry(snn.LMN(d, 128, 128))
    models["LMN(128, 128) mixed lengths"] = _entry(snn.LMN(d, 128, 128), True)
    models["LMN(128, 128) orthogonal W_mm"] = _entry(
        snn.LMN(d, 128, 128, memory_matrix="orthogonal")
    )
    models["LMN(128, 128) Schur W_mm"] = _entry(
        snn.LMN(d, 128, 128, memory_matrix="schur")
    )
    if device == "cuda" and hasattr(snn, "set_cuda_graphs"):
        models["LMN(128, 128) without CUDA graphs"] = _eager_entry(snn.LMN(d, 128, 128))
    models["sklmn ElmanRNN(256)"] = _entry(snn.ElmanRNN(d, 256))
    models["sklmn LSTM(128)"] = _entry(snn.LSTM(d, 128))
    optional = {
        "MultiScaleLMN(8 x 16)": lambda: snn.MultiScaleLMN(
            d, hidden_size=128, memory_size=16, n_modules=8
        ),
        "ClockworkRNN(8 x 16)": lambda: snn.ClockworkRNN(
            d, module_size=16, n_modules=8
        ),
        "ENRNN(64 long + 64 short)": lambda: snn.ENRNN(d, 64, 64),
        "ENRNN(64 + 64) no eigen-normalization": lambda: snn.ENRNN(
            d, 64, 64, normalize=False
        ),
    }
    for name, make in optional.items():
        try:
            models[name] = _entry(make())
        except (AttributeError, ImportError, TypeError, ValueError) as exc:
            print(f"# {name} skipped: {exc!r}")
    for module, _ in models.values():
        module.to(device)
    return models


def time_once(entry: Entry, x: torch.Tensor, device: str) -> float:
    """Milliseconds of one forward + backward."""
    module, run = entry
    module.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    run(x).sum().backward()
    if device == "cuda":
        torch.cuda.synchronize()
    return 1000.0 * (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--T", type=int, default=200)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--core-only",
        action="store_true",
        help="only torch.nn.RNN/LSTM/GRU and LMN rows (shorter rounds)",
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    models = build_models(args.features, args.device)
    if args.core_only:
        models = {k: v for k, v in models.items() if k.startswith(("torch", "LMN"))}
    x = torch.randn(args.batch, args.T, args.features, device=args.device)
    times: dict[str, list[float]] = {name: [] for name in models}
    for run in models.values():  # warm-up
        time_once(run, x, args.device)
    names = list(models)
    for rep in range(args.repeats):
        # round-robin, starting one row later every round so that no row
        # always follows the same neighbour (cache, allocator, load bursts)
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(time_once(models[name], x, args.device))
    median = {name: statistics.median(v) for name, v in times.items()}
    best = {name: min(v) for name, v in times.items()}
    print(
        f"\nbatch={args.batch} T={args.T} d={args.features} "
        f"threads={args.threads} device={args.device} repeats={args.repeats} "
        f"torch={torch.__version__}\n"
    )
    print(
        "| model | ms median | ms min | median vs nn.RNN(256) "
        "| median vs nn.LSTM(128) | median vs LMN(128) | min vs nn.RNN(256) "
        "| min vs nn.LSTM(128) | min vs LMN(128) | per-round vs nn.RNN(256) "
        "| per-round vs nn.LSTM(128) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    refs = ("torch.nn.RNN(256)", "torch.nn.LSTM(128)", "LMN(128, 128)")
    for name in times:
        ratios = [f"{median[name] / median[r]:.2f}" for r in refs]
        ratios += [f"{best[name] / best[r]:.2f}" for r in refs]
        # median over rounds of the ratio measured within each round
        for r in refs[:2]:
            pairs = zip(times[name], times[r], strict=True)
            ratios.append(f"{statistics.median(a / b for a, b in pairs):.2f}")
        print(
            f"| {name} | {median[name]:.1f} | {best[name]:.1f} | "
            + " | ".join(ratios)
            + " |"
        )


if __name__ == "__main__":
    main()
