"""Tests of sklmn.nn.ClockworkRNN against a naive per-module reference."""

from __future__ import annotations

import pytest
import torch

from sklmn.nn import ClockworkRNN
from tests._helpers import _assert_nan_padding_inert


def reference_cwrnn(net, x, lengths=None, state=None):
    """Naive loop of Koutník et al. (2014) with tanh, module k reading i >= k.

    Reads the raw ``weight_hh`` blocks ``[k, i]`` with ``i >= k`` only, so
    values below the block diagonal must not matter.
    """
    g, n_u = net.n_modules, net.module_size

    def blk(k):
        return slice(k * n_u, (k + 1) * n_u)

    results = []
    for n in range(x.shape[0]):
        length = x.shape[1] if lengths is None else int(lengths[n])
        if state is None:
            mods = [x.new_zeros(n_u) for _ in range(g)]
            t = 0
        else:
            mods = [state[0][n, blk(k)] for k in range(g)]
            t = int(state[1][n])
        hs = []
        for s in range(length):
            new = []
            for k in range(g):
                if t % net.periods[k] == 0:
                    pre = net.weight_xh[blk(k)] @ x[n, s] + net.bias_h[blk(k)]
                    for i in range(k, g):
                        pre = pre + net.weight_hh[blk(k), blk(i)] @ mods[i]
                    new.append(torch.tanh(pre))
                else:
                    new.append(mods[k])
            mods = new
            t += 1
            hs.append(torch.cat(mods))
        results.append((torch.stack(hs), t))
    return results


def make_net(seed=0, periods=None, n_modules=3, garbage=True):
    torch.manual_seed(seed)
    net = ClockworkRNN(3, 2, n_modules, periods=periods).double()
    with torch.no_grad():
        net.bias_h.normal_()
        if garbage:
            lower = 1.0 - net.hidden_mask
            net.weight_hh.add_(lower * torch.randn_like(net.weight_hh))
    return net


@pytest.mark.parametrize("periods", [None, (1, 3, 6), (2, 3, 5)])
@pytest.mark.parametrize("lengths", [None, [10, 6, 1]])
def test_forward_matches_reference(periods, lengths):
    net = make_net(periods=periods)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 10, 3, generator=gen, dtype=torch.float64)
    lens = None if lengths is None else torch.tensor(lengths)
    out, (h, t) = net(x, lens)
    with torch.no_grad():
        ref = reference_cwrnn(net, x, lens)
    for n, (hs, t_ref) in enumerate(ref):
        length = hs.shape[0]
        torch.testing.assert_close(out[n, :length], hs, rtol=1e-12, atol=1e-12)
        assert torch.all(out[n, length:] == 0)
        torch.testing.assert_close(h[n], hs[-1], rtol=1e-12, atol=1e-12)
        assert int(t[n]) == t_ref


@pytest.mark.parametrize("starts", [[2, 2], [1, 4]])
def test_forward_from_state(starts):
    net = make_net(seed=2, n_modules=4)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 9, 3, generator=gen, dtype=torch.float64)
    state = (
        torch.randn(2, 8, generator=gen, dtype=torch.float64),
        torch.tensor(starts),
    )
    out, (h, t) = net(x, torch.tensor([9, 5]), state)
    with torch.no_grad():
        ref = reference_cwrnn(net, x, torch.tensor([9, 5]), state)
    for n, (hs, t_ref) in enumerate(ref):
        torch.testing.assert_close(out[n, : hs.shape[0]], hs, rtol=1e-12, atol=1e-12)
        assert int(t[n]) == t_ref


def test_tanh_is_applied():
    net = make_net(seed=4)
    out, _ = net(100.0 * torch.randn(2, 5, 3, dtype=torch.float64))
    assert out.abs().max() <= 1.0


@pytest.mark.parametrize("periods", [None, (1, 3, 6)])
def test_step_equals_forward_and_padding(periods):
    net = make_net(seed=5, periods=periods)
    x = torch.randn(2, 8, 3, dtype=torch.float64)
    out, (h, t) = net(x)
    state = None
    for s in range(8):
        y, state = net.step(x[:, s], state)
        torch.testing.assert_close(y, out[:, s], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state[0], h, rtol=1e-12, atol=1e-12)
    assert state[1].tolist() == t.tolist() == [8, 8]
    x_noisy = x.clone()
    x_noisy[1, 3:] = 7.0
    out_p, (h_p, _) = net(x_noisy, torch.tensor([8, 3]))
    out_alone, (h_alone, _) = net(x[1:, :3])
    torch.testing.assert_close(out_p[1, :3], out_alone[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h_p[1], h_alone[0], rtol=1e-12, atol=1e-12)


def test_block_structure_preserved_after_optimizer_step():
    net = make_net(seed=6, garbage=False).float()
    lower = net.hidden_mask == 0
    assert torch.all(net.weight_hh[lower] == 0)
    opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9, weight_decay=0.1)
    x = torch.randn(3, 7, 3)
    for _ in range(2):
        out, _ = net(x, torch.tensor([7, 4, 2]))
        opt.zero_grad()
        out.pow(2).sum().backward()
        assert torch.all(net.weight_hh.grad[lower] == 0)
        assert net.weight_hh.grad[~lower].abs().sum() > 0
        opt.step()
    assert torch.all(net.weight_hh[lower] == 0)


@pytest.mark.parametrize("periods", [None, (1, 3)])
def test_gradcheck(periods):
    torch.manual_seed(7)
    net = ClockworkRNN(2, 2, 2, periods=periods).double()
    x = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    lens = torch.tensor([5, 3])
    names = ["weight_xh", "weight_hh", "bias_h"]

    def fn(x, *weights):
        params = dict(zip(names, weights, strict=True))
        out, (h, t) = torch.func.functional_call(net, params, (x, lens))
        return out, h

    weights = [getattr(net, n).detach().clone() for n in names]
    inputs = (x, *[w.requires_grad_(True) for w in weights])
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"module_size": 0}, "module_size must be a positive int, got 0"),
        ({"n_modules": 0}, "n_modules must be a positive int, got 0"),
        ({"periods": (1, 2)}, "one entry per module .n_modules=3., got 2"),
        ({"periods": (1, 4, 2)}, "strictly increasing"),
        ({"periods": (0, 1, 2)}, "periods must be positive ints"),
        ({"periods": 4}, "periods must be a sequence of 3 positive ints, got 4"),
    ],
)
def test_validation(kwargs, match):
    params = {"input_size": 2, "module_size": 2, "n_modules": 3}
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ClockworkRNN(**params)


def test_call_validation():
    net = ClockworkRNN(2, 2, 2)
    with pytest.raises(ValueError, match=r"state h must be a tensor of shape \(1, 4\)"):
        net(torch.zeros(1, 3, 2), state=(torch.zeros(1, 3), 0))
    with pytest.raises(ValueError, match="expected input_size=2"):
        net(torch.zeros(1, 3, 5))


@pytest.mark.parametrize("periods", [None, (2, 3, 5)])
def test_nan_padding_does_not_reach_outputs_or_gradients(periods):
    net = make_net(seed=8, periods=periods)
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(3, 7, 3, generator=gen, dtype=torch.float64)
    lens = torch.tensor([4, 7, 2])
    _assert_nan_padding_inert(net, x, lens, lambda out, s: out.sum() + s[0].sum())
