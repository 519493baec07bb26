"""Helpers shared by the experiment modules (no experiment is defined here).

Every experiment module keeps a ``_SIZES`` table keyed by preset; besides
``'quick'`` and ``'full'`` it holds a private ``'test'`` entry (tiny sizes)
used by ``tests/benchmarks`` when calling the experiment function directly.
"""

from __future__ import annotations

import argparse
import functools
import re
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch
from sklearn.base import is_classifier
from sklearn.exceptions import ConvergenceWarning

from ..callbacks import DivergenceWarning

__all__ = [
    "DIVERGED",
    "PINNED",
    "divergence_note",
    "fit_timed",
    "int_at_least",
    "kept_epoch",
    "pinned",
    "n_parameters",
    "ordering_holds",
    "pretraining_or_reason",
    "single_threaded",
    "sizes_for",
]


#: The settings the LMN and MultiScaleLMN families share (in :data:`PINNED`).
_LMN_FAMILY = dict(
    bidirectional=False,
    memory_matrix="free",
    memory_lr_scale=1.0,
    memory_ring=None,
    norm_penalty=0.0,
    orthogonality_penalty=0.0,
    output="memory",
    pooling="last",  # the papers' readout of the last step
    pretrainer=None,
    pretrained_alpha=0.0,
    fine_tuning="full",
    feedback="free",  # the papers' LMN reads its memory
    truncate_gradient=False,
)

#: Every estimator setting that the experiments do not take from a paper,
#: stated explicitly (the library defaults when the set-ups were written) so
#: that a later change of a library default cannot silently change an
#: experiment. ``'all'`` applies to every estimator, the other keys to the
#: estimator family (the class name without ``Classifier``/``Regressor``),
#: ``'classifier'`` to every classifier.
#: The experiments override some of them, with the paper's value where it
#: states one.
PINNED: dict[str, dict] = {
    "all": dict(
        alpha=1e-4,
        batch_size="auto",
        bucket_by_length=False,
        callbacks=None,
        device="cpu",
        early_stopping=False,
        gradient_clipping=1.0,
        input_layout=None,
        learning_rate="constant",
        learning_rate_init=1e-3,
        max_iter=200,
        n_iter_no_change=10,
        n_threads=None,
        optimizer="adam",
        random_state=0,
        standardize=True,
        target="sequence",
        tol=1e-4,
        validation_fraction=0.1,
        validation_metric="loss",
        verbose=0,
        warm_start=False,
    ),
    "LMN": dict(_LMN_FAMILY, dropout=0.0, memory_bias=False, num_layers=1),
    "MultiScaleLMN": dict(_LMN_FAMILY, incremental=None),
    "RNN": dict(
        bidirectional=False,
        dropout=0.0,
        forget_bias=1.0,
        n_modules=4,  # the Clockwork RNN's; the experiments state theirs
        num_layers=1,
        pretrainer=None,
        recurrent_init="uniform",
        recurrent_matrix="free",
        tape_length=4,
    ),
    # classifiers only (``'classifier'`` applies to every classifier that has
    # the parameter); the papers' LMNs read the inputs as they are
    "classifier": dict(
        class_weight=None, decoding="greedy", beam_width=10, input_expansion="none"
    ),
    # the stream mode (its own training settings: windows, tracks)
    "StreamLanguageModel": dict(
        alpha=0.0,
        batch_size=32,
        bptt=50,
        cell_params=None,
        embedding_dim=32,
        memory_size=64,
        max_iter=20,
        n_iter_no_change=None,
        num_layers=1,
        short_size=64,
    ),
    # eps = 0: the normalization W = T / rho(T) of Helfrich & Ye 2020 §3
    "ENRNN": dict(
        activation="modrelu",
        coupling=False,
        eps=0.0,
        latch=True,
        n_negative=0,
        normalize=True,
        num_layers=1,
        bidirectional=False,
    ),
}


