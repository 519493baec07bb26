"""The training callbacks: validation score, progress lines and the
stopping rule with best-weights restore, and the evaluation helpers they
share."""

from __future__ import annotations

import numbers

import numpy as np
import torch
import torch.nn.functional as F
from skorch.callbacks import Callback, GradientNormClipping
from torch import nn

from ..callbacks import SequenceCallback
from ._data import collate_batch
from ._loss import ctc_entries, score_outputs, score_valid_entries, valid_entries
from ._net import TrainingConverged

__all__ = [
    "AnchorToStart",
    "ConvergenceMonitor",
    "ModuleGradientClipping",
    "ProgressLogger",
    "ValidationScore",
    "dataset_loss",
    "snapshot_state",
]

#: the rule of ``train_eval_size='auto'``: the training loss of the stopping
#: rule is measured on at least this many training sequences (all of them
#: up to it) ...
_TRAIN_EVAL_MIN = 128
#: ... and on this fraction of a larger training set
_TRAIN_EVAL_FRACTION = 8


def _train_eval_size(n_samples: int) -> int:
    """Training sequences on which ``train_eval_size='auto'`` measures the
    stopping rule's training loss: all of them up to 128, else one eighth
    of them, at least 128.

    Measuring the loss of a fixed subsample costs that fraction of a
    forward pass over the training set after every epoch instead of a whole
    pass (the measurement is in ``docs/user_guide/fitting.md``, "Cost of
    ``fit``").

    Parameters
    ----------
    n_samples : int
        Number of training sequences.

    Returns
    -------
    int

    Examples
    --------
    >>> from sklmn._training._callbacks import _train_eval_size
    >>> _train_eval_size(100), _train_eval_size(400), _train_eval_size(8000)
    (100, 128, 1000)
    """
    n_samples = int(n_samples)
    share = -(-n_samples // _TRAIN_EVAL_FRACTION)
    return min(n_samples, max(_TRAIN_EVAL_MIN, share))


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


class ModuleGradientClipping(GradientNormClipping):
    """skorch's :class:`~skorch.callbacks.GradientNormClipping`, reading the
    parameters off the net's module.

    Clips the norm of the gradients of all the learnable parameters, like
    its base; when the net trains one module (``net.module_``) with a
    criterion without parameters (the estimators' nets), it takes them from
    ``net.module_.parameters()`` (the same tensors in the same order) instead
    of walking skorch's parameter generator at every step.

    Parameters
    ----------
    gradient_clip_value : float or None, default=None
        Maximum norm of the gradients (None: no clipping).
    gradient_clip_norm_type : float, default=2
        Type of the norm.

    Examples
    --------
    >>> import torch
    >>> from sklmn._training import ModuleGradientClipping
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> from sklmn.nn import LMN
    >>> data = SequenceDataset(torch.randn(8, 5, 2), torch.full((8,), 5),
    ...                        torch.randn(8, 1))
    >>> net = make_sequence_net(
    ...     SequenceNet(LMN(2, 4, 4), 1), problem="continuous", per_step=False,
    ...     lr=1e-2, max_epochs=2, batch_size=8,
    ...     callbacks=[("clip", ModuleGradientClipping(1.0))]).fit(data)
    >>> len(net.history)
    2
    """

    def on_train_begin(self, net, **kwargs):
        criteria = [getattr(net, name + "_", None) for name in net._criteria]
        self._module_only = list(net._modules) == ["module"] and not any(
            isinstance(c, nn.Module) and next(c.parameters(), None) is not None
            for c in criteria
        )

    def on_grad_computed(self, net, named_parameters, **kwargs):
        if self.gradient_clip_value is None:
            return
        if getattr(self, "_module_only", False):
            parameters = net.module_.parameters()
        else:
            parameters = (p for _, p in named_parameters)
        torch.nn.utils.clip_grad_norm_(
            parameters,
            max_norm=self.gradient_clip_value,
            norm_type=self.gradient_clip_norm_type,
        )


class AnchorToStart(Callback):
    """Pull every parameter toward its value at the start of training.

    Adds ``alpha * (w - w0)`` to the gradient of each parameter ``w``, where
    ``w0`` is its value when training began: the gradient of the penalty
    ``0.5 * alpha * ||w - w0||²`` on each minibatch's mean loss (the "L2-SP"
    regularizer of Li, Grandvalet & Davoine 2018, "Explicit inductive bias
    for transfer learning with convolutional networks"). Placed after
    gradient clipping, like the optimizer's weight decay, and, like it, not
    part of the recorded loss. Parameters whose shape changed since the
    start (a module grown during training) and parameters created after it
    are not pulled.

    Parameters
    ----------
    alpha : float
        Strength of the pull (``0``: none).
    """

    def __init__(self, alpha: float):
        self.alpha = alpha

    def on_train_begin(self, net, **kwargs):
        self.reference_ = {
            name: p.detach().clone() for name, p in net.module_.named_parameters()
        }

    def on_grad_computed(self, net, named_parameters, training=False, **kwargs):
        if not self.alpha:
            return
        for name, p in named_parameters:
            w0 = self.reference_.get(name)  # cloned on the parameter's device
            if p.grad is not None and w0 is not None and w0.shape == p.shape:
                p.grad.add_(p.detach() - w0, alpha=self.alpha)


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


class ConvergenceMonitor(SequenceCallback):
    """Stopping rule, best-weights restore and learning-rate schedule.

    At the end of every epoch the monitored loss is measured **on the weights
    of that moment** (never a running average taken while they changed):

    * ``'valid_loss'``: the loss on the validation set (computed by skorch
      after the epoch's updates);
    * ``'valid_score'``: the natural validation score (higher is better);
    * ``'train_loss'``: the loss on the training set, recomputed in
      evaluation mode after the epoch's updates (one forward pass, recorded
      as ``'train_eval_loss'`` in the history), on all the training
      sequences or, with ``train_eval_size``, on a fixed random subsample of
      them (the same sequences at every epoch, so that epochs are compared
      on the same data).

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
    train_eval_size : int, 'auto' or None, default=None
        With ``monitor='train_loss'``: the number of training sequences,
        drawn once at the start of training (seeded by the net's
        ``shuffle_seed``), on which the training loss is measured. None
        measures all of them; ``'auto'`` all of them up to 128, else an
        eighth of them, at least 128 (the estimators' setting). With loss
        weights, only sequences of non-zero weight are drawn.

    Attributes
    ----------
    converged_ : bool
        Whether the stopping rule ended training.
    best_ : float
        Best monitored value (a loss, or a score for ``'valid_score'``);
        after :meth:`hold` with an epoch, the value of the held weights.
    best_epoch_ : int
        Epoch of the best weights (0: the starting weights); after
        :meth:`hold` with an epoch, that epoch.
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
        train_eval_size=None,
    ):
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.monitor = monitor
        self.learning_rate = learning_rate
        self.sink = sink
        self.explosion_factor = explosion_factor
        self.train_eval_size = train_eval_size

    def initialize(self):
        if self.monitor not in self.MONITORS:
            raise ValueError(
                f"monitor must be one of {self.MONITORS}, got {self.monitor!r}"
            )
        size = self.train_eval_size
        if not (
            size is None
            or size == "auto"
            or (isinstance(size, numbers.Integral) and not isinstance(size, bool))
            and size >= 1
        ):
            raise ValueError(
                "train_eval_size must be None, 'auto' or a positive int, got "
                f"{size!r}"
            )
        return super().initialize()

    @property
    def _higher_is_better(self) -> bool:
        return self.monitor == "valid_score"

    def _measure_start(self, net) -> tuple[float, float | None]:
        """Monitored value of the current weights, before any update, and
        (when the score is monitored) their validation loss."""
        if self.monitor == "train_loss":
            return self._train_loss(net), None
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
            self._train_index = self._draw_train_subset(net, X)
            self._train_batches = self._collate_train_subset(net, X)
        self.restart(net)

    def _draw_train_subset(self, net, dataset):
        """Indices of the training sequences the training loss is measured
        on (None: all), drawn with the net's ``shuffle_seed`` (among the
        sequences of non-zero weight when some have none)."""
        if self.monitor != "train_loss" or self.train_eval_size is None:
            return None
        n = len(dataset)
        if self.train_eval_size == "auto":
            size = _train_eval_size(n)
        else:
            size = int(self.train_eval_size)
        if size >= n:
            return None
        seed = int(getattr(net, "shuffle_seed", 0))
        generator = torch.Generator().manual_seed(seed)
        weighted = dataset.weighted() if hasattr(dataset, "weighted") else None
        if weighted is not None and not bool(weighted.all()):
            # sequences of zero weight measure nothing: a subsample of them
            # only would measure a constant zero loss
            candidates = torch.nonzero(weighted).flatten()
            if size >= len(candidates):
                return candidates
            order = torch.randperm(len(candidates), generator=generator)
            return candidates[order[:size]]
        return torch.randperm(n, generator=generator)[:size]

    def _collate_train_subset(self, net, dataset):
        """The evaluation batches of the measured training sequences, built
        once per training (the same sequences are measured after every
        epoch), when they are a bounded subsample (``train_eval_size``) or
        at most 128 sequences; None: built at every measurement."""
        if self.monitor != "train_loss" or not hasattr(dataset, "__getitems__"):
            return None
        indices = self._train_index
        if indices is None and len(dataset) > _TRAIN_EVAL_MIN:
            return None  # a copy of a whole large training set: not kept
        return list(_length_sorted_loader(net, dataset, indices))

    def _train_loss(self, net) -> float:
        """Training loss of the current weights (on the subsample, if any)."""
        batches = getattr(self, "_train_batches", None)
        if batches is not None:
            return _mean_loss(net, batches)
        indices = getattr(self, "_train_index", None)
        return dataset_loss(net, self._train, indices=indices)

    def restart(self, net) -> None:
        """Forget the best weights and measure the current ones as epoch 0.

        Called at the start of training, and by callbacks that change the
        module's shape (incremental growth of a multi-scale memory).
        """
        self.converged_ = False
        self.no_improvement_count_ = 0
        self._best_state = None  # nothing to restore until the start is measured
        # start_loss_: the starting weights' loss when the score is monitored
        # (the estimators report the loss of whichever weights they keep)
        self.start_, self.start_loss_ = self._measure_start(net)
        self.best_ = self.start_
        if not np.isfinite(self.best_):
            self.best_ = -np.inf if self._higher_is_better else np.inf
        self.best_epoch_ = len(net.history)
        self._best_state = snapshot_state(net.module_)
        self._hold = False
        # the monitored value of every epoch's weights (for hold(epoch))
        self._measured = {self.best_epoch_: self.start_}
        start_loss = self.start_loss_ if self._higher_is_better else self.start_
        self._lowest_loss = start_loss if np.isfinite(start_loss) else np.inf

    def _value(self, net, row) -> float:
        if self.monitor == "train_loss":
            value = self._train_loss(net)
            net.history.record("train_eval_loss", value)
            return value
        return float(row[self.monitor])

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        value = self._value(net, row)
        self._measured[int(row["epoch"])] = value
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
            raise TrainingConverged
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
        epoch : int or None
            Epoch of the restored weights (0: the starting weights); None
            when no weights were measured (the measurement of the start
            itself failed), so there is nothing to restore.
        """
        if getattr(self, "_best_state", None) is None:
            return None
        net.module_.load_state_dict(self._best_state)
        return self.best_epoch_

    def hold(self, epoch: int | None = None) -> None:
        """End this training with the module's current weights, not the best
        (used by :class:`sklmn.callbacks.RestoreOnDivergence` with
        ``restore='last'``).

        Parameters
        ----------
        epoch : int or None, default=None
            Epoch of the current weights (0: the starting weights): when
            their monitored value was measured, ``best_epoch_`` and ``best_``
            then describe them, the weights training ends with.
        """
        self._hold = True
        measured = getattr(self, "_measured", None) or {}
        if epoch is not None and epoch in measured:
            self.best_epoch_ = int(epoch)
            self.best_ = measured[epoch]

    def on_train_end(self, net, **kwargs):
        if not self._hold:
            self.restore_best(net)
        # do not keep (and pickle) the copy and the datasets with the model
        self._best_state = self._measured = None
        self._train = self._valid = self._train_index = None
        self._train_batches = None


