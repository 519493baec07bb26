"""Recurrent PyTorch modules of sklmn (no scikit-learn imports in this package).

All modules follow the ``torch.nn.RNN(batch_first=True)`` call convention
``output, state = module(x, lengths=None, state=None)``; see
:mod:`sklmn.nn._base` for the shared helpers.
"""

from ._base import RecurrentModule

__all__ = ["RecurrentModule"]
