"""Linear autoencoder for sequences (LAES): Ξ operator, solvers, transformer.

Pure numpy/scipy math (paper 000 §2.3); see ``DESIGN.md`` §4.
"""

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
