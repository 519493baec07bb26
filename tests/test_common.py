"""scikit-learn's common estimator checks over every sklmn estimator."""

import pytest
import torch
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklmn.estimators import (
    ENRNNClassifier,
    ENRNNRegressor,
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    RNNClassifier,
    RNNRegressor,
)
from sklmn.preprocessing import SequenceStandardScaler

# Small, quick instances: a few units, few epochs, a large learning rate and
# minibatches of 50 so that check_regressors_train (200 sequences) reaches its
# R² threshold in few epochs while the checks on tiny data stay fast.
_FAST = dict(
    max_iter=30,
    batch_size=50,
    learning_rate_init=0.05,
    n_iter_no_change=5,
    tol=1e-3,
    # every training sequence counts in check_regressors_train's R² threshold
    early_stopping=False,
)

ESTIMATORS = [
    LMNClassifier(hidden_size=8, memory_size=8, **_FAST),
    LMNRegressor(hidden_size=8, memory_size=8, **_FAST),
    MultiScaleLMNClassifier(hidden_size=8, memory_size=4, n_modules=2, **_FAST),
    MultiScaleLMNRegressor(hidden_size=8, memory_size=4, n_modules=2, **_FAST),
    ENRNNClassifier(hidden_size=6, short_size=4, **_FAST),
    ENRNNRegressor(hidden_size=6, short_size=4, **_FAST),
    *[
        RNNClassifier(cell=cell, hidden_size=8, n_modules=2, tape_length=2, **_FAST)
        for cell in ("elman", "lstm", "gru", "clockwork", "unrolled")
    ],
    *[
        RNNRegressor(cell=cell, hidden_size=8, n_modules=2, tape_length=2, **_FAST)
        for cell in ("elman", "lstm", "gru", "clockwork", "unrolled")
    ],
    SequenceStandardScaler(),
    SequenceStandardScaler(with_mean=False),
    SequenceStandardScaler(with_std=False),
]

# A 2-D X is a batch of univariate sequences (n_samples, n_timesteps): its
# number of columns is a sequence length, not a feature count, and
# n_features_in_ counts features per time step (README, "Input contract").
EXPECTED_FAILED_CHECKS = {
    "check_n_features_in": (
        "n_features_in_ is the number of features per time step (1 for a 2-D X "
        "of univariate sequences), not X.shape[1]"
    ),
    "check_n_features_in_after_fitting": (
        "a 2-D X with another number of columns holds longer or shorter "
        "univariate sequences, which is valid input"
    ),
    "check_classifiers_train": (
        "asserts that predict(X.T) raises, but X.T is a valid batch of longer "
        "univariate sequences; the accuracy part of this check is replicated in "
        "tests/estimators/test_estimators.py::test_classifiers_train_accuracy"
    ),
}


# Transformers (as LAESTransformer, tests/laes/test_laes_common.py): the same
# two n_features_in_ checks, and check_transformer_general, which expects
# transform(X[:, :-1]) to raise; for 2-D X that is the same univariate
# sequences one step shorter, which transform must accept.
TRANSFORMER_EXPECTED_FAILED_CHECKS = {
    "check_n_features_in": EXPECTED_FAILED_CHECKS["check_n_features_in"],
    "check_n_features_in_after_fitting": EXPECTED_FAILED_CHECKS[
        "check_n_features_in_after_fitting"
    ],
    "check_transformer_general": (
        "transform(X[:, :-1]) must not raise: a 2-D X with one column less holds "
        "univariate sequences one step shorter, which is valid input"
    ),
}


def _expected_failed_checks(estimator):
    if isinstance(estimator, SequenceStandardScaler):
        return TRANSFORMER_EXPECTED_FAILED_CHECKS
    return EXPECTED_FAILED_CHECKS


@pytest.fixture(autouse=True)
def _single_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
