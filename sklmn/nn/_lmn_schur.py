"""The ``memory_matrix='schur'`` option of the LMN layer.

Mixin of :class:`~sklmn.nn.LMNLayer`: ``W_mm`` held in real Schur form by a
:class:`~sklmn.nn._stable_memory.SchurMemory` (spectral radius below one
whatever its parameters), its ring start and :meth:`set_memory_`, which
turns the memory coordinates by the orthogonal ``Q`` accumulated in the
``memory_basis`` buffer (see ``docs/memory.md``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ._stable_memory import SchurMemory

__all__ = ["LMNLayerSchurMixin", "check_ring", "memory_output_basis"]

#: the ring of the LMN's ``'schur'`` memory random start (``r_min, r_max,
#: max_phase``; measured in docs/memory.md, "Training from scratch")
_SCHUR_RING = (0.9, 0.999, math.pi / 20)

#: the same for the multi-scale LMN, whose slower modules see the series at
#: coarser rates (measured there too)
_MULTISCALE_SCHUR_RING = (0.9, 0.999, math.pi / 10)


def check_ring(ring) -> tuple | None:
    """Validate the ring of a ``'schur'`` memory's random start.

    Parameters
    ----------
    ring : tuple (r_min, r_max, max_angle) or None
        Eigenvalue moduli drawn on ``r_min <= |lambda| <= r_max``, angles in
        ``[0, max_angle]``; None: the module's own ring (read when the
        memory is drawn).

    Returns
    -------
    ring : tuple of three floats, or None

    Examples
    --------
    >>> check_ring(None) is None
    True
    >>> check_ring((0.5, 0.99, 1))
    (0.5, 0.99, 1.0)
    >>> check_ring((0.5, 1.0, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: ring must have 0 <= r_min <= r_max < 1, got r_min=0.5, r_max=1.0
    """
    if ring is None:
        return None
    try:
        r_min, r_max, angle = (float(v) for v in ring)
    except (TypeError, ValueError):
        raise ValueError(
            f"ring must be (r_min, r_max, max_angle) or None, got {ring!r}"
        ) from None
    if not (0.0 <= r_min <= r_max < 1.0):
        raise ValueError(
            f"ring must have 0 <= r_min <= r_max < 1, got r_min={r_min!r}, "
            f"r_max={r_max!r}"
        )
    if not (0.0 <= angle <= math.pi):
        raise ValueError(f"ring's max_angle must be in [0, pi], got {angle!r}")
    return (r_min, r_max, angle)


def memory_output_basis(modules) -> Tensor | None:
    """The turn of a memory output back to the start's coordinates.

    ``modules`` are the memories whose states make up the output, side by
    side (one per direction: the LMN's last layers, or the multi-scale LMN
    and its reverse direction). With a ``'schur'`` memory each holds
    ``m = memory_basis m'`` between its coordinates ``m'`` and those of the
    dense matrix it was set to; the block-diagonal matrix ``P`` of the bases
    maps an output row ``o'`` (``(.., F)``) to ``o' P^T``. Without a Schur
    memory (any module) there is no turn: None.

    Parameters
    ----------
    modules : list of nn.Module
        The memories, in the output's order.

    Returns
    -------
    basis : Tensor of shape (F, F) or None

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import LMNLayer
    >>> layer = LMNLayer(2, 3, 3, memory_matrix="schur").double()
    >>> Q = layer.set_memory_(torch.diag(torch.tensor([0.5, 0.8, 0.2])).double())
    >>> memory_output_basis([layer, layer]).shape
    torch.Size([6, 6])
    """
    bases = [getattr(m, "memory_basis", None) for m in modules]
    if any(
        b is None or getattr(m, "memory_matrix", "free") != "schur"
        for m, b in zip(modules, bases, strict=True)
    ):
        return None
    return bases[0] if len(bases) == 1 else torch.block_diag(*bases)


class LMNLayerSchurMixin:
    """The ``'schur'`` memory matrix of one :class:`~sklmn.nn.LMNLayer`."""

    def _add_schur_memory(self, M: int) -> None:
        """Register the Schur parameters of ``W_mm`` (``memory``) and the
        ``memory_basis`` buffer (identity) of an ``M``-unit memory."""
        self.memory = SchurMemory(M)
        self.register_buffer("memory_basis", torch.eye(M))

    def _reset_schur_memory_(self) -> None:
        """Ring start (Orvieto et al. 2023): the rows of ``W_hm`` scaled by
        ``gamma = sqrt(1 - |lambda|^2)`` (their input normalization), the
        basis back to the identity."""
        # modules saved before the ring was a parameter: the default ring
        self.memory.reset_ring_(*(getattr(self, "ring", None) or _SCHUR_RING))
        gamma = torch.sqrt(1 - self.memory.eigenvalue_moduli() ** 2)
        self.weight_hm.mul_(gamma.to(self.weight_hm).unsqueeze(1))
        self.memory_basis.copy_(torch.eye(self.memory_size))

    @property
    def weight_mm(self) -> Tensor:
        """The memory matrix ``W_mm`` (see the class attributes)."""
        if self.__dict__.get("memory_matrix") == "schur":
            return self.memory()
        try:
            return self._parameters["weight_mm"]
        except KeyError:
            raise AttributeError("weight_mm") from None

    @torch.no_grad()
    def set_memory_(self, W: object) -> Tensor:
        """Set the memory matrix of a ``'schur'`` layer to ``W``.

        ``W = Q T Q^T`` (real Schur form, :meth:`SchurMemory.set_dense_`):
        the parameters hold ``T`` and the memory coordinates turn by ``Q``,
        absorbed into ``W_hm <- Q^T W_hm``, ``W_mh <- W_mh Q`` and ``b_m <-
        Q^T b_m``, so that the layer's hidden states are those of a layer
        with ``W_mm = W`` and its memory states are ``Q^T`` times theirs.
        ``memory_basis`` accumulates ``Q``. Eigenvalues of modulus above the
        bound are scaled down to it.

        Parameters
        ----------
        W : array-like of shape (M, M)

        Returns
        -------
        Q : Tensor of shape (M, M)
            Float64, orthogonal.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMNLayer
        >>> layer = LMNLayer(2, 3, 3, memory_matrix="schur").double()
        >>> W = torch.tensor([[0.5, 0.2, 0.0], [-0.3, 0.4, 0.1], [0.0, 0.0, 0.9]],
        ...                  dtype=torch.float64)
        >>> Q = layer.set_memory_(W)
        >>> torch.allclose(Q @ layer.weight_mm @ Q.T, W)
        True
        """
        if self.memory_matrix != "schur":
            raise ValueError(
                f"set_memory_ needs memory_matrix='schur', got "
                f"memory_matrix={self.memory_matrix!r}"
            )
        Q, _ = self.memory.set_dense_(torch.as_tensor(W))
        Qd = Q.to(self.weight_hm)
        self.weight_hm.copy_(Qd.T @ self.weight_hm)
        self.weight_mh.copy_(self.weight_mh @ Qd)
        if self.bias_m is not None:
            self.bias_m.copy_(Qd.T @ self.bias_m)
        self.memory_basis.copy_(self.memory_basis @ Q.to(self.memory_basis))
        return Q


class MultiScaleSchurMixin:
    """The ``'schur'`` memory matrix of a :class:`~sklmn.nn.MultiScaleLMN`
    (one direction): one :class:`~sklmn.nn._stable_memory.SchurMemory` of
    ``total_memory_size`` units with ``module_size=memory_size``, so
    that ``Q`` is block diagonal (one orthogonal block per module) and the
    dense matrix is block upper-triangular across modules."""

    def _add_schur_memory(self, M: int, factory: dict) -> None:
        """Register ``memory`` and the ``memory_basis`` buffer (identity)."""
        self.memory = SchurMemory(M, module_size=self.memory_size, **factory)
        self.register_buffer(
            "memory_basis",
            torch.eye(M, device=factory.get("device"), dtype=factory.get("dtype")),
        )

    def _reset_schur_memory_(self) -> None:
        """Ring start of every module, the rows of ``W_hm`` scaled by
        ``gamma = sqrt(1 - |lambda|^2)``, the basis back to the identity."""
        ring = getattr(self, "ring", None) or _MULTISCALE_SCHUR_RING
        self.memory.reset_ring_(*ring)
        gamma = torch.sqrt(1 - self.memory.eigenvalue_moduli() ** 2)
        self.weight_hm.mul_(gamma.to(self.weight_hm).unsqueeze(1))
        self.memory_basis.copy_(torch.eye(self.total_memory_size))

    @property
    def weight_mm(self) -> Tensor:
        """The raw memory matrix (``'free'``, ``'spectral'``) or, for
        ``'schur'``, the dense matrix computed from :attr:`memory`."""
        if self.__dict__.get("memory_matrix") == "schur":
            return self.memory()
        try:
            return self._parameters["weight_mm"]
        except KeyError:
            raise AttributeError("weight_mm") from None

    def _check_schur(self, caller: str) -> None:
        if self.memory_matrix != "schur":
            raise ValueError(
                f"{caller} needs memory_matrix='schur', got "
                f"memory_matrix={self.memory_matrix!r}"
            )

    @torch.no_grad()
    def set_memory_(self, W: object) -> Tensor:
        """Set the memory matrix of a ``'schur'`` direction to ``W``.

        ``W`` must be block upper-triangular (module ``k`` reads modules
        ``k..g-1``). ``W = Q T Q^T`` with ``Q`` block diagonal, one
        orthogonal block per module (:meth:`SchurMemory.set_dense_`); the
        memory coordinates turn by ``Q``, absorbed into ``W_hm <- Q^T W_hm``
        and ``W_mh <- W_mh Q``, so that the hidden states are those of a
        network with ``W_mm = W`` and the memory states are ``Q^T`` times
        theirs. ``memory_basis`` accumulates ``Q``. Eigenvalues of modulus
        above the bound are scaled down to it.

        Parameters
        ----------
        W : array-like of shape (M, M)
            ``M = total_memory_size``.

        Returns
        -------
        Q : Tensor of shape (M, M)
            Float64, orthogonal, block diagonal.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import MultiScaleLMN
        >>> net = MultiScaleLMN(1, 3, 2, 2, memory_matrix="schur").double()
        >>> W = torch.tensor([[0.5, 0.2, 0.1, 0.0], [-0.3, 0.4, 0.0, 0.2],
        ...                   [0.0, 0.0, 0.9, 0.0], [0.0, 0.0, 0.1, 0.7]],
        ...                  dtype=torch.float64)
        >>> Q = net.set_memory_(W)
        >>> torch.allclose(Q @ net.weight_mm @ Q.T, W)
        True
        """
        self._check_schur("set_memory_")
        W = torch.as_tensor(W).detach().to("cpu", torch.float64)
        M = self.total_memory_size
        if tuple(W.shape) != (M, M):
            raise ValueError(f"W must have shape {(M, M)}, got {tuple(W.shape)}")
        mask = self.memory_mask.detach().to("cpu", torch.float64)
        if bool((W * (1 - mask) != 0).any()):
            raise ValueError(
                "W must be block upper-triangular (module k reads modules "
                "k..n_modules-1): it has nonzero entries below the diagonal blocks"
            )
        Q, _ = self.memory.set_dense_(W)
        self._turn_memory_(Q, slice(None))
        return Q

    def _turn_memory_(self, Q: Tensor, cols: slice) -> None:
        """Memory coordinates ``cols`` turned by ``Q`` (``m = Q m'``)."""
        Qd = Q.to(self.weight_hm)
        self.weight_hm[cols] = Qd.T @ self.weight_hm[cols]
        self.weight_mh[:, cols] = self.weight_mh[:, cols] @ Qd
        basis = self.memory_basis
        basis[:, cols] = basis[:, cols] @ Q.to(basis)

    @torch.no_grad()
    def _set_schur_module_(self, k: int, weight_mm: Tensor) -> Tensor:
        """Module ``k``'s diagonal block set to ``weight_mm`` in its current
        coordinates, which turn by ``Q_k`` (returned); the other modules'
        coordinates are kept."""
        Q_k, _ = self.memory.set_module_dense_(k, weight_mm)
        self._turn_memory_(Q_k, self.module_slice(k))
        return Q_k

    @torch.no_grad()
    def _grow_schur_(self, n_new: int, memory_size: int | None = None) -> None:
        """The Schur memory and its basis grown by ``n_new`` modules of
        ``memory_size`` units (zero blocks, identity basis on the new
        coordinates)."""
        self.memory = self.memory.grown(n_new, memory_size)
        old = self.memory_basis
        M = self.memory.size
        basis = torch.eye(M, device=old.device, dtype=old.dtype)
        basis[: old.shape[0], : old.shape[1]] = old
        self.memory_basis = basis
