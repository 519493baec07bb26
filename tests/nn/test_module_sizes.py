"""Multi-scale LMN modules of different sizes (``memory_size`` a tuple)."""

import warnings

import numpy as np
import pytest
import torch

from sklmn.nn import MultiScaleLMN
from sklmn.nn._clock import block_upper_mask, check_module_sizes
from sklmn.nn._stable_memory import SchurMemory, module_bounds, real_schur

SIZES = (4, 2, 3)


def reference_forward(net, x):
    """The recurrence written out step by step (float64, one sequence at a
    time, every module updated on its own clock)."""
    W_xh, W_mh = net.weight_xh.detach(), net.weight_mh.detach()
    W_hm, b_h = net.weight_hm.detach(), net.bias_h.detach()
    W_mm = net.masked_weight_mm().detach()
    starts = np.cumsum((0, *net.memory_sizes))
    outputs = []
    for seq in x:
        m = torch.zeros(net.total_memory_size, dtype=x.dtype)
        states = []
        for t, x_t in enumerate(seq):
            h = torch.tanh(W_xh @ x_t + W_mh @ m + b_h)
            m_new = m.clone()
            for k in range(net.n_modules):
                if t % 2**k == 0:
                    rows = slice(int(starts[k]), int(starts[k + 1]))
                    m_new[rows] = W_hm[rows] @ h + W_mm[rows] @ m
            m = m_new
            states.append(m)
        outputs.append(torch.stack(states))
    return torch.stack(outputs)


@pytest.mark.parametrize("memory_matrix", ["free", "schur", "spectral"])
def test_forward_matches_the_written_out_recurrence(memory_matrix):
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 5, SIZES, 3, memory_matrix=memory_matrix).double()
    if memory_matrix != "schur":  # off-diagonal blocks and feedback too
        with torch.no_grad():
            net.weight_mm.add_(0.1 * torch.randn_like(net.weight_mm))
    x = torch.randn(3, 9, 2, dtype=torch.float64)
    out, _ = net(x)
    assert out.shape == (3, 9, sum(SIZES))
    torch.testing.assert_close(out, reference_forward(net, x), rtol=1e-10, atol=1e-12)


def test_steps_and_phases_agree_with_the_forward():
    torch.manual_seed(1)
    net = MultiScaleLMN(2, 4, SIZES, 3).double()
    x = torch.randn(2, 7, 2, dtype=torch.float64)
    out, _ = net(x)
    state, steps = None, []
    for t in range(7):
        y, state = net.step(x[:, t], state)
        steps.append(y)
    torch.testing.assert_close(torch.stack(steps, 1), out, rtol=1e-10, atol=1e-12)
    # the second half from the first half's state (a per-sequence clock path)
    _, mid = net(x[:, :3])
    rest, _ = net(x[:, 3:], state=mid)
    torch.testing.assert_close(rest, out[:, 3:], rtol=1e-10, atol=1e-12)


def test_mask_and_slices_follow_the_sizes():
    net = MultiScaleLMN(1, 3, SIZES, 3)
    assert net.memory_sizes == SIZES and net.total_memory_size == 9
    assert [net.module_slice(k) for k in range(3)] == [
        slice(0, 4), slice(4, 6), slice(6, 9)
    ]
    mask = block_upper_mask(3, SIZES)
    module = np.repeat(np.arange(3), SIZES)
    expected = (module[None, :] >= module[:, None]).astype(float)
    np.testing.assert_array_equal(mask.numpy(), expected)
    assert net.weight_mm.shape == (9, 9) and net.weight_hm.shape == (9, 3)


def test_equal_sizes_are_the_int():
    assert check_module_sizes((3, 3), 2) == 3
    assert MultiScaleLMN(1, 3, [2, 2], 2).memory_size == 2
    with pytest.raises(ValueError, match=r"sequence of 3 positive ints.*\(2, 2\)"):
        MultiScaleLMN(1, 3, (2, 2), 3)


def test_schur_modules_of_different_sizes():
    rng = np.random.RandomState(0)
    M = sum(SIZES)
    B = np.triu(rng.randn(M, M) * 0.3)
    for start, stop in module_bounds(M, SIZES):  # dense diagonal blocks
        B[start:stop, start:stop] = rng.randn(stop - start, stop - start) * 0.3
    Q, T, kind = real_schur(B, SIZES)
    np.testing.assert_allclose(Q @ T @ Q.T, B, atol=1e-12)
    for start, stop in module_bounds(M, SIZES):  # Q block diagonal
        off = np.delete(Q[start:stop], np.arange(start, stop), axis=1)
        assert np.all(off == 0)
    mem = SchurMemory(M, module_size=SIZES, dtype=torch.float64)
    assert mem.module_bounds == [(0, 4), (4, 6), (6, 9)]
    Q_k, _ = mem.set_module_dense_(2, torch.tensor(B[6:, 6:]))
    torch.testing.assert_close(Q_k @ mem()[6:, 6:] @ Q_k.T, torch.tensor(B[6:, 6:]))
    with pytest.raises(ValueError, match="summing to 9"):
        SchurMemory(M, module_size=(4, 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_schur_radius_stays_below_one_under_adam(dtype):
    torch.manual_seed(2)
    net = MultiScaleLMN(2, 6, SIZES, 3, memory_matrix="schur").to(dtype)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    x, target = torch.randn(4, 12, 2, dtype=dtype), torch.randn(4, 12, 9, dtype=dtype)
    for _ in range(100):
        optimizer.zero_grad()
        out, _ = net(x)
        ((out - target) ** 2).mean().backward()
        optimizer.step()
        W = net.masked_weight_mm().detach().double()
        assert float(torch.linalg.eigvals(W).abs().max()) < 1


@pytest.mark.parametrize("memory_matrix", ["free", "schur"])
def test_growth_adds_a_module_of_the_given_size(memory_matrix):
    torch.manual_seed(3)
    net = MultiScaleLMN(2, 4, (3, 2), 2, memory_matrix=memory_matrix).double()
    x = torch.randn(2, 8, 2, dtype=torch.float64)
    before, _ = net(x)
    assert net.grow_(1, memory_size=5) == [slice(5, 10)]
    assert net.memory_sizes == (3, 2, 5) and net.periods == (1, 2, 4)
    after, _ = net(x)
    torch.testing.assert_close(after[..., :5], before, rtol=1e-12, atol=1e-12)
    assert bool((after[..., 5:] == 0).all())
    net.init_module_from_laes_(2, torch.ones(2, 4), 0.5 * torch.eye(2))
    assert float(net(x)[0].detach()[..., 5:7].abs().sum()) > 0


def test_laes_start_of_modules_of_different_sizes():
    """Module k's LAES has as many components as its own size allows."""
    from sklmn.estimators import MultiScaleLMNClassifier
    from sklmn.pretraining import LAESInitializer

    rng = np.random.RandomState(0)
    X = [rng.randn(16, 1) for _ in range(30)]
    y = np.array([int(x[:4].sum() > 0) for x in X])
    clf = MultiScaleLMNClassifier(
        hidden_size=12, memory_size=(6, 2, 2), n_modules=3, max_iter=1,
        pretrainer=LAESInitializer(), memory_matrix="free", random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not converge
        clf.fit(X, y)
    rec = clf.net_.module_.recurrent
    assert rec.memory_sizes == (6, 2, 2)
    laes = clf.pretrainer_.laes_layers_[0]
    assert [lae.A_.shape[0] for lae in laes] == [6, 2, 2]
