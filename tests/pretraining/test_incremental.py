"""Incremental multi-scale LMN training (Carta, Sperduti & Bacciu 2021, Alg. 2;
2020, §4.1, §5.3)."""

import re
import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn._training import SequenceNet
from sklmn.estimators import MultiScaleLMNClassifier, MultiScaleLMNRegressor
from sklmn.laes import LAESTransformer
from sklmn.nn import MultiScaleLMN
from sklmn.pretraining import IncrementalTraining, grow_multiscale_


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def _memory_task(n=80, T=12, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, 1)
    return X, X[:, 0, 0] + 0.5 * X[:, 1, 0]


def _net(seed=0, n_modules=1, output="memory"):
    torch.manual_seed(seed)
    rec = MultiScaleLMN(1, 5, 3, n_modules, output=output)
    return SequenceNet(rec, 1).double()


def test_growth_keeps_the_function_until_the_readout_fit():
    X, y = _memory_task(n=30, T=9)
    Xt = torch.from_numpy(X)
    lengths = torch.from_numpy(np.random.RandomState(1).randint(1, 10, 30))
    net = _net()
    with torch.no_grad():
        before = net(Xt, lengths).numpy()
    info = grow_multiscale_(
        net,
        Xt,
        lengths,
        y[:, None],
        problem="continuous",
        per_step=False,
        fit_readout=False,
    )
    with torch.no_grad():
        after = net(Xt, lengths).numpy()
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-12)
    assert info["loss_after"] == info["loss_before"]
    rec = net.recurrent
    assert rec.n_modules == 2 and rec.periods == (1, 2)
    # the new blocks: LAES of the hidden states at steps 0, 2, 4, ... (naive
    # reference), zero elsewhere
    with torch.no_grad():
        h_seq = rec.forward_states(Xt, lengths)[0].numpy()
    subsampled = [h_seq[i, 0 : int(l) : 2] for i, l in enumerate(lengths)]
    laes = LAESTransformer(3).fit(subsampled)
    new = rec.module_slice(1)
    np.testing.assert_allclose(rec.weight_hm.detach()[new].numpy(), laes.A_, atol=1e-8)
    np.testing.assert_allclose(
        rec.weight_mm.detach()[new, new].numpy(), laes.B_, atol=1e-8
    )
    assert rec.weight_mh.detach()[:, new].abs().sum() == 0
    assert rec.weight_mm.detach()[:3, new].abs().sum() == 0
    assert net.readout.weight.detach()[:, new].abs().sum() == 0


@pytest.mark.parametrize("problem", ["continuous", "multiclass"])
def test_readout_fit_lowers_the_training_loss(problem):
    X, y = _memory_task(n=60, T=8)
    Xt, lengths = torch.from_numpy(X), torch.full((60,), 8)
    if problem == "multiclass":
        y_enc = (y > 0).astype(np.int64)
        net = SequenceNet(MultiScaleLMN(1, 5, 3, 1), 2).double()
        loss = torch.nn.functional.cross_entropy
        target = torch.from_numpy(y_enc)
    else:
        y_enc = y[:, None]
        net = _net()
        loss = torch.nn.functional.mse_loss
        target = torch.from_numpy(y_enc)
    info = grow_multiscale_(net, Xt, lengths, y_enc, problem=problem, per_step=False)
    with torch.no_grad():
        actual = float(loss(net(Xt, lengths), target))
    assert actual == pytest.approx(info["loss_after"], rel=1e-9)
    assert info["loss_after"] < info["loss_before"]
    assert net.readout.weight.detach()[:, 3:].abs().sum() > 0


def test_modules_are_added_on_schedule_up_to_the_maximum():
    X, y = _memory_task()
    reg = MultiScaleLMNRegressor(
        hidden_size=8,
        memory_size=3,
        n_modules=3,
        max_iter=8,
        learning_rate_init=0.01,
        incremental=IncrementalTraining(epochs_per_module=2, min_improvement=-np.inf),
        random_state=0,
    )
    _fit(reg, X, y)
    hist = reg.module_history_
    assert [(s["n_modules"], s["epoch_added"]) for s in hist] == [
        (1, 0),
        (2, 2),
        (3, 4),
    ]
    assert reg.n_modules_ == 3 and reg.n_iter_ == 8
    assert reg.net_.module_.readout.in_features == 9
    assert all(s["kept"] for s in hist)
    assert hist[1]["loss_after_fit"] <= hist[1]["loss_before_fit"]
    assert reg.predict(X).shape == (80,)
    # the optimizer was rebuilt: it covers the grown parameters
    optimized = {id(p) for g in reg.net_.optimizer_.param_groups for p in g["params"]}
    assert {id(p) for p in reg.net_.module_.parameters()} <= optimized