def pinned(estimator_class, **params):
    """Build an estimator with every setting stated (see :data:`PINNED`).

    The settings of :data:`PINNED` for all estimators and for the
    estimator's family are applied, then ``params``. A parameter of the
    estimator that neither names is an error: a new library parameter must
    be pinned here before the experiments use it.

    Parameters
    ----------
    estimator_class : type
        An sklmn estimator class.
    **params
        The experiment's own settings (sizes, learning rates, budgets, ...).

    Returns
    -------
    estimator : estimator_class instance

    Examples
    --------
    >>> from sklmn.estimators import LMNClassifier
    >>> est = pinned(LMNClassifier, hidden_size=8, memory_size=8)
    >>> est.pretrainer is None, est.early_stopping, est.gradient_clipping
    (True, False, 1.0)
    """
    family = estimator_class.__name__
    for suffix in ("Classifier", "Regressor"):
        family = family.removesuffix(suffix)
    kind = PINNED["classifier"] if is_classifier(estimator_class()) else {}
    names = set(estimator_class().get_params(deep=False))
    # the shared settings apply to the parameters the estimator has (the
    # stream language model has no sequence targets, standardization, ...)
    shared = {k: v for k, v in {**PINNED["all"], **kind}.items() if k in names}
    settings = {**shared, **PINNED.get(family, {}), **params}
    missing = sorted(names - set(settings))
    if missing:
        raise ValueError(
            f"{estimator_class.__name__} parameter(s) {missing} are not pinned: "
            "state them in sklmn.benchmarks._exp_common.PINNED or in the "
            "experiment"
        )
    return estimator_class(**settings)


def sizes_for(table: dict, preset: str) -> dict:
    """Return the size settings of ``preset`` from an experiment's table.

    Parameters
    ----------
    table : dict
        ``{preset_name: {setting: value}}``.
    preset : str
        Preset name (``'quick'``, ``'full'`` or the private ``'test'``).

    Returns
    -------
    sizes : dict

    Examples
    --------
    >>> sizes_for({"quick": {"n": 1}}, "quick")
    {'n': 1}
    >>> sizes_for({"quick": {"n": 1}}, "huge")
    Traceback (most recent call last):
    ...
    ValueError: preset must be one of ['quick'], got 'huge'.
    """
    if preset not in table:
        raise ValueError(f"preset must be one of {sorted(table)}, got {preset!r}.")
    return dict(table[preset])


def n_parameters(estimator) -> int:
    """Number of trainable scalars of a fitted sklmn estimator (readout included).

    Masked (block-structured) weight matrices count with their full shape.

    Parameters
    ----------
    estimator : fitted sklmn estimator

    Returns
    -------
    n : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNRegressor
    >>> X, y = np.zeros((4, 5, 1)), np.arange(4.0)
    >>> est, _ = fit_timed(RNNRegressor(cell="elman", hidden_size=3, max_iter=1),
    ...                    X, y, lambda msg: None, "RNN")
    >>> n_parameters(est)  # W_ih 3, W_hh 9, biases 3 (+3), readout 3 + 1
    22
    """
    module = estimator.net_.module_
    return int(sum(p.numel() for p in module.parameters() if p.requires_grad))


def fit_timed(
    estimator, X, y, log: Callable[[str], None], name: str, **fit_params
) -> tuple[object | None, float]:
    """Fit ``estimator`` on ``(X, y)``, log and return it with the seconds taken.

    A fit that diverges (the estimators raise ``FloatingPointError`` on a
    non-finite loss) is logged and returns ``None`` instead of the
    estimator, so that one unstable model does not end a long benchmark run;
    the experiments then report NaN with a note.

    Parameters
    ----------
    estimator : sklmn estimator
    X, y : training data
    log : callable
        Progress sink.
    name : str
        Model name used in the log line.
    **fit_params
        Passed to ``fit`` (e.g. ``X_val``, ``y_val``).

    Returns
    -------
    estimator : fitted estimator or None
        None when training diverged.
    seconds : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNRegressor
    >>> X, y = np.zeros((4, 5, 1)), np.arange(4.0)
    >>> est, sec = fit_timed(RNNRegressor(hidden_size=2, max_iter=1), X, y,
    ...                      lambda m: None, "LSTM")
    >>> est.n_iter_, sec >= 0
    (1, True)
    """
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # the budgets are fixed epoch counts: hitting max_iter is intended
            warnings.simplefilter("ignore", ConvergenceWarning)
            # a recovered divergence is reported by the row note and the log
            # (divergence_note), not as a warning on stderr
            warnings.simplefilter("ignore", DivergenceWarning)
            estimator.fit(X, y, **fit_params)
    except FloatingPointError as exc:
        seconds = time.perf_counter() - t0
        log(f"{name}: training diverged after {seconds:.1f} s ({exc})")
        _fit_done()
        return None, seconds
    seconds = time.perf_counter() - t0
    loss = estimator.loss_curve_[-1] if estimator.loss_curve_ else float("nan")
    diverged = divergence_note(estimator)
    log(
        f"{name}: {estimator.n_iter_} epochs in {seconds:.1f} s, "
        f"final training loss {loss:.4g}, kept epoch {estimator.best_epoch_}"
        + (f"; {diverged}" if diverged else "")
    )
    _fit_done()
    return estimator, seconds


