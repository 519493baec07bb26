"""Shared helpers for the recurrent modules of :mod:`sklmn.nn`.

Every recurrent module follows the ``torch.nn.RNN(batch_first=True)`` call
convention ``output, state = module(x, lengths=None, state=None)``, and
``output, state, penalty = module(x, ..., return_penalty=True)`` returns the
regularization term of the forward pass with them. The parts of that protocol
that do not depend on the recurrence live here and beside this module:

- parameter and input validation with messages that name the bad value
  (``sklmn/nn/_checks.py``: ``check_positive_int``, ``check_input``...; and
  :func:`check_init_radius` here);
- lengths handling (``sklmn/nn/_padding.py``: ``mask_from_lengths``,
  ``zero_padded``, ``gather_last``, ``sort_by_length``,
  ``active_batch_sizes``, ``reverse_padded``);
- :class:`RecurrentModule`, the base class of the modules, and the penalty of
  a forward pass for both protocols (:func:`forward_with_penalty`);
- the stable initialization of a linear memory (:func:`memory_map_radius`,
  :func:`stabilize_memory_`) and the memory without feedback
  (:func:`add_feedback`).
"""

from __future__ import annotations

import inspect
import numbers
import warnings
import weakref

import torch
from torch import Tensor, nn

__all__ = [
    "RecurrentModule",
    "add_feedback",
    "check_feedback_output",
    "check_init_radius",
    "memory_map_radius",
    "stabilize_memory_",
]


#: Spectral radius of the linearized memory map that a freshly initialized
#: LMN or MS-LMN layer is scaled to (when it would exceed it); see
#: :func:`stabilize_memory_` and ``docs/training.md`` for the measurement.
DEFAULT_INIT_RADIUS = 0.95


