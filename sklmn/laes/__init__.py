"""Linear autoencoder for sequences (LAES): Ξ operator, solvers, transformer.

Pure numpy/scipy math (Carta, Sperduti & Bacciu, "Encoding-based memory
modules for recurrent neural networks", §2.3); notation in :mod:`sklmn.laes._xi`.
"""

from ..utils._registry import register_safe_classes
from ._laes import LAESTransformer
from ._solvers import randomized_svd_operator, solve_dense, solve_gram
from ._xi import XiOperator, build_xi, xi_frobenius_sq, xi_lag_moments

__all__ = [
    "LAESTransformer",
    "XiOperator",
    "build_xi",
    "xi_frobenius_sq",
    "xi_lag_moments",
    "randomized_svd_operator",
    "solve_dense",
    "solve_gram",
]

# accepted by name by sklmn.persistence.load
register_safe_classes(__name__, globals(), __all__)
