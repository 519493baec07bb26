"""The one command of every benchmark: ``python -m sklmn.benchmarks``.

- ``--suite papers`` (the default) runs the papers' experiments
  (:mod:`sklmn.benchmarks._experiments`);
- ``--suite timeseries`` fits the library's models on UCR/UEA/TSER datasets
  and reports them next to published baselines
  (:mod:`sklmn.benchmarks._timeseries`);
- ``bench NAME [ARGS]`` runs one performance or design measurement
  (:mod:`sklmn.benchmarks._bench`; ``bench`` alone lists them).
"""

from __future__ import annotations

import argparse
import os
import sys

from ._bench import SCRIPTS, run_script
from ._experiments import EXPERIMENTS, FULL_ONLY, default_seeds, run_benchmarks
from ._runner import _seed_list as _papers_seed_list

SUITES = ("papers", "timeseries")
_TIMESERIES_OPTIONS = (
    "datasets",
    "models",
    "tuning",
    "max_fit_seconds",
    "force",
    "report_only",
)
_PAPERS_OPTIONS = ("preset", "only", "no_progress", "data_dir")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sklmn.benchmarks",
        description="Run the papers' experiments on bundled data (--suite papers, "
        "the default) or the time-series suite (--suite timeseries), and write a "
        "Markdown report; or run one measurement: `python -m sklmn.benchmarks "
        "bench NAME [ARGS]` (`bench` alone lists them).",
    )
    parser.add_argument(
        "--suite",
        choices=SUITES,
        default="papers",
        help="papers: the papers' experiments on bundled offline data; "
        "timeseries: the library's models on public UCR/UEA/TSER datasets "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--output-dir",
        default="benchmark_results",
        metavar="DIR",
        help="folder for the Markdown report (papers: with its PNG plots; "
        "timeseries: with the JSON records); created if missing "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the experiments (papers; those of the full preset only "
        "marked) or the datasets, models and variants (timeseries), then exit",
    )
    papers = parser.add_argument_group("papers suite")
    papers.add_argument(
        "--preset",
        choices=("quick", "full"),
        default=None,
        help="problem sizes and training budgets: quick (one seed, a few "
        "minutes on 2 CPU cores: one result per claim) or full (three seeds, "
        "five where one seed's run takes under a minute; the recorded "
        "results) (default: quick)",
    )
    papers.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="run only these experiments, named as by --list (default: all)",
    )
    papers.add_argument(
        "--data-dir",
        metavar="DIR",
        help="folder holding the papers' own data sets: DIR/music/JSB "
        "Chorales.pickle (and MuseData, Nottingham, Piano-midi.de .pickle), "
        "DIR/mnist/ (the four IDX files), DIR/timit/ (TRAIN/, TEST/), "
        "DIR/iam-ondb/ (lineStrokes/, ascii/, split lists), DIR/ptb/ "
        "(ptb.char.*.txt or ptb.*.txt); each experiment uses the data found "
        "there and its offline stand-in otherwise, and the report says which "
        "(default: the stand-ins)",
    )
    both = parser.add_argument_group("both suites")
    seeds = both.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="seeds 0..N-1 for every experiment (default: papers 1 with "
        "--preset quick; with --preset full 3, or 5 for the experiments whose "
        "run of one seed takes under a minute; time series 5)",
    )
    seeds.add_argument(
        "--seed-list",
        nargs="+",
        type=int,
        metavar="SEED",
        help="run exactly these seeds (instead of --seeds)",
    )
    both.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="parallel worker processes, 1 torch thread each (default 2)",
    )
    papers.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (overall with the remaining time, and per "
        "experiment, on stderr); the log lines stay",
    )
    ts = parser.add_argument_group("timeseries suite")
    ts.add_argument(
        "--datasets",
        nargs="+",
        metavar="NAME",
        help="run only these datasets, named as by --list (default: all)",
    )
    ts.add_argument(
        "--models",
        nargs="+",
        metavar="NAME[:PARAM=VALUE,...]",
        help="registry names, optionally with parameter overrides, e.g. "
        "lmn:learning_rate_init=0.003 or "
        "\"mslmn:fine_tuning=ProjectionFineTuning(lr=0.003)\" (values: Python "
        "literals, or IncrementalTraining/ProjectionFineTuning with literal "
        "keyword arguments; default: all)",
    )
    ts.add_argument(
        "--tuning",
        action="store_true",
        help="the tuning subset: BasicMotions, ItalyPowerDemand, ArrowHead, 2 seeds "
        "(explicit --datasets/--seeds win); report timeseries_tuning.md",
    )
    ts.add_argument(
        "--max-fit-seconds",
        type=float,
        default=None,
        metavar="SECONDS",
        help="flag fits slower than this in the report (not stopped; default 300)",
    )
    ts.add_argument(
        "--force",
        action="store_true",
        help="refit results already in the JSON file (by default a rerun keeps "
        "them and fits only the missing or failed ones)",
    )
    ts.add_argument(
        "--report-only",
        action="store_true",
        help="fit nothing: write the report of the selection from the results "
        "already in the JSON file (missing fits show as fewer seeds)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the selected suite; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        return _main_bench(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    # "is": a value of 0 (== False) was taken for an option not given
    given = {k for k, v in vars(args).items() if v is not None and v is not False}
    if args.suite == "papers":
        wrong = sorted(given & set(_TIMESERIES_OPTIONS))
    else:
        wrong = sorted(given & set(_PAPERS_OPTIONS))
    if wrong:
        flags = ", ".join("--" + w.replace("_", "-") for w in wrong)
        other = SUITES[1 - SUITES.index(args.suite)]
        parser.error(f"{flags}: only with --suite {other}")
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        parser.error(f"--output-dir {args.output_dir!r} is a file, not a folder")
    if args.suite == "timeseries":
        if args.force and args.report_only:
            parser.error("--force refits, --report-only fits nothing: give one")
        return _main_timeseries(args, parser)

    if args.list:
        for name, (_, description) in EXPERIMENTS.items():
            only = " [--preset full only]" if name in FULL_ONLY else ""
            print(f"{name:24s} {description}{only}")
        return 0
    preset = args.preset or "quick"
    if args.seed_list:
        seeds = list(args.seed_list)
    elif args.seeds is not None:
        if args.seeds < 1:
            parser.error(f"--seeds must be >= 1, got {args.seeds}")
        seeds = list(range(args.seeds))
    else:  # each experiment's own
        seeds = default_seeds(preset)
    jobs = 2 if args.jobs is None else args.jobs
    if isinstance(seeds, list):
        try:  # the runner's own check, as a usage error
            _papers_seed_list(seeds)
        except ValueError as exc:
            parser.error(f"the {exc}")
    if jobs < 1:
        parser.error(f"--jobs must be >= 1, got {jobs}")
    if args.data_dir is not None and not os.path.isdir(args.data_dir):
        parser.error(f"--data-dir {args.data_dir!r} is not a folder")
    if args.only:
        unknown = sorted(set(args.only) - set(EXPERIMENTS))
        if unknown:
            parser.error(
                f"--only: unknown experiment(s) {unknown}; known (see --list): "
                f"{', '.join(EXPERIMENTS)}"
            )
        full_only = sorted(set(args.only) & FULL_ONLY)
        if preset != "full" and full_only:
            parser.error(
                f"--only: experiment(s) {full_only} run in the full preset only "
                "(add --preset full)"
            )
    results = run_benchmarks(
        preset,
        only=args.only,
        output_dir=args.output_dir,
        seeds=seeds,
        n_jobs=jobs,
        progress=not args.no_progress,
        data_dir=args.data_dir,
    )
    return 1 if any(r.error for r in results) else 0


def _main_bench(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(
            "usage: python -m sklmn.benchmarks bench NAME [ARGS]  "
            "(NAME --help: its ARGS)"
        )
        print("benchmarks:")
        for name, (_, description) in SCRIPTS.items():
            print(f"  {name:22s} {description}")
        return 0
    if argv[0] not in SCRIPTS:
        print(
            f"python -m sklmn.benchmarks bench: unknown benchmark {argv[0]!r}; "
            f"known: {', '.join(SCRIPTS)}",
            file=sys.stderr,
        )
        return 2
    return run_script(argv[0], argv[1:])


def _main_timeseries(args, parser) -> int:
    from ._timeseries import (
        DATASETS,
        MODELS,
        TUNING_DATASETS,
        TUNING_SEEDS,
        VARIANTS,
        model_registry_for,
        run_timeseries_suite,
    )

    if args.list:
        print("datasets:")
        for name, ds in DATASETS.items():
            print(f"  {name:18s} {ds.task:15s} {ds.description}")
        print("models:")
        for name, factories in MODELS.items():
            print(f"  {name:18s} {', '.join(factories)}")
        print("variants (run only when named with --models):")
        for name, factories in VARIANTS.items():
            print(f"  {name:18s} {', '.join(factories)}")
        return 0
    datasets = args.datasets
    seeds = args.seed_list if args.seed_list else args.seeds
    name = "timeseries"
    if args.tuning:
        datasets = list(TUNING_DATASETS) if datasets is None else datasets
        seeds = TUNING_SEEDS if seeds is None else seeds
        name = "timeseries_tuning"
    from ._timeseries.runner import (
        _check_overrides,
        _seed_list,
        _select_datasets,
        _select_models,
    )

    seeds = 5 if seeds is None else seeds
    try:  # argument errors are usage errors; the run itself never raises them
        selected = _select_datasets(datasets, DATASETS)
        registry = model_registry_for(args.models)
        _check_overrides(
            _select_models(args.models, registry),
            registry,
            {DATASETS[d].task for d in selected},
        )
        _seed_list(seeds)
        if args.jobs is not None and args.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
        if args.max_fit_seconds is not None and not args.max_fit_seconds > 0:
            raise ValueError(
                f"--max-fit-seconds must be > 0, got {args.max_fit_seconds}"
            )
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    run_timeseries_suite(
        datasets=datasets,
        models=args.models,
        seeds=seeds,
        jobs=2 if args.jobs is None else args.jobs,
        output_dir=args.output_dir,
        name=name,
        force=args.force,
        report_only=args.report_only,
        max_fit_seconds=300.0 if args.max_fit_seconds is None else args.max_fit_seconds,
        model_registry=model_registry_for(args.models),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
