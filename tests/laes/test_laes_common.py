"""scikit-learn's common estimator checks on LAESTransformer.

2-D input ``(n, T)`` is read as ``n`` univariate sequences of length ``T``
(the README's input contract), so ``n_features_in_`` is 1 (features per time step), not
``T``. Three checks assume ``n_features_in_ == X.shape[1]`` and that
``X[:, :-1]`` has "fewer features"; for a sequence model it is the same data
with shorter sequences, which ``transform`` must accept. They are the only
expected failures.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklmn.laes import LAESTransformer

_REASON = (
    "2-D X is univariate sequences: n_features_in_ counts features per time "
    "step (1), and X[:, :-1] is shorter sequences, which are valid input"
)
EXPECTED_FAILED_CHECKS = {
    "check_n_features_in": _REASON,
    "check_n_features_in_after_fitting": _REASON,
    "check_transformer_general": _REASON,
}


@parametrize_with_checks(
    [
        LAESTransformer(),
        LAESTransformer(n_components=1, solver="matrix_free", center=True),
        LAESTransformer(n_components=2, solver="dense", return_sequences=False),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
