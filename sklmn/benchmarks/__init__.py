"""The papers' experiments as one command: ``python -m sklmn.benchmarks``.

Each experiment trains sklmn's models on a bundled or generated dataset and
reports its figures next to the papers' numbers in ``results.md`` (plus PNG
plots). ``--preset quick`` takes about ten minutes on two CPU cores; ``--preset
full`` produces the table recorded in the README.
"""

from ._experiments import EXPERIMENTS, run_benchmarks
from ._runner import PRESETS, ExperimentResult

__all__ = ["EXPERIMENTS", "PRESETS", "ExperimentResult", "run_benchmarks"]
