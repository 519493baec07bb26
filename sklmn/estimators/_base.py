"""Shared base of the sequence estimators.

Every public estimator is a native scikit-learn class (mixin left,
:class:`~sklearn.base.BaseEstimator` right) that stores its arguments
untouched and, in ``fit``, builds

1. the recurrent module of :mod:`sklmn.nn` (``_build_module``, the only thing
   a public class implements besides its parameters),
2. a :class:`~sklmn.training.SequenceNet` (module + linear readout),
3. a :class:`~sklmn.training.FitContext` (the data and settings of the fit),
   with which the pretrainer (``pretrainer``, if the class has one)
   initializes the network,
4. a skorch :class:`~sklmn.training.SequenceNeuralNet` that trains it
   (``net_``, built by :func:`~sklmn.training.make_sequence_net`), with
   scikit-learn's MLP stopping rules as callbacks and the plug-ins'
   callbacks (``_plugin_callbacks``) placed before the stopping rule.

Targets are handled by the classifier and regressor bases below.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import threading
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from scipy.special import expit, log_softmax, softmax
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    clone,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted
from skorch.callbacks import GradientNormClipping

from .._training import (
    AnchorToStart,
    ConvergenceMonitor,
    FitContext,
    ProgressLogger,
    SequenceDataset,
    SequenceNet,
    SequenceNeuralNet,
    ValidationScore,
    make_sequence_net,
    score_valid_entries,
    valid_entries,
)
from ..callbacks import RestoreOnDivergence
from ..metrics import label_error_rate
from ..preprocessing import _scale_from_var, _sequence_moments
from ..utils._atomic import atomic_fit as _atomic_fit
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils._doc_link import _DocLinkMixin
from ..utils.sequences import (
    Sequences,
    check_sequence_weights,
    format_like_input,
    validate_sequences,
)
from ._checks import (
    check_class_weight,
    check_device,
    check_same_target_kind,
    copy_callbacks,
    float_values,
)
from ._ctc import (
    beam_decode,
    check_label_sequences,
    encode_label_sequences,
    greedy_decode,
)
from ._persist import MAX_THREADS, PersistenceMixin, machine_threads
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
    "CLASS_WEIGHT_DOC",
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
    target : {'sequence', 'timestep', 'ctc'}, default='sequence'
        ``'sequence'``: one target per sequence, ``y`` of shape ``(n,)`` or
        ``(n, k)``, predicted from the output at each sequence's last valid
        step. ``'timestep'``: one target per valid time step, ``y`` a padded
        array ``(n, T[, k])`` (entries at padded steps of ``X`` are ignored)
        or a list of ``(T_i[, k])`` arrays; predictions come back in the
        layout of ``X`` (a list for a list, else a padded array whose padded
        steps are NaN, or None for non-numeric labels). ``'ctc'``
        (classifiers only): a label sequence per sequence, not aligned with
        the time steps (a transcription), ``y`` a list of strings or of
        lists of labels, trained with the connectionist temporal
        classification loss (Graves et al. 2006) and decoded by ``predict``
        (see ``decoding``).
    standardize : bool, default=True
        Standardize every input feature by its mean and standard deviation
        over all valid time steps of the training sequences (padding
        ignored; constant features are only centered), and for regressors
        every target output too (predictions are transformed back). The
        statistics are fitted attributes (``input_mean_``, ``input_scale_``,
        ``target_mean_``, ``target_scale_``); ``loss_curve_`` is then in
        standardized units. The same transformation as
        :class:`sklmn.preprocessing.SequenceStandardScaler`. For sparse
        binary inputs (one-hot codes, piano rolls) prefer False: a rarely
        active feature becomes a very large input (measured on the Bach
        chorales, see ``docs/training.md``).
    max_iter : int, default=200
        Maximum number of epochs.
    batch_size : int or 'auto', default='auto'
        Sequences per minibatch; ``'auto'`` is ``min(200, n_samples)`` (the
        rule of scikit-learn's MLP) up to 1000 training sequences and 32
        above. Measured (``docs/training.md``): on the adding problem (2000
        sequences, ten updates per epoch at 200) 32 lowered the test RMSE of
        every model two- to threefold (LMN 0.030 -> 0.009, LSTM 0.020 ->
        0.009; 5 seeds), and on 2000 generated handwriting sequences it
        raised the accuracy of an LMN reading the last step from 0.930 to
        0.967 (4 seeds), while on the small sets, where an epoch is one or
        a few batches, smaller batches cost accuracy. Each batch is trimmed
        to its longest sequence.
    bucket_by_length : bool, default=False
        Draw training minibatches of sequences of similar lengths (shuffle,
        sort pools of 50 batches by length, shuffle the batches): much less
        computation on padding when lengths vary widely, at the price of less
        random batch compositions.
    learning_rate_init : float or 'auto', default='auto'
        Learning rate of the optimizer. ``'auto'``: 0.001 up to 1000
        training sequences and 0.003 above (``auto_learning_rate`` in
        ``sklmn.estimators._base``; the rate used is ``net_.lr``; in
        ``partial_fit`` the sequences of each call count, as for
        ``batch_size``).
        Measured on the two large training sets of ``docs/training.md``
        ("Large training sets: a higher learning rate"): on 2000 generated
        handwriting sequences the LMN's test accuracy rose from 0.956 to
        0.983, the multi-scale LMN's from 0.931 to 0.941 and the LSTM's
        from 0.994 to 0.997 (GRU 0.989 -> 0.986), in half the epochs; on
        the adding problem the multi-scale LMN's RMSE fell from 0.0085 to
        0.0059 (5 seeds), the others' stayed level.
        The papers' experiments pin their own rates.
    learning_rate : {'constant', 'adaptive'}, default='constant' or 'adaptive'
        ``'constant'`` for classifiers, ``'adaptive'`` for regressors.
        ``'adaptive'`` divides the learning rate by 5 each time
        ``ceil(n_iter_no_change / 2)`` consecutive epochs bring no
        improvement of the monitored loss (a reduce-on-plateau schedule).
        Regressors use it by default: on the adding problem it lowered the
        test RMSE of every model (LMN 0.050 -> 0.030, multi-scale LMN
        0.037 -> 0.034, LSTM 0.023 -> 0.020; 5 seeds) and left
        CardanoSentiment unchanged; on the classification tuning sets it
        stopped the LMN earlier (see ``docs/training.md``).
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
        Maximum L2 norm of the loss's gradient with respect to all parameters
        (None: no clipping); the decay terms (``alpha``, and
        ``pretrained_alpha`` where there is one) are added after clipping.
    early_stopping : bool or 'auto', default='auto'
        Hold out ``validation_fraction`` of the sequences (stratified for
        single-label sequence classification) and monitor the validation
        loss (see ``validation_metric``) instead of the training loss.
        ``'auto'``: on for classifiers with more than 1000 training sequences,
        for regressors with at least 20, and whenever ``X_val`` is passed to
        ``fit`` (measured: small classification sets lose more by the
        held-out sequences than they gain, small regression sets overfit
        without them; see ``docs/training.md``). Whatever monitors it,
        ``fit`` ends with the weights of the best epoch. A pretrainer sees
        the training part only: the held-out sequences judge its start too.
    validation_metric : {'loss', 'score'}, default='loss'
        What early stopping monitors: the validation loss (the training
        criterion), or the estimator's natural score (accuracy, frame-level
        accuracy, R²).
    validation_fraction : float, default=0.1
        Fraction of the sequences held out for early stopping.
    n_iter_no_change : int, default=10 (classifiers) or 20 (regressors)
        Epochs without improvement of the monitored quantity after which
        training is considered converged. Regressors wait longer: on the
        adding problem training sits on a plateau before it learns, and 20
        lowered the test RMSE of every model (LMN 0.080 -> 0.062, LSTM 0.032
        -> 0.017) where on the classification tuning sets it changed
        nothing but the fit time (see ``docs/training.md``).
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    warm_start : bool, default=False
        Continue training the fitted module (same model parameters and
        classes required) instead of building a new one.
    verbose : int or bool, default=0
        Print one line per epoch and the stopping message.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialization, the shuffling of the minibatches, the
        validation split and dropout, and a pretrainer whose own
        ``random_state`` is None (``pretrainer_`` gets a seed derived from
        this one). With an int, two fits on the CPU give identical models;
        torch's global random state is left untouched.
    device : str, default='cpu'
        torch device to train on, e.g. ``'cuda'``. A model trained on a GPU
        unpickles and predicts on a CPU-only machine (skorch maps the tensors
        to the CPU).
    n_threads : int or None, default=None
        Number of threads torch uses for the work of ``fit``,
        ``partial_fit`` and the predictions (``torch.set_num_threads``, set
        for the call and restored afterwards; None: leave torch's setting,
        by default one thread per physical core). At most 1024, and torch
        never gets more threads than the machine has cores. The setting is
        process-wide, so calls with ``n_threads`` set run one at a time in a
        process. One thread is the robust choice on a machine whose cores
        other processes share: with as many threads as cores, one competing
        process slowed torch's kernels 4-10x (``benchmarks/README.md``).
    callbacks : list of skorch callbacks or (name, callback) tuples or None, \
            default=None
        Extra skorch callbacks (copied in ``fit``), run after the built-in
        ones (loss recording, validation score, gradient clipping) and before
        the progress printer and the stopping rule. A callback may stop
        training by raising ``KeyboardInterrupt`` (as skorch's do). Unless
        one of them is a :class:`~sklmn.callbacks.RestoreOnDivergence`,
        ``fit`` adds ``RestoreOnDivergence('best')``: a diverging training
        stops with the best weights measured so far (the starting weights
        included) and a :class:`~sklmn.callbacks.DivergenceWarning`; to make
        ``fit`` fail instead, turn that warning into an error
        (``warnings.simplefilter('error', DivergenceWarning)``)."""

