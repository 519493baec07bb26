"""Overhead of an estimator's ``fit`` over a hand-written torch training loop.

Usage::

    python -m sklmn.benchmarks bench fit-overhead --threads 1    # 4 cases, 7 repeats
    python -m sklmn.benchmarks bench fit-overhead --models lmn --data medium --repeats 9
    python -m sklmn.benchmarks bench fit-overhead --breakdown    # where fit's time goes
    python -m sklmn.benchmarks bench fit-overhead --prototypes   # candidate fixes
    python -m sklmn.benchmarks bench fit-overhead --threads 1 2  # interleaved counts
    python -m sklmn.benchmarks bench fit-overhead --profile      # cProfile of a fit
    python -m sklmn.benchmarks bench fit-overhead --clock cpu    # CPU time, not wall

The acceptance figure: ``--models lstm --data acceptance --epochs 30 --batch
32 --threads 1 --repeats 7`` with ``--clock cpu`` and ``--clock wall``.

For each model (``RNNClassifier(cell='lstm')``, ``LMNClassifier(pretrainer=
None)``, both with their default sizes) and data size (small: 200 sequences
x T=50 x d=4; medium: 2000 x T=100 x d=8; lengths uniform in T/2..T;
acceptance: 400 x T=40 x d=4, all of length 40; 3 classes) it times,
interleaved round-robin over ``--repeats`` rounds after a warm-up round
(the first fit of a process pays ~1.3 s for torch importing
``torch._dynamo`` with the first optimizer):

* ``hand``: a hand-written loop over a copy of the fitted estimator's module
  (``est.net_.module_``, a ``SequenceNet``): the same Adam (lr 1e-3, weight
  decay ``alpha / batch_size`` on weights, none on biases), cross-entropy on
  the readout of the last valid step, ``clip_grad_norm_(1.0)``, a seeded
  ``randperm`` per epoch, batches of ``--batch`` zero-padded sequences
  trimmed to their longest one, with their lengths; the batch loss is read
  back (``loss.item()``) as any loop that logs it does;
* ``hand+eval``: the same plus what ``fit``'s best-weight selection does (a
  no-grad eval-mode loss on the training sequences its stopping rule
  measures, all of them up to 128, else a fixed random eighth, at least
  128, in batches of 256 sorted by length, before training and after every
  epoch; a clone of the state dict when it improves; the best loaded at
  the end);
* ``fit``: ``est.fit(X, y)`` with ``early_stopping=False``,
  ``standardize=False``, ``max_iter=--epochs``, ``batch_size=--batch``,
  ``n_iter_no_change`` so large that all epochs run; reported as total
  time, as the time of its training passes (``run_single_epoch`` with
  ``training=True``, timed by wrapping it: the epochs' training work,
  without the stopping rule) and as the time spent in the stopping rule
  (``ConvergenceMonitor``:
  the evaluation passes and snapshots of best-weight selection, measured by
  wrapping its methods);
* ``fit-noeval``: ``fit`` with the stopping rule's evaluation and snapshots
  patched out (it then monitors the running training loss).

``--prototypes`` adds fits with monkey-patched candidate changes (nothing in
``sklmn`` is edited): ``fit+lean`` (training batches from a plain seeded
permutation instead of a DataLoader, a train step without skorch's closure
and ``on_grad_computed`` round, train/eval mode switched only when it
changes), ``fit+evalsort`` (the evaluation pass in decreasing length order)
and both; ``--all-prototypes`` also each lean change alone.

Prints Markdown tables of medians (and minima) in ms, and the ratios (median
of the per-round ratios, and the ratio of the minima). Compare ratios: the
2-core development machines are shared. With two torch threads on two cores
a single competing process slows every parallel kernel several-fold (see
``benchmarks/README.md``), so record with ``--threads 1`` unless the machine
is quiet. ``--clock cpu`` times with the CPU time of the process instead of
the wall clock: with one thread, the work done, not the waits for a core
that other processes on a loaded machine impose (the wall clock is right on
a quiet machine).

``--breakdown`` times (by wrapping functions) the components of a fit in ms
per epoch: setup (validation, module build, net initialization), data
loading (DataLoader and ``SequenceDataset.__getitems__``), forward, loss,
backward, clipping, optimizer step, skorch's callbacks and history writes,
the stopping rule. Rows nest (``train_step`` contains forward and backward),
and the wrappers add a little time of their own.

The training classes are read off a fitted estimator, so the script works
whether they live in ``sklmn.estimators._net`` or in ``sklmn._training``. To
measure a snapshot of the package rather than the working tree, put it first
on ``PYTHONPATH`` (with an editable install, also drop the editable finder
from ``sys.meta_path``, e.g. in a ``sitecustomize.py`` of that directory).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import statistics
import sys
import warnings

import torch

from .fit_overhead_parts import (
    DATA,
    _fmt,
    _training_classes,
    breakdown,
    hand_loop,
    make_data,
    make_estimator,
    no_best_weight_eval,
    now,
    profile_fit,
    prototype,
    run_fit,
    set_clock,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    parser.add_argument(
        "--models", nargs="+", choices=("lstm", "lmn"), default=["lstm", "lmn"]
    )
    parser.add_argument("--data", nargs="+", choices=tuple(DATA), default=list(DATA))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=None,
        help="torch thread counts, interleaved (default: torch's)",
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="time fit's components (ms per epoch)"
    )
    parser.add_argument(
        "--prototypes",
        action="store_true",
        help="time fits with monkey-patched candidate fixes",
    )
    parser.add_argument(
        "--all-prototypes",
        action="store_true",
        help="with --prototypes: also each lean-loop change alone",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print a cProfile (by tottime) of one fit per model",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time, or the process's CPU time (with one torch thread: the "
        "work, without waiting for a core on a shared machine)",
    )
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    set_clock(args.clock)

    threads_list = args.threads or [torch.get_num_threads()]
    torch.set_num_threads(threads_list[0])
    datasets = {name: make_data(*DATA[name]) for name in args.data}
    import sklmn

    print(
        f"sklmn={sklmn.__file__} "
        f"torch={torch.__version__} threads={threads_list} epochs={args.epochs} "
        f"batch={args.batch} repeats={args.repeats} clock={args.clock} "
        f"load={' '.join(f'{v:.1f}' for v in _loadavg())}"
    )

    net_cls, cm_cls, _, ds_cls = _training_classes()
    print(
        f"# classes: {net_cls.__module__}.{net_cls.__name__}, "
        f"{cm_cls.__module__}.{cm_cls.__name__}, "
        f"{ds_cls.__module__}.{ds_cls.__name__}"
    )
    # warm-up fits (dynamo import, allocator) and the modules of the hand loop
    templates = {}
    for model in args.models:
        for name, (X, y, _) in datasets.items():
            *_, est = run_fit(model, X, y, 1, args.batch)
            templates[model, name] = est
    seen = {}
    for key, est in templates.items():
        p = dict(est.get_params())
        seen[key] = (
            est.net_.lr,  # learning_rate_init resolved ('auto')
            p["alpha"] / args.batch,
            p["gradient_clipping"],
        )
        nt = _threads_in_fit(key[0], datasets[key[1]], args.batch)
        print(
            f"# {key}: module {type(est.net_.module_.recurrent).__name__}, "
            f"lr/weight_decay/clip {seen[key]}, torch threads during fit: {nt}"
        )

    if args.profile:
        for model, dname in [(m, d) for m in args.models for d in args.data]:
            X, y, _ = datasets[dname]
            print(f"\n## cProfile of one fit, {model}, {dname} data\n```")
            print(profile_fit(model, X, y, args.epochs, args.batch, args.top))
            print("```")
        return

    if args.breakdown:
        for model, dname in [(m, d) for m in args.models for d in args.data]:
            X, y, tensors = datasets[dname]
            hand = []
            for _ in range(args.repeats):
                hand.append(
                    _time_hand(
                        templates[model, dname], tensors, args, seen[model, dname]
                    )
                    / args.epochs
                )
            res = breakdown(model, X, y, args.epochs, args.batch, args.repeats)
            print(
                f"\n## Breakdown, {model}, {dname} data: ms per epoch "
                f"(median of {args.repeats}; wrapped calls, nested rows overlap)\n"
            )
            print(f"hand loop: {1000 * statistics.median(hand):.1f} ms/epoch\n")
            print("| component | ms / epoch |\n|---|---:|")
            for k in sorted(res):
                print(f"| {k} | {1000 * res[k]:.1f} |")
        return

    variants = ["hand", "hand+eval", "fit", "fit-noeval"]
    protos = {}
    if args.prototypes:
        protos = {
            "fit+lean": {"loader", "step", "mode"},
            "fit+evalsort": {"evalsort"},
            "fit+lean+evalsort": {"loader", "step", "mode", "evalsort"},
        }
        if args.all_prototypes:
            protos.update(
                {
                    "fit+loader": {"loader"},
                    "fit+step": {"step"},
                    "fit+mode": {"mode"},
                    "fit+lean+noeval": {"loader", "step", "mode", "noeval"},
                }
            )
        variants += list(protos)
    cases = [(m, d, t) for t in threads_list for m in args.models for d in args.data]
    times = {(c, v): [] for c in cases for v in variants}
    durs = {(c, v): [] for c in cases for v in variants if v.startswith("fit")}
    mons = {(c, v): [] for c in cases for v in variants if v.startswith("fit")}
    for _rep in range(args.repeats):
        for case in cases:
            model, dname, nthreads = case
            torch.set_num_threads(nthreads)
            X, y, tensors = datasets[dname]
            for v in variants:
                gc.collect()
                if v == "hand":
                    t = _time_hand(
                        templates[model, dname], tensors, args, seen[model, dname]
                    )
                elif v == "hand+eval":
                    t = _time_hand(
                        templates[model, dname],
                        tensors,
                        args,
                        seen[model, dname],
                        evaluate=True,
                    )
                else:
                    if v == "fit":
                        ctx = contextlib.nullcontext
                    elif v == "fit-noeval":
                        ctx = no_best_weight_eval
                    else:
                        ctx = lambda names=protos[v]: prototype(names)  # noqa: E731
                    t, dur, mon, _ = run_fit(model, X, y, args.epochs, args.batch, ctx)
                    durs[case, v].append(dur)
                    mons[case, v].append(mon)
                times[case, v].append(t)
    print(f"\nload after: {' '.join(f'{v:.1f}' for v in _loadavg())}")
    _report(cases, variants, times, durs, mons, args)


def _time_hand(template, tensors, args, params, evaluate=False) -> float:
    lr, wd, clip = params
    module = copy.deepcopy(template.net_.module_)
    t0 = now()
    hand_loop(
        module,
        tensors,
        epochs=args.epochs,
        batch=args.batch,
        lr=lr,
        weight_decay=wd,
        clip=clip,
        evaluate=evaluate,
    )
    return now() - t0


def _threads_in_fit(model, data, batch) -> int:
    """torch.get_num_threads() seen by a callback during fit."""
    from skorch.callbacks import Callback

    seen = []

    class Probe(Callback):
        def on_batch_begin(self, net, **kwargs):
            seen.append(torch.get_num_threads())

    est = make_estimator(model, 1, batch).set_params(callbacks=[("probe", Probe())])
    X, y, _ = data
    # callbacks are deep-copied by fit, but the closure list is shared
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:batch], y[:batch])
    return seen[0] if seen else -1


def _loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(v) for v in f.read().split()[:3]]
    except OSError:
        return []


def _report(cases, variants, times, durs, mons, args) -> None:
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    print(
        f"\n## {args.clock.capitalize()} time, ms (median / min of {args.repeats}; "
        f"{args.epochs} epochs, batch {args.batch})\n"
    )
    print(
        "| model | data | threads | "
        + " | ".join(variants)
        + " | fit epochs (training passes) | fit stopping rule |"
    )
    print("|---|---|---:|" + "---:|" * (len(variants) + 2))
    for c in cases:
        cells = [f"{_fmt(med[c, v])} / {_fmt(low[c, v])}" for v in variants]
        d = durs[c, "fit"]
        m = mons[c, "fit"]
        cells.append(f"{_fmt(statistics.median(d))} / {_fmt(min(d))}")
        cells.append(f"{_fmt(statistics.median(m))} / {_fmt(min(m))}")
        print(f"| {c[0]} | {c[1]} | {c[2]} | " + " | ".join(cells) + " |")

    print(
        "\n## Ratios to the hand loop (median of per-round ratios; min in "
        "parentheses = ratio of minima)\n"
    )
    cols = [
        ("fit / hand", "fit", "hand", times),
        ("fit epochs / hand", "fit", "hand", durs),
        ("fit-noeval / hand", "fit-noeval", "hand", times),
        ("fit-noeval epochs / hand", "fit-noeval", "hand", durs),
        ("fit / hand+eval", "fit", "hand+eval", times),
        ("hand+eval / hand", "hand+eval", "hand", times),
    ]
    cols += [(f"{v} / hand", v, "hand", times) for v in variants[4:]]
    cols += [(f"{v} epochs / hand", v, "hand", durs) for v in variants[4:]]
    print("| model | data | threads | " + " | ".join(c[0] for c in cols) + " |")
    print("|---|---|---:|" + "---:|" * len(cols))
    for c in cases:
        cells = []
        for _, num, den, src in cols:
            a, b = src[c, num], times[c, den]
            per_round = statistics.median(x / z for x, z in zip(a, b, strict=True))
            cells.append(f"{per_round:.2f} ({min(a) / min(b):.2f})")
        print(f"| {c[0]} | {c[1]} | {c[2]} | " + " | ".join(cells) + " |")

    print("\n## What best-weight selection adds (ms per epoch, medians)\n")
    print(
        "| model | data | threads | stopping rule in fit | fit - fit-noeval "
        "| hand+eval - hand | share of fit |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for c in cases:
        e = args.epochs
        mon = statistics.median(mons[c, "fit"]) / e
        diff = (med[c, "fit"] - med[c, "fit-noeval"]) / e
        hdiff = (med[c, "hand+eval"] - med[c, "hand"]) / e
        share = statistics.median(mons[c, "fit"]) / med[c, "fit"]
        print(
            f"| {c[0]} | {c[1]} | {c[2]} | {1000 * mon:.1f} | {1000 * diff:.1f} "
            f"| {1000 * hdiff:.1f} | {100 * share:.0f}% |"
        )


if __name__ == "__main__":
    sys.exit(main())
