"""The Elman, LAES and unrolled starts of the LMN: how its parameters hold them.

Mixins of :class:`~sklmn.nn.LMNLayer`, :class:`~sklmn.nn.LMN` and
:class:`~sklmn.nn.MultiScaleLMN`: the pretrainers (:mod:`sklmn.pretraining`)
fit the autoencoders and call these methods; the modules decide how the LAES
matrices map to their parameters (constructions in
:mod:`sklmn.nn._laes_weights`). The protocol is in ``docs/extending.md``.
"""

from __future__ import annotations

from typing import Self

import numpy as np
import torch
from torch import Tensor, nn

from ._laes_weights import (
    as_numpy,
    check_components,
    check_scale,
    laes_input_units,
    lmn_layer_from_laes_,
    multiscale_from_laes_,
    numpy_weight,
    resolve_layer,
    restore_free_memory_,
)
from ._padding import reverse_padded
from ._unrolled import (
    init_lmn_from_unrolled_,
    set_schur_transfer_,
    transfer_matrices,
)

__all__ = ["LMNLAESMixin", "LMNLayerLAESMixin", "MultiScaleLAESMixin"]


class LMNLayerLAESMixin:
    """LAES initialization of one :class:`~sklmn.nn.LMNLayer`."""

    def check_laes_init(self, caller: str = "init_from_laes_") -> None:
        """Raise a ValueError if this layer cannot hold a LAES.

        ``W_mm`` must be able to hold ``B`` (not ``'orthogonal'``); a layer
        with ``output='hidden'`` (whose hidden units expose the LAES memory
        to the readout) needs a ``'free'`` or ``'spectral'`` memory matrix.
        ``caller`` starts the message (e.g. the pretrainer's name).

        Examples
        --------
        >>> from sklmn.nn import LMNLayer
        >>> LMNLayer(2, 3, 3).check_laes_init()
        >>> LMNLayer(2, 3, 3, output="hidden").check_laes_init()
        """
        if self.output != "memory" and self.memory_matrix == "schur":
            raise ValueError(
                f"{caller} supports output='hidden' with memory_matrix 'free' "
                "or 'spectral' (a Schur memory turns the units the hidden "
                "layer exposes), got memory_matrix='schur'; use "
                "output='memory' or another memory_matrix"
            )
        if self.memory_matrix == "orthogonal":
            raise ValueError(
                f"{caller} cannot set an orthogonal memory matrix to the LAES "
                "matrix B: use memory_matrix='free', 'spectral' or 'schur', got "
                "memory_matrix='orthogonal'"
            )

    def init_from_laes_(
        self,
        A: object,
        B: object,
        mean: object | None = None,
        *,
        input_scale: float = 1.0,
        partial: bool = False,
        memory_scale: float = 1.0,
    ) -> Self:
        """Initialize from a LAES (Carta et al. 2020b §3.2).

        With ``p`` LAES components (``A`` of shape ``(p, input_size)``) and
        input scale ``s``, the first ``p`` memory units get ``W_xh = s A``,
        ``b_h = -s A mean`` (zero when ``mean`` is None), ``W_mh = 0``,
        ``W_hm = I / s``, ``W_mm = B`` and ``b_m = 0``, so that
        ``m_t = tanh(s A (x_t - mean)) / s + B m_{t-1}``: the LAES encoding
        with the nonlinearity on the input only, exactly the LAES in the
        limit ``s -> 0``. The layer decides how ``A`` and ``B`` map to its
        parameters (a parametrized ``W_mm`` is assigned ``B`` through its
        parametrization).

        Parameters
        ----------
        A : array-like of shape (p, input_size)
            LAES input matrix.
        B : array-like of shape (p, p)
            LAES state matrix.
        mean : array-like of shape (input_size,), optional
            Feature mean used to center the LAES input.
        input_scale : float, default=1.0
            ``s`` above (``> 0``).
        partial : bool, default=False
            False: the LAES is the whole layer, ``hidden_size == memory_size
            == p``. True: ``p <= memory_size``; only the first ``p`` memory
            units hold the LAES (with ``hidden_size < p`` the input matrix is
            factored, ``A = U S Vᵀ``, the first ``min(p, input_size)`` hidden
            units carry ``W_xh = s Vᵀ`` and ``W_hm = U S / s``); the other
            units keep their random weights, decoupled from the LAES units,
            their linearized memory map rescaled to spectral radius at most
            ``init_radius`` (the construction of
            :class:`~sklmn.pretraining.LAESInitializer`).
        memory_scale : float, default=1.0
            Only with ``output='hidden'`` (the readout reads the hidden
            units): the ``p`` hidden units after those carrying the input
            expose the LAES memory, ``h = tanh(memory_scale m_{t-1})``
            (``W_mh = memory_scale I`` on the LAES memory, no input, no
            bias), so that a linear readout of the hidden units can compute
            any linear readout of ``m_t = (LAES input units) / s + B
            m_{t-1}`` in the linear limit. Needs ``hidden_size >= p +
            min(p, input_size)``.

        Returns
        -------
        self : LMNLayer

        Raises
        ------
        ValueError
            If ``hidden_size``, ``memory_size`` and ``p`` differ (``partial=
            False``), ``p`` exceeds ``memory_size``, shapes mismatch or the
            layer cannot hold a LAES (see :meth:`check_laes_init`).

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMNLayer
        >>> layer = LMNLayer(2, 3, 3).init_from_laes_(torch.ones(3, 2), torch.eye(3))
        >>> layer.weight_hm
        Parameter containing:
        tensor([[1., 0., 0.],
                [0., 1., 0.],
                [0., 0., 1.]], requires_grad=True)
        >>> layer = LMNLayer(2, 4, 5).init_from_laes_(
        ...     torch.ones(2, 2), 0.5 * torch.eye(2), input_scale=0.5, partial=True
        ... )
        >>> layer.weight_hm.detach()[:2, :2]
        tensor([[2., 0.],
                [0., 2.]])
        >>> layer = LMNLayer(2, 4, 2, output="hidden").init_from_laes_(
        ...     torch.ones(2, 2), 0.5 * torch.eye(2), partial=True, memory_scale=0.1
        ... )
        >>> layer.weight_mh.detach()[2:]
        tensor([[0.1000, 0.0000],
                [0.0000, 0.1000]])
        """
        a_shape = tuple(np.shape(A.detach() if isinstance(A, Tensor) else A))
        p = a_shape[0] if len(a_shape) == 2 else -1
        if not partial and not (self.hidden_size == self.memory_size == p):
            raise ValueError(
                f"LAES initialization needs hidden_size == memory_size == "
                f"A.shape[0], got hidden_size={self.hidden_size}, "
                f"memory_size={self.memory_size}, A of shape {a_shape}"
            )
        A_np = as_numpy(A, "A", (p, self.input_size))
        check_components(p, self.memory_size, "memory_size")
        B_np = as_numpy(B, "B", (p, p))
        if self.memory_matrix == "orthogonal":
            raise ValueError(
                "init_from_laes_ cannot set an orthogonal memory_matrix to the "
                "LAES matrix B; use memory_matrix='free', 'spectral' or 'schur'"
            )
        if self.output == "hidden":
            self.check_laes_init("init_from_laes_")
            need = p + min(p, self.input_size)
            if self.hidden_size < need:
                raise ValueError(
                    f"init_from_laes_ with output='hidden' needs hidden_size >= "
                    f"p + min(p, input_size) = {need} (the input and the exposed "
                    f"memory), got hidden_size={self.hidden_size}"
                )
        mu = (
            np.zeros(self.input_size)
            if mean is None
            else as_numpy(mean, "mean", (self.input_size,))
        )
        lmn_layer_from_laes_(
            self,
            A_np,
            B_np,
            mu,
            check_scale(input_scale),
            check_scale(memory_scale, "memory_scale"),
        )
        return self


