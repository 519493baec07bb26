"""The spline readout: its basis against scikit-learn's SplineTransformer,
the logits written into the network against scikit-learn's logistic
regression, the cross-validated choice, and the estimators that carry it
(fit, save and load, partial_fit, the option off)."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer

from sklmn import persistence
from sklmn._training import _projection
from sklmn._training._projection import (
    VariableProjection,
    _spline_accuracy,
    choose_splines,
    write_splines_,
)
from sklmn._training._splines import (
    SplineReadout,
    hat_basis,
    quantile_knots,
    ramp_weights,
)
from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier
from sklmn.nn import LMN
from sklmn.pretraining import ProjectionFineTuning
from sklmn.training import SequenceNet


def _features(n=50, d=3, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]


@pytest.mark.parametrize("n_knots", [2, 5, 9])
def test_the_basis_is_scikit_learns_degree_one_splines(n_knots):
    F = _features()
    reference = SplineTransformer(
        n_knots=n_knots, degree=1, knots="quantile", extrapolation="constant"
    ).fit(F)
    knots = quantile_knots(F, n_knots)
    # new rows inside and beyond the training range (constant beyond)
    new = np.vstack([F, _features(20, seed=1) * 3.0])
    np.testing.assert_allclose(
        hat_basis(new, knots), reference.transform(new), atol=1e-12
    )
    for j, spline in enumerate(reference.bsplines_):
        np.testing.assert_allclose(knots[j], spline.t[1:-1], atol=1e-12)


def test_repeated_knots_are_steps_and_the_hats_sum_to_one():
    F = np.array([[0.0], [0.0], [0.0], [1.0], [2.0]])
    knots = quantile_knots(F, 5)
    assert knots.tolist() == [[0.0, 0.0, 0.0, 1.0, 2.0]]
    hats = hat_basis(np.array([[-1.0], [0.0], [0.5], [9.0]]), knots)
    np.testing.assert_allclose(hats.sum(1), 1.0)
    np.testing.assert_allclose(hats[1], [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(hats[2], [0.0, 0.0, 0.5, 0.5, 0.0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_layer_computes_the_linear_function_of_the_hats(dtype):
    rng = np.random.RandomState(2)
    F = _features()
    F[:10, 0] = 0.25  # a repeated value: knots of zero width
    knots = quantile_knots(F, 6)
    coef, intercept = rng.randn(4, 3 * 6), rng.randn(4)
    new = np.vstack([F, _features(20, seed=3) * 2.0])
    expected = hat_basis(new, knots) @ coef.T + intercept
    weight, bias = ramp_weights(coef, intercept, 3)
    layer = SplineReadout(knots, 4, weight=weight, dtype=dtype)
    got = layer(torch.as_tensor(new, dtype=dtype)).detach().numpy() + bias
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def _module(n_classes, seed=0):
    torch.manual_seed(seed)
    return SequenceNet(LMN(2, 5, 4), n_classes, pooling="last+mean").double()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_written_splines_give_the_logistic_regressions_probabilities(n_classes):
    module = _module(n_classes)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(60, 7, 2, generator=g, dtype=torch.float64)
    with torch.no_grad():
        F = module.features(module.recurrent(X)[0], None).numpy()
    labels = np.arange(60) % n_classes
    choice = dict(knots=quantile_knots(F, 9))
    H = hat_basis(F, choice["knots"])
    choice["model"] = LogisticRegression(C=1.0, max_iter=3000).fit(H, labels)
    write_splines_(module, choice)
    with torch.no_grad():
        probabilities = torch.softmax(module(X), -1).numpy()
    np.testing.assert_allclose(
        probabilities, choice["model"].predict_proba(H), atol=1e-9
    )
    assert float(module.readout.weight.detach().abs().max()) == 0.0


def test_the_choice_follows_the_cross_validation():
    rng = np.random.RandomState(0)
    F = rng.randn(80, 2)
    ring = (np.abs(F[:, 0]) > 0.7).astype(int)  # no linear boundary
    choice = choose_splines(F, ring)
    assert choice["splines"]
    assert choice["scores"]["splines"] > choice["scores"]["linear"]
    line = (F[:, 0] + F[:, 1] > 0).astype(int)
    choice = choose_splines(F, line)
    assert not choice["splines"] and "model" not in choice
    assert choice["scores"]["linear"] >= choice["scores"]["splines"]


@pytest.mark.parametrize("extra, chosen", [(2.0, False), (2.5, True)])
def test_the_splines_need_more_than_two_sequences_more(extra, chosen, monkeypatch):
    """Chosen when their cross-validation gets more than two of the 60
    training sequences more right than the linear readout's."""
    from sklmn._training import _projection

    calls = iter([(0.8, 1.0), (0.8 + extra / 60, 1.0)])
    monkeypatch.setattr(_projection, "_best_C", lambda *args: next(calls))
    F, labels = np.random.RandomState(0).randn(60, 2), np.arange(60) % 2
    assert choose_splines(F, labels)["splines"] is chosen