CLASS_WEIGHT_DOC = """\
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes in the loss, for multiclass targets (one
        label per sequence, or per time step with ``target='timestep'``):
        ``{label: weight}`` (missing classes weigh 1), ``'balanced'``
        (``n_entries / (n_classes * bincount(y))``, counted over sequences or
        valid time steps, as :func:`sklearn.utils.class_weight.\
compute_class_weight`), or None (all 1). They multiply ``sample_weight``,
        and weight the validation loss and score too. Multilabel targets
        raise ``ValueError`` (weight sequences with ``sample_weight``).
        ``'balanced'`` is not supported by ``partial_fit`` (compute the
        weights on the whole data and pass a dict)."""

CTC_DECODING_DOC = """\
    decoding : {'greedy', 'beam'}, default='greedy'
        With ``target='ctc'``: how ``predict`` turns the per-step
        posteriors into label sequences. ``'greedy'``: best-path decoding
        (the most probable output of every step, repeated labels merged,
        blanks dropped); ``'beam'``: prefix beam search keeping
        ``beam_width`` labelling prefixes (slower, finds more probable
        labellings). Ignored for other targets; not a model parameter (it
        may change between ``fit`` and ``predict``).
    beam_width : int, default=10
        Prefixes kept by ``decoding='beam'``."""

