"""Tests of the penalty functions against hand formulas."""

import numpy as np
import pytest
import torch

from sklmn.nn import norm_stabilizer_penalty, orthogonality_penalty


@pytest.mark.parametrize("shape", [(4, 4), (5, 3)])
@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_orthogonality_penalty_formula(shape, scale):
    W = np.random.default_rng(0).standard_normal(shape)
    expected = scale * np.sum((W.T @ W - np.eye(shape[1])) ** 2)
    value = orthogonality_penalty(torch.from_numpy(W), scale=scale)
    np.testing.assert_allclose(value.item(), expected, rtol=1e-12)


def test_orthogonality_penalty_zero_on_orthogonal_and_gradient():
    Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((4, 4)))
    assert orthogonality_penalty(torch.from_numpy(Q)).item() < 1e-20
    W = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(orthogonality_penalty, (W,))


def _norm_reference(states, lengths, initial):
    per_seq = []
    for n, length in enumerate(lengths):
        prev = np.linalg.norm(initial[n])
        terms = []
        for t in range(length):
            cur = np.linalg.norm(states[n, t])
            terms.append((cur - prev) ** 2)
            prev = cur
        per_seq.append(np.mean(terms))
    return np.mean(per_seq)


@pytest.mark.parametrize("with_lengths", [False, True])
@pytest.mark.parametrize("with_initial", [False, True])
def test_norm_stabilizer_formula(with_lengths, with_initial):
    rng = np.random.default_rng(2)
    states = rng.standard_normal((3, 6, 4))
    lengths = [6, 2, 4] if with_lengths else [6, 6, 6]
    initial = rng.standard_normal((3, 4)) if with_initial else np.zeros((3, 4))
    expected = 0.5 * _norm_reference(states, lengths, initial)
    value = norm_stabilizer_penalty(
        torch.from_numpy(states),
        torch.tensor(lengths) if with_lengths else None,
        initial_state=torch.from_numpy(initial) if with_initial else None,
        scale=0.5,
    )
    np.testing.assert_allclose(value.item(), expected, rtol=1e-12)


def test_norm_stabilizer_ignores_padding_and_gradcheck():
    states = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([5, 2])
    base = norm_stabilizer_penalty(states, lengths)
    changed = states.detach().clone()
    changed[1, 2:] = 100.0
    torch.testing.assert_close(norm_stabilizer_penalty(changed, lengths), base.detach())
    assert torch.autograd.gradcheck(
        lambda s: norm_stabilizer_penalty(s, lengths), (states,)
    )


def test_penalty_validation():
    with pytest.raises(ValueError, match="scale must be a finite float >= 0, got -1"):
        orthogonality_penalty(torch.eye(2), scale=-1)
    with pytest.raises(ValueError, match="weight must be a matrix"):
        orthogonality_penalty(torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match=r"states must have shape \(N, T, M\)"):
        norm_stabilizer_penalty(torch.ones(2, 2))
    with pytest.raises(ValueError, match="initial_state must have shape"):
        norm_stabilizer_penalty(torch.ones(2, 3, 4), initial_state=torch.ones(2, 3))
