"""Behaviour of the sequence estimators beyond scikit-learn's common checks."""

import io
import pickle
import re
import warnings

import joblib
import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone, is_regressor
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

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
from sklmn.estimators._net import (
    SequenceDataset,
    SequenceLoss,
    SequenceNet,
    score_outputs,
)
from sklmn.metrics import frame_level_accuracy

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

FAST = dict(max_iter=40, learning_rate_init=0.03, random_state=0)


def _lmn_clf(**kw):
    return LMNClassifier(hidden_size=8, memory_size=8, **{**FAST, **kw})


def _lmn_reg(**kw):
    return LMNRegressor(hidden_size=8, memory_size=8, **{**FAST, **kw})


def _ragged(n=60, d=3, low=3, high=9, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(rng.randint(low, high), d) for _ in range(n)]


def _pad(seqs, fill=np.nan):
    T = max(len(s) for s in seqs)
    dtype = object if fill is None else float
    out = np.full((len(seqs), T) + seqs[0].shape[1:], fill, dtype=dtype)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out


def _layout(seqs, layout):
    return seqs if layout == "ragged" else _pad(seqs)


# --------------------------------------------------------------------------- #
# Every target kind, mixed lengths, ragged and padded inputs
# --------------------------------------------------------------------------- #
def _sequence_targets(X, kind):
    # functions of each sequence's last valid step: a model reading a padded
    # step instead cannot fit them
    last = np.array([x[-1] for x in X])
    if kind == "multiclass":
        return np.array(["a", "b", "c"])[last.argmax(axis=1)]
    if kind == "binary":
        return (last[:, 0] > 0).astype(int)
    if kind == "multilabel":
        return (last > 0).astype(int)
    if kind == "regression":
        return last[:, 0]
    return last[:, :2]  # multi-output regression


def _timestep_targets(X, kind):
    if kind == "multiclass":
        return [np.array(["a", "b", "c"])[x.argmax(axis=1)] for x in X]
    if kind == "binary":
        return [(x[:, 0] > 0).astype(int) for x in X]
    if kind == "multilabel":  # a piano roll of 3 "keys"
        return [(x > 0).astype(int) for x in X]
    if kind == "regression":
        return [x[:, 0] + x[:, 1] for x in X]
    return [x[:, :2] * 2.0 for x in X]


@pytest.mark.parametrize("layout", ["ragged", "padded"])
@pytest.mark.parametrize(
    "kind", ["multiclass", "binary", "multilabel", "regression", "multioutput"]
)
def test_sequence_target_kinds(kind, layout):
    seqs = _ragged(n=80)
    X = _layout(seqs, layout)
    y = _sequence_targets(seqs, kind)
    is_reg = kind in ("regression", "multioutput")
    est = (_lmn_reg if is_reg else _lmn_clf)(max_iter=60, batch_size=20)
    est.fit(X, y)
    pred = est.predict(X)
    assert pred.shape == np.shape(y)
    assert est.n_features_in_ == 3
    if is_reg:
        assert pred.dtype == np.float64
        assert est.score(X, y) > 0.5
        return
    proba = est.predict_proba(X)
    assert proba.dtype == np.float64
    if kind == "multilabel":
        assert_array_equal(est.classes_, np.arange(3))
        assert proba.shape == (80, 3)
        assert set(np.unique(pred)) <= {0, 1}
        assert_array_equal(pred, (proba > 0.5).astype(int))
    else:
        assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        # columns of predict_proba follow classes_
        assert_array_equal(est.classes_[proba.argmax(axis=1)], pred)
    # chance: 1/3 (multiclass), 1/2 (binary), 1/8 (subset accuracy of 3 labels)
    assert est.score(X, y) > (0.5 if kind == "multilabel" else 0.7)


