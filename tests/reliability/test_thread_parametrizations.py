"""Parametrized modules used from two threads at once.

torch's ``parametrize.cached()`` is one process-wide cache: while one thread
is inside it, every other thread's parametrized weights are cached too, so a
second training step reads the weight (and the freed graph) of the first.
The modules evaluate their effective weights once per forward and pass them
down instead. Each test holds one thread *inside* a forward (a parametrization
that waits on an event) while the other thread trains or predicts with a
different model: deterministic, no interleaving hoped for.
"""

import copy
import pathlib
import re
import threading
import warnings

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

import sklmn
from sklmn.estimators import ENRNNClassifier
from sklmn.nn import ENRNN, LMN, MultiScaleLMN
from sklmn.nn.parametrizations import SpectralRadiusNormalization

TIMEOUT = 60.0


class _Hold(nn.Module):
    """Identity parametrization: once armed, the next evaluation signals
    ``entered`` and waits for ``release`` (the thread stays inside the
    module's forward)."""

    def __init__(self):
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.armed = False

    def __deepcopy__(self, memo):
        # copies of the model (predict's float64 copy) share the hold
        return self

    def forward(self, W):
        if self.armed:
            self.armed = False
            self.entered.set()
            if not self.release.wait(TIMEOUT):
                raise RuntimeError("never released")
        return W


class _Count(nn.Module):
    """Identity parametrization counting its evaluations."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, W):
        self.calls += 1
        return W


def _held_weight(model):
    """(module, name) of a weight read inside the model's forward."""
    if isinstance(model, ENRNN):
        return model, "weight_short"
    return model.layers[0], "weight_mm"


