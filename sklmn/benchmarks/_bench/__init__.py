"""Performance and design benchmarks: ``python -m sklmn.benchmarks bench NAME``.

Each module of this package is one measurement with its own command line
(``main(argv)``); it prints a Markdown table. The recorded results, with the
command that produced each, are in ``benchmarks/README.md`` and
``docs/training.md``.
"""

from __future__ import annotations

import sys

from . import (  # noqa: F401 - run_script looks the modules up in globals()
    adding_small,
    anchor,
    check_gpu,
    chorales_pretraining,
    claim_tables,
    copy_budget,
    enrnn,
    enrnn_controls,
    enrnn_split,
    epoch_time,
    finetuning,
    fit_overhead,
    init_radius,
    laes,
    large_sets,
    layout_rule,
    lmn_controls,
    memory_hindsight,
    ms_redundancy,
    recurrence,
    regressor_start,
    ring_cv,
    schur_ring,
    spline_choice,
    stable_memory,
    stable_memory_report,
    stable_memory_speed,
    start_neighbours,
    threads,
    validation,
)

__all__ = ["SCRIPTS", "run_script"]

#: command name -> (module of this package, one-line description)
SCRIPTS: dict[str, tuple[str, str]] = {
    "laes": ("laes", "time and peak memory of the LAES solvers"),
    "recurrence": (
        "recurrence",
        "forward+backward time of the recurrent modules vs torch.nn",
    ),
    "fit-overhead": (
        "fit_overhead",
        "an estimator's fit against a hand-written torch training loop",
    ),
    "enrnn": ("enrnn", "cost of the ENRNN eigenvalue normalization"),
    "enrnn-controls": (
        "enrnn_controls",
        "the failing ENRNN claims with fresh sequences and a larger budget",
    ),
    "claim-tables": (
        "claim_tables",
        "the recorded reports' claim-item tables rendered again from their JSON",
    ),
    "enrnn-split": (
        "enrnn_split",
        "the ENRNN state split (Fig. 6) at another T, one seed, raw JSON",
    ),
    "lmn-controls": (
        "lmn_controls",
        "the failing LMN-paper claims, one change each, raw JSON",
    ),
    "epoch-time": (
        "epoch_time",
        "epoch time: Schur against free memory, residual against full fine-tuning",
    ),
    "ring-cv": (
        "ring_cv",
        "the Schur memory's ring chosen by GridSearchCV against each ring alone",
    ),
    "init-radius": ("init_radius", "the stable initialization of the LMN memory"),
    "finetuning": ("finetuning", "remedies for fine-tuning a LAES-initialized LMN"),
    "validation": ("validation", "fine-tune a pretrained start, or keep it?"),
    "anchor": ("anchor", "pretrained_alpha on a task the LAES start represents poorly"),
    "adding-small": ("adding_small", "the adding problem with few training sequences"),
    "ms-redundancy": (
        "ms_redundancy",
        "redundancy of the multi-scale LAES start on long univariate series",
    ),
    "regressor-start": ("regressor_start", "the LMN regressor's memory and start"),
    "large-sets": ("large_sets", "the defaults above 1000 training sequences"),
    "copy-budget": ("copy_budget", "the copy task at T = 500 with a longer budget"),
    "chorales-pretraining": (
        "chorales_pretraining",
        "where unrolled pretraining loses on the chorales",
    ),
    "check-gpu": ("check_gpu", "every estimator on a CUDA device, checked and timed"),
    "threads": ("threads", "fit time under each thread setting, idle and contended"),
    "layout-rule": ("layout_rule", "the channels-first warning against both mistakes"),
    "stable-memory": (
        "stable_memory",
        "the Schur memory variants on the time-series suite (JSON lines)",
    ),
    "stable-memory-report": (
        "stable_memory_report",
        "tables of the stable-memory results",
    ),
    "memory-hindsight": (
        "memory_hindsight",
        "test accuracy of every fine-tuning epoch; one step per parameter group",
    ),
    "schur-ring": (
        "schur_ring",
        "the time-series suite with the Schur memory's ring start replaced",
    ),
    "stable-memory-speed": (
        "stable_memory_speed",
        "forward + backward time of the old and the Schur memory",
    ),
    "spline-choice": (
        "spline_choice",
        "the spline readout's margin over the linear one, and each rule's test change",
    ),
    "start-neighbours": (
        "start_neighbours",
        "the start's readout at the penalties around the one it chose",
    ),
}


def run_script(name: str, argv: list[str]) -> int:
    """Run the benchmark ``name`` of :data:`SCRIPTS` with its arguments.

    Parameters
    ----------
    name : str
        Command name, as listed by ``python -m sklmn.benchmarks bench``.
    argv : list of str
        The benchmark's own arguments (``--help`` lists them).

    Returns
    -------
    status : int
        Exit status (0 on success).

    Examples
    --------
    >>> run_script("nope", [])
    Traceback (most recent call last):
    ...
    ValueError: unknown benchmark 'nope'; known: ['adding-small', ...].
    """
    if name not in SCRIPTS:
        raise ValueError(f"unknown benchmark {name!r}; known: {sorted(SCRIPTS)}.")
    module = globals()[SCRIPTS[name][0]]
    previous = sys.argv[0]
    sys.argv[0] = f"python -m sklmn.benchmarks bench {name}"  # argparse's prog
    try:
        status = module.main(list(argv))
    finally:
        sys.argv[0] = previous
    return int(status or 0)
