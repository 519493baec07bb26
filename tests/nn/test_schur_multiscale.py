"""The 'schur' memory of the multi-scale LMN, the unrolled transfer into a
'schur' LMN, the anchor on the Schur parameters and the estimators' option
(see docs/memory.md)."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from sklmn._training._callbacks import AnchorToStart
from sklmn.datasets import load_timeseries_dataset
from sklmn.estimators import (
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
)
from sklmn.nn import LMN, MultiScaleLMN, TapeReadout, UnrolledRNN
from sklmn.nn._penalties import orthogonality_penalty
from sklmn.nn._stable_memory import SchurMemory, quasi_triangular_radius
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining, LAESInitializer, UnrolledPretrainer
from sklmn.training import SequenceNet
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context


@pytest.fixture(autouse=True)
def _every_test_on_one_thread(one_thread):
    """These small problems run fastest on one thread (``one_thread``)."""
    yield


def _radius(W):
    """Spectral radius of a dense matrix by a general eigensolver (float64;
    a float32 matrix is represented exactly)."""
    W = W.detach().double().cpu().numpy()
    return float(np.abs(np.linalg.eigvals(W)).max()) if W.size else 0.0


def _relative(a, b):
    return float((a - b).detach().norm() / b.detach().norm())


def _directions(net):
    if isinstance(net, LMN):
        return net._all_layers()
    return [net] + ([net.reverse] if net.reverse is not None else [])


def _check_stable(net):
    """The dense memory matrix of every layer/direction has radius below
    one; for a multi-scale LMN every leading set of modules too."""
    for part in _directions(net):
        W = part.weight_mm.detach()
        assert _radius(W) < 1
        if isinstance(part, MultiScaleLMN):
            for a in range(1, part.n_modules):
                rows = a * part.memory_size
                assert _radius(W[:rows, :rows]) < 1


# --------------------------------------------------------------------------- #
# stable by construction, on the modules' dense matrices
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("M", [1, 2, 5, 8])
@pytest.mark.parametrize("arch", ["lmn_2_bidirectional", "ms", "ms_growth"])
def test_radius_below_one_at_every_one_of_200_adam_steps(arch, M, dtype):
    torch.manual_seed(M)
    if arch == "lmn_2_bidirectional":
        net = LMN(2, 4, M, num_layers=2, bidirectional=True, memory_matrix="schur")
    elif arch == "ms":
        net = MultiScaleLMN(2, 4, M, 3, memory_matrix="schur", bidirectional=True)
    else:
        net = MultiScaleLMN(2, 4, M, 1, memory_matrix="schur")
    net = net.to(dtype)
    x = torch.randn(3, 6, 2, dtype=dtype)
    lengths = torch.tensor([6, 4, 1])
    eigen = [part.memory.eigen for part in _directions(net)]
    start = [e.detach().clone() for e in eigen]
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    y = None
    for step in range(200):
        if arch == "ms_growth" and step in (60, 120):
            g = net.n_modules
            net.grow_()
            B = torch.randn(M, M, dtype=torch.float64)
            B *= 0.999 / _radius(B)  # the new module's block near the circle
            net.init_module_from_laes_(g, torch.randn(M, 4), B)
            opt = torch.optim.Adam(net.parameters(), lr=0.1)
            y = None
        if y is None:  # random targets of the current output size
            y = 5.0 * torch.randn(3, 6, net.output_size, dtype=dtype)
        opt.zero_grad()
        (net(x, lengths=lengths)[0] - y).pow(2).mean().backward()
        opt.step()
        _check_stable(net)
    if arch == "ms_growth":
        assert net.n_modules == 3
    else:  # the optimizer moved the memory parameters
        assert not any(
            torch.allclose(a, e, rtol=0, atol=1e-6)
            for a, e in zip(start, eigen, strict=True)
        )


def test_extreme_parameters_keep_every_module_block_below_one():
    net = MultiScaleLMN(1, 3, 3, 3, memory_matrix="schur")
    for value in (-1e4, -25.0, 0.0, 25.0, 1e4):
        with torch.no_grad():
            net.memory.eigen.fill_(value)
            net.memory.skew.fill_(value / 10)
            net.memory.upper.fill_(value)
        W = net.weight_mm.detach()
        assert torch.isfinite(W).all()
        _check_stable(net)


# --------------------------------------------------------------------------- #
# the module: structure, set_memory_, growth, set_module_
# --------------------------------------------------------------------------- #
def test_ms_schur_module_structure_and_validation():
    net = MultiScaleLMN(2, 5, 3, 3, memory_matrix="schur")
    assert isinstance(net.memory, SchurMemory) and net.memory.module_size == 3
    assert "weight_mm" not in dict(net.named_parameters())
    W = net.weight_mm.detach()
    # block upper-triangular across modules, quasi-triangular in each
    assert torch.equal(W * (1 - net.memory_mask), torch.zeros_like(W))
    assert quasi_triangular_radius(W, net.memory.kind) < 1
    torch.testing.assert_close(net.masked_weight_mm().detach(), W)
    assert "memory_matrix='schur'" in repr(net)
    with pytest.raises(ValueError, match="memory_matrix"):
        MultiScaleLMN(2, 5, 3, 3, memory_matrix="orthogonal")
    with pytest.raises(ValueError, match="block upper-triangular"):
        net.set_memory_(torch.ones(9, 9))
    with pytest.raises(ValueError, match=r"shape \(9, 9\)"):
        net.set_memory_(torch.eye(4))
    with pytest.raises(ValueError, match="schur"):
        MultiScaleLMN(2, 5, 3, 3).set_memory_(torch.eye(9))


def _free_and_schur(n_modules=3, H=6, N=3, bidirectional=False):
    """A free and a 'schur' multi-scale LMN with the same weights (float64;
    the Schur one's coordinates turned by its memory_basis)."""
    torch.manual_seed(0)
    free = MultiScaleLMN(
        2, H, N, n_modules, bidirectional=bidirectional, dtype=torch.float64
    )
    schur = MultiScaleLMN(
        2, H, N, n_modules, memory_matrix="schur", bidirectional=bidirectional,
        dtype=torch.float64,
    )
    for f, s in zip(_directions(free), _directions(schur), strict=True):
        with torch.no_grad():
            for name in ("weight_xh", "bias_h", "weight_mh", "weight_hm"):
                getattr(s, name).copy_(getattr(f, name))
            W = f.masked_weight_mm().detach()
            W *= 0.99 / _radius(W)
            f.weight_mm.copy_(W)
        s.memory_basis.copy_(torch.eye(s.total_memory_size))
        s.set_memory_(W)
    return free, schur


def _same_function(free, schur, x, lengths, rtol=1e-8):
    """The Schur network's hidden states equal the free one's and its memory
    states are the free ones turned by memory_basis (relative, float64)."""
    h_f, m_f, _ = free.forward_states(x, lengths)
    h_s, m_s, _ = schur.forward_states(x, lengths)
    bases = [d.memory_basis for d in _directions(schur)]
    Q = torch.block_diag(*bases)
    assert _relative(h_s, h_f) < rtol
    assert _relative(m_s @ Q.T, m_f) < rtol


def test_set_memory_keeps_the_function_and_the_basis_is_block_diagonal():
    free, schur = _free_and_schur(bidirectional=True)
    x = torch.randn(4, 11, 2, dtype=torch.float64)
    _same_function(free, schur, x, [11, 8, 3, 1])
    Q = schur.memory_basis
    torch.testing.assert_close(Q.T @ Q, torch.eye(9, dtype=Q.dtype), rtol=0, atol=1e-12)
    mask = schur.memory_mask.to(Q)
    off = Q * (1 - mask) * (1 - mask.T)  # off the diagonal blocks
    assert torch.equal(off, torch.zeros_like(off))


def test_growth_and_new_module_are_exact_old_coordinates_kept():
    free, schur = _free_and_schur(n_modules=2, bidirectional=True)
    kept = {
        name: p.detach().clone() for name, p in schur.memory.named_parameters()
    }
    kept_basis = schur.memory_basis.clone()
    W_old = schur.weight_mm.detach().clone()
    for net in (free, schur):
        assert net.grow_() == [slice(6, 9)]
    # growth: old parameters copied, new blocks exactly zero
    assert torch.equal(schur.memory.eigen[:6], kept["eigen"])
    assert torch.equal(schur.memory.upper[:6, :6], kept["upper"][:6, :6])
    assert torch.equal(schur.weight_mm.detach()[:6, :6], W_old)
    W = schur.weight_mm.detach()
    assert torch.equal(W[6:], torch.zeros_like(W[6:]))
    assert torch.equal(W[:, 6:], torch.zeros_like(W[:, 6:]))
    x = torch.randn(3, 13, 2, dtype=torch.float64)
    _same_function(free, schur, x, [13, 9, 2])
    # the new module from a LAES (A, B): the same function, only its
    # coordinates turned
    rng = np.random.RandomState(1)
    for j in (0, 1):
        A = rng.randn(3, 6)
        B = rng.randn(3, 3)
        B *= 0.95 / np.abs(np.linalg.eigvals(B)).max()
        for net in (free, schur):
            net.init_module_from_laes_(2, A, B, direction=j)
    _same_function(free, schur, x, [13, 9, 2])
    assert torch.equal(schur.weight_mm.detach()[:6, :6], W_old)
    assert torch.equal(schur.memory_basis[:6, :6], kept_basis)
    _check_stable(schur)


def test_set_module_turns_only_that_module():
    free, schur = _free_and_schur(n_modules=3)
    B = torch.tensor([[0.2, -0.9, 0.1], [0.8, 0.3, 0.0], [0.0, 0.5, -0.6]],
                     dtype=torch.float64)
    W_hm = torch.randn(3, 6, dtype=torch.float64)
    # in the Schur network's current coordinates of module 1
    Q1 = schur.memory_basis[3:6, 3:6].clone()
    free.set_module_(1, weight_mm=Q1 @ B @ Q1.T, weight_hm=Q1 @ W_hm)
    schur.set_module_(1, weight_mm=B, weight_hm=W_hm)
    x = torch.randn(2, 9, 2, dtype=torch.float64)
    _same_function(free, schur, x, None)
    with pytest.raises(ValueError, match=r"weight_mm block of module 1"):
        schur.set_module_(1, weight_mm=torch.eye(2))


# --------------------------------------------------------------------------- #
# the LAES start
# --------------------------------------------------------------------------- #
def _ms_laes_check(X, y, memory_size, n_modules):
    seqs = check_sequences(X, dtype=np.float64)
    states, outputs, bases = [], [], []
    for memory_matrix in ("free", "schur"):
        torch.manual_seed(0)
        net = SequenceNet(
            MultiScaleLMN(
                seqs.data.shape[2], memory_size * n_modules + 4, memory_size,
                n_modules,
                memory_matrix=memory_matrix,
            ),
            int(np.max(y)) + 1,
        ).double()
        LAESInitializer(alpha=0.0, random_state=0).initialize(
            net, fit_context(seqs, y, n_outputs=int(np.max(y)) + 1)
        )
        x, lengths = torch.as_tensor(seqs.data), torch.as_tensor(seqs.lengths)
        with torch.no_grad():
            states.append(net.recurrent.forward_states(x, lengths)[1])
            outputs.append(net(x, lengths))
        if memory_matrix == "schur":
            bases.append(net.recurrent.memory_basis)
            _check_stable(net.recurrent)
    assert _relative(states[1] @ bases[0].T, states[0]) < 1e-8
    torch.testing.assert_close(outputs[1], outputs[0], rtol=1e-6, atol=1e-6)


def test_ms_laes_start_reproduced_synthetic():
    rng = np.random.RandomState(0)
    X = np.cumsum(rng.randn(30, 20, 2), axis=1)
    y = (X[:, -1, 0] > 0).astype(int)
    _ms_laes_check(X, y, memory_size=5, n_modules=3)


@pytest.mark.parametrize(
    "name",
    ["ItalyPowerDemand", "BasicMotions", "ArrowHead", "OSULeaf", "PLAID", "ACSF1"],
)
def test_ms_laes_start_reproduced_on_suite_data(name):
    try:
        X, y = load_timeseries_dataset(name)
    except FileNotFoundError as exc:  # data not fetched (`bash dev.sh data`);
        # any other error of the loader fails the test
        pytest.skip(f"{name} not available: {exc}")
    # the first 12 training sequences, the classifier's default sizes
    y = np.unique(np.asarray(y)[:12], return_inverse=True)[1]
    _ms_laes_check(X[:12], y, memory_size=12, n_modules=4)


# --------------------------------------------------------------------------- #
# the unrolled transfer (Alg. 1)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("p, size", [(6, 6), (4, 7)])
def test_unrolled_transfer_into_schur_lmn_is_exact(p, size):
    torch.manual_seed(0)
    urnn = UnrolledRNN(2, 4, tape_length=3, dtype=torch.float64)
    readout = TapeReadout(4, 2, 3, dtype=torch.float64)
    A = torch.randn(p, 4, dtype=torch.float64)
    B = torch.randn(p, p, dtype=torch.float64)
    B *= 0.99 / _radius(B)
    x = torch.randn(3, 15, 2, dtype=torch.float64)
    lengths = torch.tensor([15, 9, 2])
    outputs = []
    for memory_matrix in ("free", "schur"):
        lmn = LMN(2, 4, size, memory_matrix=memory_matrix).double()
        W_mo, b_mo = lmn.init_from_unrolled_(urnn, readout, A, B)
        out, _ = lmn(x, lengths=lengths)
        outputs.append(out @ W_mo.T + b_mo)
        if memory_matrix == "schur":
            layer = lmn.layers[0]
            assert quasi_triangular_radius(layer.weight_mm) < 1
            Q = layer.memory_basis
            W_free = Q @ layer.weight_mm.detach() @ Q.T
            torch.testing.assert_close(W_free[:p, :p], B, rtol=0, atol=1e-12)
    assert _relative(outputs[1], outputs[0]) < 1e-8


def test_unrolled_pretrainer_with_a_schur_lmn():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 6, 1)
    y = X[:, 0, 0]
    reg = LMNRegressor(
        hidden_size=4, memory_size=6, memory_matrix="schur", max_iter=2,
        pretrainer=UnrolledPretrainer(tape_length=3, max_iter=3, random_state=0),
        random_state=0,
    )
    with pytest.warns(Warning):  # not converged in 2 epochs
        reg.fit(X, y)
    layer = reg.net_.module_.recurrent.layers[0]
    assert quasi_triangular_radius(layer.weight_mm) < 1
    assert np.all(np.isfinite(reg.predict(X)))


