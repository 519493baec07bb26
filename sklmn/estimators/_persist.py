"""The hook pair through which :mod:`sklmn.persistence` saves and restores a
sequence estimator, without knowing how the estimator builds its network.

:class:`PersistenceMixin` is a base of every sequence estimator:

* ``_sklmn_state_()`` describes what a file must hold beyond the parameters
  and the fitted attributes (the trained weights, their device, the number of
  modules grown during training) and the sizes the network is rebuilt from
  (so that the loader can bound them by the saved weights before anything is
  built);
* ``_sklmn_restore_(state)`` puts a loaded estimator back into working
  order: the parameters added after the file was written get the values that
  keep the saved model's behaviour, and the network is rebuilt from the
  parameters and given the saved weights.
"""

from __future__ import annotations

import contextlib
import os
from numbers import Integral
from typing import Any

import torch

#: Largest ``n_threads`` accepted by the estimators' constructors (torch is
#: never asked for more threads than the machine has cores, see
#: :func:`machine_threads`).
MAX_THREADS = 1024


def machine_threads(n_threads: int) -> int:
    """``n_threads`` bounded by the machine's number of cores.

    Examples
    --------
    >>> from sklmn.estimators._persist import machine_threads
    >>> machine_threads(1)
    1
    """
    return max(1, min(int(n_threads), os.cpu_count() or 1))


def _int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _size(value: Any) -> int | None:
    """The size a parameter asks for: an int, the total of a tuple or list
    of ints (one size per module), else None."""
    if _int(value):
        return value
    if isinstance(value, tuple | list) and value and all(map(_int, value)):
        return sum(abs(int(v)) for v in value)
    return None