# --------------------------------------------------------------------------- #
# Base class
# --------------------------------------------------------------------------- #
class RecurrentModule(nn.Module):
    """Base class of the recurrent modules of :mod:`sklmn.nn`.

    Subclasses set ``input_size`` and ``output_size`` and implement
    ``forward(x, lengths=None, state=None, *, return_penalty=False)`` and
    ``step(x_t, state=None)``. ``forward`` returns ``(output, state)``, or
    ``(output, state, penalty)`` with ``return_penalty=True``, where
    ``penalty`` is the differentiable scalar regularization term of that
    forward pass (added to the training loss). A subclass ends its
    ``forward`` with ``return self._forward_result(output, state, penalty,
    return_penalty)``, passing ``penalty=None`` when it has none (the helper
    returns a zero scalar on the module's device and dtype).

    :meth:`penalty` is deprecated: it returns the penalty of the most recent
    forward pass, which the modules record only for it (the record is never
    pickled or deep-copied).

    Examples
    --------
    >>> class Identity(RecurrentModule):
    ...     def __init__(self, size):
    ...         super().__init__()
    ...         self.input_size = self.output_size = size
    ...
    ...     def forward(self, x, lengths=None, state=None, *, return_penalty=False):
    ...         return self._forward_result(x, None, None, return_penalty)
    >>> out, state, penalty = Identity(3)(torch.ones(2, 4, 3), return_penalty=True)
    >>> penalty
    tensor(0.)
    """

    input_size: int
    output_size: int

    #: Attributes that are not part of the module's state: reset to None when
    #: the module is pickled or deep-copied (the recorded penalty is a
    #: non-leaf tensor tied to the last autograd graph).
    _transient_attributes: tuple[str, ...] = ("_last_penalty",)

    def __init__(self) -> None:
        super().__init__()
        # recorded for the deprecated penalty() only; never read by sklmn
        self._last_penalty: Tensor | None = None

    def _factory_kwargs(self) -> dict:
        """Device and dtype of the module's first floating parameter/buffer."""
        return module_factory_kwargs(self)

    def _zero_scalar(self) -> Tensor:
        """A zero scalar tensor on the module's device and dtype."""
        return torch.zeros((), **self._factory_kwargs())

    def _forward_result(
        self,
        output: Tensor,
        state: object,
        penalty: Tensor | None,
        return_penalty: bool,
    ) -> tuple:
        """What ``forward`` returns: ``(output, state)`` or ``(output, state,
        penalty)`` with ``return_penalty`` (``None``: a zero scalar).

        The penalty is also recorded for the deprecated :meth:`penalty`.
        """
        self._last_penalty = penalty
        if not return_penalty:
            return output, state
        if penalty is None:
            penalty = self._zero_scalar()
        return output, state, penalty

    def penalty(self) -> Tensor:
        """Regularization term computed during the most recent forward (deprecated).

        Deprecated: ``penalty()`` emits a :class:`FutureWarning` and will be
        removed in a future release; call ``forward(..., return_penalty=True)``,
        which returns the penalty of that forward pass as its third element.

        Returns
        -------
        penalty : Tensor
            Scalar tensor (differentiable w.r.t. the parameters); zero when no
            penalty is configured or no forward was run yet.
        """
        warnings.warn(
            f"{type(self).__name__}.penalty() is deprecated and will be removed "
            "in a future release; use forward(..., return_penalty=True), which "
            "returns the penalty of that forward pass, instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self._recorded_penalty()

    def _recorded_penalty(self) -> Tensor:
        """The penalty recorded by the last forward, or zero (no warning)."""
        penalty = self.__dict__.get("_last_penalty")
        return self._zero_scalar() if penalty is None else penalty

    def __getstate__(self) -> dict:
        # Transient attributes (the recorded penalty, tied to the last
        # autograd graph) are dropped so that pickling and copy.deepcopy work.
        return drop_transient_attributes(self, super().__getstate__())

    def step(self, x_t: Tensor, state: object = None) -> tuple[Tensor, object]:
        """One time step for streaming inference (implemented by subclasses)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement step(x_t, state)"
        )


def drop_transient_attributes(module: nn.Module, state: dict) -> dict:
    """``state`` (a module's ``__dict__``) with its transient attributes None."""
    names = getattr(module, "_transient_attributes", ())
    if not any(state.get(name) is not None for name in names):
        return state
    state = dict(state)
    for name in names:
        if name in state:
            state[name] = None
    return state


def module_factory_kwargs(module: nn.Module) -> dict:
    """Device and dtype of a module's first floating parameter/buffer."""
    for tensor in module.parameters():
        if tensor.is_floating_point():
            return {"device": tensor.device, "dtype": tensor.dtype}
    for tensor in module.buffers():
        if tensor.is_floating_point():
            return {"device": tensor.device, "dtype": tensor.dtype}
    return {"device": None, "dtype": torch.get_default_dtype()}


# --------------------------------------------------------------------------- #
# The penalty of a forward pass, for both protocols
# --------------------------------------------------------------------------- #
# forward functions -> whether they take ``return_penalty``
_RETURN_PENALTY_SUPPORT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def accepts_return_penalty(module: nn.Module) -> bool:
    """Whether ``module.forward`` takes the ``return_penalty`` keyword.

    Modules written against the protocol before ``return_penalty`` (a
    ``penalty()`` method read after the forward) do not. The answer is
    cached per ``forward`` function (inspected once).
    """
    forward = getattr(module, "forward", None)
    func = getattr(forward, "__func__", forward)
    if func is None:
        return False
    try:
        return _RETURN_PENALTY_SUPPORT[func]
    except (KeyError, TypeError):
        pass
    try:
        parameter = inspect.signature(func).parameters.get("return_penalty")
    except (TypeError, ValueError):
        parameter = None
    supported = parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
    try:
        _RETURN_PENALTY_SUPPORT[func] = supported
    except TypeError:  # not weak-referenceable: not cached
        pass
    return supported


def legacy_penalty(module: nn.Module) -> Tensor:
    """The penalty of a module following the protocol before ``return_penalty``.

    Its ``penalty()`` method, called after the forward pass (a zero scalar
    without one). A :class:`RecurrentModule` subclass that inherits the
    deprecated :meth:`RecurrentModule.penalty` and recorded no penalty gets a
    zero without the deprecation warning.
    """
    penalty = getattr(module, "penalty", None)
    if penalty is None:
        return torch.zeros((), **module_factory_kwargs(module))
    if (
        isinstance(module, RecurrentModule)
        and type(module).penalty is RecurrentModule.penalty
        and module.__dict__.get("_last_penalty") is None
    ):
        return module._zero_scalar()
    return penalty()


def forward_with_penalty(module: nn.Module, *args, **kwargs) -> tuple[object, Tensor]:
    """Call ``module`` and obtain the penalty of that forward pass.

    A module whose ``forward`` takes ``return_penalty`` is called with
    ``return_penalty=True`` and returns its usual result followed by the
    penalty; any other module is called as usual and its penalty read by
    :func:`legacy_penalty` after the call.

    Parameters
    ----------
    module : nn.Module
        A recurrent module (``(output, state)``) or a network
        (``outputs``).
    *args, **kwargs
        The arguments of the call.

    Returns
    -------
    result : object
        What ``module(*args, **kwargs)`` returns: ``(output, state)`` for a
        recurrent module, the outputs for a network.
    penalty : Tensor
        Scalar regularization term of that forward pass (zero without one).
    """
    if accepts_return_penalty(module):
        *result, penalty = module(*args, return_penalty=True, **kwargs)
        return (result[0] if len(result) == 1 else tuple(result)), penalty
    result = module(*args, **kwargs)
    return result, legacy_penalty(module)


# --------------------------------------------------------------------------- #
# Stable initialization of a linear memory
# --------------------------------------------------------------------------- #
def finite_eigvals(matrix: Tensor) -> Tensor:
    """``torch.linalg.eigvals(matrix)``, refusing a matrix with a NaN or
    infinite entry: LAPACK's balancing step crashes the whole process on a
    float32 matrix with a NaN (an infinite entry gives NaN eigenvalues).

    Raises
    ------
    torch.linalg.LinAlgError
        If ``matrix`` has a NaN or infinite entry (during training, the
        estimators report it as a divergence).

    Examples
    --------
    >>> finite_eigvals(torch.diag(torch.tensor([0.5, -0.2]))).real
    tensor([ 0.5000, -0.2000])
    """
    check_finite_matrix(matrix)
    return torch.linalg.eigvals(matrix)


def check_finite_matrix(matrix: Tensor) -> None:
    """Raise :class:`torch.linalg.LinAlgError` if ``matrix`` has a NaN or
    infinite entry (its eigenvalues are undefined); see
    :func:`finite_eigvals`."""
    if not bool(torch.isfinite(matrix).all()):
        raise torch.linalg.LinAlgError(
            "the matrix has a NaN or infinite entry: its eigenvalues are "
            "undefined (the weights diverged)"
        )


def memory_map_radius(weight_mm: Tensor, weight_hm: Tensor, weight_mh: Tensor) -> float:
    """Spectral radius of the linearized memory map ``W_mm + W_hm W_mh``.

    Around the zero state (where ``tanh' = 1``) one LMN step maps the memory
    as ``m_t ≈ (W_mm + W_hm W_mh) m_{t-1} + W_hm W_xh x_t``: with a radius
    above one the memory of a fresh network grows with ``t`` before training
    has started.

    Parameters
    ----------
    weight_mm : Tensor of shape (M, M)
        Effective memory recurrence (after any parametrization or mask).
    weight_hm : Tensor of shape (M, H)
        Hidden-to-memory weights.
    weight_mh : Tensor of shape (H, M)
        Memory-to-hidden weights.

    Returns
    -------
    radius : float
        ``max |eig(W_mm + W_hm W_mh)|``, computed in float64.

    Examples
    --------
    >>> W = torch.diag(torch.tensor([0.5, -0.2]))
    >>> memory_map_radius(W, torch.eye(2), 0.1 * torch.eye(2))
    0.6
    """
    with torch.no_grad():
        J = weight_mm.detach().double() + weight_hm.detach().double() @ (
            weight_mh.detach().double()
        )
        return round(float(finite_eigvals(J.cpu()).abs().max()), 12)


def add_feedback(module: nn.Module, weight: Tensor) -> None:
    """Register ``weight`` as the memory-to-hidden feedback ``weight_mh`` of
    ``module``: a parameter when ``module.feedback`` is true, a buffer of
    zeros (in the state dict under the same name, never trained) otherwise.

    Without feedback the linearized memory map ``W_mm + W_hm D W_mh`` is
    ``W_mm`` for every diagonal ``D``, so a memory matrix of spectral radius
    below one bounds the whole map (``docs/memory.md``, "The feedback
    bound").

    Parameters
    ----------
    module : nn.Module
        An LMN layer or multi-scale LMN with a boolean ``feedback``.
    weight : Tensor of shape (hidden_size, memory_size)
        The storage (its values are overwritten by the module's
        initialization; zeroed here without feedback).

    Examples
    --------
    >>> m = torch.nn.Module()
    >>> m.feedback = False
    >>> add_feedback(m, torch.ones(2, 3))
    >>> isinstance(m.weight_mh, torch.nn.Parameter), float(m.weight_mh.abs().sum())
    (False, 0.0)
    """
    if getattr(module, "feedback", True):
        module.weight_mh = nn.Parameter(weight)
    else:
        module.register_buffer("weight_mh", torch.zeros_like(weight))


def check_feedback_output(feedback: bool, output: str) -> None:
    """Raise a ValueError for a module without feedback whose output is its
    hidden sequence: its hidden units would never read the memory, so the
    output would carry no memory at all.

    Examples
    --------
    >>> check_feedback_output(False, "memory")
    >>> check_feedback_output(False, "hidden")
    Traceback (most recent call last):
    ...
    ValueError: feedback=False (an estimator's feedback='none') with ...
    """
    if not feedback and output == "hidden":
        raise ValueError(
            "feedback=False (an estimator's feedback='none') with "
            "output='hidden': the hidden units would never read the memory; "
            "use output='memory' or feedback=True ('free')"
        )


def check_init_radius(value: object) -> float | None:
    """Validate an ``init_radius`` argument: None or a float in ``(0, 1]``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"init_radius must be a float in (0, 1] or None, got {value!r}"
        )
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(
            f"init_radius must be a float in (0, 1] or None, got {value!r}"
        )
    return value


def stabilize_memory_(
    weight_mm: Tensor,
    weight_hm: Tensor,
    weight_mh: Tensor,
    radius: float,
) -> float:
    """Scale ``W_mm`` and ``W_mh`` in place so the memory map has radius ``radius``.

    When :func:`memory_map_radius` exceeds ``radius``, both ``W_mm`` and
    ``W_mh`` are multiplied by ``radius / rho``: the linearized map
    ``W_mm + W_hm W_mh`` is then scaled by exactly that factor, so its
    eigenvectors (the directions the memory keeps) are unchanged and its
    spectral radius becomes ``radius``. A map already inside the radius is
    left as it is.

    A ``memory_matrix='schur'`` module has no raw tensor to scale (its
    ``weight_mm`` is computed from the Schur parameters at every read, so
    scaling it changes nothing): the LMN and multi-scale LMN apply this
    function to their orthogonal draw only, which sets the factor of
    ``W_mh``, and start the Schur memory on its ring, of radius below one
    by construction (``docs/memory.md``).

    Parameters
    ----------
    weight_mm : Tensor of shape (M, M)
        The memory recurrence to scale in place (the raw tensor; entries that
        a mask zeroes stay zero).
    weight_hm : Tensor of shape (M, H)
        Hidden-to-memory weights (read only).
    weight_mh : Tensor of shape (H, M)
        Memory-to-hidden weights, scaled in place.
    radius : float
        Target spectral radius, in ``(0, 1]``.

    Returns
    -------
    radius : float
        Spectral radius of the map after scaling.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> W_mm = torch.nn.init.orthogonal_(torch.empty(8, 8))
    >>> W_hm, W_mh = torch.rand(8, 8) - 0.5, torch.rand(8, 8) - 0.5
    >>> memory_map_radius(W_mm, W_hm, W_mh) > 1
    True
    >>> stabilize_memory_(W_mm, W_hm, W_mh, 0.9)
    0.9
    """
    radius = float(radius)
    if not 0.0 < radius <= 1.0:
        raise ValueError(f"radius must be in (0, 1], got {radius!r}")
    rho = memory_map_radius(weight_mm, weight_hm, weight_mh)
    if rho > radius:
        with torch.no_grad():
            weight_mm.mul_(radius / rho)
            weight_mh.mul_(radius / rho)
        rho = memory_map_radius(weight_mm, weight_hm, weight_mh)
    return rho
