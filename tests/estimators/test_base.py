"""Behaviour of the sequence estimators beyond scikit-learn's common checks:
fit/predict/score on every estimator, training behaviour, warm start,
scikit-learn integration and parameter validation
(``sklmn/estimators/_base.py``)."""

import io
import pickle
import warnings

import joblib
import numpy as np
import pytest
import torch
from numpy.testing import assert_array_equal
from sklearn.base import clone, is_regressor
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from skorch.callbacks import Callback

from sklmn.callbacks import DivergenceWarning
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
from tests._helpers import (
    _lmn_clf,
    _lmn_reg,
    _pad,
    _ragged,
    _sequence_targets,
    _timestep_targets,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# --------------------------------------------------------------------------- #
# Every estimator on ragged input, both target layouts
# --------------------------------------------------------------------------- #
SMALL = [
    LMNClassifier(hidden_size=4, memory_size=4, bidirectional=True, num_layers=2),
    LMNRegressor(hidden_size=4, memory_size=4, memory_matrix="orthogonal"),
    MultiScaleLMNClassifier(hidden_size=4, memory_size=2, n_modules=3),
    MultiScaleLMNRegressor(hidden_size=4, memory_size=2, n_modules=3),
    ENRNNClassifier(hidden_size=4, short_size=2),
    ENRNNRegressor(hidden_size=4, short_size=2, coupling=True),
    *[
        RNNClassifier(cell=cell, hidden_size=4, n_modules=2, tape_length=2)
        for cell in ("elman", "lstm", "gru", "linear", "clockwork", "unrolled")
    ],
    RNNRegressor(cell="lstm", hidden_size=4, bidirectional=True),
    RNNRegressor(cell="elman", hidden_size=4, recurrent_init="orthogonal"),
    RNNClassifier(
        cell="linear",
        hidden_size=4,
        num_layers=2,
        bidirectional=True,
        recurrent_matrix="orthogonal",
    ),
    ENRNNClassifier(hidden_size=4, short_size=2, num_layers=2, bidirectional=True),
]


@pytest.mark.parametrize("target", ["sequence", "timestep"])
@pytest.mark.parametrize("estimator", SMALL, ids=lambda e: repr(e))
def test_every_estimator_on_ragged_input(estimator, target):
    seqs = _ragged(n=12, d=2, low=1, high=7)
    is_reg = is_regressor(estimator)
    if target == "sequence":
        y = _sequence_targets(seqs, "regression" if is_reg else "binary")
    else:
        y = _timestep_targets(seqs, "regression" if is_reg else "binary")
    est = clone(estimator).set_params(max_iter=2, target=target, random_state=0)
    est.fit(seqs, y)
    pred = est.predict(seqs)
    if target == "timestep":
        assert [len(p) for p in pred] == [len(s) for s in seqs]
    else:
        assert pred.shape == (12,)
    assert np.isfinite(est.score(seqs, y))


# --------------------------------------------------------------------------- #
# Training behaviour
# --------------------------------------------------------------------------- #
def test_classifiers_train_accuracy():
    # The accuracy part of sklearn's check_classifiers_train (listed as an
    # expected failure in test_common.py because of its predict(X.T) part).
    X, y = make_blobs(n_samples=300, random_state=0)
    X = StandardScaler().fit_transform(X)
    fast = dict(max_iter=30, batch_size=50, learning_rate_init=0.05, random_state=0)
    for est in (
        LMNClassifier(hidden_size=8, memory_size=8, **fast),
        RNNClassifier(cell="gru", hidden_size=8, **fast),
    ):
        for mask in (slice(None), y != 2):  # multiclass and binary
            est.fit(X[mask], y[mask])
            assert est.score(X[mask], y[mask]) > 0.83


def test_random_state_reproducible_and_global_rng_untouched():
    seqs = _ragged(n=30)
    y = _sequence_targets(seqs, "multiclass")
    state = torch.get_rng_state()
    np_state = np.random.get_state()[1].copy()  # noqa: NPY002
    a = _lmn_clf(max_iter=5, dropout=0.0).fit(seqs, y)
    b = _lmn_clf(max_iter=5, dropout=0.0).fit(seqs, y)
    assert_array_equal(a.predict_proba(seqs), b.predict_proba(seqs))
    assert a.loss_curve_ == b.loss_curve_
    assert torch.equal(torch.get_rng_state(), state)
    assert_array_equal(np.random.get_state()[1], np_state)  # noqa: NPY002
    # another seed gives another model (not just other rounding); the default
    # LAES initialization is deterministic, so compare random initializations
    a = _lmn_clf(max_iter=5, pretrainer=None).fit(seqs, y)
    c = _lmn_clf(max_iter=5, random_state=1, pretrainer=None).fit(seqs, y)
    assert not np.allclose(
        a.predict_proba(seqs), c.predict_proba(seqs), rtol=0, atol=1e-3
    )


def test_warm_start_continues_training():
    seqs = _ragged(n=30)
    y = _sequence_targets(seqs, "regression")
    # no validation: every epoch's weights may be kept (with a validation set
    # a warm fit that does not improve keeps its starting weights); no LAES
    # start, which fits this target nearly exactly and is kept by every fit
    kw = dict(max_iter=4, early_stopping=False, pretrainer=None)
    est = _lmn_reg(warm_start=True, **kw).fit(seqs, y)
    module = est.net_.module_
    last_curve = list(est.loss_curve_)
    weights = {k: v.clone() for k, v in module.state_dict().items()}
    cold = _lmn_reg(**kw).fit(seqs, y)
    est.fit(seqs, y)
    assert est.n_iter_ == 8
    assert est.loss_curve_[:4] == last_curve
    trained = est.net_.module_.state_dict()
    assert any(
        not torch.allclose(weights[k], v, rtol=0, atol=1e-3) for k, v in trained.items()
    )
    # continuing from the trained weights: the 5th epoch is better than a new
    # model's last epoch
    assert est.loss_curve_[4] < cold.loss_curve_[0]
    est.set_params(hidden_size=5)
    with pytest.raises(ValueError, match=r"hidden_size: 8 -> 5"):
        est.fit(seqs, y)
    # a warm start that diverges leaves the fitted model untouched
    before = est.predict(seqs)
    est.set_params(hidden_size=8)
    with warnings.catch_warnings():  # a divergence made an error
        warnings.simplefilter("error", DivergenceWarning)
        with pytest.raises(DivergenceWarning):
            est.fit(seqs, np.full(30, 1e30))
    assert_array_equal(est.predict(seqs), before)


def test_warm_start_rejects_new_classes():
    seqs = _ragged(n=30)
    y = _sequence_targets(seqs, "binary")
    est = _lmn_clf(max_iter=2, warm_start=True).fit(seqs, y)
    with pytest.raises(ValueError, match="same classes"):
        est.fit(seqs, y + 5)


def test_convergence_warning_and_converged_stop():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "binary")
    with pytest.warns(ConvergenceWarning, match=r"Maximum iterations \(2\)"):
        _lmn_clf(max_iter=2).fit(seqs, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # a huge tol: no epoch improves on the starting weights, so training
        # stops once n_iter_no_change + 1 epochs did not improve
        est = _lmn_clf(max_iter=50, tol=1e3, n_iter_no_change=2).fit(seqs, y)
    assert est.n_iter_ == 3


def test_gradient_clipping_and_optimizers():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "regression")
    for optimizer in ("adam", "adamw", "sgd", "rmsprop"):
        est = _lmn_reg(max_iter=2, optimizer=optimizer, gradient_clipping=0.5)
        est.fit(seqs, y)
        assert type(est.net_.optimizer_).__name__.lower() == optimizer
        assert "gradient_clipping" in dict(est.net_.callbacks_)


