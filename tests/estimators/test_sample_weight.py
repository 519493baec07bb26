"""Sample weights, class weights, partial_fit and predict_log_proba of the
sequence estimators, and their integrations with scikit-learn tools."""

import numpy as np
import pytest
import sklearn
import torch
from sklearn.ensemble import AdaBoostClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_validate
from sklearn.pipeline import Pipeline
from sklearn.utils.class_weight import compute_sample_weight
from skorch.callbacks import Callback

from sklmn._training import SequenceLoss, score_valid_entries
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
from sklmn.preprocessing import SequenceStandardScaler
from sklmn.pretraining import IncrementalTraining

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

_TINY = dict(max_iter=3, random_state=0)
ALL = [
    LMNClassifier(hidden_size=3, memory_size=3, pretrainer=None, **_TINY),
    LMNRegressor(hidden_size=3, memory_size=3, pretrainer=None, **_TINY),
    MultiScaleLMNClassifier(hidden_size=3, memory_size=2, n_modules=2, **_TINY),
    MultiScaleLMNRegressor(hidden_size=3, memory_size=2, n_modules=2, **_TINY),
    ENRNNClassifier(hidden_size=4, short_size=2, **_TINY),
    ENRNNRegressor(hidden_size=4, short_size=2, **_TINY),
    RNNClassifier(hidden_size=3, **_TINY),
    RNNRegressor(hidden_size=3, **_TINY),
]


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(24, 5, 2)
    y = (X[:, -1, 0] > 0).astype(int)
    return X, y, rng.rand(24) + 0.1


def _target(est, X, y):
    return y if sklearn.base.is_classifier(est) else X[:, :, 1].sum(axis=1)


@pytest.mark.parametrize("est", ALL, ids=lambda e: type(e).__name__)
def test_every_estimator_takes_sample_weight(est, data):
    X, y, w = data
    w_copy = w.copy()
    est = sklearn.clone(est).fit(X, _target(est, X, y), sample_weight=w)
    assert np.array_equal(w, w_copy)  # user data untouched
    assert est.n_iter_ == 3
    est.partial_fit(X, _target(est, X, y), sample_weight=w, **_classes(est, y))
    assert est.n_iter_ == 4


def _classes(est, y):
    return {"classes": np.unique(y)} if sklearn.base.is_classifier(est) else {}


def test_equal_weights_are_no_weights(data):
    X, y, _ = data
    clf = RNNClassifier(hidden_size=3, **_TINY)
    a = sklearn.clone(clf).fit(X, y).predict_proba(X)
    b = sklearn.clone(clf).fit(X, y, sample_weight=np.full(len(y), 3.0))
    np.testing.assert_allclose(a, b.predict_proba(X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("problem", ["multiclass", "multilabel", "continuous"])
@pytest.mark.parametrize("per_step", [False, True])
def test_weighted_loss_integer_weights_repeat_entries(problem, per_step):
    torch.manual_seed(0)
    n, T, k = 3, 4, 3
    lengths = torch.tensor([4, 2, 3])
    shape = (n, T, k) if per_step else (n, k)
    y_pred = torch.randn(shape, dtype=torch.float64)
    if problem == "multiclass":
        y_true = torch.randint(0, k, shape[:-1])
        if per_step:
            y_true[1, 2:] = -100
            y_true[2, 3:] = -100
    else:
        y_true = (torch.rand(shape, dtype=torch.float64) > 0.5).double()
    weights = torch.tensor([2.0, 0.0, 1.0], dtype=torch.float64)
    if per_step:
        mask = torch.arange(T)[None, :] < lengths[:, None]
        step_weight = torch.where(mask, weights[:, None], 0.0)
    else:
        step_weight = weights
    loss = SequenceLoss(problem, per_step)
    weighted = loss(y_pred, y_true, lengths, sample_weight=step_weight)
    idx = torch.tensor([0, 0, 2])  # weight 2: twice, weight 0: left out
    repeated = loss(y_pred[idx], y_true[idx], lengths[idx])
    assert float(weighted) == pytest.approx(float(repeated), rel=1e-10)
    zero = loss(y_pred, y_true, lengths, sample_weight=step_weight * 0)
    assert float(zero) == 0.0


def test_weighted_validation_score():
    y_true = np.array([0, 1, 1, 0])
    outputs = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    w = np.array([1.0, 3.0, 1.0, 1.0])
    assert score_valid_entries("multiclass", False, y_true, outputs, w) == 0.5
    assert score_valid_entries("multiclass", False, y_true, outputs) == 0.75


@pytest.mark.parametrize("target", ["sequence", "timestep"])
def test_class_weight_balanced_is_sample_weight(target):
    rng = np.random.RandomState(1)
    X = rng.randn(30, 4, 1)
    if target == "sequence":
        y = np.where(X[:, -1, 0] > 0.8, "rare", "common")
        sw = compute_sample_weight("balanced", y)
        sw_steps = sw
    else:
        y = np.where(X[..., 0] > 0.8, "rare", "common")
        step_w = compute_sample_weight("balanced", y.ravel()).reshape(y.shape)
        sw_steps = None
    # (sample weights also weight the standardize statistics, class weights not)
    kw = dict(hidden_size=3, target=target, standardize=False, **_TINY)
    a = RNNClassifier(class_weight="balanced", **kw).fit(X, y)
    if target == "sequence":
        b = RNNClassifier(**kw).fit(X, y, sample_weight=sw_steps)
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)
    else:
        dict_weights = {c: step_w[y == c][0] for c in np.unique(y)}
        b = RNNClassifier(class_weight=dict_weights, **kw).fit(X, y)
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)
    c = RNNClassifier(**kw).fit(X, y)
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))


