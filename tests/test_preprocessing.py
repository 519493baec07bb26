"""Tests of sklmn.preprocessing: SequenceStandardScaler and _sequence_moments."""

import copy
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

import sklmn
from sklmn import LMNClassifier, SequenceStandardScaler
from sklmn.preprocessing import SequenceReshaper, _sequence_moments


def _ragged(seed=0, n=7, d=3, loc=5.0, spread=3.0):
    """Ragged list of (T_i, d) sequences with feature-dependent mean/scale."""
    rng = np.random.default_rng(seed)
    locs = loc * np.arange(1, d + 1)
    scales = spread * np.arange(1, d + 1)
    return [
        locs + scales * rng.standard_normal((int(rng.integers(1, 9)), d))
        for _ in range(n)
    ]


def _padded(seqs, extra=0):
    """NaN-padded (n, max T_i + extra, d) array of a list of sequences."""
    T = max(len(s) for s in seqs) + extra
    out = np.full((len(seqs), T, seqs[0].shape[1]), np.nan)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out


def _reference(seqs):
    """Independent reference: mean/std of the concatenated valid steps."""
    steps = np.concatenate([np.asarray(s).reshape(len(s), -1) for s in seqs])
    return steps.mean(axis=0), steps.std(axis=0), steps.shape[0]