@pytest.mark.parametrize("layout", ["ragged", "padded"])
@pytest.mark.parametrize(
    "kind", ["multiclass", "binary", "multilabel", "regression", "multioutput"]
)
def test_timestep_target_kinds(kind, layout):
    seqs = _ragged(n=60)
    lengths = [len(s) for s in seqs]
    X = _layout(seqs, layout)
    y_list = _timestep_targets(seqs, kind)
    if layout == "ragged":
        y = y_list
    elif kind == "multiclass":  # string labels: an object array, None padding
        y = _pad(y_list, fill=None)
    else:
        y = _pad(y_list, fill=np.nan)
    is_reg = kind in ("regression", "multioutput")
    est = (_lmn_reg if is_reg else _lmn_clf)(
        target="timestep", max_iter=60, batch_size=20
    )
    est.fit(X, y)
    pred = est.predict(X)
    if layout == "ragged":
        assert isinstance(pred, list)
        assert [len(p) for p in pred] == lengths
        assert all(p.shape == t.shape for p, t in zip(pred, y_list, strict=True))
    else:
        assert pred.shape == np.shape(y)
        pad_mask = ~(np.arange(pred.shape[1])[None, :] < np.array(lengths)[:, None])
        padded_values = pred[pad_mask]
        if pred.dtype == object:
            assert all(v is None for v in padded_values.ravel())
        else:
            assert np.isnan(padded_values).all()
    score = est.score(X, y)
    if is_reg:
        assert score > 0.8
        return
    proba = est.predict_proba(X)
    if layout == "ragged":
        assert [p.shape[0] for p in proba] == lengths
        proba_valid = np.concatenate(proba)
    else:
        assert proba.shape[:2] == pred.shape[:2]
        assert np.isnan(proba[pad_mask]).all()
        proba_valid = proba[~pad_mask]
    assert proba_valid.dtype == np.float64
    if kind == "multilabel":
        expected = (
            frame_level_accuracy(y_list, [np.asarray(p) for p in pred])
            if (layout == "ragged")
            else frame_level_accuracy(y, pred)
        )
        assert score == pytest.approx(expected, rel=1e-12)
    else:
        assert_allclose(proba_valid.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        true = np.concatenate(y_list)
        flat = np.concatenate(pred) if layout == "ragged" else pred[~pad_mask]
        assert score == pytest.approx(np.mean(flat == true), rel=1e-12)
    assert score > 0.8


def test_timestep_padding_values_are_ignored():
    # Whatever sits at the padded steps of y never reaches the loss.
    seqs = _ragged(n=30)
    X = _pad(seqs)
    y_list = [x[:, 0] for x in seqs]
    y_nan = _pad(y_list, fill=np.nan)
    y_junk = _pad(y_list, fill=1e6)
    a = _lmn_reg(target="timestep", max_iter=5).fit(X, y_nan)
    b = _lmn_reg(target="timestep", max_iter=5).fit(X, y_junk)
    assert a.loss_curve_ == b.loss_curve_
    assert_array_equal(a.predict(X), b.predict(X))


# --------------------------------------------------------------------------- #
# Numerics against straightforward per-sequence references
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("problem", ["multiclass", "multilabel", "continuous"])
@pytest.mark.parametrize("per_step", [False, True])
def test_sequence_loss_matches_per_sequence_reference(problem, per_step):
    gen = torch.Generator().manual_seed(0)
    N, T, k = 4, 5, 3
    lengths = torch.tensor([5, 2, 4, 1])
    shape = (N, T, k) if per_step else (N, k)
    y_pred = torch.randn(shape, generator=gen, dtype=torch.float64)
    if problem == "multiclass":
        y_true = torch.randint(0, k, shape[:-1], generator=gen)
        if per_step:
            for n in range(N):
                y_true[n, lengths[n] :] = -100
    elif problem == "multilabel":
        y_true = torch.randint(0, 2, shape, generator=gen).double()
    else:
        y_true = torch.randn(shape, generator=gen, dtype=torch.float64)
    loss = SequenceLoss(problem, per_step)(y_pred, y_true, lengths)

    # reference: python loop over valid (sequence, step) pairs
    terms = []
    for n in range(N):
        steps = range(int(lengths[n])) if per_step else [None]
        for t in steps:
            p = y_pred[n, t] if per_step else y_pred[n]
            q = y_true[n, t] if per_step else y_true[n]
            if problem == "multiclass":
                terms.append(float(-torch.log_softmax(p, 0)[q]))
            elif problem == "multilabel":
                prob = torch.sigmoid(p)
                bce = -(q * torch.log(prob) + (1 - q) * torch.log(1 - prob))
                terms.extend(bce.tolist())
            else:
                terms.extend(((p - q) ** 2).tolist())
    assert float(loss) == pytest.approx(np.mean(terms), rel=1e-10)


def test_sequence_net_reads_the_last_valid_step():
    torch.manual_seed(0)
    rnn = torch.nn.RNN(3, 4, batch_first=True)

    class Wrapped(torch.nn.Module):
        output_size = 4

        def forward(self, x, lengths=None):
            return rnn(x)[0], None

    net = SequenceNet(Wrapped(), 2)
    seqs = [torch.randn(t, 3) for t in (5, 2, 4)]
    x = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    out = net(x, lengths=torch.tensor([5, 2, 4]))
    for i, s in enumerate(seqs):  # each sequence alone, unpadded
        expected = net.readout(rnn(s[None])[0][0, -1])
        # float32, batch of 3 vs batch of 1: other BLAS paths, float32 rounding
        assert_allclose(out[i].detach(), expected.detach(), rtol=1e-5, atol=1e-5)


def test_predictions_do_not_depend_on_padding_or_batch():
    seqs = _ragged(n=25)
    y = _sequence_targets(seqs, "regression")
    est = _lmn_reg(max_iter=3).fit(seqs, y)
    alone = np.array([est.predict([s])[0] for s in seqs])
    assert_allclose(est.predict(seqs), alone, rtol=1e-12, atol=1e-12)
    assert_allclose(est.predict(_pad(seqs)), alone, rtol=1e-12, atol=1e-12)


def test_score_outputs_multiclass_per_step():
    outputs = np.zeros((2, 3, 2))
    outputs[0, :, 1] = 1.0  # predicts class 1 everywhere in sequence 0
    y_true = np.array([[1, 0, 1], [0, -100, -100]])
    # valid steps: (0,0) ok, (0,1) wrong, (0,2) ok, (1,0) ok -> 3/4
    assert score_outputs("multiclass", True, y_true, outputs, [3, 1]) == 0.75


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
        for cell in ("elman", "lstm", "gru", "clockwork", "unrolled")
    ],
    RNNRegressor(cell="lstm", hidden_size=4, bidirectional=True),
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
    # a warm fit that does not improve keeps its starting weights)
    est = _lmn_reg(max_iter=4, warm_start=True, early_stopping=False).fit(seqs, y)
    module = est.net_.module_
    last_curve = list(est.loss_curve_)
    weights = {k: v.clone() for k, v in module.state_dict().items()}
    cold = _lmn_reg(max_iter=4, early_stopping=False).fit(seqs, y)
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
    with pytest.raises(FloatingPointError):
        est.fit(seqs, np.full(30, 1e30))
    assert_array_equal(est.predict(seqs), before)


