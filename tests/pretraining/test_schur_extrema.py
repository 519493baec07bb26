"""The block of extrema with a memory held in real Schur form.

``set_memory_`` turns a Schur memory's coordinates (``m = P m'``); the
maxima and minima of the units are not linear, so the readout reads them
in the start's coordinates (``SequenceNet.extrema_basis``). A LAES start
then computes the same function whichever parametrization holds the memory.
"""

import numpy as np
import pytest
import torch

from sklmn._training import SequenceNet
from sklmn._training._module import extrema_valid
from sklmn.laes import LAESTransformer
from sklmn.nn import LMN, MultiScaleLMN
from sklmn.pretraining import LAESInitializer
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


def _data(problem, seed=0, n=30, d=2):
    rng = np.random.RandomState(seed)
    X = [rng.randn(rng.randint(6, 12), d) for _ in range(n)]
    if problem == "continuous":
        y = np.array([x[:, 0].max() - x[:, 1].min() for x in X])[:, None]
    else:
        y = np.array([int(x[:, 0].max() > 1.2) + int(x[:, 1].min() < -1.2) for x in X])
    return X, y


def _network(kind, memory_matrix, bidirectional, n_outputs):
    if kind == "lmn":
        rec = LMN(
            2, 8, 6, memory_matrix=memory_matrix, bidirectional=bidirectional
        )
    else:
        rec = MultiScaleLMN(
            2,
            8,
            3,
            n_modules=2,
            memory_matrix=memory_matrix,
            bidirectional=bidirectional,
        )
    torch.manual_seed(0)
    return SequenceNet(rec, n_outputs, pooling="last+mean+max").double()


def _start(kind, memory_matrix, bidirectional, problem):
    X, y = _data(problem)
    seqs = check_sequences(X, dtype=np.float64)
    n_outputs = 1 if problem == "continuous" else 3
    net = _network(kind, memory_matrix, bidirectional, n_outputs)
    init = LAESInitializer(random_state=0)
    init.initialize(net, fit_context(seqs, y, problem))
    Xt, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        output = net.recurrent(Xt, lengths)[0]
        return net, net(Xt, lengths).numpy(), output, lengths


@pytest.mark.parametrize("kind", ["lmn", "multiscale"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("problem", ["continuous", "multiclass"])
def test_schur_start_computes_the_free_start(kind, bidirectional, problem):
    free, out_free, states_free, lengths = _start(kind, "free", bidirectional, problem)
    schur, out_schur, states_schur, _ = _start(kind, "schur", bidirectional, problem)
    assert free.extrema_basis() is None
    basis = schur.extrema_basis()
    assert basis is not None
    width = states_free.shape[2]
    # the memory states turned back by the basis are the free network's
    np.testing.assert_allclose(
        (states_schur @ basis.T).numpy(), states_free.numpy(), rtol=0, atol=1e-9
    )
    # the block of extrema, a loop over the valid steps of the free states
    with torch.no_grad():
        features = schur.features(states_schur, lengths).numpy()
    for i, n in enumerate(lengths.tolist()):
        ref = np.r_[
            states_free[i, :n].numpy().max(0), states_free[i, :n].numpy().min(0)
        ]
        np.testing.assert_allclose(
            features[i, 2 * width :],
            float(schur.extrema_scale) * ref,
            rtol=1e-9,
            atol=1e-12,
        )
    assert float(schur.extrema_scale) == pytest.approx(
        float(free.extrema_scale), rel=1e-9
    )
    # ridge readouts are exact in float64; the logistic one is a solver's
    # optimum on the same features
    rtol = 1e-8 if problem == "continuous" else 1e-4
    scale = np.abs(out_free).max()
    np.testing.assert_allclose(out_schur, out_free, rtol=0, atol=rtol * scale)


def test_ridge_start_with_extrema_is_the_fitted_readout():
    """The LMN's ridge readout (fitted on the linear LAES states) is what the
    Schur network computes: ridge of the targets on [last, mean, extrema]."""
    X, y = _data("continuous", seed=1)
    seqs = check_sequences(X, dtype=np.float64)
    net = _network("lmn", "schur", False, 1)
    init = LAESInitializer(random_state=0, input_scale=1e-4, alpha=1e-8)
    init.initialize(net, fit_context(seqs, y, "continuous"))
    p = init.n_components_
    laes = LAESTransformer(p, center=True).fit(X)
    states = []
    for x in X:  # m_t = A (x_t - mu) + B m_{t-1}, one step at a time
        m, seq = np.zeros(p), []
        for x_t in x:
            m = laes.A_ @ (x_t - laes.mean_) + laes.B_ @ m
            seq.append(m)
        states.append(np.array(seq))
    last = np.array([s[-1] for s in states])
    mean = np.array([s.mean(0) for s in states])
    ext = np.array([np.r_[s.max(0), s.min(0)] for s in states])
    F = np.c_[last, mean, ext, np.ones(len(X))]
    coef = np.linalg.lstsq(F, y, rcond=None)[0]
    Xt, lengths = torch.from_numpy(seqs.data), torch.from_numpy(seqs.lengths)
    with torch.no_grad():
        out = net(Xt, lengths).numpy()
    np.testing.assert_allclose(out, F @ coef, rtol=0, atol=1e-5 * np.abs(y).max())


def test_networks_saved_before_the_turn_read_their_own_coordinates():
    layer_net = _network("lmn", "schur", False, 2)
    layer = layer_net.recurrent.layers[0]
    rng = np.random.RandomState(0)
    W = rng.randn(6, 6)
    layer.set_memory_(0.9 * W / np.abs(np.linalg.eigvals(W)).max())
    old = {k: v for k, v in layer_net.state_dict().items() if k != "extrema_turn"}
    net = _network("lmn", "schur", False, 2)
    net.match_saved_layout_(old)
    net.load_state_dict(old)
    assert net.extrema_basis() is None
    assert layer_net.extrema_basis() is not None
    X = torch.from_numpy(rng.randn(4, 7, 2))
    lengths = torch.tensor([7, 5, 3, 6])
    with torch.no_grad():
        output = net.recurrent(X, lengths)[0]
        features = net.features(output, lengths)
    np.testing.assert_allclose(
        features[:, 12:].numpy(),
        float(net.extrema_scale) * extrema_valid(output, lengths).numpy(),
        rtol=1e-12,
    )
    # a network saved with the turn keeps it
    fresh = _network("lmn", "schur", False, 2)
    state = layer_net.state_dict()
    fresh.match_saved_layout_(state)
    fresh.load_state_dict(state)
    assert fresh.extrema_basis() is not None


def test_output_basis_only_for_a_schur_memory_output():
    assert LMN(2, 3, 4, memory_matrix="schur", output="hidden").output_basis() is None
    assert LMN(2, 3, 4, memory_matrix="spectral").output_basis() is None
    assert MultiScaleLMN(2, 3, 2, n_modules=2).output_basis() is None
    bi = LMN(2, 3, 4, memory_matrix="schur", bidirectional=True, num_layers=2)
    basis = bi.output_basis()
    assert basis.shape == (8, 8)
    torch.testing.assert_close(basis, torch.eye(8), rtol=0, atol=0)