# --------------------------------------------------------------------------- #
# Statistics
# --------------------------------------------------------------------------- #
def test_statistics_match_concatenated_reference():
    seqs = _ragged()
    mean, std, count = _reference(seqs)
    scaler = SequenceStandardScaler().fit(seqs)
    np.testing.assert_allclose(scaler.mean_, mean, rtol=1e-12)
    np.testing.assert_allclose(scaler.scale_, std, rtol=1e-12)
    np.testing.assert_allclose(scaler.var_, std**2, rtol=1e-12)
    assert scaler.n_samples_seen_ == count == sum(len(s) for s in seqs)
    assert isinstance(scaler.n_samples_seen_, int)
    assert scaler.n_features_in_ == 3
    assert scaler.mean_.dtype == scaler.scale_.dtype == np.float64
    # ... and scikit-learn's StandardScaler on the concatenated steps
    ref = StandardScaler().fit(np.concatenate(seqs))
    np.testing.assert_allclose(scaler.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(scaler.scale_, ref.scale_, rtol=1e-12)


def test_padded_2d_and_ragged_layouts_give_identical_statistics():
    seqs = _ragged(seed=1, d=1)
    layouts = {
        "list_2d": seqs,
        "list_1d": [s[:, 0] for s in seqs],
        "padded_3d": _padded(seqs),
        "padded_3d_extra": _padded(seqs, extra=3),
        "padded_2d": _padded(seqs)[:, :, 0],
        "tuple": tuple(seqs),
    }
    mean, std, count = _reference(seqs)
    for name, X in layouts.items():
        scaler = SequenceStandardScaler().fit(X)
        np.testing.assert_allclose(scaler.mean_, mean, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(scaler.scale_, std, rtol=1e-12, err_msg=name)
        assert scaler.n_samples_seen_ == count, name
        assert scaler.n_features_in_ == 1, name
    multi = _ragged(seed=2)
    a = SequenceStandardScaler().fit(multi)
    b = SequenceStandardScaler().fit(_padded(multi, extra=2))
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.var_, b.var_)


def test_padding_values_never_enter_the_statistics():
    # a huge value right before the padding and nothing else: if a padded step
    # were read (as 0 or NaN) the statistics would change
    X = np.full((3, 6, 2), np.nan)
    X[0, :6] = 1e3
    X[1, :2] = -1e3
    X[2, :1] = 2.0
    mean, std, count = _reference([X[0, :6], X[1, :2], X[2, :1]])
    scaler = SequenceStandardScaler().fit(X)
    np.testing.assert_allclose(scaler.mean_, mean, rtol=1e-12)
    np.testing.assert_allclose(scaler.scale_, std, rtol=1e-12)
    assert count == scaler.n_samples_seen_ == 9


def test_partial_fit_over_chunks_equals_fit():
    seqs = _ragged(seed=3, n=12, loc=1e3)
    full = SequenceStandardScaler().fit(seqs)
    chunks = [seqs[:1], _padded(seqs[1:5], extra=1), seqs[5:6], _padded(seqs[6:])]
    part = SequenceStandardScaler()
    for chunk in chunks:  # mixed layouts and lengths
        assert part.partial_fit(chunk) is part
    mean, std, count = _reference(seqs)
    for est in (part, full):
        np.testing.assert_allclose(est.mean_, mean, rtol=1e-12)
        np.testing.assert_allclose(est.var_, std**2, rtol=1e-12)
        np.testing.assert_allclose(est.scale_, std, rtol=1e-12)
    assert part.n_samples_seen_ == full.n_samples_seen_ == count
    # one time step per call: the extreme case of the parallel update
    single = SequenceStandardScaler()
    for s in seqs:
        for t in range(len(s)):
            single.partial_fit([s[t : t + 1]])
    np.testing.assert_allclose(single.mean_, mean, rtol=1e-12)
    np.testing.assert_allclose(single.scale_, std, rtol=1e-12)
    assert single.n_samples_seen_ == count


def test_partial_fit_is_stable_with_a_large_offset():
    # mean 1e6, std 1e-2: sum-of-squares formulas lose every digit here
    # (E[x^2] - E[x]^2 has an error of 1e12 * eps ~ 1e-4 = the variance); the
    # parallel update of two-pass batch moments keeps ~cond * eps = 1e-8
    seqs = _ragged(seed=4, n=12, loc=1e6, spread=1e-2)
    part = SequenceStandardScaler()
    for i in range(0, 12, 5):
        part.partial_fit(seqs[i : i + 5])
    mean, std, count = _reference(seqs)
    np.testing.assert_allclose(part.mean_, mean, rtol=1e-12)
    np.testing.assert_allclose(part.scale_, std, rtol=1e-6)
    assert part.n_samples_seen_ == count


def test_fit_resets_partial_fit_state():
    seqs = _ragged(seed=5)
    scaler = SequenceStandardScaler().partial_fit(seqs).partial_fit(seqs)
    assert scaler.n_samples_seen_ == 2 * sum(len(s) for s in seqs)
    scaler.fit(seqs[:2])
    assert scaler.n_samples_seen_ == len(seqs[0]) + len(seqs[1])
    # fit may change the number of features; partial_fit then continues
    scaler.fit(np.ones((2, 3, 5)))
    assert scaler.n_features_in_ == 5
    with pytest.raises(ValueError, match="X has 3 features per time step"):
        scaler.partial_fit(np.ones((2, 3, 3)))


def test_zero_variance_feature_gets_scale_one():
    rng = np.random.default_rng(6)
    seqs = [
        np.column_stack([rng.standard_normal(T), np.full(T, 7.0), np.full(T, 0.1)])
        for T in (3, 5, 2)
    ]
    scaler = SequenceStandardScaler().fit(seqs)
    assert scaler.var_[1] == 0.0
    np.testing.assert_array_equal(scaler.scale_[1:], 1.0)  # 0.1: rounding only
    ref = StandardScaler().fit(np.concatenate(seqs))
    np.testing.assert_allclose(scaler.scale_, ref.scale_, rtol=1e-12)
    Z = scaler.transform(seqs)
    for z in Z:
        np.testing.assert_allclose(z[:, 1:], 0.0, atol=1e-15)
        assert np.isfinite(z).all()
    back = scaler.inverse_transform(Z)
    for b, s in zip(back, seqs, strict=True):
        np.testing.assert_allclose(b, s, rtol=1e-12)
    # a single time step in total: every feature is constant
    one = SequenceStandardScaler().fit([[3.0]])
    assert one.scale_.tolist() == [1.0] and one.mean_.tolist() == [3.0]


@pytest.mark.parametrize(
    ("with_mean", "with_std"),
    [(True, True), (True, False), (False, True), (False, False)],
)
def test_with_mean_with_std(with_mean, with_std):
    seqs = _ragged(seed=7)
    mean, std, _ = _reference(seqs)
    scaler = SequenceStandardScaler(with_mean=with_mean, with_std=with_std).fit(seqs)
    # the statistics are always computed; scale_ only when used
    np.testing.assert_allclose(scaler.mean_, mean, rtol=1e-12)
    np.testing.assert_allclose(scaler.var_, std**2, rtol=1e-12)
    if with_std:
        np.testing.assert_allclose(scaler.scale_, std, rtol=1e-12)
    else:
        assert scaler.scale_ is None
    Z = scaler.transform(seqs)
    for z, s in zip(Z, seqs, strict=True):
        expected = (s - (mean if with_mean else 0.0)) / (std if with_std else 1.0)
        np.testing.assert_allclose(z, expected, rtol=1e-12, atol=1e-12)
    for b, s in zip(scaler.inverse_transform(Z), seqs, strict=True):
        np.testing.assert_allclose(b, s, rtol=1e-12)


# --------------------------------------------------------------------------- #
# Layouts
# --------------------------------------------------------------------------- #
def test_padded_array_stays_padded_with_nan():
    seqs = _ragged(seed=8)
    X = _padded(seqs, extra=2)  # padding shared by all sequences is kept too
    scaler = SequenceStandardScaler().fit(X)
    Z = scaler.transform(X)
    assert isinstance(Z, np.ndarray) and Z.shape == X.shape
    assert Z.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(Z), np.isnan(X))
    mean, std, _ = _reference(seqs)
    for i, s in enumerate(seqs):
        np.testing.assert_allclose(Z[i, : len(s)], (s - mean) / std, rtol=1e-12)
    # the output is valid input again, with the same padding
    back = scaler.inverse_transform(Z)
    np.testing.assert_allclose(back, X, rtol=1e-12, equal_nan=True)
    assert np.shares_memory(Z, X) is False


