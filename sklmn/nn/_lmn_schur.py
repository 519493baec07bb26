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

__all__ = ["LMNLayerSchurMixin"]

#: the ring of the ``'schur'`` memory's random start (``r_min, r_max,
#: max_phase``; measured in docs/memory.md)
_SCHUR_RING = (0.9, 0.999, math.pi / 10)


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
        self.memory.reset_ring_(*_SCHUR_RING)
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