def test_growth_stops_without_improvement_and_keeps_the_best():
    X, y = _memory_task()
    clf = MultiScaleLMNClassifier(
        hidden_size=8,
        memory_size=3,
        n_modules=4,
        max_iter=20,
        early_stopping=True,
        validation_fraction=0.25,
        incremental=IncrementalTraining(
            epochs_per_module=2, growth="adaptive", min_improvement=10.0
        ),
        random_state=0,
    )
    _fit(clf, X, (y > 0).astype(int))
    hist = clf.module_history_
    # the second module cannot improve the validation score by 10:
    # training stops at the end of its stage with the one-module model
    assert [s["n_modules"] for s in hist] == [1, 2]
    assert [s["kept"] for s in hist] == [True, False]
    assert clf.n_iter_ == 4 and clf.n_modules_ == 1
    # the fitted record describes the kept (first-stage) weights
    assert clf.best_epoch_ == hist[0]["best_epoch"] <= 2
    assert clf.best_loss_ == pytest.approx(
        clf.validation_loss_curve_[clf.best_epoch_ - 1]
    )
    assert clf.best_loss_ == pytest.approx(-hist[0]["best_score"])
    assert clf.net_.module_.readout.in_features == 3
    assert clf.predict_proba(X).shape == (80, 2)


def test_patience_triggers_growth_early():
    X, y = _memory_task()
    reg = MultiScaleLMNRegressor(
        hidden_size=8,
        memory_size=3,
        n_modules=2,
        max_iter=6,
        learning_rate_init=1e-9,  # no progress: the score never improves
        incremental=IncrementalTraining(
            epochs_per_module=100, patience=2, min_improvement=-np.inf
        ),
        early_stopping=False,  # the training loss, not a rounding-noisy R²
        pretrainer=None,
        random_state=0,
    )
    _fit(reg, X, y)
    assert [s["epoch_added"] for s in reg.module_history_] == [0, 3]


# ---------------------------------------------------------------------------
# the papers' procedure: readout of all modules, growth until n_modules


def _lstsq_with_intercept(features, targets):
    """Reference: plain least squares with a column of ones."""
    design = np.hstack([features, np.ones((features.shape[0], 1))])
    coef = np.linalg.lstsq(design, targets, rcond=None)[0]
    return coef[:-1].T, coef[-1]


@pytest.mark.parametrize("per_step", [False, True])
def test_all_modules_readout_is_least_squares_on_every_module(per_step):
    rng = np.random.RandomState(0)
    n, T = 25, 7
    X = rng.randn(n, T, 1)
    lengths = torch.from_numpy(rng.randint(3, T + 1, n))
    if per_step:
        y = rng.randn(n, T, 1)
    else:
        y = rng.randn(n, 1)
    torch.manual_seed(0)
    net = SequenceNet(MultiScaleLMN(1, 4, 2, 1), 1, per_step=per_step).double()
    Xt = torch.from_numpy(X)
    info = grow_multiscale_(
        net,
        Xt,
        lengths,
        y,
        problem="continuous",
        per_step=per_step,
        alpha=0.0,
        readout="all_modules",
    )
    # the states of both modules, read straight from the grown network
    with torch.no_grad():
        m_seq = net.recurrent.forward_states(Xt, lengths)[1].numpy()
    assert m_seq.shape[-1] == 4  # 2 modules x 2 units: all of them are used
    lens = lengths.numpy()
    if per_step:
        feats = np.concatenate([m_seq[i, : lens[i]] for i in range(n)])
        targets = np.concatenate([y[i, : lens[i]] for i in range(n)])
    else:
        feats = np.stack([m_seq[i, lens[i] - 1] for i in range(n)])
        targets = y
    W_ref, b_ref = _lstsq_with_intercept(feats, targets)
    W = net.readout.weight.detach().numpy()
    b = net.readout.bias.detach().numpy()
    np.testing.assert_allclose(feats @ W.T + b, feats @ W_ref.T + b_ref, atol=1e-8)
    np.testing.assert_allclose(W, W_ref, atol=1e-6)
    np.testing.assert_allclose(b, b_ref, atol=1e-6)
    # the network now outputs that fit, and loss_after is its mean squared error
    with torch.no_grad():
        out = net(Xt, lengths).numpy()
    rows_out = (
        np.concatenate([out[i, : lens[i]] for i in range(n)]) if per_step else out
    )
    np.testing.assert_allclose(rows_out, feats @ W_ref.T + b_ref, atol=1e-8)
    assert info["loss_after"] == pytest.approx(
        np.mean((rows_out - targets) ** 2), rel=1e-6
    )


