"""Small data and quick estimators shared by the estimator and training tests."""

import warnings

import numpy as np
import torch

from sklmn._training import SequenceNet
from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.nn import LMN

FAST = dict(max_iter=40, learning_rate_init=0.03, random_state=0)


def _lmn_clf(**kw):
    return LMNClassifier(hidden_size=8, memory_size=8, **{**FAST, **kw})


def _lmn_reg(**kw):
    return LMNRegressor(hidden_size=8, memory_size=8, **{**FAST, **kw})


def _ragged(n=60, d=3, low=3, high=9, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(rng.randint(low, high), d) for _ in range(n)]


def _pad(seqs, fill=np.nan):
    T = max(len(s) for s in seqs)
    dtype = object if fill is None else float
    out = np.full((len(seqs), T) + seqs[0].shape[1:], fill, dtype=dtype)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out


def _sequence_targets(X, kind):
    # functions of each sequence's last valid step: a model reading a padded
    # step instead cannot fit them
    last = np.array([x[-1] for x in X])
    if kind == "multiclass":
        return np.array(["a", "b", "c"])[last.argmax(axis=1)]
    if kind == "binary":
        return (last[:, 0] > 0).astype(int)
    if kind == "multilabel":
        return (last > 0).astype(int)
    if kind == "regression":
        return last[:, 0]
    return last[:, :2]  # multi-output regression


def _timestep_targets(X, kind):
    if kind == "multiclass":
        return [np.array(["a", "b", "c"])[x.argmax(axis=1)] for x in X]
    if kind == "binary":
        return [(x[:, 0] > 0).astype(int) for x in X]
    if kind == "multilabel":  # a piano roll of 3 "keys"
        return [(x > 0).astype(int) for x in X]
    if kind == "regression":
        return [x[:, 0] + x[:, 1] for x in X]
    return [x[:, :2] * 2.0 for x in X]


def _quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with warnings silenced (short runs that stop at
    ``max_iter`` on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _auto_net_with_unread_blocks():
    """A ``pooling='auto'`` network whose pooled blocks have weights but are
    read at scale 0, a batch ``(x, lengths)`` and the network's outputs."""
    torch.manual_seed(0)
    net = SequenceNet(LMN(2, 5, 4), 3, pooling="auto")
    with torch.no_grad():
        net.readout.weight[:, 4:] = 1.0  # unread at scale 0
    x, lengths = torch.randn(3, 7, 2), torch.tensor([7, 4, 2])
    return net, x, lengths, net(x, lengths=lengths)


def _assert_nan_padding_inert(net, x, lengths, loss):
    """``net(x, lengths)`` with the padded steps of ``x`` set to 0 and then
    to NaN: the outputs are equal and every gradient of ``loss(out, state)``
    is finite and equal (padding must never reach the input projection's
    gradient as ``0 * NaN``)."""
    results = []
    for pad in (0.0, float("nan")):
        xp = x.clone()
        for n, length in enumerate(torch.as_tensor(lengths).tolist()):
            xp[n, length:] = pad
        net.zero_grad()
        out, state = net(xp, lengths)
        loss(out, state).backward()
        grads = [p.grad.clone() for p in net.parameters() if p.grad is not None]
        results.append((out, grads))
    (out0, grads0), (out1, grads1) = results
    torch.testing.assert_close(out1, out0, rtol=0, atol=0)
    assert len(grads1) == len(grads0) > 0
    for g0, g1 in zip(grads0, grads1, strict=True):
        assert torch.isfinite(g1).all()
        torch.testing.assert_close(g1, g0, rtol=1e-12, atol=1e-12)


def _adam_on_random_targets(net, dtype, check, steps=200, n_features=3):
    """Train the recurrent module ``net`` for ``steps`` Adam steps at
    learning rate 0.1 toward large random targets (5 standard deviations) of
    its output sequence on random inputs (8 sequences of 7 steps), calling
    ``check()`` after every step: the stress test of a stable memory."""
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    x = torch.randn(8, 7, n_features, dtype=dtype)
    y = 5.0 * torch.randn(8, 7, net.output_size, dtype=dtype)
    for _ in range(steps):
        opt.zero_grad()
        (net(x)[0] - y).pow(2).mean().backward()
        opt.step()
        check()


def _amplitude_task(n=80, T=20, seed=0):
    """Two classes of white noise of equal mean and variance: Gaussian, or
    random signs (a linear model of the input history sees no difference;
    the input expansion's start reads them)."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 2
    X = [
        rng.randn(T, 1)
        if c == 0
        else rng.choice([-1.0, 1.0], size=(T, 1)) + 0.1 * rng.randn(T, 1)
        for c in y
    ]
    return X, y