def test_2d_univariate_stays_2d():
    seqs = _ragged(seed=9, d=1)
    X = _padded(seqs, extra=1)[:, :, 0]
    scaler = SequenceStandardScaler().fit(X)
    Z = scaler.transform(X)
    assert Z.shape == X.shape and Z.ndim == 2
    np.testing.assert_array_equal(np.isnan(Z), np.isnan(X))
    np.testing.assert_allclose(
        scaler.inverse_transform(Z), X, rtol=1e-12, equal_nan=True
    )
    # a full (unpadded) 2-D array, e.g. from tabular code
    X = np.arange(12.0).reshape(3, 4)
    Z = SequenceStandardScaler().fit_transform(X)
    assert Z.shape == (3, 4) and not np.isnan(Z).any()
    np.testing.assert_allclose(Z.ravel(), (X.ravel() - 5.5) / X.std(), rtol=1e-12)


def test_list_stays_list_of_same_shapes():
    seqs = _ragged(seed=10)
    scaler = SequenceStandardScaler().fit(seqs)
    for X in (seqs, [s[:, 0] for s in seqs]):
        scaler_x = SequenceStandardScaler().fit(X)
        Z = scaler_x.transform(X)
        assert isinstance(Z, list) and len(Z) == len(X)
        assert [z.shape for z in Z] == [x.shape for x in X]
        assert all(z.dtype == np.float64 for z in Z)
        back = scaler_x.inverse_transform(Z)
        assert [b.shape for b in back] == [x.shape for x in X]
        for b, x in zip(back, X, strict=True):
            np.testing.assert_allclose(b, x, rtol=1e-12)
    # an item with trailing all-NaN steps keeps its shape and its NaN
    X = [seqs[0], np.vstack([seqs[1], np.full((2, 3), np.nan)])]
    Z = scaler.transform(X)
    assert [z.shape for z in Z] == [x.shape for x in X]
    np.testing.assert_array_equal(np.isnan(Z[1]), np.isnan(X[1]))


def test_integer_and_float32_input_give_float64():
    X = np.arange(24, dtype=np.int64).reshape(2, 4, 3)
    Z = SequenceStandardScaler().fit_transform(X)
    assert Z.dtype == np.float64
    Z32 = SequenceStandardScaler().fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float64
    np.testing.assert_allclose(Z32, Z, rtol=1e-6)


def test_nested_lists_are_read_like_arrays():
    X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    Z = SequenceStandardScaler().fit_transform(X)
    assert isinstance(Z, np.ndarray) and Z.shape == (2, 3)


