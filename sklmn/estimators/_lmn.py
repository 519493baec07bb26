"""The :class:`LMNClassifier` and :class:`LMNRegressor` (Carta et al. 2021 §3.1)."""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import clone, is_classifier

from .._training._module import POOLINGS
from .._training._projection import VariableProjection
from .._training._smooth import (
    LinearWarmup,
    ModeInputNormalization,
    carry_optimizer_state,
    input_normalization_factors,
    remove_input_normalization,
)
from ..nn import LMN, _lmn_schur
from ..nn._base import DEFAULT_INIT_RADIUS
from ..nn._lmn_schur import check_ring
from ..pretraining import LAESInitializer, ProjectionFineTuning
from ..utils._compat import HasMethods, Interval, StrOptions
from ._auto import _AUTO_BATCH_LARGE_DATA, auto_memory_size
from ._base import _BaseSequenceEstimator
from ._docs import fill_doc
from ._expansion import INPUT_EXPANSION_CONSTRAINTS, _InputExpansionMixin
from ._prepare import _take_sequences
from ._ring import choose_ring
from ._start import _PretrainedStartMixin, _resolve_pooling_
from ._supervised import (
    CLASS_WEIGHT_CONSTRAINTS,
    _BaseSequenceClassifier,
    _BaseSequenceRegressor,
)

__all__ = ["LMNClassifier", "LMNRegressor"]

#: ``pretrainer='auto'`` initializes from a LAES up to this many training
#: sequences and trains from the random initialization above it.
_AUTO_PRETRAINING_MAX = 1000
#: Ridge penalty of the LAES readout chosen for ``pretrainer='auto'`` (used
#: by regressors; classifiers get the logistic readout): by generalized
#: cross-validation (docs/training.md, "The regressors' readout penalty").
_AUTO_LAES_ALPHA = "gcv"
#: The other penalties ``C`` that the classifiers' ``pretrainer='auto'``
#: tries for its logistic readout, each taken only when it cross-validates
#: better by more than one sequence in ``n`` (docs/training.md, "The
#: readout's penalty").
_AUTO_C_CANDIDATES = (0.1, 10.0, 100.0)

_LMN_CONSTRAINTS = {
    "hidden_size": [Interval(Integral, 1, None, closed="left")],
    "memory_size": [Interval(Integral, 1, None, closed="left")],
    "num_layers": [Interval(Integral, 1, None, closed="left")],
    "output": [StrOptions({"memory", "hidden"})],
    "pooling": [StrOptions(set(POOLINGS))],
    "bidirectional": ["boolean"],
    "memory_matrix": [
        StrOptions({"auto", "free", "orthogonal", "spectral", "schur"})
    ],
    "memory_bias": ["boolean"],
    "memory_lr_scale": [
        Interval(Real, 0, None, closed="neither"),
        StrOptions({"auto"}),
    ],
    "memory_ring": [None, tuple, list, StrOptions({"auto"})],
    "orthogonality_penalty": [Interval(Real, 0, None, closed="left")],
    "norm_penalty": [Interval(Real, 0, None, closed="left")],
    "truncate_gradient": ["boolean"],
    "dropout": [Interval(Real, 0, 1, closed="left")],
    "pretrainer": [None, StrOptions({"auto"}), HasMethods(["initialize"])],
    "pretrained_alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
    "fine_tuning": [
        StrOptions({"auto", "full", "smooth", "projection", "residual"}),
        ProjectionFineTuning,
    ],
    "feedback": [StrOptions({"auto", "free", "none"})],
}

#: docstring entry of ``fine_tuning`` (LMN and multi-scale LMN)
FINE_TUNING_DOC = """\
    fine_tuning : {'auto', 'full', 'smooth', 'projection', 'residual'} or \
ProjectionFineTuning, default='auto'
        What training does with a pretrained start. ``'full'``: every
        parameter of the pretrained network trains at the learning rate
        (the papers' fine-tuning). ``'smooth'``: every parameter trains,
        with the memory made to move slowly: a ``'schur'`` memory for
        ``memory_matrix='auto'`` (with ``output='memory'``; the hidden
        output's start keeps its free memory), no feedback for
        ``feedback='auto'`` (see ``feedback``), a learning rate of 0.0003
        for ``learning_rate_init='auto'``, the memory (and a
        ``feedback='free'``) at 1/100 of it for
        ``memory_lr_scale='auto'``, the learning rate raised
        linearly over the first 10 epochs, the input of each Schur
        mode trained in units of the mode's gain (``W_hm = diag(1 -
        |lambda|) V``, ``V`` trained), and, for ``early_stopping='auto'``,
        a quarter of the training sequences held out to judge the
        fine-tuning, the start being fitted on all of them (the start is
        the first candidate of the best weights, so fine-tuning is kept
        only where it predicts the held-out quarter better). The warm-up
        and the mode input are those of the fit that fine-tunes the start
        (in ``partial_fit``, the first call: one pass at 1/10 of the rate);
        a warm start or a later ``partial_fit`` call trains ``W_hm``
        itself, at the fitted rates. ``'projection'`` (a classifier of one
        label per sequence): the smooth fine-tuning's network and epochs,
        after its recurrent part is trained through the readout that is
        refitted after it: full-batch Adam steps on the cross-validated
        error of a closed-form ridge readout, a logistic readout refitted on
        the result and written into the linear readout, the number of steps
        (up to 100) chosen on a quarter of the start's sequences held out
        from a second start fitted on the other three quarters, the start
        kept when no copy predicts them better by more than one sequence;
        the steps kept are ``projection_steps_``. Then a readout of each
        pooled feature's piecewise-linear splines is cross-validated on the
        training sequences against the linear one and becomes part of the
        network when it gets more than two more of them right
        (``projection_splines_``). A
        :class:`~sklmn.pretraining.ProjectionFineTuning` is
        ``'projection'`` with its settings (steps, learning rate, folds,
        splines), a
        parameter ``GridSearchCV`` can tune (``fine_tuning__steps``). A
        multilabel target trains as ``'smooth'``; a regressor or per-step
        targets are an error. See ``docs/memory.md``, "Variable
        projection" and "The spline readout".
        ``'residual'``: the pretrained network
        is kept frozen and a second network of the same architecture,
        trained from the random start (as with ``pretrainer=None``: the
        ``'schur'`` memory on its ring for ``memory_matrix='auto'``, the
        memory learning-rate fraction and the batch size of training from
        scratch), adds its outputs to the start's. Its readout starts at
        zero, so training begins exactly at the start and learns what the
        start leaves unexplained. ``'auto'``: ``'projection'`` for a
        classifier of one label per sequence (``'smooth'`` for multilabel
        targets) with a LAES start (``pretrainer='auto'``
        or a ``LAESInitializer``; a ``'schur'`` or ``'auto'`` memory, its
        memory as output, no ``incremental`` growth), ``'full'`` otherwise
        (other pretrainers, the regressors). Without a start
        (``pretrainer=None``, or ``'auto'`` above 1000 sequences or on
        constant inputs, or a start the start policy drops) and with
        ``incremental`` training one network trains from its start, as with
        ``'full'``; the choice made is ``fine_tuning_``. See
        ``docs/memory.md``, "The projection as the default", "Smooth
        fine-tuning as the default" and "Residual fine-tuning".
"""