def test_user_callbacks_are_passed_through_and_copied():
    from skorch.callbacks import Callback

    class Count(Callback):
        def __init__(self):
            self.epochs = 0

        def on_epoch_end(self, net, **kwargs):
            self.epochs += 1

    count = Count()
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "binary")
    est = _lmn_clf(max_iter=3, callbacks=[("count", count)]).fit(seqs, y)
    assert dict(est.net_.callbacks_)["count"].epochs == 3
    assert count.epochs == 0  # the parameter itself is not mutated


# --------------------------------------------------------------------------- #
# scikit-learn integration
# --------------------------------------------------------------------------- #
def test_pipeline_grid_search_and_cross_val_score():
    seqs = _ragged(n=40, low=6, high=7)  # equal lengths: a 2-D univariate X
    X = np.array([s[:, 0] for s in seqs])
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), _lmn_clf(max_iter=5))
    grid = GridSearchCV(pipe, {"lmnclassifier__memory_size": [2, 4]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["lmnclassifier__memory_size"] in (2, 4)
    assert grid.best_estimator_[-1].net_.module_.recurrent.memory_size in (2, 4)
    scores = cross_val_score(_lmn_clf(max_iter=5), seqs, y, cv=2)
    assert scores.shape == (2,)


@pytest.mark.parametrize("dump", ["pickle", "joblib"])
def test_clone_pickle_joblib_round_trip(dump):
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "multiclass")
    est = _lmn_clf(max_iter=3).fit(seqs, y)
    if dump == "pickle":
        loaded = pickle.loads(pickle.dumps(est))
    else:
        buffer = io.BytesIO()
        joblib.dump(est, buffer)
        buffer.seek(0)
        loaded = joblib.load(buffer)
    assert_array_equal(loaded.predict_proba(seqs), est.predict_proba(seqs))
    assert_array_equal(loaded.predict(seqs), est.predict(seqs))
    # the module parameter and the trained module stay one object
    assert loaded.net_.module is loaded.net_.module_
    fresh = clone(est)
    assert not hasattr(fresh, "net_")
    assert fresh.get_params() == est.get_params()


def test_caller_data_unmodified():
    seqs = _ragged(n=20)
    X_list = [s.copy() for s in seqs]
    X_pad = _pad(seqs)
    X_pad_copy = X_pad.copy()
    y = _timestep_targets(seqs, "regression")
    y_copy = [v.copy() for v in y]
    est = _lmn_reg(target="timestep", max_iter=2).fit(X_list, y)
    est.predict(X_list)
    est.score(X_pad, _pad(y))
    for a, b in zip(X_list, seqs, strict=True):
        assert_array_equal(a, b)
    assert_array_equal(X_pad, X_pad_copy)
    for a, b in zip(y, y_copy, strict=True):
        assert_array_equal(a, b)


# --------------------------------------------------------------------------- #
# Validation messages
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "estimator, match",
    [
        (LMNClassifier(hidden_size=0), "'hidden_size' parameter"),
        (LMNClassifier(target="step"), "'target' parameter"),
        (LMNRegressor(optimizer="lbfgs"), "'optimizer' parameter"),
        (RNNClassifier(cell="transformer"), "'cell' parameter"),
        (RNNClassifier(recurrent_init="identity"), "'recurrent_init' parameter"),
        (RNNRegressor(recurrent_matrix="unitary"), "'recurrent_matrix' parameter"),
        (ENRNNClassifier(num_layers=0), "'num_layers' parameter"),
        (ENRNNRegressor(bidirectional="yes"), "'bidirectional' parameter"),
        (LMNRegressor(validation_fraction=1.0), "'validation_fraction' parameter"),
    ],
)
def test_invalid_parameters(estimator, match):
    seqs = _ragged(n=6)
    with pytest.raises(InvalidParameterError, match=match):
        estimator.fit(seqs, np.arange(6) % 2)


