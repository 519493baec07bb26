"""Metrics of the sequence tasks of the LMN papers.

* :func:`frame_level_accuracy`: the polyphonic-music metric of Bay et al.
  (2009) used in Carta et al. 2021 §5.1, ``ΣTP / Σ(TP + FP + FN)`` over all frames;
* :func:`normalized_mse`: ``Σ(y - ŷ)² / Σ(y - ȳ)²`` (Carta et al. 2021 §5.4).

Both accept flat arrays of frames / samples, NaN-padded 3-D arrays
``(n_sequences, n_timesteps, k)`` (trailing all-NaN steps are padding, as in
:func:`sklmn.utils.sequences.check_sequences`) and ragged lists of per-sequence
arrays; padding never contributes.

Scorers for per-time-step targets (``target='timestep'``), usable as
``scoring=`` in cross-validation and searches:

* :func:`get_timestep_scorer`: any scikit-learn scorer name (``'accuracy'``,
  ``'f1_macro'``, ``'neg_log_loss'``, ``'r2'``...) or scorer, applied to the
  valid time steps of all sequences pooled;
* :func:`make_timestep_scorer`: the same from a metric function, like
  :func:`sklearn.metrics.make_scorer`;
* :func:`flatten_timesteps`: the pooling itself.

scikit-learn's string scorers cannot be used directly on per-step targets: a
``y`` of shape ``(n, T)`` reads as a multilabel or multi-output target
(``'accuracy'`` then scores whole sequences that are exactly right).
``scoring=None`` (the estimator's ``score``) is correct too.

Metrics of label sequences (transcriptions, ``target='ctc'``):

* :func:`edit_distance`: the Levenshtein distance of two label sequences;
* :func:`label_error_rate`: total edit distance over total reference length,
  the label error rate of Graves et al. (2006); one minus it is the
  "best-path accuracy" of Carta et al. (2020a) under greedy decoding;
* :data:`label_accuracy_scorer`: ``1 - label_error_rate`` as a scorer.

A metric of speech waveforms (Helfrich & Ye 2020 score the TIMIT spectra of
their Table 1 with it):

* :func:`short_time_objective_intelligibility`: STOI, the intelligibility
  measure of Taal et al. (2011), between a clean and a processed waveform.
"""

from __future__ import annotations

from math import gcd
from numbers import Integral

import numpy as np
from scipy.signal import resample_poly
from sklearn.metrics import get_scorer, make_scorer

from .utils._compat import _BaseScorer, _check_response_method, _Scorer
from .utils.sequences import check_sequences

__all__ = [
    "edit_distance",
    "flatten_timesteps",
    "frame_level_accuracy",
    "get_timestep_scorer",
    "label_accuracy_scorer",
    "label_error_rate",
    "make_timestep_scorer",
    "normalized_mse",
    "short_time_objective_intelligibility",
]


def _is_list_of_sequences(y) -> bool:
    if isinstance(y, np.ndarray):
        return y.dtype == object and y.ndim == 1
    return (
        isinstance(y, list | tuple)
        and len(y) > 0
        and all(isinstance(item, np.ndarray) for item in y)
    )


