"""Results, presets, report writing and the run loop of the experiment runner.

The experiments themselves are listed in :mod:`sklmn.benchmarks._experiments`,
which passes them to :func:`run_experiments`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Row:
    """One line of the results table: a model's score on a task."""

    task: str
    model: str
    metric: str
    value: float
    paper: str = ""
    note: str = ""
    #: the value of every seed when several ran (``value`` is their mean)
    values: list[float] = field(default_factory=list)


@dataclass
class Claim:
    """A claim of the papers checked by an experiment.

    ``text`` states the claim with its threshold (e.g. ">= 95%", "MSE <
    0.05") or ordering; ``reproduced`` is the verdict on the measured values
    (None: not checked, e.g. a missing component). A non-empty
    ``smaller_than_paper`` says why this preset does not test the claim at
    the paper's size (e.g. "T = 30; the paper: T = 100, 500"): the report
    then says "not tested at this size" and shows the measured outcome only
    as a detail.
    """

    text: str
    reproduced: bool | None  # None: not checked in this preset
    detail: str = ""
    smaller_than_paper: str = ""
    #: ``(k, n)`` when several seeds ran: the claim held on ``k`` of them
    #: (``reproduced`` is then True for ``k == n``, False for ``k == 0`` and
    #: None otherwise: not distinguishable)
    seeds_holding: tuple[int, int] | None = None


@dataclass
class ExperimentResult:
    """Everything an experiment reports."""

    name: str
    rows: list[Row] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    #: the seeds that ran (model initialization and batch order; the data
    #: are the same for every seed)
    seeds: list[int] = field(default_factory=lambda: [0])
    #: set-up notes: model selection rule, thresholds, remaining deviations
    #: from the paper's set-up with their reasons
    notes: list[str] = field(default_factory=list)


#: ``fn(preset, output_dir, log, *, seed=0) -> ExperimentResult``
ExperimentFn = Callable[..., ExperimentResult]


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

_VERDICTS = {True: "yes", False: "**no**", None: "not checked"}


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
    notes are the first run's; ``seconds`` is the sum.

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
    first = results[0]
    if len(results) == 1:
        return first
    seeds = [r.seeds[0] for r in results]
    merged = ExperimentResult(
        first.name,
        plots=list(first.plots),
        seconds=sum(r.seconds for r in results),
        seeds=seeds,
        notes=list(first.notes),
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
        if any(v is None for v in verdicts):
            merged.claims.append(
                Claim(claim.text, None, details, claim.smaller_than_paper)
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
            )
        )
    return merged