def test_caller_data_is_never_modified():
    seqs = _ragged(seed=11)
    X3 = _padded(seqs, extra=1)
    X2 = X3[:, :, 0].copy()
    inputs = [seqs, X3, X2, [s[:, 0] for s in seqs]]
    copies = copy.deepcopy(inputs)
    for X in inputs:
        scaler = SequenceStandardScaler().fit(X)
        scaler.partial_fit(X)
        Z = scaler.transform(X)
        scaler.inverse_transform(X)
        scaler.inverse_transform(Z)
        outs = Z if isinstance(Z, list) else [Z]
        ins = X if isinstance(X, list) else [X]
        assert not any(np.shares_memory(o, i) for o in outs for i in ins)
    for X, X_copy in zip(inputs, copies, strict=True):
        if isinstance(X, list):
            for a, b in zip(X, X_copy, strict=True):
                np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(X, X_copy)


# --------------------------------------------------------------------------- #
# scikit-learn integration
# --------------------------------------------------------------------------- #
def test_pipeline_with_sklmn_estimator():
    rng = np.random.RandomState(0)
    X = [1e3 + 500 * rng.randn(rng.randint(2, 6), 2) for _ in range(24)]
    y = np.array([int(x[0, 0] > 1e3) for x in X])
    params = dict(hidden_size=4, memory_size=4, max_iter=3, random_state=0)
    pipe = make_pipeline(SequenceStandardScaler(), LMNClassifier(**params))
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (24,)
    assert pipe.predict_proba(X).shape == (24, 2)
    scaler = pipe[0]
    assert scaler.n_samples_seen_ == sum(len(x) for x in X)
    # the pipeline is the estimator fit on the standardized sequences
    manual = LMNClassifier(**params).fit(scaler.transform(X), y)
    np.testing.assert_allclose(
        pipe.predict_proba(X), manual.predict_proba(scaler.transform(X)), rtol=1e-6
    )


def test_clone_get_params_and_feature_names():
    scaler = SequenceStandardScaler(with_mean=False)
    assert scaler.get_params() == {
        "with_mean": False,
        "with_std": True,
        "input_layout": None,
    }
    scaler.fit(np.ones((2, 3, 2)))
    cloned = clone(scaler)
    assert cloned.get_params() == scaler.get_params()
    assert not hasattr(cloned, "mean_")
    assert repr(cloned) == "SequenceStandardScaler(with_mean=False)"
    assert scaler.get_feature_names_out().tolist() == ["x0", "x1"]
    assert scaler.get_feature_names_out(["a", "b"]).tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="input_features"):
        scaler.get_feature_names_out(["a"])
    assert "SequenceStandardScaler" in sklmn.__all__
    with pytest.raises(ValueError, match="returns sequences, not a table"):
        scaler.set_output(transform="pandas")  # outputs are sequences


def test_inverse_transform_of_a_dataframe_round_trip_does_not_warn():
    # transform returns an array; inverse_transform checked its (missing)
    # column names against those of fit and warned, where scikit-learn's
    # scalers check no names in inverse_transform
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.arange(12.0).reshape(3, 4) ** 1.5, columns=list("abcd"))
    scaler = SequenceStandardScaler().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = scaler.inverse_transform(scaler.transform(X))
    np.testing.assert_allclose(back, X.to_numpy(), rtol=1e-12, atol=1e-12)
    # transform still checks the names, as scikit-learn does
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        scaler.transform(X.to_numpy())


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #
def test_wrong_number_of_features_names_both_numbers():
    scaler = SequenceStandardScaler().fit(np.ones((2, 4, 2)))
    msg = r"X has 3 features per time step, but SequenceStandardScaler is expecting 2"
    with pytest.raises(ValueError, match=msg):
        scaler.inverse_transform(np.ones((2, 4, 3)))
    with pytest.raises(ValueError, match=msg):
        scaler.transform([np.ones((4, 3))])
    with pytest.raises(ValueError, match="X has 1 features per time step"):
        scaler.inverse_transform(np.ones((2, 4)))  # 2-D: univariate sequences


def test_errors():
    with pytest.raises(NotFittedError):
        SequenceStandardScaler().transform(np.ones((1, 2, 1)))
    with pytest.raises(NotFittedError):
        SequenceStandardScaler().inverse_transform(np.ones((1, 2, 1)))
    with pytest.raises(InvalidParameterError, match="with_mean"):
        SequenceStandardScaler(with_mean="yes").fit(np.ones((1, 2, 1)))
    X = np.ones((2, 4, 1))
    X[0, 1, 0] = np.nan  # NaN inside a sequence, not padding
    with pytest.raises(ValueError, match="contains NaN inside sequence 0"):
        SequenceStandardScaler().fit(X)
    scaler = SequenceStandardScaler().fit(np.ones((2, 4, 1)))
    with pytest.raises(ValueError, match="infinity inside sequence 1"):
        scaler.transform([[1.0], [np.inf, 2.0]])


