"""Tests of UnrolledRNN, TapeReadout and init_lmn_from_unrolled_."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sklmn.nn import (
    LMN,
    LMNLayer,
    TapeReadout,
    UnrolledRNN,
    init_lmn_from_unrolled_,
)


def reference_urnn(urnn, x, lengths=None, tape0=None):
    """Naive loop of Carta et al. 2021 eq. 11 with a list of past hidden states."""
    H, k = urnn.hidden_size, urnn.tape_length
    results = []
    for n in range(x.shape[0]):
        length = x.shape[1] if lengths is None else int(lengths[n])
        # past[j] = h_{t-1-j}; before the start: the initial tape (or zeros)
        past = [x.new_zeros(H) for _ in range(k)] if tape0 is None else list(tape0[n])
        hs = []
        for s in range(length):
            pre = urnn.weight_xh @ x[n, s] + urnn.bias_h
            for i in range(1, k + 1):
                pre = pre + urnn.weight_hh[i - 1] @ past[i - 1]
            h = torch.tanh(pre)
            past = [h] + past[:-1]
            hs.append(h)
        results.append((torch.stack(hs), torch.stack(past)))
    return results


def reference_readout(readout, h, lengths):
    """Naive y_t = sum_{i=0..k} W'_i h_{t-i} + b with zeros before the start."""
    y = torch.zeros(h.shape[0], h.shape[1], readout.out_features, dtype=h.dtype)
    for n in range(h.shape[0]):
        for t in range(int(lengths[n])):
            acc = readout.bias.clone()
            for i in range(readout.tape_length + 1):
                if t - i >= 0:
                    acc = acc + readout.weight[i] @ h[n, t - i]
            y[n, t] = acc
    return y


def make_urnn(seed=0, k=3, H=4, d=2):
    torch.manual_seed(seed)
    return UnrolledRNN(d, H, k).double()


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("lengths", [None, [7, 2, 5]])
@pytest.mark.parametrize("with_state", [False, True])
def test_urnn_matches_reference(k, lengths, with_state):
    urnn = make_urnn(k=k)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 7, 2, generator=gen, dtype=torch.float64)
    tape0 = torch.randn(3, k, 4, generator=gen, dtype=torch.float64)
    tape0 = tape0 if with_state else None
    lens = None if lengths is None else torch.tensor(lengths)
    out, tape = urnn(x, lens, tape0)
    with torch.no_grad():
        ref = reference_urnn(urnn, x, lens, tape0)
    for n, (hs, tape_ref) in enumerate(ref):
        length = hs.shape[0]
        torch.testing.assert_close(out[n, :length], hs, rtol=1e-12, atol=1e-12)
        assert torch.all(out[n, length:] == 0)
        torch.testing.assert_close(tape[n], tape_ref, rtol=1e-12, atol=1e-12)