def format_markdown(results: list[ExperimentResult], preset: str) -> str:
    """Render results as the Markdown report written by the runner.

    Parameters
    ----------
    results : list of ExperimentResult
        Results of the experiments that ran.
    preset : str
        Preset name, written in the header.

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
            "detail).",
            "",
        ]
        lines += ["| claim | reproduced | detail |", "|---|---|---|"]
        for c in claims:
            verdict, detail = _VERDICTS[c.reproduced], c.detail
            if c.seeds_holding is not None:
                k, n = c.seeds_holding
                if c.reproduced is None:
                    verdict = f"not distinguishable (holds on {k} of {n} seeds)"
                else:
                    verdict += f" ({k} of {n} seeds)"
            if c.smaller_than_paper:
                measured = {
                    True: "holds",
                    False: "does not hold",
                    None: "n/a" if c.seeds_holding is None else "is mixed",
                }
                detail = (
                    f"{c.smaller_than_paper}; at this size the claim "
                    f"{measured[c.reproduced]}: {detail}"
                )
                verdict = "not tested at this size"
            lines.append(f"| {_cell(c.text)} | {verdict} | {_cell(detail)} |")
    notes = [(res.name, n) for res in results for n in res.notes]
    if notes:
        lines += ["", "## Set-ups: selection rules and deviations from the papers", ""]
        for res in results:
            if res.notes:
                lines.append(f"- **{res.name}**")
                lines += [f"  - {n}" for n in res.notes]
    lines += ["", "## Time per experiment", ""]
    lines += [
        "Seconds of training and evaluation, summed over the seeds (each "
        "run on one worker with one torch thread).",
        "",
        "| experiment | seeds | seconds |",
        "|---|---|---|",
    ]
    for res in results:
        seeds = ", ".join(str(s) for s in res.seeds)
        lines.append(f"| {res.name} | {seeds} | {res.seconds:.1f} |")
    plots = [p for res in results for p in res.plots]
    if plots:
        lines += ["", "## Plots", ""]
        if any(len(res.seeds) > 1 for res in results):
            lines += ["Plots of the first seed of each experiment.", ""]
        for p in plots:
            lines += [f"![{p.stem.replace('_', ' ')}]({p.name})", ""]
    lines += ["## Papers", ""]
    lines += [f"- {k}: {who}. *{title}*. {venue}." for k, who, title, venue in PAPERS]
    lines += ["", "## Environment", "", environment_line()]
    return "\n".join(lines) + "\n"


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


def _run_one(fn, preset, output_dir, seed, log):
    """One run of one experiment (in the runner's process or a worker)."""
    t0 = time.perf_counter()
    res = fn(preset, output_dir, log, seed=seed)
    res.seconds = time.perf_counter() - t0
    res.seeds = [seed]
    return res


def _print(label: str, msg: str) -> None:  # a picklable log sink for workers
    print(f"    {label}: {msg}", flush=True)


def run_experiments(
    experiments: Mapping[str, tuple[ExperimentFn, str]],
    preset: str = "quick",
    *,
    only: list[str] | None = None,
    output_dir: str | Path = "benchmark_results",
    log: Callable[[str], None] = print,
    seeds=(0, 1, 2),
    n_jobs: int = 1,
) -> list[ExperimentResult]:
    """Run experiments and write ``results.md`` and plots.

    Parameters
    ----------
    experiments : mapping
        Name -> (``fn(preset, output_dir, log, *, seed=0) -> ExperimentResult``,
        one-line description), in the order to run them (see
        :data:`sklmn.benchmarks.EXPERIMENTS`).
    preset : {'quick', 'full'}, default='quick'
        Problem sizes and training budgets: ``quick`` runs in about ten minutes
        on two CPU cores, ``full`` reproduces the README table.
    only : list of str, default=None
        Names of the experiments to run (all when None).
    output_dir : str or Path, default='benchmark_results'
        Folder for ``results.md`` and the PNG plots (the first seed's; the
        other seeds' plots go to ``seed<k>/`` subfolders).
    log : callable, default=print
        Progress sink (with ``n_jobs > 1`` the workers print their progress
        instead).
    seeds : sequence of int, default=(0, 1, 2)
        Seeds of the models (initialization, batch order); every experiment
        runs once per seed and the report gives the mean ± the spread, and a
        claim's verdict over the seeds (see :func:`merge_seeds`).
    n_jobs : int, default=1
        Runs in parallel, in worker processes (each experiment trains with
        one torch thread).

    Returns
    -------
    results : list of ExperimentResult
        One per experiment, merged over the seeds.

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
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}.")
    if int(n_jobs) < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}.")
    names = list(experiments) if only is None else list(only)
    unknown = [n for n in names if n not in experiments]
    if unknown:
        raise ValueError(
            f"unknown experiment(s) {unknown}; known: {sorted(experiments)}."
        )
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

    tasks = [(name, seed) for name in names for seed in seeds]
    t_all = time.perf_counter()
    log(
        f"{len(names)} experiment(s) x {len(seeds)} seed(s) {seeds} = "
        f"{len(tasks)} run(s), {n_jobs} at a time"
    )
    if n_jobs == 1:

        def runs():
            for i, (name, seed) in enumerate(tasks, 1):
                fn, description = experiments[name]
                label = name if len(seeds) == 1 else f"{name} (seed {seed})"
                log(f"[{i}/{len(tasks)}] {label}: {description}")
                res = _run_one(
                    fn,
                    preset,
                    folder(seed),
                    seed,
                    lambda msg, _label=label: log(f"    {_label}: {msg}"),
                )
                log(f"[{i}/{len(tasks)}] {label} done in {res.seconds:.1f} s")
                yield res

        stream = runs()
    else:
        from joblib import Parallel, delayed

        stream = Parallel(n_jobs=int(n_jobs), return_as="generator")(
            delayed(_run_one)(
                experiments[name][0],
                preset,
                folder(seed),
                seed,
                functools.partial(_print, f"{name} (seed {seed})"),
            )
            for name, seed in tasks
        )
    results: list[ExperimentResult] = []
    runs_of: list[ExperimentResult] = []
    for res in stream:
        runs_of.append(res)
        if len(runs_of) == len(seeds):
            results.append(merge_seeds(runs_of))
            runs_of = []
            # rewrite the report after every experiment: partial results survive
            (output_dir / "results.md").write_text(format_markdown(results, preset))
            if n_jobs > 1:
                log(f"{results[-1].name} done ({results[-1].seconds:.1f} s, all seeds)")
    log(
        f"all done in {time.perf_counter() - t_all:.1f} s; report: "
        f"{output_dir / 'results.md'}"
    )
    return results