#: Parameter constraints of ``class_weight`` and of the CTC decoding
#: (classifiers only; training and prediction settings, not model
#: parameters)
CLASS_WEIGHT_CONSTRAINTS = {
    "class_weight": [None, dict, StrOptions({"balanced"})],
    "decoding": [StrOptions({"greedy", "beam"})],
    "beam_width": [Interval(Integral, 1, None, closed="left")],
}

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
        :class:`sklmn.callbacks.RestoreOnDivergence` (the one ``fit`` adds
        by default, or one in ``callbacks``) stopped training and restored
        earlier weights (the callback object passed in is left untouched).
    net_ : skorch.NeuralNet
        The trained skorch net; ``net_.module_`` is the
        :class:`torch.nn.Module` (``.recurrent`` and ``.readout``) and
        ``net_.history`` the per-epoch history."""


#: Fitted attributes of the estimators with a pretrained start (the LMN and
#: multi-scale LMN estimators), ``%(start_attributes)s`` in their docstrings.
START_ATTRIBUTES_DOC = """\
    pretrainer_ : object or None
        The clone of the pretrainer that initialized the model (None without
        pretraining).
    pretrained_alpha_ : float
        The anchor of the last ``fit``'s fine-tuning (``pretrained_alpha``,
        resolved; 0 without a pretrained start).
    pooling_ : {'last', 'last+mean'}
        What the readout of the last ``fit`` reads (``pooling``, resolved;
        ``'last'`` for per-step targets)."""


def fill_doc(model_parameters_doc: str):
    """Class decorator substituting the shared docs into a class docstring.

    Replaces the lines ``%(model_parameters)s`` (indented by 4 spaces, like
    the docstring) with ``model_parameters_doc`` and ``%(training_parameters)s``
    / ``%(fitted_attributes)s`` / ``%(class_weight)s`` with the docs shared by
    every sequence estimator (classifier), and ``%(start_attributes)s`` with
    those of the estimators with a pretrained start.
    """

    def decorate(cls):
        cls.__doc__ = (
            cls.__doc__.replace("    %(model_parameters)s", model_parameters_doc)
            .replace("    %(training_parameters)s", TRAINING_PARAMETERS_DOC)
            .replace("    %(fitted_attributes)s", FITTED_ATTRIBUTES_DOC)
            .replace("    %(start_attributes)s", START_ATTRIBUTES_DOC)
            .replace("    %(class_weight)s", CLASS_WEIGHT_DOC + "\n" + CTC_DECODING_DOC)
        )
        return cls

    return decorate


#: ``early_stopping='auto'`` holds out a validation set above this many
#: training sequences for classifiers (see docs/training.md for the
#: measurement) ...
_AUTO_EARLY_STOPPING = 1000
#: ... and from this many for regressors, which overfit small sets.
_AUTO_EARLY_STOPPING_REGRESSION = 20
#: ``batch_size='auto'``: up to this many training sequences, minibatches of
#: ``min(200, n_samples)`` (scikit-learn's MLP rule) ...
_AUTO_BATCH_LARGE_DATA = 1000
#: ... and minibatches of this size above it (measured on the adding
#: problem, see docs/training.md).
_AUTO_BATCH_SIZE_LARGE = 32


#: ``learning_rate_init='auto'``: the rate up to ``_AUTO_BATCH_LARGE_DATA``
#: training sequences and above it (measured on the adding problem and on
#: generated handwriting, see docs/training.md)
_AUTO_LEARNING_RATE = 1e-3
_AUTO_LEARNING_RATE_LARGE = 3e-3


def auto_learning_rate(n_samples: int) -> float:
    """The learning rate of ``learning_rate_init='auto'`` for ``n_samples``
    training sequences: 0.001 up to 1000 sequences, 0.003 above (where
    ``batch_size='auto'`` trains on minibatches of 32).

    Parameters
    ----------
    n_samples : int
        Number of training sequences.

    Returns
    -------
    float
        Initial learning rate of the optimizer.

    Examples
    --------
    >>> auto_learning_rate(600), auto_learning_rate(2000)
    (0.001, 0.003)
    """
    if n_samples > _AUTO_BATCH_LARGE_DATA:
        return _AUTO_LEARNING_RATE_LARGE
    return _AUTO_LEARNING_RATE


def auto_batch_size(n_samples: int) -> int:
    """The minibatch size of ``batch_size='auto'`` for ``n_samples`` training
    sequences: ``min(200, n_samples)`` up to 1000 sequences, 32 above.

    Parameters
    ----------
    n_samples : int
        Number of training sequences.

    Returns
    -------
    int
        Sequences per minibatch.

    Examples
    --------
    >>> auto_batch_size(40), auto_batch_size(600), auto_batch_size(2000)
    (40, 200, 32)
    """
    if n_samples > _AUTO_BATCH_LARGE_DATA:
        return _AUTO_BATCH_SIZE_LARGE
    return min(200, n_samples)


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


# torch's global RNG is shared by all threads: fits running concurrently in
# threads (joblib's threading backend, dask thread workers) would interleave
# their seeded draws, so seeded blocks run one at a time (reentrant: a
# pretrainer may fit another estimator inside)
_TORCH_RNG_LOCK = threading.RLock()
# torch's thread count is process-wide: estimators that set it take turns
_TORCH_THREADS_LOCK = threading.RLock()


@contextlib.contextmanager
def _torch_threads(n_threads):
    """``torch.set_num_threads(n_threads)`` inside the block (None: as is)."""
    if n_threads is None:
        yield
        return
    with _TORCH_THREADS_LOCK:
        previous = torch.get_num_threads()
        torch.set_num_threads(machine_threads(n_threads))
        try:
            yield
        finally:
            torch.set_num_threads(previous)


@contextlib.contextmanager
def _seeded_torch(seed: int):
    """Seed torch's global RNGs inside the block and restore them afterwards."""
    devices = (
        list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    )
    with _TORCH_RNG_LOCK, torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def _seed_plugin_(plugin, random_state) -> None:
    """Give ``plugin`` (a cloned pretrainer) a seed of the fit's own.

    A plug-in whose ``random_state`` is None would otherwise draw from
    numpy's global state, so that two fits of an estimator with an int
    ``random_state`` could differ. Its seed is derived from the seed of
    torch's generator inside :func:`_seeded_torch` (nothing is drawn, so no
    other random stream of the fit moves); an estimator without a
    ``random_state`` leaves the plug-in as it is.
    """
    if random_state is None:
        return
    params = plugin.get_params(deep=False) if hasattr(plugin, "get_params") else {}
    if "random_state" in params and params["random_state"] is None:
        seed = np.random.RandomState(torch.initial_seed() % 2**32)
        plugin.set_params(random_state=int(seed.randint(np.iinfo(np.int32).max)))


