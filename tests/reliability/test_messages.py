"""Error messages that name the actual problem (third attack)."""

import threading

import numpy as np
import pandas as pd
import pytest
from skorch.callbacks import Callback

from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.laes import LAESTransformer
from tests._helpers import _quiet


def _clf(**kwargs):
    return LMNClassifier(
        hidden_size=3, memory_size=2, max_iter=1, random_state=0, **kwargs
    )


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    return rng.randn(8, 4, 2), np.arange(8) % 2


def test_y_val_class_not_in_y(data):
    X, y = data
    match = r"y_val contains classes \[5\] that are not in y"
    with pytest.raises(ValueError, match=match):
        _clf().fit(X, y, X_val=X[:2], y_val=np.array([0, 5]))


def test_all_nan_x_val_is_named(data):
    X, y = data
    with pytest.raises(ValueError, match="Sequence 0 of X_val is empty"):
        _clf().fit(X, y, X_val=np.full((2, 4, 2), np.nan), y_val=np.array([0, 1]))


def test_partial_fit_after_fit_with_new_labels(data):
    X, y = data
    clf = _quiet(_clf().fit, X, y)
    with pytest.raises(ValueError, match=r"labels \[2\].*cannot add classes"):
        clf.partial_fit(X, np.arange(8) % 3)


def test_meta_device_is_refused_before_training(data):
    X, y = data
    with pytest.raises(ValueError, match="device='meta' cannot train"):
        _clf(device="meta").fit(X, y)


class _Locked(Callback):
    def __init__(self):
        self.lock = threading.Lock()


def test_callback_that_cannot_be_copied_is_named(data):
    X, y = data
    with pytest.raises(TypeError, match=r"callback 'locked' \(_Locked\).*deep copy"):
        _clf(callbacks=[("locked", _Locked())]).fit(X, y)
    with pytest.raises(TypeError, match=r"callback at index 0 \(_Locked\)"):
        _clf(callbacks=[_Locked()]).fit(X, y)


def test_pd_na_in_trailing_steps_is_padding():
    frame = pd.DataFrame({"a": [1.0, 2.0, pd.NA], "b": [3.0, 4.0, pd.NA]}, dtype=object)
    seqs = [frame.to_numpy(), np.ones((3, 2))]
    laes = LAESTransformer(1).fit(seqs)
    assert laes.n_steps_total_ == 5
    with pytest.raises(ValueError, match=r"missing value \(None or pd.NA\) at time"):
        LAESTransformer(1).fit([frame.iloc[[2, 0, 1]].to_numpy(), np.ones((3, 2))])


def test_none_in_object_array_is_reported_as_missing(data):
    X, y = data
    X = X.astype(object)
    X[1, 2, 0] = None
    with pytest.raises(
        ValueError, match=r"missing value \(None or pd.NA\) inside sequence 1"
    ):
        _clf().fit(X, y)


def test_finite_value_too_large_for_float32_is_named(data):
    X, y = data
    X = X.copy()
    X[0, 1, 1] = 1e308
    match = r"1e\+308 at index \(0, 1, 1\), too large for float32"
    with pytest.raises(ValueError, match=match):
        _clf().fit(X, y)
    with pytest.raises(ValueError, match="too large for float32"):
        reg = LMNRegressor(hidden_size=2, memory_size=2, max_iter=1)
        _quiet(reg.fit, *data).predict(X)
