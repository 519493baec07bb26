"""``fine_tuning='smooth'`` (the network of the classifiers' default
fine-tuning of a LAES start, ``'projection'``, without its steps): a slow
Schur memory, a linear warm-up, the input of each mode trained in
units of its gain, and a held-out quarter judging the fine-tuning of a start
fitted on all the sequences."""

import pickle

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback
from torch.nn.utils import parametrize

from sklmn._training._smooth import (
    LinearWarmup,
    ModeInputNormalization,
    _ModeGain,
    remove_input_normalization,
)
from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.estimators._lmn import resolve_fine_tuning
from sklmn.nn import LMN, LMNLayer, MultiScaleLMN
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining, LAESInitializer, UnrolledPretrainer
from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net

from ._fine_tuning import data, small

CLASSIFIERS = [LMNClassifier, MultiScaleLMNClassifier]


_data = data


def _small(cls, **params):
    """``cls`` small, with the smooth fine-tuning unless told otherwise."""
    params.setdefault("fine_tuning", "smooth")
    return small(cls, 14, **params)


class _Record(Callback):
    """Per epoch: every optimizer group's learning rate; at the start: the
    sizes of the training and validation data."""

    def on_train_begin(self, net, **kwargs):
        self.rates_ = []

    def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kw):
        self.n_train_ = len(dataset_train)
        self.n_valid_ = None if dataset_valid is None else len(dataset_valid)
        self.rates_.append([g["lr"] for g in net.optimizer_.param_groups])


def _recorded_fit(X, y, cls, **params):
    """``cls`` fitted with a :class:`_Record` callback, and the record."""
    clf = _small(cls, callbacks=[("record", _Record())], **params).fit(X, y)
    return clf, dict(clf.net_.callbacks_)["record"]


class _CountingLAES(LAESInitializer):
    """A LAES initializer that records how many sequences it was fitted on."""

    def initialize(self, module, context):
        self.n_seen_ = context.sequences.n_samples
        return super().initialize(module, context)


# ---------------------------------------------------------------- resolution


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classifiers_default_to_projection_with_a_start(cls):
    assert cls().fine_tuning == "auto"
    assert resolve_fine_tuning(cls(), 100) == "projection"
    assert resolve_fine_tuning(cls(memory_matrix="schur"), 100) == "projection"
    # multilabel targets: no class readout to refit, the smooth fine-tuning
    X, y = _data()
    Y = np.stack([y, 1 - y], axis=1)
    clf = _small(cls, fine_tuning="auto", max_iter=2).fit(X, Y)
    assert clf.fine_tuning_ == "smooth"
    assert _small(cls, fine_tuning="auto", max_iter=2).fit(X, y).fine_tuning_ == (
        "projection"
    )
    # no start: nothing to fine-tune smoothly
    assert resolve_fine_tuning(cls(), 5000) == "full"
    assert resolve_fine_tuning(cls(pretrainer=None), 100) == "full"
    # another memory asked for, per-step targets: the papers' fine-tuning
    assert resolve_fine_tuning(cls(memory_matrix="free"), 100) == "full"
    assert resolve_fine_tuning(cls(target="timestep"), 100) == "full"
    # another pretrainer than the LAES start: the papers' fine-tuning
    unrolled = cls(pretrainer=UnrolledPretrainer())
    assert resolve_fine_tuning(unrolled, 100) == "full"
    laes = cls(pretrainer=LAESInitializer())
    assert resolve_fine_tuning(laes, 100) == "projection"
    # asked for explicitly, it is taken with any memory
    smooth_free = cls(fine_tuning="smooth", memory_matrix="free")
    assert resolve_fine_tuning(smooth_free, 100) == "smooth"


@pytest.mark.parametrize("cls", [LMNRegressor, MultiScaleLMNRegressor])
def test_regressors_keep_full_fine_tuning_unless_asked(cls):
    assert resolve_fine_tuning(cls(), 100) == "full"
    assert resolve_fine_tuning(cls(fine_tuning="smooth"), 100) == "smooth"


def test_incremental_growth_is_full():
    clf = MultiScaleLMNClassifier(incremental=IncrementalTraining())
    assert resolve_fine_tuning(clf, 100) == "full"
    clf.set_params(fine_tuning="smooth")
    assert resolve_fine_tuning(clf, 100) == "full"


# -------------------------------------------------------------------- fits