class LMNLAESMixin:
    """Elman, LAES and unrolled starts of a stacked :class:`~sklmn.nn.LMN`."""

    @classmethod
    def from_elman(cls, rnn: nn.Module) -> Self:
        """Build an LMN whose memory equals the hidden state of an Elman RNN.

        With ``W_xh = V``, ``W_mh = U``, ``b_h`` = the RNN biases,
        ``W_hm = I`` and ``W_mm = 0``, the LMN memory is ``m_t = h_rnn_t``
        exactly (Carta et al. 2020b §2.1, Carta et al. 2021 §3.1), for every layer and
        direction.

        Parameters
        ----------
        rnn : torch.nn.RNN or sklmn.nn.ElmanRNN
            A tanh Elman RNN (``batch_first`` does not matter).

        Returns
        -------
        lmn : LMN
            With ``output='memory'``, ``memory_matrix='free'``, same sizes,
            number of layers, direction, dtype and device as ``rnn``.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> _ = torch.manual_seed(0)
        >>> rnn = torch.nn.RNN(3, 4, batch_first=True)
        >>> lmn = LMN.from_elman(rnn)
        >>> x = torch.randn(2, 5, 3)
        >>> torch.allclose(lmn(x)[0], rnn(x)[0], atol=1e-5)
        True
        """
        inner = getattr(rnn, "rnn", rnn)
        if not isinstance(inner, nn.RNN):
            raise ValueError(
                f"rnn must be a torch.nn.RNN or sklmn.nn.ElmanRNN, got "
                f"{type(rnn).__name__}"
            )
        if inner.nonlinearity != "tanh":
            raise ValueError(
                f"rnn must use the tanh nonlinearity, got {inner.nonlinearity!r}"
            )
        if getattr(inner, "proj_size", 0):
            raise ValueError(f"rnn must not use proj_size, got {inner.proj_size}")
        ref = inner.weight_ih_l0
        lmn = cls(
            inner.input_size,
            inner.hidden_size,
            inner.hidden_size,
            num_layers=inner.num_layers,
            bidirectional=inner.bidirectional,
            dropout=float(inner.dropout),
        ).to(device=ref.device, dtype=ref.dtype)
        eye = torch.eye(inner.hidden_size, dtype=ref.dtype, device=ref.device)
        with torch.no_grad():
            for i in range(inner.num_layers):
                for j in range(lmn.num_directions):
                    sfx = f"_l{i}" + ("_reverse" if j == 1 else "")
                    layer = lmn.layers[i] if j == 0 else lmn.layers_reverse[i]
                    layer.weight_xh.copy_(getattr(inner, "weight_ih" + sfx))
                    layer.weight_mh.copy_(getattr(inner, "weight_hh" + sfx))
                    bias = torch.zeros_like(layer.bias_h)
                    if inner.bias:
                        bias = getattr(inner, "bias_ih" + sfx)
                        bias = bias + getattr(inner, "bias_hh" + sfx)
                    layer.bias_h.copy_(bias)
                    layer.weight_hm.copy_(eye)
                    layer.weight_mm.zero_()
        return lmn

    def _layer(self, layer: object, direction: object) -> nn.Module:
        """Layer ``layer`` of direction ``direction`` (validated)."""
        layer = resolve_layer(self, layer, direction)
        return self.layers[layer] if direction == 0 else self.layers_reverse[layer]

    def check_laes_init(self, caller: str = "init_from_laes_") -> None:
        """Raise a ValueError if the network cannot hold a LAES start.

        See :meth:`LMNLayer.check_laes_init`.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> LMN(2, 3, 3, memory_matrix="orthogonal").check_laes_init("mine")
        Traceback (most recent call last):
        ...
        ValueError: mine cannot set an orthogonal memory matrix to the LAES ...
        """
        self.layers[0].check_laes_init(caller)

    def laes_capacity(self, n_features: int) -> list[tuple[int, str]]:
        """Bounds on the LAES components of one layer, ``(bound, reason)``.

        The first bound is the network's size (``memory_size``); a layer
        whose ``hidden_size`` is below both the components and its
        ``n_features`` input features holds at most ``hidden_size``
        components (the factored input ``A = U S Vᵀ`` needs ``min(p,
        n_features)`` hidden units). With ``output='hidden'`` another ``p``
        hidden units expose the memory: ``p + min(p, n_features) <=
        hidden_size``.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> [bound for bound, _ in LMN(5, 3, 8).laes_capacity(5)]
        [8, 3]
        >>> [bound for bound, _ in LMN(2, 10, 8, output="hidden").laes_capacity(2)]
        [8, 8]
        """
        M, H = self.memory_size, self.hidden_size
        limits = [(M, f"the network has memory_size={M}")]
        if self.output == "hidden":
            # the largest p with p + min(p, n_features) <= H
            p_max = max(H - n_features, H // 2) if n_features <= H // 2 else H // 2
            limits.append(
                (
                    max(p_max, 1),
                    f"output='hidden' with hidden_size={H}: p + min(p, "
                    f"{n_features} input features) hidden units carry the input "
                    "and expose the memory",
                )
            )
        elif H < n_features:
            limits.append(
                (
                    H,
                    f"hidden_size={H} is below both n_components and the "
                    f"{n_features} input features (the LAES input A = U S Vᵀ "
                    "needs min(p, features) hidden units)",
                )
            )
        return limits

    def laes_output_scale(self, input_scale: float) -> float:
        """Ratio of a LAES-initialized unit's output to the LAES state in
        the linear limit: 1 (``W_hm`` divides by the input scale).

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> LMN(2, 3, 3).laes_output_scale(0.1)
        1.0
        """
        return 1.0

    @torch.no_grad()
    def layer_outputs(self, i: int, x: Tensor, lengths: Tensor | None) -> Tensor:
        """Output sequences of layer ``i`` (both directions, concatenated)
        for its input sequences ``x`` (batch-first): the input of layer
        ``i + 1``, zero on padded steps.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> lmn = LMN(2, 3, 4, num_layers=2, bidirectional=True)
        >>> lmn.layer_outputs(0, torch.randn(5, 6, 2), None).shape
        torch.Size([5, 6, 8])
        """
        outs = []
        for j in range(self.num_directions):
            layer = self._layer(i, j)
            data = x if j == 0 else reverse_padded(x, lengths)
            out = layer(data, lengths)[0]
            outs.append(out if j == 0 else reverse_padded(out, lengths))
        return outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)

    def init_from_laes_(
        self,
        A: object,
        B: object,
        mean: object | None = None,
        *,
        layer: int | None = None,
        direction: int = 0,
        input_scale: float = 1.0,
        partial: bool = False,
        memory_scale: float = 1.0,
    ) -> Self:
        """Initialize one layer and direction from a LAES (Carta et al. 2020b §3.2).

        See :meth:`LMNLayer.init_from_laes_` for the construction and the
        other parameters.

        Parameters
        ----------
        A : array-like of shape (p, layer input size)
        B : array-like of shape (p, p)
        mean : array-like of shape (layer input size,), optional
        layer : int, optional
            The layer to set (0-based); None: the network must have a single
            unidirectional layer.
        direction : {0, 1}, default=0
            0: the forward direction; 1: the reverse one of a bidirectional
            network (which reads the sequences backwards).
        input_scale : float, default=1.0
        partial : bool, default=False
        memory_scale : float, default=1.0
            With ``output='hidden'``: the scale of the hidden units that
            expose the LAES memory (see :meth:`LMNLayer.init_from_laes_`).

        Returns
        -------
        self : LMN

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> lmn = LMN(2, 3, 3).init_from_laes_(torch.ones(3, 2), torch.zeros(3, 3))
        >>> lmn.layers[0].weight_mh.abs().sum().item()
        0.0
        >>> lmn = LMN(2, 3, 4, num_layers=2, bidirectional=True)
        >>> lmn = lmn.init_from_laes_(torch.ones(2, 8), torch.zeros(2, 2), layer=1,
        ...                           direction=1, partial=True)
        >>> lmn.layers_reverse[1].weight_xh.detach()[:2]
        tensor([[1., 1., 1., 1., 1., 1., 1., 1.],
                [1., 1., 1., 1., 1., 1., 1., 1.]])
        """
        self._layer(layer, direction).init_from_laes_(
            A,
            B,
            mean,
            input_scale=input_scale,
            partial=partial,
            memory_scale=memory_scale,
        )
        return self

    def laes_exposed_units(self, p: int, n_features: int) -> slice:
        """Hidden units that expose a ``p``-component LAES memory to the
        readout in an ``output='hidden'`` layer of ``n_features`` inputs
        (see :meth:`LMNLayer.init_from_laes_`).

        Examples
        --------
        >>> from sklmn.nn import LMN
        >>> LMN(2, 10, 8, output="hidden").laes_exposed_units(4, 2)
        slice(4, 8, None)
        >>> LMN(2, 6, 8, output="hidden").laes_exposed_units(4, 2)  # A factored
        slice(2, 6, None)
        """
        r = laes_input_units(self.hidden_size, p, n_features, self.output)
        return slice(r, r + p)

    @torch.no_grad()
    def init_from_unrolled_(
        self, urnn: nn.Module, readout: nn.Module, A: object, B: object
    ) -> tuple[Tensor, Tensor]:
        """Transfer an unrolled RNN to the LMN (Carta et al. 2021 Alg. 1).

        :func:`~sklmn.nn.init_lmn_from_unrolled_` with a LAES ``(A, B)`` of
        ``p <= memory_size`` components fit on the URNN's hidden sequences:
        the first ``p`` memory units get ``W_hm = A``, ``W_mm = B``, ``W_mh =
        [W_1 … W_k] U_k`` and ``W_xh``, ``b_h`` from the URNN. The other memory
        units keep their random ``W_hm`` rows and diagonal ``W_mm`` block
        (rescaled to spectral radius at most ``init_radius``; with
        ``memory_matrix='schur'`` their ring block as it is, of radius below
        one); the hidden units and the LAES units do not read them. With
        ``'schur'`` the whole memory matrix is then set by
        :meth:`~sklmn.nn.LMNLayer.set_memory_` (the returned ``W_mo`` is in
        the turned coordinates; ``memory_basis`` holds the turn), so the
        network computes what the ``'free'`` transfer computes.

        Parameters
        ----------
        urnn : UnrolledRNN
            The trained unrolled RNN (``hidden_size`` as this network's).
        readout : TapeReadout
            Its readout.
        A : array-like of shape (p, hidden_size)
        B : array-like of shape (p, p)

        Returns
        -------
        W_mo : Tensor of shape (readout.out_features, memory_size)
            Readout weight from the memory (zero on the units beyond ``p``).
        b_mo : Tensor of shape (readout.out_features,)
            Readout bias.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN, TapeReadout, UnrolledRNN
        >>> urnn, readout = UnrolledRNN(2, 3, tape_length=2), TapeReadout(3, 1, 2)
        >>> lmn = LMN(2, hidden_size=3, memory_size=6)
        >>> W_mo, b_mo = lmn.init_from_unrolled_(
        ...     urnn, readout, torch.randn(4, 3), 0.5 * torch.eye(4))
        >>> W_mo.shape, bool((W_mo[:, 4:] == 0).all())
        (torch.Size([1, 6]), True)
        """
        if self.num_layers != 1 or self.bidirectional:
            raise ValueError(
                "init_from_unrolled_ needs a single-layer unidirectional LMN, got "
                f"num_layers={self.num_layers}, bidirectional={self.bidirectional}"
            )
        self.check_laes_init("init_from_unrolled_")
        layer = self.layers[0]
        size, H = self.memory_size, self.hidden_size
        a_shape = tuple(np.shape(A.detach() if isinstance(A, Tensor) else A))
        p = a_shape[0] if len(a_shape) == 2 else -1
        A_np = as_numpy(A, "A", (p, H))
        check_components(p, size, "memory_size")
        B_np = as_numpy(B, "B", (p, p))
        W_hm0, W_mm0 = numpy_weight(layer.weight_hm), numpy_weight(layer.weight_mm)
        A_full, B_full = np.zeros((size, H)), np.zeros((size, size))
        A_full[:p], B_full[:p, :p] = A_np, B_np
        if layer.memory_matrix == "schur":
            # in the transfer's coordinates: the LAES units, then the other
            # units' ring block (the units beyond p of the ring's coordinates)
            A64, B64, W_mh, W_mo = transfer_matrices(
                layer, urnn, readout, A_full, B_full
            )
            A64[p:] = torch.as_tensor(W_hm0[p:]).to(A64)
            B64[p:, p:] = torch.as_tensor(W_mm0[p:, p:]).to(B64)
            W_mo = set_schur_transfer_(layer, urnn, A64, W_mh, B64, W_mo)
            out = readout.weight
            return (
                W_mo.to(dtype=out.dtype, device=out.device),
                readout.bias.detach().clone(),
            )
        W_mo, b_mo = init_lmn_from_unrolled_(layer, urnn, readout, A_full, B_full)
        if p < size:
            restore_free_memory_(layer, p, W_hm0, W_mm0)
        return W_mo, b_mo


