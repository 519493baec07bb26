"""Tests of sklmn.nn.ENRNN (Helfrich & Ye 2020) against a per-step numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.func import functional_call
from torch.nn.utils import parametrize

from sklmn.nn import ENRNN, ModReLU, modrelu
from tests._helpers import _assert_nan_padding_inert

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def explicit_matrices(net: ENRNN) -> dict[str, np.ndarray]:
    """W_L, W_S, W_C, U, b from the *free* parameters with explicit formulas.

    W_L = (I + A)^{-1} (I - A) D with A from the strict upper triangle of X
    (scoRNN); W_S = T / (rho(T) + eps) when the normalization is active
    (latched, or rho(T) > 1), T otherwise (Helfrich & Ye 2020 §3.1, §4).
    """
    q, s = net.hidden_size, net.short_size
    X = net.parametrizations.weight_long.original.detach().double().numpy()
    A = np.triu(X, 1) - np.triu(X, 1).T
    d = np.ones(q)
    d[: net.n_negative] = -1.0
    W_L = np.linalg.inv(np.eye(q) + A) @ (np.eye(q) - A) @ np.diag(d)
    if net.normalize:
        T = net.parametrizations.weight_short.original.detach().double().numpy()
        rho = np.abs(np.linalg.eigvals(T)).max()
        latched = bool(net.parametrizations.weight_short[0].latched)
        W_S = T / (rho + net.eps) if (latched or rho > 1) else T
    else:
        W_S = net.weight_short.detach().double().numpy()
    if net.coupling:
        W_C = net.weight_coupling.detach().double().numpy()
    else:
        W_C = np.zeros((q, s))
    return {
        "W_L": W_L,
        "W_S": W_S,
        "W_C": W_C,
        "U": net.weight_ih.detach().double().numpy(),
        "b": net.bias.detach().double().numpy(),
    }


def reference_enrnn(net: ENRNN, x, lengths=None, state=None):
    """Per-sequence, per-step loop of Helfrich & Ye 2020 eq. 3 (h^(L), h^(S) apart)."""
    mats = explicit_matrices(net)
    q = net.hidden_size
    U_L, U_S = mats["U"][:q], mats["U"][q:]
    b_L, b_S = mats["b"][:q], mats["b"][q:]
    x = x.detach().double().numpy()

    def act(z, b):
        if net.activation == "modrelu":
            return np.sign(z) * np.maximum(np.abs(z) + b, 0.0)
        if net.activation == "relu":
            return np.maximum(z + b, 0.0)
        return np.tanh(z + b)

    N, T_, _ = x.shape
    size = net.hidden_size + net.short_size  # one layer and direction
    out = np.zeros((N, T_, size))
    final = np.zeros((N, size))
    for n in range(N):
        length = T_ if lengths is None else int(lengths[n])
        h0 = np.zeros(size) if state is None else state[n].double().numpy()
        h_L, h_S = h0[:q], h0[q:]
        for t in range(length):
            new_L = act(U_L @ x[n, t] + mats["W_L"] @ h_L + mats["W_C"] @ h_S, b_L)
            new_S = act(U_S @ x[n, t] + mats["W_S"] @ h_S, b_S)
            h_L, h_S = new_L, new_S
            out[n, t] = np.concatenate([h_L, h_S])
        final[n] = np.concatenate([h_L, h_S])
    return out, final


def make_net(seed=0, dtype=torch.float64, rho_short=None, **kwargs):
    torch.manual_seed(seed)
    kwargs = {"n_negative": 2, **kwargs}
    net = ENRNN(3, 5, 4, **kwargs).to(dtype)
    with torch.no_grad():
        net.bias.uniform_(-0.3, 0.3)  # non-zero modReLU / additive biases
        if rho_short is not None:
            T = torch.randn(4, 4, dtype=dtype)
            rho = torch.linalg.eigvals(T).abs().max()
            if net.normalize:
                net.weight_short = T * (rho_short / rho)
            else:
                net.weight_short.copy_(T * (rho_short / rho))
    return net


@pytest.mark.parametrize("activation", ["modrelu", "relu", "tanh"])
@pytest.mark.parametrize("coupling", [False, True])
@pytest.mark.parametrize("rho_short", [None, 0.7, 1.6])
@pytest.mark.parametrize("normalize", [True, False])
def test_forward_matches_reference(activation, coupling, rho_short, normalize):
    net = make_net(
        activation=activation,
        coupling=coupling,
        rho_short=rho_short,
        normalize=normalize,
        eps=0.05,
    )
    x = torch.randn(3, 7, 3, dtype=torch.float64)
    out, state = net(x)
    ref_out, ref_state = reference_enrnn(net, x)
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        state.detach().numpy(), ref_state, rtol=1e-10, atol=1e-12
    )
    if normalize and rho_short == 1.6:
        assert bool(net.parametrizations.weight_short[0].latched)
        rho_w = np.abs(np.linalg.eigvals(net.weight_short.detach().numpy())).max()
        np.testing.assert_allclose(rho_w, 1.6 / 1.65, rtol=1e-10)


@pytest.mark.parametrize("coupling", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_masking_mixed_lengths(coupling, with_state):
    net = make_net(coupling=coupling, rho_short=1.3)
    x = torch.randn(4, 6, 3, dtype=torch.float64)
    lengths = torch.tensor([6, 1, 4, 3])
    state = torch.randn(4, 9, dtype=torch.float64) if with_state else None
    out, final = net(x, lengths=lengths, state=state)
    ref_out, ref_final = reference_enrnn(net, x, lengths, state)
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(final.detach().numpy(), ref_final, atol=1e-12)
    for n, length in enumerate(lengths.tolist()):
        assert float(out.detach()[n, length:].abs().sum()) == 0.0
    # the content of padded steps does not matter
    x2 = x.clone()
    x2[1, 1:] = 1e3
    out2, final2 = net(x2, lengths=lengths, state=state)
    torch.testing.assert_close(out2, out, rtol=0, atol=0)
    torch.testing.assert_close(final2, final, rtol=0, atol=0)


@pytest.mark.parametrize("activation", ["modrelu", "tanh"])
def test_nan_padding_does_not_reach_gradients(activation):
    """Padded steps leave the state unchanged: NaN there must not reach the
    gradient of the input weights (as 0 * NaN through the projection)."""
    net = make_net(coupling=True, activation=activation, num_layers=2,
                   bidirectional=True)
    x = torch.randn(4, 6, 3, dtype=torch.float64)
    lengths = torch.tensor([6, 1, 4, 3])
    _assert_nan_padding_inert(
        net, x, lengths, lambda out, final: out.sum() + final.pow(2).sum()
    )


def test_lengths_all_full_equals_none():
    net = make_net()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    out1, s1 = net(x)
    out2, s2 = net(x, lengths=torch.tensor([5, 5]))
    torch.testing.assert_close(out1, out2, rtol=0, atol=0)
    torch.testing.assert_close(s1, s2, rtol=0, atol=0)


@pytest.mark.parametrize("coupling", [False, True])
@pytest.mark.parametrize("activation", ["modrelu", "tanh"])
def test_step_equals_forward(coupling, activation):
    net = make_net(coupling=coupling, activation=activation, rho_short=1.4)
    x = torch.randn(3, 6, 3, dtype=torch.float64)
    out, final = net(x)
    state = None
    with parametrize.cached():
        for t in range(6):
            y, state = net.step(x[:, t], state)
            torch.testing.assert_close(y, out[:, t], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state, final, rtol=1e-12, atol=1e-12)


def test_continuing_from_state_equals_one_pass():
    net = make_net(coupling=True)
    x = torch.randn(2, 8, 3, dtype=torch.float64)
    out, final = net(x)
    out_a, state_a = net(x[:, :3])
    out_b, state_b = net(x[:, 3:], state=state_a)
    # other input shapes (other BLAS paths): float64 rounding allowed
    tol = dict(rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(torch.cat([out_a, out_b], 1), out, **tol)
    torch.testing.assert_close(state_b, final, **tol)


@pytest.mark.parametrize(("rho_short", "activation"), [(0.6, "tanh"), (1.5, "modrelu")])
def test_gradcheck_float64(rho_short, activation):
    net = make_net(coupling=True, rho_short=rho_short, activation=activation)
    net.eval()  # the latch state is fixed during gradcheck
    names = [k for k, _ in net.named_parameters()]
    params = [p.detach().clone().requires_grad_() for _, p in net.named_parameters()]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 3, dtype=torch.float64, generator=g, requires_grad=True)
    lengths = torch.tensor([3, 2])

    def f(x, *ps):
        out, state = functional_call(
            net, dict(zip(names, ps, strict=True)), (x, lengths)
        )
        return out, state

    assert torch.autograd.gradcheck(f, (x, *params))


@pytest.mark.parametrize("eps", [0.0, 1e-3])
def test_optimizer_steps_keep_constraints(eps):
    torch.manual_seed(0)
    net = ENRNN(2, 6, 5, n_negative=3, coupling=True, eps=eps).double()
    with torch.no_grad():
        net.weight_short = 1.5 * net.weight_short  # pushes rho(T) past 1 soon
    x = torch.randn(8, 10, 2, dtype=torch.float64)
    target = torch.randn(8, 11, dtype=torch.float64)
    readout = torch.nn.Linear(11, 11).double()
    opt = torch.optim.Adam([*net.parameters(), *readout.parameters()], lr=0.05)
    latch = net.parametrizations.weight_short[0].latched
    seen_latched = False
    eye = torch.eye(6, dtype=torch.float64)
    for _ in range(25):
        out, _ = net(x)
        # Amplifying target: rewards a large short-term state.
        loss = ((readout(out[:, -1]) - 3 * target) ** 2).mean() - out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        W_L = net.weight_long.detach()
        assert float((W_L.T @ W_L - eye).abs().max()) < 1e-6
        seen_latched = seen_latched or bool(latch)
        if seen_latched:
            assert bool(latch)
            T = net.parametrizations.weight_short.original.detach().numpy()
            rho_t = np.abs(np.linalg.eigvals(T)).max()
            rho_w = np.abs(np.linalg.eigvals(net.weight_short.detach().numpy())).max()
            np.testing.assert_allclose(rho_w, rho_t / (rho_t + eps), rtol=1e-10)
            assert rho_w <= 1.0 + 1e-12
            if eps > 0:
                assert rho_w < 1.0
    assert seen_latched


def test_reset_parameters_and_init():
    torch.manual_seed(0)
    net = ENRNN(3, 6, 5, n_negative=2, coupling=True)
    with torch.no_grad():
        net.weight_short = 3.0 * torch.eye(5)
    _ = net.weight_short  # training mode: closes the latch
    latch = net.parametrizations.weight_short[0].latched
    assert bool(latch)
    net.reset_parameters()
    assert not bool(latch)
    assert float(net.bias.detach().abs().max()) == 0.0
    T = net.parametrizations.weight_short.original.detach()
    torch.testing.assert_close(net.weight_short.detach(), T, rtol=0, atol=0)  # rho<1
    assert float(T[:2, 2:].abs().max()) == 0.0 and float(T[2:4, :2].abs().max()) == 0.0
    assert float(torch.linalg.eigvals(T).abs().max()) < 1.0
    W = net.weight_long.detach()
    torch.testing.assert_close(W.T @ W, torch.eye(6), atol=1e-5, rtol=0)
    lam = torch.linalg.eigvals(W * torch.tensor([-1.0, -1, 1, 1, 1, 1]))  # W D
    assert float(lam.real.min()) >= -1e-5  # scoRNN init: right half circle
    bound = (6.0 / (5 + 6)) ** 0.5  # Glorot uniform of W_C (6 x 5)
    assert float(net.weight_coupling.detach().abs().max()) <= bound


def test_state_dict_roundtrip_keeps_latch():
    net = make_net(rho_short=1.5)
    _ = net(torch.randn(1, 2, 3, dtype=torch.float64))
    sd = net.state_dict()
    assert bool(sd["parametrizations.weight_short.0.latched"])
    other = make_net(seed=1)
    other.load_state_dict(sd)
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    torch.testing.assert_close(other(x)[0], net(x)[0], rtol=0, atol=0)


def test_normalize_false_is_plain_parameter():
    net = ENRNN(2, 3, 3, normalize=False)
    assert not parametrize.is_parametrized(net, "weight_short")
    assert parametrize.is_parametrized(net, "weight_long")
    assert isinstance(net.weight_short, torch.nn.Parameter)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtype_device_penalty(device, dtype):
    torch.manual_seed(0)
    net = ENRNN(2, 4, 3, coupling=True).to(device=device, dtype=dtype)
    x = torch.randn(3, 5, 2, device=device, dtype=dtype)
    out, state, pen = net(x, lengths=torch.tensor([5, 3, 1]), return_penalty=True)
    assert out.dtype == dtype and out.device.type == device
    assert state.shape == (3, 7)
    assert pen.shape == () and float(pen) == 0.0
    assert pen.dtype == dtype and pen.device.type == device
    out.sum().backward()
    for p in net.parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all()


def test_forward_evaluates_parametrizations_once():
    net = make_net(rho_short=1.3)
    calls = {"long": 0, "short": 0}
    net.parametrizations.weight_long[0].register_forward_hook(
        lambda *a: calls.__setitem__("long", calls["long"] + 1)
    )
    net.parametrizations.weight_short[0].register_forward_hook(
        lambda *a: calls.__setitem__("short", calls["short"] + 1)
    )
    net(torch.randn(2, 9, 3, dtype=torch.float64))
    assert calls == {"long": 1, "short": 1}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"input_size": 0}, "input_size must be a positive int, got 0"),
        ({"hidden_size": 2.0}, "hidden_size must be a positive int, got 2.0"),
        ({"short_size": -1}, "short_size must be a positive int, got -1"),
        ({"n_negative": 5}, r"n_negative must be an int in 0..hidden_size=4, got 5"),
        ({"n_negative": -1}, "got -1"),
        ({"eps": -0.1}, "eps must be a finite float >= 0, got -0.1"),
        ({"latch": "yes"}, "latch must be a bool, got 'yes'"),
        ({"coupling": 1}, "coupling must be a bool, got 1"),
        ({"normalize": None}, "normalize must be a bool, got None"),
        ({"activation": "sigmoid"}, "activation must be one of .* got 'sigmoid'"),
    ],
)
def test_constructor_validation(kwargs, match):
    args = {"input_size": 2, "hidden_size": 4, "short_size": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        ENRNN(**args)


def test_call_validation():
    net = ENRNN(2, 4, 3)
    with pytest.raises(ValueError, match="input_size=2"):
        net(torch.zeros(1, 3, 5))
    with pytest.raises(ValueError, match=r"state must be a tensor of shape \(1, 7\)"):
        net(torch.zeros(1, 3, 2), state=torch.zeros(1, 4))
    with pytest.raises(ValueError, match="lengths must be in 1..3"):
        net(torch.zeros(2, 3, 2), lengths=torch.tensor([0, 3]))
    with pytest.raises(ValueError, match=r"x_t must have shape \(N, 2\)"):
        net.step(torch.zeros(1, 3))


def test_modrelu_function_and_module():
    z = torch.tensor([[-2.0, -0.3, 0.0, 0.3, 2.0]], dtype=torch.float64)
    b = torch.tensor([-0.5, -0.5, 0.5, 0.5, 0.5], dtype=torch.float64)
    expected = torch.tensor([[-1.5, 0.0, 0.0, 0.8, 2.5]], dtype=torch.float64)
    torch.testing.assert_close(modrelu(z, b), expected)
    act = ModReLU(5).double()
    torch.testing.assert_close(act(z), z)  # b = 0: identity
    with pytest.raises(ValueError, match="num_features must be a positive int"):
        ModReLU(0)


@pytest.mark.parametrize("how", ["pickle", "torch.save", "deepcopy"])
def test_pickle_roundtrip_keeps_parametrizations_and_latch(how):
    import copy
    import io
    import pickle

    net = make_net(coupling=True, rho_short=1.5)
    _ = net.weight_short  # training mode: closes the latch
    net.eval()
    if how == "pickle":
        other = pickle.loads(pickle.dumps(net))
    elif how == "torch.save":
        buffer = io.BytesIO()
        torch.save(net, buffer)
        buffer.seek(0)
        other = torch.load(buffer, weights_only=False)
    else:
        other = copy.deepcopy(net)
    assert isinstance(other, ENRNN) and not other.training
    assert parametrize.is_parametrized(other, "weight_long")
    assert bool(other.parametrizations.weight_short[0].latched)
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    torch.testing.assert_close(other(x)[0], net(x)[0], rtol=0, atol=0)
    # independent copies: changing one does not change the other
    with torch.no_grad():
        other.parametrizations.weight_long.original.add_(0.1)
    assert not torch.allclose(other(x)[0], net(x)[0], rtol=0, atol=1e-3)
    # and the copy can be pickled again
    again = pickle.loads(pickle.dumps(other))
    torch.testing.assert_close(again(x)[0], other(x)[0], rtol=0, atol=0)


def test_step_with_the_matrix_computed_once():
    """``step(..., recurrent_matrix=W)`` with ``W`` evaluated once equals
    ``forward`` (no parametrization cache needed); a wrong matrix is named."""
    net = make_net(coupling=True, activation="modrelu", rho_short=1.4)
    x = torch.randn(3, 6, 3, dtype=torch.float64)
    out, final = net(x)
    W = net.recurrent_matrix()
    state = None
    for t in range(6):
        y, state = net.step(x[:, t], state, recurrent_matrix=W)
        torch.testing.assert_close(y, out[:, t], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state, final, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"recurrent_matrix must be a tensor of shape"):
        net.step(x[:, 0], recurrent_matrix=W[:2])


# --------------------------------------------------------------------------- #
# Stacked and bidirectional
# --------------------------------------------------------------------------- #
def _reverse_valid(a, lengths):
    out = a.copy()
    for n, length in enumerate(lengths):
        out[n, :length] = a[n, :length][::-1]
    return out


@pytest.mark.parametrize("num_layers", [1, 2, 3])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_stacked_bidirectional_matches_the_reference_of_each_cell(
    num_layers, bidirectional
):
    """Layer i + 1 reads layer i's output; the reverse direction reads each
    valid part backwards; every cell is the per-step reference of eq. 3."""
    torch.manual_seed(0)
    net = ENRNN(
        3, 4, 3, num_layers=num_layers, bidirectional=bidirectional, coupling=True
    ).double()
    D = 2 if bidirectional else 1
    assert len(net.cells) == num_layers * D and net.cells[0] is net
    assert net.output_size == 7 * D
    with torch.no_grad():
        for k, cell in enumerate(net.cells):
            cell.bias.uniform_(-0.3, 0.3)
            cell.weight_short = 1.5 * cell.weight_short  # rho > 1: normalized
            # layers above the first read its directions concatenated
            assert cell.input_size == (3 if k < D else 7 * D)
    x = torch.randn(3, 6, 3, dtype=torch.float64)
    lengths = [6, 2, 4]
    out, state = net(x, lengths=torch.tensor(lengths))
    inp, finals = x.numpy(), []
    for i in range(num_layers):
        outs = []
        for j in range(D):
            cell = net.cells[i * D + j]
            seq = inp if j == 0 else _reverse_valid(inp, lengths)
            o, f = reference_enrnn(cell, torch.as_tensor(seq), lengths)
            outs.append(o if j == 0 else _reverse_valid(o, lengths))
            finals.append(f)
        inp = np.concatenate(outs, axis=2)
    np.testing.assert_allclose(out.detach(), inp, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        state.detach(), np.concatenate(finals, axis=1), rtol=1e-10, atol=1e-12
    )
    assert torch.count_nonzero(out[1, 2:]) == 0


def test_every_cell_has_its_own_constrained_matrices():
    torch.manual_seed(0)
    net = ENRNN(2, 4, 3, num_layers=2, bidirectional=True, n_negative=1)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        net(torch.randn(5, 6, 2))[0].pow(2).mean().backward()
        opt.step()
    longs = [cell.weight_long.detach() for cell in net.cells]
    for W in longs:
        torch.testing.assert_close(W.T @ W, torch.eye(4), rtol=0, atol=1e-5)
    for cell in net.cells:
        rho = torch.linalg.eigvals(cell.weight_short.detach()).abs().max()
        assert float(rho) <= 1.0 + 1e-6
    assert not torch.allclose(longs[0], longs[1], atol=1e-3)
    # the latch of one cell is its own
    with torch.no_grad():
        net.cells[2].weight_short = torch.diag(torch.tensor([2.0, 0.5, 0.1]))
    _ = net.cells[2].weight_short  # training mode: closes that latch only
    latched = [bool(c.parametrizations.weight_short[0].latched) for c in net.cells]
    assert latched[2] and not latched[0]


def test_stacked_step_equals_forward_and_state_continues():
    torch.manual_seed(1)
    net = ENRNN(2, 3, 2, num_layers=2, coupling=True).double().eval()
    x = torch.randn(4, 6, 2, dtype=torch.float64)
    out, final = net(x)
    assert final.shape == (4, 10)
    matrices = [cell.recurrent_matrix() for cell in net.cells]
    for kwargs in ({}, {"recurrent_matrix": matrices}):
        state = None
        for t in range(6):
            y, state = net.step(x[:, t], state, **kwargs)
            torch.testing.assert_close(y, out[:, t], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(state, final, rtol=1e-10, atol=1e-12)
    _, mid = net(x[:, :2])
    rest, end = net(x[:, 2:], state=mid)
    torch.testing.assert_close(rest, out[:, 2:], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="recurrent_matrix must be a list of 2"):
        net.step(x[:, 0], recurrent_matrix=matrices[0])
    with pytest.raises(ValueError, match=r"state must be a tensor of shape \(4, 10\)"):
        net(x, state=torch.zeros(4, 5, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="bidirectional ENRNN"):
        ENRNN(2, 3, 2, bidirectional=True).step(x[:, 0].float())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_layers": 0}, "num_layers must be a positive int, got 0"),
        ({"bidirectional": "yes"}, "bidirectional must be a bool, got 'yes'"),
    ],
)
def test_stacking_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ENRNN(2, 3, 2, **kwargs)


@pytest.mark.parametrize("how", ["pickle", "state_dict"])
def test_stacked_round_trips(how):
    import pickle

    torch.manual_seed(0)
    net = ENRNN(2, 3, 2, num_layers=2, bidirectional=True)
    with torch.no_grad():
        net.cells[3].weight_short = torch.diag(torch.tensor([2.0, 0.5]))
    _ = net.cells[3].weight_short  # closes that cell's latch
    if how == "pickle":
        other = pickle.loads(pickle.dumps(net))
    else:
        torch.manual_seed(9)
        other = ENRNN(2, 3, 2, num_layers=2, bidirectional=True)
        other.load_state_dict(net.state_dict())
    assert bool(other.cells[3].parametrizations.weight_short[0].latched)
    x = torch.randn(2, 5, 2)
    torch.testing.assert_close(other(x)[0], net(x)[0], rtol=0, atol=1e-6)


def test_a_module_pickled_before_stacking_loads_as_one_layer():
    """The state of a module pickled before ``num_layers``/``bidirectional``
    existed (no such attributes, no ``extra_cells``) loads as one layer."""
    from sklmn.nn._torch_compat import original_class
    from sklmn.nn.parametrizations import _rebuild_parametrized

    net = make_net(coupling=True)
    state = net.__dict__.copy()
    for key in ("num_layers", "bidirectional", "num_directions", "cell_size"):
        del state[key]
    state["_modules"] = {
        k: v for k, v in state["_modules"].items() if k != "extra_cells"
    }
    old = _rebuild_parametrized(original_class(net), state)
    assert old.cells == [old] and old.num_layers == 1 and not old.bidirectional
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    torch.testing.assert_close(old(x)[0], net(x)[0], rtol=0, atol=0)
    y, _ = old.step(x[:, 0])
    assert y.shape == (2, net.output_size)
