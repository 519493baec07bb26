"""``fine_tuning='projection'`` of the LMN and multi-scale LMN classifiers:
the smooth fine-tuning's network, its memory trained first through a
refitted readout (sklmn/_training/_projection.py)."""

import pickle

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from sklmn._training import _projection
from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.estimators._lmn import resolve_fine_tuning
from sklmn.persistence import load, save
from sklmn.pretraining import LAESInitializer, ProjectionFineTuning

from ._fine_tuning import data, small

CLASSIFIERS = [LMNClassifier, MultiScaleLMNClassifier]


_data = data


def _small(cls, **params):
    return small(cls, 4, **params)


@pytest.fixture
def keep_a_copy(monkeypatch):
    """Make every projection keep its second copy (the held-out rule, tested
    in tests/training/test_projection.py, would often keep the start on tiny
    data)."""
    monkeypatch.setattr(_projection, "choose_copy", lambda scores, n: 2)
    monkeypatch.setattr(_projection, "_settled", lambda *args: False)


@pytest.mark.parametrize("guard_splits", [1, 4])
@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_guard_start_takes_the_fit_start_readout_choices(
    cls, guard_splits, monkeypatch
):
    # the guard's start (three quarters) reads the pooling and the C that
    # the fit's start chose, without cross-validating them again
    calls = []
    initialize = LAESInitializer.initialize

    def spy(self, module, context):
        calls.append((self.C, self.C_candidates, module.pooling))
        return initialize(self, module, context)

    monkeypatch.setattr(LAESInitializer, "initialize", spy)
    X, y = _data(n=60)
    settings = ProjectionFineTuning(guard_splits=guard_splits)
    clf = _small(cls, fine_tuning=settings).fit(X, y)
    # one guard start per held-out quarter, after the fit's start
    k = dict(clf.net_.callbacks_)["projection"].guard_splits_
    assert k == guard_splits
    fit_start, guard_starts = calls[-k - 1], calls[-k:]
    assert fit_start[1] is not None and fit_start[2] == "auto"
    for guard_start in guard_starts:
        assert guard_start == (clf.pretrainer_.C_, None, clf.pooling_)
    assert clf.pooling_ != "auto"


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_projection_builds_the_smooth_network(cls):
    assert resolve_fine_tuning(cls(fine_tuning="projection"), 100) == "projection"
    # no start: one network trains from the random start
    assert resolve_fine_tuning(cls(fine_tuning="projection", pretrainer=None), 100) == (
        "full"
    )
    X, y = _data()
    clf = _small(cls, fine_tuning="projection").fit(X, y)
    assert clf.fine_tuning_ == "projection"
    assert (clf.memory_matrix_, clf.feedback_) == ("schur", "none")
    assert clf.memory_lr_scale_ == pytest.approx(0.01)
    assert clf.projection_steps_ in (0, 20, 40, 60, 80, 100)
    # the fitted net keeps neither the training data nor the guard's start
    projection = dict(clf.net_.callbacks_)["projection"]
    assert projection.dataset is None and projection.guard_start is None
    assert np.all(np.isfinite(clf.predict_proba(X)))
    # the other fine-tunings record no projection
    assert _small(cls, fine_tuning="smooth").fit(X, y).projection_steps_ is None


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_a_kept_copy_changes_the_start(cls, keep_a_copy):
    X, y = _data()
    smooth = _small(cls, fine_tuning="smooth", max_iter=1, learning_rate_init=1e-12)
    projected = _small(
        cls, fine_tuning="projection", max_iter=1, learning_rate_init=1e-12
    )
    smooth.fit(X, y)
    projected.fit(X, y)
    assert projected.projection_steps_ == 40
    # the same start, then moved by the projection steps
    assert not np.allclose(
        smooth.predict_proba(X), projected.predict_proba(X), atol=1e-4
    )


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_projection_saves_loads_and_trains_on(cls, tmp_path, keep_a_copy):
    X, y = _data()
    clf = _small(cls, fine_tuning="projection").fit(X, y)
    path = tmp_path / "model.skops"
    save(clf, path)
    for back in (load(path), pickle.loads(pickle.dumps(clf))):
        assert (back.fine_tuning_, back.projection_steps_) == ("projection", 40)
        np.testing.assert_allclose(
            back.predict_proba(X), clf.predict_proba(X), rtol=1e-5, atol=1e-6
        )
    # a later pass and a warm start train by the cross-entropy, as smooth
    clf.partial_fit(X, y)
    assert np.all(np.isfinite(clf.predict_proba(X)))
    clf.set_params(warm_start=True, max_iter=2).fit(X, y)
    assert clf.projection_steps_ == 40  # the model's, not re-projected
    assert not any("parametrizations" in k for k in clf.net_.module_.state_dict())


