"""The memory without feedback (``feedback=False`` / ``feedback='none'``):
``W_mh`` is a zero buffer that no step moves, so the linearized memory map
``W_mm + W_hm D W_mh`` is ``W_mm`` for every ``D`` and stays below one with a
Schur memory (docs/memory.md, "The default fits without feedback")."""

import numpy as np
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError

from sklmn.benchmarks._timeseries.probes import map_radii
from sklmn.estimators import (
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.nn import (
    LMN,
    LMNLayer,
    MultiScaleLMN,
    TapeReadout,
    UnrolledRNN,
    init_lmn_from_unrolled_,
)
from sklmn.persistence import load, save
from sklmn.pretraining import (
    IncrementalTraining,
    LAESInitializer,
    UnrolledPretrainer,
)
from tests._helpers import _adam_on_random_targets


def _modules(dtype):
    """Every module type without feedback, in ``dtype``."""
    return [
        LMN(3, 6, 5, num_layers=2, bidirectional=True, memory_matrix="schur",
            feedback=False).to(dtype),
        MultiScaleLMN(3, 6, 3, 3, memory_matrix="schur", bidirectional=True,
                      feedback=False).to(dtype),
    ]


def _map_radius(W_mm, W_hm, W_mh, d):
    """Radius of ``W_mm + W_hm diag(d) W_mh`` by a general eigensolver, in
    float64, on the module's dense matrices."""
    A, F, G = (w.detach().double().cpu().numpy() for w in (W_mm, W_hm, W_mh))
    return float(np.abs(np.linalg.eigvals(A + (F * d) @ G)).max())


def _maps(module):
    if isinstance(module, LMN):
        return [(l.weight_mm, l.weight_hm, l.weight_mh) for l in module._all_layers()]
    nets = [module] + ([module.reverse] if module.reverse is not None else [])
    return [(n.masked_weight_mm(), n.weight_hm, n.weight_mh) for n in nets]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_map_below_one_for_every_d_after_200_adam_steps(one_thread, dtype):
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    for net in _modules(dtype):

        def check(net=net):
            for W_mm, W_hm, W_mh in _maps(net):
                assert W_mm.dtype == dtype
                assert float(W_mh.abs().max()) == 0.0
                H = W_mh.shape[0]
                for d in [np.ones(H)] + [rng.uniform(size=H) for _ in range(4)]:
                    assert _map_radius(W_mm, W_hm, W_mh, d) < 1

        _adam_on_random_targets(net, dtype, check)


def test_feedback_is_a_zero_buffer_in_the_state_dict():
    layer = LMNLayer(2, 4, 3, memory_matrix="schur", feedback=False)
    names = [name for name, _ in layer.named_parameters()]
    assert "weight_mh" not in names
    assert "weight_mh" in layer.state_dict()
    assert float(layer.weight_mh.abs().sum()) == 0.0
    assert "feedback=False" in repr(layer)
    # the same random stream for the other weights as with feedback
    torch.manual_seed(3)
    with_fb = LMNLayer(2, 4, 3, memory_matrix="schur")
    torch.manual_seed(3)
    without = LMNLayer(2, 4, 3, memory_matrix="schur", feedback=False)
    assert torch.allclose(with_fb.weight_xh, without.weight_xh, rtol=0, atol=0)
    # a state dict round trip keeps it a zero buffer
    copy = LMNLayer(2, 4, 3, memory_matrix="schur", feedback=False)
    copy.load_state_dict(without.state_dict())
    assert float(copy.weight_mh.abs().sum()) == 0.0
    with pytest.raises(ValueError, match="feedback must be"):
        LMNLayer(2, 4, 3, feedback="no")


def test_hidden_output_without_feedback_is_refused():
    for make in (
        lambda: LMNLayer(2, 4, 3, output="hidden", feedback=False),
        lambda: LMN(2, 4, 3, output="hidden", feedback=False),
        lambda: MultiScaleLMN(2, 4, 3, 2, output="hidden", feedback=False),
    ):
        with pytest.raises(ValueError, match="never read the memory"):
            make()
    X, y = _regression_data()
    with pytest.raises(ValueError, match="feedback='none'"):
        LMNRegressor(output="hidden", feedback="none", max_iter=1).fit(X, y)


@pytest.mark.parametrize("matrix", ["free", "schur"])
def test_multiscale_growth_keeps_no_feedback(matrix):
    net = MultiScaleLMN(2, 4, 3, 1, memory_matrix=matrix, feedback=False)
    net.grow_(2)
    assert net.weight_mh.shape == (4, 9)
    assert "weight_mh" not in dict(net.named_parameters())
    assert float(net.weight_mh.abs().sum()) == 0.0
    out, _ = net(torch.randn(2, 6, 2))
    assert torch.isfinite(out).all()


def test_forward_equals_a_layer_whose_feedback_is_zeroed():
    torch.manual_seed(0)
    ref = LMN(3, 5, 4, memory_matrix="schur")
    net = LMN(3, 5, 4, memory_matrix="schur", feedback=False)
    state = {k: v for k, v in ref.state_dict().items()}
    with torch.no_grad():
        ref.layers[0].weight_mh.zero_()
    state["layers.0.weight_mh"] = torch.zeros(5, 4)
    net.load_state_dict(state)
    x = torch.randn(3, 9, 3)
    lengths = torch.tensor([9, 4, 1])
    torch.testing.assert_close(
        net(x, lengths=lengths)[0], ref(x, lengths=lengths)[0], rtol=1e-6, atol=1e-6
    )


def test_unrolled_transfer_refuses_a_layer_without_feedback():
    urnn, readout = UnrolledRNN(2, 3, tape_length=2), TapeReadout(3, 1, 2)
    lmn = LMN(2, hidden_size=3, memory_size=4, feedback=False)
    with pytest.raises(ValueError, match="feedback=False"):
        init_lmn_from_unrolled_(
            lmn, urnn, readout, torch.randn(4, 3), 0.5 * torch.eye(4)
        )


# --------------------------------------------------------------------------- #
# The estimators' 'auto'
# --------------------------------------------------------------------------- #
def _regression_data():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 12, 2)
    return X, X[:, :, 0].sum(axis=1)


