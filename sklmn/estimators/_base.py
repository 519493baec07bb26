"""Shared base of the sequence estimators.

Every public estimator is a native scikit-learn class (mixin left,
:class:`~sklearn.base.BaseEstimator` right) that stores its arguments
untouched and, in ``fit``, builds

1. the recurrent module of :mod:`sklmn.nn` (``_build_module``, the only thing
   a public class implements besides its parameters),
2. a :class:`~sklmn.estimators._net.SequenceNet` (module + linear readout),
3. optionally initializes it from the data (``_initialize_module``: the hook
   where pretraining plugs in),
4. a skorch :class:`~sklmn.estimators._net.SequenceNeuralNet` that trains it
   (``net_``), with scikit-learn's MLP stopping rules as callbacks.

Targets are handled by the classifier and regressor bases below.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import threading
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from scipy.special import expit, softmax
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    _fit_context,
    clone,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted
from skorch.callbacks import GradientNormClipping
from skorch.helper import predefined_split

from ..metrics import _frame_level_accuracy_counts
from ..preprocessing import _scale_from_var, _sequence_moments
from ..utils.sequences import Sequences, format_like_input, validate_sequences
from ._net import (
    ConvergenceMonitor,
    ProgressLogger,
    SequenceDataset,
    SequenceLoss,
    SequenceNet,
    SequenceNeuralNet,
    ValidationScore,
    collate_batch,
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

__all__ = [
    "TRAINING_PARAMETERS_DOC",
    "fill_doc",
]

_OPTIMIZERS = {
    "adam": (torch.optim.Adam, {}),
    "adamw": (torch.optim.AdamW, {}),
    # scikit-learn's MLP defaults for SGD
    "sgd": (torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
    "rmsprop": (torch.optim.RMSprop, {}),
}

TRAINING_PARAMETERS_DOC = """\
    target : {'sequence', 'timestep'}, default='sequence'
        ``'sequence'``: one target per sequence, ``y`` of shape ``(n,)`` or
        ``(n, k)``, predicted from the output at each sequence's last valid
        step. ``'timestep'``: one target per valid time step, ``y`` a padded
        array ``(n, T[, k])`` (entries at padded steps of ``X`` are ignored)
        or a list of ``(T_i[, k])`` arrays; predictions come back in the
        layout of ``X`` (a list for a list, else a padded array whose padded
        steps are NaN, or None for non-numeric labels).
    standardize : bool, default=True
        Standardize every input feature by its mean and standard deviation
        over all valid time steps of the training sequences (padding
        ignored; constant features are only centered), and for regressors
        every target output too (predictions are transformed back). The
        statistics are fitted attributes (``input_mean_``, ``input_scale_``,
        ``target_mean_``, ``target_scale_``); ``loss_curve_`` is then in
        standardized units. The same transformation as
        :class:`sklmn.preprocessing.SequenceStandardScaler`.
    max_iter : int, default=200
        Maximum number of epochs.
    batch_size : int or 'auto', default='auto'
        Sequences per minibatch; ``'auto'`` is ``min(200, n_samples)``. Each
        batch is trimmed to its longest sequence.
    bucket_by_length : bool, default=False
        Draw training minibatches of sequences of similar lengths (shuffle,
        sort pools of 50 batches by length, shuffle the batches): much less
        computation on padding when lengths vary widely, at the price of less
        random batch compositions.
    learning_rate_init : float, default=0.001
        Learning rate of the optimizer.
    learning_rate : {'constant', 'adaptive'}, default='constant'
        ``'adaptive'`` divides the learning rate by 5 each time
        ``ceil(n_iter_no_change / 2)`` consecutive epochs bring no
        improvement of the monitored loss (a reduce-on-plateau schedule).
    alpha : float, default=1e-4
        Strength of the L2 penalty on the weights, scaled as in
        scikit-learn's MLP (``0.5 * alpha * ||W||² / batch_size`` per
        minibatch): the optimizer's ``weight_decay`` is ``alpha /
        batch_size``, applied to weights but not to biases; not included in
        ``loss_curve_``.
    optimizer : {'adam', 'adamw', 'sgd', 'rmsprop'}, default='adam'
        torch optimizer (``'sgd'`` uses Nesterov momentum 0.9, like
        scikit-learn's MLP).
    gradient_clipping : float or None, default=1.0
        Maximum L2 norm of the gradient of all parameters (None: no
        clipping).
    early_stopping : bool or 'auto', default='auto'
        Hold out ``validation_fraction`` of the sequences (stratified for
        single-label sequence classification) and monitor the validation
        loss (see ``validation_metric``) instead of the training loss.
        ``'auto'``: on for classifiers with more than 1000 training sequences,
        for regressors with at least 20, and whenever ``X_val`` is passed to
        ``fit`` (measured: small classification sets lose more by the
        held-out sequences than they gain, small regression sets overfit
        without them; see ``docs/training.md``). Whatever monitors it,
        ``fit`` ends with the weights of the best epoch.
    validation_metric : {'loss', 'score'}, default='loss'
        What early stopping monitors: the validation loss (the training
        criterion), or the estimator's natural score (accuracy, frame-level
        accuracy, R²).
    validation_fraction : float, default=0.1
        Fraction of the sequences held out for early stopping.
    n_iter_no_change : int, default=10
        Epochs without improvement of the monitored quantity after which
        training is considered converged.
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    warm_start : bool, default=False
        Continue training the fitted module (same model parameters and
        classes required) instead of building a new one.
    verbose : int or bool, default=0
        Print one line per epoch and the stopping message.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialization, the shuffling of the minibatches, the
        validation split and dropout. With an int, two fits on the CPU give
        identical models; torch's global random state is left untouched.
    device : str, default='cpu'
        torch device to train on, e.g. ``'cuda'``. A model trained on a GPU
        unpickles and predicts on a CPU-only machine (skorch maps the tensors
        to the CPU).
    callbacks : list of skorch callbacks or (name, callback) tuples or None, \
            default=None
        Extra skorch callbacks (copied in ``fit``), run after the built-in
        ones (loss recording, validation score, gradient clipping) and before
        the progress printer and the stopping rule. A callback may stop
        training by raising ``KeyboardInterrupt`` (as skorch's do)."""

FITTED_ATTRIBUTES_DOC = """\
    n_features_in_ : int
        Number of features per time step.
    n_outputs_ : int
        Number of readout units.
    n_iter_ : int
        Number of epochs run (accumulated over warm starts).
    loss_curve_ : list of float
        Mean training loss (data loss + the module's penalty) of every epoch,
        averaged over the epoch's minibatches while the weights changed.
    best_loss_ : float
        Monitored loss of the weights the estimator ends with, measured on
        those weights: the validation loss with early stopping, else the
        training loss recomputed after the epoch (or the starting weights'
        loss when no epoch improved on it). With
        ``validation_metric='score'`` the validation loss of the kept epoch.
    best_epoch_ : int
        Epoch whose weights were kept (0: the weights before training, e.g.
        a pretrained model that fine-tuning did not improve).
    validation_loss_curve_ : list of float or None
        Validation loss of every epoch when early stopping is on.
    validation_scores_ : list of float or None
        Validation score of every epoch when early stopping is on.
    best_validation_score_ : float or None
        Validation score of the kept weights when early stopping is on.
    diverged_ : bool
        Whether the last ``fit`` diverged and recovered: a
        :class:`sklmn.callbacks.RestoreOnDivergence` in ``callbacks`` stopped
        training and restored earlier weights (the callback object passed in
        is left untouched).
    net_ : skorch.NeuralNet
        The trained skorch net; ``net_.module_`` is the
        :class:`torch.nn.Module` (``.recurrent`` and ``.readout``) and
        ``net_.history`` the per-epoch history."""


def fill_doc(model_parameters_doc: str):
    """Class decorator substituting the shared docs into a class docstring.

    Replaces the lines ``%(model_parameters)s`` (indented by 4 spaces, like
    the docstring) with ``model_parameters_doc`` and ``%(training_parameters)s``
    / ``%(fitted_attributes)s`` with the docs shared by every sequence
    estimator.
    """

    def decorate(cls):
        cls.__doc__ = (
            cls.__doc__.replace("    %(model_parameters)s", model_parameters_doc)
            .replace("    %(training_parameters)s", TRAINING_PARAMETERS_DOC)
            .replace("    %(fitted_attributes)s", FITTED_ATTRIBUTES_DOC)
        )
        return cls

    return decorate


#: ``early_stopping='auto'`` holds out a validation set above this many
#: training sequences for classifiers (see docs/training.md for the
#: measurement) ...
_AUTO_EARLY_STOPPING = 1000
#: ... and from this many for regressors, which overfit small sets.
_AUTO_EARLY_STOPPING_REGRESSION = 20

# torch's global RNG is shared by all threads: fits running concurrently in
# threads (joblib's threading backend, dask thread workers) would interleave
# their seeded draws, so seeded blocks run one at a time (reentrant: a
# pretrainer may fit another estimator inside)
_TORCH_RNG_LOCK = threading.RLock()


@contextlib.contextmanager
def _seeded_torch(seed: int):
    """Seed torch's global RNGs inside the block and restore them afterwards."""
    devices = (
        list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    )
    with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def _atomic_fit(fit):
    """Make ``fit`` all or nothing: on any exception (``KeyboardInterrupt``
    included) the estimator gets back every attribute it had before."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)  # fit assigns attributes, never mutates
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper


def _same_parameter(a, b) -> bool:
    """Whether two parameter values are equal; nested estimators compare by
    class and parameters (not identity), arrays by value."""
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):
        return type(a) is type(b) and _same_parameter(
            a.get_params(deep=False), b.get_params(deep=False)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_parameter(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(
            _same_parameter(x, z) for x, z in zip(a, b, strict=True)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _check_float32_range(values: np.ndarray) -> None:
    """Reject regression targets that overflow float32 (the training dtype)."""
    limit = float(np.finfo(np.float32).max)
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest > limit:
        raise ValueError(
            f"y has values too large for float32, the training precision: max "
            f"|y| = {largest:.4g} > {limit:.4g}. Rescale the targets."
        )


def _completed(history, key: str) -> list[float]:
    """Values of ``key`` in the epochs of a skorch history that recorded it."""
    try:
        return [float(v) for v in history[:, key]] if len(history) else []
    except KeyError:  # no epoch completed
        return []


class _BaseSequenceEstimator(BaseEstimator):
    """Training machinery shared by every sequence estimator.

    Subclasses implement ``_build_module(input_size)`` (the recurrent module
    of :mod:`sklmn.nn`) and the target hooks ``_encode_target`` and
    predictions (classifier/regressor bases).
    """

    #: Fitted attributes that :func:`sklmn.persistence.load` may set, with
    #: their kind (subclasses add theirs; ``load`` merges the lists of the
    #: class hierarchy)
    _fitted_attributes: dict = {
        "n_features_in_": "int",
        "feature_names_in_": "array",
        "n_outputs_": "int",
        "_problem": "str",
        "input_mean_": "array?",
        "input_scale_": "array?",
        "target_mean_": "array?",
        "target_scale_": "array?",
        "loss_curve_": "list",
        "n_iter_": "int",
        "best_epoch_": "int",
        "best_loss_": "float",
        "validation_loss_curve_": "list?",
        "validation_scores_": "list?",
        "best_validation_score_": "float?",
        "diverged_": "bool",
        "_fitted_params": "dict",
    }

    _parameter_constraints: dict = {
        "target": [StrOptions({"sequence", "timestep"})],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [
            StrOptions({"auto"}),
            Interval(Integral, 1, None, closed="left"),
        ],
        "bucket_by_length": ["boolean"],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"constant", "adaptive"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "optimizer": [StrOptions(set(_OPTIMIZERS))],
        "gradient_clipping": [None, Interval(Real, 0, None, closed="neither")],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_metric": [StrOptions({"loss", "score"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "device": [str, torch.device],
        "callbacks": [None, list],
    }

    def __init__(
        self,
        *,
        target="sequence",
        standardize=True,
        max_iter=200,
        batch_size="auto",
        bucket_by_length=False,
        learning_rate_init=0.001,
        learning_rate="constant",
        alpha=1e-4,
        optimizer="adam",
        gradient_clipping=1.0,
        early_stopping="auto",
        validation_metric="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        verbose=0,
        random_state=None,
        device="cpu",
        callbacks=None,
    ):
        self.target = target
        self.standardize = standardize
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.bucket_by_length = bucket_by_length
        self.learning_rate_init = learning_rate_init
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.optimizer = optimizer
        self.gradient_clipping = gradient_clipping
        self.early_stopping = early_stopping
        self.validation_metric = validation_metric
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state
        self.device = device
        self.callbacks = callbacks

    # ------------------------------------------------------------------ hooks
    def _build_module(self, input_size: int) -> torch.nn.Module:
        """Build the recurrent module (implemented by each public class)."""
        raise NotImplementedError

    def _initialize_module(
        self, module: SequenceNet, sequences: Sequences, y_encoded: np.ndarray
    ) -> None:
        """Initialize ``module`` from the training data before training.

        Called in ``fit`` (not on warm starts) after the module and its readout
        are built with the seeded torch RNG, before the optimizer is created.
        The default does nothing; pretraining (LAES initialization, unrolled
        pretraining) overrides or extends this step.
        """

    def _model_parameter_names(self) -> list[str]:
        base = _BaseSequenceEstimator._parameter_constraints
        return sorted(k for k in self._parameter_constraints if k not in base)

    # --------------------------------------------------------------- fitting
    def _resolve_device(self) -> torch.device:
        try:
            device = torch.device(self.device)
        except (RuntimeError, TypeError, ValueError):
            raise ValueError(
                f"device must be a torch device such as 'cpu' or 'cuda', got "
                f"{self.device!r}"
            ) from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(
                f"device={self.device!r} was requested but CUDA is not available "
                "on this machine; use device='cpu'."
            )
        return device

    def _split(self, dataset: SequenceDataset, y_encoded, seed: int):
        """Seeded train/validation split of the sequences (early stopping)."""
        n = len(dataset)
        indices = np.arange(n)
        stratify = None
        if self._problem == "multiclass" and self.target == "sequence":
            counts = np.bincount(y_encoded)
            if counts[counts > 0].min() >= 2:
                stratify = y_encoded
        try:
            train_idx, valid_idx = train_test_split(
                indices,
                test_size=self.validation_fraction,
                random_state=seed,
                stratify=stratify,
            )
        except ValueError as exc:
            raise ValueError(
                f"early_stopping could not hold out validation_fraction="
                f"{self.validation_fraction} of {n} sequences: {exc}"
            ) from None

        def subset(idx):
            idx = torch.from_numpy(np.sort(idx))
            return SequenceDataset(
                dataset.X[idx],
                dataset.lengths[idx],
                dataset.y[idx],
                per_step=dataset.per_step,
            )

        return subset(train_idx), subset(valid_idx)

    def _make_net(
        self, module, *, device, batch_size, valid_dataset, shuffle_seed
    ) -> SequenceNeuralNet:
        per_step = self.target == "timestep"
        optimizer, optimizer_kwargs = _OPTIMIZERS[self.optimizer]
        callbacks = []
        if valid_dataset is not None:
            callbacks.append(("valid_score", ValidationScore(self._problem, per_step)))
        if self.gradient_clipping is not None:
            callbacks.append(
                ("gradient_clipping", GradientNormClipping(self.gradient_clipping))
            )
        callbacks.extend(copy.deepcopy(self.callbacks or []))
        sink = print if self.verbose else None
        if self.verbose:
            callbacks.append(("progress", ProgressLogger(sink=print)))
        if valid_dataset is None:
            monitor = "train_loss"
        else:
            monitor = (
                "valid_score" if self.validation_metric == "score" else "valid_loss"
            )
        callbacks.append(
            (
                "convergence",
                ConvergenceMonitor(
                    self.tol,
                    self.n_iter_no_change,
                    monitor=monitor,
                    learning_rate=self.learning_rate,
                    sink=sink,
                ),
            )
        )
        return SequenceNeuralNet(
            module=module,
            criterion=SequenceLoss,
            criterion__problem=self._problem,
            criterion__per_step=per_step,
            optimizer=optimizer,
            lr=self.learning_rate_init,
            # scikit-learn's MLP adds 0.5 * alpha * ||W||^2 / batch_size to
            # each minibatch loss, whose gradient is (alpha / batch_size) * W
            optimizer__weight_decay=self.alpha / batch_size,
            **{f"optimizer__{k}": v for k, v in optimizer_kwargs.items()},
            decay_biases=False,
            max_epochs=self.max_iter,
            batch_size=batch_size,
            iterator_train__shuffle=True,
            iterator_train__collate_fn=collate_batch,
            iterator_valid__collate_fn=collate_batch,
            iterator_valid__batch_size=max(batch_size, 256),
            train_split=None
            if valid_dataset is None
            else predefined_split(valid_dataset),
            callbacks=callbacks,
            verbose=0,
            device=str(device),
            shuffle_seed=shuffle_seed,
            bucket_by_length=self.bucket_by_length,
        )

    # ------------------------------------------------------- standardization
    def _fit_standardization(self, seqs: Sequences, y_encoded: np.ndarray) -> None:
        """Fit ``input_mean_``/``input_scale_`` (and the regressors' target
        statistics) when ``standardize=True``; None otherwise."""
        self.input_mean_ = self.input_scale_ = None
        self.target_mean_ = self.target_scale_ = None
        if not self.standardize:
            return
        mean, var, count = _sequence_moments(seqs.data, seqs.lengths)
        self.input_mean_, self.input_scale_ = mean, _scale_from_var(var, mean, count)
        if self._problem == "continuous":
            if self.target == "timestep":
                values = y_encoded[seqs.mask]
            else:
                values = y_encoded
            values = values.astype(np.float64)
            mean = values.mean(axis=0)
            var = values.var(axis=0)
            self.target_mean_ = mean
            self.target_scale_ = _scale_from_var(var, mean, len(values))

    def _standardized_inputs(self, seqs: Sequences) -> Sequences:
        """``seqs`` with standardized valid steps (padding stays zero); the
        caller's arrays are not modified."""
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

    def _split_validation(self, n_samples: int) -> bool:
        """Whether ``fit`` holds out a validation split (no ``X_val`` given)."""
        if self.early_stopping == "auto":
            if self._problem == "continuous":
                return n_samples >= _AUTO_EARLY_STOPPING_REGRESSION
            return n_samples > _AUTO_EARLY_STOPPING
        return bool(self.early_stopping)

    @_fit_context(prefer_skip_nested_validation=True)
    @_atomic_fit
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Train the model on sequences ``X`` and targets ``y``.

        ``fit`` is all or nothing: if it raises (invalid data, a
        :class:`FloatingPointError` of a diverging training, a
        ``KeyboardInterrupt`` before the first epoch completed...), the
        estimator keeps every attribute it had before the call, so a fitted
        model still predicts as before. A ``KeyboardInterrupt`` after at least
        one completed epoch ends training with those epochs instead.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps, n_features) or \
                (n_samples, n_timesteps), or list of array-like
            Sequences (see :func:`sklmn.utils.sequences.check_sequences`);
            trailing all-NaN time steps are padding.
        y : array-like or list of array-like
            Targets in the layout selected by ``target``.
        X_val : array-like or list of array-like, default=None
            Validation sequences monitored instead of a split of ``X``
            (like ``X_val`` of scikit-learn's
            :class:`~sklearn.ensemble.HistGradientBoostingClassifier`);
            requires ``early_stopping`` True or ``'auto'``.
        y_val : array-like or list of array-like, default=None
            Targets of ``X_val``.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        FloatingPointError
            If training diverges and no callback recovers (see
            :class:`sklmn.callbacks.RestoreOnDivergence`).
        """
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        if X_val is not None and self.early_stopping is False:
            raise ValueError(
                "X_val and y_val are monitored for early stopping: use "
                "early_stopping=True or 'auto', got early_stopping=False."
            )
        warm = bool(self.warm_start) and hasattr(self, "net_")
        if warm:
            self._check_warm_start()
        seqs = validate_sequences(self, X, reset=not warm, dtype=np.float32)
        y_encoded = self._encode_target(y, seqs, reset=not warm)
        if not warm:
            self._fit_standardization(seqs, y_encoded)
        device = self._resolve_device()
        rng = check_random_state(self.random_state)
        torch_seed, shuffle_seed, split_seed = (
            int(s) for s in rng.randint(np.iinfo(np.int32).max, size=3)
        )
        seqs = self._standardized_inputs(seqs)
        y_model = self._standardized_target(y_encoded, seqs)
        dataset = self._dataset(seqs, y_model)
        valid_dataset = None
        if X_val is not None:
            val_seqs = validate_sequences(self, X_val, reset=False, dtype=np.float32)
            val_y = self._encode_target(y_val, val_seqs, reset=False)
            val_seqs = self._standardized_inputs(val_seqs)
            valid_dataset = self._dataset(
                val_seqs, self._standardized_target(val_y, val_seqs)
            )
        elif self._split_validation(seqs.n_samples):
            dataset, valid_dataset = self._split(dataset, y_encoded, split_seed)
        n_train = len(dataset)
        batch_size = (
            min(200, n_train) if self.batch_size == "auto" else int(self.batch_size)
        )

        with _seeded_torch(torch_seed):
            if warm:
                # train a copy: a fit that fails leaves the fitted model intact
                module = copy.deepcopy(self.net_.module_)
            else:
                recurrent = self._build_module(seqs.n_features)
                module = SequenceNet(
                    recurrent, self.n_outputs_, per_step=self.target == "timestep"
                )
                self._initialize_module(module, seqs, y_model)
            net = self._make_net(
                module,
                device=device,
                batch_size=batch_size,
                valid_dataset=valid_dataset,
                shuffle_seed=shuffle_seed,
            )
            net.initialize()
            net.partial_fit(dataset)

        if (
            net.interrupted_
            and net.divergence_ is None
            and not _completed(net.history, "train_loss")
        ):
            # interrupted before an epoch completed: nothing was trained, so
            # the interruption propagates (and the estimator is left as it was)
            raise KeyboardInterrupt
        self._check_finite_parameters(net)
        # do not keep (and pickle) the validation sequences with the model
        net.train_split = None
        self._record_history(net, warm)
        self.diverged_ = net.divergence_ is not None
        self.net_ = net
        self._fitted_params = self._current_fitted_params()
        self._record_fit(net)
        monitor = dict(net.callbacks_)["convergence"]
        if not monitor.converged_ and len(net.history) == self.max_iter:
            warnings.warn(
                f"Maximum iterations ({self.max_iter}) reached and the "
                "optimization hasn't converged yet.",
                ConvergenceWarning,
                stacklevel=3,  # fit <- _fit_context wrapper <- caller
            )
        return self

    def _dataset(self, seqs: Sequences, y_encoded: np.ndarray) -> SequenceDataset:
        return SequenceDataset(
            torch.from_numpy(seqs.data),
            torch.from_numpy(seqs.lengths),
            torch.from_numpy(y_encoded),
            per_step=self.target == "timestep",
        )

    def _record_history(self, net, warm: bool) -> None:
        """Set ``loss_curve_``, ``n_iter_``, ``best_loss_``, ``best_epoch_``
        and the validation curves from the net's history."""
        history = net.history
        monitor = dict(net.callbacks_)["convergence"]
        # an epoch interrupted mid-way (KeyboardInterrupt, a divergence
        # recovered by a callback) has no loss: count completed epochs only
        losses = _completed(history, "train_loss")
        previous = list(self.loss_curve_) if warm else []
        self.loss_curve_ = previous + losses
        self.n_iter_ = len(self.loss_curve_)
        self.best_epoch_ = int(monitor.best_epoch_) + len(previous)
        if monitor.monitor == "train_loss":
            self.validation_loss_curve_ = None
            self.validation_scores_ = None
            self.best_validation_score_ = None
            self.best_loss_ = float(monitor.best_)
            return
        scores = _completed(history, "valid_score")
        vlosses = _completed(history, "valid_loss")
        # accumulated over warm starts, like loss_curve_
        self.validation_scores_ = (
            list(getattr(self, "validation_scores_", None) or []) if warm else []
        ) + scores
        self.validation_loss_curve_ = (
            list(getattr(self, "validation_loss_curve_", None) or []) if warm else []
        ) + vlosses
        kept = monitor.best_epoch_ - 1  # index of the kept epoch in this fit
        if monitor.monitor == "valid_loss":
            self.best_loss_ = float(monitor.best_)
            # None when the starting weights were kept (their score is not
            # measured)
            self.best_validation_score_ = (
                scores[kept] if 0 <= kept < len(scores) else None
            )
        else:
            self.best_validation_score_ = float(monitor.best_)
            self.best_loss_ = (
                vlosses[kept] if 0 <= kept < len(vlosses) else monitor.start_loss_
            )

    def _record_fit(self, net) -> None:
        """Set model-specific fitted attributes after training (hook)."""

    def _current_fitted_params(self) -> dict:
        names = ["target", *self._model_parameter_names()]
        return {
            name: clone(value) if isinstance(value, BaseEstimator) else value
            for name, value in ((n, getattr(self, n)) for n in names)
        }

    def _check_warm_start(self) -> None:
        changed = {
            name: (old, getattr(self, name))
            for name, old in self._fitted_params.items()
            if not _same_parameter(getattr(self, name), old)
        }
        if changed:
            desc = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(
                f"warm_start=True cannot change the model's parameters ({desc}); "
                "set warm_start=False to train a new model."
            )

    @staticmethod
    def _check_finite_parameters(net) -> None:
        for name, param in net.module_.named_parameters():
            if not bool(torch.isfinite(param).all()):
                raise FloatingPointError(
                    f"Training diverged: parameter {name!r} of the trained model is "
                    "not finite. Try a smaller learning_rate_init or "
                    "gradient_clipping."
                )

    # ------------------------------------------------------------ prediction
    def _predict_outputs(self, X) -> tuple[np.ndarray, Sequences]:
        """Raw readout outputs (float64) and the validated ``X``."""
        check_is_fitted(self)
        seqs = validate_sequences(self, X, reset=False, dtype=np.float32)
        model_seqs = self._standardized_inputs(seqs)
        # sort by length so that batches hold sequences of similar lengths
        order = np.argsort(-seqs.lengths, kind="stable")
        dataset = SequenceDataset(
            torch.from_numpy(model_seqs.data[order]),
            torch.from_numpy(seqs.lengths[order]),
            per_step=self.target == "timestep",
        )
        outputs = self.net_.predict_outputs(dataset)
        restored = np.empty_like(outputs, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            restored[order] = self._unstandardized_outputs(outputs)
        self._check_finite_outputs(restored, seqs)
        return restored, seqs

    def _check_finite_outputs(self, outputs: np.ndarray, seqs: Sequences) -> None:
        """Raise :class:`FloatingPointError` naming the sequences whose outputs
        (at valid steps) are not finite."""
        bad = ~np.isfinite(outputs)
        if self.target == "timestep":
            bad &= seqs.mask[:, : outputs.shape[1], None]
        bad = bad.reshape(len(bad), -1).any(axis=1)
        if not bad.any():
            return
        index = np.flatnonzero(bad)
        shown = ", ".join(str(int(i)) for i in index[:10])
        more = ", ..." if len(index) > 10 else ""
        raise FloatingPointError(
            f"The model's outputs are not finite for {len(index)} of "
            f"{len(bad)} sequences (indices {shown}{more}; lengths up to "
            f"{int(seqs.lengths[index].max())}): the recurrence overflowed, as "
            "happens on sequences much longer than the training ones when the "
            "memory amplifies its state, or on extreme input values. No "
            "prediction is made from non-finite outputs."
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # 2-D X are univariate sequences (n, T); 3-D X are (n, T, d)
        tags.input_tags.two_d_array = True
        tags.input_tags.three_d_array = True
        return tags


class _BaseSequenceClassifier(ClassifierMixin, _BaseSequenceEstimator):
    """Classification targets: multiclass (cross-entropy on logits) or
    multilabel (binary cross-entropy on logits)."""

    _fitted_attributes = {"classes_": "array"}

    def _encode_target(self, y, seqs: Sequences, *, reset: bool) -> np.ndarray:
        classes = None if reset else self.classes_
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
                encoded, new_classes = encode_labels(y, classes=classes)
        else:
            steps, has_output_axis = check_timestep_target(y, seqs)
            if has_output_axis:
                problem = "multilabel"
                encoded = pad_steps(check_binary_indicator(steps), seqs, 0.0)
                new_classes = np.arange(steps.shape[1])
            else:
                problem = "multiclass"
                indices, new_classes = encode_labels(steps, classes=classes)
                encoded = pad_steps(indices, seqs, IGNORE_INDEX)
        if not reset and (
            problem != self._problem or len(new_classes) != len(self.classes_)
        ):
            raise ValueError(
                f"warm_start can only be used where y has the same kind and "
                f"classes as in the previous call to fit; got a {problem} target "
                f"with {len(new_classes)} classes, previously a {self._problem} "
                f"target with {len(self.classes_)}."
            )
        self._problem = problem
        self.classes_ = new_classes
        self.n_outputs_ = len(new_classes)
        return encoded

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
            in the layout of ``X``.
        """
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
        """
        outputs, seqs = self._predict_outputs(X)
        if self._problem == "multiclass":
            proba = softmax(outputs, axis=-1)
        else:
            proba = expit(outputs)
        if self.target == "timestep":
            return format_like_input(proba, seqs)
        return proba

    def score(self, X, y, sample_weight=None):
        """Natural accuracy of the target kind.

        ``target='sequence'``: accuracy (subset accuracy for multilabel
        targets). ``target='timestep'``: accuracy over all valid time steps
        (each step weighted by its sequence's ``sample_weight``), or the
        frame-level accuracy :func:`sklmn.metrics.frame_level_accuracy` for
        multilabel targets (no ``sample_weight``).

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
        outputs, seqs = self._predict_outputs(X)
        steps, has_output_axis = check_timestep_target(y, seqs)
        valid = outputs[seqs.mask]
        if self._problem == "multilabel":
            if sample_weight is not None:
                raise ValueError(
                    "sample_weight is not supported by the frame-level accuracy of "
                    "multilabel per-time-step targets."
                )
            true = check_binary_indicator(steps)
            return _frame_level_accuracy_counts(true, (valid > 0).astype(np.float32))
        pred = self.classes_[valid.argmax(axis=-1)]
        weights = None
        if sample_weight is not None:
            weights = np.repeat(np.asarray(sample_weight, dtype=float), seqs.lengths)
        return float(accuracy_score(steps, pred, sample_weight=weights))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class _BaseSequenceRegressor(RegressorMixin, _BaseSequenceEstimator):
    """Regression targets (squared error), single or multi-output."""

    _fitted_attributes = {"_has_output_axis": "bool"}

    def _encode_target(self, y, seqs: Sequences, *, reset: bool) -> np.ndarray:
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
            steps = steps.reshape(steps.shape[0], -1)
            _check_float32_range(steps)
            encoded = pad_steps(steps.astype(np.float32), seqs, 0.0)
        n_outputs = encoded.shape[-1]
        if not reset and n_outputs != self.n_outputs_:
            raise ValueError(
                f"warm_start can only be used where y has the same number of "
                f"outputs as in the previous call to fit; got {n_outputs}, "
                f"previously {self.n_outputs_}."
            )
        self._problem = "continuous"
        self._has_output_axis = has_output_axis
        self.n_outputs_ = n_outputs
        return encoded

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
            return super().score(X, y, sample_weight=sample_weight)
        outputs, seqs = self._predict_outputs(X)
        steps, _ = check_timestep_target(y, seqs)
        steps = steps.astype(np.float64).reshape(steps.shape[0], -1)
        weights = None
        if sample_weight is not None:
            weights = np.repeat(np.asarray(sample_weight, dtype=float), seqs.lengths)
        return float(r2_score(steps, outputs[seqs.mask], sample_weight=weights))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