def test_failed_fit_leaves_a_fitted_scaler_as_it_was():
    # fit reset the statistics and n_features_in_ before the data were
    # refused: a fitted scaler lost its fit
    X = np.arange(24.0).reshape(4, 3, 2)
    scaler = SequenceStandardScaler().fit(X)
    before = scaler.transform(X)
    huge = np.full((2, 3, 3), 1e300)
    huge[0, 0] = -1e300  # a variance that overflows float64
    with pytest.raises(ValueError, match="too large"):
        scaler.fit(huge)
    with pytest.raises(ValueError, match="too large"):
        scaler.partial_fit(np.full((2, 3, 2), 1e300) * [1.0, -1.0])
    assert scaler.n_features_in_ == 2
    assert scaler.n_samples_seen_ == 12
    np.testing.assert_allclose(scaler.transform(X), before, rtol=1e-12)


def test_scaler_without_std_round_trips_through_the_safe_format(tmp_path):
    # scale_ is None with with_std=False, which load refused as a corrupt file
    X = np.arange(24.0).reshape(4, 3, 2) ** 1.5
    scaler = SequenceStandardScaler(with_std=False).fit(X)
    sklmn.persistence.save(scaler, tmp_path / "scaler.skops")
    loaded = sklmn.persistence.load(tmp_path / "scaler.skops")
    assert loaded.scale_ is None
    np.testing.assert_allclose(loaded.transform(X), scaler.transform(X), rtol=1e-12)


# --------------------------------------------------------------------------- #
# _sequence_moments (the helper without the scikit-learn layer)
# --------------------------------------------------------------------------- #
def test_sequence_moments_matches_reference_and_ignores_padding():
    seqs = _ragged(seed=12)
    lengths = np.array([len(s) for s in seqs])
    mean, std, count = _reference(seqs)
    for fill in (np.nan, 0.0, 1e300):
        data = np.nan_to_num(_padded(seqs, extra=1), nan=fill)
        m, v, n = _sequence_moments(data, lengths)
        np.testing.assert_allclose(m, mean, rtol=1e-12)
        np.testing.assert_allclose(v, std**2, rtol=1e-12)
        assert n == count
        assert m.dtype == v.dtype == np.float64
    # lengths=None: every step is valid; float32 data accumulates in float64
    data = np.random.default_rng(13).standard_normal((3, 4, 2)).astype(np.float32)
    m, v, n = _sequence_moments(data)
    flat = data.reshape(-1, 2).astype(np.float64)
    np.testing.assert_allclose(m, flat.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(v, flat.var(axis=0), rtol=1e-12)
    assert n == 12 and m.dtype == np.float64


def test_sequence_moments_errors():
    with pytest.raises(ValueError, match=r"padded array of shape \(n_samples"):
        _sequence_moments(np.zeros((2, 3)), [3, 3])
    with pytest.raises(ValueError, match="lengths must be 2 integers"):
        _sequence_moments(np.zeros((2, 3, 1)), [3])
    with pytest.raises(ValueError, match="lengths must be 2 integers"):
        _sequence_moments(np.zeros((2, 3, 1)), [1.5, 2.0])
    with pytest.raises(ValueError, match=r"lengths must lie in 0\.\.3"):
        _sequence_moments(np.zeros((2, 3, 1)), [4, 1])
    with pytest.raises(ValueError, match="no valid time step"):
        _sequence_moments(np.zeros((2, 3, 1)), [0, 0])


@pytest.mark.parametrize(
    "step", [SequenceStandardScaler(), SequenceReshaper(n_features=1)]
)
def test_pipeline_set_output_configures_the_sequence_transformers(step):
    # Pipeline.set_output configures every step: without set_output the
    # sequence transformers made it fail even for the default output
    pipe = make_pipeline(clone(step), LMNClassifier())
    assert pipe.set_output(transform="default") is pipe
    assert pipe.set_output(transform=None) is pipe
    name = type(step).__name__
    with pytest.raises(ValueError, match=f"{name} returns sequences.*'pandas'"):
        pipe.set_output(transform="pandas")

