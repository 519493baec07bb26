"""Training data: padded sequences with their lengths and targets, batched
whole and trimmed to the longest sequence of each batch."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "LengthBucketBatchSampler",
    "SeededShuffleBatches",
    "SequenceDataset",
    "collate_batch",
]


class SequenceDataset(torch.utils.data.Dataset):
    """Padded sequences, their lengths and encoded targets.

    Batches are fetched whole (``__getitems__``) and trimmed to the longest
    sequence of the batch, so a batch of short sequences costs short
    recurrences. Use :func:`collate_batch` as the DataLoader's ``collate_fn``.

    Parameters
    ----------
    X : Tensor of shape (n, T, d)
        Zero-padded float sequences.
    lengths : Tensor of shape (n,)
        int64 lengths.
    y : Tensor of shape (n, ...) or None
        Encoded targets; per-time-step targets have the time axis second.
    per_step : bool, default=False
        Whether ``y`` has a time axis to trim.
    sample_weight : Tensor of shape (n,) or (n, T) or None, default=None
        Weights of the loss terms: one per sequence, or one per time step
        (zero at padded steps) for per-time-step targets. Batches then carry
        them as ``X["sample_weight"]``.

    Examples
    --------
    >>> import torch
    >>> from sklmn.training import SequenceDataset
    >>> data = SequenceDataset(torch.zeros(3, 6, 2), torch.tensor([2, 4, 3]),
    ...                        torch.tensor([0, 1, 0]))
    >>> batch, y = data.__getitems__([0, 2])
    >>> batch["X"].shape, batch["lengths"].tolist(), y.tolist()
    (torch.Size([2, 3, 2]), [2, 3], [0, 0])
    """

    def __init__(
        self,
        X: Tensor,
        lengths: Tensor,
        y: Tensor | None = None,
        *,
        per_step=False,
        sample_weight: Tensor | None = None,
    ):
        self.X = X
        self.lengths = lengths
        self.y = y
        self.per_step = per_step
        self.sample_weight = sample_weight

    def __len__(self) -> int:
        return int(self.X.shape[0])

    def weighted(self) -> Tensor | None:
        """Which sequences have a non-zero loss weight: a bool tensor of
        shape ``(n,)``, or None without weights (every one counts)."""
        weight = getattr(self, "sample_weight", None)  # absent in old pickles
        if weight is None:
            return None
        return weight.reshape(len(self), -1).sum(dim=1) > 0

    def __getitems__(self, indices) -> tuple[dict, Tensor]:
        idx = torch.as_tensor(indices, dtype=torch.int64)
        lengths = self.lengths[idx]
        T = int(lengths.max())
        Xb = self.X[idx, :T]
        if self.y is None:
            yb = torch.zeros(len(idx))
        elif self.per_step:
            yb = self.y[idx, :T]
        else:
            yb = self.y[idx]
        batch = {"X": Xb, "lengths": lengths}
        weight = getattr(self, "sample_weight", None)  # absent in old pickles
        if weight is not None:
            weight = weight[idx]
            batch["sample_weight"] = weight[:, :T] if weight.dim() == 2 else weight
        return batch, yb

    def __getitem__(self, i: int):
        (Xb, yb) = self.__getitems__([i])
        return {k: v[0] for k, v in Xb.items()}, yb[0]


class LengthBucketBatchSampler(torch.utils.data.Sampler):
    """Random minibatches of sequences of similar lengths.

    Every epoch shuffles the sequences, cuts the permutation into pools of
    ``pool_batches`` batches, sorts each pool by length (longest first, stable)
    and cuts it into batches, then shuffles the order of all batches. Batches
    trimmed to their longest sequence then waste little compute on padding.

    Parameters
    ----------
    lengths : Tensor of shape (n,)
        Sequence lengths.
    batch_size : int
        Sequences per batch.
    generator : torch.Generator
        Source of randomness (reproducible, global RNG untouched).
    pool_batches : int, default=50
        Batches per sorted pool (larger: more homogeneous lengths, less
        random batch composition).

    Examples
    --------
    >>> import torch
    >>> sampler = LengthBucketBatchSampler(
    ...     torch.tensor([1, 9, 2, 8, 3, 7]), 2, torch.Generator().manual_seed(0)
    ... )
    >>> sorted(sorted(int(l) for l in torch.tensor([1, 9, 2, 8, 3, 7])[b])
    ...        for b in sampler)
    [[1, 2], [3, 7], [8, 9]]
    """

    def __init__(
        self,
        lengths: Tensor,
        batch_size: int,
        generator: torch.Generator,
        pool_batches: int = 50,
    ):
        self.lengths = torch.as_tensor(lengths)
        self.batch_size = int(batch_size)
        self.generator = generator
        self.pool_batches = int(pool_batches)

    def _pools(self) -> list[int]:
        n, pool = len(self.lengths), self.batch_size * self.pool_batches
        return [min(pool, n - start) for start in range(0, n, pool)]

    def __len__(self) -> int:
        return sum(-(-size // self.batch_size) for size in self._pools())

    def __iter__(self):
        perm = torch.randperm(len(self.lengths), generator=self.generator)
        batches, start = [], 0
        for size in self._pools():
            idx = perm[start : start + size]
            start += size
            order = torch.argsort(self.lengths[idx], descending=True, stable=True)
            idx = idx[order]
            batches.extend(
                idx[i : i + self.batch_size].tolist()
                for i in range(0, size, self.batch_size)
            )
        for j in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[j]


class SeededShuffleBatches:
    """The shuffled training batches of a :class:`SequenceDataset`, in the
    order of a DataLoader.

    What ``DataLoader(dataset, batch_size, shuffle=True, generator=generator,
    collate_fn=collate_batch)`` yields, batch for batch, drawing the same
    numbers from ``generator`` (per epoch: the loader's base seed, the
    permutation, and the sampler's closing draw), without the DataLoader's
    sampler, fetcher and index lists: the batches are cut from one
    permutation tensor and fetched whole by ``__getitems__``.

    Parameters
    ----------
    dataset : SequenceDataset
        Training data.
    batch_size : int
        Sequences per batch (the last batch may be smaller).
    generator : torch.Generator
        Source of randomness, shared by the epochs.

    Examples
    --------
    >>> import torch
    >>> from sklmn._training._data import (
    ...     SeededShuffleBatches, SequenceDataset, collate_batch)
    >>> data = SequenceDataset(torch.arange(10.0).reshape(5, 2, 1),
    ...                        torch.full((5,), 2), torch.arange(5))
    >>> lean = SeededShuffleBatches(data, 2, torch.Generator().manual_seed(0))
    >>> loader = torch.utils.data.DataLoader(
    ...     data, batch_size=2, shuffle=True, collate_fn=collate_batch,
    ...     generator=torch.Generator().manual_seed(0))
    >>> [[y.tolist() for _, y in epoch] for epoch in (lean, lean)] == [
    ...     [y.tolist() for _, y in epoch] for epoch in (loader, loader)]
    True
    >>> len(lean)
    3
    """

    def __init__(self, dataset, batch_size: int, generator: torch.Generator):
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.generator = generator

    def __len__(self) -> int:
        return -(-len(self.dataset) // self.batch_size)

    def __iter__(self):
        n, size, generator = len(self.dataset), self.batch_size, self.generator
        # a DataLoader iterator draws its base seed first ...
        torch.empty((), dtype=torch.int64).random_(generator=generator)
        # ... then its RandomSampler one permutation of the dataset
        perm = torch.randperm(n, generator=generator)
        for start in range(0, n, size):
            if start + size >= n:
                # the sampler draws the permutation of its (empty) remainder
                # when the last batch asks for more indices than are left
                torch.randperm(n, generator=generator)
            yield self.dataset.__getitems__(perm[start : start + size])


def collate_batch(batch):
    """DataLoader ``collate_fn`` for :class:`SequenceDataset` (batch is ready)."""
    return batch
