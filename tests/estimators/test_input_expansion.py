"""``input_expansion`` of the LMN classifiers: the fitted map against a
straightforward computation, the ``'auto'`` choice between two starts, and
the expansion's path through prediction, warm starts and persistence."""

import pickle
import warnings

import numpy as np
import pytest

from sklmn import persistence
from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier
from sklmn.estimators._expansion import AUTO_STEPS, expand_inputs, fit_expansion
from sklmn.utils.sequences import Sequences
from tests._helpers import _amplitude_task


def _first_step_task(n=80, T=12, seed=0):
    """The class is the sign of the first step: the memory of the input
    alone suffices."""
    rng = np.random.RandomState(seed)
    X = [rng.randn(T, 1) for _ in range(n)]
    return X, np.array([int(x[0, 0] > 0) for x in X])


def _fit(cls, X, y, **params):
    sizes = (
        dict(hidden_size=8, memory_size=8)
        if cls is LMNClassifier
        else dict(hidden_size=8, memory_size=2)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**{**sizes, "max_iter": 5, "random_state": 0, **params}).fit(X, y)


def _ragged(seed=0, d=2):
    rng = np.random.RandomState(seed)
    lengths = np.array([5, 2, 4])
    data = rng.randn(3, 5, d)
    data[np.arange(5)[None, :] >= lengths[:, None]] = 0.0
    return Sequences(data, lengths, ragged=True, univariate=False)


# ------------------------------------------------------------------- the map
def test_fit_expansion_matches_sorted_values():
    seqs = _ragged()
    K = 4
    centers, widths, mean, scale = fit_expansion(seqs, K)
    for j in range(2):
        values = np.sort(
            np.concatenate([seqs.data[i, :n, j] for i, n in enumerate(seqs.lengths)])
        )
        want = [np.quantile(values, (k + 0.5) / K) for k in range(K)]
        np.testing.assert_allclose(centers[:, j], want, rtol=1e-12)
        gaps = [want[k + 1] - want[k] for k in range(K - 1)]
        np.testing.assert_allclose(widths[j], sum(gaps) / len(gaps), rtol=1e-12)
        for k in range(K):
            out = [np.tanh((v - want[k]) / widths[j]) for v in values]
            np.testing.assert_allclose(mean[k, j], np.mean(out), rtol=1e-10)
            np.testing.assert_allclose(scale[k, j], np.std(out), rtol=1e-10)


def test_fit_expansion_of_a_constant_feature_is_finite():
    data = np.zeros((2, 4, 1)) + 3.0
    seqs = Sequences(data, np.array([4, 4]), ragged=False, univariate=False)
    centers, widths, mean, scale = fit_expansion(seqs, 3)
    assert np.all(widths == 1.0) and np.all(scale == 1.0)
    out = expand_inputs(seqs, (centers, widths, mean, scale)).data
    assert np.all(np.isfinite(out)) and np.all(out[..., 1:] == 0.0)


def test_expand_inputs_matches_a_loop_and_leaves_padding_zero():
    seqs = _ragged(seed=1)
    expansion = fit_expansion(seqs, 3)
    centers, widths, mean, scale = expansion
    before = seqs.data.copy()
    out = expand_inputs(seqs, expansion)
    np.testing.assert_array_equal(seqs.data, before)  # the input is not modified
    assert out.data.shape == (3, 5, 2 * 4)
    for i, n in enumerate(seqs.lengths):
        for t in range(5):
            if t >= n:
                assert np.all(out.data[i, t] == 0.0)
                continue
            x = seqs.data[i, t]
            want = list(x)
            for k in range(3):  # step k of every feature, then step k + 1
                for j in range(2):
                    step = np.tanh((x[j] - centers[k, j]) / widths[j])
                    want.append((step - mean[k, j]) / scale[k, j])
            np.testing.assert_allclose(out.data[i, t], want, rtol=1e-12, atol=1e-12)


