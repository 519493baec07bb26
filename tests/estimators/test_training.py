"""Training machinery: stable initialization, best weights, clipping, weight
decay, validation data, learning-rate schedule, standardization."""

import copy
import warnings

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback, GradientNormClipping

from sklmn._training import (
    ConvergenceMonitor,
    SequenceDataset,
    SequenceNet,
    dataset_loss,
    make_sequence_net,
)
from sklmn._training._callbacks import _train_eval_size
from sklmn.callbacks import DivergenceWarning
from sklmn.estimators import (
    ENRNNClassifier,
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    RNNClassifier,
    RNNRegressor,
)
from sklmn.nn import LMN, MultiScaleLMN
from sklmn.nn._base import memory_map_radius, stabilize_memory_
from sklmn.utils.sequences import validate_sequences

SMALL = dict(hidden_size=4, memory_size=3, random_state=0)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(n=24, T=7, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, 0, 0] > 0).astype(int), X[:, 0, 0] + 0.5 * X[:, -1, 1]


def _reference_radius(W_mm, W_hm, W_mh) -> float:
    """Spectral radius of the linearized memory map, by numpy."""
    J = W_mm.detach().double().numpy() + (
        W_hm.detach().double().numpy() @ W_mh.detach().double().numpy()
    )
    return float(np.max(np.abs(np.linalg.eigvals(J))))


# --------------------------------------------------------------------------- #
# Stable initialization
@pytest.mark.parametrize("sizes", [(2, 29), (18, 18), (64, 64), (1, 1), (40, 3)])
@pytest.mark.parametrize("memory_matrix", ["free", "spectral"])
def test_lmn_initial_memory_map_radius_below_one(sizes, memory_matrix):
    H, M = sizes
    torch.manual_seed(0)
    lmn = LMN(3, H, M, num_layers=2, bidirectional=True, memory_matrix=memory_matrix)
    for layer in lmn._all_layers():
        rho = _reference_radius(layer.weight_mm, layer.weight_hm, layer.weight_mh)
        assert rho < 1.0
        assert rho <= 0.95 + 1e-5


def test_lmn_raw_initialization_is_unstable_and_init_radius_none_keeps_it():
    # the draw the stable initialization corrects (radius > 1 for these sizes)
    torch.manual_seed(0)
    raw = LMN(3, 18, 18, init_radius=None).layers[0]
    assert _reference_radius(raw.weight_mm, raw.weight_hm, raw.weight_mh) > 1.0


@pytest.mark.parametrize("n_modules, size", [(1, 8), (4, 8), (6, 3)])
def test_multiscale_initial_memory_map_radius_below_one(n_modules, size):
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 16, size, n_modules)
    W = net.weight_mm * net.memory_mask
    assert _reference_radius(W, net.weight_hm, net.weight_mh) <= 0.95 + 1e-5
    # the block upper-triangular structure is kept
    assert torch.all(net.weight_mm[net.memory_mask == 0] == 0)


def test_stabilize_memory_scales_the_map_and_keeps_its_eigenvectors():
    torch.manual_seed(1)
    W_mm = torch.nn.init.orthogonal_(torch.empty(6, 6, dtype=torch.float64))
    W_hm = torch.rand(6, 5, dtype=torch.float64) - 0.5
    W_mh = torch.rand(5, 6, dtype=torch.float64) - 0.5
    J0 = (W_mm + W_hm @ W_mh).clone()
    rho0 = _reference_radius(W_mm, W_hm, W_mh)
    assert rho0 > 0.8
    assert stabilize_memory_(W_mm, W_hm, W_mh, 0.8) == pytest.approx(0.8)
    torch.testing.assert_close(W_mm + W_hm @ W_mh, J0 * (0.8 / rho0))
    assert memory_map_radius(W_mm, W_hm, W_mh) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="radius must be in"):
        stabilize_memory_(W_mm, W_hm, W_mh, 1.5)


@pytest.mark.parametrize("bad", [0.0, 1.5, -1, "x", True])
def test_init_radius_validation(bad):
    with pytest.raises(ValueError, match="init_radius"):
        LMN(2, 3, 3, init_radius=bad)


def test_memory_stays_bounded_on_long_sequences_at_initialization():
    torch.manual_seed(0)
    lmn = LMN(1, 18, 18)
    x = torch.randn(4, 500, 1)
    out, _ = lmn(x)
    assert float(out.norm(dim=-1).max()) < 50.0


