"""The skorch net of the estimators and the pretrainers, and the one factory
that wires it for a module and a target."""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Mapping

import numpy as np
import torch
import torch.nn.functional as F
from skorch import NeuralNet
from skorch.callbacks import Callback, EpochTimer, PassthroughScoring
from skorch.dataset import get_len, unpack_data
from skorch.helper import predefined_split
from skorch.utils import TeeGenerator, to_tensor
from torch import Tensor

from ..callbacks import SequenceCallback
from ..nn._base import forward_with_penalty
from ._data import (
    LengthBucketBatchSampler,
    SeededShuffleBatches,
    SequenceDataset,
    collate_batch,
)
from ._loss import SequenceLoss
from ._module import SequenceNet

__all__ = ["SequenceNeuralNet", "TrainingConverged", "make_sequence_net"]

#: Optimizers whose ``step(closure)`` calls the closure once, before the
#: update, and uses nothing else of it: their training step computes the
#: gradients first and then calls ``step()`` without a closure (the same
#: update, without skorch's closure and step accumulator). Exact types only:
#: a subclass may evaluate its closure differently.
_SINGLE_EVALUATION_OPTIMIZERS = (
    torch.optim.Adam,
    torch.optim.AdamW,
    torch.optim.SGD,
    torch.optim.RMSprop,
    torch.optim.Adagrad,
    torch.optim.Adamax,
    torch.optim.NAdam,
    torch.optim.RAdam,
)

#: skorch's no-op hooks of ``Callback`` (``on_batch_begin``...), by name
_NOOP_HOOKS = {
    name: function
    for name, function in vars(Callback).items()
    if name.startswith("on_") and callable(function)
}


class TrainingConverged(KeyboardInterrupt):
    """Raised by a callback to end training as converged.

    skorch ends training quietly on a ``KeyboardInterrupt``; this subclass
    tells :class:`SequenceNeuralNet` that a stopping rule, not the user,
    ended it (``net.converged_`` is then True). The estimators' stopping
    rule and the growth schedule of ``IncrementalTraining`` raise it.

    Examples
    --------
    >>> from skorch.callbacks import Callback
    >>> from sklmn.training import TrainingConverged
    >>> class StopAtLoss(Callback):
    ...     def on_epoch_end(self, net, **kwargs):
    ...         if net.history[-1, "train_loss"] < 0.1:
    ...             raise TrainingConverged
    """


class _WeightedPassthroughScoring(PassthroughScoring):
    """skorch's :class:`~skorch.callbacks.PassthroughScoring` (the epoch's
    ``train_loss`` or ``valid_loss`` from its batches' losses), averaging
    the batch losses by their total loss weight when the batches carry
    sample weights (``<train|valid>_batch_weight`` in the batch history).

    A batch's loss is then the weighted mean of its terms, so the average
    weighted by batch totals is the weighted mean over the epoch, as
    :func:`~sklmn._training._callbacks.dataset_loss` measures it; skorch
    weights batches by their number of sequences.
    """

    def get_avg_score(self, history):
        key = ("train" if self.on_train else "valid") + "_batch_weight"
        rows = [row for row in history[-1, "batches"] if self.name in row]
        if rows and all(key in row for row in rows):
            weights = [row[key] for row in rows]
            if sum(weights) > 0:
                return float(
                    np.average([row[self.name] for row in rows], weights=weights)
                )
        return super().get_avg_score(history)


