"""Tests of the recurrence kernels of sklmn.nn._scan."""

import pytest
import torch

from sklmn.nn._scan import lmn_scan

DTYPE = torch.float64


@pytest.mark.parametrize("with_lengths", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_scan_gradcheck(with_lengths, with_bias):
    gen = torch.Generator().manual_seed(4)
    T, N, d, H, M = 4, 3, 2, 3, 2

    def rnd(*shape):
        return torch.randn(*shape, generator=gen, dtype=DTYPE).requires_grad_()

    args = [rnd(T, N, d), rnd(N, M), rnd(H, d), rnd(H), rnd(H, M), rnd(M, H)]
    args += [rnd(M, M), rnd(M) if with_bias else None]
    sizes = [3, 2, 2, 1] if with_lengths else None
    assert torch.autograd.gradcheck(
        lambda *a: lmn_scan(*a, batch_sizes=sizes), tuple(args)
    )


def test_scan_validates_batch_sizes():
    x, m0 = torch.zeros(3, 2, 1), torch.zeros(2, 2)
    weights = (torch.zeros(4, 1), torch.zeros(4), torch.zeros(4, 2))
    weights += (torch.zeros(2, 4), torch.eye(2))
    with pytest.raises(ValueError, match="non-increasing"):
        lmn_scan(x, m0, *weights, batch_sizes=[2, 1, 2])
    with pytest.raises(ValueError, match="length T=3"):
        lmn_scan(x, m0, *weights, batch_sizes=[2, 1])
