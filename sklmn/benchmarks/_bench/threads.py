"""Fit time under each thread setting, idle and against competing processes.

Usage::

    python -m sklmn.benchmarks bench threads                      # every case, 3 rounds
    python -m sklmn.benchmarks bench threads --cases digits --repeats 5
    python -m sklmn.benchmarks bench threads --cases sizes grid workers
    python -m sklmn.benchmarks bench threads --cases digits --settings auto 1
    python -m sklmn.benchmarks bench threads --trees /tmp/before .   # two sklmn trees
    taskset -c 0,1 python -m sklmn.benchmarks bench threads      # as on 2 cores

Cases (each timed interleaved round-robin over ``--repeats`` rounds after a
warm-up fit, every setting with 0 and with ``--busy`` competing CPU-bound
processes, pure-Python busy loops started before and stopped after each
block of fits):

* ``digits``: the acceptance case, a fixed 8-epoch ``LMNClassifier`` fit
  (``max_iter=8``, ``early_stopping=False``, all epochs run) on 600
  sequences of ``sklmn.datasets.load_sequential_digits``, for ``n_threads``
  None (torch's setting: one thread per core), 1, 2 and ``'auto'``;
* ``sizes``: small (``RNNClassifier`` default size, 200 sequences of 30
  steps), medium (``LMNClassifier`` 128 memory units, batch 64) and large
  (``RNNClassifier(cell='lstm', hidden_size=256)``, batch 128, 100 steps)
  models, 3 epochs each, for ``n_threads`` 1, 2 and ``'auto'``;
* ``grid``: ``GridSearchCV(n_jobs=2)`` of an ``LMNClassifier`` (4
  candidates x 2 folds on the digits), ``n_threads`` None against
  ``'auto'``: wall time of the search and the sum of its fit times;
* ``--trees DIR ...`` (instead of the cases): the default digits fit
  (``n_threads='auto'``) of each source tree, e.g. a checkout of an older
  commit against the working tree, each in a fresh interpreter, interleaved,
  twice per round and condition;
* ``workers``: what torch sees in a loky worker of ``n_jobs=2``
  (``torch.get_num_threads()``, ``OMP_NUM_THREADS``) and what ``'auto'``
  resolves to there.

Reports per case and condition the median wall time, the median CPU time of
the process (all its threads; a thread spinning in OpenMP's barrier or in an
idle OpenBLAS worker counts), the median time its threads waited on the run
queue for a core (Linux ``/proc/self/task/*/schedstat``), and the ratio of
each median to the same setting's idle median. Each competitor runs in a
session of its own, as the processes of other jobs do: Linux's autogroup
scheduling shares the CPU between sessions first, so competitors started in
the fit's own session (``--same-session``) take the fit's share of a loaded
machine (three runnable threads in one session: about 3x whatever the
machine's load) instead of competing with it as separate jobs. "Idle" is
only idle on a quiet machine: check ``uptime`` first, and compare ratios
within one run otherwise.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

from sklmn.datasets import load_sequential_digits
from sklmn.estimators import LMNClassifier, RNNClassifier

#: a competitor: a pure-Python busy loop in a fresh interpreter (which
#: starts in milliseconds: no torch to import)
_BUSY_LOOP = "while True:\n    pass\n"


class Competitors:
    """``n`` CPU-bound processes while the block runs, each in a session of
    its own (as the processes of other jobs are) unless ``same_session``."""

    def __init__(self, n: int, same_session: bool = False):
        self.n = n
        self.same_session = same_session
        self.procs: list = []

    def __enter__(self):
        self.procs = [
            subprocess.Popen(
                [sys.executable, "-c", _BUSY_LOOP],
                start_new_session=not self.same_session,
            )
            for _ in range(self.n)
        ]
        time.sleep(0.5 if self.n else 0.0)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def _run_queue_wait() -> float:
    """Seconds the threads of this process have waited for a core (Linux
    schedstat; 0 elsewhere)."""
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def _timed(fit) -> tuple[float, float, float]:
    wall, cpu, wait = time.perf_counter(), time.process_time(), _run_queue_wait()
    fit()
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        _run_queue_wait() - wait,
    )


def _digits(n=600):
    X, y = load_sequential_digits(return_X_y=True)
    return X[:n], y[:n]


def _fixed(est, epochs):
    return est.set_params(
        max_iter=epochs, early_stopping=False, n_iter_no_change=10_000, tol=0.0
    )


#: ``--trees``: the default digits fit in a fresh interpreter whose sklmn is
#: the one in directory argv[1] (argv[2] timed fits after a warm-up; one
#: JSON line [wall, CPU, waiting for a core] per fit)
_TREE_FIT = """
import json, os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import sklmn
from sklmn.datasets import load_sequential_digits
from sklmn.estimators import LMNClassifier


