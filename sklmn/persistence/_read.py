"""The reader of :func:`~sklmn.persistence.load`: every class name, size and
type of an archive checked before anything is allocated or imported."""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import re
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from ..utils._registry import registered_safe_classes
from ._checks import (
    _BUDGET_ELEMENTS,
    _BUDGET_FACTOR,
    _BUDGET_OPS,
    _MAX_MANIFEST_BYTES,
    _MAX_MANIFEST_COST,
    _MIN_MANIFEST_COST,
    _MIN_SIZE_LIMIT,
    _OPS_FACTOR,
    _AllocationBudget,
    _BudgetExceeded,
    _check_finite_attributes,
    _check_laes,
    _check_manifest,
    _check_parameters,
    _check_sequence_estimator,
    _expected_shape,
    _is_array_node,
    _listed_attributes,
    _reject_constant,
)
from ._format import (
    _DICT_KEY_TYPES,
    _FORMAT_NAME,
    _KINDS,
    _MANIFEST,
    _MAX_DEPTH,
    _MAX_MEMBERS,
    FORMAT_VERSION,
    MAX_BYTES,
    SAFE_CLASSES,
    ModelFileError,
    UntrustedTypeError,
    _is_int,
)

_NODE_KEYS = {"class", "params", "attributes", "net", "nonfinite"}
_NET_KEYS = {"state_dict", "device", "n_modules"}
_FITTED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*_")


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
        if tag == "__pairs__" and isinstance(content, list):
            return self.pairs(content, depth, where)
        if tag == "__estimator__":
            return self.estimator(content, depth + 1, where)
        raise ModelFileError(
            f"Corrupt archive: unknown or malformed tag in {where}: {tag!r:.200}"
        )

    def pairs(self, content: list, depth: int, where: str) -> dict:
        """A dict saved as ``[key, value]`` pairs (keys other than strings):
        every key a number, a bool, a string or None, each key once."""
        out = {}
        for i, pair in enumerate(content):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ModelFileError(
                    f"Corrupt archive: item {i} of the dict pairs in {where} is "
                    f"not a [key, value] pair: {pair!r:.200}"
                )
            key = self.value(pair[0], depth + 1, f"{where} key {i}")
            if not isinstance(key, _DICT_KEY_TYPES):
                raise ModelFileError(
                    f"Corrupt archive: dict key {i} in {where} is not a number, "
                    f"a bool, a string or None: {key!r:.200}"
                )
            if key in out:
                raise ModelFileError(
                    f"Corrupt archive: dict key {key!r:.200} repeated in {where}"
                )
            out[key] = self.value(pair[1], depth + 1, f"{where}[{key!r:.50}]")
        return out

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
        try:  # the sizes of the parameters the network was fitted with
            sizes = dict(est._sklmn_state_()["sizes"])
        except (ValueError, TypeError) as exc:  # InvalidParameterError
            raise ModelFileError(f"Corrupt archive: {where}: {exc}"[:400]) from None
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
                ops=_OPS_FACTOR * len(state) + n_elements + _BUDGET_OPS,
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