def _valid_rows(y, input_name: str, *, flat_ndim: int) -> tuple[np.ndarray, object]:
    """Rows (frames / samples) of ``y`` as a 2-D float array, and its layout.

    Returns the concatenated valid rows ``(n_rows, k)`` and the sequence
    lengths (None for flat inputs) so two inputs can be compared.
    """
    if _is_list_of_sequences(y) or np.ndim(y) == 3:
        seqs = check_sequences(y, input_name=input_name)
        return seqs.data[seqs.mask], seqs.lengths
    arr = np.asarray(y)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{input_name} must be numeric, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim == 0 or arr.ndim > flat_ndim:
        raise ValueError(
            f"{input_name} must be a {flat_ndim}-D array, a 3-D padded array or a "
            f"list of sequences, got an array of shape {arr.shape}."
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.shape[0] == 0:
        raise ValueError(f"{input_name} is empty.")
    if not np.isfinite(arr).all():
        raise ValueError(
            f"Input {input_name} contains NaN or infinity; NaN is only read as "
            "padding in 3-D arrays and lists of sequences."
        )
    return arr, None


def _paired_rows(y_true, y_pred, *, flat_ndim: int) -> tuple[np.ndarray, np.ndarray]:
    true, true_lengths = _valid_rows(y_true, "y_true", flat_ndim=flat_ndim)
    pred, pred_lengths = _valid_rows(y_pred, "y_pred", flat_ndim=flat_ndim)
    if (true_lengths is None) != (pred_lengths is None) or (
        true_lengths is not None and not np.array_equal(true_lengths, pred_lengths)
    ):
        raise ValueError(
            "y_true and y_pred must have the same layout and sequence lengths; "
            f"got lengths {None if true_lengths is None else true_lengths.tolist()} "
            f"and {None if pred_lengths is None else pred_lengths.tolist()}."
        )
    if true.shape != pred.shape:
        raise ValueError(
            f"y_true and y_pred have different shapes: {true.shape} (valid rows "
            f"x outputs) vs {pred.shape}."
        )
    return true, pred


def _frame_level_accuracy_counts(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    zero_division: float = 1.0,
    sample_weight=None,
) -> float:
    """ΣTP / Σ(TP + FP + FN) of two binary arrays of the same shape; with
    ``sample_weight`` (one weight per row) the counts of every row are
    weighted."""
    true = y_true.astype(bool)
    pred = y_pred.astype(bool)
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64).reshape(len(true), -1)
        tp = float(np.sum(w * (true & pred).reshape(len(true), -1)))
        errors = float(np.sum(w * (true != pred).reshape(len(true), -1)))
    else:
        tp = np.count_nonzero(true & pred)
        errors = np.count_nonzero(true != pred)  # FP + FN
    if tp + errors == 0:
        return float(zero_division)
    return float(tp / (tp + errors))


def frame_level_accuracy(y_true, y_pred, *, zero_division: float = 1.0) -> float:
    """Frame-level accuracy of multilabel sequence predictions (Bay et al., 2009).

    ``ACC = ΣTP / Σ(TP + FP + FN)``, the counts summed over every label of
    every valid frame of every sequence (Carta et al. 2021 §5.1, piano-roll
    transcription). True negatives do not count, so predicting silence
    everywhere scores 0 whenever notes are played.

    Parameters
    ----------
    y_true : array-like of shape (n_frames, n_labels) or \
            (n_sequences, n_timesteps, n_labels), or list of array-like
        Binary indicators (0/1). 3-D arrays may be NaN-padded (trailing
        all-NaN steps are padding); lists of ndarrays hold one ``(T_i, n_labels)``
        array per sequence (nested Python lists are read as one array).
    y_pred : array-like
        Binary predictions in the same layout as ``y_true``.
    zero_division : float, default=1.0
        Value returned when no label is active in either ``y_true`` or
        ``y_pred`` (a perfect prediction of silence).

    Returns
    -------
    accuracy : float
        In ``[0, 1]``.

    Examples
    --------
    >>> from sklmn.metrics import frame_level_accuracy
    >>> y_true = [[1, 0, 1], [0, 1, 0]]
    >>> y_pred = [[1, 1, 0], [0, 1, 0]]
    >>> frame_level_accuracy(y_true, y_pred)  # TP=2, FP=1, FN=1
    0.5

    Ragged sequences (lists of ``(T_i, n_labels)`` arrays):

    >>> import numpy as np
    >>> y_true = [np.array([[1, 0], [1, 1]]), np.array([[0, 1]])]
    >>> y_pred = [np.array([[1, 0], [0, 1]]), np.array([[0, 1]])]
    >>> frame_level_accuracy(y_true, y_pred)  # TP=3, FN=1
    0.75
    """
    true, pred = _paired_rows(y_true, y_pred, flat_ndim=2)
    for name, values in (("y_true", true), ("y_pred", pred)):
        bad = ~np.isin(values, (0.0, 1.0))
        if bad.any():
            raise ValueError(
                f"{name} must hold binary indicators (0/1); found {values[bad][0]!r}."
            )
    return _frame_level_accuracy_counts(true, pred, zero_division)


