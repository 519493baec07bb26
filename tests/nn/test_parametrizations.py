"""Tests of sklmn.nn.parametrizations (ENRNN spectral-radius normalization, scoRNN)."""

import numpy as np
import pytest
import scipy.linalg
import torch
from torch import nn
from torch.nn.utils import parametrize

from sklmn.nn._base import memory_map_radius
from sklmn.nn.parametrizations import (
    PicklableParametrizationsMixin,
    SpectralRadiusNormalization,
    cayley_orthogonal,
    scaled_rotation_init_,
    scornn_skew_init_,
    spectral_radius,
    spectral_radius_normalization,
)

DTYPES = [torch.float32, torch.float64]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _matrix_with_dominant(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random real matrix whose dominant eigenvalue is simple and real/complex."""
    if kind == "gaussian":
        return rng.standard_normal((n, n))
    blocks = np.diag(rng.uniform(-0.8, 0.8, n))
    if kind == "real":
        blocks[0, 0] = -1.7
    else:  # complex pair 1.7 exp(+-0.9i)
        c, s = 1.7 * np.cos(0.9), 1.7 * np.sin(0.9)
        blocks[:2, :2] = [[c, -s], [s, c]]
    P = rng.standard_normal((n, n)) + 3 * np.eye(n)
    return P @ blocks @ np.linalg.inv(P)


def _prop32_gradient(T: np.ndarray, G: np.ndarray, eps: float, exact: bool):
    """dL/dT of Helfrich & Ye 2020 Prop. 3.2 from dL/dW = G, scipy's left/right vectors.

    With ``exact=False`` the formula as printed,
    ``1/rt [G - 1/rt 1^T (G o W) 1 C]``; with ``exact=True`` the inner
    ``1/rt`` becomes ``1/rho`` (the exact derivative; equal for eps = 0).
    """
    lam, vl, vr = scipy.linalg.eig(T, left=True, right=True)
    k = np.argmax(np.abs(lam))
    lam_k, u, v = lam[k], vr[:, k], vl[:, k]  # T u = lam u, v^H T = lam v^H
    S = np.outer(v.conj(), u) / (v.conj() @ u)
    C = lam_k.real * S.real + lam_k.imag * S.imag
    rho = abs(lam_k)
    rt = rho + eps
    W = T / rt
    inner = 1.0 / rho if exact else 1.0 / rt
    return (G - inner * np.sum(G * W) * C) / rt


def _autograd_gradient(T: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of L(W) = sum(sin(W) * M) through the registered parametrization."""
    lin = nn.Linear(T.shape[0], T.shape[0], bias=False).double()
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(T))
    spectral_radius_normalization(lin, eps=eps, latch=False)
    M = torch.linspace(-1.0, 1.0, T.size, dtype=torch.float64).reshape(T.shape)
    W = lin.weight
    loss = (torch.sin(W) * M).sum()
    loss.backward()
    G = (torch.cos(W) * M).detach().numpy()  # dL/dW
    return lin.parametrizations.weight.original.grad.numpy(), G