#: docstring entry of ``feedback`` (LMN and multi-scale LMN)
FEEDBACK_DOC = """\
    feedback : {'auto', 'free', 'none'}, default='auto'
        Whether the hidden units read the memory through the feedback
        ``W_mh`` (``h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)``).
        ``'free'``: a trained ``W_mh`` (the papers' LMN). ``'none'``:
        ``W_mh = 0``, never trained, so the linearized memory map ``W_mm +
        W_hm D W_mh`` is ``W_mm`` for every derivative ``D`` of the tanh, of
        spectral radius below one by construction with a ``'schur'``
        memory (the small-gain bound of the feedback, which at the slow
        memories of these models leaves no room for feedback); the kernel
        then computes the hidden states of all steps at once. ``'auto'``:
        ``'none'`` for the ``'smooth'`` and ``'projection'`` fine-tuning of a
        LAES start (the classifiers' default, whose start has no feedback) and
        for a regressor whose memory is ``'schur'``, whose start is a LAES
        start or the random one (``pretrainer='auto'``, a
        :class:`~sklmn.pretraining.LAESInitializer` or None) and whose output
        is its memory; ``'free'`` otherwise (the classifiers trained from their
        random start, whose accuracy the bound costs, the ``'full'`` and
        ``'residual'`` fine-tuning, and the unrolled transfer, which writes
        ``W_mh``). Chosen before the start policy: a smooth fit whose start is
        dropped trains without feedback.
        ``'none'`` with ``output='hidden'`` is an error (the output would
        carry no memory). The choice made is ``feedback_``. See
        ``docs/memory.md``, "The feedback bound" and "The default fits
        without feedback".
"""


#: docstring entry of ``memory_lr_scale`` (LMN and multi-scale LMN)
MEMORY_LR_SCALE_DOC = """\
    memory_lr_scale : float or 'auto', default='auto'
        The memory's recurrent parameters (``W_mm``, or the parameters of a
        ``'schur'`` memory) and the memory-to-hidden feedback ``W_mh`` train
        at this fraction of the learning rate (an optimizer parameter group
        of their own). ``'auto'``: 0.1 for a ``'schur'`` memory trained
        without a pretrained start, 0.01 for the ``'smooth'`` and
        ``'projection'`` fine-tuning of a start, 1.0 otherwise; the value
        used is ``memory_lr_scale_`` (see ``docs/memory.md``, "Training
        from scratch").
    memory_ring : 'auto', tuple (r_min, r_max, max_angle) or None, default='auto'
        The random start of a ``'schur'`` memory (ignored by the other
        memories and overwritten by a pretrained start): eigenvalue moduli
        uniform on the ring ``r_min <= |lambda| <= r_max``, angles uniform
        in ``[0, max_angle]`` (radians), with ``0 <= r_min <= r_max < 1``
        and ``max_angle <= pi``. None: the model's ring, ``(0.9, 0.999,
        pi / 20)`` for the LMN and ``(0.9, 0.999, pi / 10)`` for the
        multi-scale LMN. ``'auto'``: for a classifier of one label per
        sequence whose Schur memory trains from its ring (no pretrained
        start, or the second network of ``fine_tuning='residual'``), the
        model's ring, the fast ring
        ``(0.9, 0.999, pi / 2)`` or the wide ring ``(0.5, 0.999, pi)``,
        the one whose random linear-memory features predict the training
        classes clearly better by cross-validation (no network is
        trained); the model's ring otherwise. The ring used is
        ``memory_ring_``. A grid search can also tune it (see
        ``docs/memory.md``, "The ring chosen from the data").
"""

#: ``batch_size='auto'`` of an LMN or multi-scale LMN classifier trained from the
#: Schur ring start
#: (``pretrainer=None``) on up to 1000 sequences, measured in docs/memory.md
#: ("Training from scratch": with one full batch per epoch the stopping rule's
#: patience is a handful of optimizer steps)
_SCRATCH_BATCH_SIZE = 16

#: ``memory_lr_scale='auto'`` for a Schur memory trained from its ring start
#: (no pretrainer), measured in docs/memory.md ("Training from scratch")
_SCRATCH_MEMORY_LR_SCALE = 0.1


#: ``memory_lr_scale='auto'`` of the ``'smooth'`` fine-tuning of a start,
#: ``LinearWarmup`` epochs and the fraction of the training sequences that
#: ``early_stopping='auto'`` holds out to judge it (docs/memory.md, "Smooth
#: fine-tuning as the default")
_SMOOTH_MEMORY_LR_SCALE = 0.01
_SMOOTH_WARMUP_EPOCHS = 10
_SMOOTH_GUARD_FRACTION = 0.25
#: the fine-tunings of a start that build the smooth fine-tuning's network
#: and train it at its rates (``'projection'``: after its projection steps)
_SMOOTH_FAMILY = ("smooth", "projection")
#: ``learning_rate_init='auto'`` of the ``'smooth'`` fine-tuning of a start
#: (up to 1000 sequences, where ``pretrainer='auto'`` starts from a LAES)
_SMOOTH_LEARNING_RATE = 3e-4


def resolve_memory_matrix(estimator, fine_tuning: str = "full") -> str:
    """The memory parametrization of an LMN estimator's next fit: its
    ``memory_matrix``, with ``'auto'`` resolved: ``'schur'`` for
    ``pretrainer=None``, a ``'residual'`` ``fine_tuning`` (the fit's,
    resolved: its second network trains from the random start) or a
    ``'smooth'`` one of a network whose output is its memory, ``'free'``
    otherwise (the ``'full'`` fine-tuning of a LAES start keeps its dense
    memory).

    Examples
    --------
    >>> from sklmn.estimators import LMNClassifier
    >>> resolve_memory_matrix(LMNClassifier(pretrainer=None))
    'schur'
    >>> resolve_memory_matrix(LMNClassifier(), fine_tuning="full")
    'free'
    >>> resolve_memory_matrix(LMNClassifier(), fine_tuning="smooth")
    'schur'
    """
    if estimator.memory_matrix != "auto":
        return estimator.memory_matrix
    # a residual fit trains its second network from the random start
    scratch = estimator.pretrainer is None or fine_tuning == "residual"
    # the hidden-output LAES start needs a free memory
    smooth = fine_tuning in _SMOOTH_FAMILY and _reads_memory(estimator)
    return "schur" if scratch or smooth else "free"


