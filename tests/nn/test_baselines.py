"""Tests of the ElmanRNN / LSTM / GRU wrappers against per-step references."""

import numpy as np
import pytest
import torch

from sklmn.nn import GRU, LSTM, ElmanRNN

DTYPE = torch.float64


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _randomize(module, seed=0):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))


def _params(module, sfx="_l0"):
    rnn = module.rnn
    return [
        getattr(rnn, name + sfx).detach().numpy()
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]


def ref_elman(module, x, h0=None):
    Wi, Wh, bi, bh = _params(module)
    h = np.zeros(Wh.shape[0]) if h0 is None else h0
    out = []
    for x_t in x:
        h = np.tanh(Wi @ x_t + bi + Wh @ h + bh)
        out.append(h)
    return np.array(out), h


def ref_lstm(module, x, h0=None):
    # gates (i, f, g, o); c_t = f c + i g; h_t = o tanh(c_t)
    Wi, Wh, bi, bh = _params(module)
    H = Wh.shape[1]
    h, c = (np.zeros(H), np.zeros(H)) if h0 is None else h0
    out = []
    for x_t in x:
        z = Wi @ x_t + bi + Wh @ h + bh
        i, f, g, o = (z[k * H : (k + 1) * H] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        out.append(h)
    return np.array(out), (h, c)


def ref_gru(module, x, h0=None):
    # gates (r, z, n); n = tanh(W_in x + b_in + r (W_hn h + b_hn))
    Wi, Wh, bi, bh = _params(module)
    H = Wh.shape[1]
    h = np.zeros(H) if h0 is None else h0
    out = []
    for x_t in x:
        a, b = Wi @ x_t + bi, Wh @ h + bh
        r = _sigmoid(a[:H] + b[:H])
        z = _sigmoid(a[H : 2 * H] + b[H : 2 * H])
        n = np.tanh(a[2 * H :] + r * b[2 * H :])
        h = (1 - z) * n + z * h
        out.append(h)
    return np.array(out), h


CASES = [(ElmanRNN, ref_elman), (LSTM, ref_lstm), (GRU, ref_gru)]


@pytest.mark.parametrize(("cls", "ref"), CASES)
def test_matches_reference_with_mixed_lengths(cls, ref):
    torch.manual_seed(0)
    module = cls(3, 4).double()
    _randomize(module)
    lengths = torch.tensor([5, 2, 4])
    x = torch.randn(3, 5, 3, dtype=DTYPE)
    out, state = module(x, lengths)
    h_n = state[0] if cls is LSTM else state
    for n, length in enumerate(lengths.tolist()):
        expected, final = ref(module, x[n, :length].numpy())
        np.testing.assert_allclose(
            out[n, :length].detach(), expected, rtol=1e-10, atol=1e-12
        )
        assert torch.count_nonzero(out[n, length:]) == 0
        h_final = final[0] if cls is LSTM else final
        np.testing.assert_allclose(h_n[0, n].detach(), h_final, rtol=1e-10, atol=1e-12)
        if cls is LSTM:
            np.testing.assert_allclose(
                state[1][0, n].detach(), final[1], rtol=1e-10, atol=1e-12
            )


@pytest.mark.parametrize(("cls", "ref"), CASES)
def test_step_equals_forward_and_state_passing(cls, ref):
    torch.manual_seed(1)
    module = cls(2, 3, num_layers=2)
    x = torch.randn(2, 6, 2)
    out, final = module(x)
    state = None
    # float32, step vs whole-sequence kernels (and split sequences): other
    # summation orders, so float32 rounding is allowed
    tol = dict(rtol=1e-5, atol=1e-5)
    for t in range(6):
        y, state = module.step(x[:, t], state)
        torch.testing.assert_close(y, out[:, t], **tol)
    torch.testing.assert_close(state, final, **tol)
    out1, s1 = module(x[:, :4])
    out2, s2 = module(x[:, 4:], state=s1)
    torch.testing.assert_close(torch.cat([out1, out2], 1), out, **tol)


@pytest.mark.parametrize("cls", [ElmanRNN, LSTM, GRU])
def test_bidirectional_lengths_match_unpadded(cls):
    torch.manual_seed(2)
    module = cls(2, 3, bidirectional=True).double()
    assert module.output_size == 6
    lengths = torch.tensor([3, 5])
    x = torch.randn(2, 5, 2, dtype=DTYPE)
    out, _ = module(x, lengths)
    for n, length in enumerate(lengths.tolist()):
        alone, _ = module(x[n : n + 1, :length])
        torch.testing.assert_close(out[n, :length], alone[0])
    with pytest.raises(RuntimeError, match="bidirectional"):
        module.step(x[:, 0])


@pytest.mark.parametrize("cls", [ElmanRNN, LSTM, GRU])
def test_gradcheck_with_lengths(cls):
    torch.manual_seed(3)
    module = cls(2, 2).double()
    x = torch.randn(2, 3, 2, dtype=DTYPE, requires_grad=True)
    lengths = torch.tensor([3, 1])
    assert torch.autograd.gradcheck(lambda x: module(x, lengths)[0], (x,))


def test_initialization():
    lstm = LSTM(3, 4, num_layers=2)
    for name, p in lstm.rnn.named_parameters():
        if name.startswith("bias_ih"):
            expected = torch.zeros(16)
            expected[4:8] = 1.0
            torch.testing.assert_close(p.detach(), expected)
        elif name.startswith("bias_hh"):
            assert torch.count_nonzero(p) == 0
    for cls in (ElmanRNN, GRU):
        module = cls(3, 4)
        _randomize(module)
        module.reset_parameters()
        assert all(
            torch.count_nonzero(p) == 0
            for name, p in module.rnn.named_parameters()
            if name.startswith("bias")
        )
    for cls in (ElmanRNN, LSTM, GRU):
        module = cls(2, 3).double()
        out, state, penalty = module(torch.randn(2, 4, 2).double(), return_penalty=True)
        assert penalty.shape == () and float(penalty) == 0.0
        assert penalty.dtype == torch.float64


@pytest.mark.parametrize("mean", [None, [1.0, -2.0]])
def test_elman_init_from_laes(mean):
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((3, 2)), 0.3 * rng.standard_normal((3, 3))
    rnn = ElmanRNN(2, 3).double().init_from_laes_(A, B, mean=mean)
    mu = np.zeros(2) if mean is None else np.asarray(mean)
    x = torch.randn(1, 4, 2, dtype=DTYPE)
    out, _ = rnn(x)
    h = np.zeros(3)
    for t in range(4):  # Pasa & Sperduti 2014: h_t = tanh(A (x_t - mu) + B h)
        h = np.tanh(A @ (x[0, t].numpy() - mu) + B @ h)
        np.testing.assert_allclose(out[0, t].detach(), h, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="A must have shape"):
        ElmanRNN(2, 4).init_from_laes_(A, B)
    with pytest.raises(ValueError, match="single unidirectional"):
        ElmanRNN(2, 3, num_layers=2).init_from_laes_(A, B)


@pytest.mark.parametrize("cls", [ElmanRNN, LSTM, GRU])
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hidden_size": 0}, "hidden_size must be a positive int, got 0"),
        ({"num_layers": 1.5}, "num_layers must be a positive int, got 1.5"),
        ({"bidirectional": "no"}, "bidirectional must be a bool"),
        ({"dropout": -0.1}, r"dropout must be a float in \[0, 1\), got -0.1"),
    ],
)
def test_parameter_validation(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**({"input_size": 2, "hidden_size": 3} | kwargs))


