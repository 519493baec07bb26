"""skorch callbacks for the ``callbacks=`` parameter of sklmn estimators.

* :class:`SequenceCallback`: the base class of callbacks that answer the
  events of :class:`~sklmn.training.SequenceNeuralNet` beyond skorch's own
  (``on_divergence``, ``restart``, ``restore_best``), with no-op defaults.

* :class:`RestoreOnDivergence`: when training diverges (a non-finite loss,
  non-finite parameters, a loss that explodes far above the lowest so far, or
  a recurrent matrix that cannot be computed), restore the best (or last)
  weights, stop training and warn, instead of raising
  :class:`FloatingPointError`. The estimators' ``fit`` adds
  ``RestoreOnDivergence('best')`` when ``callbacks`` has none.

For checkpointing long runs use skorch's own callbacks (see the README,
"Interrupting, checkpointing and resuming"): ``skorch.callbacks.Checkpoint``
saves the weights every epoch and ``skorch.callbacks.LoadInitState`` resumes
from them.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import torch
from skorch.callbacks import Callback

from .nn._padding import mask_from_lengths

__all__ = ["DivergenceWarning", "RestoreOnDivergence", "SequenceCallback"]


class DivergenceWarning(UserWarning):
    """Training diverged and the weights of an earlier epoch were restored.

    Examples
    --------
    >>> from sklmn.callbacks import DivergenceWarning
    >>> issubclass(DivergenceWarning, UserWarning)
    True
    """


class SequenceCallback(Callback):
    """A skorch callback that may answer the events of sklmn's training net.

    :class:`~sklmn.training.SequenceNeuralNet` sends three events beyond
    skorch's own, to every callback that implements them (a callback that
    does not derive from this class may define them too):

    * ``on_divergence(net, message)``: training diverged (``message`` names
      the cause); a callback may restore finite weights and stop training by
      raising ``KeyboardInterrupt``, otherwise the net raises
      :class:`FloatingPointError`;
    * ``restart(net)``: another callback replaced the module's parameters
      (``net.restart_monitoring()``, e.g. the growth of a multi-scale
      memory); forget what was saved about the old ones;
    * ``restore_best(net)``: load the best weights kept into the module and
      return their epoch (``net.restore_best_weights()`` returns the answer
      of the last callback that implements it).

    The defaults do nothing; an override of the base's no-op counts as
    implementing the event. Unlike skorch's ``notify``, the net collects the
    return values (see ``restore_best``).

    Examples
    --------
    >>> from sklmn.callbacks import SequenceCallback
    >>> class CountDivergences(SequenceCallback):
    ...     def initialize(self):
    ...         self.count_ = 0
    ...         return self
    ...     def on_divergence(self, net, message):
    ...         self.count_ += 1
    >>> CountDivergences().initialize().count_
    0
    """

    def on_divergence(self, net, message: str) -> None:
        """Training diverged with ``message`` (no-op)."""

    def restart(self, net) -> None:
        """The module's parameters were replaced (no-op)."""

    def restore_best(self, net) -> int | None:
        """Load the best weights kept and return their epoch (no-op)."""
        return None


