"""Results, presets, report writing and the run loop of the experiment runner.

The experiments themselves are listed in :mod:`sklmn.benchmarks._experiments`,
which passes them to :func:`run_experiments`.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral
from pathlib import Path

from ._claims import claim_items_table, claim_verdict
from ._progress import PoolEvent, RunProgress, execute_runs
from ._results import Claim, ExperimentFn, ExperimentResult, Row

__all__ = [
    "Claim",
    "ExperimentFn",
    "ExperimentResult",
    "Row",
    "merge_seeds",
    "run_experiments",
    "PRESETS",
]

PRESETS = ("quick", "full")


def _fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.4g}"
    return f"{value:.3e}"


def _cell(text) -> str:
    """A Markdown table cell: ``|`` escaped, line breaks flattened."""
    return str(text).replace("|", "\\|").replace("\n", " ")


#: The papers the reports cite (short form, authors, title, venue).
PAPERS = (
    (
        "Bacciu et al. 2019",
        "D. Bacciu, A. Carta, A. Sperduti",
        "Linear Memory Networks",
        "ICANN 2019",
    ),
    (
        "Carta et al. 2020a",
        "A. Carta, A. Sperduti, D. Bacciu",
        "Incremental "
        "Training of a Recurrent Neural Network Exploiting a Multi-Scale Dynamic "
        "Memory",
        "ECML-PKDD 2020",
    ),
    (
        "Carta et al. 2020b",
        "A. Carta, A. Sperduti, D. Bacciu",
        "Autoencoder-based "
        "Initialization for Recurrent Neural Networks with a Linear Memory",
        "2020",
    ),
    (
        "Carta et al. 2021",
        "A. Carta, A. Sperduti, D. Bacciu",
        "Encoding-based Memory Modules for Recurrent Neural Networks",
        "journal version, 2021",
    ),
    (
        "Helfrich & Ye 2020",
        "K. Helfrich, Q. Ye",
        "Eigenvalue Normalized Recurrent Neural Networks for Short Term Memory",
        "AAAI 2020",
    ),
)


def _spread(values: list[float]) -> str:
    """``mean ± sample std`` of the finite values (NaN ones counted apart)."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return "n/a"
    mean = sum(finite) / len(finite)
    text = _fmt(mean)
    if len(finite) > 1:
        var = sum((v - mean) ** 2 for v in finite) / (len(finite) - 1)
        text += f" ± {_fmt(math.sqrt(var))}"
    if len(finite) < len(values):
        text += f" ({len(values) - len(finite)} of {len(values)} runs failed)"
    return text


