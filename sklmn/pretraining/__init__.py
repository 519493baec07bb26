"""Memory training algorithms as scikit-learn objects.

- :class:`LAESInitializer`: LAES initialization of the LMN and of the Elman
  RNN (paper 003 §3.2), ``LMNClassifier(pretrainer=LAESInitializer())``.
- :class:`UnrolledPretrainer`: unrolled-RNN pretraining of the LMN (paper 000
  Alg. 1), ``LMNClassifier(pretrainer=UnrolledPretrainer(tape_length=k))``.
- :class:`IncrementalTraining`: incremental multi-scale LMN training (000
  Alg. 2, 001 §4.1), ``MultiScaleLMNClassifier(incremental=IncrementalTraining())``.
"""

from ._incremental import IncrementalTraining, grow_multiscale_
from ._laes_init import LAESInitializer
from ._unrolled import UnrolledPretrainer

__all__ = [
    "IncrementalTraining",
    "LAESInitializer",
    "UnrolledPretrainer",
    "grow_multiscale_",
]