def test_urnn_padding_equals_running_alone_and_step_equals_forward():
    urnn = make_urnn(seed=2)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 2, generator=gen, dtype=torch.float64)
    lens = torch.tensor([6, 4])
    x_noisy = x.clone()
    x_noisy[1, 4:] = 50.0
    out, tape = urnn(x_noisy, lens)
    out_alone, tape_alone = urnn(x[1:, :4])
    torch.testing.assert_close(out[1, :4], out_alone[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(tape[1], tape_alone[0], rtol=1e-12, atol=1e-12)
    full, full_tape = urnn(x)
    state = None
    for s in range(6):
        h, state = urnn.step(x[:, s], state)
        torch.testing.assert_close(h, full[:, s], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(state, full_tape, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [1, 4])
def test_tape_readout_matches_reference(k):
    torch.manual_seed(4)
    readout = TapeReadout(3, 2, k).double()
    with torch.no_grad():
        readout.bias.normal_()
    h = torch.randn(3, 6, 3, dtype=torch.float64)
    lens = torch.tensor([6, 3, 1])
    y = readout(h, lens)
    with torch.no_grad():
        expected = reference_readout(readout, h, lens)
    torch.testing.assert_close(y, expected, rtol=1e-12, atol=1e-12)


def test_gradcheck():
    urnn = make_urnn(seed=5, k=2, H=3)
    torch.manual_seed(5)
    readout = TapeReadout(3, 2, 2).double()
    x = torch.randn(2, 4, 2, dtype=torch.float64, requires_grad=True)
    lens = torch.tensor([4, 2])
    u_names = ["weight_xh", "weight_hh", "bias_h"]
    r_names = ["weight", "bias"]

    def fn(x, *weights):
        u_params = dict(zip(u_names, weights[:3], strict=True))
        r_params = dict(zip(r_names, weights[3:], strict=True))
        h, tape = torch.func.functional_call(urnn, u_params, (x, lens))
        y = torch.func.functional_call(readout, r_params, (h, lens))
        return y, tape

    weights = [getattr(urnn, n).detach().clone() for n in u_names]
    weights += [getattr(readout, n).detach().clone() for n in r_names]
    inputs = (x, *[w.requires_grad_(True) for w in weights])
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6)


def exact_laes(h_seqs):
    """Exact LAES of hidden sequences (Carta et al. 2021 §2.3): explicit Xi, SVD.

    Xi has one row per time step, ``[h_t, h_{t-1}, ..., h_0, 0, ...]`` (newest
    first, zero padded to L * H columns); with Xi = V S U^T,
    ``A = U[:H].T`` and ``B = U[H:].T @ U[:-H]``.
    """
    H = h_seqs[0].shape[1]
    L = max(len(h) for h in h_seqs)
    rows = []
    for h in h_seqs:
        for t in range(len(h)):
            row = np.zeros(L * H)
            row[: (t + 1) * H] = h[t::-1].reshape(-1)
            rows.append(row)
    xi = np.asarray(rows)
    _, s, vt = np.linalg.svd(xi, full_matrices=False)
    p = int((s > s[0] * 1e-10).sum())
    U = vt[:p].T
    return U[:H].T, U[H:].T @ U[:-H]


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("as_layer", [False, True])
def test_lmn_from_unrolled_equals_urnn(k, as_layer):
    d, H, n_out = 2, 3, 2
    torch.manual_seed(6)
    urnn = UnrolledRNN(d, H, k).double()
    readout = TapeReadout(H, n_out, k).double()
    with torch.no_grad():
        urnn.bias_h.normal_(0, 0.5)
        readout.bias.normal_()
        urnn.weight_hh.mul_(3.0)  # make the tape matter
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(3, 6, d, generator=gen, dtype=torch.float64)
    lens = torch.tensor([6, 4, 3])
    with torch.no_grad():
        h_urnn, _ = urnn(x, lens)
        y_urnn = readout(h_urnn, lens)
    h_seqs = [h_urnn[n, :length].numpy() for n, length in enumerate(lens.tolist())]
    A, B = exact_laes(h_seqs)
    p = A.shape[0]
    assert p > H  # a non-trivial memory

    def build(output):
        if as_layer:
            net = LMNLayer(d, H, p, output=output).double()
        else:
            net = LMN(d, H, p, output=output).double()
        return net, init_lmn_from_unrolled_(net, urnn, readout, A, B)

    lmn_h, _ = build("hidden")
    lmn_m, (W_mo, b_mo) = build("memory")
    with torch.no_grad():
        h_lmn, _ = lmn_h(x, lens)
        m_lmn, _ = lmn_m(x, lens)
        y_lmn = m_lmn @ W_mo.T + b_mo
    mask = (torch.arange(6) < lens.unsqueeze(1)).unsqueeze(-1)
    torch.testing.assert_close(h_lmn, h_urnn, rtol=1e-5, atol=1e-8)
    torch.testing.assert_close(y_lmn * mask, y_urnn, rtol=1e-5, atol=1e-8)
    layer = lmn_m if as_layer else lmn_m.layers[0]
    torch.testing.assert_close(layer.weight_hm, torch.as_tensor(A))
    torch.testing.assert_close(layer.weight_mm, torch.as_tensor(B))
    torch.testing.assert_close(layer.weight_xh, urnn.weight_xh)
    assert W_mo.shape == (n_out, p) and W_mo.dtype == torch.float64


def test_lmn_from_unrolled_matches_formula_and_casts():
    torch.manual_seed(8)
    urnn, readout = UnrolledRNN(2, 3, 2), TapeReadout(3, 1, 2)
    lmn = LMN(2, 3, 4)
    A = torch.randn(4, 3, dtype=torch.float64)
    B = torch.randn(4, 4, dtype=torch.float64)
    W_mo, b_mo = init_lmn_from_unrolled_(lmn, urnn, readout, A, B)
    W1, W2 = urnn.weight_hh.detach().double()
    expected_mh = W1 @ A.T + W2 @ A.T @ B.T
    Wo = readout.weight.detach().double()
    expected_mo = Wo[0] @ A.T + Wo[1] @ A.T @ B.T + Wo[2] @ A.T @ B.T @ B.T
    layer = lmn.layers[0]
    assert layer.weight_mh.dtype == torch.float32
    torch.testing.assert_close(
        layer.weight_mh, expected_mh.float(), rtol=1e-6, atol=1e-6
    )
    torch.testing.assert_close(W_mo, expected_mo.float(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(b_mo, readout.bias.detach())


@pytest.mark.parametrize(
    "cls, args, match",
    [
        (UnrolledRNN, (2, 3, 0), "tape_length must be a positive int, got 0"),
        (UnrolledRNN, (0, 3, 1), "input_size must be a positive int, got 0"),
        (TapeReadout, (3, 0, 1), "out_features must be a positive int, got 0"),
        (TapeReadout, (3, 1, 2.0), "tape_length must be a positive int, got 2.0"),
    ],
)
def test_constructor_validation(cls, args, match):
    with pytest.raises(ValueError, match=match):
        cls(*args)


def test_call_and_init_validation():
    urnn, readout = UnrolledRNN(2, 3, 2), TapeReadout(3, 1, 2)
    with pytest.raises(ValueError, match=r"state \(the tape\) must have shape"):
        urnn(torch.zeros(1, 4, 2), state=torch.zeros(1, 3, 3))
    with pytest.raises(ValueError, match="expected hidden_size=3"):
        readout(torch.zeros(1, 4, 2))
    A, B = torch.zeros(4, 3), torch.zeros(4, 4)
    with pytest.raises(ValueError, match="single-layer unidirectional LMN"):
        init_lmn_from_unrolled_(LMN(2, 3, 4, num_layers=2), urnn, readout, A, B)
    with pytest.raises(
        ValueError, match=r"A must have shape .* \(4, 3\), got \(4, 2\)"
    ):
        init_lmn_from_unrolled_(LMN(2, 3, 4), urnn, readout, torch.zeros(4, 2), B)
    with pytest.raises(ValueError, match=r"B must have shape \(4, 4\), got \(3, 3\)"):
        init_lmn_from_unrolled_(LMN(2, 3, 4), urnn, readout, A, torch.zeros(3, 3))
    with pytest.raises(ValueError, match="readout must match the URNN"):
        init_lmn_from_unrolled_(LMN(2, 3, 4), urnn, TapeReadout(3, 1, 1), A, B)
    with pytest.raises(ValueError, match="hidden_size=3 like the URNN"):
        init_lmn_from_unrolled_(LMN(2, 5, 4), urnn, readout, A, B)
    with pytest.raises(ValueError, match="orthogonal memory_matrix"):
        lmn = LMN(2, 3, 4, memory_matrix="orthogonal")
        init_lmn_from_unrolled_(lmn, urnn, readout, A, B)


def test_nan_padding_does_not_reach_outputs_or_gradients():
    urnn = make_urnn(seed=9)
    torch.manual_seed(9)
    readout = TapeReadout(4, 2, 2).double()
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(3, 6, 2, generator=gen, dtype=torch.float64)
    lens = torch.tensor([6, 2, 4])
    results = []
    for pad in (0.0, float("nan")):
        xp = x.clone()
        for n, length in enumerate(lens.tolist()):
            xp[n, length:] = pad
        urnn.zero_grad()
        readout.zero_grad()
        h, tape = urnn(xp, lens)
        h_raw = h + torch.where(xp[..., :1].isnan(), float("nan"), 0.0)
        y = readout(h_raw, lens)  # NaN on padded hidden steps
        (y.sum() + tape.sum()).backward()
        params = list(urnn.parameters()) + list(readout.parameters())
        results.append((y, [p.grad.clone() for p in params]))
    (y0, grads0), (y1, grads1) = results
    torch.testing.assert_close(y1, y0, rtol=0, atol=0)
    for g0, g1 in zip(grads0, grads1, strict=True):
        assert torch.isfinite(g1).all()
        torch.testing.assert_close(g1, g0, rtol=1e-12, atol=1e-12)


def test_tape_readout_messages_name_its_argument():
    # the messages named "x" and "input_size", which TapeReadout has not
    readout = TapeReadout(4, out_features=2, tape_length=3)
    with pytest.raises(ValueError, match=r"^h has 3 features .* hidden_size=4$"):
        readout(torch.zeros(5, 7, 3))
    with pytest.raises(ValueError, match=r"^h must have shape \(N, T, hidden_size\)"):
        readout(torch.zeros(7, 4))