def test_all_modules_readout_regresses_class_indicators():
    rng = np.random.RandomState(1)
    X = rng.randn(40, 6, 1)
    y = rng.randint(0, 3, 40)
    Xt, lengths = torch.from_numpy(X), torch.full((40,), 6)
    torch.manual_seed(0)
    net = SequenceNet(MultiScaleLMN(1, 4, 2, 1), 3).double()
    grow_multiscale_(
        net,
        Xt,
        lengths,
        y,
        problem="multiclass",
        per_step=False,
        alpha=0.0,
        readout="all_modules",
    )
    with torch.no_grad():
        feats = net.recurrent.forward_states(Xt, lengths)[1].numpy()[:, -1]
    W_ref, b_ref = _lstsq_with_intercept(feats, np.eye(3)[y])
    np.testing.assert_allclose(net.readout.weight.detach().numpy(), W_ref, atol=1e-6)
    np.testing.assert_allclose(net.readout.bias.detach().numpy(), b_ref, atol=1e-6)


def test_grow_rejects_an_unknown_readout():
    X = torch.zeros(4, 5, 1)
    with pytest.raises(ValueError, match="'pinv'"):
        grow_multiscale_(
            _net(),
            X,
            torch.full((4,), 5),
            np.zeros((4, 1)),
            problem="continuous",
            per_step=False,
            readout="pinv",
        )


@pytest.mark.parametrize("pooling", ["last+mean", "last+mean+max", "auto"])
def test_grow_rejects_a_pooled_readout_by_name(pooling):
    """A growth stage reshapes a readout of the last step alone: a network
    whose readout also reads pooled blocks is refused with an error naming
    it (not a shape mismatch in the middle of the stage), and left as it
    was."""
    torch.manual_seed(0)
    net = SequenceNet(MultiScaleLMN(1, 5, 3, 1), 1, pooling=pooling).double()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(ValueError, match=re.escape(f"pooling='{pooling}'")):
        grow_multiscale_(
            net,
            torch.zeros(4, 5, 1, dtype=torch.float64),
            torch.full((4,), 5),
            np.zeros((4, 1)),
            problem="continuous",
            per_step=False,
        )
    assert net.recurrent.n_modules == 1
    after = net.state_dict()
    assert set(after) == set(before)
    assert all(torch.equal(after[k], v) for k, v in before.items())


@pytest.mark.parametrize(
    "params, bad",
    [({"growth": "never"}, "'never'"), ({"readout": "pinv"}, "'pinv'")],
)
def test_invalid_parameters_are_named(params, bad):
    with pytest.raises(ValueError, match=bad):
        IncrementalTraining(**params).make_callback(None, max_modules=2)


def _stalled_regressor(n_iter_no_change, readout="residual"):
    # a learning rate too small to change anything: the monitored loss does
    # not improve, which the adaptive rule would answer by not growing
    return MultiScaleLMNRegressor(
        hidden_size=6,
        memory_size=2,
        n_modules=3,
        max_iter=12,
        learning_rate_init=1e-9,
        early_stopping=True,
        validation_fraction=0.25,
        n_iter_no_change=n_iter_no_change,
        incremental=IncrementalTraining(epochs_per_module=4, readout=readout),
        random_state=0,
    )


