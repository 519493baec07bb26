"""A failed or interrupted ``fit`` leaves the estimator exactly as it was."""

import warnings

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback

from sklmn import pretraining
from sklmn.callbacks import DivergenceWarning
from sklmn.estimators import LMNClassifier, LMNRegressor, MultiScaleLMNRegressor

SMALL = dict(hidden_size=3, memory_size=2, max_iter=3, random_state=0)


def _data():
    rng = np.random.RandomState(0)
    return rng.randn(12, 6, 2), rng.randint(0, 3, 12), rng.randn(12)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of short runs
        return est.fit(X, y)


def _fitted_state(est):
    """Fitted attributes (public and private) and a copy of the weights."""
    params = est.get_params(deep=False)
    attrs = {k: v for k, v in vars(est).items() if k not in params}
    weights = {k: v.clone() for k, v in est.net_.module_.state_dict().items()}
    return attrs, weights


def _assert_unchanged(est, before, X, proba):
    attrs, weights = before
    params = est.get_params(deep=False)
    now = {k: v for k, v in vars(est).items() if k not in params}
    assert now.keys() == attrs.keys()
    for key, value in attrs.items():
        assert now[key] is value, key  # the very same objects
    for key, value in est.net_.module_.state_dict().items():
        torch.testing.assert_close(value, weights[key], rtol=0, atol=0)
    np.testing.assert_allclose(est.predict_proba(X), proba, rtol=1e-6, atol=1e-9)


class InterruptAtBatch(Callback):
    """Raise KeyboardInterrupt (Ctrl-C) at a training batch of an epoch."""

    def __init__(self, epoch=1):
        self.epoch = epoch

    def on_batch_begin(self, net, training=False, **kwargs):
        if training and len(net.history) == self.epoch:
            raise KeyboardInterrupt


class Fail(Callback):
    def on_epoch_end(self, net, **kwargs):
        raise RuntimeError("callback failure")


def test_diverging_refit_with_new_labels_leaves_previous_model_intact():
    X, yc, _ = _data()
    est = _fit(LMNClassifier(**SMALL), X, yc)
    before, proba = _fitted_state(est), est.predict_proba(X)
    est.set_params(optimizer="sgd", learning_rate_init=1e8)
    labels = np.array(list("abcdefghijkl"))
    with warnings.catch_warnings():  # a divergence made an error
        warnings.simplefilter("error", DivergenceWarning)
        with pytest.raises(DivergenceWarning, match="Training diverged"):
            est.fit(X[:, :, :1], labels)  # new labels and a new feature count
    _assert_unchanged(est, before, X, proba)
    assert list(est.classes_) == [0, 1, 2] and est.n_features_in_ == 2
    assert set(est.predict(X)) <= {0, 1, 2}


@pytest.mark.parametrize(
    "callback, error",
    [(InterruptAtBatch(epoch=1), KeyboardInterrupt), (Fail(), RuntimeError)],
)
@pytest.mark.parametrize("warm_start", [False, True])
def test_exception_or_early_ctrl_c_in_refit_leaves_model_intact(
    callback, error, warm_start
):
    X, yc, _ = _data()
    est = _fit(LMNClassifier(**SMALL), X, yc)
    before, proba = _fitted_state(est), est.predict_proba(X)
    est.set_params(warm_start=warm_start, callbacks=[("cb", callback)])
    with pytest.raises(error):
        est.fit(X, yc)
    _assert_unchanged(est, before, X, proba)


def test_ctrl_c_before_first_epoch_of_first_fit_leaves_estimator_unfitted():
    X, _, yr = _data()
    est = LMNRegressor(**SMALL, callbacks=[("stop", InterruptAtBatch(epoch=1))])
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, yr)
    params = est.get_params(deep=False)
    assert [k for k in vars(est) if k not in params] == []


def test_failed_fit_after_incremental_growth_leaves_model_intact():
    rng = np.random.RandomState(0)
    X = rng.randn(20, 8, 1)
    y = X[:, 0, 0]
    est = MultiScaleLMNRegressor(
        hidden_size=3,
        memory_size=2,
        n_modules=2,
        max_iter=4,
        incremental=pretraining.IncrementalTraining(
            epochs_per_module=1, min_improvement=-1.0
        ),
        random_state=0,
    )
    _fit(est, X, y)
    attrs, weights = _fitted_state(est)
    pred = est.predict(X)
    est.set_params(callbacks=[("fail", Fail())])
    with pytest.raises(RuntimeError, match="callback failure"):
        est.fit(X, y)
    params = est.get_params(deep=False)
    assert {k: v for k, v in vars(est).items() if k not in params} == attrs
    np.testing.assert_allclose(est.predict(X), pred, rtol=1e-6, atol=1e-9)


def test_laes_refit_that_fails_leaves_the_fitted_transformer_as_it_was():
    from sklmn.laes import LAESTransformer

    rng = np.random.RandomState(0)
    X = rng.randn(12, 6, 2)
    laes = LAESTransformer(n_components=3).fit(X)
    before = dict(vars(laes))
    out = laes.transform(X)
    with pytest.raises(ValueError):
        laes.fit(X[:1, :1])  # 1 step < n_components: refused after validation
    assert vars(laes).keys() == before.keys()
    assert all(vars(laes)[k] is v for k, v in before.items())
    np.testing.assert_allclose(laes.transform(X), out)