@pytest.mark.parametrize("cls", CLASSIFIERS)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_smooth_fit_settings_and_plain_module(cls, bidirectional):
    X, y = _data()
    clf, record = _recorded_fit(
        X,
        y,
        cls,
        bidirectional=bidirectional,
        pretrainer=_CountingLAES(),
        n_iter_no_change=100,
    )
    assert clf.fine_tuning_ == "smooth"
    assert clf.memory_matrix_ == "schur"
    assert clf.memory_lr_scale_ == pytest.approx(0.01)
    # the start saw every sequence; a quarter judges the fine-tuning
    assert clf.pretrainer_.n_seen_ == len(X)
    assert (record.n_train_, record.n_valid_) == (30, 10)
    assert clf.validation_loss_curve_ is not None
    # the warm-up: epoch e of the first 10 at e / 10 of every group's rate,
    # the memory group at 1/100 of the others
    rates = np.array(record.rates_)
    assert len(rates) == 14
    # learning_rate_init='auto': 3e-4 for the smooth fine-tuning
    assert sorted({round(r, 12) for r in rates[-1]}) == [3e-6, 3e-4]
    factors = np.minimum(np.arange(1, len(rates) + 1) / 10, 1.0)
    np.testing.assert_allclose(rates, factors[:, None] * rates[-1], rtol=1e-12)
    # the fitted module holds plain parameters (no training-time
    # parametrization left), and the optimizer trains them
    module = clf.net_.module_
    assert not any("parametrizations" in k for k in module.state_dict())
    assert not any(parametrize.is_parametrized(m) for m in module.modules())
    optimized = {id(p) for g in clf.net_.optimizer_.param_groups for p in g["params"]}
    assert optimized == {id(p) for p in module.parameters()}
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_without_early_stopping_nothing_is_held_out(cls):
    X, y = _data()
    clf, record = _recorded_fit(
        X,
        y,
        cls,
        early_stopping=False,
        pretrainer=_CountingLAES(),
        max_iter=3,
    )
    assert clf.fine_tuning_ == "smooth"
    assert clf.pretrainer_.n_seen_ == len(X)
    assert (record.n_train_, record.n_valid_) == (len(X), None)
    assert clf.validation_loss_curve_ is None


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_explicit_early_stopping_keeps_its_split(cls):
    # early_stopping=True: validation_fraction held out, the start fitted on
    # the training part (the rule of every estimator)
    X, y = _data()
    clf, record = _recorded_fit(
        X,
        y,
        cls,
        early_stopping=True,
        validation_fraction=0.2,
        pretrainer=_CountingLAES(),
        max_iter=3,
    )
    assert clf.fine_tuning_ == "smooth"
    assert clf.pretrainer_.n_seen_ == 32
    assert (record.n_train_, record.n_valid_) == (32, 8)


def test_full_fine_tuning_is_unchanged():
    X, y = _data()
    clf, record = _recorded_fit(X, y, LMNClassifier, fine_tuning="full", max_iter=3)
    assert (clf.fine_tuning_, clf.memory_matrix_) == ("full", "free")
    assert clf.memory_lr_scale_ == 1.0
    assert record.n_valid_ is None
    np.testing.assert_allclose(np.array(record.rates_), 1e-3, rtol=1e-12)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_smooth_model_saves_loads_and_trains_on(cls, tmp_path):
    X, y = _data()
    clf = _small(cls, max_iter=4).fit(X, y)
    path = tmp_path / "model.skops"
    save(clf, path)
    for back in (load(path), pickle.loads(pickle.dumps(clf))):
        assert back.fine_tuning_ == "smooth"
        np.testing.assert_allclose(
            back.predict_proba(X), clf.predict_proba(X), rtol=1e-5, atol=1e-6
        )
    clf.partial_fit(X, y)  # one more pass over the plain parameters
    assert np.all(np.isfinite(clf.predict_proba(X)))
    clf.set_params(warm_start=True, max_iter=2).fit(X, y)
    assert not any("parametrizations" in k for k in clf.net_.module_.state_dict())


def test_smooth_regressor_option():
    X, _ = _data()
    reg = _small(LMNRegressor, fine_tuning="smooth", max_iter=3)
    reg.fit(X, X[:, :3, 0].sum(1))
    if reg.pretrainer_ is not None:
        assert reg.fine_tuning_ == "smooth"
        assert reg.memory_lr_scale_ == pytest.approx(0.01)
    assert np.all(np.isfinite(reg.predict(X)))


# ------------------------------------------------------------- callbacks


def _schur_net(recurrent):
    return SequenceNet(recurrent, 1)


