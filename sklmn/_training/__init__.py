"""The training layer: everything between a torch module and a trained one.

Below both :mod:`sklmn.estimators` and :mod:`sklmn.pretraining` (it imports
neither): the network with its readout (:class:`SequenceNet`), the data and
its collation (:class:`SequenceDataset`), the one loss
(:class:`SequenceLoss`) and natural score (:func:`score_outputs`), the skorch
net and the one factory that wires it (:func:`make_sequence_net`), the
training callbacks (:class:`ConvergenceMonitor`...) and the context a fit
hands to its plug-ins (:class:`FitContext`). The public names are
re-exported by :mod:`sklmn.training`.
"""

from ._callbacks import (
    AnchorToStart,
    ConvergenceMonitor,
    ModuleGradientClipping,
    ProgressLogger,
    ValidationScore,
    dataset_loss,
    snapshot_state,
)
from ._context import FitContext
from ._ctc import beam_decode, edit_distance_counts, greedy_decode
from ._data import LengthBucketBatchSampler, SequenceDataset, collate_batch
from ._loss import (
    IGNORE_INDEX,
    PROBLEMS,
    SequenceLoss,
    ctc_entries,
    ctc_terms,
    score_outputs,
    score_valid_entries,
    valid_entries,
)
from ._module import SequenceNet
from ._net import SequenceNeuralNet, TrainingConverged, make_sequence_net
from ._splines import SplineReadout

__all__ = [
    "IGNORE_INDEX",
    "PROBLEMS",
    "AnchorToStart",
    "ConvergenceMonitor",
    "FitContext",
    "LengthBucketBatchSampler",
    "ModuleGradientClipping",
    "ProgressLogger",
    "SequenceDataset",
    "SequenceLoss",
    "SequenceNet",
    "SplineReadout",
    "SequenceNeuralNet",
    "TrainingConverged",
    "ValidationScore",
    "beam_decode",
    "collate_batch",
    "ctc_entries",
    "ctc_terms",
    "dataset_loss",
    "edit_distance_counts",
    "greedy_decode",
    "make_sequence_net",
    "score_outputs",
    "score_valid_entries",
    "snapshot_state",
    "valid_entries",
]
