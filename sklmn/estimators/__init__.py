"""scikit-learn estimators of sklmn: recurrent sequence classifiers and regressors.

Every sequence estimator is a native scikit-learn class whose ``fit`` builds a
skorch net (``net_``) around a recurrent module of :mod:`sklmn.nn` and a linear
readout. They share one training vocabulary (scikit-learn's MLP: ``max_iter``,
``batch_size``, ``learning_rate_init``, ``alpha``, ``early_stopping``, ...),
one input contract (:mod:`sklmn.utils.sequences`) and two target layouts
(``target='sequence'`` or ``'timestep'``). :class:`ReadoutFeatures` turns a
fitted one into a transformer: one row per sequence, what its readout reads.

Scores: classifiers report accuracy (per valid time step for
``target='timestep'``, frame-level accuracy for multilabel per-step targets);
regressors report R² (over valid time steps for ``target='timestep'``).

:class:`StreamLanguageModel` is the stream mode: one long token stream (a
character text) trained by truncated backpropagation through time with the
recurrent state carried across windows, scored in bits per character.
"""

from ..utils._registry import register_safe_classes
from ._enrnn import ENRNNClassifier, ENRNNRegressor
from ._features import ReadoutFeatures
from ._lmn import LMNClassifier, LMNRegressor
from ._multiscale import MultiScaleLMNClassifier, MultiScaleLMNRegressor
from ._rnn import RNNClassifier, RNNRegressor
from ._stream import StreamLanguageModel

__all__ = [
    "ENRNNClassifier",
    "ENRNNRegressor",
    "LMNClassifier",
    "LMNRegressor",
    "MultiScaleLMNClassifier",
    "MultiScaleLMNRegressor",
    "ReadoutFeatures",
    "RNNClassifier",
    "RNNRegressor",
    "StreamLanguageModel",
]

# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
