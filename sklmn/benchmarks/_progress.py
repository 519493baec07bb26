"""Execution of the experiment runs: worker processes, progress bars, failures.

:func:`execute_runs` runs every (experiment, seed) pair, in this process or
in joblib worker processes, and yields each result as it finishes. It shows
an overall progress bar with the estimated remaining time and one bar per
running experiment (its fits done out of those expected), catches the
failure of an experiment (reported with its cause instead of ending the run)
and records what the worker pool did (a worker restarted or killed, with the
explanation the report gives).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._exp_common import set_fit_hook
from ._results import ExperimentResult

__all__ = ["PoolEvent", "RunProgress", "execute_runs"]

#: what loky's worker-restart warning means here, written into the report
_RESTART_EXPLAINED = (
    "loky (joblib's process pool) replaced a worker that stopped between two "
    "runs: a worker restarts itself when its memory grew by more than "
    "{leak} MB during the runs it did (loky's guard against leaks; the "
    "experiments load datasets and keep models, so this is expected with "
    "the larger ones) or when it stayed idle longer than its timeout. No run "
    "was lost: every run that was handed to the pool returned a result (the "
    "table below has them all); the new worker only costs its start-up "
    "(importing torch, a few seconds)."
)


@dataclass
class PoolEvent:
    """Something the worker pool did during a run, for the report."""

    what: str
    cause: str
    #: the runs it concerned (``name (seed k)``), when known
    runs: list[str] = field(default_factory=list)


def _leak_limit_mb() -> int:
    try:
        from joblib.externals.loky import process_executor

        return int(process_executor._MAX_MEMORY_LEAK_SIZE // 1_000_000)
    except (ImportError, AttributeError):  # pragma: no cover - other loky
        return 300


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _max_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux, bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 1e6


def run_one(fn, preset, output_dir, seed, key, channel):
    """One run of one experiment, in this process or in a worker.

    Never raises on an experiment's error: the result then carries the
    cause (``error``) and no rows. ``channel(kind, key, payload)`` receives
    the progress events (``'start'``, ``'log'``, ``'fit'``); in a worker it
    is a queue's ``put`` seen through :func:`_queue_channel`.
    """
    channel("start", key, os.getpid())
    set_fit_hook(lambda: channel("fit", key, None))
    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    try:
        res = fn(preset, output_dir, lambda msg: channel("log", key, msg), seed=seed)
    except Exception as exc:  # noqa: BLE001 - reported, the other runs go on
        tail = traceback.format_exc().strip().splitlines()
        res = ExperimentResult(key[0])
        res.error = f"{type(exc).__name__}: {exc}"
        res.notes = [f"traceback (last lines): {' / '.join(tail[-4:])}"]
        channel("log", key, f"FAILED: {res.error}")
    finally:
        set_fit_hook(None)
    res.seconds = time.perf_counter() - t0
    res.cpu_seconds = _cpu_seconds() - cpu0
    res.max_rss_mb = _max_rss_mb()
    res.seeds = [seed]
    return res


class _QueueChannel:
    """A picklable ``channel`` that sends the events to the runner's queue."""

    def __init__(self, q):
        self.q = q

    def __call__(self, kind, key, payload):
        self.q.put((kind, key, payload))


