"""sklmn: Linear Memory Networks and recurrent sequence models for scikit-learn.

The estimators (``LMNClassifier``, ``MultiScaleLMNRegressor``, ...), the
linear autoencoder for sequences (``LAESTransformer``) and the sequence
standardizer (``SequenceStandardScaler``) are importable from the top level;
the subpackages hold the rest:

* :mod:`sklmn.nn` — the PyTorch modules (no scikit-learn inside);
* :mod:`sklmn.laes` — the LAES math and transformer;
* :mod:`sklmn.preprocessing` — sequence-aware standardization, and the flat
  2-D layout of sequences for 2-D-only scikit-learn tools;
* :mod:`sklmn.estimators` — the scikit-learn estimators;
* :mod:`sklmn.pretraining` — LAES initialization, unrolled pretraining,
  incremental multi-scale training;
* :mod:`sklmn.datasets` — offline datasets of the papers' tasks;
* :mod:`sklmn.metrics` — frame-level accuracy, normalized MSE;
* :mod:`sklmn.utils.sequences` — the sequence input contract;
* :mod:`sklmn.benchmarks` — the papers' experiments (``python -m sklmn.benchmarks``).
"""

from . import estimators
from ._version import __version__
from .estimators import (  # noqa: F401 - exported via the computed __all__
    ENRNNClassifier,
    ENRNNRegressor,
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    ReadoutFeatures,
    RNNClassifier,
    RNNRegressor,
    StreamLanguageModel,
)
from .laes import LAESTransformer  # noqa: F401 - exported via __all__
from .preprocessing import SequenceStandardScaler  # noqa: F401 - exported via __all__
from .pretraining import (  # noqa: F401 - exported via __all__
    IncrementalTraining,
    LAESInitializer,
    UnrolledPretrainer,
)

__all__ = [
    "__version__",
    *sorted(
        [
            *estimators.__all__,
            "IncrementalTraining",
            "LAESInitializer",
            "LAESTransformer",
            "SequenceStandardScaler",
            "UnrolledPretrainer",
        ]
    ),
]