def test_warm_start_rejects_new_classes():
    seqs = _ragged(n=30)
    y = _sequence_targets(seqs, "binary")
    est = _lmn_clf(max_iter=2, warm_start=True).fit(seqs, y)
    with pytest.raises(ValueError, match="same classes"):
        est.fit(seqs, y + 5)


def test_early_stopping_restores_best_epoch():
    seqs = _ragged(n=60)
    y = _sequence_targets(seqs, "multiclass")
    est = _lmn_clf(
        early_stopping=True,
        max_iter=60,
        n_iter_no_change=3,
        learning_rate_init=0.1,
        validation_metric="score",
    ).fit(seqs, y)
    assert len(est.validation_scores_) == est.n_iter_ < 60
    assert est.best_validation_score_ == max(est.validation_scores_)
    if est.best_epoch_ > 0:
        assert est.best_loss_ == est.validation_loss_curve_[est.best_epoch_ - 1]
    assert np.isfinite(est.best_loss_)
    # the restored parameters give the best validation score again; rebuild
    # the validation set from the seeds fit draws from random_state=0
    seeds = np.random.RandomState(0).randint(np.iinfo(np.int32).max, size=3)
    X_t = torch.from_numpy(_pad(seqs, fill=0.0).astype(np.float32))
    lengths = torch.tensor([len(s) for s in seqs])
    y_enc = np.searchsorted(est.classes_, y)
    dataset = SequenceDataset(X_t, lengths, torch.from_numpy(y_enc))
    _, valid = est._split(dataset, y_enc, int(seeds[2]))
    assert len(valid) == 6
    outputs = est.net_.predict_outputs(valid)
    score = score_outputs(
        "multiclass", False, valid.y.numpy(), outputs, valid.lengths.numpy()
    )
    assert score == pytest.approx(est.best_validation_score_, abs=1e-12)
    # the split is seeded: same random_state, same validation set
    again = clone(est).fit(seqs, y)
    assert again.validation_scores_ == est.validation_scores_


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


