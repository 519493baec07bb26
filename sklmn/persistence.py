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
  public estimators of :mod:`sklmn` (:data:`SAFE_CLASSES`) plus the fully
  qualified names passed explicitly in ``trusted=``. Any other name raises
  :class:`UntrustedTypeError` before anything is imported;
* the torch module is rebuilt by the estimator itself (``_build_module`` from
  the saved parameters) and the saved weights are loaded into it, so no
  module code is read from the file.

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
import warnings
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from ._version import __version__

__all__ = ["FORMAT_VERSION", "SAFE_CLASSES", "UntrustedTypeError", "load", "save"]

#: Version of the archive layout written by :func:`save`.
FORMAT_VERSION = 1

_FORMAT_NAME = "sklmn-safe-estimator"
_MANIFEST = "manifest.json"


class UntrustedTypeError(ValueError):
    """A saved file names a class outside the allow-list of :func:`load`.

    Examples
    --------
    >>> from sklmn.persistence import UntrustedTypeError
    >>> issubclass(UntrustedTypeError, ValueError)
    True
    """


def _public_classes() -> dict[str, type]:
    """Public name (``'sklmn.estimators.LMNClassifier'``) -> class."""
    classes = {}
    for module_name in (
        "sklmn.estimators",
        "sklmn.laes",
        "sklmn.pretraining",
        "sklmn.preprocessing",
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # pragma: no cover - optional subpackage
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if isinstance(obj, type) and issubclass(obj, BaseEstimator):
                classes[f"{module_name}.{name}"] = obj
    return classes


#: Public names of the classes :func:`load` accepts without ``trusted=`` (the
#: estimators, transformers and pretrainers of sklmn).
SAFE_CLASSES: frozenset[str] = frozenset(_public_classes())


def _qualified_name(obj: Any) -> str:
    """Public name of an sklmn class, else ``module.qualname``."""
    cls = type(obj)
    for name, public in _public_classes().items():
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
        attributes, net = {}, None
        for key, value in vars(est).items():
            if key in params:
                continue
            if key == "net_":
                net = self.net(est, value, where)
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
        node["attributes"] = attributes
        node["net"] = net
        return node

    def net(self, est: BaseEstimator, net: Any, where: str) -> dict:
        module = net.module_
        state = {k: v.detach().to("cpu") for k, v in module.state_dict().items()}
        buffer = io.BytesIO()
        torch.save(state, buffer)
        recurrent = getattr(module, "recurrent", None)
        return {
            "state_dict": self._add("weights", ".pt", buffer.getvalue()),
            "device": str(getattr(net, "device", "cpu")),
            # modules grown during training (incremental multi-scale LMN)
            "n_modules": getattr(recurrent, "n_modules", None),
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


class _Reader:
    """Decode the JSON nodes of an archive, checking every class name."""

    def __init__(self, archive: zipfile.ZipFile, allowed: set[str]) -> None:
        self.archive = archive
        self.allowed = allowed

    def member(self, name: Any) -> bytes:
        if not isinstance(name, str):
            raise ValueError(f"Corrupt archive: member name {name!r} is not a string")
        try:
            return self.archive.read(name)
        except KeyError:
            raise ValueError(f"Corrupt archive: member {name!r} is missing") from None

    def array(self, name: Any) -> np.ndarray:
        return np.load(io.BytesIO(self.member(name)), allow_pickle=False)

    def value(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) != 1:
            raise ValueError(f"Corrupt archive: unexpected JSON object {value!r}")
        ((tag, content),) = value.items()
        if tag == "__float__":
            if content not in ("nan", "inf", "-inf"):
                raise ValueError(f"Corrupt archive: bad float {content!r}")
            return float(content)
        if tag == "__ndarray__":
            return self.array(content)
        if tag == "__npscalar__":
            return self.array(content)[()]
        if tag == "__torch_device__":
            return torch.device(content)
        if tag == "__tuple__":
            return tuple(self.value(v) for v in content)
        if tag == "__dict__":
            return {k: self.value(v) for k, v in content.items()}
        if tag == "__estimator__":
            return self.estimator(content)
        raise ValueError(f"Corrupt archive: unknown tag {tag!r}")

    def resolve(self, name: Any) -> type:
        if not isinstance(name, str) or name not in self.allowed:
            raise UntrustedTypeError(
                f"The file names the class {name!r}, which is not in the "
                "allow-list of sklmn.persistence.load (sklmn's public "
                "estimators). If you trust the file, pass "
                f"trusted=[{name!r}]."
            )
        module_name, _, qualname = name.rpartition(".")
        try:
            obj = importlib.import_module(module_name)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            raise ValueError(
                f"Cannot import the class {name!r} named by the file"
            ) from None
        if not (isinstance(obj, type) and issubclass(obj, BaseEstimator)):
            raise UntrustedTypeError(f"{name!r} is not a scikit-learn estimator class")
        return obj

    def estimator(self, node: Any) -> BaseEstimator:
        if not isinstance(node, dict) or "class" not in node:
            raise ValueError("Corrupt archive: an estimator node has no class")
        cls = self.resolve(node["class"])
        params = {k: self.value(v) for k, v in node.get("params", {}).items()}
        est = cls(**params)
        for key, value in node.get("attributes", {}).items():
            if not isinstance(key, str) or key.startswith("__"):
                raise ValueError(f"Corrupt archive: bad attribute name {key!r}")
            setattr(est, key, self.value(value))
        if node.get("net") is not None:
            self.net(est, node["net"])
        return est

    def net(self, est: BaseEstimator, spec: dict) -> None:
        from .estimators._net import SequenceNet

        state = torch.load(
            io.BytesIO(self.member(spec["state_dict"])),
            weights_only=True,
            map_location="cpu",
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)  # the values are overwritten by the state
            recurrent = est._build_module(int(est.n_features_in_))
        n_modules = spec.get("n_modules")
        built = getattr(recurrent, "n_modules", None)
        if n_modules is not None and built is not None and n_modules > built:
            recurrent.grow_(int(n_modules) - int(built))
        module = SequenceNet(
            recurrent, int(est.n_outputs_), per_step=est.target == "timestep"
        )
        try:
            module.load_state_dict(state)
        except RuntimeError as exc:
            raise ValueError(
                f"The saved weights do not fit the {type(est).__name__} rebuilt "
                f"from the saved parameters: {exc}"
            ) from None
        device = "cpu"
        saved = torch.device(spec.get("device", "cpu"))
        if saved.type == "cuda" and torch.cuda.is_available():
            device = str(saved)
        net = est._make_net(
            module.to(device),
            device=torch.device(device),
            batch_size=1,
            valid_dataset=None,
            shuffle_seed=0,
        )
        net.initialize()
        est.net_ = net


def load(
    path: str | os.PathLike, *, trusted: Iterable[str] | None = None
) -> BaseEstimator:
    """Load an estimator saved by :func:`save`, without executing its code.

    Parameters
    ----------
    path : str or path-like
        Archive written by :func:`save`.
    trusted : iterable of str, default=None
        Fully qualified class names (``'sklearn.pipeline.Pipeline'``) to accept
        in addition to :data:`SAFE_CLASSES`. Only name classes whose
        constructor and ``set_params`` you trust.

    Returns
    -------
    estimator : estimator instance
        The estimator with its parameters and fitted attributes; a trained
        network is rebuilt on the CPU (or on the GPU it was saved from, when
        that is available) and predicts like the saved one.

    Raises
    ------
    UntrustedTypeError
        If the archive names a class outside the allow-list.
    ValueError
        If the file is not an archive written by :func:`save` or is corrupt.

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
    if trusted is not None and isinstance(trusted, str):
        trusted = [trusted]
    allowed = set(SAFE_CLASSES | frozenset(_public_classes()))
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
    try:
        archive = zipfile.ZipFile(os.fspath(path), "r")
    except zipfile.BadZipFile:
        raise ValueError(
            f"{os.fspath(path)!r} is not an archive written by sklmn.persistence.save"
        ) from None
    with archive:
        try:
            manifest = json.loads(archive.read(_MANIFEST))
        except (KeyError, json.JSONDecodeError):
            raise ValueError(
                f"{os.fspath(path)!r} has no valid {_MANIFEST}; it was not written "
                "by sklmn.persistence.save"
            ) from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT_NAME:
            raise ValueError(f"{os.fspath(path)!r} is not an sklmn estimator archive")
        version = manifest.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ValueError(
                f"{os.fspath(path)!r} has format version {version!r}; this sklmn "
                f"reads versions up to {FORMAT_VERSION} (upgrade sklmn)."
            )
        return _Reader(archive, allowed).estimator(manifest.get("estimator"))