def _weighted_moments(values: np.ndarray, weights: np.ndarray):
    """Weighted per-column mean, population variance and the number of rows
    of positive weight (for the constant-feature rule of the scalers)."""
    values = values.astype(np.float64)
    mean = np.average(values, axis=0, weights=weights)
    var = np.average((values - mean) ** 2, axis=0, weights=weights)
    return mean, var, int(np.count_nonzero(weights))


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


#: Leave-one-out R² a regressor's pretrained start must exceed to be kept by
#: ``pretrainer='auto'``: above 0 (the mean's), with a margin for the
#: optimism of the best of the GCV grid's penalties (pure-noise per-step
#: targets reach +0.0001)
_MIN_START_R2 = 0.01

#: ``pretrained_alpha='auto'``: fine-tuning is anchored with this strength to
#: a start whose cross-validated score (``readout_cv_score_`` of the
#: pretrainer: accuracy, or leave-one-out R²) is at least
#: ``_AUTO_ANCHOR_MIN_SCORE``, and free otherwise (measured in
#: docs/training.md)
_AUTO_ANCHOR, _AUTO_ANCHOR_MIN_SCORE = 10.0, 0.9


def _start_predicts(pretrainer) -> bool:
    """Whether a pretrained start predicts held-out training sequences
    better than their mean: its readout's leave-one-out R² is above
    ``_MIN_START_R2``, or was not measured (classification readouts, fixed
    ridge penalties)."""
    r2 = getattr(pretrainer, "readout_loo_r2_", None)
    return r2 is None or not np.isfinite(r2) or r2 > _MIN_START_R2