def test_input_validation():
    rnn = GRU(2, 3)
    with pytest.raises(ValueError, match="expected input_size=2"):
        rnn(torch.zeros(1, 3, 4))
    with pytest.raises(ValueError, match=r"lengths must have shape \(2,\)"):
        rnn(torch.zeros(2, 3, 2), lengths=torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        ElmanRNN(2, 3, nonlinearity="sigmoid")


# --------------------------------------------------------------------------- #
# LSTM forget-gate bias
# --------------------------------------------------------------------------- #
def _lstm_biases(lstm):
    """(layer, direction suffix) -> (bias_ih, bias_hh), numpy copies."""
    rnn = lstm.rnn
    out = {}
    for layer in range(lstm.num_layers):
        for sfx in ("", "_reverse")[: lstm.num_directions]:
            out[layer, sfx] = tuple(
                getattr(rnn, f"{name}_l{layer}{sfx}").detach().numpy().copy()
                for name in ("bias_ih", "bias_hh")
            )
    return out


@pytest.mark.parametrize("forget_bias", [0.0, 1.0, 5.0, -2.5])
@pytest.mark.parametrize(("num_layers", "bidirectional"), [(1, False), (3, True)])
def test_lstm_forget_bias_every_layer_and_direction(
    forget_bias, num_layers, bidirectional
):
    H = 4
    lstm = LSTM(
        3,
        H,
        num_layers=num_layers,
        bidirectional=bidirectional,
        forget_bias=forget_bias,
    )
    assert lstm.forget_bias == forget_bias
    biases = _lstm_biases(lstm)
    assert len(biases) == num_layers * (2 if bidirectional else 1)
    for b_ih, b_hh in biases.values():
        # total forget-gate bias (gate order i, f, g, o) is forget_bias
        np.testing.assert_array_equal(b_ih[H : 2 * H] + b_hh[H : 2 * H], forget_bias)
        np.testing.assert_array_equal(b_hh[H : 2 * H], 0.0)
        # the input, cell and output gate biases are untouched (zero)
        for gate in (0, 2, 3):
            np.testing.assert_array_equal(b_ih[gate * H : (gate + 1) * H], 0.0)
            np.testing.assert_array_equal(b_hh[gate * H : (gate + 1) * H], 0.0)


def test_lstm_forget_bias_leaves_weights_and_default_unchanged():
    torch.manual_seed(5)
    default = LSTM(3, 4, num_layers=2, bidirectional=True)
    torch.manual_seed(5)
    explicit = LSTM(3, 4, num_layers=2, bidirectional=True, forget_bias=1.0)
    torch.manual_seed(5)
    large = LSTM(3, 4, num_layers=2, bidirectional=True, forget_bias=5.0)
    assert default.forget_bias == 1.0  # unchanged default: total forget bias 1
    sd_default, sd_explicit, sd_large = (
        m.state_dict() for m in (default, explicit, large)
    )
    assert list(sd_large) == list(sd_default)  # same parameters, same names
    for name, value in sd_default.items():
        torch.testing.assert_close(sd_explicit[name], value, rtol=0, atol=0)
        if name.startswith("weight"):  # same random draws
            torch.testing.assert_close(sd_large[name], value, rtol=0, atol=0)
    assert "forget_bias" not in repr(default)
    assert "forget_bias=5.0" in repr(large)


def test_lstm_forget_bias_reset_parameters_and_copies():
    import copy
    import pickle

    lstm = LSTM(2, 3, num_layers=2, forget_bias=5.0)
    _randomize(lstm)
    lstm.reset_parameters()
    for b_ih, b_hh in _lstm_biases(lstm).values():
        np.testing.assert_array_equal(b_ih[3:6] + b_hh[3:6], 5.0)
    for clone in (copy.deepcopy(lstm), pickle.loads(pickle.dumps(lstm))):
        assert clone.forget_bias == 5.0
        for name, value in lstm.state_dict().items():
            torch.testing.assert_close(clone.state_dict()[name], value)
    # a state_dict moves between LSTMs of different forget_bias (same shapes)
    other = LSTM(2, 3, num_layers=2)
    other.load_state_dict(lstm.state_dict())
    x = torch.randn(2, 4, 2)
    torch.testing.assert_close(other(x)[0], lstm(x)[0])


def test_lstm_forget_bias_forward_and_step_match_reference():
    torch.manual_seed(6)
    module = LSTM(3, 4, forget_bias=3.0).double()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():  # random weights, initial (forget-bias) biases
        for name, p in module.rnn.named_parameters():
            if name.startswith("weight"):
                p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    x = torch.randn(2, 5, 3, dtype=DTYPE)
    out, _ = module(x, torch.tensor([5, 3]))
    for n, length in enumerate([5, 3]):
        expected, _ = ref_lstm(module, x[n, :length].numpy())
        np.testing.assert_allclose(
            out[n, :length].detach(), expected, rtol=1e-10, atol=1e-12
        )
    state = None
    full, _ = module(x)
    for t in range(5):
        y, state = module.step(x[:, t], state)
        torch.testing.assert_close(y, full[:, t])


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), "1", None, True]
)
def test_lstm_forget_bias_validation(value):
    with pytest.raises(ValueError, match="forget_bias must be a finite float, got"):
        LSTM(2, 3, forget_bias=value)


