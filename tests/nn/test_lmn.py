"""Tests of sklmn.nn.LMN / LMNLayer against a naive per-step reference."""

import copy
import pickle

import numpy as np
import pytest
import torch

from sklmn.nn import LMN, ElmanRNN, LMNLayer
from tests._helpers import _assert_nan_padding_inert

DTYPE = torch.float64


def _randomize(module: torch.nn.Module, seed: int = 0) -> None:
    """Non-trivial values for every free parameter (biases included)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))


def ref_layer(layer: LMNLayer, x: torch.Tensor, m0=None):
    """Naive LMN layer on ONE unpadded sequence x (T, d): explicit matrices."""
    Wxh = layer.weight_xh.detach().numpy()
    Wmh = layer.weight_mh.detach().numpy()
    bh = layer.bias_h.detach().numpy()
    Whm = layer.weight_hm.detach().numpy()
    Wmm = layer.weight_mm.detach().numpy()
    bm = 0.0 if layer.bias_m is None else layer.bias_m.detach().numpy()
    m = np.zeros(Wmm.shape[0]) if m0 is None else np.asarray(m0, dtype=float)
    hs, ms = [], []
    for x_t in x.numpy():
        h = np.tanh(Wxh @ x_t + Wmh @ m + bh)
        m = Whm @ h + Wmm @ m + bm
        hs.append(h)
        ms.append(m)
    return np.array(hs), np.array(ms)


def ref_lmn(lmn: LMN, x: torch.Tensor, m0=None):
    """Naive stacked / bidirectional LMN on ONE unpadded sequence (T, d).

    Returns the output sequence and lists of final h and m per (layer, dir).
    """
    inp = x.numpy()
    h_fin, m_fin = [], []
    for i in range(lmn.num_layers):
        layers = [lmn.layers[i]]
        if lmn.bidirectional:
            layers.append(lmn.layers_reverse[i])
        outs = []
        for j, layer in enumerate(layers):
            k = i * lmn.num_directions + j
            seq = inp if j == 0 else inp[::-1]
            init = None if m0 is None else m0[k]
            hs, ms = ref_layer(layer, torch.from_numpy(seq.copy()), init)
            out = ms if lmn.output == "memory" else hs
            outs.append(out if j == 0 else out[::-1])
            h_fin.append(hs[-1])
            m_fin.append(ms[-1])
        inp = np.concatenate(outs, axis=1)
    return inp, h_fin, m_fin


@pytest.mark.parametrize("output", ["memory", "hidden"])
@pytest.mark.parametrize("memory_bias", [False, True])
@pytest.mark.parametrize("truncate_gradient", [False, True])
@pytest.mark.parametrize("lengths", [None, [6, 3, 1]])
def test_layer_matches_reference(output, memory_bias, truncate_gradient, lengths):
    torch.manual_seed(0)
    layer = LMNLayer(
        3,
        5,
        4,
        output=output,
        memory_bias=memory_bias,
        truncate_gradient=truncate_gradient,
    ).double()
    _randomize(layer)
    x = torch.randn(3, 6, 3, dtype=DTYPE)
    out, (h, m) = layer(x, None if lengths is None else torch.tensor(lengths))
    for n, length in enumerate(lengths or [6, 6, 6]):
        hs, ms = ref_layer(layer, x[n, :length])
        expected = ms if output == "memory" else hs
        np.testing.assert_allclose(
            out[n, :length].detach(), expected, rtol=1e-10, atol=1e-12
        )
        assert torch.count_nonzero(out[n, length:]) == 0
        np.testing.assert_allclose(h[n].detach(), hs[-1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(m[n].detach(), ms[-1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("output", ["memory", "hidden"])
def test_lmn_mixed_lengths_matches_reference(num_layers, bidirectional, output):
    torch.manual_seed(1)
    lmn = LMN(
        2,
        4,
        3,
        num_layers=num_layers,
        bidirectional=bidirectional,
        output=output,
        memory_bias=True,
    ).double()
    _randomize(lmn, seed=1)
    lengths = torch.tensor([3, 7, 1, 5, 7])
    x = torch.randn(5, 7, 2, dtype=DTYPE)
    m0 = torch.randn(num_layers * lmn.num_directions, 5, 3, dtype=DTYPE)
    out, (h, m) = lmn(x, lengths=lengths, state=(None, m0))
    assert out.shape == (5, 7, lmn.output_size)
    assert h.shape == (num_layers * lmn.num_directions, 5, 4)
    assert m.shape == (num_layers * lmn.num_directions, 5, 3)
    for n, length in enumerate(lengths.tolist()):
        exp_out, h_fin, m_fin = ref_lmn(lmn, x[n, :length], m0[:, n].numpy())
        np.testing.assert_allclose(
            out[n, :length].detach(), exp_out, rtol=1e-10, atol=1e-12
        )
        # padded outputs are exactly zero
        assert torch.count_nonzero(out[n, length:]) == 0
        np.testing.assert_allclose(h[:, n].detach(), h_fin, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(m[:, n].detach(), m_fin, rtol=1e-10, atol=1e-12)


def test_padding_values_do_not_matter_and_input_untouched():
    torch.manual_seed(2)
    lmn = LMN(2, 4, 3, bidirectional=True, num_layers=2)
    lengths = torch.tensor([2, 5, 3])
    x = torch.randn(3, 5, 2)
    x2 = x.clone()
    x2[0, 2:] = 1e3
    x2[2, 3:] = float("nan")
    x2_copy = x2.clone()
    out1, (h1, m1) = lmn(x, lengths)
    out2, (h2, m2) = lmn(x2, lengths)
    torch.testing.assert_close(out1, out2, rtol=0, atol=0)
    torch.testing.assert_close(m1, m2, rtol=0, atol=0)
    torch.testing.assert_close(h1, h2, rtol=0, atol=0)
    assert torch.equal(x2.nan_to_num(), x2_copy.nan_to_num())


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMN(2, 4, 3, bidirectional=True, num_layers=2, memory_bias=True),
        lambda: LMN(2, 4, 3, memory_matrix="schur", output="hidden"),
        lambda: LMNLayer(2, 4, 3),
    ],
    ids=["lmn-bidirectional", "lmn-schur-hidden", "layer"],
)
def test_nan_padding_does_not_reach_gradients(make):
    """Padded steps are never read: NaN there must not reach the gradient
    of W_xh (as 0 * NaN through the input projection of all steps)."""
    torch.manual_seed(2)
    net = make().double()
    lengths = torch.tensor([2, 5, 3])
    x = torch.randn(3, 5, 2, dtype=DTYPE)
    _assert_nan_padding_inert(
        net, x, lengths, lambda out, s: out.sum() + s[0].sum() + s[1].pow(2).sum()
    )


def test_lengths_all_full_equals_no_lengths():
    torch.manual_seed(3)
    lmn = LMN(2, 4, 3, num_layers=2)
    x = torch.randn(4, 6, 2)
    out1, (h1, m1) = lmn(x)
    out2, (h2, m2) = lmn(x, lengths=[6, 6, 6, 6])
    torch.testing.assert_close(out1, out2)
    torch.testing.assert_close(m1, m2)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("output", ["memory", "hidden"])
def test_module_gradcheck_with_lengths(bidirectional, output):
    torch.manual_seed(5)
    lmn = LMN(
        2, 3, 2, num_layers=2, bidirectional=bidirectional, output=output
    ).double()
    lengths = torch.tensor([4, 2, 3])
    x = torch.randn(3, 4, 2, dtype=DTYPE, requires_grad=True)
    m0 = torch.randn(2 * lmn.num_directions, 3, 2, dtype=DTYPE, requires_grad=True)

    def f(x, m0):
        out, (h, m) = lmn(x, lengths, (None, m0))
        return out, h, m

    assert torch.autograd.gradcheck(f, (x, m0))
    # gradients with respect to the parameters against the per-step autograd
    out, (h, m) = lmn(x, lengths, (None, m0))
    loss = out.square().sum() + h.sum() + m.square().sum()
    grads = torch.autograd.grad(loss, list(lmn.parameters()))
    ref_loss = _autograd_reference_loss(lmn, x, lengths, m0)
    ref_grads = torch.autograd.grad(ref_loss, list(lmn.parameters()))
    torch.testing.assert_close(loss, ref_loss, rtol=1e-10, atol=1e-12)
    for g, rg in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g, rg, rtol=1e-8, atol=1e-10)


def _autograd_layer(layer, x, m, truncate=False):
    hs, ms = [], []
    for t in range(x.shape[0]):
        m_read = m.detach() if truncate else m
        h = torch.tanh(layer.weight_xh @ x[t] + layer.weight_mh @ m_read + layer.bias_h)
        m = layer.weight_hm @ h + layer.weight_mm @ m
        if layer.bias_m is not None:
            m = m + layer.bias_m
        hs.append(h)
        ms.append(m)
    return torch.stack(hs), torch.stack(ms)


def _autograd_reference_loss(lmn, x, lengths, m0):
    """Same loss as the test, with plain autograd on each unpadded sequence."""
    loss = 0.0
    for n, length in enumerate(lengths.tolist()):
        inp = x[n, :length]
        for i in range(lmn.num_layers):
            layers = [lmn.layers[i]]
            if lmn.bidirectional:
                layers.append(lmn.layers_reverse[i])
            outs = []
            for j, layer in enumerate(layers):
                k = i * lmn.num_directions + j
                seq = inp if j == 0 else inp.flip(0)
                hs, ms = _autograd_layer(layer, seq, m0[k, n], lmn.truncate_gradient)
                o = ms if lmn.output == "memory" else hs
                outs.append(o if j == 0 else o.flip(0))
                loss = loss + hs[-1].sum() + ms[-1].square().sum()
            inp = torch.cat(outs, dim=1)
        loss = loss + inp.square().sum()
    return loss


def test_truncate_gradient_matches_detached_reference():
    torch.manual_seed(6)
    lmn = LMN(2, 3, 2, truncate_gradient=True, memory_bias=True).double()
    _randomize(lmn, 6)
    lengths = torch.tensor([5, 3])
    x = torch.randn(2, 5, 2, dtype=DTYPE)
    m0 = torch.randn(1, 2, 2, dtype=DTYPE, requires_grad=True)
    out, (h, m) = lmn(x, lengths, (None, m0))
    loss = out.square().sum() + h.sum() + m.square().sum()
    params = list(lmn.parameters()) + [m0]
    grads = torch.autograd.grad(loss, params)
    ref_grads = torch.autograd.grad(
        _autograd_reference_loss(lmn, x, lengths, m0), params
    )
    for g, rg in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g, rg, rtol=1e-8, atol=1e-10)
    # and the truncation changes the gradient (the test can fail)
    lmn.truncate_gradient = False
    for layer in lmn.layers:
        layer.truncate_gradient = False
    out, (h, m) = lmn(x, lengths, (None, m0))
    full = torch.autograd.grad(out.square().sum() + h.sum() + m.square().sum(), params)
    assert not torch.allclose(full[1], grads[1])


@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("output", ["memory", "hidden"])
def test_step_equals_forward(num_layers, output):
    torch.manual_seed(7)
    lmn = LMN(3, 5, 4, num_layers=num_layers, output=output, memory_bias=True)
    _randomize(lmn, 7)
    x = torch.randn(2, 6, 3)
    out, (h, m) = lmn(x)
    state = None
    # float32, two computation paths (per-step cell vs fused scan): the sums
    # are accumulated in a different order, so allow float32 rounding (|m|
    # reaches ~10 over 3 layers); a wrong formula is off by >= 1e-2.
    tol = dict(rtol=1e-5, atol=1e-5)
    for t in range(6):
        y, state = lmn.step(x[:, t], state)
        torch.testing.assert_close(y, out[:, t], **tol)
    torch.testing.assert_close(state[0], h, **tol)
    torch.testing.assert_close(state[1], m, **tol)


def test_layer_step_equals_forward():
    torch.manual_seed(8)
    layer = LMNLayer(3, 5, 4, output="hidden")
    x = torch.randn(2, 4, 3)
    out, (h, m) = layer(x)
    state = None
    for t in range(4):  # float32, step cell vs fused scan: see above
        y, state = layer.step(x[:, t], state)
        torch.testing.assert_close(y, out[:, t], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(state[1], m, rtol=1e-5, atol=1e-5)


def test_state_passing_splits_sequence():
    torch.manual_seed(9)
    lmn = LMN(2, 4, 3, num_layers=2).double()
    x = torch.randn(3, 8, 2, dtype=DTYPE)
    out, (h, m) = lmn(x)
    out1, state1 = lmn(x[:, :5])
    out2, (h2, m2) = lmn(x[:, 5:], state=state1)
    torch.testing.assert_close(torch.cat([out1, out2], 1), out)
    torch.testing.assert_close(m2, m)
    torch.testing.assert_close(h2, h)
    # a bare memory tensor is accepted as state too
    out3, _ = lmn(x[:, 5:], state=state1[1])
    torch.testing.assert_close(out3, out2)


def test_bidirectional_step_raises():
    lmn = LMN(2, 3, 3, bidirectional=True)
    with pytest.raises(RuntimeError, match="bidirectional"):
        lmn.step(torch.zeros(1, 2))


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("wrapper", [False, True])
def test_from_elman_reproduces_rnn(num_layers, bidirectional, wrapper):
    torch.manual_seed(10)
    if wrapper:
        rnn = ElmanRNN(3, 5, num_layers=num_layers, bidirectional=bidirectional)
        _randomize(rnn, 10)
        inner = rnn.rnn
    else:
        rnn = torch.nn.RNN(
            3, 5, num_layers=num_layers, bidirectional=bidirectional, batch_first=True
        )
        inner = rnn
    rnn = rnn.double()
    lmn = LMN.from_elman(rnn)
    assert lmn.layers[0].weight_xh.dtype == DTYPE
    x = torch.randn(4, 6, 3, dtype=DTYPE)
    expected, h_rnn = inner(x)
    out, (h, m) = lmn(x)
    # Carta et al. 2020b §2.1: m_t = h_rnn_t exactly (W_hm = I, W_mm = 0)
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(m, h_rnn, rtol=1e-12, atol=1e-12)
    assert torch.count_nonzero(lmn.layers[0].weight_mm) == 0


def test_from_elman_rejects_relu_and_other_modules():
    with pytest.raises(ValueError, match="tanh"):
        LMN.from_elman(torch.nn.RNN(2, 3, nonlinearity="relu"))
    with pytest.raises(ValueError, match="LSTM"):
        LMN.from_elman(torch.nn.LSTM(2, 3))


@pytest.mark.parametrize("mean", [None, [0.5, -1.0]])
def test_init_from_laes_structure(mean):
    gen = np.random.default_rng(11)
    A = gen.standard_normal((4, 2))
    B = 0.3 * gen.standard_normal((4, 4))
    lmn = LMN(2, 4, 4, memory_bias=True).double()
    _randomize(lmn, 11)
    assert lmn.init_from_laes_(A, B, mean=mean) is lmn
    layer = lmn.layers[0]
    np.testing.assert_array_equal(layer.weight_xh.detach(), A)
    np.testing.assert_array_equal(layer.weight_mm.detach(), B)
    np.testing.assert_array_equal(layer.weight_mh.detach(), np.zeros((4, 4)))
    np.testing.assert_array_equal(layer.weight_hm.detach(), np.eye(4))
    np.testing.assert_array_equal(layer.bias_m.detach(), np.zeros(4))
    mu = np.zeros(2) if mean is None else np.asarray(mean)
    np.testing.assert_allclose(layer.bias_h.detach(), -A @ mu, rtol=1e-12)
    # m_t = tanh(A (x_t - mu)) + B m_{t-1}
    x = torch.randn(1, 5, 2, dtype=DTYPE)
    out, _ = lmn(x)
    m = np.zeros(4)
    for t in range(5):
        m = np.tanh(A @ (x[0, t].numpy() - mu)) + B @ m
        np.testing.assert_allclose(out[0, t].detach(), m, rtol=1e-10, atol=1e-12)


def test_init_from_laes_errors():
    A, B = torch.ones(4, 2), torch.eye(4)
    with pytest.raises(ValueError, match="hidden_size == memory_size"):
        LMN(2, 5, 4).init_from_laes_(A, B)
    with pytest.raises(ValueError, match="hidden_size == memory_size"):
        LMN(2, 4, 3).init_from_laes_(torch.ones(3, 2), torch.eye(3))
    with pytest.raises(ValueError, match="B must have shape"):
        LMN(2, 4, 4).init_from_laes_(A, torch.eye(3))
    with pytest.raises(ValueError, match="A must have shape"):
        LMN(3, 4, 4).init_from_laes_(A, B)
    with pytest.raises(ValueError, match="single unidirectional"):
        LMN(2, 4, 4, num_layers=2).init_from_laes_(A, B)
    with pytest.raises(ValueError, match="orthogonal"):
        LMN(2, 4, 4, memory_matrix="orthogonal").init_from_laes_(A, B)


def test_orthogonal_memory_matrix():
    torch.manual_seed(12)
    lmn = LMN(2, 3, 4, memory_matrix="orthogonal").double()
    layer = lmn.layers[0]
    W = layer.weight_mm.detach()
    # torch's orthogonal parametrization keeps the float32 orthogonal base it
    # was created with (.double() only casts it): orthogonal to float32 precision
    torch.testing.assert_close(W.T @ W, torch.eye(4, dtype=DTYPE), rtol=0, atol=1e-5)
    x = torch.randn(2, 5, 2, dtype=DTYPE)
    out, _ = lmn(x)
    np.testing.assert_allclose(
        out[0].detach(), ref_layer(layer, x[0])[1], rtol=1e-10, atol=1e-12
    )
    out.sum().backward()
    original = layer.parametrizations.weight_mm.original
    assert original.grad is not None and original.grad.abs().sum() > 0


def test_spectral_memory_matrix():
    torch.manual_seed(13)
    lmn = LMN(2, 3, 4, memory_matrix="spectral").double()
    layer = lmn.layers[0]
    with torch.no_grad():
        layer.weight_mm = 2.0 * torch.eye(4, dtype=DTYPE)
    x = torch.randn(2, 5, 2, dtype=DTYPE)
    out, _ = lmn(x)
    rho = torch.linalg.eigvals(layer.weight_mm.detach()).abs().max()
    assert rho < 1.0
    np.testing.assert_allclose(
        out[1].detach(), ref_layer(layer, x[1])[1], rtol=1e-10, atol=1e-12
    )


def test_parametrization_evaluated_once_per_forward():
    calls = []

    class Counting(torch.nn.Module):
        def forward(self, W):
            calls.append(1)
            return W

    lmn = LMN(2, 3, 3, num_layers=2)
    for layer in lmn.layers:
        torch.nn.utils.parametrize.register_parametrization(
            layer, "weight_mm", Counting()
        )
    calls.clear()  # registration evaluates the parametrization once
    lmn(torch.randn(2, 30, 2))
    assert len(calls) == 2  # once per layer, not once per step


def test_penalty_values():
    torch.manual_seed(14)
    lam, beta = 0.3, 0.7
    lmn = LMN(
        2, 3, 4, num_layers=2, orthogonality_penalty=lam, norm_penalty=beta
    ).double()
    _randomize(lmn, 14)
    lengths = torch.tensor([5, 2, 4])
    x = torch.randn(3, 5, 2, dtype=DTYPE)
    _, _, penalty = lmn(x, lengths, return_penalty=True)
    assert penalty.dtype == DTYPE and penalty.shape == ()
    expected = 0.0
    for layer in lmn.layers:
        W = layer.weight_mm.detach().numpy()
        expected += lam * np.sum((W.T @ W - np.eye(4)) ** 2)
    # norm stabilizer: per-sequence mean over its valid steps, batch mean
    for i in range(2):
        per_seq = []
        for n, length in enumerate(lengths.tolist()):
            inp = x[n, :length]
            for layer in lmn.layers[: i + 1]:
                hs, ms = ref_layer(layer, inp)
                inp = torch.from_numpy(ms)
            norms = np.r_[0.0, np.linalg.norm(ms, axis=1)]
            per_seq.append(np.mean(np.diff(norms) ** 2))
        expected += beta * np.mean(per_seq)
    np.testing.assert_allclose(penalty.item(), expected, rtol=1e-10)
    penalty.backward()
    assert lmn.layers[0].weight_xh.grad.abs().sum() > 0


def test_penalty_zero_by_default_and_module_copyable():
    lmn = LMN(2, 3, 3, norm_penalty=1.0)
    _, _, zero = LMN(2, 3, 3)(torch.randn(2, 4, 2), return_penalty=True)
    assert zero.item() == 0.0
    out, _, penalty = lmn(torch.randn(2, 4, 2), return_penalty=True)
    assert penalty.requires_grad
    clone = copy.deepcopy(lmn)
    restored = pickle.loads(pickle.dumps(lmn))
    x = torch.randn(1, 3, 2)
    torch.testing.assert_close(clone(x)[0], lmn(x)[0])
    torch.testing.assert_close(restored(x)[0], lmn(x)[0])


def test_fractional_lengths_are_refused_not_truncated():
    """Lengths given as a list or a NumPy array of floats: whole values are
    read as they are, fractional ones refused (the int64 cast truncated them
    silently), as a floating point tensor of lengths is."""
    lmn = LMN(2, 3, 3)
    x = torch.randn(2, 5, 2)
    with pytest.raises(ValueError, match="lengths must be integers"):
        lmn(x, lengths=[2.5, 5.0])
    with pytest.raises(ValueError, match="lengths must be integers"):
        lmn(x, lengths=np.array([4.7, 3.0]))
    with pytest.raises(ValueError, match="lengths must be integers"):
        lmn(x, lengths=torch.tensor([4.0, 3.0]))
    torch.testing.assert_close(
        lmn(x, lengths=np.array([4.0, 3.0]))[0], lmn(x, lengths=[4, 3])[0]
    )


def test_dropout_between_layers():
    torch.manual_seed(15)
    lmn = LMN(2, 8, 8, num_layers=2, dropout=0.5)
    x = torch.randn(3, 5, 2)
    lmn.eval()
    out_eval, _ = lmn(x)
    torch.testing.assert_close(out_eval, lmn(x)[0])
    lmn.train()
    assert not torch.allclose(lmn(x)[0], out_eval)


def test_reset_parameters_zero_biases_and_orthogonal_memory():
    # init_radius=None: the stable initialization may scale W_mm (by how much
    # depends on the random draw, so on the torch version's RNG streams)
    lmn = LMN(2, 3, 4, memory_bias=True, init_radius=None)
    _randomize(lmn)
    lmn.reset_parameters()
    layer = lmn.layers[0]
    assert torch.count_nonzero(layer.bias_h) == 0
    assert torch.count_nonzero(layer.bias_m) == 0
    W = layer.weight_mm.detach()
    torch.testing.assert_close(W.T @ W, torch.eye(4), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hidden_size": 0}, "hidden_size must be a positive int, got 0"),
        ({"memory_size": 2.5}, "memory_size must be a positive int, got 2.5"),
        ({"num_layers": True}, "num_layers must be a positive int, got True"),
        ({"output": "state"}, "output must be one of"),
        ({"memory_matrix": "cayley"}, "memory_matrix must be one of"),
        ({"bidirectional": 1}, "bidirectional must be a bool, got 1"),
        ({"orthogonality_penalty": -1.0}, "orthogonality_penalty must be"),
        ({"norm_penalty": float("nan")}, "norm_penalty must be"),
        ({"dropout": 1.0}, "dropout must be a float in"),
        ({"truncate_gradient": None}, "truncate_gradient must be a bool"),
    ],
)
def test_parameter_validation(kwargs, match):
    params = {"input_size": 2, "hidden_size": 3, "memory_size": 3} | kwargs
    with pytest.raises(ValueError, match=match):
        LMN(**params)


def test_input_validation():
    lmn = LMN(2, 3, 3, num_layers=2)
    with pytest.raises(ValueError, match="expected input_size=2"):
        lmn(torch.zeros(1, 4, 3))
    with pytest.raises(ValueError, match="shape"):
        lmn(torch.zeros(4, 2))
    with pytest.raises(ValueError, match=r"lengths must be in 1\.\.4"):
        lmn(torch.zeros(2, 4, 2), lengths=torch.tensor([5, 1]))
    with pytest.raises(ValueError, match=r"lengths must be in 1\.\.4"):
        lmn(torch.zeros(2, 4, 2), lengths=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="initial memory must have shape"):
        lmn(torch.zeros(2, 4, 2), state=torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="x_t must have shape"):
        lmn.step(torch.zeros(2, 3))


@pytest.mark.parametrize("module", [LMN(2, 3, 3), LMNLayer(2, 3, 3)])
@pytest.mark.parametrize("call", ["forward", "step"])
def test_state_of_wrong_length_is_refused(module, call):
    # a 1-tuple (m0,) failed with "tuple index out of range"
    m0 = torch.zeros(2, 3) if isinstance(module, LMNLayer) else torch.zeros(1, 2, 3)
    for state in [(m0,), [m0], (None, m0, m0)]:
        with pytest.raises(ValueError, match=rf"pair \(h0, m0\).* of {len(state)} "):
            if call == "forward":
                module(torch.zeros(2, 4, 2), state=state)
            else:
                module.step(torch.zeros(2, 2), state)
    out, _ = module(torch.zeros(2, 4, 2), state=(None, m0))  # a pair is read
    assert out.shape[:2] == (2, 4)


@pytest.mark.parametrize("module", [LMN(2, 3, 3), ElmanRNN(2, 3)])
def test_boolean_lengths_are_refused(module):
    # a mask of booleans was read as lengths of 1 (all True) or failed in
    # torch with "'numpy.bool' object cannot be interpreted as an integer"
    x = torch.randn(2, 5, 2)
    for lengths in (torch.tensor([True, True]), [True, True], np.array([True, True])):
        with pytest.raises(ValueError, match="lengths must be integers"):
            module(x, lengths=lengths)