class MultiScaleLAESMixin:
    """LAES starts of a :class:`~sklmn.nn.MultiScaleLMN`, per memory module."""

    def check_laes_init(self, caller: str = "init_from_laes_") -> None:
        """Raise a ValueError if the network cannot hold a LAES start (the
        readout of a LAES start reads the memory: ``output='memory'``).

        Examples
        --------
        >>> from sklmn.nn import MultiScaleLMN
        >>> MultiScaleLMN(2, 3, 2, 2).check_laes_init()
        """
        if self.output != "memory":
            raise ValueError(
                f"{caller} needs a multi-scale LMN with output='memory' (the "
                "readout reads the LAES memory), got "
                f"output={self.output!r}"
            )

    def laes_output_scale(self, input_scale: float) -> float:
        """Ratio of a LAES-initialized unit's output to the LAES state in
        the linear limit: 1 (``W_hm`` divides by the input scale).

        Examples
        --------
        >>> from sklmn.nn import MultiScaleLMN
        >>> MultiScaleLMN(2, 3, 2, 2).laes_output_scale(0.1)
        1.0
        """
        return 1.0

    def _direction(self, direction: object):
        if isinstance(direction, bool) or direction not in (0, 1):
            raise ValueError(f"direction must be 0 or 1, got {direction!r}")
        if direction == 1 and self.reverse is None:
            raise ValueError(
                "direction=1 needs a bidirectional MultiScaleLMN, got "
                "bidirectional=False"
            )
        return self if direction == 0 else self.reverse

    def init_from_laes_(
        self,
        A: list,
        B: list,
        mean: object | None = None,
        *,
        input_projection: object | None = None,
        input_scale: float = 1.0,
        direction: int = 0,
    ):
        """Initialize every memory module of one direction from its own LAES.

        Module ``k`` gets the LAES ``(A[k], B[k])`` of the projected inputs
        ``z_t = W_in (x_t - mean)`` subsampled at its clock: its diagonal
        block of ``W_mm`` is ``B[k]`` (the other blocks zero). With
        ``hidden_size >= p_0 + ... + p_{K-1}`` module ``k`` reads its own
        ``p_k`` hidden units ``tanh(s A_k z_t)`` through ``I / s``; otherwise
        the first ``r`` hidden units carry ``tanh(s z_t)`` for every module,
        read through ``A_k / s``. Both are the LAES encoding in the limit
        ``s -> 0`` (Carta, Sperduti & Bacciu 2021, Alg. 2, applied to all
        modules at once).

        Parameters
        ----------
        A : list of array-like of shape (p_k, r)
            One LAES input matrix per module (``n_modules`` of them),
            ``1 <= p_k <= N_k`` (module ``k``'s memory units).
        B : list of array-like of shape (p_k, p_k)
            The LAES state matrices.
        mean : array-like of shape (input_size,), optional
            Input mean (default zero).
        input_projection : array-like of shape (r, input_size), optional
            ``W_in`` (default the identity, ``r = input_size``); ``r <=
            hidden_size``.
        input_scale : float, default=1.0
            ``s`` above (``> 0``).
        direction : {0, 1}, default=0
            0: the forward direction; 1: the reverse one (:attr:`reverse`).

        Returns
        -------
        self : MultiScaleLMN

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import MultiScaleLMN
        >>> net = MultiScaleLMN(1, 4, 2, 2)
        >>> net = net.init_from_laes_([torch.ones(2, 1)] * 2, [0.5 * torch.eye(2)] * 2)
        >>> net.weight_mm.detach()[2:, 2:]
        tensor([[0.5000, 0.0000],
                [0.0000, 0.5000]])
        """
        net = self._direction(direction)
        d, H = self.input_size, self.hidden_size
        W_in = (
            np.eye(d)
            if input_projection is None
            else np.asarray(
                input_projection.detach().cpu()
                if isinstance(input_projection, Tensor)
                else input_projection,
                dtype=np.float64,
            )
        )
        if W_in.ndim != 2 or W_in.shape[1] != d or not 1 <= W_in.shape[0] <= H:
            raise ValueError(
                f"input_projection must have shape (r, {d}) with 1 <= r <= "
                f"hidden_size={H}, got {W_in.shape}"
            )
        r = W_in.shape[0]
        if len(A) != self.n_modules or len(B) != self.n_modules:
            raise ValueError(
                f"A and B must hold one matrix per module ({self.n_modules}), "
                f"got {len(A)} and {len(B)}"
            )
        A_np, B_np = [], []
        for k, (A_k, B_k) in enumerate(zip(A, B, strict=True)):
            shape = tuple(np.shape(A_k.detach() if isinstance(A_k, Tensor) else A_k))
            p = shape[0] if len(shape) == 2 else -1
            A_np.append(as_numpy(A_k, f"A[{k}]", (p, r)))
            check_components(p, self.memory_sizes[k], f"module {k}'s memory_size")
            B_np.append(as_numpy(B_k, f"B[{k}]", (p, p)))
        mu = np.zeros(d) if mean is None else as_numpy(mean, "mean", (d,))
        multiscale_from_laes_(net, A_np, B_np, W_in, mu, check_scale(input_scale))
        return self

    def init_module_from_laes_(
        self, k: int, A: object, B: object, *, direction: int = 0
    ) -> None:
        """Set memory module ``k`` to encode its hidden sequences by a LAES.

        ``weight_hm`` of the module's first ``p`` units is ``A`` (it reads
        the hidden units), its diagonal ``weight_mm`` block ``B``; its other
        units are zero (Carta, Sperduti & Bacciu 2021, Alg. 2, the module
        added by the incremental training). See :meth:`set_module_`.

        Parameters
        ----------
        k : int
            Module index (0-based).
        A : array-like of shape (p, hidden_size)
            ``1 <= p <= N_k`` (module ``k``'s memory units).
        B : array-like of shape (p, p)
        direction : {0, 1}, default=0

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import MultiScaleLMN
        >>> net = MultiScaleLMN(1, 3, 2, 2)
        >>> net.init_module_from_laes_(1, torch.ones(1, 3), torch.eye(1))
        >>> net.weight_mm.detach()[2:, 2:]
        tensor([[1., 0.],
                [0., 0.]])
        """
        self._direction(direction)
        self.module_slice(k)  # k validated
        N_m, H = self.memory_sizes[k], self.hidden_size
        shape = tuple(np.shape(A.detach() if isinstance(A, Tensor) else A))
        p = shape[0] if len(shape) == 2 else -1
        A_np = as_numpy(A, "A", (p, H))
        check_components(p, N_m, "memory_size")
        B_np = as_numpy(B, "B", (p, p))
        A_full, B_full = np.zeros((N_m, H)), np.zeros((N_m, N_m))
        A_full[:p], B_full[:p, :p] = A_np, B_np
        self.set_module_(k, weight_hm=A_full, weight_mm=B_full, direction=direction)
