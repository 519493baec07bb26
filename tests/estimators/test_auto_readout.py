"""``pooling='auto'`` and ``pretrained_alpha='auto'`` of the LMN estimators:
the cross-validated choices of the LAES start, against explicit
computations with scikit-learn."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

from sklmn import persistence
from sklmn._training import SequenceNet
from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.estimators._start import _resolve_pooling_
from sklmn.nn import LMN
from sklmn.pretraining import LAESInitializer
from sklmn.pretraining._common import choose_pooling_
from tests._helpers import _auto_net_with_unread_blocks


def _sequences(n, seed, T=10, d=2):
    rng = np.random.RandomState(seed)
    return [rng.randn(L, d) for L in rng.randint(4, T + 1, size=n)]


def _mean_task(n=60, seed=0):
    """The class is the sign of the first feature's mean: spread over the
    whole sequence, not in its last step."""
    X = _sequences(n, seed)
    return X, np.array([int(x[:, 0].mean() > 0) for x in X])


def _last_task(n=60, seed=0):
    """The class is the sign of the last step's first feature."""
    X = _sequences(n, seed)
    return X, np.array([int(x[-1, 0] > 0) for x in X])


def _fit(cls, X, y, **params):
    settings = dict(hidden_size=6, memory_size=6, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**{**settings, **params}).fit(X, y)


def _cv_accuracy(features, labels, C=1.0, n_repeats=4):
    """Independent reference: scikit-learn's cross_val_score of a logistic
    regression over the same repeated stratified folds."""
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=n_repeats, random_state=0)
    model = LogisticRegression(C=C, max_iter=5000, solver="newton-cg")
    return cross_val_score(model, features, labels, cv=cv).mean()


def test_auto_network_starts_as_the_last_step_readout():
    """Until a pretrainer resolves it, pooling='auto' builds the network of
    pooling='last': the same random draws, the mean block off."""
    nets = {}
    for pooling in ("last", "auto"):
        torch.manual_seed(0)
        nets[pooling] = SequenceNet(LMN(2, 5, 4), 3, pooling=pooling)
    last, auto = nets["last"], nets["auto"]
    assert float(auto.pool_scale) == 0.0
    assert float(auto.extrema_scale) == 0.0
    assert auto.resolved_pooling == "last"
    # last step, mean, maxima, minima
    assert auto.readout.in_features == 16
    torch.testing.assert_close(auto.readout.weight[:, :4], last.readout.weight)
    torch.testing.assert_close(auto.readout.weight[:, 4:], torch.zeros(3, 12))
    x, lengths = torch.randn(3, 7, 2), torch.tensor([7, 4, 2])
    torch.testing.assert_close(auto(x, lengths=lengths), last(x, lengths=lengths))


def test_resolving_auto_without_a_start_keeps_the_function():
    """Without a start, the mean block joins at scale 1 with zero weights
    (whatever they were while read at scale 0), the extrema stay off: the
    same outputs."""
    net, x, lengths, before = _auto_net_with_unread_blocks()
    assert _resolve_pooling_(net, None) == "last+mean"
    assert float(net.pool_scale) == 1.0
    assert float(net.extrema_scale) == 0.0
    torch.testing.assert_close(net.readout.weight[:, 4:], torch.zeros(3, 12))
    torch.testing.assert_close(net(x, lengths=lengths), before)


def test_auto_without_a_start_trains_both_blocks():
    X, y = _mean_task()
    clf = _fit(LMNClassifier, X, y, pretrainer=None)
    assert clf.pooling_ == "last+mean"
    module = clf.net_.module_
    assert float(module.pool_scale) == 1.0
    assert float(module.extrema_scale) == 0.0
    # the mean block learned (it starts at zero); the extrema, read at
    # scale 0, get no gradient
    assert module.readout.weight[:, 6:12].abs().max() > 0
    np.testing.assert_array_equal(module.readout.weight[:, 12:].detach().numpy(), 0.0)
    last = _fit(LMNClassifier, X, y, pretrainer=None, pooling="last")
    assert last.pooling_ == "last"
    assert not np.allclose(clf.predict_proba(X), last.predict_proba(X), atol=1e-4)