def test_verbose_prints_progress(capsys):
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "binary")
    _lmn_clf(max_iter=50, tol=1e3, n_iter_no_change=1, verbose=1).fit(seqs, y)
    out = capsys.readouterr().out
    assert re.search(r"Epoch 1: loss = \d+\.\d+", out)
    assert "Epoch 2:" in out and "Epoch 3:" not in out
    assert "did not improve more than tol=1000.0 for 1 consecutive epochs" in out
    _lmn_clf(max_iter=2).fit(seqs, y)
    assert capsys.readouterr().out == ""


def test_non_finite_loss_raises():
    seqs = _ragged(n=20)
    y = np.full(20, 1e30)  # squared error overflows float32
    est = _lmn_reg(max_iter=3, standardize=False, pretrainer=None)
    with pytest.raises(FloatingPointError, match="diverged at epoch 1.*data loss"):
        est.fit(seqs, y)
    assert not hasattr(est, "net_")


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


def test_penalty_is_added_to_the_loss():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "regression")
    plain = _lmn_reg(max_iter=1, learning_rate_init=1e-12).fit(seqs, y)
    penalized = _lmn_reg(
        max_iter=1, learning_rate_init=1e-12, orthogonality_penalty=10.0
    ).fit(seqs, y)
    W = plain.net_.module_.recurrent.layers[0].weight_mm.detach().double()
    ortho = 10.0 * float(((W.T @ W - torch.eye(W.shape[0])) ** 2).sum())
    assert penalized.loss_curve_[0] == pytest.approx(
        plain.loss_curve_[0] + ortho, rel=1e-4
    )


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


def test_invalid_targets():
    seqs = _ragged(n=6)
    clf = _lmn_clf(max_iter=1)
    with pytest.raises(ValueError, match="only one class: 0.0[.]$"):
        clf.fit(seqs, np.zeros(6))  # the plain value, not np.float64(0.0)
    with pytest.raises(ValueError, match="only one class: 'a'[.]$"):
        clf.fit(seqs, np.array(["a"] * 6, dtype=object))
    with pytest.raises(ValueError, match="multiclass-multioutput"):
        clf.fit(seqs, np.arange(12).reshape(6, 2))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(seqs, np.arange(5) % 2)
    timestep = _lmn_clf(max_iter=1, target="timestep")
    bad = [np.zeros(len(s) + 1) for s in seqs]
    with pytest.raises(ValueError, match=r"y\[0\] has \d+ time steps but sequence 0"):
        timestep.fit(seqs, bad)
    with pytest.raises(ValueError, match="binary indicators"):
        timestep.fit(seqs, [np.full((len(s), 2), 2) for s in seqs])
    reg = _lmn_reg(max_iter=1, target="timestep")
    y = _pad([np.ones(len(s)) for s in seqs])
    y[0, 0] = np.nan  # a NaN inside a valid step is an error
    with pytest.raises(ValueError, match="NaN"):
        reg.fit(seqs, y)