def test_class_weight_errors(data):
    X, y, _ = data
    Y = np.stack([y, 1 - y], axis=1)
    with pytest.raises(ValueError, match="only supported for multiclass"):
        RNNClassifier(hidden_size=3, class_weight="balanced", **_TINY).fit(X, Y)
    with pytest.raises(ValueError, match="'heavy'"):
        RNNClassifier(class_weight="heavy").fit(X, y)
    with pytest.raises(ValueError, match="non-zero"):
        RNNClassifier(**_TINY).fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="Negative values"):
        RNNClassifier(**_TINY).fit(X, y, sample_weight=-np.ones(len(y)))


def test_sample_weight_with_validation_set(data):
    X, y, w = data
    clf = RNNClassifier(hidden_size=3, early_stopping=True, **_TINY)
    clf.fit(X, y, sample_weight=w, X_val=X[:8], y_val=y[:8], sample_weight_val=w[:8])
    assert len(clf.validation_scores_) == 3
    with pytest.raises(ValueError, match="sample_weight_val needs X_val"):
        clf.fit(X, y, sample_weight_val=w)


@pytest.mark.parametrize("random_state", range(4))
def test_the_held_out_part_of_weighted_data_has_weight(random_state):
    # few non-zero weights: the validation split often held none of them, its
    # loss was zero at every epoch and fit kept the untrained start
    rng = np.random.RandomState(0)
    X = rng.randn(40, 4, 2)
    y = X[:, :, 0].sum(axis=1)
    w = np.zeros(40)
    w[[3, 17, 25, 31]] = 1.0
    reg = RNNRegressor(
        hidden_size=3,
        max_iter=2,
        early_stopping=True,
        n_iter_no_change=1,
        random_state=random_state,
    ).fit(X, y, sample_weight=w)
    assert min(reg.validation_loss_curve_) > 0
    # two weighted validation sequences: their R^2 is defined
    assert np.isfinite(reg.validation_scores_).all()


def test_early_stopping_needs_two_weighted_sequences(data):
    X, y, _ = data
    w = np.zeros(len(y))
    w[5] = 1.0
    clf = RNNClassifier(hidden_size=3, early_stopping=True, **_TINY)
    with pytest.raises(ValueError, match="only 1 of the 24 sequences has a non-zero"):
        clf.fit(X, y, sample_weight=w)
    assert not hasattr(clf, "net_")
    clf.set_params(early_stopping=False).fit(X, y, sample_weight=w)  # no split