def normalized_mse(y_true, y_pred) -> float:
    """Normalized mean squared error ``Σ(y - ŷ)² / Σ(y - ȳ)²``.

    ``ȳ`` is the mean of ``y_true`` (per output); the value is the squared
    error relative to always predicting that mean (Carta et al. 2021 §5.4 sequence
    generation), i.e. ``1 - R²`` for a single output. 0 is perfect.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs), \
            or (n_sequences, n_timesteps, n_outputs), or list of array-like
        Targets. 3-D arrays may be NaN-padded (trailing all-NaN steps are
        padding); lists of ndarrays hold one ``(T_i,)`` or ``(T_i, n_outputs)``
        array per sequence (nested Python lists are read as one array).
    y_pred : array-like
        Predictions in the same layout as ``y_true``.

    Returns
    -------
    nmse : float
        ``inf`` when ``y_true`` is constant and the prediction is not exact,
        0.0 when both errors are zero.

    Examples
    --------
    >>> from sklmn.metrics import normalized_mse
    >>> normalized_mse([1.0, 2.0, 3.0], [1.0, 2.0, 2.0])  # 1 / 2
    0.5

    Ragged sequences (lists of arrays); ȳ = 1.5 over the four valid steps:

    >>> import numpy as np
    >>> y_true = [np.array([0.0, 1.0, 2.0]), np.array([3.0])]
    >>> y_pred = [np.array([0.0, 1.0, 2.0]), np.array([2.0])]
    >>> normalized_mse(y_true, y_pred)  # 1 / 5
    0.2
    """
    true, pred = _paired_rows(y_true, y_pred, flat_ndim=2)
    error = float(np.sum((true - pred) ** 2))
    spread = float(np.sum((true - true.mean(axis=0)) ** 2))
    if spread == 0.0:
        return 0.0 if error == 0.0 else float("inf")
    return error / spread


def _padded_steps(pred: np.ndarray) -> np.ndarray:
    """True at the padded steps of a per-step prediction ``(n, T[, k])``."""
    if pred.dtype == object:
        missing = np.vectorize(lambda v: v is None, otypes=[bool])(pred)
    elif pred.dtype.kind == "f":
        missing = np.isnan(pred)
    else:
        return np.zeros(pred.shape[:2], dtype=bool)
    return missing.reshape(pred.shape[0], pred.shape[1], -1).all(axis=2)