#: Called after every fit of :func:`fit_timed` (the runner's progress bars
#: count fits); set per experiment run by :func:`set_fit_hook`.
_FIT_HOOK: list[Callable[[], None]] = []


def set_fit_hook(hook: Callable[[], None] | None) -> None:
    """Call ``hook()`` after every fit of :func:`fit_timed` (None: stop).

    The runner counts the fits of the experiment running in this process
    with it (its per-experiment progress bar).

    Parameters
    ----------
    hook : callable or None

    Examples
    --------
    >>> calls = []
    >>> set_fit_hook(lambda: calls.append(1))
    >>> _fit_done(); set_fit_hook(None); _fit_done()
    >>> calls
    [1]
    """
    _FIT_HOOK[:] = [] if hook is None else [hook]


def _fit_done() -> None:
    for hook in _FIT_HOOK:
        try:
            hook()
        except Exception:  # noqa: BLE001 - progress display must not end a run
            pass


def divergence_note(estimator) -> str:
    """Say where and how a fit that recovered from a divergence diverged.

    The estimators recover from a divergence by restoring earlier weights
    (``diverged_`` is then True, see :class:`sklmn.callbacks.RestoreOnDivergence`);
    the note gives the epoch and the loss of the cause, taken from the
    message the training net kept.

    Parameters
    ----------
    estimator : fitted sklmn estimator

    Returns
    -------
    note : str
        Empty when the fit did not diverge.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNRegressor
    >>> X, y = np.random.RandomState(0).rand(8, 5, 1), np.arange(8.0)
    >>> est = pinned(RNNRegressor, cell="lstm", hidden_size=2, max_iter=2)
    >>> est, _ = fit_timed(est, X, y, lambda m: None, "LSTM")
    >>> divergence_note(est)
    ''
    """
    if not getattr(estimator, "diverged_", False):
        return ""
    message = getattr(getattr(estimator, "net_", None), "divergence_", None) or ""
    match = re.match(r"Training diverged at epoch (\d+)[^:]*: (.*)", message)
    if match is None:
        return f"training diverged ({message or 'no message kept'})"
    # the cause is the first sentence of the message (the advice follows)
    cause = re.split(r"(?<=[^.\d])\.(?:\s|$)", match.group(2), maxsplit=1)[0]
    return f"training diverged at epoch {match.group(1)}: {cause}"


def kept_epoch(estimator) -> str:
    """Row note: the epochs run and the epoch whose weights were kept.

    A fit that diverged and recovered says so first, with the epoch and the
    loss of the divergence (see :func:`divergence_note`).

    Parameters
    ----------
    estimator : fitted sklmn estimator

    Returns
    -------
    note : str

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNRegressor
    >>> est = pinned(RNNRegressor, cell="lstm", hidden_size=2, max_iter=2)
    >>> est, _ = fit_timed(est, np.zeros((4, 5, 1)), np.arange(4.0),
    ...                    lambda m: None, "LSTM")
    >>> kept_epoch(est)
    '2 epochs, kept epoch ... (lowest training loss)'
    """
    selected = (
        "lowest validation loss"
        if estimator.validation_loss_curve_ is not None
        else "lowest training loss"
    )
    note = (
        f"{estimator.n_iter_} epochs, kept epoch {estimator.best_epoch_} "
        f"({selected})"
    )
    diverged = divergence_note(estimator)
    if diverged:
        return f"**{diverged}**; {note}"
    return note