def test_metadata_routing_of_fit_weights(data):
    X, y, w = data
    with sklearn.config_context(enable_metadata_routing=True):
        clf = RNNClassifier(hidden_size=3, **_TINY)
        clf.set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        pipe = Pipeline([("scale", SequenceStandardScaler()), ("clf", clf)])
        result = cross_validate(pipe, X, y, cv=2, params={"sample_weight": w})
        assert np.isfinite(result["test_score"]).all()
        pf = RNNClassifier(hidden_size=3).set_partial_fit_request(sample_weight=True)
        assert pf.get_metadata_routing().partial_fit.requests["sample_weight"]
        unrequested = RNNClassifier(hidden_size=3, **_TINY)
        with pytest.raises(ValueError, match="sample_weight"):
            cross_validate(unrequested, X, y, cv=2, params={"sample_weight": w})


def test_adaboost_accepts_a_sequence_classifier(data):
    X, y, _ = data
    # a base learner that learns the (easy) target: AdaBoost refuses one
    # that is worse than random on the weighted data
    base = RNNClassifier(hidden_size=4, max_iter=40, learning_rate_init=0.05)
    ada = AdaBoostClassifier(base, n_estimators=2, random_state=0)
    ada.fit(X, y)
    assert ada.predict(X).shape == (len(y),)


@pytest.mark.parametrize("target", ["sequence", "timestep"])
def test_predict_log_proba(target):
    rng = np.random.RandomState(0)
    X = [rng.randn(t, 1) for t in (3, 5, 4, 5) * 3]
    if target == "sequence":
        y = np.array([int(x[-1, 0] > 0) for x in X])
    else:
        y = [(x[:, 0] > 0).astype(int) for x in X]
    clf = RNNClassifier(hidden_size=3, target=target, **_TINY).fit(X, y)
    logp, proba = clf.predict_log_proba(X), clf.predict_proba(X)
    if target == "timestep":
        logp, proba = np.concatenate(logp), np.concatenate(proba)
    np.testing.assert_allclose(np.exp(logp), proba, rtol=1e-10)
    Y = np.stack([y, 1 - y], axis=1) if target == "sequence" else None
    if Y is not None:
        ml = RNNClassifier(hidden_size=3, **_TINY).fit(X, Y)
        np.testing.assert_allclose(
            np.exp(ml.predict_log_proba(X)), ml.predict_proba(X), rtol=1e-10
        )


class TestPartialFit:
    def test_one_epoch_per_call_and_first_call_state(self, data):
        X, y, _ = data
        clf = RNNClassifier(hidden_size=3, random_state=0)
        clf.partial_fit(X, y, classes=[0, 1])
        mean, scale = clf.input_mean_.copy(), clf.input_scale_.copy()
        clf.partial_fit(X + 5.0, y)
        clf.partial_fit(X[:5], y[:5], classes=[1, 0])
        assert clf.n_iter_ == 3 and len(clf.loss_curve_) == 3
        np.testing.assert_allclose(clf.input_mean_, mean)  # fitted once
        np.testing.assert_allclose(clf.input_scale_, scale)
        assert clf.best_loss_ == clf.loss_curve_[-1]
        assert clf.validation_scores_ is None

    def test_classes(self, data):
        X, y, _ = data
        clf = RNNClassifier(hidden_size=3)
        with pytest.raises(ValueError, match="classes must be passed"):
            clf.partial_fit(X, y)
        clf.partial_fit(X, y, classes=[0, 1, 2])  # a class not in this batch
        assert clf.classes_.tolist() == [0, 1, 2]
        with pytest.raises(ValueError, match="not the same as on the first call"):
            clf.partial_fit(X, y, classes=[0, 1])
        with pytest.raises(ValueError, match=r"labels \[5\]"):
            clf.partial_fit(X, np.where(y == 1, 5, 0))

    def test_is_atomic(self, data):
        X, y, _ = data
        clf = RNNClassifier(hidden_size=3).partial_fit(X, y, classes=[0, 1])
        before = dict(clf.__dict__)
        weights = [p.detach().clone() for p in clf.net_.module_.parameters()]
        with pytest.raises(ValueError):
            clf.partial_fit(X, np.where(y == 1, 7, 0))
        assert clf.__dict__ == before
        for p, q in zip(clf.net_.module_.parameters(), weights, strict=True):
            assert torch.equal(p, q)

    def test_refused_settings(self, data):
        X, y, _ = data
        with pytest.raises(ValueError, match="early_stopping=True"):
            RNNClassifier(early_stopping=True).partial_fit(X, y, classes=[0, 1])
        with pytest.raises(ValueError, match="growth schedules"):
            MultiScaleLMNClassifier(incremental=IncrementalTraining()).partial_fit(
                X, y, classes=[0, 1]
            )
        with pytest.raises(ValueError, match="'balanced' is not supported"):
            RNNClassifier(class_weight="balanced").partial_fit(X, y, classes=[0, 1])
        clf = RNNClassifier(hidden_size=3).partial_fit(X, y, classes=[0, 1])
        clf.set_params(hidden_size=4)
        with pytest.raises(ValueError, match="cannot change the model's parameters"):
            clf.partial_fit(X, y)

    def test_after_fit_and_regressor(self, data):
        X, y, _ = data
        reg = RNNRegressor(hidden_size=3, **_TINY).fit(X, X[:, :, 0].sum(axis=1))
        net = reg.net_
        reg.partial_fit(X, X[:, :, 0].sum(axis=1))
        assert reg.n_iter_ == 4 and reg.net_ is not net
        # the previous optimizer's moments carried over
        assert len(reg.net_.optimizer_.state) == len(net.optimizer_.state)

    def test_pretrainer_runs_on_first_call_only(self, data):
        X, y, _ = data
        clf = LMNClassifier(hidden_size=3, memory_size=3, pretrainer="auto")
        clf.partial_fit(X, y, classes=[0, 1])
        pretrainer = clf.pretrainer_
        clf.partial_fit(X, y)
        assert clf.pretrainer_ is pretrainer