def flatten_timesteps(y_true, y_pred, sample_weight=None):
    """Pool the valid time steps of per-step targets and predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_sequences, n_timesteps[, k]) or list of \
            array-like
        Per-step targets in the layout that sklmn estimators with
        ``target='timestep'`` take (a padded array, anything at padded steps,
        or one ``(T_i[, k])`` array per sequence).
    y_pred : ndarray or list of ndarray
        Per-step predictions (``predict``, ``predict_proba``...) of such an
        estimator: padded steps are NaN (None for non-numeric labels) in a
        padded array, absent from a list. Padding is trailing: a missing
        step before a valid one, or a sequence with no valid step, is a
        non-finite prediction and raises a ValueError.
    sample_weight : array-like of shape (n_sequences,), default=None
        Weight of every sequence, given to each of its valid steps.

    Returns
    -------
    y_true_steps : ndarray of shape (n_valid_steps[, k])
    y_pred_steps : ndarray of shape (n_valid_steps[, n_outputs])
    step_weight : ndarray of shape (n_valid_steps,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.metrics import flatten_timesteps
    >>> y_true = np.array([[0, 1, 1], [1, 0, -1]])  # -1: padding filler
    >>> y_pred = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, np.nan]])
    >>> true, pred, weight = flatten_timesteps(y_true, y_pred, [1.0, 2.0])
    >>> true.tolist(), pred.tolist(), weight.tolist()
    ([0, 1, 1, 1, 0], [0.0, 1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 2.0, 2.0])
    """
    if isinstance(y_pred, list | tuple):
        preds = [np.asarray(p) for p in y_pred]
        if len(y_true) != len(preds):
            raise ValueError(
                f"y_true has {len(y_true)} sequences but y_pred has {len(preds)}."
            )
        trues = [np.asarray(t) for t in y_true]
        lengths = np.array([len(p) for p in preds], dtype=np.int64)
        for i, (t, p) in enumerate(zip(trues, preds, strict=True)):
            if len(t) < len(p):
                raise ValueError(
                    f"y_true[{i}] has {len(t)} time steps but y_pred[{i}] has {len(p)}."
                )
        true = np.concatenate([t[: len(p)] for t, p in zip(trues, preds, strict=True)])
        pred = np.concatenate(preds)
    else:
        pred = np.asarray(y_pred)
        if pred.ndim < 2:
            raise ValueError(
                f"y_pred must hold per-time-step predictions (n_sequences, "
                f"n_timesteps[, n_outputs]) or a list of per-sequence arrays, got "
                f"an array of shape {pred.shape}; timestep scorers are for "
                "estimators with target='timestep'."
            )
        valid = ~_padded_steps(pred)
        lengths = valid.sum(axis=1)
        # padding is trailing and every sequence has a valid step: any other
        # missing step is a NaN prediction, not padding (never dropped)
        gaps = valid[:, :-1] < valid[:, 1:]  # a missing step before a valid one
        if (lengths == 0).any() or gaps.any():
            i = int(np.flatnonzero((lengths == 0) | gaps.any(axis=1))[0])
            t = int(np.argmin(valid[i])) if valid.shape[1] else 0
            raise ValueError(
                f"y_pred is missing (NaN or None) at time step {t} of sequence "
                f"{i}, which is not padding (padded steps are trailing and every "
                "sequence has a valid step): the predictions are not finite."
            )
        if isinstance(y_true, list | tuple) or (
            isinstance(y_true, np.ndarray) and y_true.dtype == object
        ):
            # one target array per sequence (ragged, as ``fit`` takes them)
            # beside padded predictions (a padded X): each one's valid steps
            trues = [np.asarray(t) for t in y_true]
            if len(trues) != pred.shape[0]:
                raise ValueError(
                    f"y_true has {len(trues)} sequences but the per-step "
                    f"predictions have {pred.shape[0]} (shape {pred.shape})."
                )
            parts = []
            for i, (t, v) in enumerate(zip(trues, valid, strict=True)):
                steps = np.flatnonzero(v)
                if t.ndim == 0:
                    raise ValueError(
                        f"y_true[{i}] must be the per-step targets of sequence "
                        f"{i} (an array of shape (T_i[, k])), got {t!r:.60}."
                    )
                if len(steps) and steps[-1] >= len(t):
                    raise ValueError(
                        f"y_true[{i}] has {len(t)} time steps but the "
                        f"predictions have {steps[-1] + 1}."
                    )
                parts.append(t[steps])
            true = np.concatenate(parts)
        else:
            true = np.asarray(y_true)
            if true.ndim < 2 or true.shape[0] != pred.shape[0]:
                raise ValueError(
                    f"y_true of shape {true.shape} does not match the per-step "
                    f"predictions of shape {pred.shape}."
                )
            if true.shape[1] < pred.shape[1]:
                raise ValueError(
                    f"y_true has {true.shape[1]} time steps but the predictions "
                    f"have {pred.shape[1]}."
                )
            true = true[:, : pred.shape[1]][valid]
        pred = pred[valid]
    weight = None
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (len(lengths),):
            raise ValueError(
                f"sample_weight must have shape ({len(lengths)},) (one weight per "
                f"sequence), got {sample_weight.shape}."
            )
        weight = np.repeat(sample_weight, lengths)
    return true, pred, weight


class _TimestepScorer(_Scorer):
    """A scikit-learn scorer whose metric sees the pooled valid time steps."""

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        method = _check_response_method(estimator, self._response_method)
        y_pred = method(X)
        sample_weight = kwargs.pop("sample_weight", None)
        true, pred, weight = flatten_timesteps(y_true, y_pred, sample_weight)
        scoring_kwargs = {**self._kwargs, **kwargs}
        if weight is not None:
            scoring_kwargs["sample_weight"] = weight
        name = getattr(method, "__name__", "")
        classes = getattr(estimator, "classes_", None)
        if name in ("predict_proba", "predict_log_proba") and classes is not None:
            if pred.ndim == 2 and pred.shape[1] == 2 and len(classes) == 2:
                # binary: the positive class's column, as scikit-learn's
                # scorers: the scorer's pos_label, else the metric's default
                # pos_label (1 for average_precision_score), else the
                # greater class
                pos_label = scoring_kwargs.get("pos_label", self._get_pos_label())
                if pos_label is None:
                    pos_label = classes[-1]
                if pos_label not in list(classes):
                    raise ValueError(
                        f"pos_label={pos_label!r} is not a class of the estimator; "
                        f"it should be one of {list(classes)!r}."
                    )
                pred = pred[:, list(classes).index(pos_label)]
        return self._sign * self._score_func(true, pred, **scoring_kwargs)


