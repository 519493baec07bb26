"""Registry, presets and report writing of the experiment runner."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Claim",
    "ExperimentResult",
    "Row",
    "EXPERIMENTS",
    "register",
    "run_benchmarks",
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
    """A claim of the papers checked by an experiment."""

    text: str
    reproduced: bool | None  # None: not checked in this preset
    detail: str = ""


@dataclass
class ExperimentResult:
    """Everything an experiment reports."""

    name: str
    rows: list[Row] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    seconds: float = 0.0


ExperimentFn = Callable[[str, Path, Callable[[str], None]], ExperimentResult]

#: name -> (function, one-line description); filled by :func:`register`.
EXPERIMENTS: dict[str, tuple[ExperimentFn, str]] = {}


def register(name: str, description: str):
    """Register an experiment ``fn(preset, output_dir, log) -> ExperimentResult``.

    Parameters
    ----------
    name : str
        Identifier used on the command line (``--only NAME``).
    description : str
        One line shown by ``--list``.

    Returns
    -------
    decorator : callable

    Examples
    --------
    >>> from sklmn.benchmarks._runner import EXPERIMENTS, register
    >>> @register("demo-noop", "does nothing")
    ... def _noop(preset, output_dir, log):
    ...     return ExperimentResult("demo-noop")
    >>> "demo-noop" in EXPERIMENTS
    True
    >>> del EXPERIMENTS["demo-noop"]
    """

    def decorator(fn: ExperimentFn) -> ExperimentFn:
        EXPERIMENTS[name] = (fn, description)
        return fn

    return decorator


def _fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.4g}"
    return f"{value:.3e}"


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
    >>> res = ExperimentResult("x", rows=[Row("task", "LMN", "acc", 0.5, "50")])
    >>> print(format_markdown([res], "quick").splitlines()[4])
    | task | LMN | acc | 0.5 | 50 |  |
    """
    lines = [f"# sklmn benchmark results (preset: {preset})", ""]
    lines += [
        "| task | model | metric | sklmn | paper | note |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        for r in res.rows:
            lines.append(
                f"| {r.task} | {r.model} | {r.metric} | {_fmt(r.value)} | "
                f"{r.paper} | {r.note} |"
            )
    claims = [c for res in results for c in res.claims]
    if claims:
        lines += ["", "## Claims of the papers", ""]
        lines += ["| claim | reproduced | detail |", "|---|---|---|"]
        for c in claims:
            verdict = {True: "yes", False: "**no**", None: "not checked"}[c.reproduced]
            lines.append(f"| {c.text} | {verdict} | {c.detail} |")
    lines += ["", "## Time per experiment", ""]
    lines += ["| experiment | seconds |", "|---|---|"]
    for res in results:
        lines.append(f"| {res.name} | {res.seconds:.1f} |")
    plots = [p for res in results for p in res.plots]
    if plots:
        lines += ["", "## Plots", ""]
        lines += [f"- `{p.name}`" for p in plots]
    return "\n".join(lines) + "\n"


def run_benchmarks(
    preset: str = "quick",
    *,
    only: list[str] | None = None,
    output_dir: str | Path = "benchmark_results",
    log: Callable[[str], None] = print,
) -> list[ExperimentResult]:
    """Run the registered experiments and write ``results.md`` and plots.

    Parameters
    ----------
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
    >>> from sklmn.benchmarks import run_benchmarks
    >>> run_benchmarks("quick", only=["nope"])
    Traceback (most recent call last):
    ...
    ValueError: unknown experiment(s) ['nope']; known: ...
    """
    from . import _experiments  # noqa: F401  (registers the experiments)

    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}.")
    names = list(EXPERIMENTS) if only is None else list(only)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(
            f"unknown experiment(s) {unknown}; known: {sorted(EXPERIMENTS)}."
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
        fn, description = EXPERIMENTS[name]
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
