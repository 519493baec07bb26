"""The pretrainers on LMNs whose readout reads the hidden state
(``output='hidden'``, LMN-h of Carta, Sperduti & Bacciu 2021 §3.1)."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from sklmn._training import SequenceNet
from sklmn.estimators import LMNClassifier, LMNRegressor, MultiScaleLMNClassifier
from sklmn.laes import LAESTransformer
from sklmn.nn import LMN, LMNLayer
from sklmn.persistence import load, save
from sklmn.pretraining import LAESInitializer, UnrolledPretrainer
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


def _ragged(rng, n, d, low=3, high=8):
    return [rng.randn(rng.randint(low, high), d) for _ in range(n)]


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


def _linear_outputs(final_states, y, n_classes):
    F = np.c_[final_states, np.ones(len(final_states))]
    W = np.linalg.lstsq(F, np.eye(n_classes)[y], rcond=None)[0]
    return F @ W


@pytest.mark.parametrize(
    "hidden, memory, p, factored",
    [
        (10, 4, 4, False),  # p input units + p exposed units fit
        (6, 8, 4, True),  # p + min(p, 2 features) <= 6: p = 4, A factored
    ],
)
def test_laes_hidden_output_is_the_linear_model_in_the_linear_limit(
    hidden, memory, p, factored
):
    rng = np.random.RandomState(0)
    X = _ragged(rng, 40, 2)
    y = rng.randint(0, 3, 40)
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, hidden, memory, output="hidden"), 3).double()
    init = LAESInitializer(input_scale=1e-4, alpha=0.0)
    init.initialize(net, fit_context(seqs, y))
    assert init.n_components_ == p
    if p < memory:
        assert "output='hidden'" in init.notes_[0]
    assert any("factored" in note for note in init.notes_) == factored
    laes = LAESTransformer(p, center=True).fit(X)
    ref = _naive_states(laes, X)
    lengths = torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        hidden_seq = net.recurrent(torch.from_numpy(seqs.data), lengths)[0].numpy()
        outputs = net(torch.from_numpy(seqs.data), lengths).numpy()
    # the exposed units hold tanh(c m_{t-1}) of the LAES memory
    exposed = net.recurrent.laes_exposed_units(p, 2)
    c = net.recurrent.layers[0].weight_mh.detach().numpy()[exposed.start, 0]
    assert c > 0
    for i, st in enumerate(ref):
        previous = np.vstack([np.zeros((1, p)), st[:-1]])
        np.testing.assert_allclose(
            hidden_seq[i, : len(st), exposed], np.tanh(c * previous), atol=1e-9
        )
    # the readout of the hidden units computes the ridge readout of m_t
    final = np.array([st[-1] for st in ref])
    np.testing.assert_allclose(
        outputs, _linear_outputs(final, y, 3), rtol=1e-4, atol=1e-4
    )


def test_laes_hidden_output_bidirectional_matches_the_memory_output():
    rng = np.random.RandomState(1)
    X = _ragged(rng, 30, 2)
    y = rng.randint(0, 2, 30)
    seqs = check_sequences(X, dtype=np.float64)
    lengths = torch.from_numpy(seqs.lengths)
    outs = {}
    for output in ("memory", "hidden"):
        torch.manual_seed(0)
        net = SequenceNet(LMN(2, 8, 4, bidirectional=True, output=output), 2)
        net = net.double()
        LAESInitializer(input_scale=1e-4, alpha=0.0).initialize(
            net, fit_context(seqs, y)
        )
        with torch.no_grad():
            outs[output] = net(torch.from_numpy(seqs.data), lengths).numpy()
    np.testing.assert_allclose(outs["hidden"], outs["memory"], rtol=1e-4, atol=1e-4)


def test_laes_hidden_output_logistic_readout_reads_the_hidden_states():
    rng = np.random.RandomState(2)
    X = rng.randn(60, 6, 2)
    y = (X[:, 0, 0] + X[:, 3, 1] > 0).astype(int)
    seqs = check_sequences(X, dtype=np.float64)
    net = SequenceNet(LMN(2, 12, 6, output="hidden"), 2).double()
    init = LAESInitializer(readout="logistic", C=1.0)
    init.initialize(net, fit_context(seqs, y))
    with torch.no_grad():
        h = net.recurrent(torch.from_numpy(seqs.data))[0].numpy()[:, -1]
        logits = net(torch.from_numpy(seqs.data)).numpy()
    ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit(h, y)
    np.testing.assert_allclose(
        logits[:, 1] - logits[:, 0], ref.decision_function(h), rtol=1e-3, atol=1e-3
    )


def test_unrolled_pretrainer_hidden_output_holds_the_urnn_hidden_state():
    # exact LAES (p = rank of the hidden sequences): the LMN's hidden units
    # are the URNN's; the readout is fitted on them
    rng = np.random.RandomState(3)
    X = [rng.randn(n, 2) for n in (4, 3, 4)]
    seqs = check_sequences(X, dtype=np.float64)
    y = rng.randn(3, 1)
    net = SequenceNet(LMN(2, 2, 16, output="hidden"), 1).double()
    pre = UnrolledPretrainer(2, max_iter=2, random_state=0)
    pre.initialize(net, fit_context(seqs, y, "continuous"))
    Xt, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        h_lmn = net.recurrent(Xt, lengths)[0].numpy()
        h_urnn = pre.urnn_net_.urnn(Xt, lengths=lengths)[0].numpy()
        out = net(Xt, lengths).numpy()
    np.testing.assert_allclose(h_lmn[seqs.mask], h_urnn[seqs.mask], atol=1e-9)
    # least squares (ridge 1e-6) of the 3 targets on the final hidden states
    final = h_lmn[np.arange(3), seqs.lengths - 1]
    F = np.c_[final, np.ones(3)]
    W = np.linalg.lstsq(F, y, rcond=None)[0]
    np.testing.assert_allclose(out, F @ W, atol=1e-4)


@pytest.mark.parametrize("pretrainer", ["laes", "unrolled"])
def test_estimators_pretrain_an_lmn_h(pretrainer):
    # 4 steps of 1 feature: 4 memory units hold the whole history
    rng = np.random.RandomState(4)
    X = rng.randn(80, 4, 1)
    y = (X[:, 0, 0] > 0).astype(int)
    pre = (
        LAESInitializer(readout="logistic")
        if pretrainer == "laes"
        else UnrolledPretrainer(tape_length=3, max_iter=30, random_state=0)
    )
    clf = LMNClassifier(
        hidden_size=8,
        memory_size=4,
        output="hidden",
        max_iter=1,
        learning_rate_init=1e-6,
        pretrainer=pre,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    # the start reads the first step (held in the memory), a chance start
    # does not
    assert clf.score(X, y) > 0.9


def test_auto_pretraining_of_an_lmn_h_regressor():
    rng = np.random.RandomState(5)
    X = rng.randn(60, 6, 1)
    y = X[:, 0, 0] + 0.5 * X[:, 2, 0]
    reg = LMNRegressor(
        hidden_size=12, memory_size=6, output="hidden", max_iter=1, random_state=0,
        memory_matrix="free",  # 'auto' gives no start with the Schur memory
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(X, y)
    assert isinstance(reg.pretrainer_, LAESInitializer)
    assert np.isfinite(reg.score(X, y))


def test_hidden_output_errors_name_the_problem():
    A, B = np.ones((4, 2)), 0.5 * np.eye(4)
    with pytest.raises(ValueError, match=r"hidden_size >= p \+ min\(p, input_size\)"):
        LMNLayer(2, 5, 4, output="hidden").init_from_laes_(A, B, partial=True)
    with pytest.raises(ValueError, match="memory_scale must be a finite"):
        LMNLayer(2, 8, 4, output="hidden").init_from_laes_(
            A, B, partial=True, memory_scale=0.0
        )
    with pytest.raises(ValueError, match="^LAESInitializer supports output='hidden'"):
        LMN(2, 8, 4, output="hidden", memory_matrix="schur").check_laes_init(
            "LAESInitializer"
        )


def test_auto_gives_no_start_to_a_hidden_output_schur_regressor():
    # the regressors' default memory is 'schur', which the hidden-output LAES
    # start does not support: 'auto' trains from the random start instead
    rng = np.random.RandomState(5)
    X = rng.randn(30, 6, 1)
    reg = LMNRegressor(hidden_size=12, memory_size=6, output="hidden", max_iter=1,
                       random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(X, X[:, 0, 0])
    assert reg.memory_matrix == "schur" and reg.pretrainer_ is None
    assert np.isfinite(reg.score(X, X[:, 0, 0]))


@pytest.mark.parametrize("memory_matrix", ["auto", "free"])
def test_auto_gives_no_start_to_a_hidden_output_multiscale_lmn(memory_matrix, tmp_path):
    # the multi-scale LAES start reads the memory modules only: with
    # output='hidden', 'auto' raised "LAESInitializer needs a multi-scale LMN
    # with output='memory'" in fit (the classifiers' defaults, and the
    # regressors' with a free memory); it trains from the random start
    rng = np.random.RandomState(5)
    X = rng.randn(30, 6, 2)
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int)
    clf = MultiScaleLMNClassifier(
        hidden_size=8, memory_size=2, n_modules=2, output="hidden",
        memory_matrix=memory_matrix, max_iter=1, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    assert clf.pretrainer_ is None and clf.fine_tuning_ == "full"
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-6)
    save(clf, tmp_path / "m.sklmn")
    np.testing.assert_allclose(
        load(tmp_path / "m.sklmn").predict_proba(X), proba, rtol=0, atol=1e-6
    )
    # an explicit LAESInitializer still says why it cannot start it
    clf.set_params(pretrainer=LAESInitializer())
    with pytest.raises(ValueError, match="output='memory'"):
        clf.fit(X, y)
