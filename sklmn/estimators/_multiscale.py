"""Multi-scale LMN estimators (Carta et al. 2021 §3.2, Carta et al. 2020a §3)."""

from __future__ import annotations

from numbers import Integral

from sklearn.base import clone

from ..nn import MultiScaleLMN, _lmn_schur
from ..nn._clock import check_module_sizes, module_sizes
from ..utils._compat import HasMethods, Interval, StrOptions
from ._auto import auto_module_sizes
from ._base import _BaseSequenceEstimator
from ._docs import fill_doc
from ._expansion import INPUT_EXPANSION_CONSTRAINTS, _InputExpansionMixin
from ._lmn import (
    _LMN_CONSTRAINTS,
    FEEDBACK_DOC,
    FINE_TUNING_DOC,
    MEMORY_LR_SCALE_DOC,
    _LMNMemoryMixin,
    fitted_feedback,
    pretrained_alpha_doc,
)
from ._supervised import (
    CLASS_WEIGHT_CONSTRAINTS,
    _BaseSequenceClassifier,
    _BaseSequenceRegressor,
)

__all__ = ["MultiScaleLMNClassifier", "MultiScaleLMNRegressor"]

MULTISCALE_PARAMETERS_DOC = """\
%(sizes)s    n_modules : int, default=4
        Number of memory modules; module ``k`` (0-based) is updated every
        ``2**k`` steps and reads itself and the slower modules.
    output : {'memory', 'hidden'}, default='memory'
        What the readout reads: all memory modules ``m_t`` (Carta et al. 2021 eq. 8)
        or the hidden state ``h_t``.
    pooling : {'auto', 'last', 'last+mean', 'last+mean+max'}, default='auto'
        What the readout of a sequence-level target reads, as for the LMN
        estimators: the output at each sequence's last valid step
        (``'last'``, the papers' readout), that output side by side with
        its mean over the valid steps (``'last+mean'``, the mean scaled by
        the pretrainer to half the final states' root-mean-square norm, 1
        without one), or both and the output's maximum and minimum over the
        valid steps (``'last+mean+max'``); ``'auto'``: the LAES start takes
        a larger of these nested choices only when its readout
        cross-validates better with it on the training sequences
        (``pretrainer_.pooling_``); without a start training starts from the
        last step and the mean (the mean's weights at zero), as for the LMN
        estimators; the choice is ``pooling_``. With ``incremental`` the
        readout reads the last step (a growth stage reshapes that readout):
        ``'auto'`` resolves to ``'last'``, a pooled choice is an error
        (measurements: ``docs/training.md``, "The start decides: pooled
        readout and anchor by cross-validation").
    bidirectional : bool, default=False
        Add a reverse direction (a second multi-scale LMN reading each
        sequence backwards; outputs concatenated). With ``incremental`` both
        directions grow together.
    memory_matrix : {'auto', 'free', 'spectral', 'schur'}, default=%(memory_matrix)s
        Constraint on the memory recurrence: ``'free'``, the block
        upper-triangular matrix of the paper; ``'spectral'``, that matrix
        divided by its spectral radius (latch rule); ``'schur'``, held in real
        Schur form (one orthogonal change of coordinates per module), spectral
        radius below one whatever the optimizer does, the LAES start and the
        incremental growth exact. ``'auto'``: ``'schur'`` for
        ``pretrainer=None`` (its ring start) and for the ``'smooth'``,
        ``'projection'`` or ``'residual'`` ``fine_tuning``, ``'free'``
        otherwise (the ``'full'`` fine-tuning of a start); the parametrization
        used is ``memory_matrix_``. The regressors default to ``'schur'``, the
        classifiers to ``'auto'`` (chosen by measurement, see
        ``docs/memory.md``).
""" + MEMORY_LR_SCALE_DOC + """\
    orthogonality_penalty : float, default=0.0
        Weight of the soft orthogonality penalty on the memory recurrence
        added to the loss (Carta et al. 2020b §2.1).
    norm_penalty : float, default=0.0
        Weight of the norm stabilizer on the memory added to the loss
        (Carta et al. 2020b §2.1). It counts against the memory a growth
        stage of ``incremental`` training adds, which then refuses new
        modules (measurements: ``docs/training.md``, "The norm
        stabilizer").
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t-1}`` (Carta et al. 2020b §2.1).
    incremental : object or None, default=None
        Incremental training (Carta et al. 2021 Alg. 2, Carta et al. 2020a §4.1), e.g.
        :class:`~sklmn.pretraining.IncrementalTraining`: training starts with
        one module and adds slower ones (LAES-initialized) up to
        ``n_modules``, which is then the maximum; the fitted estimator records
        the stages in ``module_history_``. An object with a method
        ``make_callback(context, *, max_modules)`` (see
        :mod:`sklmn.training`; with modules of different sizes it is also
        given ``module_sizes``, the units of every module), cloned in
        ``fit`` into ``incremental_``;
        grid searches reach its parameters as ``incremental__<name>``. Not
        used on warm starts.
    pretrainer : 'auto', object or None, default='auto'
        Initialization from the data before training:
        :class:`~sklmn.pretraining.LAESInitializer` sets every module from a
        LAES of the inputs subsampled at the module's clock (see its
        documentation). ``'auto'``: ``LAESInitializer(alpha='gcv',
        readout='auto', modules='residual', C=3.0,
        random_state=random_state)`` (each module encodes what the faster
        ones leave; a logistic-regression readout for classifiers, which
        also try ``C_candidates=(0.3, 30.0, 300.0)``; when the first
        module is larger than the others, the LMN classifiers' ``C=1.0``
        and candidates ``(0.1, 10.0, 100.0)``; ridge chosen by
        generalized cross-validation for regressors) when the
        training set
        has at most 1000 sequences, the inputs are not constant and
        ``output='memory'`` (the start reads the memory modules), none
        otherwise; a regressor keeps the start only when its readout's
        leave-one-out R² is above 0.01, else it trains from the random
        initialization with a readout that predicts the training mean (as
        the LMN estimators). Cloned in ``fit`` into ``pretrainer_``; with
        ``incremental``, the first module is initialized. None: random
        (stable) initialization.
""" + pretrained_alpha_doc(
    10.0,
    """\
        ``0`` fine-tunes freely; ``'auto'``, as for the LMN estimators, is
        10 for a start whose ``pretrainer_.readout_cv_score_`` is at least
        0.9 and 0 otherwise. The default keeps fine-tuning close to the
        multi-scale start, the better model on the small tuning datasets
        (measured, see ``docs/training.md``). With ``incremental``, the
        parameters a growth stage reshapes (the memory blocks and the
        readout weights) are no longer pulled; the others stay pulled toward
        the first module's start.""",
    kind="float or 'auto'",
) + FINE_TUNING_DOC + FEEDBACK_DOC


