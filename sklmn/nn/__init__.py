"""Recurrent PyTorch modules of sklmn (no scikit-learn imports in this package).

All modules follow the ``torch.nn.RNN(batch_first=True)`` call convention
``output, state = module(x, lengths=None, state=None)``;
``module(x, ..., return_penalty=True)`` returns ``(output, state, penalty)``,
the regularization term of that forward pass. See :mod:`sklmn.nn._base` for
the shared helpers.
"""

from ._base import RecurrentModule
from ._baselines import GRU, LSTM, ElmanRNN
from ._clockwork import ClockworkRNN
from ._enrnn import ENRNN, ModReLU, modrelu
from ._linear import LinearRNN
from ._lmn import LMN, LMNLayer
from ._multiscale import MultiScaleLMN
from ._penalties import norm_stabilizer_penalty, orthogonality_penalty
from ._scan import set_cuda_graphs
from ._unrolled import TapeReadout, UnrolledRNN, init_lmn_from_unrolled_

__all__ = [
    "ClockworkRNN",
    "ENRNN",
    "ElmanRNN",
    "GRU",
    "LMN",
    "LMNLayer",
    "LSTM",
    "LinearRNN",
    "ModReLU",
    "MultiScaleLMN",
    "RecurrentModule",
    "TapeReadout",
    "UnrolledRNN",
    "init_lmn_from_unrolled_",
    "modrelu",
    "norm_stabilizer_penalty",
    "orthogonality_penalty",
    "set_cuda_graphs",
]