class RunProgress:
    """Progress of a benchmark run: overall and per experiment, with an ETA.

    The overall bar counts the expected work (seconds on one core, from the
    costs recorded per preset) of the runs finished plus the share of the
    running ones (their fits done out of those expected, interpolated in
    time within a fit); its remaining time is tqdm's estimate from the rate
    so far. Each running experiment has a bar of its fits.

    Parameters
    ----------
    tasks : list of (name, seed)
    costs : mapping
        name -> (expected fits, expected seconds on one core); a missing
        name counts as one fit of 60 seconds.
    log : callable
        Sink of the log lines (written above the bars).
    enabled : bool
        Show the bars (else only the log lines).
    stream : file, default=sys.stderr

    Examples
    --------
    >>> lines = []
    >>> p = RunProgress([("a", 0)], {"a": (2, 10.0)}, lines.append, enabled=False)
    >>> p.event("start", ("a", 0), 1); p.event("fit", ("a", 0), None)
    >>> round(p.fraction(("a", 0)), 2) >= 0.5
    True
    >>> p.event("done", ("a", 0), None); p.close(); p.done_weight
    10.0
    """

    def __init__(self, tasks, costs, log, *, enabled=True, stream=None):
        self.tasks = list(tasks)
        self.costs = {
            name: costs.get(name, (1, 60.0)) if costs else (1, 60.0)
            for name, _ in self.tasks
        }
        self.log_sink = log
        self.enabled = enabled
        self.total = sum(self.costs[name][1] for name, _ in self.tasks)
        self.done_weight = 0.0
        self.n_done = 0
        self.running: dict = {}  # key -> [fits done, time of last fit, bar]
        self.finished: set = set()
        self._lock = threading.RLock()
        self._free_positions: list[int] = []
        self._next_position = 1
        self._bar = None
        self._stream = stream or sys.stderr
        isatty = getattr(self._stream, "isatty", lambda: False)()
        #: seconds between redraws: a terminal redraws in place, a log file
        #: gets a line at this period
        self.period = 1.0 if isatty else 30.0
        if enabled:
            from tqdm.auto import tqdm

            self._tqdm = tqdm
            self._bar = tqdm(
                total=round(self.total, 1),
                desc=f"all ({len(self.tasks)} runs)",
                unit="s",
                smoothing=0.0,
                mininterval=self.period,
                position=0,
                file=self._stream,
                dynamic_ncols=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                "[{elapsed} elapsed, about {remaining} left]",
            )

    @staticmethod
    def label(name: str, seed: int) -> str:
        """How the log lines and bars name a run."""
        return f"{name} (seed {seed})"

    def write(self, msg: str) -> None:
        """Write a log line above the bars."""
        with self._lock:
            if self._bar is None:
                self.log_sink(msg)
            else:
                with self._tqdm.external_write_mode(file=self._stream):
                    self.log_sink(msg)

    def fraction(self, key) -> float:
        """Share of a running task's work done (0 to 0.99)."""
        fits, last, _ = self.running[key]
        n_fits, seconds = self.costs[key[0]]
        per_fit = seconds / max(n_fits, 1)
        within = min((time.perf_counter() - last) / per_fit, 0.9) if per_fit else 0
        return min((fits + within) / max(n_fits, 1), 0.99)

    def event(self, kind: str, key, payload) -> None:
        """Apply one event of a run (``start``, ``fit``, ``log``, ``done``)."""
        with self._lock:
            name, seed = key
            label = self.label(name, seed)
            if kind == "log":
                self.write(f"    {label}: {payload}")
            elif kind == "start" and key not in self.finished:
                bar = None
                if self._bar is not None:
                    position = (
                        self._free_positions.pop(0)
                        if self._free_positions
                        else self._next_position
                    )
                    self._next_position = max(self._next_position, position + 1)
                    bar = self._tqdm(
                        total=self.costs[name][0],
                        desc=f"  {label}",
                        unit="fit",
                        position=position,
                        leave=False,
                        mininterval=self.period,
                        file=self._stream,
                        dynamic_ncols=True,
                        bar_format="{desc}: {n_fmt}/{total_fmt} fits|{bar}| "
                        "[{elapsed}]",
                    )
                    bar.position_ = position
                self.running[key] = [0, time.perf_counter(), bar]
            elif kind == "fit" and key in self.running:
                state = self.running[key]
                state[0] += 1
                state[1] = time.perf_counter()
                if state[2] is not None:
                    if state[0] > state[2].total:
                        state[2].total = state[0]
                    state[2].update(1)
            elif kind == "done":
                state = self.running.pop(key, None)
                if state is not None and state[2] is not None:
                    self._free_positions.append(state[2].position_)
                    self._free_positions.sort()
                    state[2].close()
                self.done_weight += self.costs[name][1]
                self.n_done += 1
                self.finished.add(key)
            self.refresh()

    def refresh(self) -> None:
        """Redraw the overall bar (also called by a ticker every second)."""
        with self._lock:
            if self._bar is None:
                return
            partial = sum(
                self.fraction(key) * self.costs[key[0]][1] for key in self.running
            )
            self._bar.n = round(min(self.done_weight + partial, self.total), 1)
            self._bar.set_description_str(
                f"all: {self.n_done}/{len(self.tasks)} runs done", refresh=False
            )
            self._bar.refresh()

    def close(self) -> None:
        """Close the bars."""
        with self._lock:
            for _, _, bar in self.running.values():
                if bar is not None:
                    bar.close()
            self.running.clear()
            if self._bar is not None:
                self._bar.n = round(self.done_weight, 1)
                self._bar.refresh()
                self._bar.close()
                self._bar = None


@contextlib.contextmanager
def _ticker(progress: RunProgress):
    stop = threading.Event()
    period = progress.period

    def tick():
        while not stop.wait(period):
            progress.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def execute_runs(
    experiments: Mapping,
    tasks: list[tuple[str, int]],
    preset: str,
    folder: Callable[[int], Path],
    n_jobs: int,
    progress: RunProgress,
    events: list[PoolEvent],
) -> Iterator:
    """Run the tasks and yield their results (in the order they finish).

    ``events`` receives what the worker pool did: a restarted worker
    (loky's warning, explained) or a killed one (the runs it took down are
    retried once in a fresh pool, then reported as failed with the cause).
    """
    if n_jobs == 1:
        with _ticker(progress):
            for name, seed in tasks:
                res = run_one(
                    experiments[name][0],
                    preset,
                    folder(seed),
                    seed,
                    (name, seed),
                    progress.event,
                )
                progress.event("done", (name, seed), None)
                yield res
        return
    yield from _execute_parallel(
        experiments, tasks, preset, folder, n_jobs, progress, events
    )