def test_partial_fit_projects_on_its_first_call(keep_a_copy):
    X, y = _data()
    clf = _small(LMNClassifier, fine_tuning="projection")
    clf.partial_fit(X, y, classes=[0, 1])
    assert (clf.fine_tuning_, clf.projection_steps_) == ("projection", 40)
    clf.partial_fit(X, y)
    assert clf.n_iter_ == 2 and clf.projection_steps_ == 40


@pytest.mark.parametrize("weights", ["ones", "random"])
def test_projection_with_sample_weights(weights, keep_a_copy):
    X, y = _data()
    w = np.ones(len(y)) if weights == "ones" else np.random.RandomState(0).rand(len(y))
    clf = _small(LMNClassifier, fine_tuning="projection").fit(X, y, sample_weight=w)
    assert clf.projection_steps_ == 40
    assert np.all(np.isfinite(clf.predict_proba(X)))


def test_three_classes_and_string_labels(keep_a_copy):
    X, _ = _data(n=45)
    y = np.array(["a", "b", "c"])[np.arange(45) % 3]
    X[y == "b", :3, 0] += 2.0
    clf = _small(LMNClassifier, fine_tuning="projection").fit(X, y)
    assert clf.projection_steps_ == 40
    assert set(clf.predict(X)) <= {"a", "b", "c"}


@pytest.mark.parametrize("cls", [LMNRegressor, MultiScaleLMNRegressor])
def test_regressors_refuse_projection(cls):
    X, y = _data()
    with pytest.raises(ValueError, match="fine_tuning='projection'.*LMNRegressor"):
        _small(cls, fine_tuning="projection").fit(X, y.astype(float))


def test_per_step_targets_refuse_projection():
    X, _ = _data()
    y = (X[:, :, 0] > 0).astype(int)
    clf = _small(LMNClassifier, fine_tuning="projection", target="timestep")
    with pytest.raises(ValueError, match="target='timestep'"):
        clf.fit(X, y)


def test_multilabel_targets_train_as_smooth():
    X, _ = _data()
    Y = np.column_stack([X[:, :3, 0].sum(1) > 0, X[:, :3, 1].sum(1) > 0]).astype(int)
    clf = _small(LMNClassifier, fine_tuning="projection").fit(X, Y)
    assert clf.fine_tuning_ == "smooth" and clf.projection_steps_ is None


def test_a_failed_projection_fit_leaves_the_model(keep_a_copy, monkeypatch):
    X, y = _data()
    clf = _small(LMNClassifier, fine_tuning="projection").fit(X, y)
    before = clf.predict_proba(X)
    # the objective turns non-finite: the projection raises mid-fit
    monkeypatch.setattr(
        _projection,
        "ridge_held_out_error",
        lambda F, *args: (F * float("nan")).sum(),
    )
    with pytest.raises(FloatingPointError, match="variable projection"):
        clf.fit(X[::-1], y[::-1])
    np.testing.assert_allclose(clf.predict_proba(X), before, rtol=1e-6, atol=1e-7)
    assert clf.projection_steps_ == 40


