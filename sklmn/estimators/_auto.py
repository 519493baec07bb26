"""The ``'auto'`` rules of the training parameters.

What ``batch_size='auto'``, ``learning_rate_init='auto'``,
``early_stopping='auto'``, the LMN classifiers' ``memory_size='auto'``
resolve to for a training set of a given size, and the threads of
``n_threads='auto'``. The measurements behind the thresholds
are in ``docs/training.md`` and ``docs/user_guide/fitting.md`` (threads).
"""

from __future__ import annotations

import os

__all__ = [
    "auto_batch_size",
    "auto_early_stopping",
    "auto_learning_rate",
    "auto_memory_size",
    "auto_module_sizes",
    "auto_threads",
]

#: ``n_threads='auto'``: one intra-op thread below this many multiply-adds
#: per time step of a batch (batch size x recurrent and readout parameters),
#: where torch's parallel kernels cost more than they give
#: (docs/user_guide/fitting.md, threads)
_AUTO_THREADS_MIN_WORK = 2_000_000

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


#: ``memory_size='auto'`` of ``LMNClassifier``: the memory units of a network
#: that starts from a pretrained start with fewer training sequences than
#: ``_AUTO_MEMORY_LARGE_DATA`` (and of every network without a start) ...
_AUTO_MEMORY_SIZE = 32
#: ... and of a started network from that many sequences on: at least two
#: training sequences per memory unit (docs/memory.md, "The memory's size
#: and the training set")
_AUTO_MEMORY_SIZE_LARGE = 64
_AUTO_MEMORY_LARGE_DATA = 2 * _AUTO_MEMORY_SIZE_LARGE


def auto_memory_size(n_samples: int, started: bool) -> int:
    """The memory units of ``memory_size='auto'`` (``LMNClassifier``) for
    ``n_samples`` training sequences: 64 from 128 sequences when the network
    starts from a pretrained start (``started``), else 32.

    Parameters
    ----------
    n_samples : int
        Number of training sequences.
    started : bool
        Whether the fit initializes the network from a pretrainer (the
        resolved ``pretrainer`` is not None).

    Returns
    -------
    int
        Memory units per layer and direction.

    Examples
    --------
    >>> auto_memory_size(100, True), auto_memory_size(200, True)
    (32, 64)
    >>> auto_memory_size(200, False)
    32
    """
    if started and n_samples >= _AUTO_MEMORY_LARGE_DATA:
        return _AUTO_MEMORY_SIZE_LARGE
    return _AUTO_MEMORY_SIZE


#: ``memory_size='auto'`` of ``MultiScaleLMNClassifier``: the units of every
#: module after the first, and of every module from
#: ``_AUTO_LEADING_MODULE_DATA`` training sequences on or without a start ...
_AUTO_SLOW_MODULE_SIZE = 12
#: ... below which the first module of a started network gets the LMN's
#: memory (on ACSF1's 100 sequences such a network's fits took up to 386 s
#: and one had loss spikes: docs/memory.md, "Modules of different sizes")
_AUTO_LEADING_MODULE_DATA = 100


def auto_module_sizes(n_samples: int, started: bool, n_modules: int) -> int | tuple:
    """The module sizes of ``memory_size='auto'`` (``MultiScaleLMNClassifier``).

    A network that starts from a pretrained start (``started``) with fewer
    than 100 training sequences gets a first (fastest) module as large as
    the LMN classifier's memory there (:func:`auto_memory_size`, 32 units)
    and slower modules of 12 units; otherwise (from 100 sequences, where
    such a network takes several times the fit time, or without a start)
    every module has 12 units.

    Parameters
    ----------
    n_samples : int
        Number of training sequences.
    started : bool
        Whether the fit initializes the network from a pretrainer.
    n_modules : int
        Number of modules.

    Returns
    -------
    int or tuple of int
        The units of every module (an int when they are equal).

    Examples
    --------
    >>> auto_module_sizes(36, True, 4), auto_module_sizes(99, True, 2)
    ((32, 12, 12, 12), (32, 12))
    >>> auto_module_sizes(100, True, 4), auto_module_sizes(36, False, 4)
    (12, 12)
    """
    if not started or n_samples >= _AUTO_LEADING_MODULE_DATA:
        return _AUTO_SLOW_MODULE_SIZE
    first = auto_memory_size(n_samples, started)
    if n_modules == 1:
        return first
    return (first, *[_AUTO_SLOW_MODULE_SIZE] * (n_modules - 1))


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
        Number of sequences the estimator trains on.

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


def auto_early_stopping(problem: str, n_samples: int) -> bool:
    """Whether ``early_stopping='auto'`` holds out a validation split of
    ``n_samples`` training sequences: for classifiers above 1000 sequences,
    for regressors (``problem='continuous'``) from 20.

    Parameters
    ----------
    problem : str
        Kind of target (``'continuous'`` for regressors).
    n_samples : int
        Number of training sequences.

    Returns
    -------
    bool
        Whether a validation split is held out.

    Examples
    --------
    >>> auto_early_stopping("multiclass", 600), auto_early_stopping("continuous", 600)
    (False, True)
    """
    if problem == "continuous":
        return n_samples >= _AUTO_EARLY_STOPPING_REGRESSION
    return n_samples > _AUTO_EARLY_STOPPING


def _free_cores(cores: int) -> int:
    """Cores not taken by other runnable processes: ``cores`` less the
    one-minute load average beyond this process's own one (``cores`` where
    the platform has no load average)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cores
    return max(1, min(cores, int(cores + 1.0 - load + 0.5)))


def auto_threads(work: float, budget: int, cores: int | None = None) -> int:
    """The torch threads of ``n_threads='auto'``.

    One thread for a model whose batches are small work (``work``: the
    multiply-adds of one time step of a batch, batch size times the
    module's parameters, below 2 000 000); otherwise the thread budget of the
    process (``budget``: torch's current setting, which a joblib worker's
    ``OMP_NUM_THREADS`` and ``threadpoolctl`` limits lower), bounded by the
    cores that other processes leave free (the load average).

    Parameters
    ----------
    work : float
        Multiply-adds per time step of one batch.
    budget : int
        Threads the process may use (``torch.get_num_threads()``).
    cores : int or None, default=None
        Cores of the machine (None: ``os.cpu_count()``).

    Returns
    -------
    n_threads : int

    Examples
    --------
    >>> from sklmn.estimators._auto import auto_threads
    >>> auto_threads(work=32 * 5_000, budget=8)
    1
    """
    if work < _AUTO_THREADS_MIN_WORK or budget <= 1:
        return 1
    cores = cores or os.cpu_count() or 1
    return max(1, min(int(budget), cores, _free_cores(cores)))
