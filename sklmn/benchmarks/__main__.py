"""Command line of the experiment runner (``python -m sklmn.benchmarks``)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the experiments; returns the exit status."""
    from . import _experiments  # noqa: F401  (registers the experiments)
    from ._runner import EXPERIMENTS, PRESETS, run_benchmarks

    parser = argparse.ArgumentParser(
        prog="python -m sklmn.benchmarks",
        description="Run the papers' experiments on bundled data and write a "
        "Markdown report with plots.",
    )
    parser.add_argument("--preset", choices=PRESETS, default="quick")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these experiments"
    )
    parser.add_argument("--output-dir", default="benchmark_results")
    parser.add_argument("--list", action="store_true", help="list experiments")
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, description) in EXPERIMENTS.items():
            print(f"{name:24s} {description}")
        return 0
    run_benchmarks(args.preset, only=args.only, output_dir=args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
