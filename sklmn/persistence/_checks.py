"""The checks of :func:`~sklmn.persistence.load`: the manifest scanned before
it is parsed, parameters and fitted values checked once read, and the
allocation budget of a network's reconstruction."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from ..utils._compat import TorchDispatchMode, tree_flatten
from ..utils._tags import _SequenceInputTagsMixin
from ._format import (
    _KINDS,
    _MANIFEST,
    _MAX_DEPTH,
    ModelFileError,
    _first_nonfinite,
    _is_int,
)

# sizes of a network are bounded by the number of saved weights, or this
_MIN_SIZE_LIMIT = 1024
# rebuilding a network may allocate this many times the saved weights (plus a
# constant) and run this many tensor operations per saved tensor, plus one
# per saved weight, plus a constant: most of sklmn's networks take at most ~30
# operations per tensor, but a Schur memory's ring start runs a few dozen per
# memory unit (about 33 M for M units, whose matrix alone has M^2 weights)
_BUDGET_FACTOR = 256
_BUDGET_ELEMENTS = 2**22
_OPS_FACTOR = 64
_BUDGET_OPS = 1024


class _BudgetExceeded(Exception):
    """The rebuilt network outgrows what the saved weights describe."""


class _AllocationBudget(TorchDispatchMode):
    """Stop a module's construction once it allocates more tensor elements, or
    runs more tensor operations, than allowed.

    Each operation is checked before it runs when its arguments name a size
    (``empty``, ``zeros``, ``eye``...), and every result is counted after.
    """

    def __init__(self, elements: int, ops: int) -> None:
        super().__init__()
        self.elements = elements
        self.ops = ops

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops -= 1
        if self.ops < 0 or _requested_elements(func, args) > self.elements:
            raise _BudgetExceeded
        out = func(*args, **kwargs)
        for leaf in tree_flatten(out)[0]:
            if isinstance(leaf, torch.Tensor):
                self.elements -= leaf.numel()
        if self.elements < 0:
            raise _BudgetExceeded
        return out


def _requested_elements(func, args) -> int:
    """Largest tensor size named by an operation's arguments."""
    name = getattr(func, "__name__", "")
    if name.startswith("eye"):
        ints = [a for a in args if isinstance(a, int)]
        if ints:
            return ints[0] * (ints[1] if len(ints) > 1 else ints[0])
    largest = 0
    for arg in args:
        if isinstance(arg, list | tuple) and all(isinstance(d, int) for d in arg):
            largest = max(largest, math.prod(arg))
    return largest



def _listed_attributes(cls: type) -> dict[str, str] | None:
    """Fitted attributes (name -> kind) listed by ``cls`` and its bases, or
    None when no class of the hierarchy lists them."""
    listed = None
    for klass in reversed(cls.__mro__):
        own = vars(klass).get("_fitted_attributes")
        if own is not None:
            listed = {**(listed or {}), **own}
    return listed


def _is_array_node(raw: Any) -> bool:
    return isinstance(raw, dict) and "__ndarray__" in raw


#: shapes of fitted arrays fixed by fitted integers (names, or tuples of names
#: whose product is the size); checked against each ``.npy`` header before
#: the member is inflated
_ARRAY_SHAPES: dict[str, tuple] = {
    "feature_names_in_": ("n_features_in_",),
    "input_mean_": ("n_features_in_",),
    "input_scale_": ("n_features_in_",),
    "expansion_centers_": ("input_expansion_", "n_features_in_"),
    "expansion_widths_": ("n_features_in_",),
    "expansion_mean_": ("input_expansion_", "n_features_in_"),
    "expansion_scale_": ("input_expansion_", "n_features_in_"),
    "target_mean_": ("n_outputs_",),
    "target_scale_": ("n_outputs_",),
    "mean_": ("n_features_in_",),
    "var_": ("n_features_in_",),
    "scale_": ("n_features_in_",),
    "A_": ("n_components_", "n_features_in_"),
    "B_": ("n_components_", "n_components_"),
    "singular_values_": ("n_components_",),
    "explained_variance_ratio_": ("n_components_",),
    "components_": ("n_components_", ("max_length_", "n_features_in_")),
}


def _expected_shape(est, key: str) -> tuple | None:
    """The shape the already-read integers of ``est`` fix for ``key``."""
    rule = _ARRAY_SHAPES.get(key)
    if rule is None:
        return None
    if (
        key == "feature_names_in_"
        and isinstance(est, _SequenceInputTagsMixin)
        and _is_int(getattr(est, "n_features_in_", None))
        and est.n_features_in_ == 1
    ):
        # the columns of a 2-D DataFrame of univariate sequences are its
        # time steps: as many names as steps, while n_features_in_ is 1
        return None
    shape = []
    for dim in rule:
        names = dim if isinstance(dim, tuple) else (dim,)
        values = [getattr(est, n, None) for n in names]
        if not all(_is_int(v) and v >= 0 for v in values):
            return None  # checked after loading, when the integers are known
        shape.append(math.prod(int(v) for v in values))
    return tuple(shape)