def merge_seeds(results: list[ExperimentResult]) -> ExperimentResult:
    """One result from the runs of an experiment with different seeds.

    Rows are matched by task, model and metric (in the first run's order):
    ``value`` becomes the mean of the finite values, ``values`` keeps them
    all, and the note is the first run's (marked with its seed when the
    notes differ). Claims are matched by text: a claim is reproduced when it
    holds on every seed, not reproduced when it holds on none, and
    otherwise not distinguishable (``reproduced=None``, ``seeds_holding``
    counts the seeds); the details of every seed are kept. Plots and set-up
    notes are the first run's; ``seconds`` and ``cpu_seconds`` are sums.
    Runs that failed (``error`` set) are left out of the rows and claims;
    their seeds and causes go to the merged ``error``.

    Parameters
    ----------
    results : list of ExperimentResult
        The runs, in the order of their seeds (``results[i].seeds`` is
        ``[seed_i]``).

    Returns
    -------
    merged : ExperimentResult

    Examples
    --------
    >>> runs = [ExperimentResult("x", rows=[Row("t", "LMN", "acc", v)],
    ...                          claims=[Claim("LMN wins", v > 0.5, f"{v}")],
    ...                          seeds=[s])
    ...         for s, v in enumerate([0.6, 0.4, 0.7])]
    >>> merged = merge_seeds(runs)
    >>> merged.rows[0].values, round(merged.rows[0].value, 3)
    ([0.6, 0.4, 0.7], 0.567)
    >>> merged.claims[0].reproduced, merged.claims[0].seeds_holding
    (None, (2, 3))
    """
    if len(results) == 1:
        return results[0]
    failed = [r for r in results if r.error]
    error = "; ".join(f"seed {r.seeds[0]}: {r.error}" for r in failed)
    totals = dict(
        seconds=sum(r.seconds for r in results),
        cpu_seconds=sum(r.cpu_seconds for r in results),
        max_rss_mb=max(r.max_rss_mb for r in results),
    )
    results = [r for r in results if not r.error]
    if not results:
        return ExperimentResult(
            failed[0].name,
            seeds=[r.seeds[0] for r in failed],
            notes=list(failed[0].notes),
            error=error,
            data=failed[0].data,
            **totals,
        )
    first = results[0]
    seeds = [r.seeds[0] for r in results]
    merged = ExperimentResult(
        first.name,
        plots=list(first.plots),
        seeds=seeds,
        notes=list(first.notes)
        + [f"seed {r.seeds[0]}: {n}" for r in failed for n in r.notes],
        error=error,
        data=first.data,
        **totals,
    )
    for row in first.rows:
        key = (row.task, row.model, row.metric)
        same = [
            next((x for x in r.rows if (x.task, x.model, x.metric) == key), None)
            for r in results
        ]
        values = [float("nan") if x is None else float(x.value) for x in same]
        finite = [v for v in values if not math.isnan(v)]
        notes = {x.note for x in same if x is not None}
        note = row.note
        if len(notes) > 1:
            note = f"{row.note} [seed {seeds[0]}]" if row.note else ""
        merged.rows.append(
            Row(
                row.task,
                row.model,
                row.metric,
                sum(finite) / len(finite) if finite else float("nan"),
                row.paper,
                note,
                values=values,
            )
        )
    for claim in first.claims:
        same = [
            next((c for c in r.claims if c.text == claim.text), None) for r in results
        ]
        verdicts = [None if c is None else c.reproduced for c in same]
        found = [(s, c.detail) for s, c in zip(seeds, same, strict=True) if c]
        if len({d for _, d in found}) == 1:
            details = f"{found[0][1]} (every seed)"
        else:
            details = " — ".join(f"seed {s}: {d}" for s, d in found)
        budget = "; ".join(
            f"seed {s}: {c.budget_limited}"
            for s, c in zip(seeds, same, strict=True)
            if c and c.budget_limited
        )
        if any(v is None for v in verdicts):
            merged.claims.append(
                Claim(
                    claim.text,
                    None,
                    details,
                    claim.smaller_than_paper,
                    budget_limited=budget,
                )
            )
            continue
        k = sum(bool(v) for v in verdicts)
        reproduced = True if k == len(verdicts) else False if k == 0 else None
        merged.claims.append(
            Claim(
                claim.text,
                reproduced,
                details,
                claim.smaller_than_paper,
                seeds_holding=(k, len(verdicts)),
                budget_limited=budget if k < len(verdicts) else "",
            )
        )
    return merged


