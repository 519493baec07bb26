"""The ``input_layout`` parameter of the estimators and transformers."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklmn.estimators import LMNClassifier, RNNRegressor
from sklmn.laes import LAESTransformer
from sklmn.preprocessing import FlattenSequences, SequenceStandardScaler
from sklmn.utils.sequences import (
    check_input_layout,
    check_sequences,
    from_channels_first,
    layout_statistics,
    looks_channels_first,
    to_channels_first,
    validate_sequences,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 7, 3)).cumsum(axis=1)  # batch-first
    y = (X[:, -1, 0] > 0).astype(int)
    return X, y


def test_estimator_reads_channels_first(data):
    X, y = data
    X_cf = to_channels_first(X)
    params = dict(hidden_size=3, memory_size=3, max_iter=3, random_state=0)
    ref = LMNClassifier(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*channels-first")
        est = LMNClassifier(input_layout="channels_first", **params).fit(X_cf, y)
    assert est.n_features_in_ == 3
    np.testing.assert_allclose(
        est.predict_proba(X_cf), ref.predict_proba(X), rtol=1e-6, atol=1e-7
    )
    # the input is not modified
    np.testing.assert_array_equal(X_cf, to_channels_first(X))


def test_regressor_reads_channels_first_lists_and_validation_data(data):
    X, _ = data
    y = X[:, -1, 0]
    ragged = [x[: 4 + i % 3] for i, x in enumerate(X)]
    ragged_cf = to_channels_first(ragged)
    params = dict(hidden_size=3, max_iter=2, random_state=0)
    ref = RNNRegressor(**params).fit(
        ragged[:20], y[:20], X_val=ragged[20:], y_val=y[20:]
    )
    est = RNNRegressor(input_layout="channels_first", **params).fit(
        ragged_cf[:20], y[:20], X_val=ragged_cf[20:], y_val=y[20:]
    )
    np.testing.assert_allclose(
        est.predict(ragged_cf), ref.predict(ragged), rtol=1e-5, atol=1e-6
    )


def test_scaler_returns_the_layout_it_reads(data):
    X, _ = data
    X_cf = to_channels_first(X)
    scaler = SequenceStandardScaler(input_layout="channels_first").fit(X_cf)
    ref = SequenceStandardScaler().fit(X)
    np.testing.assert_allclose(scaler.mean_, ref.mean_, rtol=1e-12)
    out = scaler.transform(X_cf)
    assert out.shape == X_cf.shape
    np.testing.assert_allclose(
        from_channels_first(out), ref.transform(X), rtol=1e-12
    )
    np.testing.assert_allclose(
        scaler.inverse_transform(out), X_cf, rtol=1e-10, atol=1e-10
    )


def test_flatten_and_laes_read_channels_first(data):
    X, _ = data
    X_cf = to_channels_first(X)
    flat = FlattenSequences(input_layout="channels_first").fit(X_cf)
    np.testing.assert_allclose(
        flat.transform(X_cf), FlattenSequences().fit_transform(X)
    )
    assert flat.inverse_transform(flat.transform(X_cf)).shape == X_cf.shape
    laes = LAESTransformer(n_components=2, input_layout="channels_first").fit(X_cf)
    ref = LAESTransformer(n_components=2).fit(X)
    np.testing.assert_allclose(
        np.abs(laes.transform(X_cf)), np.abs(ref.transform(X)), rtol=1e-6, atol=1e-8
    )
    assert laes.inverse_transform(laes.transform(X_cf)).shape == X_cf.shape


@pytest.mark.parametrize(
    "make", [LMNClassifier, SequenceStandardScaler, FlattenSequences, LAESTransformer]
)
def test_invalid_layout_names_the_value(make, data):
    X, y = data
    with pytest.raises(ValueError, match="input_layout.*'time_first'"):
        est = make(input_layout="time_first")
        est.fit(X, y) if make is LMNClassifier else est.fit(X)
    with pytest.raises(ValueError, match="'time_first'"):
        check_input_layout("time_first")


def test_old_pickles_read_batch_first(data):
    X, _ = data
    scaler = SequenceStandardScaler().fit(X)
    state = dict(scaler.__getstate__())
    del state["input_layout"]
    old = SequenceStandardScaler.__new__(SequenceStandardScaler)
    old.__setstate__(state)
    assert old.input_layout is None
    assert clone(old).get_params()["input_layout"] is None
    np.testing.assert_allclose(old.transform(X), scaler.transform(X))
    assert pickle.loads(pickle.dumps(old)).input_layout is None


def test_ragged_channels_first_error_points_at_the_option(data):
    X, y = data
    ragged_cf = to_channels_first([x[: 4 + i % 3] for i, x in enumerate(X)])
    with pytest.raises(ValueError, match="input_layout='channels_first'"):
        LMNClassifier(max_iter=1).fit(ragged_cf, y)


def test_rule_statistics():
    walk = np.random.default_rng(0).normal(size=(60, 40, 3)).cumsum(axis=1)
    stats = layout_statistics(check_sequences(walk))
    assert stats["time_corr"] > 0.8 and abs(stats["feature_corr"]) < 0.3
    assert not looks_channels_first(stats)
    flipped = layout_statistics(check_sequences(to_channels_first(walk)))
    assert flipped["feature_corr"] == pytest.approx(stats["time_corr"], abs=0.05)
    assert looks_channels_first(flipped)


def test_rule_statistics_do_not_overflow_on_huge_values():
    walk = np.random.default_rng(0).normal(size=(60, 40, 3)).cumsum(axis=1)
    expected = layout_statistics(check_sequences(walk))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning
        huge = layout_statistics(check_sequences(walk * 1e250))
    for key in ("time_corr", "feature_corr"):
        assert huge[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("container", ["object_array", "series"])
def test_channels_first_object_array_and_series_are_lists(container):
    # a 1-D object array or a pandas Series of (d, T_i) arrays is a list of
    # sequences: with input_layout='channels_first' each item is transposed
    # (it was read batch-first: equal lengths silently as (d steps, T
    # features), unequal ones refused with advice to pass the option given)
    import pandas as pd

    class Est:
        input_layout = "channels_first"

    rng = np.random.default_rng(0)
    for lengths in ([5, 5], [3, 4]):
        items = [rng.normal(size=(2, n)) for n in lengths]
        X = np.empty(len(items), dtype=object)
        X[:] = items
        if container == "series":
            X = pd.Series(list(items))
        seqs = validate_sequences(Est(), X, reset=True)
        assert seqs.n_features == 2 and seqs.lengths.tolist() == lengths
        for i, item in enumerate(items):
            np.testing.assert_array_equal(seqs.data[i, : lengths[i]], item.T)


@pytest.mark.parametrize(
    "shape, reason",
    [((50, 1, 12), "a single step"), ((50, 2, 45), "at least 20 times more")],
)
def test_shape_rule_warning_gives_the_shape_as_reason(shape, reason):
    # the warning said that neighbouring features were more alike than
    # neighbouring steps (e.g. -0.01 against 0.02) when the shape rule fired
    class Est:
        pass

    X = np.random.default_rng(0).normal(size=shape)  # uncorrelated
    with pytest.warns(UserWarning, match="looks like channels-first") as record:
        validate_sequences(Est(), X, reset=True)
    message = str(record[0].message)
    assert reason in message and "more alike" not in message


def test_ragged_nested_item_errors_name_the_item():
    # numpy's "inhomogeneous shape" error named no sequence
    bad = [np.ones((2, 2)), [[1.0, 2.0], [3.0]]]
    with pytest.raises(ValueError, match=r"X\[1\] could not be read"):
        from_channels_first(bad)
    with pytest.raises(ValueError, match=r"X\[1\] could not be read"):
        to_channels_first(bad)

    class Est:
        input_layout = "channels_first"

    with pytest.raises(ValueError, match=r"X_val\[1\] could not be read"):
        validate_sequences(Est(), bad, reset=False, input_name="X_val")