@pytest.mark.parametrize("readout", ["residual", "all_modules"])
def test_papers_growth_adds_every_module(readout):
    X, y = _memory_task(n=60, T=8)
    reg = _fit(_stalled_regressor(100, readout), X, y)
    hist = reg.module_history_
    assert [(s["n_modules"], s["epoch_added"]) for s in hist] == [
        (1, 0),
        (2, 4),
        (3, 8),
    ]
    assert reg.n_iter_ == 12
    growth = dict(reg.net_.callbacks_)["incremental"]
    assert growth.stopped_epoch_ is None
    # the stages are scored by the validation loss (the stopping rule's)
    first = reg.validation_loss_curve_[:4]
    assert hist[0]["best_score"] == pytest.approx(-min(first))
    # the kept model is the best of the run
    best_stage = int(np.argmax([s["best_score"] for s in hist]))
    assert reg.n_modules_ == hist[best_stage]["n_modules"]


def test_papers_growth_ends_only_by_the_ordinary_stopping_rule():
    # noise targets: no module can lower the validation loss. One epoch per
    # stage restarts the estimator's own (per-stage) rule every epoch, so only
    # the rule counted across the stages can end training early
    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 8, 1), rng.randn(60)
    reg = MultiScaleLMNRegressor(
        hidden_size=6,
        memory_size=2,
        n_modules=6,
        max_iter=12,
        learning_rate_init=1e-9,
        early_stopping=True,
        validation_fraction=0.25,
        n_iter_no_change=2,
        incremental=IncrementalTraining(epochs_per_module=1),
        random_state=0,
    )
    _fit(reg, X, y)
    growth = dict(reg.net_.callbacks_)["incremental"]
    assert growth.stopped_epoch_ is not None
    assert reg.n_iter_ == growth.stopped_epoch_ < 6
    assert len(reg.module_history_) < 6  # stopped before every module was added
    scores = [s["best_score"] for s in reg.module_history_]
    assert reg.n_modules_ == reg.module_history_[int(np.argmax(scores))]["n_modules"]
    assert reg.predict(X).shape == (60,)


def test_fitted_growth_callback_keeps_no_training_data():
    # the callback is pickled with the model: it keeps the fit's settings,
    # not the FitContext with the training sequences
    import pickle

    from sklmn.training import FitContext

    rng = np.random.RandomState(0)
    X = rng.randn(30, 8, 1)
    reg = MultiScaleLMNRegressor(
        hidden_size=3,
        memory_size=2,
        n_modules=2,
        max_iter=4,
        incremental=IncrementalTraining(epochs_per_module=2),
        random_state=0,
        pretrainer=None,  # the random start: the second stage is kept
        memory_matrix="free",
    ).fit(X, X[:, :, 0].sum(axis=1))
    growth = dict(reg.net_.callbacks_)["incremental"]
    assert not any(isinstance(v, FitContext) for v in vars(growth).values())
    assert growth.max_modules == 2
    assert pickle.loads(pickle.dumps(reg)).n_modules_ == 2


def _weighted_lstsq(feats, targets, w):
    """Weighted least squares with an unpenalized intercept, solved
    directly: rows scaled by sqrt(w) after weighted centering."""
    f_mean = np.average(feats, axis=0, weights=w)
    t_mean = np.average(targets, axis=0, weights=w)
    s = np.sqrt(w)[:, None]
    W, *_ = np.linalg.lstsq((feats - f_mean) * s, (targets - t_mean) * s, rcond=None)
    return W.T, t_mean - f_mean @ W


