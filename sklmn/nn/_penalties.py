"""Regularization terms for linear recurrences (Carta et al. 2020b §2.1).

- Soft orthogonality (Vorontsov et al. 2017): ``scale * ||W^T W - I||_F^2``.
- Norm stabilizer (Krueger & Memisevic 2015), applied to the LMN memory:
  ``scale * mean_t (||m_t|| - ||m_{t-1}||)^2`` over each sequence's valid steps
  ``t = 1..l`` (``m_0`` is the initial state), averaged over the batch.

Both return scalar tensors to add to a training loss.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import check_nonnegative_float
from ._padding import mask_from_lengths

__all__ = ["norm_stabilizer_penalty", "orthogonality_penalty"]


def orthogonality_penalty(weight: Tensor, scale: float = 1.0) -> Tensor:
    """Soft orthogonality penalty ``scale * ||W^T W - I||_F^2``.

    Parameters
    ----------
    weight : Tensor of shape (n, k)
        Matrix ``W`` (e.g. the LMN memory matrix ``weight_mm``).
    scale : float, default=1.0
        Non-negative factor (lambda in Carta et al. 2020b §2.1).

    Returns
    -------
    penalty : Tensor
        Scalar tensor, differentiable with respect to ``weight``; zero exactly
        when the columns of ``W`` are orthonormal.

    Examples
    --------
    >>> orthogonality_penalty(torch.eye(3))
    tensor(0.)
    >>> orthogonality_penalty(2 * torch.eye(2), scale=0.5)
    tensor(9.)
    """
    scale = check_nonnegative_float("scale", scale)
    if weight.dim() != 2:
        raise ValueError(f"weight must be a matrix, got shape {tuple(weight.shape)}")
    gram = weight.mT @ weight
    eye = torch.eye(gram.shape[0], dtype=gram.dtype, device=gram.device)
    return scale * (gram - eye).square().sum()


def norm_stabilizer_penalty(
    states: Tensor,
    lengths: Tensor | None = None,
    *,
    initial_state: Tensor | None = None,
    scale: float = 1.0,
) -> Tensor:
    """Norm-stabilizer penalty ``scale * mean_t (||m_t|| - ||m_{t-1}||)^2``.

    For each sequence ``n`` of length ``l_n`` the squared differences of
    consecutive state norms are averaged over its valid steps ``t = 1..l_n``
    (the first difference uses the initial state ``m_0``, zero by default);
    the per-sequence means are then averaged over the batch. Padded steps
    never contribute.

    Parameters
    ----------
    states : Tensor of shape (N, T, M)
        Batch-first state sequence ``m_1 .. m_T``.
    lengths : Tensor of shape (N,), optional
        Valid lengths (default: all ``T``).
    initial_state : Tensor of shape (N, M), optional
        ``m_0`` (default: zeros).
    scale : float, default=1.0
        Non-negative factor (beta in Carta et al. 2020b §2.1).

    Returns
    -------
    penalty : Tensor
        Scalar tensor, differentiable with respect to ``states``.

    Examples
    --------
    >>> m = torch.tensor([[[3.0, 4.0], [0.0, 1.0], [9.0, 9.0]]])
    >>> # norms 5, 1 (third step is padding): ((5 - 0)^2 + (1 - 5)^2) / 2
    >>> norm_stabilizer_penalty(m, torch.tensor([2]))
    tensor(20.5000)
    """
    scale = check_nonnegative_float("scale", scale)
    if states.dim() != 3:
        raise ValueError(f"states must have shape (N, T, M), got {tuple(states.shape)}")
    n, t, _ = states.shape
    if n == 0:  # an empty batch: no step to penalize (the mean would be NaN)
        return scale * states.sum()
    norms = torch.linalg.vector_norm(states, dim=-1)  # (N, T)
    if initial_state is None:
        first = norms.new_zeros(n, 1)
    else:
        if initial_state.shape != (n, states.shape[2]):
            raise ValueError(
                f"initial_state must have shape {(n, states.shape[2])}, got "
                f"{tuple(initial_state.shape)}"
            )
        first = torch.linalg.vector_norm(initial_state, dim=-1).unsqueeze(1)
    previous = torch.cat([first, norms[:, :-1]], dim=1)
    diff2 = (norms - previous).square()
    if lengths is None:
        per_sequence = diff2.mean(dim=1)
    else:
        lengths = torch.as_tensor(lengths, dtype=torch.int64)
        mask = mask_from_lengths(lengths, t, device=states.device)
        diff2 = diff2.masked_fill(~mask, 0.0)
        per_sequence = diff2.sum(dim=1) / lengths.to(states.device, states.dtype)
    return scale * per_sequence.mean()