@pytest.mark.parametrize("kind", ["real", "complex", "gaussian"])
@pytest.mark.parametrize("n", [2, 5, 9])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_matches_proposition_3_2_eps0(kind, n, seed):
    rng = np.random.default_rng(seed)
    T = _matrix_with_dominant(kind, n, rng)
    grad, G = _autograd_gradient(T, eps=0.0)
    expected = _prop32_gradient(T, G, eps=0.0, exact=False)
    np.testing.assert_allclose(grad, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("eps", [1e-3, 0.5])
def test_gradient_matches_exact_derivative_eps_positive(kind, eps):
    rng = np.random.default_rng(3)
    T = _matrix_with_dominant(kind, 6, rng)
    grad, G = _autograd_gradient(T, eps=eps)
    expected = _prop32_gradient(T, G, eps=eps, exact=True)
    np.testing.assert_allclose(grad, expected, rtol=1e-7, atol=1e-9)
    # Prop. 3.2 as printed (1/rho_tilde where the derivative has 1/rho)
    # differs for eps > 0: the correction term is scaled by rho / (rho + eps).
    printed = _prop32_gradient(T, G, eps=eps, exact=False)
    if eps == 0.5:
        assert not np.allclose(grad, printed, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("n", [1, 3, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_spectral_radius_gradcheck(n, seed):
    g = torch.Generator().manual_seed(seed)
    T = torch.randn(n, n, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(spectral_radius, (T,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_spectral_radius_value_and_agreement_with_eigvals_autograd(dtype, device):
    g = torch.Generator().manual_seed(0)
    T = torch.randn(7, 7, dtype=dtype, generator=g).to(device).requires_grad_()
    rho = spectral_radius(T)
    expected = np.abs(np.linalg.eigvals(T.detach().cpu().double().numpy())).max()
    assert rho.dtype == dtype and rho.device == T.device
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(float(rho.detach()), expected, rtol=tol)
    (grad,) = torch.autograd.grad(rho, T)
    (ref,) = torch.autograd.grad(torch.linalg.eigvals(T).abs().max(), T)
    torch.testing.assert_close(grad, ref, rtol=100 * tol, atol=100 * tol)


def test_spectral_radius_nilpotent_has_zero_gradient():
    T = torch.tensor([[0.0, 1.0], [0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    rho = spectral_radius(T)
    rho.backward()
    assert float(rho.detach()) == 0.0
    assert torch.isfinite(T.grad).all()


def _linear_with(T: torch.Tensor) -> nn.Linear:
    lin = nn.Linear(T.shape[0], T.shape[0], bias=False).to(T.dtype)
    with torch.no_grad():
        lin.weight.copy_(T)
    return lin


def _rho(W: torch.Tensor) -> float:
    return float(np.abs(np.linalg.eigvals(W.detach().cpu().double().numpy())).max())


def test_latch_before_and_after():
    T = torch.diag(torch.tensor([0.9, -0.5, 0.2], dtype=torch.float64))
    lin = spectral_radius_normalization(_linear_with(T), eps=0.01)
    p = lin.parametrizations.weight[0]
    assert not bool(p.latched)
    # rho(T) <= 1: W = T exactly and the gradient is the plain one.
    torch.testing.assert_close(lin.weight, T, rtol=0, atol=0)
    lin.weight.sum().backward()
    torch.testing.assert_close(
        lin.parametrizations.weight.original.grad, torch.ones(3, 3, dtype=T.dtype)
    )
    # An update makes rho(T) > 1: normalized from then on, the latch closes.
    with torch.no_grad():
        lin.parametrizations.weight.original.mul_(2.0)
    assert abs(_rho(lin.weight) - 1.8 / 1.81) < 1e-12
    assert bool(p.latched)
    # Back below 1: stays normalized (latched).
    with torch.no_grad():
        lin.parametrizations.weight.original.mul_(0.25)
    torch.testing.assert_close(lin.weight, T * 0.5 / (0.45 + 0.01))
    assert bool(p.latched)


def test_latch_not_switched_in_eval_but_still_normalized():
    T = torch.diag(torch.tensor([3.0, 0.5]))
    lin = _linear_with(torch.zeros(2, 2))
    spectral_radius_normalization(lin, eps=0.0)
    lin.eval()
    lin.weight = T  # assignment stores T and keeps the latch open
    p = lin.parametrizations.weight[0]
    W = lin.weight
    torch.testing.assert_close(W, T / 3.0)
    assert not bool(p.latched)
    lin.train()
    _ = lin.weight
    assert bool(p.latched)
    # Assigning a new value re-opens the latch.
    lin.weight = torch.diag(torch.tensor([0.5, 0.25]))
    assert not bool(p.latched)
    torch.testing.assert_close(lin.weight, torch.diag(torch.tensor([0.5, 0.25])))


def test_latch_false_always_normalizes():
    T = torch.diag(torch.tensor([0.5, 0.25], dtype=torch.float64))
    lin = spectral_radius_normalization(_linear_with(T), eps=0.0, latch=False)
    torch.testing.assert_close(lin.weight, T / 0.5)
    lin.weight = T
    assert bool(lin.parametrizations.weight[0].latched)


def test_latch_buffer_in_state_dict_and_dtype_moves():
    lin = spectral_radius_normalization(_linear_with(torch.eye(3) * 2.0))
    key = "parametrizations.weight.0.latched"
    state = lin.state_dict()
    assert key in state and bool(state[key])
    other = spectral_radius_normalization(_linear_with(torch.eye(3) * 0.5))
    other.eval()
    assert not bool(other.parametrizations.weight[0].latched)
    other.load_state_dict(state)
    assert bool(other.parametrizations.weight[0].latched)
    other.double()
    buf = other.parametrizations.weight[0].latched
    assert buf.dtype == torch.bool and bool(buf)
    assert other.weight.dtype == torch.float64


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("eps", [0.0, 1e-3, 0.1])
def test_rho_below_one_after_optimizer_steps(dtype, device, eps):
    g = torch.Generator().manual_seed(0)
    lin = nn.Linear(8, 8, bias=False).to(dtype)
    with torch.no_grad():
        lin.weight.copy_(0.2 * torch.randn(8, 8, generator=g, dtype=dtype))
    lin = spectral_radius_normalization(lin, eps=eps).to(device)
    p = lin.parametrizations.weight[0]
    x = torch.randn(32, 8, generator=g, dtype=dtype).to(device)
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    latched_at = None
    for it in range(30):
        # Loss rewarding amplification: drives rho(T) above 1 quickly.
        loss = -(lin(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if latched_at is None and bool(p.latched):
            latched_at = it
        if latched_at is not None:
            assert bool(p.latched)  # the latch stays closed
            T = lin.parametrizations.weight.original
            rho_t = _rho(T)
            rho_w = _rho(lin.weight)
            tol = 1e-4 if dtype == torch.float32 else 1e-10
            assert rho_w <= 1.0 + tol
            np.testing.assert_allclose(rho_w, rho_t / (rho_t + eps), rtol=tol)
            if eps > 0:
                assert rho_w < 1.0
    assert latched_at is not None


def test_cached_evaluates_once():
    lin = spectral_radius_normalization(_linear_with(2.0 * torch.eye(4)))
    calls = []
    lin.parametrizations.weight[0].register_forward_hook(lambda *a: calls.append(1))
    with parametrize.cached():
        W1, W2 = lin.weight, lin.weight
        assert W1 is W2
    assert len(calls) == 1


@pytest.mark.parametrize("bad_name", ["bias", "nope"])
def test_spectral_normalization_validation_of_tensor(bad_name):
    with pytest.raises(ValueError, match=bad_name if bad_name == "nope" else "square"):
        spectral_radius_normalization(nn.Linear(3, 3), bad_name)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eps": -1e-3}, "eps must be a finite float >= 0, got -0.001"),
        ({"eps": float("nan")}, "eps must be"),
        ({"eps": "0.1"}, "eps must be"),
        ({"latch": 1}, "latch must be a bool, got 1"),
    ],
)
def test_spectral_normalization_validation_of_args(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spectral_radius_normalization(nn.Linear(3, 3), **kwargs)
    # the public class checks its arguments too
    args = {"eps": 1e-3, "latch": True, **kwargs}
    with pytest.raises(ValueError, match=match):
        SpectralRadiusNormalization(**args)


def test_spectral_normalization_rejects_non_square():
    with pytest.raises(ValueError, match=r"square matrix, got shape \(2, 3\)"):
        spectral_radius_normalization(nn.Linear(3, 2))
    with pytest.raises(ValueError, match="square matrix"):
        spectral_radius(torch.zeros(2, 3))


def test_scaled_rotation_init_structure():
    g = torch.Generator().manual_seed(0)
    T = scaled_rotation_init_(torch.empty(7, 7, dtype=torch.float64), generator=g)
    for j in range(3):
        B = T[2 * j : 2 * j + 2, 2 * j : 2 * j + 2]
        gamma = torch.sqrt(B[0, 0] ** 2 + B[1, 0] ** 2)  # |gamma_j|
        assert float(gamma) < 1.0
        torch.testing.assert_close(B[0, 0], B[1, 1])
        torch.testing.assert_close(B[0, 1], -B[1, 0])
        # angle t_j in [0, pi/2): cos and sin share the sign of gamma_j
        assert float(B[0, 0] * B[1, 0]) >= 0.0
    off = T.clone()
    for j in range(3):
        off[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = 0
    off[6, 6] = 0
    assert float(off.abs().max()) == 0.0
    assert -1.0 <= float(T[6, 6]) < 1.0
    assert _rho(T) < 1.0


def _explicit_cayley(X: np.ndarray, n_negative: int) -> np.ndarray:
    A = np.triu(X, 1) - np.triu(X, 1).T
    eye = np.eye(len(X))
    d = np.ones(len(X))
    d[:n_negative] = -1.0
    return np.linalg.inv(eye + A) @ (eye - A) @ np.diag(d)


@pytest.mark.parametrize(
    ("n", "n_negative"),
    [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (5, 0), (5, 3), (8, 1), (8, 4)],
)
def test_cayley_matches_formula_and_is_orthogonal_after_steps(n, n_negative):
    g = torch.Generator().manual_seed(n)
    lin = nn.Linear(n, n, bias=False).double()
    cayley_orthogonal(lin, n_negative=n_negative, generator=g)
    x = torch.randn(16, n, dtype=torch.float64, generator=g)
    y = torch.randn(16, n, dtype=torch.float64, generator=g)
    opt = torch.optim.Adam(lin.parameters(), lr=0.1)
    eye = torch.eye(n, dtype=torch.float64)
    for _ in range(20):
        loss = ((lin(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        W = lin.weight.detach()
        assert float((W.T @ W - eye).abs().max()) < 1e-6
    X = lin.parametrizations.weight.original.detach().numpy()
    np.testing.assert_allclose(
        lin.weight.detach().numpy(), _explicit_cayley(X, n_negative), atol=1e-12
    )
    np.testing.assert_allclose(
        np.linalg.det(lin.weight.detach().numpy()), (-1.0) ** n_negative, atol=1e-10
    )


def test_cayley_initialization_right_half_circle():
    g = torch.Generator().manual_seed(0)
    lin = cayley_orthogonal(nn.Linear(10, 10, bias=False).double(), generator=g)
    lam = np.linalg.eigvals(lin.weight.detach().numpy())
    np.testing.assert_allclose(np.abs(lam), 1.0, atol=1e-12)
    assert (lam.real >= -1e-12).all()  # e^{+-i t}, t in [0, pi/2)
    X = torch.empty(6, 6)
    scornn_skew_init_(X, generator=g)
    # only the entries (0, 1), (2, 3), (4, 5) may be non-zero (structural zeros
    # are compared exactly; comparing two float32 sums would depend on their
    # summation order)
    allowed = torch.zeros(6, 6, dtype=torch.bool)
    allowed[[0, 2, 4], [1, 3, 5]] = True
    assert torch.count_nonzero(X[~allowed]) == 0


@pytest.mark.parametrize("n_negative", [0, 2])
def test_cayley_assignment_roundtrip_and_errors(n_negative):
    g = torch.Generator().manual_seed(1)
    lin = cayley_orthogonal(
        nn.Linear(4, 4, bias=False).double(), n_negative=n_negative, generator=g
    )
    Q, _ = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64, generator=g))
    if torch.linalg.det(Q) * (-1) ** n_negative < 0:
        Q[:, -1] = -Q[:, -1]  # same determinant sign as D: reachable
    lin.weight = Q
    torch.testing.assert_close(lin.weight, Q, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="must be an orthogonal matrix"):
        lin.weight = 2.0 * Q
    d = torch.ones(4, dtype=torch.float64)
    d[:n_negative] = -1
    minus_one = -torch.eye(4, dtype=torch.float64) * d  # W D = -I
    with pytest.raises(ValueError, match="eigenvalue -1"):
        lin.weight = minus_one


@pytest.mark.parametrize(
    ("n_negative", "match"),
    [
        (5, r"n_negative must be an int in 0..4 \(size of weight\), got 5"),
        (-1, "got -1"),
        (True, "got True"),
        (1.0, "got 1.0"),
    ],
)
def test_cayley_validation(n_negative, match):
    with pytest.raises(ValueError, match=match):
        cayley_orthogonal(nn.Linear(4, 4), n_negative=n_negative)


def test_cayley_rejects_non_square_and_parametrized():
    with pytest.raises(ValueError, match="square"):
        cayley_orthogonal(nn.Linear(4, 3))
    lin = cayley_orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="already parametrized"):
        cayley_orthogonal(lin)


@pytest.mark.parametrize("device", DEVICES)
def test_cayley_float32_device(device):
    lin = cayley_orthogonal(nn.Linear(6, 6, bias=False), n_negative=2).to(device)
    W = lin.weight.detach()
    assert W.dtype == torch.float32 and W.device.type == device
    torch.testing.assert_close(W.T @ W, torch.eye(6, device=device), atol=1e-5, rtol=0)


def test_spectral_radius_without_grad_uses_eigenvalues_only():
    T = torch.tensor([[0.0, -2.0], [2.0, 0.5]], dtype=torch.float64)
    expected = np.abs(np.linalg.eigvals(T.numpy())).max()
    with torch.no_grad():
        rho = spectral_radius(T.clone().requires_grad_())
    assert not rho.requires_grad
    # torch's and numpy's LAPACK: two eigensolvers, equal up to rounding
    np.testing.assert_allclose(float(rho), expected, rtol=1e-12)


class _PicklableNet(PicklableParametrizationsMixin, nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.eye(3, dtype=torch.float64) * 2.0)
        self.b = nn.Parameter(torch.ones(3, 3, dtype=torch.float64))


def test_picklable_mixin_on_plain_module():
    import pickle

    plain = pickle.loads(pickle.dumps(_PicklableNet()))
    assert type(plain) is _PicklableNet
    net = _PicklableNet()
    spectral_radius_normalization(net, "a", eps=0.0)
    cayley_orthogonal(net, "b", n_negative=1)
    copy = pickle.loads(pickle.dumps(net))
    assert parametrize.is_parametrized(copy, "a")
    assert parametrize.is_parametrized(copy, "b")
    torch.testing.assert_close(copy.a, net.a, rtol=0, atol=0)
    torch.testing.assert_close(copy.b, net.b, rtol=0, atol=0)
    assert bool(copy.parametrizations.a[0].latched)


@pytest.mark.parametrize("dtype", DTYPES)
def test_spectral_radius_defective_dominant_eigenvalue_has_zero_gradient(dtype):
    # Jordan block: the derivative of rho does not exist (S is unbounded).
    T = torch.tensor([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.5]], dtype=dtype)
    T.requires_grad_()
    rho = spectral_radius(T)
    rho.backward()
    np.testing.assert_allclose(float(rho.detach()), 2.0, rtol=1e-6)
    assert float(T.grad.abs().max()) == 0.0
    # The normalization then gets the plain 1/(rho + eps) part of the gradient.
    lin = spectral_radius_normalization(_linear_with(T.detach()), eps=0.0)
    lin.weight.sum().backward()
    grad = lin.parametrizations.weight.original.grad
    torch.testing.assert_close(grad, torch.full((3, 3), 0.5, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_eigenvalues_of_a_non_finite_matrix_are_refused(dtype, bad):
    # LAPACK's balancing step crashed the process on a float32 NaN matrix
    # (torch.linalg.eigvals); an infinite entry gave NaN eigenvalues
    T = torch.eye(3, dtype=dtype)
    T[0, 1] = bad
    for compute in (
        lambda: spectral_radius(T),
        lambda: spectral_radius(T.clone().requires_grad_()),
        lambda: SpectralRadiusNormalization(1e-3, True)(T),
        lambda: memory_map_radius(T, T, T),
    ):
        with pytest.raises(torch.linalg.LinAlgError, match="NaN or infinite"):
            compute()

