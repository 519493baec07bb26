"""scikit-learn's estimator checks on sklmn estimators: the expected failures.

A few of scikit-learn's common checks assume that a 2-D ``X`` is a table
whose columns are features. sklmn reads it as a batch of univariate
sequences ``(n_samples, n_timesteps)`` (see :mod:`sklmn.utils.sequences`):
``n_features_in_`` counts features per time step (1), and ``X[:, :-1]`` or
``X.T`` are valid batches of shorter or longer sequences, not inputs with a
wrong number of features. :func:`expected_failed_checks` lists those checks
with the reason, in the form that
:func:`sklearn.utils.estimator_checks.check_estimator` and
:func:`~sklearn.utils.estimator_checks.parametrize_with_checks` take.
"""

from __future__ import annotations

__all__ = ["expected_failed_checks"]

_N_FEATURES_IN = (
    "asserts n_features_in_ == X.shape[1] (2) after fit on a 2-D X, but a 2-D "
    "X is a batch of univariate sequences: n_features_in_ counts features per "
    "time step (1)"
)
_N_FEATURES_IN_AFTER_FITTING = (
    "asserts n_features_in_ == X.shape[1] (4) after fit on a 2-D X (it is 1, "
    "the features per time step of univariate sequences), then that X[:, [1]] "
    "is refused, but a 2-D X with another number of columns holds shorter or "
    "longer univariate sequences, which is valid input"
)
_PARTIAL_FIT_N_FEATURES = (
    "asserts that partial_fit(X[:, :-1]) after partial_fit(X) raises, but a 2-D "
    "X with one column less holds univariate sequences one step shorter, which "
    "is valid input"
)

_ESTIMATOR_CHECKS = {
    "check_n_features_in": _N_FEATURES_IN,
    "check_n_features_in_after_fitting": _N_FEATURES_IN_AFTER_FITTING,
    "check_estimators_partial_fit_n_features": _PARTIAL_FIT_N_FEATURES,
    "check_classifiers_train": (
        "asserts that predict(X.T) raises, but X.T is a valid batch of longer "
        "univariate sequences (the parts of the check before and after it are "
        "run without the transposed input by sklmn's own tests)"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "asserts that fitting with integer sample weights and on the repeated "
        "samples give predictions equal at rtol=1e-7; both fits are trained in "
        "float32, where the weighted and the repeated losses sum in different "
        "orders, and the epochs amplify the rounding differences (the "
        "pretrained start of the LMN estimators also scores its choices by "
        "cross-validation over the sequences, where a repeated sequence is "
        "not a weighted one)"
    ),
}

_TRANSFORMER_CHECKS = {
    "check_n_features_in": _N_FEATURES_IN,
    "check_n_features_in_after_fitting": _N_FEATURES_IN_AFTER_FITTING,
    "check_transformer_general": (
        "asserts that transform(X[:, :-1]) raises, but a 2-D X with one column "
        "less holds univariate sequences one step shorter, which is valid input"
    ),
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks an sklmn estimator fails, with why.

    Pass it as ``expected_failed_checks`` to
    :func:`sklearn.utils.estimator_checks.check_estimator` or
    :func:`~sklearn.utils.estimator_checks.parametrize_with_checks`: those
    checks are then reported as expected failures instead of errors. Every
    one assumes a 2-D ``X`` of tabular features, which sklmn's input contract
    does not follow (see the module docstring), or, for the sample-weight
    equivalence, two float32 trainings equal to ``rtol=1e-7``.

    Parameters
    ----------
    estimator : estimator instance
        An sklmn sequence classifier or regressor,
        :class:`sklmn.laes.LAESTransformer` or
        :class:`sklmn.preprocessing.SequenceStandardScaler`,
        :class:`sklmn.preprocessing.FlattenSequences` or
        :class:`sklmn.estimators.ReadoutFeatures`. Other estimators (among
        them :class:`sklmn.preprocessing.SequenceReshaper`, which reads a
        plain 2-D table) get an empty dict.

    Returns
    -------
    expected_failed_checks : dict of str to str
        Check name to reason.

    Examples
    --------
    >>> from sklearn.utils.estimator_checks import check_estimator
    >>> from sklmn.laes import LAESTransformer
    >>> from sklmn.utils.estimator_checks import expected_failed_checks
    >>> sorted(expected_failed_checks(LAESTransformer()))
    ['check_n_features_in', 'check_n_features_in_after_fitting', \
'check_transformer_general']
    >>> results = check_estimator(
    ...     LAESTransformer(n_components=2),
    ...     expected_failed_checks=expected_failed_checks(LAESTransformer()),
    ...     on_fail=None,
    ... )
    >>> sorted({r["status"] for r in results})
    ['passed', 'skipped', 'xfail']
    """
    from sklearn.base import is_classifier

    from ..estimators._base import _BaseSequenceEstimator
    from ..estimators._features import ReadoutFeatures
    from ..laes import LAESTransformer
    from ..preprocessing import FlattenSequences, SequenceStandardScaler

    if isinstance(estimator, _BaseSequenceEstimator):
        checks = dict(_ESTIMATOR_CHECKS)
        if not is_classifier(estimator):
            del checks["check_classifiers_train"]
        return checks
    if isinstance(
        estimator,
        LAESTransformer | SequenceStandardScaler | FlattenSequences | ReadoutFeatures,
    ):
        return dict(_TRANSFORMER_CHECKS)
    return {}
