"""Scorers for per-time-step targets (sklmn.metrics)."""

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    f1_score,
    log_loss,
    make_scorer,
    r2_score,
)
from sklearn.model_selection import cross_val_score

from sklmn.estimators import RNNClassifier, RNNRegressor
from sklmn.metrics import flatten_timesteps, get_timestep_scorer, make_timestep_scorer

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def padded():
    rng = np.random.RandomState(0)
    X = rng.randn(24, 6, 1)
    X[::3, 4:] = np.nan  # every third sequence has 4 steps
    y = np.where(X[..., 0] > 0.3, 2, np.where(X[..., 0] < -0.3, 0, 1))
    y[::3, 4:] = -1  # filler at padded steps
    clf = RNNClassifier(hidden_size=4, target="timestep", max_iter=5, random_state=0)
    return X, y, clf.fit(X, y)


def test_flatten_timesteps_layouts():
    true = [np.array(["a", "b"]), np.array(["c"])]
    pred = [np.array(["a", "a"]), np.array(["c"])]
    t, p, w = flatten_timesteps(true, pred, sample_weight=[1.0, 3.0])
    assert t.tolist() == ["a", "b", "c"] and p.tolist() == ["a", "a", "c"]
    assert w.tolist() == [1.0, 1.0, 3.0]
    pred = np.array([["a", None], ["b", "c"]], dtype=object)
    t, p, _ = flatten_timesteps(np.array([["a", "x"], ["b", "c"]]), pred)
    assert t.tolist() == ["a", "b", "c"] and p.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="per-time-step predictions"):
        flatten_timesteps([0, 1], np.array([0, 1]))


def test_timestep_accuracy_is_the_estimator_score(padded):
    X, y, clf = padded
    scorer = get_timestep_scorer("accuracy")
    assert scorer(clf, X, y) == pytest.approx(clf.score(X, y), abs=1e-12)
    w = np.linspace(0.5, 2.0, len(X))
    assert scorer(clf, X, y, sample_weight=w) == pytest.approx(
        clf.score(X, y, sample_weight=w), abs=1e-12
    )


def test_string_scorers_on_pooled_steps(padded):
    X, y, clf = padded
    mask = ~np.isnan(X[..., 0])
    pred = clf.predict(X)[mask]
    f1 = get_timestep_scorer("f1_macro")(clf, X, y)
    assert f1 == pytest.approx(f1_score(y[mask], pred, average="macro"), abs=1e-12)
    nll = get_timestep_scorer("neg_log_loss")(clf, X, y)
    proba = clf.predict_proba(X)[mask]
    assert nll == pytest.approx(-log_loss(y[mask], proba), rel=1e-9)
    scores = cross_val_score(
        clf, X, y, cv=2, scoring=get_timestep_scorer("balanced_accuracy")
    )
    assert np.isfinite(scores).all()


def test_binary_proba_and_regression():
    rng = np.random.RandomState(1)
    X = [rng.randn(t, 1) for t in (4, 6, 5) * 6]
    y = [(x[:, 0] > 0).astype(int) for x in X]
    clf = RNNClassifier(hidden_size=3, target="timestep", max_iter=3, random_state=0)
    clf.fit(X, y)
    auc = get_timestep_scorer("roc_auc")(clf, X, y)
    assert 0.0 <= auc <= 1.0
    reg = RNNRegressor(hidden_size=3, target="timestep", max_iter=3, random_state=0)
    targets = [x[:, 0] * 2 for x in X]
    reg.fit(X, targets)
    r2 = get_timestep_scorer("r2")(reg, X, targets)
    assert r2 == pytest.approx(reg.score(X, targets), abs=1e-10)
    acc = make_timestep_scorer(accuracy_score)(clf, X, y)
    assert acc == pytest.approx(clf.score(X, y), abs=1e-12)
    neg = make_timestep_scorer(r2_score, greater_is_better=False)(reg, X, targets)
    assert neg == pytest.approx(-r2, abs=1e-12)


def test_scorer_argument_errors():
    with pytest.raises(ValueError, match="not a valid scoring value|valid"):
        get_timestep_scorer("no_such_scorer")
    with pytest.raises(ValueError, match="make_timestep_scorer"):
        get_timestep_scorer(len)
    wrapped = get_timestep_scorer(make_scorer(f1_score, average="micro"))
    assert get_timestep_scorer(wrapped) is wrapped