#: the ``pretrainer='auto'`` start of modules of one size: a weaker penalty
#: than the LMN's on its logistic readout, a tenth, 10 and 100 times it as
#: candidates (docs/training.md, "The multi-scale start") ...
_EQUAL_MODULES_LAES = {
    "modules": "residual",
    "C": 3.0,
    "C_candidates": (0.3, 30.0, 300.0),
}
#: ... and of a first module larger than the others: the LMN classifiers'
#: penalty and candidates (docs/memory.md, "Modules of different sizes")
_LEADING_MODULE_LAES = {
    "modules": "residual",
    "C": 1.0,
    "C_candidates": (0.1, 10.0, 100.0),
}

#: the classifier's ``hidden_size`` and ``memory_size`` entries
_CLASSIFIER_SIZES_DOC = """\
    hidden_size : int or 'auto', default='auto'
        Hidden (functional, nonlinear) units. ``'auto'``: as many as the
        memory units of all modules, so that the LAES start gives each
        module its own hidden units; the fitted estimator's
        ``hidden_size_`` holds them.
    memory_size : int, tuple of int or 'auto', default='auto'
        Linear memory units per module, or a tuple of ``n_modules`` sizes
        (fastest module first). ``'auto'``: with a pretrained start
        (``pretrainer``) and fewer than 100 training sequences, a first
        module of 32 units (the LMN classifier's memory there) and slower
        modules of 12 units; otherwise modules of 12 units. The fitted
        estimator's ``memory_size_`` holds the sizes. See
        ``docs/memory.md``, "Modules of different sizes".
"""

