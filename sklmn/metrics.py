"""Metrics of the sequence tasks of the LMN papers.

* :func:`frame_level_accuracy`: the polyphonic-music metric of Bay et al.
  (2009) used in Carta et al. 2021 §5.1, ``ΣTP / Σ(TP + FP + FN)`` over all frames;
* :func:`normalized_mse`: ``Σ(y - ŷ)² / Σ(y - ȳ)²`` (Carta et al. 2021 §5.4).

Both accept flat arrays of frames / samples, NaN-padded 3-D arrays
``(n_sequences, n_timesteps, k)`` (trailing all-NaN steps are padding, as in
:func:`sklmn.utils.sequences.check_sequences`) and ragged lists of per-sequence
arrays; padding never contributes.
"""

from __future__ import annotations

import numpy as np

from .utils.sequences import check_sequences

__all__ = ["frame_level_accuracy", "normalized_mse"]


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
    y_true: np.ndarray, y_pred: np.ndarray, zero_division: float = 1.0
) -> float:
    """ΣTP / Σ(TP + FP + FN) of two binary arrays of the same shape."""
    true = y_true.astype(bool)
    pred = y_pred.astype(bool)
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
