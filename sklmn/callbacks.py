"""skorch callbacks for the ``callbacks=`` parameter of sklmn estimators.

* :class:`RestoreOnDivergence`: when training diverges (a non-finite loss or
  non-finite parameters), restore the best (or last) finite weights, stop
  training and warn, instead of raising :class:`FloatingPointError`.

For checkpointing long runs use skorch's own callbacks (see the README,
"Interrupting, checkpointing and resuming"): ``skorch.callbacks.Checkpoint``
saves the weights every epoch and ``skorch.callbacks.LoadInitState`` resumes
from them.
"""

from __future__ import annotations

import warnings

import torch
from skorch.callbacks import Callback

__all__ = ["DivergenceWarning", "RestoreOnDivergence"]


class DivergenceWarning(UserWarning):
    """Training diverged and the weights of an earlier epoch were restored.

    Examples
    --------
    >>> from sklmn.callbacks import DivergenceWarning
    >>> issubclass(DivergenceWarning, UserWarning)
    True
    """


class RestoreOnDivergence(Callback):
    """Recover from a diverging training instead of failing.

    Without this callback, a non-finite training loss (or non-finite
    parameters at the end of training) makes ``fit`` raise a
    :class:`FloatingPointError` that names the epoch, the batch and the cause.
    With it, training stops at the first non-finite loss or at the end of an
    epoch whose parameters are not finite; the module gets back the
    parameters of the best epoch or of the last completed epoch (the initial
    parameters if no epoch completed), and a :class:`DivergenceWarning`
    repeats the cause. The estimator is then fitted with the completed epochs
    (``n_iter_``, ``loss_curve_``).

    "Best" is the estimators' own best-weights record (the weights with the
    lowest monitored loss, measured on those weights after their epoch: see
    the estimators' ``best_loss_``), so recovery and the normal end of
    training keep the same weights. ``'last'`` copies the parameters at the
    end of every epoch, which costs one copy of the model in memory.

    Parameters
    ----------
    restore : {'best', 'last'}, default='best'
        Restore the parameters of the best epoch, or those of the last
        completed epoch.

    Attributes
    ----------
    diverged_ : bool
        Whether the last training diverged and was stopped.
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
    >>> reg.n_iter_, bool(np.isfinite(reg.predict(X)).all())
    (0, True)
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

    def on_epoch_end(self, net, **kwargs):
        finite = all(bool(torch.isfinite(p).all()) for p in net.module_.parameters())
        row = net.history[-1]
        if not finite:
            bad = next(
                name
                for name, p in net.module_.named_parameters()
                if not bool(torch.isfinite(p).all())
            )
            self.on_divergence(
                net,
                f"Training diverged at epoch {row['epoch']}: parameter {bad!r} "
                "is not finite after the last update.",
            )
        if self.restore == "last" or not hasattr(net, "restore_best_weights"):
            # (a plain skorch net keeps no best weights: fall back to "last")
            self._state = self._snapshot(net)
            self._state_epoch = int(row["epoch"])

    def on_train_end(self, net, **kwargs):
        self._state = None  # do not keep (and pickle) the copy with the model

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
                    hold()
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
