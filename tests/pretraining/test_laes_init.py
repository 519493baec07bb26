"""LAES initialization (Carta, Sperduti & Bacciu 2020, "Autoencoder-based
initialization for recurrent neural networks with a linear memory", §3.2,
Table 4)."""

import copy
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sklmn._training import SequenceNet
from sklmn.datasets import load_sequential_digits
from sklmn.estimators import LMNClassifier, RNNClassifier
from sklmn.laes import LAESTransformer
from sklmn.nn import GRU, LMN, ElmanRNN
from sklmn.pretraining import LAESInitializer
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


def _outputs(net, seqs):
    net = net.double()
    with torch.no_grad():
        out = net(torch.from_numpy(seqs.data).double(), torch.from_numpy(seqs.lengths))
    return out.numpy()


def _reference_linear_model(X, y, p, n_classes):
    """LAES final states (naive loop) + min-norm least squares on one-hot."""
    laes = LAESTransformer(p, center=True).fit(X)
    Z = np.zeros((len(X), p))
    for t in range(X.shape[1]):  # m_t = A (x_t - mu) + B m_{t-1}
        Z = (X[:, t] - laes.mean_) @ laes.A_.T + Z @ laes.B_.T
    F = np.hstack([Z, np.ones((len(X), 1))])
    W = np.linalg.lstsq(F, np.eye(n_classes)[y], rcond=None)[0]
    return laes, F @ W


@pytest.mark.parametrize("mode", ["row", "pixel"])
def test_lmn_keeps_linear_accuracy_after_init(mode):
    # Table 4 of the paper: before any gradient step the LMN is as accurate as the
    # linear model (LAES states + the same least-squares readout); the Elman
    # RNN initialized from the same LAES is reported next to it.
    X, y = load_sequential_digits(mode=mode, return_X_y=True)
    seqs = check_sequences(X, dtype=np.float32)
    p = 32
    _, linear_out = _reference_linear_model(X, y, p, 10)
    linear_acc = np.mean(linear_out.argmax(1) == y)

    lmn_net = SequenceNet(LMN(seqs.n_features, p, p), 10)
    init = LAESInitializer(alpha=0.0).initialize(lmn_net, fit_context(seqs, y))
    lmn_acc = np.mean(_outputs(lmn_net, seqs).argmax(1) == y)

    rnn_net = SequenceNet(ElmanRNN(seqs.n_features, p), 10)
    LAESInitializer(alpha=0.0).initialize(rnn_net, fit_context(seqs, y))
    rnn_acc = np.mean(_outputs(rnn_net, seqs).argmax(1) == y)
    print(f"{mode}: linear {linear_acc:.4f} LMN {lmn_acc:.4f} Elman {rnn_acc:.4f}")

    assert init.linear_score_ == pytest.approx(linear_acc, abs=2e-3)
    assert linear_acc > 0.85
    assert abs(lmn_acc - linear_acc) <= 0.01
    if mode == "pixel":  # 64 steps saturate the Elman RNN's tanh
        assert rnn_acc < linear_acc - 0.3


@pytest.mark.parametrize("center", [True, False])
def test_lmn_weights_follow_the_paper(center):
    rng = np.random.RandomState(0)
    X = rng.rand(40, 6, 3)
    y = rng.randint(0, 3, 40)
    seqs = check_sequences(X, dtype=np.float32)
    net = SequenceNet(LMN(3, 5, 5), 3)
    init = LAESInitializer(center=center).initialize(net, fit_context(seqs, y))
    layer = net.recurrent.layers[0]
    A, B = init.laes_.A_, init.laes_.B_
    mu = X.reshape(-1, 3).mean(0) if center else np.zeros(3)
    atol = 1e-5
    np.testing.assert_allclose(layer.weight_xh.detach(), A, atol=atol)
    np.testing.assert_allclose(layer.weight_mh.detach(), 0.0, atol=0)
    np.testing.assert_allclose(layer.weight_hm.detach(), np.eye(5), atol=atol)
    np.testing.assert_allclose(layer.weight_mm.detach(), B, atol=atol)
    np.testing.assert_allclose(layer.bias_h.detach(), -A @ mu, atol=atol)


