"""A memory matrix whose spectral radius stays below one by construction.

The memory matrix ``W_mm`` of an LMN is held in real Schur form: a
quasi-upper-triangular matrix ``T`` whose diagonal blocks are ``1 x 1`` (a
real eigenvalue) or ``2 x 2`` (a pair of complex conjugate eigenvalues), the
strictly upper part free. The eigenvalues of a block-triangular matrix are
those of its diagonal blocks, so bounding each block's eigenvalues bounds
the spectral radius of ``T``, whatever the free upper part holds:

* a ``1 x 1`` block is ``lambda = r_max tanh(a)``, in ``(-r_max, r_max)``;
* a ``2 x 2`` block is ``r [[cos t, -k sin t], [sin t / k, cos t]]`` with
  ``r = r_max exp(-exp(nu))`` in ``(0, r_max)``, angle ``t`` and shape
  ``k = exp(kappa) > 0``; its eigenvalues are ``r exp(+-i t)``.

``r_max`` (:data:`R_MAX`, a float32 number below one) keeps the bound strict
in float32, where ``exp(-exp(nu))`` rounds to 1 for ``nu <= -20``. Every
standardized block of a real Schur decomposition (equal diagonal entries,
off-diagonal entries of opposite signs) has this form, so any matrix ``B``
of spectral radius below ``r_max`` is represented exactly up to an
orthogonal change of the memory coordinates: ``B = Q T Q^T``
(:func:`real_schur`), and the network's other weights absorb ``Q``. The
math and the measurements are in ``docs/memory.md``.

The feedback through the hidden layer, ``W_hm D W_mh`` with ``D`` the
(diagonal, in ``[0, I]``) derivative of the tanh, is bounded separately by
:func:`feedback_gain` (a small-gain argument in a diagonally scaled norm).

Pure PyTorch and NumPy/SciPy; no scikit-learn.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import torch
from torch import Tensor, nn

__all__ = [
    "R_MAX",
    "SchurMemory",
    "feedback_gain",
    "module_bounds",
    "quasi_triangular_radius",
    "real_schur",
]

#: Largest eigenvalue modulus of the memory matrix (``1 - 2**-16``, exact in
#: float32 and float64).
R_MAX = 1.0 - 2.0**-16

#: ``nu`` and ``kappa`` are clamped to these ranges inside the map (beyond
#: them the map is flat to working precision; the clamp keeps ``exp`` finite
#: so that no gradient is NaN).
_NU_RANGE = (-60.0, 30.0)
_KAPPA_RANGE = (-30.0, 30.0)

#: Kinds of memory coordinates (the ``kind`` buffer).
ONE, FIRST, SECOND = 0, 1, 2


def module_bounds(size: int, module_size=None) -> list[tuple[int, int]]:
    """``(start, stop)`` of every module of a memory of ``size`` units.

    ``module_size`` is None (one module), an int dividing ``size`` (modules
    of that size) or a sequence of positive ints summing to ``size`` (the
    modules' sizes in order).

    Examples
    --------
    >>> module_bounds(6, 2), module_bounds(6, (4, 1, 1))
    ([(0, 2), (2, 4), (4, 6)], [(0, 4), (4, 5), (5, 6)])
    """
    if module_size is None:
        return [(0, size)]
    if isinstance(module_size, int) and not isinstance(module_size, bool):
        if module_size < 1 or size % module_size:
            raise ValueError(
                f"module_size must be a positive int dividing {size}, got "
                f"{module_size!r}"
            )
        return [(s, s + module_size) for s in range(0, size, module_size)]
    sizes = tuple(module_size) if isinstance(module_size, tuple | list) else None
    if (
        not sizes
        or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes)
        or sum(sizes) != size
    ):
        raise ValueError(
            "module_size must be a positive int dividing "
            f"{size} or a sequence of positive ints summing to {size}, got "
            f"{module_size!r}"
        )
    stops = np.cumsum(sizes).tolist()
    return list(zip([0, *stops[:-1]], stops, strict=True))


def _block_kinds(size: int, module_size=None) -> Tensor:
    """All 2 x 2 blocks (a trailing 1 x 1 per module of odd size)."""
    kind = torch.zeros(size, dtype=torch.int64)
    for start, stop in module_bounds(size, module_size):
        for i in range(start, stop - 1, 2):
            kind[i], kind[i + 1] = FIRST, SECOND
    return kind


def _standardize_2x2(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A rotation ``R`` and ``R^T A R`` for a ``2 x 2`` block ``A``.

    Complex eigenvalues: equal diagonal entries (off-diagonal entries then of
    opposite signs). Real eigenvalues: upper triangular.
    """
    p, q, s, t = A[0, 0], A[0, 1], A[1, 0], A[1, 1]
    disc = 0.25 * (p - t) ** 2 + q * s
    if disc < 0:
        phi = 0.5 * math.atan2(-(p - t), q + s)
        c, sn = math.cos(phi), math.sin(phi)
        R = np.array([[c, -sn], [sn, c]])
    else:
        lam = 0.5 * (p + t) + math.copysign(math.sqrt(disc), 0.5 * (p + t) or 1.0)
        # eigenvector of lam: (A - lam I) v = 0
        v = np.array([q, lam - p]) if abs(q) + abs(lam - p) > 0 else None
        if v is None or not np.any(v):
            v = np.array([lam - t, s])
        if not np.any(v):
            v = np.array([1.0, 0.0])
        v = v / np.linalg.norm(v)
        R = np.array([[v[0], -v[1]], [v[1], v[0]]])
    return R, R.T @ A @ R


def real_schur(
    B: np.ndarray, module_size: int | tuple | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Real Schur decomposition ``B = Q T Q^T`` with standardized blocks.

    Parameters
    ----------
    B : ndarray of shape (M, M)
        Square matrix; float64 is used.
    module_size : int or tuple of int, optional
        With a block upper-triangular ``B`` of modules of this size, or of
        these sizes in order (the multi-scale LMN), ``Q`` is block diagonal
        (one orthogonal block per module) and each module's diagonal block
        is decomposed; the off-diagonal blocks become ``Q_k^T B_kj Q_j``.
        None: one module.

    Returns
    -------
    Q : ndarray of shape (M, M)
        Orthogonal.
    T : ndarray of shape (M, M)
        Quasi-upper-triangular: exact zeros below the diagonal except the
        subdiagonal entry of each ``2 x 2`` block; each ``2 x 2`` block has
        equal diagonal entries and off-diagonal entries of opposite signs.
    kind : ndarray of shape (M,)
        0 for a ``1 x 1`` block, 1 and 2 for the two coordinates of a
        ``2 x 2`` block.

    Examples
    --------
    >>> B = np.array([[0.5, -0.8], [0.6, 0.1]])
    >>> Q, T, kind = real_schur(B)
    >>> bool(np.allclose(Q @ T @ Q.T, B)), kind.tolist()
    (True, [1, 2])
    """
    B = np.asarray(B, dtype=np.float64)
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"B must be a square matrix, got shape {B.shape}")
    if not np.all(np.isfinite(B)):
        raise ValueError("B must be finite")
    M = B.shape[0]
    Q = np.zeros((M, M))
    kind = np.zeros(M, dtype=np.int64)
    standard = np.zeros((M, M))  # the standardized blocks T_k
    for start, stop in module_bounds(M, module_size):
        rows, size = slice(start, stop), stop - start
        T_k, Q_k = scipy.linalg.schur(B[rows, rows], output="real")
        i = 0
        while i < size:
            if i + 1 < size and T_k[i + 1, i] != 0.0:
                R, _ = _standardize_2x2(T_k[i : i + 2, i : i + 2])
                G = np.eye(size)
                G[i : i + 2, i : i + 2] = R
                T_k, Q_k = G.T @ T_k @ G, Q_k @ G
                block = T_k[i : i + 2, i : i + 2]
                if block[0, 1] * block[1, 0] < 0:  # complex pair
                    kind[start + i], kind[start + i + 1] = FIRST, SECOND
                    T_k[i, i] = T_k[i + 1, i + 1] = 0.5 * (block[0, 0] + block[1, 1])
                    i += 2
                    continue
                T_k[i + 1, i] = 0.0  # real pair, triangularized
            i += 1
        Q[rows, rows] = Q_k
        standard[rows, rows] = T_k
    T = Q.T @ B @ Q
    # exact zeros where the structure has them
    mask = _structure_mask(kind)
    T = np.where(mask, T, 0.0)
    _keep_pair_signs(T, np.flatnonzero(kind == FIRST), standard)
    for i in np.flatnonzero(kind == FIRST):
        T[i, i] = T[i + 1, i + 1] = 0.5 * (T[i, i] + T[i + 1, i + 1])
    return Q, T, kind


def _keep_pair_signs(T: np.ndarray, firsts: np.ndarray, standard: np.ndarray) -> None:
    """Off-diagonal entries of opposite signs in the ``2 x 2`` blocks of
    ``T`` starting at ``firsts`` (in place).

    A pair of complex eigenvalues close to a double real one has a tiny
    off-diagonal entry, whose sign the recomputation ``Q^T B Q`` can lose to
    rounding: such a block takes the off-diagonal entries of ``standard``
    (the standardized Schur form, equal to the recomputed ones up to
    rounding, with opposite signs).
    """
    for i in firsts:
        if not T[i, i + 1] * T[i + 1, i] < 0:
            T[i, i + 1], T[i + 1, i] = standard[i, i + 1], standard[i + 1, i]


def _structure_mask(kind: np.ndarray) -> np.ndarray:
    """Entries of a quasi-upper-triangular matrix of structure ``kind``."""
    M = kind.shape[0]
    mask = np.triu(np.ones((M, M), dtype=bool))
    first = np.flatnonzero(kind == FIRST)
    mask[first + 1, first] = True
    return mask


def _inverse_params(
    T: np.ndarray, kind: np.ndarray, r_max: float, margin: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """``(eigen, skew, upper)`` whose map gives ``T`` (clamped blocks noted)."""
    M = T.shape[0]
    eigen = np.zeros(M)
    skew = np.zeros(M // 2)
    upper = np.triu(T, 1)
    limit = r_max * (1.0 - margin)
    clamped, excess = 0, 0.0
    for i in range(M):
        if kind[i] == ONE:
            lam = T[i, i]
            if abs(lam) > limit:
                clamped += 1
                excess = max(excess, abs(lam) - limit)
                lam = math.copysign(limit, lam)
            eigen[i] = math.atanh(lam / r_max)
        elif kind[i] == FIRST:
            a, b, c = T[i, i], T[i, i + 1], T[i + 1, i]
            r = math.sqrt(a * a - b * c)
            k = math.sqrt(-b / c)
            theta = math.atan2(c * k, a)
            if r > limit:
                clamped += 2
                excess = max(excess, r - limit)
                r = limit
            eigen[i] = math.log(-math.log(r / r_max)) if r > 0 else _NU_RANGE[1]
            eigen[i + 1] = theta
            skew[i // 2] = math.log(k)
            upper[i, i + 1] = 0.0
    info = {"clamped": clamped, "excess": float(excess)}
    return eigen, skew, upper, info


def quasi_triangular_radius(W: Tensor | np.ndarray, kind=None) -> float:
    """Spectral radius of a quasi-upper-triangular matrix, from its diagonal
    blocks (exact for such a matrix; checks the structure).

    Parameters
    ----------
    W : Tensor or ndarray of shape (M, M)
    kind : array-like of shape (M,), optional
        Block structure (0: ``1 x 1``, 1/2: a ``2 x 2`` block); None reads
        it from the nonzero subdiagonal entries.

    Returns
    -------
    radius : float

    Raises
    ------
    ValueError
        If ``W`` has a nonzero entry outside the structure.

    Examples
    --------
    >>> quasi_triangular_radius(np.array([[0.5, 3.0], [0.0, -0.7]]))
    0.7
    """
    W = W.detach().cpu().double().numpy() if isinstance(W, Tensor) else np.asarray(W)
    M = W.shape[0]
    if kind is None:
        kind = np.zeros(M, dtype=np.int64)
        i = 0
        while i < M - 1:
            if W[i + 1, i] != 0:
                kind[i], kind[i + 1] = FIRST, SECOND
                i += 2
            else:
                i += 1
    kind = np.asarray(kind)
    if np.any(W[~_structure_mask(kind)] != 0):
        raise ValueError("W is not quasi-upper-triangular with the given structure")
    radius = 0.0
    i = 0
    while i < M:
        if kind[i] == FIRST:
            block = W[i : i + 2, i : i + 2]
            radius = max(radius, float(np.abs(np.linalg.eigvals(block)).max()))
            i += 2
        else:
            radius = max(radius, abs(float(W[i, i])))
            i += 1
    return radius


class SchurMemory(nn.Module):
    r"""Memory matrix in real Schur form, spectral radius below ``r_max``.

    ``forward()`` returns the dense ``(M, M)`` matrix ``T`` (call it once per
    forward pass of the network): quasi-upper-triangular, its ``1 x 1``
    blocks ``r_max tanh(a)``, its ``2 x 2`` blocks
    ``r [[cos t, -k sin t], [sin t / k, cos t]]`` with ``r = r_max
    exp(-exp(nu))``, ``k = exp(kappa)``, its strictly upper part free. See
    ``docs/memory.md``.

    Parameters
    ----------
    size : int
        Memory units ``M``.
    module_size : int or tuple of int, optional
        Size of the modules of a multi-scale memory, or their sizes in order
        (summing to ``size``): ``2 x 2`` blocks never straddle two modules.
        None: one module.
    r_max : float, default=R_MAX
        Bound of the eigenvalue moduli, in ``(0, 1)``.
    device, dtype : optional
        Of the parameters.

    Attributes
    ----------
    eigen : Parameter of shape (M,)
        ``a`` of a ``1 x 1`` block; ``nu`` then ``t`` for the two
        coordinates of a ``2 x 2`` block.
    skew : Parameter of shape (M // 2,)
        ``kappa`` of the ``2 x 2`` block starting at coordinate ``i``, at
        index ``i // 2`` (unused entries stay at zero).
    upper : Parameter of shape (M, M)
        The strictly upper part (other entries unused).
    kind : Tensor of shape (M,)
        The block structure (0: ``1 x 1``, 1 and 2: a ``2 x 2`` block), a
        buffer saved with the state.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> mem = SchurMemory(4)
    >>> W = mem()
    >>> W.shape, quasi_triangular_radius(W) < 1
    (torch.Size([4, 4]), True)
    >>> B = torch.randn(4, 4, dtype=torch.float64) * 0.3
    >>> mem = SchurMemory(4, dtype=torch.float64)
    >>> Q, info = mem.set_dense_(B)
    >>> torch.allclose(Q @ mem() @ Q.T, B) or info["clamped"] > 0
    True
    """

    def __init__(
        self,
        size: int,
        *,
        module_size: int | tuple | None = None,
        r_max: float = R_MAX,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size must be a positive int, got {size!r}")
        module_bounds(size, module_size)  # validated
        if isinstance(module_size, list | tuple):
            module_size = tuple(module_size)
            if len(set(module_size)) == 1:  # modules of one size: the int
                module_size = module_size[0]
        if not (isinstance(r_max, int | float) and 0 < r_max < 1):
            raise ValueError(f"r_max must be a number in (0, 1), got {r_max!r}")
        self.size = size
        self.module_size = size if module_size is None else module_size
        self.r_max = float(r_max)
        factory = {"device": device, "dtype": dtype}
        self.eigen = nn.Parameter(torch.zeros(size, **factory))
        self.skew = nn.Parameter(torch.zeros(size // 2, **factory))
        self.upper = nn.Parameter(torch.zeros(size, size, **factory))
        self.register_buffer(
            "kind", _block_kinds(size, self.module_size).to(device=device)
        )
        self.reset_ring_()

    def extra_repr(self) -> str:
        s = f"{self.size}"
        if self.module_size != self.size:
            s += f", module_size={self.module_size}"
        return s + f", r_max={self.r_max}"

    @property
    def module_bounds(self) -> list[tuple[int, int]]:
        """``(start, stop)`` of every module's coordinates.

        Examples
        --------
        >>> SchurMemory(5, module_size=(3, 2)).module_bounds
        [(0, 3), (3, 5)]
        """
        return module_bounds(self.size, self.module_size)

    # ------------------------------------------------------------------ #
    def _layout(self) -> tuple[Tensor, ...]:
        """Index tensors and upper mask of the structure ``kind``, cached
        until ``kind`` changes (in place, or replaced by ``to``/loading).

        A layout built under :func:`torch.inference_mode` holds inference
        tensors, which autograd cannot save: it serves inference mode only
        and is rebuilt at the next call outside it."""
        kind = self.kind
        key = (id(kind), kind._version, kind.device, self.upper.dtype)
        cached = getattr(self, "_layout_cache", None)
        inference = torch.is_inference_mode_enabled()
        if (
            cached is not None
            and cached[0] == key
            and (inference or not cached[1][-1].is_inference())
        ):
            return cached[1]
        M = self.size
        one = torch.nonzero(kind == ONE).flatten()
        first = torch.nonzero(kind == FIRST).flatten()
        second = first + 1
        rows = torch.cat([one, first, second, first, second])
        cols = torch.cat([one, first, second, second, first])
        mask = torch.triu(torch.ones(M, M, device=kind.device), 1)
        mask[first, second] = 0.0
        layout = (one, first, first // 2, rows, cols, mask.to(self.upper.dtype))
        self._layout_cache = (key, layout)
        return layout

    def forward(self) -> Tensor:
        """The dense memory matrix ``T`` of shape (M, M)."""
        one, first, pair, rows, cols, mask = self._layout()
        eigen = self.eigen
        lam = self.r_max * torch.tanh(eigen[one])
        nu = eigen[first].clamp(*_NU_RANGE)
        theta = eigen[first + 1]
        k = torch.exp(self.skew[pair].clamp(*_KAPPA_RANGE))
        r = self.r_max * torch.exp(-torch.exp(nu))
        rc, rs = r * torch.cos(theta), r * torch.sin(theta)
        values = torch.cat([lam, rc, rc, -rs * k, rs / k])
        return (self.upper * mask).index_put((rows, cols), values)

    # ------------------------------------------------------------------ #
    @torch.no_grad()
    def reset_ring_(
        self,
        r_min: float = 0.0,
        r_max: float | None = None,
        max_phase: float = math.pi,
        generator: torch.Generator | None = None,
    ) -> SchurMemory:
        """Random start: eigenvalues uniform on a ring, zero upper part.

        The ``2 x 2`` blocks get ``r^2`` uniform in ``[r_min^2, r_max^2]``
        (uniform on the ring, as in Orvieto et al. 2023) and angles uniform
        in ``[0, max_phase]``, ``k = 1``; a ``1 x 1`` block a real
        eigenvalue of modulus uniform in ``[r_min, r_max]`` with a random
        sign. Keeps the structure ``kind``.

        Parameters
        ----------
        r_min : float, default=0.0
        r_max : float, optional
            Default: 0.99 times the bound of the module.
        max_phase : float, default=pi
        generator : torch.Generator, optional

        Returns
        -------
        self : SchurMemory

        Examples
        --------
        >>> mem = SchurMemory(4).reset_ring_(0.5, 0.9)
        >>> bool(((mem.eigenvalue_moduli() >= 0.5 - 1e-6)
        ...       & (mem.eigenvalue_moduli() <= 0.9 + 1e-6)).all())
        True
        """
        hi = 0.99 * self.r_max if r_max is None else float(r_max)
        lo = float(r_min)
        if not 0 <= lo <= hi < self.r_max:
            raise ValueError(
                f"need 0 <= r_min <= r_max < {self.r_max}, got r_min={r_min!r}, "
                f"r_max={r_max!r}"
            )
        M = self.size
        dev, dt = self.eigen.device, self.eigen.dtype
        u = torch.rand(M, generator=generator, dtype=torch.float64)
        radius = torch.sqrt(lo**2 + u * (hi**2 - lo**2))
        phase = max_phase * torch.rand(M, generator=generator, dtype=torch.float64)
        sign = torch.where(
            torch.rand(M, generator=generator, dtype=torch.float64) < 0.5, -1.0, 1.0
        )
        kind = self.kind.cpu()
        eigen = torch.zeros(M, dtype=torch.float64)
        radius = radius.clamp(min=1e-12)
        for i in range(M):
            if kind[i] == ONE:
                eigen[i] = math.atanh(float(sign[i] * radius[i]) / self.r_max)
            elif kind[i] == FIRST:
                eigen[i] = math.log(-math.log(float(radius[i]) / self.r_max))
                eigen[i + 1] = float(phase[i])
        self.eigen.copy_(eigen.to(device=dev, dtype=dt))
        self.skew.zero_()
        self.upper.zero_()
        return self

    @torch.no_grad()
    def set_dense_(
        self, B: Tensor | np.ndarray, margin: float = 1e-6
    ) -> tuple[Tensor, dict]:
        """Set the parameters from a dense matrix ``B``: ``B = Q T Q^T``.

        ``T`` is the real Schur form of ``B`` (per module, see
        :func:`real_schur`), represented exactly unless an eigenvalue has
        modulus above ``r_max (1 - margin)``: such blocks are scaled down to
        that modulus (counted in ``info``). The structure ``kind`` becomes
        that of ``T``. The caller absorbs ``Q`` into the weights that write
        and read the memory (``W_hm <- Q^T W_hm``, ``W_mh <- W_mh Q``, the
        readers of the memory output ``<- (.) Q``).

        Parameters
        ----------
        B : Tensor or ndarray of shape (M, M)
        margin : float, default=1e-6

        Returns
        -------
        Q : Tensor of shape (M, M)
            Float64, orthogonal (block diagonal per module).
        info : dict
            ``'clamped'``: number of eigenvalues moved to the bound;
            ``'excess'``: the largest modulus removed from one.

        Examples
        --------
        >>> B = torch.tensor([[0.5, -0.8], [0.6, 0.1]], dtype=torch.float64)
        >>> mem = SchurMemory(2, dtype=torch.float64)
        >>> Q, info = mem.set_dense_(B)
        >>> torch.allclose(Q @ mem() @ Q.T, B), info["clamped"]
        (True, 0)
        """
        B_np = B.detach().cpu().double().numpy() if isinstance(B, Tensor) else B
        B_np = np.asarray(B_np, dtype=np.float64)
        if B_np.shape != (self.size, self.size):
            raise ValueError(
                f"B must have shape {(self.size, self.size)}, got {B_np.shape}"
            )
        Q, T, kind = real_schur(B_np, self.module_size)
        eigen, skew, upper, info = _inverse_params(T, kind, self.r_max, margin)
        dev, dt = self.eigen.device, self.eigen.dtype
        self.kind.copy_(torch.as_tensor(kind, device=dev))
        self.eigen.copy_(torch.as_tensor(eigen, device=dev, dtype=dt))
        self.skew.copy_(torch.as_tensor(skew, device=dev, dtype=dt))
        self.upper.copy_(torch.as_tensor(upper, device=dev, dtype=dt))
        return torch.as_tensor(Q), info

    @torch.no_grad()
    def set_quasi_triangular_(
        self, T: Tensor | np.ndarray, margin: float = 1e-6
    ) -> dict:
        """Set the parameters from a matrix already in the structure ``kind``.

        ``T`` must be quasi-upper-triangular with the ``2 x 2`` blocks of
        ``kind``, each with equal diagonal entries and off-diagonal entries
        of opposite signs (e.g. the module's own matrix after a diagonal
        change of the memory coordinates). No rotation: ``Q = I``.

        Parameters
        ----------
        T : Tensor or ndarray of shape (M, M)
        margin : float, default=1e-6

        Returns
        -------
        info : dict
            As for :meth:`set_dense_`.

        Examples
        --------
        >>> mem = SchurMemory(3, dtype=torch.float64)
        >>> mem.kind.tolist()
        [1, 2, 0]
        >>> T = torch.tensor([[0.1, -0.4, 2.0], [0.3, 0.1, 1.0], [0.0, 0.0, -0.5]],
        ...                  dtype=torch.float64)
        >>> info = mem.set_quasi_triangular_(T)
        >>> torch.allclose(mem(), T)
        True
        """
        T_np = T.detach().cpu().double().numpy() if isinstance(T, Tensor) else T
        T_np = np.asarray(T_np, dtype=np.float64)
        kind = self.kind.cpu().numpy()
        if T_np.shape != (self.size, self.size):
            raise ValueError(
                f"T must have shape {(self.size, self.size)}, got {T_np.shape}"
            )
        if not np.all(np.isfinite(T_np)):
            raise ValueError("T must be finite")
        if np.any(T_np[~_structure_mask(kind)] != 0):
            raise ValueError("T is not quasi-upper-triangular with this structure")
        for i in np.flatnonzero(kind == FIRST):
            if not T_np[i, i + 1] * T_np[i + 1, i] < 0:
                raise ValueError(
                    f"the 2 x 2 block of T at {i} must have off-diagonal entries "
                    f"of opposite signs (complex eigenvalues), got "
                    f"{T_np[i, i + 1]!r} and {T_np[i + 1, i]!r}"
                )
        eigen, skew, upper, info = _inverse_params(T_np, kind, self.r_max, margin)
        dev, dt = self.eigen.device, self.eigen.dtype
        self.eigen.copy_(torch.as_tensor(eigen, device=dev, dtype=dt))
        self.skew.copy_(torch.as_tensor(skew, device=dev, dtype=dt))
        self.upper.copy_(torch.as_tensor(upper, device=dev, dtype=dt))
        return info

    @torch.no_grad()
    def set_module_dense_(
        self, k: int, B: Tensor | np.ndarray, margin: float = 1e-6
    ) -> tuple[Tensor, dict]:
        """Set the diagonal block of module ``k`` to ``B``, the other
        modules' coordinates kept.

        ``B = Q_k T_k Q_k^T`` (:func:`real_schur`): module ``k``'s
        coordinates turn by ``Q_k``, so the off-diagonal blocks it reads and
        is read through become ``W_jk Q_k`` and ``Q_k^T W_kj``; the
        parameters of the other modules' diagonal blocks and of the entries
        outside module ``k``'s rows and columns are unchanged. The caller
        absorbs ``Q_k`` into the weights of module ``k`` (its rows of
        ``W_hm``, its columns of ``W_mh`` and of what reads the memory).

        Parameters
        ----------
        k : int
            Module index (``0`` for the first module).
        B : Tensor or ndarray of shape (N_k, N_k)
            ``N_k`` is module ``k``'s size.
        margin : float, default=1e-6
            As for :meth:`set_dense_`.

        Returns
        -------
        Q_k : Tensor of shape (N_k, N_k)
            Float64, orthogonal.
        info : dict
            As for :meth:`set_dense_`.

        Examples
        --------
        >>> mem = SchurMemory(4, module_size=2, dtype=torch.float64)
        >>> B = torch.tensor([[0.5, -0.8], [0.6, 0.1]], dtype=torch.float64)
        >>> before = mem()[:2, :2].clone()
        >>> Q, info = mem.set_module_dense_(1, B)
        >>> torch.allclose(Q @ mem()[2:, 2:] @ Q.T, B)
        True
        >>> torch.equal(mem()[:2, :2], before)
        True
        """
        M, bounds = self.size, self.module_bounds
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(bounds):
            raise ValueError(
                f"module index must be an int in 0..{len(bounds) - 1}, got {k!r}"
            )
        start, stop = bounds[k]
        N = stop - start
        B_np = B.detach().cpu().double().numpy() if isinstance(B, Tensor) else B
        B_np = np.asarray(B_np, dtype=np.float64)
        if B_np.shape != (N, N):
            raise ValueError(f"B must have shape {(N, N)}, got {B_np.shape}")
        rows = slice(start, stop)
        Q_k, T_k, kind_k = real_schur(B_np)
        W = self().detach().cpu().double().numpy()
        W[rows, rows] = B_np
        Q = np.eye(M)
        Q[rows, rows] = Q_k
        T = Q.T @ W @ Q
        kind_old = self.kind.cpu().numpy()
        kind = kind_old.copy()
        kind[rows] = kind_k
        T = np.where(_structure_mask(kind), T, 0.0)
        firsts = start + np.flatnonzero(kind_k == FIRST)
        _keep_pair_signs(T[rows, rows], firsts - start, T_k)
        for i in firsts:
            T[i, i] = T[i + 1, i + 1] = 0.5 * (T[i, i] + T[i + 1, i + 1])
        # the parameters of module k's diagonal block alone: the other
        # modules' blocks are kept (and neither inverted nor counted in info)
        eigen_k, skew_k, _, info = _inverse_params(
            T[rows, rows], kind_k, self.r_max, margin
        )
        eigen = np.zeros(M)
        eigen[rows] = eigen_k
        skew = np.zeros(M // 2)
        for i in firsts:
            skew[i // 2] = skew_k[(i - start) // 2]
        upper = np.triu(T, 1)
        upper[firsts, firsts + 1] = 0.0  # held by eigen and skew
        dev, dt = self.eigen.device, self.eigen.dtype
        # skew entries of module k's old and new 2 x 2 blocks
        old_firsts = start + np.flatnonzero(kind_old[rows] == FIRST)
        pairs = sorted({int(i) // 2 for i in np.concatenate([firsts, old_firsts])})
        self.kind.copy_(torch.as_tensor(kind, device=dev))
        self.eigen[rows] = torch.as_tensor(eigen[rows], device=dev, dtype=dt)
        if pairs:
            self.skew[pairs] = torch.as_tensor(skew[pairs], device=dev, dtype=dt)
        upper_t = torch.as_tensor(upper, device=dev, dtype=dt)
        self.upper[rows, :] = upper_t[rows, :]
        self.upper[:, rows] = upper_t[:, rows]
        return torch.as_tensor(Q_k), info

    @torch.no_grad()
    def grown(self, n_new: int, module_size: int | None = None) -> SchurMemory:
        """A copy with ``n_new`` more modules, their blocks exactly zero.

        The new coordinates are ``1 x 1`` blocks with eigenvalue zero and a
        zero upper part (no old module reads them); the old parameters,
        structure and ``requires_grad`` flags are kept.

        Parameters
        ----------
        n_new : int
            Number of modules to add.
        module_size : int, optional
            Units of each new module (default: those of the last module).

        Returns
        -------
        memory : SchurMemory

        Examples
        --------
        >>> mem = SchurMemory(2, module_size=2, dtype=torch.float64)
        >>> big = mem.grown(1)
        >>> torch.equal(big()[:2, :2], mem()), bool((big()[2:] == 0).all())
        (True, True)
        """
        if isinstance(n_new, bool) or not isinstance(n_new, int) or n_new < 1:
            raise ValueError(f"n_new must be a positive int, got {n_new!r}")
        bounds = self.module_bounds
        sizes = [stop - start for start, stop in bounds]
        N = sizes[-1] if module_size is None else module_size
        if isinstance(N, bool) or not isinstance(N, int) or N < 1:
            raise ValueError(f"module_size must be a positive int, got {N!r}")
        M_old = self.size
        dev, dt = self.eigen.device, self.eigen.dtype
        new = SchurMemory(
            M_old + n_new * N,
            module_size=(*sizes, *[N] * n_new),
            r_max=self.r_max,
            device=dev,
            dtype=dt,
        )
        new.kind.fill_(ONE)
        new.kind[:M_old] = self.kind
        new.eigen.zero_()
        new.eigen[:M_old] = self.eigen
        new.skew.zero_()
        new.skew[: self.skew.shape[0]] = self.skew
        new.upper.zero_()
        new.upper[:M_old, :M_old] = self.upper
        for name in ("eigen", "skew", "upper"):
            getattr(new, name).requires_grad_(getattr(self, name).requires_grad)
        return new

    def eigenvalue_moduli(self) -> Tensor:
        """Modulus of the eigenvalue(s) of each coordinate's block, shape (M,).

        Examples
        --------
        >>> mem = SchurMemory(1, dtype=torch.float64)
        >>> _ = mem.set_dense_(torch.tensor([[-0.25]], dtype=torch.float64))
        >>> mem.eigenvalue_moduli()
        tensor([0.2500], dtype=torch.float64)
        """
        with torch.no_grad():
            # read off the block parameters (as forward builds the blocks):
            # |r_max tanh(a)| for a 1 x 1 block, r for both coordinates of a
            # 2 x 2 block (its determinant is r^2 whatever k and the angle)
            one, first, *_ = self._layout()
            eigen = self.eigen
            out = torch.empty(self.size, dtype=eigen.dtype, device=eigen.device)
            out[one] = (self.r_max * torch.tanh(eigen[one])).abs()
            nu = eigen[first].clamp(*_NU_RANGE)
            out[first] = out[first + 1] = self.r_max * torch.exp(-torch.exp(nu))
        return out


# --------------------------------------------------------------------------- #
# The feedback bound
# --------------------------------------------------------------------------- #
#: Ratios of the geometric scalings tried by :func:`feedback_gain`.
_SCALINGS = (1.0, 0.5, 0.25, 0.125)


def _block_scaling(T: Tensor, kind: Tensor, ratio: float) -> Tensor:
    """Diagonal scaling ``s`` making each ``2 x 2`` block a scaled rotation
    and shrinking the upper part by ``ratio`` per block."""
    M = T.shape[0]
    with torch.no_grad():
        is_first = kind == FIRST
        block = torch.cumsum((kind != SECOND).to(torch.float64), 0) - 1
        s = torch.pow(torch.tensor(ratio, dtype=torch.float64), block)
        b = T.diagonal(1).double().abs()
        c = T.diagonal(-1).double().abs()
        k = torch.ones(M, dtype=torch.float64, device=T.device)
        if M > 1:
            first = is_first[:-1]
            kk = torch.sqrt(torch.where(first, b / c.clamp(min=1e-300), 1.0))
            kk = torch.where(first & (b > 0) & (c > 0), kk, 1.0)
            half = torch.sqrt(kk)
            k[:-1] = torch.where(first, half, k[:-1])
            k[1:] = torch.where(first, 1.0 / half, k[1:])
        return (s.to(T.device) * k).to(T.dtype)


def feedback_gain(
    T: Tensor,
    kind: Tensor,
    weight_hm: Tensor,
    weight_mh: Tensor,
    *,
    budget: float = 0.95,
) -> Tensor:
    r"""Factor ``g`` in ``[0, 1]`` that bounds the feedback of the memory map.

    For a diagonal scaling ``S`` (chosen among a few by :func:`_block_scaling`:
    each ``2 x 2`` block of ``T`` turned into a scaled rotation, the upper
    part shrunk geometrically), and every diagonal ``D`` with entries in
    ``[0, 1]``:

    .. math::

        \rho(T + g W_{hm} D W_{mh}) \le \|S^{-1} T S\|_2
            + g \|S^{-1} W_{hm}\|_2 \|W_{mh} S\|_2

    (the spectral radius is similarity invariant and bounded by any
    operator norm). ``g`` is the largest factor, at most one, that keeps the
    right side at most ``gamma + budget (1 - gamma)`` with ``gamma =
    ||S^{-1} T S||_2``, for the best of the scalings; zero when ``gamma >= 1``
    for all of them (then the map is ``T`` itself, of radius below one).
    Differentiable in the weights (the scaling is held fixed).

    Parameters
    ----------
    T : Tensor of shape (M, M)
        The memory matrix (quasi-upper-triangular).
    kind : Tensor of shape (M,)
        Its block structure.
    weight_hm : Tensor of shape (M, H)
    weight_mh : Tensor of shape (H, M)
    budget : float, default=0.95
        Fraction of the margin ``1 - gamma`` the feedback may use.

    Returns
    -------
    g : Tensor of shape ()

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> mem = SchurMemory(4)
    >>> W_hm, W_mh = torch.randn(4, 3), torch.randn(3, 4)
    >>> g = feedback_gain(mem(), mem.kind, W_hm, W_mh)
    >>> bool(0 < g <= 1)
    True
    """
    best = None
    for ratio in _SCALINGS:
        s = _block_scaling(T, kind, ratio)
        scaled = T * s.unsqueeze(0) / s.unsqueeze(1)
        gamma = torch.linalg.matrix_norm(scaled, ord=2)
        if float(gamma.detach()) >= 1.0:
            continue
        a = torch.linalg.matrix_norm(weight_hm / s.unsqueeze(1), ord=2)
        b = torch.linalg.matrix_norm(weight_mh * s.unsqueeze(0), ord=2)
        room = budget * (1.0 - gamma)
        g = torch.clamp(room / (a * b).clamp(min=torch.finfo(T.dtype).tiny), max=1.0)
        if best is None or float(g.detach()) > float(best.detach()):
            best = g
    if best is None:
        return torch.zeros((), dtype=T.dtype, device=T.device)
    return best