def test_binary_proba_column_of_the_metrics_pos_label():
    # classes {1, 2}: average_precision_score's pos_label defaults to 1, so
    # scikit-learn's scorer scores the probability of class 1 (the first
    # column), not that of the greater class
    rng = np.random.RandomState(1)
    X = [rng.randn(t, 1) for t in (4, 6, 5) * 6]
    y = [np.where(x[:, 0] > 0, 1, 2) for x in X]
    clf = RNNClassifier(hidden_size=3, target="timestep", max_iter=3, random_state=0)
    clf.fit(X, y)
    true = np.concatenate(y)
    proba = np.concatenate(clf.predict_proba(X))
    expected = average_precision_score(true, proba[:, 0], pos_label=1)
    wrong = average_precision_score(true, proba[:, 1], pos_label=1)
    assert abs(expected - wrong) > 1e-3  # the test can tell the columns apart
    ap = get_timestep_scorer("average_precision")(clf, X, y)
    assert ap == pytest.approx(expected, abs=1e-12)
    ap2 = make_timestep_scorer(
        average_precision_score, response_method="predict_proba", pos_label=2
    )(clf, X, y)
    assert ap2 == pytest.approx(
        average_precision_score(true, proba[:, 1], pos_label=2), abs=1e-12
    )
    with pytest.raises(ValueError, match="pos_label=3 is not a class"):
        make_timestep_scorer(
            average_precision_score, response_method="predict_proba", pos_label=3
        )(clf, X, y)


def test_padded_X_with_a_list_of_per_sequence_targets():
    # fit and score take a padded X with ragged per-sequence targets; the
    # scorers must too (the predictions are padded, the targets are not)
    rng = np.random.RandomState(0)
    X = rng.randn(12, 6, 1)
    X[::3, 4:] = np.nan
    y = [(x[~np.isnan(x[:, 0]), 0] > 0).astype(int) for x in X]
    clf = RNNClassifier(hidden_size=3, target="timestep", max_iter=3, random_state=0)
    clf.fit(X, y)
    scorer = get_timestep_scorer("accuracy")
    assert scorer(clf, X, y) == pytest.approx(clf.score(X, y), abs=1e-12)
    w = np.linspace(0.5, 2.0, len(X))
    assert scorer(clf, X, y, sample_weight=w) == pytest.approx(
        clf.score(X, y, sample_weight=w), abs=1e-12
    )
    with pytest.raises(ValueError, match=r"y_true\[0\] has 2 time steps"):
        flatten_timesteps([t[:2] for t in y], clf.predict(X))
    with pytest.raises(ValueError, match="y_true has 5 sequences"):
        flatten_timesteps(y[:5], clf.predict(X))


def test_nan_predictions_are_an_error_not_padding():
    # a padded prediction array marks padding with trailing NaN steps; NaN
    # elsewhere (a whole sequence, or a step before valid ones) is a
    # non-finite prediction, which the scorers must not silently drop
    y_true = np.zeros((3, 4))
    ok = np.array([[1.0, 2.0, np.nan, np.nan], [1, 2, 3, 4], [1, 2, 3, 4]])
    true, pred, _ = flatten_timesteps(y_true, ok)
    assert len(true) == len(pred) == 10
    gap = ok.copy()
    gap[1, 1] = np.nan
    with pytest.raises(ValueError, match="time step 1 of sequence 1"):
        flatten_timesteps(y_true, gap)
    whole = ok.copy()
    whole[2] = np.nan
    with pytest.raises(ValueError, match="time step 0 of sequence 2"):
        flatten_timesteps(y_true, whole)
    labels = np.array([[None, "a"], ["b", "c"]], dtype=object)
    with pytest.raises(ValueError, match="not finite"):
        flatten_timesteps(np.array([["a", "a"], ["b", "c"]]), labels)

    rng = np.random.RandomState(0)
    X = rng.randn(10, 5, 1)
    reg = RNNRegressor(hidden_size=3, target="timestep", max_iter=2, random_state=0)
    reg.fit(X, X[..., 0])
    predict = reg.predict

    def diverged(X):
        pred = predict(X).copy()
        pred[0] = np.nan
        return pred

    reg.predict = diverged
    with pytest.raises(ValueError, match="sequence 0"):
        get_timestep_scorer("r2")(reg, X, X[..., 0])