def format_markdown(
    results: list[ExperimentResult],
    preset: str,
    events: list[PoolEvent] | None = None,
    full_only=(),
    report_dir=None,
) -> str:
    """Render results as the Markdown report written by the runner.

    Parameters
    ----------
    results : list of ExperimentResult
        Results of the experiments that ran.
    preset : str
        Preset name, written in the header.
    events : list of PoolEvent, default=None
        What the worker pool did (restarted or killed workers), listed with
        the failed runs.
    full_only : iterable of str, default=()
        Experiments of the full preset only: under another preset the claim
        items they test say so.
    report_dir : str or Path, default=None
        Folder the report is written to: the plots are linked by their path
        relative to it (a plot of a later seed, kept when the first seed
        failed, lies in its ``seed<k>/`` subfolder). None: by file name.

    Returns
    -------
    text : str

    Examples
    --------
    >>> res = ExperimentResult("x", rows=[Row("task", "LMN", "acc (%)", 50.0, "50")],
    ...                        claims=[Claim("|a - b| < 1", True, "|a - b| = 0")])
    >>> text = format_markdown([res], "quick")
    >>> print(text.splitlines()[6])
    | task | LMN | acc (%) | 50 | 50 |  |
    >>> print([line for line in text.splitlines() if "| yes |" in line][0])
    | \\|a - b\\| < 1 | yes | \\|a - b\\| = 0 |
    """
    lines = [f"# sklmn benchmark results (preset: {preset})", ""]
    lines += [
        "Each row: a model's test score (the metric column gives the unit; the "
        "paper column is in the same unit) with the weights of the epoch the "
        "experiment's selection rule kept (see the set-ups below); with "
        "several seeds, the mean ± the sample standard deviation over the "
        "seeds (model initialization and batch order; the data are the same "
        "for every seed).",
        "",
        "| task | model | metric | sklmn | paper | note |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        for r in res.rows:
            value = _spread(r.values) if len(r.values) > 1 else _fmt(r.value)
            cells = (r.task, r.model, r.metric, value, r.paper, r.note)
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += _failures(results, events or [])
    claims = [c for res in results for c in res.claims]
    if claims:
        lines += ["", "## Claims of the papers", ""]
        lines += [
            'A claim is reproduced ("yes") when the threshold or ordering '
            "stated in its text holds for the measured test scores — with "
            'several seeds, on every seed; "**no**" when it holds on none; '
            '"not distinguishable" when it holds on some seeds only (the '
            'difference is within the seed-to-seed spread); "not '
            'tested at this size" marks a claim this preset measures on a '
            "smaller problem than the paper's (the outcome there is only a "
            'detail); "budget-limited" a claim missed within a stated '
            "fraction of the paper's training budget while the learning "
            "curve was still improving.",
            "",
        ]
        lines += ["| claim | reproduced | detail |", "|---|---|---|"]
        for c in claims:
            verdict, detail = claim_verdict(c)
            lines.append(f"| {_cell(c.text)} | {verdict} | {_cell(detail)} |")
    lines += [""] + claim_items_table(results, full_only=full_only, preset=preset)
    if any(res.data for res in results):
        lines += ["", "## Data", ""]
        lines += [
            "The papers' own data sets are used when `--data-dir` holds them "
            "(layout: `python -m sklmn.benchmarks --help`), their offline "
            "stand-ins otherwise.",
            "",
            "| experiment | data |",
            "|---|---|",
        ]
        for res in results:
            data = res.data or "generated or bundled (no real-data counterpart)"
            lines.append(f"| {res.name} | {_cell(data)} |")
    notes = [(res.name, n) for res in results for n in res.notes]
    if notes:
        lines += ["", "## Set-ups: selection rules and deviations from the papers", ""]
        for res in results:
            if res.notes:
                lines.append(f"- **{res.name}**")
                lines += [f"  - {n}" for n in res.notes]
    lines += ["", "## Time per experiment", ""]
    lines += [
        "Wall seconds of training and evaluation and the CPU seconds they "
        "took, summed over the seeds (each run on one worker with one torch "
        "thread; on a busy machine the wall time grows, the CPU time does "
        "not), and the peak memory of the process that ran them.",
        "",
        "| experiment | seeds | seconds | CPU seconds | peak memory (MB) |",
        "|---|---|---|---|---|",
    ]
    for res in results:
        seeds = ", ".join(str(s) for s in res.seeds)
        lines.append(
            f"| {res.name} | {seeds} | {res.seconds:.1f} | {res.cpu_seconds:.1f} "
            f"| {res.max_rss_mb:.0f} |"
        )
    if results:
        wall = sum(r.seconds for r in results)
        cpu = sum(r.cpu_seconds for r in results)
        lines.append(f"| all | | {wall:.1f} | {cpu:.1f} | |")
    lines.append("")
    plots = [p for res in results for p in res.plots]
    if plots:
        lines += ["## Plots", ""]
        if any(len(res.seeds) > 1 for res in results):
            lines += ["Plots of the first seed of each experiment.", ""]
        for p in plots:
            link = p.name
            if report_dir is not None:
                link = Path(os.path.relpath(p, report_dir)).as_posix()
            lines += [f"![{p.stem.replace('_', ' ')}]({link})", ""]
    lines += ["## Papers", ""]
    lines += [f"- {k}: {who}. *{title}*. {venue}." for k, who, title, venue in PAPERS]
    lines += ["", "## Environment", "", environment_line()]
    return "\n".join(lines) + "\n"


def _failures(results, events) -> list[str]:
    """The report's section on failed runs and on the worker pool."""
    failed = [r for r in results if r.error]
    if not failed and not events:
        return []
    lines = ["", "## Failures and worker events", ""]
    for r in failed:
        lines.append(f"- **{r.name}** failed: {_cell(r.error)}")
        lines += [f"  - {_cell(n)}" for n in r.notes if "traceback" in n]
    for e in events:
        runs = f" (runs: {', '.join(e.runs)})" if e.runs else ""
        lines.append(f"- {_cell(e.what)}{runs}: {_cell(e.cause)}")
    return lines


def environment_line() -> str:
    """Library versions, CPU and thread counts of the machine running a report.

    Returns
    -------
    line : str

    Examples
    --------
    >>> "torch" in environment_line() and "threads" in environment_line()
    True
    """
    import os
    import platform

    import numpy as np
    import sklearn
    import skorch
    import torch

    from .. import __version__

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if "model name" in ln]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return (
        f"sklmn {__version__}, Python {platform.python_version()}, torch "
        f"{torch.__version__}, skorch {skorch.__version__}, scikit-learn "
        f"{sklearn.__version__}, numpy {np.__version__}; CPU: {cpu}, "
        f"{os.cpu_count()} logical cores (torch default {torch.get_num_threads()} "
        "threads; each experiment trains its models with one torch thread)."
    )


