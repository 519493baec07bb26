"""scikit-learn estimators of sklmn: recurrent sequence classifiers and regressors.

Every estimator is a native scikit-learn class whose ``fit`` builds a skorch
net (``net_``) around a recurrent module of :mod:`sklmn.nn` and a linear
readout. They share one training vocabulary (scikit-learn's MLP: ``max_iter``,
``batch_size``, ``learning_rate_init``, ``alpha``, ``early_stopping``, ...),
one input contract (:mod:`sklmn.utils.sequences`) and two target layouts
(``target='sequence'`` or ``'timestep'``).

Scores: classifiers report accuracy (per valid time step for
``target='timestep'``, frame-level accuracy for multilabel per-step targets);
regressors report R² (over valid time steps for ``target='timestep'``).
"""

from ._enrnn import ENRNNClassifier, ENRNNRegressor
from ._lmn import LMNClassifier, LMNRegressor
from ._multiscale import MultiScaleLMNClassifier, MultiScaleLMNRegressor
from ._rnn import RNNClassifier, RNNRegressor
from ..utils._registry import register_safe_classes

__all__ = [
    "ENRNNClassifier",
    "ENRNNRegressor",
    "LMNClassifier",
    "LMNRegressor",
    "MultiScaleLMNClassifier",
    "MultiScaleLMNRegressor",
    "RNNClassifier",
    "RNNRegressor",
]

# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
