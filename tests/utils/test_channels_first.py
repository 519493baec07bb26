"""The channels-first warning and the expected-failures helper of
sklmn.utils.estimator_checks."""

import warnings

import numpy as np
import pytest

from sklmn.estimators import LMNRegressor, RNNClassifier
from sklmn.laes import LAESTransformer
from sklmn.preprocessing import SequenceStandardScaler
from sklmn.utils.estimator_checks import expected_failed_checks
from sklmn.utils.sequences import from_channels_first, validate_sequences


class _Est:
    pass


def _smooth_channels_first(n, channels, steps, seed=0):
    """Noisy sines of random frequency and phase, (n, channels, steps)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, steps)
    freq = rng.uniform(1, 3, size=(n, channels, 1))
    phase = rng.uniform(0, 2 * np.pi, size=(n, channels, 1))
    return np.sin(2 * np.pi * freq * t + phase) + 0.05 * rng.normal(
        size=(n, channels, steps)
    )


@pytest.mark.parametrize(
    "X",
    [
        np.random.default_rng(0).normal(size=(4, 1, 300)),  # univariate, any
        np.random.default_rng(1).normal(size=(8, 2, 50)),  # 25x more steps
        _smooth_channels_first(40, 6, 100),  # BasicMotions-like
        _smooth_channels_first(400, 3, 20),  # the aeon layout of a user report
        _smooth_channels_first(40, 2, 24),  # CardanoSentiment-like
    ],
    ids=["1x300", "2x50-noise", "6x100", "3x20", "2x24"],
)
def test_channels_first_input_warns(X):
    with pytest.warns(UserWarning, match="input_layout='channels_first'"):
        validate_sequences(_Est(), X, reset=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_sequences(_Est(), from_channels_first(X), reset=True)


def _panel(n, steps, features, seed=0):
    """A short wide panel: AR(0.8) columns over the quarters, a common
    factor, lognormal column scales."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, steps, features))
    X[:, 0] = rng.normal(size=(n, features))
    for t in range(1, steps):
        X[:, t] = 0.8 * X[:, t - 1] + 0.6 * rng.normal(size=(n, features))
    common = rng.normal(size=(n, steps, 1)).cumsum(axis=1)
    return (X + common) * rng.lognormal(size=features)


@pytest.mark.parametrize(
    "shape", [(300, 4, 50), (300, 2, 20), (50, 8, 30), (60, 12, 100)]
)
def test_no_warning_on_short_wide_panels(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_sequences(_Est(), _panel(*shape), reset=True)


def test_the_warning_says_when_it_cannot_tell():
    with pytest.warns(UserWarning, match="no rule separates") as record:
        validate_sequences(_Est(), _smooth_channels_first(40, 6, 100), reset=True)
    message = str(record[0].message)
    assert "from_channels_first" in message and "input_layout='batch_first'" in message


def test_input_layout_batch_first_silences_the_check():
    class Explicit:
        input_layout = "batch_first"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = np.zeros((4, 1, 300)) + np.arange(300)
        validate_sequences(Explicit(), X, reset=True)


@pytest.mark.parametrize(
    "shape",
    [
        # bundled datasets: sequential digits, chorales (shortest 23 steps of
        # 88 notes), common-suffix words (MFCC), generation signal, synthetic
        (5, 64, 1),
        (5, 23, 88),
        (5, 346, 13),
        (1, 300, 1),
        (5, 120, 10),
        (5, 200, 2),
        # the time-series suite: BasicMotions, CardanoSentiment, univariate
        (5, 100, 6),
        (5, 24, 2),
        (5, 251, 1),
        (5, 1460, 1),
        # 2-D data of scikit-learn's estimator checks (univariate sequences)
        (30, 3),
    ],
)
def test_no_warning_on_real_layouts(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_sequences(_Est(), np.ones(shape), reset=True)
        validate_sequences(_Est(), np.ones(shape), reset=False)


def test_estimator_fit_warns_once_predict_does_not():
    X = np.random.RandomState(0).randn(6, 1, 30)
    with pytest.warns(UserWarning, match="channels-first"):
        laes = LAESTransformer(n_components=2).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        laes.transform(X)


def test_expected_failed_checks_helper():
    clf = expected_failed_checks(RNNClassifier())
    assert "check_classifiers_train" in clf and "check_n_features_in" in clf
    reg = expected_failed_checks(LMNRegressor())
    assert "check_classifiers_train" not in reg
    assert all(isinstance(v, str) and v for v in reg.values())
    for est in (LAESTransformer(), SequenceStandardScaler()):
        assert "check_transformer_general" in expected_failed_checks(est)
    assert expected_failed_checks(object()) == {}
    clf["check_n_features_in"] = "changed"  # a fresh dict each call
    assert expected_failed_checks(RNNClassifier())["check_n_features_in"] != "changed"


def test_pretrainers_internal_laes_fits_do_not_warn():
    # hidden states subsampled at a slow clock: 2 steps of 25 features
    import warnings

    from sklmn.pretraining._common import fit_laes, make_laes

    rng = np.random.RandomState(0)
    states = [rng.randn(2, 25) for _ in range(30)]
    laes = make_laes(4, "auto", np.full(30, 2), 25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_laes(laes, states)