# --------------------------------------------------------------------------- #
# Defaults: clipping, no decay on biases
def test_gradient_clipping_on_by_default_and_none_turns_it_off():
    X, y, _ = _data()
    clf = LMNClassifier(**SMALL, max_iter=2, pretrainer=None).fit(X, y)
    assert clf.gradient_clipping == 1.0
    clip = [cb for _, cb in clf.net_.callbacks_ if isinstance(cb, GradientNormClipping)]
    assert len(clip) == 1 and clip[0].gradient_clip_value == 1.0
    clf = LMNClassifier(**SMALL, max_iter=2, gradient_clipping=None).fit(X, y)
    assert not any(
        isinstance(cb, GradientNormClipping) for _, cb in clf.net_.callbacks_
    )


@pytest.mark.parametrize(
    "est",
    [
        LMNClassifier(**SMALL, max_iter=2, memory_bias=True, pretrainer=None),
        RNNClassifier(cell="lstm", hidden_size=4, max_iter=2, random_state=0),
    ],
)
def test_weight_decay_is_not_applied_to_biases(est):
    X, y, _ = _data()
    est.set_params(alpha=0.1).fit(X, y)
    names = {id(p): n for n, p in est.net_.module_.named_parameters()}
    seen = set()
    for group in est.net_.optimizer_.param_groups:
        for p in group["params"]:
            name = names[id(p)]
            seen.add(name)
            is_bias = name.rsplit(".", 1)[-1].startswith("bias")
            # alpha per minibatch (the LMN classifier without a start
            # trains on minibatches of 16, see batch_size='auto')
            expected = 0.0 if is_bias else 0.1 / est.net_.batch_size
            assert group["weight_decay"] == pytest.approx(expected), name
    assert seen == set(names.values())  # every parameter is optimized
    assert any("bias" in n for n in seen)


# --------------------------------------------------------------------------- #
# Best weights, judged on the kept weights
def _recomputed_loss(est, X, y):
    """Loss of the estimator's final weights on (X, y), recomputed by hand."""
    from sklmn.utils.sequences import validate_sequences

    seqs = est._standardized_inputs(
        validate_sequences(est, X, reset=False, dtype=np.float32)
    )
    y_enc = est._encode_target(y, seqs, reset=False)
    dataset = est._dataset(seqs, est._standardized_target(y_enc, seqs))
    return dataset_loss(est.net_, dataset)


def test_fit_ends_with_the_best_weights_judged_on_the_training_set():
    X, y, _ = _data()
    # a learning rate high enough for the loss to bounce
    clf = LMNClassifier(
        **SMALL,
        max_iter=25,
        learning_rate_init=0.3,
        pretrainer=None,
        gradient_clipping=None,
        n_iter_no_change=100,
    ).fit(X, y)
    evaluated = [float(v) for v in clf.net_.history[:, "train_eval_loss"]]
    assert len(evaluated) == clf.n_iter_ == 25
    final = _recomputed_loss(clf, X, y)
    assert final == pytest.approx(clf.best_loss_, rel=1e-4, abs=1e-6)
    assert final <= min(evaluated) + 1e-5
    if clf.best_epoch_ > 0:
        assert evaluated[clf.best_epoch_ - 1] == pytest.approx(final, rel=1e-4)
    assert clf.validation_scores_ is None and clf.validation_loss_curve_ is None


def test_training_loss_is_measured_on_a_fixed_subsample_of_a_larger_set():
    """Above 128 training sequences the stopping rule measures the training
    loss of the weights after every epoch on a fixed random subsample (the
    same sequences every epoch, drawn with the net's shuffle seed): the kept
    weights are those with the lowest loss on it, and best_loss_ is their
    loss on it."""
    X, y, _ = _data(n=300, T=4)
    clf = LMNClassifier(
        **SMALL,
        max_iter=12,
        learning_rate_init=0.3,
        pretrainer=None,
        gradient_clipping=None,
        n_iter_no_change=100,
    ).fit(X, y)
    evaluated = [float(v) for v in clf.net_.history[:, "train_eval_loss"]]
    assert len(evaluated) == clf.n_iter_ == 12
    seqs = clf._standardized_inputs(
        validate_sequences(clf, X, reset=False, dtype=np.float32)
    )
    y_enc = clf._encode_target(y, seqs, reset=False)
    dataset = clf._dataset(seqs, clf._standardized_target(y_enc, seqs))
    generator = torch.Generator().manual_seed(int(clf.net_.shuffle_seed))
    subsample = torch.randperm(300, generator=generator)[:128]
    final = dataset_loss(clf.net_, dataset, indices=subsample)
    assert final == pytest.approx(clf.best_loss_, rel=1e-4, abs=1e-6)
    assert final <= min(evaluated) + 1e-5
    if clf.best_epoch_ > 0:
        assert evaluated[clf.best_epoch_ - 1] == pytest.approx(final, rel=1e-4)
    # the whole set gives another value: the subsample is what was measured
    assert dataset_loss(clf.net_, dataset) != pytest.approx(final, rel=1e-6)