@pytest.mark.parametrize(
    "estimator, match",
    [
        (
            RNNClassifier(cell="clockwork", hidden_size=7, n_modules=2),
            r"multiple of n_modules.*hidden_size=7 and n_modules=2",
        ),
        (
            RNNClassifier(cell="unrolled", num_layers=2),
            r"cell='unrolled' does not support \{'num_layers': 2\}",
        ),
        (
            RNNClassifier(cell="gru", recurrent_matrix="orthogonal"),
            r"recurrent_matrix='orthogonal' applies to cell='linear' only, got "
            r"cell='gru'",
        ),
        (
            RNNClassifier(cell="clockwork", recurrent_init="orthogonal", n_modules=2),
            r"cell='clockwork' does not support \{'recurrent_init': 'orthogonal'\}",
        ),
        (ENRNNClassifier(hidden_size=2, n_negative=3), "n_negative must be at most"),
        (LMNClassifier(device="cuda:7"), "device='cuda:7'"),
        (LMNClassifier(device="gpu"), "device must be a torch device"),
    ],
)
def test_invalid_model_parameters(estimator, match):
    if "cuda" in repr(estimator) and torch.cuda.is_available():
        pytest.skip("CUDA is available")
    seqs = _ragged(n=6)
    with pytest.raises(ValueError, match=match):
        estimator.set_params(max_iter=1).fit(seqs, np.arange(6) % 2)