def _execute_parallel(experiments, tasks, preset, folder, n_jobs, progress, events):
    import multiprocessing

    from joblib.externals.loky.process_executor import TerminatedWorkerError

    manager = multiprocessing.Manager()
    q = manager.Queue()

    def pump():
        while True:
            item = q.get()
            if item is None:  # the end (sent by this function)
                return
            progress.event(*item)

    pump_thread = threading.Thread(target=pump, daemon=True)
    pump_thread.start()

    def batch(pending, jobs):
        return _run_batch(
            experiments, pending, preset, folder, jobs, q, progress, events
        )

    try:
        with _ticker(progress):
            finished: list = []
            try:
                for res in batch(tasks, n_jobs):
                    finished.append((res.name, res.seeds[0]))
                    yield res
                return
            except TerminatedWorkerError as exc:
                lost = [t for t in tasks if t not in finished]
                events.append(
                    PoolEvent(
                        "a worker process was killed",
                        _killed_cause(exc)
                        + " The runs it took down with the pool were run again, "
                        "one at a time in a fresh worker.",
                        [progress.label(n, s) for n, s in lost],
                    )
                )
                _forget(progress, lost)
            for task in lost:  # one at a time: a crash takes only itself down
                try:
                    yield _run_alone(
                        experiments, task, preset, folder, q, progress, events
                    )
                except TerminatedWorkerError as exc:
                    cause = _killed_cause(exc)
                    events.append(
                        PoolEvent(
                            "a worker process was killed again",
                            cause + " The run is reported as failed.",
                            [progress.label(*task)],
                        )
                    )
                    _forget(progress, [task])
                    progress.event("done", task, None)
                    res = ExperimentResult(task[0], seeds=[task[1]])
                    res.error = f"its worker process was killed ({cause})"
                    yield res
    finally:
        q.put(None)
        pump_thread.join(timeout=5)
        manager.shutdown()


def _run_batch(experiments, pending, preset, folder, jobs, q, progress, events):
    """One joblib pool over ``pending``; yields the results as they finish."""
    from joblib import Parallel, delayed

    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            stream = Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(run_one)(
                    experiments[name][0],
                    preset,
                    folder(seed),
                    seed,
                    (name, seed),
                    _QueueChannel(q),
                )
                for name, seed in pending
            )
            for res in stream:
                _flush(q)
                progress.event("done", (res.name, res.seeds[0]), None)
                yield res
    finally:
        _record_restarts(caught, events)


def _run_alone(experiments, task, preset, folder, q, progress, events):
    """One run in a worker process of its own (never in this process)."""
    from joblib.externals.loky import get_reusable_executor

    name, seed = task
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            executor = get_reusable_executor(max_workers=1)
            res = executor.submit(
                run_one,
                experiments[name][0],
                preset,
                folder(seed),
                seed,
                task,
                _QueueChannel(q),
            ).result()
    finally:
        _record_restarts(caught, events)
    _flush(q)
    progress.event("done", task, None)
    return res


def _killed_cause(exc) -> str:
    """The first line of joblib's TerminatedWorkerError and the exit codes."""
    lines = str(exc).splitlines()
    codes = [ln.strip() for ln in lines if "exit code" in ln]
    text = (lines[0] if lines else type(exc).__name__).strip()
    return " ".join([text, *codes])


def _forget(progress, keys) -> None:
    """Close the bars of runs lost with their worker (they run again)."""
    for key in keys:
        if key in progress.running:
            progress.event("done", key, None)
            progress.n_done -= 1
            progress.done_weight -= progress.costs[key[0]][1]
        progress.finished.discard(key)


def _flush(q) -> None:
    """Give the pump thread a moment to apply the events sent before a result."""
    deadline = time.perf_counter() + 0.5
    while not q.empty() and time.perf_counter() < deadline:
        time.sleep(0.01)


def _record_restarts(caught, events: list[PoolEvent]) -> None:
    for w in caught:
        text = str(w.message)
        if "A worker stopped while some jobs were given to the executor" in text:
            events.append(
                PoolEvent(
                    f"loky warned: {text!r}",
                    _RESTART_EXPLAINED.format(leak=_leak_limit_mb()),
                )
            )
        else:
            warnings.warn_explicit(
                w.message, w.category, w.filename, w.lineno, source=w.source
            )
