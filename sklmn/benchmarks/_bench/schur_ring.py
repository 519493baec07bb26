"""The ring start of the ``'schur'`` memory, measured through the time-series
suite: the suite run with the LMN's (or the multi-scale LMN's) ring replaced.

Usage::

    python -m sklmn.benchmarks bench schur-ring --module lmn \\
        --ring 0.9 0.999 0.05 -- --suite timeseries \\
        --datasets BasicMotions ItalyPowerDemand ArrowHead --seeds 5 \\
        --jobs 1 --models "lmn:pretrainer=None" --output-dir DIR

``--ring R_MIN R_MAX PHASE``: eigenvalue moduli uniform on the ring
``[R_MIN, R_MAX]`` (squared moduli uniform, as in Orvieto et al. 2023),
angles uniform in ``[0, PHASE * pi]``; ``--module`` picks the ring of the
LMN (``lmn``) or of the multi-scale LMN (``mslmn``). The arguments after
``--`` are the suite's (``python -m sklmn.benchmarks --help``); the
report and the JSON records land in its ``--output-dir``. The suite runs
in this process (``--jobs 1``: worker processes would import the
unpatched ring). The patched ring is the model's own ring, which
``memory_ring='auto'`` may replace by another; pass
``memory_ring=None`` in the model spec (``"lmn:pretrainer=None,
memory_ring=None"``) to train every fit on the patched ring. (An
estimator's ``memory_ring`` sets the ring of one fit without this bench.)
"""

from __future__ import annotations

import argparse
import math
import runpy
import sys

from ...nn import _lmn_schur

__all__ = ["main"]

_RING_NAMES = {"lmn": "_SCHUR_RING", "mslmn": "_MULTISCALE_SCHUR_RING"}


def main(argv: list[str] | None = None) -> int:
    """Run the suite with the patched ring; see the module docstring.

    Examples
    --------
    >>> main(["--module", "lmn", "--ring", "0.9", "1.5", "0.05", "--"])
    Traceback (most recent call last):
    ...
    ValueError: need 0 <= r_min <= r_max < 1 and phase in [0, 1], got (0.9, 1.5, 0.05)
    """
    argv = list(argv or [])
    own, suite = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if (
        "--" in argv
    ) else (argv, [])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", choices=sorted(_RING_NAMES), default="lmn")
    parser.add_argument(
        "--ring", nargs=3, type=float, metavar=("R_MIN", "R_MAX", "PHASE"),
        required=True,
    )
    args = parser.parse_args(own)
    r_min, r_max, phase = args.ring
    if not (0 <= r_min <= r_max < 1 and 0 <= phase <= 1):
        raise ValueError(
            "need 0 <= r_min <= r_max < 1 and phase in [0, 1], got "
            f"{tuple(args.ring)}"
        )
    if "--jobs" in suite and suite[suite.index("--jobs") + 1] != "1":
        raise ValueError(
            "run the suite with --jobs 1 (workers import the default ring)"
        )
    name = _RING_NAMES[args.module]
    saved, saved_argv = getattr(_lmn_schur, name), sys.argv
    setattr(_lmn_schur, name, (r_min, r_max, phase * math.pi))
    sys.argv = ["python -m sklmn.benchmarks", *suite]
    try:
        # the suite's command line, run in this process (the patched ring)
        runpy.run_module("sklmn.benchmarks", run_name="__main__")
    except SystemExit as stop:
        return int(stop.code or 0)
    finally:
        setattr(_lmn_schur, name, saved)
        sys.argv = saved_argv
    return 0
