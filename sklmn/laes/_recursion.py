"""The LAES recursions on padded arrays: encoding every sequence into its
states, decoding states back into sequences, and the prefix sums of the
reconstruction error."""

from __future__ import annotations

import numpy as np

from ._xi import _single_threaded_blas


def _active_counts(lengths: np.ndarray, order: np.ndarray, T: int) -> np.ndarray:
    """Number of sequences (longest first in ``order``) still running at step t."""
    neg = -lengths[order]
    return np.searchsorted(neg, -np.arange(T), side="left")


def encode(data, lengths, A, B, return_sequences=False):
    """The final states ``(n, p)`` of the recursion ``m_t = A x_t + B m_{t-1}``
    (Carta et al. 2021 eq. 1) over padded sequences, and with
    ``return_sequences`` the states of every step ``(n, T, p)`` (else None)."""
    n, T, _ = data.shape
    order = np.argsort(-lengths, kind="stable")
    active = _active_counts(lengths, order, T)
    At, Bt = A.T, B.T
    m = np.zeros((n, A.shape[0]))
    states = np.zeros((n, T, A.shape[0])) if return_sequences else None
    with _single_threaded_blas():  # one small GEMM per step
        for t in range(T):
            idx = order[: active[t]]
            m[: active[t]] = data[idx, t] @ At + m[: active[t]] @ Bt  # eq. 1
            if return_sequences:
                states[idx, t] = m[: active[t]]
    final = np.empty_like(m)
    final[order] = m
    return final, states


def decode(Z, lengths, A, B) -> np.ndarray:
    """The steps ``(n, max(lengths), a)`` decoded backwards from the states
    ``Z``: ``x~_t = Aᵀ m_t``, ``m_{t-1} = Bᵀ m_t`` (Carta et al. 2021 eq. 2),
    zero after the end of every sequence; overflow gives infinities."""
    n, T = Z.shape[0], int(lengths.max())
    out = np.zeros((n, T, A.shape[1]))
    m = Z.copy()
    rows = np.arange(n)
    with _single_threaded_blas(), np.errstate(over="ignore", invalid="ignore"):
        for k in range(T):
            pos = lengths - 1 - k
            ok = pos >= 0
            out[rows[ok], pos[ok]] = m[ok] @ A  # x~_t = Aᵀ m_t
            m = m @ B  # m_{t-1} = Bᵀ m_t
    return out


def prefix_decoding_terms(data, lengths, A, B) -> tuple[float, float]:
    """The sums over every prefix of ``||m_t||^2`` and ``m_tᵀ S_t m_t`` (see
    ``LAESTransformer.reconstruction_error``) for the encoder ``A``, ``B``."""
    n, T, _ = data.shape
    order = np.argsort(-lengths, kind="stable")
    active = _active_counts(lengths, order, T)
    At, Bt = A.T, B.T
    p = A.shape[0]
    m = np.zeros((n, p))
    omega = At.copy()  # Ω_0 = Aᵀ, shape (a, p)
    S = np.zeros((p, p))
    cross = quad = 0.0
    with _single_threaded_blas():  # small GEMMs per step
        for t in range(T):
            k = active[t]
            m[:k] = data[order[:k], t] @ At + m[:k] @ Bt
            S += omega.T @ omega  # S_{t+1}: lags 0..t
            omega = omega @ Bt
            cross += float(np.einsum("ij,ij->", m[:k], m[:k]))
            quad += float(np.einsum("ij,ij->", m[:k] @ S, m[:k]))
    return cross, quad