def _resolve_pooling_(module: SequenceNet, pretrainer) -> str:
    """The pooling ``module`` reads after its start: ``'auto'`` resolved.

    A pretrained start leaves it as it is: chosen by
    :class:`~sklmn.pretraining.LAESInitializer` (``pretrainer.pooling_``),
    the last step for a pretrainer that does not choose. Without a start (no
    pretrainer, or a regressor's rejected one) the mean block joins the
    readout at scale 1, its weights at zero: the network's function at the
    start is unchanged, and training can use both blocks (measured in
    docs/training.md, "Large training sets").
    """
    if module.pooling == "auto" and pretrainer is None:
        module.start_mean_block_()
    return module.resolved_pooling


@torch.no_grad()
def _predict_the_mean_(readout: torch.nn.Linear, context: FitContext) -> None:
    """Set a linear readout to predict the (weighted) mean of the training
    targets of ``context`` (continuous, in model units): zero weights, the
    mean as the bias."""
    y = np.asarray(context.y, dtype=np.float64)
    lengths = np.asarray(context.sequences.lengths)
    # the valid entries (steps) of the targets and of their weights
    y, _, *weight = valid_entries(
        context.per_step, y, y, lengths, context.sample_weight
    )
    mean = np.average(y.reshape(len(y), -1), axis=0, weights=(weight or [None])[0])
    readout.weight.zero_()
    readout.bias.copy_(torch.as_tensor(mean, dtype=readout.bias.dtype))


