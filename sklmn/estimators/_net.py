"""Former home of the training pieces, now in :mod:`sklmn._training`.

Kept so that models pickled before the move (whose pickles name
``sklmn.estimators._net.SequenceNet``, ``...SequenceNeuralNet``,
``...ConvergenceMonitor``...) still load; new code imports from
:mod:`sklmn.training` (public) or :mod:`sklmn._training`.
"""

from .._training import (  # noqa: F401
    PROBLEMS,
    ConvergenceMonitor,
    LengthBucketBatchSampler,
    ProgressLogger,
    SequenceDataset,
    SequenceLoss,
    SequenceNet,
    SequenceNeuralNet,
    ValidationScore,
    collate_batch,
    ctc_entries,
    ctc_terms,
    dataset_loss,
    score_outputs,
    score_valid_entries,
    snapshot_state,
    valid_entries,
)
from .._training._loss import IGNORE_INDEX  # noqa: F401

__all__ = [
    "SequenceNet",
    "SequenceDataset",
    "LengthBucketBatchSampler",
    "SequenceLoss",
    "SequenceNeuralNet",
    "ConvergenceMonitor",
    "ProgressLogger",
    "dataset_loss",
    "snapshot_state",
    "ValidationScore",
    "score_outputs",
    "ctc_terms",
    "ctc_entries",
]
