"""Every pretrainer works with the estimators' default sizes on every data
shape: sizes the data cannot support are reduced (and reported), not errors."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sklmn._training import SequenceNet
from sklmn.estimators import LMNClassifier, LMNRegressor, RNNClassifier
from sklmn.nn import GRU, LMN
from sklmn.pretraining import LAESInitializer, UnrolledPretrainer
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


def _short_univariate(rng):
    return rng.randn(67, 24, 1)


def _multivariate(rng):
    return rng.randn(40, 100, 6)


def _long_univariate(rng):
    return rng.randn(36, 251, 1)


def _variable_lengths(rng):
    return [rng.randn(n, 2) for n in (10, 23, 180, 640, 1300)]


def _two_samples(rng):
    return rng.randn(2, 5, 1)


SHAPES = {
    "24x1": _short_univariate,
    "100x6": _multivariate,
    "251x1": _long_univariate,
    "10..1300x2": _variable_lengths,
    "2 samples": _two_samples,
}
PRETRAINERS = {
    "laes": LAESInitializer(random_state=0),
    "unrolled": UnrolledPretrainer(max_iter=1, random_state=0),
}


def _labels(X):
    y = np.array([int(np.asarray(x)[0, 0] > 0) for x in X])
    y[:2] = [0, 1]  # both classes, also with two samples
    return y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def _expected_components(X, size, n_features_per_unit=None):
    """min(size, total steps, longest length x features)."""
    lengths = [len(x) for x in X]
    a = (
        np.asarray(X[0]).shape[1]
        if n_features_per_unit is None
        else n_features_per_unit
    )
    return min(size, sum(lengths), max(lengths) * a)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", PRETRAINERS)
def test_default_sizes_fit_every_shape(name, shape):
    rng = np.random.RandomState(0)
    X = SHAPES[shape](rng)
    y = _labels(X)
    # the estimators' default sizes (32, 32); on long sequences the unrolled
    # network trains with a smaller hidden layer to keep the test fast
    long = shape not in ("24x1", "2 samples")
    sizes = {"hidden_size": 4} if name == "unrolled" and long else {}
    clf = LMNClassifier(
        max_iter=1, pretrainer=PRETRAINERS[name], random_state=0, **sizes
    )
    _fit(clf, X, y)
    pre = clf.pretrainer_
    a = None if name == "laes" else clf.net_.module_.recurrent.hidden_size
    p = _expected_components(X, 32, a)
    assert pre.n_components_ == p == pre.laes_.n_components_
    if p < 32:
        assert len(pre.notes_) == 1
        assert pre.notes_[0].startswith(f"n_components reduced from 32 to {p}: ")
        assert "the data support at most" in pre.notes_[0]
    else:
        assert pre.notes_ == []
    assert np.isfinite(clf.predict_proba(X)).all()


@pytest.mark.parametrize("name", PRETRAINERS)
@pytest.mark.parametrize("per_step", [False, True])
def test_regression_targets(name, per_step):
    rng = np.random.RandomState(1)
    X = rng.randn(30, 12, 1)
    y = np.cumsum(X[..., 0], axis=1) if per_step else X[:, 0, 0]
    reg = LMNRegressor(
        hidden_size=6,
        memory_size=16,
        target="timestep" if per_step else "sequence",
        max_iter=1,
        pretrainer=PRETRAINERS[name],
        random_state=0,
    )
    _fit(reg, X, y)
    p = 12 if name == "laes" else 16  # 12 steps x 1 feature; 12 x 6 hidden
    assert reg.pretrainer_.n_components_ == p
    assert np.isfinite(reg.predict(X)).all()


@pytest.mark.parametrize("name", PRETRAINERS)
def test_per_step_classification(name):
    rng = np.random.RandomState(2)
    X = [rng.randn(n, 1) for n in rng.randint(3, 9, 25)]
    y = [(np.cumsum(x[:, 0]) > 0).astype(int) for x in X]
    clf = LMNClassifier(
        hidden_size=5,
        memory_size=32,
        target="timestep",
        max_iter=1,
        pretrainer=PRETRAINERS[name],
        random_state=0,
    )
    _fit(clf, X, y)
    longest = max(len(x) for x in X)
    assert clf.pretrainer_.n_components_ == (longest if name == "laes" else 32)
    assert all(np.isfinite(p).all() for p in clf.predict_proba(X))


@pytest.mark.parametrize("name", PRETRAINERS)
def test_single_class_two_samples(name):
    # one class only: the estimators refuse it, the pretrainers do not
    seqs = check_sequences(np.random.RandomState(3).randn(2, 5, 1), dtype=np.float32)
    net = SequenceNet(LMN(1, 32, 32), 2)
    pre = PRETRAINERS[name].initialize(net, fit_context(seqs, np.zeros(2, int)))
    assert pre.n_components_ == (5 if name == "laes" else 10)
    with torch.no_grad():
        out = net(torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths))
    assert torch.isfinite(out).all()
    # constant regression targets of two samples
    reg = LMNRegressor(max_iter=1, pretrainer=PRETRAINERS[name], random_state=0)
    _fit(reg, seqs.data, np.ones(2))
    assert np.isfinite(reg.predict(seqs.data)).all()


@pytest.mark.parametrize("name", PRETRAINERS)
def test_hidden_and_memory_sizes_differ(name):
    rng = np.random.RandomState(4)
    X = rng.randn(40, 10, 3)
    y = _labels(X)
    for hidden, memory in [(4, 16), (16, 4)]:
        clf = LMNClassifier(
            hidden_size=hidden,
            memory_size=memory,
            max_iter=1,
            pretrainer=PRETRAINERS[name],
            random_state=0,
        )
        _fit(clf, X, y)
        assert clf.pretrainer_.n_components_ == memory
        assert np.isfinite(clf.predict_proba(X)).all()


@pytest.mark.parametrize("name", PRETRAINERS)
def test_n_components_above_memory_size_is_reduced(name):
    rng = np.random.RandomState(5)
    X = rng.randn(30, 6, 2)
    pre = clone(PRETRAINERS[name]).set_params(n_components=9)
    clf = LMNClassifier(hidden_size=5, memory_size=5, max_iter=1, pretrainer=pre)
    _fit(clf, X, _labels(X))
    assert clf.pretrainer_.n_components_ == 5
    assert clf.pretrainer_.notes_ == [
        "n_components reduced from 9 to 5: the network has memory_size=5"
    ]


@pytest.mark.parametrize("options", [{"bidirectional": True}, {"num_layers": 2}])
def test_laes_init_supports_bidirectional_and_stacked(options):
    rng = np.random.RandomState(6)
    X = rng.randn(20, 24, 1)
    y = _labels(X)
    clf = LMNClassifier(
        max_iter=1, pretrainer=LAESInitializer(), random_state=0, **options
    )
    _fit(clf, X, y)
    pre = clf.pretrainer_
    assert pre.n_components_ == 24
    n_dirs = 2 if options.get("bidirectional") else 1
    layers = pre.laes_layers_
    assert len(layers) == options.get("num_layers", 1)
    assert all(len(directions) == n_dirs for directions in layers)
    assert np.isfinite(clf.predict_proba(X)).all()
    # Elman RNN: the same
    rnn = RNNClassifier(
        cell="elman", max_iter=1, pretrainer=LAESInitializer(), **options
    )
    _fit(rnn, X, y)
    assert rnn.pretrainer_.n_components_ == 24
    assert np.isfinite(rnn.predict_proba(X)).all()


@pytest.mark.parametrize(
    "options, match",
    [
        ({"bidirectional": True}, "supports only bidirectional=False"),
        ({"num_layers": 2}, "supports only num_layers=1"),
        (
            {"output": "hidden", "memory_matrix": "schur"},
            "output='hidden' with memory_matrix 'free' or 'spectral'",
        ),
        ({"memory_matrix": "orthogonal"}, "memory_matrix='orthogonal'"),
    ],
)
def test_unrolled_unsupported_options_are_named(options, match):
    X = np.random.RandomState(0).randn(10, 4, 2)
    clf = LMNClassifier(
        hidden_size=3,
        memory_size=4,
        max_iter=1,
        pretrainer=UnrolledPretrainer(),
        **options,
    )
    with pytest.raises(ValueError, match=match):
        clf.fit(X, np.arange(10) % 2)


@pytest.mark.parametrize(
    "recurrent, match",
    [
        (
            LMN(2, 4, 4, output="hidden", memory_matrix="schur"),
            "output='hidden' with memory_matrix 'free' or 'spectral'",
        ),
        (LMN(2, 4, 4, memory_matrix="orthogonal"), "memory_matrix='orthogonal'"),
        (GRU(2, 4), "an Elman RNN or a linear RNN, got GRU"),
    ],
)
def test_laes_unsupported_networks_are_named(recurrent, match):
    seqs = check_sequences(np.random.RandomState(0).randn(10, 4, 2), dtype=np.float32)
    with pytest.raises(ValueError, match=match):
        LAESInitializer().initialize(
            SequenceNet(recurrent, 2), fit_context(seqs, np.arange(10) % 2)
        )