class RestoreOnDivergence(SequenceCallback):
    """Recover from a diverging training instead of failing.

    The estimators' ``fit`` adds ``RestoreOnDivergence('best')`` unless
    ``callbacks`` holds one (pass ``RestoreOnDivergence('last')`` for the
    other behaviour). Without it (``partial_fit``, a plain skorch net), a
    divergence raises a :class:`FloatingPointError` that names the epoch,
    the batch and the cause:
    a non-finite training loss, non-finite parameters, a recurrent matrix
    that cannot be computed from the parameters (ENRNN), or weights whose
    loss after an epoch is more than a million times the lowest loss so far
    (and above a million, so an ordinary spike of a small loss or an
    optimizer's transient does not count). With
    it, training stops there; the module gets back the parameters of the
    best epoch or of the last epoch judged sound (the initial parameters if
    no epoch completed), and a :class:`DivergenceWarning` repeats the cause.
    The estimator is then fitted with the completed epochs (``n_iter_``,
    ``loss_curve_``; an epoch whose weights exploded counts as run) and
    records the recovery in its ``diverged_`` attribute; the callback object
    passed in ``callbacks`` is not modified (``fit`` trains with a copy).

    "Best" is the estimators' own best-weights record (the weights with the
    lowest monitored loss, measured on those weights after their epoch: see
    the estimators' ``best_loss_``), so recovery and the normal end of
    training keep the same weights, whose loss is finite and the lowest
    measured. ``'last'`` copies the parameters of every epoch that was not
    found diverged, which costs one copy of the model in memory.

    Parameters
    ----------
    restore : {'best', 'last'}, default='best'
        Restore the parameters of the best epoch, or those of the last
        completed epoch.

    Attributes
    ----------
    diverged_ : bool
        Whether the last training diverged and was stopped (set on the copy
        the estimator trains with, ``dict(est.net_.callbacks_)[name]``; the
        estimator's own ``diverged_`` says the same).
    message_ : str or None
        Cause of the divergence.
    restored_epoch_ : int or None
        Epoch whose parameters were restored (0: the initial parameters).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklmn.callbacks import DivergenceWarning, RestoreOnDivergence
    >>> from sklmn.estimators import RNNRegressor
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(20, 6, 2), rng.randn(20)
    >>> reg = RNNRegressor(hidden_size=4, max_iter=5, random_state=0,
    ...                    standardize=False,
    ...                    callbacks=[("restore", RestoreOnDivergence())])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     reg = reg.fit(X, y * 1e30)  # the squared error overflows float32
    >>> reg.n_iter_, reg.diverged_, bool(np.isfinite(reg.predict(X)).all())
    (0, True, True)
    """

    def __init__(self, restore: str = "best"):
        self.restore = restore

    def initialize(self):
        if self.restore not in ("best", "last"):
            raise ValueError(f"restore must be 'best' or 'last', got {self.restore!r}")
        return super().initialize()

    def _snapshot(self, net) -> dict:
        return {k: v.detach().clone() for k, v in net.module_.state_dict().items()}

    def on_train_begin(self, net, **kwargs):
        self.diverged_ = False
        self.message_ = None
        self.restored_epoch_ = None
        self._state = self._snapshot(net)
        self._state_epoch = 0
        self._pending = None

    def on_epoch_begin(self, net, **kwargs):
        if self._pending is not None:
            # every callback (the stopping rule's explosion check included)
            # has accepted the weights of the previous epoch
            self._state, self._state_epoch = self._pending
            self._pending = None

    def on_epoch_end(self, net, **kwargs):
        finite = all(bool(torch.isfinite(p).all()) for p in net.module_.parameters())
        row = net.history[-1]
        if not finite:
            bad = next(
                name
                for name, p in net.module_.named_parameters()
                if not bool(torch.isfinite(p).all())
            )
            message = (
                f"Training diverged at epoch {row['epoch']}: parameter {bad!r} "
                "is not finite after the last update."
            )
            if hasattr(net, "diverged"):
                # through the net, like every other divergence: it records
                # the message (the estimator's diverged_) and tells every
                # callback, this one included
                net.diverged(message)
            else:  # a plain skorch net
                self.on_divergence(net, message)
        if self.restore == "last" or not hasattr(net, "restore_best_weights"):
            # (a plain skorch net keeps no best weights: fall back to "last")
            self._pending = (self._snapshot(net), int(row["epoch"]))

    def on_train_end(self, net, **kwargs):
        # do not keep (and pickle) the copies with the model
        self._state = self._pending = None

    def on_divergence(self, net, message: str) -> None:
        """Restore the saved parameters, warn and stop training.

        Called by the sklmn net in place of raising
        :class:`FloatingPointError`; raises :class:`KeyboardInterrupt`, which
        skorch turns into the end of training.

        Parameters
        ----------
        net : skorch.NeuralNet
            The net being trained.
        message : str
            Cause of the divergence.
        """
        epoch = None
        if self.restore == "best" and hasattr(net, "restore_best_weights"):
            epoch = net.restore_best_weights()
        if epoch is None:
            net.module_.load_state_dict(self._state)
            epoch = self._state_epoch
            for _, callback in getattr(net, "callbacks_", []):
                hold = getattr(callback, "hold", None)  # keep these weights
                if hold is not None:
                    hold(epoch)
        self._state_epoch = epoch
        self.diverged_ = True
        self.message_ = message
        self.restored_epoch_ = self._state_epoch
        if len(net.history) and "train_loss" not in net.history[-1]:
            # the interrupted epoch did not complete: drop it from the history
            net.history.pop()
        which = "initial" if self._state_epoch == 0 else self.restore
        warnings.warn(
            f"{message} Stopped training and restored the {which} parameters "
            f"(epoch {self._state_epoch}).",
            DivergenceWarning,
            stacklevel=2,
        )
        raise KeyboardInterrupt