#: Row note of a model whose training diverged (see :func:`fit_timed`).
DIVERGED = "training diverged (non-finite loss)"


def pretraining_or_reason(*names: str):
    """Return ``(sklmn.pretraining, None)`` or ``(None, reason)`` if unusable.

    The pretraining subpackage plugs into the estimators through their
    ``pretrainer`` / ``incremental`` parameters; experiments that need it
    report a row note instead of failing when it is missing.

    Parameters
    ----------
    *names : str
        Classes of :mod:`sklmn.pretraining` the experiment needs
        (``'LAESInitializer'``, ``'UnrolledPretrainer'``,
        ``'IncrementalTraining'``).

    Returns
    -------
    module : module or None
    reason : str or None

    Examples
    --------
    >>> module, reason = pretraining_or_reason("LAESInitializer")
    >>> (module is None) != (reason is None)
    True
    """
    try:
        from .. import pretraining
        from ..estimators import LMNClassifier, MultiScaleLMNClassifier
    except ImportError as exc:  # pragma: no cover - depends on the checkout
        return None, f"pretraining not available ({exc})"
    missing = [name for name in names if not hasattr(pretraining, name)]
    needs_pretrainer = {"LAESInitializer", "UnrolledPretrainer"} & set(names)
    if needs_pretrainer and "pretrainer" not in LMNClassifier().get_params():
        missing.append("LMNClassifier(pretrainer=...)")
    if (
        "IncrementalTraining" in names
        and "incremental" not in MultiScaleLMNClassifier().get_params()
    ):
        missing.append("MultiScaleLMNClassifier(incremental=...)")
    if missing:
        return None, f"pretraining not available (missing {', '.join(missing)})"
    return pretraining, None


def ordering_holds(scores: list[float], *, higher_is_better: bool = True) -> bool:
    """Whether ``scores`` (listed best-claimed first) are in the claimed order.

    Parameters
    ----------
    scores : list of float
        Scores of the models in the order the paper ranks them.
    higher_is_better : bool, default=True

    Returns
    -------
    holds : bool

    Examples
    --------
    >>> ordering_holds([0.9, 0.8, 0.8])
    True
    >>> ordering_holds([0.1, 0.2], higher_is_better=False)
    True
    """
    s = np.asarray(scores, dtype=float)
    if np.isnan(s).any():
        return False
    d = np.diff(s)
    return bool(np.all(d <= 0) if higher_is_better else np.all(d >= 0))


def single_threaded(fn):
    """Run an experiment function with one torch thread, then restore the count.

    The models of the experiments are small (tens of units, batches of tens
    of sequences): intra-op parallelism only adds synchronization, and on a
    busy machine it is dramatic (the ENRNN of the adding problem measured
    9 s with one thread and 51 s with two, on two shared cores). The
    caller's thread count is restored afterwards, also on errors.

    Parameters
    ----------
    fn : callable
        Experiment ``fn(preset, output_dir, log)``.

    Returns
    -------
    wrapped : callable

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> single_threaded(lambda: torch.get_num_threads())()
    1
    >>> torch.get_num_threads() == before
    True
    """

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        previous = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(previous)

    return wrapped


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An ``argparse`` type: an int of at least ``minimum``.

    The benchmarks' command lines use it so that a count or a seed out of
    range is a usage error naming the value, before any data are built or
    models fitted.

    Parameters
    ----------
    minimum : int
        The smallest value accepted (0 for seeds, 1 for counts).

    Returns
    -------
    parse : callable
        ``str -> int``; raises :class:`argparse.ArgumentTypeError` otherwise.

    Examples
    --------
    >>> from sklmn.benchmarks._exp_common import int_at_least
    >>> int_at_least(1)("3")
    3
    >>> int_at_least(0)("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an int >= 0, got '-1'
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(
                f"must be an int >= {minimum}, got {text!r}"
            )
        return value

    parse.__name__ = f"int >= {minimum}"
    return parse