def test_input_scale_reaches_the_linear_model():
    # W_xh = sA, W_hm = I/s: tanh(s A x)/s -> A x, so the logits tend to
    # the linear model's as s -> 0 (no data-dependent rounding: float64).
    X, y = load_sequential_digits(mode="row", return_X_y=True)
    X, y = X[:300], y[:300]
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(8, 16, 16), 10).double()
    init = LAESInitializer(input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    _, linear_out = _reference_linear_model(X, y, 16, 10)
    np.testing.assert_allclose(_outputs(net, seqs), linear_out, rtol=0, atol=1e-3)


@pytest.mark.parametrize("per_step", [False, True])
def test_regression_readout_is_least_squares(per_step):
    rng = np.random.RandomState(1)
    X = [rng.randn(rng.randint(3, 7), 2) for _ in range(30)]
    seqs = check_sequences(X, dtype=np.float64)
    if per_step:
        y = np.zeros((30, seqs.n_timesteps, 1))
        for i, x in enumerate(X):
            y[i, : len(x), 0] = np.cumsum(x[:, 0])
    else:
        y = np.array([x[0, 1] for x in X])[:, None]
    net = SequenceNet(LMN(2, 6, 6), 1, per_step=per_step).double()
    init = LAESInitializer(center=False, alpha=0.0).initialize(
        net, fit_context(seqs, y, "continuous", per_step)
    )
    # reference: naive per-sequence LAES encoding, rows of valid steps
    feats, targets = [], []
    for i, x in enumerate(X):
        m = np.zeros(6)
        for t in range(len(x)):
            m = init.laes_.A_ @ x[t] + init.laes_.B_ @ m
            if per_step or t == len(x) - 1:
                feats.append(np.r_[m, 1.0])
                targets.append(y[i, t] if per_step else y[i])
    W = np.linalg.lstsq(np.array(feats), np.array(targets), rcond=None)[0]
    np.testing.assert_allclose(
        net.readout.weight.detach().numpy(), W[:-1].T, rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(
        net.readout.bias.detach().numpy(), W[-1], rtol=1e-6, atol=1e-8
    )


def test_errors_name_the_problem():
    seqs = check_sequences(np.random.RandomState(0).randn(10, 4, 2), dtype=np.float32)
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="an Elman RNN or a linear RNN, got GRU"):
        LAESInitializer().initialize(SequenceNet(GRU(2, 4), 2), fit_context(seqs, y))
    with pytest.raises(ValueError, match="input_scale"):
        LAESInitializer(input_scale=0).initialize(
            SequenceNet(LMN(2, 4, 4), 2), fit_context(seqs, y)
        )


@pytest.mark.parametrize(
    "estimator",
    [
        LMNClassifier(hidden_size=8, memory_size=8, max_iter=2, random_state=0),
        RNNClassifier(cell="elman", hidden_size=8, max_iter=2, random_state=0),
    ],
)
def test_estimators_clone_the_pretrainer(estimator):
    X, y = load_sequential_digits(mode="row", return_X_y=True)
    pre = LAESInitializer()
    est = clone(estimator).set_params(pretrainer=pre)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X[:200], y[:200])
    assert est.pretrainer_ is not pre and not hasattr(pre, "laes_")
    assert est.pretrainer_.laes_.n_components_ == 8
    assert est.score(X[:200], y[:200]) > 0.5