def test_lstm_forget_bias_accepts_numpy_and_int():
    assert LSTM(2, 3, forget_bias=np.float32(2.0)).forget_bias == 2.0
    assert isinstance(LSTM(2, 3, forget_bias=2).forget_bias, float)


@pytest.mark.parametrize(("cls", "gates"), [(ElmanRNN, 1), (LSTM, 4), (GRU, 3)])
def test_orthogonal_recurrent_init_every_gate_layer_and_direction(cls, gates):
    torch.manual_seed(0)
    module = cls(3, 4, num_layers=2, bidirectional=True, recurrent_init="orthogonal")
    bound = 1.0 / np.sqrt(4)
    for name, p in module.rnn.named_parameters():
        if name.startswith("weight_hh"):
            assert p.shape == (gates * 4, 4)
            for block in p.detach().split(4):
                torch.testing.assert_close(
                    block @ block.T, torch.eye(4), atol=1e-6, rtol=0
                )
        elif name.startswith("weight_ih"):  # the input weights: uniform as before
            assert float(p.detach().abs().max()) <= bound
    assert "recurrent_init='orthogonal'" in repr(module)
    # reset_parameters draws them again, orthogonal
    _randomize(module)
    module.reset_parameters()
    W = module.rnn.weight_hh_l1_reverse.detach()[:4]
    torch.testing.assert_close(W @ W.T, torch.eye(4), atol=1e-6, rtol=0)


def test_default_recurrent_init_is_unchanged_uniform():
    # the default draws the same weights as a module built without the option
    torch.manual_seed(3)
    default = ElmanRNN(2, 5)
    torch.manual_seed(3)
    uniform = ElmanRNN(2, 5, recurrent_init="uniform")
    for (name, a), (_, b) in zip(
        default.rnn.named_parameters(), uniform.rnn.named_parameters(), strict=True
    ):
        assert torch.equal(a, b), name  # copies of the same draws
    W = default.rnn.weight_hh_l0.detach()
    assert float(W.abs().max()) <= 1.0 / np.sqrt(5)
    assert not torch.allclose(W @ W.T, torch.eye(5), atol=1e-2)


@pytest.mark.parametrize("cls", [ElmanRNN, LSTM, GRU])
def test_recurrent_init_validation(cls):
    with pytest.raises(ValueError, match="recurrent_init must be one of .*'identity'"):
        cls(2, 3, recurrent_init="identity")
