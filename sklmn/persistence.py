"""Safe saving and loading of fitted sklmn estimators.

``pickle``/``joblib`` round trips of sklmn estimators work, but unpickling a
file executes whatever code the file names: never unpickle a model from an
untrusted source. :func:`save` and :func:`load` use a format that loads
without executing code from the file:

* a zip archive holding ``manifest.json`` (format version, sklmn version and
  one JSON node per estimator: fully qualified class name, ``get_params()``
  and fitted attributes), numpy arrays as ``.npy`` files (read with
  ``allow_pickle=False``) and the torch weights of each trained network as a
  ``state_dict`` (read with ``torch.load(weights_only=True,
  map_location='cpu')``);
* on load, every class named in the manifest must be in an allow-list: the
  public estimators of :mod:`sklmn` (:data:`SAFE_CLASSES`, registered by
  their packages in :mod:`sklmn.utils._registry` when imported; this module
  imports none of them) plus the fully qualified names passed explicitly in
  ``trusted=``. Any other name raises :class:`UntrustedTypeError` before
  anything is imported;
* a sequence estimator describes and rebuilds its network through one hook
  pair (``_sklmn_state_()`` / ``_sklmn_restore_(state)``, see
  ``sklmn/estimators/_persist.py``): the torch module is rebuilt from the
  saved parameters and the saved weights are loaded into it, so no module
  code is read from the file;
* nothing is allocated before the sizes are checked: the manifest's size,
  and the nesting and number of its JSON values, before it is parsed; the
  uncompressed size of every member (``max_bytes`` of :func:`load` in all);
  every ``.npy`` header (dtype, itemsize, shape: the shape the model's
  integers fix, when they fix one) before the member is inflated; the sizes
  a network is rebuilt from against the saved weights. Only the fitted
  attributes a class lists (with their types) can be set, parameters and
  fitted values must be finite (scales positive) except the losses and
  scores that are NaN by design (tagged ``nonfinite`` by :func:`save`), and
  every failure raises :class:`ModelFileError`.

Only parameters and attributes made of JSON values (None, bool, int, float,
str), lists, tuples, dicts with string keys, numpy arrays of numbers, bools
or strings, numpy scalars, :class:`torch.device` and nested scikit-learn
estimators can be saved; anything else (callables, skorch callbacks, open
files) raises a :class:`TypeError` that names it.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import re
import warnings
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from ._version import __version__
from .utils._compat import TorchDispatchMode, tree_flatten
from .utils._registry import registered_safe_classes

__all__ = [
    "FORMAT_VERSION",
    "MAX_BYTES",
    "SAFE_CLASSES",
    "ModelFileError",
    "UntrustedTypeError",
    "load",
    "save",
]

#: Version of the archive layout written by :func:`save`.
FORMAT_VERSION = 1

_FORMAT_NAME = "sklmn-safe-estimator"
_MANIFEST = "manifest.json"


#: Default ``max_bytes`` of :func:`load`: the most bytes the archive members
#: it reads may hold uncompressed (1 GiB).
MAX_BYTES = 2**30

_MAX_MEMBERS = 100_000
_MAX_DEPTH = 64  # nesting of JSON values and estimators
# sizes of a network are bounded by the number of saved weights, or this
_MIN_SIZE_LIMIT = 1024
# rebuilding a network may allocate this many times the saved weights (plus a
# constant) and run this many tensor operations per saved tensor (plus a
# constant); building sklmn's networks takes at most ~30 of each
_BUDGET_FACTOR = 256
_BUDGET_ELEMENTS = 2**22
_OPS_FACTOR = 64
_BUDGET_OPS = 1024


class ModelFileError(ValueError):
    """A file cannot be loaded by :func:`load`: not an archive written by
    :func:`save`, corrupt, tampered with, or exceeding the loader's limits.

    Every failure of :func:`load` to read a file it could open raises this
    exception (or its subclass :class:`UntrustedTypeError`).

    Examples
    --------
    >>> from sklmn.persistence import ModelFileError
    >>> issubclass(ModelFileError, ValueError)
    True
    """


class UntrustedTypeError(ModelFileError):
    """A saved file names a class outside the allow-list of :func:`load`.

    Examples
    --------
    >>> from sklmn.persistence import ModelFileError, UntrustedTypeError
    >>> issubclass(UntrustedTypeError, ModelFileError)
    True
    """


#: Public names of the classes :func:`load` accepts without ``trusted=`` (the
#: estimators, transformers and pretrainers of sklmn, registered by their
#: packages when :mod:`sklmn` is imported).
SAFE_CLASSES: frozenset[str] = frozenset(registered_safe_classes())


def _qualified_name(obj: Any) -> str:
    """Public name of a registered sklmn class, else ``module.qualname``."""
    cls = type(obj)
    for name, public in registered_safe_classes().items():
        if public is cls:
            return name
    return f"{cls.__module__}.{cls.__qualname__}"


class _Writer:
    """Encode estimators into JSON nodes plus binary members of the archive."""

    def __init__(self, skip_unsupported: bool = False) -> None:
        self.members: dict[str, bytes] = {}
        self.skip_unsupported = skip_unsupported
        self.skipped: list[str] = []

    def _add(self, prefix: str, suffix: str, data: bytes) -> str:
        name = f"{prefix}/{len(self.members):04d}{suffix}"
        self.members[name] = data
        return name

    def array(self, arr: np.ndarray, where: str) -> dict:
        if arr.dtype.kind not in "biufcUS?" or arr.dtype.hasobject:
            raise TypeError(
                f"Cannot save {where}: numpy array of dtype {arr.dtype} (only "
                "numeric, bool and string arrays are stored without pickle)."
            )
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(arr), allow_pickle=False)
        return {"__ndarray__": self._add("arrays", ".npy", buffer.getvalue())}

    def value(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {"__float__": repr(value)}  # 'nan', 'inf', '-inf'
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                try:
                    value = value.astype(str if _all_str(value) else float)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"Cannot save {where}: numpy object array that holds "
                        "neither only strings nor only numbers."
                    ) from None
            return self.array(value, where)
        if isinstance(value, np.generic):
            return {"__npscalar__": self.array(np.asarray(value), where)["__ndarray__"]}
        if isinstance(value, torch.device):
            return {"__torch_device__": str(value)}
        if isinstance(value, list):
            return [self.value(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {
                "__tuple__": [
                    self.value(v, f"{where}[{i}]") for i, v in enumerate(value)
                ]
            }
        if isinstance(value, dict):
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                raise TypeError(
                    f"Cannot save {where}: dict key {bad[0]!r} is not a string."
                )
            return {
                "__dict__": {
                    k: self.value(v, f"{where}[{k!r}]") for k, v in value.items()
                }
            }
        if isinstance(value, BaseEstimator):
            return {"__estimator__": self.estimator(value, where)}
        raise TypeError(
            f"Cannot save {where}: object of type {type(value).__qualname__} has no "
            "safe representation (only JSON values, numpy arrays, torch devices "
            "and scikit-learn estimators are saved). Set it to None or to a "
            "serializable value before saving, or use pickle/joblib for trusted "
            "storage."
        )

    def estimator(self, est: BaseEstimator, where: str) -> dict:
        params = est.get_params(deep=False)
        node: dict[str, Any] = {
            "class": _qualified_name(est),
            "params": {
                k: self.value(v, f"{where}.{k} (parameter)") for k, v in params.items()
            },
        }
        attributes, net, nonfinite = {}, None, []
        for key, value in vars(est).items():
            if key in params:
                continue
            if key == "net_":
                net = self.net(est, where)
                continue
            if "." in where and isinstance(value, torch.nn.Module):
                # a nested estimator's diagnostic network (the trained
                # unrolled RNN of a fitted UnrolledPretrainer): not needed
                # to predict, and modules are stored only as ``net_``
                continue
            try:
                attributes[key] = self.value(value, f"{where}.{key}")
            except TypeError:
                if not self.skip_unsupported:
                    raise
                self.skipped.append(f"{where}.{key}")
                continue
            if _first_nonfinite(value) is not None:
                nonfinite.append(key)  # NaN by design (a diverged epoch...)
        node["attributes"] = attributes
        node["net"] = net
        node["nonfinite"] = nonfinite
        return node

    def net(self, est: BaseEstimator, where: str) -> dict:
        if not hasattr(est, "_sklmn_state_"):
            raise TypeError(
                f"Cannot save {where}.net_: {type(est).__name__} does not "
                "describe its network (no _sklmn_state_ hook)."
            )
        state = est._sklmn_state_()
        buffer = io.BytesIO()
        torch.save(state["weights"], buffer)
        return {
            "state_dict": self._add("weights", ".pt", buffer.getvalue()),
            "device": state.get("device", "cpu"),
            # modules grown during training (incremental multi-scale LMN)
            "n_modules": state.get("n_modules"),
        }


def _all_str(arr: np.ndarray) -> bool:
    return all(isinstance(v, str) for v in arr.ravel())


def save(
    estimator: BaseEstimator,
    path: str | os.PathLike,
    *,
    skip_unsupported: bool = False,
) -> None:
    """Save an estimator to a zip archive that loads without executing code.

    The archive holds JSON (class names, parameters, scalar attributes),
    ``.npy`` arrays and torch ``state_dict`` files; see the module docstring.
    Unfitted estimators are saved too (parameters only).

    Parameters
    ----------
    estimator : estimator instance
        An sklmn estimator (or any scikit-learn estimator whose class the
        loader will trust) whose parameters and fitted attributes are made of
        JSON values, numpy arrays, torch devices and nested estimators.
    path : str or path-like
        File to write (overwritten).
    skip_unsupported : bool, default=False
        Leave out (with a :class:`UserWarning` naming them) the fitted
        attributes that cannot be stored safely instead of raising.
        Parameters are never left out, and the network ``net_`` is always
        saved. The torch modules that nested estimators keep for diagnosis
        (the ``urnn_net_`` of a fitted
        :class:`~sklmn.pretraining.UnrolledPretrainer`) are always left out:
        they are not needed to predict.

    Raises
    ------
    TypeError
        If a parameter or attribute cannot be stored safely (for example
        ``callbacks=[...]`` with skorch callbacks); the message names it.

    See Also
    --------
    load : Read the archive back.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklmn.laes import LAESTransformer
    >>> from sklmn.persistence import load, save
    >>> X = np.random.RandomState(0).randn(5, 6, 2)
    >>> laes = LAESTransformer(n_components=3).fit(X)
    >>> path = os.path.join(tempfile.mkdtemp(), "laes.sklmn")
    >>> save(laes, path)
    >>> bool(np.array_equal(load(path).transform(X), laes.transform(X)))
    True
    """
    if not isinstance(estimator, BaseEstimator):
        raise TypeError(
            f"save expects a scikit-learn estimator, got "
            f"{type(estimator).__name__}: {estimator!r}"
        )
    writer = _Writer(skip_unsupported=bool(skip_unsupported))
    node = writer.estimator(estimator, type(estimator).__name__)
    if writer.skipped:
        warnings.warn(
            "sklmn.persistence.save left out attributes that cannot be stored "
            f"safely: {', '.join(writer.skipped)}",
            UserWarning,
            stacklevel=2,
        )
    manifest = {
        "format": _FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "sklmn_version": __version__,
        "torch_version": torch.__version__,
        "estimator": node,
    }
    with zipfile.ZipFile(os.fspath(path), "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_MANIFEST, json.dumps(manifest, indent=1, allow_nan=False))
        for name, data in writer.members.items():
            archive.writestr(name, data)


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


_KINDS = {
    "int": _is_int,
    "float": lambda v: (
        isinstance(v, int | float | np.integer | np.floating)
        and not isinstance(v, bool | np.bool_)
    ),
    "bool": lambda v: isinstance(v, bool | np.bool_),
    "str": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, np.ndarray),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "estimator": lambda v: isinstance(v, BaseEstimator),
}

_NODE_KEYS = {"class", "params", "attributes", "net", "nonfinite"}
_NET_KEYS = {"state_dict", "device", "n_modules"}
_FITTED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*_")


def _listed_attributes(cls: type) -> dict[str, str] | None:
    """Fitted attributes (name -> kind) listed by ``cls`` and its bases, or
    None when no class of the hierarchy lists them."""
    listed = None
    for klass in reversed(cls.__mro__):
        own = vars(klass).get("_fitted_attributes")
        if own is not None:
            listed = {**(listed or {}), **own}
    return listed


class _Reader:
    """Decode the JSON nodes of an archive, checking every class name, every
    size and type, and the size of every member before reading it."""

    def __init__(
        self, archive: zipfile.ZipFile, allowed: set[str], max_bytes: int
    ) -> None:
        self.archive = archive
        self.allowed = allowed
        self.budget = max_bytes
        self.max_bytes = max_bytes

    def info(self, name: Any) -> zipfile.ZipInfo:
        """The entry of member ``name``, its declared size within the budget."""
        if not isinstance(name, str):
            raise ModelFileError(
                f"Corrupt archive: member name {name!r:.200} is not a string"
            )
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise ModelFileError(
                f"Corrupt archive: member {name!r:.200} is missing"
            ) from None
        if info.file_size > self.budget:
            raise ModelFileError(
                f"The archive member {name!r} declares {info.file_size} bytes "
                f"uncompressed: the members read exceed max_bytes="
                f"{self.max_bytes} (pass a larger max_bytes to load bigger "
                "models you trust)."
            )
        return info

    def member(self, name: Any) -> bytes:
        info = self.info(name)
        with self.archive.open(info) as handle:
            data = _read_exactly(handle, info.file_size, name)
        self.budget -= len(data)
        return data

    def array(self, name: Any, where: str, expected: tuple | None = None):
        """Read an ``.npy`` member: its header is checked (version, dtype,
        itemsize, shape, and ``expected`` shape when the model's parameters
        fix it) against the member's declared size before the data are
        inflated."""
        info = self.info(name)
        with self.archive.open(info) as handle:
            try:
                version = np.lib.format.read_magic(handle)
                if version == (1, 0):
                    header = np.lib.format.read_array_header_1_0(handle)
                elif version == (2, 0):
                    header = np.lib.format.read_array_header_2_0(handle)
                else:
                    raise ValueError(f".npy version {version}")
            except (ValueError, TypeError, SyntaxError, EOFError, OSError) as exc:
                raise ModelFileError(
                    f"Corrupt archive: member {name!r} ({where}) has no valid .npy "
                    f"header ({str(exc)[:200]})"
                ) from None
            shape, fortran, dtype = header
            start = handle.tell()
            if dtype.hasobject or dtype.kind not in "biufcUS?" or dtype.itemsize < 1:
                raise ModelFileError(
                    f"Corrupt archive: member {name!r} ({where}) has dtype "
                    f"{dtype.str!r}: only numbers, bools and non-empty strings "
                    "are stored"
                )
            if expected is not None and tuple(shape) != expected:
                raise ModelFileError(
                    f"Corrupt archive: member {name!r} ({where}) declares shape "
                    f"{shape!r:.200}, the model needs {expected}"
                )
            nbytes = math.prod(shape) * dtype.itemsize
            if start + nbytes != info.file_size:
                raise ModelFileError(
                    f"Corrupt archive: member {name!r} ({where}) declares shape "
                    f"{shape!r:.200} of {dtype.str} ({nbytes} bytes) but holds "
                    f"{info.file_size - start} bytes"
                )
            data = _read_exactly(handle, nbytes, name)
        self.budget -= info.file_size
        arr = np.frombuffer(data, dtype=dtype) if nbytes else np.empty(0, dtype)
        return arr.reshape(shape, order="F" if fortran else "C").copy(order="K")

    def value(
        self, value: Any, depth: int = 0, where: str = "?", expected=None
    ) -> Any:
        if depth > _MAX_DEPTH:
            raise ModelFileError(
                f"Corrupt archive: values nested deeper than {_MAX_DEPTH}"
            )
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, list):
            return [
                self.value(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value)
            ]
        if not isinstance(value, dict) or len(value) != 1:
            raise ModelFileError(
                f"Corrupt archive: unexpected JSON value in {where}: {value!r:.200}"
            )
        ((tag, content),) = value.items()
        if tag == "__float__":
            if content not in ("nan", "inf", "-inf"):
                raise ModelFileError(
                    f"Corrupt archive: bad float in {where}: {content!r:.200}"
                )
            return float(content)
        if tag == "__ndarray__":
            return self.array(content, where, expected)
        if tag == "__npscalar__":
            return self.array(content, where, ())[()]
        if tag == "__torch_device__":
            return _device(content)
        if tag == "__tuple__" and isinstance(content, list):
            return tuple(
                self.value(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(content)
            )
        if tag == "__dict__" and isinstance(content, dict):
            return {
                k: self.value(v, depth + 1, f"{where}[{k!r:.50}]")
                for k, v in content.items()
            }
        if tag == "__estimator__":
            return self.estimator(content, depth + 1, where)
        raise ModelFileError(
            f"Corrupt archive: unknown or malformed tag in {where}: {tag!r:.200}"
        )

    def resolve(self, name: Any) -> type:
        if not isinstance(name, str) or name not in self.allowed:
            raise UntrustedTypeError(
                f"The file names the class {name!r:.200}, which is not in the "
                "allow-list of sklmn.persistence.load (sklmn's public "
                "estimators). If you trust the file, pass "
                f"trusted=[{name!r:.200}]."
            )
        obj = registered_safe_classes().get(name)
        if obj is None:  # a class the caller trusts: import its module
            module_name, _, qualname = name.rpartition(".")
            try:
                obj = importlib.import_module(module_name)
                for part in qualname.split("."):
                    obj = getattr(obj, part)
            except (ImportError, AttributeError, ValueError):
                raise ModelFileError(
                    f"Cannot import the class {name!r} named by the file"
                ) from None
        if not (isinstance(obj, type) and issubclass(obj, BaseEstimator)):
            raise UntrustedTypeError(f"{name!r} is not a scikit-learn estimator class")
        return obj

    def estimator(self, node: Any, depth: int = 0, where: str = "") -> BaseEstimator:
        if not isinstance(node, dict) or "class" not in node or set(node) - _NODE_KEYS:
            raise ModelFileError(f"Corrupt archive: malformed estimator node {where}")
        cls = self.resolve(node["class"])
        where = f"{where}.{cls.__name__}" if where else cls.__name__
        params, attributes = node.get("params", {}), node.get("attributes", {})
        tagged = node.get("nonfinite")
        if (
            not isinstance(params, dict)
            or not isinstance(attributes, dict)
            or not (tagged is None or isinstance(tagged, list))
        ):
            raise ModelFileError(f"Corrupt archive: malformed estimator node {where}")
        unknown = set(params) - set(cls._get_param_names())
        if unknown:
            raise ModelFileError(
                f"Corrupt archive: {cls.__name__} has no parameter "
                f"{sorted(unknown)[0]!r:.200}"
            )
        kwargs = {
            k: self.value(v, depth + 1, f"{where}.{k} (parameter)")
            for k, v in params.items()
        }
        _check_parameters(cls, kwargs, where)
        est = cls(**kwargs)
        if getattr(cls, "_parameter_constraints", None) is not None:
            try:
                est._validate_params()
            except ValueError as exc:  # InvalidParameterError
                raise ModelFileError(f"Corrupt archive: {where}: {exc}") from None
        if isinstance(getattr(est, "device", None), str):
            _device(est.device)
        listed = _listed_attributes(cls)
        # the scalars first: the shapes of the arrays depend on them
        order = sorted(attributes, key=lambda k: _is_array_node(attributes[k]))
        for key in order:
            self.set_attribute(est, cls, listed, key, attributes[key], depth, where)
        _check_finite_attributes(est, attributes, tagged, where)
        restore = getattr(est, "_sklmn_restore_", None)
        if node.get("net") is not None:
            if restore is None:
                raise ModelFileError("Corrupt archive: malformed network node")
            self.net(est, node["net"], set(params), where)
        elif restore is not None:
            restore({"params": set(params)})
        if restore is not None:
            _check_sequence_estimator(est, has_net=node.get("net") is not None)
        elif hasattr(est, "A_") and hasattr(est, "_encode"):
            _check_laes(est)
        return est

    def set_attribute(self, est, cls, listed, key, raw, depth, where) -> None:
        if listed is None:  # a trusted class that lists none: the convention
            allowed = (
                isinstance(key, str)
                and _FITTED_NAME.fullmatch(key) is not None
                and not hasattr(cls, key)
                and key not in est.get_params(deep=False)
            )
            kind = None
        else:
            allowed = key in listed
            kind = listed.get(key)
        if not allowed:
            raise ModelFileError(
                f"Corrupt archive: {key!r:.200} is not a fitted attribute of "
                f"{cls.__name__}"
            )
        value = self.value(raw, depth + 1, f"{where}.{key}", _expected_shape(est, key))
        if kind is not None:
            optional = kind.endswith("?")
            if not ((optional and value is None) or _KINDS[kind.rstrip("?")](value)):
                raise ModelFileError(
                    f"Corrupt archive: {cls.__name__}.{key} must be of kind "
                    f"{kind!r}, got {type(value).__name__} {value!r:.100}"
                )
        setattr(est, key, value)

    def weights(self, name: Any) -> tuple[dict, int]:
        """The saved ``state_dict`` (checked: a torch zip archive of tensors
        whose sizes fit the member) and its number of elements."""
        data = self.member(name)
        if not zipfile.is_zipfile(io.BytesIO(data)):
            raise ModelFileError(f"Corrupt archive: {name!r} is not a torch file")
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            records = inner.infolist()
        if any(r.file_size > len(data) for r in records) or sum(
            r.file_size for r in records
        ) > len(data):
            raise ModelFileError(
                f"Corrupt archive: the records of {name!r} declare more bytes "
                "than it holds"
            )
        # first on the meta device: the declared storages, nothing allocated
        for location in ("meta", "cpu"):
            state = torch.load(
                io.BytesIO(data), weights_only=True, map_location=location
            )
            if not isinstance(state, dict) or not all(
                isinstance(k, str) and isinstance(v, torch.Tensor)
                for k, v in state.items()
            ):
                raise ModelFileError(f"Corrupt archive: {name!r} is not a state_dict")
            nbytes = sum(
                v.untyped_storage().nbytes() + v.numel() * v.element_size()
                for v in state.values()
            )
            if nbytes > 2 * len(data):
                raise ModelFileError(
                    f"Corrupt archive: the tensors of {name!r} declare more bytes "
                    "than it holds"
                )
        for key, tensor in state.items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise ModelFileError(
                    f"Corrupt archive: member {name!r}: the weights {key!r:.200} "
                    "hold non-finite values (NaN or infinity)"
                )
        return state, sum(v.numel() for v in state.values())

    def net(self, est: BaseEstimator, spec: Any, params: set, where: str) -> None:
        if not isinstance(spec, dict) or set(spec) - _NET_KEYS:
            raise ModelFileError("Corrupt archive: malformed network node")
        state, n_elements = self.weights(spec.get("state_dict"))
        # every size the network is built from is bounded by the saved weights
        # (a network of size k has at least k weights), so a tampered manifest
        # cannot ask for a huge network before the shapes are compared
        limit = max(n_elements, _MIN_SIZE_LIMIT)
        sizes = dict(est._sklmn_state_()["sizes"])
        for name in ("n_features_in_", "n_outputs_"):
            value = sizes.get(name)
            if not _is_int(value):
                raise ModelFileError(
                    f"Corrupt archive: {name} must be an int, got {value!r:.100}"
                )
        n_modules = spec.get("n_modules")
        if n_modules is not None:
            if not _is_int(n_modules):
                raise ModelFileError(
                    f"Corrupt archive: bad n_modules {n_modules!r:.100}"
                )
            sizes["n_modules"] = n_modules
        for name, value in sizes.items():
            if not 0 <= value <= limit:
                raise ModelFileError(
                    f"Corrupt archive: {name} = {value} does not fit the saved "
                    f"weights ({n_elements} values)"
                )
        if est.n_features_in_ < 1 or est.n_outputs_ < 1:
            raise ModelFileError(
                "Corrupt archive: n_features_in_ and n_outputs_ must be >= 1"
            )

        def guard():
            return _AllocationBudget(
                elements=_BUDGET_FACTOR * n_elements + _BUDGET_ELEMENTS,
                ops=_OPS_FACTOR * len(state) + _BUDGET_OPS,
            )

        try:
            est._sklmn_restore_(
                {
                    "params": params,
                    "weights": state,
                    "device": _device(spec.get("device", "cpu")),
                    "n_modules": n_modules,
                    "guard": guard,
                }
            )
        except _BudgetExceeded:
            raise ModelFileError(
                f"Corrupt archive: the {type(est).__name__} described by the saved "
                "parameters is much larger than the saved weights"
            ) from None
        except (ValueError, TypeError, RuntimeError) as exc:
            raise ModelFileError(f"{where}: {str(exc)[:300]}") from None


def _read_exactly(handle, size: int, name: str) -> bytes:
    """``size`` bytes of an archive member, read in bounded chunks."""
    parts, left = [], size
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    if left or handle.read(1):
        raise ModelFileError(f"Corrupt archive: member {name!r} has a wrong size")
    return b"".join(parts) if len(parts) != 1 else parts[0]


def _is_array_node(raw: Any) -> bool:
    return isinstance(raw, dict) and "__ndarray__" in raw


#: shapes of fitted arrays fixed by fitted integers (names, or tuples of names
#: whose product is the size); checked against each ``.npy`` header before
#: the member is inflated
_ARRAY_SHAPES: dict[str, tuple] = {
    "feature_names_in_": ("n_features_in_",),
    "input_mean_": ("n_features_in_",),
    "input_scale_": ("n_features_in_",),
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
        "module_history_",
        "notes_",
        "history_",
        "_fitted_params",
    }
)
#: fitted statistics that must be positive
_POSITIVE = frozenset({"input_scale_", "target_scale_", "scale_"})
_NON_NEGATIVE = frozenset({"var_", "singular_values_", "explained_variance_ratio_"})


def _first_nonfinite(value: Any, depth: int = 0):
    """A non-finite number in ``value`` (lists, tuples, dicts, arrays), or
    None; nested estimators are checked on their own."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, float | np.floating | complex | np.complexfloating):
        return None if np.isfinite(value) else value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and value.size:
            bad = ~np.isfinite(value)
            if bad.any():
                return value.reshape(-1)[np.argmax(bad.reshape(-1))]
        return None
    if isinstance(value, list | tuple):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return None
    for item in items:
        found = _first_nonfinite(item, depth + 1)
        if found is not None:
            return found
    return None


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


