"""Connectionist temporal classification (Graves et al. 2006): targets,
decoding and the edit-distance counts of the CTC estimators
(``target='ctc'``).

A network with ``n_classes + 1`` outputs per time step reads, after a
softmax, the posteriors of the labels ``classes_`` and of the *blank*
(the last output). A labelling is the image of a frame-wise path by the
collapse map: merge repeated labels, then drop blanks.

* Best-path (greedy) decoding: collapse the most probable output of every
  step (:func:`greedy_decode`).
* Prefix beam search: keep the ``beam_width`` most probable labelling
  prefixes, each with the probabilities of its paths ending in a blank and
  in a label (:func:`beam_decode`); with a beam as wide as the number of
  possible prefixes it is the exact most probable labelling.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ._targets import IGNORE_INDEX

__all__ = [
    "beam_decode",
    "check_label_sequences",
    "ctc_min_length",
    "edit_distance_counts",
    "encode_label_sequences",
    "greedy_decode",
]


def _check_label(label, i: int, input_name: str):
    """A label of a CTC target must be a str or a finite number (not bool)."""
    if isinstance(label, str):
        return label
    if isinstance(label, bool | np.bool_) or not isinstance(label, Real):
        raise ValueError(
            f"{input_name}[{i}] holds the label {label!r} of type "
            f"{type(label).__name__}; the labels of target='ctc' must be "
            "strings or numbers."
        )
    if not math.isfinite(float(label)):
        raise ValueError(
            f"{input_name}[{i}] holds the non-finite label {label!r}; the labels "
            "of target='ctc' must be strings or finite numbers."
        )
    return label


def check_label_sequences(
    y, n_samples: int, *, input_name: str = "y"
) -> tuple[list[tuple], bool]:
    """Validate a CTC target: one label sequence per input sequence.

    Parameters
    ----------
    y : list or 1-D array of str or of sequences of labels
        A string is the sequence of its characters; other items are lists,
        tuples or 1-D arrays of labels (strings or numbers, all of one kind).
    n_samples : int
        Number of sequences of ``X``.
    input_name : str, default="y"
        Name used in error messages.

    Returns
    -------
    labels : list of tuple
        The label sequences (new tuples; ``y`` is not modified).
    all_strings : bool
        Whether every item of ``y`` is a string (predictions are then
        strings too).

    Examples
    --------
    >>> check_label_sequences(["ab", "c"], 2)
    ([('a', 'b'), ('c',)], True)
    >>> check_label_sequences([[1, 2], []], 2)
    ([(1, 2), ()], False)
    """
    if y is None:
        raise ValueError(
            "requires y to be passed, but the target y is None: sequence "
            "estimators are supervised."
        )
    if isinstance(y, str):
        raise ValueError(
            f"{input_name} must be a list of label sequences (one per sequence of "
            f"X) for target='ctc', got the single string {y[:50]!r}."
        )
    if isinstance(y, np.ndarray):
        if y.ndim != 1 and not (y.ndim == 2 and y.dtype.kind in "iuf"):
            raise ValueError(
                f"{input_name} must be a 1-D array or a list of label sequences "
                f"for target='ctc', got an array of shape {y.shape}."
            )
        items = list(y)
    elif isinstance(y, list | tuple):
        items = list(y)
    else:
        raise ValueError(
            f"{input_name} must be a list of label sequences for target='ctc', "
            f"got {type(y).__name__}."
        )
    if len(items) != n_samples:
        raise ValueError(
            f"X and {input_name} have inconsistent numbers of samples: X has "
            f"{n_samples} sequences, {input_name} has {len(items)} label "
            "sequences."
        )
    labels, all_strings, kinds = [], True, set()
    for i, item in enumerate(items):
        if isinstance(item, str):
            seq = tuple(str(item))
            if seq:
                kinds.add("str")
        else:
            all_strings = False
            if isinstance(item, np.ndarray):
                if item.ndim != 1:
                    raise ValueError(
                        f"{input_name}[{i}] must be a string or a 1-D sequence of "
                        f"labels, got an array of shape {item.shape}."
                    )
                item = item.tolist()
            elif not isinstance(item, list | tuple):
                raise ValueError(
                    f"{input_name}[{i}] must be a string or a sequence of labels "
                    f"for target='ctc', got {item!r:.60} of type "
                    f"{type(item).__name__}."
                )
            seq = tuple(_check_label(label, i, input_name) for label in item)
            kinds.update("str" if isinstance(v, str) else "number" for v in seq)
        labels.append(seq)
    if len(kinds) > 1:
        raise ValueError(
            f"The labels of {input_name} mix strings and numbers; use labels of "
            "one kind."
        )
    return labels, all_strings


def ctc_min_length(labels) -> int:
    """Fewest time steps a CTC alignment of ``labels`` needs.

    The length of the labelling plus the number of equal consecutive labels
    (a blank must separate them).

    Examples
    --------
    >>> ctc_min_length("hello"), ctc_min_length(""), ctc_min_length([1, 1, 1])
    (6, 0, 5)
    """
    labels = list(labels)
    repeats = sum(a == b for a, b in zip(labels, labels[1:], strict=False))
    return len(labels) + repeats


def encode_label_sequences(
    labels: list[tuple],
    lengths: np.ndarray,
    *,
    classes=None,
    input_name: str = "y",
    context: str | None = None,
):
    """Encode label sequences as indices into ``classes`` (padded).

    Parameters
    ----------
    labels : list of tuple
        Validated label sequences (:func:`check_label_sequences`).
    lengths : ndarray of shape (n_samples,)
        Lengths of the input sequences, checked against the shortest CTC
        alignment of every label sequence.
    classes : ndarray or None
        Known alphabet (warm start, partial fit, validation, scoring); None
        learns the sorted alphabet.
    input_name : str, default="y"
        Name used in error messages.
    context : str or None
        What the known ``classes`` come from, named in the error for unknown
        labels (e.g. ``'fit'``).

    Returns
    -------
    encoded : ndarray of shape (n_samples, max(1, max_label_length)), int64
        Label indices, :data:`~sklmn.estimators._targets.IGNORE_INDEX` after
        the end of every label sequence.
    classes : ndarray of shape (n_classes,)
    """
    if classes is None:
        flat = [v for seq in labels for v in seq]
        if not flat:
            raise ValueError(
                f"{input_name} holds no label at all (every label sequence is "
                "empty); target='ctc' needs at least one label to learn."
            )
        classes = np.unique(np.asarray(flat))
    index = {label: i for i, label in enumerate(classes.tolist())}
    unknown = sorted(
        {v for seq in labels for v in seq if v not in index}, key=lambda v: str(v)
    )
    if unknown:
        shown = ", ".join(repr(v) for v in unknown[:10])
        more = ", ..." if len(unknown) > 10 else ""
        where = f"in {context}" if context else "before"
        raise ValueError(
            f"{input_name} contains labels not seen {where} ({shown}{more}); the "
            f"alphabet classes_ is {classes.tolist()!r:.300}."
        )
    width = max([1] + [len(seq) for seq in labels])
    encoded = np.full((len(labels), width), IGNORE_INDEX, dtype=np.int64)
    lengths = np.asarray(lengths)
    for i, seq in enumerate(labels):
        encoded[i, : len(seq)] = [index[v] for v in seq]
        need = ctc_min_length(seq)
        if need > int(lengths[i]):
            raise ValueError(
                f"Sequence {i} of X has {int(lengths[i])} time steps, too few for "
                f"its label sequence {input_name}[{i}] of length {len(seq)}: a CTC "
                f"alignment needs at least {need} steps (the labels plus a blank "
                "between every two equal consecutive labels)."
            )
    return encoded, classes


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
        Label indices of every sequence.

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
    from ..metrics import _edit_distance

    refs = [row[row >= 0] for row in np.asarray(encoded)]
    errors = np.array(
        [
            _edit_distance(r.tolist(), d.tolist())
            for r, d in zip(refs, decoded, strict=True)
        ],
        dtype=np.float64,
    )
    return errors, np.array([len(r) for r in refs], dtype=np.float64)
