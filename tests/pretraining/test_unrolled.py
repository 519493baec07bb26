"""Unrolled pretraining (Carta, Sperduti & Bacciu 2021, "Encoding-based memory
modules for recurrent neural networks", Alg. 1)."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn._training import SequenceNet
from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.nn import LMN
from sklmn.pretraining import UnrolledPretrainer
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


def _data(problem, per_step, seed=0):
    rng = np.random.RandomState(seed)
    X = [rng.randn(rng.randint(2, 6), 2) for _ in range(24)]
    seqs = check_sequences(X, dtype=np.float64)
    T = seqs.n_timesteps
    if problem == "continuous":
        y = rng.randn(24, T, 2) if per_step else rng.randn(24, 2)
        n_out = 2
    else:
        y = rng.randint(0, 3, size=(24, T) if per_step else 24)
        if per_step:
            y[~seqs.mask] = -100  # the estimators' IGNORE_INDEX
        n_out = 3
    return seqs, y, n_out


@pytest.mark.parametrize("tape_length", [1, 3])
@pytest.mark.parametrize("per_step", [False, True])
@pytest.mark.parametrize("problem", ["continuous", "multiclass"])
def test_exact_laes_reproduces_the_urnn(problem, per_step, tape_length):
    seqs, y, n_out = _data(problem, per_step)
    H = 3
    p = seqs.n_timesteps * H  # >= rank of the LAES data matrix: exact
    net = SequenceNet(LMN(2, H, p), n_out, per_step=per_step).double()
    pre = UnrolledPretrainer(tape_length, max_iter=3, random_state=0)
    pre.initialize(net, fit_context(seqs, y, problem, per_step))
    assert len(pre.loss_curve_) == 3
    X, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        lmn_out = net(X, lengths).numpy()
        urnn_out = pre.urnn_net_(X, lengths).numpy()
        # hidden states too: the LMN's h_t equals the URNN's
        h_urnn = pre.urnn_net_.urnn(X, lengths)[0].numpy()
    if per_step:
        lmn_out, urnn_out = lmn_out[seqs.mask], urnn_out[seqs.mask]
    np.testing.assert_allclose(lmn_out, urnn_out, rtol=1e-9, atol=1e-10)
    assert np.abs(h_urnn).max() > 0.1


def test_lossy_laes_differs_and_fine_tuning_runs():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 8, 1)
    y = X[:, 0, 0] + X[:, 1, 0]
    reg = LMNRegressor(
        hidden_size=6,
        memory_size=4,
        max_iter=3,
        pretrainer=UnrolledPretrainer(tape_length=2, max_iter=15, random_state=0),
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(X, y)
    assert reg.pretrainer_.laes_.n_components_ == 4
    assert reg.pretrainer_.loss_curve_[-1] < reg.pretrainer_.loss_curve_[0]
    assert np.isfinite(reg.score(X, y))


def test_errors():
    X = np.random.RandomState(0).randn(10, 4, 2)
    y = np.arange(10) % 2
    clf = LMNClassifier(
        hidden_size=3,
        memory_size=5,
        max_iter=1,
        output="hidden",
        memory_matrix="schur",
        pretrainer=UnrolledPretrainer(),
    )
    with pytest.raises(ValueError, match="output='hidden' with memory_matrix"):
        clf.fit(X, y)
    clf.set_params(
        output="memory",
        memory_matrix="free",
        pretrainer=UnrolledPretrainer(tape_length=0),
    )
    with pytest.raises(ValueError, match="tape_length"):
        clf.fit(X, y)


@pytest.mark.parametrize("per_step", [False, True])
def test_reduced_laes_stays_exact_with_random_free_units(per_step):
    # 3 sequences of at most 4 steps, 2 hidden units: the LAES of the hidden
    # sequences has at most min(n_steps, 4 x 2) = 8 components, fewer than the
    # 16 memory units; p = 8 is exact, the 8 other units keep random weights
    rng = np.random.RandomState(0)
    X = [rng.randn(n, 2) for n in (4, 3, 4)]
    seqs = check_sequences(X, dtype=np.float64)
    y = rng.randn(3, seqs.n_timesteps, 1) if per_step else rng.randn(3, 1)
    problem = "continuous"
    net = SequenceNet(LMN(2, 2, 16), 1, per_step=per_step).double()
    pre = UnrolledPretrainer(2, max_iter=2, random_state=0)
    pre.initialize(net, fit_context(seqs, y, problem, per_step))
    assert pre.n_components_ == 8
    assert pre.notes_ == [
        "n_components reduced from 16 to 8: the data support at most 8 "
        "(min(total steps, longest length x hidden units) = min(11, 4 x 2))"
    ]
    Xt, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        lmn_out = net(Xt, lengths).numpy()
        urnn_out = pre.urnn_net_(Xt, lengths).numpy()
        memory = net.recurrent(Xt, lengths)[0].numpy()
    if per_step:
        lmn_out, urnn_out = lmn_out[seqs.mask], urnn_out[seqs.mask]
    np.testing.assert_allclose(lmn_out, urnn_out, rtol=1e-9, atol=1e-10)
    assert np.abs(memory[..., 8:]).max() > 1e-3  # alive
    np.testing.assert_array_equal(net.readout.weight.detach().numpy()[:, 8:], 0.0)
    layer = net.recurrent.layers[0]
    radius = getattr(layer, "init_radius", None)
    if radius is not None:
        block = layer.weight_mm.detach().numpy()[8:, 8:]
        assert np.abs(np.linalg.eigvals(block)).max() <= radius + 1e-9


def test_urnn_loss_is_weighted_as_the_estimator_s():
    # zero-weight sequences cannot change the pretrained start (their
    # targets enter the URNN's loss with weight zero), nonzero weights do
    import dataclasses

    rng = np.random.RandomState(4)
    X = rng.randn(40, 6, 1)
    y = (X[:, 0, 0] + 0.5 * X[:, 2, 0])[:, None]
    seqs = check_sequences(X, dtype=np.float64)
    w = np.ones(len(y))
    w[::4] = 0.0
    y_other = y.copy()
    y_other[::4] += 3.0

    def start(target, weight):
        torch.manual_seed(0)
        net = SequenceNet(LMN(1, 4, 6), 1).double()
        context = dataclasses.replace(
            fit_context(seqs, target, "continuous"), sample_weight=weight
        )
        pre = UnrolledPretrainer(tape_length=2, max_iter=5, random_state=0)
        pre.initialize(net, context)
        with torch.no_grad():
            out = net(torch.from_numpy(X), torch.full((40,), 6)).numpy()
        return out, pre.loss_curve_

    out_a, curve_a = start(y, w)
    out_b, curve_b = start(y_other, w)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(curve_a, curve_b, rtol=1e-6)
    out_c, _ = start(y_other, None)
    assert np.abs(out_c - out_a).max() > 1e-3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_pretraining_leaves_the_cuda_random_state_alone():
    # torch.manual_seed reseeds the CUDA generators, which were not restored
    rng = np.random.RandomState(0)
    X = rng.randn(20, 5, 1)
    y = (X[:, 0, 0] > 0).astype(int)
    seqs = check_sequences(X, dtype=np.float32)
    net = SequenceNet(LMN(1, 4, 4), 2).cuda()
    before = torch.cuda.get_rng_state_all()
    UnrolledPretrainer(max_iter=1, random_state=0).initialize(
        net, fit_context(seqs, y, n_outputs=2)
    )
    after = torch.cuda.get_rng_state_all()
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
