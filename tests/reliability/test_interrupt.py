"""Interrupted trainings leave usable estimators; checkpoints resume training."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from skorch.callbacks import Callback, Checkpoint, LoadInitState

from sklmn.estimators import LMNClassifier, MultiScaleLMNRegressor


class InterruptAfter(Callback):
    """Raise KeyboardInterrupt (a user's Ctrl-C) at the end of an epoch."""

    def __init__(self, epoch: int = 2):
        self.epoch = epoch

    def on_epoch_end(self, net, **kwargs):
        if len(net.history) == self.epoch:
            raise KeyboardInterrupt


class InterruptMidEpoch(Callback):
    """Raise KeyboardInterrupt at the start of a batch of a given epoch."""

    def __init__(self, epoch: int = 3, batch: int = 2):
        self.epoch, self.batch = epoch, batch

    def on_batch_begin(self, net, training=False, **kwargs):
        if training and len(net.history) == self.epoch:
            if len(net.history[-1, "batches"]) == self.batch:
                raise KeyboardInterrupt


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(24, 6, 2)
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    return X, y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of short runs
        return est.fit(X, y)


@pytest.mark.parametrize(
    "interrupt, completed",
    [(InterruptAfter(2), 2), (InterruptMidEpoch(epoch=3, batch=2), 2)],
)
def test_keyboard_interrupt_leaves_fitted_estimator_and_warm_start_continues(
    interrupt, completed
):
    X, y = _data()
    est = LMNClassifier(
        hidden_size=4,
        memory_size=3,
        max_iter=10,
        batch_size=8,
        random_state=0,
        callbacks=[("interrupt", interrupt)],
    )
    _fit(est, X, y)
    assert est.n_iter_ == completed and len(est.loss_curve_) == completed
    assert est.predict(X).shape == (24,)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0, atol=1e-12)
    weights = {k: v.clone() for k, v in est.net_.module_.state_dict().items()}
    first_losses = list(est.loss_curve_)
    # continue the interrupted model: same weights at the start, more epochs
    est.set_params(warm_start=True, callbacks=None, max_iter=3)
    starts = []

    class RecordStart(Callback):
        def on_train_begin(self, net, **kwargs):
            starts.append({k: v.clone() for k, v in net.module_.state_dict().items()})

    est.set_params(callbacks=[("start", RecordStart())])
    _fit(est, X, y)
    for key, value in weights.items():
        torch.testing.assert_close(starts[0][key], value, rtol=0, atol=0)
    assert est.n_iter_ == completed + 3
    assert est.loss_curve_[:completed] == first_losses


def test_checkpoint_and_resume_match_uninterrupted_history(tmp_path):
    """skorch's Checkpoint saves every epoch; LoadInitState resumes from it."""
    X, y = _data()
    X = X[:, :, :1]
    y = X[:, :, 0].sum(axis=1)
    params = dict(
        hidden_size=4,
        memory_size=2,
        n_modules=2,
        batch_size=24,  # one full batch: no shuffling, the resume is exact
        optimizer="adam",
        # from scratch the training loss falls at every one of these 5 epochs
        # (asserted below), so both runs keep the last epoch's weights (the
        # best-weights record restarts on resume). From the LAES start the
        # loss is at its floor and wobbles: which epoch is best then turns on
        # rounding, and another torch build kept another epoch.
        pretrainer=None,
        early_stopping=False,
        random_state=0,
    )

    def checkpoint():
        # monitor=None: save after every epoch (weights, optimizer, history)
        return Checkpoint(monitor=None, dirname=str(tmp_path), f_criterion=None)

    full = _fit(MultiScaleLMNRegressor(max_iter=5, **params), X, y)
    assert np.all(np.diff(full.loss_curve_) < 0), full.loss_curve_
    # a run killed after epoch 3 (e.g. the job was preempted)
    _fit(
        MultiScaleLMNRegressor(
            max_iter=5,
            callbacks=[("checkpoint", checkpoint()), ("kill", InterruptAfter(3))],
            **params,
        ),
        X,
        y,
    )
    # resume: LoadInitState loads weights, optimizer state and history at the
    # start of training; max_iter counts the epochs still to run
    cp = checkpoint()
    resumed = _fit(
        MultiScaleLMNRegressor(
            max_iter=2,
            callbacks=[("checkpoint", cp), ("resume", LoadInitState(cp))],
            **params,
        ),
        X,
        y,
    )
    assert resumed.n_iter_ == 5
    np.testing.assert_allclose(resumed.loss_curve_, full.loss_curve_, rtol=1e-5)
    np.testing.assert_allclose(
        resumed.predict(X), full.predict(X), rtol=1e-4, atol=1e-6
    )


def test_interrupt_in_the_last_epoch_is_not_max_iter_reached():
    # an interruption in the middle of epoch max_iter leaves max_iter - 1
    # completed epochs: no "Maximum iterations reached" ConvergenceWarning
    X, y = _data()
    est = LMNClassifier(
        hidden_size=4,
        memory_size=3,
        max_iter=2,
        batch_size=8,
        random_state=0,
        callbacks=[InterruptMidEpoch(epoch=2, batch=2)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    assert est.n_iter_ == 1
    # all max_iter epochs completed without converging: the warning stays
    est.set_params(callbacks=None)
    with pytest.warns(ConvergenceWarning, match="Maximum iterations"):
        est.fit(X, y)