# --------------------------------------------------------------------------- #
# penalties and the anchor
# --------------------------------------------------------------------------- #
def test_penalties_act_on_the_dense_schur_matrix():
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 4, 3, 2, memory_matrix="schur", orthogonality_penalty=0.5)
    with torch.no_grad():
        net.memory.upper.normal_()
    x = torch.randn(2, 5, 2)
    _, _, penalty = net(x, return_penalty=True)
    expected = orthogonality_penalty(net.weight_mm, 0.5)
    torch.testing.assert_close(penalty, expected, rtol=1e-6, atol=1e-7)
    penalty.backward()
    assert float(net.memory.upper.grad.abs().sum()) > 0


def test_anchor_pulls_the_schur_parameters_to_the_start():
    torch.manual_seed(0)
    module = MultiScaleLMN(2, 4, 3, 2, memory_matrix="schur")
    net = SimpleNamespace(module_=module)
    anchor = AnchorToStart(2.0)
    anchor.on_train_begin(net)
    assert {"memory.eigen", "memory.skew", "memory.upper"} <= set(anchor.reference_)
    start = module.memory.eigen.detach().clone()
    with torch.no_grad():
        module.memory.eigen.add_(0.25)
    module.memory.eigen.grad = torch.zeros_like(start)
    anchor.on_grad_computed(net, module.named_parameters())
    torch.testing.assert_close(
        module.memory.eigen.grad, torch.full_like(start, 0.5), rtol=0, atol=1e-6
    )