class PersistenceMixin:
    """The documented hook pair used by :func:`sklmn.persistence.save` and
    :func:`sklmn.persistence.load` (see ``docs/architecture.md``), and the
    defaults of the parameters added after a model was saved or pickled."""

    @classmethod
    def _added_parameters(cls) -> dict:
        """The added parameters this class has (see
        ``_added_parameter_values``), with their old-model values."""
        names = cls._get_param_names()
        values = {}
        for klass in reversed(cls.__mro__):
            values.update(vars(klass).get("_added_parameter_values", {}))
        return {k: v for k, v in values.items() if k in names}

    def __setstate__(self, state):
        # parameters added after a model was pickled take their defaults
        state = dict(state)
        for key, value in self._added_parameters().items():
            state.setdefault(key, value)
        super().__setstate__(state)

    def _fitted_model_parameters(self):
        """The estimator with the model parameters of its last fit
        (``_fitted_params``), checked against the parameter constraints:
        the network a file holds was built from them, also when
        ``set_params`` changed a model parameter after the fit.

        A shallow copy that holds them when a fit recorded any (else the
        estimator itself): the estimator is never changed, not even for a
        moment, so that another thread may predict or read its parameters
        while it is saved.
        """
        fitted = getattr(self, "_fitted_params", None)
        if not isinstance(fitted, dict):
            return self
        names = set(self.get_params(deep=False))
        fitted = {k: v for k, v in fitted.items() if k in names}
        if not fitted:
            return self
        # a shallow copy of the attributes (pickling hooks not involved):
        # the network and the fitted attributes are shared, not copied
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.__dict__.update(fitted)
        if getattr(twin, "_parameter_constraints", None) is not None:
            twin._validate_params()
        return twin

    def _sklmn_state_(self) -> dict:
        """What :func:`~sklmn.persistence.save` stores beyond the parameters
        and the fitted attributes, and the sizes :func:`~sklmn.persistence.\
load` bounds before rebuilding the network.

        Returns
        -------
        state : dict
            ``'sizes'``: name -> value of every size the network is built
            from (the integer model parameters, ``n_features_in_`` and
            ``n_outputs_`` as set, unchecked, and the sizes a fit resolved
            that the class lists in ``_fitted_sizes``, e.g. the LMN's
            ``memory_size_``); and, once trained,
            ``'weights'`` (the network's ``state_dict`` on the CPU),
            ``'device'`` (str) and ``'n_modules'`` (modules of a recurrent
            module that grows, else None).
        """
        # the sizes of the parameters (those of the next fit) and of the
        # parameters the network was fitted with (set_params may have
        # changed one since)
        sizes = {
            f"parameter {name}": _size(getattr(self, name))
            for name in self._model_parameter_names()
            if _size(getattr(self, name)) is not None
        }
        fitted = self._fitted_model_parameters()
        sizes.update(
            (f"fitted parameter {name}", _size(getattr(fitted, name)))
            for name in fitted._model_parameter_names()
            if _size(getattr(fitted, name)) is not None
        )
        for name in ("n_features_in_", "n_outputs_"):
            sizes[name] = getattr(self, name, None)
        # sizes a fit resolved ('auto'), when the network is built from them
        for name in getattr(self, "_fitted_sizes", ()):
            value = _size(getattr(self, name, None))  # a tuple: its total
            if value is not None:
                sizes[name] = value
        state: dict = {"sizes": sizes}
        net = getattr(self, "net_", None)
        if net is not None:
            module = net.module_
            recurrent = getattr(module, "recurrent", None)
            state["weights"] = {
                k: v.detach().to("cpu") for k, v in module.state_dict().items()
            }
            state["device"] = str(getattr(net, "device", "cpu"))
            state["n_modules"] = getattr(recurrent, "n_modules", None)
        return state

    def _sklmn_restore_(self, state: dict) -> None:
        """Complete an estimator rebuilt from a file.

        Parameters
        ----------
        state : dict
            ``'params'``: the names of the parameters the file holds (the
            others, added to sklmn after the file was written, get the values
            that keep the saved model's behaviour); with a trained network,
            ``'weights'`` (a ``state_dict`` of CPU tensors), ``'device'``
            (:class:`torch.device`), ``'n_modules'`` (int or None) and
            ``'guard'`` (a context-manager factory wrapped around building
            the module, None for none).

        Raises
        ------
        ValueError
            If the saved weights do not fit the network rebuilt from the
            parameters (tensor names or shapes differ).
        """
        saved = set(state.get("params", ()))
        for key, value in self._added_parameters().items():
            if key not in saved:
                setattr(self, key, value)
        weights = state.get("weights")
        if weights is None:
            return
        n_modules = state.get("n_modules")
        guard = state.get("guard") or contextlib.nullcontext
        # built from the parameters it was trained with (set_params may have
        # changed a model parameter since the fit)
        fitted = self._fitted_model_parameters()
        with torch.random.fork_rng(devices=[]), guard():
            torch.manual_seed(0)  # the values are overwritten by the state
            recurrent = fitted._build_module(self._network_input_size())
            built = getattr(recurrent, "n_modules", None)
            if n_modules is not None and built is not None and n_modules > built:
                recurrent.grow_(int(n_modules) - int(built))
            # float32, the training precision, whatever torch's default dtype
            module = fitted._sequence_net(recurrent).to(torch.float32)
            # a layout of the readout written by an earlier version
            module.match_saved_layout_(weights)
        expected = {k: tuple(v.shape) for k, v in module.state_dict().items()}
        if expected != {k: tuple(v.shape) for k, v in weights.items()}:
            raise ValueError(
                f"The saved weights do not fit the {type(self).__name__} rebuilt "
                "from the saved parameters (tensor names or shapes differ)"
            )
        module.load_state_dict(weights)
        device = torch.device(state.get("device") or "cpu")
        if device.type != "cuda" or not torch.cuda.is_available():
            device = torch.device("cpu")
        net = self._make_net(
            module.to(device),
            None,
            device=device,
            batch_size=1,
            lr=self._step_settings(1)[1],
            valid_dataset=None,
            shuffle_seed=0,
        )
        net.initialize()
        self.net_ = net