class _NoChoice:
    """A pretrainer that does not choose the pooling (and changes nothing)."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def initialize(self, module, context):
        return self


def test_auto_with_a_start_that_does_not_choose_reads_the_last_step():
    X, y = _mean_task()
    clf = _fit(LMNClassifier, X, y, pretrainer=_NoChoice())
    assert clf.pooling_ == "last"
    assert float(clf.net_.module_.pool_scale) == 0.0


def test_a_rejected_regression_start_reads_both_blocks():
    X = _sequences(60, 0)
    y = np.random.RandomState(1).randn(60)  # unrelated to X: R² <= 0
    reg = _fit(LMNRegressor, X, y)
    assert reg.pretrainer_ is None  # rejected
    assert reg.pooling_ == "last+mean"
    assert float(reg.net_.module_.pool_scale) == 1.0


def test_pooling_attribute_follows_the_start_choice():
    X, y = _last_task()
    clf = _fit(LMNClassifier, X, y)
    assert clf.pooling_ == clf.pretrainer_.pooling_
    scale = float(clf.net_.module_.pool_scale)
    assert (scale != 0.0) == (clf.pooling_ == "last+mean")
    fixed = _fit(LMNClassifier, X, y, pooling="last")
    assert fixed.pooling_ == "last"


class _Pooled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pool_scale", torch.tensor(0.7))


@pytest.mark.parametrize("informative", ["last", "mean"])
def test_choose_pooling_scores_are_sklearn_cross_validation(informative):
    rng = np.random.RandomState(0)
    n = 80
    last, mean = rng.randn(n, 3), rng.randn(n, 3)
    labels = (last[:, 0] if informative == "last" else mean[:, 0]) > 0
    features = np.hstack([last, mean])
    targets = np.eye(2)[labels.astype(int)]
    module = _Pooled()
    pooling, scores, rows = choose_pooling_(
        module, features, targets, "multiclass", logistic=True, C=1.0
    )
    assert scores["last"] == pytest.approx(_cv_accuracy(last, labels), abs=1e-9)
    assert scores["last+mean"] == pytest.approx(
        _cv_accuracy(features, labels), abs=1e-9
    )
    if informative == "mean":
        assert pooling == "last+mean"
        assert float(module.pool_scale) == pytest.approx(0.7)
        np.testing.assert_array_equal(rows, features)
    else:
        # a gain of less than one sequence in n is not evidence for the mean
        assert scores["last+mean"] <= scores["last"] + 1 / n
        assert pooling == "last"
        assert float(module.pool_scale) == 0.0
        np.testing.assert_array_equal(rows[:, 3:], 0.0)
        np.testing.assert_array_equal(rows[:, :3], last)


class _PooledExtrema(_Pooled):
    def __init__(self):
        super().__init__()
        self.register_buffer("extrema_scale", torch.tensor(0.4))


@pytest.mark.parametrize("informative", ["last", "mean", "extrema"])
def test_choose_pooling_takes_nested_candidates_in_order(informative):
    """Three nested feature sets, each scored by scikit-learn's cross
    validation; a larger one is taken only when it beats the current choice
    by more than one sequence in n."""
    rng = np.random.RandomState(0)
    n = 80
    last, mean, extrema = rng.randn(n, 3), rng.randn(n, 3), rng.randn(n, 6)
    signal = {"last": last, "mean": mean, "extrema": extrema}[informative]
    labels = signal[:, 0] > 0
    features = np.hstack([last, mean, extrema])
    targets = np.eye(2)[labels.astype(int)]
    module = _PooledExtrema()
    pooling, scores, rows = choose_pooling_(
        module, features, targets, "multiclass", logistic=True, C=1.0
    )
    for name, width in (("last", 3), ("last+mean", 6), ("last+mean+max", 12)):
        want = _cv_accuracy(features[:, :width], labels)
        assert scores[name] == pytest.approx(want, abs=1e-9)
    chosen = "last"
    for name in ("last+mean", "last+mean+max"):
        if scores[name] > scores[chosen] + 1 / n:
            chosen = name
    assert pooling == chosen
    expected = {"last": "last", "mean": "last+mean", "extrema": "last+mean+max"}
    assert pooling == expected[informative]
    width = {"last": 3, "last+mean": 6, "last+mean+max": 12}[pooling]
    np.testing.assert_array_equal(rows[:, :width], features[:, :width])
    np.testing.assert_array_equal(rows[:, width:], 0.0)
    assert (float(module.pool_scale) == 0.0) == (pooling == "last")
    assert (float(module.extrema_scale) == 0.0) == (pooling != "last+mean+max")


def test_classifier_keeps_the_mean_where_the_class_is_spread_over_the_series():
    X, y = _mean_task()
    clf = _fit(LMNClassifier, X, y, pooling="auto")
    start = clf.pretrainer_
    assert start.pooling_ == "last+mean"
    assert start.pooling_scores_["last+mean"] > start.pooling_scores_["last"]
    # the pooling is chosen at C; the score of the C finally used is kept
    assert dict(start.C_scores_)[1.0] == start.pooling_scores_["last+mean"]
    assert start.readout_cv_score_ == dict(start.C_scores_)[start.C_]
    assert float(clf.net_.module_.pool_scale) > 0


def test_classifier_that_resolves_to_last_trains_as_the_last_readout():
    """The mean block at scale 0 gets no gradient: the whole fit is the fit
    of pooling='last'."""
    X, y = _last_task()
    auto = _fit(LMNClassifier, X, y, pooling="auto", pretrained_alpha=0.0)
    assert auto.pretrainer_.pooling_ == "last"
    assert float(auto.net_.module_.pool_scale) == 0.0
    last = _fit(LMNClassifier, X, y, pooling="last", pretrained_alpha=0.0)
    assert last.pretrainer_.pooling_ == "last"
    assert last.pretrainer_.pooling_scores_ is None
    assert auto.n_iter_ == last.n_iter_ == 3
    np.testing.assert_allclose(
        auto.predict_proba(X), last.predict_proba(X), rtol=1e-4, atol=1e-5
    )
    weight = auto.net_.module_.readout.weight.detach().numpy()
    np.testing.assert_array_equal(weight[:, 6:], 0.0)


def test_readout_cv_score_is_the_cross_validated_accuracy_of_the_start():
    X, y = _last_task()
    start = _fit(
        LMNClassifier,
        X,
        y,
        pooling="last",
        standardize=False,
        max_iter=1,
        learning_rate_init=1e-12,
    )
    # the network's final states at the start, one sequence at a time
    recurrent = start.net_.module_.recurrent
    with torch.no_grad():
        states = np.array(
            [
                recurrent(torch.tensor(x[None], dtype=torch.float32))[0][0, -1].numpy()
                for x in X
            ]
        )
    want = _cv_accuracy(states.astype(np.float64), y, C=start.pretrainer_.C_)
    # the states of a padded batch against one sequence at a time: a
    # borderline row may fall either way (one row in a fold of 12)
    assert start.pretrainer_.readout_cv_score_ == pytest.approx(want, abs=0.02)


def test_auto_anchor_holds_a_start_that_predicts_held_out_sequences():
    X, y = _last_task(n=80)
    strong = _fit(LMNClassifier, X, y, pooling="last", pretrained_alpha="auto")
    assert strong.pretrainer_.readout_cv_score_ >= 0.9
    assert strong.pretrained_alpha_ == 10.0
    names = [name for name, _ in strong.net_.callbacks_]
    assert "anchor_to_start" in names

    rng = np.random.RandomState(1)
    noise = rng.randint(0, 2, size=len(X))  # nothing to predict
    weak = _fit(LMNClassifier, X, noise, pooling="last", pretrained_alpha="auto")
    assert weak.pretrainer_.readout_cv_score_ < 0.9
    assert weak.pretrained_alpha_ == 0.0
    assert "anchor_to_start" not in [name for name, _ in weak.net_.callbacks_]


def test_pretrained_alpha_resolution():
    X, y = _last_task()
    assert _fit(LMNClassifier, X, y, pretrained_alpha=3.0).pretrained_alpha_ == 3.0
    # without a start there is nothing to anchor to
    none = _fit(LMNClassifier, X, y, pretrainer=None, pretrained_alpha="auto")
    assert none.pretrained_alpha_ == 0.0
    with pytest.raises(ValueError, match="pretrained_alpha"):
        LMNClassifier(pretrained_alpha="strong").fit(X, y)
    with pytest.raises(ValueError, match="pooling"):
        LMNClassifier(pooling="mean").fit(X, y)


def test_regressor_auto_pooling_compares_leave_one_out_r2():
    X, y = _mean_task(n=60)
    target = np.array([x[:, 0].mean() for x in X])
    reg = _fit(LMNRegressor, X, target, pooling="auto", early_stopping=False)
    start = reg.pretrainer_
    assert start.pooling_ == "last+mean"
    assert start.pooling_scores_["last+mean"] > start.pooling_scores_["last"] + 1 / 60
    assert start.readout_cv_score_ == start.readout_loo_r2_
    # the readout is refitted with the unchosen block's columns at zero
    assert start.readout_loo_r2_ == pytest.approx(
        start.pooling_scores_[start.pooling_], rel=1e-5
    )


def test_auto_models_round_trip_through_the_safe_format(tmp_path):
    X, y = _mean_task()
    clf = _fit(LMNClassifier, X, y, pooling="auto", pretrained_alpha="auto")
    reg = _fit(
        LMNRegressor, X, y.astype(float), pooling="auto", pretrained_alpha="auto"
    )
    for est, predict in ((clf, "predict_proba"), (reg, "predict")):
        path = tmp_path / f"{type(est).__name__}.sklmn"
        persistence.save(est, path)
        loaded = persistence.load(path)
        np.testing.assert_allclose(
            getattr(loaded, predict)(X), getattr(est, predict)(X), rtol=1e-6, atol=1e-7
        )
        assert loaded.pretrained_alpha_ == est.pretrained_alpha_
        if est.pretrainer_ is not None:
            assert loaded.pretrainer_.pooling_ == est.pretrainer_.pooling_


def test_a_model_whose_parameters_changed_after_fit_round_trips(tmp_path):
    # the file was rebuilt from the current parameters: after
    # set_params(pooling='last') a network fitted with the pooled readout
    # 'auto' chose, or with another memory or size, could not be loaded
    X, y = _mean_task(n=30)
    clf = _fit(LMNClassifier, X, y, pretrainer=None, max_iter=1)
    assert clf.pooling_ == "last+mean" and clf.memory_matrix_ == "schur"
    expected = clf.predict_proba(X)
    clf.set_params(pooling="last", memory_matrix="free", hidden_size=3)
    persistence.save(clf, tmp_path / "changed.sklmn")
    loaded = persistence.load(tmp_path / "changed.sklmn")
    assert (loaded.pooling, loaded.memory_matrix, loaded.hidden_size) == (
        "last",
        "free",
        3,
    )
    assert loaded._fitted_params["pooling"] == "auto"
    np.testing.assert_allclose(loaded.predict_proba(X), expected, rtol=1e-6, atol=1e-7)
    # the next fit trains what the parameters now say
    loaded.set_params(max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.fit(X, y)
    assert loaded.pooling_ == "last"
    assert loaded.net_.module_.recurrent.hidden_size == 3


def test_laes_initializer_reports_pooling_of_fixed_readouts():
    X, y = _last_task()
    clf = _fit(LMNClassifier, X, y, pooling="last+mean", pretrainer=LAESInitializer())
    assert clf.pretrainer_.pooling_ == "last+mean"
    assert clf.pretrainer_.pooling_scores_ is None


def test_multiscale_auto_pooling_and_its_incremental_training():
    from sklmn.estimators import MultiScaleLMNClassifier
    from sklmn.pretraining import IncrementalTraining

    X, y = _mean_task()
    small = dict(hidden_size=6, memory_size=3, n_modules=2)
    clf = _fit(MultiScaleLMNClassifier, X, y, **small)
    assert clf.pooling == "auto"
    start = clf.pretrainer_
    assert start.pooling_ == "last+mean"
    assert start.pooling_scores_["last+mean"] > start.pooling_scores_["last"]
    assert float(clf.net_.module_.pool_scale) > 0
    # growth stages reshape a last-step readout: 'auto' reads the last step
    grown = _fit(
        MultiScaleLMNClassifier,
        X,
        y,
        incremental=IncrementalTraining(epochs_per_module=1),
        **small,
    )
    assert grown.net_.module_.pooling == "last"
    with pytest.raises(ValueError, match="pooling='last\\+mean' cannot be combined"):
        MultiScaleLMNClassifier(
            pooling="last+mean", incremental=IncrementalTraining(), **small
        ).fit(X, y)


def test_multiscale_pooled_model_round_trips(tmp_path):
    from sklmn.estimators import MultiScaleLMNClassifier

    X, y = _mean_task()
    clf = _fit(MultiScaleLMNClassifier, X, y, hidden_size=6, memory_size=3, n_modules=2)
    path = tmp_path / "ms.sklmn"
    persistence.save(clf, path)
    loaded = persistence.load(path)
    np.testing.assert_allclose(
        loaded.predict_proba(X), clf.predict_proba(X), rtol=1e-6, atol=1e-7
    )
    assert loaded.pretrained_alpha_ == clf.pretrained_alpha_ == 10.0


@pytest.mark.parametrize("kind", ["multilabel", "bidirectional-regressor", "two-layer"])
def test_auto_pooling_on_other_shapes(kind):
    """The cross-validated choice runs for multilabel targets (plain folds),
    bidirectional and stacked networks; the resolved network predicts
    finite values and the mean block is off exactly when 'last' is kept."""
    X, y = _mean_task()
    if kind == "multilabel":
        Y = np.column_stack([y, [int(x[-1, 1] > 0) for x in X]])
        est = _fit(LMNClassifier, X, Y, pooling="auto")
        out = est.predict_proba(X)
    elif kind == "bidirectional-regressor":
        target = np.array([x[:, 0].mean() for x in X])
        est = _fit(LMNRegressor, X, target, pooling="auto", bidirectional=True)
        out = est.predict(X)
    else:
        est = _fit(LMNClassifier, X, y, pooling="auto", num_layers=2)
        out = est.predict_proba(X)
    assert np.all(np.isfinite(out))
    start = est.pretrainer_
    candidates = {"last", "last+mean", "last+mean+max"}
    assert start.pooling_ in candidates
    assert set(start.pooling_scores_) == candidates
    off = float(est.net_.module_.pool_scale) == 0.0
    assert off == (start.pooling_ == "last")
    extrema_off = float(est.net_.module_.extrema_scale) == 0.0
    assert extrema_off == (start.pooling_ != "last+mean+max")


def test_choose_pooling_weights_the_fold_fits():
    """Row weights weigh the readout fitted on each fold (the held-out
    accuracy is unweighted), as a loop over scikit-learn's folds does."""
    rng = np.random.RandomState(3)
    n = 60
    last, mean = rng.randn(n, 2), rng.randn(n, 2)
    labels = (mean[:, 0] + 0.8 * rng.randn(n) > 0).astype(int)
    weight = rng.uniform(0.2, 3.0, size=n)
    features = np.hstack([last, mean])
    _, scores, _ = choose_pooling_(
        _Pooled(),
        features,
        np.eye(2)[labels],
        "multiclass",
        logistic=True,
        C=0.5,
        sample_weight=weight,
    )
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=4, random_state=0)
    for name, rows_ in (("last", last), ("last+mean", features)):
        accuracies = []
        for train, test in cv.split(rows_, labels):
            model = LogisticRegression(C=0.5, max_iter=5000, solver="newton-cg")
            model.fit(rows_[train], labels[train], sample_weight=weight[train])
            accuracies.append(model.score(rows_[test], labels[test]))
        assert scores[name] == pytest.approx(np.mean(accuracies), abs=1e-9)


