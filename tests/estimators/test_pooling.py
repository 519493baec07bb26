"""The pooled readouts (``pooling='last+mean'`` and ``'last+mean+max'``) of
SequenceNet and the LMN estimators, against explicit computations."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from sklmn import persistence
from sklmn._training import SequenceNet
from sklmn._training._module import extrema_valid, mean_valid
from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.nn import LMN
from sklmn.pretraining import UnrolledPretrainer
from tests._helpers import _auto_net_with_unread_blocks


def _data(n=30, T=9, d=2, seed=0):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(3, T + 1, size=n)
    X = [rng.randn(L, d) for L in lengths]
    y = np.array([int(x[:, 0].mean() > 0) for x in X])
    return X, y


def _fit(cls, X, y, **params):
    """A small pooled LMN estimator fitted quietly (``params`` override)."""
    settings = dict(
        hidden_size=4, memory_size=4, pooling="last+mean", max_iter=2, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**{**settings, **params}).fit(X, y)


def _check_readout_of_pooled_features(net, blocks):
    """``net`` on a ragged batch reads ``blocks(valid outputs of one
    sequence)`` side by side, and its padded steps change nothing."""
    x = torch.randn(3, 7, 2)
    lengths = torch.tensor([7, 4, 2])
    out, _ = net.recurrent(x, lengths=lengths)
    feats = [torch.cat(blocks(out[i, :n])) for i, n in enumerate(lengths.tolist())]
    want = net.readout(torch.stack(feats))
    torch.testing.assert_close(net(x, lengths=lengths), want)
    x2 = x.clone()
    x2[1, 4:] = 100.0  # padding
    x2[2, 2:] = -7.0
    torch.testing.assert_close(net(x2, lengths=lengths), want)


def test_mean_valid_matches_a_loop():
    rng = np.random.RandomState(0)
    out = torch.tensor(rng.randn(4, 6, 3))
    lengths = torch.tensor([6, 1, 4, 2])
    want = torch.stack([out[i, : int(n)].mean(0) for i, n in enumerate(lengths)])
    torch.testing.assert_close(mean_valid(out, lengths), want)
    torch.testing.assert_close(mean_valid(out, None), out.mean(1))


def test_pooled_readout_reads_last_and_scaled_mean_and_ignores_padding():
    torch.manual_seed(0)
    net = SequenceNet(LMN(2, 5, 4), 3, pooling="last+mean")
    net.pool_scale.fill_(2.5)
    _check_readout_of_pooled_features(
        net, lambda o: [o[-1], 2.5 * o.mean(0)]
    )


def test_extrema_valid_matches_a_loop():
    rng = np.random.RandomState(0)
    out = torch.tensor(rng.randn(4, 6, 3))
    out[1, 1:] = 50.0  # padding must not win the maximum
    out[3, 2:] = -50.0  # nor the minimum
    lengths = torch.tensor([6, 1, 4, 2])
    want = torch.stack(
        [
            torch.cat([out[i, : int(n)].max(0).values, out[i, : int(n)].min(0).values])
            for i, n in enumerate(lengths)
        ]
    )
    torch.testing.assert_close(extrema_valid(out, lengths), want)
    full = torch.cat([out.max(1).values, out.min(1).values], -1)
    torch.testing.assert_close(extrema_valid(out, None), full)


def test_extrema_readout_reads_four_scaled_blocks_and_ignores_padding():
    torch.manual_seed(0)
    net = SequenceNet(LMN(2, 5, 4), 3, pooling="last+mean+max")
    assert net.readout.in_features == 16
    net.pool_scale.fill_(2.5)
    net.extrema_scale.fill_(0.3)
    _check_readout_of_pooled_features(
        net,
        lambda o: [
            o[-1], 2.5 * o.mean(0), 0.3 * o.max(0).values, 0.3 * o.min(0).values
        ],
    )


def test_opening_the_pooled_blocks_keeps_the_function():
    net, x, lengths, before = _auto_net_with_unread_blocks()
    net.start_pooled_blocks_(0.5)
    assert net.resolved_pooling == "last+mean+max"
    assert float(net.pool_scale) == float(net.extrema_scale) == 0.5
    torch.testing.assert_close(net.readout.weight[:, 4:], torch.zeros(3, 12))
    torch.testing.assert_close(net(x, lengths=lengths), before)
    net.start_mean_block_()
    assert net.resolved_pooling == "last+mean"
    with pytest.raises(ValueError, match=r"pooling='last\+mean' network has no"):
        SequenceNet(LMN(2, 3, 3), 2, pooling="last+mean").start_pooled_blocks_()


def test_switched_off_extrema_give_the_last_and_mean_network():
    """A block of extrema at scale 0 is not computed (CPU): the outputs and
    every gradient are those of the same network with pooling='last+mean'."""
    torch.manual_seed(0)
    auto = SequenceNet(LMN(2, 5, 4, memory_matrix="schur"), 3, pooling="auto")
    auto.start_mean_block_(0.7)
    with torch.no_grad():
        auto.readout.weight.normal_()
    plain = SequenceNet(LMN(2, 5, 4, memory_matrix="schur"), 3, pooling="last+mean")
    plain.recurrent.load_state_dict(auto.recurrent.state_dict())
    with torch.no_grad():
        plain.readout.weight.copy_(auto.readout.weight[:, :8])
        plain.readout.bias.copy_(auto.readout.bias)
        plain.pool_scale.fill_(0.7)
    x, lengths = torch.randn(3, 7, 2), torch.tensor([7, 4, 2])
    outs = []
    for net in (auto, plain):
        out = net(x, lengths=lengths)
        out.square().sum().backward()
        outs.append(out.detach())
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-6, atol=1e-6)
    for (name, p), q in zip(
        auto.recurrent.named_parameters(), plain.recurrent.parameters(), strict=True
    ):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6, msg=name)
    torch.testing.assert_close(
        auto.readout.weight.grad[:, :8], plain.readout.weight.grad, rtol=1e-5, atol=1e-6
    )
    torch.testing.assert_close(
        auto.readout.weight.grad[:, 8:], torch.zeros(3, 8), rtol=0, atol=0
    )


def test_sequence_net_rejects_bad_pooling():
    with pytest.raises(ValueError, match="pooling must be one of"):
        SequenceNet(LMN(2, 3, 3), 2, pooling="max")
    with pytest.raises(ValueError, match="needs sequence-level targets"):
        SequenceNet(LMN(2, 3, 3), 2, per_step=True, pooling="last+mean")
    with pytest.raises(ValueError, match="needs sequence-level targets"):
        SequenceNet(LMN(2, 3, 3), 2, per_step=True, pooling="last+mean+max")


def test_laes_start_of_a_pooled_readout_is_the_logistic_fit_of_pooled_states():
    X, y = _data()
    clf = _fit(
        LMNClassifier,
        X,
        y,
        hidden_size=6,
        memory_size=6,
        standardize=False,
        max_iter=1,
        learning_rate_init=1e-12,
        fine_tuning="smooth",  # the projection refits the readout
    )
    # the start is what is kept: at a rate of 1e-12 the one epoch's weights
    # are the start's to float precision, and the rule may keep them for a
    # loss lower by float noise
    assert clf.best_epoch_ in (0, 1)
    module = clf.net_.module_
    # the network's own states, pooled explicitly
    last, mean = [], []
    with torch.no_grad():
        for x in X:
            out, _ = module.recurrent(torch.tensor(x[None], dtype=torch.float32))
            out = out[0].double().numpy()
            last.append(out[-1])
            mean.append(out.mean(0))
    last, mean = np.array(last), np.array(mean)
    rms = lambda a: np.sqrt(np.mean(np.sum(a**2, axis=1)))  # noqa: E731
    scale = 0.5 * rms(last) / rms(mean)
    assert float(module.pool_scale) == pytest.approx(scale, rel=1e-4)
    feats = np.hstack([last, scale * mean])
    ref = LogisticRegression(C=1.0, max_iter=10_000, tol=1e-10).fit(feats, y)
    np.testing.assert_allclose(
        clf.predict_proba(X), ref.predict_proba(feats), atol=2e-3
    )


def test_pooling_is_ignored_for_per_step_targets_and_validated():
    X, _ = _data()
    y_steps = [(x[:, 0] > 0).astype(int) for x in X]
    clf = _fit(LMNClassifier, X, y_steps, target="timestep", max_iter=1)
    assert clf.pooling == "last+mean"
    assert clf.net_.module_.pooling == "last"
    with pytest.raises(ValueError, match="pooling"):
        LMNClassifier(pooling="mean").fit(X, y_steps)


def test_unrolled_start_of_a_pooled_readout_is_the_transfer():
    """The unrolled pretrainer leaves the mean block at zero: the start
    predicts what the 'last' readout of the same transfer predicts."""
    X, y = _data()
    probs = [
        _fit(
            LMNClassifier,
            X,
            y,
            pooling=pooling,
            pretrainer=UnrolledPretrainer(max_iter=2, random_state=0),
            max_iter=1,
            learning_rate_init=1e-12,
        ).predict_proba(X)
        for pooling in ("last", "last+mean")
    ]
    np.testing.assert_allclose(probs[1], probs[0], rtol=1e-5, atol=1e-6)


def test_pooled_models_round_trip_through_the_safe_format(tmp_path):
    X, y = _data()
    clf = _fit(LMNClassifier, X, y)
    reg = _fit(LMNRegressor, X, y.astype(float))
    for est, predict in ((clf, "predict_proba"), (reg, "predict")):
        path = tmp_path / f"{type(est).__name__}.sklmn"
        persistence.save(est, path)
        loaded = persistence.load(path)
        np.testing.assert_allclose(
            getattr(loaded, predict)(X),
            getattr(est, predict)(X),
            rtol=1e-6,
            atol=1e-7,
        )