def test_train_eval_size_none_measures_every_sequence_and_bad_values_are_named():
    assert [_train_eval_size(n) for n in (1, 128, 129, 1024, 1032, 8000)] == [
        1,
        128,
        128,
        128,
        129,
        1000,
    ]
    rng = np.random.RandomState(0)
    data = SequenceDataset(
        torch.from_numpy(rng.randn(200, 4, 2).astype(np.float32)),
        torch.full((200,), 4),
        torch.from_numpy(rng.randn(200, 1).astype(np.float32)),
    )

    class Seen(Callback):
        def on_epoch_end(self, net, **kwargs):
            self.value = dataset_loss(net, data)

    for size, whole in ((None, True), (200, True), (50, False), ("auto", False)):
        seen = Seen()
        net = make_sequence_net(
            SequenceNet(LMN(2, 3, 3), 1),
            problem="continuous",
            per_step=False,
            lr=1e-2,
            max_epochs=1,
            batch_size=50,
            callbacks=[
                ("seen", seen),
                ("stop", ConvergenceMonitor(0.0, 10, train_eval_size=size)),
            ],
        ).fit(data)
        measured = float(net.history[-1, "train_eval_loss"])
        assert (measured == pytest.approx(seen.value, rel=1e-5)) is whole, size
    for bad in (0, -3, 1.5, True, "all"):
        net = make_sequence_net(
            SequenceNet(LMN(2, 3, 3), 1),
            problem="continuous",
            per_step=False,
            lr=1e-2,
            max_epochs=1,
            batch_size=50,
            callbacks=[("stop", ConvergenceMonitor(0.0, 10, train_eval_size=bad))],
        )
        with pytest.raises(ValueError, match=f"train_eval_size.*{bad!r}"):
            net.fit(data)


@pytest.mark.parametrize("seed", range(3))
def test_train_eval_subsample_of_weighted_data_holds_weighted_sequences(seed):
    # a subsample of zero-weight sequences only measured a constant zero
    # loss: fit stopped after n_iter_no_change epochs with the untrained start
    rng = np.random.RandomState(seed)
    weight = np.zeros(200, dtype=np.float32)
    weight[[7, 150]] = 100.0  # the loss weights: mean one
    data = SequenceDataset(
        torch.from_numpy(rng.randn(200, 4, 2).astype(np.float32)),
        torch.full((200,), 4),
        torch.from_numpy(rng.randn(200, 1).astype(np.float32)),
        sample_weight=torch.from_numpy(weight),
    )
    net = make_sequence_net(
        SequenceNet(LMN(2, 3, 3), 1),
        problem="continuous",
        per_step=False,
        lr=1e-2,
        max_epochs=1,
        batch_size=50,
        shuffle_seed=seed,
        callbacks=[("stop", ConvergenceMonitor(0.0, 10, train_eval_size=20))],
    ).fit(data)
    measured = float(net.history[-1, "train_eval_loss"])
    # both weighted sequences measured: the weighted loss of the whole set
    assert measured == pytest.approx(dataset_loss(net, data), rel=1e-5)
    assert measured > 0


def test_fit_ends_with_the_best_weights_judged_on_the_validation_set():
    X, y, _ = _data(n=40)
    Xv, yv, _ = _data(n=20, seed=1)
    clf = LMNClassifier(
        **SMALL,
        max_iter=15,
        learning_rate_init=0.2,
        pretrainer=None,
        n_iter_no_change=100,
    ).fit(X, y, X_val=Xv, y_val=yv)
    assert len(clf.validation_loss_curve_) == 15
    final = _recomputed_loss(clf, Xv, yv)
    assert final == pytest.approx(clf.best_loss_, rel=1e-4, abs=1e-6)
    assert final <= min(clf.validation_loss_curve_) + 1e-5
    if clf.best_epoch_ > 0:
        assert clf.validation_scores_[clf.best_epoch_ - 1] == clf.best_validation_score_