class _BaseSequenceEstimator(PersistenceMixin, _DocLinkMixin, BaseEstimator):
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

    #: Parameters added after models could be saved, with the values that
    #: keep an older saved model's behaviour (read by ``__setstate__`` and
    #: :func:`sklmn.persistence.load`): models trained before
    #: ``pretrained_alpha`` existed fine-tuned their start freely; models
    #: trained before ``pooling`` existed read the last step only.
    _added_parameter_values: dict = {
        "n_threads": None,
        "pretrained_alpha": 0.0,
        "pooling": "last",
    }

    @classmethod
    def _added_parameters(cls) -> dict:
        """The :attr:`_added_parameter_values` this class has."""
        names = cls._get_param_names()
        return {k: v for k, v in cls._added_parameter_values.items() if k in names}

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
        "n_threads": [Interval(Integral, 1, MAX_THREADS, closed="both"), None],
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
        n_threads=None,
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
        self.callbacks = callbacks

    # ------------------------------------------------------------------ hooks
    def _build_module(self, input_size: int) -> torch.nn.Module:
        """Build the recurrent module (implemented by each public class)."""
        raise NotImplementedError

    def _pooling(self) -> str:
        """The readout's pooling: the ``pooling`` parameter of classes that
        have one for sequence-level targets, ``'last'`` otherwise."""
        if self.target != "sequence":
            return "last"
        return getattr(self, "pooling", "last")

    def _sequence_net(self, recurrent: torch.nn.Module) -> SequenceNet:
        """``recurrent`` with this estimator's readout: ``n_outputs_``
        outputs per sequence or per step, and its pooling."""
        return SequenceNet(
            recurrent,
            int(self.n_outputs_),
            per_step=self.target != "sequence",
            pooling=self._pooling(),
        )

    def _resolve_pretrainer(self, n_samples: int, context: FitContext | None = None):
        """The pretrainer of a fit on ``n_samples`` sequences (hook).

        The ``pretrainer`` parameter of classes that have one (None
        otherwise); the LMN estimators resolve ``'auto'`` here, for the
        training data of ``context``.
        """
        return getattr(self, "pretrainer", None)

    def _initialize_module(
        self, module: SequenceNet, context: FitContext, n_samples: int
    ) -> None:
        """Initialize ``module`` from the training data before training.

        Called in ``fit`` (not on warm starts) after the module and its readout
        are built with the seeded torch RNG, before the optimizer is created:
        the pretrainer (see :meth:`_resolve_pretrainer`, for the
        ``n_samples`` sequences passed to ``fit``) is cloned into
        ``pretrainer_`` and initializes the module with ``context`` (the
        training part of them when a validation split is held out).
        """
        pretrainer = self._resolve_pretrainer(n_samples, context)
        if "pretrainer" in self._parameter_constraints:
            self.pretrainer_ = None
        if pretrainer is not None:
            auto = isinstance(getattr(self, "pretrainer", None), str)  # 'auto'
            random_start = copy.deepcopy(module.state_dict()) if auto else None
            self.pretrainer_ = clone(pretrainer)
            _seed_plugin_(self.pretrainer_, self.random_state)
            self.pretrainer_.initialize(module, context)
            if auto and not _start_predicts(self.pretrainer_):
                # a start whose readout predicts held-out training sequences
                # no better than their mean: a linear model of the history
                # that explains nothing, from which fine-tuning does not
                # escape. What it amounts to is kept: the training mean,
                # predicted by a zero readout on the random memory (the
                # epoch-0 candidate of the best weights; measured in
                # docs/training.md)
                module.load_state_dict(random_start)
                self.pretrainer_ = None
                if context.problem == "continuous":
                    _predict_the_mean_(module.readout, context)
        if "pretrained_alpha" in self._parameter_constraints:
            self.pretrained_alpha_ = self._anchor_strength()
        if "pooling" in self._parameter_constraints:
            self.pooling_ = _resolve_pooling_(
                module, getattr(self, "pretrainer_", None)
            )

    def _anchor_strength(self) -> float:
        """The anchor of this fit's fine-tuning: ``pretrained_alpha``, with
        ``'auto'`` resolved from ``pretrainer_`` (0 without one)."""
        if getattr(self, "pretrainer_", None) is None:
            return 0.0
        anchor = self.pretrained_alpha
        if not isinstance(anchor, str):
            return float(anchor)
        score = getattr(self.pretrainer_, "readout_cv_score_", None)
        strong = score is not None and np.isfinite(score)
        return _AUTO_ANCHOR if strong and score >= _AUTO_ANCHOR_MIN_SCORE else 0.0

    def _plugin_callbacks(self, context: FitContext) -> list:
        """``(name, callback)`` pairs of the plug-ins of this fit (hook).

        Placed after the built-in and user callbacks and before the stopping
        rule; the multi-scale LMN's growth schedule plugs in here.
        """
        return []

    def _model_parameter_names(self) -> list[str]:
        base = {
            **_BaseSequenceEstimator._parameter_constraints,
            **CLASS_WEIGHT_CONSTRAINTS,  # a training parameter
        }
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
        check_device(device, self.device)
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
                sample_weight=None
                if dataset.sample_weight is None
                else dataset.sample_weight[idx],
            )

        return subset(train_idx), subset(valid_idx), np.sort(train_idx)

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

    def _step_settings(self, n_samples: int) -> tuple[int, float]:
        """``(batch_size, learning_rate_init)``, each ``'auto'`` resolved
        for ``n_samples`` training sequences."""
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
        estimator's target."""
        optimizer, optimizer_kwargs = _OPTIMIZERS[self.optimizer]
        problem, per_step = self._problem, self.target == "timestep"
        callbacks = []
        if valid_dataset is not None:
            callbacks.append(("valid_score", ValidationScore(problem, per_step)))
        if self.gradient_clipping is not None:
            callbacks.append(
                ("gradient_clipping", GradientNormClipping(self.gradient_clipping))
            )
        anchor = getattr(self, "pretrained_alpha_", 0.0)
        if (
            anchor
            and context is not None
            and not context.warm_start
            and getattr(self, "pretrainer_", None) is not None
        ):
            # fine-tuning pulled toward the pretrained start (L2-SP)
            callbacks.append(("anchor_to_start", AnchorToStart(float(anchor))))
        callbacks.extend(copy_callbacks(self.callbacks))
        sink = print if self.verbose else None
        if self.verbose:
            callbacks.append(("progress", ProgressLogger(sink=print)))
        if monitor and not any(
            isinstance(cb[1] if isinstance(cb, tuple) else cb, RestoreOnDivergence)
            for cb in callbacks
        ):
            # a divergence ends fit with the best weights and a warning
            callbacks.append(("restore_on_divergence", RestoreOnDivergence("best")))
        if monitor:  # partial_fit: one pass, no plug-ins, no stopping rule
            if context is not None:
                callbacks.extend(self._plugin_callbacks(context))
            callbacks.append(
                (
                    "convergence",
                    ConvergenceMonitor(
                        self.tol,
                        self.n_iter_no_change,
                        monitor="train_loss" if context is None else context.monitor,
                        learning_rate=self.learning_rate,
                        sink=sink,
                    ),
                )
            )
        return make_sequence_net(
            module,
            problem=problem,
            per_step=per_step,
            optimizer=optimizer,
            lr=lr,
            # scikit-learn's MLP adds 0.5 * alpha * ||W||^2 / batch_size to
            # each minibatch loss, whose gradient is (alpha / batch_size) * W
            weight_decay=self.alpha / batch_size,
            decay_biases=False,
            max_epochs=self.max_iter,
            batch_size=batch_size,
            valid_dataset=valid_dataset,
            valid_batch_size=max(batch_size, 256),
            callbacks=callbacks,
            device=str(device),
            shuffle_seed=shuffle_seed,
            bucket_by_length=self.bucket_by_length,
            **optimizer_kwargs,
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
            all equal are the same as None. Pretrainers (``pretrainer``) and
            the growth schedule (``incremental``) ignore them.
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
        >>> import numpy as np
        >>> from sklmn.estimators import RNNClassifier
        >>> rng = np.random.RandomState(0)
        >>> X = rng.randn(30, 5, 2)
        >>> y = (X[:, -1, 0] > 0).astype(int)
        >>> weights = np.where(y == 1, 2.0, 1.0)
        >>> clf = RNNClassifier(hidden_size=4, max_iter=5, random_state=0)
        >>> clf.fit(X, y, sample_weight=weights).n_iter_
        5
        """
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        if sample_weight_val is not None and X_val is None:
            raise ValueError("sample_weight_val needs X_val and y_val.")
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
        sample_weight = self._check_weights(sample_weight, seqs)
        class_weight = self._class_weight_vector(y_encoded, seqs)
        weights = self._loss_weights(sample_weight, y_encoded, seqs, class_weight)
        if not warm:
            self._fit_standardization(seqs, y_encoded, sample_weight)
        device = self._resolve_device()
        rng = check_random_state(self.random_state)
        torch_seed, shuffle_seed, split_seed = (
            int(s) for s in rng.randint(np.iinfo(np.int32).max, size=3)
        )
        seqs = self._standardized_inputs(seqs)
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
        if X_val is None and self._split_validation(seqs.n_samples):
            dataset, valid_dataset, train_idx = self._split(
                dataset, y_encoded, split_seed
            )
            # the plug-ins (pretrainer, growth schedule) see the training part
            # only: the held-out sequences judge the start too
            train_seqs, train_y = _take_sequences(seqs, y_model, train_idx)
            if weights is not None:
                train_weights = _mean_one(weights[train_idx], train_seqs)
        batch_size, lr = self._step_settings(seqs.n_samples)

        context = self._context(
            train_seqs,
            train_y,
            warm=warm,
            validation=valid_dataset is not None,
            sample_weight=train_weights,
        )
        with _torch_threads(self.n_threads), _seeded_torch(torch_seed):
            if warm:
                # train a copy: a fit that fails leaves the fitted model intact
                module = copy.deepcopy(self.net_.module_)
            else:
                recurrent = self._build_module(seqs.n_features)
                module = self._sequence_net(recurrent)
                self._initialize_module(module, context, seqs.n_samples)
            net = self._make_net(
                module,
                context,
                device=device,
                batch_size=batch_size,
                lr=lr,
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
        if not net.converged_ and len(net.history) == self.max_iter:
            warnings.warn(
                f"Maximum iterations ({self.max_iter}) reached and the "
                "optimization hasn't converged yet.",
                ConvergenceWarning,
                stacklevel=3,  # fit <- _fit_context wrapper <- caller
            )
        return self

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

    # ----------------------------------------------------------- partial_fit
    def _check_partial_fit_parameters(self) -> None:
        if self.early_stopping is True:
            raise ValueError(
                "partial_fit makes one pass over the given data and does not "
                "support early stopping, got early_stopping=True; use fit, or "
                "early_stopping=False or 'auto' (off in partial_fit)."
            )
        incremental = getattr(self, "incremental", None)
        if incremental is not None:
            raise ValueError(
                "partial_fit does not support growth schedules, got "
                f"incremental={incremental!r}; use fit, or incremental=None."
            )
        if isinstance(getattr(self, "class_weight", None), str):
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit, which "
                "sees one batch at a time; compute the weights on the whole data "
                "(sklearn.utils.class_weight.compute_class_weight) and pass them "
                "as a dict."
            )

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

    def _partial_fit(self, X, y, *, classes=None, sample_weight=None):
        """One pass (epoch) over ``X``; the first call builds the model."""
        self._check_partial_fit_parameters()
        first = not hasattr(self, "net_")
        if not first:
            self._check_warm_start(
                "partial_fit", "call fit to train a new model instead"
            )
        seqs = validate_sequences(self, X, reset=first, dtype=np.float32)
        y_encoded = self._encode_partial_target(y, seqs, first=first, classes=classes)
        sample_weight = self._check_weights(sample_weight, seqs)
        class_weight = self._class_weight_vector(y_encoded, seqs)
        weights = self._loss_weights(sample_weight, y_encoded, seqs, class_weight)
        if first:
            self._fit_standardization(seqs, y_encoded, sample_weight)
        device = self._resolve_device()
        done = 0 if first else int(self.n_iter_)
        rng = check_random_state(self.random_state)
        torch_seed, shuffle_seed = (
            (int(s) + done) % np.iinfo(np.int32).max
            for s in rng.randint(np.iinfo(np.int32).max, size=2)
        )
        seqs = self._standardized_inputs(seqs)
        y_model = self._standardized_target(y_encoded, seqs)
        dataset = self._dataset(seqs, y_model, weights)
        batch_size, lr = self._step_settings(len(dataset))
        context = self._context(
            seqs, y_model, warm=not first, validation=False, sample_weight=weights
        )
        with _torch_threads(self.n_threads), _seeded_torch(torch_seed):
            if first:
                recurrent = self._build_module(seqs.n_features)
                module = self._sequence_net(recurrent)
                self._initialize_module(module, context, seqs.n_samples)
            else:
                # train a copy: a call that fails leaves the fitted model intact
                module = copy.deepcopy(self.net_.module_)
            net = self._make_net(
                module,
                context,
                device=device,
                batch_size=batch_size,
                lr=lr,
                valid_dataset=None,
                shuffle_seed=shuffle_seed,
                monitor=False,
            )
            net.initialize()
            if not first:
                self._resume_optimizer(net)
            net.partial_fit(dataset, epochs=1)
        if net.divergence_ is not None:  # a callback recovered: still a failure
            raise FloatingPointError(net.divergence_)
        losses = _completed(net.history, "train_loss")
        if net.interrupted_ and not losses:
            raise KeyboardInterrupt
        self._check_finite_parameters(net)
        self.loss_curve_ = ([] if first else list(self.loss_curve_)) + losses
        self.n_iter_ = len(self.loss_curve_)
        self.best_loss_ = float(self.loss_curve_[-1])
        self.best_epoch_ = self.n_iter_
        self.validation_loss_curve_ = None
        self.validation_scores_ = None
        self.best_validation_score_ = None
        self.diverged_ = False
        self.net_ = net
        self._fitted_params = self._current_fitted_params()
        self._record_fit(net)
        return self

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
        with _torch_threads(getattr(self, "n_threads", None)):  # older pickles
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

    def __setstate__(self, state):
        # parameters added after a model was pickled take their defaults
        state = dict(state)
        for key, value in self._added_parameters().items():
            state.setdefault(key, value)
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # 2-D X are univariate sequences (n, T); 3-D X are (n, T, d)
        tags.input_tags.two_d_array = True
        tags.input_tags.three_d_array = True
        return tags


class _BaseSequenceClassifier(ClassifierMixin, _BaseSequenceEstimator):
    """Classification targets: multiclass (cross-entropy on logits) or
    multilabel (binary cross-entropy on logits)."""

    _fitted_attributes = {"classes_": "array", "_ctc_string_labels": "bool"}

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
        >>> import numpy as np
        >>> from sklmn.estimators import RNNClassifier
        >>> rng = np.random.RandomState(0)
        >>> X = rng.randn(40, 5, 2)
        >>> y = (X[:, -1, 0] > 0).astype(int)
        >>> clf = RNNClassifier(hidden_size=4, random_state=0)
        >>> clf = clf.partial_fit(X[:20], y[:20], classes=[0, 1])
        >>> clf = clf.partial_fit(X[20:], y[20:])
        >>> clf.n_iter_
        2
        """
        return self._partial_fit(X, y, classes=classes, sample_weight=sample_weight)

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
        outputs, seqs = self._predict_outputs(X)
        if self._problem in ("multiclass", "ctc"):
            proba = softmax(outputs, axis=-1)
        else:
            proba = expit(outputs)
        if self.target != "sequence":
            return format_like_input(proba, seqs)
        return proba

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
        >>> from sklmn.estimators import RNNClassifier
        >>> rng = np.random.RandomState(0)
        >>> X = rng.randn(20, 4, 1)
        >>> y = (X[:, -1, 0] > 0).astype(int)
        >>> clf = RNNClassifier(hidden_size=4, max_iter=3, random_state=0).fit(X, y)
        >>> bool(np.allclose(np.exp(clf.predict_log_proba(X)), clf.predict_proba(X)))
        True
        """
        outputs, seqs = self._predict_outputs(X)
        if self._problem in ("multiclass", "ctc"):
            log_proba = log_softmax(outputs, axis=-1)
        else:
            log_proba = -np.logaddexp(0.0, -outputs)  # log(sigmoid)
        if self.target != "sequence":
            return format_like_input(log_proba, seqs)
        return log_proba

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

    # ------------------------------------------------------------------- CTC
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


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
            steps = steps.reshape(steps.shape[0], -1)
            _check_float32_range(steps)
            encoded = pad_steps(steps.astype(np.float32), seqs, 0.0)
        n_outputs = encoded.shape[-1]
        if not reset and n_outputs != self.n_outputs_:
            where = "previous call to fit" if context is None else "first call"
            raise ValueError(
                f"{context or 'warm_start'} can only be used where y has the same "
                f"number of outputs as in the {where}; got {n_outputs}, "
                f"previously {self.n_outputs_}."
            )
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
        >>> import numpy as np
        >>> from sklmn.estimators import RNNRegressor
        >>> rng = np.random.RandomState(0)
        >>> X = rng.randn(40, 5, 2)
        >>> y = X[:, :, 0].sum(axis=1)
        >>> reg = RNNRegressor(hidden_size=4, random_state=0)
        >>> for start in (0, 20):
        ...     reg = reg.partial_fit(X[start:start + 20], y[start:start + 20])
        >>> len(reg.loss_curve_)
        2
        """
        return self._partial_fit(X, y, sample_weight=sample_weight)

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