def _laes_start(estimator) -> bool:
    """Whether the ``pretrainer`` gives a LAES start (``'auto'``'s, or a
    :class:`~sklmn.pretraining.LAESInitializer`)."""
    return isinstance(estimator.pretrainer, str | LAESInitializer)


def _reads_memory(estimator) -> bool:
    """Whether the network's output is its memory (``output='memory'``)."""
    return getattr(estimator, "output", "memory") == "memory"


def resolve_memory_lr_scale(
    estimator, memory_matrix: str, start, fine_tuning: str = "full"
) -> float:
    """The memory learning-rate fraction of a fit whose memory is
    ``memory_matrix``, whose kept pretrainer is ``start`` (None without
    one) and whose fine-tuning is ``fine_tuning``: ``memory_lr_scale``, with
    ``'auto'`` resolved to 0.1 for a Schur memory trained without a start,
    0.01 for the ``'smooth'`` and ``'projection'`` fine-tuning of a start
    and 1.0 otherwise.

    Examples
    --------
    >>> from sklmn.estimators import LMNClassifier
    >>> resolve_memory_lr_scale(LMNClassifier(), "schur", None)
    0.1
    >>> resolve_memory_lr_scale(LMNClassifier(), "schur", "a start", "smooth")
    0.01
    >>> resolve_memory_lr_scale(LMNClassifier(memory_lr_scale=0.5), "schur", None)
    0.5
    """
    scale = estimator.memory_lr_scale
    if not isinstance(scale, str):
        return float(scale)
    if start is not None and fine_tuning in _SMOOTH_FAMILY:
        return _SMOOTH_MEMORY_LR_SCALE
    scratch = memory_matrix == "schur" and start is None
    return _SCRATCH_MEMORY_LR_SCALE if scratch else 1.0


def resolve_fine_tuning(estimator, n_samples: int, context=None) -> str:
    """The fine-tuning of an LMN estimator's next fit on ``n_samples``
    training sequences (and, when given, the training data of ``context``).

    ``'residual'`` and ``'smooth'`` when asked for, the ``pretrainer`` gives a
    start (``'auto'``'s LAES start, or an object) and no ``incremental`` growth
    is asked for; ``'auto'``: ``'projection'`` under the same conditions for a
    classifier of one label per sequence (``'smooth'`` for multilabel targets)
    whose start is a LAES start (``pretrainer='auto'`` or a
    :class:`~sklmn.pretraining.LAESInitializer`), whose ``memory_matrix`` is
    ``'auto'`` or ``'schur'`` and whose output is its memory; ``'full'``
    otherwise (one network trains from its start at the learning rate).

    Examples
    --------
    >>> from sklmn.estimators import LMNClassifier, LMNRegressor
    >>> resolve_fine_tuning(LMNClassifier(fine_tuning="residual"), 100)
    'residual'
    >>> resolve_fine_tuning(LMNClassifier(fine_tuning="residual"), 5000)
    'full'
    >>> resolve_fine_tuning(LMNClassifier(), 100)
    'projection'
    >>> resolve_fine_tuning(LMNClassifier(memory_matrix="free"), 100)
    'full'
    >>> resolve_fine_tuning(LMNRegressor(), 100)
    'full'
    """
    choice = estimator.fine_tuning
    if isinstance(choice, ProjectionFineTuning):
        choice = "projection"  # with these settings
    if choice == "full":
        return "full"
    if choice == "projection":
        _check_projection(estimator)
    if getattr(estimator, "incremental", None) is not None:
        return "full"
    if choice == "auto":
        if not (
            _laes_start(estimator)
            and is_classifier(estimator)
            and estimator.target == "sequence"
            and estimator.memory_matrix in ("auto", "schur")
            and _reads_memory(estimator)
        ):
            return "full"
        choice = "projection"
    if choice == "projection" and context is not None:
        if context.problem != "multiclass":
            choice = "smooth"  # indicator targets: no class readout to refit
    if choice == "residual":
        matrix = start_memory_matrix(estimator)
    else:  # smooth or projection: the memory the fit builds
        matrix = resolve_memory_matrix(estimator, choice)
    start = resolve_pretrainer(estimator, n_samples, context, memory_matrix=matrix)
    return choice if start is not None else "full"


def _check_projection(estimator) -> None:
    """Refuse ``fine_tuning='projection'`` outside a classifier of one
    label per sequence, and settings out of range."""
    if not (is_classifier(estimator) and estimator.target == "sequence"):
        raise ValueError(
            "fine_tuning='projection' trains the memory through a refitted "
            "logistic readout of one label per sequence; got "
            f"{type(estimator).__name__} with target={estimator.target!r}. "
            "Use fine_tuning='smooth' or 'full'."
        )
    if isinstance(estimator.fine_tuning, ProjectionFineTuning):
        estimator.fine_tuning.validate()


def start_memory_matrix(estimator) -> str:
    """The memory parametrization of a residual fit's frozen start: the
    dense (``'free'``) memory the LAES start is written in, or the
    ``memory_matrix`` asked for when it is not ``'auto'``."""
    matrix = estimator.memory_matrix
    return "free" if matrix == "auto" else matrix


def resolve_feedback(
    estimator, memory_matrix: str, fine_tuning: str = "full"
) -> str:
    """The feedback of an LMN estimator's next fit whose memory is
    ``memory_matrix`` and whose fine-tuning is ``fine_tuning``: its
    ``feedback``, with ``'auto'`` resolved to ``'none'`` for the
    ``'smooth'`` fine-tuning of a start and for a regressor with a
    ``'schur'`` memory and a LAES or random start, both with their memory
    as output, ``'free'`` otherwise.

    Examples
    --------
    >>> from sklmn.estimators import LMNClassifier, LMNRegressor
    >>> resolve_feedback(LMNRegressor(), "schur")
    'none'
    >>> resolve_feedback(LMNRegressor(), "free")
    'free'
    >>> resolve_feedback(LMNClassifier(), "schur", "smooth")
    'none'
    >>> resolve_feedback(LMNClassifier(pretrainer=None), "schur")
    'free'
    """
    if estimator.feedback != "auto":
        return estimator.feedback
    if not _reads_memory(estimator):  # the hidden output reads the memory
        return "free"  # through the feedback
    if fine_tuning in _SMOOTH_FAMILY:
        return "none"
    laes_or_random = estimator.pretrainer is None or _laes_start(estimator)
    if not is_classifier(estimator) and laes_or_random and memory_matrix == "schur":
        return "none"
    return "free"


