"""Shared numerical helpers of the pretraining algorithms.

Least-squares readouts, readout targets and state extraction. Everything here
works on float64 numpy arrays (LAES math) and torch modules (states).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import linalg
from scipy.special import expit, softmax
from torch import Tensor, nn

__all__: list[str] = []


def sequence_list(data: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    """Unpadded float64 sequences ``data[i, :lengths[i]]``."""
    return [
        np.asarray(data[i, : int(n)], dtype=np.float64) for i, n in enumerate(lengths)
    ]


def valid_mask(lengths: np.ndarray, T: int) -> np.ndarray:
    """Boolean mask ``(n, T)`` of the valid steps."""
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def readout_targets(
    y_encoded: np.ndarray,
    problem: str,
    n_outputs: int,
    lengths: np.ndarray,
    per_step: bool,
) -> np.ndarray:
    """Least-squares targets, one row per sequence or per valid step.

    One-hot rows for multiclass targets (encoded as class indices), the 0/1
    indicators for multilabel targets and the raw values for regression.
    """
    y = np.asarray(y_encoded)
    if per_step:
        y = y[valid_mask(lengths, y.shape[1])]
    if problem == "multiclass":
        return np.eye(n_outputs)[y.astype(np.int64)]
    return y.reshape(y.shape[0], -1).astype(np.float64)


def output_residual(
    outputs: np.ndarray, targets: np.ndarray, problem: str
) -> np.ndarray:
    """Negative gradient of the loss with respect to the outputs (per row).

    ``targets - outputs`` for the squared error, ``targets - softmax(outputs)``
    for the cross-entropy and ``targets - sigmoid(outputs)`` for the binary
    cross-entropy: a least-squares fit of new readout columns to it is one
    (Gauss-)Newton-like step on the readout, exact for the squared error.
    """
    if problem == "multiclass":
        return targets - softmax(outputs, axis=1)
    if problem == "multilabel":
        return targets - expit(outputs)
    return targets - outputs


def ridge_readout(
    features: np.ndarray,
    targets: np.ndarray,
    alpha: float,
    *,
    fit_intercept: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Ridge least squares ``min_W ||F W^T + b - Y||^2 + alpha ||W||^2``.

    With ``alpha = 0`` the minimum-norm solution (pseudoinverse, 001 §4.1).
    Features and targets are centered when ``fit_intercept`` so that the
    intercept is not penalized.

    Returns
    -------
    W : ndarray of shape (n_targets, n_features)
    b : ndarray of shape (n_targets,)
    """
    F_ = np.asarray(features, dtype=np.float64)
    Y = np.asarray(targets, dtype=np.float64)
    if fit_intercept:
        f_mean, y_mean = F_.mean(axis=0), Y.mean(axis=0)
        F_, Y = F_ - f_mean, Y - y_mean
    if alpha > 0:
        # Scale-aware ridge: alpha is relative to the mean squared feature,
        # so it means the same for tiny and large states.
        gram = F_.T @ F_
        scale = max(np.trace(gram) / max(gram.shape[0], 1), np.finfo(float).tiny)
        gram[np.diag_indices_from(gram)] += alpha * scale
        W = linalg.solve(gram, F_.T @ Y, assume_a="pos").T
    else:
        W = linalg.lstsq(F_, Y, lapack_driver="gelsd")[0].T
    b = (y_mean - W @ f_mean) if fit_intercept else np.zeros(Y.shape[1])
    return W, b


def rows(states: np.ndarray, lengths: np.ndarray, per_step: bool) -> np.ndarray:
    """Feature rows: final valid state of each sequence, or every valid step."""
    states = np.asarray(states)
    if per_step:
        return states[valid_mask(lengths, states.shape[1])]
    return states[np.arange(states.shape[0]), np.asarray(lengths) - 1]


@torch.no_grad()
def set_linear_(layer: nn.Linear, W: np.ndarray, b: np.ndarray) -> None:
    """Copy ``W`` and ``b`` into a linear layer (its dtype and device)."""
    w = layer.weight
    layer.weight.copy_(torch.as_tensor(W, dtype=w.dtype, device=w.device))
    layer.bias.copy_(torch.as_tensor(b, dtype=w.dtype, device=w.device))


@torch.no_grad()
def module_sequences(
    fn, X: Tensor, lengths: Tensor, *, batch_size: int = 256
) -> list[np.ndarray]:
    """Run ``fn(Xb, lengths_b) -> tuple of (N, T, *) tensors`` by chunks.

    Returns the float64 arrays concatenated over the chunks; arrays with a
    time axis (3-D) are zero-padded to ``X.shape[1]`` steps.
    """
    T = int(X.shape[1])
    chunks: list[list[np.ndarray]] = []
    for start in range(0, int(X.shape[0]), batch_size):
        Xb, lb = X[start : start + batch_size], lengths[start : start + batch_size]
        outs = fn(Xb, lb)
        chunk = []
        for out in outs:
            arr = out.detach().to("cpu", torch.float64).numpy()
            if arr.ndim >= 3 and arr.shape[1] < T:
                pad = [(0, 0), (0, T - arr.shape[1])] + [(0, 0)] * (arr.ndim - 2)
                arr = np.pad(arr, pad)
            chunk.append(arr)
        chunks.append(chunk)
    return [np.concatenate(parts) for parts in zip(*chunks, strict=True)]


def problem_of(estimator) -> tuple[str, bool]:
    """``(problem, per_step)`` of the estimator being fitted."""
    problem = getattr(estimator, "_problem", None)
    if problem not in ("multiclass", "multilabel", "continuous"):
        raise ValueError(
            f"the estimator's problem must be set before pretraining, got {problem!r}"
        )
    return problem, getattr(estimator, "target", "sequence") == "timestep"


def row_loss(outputs: np.ndarray, targets: np.ndarray, problem: str) -> float:
    """Mean training loss of output rows (as ``SequenceLoss``).

    ``targets`` are one-hot rows (multiclass), 0/1 indicators (multilabel) or
    values (regression).
    """
    if problem == "multiclass":
        shifted = outputs - outputs.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        return float(-np.mean((targets * log_p).sum(axis=1)))
    if problem == "multilabel":
        # log(1 + exp(-z)) for y = 1, log(1 + exp(z)) for y = 0, stably
        z = outputs
        return float(np.mean(np.logaddexp(0.0, z) - targets * z))
    return float(np.mean((outputs - targets) ** 2))


def pad_laes(A: np.ndarray, B: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Embed a LAES with ``p <= size`` components in ``size`` memory units.

    Extra rows of ``A`` and rows/columns of ``B`` are zero: the extra units
    start at zero and stay there until training moves them.
    """
    p = A.shape[0]
    A_pad = np.zeros((size, A.shape[1]))
    B_pad = np.zeros((size, size))
    A_pad[:p], B_pad[:p, :p] = A, B
    return A_pad, B_pad
