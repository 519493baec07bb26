"""``memory_lr_scale``: the memory recurrence and the feedback in an optimizer
group of their own."""

import numpy as np
import pytest
from skorch.callbacks import Callback

from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.persistence import load, save


def _data(n=24, T=6, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, 0, 0] > 0).astype(int)


def _group_of(net, name):
    param = dict(net.module_.named_parameters())[name]
    for group in net.optimizer_.param_groups:
        if any(p is param for p in group["params"]):
            return group
    raise LookupError(name)


@pytest.mark.parametrize("memory_matrix", ["free", "schur", "spectral"])
@pytest.mark.parametrize(
    "cls", [LMNClassifier, MultiScaleLMNClassifier, MultiScaleLMNRegressor]
)
def test_memory_parameters_train_at_the_scaled_rate(cls, memory_matrix):
    X, y = _data()
    if "Regressor" in cls.__name__:
        y = y.astype(float)
    clf = cls(
        hidden_size=4, memory_size=4, memory_matrix=memory_matrix,
        memory_lr_scale=0.1, learning_rate_init=0.01, max_iter=2,
        pretrainer=None, random_state=0,
    ).fit(X, y)
    names = [n for n, _ in clf.net_.module_.named_parameters()]
    memory = [
        n
        for n in names
        if "weight_mm" in n or ".memory." in n or n.endswith("weight_mh")
    ]
    others = [n for n in names if n not in memory]
    assert memory and others
    for name in memory:
        assert _group_of(clf.net_, name)["lr"] == pytest.approx(1e-3, rel=1e-12)
    for name in others:
        assert _group_of(clf.net_, name)["lr"] == pytest.approx(1e-2, rel=1e-12)


def test_scale_one_keeps_a_single_rate_and_the_same_fit():
    X, y = _data()
    params = dict(hidden_size=4, memory_size=4, max_iter=3, random_state=0,
                  learning_rate_init=0.01, fine_tuning="full")
    a = LMNClassifier(**params).fit(X, y)
    b = LMNClassifier(memory_lr_scale=1.0, **params).fit(X, y)
    assert {g["lr"] for g in a.net_.optimizer_.param_groups} == {0.01}
    np.testing.assert_allclose(
        a.predict_proba(X), b.predict_proba(X), rtol=1e-5, atol=1e-6
    )


def test_frozen_rate_is_refused_and_a_tiny_one_moves_the_memory_less():
    X, y = _data()
    with pytest.raises(ValueError, match="memory_lr_scale"):
        LMNRegressor(memory_lr_scale=0.0).fit(X, y.astype(float))
    moved = {}
    for scale in (1.0, 1e-3):
        reg = LMNRegressor(
            hidden_size=4, memory_size=4, memory_matrix="schur", pretrainer=None,
            memory_lr_scale=scale, max_iter=5, learning_rate_init=0.05,
            random_state=0, callbacks=[("start", _Start())],
        ).fit(X, y.astype(float))
        start = dict(reg.net_.callbacks_)["start"].state_
        end = reg.net_.module_.state_dict()
        moved[scale] = max(
            float((end[k] - start[k]).abs().max()) for k in end if ".memory." in k
        )
    assert moved[1e-3] < 0.05 * moved[1.0]


class _Start(Callback):
    def on_train_begin(self, net, **kwargs):
        self.state_ = {k: v.clone() for k, v in net.module_.state_dict().items()}


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
@pytest.mark.parametrize(
    "pretrainer, matrix, scale", [(None, "schur", 0.1), ("auto", "schur", 0.01)]
)
def test_auto_memory_follows_the_start(cls, pretrainer, matrix, scale):
    """'auto': the Schur memory at a tenth of the rate without a start, at a
    hundredth from the LAES start (the smooth fine-tuning); the groups
    follow."""
    X, y = _data()
    clf = cls(hidden_size=4, memory_size=4, max_iter=2, pretrainer=pretrainer,
              learning_rate_init=0.01, random_state=0).fit(X, y)
    assert clf.memory_matrix == "auto" and clf.memory_lr_scale == "auto"
    assert (clf.memory_matrix_, clf.memory_lr_scale_) == (matrix, scale)
    names = dict(clf.net_.module_.named_parameters())
    assert any(".memory." in n for n in names) == (matrix == "schur")
    rates = sorted({g["lr"] for g in clf.net_.optimizer_.param_groups})
    assert rates == pytest.approx(sorted({0.01, 0.01 * scale}), rel=1e-12)


def test_auto_memory_is_explicit_when_set_and_refits_fresh():
    """An explicit memory wins over 'auto'; a refit resolves again."""
    X, y = _data()
    clf = LMNClassifier(hidden_size=4, memory_size=4, max_iter=2,
                        memory_matrix="free", pretrainer=None, random_state=0)
    clf.fit(X, y)
    assert (clf.memory_matrix_, clf.memory_lr_scale_) == ("free", 1.0)
    clf.set_params(memory_matrix="auto").fit(X, y)
    assert (clf.memory_matrix_, clf.memory_lr_scale_) == ("schur", 0.1)
    clf.set_params(pretrainer="auto").fit(X, y)
    assert (clf.memory_matrix_, clf.memory_lr_scale_) == ("schur", 0.01)
    clf.set_params(fine_tuning="full").fit(X, y)
    assert (clf.memory_matrix_, clf.memory_lr_scale_) == ("free", 1.0)


def test_auto_memory_survives_saving(tmp_path):
    """A saved 'auto' model rebuilds the memory it was trained with."""
    X, y = _data()
    clf = MultiScaleLMNClassifier(hidden_size=4, memory_size=4, max_iter=2,
                                  pretrainer=None, random_state=0).fit(X, y)
    save(clf, tmp_path / "model.sklmn")
    back = load(tmp_path / "model.sklmn")
    assert back.memory_matrix_ == "schur"
    np.testing.assert_allclose(back.predict_proba(X), clf.predict_proba(X),
                               rtol=1e-5, atol=1e-6)


def test_scratch_batch_of_the_lmn_classifiers():
    """batch_size='auto': 16 for the LMN classifiers without a start, the
    usual min(200, n) from the LAES start, for the regressor and for an
    explicit free memory."""
    X, y = _data(n=40)
    params = dict(hidden_size=4, memory_size=4, max_iter=1, random_state=0)
    assert LMNClassifier(pretrainer=None, **params).fit(X, y).net_.batch_size == 16
    ms = MultiScaleLMNClassifier(pretrainer=None, **params).fit(X, y)
    assert ms.net_.batch_size == 16
    assert LMNClassifier(**params).fit(X, y).net_.batch_size == 40
    free = LMNClassifier(pretrainer=None, memory_matrix="free", **params)
    assert free.fit(X, y).net_.batch_size == 40
    reg = LMNRegressor(pretrainer=None, **params).fit(X, y.astype(float))
    assert reg.net_.batch_size == 40
    explicit = LMNClassifier(pretrainer=None, batch_size=8, **params)
    assert explicit.fit(X, y).net_.batch_size == 8