def fitted_feedback(estimator) -> bool:
    """Whether an LMN estimator's network has a trained feedback ``W_mh``:
    the fit's ``feedback_`` for ``feedback='auto'`` (``'free'`` before any
    fit and for models saved before the option existed)."""
    choice = estimator.feedback
    if choice == "auto":
        choice = getattr(estimator, "feedback_", "free")
    return choice == "free"


def fitted_fine_tuning(estimator) -> str:
    """The fine-tuning an LMN estimator's network was built for: the fit's
    ``fine_tuning_`` (``'full'`` before any fit, and for models saved
    before the option existed)."""
    return getattr(estimator, "fine_tuning_", "full")


def fitted_memory_matrix(estimator) -> str:
    """The memory parametrization an LMN estimator builds: its
    ``memory_matrix``, or the fit's ``memory_matrix_`` for ``'auto'``
    (``'free'`` before any fit resolved it)."""
    matrix = estimator.memory_matrix
    if matrix != "auto":
        return matrix
    return getattr(estimator, "memory_matrix_", "free")


#: names (fnmatch patterns) of the parameters ``memory_lr_scale`` applies to:
#: ``W_mm`` (free or parametrized), a Schur memory's parameters, ``W_mh``
_MEMORY_PARAMETERS = ("*weight_mm*", "*.memory.*", "*weight_mh")


def memory_param_groups(scale: float, lr: float) -> list:
    """skorch ``param_groups`` that train the memory recurrence and the
    feedback at ``scale * lr`` (none when ``scale == 1``).

    Examples
    --------
    >>> memory_param_groups(0.5, 1e-3)[0]
    ('*weight_mm*', {'lr': 0.0005})
    >>> memory_param_groups(1.0, 1e-3)
    []
    """
    if float(scale) == 1.0:
        return []
    return [(pattern, {"lr": float(scale) * lr}) for pattern in _MEMORY_PARAMETERS]


def pretrained_alpha_doc(default, rationale: str, kind: str = "float") -> str:
    """Docstring entry of ``pretrained_alpha`` (LMN and multi-scale LMN)."""
    return (
        f"""\
    pretrained_alpha : {kind}, default={default}
        Strength of the pull of fine-tuning toward the pretrained start: the
        gradient of ``0.5 * pretrained_alpha * ||w - w0||²`` (``w0``: every
        parameter's value after the pretrainer; the penalty is on each
        minibatch's mean loss, not scaled by the batch size as ``alpha``
        is) is added after gradient clipping, like the weight decay, and is
        not part of ``loss_curve_`` (the "L2-SP" regularizer of Li,
        Grandvalet & Davoine 2018, "Explicit inductive bias for transfer
        learning with convolutional networks"). Used only when a pretrainer
        initialized the network (not on warm starts).
"""
        + rationale
    )


