"""What a fit hands to its plug-ins: the frozen :class:`FitContext`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..utils.sequences import Sequences
from ._loss import PROBLEMS

__all__ = ["FitContext"]

_MONITORS = ("train_loss", "valid_loss", "valid_score")


@dataclass(frozen=True)
class FitContext:
    """The data and settings of one ``fit``, as its plug-ins see them.

    Pretrainers (``initialize(module, context)``) and growth schedules
    (``make_callback(context, *, max_modules)``) receive this object, never
    the estimator: everything they may read about the fit is here, and
    nothing they do to it reaches the estimator (the object is frozen).

    Parameters
    ----------
    problem : {'multiclass', 'multilabel', 'continuous', 'ctc'}
        Kind of target, which fixes the loss: cross-entropy on logits, binary
        cross-entropy on logits, squared error or the CTC loss.
    per_step : bool
        Whether the targets have a time axis (``target='timestep'``).
    n_outputs : int
        Readout units of the network.
    sequences : Sequences
        The training sequences as the network sees them (padded float32
        data and lengths, after the estimator's ``standardize`` scaling);
        without the sequences held out for validation.
    y : ndarray
        The encoded training targets the loss compares the network's outputs
        with (class indices, indicator rows, standardized regression targets
        or padded label sequences; ``IGNORE_INDEX`` at padded steps).
    warm_start : bool, default=False
        Whether the fit continues a fitted model (pretrainers are not run
        then).
    monitor : {'train_loss', 'valid_loss', 'valid_score'}, default='train_loss'
        The quantity the estimator's stopping rule monitors.
    tol : float, default=1e-4
        The stopping rule's minimum improvement.
    n_iter_no_change : int, default=10
        The stopping rule's patience in epochs.
    sample_weight : ndarray of shape (n_samples,) or (n_samples, max_length) \
or None, default=None
        Weights of the training loss's terms (``sample_weight`` times the
        class weights), per sequence or, for per-step targets, per step (zero
        at padding), normalized to mean one over the valid entries; None when
        every term weighs the same. A pretrainer that fits a readout should
        weight its rows with them, so that the start minimizes the loss that
        training goes on to minimize.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.training import FitContext
    >>> from sklmn.utils.sequences import check_sequences
    >>> seqs = check_sequences(np.zeros((4, 3, 2)))
    >>> context = FitContext("multiclass", False, 2, seqs, np.array([0, 1, 0, 1]))
    >>> context.sequences.n_samples, context.monitor
    (4, 'train_loss')
    """

    problem: str
    per_step: bool
    n_outputs: int
    sequences: Sequences
    y: np.ndarray
    warm_start: bool = False
    monitor: str = "train_loss"
    tol: float = 1e-4
    n_iter_no_change: int = 10
    sample_weight: np.ndarray | None = None

    def __post_init__(self):
        if self.problem not in PROBLEMS:
            raise ValueError(f"problem must be one of {PROBLEMS}, got {self.problem!r}")
        if self.monitor not in _MONITORS:
            raise ValueError(
                f"monitor must be one of {_MONITORS}, got {self.monitor!r}"
            )
        if len(self.y) != self.sequences.n_samples:
            raise ValueError(
                f"y has {len(self.y)} rows for {self.sequences.n_samples} sequences"
            )
        if self.sample_weight is not None and (
            len(self.sample_weight) != self.sequences.n_samples
        ):
            raise ValueError(
                f"sample_weight has {len(self.sample_weight)} rows for "
                f"{self.sequences.n_samples} sequences"
            )
