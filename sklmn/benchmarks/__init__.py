"""Every benchmark of sklmn behind one command: ``python -m sklmn.benchmarks``.

The papers' experiments (the default, ``--suite papers``) train sklmn's
models on bundled or generated datasets and report their figures next to the
papers' numbers in ``results.md`` (plus PNG plots): ``--preset quick`` (the
main job, ``bash dev.sh demo``) keeps one result per claim and runs in
minutes, ``--preset full`` produces the recorded results. ``--suite
timeseries`` runs the time-series suite (:mod:`sklmn.benchmarks._timeseries`)
and ``bench NAME`` one performance or design measurement
(:mod:`sklmn.benchmarks._bench`). Recorded results and their commands:
``benchmarks/`` and the documentation's benchmarks pages.
"""

from ._experiments import EXPERIMENTS, run_benchmarks
from ._runner import PRESETS, ExperimentResult

__all__ = ["EXPERIMENTS", "PRESETS", "ExperimentResult", "run_benchmarks"]
