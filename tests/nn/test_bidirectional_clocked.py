"""Bidirectional MultiScaleLMN, ClockworkRNN and UnrolledRNN.

The reverse direction must read each sequence's valid part backwards, so a
padded batch gives the outputs of every sequence run alone, and the reverse
half of the output equals a unidirectional module with the reverse weights
run on the reversed sequence.
"""

from __future__ import annotations

import pytest
import torch

from sklmn.nn import ClockworkRNN, MultiScaleLMN, UnrolledRNN
from sklmn.nn._padding import reverse_padded

# float64 and a few steps: sums in another order differ by ~1e-15
ATOL = 1e-10


def _make(name, bidirectional=True, seed=0):
    torch.manual_seed(seed)
    if name == "mslmn":
        net = MultiScaleLMN(3, 4, 2, 3, bidirectional=bidirectional)
    elif name == "mslmn_hidden":
        net = MultiScaleLMN(3, 4, 2, 3, output="hidden", bidirectional=bidirectional)
    elif name == "clockwork":
        net = ClockworkRNN(3, 2, 3, bidirectional=bidirectional)
    elif name == "clockwork_periods":  # not nested: the masked update
        net = ClockworkRNN(3, 2, 2, periods=(2, 3), bidirectional=bidirectional)
    else:
        net = UnrolledRNN(3, 4, 2, bidirectional=bidirectional)
    return net.double()


NAMES = ["mslmn", "mslmn_hidden", "clockwork", "clockwork_periods", "unrolled"]


def _unidirectional_copies(net, name):
    """Unidirectional modules holding the forward and the reverse weights."""
    forward, reverse = _make(name, False, seed=1), _make(name, False, seed=2)
    own = {k: v for k, v in net.state_dict().items() if not k.startswith("reverse.")}
    forward.load_state_dict(own)
    reverse.load_state_dict(net.reverse.state_dict())
    return forward, reverse


def _batch(seed=3, lengths=(9, 5, 1, 7)):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor(lengths)
    x = torch.randn(len(lengths), int(lengths.max()), 3, generator=gen)
    x = x.double()
    for i, n in enumerate(lengths.tolist()):
        x[i, n:] = float("nan")  # padding must never matter
    return x, lengths


@pytest.mark.parametrize("name", NAMES)
def test_padded_batch_equals_each_sequence_alone(name):
    net = _make(name)
    x, lengths = _batch()
    x_before = x.clone()
    out, _ = net(x, lengths)
    assert out.shape == (4, 9, net.output_size)
    assert net.output_size == 2 * _make(name, False).output_size
    assert torch.equal(x.isnan(), x_before.isnan())  # input untouched
    assert torch.equal(x.nan_to_num(), x_before.nan_to_num())
    for i, n in enumerate(lengths.tolist()):
        alone, _ = net(x[i : i + 1, :n])
        torch.testing.assert_close(out[i, :n], alone[0], atol=ATOL, rtol=0)
        assert torch.all(out[i, n:] == 0)  # padded steps are zero


@pytest.mark.parametrize("name", NAMES)
def test_halves_equal_unidirectional_modules(name):
    """Forward half = forward weights; reverse half = reverse weights run on
    the reversed sequence, flipped back; final states likewise."""
    net = _make(name)
    forward, reverse = _unidirectional_copies(net, name)
    x, lengths = _batch(seed=4)
    out, state = net(x, lengths)
    half = net.output_size // 2
    for i, n in enumerate(lengths.tolist()):
        seq = x[i : i + 1, :n]
        out_f, state_f = forward(seq)
        out_r, state_r = reverse(seq.flip(1))
        torch.testing.assert_close(out[i, :n, :half], out_f[0], atol=ATOL, rtol=0)
        torch.testing.assert_close(
            out[i, :n, half:], out_r[0].flip(0), atol=ATOL, rtol=0
        )
        if name == "unrolled":  # tapes side by side on the last axis
            final = torch.cat([state_f, state_r], dim=2)[0]
            torch.testing.assert_close(state[i], final, atol=ATOL, rtol=0)
        else:  # (h, [m,] t): h and m concatenated, t the length
            for got, f, r in zip(state[:-1], state_f[:-1], state_r[:-1], strict=True):
                torch.testing.assert_close(
                    got[i], torch.cat([f[0], r[0]]), atol=ATOL, rtol=0
                )
            assert int(state[-1][i]) == n


@pytest.mark.parametrize("name", NAMES)
def test_gradients_finite_and_padding_gets_none(name):
    net = _make(name)
    x, lengths = _batch(seed=5)
    x.requires_grad_(True)
    out, _ = net(x, lengths)
    (out**2).sum().backward()
    for pname, param in net.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), pname
    # the reverse direction is trained too
    assert any(p.grad.abs().sum() > 0 for p in net.reverse.parameters())
    for i, n in enumerate(lengths.tolist()):
        assert torch.isfinite(x.grad[i, :n]).all()
        assert torch.all(x.grad[i, n:] == 0)


