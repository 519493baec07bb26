"""Decoding of connectionist temporal classification outputs (Graves et al.
2006) and the edit-distance counts of the label error rate.

A network with ``n_classes + 1`` outputs per time step reads, after a
softmax, the posteriors of the labels and of the *blank* (the last output).
A labelling is the image of a frame-wise path by the collapse map: merge
repeated labels, then drop blanks.

* Best-path (greedy) decoding: collapse the most probable output of every
  step (:func:`greedy_decode`).
* Prefix beam search: keep the ``beam_width`` most probable labelling
  prefixes, each with the probabilities of its paths ending in a blank and
  in a label (:func:`beam_decode`); with a beam as wide as the number of
  possible prefixes it is the exact most probable labelling.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from ..metrics import _edit_distance

__all__ = ["beam_decode", "edit_distance_counts", "greedy_decode"]


def greedy_decode(outputs: np.ndarray, lengths, blank: int) -> list[np.ndarray]:
    """Best-path decoding: the most probable output of every valid step,
    repeats merged, blanks dropped.

    Parameters
    ----------
    outputs : ndarray of shape (n_samples, n_timesteps, n_outputs)
        Scores whose argmax is the most probable output (logits, log
        probabilities or probabilities).
    lengths : array-like of shape (n_samples,)
        Valid lengths.
    blank : int
        Index of the blank output.

    Returns
    -------
    labellings : list of ndarray of int64
        Label indices of every sequence.

    Examples
    --------
    >>> import numpy as np
    >>> onehot = np.eye(3)[[[0, 0, 2, 0, 1, 1, 2]]]  # blank = 2
    >>> [p.tolist() for p in greedy_decode(onehot, [7], blank=2)]
    [[0, 0, 1]]
    """
    best = np.asarray(outputs).argmax(axis=-1)
    out = []
    for i, n in enumerate(np.asarray(lengths)):
        path = best[i, : int(n)]
        keep = np.ones(len(path), dtype=bool)
        keep[1:] = path[1:] != path[:-1]
        keep &= path != blank
        out.append(path[keep].astype(np.int64))
    return out


def _logaddexp(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


def _beam_decode_one(log_probs: np.ndarray, blank: int, beam_width: int) -> tuple:
    """Prefix beam search on the log posteriors ``(T, C)`` of one sequence."""
    neg_inf = -math.inf
    # prefix -> [log P(paths ending in blank), log P(paths ending in a label)]
    beams: dict[tuple, list[float]] = {(): [0.0, neg_inf]}
    labels = [c for c in range(log_probs.shape[1]) if c != blank]
    for row in log_probs.tolist():
        new: dict[tuple, list[float]] = {}

        def entry(prefix, new=new):
            value = new.get(prefix)
            if value is None:
                value = new[prefix] = [neg_inf, neg_inf]
            return value

        p_blank = row[blank]
        for prefix, (pb, pnb) in beams.items():
            total = _logaddexp(pb, pnb)
            stay = entry(prefix)
            stay[0] = _logaddexp(stay[0], total + p_blank)
            last = prefix[-1] if prefix else None
            for c in labels:
                p = row[c]
                if p == neg_inf:
                    continue
                extended = entry(prefix + (c,))
                if c == last:
                    # a repeat merges unless a blank separates it
                    stay[1] = _logaddexp(stay[1], pnb + p)
                    extended[1] = _logaddexp(extended[1], pb + p)
                else:
                    extended[1] = _logaddexp(extended[1], total + p)
        ranked = sorted(
            new.items(), key=lambda kv: (-_logaddexp(kv[1][0], kv[1][1]), kv[0])
        )
        beams = dict(ranked[:beam_width])
    return next(iter(beams))  # ranked: the most probable prefix first


def beam_decode(
    log_probs: np.ndarray, lengths, blank: int, beam_width: int
) -> list[np.ndarray]:
    """Prefix beam search decoding of CTC posteriors.

    At every step each kept prefix is extended by every label (or kept, by a
    blank or a repeat), the probabilities of the paths that collapse to the
    same prefix are summed, separately for paths ending in a blank and in a
    label (so that a repeated label after a blank is a new label), and the
    ``beam_width`` most probable prefixes are kept. The result is the most
    probable labelling among the final prefixes: with a beam at least as
    wide as the number of labellings reachable in ``T`` steps, the exact
    most probable labelling.

    Parameters
    ----------
    log_probs : ndarray of shape (n_samples, n_timesteps, n_outputs)
        Log posteriors (log-softmax of the outputs).
    lengths : array-like of shape (n_samples,)
        Valid lengths.
    blank : int
        Index of the blank output.
    beam_width : int
        Prefixes kept at every step.

    Returns
    -------
    labellings : list of ndarray of int64
        Label indices of every sequence, from its most probable beam.

    Examples
    --------
    The best path is the blank at both steps, but the labelling ``[0]``
    (paths ``0 -``, ``- 0`` and ``0 0``) is more probable:

    >>> import numpy as np
    >>> p = np.log([[[0.4, 0.6], [0.4, 0.6]]])  # blank = 1
    >>> [a.tolist() for a in greedy_decode(p, [2], blank=1)]
    [[]]
    >>> [a.tolist() for a in beam_decode(p, [2], blank=1, beam_width=4)]
    [[0]]
    """
    if not isinstance(beam_width, Integral) or beam_width < 1:
        raise ValueError(f"beam_width must be a positive int, got {beam_width!r}.")
    log_probs = np.asarray(log_probs, dtype=np.float64)
    return [
        np.asarray(
            _beam_decode_one(log_probs[i, : int(n)], blank, int(beam_width)),
            dtype=np.int64,
        )
        for i, n in enumerate(np.asarray(lengths))
    ]


def edit_distance_counts(
    encoded: np.ndarray, decoded: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Edit distance of every decoded labelling to its encoded reference, and
    the reference lengths (for the label error rate)."""

    refs = [row[row >= 0] for row in np.asarray(encoded)]
    errors = np.array(
        [
            _edit_distance(r.tolist(), d.tolist())
            for r, d in zip(refs, decoded, strict=True)
        ],
        dtype=np.float64,
    )
    return errors, np.array([len(r) for r in refs], dtype=np.float64)
