"""The one place where sklmn imports private scikit-learn and PyTorch API.

scikit-learn keeps the tools that third-party estimators need to look like its
own (parameter constraints, the fit context, scorer internals) in private
modules that may change in any minor release, and so does PyTorch for the
dispatch mode that :mod:`sklmn.persistence` uses to budget model construction.
Every other sklmn module imports these names from here, so that an upstream
rename is fixed in this file alone; ``tests/test_import_structure.py`` checks
that no other module imports a private scikit-learn name.

The supported releases are the ranges declared in ``pyproject.toml``; the
oldest ones are tested with ``bash dev.sh test-oldest``. The torch
parametrization internals used to pickle parametrized modules are isolated in
:mod:`sklmn.nn._torch_compat` instead (:mod:`sklmn.nn` imports no
scikit-learn, and this module does).
"""

from sklearn.base import _fit_context
from sklearn.metrics._scorer import _BaseScorer, _check_response_method, _Scorer
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _check_feature_names, _check_sample_weight
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "TorchDispatchMode",
    "_BaseScorer",
    "_Scorer",
    "_check_feature_names",
    "_check_response_method",
    "_check_sample_weight",
    "_fit_context",
    "_get_output_config",
    "tree_flatten",
    "validate_params",
]