#: integer parameters bounded by the saved weights or not sizes at all
_UNBOUNDED_INT_PARAMETERS = {"random_state", "verbose"}
#: largest integer parameter (counts: iterations, beams, batch sizes...)
_MAX_COUNT = 2**31 - 1


def _check_parameters(cls: type, kwargs: dict, where: str) -> None:
    """Float parameters are finite and counts bounded (before construction)."""
    for key, value in kwargs.items():
        if isinstance(value, float | np.floating) and not math.isfinite(value):
            raise ModelFileError(
                f"Corrupt archive: {where}.{key} (parameter) is {value!r}, "
                "not a finite number"
            )
        if (
            _is_int(value)
            and key not in _UNBOUNDED_INT_PARAMETERS
            and not -_MAX_COUNT <= value <= _MAX_COUNT
        ):
            raise ModelFileError(
                f"Corrupt archive: {where}.{key} (parameter) = {value} is out of "
                "range"
            )


#: fitted attributes that may hold NaN or infinity by design (the losses and
#: scores of diverged or degenerate fits); files written by this version tag
#: the ones that do (``"nonfinite"``), older files are read by these names
_NAN_BY_DESIGN = frozenset(
    {
        "loss_curve_",
        "validation_loss_curve_",
        "validation_scores_",
        "best_loss_",
        "best_validation_score_",
        "readout_cv_score_",
        "readout_loo_r2_",
        "readout_alpha_",
        "linear_score_",
        "pooling_scores_",
        "C_scores_",
        "module_history_",
        "notes_",
        "history_",
        "_fitted_params",
    }
)
#: fitted statistics that must be positive
_POSITIVE = frozenset({"input_scale_", "target_scale_", "scale_"})
_NON_NEGATIVE = frozenset({"var_", "singular_values_", "explained_variance_ratio_"})



def _check_finite_attributes(est, attributes: dict, tagged, where: str) -> None:
    """Fitted floating values are finite (scales positive) unless NaN by
    design and tagged so by the file (or, in files written before the tags,
    named as such)."""
    allowed = _NAN_BY_DESIGN if tagged is None else _NAN_BY_DESIGN & set(tagged)
    for key, raw in attributes.items():
        value = getattr(est, key, None)
        shown = f"{where}.{key}"
        if _is_array_node(raw):
            shown += f" (member {raw['__ndarray__']!r:.100})"
        if key not in allowed:
            bad = _first_nonfinite(value)
            if bad is not None:
                raise ModelFileError(
                    f"Corrupt archive: {shown} holds the non-finite value "
                    f"{_shown_number(bad)}"
                )
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            flat = value.reshape(-1)
            if key in _POSITIVE and not (flat > 0).all():
                raise ModelFileError(
                    f"Corrupt archive: {shown} holds "
                    f"{_shown_number(flat[np.argmin(flat > 0)])}; scales must be "
                    "positive"
                )
            if key in _NON_NEGATIVE and not (flat >= 0).all():
                raise ModelFileError(
                    f"Corrupt archive: {shown} holds "
                    f"{_shown_number(flat[np.argmin(flat >= 0)])}; it must be "
                    "non-negative"
                )


def _shown_number(value) -> str:
    return str(complex(value) if np.iscomplexobj(value) else float(value))

def _check_sequence_estimator(est: BaseEstimator, *, has_net: bool) -> None:
    """The fitted attributes of an sklmn sequence estimator agree with each
    other and with its network (or it is unfitted)."""
    fitted = [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]
    if not has_net:
        if fitted:
            raise ModelFileError(
                f"Corrupt archive: {type(est).__name__} has fitted attributes "
                f"({fitted[0]}) but no network"
            )
        return
    missing = [
        name
        for name in ("_problem", "n_iter_", "loss_curve_", "_fitted_params")
        if not hasattr(est, name)
    ]
    if missing:
        raise ModelFileError(
            f"Corrupt archive: fitted attribute {missing[0]} is missing"
        )
    if est._problem not in ("multiclass", "multilabel", "continuous", "ctc"):
        raise ModelFileError(f"Corrupt archive: bad problem {est._problem!r:.100}")
    if (est._problem == "ctc") != (getattr(est, "target", None) == "ctc"):
        raise ModelFileError("Corrupt archive: target and problem disagree")
    n_in, n_out = int(est.n_features_in_), int(est.n_outputs_)
    if hasattr(est, "classes_"):
        # a CTC network has one more output than classes: the blank
        n_classes = n_out - 1 if est._problem == "ctc" else n_out
        if est._problem == "continuous" or est.classes_.shape != (n_classes,):
            raise ModelFileError("Corrupt archive: classes_ do not match the network")
    elif est._problem != "continuous" or not hasattr(est, "_has_output_axis"):
        raise ModelFileError("Corrupt archive: a regressor's attributes are missing")
    for name, size in (
        ("input_mean_", n_in),
        ("input_scale_", n_in),
        ("target_mean_", n_out),
        ("target_scale_", n_out),
    ):
        value = getattr(est, name, None)
        if value is not None and (value.shape != (size,) or value.dtype.kind != "f"):
            raise ModelFileError(f"Corrupt archive: {name} does not match the network")


