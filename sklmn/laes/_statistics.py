"""The statistics LAES is fitted from: the rescaling of tiny or huge inputs
and the Gram statistics (lag moments of Ξ) accumulated over the batches of
``partial_fit`` and shifted to the final mean."""

from __future__ import annotations

import math

import numpy as np

from ..utils.sequences import lengths_to_mask
from ._xi import xi_lag_moments

#: The Gram solver refuses Gram matrices with more columns than this (2 GiB).
GRAM_LIMIT_COLUMNS = 16384


def _check_magnitude(seqs) -> None:
    """Reject sequences whose lag moments would overflow float64."""
    if seqs.data.size == 0:
        return
    largest = float(np.max(np.abs(seqs.data)))
    # every entry of ΞᵀΞ (and ||Ξ||²) sums at most n_steps * L * a squares of
    # (centered: up to twice) the largest value
    terms = 4.0 * max(seqs.n_steps_total, 1) * seqs.n_timesteps * seqs.n_features
    limit = float(np.sqrt(np.finfo(np.float64).max / terms))
    if largest > limit:
        raise ValueError(
            f"X has values too large for LAES: max |X| = {largest:.4g}, above "
            f"{limit:.4g}, where the lag moments of these sequences overflow "
            "float64. Rescale X (e.g. with SequenceStandardScaler)."
        )


#: magnitudes outside this range are rescaled (by an exact power of two)
#: before the second moments are taken: their squares would underflow or
#: overflow float64
_TINY, _HUGE = 2.0**-200, 2.0**200


def _rescaling(data: np.ndarray) -> float:
    """1, or a power of two near ``max |data|`` when it is tiny or huge."""
    largest = float(np.max(np.abs(data), initial=0.0))
    if largest == 0 or (_TINY <= largest <= _HUGE) or not np.isfinite(largest):
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)  # at most largest


def _subtract_mean(data: np.ndarray, lengths: np.ndarray, mean: np.ndarray) -> None:
    """Subtract ``mean`` at valid steps only, in place (padding stays 0, not -mean)."""
    data[lengths_to_mask(lengths, data.shape[1])] -= mean


def accumulate_gram(
    state: dict | None, seqs, weights=None, scale=1.0, *, center: bool, verbose=0
) -> dict:
    """``state`` (untouched; None before the first batch) plus the (weighted)
    lag moments of a batch: a new dict.

    Moments are taken about a fixed ``origin`` (the first batch's mean when
    ``center``, for numerical accuracy); :func:`centered_gram` shifts them to
    the final mean. They are moments of ``X / scale`` (``"scale"``, a power
    of two; 1 unless the first batch is tiny or huge).
    """
    if state is not None:
        state = dict(state)  # the fitted state is never modified in place
    data, lengths = seqs.data, seqs.lengths  # fresh copy
    T, a = seqs.n_timesteps, seqs.n_features
    n_columns = a * max(T, 0 if state is None else state["n_lags"])
    if n_columns > GRAM_LIMIT_COLUMNS:
        raise ValueError(
            f"The Gram solver (used by partial_fit) would build ΞᵀΞ of size "
            f"{n_columns} x {n_columns} (max_length * n_features), more than "
            f"the limit of {GRAM_LIMIT_COLUMNS}; use fit with "
            "solver='matrix_free' instead."
        )
    if state is None:
        origin = data[seqs.mask].mean(axis=0) if center else np.zeros(a)
        state = {"origin": origin, "n_lags": 0, "gram": None, "sum": np.zeros(a)}
        state.update(s1=None, count=None, n_steps=0)
        if scale != 1.0:
            state["scale"] = float(scale)
    if center:
        _subtract_mean(data, lengths, state["origin"])
    L = max(state["n_lags"], T)
    mom = xi_lag_moments(
        data,
        lengths,
        L,
        with_sums=center,
        weights=weights,
        progress=bool(verbose),
    )
    if state["gram"] is not None:
        Lo = state["n_lags"]
        mom["gram"][:Lo, :, :Lo, :] += state["gram"]
        if center:
            mom["s1"][:Lo, :Lo] += state["s1"]
            mom["count"][:Lo, :Lo] += state["count"]
    state["gram"] = mom["gram"]
    state["s1"] = mom.get("s1")
    state["count"] = mom.get("count")
    state["n_lags"] = L
    step_weight = np.ones(seqs.n_steps_total)
    if weights is not None:
        step_weight = np.repeat(weights, lengths)
    # weighted number of steps ("weight"; older states count steps)
    state["weight"] = state.get("weight", state["n_steps"]) + step_weight.sum()
    state["sum"] = state["sum"] + step_weight @ data[seqs.mask]
    state["n_steps"] += seqs.n_steps_total
    if not (
        np.isfinite(state["gram"]).all()
        and np.isfinite(state["sum"]).all()
        and np.isfinite(state["weight"])
    ):
        raise ValueError(
            "The accumulated statistics of X overflow float64 (the lag "
            "moments of all the batches seen by partial_fit): the values of "
            "X are too large for their number. Rescale X (e.g. with "
            "SequenceStandardScaler)."
        )
    return state


def centered_gram(state: dict, *, center: bool) -> tuple[np.ndarray, np.ndarray]:
    """The Gram matrix ``ΞᵀΞ`` of shape ``(L * a, L * a)`` and the mean of
    the accumulated statistics ``state``, about the final mean when
    ``center``."""
    L, a = state["n_lags"], state["origin"].shape[0]
    gram = state["gram"]
    mean = state["origin"].copy()
    if center:
        # Gram of (z - delta) from moments of z = x - origin, see
        # xi_lag_moments: G - s1 deltaᵀ - delta s1ᵀ + count delta deltaᵀ
        delta = state["sum"] / state.get("weight", state["n_steps"])
        s1, count = state["s1"], state["count"]
        gram = (
            gram
            - np.einsum("ijc,d->icjd", s1, delta)
            - np.einsum("c,jid->icjd", delta, s1)
            + np.einsum("ij,c,d->icjd", count, delta, delta)
        )
        mean += delta
    gram = gram.reshape(L * a, L * a)
    return gram, mean