#: the regressor's
_REGRESSOR_SIZES_DOC = """\
    hidden_size : int, default=32
        Hidden (functional, nonlinear) units.
    memory_size : int or tuple of int, default=8
        Linear memory units per module, or a tuple of ``n_modules`` sizes
        (fastest module first); the classifier's larger sizes gave
        no better regressor (measurements: ``docs/training.md``, "The
        multi-scale classifier's sizes").
"""


class _MultiScaleLMNMixin(_LMNMemoryMixin):
    """Model parameters and module of the multi-scale LMN estimators."""

    _fitted_attributes = {
        "pretrainer_": "estimator?",
        "pretrained_alpha_": "float",
        "pooling_": "str",
        "incremental_": "estimator",
        "module_history_": "list",
        "n_modules_": "int",
        "memory_size_": "sizes",
        "hidden_size_": "int",
    }

    #: fitted sizes the network is rebuilt from (bounded when a file loads)
    _fitted_sizes: tuple = ("memory_size_", "hidden_size_")

    _parameter_constraints = {
        **_BaseSequenceEstimator._parameter_constraints,
        # the LMN's, but for its layers, memory bias and dropout
        **{
            name: constraint
            for name, constraint in _LMN_CONSTRAINTS.items()
            if name not in ("num_layers", "memory_bias", "dropout")
        },
        "n_modules": [Interval(Integral, 1, None, closed="left")],
        # an int or one size per module (checked when the fit plans them)
        "memory_size": [Interval(Integral, 1, None, closed="left"), tuple, list],
        # no 'orthogonal': an orthogonal block-triangular matrix is block
        # diagonal
        "memory_matrix": [StrOptions({"auto", "free", "spectral", "schur"})],
        "incremental": [None, HasMethods(["make_callback"])],
    }

    def _build_module(
        self, input_size: int, memory_matrix: str | None = None
    ) -> MultiScaleLMN:
        """The multi-scale LMN; ``memory_matrix`` overrides the fit's (a
        residual fit's frozen start)."""
        sizes = self._module_sizes()
        growing = self.incremental is not None
        return MultiScaleLMN(
            input_size,
            self._hidden_units(),
            # incremental training starts with one module (Carta et al. 2021 Alg. 2)
            sizes[0] if growing else sizes,
            1 if growing else self.n_modules,
            output=self.output,
            bidirectional=self.bidirectional,
            memory_matrix=memory_matrix or self._memory_matrix(),
            orthogonality_penalty=float(self.orthogonality_penalty),
            norm_penalty=float(self.norm_penalty),
            truncate_gradient=self.truncate_gradient,
            ring=self._fitted_memory_ring(),
            feedback=fitted_feedback(self),
        )

    #: the classes to name when ``<name>__<key>`` is set on a string or None
    #: ``pretrainer`` or ``incremental`` (``_BaseSequenceEstimator.set_params``)
    _rule_parameter_objects: dict = {
        **_LMNMemoryMixin._rule_parameter_objects,
        "incremental": "sklmn.pretraining.IncrementalTraining",
    }

    #: the multi-scale LAES start reads the memory modules: with
    #: ``output='hidden'``, ``pretrainer='auto'`` trains without a start
    _laes_start_outputs: tuple = ("memory",)

    def _default_ring(self) -> tuple:
        return _lmn_schur._MULTISCALE_SCHUR_RING

    def _ring_memory_units(self) -> int:
        return sum(self._module_sizes())

    def _plan_memory_size(self, context, n_samples: int) -> None:
        size = self.memory_size
        if isinstance(size, str):  # 'auto'
            started = self._resolve_pretrainer(n_samples, context) is not None
            size = auto_module_sizes(n_samples, started, int(self.n_modules))
        try:
            size = check_module_sizes(size, int(self.n_modules))
        except ValueError as error:
            raise ValueError(f"{error} (n_modules={self.n_modules!r})") from None
        self.memory_size_ = size
        hidden = self.hidden_size
        if isinstance(hidden, str):  # 'auto'
            hidden = sum(self._module_sizes())
        self.hidden_size_ = int(hidden)

    def _module_sizes(self) -> tuple[int, ...]:
        """Memory units of every module (the fit's ``memory_size_``; of the
        ``memory_size`` parameter for a model fitted before it existed)."""
        size = getattr(self, "memory_size_", None)
        if size is None:
            size = check_module_sizes(self.memory_size, int(self.n_modules))
        return module_sizes(size, int(self.n_modules))

    def _hidden_units(self) -> int:
        """Hidden units (the fit's ``hidden_size_``; the ``hidden_size``
        parameter for a model fitted before it existed)."""
        hidden = getattr(self, "hidden_size_", None)
        return int(self.hidden_size if hidden is None else hidden)

    @property
    def _auto_laes_params(self) -> dict:
        """The ``pretrainer='auto'`` start: modules fitted to what the faster
        ones leave (``modules='residual'``) and the penalty of the logistic
        readout of its module states, measured on the tuning subset: for
        modules of one size a weaker one than the LMN's (``docs/training.md``,
        "The multi-scale start"), for a first module larger than the others
        (the LMN's memory) the LMN classifiers' (``docs/memory.md``,
        "Modules of different sizes")."""
        size = getattr(self, "memory_size_", self.memory_size)
        leading = (
            isinstance(size, tuple | list)
            and len(size) > 1
            and size[0] > max(size[1:])
        )
        return _LEADING_MODULE_LAES if leading else _EQUAL_MODULES_LAES

    def _pooling(self) -> str:
        pooling = super()._pooling()
        if self.incremental is None or pooling == "last":
            return pooling
        if pooling == "auto":  # growth stages reshape a last-step readout
            return "last"
        raise ValueError(
            f"pooling={pooling!r} cannot be combined with incremental training "
            "(a growth stage reshapes the last-step readout); use "
            "pooling='last' or 'auto', which reads the last step there"
        )

    def _check_partial_fit_parameters(self) -> None:
        super()._check_partial_fit_parameters()
        if self.incremental is not None:
            raise ValueError(
                "partial_fit does not support growth schedules, got "
                f"incremental={self.incremental!r}; use fit, or incremental=None."
            )

    def _plugin_callbacks(self, context) -> list:
        if self.incremental is None or context.warm_start:
            return []
        self.incremental_ = clone(self.incremental)
        sizes = self._module_sizes()
        extra = {} if len(set(sizes)) == 1 else {"module_sizes": sizes}
        callback = self.incremental_.make_callback(
            context, max_modules=self.n_modules, **extra
        )
        return [("incremental", callback)]

    def _record_fit(self, net) -> None:
        super()._record_fit(net)
        growth = dict(net.callbacks_).get("incremental")
        if growth is not None:
            self.module_history_ = growth.history_
            self._record_kept_stage(growth.history_)
        self.n_modules_ = net.module_.recurrent.n_modules

    def _record_kept_stage(self, stages) -> None:
        """``best_epoch_``, ``best_loss_`` and ``best_validation_score_`` of
        the weights kept when growth restored an earlier stage (the
        stopping rule's own record restarts at every new module, so it
        describes the best epoch of the last stage, not the kept one)."""
        kept = [stage for stage in stages if stage["kept"]]
        if len(kept) == len(stages) or kept[-1]["best_epoch"] is None:
            return
        stage = kept[-1]
        self.best_epoch_ = int(stage["best_epoch"])
        i = self.best_epoch_ - 1
        vlosses = self.validation_loss_curve_ or []
        scores = self.validation_scores_ or []
        if i < len(vlosses):
            self.best_loss_ = float(vlosses[i])
            self.best_validation_score_ = float(scores[i]) if i < len(scores) else None
        else:  # monitored on the training loss, as the growth measured it
            self.best_loss_ = -float(stage["best_score"])


