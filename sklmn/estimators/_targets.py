"""Validation, encoding and decoding of the targets of the sequence estimators.

Two target layouts, chosen by the estimator's ``target`` parameter (shapes
alone are ambiguous; see the README's input contract):

* ``target='sequence'``: one target per sequence, ``y`` of shape ``(n,)`` or
  ``(n, k)``;
* ``target='timestep'``: one target per valid time step, ``y`` a padded array
  ``(n, T[, k])`` (values at padded steps of ``X`` are ignored, so any filler,
  e.g. NaN, may sit there) or a list of ``(T_i,)`` / ``(T_i, k)`` arrays whose
  lengths equal the lengths of the sequences of ``X``.

Encoded targets (what the torch loss reads):

* ``'multiclass'``: int64 class indices, ``(n,)`` or ``(n, T)``, with
  :data:`IGNORE_INDEX` at padded steps;
* ``'multilabel'`` and ``'continuous'``: float32 ``(n, k)`` or ``(n, T, k)``,
  zero at padded steps (masked out of the loss by the sequence lengths).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_array

from .._training._loss import IGNORE_INDEX
from ..utils.sequences import Sequences

__all__ = [
    "IGNORE_INDEX",
    "check_sequence_target",
    "check_timestep_target",
    "format_steps",
]


def _is_list_of_arrays(y) -> bool:
    if isinstance(y, np.ndarray):
        return (
            y.dtype == object
            and y.ndim == 1
            and len(y) > 0
            and (isinstance(y[0], list | tuple | np.ndarray))
        )
    return isinstance(y, list | tuple)


def check_sequence_target(y, n_samples: int, *, classifier: bool) -> np.ndarray:
    """Validate a sequence-level target ``(n,)`` or ``(n, k)``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Target.
    n_samples : int
        Number of sequences in ``X``.
    classifier : bool
        Classification targets keep their dtype (labels may be strings) and a
        column vector ``(n, 1)`` is raveled with a ``DataConversionWarning``;
        regression targets are converted to float64.

    Returns
    -------
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Validated copy.
    """
    if y is None:
        raise ValueError(
            "requires y to be passed, but the target y is None: sequence "
            "estimators are supervised."
        )
    y = check_array(
        y,
        ensure_2d=False,
        dtype=None if classifier else np.float64,
        ensure_all_finite=True,
        input_name="y",
    )
    if y.ndim not in (1, 2):
        raise ValueError(
            f"y must have shape (n_samples,) or (n_samples, n_outputs) for "
            f"target='sequence', got an array of shape {y.shape}; per-time-step "
            "targets need target='timestep'."
        )
    if y.shape[0] != n_samples:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {n_samples} "
            f"sequences, y has {y.shape[0]} targets."
        )
    if classifier and y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    return np.array(y, copy=True)


def check_timestep_target(y, seqs: Sequences, *, input_name: str = "y"):
    """Validate a per-time-step target against the lengths of ``X``.

    Parameters
    ----------
    y : array-like of shape (n_samples, n_timesteps) or \
            (n_samples, n_timesteps, n_outputs), or list of array-like
        Padded array (only the first ``lengths[i]`` steps of row ``i`` are
        read) or list (or pandas Series) of per-sequence arrays ``(T_i,)`` /
        ``(T_i, n_outputs)`` with ``T_i`` equal to the length of sequence
        ``i`` of ``X``.
    seqs : Sequences
        The validated ``X``.
    input_name : str, default="y"
        Name used in error messages.

    Returns
    -------
    steps : ndarray of shape (n_steps_total,) or (n_steps_total, n_outputs)
        The values at the valid steps of every sequence, concatenated in order.
    has_output_axis : bool
        Whether ``y`` has an output axis ``k``.
    """
    if y is None:
        raise ValueError(
            "requires y to be passed, but the target y is None: sequence "
            "estimators are supervised."
        )
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        # pandas, as for X: a Series of per-sequence arrays (an object
        # array), or a frame of padded steps
        y = y.to_numpy()
    lengths = seqs.lengths
    n = seqs.n_samples
    if _is_list_of_arrays(y):
        if len(y) != n:
            raise ValueError(
                f"X and {input_name} have inconsistent numbers of samples: X has "
                f"{n} sequences, {input_name} has {len(y)}."
            )
        items = [np.asarray(v) for v in y]
        ndims = {a.ndim for a in items}
        if not ndims <= {1, 2} or len(ndims) != 1:
            raise ValueError(
                f"Every item of {input_name} must be an array of shape (T_i,) or "
                f"(T_i, n_outputs), all with the same number of dimensions; got "
                f"dimensions {sorted(ndims)}."
            )
        for i, (a, length) in enumerate(zip(items, lengths, strict=True)):
            if a.shape[0] != length:
                raise ValueError(
                    f"{input_name}[{i}] has {a.shape[0]} time steps but sequence "
                    f"{i} of X has {int(length)}; per-time-step targets need one "
                    "value per valid time step."
                )
        widths = {a.shape[1] for a in items} if ndims == {2} else {None}
        if len(widths) > 1:
            raise ValueError(
                f"Inconsistent numbers of outputs in {input_name}: {sorted(widths)}."
            )
        steps = np.concatenate(items, axis=0)
        has_output_axis = ndims == {2}
    else:
        arr = np.asarray(y)
        if arr.ndim not in (2, 3):
            raise ValueError(
                f"{input_name} must have shape (n_samples, n_timesteps) or "
                f"(n_samples, n_timesteps, n_outputs) for target='timestep' (or "
                f"be a list of per-sequence arrays), got an array of shape "
                f"{arr.shape}."
            )
        if arr.shape[0] != n:
            raise ValueError(
                f"X and {input_name} have inconsistent numbers of samples: X has "
                f"{n} sequences, {input_name} has {arr.shape[0]}."
            )
        if arr.shape[1] < seqs.n_timesteps:
            raise ValueError(
                f"{input_name} has {arr.shape[1]} time steps but the longest "
                f"sequence of X has {seqs.n_timesteps}."
            )
        steps = arr[:, : seqs.n_timesteps][seqs.mask]
        has_output_axis = arr.ndim == 3
    if steps.dtype.kind in "fciub":
        steps = check_array(
            steps,
            ensure_2d=False,
            dtype=None,
            ensure_all_finite=True,
            input_name=input_name,
        )
    return np.array(steps, copy=True), has_output_axis


def pad_steps(steps: np.ndarray, seqs: Sequences, fill) -> np.ndarray:
    """Scatter concatenated valid-step values into a padded array.

    Parameters
    ----------
    steps : ndarray of shape (n_steps_total, ...)
        Values at the valid steps, in order.
    seqs : Sequences
        The validated ``X`` whose lengths define the layout.
    fill : scalar
        Value at padded steps.

    Returns
    -------
    padded : ndarray of shape (n_samples, n_timesteps, ...)
    """
    out = np.full(
        (seqs.n_samples, seqs.n_timesteps) + steps.shape[1:], fill, dtype=steps.dtype
    )
    out[seqs.mask] = steps
    return out


def format_steps(values: np.ndarray, seqs: Sequences):
    """Per-time-step predictions in the layout of the input ``X``.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_timesteps, ...)
        Padded per-step values (anything at padded steps).
    seqs : Sequences
        The validated ``X``.

    Returns
    -------
    out : ndarray or list of ndarray
        A list of ``values[i, :T_i]`` when ``X`` was a list; ``values`` itself
        when every sequence has the full length; else a padded array whose
        padded steps are NaN (numeric values, promoted to float64 if needed)
        or None (other values, e.g. string labels, in an object array).
    """
    if seqs.ragged:
        return [np.array(values[i, : int(t)]) for i, t in enumerate(seqs.lengths)]
    mask = seqs.mask
    if mask.all():
        return values
    if values.dtype.kind in "iubf":
        out = values.astype(np.result_type(values.dtype, np.float64), copy=True)
        out[~mask] = np.nan
    else:
        out = values.astype(object, copy=True)
        out[~mask] = None
    return out


def check_binary_indicator(steps: np.ndarray, input_name: str = "y") -> np.ndarray:
    """Check that a multilabel target only holds 0 and 1; return it as float32."""
    try:
        values = steps.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"Multilabel targets must be binary indicators (0/1), but "
            f"{input_name} has dtype {steps.dtype}."
        ) from None
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"Multilabel targets must be binary indicators (0/1), but {input_name} "
            f"contains {values[bad][0]!r}."
        )
    return values.astype(np.float32)


def encode_labels(
    labels: np.ndarray, *, classes=None, input_name: str = "y", context=None
):
    """Map labels to indices into sorted ``classes``.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Class labels (any sortable type, e.g. int or str).
    classes : ndarray or None
        Known classes (warm start / prediction); None to learn them.
    input_name : str, default="y"
        Name used in error messages.
    context : {None, 'partial_fit', 'y_val'}, default=None
        Caller named in the error for labels not in ``classes`` (None: a warm
        start; 'y_val': the validation target of ``fit``).

    Returns
    -------
    indices : ndarray of shape (n,), dtype int64
    classes : ndarray of shape (n_classes,)
    """
    check_classification_targets(labels)
    if type_of_target(labels) not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type for {input_name}: {type_of_target(labels)!r}."
        )
    learned = np.unique(labels)
    if classes is None:
        classes = learned
        if classes.shape[0] < 2:
            raise ValueError(
                "The classifier needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {classes[:1].tolist()[0]!r}."
            )
    else:
        unknown = np.setdiff1d(learned, classes)
        if unknown.size and context == "y_val":
            raise ValueError(
                f"y_val contains classes {unknown.tolist()!r} that are not in y "
                f"(the training classes {classes.tolist()!r}); the validation "
                "data can only hold classes the model is trained on."
            )
        if unknown.size and context == "partial_fit":
            raise ValueError(
                f"{input_name} contains labels {unknown.tolist()!r} that are not in "
                f"the classes {classes.tolist()!r} of the model (those of fit, or "
                "given on the first call to partial_fit); partial_fit cannot add "
                "classes."
            )
        if unknown.size:
            raise ValueError(
                f"warm_start can only be used where {input_name} has the same "
                f"classes as in the previous call to fit; found new classes "
                f"{unknown.tolist()!r} not in {classes.tolist()!r}."
            )
    return np.searchsorted(classes, labels).astype(np.int64), classes