@pytest.mark.parametrize(
    "recurrent",
    [
        lambda: LMN(2, 5, 6, memory_matrix="schur", num_layers=2, bidirectional=True),
        lambda: MultiScaleLMN(
            2, 5, 3, n_modules=2, memory_matrix="schur", bidirectional=True
        ),
    ],
    ids=["lmn", "multiscale"],
)
def test_input_normalization_keeps_the_function(recurrent):
    torch.manual_seed(0)
    module = _schur_net(recurrent()).double()
    x = torch.randn(4, 7, 2, dtype=torch.float64)
    before = module(x).detach()
    data = SequenceDataset(x.float(), torch.full((4,), 7), torch.randn(4, 1))
    net = make_sequence_net(
        module.float(),
        problem="continuous",
        per_step=False,
        lr=0.0,  # no step: the function must be the start's
        max_epochs=1,
        batch_size=4,
        callbacks=[("normalize", ModeInputNormalization())],
    ).fit(data)
    layers = [m for m in net.module_.modules() if parametrize.is_parametrized(m)]
    expected = 4 if isinstance(module.recurrent, LMN) else 2
    assert len(layers) == expected
    # W_hm = diag(1 - |lambda|) V: V holds the input in units of the gain
    for layer in layers:
        moduli = layer.memory.eigenvalue_moduli()
        V = layer.parametrizations.weight_hm.original
        torch.testing.assert_close(
            layer.weight_hm, (1 - moduli)[:, None] * V, rtol=1e-6, atol=1e-7
        )
    # the optimizer trains V
    optimized = {id(p) for g in net.optimizer_.param_groups for p in g["params"]}
    assert {id(layer.parametrizations.weight_hm.original) for layer in layers} <= (
        optimized
    )
    assert remove_input_normalization(net.module_) == expected
    assert remove_input_normalization(net.module_) == 0
    after = net.module_.double()(x).detach()
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-6)


def test_input_normalization_leaves_other_memories_alone():
    module = SequenceNet(LMN(2, 3, 3), 1)  # free memory
    data = SequenceDataset(torch.randn(4, 5, 2), torch.full((4,), 5), torch.randn(4, 1))
    net = make_sequence_net(
        module,
        problem="continuous",
        per_step=False,
        lr=1e-3,
        max_epochs=1,
        batch_size=4,
        callbacks=[("normalize", ModeInputNormalization())],
    ).fit(data)
    assert not any(parametrize.is_parametrized(m) for m in net.module_.modules())


@pytest.mark.parametrize("epochs", [0, -1, 1.5, True, "3"])
def test_warmup_refuses_bad_epochs(epochs):
    message = f"epochs must be a positive int, got {epochs!r}"
    with pytest.raises(ValueError, match=message):
        LinearWarmup(epochs)


class _CopyAtStart(Callback):
    def on_train_begin(self, net, **kwargs):
        import copy

        self.module_ = copy.deepcopy(net.module_)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_copies_taken_during_training_still_run(cls):
    # a deep copy of the parametrized module shares its class: writing the
    # trained module's input back must not break the copy
    X, y = _data()
    clf = _small(cls, max_iter=2, callbacks=[("copy", _CopyAtStart())]).fit(X, y)
    copy_ = dict(clf.net_.callbacks_)["copy"].module_
    out = copy_(torch.as_tensor(X, dtype=torch.float32))
    assert torch.isfinite(out).all()


def test_the_held_out_quarter_with_sample_weights():
    X, y = _data()
    weight = np.zeros(len(X))
    weight[:12] = 1.0  # a quarter drawn among the weighted sequences
    clf = _small(LMNClassifier, max_iter=2).fit(X, y, sample_weight=weight)
    assert clf.fine_tuning_ == "smooth"
    weight[1:] = 0.0
    message = r"holds out 0\.25 of the sequences, but only 1"
    with pytest.raises(ValueError, match=message):
        _small(LMNClassifier, max_iter=2).fit(X, y, sample_weight=weight)


def test_an_explicit_learning_rate_wins():
    X, y = _data()
    clf = _small(LMNClassifier, max_iter=2, learning_rate_init=0.01).fit(X, y)
    assert clf.fine_tuning_ == "smooth"
    assert sorted({g["lr"] for g in clf.net_.optimizer_.param_groups}) == (
        pytest.approx([1e-4, 1e-2], rel=1e-12)
    )


# ------------------------------------------------- after the smooth fit