@pytest.mark.parametrize(
    "est, expected",
    [
        (LMNRegressor(), "none"),
        (MultiScaleLMNRegressor(), "none"),
        (LMNRegressor(pretrainer=None), "none"),
        (LMNRegressor(pretrainer=LAESInitializer()), "none"),
        (LMNRegressor(memory_matrix="free"), "free"),
        (LMNRegressor(pretrainer=UnrolledPretrainer(max_iter=2)), "free"),
        (LMNRegressor(feedback="free"), "free"),
        (LMNClassifier(), "none"),
        (LMNClassifier(fine_tuning="full"), "free"),
        (LMNClassifier(pretrainer=None), "free"),
        (MultiScaleLMNClassifier(), "none"),
        (MultiScaleLMNClassifier(fine_tuning="residual"), "free"),
        (MultiScaleLMNClassifier(feedback="none"), "none"),
        (LMNRegressor(output="hidden"), "free"),
        (LMNClassifier(fine_tuning="smooth", output="hidden"), "free"),
        (MultiScaleLMNRegressor(incremental=IncrementalTraining(), n_modules=2),
         "none"),
    ],
)
def test_auto_feedback_resolution(est, expected):
    X, y = _regression_data()
    if not hasattr(est, "predict_proba"):
        target = y
    else:
        target = (y > np.median(y)).astype(int)
    est.set_params(max_iter=2, random_state=0, hidden_size=4, memory_size=4)
    est.fit(X, target)
    assert est.feedback_ == expected
    recurrent = est.net_.module_.recurrent
    assert recurrent.feedback == (expected == "free")
    radii = map_radii(est.net_.module_)
    if expected == "none":
        # no writer of a start (LAES, growth) put a feedback into the buffer
        for sub in est.net_.module_.modules():
            if hasattr(sub, "weight_mh"):
                assert float(sub.weight_mh.abs().max()) == 0.0
        assert radii[0] == radii[1] == radii[2] < 1


def test_bad_feedback_names_the_value():
    X, y = _regression_data()
    with pytest.raises(InvalidParameterError, match="feedback"):
        LMNRegressor(feedback="bounded").fit(X, y)
    # the unrolled transfer writes W_mh: refused without feedback
    est = LMNRegressor(
        pretrainer=UnrolledPretrainer(max_iter=2), feedback="none", max_iter=2
    )
    with pytest.raises(ValueError, match="feedback='none'"):
        est.fit(X, y)


