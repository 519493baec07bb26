"""The writer of :func:`~sklmn.persistence.save`: estimators encoded into
JSON nodes plus ``.npy`` and ``state_dict`` members of a zip archive."""

from __future__ import annotations

import io
import json
import math
import os
import warnings
import zipfile
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from .._version import __version__
from ..utils._registry import registered_safe_classes
from ._format import (
    _DICT_KEY_TYPES,
    _FORMAT_NAME,
    _MANIFEST,
    FORMAT_VERSION,
    _first_nonfinite,
)


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
        # np.ascontiguousarray returns at least 1-D: a 0-d array (a numpy
        # scalar such as the np.int64 that a grid over np.arange sets) keeps
        # its shape () so that it reads back as a scalar
        if arr.ndim:
            arr = np.ascontiguousarray(arr)
        np.save(buffer, arr, allow_pickle=False)
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
            if not all(isinstance(k, str) for k in value):
                return {"__pairs__": self.pairs(value, where)}
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

    def pairs(self, value: dict, where: str) -> list:
        """A dict with keys other than strings (``class_weight={0: 2.0}``)
        as ``[key, value]`` pairs; its keys must be numbers, bools, strings
        or None."""
        bad = [k for k in value if not isinstance(k, _DICT_KEY_TYPES)]
        if bad:
            raise TypeError(
                f"Cannot save {where}: dict key {bad[0]!r} is not a string, a "
                "number, a bool or None."
            )
        return [
            [self.value(k, f"{where} key {k!r}"), self.value(v, f"{where}[{k!r}]")]
            for k, v in value.items()
        ]

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

    Notes
    -----
    The optimizer's state (Adam's running moments, for example) is not
    saved: a ``partial_fit`` on the loaded model starts the optimizer
    afresh, unlike one on the saved model (a pickle keeps that state).

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
