"""The training loss and the natural score of raw outputs.

One definition of each, shared by training, validation, early stopping and
pretraining: :class:`SequenceLoss` (mean loss over valid targets, optionally
weighted) and :func:`score_outputs` (accuracy, frame-level accuracy, R^2 or
one minus the label error rate, over valid entries).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import r2_score
from torch import Tensor, nn

from ..metrics import _frame_level_accuracy_counts
from ..nn._padding import mask_from_lengths
from ..utils.sequences import lengths_to_mask
from ._ctc import edit_distance_counts, greedy_decode

__all__ = [
    "IGNORE_INDEX",
    "PROBLEMS",
    "SequenceLoss",
    "ctc_entries",
    "ctc_terms",
    "rows_loss",
    "rows_score",
    "score_outputs",
    "score_valid_entries",
    "valid_entries",
]

#: Class index at padded steps of per-time-step multiclass targets
#: (``torch.nn.functional.cross_entropy``'s default ``ignore_index``), and
#: the entries after the end of a CTC label sequence.
IGNORE_INDEX = -100

PROBLEMS = ("multiclass", "multilabel", "continuous", "ctc")


def ctc_terms(y_pred: Tensor, y_true: Tensor, lengths: Tensor) -> Tensor:
    """Per-sequence CTC loss ``-log p(labels | x)`` (Graves et al. 2006).

    Parameters
    ----------
    y_pred : Tensor of shape (N, T, n_classes + 1)
        Per-step logits; the last output is the blank.
    y_true : Tensor of shape (N, S)
        Label indices, negative (``IGNORE_INDEX``) after the end of every
        label sequence.
    lengths : Tensor of shape (N,)
        Valid input lengths (steps beyond are padding and never read).

    Returns
    -------
    terms : Tensor of shape (N,)
    """
    log_probs = F.log_softmax(y_pred, dim=-1).transpose(0, 1)  # (T, N, C)
    valid = y_true >= 0
    targets = torch.where(valid, y_true, 0)
    return F.ctc_loss(
        log_probs,
        targets,
        lengths.to(device=y_pred.device, dtype=torch.int64),
        valid.sum(dim=1).to(torch.int64),
        blank=y_pred.shape[-1] - 1,
        reduction="none",
        zero_infinity=False,
    )


class SequenceLoss(nn.Module):
    """Mean loss over valid targets.

    Parameters
    ----------
    problem : {'multiclass', 'multilabel', 'continuous', 'ctc'}
        Cross-entropy on logits, binary cross-entropy on logits, squared
        error, or the connectionist temporal classification loss of
        per-step logits against label sequences (:func:`ctc_terms`, one term
        per sequence).
    per_step : bool, default=False
        Targets have a time axis; padded steps (``t >= lengths[n]``) are
        excluded from the mean.

    With ``sample_weight`` (one weight per sequence ``(N,)``, or per time step
    ``(N, T)`` for per-step targets) the loss is the weighted mean
    ``sum(w * loss) / sum(w)`` over the valid entries (outputs of a
    multilabel or regression target share their entry's weight); without,
    the plain mean.
    """

    def __init__(self, problem: str = "multiclass", per_step: bool = False):
        super().__init__()
        if problem not in PROBLEMS:
            raise ValueError(f"problem must be one of {PROBLEMS}, got {problem!r}")
        self.problem = problem
        self.per_step = per_step

    def forward(
        self,
        y_pred: Tensor,
        y_true: Tensor,
        lengths: Tensor,
        sample_weight: Tensor | None = None,
    ) -> Tensor:
        if self.problem == "ctc":
            terms = ctc_terms(y_pred, y_true, lengths)
            if sample_weight is None:
                return terms.mean()
            weight = sample_weight.to(device=y_pred.device, dtype=terms.dtype)
            total = (terms * weight).sum()
            return total / weight.sum().clamp_min(torch.finfo(terms.dtype).tiny)
        if sample_weight is not None:
            return self._weighted(y_pred, y_true, lengths, sample_weight)
        if self.problem == "multiclass":
            if y_pred.dim() != 2:  # per step: (N, T, C) scores, (N, T) labels
                y_pred = y_pred.reshape(-1, y_pred.shape[-1])
                y_true = y_true.reshape(-1)
            # padded steps carry IGNORE_INDEX and drop out of the mean
            return F.cross_entropy(y_pred, y_true, ignore_index=IGNORE_INDEX)
        if self.problem == "multilabel":
            elementwise = F.binary_cross_entropy_with_logits(
                y_pred, y_true, reduction="none"
            )
        else:
            elementwise = F.mse_loss(y_pred, y_true, reduction="none")
        if not self.per_step:
            return elementwise.mean()
        mask = mask_from_lengths(lengths, y_pred.shape[1], device=y_pred.device)
        mask = mask.unsqueeze(-1).expand_as(elementwise)
        return torch.where(mask, elementwise, 0.0).sum() / mask.sum()

    def _weighted(self, y_pred, y_true, lengths, weight: Tensor) -> Tensor:
        weight = weight.to(device=y_pred.device, dtype=y_pred.dtype)
        if self.problem == "multiclass":
            # padded steps carry IGNORE_INDEX (loss 0) and weight 0
            terms = F.cross_entropy(
                y_pred.reshape(-1, y_pred.shape[-1]),
                y_true.reshape(-1),
                ignore_index=IGNORE_INDEX,
                reduction="none",
            )
            weight = weight.reshape(-1)
            total = (terms * weight).sum()
            denominator = weight.sum()
        else:
            if self.problem == "multilabel":
                terms = F.binary_cross_entropy_with_logits(
                    y_pred, y_true, reduction="none"
                )
            else:
                terms = F.mse_loss(y_pred, y_true, reduction="none")
            if self.per_step:
                mask = mask_from_lengths(lengths, y_pred.shape[1], device=y_pred.device)
                weight = torch.where(mask, weight, 0.0)
                terms = torch.where(mask.unsqueeze(-1), terms, 0.0)
            total = (terms * weight.unsqueeze(-1)).sum()
            denominator = weight.sum() * terms.shape[-1]
        # a batch of zero-weight entries contributes a zero loss
        return total / denominator.clamp_min(torch.finfo(y_pred.dtype).tiny)


def valid_entries(
    per_step: bool, y_true: np.ndarray, outputs: np.ndarray, lengths, weight=None
):
    """Targets and outputs restricted to valid entries (steps or sequences).

    Per-step arrays ``(n, T, ...)`` become ``(n_valid_steps, ...)``; padded
    steps are dropped. Sequence-level arrays are returned as they are. With
    ``weight`` (``(n,)`` or ``(n, T)``) also returns the weights of the valid
    entries.
    """
    if not per_step:
        return (y_true, outputs) if weight is None else (y_true, outputs, weight)
    mask = lengths_to_mask(lengths, outputs.shape[1])
    out = y_true[:, : outputs.shape[1]][mask], outputs[mask]
    if weight is None:
        return out
    return (*out, valid_weights(weight, lengths, outputs.shape[1], per_step))


def valid_weights(weight, lengths, n_steps: int, per_step: bool) -> np.ndarray:
    """The weights of the valid entries, in the order of :func:`valid_entries`.

    ``weight``: one per sequence ``(n,)`` or per time step ``(n, T)``;
    sequence-level entries keep it as it is, per-step entries get the weight
    of each valid step among the first ``n_steps`` (a sequence's weight
    repeated over its steps).
    """
    weight = np.asarray(weight)
    if not per_step:
        return weight
    mask = lengths_to_mask(lengths, n_steps)
    if weight.ndim == 1:
        weight = np.broadcast_to(weight[:, None], mask.shape)
    return weight[:, :n_steps][mask]


def ctc_entries(y_true: np.ndarray, outputs: np.ndarray, lengths, weight=None):
    """Reference lengths and edit distances of best-path decodings.

    The ``(y_valid, outputs_valid[, weight])`` of :func:`valid_entries` for a
    CTC target: per sequence, the length of the label sequence ``y_true``
    (encoded, negative after its end) and the edit distance of the
    best-path decoding of ``outputs`` (``(n, T, n_classes + 1)`` logits,
    blank last) to it, so that :func:`score_valid_entries` gives
    ``1 - label_error_rate``.
    """
    decoded = greedy_decode(outputs, lengths, blank=outputs.shape[-1] - 1)
    errors, ref_lengths = edit_distance_counts(y_true, decoded)
    if weight is None:
        return ref_lengths, errors
    return ref_lengths, errors, np.asarray(weight, dtype=np.float64)


def score_valid_entries(
    problem: str, per_step: bool, y_true, outputs, sample_weight=None
) -> float:
    """Natural score of raw outputs at valid entries (see :func:`score_outputs`)."""
    w = sample_weight
    if w is not None and not np.asarray(w).sum() > 0:
        w = None  # no weight at all: unweighted
    if problem == "ctc":
        # y_true: reference lengths, outputs: edit distances (ctc_entries)
        w = np.ones(len(y_true)) if w is None else np.asarray(w, dtype=np.float64)
        total = float(np.dot(w, y_true))
        errors = float(np.dot(w, outputs))
        return 1.0 - errors / total if total > 0 else float(errors == 0)
    if problem == "multiclass":
        return float(np.average(outputs.argmax(axis=-1) == y_true, weights=w))
    if problem == "multilabel":
        pred = (outputs > 0).astype(np.float32)
        if per_step:
            return _frame_level_accuracy_counts(y_true, pred, sample_weight=w)
        return float(np.average(np.all(pred == y_true, axis=1), weights=w))
    if not np.isfinite(outputs).all():
        # weights that diverged: NaN for the stopping rule and the divergence
        # guard to handle (scikit-learn's r2_score refuses such outputs)
        return float("nan")
    return float(r2_score(y_true, outputs, sample_weight=w))


def score_outputs(
    problem: str,
    per_step: bool,
    y_true: np.ndarray,
    outputs: np.ndarray,
    lengths,
    sample_weight=None,
) -> float:
    """Natural score of raw outputs against encoded targets.

    Accuracy (subset accuracy for multilabel sequence targets), per-step
    accuracy over valid steps, frame-level accuracy for multilabel per-step
    targets, R^2 over valid steps for regression; weighted by
    ``sample_weight`` (``(n,)`` or ``(n, T)``) when given.
    """
    if problem == "ctc":
        entries = ctc_entries(y_true, outputs, lengths, sample_weight)
        return score_valid_entries(problem, per_step, *entries)
    if sample_weight is None:
        y_valid, out_valid = valid_entries(per_step, y_true, outputs, lengths)
        return score_valid_entries(problem, per_step, y_valid, out_valid)
    y_valid, out_valid, w = valid_entries(
        per_step, y_true, outputs, lengths, sample_weight
    )
    return score_valid_entries(problem, per_step, y_valid, out_valid, w)


def rows_loss(
    outputs: np.ndarray,
    targets: np.ndarray,
    problem: str,
    sample_weight: np.ndarray | None = None,
) -> float:
    """The :class:`SequenceLoss` of output rows, one entry per row.

    For the pretrainers' least-squares readouts, whose features and targets
    are rows of valid entries. ``targets``: one-hot rows or class indices
    (multiclass), 0/1 indicator rows (multilabel), values (continuous);
    ``sample_weight``: one weight per row (the weighted mean), or None.
    """
    targets = np.asarray(targets)
    if problem == "multiclass":
        if targets.ndim == 2:
            targets = targets.argmax(axis=1)
        y = torch.as_tensor(targets, dtype=torch.int64)
    else:
        y = torch.as_tensor(targets, dtype=torch.float64)
    out = torch.as_tensor(np.asarray(outputs, dtype=np.float64))
    weight = (
        None
        if sample_weight is None
        else torch.as_tensor(np.asarray(sample_weight, dtype=np.float64))
    )
    with torch.no_grad():
        return float(SequenceLoss(problem)(out, y, None, sample_weight=weight))


def rows_score(
    outputs: np.ndarray, targets: np.ndarray, problem: str, per_step: bool
) -> float:
    """The natural score (:func:`score_valid_entries`) of output rows.

    ``targets`` as in :func:`rows_loss`; multilabel targets may be -1/1
    (the label is on where the target is positive).
    """
    targets = np.asarray(targets)
    if problem == "multiclass" and targets.ndim == 2:
        targets = targets.argmax(axis=1)
    elif problem == "multilabel":
        targets = (targets > 0).astype(np.float32)
    return score_valid_entries(problem, per_step, targets, np.asarray(outputs))
