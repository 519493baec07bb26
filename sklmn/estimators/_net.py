"""The torch side of the sequence estimators: readout network, dataset, loss,
the skorch net subclass and the training callbacks.

Nothing here imports scikit-learn estimators; the estimators in this package
compose these pieces in ``fit``.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from skorch import NeuralNet
from skorch.callbacks import Callback, EpochTimer, PassthroughScoring
from skorch.utils import to_tensor
from torch import Tensor, nn

from ..nn._base import gather_last, mask_from_lengths
from ..utils.sequences import lengths_to_mask
from ._targets import IGNORE_INDEX

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


class SequenceNet(nn.Module):
    """A recurrent module followed by a linear readout.

    For sequence-level targets the readout reads the recurrent output at each
    sequence's last valid step; for per-time-step targets it reads every step
    (the loss masks padded steps).

    Parameters
    ----------
    recurrent : nn.Module
        Module following the :mod:`sklmn.nn` protocol
        (``output, state = recurrent(x, lengths=lengths)``, attribute
        ``output_size``, optional ``penalty()``).
    n_outputs : int
        Number of readout units (classes, labels or regression outputs).
    per_step : bool, default=False
        Return one output per time step ``(N, T, n_outputs)`` instead of one
        per sequence ``(N, n_outputs)``.

    Examples
    --------
    >>> import torch
    >>> from sklmn.estimators._net import SequenceNet
    >>> class Identity(torch.nn.Module):
    ...     output_size = 2
    ...
    ...     def forward(self, x, lengths=None):
    ...         return x, None
    >>> net = SequenceNet(Identity(), 3)
    >>> net(torch.zeros(4, 5, 2), lengths=torch.tensor([5, 3, 1, 2])).shape
    torch.Size([4, 3])
    """

    def __init__(self, recurrent: nn.Module, n_outputs: int, *, per_step: bool = False):
        super().__init__()
        self.recurrent = recurrent
        self.readout = nn.Linear(int(recurrent.output_size), int(n_outputs))
        self.per_step = bool(per_step)

    def forward(self, X: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Readout of the recurrent output.

        Parameters
        ----------
        X : Tensor of shape (N, T, input_size)
            Zero-padded batch.
        lengths : Tensor of shape (N,), optional
            Valid lengths.

        Returns
        -------
        outputs : Tensor of shape (N, n_outputs) or (N, T, n_outputs)
            Logits (classification) or predictions (regression).
        """
        output, _ = self.recurrent(X, lengths=lengths)
        if not self.per_step:
            output = gather_last(output, lengths)
        return self.readout(output)

    def penalty(self) -> Tensor:
        """Regularization term of the recurrent module's last forward (or 0)."""
        penalty = getattr(self.recurrent, "penalty", None)
        if penalty is None:
            return self.readout.weight.new_zeros(())
        return penalty()


class SequenceDataset(torch.utils.data.Dataset):
    """Padded sequences, their lengths and encoded targets.

    Batches are fetched whole (``__getitems__``) and trimmed to the longest
    sequence of the batch, so a batch of short sequences costs short
    recurrences. Use :func:`collate_batch` as the DataLoader's ``collate_fn``.

    Parameters
    ----------
    X : Tensor of shape (n, T, d)
        Zero-padded float sequences.
    lengths : Tensor of shape (n,)
        int64 lengths.
    y : Tensor of shape (n, ...) or None
        Encoded targets; per-time-step targets have the time axis second.
    per_step : bool, default=False
        Whether ``y`` has a time axis to trim.
    sample_weight : Tensor of shape (n,) or (n, T) or None, default=None
        Weights of the loss terms: one per sequence, or one per time step
        (zero at padded steps) for per-time-step targets. Batches then carry
        them as ``X["sample_weight"]``.
    """

    def __init__(
        self,
        X: Tensor,
        lengths: Tensor,
        y: Tensor | None = None,
        *,
        per_step=False,
        sample_weight: Tensor | None = None,
    ):
        self.X = X
        self.lengths = lengths
        self.y = y
        self.per_step = per_step
        self.sample_weight = sample_weight

    def __len__(self) -> int:
        return int(self.X.shape[0])

    def __getitems__(self, indices) -> tuple[dict, Tensor]:
        idx = torch.as_tensor(indices, dtype=torch.int64)
        lengths = self.lengths[idx]
        T = int(lengths.max())
        Xb = self.X[idx, :T]
        if self.y is None:
            yb = torch.zeros(len(idx))
        elif self.per_step:
            yb = self.y[idx, :T]
        else:
            yb = self.y[idx]
        batch = {"X": Xb, "lengths": lengths}
        weight = getattr(self, "sample_weight", None)  # absent in old pickles
        if weight is not None:
            weight = weight[idx]
            batch["sample_weight"] = weight[:, :T] if weight.dim() == 2 else weight
        return batch, yb

    def __getitem__(self, i: int):
        (Xb, yb) = self.__getitems__([i])
        return {k: v[0] for k, v in Xb.items()}, yb[0]


