"""Bidirectional multi-scale LMN, Clockwork, unrolled, linear and Elman RNN
and ENRNN estimators: fit, predict, and save/load round trips (grown modules
included)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklmn.estimators import (
    ENRNNClassifier,
    ENRNNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    RNNClassifier,
    RNNRegressor,
)
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining


def _ragged(n=24, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(rng.randint(2, 9), 2) for _ in range(n)]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("target", ["sequence", "timestep"])
@pytest.mark.parametrize(
    "estimator",
    [
        MultiScaleLMNClassifier(hidden_size=4, memory_size=2, n_modules=2),
        RNNClassifier(cell="clockwork", hidden_size=4, n_modules=2),
        RNNClassifier(cell="unrolled", hidden_size=4, tape_length=2),
    ],
    ids=["mslmn", "clockwork", "unrolled"],
)
def test_bidirectional_classifiers_fit_and_predict(estimator, target):
    X = _ragged()
    if target == "sequence":
        y = np.array(["a" if x[0, 0] > 0 else "b" for x in X])
    else:
        y = [np.where(x[:, 0] > 0, "a", "b") for x in X]
    est = estimator.set_params(
        bidirectional=True, target=target, max_iter=2, random_state=0
    )
    _fit(est, X, y)
    assert est.net_.module_.recurrent.bidirectional
    half = est.net_.module_.recurrent.output_size // 2
    # pooling='auto' (the multi-scale LMN's) holds the last step, the mean
    # and the maxima and minima: four blocks of the output's width
    blocks = 1 if est.net_.module_.pooling == "last" else 4
    assert est.net_.module_.readout.in_features == blocks * 2 * half
    proba = est.predict_proba(X[:3])
    if target == "sequence":
        assert proba.shape == (3, 2)
    else:
        assert [p.shape for p in proba] == [(len(x), 2) for x in X[:3]]
    # predictions of a sequence do not depend on its batch mates' padding
    alone = est.predict_proba(X[1:2])
    np.testing.assert_allclose(alone[0], proba[1], atol=1e-5)


def test_bidirectional_regressor_and_validation():
    X = _ragged(seed=1)
    y = np.array([x[0, 0] for x in X])  # the first step: near for the reverse
    reg = _fit(
        MultiScaleLMNRegressor(
            hidden_size=4,
            memory_size=2,
            n_modules=2,
            bidirectional=True,
            max_iter=2,
            random_state=0,
        ),
        X,
        y,
    )
    assert reg.predict(X).shape == (len(X),)
    with pytest.raises(ValueError, match="'bidirectional' parameter"):
        MultiScaleLMNRegressor(bidirectional="yes", max_iter=1).fit(X, y)
    # num_layers still applies to the stacked cells only
    with pytest.raises(ValueError, match="does not support"):
        RNNRegressor(
            cell="clockwork", hidden_size=4, n_modules=2, num_layers=2, max_iter=1
        ).fit(X, y)


def test_save_load_round_trips_grown_bidirectional_models(tmp_path):
    X = _ragged(seed=2)
    y = np.array([int(x[-1, 0] > 0) for x in X])
    grown = MultiScaleLMNClassifier(
        hidden_size=4,
        memory_size=2,
        n_modules=3,
        bidirectional=True,
        max_iter=3,
        early_stopping=False,
        incremental=IncrementalTraining(epochs_per_module=1),
        random_state=0,
    )
    clockwork = RNNRegressor(
        cell="clockwork",
        hidden_size=4,
        n_modules=2,
        bidirectional=True,
        max_iter=2,
        random_state=0,
    )
    _fit(grown, X, y)
    _fit(clockwork, X, y.astype(float))
    assert grown.net_.module_.recurrent.reverse.n_modules == 3  # grown in fit
    for name, est in (("grown", grown), ("clockwork", clockwork)):
        save(est, tmp_path / f"{name}.sklmn")
        loaded = load(tmp_path / f"{name}.sklmn")
        assert loaded.net_.module_.recurrent.bidirectional
        np.testing.assert_allclose(loaded.predict(X), est.predict(X), atol=1e-6)
    np.testing.assert_allclose(
        load(tmp_path / "grown.sklmn").predict_proba(X),
        grown.predict_proba(X),
        atol=1e-6,
    )


@pytest.mark.parametrize("target", ["sequence", "timestep"])
@pytest.mark.parametrize(
    "estimator",
    [
        RNNClassifier(cell="linear", hidden_size=4, num_layers=2),
        RNNClassifier(cell="linear", hidden_size=4, recurrent_matrix="orthogonal"),
        RNNClassifier(cell="elman", hidden_size=4, recurrent_init="orthogonal"),
        ENRNNClassifier(hidden_size=3, short_size=2, num_layers=2),
    ],
    ids=["linear", "linear-orthogonal", "elman-orthogonal-init", "enrnn-stacked"],
)
def test_baselines_bidirectional_fit_predict_and_padding(estimator, target):
    X = _ragged(seed=3)
    if target == "sequence":
        y = np.array(["a" if x[0, 0] > 0 else "b" for x in X])
    else:
        y = [np.where(x[:, 0] > 0, "a", "b") for x in X]
    est = estimator.set_params(
        bidirectional=True, target=target, max_iter=2, random_state=0
    )
    _fit(est, X, y)
    recurrent = est.net_.module_.recurrent
    assert recurrent.bidirectional
    assert est.net_.module_.readout.in_features == recurrent.output_size
    proba = est.predict_proba(X[:3])
    alone = est.predict_proba(X[1:2])
    np.testing.assert_allclose(alone[0], proba[1], atol=1e-5)
    if target == "timestep":
        assert [p.shape for p in proba] == [(len(x), 2) for x in X[:3]]


def test_stacked_bidirectional_enrnn_regressor():
    X = _ragged(seed=4)
    y = np.array([x[0, 0] for x in X])
    reg = _fit(
        ENRNNRegressor(
            hidden_size=3,
            short_size=2,
            num_layers=2,
            bidirectional=True,
            max_iter=2,
            random_state=0,
        ),
        X,
        y,
    )
    assert len(reg.net_.module_.recurrent.cells) == 4
    assert reg.predict(X).shape == (len(X),)