LMN_PARAMETERS_DOC = """\
    hidden_size : int, default=32
        Hidden (functional, nonlinear) units per layer and direction.
%(memory_size)s    num_layers : int, default=1
        Stacked LMN layers.
    output : {'memory', 'hidden'}, default='memory'
        What each layer outputs and the readout reads: the memory ``m_t``
        (LMN-m of Carta et al. 2021) or the hidden state ``h_t`` (LMN-h).
    pooling : {'auto', 'last', 'last+mean', 'last+mean+max'}, default='auto'
        What the readout of a sequence-level target (``target='sequence'``)
        reads: the output at each sequence's last valid step (``'last'``,
        the papers' readout); that output side by side with the output's
        mean over the valid steps (``'last+mean'``; the mean block scaled by
        a constant that the pretrainer sets to half the final states'
        root-mean-square norm, 1 without a pretrainer); or both and the
        output's maximum and minimum over the valid steps
        (``'last+mean+max'``, that block scaled the same way). The mean
        keeps what is spread over the whole series, such as an activity
        recorded as motion signals; the extrema keep a pattern wherever it
        occurs, such as a shape along a leaf's outline. ``'auto'``: the LAES
        start (:class:`~sklmn.pretraining.LAESInitializer`) fits its readout
        on the three nested choices and takes a larger one only when it
        predicts held-out training sequences better, by cross-validation, by
        more than one sequence in ``n`` (``pretrainer_.pooling_``,
        ``pretrainer_.pooling_scores_``); the blocks left out are switched
        off, as after a pretrainer that does not choose (``'last'``).
        Without a start (no pretrainer, more than 1000 sequences, or a
        regressor's rejected start) training starts from the last step and
        the mean, the mean's at scale 1 and zero weights. The choice is
        ``pooling_`` (measurements: ``docs/training.md``, "The start
        decides: pooled readout and anchor by cross-validation", "Large
        training sets" and "The extrema block"). Ignored for
        per-step targets (``target='timestep'`` or ``'ctc'``), whose
        readout reads every step. With ``UnrolledPretrainer`` the mean
        block starts at zero weights.
    bidirectional : bool, default=False
        Add reverse-direction layers (outputs concatenated).
    memory_matrix : {'auto', 'free', 'orthogonal', 'spectral', 'schur'}, \
default=%(memory_matrix)s
        Constraint on the memory recurrence ``W_mm``: none, orthogonal,
        spectral radius normalized below one, or ``'schur'``: held in real
        Schur form, spectral radius below one whatever the optimizer does, the
        LAES start exact. ``'auto'``: ``'schur'`` for ``pretrainer=None`` (its
        ring start) and for the ``'smooth'``, ``'projection'`` or
        ``'residual'`` ``fine_tuning``, ``'free'`` otherwise (the ``'full'``
        fine-tuning of a start); the parametrization used is
        ``memory_matrix_``. The regressors default to ``'schur'``, the
        classifiers to ``'auto'`` (chosen by measurement, see
        ``docs/memory.md``).
    memory_bias : bool, default=False
        Add a bias to the memory update.
    memory_lr_scale : float or 'auto', default='auto'
        The memory's recurrent parameters (``W_mm``, or the parameters of a
        ``'schur'`` memory) and the memory-to-hidden feedback ``W_mh`` train
        at this fraction of the learning rate (an optimizer parameter group
        of their own). ``'auto'``: 0.1 for a ``'schur'`` memory trained
        without a pretrained start, 0.01 for the ``'smooth'`` and
        ``'projection'`` fine-tuning of a start, 1.0 otherwise; the value
        used is ``memory_lr_scale_`` (see ``docs/memory.md``, "Training
        from scratch").
    orthogonality_penalty : float, default=0.0
        Weight ``λ`` of the soft orthogonality penalty ``λ‖W_mmᵀW_mm − I‖²_F``
        added to the loss (Carta et al. 2020b §2.1).
    norm_penalty : float, default=0.0
        Weight ``β`` of the norm stabilizer
        ``β·mean_t(‖m_t‖ − ‖m_{t−1}‖)²`` added to the loss (Carta et al.
        2020b §2.1; included in ``loss_curve_`` and the validation loss).
        An option, not a default: it helps where the unpenalized memory
        overfits and costs a task that must keep its first input (the first
        difference is taken from the zero initial state; measurements:
        ``docs/training.md``, "The norm stabilizer").
    truncate_gradient : bool, default=False
        Cut the gradient from ``h_t`` to ``m_{t−1}`` (Carta et al. 2020b §2.1).
    dropout : float, default=0.0
        Dropout between stacked layers.
    pretrainer : 'auto', object or None, default='auto'
        Initialization from the data before training, e.g.
        :class:`~sklmn.pretraining.LAESInitializer` (LAES initialization,
        Carta, Sperduti & Bacciu) or
        :class:`~sklmn.pretraining.UnrolledPretrainer` (unrolled pretraining,
        Bacciu, Carta & Sperduti 2019): an object with a method
        ``initialize(module, context)`` (see :mod:`sklmn.training`), cloned in
        ``fit`` into ``pretrainer_`` (not on warm starts); grid searches
        reach an object's parameters as ``pretrainer__<name>`` (with
        ``'auto'``, pass the object in the grid: ``{'pretrainer':
        [LAESInitializer()], 'pretrainer__alpha': [...]}``). ``'auto'``: LAES
        initialization ``LAESInitializer(alpha='gcv', readout='auto',
        random_state=random_state)`` (a logistic-regression readout for
        classifiers, which also try ``C_candidates=(0.1, 10.0, 100.0)``;
        for regressors a ridge readout whose penalty
        generalized cross-validation chooses, and ``input_scale=0.1``)
        when the training set has at most 1000 sequences (and the memory
        is not constrained orthogonal, and ``target`` is not ``'ctc'``,
        whose label sequences give no least-squares readout targets, and
        the inputs are not constant: the LAES of constant inputs, e.g. a
        generator driven by zeros, is an all-zero start that training
        cannot leave), no pretraining on larger sets, where
        end-to-end training from the stable random initialization learned
        better (measured, see ``docs/training.md``). A regressor then keeps
        the start only when its readout predicts held-out training
        sequences better than their mean (leave-one-out R² above 0.01,
        ``LAESInitializer.readout_loo_r2_``); otherwise it trains from the
        random initialization with a readout that predicts the training
        mean (zero weights), and ``pretrainer_`` is None: a linear start
        that explains nothing stalled fine-tuning on the adding problem.
        None: random (stable) initialization.
""" + pretrained_alpha_doc(
    "'auto'",
    """\
        ``0`` fine-tunes freely. ``'auto'``: 10 when the start predicts
        held-out training sequences well, its
        ``pretrainer_.readout_cv_score_`` (cross-validated accuracy, or a
        regressor's leave-one-out R²) at least 0.9, and 0 otherwise; the
        strength used is ``pretrained_alpha_``. Fine-tuning a strong start
        freely drifts away from it once the training loss is spent, while an
        anchor holds a weak start back (measurements: ``docs/training.md``,
        "Fine-tuning anchored to the start").""",
    kind="float or 'auto'",
) + FINE_TUNING_DOC + FEEDBACK_DOC


#: the classifier's ``memory_size`` entry
_MEMORY_SIZE_DOC = """\
    memory_size : int or 'auto', default='auto'
        Linear memory units per layer and direction. ``'auto'``: 64 when
        the network starts from a pretrained start (``pretrainer``) and
        ``fit`` gets at least 128 sequences (two per memory unit; for
        ``partial_fit``, its first call), 32 otherwise; the fitted
        estimator's ``memory_size_`` holds the units. See
        ``docs/memory.md``, "The memory's size and the training set".
"""

#: the regressor's: a larger memory and a start in the linear range
_REGRESSOR_MEMORY_SIZE_DOC = """\
    memory_size : int, default=64
        Linear memory units per layer and direction. 64 rather than the
        classifier's 32 (below 128 training sequences): a regression target
        is often a linear function of the history, which the LAES start
        keeps only in as many directions as there are memory units; and
        the regressor's ``pretrainer='auto'`` start passes the inputs
        through the hidden ``tanh`` at ``input_scale=0.1``, in its linear
        range, so that the initialized network predicts like its
        least-squares readout of the linear LAES states (measurements:
        ``docs/training.md``, "The regressor's memory").
"""


def _constant_inputs(seqs) -> bool:
    """Whether every valid step of ``seqs`` has the same feature vector."""
    valid = seqs.data[seqs.mask]
    return bool(valid.size == 0 or np.all(valid == valid[:1]))


def resolve_pretrainer(estimator, n_samples: int, context=None, memory_matrix=None):
    """The pretrainer an LMN estimator uses: its ``pretrainer``, with
    ``'auto'`` resolved for a training set of ``n_samples`` sequences (and,
    when given, the training data of ``context``) and the memory
    parametrization ``memory_matrix`` (default: the one the estimator
    builds)."""
    pretrainer = estimator.pretrainer
    if not (isinstance(pretrainer, str) and pretrainer == "auto"):
        return pretrainer
    if memory_matrix is None:
        memory_matrix = fitted_memory_matrix(estimator)
    if (
        n_samples > _AUTO_PRETRAINING_MAX
        or memory_matrix == "orthogonal"
        # the hidden-output LAES start needs a free memory (the Schur
        # coordinates would have to be carried into the exposed units)
        or (estimator.output == "hidden" and memory_matrix == "schur")
        # the multi-scale LAES start reads the memory modules only
        or estimator.output not in getattr(
            estimator, "_laes_start_outputs", ("memory", "hidden")
        )
        or estimator.target == "ctc"  # no least-squares readout of a CTC target
        # constant inputs (e.g. a generator driven by zeros): a LAES has
        # nothing to encode and its all-zero start is a stationary point
        # that training cannot leave
        or (context is not None and _constant_inputs(context.sequences))
    ):
        return None
    # seeded by the estimator's random_state (two seeded fits agree)
    return LAESInitializer(
        alpha=_AUTO_LAES_ALPHA,
        readout="auto",
        random_state=estimator.random_state,
        **estimator._auto_laes_params,
    )


