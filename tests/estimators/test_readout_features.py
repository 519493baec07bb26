"""ReadoutFeatures: the rows a fitted network's readout reads."""

import copy

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose
from scipy.special import softmax
from sklearn.base import clone
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    ReadoutFeatures,
    RNNClassifier,
)
from sklmn.laes import LAESTransformer
from sklmn.persistence import load, save
from sklmn.utils.sequences import validate_sequences

_FAST = dict(max_iter=3, early_stopping=False, random_state=0)
#: the classifiers' projection steps are not what these tests are about
_SMOOTH = dict(_FAST, fine_tuning="smooth")


def _data(n=30, T=10, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    y = (X[:, :3, 0].sum(1) > 0).astype(int)
    return X, y


def _readout(est):
    readout = est.net_.module_.readout
    return (
        readout.weight.detach().double().numpy(),
        readout.bias.detach().double().numpy(),
    )


@pytest.mark.parametrize(
    "network",
    [
        LMNClassifier(hidden_size=5, memory_size=4, **_SMOOTH),
        MultiScaleLMNClassifier(hidden_size=6, memory_size=2, n_modules=2, **_SMOOTH),
        RNNClassifier(cell="gru", hidden_size=5, **_FAST),
    ],
    ids=["lmn", "mslmn", "gru"],
)
def test_the_readout_of_the_rows_is_the_prediction(network):
    X, y = _data()
    features = ReadoutFeatures(network).fit(X, y)
    F = features.transform(X)
    W, b = _readout(features.estimator_)
    assert F.shape == (len(X), W.shape[1]) and F.dtype == np.float64
    assert_allclose(
        softmax(F @ W.T + b, axis=1),
        features.estimator_.predict_proba(X),
        rtol=1e-10,
        atol=1e-12,
    )


def test_the_last_step_pooling_against_the_recurrence_run_alone():
    # pooling='last': each row is the recurrent output at the sequence's last
    # valid step, computed here one sequence at a time in float64 (from the
    # float32 inputs that predict reads)
    rng = np.random.RandomState(1)
    X = [rng.randn(T, 2) for T in (7, 3, 9, 5, 4, 8) * 4]
    y = np.arange(len(X)) % 2
    features = ReadoutFeatures(
        LMNClassifier(hidden_size=4, memory_size=3, pooling="last", **_SMOOTH)
    ).fit(X, y)
    est = features.estimator_
    recurrent = copy.deepcopy(est.net_.module_.recurrent).double()
    F = features.transform(X)
    for i, x in enumerate(X):
        seqs = validate_sequences(est, [x], reset=False, dtype=np.float32)
        z = torch.as_tensor(est._standardized_inputs(seqs).data, dtype=torch.float64)
        with torch.no_grad():
            out, _ = recurrent(z)
        assert_allclose(F[i], out[0, len(x) - 1].numpy(), rtol=1e-7, atol=1e-9)


def test_rows_follow_the_order_of_ragged_input():
    rng = np.random.RandomState(2)
    X = [rng.randn(T, 1) for T in (6, 2, 9, 4) * 6]
    y = np.arange(len(X)) % 2
    features = ReadoutFeatures(LMNClassifier(hidden_size=4, memory_size=3, **_SMOOTH))
    F = features.fit(X, y).transform(X)
    one_by_one = np.vstack([features.transform([x]) for x in X])
    assert_allclose(F, one_by_one, rtol=1e-10, atol=1e-12)


def test_a_regressor_gives_its_readout_rows():
    X, _ = _data()
    y = X[:, :, 0].sum(1)
    features = ReadoutFeatures(LMNRegressor(hidden_size=4, memory_size=3, **_FAST))
    F = features.fit(X, y).transform(X)
    W, b = _readout(features.estimator_)
    outputs = features.estimator_._unstandardized_outputs(F @ W.T + b)
    assert_allclose(outputs.ravel(), features.estimator_.predict(X), rtol=1e-9)


def test_in_a_pipeline_and_a_grid_search():
    X, y = _data(n=40)
    model = make_pipeline(
        ReadoutFeatures(LMNClassifier(hidden_size=4, memory_size=3, **_SMOOTH)),
        ExtraTreesClassifier(n_estimators=20, random_state=0),
    )
    search = GridSearchCV(
        model, {"readoutfeatures__estimator__memory_size": [2, 3]}, cv=2
    ).fit(X, y)
    assert search.best_params_["readoutfeatures__estimator__memory_size"] in (2, 3)
    assert search.predict(X).shape == (40,)
    names = search.best_estimator_[0].get_feature_names_out()
    assert names[0] == "readoutfeatures0"


def test_the_default_network_and_the_feature_names():
    X, y = _data(n=24, T=6, d=1)
    features = ReadoutFeatures().fit(X, y)
    assert isinstance(features.estimator_, LMNClassifier)
    assert len(features.get_feature_names_out()) == features.transform(X).shape[1]
    assert features.n_features_in_ == 1


def test_bad_settings_name_the_problem():
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="estimator"):
        ReadoutFeatures(LAESTransformer()).fit(X, y)
    with pytest.raises(ValueError, match="target='timestep'"):
        ReadoutFeatures(LMNClassifier(target="timestep")).fit(
            X, np.repeat(y[:, None], X.shape[1], axis=1)
        )
    with pytest.raises(NotFittedError):
        ReadoutFeatures().transform(X)


def test_user_data_is_not_modified_and_a_failed_fit_keeps_the_fitted_state():
    X, y = _data()
    X_copy, y_copy = X.copy(), y.copy()
    features = ReadoutFeatures(LMNClassifier(hidden_size=4, memory_size=3, **_SMOOTH))
    F = features.fit(X, y).transform(X)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    fitted = features.estimator_
    with pytest.raises(ValueError):
        features.fit(X, y[:-1])
    assert features.estimator_ is fitted
    assert_allclose(features.transform(X), F, rtol=1e-12)


def test_saved_and_loaded(tmp_path):
    X, y = _data()
    features = ReadoutFeatures(
        MultiScaleLMNClassifier(hidden_size=6, memory_size=2, n_modules=2, **_SMOOTH)
    ).fit(X, y)
    save(features, tmp_path / "features.sklmn")
    loaded = load(tmp_path / "features.sklmn")
    assert_allclose(loaded.transform(X), features.transform(X), rtol=1e-6, atol=1e-7)
    assert clone(loaded).get_params()["estimator"].get_params()["memory_size"] == 2


def test_fit_parameters_reach_the_network_and_pandas_output():
    X, y = _data()
    weight = np.linspace(0.5, 2.0, len(X))
    network = LMNClassifier(hidden_size=4, memory_size=3, **_SMOOTH)
    features = ReadoutFeatures(network).fit(X, y, sample_weight=weight)
    direct = clone(network).fit(X, y, sample_weight=weight)
    assert_allclose(
        features.transform(X), direct._readout_features(X), rtol=1e-6, atol=1e-8
    )
    frame = features.set_output(transform="pandas").transform(X[:4])
    assert list(frame.columns) == list(features.get_feature_names_out())
    assert frame.shape == (4, features.transform(X).shape[1])


def test_per_step_networks_have_no_pooled_rows():
    X, y = _data()
    Y = np.repeat(y[:, None], X.shape[1], axis=1)
    est = LMNClassifier(target="timestep", hidden_size=4, memory_size=3, **_FAST)
    est.fit(X, Y)
    with pytest.raises(ValueError, match="per-time-step"):
        est._readout_features(X)