def test_predict_checks_features_per_step():
    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1).fit(seqs, np.arange(10.0))
    with pytest.raises(ValueError, match="expecting 3 features per time step"):
        est.predict([s[:, :2] for s in seqs])


def test_regressor_keeps_the_shape_of_y():
    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1)
    assert est.fit(seqs, np.arange(10.0)).predict(seqs).shape == (10,)
    assert est.fit(seqs, np.arange(10.0)[:, None]).predict(seqs).shape == (10, 1)
    y = [np.ones(len(s)) for s in seqs]
    est.set_params(target="timestep").fit(_pad(seqs), _pad(y))
    assert est.predict(_pad(seqs)).ndim == 2
    y = [np.ones((len(s), 1)) for s in seqs]
    assert est.fit(_pad(seqs), _pad(y)).predict(_pad(seqs)).ndim == 3


def test_timestep_regression_score_is_r2_over_valid_steps():
    seqs = _ragged(n=20)
    y = _timestep_targets(seqs, "regression")
    est = _lmn_reg(target="timestep", max_iter=5).fit(seqs, y)
    pred = est.predict(seqs)
    expected = r2_score(np.concatenate(y), np.concatenate(pred))
    assert est.score(seqs, y) == pytest.approx(expected, rel=1e-12)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a CPU-only machine")
def test_model_saved_from_cuda_device_loads_on_cpu():
    # A net trained on a GPU pickles its tensors (the module parameter too)
    # in skorch's torch-aware state, which maps them to the CPU on load.
    from skorch.exceptions import DeviceWarning

    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1).fit(seqs, np.arange(10.0))
    state = est.net_.__getstate__()
    assert "module" not in state and "module_" not in state
    est.net_.device = "cuda"  # what a GPU-trained net records
    with pytest.warns(DeviceWarning, match="(?i)cuda"):
        loaded = pickle.loads(pickle.dumps(est))
    assert torch.device(loaded.net_.device).type == "cpu"
    assert_array_equal(loaded.predict(seqs), est.predict(seqs))


@pytest.mark.parametrize("pool_batches", [1, 50])
def test_length_bucket_sampler(pool_batches):
    from sklmn.estimators._net import LengthBucketBatchSampler

    lengths = torch.from_numpy(np.random.RandomState(0).randint(1, 100, size=103))
    sampler = LengthBucketBatchSampler(
        lengths, 10, torch.Generator().manual_seed(0), pool_batches=pool_batches
    )
    batches = list(sampler)
    assert len(batches) == len(sampler)
    # every sequence exactly once per epoch
    assert sorted(i for b in batches for i in b) == list(range(103))
    assert all(len(b) <= 10 for b in batches)
    if pool_batches == 50:  # one pool: batches are disjoint ranges of lengths
        ranges = sorted((int(lengths[b].min()), int(lengths[b].max())) for b in batches)
        assert all(
            hi <= lo for (_, hi), (lo, _) in zip(ranges[:-1], ranges[1:], strict=True)
        )
    # batches come in random order, and a new order every epoch
    assert list(sampler) != batches


def test_bucket_by_length_training_is_reproducible():
    seqs = _ragged(n=40, low=2, high=30)
    y = _sequence_targets(seqs, "regression")
    a = _lmn_reg(max_iter=3, batch_size=8, bucket_by_length=True).fit(seqs, y)
    b = _lmn_reg(max_iter=3, batch_size=8, bucket_by_length=True).fit(seqs, y)
    c = _lmn_reg(max_iter=3, batch_size=8).fit(seqs, y)
    assert a.loss_curve_ == b.loss_curve_
    # other batches: a different training, not just other rounding
    assert not np.allclose(a.loss_curve_, c.loss_curve_, rtol=1e-3, atol=0)
    assert_array_equal(a.predict(seqs), b.predict(seqs))