class _RecordMemoryInputState(Callback):
    """At the end of training (input normalization still on): the
    optimizer state of every ``V`` of a normalized ``W_hm``."""

    def on_train_end(self, net, **kwargs):
        self.states_ = {}
        for name, module in net.module_.named_modules():
            if parametrize.is_parametrized(module, "weight_hm"):
                V = module.parametrizations.weight_hm.original
                state = net.optimizer_.state[V]
                self.states_[name] = {
                    k: v.clone() if torch.is_tensor(v) else v for k, v in state.items()
                }


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop"])
def test_the_optimizer_state_carries_over_after_a_smooth_fit(optimizer):
    # partial_fit after fit resumes the optimizer state: the rebuilt
    # optimizer over the plain W_hm keeps it, in W_hm's units
    X, y = _data()
    clf = _small(
        LMNClassifier,
        max_iter=3,
        optimizer=optimizer,
        callbacks=[("record", _RecordMemoryInputState())],
    ).fit(X, y)
    assert clf.fine_tuning_ == "smooth"
    net = clf.net_
    params = list(net.module_.parameters())
    assert all(net.optimizer_.state.get(p) for p in params)
    recorded = dict(net.callbacks_)["record"].states_
    assert recorded
    first, second = {
        "adam": ("exp_avg", "exp_avg_sq"),
        "rmsprop": (None, "square_avg"),
    }[optimizer]
    for name, state in recorded.items():
        layer = net.module_.get_submodule(name)
        factor = (1 - layer.memory.eigenvalue_moduli()).clamp_min(1e-4)[:, None]
        carried = net.optimizer_.state[layer.weight_hm]
        if first is not None:
            torch.testing.assert_close(
                carried[first], state[first] / factor, rtol=1e-5, atol=1e-12
            )
        torch.testing.assert_close(
            carried[second], state[second] / factor**2, rtol=1e-5, atol=1e-12
        )
    if optimizer == "adam":
        steps = float(net.optimizer_.state[params[0]]["step"])
        clf.partial_fit(X, y)
        resumed = clf.net_.optimizer_.state[list(clf.net_.module_.parameters())[0]]
        assert float(resumed["step"]) > steps + 0.5


def test_the_smooth_fit_keeps_the_parameter_order(tmp_path):
    # W_hm is written back at its place among the layer's parameters: the
    # order of the same model built anew (a loaded one)
    X, y = _data()
    clf = _small(LMNClassifier, max_iter=2, memory_bias=True).fit(X, y)
    assert clf.fine_tuning_ == "smooth"
    path = tmp_path / "model.skops"
    save(clf, path)
    names = [name for name, _ in clf.net_.module_.named_parameters()]
    assert names == [name for name, _ in load(path).net_.module_.named_parameters()]


def test_inputs_without_a_start_train_at_the_usual_rate():
    # constant inputs: pretrainer='auto' gives no start, so no smooth
    # fine-tuning and not its learning rate; a later pass on other data
    # goes on with the fitted model's fine-tuning
    X, y = _data()
    constant = np.ones_like(X)
    clf = _small(LMNClassifier, max_iter=2).fit(constant, y)
    full = _small(LMNClassifier, max_iter=2, fine_tuning="full").fit(constant, y)
    assert (clf.fine_tuning_, clf.pretrainer_) == ("full", None)
    assert clf.net_.lr == pytest.approx(full.net_.lr, rel=1e-12)
    assert clf.net_.lr != pytest.approx(3e-4)
    clf.partial_fit(X, y)
    assert clf.net_.lr == pytest.approx(full.net_.lr, rel=1e-12)


def test_a_dropped_start_is_reported_as_full():
    # a start whose readout predicts nothing is dropped: no smooth
    # fine-tuning of it (like the residual fine-tuning, fine_tuning_ says so)
    rng = np.random.RandomState(0)
    X, y = rng.randn(40, 10, 2), rng.randn(40)
    reg = _small(LMNRegressor, fine_tuning="smooth", max_iter=2).fit(X, y)
    assert reg.pretrainer_ is None
    assert reg.fine_tuning_ == "full"


def test_mode_gain_keeps_the_start_and_scales_the_steps():
    torch.manual_seed(0)
    layer = LMNLayer(2, 4, 4, memory_matrix="schur").double()
    W = torch.tensor(
        [[0.9, 0.3, 0.0, 0.1], [-0.2, 0.8, 0.0, 0.0],
         [0.0, 0.0, 0.5, 0.2], [0.0, 0.0, 0.0, -0.99]],
        dtype=torch.float64,
    )
    layer.set_memory_(W)
    before = layer.weight_hm.detach().clone()
    parametrize.register_parametrization(layer, "weight_hm", _ModeGain(layer))
    torch.testing.assert_close(layer.weight_hm, before, rtol=1e-12, atol=1e-14)
    # the trained V moves W_hm's row j by (1 - |lambda_j|) times its step
    moduli = layer.memory.eigenvalue_moduli()
    V = layer.parametrizations.weight_hm.original
    step = torch.randn_like(V)
    with torch.no_grad():
        V.add_(step)
    expected = before + (1 - moduli)[:, None] * step
    torch.testing.assert_close(layer.weight_hm, expected, rtol=1e-12, atol=1e-14)
    # moduli computed from the dense matrix: 0.9 +- i sqrt(0.06), 0.5, 0.99
    ref = torch.linalg.eigvals(W).abs().sort().values
    torch.testing.assert_close(moduli.sort().values, ref, rtol=1e-9, atol=1e-12)
