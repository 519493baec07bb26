"""The Schur memory parametrization: radius below one by construction, exact
LAES start (see docs/memory.md)."""

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import is_regressor

from sklmn.datasets import load_timeseries_dataset
from sklmn.estimators import LMNClassifier, LMNRegressor, MultiScaleLMNClassifier
from sklmn.laes import LAESTransformer
from sklmn.nn import LMN, LMNLayer, MultiScaleLMN
from sklmn.nn._scan import SortedBatch, lmn_scan, multiscale_scan
from sklmn.nn._stable_memory import (
    R_MAX,
    SchurMemory,
    _standardize_2x2,
    feedback_gain,
    quasi_triangular_radius,
    real_schur,
)
from sklmn.persistence import load, save
from sklmn.pretraining import LAESInitializer
from sklmn.training import SequenceNet
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context
from tests._helpers import _adam_on_random_targets


def _dense_radius(W):
    """Radius of the module's dense matrix, by a general eigensolver."""
    W = W.detach().double().cpu().numpy()
    return float(np.abs(np.linalg.eigvals(W)).max())


def test_r_max_is_a_float32_number_below_one():
    assert R_MAX < 1
    assert float(torch.tensor(R_MAX, dtype=torch.float32)) == R_MAX


@pytest.mark.parametrize("M", [1, 2, 3, 7, 24])
@pytest.mark.parametrize("module_size", [None, 1])
def test_real_schur_reconstructs_with_standard_blocks(M, module_size):
    rng = np.random.RandomState(M)
    B = rng.randn(M, M) / math.sqrt(M)
    if module_size is not None:
        module_size = M if M < 3 else (M if M % 3 else 3)
        mask = np.kron(
            np.triu(np.ones((M // module_size,) * 2)), np.ones((module_size,) * 2)
        )
        B = B * mask
    Q, T, kind = real_schur(B, module_size)
    np.testing.assert_allclose(Q @ Q.T, np.eye(M), atol=1e-12)
    np.testing.assert_allclose(Q @ T @ Q.T, B, atol=1e-12)
    np.testing.assert_allclose(
        np.sort_complex(np.linalg.eigvals(T)),
        np.sort_complex(np.linalg.eigvals(B)),
        atol=1e-8,
    )
    for i in np.flatnonzero(kind == 1):
        assert T[i, i] == pytest.approx(T[i + 1, i + 1], abs=1e-14)
        assert T[i, i + 1] * T[i + 1, i] < 0
    if module_size is not None:  # Q block diagonal per module
        for k in range(0, M, module_size):
            block = Q[k : k + module_size]
            outside = np.delete(block, np.s_[k : k + module_size], axis=1)
            assert np.abs(outside).max(initial=0.0) == 0.0


@pytest.mark.parametrize(
    "A",
    [
        [[0.3, 2.0], [-0.5, 0.1]],  # complex pair, unequal diagonal
        [[0.3, 2.0], [0.5, 0.1]],  # real pair
        [[0.5, 0.0], [1.0, -0.2]],  # lower triangular
    ],
)
def test_standardize_2x2(A):
    A = np.array(A)
    R, S = _standardize_2x2(A)
    np.testing.assert_allclose(R.T @ R, np.eye(2), atol=1e-14)
    np.testing.assert_allclose(R @ S @ R.T, A, atol=1e-14)
    if np.iscomplex(np.linalg.eigvals(A)).any():
        assert S[0, 0] == pytest.approx(S[1, 1], abs=1e-14)
        assert S[0, 1] * S[1, 0] < 0
    else:
        assert S[1, 0] == pytest.approx(0.0, abs=1e-14)


def test_real_schur_nearly_nilpotent():
    # a shift (eigenvalues 0, norm 1) plus a small perturbation: the LAES
    # matrix of short series looks like this (eigenvectors ill-conditioned)
    rng = np.random.RandomState(0)
    M = 24
    B = np.diag(np.ones(M - 1), -1) + 1e-6 * rng.randn(M, M)
    Q, T, _ = real_schur(B)
    np.testing.assert_allclose(Q @ T @ Q.T, B, atol=1e-12)


@pytest.mark.parametrize("module", [False, True])
def test_nearly_real_double_eigenvalue_keeps_its_block(module):
    """A complex pair close to a double real eigenvalue: the standardized
    block has a tiny off-diagonal entry whose sign the recomputation of ``T``
    can lose to rounding; the block must keep entries of opposite signs (no
    'math domain error' in set_dense_ / set_module_dense_)."""
    for theta in np.linspace(0.0, np.pi, 60):
        c, s = math.cos(theta), math.sin(theta)
        R = np.array([[c, -s], [s, c]])
        B = R @ np.array([[0.5, 2.0], [-1e-17, 0.5]]) @ R.T
        Q, T, kind = real_schur(B)
        np.testing.assert_allclose(Q @ T @ Q.T, B, rtol=0, atol=1e-14)
        if kind[0] == 1:
            assert T[0, 1] * T[1, 0] < 0
        if module:
            mem = SchurMemory(4, module_size=2, dtype=torch.float64)
            Q_k, _ = mem.set_module_dense_(1, B)
            W = mem().detach()[2:, 2:]
        else:
            mem = SchurMemory(2, dtype=torch.float64)
            Q_k, _ = mem.set_dense_(B)
            W = mem().detach()
        # the block's angle is within 1e-8 of 0 or pi: about half the digits
        np.testing.assert_allclose(
            (Q_k @ W @ Q_k.T).numpy(), B, rtol=0, atol=1e-6
        )


def test_set_module_dense_reads_only_the_module_it_sets():
    """Setting module 1 leaves module 0's block as it is: a block of angle
    zero there (b = c = 0, from a ring start with max_phase=0) raises no
    warning, and a block of radius above the margin is not counted as
    clamped."""
    mem = SchurMemory(4, module_size=2, dtype=torch.float64)
    mem.reset_ring_(0.5, 0.9, max_phase=0.0)
    before = mem().detach()[:2].clone()
    B = torch.tensor([[0.5, -0.8], [0.6, 0.1]], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Q, info = mem.set_module_dense_(1, B)
    assert info["clamped"] == 0
    torch.testing.assert_close(mem().detach()[:2, :2], before[:, :2], rtol=0, atol=0)
    torch.testing.assert_close(Q @ mem().detach()[2:, 2:] @ Q.T, B)
    with torch.no_grad():  # module 0 at radius r_max (1 - 2e-9)
        mem.eigen[0] = -20.0
    Q, info = mem.set_module_dense_(1, 0.5 * torch.eye(2, dtype=torch.float64))
    assert info["clamped"] == 0
    Q, info = mem.set_module_dense_(1, torch.eye(2, dtype=torch.float64))
    assert info["clamped"] == 2  # module 1's own eigenvalues moved


def test_set_dense_of_a_rotated_nilpotent_block():
    # a rotated 2 x 2 nilpotent block (eigenvalues 0 up to rounding), as a
    # LAES beyond the rank of its data has (a bidirectional 2-layer
    # LMNRegressor on 4 sequences of 2 steps): its complex block, recomputed
    # as Q^T B Q, had off-diagonal entries of the same sign, and set_dense_
    # raised "math domain error"
    rng = np.random.RandomState(0)
    N = np.array([[0.0, 0.0], [rng.uniform(0.1, 1.0), 0.0]])
    R, _ = np.linalg.qr(rng.randn(2, 2))
    B = R @ N @ R.T
    Q, T, kind = real_schur(B)
    for i in np.flatnonzero(kind == 1):
        assert T[i, i + 1] * T[i + 1, i] < 0
    np.testing.assert_allclose(Q @ T @ Q.T, B, rtol=0, atol=1e-12)
    mem = SchurMemory(2, dtype=torch.float64)
    Q, info = mem.set_dense_(B)
    assert info["clamped"] == 0
    W = mem().detach().numpy()
    np.testing.assert_allclose(Q.numpy() @ W @ Q.numpy().T, B, rtol=0, atol=1e-12)


@pytest.mark.parametrize("M", [1, 2, 5, 32])
def test_set_dense_round_trip_exact(M):
    rng = np.random.RandomState(1)
    B = rng.randn(M, M)
    B *= 0.9 / max(np.abs(np.linalg.eigvals(B)).max(), 1e-3)
    mem = SchurMemory(M, dtype=torch.float64)
    Q, info = mem.set_dense_(B)
    assert info["clamped"] == 0
    W = mem().detach().numpy()
    np.testing.assert_allclose(Q.numpy() @ W @ Q.numpy().T, B, atol=1e-12)


def test_set_dense_clamps_radius_at_least_r_max():
    B = np.diag([1.2, 0.5, -1.0])
    mem = SchurMemory(3, dtype=torch.float64)
    _, info = mem.set_dense_(B)
    assert info["clamped"] == 2
    assert info["excess"] == pytest.approx(1.2 - R_MAX, abs=1e-5)
    assert quasi_triangular_radius(mem()) < R_MAX


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extreme_parameters_stay_below_one_without_nan(dtype):
    mem = SchurMemory(6, dtype=dtype)
    with torch.no_grad():
        mem.eigen.copy_(torch.tensor([-1e4, 1.0, 1e4, 2.0, -1e4, 1e3]))
        mem.skew.fill_(1e4)
        mem.upper.fill_(1e6)
    W = mem()
    assert quasi_triangular_radius(W) < 1
    W.sum().backward()
    for p in mem.parameters():
        assert torch.isfinite(p.grad).all()


@pytest.mark.parametrize("multiscale", [False, True])
def test_trains_after_a_forward_under_inference_mode(multiscale):
    """The layout of the structure is cached when ``kind`` changes (here by
    loading a state); a first forward pass under ``torch.inference_mode``
    must not leave inference tensors in it that training cannot save."""
    torch.manual_seed(0)

    def make():
        if multiscale:
            return MultiScaleLMN(2, 3, 2, 2, memory_matrix="schur")
        return LMN(2, 3, 4, memory_matrix="schur")

    net = make()
    net.load_state_dict(make().state_dict())  # kind copied: layout rebuilt
    x = torch.randn(2, 5, 2)
    with torch.inference_mode():
        before = net(x)[0]
    out = net(x)[0]
    out.sum().backward()
    memory = net.layers[0].memory if not multiscale else net.memory
    assert memory.upper.grad is not None
    assert torch.isfinite(memory.eigen.grad).all()
    torch.testing.assert_close(out.detach(), before, rtol=0, atol=1e-6)


def test_ring_start():
    gen = torch.Generator().manual_seed(0)
    mem = SchurMemory(9, dtype=torch.float64)
    mem.reset_ring_(0.5, 0.9, generator=gen)
    moduli = mem.eigenvalue_moduli()
    assert moduli.min() >= 0.5 - 1e-12 and moduli.max() <= 0.9 + 1e-12
    assert torch.count_nonzero(torch.triu(mem(), 2)) == 0
    with pytest.raises(ValueError, match="r_min"):
        mem.reset_ring_(0.5, 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="size"):
        SchurMemory(0)
    with pytest.raises(ValueError, match="module_size"):
        SchurMemory(6, module_size=4)
    with pytest.raises(ValueError, match="r_max"):
        SchurMemory(4, r_max=1.0)
    with pytest.raises(ValueError, match="shape"):
        SchurMemory(4).set_dense_(np.eye(3))
    with pytest.raises(ValueError, match="square"):
        real_schur(np.ones((2, 3)))


@pytest.mark.parametrize(
    "b, c, match",
    [
        (0.0, 0.0, "opposite signs"),
        (0.4, 0.3, "opposite signs"),
        (float("nan"), -0.3, "finite"),
    ],
)
def test_set_quasi_triangular_refuses_a_block_it_cannot_hold(b, c, match):
    """A 2 x 2 block without off-diagonal entries of opposite signs has no
    parameters (k = sqrt(-b / c)): an error naming it, not NaN weights."""
    mem = SchurMemory(3, dtype=torch.float64)
    before = [p.detach().clone() for p in mem.parameters()]
    T = torch.tensor(
        [[0.1, b, 2.0], [c, 0.1, 1.0], [0.0, 0.0, -0.5]], dtype=torch.float64
    )
    with pytest.raises(ValueError, match=match):
        mem.set_quasi_triangular_(T)
    for p, q in zip(mem.parameters(), before, strict=True):
        assert torch.equal(p.detach(), q)


def test_quasi_triangular_radius_checks_structure():
    with pytest.raises(ValueError, match="quasi-upper-triangular"):
        quasi_triangular_radius(np.ones((3, 3)))


# --------------------------------------------------------------------------- #
# 200 Adam steps at lr 0.1 on random data and targets
# --------------------------------------------------------------------------- #
class _Net(torch.nn.Module):
    """An LMN (or MS-LMN) layer run by the library's kernels, memory in Schur
    form, feedback free or bounded."""

    def __init__(self, d, H, M, n_modules, bounded, dtype):
        super().__init__()
        g = torch.Generator().manual_seed(M + 7 * n_modules)
        total = M * n_modules

        def p(*shape):
            return torch.nn.Parameter(torch.randn(*shape, generator=g, dtype=dtype))

        self.w_xh, self.b_h = p(H, d), p(H)
        self.w_mh, self.w_hm = p(H, total), p(total, H)
        self.memory = SchurMemory(
            total, module_size=M if n_modules > 1 else None, dtype=dtype
        )
        self.memory.reset_ring_(0.5, 0.99, generator=g)
        self.n_modules, self.M, self.bounded = n_modules, M, bounded

    def maps(self):
        W_mm = self.memory()
        W_mh = self.w_mh
        if self.bounded:
            W_mh = feedback_gain(W_mm, self.memory.kind, self.w_hm, W_mh) * W_mh
        return W_mm, W_mh

    def forward(self, x):
        W_mm, W_mh = self.maps()
        x_tm = x.transpose(0, 1)
        m0 = x.new_zeros(x.shape[0], W_mm.shape[0])
        if self.n_modules == 1:
            _, ms, _, _ = lmn_scan(
                x_tm, m0, self.w_xh, self.b_h, W_mh, self.w_hm, W_mm, None,
                None, False,
            )
        else:
            xp = x_tm @ self.w_xh.T + self.b_h
            periods = [2**k for k in range(self.n_modules)]
            units = [
                self.M * sum(t % q == 0 for q in periods) for t in range(x.shape[1])
            ]
            _, ms = multiscale_scan(
                xp, m0, W_mh, self.w_hm, W_mm, units, None, False
            )
        return ms[-1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "M, n_modules, bounded",
    [(1, 1, False), (2, 1, False), (5, 1, False), (16, 1, False), (3, 3, False),
     (4, 2, False), (5, 1, True), (16, 1, True), (4, 2, True)],
)
def test_radius_below_one_after_200_adam_steps(
    one_thread, dtype, M, n_modules, bounded
):
    torch.manual_seed(0)
    d, H, T, N = 3, 8, 8, 8
    net = _Net(d, H, M, n_modules, bounded, dtype)
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    x = torch.randn(N, T, d, dtype=dtype)
    y = 5.0 * torch.randn(N, M * n_modules, dtype=dtype)
    rng = np.random.RandomState(0)
    for _ in range(200):
        opt.zero_grad()
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        with torch.no_grad():
            W_mm, W_mh = net.maps()
        assert W_mm.dtype == dtype
        assert quasi_triangular_radius(W_mm) < 1
        assert _dense_radius(W_mm) < 1 + 1e-6
        if bounded:
            A, F, G = (w.detach().double().numpy() for w in (W_mm, net.w_hm, W_mh))
            assert _dense_radius(torch.as_tensor(A + F @ G)) < 1
            for _ in range(4):
                D = rng.uniform(size=G.shape[0])
                assert _dense_radius(torch.as_tensor(A + (F * D) @ G)) < 1


# --------------------------------------------------------------------------- #
# The LAES start in Schur coordinates
# --------------------------------------------------------------------------- #
def _laes_states_check(X, p):
    """The memory states of the LAES start (a linear hidden layer, the
    limit ``s -> 0`` of ``tanh(s z) / s``) with ``W_mm = B`` and with the
    Schur memory after absorbing ``Q``: equal to 1e-8 (relative, float64)."""
    seqs = check_sequences(X)
    p = min(p, int(seqs.lengths.max()) * seqs.n_features, int(seqs.lengths.sum()))
    laes = LAESTransformer(n_components=p).fit(X)
    A, B = laes.A_, laes.B_
    p = A.shape[0]
    lengths = torch.as_tensor(seqs.lengths)
    batch = SortedBatch(lengths, seqs.data.shape[1], "cpu")
    x = torch.as_tensor(seqs.data) - torch.as_tensor(laes.mean_)
    x_tm = batch.time_major(x * 1e-4)
    n = x.shape[0]
    W_xh = torch.as_tensor(A)
    zero_b = torch.zeros(p, dtype=torch.float64)
    W_hm = torch.eye(p, dtype=torch.float64) * 1e4
    W_mh = torch.zeros(p, p, dtype=torch.float64)
    m0 = torch.zeros(n, p, dtype=torch.float64)
    with torch.no_grad():
        _, ms, _, _ = lmn_scan(
            x_tm, m0, W_xh, zero_b, W_mh, W_hm, torch.as_tensor(B), None,
            batch.batch_sizes, False,
        )
        mem = SchurMemory(p, dtype=torch.float64)
        Q, info = mem.set_dense_(B)
        _, ms2, _, _ = lmn_scan(
            x_tm, m0, W_xh, zero_b, W_mh @ Q, Q.T @ W_hm, mem(), None,
            batch.batch_sizes, False,
        )
    assert info["clamped"] == 0
    error = (ms2 @ Q.T - ms).abs().max() / ms.abs().max()
    assert float(error) < 1e-8


def test_laes_start_reproduced_synthetic():
    rng = np.random.RandomState(0)
    X = np.cumsum(rng.randn(30, 40, 1), axis=1)
    _laes_states_check(X, 16)


@pytest.mark.parametrize(
    "name",
    ["ArrowHead", "BasicMotions", "ItalyPowerDemand", "OSULeaf", "PLAID", "ACSF1"],
)
def test_laes_start_reproduced_on_suite_data(name):
    try:
        X, _ = load_timeseries_dataset(name)
    except FileNotFoundError as exc:  # data not fetched (`bash dev.sh data`);
        # any other error of the loader fails the test
        pytest.skip(f"{name} not available: {exc}")
    # the first 40 training sequences, the suite's default 32 components
    _laes_states_check(X[:40], 32)


# --------------------------------------------------------------------------- #
# LMN(memory_matrix='schur')
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lmn_schur_radius_below_one_after_200_adam_steps(one_thread, dtype):
    torch.manual_seed(0)
    net = LMN(3, 6, 5, num_layers=2, bidirectional=True, memory_matrix="schur")
    net = net.to(dtype)

    def check():
        for layer in net._all_layers():
            W = layer.weight_mm.detach()
            assert W.dtype == dtype
            assert quasi_triangular_radius(W) < 1
            assert _dense_radius(W) < 1 + 1e-6

    _adam_on_random_targets(net, dtype, check)


def test_lmn_schur_set_memory_keeps_the_function():
    torch.manual_seed(0)
    free = LMNLayer(3, 5, 4, memory_bias=True).double()
    schur = LMNLayer(3, 5, 4, memory_bias=True, memory_matrix="schur").double()
    with torch.no_grad():
        free.bias_m.uniform_(-1, 1)
        for name in ("weight_xh", "bias_h", "weight_mh", "weight_hm", "bias_m"):
            getattr(schur, name).copy_(getattr(free, name))
    Q = schur.set_memory_(free.weight_mm.detach())
    x = torch.randn(2, 9, 3, dtype=torch.float64)
    out_free, (h_free, _) = free(x)
    out_schur, (h_schur, _) = schur(x)
    torch.testing.assert_close(h_schur, h_free, rtol=0, atol=1e-12)
    torch.testing.assert_close(out_schur @ Q.T, out_free, rtol=0, atol=1e-12)
    torch.testing.assert_close(schur.memory_basis, Q)
    with pytest.raises(ValueError, match="schur"):
        free.set_memory_(torch.eye(4))


@pytest.mark.parametrize("readout", ["ridge", "logistic"])
def test_laes_start_of_a_schur_lmn_predicts_as_the_free_one(readout):
    rng = np.random.RandomState(0)
    X = np.cumsum(rng.randn(40, 12, 2), axis=1)
    y = (X[:, -1, 0] > 0).astype(int)
    seqs = check_sequences(X, dtype=np.float64)
    outputs = []
    for memory_matrix in ("free", "schur"):
        torch.manual_seed(0)
        net = SequenceNet(
            LMN(2, 6, 6, num_layers=2, memory_matrix=memory_matrix), 2
        ).double()
        LAESInitializer(readout=readout, alpha=0.0).initialize(
            net, fit_context(seqs, y, n_outputs=2)
        )
        with torch.no_grad():
            outputs.append(
                net(torch.as_tensor(seqs.data), torch.as_tensor(seqs.lengths))
            )
    torch.testing.assert_close(outputs[1], outputs[0], rtol=1e-6, atol=1e-6)


def test_lmn_classifier_schur_fits_saves_and_loads(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(30, 6, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    clf = LMNClassifier(
        hidden_size=6, memory_size=6, memory_matrix="schur", max_iter=3,
        random_state=0,
    )
    with pytest.warns(Warning):  # not converged in 3 epochs
        clf.fit(X, y)
    layer = clf.net_.module_.recurrent.layers[0]
    assert quasi_triangular_radius(layer.weight_mm) < 1
    path = tmp_path / "schur.sklmn"
    save(clf, path)
    loaded = load(path)
    np.testing.assert_allclose(
        loaded.predict_proba(X), clf.predict_proba(X), rtol=0, atol=1e-6
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMNRegressor(max_iter=1, random_state=0),  # 64 units by default
        lambda: LMNClassifier(
            hidden_size=8, memory_size=128, memory_matrix="schur",
            bidirectional=True, num_layers=2, max_iter=1, random_state=0,
        ),
        lambda: MultiScaleLMNClassifier(
            hidden_size=8, memory_size=32, memory_matrix="schur", max_iter=1,
            random_state=0,
        ),
    ],
    ids=["regressor-default", "lmn-wide-bidirectional", "multiscale-wide"],
)
def test_wide_schur_memories_load_from_the_safe_format(make, tmp_path):
    """Rebuilding a Schur memory costs a few dozen operations per unit; the
    loader's budget grows with the saved weights, so wide memories load."""
    rng = np.random.RandomState(0)
    X = rng.randn(24, 5, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch: not converged
        est.fit(X, X[:, :, 0].sum(1) if is_regressor(est) else y)
    path = tmp_path / "wide.sklmn"
    save(est, path)
    loaded = load(path)
    out, ref = (
        (loaded.predict(X), est.predict(X))
        if is_regressor(est)
        else (loaded.predict_proba(X), est.predict_proba(X))
    )
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-6)
