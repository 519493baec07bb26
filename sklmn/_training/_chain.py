"""The callback chain and the net of an estimator's fit.

The one place that orders the callbacks of a ``fit`` (validation score,
gradient clipping, the model's own, the user's, progress, the divergence
guard, the plug-ins', the stopping rule last) and wires the optimizer
settings of the estimators (scikit-learn's MLP conventions) into
:func:`make_sequence_net`.
"""

from __future__ import annotations

import copy

import torch

from ..callbacks import RestoreOnDivergence
from ._callbacks import (
    ConvergenceMonitor,
    ModuleGradientClipping,
    ProgressLogger,
    ValidationScore,
)
from ._net import SequenceNeuralNet, make_sequence_net

__all__ = ["OPTIMIZERS", "callback_chain", "check_callbacks", "make_estimator_net"]

#: The ``optimizer`` choices of the estimators: torch class and settings
OPTIMIZERS = {
    "adam": (torch.optim.Adam, {}),
    "adamw": (torch.optim.AdamW, {}),
    # scikit-learn's MLP defaults for SGD
    "sgd": (torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
    "rmsprop": (torch.optim.RMSprop, {}),
}


def _callback_object(entry):
    return entry[1] if isinstance(entry, tuple) else entry


def callback_chain(
    *,
    problem: str,
    per_step: bool,
    validation: bool,
    gradient_clipping: float | None,
    model_callbacks=(),
    user_callbacks=None,
    verbose=False,
    plugin_callbacks=(),
    stopping: ConvergenceMonitor | None = None,
) -> list:
    """The callbacks of an estimator's net, in order.

    Parameters
    ----------
    problem : str
        Kind of target (of the validation score).
    per_step : bool
        Targets with a time axis.
    validation : bool
        Whether a validation set is scored after every epoch.
    gradient_clipping : float or None
        Maximum gradient norm (None: no clipping).
    model_callbacks : sequence of (name, callback), default=()
        The model's own callbacks (e.g. the anchor to a pretrained start),
        run before the user's.
    user_callbacks : list or None, default=None
        The ``callbacks`` parameter, deep-copied.
    verbose : bool, default=False
        Print one line per epoch.
    plugin_callbacks : sequence of (name, callback), default=()
        The plug-ins' callbacks (a growth schedule), placed before the
        stopping rule.
    stopping : ConvergenceMonitor or None, default=None
        The stopping rule, last; None (``partial_fit``: one pass) leaves out
        the divergence guard, the plug-ins and the stopping rule.

    Returns
    -------
    list
        Callbacks and ``(name, callback)`` pairs for :func:`make_sequence_net`.

    Examples
    --------
    >>> from sklmn._training._chain import callback_chain
    >>> chain = callback_chain(problem="multiclass", per_step=False,
    ...                        validation=True, gradient_clipping=1.0)
    >>> [name for name, _ in chain]
    ['valid_score', 'gradient_clipping']
    """
    callbacks = []
    if validation:
        callbacks.append(("valid_score", ValidationScore(problem, per_step)))
    if gradient_clipping is not None:
        callbacks.append(
            ("gradient_clipping", ModuleGradientClipping(gradient_clipping))
        )
    callbacks.extend(model_callbacks)
    user = copy_callbacks(user_callbacks)
    callbacks.extend(user)
    if verbose:
        callbacks.append(("progress", ProgressLogger(sink=print)))
    if stopping is not None:
        if not any(
            isinstance(_callback_object(cb), RestoreOnDivergence) for cb in callbacks
        ):
            # a divergence ends fit with the best weights and a warning
            callbacks.append(("restore_on_divergence", RestoreOnDivergence("best")))
        callbacks.extend(plugin_callbacks)
        callbacks.append(("convergence", stopping))
    _check_user_names(callbacks, user)
    return callbacks


def _check_user_names(chain: list, user: list) -> None:
    """Refuse a callback of ``user`` named like one of the others in
    ``chain``, sklmn's own (skorch would report a duplicate name the user
    never gave twice)."""
    mine = {id(entry) for entry in user}
    reserved = {
        entry[0]
        for entry in chain
        if isinstance(entry, tuple) and id(entry) not in mine
    }
    for entry in user:
        if isinstance(entry, tuple) and entry[0] in reserved:
            raise ValueError(
                f"callbacks: the name {entry[0]!r} is taken by one of the "
                f"estimator's own callbacks ({', '.join(sorted(reserved))}); "
                "give this callback another name"
            )


def make_estimator_net(
    module,
    callbacks: list,
    *,
    problem: str,
    per_step: bool,
    optimizer: str,
    lr: float,
    alpha: float,
    max_iter: int,
    batch_size: int,
    valid_dataset=None,
    device="cpu",
    shuffle_seed: int = 0,
    bucket_by_length: bool = False,
    param_groups: list | None = None,
) -> SequenceNeuralNet:
    """The net of an estimator: :func:`make_sequence_net` with the
    estimators' conventions (``optimizer`` by name, the L2 penalty ``alpha``
    scaled as in scikit-learn's MLP and not applied to biases, evaluation in
    batches of at least 256). ``param_groups``: skorch's ``(name pattern,
    {option: value})`` pairs, e.g. a learning rate of their own for some
    parameters.

    Examples
    --------
    >>> from sklmn.nn import LMN
    >>> from sklmn.training import SequenceNet
    >>> from sklmn._training._chain import make_estimator_net
    >>> net = make_estimator_net(SequenceNet(LMN(2, 4, 4), 2), [],
    ...                          problem="multiclass", per_step=False,
    ...                          optimizer="adam", lr=1e-3, alpha=1e-4,
    ...                          max_iter=3, batch_size=8)
    >>> net.max_epochs, net.batch_size
    (3, 8)
    """
    optimizer_class, optimizer_kwargs = OPTIMIZERS[optimizer]
    if param_groups:
        optimizer_kwargs = {**optimizer_kwargs, "param_groups": list(param_groups)}
    return make_sequence_net(
        module,
        problem=problem,
        per_step=per_step,
        optimizer=optimizer_class,
        lr=lr,
        # scikit-learn's MLP adds 0.5 * alpha * ||W||^2 / batch_size to
        # each minibatch loss, whose gradient is (alpha / batch_size) * W
        weight_decay=alpha / batch_size,
        decay_biases=False,
        max_epochs=max_iter,
        batch_size=batch_size,
        valid_dataset=valid_dataset,
        valid_batch_size=max(batch_size, 256),
        callbacks=callbacks,
        device=str(device),
        shuffle_seed=shuffle_seed,
        bucket_by_length=bucket_by_length,
        **optimizer_kwargs,
    )


def _is_callback(callback) -> bool:
    """Whether skorch can set up ``callback``: a callback object or class
    (``initialize`` and ``set_params``, as every skorch ``Callback`` has)."""
    return all(
        callable(getattr(callback, method, None))
        for method in ("initialize", "set_params")
    )


def check_callbacks(callbacks) -> None:
    """Refuse an entry of the ``callbacks`` parameter that skorch cannot use.

    Every entry is a skorch callback (an instance, or a class skorch
    instantiates) or a ``(name, callback)`` pair with a string name (the
    callback may be None, which skorch skips).

    Raises
    ------
    TypeError
        Naming the entry and its position.

    Examples
    --------
    >>> from skorch.callbacks import EpochTimer
    >>> from sklmn._training._chain import check_callbacks
    >>> check_callbacks([EpochTimer(), ("timer", EpochTimer())])
    >>> check_callbacks(["timer"])
    Traceback (most recent call last):
    ...
    TypeError: callbacks[0] must be a skorch callback or a (name, callback) ...
    """
    for i, entry in enumerate(callbacks or []):
        if isinstance(entry, tuple | list):
            ok = (
                len(entry) == 2
                and isinstance(entry[0], str)
                and (entry[1] is None or _is_callback(entry[1]))
            )
        else:
            ok = _is_callback(entry)
        if not ok:
            raise TypeError(
                f"callbacks[{i}] must be a skorch callback or a (name, callback) "
                "pair with a string name (skorch.callbacks.Callback objects or "
                f"classes), got {entry!r} ({type(entry).__name__})."
            )


def copy_callbacks(callbacks) -> list:
    """Deep copies of the ``callbacks`` parameter (fit trains with copies,
    so that the parameter stays as given and repeated fits start alike);
    a ``[name, callback]`` list becomes a ``(name, callback)`` tuple.

    Raises
    ------
    TypeError
        Naming the callback that cannot be deep-copied, or an entry that is
        no callback (:func:`check_callbacks`).

    Examples
    --------
    >>> import threading
    >>> from skorch.callbacks import Callback, EpochTimer
    >>> from sklmn._training._chain import copy_callbacks
    >>> [name for name, _ in copy_callbacks([["timer", EpochTimer()]])]
    ['timer']
    >>> class Locked(Callback):
    ...     def __init__(self):
    ...         self.lock = threading.Lock()
    >>> copy_callbacks([("locked", Locked())])
    Traceback (most recent call last):
    ...
    TypeError: The callback 'locked' (Locked) cannot be deep-copied, ...
    """
    check_callbacks(callbacks)
    copies = []
    for i, entry in enumerate(callbacks or []):
        pair = isinstance(entry, tuple | list)
        name, callback = entry if pair else (None, entry)
        try:
            # a [name, callback] list as the (name, callback) pair skorch
            # reads it as, so that the chain sees its name and callback
            copies.append(tuple(copy.deepcopy(entry)) if pair else copy.deepcopy(entry))
        except Exception as exc:  # noqa: BLE001 - whatever deepcopy raises
            shown = repr(name) if name is not None else f"at index {i}"
            raise TypeError(
                f"The callback {shown} ({type(callback).__name__}) cannot be "
                "deep-copied, and fit trains with a deep copy of every callback "
                "(so that the callbacks parameter stays as given): "
                f"{type(exc).__name__}: {exc}. Keep unpicklable state (locks, "
                "open files) outside the callback, or create it in the "
                "callback's initialize()."
            ) from exc
    return copies