class LengthBucketBatchSampler(torch.utils.data.Sampler):
    """Random minibatches of sequences of similar lengths.

    Every epoch shuffles the sequences, cuts the permutation into pools of
    ``pool_batches`` batches, sorts each pool by length (longest first, stable)
    and cuts it into batches, then shuffles the order of all batches. Batches
    trimmed to their longest sequence then waste little compute on padding.

    Parameters
    ----------
    lengths : Tensor of shape (n,)
        Sequence lengths.
    batch_size : int
        Sequences per batch.
    generator : torch.Generator
        Source of randomness (reproducible, global RNG untouched).
    pool_batches : int, default=50
        Batches per sorted pool (larger: more homogeneous lengths, less
        random batch composition).

    Examples
    --------
    >>> import torch
    >>> sampler = LengthBucketBatchSampler(
    ...     torch.tensor([1, 9, 2, 8, 3, 7]), 2, torch.Generator().manual_seed(0)
    ... )
    >>> sorted(sorted(int(l) for l in torch.tensor([1, 9, 2, 8, 3, 7])[b])
    ...        for b in sampler)
    [[1, 2], [3, 7], [8, 9]]
    """

    def __init__(
        self,
        lengths: Tensor,
        batch_size: int,
        generator: torch.Generator,
        pool_batches: int = 50,
    ):
        self.lengths = torch.as_tensor(lengths)
        self.batch_size = int(batch_size)
        self.generator = generator
        self.pool_batches = int(pool_batches)

    def _pools(self) -> list[int]:
        n, pool = len(self.lengths), self.batch_size * self.pool_batches
        return [min(pool, n - start) for start in range(0, n, pool)]

    def __len__(self) -> int:
        return sum(-(-size // self.batch_size) for size in self._pools())

    def __iter__(self):
        perm = torch.randperm(len(self.lengths), generator=self.generator)
        batches, start = [], 0
        for size in self._pools():
            idx = perm[start : start + size]
            start += size
            order = torch.argsort(self.lengths[idx], descending=True, stable=True)
            idx = idx[order]
            batches.extend(
                idx[i : i + self.batch_size].tolist()
                for i in range(0, size, self.batch_size)
            )
        for j in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[j]


def collate_batch(batch):
    """DataLoader ``collate_fn`` for :class:`SequenceDataset` (batch is ready)."""
    return batch


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
            # padded steps carry IGNORE_INDEX and drop out of the mean
            return F.cross_entropy(
                y_pred.reshape(-1, y_pred.shape[-1]),
                y_true.reshape(-1),
                ignore_index=IGNORE_INDEX,
            )
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
    weight = np.asarray(weight)
    if weight.ndim == 1:
        weight = np.broadcast_to(weight[:, None], mask.shape)
    return (*out, weight[:, : outputs.shape[1]][mask])


def ctc_entries(y_true: np.ndarray, outputs: np.ndarray, lengths, weight=None):
    """Reference lengths and edit distances of best-path decodings.

    The ``(y_valid, outputs_valid[, weight])`` of :func:`valid_entries` for a
    CTC target: per sequence, the length of the label sequence ``y_true``
    (encoded, negative after its end) and the edit distance of the
    best-path decoding of ``outputs`` (``(n, T, n_classes + 1)`` logits,
    blank last) to it, so that :func:`score_valid_entries` gives
    ``1 - label_error_rate``.
    """
    from ._ctc import edit_distance_counts, greedy_decode

    decoded = greedy_decode(outputs, lengths, blank=outputs.shape[-1] - 1)
    errors, ref_lengths = edit_distance_counts(y_true, decoded)
    if weight is None:
        return ref_lengths, errors
    return ref_lengths, errors, np.asarray(weight, dtype=np.float64)


def score_valid_entries(
    problem: str, per_step: bool, y_true, outputs, sample_weight=None
) -> float:
    """Natural score of raw outputs at valid entries (see :func:`score_outputs`)."""
    from sklearn.metrics import r2_score

    from ..metrics import _frame_level_accuracy_counts

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


class SequenceNeuralNet(NeuralNet):
    """skorch net training a :class:`SequenceNet` on a :class:`SequenceDataset`.

    Differences from :class:`skorch.NeuralNet`:

    * the loss is ``criterion(y_pred, y_true, lengths) + module.penalty()``
      and a non-finite training loss raises :class:`FloatingPointError`
      naming what diverged, unless a callback's ``on_divergence(net,
      message)`` hook stops training first (see
      :class:`sklmn.callbacks.RestoreOnDivergence`);
    * the training DataLoader shuffles with its own ``torch.Generator``
      seeded by ``shuffle_seed`` (reproducible, global RNG untouched), and
      with ``bucket_by_length`` draws batches of similar lengths
      (:class:`LengthBucketBatchSampler`);
    * no default ``PrintLog`` (the estimators print their own progress);
    * with ``decay_biases=False`` the optimizer's ``weight_decay`` applies to
      weights only: parameters whose name starts with ``bias`` (``bias_h``,
      ``bias_ih_l0``, the readout's ``bias``...) form a group without decay;
    * the ``module`` parameter (an instance) is pickled with the torch-aware
      part of the state, so a net trained on a GPU unpickles on a CPU;
    * a :class:`torch.linalg.LinAlgError` of the forward pass during training
      (a parametrized recurrent matrix that cannot be computed from
      non-finite parameters, e.g. the Cayley transform of an ENRNN) is a
      divergence like a non-finite loss;
    * ``divergence_`` holds the message of a divergence a callback recovered
      from during the last training (None otherwise) and ``interrupted_``
      whether a ``KeyboardInterrupt`` ended it.
    """

    # "module" also covers the module instance passed as parameter
    cuda_dependent_attributes_ = ["module"]

    def __init__(
        self,
        *args,
        shuffle_seed: int = 0,
        bucket_by_length: bool = False,
        decay_biases: bool = True,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.shuffle_seed = shuffle_seed
        self.bucket_by_length = bucket_by_length
        self.decay_biases = decay_biases

    def initialize_optimizer(self, triggered_directly=None):
        named = list(self.get_all_learnable_params())
        (params,), kwargs = self.get_params_for_optimizer("optimizer", named)
        if not self.decay_biases and kwargs.get("weight_decay"):
            names = {id(p): n for n, p in named}
            if params and isinstance(params[0], dict):  # user param groups
                groups = params
            else:
                groups = [{"params": list(params)}]
            split = []
            for group in groups:
                rest = {k: v for k, v in group.items() if k != "params"}
                weights, biases = [], []
                for p in group["params"]:
                    leaf = names.get(id(p), "").rsplit(".", 1)[-1]
                    (biases if leaf.startswith("bias") else weights).append(p)
                if weights:
                    split.append({**rest, "params": weights})
                if biases:
                    split.append({**rest, "params": biases, "weight_decay": 0.0})
            params = split
        self.optimizer_ = self.optimizer(params, **kwargs)
        return self

    @property
    def _default_callbacks(self):
        return [
            ("epoch_timer", EpochTimer()),
            ("train_loss", PassthroughScoring(name="train_loss", on_train=True)),
            ("valid_loss", PassthroughScoring(name="valid_loss")),
        ]

    def get_iterator(self, dataset, training=False):
        prefix = "iterator_train" if training else "iterator_valid"
        kwargs = self.get_params_for(prefix)
        kwargs.setdefault("batch_size", self.batch_size)
        if kwargs["batch_size"] == -1:
            kwargs["batch_size"] = len(dataset)
        # A private generator: reproducible shuffling, and the global RNG is
        # left untouched (a DataLoader otherwise draws its base seed from it).
        generator = torch.Generator().manual_seed(int(self.shuffle_seed))
        iterator = self.iterator_train if training else self.iterator_valid
        if training and self.bucket_by_length:
            sampler = LengthBucketBatchSampler(
                dataset.lengths, kwargs.pop("batch_size"), generator
            )
            kwargs.pop("shuffle", None)
            return iterator(dataset, batch_sampler=sampler, **kwargs)
        return iterator(dataset, generator=generator, **kwargs)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.divergence_ = None
        self.interrupted_ = False
        self._training = True

    def on_train_end(self, net, X=None, y=None, **kwargs):
        self._training = False

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        try:
            return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt:
            # skorch ends training quietly; remember that it was interrupted
            # (by the user, a stopping rule or a divergence recovery)
            self.interrupted_ = True
            raise

    def infer(self, x, **fit_params):
        if isinstance(x, dict) and "sample_weight" in x:
            # the weights are read by get_loss, not by the module
            x = {k: v for k, v in x.items() if k != "sample_weight"}
        try:
            return super().infer(x, **fit_params)
        except torch.linalg.LinAlgError as exc:
            if not getattr(self, "_training", False):
                raise FloatingPointError(
                    f"The recurrent matrix of the model cannot be computed: {exc}"
                ) from None
            epoch = len(self.history)
            batch = max(len(self.history[-1, "batches"]), 1) if epoch else 1
            self.diverged(
                f"Training diverged at epoch {epoch}, batch {batch}: the "
                f"recurrent matrix cannot be computed ({exc}){self._bad_params()}."
                " Try a smaller learning_rate_init, gradient_clipping, or scaled "
                "inputs and targets."
            )
            raise  # pragma: no cover - diverged always raises

    def _bad_params(self) -> str:
        bad = [
            name
            for name, p in self.module_.named_parameters()
            if not bool(torch.isfinite(p).all())
        ]
        if not bad:
            return ""
        return f"; non-finite parameters: {bad[0]!r} ({len(bad)} tensor(s))"

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = to_tensor(y_true, device=self.device)
        weight = X.get("sample_weight") if isinstance(X, dict) else None
        if weight is None:
            data_loss = self.criterion_(y_pred, y_true, X["lengths"])
        else:
            data_loss = self.criterion_(
                y_pred, y_true, X["lengths"], sample_weight=weight
            )
        penalty = self.module_.penalty()
        loss = data_loss + penalty
        if training and not bool(torch.isfinite(loss)):
            self._raise_diverged(data_loss, penalty)
        return loss

    def _raise_diverged(self, data_loss: Tensor, penalty: Tensor) -> None:
        data_loss, penalty = data_loss.detach(), penalty.detach()
        epoch = len(self.history)
        # skorch opens the history row of the current batch in on_batch_begin
        batch = max(len(self.history[-1, "batches"]), 1) if epoch else 1
        bad_params = [
            name
            for name, p in self.module_.named_parameters()
            if not bool(torch.isfinite(p).all())
        ]
        if bad_params:
            what = (
                "the parameters became non-finite after the previous update "
                f"(first: {bad_params[0]!r}, {len(bad_params)} tensor(s))"
            )
        elif not bool(torch.isfinite(data_loss)):
            what = f"the data loss is {float(data_loss)}"
        else:
            what = f"the penalty of the recurrent module is {float(penalty)}"
        message = (
            f"Training diverged at epoch {epoch}, batch {batch}: {what} "
            f"(data loss {float(data_loss)}, penalty {float(penalty)}). Try a "
            "smaller learning_rate_init, gradient_clipping, or scaled inputs "
            "and targets."
        )
        self.diverged(message)

    def diverged(self, message: str) -> None:
        """Report a divergence: callbacks may recover, else raise.

        A callback with an ``on_divergence(net, message)`` method (e.g.
        :class:`sklmn.callbacks.RestoreOnDivergence`) may restore finite
        weights and stop training by raising ``KeyboardInterrupt``;
        otherwise :class:`FloatingPointError` is raised with ``message``.
        The message is kept as ``divergence_``.
        """
        self.divergence_ = message
        for _, callback in self.callbacks_:
            handler = getattr(callback, "on_divergence", None)
            if handler is not None:
                handler(self, message)
        raise FloatingPointError(message)

    def restore_best_weights(self) -> int | None:
        """Load the best weights kept by the stopping rule into the module.

        Every callback with a ``restore_best(net)`` method (the estimators'
        :class:`ConvergenceMonitor`) is asked in turn.

        Returns
        -------
        epoch : int or None
            Epoch of the restored weights (0: the starting weights), or None
            when no callback keeps best weights.
        """
        epoch = None
        for _, callback in self.callbacks_:
            restore = getattr(callback, "restore_best", None)
            if restore is not None:
                epoch = restore(self)
        return epoch

    def predict_outputs(self, dataset: SequenceDataset) -> np.ndarray:
        """Raw module outputs for a whole dataset, as a float64 array.

        On the CPU the forward pass runs on a float64 copy of the module: the
        outputs of one sequence then do not depend on the other sequences of
        its batch (float32 matrix products do, at the 1e-7 level), so
        predictions are invariant to batching and sample order. On a GPU the
        module's own dtype is used. Per-time-step outputs are zero-padded to
        the dataset's padded length.
        """
        self.check_is_fitted()
        module = self.module_
        dtype = next(module.parameters()).dtype
        device = next(module.parameters()).device
        if device.type == "cpu":
            dtype = torch.float64
            module = copy.deepcopy(module).to(dtype)
        module.eval()
        T = int(dataset.X.shape[1])
        chunks = []
        with torch.no_grad():
            for Xb, _ in self.get_iterator(dataset, training=False):
                yp = module(
                    Xb["X"].to(device=device, dtype=dtype),
                    lengths=Xb["lengths"],
                )
                if yp.dim() == 3 and yp.shape[1] < T:
                    yp = F.pad(yp, (0, 0, 0, T - yp.shape[1]))
                chunks.append(yp.to(device="cpu", dtype=torch.float64))
        return torch.cat(chunks).numpy()


class ValidationScore(Callback):
    """Record the natural score on the validation set as ``valid_score``.

    Parameters
    ----------
    problem : {'multiclass', 'multilabel', 'continuous'}
        Kind of target.
    per_step : bool
        Whether targets have a time axis.
    """

    def __init__(self, problem: str, per_step: bool):
        self.problem = problem
        self.per_step = per_step

    def on_epoch_begin(self, net, **kwargs):
        self._y, self._out, self._w = [], [], []

    def on_batch_end(self, net, batch=None, training=False, y_pred=None, **kwargs):
        # score the predictions skorch already made for the validation loss
        # instead of running the validation set through the module again
        if training or y_pred is None:
            return
        Xb, yb = batch
        weight = Xb.get("sample_weight")
        args = (
            yb.cpu().numpy(),
            y_pred.detach().to(device="cpu", dtype=torch.float64).numpy(),
            Xb["lengths"].cpu().numpy(),
            None if weight is None else weight.cpu().numpy().astype(np.float64),
        )
        if self.problem == "ctc":  # reference lengths and edit distances
            entries = ctc_entries(*args)
        else:
            entries = valid_entries(self.per_step, *args)
        self._y.append(entries[0])
        self._out.append(entries[1])
        if weight is not None:
            self._w.append(entries[2])

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        if dataset_valid is None or not self._out:
            return
        score = score_valid_entries(
            self.problem,
            self.per_step,
            np.concatenate(self._y),
            np.concatenate(self._out),
            np.concatenate(self._w) if getattr(self, "_w", None) else None,
        )
        net.history.record("valid_score", score)


class ProgressLogger(Callback):
    """Print one line per epoch (loss, validation loss and score, duration).

    Parameters
    ----------
    sink : callable, default=print
        Receives each line.
    """

    def __init__(self, sink=print):
        self.sink = sink

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        parts = [f"Epoch {row['epoch']}: loss = {row['train_loss']:.6f}"]
        if "valid_loss" in row:
            parts.append(f"validation loss = {row['valid_loss']:.6f}")
        if "valid_score" in row:
            parts.append(f"validation score = {row['valid_score']:.6f}")
        self.sink(", ".join(parts) + f" ({row.get('dur', 0.0):.2f}s)")


class ConvergenceMonitor(Callback):
    """Stopping rule, best-weights restore and learning-rate schedule.

    At the end of every epoch the monitored loss is measured **on the weights
    of that moment** (never a running average taken while they changed):

    * ``'valid_loss'``: the loss on the validation set (computed by skorch
      after the epoch's updates);
    * ``'valid_score'``: the natural validation score (higher is better);
    * ``'train_loss'``: the loss on the whole training set, recomputed in
      evaluation mode after the epoch's updates (one forward pass, recorded as
      ``'train_eval_loss'`` in the history).

    The starting weights are a candidate too (epoch 0, measured in
    :meth:`on_train_begin`), so a pretrained model never ends worse than it
    started. An epoch improves when the value beats the best by more than
    ``tol``; training stops (converged) after more than ``n_iter_no_change``
    epochs without improvement, and ends with the best weights whatever
    stopped it (convergence, ``max_iter``, an interruption, a divergence
    recovered by :class:`sklmn.callbacks.RestoreOnDivergence`, which
    restores the same weights through :meth:`restore_best`).

    With ``learning_rate='adaptive'`` the learning rate of every parameter
    group is divided by 5 each time ``ceil(n_iter_no_change / 2)`` epochs in a
    row bring no improvement.

    A divergence is reported to the net (``net.diverged(message)``: a
    :class:`FloatingPointError`, or a recovery by
    :class:`sklmn.callbacks.RestoreOnDivergence`) when the monitored value of
    the weights after an epoch is not finite, or when their loss (the
    validation loss when the score is monitored) exceeds ``explosion_factor``
    times the lowest loss so far (the starting weights' loss included; below
    1 the reference is 1, so a small loss that grows without exploding does
    not count).

    Parameters
    ----------
    tol : float
        Minimum improvement.
    n_iter_no_change : int
        Patience in epochs.
    monitor : {'valid_loss', 'valid_score', 'train_loss'}
        Monitored quantity.
    learning_rate : {'constant', 'adaptive'}, default='constant'
        Learning-rate schedule.
    sink : callable or None
        Receives the stopping message (None: silent).
    explosion_factor : float, default=1e6
        Growth of the loss over the lowest loss so far that counts as a
        divergence (large enough for the transient spikes of optimizers such
        as RMSprop in their first steps).

    Attributes
    ----------
    converged_ : bool
        Whether the stopping rule ended training.
    best_ : float
        Best monitored value (a loss, or a score for ``'valid_score'``).
    best_epoch_ : int
        Epoch of the best weights (0: the starting weights).
    start_ : float
        Monitored value of the starting weights.
    """

    MONITORS = ("valid_loss", "valid_score", "train_loss")

    def __init__(
        self,
        tol,
        n_iter_no_change,
        monitor="train_loss",
        learning_rate="constant",
        sink=None,
        explosion_factor=1e6,
    ):
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.monitor = monitor
        self.learning_rate = learning_rate
        self.sink = sink
        self.explosion_factor = explosion_factor

    def initialize(self):
        if self.monitor not in self.MONITORS:
            raise ValueError(
                f"monitor must be one of {self.MONITORS}, got {self.monitor!r}"
            )
        return super().initialize()

    @property
    def _higher_is_better(self) -> bool:
        return self.monitor == "valid_score"

    def _measure_start(self, net) -> tuple[float, float | None]:
        """Monitored value of the current weights, before any update, and
        (when the score is monitored) their validation loss."""
        if self.monitor == "train_loss":
            return dataset_loss(net, self._train), None
        if self.monitor == "valid_loss":
            return dataset_loss(net, self._valid), None
        loss, outputs = dataset_loss(net, self._valid, return_outputs=True)
        weight = getattr(self._valid, "sample_weight", None)
        score = score_outputs(
            net.criterion_.problem,
            net.criterion_.per_step,
            self._valid.y.numpy(),
            outputs,
            self._valid.lengths.numpy(),
            None if weight is None else weight.numpy().astype(np.float64),
        )
        return score, loss

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        if X is not None:
            self._train = X
            self._valid = (
                net.get_split_datasets(X, y)[1] if net.train_split is not None else None
            )
        self.restart(net)

    def restart(self, net) -> None:
        """Forget the best weights and measure the current ones as epoch 0.

        Called at the start of training, and by callbacks that change the
        module's shape (incremental growth of a multi-scale memory).
        """
        self.converged_ = False
        self.no_improvement_count_ = 0
        # start_loss_: the starting weights' loss when the score is monitored
        # (the estimators report the loss of whichever weights they keep)
        self.start_, self.start_loss_ = self._measure_start(net)
        self.best_ = self.start_
        if not np.isfinite(self.best_):
            self.best_ = -np.inf if self._higher_is_better else np.inf
        self.best_epoch_ = len(net.history)
        self._best_state = snapshot_state(net.module_)
        self._hold = False
        start_loss = self.start_loss_ if self._higher_is_better else self.start_
        self._lowest_loss = start_loss if np.isfinite(start_loss) else np.inf

    def _value(self, net, row) -> float:
        if self.monitor == "train_loss":
            value = dataset_loss(net, self._train)
            net.history.record("train_eval_loss", value)
            return value
        return float(row[self.monitor])

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        value = self._value(net, row)
        if not np.isfinite(value):
            net.diverged(
                f"Training diverged at epoch {row['epoch']}: the monitored "
                f"{self.monitor} of the weights after the epoch is {value}."
            )
        self._check_explosion(net, row, value)
        sign = -1.0 if self._higher_is_better else 1.0
        improved = sign * value <= sign * self.best_ - self.tol
        if sign * value < sign * self.best_:
            self.best_ = value
            self.best_epoch_ = int(row["epoch"])
            self._best_state = snapshot_state(net.module_)
        self.no_improvement_count_ = 0 if improved else self.no_improvement_count_ + 1
        if self.no_improvement_count_ > self.n_iter_no_change:
            self.converged_ = True
            if self.sink is not None:
                self.sink(
                    f"The monitored {self.monitor} did not improve more than "
                    f"tol={self.tol} for {self.n_iter_no_change} consecutive "
                    "epochs. Stopping."
                )
            raise KeyboardInterrupt
        lr_patience = -(-self.n_iter_no_change // 2)
        if (
            self.learning_rate == "adaptive"
            and self.no_improvement_count_
            and self.no_improvement_count_ % lr_patience == 0
        ):
            for group in net.optimizer_.param_groups:
                group["lr"] /= 5.0
            if self.sink is not None:
                self.sink(f"Learning rate divided by 5 at epoch {row['epoch']}.")

    def _check_explosion(self, net, row, value: float) -> None:
        """Report a loss far above the lowest so far as a divergence."""
        if self._higher_is_better:
            name, loss = "valid_loss", float(row.get("valid_loss", np.nan))
        else:
            name, loss = self.monitor, float(value)
        if not np.isfinite(loss):
            if self._higher_is_better:
                net.diverged(
                    f"Training diverged at epoch {row['epoch']}: the validation "
                    f"loss of the weights after the epoch is {loss}."
                )
            return
        reference = max(self._lowest_loss, 1.0)
        if loss > self.explosion_factor * reference:
            net.diverged(
                f"Training diverged at epoch {row['epoch']}: the {name} of the "
                f"weights after the epoch is {loss:.4g}, more than "
                f"{self.explosion_factor:g} times the lowest so far "
                f"({self._lowest_loss:.4g}). Try a smaller learning_rate_init, "
                "gradient_clipping, or scaled inputs and targets."
            )
        self._lowest_loss = min(self._lowest_loss, loss)

    def restore_best(self, net) -> int:
        """Load the best weights seen so far into ``net.module_``.

        Returns
        -------
        epoch : int
            Epoch of the restored weights (0: the starting weights).
        """
        if getattr(self, "_best_state", None) is not None:
            net.module_.load_state_dict(self._best_state)
        return self.best_epoch_

    def hold(self) -> None:
        """End this training with the module's current weights, not the best
        (used by :class:`sklmn.callbacks.RestoreOnDivergence` with
        ``restore='last'``)."""
        self._hold = True

    def on_train_end(self, net, **kwargs):
        if not self._hold:
            self.restore_best(net)
        # do not keep (and pickle) the copy and the datasets with the model
        self._best_state = None
        self._train = self._valid = None


def snapshot_state(module: nn.Module) -> dict:
    """Detached copy of a module's ``state_dict``."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def dataset_loss(net, dataset, *, return_outputs: bool = False):
    """Mean loss (data loss + penalty) of the current weights on a dataset.

    Evaluation mode, no gradient; batch losses weighted by batch size, like
    skorch's ``valid_loss`` (by their total sample weight when the dataset
    has weights). With ``return_outputs`` also the module's outputs
    (float64, per-step outputs zero-padded to the dataset's length), from the
    same forward pass.
    """
    total, count, chunks = 0.0, 0, []
    T = int(dataset.X.shape[1])
    for batch in net.get_iterator(dataset, training=False):
        step = net.validation_step(batch)
        weight = batch[0].get("sample_weight")
        n = len(batch[0]["lengths"]) if weight is None else float(weight.sum())
        total += float(step["loss"]) * n
        count += n
        if return_outputs:
            yp = step["y_pred"]
            if yp.dim() == 3 and yp.shape[1] < T:
                yp = F.pad(yp, (0, 0, 0, T - yp.shape[1]))
            chunks.append(yp.to(device="cpu", dtype=torch.float64))
    loss = total / count if count > 0 else total
    if return_outputs:
        return loss, torch.cat(chunks).numpy()
    return loss