def _write_json(path: Path, results, runs, preset: str) -> None:
    """The raw records next to the report: every seed's rows, claims and
    notes (``runs``) and the merged results, as JSON."""
    import dataclasses
    import json

    def record(res: ExperimentResult) -> dict:
        out = dataclasses.asdict(res)
        out["plots"] = [str(p) for p in res.plots]
        return out

    payload = {
        "preset": preset,
        "merged": [record(r) for r in results],
        "runs": {
            name: [record(r) for r in seed_runs]
            for name, seed_runs in runs.items()
            if seed_runs
        },
    }
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")


def _with_data_dir(fn, data_dir: Path):
    """``fn`` with ``data_dir`` bound when it takes that keyword (a picklable
    partial, so worker processes receive it)."""
    if "data_dir" not in inspect.signature(fn).parameters:
        return fn
    return functools.partial(fn, data_dir=data_dir)


def _seed_list(seeds) -> list[int]:
    """The seeds as a list of ints, checked integers, distinct, non-empty and
    >= 0."""
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be a sequence of ints, got {seeds!r}.")
    seeds = list(seeds)
    bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, Integral)]
    if bad:  # int() truncated 0.5 and read '1' as 1
        raise ValueError(f"seeds must be integers, got {bad[0]!r} in {seeds}.")
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}.")
    if min(seeds) < 0:
        raise ValueError(f"seeds must be >= 0 (numpy seeds), got {seeds}.")
    return seeds


