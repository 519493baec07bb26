"""Shared base of the sequence estimators.

Every public estimator is a native scikit-learn class (mixin left,
:class:`~sklearn.base.BaseEstimator` right) that stores its arguments
untouched. ``fit`` and ``partial_fit`` are thin wrappers over one staged
:meth:`_BaseSequenceEstimator._fit`:

1. :meth:`~sklmn.estimators._prepare._FitPreparationMixin._prepare_fit`
   validates the data, fits the ``standardize`` statistics, builds the loss
   weights, holds out the validation data and builds the
   :class:`~sklmn.training.FitContext` (one ``_PreparedFit``);
2. the recurrent module of :mod:`sklmn.nn` (``_build_module``, the only thing
   a public class implements besides its parameters) gets its readout
   (``_sequence_net``) and its start (``_initialize_module``: the pretrainer
   of the classes that have one, ``estimators/_start.py``);
3. ``_make_net`` builds the skorch :class:`~sklmn.training.SequenceNeuralNet`
   with the callback chain of :func:`sklmn._training._chain.callback_chain`,
   into which the model families plug their callbacks (``_start_callbacks``,
   ``_plugin_callbacks``);
4. the net trains and the history is recorded.

The model families reach the base only through these hooks; the base names
none of their parameters. Targets are handled by the classifier and
regressor bases (``_supervised.py``).
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .._training import (
    ConvergenceMonitor,
    FitContext,
    SequenceDataset,
    SequenceNet,
    SequenceNeuralNet,
)
from .._training._chain import (
    OPTIMIZERS,
    callback_chain,
    check_callbacks,
    make_estimator_net,
)
from ..utils._atomic import atomic_fit as _atomic_fit
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils._doc_link import _DocLinkMixin
from ..utils._tags import _SequenceInputTagsMixin
from ..utils.sequences import INPUT_LAYOUTS, Sequences, validate_sequences
from ._persist import MAX_THREADS, PersistenceMixin
from ._prepare import _FitPreparationMixin
from ._threads import _resolved_threads, _seeded_torch, _torch_threads

__all__: list[str] = []

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


def _rule_parameter_message(estimator, name: str, value, key: str) -> str:
    """The error of ``set_params(<key>=...)`` when parameter ``name`` holds
    the string ``value`` (a rule such as ``'auto'``) or None, not an
    object."""
    kind = getattr(estimator, "_rule_parameter_objects", {}).get(name)
    example = (
        f"e.g. {{'{name}': [{kind}(...) for ...]}} or {{'{name}': [{kind}()], "
        f"'{key}': [...]}}"
        if kind
        else f"e.g. {{'{name}': [<object>], '{key}': [...]}}"
    )
    what = (
        "holds no object"
        if value is None
        else "is a rule resolved in fit, not an object with parameters"
    )
    return (
        f"Cannot set {key!r} on {type(estimator).__name__}: its parameter "
        f"{name}={value!r} {what}. Pass the object itself, as {name}=... in "
        f"set_params or in the parameter grid, {example}."
    )


def _completed(history, key: str) -> list[float]:
    """Values of ``key`` in the epochs of a skorch history that recorded it."""
    try:
        return [float(v) for v in history[:, key]] if len(history) else []
    except KeyError:  # no epoch completed
        return []


class _BaseSequenceEstimator(
    PersistenceMixin,
    _FitPreparationMixin,
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    BaseEstimator,
):
    """Training machinery shared by every sequence estimator.

    Subclasses implement ``_build_module(input_size)`` (the recurrent module
    of :mod:`sklmn.nn`) and the target hooks ``_encode_target`` and
    predictions (classifier/regressor bases); the model families plug in
    through the hooks ``_pooling``, ``_initialize_module``,
    ``_start_callbacks``, ``_plugin_callbacks``, ``_record_fit`` and
    ``_check_partial_fit_parameters``.
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

    #: Parameters added after models could be saved, with the values that
    #: keep an older saved model's behaviour (read by ``__setstate__`` and
    #: :func:`sklmn.persistence.load`; subclasses add theirs, merged over the
    #: class hierarchy by ``PersistenceMixin._added_parameters``)
    _added_parameter_values: dict = {"n_threads": None, "input_layout": None}

    _parameter_constraints: dict = {
        "target": [StrOptions({"sequence", "timestep", "ctc"})],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [
            StrOptions({"auto"}),
            Interval(Integral, 1, None, closed="left"),
        ],
        "bucket_by_length": ["boolean"],
        "learning_rate_init": [
            StrOptions({"auto"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "learning_rate": [StrOptions({"constant", "adaptive"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "optimizer": [StrOptions(set(OPTIMIZERS))],
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
        "n_threads": [
            Interval(Integral, 1, MAX_THREADS, closed="both"),
            StrOptions({"auto"}),
            None,
        ],
        "input_layout": [None, StrOptions(set(INPUT_LAYOUTS))],
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
        learning_rate_init="auto",
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
        n_threads="auto",
        input_layout=None,
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
        self.n_threads = n_threads
        self.input_layout = input_layout
        self.callbacks = callbacks

    def set_params(self, **params):
        """Set the parameters of this estimator (scikit-learn's contract).

        A nested parameter (``<name>__<key>``) of a parameter whose value is a
        string such as ``'auto'`` (a rule resolved in ``fit``, not an object)
        or None (``pretrainer=None``, ``incremental=None``) raises a
        ``ValueError`` that names the object to pass instead: the value is
        stored untouched, as scikit-learn's ``clone`` requires.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator
            This estimator.

        Examples
        --------
        >>> from sklmn.estimators import LMNClassifier
        >>> LMNClassifier().set_params(hidden_size=8).hidden_size
        8
        """
        names = self._get_param_names()
        for key in params:
            name, nested, _ = key.partition("__")
            if not nested or name not in names:
                continue
            value = params[name] if name in params else getattr(self, name, None)
            if isinstance(value, str) or value is None:
                raise ValueError(_rule_parameter_message(self, name, value, key))
        return super().set_params(**params)

    # ------------------------------------------------------------------ hooks
    def _build_module(self, input_size: int) -> torch.nn.Module:
        """Build the recurrent module (implemented by each public class)."""
        raise NotImplementedError

    def _pooling(self) -> str:
        """What the readout reads (hook): the last step; the LMN families
        read their ``pooling`` parameter."""
        return "last"

    def _sequence_net(
        self, recurrent: torch.nn.Module, pooling: str | None = None
    ) -> SequenceNet:
        """``recurrent`` with this estimator's readout: ``n_outputs_``
        outputs per sequence or per step, and its pooling (``pooling``
        when given: a pooling already chosen)."""
        return SequenceNet(
            recurrent,
            int(self.n_outputs_),
            per_step=self.target != "sequence",
            pooling=self._pooling() if pooling is None else pooling,
        )

    def _initialize_module(
        self, module: SequenceNet, context: FitContext, n_samples: int
    ) -> None:
        """Initialize ``module`` from the training data before training (hook).

        Called on a new model (not on warm starts) after the module and its
        readout are built with the seeded torch RNG, before the optimizer is
        created, with ``context`` (the training part of the ``n_samples``
        sequences when a validation split is held out). Nothing here; the
        classes with a ``pretrainer`` run it (``estimators/_start.py``).
        """

    def _choose_start(self, module, prepared, second_start):
        """The started module of a ``fit`` and its prepared data, or those of
        ``second_start()`` (a start of another configuration, the LMN
        classifiers' ``input_expansion='auto'``); here the first."""
        return module, prepared

    def _second_start(self, X, y, data: dict):
        """Prepare, build and start a second module for ``fit(X, y,
        **data)``, seeded as the first (see ``_choose_start``)."""
        prepared = self._prepare_fit(X, y, incremental=False, **data)
        torch.manual_seed(prepared.torch_seed)
        module = self._new_module(prepared)
        self._initialize_module(
            module, prepared.context, prepared.sequences.n_samples
        )
        return module, prepared

    def _new_module(self, prepared):
        """The untrained network of a new model for the ``prepared`` fit."""
        self._plan_fit(prepared.context, prepared.sequences.n_samples)
        return self._sequence_net(self._build_module(prepared.sequences.n_features))

    def _start_callbacks(self, context: FitContext) -> list:
        """``(name, callback)`` pairs of the model's start (hook), placed
        before the user's callbacks (the anchor to a pretrained start)."""
        return []

    def _plugin_callbacks(self, context: FitContext) -> list:
        """``(name, callback)`` pairs of the plug-ins of this fit (hook).

        Placed after the built-in and user callbacks and before the stopping
        rule; the multi-scale LMN's growth schedule plugs in here.
        """
        return []

    def _record_fit(self, net) -> None:
        """Set model-specific fitted attributes after training (hook)."""

    def _end_training(self, net) -> None:
        """Undo what the model's callbacks changed in the module for
        training only (hook; the LMN estimators' input normalization), after
        training ended or failed."""

    def _guard_fraction(self, n_samples: int, context: FitContext) -> float | None:
        """The fraction of the ``n_samples`` sequences that
        ``early_stopping='auto'`` holds out to judge the fine-tuning of a
        start fitted on all of them (``context``: all the sequences), or
        None (hook; the LMN estimators' smooth fine-tuning)."""
        return None

    #: The parameters that are settings of training or prediction, not of the
    #: model (a warm start may change them; subclasses add theirs)
    _training_parameters = frozenset(_parameter_constraints)

    def _model_parameter_names(self) -> list[str]:
        return sorted(
            k for k in self._parameter_constraints if k not in self._training_parameters
        )

    # ------------------------------------------------------------ the net
    def _make_net(
        self,
        module,
        context: FitContext | None,
        *,
        device,
        batch_size,
        lr,
        valid_dataset,
        shuffle_seed,
        monitor=True,
    ) -> SequenceNeuralNet:
        """The net that trains ``module`` at learning rate ``lr``; without
        ``context`` (a model loaded from a file), one for the fitted
        estimator's target; ``monitor=False`` (``partial_fit``): one pass,
        without plug-ins and stopping rule."""
        problem, per_step = self._problem, self.target == "timestep"
        stopping = None
        if monitor:
            stopping = ConvergenceMonitor(
                self.tol,
                self.n_iter_no_change,
                monitor="train_loss" if context is None else context.monitor,
                learning_rate=self.learning_rate,
                sink=print if self.verbose else None,
                train_eval_size="auto",
            )
        callbacks = callback_chain(
            problem=problem,
            per_step=per_step,
            validation=valid_dataset is not None,
            gradient_clipping=self.gradient_clipping,
            model_callbacks=[
                # callbacks set on the instance to run first (the benchmark
                # suite's start probe: the model's own callbacks may change
                # the network when training begins)
                *getattr(self, "_leading_callbacks", ()),
                *([] if context is None else self._start_callbacks(context)),
            ],
            user_callbacks=self.callbacks,
            verbose=self.verbose,
            plugin_callbacks=(
                self._plugin_callbacks(context)
                if monitor and context is not None
                else []
            ),
            stopping=stopping,
        )
        return make_estimator_net(
            module,
            callbacks,
            problem=problem,
            per_step=per_step,
            optimizer=self.optimizer,
            lr=lr,
            alpha=self.alpha,
            max_iter=self.max_iter,
            batch_size=batch_size,
            valid_dataset=valid_dataset,
            device=device,
            shuffle_seed=shuffle_seed,
            bucket_by_length=self.bucket_by_length,
            param_groups=self._optimizer_param_groups(lr),
        )

    def _plan_fit(self, context, n_samples: int) -> None:
        """Resolve, before the module of a new fit on ``n_samples``
        training sequences is built, the settings that depend on the data
        (none by default; the LMN estimators resolve their ``'auto'``
        memory options here)."""

    def _optimizer_param_groups(self, lr: float) -> list:
        """skorch ``param_groups`` of the optimizer (parameters trained at
        another rate than ``lr``); none by default."""
        return []

    # --------------------------------------------------------------- fitting
    @_fit_context(prefer_skip_nested_validation=True)
    @_atomic_fit
    def fit(
        self,
        X,
        y,
        sample_weight=None,
        *,
        X_val=None,
        y_val=None,
        sample_weight_val=None,
    ):
        """Train the model on sequences ``X`` and targets ``y``.

        ``fit`` is all or nothing: if it raises (invalid data, a
        :class:`~sklmn.callbacks.DivergenceWarning` made an error, a
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
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every sequence in the loss (a weighted
            mean; with ``target='timestep'`` every valid step of a sequence
            has its weight), in the validation loss and score of early
            stopping, and in the ``standardize`` statistics. Weights that are
            all equal are the same as None. Times the class weights, they
            also weight the rows of the readouts a pretrainer or a growth
            schedule fits (and the fold fits of the cross-validation behind
            a LAES start's choices); the linear autoencoders and
            ``memory_ring='auto'`` read the sequences unweighted.
        X_val : array-like or list of array-like, default=None
            Validation sequences monitored instead of a split of ``X``
            (like ``X_val`` of scikit-learn's
            :class:`~sklearn.ensemble.HistGradientBoostingClassifier`);
            requires ``early_stopping`` True or ``'auto'``.
        y_val : array-like or list of array-like, default=None
            Targets of ``X_val``.
        sample_weight_val : array-like of shape (n_val_samples,), default=None
            Weights of the sequences of ``X_val``.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        FloatingPointError
            If the trained parameters are not finite. A divergence
            during training does not raise: ``fit`` keeps the best weights
            and warns (:class:`sklmn.callbacks.RestoreOnDivergence`, added
            unless ``callbacks`` has one).

        Examples
        --------
        >>> from sklmn.datasets import make_adding_problem
        >>> from sklmn.estimators import RNNRegressor
        >>> X, y = make_adding_problem(30, length=5, random_state=0)
        >>> weights = 1.0 + (y > 1)  # the sequences of the larger sums count twice
        >>> reg = RNNRegressor(hidden_size=4, max_iter=5, random_state=0)
        >>> reg.fit(X, y, sample_weight=weights).n_iter_
        5
        """
        return self._fit(
            X,
            y,
            incremental=False,
            sample_weight=sample_weight,
            X_val=X_val,
            y_val=y_val,
            sample_weight_val=sample_weight_val,
        )

    def _fit(self, X, y, *, incremental: bool, **data):
        """``fit`` (``incremental=False``) or one ``partial_fit`` pass
        (``incremental=True``; the first call builds the model): prepare,
        build or copy the module, train, record."""
        check_callbacks(self.callbacks)  # before the data and a pretrainer
        prepared = self._prepare_fit(X, y, incremental=incremental, **data)
        with _seeded_torch(prepared.torch_seed), contextlib.ExitStack() as stack:
            if prepared.warm:
                # train a copy: a fit that fails leaves the fitted model intact
                module = copy.deepcopy(self.net_.module_)
            else:
                module = self._new_module(prepared)
            # 'auto' weighs the work of one training batch (no larger than
            # the training set)
            batch = min(prepared.batch_size, len(prepared.dataset))
            threads = _resolved_threads(self.n_threads, module, batch)
            stack.enter_context(
                _torch_threads(
                    threads, wait=not isinstance(self.n_threads, str), blas=True
                )
            )
            if not prepared.warm:
                self._initialize_module(
                    module, prepared.context, prepared.sequences.n_samples
                )
                if not incremental:
                    module, prepared = self._choose_start(
                        module, prepared, lambda: self._second_start(X, y, data)
                    )
            net = self._make_net(
                module,
                prepared.context,
                device=prepared.device,
                batch_size=prepared.batch_size,
                lr=prepared.lr,
                valid_dataset=prepared.valid_dataset,
                shuffle_seed=prepared.shuffle_seed,
                monitor=not incremental,
            )
            net.initialize()
            if incremental and prepared.warm:
                self._resume_optimizer(net)
            try:
                net.partial_fit(prepared.dataset, epochs=1 if incremental else None)
            finally:
                self._end_training(net)
        if incremental:
            self._record_pass(net, prepared.warm)
        else:
            self._record_training(net, prepared.warm)
        self.net_ = net
        self._fitted_params = self._current_fitted_params()
        self._record_fit(net)
        # completed epochs only: an epoch interrupted mid-way (a user's
        # KeyboardInterrupt) has a row in the history but did not run
        if (
            not incremental
            and not net.converged_
            # a divergence stopped training: its DivergenceWarning says so
            and net.divergence_ is None
            and len(_completed(net.history, "train_loss")) == self.max_iter
        ):
            warnings.warn(
                f"Maximum iterations ({self.max_iter}) reached and the "
                "optimization hasn't converged yet.",
                ConvergenceWarning,
                # _fit <- fit <- _atomic_fit wrapper <- _fit_context wrapper
                stacklevel=4,
            )
        return self

    def _record_training(self, net, warm: bool) -> None:
        """Check the net a ``fit`` trained and record its history."""
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

    def _record_pass(self, net, warm: bool) -> None:
        """Check the net of a ``partial_fit`` pass and extend the history."""
        if net.divergence_ is not None:  # a callback recovered: still a failure
            raise FloatingPointError(net.divergence_)
        losses = _completed(net.history, "train_loss")
        if net.interrupted_ and not losses:
            raise KeyboardInterrupt
        self._check_finite_parameters(net)
        self.loss_curve_ = (list(self.loss_curve_) if warm else []) + losses
        self.n_iter_ = len(self.loss_curve_)
        self.best_loss_ = float(self.loss_curve_[-1])
        self.best_epoch_ = self.n_iter_
        self.validation_loss_curve_ = None
        self.validation_scores_ = None
        self.best_validation_score_ = None
        self.diverged_ = False

    # ----------------------------------------------------------- partial_fit
    def _encode_partial_target(self, y, seqs, *, first: bool, classes):
        return self._encode_target(
            y, seqs, reset=first, context="partial_fit" if not first else None
        )

    def _resume_optimizer(self, net) -> None:
        """Carry the optimizer state (e.g. Adam's moments) of the previous
        ``net_`` over to ``net``, keeping ``net``'s learning rate and weight
        decay."""
        previous = getattr(self.net_, "optimizer_", None)
        if previous is None or type(previous) is not type(net.optimizer_):
            return
        fresh = [dict(group) for group in net.optimizer_.param_groups]
        try:
            net.optimizer_.load_state_dict(copy.deepcopy(previous.state_dict()))
        except (ValueError, KeyError, RuntimeError):  # another parameter layout
            return
        for group, settings in zip(net.optimizer_.param_groups, fresh, strict=True):
            for key in ("lr", "weight_decay"):
                if key in settings:
                    group[key] = settings[key]

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
        if warm and int(monitor.best_epoch_) == 0:
            # the weights this warm start began with were kept: those of the
            # epoch the previous fit kept (not its last epoch)
            self.best_epoch_ = int(getattr(self, "best_epoch_", len(previous)))
        else:
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

    def _current_fitted_params(self) -> dict:
        names = ["target", *self._model_parameter_names()]
        return {
            name: clone(value) if isinstance(value, BaseEstimator) else value
            for name, value in ((n, getattr(self, n)) for n in names)
        }

    def _check_warm_start(
        self,
        what: str = "warm_start=True",
        advice: str = "set warm_start=False to train a new model",
    ) -> None:
        changed = {
            name: (old, getattr(self, name))
            for name, old in self._fitted_params.items()
            if not _same_parameter(getattr(self, name), old)
        }
        if changed:
            desc = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(
                f"{what} cannot change the model's parameters ({desc}); {advice}."
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
        outputs, seqs = self._network_rows(X, features=False)
        with np.errstate(over="ignore", invalid="ignore"):
            restored = np.asarray(
                self._unstandardized_outputs(outputs), dtype=np.float64
            )
        self._check_finite_outputs(restored, seqs)
        return restored, seqs

    def _readout_features(self, X) -> np.ndarray:
        """What the readout reads (the pooled recurrent output) of every
        sequence of ``X``, float64, in the order of ``X``
        (:class:`~sklmn.estimators.ReadoutFeatures`)."""
        features, seqs = self._network_rows(X, features=True)
        self._check_finite_outputs(features, seqs)
        return features

    def _network_rows(self, X, *, features: bool) -> tuple[np.ndarray, Sequences]:
        """The network's outputs (or, with ``features``, its readout's
        inputs) of every sequence of ``X`` in the order of ``X``, and the
        validated ``X``."""
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
        n_threads = getattr(self, "n_threads", None)  # older pickles
        # 'auto' weighs the work of one evaluation batch, as in fit
        batch = self.net_.get_params_for("iterator_valid").get(
            "batch_size", self.net_.batch_size
        )
        if not isinstance(batch, int) or batch < 1:  # -1 (or None): one batch
            batch = len(dataset)
        threads = _resolved_threads(
            n_threads, self.net_.module_, min(batch, len(dataset))
        )
        predict = self.net_.predict_features if features else self.net_.predict_outputs
        with _torch_threads(threads, wait=not isinstance(n_threads, str)):
            rows = predict(dataset)
        restored = np.empty_like(rows, dtype=np.float64)
        restored[order] = rows
        return restored, seqs

    def _check_finite_outputs(self, outputs: np.ndarray, seqs: Sequences) -> None:
        """Raise :class:`FloatingPointError` naming the sequences whose outputs
        (at valid steps) are not finite."""
        bad = ~np.isfinite(outputs)
        if self.target != "sequence":
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