class _LMNMemoryMixin(_PretrainedStartMixin):
    """The memory options of the LMN and multi-scale LMN estimators
    (``memory_matrix`` and ``memory_lr_scale``, with ``'auto'`` resolved per
    fit) and their ``pretrainer='auto'`` rule."""

    #: the ``output`` choices a LAES start initializes: ``pretrainer='auto'``
    #: trains the others from the random start
    _laes_start_outputs: tuple = ("memory", "hidden")

    _fitted_attributes = {
        "memory_matrix_": "str",
        "memory_lr_scale_": "float",
        "fine_tuning_": "str",
        "memory_ring_": "list?",
        "feedback_": "str",
        "projection_steps_": "int?",
        "projection_splines_": "bool?",
    }

    #: models saved before ``feedback`` existed trained their feedback
    _added_parameter_values: dict = {"feedback": "free"}

    def _plan_fit(self, context, n_samples: int) -> None:
        if not (isinstance(self.memory_ring, str) and self.memory_ring == "auto"):
            try:
                check_ring(self.memory_ring)
            except ValueError as error:
                raise ValueError(f"memory_ring: {error}") from None
        self.fine_tuning_ = resolve_fine_tuning(self, n_samples, context)
        self.projection_steps_ = None  # set by a projection (_record_fit)
        self.projection_splines_ = None
        self.memory_matrix_ = resolve_memory_matrix(self, self.fine_tuning_)
        self.feedback_ = resolve_feedback(
            self, self.memory_matrix_, self.fine_tuning_
        )
        self._plan_memory_size(context, n_samples)
        ring = self._resolve_memory_ring(context, n_samples)
        self.memory_ring_ = None if ring is None else [float(v) for v in ring]

    def _plan_memory_size(self, context, n_samples: int) -> None:
        """Resolve a ``memory_size`` that depends on the data (hook; the
        multi-scale LMN's is a number)."""

    def _default_ring(self) -> tuple:
        """The model's own ring (read when called: ``bench schur-ring``
        replaces it)."""
        return _lmn_schur._SCHUR_RING

    def _ring_memory_units(self) -> int:
        """Memory units of one direction of one layer (the size of the
        random linear memory ``memory_ring='auto'`` scores)."""
        return self._memory_units()

    def _memory_units(self) -> int:
        """Memory units of one direction of one layer (``memory_size``;
        for ``'auto'``, the fit's ``memory_size_``)."""
        size = self.memory_size
        return int(self.memory_size_ if isinstance(size, str) else size)

    def _resolve_memory_ring(self, context, n_samples: int):
        """``memory_ring`` with ``'auto'`` resolved (see its entry): a tuple,
        or None for the model's ring."""
        ring = self.memory_ring
        if not (isinstance(ring, str) and ring == "auto"):
            return None if ring is None else tuple(float(v) for v in ring)
        scratch = self._resolve_pretrainer(n_samples, context) is None
        from_ring = self.memory_matrix_ == "schur" and (
            scratch or self.fine_tuning_ == "residual"
        )
        if not (
            from_ring
            and is_classifier(self)
            and context is not None
            and context.problem == "multiclass"
            and not context.per_step
        ):
            return None
        default = tuple(self._default_ring())
        ring, _ = choose_ring(
            context.sequences,
            context.y,
            default,
            memory_size=self._ring_memory_units(),
            random_state=self.random_state,
        )
        return None if ring == default else ring

    def _fitted_memory_ring(self):
        """The ring the network is built with: ``memory_ring``, or the
        fit's ``memory_ring_`` for ``'auto'`` (None: the model's ring)."""
        ring = self.memory_ring
        if isinstance(ring, str):  # 'auto'
            ring = getattr(self, "memory_ring_", None)
        return None if ring is None else tuple(float(v) for v in ring)

    def _memory_matrix(self) -> str:
        return fitted_memory_matrix(self)

    def _sequence_net(self, recurrent, pooling=None):
        net = super()._sequence_net(recurrent, pooling)
        if fitted_fine_tuning(self) == "residual":
            # the frozen start, in the memory of start_memory_matrix
            start = self._build_module(
                int(recurrent.input_size), memory_matrix=start_memory_matrix(self)
            )
            net.attach_start_(super()._sequence_net(start))
        return net

    def _initialize_module(self, module, context, n_samples: int) -> None:
        if fitted_fine_tuning(self) != "residual":
            super()._initialize_module(module, context, n_samples)
            start = self.pretrainer_
            if start is None and fitted_fine_tuning(self) in _SMOOTH_FAMILY:
                # the start policy dropped the start: one network trains
                # from the random start, as with 'full' (fine_tuning_ says so)
                self.fine_tuning_ = "full"
        else:
            self._initialize_residual(module, context, n_samples)
            start = None  # the trained network starts from the random draw
        # after the start policy: 'auto' follows the start this fit kept (a
        # start that predicts nothing is dropped)
        self.memory_lr_scale_ = resolve_memory_lr_scale(
            self, self._memory_matrix(), start, fitted_fine_tuning(self)
        )

    def _smooth_start(self) -> bool:
        """Whether this fit fine-tunes a kept start smoothly."""
        return (
            fitted_fine_tuning(self) in _SMOOTH_FAMILY
            and getattr(self, "pretrainer_", None) is not None
        )

    def _smooth_rate(self, n_samples: int, context) -> bool:
        """Whether ``learning_rate_init='auto'`` is the smooth fine-tuning's
        rate: a new fit resolves its fine-tuning on its training data
        ``context`` (as ``_plan_fit`` does: inputs without a start train at
        the usual rate); a warm start, a ``partial_fit`` pass or a loaded
        model (``context`` None) goes on with the fine-tuning its model was
        fitted with."""
        if context is None:
            warm = hasattr(self, "fine_tuning_")
        else:
            warm = context.warm_start
        if warm:
            return self._smooth_start()
        return resolve_fine_tuning(self, n_samples, context) in _SMOOTH_FAMILY

    def _start_callbacks(self, context) -> list:
        """The smooth fine-tuning's input normalization (first: the other
        callbacks see its parameters) and warm-up, before the anchor."""
        callbacks = []
        if self._smooth_start() and not context.warm_start:
            if self._memory_matrix() == "schur":
                callbacks.append(("input_normalization", ModeInputNormalization()))
            if fitted_fine_tuning(self) == "projection":
                callbacks.append(("projection", self._projection(context)))
            callbacks.append(("warmup", LinearWarmup(_SMOOTH_WARMUP_EPOCHS)))
        return callbacks + super()._start_callbacks(context)

    def _record_fit(self, net) -> None:
        super()._record_fit(net)
        projection = dict(net.callbacks_).get("projection")
        if isinstance(projection, VariableProjection):
            self.projection_steps_ = int(projection.steps_)
            self.projection_splines_ = bool(projection.splines_)

    def _projection(self, context) -> VariableProjection:
        """The projection steps of ``fine_tuning='projection'``: on the
        sequences of ``context`` (those the start was fitted on), the steps
        chosen with a start fitted on three quarters of them by a clone of
        ``pretrainer_``, with the readout's pooling and ``C`` that the
        fit's start chose (not cross-validated again: on long sequences
        most of a start's cost)."""
        # seeded by the fit's seeded torch generator (nothing drawn)
        seed = int(torch.initial_seed() % 2**31)
        seqs, weight = context.sequences, context.sample_weight
        pretrainer = clone(self.pretrainer_)
        pooling = getattr(self.pretrainer_, "pooling_", None)  # None: 'auto'
        C = getattr(self.pretrainer_, "C_", None)
        if C is not None and "C_candidates" in pretrainer.get_params(deep=False):
            pretrainer.set_params(C=C, C_candidates=None)

        def guard_start(rows):
            part_seqs, part_y = _take_sequences(seqs, context.y, rows)
            part = dataclasses.replace(
                context,
                sequences=part_seqs,
                y=part_y,
                sample_weight=None if weight is None else weight[rows],
            )
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                # the pooling the fit's start chose, not 'auto' again
                module = self._sequence_net(
                    self._build_module(seqs.n_features), pooling
                )
            clone(pretrainer).initialize(module, part)
            return module

        settings = self.fine_tuning
        if not isinstance(settings, ProjectionFineTuning):
            settings = ProjectionFineTuning()  # 'projection': the defaults
        return settings.make_callback(
            dataset=self._dataset(seqs, context.y, weight),
            guard_start=guard_start,
            random_state=seed,
        )

    def _end_training(self, net) -> None:
        """Write the input of a smoothly fine-tuned memory back as a plain
        parameter (the optimizer rebuilt over it, its state carried over:
        a later ``partial_fit`` resumes it)."""
        factors = input_normalization_factors(net.module_)
        if remove_input_normalization(net.module_):
            previous = net.optimizer_
            net.initialize_optimizer()
            carry_optimizer_state(previous, net.optimizer_, factors)

    def _guard_fraction(self, n_samples: int, context) -> float | None:
        """``early_stopping='auto'`` of a smooth fine-tuning: the fraction
        of the sequences held out to judge it (the start is fitted on all)."""
        if self.early_stopping != "auto":
            return None
        fine_tuning = resolve_fine_tuning(self, n_samples, context)
        return _SMOOTH_GUARD_FRACTION if fine_tuning in _SMOOTH_FAMILY else None

    def _initialize_residual(self, module, context, n_samples: int) -> None:
        """Pretrain the frozen start of a residual fit; the trained network
        keeps its random start, with a zero readout (its mean block joined
        at scale 1, as without a start)."""
        super()._initialize_module(module.start, context, n_samples)
        if self.pretrainer_ is None:  # the start policy dropped the start
            module.start = None
            self.fine_tuning_ = "full"
            self.pooling_ = _resolve_pooling_(module, None)
            return
        self.pretrained_alpha_ = 0.0  # nothing trained has a start to pull to
        with torch.no_grad():
            module.readout.weight.zero_()
            module.readout.bias.zero_()
        if module.pooling == "auto":
            module.start_mean_block_()

    def _step_settings(self, n_samples: int, context=None) -> tuple[int, float]:
        batch_size, lr = super()._step_settings(n_samples, context)
        if self.learning_rate_init == "auto" and self._smooth_rate(n_samples, context):
            lr = _SMOOTH_LEARNING_RATE
        scratch = self.pretrainer is None and resolve_memory_matrix(self) == "schur"
        residual = resolve_fine_tuning(self, n_samples) == "residual"
        if (
            self.batch_size == "auto"
            and (scratch or residual)
            and is_classifier(self)
            and n_samples <= _AUTO_BATCH_LARGE_DATA
        ):
            batch_size = min(_SCRATCH_BATCH_SIZE, n_samples)
        return batch_size, lr

    def _resolve_pretrainer(self, n_samples: int, context=None):
        matrix = None  # the built network's
        if fitted_fine_tuning(self) == "residual":
            matrix = start_memory_matrix(self)  # the frozen start's
        return resolve_pretrainer(self, n_samples, context, memory_matrix=matrix)

    def _optimizer_param_groups(self, lr: float) -> list:
        scale = self.memory_lr_scale
        if isinstance(scale, str):  # 'auto': the fit's, 1.0 before one
            scale = getattr(self, "memory_lr_scale_", 1.0)
        return memory_param_groups(scale, lr)


