"""Memory training algorithms as scikit-learn objects.

- :class:`LAESInitializer`: LAES initialization of the LMN and of the Elman
  RNN (Carta, Sperduti & Bacciu 2020, "Autoencoder-based initialization for
  recurrent neural networks with a linear memory", §3.2),
  ``LMNClassifier(pretrainer=LAESInitializer())``.
- :class:`UnrolledPretrainer`: unrolled-RNN pretraining of the LMN (Carta,
  Sperduti & Bacciu 2021, "Encoding-based memory modules for recurrent neural
  networks", Alg. 1),
  ``LMNClassifier(pretrainer=UnrolledPretrainer(tape_length=k))``.
- :class:`IncrementalTraining`: incremental multi-scale LMN training (ibid.
  Alg. 2; Carta, Sperduti & Bacciu 2020, "Incremental training of a recurrent
  neural network exploiting a multi-scale dynamic memory", §4.1),
  ``MultiScaleLMNClassifier(incremental=IncrementalTraining())``.
- :class:`ProjectionFineTuning`: the settings of ``fine_tuning='projection'``
  (the memory trained through the readout that is refitted after it),
  ``LMNClassifier(fine_tuning=ProjectionFineTuning(steps=50))``.

The pretrainers adapt to the data: a number of LAES components that the
training sequences cannot support (more than ``min(total steps, longest
length x features)``) is reduced, and what was reduced is listed in the
fitted pretrainer's ``notes_``.
"""

from ..utils._registry import register_safe_classes
from ._incremental import IncrementalTraining, grow_multiscale_
from ._laes_init import LAESInitializer
from ._projection import ProjectionFineTuning
from ._unrolled import UnrolledPretrainer

__all__ = [
    "IncrementalTraining",
    "LAESInitializer",
    "ProjectionFineTuning",
    "UnrolledPretrainer",
    "grow_multiscale_",
]

# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
