"""The classifier and regressor bases of the sequence estimators.

:class:`_BaseSequenceClassifier`: label encoding, ``class_weight``,
``partial_fit`` with ``classes``, the predictions and the natural scores (the
CTC targets' in :class:`_CTCClassifierMixin`). :class:`_BaseSequenceRegressor`:
numeric targets (single or multi-output, per sequence or per step),
``partial_fit``, ``predict`` and R².
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted

from .._training import score_valid_entries
from ..metrics import label_error_rate
from ..utils._atomic import atomic_fit as _atomic_fit
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils.sequences import Sequences, format_like_input
from ._base import _BaseSequenceEstimator
from ._checks import check_class_weight, check_same_target_kind, float_values
from ._ctc import (
    beam_decode,
    check_label_sequences,
    encode_label_sequences,
    greedy_decode,
)
from ._targets import (
    IGNORE_INDEX,
    check_binary_indicator,
    check_sequence_target,
    check_timestep_target,
    encode_labels,
    format_steps,
    pad_steps,
)

__all__ = ["CLASS_WEIGHT_CONSTRAINTS"]

#: Parameter constraints of ``class_weight`` and of the CTC decoding
#: (classifiers only; training and prediction settings, not model
#: parameters)
CLASS_WEIGHT_CONSTRAINTS = {
    "class_weight": [None, dict, StrOptions({"balanced"})],
    "decoding": [StrOptions({"greedy", "beam"})],
    "beam_width": [Interval(Integral, 1, None, closed="left")],
}



class _CTCClassifierMixin:
    """Label-sequence targets (``target='ctc'``): their encoding, and the
    ``decoding`` / ``beam_width`` settings of ``predict`` and ``score``."""

    def _encode_ctc_target(
        self, y, seqs: Sequences, *, reset: bool, classes=None, context=None
    ) -> np.ndarray:
        """Encode the label sequences of ``target='ctc'``: padded label
        indices into ``classes_`` (the alphabet), whose blank is the extra
        last output."""
        labels, all_strings = check_label_sequences(y, seqs.n_samples)
        if classes is not None and reset:  # first call to partial_fit
            where = "the classes given to partial_fit"
        elif not reset:
            classes = self.classes_
            where = {None: "fit", "y_val": "y (the training labels)"}.get(
                context, "the first call to partial_fit"
            )
        else:
            where = None
        encoded, new_classes = encode_label_sequences(
            labels, seqs.lengths, classes=classes, context=where
        )
        if not reset and self._problem != "ctc":
            check_same_target_kind(context, "ctc", len(self.classes_), self)
            where = "previous call to fit" if context is None else "first call"
            raise ValueError(
                f"{context or 'warm_start'} can only be used where y has the same "
                f"kind as in the {where}; got a ctc target, previously a "
                f"{self._problem} target."
            )
        if reset:
            self._ctc_string_labels = bool(all_strings)
        self._problem = "ctc"
        self.classes_ = new_classes
        self.n_outputs_ = len(new_classes) + 1  # + the blank
        return encoded


    def _decode_ctc(self, outputs: np.ndarray, seqs: Sequences) -> list:
        """Label-index sequences decoded from per-step logits."""
        check_is_fitted(self)
        blank = outputs.shape[-1] - 1
        if getattr(self, "decoding", "greedy") == "beam":
            return beam_decode(
                log_softmax(outputs, axis=-1),
                seqs.lengths,
                blank=blank,
                beam_width=int(getattr(self, "beam_width", 10)),
            )
        return greedy_decode(outputs, seqs.lengths, blank=blank)

    def _predict_ctc(self, X) -> np.ndarray:
        outputs, seqs = self._predict_outputs(X)
        decoded = self._decode_ctc(outputs, seqs)
        strings = getattr(self, "_ctc_string_labels", False)
        out = np.empty(len(decoded), dtype=object)
        for i, indices in enumerate(decoded):
            labels = self.classes_[indices].tolist()
            out[i] = "".join(labels) if strings else labels
        return out

    def _score_ctc(self, X, y, sample_weight) -> float:
        outputs, seqs = self._predict_outputs(X)
        labels, _ = check_label_sequences(y, seqs.n_samples)
        known = set(self.classes_.tolist())
        unknown = sorted({v for seq in labels for v in seq if v not in known}, key=str)
        if unknown:
            shown = ", ".join(repr(v) for v in unknown[:10])
            raise ValueError(
                f"y contains labels not seen in fit ({shown}"
                f"{', ...' if len(unknown) > 10 else ''}); the alphabet classes_ "
                f"is {self.classes_.tolist()!r:.300}."
            )
        decoded = self._decode_ctc(outputs, seqs)
        pred = [tuple(self.classes_[d].tolist()) for d in decoded]
        weight = None
        if sample_weight is not None:
            weight = self._check_weights(sample_weight, seqs)
        return 1.0 - label_error_rate(labels, pred, sample_weight=weight)


class _BaseSequenceClassifier(
    _CTCClassifierMixin, ClassifierMixin, _BaseSequenceEstimator
):
    """Classification targets: multiclass (cross-entropy on logits) or
    multilabel (binary cross-entropy on logits)."""

    _fitted_attributes = {"classes_": "array", "_ctc_string_labels": "bool"}


    _training_parameters = _BaseSequenceEstimator._training_parameters | frozenset(
        CLASS_WEIGHT_CONSTRAINTS
    )

    def _check_partial_fit_parameters(self) -> None:
        super()._check_partial_fit_parameters()
        if isinstance(self.class_weight, str):
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit, which "
                "sees one batch at a time; compute the weights on the whole data "
                "(sklearn.utils.class_weight.compute_class_weight) and pass them "
                "as a dict."
            )

    def _encode_target(
        self, y, seqs: Sequences, *, reset: bool, classes=None, context=None
    ) -> np.ndarray:
        """Encode ``y``; ``classes`` (first call to ``partial_fit``) fixes the
        classes, ``context`` names the caller in the errors of later calls."""
        if self.target == "ctc":
            return self._encode_ctc_target(
                y, seqs, reset=reset, classes=classes, context=context
            )
        if classes is None and not reset:
            classes = self.classes_
        unknown = context  # None (a warm start), 'partial_fit' or 'y_val'
        if classes is not None and reset:
            unknown = "partial_fit"
        if self.target == "sequence":
            y = check_sequence_target(y, seqs.n_samples, classifier=True)
            if y.ndim == 2:
                kind = type_of_target(y)
                if kind != "multilabel-indicator":
                    raise ValueError(
                        f"A 2-D y for target='sequence' must be a multilabel "
                        f"binary indicator matrix, got target type {kind!r} "
                        "(multiclass-multioutput is not supported)."
                    )
                problem = "multilabel"
                encoded = check_binary_indicator(y)
                new_classes = np.arange(y.shape[1])
            else:
                problem = "multiclass"
                encoded, new_classes = encode_labels(
                    y, classes=classes, context=unknown
                )
        else:
            steps, has_output_axis = check_timestep_target(y, seqs)
            if has_output_axis:
                problem = "multilabel"
                encoded = pad_steps(check_binary_indicator(steps), seqs, 0.0)
                new_classes = np.arange(steps.shape[1])
            else:
                problem = "multiclass"
                indices, new_classes = encode_labels(
                    steps, classes=classes, context=unknown
                )
                encoded = pad_steps(indices, seqs, IGNORE_INDEX)
        if not reset and (
            problem != self._problem or len(new_classes) != len(self.classes_)
        ):
            check_same_target_kind(context, problem, len(new_classes), self)
            where = "previous call to fit" if context is None else "first call"
            raise ValueError(
                f"{context or 'warm_start'} can only be used where y has the same "
                f"kind and classes as in the {where}; got a {problem} target "
                f"with {len(new_classes)} classes, previously a {self._problem} "
                f"target with {len(self.classes_)}."
            )
        self._problem = problem
        self.classes_ = new_classes
        self.n_outputs_ = len(new_classes)
        return encoded

    def _encode_partial_target(self, y, seqs, *, first: bool, classes):
        if classes is not None:
            classes = np.unique(np.asarray(classes))
        if not first:
            if classes is not None and not (
                len(classes) == len(self.classes_)
                and np.array_equal(classes, self.classes_)
            ):
                raise ValueError(
                    f"classes={classes.tolist()!r} is not the same as on the first "
                    f"call to partial_fit, was: {self.classes_.tolist()!r}."
                )
            return self._encode_target(y, seqs, reset=False, context="partial_fit")
        if classes is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (all "
                "the class labels, or arange(n_labels) for multilabel targets)."
            )
        if len(classes) < (1 if self.target == "ctc" else 2):
            raise ValueError(
                f"classes must hold at least 2 classes, got {classes.tolist()!r}."
            )
        encoded = self._encode_target(y, seqs, reset=True, classes=classes)
        if self._problem == "multilabel" and len(classes) != self.n_outputs_:
            raise ValueError(
                f"classes has {len(classes)} entries but the multilabel y has "
                f"{self.n_outputs_} labels; pass classes=np.arange(n_labels)."
            )
        return encoded

    def _class_weight_vector(self, y_encoded, seqs: Sequences):
        if self.class_weight is None:
            return None
        if self._problem == "ctc":
            raise ValueError(
                "class_weight is not supported with target='ctc' (a label "
                "sequence is not one class), got class_weight="
                f"{self.class_weight!r}; weight the sequences with sample_weight "
                "instead."
            )
        if self._problem != "multiclass":
            raise ValueError(
                "class_weight is only supported for multiclass targets (one label "
                "per sequence or per time step), got a multilabel indicator "
                f"target with class_weight={self.class_weight!r}; weight the "
                "sequences with sample_weight instead."
            )
        check_class_weight(self.class_weight, self.classes_)
        valid = y_encoded[seqs.mask] if self.target == "timestep" else y_encoded
        return compute_class_weight(
            self.class_weight, classes=self.classes_, y=self.classes_[valid]
        ).astype(np.float64)


    @_fit_context(prefer_skip_nested_validation=True)
    @_atomic_fit
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Train for one epoch on a batch of sequences.

        One pass (epoch) over the given sequences per call, like
        :meth:`sklearn.neural_network.MLPClassifier.partial_fit`: the first
        call (on an unfitted estimator) needs ``classes``, builds the model,
        runs the pretrainer and fits the ``standardize`` statistics; later
        calls continue training that model (the optimizer state carries
        over, also after ``fit``). There is no stopping rule and no
        best-weights restore: ``loss_curve_`` grows by one entry per call and
        ``best_loss_`` is the last epoch's mean training loss. Not supported
        (``ValueError``): ``early_stopping=True`` (``'auto'`` is off here),
        ``incremental`` growth schedules, ``class_weight='balanced'``, and
        changing the model's parameters between calls. All or nothing like
        ``fit``: on an exception the estimator is left as it was.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences (see :meth:`fit`).
        y : array-like or list of array-like
            Targets in the layout selected by ``target``.
        classes : array-like of shape (n_classes,), default=None
            All the class labels (``arange(n_labels)`` for multilabel
            targets). Required on the first call, optional (and checked)
            on later calls.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of every sequence in the loss (see :meth:`fit`).

        Returns
        -------
        self : object
            The estimator.

        Examples
        --------
        >>> from sklmn.datasets import make_adding_problem
        >>> from sklmn.estimators import RNNClassifier
        >>> X, total = make_adding_problem(40, length=5, random_state=0)
        >>> y = (total > 1).astype(int)  # is the sum of the marked values above 1?
        >>> clf = RNNClassifier(hidden_size=4, random_state=0)
        >>> clf = clf.partial_fit(X[:20], y[:20], classes=[0, 1])
        >>> clf = clf.partial_fit(X[20:], y[20:])
        >>> clf.n_iter_
        2
        """
        return self._fit(
            X, y, incremental=True, classes=classes, sample_weight=sample_weight
        )


    def predict(self, X):
        """Predict labels.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.

        Returns
        -------
        y_pred : ndarray or list of ndarray
            ``target='sequence'``: labels ``(n,)`` (from ``classes_``), or a
            0/1 indicator matrix ``(n, n_labels)`` for multilabel targets.
            ``target='timestep'``: one label (or indicator row) per valid step
            in the layout of ``X``. ``target='ctc'``: an object array
            ``(n,)`` of label sequences decoded as set by ``decoding``:
            strings when every label sequence of the training ``y`` was a
            string, else lists of labels from ``classes_``.

        Examples
        --------
        Transcription with ``target='ctc'``: every input pulse spells a
        letter, ``'a'`` for a negative pulse and ``'b'`` for a positive one.

        >>> import numpy as np
        >>> from sklmn.estimators import RNNClassifier
        >>> rng = np.random.RandomState(0)
        >>> words = ["".join(rng.choice(["a", "b"], size=2)) for _ in range(60)]
        >>> X = [np.array([[v] for c in w for v in (2.0 * (c == "b") - 1, 0.0)])
        ...      for w in words]
        >>> clf = RNNClassifier(hidden_size=8, target="ctc", max_iter=15,
        ...                     batch_size=10, learning_rate_init=0.03,
        ...                     random_state=0)
        >>> clf = clf.fit(X, words)
        >>> clf.classes_.tolist()
        ['a', 'b']
        >>> clf.predict(X[:3]).tolist() == words[:3]
        True
        """
        if self.target == "ctc":
            return self._predict_ctc(X)
        outputs, seqs = self._predict_outputs(X)
        if self._problem == "multiclass":
            labels = self.classes_[outputs.argmax(axis=-1)]
        else:
            labels = (outputs > 0).astype(np.int64)  # logit > 0 <=> p > 0.5
        if self.target == "timestep":
            return format_steps(labels, seqs)
        return labels

    def predict_proba(self, X):
        """Predict class (or label) probabilities.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.

        Returns
        -------
        proba : ndarray or list of ndarray
            float64 probabilities in the order of ``classes_``: softmax for
            multiclass targets (rows sum to one), independent sigmoids for
            multilabel targets. ``target='timestep'``: ``(n, T, n_classes)``
            with NaN at padded steps, or a list of ``(T_i, n_classes)``.
            ``target='ctc'``: the per-step posteriors of the labels and of
            the blank, ``(n, T, n_classes + 1)`` (or a list of ``(T_i,
            n_classes + 1)``, as ``X``): columns in the order of
            ``classes_``, the blank last.
        """
        return self._probabilities(X, log=False)

    def predict_log_proba(self, X):
        """Predict the logarithm of the class (or label) probabilities.

        Computed from the logits (``log_softmax`` / log-sigmoid), so it stays
        finite where :meth:`predict_proba` rounds to 0.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.

        Returns
        -------
        log_proba : ndarray or list of ndarray
            In the layout of :meth:`predict_proba`.

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.datasets import make_adding_problem
        >>> from sklmn.estimators import RNNClassifier
        >>> X, total = make_adding_problem(20, length=4, random_state=0)
        >>> clf = RNNClassifier(hidden_size=4, max_iter=3, random_state=0)
        >>> clf = clf.fit(X, (total > 1).astype(int))
        >>> bool(np.allclose(np.exp(clf.predict_log_proba(X)), clf.predict_proba(X)))
        True
        """
        return self._probabilities(X, log=True)

    def _probabilities(self, X, *, log: bool):
        """The (log-)probabilities of :meth:`predict_proba` and
        :meth:`predict_log_proba`, computed from the logits."""
        outputs, seqs = self._predict_outputs(X)
        if self._problem in ("multiclass", "ctc"):
            proba = (log_softmax if log else softmax)(outputs, axis=-1)
        elif log:
            proba = -np.logaddexp(0.0, -outputs)  # log(sigmoid)
        else:
            proba = expit(outputs)
        if self.target != "sequence":
            return format_like_input(proba, seqs)
        return proba

    def score(self, X, y, sample_weight=None):
        """Natural accuracy of the target kind.

        ``target='sequence'``: accuracy (subset accuracy for multilabel
        targets). ``target='timestep'``: accuracy over all valid time steps
        (each step weighted by its sequence's ``sample_weight``), or the
        frame-level accuracy :func:`sklmn.metrics.frame_level_accuracy` for
        multilabel targets (no ``sample_weight``). ``target='ctc'``: ``1 -
        label_error_rate(y, predict(X))`` (:func:`sklmn.metrics.\
label_error_rate`, sequences weighted by ``sample_weight``), the
        best-path accuracy of Carta et al. (2020a) with the default
        ``decoding='greedy'``; labels of ``y`` not in ``classes_`` raise
        ``ValueError``.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.
        y : array-like or list of array-like
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sequence weights.

        Returns
        -------
        score : float
        """
        if self.target == "sequence":
            return super().score(X, y, sample_weight=sample_weight)
        if self.target == "ctc":
            return self._score_ctc(X, y, sample_weight)
        outputs, seqs = self._predict_outputs(X)
        steps, has_output_axis = check_timestep_target(y, seqs)
        valid = outputs[seqs.mask]
        # the natural score of training and validation, on the valid steps
        if self._problem == "multilabel":
            if sample_weight is not None:
                raise ValueError(
                    "sample_weight is not supported by the frame-level accuracy of "
                    "multilabel per-time-step targets."
                )
            true = check_binary_indicator(steps)
            return score_valid_entries("multilabel", True, true, valid)
        weights = None
        if sample_weight is not None:
            weights = np.repeat(self._check_weights(sample_weight, seqs), seqs.lengths)
        # class index of every step's label (-1: a label the model never
        # saw), looked up once per distinct label
        labels, inverse = np.unique(np.asarray(steps).reshape(-1), return_inverse=True)
        index = {label: i for i, label in enumerate(self.classes_.tolist())}
        true = np.array([index.get(label, -1) for label in labels.tolist()])[inverse]
        return score_valid_entries("multiclass", True, true, valid, weights)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