__all__ += ["TrainingNoise"]


class TrainingNoise(Callback):
    """Add fresh Gaussian noise to the training inputs, a new draw every batch.

    A regularizer for small data sets: every training minibatch gets
    independent noise of standard deviation ``std`` added to its input
    values (a fresh draw each time the batch is seen, so each epoch trains
    on new noisy copies), as in the common-suffix word experiments of Carta
    et al. 2020a §5.2 and Carta et al. 2021 §5.5 (std 0.6 on standardized
    features). Nothing else sees noise: the validation data, the training
    loss that the stopping rule recomputes on the clean training set, the
    pretrainers and incremental growth (which use the clean training
    sequences) and ``predict``. The recorded ``loss_curve_`` is the loss on
    the noisy batches.

    The noise is added to the inputs the network receives, i.e. after the
    estimator's standardization (``standardize=True``): ``std`` is in units
    of each feature's standard deviation. Padded steps beyond each
    sequence's length are left untouched.

    Parameters
    ----------
    std : float, default=0.6
        Standard deviation of the noise (0: no noise).
    random_state : int or None, default=None
        Seed of the noise. None: derived from the estimator's
        ``random_state`` (the net's shuffling seed), so a seeded estimator
        trains reproducibly.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.callbacks import TrainingNoise
    >>> from sklmn.estimators import RNNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(30, 5, 2), rng.randint(0, 2, 30)
    >>> clf = RNNClassifier(hidden_size=4, max_iter=3, random_state=0,
    ...                     callbacks=[("noise", TrainingNoise(std=0.6))])
    >>> clf = clf.fit(X, y)
    >>> clf.predict(X).shape
    (30,)
    >>> TrainingNoise(std=-1).initialize()
    Traceback (most recent call last):
    ...
    ValueError: std must be a finite number >= 0, got -1
    """

    def __init__(self, std=0.6, random_state=None):
        self.std = std
        self.random_state = random_state

    def initialize(self):
        std = self.std
        # numbers.Real / Integral: numpy scalars too (np.float32, np.int64
        # from a parameter grid)
        if (
            isinstance(std, bool | np.bool_)
            or not isinstance(std, numbers.Real)
            or not (0 <= std < float("inf"))
        ):
            raise ValueError(f"std must be a finite number >= 0, got {std!r}")
        seed = self.random_state
        if seed is not None and (
            isinstance(seed, bool | np.bool_)
            or not isinstance(seed, numbers.Integral)
            or not -(2**63) <= seed < 2**64  # what torch's generator takes
        ):
            raise ValueError(f"random_state must be an int or None, got {seed!r}")
        return super().initialize()

    def on_train_begin(self, net, **kwargs):
        seed = self.random_state
        if seed is None:
            # a different stream from the shuffling that uses the same seed
            seed = int(getattr(net, "shuffle_seed", 0)) + 7919
        self._generator = torch.Generator().manual_seed(int(seed))

    def on_batch_begin(self, net, batch=None, training=False, **kwargs):
        if not training or not self.std or batch is None:
            return
        Xi = batch[0]
        X = Xi["X"] if isinstance(Xi, dict) else Xi
        noise = torch.randn(X.shape, generator=self._generator, dtype=X.dtype)
        noise = noise.to(X.device).mul_(float(self.std))
        lengths = Xi.get("lengths") if isinstance(Xi, dict) else None
        if lengths is not None and X.dim() >= 2:
            valid = mask_from_lengths(lengths, X.shape[1], device=X.device)
            noise = noise * valid.reshape(valid.shape + (1,) * (X.dim() - 2))
        if isinstance(Xi, dict):
            Xi["X"] = X + noise  # a new tensor: the dataset is left clean
        else:
            X.add_(noise)  # a collated copy of the data

    def on_train_end(self, net, **kwargs):
        self._generator = None  # not pickled with the model
