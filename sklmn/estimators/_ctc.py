"""Connectionist temporal classification (Graves et al. 2006): the label
sequence targets of the CTC estimators (``target='ctc'``); their decoding
lives in the training layer (``sklmn._training._ctc``).

A network with ``n_classes + 1`` outputs per time step reads, after a
softmax, the posteriors of the labels ``classes_`` and of the *blank*
(the last output).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from .._training._ctc import beam_decode, edit_distance_counts, greedy_decode
from .._training._loss import IGNORE_INDEX

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
    y : list, 1-D array or pandas Series of str or of sequences of labels
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
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()  # a pandas Series (of strings, or of label lists)
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
