"""Property-based fuzzing of the input contract of every public estimator.

Every malformed input must be rejected with a ValueError or TypeError whose
message names the problem; every valid (edge-case) input must give finite
outputs; the caller's data is never modified. Models are tiny and fitted once
per estimator; hypothesis runs derandomized so CI is deterministic.
"""

import copy
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

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
from sklmn.laes import LAESTransformer
from sklmn.pretraining import ProjectionFineTuning

N_FEATURES = 2
_TINY = dict(max_iter=1, random_state=0)

ESTIMATORS = {
    "LMNClassifier": lambda: LMNClassifier(hidden_size=3, memory_size=2, **_TINY),
    "LMNRegressor": lambda: LMNRegressor(hidden_size=3, memory_size=2, **_TINY),
    # the memory trained through a refitted readout, in a few steps
    "LMNClassifier-projection": lambda: LMNClassifier(
        hidden_size=3,
        memory_size=2,
        fine_tuning=ProjectionFineTuning(steps=4, every=2),
        **_TINY,
    ),
    "MultiScaleLMNClassifier": lambda: MultiScaleLMNClassifier(
        hidden_size=3, memory_size=2, n_modules=2, **_TINY
    ),
    "MultiScaleLMNRegressor": lambda: MultiScaleLMNRegressor(
        hidden_size=3, memory_size=2, n_modules=2, **_TINY
    ),
    "ENRNNClassifier": lambda: ENRNNClassifier(hidden_size=3, short_size=2, **_TINY),
    "ENRNNRegressor": lambda: ENRNNRegressor(hidden_size=3, short_size=2, **_TINY),
    "RNNClassifier": lambda: RNNClassifier(cell="gru", hidden_size=3, **_TINY),
    "RNNRegressor": lambda: RNNRegressor(cell="elman", hidden_size=3, **_TINY),
    "LAESTransformer": lambda: LAESTransformer(n_components=3),
}
NAMES = list(ESTIMATORS)

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ_FIT = settings(FUZZ, max_examples=50)

# the substring each rejection message must contain (case-insensitive)
EXPECTED = {
    "nan_inside": r"NaN",
    "inf_inside": r"infinity",
    "empty_sequence": r"empty|length 0",
    "n_features": r"features",
    "ragged_n_features": r"features",
    "string_array": r"non-numeric",
    "object_strings": r"non-numeric",
    "four_d": r"dim",
    "one_d": r"1D",
    "mixed_1d_2d": r"mixes",
    "scalar": r"array-like",
    "none": r"array-like",
    "empty_list": r"0 sample",
    "complex": r"complex",
    "nested_3d_item": r"dimensions",
}


def _is_classifier(est) -> bool:
    return hasattr(est, "predict_proba")


def _fit(est, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.fixture(scope="module")
def fitted():
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(1, 6), N_FEATURES) for _ in range(12)]
    y_class = np.array(["a", "b", "c"] * 4)
    y_reg = rng.randn(12)
    models = {}
    for name, make in ESTIMATORS.items():
        est = make()
        if name == "LAESTransformer":
            models[name] = _fit(est, X)
        else:
            models[name] = _fit(est, X, y_class if _is_classifier(est) else y_reg)
    return models