@pytest.mark.parametrize("module", [LMN(3, 6, 6), ElmanRNN(3, 6)])
def test_fewer_components_fill_the_first_units(module):
    # p < memory size: the first p units are the LAES; the others keep their
    # random weights (alive: nonzero states) but the readout ignores them
    rng = np.random.RandomState(0)
    seqs = check_sequences(rng.rand(30, 5, 3), dtype=np.float64)
    y = rng.randint(0, 2, 30)
    net = SequenceNet(module, 2).double()
    init = LAESInitializer(4, input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    X, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        states = net.recurrent(X, lengths)[0].numpy()
        outputs = net(X, lengths).numpy()
    scale = 1.0 if isinstance(module, LMN) else 1e-4  # Elman: s times LAES
    laes = LAESTransformer(4, center=True).fit(seqs.data)
    np.testing.assert_allclose(
        states[:, -1, :4],
        scale * laes.transform(X.numpy()),
        rtol=1e-4,
        atol=1e-7 * scale,
    )
    assert np.abs(states[..., 4:]).max() > 1e-6
    np.testing.assert_array_equal(net.readout.weight.detach().numpy()[:, 4:], 0.0)
    # the outputs are the linear model's (the other units are not read)
    feats = np.c_[laes.transform(X.numpy()), np.ones(30)]
    W = np.linalg.lstsq(feats, np.eye(2)[y], rcond=None)[0]
    np.testing.assert_allclose(outputs, feats @ W, rtol=1e-4, atol=1e-5)
    assert init.n_components_ == init.laes_.n_components_ == 4
    assert init.notes_ == []


def _naive_states(laes, seq_list):
    """LAES states of every step, m_t = A (x_t - mu) + B m_{t-1}, one by one."""
    out = []
    for x in seq_list:
        m, states = np.zeros(laes.n_components_), []
        for x_t in x:
            m = laes.A_ @ (x_t - laes.mean_) + laes.B_ @ m
            states.append(m)
        out.append(np.array(states))
    return out


def _ragged(rng, n, d, low=3, high=8):
    return [rng.randn(rng.randint(low, high), d) for _ in range(n)]


def _linear_outputs(final_states, y, n_classes):
    F = np.c_[final_states, np.ones(len(final_states))]
    W = np.linalg.lstsq(F, np.eye(n_classes)[y], rcond=None)[0]
    return F @ W


@pytest.mark.parametrize(
    "hidden, memory, n_components, p, r",
    [
        (10, 4, None, 4, 4),  # H > M: the paper's W_hm = [I 0] / s
        (6, 6, 4, 4, 4),  # p < H = M: free units on both sides
        (3, 8, None, 8, 2),  # H < p: A = U S Vᵀ on r = n_features hidden units
        (1, 8, None, 1, 1),  # H < min(p, n_features): p reduced to H
    ],
)
def test_hidden_and_memory_sizes_exact_in_linear_limit(
    hidden, memory, n_components, p, r
):
    rng = np.random.RandomState(0)
    X = _ragged(rng, 40, 2)
    y = rng.randint(0, 3, 40)
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, hidden, memory), 3).double()
    init = LAESInitializer(n_components, input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    assert init.n_components_ == p
    if p < (n_components or memory):
        assert init.notes_[0].startswith(f"n_components reduced from 8 to {p}")
    if r < p:
        assert "factored" in init.notes_[-1]
    # independent reference: the transformer and a step-by-step encoding
    laes = LAESTransformer(p, center=True).fit(X)
    ref = _naive_states(laes, X)
    lengths = torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        memory_seq = net.recurrent(torch.from_numpy(seqs.data), lengths)[0].numpy()
        outputs = net(torch.from_numpy(seqs.data), lengths).numpy()
    for i, st in enumerate(ref):
        np.testing.assert_allclose(
            memory_seq[i, : len(st), :p], st, rtol=1e-4, atol=1e-6
        )
    final = np.array([st[-1] for st in ref])
    np.testing.assert_allclose(
        outputs, _linear_outputs(final, y, 3), rtol=1e-4, atol=1e-4
    )
    layer = net.recurrent.layers[0]
    if p < memory:  # the other units are alive, and not read by the readout
        # (with H = r they read only the LAES hidden units, of size ~s)
        assert np.abs(memory_seq[..., p:]).max() > 1e-6
        np.testing.assert_array_equal(net.readout.weight.detach()[:, p:].numpy(), 0)
        W_mm, W_hm, W_mh = (
            layer.weight_mm.detach().numpy(),
            layer.weight_hm.detach().numpy(),
            layer.weight_mh.detach().numpy(),
        )
        J = W_mm + W_hm @ W_mh
        np.testing.assert_array_equal(J[:p, p:], 0.0)  # block triangular
        radius = getattr(layer, "init_radius", None)
        if radius is not None:
            assert np.abs(np.linalg.eigvals(J[p:, p:])).max() <= radius + 1e-9


def test_bidirectional_exact_in_linear_limit():
    rng = np.random.RandomState(1)
    X = _ragged(rng, 30, 2)
    y = rng.randint(0, 2, 30)
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, 5, 5, bidirectional=True), 2).double()
    init = LAESInitializer(input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    fwd = LAESTransformer(5, center=True).fit(X)
    rev = LAESTransformer(5, center=True).fit([x[::-1] for x in X])
    ref_fwd = _naive_states(fwd, X)
    ref_rev = [st[::-1] for st in _naive_states(rev, [x[::-1] for x in X])]
    lengths = torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        out = net.recurrent(torch.from_numpy(seqs.data), lengths)[0].numpy()
        logits = net(torch.from_numpy(seqs.data), lengths).numpy()
    for i in range(30):
        n = len(X[i])
        np.testing.assert_allclose(out[i, :n, :5], ref_fwd[i], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(out[i, :n, 5:], ref_rev[i], rtol=1e-4, atol=1e-6)
    final = np.array(
        [np.r_[f[-1], b[-1]] for f, b in zip(ref_fwd, ref_rev, strict=True)]
    )
    np.testing.assert_allclose(
        logits, _linear_outputs(final, y, 2), rtol=1e-4, atol=1e-4
    )


def test_stacked_exact_in_linear_limit():
    # layer 2 encodes layer 1's outputs, the LAES states of the input
    rng = np.random.RandomState(2)
    X = _ragged(rng, 30, 2)
    y = rng.randint(0, 2, 30)
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, 4, 4, num_layers=2), 2).double()
    init = LAESInitializer(input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    first = LAESTransformer(4, center=True).fit(X)
    middle = _naive_states(first, X)
    second = init.laes_layers_[1][0]
    ref = _naive_states(second, middle)
    lengths = torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        out = net.recurrent(torch.from_numpy(seqs.data), lengths)[0].numpy()
    for i, st in enumerate(ref):
        np.testing.assert_allclose(out[i, : len(st)], st, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(init.laes_.A_, first.A_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("hidden_size", [32, 4])
def test_multiscale_laes_initialization_encodes_each_module_clock(hidden_size):
    # in the linear limit (tiny input scale) module k's memory is the LAES
    # encoding of the inputs subsampled at its clock t = 0, 2**k, 2 * 2**k, ...
    # whether each module reads its own hidden units (32 >= 28 components)
    # or all modules read the two input units (4 < 28)
    import warnings

    from sklmn.estimators import MultiScaleLMNClassifier

    rng = np.random.RandomState(0)
    X = rng.randn(40, 13, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = MultiScaleLMNClassifier(
            hidden_size=hidden_size,
            memory_size=8,
            max_iter=1,
            learning_rate_init=1e-9,
            early_stopping=False,
            random_state=0,
            standardize=False,
            pretrainer=LAESInitializer(input_scale=1e-3, alpha=0.0, center=False),
            fine_tuning="full",  # the free memory: the LAES coordinates
        ).fit(X, y)
    pre = clf.pretrainer_
    # the slowest module (period 8) sees 2 steps of 2 features: 4 components
    assert pre.n_components_ == 8 + 8 + 8 + 4
    assert any("module 3" in note for note in pre.notes_)
    # own hidden units: module 0 reads its 8 units through I / s; shared:
    # every module reads the 2 input units through A_k / s
    W_hm = clf.net_.module_.recurrent.weight_hm.detach().numpy()
    block = W_hm[clf.net_.module_.recurrent.module_slice(0)][:8, :8]
    own = block.shape == (8, 8) and np.allclose(block, np.eye(8) / 1e-3, rtol=1e-6)
    assert own == (hidden_size == 32)
    net = copy.deepcopy(clf.net_.module_.recurrent).double()
    out, _ = net(torch.as_tensor(X))
    for k, laes in enumerate(pre.laes_layers_[0]):
        period, rows_k = net.periods[k], net.module_slice(k)
        laes = copy.deepcopy(laes).set_params(return_sequences=True)
        expected = np.stack(laes.transform(list(X[:, ::period])))
        got = out[:, ::period, rows_k][..., : expected.shape[-1]].detach().numpy()
        # float32 weights, tanh(s z) / s = z + O(s^2)
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    assert clf.score(X, y) == pytest.approx(pre.linear_score_, abs=0.05)


def test_one_module_multiscale_laes_start_is_the_lmn_start():
    # with one module (period 1) and enough hidden units, the multi-scale
    # construction is the LMN's: the same states and outputs at s = 1
    from sklmn.nn import MultiScaleLMN

    rng = np.random.RandomState(4)
    X = [rng.randn(rng.randint(5, 12), 3) for _ in range(40)]
    y = np.array([int(x[:, 1].sum() > 0) for x in X])
    seqs = check_sequences(X, dtype=np.float64)
    nets = [
        SequenceNet(LMN(3, 6, 6), 2).double(),
        SequenceNet(MultiScaleLMN(3, 6, 6, 1), 2).double(),
    ]
    for net in nets:
        LAESInitializer(readout="logistic", random_state=0).initialize(
            net, fit_context(seqs, y)
        )
    states = [_network_rows(net, seqs, per_step=True) for net in nets]
    # compared up to the signs of the LAES components (tanh is odd)
    grams = [st @ st.T for st in states]
    np.testing.assert_allclose(grams[1], grams[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        _outputs(nets[1], seqs), _outputs(nets[0], seqs), rtol=1e-4, atol=1e-4
    )


def test_multiscale_laes_initialization_with_few_hidden_units():
    import warnings

    from sklmn.estimators import MultiScaleLMNRegressor

    rng = np.random.RandomState(1)
    X = rng.randn(30, 9, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = MultiScaleLMNRegressor(
            hidden_size=3,
            memory_size=4,
            n_modules=2,
            max_iter=2,
            random_state=0,
            pretrainer=LAESInitializer(),
        ).fit(X, X[:, 0, 0])
    assert any("principal directions" in note for note in reg.pretrainer_.notes_)
    assert np.isfinite(reg.predict(X)).all()


def _network_rows(net, seqs, per_step):
    """Float64 rows of the network's own states: final step or every step."""
    with torch.no_grad():
        states, _ = net.recurrent.double()(
            torch.from_numpy(seqs.data).double(), lengths=torch.from_numpy(seqs.lengths)
        )
    states = states.numpy()
    if per_step:
        mask = np.arange(states.shape[1]) < seqs.lengths[:, None]
        return states[mask]
    return states[np.arange(len(states)), seqs.lengths - 1]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("module", ["lmn", "multiscale"])
def test_logistic_readout_is_logistic_regression_of_the_network_states(
    n_classes, module
):
    from sklearn.linear_model import LogisticRegression

    from sklmn.nn import MultiScaleLMN

    rng = np.random.RandomState(3)
    X = [rng.randn(rng.randint(4, 9), 2) for _ in range(50)]
    y = np.array(
        [int(x[:, 0].sum() > 0) + (n_classes == 3) * int(x[0, 1] > 0.5) for x in X]
    )
    seqs = check_sequences(X, dtype=np.float64)
    recurrent = LMN(2, 6, 6) if module == "lmn" else MultiScaleLMN(2, 4, 3, 2)
    net = SequenceNet(recurrent, n_classes).double()
    init = LAESInitializer(readout="logistic", C=0.5).initialize(
        net, fit_context(seqs, y)
    )
    F = _network_rows(net, seqs, per_step=False)
    reference = LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000).fit(F, y)
    proba = torch.softmax(torch.from_numpy(_outputs(net, seqs)), dim=1).numpy()
    # lbfgs stops at its tolerance: the probabilities agree to that
    np.testing.assert_allclose(proba, reference.predict_proba(F), atol=2e-3)
    assert init.linear_score_ == pytest.approx(reference.score(F, y), abs=1 / 50)


@pytest.mark.parametrize("module", ["lmn", "multiscale"])
def test_readouts_weight_the_rows_as_the_loss_does(module):
    # the start minimizes the weighted loss that training goes on with:
    # references are sklearn's LogisticRegression with sample_weight and an
    # explicit weighted ridge solve on the network's / LAES's states
    import dataclasses

    from sklearn.linear_model import LogisticRegression

    from sklmn.nn import MultiScaleLMN

    rng = np.random.RandomState(5)
    X = [rng.randn(rng.randint(4, 9), 2) for _ in range(40)]
    y = np.array([int(x[:, 0].sum() > 0) + int(x[0, 1] > 0.5) for x in X])
    w = rng.uniform(0.2, 3.0, size=len(X))
    seqs = check_sequences(X, dtype=np.float64)

    def net():
        recurrent = LMN(2, 6, 6) if module == "lmn" else MultiScaleLMN(2, 4, 3, 2)
        return SequenceNet(recurrent, 3).double()

    logistic = net()
    context = dataclasses.replace(fit_context(seqs, y), sample_weight=w)
    LAESInitializer(readout="logistic", C=0.5).initialize(logistic, context)
    F = _network_rows(logistic, seqs, per_step=False)
    reference = LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000)
    reference.fit(F, y, sample_weight=w)
    proba = torch.softmax(torch.from_numpy(_outputs(logistic, seqs)), dim=1).numpy()
    np.testing.assert_allclose(proba, reference.predict_proba(F), atol=2e-3)
    unweighted = reference.fit(F, y).predict_proba(F)
    assert np.abs(proba - unweighted).max() > 1e-2  # the weights mattered

    if module != "lmn":
        return
    t = np.array([x[:, 0].sum() for x in X])[:, None]
    context = dataclasses.replace(fit_context(seqs, t, "continuous"), sample_weight=w)
    ridge = SequenceNet(LMN(2, 4, 4), 1).double()
    init = LAESInitializer(alpha=0.3).initialize(ridge, context)
    F = np.array([st[-1] for st in _naive_states(init.laes_, X)])
    f_mean, t_mean = np.average(F, 0, weights=w), np.average(t, 0, weights=w)
    Fc, tc = F - f_mean, t - t_mean
    gram = Fc.T @ (w[:, None] * Fc)
    scale = np.trace(gram) / F.shape[1]
    W = np.linalg.solve(
        gram + 0.3 * scale * np.eye(F.shape[1]), Fc.T @ (w[:, None] * tc)
    )
    np.testing.assert_allclose(
        ridge.readout.weight.detach().numpy(), W.T, rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(
        ridge.readout.bias.detach().numpy(), t_mean - f_mean @ W, rtol=1e-6, atol=1e-9
    )


def test_estimators_hand_the_loss_weights_to_the_pretrainer():
    from sklmn.estimators import LMNClassifier

    rng = np.random.RandomState(9)
    X = rng.randn(40, 6, 2)
    y = (X[:, -1, 0] > 0.8).astype(int)  # imbalanced
    seen = {}

    class Record(LAESInitializer):
        def initialize(self, module, context):
            seen["w"] = context.sample_weight
            return super().initialize(module, context)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # (the smooth fine-tuning: the projection's guard fits a second
        # start on three quarters of the sequences)
        clf = LMNClassifier(
            hidden_size=4,
            memory_size=4,
            max_iter=1,
            pretrainer=Record(),
            fine_tuning="smooth",
        )
        clf.fit(X, y)
        assert seen["w"] is None
        LMNClassifier(
            hidden_size=4,
            memory_size=4,
            max_iter=1,
            pretrainer=Record(),
            class_weight="balanced",
            fine_tuning="smooth",
        ).fit(X, y)
    counts = np.bincount(y)
    expected = (len(y) / (2 * counts))[y]
    np.testing.assert_allclose(seen["w"], expected / expected.mean(), rtol=1e-6)
    # with a validation split: the training part's weights, mean one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.set_params(class_weight="balanced", early_stopping=True).fit(X, y)
    assert len(seen["w"]) == 36
    assert seen["w"].mean() == pytest.approx(1.0, rel=1e-6)
    assert len(np.unique(np.round(seen["w"], 6))) == 2


def test_logistic_readout_of_multilabel_and_per_step_targets():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(4)
    X = rng.randn(40, 6, 2)
    seqs = check_sequences(X, dtype=np.float64)
    # multilabel: one label per binary model, a constant label is certain
    Y = np.c_[X[:, -1, 0] > 0, X[:, :, 1].sum(1) > 0, np.ones(40)].astype(np.float64)
    net = SequenceNet(LMN(2, 5, 5), 3).double()
    LAESInitializer(readout="auto").initialize(net, fit_context(seqs, Y, "multilabel"))
    F = _network_rows(net, seqs, per_step=False)
    proba = torch.sigmoid(torch.from_numpy(_outputs(net, seqs))).numpy()
    for k in range(2):
        ref = LogisticRegression(tol=1e-10, max_iter=10_000).fit(F, Y[:, k])
        np.testing.assert_allclose(proba[:, k], ref.predict_proba(F)[:, 1], atol=2e-3)
    assert proba[:, 2].min() > 0.99
    # per-step classes: one row per valid step
    y_steps = (np.cumsum(X[:, :, 0], axis=1) > 0).astype(np.int64)
    net = SequenceNet(LMN(2, 5, 5), 2, per_step=True).double()
    LAESInitializer(readout="logistic").initialize(
        net, fit_context(seqs, y_steps, per_step=True)
    )
    F = _network_rows(net, seqs, per_step=True)
    ref = LogisticRegression(tol=1e-10, max_iter=10_000).fit(F, y_steps.ravel())
    logits = _outputs(net, seqs).reshape(-1, 2)
    proba = torch.softmax(torch.from_numpy(logits), dim=1).numpy()
    np.testing.assert_allclose(proba, ref.predict_proba(F), atol=2e-3)


def test_auto_readout_is_ridge_for_regression_and_logistic_rejects_it():
    rng = np.random.RandomState(5)
    X = rng.randn(30, 5, 2)
    seqs = check_sequences(X, dtype=np.float64)
    t = X[:, :, 0].sum(1)[:, None]
    weights = []
    for readout in ("ridge", "auto"):
        net = SequenceNet(LMN(2, 4, 4), 1).double()
        LAESInitializer(readout=readout, alpha=0.1).initialize(
            net, fit_context(seqs, t, "continuous")
        )
        weights.append(net.readout.weight.detach().numpy().copy())
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-12)
    net = SequenceNet(LMN(2, 4, 4), 1).double()
    with pytest.raises(ValueError, match="readout='logistic'.*continuous"):
        LAESInitializer(readout="logistic").initialize(
            net, fit_context(seqs, t, "continuous")
        )
    with pytest.raises(ValueError, match="readout"):
        LAESInitializer(readout="softmax").initialize(
            net, fit_context(seqs, t, "continuous")
        )


def test_logistic_readout_of_classes_missing_from_the_rows():
    from sklmn.pretraining._common import logistic_readout

    F = np.random.RandomState(6).randn(20, 3)
    onehot = np.eye(4)[np.r_[np.zeros(10, int), np.full(10, 2)]]
    W, b = logistic_readout(F, onehot, "multiclass", 1.0)
    pred = (F @ W.T + b).argmax(1)
    assert set(pred) <= {0, 2} and b[1] < b[0] and b[3] < b[2]
    W, b = logistic_readout(F, np.eye(3)[np.ones(20, int)], "multiclass", 1.0)
    assert np.all((F @ W.T + b).argmax(1) == 1)


def test_gcv_ridge_readout_picks_the_leave_one_out_best_penalty():
    # reference: leave-one-out refits, one per sequence and penalty, of a
    # ridge on the (linear) final LAES states with an unpenalized intercept
    from sklmn.pretraining._common import GCV_ALPHAS

    rng = np.random.RandomState(7)
    X = _ragged(rng, 30, 2)
    t = np.array([x[:, 0].sum() + 0.3 * rng.randn() for x in X])[:, None]
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, 4, 4), 1).double()
    init = LAESInitializer(alpha="gcv").initialize(
        net, fit_context(seqs, t, "continuous")
    )
    F = np.array([st[-1] for st in _naive_states(init.laes_, X)])
    scale = np.sum((F - F.mean(0)) ** 2) / F.shape[1]

    def ridge(F_, y_, a):
        f_mean, y_mean = F_.mean(0), y_.mean(0)
        Fc = F_ - f_mean
        W = np.linalg.solve(Fc.T @ Fc + a * np.eye(F_.shape[1]), Fc.T @ (y_ - y_mean))
        return W, y_mean - f_mean @ W

    loo = []
    for rel in GCV_ALPHAS:
        err = 0.0
        for i in range(len(F)):
            keep = np.arange(len(F)) != i
            W, b = ridge(F[keep], t[keep], rel * scale)
            err += float(((F[i] @ W + b - t[i]) ** 2).sum())
        loo.append(err)
    best = GCV_ALPHAS[int(np.argmin(loo))]
    assert init.readout_alpha_ == pytest.approx(best, rel=1e-9)
    # its leave-one-out R²: the refits' error against the mean's
    spread = float(((t - t.mean(0)) ** 2).sum())
    assert init.readout_loo_r2_ == pytest.approx(1 - min(loo) / spread, rel=1e-6)
    assert 0.0 < init.readout_loo_r2_ < 1.0
    W, b = ridge(F, t, best * scale)
    np.testing.assert_allclose(
        net.readout.weight.detach().numpy(), W.T, rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(
        net.readout.bias.detach().numpy(), b, rtol=1e-6, atol=1e-9
    )
    assert 0.0 < init.linear_score_ <= 1.0


def test_auto_pretraining_of_regressors_chooses_the_penalty_by_gcv():
    from sklmn.estimators import LMNRegressor

    rng = np.random.RandomState(8)
    X = rng.randn(40, 6, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg = LMNRegressor(
            hidden_size=4, memory_size=4, max_iter=2, random_state=0
        ).fit(X, X[:, :, 0].sum(1))
    assert reg.pretrainer_.alpha == "gcv"
    assert reg.pretrainer_.readout_alpha_ > 0
    with pytest.raises(ValueError, match="alpha"):
        LAESInitializer(alpha="loo").initialize(
            SequenceNet(LMN(1, 2, 2), 1), fit_context(check_sequences(X), X[:, 0])
        )


def _useless_start_data(n=60, seed=0):
    # a target the inputs do not predict linearly: the product of the first
    # two steps' features (zero mean, uncorrelated with every input)
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 8, 2)
    return X, X[:, 0, 0] * X[:, 1, 1]


@pytest.mark.parametrize("name", ["LMNRegressor", "MultiScaleLMNRegressor"])
def test_auto_regressors_discard_a_start_that_predicts_nothing(name):
    # the LAES start of such a target predicts held-out sequences no better
    # than their mean: 'auto' trains from the random initialization (the
    # same recurrent weights as pretrainer=None) with a readout that
    # predicts the training mean
    import sklmn.estimators as E

    X, y = _useless_start_data()
    params = dict(max_iter=1, learning_rate_init=1e-9, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        auto = getattr(E, name)(**params).fit(X, y)
        none = getattr(E, name)(pretrainer=None, **params).fit(X, y)
        explicit = getattr(E, name)(
            pretrainer=LAESInitializer(alpha="gcv", random_state=0), **params
        ).fit(X, y)
    assert auto.pretrainer_ is None
    # an explicit pretrainer is the user's choice: kept, although its
    # start predicts nothing
    assert explicit.pretrainer_ is not None
    assert explicit.pretrainer_.readout_loo_r2_ <= 0.0
    a = auto.net_.module_.recurrent.state_dict()
    b = none.net_.module_.recurrent.state_dict()
    for key in a:
        np.testing.assert_allclose(a[key].numpy(), b[key].numpy(), atol=1e-6)
    # the mean of the training part (the validation split holds some out)
    np.testing.assert_allclose(auto.predict(X), y.mean(), atol=0.15 * y.std())
    assert auto.predict(X).std() < 1e-3 * y.std()


def test_auto_regressors_keep_a_start_that_predicts():
    from sklmn.estimators import LMNRegressor

    X, _ = _useless_start_data()
    y = X[:, -1, 0] + 0.5 * X[:, -2, 1]  # linear in the recent inputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg = LMNRegressor(max_iter=1, learning_rate_init=1e-9, random_state=0)
        reg.fit(X, y)
    assert reg.pretrainer_ is not None
    assert reg.pretrainer_.readout_loo_r2_ > 0.5


@pytest.mark.parametrize("weights", [None, "sequence", "step"])
def test_mean_readout_of_a_discarded_start_ignores_padding(weights):
    # per-step targets: the mean over the valid steps only (weighted as the
    # loss weights them), whatever the padding holds
    import dataclasses

    from sklmn.estimators._start import _predict_the_mean_

    rng = np.random.RandomState(2)
    lengths = np.array([3, 5, 2, 4])
    y = rng.randn(4, 5, 2)
    mask = np.arange(5)[None, :] < lengths[:, None]
    y[~mask] = 1e6  # padding: must not count
    w = None
    if weights == "sequence":
        w = np.array([1.0, 2.0, 0.5, 3.0])
    elif weights == "step":
        w = np.where(mask, rng.uniform(0.5, 2.0, size=(4, 5)), 0.0)
    X = [rng.randn(n, 1) for n in lengths]
    context = dataclasses.replace(
        fit_context(check_sequences(X), y, "continuous", per_step=True),
        sample_weight=w,
    )
    readout = torch.nn.Linear(3, 2).double()
    _predict_the_mean_(readout, context)
    if w is None:
        row_w = np.ones(mask.sum())
    elif w.ndim == 1:
        row_w = np.repeat(w, lengths)
    else:
        row_w = w[mask]
    expected = np.average(y[mask], axis=0, weights=row_w)
    np.testing.assert_allclose(readout.bias.detach().numpy(), expected, rtol=1e-12)
    assert not readout.weight.detach().numpy().any()


def _subsampled_states(laes, X, period):
    """Naive LAES recursion over ``x[::period]``: per sequence, the states at
    every tick."""
    out = []
    for x in X:
        m, states = np.zeros(laes.A_.shape[0]), []
        for step in x[::period]:
            m = laes.A_ @ step + laes.B_ @ m
            states.append(m)
        out.append(np.array(states))
    return out


def _residual_start(min_length, max_length, memory_size, bidirectional=False):
    """Random walks of ragged lengths and a 3-module network initialized
    with ``modules='residual'``: ``(X, seqs, net, initializer)``."""
    from sklmn.nn import MultiScaleLMN

    rng = np.random.RandomState(3)
    X = [
        np.cumsum(rng.randn(rng.randint(min_length, max_length + 1), 1), axis=0)
        for _ in range(40)
    ]
    y = np.array([int(x[-1, 0] > 0) for x in X])
    seqs = check_sequences(X, dtype=np.float64)
    recurrent = MultiScaleLMN(
        1, 4 * memory_size, memory_size, 3, bidirectional=bidirectional
    )
    net = SequenceNet(recurrent, 2).double()
    init = LAESInitializer(center=False, modules="residual", random_state=0)
    init.initialize(net, fit_context(seqs, y))
    return X, seqs, net, init


def _explicit_residual(X, modules, k):
    """Reference for module ``k`` (period ``2**k``): Ξ_k built explicitly,
    the faster modules' states by a naive loop, the SVD of Ξ_k minus its
    least-squares fit on them. Returns ``(Ξ_k, singular values, Vᵀ)``."""
    from sklmn.laes import build_xi

    period = 2**k
    sub = [x[::period] for x in X]
    data = np.zeros((len(sub), max(len(s) for s in sub), 1))
    for i, s in enumerate(sub):
        data[i, : len(s)] = s
    xi = build_xi(data, np.array([len(s) for s in sub]))
    # the faster modules' states at this module's ticks t = j * period:
    # module i's state after its last update, tick t // 2**i
    M = np.vstack(
        [
            np.hstack(
                [
                    _subsampled_states(modules[i], [x], 2**i)[0][
                        np.arange(len(s)) * period // 2**i
                    ]
                    for i in range(k)
                ]
            )
            for x, s in zip(X, sub, strict=True)
        ]
    )
    coef = np.linalg.lstsq(M, xi, rcond=None)[0]
    _, sv, Vt = np.linalg.svd(xi - M @ coef, full_matrices=False)
    return xi, sv, Vt


@pytest.mark.parametrize("bidirectional", [False, True])
def test_residual_multiscale_modules_match_an_explicit_construction(bidirectional):
    # modules='residual': module k's components are the leading right
    # singular vectors of its Ξ_k (built explicitly) minus the least-squares
    # fit of its rows on the faster modules' LAES states at the same steps.
    # Module k's Ξ_k has at most 36 / 2**k columns: with 8 components the
    # randomized SVD (8 + 10 columns) is exact from module 1 on
    X, seqs, net, init = _residual_start(20, 36, 8, bidirectional)
    modules = init.laes_layers_[0]
    assert len(init.laes_layers_) == (2 if bidirectional else 1)
    # module 0 is the independent LAES of the inputs
    first = LAESTransformer(modules[0].n_components_, center=False).fit(X)
    np.testing.assert_allclose(
        np.abs(modules[0].components_), np.abs(first.components_), atol=1e-8
    )
    for k in (1, 2):
        _, sv, Vt = _explicit_residual(X, modules, k)
        p = modules[k].n_components_
        assert sv[p - 1] > 1e-6 * sv[0]  # a well-defined subspace
        np.testing.assert_allclose(
            np.abs(modules[k].components_), np.abs(Vt[:p]), atol=1e-6
        )
        np.testing.assert_allclose(modules[k].singular_values_, sv[:p], rtol=1e-6)
        # the module's A_k, B_k come from its components as for any LAES
        comps = modules[k].components_
        np.testing.assert_allclose(modules[k].A_, comps[:, :1])
        np.testing.assert_allclose(modules[k].B_, comps[:, 1:] @ comps[:, :-1].T)
    assert np.isfinite(_outputs(net, seqs)).all()


def test_multiscale_auto_start_is_residual():
    from sklmn.estimators import MultiScaleLMNClassifier

    rng = np.random.RandomState(0)
    X = rng.randn(30, 8, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MultiScaleLMNClassifier(max_iter=1, random_state=0).fit(X, y)
        equal = MultiScaleLMNClassifier(
            memory_size=12, max_iter=1, random_state=0
        ).fit(X, y)
        lmn = LMNClassifier(max_iter=1, random_state=0).fit(X, y)
    # a leading module (the default below 100 sequences) takes the LMN's C
    assert clf.memory_size_ == (32, 12, 12, 12)
    assert clf.pretrainer_.modules == "residual" and clf.pretrainer_.C == 1.0
    assert equal.pretrainer_.modules == "residual" and equal.pretrainer_.C == 3.0
    assert lmn.pretrainer_.modules == "independent" and lmn.pretrainer_.C == 1.0


def test_residual_module_drops_directions_the_faster_modules_encode():
    # short univariate series: module 2 (period 4, 3 lags at most) has fewer
    # directions left than its 3 components once modules 0 and 1 (4 states
    # each) are removed; the rest is dropped with a note, and what is kept is
    # the residual's span
    X, seqs, net, init = _residual_start(6, 12, 4)
    modules = init.laes_layers_[0]
    xi, sv, Vt = _explicit_residual(X, modules, 2)
    rank = int(np.sum(sv > 1e-9 * np.linalg.norm(xi)))
    assert 1 <= rank < 3
    assert modules[2].n_components_ == rank
    assert (
        f"module 2: n_components reduced from 3 to {rank}: the faster modules "
        "already encode the rest of its history"
    ) in init.notes_
    np.testing.assert_allclose(
        np.abs(modules[2].components_), np.abs(Vt[:rank]), atol=1e-6
    )
    assert init.n_components_ == 4 + 4 + rank
    assert np.isfinite(_outputs(net, seqs)).all()


def test_multiscale_notes_a_request_above_the_memory_size():
    # the memory size bounded every module's components without a note
    from sklmn.nn import MultiScaleLMN

    rng = np.random.RandomState(0)
    X = rng.randn(20, 8, 2)
    seqs = check_sequences(X, dtype=np.float32)
    net = SequenceNet(MultiScaleLMN(2, 6, 3, 2), 1)
    init = LAESInitializer(n_components=5, random_state=0)
    init.initialize(net, fit_context(seqs, X[:, 0, :1], problem="continuous"))
    assert [laes.n_components_ for laes in init.laes_layers_[0]] == [3, 3]
    assert init.notes_ == [
        f"module {k}: n_components reduced from 5 to 3: the module has "
        "memory_size=3"
        for k in range(2)
    ]