def test_saved_regressor_without_feedback_predicts_the_same(tmp_path):
    X, y = _regression_data()
    est = LMNRegressor(max_iter=3, random_state=0, hidden_size=4, memory_size=4)
    est.fit(X, y)
    path = tmp_path / "reg.sklmn"
    save(est, path)
    loaded = load(path)
    assert loaded.feedback_ == "none"
    assert not loaded.net_.module_.recurrent.feedback
    np.testing.assert_allclose(loaded.predict(X), est.predict(X), rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- #
# The kernel without feedback
# --------------------------------------------------------------------------- #
def _assert_same_as_zero_feedback(scan, inputs, heads, H, M):
    """``scan(w_mh)`` with ``w_mh=None`` and with a zero ``w_mh``: the same
    outputs and gradients of ``inputs`` (float64)."""

    def run(w_mh):
        outs = scan(w_mh)
        loss = sum((o * w).sum() for o, w in zip(outs, heads, strict=True))
        return outs, torch.autograd.grad(loss, inputs)

    ref_out, ref_grads = run(torch.zeros(H, M, dtype=torch.float64))
    out, grads = run(None)
    for a, b in zip(out + grads, ref_out + ref_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    return out


@pytest.mark.parametrize("batch_sizes", [None, [4, 4, 3, 1, 1]])
@pytest.mark.parametrize("bias", [False, True])
def test_kernel_without_feedback_equals_the_kernel_with_a_zero_one(batch_sizes, bias):
    from sklmn.nn._scan import lmn_scan

    g = torch.Generator().manual_seed(0)
    T, N, d, H, M = 5, 4, 3, 6, 5

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64).requires_grad_()

    x, m0 = r(T, N, d), r(N, M)
    w_xh, b_h, w_hm, w_mm = r(H, d), r(H), r(M, H), 0.5 * r(M, M).detach()
    w_mm.requires_grad_()
    b_m = r(M) if bias else None
    inputs = [x, m0, w_xh, b_h, w_hm, w_mm] + ([b_m] if bias else [])
    heads = [torch.randn(T, N, H, generator=g, dtype=torch.float64),
             torch.randn(T, N, M, generator=g, dtype=torch.float64),
             torch.randn(N, H, generator=g, dtype=torch.float64),
             torch.randn(N, M, generator=g, dtype=torch.float64)]

    out = _assert_same_as_zero_feedback(
        lambda w_mh: lmn_scan(x, m0, w_xh, b_h, w_mh, w_hm, w_mm, b_m, batch_sizes),
        inputs,
        heads,
        H,
        M,
    )
    # padded steps are exactly zero
    if batch_sizes is not None:
        assert float(out[1][3, 1:].abs().max()) == 0.0


def test_layer_without_feedback_runs_the_kernel_without_feedback(monkeypatch):
    from sklmn.nn import _scan

    calls = []
    original = _scan._MemoryScan.apply
    monkeypatch.setattr(
        _scan._MemoryScan, "apply", lambda *a: calls.append(1) or original(*a)
    )
    layer = LMNLayer(2, 4, 3, memory_matrix="schur", feedback=False)
    layer(torch.randn(2, 5, 2))
    LMNLayer(2, 4, 3, memory_matrix="schur")(torch.randn(2, 5, 2))
    assert calls == [1]


@pytest.mark.parametrize("batch_sizes", [None, [4, 4, 3, 1, 1, 1]])
@pytest.mark.parametrize("truncate", [False, True])
def test_multiscale_kernel_without_feedback_equals_a_zero_one(batch_sizes, truncate):
    from sklmn.nn._scan import multiscale_scan

    g = torch.Generator().manual_seed(1)
    T, N, H, M = 6, 4, 5, 6  # three modules of two units
    units = [6, 2, 4, 2, 6, 2]

    def r(*shape, scale=1.0):
        t = scale * torch.randn(*shape, generator=g, dtype=torch.float64)
        return t.requires_grad_()

    xp, m0, w_hm = r(T, N, H), r(N, M), r(M, H)
    w_mm = r(M, M, scale=0.4)
    heads = [torch.randn(T, N, H, generator=g, dtype=torch.float64),
             torch.randn(T, N, M, generator=g, dtype=torch.float64)]

    _assert_same_as_zero_feedback(
        lambda w_mh: multiscale_scan(
            xp, m0, w_mh, w_hm, w_mm, units, batch_sizes, truncate
        ),
        [xp, m0, w_hm, w_mm],
        heads,
        H,
        M,
    )