def _run_queue_wait():
    total = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return total / 1e9


if not os.path.realpath(sklmn.__file__).startswith(os.path.realpath(sys.argv[1])):
    raise SystemExit(f"sklmn imported from {sklmn.__file__}, not {sys.argv[1]}")
X, y = load_sequential_digits(return_X_y=True)
est = LMNClassifier(random_state=0, max_iter=8, early_stopping=False,
                    n_iter_no_change=10_000, tol=0.0)
est.fit(X[:64], y[:64])
for _ in range(int(sys.argv[2])):
    w, c, q = time.perf_counter(), time.process_time(), _run_queue_wait()
    est.fit(X[:600], y[:600])
    print(json.dumps([time.perf_counter() - w, time.process_time() - c,
                      _run_queue_wait() - q]), flush=True)
"""


def _compare_trees(trees, repeats: int, busy: int, same_session: bool) -> None:
    """The default digits fit of each source tree, interleaved, in fresh
    interpreters, without and with ``busy`` competitors."""
    times: dict = {}
    for r in range(repeats):
        for c in (0, busy):
            with Competitors(c, same_session):
                for tree in trees:
                    out = subprocess.run(
                        [sys.executable, "-c", _TREE_FIT, os.path.abspath(tree), "2"],
                        capture_output=True,
                        text=True,
                        check=True,
                        cwd=os.path.abspath(os.sep),
                    ).stdout
                    rows = [json.loads(x) for x in out.splitlines() if x[:1] == "["]
                    times.setdefault((tree, c), []).extend(rows)
        print(f"round {r + 1}/{repeats} done, load {os.getloadavg()[0]:.1f}",
              flush=True)
    print("\n## Default fit of each tree (medians)\n")
    print("| tree | competitors | wall s | CPU s | waiting for a core s | fits |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (tree, c), rows in times.items():
        med = [statistics.median(x[i] for x in rows) for i in range(3)]
        print(f"| {tree} | {c} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} "
              f"| {len(rows)} |")


def _setting(text: str):
    """An ``n_threads`` value from the command line."""
    if text == "None":
        return None
    return text if text == "auto" else int(text)


def _cases(names, settings=(None, 1, 2, "auto")):
    cases = {}
    if "digits" in names:
        X, y = _digits()
        for threads in settings:
            est = _fixed(LMNClassifier(random_state=0, n_threads=threads), 8)
            cases[("digits", threads)] = (est, X, y)
    if "sizes" in names:
        rng = np.random.default_rng(0)
        small = (rng.normal(size=(200, 30, 4)), rng.integers(0, 3, 200))
        medium = (rng.normal(size=(640, 50, 8)), rng.integers(0, 3, 640))
        large = (rng.normal(size=(512, 100, 16)), rng.integers(0, 3, 512))
        for threads in (1, 2, "auto"):
            cases[("small", threads)] = (
                _fixed(RNNClassifier(random_state=0, n_threads=threads), 3),
                *small,
            )
            cases[("medium", threads)] = (
                _fixed(
                    LMNClassifier(
                        memory_size=128,
                        batch_size=64,
                        pretrainer=None,
                        random_state=0,
                        n_threads=threads,
                    ),
                    3,
                ),
                *medium,
            )
            cases[("large", threads)] = (
                _fixed(
                    RNNClassifier(
                        cell="lstm",
                        hidden_size=256,
                        batch_size=128,
                        random_state=0,
                        n_threads=threads,
                    ),
                    3,
                ),
                *large,
            )
    return cases


def _grid(threads):
    from sklearn.model_selection import GridSearchCV

    X, y = _digits(400)
    est = _fixed(LMNClassifier(random_state=0, n_threads=threads), 4)
    search = GridSearchCV(est, {"alpha": [1e-4, 1e-3, 1e-2, 1e-1]}, cv=2, n_jobs=2)
    wall, cpu, _ = _timed(lambda: search.fit(X, y))
    return wall, cpu, float(np.sum(search.cv_results_["mean_fit_time"]) * 2)


def _worker_view():
    from joblib import Parallel, delayed

    from sklmn.estimators._auto import auto_threads

    def view():
        import torch as t

        return (
            os.getpid(),
            t.get_num_threads(),
            os.environ.get("OMP_NUM_THREADS"),
            auto_threads(1e9, t.get_num_threads()),
        )

    rows = Parallel(n_jobs=2)(delayed(view)() for _ in range(4))
    print("\n## In loky workers of n_jobs=2\n")
    print("| pid | torch.get_num_threads() | OMP_NUM_THREADS | 'auto', large model |")
    print("| --- | --- | --- | --- |")
    for row in sorted(set(rows)):
        print("| " + " | ".join(str(v) for v in row) + " |")
    print(f"\nmain process: torch.get_num_threads() = {torch.get_num_threads()}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=("digits", "sizes", "grid", "workers"),
        default=["digits", "sizes", "grid", "workers"],
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2, help="competing processes")
    parser.add_argument(
        "--settings",
        nargs="+",
        type=_setting,
        default=[None, 1, 2, "auto"],
        help="n_threads values of the digits case (None, ints, auto)",
    )
    parser.add_argument(
        "--trees",
        nargs="+",
        default=None,
        help="compare the default digits fit of these source trees (directories "
        "holding a sklmn package), each in a fresh interpreter",
    )
    parser.add_argument(
        "--same-session",
        action="store_true",
        help="start the competitors in this process's session (with the "
        "kernel's autogroup scheduling they then share the fit's CPU share)",
    )
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, affinity: {len(os.sched_getaffinity(0))}, "
          f"load: {os.getloadavg()}, torch threads: {torch.get_num_threads()}")
    if args.trees:
        _compare_trees(args.trees, args.repeats, args.busy, args.same_session)
        return
    if "workers" in args.cases:
        _worker_view()
    cases = _cases(args.cases, tuple(args.settings))
    conditions = (0, args.busy)
    times = {(k, c): [] for k in cases for c in conditions}
    for est, X, y in cases.values():  # warm-up
        est.fit(X[:64], y[:64])
    grid = {(t, c): [] for t in (None, "auto") for c in conditions}
    for r in range(args.repeats):
        for c in conditions:
            with Competitors(c, args.same_session):
                for key, (est, X, y) in cases.items():
                    times[key, c].append(_timed(functools.partial(est.fit, X, y)))
                if "grid" in args.cases:
                    for t in (None, "auto"):
                        grid[t, c].append(_grid(t))
        print(f"round {r + 1}/{args.repeats} done, load {os.getloadavg()[0]:.1f}",
              flush=True)
    print("\n## Fit time (medians)\n")
    print(f"| case | n_threads | wall idle s | wall {args.busy} busy s | ratio "
          "| CPU idle s | CPU busy s | waiting for a core, idle s | busy s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in cases:
        idle, busy = times[key, 0], times[key, args.busy]
        wi, wb = (statistics.median(t[0] for t in v) for v in (idle, busy))
        ci, cb = (statistics.median(t[1] for t in v) for v in (idle, busy))
        qi, qb = (statistics.median(t[2] for t in v) for v in (idle, busy))
        print(f"| {key[0]} | {key[1]!r} | {wi:.2f} | {wb:.2f} | {wb / wi:.2f} "
              f"| {ci:.2f} | {cb:.2f} | {qi:.2f} | {qb:.2f} |")
    if "grid" in args.cases:
        print("\n## GridSearchCV(n_jobs=2), 4 candidates x 2 folds (medians)\n")
        print("| n_threads | busy | wall s | sum of fit times s |")
        print("| --- | --- | --- | --- |")
        for (t, c), v in grid.items():
            print(f"| {t!r} | {c} | {statistics.median(x[0] for x in v):.2f} "
                  f"| {statistics.median(x[2] for x in v):.2f} |")

