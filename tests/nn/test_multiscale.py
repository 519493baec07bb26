"""Tests of sklmn.nn.MultiScaleLMN against a naive per-module reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sklmn.nn import ClockworkRNN, MultiScaleLMN


def reference_mslmn(net, x, lengths=None, state=None):
    """Plain per-sequence, per-step, per-module loop of Carta et al. 2020a eq. 5-7.

    Reads the *raw* ``weight_mm`` but only its blocks ``i >= k`` (a module
    reads itself and slower modules), so garbage below the block diagonal
    must not matter. Returns (outputs, h_seq, m_seq, final h, final m, final t)
    for each sequence (lists, valid steps only).
    """
    g, n_m, H = net.n_modules, net.memory_size, net.hidden_size
    W_xh, W_mh, b_h = net.weight_xh, net.weight_mh, net.bias_h
    W_hm, W_mm = net.weight_hm, net.weight_mm

    def blk(k):
        return slice(k * n_m, (k + 1) * n_m)

    results = []
    for n in range(x.shape[0]):
        length = x.shape[1] if lengths is None else int(lengths[n])
        if state is None:
            h = x.new_zeros(H)
            mods = [x.new_zeros(n_m) for _ in range(g)]
            t = 0
        else:
            h = state[0][n]
            mods = [state[1][n, blk(k)] for k in range(g)]
            t = int(state[2][n])
        hs, ms = [], []
        for s in range(length):
            pre = W_xh @ x[n, s] + b_h
            for k in range(g):
                pre = pre + W_mh[:, blk(k)] @ mods[k]
            h = torch.tanh(pre)
            new = []
            for k in range(g):
                if t % 2**k == 0:
                    v = W_hm[blk(k)] @ h
                    for i in range(k, g):
                        v = v + W_mm[blk(k), blk(i)] @ mods[i]
                    new.append(v)
                else:
                    new.append(mods[k])
            mods = new
            t += 1
            hs.append(h)
            ms.append(torch.cat(mods))
        results.append((torch.stack(hs), torch.stack(ms), h, torch.cat(mods), t))
    return results


def make_net(seed=0, dtype=torch.float64, garbage=True, **kwargs):
    torch.manual_seed(seed)
    params = {"input_size": 3, "hidden_size": 5, "memory_size": 2, "n_modules": 3}
    params.update(kwargs)
    net = MultiScaleLMN(**params).to(dtype)
    if garbage:
        # Non-zero values below the block diagonal must be ignored.
        with torch.no_grad():
            lower = 1.0 - net.memory_mask
            net.weight_mm.add_(lower * torch.randn_like(net.weight_mm))
    return net


@pytest.mark.parametrize("output", ["memory", "hidden"])
@pytest.mark.parametrize("lengths", [None, [9, 4, 1]])
@pytest.mark.parametrize("truncate_gradient", [False, True])
def test_forward_matches_reference(output, lengths, truncate_gradient):
    net = make_net(output=output, truncate_gradient=truncate_gradient)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 9, 3, generator=gen, dtype=torch.float64)
    lens = None if lengths is None else torch.tensor(lengths)
    out, (h, m, t) = net(x, lengths=lens)
    assert out.shape == (3, 9, net.output_size)
    with torch.no_grad():
        ref = reference_mslmn(net, x, lens)
    for n, (hs, ms, h_ref, m_ref, t_ref) in enumerate(ref):
        length = hs.shape[0]
        expected = ms if output == "memory" else hs
        torch.testing.assert_close(out[n, :length], expected, rtol=1e-12, atol=1e-12)
        assert torch.all(out[n, length:] == 0)
        torch.testing.assert_close(h[n], h_ref, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(m[n], m_ref, rtol=1e-12, atol=1e-12)
        assert int(t[n]) == t_ref


@pytest.mark.parametrize("starts", [[3, 3, 3], [0, 5, 2], [6, 1, 4]])
def test_forward_from_state_keeps_clock(starts):
    # Uniform start uses the sliced active-prefix path, mixed starts the
    # per-sequence masked path: both must equal the reference.
    net = make_net(seed=2, n_modules=4)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(3, 7, 3, generator=gen, dtype=torch.float64)
    state = (
        torch.randn(3, 5, generator=gen, dtype=torch.float64),
        torch.randn(3, 8, generator=gen, dtype=torch.float64),
        torch.tensor(starts),
    )
    lens = torch.tensor([7, 3, 5])
    out, (h, m, t) = net(x, lengths=lens, state=state)
    with torch.no_grad():
        ref = reference_mslmn(net, x, lens, state)
    for n, (_, ms, h_ref, m_ref, t_ref) in enumerate(ref):
        torch.testing.assert_close(out[n, : ms.shape[0]], ms, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(m[n], m_ref, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(h[n], h_ref, rtol=1e-12, atol=1e-12)
        assert int(t[n]) == t_ref


@pytest.mark.parametrize("truncate_gradient", [False, True])
@pytest.mark.parametrize("lengths", [None, [12, 9, 9, 2]])
def test_sliced_prefix_equals_masked_update(truncate_gradient, lengths):
    # The sliced active-prefix kernel (hand-written backward) against a full
    # update of every module followed by a per-unit selection (autograd).
    net = make_net(seed=4, n_modules=4, hidden_size=6)
    net.truncate_gradient = truncate_gradient
    gen = torch.Generator().manual_seed(5)
    T, N, M = 12, 4, 8
    xp = torch.randn(T, N, 6, generator=gen, dtype=torch.float64)
    m0 = torch.randn(N, M, generator=gen, dtype=torch.float64)
    W_mm = net.masked_weight_mm().detach()
    steps = torch.arange(T).expand(N, T)
    active = (steps.unsqueeze(-1) % torch.tensor([1, 2, 4, 8])) == 0
    batch_sizes = None
    if lengths is not None:  # sorted by decreasing length
        active &= (steps < torch.tensor(lengths).unsqueeze(1)).unsqueeze(-1)
        batch_sizes = [sum(length > t for length in lengths) for t in range(T)]
    active = active.repeat_interleave(2, dim=2).transpose(0, 1)
    w_h = torch.randn(T, N, 6, generator=gen, dtype=torch.float64)
    w_m = torch.randn(T, N, M, generator=gen, dtype=torch.float64)
    results = []
    for run in ("prefix", "masked"):
        inputs = [t.clone().requires_grad_(True) for t in (xp, m0, W_mm)]
        weights = [net.weight_mh, net.weight_hm]
        for w in weights:
            w.grad = None
        if run == "prefix":
            hs, ms = net._run_prefix(*inputs, 0, batch_sizes)
        else:
            hs, ms = net._run_masked(*inputs, active)
            hs, ms = torch.stack(hs), torch.stack(ms)
        if lengths is not None:  # hidden states of finished sequences unused
            hs = hs * active[..., :1]
        (w_h * hs).sum().add((w_m * ms).sum()).backward()
        grads = [t.grad for t in inputs] + [w.grad.clone() for w in weights]
        results.append((hs.detach(), ms.detach(), grads))
    (hs_p, ms_p, g_p), (hs_m, ms_m, g_m) = results
    torch.testing.assert_close(hs_p, hs_m, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ms_p, ms_m, rtol=1e-12, atol=1e-12)
    for a, b in zip(g_p, g_m, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_module_k_updates_only_on_its_clock():
    net = make_net(seed=6, n_modules=3)
    x = torch.randn(1, 9, 3, dtype=torch.float64)
    _, m_seq, _ = net.forward_states(x)
    m_seq = m_seq[0].detach()
    for k in range(3):
        block = m_seq[:, net.module_slice(k)]
        for t in range(1, 9):
            if t % 2**k != 0:  # carried: the state is copied, bit for bit
                assert torch.equal(block[t], block[t - 1])
            else:  # recomputed: a real change (>= 0.05 here), not a rounding
                assert not torch.allclose(block[t], block[t - 1], rtol=0, atol=1e-3)


def test_lower_blocks_have_zero_gradient_and_stay_zero_after_step():
    net = make_net(seed=7, dtype=torch.float32, garbage=False, n_modules=4)
    lower = net.memory_mask == 0
    assert torch.all(net.weight_mm[lower] == 0)
    opt = torch.optim.AdamW(net.parameters(), lr=0.1, weight_decay=0.1)
    x = torch.randn(4, 10, 3)
    for _ in range(2):
        out, _, penalty = net(
            x, lengths=torch.tensor([10, 7, 3, 1]), return_penalty=True
        )
        loss = out.pow(2).sum() + penalty
        opt.zero_grad()
        loss.backward()
        assert torch.all(net.weight_mm.grad[lower] == 0)
        assert net.weight_mm.grad[~lower].abs().sum() > 0
        opt.step()
    assert torch.all(net.weight_mm[lower] == 0)


def test_padding_equals_running_each_sequence_alone():
    net = make_net(seed=8)
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(3, 8, 3, generator=gen, dtype=torch.float64)
    lens = torch.tensor([8, 5, 2])
    x_noisy = x.clone()
    for n, length in enumerate(lens.tolist()):
        x_noisy[n, length:] = 1e3  # padded content must not matter
    out, (h, m, t) = net(x_noisy, lengths=lens)
    for n, length in enumerate(lens.tolist()):
        out_n, (h_n, m_n, t_n) = net(x[n : n + 1, :length])
        torch.testing.assert_close(out[n, :length], out_n[0], rtol=1e-12, atol=1e-12)
        assert torch.all(out[n, length:] == 0)
        torch.testing.assert_close(m[n], m_n[0], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(h[n], h_n[0], rtol=1e-12, atol=1e-12)
        assert int(t[n]) == int(t_n[0]) == length


@pytest.mark.parametrize("output", ["memory", "hidden"])
def test_step_equals_forward(output):
    net = make_net(seed=10, output=output)
    x = torch.randn(2, 9, 3, dtype=torch.float64)
    out, (h, m, t) = net(x)
    state = None
    for s in range(9):
        y, state = net.step(x[:, s], state)
        torch.testing.assert_close(y, out[:, s], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state[0], h, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state[1], m, rtol=1e-12, atol=1e-12)
    assert state[2].tolist() == t.tolist() == [9, 9]
    # continuing a forward from a state equals one long forward
    out1, state1 = net(x[:, :5])
    out2, state2 = net(x[:, 5:], state=state1)
    torch.testing.assert_close(torch.cat([out1, out2], 1), out, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_new", [1, 2])
def test_grow_preserves_function_then_new_module_follows_its_clock(n_new):
    net = make_net(seed=11, n_modules=2)
    gen = torch.Generator().manual_seed(12)
    x = torch.randn(3, 11, 3, generator=gen, dtype=torch.float64)
    lens = torch.tensor([11, 6, 3])
    h_old, m_old, _ = net.forward_states(x, lens)
    slices = net.grow_(n_new)
    assert slices == [net.module_slice(k) for k in range(2, 2 + n_new)]
    assert net.n_modules == 2 + n_new
    assert net.output_size == (2 + n_new) * 2
    assert net.periods == tuple(2**k for k in range(2 + n_new))
    h_new, m_new, _ = net.forward_states(x, lens)
    # The grown products read zero columns (other shapes, other summation
    # order in the BLAS): equal up to float64 rounding, not bit for bit.
    torch.testing.assert_close(h_new, h_old, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(m_new[..., :4], m_old, rtol=1e-12, atol=1e-12)
    assert torch.all(m_new[..., 4:] == 0)  # zero weights: exactly zero
    # Give the new module a LAES-like (A, B) and check against the reference.
    A = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    B = torch.randn(2, 2, generator=gen, dtype=torch.float64)
    net.set_module_(2, weight_hm=A, weight_mm=B)
    assert torch.equal(net.weight_hm[slices[0]], A)
    assert torch.equal(net.weight_mm[slices[0], slices[0]], B)
    # the other new weights are still zero
    assert torch.all(net.weight_mh[:, 4:] == 0)
    assert torch.all(net.weight_mm[:4, 4:] == 0)
    out, _ = net(x, lens)
    with torch.no_grad():
        ref = reference_mslmn(net, x, lens)
    for n, (_, ms, *_rest) in enumerate(ref):
        torch.testing.assert_close(out[n, : ms.shape[0]], ms, rtol=1e-12, atol=1e-12)
    # new Parameters are trainable
    out.sum().backward()
    assert net.weight_hm.grad.shape == (4 + 2 * n_new, 5)


@pytest.mark.parametrize("output", ["memory", "hidden"])
@pytest.mark.parametrize("starts", [None, [0, 3]])
def test_gradcheck(output, starts):
    net = make_net(seed=13, hidden_size=3, output=output, norm_penalty=0.3)
    net.orthogonality_penalty = 0.2
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    m0 = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    lens = torch.tensor([5, 3])
    names = ["weight_xh", "weight_mh", "bias_h", "weight_hm", "weight_mm"]
    t0 = torch.tensor([0, 0] if starts is None else starts)

    def fn(x, m0, *weights):
        params = dict(zip(names, weights, strict=True))
        state = (torch.zeros(2, 3, dtype=torch.float64), m0, t0)
        out, (h, m, t), penalty = torch.func.functional_call(
            net, params, (x, lens, state), {"return_penalty": True}
        )
        return out, h, m, penalty

    weights = [getattr(net, name).detach().clone() for name in names]
    inputs = (x, m0, *[w.requires_grad_(True) for w in weights])
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6)


def test_penalties_match_formulas():
    net = make_net(seed=14, garbage=False, orthogonality_penalty=0.5, norm_penalty=2.0)
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    lens = torch.tensor([6, 4])
    _, m_seq, _, penalty = net.forward_states(x, lens, return_penalty=True)
    m_seq = m_seq.detach()
    W = net.weight_mm * net.memory_mask
    ortho = 0.5 * ((W.T @ W - torch.eye(6, dtype=torch.float64)) ** 2).sum()
    stab = []
    for n, length in enumerate(lens.tolist()):
        norms = [0.0] + [float(m_seq[n, s].norm()) for s in range(length)]
        stab.append(
            sum((b - a) ** 2 for a, b in zip(norms[:-1], norms[1:], strict=True))
            / length
        )
    expected = ortho + 2.0 * sum(stab) / 2
    torch.testing.assert_close(penalty, expected, rtol=1e-10, atol=1e-12)
    _, _, from_forward = net(x, lens, return_penalty=True)
    torch.testing.assert_close(from_forward, expected, rtol=1e-10, atol=1e-12)
    plain = make_net(seed=14)
    _, _, zero = plain(x, return_penalty=True)
    assert zero.item() == 0.0 and zero.dtype == torch.float64


def test_truncate_gradient_cuts_h_from_memory():
    net = make_net(seed=15, output="hidden", truncate_gradient=True)
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    out, _ = net(x)
    out.sum().backward()
    # h never receives gradient through m_{t-1}, so the memory weights get none
    assert net.weight_hm.grad is None or torch.all(net.weight_hm.grad == 0)
    full = make_net(seed=15, output="hidden")
    out_full, _ = full(x)
    torch.testing.assert_close(out_full, out, rtol=0, atol=0)
    out_full.sum().backward()
    assert full.weight_hm.grad.abs().sum() > 0


def test_float32_default_and_double():
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 4, 3, 2)
    assert net.weight_mm.dtype == torch.float32
    out, _ = net(torch.randn(1, 3, 2))
    assert out.dtype == torch.float32
    out64, _ = net.double()(torch.randn(1, 3, 2, dtype=torch.float64))
    assert out64.dtype == torch.float64
    assert net.memory_mask.dtype == torch.float64


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"hidden_size": 0}, "hidden_size must be a positive int, got 0"),
        ({"memory_size": 1.5}, "memory_size must be a positive int.*got 1.5"),
        ({"memory_size": (2, 0)}, r"sequence of 2 positive ints .*got \(2, 0\)"),
        ({"memory_size": (2, 2, 2)}, r"sequence of 2 positive ints"),
        ({"n_modules": -1}, "n_modules must be a positive int, got -1"),
        ({"output": "both"}, "output must be one of .* got 'both'"),
        ({"memory_matrix": "orthogonal"}, "memory_matrix must be one of"),
        ({"norm_penalty": -1.0}, "norm_penalty must be a finite float >= 0"),
        ({"truncate_gradient": 1}, "truncate_gradient must be a bool, got 1"),
    ],
)
def test_constructor_validation(kwargs, match):
    params = {"input_size": 2, "hidden_size": 3, "memory_size": 2, "n_modules": 2}
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        MultiScaleLMN(**params)


def test_call_validation():
    net = MultiScaleLMN(2, 3, 2, 2)
    x = torch.zeros(2, 4, 2)
    with pytest.raises(ValueError, match="expected input_size=2"):
        net(torch.zeros(2, 4, 3))
    with pytest.raises(ValueError, match="lengths must be in 1..4"):
        net(x, lengths=torch.tensor([5, 1]))
    with pytest.raises(ValueError, match=r"state m must be a tensor of shape \(2, 4\)"):
        net(x, state=(torch.zeros(2, 3), torch.zeros(2, 3), 0))
    with pytest.raises(ValueError, match="step counter must be >= 0"):
        net(x, state=(torch.zeros(2, 3), torch.zeros(2, 4), torch.tensor([0, -1])))
    with pytest.raises(ValueError, match="state must be a tuple"):
        net(x, state=torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"x_t must have shape \(N, 2\)"):
        net.step(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="module index must be an int in 0..1, got 2"):
        net.module_slice(2)
    with pytest.raises(
        ValueError, match=r"weight_hm block of module 0 must have shape"
    ):
        net.set_module_(0, weight_hm=torch.zeros(3, 3))
    with pytest.raises(ValueError, match="n_new must be a positive int, got 0"):
        net.grow_(0)


@pytest.mark.parametrize("starts", [None, [0, 3, 1]])
def test_nan_padding_does_not_reach_outputs_or_gradients(starts):
    net = make_net(seed=16, norm_penalty=0.1)
    gen = torch.Generator().manual_seed(17)
    x = torch.randn(3, 7, 3, generator=gen, dtype=torch.float64)
    lens = torch.tensor([4, 7, 2])
    state = None
    if starts is not None:
        h0 = torch.zeros(3, 5, dtype=torch.float64)
        state = (h0, torch.zeros(3, 6, dtype=torch.float64), torch.tensor(starts))
    results = []
    for pad in (0.0, float("nan")):
        xp = x.clone()
        for n, length in enumerate(lens.tolist()):
            xp[n, length:] = pad
        net.zero_grad()
        out, (h, m, _), penalty = net(xp, lens, state, return_penalty=True)
        (out.sum() + h.sum() + m.sum() + penalty).backward()
        grads = [p.grad.clone() for p in net.parameters()]
        results.append((out, grads))
    (out0, grads0), (out1, grads1) = results
    assert torch.isfinite(out1).all()
    torch.testing.assert_close(out1, out0, rtol=0, atol=0)
    for g0, g1 in zip(grads0, grads1, strict=True):
        assert torch.isfinite(g1).all()
        torch.testing.assert_close(g1, g0, rtol=1e-12, atol=1e-12)


def test_spectral_memory_matrix():
    net = make_net(seed=18, memory_matrix="spectral")
    with torch.no_grad():
        net.weight_mm.mul_(3.0)  # spectral radius > 1: the latch closes
    gen = torch.Generator().manual_seed(19)
    x = torch.randn(2, 6, 3, generator=gen, dtype=torch.float64)
    lens = torch.tensor([6, 4])
    out, _ = net(x, lens)
    assert bool(net.memory_normalization.latched)
    W_eff = net.masked_weight_mm().detach()
    assert torch.all(W_eff[net.memory_mask == 0] == 0)
    rho = torch.linalg.eigvals(W_eff).abs().max()
    assert rho < 1.0
    # the block-triangular spectral radius is the largest diagonal-block one
    raw = net.weight_mm.detach() * net.memory_mask
    rho_blocks = max(
        torch.linalg.eigvals(raw[net.module_slice(k), net.module_slice(k)]).abs().max()
        for k in range(3)
    )
    torch.testing.assert_close(rho, rho_blocks / (rho_blocks + 1e-3))
    # the forward uses the normalized matrix
    plain = make_net(seed=18, garbage=False)
    with torch.no_grad():
        for name in ["weight_xh", "weight_mh", "bias_h", "weight_hm"]:
            getattr(plain, name).copy_(getattr(net, name))
        plain.weight_mm.copy_(W_eff)
    torch.testing.assert_close(plain(x, lens)[0], out, rtol=1e-12, atol=1e-12)
    # masked blocks get no gradient, growth keeps the function
    out.sum().backward()
    assert torch.all(net.weight_mm.grad[net.memory_mask == 0] == 0)
    net.grow_()
    torch.testing.assert_close(net(x, lens)[0][..., :6], out, rtol=1e-12, atol=1e-12)
    # setting a LAES block restarts the latch rule
    net.set_module_(3, weight_mm=0.5 * torch.eye(2, dtype=torch.float64))
    assert not bool(net.memory_normalization.latched)


@pytest.mark.parametrize("reset", ["init_from_laes_", "reset_parameters"])
def test_spectral_latch_reopens_on_laes_start_and_reset(reset):
    # A latched 'spectral' memory divided the LAES matrices of init_from_laes_
    # (and the fresh draw of reset_parameters) by their spectral radius: the
    # assigned memory matrix must be used as it is, as the LMN's is.
    net = make_net(seed=21, memory_matrix="spectral", garbage=False)
    with torch.no_grad():
        net.weight_mm.mul_(3.0)
    net.train()(torch.randn(1, 4, 3, dtype=torch.float64))
    assert bool(net.memory_normalization.latched)
    if reset == "init_from_laes_":
        B = [0.5 * torch.eye(2, dtype=torch.float64)] * 3
        net.init_from_laes_([torch.ones(2, 3, dtype=torch.float64)] * 3, B)
        expected = torch.block_diag(*B)
    else:
        net.reset_parameters()
        expected = net.weight_mm.detach() * net.memory_mask
    assert not bool(net.memory_normalization.latched)
    torch.testing.assert_close(
        net.masked_weight_mm().detach(), expected, rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("module", ["multiscale", "clockwork"])
def test_step_counter_types(module):
    # a bool mask was read as steps 0/1, and a NumPy integer (what a
    # computation over a NumPy array gives) was refused as "not an int"
    torch.manual_seed(0)
    if module == "multiscale":
        net = MultiScaleLMN(2, 3, 2, 2)
        state = (torch.zeros(2, 3), torch.randn(2, 4))
    else:
        net = ClockworkRNN(2, 2, 2)
        state = (torch.randn(2, 4),)
    x = torch.randn(2, 4, 2)
    with pytest.raises(ValueError, match="step counter must be an int"):
        net(x, state=(*state, torch.tensor([True, False])))
    with pytest.raises(ValueError, match="step counter must be an int"):
        net.step(x[:, 0], (*state, torch.tensor([1.0, 0.0])))
    out_np = net(x, state=(*state, np.int64(3)))[0]
    out_int = net(x, state=(*state, 3))[0]
    torch.testing.assert_close(out_np, out_int, rtol=0, atol=0)
