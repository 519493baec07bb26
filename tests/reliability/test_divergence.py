"""Diverging trainings: recovery with the best weights and a warning by
default, a clear error when that warning is made an error, and gradient
clipping that bounds the gradient norm."""

import contextlib
import re
import warnings

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback

from sklmn.callbacks import DivergenceWarning, RestoreOnDivergence
from sklmn.estimators import ENRNNRegressor, LMNRegressor, RNNClassifier, RNNRegressor

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


@contextlib.contextmanager
def _raising():
    """Divergence warnings as errors: ``fit`` fails instead of recovering."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        yield


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(32, T, 2)).astype(np.float64)
    y = X[:, :, 0].sum(axis=1) / 10
    return X, y


def _lmn(**params):
    # a random start (no pretraining): what ExplodeMemory blows up reaches
    # the outputs (a start discarded by 'auto' has a zero readout)
    defaults = dict(
        hidden_size=4,
        memory_size=3,
        max_iter=4,
        batch_size=16,
        pretrainer=None,
        random_state=0,
        memory_matrix="free",  # ExplodeMemory writes a free W_mm
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
    with _raising():
        with pytest.raises(DivergenceWarning, match=match):
            est.fit(X, y)
    assert not hasattr(est, "net_")  # no half-fitted model left behind
    # by default: the best weights (here the first epoch's or the start) and
    # the cause in a warning
    with pytest.warns(DivergenceWarning, match=match):
        est.fit(X, y)
    assert est.diverged_ and np.isfinite(est.predict(X)).all()


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
        # the anchor to a pretrained start is added after clipping
        pretrained_alpha=0.0,
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


# ---------------------------------------------------------------------------
# reproducers of training that diverges or explodes (tiny data, huge steps)


def _tiny():
    rng = np.random.RandomState(0)
    return rng.randn(12, 6, 2), rng.randint(0, 3, 12), rng.randn(12)


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning, DivergenceWarning
        return est.fit(X, y)


def test_recovery_keeps_weights_judged_after_their_epoch_and_finite():
    X, _, y = _tiny()
    guard = RestoreOnDivergence()
    est = LMNRegressor(
        hidden_size=3,
        memory_size=2,
        max_iter=3,
        random_state=0,
        optimizer="sgd",
        learning_rate_init=1e8,
        callbacks=[("r", guard)],
    )
    with pytest.warns(DivergenceWarning, match="Training diverged"):
        est.fit(X, y)
    assert est.diverged_ is True
    assert not hasattr(guard, "diverged_")  # the user's object is untouched
    assert dict(est.net_.callbacks_)["r"].diverged_
    pred = est.predict(X)
    assert np.isfinite(pred).all() and np.abs(pred).max() < 100 * np.abs(y).max()
    # best_loss_ is the loss of the weights kept, measured on them: the mean
    # squared error in standardized units (the LMN has no penalty here)
    mse = np.mean(((pred - y) / est.target_scale_[0]) ** 2)
    assert np.isfinite(est.best_loss_)
    assert mse == pytest.approx(est.best_loss_, rel=1e-3)
    # the kept weights are the best measured: no completed epoch beat them
    monitor = dict(est.net_.callbacks_)["convergence"]
    assert est.best_loss_ <= monitor.start_ * (1 + 1e-6)


def test_diverged_is_false_after_a_normal_fit():
    X, _, y = _tiny()
    est = _quiet_fit(
        LMNRegressor(hidden_size=3, memory_size=2, max_iter=2, random_state=0), X, y
    )
    assert est.diverged_ is False


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: RNNRegressor(hidden_size=3, **kw),
        lambda **kw: ENRNNRegressor(hidden_size=3, short_size=2, **kw),
    ],
    ids=["rnn", "enrnn"],
)
def test_exploding_finite_loss_is_a_divergence(make):
    X, _, y = _tiny()
    params = dict(max_iter=3, random_state=0, optimizer="sgd", learning_rate_init=1e8)
    with _raising():
        with pytest.raises(
            DivergenceWarning, match=r"diverged at epoch 1: .*1e\+06 times the lowest"
        ):
            make(**params).fit(X, y)
    for callbacks in (None, [("r", RestoreOnDivergence())]):  # the default, explicit
        est = make(callbacks=callbacks, **params)
        with pytest.warns(DivergenceWarning, match="times the lowest"):
            est.fit(X, y)
        assert est.diverged_ and est.best_epoch_ == 0  # the starting weights
        assert np.isfinite(est.best_loss_) and est.best_loss_ < 10
        assert est.score(X, y) > -10  # not the R² of -3e48 of exploded weights


def test_small_loss_that_grows_is_not_an_explosion():
    """A loss far below 1 may grow a million-fold (an ordinary first-epoch
    spike of a model that starts almost perfect) without counting as
    divergence."""
    rng = np.random.RandomState(0)
    X = rng.randn(16, 5, 1)
    y = 1e-4 * rng.randn(16)  # squared errors ~1e-8 at the start
    est = LMNRegressor(
        hidden_size=3,
        memory_size=2,
        max_iter=2,
        standardize=False,
        learning_rate_init=0.5,
        random_state=0,
        early_stopping=False,
        norm_penalty=0.0,  # a loss of the squared errors alone
        memory_lr_scale=1.0,  # every parameter at the large rate
        feedback="free",  # the feedback too
    )
    _quiet_fit(est, X, y)
    assert not est.diverged_ and est.n_iter_ == 2
    monitor = dict(est.net_.callbacks_)["convergence"]
    after_epoch_1 = float(est.net_.history[0, "train_eval_loss"])
    assert 1e6 * monitor.start_ < after_epoch_1 < 1.0  # grew a million-fold
    assert np.isfinite(est.predict(X)).all()


@pytest.mark.parametrize("restore", [None, "best", "last"])
def test_enrnn_singular_cayley_matrix_is_a_divergence(restore):
    from sklmn.estimators import ENRNNClassifier

    X, yc, _ = _tiny()
    callbacks = None if restore is None else [("r", RestoreOnDivergence(restore))]
    est = ENRNNClassifier(
        hidden_size=3,
        short_size=2,
        max_iter=5,
        random_state=0,
        optimizer="adam",
        learning_rate_init=1e8,
        gradient_clipping=None,
        callbacks=callbacks,
    )
    if restore is None:
        with _raising():
            with pytest.raises(DivergenceWarning, match="recurrent matrix cannot be"):
                est.fit(X, yc)
    with pytest.warns(DivergenceWarning, match="recurrent matrix cannot be"):
        est.fit(X, yc)
    assert est.diverged_
    assert np.isfinite(est.predict_proba(X)).all()


def test_restore_last_never_restores_weights_found_exploded():
    X, _, y = _tiny()
    est = LMNRegressor(
        hidden_size=3,
        memory_size=2,
        max_iter=3,
        random_state=0,
        optimizer="sgd",
        learning_rate_init=1e8,
        callbacks=[("r", RestoreOnDivergence(restore="last"))],
    )
    with pytest.warns(DivergenceWarning):
        est.fit(X, y)
    guard = dict(est.net_.callbacks_)["r"]
    assert est.diverged_ and guard.restored_epoch_ < est.n_iter_ + 1
    assert np.isfinite(est.predict(X)).all()
    assert np.abs(est.predict(X)).max() < 100 * np.abs(y).max()


class _NaNParametersAt(Callback):
    """Make every parameter NaN at the end of one epoch."""

    def __init__(self, at_epoch: int = 2):
        self.at_epoch = at_epoch

    def on_epoch_end(self, net, **kwargs):
        if len(net.history) == self.at_epoch:
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.fill_(float("nan"))


def test_non_finite_parameters_found_by_the_guard_set_diverged():
    # RestoreOnDivergence's own check of the parameters after an epoch is a
    # divergence like the others: the estimator records it in diverged_
    X, y, _ = _tiny()
    est = RNNRegressor(
        hidden_size=3, max_iter=4, random_state=0, callbacks=[_NaNParametersAt(2)]
    )
    with pytest.warns(DivergenceWarning, match="parameter .* is not finite"):
        est.fit(X, y.astype(float))
    assert est.diverged_ is True
    assert est.n_iter_ == 2
    assert np.isfinite(est.predict(X)).all()


class _WorsenThenNaN(Callback):
    """Make the weights after epoch 2 worse than those after epoch 1 (epoch
    2 starts from a readout sure of class 0 whatever the input), then make
    every parameter NaN in epoch 3."""

    def on_epoch_begin(self, net, **kwargs):
        if len(net.history) == 2:  # the history has the new epoch's row
            with torch.no_grad():
                net.module_.readout.weight.zero_()
                net.module_.readout.bias.copy_(torch.tensor([10.0, -10.0]))

    def on_batch_end(self, net, training=False, **kwargs):
        if training and len(net.history) == 3:
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.fill_(float("nan"))


@pytest.mark.parametrize("early_stopping", [False, True])
def test_restore_last_reports_the_epoch_and_loss_of_the_weights_kept(early_stopping):
    # RestoreOnDivergence('last') keeps the last sound weights (epoch 2, worse
    # than epoch 1): best_epoch_ and best_loss_ describe those weights, not
    # the best epoch's that were not kept
    rng = np.random.RandomState(0)
    X = rng.randn(24, 5, 2)
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    est = RNNClassifier(
        hidden_size=3,
        max_iter=5,
        batch_size=8,
        alpha=0.0,
        random_state=0,
        early_stopping=early_stopping,
        validation_fraction=0.25,
        callbacks=[_WorsenThenNaN(), ("r", RestoreOnDivergence("last"))],
    )
    with pytest.warns(DivergenceWarning, match="restored the last parameters"):
        est.fit(X, y)
    guard = dict(est.net_.callbacks_)["r"]
    assert guard.restored_epoch_ == 2
    assert est.best_epoch_ == 2
    if early_stopping:
        assert est.best_loss_ == pytest.approx(est.validation_loss_curve_[1], rel=1e-6)
        assert est.best_validation_score_ == pytest.approx(
            est.validation_scores_[1], rel=1e-6
        )
    else:
        proba = np.clip(est.predict_proba(X)[np.arange(len(y)), y], 1e-12, 1)
        assert est.best_loss_ == pytest.approx(-np.mean(np.log(proba)), rel=1e-4)


class _NaNParametersInLastBatchOf(Callback):
    """Make every parameter NaN after each training batch of one epoch (the
    last one included, so the validation pass sees NaN outputs)."""

    def __init__(self, epoch: int = 2):
        self.epoch = epoch

    def on_batch_end(self, net, training=False, **kwargs):
        if training and len(net.history) == self.epoch:
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.fill_(float("nan"))


@pytest.mark.parametrize("validation_metric", ["loss", "score"])
def test_regressor_validation_score_of_diverged_weights_is_a_divergence(
    validation_metric,
):
    # the validation R^2 of NaN outputs failed fit with scikit-learn's
    # "Input contains NaN" instead of the divergence recovery
    rng = np.random.RandomState(0)
    X = rng.randn(20, 5, 2)
    y = X[:, :, 0].sum(axis=1)
    est = RNNRegressor(
        hidden_size=3,
        max_iter=4,
        early_stopping=True,
        validation_fraction=0.2,
        validation_metric=validation_metric,
        random_state=0,
        callbacks=[_NaNParametersInLastBatchOf(2)],
    )
    with pytest.warns(DivergenceWarning, match="not finite"):
        est.fit(X, y)
    assert est.diverged_ is True
    assert est.best_epoch_ <= 1
    assert np.isfinite(est.best_loss_)
    assert np.isfinite(est.predict(X)).all()
