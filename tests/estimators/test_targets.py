"""Target encoding of the sequence estimators: every kind of y, per sequence
and per time step, ragged and padded; its validation and the shape of the
predictions (``sklmn/estimators/_targets.py``)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sklmn.estimators import RNNRegressor
from sklmn.metrics import frame_level_accuracy
from tests._helpers import (
    _lmn_clf,
    _lmn_reg,
    _pad,
    _ragged,
    _sequence_targets,
    _timestep_targets,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _layout(seqs, layout):
    return seqs if layout == "ragged" else _pad(seqs)


# --------------------------------------------------------------------------- #
# Every target kind, mixed lengths, ragged and padded inputs
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("layout", ["ragged", "padded"])
@pytest.mark.parametrize(
    "kind", ["multiclass", "binary", "multilabel", "regression", "multioutput"]
)
def test_sequence_target_kinds(kind, layout):
    seqs = _ragged(n=80)
    X = _layout(seqs, layout)
    y = _sequence_targets(seqs, kind)
    is_reg = kind in ("regression", "multioutput")
    est = (_lmn_reg if is_reg else _lmn_clf)(max_iter=60, batch_size=20)
    est.fit(X, y)
    pred = est.predict(X)
    assert pred.shape == np.shape(y)
    assert est.n_features_in_ == 3
    if is_reg:
        assert pred.dtype == np.float64
        assert est.score(X, y) > 0.5
        return
    proba = est.predict_proba(X)
    assert proba.dtype == np.float64
    if kind == "multilabel":
        assert_array_equal(est.classes_, np.arange(3))
        assert proba.shape == (80, 3)
        assert set(np.unique(pred)) <= {0, 1}
        assert_array_equal(pred, (proba > 0.5).astype(int))
    else:
        assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        # columns of predict_proba follow classes_
        assert_array_equal(est.classes_[proba.argmax(axis=1)], pred)
    # chance: 1/3 (multiclass), 1/2 (binary), 1/8 (subset accuracy of 3 labels)
    assert est.score(X, y) > (0.5 if kind == "multilabel" else 0.7)


@pytest.mark.parametrize("layout", ["ragged", "padded"])
@pytest.mark.parametrize(
    "kind", ["multiclass", "binary", "multilabel", "regression", "multioutput"]
)
def test_timestep_target_kinds(kind, layout):
    seqs = _ragged(n=60)
    lengths = [len(s) for s in seqs]
    X = _layout(seqs, layout)
    y_list = _timestep_targets(seqs, kind)
    if layout == "ragged":
        y = y_list
    elif kind == "multiclass":  # string labels: an object array, None padding
        y = _pad(y_list, fill=None)
    else:
        y = _pad(y_list, fill=np.nan)
    is_reg = kind in ("regression", "multioutput")
    est = (_lmn_reg if is_reg else _lmn_clf)(
        target="timestep", max_iter=60, batch_size=20
    )
    est.fit(X, y)
    pred = est.predict(X)
    if layout == "ragged":
        assert isinstance(pred, list)
        assert [len(p) for p in pred] == lengths
        assert all(p.shape == t.shape for p, t in zip(pred, y_list, strict=True))
    else:
        assert pred.shape == np.shape(y)
        pad_mask = ~(np.arange(pred.shape[1])[None, :] < np.array(lengths)[:, None])
        padded_values = pred[pad_mask]
        if pred.dtype == object:
            assert all(v is None for v in padded_values.ravel())
        else:
            assert np.isnan(padded_values).all()
    score = est.score(X, y)
    if is_reg:
        assert score > 0.8
        return
    proba = est.predict_proba(X)
    if layout == "ragged":
        assert [p.shape[0] for p in proba] == lengths
        proba_valid = np.concatenate(proba)
    else:
        assert proba.shape[:2] == pred.shape[:2]
        assert np.isnan(proba[pad_mask]).all()
        proba_valid = proba[~pad_mask]
    assert proba_valid.dtype == np.float64
    if kind == "multilabel":
        expected = (
            frame_level_accuracy(y_list, [np.asarray(p) for p in pred])
            if (layout == "ragged")
            else frame_level_accuracy(y, pred)
        )
        assert score == pytest.approx(expected, rel=1e-12)
    else:
        assert_allclose(proba_valid.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        true = np.concatenate(y_list)
        flat = np.concatenate(pred) if layout == "ragged" else pred[~pad_mask]
        assert score == pytest.approx(np.mean(flat == true), rel=1e-12)
    assert score > 0.8


def test_timestep_padding_values_are_ignored():
    # Whatever sits at the padded steps of y never reaches the loss.
    seqs = _ragged(n=30)
    X = _pad(seqs)
    y_list = [x[:, 0] for x in seqs]
    y_nan = _pad(y_list, fill=np.nan)
    y_junk = _pad(y_list, fill=1e6)
    a = _lmn_reg(target="timestep", max_iter=5).fit(X, y_nan)
    b = _lmn_reg(target="timestep", max_iter=5).fit(X, y_junk)
    assert a.loss_curve_ == b.loss_curve_
    assert_array_equal(a.predict(X), b.predict(X))


# --------------------------------------------------------------------------- #
# Validation of the targets, shape of the predictions
# --------------------------------------------------------------------------- #
def test_invalid_targets():
    seqs = _ragged(n=6)
    clf = _lmn_clf(max_iter=1)
    with pytest.raises(ValueError, match="only one class: 0.0[.]$"):
        clf.fit(seqs, np.zeros(6))  # the plain value, not np.float64(0.0)
    with pytest.raises(ValueError, match="only one class: 'a'[.]$"):
        clf.fit(seqs, np.array(["a"] * 6, dtype=object))
    with pytest.raises(ValueError, match="multiclass-multioutput"):
        clf.fit(seqs, np.arange(12).reshape(6, 2))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(seqs, np.arange(5) % 2)
    timestep = _lmn_clf(max_iter=1, target="timestep")
    bad = [np.zeros(len(s) + 1) for s in seqs]
    with pytest.raises(ValueError, match=r"y\[0\] has \d+ time steps but sequence 0"):
        timestep.fit(seqs, bad)
    with pytest.raises(ValueError, match="binary indicators"):
        timestep.fit(seqs, [np.full((len(s), 2), 2) for s in seqs])
    reg = _lmn_reg(max_iter=1, target="timestep")
    y = _pad([np.ones(len(s)) for s in seqs])
    y[0, 0] = np.nan  # a NaN inside a valid step is an error
    with pytest.raises(ValueError, match="NaN"):
        reg.fit(seqs, y)


def test_regressor_keeps_the_shape_of_y():
    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1)
    assert est.fit(seqs, np.arange(10.0)).predict(seqs).shape == (10,)
    assert est.fit(seqs, np.arange(10.0)[:, None]).predict(seqs).shape == (10, 1)
    y = [np.ones(len(s)) for s in seqs]
    est.set_params(target="timestep").fit(_pad(seqs), _pad(y))
    assert est.predict(_pad(seqs)).ndim == 2
    y = [np.ones((len(s), 1)) for s in seqs]
    assert est.fit(_pad(seqs), _pad(y)).predict(_pad(seqs)).ndim == 3


def test_regressor_keeps_the_shape_of_y_not_of_y_val():
    # the validation target of fit is checked against y, not learned: a
    # column y_val beside a 1-D y (or the reverse) made predict return the
    # layout of y_val
    seqs = _ragged(n=10)
    y = np.arange(10.0)
    est = _lmn_reg(max_iter=1)
    est.fit(seqs, y, X_val=seqs[:3], y_val=y[:3, None])
    assert est.predict(seqs).shape == (10,)
    est.fit(seqs, y[:, None], X_val=seqs[:3], y_val=y[:3])
    assert est.predict(seqs).shape == (10, 1)
    steps = [np.ones(len(s)) for s in seqs]
    est.set_params(target="timestep").fit(
        seqs, steps, X_val=seqs[:3], y_val=[s[:, None] for s in steps[:3]]
    )
    assert est.predict(seqs)[0].shape == (len(seqs[0]),)
    with pytest.raises(ValueError, match="y_val must have as many outputs as y: got 2"):
        est.fit(
            seqs, steps, X_val=seqs[:3], y_val=[np.ones((len(s), 2)) for s in seqs[:3]]
        )


def test_a_pandas_series_of_per_step_targets_is_a_target():
    # a DataFrame column of per-sequence arrays (pandas, as X accepts it)
    # was refused as an array of shape (n,)
    pd = pytest.importorskip("pandas")
    seqs = _ragged(n=8)
    steps = [s[:, 0] for s in seqs]
    labels = [(s[:, 1] > 0).astype(int) for s in seqs]
    frame = pd.DataFrame({"steps": steps, "labels": labels}, index=np.arange(8)[::-1])
    reg = _lmn_reg(max_iter=1, target="timestep")
    pred = reg.fit(seqs, frame["steps"]).predict(seqs)
    expected = reg.fit(seqs, steps).predict(seqs)
    for a, b in zip(pred, expected, strict=True):
        assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    assert reg.score(seqs, frame["steps"]) == pytest.approx(reg.score(seqs, steps))
    clf = _lmn_clf(max_iter=1, target="timestep").fit(seqs, frame["labels"])
    assert_array_equal(clf.classes_, [0, 1])


def test_missing_per_step_regression_targets_in_object_arrays_are_refused():
    # None or NaN at a valid step of an object array (pandas, lists with
    # None) skipped the finiteness check of numeric arrays: fit ran on NaN
    # targets, "diverged" in its first epoch and kept the untrained start
    seqs = _ragged(n=6)
    reg = RNNRegressor(hidden_size=3, max_iter=1, target="timestep", random_state=0)
    for missing in (None, np.nan):
        y = [np.ones(len(s), dtype=object) for s in seqs]
        y[2][1] = missing
        with pytest.raises(ValueError, match="Input y contains NaN"):
            reg.fit(seqs, y)
        padded = _pad([np.ones(len(s)) for s in seqs], fill=None)
        padded[3, 0] = missing
        with pytest.raises(ValueError, match="Input y contains NaN"):
            reg.fit(seqs, padded)
        with pytest.raises(ValueError, match="Input y_val contains NaN"):
            reg.fit(seqs, _pad([np.ones(len(s)) for s in seqs]), X_val=seqs, y_val=y)
    assert not hasattr(reg, "net_")
    y = [np.ones(len(s), dtype=object) for s in seqs]
    y[0][0] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity"):
        reg.fit(seqs, y)