def _train(model, x, y, n_steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(n_steps):
        opt.zero_grad()
        out, _ = model(x)
        loss = ((out[:, -1].sum(1) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def _while_held(hold, held_call, fn):
    """Run ``fn()`` while another thread is held inside ``held_call()`` (by
    ``hold``, a registered :class:`_Hold`); returns ``fn()``'s result and
    re-raises an error of either thread. ``fn`` runs in a thread of its own
    so that waiting for the held thread (a lock) fails instead of hanging."""
    errors, result = [], []

    def run(call, out=None):
        try:
            value = call()
            if out is not None:
                out.append(value)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    hold.armed = True
    held = threading.Thread(target=run, args=(held_call,))
    held.start()
    try:
        assert hold.entered.wait(TIMEOUT), "the other thread never entered forward"
        worker = threading.Thread(target=run, args=(fn, result))
        worker.start()
        worker.join(TIMEOUT)
        assert not worker.is_alive(), "it waited for the held thread"
    finally:
        hold.release.set()
        held.join(TIMEOUT)
    assert not held.is_alive()
    if errors:
        raise errors[0]
    return result[0]


def _run_while_held(held_model, fn):
    """:func:`_while_held` with ``held_model`` held inside a forward."""
    hold = _Hold()
    module, name = _held_weight(held_model)
    parametrize.register_parametrization(module, name, hold)
    x = torch.randn(2, 5, held_model.input_size, dtype=DTYPE)

    def predict():
        with torch.no_grad():
            held_model(x)

    return _while_held(hold, predict, fn)


DTYPE = torch.float64


def _models(kind):
    torch.manual_seed(0)
    if kind == "enrnn":
        held, trained = ENRNN(2, 4, 3), ENRNN(2, 4, 3)
    elif kind == "lmn_spectral":
        held = LMN(2, 4, 3, memory_matrix="spectral")
        trained = LMN(2, 4, 3, memory_matrix="spectral", orthogonality_penalty=0.1)
        # normalization on (not the identity of the open latch): every
        # evaluation is a new tensor with its own graph
        trained.layers[0].parametrizations.weight_mm[0].latched.fill_(True)
    else:  # the default free LMN
        held, trained = LMN(2, 4, 3), LMN(2, 4, 3)
    return held.to(DTYPE), trained.to(DTYPE)


@pytest.mark.parametrize("kind", ["enrnn", "lmn_spectral", "lmn_free"])
def test_training_next_to_a_held_forward_is_unchanged(kind):
    held, trained = _models(kind)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(6, 5, 2, dtype=DTYPE, generator=gen)
    y = torch.randn(6, dtype=DTYPE, generator=gen)
    alone = copy.deepcopy(trained)
    expected = _train(alone, x, y)
    got = _run_while_held(held, lambda: _train(trained, x, y))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    for p, q in zip(trained.parameters(), alone.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-12)


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(24, 5, 2)
    return X, (X[:, 0, 0] > 0).astype(int)


def _fit(X, y):
    clf = ENRNNClassifier(
        hidden_size=4, short_size=2, max_iter=4, early_stopping=False, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # four epochs: not converged
        return clf.fit(X, y)


def test_enrnn_fit_while_another_enrnn_predicts():
    """The reproducer: fitting an ENRNN classifier while another thread is
    inside the forward of a different ENRNN's ``predict``."""
    X, y = _data()
    expected = _fit(X, y).loss_curve_
    other = _fit(*_data(1))
    hold = _Hold()
    parametrize.register_parametrization(
        other.net_.module_.recurrent, "weight_short", hold
    )
    curve = _while_held(hold, lambda: other.predict(X), lambda: _fit(X, y).loss_curve_)
    np.testing.assert_allclose(curve, expected, rtol=1e-6, atol=0)


def test_parametrized_weights_evaluated_once_per_forward():
    """One evaluation of every parametrized weight per forward (one
    eigendecomposition per layer and direction for ``'spectral'``, also
    with the orthogonality penalty that reads the matrix again)."""
    torch.manual_seed(0)
    lmn = LMN(
        2,
        4,
        3,
        num_layers=2,
        bidirectional=True,
        memory_matrix="spectral",
        orthogonality_penalty=0.1,
    )
    counters = []
    for layer in lmn._all_layers():
        counters.append(_Count())
        parametrize.register_parametrization(layer, "weight_mm", counters[-1])
    for counter in counters:  # registering evaluates the weight once
        counter.calls = 0
    x = torch.randn(3, 5, 2)
    lmn(x, return_penalty=True)
    assert [c.calls for c in counters] == [1, 1, 1, 1]
    one_way = LMN(2, 4, 3, num_layers=2, memory_matrix="spectral").eval()
    counters = []
    for layer in one_way.layers:
        counters.append(_Count())
        parametrize.register_parametrization(layer, "weight_mm", counters[-1])
        counters[-1].calls = 0
    with torch.no_grad():
        one_way.step(x[:, 0])
    assert [c.calls for c in counters] == [1, 1]

    rnn = ENRNN(2, 4, 3)
    long_count, short_count = _Count(), _Count()
    parametrize.register_parametrization(rnn, "weight_long", long_count)
    parametrize.register_parametrization(rnn, "weight_short", short_count)
    long_count.calls = short_count.calls = 0
    rnn(torch.randn(3, 7, 2))
    assert (long_count.calls, short_count.calls) == (1, 1)


def test_multiscale_normalization_once_per_direction(monkeypatch):
    calls = []
    original = SpectralRadiusNormalization.forward

    def counting(self, T):
        calls.append(1)
        return original(self, T)

    monkeypatch.setattr(SpectralRadiusNormalization, "forward", counting)
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 4, 2, 3, memory_matrix="spectral", bidirectional=True)
    net(torch.randn(3, 9, 2))
    assert len(calls) == 2


def test_no_process_wide_parametrization_cache():
    """No module enters ``parametrize.cached()`` (shared by all threads)."""
    root = pathlib.Path(sklmn.__file__).parent
    pattern = re.compile(r"with\s+[\w.]*cached\(|import\s+cached\b")
    users = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert users == []