def test_convergence_warning_untouched_by_weights(data):
    X, y, w = data
    with pytest.warns(ConvergenceWarning):
        RNNClassifier(hidden_size=3, max_iter=1).fit(X, y, sample_weight=w)


class _WeightedLosses(Callback):
    """The weighted mean squared error of the training and validation sets
    after every epoch, computed here in float64 from the module's outputs."""

    @staticmethod
    def _loss(net, dataset):
        with torch.no_grad():
            net.module_.eval()
            out = net.module_(dataset.X, lengths=dataset.lengths)
        out = out.double().numpy().reshape(len(dataset), -1)
        y = dataset.y.double().numpy().reshape(len(dataset), -1)
        w = dataset.sample_weight.double().numpy()
        return float(np.sum(w[:, None] * (out - y) ** 2) / (w.sum() * y.shape[1]))

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.train, self.valid = X, net.get_split_datasets(X, y)[1]
        self.losses = []

    def on_epoch_end(self, net, **kwargs):
        self.losses.append((self._loss(net, self.train), self._loss(net, self.valid)))


def test_epoch_losses_are_weighted_means_over_batches_of_unequal_weight():
    # skorch averaged the batches' weighted mean losses by their numbers of
    # sequences: with batches of unequal total weight, neither the recorded
    # training and validation losses nor the start (measured weighted) were
    # the weighted mean loss
    rng = np.random.RandomState(0)
    X, Xv = rng.randn(64, 4, 2), rng.randn(600, 4, 2)
    first = np.arange(600) < 300
    y, yv = X[:, :, 0].sum(axis=1), Xv[:, :, 0].sum(axis=1) + 3.0 * first
    w = np.where(np.arange(64) < 32, 10.0, 1.0)
    wv = np.where(first, 10.0, 1.0)  # validation batches of 256 sequences
    est = RNNRegressor(
        hidden_size=4,
        max_iter=2,
        batch_size=16,
        learning_rate_init=1e-9,  # the weights of an epoch stay its start's
        n_iter_no_change=50,
        random_state=0,
        callbacks=[("losses", _WeightedLosses())],
    ).fit(X, y, sample_weight=w, X_val=Xv, y_val=yv, sample_weight_val=wv)
    expected = np.array(dict(est.net_.callbacks_)["losses"].losses)
    np.testing.assert_allclose(est.loss_curve_, expected[:, 0], rtol=1e-5)
    np.testing.assert_allclose(est.validation_loss_curve_, expected[:, 1], rtol=1e-5)
