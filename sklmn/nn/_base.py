"""Shared helpers for the recurrent modules of :mod:`sklmn.nn`.

Every recurrent module follows the ``torch.nn.RNN(batch_first=True)`` call
convention ``output, state = module(x, lengths=None, state=None)``, and
``output, state, penalty = module(x, ..., return_penalty=True)`` returns the
regularization term of the forward pass with them. The helpers
here implement the parts of that protocol that do not depend on the recurrence:

- parameter validation with messages that name the bad value
  (:func:`check_positive_int`, :func:`check_nonnegative_float`,
  :func:`check_dropout`, :func:`check_choice`, :func:`check_bool`,
  :func:`check_init_radius`);
- input validation (:func:`check_input`, :func:`check_step_input`);
- lengths handling: masks (:func:`mask_from_lengths`), zeroing padded outputs
  (:func:`zero_padded`), gathering the last valid step (:func:`gather_last`),
  sorting a batch by decreasing length (:func:`sort_by_length`,
  :func:`active_batch_sizes`) and reversing only the valid part of each
  sequence (:func:`reverse_padded`);
- :class:`RecurrentModule`, the base class of the modules, and the penalty of
  a forward pass for both protocols (:func:`forward_with_penalty`);
- the stable initialization of a linear memory (:func:`memory_map_radius`,
  :func:`stabilize_memory_`).

Conventions: ``x`` is ``(N, T, d)`` (batch first); ``lengths`` is an int64
tensor ``(N,)`` with values in ``1..T``; time step ``t`` of sequence ``n`` is
valid when ``t < lengths[n]``.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
import weakref
from collections.abc import Sequence

import torch
from torch import Tensor, nn

__all__ = [
    "RecurrentModule",
    "active_batch_sizes",
    "check_bool",
    "check_choice",
    "check_dropout",
    "check_init_radius",
    "check_input",
    "check_nonnegative_float",
    "check_positive_int",
    "check_step_input",
    "gather_last",
    "mask_from_lengths",
    "memory_map_radius",
    "reverse_padded",
    "sort_by_length",
    "stabilize_memory_",
    "zero_padded",
]


#: Spectral radius of the linearized memory map that a freshly initialized
#: LMN or MS-LMN layer is scaled to (when it would exceed it); see
#: :func:`stabilize_memory_` and ``docs/training.md`` for the measurement.
DEFAULT_INIT_RADIUS = 0.95


# --------------------------------------------------------------------------- #
# Parameter validation
# --------------------------------------------------------------------------- #
def check_positive_int(name: str, value: object) -> int:
    """Validate that ``value`` is a positive integer (bools are rejected).

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer >= 1.

    Examples
    --------
    >>> check_positive_int("hidden_size", 3)
    3
    >>> check_positive_int("hidden_size", 0)
    Traceback (most recent call last):
    ...
    ValueError: hidden_size must be a positive int, got 0
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or int(value) < 1
    ):
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_nonnegative_float(name: str, value: object) -> float:
    """Validate that ``value`` is a finite real number >= 0.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : float
        ``value`` as a Python float.

    Raises
    ------
    ValueError
        If ``value`` is not a finite non-negative real number.

    Examples
    --------
    >>> check_nonnegative_float("norm_penalty", 1)
    1.0
    >>> check_nonnegative_float("norm_penalty", -0.5)
    Traceback (most recent call last):
    ...
    ValueError: norm_penalty must be a finite float >= 0, got -0.5
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (0.0 <= float(value) < float("inf"))
    ):
        raise ValueError(f"{name} must be a finite float >= 0, got {value!r}")
    return float(value)


def check_dropout(name: str, value: object) -> float:
    """Validate a dropout probability in ``[0, 1)``.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : float
        ``value`` as a Python float.

    Raises
    ------
    ValueError
        If ``value`` is not a real number in ``[0, 1)``.

    Examples
    --------
    >>> check_dropout("dropout", 0.25)
    0.25
    >>> check_dropout("dropout", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: dropout must be a float in [0, 1), got 1.0
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (0.0 <= float(value) < 1.0)
    ):
        raise ValueError(f"{name} must be a float in [0, 1), got {value!r}")
    return float(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """Validate that ``value`` is one of ``choices``.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.
    choices : sequence of str
        Allowed values.

    Returns
    -------
    value : str
        The validated value.

    Raises
    ------
    ValueError
        If ``value`` is not in ``choices``.

    Examples
    --------
    >>> check_choice("output", "memory", ("memory", "hidden"))
    'memory'
    >>> check_choice("output", "state", ("memory", "hidden"))
    Traceback (most recent call last):
    ...
    ValueError: output must be one of ('memory', 'hidden'), got 'state'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)!r}, got {value!r}")
    return value


def check_bool(name: str, value: object) -> bool:
    """Validate that ``value`` is a bool.

    Parameters
    ----------
    name : str
        Name of the parameter, used in the error message.
    value : object
        Value to check.

    Returns
    -------
    value : bool
        The validated value.

    Raises
    ------
    ValueError
        If ``value`` is not a bool.

    Examples
    --------
    >>> check_bool("bidirectional", True)
    True
    >>> check_bool("bidirectional", "yes")
    Traceback (most recent call last):
    ...
    ValueError: bidirectional must be a bool, got 'yes'
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return value


# --------------------------------------------------------------------------- #
# Input validation
# --------------------------------------------------------------------------- #
def check_input(
    x: Tensor, lengths: Tensor | Sequence[int] | None, input_size: int | None = None
) -> tuple[Tensor | None, int]:
    """Validate a batch-first input and its lengths.

    Parameters
    ----------
    x : Tensor of shape (N, T, input_size)
        Batch-first floating point input.
    lengths : Tensor or sequence of int of shape (N,), or None
        Valid length of every sequence, values in ``1..T``. ``None`` means
        every sequence has length ``T``.
    input_size : int, optional
        Expected size of the last dimension of ``x``.

    Returns
    -------
    lengths : Tensor of shape (N,) or None
        int64 lengths on the CPU, or ``None`` when ``lengths`` is ``None`` or
        every length equals ``T`` (fast path: no masking needed).
    T : int
        Number of time steps.

    Raises
    ------
    ValueError
        On wrong dimensions, sizes, dtypes or out-of-range lengths.

    Examples
    --------
    >>> x = torch.zeros(2, 5, 3)
    >>> check_input(x, [5, 2], input_size=3)
    (tensor([5, 2]), 5)
    >>> check_input(x, None)
    (None, 5)
    >>> check_input(x, [5, 5])
    (None, 5)
    """
    if not isinstance(x, Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (N, T, input_size), got {tuple(x.shape)} "
            f"({x.dim()} dimensions)"
        )
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating point tensor, got dtype {x.dtype}")
    n, t = x.shape[0], x.shape[1]
    if input_size is not None and x.shape[2] != input_size:
        raise ValueError(
            f"x has {x.shape[2]} features per time step, expected "
            f"input_size={input_size}"
        )
    if t < 1:
        raise ValueError(f"x must have at least one time step, got T={t}")
    if lengths is None:
        return None, t
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise ValueError(f"lengths must be integers, got dtype {lengths.dtype}")
        lengths = lengths.detach().to(device="cpu", dtype=torch.int64)
    else:
        lengths = torch.as_tensor(list(lengths), dtype=torch.int64)
    if lengths.shape != (n,):
        raise ValueError(
            f"lengths must have shape ({n},) to match x, got {tuple(lengths.shape)}"
        )
    if n > 0:
        lo, hi = int(lengths.min()), int(lengths.max())
        if lo < 1 or hi > t:
            raise ValueError(
                f"lengths must be in 1..{t} (T of x), got values in {lo}..{hi}"
            )
        if lo == t:
            return None, t
    return lengths, t


def check_step_input(x_t: Tensor, input_size: int) -> None:
    """Validate one time step ``x_t`` of shape ``(N, input_size)``.

    Parameters
    ----------
    x_t : Tensor of shape (N, input_size)
        Input at one time step.
    input_size : int
        Expected number of features.

    Raises
    ------
    ValueError
        If ``x_t`` has the wrong shape or is not floating point.

    Examples
    --------
    >>> check_step_input(torch.zeros(4, 3), 3)
    >>> check_step_input(torch.zeros(4, 2, 3), 3)
    Traceback (most recent call last):
    ...
    ValueError: x_t must have shape (N, 3), got (4, 2, 3)
    """
    if not isinstance(x_t, Tensor):
        raise ValueError(f"x_t must be a torch.Tensor, got {type(x_t).__name__}")
    if x_t.dim() != 2 or x_t.shape[1] != input_size:
        raise ValueError(
            f"x_t must have shape (N, {input_size}), got {tuple(x_t.shape)}"
        )
    if not x_t.is_floating_point():
        raise ValueError(f"x_t must be a floating point tensor, got {x_t.dtype}")


# --------------------------------------------------------------------------- #
# Lengths and masks
# --------------------------------------------------------------------------- #
def mask_from_lengths(
    lengths: Tensor, T: int, device: torch.device | str | None = None
) -> Tensor:
    """Boolean mask of valid steps, ``mask[n, t] = t < lengths[n]``.

    Parameters
    ----------
    lengths : Tensor of shape (N,)
        Integer lengths.
    T : int
        Number of time steps.
    device : torch.device or str, optional
        Device of the result (default: the device of ``lengths``).

    Returns
    -------
    mask : Tensor of shape (N, T), dtype bool

    Examples
    --------
    >>> mask_from_lengths(torch.tensor([3, 1]), 4)
    tensor([[ True,  True,  True, False],
            [ True, False, False, False]])
    """
    device = lengths.device if device is None else device
    steps = torch.arange(T, device=device)
    return steps.unsqueeze(0) < lengths.to(device).unsqueeze(1)


def zero_padded(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Return ``output`` with padded time steps set to exactly zero.

    Out of place (autograd friendly); returns ``output`` itself when
    ``lengths`` is ``None``.

    Parameters
    ----------
    output : Tensor of shape (N, T, ...)
        Batch-first sequence output.
    lengths : Tensor of shape (N,) or None
        Valid lengths.

    Returns
    -------
    output : Tensor of shape (N, T, ...)

    Examples
    --------
    >>> zero_padded(torch.ones(2, 3, 1), torch.tensor([3, 1]))[..., 0]
    tensor([[1., 1., 1.],
            [1., 0., 0.]])
    """
    if lengths is None:
        return output
    mask = mask_from_lengths(lengths, output.shape[1], device=output.device)
    mask = mask.reshape(mask.shape + (1,) * (output.dim() - 2))
    return output.masked_fill(~mask, 0.0)


def gather_last(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Output at each sequence's last valid step.

    Parameters
    ----------
    output : Tensor of shape (N, T, ...)
        Batch-first sequence output.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: the last step ``T - 1``).

    Returns
    -------
    last : Tensor of shape (N, ...)

    Examples
    --------
    >>> out = torch.arange(6.0).reshape(2, 3, 1)
    >>> gather_last(out, torch.tensor([3, 1]))
    tensor([[2.],
            [3.]])
    """
    if lengths is None:
        return output[:, -1]
    idx = (lengths.to(output.device) - 1).clamp(min=0)
    return output[torch.arange(output.shape[0], device=output.device), idx]


def sort_by_length(lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Sort a batch by decreasing length (stable).

    After sorting, the sequences still running at step ``t`` form a prefix of
    the batch (as in packed sequences), so a recurrence only needs to update
    ``state[:active_batch_sizes(...)[t]]``.

    Parameters
    ----------
    lengths : Tensor of shape (N,)
        Integer lengths.

    Returns
    -------
    sorted_lengths : Tensor of shape (N,)
        Lengths in decreasing order.
    order : Tensor of shape (N,)
        Permutation with ``sorted = x[order]``.
    inverse : Tensor of shape (N,)
        Inverse permutation with ``x = sorted[inverse]``.

    Examples
    --------
    >>> sorted_lengths, order, inverse = sort_by_length(torch.tensor([2, 5, 3]))
    >>> sorted_lengths, order, inverse
    (tensor([5, 3, 2]), tensor([1, 2, 0]), tensor([2, 0, 1]))
    """
    sorted_lengths, order = torch.sort(lengths, descending=True, stable=True)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel(), device=order.device)
    return sorted_lengths, order, inverse


def active_batch_sizes(sorted_lengths: Tensor, T: int) -> list[int]:
    """Number of sequences still running at each step, for sorted lengths.

    Parameters
    ----------
    sorted_lengths : Tensor of shape (N,)
        Lengths in decreasing order (see :func:`sort_by_length`).
    T : int
        Number of time steps.

    Returns
    -------
    sizes : list of int of length T
        ``sizes[t] = #{n : lengths[n] > t}``; the active sequences at step
        ``t`` are ``0 .. sizes[t] - 1``.

    Examples
    --------
    >>> active_batch_sizes(torch.tensor([4, 2, 2]), 4)
    [3, 3, 1, 1]
    """
    lengths = sorted_lengths.detach().cpu()
    steps = torch.arange(T)
    return (lengths.unsqueeze(0) > steps.unsqueeze(1)).sum(dim=1).tolist()


def reverse_padded(x: Tensor, lengths: Tensor | None) -> Tensor:
    """Reverse the valid part of each sequence in time, keeping padding last.

    ``out[n, t] = x[n, lengths[n] - 1 - t]`` for ``t < lengths[n]`` and
    ``out[n, t] = x[n, t]`` on padded steps. The operation is its own inverse,
    which is what a bidirectional recurrence needs: reverse the input, run
    the forward recurrence, reverse its output.

    Parameters
    ----------
    x : Tensor of shape (N, T, ...)
        Batch-first sequences.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: plain flip of the time axis).

    Returns
    -------
    out : Tensor of shape (N, T, ...)

    Examples
    --------
    >>> x = torch.arange(8.0).reshape(2, 4)
    >>> reverse_padded(x, torch.tensor([4, 2]))
    tensor([[3., 2., 1., 0.],
            [5., 4., 6., 7.]])
    """
    if lengths is None:
        return x.flip(1)
    n, t = x.shape[0], x.shape[1]
    steps = torch.arange(t, device=x.device).unsqueeze(0)
    lens = lengths.to(x.device).unsqueeze(1)
    idx = torch.where(steps < lens, lens - 1 - steps, steps)
    idx = idx.reshape((n, t) + (1,) * (x.dim() - 2)).expand_as(x)
    return torch.gather(x, 1, idx)


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
        return round(float(torch.linalg.eigvals(J.cpu()).abs().max()), 12)


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
