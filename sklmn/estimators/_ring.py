"""``memory_ring='auto'``: the ring of the Schur memory's random start chosen
before training, by how well random linear-memory features on each ring
predict the training classes (a reservoir estimate, no network trained).

Measurements: ``docs/memory.md``, "The ring chosen from the data".
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils import check_random_state

__all__ = ["RING_CANDIDATES", "choose_ring", "reservoir_features"]

#: the rings ``memory_ring='auto'`` compares with the model's own: fast
#: rotations for short or oscillating series, and the wide ring (every
#: angle, moduli from 0.5)
RING_CANDIDATES = ((0.9, 0.999, math.pi / 2), (0.5, 0.999, math.pi))

#: sequences scored (a stratified-enough random subset above it)
_MAX_SEQUENCES = 1000
#: random draws of the features per ring, and cross-validation folds
_N_DRAWS = 3
_N_FOLDS = 3


def reservoir_features(data, lengths, ring, n_pairs, rng) -> np.ndarray:
    """Features of a random diagonal linear memory on ``ring``.

    ``n_pairs`` complex eigenvalues ``lambda_j = r_j exp(i theta_j)``, ``r_j²``
    uniform on ``[r_min², r_max²]`` and ``theta_j`` uniform on ``[0,
    max_angle]`` (the Schur memory's ring start), driven by a random complex
    projection of the inputs scaled by ``sqrt(1 - r_j²)``:
    ``m_t = lambda * m_{t-1} + B x_t``. The features are the real and
    imaginary parts of the state at each sequence's last valid step and of
    its mean over the valid steps, standardized.

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Padded (standardized) inputs.
    lengths : ndarray of shape (n_samples,)
        Valid lengths, at least 1.
    ring : tuple (r_min, r_max, max_angle)
    n_pairs : int
        Number of complex eigenvalues.
    rng : numpy.random.RandomState

    Returns
    -------
    features : ndarray of shape (n_samples, 4 * n_pairs)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(5, 7, 2)
    >>> F = reservoir_features(X, np.full(5, 7), (0.5, 0.9, 1.0), 3,
    ...                        np.random.RandomState(0))
    >>> F.shape
    (5, 12)
    """
    r_min, r_max, angle = ring
    n, T, d = data.shape
    r = np.sqrt(rng.uniform(r_min**2, r_max**2, n_pairs))
    lam = r * np.exp(1j * rng.uniform(0.0, angle, n_pairs))
    B = (rng.randn(n_pairs, d) + 1j * rng.randn(n_pairs, d)) / math.sqrt(2 * d)
    B *= np.sqrt(1.0 - r**2)[:, None]
    lengths = np.asarray(lengths)
    m = np.zeros((n, n_pairs), complex)
    total = np.zeros_like(m)
    last = np.zeros_like(m)
    for t in range(T):  # one step at a time: no (n, T, n_pairs) array
        m = lam * m + data[:, t] @ B.T
        valid = (t < lengths)[:, None]
        total += np.where(valid, m, 0.0)
        last = np.where((t == lengths - 1)[:, None], m, last)
    mean = total / lengths[:, None]
    F = np.concatenate([last.real, last.imag, mean.real, mean.imag], axis=1)
    F -= F.mean(axis=0)
    scale = F.std(axis=0)
    return F / np.where(scale > 0, scale, 1.0)


def _score(data, lengths, y, ring, n_pairs, seed) -> float:
    """Mean cross-validated accuracy of a logistic readout of the features
    of ``ring`` over ``_N_DRAWS`` draws."""
    scores = []
    for draw in range(_N_DRAWS):
        rng = np.random.RandomState(seed + draw)
        F = reservoir_features(data, lengths, ring, n_pairs, rng)
        folds = StratifiedKFold(_N_FOLDS, shuffle=True, random_state=seed + draw)
        model = LogisticRegression(C=1.0, max_iter=1000)
        scores.append(cross_val_score(model, F, y, cv=folds).mean())
    return float(np.mean(scores))


def choose_ring(sequences, y, default, *, memory_size, random_state=None):
    """The ring among ``default`` and :data:`RING_CANDIDATES` whose random
    linear-memory features predict the classes ``y`` best.

    Each ring is scored by the 3-fold cross-validated accuracy of a logistic
    readout of :func:`reservoir_features` (``memory_size // 2`` complex
    eigenvalues, at least 1), averaged over 3 draws. The rings are taken in
    order (``default``, then the candidates): each replaces the ring chosen
    so far only when it scores more than one training sequence in ``n``
    above it. Up to 1000 sequences are scored (a random subset of
    larger sets). Without three sequences of every class the default is
    kept.

    Parameters
    ----------
    sequences : Sequences
        Padded training inputs (``data``, ``lengths``).
    y : ndarray of shape (n_samples,)
        Class indices.
    default : tuple (r_min, r_max, max_angle)
        The model's own ring.
    memory_size : int
        Memory units of the network (per module for the multi-scale LMN).
    random_state : int, RandomState instance or None, default=None
        Seeds the subset, the draws and the folds.

    Returns
    -------
    ring : tuple
        The chosen ring (``default`` itself when it is kept).
    scores : dict
        The score of every ring compared (empty when none was).

    Examples
    --------
    Two classes of noisy 24-step series told apart by the frequency of an
    oscillation (0.9 or 1.2 radians per step): the fast ring wins over a
    slow one.

    >>> import math
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> y = np.arange(60) % 2
    >>> t = np.arange(24)
    >>> X = np.sin(np.where(y == 1, 1.2, 0.9)[:, None] * t)[:, :, None]
    >>> X = X + rng.randn(60, 24, 1)
    >>> seqs = SimpleNamespace(data=X, lengths=np.full(60, 24))
    >>> ring, scores = choose_ring(seqs, y, (0.9, 0.999, math.pi / 20),
    ...                            memory_size=8, random_state=0)
    >>> ring == (0.9, 0.999, math.pi / 2)
    True
    """
    y = np.asarray(y)
    counts = np.bincount(y) if y.size else np.array([0])
    if y.ndim != 1 or counts[counts > 0].min() < _N_FOLDS:
        return tuple(default), {}
    data, lengths = sequences.data, np.asarray(sequences.lengths)
    rng = check_random_state(random_state)
    if len(y) > _MAX_SEQUENCES:
        keep = np.sort(rng.choice(len(y), _MAX_SEQUENCES, replace=False))
        data, lengths, y = data[keep], lengths[keep], y[keep]
        counts = np.bincount(y)
        if counts[counts > 0].min() < _N_FOLDS:
            return tuple(default), {}
    data = np.nan_to_num(np.asarray(data[:, : int(lengths.max())], dtype=np.float64))
    seed = int(rng.randint(2**31 - 1 - _N_DRAWS))
    n_pairs = max(1, int(memory_size) // 2)
    rings = [tuple(default), *RING_CANDIDATES]
    scores = {ring: _score(data, lengths, y, ring, n_pairs, seed) for ring in rings}
    best = rings[0]
    for ring in rings[1:]:  # in order: a later ring must clearly do better
        if scores[ring] > scores[best] + 1.0 / len(y):
            best = ring
    return best, scores