def test_attach_splines_refuses_a_wrong_layer():
    module = _module(2)
    with pytest.raises(TypeError, match="splines must be a SplineReadout"):
        module.attach_splines_(torch.nn.Linear(8, 2))
    with pytest.raises(ValueError, match="must read 8 features into 2 outputs"):
        module.attach_splines_(SplineReadout(np.zeros((5, 3)), 2))
    with pytest.raises(ValueError, match="non-decreasing"):
        SplineReadout([[1.0, 0.0]], 2)
    with pytest.raises(ValueError, match="weight must have shape"):
        SplineReadout([[0.0, 1.0]], 2, weight=np.zeros((2, 1, 2)))


def test_a_bad_splines_setting_is_refused():
    with pytest.raises(ValueError, match="splines must be a bool, got 'yes'"):
        VariableProjection(splines="yes")._check_params()
    X, y = _series()
    clf = LMNClassifier(
        hidden_size=4, memory_size=3, max_iter=1,
        fine_tuning=ProjectionFineTuning(splines="yes"),
    )
    with pytest.raises(ValueError, match="splines"):
        clf.fit(X, y)


def _series(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 12, 1)
    y = (np.abs(X[:, :, 0].mean(1)) > 0.2).astype(int)  # a threshold on |mean|
    return X, y


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_a_classifier_with_splines_saves_loads_and_trains_on(cls, tmp_path):
    X, y = _series()
    clf = cls(hidden_size=6, memory_size=4, max_iter=2, random_state=0).fit(X, y)
    assert clf.projection_splines_ is True
    splines = clf.net_.module_.splines
    assert splines is not None
    path = tmp_path / "model.sklmn"
    persistence.save(clf, path)
    loaded = persistence.load(path)
    assert loaded.net_.module_.splines is not None
    np.testing.assert_allclose(
        loaded.predict_proba(X), clf.predict_proba(X), atol=1e-6
    )
    # a further pass moves the spline weights, not the recurrent part
    module = clf.net_.module_
    before = splines.weight.detach().clone()
    recurrent = {k: v.clone() for k, v in module.recurrent.state_dict().items()}
    clf.partial_fit(X, y)
    module = clf.net_.module_
    assert not torch.allclose(module.splines.weight, before)
    for key, value in module.recurrent.state_dict().items():
        np.testing.assert_allclose(value.numpy(), recurrent[key].numpy(), atol=1e-7)


def test_the_recurrent_part_gets_no_gradient_under_splines():
    module = _module(2).float()
    x = torch.randn(6, 5, 2)
    module.attach_splines_(SplineReadout(np.zeros((8, 3)), 2))
    module(x).sum().backward()
    assert all(p.grad is None for p in module.recurrent.parameters())
    assert module.splines.weight.grad is not None
    assert module.readout.weight.grad is not None


def test_splines_off_keeps_the_linear_readout():
    X, y = _series()
    clf = LMNClassifier(
        hidden_size=6, memory_size=4, max_iter=2, random_state=0,
        fine_tuning=ProjectionFineTuning(splines=False),
    ).fit(X, y)
    assert clf.projection_splines_ is False
    assert clf.net_.module_.splines is None