def test_grid_search_tunes_the_fine_tuning():
    X, y = _data(n=48)
    search = GridSearchCV(
        _small(LMNClassifier, max_iter=2),
        {"fine_tuning": ["smooth", "projection"]},
        cv=2,
    ).fit(X, y)
    assert search.best_params_["fine_tuning"] in ("smooth", "projection")
    assert np.isfinite(search.best_score_)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_projection_settings_reach_the_steps(cls, keep_a_copy):
    X, y = _data()
    settings = ProjectionFineTuning(steps=8, every=4, lr=3e-3, folds=3)
    clf = _small(cls, fine_tuning=settings).fit(X, y)
    assert clf.fine_tuning_ == "projection"
    projection = dict(clf.net_.callbacks_)["projection"]
    assert (projection.steps, projection.every, projection.lr, projection.folds) == (
        8, 4, 3e-3, 3
    )
    assert projection.splines is True
    assert clf.projection_steps_ == 8  # the second copy, every 4 steps
    # the parameter is left as given
    assert clf.fine_tuning is settings and settings.get_params() == dict(
        steps=8, every=4, lr=3e-3, folds=3, splines=True, guard_splits=1
    )


def test_grid_search_tunes_the_projection_settings():
    X, y = _data(n=48)
    search = GridSearchCV(
        _small(LMNClassifier, max_iter=2, fine_tuning=ProjectionFineTuning()),
        {"fine_tuning__steps": [4, 8], "fine_tuning__every": [2]},
        cv=2,
    ).fit(X, y)
    best = search.best_estimator_
    assert best.fine_tuning.steps == search.best_params_["fine_tuning__steps"]
    assert dict(best.net_.callbacks_)["projection"].steps == best.fine_tuning.steps
    assert best.projection_steps_ in range(0, best.fine_tuning.steps + 1, 2)


@pytest.mark.parametrize(
    "settings, error, message",
    [
        (ProjectionFineTuning(steps=0), ValueError, "'steps' parameter"),
        (ProjectionFineTuning(lr=-1.0), ValueError, "'lr' parameter"),
        (ProjectionFineTuning(folds=1), ValueError, "'folds' parameter"),
        (ProjectionFineTuning(steps=10, every=20), ValueError,
         "every=20 and steps=10"),
    ],
)
def test_bad_projection_settings_fail_before_training(settings, error, message):
    X, y = _data()
    clf = _small(LMNClassifier, fine_tuning="smooth").fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(error, match=message):
        clf.set_params(fine_tuning=settings).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), before, rtol=1e-6, atol=1e-7)
    assert clf.fine_tuning_ == "smooth"


def test_projection_settings_save_and_load(tmp_path):
    X, y = _data()
    clf = _small(
        MultiScaleLMNClassifier, fine_tuning=ProjectionFineTuning(steps=4, every=2)
    ).fit(X, y)
    path = tmp_path / "model.skops"
    save(clf, path)
    back = load(path)
    assert back.fine_tuning.get_params() == clf.fine_tuning.get_params()
    assert back.projection_steps_ == clf.projection_steps_
    np.testing.assert_allclose(
        back.predict_proba(X), clf.predict_proba(X), rtol=1e-5, atol=1e-6
    )


def test_regressors_refuse_projection_settings():
    X, y = _data()
    with pytest.raises(ValueError, match="fine_tuning='projection'"):
        _small(LMNRegressor, fine_tuning=ProjectionFineTuning()).fit(X, y.astype(float))


@pytest.mark.parametrize("n, n_classes", [(4, 2), (6, 3)])
def test_too_few_sequences_for_a_held_out_quarter_keep_the_start(n, n_classes):
    # a quarter of 1 (or 2) sequences cannot hold each of 2 (or 3) classes
    # (two of each at least): no projection, the start kept, the fit runs
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3, 2)
    y = np.arange(n) % n_classes
    clf = _small(LMNClassifier, fine_tuning="projection", max_iter=2).fit(X, y)
    projection = dict(clf.net_.callbacks_)["projection"]
    assert clf.projection_steps_ == 0 and projection.held_out_scores_ == []
    assert np.all(np.isfinite(clf.predict_proba(X)))


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_a_class_too_small_for_the_guard_keeps_the_start(cls):
    # five sequences, two of class 1: the guard's three quarters keep one of
    # them, too few for the two folds of its objective; the start is kept
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(n, 1)) for n in (5, 9, 3, 9, 7)]
    clf = cls(max_iter=1, random_state=0).fit(X, [0, 1, 0, 1, 0])
    assert clf.fine_tuning_ == "projection"
    assert clf.projection_steps_ == 0
    assert np.all(np.isfinite(clf.predict_proba(X)))