def make_timestep_scorer(
    score_func, *, response_method="predict", greater_is_better=True, **kwargs
):
    """Make a scorer for per-time-step targets from a metric function.

    Like :func:`sklearn.metrics.make_scorer`, but the metric receives the
    targets and predictions of the valid time steps of all sequences pooled
    (see :func:`flatten_timesteps`), and per-sequence ``sample_weight`` is
    given to each step. For binary classifiers and ``predict_proba`` the
    metric gets the positive class's column, as with scikit-learn's scorers.

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_pred, **kwargs)`` on flat arrays.
    response_method : str or list of str, default="predict"
        Estimator method giving ``y_pred`` (e.g. ``"predict_proba"``).
    greater_is_better : bool, default=True
        False for losses (the scorer returns their negation).
    **kwargs
        Passed to ``score_func``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)``, for ``scoring=`` of cross-validation and
        searches (supports ``set_score_request`` for metadata routing).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import f1_score
    >>> from sklmn.estimators import RNNClassifier
    >>> from sklmn.metrics import make_timestep_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(20, 6, 1)
    >>> y = (X[..., 0] > 0).astype(int)  # one label per time step
    >>> clf = RNNClassifier(hidden_size=4, target="timestep", max_iter=5,
    ...                     random_state=0).fit(X, y)
    >>> scorer = make_timestep_scorer(f1_score, average="macro")
    >>> 0.0 <= scorer(clf, X, y) <= 1.0
    True
    """
    sign = 1 if greater_is_better else -1
    return _TimestepScorer(score_func, sign, kwargs, response_method)


def get_timestep_scorer(scoring):
    """The per-time-step version of a scikit-learn scorer.

    Parameters
    ----------
    scoring : str or scorer
        A name of :func:`sklearn.metrics.get_scorer_names` (``'accuracy'``,
        ``'balanced_accuracy'``, ``'f1_macro'``, ``'neg_log_loss'``,
        ``'r2'``, ``'neg_mean_squared_error'``...) or a scorer made by
        :func:`sklearn.metrics.make_scorer`.

    Returns
    -------
    scorer : callable
        The same metric, response method and sign, on the pooled valid time
        steps (see :func:`make_timestep_scorer`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklmn import RNNClassifier
    >>> from sklmn.metrics import get_timestep_scorer
    >>> X = np.random.RandomState(0).randn(30, 6, 1)
    >>> y = (X[..., 0] > 0).astype(int)
    >>> clf = RNNClassifier(hidden_size=4, target="timestep", max_iter=5,
    ...                     random_state=0)
    >>> scores = cross_val_score(clf, X, y, cv=3,
    ...                          scoring=get_timestep_scorer("neg_log_loss"))
    >>> bool((scores < 0).all())
    True
    """
    if isinstance(scoring, _TimestepScorer):
        return scoring
    base = get_scorer(scoring) if isinstance(scoring, str) else scoring
    if not isinstance(base, _BaseScorer) or not hasattr(base, "_response_method"):
        raise ValueError(
            f"scoring must be a scorer name or a scorer made by make_scorer, got "
            f"{scoring!r}; for a metric function use make_timestep_scorer."
        )
    return _TimestepScorer(
        base._score_func, base._sign, dict(base._kwargs), base._response_method
    )


