"""The records an experiment returns: rows, claims and the result itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Claim", "ExperimentFn", "ExperimentResult", "Row"]


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
    as a detail. A non-empty ``budget_limited`` marks a claim missed within
    a reduced training budget while the learning curve still improves.
    """

    text: str
    reproduced: bool | None  # None: not checked in this preset
    detail: str = ""
    smaller_than_paper: str = ""
    #: ``(k, n)`` when several seeds ran: the claim held on ``k`` of them
    #: (``reproduced`` is then True for ``k == n``, False for ``k == 0`` and
    #: None otherwise: not distinguishable)
    seeds_holding: tuple[int, int] | None = None
    #: non-empty when the claim was missed within a budget smaller than the
    #: paper's while the learning curve was still improving: the budget as a
    #: fraction of the paper's and the curve (the report's verdict is then
    #: "budget-limited"; an experiment sets it only with both)
    budget_limited: str = ""


@dataclass
class ExperimentResult:
    """Everything an experiment reports.

    An experiment function (``fn(preset, output_dir, log, *, seed=0)``, see
    :data:`~sklmn.benchmarks.EXPERIMENTS`) returns one; the runner merges
    the seeds' results and writes the report.

    Examples
    --------
    >>> from sklmn.benchmarks import ExperimentResult
    >>> from sklmn.benchmarks._results import Claim, Row
    >>> result = ExperimentResult(
    ...     name="adding",
    ...     rows=[Row(task="adding T=100", model="lmn", metric="MSE", value=0.01)],
    ...     claims=[Claim(text="LMN MSE < 0.05", reproduced=True)],
    ... )
    >>> result.rows[0].value, result.claims[0].reproduced, result.error
    (0.01, True, '')
    """

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
    #: why the run failed (the exception, or the end of its worker); empty
    #: when it ran to the end. Merged results list every failed seed.
    error: str = ""
    #: CPU seconds (user + system) of the run's process while it ran,
    #: summed over the seeds
    cpu_seconds: float = 0.0
    #: peak resident memory of the process that ran it (MB; the largest
    #: over the seeds)
    max_rss_mb: float = 0.0
    #: which data the run used (the papers' real data found under
    #: ``--data-dir``, or the stand-in); empty for the generated tasks
    data: str = ""


#: ``fn(preset, output_dir, log, *, seed=0) -> ExperimentResult``
ExperimentFn = Callable[..., ExperimentResult]