@pytest.mark.parametrize("readout", ["all_modules", "residual"])
@pytest.mark.parametrize("per_step", [False, True])
def test_growth_readout_fit_weights_the_rows(readout, per_step):
    # the least-squares fit minimizes the weighted loss that training goes
    # on with: reference is a direct weighted least-squares solve on the
    # states read from the grown network
    rng = np.random.RandomState(3)
    n, T = 30, 7
    X = rng.randn(n, T, 1)
    lengths = torch.from_numpy(rng.randint(3, T + 1, n))
    y = rng.randn(n, T, 1) if per_step else rng.randn(n, 1)
    w_seq = rng.uniform(0.1, 4.0, size=n)
    w = np.repeat(w_seq[:, None], T, axis=1) if per_step else w_seq
    lens = lengths.numpy()

    def grown(weight):
        torch.manual_seed(0)
        net = SequenceNet(MultiScaleLMN(1, 4, 2, 1), 1, per_step=per_step).double()
        with torch.no_grad():
            before = net(torch.from_numpy(X), lengths).numpy()
        info = grow_multiscale_(
            net,
            torch.from_numpy(X),
            lengths,
            y,
            problem="continuous",
            per_step=per_step,
            alpha=0.0,
            readout=readout,
            sample_weight=weight,
        )
        return net, info, before

    net, info, before = grown(w)
    with torch.no_grad():
        m_seq = net.recurrent.forward_states(torch.from_numpy(X), lengths)[1].numpy()
        out = net(torch.from_numpy(X), lengths).numpy()

    def rows_of(a):
        if per_step:
            return np.concatenate([a[i, : lens[i]] for i in range(n)])
        return np.stack([a[i, lens[i] - 1] for i in range(n)]) if a.ndim == 3 else a

    w_rows = np.repeat(w_seq, lens) if per_step else w_seq
    targets, outputs = rows_of(y), rows_of(out)
    if readout == "all_modules":
        feats = rows_of(m_seq)
        W_ref, b_ref = _weighted_lstsq(feats, targets, w_rows)
    else:  # the new module's columns fitted to the residual of the old outputs
        feats = rows_of(m_seq[..., 2:])
        old_outputs = rows_of(before)
        W_ref, b_ref = _weighted_lstsq(feats, targets - old_outputs, w_rows)
        np.testing.assert_allclose(
            outputs, old_outputs + feats @ W_ref.T + b_ref, atol=1e-7
        )
    if readout == "all_modules":
        np.testing.assert_allclose(outputs, feats @ W_ref.T + b_ref, atol=1e-7)
    # loss_after is the weighted mean squared error, as the estimator's loss
    assert info["loss_after"] == pytest.approx(
        np.average(((outputs - targets) ** 2).mean(axis=1), weights=w_rows),
        rel=1e-6,
    )
    # the weights mattered
    unweighted, _, _ = grown(None)
    with torch.no_grad():
        out_u = unweighted(torch.from_numpy(X), lengths).numpy()
    assert np.abs(rows_of(out_u) - outputs).max() > 1e-3


def test_growth_in_fit_receives_the_loss_weights():
    # zero-weight sequences: their targets cannot change the grown model
    X, y = _memory_task(n=60)
    w = np.ones(len(y))
    w[::3] = 0.0
    y_other = y.copy()
    y_other[::3] += 5.0

    def fitted(target):
        est = MultiScaleLMNRegressor(
            hidden_size=5,
            memory_size=3,
            n_modules=2,
            max_iter=4,
            pretrainer=None,
            early_stopping=False,
            standardize=False,
            incremental=IncrementalTraining(epochs_per_module=2),
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return est.fit(X, target, sample_weight=w)

    a, b = fitted(y), fitted(y_other)
    assert a.n_modules_ == b.n_modules_ == 2
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-5, atol=1e-6)


def test_growth_rejects_misshaped_weights():
    X, y = _memory_task(n=20)
    with pytest.raises(ValueError, match=r"n = 20 sequences, got shape \(19,\)"):
        grow_multiscale_(
            _net(),
            torch.from_numpy(X),
            torch.full((20,), X.shape[1]),
            y[:, None],
            problem="continuous",
            per_step=False,
            sample_weight=np.ones(19),
        )


def test_seeded_growth_with_the_matrix_free_solver_is_reproducible():
    # the randomized LAES of every growth drew from numpy's global state, so
    # two fits of an estimator with an int random_state differed
    X, y = _memory_task(n=30, T=16)
    predictions = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)  # noqa: NPY002 - the global state the fit must ignore
        reg = MultiScaleLMNRegressor(
            hidden_size=8,
            memory_size=2,
            n_modules=3,
            max_iter=3,
            early_stopping=False,
            incremental=IncrementalTraining(epochs_per_module=1, solver="matrix_free"),
            random_state=0,
        )
        predictions.append(_fit(reg, X, y).predict(X))
    np.testing.assert_allclose(predictions[0], predictions[1], rtol=0, atol=1e-10)
    # grow_multiscale_ takes the seed of its LAES
    weights = []
    for global_seed in (1, 2):
        net = _net()
        np.random.seed(global_seed)  # noqa: NPY002 - the global state the fit must ignore
        grow_multiscale_(
            net,
            torch.from_numpy(X),
            torch.full((30,), 16),
            y,
            problem="continuous",
            per_step=False,
            solver="matrix_free",
            random_state=0,
        )
        weights.append(torch.cat([v.flatten() for v in net.state_dict().values()]))
    np.testing.assert_allclose(weights[0], weights[1], rtol=0, atol=1e-12)