def _device(value: Any) -> torch.device:
    if not isinstance(value, str):
        raise ModelFileError(f"Corrupt archive: bad torch device {value!r:.100}")
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError, ValueError):
        raise ModelFileError(
            f"Corrupt archive: bad torch device {value!r:.100}"
        ) from None
    if device.type == "meta":
        raise ModelFileError(f"Corrupt archive: bad torch device {value!r:.100}")
    return device


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


def load(
    path: str | os.PathLike,
    *,
    trusted: Iterable[str] | None = None,
    max_bytes: int = MAX_BYTES,
) -> BaseEstimator:
    """Load an estimator saved by :func:`save`, without executing its code.

    Every size and type the file declares is checked before anything is
    allocated: the uncompressed size of each archive member before it is read
    (at most ``max_bytes`` in all), each array's header against its data,
    the type of every fitted attribute (only those the class lists can be
    set), and the sizes a network is rebuilt from against the saved weights.
    Whatever is wrong with the file, :class:`ModelFileError` is raised.

    Parameters
    ----------
    path : str or path-like
        Archive written by :func:`save`.
    trusted : iterable of str, default=None
        Fully qualified class names (``'sklearn.pipeline.Pipeline'``) to accept
        in addition to :data:`SAFE_CLASSES`. Only name classes whose
        constructor and ``set_params`` you trust.
    max_bytes : int, default=MAX_BYTES
        Most bytes the members read may hold uncompressed (1 GiB by default);
        raise it to load larger models from files you trust.

    Returns
    -------
    estimator : estimator instance
        The estimator with its parameters and fitted attributes; a trained
        network is rebuilt on the CPU (or on the GPU it was saved from, when
        that is available) and predicts like the saved one.

    Raises
    ------
    ModelFileError
        (a :class:`ValueError`) If the file is not an archive written by
        :func:`save`, is corrupt or tampered with, exceeds ``max_bytes`` or
        has a format version newer than :data:`FORMAT_VERSION`.
    UntrustedTypeError
        (a :class:`ModelFileError`) If the archive names a class outside the
        allow-list.
    OSError
        If the file cannot be opened.

    See Also
    --------
    save : Write the archive.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklmn.estimators import LMNRegressor
    >>> from sklmn.persistence import load, save
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(8, 5, 2), rng.randn(8)
    >>> reg = LMNRegressor(hidden_size=3, memory_size=2, max_iter=2,
    ...                    random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings():  # ConvergenceWarning after 2 epochs
    ...     warnings.simplefilter("ignore")
    ...     reg = reg.fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "lmn.sklmn")
    >>> save(reg, path)
    >>> bool(np.array_equal(load(path).predict(X), reg.predict(X)))
    True
    """
    if not _is_int(max_bytes) or max_bytes < 1:
        raise ValueError(f"max_bytes must be a positive int, got {max_bytes!r}")
    if trusted is not None and isinstance(trusted, str):
        trusted = [trusted]
    allowed = set(SAFE_CLASSES | frozenset(registered_safe_classes()))
    for name in trusted or ():
        allowed.add(name)
        # also accept the defining module's name of a public alias
        # ('sklearn.linear_model.Ridge' -> 'sklearn.linear_model._ridge.Ridge')
        module_name, _, qualname = str(name).rpartition(".")
        try:
            obj = getattr(importlib.import_module(module_name), qualname)
        except (ImportError, AttributeError, ValueError):
            continue
        if isinstance(obj, type):
            allowed.add(f"{obj.__module__}.{obj.__qualname__}")
    shown = os.fspath(path)
    with open(shown, "rb") as handle:
        try:
            return _load(handle, shown, allowed, int(max_bytes))
        except ModelFileError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is documented
            raise ModelFileError(
                f"{shown!r} is not a valid sklmn estimator archive "
                f"({type(exc).__name__}: {str(exc)[:300]})"
            ) from exc


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


