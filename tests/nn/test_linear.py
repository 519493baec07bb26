"""Tests of sklmn.nn.LinearRNN (the linear and linear orthogonal RNN
baselines of Carta, Sperduti & Bacciu 2020b) against a numpy reference."""

import copy
import io
import pickle

import numpy as np
import pytest
import torch
from torch.nn.utils import parametrize

from sklmn.nn import LinearRNN
from tests._helpers import _assert_nan_padding_inert

DTYPE = torch.float64


def _randomize(module, seed=0):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "parametrizations" not in name:
                p.copy_(0.4 * torch.randn(p.shape, generator=gen, dtype=p.dtype))


def _weights(module, sfx):
    return [
        getattr(module, name + sfx).detach().numpy()
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]


def reference(module, x, lengths):
    """Per-sequence loop of h_t = W_hh h + W_ih x_t + b_ih + b_hh, layer by
    layer, the reverse direction on the reversed valid part."""
    x = x.detach().numpy()
    N, T, _ = x.shape
    H, D = module.hidden_size, module.num_directions
    out = np.zeros((N, T, H * D))
    final = np.zeros((module.num_layers * D, N, H))
    for n in range(N):
        length = int(lengths[n])
        inp = x[n, :length]
        for i in range(module.num_layers):
            outs = []
            for j, sfx in enumerate(module._suffixes(i)):
                Wi, Wh, bi, bh = _weights(module, sfx)
                seq = inp if j == 0 else inp[::-1]
                h, hs = np.zeros(H), []
                for x_t in seq:
                    h = Wh @ h + Wi @ x_t + bi + bh
                    hs.append(h)
                hs = np.array(hs)
                outs.append(hs if j == 0 else hs[::-1])
                final[i * D + j, n] = h
            inp = np.concatenate(outs, axis=1)
        out[n, :length] = inp
    return out, final


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("recurrent_matrix", ["free", "orthogonal"])
def test_forward_matches_reference_with_mixed_lengths(
    num_layers, bidirectional, recurrent_matrix
):
    torch.manual_seed(0)
    module = LinearRNN(
        3,
        4,
        num_layers=num_layers,
        bidirectional=bidirectional,
        recurrent_matrix=recurrent_matrix,
    ).double()
    _randomize(module)
    x = torch.randn(3, 6, 3, dtype=DTYPE)
    x[1, 2:] = 7.0  # padding values never matter
    lengths = torch.tensor([6, 2, 5])
    out, state = module(x, lengths)
    ref_out, ref_final = reference(module, x, lengths)
    np.testing.assert_allclose(out.detach(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(state.detach(), ref_final, rtol=1e-10, atol=1e-12)
    assert torch.count_nonzero(out[1, 2:]) == 0
    assert out.shape == (3, 6, module.output_size)


def test_step_and_initial_state_equal_forward():
    torch.manual_seed(1)
    module = LinearRNN(2, 3, num_layers=2).double()
    _randomize(module)
    x = torch.randn(4, 6, 2, dtype=DTYPE)
    out, final = module(x)
    state = None
    for t in range(6):
        y, state = module.step(x[:, t], state)
        torch.testing.assert_close(y, out[:, t], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(state, final, rtol=1e-10, atol=1e-12)
    # continuing from a state equals one pass
    _, mid = module(x[:, :3])
    rest, end = module(x[:, 3:], state=mid)
    torch.testing.assert_close(rest, out[:, 3:], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(end, final, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="bidirectional LinearRNN"):
        LinearRNN(2, 3, bidirectional=True).step(x[:, 0].float())


def test_orthogonal_matrix_stays_orthogonal_while_training():
    torch.manual_seed(0)
    module = LinearRNN(2, 5, num_layers=2, recurrent_matrix="orthogonal")
    assert parametrize.is_parametrized(module, "weight_hh_l1")
    before = module.weight_hh_l0.detach().clone()
    opt = torch.optim.Adam(module.parameters(), lr=0.05)
    x = torch.randn(8, 7, 2)
    for _ in range(5):
        opt.zero_grad()
        out, _ = module(x)
        out.pow(2).mean().backward()
        opt.step()
    for name in ("weight_hh_l0", "weight_hh_l1"):
        W = getattr(module, name).detach()
        torch.testing.assert_close(W @ W.T, torch.eye(5), rtol=0, atol=1e-5)
    assert not torch.allclose(module.weight_hh_l0.detach(), before, atol=1e-3)


def test_initializations():
    torch.manual_seed(0)
    free = LinearRNN(3, 6)
    bound = 1.0 / np.sqrt(6)
    for name in ("weight_ih_l0", "weight_hh_l0"):
        assert float(getattr(free, name).detach().abs().max()) <= bound
    assert torch.count_nonzero(free.bias_ih_l0) == 0
    for kwargs in (
        {"recurrent_init": "orthogonal"},
        {"recurrent_matrix": "orthogonal"},
        {"recurrent_matrix": "orthogonal", "recurrent_init": "orthogonal"},
    ):
        module = LinearRNN(3, 6, bidirectional=True, **kwargs)
        for sfx in ("_l0", "_l0_reverse"):
            W = getattr(module, "weight_hh" + sfx).detach()
            torch.testing.assert_close(W @ W.T, torch.eye(6), rtol=0, atol=1e-5)
        # the input weights keep the uniform draw
        assert float(module.weight_ih_l0.detach().abs().max()) <= bound
    # reset_parameters of a parametrized module keeps the constraint
    module = LinearRNN(2, 4, recurrent_matrix="orthogonal")
    module.reset_parameters()
    W = module.weight_hh_l0.detach()
    torch.testing.assert_close(W @ W.T, torch.eye(4), rtol=0, atol=1e-5)


@pytest.mark.parametrize("how", ["pickle", "torch.save", "deepcopy", "state_dict"])
def test_round_trips_keep_the_orthogonal_parametrization(how):
    torch.manual_seed(0)
    module = LinearRNN(2, 3, bidirectional=True, recurrent_matrix="orthogonal")
    x = torch.randn(2, 4, 2)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(module))
    elif how == "torch.save":
        buffer = io.BytesIO()
        torch.save(module, buffer)
        buffer.seek(0)
        other = torch.load(buffer, weights_only=False)
    elif how == "deepcopy":
        other = copy.deepcopy(module)
    else:
        torch.manual_seed(5)
        other = LinearRNN(2, 3, bidirectional=True, recurrent_matrix="orthogonal")
        other.load_state_dict(module.state_dict())
    assert parametrize.is_parametrized(other, "weight_hh_l0_reverse")
    torch.testing.assert_close(other(x)[0], module(x)[0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("mean", [None, [1.0, -2.0]])
@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_laes_start_is_the_autoencoder_exactly(mean, scale):
    """The LAES weights make a linear RNN the autoencoder's encoder, times the
    input scale, at any scale (no tanh to leave the linear regime)."""
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((3, 2)), 0.3 * rng.standard_normal((3, 3))
    rnn = LinearRNN(2, 3).double()
    rnn.init_from_laes_(A, B, mean=mean, input_scale=scale)
    mu = np.zeros(2) if mean is None else np.asarray(mean)
    x = torch.randn(1, 5, 2, dtype=DTYPE)
    out, _ = rnn(x)
    y = np.zeros(3)
    for t in range(5):
        y = A @ (x[0, t].numpy() - mu) + B @ y
        np.testing.assert_allclose(
            out[0, t].detach(), scale * y, rtol=1e-10, atol=1e-10
        )
    assert rnn.laes_output_scale(scale) == scale
    assert rnn.laes_capacity(2) == [(3, "the network has hidden_size=3")]
    # partial: the first units only, in a layer and direction of a stack
    deep = LinearRNN(2, 4, num_layers=2, bidirectional=True).double()
    deep.init_from_laes_(A[:2, :], B[:2, :2], layer=0, direction=1, partial=True)
    torch.testing.assert_close(
        deep.weight_hh_l0_reverse[:2, :2].detach(), torch.as_tensor(B[:2, :2])
    )
    assert torch.count_nonzero(deep.weight_hh_l0_reverse[:2, 2:]) == 0
    with pytest.raises(ValueError, match="A must have shape"):
        LinearRNN(2, 4).init_from_laes_(A, B)
    with pytest.raises(ValueError, match="single unidirectional"):
        deep.init_from_laes_(A, B)
    with pytest.raises(ValueError, match="^mine cannot set an orthogonal"):
        LinearRNN(2, 3, recurrent_matrix="orthogonal").check_laes_init("mine")


def test_layer_outputs_feed_the_next_layer():
    torch.manual_seed(2)
    deep = LinearRNN(2, 3, num_layers=2, bidirectional=True).double()
    _randomize(deep)
    x = torch.randn(3, 5, 2, dtype=DTYPE)
    lengths = torch.tensor([5, 3, 1])
    first = deep.layer_outputs(0, x, lengths)
    second = deep.layer_outputs(1, first, lengths)
    torch.testing.assert_close(second, deep(x, lengths)[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hidden_size": 0}, "hidden_size must be a positive int, got 0"),
        ({"num_layers": 1.5}, "num_layers must be a positive int, got 1.5"),
        ({"bidirectional": "no"}, "bidirectional must be a bool, got 'no'"),
        ({"dropout": 1.0}, r"dropout must be a float in \[0, 1\), got 1.0"),
        ({"recurrent_matrix": "unitary"}, "recurrent_matrix must be one of"),
        ({"recurrent_init": "xavier"}, "recurrent_init must be one of .*'xavier'"),
    ],
)
def test_parameter_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LinearRNN(**({"input_size": 2, "hidden_size": 3} | kwargs))


def test_input_validation_and_penalty():
    rnn = LinearRNN(2, 3, num_layers=2)
    with pytest.raises(ValueError, match="input_size=2"):
        rnn(torch.zeros(1, 3, 5))
    with pytest.raises(ValueError, match=r"must be a tensor of shape \(2, 1, 3\)"):
        rnn(torch.zeros(1, 3, 2), state=torch.zeros(1, 3))
    with pytest.raises(ValueError, match="lengths must be in 1..3"):
        rnn(torch.zeros(2, 3, 2), lengths=torch.tensor([0, 3]))
    _, _, penalty = rnn(torch.zeros(1, 3, 2), return_penalty=True)
    assert penalty.shape == () and float(penalty) == 0.0


def test_gradcheck_with_lengths():
    torch.manual_seed(0)
    module = LinearRNN(2, 2, bidirectional=True).double()
    x = torch.randn(2, 3, 2, dtype=DTYPE, requires_grad=True)
    lengths = torch.tensor([3, 1])
    assert torch.autograd.gradcheck(lambda x: module(x, lengths)[0], (x,))


def test_nan_padding_does_not_reach_gradients():
    """Padded steps are never read: NaN there must not reach the gradient
    of the input weights (as 0 * NaN through the projection of all steps)."""
    torch.manual_seed(0)
    net = LinearRNN(2, 3, num_layers=2, bidirectional=True).double()
    x = torch.randn(3, 5, 2, dtype=DTYPE)
    lengths = torch.tensor([5, 2, 3])
    _assert_nan_padding_inert(
        net, x, lengths, lambda out, final: out.sum() + final.pow(2).sum()
    )


def test_orthogonal_reset_draws_on_the_weights_device():
    # reset_parameters drew W_hh on the CPU and assigned it to the
    # parametrized weight, whose original takes the storage of the assigned
    # value: on an accelerator that failed ("Attempted to set the storage of a
    # tensor on device cuda to a storage on different device cpu"). The
    # meta device stands for the accelerator; torch's orthogonal map does not
    # run there, so a stand-in right_inverse records what it is given.
    rnn = LinearRNN(2, 3, bidirectional=True, recurrent_matrix="orthogonal")
    rnn = rnn.to("meta")
    seen = []

    def right_inverse(value):
        seen.append(value.device.type)
        return torch.zeros_like(value)

    for sfx in ("_l0", "_l0_reverse"):
        rnn.parametrizations["weight_hh" + sfx][0].right_inverse = right_inverse
    rnn.reset_parameters()
    assert seen == ["meta", "meta"]
    assert {p.device.type for p in rnn.parameters()} == {"meta"}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_orthogonal_reset_on_cuda():
    rnn = LinearRNN(2, 3, recurrent_matrix="orthogonal").cuda()
    rnn.reset_parameters()
    assert {p.device.type for p in rnn.parameters()} == {"cuda"}
    W = rnn.weight_hh_l0.detach()
    torch.testing.assert_close(W.T @ W, torch.eye(3, device="cuda"), atol=1e-5, rtol=0)