def snapshot_state(module: nn.Module) -> dict:
    """Detached copy of a module's ``state_dict``."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _length_sorted_loader(net, dataset, indices=None):
    """Evaluation batches of ``dataset`` (of its sequences ``indices``) in
    decreasing length order."""
    size = net.get_params_for("iterator_valid").get("batch_size", net.batch_size)
    if size is None or size < 0:
        size = len(dataset)
    lengths = dataset.lengths if indices is None else dataset.lengths[indices]
    order = torch.argsort(lengths, descending=True, stable=True)
    if indices is not None:
        order = indices[order]
    order = order.tolist()
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    if hasattr(dataset, "__getitems__"):
        # what a DataLoader of these batches yields, without its machinery
        return (collate_batch(dataset.__getitems__(batch)) for batch in batches)
    return torch.utils.data.DataLoader(
        dataset, batch_sampler=batches, collate_fn=collate_batch
    )


def dataset_loss(net, dataset, *, return_outputs: bool = False, indices=None):
    """Mean loss (data loss + penalty) of the current weights on a dataset.

    Evaluation mode, no gradient; batch losses weighted by batch size, like
    skorch's ``valid_loss`` (by their total sample weight when the dataset
    has weights). With ``return_outputs`` also the module's outputs
    (float64, per-step outputs zero-padded to the dataset's length), from the
    same forward pass. ``indices`` (a tensor of sequence indices, without
    ``return_outputs``) measures the loss of those sequences only.
    """
    if indices is not None and return_outputs:
        raise ValueError("dataset_loss: indices cannot be used with return_outputs")
    if not return_outputs:
        # the loss does not depend on the order: batches of similar lengths
        # waste no recurrence steps on padding (27% of the LMN's evaluation
        # time on mixed lengths, python -m sklmn.benchmarks bench fit-overhead)
        return _mean_loss(net, _length_sorted_loader(net, dataset, indices))
    total, count, chunks = 0.0, 0, []
    T = int(dataset.X.shape[1])
    for batch in net.get_iterator(dataset, training=False):
        step = net.validation_step(batch)
        weight = batch[0].get("sample_weight")
        n = len(batch[0]["lengths"]) if weight is None else float(weight.sum())
        total += float(step["loss"]) * n
        count += n
        yp = step["y_pred"]
        if yp.dim() == 3 and yp.shape[1] < T:
            yp = F.pad(yp, (0, 0, 0, T - yp.shape[1]))
        chunks.append(yp.to(device="cpu", dtype=torch.float64))
    loss = total / count if count > 0 else total
    return loss, torch.cat(chunks).numpy()


def _mean_loss(net, batches) -> float:
    """Mean loss of the current weights over evaluation ``batches``, batch
    losses weighted by batch size (by total sample weight with weights)."""
    total, count = 0.0, 0
    for batch in batches:
        step = net.validation_step(batch)
        weight = batch[0].get("sample_weight")
        n = len(batch[0]["lengths"]) if weight is None else float(weight.sum())
        total += float(step["loss"]) * n
        count += n
    return total / count if count > 0 else total
