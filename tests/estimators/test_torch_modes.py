"""The estimators train and predict whatever torch's global modes: default
dtype, grad mode, inference mode."""

import numpy as np
import pytest
import torch

from sklmn.estimators import (
    LMNRegressor,
    MultiScaleLMNClassifier,
    RNNClassifier,
    StreamLanguageModel,
)
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining


@pytest.fixture
def float64_default():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def _data():
    rng = np.random.RandomState(0)
    return rng.randn(10, 5, 2), np.array([0, 1] * 5), rng.randn(10)


def _models():
    kw = dict(max_iter=2, random_state=0)
    return [
        (LMNRegressor(hidden_size=3, **kw), "regression"),
        (RNNClassifier(hidden_size=3, **kw), "classification"),
        (
            MultiScaleLMNClassifier(
                incremental=IncrementalTraining(epochs_per_module=1), **kw
            ),
            "classification",
        ),
    ]


def _outputs(model, kind, X, y_class, y_reg):
    if kind == "classification":
        return model.fit(X, y_class).predict_proba(X)
    return model.fit(X, y_reg).predict(X)


def test_fit_under_a_float64_default_equals_the_float32_fit(float64_default):
    X, y_class, y_reg = _data()
    torch.set_default_dtype(torch.float32)
    expected = [_outputs(m, k, X, y_class, y_reg) for m, k in _models()]
    torch.set_default_dtype(torch.float64)
    for (model, kind), want in zip(_models(), expected, strict=True):
        # the fit failed ("mat1 and mat2 must have the same dtype")
        got = _outputs(model, kind, X, y_class, y_reg)
        assert {p.dtype for p in model.net_.module_.parameters()} == {torch.float32}
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
        assert torch.get_default_dtype() == torch.float64  # restored


def test_stream_model_under_a_float64_default_equals_the_float32_fit(
    float64_default,
):
    text = "the cat sat on the mat. " * 5
    kw = dict(hidden_size=4, embedding_dim=3, bptt=5, batch_size=2, max_iter=1)
    torch.set_default_dtype(torch.float32)
    want = StreamLanguageModel(random_state=0, **kw).fit(text).score(text)
    torch.set_default_dtype(torch.float64)
    got = StreamLanguageModel(random_state=0, **kw).fit(text).score(text)
    assert got == pytest.approx(want, abs=1e-6)
    assert torch.get_default_dtype() == torch.float64


def test_model_loaded_under_a_float64_default_trains_on(tmp_path, float64_default):
    X, _, y = _data()
    torch.set_default_dtype(torch.float32)
    model = LMNRegressor(hidden_size=3, max_iter=1, random_state=0).fit(X, y)
    path = tmp_path / "lmn.sklmn"
    save(model, path)
    torch.set_default_dtype(torch.float64)
    loaded = load(path)
    # the network was rebuilt in float64: partial_fit and a warm start failed
    assert {p.dtype for p in loaded.net_.module_.parameters()} == {torch.float32}
    np.testing.assert_allclose(loaded.predict(X), model.predict(X), atol=1e-12)
    loaded.partial_fit(X, y)
    assert np.all(np.isfinite(loaded.predict(X)))
    loaded.set_params(warm_start=True).fit(X, y)
    assert np.all(np.isfinite(loaded.predict(X)))


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_fit_and_predict_inside_no_grad_or_inference_mode(mode):
    X, y_class, y_reg = _data()
    expected = [_outputs(m, k, X, y_class, y_reg) for m, k in _models()]
    for (model, kind), want in zip(_models(), expected, strict=True):
        with mode():
            # failed at the first backward pass ("element 0 of tensors does
            # not require grad", "Inference tensors do not track version
            # counter")
            got = _outputs(model, kind, X, y_class, y_reg)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    fitted = LMNRegressor(hidden_size=3, max_iter=1, random_state=0).fit(X, y_reg)
    with mode():
        # a float64 copy made in inference mode held inference tensors
        got = fitted.predict(X)
    np.testing.assert_allclose(fitted.predict(X), got, rtol=0, atol=1e-12)


def test_stream_model_fits_inside_no_grad():
    text = "the cat sat on the mat. " * 5
    kw = dict(hidden_size=4, embedding_dim=3, bptt=5, batch_size=2, max_iter=1)
    want = StreamLanguageModel(random_state=0, **kw).fit(text).score(text)
    with torch.no_grad():
        got = StreamLanguageModel(random_state=0, **kw).fit(text).score(text)
    assert got == pytest.approx(want, abs=1e-12)