@fill_doc(
    MULTISCALE_PARAMETERS_DOC.replace("%(sizes)s", _CLASSIFIER_SIZES_DOC).replace(
        "%(memory_matrix)s", "'auto'"
    )
)
class MultiScaleLMNClassifier(
    _InputExpansionMixin, _MultiScaleLMNMixin, _BaseSequenceClassifier
):
    """Multi-scale Linear Memory Network classifier.

    An LMN whose linear memory is split into ``n_modules`` modules updated
    at exponentially slower rates (module ``k`` every ``2**k`` steps), so
    that slow modules keep long-range information (Carta et al. 2021 §3.2). The
    incremental training of the papers (adding modules one at a time) is
    the ``incremental`` option; by default all modules are trained end to
    end.

    The readout is linear, trained with cross-entropy on logits (multiclass,
    including binary) or binary cross-entropy (multilabel indicator
    targets).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s
    %(class_weight)s
    %(input_expansion)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_labels)`` for multilabel targets).
    n_modules_ : int
        Number of memory modules of the fitted model (``n_modules`` unless
        incremental training stopped growing earlier).
    module_history_ : list of dict
        With ``incremental``: one entry per stage (``n_modules``,
        ``epoch_added``, ``best_score`` and ``best_epoch`` of the monitored
        score, training loss right after growth before and after the
        least-squares readout fit ``loss_before_fit`` / ``loss_after_fit``,
        and ``kept``); see :class:`~sklmn.pretraining.IncrementalTraining`.
    incremental_ : object
        The clone of ``incremental`` used by the last ``fit``.
    %(start_attributes)s
    %(input_expansion_attributes)s
    %(fitted_attributes)s

    See Also
    --------
    MultiScaleLMNRegressor : The regressor counterpart.
    LMNClassifier : Single-scale LMN.
    RNNClassifier : Baselines, including the Clockwork RNN.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import MultiScaleLMNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = [rng.randn(rng.randint(3, 8), 2) for _ in range(40)]
    >>> y = np.array(["up" if x[0, 0] > 0 else "down" for x in X])
    >>> clf = MultiScaleLMNClassifier(hidden_size=8, memory_size=4, n_modules=2,
    ...                               max_iter=5, random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape, clf.predict_proba(X[:3]).shape
    ((3,), (3, 2))
    """

    _parameter_constraints = {
        **_MultiScaleLMNMixin._parameter_constraints,
        **CLASS_WEIGHT_CONSTRAINTS,
        **INPUT_EXPANSION_CONSTRAINTS,
        "hidden_size": [
            Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
        ],
        "memory_size": [
            Interval(Integral, 1, None, closed="left"),
            tuple,
            list,
            StrOptions({"auto"}),
        ],
    }

    def __init__(
        self,
        hidden_size="auto",
        memory_size="auto",
        n_modules=4,
        *,
        output="memory",
        pooling="auto",
        bidirectional=False,
        memory_matrix="auto",
        memory_lr_scale="auto",
        memory_ring="auto",
        orthogonality_penalty=0.0,
        norm_penalty=0.0,
        truncate_gradient=False,
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
        incremental=None,
        pretrainer="auto",
        pretrained_alpha=10.0,
        fine_tuning="auto",
        feedback="auto",
        input_expansion="auto",
        class_weight=None,
        decoding="greedy",
        beam_width=10,
    ):
        super().__init__(
            target=target,
            standardize=standardize,
            max_iter=max_iter,
            batch_size=batch_size,
            bucket_by_length=bucket_by_length,
            learning_rate_init=learning_rate_init,
            learning_rate=learning_rate,
            alpha=alpha,
            optimizer=optimizer,
            gradient_clipping=gradient_clipping,
            early_stopping=early_stopping,
            validation_metric=validation_metric,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            verbose=verbose,
            random_state=random_state,
            device=device,
            n_threads=n_threads,
            input_layout=input_layout,
            callbacks=callbacks,
        )
        self.hidden_size = hidden_size
        self.memory_size = memory_size
        self.n_modules = n_modules
        self.output = output
        self.pooling = pooling
        self.bidirectional = bidirectional
        self.memory_matrix = memory_matrix
        self.memory_lr_scale = memory_lr_scale
        self.memory_ring = memory_ring
        self.orthogonality_penalty = orthogonality_penalty
        self.norm_penalty = norm_penalty
        self.truncate_gradient = truncate_gradient
        self.incremental = incremental
        self.pretrainer = pretrainer
        self.pretrained_alpha = pretrained_alpha
        self.fine_tuning = fine_tuning
        self.feedback = feedback
        self.input_expansion = input_expansion
        self.class_weight = class_weight
        self.decoding = decoding
        self.beam_width = beam_width


