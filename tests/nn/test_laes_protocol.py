"""The modules' LAES protocol: the modules map LAES matrices to their weights."""

import numpy as np
import pytest
import torch

from sklmn.nn import LMN, ElmanRNN, MultiScaleLMN, TapeReadout, UnrolledRNN

DTYPE = torch.float64


def _laes(p, d, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((p, d)), 0.3 * rng.standard_normal((p, p))


def test_lmn_partial_first_units_follow_the_laes():
    """p < memory_size: the first p memory units are the LAES recursion in
    the linear limit (small input scale), whatever the other units do."""
    A, B = _laes(3, 2)
    mu = np.array([0.5, -1.0])
    s = 1e-4
    lmn = LMN(2, 5, 6, num_layers=2, bidirectional=True).to(DTYPE)
    lmn.init_from_laes_(A, B, mu, layer=0, direction=1, input_scale=s, partial=True)
    layer = lmn.layers_reverse[0]
    x = torch.randn(2, 7, 2, dtype=DTYPE)
    out, _ = layer(x)
    m = np.zeros(3)
    for t in range(7):
        m = A @ (x[0, t].numpy() - mu) + B @ m
        np.testing.assert_allclose(out[0, t, :3].detach(), m, rtol=1e-3, atol=1e-6)
    # the other memory units do not feed the LAES units
    np.testing.assert_array_equal(layer.weight_mm.detach()[:3, 3:], 0.0)
    np.testing.assert_array_equal(layer.weight_mh.detach()[3:, :3], 0.0)
    radius = np.abs(
        np.linalg.eigvals(
            (layer.weight_mm + layer.weight_hm @ layer.weight_mh).detach()[3:, 3:]
        )
    ).max()
    assert radius <= layer.init_radius + 1e-9


def test_lmn_factors_the_input_below_p_hidden_units():
    A, B = _laes(4, 3, seed=1)
    lmn = LMN(3, 2, 4).to(DTYPE)
    with pytest.raises(ValueError, match="hidden_size == memory_size"):
        lmn.init_from_laes_(A, B)
    assert [b for b, _ in lmn.laes_capacity(3)] == [4, 2]
    lmn.init_from_laes_(A[:2], B[:2, :2], partial=True)
    layer = lmn.layers[0]
    # W_hm W_xh of the LAES units is A (s = 1): the factored input
    np.testing.assert_allclose(
        (layer.weight_hm[:2] @ layer.weight_xh).detach(), A[:2], atol=1e-12
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"layer": 2}, "layer must be an int in 0..1"),
        ({"layer": 0, "direction": 1}, "direction must be an int in 0..0"),
        ({"layer": 0, "input_scale": 0.0}, "input_scale must be a finite"),
    ],
)
def test_lmn_init_errors_name_the_problem(kwargs, match):
    A, B = _laes(2, 2)
    with pytest.raises(ValueError, match=match):
        LMN(2, 3, 3, num_layers=2).init_from_laes_(A, B, partial=True, **kwargs)
    with pytest.raises(ValueError, match="between 1 and memory_size=3"):
        LMN(2, 3, 3).init_from_laes_(*_laes(4, 2), partial=True)


def test_check_laes_init_names_the_caller():
    LMN(2, 3, 3, output="hidden").check_laes_init("mine")  # LMN-h: accepted
    with pytest.raises(ValueError, match="^mine supports output='hidden' with"):
        LMN(2, 3, 3, output="hidden", memory_matrix="schur").check_laes_init("mine")
    with pytest.raises(ValueError, match="^mine cannot set an orthogonal"):
        LMN(2, 3, 3, memory_matrix="orthogonal").check_laes_init("mine")
    with pytest.raises(ValueError, match="^mine needs a multi-scale LMN"):
        MultiScaleLMN(2, 3, 2, 2, output="hidden").check_laes_init("mine")
    with pytest.raises(ValueError, match="^mine needs an Elman RNN"):
        ElmanRNN(2, 3, nonlinearity="relu").check_laes_init("mine")


