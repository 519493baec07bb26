"""Parametrizations of square recurrent weights (ENRNN, scoRNN).

Two constraints from Helfrich & Ye 2020 (*Eigenvalue Normalized
Recurrent Neural Networks for Short Term Memory*), in the shape of
:mod:`torch.nn.utils.parametrizations`: a small private :class:`~torch.nn.Module`
registered on a module's tensor by a public function.

- :func:`spectral_radius_normalization`: ``W = T / (rho(T) + eps)`` where
  ``rho`` is the spectral radius (largest eigenvalue modulus), Helfrich & Ye 2020 §3.1,
  with the latch rule of Helfrich & Ye 2020 §4. This is *not*
  :func:`torch.nn.utils.parametrizations.spectral_norm`, which divides by the
  largest singular value.
- :func:`cayley_orthogonal`: the scaled Cayley transform of scoRNN
  (Helfrich, Willmott & Ye 2018), ``W = (I + A)^{-1} (I - A) D`` with ``A``
  skew-symmetric and ``D = diag(+-1)``.

:func:`spectral_radius` is the differentiable spectral radius behind the
normalization; its backward is the derivative of Helfrich & Ye 2020 Proposition 3.2.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor, nn
from torch.autograd.function import once_differentiable
from torch.nn.utils import parametrize

from ._base import check_finite_matrix, drop_transient_attributes, finite_eigvals
from ._torch_compat import original_class, restore_parametrized_class

__all__ = [
    "PicklableParametrizationsMixin",
    "SpectralRadiusNormalization",
    "cayley_orthogonal",
    "scaled_rotation_init_",
    "scornn_skew_init_",
    "spectral_radius",
    "spectral_radius_normalization",
]


# --------------------------------------------------------------------------- #
# Spectral radius with the gradient of Helfrich & Ye 2020 Proposition 3.2
# --------------------------------------------------------------------------- #
class _SpectralRadius(torch.autograd.Function):
    """``rho(T) = max_k |lambda_k(T)|`` with an eigenvector-based backward.

    For a simple dominant eigenvalue ``lambda = alpha + i beta`` with right and
    left eigenvectors ``T u = lambda u``, ``v^* T = lambda v^*`` (Helfrich & Ye 2020
    Prop. 3.2), ``d lambda / d T = S = conj(v) u^T / (v^* u)`` and, since
    ``rho = |lambda|``,

        d rho / d T = (alpha Re S + beta Im S) / rho = Re(conj(lambda) S) / rho.

    With the eigendecomposition ``T = V diag(lambda) V^{-1}`` the left
    eigenvector of ``lambda_k`` is row ``k`` of ``V^{-1}`` (already normalized
    so that ``v^* u = 1``); it is obtained with one linear solve
    ``V^T w = e_k``, so ``S = w u^T``. ``S`` (hence the gradient) does not
    depend on the scaling or phase of ``u`` and ``v``, and choosing
    ``lambda`` or ``conj(lambda)`` of a complex pair gives the same real
    gradient (Helfrich & Ye 2020, note after Prop. 3.2).
    """

    @staticmethod
    def forward(ctx, T: Tensor) -> Tensor:  # type: ignore[override]
        if not ctx.needs_input_grad[0]:
            return finite_eigvals(T).abs().max()
        check_finite_matrix(T)
        eigvals, eigvecs = torch.linalg.eig(T)
        k = eigvals.abs().argmax()  # a tensor index: no device sync
        lam = eigvals[k]
        rho = lam.abs()
        right = eigvecs[:, k]
        e_k = torch.nn.functional.one_hot(k, T.shape[0]).to(eigvecs.dtype)
        left, _ = torch.linalg.solve_ex(eigvecs.mT, e_k)
        # Eigenvalue condition number ||u|| ||v|| / |v^* u| (here v^* u = 1).
        cond = torch.linalg.vector_norm(right) * torch.linalg.vector_norm(left)
        ctx.save_for_backward(lam, right, left, rho, cond)
        return rho

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_rho: Tensor) -> Tensor:  # type: ignore[override]
        lam, right, left, rho, cond = ctx.saved_tensors
        dlam = torch.outer(left, right)  # S of Prop. 3.2
        # A nilpotent T has rho = 0 = lambda: the numerator is then 0 too.
        tiny = torch.finfo(rho.dtype).tiny
        drho = (lam.conj() * dlam).real / rho.clamp_min(tiny)
        # Near a defective (double) dominant eigenvalue the derivative does not
        # exist and S blows up; then rho is held constant for this step, as
        # Helfrich & Ye 2020 suggest after Prop. 3.2 (plain steps until the
        # eigenvalues separate).
        limit = 1.0 / math.sqrt(torch.finfo(rho.dtype).eps)
        ok = cond <= limit  # False for inf/nan too
        return torch.where(ok, grad_rho * drho, torch.zeros_like(drho))


def spectral_radius(T: Tensor) -> Tensor:
    """Differentiable spectral radius ``max_k |lambda_k(T)|`` of a square matrix.

    The gradient is ``Re(conj(lambda) S) / |lambda|`` with ``S`` the
    eigenvalue derivative of Helfrich & Ye 2020 Proposition 3.2, computed from the right
    and left eigenvectors of the dominant eigenvalue ``lambda`` (assumed simple;
    for a complex-conjugate pair either member gives the same gradient).
    When ``lambda`` is ill-conditioned (condition number
    ``||u|| ||v|| / |v^* u|`` above ``1 / sqrt(machine epsilon)``, as next to a
    defective double eigenvalue, where the derivative does not exist) the
    gradient is zero: ``rho`` is held constant for that step, the remedy
    Helfrich & Ye 2020 suggest after Prop. 3.2.

    Parameters
    ----------
    T : Tensor of shape (n, n)
        Real square matrix (float32 or float64, any device).

    Returns
    -------
    rho : Tensor
        Scalar tensor of the dtype of ``T``.

    Examples
    --------
    >>> T = torch.tensor([[0.0, -2.0], [2.0, 0.0]])  # eigenvalues +-2i
    >>> spectral_radius(T)
    tensor(2.)
    >>> T = torch.tensor([[3.0, 1.0], [0.0, -1.0]], requires_grad=True)
    >>> spectral_radius(T).backward()
    >>> T.grad  # d rho / d T = v u^T / (v^T u) for the eigenvalue 3
    tensor([[1.0000, 0.0000],
            [0.2500, 0.0000]])
    """
    if not isinstance(T, Tensor) or T.dim() != 2 or T.shape[0] != T.shape[1]:
        shape = tuple(T.shape) if isinstance(T, Tensor) else type(T).__name__
        raise ValueError(f"T must be a square matrix (n, n), got {shape}")
    if not T.is_floating_point():
        raise ValueError(f"T must be a floating point tensor, got {T.dtype}")
    return _SpectralRadius.apply(T)


# --------------------------------------------------------------------------- #
# Spectral-radius normalization (Helfrich & Ye 2020 §3.1, latch rule of §4)
# --------------------------------------------------------------------------- #
class SpectralRadiusNormalization(nn.Module):
    """``W = T / (rho(T) + eps)``, switched on by a latch (Helfrich & Ye 2020 §4).

    The parametrization that :func:`spectral_radius_normalization` registers;
    :class:`~sklmn.nn.MultiScaleLMN` applies it directly to its masked memory
    matrix.

    The buffer ``latched`` (bool scalar, saved in the ``state_dict``) records
    that ``rho(T) > 1`` was seen during training; from then on the
    normalization stays on. Before, ``W = T`` while ``rho(T) <= 1``. A
    forward with ``rho(T) > 1`` normalizes in any mode, but only a forward in
    training mode flips the latch, so evaluation never changes the module's
    state and ``rho(W) <= 1`` always holds.

    Parameters
    ----------
    eps : float
        ``eps >= 0`` added to the spectral radius.
    latch : bool
        Apply the latch rule; ``False`` normalizes from the start.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn.parametrizations import SpectralRadiusNormalization
    >>> norm = SpectralRadiusNormalization(eps=0.0, latch=True)
    >>> T = torch.tensor([[0.5, 0.0], [0.0, 2.0]])
    >>> norm.eval()(T)  # evaluation: normalized, the latch stays open
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    >>> bool(norm.latched)
    False
    >>> _ = norm.train()(T)  # a training forward with rho > 1 closes it
    >>> bool(norm.latched), torch.diag(norm(0.5 * T))
    (True, tensor([0.2500, 1.0000]))
    """

    def __init__(self, eps: float, latch: bool) -> None:
        _check_eps_latch(eps, latch)
        super().__init__()
        self.eps = eps
        self.latch = latch
        self.register_buffer("latched", torch.tensor(not latch))

    def _normalize(self, T: Tensor) -> Tensor:
        return T / (spectral_radius(T) + self.eps)

    def forward(self, T: Tensor) -> Tensor:
        if bool(self.latched):
            return self._normalize(T)
        with torch.no_grad():
            rho = float(finite_eigvals(T).abs().max())
        if rho > 1.0:
            if self.training:
                self.latched.fill_(True)
            return self._normalize(T)
        return T

    @torch.no_grad()
    def right_inverse(self, W: Tensor) -> Tensor:
        """Return ``W`` itself as the new ``T`` and reopen the latch.

        Parameters
        ----------
        W : Tensor
            The matrix assigned to the parametrized weight.

        Returns
        -------
        T : Tensor
            ``W`` unchanged.
        """
        # Assigning a weight restarts the latch rule from that matrix: with
        # rho(W) <= 1 the parametrized weight is then exactly W; with
        # rho(W) > 1 it is W normalized (and the latch closes in training).
        if self.latch:
            self.latched.fill_(False)
        return W

    def extra_repr(self) -> str:
        return f"eps={self.eps}, latch={self.latch}"


# The name in pickles written before the class was public.
_SpectralRadiusNormalization = SpectralRadiusNormalization


def _check_eps_latch(eps, latch) -> None:
    if (
        isinstance(eps, bool)
        or not isinstance(eps, numbers.Real)
        or not (0.0 <= float(eps) < math.inf)
    ):
        raise ValueError(f"eps must be a finite float >= 0, got {eps!r}")
    if not isinstance(latch, bool):
        raise ValueError(f"latch must be a bool, got {latch!r}")


def _check_square_tensor(module: nn.Module, name: str) -> Tensor:
    if not isinstance(module, nn.Module):
        raise ValueError(f"module must be a torch.nn.Module, got {type(module)}")
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {name!r}")
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"module {type(module).__name__} has no parameter or buffer {name!r}"
        )
    if weight.dim() != 2 or weight.shape[0] != weight.shape[1]:
        raise ValueError(
            f"{name} must be a square matrix, got shape {tuple(weight.shape)}"
        )
    if not weight.is_floating_point():
        raise ValueError(f"{name} must be floating point, got {weight.dtype}")
    return weight


def spectral_radius_normalization(
    module: nn.Module,
    name: str = "weight",
    *,
    eps: float = 1e-3,
    latch: bool = True,
) -> nn.Module:
    r"""Normalize a square weight by its spectral radius (Helfrich & Ye 2020 §3.1).

    Registers on ``module.<name>`` the parametrization

    .. math:: W = \frac{T}{\rho(T) + \epsilon},

    where :math:`\rho(T)` is the spectral radius of the unconstrained matrix
    ``T`` (the largest eigenvalue modulus, not the largest singular value as
    in :func:`torch.nn.utils.parametrizations.spectral_norm`), so
    :math:`\rho(W) = \rho(T) / (\rho(T) + \epsilon) < 1`. The gradient with
    respect to ``T`` is the derivative of Helfrich & Ye 2020 Proposition 3.2 (see
    :func:`spectral_radius`).

    With ``latch=True`` (Helfrich & Ye 2020 §4), ``W = T`` as long as :math:`\rho(T) \le
    1`; the first forward in training mode that finds :math:`\rho(T) > 1` switches
    the normalization on for good (buffer ``latched``, saved in the
    ``state_dict``). A forward that finds :math:`\rho(T) > 1` normalizes also
    in evaluation mode (without switching the latch), so :math:`\rho(W) \le 1`
    always. Assigning ``module.<name> = value`` stores ``T = value`` and
    re-opens the latch. With ``latch=False`` the normalization is always on.

    Parameters
    ----------
    module : torch.nn.Module
        Module holding the square weight.
    name : str, default="weight"
        Name of a square floating point parameter or buffer of ``module``.
    eps : float, default=1e-3
        :math:`\epsilon \ge 0` of Helfrich & Ye 2020 §3.1 (the paper's experiments, §5,
        use ``eps=0``; then :math:`\rho(W) = 1` once normalized).
    latch : bool, default=True
        Apply the latch rule of Helfrich & Ye 2020 §4; ``False`` normalizes from the
        start.

    Returns
    -------
    module : torch.nn.Module
        ``module`` with the parametrization registered; the unconstrained
        ``T`` is ``module.parametrizations.<name>.original`` (initialized with
        the current value of the weight).

    Notes
    -----
    Every evaluation of the weight costs one eigendecomposition of ``T``
    (:math:`O(n^3)`); read ``module.<name>`` once per forward and pass the
    value on, as sklmn's modules do (:func:`torch.nn.utils.parametrize.cached`
    is a process-wide cache shared by every thread: one model's cached
    weight can then be read by another thread's forward). Proposition 3.2 as printed in
    Helfrich & Ye 2020 write :math:`1/\tilde\rho(T)` for the factor that is
    :math:`1/\rho(T)` in the exact derivative (the two agree for the paper's
    :math:`\epsilon = 0`); autograd here gives the exact derivative.

    Examples
    --------
    >>> lin = torch.nn.Linear(3, 3, bias=False)
    >>> with torch.no_grad():
    ...     lin.weight.copy_(torch.diag(torch.tensor([2.0, 0.5, -1.0])))
    Parameter containing:...
    >>> lin = spectral_radius_normalization(lin, eps=0.0)
    >>> torch.diag(lin.weight.detach())  # rho(T) = 2 > 1: normalized
    tensor([ 1.0000,  0.2500, -0.5000])
    >>> bool(lin.parametrizations.weight[0].latched)
    True
    """
    _check_square_tensor(module, name)
    _check_eps_latch(eps, latch)
    parametrization = SpectralRadiusNormalization(float(eps), latch)
    parametrize.register_parametrization(module, name, parametrization)
    return module


def scaled_rotation_init_(
    tensor: Tensor, generator: torch.Generator | None = None
) -> Tensor:
    r"""Fill a square matrix with scaled 2x2 rotations (Helfrich & Ye 2020 eq. 5).

    ``T = diag(B_1, ..., B_{n//2})`` with
    :math:`B_j = \gamma_j \begin{bmatrix}\cos t_j & -\sin t_j\\
    \sin t_j & \cos t_j\end{bmatrix}`, :math:`t_j \sim U[0, \pi/2)`,
    :math:`\gamma_j \sim U[-1, 1)`, so the eigenvalues are
    :math:`\gamma_j e^{\pm i t_j}`, inside the unit disc. For odd ``n`` the
    last diagonal entry is a 1x1 block :math:`\gamma \sim U[-1, 1)`
    (Helfrich & Ye 2020 do not say).

    Parameters
    ----------
    tensor : Tensor of shape (n, n)
        Matrix to fill in place.
    generator : torch.Generator, optional
        Random generator (default: the global one).

    Returns
    -------
    tensor : Tensor
        The same tensor.

    Examples
    --------
    >>> T = scaled_rotation_init_(torch.empty(4, 4))
    >>> bool(torch.linalg.eigvals(T).abs().max() < 1)
    True
    >>> bool((T[:2, 2:] == 0).all())
    True
    """
    _check_square(tensor, "tensor")
    n = tensor.shape[0]
    m = n // 2
    kwargs = {"dtype": tensor.dtype, "device": "cpu"}
    t = torch.rand(m, generator=generator, **kwargs) * (math.pi / 2)
    gamma = torch.rand(n - m, generator=generator, **kwargs) * 2.0 - 1.0
    T = torch.zeros(n, n, **kwargs)
    idx = torch.arange(m) * 2
    cos, sin = gamma[:m] * torch.cos(t), gamma[:m] * torch.sin(t)
    T[idx, idx] = cos
    T[idx + 1, idx + 1] = cos
    T[idx, idx + 1] = -sin
    T[idx + 1, idx] = sin
    if n % 2:
        T[-1, -1] = gamma[-1]
    with torch.no_grad():
        tensor.copy_(T)
    return tensor


def _check_square(tensor: Tensor, name: str) -> None:
    if not isinstance(tensor, Tensor) or tensor.dim() != 2:
        raise ValueError(f"{name} must be a square matrix tensor, got {tensor!r}")
    if tensor.shape[0] != tensor.shape[1]:
        raise ValueError(
            f"{name} must be a square matrix, got shape {tuple(tensor.shape)}"
        )


# --------------------------------------------------------------------------- #
# Scaled Cayley transform (scoRNN), the long-term matrix of Helfrich & Ye 2020
# --------------------------------------------------------------------------- #
def _signs(n: int, n_negative: int, like: Tensor) -> Tensor:
    """Diagonal of D: the first ``n_negative`` entries are -1, the rest +1."""
    d = torch.ones(n, dtype=like.dtype, device=like.device)
    d[:n_negative] = -1.0
    return d


class _CayleyOrthogonal(nn.Module):
    """``W = (I + A)^{-1} (I - A) D`` with ``A = X_u - X_u^T``.

    ``X_u`` is the strict upper triangle of the stored matrix ``X`` (its
    diagonal and lower triangle are unused), i.e. ``A`` is parametrized by its
    ``n (n - 1) / 2`` free entries as in scoRNN. ``(I + A)`` is invertible
    for every skew-symmetric ``A`` (its eigenvalues are ``1 + i mu``), and the
    result is exactly orthogonal up to rounding.
    """

    def __init__(self, n: int, n_negative: int) -> None:
        super().__init__()
        self.n = n
        self.n_negative = n_negative

    def forward(self, X: Tensor) -> Tensor:
        upper = X.triu(1)
        A = upper - upper.mT
        eye = torch.eye(self.n, dtype=X.dtype, device=X.device)
        # (I + A) and (I - A) commute, so either order of the product is fine.
        Q = torch.linalg.solve(eye + A, eye - A)
        return Q * _signs(self.n, self.n_negative, X)  # Q @ D scales columns

    @torch.no_grad()
    def right_inverse(self, W: Tensor) -> Tensor:
        # The Cayley transform is an involution: Q = C(A) <=> A = C(Q), with
        # Q = W D^{-1} = W D.
        if W.shape != (self.n, self.n):
            raise ValueError(
                f"value must have shape {(self.n, self.n)}, got {tuple(W.shape)}"
            )
        eye = torch.eye(self.n, dtype=W.dtype, device=W.device)
        tol = math.sqrt(torch.finfo(W.dtype).eps)
        err = float((W.mT @ W - eye).abs().max()) if self.n else 0.0
        if err > tol:
            raise ValueError(
                "value must be an orthogonal matrix: max |W^T W - I| = "
                f"{err:.3g} > {tol:.3g}"
            )
        Q = W * _signs(self.n, self.n_negative, W)
        A, info = torch.linalg.solve_ex(eye + Q, eye - Q)
        if (
            int(info) != 0
            or not bool(torch.isfinite(A).all())
            or (float(A.abs().max()) > 1.0 / tol)
        ):
            raise ValueError(
                "value D has an eigenvalue -1 (D = diag(+-1) with "
                f"n_negative={self.n_negative}), which the Cayley transform "
                "cannot represent; change n_negative"
            )
        return (0.5 * (A - A.mT)).triu(1)

    def extra_repr(self) -> str:
        return f"n={self.n}, n_negative={self.n_negative}"


def scornn_skew_init_(
    tensor: Tensor, generator: torch.Generator | None = None
) -> Tensor:
    r"""Fill ``X`` with the scoRNN initialization of the skew-symmetric ``A``.

    Strict upper triangle of the block diagonal ``A = diag(A_1, ...)`` with
    :math:`A_j = \begin{bmatrix} 0 & s_j \\ -s_j & 0 \end{bmatrix}`,
    :math:`s_j = \sqrt{(1 - \cos t_j) / (1 + \cos t_j)} = \tan(t_j / 2)`,
    :math:`t_j \sim U[0, \pi/2)` (Helfrich, Willmott & Ye 2018; Helfrich & Ye 2020 §4
    refers to it). The Cayley transform of ``A_j`` has eigenvalues
    :math:`e^{\pm i t_j}`, spread over the right half of the unit circle.

    Parameters
    ----------
    tensor : Tensor of shape (n, n)
        The unconstrained matrix ``X`` of :func:`cayley_orthogonal`, filled in
        place (zeros outside the first superdiagonal).
    generator : torch.Generator, optional
        Random generator (default: the global one).

    Returns
    -------
    tensor : Tensor
        ``tensor`` itself, filled in place.

    Examples
    --------
    >>> X = scornn_skew_init_(torch.empty(3, 3))
    >>> bool((X.triu(2) == 0).all() and (X.tril() == 0).all())
    True
    """
    _check_square(tensor, "tensor")
    n = tensor.shape[0]
    m = n // 2
    t = torch.rand(m, generator=generator, dtype=tensor.dtype) * (math.pi / 2)
    X = torch.zeros(n, n, dtype=tensor.dtype)
    idx = torch.arange(m) * 2
    X[idx, idx + 1] = torch.tan(t / 2)
    with torch.no_grad():
        tensor.copy_(X)
    return tensor


def cayley_orthogonal(
    module: nn.Module,
    name: str = "weight",
    *,
    n_negative: int = 0,
    generator: torch.Generator | None = None,
) -> nn.Module:
    r"""Constrain a square weight to be orthogonal with the scaled Cayley transform.

    Registers on ``module.<name>`` the scoRNN parametrization (Helfrich,
    Willmott & Ye 2018; the long-term matrix :math:`W^{(L)}` of Helfrich & Ye 2020)

    .. math:: W = (I + A)^{-1} (I - A) D,

    with :math:`A = X_u - X_u^T` skew-symmetric (:math:`X_u` the strict upper
    triangle of the unconstrained ``X``) and ``D`` diagonal with
    ``n_negative`` entries equal to -1 (the first ones) and the others +1.
    ``W`` is orthogonal for every ``X``; ``W D`` never has the eigenvalue -1,
    which is why ``D`` (its number of -1 entries, tuned in Helfrich & Ye 2020 §5)
    matters.

    The current value of the weight is replaced by the scoRNN initialization
    (:func:`scornn_skew_init_`), since an arbitrary matrix has no Cayley
    preimage. Assigning ``module.<name> = value`` afterwards accepts an
    orthogonal ``value`` (``value D`` without eigenvalue -1) and raises
    ``ValueError`` otherwise.

    Parameters
    ----------
    module : torch.nn.Module
        Module holding the square weight.
    name : str, default="weight"
        Name of a square floating point parameter of ``module``.
    n_negative : int, default=0
        Number of -1 entries of ``D``, in ``0..n``.
    generator : torch.Generator, optional
        Random generator of the initialization.

    Returns
    -------
    module : torch.nn.Module
        ``module`` with the parametrization registered; ``X`` is
        ``module.parametrizations.<name>.original``.

    Examples
    --------
    >>> lin = cayley_orthogonal(torch.nn.Linear(4, 4, bias=False), n_negative=1)
    >>> W = lin.weight
    >>> W = W.detach()
    >>> torch.allclose(W.T @ W, torch.eye(4), atol=1e-5)
    True
    >>> round(float(torch.linalg.det(W.detach())), 4)  # det = det(C(A)) det(D) = -1
    -1.0
    """
    weight = _check_square_tensor(module, name)
    n = weight.shape[0]
    if (
        isinstance(n_negative, bool)
        or not isinstance(n_negative, numbers.Integral)
        or not (0 <= int(n_negative) <= n)
    ):
        raise ValueError(
            f"n_negative must be an int in 0..{n} (size of {name}), got {n_negative!r}"
        )
    if parametrize.is_parametrized(module, name):
        raise ValueError(
            f"{name} of {type(module).__name__} is already parametrized; "
            "cayley_orthogonal must be its first parametrization"
        )
    parametrization = _CayleyOrthogonal(n, int(n_negative))
    with torch.no_grad():
        X = scornn_skew_init_(torch.empty(n, n, dtype=weight.dtype), generator)
        weight.copy_(parametrization(X))
    parametrize.register_parametrization(module, name, parametrization)
    return module


# --------------------------------------------------------------------------- #
# Pickling of parametrized modules
# --------------------------------------------------------------------------- #
def _rebuild_parametrized(cls: type, state: dict) -> nn.Module:
    """Unpickle a module pickled by :class:`PicklableParametrizationsMixin`."""
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    # Re-create the per-instance subclass with one property per parametrized
    # tensor, as register_parametrization does; the ParametrizationLists
    # (originals, buffers such as the latch) come back from ``state``
    # unchanged, so no right_inverse is re-run.
    restore_parametrized_class(obj)
    return obj


class PicklableParametrizationsMixin:
    """Make a module with registered parametrizations picklable.

    :func:`torch.nn.utils.parametrize.register_parametrization` swaps the
    module's class for a generated subclass whose ``__getstate__`` refuses to
    pickle, which breaks ``pickle``/``torch.save`` of the whole module (and so
    of estimators holding it). Inheriting from this mixin (before
    :class:`torch.nn.Module`) pickles the instance as its original class plus
    its ``__dict__`` and re-injects the parametrization properties on load.
    The parametrizations, their unconstrained tensors and their buffers are
    restored exactly.

    Examples
    --------
    ``class Net(PicklableParametrizationsMixin, nn.Module)`` makes ``Net``
    instances picklable after registering parametrizations on them;
    :class:`~sklmn.nn.ENRNN` is such a class:

    >>> import pickle
    >>> from sklmn.nn import ENRNN
    >>> net = ENRNN(2, 3, 2)
    >>> net.weight_short = torch.diag(torch.tensor([3.0, 1.0]))
    >>> copy = pickle.loads(pickle.dumps(net))
    >>> torch.diag(copy.weight_short.detach())  # T / (rho(T) + eps)
    tensor([0.9997, 0.3332])
    >>> bool(copy.parametrizations.weight_short[0].latched)
    True
    """

    def __reduce_ex__(self, protocol: int):
        cls = original_class(self)  # type: ignore[arg-type]
        # transient attributes (a recurrent module's recorded penalty) are
        # not part of the state
        state = drop_transient_attributes(self, self.__dict__.copy())
        return (_rebuild_parametrized, (cls, state))