def test_expanded_training_steps_are_standardized():
    seqs = _ragged(seed=2)
    out = expand_inputs(seqs, fit_expansion(seqs, 5))
    steps = out.data[..., 2:][np.arange(5)[None, :] < seqs.lengths[:, None]]
    np.testing.assert_allclose(steps.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(steps.std(axis=0), 1.0, rtol=1e-8)


# ------------------------------------------------------------ the estimators
@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_auto_keeps_the_expansion_where_the_amplitudes_tell_the_classes(cls):
    X, y = _amplitude_task()
    Xt, yt = _amplitude_task(seed=1)
    auto = _fit(cls, X, y)
    none = _fit(cls, X, y, input_expansion="none")
    assert auto.input_expansion_ == AUTO_STEPS
    (k0, s0), (k1, s1) = auto.input_expansion_scores_
    assert (k0, k1) == (0, AUTO_STEPS) and s1 > s0 + 1 / len(X)
    assert auto.expansion_centers_.shape == (AUTO_STEPS, 1)
    assert auto.net_.module_.recurrent.input_size == 1 + AUTO_STEPS
    assert none.input_expansion_ == 0 and none.input_expansion_scores_ is None
    assert auto.score(Xt, yt) > none.score(Xt, yt)


def test_auto_that_keeps_the_first_start_fits_as_none():
    # the multi-scale LMN's first start wins here: the fit must then be
    # exactly the one without the expansion (estimator and torch's generator
    # restored after the second start)
    X, y = _first_step_task()
    auto = _fit(MultiScaleLMNClassifier, X, y)
    none = _fit(MultiScaleLMNClassifier, X, y, input_expansion="none")
    assert auto.input_expansion_ == 0 and auto.expansion_centers_ is None
    (k0, s0), (k1, s1) = auto.input_expansion_scores_
    assert s1 <= s0 + 1 / len(X)
    np.testing.assert_allclose(auto.loss_curve_, none.loss_curve_, rtol=1e-6)
    np.testing.assert_allclose(
        auto.predict_proba(X), none.predict_proba(X), rtol=1e-5, atol=1e-7
    )


def test_auto_without_a_start_compares_nothing():
    X, y = _amplitude_task(n=40)
    est = _fit(LMNClassifier, X, y, pretrainer=None)
    assert est.input_expansion_ == 0 and est.input_expansion_scores_ is None


def test_auto_skips_many_features():
    rng = np.random.RandomState(0)
    X = [rng.randn(6, 17) for _ in range(30)]
    y = np.arange(30) % 2
    est = _fit(LMNClassifier, X, y)
    assert est.input_expansion_ == 0 and est.input_expansion_scores_ is None


def test_partial_fit_reads_auto_as_none():
    X, y = _amplitude_task(n=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = LMNClassifier(hidden_size=8, memory_size=8, random_state=0)
        est.partial_fit(X, y, classes=[0, 1])
    assert est.input_expansion_ == 0


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_int_expansion_through_prediction_warm_start_and_files(cls, tmp_path):
    X, y = _amplitude_task(n=40)
    X_before = [x.copy() for x in X]
    est = _fit(cls, X, y, input_expansion=3)
    for x, x0 in zip(X, X_before, strict=True):
        np.testing.assert_array_equal(x, x0)  # user data is not modified
    assert est.input_expansion_ == 3 and est.input_expansion_scores_ is None
    assert est.net_.module_.recurrent.input_size == 4
    proba = est.predict_proba(X)
    assert proba.shape == (40, 2) and np.all(np.isfinite(proba))
    # the network reads the expanded, standardized inputs
    seqs = est._standardized_inputs(
        Sequences(
            np.stack(X).astype(np.float32),
            np.full(40, 20),
            ragged=False,
            univariate=False,
        )
    )
    assert seqs.data.shape == (40, 20, 4)
    centers = est.expansion_centers_.copy()
    # a warm start keeps the fitted map
    est.set_params(warm_start=True, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    np.testing.assert_array_equal(est.expansion_centers_, centers)
    proba = est.predict_proba(X)
    path = tmp_path / "model.sklmn"
    persistence.save(est, path)
    loaded = persistence.load(path)
    assert loaded.input_expansion_ == 3
    np.testing.assert_allclose(loaded.predict_proba(X), proba, rtol=1e-5, atol=1e-7)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(again.predict_proba(X), proba, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "always", None])
def test_bad_input_expansion_is_named(bad):
    X, y = _amplitude_task(n=20)
    with pytest.raises(ValueError, match="input_expansion"):
        LMNClassifier(input_expansion=bad).fit(X, y)


def test_expand_inputs_in_blocks_gives_the_same_values(monkeypatch):
    from sklmn.estimators import _expansion

    seqs = _ragged(seed=3)
    expansion = fit_expansion(seqs, 4)
    whole = expand_inputs(seqs, expansion).data
    monkeypatch.setattr(_expansion, "_BLOCK_VALUES", 1)  # one sequence a time
    np.testing.assert_array_equal(expand_inputs(seqs, expansion).data, whole)


def test_a_second_start_that_fails_leaves_the_first(monkeypatch):
    # the expanded start raising (here a ValueError from its preparation)
    # must not fail a fit whose first start succeeded
    X, y = _amplitude_task()
    none = _fit(LMNClassifier, X, y, input_expansion="none")

    def broken(self, X, y, data):
        raise ValueError("the LAES of the expanded inputs failed")

    monkeypatch.setattr(LMNClassifier, "_second_start", broken)
    auto = _fit(LMNClassifier, X, y)
    assert auto.input_expansion_ == 0 and len(auto.input_expansion_scores_) == 1
    np.testing.assert_allclose(auto.loss_curve_, none.loss_curve_, rtol=1e-6)


def test_auto_fits_no_second_start_when_the_first_leaves_no_room(monkeypatch):
    # the first start cross-validates at 1.0 on these classes (the level of
    # the series, far apart): no accuracy passes 1.0 + 1/n, so the second
    # start must not be fitted and the fit is the one of 'none'
    rng = np.random.RandomState(0)
    y = np.arange(60) % 2
    X = [0.3 * rng.randn(10, 1) + (3.0 if c else -3.0) for c in y]
    none = _fit(LMNClassifier, X, y, input_expansion="none")
    assert none.pretrainer_.readout_cv_score_ + 1 / len(X) >= 1.0

    def refused(self, X, y, data):
        raise AssertionError("the second start was fitted")

    monkeypatch.setattr(LMNClassifier, "_second_start", refused)
    auto = _fit(LMNClassifier, X, y)
    assert auto.input_expansion_ == 0
    ((k, score),) = auto.input_expansion_scores_
    assert k == 0
    assert score == pytest.approx(none.pretrainer_.readout_cv_score_, abs=1e-12)
    np.testing.assert_allclose(auto.loss_curve_, none.loss_curve_, rtol=1e-6)