def _check_shape(est, name: str, shape: tuple, optional: bool = False) -> None:
    value = getattr(est, name, None)
    if value is None and optional:
        return
    if (
        not isinstance(value, np.ndarray)
        or value.shape != shape
        or value.dtype.kind != "f"
    ):
        raise ModelFileError(
            f"Corrupt archive: {type(est).__name__}.{name} must be a float array "
            f"of shape {shape}"
        )


def _check_laes(est: BaseEstimator) -> None:
    """The fitted attributes of a LAES transformer agree with each other."""
    sizes = {}
    for name in ("n_features_in_", "n_components_", "max_length_"):
        value = getattr(est, name, None)
        if not _is_int(value) or value < (0 if name == "n_components_" else 1):
            raise ModelFileError(f"Corrupt archive: bad {name} {value!r:.100}")
        sizes[name] = int(value)
    a, p, L = sizes["n_features_in_"], sizes["n_components_"], sizes["max_length_"]
    _check_shape(est, "A_", (p, a))
    _check_shape(est, "B_", (p, p))
    _check_shape(est, "mean_", (a,))
    _check_shape(est, "components_", (p, L * a))
    _check_shape(est, "singular_values_", (p,))
    _check_shape(est, "explained_variance_ratio_", (p,))
    state = getattr(est, "_gram_state", None)
    if state is not None:
        keys = {"origin", "n_lags", "gram", "sum", "s1", "count", "n_steps"}
        # "weight": the weighted number of steps (absent in older archives)
        # "scale": the power of two X was divided by (absent: 1)
        optional = {"weight", "scale"}
        if not isinstance(state, dict) or not keys <= set(state) <= keys | optional:
            raise ModelFileError("Corrupt archive: bad _gram_state")
        for name in ("weight", "scale"):
            value = state.get(name, 1.0)
            if not _KINDS["float"](value) or not np.isfinite(value):
                raise ModelFileError(
                    f"Corrupt archive: bad _gram_state[{name!r}] {value!r:.100}"
                )
        if not state.get("scale", 1.0) > 0:
            raise ModelFileError("Corrupt archive: bad _gram_state['scale']")
        lags = state["n_lags"]
        if not _is_int(lags) or lags < 0:
            raise ModelFileError("Corrupt archive: bad _gram_state")
        holder = type("_State", (), state)
        _check_shape(holder, "origin", (a,))
        _check_shape(holder, "sum", (a,))
        _check_shape(holder, "gram", (lags, a, lags, a), optional=True)
        _check_shape(holder, "s1", (lags, lags, a), optional=True)
        _check_shape(holder, "count", (lags, lags), optional=True)

def _reject_constant(name: str):
    raise ModelFileError(f"Corrupt archive: JSON constant {name} in the manifest")


#: most bytes the manifest may hold, and most bytes its parse may allocate
_MAX_MANIFEST_BYTES = 64 << 20
_MAX_MANIFEST_COST = 256 << 20
_MIN_MANIFEST_COST = 1 << 20
#: deepest nesting of JSON containers in the manifest (an estimator node
#: nests a few levels per nested estimator, a value one per level)
_MAX_JSON_DEPTH = 4 * _MAX_DEPTH
_JSON_TOKEN = re.compile(rb'["{}\[\],:]')
# an upper bound of the memory each JSON token costs once parsed (objects,
# their slots in the containers holding them, dict entries)
_TOKEN_COST = {
    ord("{"): 256,
    ord("["): 96,
    ord(","): 48,
    ord(":"): 64,
}


def _check_manifest(data: bytes, budget: int) -> None:
    """Refuse a manifest whose parse would nest deeper than
    ``_MAX_JSON_DEPTH`` or allocate more than ``budget`` bytes, by a
    scan that allocates nothing per token; stops at the first excess."""
    cost, depth, pos = len(data), 0, 0
    search = _JSON_TOKEN.search
    while True:
        match = search(data, pos)
        if match is None:
            break
        start = match.start()
        char = data[start]
        if char == 34:  # '"': skip to the closing quote
            end = start + 1
            while True:
                end = data.find(b'"', end)
                if end < 0:
                    raise ModelFileError(
                        f"{_MANIFEST} is not valid JSON (unterminated string)"
                    )
                back = end - 1
                while data[back] == 92:  # backslashes escaping the quote
                    back -= 1
                if (end - 1 - back) % 2 == 0:
                    break
                end += 1
            cost += 96 + 4 * (end - start)  # a str of up to 4 bytes a char
            pos = end + 1
        else:
            if char in (123, 91):
                depth += 1
                if depth > _MAX_JSON_DEPTH:
                    raise ModelFileError(
                        f"{_MANIFEST} nests JSON values deeper than "
                        f"{_MAX_JSON_DEPTH} levels"
                    )
            elif char in (125, 93):
                depth -= 1
            cost += _TOKEN_COST.get(char, 0)
            pos = start + 1
        if cost > budget:
            raise ModelFileError(
                f"{_MANIFEST} holds more JSON values than a model file needs "
                f"(parsing it would take more than {budget} bytes at offset "
                f"{start}; pass a larger max_bytes for files you trust)"
            )

