"""Test helper: the :class:`~sklmn.training.FitContext` of plain data."""

import numpy as np

from sklmn.training import FitContext


def fit_context(seqs, y, problem="multiclass", per_step=False, n_outputs=1):
    """A fit context for calling a pretrainer directly."""
    return FitContext(problem, per_step, n_outputs, seqs, np.asarray(y))