def test_elman_partial_layer_and_scale():
    A, B = _laes(2, 6, seed=2)
    rnn = ElmanRNN(2, 3, num_layers=2, bidirectional=True).to(DTYPE)
    rnn.init_from_laes_(A, B, layer=1, direction=1, input_scale=0.5, partial=True)
    np.testing.assert_allclose(rnn.rnn.weight_ih_l1_reverse.detach()[:2], 0.5 * A)
    np.testing.assert_allclose(rnn.rnn.weight_hh_l1_reverse.detach()[:2, :2], B)
    np.testing.assert_array_equal(rnn.rnn.weight_hh_l1_reverse.detach()[:2, 2:], 0)
    assert rnn.laes_output_scale(0.5) == 0.5
    with pytest.raises(ValueError, match="between 1 and hidden_size=3"):
        rnn.init_from_laes_(*_laes(4, 6), layer=1, partial=True)
    # layer_outputs: the second layer's input
    x = torch.randn(4, 5, 2, dtype=DTYPE)
    out = rnn.layer_outputs(0, x, None)
    assert out.shape == (4, 5, 6)


def test_multiscale_module_blocks():
    net = MultiScaleLMN(2, 8, 3, 2).to(DTYPE)
    A = [_laes(2, 2, seed=k)[0] for k in range(2)]
    B = [_laes(2, 2, seed=k)[1] for k in range(2)]
    net.init_from_laes_(A, B, np.zeros(2), input_scale=0.5)
    W_mm = net.weight_mm.detach().numpy()
    np.testing.assert_allclose(W_mm[3:5, 3:5], B[1])
    np.testing.assert_array_equal(W_mm[:3, 3:], 0)
    with pytest.raises(ValueError, match="one matrix per module"):
        net.init_from_laes_(A[:1], B[:1])
    with pytest.raises(ValueError, match="input_projection must have shape"):
        net.init_from_laes_(A, B, input_projection=np.eye(3))
    with pytest.raises(ValueError, match="direction=1 needs a bidirectional"):
        net.init_from_laes_(A, B, direction=1)
    net.init_module_from_laes_(1, np.ones((1, 8)), np.eye(1))
    expected = [[1.0] * 8, [0.0] * 8, [0.0] * 8]
    np.testing.assert_array_equal(net.weight_hm.detach()[3:6], expected)


def test_lmn_init_from_unrolled_keeps_free_memory():
    torch.manual_seed(0)
    urnn, readout = UnrolledRNN(2, 3, tape_length=2), TapeReadout(3, 1, 2)
    lmn = LMN(2, 3, 6)
    W_hm0 = lmn.layers[0].weight_hm.detach().clone()
    A, B = torch.randn(4, 3), 0.5 * torch.eye(4)
    W_mo, _ = lmn.init_from_unrolled_(urnn, readout, A, B)
    layer = lmn.layers[0]
    torch.testing.assert_close(layer.weight_hm.detach()[:4], A)
    torch.testing.assert_close(layer.weight_hm.detach()[4:], W_hm0[4:])
    assert bool((W_mo[:, 4:] == 0).all())
    assert bool((layer.weight_mh.detach()[:, 4:] == 0).all())
    with pytest.raises(ValueError, match="single-layer unidirectional"):
        LMN(2, 3, 6, num_layers=2).init_from_unrolled_(urnn, readout, A, B)


@pytest.mark.parametrize("memory_matrix", ["free", "spectral", "schur"])
def test_laes_units_of_a_layer_with_memory_bias_hold_the_laes(memory_matrix):
    # A 'schur' memory turns its coordinates when W_mm is set: the memory
    # bias of the LAES units was zeroed afterwards, in the turned
    # coordinates, so a nonzero bias stayed on them (and was removed from
    # other units).
    dt = torch.float64
    torch.manual_seed(0)
    lmn = LMN(2, 4, 5, memory_matrix=memory_matrix, memory_bias=True).double()
    with torch.no_grad():
        lmn.layers[0].bias_m.fill_(1.0)
    A, B, s = torch.randn(2, 2, dtype=dt), 0.5 * torch.eye(2, dtype=dt), 0.5
    lmn.init_from_laes_(A, B, partial=True, input_scale=s)
    x = torch.randn(1, 6, 2, dtype=dt)
    out, _ = lmn(x)
    basis = lmn.output_basis()
    out = out[0] if basis is None else out[0] @ basis.T  # the LAES coordinates
    m = torch.zeros(2, dtype=dt)
    for t in range(6):
        m = torch.tanh(s * A @ x[0, t]) / s + B @ m
        torch.testing.assert_close(out[t, :2], m, rtol=1e-10, atol=1e-12)
