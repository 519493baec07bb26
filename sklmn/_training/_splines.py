"""A readout of each pooled feature's piecewise-linear splines.

The linear readout of the pooled features draws one direction through them;
a tree ensemble on the same features predicts the long series much better,
and what it draws is a threshold per feature (``docs/memory.md``,
"A per-feature readout"). :class:`SplineReadout` gives the network that
readout: every feature ``z_j`` passes through a piecewise-linear function
with knots at the feature's training quantiles (constant beyond the first
and the last knot), and the functions are summed into the outputs. It is
what scikit-learn's ``SplineTransformer(degree=1, knots='quantile',
extrapolation='constant')`` followed by a linear model computes, held as
the network's own differentiable layer (the knots a buffer), so that the
fitted classifier predicts, saves and trains through it.

Inside the layer the basis is written with ramps: with knots
``t_0 < ... < t_{K-1}`` and ``u_i(z) = clip((z - t_i) / (t_{i+1} - t_i),
0, 1)``, a piecewise-linear function with values ``c_k`` at the knots is
``c_0 + sum_i (c_{i+1} - c_i) u_i(z)``; :func:`hat_basis` gives the hat
functions that a logistic readout is fitted on and :func:`ramp_weights`
turns their coefficients into the layer's.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["SplineReadout", "hat_basis", "quantile_knots", "ramp_weights"]


def quantile_knots(F, n_knots: int) -> np.ndarray:
    """The knots of every column of ``F``: its quantiles at ``n_knots``
    evenly spaced levels from 0 to 100 percent (scikit-learn's
    ``SplineTransformer(knots='quantile')`` without sample weights).

    Parameters
    ----------
    F : array-like of shape (n, d)
        Features, one row per sequence.
    n_knots : int
        Knots per feature (at least 2).

    Returns
    -------
    knots : ndarray of shape (d, n_knots)
        Non-decreasing in every row (equal where a feature repeats a value).

    Examples
    --------
    >>> import numpy as np
    >>> quantile_knots(np.arange(5.0)[:, None], 3).tolist()
    [[0.0, 2.0, 4.0]]
    """
    if int(n_knots) < 2:
        raise ValueError(f"n_knots must be at least 2, got {n_knots!r}")
    F = np.asarray(F, dtype=np.float64)
    knots = np.percentile(F, np.linspace(0, 100, int(n_knots)), axis=0).T
    return np.maximum.accumulate(knots, axis=1)


def _ramps(x: Tensor, knots: Tensor) -> Tensor:
    """``u_i(x[:, j])`` for the knots of every feature: shape ``(N, d, K -
    1)``; a zero-width interval is a step (0 up to its knot, 1 above)."""
    knots = knots.to(x.dtype)
    left, width = knots[:, :-1], knots.diff(dim=1)
    z = x[:, :, None]
    safe = torch.where(width > 0, width, torch.ones_like(width))
    ramp = ((z - left) / safe).clamp(0.0, 1.0)
    return torch.where(width > 0, ramp, (z > left).to(x.dtype))


def hat_basis(F, knots) -> np.ndarray:
    """The degree-1 B-spline (hat) basis of every column of ``F`` at
    ``knots``, constant beyond the first and the last knot.

    Parameters
    ----------
    F : array-like of shape (n, d)
        Features.
    knots : array-like of shape (d, K)
        Non-decreasing knots of every feature (:func:`quantile_knots`).

    Returns
    -------
    basis : ndarray of shape (n, d * K)
        The ``K`` hats of feature 0, then of feature 1, ...; each row's hats
        of one feature sum to 1.

    Examples
    --------
    >>> import numpy as np
    >>> hat_basis(np.array([[0.5], [3.0]]), np.array([[0.0, 1.0, 2.0]])).tolist()
    [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]
    """
    F = np.asarray(F, dtype=np.float64)
    knots = torch.as_tensor(np.asarray(knots, dtype=np.float64))
    u = _ramps(torch.as_tensor(F), knots).numpy()
    ones = np.ones(u.shape[:2] + (1,))
    zeros = np.zeros_like(ones)
    hats = np.concatenate([ones, u], axis=2) - np.concatenate([u, zeros], axis=2)
    return hats.reshape(F.shape[0], -1)


def ramp_weights(coef, intercept, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """The :class:`SplineReadout` weights and the bias that compute the
    linear function ``coef @ hats + intercept`` of the :func:`hat_basis`.

    Parameters
    ----------
    coef : array-like of shape (n_outputs, n_features * K)
        Coefficients of the hats (a linear model fitted on them).
    intercept : array-like of shape (n_outputs,)
    n_features : int
        Number of features ``d``.

    Returns
    -------
    weight : ndarray of shape (n_outputs, d, K - 1)
        ``c_{i+1} - c_i`` of every output and feature.
    bias : ndarray of shape (n_outputs,)
        ``intercept`` plus the values at every feature's first knot.

    Examples
    --------
    >>> import numpy as np
    >>> w, b = ramp_weights(np.array([[1.0, 3.0, 2.0]]), np.array([0.5]), 1)
    >>> w.tolist(), b.tolist()
    ([[[2.0, -1.0]]], [1.5])
    """
    coef = np.asarray(coef, dtype=np.float64)
    c = coef.reshape(coef.shape[0], int(n_features), -1)
    bias = np.asarray(intercept, dtype=np.float64) + c[:, :, 0].sum(1)
    return np.diff(c, axis=2), bias


class SplineReadout(nn.Module):
    """Per-feature piecewise-linear functions of the pooled features,
    summed into the outputs.

    ``out[n, o] = sum_j sum_i weight[o, j, i] * u_i(x[n, j])`` with the ramps
    ``u_i(z) = clip((z - t_i) / (t_{i+1} - t_i), 0, 1)`` of the knots ``t``
    of feature ``j`` (the buffer ``knots``; a zero-width interval is a step).
    :class:`~sklmn.training.SequenceNet` adds it to its linear readout
    (:meth:`~sklmn.training.SequenceNet.attach_splines_`). See
    ``docs/memory.md``, "The spline readout".

    Parameters
    ----------
    knots : array-like of shape (d, K)
        Non-decreasing knots of each of the ``d`` features (``K >= 2``).
    n_outputs : int
        Number of outputs.
    weight : array-like of shape (n_outputs, d, K - 1) or None, default=None
        The ramps' weights; None: zeros (the layer adds nothing).
    dtype : torch.dtype or None, default=None
        Of the knots and the weights; None: torch's default.

    Examples
    --------
    >>> import torch
    >>> layer = SplineReadout([[0.0, 1.0, 2.0]], 1, weight=[[[2.0, -1.0]]])
    >>> layer(torch.tensor([[0.5], [1.5], [5.0]])).flatten().tolist()
    [1.0, 1.5, 1.0]
    """

    def __init__(self, knots, n_outputs: int, weight=None, dtype=None):
        super().__init__()
        knots = torch.as_tensor(np.asarray(knots, dtype=np.float64))
        if knots.ndim != 2 or knots.shape[1] < 2:
            raise ValueError(
                f"knots must have shape (n_features, n_knots >= 2), got "
                f"{tuple(knots.shape)}"
            )
        if not bool((knots.diff(dim=1) >= 0).all()) or not bool(
            torch.isfinite(knots).all()
        ):
            raise ValueError("knots must be finite and non-decreasing in every row")
        d, k = knots.shape
        shape = (int(n_outputs), d, k - 1)
        dtype = torch.get_default_dtype() if dtype is None else dtype
        self.register_buffer("knots", knots.to(dtype))
        if weight is None:
            weight = torch.zeros(shape)
        weight = torch.as_tensor(np.asarray(weight, dtype=np.float64)).to(dtype)
        if tuple(weight.shape) != shape:
            raise ValueError(
                f"weight must have shape {shape}, got {tuple(weight.shape)}"
            )
        self.weight = nn.Parameter(weight)

    def ramps(self, x: Tensor) -> Tensor:
        """``u_i(x[:, j])``: shape ``(N, d, K - 1)``."""
        return _ramps(x, self.knots)

    def forward(self, x: Tensor) -> Tensor:
        """The functions of the features ``x`` (N, d), summed: (N, n_outputs)."""
        return torch.einsum("ndk,odk->no", self.ramps(x), self.weight.to(x.dtype))