def _load(handle, shown: str, allowed: set[str], max_bytes: int) -> BaseEstimator:
    try:
        archive = zipfile.ZipFile(handle, "r")
    except zipfile.BadZipFile:
        raise ModelFileError(
            f"{shown!r} is not an archive written by sklmn.persistence.save"
        ) from None
    with archive:
        if len(archive.infolist()) > _MAX_MEMBERS:
            raise ModelFileError(f"{shown!r} has too many members")
        reader = _Reader(archive, allowed, max_bytes)
        try:
            size = reader.info(_MANIFEST).file_size
            if size > _MAX_MANIFEST_BYTES:
                raise ModelFileError(
                    f"member {_MANIFEST!r} declares {size} bytes, more than "
                    f"{_MAX_MANIFEST_BYTES}"
                )
            text = reader.member(_MANIFEST)
        except ModelFileError as exc:
            raise ModelFileError(
                f"{shown!r} has no valid {_MANIFEST}; it was not written by "
                f"sklmn.persistence.save ({exc})"
            ) from None
        cost = min(max(max_bytes, _MIN_MANIFEST_COST), _MAX_MANIFEST_COST)
        try:
            _check_manifest(text, cost)
        except ModelFileError as exc:
            raise ModelFileError(f"{shown!r}: {exc}") from None
        try:
            text = text.decode("utf-8")  # the bytes are freed
            manifest = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise ModelFileError(
                f"{shown!r} has no valid {_MANIFEST}; it was not written "
                "by sklmn.persistence.save"
            ) from None
        del text
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT_NAME:
            raise ModelFileError(f"{shown!r} is not an sklmn estimator archive")
        version = manifest.get("format_version")
        if not _is_int(version) or version > FORMAT_VERSION:
            raise ModelFileError(
                f"{shown!r} has format version {version!r:.100}; this sklmn "
                f"reads versions up to {FORMAT_VERSION} (upgrade sklmn)."
            )
        if version < 1:
            raise ModelFileError(f"{shown!r} has an invalid format version {version!r}")
        return reader.estimator(manifest.get("estimator"))