def _check_float32_range(values: np.ndarray) -> None:
    """Reject regression targets that overflow float32 (the training dtype)."""
    limit = float(np.finfo(np.float32).max)
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest > limit:
        raise ValueError(
            f"y has values too large for float32, the training precision: max "
            f"|y| = {largest:.4g} > {limit:.4g}. Rescale the targets."
        )



class _BaseSequenceRegressor(RegressorMixin, _BaseSequenceEstimator):
    """Regression targets (squared error), single or multi-output."""

    _fitted_attributes = {"_has_output_axis": "bool"}

    def _encode_target(
        self, y, seqs: Sequences, *, reset: bool, context=None
    ) -> np.ndarray:
        if self.target == "ctc":
            raise ValueError(
                f"target='ctc' (label sequences) needs a classifier; "
                f"{type(self).__name__} supports target='sequence' or 'timestep'."
            )
        if self.target == "sequence":
            y = check_sequence_target(y, seqs.n_samples, classifier=False)
            has_output_axis = y.ndim == 2
            _check_float32_range(np.asarray(y, dtype=np.float64))
            encoded = y.reshape(y.shape[0], -1).astype(np.float32)
        else:
            steps, has_output_axis = check_timestep_target(y, seqs)
            try:
                steps = steps.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"Regression targets must be numeric, got dtype {steps.dtype}."
                ) from None
            # an object array (None or NaN as a missing value) is checked
            # here, as a number: check_timestep_target checks numeric dtypes
            name = "y_val" if context == "y_val" else "y"
            steps = check_array(
                steps, ensure_2d=False, dtype=None, input_name=name
            ).reshape(steps.shape[0], -1)
            _check_float32_range(steps)
            encoded = pad_steps(steps.astype(np.float32), seqs, 0.0)
        n_outputs = encoded.shape[-1]
        if not reset and n_outputs != self.n_outputs_:
            if context == "y_val":
                raise ValueError(
                    f"y_val must have as many outputs as y: got {n_outputs}, "
                    f"y has {self.n_outputs_}."
                )
            where = "previous call to fit" if context is None else "first call"
            raise ValueError(
                f"{context or 'warm_start'} can only be used where y has the same "
                f"number of outputs as in the {where}; got {n_outputs}, "
                f"previously {self.n_outputs_}."
            )
        if context == "y_val":
            # the validation target is checked, not learned: the layout of
            # the predictions stays that of the training y
            return encoded
        self._problem = "continuous"
        self._has_output_axis = has_output_axis
        self.n_outputs_ = n_outputs
        return encoded

    @_fit_context(prefer_skip_nested_validation=True)
    @_atomic_fit
    def partial_fit(self, X, y, sample_weight=None):
        """Train for one epoch on a batch of sequences.

        One pass (epoch) over the given sequences per call, like
        :meth:`sklearn.neural_network.MLPRegressor.partial_fit`: the first
        call (on an unfitted estimator) builds the model, runs the pretrainer
        and fits the ``standardize`` statistics (inputs and targets); later
        calls continue training that model (the optimizer state carries
        over, also after ``fit``). There is no stopping rule and no
        best-weights restore: ``loss_curve_`` grows by one entry per call and
        ``best_loss_`` is the last epoch's mean training loss. Not supported
        (``ValueError``): ``early_stopping=True`` (``'auto'`` is off here),
        ``incremental`` growth schedules, and changing the model's parameters
        between calls. All or nothing like ``fit``: on an exception the
        estimator is left as it was.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences (see :meth:`fit`).
        y : array-like or list of array-like
            Targets in the layout selected by ``target``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of every sequence in the loss (see :meth:`fit`).

        Returns
        -------
        self : object
            The estimator.

        Examples
        --------
        >>> from sklmn.datasets import make_adding_problem
        >>> from sklmn.estimators import RNNRegressor
        >>> X, y = make_adding_problem(40, length=5, random_state=0)
        >>> reg = RNNRegressor(hidden_size=4, random_state=0)
        >>> for start in (0, 20):
        ...     reg = reg.partial_fit(X[start:start + 20], y[start:start + 20])
        >>> len(reg.loss_curve_)
        2
        """
        return self._fit(X, y, incremental=True, sample_weight=sample_weight)

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.

        Returns
        -------
        y_pred : ndarray or list of ndarray
            float64. ``target='sequence'``: ``(n,)`` or ``(n, n_outputs)``
            like the ``y`` seen in ``fit``. ``target='timestep'``: one value
            (or row) per valid step in the layout of ``X`` (NaN at padded
            steps of a padded array).
        """
        outputs, seqs = self._predict_outputs(X)
        if not self._has_output_axis:
            outputs = outputs[..., 0]
        if self.target == "timestep":
            return format_steps(outputs, seqs)
        return outputs

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R² over sequences or valid time steps.

        ``target='timestep'``: R² of the values at all valid time steps (each
        weighted by its sequence's ``sample_weight``), uniformly averaged over
        outputs.

        Parameters
        ----------
        X : array-like or list of array-like
            Sequences.
        y : array-like or list of array-like
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sequence weights.

        Returns
        -------
        score : float
        """
        if self.target == "sequence":
            _check_float32_range(float_values(y))  # as fit: r2_score overflows
            return super().score(X, y, sample_weight=sample_weight)
        outputs, seqs = self._predict_outputs(X)
        steps, _ = check_timestep_target(y, seqs)
        steps = steps.astype(np.float64).reshape(steps.shape[0], -1)
        _check_float32_range(steps)  # as fit: r2_score would overflow
        weights = None
        if sample_weight is not None:
            weights = np.repeat(self._check_weights(sample_weight, seqs), seqs.lengths)
        valid = outputs[seqs.mask]
        return score_valid_entries("continuous", True, steps, valid, weights)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
