"""Unrolled RNN with a tape of past hidden states, and its transfer to an LMN.

The unrolled recurrent model (URNN, Carta et al. 2021 §4.1 eq. 11-12, Bacciu et al. 2019
§4.1 eq. 13-14) keeps the last ``k`` hidden states on a tape delay line and reads
each of them with its own matrix:

    h_t = tanh(W_xh x_t + sum_{i=1..k} W_i h_{t-i} + b),   h_{t-i} = 0 before t = 0
    y_t = sum_{i=0..k} W'_i h_{t-i} + b'                    (:class:`TapeReadout`)

A linear autoencoder for sequences (LAES) fit on the URNN's hidden sequences
encodes the whole tape in a memory state ``m_t = A h_t + B m_{t-1}`` from which
``h_{t-j} = A^T (B^T)^j m_t``. :func:`init_lmn_from_unrolled_` uses it to build
an equivalent LMN (Carta et al. 2021 §4.2, Alg. 1 lines 15-19).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import parametrize

from ._base import RecurrentModule
from ._checks import check_bool, check_input, check_positive_int, check_step_input
from ._padding import reverse_padded, zero_padded

__all__ = ["TapeReadout", "UnrolledRNN", "init_lmn_from_unrolled_"]


class UnrolledRNN(RecurrentModule):
    r"""Unrolled RNN: a tanh layer reading a tape of its last ``k`` states.

    .. math::

        h_t = \tanh\Big(W^{xh} x_t + \sum_{i=1}^{k} W_i h_{t-i} + b\Big)

    (Carta et al. 2021 eq. 11, Bacciu et al. 2019 eq. 13) with ``h_{t-i} = 0`` before
    the sequence's first element. The output is the hidden sequence; pair it with
    :class:`TapeReadout` for the outputs of eq. 12.

    Parameters
    ----------
    input_size : int
        Number of input features.
    hidden_size : int
        Number of hidden units ``H``.
    tape_length : int
        Number ``k`` of past hidden states on the tape.
    bidirectional : bool, default=False
        Add a reverse direction, a second unrolled RNN with the same settings
        (:attr:`reverse`) that reads each sequence's valid part backwards;
        outputs are concatenated ``[forward, reverse]`` (``output_size``
        doubles). Padding never changes the outputs.
    device : torch.device, optional
    dtype : torch.dtype, optional

    Attributes
    ----------
    weight_xh : Parameter of shape (hidden_size, input_size)
    weight_hh : Parameter of shape (tape_length, hidden_size, hidden_size)
        ``weight_hh[i - 1]`` is ``W_i``, the weight of ``h_{t-i}``.
    bias_h : Parameter of shape (hidden_size,)
    output_size : int
        ``hidden_size`` times 2 if bidirectional.
    reverse : UnrolledRNN or None
        The reverse direction when ``bidirectional``; the parameters above
        are the forward direction's.
    num_directions : int
        2 if bidirectional, else 1.

    Notes
    -----
    The state is the tape, a tensor ``(N, tape_length, hidden_size)`` holding
    ``[h_{t-1}, ..., h_{t-k}]`` (newest first); after the last valid step of a
    sequence of length ``l`` it holds ``h_{l-1}, ..., h_{l-k}``. With
    ``bidirectional=True`` the tapes of both directions are concatenated
    along the last axis, ``(N, tape_length, 2 * hidden_size)`` (the reverse
    direction's final tape is the one after reading the sequence backwards),
    and :meth:`step` is not available.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import UnrolledRNN
    >>> _ = torch.manual_seed(0)
    >>> urnn = UnrolledRNN(3, hidden_size=4, tape_length=2)
    >>> h, tape = urnn(torch.randn(2, 5, 3), lengths=torch.tensor([5, 3]))
    >>> h.shape, tape.shape
    (torch.Size([2, 5, 4]), torch.Size([2, 2, 4]))
    >>> torch.equal(tape[1, 0], h[1, 2]) and torch.equal(tape[1, 1], h[1, 1])
    True
    >>> bi = UnrolledRNN(3, hidden_size=4, tape_length=2, bidirectional=True)
    >>> h, tape = bi(torch.randn(2, 5, 3), lengths=[5, 3])
    >>> h.shape, tape.shape
    (torch.Size([2, 5, 8]), torch.Size([2, 2, 8]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        tape_length: int,
        *,
        bidirectional: bool = False,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.tape_length = check_positive_int("tape_length", tape_length)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.output_size = self.hidden_size * self.num_directions
        factory = {"device": device, "dtype": dtype}
        H, k = self.hidden_size, self.tape_length
        self.weight_xh = nn.Parameter(torch.empty(H, self.input_size, **factory))
        self.weight_hh = nn.Parameter(torch.empty(k, H, H, **factory))
        self.bias_h = nn.Parameter(torch.empty(H, **factory))
        self.reset_parameters()
        self.reverse = None
        if self.bidirectional:
            self.reverse = UnrolledRNN(
                input_size, hidden_size, tape_length, device=device, dtype=dtype
            )

    def reset_parameters(self) -> None:
        """Re-initialize: weights uniform in ``±1/sqrt(fan_in)`` (the fan-in of
        the tape weights is ``k * H``), bias zero; both directions when
        bidirectional."""
        with torch.no_grad():
            bound = 1.0 / math.sqrt(self.input_size)
            self.weight_xh.uniform_(-bound, bound)
            bound = 1.0 / math.sqrt(self.tape_length * self.hidden_size)
            self.weight_hh.uniform_(-bound, bound)
            self.bias_h.zero_()
        if getattr(self, "reverse", None) is not None:
            self.reverse.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}, tape_length={self.tape_length}"
        return s + (", bidirectional=True" if self.bidirectional else "")

    def tape_weight(self) -> Tensor:
        """The tape weights side by side, ``[W_1 ... W_k]`` ``(H, k * H)``."""
        k, H = self.tape_length, self.hidden_size
        return self.weight_hh.permute(1, 0, 2).reshape(H, k * H)

    def _check_state(self, state: object, n: int, like: Tensor) -> Tensor:
        shape = (n, self.tape_length, self.hidden_size)
        if state is None:
            return like.new_zeros(shape)
        if not isinstance(state, Tensor) or tuple(state.shape) != shape:
            got = tuple(state.shape) if isinstance(state, Tensor) else state
            raise ValueError(f"state (the tape) must have shape {shape}, got {got!r}")
        return state.to(device=like.device, dtype=like.dtype)

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | Sequence[int] | None = None,
        state: Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the unrolled RNN over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
        lengths : Tensor of shape (N,), optional
            Valid lengths; padded steps are zero in the output.
        state : Tensor of shape (N, tape_length, hidden_size), optional
            Initial tape ``[h_{-1}, ..., h_{-k}]`` (default zeros);
            ``2 * hidden_size`` features (both directions) if bidirectional.
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (the
            unrolled RNN has none: a zero scalar).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Hidden sequence.
        state : Tensor of shape (N, tape_length, output_size)
            Tape after each sequence's last valid step (the reverse
            direction's after reading the sequence backwards).
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        if self.reverse is None:
            out, tape = self._forward_one(x, lengths, state)
            return self._forward_result(out, tape, None, return_penalty)
        lengths, _ = check_input(x, lengths, self.input_size)
        H = self.hidden_size
        state_f = state_r = None
        if state is not None:
            shape = (x.shape[0], self.tape_length, 2 * H)
            if not isinstance(state, Tensor) or tuple(state.shape) != shape:
                got = tuple(state.shape) if isinstance(state, Tensor) else state
                raise ValueError(
                    f"state (the tapes) must have shape {shape}, got {got!r:.60}"
                )
            state_f, state_r = state[..., :H], state[..., H:]
        out_f, tape_f = self._forward_one(x, lengths, state_f)
        # reverse direction: forwards on the reversed valid parts, its output
        # reversed back (padding stays in place and zero)
        out_r, tape_r = self.reverse(reverse_padded(x, lengths), lengths, state_r)
        out = torch.cat([out_f, reverse_padded(out_r, lengths)], dim=2)
        tape = torch.cat([tape_f, tape_r], dim=2)
        return self._forward_result(out, tape, None, return_penalty)

    def _forward_one(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, Tensor]:
        """:meth:`forward` of the forward direction alone."""
        lengths, T = check_input(x, lengths, self.input_size)
        N, H, k = x.shape[0], self.hidden_size, self.tape_length
        tape0 = self._check_state(state, N, x)
        W_T = self.tape_weight().T  # (k H, H)
        # Finished sequences keep running on zeroed inputs (bounded by tanh,
        # never read); zeroing keeps NaN padding out of the gradients.
        x = zero_padded(x, lengths)
        xs = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h).unbind(0)
        # The flat tape [h_{t-1} | ... | h_{t-k}] is read with one matmul.
        tape = tape0.reshape(N, k * H)
        hs = []
        for t in range(T):
            h = torch.tanh(torch.addmm(xs[t], tape, W_T))
            tape = h if k == 1 else torch.cat([h, tape[:, : (k - 1) * H]], dim=1)
            hs.append(h)
        h_seq = torch.stack(hs, dim=1)  # (N, T, H)
        # Final tape: the last k states of [h_{-k}, ..., h_{-1}, h_0, ...].
        history = torch.cat([tape0.flip(1), h_seq], dim=1)  # (N, k + T, H)
        end = torch.full((N,), T) if lengths is None else lengths
        idx = end.to(x.device).unsqueeze(1) + k - 1 - torch.arange(k, device=x.device)
        final = history[torch.arange(N, device=x.device).unsqueeze(1), idx]
        return zero_padded(h_seq, lengths), final

    def step(self, x_t: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """One time step; iterating it over ``t`` equals :meth:`forward`.

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : Tensor of shape (N, tape_length, hidden_size), optional

        Returns
        -------
        h_t : Tensor of shape (N, hidden_size)
        state : Tensor of shape (N, tape_length, hidden_size)

        Examples
        --------
        >>> urnn = UnrolledRNN(2, 3, tape_length=4)
        >>> h, tape = urnn.step(torch.ones(5, 2))
        >>> h.shape, tape.shape
        (torch.Size([5, 3]), torch.Size([5, 4, 3]))
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional UnrolledRNN: the "
                "reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        N = x_t.shape[0]
        tape = self._check_state(state, N, x_t)
        pre = F.linear(x_t, self.weight_xh, self.bias_h)
        h = torch.tanh(torch.addmm(pre, tape.reshape(N, -1), self.tape_weight().T))
        return h, torch.cat([h.unsqueeze(1), tape[:, :-1]], dim=1)


class TapeReadout(nn.Module):
    r"""Linear readout of a tape of hidden states.

    Carta et al. 2021 eq. 12, Bacciu et al. 2019 eq. 14.

    .. math::

        y_t = \sum_{i=0}^{k} W'_i h_{t-i} + b

    with ``h_{t-i} = 0`` before the sequence's first element. The output is
    linear: the output nonlinearity of eq. 12 belongs to the loss (logits).

    Parameters
    ----------
    hidden_size : int
        Features ``H`` of the hidden sequence.
    out_features : int
        Number of outputs.
    tape_length : int
        ``k``: the readout sees ``h_t, ..., h_{t-k}`` (``k + 1`` states).
    device : torch.device, optional
    dtype : torch.dtype, optional

    Attributes
    ----------
    weight : Parameter of shape (tape_length + 1, out_features, hidden_size)
        ``weight[i]`` is ``W'_i``, the weight of ``h_{t-i}``.
    bias : Parameter of shape (out_features,)

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import TapeReadout
    >>> readout = TapeReadout(4, out_features=2, tape_length=3)
    >>> readout(torch.zeros(5, 7, 4), lengths=torch.tensor([7, 1, 2, 3, 4])).shape
    torch.Size([5, 7, 2])
    """

    def __init__(
        self,
        hidden_size: int,
        out_features: int,
        tape_length: int,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.out_features = check_positive_int("out_features", out_features)
        self.tape_length = check_positive_int("tape_length", tape_length)
        factory = {"device": device, "dtype": dtype}
        self.weight = nn.Parameter(
            torch.empty(
                self.tape_length + 1, self.out_features, self.hidden_size, **factory
            )
        )
        self.bias = nn.Parameter(torch.empty(self.out_features, **factory))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize: weight uniform in ``±1/sqrt((k + 1) H)``, bias zero."""
        with torch.no_grad():
            bound = 1.0 / math.sqrt((self.tape_length + 1) * self.hidden_size)
            self.weight.uniform_(-bound, bound)
            self.bias.zero_()

    def extra_repr(self) -> str:
        return (
            f"{self.hidden_size}, {self.out_features}, tape_length={self.tape_length}"
        )

    def forward(
        self, h: Tensor, lengths: Tensor | Sequence[int] | None = None
    ) -> Tensor:
        """Apply the readout to a hidden sequence.

        Parameters
        ----------
        h : Tensor of shape (N, T, hidden_size)
            Hidden sequence (e.g. the output of :class:`UnrolledRNN`).
        lengths : Tensor of shape (N,), optional
            Valid lengths; padded steps of the result are zero.

        Returns
        -------
        y : Tensor of shape (N, T, out_features)
        """
        lengths, _ = check_input(
            h, lengths, self.hidden_size, names=("h", "hidden_size")
        )
        k = self.tape_length
        h = zero_padded(h, lengths)  # padding never reaches the gradients
        # A causal convolution: conv1d computes sum_j w[..., j] hpad[t + j]
        # with hpad[t + j] = h[t + j - k], so w[..., j] = W'_{k - j}.
        kernel = self.weight.flip(0).permute(1, 2, 0)  # (out, H, k + 1)
        y = F.conv1d(F.pad(h.transpose(1, 2), (k, 0)), kernel, self.bias)
        return zero_padded(y.transpose(1, 2), lengths)


def _lmn_layer(lmn: nn.Module) -> nn.Module:
    """The single unidirectional layer of an LMN (or the LMNLayer itself)."""
    layers = getattr(lmn, "layers", None)
    if layers is None:
        return lmn
    if getattr(lmn, "bidirectional", False) or len(layers) != 1:
        raise ValueError(
            "init_lmn_from_unrolled_ needs a single-layer unidirectional LMN, got "
            f"num_layers={len(layers)}, "
            f"bidirectional={getattr(lmn, 'bidirectional', False)}"
        )
    return layers[0]


@torch.no_grad()
def init_lmn_from_unrolled_(
    lmn: nn.Module,
    urnn: UnrolledRNN,
    readout: TapeReadout,
    A: Tensor | np.ndarray,
    B: Tensor | np.ndarray,
) -> tuple[Tensor, Tensor]:
    r"""Initialize an LMN equivalent to an unrolled RNN (Carta et al. 2021 Alg. 1).

    Given a LAES ``(A, B)`` fit on the URNN's hidden sequences, so that
    ``h_{t-j} = A^T (B^T)^j m_t`` with ``m_t = A h_t + B m_{t-1}``, sets
    (lines 15-19 of Alg. 1)

    - ``W_xh``, ``b_h`` from the URNN, ``W_hm = A``, ``W_mm = B``,
      ``b_m = 0`` (if present);
    - ``W_mh = [W_1 ... W_k] U_k = sum_{i=1..k} W_i A^T (B^T)^{i-1}``, which
      decodes the URNN's tape ``h_{t-1}, ..., h_{t-k}`` from ``m_{t-1}``;

    and returns the memory readout
    ``W_mo = [W'_0 ... W'_k] U_{k+1} = sum_{i=0..k} W'_i A^T (B^T)^i`` with the
    readout bias, where ``U_k = [A^T; A^T B^T; ...; A^T (B^T)^{k-1}]``. When
    the LAES reconstructs the hidden sequences exactly (``p >= rank`` of its
    data matrix) the LMN's hidden states equal the URNN's and
    ``W_mo m_t + b`` equals the URNN's readout.

    With ``memory_matrix='schur'`` the memory matrix is set to ``B`` by
    :meth:`~sklmn.nn.LMNLayer.set_memory_` (``B = Q T Q^T``): the memory
    coordinates turn by ``Q`` (``W_hm``, ``W_mh`` and the returned ``W_mo``
    absorb it, ``memory_basis`` becomes ``Q``), so the LMN computes the
    same function.

    Parameters
    ----------
    lmn : LMN or LMNLayer
        Single-layer, unidirectional, ``memory_matrix`` 'free', 'spectral'
        or 'schur', with ``hidden_size == urnn.hidden_size`` and
        ``memory_size == p``. Modified in place.
    urnn : UnrolledRNN
        The trained unrolled RNN.
    readout : TapeReadout
        Its readout (same ``hidden_size`` and ``tape_length``).
    A : Tensor or ndarray of shape (p, hidden_size)
        LAES encoder matrix.
    B : Tensor or ndarray of shape (p, p)
        LAES state matrix.

    Returns
    -------
    W_mo : Tensor of shape (readout.out_features, p)
        Readout weight from the memory (``y_t = W_mo m_t + b_mo``).
    b_mo : Tensor of shape (readout.out_features,)
        Readout bias (a copy of ``readout.bias``).

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import LMN, TapeReadout, UnrolledRNN, init_lmn_from_unrolled_
    >>> urnn, readout = UnrolledRNN(2, 3, tape_length=2), TapeReadout(3, 1, 2)
    >>> lmn = LMN(2, hidden_size=3, memory_size=4)
    >>> A, B = torch.randn(4, 3), 0.5 * torch.eye(4)
    >>> W_mo, b_mo = init_lmn_from_unrolled_(lmn, urnn, readout, A, B)
    >>> W_mo.shape, b_mo.shape
    (torch.Size([1, 4]), torch.Size([1]))
    >>> torch.equal(lmn.layers[0].weight_hm, A)
    True
    """
    layer = _lmn_layer(lmn)
    A64, B64, W_mh, W_mo = transfer_matrices(layer, urnn, readout, A, B)
    out_like = readout.weight
    if getattr(layer, "memory_matrix", None) == "schur":
        W_mo = set_schur_transfer_(layer, urnn, A64, W_mh, B64, W_mo)
        return (
            W_mo.to(dtype=out_like.dtype, device=out_like.device),
            readout.bias.detach().clone(),
        )
    like = layer.weight_xh
    layer.weight_xh.copy_(urnn.weight_xh)
    layer.bias_h.copy_(urnn.bias_h)
    layer.weight_hm.copy_(A64)
    layer.weight_mh.copy_(W_mh)
    if getattr(layer, "bias_m", None) is not None:
        layer.bias_m.zero_()
    B_like = B64.to(dtype=like.dtype, device=like.device)
    if parametrize.is_parametrized(layer, "weight_mm"):
        layer.weight_mm = B_like
    else:
        layer.weight_mm.copy_(B_like)
    return (
        W_mo.to(dtype=out_like.dtype, device=out_like.device),
        readout.bias.detach().clone(),
    )


@torch.no_grad()
def set_schur_transfer_(
    layer: nn.Module,
    urnn: UnrolledRNN,
    W_hm: Tensor,
    W_mh: Tensor,
    W_mm: Tensor,
    W_mo: Tensor,
) -> Tensor:
    """Write the transfer's weights (float64, in the coordinates where the
    memory matrix is ``W_mm``) into a ``'schur'`` LMN layer: ``W_xh``,
    ``b_h`` from the URNN, ``b_m = 0``, the memory basis reset to the
    identity and turned by ``set_memory_(W_mm)``. Returns the memory readout
    ``W_mo Q`` in the layer's new coordinates (float64)."""
    layer.weight_xh.copy_(urnn.weight_xh)
    layer.bias_h.copy_(urnn.bias_h)
    layer.weight_hm.copy_(W_hm)
    layer.weight_mh.copy_(W_mh)
    if getattr(layer, "bias_m", None) is not None:
        layer.bias_m.zero_()
    layer.memory_basis.copy_(torch.eye(layer.memory_size))
    Q = layer.set_memory_(W_mm)
    return W_mo @ Q.to(W_mo)


def transfer_matrices(
    layer: nn.Module, urnn: UnrolledRNN, readout: TapeReadout, A, B
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The checked ``A``, ``B`` and the transfer's ``W_mh``, ``W_mo``
    (float64, on the URNN's device) of :func:`init_lmn_from_unrolled_`."""
    if not getattr(layer, "feedback", True):
        raise ValueError(
            "the unrolled transfer writes the memory-to-hidden feedback W_mh, "
            "and the LMN was built with feedback=False (an estimator's "
            "feedback='none'); build it with feedback=True (feedback='free')"
        )
    if not isinstance(urnn, UnrolledRNN):
        raise ValueError(f"urnn must be an UnrolledRNN, got {type(urnn).__name__}")
    if urnn.bidirectional:
        raise ValueError(
            "init_lmn_from_unrolled_ needs a unidirectional UnrolledRNN (the "
            "tape readout reads the past of one direction), got "
            "bidirectional=True"
        )
    if not isinstance(readout, TapeReadout):
        raise ValueError(f"readout must be a TapeReadout, got {type(readout).__name__}")
    H, k = urnn.hidden_size, urnn.tape_length
    if readout.hidden_size != H or readout.tape_length != k:
        raise ValueError(
            f"readout must match the URNN (hidden_size={H}, tape_length={k}), got "
            f"hidden_size={readout.hidden_size}, tape_length={readout.tape_length}"
        )
    if layer.input_size != urnn.input_size or layer.hidden_size != H:
        raise ValueError(
            f"lmn must have input_size={urnn.input_size} and hidden_size={H} like "
            f"the URNN, got input_size={layer.input_size}, "
            f"hidden_size={layer.hidden_size}"
        )
    if getattr(layer, "memory_matrix", "free") == "orthogonal":
        raise ValueError(
            "init_lmn_from_unrolled_ cannot set an orthogonal memory_matrix to the "
            "LAES matrix B; use memory_matrix='free', 'spectral' or 'schur'"
        )
    p = layer.memory_size
    # The products are formed in float64, then cast to the modules' dtype.
    A64 = torch.as_tensor(A).detach().to(device=urnn.weight_xh.device).double()
    B64 = torch.as_tensor(B).detach().to(device=urnn.weight_xh.device).double()
    if tuple(A64.shape) != (p, H):
        raise ValueError(
            f"A must have shape (memory_size, hidden_size) = {(p, H)}, "
            f"got {tuple(A64.shape)}"
        )
    if tuple(B64.shape) != (p, p):
        raise ValueError(f"B must have shape {(p, p)}, got {tuple(B64.shape)}")
    # decoders[j] = A^T (B^T)^j decodes h_{t-j} from m_t, j = 0..k.
    decoders = [A64.T]
    for _ in range(k):
        decoders.append(decoders[-1] @ B64.T)
    W_tape = urnn.weight_hh.detach().double()
    W_out = readout.weight.detach().double()
    W_mh = sum(W_tape[i - 1] @ decoders[i - 1] for i in range(1, k + 1))
    W_mo = sum(W_out[i] @ decoders[i] for i in range(k + 1))
    return A64, B64, W_mh, W_mo