@fill_doc(
    MULTISCALE_PARAMETERS_DOC.replace("%(sizes)s", _REGRESSOR_SIZES_DOC).replace(
        "%(memory_matrix)s", "'schur'"
    )
)
class MultiScaleLMNRegressor(_MultiScaleLMNMixin, _BaseSequenceRegressor):
    """Multi-scale Linear Memory Network regressor.

    An LMN whose linear memory is split into ``n_modules`` modules updated
    at exponentially slower rates (module ``k`` every ``2**k`` steps), so
    that slow modules keep long-range information (Carta et al. 2021 §3.2). The
    incremental training of the papers (adding modules one at a time) is
    the ``incremental`` option; by default all modules are trained end to
    end.

    The readout is linear, trained with the squared error (single or multi-output,
    per sequence or per time step).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    n_modules_ : int
        Number of memory modules of the fitted model (``n_modules`` unless
        incremental training stopped growing earlier).
    module_history_ : list of dict
        With ``incremental``: one entry per stage (``n_modules``,
        ``epoch_added``, ``best_score`` and ``best_epoch`` of the monitored
        score, training loss right after growth before and after the
        least-squares readout fit ``loss_before_fit`` / ``loss_after_fit``,
        and ``kept``); see :class:`~sklmn.pretraining.IncrementalTraining`.
    incremental_ : object
        The clone of ``incremental`` used by the last ``fit``.
    %(start_attributes)s
    %(fitted_attributes)s

    See Also
    --------
    MultiScaleLMNClassifier : The classifier counterpart.
    LMNRegressor : Single-scale LMN.
    RNNRegressor : Baselines, including the Clockwork RNN.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import MultiScaleLMNRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 6, 1)
    >>> y = X[:, 0, 0]  # remember the first input
    >>> reg = MultiScaleLMNRegressor(hidden_size=8, memory_size=4, n_modules=2,
    ...                              max_iter=5, random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        hidden_size=32,
        memory_size=8,
        n_modules=4,
        *,
        output="memory",
        pooling="auto",
        bidirectional=False,
        memory_matrix="schur",
        memory_lr_scale="auto",
        memory_ring="auto",
        orthogonality_penalty=0.0,
        norm_penalty=0.0,
        truncate_gradient=False,
        target="sequence",
        standardize=True,
        max_iter=200,
        batch_size="auto",
        bucket_by_length=False,
        learning_rate_init="auto",
        learning_rate="adaptive",
        alpha=1e-4,
        optimizer="adam",
        gradient_clipping=1.0,
        early_stopping="auto",
        validation_metric="loss",
        validation_fraction=0.1,
        n_iter_no_change=20,
        tol=1e-4,
        warm_start=False,
        verbose=0,
        random_state=None,
        device="cpu",
        n_threads="auto",
        input_layout=None,
        callbacks=None,
        incremental=None,
        pretrainer="auto",
        pretrained_alpha=10.0,
        fine_tuning="auto",
        feedback="auto",
    ):
        super().__init__(
            target=target,
            standardize=standardize,
            max_iter=max_iter,
            batch_size=batch_size,
            bucket_by_length=bucket_by_length,
            learning_rate_init=learning_rate_init,
            learning_rate=learning_rate,
            alpha=alpha,
            optimizer=optimizer,
            gradient_clipping=gradient_clipping,
            early_stopping=early_stopping,
            validation_metric=validation_metric,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            verbose=verbose,
            random_state=random_state,
            device=device,
            n_threads=n_threads,
            input_layout=input_layout,
            callbacks=callbacks,
        )
        self.hidden_size = hidden_size
        self.memory_size = memory_size
        self.n_modules = n_modules
        self.output = output
        self.pooling = pooling
        self.bidirectional = bidirectional
        self.memory_matrix = memory_matrix
        self.memory_lr_scale = memory_lr_scale
        self.memory_ring = memory_ring
        self.orthogonality_penalty = orthogonality_penalty
        self.norm_penalty = norm_penalty
        self.truncate_gradient = truncate_gradient
        self.incremental = incremental
        self.pretrainer = pretrainer
        self.pretrained_alpha = pretrained_alpha
        self.fine_tuning = fine_tuning
        self.feedback = feedback
