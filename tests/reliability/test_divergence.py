"""Diverging trainings: a clear error by default, recovery on request, and
gradient clipping that bounds the gradient norm."""

import re
import warnings

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback

from sklmn.callbacks import DivergenceWarning, RestoreOnDivergence
from sklmn.estimators import LMNRegressor

T = 80  # 3**80 ~ 1e38: an expanding memory overflows float32 within a sequence


class ExplodeMemory(Callback):
    """Set the LMN memory matrix to 3·I (spectral radius 3) at one epoch."""

    def __init__(self, at_epoch: int = 1):
        self.at_epoch = at_epoch

    def on_epoch_begin(self, net, **kwargs):
        if len(net.history) == self.at_epoch:  # history has the new row
            with torch.no_grad():
                w = net.module_.recurrent.layers[0].weight_mm
                w.copy_(3.0 * torch.eye(w.shape[0]))


class RecordStates(Callback):
    """Copies of the module's parameters at the end of every epoch."""

    def on_train_begin(self, net, **kwargs):
        self.states = {0: _state(net.module_)}

    def on_epoch_end(self, net, **kwargs):
        self.states[len(net.history)] = _state(net.module_)


def _state(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(32, T, 2)).astype(np.float64)
    y = X[:, :, 0].sum(axis=1) / 10
    return X, y


def _lmn(**params):
    defaults = dict(
        hidden_size=4, memory_size=3, max_iter=4, batch_size=16, random_state=0
    )
    return LMNRegressor(**{**defaults, **params})


@pytest.mark.parametrize("cause", ["spectral_radius", "learning_rate"])
def test_divergence_raises_naming_epoch_batch_and_cause(cause):
    X, y = _data()
    if cause == "spectral_radius":
        est = _lmn(callbacks=[("explode", ExplodeMemory(at_epoch=2))])
        match = r"Training diverged at epoch 2, batch 1: the data loss is (nan|inf)"
    else:
        est = _lmn(optimizer="sgd", learning_rate_init=1e6, max_iter=3)
        match = r"Training diverged at epoch \d+, batch \d+: .*learning_rate_init"
    with pytest.raises(FloatingPointError, match=match):
        est.fit(X, y)
    assert not hasattr(est, "net_")  # no half-fitted model left behind


@pytest.mark.parametrize("restore", ["best", "last"])
def test_restore_on_divergence_recovers_weights_and_warns(restore):
    X, y = _data()
    recorder = RecordStates()
    est = _lmn(
        callbacks=[
            ("explode", ExplodeMemory(at_epoch=3)),
            ("record", recorder),
            ("restore", RestoreOnDivergence(restore=restore)),
        ],
        early_stopping=False,
    )
    with pytest.warns(DivergenceWarning, match="diverged at epoch 3, batch 1"):
        est.fit(X, y)
    guard = dict(est.net_.callbacks_)["restore"]
    states = dict(est.net_.callbacks_)["record"].states
    assert guard.diverged_
    assert est.n_iter_ == 2 and len(est.loss_curve_) == 2
    # "best": the weights with the lowest training loss measured on them after
    # their epoch (not the running loss_curve_), the starting weights included
    monitor = dict(est.net_.callbacks_)["convergence"]
    evaluated = [monitor.start_] + [
        float(v) for v in est.net_.history[:, "train_eval_loss"]
    ]
    expected_epoch = 2 if restore == "last" else int(np.argmin(evaluated))
    if restore == "best":
        assert est.best_epoch_ == expected_epoch
        assert est.best_loss_ == pytest.approx(min(evaluated))
    assert guard.restored_epoch_ == expected_epoch
    restored = est.net_.module_.state_dict()
    for key, value in states[expected_epoch].items():
        torch.testing.assert_close(restored[key], value, rtol=0, atol=0)
    pred = est.predict(X)
    assert np.isfinite(pred).all()


def test_restore_on_divergence_in_first_epoch_restores_initial_parameters():
    X, y = _data()
    recorder = RecordStates()
    est = _lmn(
        callbacks=[
            ("explode", ExplodeMemory(at_epoch=1)),
            ("record", recorder),
            ("restore", RestoreOnDivergence()),
        ],
    )
    with pytest.warns(DivergenceWarning, match="initial parameters"):
        est.fit(X, y)
    states = dict(est.net_.callbacks_)["record"].states
    assert est.n_iter_ == 0 and est.loss_curve_ == [] and est.best_epoch_ == 0
    assert np.isfinite(est.best_loss_)  # the loss of the initial parameters
    restored = est.net_.module_.state_dict()
    for key, value in states[0].items():
        torch.testing.assert_close(restored[key], value, rtol=0, atol=0)
    # a warm start from the recovered model trains normally
    est.set_params(warm_start=True, callbacks=None, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 2 epochs
        est.fit(X, y)
    assert est.n_iter_ == 2 and np.isfinite(est.predict(X)).all()


def test_restore_on_divergence_rejects_bad_option():
    X, y = _data()
    est = _lmn(callbacks=[("restore", RestoreOnDivergence(restore="first"))])
    with pytest.raises(ValueError, match=re.escape("'best' or 'last', got 'first'")):
        est.fit(X, y)


class RecordGradNorms(Callback):
    """Total L2 norm of the gradient seen after the built-in callbacks."""

    def on_train_begin(self, net, **kwargs):
        self.norms = []

    def on_grad_computed(self, net, named_parameters, **kwargs):
        grads = [p.grad.detach().ravel() for _, p in named_parameters]
        self.norms.append(float(torch.linalg.vector_norm(torch.cat(grads))))


@pytest.mark.parametrize("clip", [None, 0.05])
def test_gradient_clipping_bounds_gradient_norm(clip):
    X, y = _data()
    est = _lmn(
        gradient_clipping=clip,
        max_iter=2,
        learning_rate_init=0.01,
        callbacks=[("grads", RecordGradNorms())],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 2 epochs
        est.fit(X, y * 100)  # large targets: large gradients
    norms = np.array(dict(est.net_.callbacks_)["grads"].norms)
    assert len(norms) == 4  # 2 epochs of 2 minibatches
    if clip is None:
        assert norms.max() > 10 * 0.05  # the clipped run below is a real bound
    else:
        assert norms.max() <= clip * (1 + 1e-5)