def test_predict_checks_features_per_step():
    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1).fit(seqs, np.arange(10.0))
    with pytest.raises(ValueError, match="expecting 3 features per time step"):
        est.predict([s[:, :2] for s in seqs])


def test_timestep_regression_score_is_r2_over_valid_steps():
    seqs = _ragged(n=20)
    y = _timestep_targets(seqs, "regression")
    est = _lmn_reg(target="timestep", max_iter=5).fit(seqs, y)
    pred = est.predict(seqs)
    expected = r2_score(np.concatenate(y), np.concatenate(pred))
    assert est.score(seqs, y) == pytest.approx(expected, rel=1e-12)


def test_n_threads_is_set_for_the_call_and_restored():
    from skorch.callbacks import Callback

    class Probe(Callback):
        def on_epoch_end(self, net, **kwargs):
            self.seen = torch.get_num_threads()

    before = torch.get_num_threads()
    X, y = _ragged(20, seed=3), np.arange(20) % 2
    clf = _lmn_clf(n_threads=1, callbacks=[("probe", Probe())]).fit(X, y)
    assert dict(clf.net_.callbacks_)["probe"].seen == 1
    assert torch.get_num_threads() == before
    free = clone(clf).set_params(n_threads=None).fit(X, y)
    np.testing.assert_allclose(
        clf.predict_proba(X), free.predict_proba(X), rtol=1e-5, atol=1e-6
    )
    assert torch.get_num_threads() == before


class _ZeroReadout(Callback):
    """Zero the readout at the end of every epoch (its weights then predict
    the mean, worse than trained ones)."""

    def on_epoch_end(self, net, **kwargs):
        with torch.no_grad():
            for p in net.module_.readout.parameters():
                p.zero_()


def test_warm_start_that_keeps_its_start_reports_the_epoch_kept_before():
    # the start of a warm start is the epoch the previous fit kept, not its
    # last one: best_epoch_ named the last epoch of the previous fit
    rng = np.random.RandomState(0)
    X = rng.randn(40, 5, 2)
    y = X[:, :, 0].sum(axis=1)
    est = RNNRegressor(
        hidden_size=4,
        max_iter=30,
        learning_rate_init=0.05,
        early_stopping=True,
        n_iter_no_change=3,
        random_state=0,
    ).fit(X, y)
    kept, n_iter, before = est.best_epoch_, est.n_iter_, est.predict(X)
    assert 0 < kept < n_iter  # stopped early: the last epochs were not kept
    est.set_params(warm_start=True, max_iter=3, callbacks=[("ruin", _ZeroReadout())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    assert est.n_iter_ == n_iter + 3
    assert est.best_epoch_ == kept
    np.testing.assert_allclose(est.predict(X), before, rtol=1e-6, atol=1e-6)


class _NaNAtEpoch(Callback):
    """Make a parameter non-finite at the end of epoch ``epoch``."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_epoch_end(self, net, **kwargs):
        if len(net.history) == self.epoch:
            with torch.no_grad():
                next(net.module_.parameters()).fill_(float("nan"))


def test_divergence_in_the_last_epoch_is_not_reported_as_max_iter_reached():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "binary")
    est = _lmn_clf(max_iter=2, callbacks=[("nan", _NaNAtEpoch(2))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(seqs, y)
    kinds = [w.category for w in caught]
    assert DivergenceWarning in kinds and est.diverged_ and est.n_iter_ == 2
    assert ConvergenceWarning not in kinds
