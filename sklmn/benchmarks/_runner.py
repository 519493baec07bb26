"""Results, presets, report writing and the run loop of the experiment runner.

The experiments themselves are listed in :mod:`sklmn.benchmarks._experiments`,
which passes them to :func:`run_experiments`.
"""

from __future__ import annotations

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


@dataclass
class ExperimentResult:
    """Everything an experiment reports."""

    name: str
    rows: list[Row] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    #: set-up notes: model selection rule, thresholds, remaining deviations
    #: from the paper's set-up with their reasons
    notes: list[str] = field(default_factory=list)


ExperimentFn = Callable[[str, Path, Callable[[str], None]], ExperimentResult]


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
        "experiment's selection rule kept (see the set-ups below).",
        "",
        "| task | model | metric | sklmn | paper | note |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        for r in res.rows:
            cells = (r.task, r.model, r.metric, _fmt(r.value), r.paper, r.note)
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    claims = [c for res in results for c in res.claims]
    if claims:
        lines += ["", "## Claims of the papers", ""]
        lines += [
            'A claim is reproduced ("yes") when the threshold or ordering '
            'stated in its text holds for the measured test scores; "not '
            'tested at this size" marks a claim this preset measures on a '
            "smaller problem than the paper's (the outcome there is only a "
            "detail).",
            "",
        ]
        lines += ["| claim | reproduced | detail |", "|---|---|---|"]
        for c in claims:
            verdict, detail = _VERDICTS[c.reproduced], c.detail
            if c.smaller_than_paper:
                measured = {True: "holds", False: "does not hold", None: "n/a"}
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
    lines += ["| experiment | seconds |", "|---|---|"]
    for res in results:
        lines.append(f"| {res.name} | {res.seconds:.1f} |")
    plots = [p for res in results for p in res.plots]
    if plots:
        lines += ["", "## Plots", ""]
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


def run_experiments(
    experiments: Mapping[str, tuple[ExperimentFn, str]],
    preset: str = "quick",
    *,
    only: list[str] | None = None,
    output_dir: str | Path = "benchmark_results",
    log: Callable[[str], None] = print,
) -> list[ExperimentResult]:
    """Run experiments and write ``results.md`` and plots.

    Parameters
    ----------
    experiments : mapping
        Name -> (``fn(preset, output_dir, log) -> ExperimentResult``, one-line
        description), in the order to run them (see
        :data:`sklmn.benchmarks.EXPERIMENTS`).
    preset : {'quick', 'full'}, default='quick'
        Problem sizes and training budgets: ``quick`` runs in about ten minutes
        on two CPU cores, ``full`` reproduces the README table.
    only : list of str, default=None
        Names of the experiments to run (all when None).
    output_dir : str or Path, default='benchmark_results'
        Folder for ``results.md`` and the PNG plots.
    log : callable, default=print
        Progress sink.

    Returns
    -------
    results : list of ExperimentResult

    Examples
    --------
    >>> def noop(preset, output_dir, log):
    ...     return ExperimentResult("noop")
    >>> run_experiments({"noop": (noop, "does nothing")}, "quick", only=["nope"])
    Traceback (most recent call last):
    ...
    ValueError: unknown experiment(s) ['nope']; known: ['noop'].
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}.")
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
    results = []
    t_all = time.perf_counter()
    for i, name in enumerate(names, 1):
        fn, description = experiments[name]
        log(f"[{i}/{len(names)}] {name}: {description}")
        t0 = time.perf_counter()
        res = fn(preset, output_dir, lambda msg, _n=name: log(f"    {_n}: {msg}"))
        res.seconds = time.perf_counter() - t0
        log(f"[{i}/{len(names)}] {name} done in {res.seconds:.1f} s")
        results.append(res)
        # rewrite the report after every experiment: partial results survive
        (output_dir / "results.md").write_text(format_markdown(results, preset))
    log(
        f"all done in {time.perf_counter() - t_all:.1f} s; report: "
        f"{output_dir / 'results.md'}"
    )
    return results