def run_experiments(
    experiments: Mapping[str, tuple[ExperimentFn, str]],
    preset: str = "quick",
    *,
    only: list[str] | None = None,
    output_dir: str | Path = "benchmark_results",
    log: Callable[[str], None] = print,
    seeds=(0, 1, 2),
    n_jobs: int = 1,
    progress: bool = False,
    costs: Mapping[str, tuple[int, float]] | None = None,
    data_dir: str | Path | None = None,
    full_only=(),
) -> list[ExperimentResult]:
    """Run experiments and write ``results.md`` and plots.

    Parameters
    ----------
    experiments : mapping
        Name -> (``fn(preset, output_dir, log, *, seed=0) -> ExperimentResult``,
        one-line description), in the order to run them (see
        :data:`sklmn.benchmarks.EXPERIMENTS`).
    preset : {'quick', 'full'}, default='quick'
        Problem sizes and training budgets: ``quick`` runs in minutes on two
        CPU cores, ``full`` reproduces the recorded results.
    only : list of str, default=None
        Names of the experiments to run (all when None).
    output_dir : str or Path, default='benchmark_results'
        Folder for ``results.md``, ``results.json`` (the raw records of
        every seed and the merged results) and the PNG plots (the first
        seed's; the other seeds' plots go to ``seed<k>/`` subfolders).
    log : callable, default=print
        Progress sink (the workers' log lines come back to it).
    seeds : sequence of int or mapping, default=(0, 1, 2)
        Seeds of the models (initialization, batch order); every experiment
        runs once per seed and the report gives the mean ± the spread, and a
        claim's verdict over the seeds (see :func:`merge_seeds`). A mapping
        name -> seeds gives each experiment its own (every experiment run
        must be in it).
    n_jobs : int, default=1
        Runs in parallel, in worker processes (each experiment trains with
        one torch thread).
    progress : bool, default=False
        Show progress bars (overall, with the estimated remaining time, and
        one per running experiment) on stderr.
    costs : mapping, default=None
        name -> (expected fits, expected seconds on one core) of each
        experiment, which weigh the progress bars (see
        :data:`sklmn.benchmarks._experiments.COSTS`).
    data_dir : str, Path or None, default=None
        Folder holding the papers' own data sets (layout in
        :mod:`sklmn.benchmarks._real_data`): passed as ``data_dir`` to the
        experiments whose function takes it, which then use the data found
        there instead of their stand-in. The report's "Data" section says
        which data each experiment used.
    full_only : iterable of str, default=()
        Experiments of the full preset only (see
        :data:`sklmn.benchmarks._experiments.FULL_ONLY`): the report's claim
        items say so under another preset.

    Returns
    -------
    results : list of ExperimentResult
        One per experiment, merged over the seeds. An experiment that failed
        (an exception, or its worker killed) has ``error`` set and is
        reported with its cause; the other experiments still run.

    Examples
    --------
    >>> def noop(preset, output_dir, log, *, seed=0):
    ...     return ExperimentResult("noop")
    >>> run_experiments({"noop": (noop, "does nothing")}, "quick", only=["nope"])
    Traceback (most recent call last):
    ...
    ValueError: unknown experiment(s) ['nope']; known: ['noop'].
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}.")
    per_name = seeds if isinstance(seeds, Mapping) else None
    if per_name is None:
        seeds = _seed_list(seeds)
    if int(n_jobs) < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}.")
    if data_dir is not None:
        data_dir = Path(data_dir)
        if not data_dir.is_dir():
            raise ValueError(f"data_dir must be a folder, got {str(data_dir)!r}.")
        experiments = {
            name: (_with_data_dir(fn, data_dir), text)
            for name, (fn, text) in experiments.items()
        }
    names = list(experiments) if only is None else list(only)
    unknown = [n for n in names if n not in experiments]
    if unknown:
        raise ValueError(
            f"unknown experiment(s) {unknown}; known: {sorted(experiments)}."
        )
    if per_name is None:
        seeds_of = {name: seeds for name in names}
    else:
        missing = [n for n in names if n not in per_name]
        if missing:
            raise ValueError(f"seeds has no entry for experiment(s) {missing}.")
        seeds_of = {name: _seed_list(per_name[name]) for name in names}
        seeds = list(dict.fromkeys(s for n in names for s in seeds_of[n]))
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    from ._plotting import pyplot

    if pyplot() is None:
        log(
            "matplotlib is not installed: the report is written without plots "
            "(pip install 'sklmn[plot]' to get them)"
        )

    def folder(seed: int) -> Path:
        if seed == seeds[0]:
            return output_dir
        path = output_dir / f"seed{seed}"
        path.mkdir(exist_ok=True)
        return path

    tasks = [(name, seed) for name in names for seed in seeds_of[name]]
    n_jobs = min(int(n_jobs), len(tasks))
    t_all = time.perf_counter()
    if all(seeds_of[n] == seeds for n in names):
        log(
            f"{len(names)} experiment(s) x {len(seeds)} seed(s) {seeds} = "
            f"{len(tasks)} run(s), {n_jobs} at a time"
        )
    else:
        groups: dict[tuple[int, ...], list[str]] = {}
        for n in names:
            groups.setdefault(tuple(seeds_of[n]), []).append(n)
        log(
            f"{len(names)} experiment(s), {len(tasks)} run(s) (seeds "
            + "; ".join(f"{list(g)} for {', '.join(ns)}" for g, ns in groups.items())
            + f"), {n_jobs} at a time"
        )
    bars = RunProgress(tasks, costs or {}, log, enabled=progress)
    if len(seeds) == 1:  # log lines name the experiment only
        bars.label = lambda name, seed: name
    events: list[PoolEvent] = []
    runs: dict[str, list[ExperimentResult]] = {name: [] for name in names}
    merged: dict[str, ExperimentResult] = {}
    try:
        for res in execute_runs(
            experiments, tasks, preset, folder, n_jobs, bars, events
        ):
            runs[res.name].append(res)
            if len(runs[res.name]) < len(seeds_of[res.name]):
                continue
            order = {seed: i for i, seed in enumerate(seeds_of[res.name])}
            merged[res.name] = merge_seeds(
                sorted(runs[res.name], key=lambda r: order[r.seeds[0]])
            )
            done = merged[res.name]
            status = (
                f"FAILED ({done.error})" if done.error and not done.rows else "done"
            )
            bars.write(
                f"{done.name} {status} in {done.seconds:.1f} s "
                f"({done.cpu_seconds:.1f} CPU s, all seeds)"
            )
            # rewrite the report after every experiment: partial results survive
            results = [merged[n] for n in names if n in merged]
            (output_dir / "results.md").write_text(
                format_markdown(results, preset, events, full_only, output_dir)
            )
            _write_json(output_dir / "results.json", results, runs, preset)
    finally:
        bars.close()
    results = [merged[n] for n in names if n in merged]
    (output_dir / "results.md").write_text(
        format_markdown(results, preset, events, full_only, output_dir)
    )
    _write_json(output_dir / "results.json", results, runs, preset)
    cpu = sum(r.cpu_seconds for r in results)
    log(
        f"all done in {time.perf_counter() - t_all:.1f} s ({cpu:.1f} CPU s in the "
        f"experiments); report: {output_dir / 'results.md'}"
    )
    failed = [r.name for r in results if r.error]
    if failed or events:
        log(
            f"failed runs: {', '.join(failed) or 'none'}; worker events: "
            f"{len(events)} (see the report's 'Failures and worker events')"
        )
    return results
