"""What third-party plug-ins work with: the fit context, the network and the
training net.

A *pretrainer* is an object with a method ``initialize(module, context)``
that changes the parameters of ``module`` (a :class:`SequenceNet`: a
recurrent module ``module.recurrent`` and a linear ``module.readout``) in
place, from the training data in ``context`` (a :class:`FitContext`), and
returns itself. A *growth schedule* is an object with a method
``make_callback(context, *, max_modules)`` returning a skorch callback that
the estimator places after its own callbacks and before its stopping rule.
A callback that replaces the module's parameters calls
``net.restart_monitoring()``; one that ends training as converged raises
:class:`TrainingConverged`. ``docs/extending.md`` describes the protocol
with a complete example.

Examples
--------
>>> import numpy as np
>>> from sklmn.estimators import LMNClassifier
>>> class ZeroReadout:
...     '''A pretrainer: start from a zero readout.'''
...     def initialize(self, module, context):
...         module.readout.weight.data.zero_()
...         return self
...     def get_params(self, deep=True):
...         return {}
>>> X = np.random.RandomState(0).randn(20, 5, 2)
>>> y = (X[:, -1, 0] > 0).astype(int)
>>> clf = LMNClassifier(hidden_size=4, memory_size=4, max_iter=3,
...                     pretrainer=ZeroReadout(), random_state=0).fit(X, y)
>>> clf.n_iter_ <= 3
True
"""

from ._training import (
    FitContext,
    SequenceDataset,
    SequenceNet,
    SequenceNeuralNet,
    SplineReadout,
    TrainingConverged,
    make_sequence_net,
)

__all__ = [
    "FitContext",
    "SequenceDataset",
    "SequenceNet",
    "SequenceNeuralNet",
    "SplineReadout",
    "TrainingConverged",
    "make_sequence_net",
]
