"""The preparation of a fit: from the caller's data to what training needs.

:meth:`_FitPreparationMixin._prepare_fit` validates the data, fits the
``standardize`` statistics, turns sample and class weights into loss
weights, holds out the validation data, resolves the step settings and
builds the :class:`~sklmn.training.FitContext`, and returns them as one
:class:`_PreparedFit`; ``fit`` and ``partial_fit`` then build (or copy) the
module and train it (``_BaseSequenceEstimator._fit``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from .._training import FitContext, SequenceDataset
from ..preprocessing import _scale_from_var, _sequence_moments
from ..utils.sequences import Sequences, check_sequence_weights, validate_sequences
from ._auto import auto_batch_size, auto_early_stopping, auto_learning_rate
from ._checks import resolve_device
from ._targets import pad_steps

__all__: list[str] = []


def _valid_entries(weight: np.ndarray, seqs: Sequences) -> np.ndarray:
    """The entries of loss weights that count: every sequence's, or (per-step
    weights of shape ``(n, T)``) the valid steps'."""
    return weight[seqs.mask] if weight.ndim == 2 else weight


def _mean_one(weight: np.ndarray, seqs: Sequences) -> np.ndarray:
    """Loss weights scaled to mean one over their valid entries (as they are
    when all of them are zero)."""
    mean = _valid_entries(weight, seqs).mean()
    return weight / mean if mean > 0 else weight


def _take_sequences(seqs: Sequences, y: np.ndarray, idx: np.ndarray):
    """Sequences ``idx`` of ``seqs`` (same padded length) and their rows of
    the targets ``y``."""
    taken = dataclasses.replace(seqs, data=seqs.data[idx], lengths=seqs.lengths[idx])
    return taken, y[idx]


def _weighted_moments(values: np.ndarray, weights: np.ndarray):
    """Weighted per-column mean, population variance and the number of rows
    of positive weight (for the constant-feature rule of the scalers)."""
    values = values.astype(np.float64)
    mean = np.average(values, axis=0, weights=weights)
    var = np.average((values - mean) ** 2, axis=0, weights=weights)
    return mean, var, int(np.count_nonzero(weights))


@dataclasses.dataclass(frozen=True)
class _PreparedFit:
    """What a ``fit`` or ``partial_fit`` call trains on, and how."""

    #: continue training the fitted module (warm start, later partial_fit)
    warm: bool
    #: all the call's sequences, standardized
    sequences: Sequences
    #: the training data (without the held-out validation sequences)
    dataset: SequenceDataset
    #: the validation data of early stopping, or None
    valid_dataset: SequenceDataset | None
    #: what the plug-ins see (the training part of the data)
    context: FitContext
    device: torch.device
    batch_size: int
    lr: float
    torch_seed: int
    shuffle_seed: int


