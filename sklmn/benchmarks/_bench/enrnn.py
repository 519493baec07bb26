"""Cost of the ENRNN eigenvalue normalization in a training step (Helfrich & Ye 2020).

A training step is forward + backward + Adam step on a batch of random
sequences (MSE on the last output through a linear readout). Variants of one
ENRNN (long-term size ``--long``, short-term size ``--short``, coupling on):

- ``normalize=False``: ``W_S = T`` unconstrained (no eigenvalue work);
- ``normalize=True``, latch open: ``rho(T) <= 1``, one ``eigvals`` per step
  to check the latch rule, ``W_S = T``;
- ``normalize=True``, latched: ``W_S = T / (rho(T) + eps)``, one ``eig`` +
  one solve per step and the Prop. 3.2 backward;
- ``torch.nn.RNN`` (ReLU, same total size) as a reference.

The variants are timed round-robin (one step of each per round) so that the
noise of a shared machine hits all of them alike; the table reports the
median over rounds and the ratio to ``normalize=False``.

Run::

    .venv/bin/python -m sklmn.benchmarks bench enrnn            # n = 64 + 64
    .venv/bin/python -m sklmn.benchmarks bench enrnn --long 96 --short 32 --repeats 30
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from sklmn.nn import ENRNN


def make_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor):
    readout = nn.Linear(model_output_size(model), y.shape[1])
    opt = torch.optim.Adam([*model.parameters(), *readout.parameters()], lr=1e-4)

    def step() -> None:
        out, _ = model(x)
        loss = ((readout(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def model_output_size(model: nn.Module) -> int:
    if isinstance(model, nn.RNN):
        return model.hidden_size
    return model.output_size


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, default=64, help="n_L (hidden_size)")
    parser.add_argument("--short", type=int, default=64, help="n_S (short_size)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200, help="sequence length T")
    parser.add_argument("--features", type=int, default=16, help="input size d")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="0: torch default")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.randn(args.batch, args.steps, args.features)
    y = torch.randn(args.batch, 1)
    n = args.long + args.short

    def enrnn(normalize: bool) -> ENRNN:
        return ENRNN(
            args.features,
            args.long,
            args.short,
            n_negative=args.long // 2,
            coupling=True,
            normalize=normalize,
        )

    latched = enrnn(True)
    with torch.no_grad():
        latched.weight_short = 2.0 * latched.weight_short  # rho(T) > 1
    _ = latched.weight_short  # training mode: closes the latch
    assert bool(latched.parametrizations.weight_short[0].latched)
    unlatched = enrnn(True)
    with torch.no_grad():  # keep rho(T) well below 1 for the whole run
        unlatched.weight_short = 0.5 * unlatched.weight_short
    variants = {
        "ENRNN normalize=False": enrnn(False),
        "ENRNN normalize=True, latch open": unlatched,
        "ENRNN normalize=True, latched": latched,
        f"torch.nn.RNN({n}, relu)": nn.RNN(
            args.features, n, nonlinearity="relu", batch_first=True
        ),
    }
    steps = {name: make_step(m, x, y) for name, m in variants.items()}
    for step in steps.values():  # warm-up
        step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.repeats):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    assert bool(latched.parametrizations.weight_short[0].latched)
    assert not bool(unlatched.parametrizations.weight_short[0].latched)

    # Cost of the matrix evaluation alone (Cayley solve + eig), forward+backward.
    def matrix_only(m: ENRNN) -> float:
        reps = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            m.recurrent_matrix().sum().backward()
            reps.append(time.perf_counter() - t0)
        m.zero_grad()
        return statistics.median(reps)

    base = statistics.median(times["ENRNN normalize=False"])
    print(
        f"ENRNN training step (forward+backward+Adam), n_L={args.long}, "
        f"n_S={args.short}, coupling, batch={args.batch}, T={args.steps}, "
        f"d={args.features}, threads={torch.get_num_threads()}, "
        f"median of {args.repeats}\n"
    )
    print("| variant | step (ms) | ratio to normalize=False |")
    print("|---|---:|---:|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {1e3 * med:.1f} | {med / base:.3f} |")
    print()
    print("| recurrent_matrix() forward+backward | ms |")
    print("|---|---:|")
    for name in ("ENRNN normalize=False", "ENRNN normalize=True, latched"):
        print(f"| {name} | {1e3 * matrix_only(variants[name]):.2f} |")


if __name__ == "__main__":
    main()
