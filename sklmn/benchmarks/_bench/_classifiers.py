"""What the benchmarks that fit the default LMN classifiers on the
time-series suite's sets share: the models, their command-line arguments
and the test accuracy."""

from __future__ import annotations

import numpy as np

from ...estimators import LMNClassifier, MultiScaleLMNClassifier

__all__ = ["CLASSIFIERS", "add_fit_arguments", "accuracy"]

#: ``--models`` name -> classifier
CLASSIFIERS = {"lmn": LMNClassifier, "mslmn": MultiScaleLMNClassifier}


def add_fit_arguments(parser) -> None:
    """Add ``--models``, ``--datasets`` and ``--seeds`` to ``parser``."""
    parser.add_argument(
        "--models", nargs="+", choices=sorted(CLASSIFIERS), default=["lmn"]
    )
    parser.add_argument("--datasets", nargs="+", default=["ArrowHead"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])


def accuracy(est, X, y) -> float:
    """Share of the sequences of ``X`` that ``est`` predicts right."""
    return float(np.mean(np.asarray(est.predict(X)) == np.asarray(y)))