class _LMNMixin(_LMNMemoryMixin):
    """Model parameters and module of the LMN estimators."""

    _fitted_attributes = {
        "pretrainer_": "estimator?",
        "pretrained_alpha_": "float",
        "pooling_": "str",
        "memory_size_": "int",
    }

    #: fitted sizes the network is rebuilt from (bounded when a file loads)
    _fitted_sizes: tuple = ("memory_size_",)

    def _plan_memory_size(self, context, n_samples: int) -> None:
        size = self.memory_size
        if isinstance(size, str):  # 'auto'
            started = self._resolve_pretrainer(n_samples, context) is not None
            size = auto_memory_size(n_samples, started)
        self.memory_size_ = int(size)

    #: further parameters of the ``pretrainer='auto'`` LAES initializer
    _auto_laes_params: dict = {"C_candidates": _AUTO_C_CANDIDATES}

    #: ``init_radius`` of the LMN module (a subclass may set None to study the
    #: raw initialization, as the time-series suite's ``lmn_rawinit`` does)
    _init_radius = DEFAULT_INIT_RADIUS

    _parameter_constraints = {
        **_BaseSequenceEstimator._parameter_constraints,
        **_LMN_CONSTRAINTS,
    }

    def _build_module(self, input_size: int, memory_matrix: str | None = None) -> LMN:
        """The LMN; ``memory_matrix`` overrides the fit's (a residual fit's
        frozen start)."""
        return LMN(
            input_size,
            self.hidden_size,
            self._memory_units(),
            num_layers=self.num_layers,
            output=self.output,
            bidirectional=self.bidirectional,
            memory_matrix=memory_matrix or self._memory_matrix(),
            memory_bias=self.memory_bias,
            orthogonality_penalty=float(self.orthogonality_penalty),
            norm_penalty=float(self.norm_penalty),
            truncate_gradient=self.truncate_gradient,
            dropout=float(self.dropout),
            init_radius=self._init_radius,
            ring=self._fitted_memory_ring(),
            feedback=fitted_feedback(self),
        )