def _edit_distance(a, b) -> int:
    """Levenshtein distance of two sequences of hashable items."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, z in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != z))
            )
        previous = current
    return previous[-1]


def _as_label_sequence(item, name: str) -> tuple:
    if isinstance(item, str):
        return tuple(str(item))
    if isinstance(item, np.ndarray):
        if item.ndim != 1:
            raise ValueError(
                f"{name} must be a string or a 1-D sequence of labels, "
                f"got an array of shape {item.shape}."
            )
        return tuple(item.tolist())
    if isinstance(item, list | tuple):
        return tuple(item)
    raise ValueError(
        f"{name} must be a string or a sequence of labels, got "
        f"{item!r:.60} of type {type(item).__name__}."
    )


def _label_sequences(y, input_name: str) -> list[tuple]:
    if not isinstance(y, str | list | tuple | np.ndarray) and hasattr(y, "__array__"):
        # array-likes such as a pandas Series of strings, as ``fit`` takes
        # them (and cross-validation passes them on)
        y = list(y) if np.ndim(y) == 1 else np.asarray(y)
    if isinstance(y, str) or not isinstance(y, list | tuple | np.ndarray):
        raise ValueError(
            f"{input_name} must be a list of label sequences (strings or lists of "
            f"labels), got {type(y).__name__}."
        )
    return [_as_label_sequence(item, f"{input_name}[{i}]") for i, item in enumerate(y)]


def edit_distance(a, b) -> int:
    """Edit (Levenshtein) distance between two label sequences.

    The fewest insertions, deletions and substitutions of single labels that
    turn one sequence into the other.

    Parameters
    ----------
    a, b : str or sequence of hashable
        Label sequences (a string is the sequence of its characters).

    Returns
    -------
    distance : int

    See Also
    --------
    label_error_rate : Total edit distance over total reference length.

    Examples
    --------
    >>> from sklmn.metrics import edit_distance
    >>> edit_distance("kitten", "sitting")
    3
    >>> edit_distance([1, 2, 3], [1, 3])
    1
    """
    return _edit_distance(_as_label_sequence(a, "a"), _as_label_sequence(b, "b"))


def label_error_rate(y_true, y_pred, *, sample_weight=None) -> float:
    """Label error rate of transcriptions (Graves et al. 2006).

    ``Σ_i w_i ED(y_true[i], y_pred[i]) / Σ_i w_i len(y_true[i])``: the total
    edit distance of the predicted label sequences to the references over
    the total length of the references (the label error rate of Graves et
    al. 2006, with the edit distance of :func:`edit_distance`). One minus
    it is the "best-path accuracy" of Carta et al. (2020a) when ``y_pred``
    comes from best-path decoding, what the ``score`` of a sequence
    classifier with ``target='ctc'`` returns. It can exceed 1 (many
    insertions).

    Parameters
    ----------
    y_true : list, 1-D array or pandas Series of str or of sequences of labels
        Reference label sequences (a string is the sequence of its
        characters).
    y_pred : list, 1-D array or pandas Series of str or of sequences of labels
        Predicted label sequences.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of every sequence (multiplies its edit distance and its
        reference length).

    Returns
    -------
    rate : float
        0 for perfect transcriptions.

    Raises
    ------
    ValueError
        If the references have no label at all (total weighted length 0).

    See Also
    --------
    edit_distance : The edit distance of two sequences.

    Examples
    --------
    >>> from sklmn.metrics import label_error_rate
    >>> label_error_rate(["hello", "world"], ["helo", "word"])
    0.2
    >>> label_error_rate([[1, 2], [3]], [[1, 2], [3, 3]])
    0.3333333333333333
    """
    true = _label_sequences(y_true, "y_true")
    pred = _label_sequences(y_pred, "y_pred")
    if len(true) != len(pred):
        raise ValueError(
            f"y_true and y_pred have inconsistent numbers of sequences: "
            f"{len(true)} and {len(pred)}."
        )
    if not true:
        raise ValueError("y_true is empty: the label error rate needs sequences.")
    errors = np.array([_edit_distance(t, p) for t, p in zip(true, pred, strict=True)])
    lengths = np.array([len(t) for t in true])
    if sample_weight is None:
        weight = np.ones(len(true))
    else:
        weight = np.asarray(sample_weight, dtype=np.float64)
        if weight.shape != (len(true),):
            raise ValueError(
                f"sample_weight must be a finite array of shape ({len(true)},), "
                f"got shape {weight.shape}."
            )
        bad = ~np.isfinite(weight) | (weight < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                "sample_weight must be finite and non-negative, got "
                f"sample_weight[{i}] = {float(weight[i])!r}."
            )
    total = float(np.dot(weight, lengths))
    if not total > 0:
        raise ValueError(
            "The label error rate is undefined: the reference label sequences "
            "y_true (weighted by sample_weight) have total length 0."
        )
    return float(np.dot(weight, errors)) / total


def _label_accuracy(y_true, y_pred, *, sample_weight=None) -> float:
    return 1.0 - label_error_rate(y_true, y_pred, sample_weight=sample_weight)


#: Scorer of transcriptions: ``1 - label_error_rate(y, estimator.predict(X))``
#: (the best-path accuracy of Carta et al. 2020a with greedy decoding), the
#: same as the ``score`` of a classifier with ``target='ctc'``; for
#: ``scoring=`` in cross-validation and searches (use a ``KFold``: the
#: label sequences are not classes to stratify).
label_accuracy_scorer = make_scorer(_label_accuracy)


# --- short-time objective intelligibility (Taal et al. 2011) ---------------

#: STOI's constants (Taal, Hendriks, Heusdens & Jensen 2011, §II): the
#: sample rate of the analysis, the frame of the silence removal and of the
#: STFT (50% overlap), the FFT size, the one-third octave bands, the
#: segment of N frames (384 ms), the clipping bound beta and the dynamic
#: range of the silent-frame removal.
_STOI_RATE = 10_000
_STOI_FRAME = 256
_STOI_FFT = 512
_STOI_BANDS = 15
_STOI_LOWEST_CENTRE = 150.0
_STOI_SEGMENT = 30
_STOI_BETA = -15.0
_STOI_RANGE = 40.0
_STOI_EPS = np.finfo(np.float64).eps


def _stoi_window() -> np.ndarray:
    """The Hann window of the algorithm, without its zero end points."""
    return np.hanning(_STOI_FRAME + 2)[1:-1]


def _stoi_signal(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D waveform, got an array of shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds non-finite samples (NaN or inf).")
    return arr


def _stoi_frames(x: np.ndarray) -> np.ndarray:
    """Windowed frames of ``x`` (hop of half a frame), shape (n_frames, 256)."""
    hop = _STOI_FRAME // 2
    n = (len(x) - _STOI_FRAME) // hop + 1
    if n < 1:
        return np.zeros((0, _STOI_FRAME))
    idx = np.arange(_STOI_FRAME)[None, :] + hop * np.arange(n)[:, None]
    return x[idx] * _stoi_window()


def _stoi_remove_silence(x: np.ndarray, y: np.ndarray):
    """Drop the frames more than 40 dB below the loudest frame of ``x``.

    Both signals lose the same frames; each is rebuilt from its kept
    windowed frames by overlap-add.
    """
    fx, fy = _stoi_frames(x), _stoi_frames(y)
    if not len(fx):  # shorter than one frame: the caller reports too few
        return np.zeros(0), np.zeros(0)
    energy = 20 * np.log10(np.linalg.norm(fx, axis=1) + _STOI_EPS)
    keep = energy > energy.max() - _STOI_RANGE
    fx, fy = fx[keep], fy[keep]
    hop = _STOI_FRAME // 2
    length = (len(fx) - 1) * hop + _STOI_FRAME if len(fx) else 0
    out_x, out_y = np.zeros(length), np.zeros(length)
    for i, (a, b) in enumerate(zip(fx, fy, strict=True)):
        out_x[i * hop : i * hop + _STOI_FRAME] += a
        out_y[i * hop : i * hop + _STOI_FRAME] += b
    return out_x, out_y


def _stoi_band_matrix() -> np.ndarray:
    """0/1 matrix (15, 257) grouping the DFT bins into one-third octave bands.

    Band ``j`` has the centre frequency ``150 * 2**(j/3)`` Hz and the edges
    ``centre * 2**(-1/6)`` and ``centre * 2**(1/6)``, each moved to the
    nearest DFT bin; a band holds the bins from its lower edge up to (not
    including) its upper edge.
    """
    freqs = np.arange(_STOI_FFT // 2 + 1) * _STOI_RATE / _STOI_FFT
    centres = _STOI_LOWEST_CENTRE * 2.0 ** (np.arange(_STOI_BANDS) / 3.0)
    matrix = np.zeros((_STOI_BANDS, len(freqs)))
    for j, centre in enumerate(centres):
        lo = int(np.argmin(np.abs(freqs - centre * 2.0 ** (-1.0 / 6.0))))
        hi = int(np.argmin(np.abs(freqs - centre * 2.0 ** (1.0 / 6.0))))
        matrix[j, lo:hi] = 1.0
    return matrix


def short_time_objective_intelligibility(clean, processed, *, sample_rate) -> float:
    """Short-time objective intelligibility (STOI) of a processed speech signal.

    The measure of Taal, Hendriks, Heusdens & Jensen (2011), "An algorithm
    for intelligibility prediction of time-frequency weighted noisy speech":
    both signals are resampled to 10 kHz; frames of 256 samples (50%
    overlap, Hann window) more than 40 dB below the loudest frame of the
    clean signal are removed from both; the remaining signals are
    decomposed into 15 one-third octave bands (the lowest centred at
    150 Hz) of a 512-point STFT; in every band the envelope of the
    processed signal over segments of 30 frames (384 ms) is normalized to
    the clean one's energy and clipped to a signal-to-distortion ratio of
    at least -15 dB; the score is the correlation of the clean and
    processed segments, averaged over the bands and segments. Helfrich &
    Ye 2020 score the TIMIT spectra of their Table 1 with it (the
    ``timit-spectra`` experiment, see ``docs/user_guide/papers.md``).

    Parameters
    ----------
    clean : array-like of shape (n_samples,)
        The reference (clean) speech waveform.
    processed : array-like of shape (n_samples,)
        The processed or degraded waveform, time-aligned with ``clean``.
        Only its shape matters, not its level: the score does not change
        when it is multiplied by a positive constant.
    sample_rate : int
        Sample rate of both signals in Hz (a positive integer; the signals
        are resampled to 10 kHz).

    Returns
    -------
    score : float
        Between -1 and 1 (in practice 0 to 1); 1 for a processed signal
        identical to the clean one, near 0 for one unrelated to it.

    Raises
    ------
    ValueError
        When the signals differ in length, hold non-finite samples, the clean
        signal is silent, or fewer than 30 frames (about 0.4 s of speech)
        remain after the silent frames are removed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.metrics import short_time_objective_intelligibility
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(16000) / 8000
    >>> speech = np.sin(2 * np.pi * 220 * t) * (1 + np.sin(2 * np.pi * 3 * t))
    >>> score = short_time_objective_intelligibility(speech, speech, sample_rate=8000)
    >>> round(score, 6)
    1.0
    >>> noisy = speech + rng.normal(scale=3.0, size=speech.shape)
    >>> score = short_time_objective_intelligibility(speech, noisy, sample_rate=8000)
    >>> bool(score < 0.6)
    True
    """
    x = _stoi_signal(clean, "clean")
    y = _stoi_signal(processed, "processed")
    if x.shape != y.shape:
        raise ValueError(
            "clean and processed must have the same number of samples, got "
            f"{len(x)} and {len(y)}."
        )
    if (
        isinstance(sample_rate, bool)
        or not isinstance(sample_rate, Integral)
        or sample_rate <= 0
    ):
        raise ValueError(
            f"sample_rate must be a positive integer (Hz), got {sample_rate!r}."
        )
    if not np.any(x):
        raise ValueError("clean is silent (all samples are zero): STOI is undefined.")
    rate = int(sample_rate)
    if rate != _STOI_RATE:
        common = gcd(rate, _STOI_RATE)
        x = resample_poly(x, _STOI_RATE // common, rate // common)
        y = resample_poly(y, _STOI_RATE // common, rate // common)
    x, y = _stoi_remove_silence(x, y)
    fx, fy = _stoi_frames(x), _stoi_frames(y)
    if len(fx) < _STOI_SEGMENT:
        raise ValueError(
            f"STOI needs at least {_STOI_SEGMENT} frames of {_STOI_FRAME} samples "
            f"at 10 kHz (about 0.4 s) after the silent frames are removed, got "
            f"{len(fx)}: the signals are too short or mostly silent."
        )
    bands = _stoi_band_matrix()
    # band envelopes, shape (15, n_frames)
    ex = np.sqrt(bands @ np.abs(np.fft.rfft(fx, n=_STOI_FFT, axis=1).T) ** 2)
    ey = np.sqrt(bands @ np.abs(np.fft.rfft(fy, n=_STOI_FFT, axis=1).T) ** 2)
    # segments of N frames ending at every frame from the N-th: (15, M, N)
    seg_x = np.lib.stride_tricks.sliding_window_view(ex, _STOI_SEGMENT, axis=1)
    seg_y = np.lib.stride_tricks.sliding_window_view(ey, _STOI_SEGMENT, axis=1)
    gain = np.linalg.norm(seg_x, axis=2, keepdims=True) / (
        np.linalg.norm(seg_y, axis=2, keepdims=True) + _STOI_EPS
    )
    bound = 1.0 + 10.0 ** (-_STOI_BETA / 20.0)
    seg_y = np.minimum(seg_y * gain, bound * seg_x)
    seg_x = seg_x - seg_x.mean(axis=2, keepdims=True)
    seg_y = seg_y - seg_y.mean(axis=2, keepdims=True)
    corr = np.sum(seg_x * seg_y, axis=2) / (
        np.linalg.norm(seg_x, axis=2) * np.linalg.norm(seg_y, axis=2) + _STOI_EPS
    )
    return float(np.mean(corr))
