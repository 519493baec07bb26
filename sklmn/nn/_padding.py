"""Lengths handling of padded batches: masks, zeroed padding, the last valid
step, sorting by length and reversing the valid part of each sequence.

Conventions: ``x`` is ``(N, T, d)`` (batch first); ``lengths`` is an int64
tensor ``(N,)`` with values in ``1..T``; time step ``t`` of sequence ``n`` is
valid when ``t < lengths[n]``.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "active_batch_sizes",
    "gather_last",
    "mask_from_lengths",
    "reverse_padded",
    "sort_by_length",
    "zero_padded",
]


# --------------------------------------------------------------------------- #
# Lengths and masks
# --------------------------------------------------------------------------- #
def mask_from_lengths(
    lengths: Tensor, T: int, device: torch.device | str | None = None
) -> Tensor:
    """Boolean mask of valid steps, ``mask[n, t] = t < lengths[n]``.

    Parameters
    ----------
    lengths : Tensor of shape (N,)
        Integer lengths.
    T : int
        Number of time steps.
    device : torch.device or str, optional
        Device of the result (default: the device of ``lengths``).

    Returns
    -------
    mask : Tensor of shape (N, T), dtype bool

    Examples
    --------
    >>> mask_from_lengths(torch.tensor([3, 1]), 4)
    tensor([[ True,  True,  True, False],
            [ True, False, False, False]])
    """
    device = lengths.device if device is None else device
    steps = torch.arange(T, device=device)
    return steps.unsqueeze(0) < lengths.to(device).unsqueeze(1)


def zero_padded(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Return ``output`` with padded time steps set to exactly zero.

    Out of place (autograd friendly); returns ``output`` itself when
    ``lengths`` is ``None``.

    Parameters
    ----------
    output : Tensor of shape (N, T, ...)
        Batch-first sequence output.
    lengths : Tensor of shape (N,) or None
        Valid lengths.

    Returns
    -------
    output : Tensor of shape (N, T, ...)

    Examples
    --------
    >>> zero_padded(torch.ones(2, 3, 1), torch.tensor([3, 1]))[..., 0]
    tensor([[1., 1., 1.],
            [1., 0., 0.]])
    """
    if lengths is None:
        return output
    mask = mask_from_lengths(lengths, output.shape[1], device=output.device)
    mask = mask.reshape(mask.shape + (1,) * (output.dim() - 2))
    return output.masked_fill(~mask, 0.0)


def gather_last(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Output at each sequence's last valid step.

    Parameters
    ----------
    output : Tensor of shape (N, T, ...)
        Batch-first sequence output.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: the last step ``T - 1``).

    Returns
    -------
    last : Tensor of shape (N, ...)

    Examples
    --------
    >>> out = torch.arange(6.0).reshape(2, 3, 1)
    >>> gather_last(out, torch.tensor([3, 1]))
    tensor([[2.],
            [3.]])
    """
    if lengths is None:
        return output[:, -1]
    idx = (lengths.to(output.device) - 1).clamp(min=0)
    return output[torch.arange(output.shape[0], device=output.device), idx]


def sort_by_length(lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Sort a batch by decreasing length (stable).

    After sorting, the sequences still running at step ``t`` form a prefix of
    the batch (as in packed sequences), so a recurrence only needs to update
    ``state[:active_batch_sizes(...)[t]]``.

    Parameters
    ----------
    lengths : Tensor of shape (N,)
        Integer lengths.

    Returns
    -------
    sorted_lengths : Tensor of shape (N,)
        Lengths in decreasing order.
    order : Tensor of shape (N,)
        Permutation with ``sorted = x[order]``.
    inverse : Tensor of shape (N,)
        Inverse permutation with ``x = sorted[inverse]``.

    Examples
    --------
    >>> sorted_lengths, order, inverse = sort_by_length(torch.tensor([2, 5, 3]))
    >>> sorted_lengths, order, inverse
    (tensor([5, 3, 2]), tensor([1, 2, 0]), tensor([2, 0, 1]))
    """
    sorted_lengths, order = torch.sort(lengths, descending=True, stable=True)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel(), device=order.device)
    return sorted_lengths, order, inverse


def active_batch_sizes(sorted_lengths: Tensor, T: int) -> list[int]:
    """Number of sequences still running at each step, for sorted lengths.

    Parameters
    ----------
    sorted_lengths : Tensor of shape (N,)
        Lengths in decreasing order (see :func:`sort_by_length`).
    T : int
        Number of time steps.

    Returns
    -------
    sizes : list of int of length T
        ``sizes[t] = #{n : lengths[n] > t}``; the active sequences at step
        ``t`` are ``0 .. sizes[t] - 1``.

    Examples
    --------
    >>> active_batch_sizes(torch.tensor([4, 2, 2]), 4)
    [3, 3, 1, 1]
    """
    lengths = sorted_lengths.detach().cpu()
    steps = torch.arange(T)
    return (lengths.unsqueeze(0) > steps.unsqueeze(1)).sum(dim=1).tolist()


def reverse_padded(x: Tensor, lengths: Tensor | None) -> Tensor:
    """Reverse the valid part of each sequence in time, keeping padding last.

    ``out[n, t] = x[n, lengths[n] - 1 - t]`` for ``t < lengths[n]`` and
    ``out[n, t] = x[n, t]`` on padded steps. The operation is its own inverse,
    which is what a bidirectional recurrence needs: reverse the input, run
    the forward recurrence, reverse its output.

    Parameters
    ----------
    x : Tensor of shape (N, T, ...)
        Batch-first sequences.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: plain flip of the time axis).

    Returns
    -------
    out : Tensor of shape (N, T, ...)

    Examples
    --------
    >>> x = torch.arange(8.0).reshape(2, 4)
    >>> reverse_padded(x, torch.tensor([4, 2]))
    tensor([[3., 2., 1., 0.],
            [5., 4., 6., 7.]])
    """
    if lengths is None:
        return x.flip(1)
    n, t = x.shape[0], x.shape[1]
    steps = torch.arange(t, device=x.device).unsqueeze(0)
    lens = lengths.to(x.device).unsqueeze(1)
    idx = torch.where(steps < lens, lens - 1 - steps, steps)
    idx = idx.reshape((n, t) + (1,) * (x.dim() - 2)).expand_as(x)
    return torch.gather(x, 1, idx)