@fill_doc(
    LMN_PARAMETERS_DOC.replace("%(memory_size)s", _MEMORY_SIZE_DOC).replace(
        "%(memory_matrix)s", "'auto'"
    )
)
class LMNClassifier(_InputExpansionMixin, _LMNMixin, _BaseSequenceClassifier):
    """Linear Memory Network classifier (Carta et al. 2021 §3.1).

    A recurrent network that separates a nonlinear functional component
    ``h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)`` from a linear memory
    ``m_t = W_hm h_t + W_mm m_{t-1}``, followed by a linear readout trained
    with cross-entropy on logits (multiclass, including binary) or binary
    cross-entropy (multilabel indicator targets, e.g. piano-roll next-step
    prediction with ``target='timestep'``).

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
    %(start_attributes)s
    memory_size_ : int
        The memory units per layer and direction of the last ``fit``
        (``memory_size``, resolved).
    %(input_expansion_attributes)s
    %(fitted_attributes)s

    See Also
    --------
    LMNRegressor : The regressor counterpart.
    MultiScaleLMNClassifier : LMN with a multi-scale (clocked) memory.
    RNNClassifier : Elman/LSTM/GRU/Clockwork/unrolled baselines.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import LMNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = [rng.randn(rng.randint(3, 8), 2) for _ in range(40)]
    >>> y = np.array(["up" if x[0, 0] > 0 else "down" for x in X])
    >>> clf = LMNClassifier(hidden_size=8, memory_size=8, max_iter=30,
    ...                     learning_rate_init=0.02, random_state=0).fit(X, y)
    >>> clf.classes_
    array(['down', 'up'], dtype='<U4')
    >>> clf.predict(X[:3]).shape, clf.predict_proba(X[:3]).shape
    ((3,), (3, 2))
    >>> clf.score(X, y) > 0.8
    True
    """

    _parameter_constraints = {
        **_LMNMixin._parameter_constraints,
        **CLASS_WEIGHT_CONSTRAINTS,
        **INPUT_EXPANSION_CONSTRAINTS,
        "memory_size": [
            Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
        ],
    }

    def __init__(
        self,
        hidden_size=32,
        memory_size="auto",
        *,
        num_layers=1,
        output="memory",
        pooling="auto",
        bidirectional=False,
        memory_matrix="auto",
        memory_bias=False,
        memory_lr_scale="auto",
        memory_ring="auto",
        orthogonality_penalty=0.0,
        norm_penalty=0.0,
        truncate_gradient=False,
        dropout=0.0,
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
        pretrainer="auto",
        pretrained_alpha="auto",
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
        self.num_layers = num_layers
        self.output = output
        self.pooling = pooling
        self.bidirectional = bidirectional
        self.memory_matrix = memory_matrix
        self.memory_bias = memory_bias
        self.memory_lr_scale = memory_lr_scale
        self.memory_ring = memory_ring
        self.orthogonality_penalty = orthogonality_penalty
        self.norm_penalty = norm_penalty
        self.truncate_gradient = truncate_gradient
        self.dropout = dropout
        self.pretrainer = pretrainer
        self.pretrained_alpha = pretrained_alpha
        self.fine_tuning = fine_tuning
        self.feedback = feedback
        self.input_expansion = input_expansion
        self.class_weight = class_weight
        self.decoding = decoding
        self.beam_width = beam_width


@fill_doc(
    LMN_PARAMETERS_DOC.replace("%(memory_size)s", _REGRESSOR_MEMORY_SIZE_DOC).replace(
        "%(memory_matrix)s", "'schur'"
    )
)
class LMNRegressor(_LMNMixin, _BaseSequenceRegressor):
    """Linear Memory Network regressor (Carta et al. 2021 §3.1).

    A recurrent network that separates a nonlinear functional component
    ``h_t = tanh(W_xh x_t + W_mh m_{t-1} + b_h)`` from a linear memory
    ``m_t = W_hm h_t + W_mm m_{t-1}``, followed by a linear readout trained
    with the squared error (single or multi-output, per sequence or per time
    step).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    %(start_attributes)s
    memory_size_ : int
        The memory units per layer and direction of the last ``fit``
        (``memory_size``, resolved).
    %(fitted_attributes)s

    See Also
    --------
    LMNClassifier : The classifier counterpart.
    MultiScaleLMNRegressor : LMN with a multi-scale (clocked) memory.
    RNNRegressor : Elman/LSTM/GRU/Clockwork/unrolled baselines.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import LMNRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 6, 1)
    >>> y = X[:, 0, 0]  # remember the first input
    >>> reg = LMNRegressor(hidden_size=8, memory_size=8, max_iter=40,
    ...                    learning_rate_init=0.02, random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    >>> reg.score(X, y) > 0.5
    True
    """

    #: the ``pretrainer='auto'`` start keeps the hidden ``tanh`` in its linear
    #: range, so that the network starts as its least-squares readout of the
    #: linear LAES states (measured, ``docs/training.md``, "The regressor's
    #: memory")
    _auto_laes_params: dict = {"input_scale": 0.1}

    def __init__(
        self,
        hidden_size=32,
        memory_size=64,
        *,
        num_layers=1,
        output="memory",
        pooling="auto",
        bidirectional=False,
        memory_matrix="schur",
        memory_bias=False,
        memory_lr_scale="auto",
        memory_ring="auto",
        orthogonality_penalty=0.0,
        norm_penalty=0.0,
        truncate_gradient=False,
        dropout=0.0,
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
        pretrainer="auto",
        pretrained_alpha="auto",
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
        self.num_layers = num_layers
        self.output = output
        self.pooling = pooling
        self.bidirectional = bidirectional
        self.memory_matrix = memory_matrix
        self.memory_bias = memory_bias
        self.memory_lr_scale = memory_lr_scale
        self.memory_ring = memory_ring
        self.orthogonality_penalty = orthogonality_penalty
        self.norm_penalty = norm_penalty
        self.truncate_gradient = truncate_gradient
        self.dropout = dropout
        self.pretrainer = pretrainer
        self.pretrained_alpha = pretrained_alpha
        self.fine_tuning = fine_tuning
        self.feedback = feedback