# ------------------------------------------------------------------ strategies
@st.composite
def valid_sequences(draw, n_features=N_FEATURES, min_samples=1):
    """Edge-case but valid sequences, in a random layout."""
    n = draw(st.integers(min_samples, 4))
    lengths = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    scale = draw(st.sampled_from([1.0, 1e30, -1e30, 1e-30, 0.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.RandomState(seed)
    seqs = [rng.randn(length, n_features) * scale for length in lengths]
    layout = draw(
        st.sampled_from(["padded", "list", "tuple", "nested", "float32", "int"])
    )
    if layout == "int":
        seqs = [np.round(rng.randn(*s.shape) * 5).astype(np.int64) for s in seqs]
    if layout == "padded" or (layout == "nested" and len(set(lengths)) > 1):
        T = max(lengths) + draw(st.integers(0, 2))  # extra all-NaN padding
        X = np.full((n, T, n_features), np.nan)
        for i, s in enumerate(seqs):
            X[i, : len(s)] = s
        return X
    if layout == "nested":  # equal lengths: plain nested python lists
        return [s.tolist() for s in seqs]
    if layout == "tuple":
        return tuple(seqs)
    if layout == "float32":
        return [s.astype(np.float32) for s in seqs]
    return seqs


@st.composite
def invalid_sequences(draw):
    """(kind, X) with one defect of the input contract."""
    kind = draw(st.sampled_from(sorted(EXPECTED)))
    rng = np.random.RandomState(draw(st.integers(0, 2**16)))
    n = draw(st.integers(1, 4))
    lengths = [int(v) for v in rng.randint(2, 6, size=n)]
    seqs = [rng.randn(length, N_FEATURES) for length in lengths]
    padded = draw(st.booleans())
    i = int(rng.randint(n))

    def as_input(items):
        if not padded:
            return items
        shape = (len(items), max(len(s) for s in items), items[0].shape[1])
        X = np.full(shape, np.nan, dtype=np.result_type(items[0].dtype, float))
        for j, s in enumerate(items):
            X[j, : len(s)] = s
        return X

    if kind == "nan_inside":
        t = int(rng.randint(lengths[i]))
        seqs[i][t, int(rng.randint(N_FEATURES))] = np.nan  # one feature only
        return kind, as_input(seqs)
    if kind == "inf_inside":
        t = int(rng.randint(lengths[i]))
        seqs[i][t, 0] = draw(st.sampled_from([np.inf, -np.inf]))
        return kind, as_input(seqs)
    if kind == "empty_sequence":
        if padded:
            X = as_input(seqs)
            X[i] = np.nan
            return kind, X
        seqs[i] = np.empty((0, N_FEATURES))
        return kind, seqs
    if kind == "n_features":
        d = draw(st.sampled_from([1, 3]))
        return kind, as_input([rng.randn(length, d) for length in lengths])
    if kind == "ragged_n_features":
        seqs.append(rng.randn(3, N_FEATURES + 1))
        return kind, seqs
    if kind == "string_array":
        return kind, np.array([[["a", "b"]] * 3] * n)
    if kind == "object_strings":
        X = (
            as_input(seqs).astype(object)
            if padded
            else [s.astype(object) for s in seqs]
        )
        X[i][0, 0] = "x"
        return kind, X
    if kind == "four_d":
        return kind, rng.randn(n, 3, N_FEATURES, 2)
    if kind == "one_d":
        return kind, rng.randn(5)
    if kind == "mixed_1d_2d":
        seqs.append(rng.randn(4))
        return kind, seqs
    if kind == "scalar":
        return kind, draw(st.sampled_from([1.5, 3, "abc", b"x"]))
    if kind == "none":
        return kind, None
    if kind == "empty_list":
        return kind, draw(st.sampled_from([[], (), np.empty((0, 4, 2))]))
    if kind == "complex":
        return kind, as_input([s.astype(complex) for s in seqs])
    if kind == "nested_3d_item":
        seqs[i] = rng.randn(2, 2, N_FEATURES)
        return kind, seqs
    raise AssertionError(kind)


def _snapshot(X):
    return copy.deepcopy(X)


def _assert_unchanged(before, after):
    if isinstance(before, list | tuple):
        assert type(before) is type(after) and len(before) == len(after)
        for b, a in zip(before, after, strict=True):
            _assert_unchanged(b, a)
    elif isinstance(before, np.ndarray):
        assert before.dtype == after.dtype and before.shape == after.shape
        if before.dtype.kind in "fc":
            np.testing.assert_array_equal(before, after)  # NaN == NaN here
        else:  # object arrays: NaN entries compare unequal to themselves
            same = [
                a is b or a == b or (a != a and b != b)
                for a, b in zip(before.ravel(), after.ravel(), strict=True)
            ]
            assert all(same)
    else:
        assert before == after or (before is None and after is None)


def _n_samples(X) -> int:
    return len(X)


def _check_rejected(kind, call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert re.search(EXPECTED[kind], str(info.value), re.IGNORECASE), (
        kind,
        str(info.value),
    )


def _finite(values):
    if isinstance(values, list):
        return all(np.isfinite(np.asarray(v, dtype=float)).all() for v in values)
    return bool(np.isfinite(np.asarray(values, dtype=float)).all())


# --------------------------------------------------------- fitted estimators
@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_fuzz_fitted_methods(fitted, name, data):
    """predict/predict_proba/score/transform on valid and malformed inputs."""
    est = fitted[name]
    valid = data.draw(st.booleans(), label="valid")
    if valid:
        X = data.draw(valid_sequences(), label="X")
        kind = None
    else:
        kind, X = data.draw(invalid_sequences(), label="invalid X")
    before = _snapshot(X)
    n = _n_samples(X) if valid else 0
    methods = []
    if name == "LAESTransformer":
        methods.append(("transform", lambda: est.transform(X)))
    else:
        methods.append(("predict", lambda: est.predict(X)))
        if _is_classifier(est):
            methods.append(("predict_proba", lambda: est.predict_proba(X)))
            # labels never seen in fit are just wrong predictions
            y = np.array(["a", "zzz", "b", "unseen"] * 2)[: max(n, 1)]
        else:
            y = np.linspace(-1e3, 1e3, max(n, 2))[: max(n, 1)]
        if not valid or n >= 2:  # R² of a single sample is undefined
            methods.append(("score", lambda: est.score(X, y)))
    for method, call in methods:
        if valid:
            out = call()
            if not (method == "predict" and _is_classifier(est)):
                assert _finite(out), (method, out)
            if method == "predict_proba":
                np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-9)
            if method == "score":
                assert np.isfinite(out)
        else:
            _check_rejected(kind, call)
        _assert_unchanged(before, X)


@FUZZ
@given(data=st.data())
def test_fuzz_laes_inverse_transform(fitted, data):
    """inverse_transform on valid codes and malformed codes/lengths."""
    laes = fitted["LAESTransformer"]
    k = laes.n_components_
    rng = np.random.RandomState(data.draw(st.integers(0, 2**16)))
    n = data.draw(st.integers(1, 4))
    scale = data.draw(st.sampled_from([1.0, 1e30, 1e-30, 0.0]))
    kind = data.draw(
        st.sampled_from(
            ["valid", "valid_lengths", "width", "one_d", "three_d", "strings"]
            + ["zero_length", "negative_length", "n_lengths"]
        )
    )
    Z = rng.randn(n, k) * scale
    lengths = None
    if kind == "valid_lengths":
        lengths = rng.randint(1, 6, size=n)
    elif kind == "width":
        Z = rng.randn(n, k + 1)
    elif kind == "one_d":
        Z = Z[0]
    elif kind == "three_d":
        Z = Z[:, :, None]
    elif kind == "strings":
        Z = np.array([["a"] * k] * n)
    elif kind == "zero_length":
        lengths = 0
    elif kind == "negative_length":
        lengths = [-1] * n
    elif kind == "n_lengths":
        lengths = [2] * (n + 1)
    before, lengths_before = _snapshot(Z), _snapshot(lengths)
    if kind.startswith("valid"):
        out = laes.inverse_transform(Z, lengths=lengths)
        assert _finite(out)
    else:
        with pytest.raises((ValueError, TypeError)) as info:
            laes.inverse_transform(Z, lengths=lengths)
        assert str(info.value)
    _assert_unchanged(before, Z)
    _assert_unchanged(lengths_before, lengths)


# ------------------------------------------------------------------ fitting
@st.composite
def fit_cases(draw, classifier: bool):
    """(kind, X, y): valid edge cases and malformed X or y for ``fit``."""
    kind = draw(
        st.sampled_from(
            ["valid", "valid", "bad_X", "y_length", "y_none"]
            + (
                ["one_class", "one_class_one_sample", "y_2d_multiclass"]
                + ["y_float_labels"]
                if classifier
                else ["valid_one_sample", "y_nan", "y_strings"]
            )
        )
    )
    if kind == "bad_X":
        # one feature per step is valid at fit time (only predict compares)
        bad, X = draw(invalid_sequences().filter(lambda case: case[0] != "n_features"))
        n = len(X) if hasattr(X, "__len__") else 1
        return bad, X, np.arange(n) % 2
    one_sample = kind in ("valid_one_sample", "one_class_one_sample")
    X = draw(valid_sequences(min_samples=1 if one_sample else 2))
    n = len(X)
    if one_sample:
        X = X[:1]
        n = 1
    rng = np.random.RandomState(n)
    if classifier:
        y = np.array([0, 1] * n)[:n] if n > 1 else np.array([3])
    else:
        y = rng.randn(n) * draw(st.sampled_from([1.0, 1e6, 1e-6]))
    if kind.startswith("one_class"):
        y = np.full(n, "only")
    elif kind == "y_length":
        y = np.zeros(n + 1)
    elif kind == "y_none":
        y = None
    elif kind == "y_2d_multiclass":
        y = np.tile(np.array([[0, 1, 2]]), (n, 1))
    elif kind == "y_float_labels":
        y = rng.randn(n)
    elif kind == "y_nan":
        y = y.copy()
        y[0] = np.nan
    elif kind == "y_strings":
        y = np.array(["a"] * n)
    return kind, X, y


FIT_EXPECTED = {
    # a classifier needs two classes (as scikit-learn's classifiers)
    "one_class": r"at least 2 classes",
    "one_class_one_sample": r"at least 2 classes",
    "y_length": r"inconsistent|samples|length",
    "y_none": r"y|target",
    "y_2d_multiclass": r"multilabel|multiclass",
    "y_float_labels": r"continuous|unknown label|label type",
    "y_nan": r"NaN|infinity",
    "y_strings": r"numeric|float|string",
    **EXPECTED,
}


@pytest.mark.parametrize("name", NAMES)
@FUZZ_FIT
@given(data=st.data())
def test_fuzz_fit(name, data):
    """fit on valid edge cases (then predict) and on malformed X or y."""
    torch.set_num_threads(1)
    est = ESTIMATORS[name]()
    if name == "LAESTransformer":
        est.set_params(n_components=1)  # valid for a single length-1 sequence
    classifier = _is_classifier(est)
    kind, X, y = data.draw(fit_cases(classifier), label="case")
    if name == "LAESTransformer":
        if kind.startswith(("y_", "one_class")):
            kind = "valid"  # y is ignored
        y = None
    before, y_before = _snapshot(X), _snapshot(y)
    if kind.startswith("valid"):
        try:
            _fit(est, X, y)
        except FloatingPointError as exc:
            # training on 1e30-scaled data may overflow float32: the error
            # must name the cause (and must only happen at huge magnitudes)
            assert "diverged" in str(exc)
            assert max(np.nanmax(np.abs(np.asarray(s, float))) for s in X) > 1e20
            return
        out = est.transform(X) if name == "LAESTransformer" else est.predict(X)
        assert classifier or _finite(out)
    else:
        with pytest.raises((ValueError, TypeError)) as info:
            _fit(est, X, y)
        assert re.search(FIT_EXPECTED[kind], str(info.value), re.IGNORECASE), (
            kind,
            str(info.value),
        )
    _assert_unchanged(before, X)
    _assert_unchanged(y_before, y)


@pytest.mark.parametrize(
    "bad, lengths, match",
    [(np.nan, None, "NaN"), (np.inf, None, "infinity"), (0.0, 2.5, "lengths")],
)
def test_laes_inverse_transform_rejects_non_finite(fitted, bad, lengths, match):
    """Non-finite codes and non-integer lengths must be rejected, not decoded."""
    laes = fitted["LAESTransformer"]
    Z = np.zeros((2, laes.n_components_))
    Z[1, 0] = bad
    with pytest.raises(ValueError, match=match):
        laes.inverse_transform(Z, lengths=lengths)