class _FitPreparationMixin:
    """Validation, standardization, loss weights and the validation split of
    the sequence estimators (mixed into ``_BaseSequenceEstimator``)."""

    def _prepare_fit(
        self,
        X,
        y,
        *,
        incremental: bool,
        sample_weight=None,
        classes=None,
        X_val=None,
        y_val=None,
        sample_weight_val=None,
    ) -> _PreparedFit:
        """Validate the data of a ``fit`` (``incremental=False``) or
        ``partial_fit`` call and prepare everything training needs; the
        statistics, classes and sizes of a new model are set on ``self``."""
        if incremental:
            self._check_partial_fit_parameters()
            warm = hasattr(self, "net_")
            if warm:
                self._check_warm_start(
                    "partial_fit", "call fit to train a new model instead"
                )
        else:
            self._check_validation_data(X_val, y_val, sample_weight_val)
            warm = bool(self.warm_start) and hasattr(self, "net_")
            if warm:
                self._check_warm_start()
        seqs = validate_sequences(self, X, reset=not warm, dtype=np.float32)
        if incremental:
            y_encoded = self._encode_partial_target(
                y, seqs, first=not warm, classes=classes
            )
        else:
            y_encoded = self._encode_target(y, seqs, reset=not warm)
        sample_weight = self._check_weights(sample_weight, seqs)
        class_weight = self._class_weight_vector(y_encoded, seqs)
        weights = self._loss_weights(sample_weight, y_encoded, seqs, class_weight)
        if not warm:
            self._fit_standardization(seqs, y_encoded, sample_weight)
        device = self._resolve_device()
        rng = check_random_state(self.random_state)
        if incremental:  # a new shuffling and initialization for every call
            done = int(self.n_iter_) if warm else 0
            torch_seed, shuffle_seed = (
                (int(s) + done) % np.iinfo(np.int32).max
                for s in rng.randint(np.iinfo(np.int32).max, size=2)
            )
        else:
            torch_seed, shuffle_seed, split_seed = (
                int(s) for s in rng.randint(np.iinfo(np.int32).max, size=3)
            )
        seqs = self._standardized_only(seqs)
        if not warm:
            self._fit_input_expansion(seqs)
        seqs = self._input_map(seqs)
        y_model = self._standardized_target(y_encoded, seqs)
        dataset = self._dataset(seqs, y_model, weights)
        valid_dataset = None
        if X_val is not None:
            val_seqs = validate_sequences(
                self, X_val, reset=False, dtype=np.float32, input_name="X_val"
            )
            val_y = self._encode_target(y_val, val_seqs, reset=False, context="y_val")
            val_sw = self._check_weights(sample_weight_val, val_seqs)
            val_weights = self._loss_weights(val_sw, val_y, val_seqs, class_weight)
            val_seqs = self._standardized_inputs(val_seqs)
            valid_dataset = self._dataset(
                val_seqs, self._standardized_target(val_y, val_seqs), val_weights
            )
        train_seqs, train_y, train_weights = seqs, y_model, weights
        guard = None
        if not incremental and not warm and X_val is None:
            # a start fitted on all the sequences, its fine-tuning judged on
            # a held-out part (the LMN estimators' smooth fine-tuning)
            guard = self._guard_fraction(
                seqs.n_samples,
                self._context(
                    seqs, y_model, warm=warm, validation=True, sample_weight=weights
                ),
            )
        if guard is not None or (
            not incremental
            and X_val is None
            and self._split_validation(seqs.n_samples)
        ):
            dataset, valid_dataset, train_idx = self._split(
                dataset, y_encoded, split_seed, fraction=guard
            )
            if guard is None:
                # the plug-ins (pretrainer, growth schedule) see the training
                # part only: the held-out sequences judge the start too
                train_seqs, train_y = _take_sequences(seqs, y_model, train_idx)
                if weights is not None:
                    train_weights = _mean_one(weights[train_idx], train_seqs)
        if valid_dataset is not None:
            self._check_validation_size(valid_dataset)
        context = self._context(
            train_seqs,
            train_y,
            warm=warm,
            validation=valid_dataset is not None,
            sample_weight=train_weights,
        )
        batch_size, lr = self._step_settings(seqs.n_samples, context)
        return _PreparedFit(
            warm=warm,
            sequences=seqs,
            dataset=dataset,
            valid_dataset=valid_dataset,
            context=context,
            device=device,
            batch_size=batch_size,
            lr=lr,
            torch_seed=torch_seed,
            shuffle_seed=shuffle_seed,
        )

    def _check_validation_data(self, X_val, y_val, sample_weight_val) -> None:
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        if sample_weight_val is not None and X_val is None:
            raise ValueError("sample_weight_val needs X_val and y_val.")
        if X_val is not None and self.early_stopping is False:
            raise ValueError(
                "X_val and y_val are monitored for early stopping: use "
                "early_stopping=True or 'auto', got early_stopping=False."
            )

    def _check_validation_size(self, valid_dataset: SequenceDataset) -> None:
        """Refuse a validation set on which the monitored score is not
        defined: the R^2 of a regressor needs two validation entries
        (sequences, or valid steps with ``target='timestep'``)."""
        if self._problem != "continuous" or self.validation_metric != "score":
            return
        if self.target == "timestep":
            n, what = int(valid_dataset.lengths.sum()), "valid time steps"
        else:
            n, what = len(valid_dataset), "sequences"
        if n < 2:
            raise ValueError(
                "validation_metric='score' monitors the R^2 of the validation "
                f"set, which is not defined on fewer than two {what}; the "
                f"validation set has {n}. Use validation_metric='loss', a "
                "larger validation_fraction or more X_val sequences."
            )

    def _check_partial_fit_parameters(self) -> None:
        """Refuse the settings ``partial_fit`` does not support (extended by
        the model families)."""
        if self.early_stopping is True:
            raise ValueError(
                "partial_fit makes one pass over the given data and does not "
                "support early stopping, got early_stopping=True; use fit, or "
                "early_stopping=False or 'auto' (off in partial_fit)."
            )

    def _resolve_device(self) -> torch.device:
        return resolve_device(self.device)

    def _step_settings(
        self, n_samples: int, context: FitContext | None = None
    ) -> tuple[int, float]:
        """``(batch_size, learning_rate_init)``, each ``'auto'`` resolved
        for ``n_samples`` training sequences (``context``: the fit's
        training data, None for a loaded model)."""
        batch_size = (
            auto_batch_size(n_samples)
            if self.batch_size == "auto"
            else int(self.batch_size)
        )
        lr = (
            auto_learning_rate(n_samples)
            if self.learning_rate_init == "auto"
            else float(self.learning_rate_init)
        )
        return batch_size, lr

    def _split_validation(self, n_samples: int) -> bool:
        """Whether ``fit`` holds out a validation split (no ``X_val`` given)."""
        if self.early_stopping == "auto":
            return auto_early_stopping(self._problem, n_samples)
        return bool(self.early_stopping)

    def _split(
        self, dataset: SequenceDataset, y_encoded, seed: int, fraction=None
    ):
        """Seeded train/validation split of the sequences (early stopping;
        ``fraction`` of them held out, default ``validation_fraction``).

        With loss weights, a split that leaves the training or the
        validation part without weight (a validation loss of zero at every
        epoch, so that the start was kept; or nothing to train on) is drawn
        again among the sequences of non-zero weight, the others joining the
        training part.
        """
        n = len(dataset)
        indices = np.arange(n)
        train_idx, valid_idx = self._held_out(
            indices, y_encoded, seed, test_size=fraction
        )
        has_weight = dataset.weighted()
        if has_weight is not None:
            has_weight = has_weight.numpy()
            if not (has_weight[train_idx].any() and has_weight[valid_idx].any()):
                weighted = np.flatnonzero(has_weight)
                n_weighted = len(weighted)
                if n_weighted < 2:
                    held = (
                        f"validation_fraction={self.validation_fraction}"
                        if fraction is None
                        else f"{fraction}"
                    )
                    raise ValueError(
                        f"early_stopping holds out {held} of the sequences, but only "
                        f"{len(weighted)} of the {n} sequences has a non-zero "
                        "weight (sample_weight times class_weight): the training "
                        "or the validation part would have no weight. Use "
                        "early_stopping=False or pass X_val and y_val."
                    )
                # two weighted validation sequences where there are four or
                # more: the validation R^2 of one is not defined
                n_valid = max(
                    int(np.ceil((fraction or self.validation_fraction) * n_weighted)),
                    min(2, len(weighted) // 2),
                )
                _, valid_idx = self._held_out(
                    weighted, y_encoded[weighted], seed, test_size=n_valid
                )
                train_idx = np.setdiff1d(indices, valid_idx)

        def subset(idx):
            idx = torch.from_numpy(np.sort(idx))
            return SequenceDataset(
                dataset.X[idx],
                dataset.lengths[idx],
                dataset.y[idx],
                per_step=dataset.per_step,
                sample_weight=None
                if dataset.sample_weight is None
                else dataset.sample_weight[idx],
            )

        return subset(train_idx), subset(valid_idx), np.sort(train_idx)

    def _held_out(
        self, indices: np.ndarray, y_encoded, seed: int, test_size=None
    ):
        """``indices`` split into training and validation indices
        (``validation_fraction``, or ``test_size`` sequences; stratified for
        single-label sequence classification when every class has two
        sequences and the split can hold every class; random otherwise)."""
        stratify = None
        if self._problem == "multiclass" and self.target == "sequence":
            counts = np.bincount(y_encoded)
            if counts[counts > 0].min() >= 2:
                stratify = y_encoded

        size = self.validation_fraction if test_size is None else test_size
        # a stratified split fails with fewer validation (or training)
        # sequences than classes: then a random one, as for a class of one
        for labels in [None] if stratify is None else [stratify, None]:
            try:
                return train_test_split(
                    indices, test_size=size, random_state=seed, stratify=labels
                )
            except ValueError as exc:
                error = exc
        raise ValueError(
            f"early_stopping could not hold out validation_fraction="
            f"{self.validation_fraction} of {len(indices)} sequences: {error}"
        ) from None

    def _context(
        self,
        seqs: Sequences,
        y_model: np.ndarray,
        *,
        warm: bool,
        validation: bool,
        sample_weight: np.ndarray | None = None,
    ) -> FitContext:
        """The :class:`FitContext` of a fit on ``seqs`` (model scale)."""
        if not validation:
            monitor = "train_loss"
        elif self.validation_metric == "score":
            monitor = "valid_score"
        else:
            monitor = "valid_loss"
        return FitContext(
            problem=self._problem,
            per_step=self.target == "timestep",
            n_outputs=int(self.n_outputs_),
            sequences=seqs,
            y=y_model,
            warm_start=warm,
            monitor=monitor,
            tol=float(self.tol),
            n_iter_no_change=int(self.n_iter_no_change),
            sample_weight=sample_weight,
        )


    # ------------------------------------------------------- standardization
    def _fit_standardization(
        self, seqs: Sequences, y_encoded: np.ndarray, sample_weight=None
    ) -> None:
        """Fit ``input_mean_``/``input_scale_`` (and the regressors' target
        statistics) when ``standardize=True``; None otherwise. Sequence
        weights (``sample_weight``) weight the statistics."""
        self.input_mean_ = self.input_scale_ = None
        self.target_mean_ = self.target_scale_ = None
        if not self.standardize:
            return
        if sample_weight is not None and np.ptp(sample_weight) == 0:
            sample_weight = None  # equal weights: the unweighted statistics
        step_weight = None
        if sample_weight is None:
            mean, var, count = _sequence_moments(seqs.data, seqs.lengths)
        else:
            step_weight = np.repeat(sample_weight, seqs.lengths)
            mean, var, count = _weighted_moments(seqs.data[seqs.mask], step_weight)
        self.input_mean_, self.input_scale_ = mean, _scale_from_var(var, mean, count)
        if self._problem == "continuous":
            if self.target == "timestep":
                values = y_encoded[seqs.mask]
                weight = step_weight
            else:
                values = y_encoded
                weight = sample_weight
            values = values.astype(np.float64)
            if weight is None:
                mean, var, count = values.mean(axis=0), values.var(axis=0), len(values)
            else:
                mean, var, count = _weighted_moments(values, weight)
            self.target_mean_ = mean
            self.target_scale_ = _scale_from_var(var, mean, count)

    # ---------------------------------------------------------------- weights
    _check_weights = staticmethod(check_sequence_weights)

    def _class_weight_vector(self, y_encoded, seqs: Sequences):
        """Weight of every class (classifiers with ``class_weight``) or None."""
        return None

    def _loss_weights(self, sample_weight, y_encoded, seqs: Sequences, class_weight):
        """Weights of the loss terms: ``(n,)`` per sequence or ``(n, T)`` per
        step (zero at padding), normalized to mean 1 over the valid entries;
        None when every entry weighs the same (the unweighted loss)."""
        per_step = self.target == "timestep"
        if class_weight is None:
            if sample_weight is None or np.ptp(sample_weight) == 0:
                return None
            weight = sample_weight
        else:
            valid = y_encoded[seqs.mask] if per_step else y_encoded
            entry = class_weight[valid]
            if per_step:
                entry = pad_steps(entry, seqs, 0.0)
            weight = entry
            if sample_weight is not None:
                per_sequence = sample_weight[:, None] if per_step else sample_weight
                weight = weight * per_sequence
        if per_step and weight.ndim == 1:
            weight = np.where(seqs.mask, weight[:, None], 0.0)
        if not _valid_entries(weight, seqs).sum() > 0:
            raise ValueError(
                "The weights of the loss (sample_weight times class_weight) are "
                "zero for every sequence."
            )
        return _mean_one(weight, seqs).astype(np.float32)

    def _fit_input_expansion(self, seqs: Sequences) -> None:
        """Fit a map of the standardized inputs ``seqs`` that the network
        reads after them (the LMN classifiers' ``input_expansion``); none
        here."""

    def _network_input_size(self) -> int:
        """Features per step the network reads (``n_features_in_``, or more
        after an input map)."""
        return int(self.n_features_in_)

    def _input_map(self, seqs: Sequences) -> Sequences:
        """The fitted map of the standardized inputs ``seqs`` (see
        ``_fit_input_expansion``); the identity here."""
        return seqs

    def _input_map_note(self) -> str | None:
        """What the fitted input map does, for ``verbose`` (None: nothing)."""
        return None

    def _standardized_inputs(self, seqs: Sequences) -> Sequences:
        """What the network reads: ``seqs`` with standardized valid steps
        (padding stays zero), then the fitted input map, if any; the
        caller's arrays are not modified."""
        return self._input_map(self._standardized_only(seqs))

    def _standardized_only(self, seqs: Sequences) -> Sequences:
        if getattr(self, "input_mean_", None) is None:
            return seqs
        data = (seqs.data - self.input_mean_) / self.input_scale_
        data = np.where(seqs.mask[..., None], data, 0.0).astype(seqs.data.dtype)
        return dataclasses.replace(seqs, data=data)

    def _standardized_target(self, y_encoded: np.ndarray, seqs: Sequences):
        if getattr(self, "target_mean_", None) is None:
            return y_encoded
        y = (y_encoded - self.target_mean_) / self.target_scale_
        if self.target == "timestep":
            y = np.where(seqs.mask[..., None], y, 0.0)
        return y.astype(np.float32)

    def _unstandardized_outputs(self, outputs: np.ndarray) -> np.ndarray:
        if getattr(self, "target_mean_", None) is None:
            return outputs
        return outputs * self.target_scale_ + self.target_mean_

    def _dataset(
        self, seqs: Sequences, y_encoded: np.ndarray, weights=None
    ) -> SequenceDataset:
        return SequenceDataset(
            torch.from_numpy(seqs.data),
            torch.from_numpy(seqs.lengths),
            torch.from_numpy(y_encoded),
            per_step=self.target == "timestep",
            sample_weight=None if weights is None else torch.from_numpy(weights),
        )
