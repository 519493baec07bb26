"""``fine_tuning``: the residual fine-tuning of a pretrained start (a frozen
start plus a network trained from the random start, its outputs added)."""

import copy

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback

from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.estimators._lmn import resolve_fine_tuning
from sklmn.nn import LMN
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining
from sklmn.training import SequenceNet


def _data(n=30, T=8, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, :3, 0].sum(1) > 0).astype(int)


class _AtStart(Callback):
    """Records, when training begins, the network's outputs, the frozen
    start's outputs and the start's parameters."""

    def __init__(self, X):
        self.X = X

    def on_train_begin(self, net, **kwargs):
        module = net.module_
        x = torch.as_tensor(self.X, dtype=next(module.parameters()).dtype)
        with torch.no_grad():
            self.outputs_ = module(x).clone()
            start = module.start
            self.start_outputs_ = None if start is None else start(x).clone()
        self.start_state_ = (
            None if start is None else copy.deepcopy(start.state_dict())
        )


# ----------------------------------------------------------- SequenceNet


def test_attach_start_adds_the_frozen_outputs():
    torch.manual_seed(0)
    start, net = SequenceNet(LMN(2, 3, 3), 2), SequenceNet(LMN(2, 3, 3), 2)
    x = torch.randn(5, 4, 2)
    lengths = torch.tensor([4, 2, 3, 1, 4])
    expected = net(x, lengths) + start(x, lengths)
    net.attach_start_(start)
    torch.testing.assert_close(net(x, lengths), expected, rtol=1e-6, atol=1e-6)
    assert not any(p.requires_grad for p in net.start.parameters())
    assert all(p.requires_grad for n, p in net.named_parameters() if "start" not in n)
    net.train()
    assert net.training and not net.start.training
    outputs, _ = net(x, lengths, return_penalty=True)
    outputs.sum().backward()
    assert all(p.grad is None for p in net.start.parameters())
    assert net.readout.weight.grad is not None


def test_attach_start_refuses_bad_starts():
    net = SequenceNet(LMN(2, 3, 3), 2)
    with pytest.raises(TypeError, match="start must be a SequenceNet, got LMN"):
        net.attach_start_(LMN(2, 3, 3))
    with pytest.raises(ValueError, match="its own start"):
        net.attach_start_(net)


# -------------------------------------------------------- resolution


@pytest.mark.parametrize(
    "cls",
    [LMNClassifier, MultiScaleLMNClassifier, LMNRegressor, MultiScaleLMNRegressor],
)
def test_residual_needs_a_start(cls):
    assert cls().fine_tuning == "auto"
    assert resolve_fine_tuning(cls(fine_tuning="full"), 100) == "full"
    assert resolve_fine_tuning(cls(fine_tuning="residual"), 100) == "residual"
    # no start above 1000 sequences, nor without a pretrainer
    assert resolve_fine_tuning(cls(fine_tuning="residual"), 5000) == "full"
    no_start = cls(fine_tuning="residual", pretrainer=None)
    assert resolve_fine_tuning(no_start, 100) == "full"


def test_incremental_training_is_full():
    clf = MultiScaleLMNClassifier(
        fine_tuning="residual", incremental=IncrementalTraining()
    )
    assert resolve_fine_tuning(clf, 100) == "full"


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_bad_value_is_named(cls):
    X, y = _data()
    with pytest.raises(ValueError, match="fine_tuning.*'bogus'|'bogus'.*fine_tuning"):
        cls(fine_tuning="bogus").fit(X, y)


# --------------------------------------------------------------- fits


def _small(cls, **params):
    sizes = dict(hidden_size=6, memory_size=4)
    if cls in (MultiScaleLMNClassifier, MultiScaleLMNRegressor):
        sizes["n_modules"] = 2
    return cls(**sizes, max_iter=4, random_state=0, **params)


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_residual_fit_starts_at_the_start_and_keeps_it_frozen(cls):
    X, y = _data()
    clf = _small(
        cls, fine_tuning="residual", callbacks=[("at_start", _AtStart(X))]
    ).fit(X, y)
    assert clf.fine_tuning_ == "residual"
    assert clf.memory_matrix_ == "schur"  # the trained network's ring start
    assert clf.memory_lr_scale_ == pytest.approx(0.1)
    assert clf.pretrained_alpha_ == 0.0
    assert clf.pretrainer_ is not None
    record = dict(clf.net_.callbacks_)["at_start"]
    # the network before the first epoch computes exactly the start
    torch.testing.assert_close(
        record.outputs_, record.start_outputs_, rtol=1e-6, atol=1e-6
    )
    # the start did not train
    after = clf.net_.module_.start.state_dict()
    for key, value in record.start_state_.items():
        torch.testing.assert_close(after[key], value, rtol=0, atol=0)
    # ... while the trained network moved away from its zero readout
    assert clf.net_.module_.readout.weight.abs().max() > 0
    # the start is the free memory's LAES start
    start_names = [n for n, _ in clf.net_.module_.start.named_parameters()]
    trained_names = [n for n, _ in clf.net_.module_.named_parameters()]
    assert not any(n.endswith("memory.eigen") for n in start_names)
    assert any(n.endswith("memory.eigen") for n in trained_names)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_full_fine_tuning_trains_one_network(cls):
    X, y = _data()
    clf = _small(cls, fine_tuning="full").fit(X, y)
    assert clf.fine_tuning_ == "full"
    assert clf.memory_matrix_ == "free"
    assert clf.memory_lr_scale_ == pytest.approx(1.0)
    assert clf.net_.module_.start is None


def test_without_a_start_there_is_no_frozen_network():
    X, y = _data()
    clf = _small(LMNClassifier, pretrainer=None, fine_tuning="residual").fit(X, y)
    assert clf.fine_tuning_ == "full"
    assert clf.net_.module_.start is None


def test_residual_regressor_option():
    X, y = _data()
    reg = _small(LMNRegressor, fine_tuning="residual").fit(X, X[:, :3, 0].sum(1))
    if reg.pretrainer_ is None:  # the start policy dropped a start
        assert reg.fine_tuning_ == "full" and reg.net_.module_.start is None
    else:
        assert reg.fine_tuning_ == "residual" and reg.net_.module_.start is not None
    assert np.all(np.isfinite(reg.predict(X)))


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_residual_model_saves_and_loads(cls, tmp_path):
    X, y = _data()
    clf = _small(cls, fine_tuning="residual").fit(X, y)
    path = tmp_path / "model.skops"
    save(clf, path)
    back = load(path)
    assert back.fine_tuning_ == "residual"
    np.testing.assert_allclose(
        back.predict_proba(X), clf.predict_proba(X), rtol=1e-5, atol=1e-6
    )


def test_refit_and_warm_start_keep_the_structure():
    X, y = _data()
    clf = _small(LMNClassifier, fine_tuning="residual", warm_start=True).fit(X, y)
    start = copy.deepcopy(clf.net_.module_.start.state_dict())
    clf.fit(X, y)  # continues training the same networks
    for key, value in clf.net_.module_.start.state_dict().items():
        torch.testing.assert_close(value, start[key], rtol=0, atol=0)
    clf.set_params(warm_start=False, fine_tuning="full").fit(X, y)
    assert clf.fine_tuning_ == "full" and clf.net_.module_.start is None


def test_residual_fit_batch_size_is_the_scratch_one():
    X, y = _data(n=40)
    clf = _small(LMNClassifier, fine_tuning="residual").fit(X, y)
    assert clf.net_.batch_size == 16
    full = _small(LMNClassifier).fit(X, y)
    assert full.net_.batch_size == 40
