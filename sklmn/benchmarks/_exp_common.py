"""Helpers shared by the experiment modules (no experiment registers here).

Every experiment module keeps a ``_SIZES`` table keyed by preset; besides
``'quick'`` and ``'full'`` it holds a private ``'test'`` entry (tiny sizes)
used by ``tests/benchmarks`` when calling the experiment function directly.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "DIVERGED",
    "fit_timed",
    "n_parameters",
    "ordering_holds",
    "pretraining_or_reason",
    "single_threaded",
    "sizes_for",
]


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
    estimator, X, y, log: Callable[[str], None], name: str
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
            estimator.fit(X, y)
    except FloatingPointError as exc:
        seconds = time.perf_counter() - t0
        log(f"{name}: training diverged after {seconds:.1f} s ({exc})")
        return None, seconds
    seconds = time.perf_counter() - t0
    loss = estimator.loss_curve_[-1] if estimator.loss_curve_ else float("nan")
    log(
        f"{name}: {estimator.n_iter_} epochs in {seconds:.1f} s, "
        f"final training loss {loss:.4g}"
    )
    return estimator, seconds


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