class SequenceNeuralNet(NeuralNet):
    """skorch net training a :class:`SequenceNet` on a :class:`SequenceDataset`.

    Differences from :class:`skorch.NeuralNet`:

    * the loss is ``criterion(y_pred, y_true, lengths) + penalty``, where
      ``penalty`` is the regularization term that the module's forward pass
      returns with ``return_penalty=True`` (:meth:`infer_with_penalty`; the
      training and validation steps call it, predictions call the module
      plain), and a non-finite training loss raises :class:`FloatingPointError`
      naming what diverged, unless a callback's ``on_divergence(net,
      message)`` hook stops training first (see
      :class:`sklmn.callbacks.RestoreOnDivergence`);
    * the training DataLoader shuffles with its own ``torch.Generator``
      seeded by ``shuffle_seed`` (reproducible, global RNG untouched), and
      with ``bucket_by_length`` draws batches of similar lengths
      (:class:`LengthBucketBatchSampler`); with the default iterator
      settings the batches of a :class:`SequenceDataset` come from
      :class:`~sklmn._training._data.SeededShuffleBatches`, the same batches
      in the same order without the DataLoader's machinery;
    * a training step with one of the usual torch optimizers (Adam, AdamW,
      SGD, RMSprop, ...) computes the gradients, notifies
      ``on_grad_computed`` and calls ``optimizer.step()`` without skorch's
      closure (the same update; other optimizers, e.g. LBFGS, get the
      closure);
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
      from during the last training (None otherwise), ``interrupted_``
      whether a ``KeyboardInterrupt`` ended it and ``converged_`` whether a
      stopping rule did (by raising :class:`TrainingConverged`);
    * :meth:`send_event` sends the events of
      :class:`sklmn.callbacks.SequenceCallback` (``on_divergence``,
      ``restart``, ``restore_best``) and collects the answers;
    * :meth:`restart_monitoring` is the event a callback that replaces the
      module (new parameter shapes) sends to the others.

    Build it with :func:`make_sequence_net`, which wires the loss, the
    collation and the iterators.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import LMN
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> data = SequenceDataset(torch.randn(8, 5, 2), torch.full((8,), 5),
    ...                        torch.randn(8, 1))
    >>> net = make_sequence_net(SequenceNet(LMN(2, 4, 4), 1),
    ...                         problem="continuous", per_step=False,
    ...                         lr=1e-2, max_epochs=2, batch_size=8).fit(data)
    >>> net.predict_outputs(data).shape, net.converged_
    ((8, 1), False)
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
            (
                "train_loss",
                _WeightedPassthroughScoring(name="train_loss", on_train=True),
            ),
            ("valid_loss", _WeightedPassthroughScoring(name="valid_loss")),
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
        if (
            training
            and not self.bucket_by_length
            and iterator is torch.utils.data.DataLoader
            and isinstance(dataset, SequenceDataset)
            and kwargs.get("shuffle") is True
            and kwargs.get("collate_fn") is collate_batch
            and set(kwargs) == {"batch_size", "shuffle", "collate_fn"}
            and isinstance(kwargs["batch_size"], int)
            and kwargs["batch_size"] >= 1
        ):
            # what this DataLoader yields, from the same draws of the same
            # generator, without its sampler and fetcher machinery
            return SeededShuffleBatches(dataset, kwargs["batch_size"], generator)
        if training and self.bucket_by_length:
            sampler = LengthBucketBatchSampler(
                dataset.lengths, kwargs.pop("batch_size"), generator
            )
            kwargs.pop("shuffle", None)
            return iterator(dataset, batch_sampler=sampler, **kwargs)
        return iterator(dataset, generator=generator, **kwargs)

    def train_step(self, batch, **fit_params):
        """One optimization step on a batch.

        skorch's step (zero the gradients, :meth:`train_step_single`,
        ``on_grad_computed``, ``optimizer.step``), run in that order without
        the closure when every optimizer evaluates a closure once before its
        update (the usual torch optimizers); through skorch's closure
        otherwise.
        """
        optimizers = [getattr(self, name + "_") for name in self._optimizers]
        if not all(type(o) in _SINGLE_EVALUATION_OPTIMIZERS for o in optimizers):
            return super().train_step(batch, **fit_params)
        self._zero_grad_optimizer()
        step = self.train_step_single(batch, **fit_params)
        self.notify(
            "on_grad_computed",
            named_parameters=TeeGenerator(self.get_all_learnable_params()),
            batch=batch,
            training=True,
        )
        for optimizer in optimizers:
            optimizer.step()
        return step

    def notify(self, method_name, **cb_kwargs):
        """skorch's ``notify``: the net's hook, then every callback's, in
        order, except the callbacks' hooks that are skorch's inherited no-ops
        (three events per training batch, most callbacks define none).

        A divergence while a callback measures the starting weights
        (``on_train_begin``, before the loop that ends quietly on an
        interruption) leaves nothing to recover: it raises
        :class:`FloatingPointError`.
        """
        getattr(self, method_name)(self, **cb_kwargs)
        noop = _NOOP_HOOKS.get(method_name)
        try:
            for _, callback in self.callbacks_:
                hook = getattr(callback, method_name)
                if noop is None or getattr(hook, "__func__", None) is not noop:
                    hook(self, **cb_kwargs)
        except KeyboardInterrupt:
            if method_name == "on_train_begin" and self.divergence_ is not None:
                raise FloatingPointError(self.divergence_) from None
            raise

    def run_single_epoch(self, iterator, training, prefix, step_fn, **fit_params):
        """skorch's epoch over ``iterator``, reading the batch size of a
        :class:`SequenceDataset` batch from its lengths (and recording the
        total loss weight of a batch that carries sample weights)."""
        if iterator is None:
            return
        batch_count = 0
        for batch in iterator:
            self.notify("on_batch_begin", batch=batch, training=training)
            step = step_fn(batch, **fit_params)
            self.history.record_batch(prefix + "_loss", step["loss"].item())
            Xi = batch[0] if isinstance(batch, (tuple, list)) else batch
            if type(Xi) is dict and type(Xi.get("lengths")) is Tensor:
                batch_size = len(Xi["lengths"])
            else:
                batch_size = get_len(Xi)
            self.history.record_batch(prefix + "_batch_size", batch_size)
            if type(Xi) is dict and Xi.get("sample_weight") is not None:
                # the batch's loss is a weighted mean: the epoch's loss
                # averages the batches by their total weight
                self.history.record_batch(
                    prefix + "_batch_weight", float(Xi["sample_weight"].sum())
                )
            self.notify("on_batch_end", batch=batch, training=training, **step)
            batch_count += 1
        self.history.record(prefix + "_batch_count", batch_count)

    def _set_training(self, training=True):
        """Train or evaluation mode for the module and the criterion.

        skorch switches the mode before every batch; ``Module.train`` walks
        every submodule and sets its flag, so a module whose submodules are
        all in the requested mode already is left alone.
        """
        for name in self._modules + self._criteria:
            module = getattr(self, name + "_")
            if isinstance(module, torch.nn.Module) and any(
                m.training != training for m in module.modules()
            ):
                module.train(training)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.divergence_ = None
        self.interrupted_ = False
        self.converged_ = False
        self._training = True

    def on_train_end(self, net, X=None, y=None, **kwargs):
        self._training = False

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        try:
            return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt as exc:
            # skorch ends training quietly; remember that it was interrupted
            # (by the user, a stopping rule or a divergence recovery)
            self.interrupted_ = True
            self.converged_ = isinstance(exc, TrainingConverged)
            raise

    def restart_monitoring(self) -> None:
        """Tell the callbacks that the module was replaced.

        A callback that changes the module's parameters in a way the others
        cannot follow (the growth of a multi-scale memory adds parameters)
        calls this; every other callback with a ``restart(net)`` method (the
        stopping rule :class:`~sklmn._training.ConvergenceMonitor`) then
        forgets its saved state and measures the current weights as its new
        start.
        """
        self.send_event("restart")

    def infer(self, x, **fit_params):
        """Module outputs for a batch (no penalty; see :meth:`infer_with_penalty`)."""
        return self._infer(x, fit_params, with_penalty=False)

    def infer_with_penalty(self, x, **fit_params):
        """Module outputs for a batch and the penalty of that forward pass.

        The module is called with ``return_penalty=True`` when its ``forward``
        takes that keyword (:class:`SequenceNet` does) and returns
        ``(outputs, penalty)``; a module written without it is called as
        usual and its ``penalty()`` method, if any, is read after the forward
        (zero without one).

        Parameters
        ----------
        x : dict or Tensor
            A batch of the input data (``{'X': ..., 'lengths': ...}``).
        **fit_params : dict
            Further arguments of the module's ``forward``.

        Returns
        -------
        y_pred : Tensor
            The module's outputs.
        penalty : Tensor of shape ()
            Regularization term of this forward pass.
        """
        return self._infer(x, fit_params, with_penalty=True)

    def _infer(self, x, fit_params: dict, *, with_penalty: bool):
        if isinstance(x, dict) and "sample_weight" in x:
            # the weights are read by get_loss, not by the module
            x = {k: v for k, v in x.items() if k != "sample_weight"}
        try:
            if not with_penalty:
                return super().infer(x, **fit_params)
            if not fit_params and self._on_device(x):
                # a SequenceDataset batch already on the device (every batch
                # of a CPU fit): skorch's conversions would copy nothing
                if type(self.module_) is SequenceNet:  # takes return_penalty
                    return self.module_(**x, return_penalty=True)
                return forward_with_penalty(self.module_, **x)
            x = to_tensor(x, device=self.device)
            if isinstance(x, Mapping):
                x_dict = self._merge_x_and_fit_params(x, fit_params)
                return forward_with_penalty(self.module_, **x_dict)
            return forward_with_penalty(self.module_, x, **fit_params)
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

    def _on_device(self, x) -> bool:
        """Whether ``x`` is a dict of tensors on the CPU and the net's
        device is the CPU (nothing to convert or move)."""
        return (
            type(x) is dict
            and str(self.device) == "cpu"
            and all(type(v) is Tensor and v.device.type == "cpu" for v in x.values())
        )

    def train_step_single(self, batch, **fit_params):
        """skorch's training step, with the penalty of the forward pass.

        The outputs and the penalty come from one call of
        :meth:`infer_with_penalty`; the step's ``y_pred`` is the outputs.
        """
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        y_pred, penalty = self.infer_with_penalty(Xi, **fit_params)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True, penalty=penalty)
        loss.backward()
        return {"loss": loss, "y_pred": y_pred}

    def validation_step(self, batch, **fit_params):
        """skorch's validation step, with the penalty of the forward pass.

        The validation loss includes the penalty, like the training loss.
        """
        self._set_training(False)
        Xi, yi = unpack_data(batch)
        with torch.no_grad():
            y_pred, penalty = self.infer_with_penalty(Xi, **fit_params)
            loss = self.get_loss(y_pred, yi, X=Xi, training=False, penalty=penalty)
        return {"loss": loss, "y_pred": y_pred}

    def _float64_module(self):
        """The cached float64 copy of ``module_`` (rebuilt when stale)."""
        module = self.module_
        tensors = [module, *module.parameters(), *module.buffers()]
        # the copy carries the forward hooks the module had when copied: a
        # hook added or removed since (feature extraction, debugging) makes
        # it stale, as do replaced tensors and changed values (compared
        # directly: an edit through .data leaves no version bump)
        hooks = tuple(
            (tuple(m._forward_pre_hooks), tuple(m._forward_hooks))
            for m in module.modules()
        )
        cached = self.__dict__.get("_float64_cache")
        if (
            cached is None
            or len(cached[0]) != len(tensors)
            or any(ref() is not t for ref, t in zip(cached[0], tensors, strict=True))
            or cached[1] != hooks
            or not _same_values(cached[2], tensors[1:])
        ):
            refs = [weakref.ref(t) for t in tensors]
            cached = (refs, hooks, copy.deepcopy(module).to(torch.float64))
            self._float64_cache = cached
        return cached[2]

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_float64_cache", None)  # derived: never pickled
        return state

    def _bad_params(self) -> str:
        bad = [
            name
            for name, p in self.module_.named_parameters()
            if not bool(torch.isfinite(p).all())
        ]
        if not bad:
            return ""
        return f"; non-finite parameters: {bad[0]!r} ({len(bad)} tensor(s))"

    def get_loss(self, y_pred, y_true, X=None, training=False, *, penalty=None):
        """Data loss of the outputs plus the penalty of their forward pass.

        Parameters
        ----------
        y_pred : Tensor
            Module outputs.
        y_true : Tensor
            Encoded targets.
        X : dict
            The batch (``lengths``, optional ``sample_weight``).
        training : bool, default=False
            Whether this is a training step (a non-finite loss is then a
            divergence).
        penalty : Tensor of shape () or None, default=None
            Regularization term of the forward pass that produced ``y_pred``
            (:meth:`infer_with_penalty`; the training and validation steps
            pass it). None adds nothing.

        Returns
        -------
        loss : Tensor of shape ()
        """
        if not (type(y_true) is Tensor and y_true.device.type == "cpu") or str(
            self.device
        ) != "cpu":
            y_true = to_tensor(y_true, device=self.device)
        weight = X.get("sample_weight") if isinstance(X, dict) else None
        if weight is None:
            data_loss = self.criterion_(y_pred, y_true, X["lengths"])
        else:
            data_loss = self.criterion_(
                y_pred, y_true, X["lengths"], sample_weight=weight
            )
        if penalty is None:
            penalty = data_loss.new_zeros(())
        if penalty.requires_grad or penalty.device.type != "cpu" or penalty.item():
            loss = data_loss + penalty
        else:  # a constant zero (a module without penalty): nothing to add
            loss = data_loss
        if training and not math.isfinite(loss.item()):
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
        self.send_event("on_divergence", message)
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
        answers = self.send_event("restore_best")
        return answers[-1] if answers else None

    def send_event(self, event: str, *args) -> list:
        """Call ``event(net, *args)`` on every callback that implements it,
        in order, and return their answers.

        The events of :class:`sklmn.callbacks.SequenceCallback`
        (``on_divergence``, ``restart``, ``restore_best``): a callback
        implements one when it defines the method and it is not the base
        class's no-op. skorch's ``notify`` does not fit them: it calls the
        net's own handler too and discards the answers.
        """
        default = getattr(SequenceCallback, event)
        answers = []
        for _, callback in self.callbacks_:
            handler = getattr(callback, event, None)
            if handler is None or getattr(type(callback), event, None) is default:
                continue
            answers.append(handler(self, *args))
        return answers

    def predict_outputs(self, dataset: SequenceDataset) -> np.ndarray:
        """Raw module outputs for a whole dataset, as a float64 array.

        On the CPU the forward pass runs on a float64 copy of the module: the
        outputs of one sequence then do not depend on the other sequences of
        its batch (float32 matrix products do, at the 1e-7 level), so
        predictions are invariant to batching and sample order. The copy is
        made once and kept until the module or any of its parameters and
        buffers changes (training, ``load_state_dict``, an in-place edit,
        also through ``.data``) or a forward hook is registered on or removed
        from one of its modules. On
        a GPU the module's own dtype is used. Per-time-step outputs are
        zero-padded to the dataset's padded length.
        """
        self.check_is_fitted()
        # inside the caller's torch.inference_mode() too: a float64 copy made
        # there would hold inference tensors, which the layout caches of the
        # memory modules cannot read the version of
        with torch.inference_mode(False), torch.no_grad():
            return self._predict_outputs(dataset)

    def predict_features(self, dataset: SequenceDataset) -> np.ndarray:
        """What the readout reads, for a whole dataset, as a float64 array.

        The rows of a sequence-level module's :meth:`SequenceNet.features`
        (the pooled recurrent output), computed as :meth:`predict_outputs`
        computes the outputs (on the CPU by the float64 copy of the module).
        A module with per-time-step outputs has no pooled features and
        raises ``ValueError``.

        Parameters
        ----------
        dataset : SequenceDataset
            The sequences, in the order of the rows returned.

        Returns
        -------
        features : ndarray of shape (n_sequences, readout.in_features)

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
        >>> X = torch.randn(8, 5, 1)
        >>> data = SequenceDataset(X, torch.full((8,), 5), torch.arange(8) % 2)
        >>> net = make_sequence_net(
        ...     SequenceNet(LMN(1, 3, 2), 2), problem="multiclass",
        ...     per_step=False, lr=1e-3, max_epochs=1, batch_size=8).fit(data)
        >>> net.predict_features(data).shape  # the memory at the last step
        (8, 2)
        """
        self.check_is_fitted()
        if getattr(self.module_, "per_step", False):
            raise ValueError(
                "the readout of per-time-step outputs reads every step: there "
                "are no pooled features of a sequence"
            )
        with torch.inference_mode(False), torch.no_grad():
            return self._predict_outputs(dataset, features=True)

    def _predict_outputs(
        self, dataset: SequenceDataset, features: bool = False
    ) -> np.ndarray:
        module = self.module_
        dtype = next(module.parameters()).dtype
        device = next(module.parameters()).device
        if device.type == "cpu":
            dtype = torch.float64
            module = self._float64_module()
        module.eval()
        T = int(dataset.X.shape[1])
        chunks = []
        for Xb, _ in self.get_iterator(dataset, training=False):
            x = Xb["X"].to(device=device, dtype=dtype)
            if features:
                output, _ = module.recurrent(x, lengths=Xb["lengths"])
                yp = module.features(output, Xb["lengths"])
            else:
                yp = module(x, lengths=Xb["lengths"])
            if yp.dim() == 3 and yp.shape[1] < T:
                yp = F.pad(yp, (0, 0, 0, T - yp.shape[1]))
            chunks.append(yp.to(device="cpu", dtype=torch.float64))
        return torch.cat(chunks).numpy()


def _same_values(copy64: torch.nn.Module, tensors: list) -> bool:
    """Whether the parameters and buffers of the float64 copy ``copy64``
    hold the values of ``tensors`` (the original's, in the same order).

    An edit through ``.data`` (``p.data.zero_()``, ``p.data = ...``) leaves
    a parameter's version counter as it was: only the values tell. The cast
    of float32 values to float64 is exact, so the comparison is too.
    """
    copied = [*copy64.parameters(), *copy64.buffers()]
    if len(copied) != len(tensors):
        return False
    with torch.no_grad():
        return all(
            c.shape == t.shape and torch.equal(c, t.to(c.dtype))
            for c, t in zip(copied, tensors, strict=True)
        )


def make_sequence_net(
    module,
    *,
    problem: str,
    per_step: bool,
    lr: float,
    max_epochs: int,
    batch_size: int,
    optimizer=torch.optim.Adam,
    weight_decay: float = 0.0,
    decay_biases: bool = True,
    valid_dataset: SequenceDataset | None = None,
    valid_batch_size: int | None = None,
    callbacks=None,
    device: str = "cpu",
    shuffle_seed: int = 0,
    bucket_by_length: bool = False,
    **optimizer_kwargs,
) -> SequenceNeuralNet:
    """The skorch net that trains ``module`` on a :class:`SequenceDataset`.

    The one place where a net is wired: the loss
    (:class:`~sklmn._training.SequenceLoss` of ``problem``), the batch
    collation, the seeded shuffling, the optimizer and its weight decay, the
    validation set. The estimators and the pretrainers build their nets here.

    Parameters
    ----------
    module : torch.nn.Module
        The network, called as ``module(X, lengths=lengths)``; the penalty
        added to the loss is what ``module(X, lengths=lengths,
        return_penalty=True)`` returns as ``(outputs, penalty)`` (a
        :class:`SequenceNet`), or for a module whose ``forward`` does not take
        ``return_penalty``, its optional ``penalty()`` read after the forward.
    problem : {'multiclass', 'multilabel', 'continuous', 'ctc'}
        Kind of target (the loss).
    per_step : bool
        Targets with a time axis.
    lr : float
        Learning rate.
    max_epochs : int
        Epochs of a ``fit`` / ``partial_fit`` call.
    batch_size : int
        Training sequences per batch.
    optimizer : type, default=torch.optim.Adam
        Optimizer class; extra keyword arguments go to it.
    weight_decay : float, default=0.0
        The optimizer's ``weight_decay``.
    decay_biases : bool, default=True
        False: no decay on parameters named ``bias*``.
    valid_dataset : SequenceDataset or None, default=None
        Validation set evaluated after every epoch (``valid_loss``).
    valid_batch_size : int or None, default=None
        Batch size of evaluation (None: ``batch_size``).
    callbacks : list or None, default=None
        skorch callbacks, in order.
    device : str, default='cpu'
        Torch device.
    shuffle_seed : int, default=0
        Seed of the training batches' order.
    bucket_by_length : bool, default=False
        Batches of sequences of similar lengths.
    **optimizer_kwargs
        Further optimizer parameters (e.g. ``momentum``).

    Returns
    -------
    net : SequenceNeuralNet
        Not yet initialized.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import LMN
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> module = SequenceNet(LMN(2, 4, 4), 2)
    >>> data = SequenceDataset(torch.randn(8, 5, 2), torch.full((8,), 5),
    ...                        torch.tensor([0, 1] * 4))
    >>> net = make_sequence_net(module, problem="multiclass", per_step=False,
    ...                         lr=1e-2, max_epochs=3, batch_size=4)
    >>> len(net.fit(data).history)
    3
    """
    return SequenceNeuralNet(
        module=module,
        criterion=SequenceLoss,
        criterion__problem=problem,
        criterion__per_step=per_step,
        optimizer=optimizer,
        lr=lr,
        optimizer__weight_decay=weight_decay,
        **{f"optimizer__{k}": v for k, v in optimizer_kwargs.items()},
        decay_biases=decay_biases,
        max_epochs=max_epochs,
        batch_size=batch_size,
        iterator_train__shuffle=True,
        iterator_train__collate_fn=collate_batch,
        iterator_valid__collate_fn=collate_batch,
        iterator_valid__batch_size=valid_batch_size or batch_size,
        train_split=None if valid_dataset is None else predefined_split(valid_dataset),
        callbacks=list(callbacks or []),
        verbose=0,
        device=str(device),
        shuffle_seed=shuffle_seed,
        bucket_by_length=bucket_by_length,
    )