def test_weighted_string_labelled_classes_take_the_splines():
    """String classes and sequence weights: the spline readout is chosen on
    the weighted folds and the probabilities stay a distribution."""
    X, y = _series(100, seed=0)
    y = np.where(y == 1, "far", "near")
    weight = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    clf = MultiScaleLMNClassifier(
        hidden_size=6, memory_size=4, max_iter=2, random_state=0
    ).fit(X, y, sample_weight=weight)
    assert clf.projection_splines_ is True
    proba = clf.predict_proba(X)
    assert proba.shape == (100, 2) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-6)
    assert set(clf.predict(X)) <= {"far", "near"}


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_the_guards_spline_score_is_scikit_learns_spline_pipeline(C):
    """The guard's score of a copy: a logistic readout of the hats at the
    quantiles of the three quarters' features, scored on the held-out
    quarter, as scikit-learn's spline transformer and logistic regression
    compute it."""
    rng = np.random.RandomState(0)
    F, held = _features(60, seed=0), _features(30, seed=1) * 1.5
    labels = (np.abs(F[:, 1] - 3.0) > 4.0).astype(int) + (F[:, 0] > 0.5)
    held_labels = rng.randint(0, 3, 30)
    reference = make_pipeline(
        SplineTransformer(
            n_knots=9, degree=1, knots="quantile", extrapolation="constant"
        ),
        LogisticRegression(C=C, max_iter=3000),
    ).fit(F, labels)
    expected = np.mean(reference.predict(held) == held_labels)
    got = _spline_accuracy(F, labels, None, C, held, held_labels, None)
    # the same fit up to the solver's rounding: at most one row apart
    assert abs(got - expected) <= 1 / 30 + 1e-12


def _guard(clf):
    (projection,) = [
        cb for name, cb in clf.net_.callbacks_ if isinstance(cb, VariableProjection)
    ]
    return projection


def test_the_guard_scores_with_the_splines_where_they_win(monkeypatch):
    """Where the splines win on the start's features, the guard's scores
    are those of spline readouts and the fit attaches the splines without
    comparing the readouts again."""
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return choose_splines(*args, **kwargs)

    monkeypatch.setattr(_projection, "choose_splines", counted)
    X, y = _series(100, seed=0)
    clf = LMNClassifier(
        hidden_size=6, memory_size=4, max_iter=1, random_state=0
    ).fit(X, y)
    guard = _guard(clf)
    assert guard.guard_readout_ == "splines"
    # the readout the guard chose the steps for is the one the fit ends with
    assert clf.projection_splines_ is True
    assert len(calls) == 1 and calls[0][0] == 100  # on all the sequences
    # accuracies of the 25 held-out sequences, the start's included
    assert len(guard.held_out_scores_) >= 1
    assert all(abs(v * 25 - round(v * 25)) < 1e-9 for v in guard.held_out_scores_)
    off = LMNClassifier(
        hidden_size=6, memory_size=4, max_iter=1, random_state=0,
        fine_tuning=ProjectionFineTuning(splines=False),
    ).fit(X, y)
    assert _guard(off).guard_readout_ == "linear"


def test_the_guard_keeps_the_linear_readout_where_the_splines_lose():
    """On a linear boundary the splines do not cross-validate better on the
    guard's start: its scores are those of the guard without splines."""
    rng = np.random.RandomState(1)
    X = rng.randn(80, 10, 1)
    y = (X[:, :, 0].mean(1) > 0).astype(int)
    fits = [
        LMNClassifier(
            hidden_size=6, memory_size=4, max_iter=1, random_state=0,
            fine_tuning=ProjectionFineTuning(splines=splines),
        ).fit(X, y)
        for splines in (True, False)
    ]
    on, off = (_guard(clf) for clf in fits)
    assert on.guard_readout_ == off.guard_readout_ == "linear"
    np.testing.assert_allclose(on.held_out_scores_, off.held_out_scores_)
    assert on.steps_ == off.steps_