def test_validation_metric_score_monitors_the_score():
    X, y, _ = _data(n=60)
    clf = LMNClassifier(
        **SMALL,
        max_iter=8,
        early_stopping=True,
        validation_metric="score",
        pretrainer=None,
    ).fit(X, y)
    assert len(clf.validation_scores_) == 8
    assert clf.best_validation_score_ >= max(clf.validation_scores_) - 1e-12


def test_early_stopping_with_more_classes_than_held_out_sequences():
    # the stratified split refused 4 validation sequences for 8 classes, and
    # early_stopping='auto' (on above 1000 sequences) so failed the fit of a
    # classifier of many classes; the split is now random there, as for a
    # class of a single sequence
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3, 2)
    y = np.arange(40) % 8
    clf = RNNClassifier(hidden_size=3, max_iter=2, early_stopping=True,
                        random_state=0)
    clf.fit(X, y)
    assert len(clf.validation_scores_) == 2
    assert clf.predict(X).shape == (40,)


def test_regressor_score_on_fewer_than_two_validation_entries_is_refused():
    # R^2 is not defined on one validation sequence: monitoring it ended
    # training after one epoch as a "divergence" with best_validation_score_
    # -inf; fit now refuses the validation set, naming the problem
    rng = np.random.RandomState(0)
    X = rng.randn(10, 4, 2)
    y = X[:, :, 0].sum(axis=1)
    est = RNNRegressor(
        hidden_size=3,
        max_iter=2,
        early_stopping=True,
        validation_metric="score",
        random_state=0,
    )
    with pytest.raises(ValueError, match="R\\^2 .* fewer than two sequences"):
        est.fit(X, y)  # validation_fraction=0.1 of 10: one sequence
    with pytest.raises(ValueError, match="validation set has 1"):
        est.fit(X, y, X_val=X[:1], y_val=y[:1])
    assert not hasattr(est, "net_")
    # per-step targets: one sequence of one step is refused, two steps are scored
    steps = RNNRegressor(**{**est.get_params(), "target": "timestep"})
    X_steps = [x for x in X]
    y_steps = [x[:, 0] for x in X]
    with pytest.raises(ValueError, match="fewer than two valid time steps"):
        steps.fit(X_steps, y_steps, X_val=[X[0, :1]], y_val=[X[0, :1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning
        steps.fit(X_steps, y_steps, X_val=[X[0, :2]], y_val=[X[0, :2, 0]])
    assert np.isfinite(steps.validation_scores_).all()
    # two validation sequences: the score is defined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, X_val=X[:2], y_val=y[:2])
    assert np.isfinite(est.best_validation_score_)
    assert est.diverged_ is False
    # the loss is defined on one sequence
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(validation_metric="loss").fit(X, y)
    assert len(est.validation_loss_curve_) == 2


class _ParameterlessPretrainer:
    """Base of the test pretrainers: no parameters to clone."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self


class _RememberStart(_ParameterlessPretrainer):
    """Test pretrainer: a readout fitted by least squares, and a copy of the
    initialized weights."""

    def initialize(self, module, context):
        from sklmn.pretraining import LAESInitializer

        LAESInitializer(n_components=3).initialize(module, context)
        self.start_state_ = copy.deepcopy(module.state_dict())


def test_fine_tuning_never_ends_below_the_pretrained_start():
    X, _, yr = _data(n=40)
    reg = LMNRegressor(
        hidden_size=3,
        memory_size=3,
        random_state=0,
        max_iter=5,
        pretrainer=_RememberStart(),
        learning_rate_init=0.5,
        gradient_clipping=None,
        early_stopping=False,
    ).fit(X, yr)
    start = copy.deepcopy(reg)
    start.net_.module_.load_state_dict(reg.pretrainer_.start_state_)
    start_loss = _recomputed_loss(start, X, yr)
    final_loss = _recomputed_loss(reg, X, yr)
    assert final_loss <= start_loss + 1e-6
    assert reg.best_loss_ == pytest.approx(final_loss, rel=1e-4, abs=1e-6)


# --------------------------------------------------------------------------- #
# Fine-tuning anchored to the pretrained start (pretrained_alpha)
def test_anchor_adds_the_gradient_of_the_distance_to_the_start():
    from types import SimpleNamespace

    from sklmn._training import AnchorToStart

    torch.manual_seed(0)
    module = torch.nn.Linear(3, 2)
    net = SimpleNamespace(module_=module)
    anchor = AnchorToStart(0.7)
    anchor.on_train_begin(net)
    start = {n: p.detach().clone() for n, p in module.named_parameters()}
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn_like(p))
    x = torch.randn(5, 3)
    module(x).pow(2).mean().backward()
    anchor.on_grad_computed(net, list(module.named_parameters()), training=True)
    got = {n: p.grad.clone() for n, p in module.named_parameters()}
    # reference: autograd of the data loss plus the explicit L2-SP penalty
    module.zero_grad()
    penalty = sum(((p - start[n]) ** 2).sum() for n, p in module.named_parameters())
    (module(x).pow(2).mean() + 0.5 * 0.7 * penalty).backward()
    for n, p in module.named_parameters():
        torch.testing.assert_close(got[n], p.grad)
    # a parameter whose shape changed (a grown module) is left alone
    module.weight = torch.nn.Parameter(torch.zeros(4, 3))
    module.weight.grad = torch.ones(4, 3)
    anchor.on_grad_computed(net, list(module.named_parameters()), training=True)
    torch.testing.assert_close(module.weight.grad, torch.ones(4, 3))


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: LMNClassifier(**SMALL, **kw),
        lambda **kw: MultiScaleLMNClassifier(
            hidden_size=4, memory_size=2, n_modules=2, random_state=0, **kw
        ),
    ],
)
def test_anchor_is_used_only_after_a_pretrainer(make):
    X, y, _ = _data()

    def anchor(est):
        return dict(est.net_.callbacks_).get("anchor_to_start")

    clf = make(max_iter=2, pretrained_alpha=3.0).fit(X, y)  # 'auto' pretrains
    assert anchor(clf).alpha == 3.0
    assert anchor(make(max_iter=2, pretrained_alpha=0.0).fit(X, y)) is None
    assert (
        anchor(make(max_iter=2, pretrainer=None, pretrained_alpha=3.0).fit(X, y))
        is None
    )
    warm = make(max_iter=2, warm_start=True, pretrained_alpha=3.0).fit(X, y)
    assert anchor(warm.fit(X, y)) is None


def test_default_anchor_lmn_auto_multiscale_anchored():
    assert LMNClassifier().pretrained_alpha == LMNRegressor().pretrained_alpha
    assert LMNClassifier().pretrained_alpha == "auto"
    assert MultiScaleLMNClassifier().pretrained_alpha == 10.0
    assert MultiScaleLMNClassifier().pretrainer == "auto"
    X, y, _ = _data()
    for est in (LMNClassifier, MultiScaleLMNClassifier):
        with pytest.raises(ValueError, match="pretrained_alpha"):
            est(pretrained_alpha=-1.0).fit(X, y)


def test_a_strong_anchor_keeps_fine_tuning_near_the_start():
    X, _, yr = _data(n=40)

    def distance(alpha):
        reg = LMNRegressor(
            hidden_size=3,
            memory_size=3,
            random_state=0,
            max_iter=20,
            n_iter_no_change=100,
            pretrainer=_RememberStart(),
            pretrained_alpha=alpha,
            optimizer="sgd",
            learning_rate_init=0.01,
            early_stopping=False,
        ).fit(X, yr)
        state, start = reg.net_.module_.state_dict(), reg.pretrainer_.start_state_
        return sum(float((state[k] - v).pow(2).sum()) for k, v in start.items())

    free, anchored = distance(0.0), distance(50.0)
    assert free > 0 and anchored < 0.1 * free


def test_a_destroyed_start_is_restored_with_best_epoch_zero():
    from sklmn.callbacks import DivergenceWarning, RestoreOnDivergence

    X, _, yr = _data(n=40)
    reg = LMNRegressor(
        hidden_size=3,
        memory_size=3,
        random_state=0,
        max_iter=3,
        pretrainer=_RememberStart(),
        learning_rate_init=3.0,  # Adam steps of 3 per weight: bounded, ruinous
        gradient_clipping=None,
        early_stopping=False,
        # the loss explodes (~1e11): a divergence, recovered here
        callbacks=[("restore", RestoreOnDivergence())],
    )
    with pytest.warns(DivergenceWarning, match="times the lowest"):
        reg.fit(X, yr)
    assert reg.best_epoch_ == 0 and reg.diverged_
    for k, v in reg.pretrainer_.start_state_.items():
        torch.testing.assert_close(reg.net_.module_.state_dict()[k], v)


# --------------------------------------------------------------------------- #
# Validation data, early_stopping='auto', learning-rate schedule
def test_early_stopping_auto_holds_out_only_large_training_sets(monkeypatch):
    import sklmn.estimators._auto as base

    X, y, _ = _data(n=30)
    clf = LMNClassifier(**SMALL, max_iter=2, pretrainer=None).fit(X, y)
    assert clf.validation_loss_curve_ is None
    monkeypatch.setattr(base, "_AUTO_EARLY_STOPPING", 20)
    clf = LMNClassifier(**SMALL, max_iter=2, pretrainer=None).fit(X, y)
    assert len(clf.validation_loss_curve_) == 2


def test_validation_data_errors():
    X, y, _ = _data()
    clf = LMNClassifier(**SMALL, max_iter=2, pretrainer=None)
    with pytest.raises(ValueError, match="together"):
        clf.fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="early_stopping=False"):
        clf.set_params(early_stopping=False).fit(X, y, X_val=X, y_val=y)
    with pytest.raises(ValueError, match="features"):
        clf.set_params(early_stopping="auto").fit(X, y, X_val=X[..., :1], y_val=y)


def test_adaptive_learning_rate_divides_by_five_on_plateaus():
    X, y, _ = _data()
    clf = LMNClassifier(
        **SMALL,
        max_iter=12,
        learning_rate="adaptive",
        n_iter_no_change=2,
        tol=1e9,
        pretrainer=None,  # no epoch counts as an improvement
    )
    clf.fit(X, y)
    # patience 2: converged after 3 epochs; one reduction at the 1st plateau
    # epoch (ceil(2 / 2) = 1) and one at the 2nd, in every group (the memory's
    # group starts at memory_lr_scale_ times the rate)
    assert clf.memory_lr_scale_ == 0.1
    rates = sorted({g["lr"] for g in clf.net_.optimizer_.param_groups})
    assert rates == pytest.approx([0.1 * 1e-3 / 25, 1e-3 / 25])
    assert clf.n_iter_ == 3


# --------------------------------------------------------------------------- #
# Standardization
def test_standardize_equals_training_on_standardized_inputs():
    X, y, _ = _data()
    X = X * np.array([100.0, 0.01]) + np.array([5.0, -3.0])
    X_orig = X.copy()
    clf = LMNClassifier(**SMALL, max_iter=3, pretrainer=None).fit(X, y)
    np.testing.assert_array_equal(X, X_orig)  # caller's data untouched
    flat = X.reshape(-1, 2)
    mean, std = flat.mean(0), flat.std(0)
    np.testing.assert_allclose(clf.input_mean_, mean, rtol=1e-6)
    np.testing.assert_allclose(clf.input_scale_, std, rtol=1e-6)
    manual = LMNClassifier(**SMALL, max_iter=3, pretrainer=None, standardize=False).fit(
        (X - mean) / std, y
    )
    np.testing.assert_allclose(
        clf.predict_proba(X),
        manual.predict_proba((X - mean) / std),
        rtol=1e-4,
        atol=1e-5,
    )


def test_standardize_ignores_padding():
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(2, 9), 1) * 3 + 7 for _ in range(20)]
    y = np.arange(20) % 2
    clf = RNNClassifier(hidden_size=3, max_iter=1, random_state=0).fit(X, y)
    steps = np.concatenate(X)
    np.testing.assert_allclose(clf.input_mean_, steps.mean(0), rtol=1e-6)
    np.testing.assert_allclose(clf.input_scale_, steps.std(0), rtol=1e-6)


def test_regressor_standardizes_the_target_and_inverts_predictions():
    X, _, yr = _data()
    a = RNNRegressor(hidden_size=4, max_iter=3, random_state=0).fit(X, yr)
    b = RNNRegressor(hidden_size=4, max_iter=3, random_state=0).fit(
        X, 1000.0 * yr + 5.0
    )
    assert b.target_mean_[0] == pytest.approx(1000.0 * yr.mean() + 5.0)
    np.testing.assert_allclose(
        b.predict(X), 1000.0 * a.predict(X) + 5.0, rtol=1e-4, atol=1e-3
    )


def test_regressor_per_step_target_standardization_ignores_padding():
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(2, 6), 1) for _ in range(16)]
    y = [50.0 + 10.0 * x[:, 0] for x in X]
    reg = LMNRegressor(**SMALL, target="timestep", max_iter=2, pretrainer=None).fit(
        X, y
    )
    steps = np.concatenate(y)
    assert reg.target_mean_[0] == pytest.approx(steps.mean())
    assert reg.target_scale_[0] == pytest.approx(steps.std())
    pred = reg.predict(X)
    assert all(p.shape == t.shape for p, t in zip(pred, y, strict=True))


def test_multiscale_defaults_fit():
    X, y, _ = _data()
    clf = MultiScaleLMNClassifier(
        hidden_size=4, memory_size=2, n_modules=2, max_iter=3, random_state=0
    ).fit(X, y)
    assert clf.best_loss_ is not None and clf.input_mean_.shape == (2,)


# --------------------------------------------------------------------------- #
# Pretraining by default
def test_lmn_pretrains_with_laes_by_default_on_small_data(monkeypatch):
    import sklmn.estimators._lmn as lmn_module
    from sklmn.pretraining import LAESInitializer

    X, y, _ = _data()
    clf = LMNClassifier(**SMALL, max_iter=1).fit(X, y)
    assert isinstance(clf.pretrainer_, LAESInitializer)
    assert clf.pretrainer_.alpha == "gcv" and clf.pretrainer_.random_state == 0
    # no pretraining on large training sets, nor for an orthogonal memory
    monkeypatch.setattr(lmn_module, "_AUTO_PRETRAINING_MAX", 10)
    assert LMNClassifier(**SMALL, max_iter=1).fit(X, y).pretrainer_ is None
    monkeypatch.undo()
    clf = LMNClassifier(**SMALL, max_iter=1, memory_matrix="orthogonal").fit(X, y)
    assert clf.pretrainer_ is None
    # the multi-scale LMN too (its own default 'auto')
    ms = MultiScaleLMNClassifier(
        hidden_size=4, memory_size=2, n_modules=2, max_iter=1, random_state=0
    )
    assert isinstance(ms.fit(X, y).pretrainer_, LAESInitializer)
    assert ms.set_params(pretrainer=None).fit(X, y).pretrainer_ is None


@pytest.mark.parametrize("est", [LMNRegressor, MultiScaleLMNRegressor])
def test_auto_pretraining_skips_constant_inputs(est):
    # a generator driven by zeros: the LAES start would be an all-zero
    # stationary point (no gradient reaches the memory), so 'auto' does not
    # pretrain and training learns the per-step target
    X = np.zeros((1, 40, 1))
    y = np.sin(np.arange(40) / 3.0)[None, :]
    kw = dict(hidden_size=8, memory_size=4, target="timestep", batch_size=1)
    kw.update(max_iter=150, learning_rate_init=0.01, n_iter_no_change=1000, tol=0.0)
    reg = est(random_state=0, **kw).fit(X, y)
    assert reg.pretrainer_ is None
    assert float(np.mean((reg.predict(X)[0] - y[0]) ** 2)) < 0.5 * y.var()
    from sklmn.pretraining import LAESInitializer

    stuck = est(random_state=0, pretrainer=LAESInitializer(), **kw).fit(X, y)
    assert float(np.mean((stuck.predict(X)[0] - y[0]) ** 2)) > 0.9 * y.var()


def test_seeded_default_fits_are_reproducible():
    X, y, _ = _data()
    a = LMNClassifier(**SMALL, max_iter=3).fit(X, y)
    b = LMNClassifier(**SMALL, max_iter=3).fit(X, y)
    assert a.loss_curve_ == b.loss_curve_


class _RecordContext(_ParameterlessPretrainer):
    """Test pretrainer: records the sequences and targets it is given."""

    def initialize(self, module, context):
        self.first_steps_ = np.asarray(context.sequences.data)[:, 0].copy()
        self.n_targets_ = len(context.y)


@pytest.mark.parametrize("early_stopping", [True, False])
def test_pretrainer_sees_only_the_training_part_of_a_validation_split(
    early_stopping,
):
    # with a held-out split, the start is judged on sequences (and labels)
    # the pretrainer never saw
    rng = np.random.RandomState(0)
    X = rng.randn(50, 6, 2)
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    clf = LMNClassifier(
        hidden_size=3,
        memory_size=3,
        max_iter=2,
        random_state=0,
        early_stopping=early_stopping,
        validation_fraction=0.2,
        pretrainer=_RecordContext(),
    ).fit(X, y)
    seen = clf.pretrainer_.first_steps_
    n_seen = 40 if early_stopping else 50
    assert seen.shape[0] == clf.pretrainer_.n_targets_ == n_seen
    # the recorded inputs are standardized: match them to X by standardizing
    standardized = (X[:, 0] - clf.input_mean_) / clf.input_scale_
    d = np.abs(standardized[:, None, :] - seen[None, :, :]).max(axis=2)
    matched = d.min(axis=1) < 1e-5
    assert matched.sum() == n_seen
    # the 10 held out are the validation sequences
    assert (~matched).sum() == 50 - n_seen


def test_auto_pretraining_is_resolved_for_all_sequences_given_to_fit(monkeypatch):
    # 'auto' pretrains up to 1000 sequences: the count is that of fit's
    # input, not of the training part left by a validation split
    import sklmn.estimators._lmn as lmn_module

    monkeypatch.setattr(lmn_module, "_AUTO_PRETRAINING_MAX", 45)
    rng = np.random.RandomState(1)
    X = rng.randn(50, 5, 1)
    y = X[:, :, 0].sum(axis=1)
    kwargs = dict(hidden_size=2, memory_size=2, max_iter=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 50 > 45: no pretraining, although the split leaves 45 to train on
        reg = LMNRegressor(**kwargs, validation_fraction=0.1).fit(X, y)
        assert reg.pretrainer_ is None
        reg = LMNRegressor(**kwargs).fit(X[:45], y[:45])
    assert reg.pretrainer_ is not None


@pytest.mark.parametrize(
    "n, expected, lr", [(40, 40, 1e-3), (1000, 200, 1e-3), (1001, 32, 3e-3)]
)
def test_auto_batch_size_and_learning_rate_by_data_size(n, expected, lr):
    from sklmn.estimators._auto import auto_batch_size, auto_learning_rate

    assert auto_batch_size(n) == expected
    assert auto_learning_rate(n) == lr
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3, 1)
    reg = LMNRegressor(
        hidden_size=2, memory_size=2, max_iter=1, pretrainer=None, random_state=0
    ).fit(X, X[:, :, 0].sum(axis=1))
    assert reg.net_.batch_size == expected
    assert reg.net_.lr == pytest.approx(lr)
    # the fastest group (the memory's groups train at a fraction)
    assert max(g["lr"] for g in reg.net_.optimizer_.param_groups) == pytest.approx(lr)
    # an explicit rate is used whatever the data size
    reg.set_params(learning_rate_init=0.02).fit(X, X[:, :, 0].sum(axis=1))
    assert max(g["lr"] for g in reg.net_.optimizer_.param_groups) == pytest.approx(0.02)


def test_enrnn_weights_turned_nan_are_a_divergence():
    # the eigenvalue step of the ENRNN's normalization sees the NaN weights
    # before any loss does: a divergence, the start restored, no crash
    class Poison(Callback):
        def on_batch_begin(self, net, batch=None, training=False, **kwargs):
            if training and len(net.history) == 2:
                with torch.no_grad():
                    for p in net.module_.parameters():
                        p.fill_(float("nan"))

    rng = np.random.RandomState(0)
    X = rng.randn(30, 10, 2)
    y = (X.sum(axis=(1, 2)) > 0).astype(int)
    clf = ENRNNClassifier(max_iter=4, random_state=0, callbacks=[Poison()])
    with pytest.warns(DivergenceWarning, match="NaN or infinite"):
        clf.fit(X, y)
    assert np.isfinite(clf.predict_proba(X)).all()


def test_starting_weights_that_cannot_be_evaluated_fail_the_fit_cleanly():
    # the stopping rule's measurement of the start diverged before the
    # training loop: it escaped as a KeyboardInterrupt (an AttributeError
    # before that); now a FloatingPointError, the fitted estimator unchanged
    class PoisonStart(Callback):
        def on_train_begin(self, net, **kwargs):
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.fill_(float("nan"))

    rng = np.random.RandomState(0)
    X = rng.randn(30, 10, 2)
    y = (X.sum(axis=(1, 2)) > 0).astype(int)
    clf = ENRNNClassifier(max_iter=2, random_state=0).fit(X, y)
    before = clf.predict_proba(X)
    clf.set_params(callbacks=[("poison", PoisonStart())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DivergenceWarning)
        try:
            with pytest.raises(FloatingPointError, match="NaN or infinite"):
                clf.fit(X, y)
        except KeyboardInterrupt:
            pytest.fail("the divergence escaped fit as a KeyboardInterrupt")
    np.testing.assert_allclose(clf.predict_proba(X), before, rtol=0, atol=1e-12)