@pytest.mark.parametrize(
    "n, n_repeats", [(266, 4), (267, 3), (399, 3), (400, 2), (799, 2), (800, 1)]
)
def test_larger_sets_take_fewer_repeats_of_the_folds(n, n_repeats):
    """Enough repeats of the 5 folds to score 800 held-out rows, at most 4:
    the scores are scikit-learn's over that many repeats, not 4."""
    rng = np.random.RandomState(1)
    last, mean = rng.randn(n, 2), rng.randn(n, 2)
    labels = (last[:, 0] + 0.5 * mean[:, 0] + rng.randn(n) > 0).astype(int)
    features = np.hstack([last, mean])
    _, scores, _ = choose_pooling_(
        _Pooled(), features, np.eye(2)[labels], "multiclass", logistic=True, C=1.0
    )
    assert scores["last+mean"] == pytest.approx(
        _cv_accuracy(features, labels, n_repeats=n_repeats), abs=1e-9
    )
    if n_repeats < 4:
        assert scores["last+mean"] != pytest.approx(
            _cv_accuracy(features, labels, n_repeats=n_repeats + 1), abs=1e-9
        )


def test_c_candidates_are_scored_by_cross_validation_and_taken_by_margin():
    X, y = _last_task(n=60)
    pretrainer = LAESInitializer(
        alpha="gcv", readout="auto", C_candidates=(0.1, 10.0, 100.0)
    )
    est = _fit(
        LMNClassifier,
        X,
        y,
        pooling="last",
        pretrainer=pretrainer,
        standardize=False,
        max_iter=1,
        learning_rate_init=1e-12,
    )
    start = est.pretrainer_
    assert [C for C, _ in start.C_scores_] == [1.0, 0.1, 10.0, 100.0]
    scores = dict(start.C_scores_)
    recurrent = est.net_.module_.recurrent
    with torch.no_grad():
        states = np.array(
            [
                recurrent(torch.tensor(x[None], dtype=torch.float32))[0][0, -1].numpy()
                for x in X
            ]
        )
    for C, score in scores.items():
        # a padded batch against one sequence at a time: a borderline row
        # may fall either way (one row in a fold of 12)
        assert score == pytest.approx(
            _cv_accuracy(states.astype(np.float64), y, C=C), abs=0.02
        )
    chosen, best = 1.0, scores[1.0]
    for C in (0.1, 10.0, 100.0):
        if scores[C] > best + 1 / len(X):
            chosen, best = C, scores[C]
    assert start.C_ == chosen
    assert start.readout_cv_score_ == best
    plain = _fit(LMNClassifier, X, y, pretrainer=LAESInitializer(readout="auto"))
    assert plain.pretrainer_.C_ == 1.0 and plain.pretrainer_.C_scores_ is None
    # the LMN classifiers' 'auto' start tries them; the regressors' ridge
    # readout has no C
    assert _fit(LMNClassifier, X, y).pretrainer_.C_candidates == (0.1, 10.0, 100.0)
    assert _fit(LMNRegressor, X, y.astype(float)).pretrainer_.C_ is None


@pytest.mark.parametrize("bad", [(0.1, -1.0), (0.0,), ("a",), (np.inf,), (True,)])
def test_c_candidates_are_validated(bad):
    X, y = _last_task(n=20)
    with pytest.raises(ValueError, match="C_candidates must hold positive finite"):
        LMNClassifier(max_iter=1, pretrainer=LAESInitializer(C_candidates=bad)).fit(
            X, y
        )


@pytest.mark.parametrize("empty", [[], (), np.array([])])
def test_empty_c_candidates_are_refused_at_fit(empty):
    X, y = _last_task(n=20)
    start = LAESInitializer(C_candidates=empty)  # accepted until fit
    with pytest.raises(ValueError, match=r"C_candidates must hold at least one"):
        LMNClassifier(max_iter=1, pretrainer=start).fit(X, y)