@pytest.mark.parametrize("name", ["mslmn", "clockwork", "unrolled"])
def test_gradcheck(name):
    torch.manual_seed(0)
    if name == "mslmn":
        net = MultiScaleLMN(2, 2, 1, 2, bidirectional=True)
    elif name == "clockwork":
        net = ClockworkRNN(2, 1, 2, bidirectional=True)
    else:
        net = UnrolledRNN(2, 2, 2, bidirectional=True)
    net = net.double()
    x = torch.randn(2, 4, 2, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([4, 3])
    assert torch.autograd.gradcheck(lambda x: net(x, lengths)[0], (x,))


@pytest.mark.parametrize("name", ["mslmn", "clockwork", "unrolled"])
def test_step_is_refused_and_unidirectional_step_still_matches(name):
    net = _make(name)
    with pytest.raises(RuntimeError, match="bidirectional"):
        net.step(torch.zeros(1, 3, dtype=torch.float64))
    # the unidirectional module keeps its step API: iterating it = forward
    uni = _make(name, False)
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    out, _ = uni(x)
    state = None
    for t in range(6):
        y, state = uni.step(x[:, t], state)
        torch.testing.assert_close(y, out[:, t], atol=ATOL, rtol=0)


def test_initial_state_and_its_validation():
    net = _make("mslmn")
    x, lengths = _batch(seed=6)
    zeros = (
        torch.zeros(4, 2 * net.hidden_size, dtype=torch.float64),
        torch.zeros(4, 2 * net.total_memory_size, dtype=torch.float64),
    )
    out, _ = net(x, lengths)
    out0, _ = net(x, lengths, state=zeros)
    torch.testing.assert_close(out, out0, atol=0, rtol=0)
    # a non-zero initial memory changes both directions
    m0 = torch.ones_like(zeros[1])
    out1, _ = net(x, lengths, state=(zeros[0], m0, 0))
    assert not torch.allclose(out1[0, 0, :6], out[0, 0, :6])
    assert not torch.allclose(out1[0, 0, 6:], out[0, 0, 6:])
    with pytest.raises(ValueError, match="step counter must be 0"):
        net(x, lengths, state=(*zeros, torch.tensor([0, 1, 0, 0])))
    shape = r"state m must be a tensor of shape \(4, 12\)"
    with pytest.raises(ValueError, match=shape):
        net(x, lengths, state=(zeros[0], zeros[1][:, :6]))
    cw = _make("clockwork")
    with pytest.raises(ValueError, match="step counter must be 0"):
        cw(x, lengths, state=(torch.zeros(4, 12, dtype=torch.float64), 2))
    ur = _make("unrolled")
    with pytest.raises(ValueError, match=r"must have shape \(4, 2, 8\)"):
        ur(x, lengths, state=torch.zeros(4, 2, 4, dtype=torch.float64))


def test_constructor_validation_and_repr():
    for cls, args in (
        (MultiScaleLMN, (2, 3, 2, 2)),
        (ClockworkRNN, (2, 3, 2)),
        (UnrolledRNN, (2, 3, 2)),
    ):
        with pytest.raises(ValueError, match="bidirectional must be a bool, got 1"):
            cls(*args, bidirectional=1)
        assert "bidirectional=True" in repr(cls(*args, bidirectional=True))
        assert cls(*args).reverse is None


def test_penalty_sums_both_directions():
    torch.manual_seed(0)
    net = MultiScaleLMN(
        2, 3, 2, 2, bidirectional=True, orthogonality_penalty=0.5, norm_penalty=0.1
    ).double()
    x = torch.randn(3, 5, 2, dtype=torch.float64)
    lengths = torch.tensor([5, 2, 4])
    _, _, total = net(x, lengths, return_penalty=True)
    *_, again = net.forward_states(x, lengths, return_penalty=True)
    torch.testing.assert_close(again, total, atol=ATOL, rtol=0)
    forward = MultiScaleLMN(2, 3, 2, 2, orthogonality_penalty=0.5, norm_penalty=0.1)
    forward = forward.double()
    own = {k: v for k, v in net.state_dict().items() if not k.startswith("reverse.")}
    forward.load_state_dict(own)
    _, _, penalty_f = forward(x, lengths, return_penalty=True)
    # the reverse direction on the reversed valid parts
    _, _, penalty_r = net.reverse(
        reverse_padded(x, lengths), lengths, return_penalty=True
    )
    torch.testing.assert_close(total, penalty_f + penalty_r, atol=ATOL, rtol=0)


def test_grow_grows_both_directions_and_keeps_the_function():
    net = _make("mslmn")
    x, lengths = _batch(seed=7)
    out, _ = net(x, lengths)
    slices = net.grow_(2)
    assert slices == [slice(6, 8), slice(8, 10)]
    assert net.n_modules == net.reverse.n_modules == 5
    assert net.output_size == 20
    grown, _ = net(x, lengths)
    # output [forward modules, reverse modules]: old columns unchanged, new
    # modules zero (their weights are zero)
    torch.testing.assert_close(grown[..., :6], out[..., :6], atol=ATOL, rtol=0)
    torch.testing.assert_close(grown[..., 10:16], out[..., 6:], atol=ATOL, rtol=0)
    assert torch.all(grown[..., 6:10] == 0) and torch.all(grown[..., 16:] == 0)
    # setting the reverse direction's new module makes it follow its clock
    net.set_module_(3, weight_hm=torch.ones(2, 4), weight_mm=torch.eye(2), direction=1)
    assert torch.equal(net.reverse.weight_mm.detach()[6:8, 6:8], torch.eye(2).double())
    assert torch.all(net.weight_mm.detach()[6:8, 6:8] == 0)
    grown, _ = net(x, lengths)
    assert grown[..., 16:18].abs().sum() > 0
    with pytest.raises(ValueError, match="direction must be 0 or 1, got 2"):
        net.set_module_(0, weight_mm=torch.eye(2), direction=2)
    with pytest.raises(ValueError, match="needs a bidirectional"):
        _make("mslmn", False).set_module_(0, weight_mm=torch.eye(2), direction=1)


def test_reset_parameters_resets_both_directions():
    net = _make("clockwork")
    with torch.no_grad():
        net.reverse.weight_xh.zero_()
        net.weight_xh.zero_()
    net.reset_parameters()
    assert net.weight_xh.abs().sum() > 0 and net.reverse.weight_xh.abs().sum() > 0