# --------------------------------------------------------------------------- #
# the estimators
# --------------------------------------------------------------------------- #
def _data(n=30, T=10):
    rng = np.random.RandomState(0)
    X = rng.randn(n, T, 2)
    return X, (X[:, :3, 0].sum(axis=1) > 0).astype(int)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"pretrainer": None, "bidirectional": True},
        {"incremental": IncrementalTraining(epochs_per_module=1)},
    ],
)
def test_multiscale_classifier_schur_fits_saves_and_loads(tmp_path, params):
    X, y = _data()
    clf = MultiScaleLMNClassifier(
        hidden_size=8, memory_size=3, n_modules=3, memory_matrix="schur",
        max_iter=4, random_state=0, **params,
    )
    with pytest.warns(Warning):  # not converged in 4 epochs
        clf.fit(X, y)
    rec = clf.net_.module_.recurrent
    _check_stable(rec)
    if "incremental" in params:
        assert rec.n_modules > 1
    path = tmp_path / "ms_schur.sklmn"
    save(clf, path)
    loaded = load(path)
    np.testing.assert_allclose(
        loaded.predict_proba(X), clf.predict_proba(X), rtol=0, atol=1e-6
    )


def test_multiscale_regressor_schur_and_validation(tmp_path):
    X, _ = _data()
    y = X[:, 0, 0]
    reg = MultiScaleLMNRegressor(
        hidden_size=8, memory_size=2, n_modules=2, memory_matrix="schur",
        max_iter=3, random_state=0,
    )
    with pytest.warns(Warning):
        reg.fit(X, y)
    _check_stable(reg.net_.module_.recurrent)
    save(reg, tmp_path / "r.sklmn")
    np.testing.assert_allclose(
        load(tmp_path / "r.sklmn").predict(X), reg.predict(X), rtol=0, atol=1e-6
    )
    assert MultiScaleLMNRegressor().memory_matrix == "schur"  # the regressors' default
    with pytest.raises(ValueError, match="memory_matrix"):
        MultiScaleLMNRegressor(memory_matrix="orthogonal", max_iter=1).fit(X, y)
