"""Clockwork RNN (Koutník et al., 2014), unidirectional or bidirectional.

The hidden state is split into modules updated with their own periods (the
clock of :mod:`sklmn.nn._clock`, shared with :class:`~sklmn.nn.MultiScaleLMN`).
With nested periods a step updates the active prefix of the modules with one
sliced product; otherwise a masked update is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._base import RecurrentModule
from ._checks import check_bool, check_input, check_positive_int, check_step_input
from ._clock import (
    active_modules,
    active_prefix_counts,
    block_upper_mask,
    check_bidirectional_counter,
    check_periods,
    check_state_tensor,
    check_step_counter,
    is_nested,
    uniform_start,
)
from ._padding import gather_last, reverse_padded, zero_padded

__all__ = ["ClockworkRNN"]


class ClockworkRNN(RecurrentModule):
    r"""Clockwork RNN (Koutník et al., 2014) with a tanh nonlinearity.

    The hidden state is split into ``n_modules`` modules of ``module_size``
    units; module ``k`` (0-based) has period ``periods[k]`` and is updated at
    steps ``t`` with ``t mod periods[k] = 0`` (``t`` from 0 at each
    sequence's start), otherwise it keeps its state:

    .. math::

        h_{k,t} = \tanh\Big(W^{xh}_k x_t + \sum_{i \ge k} W^{hh}_{k,i}
                  h_{i,t-1} + b_k\Big) \quad \text{if } t \bmod p_k = 0

    A module reads itself and the slower modules (block upper-triangular
    ``W^{hh}``, the same convention as :class:`MultiScaleLMN`). The output is
    the full hidden state.

    Parameters
    ----------
    input_size : int
        Number of input features.
    module_size : int
        Units per module; ``hidden_size = n_modules * module_size``.
    n_modules : int
        Number of modules.
    periods : sequence of int, optional
        Strictly increasing periods, fastest first (default ``2**k``). When
        each period divides the next, the active modules form a prefix and a
        step costs one sliced product; otherwise a masked update is used.
    bidirectional : bool, default=False
        Add a reverse direction, a second Clockwork RNN with the same settings
        (:attr:`reverse`) that reads each sequence's valid part backwards, its
        clock starting at the last valid step; outputs and states are
        concatenated ``[forward, reverse]`` (``output_size`` doubles).
        Padding never changes the outputs.
    device : torch.device, optional
    dtype : torch.dtype, optional

    Attributes
    ----------
    weight_xh : Parameter of shape (hidden_size, input_size)
    weight_hh : Parameter of shape (hidden_size, hidden_size)
        Raw recurrent matrix; only its block upper triangle is used.
    bias_h : Parameter of shape (hidden_size,)
    hidden_mask : Tensor
        0/1 block upper-triangular mask (buffer).
    hidden_size : int
        Units per direction, ``n_modules * module_size``.
    output_size : int
        ``hidden_size`` times 2 if bidirectional.
    reverse : ClockworkRNN or None
        The reverse direction when ``bidirectional``; the parameters above
        are the forward direction's.
    num_directions : int
        2 if bidirectional, else 1.

    Notes
    -----
    The state is a tuple ``(h, t)`` with the int64 step counter ``t``
    (``(N,)``, index of each sequence's next step). With
    ``bidirectional=True``, ``h`` is ``(N, 2 * hidden_size)`` (forward, then
    reverse: its state after reading the whole sequence backwards), a given
    state must have a zero step counter and :meth:`step` is not available.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import ClockworkRNN
    >>> _ = torch.manual_seed(0)
    >>> net = ClockworkRNN(3, module_size=4, n_modules=3)
    >>> net.periods, net.output_size
    ((1, 2, 4), 12)
    >>> out, (h, t) = net(torch.randn(2, 6, 3), lengths=torch.tensor([6, 2]))
    >>> out.shape, t.tolist()
    (torch.Size([2, 6, 12]), [6, 2])
    >>> bi = ClockworkRNN(3, module_size=4, n_modules=3, bidirectional=True)
    >>> bi(torch.randn(2, 6, 3), lengths=[6, 2])[0].shape
    torch.Size([2, 6, 24])
    """

    def __init__(
        self,
        input_size: int,
        module_size: int,
        n_modules: int,
        *,
        periods: Sequence[int] | None = None,
        bidirectional: bool = False,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.module_size = check_positive_int("module_size", module_size)
        self.n_modules = check_positive_int("n_modules", n_modules)
        self.periods = check_periods(periods, self.n_modules)
        self.bidirectional = check_bool("bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.hidden_size = self.n_modules * self.module_size
        self.output_size = self.hidden_size * self.num_directions
        factory = {"device": device, "dtype": dtype}
        M = self.hidden_size
        self.weight_xh = nn.Parameter(torch.empty(M, self.input_size, **factory))
        self.weight_hh = nn.Parameter(torch.empty(M, M, **factory))
        self.bias_h = nn.Parameter(torch.empty(M, **factory))
        self.register_buffer(
            "hidden_mask",
            block_upper_mask(
                self.n_modules,
                self.module_size,
                device=self.weight_hh.device,
                dtype=self.weight_hh.dtype,
            ),
            persistent=False,
        )
        self.reset_parameters()
        self.reverse = None
        if self.bidirectional:
            self.reverse = ClockworkRNN(
                input_size,
                module_size,
                n_modules,
                periods=self.periods,
                device=device,
                dtype=dtype,
            )

    def reset_parameters(self) -> None:
        """Re-initialize: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` weights over
        the blocks in use, zeros below the block diagonal and zero biases
        (both directions when bidirectional)."""
        with torch.no_grad():
            bound = 1.0 / math.sqrt(self.input_size)
            self.weight_xh.uniform_(-bound, bound)
            self.weight_hh.zero_()
            n = self.module_size
            for k in range(self.n_modules):
                bound = 1.0 / math.sqrt((self.n_modules - k) * n)
                self.weight_hh[k * n : (k + 1) * n, k * n :].uniform_(-bound, bound)
            self.bias_h.zero_()
        if getattr(self, "reverse", None) is not None:
            self.reverse.reset_parameters()

    def extra_repr(self) -> str:
        s = (
            f"{self.input_size}, module_size={self.module_size}, "
            f"n_modules={self.n_modules}, periods={self.periods}"
        )
        return s + (", bidirectional=True" if self.bidirectional else "")

    def masked_weight_hh(self) -> Tensor:
        """The effective block upper-triangular recurrent matrix."""
        return self.weight_hh * self.hidden_mask

    def _check_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[Tensor, Tensor]:
        if state is None:
            h = torch.zeros(n, self.hidden_size, device=like.device, dtype=like.dtype)
            return h, torch.zeros(n, dtype=torch.int64, device=like.device)
        if isinstance(state, Tensor):
            state = (state,)
        if not isinstance(state, tuple | list) or len(state) not in (1, 2):
            raise ValueError(
                f"state must be a tuple (h, t) or a tensor h, got {state!r:.60}"
            )
        h = check_state_tensor(state[0], (n, self.hidden_size), like, "state h")
        t = check_step_counter(state[1] if len(state) == 2 else 0, n, like.device)
        return h, t

    def forward(
        self,
        x: Tensor,
        lengths: Tensor | Sequence[int] | None = None,
        state: tuple | None = None,
        *,
        return_penalty: bool = False,
    ) -> tuple:
        """Run the Clockwork RNN over a batch of sequences.

        Parameters
        ----------
        x : Tensor of shape (N, T, input_size)
        lengths : Tensor of shape (N,), optional
        state : tuple (h, t), optional
        return_penalty : bool, default=False
            Also return the regularization term of this forward pass (the
            Clockwork RNN has none: a zero scalar).

        Returns
        -------
        output : Tensor of shape (N, T, output_size)
            Hidden states, zero on padded steps.
        state : tuple (h, t)
            Final state at each sequence's last valid step (the reverse
            direction's after reading the whole sequence backwards).
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: zero.
        """
        if self.reverse is None:
            out, final = self._forward_one(x, lengths, state)
            return self._forward_result(out, final, None, return_penalty)
        lengths, _ = check_input(x, lengths, self.input_size)
        state_f, state_r = self._split_state(state, x.shape[0], x)
        out_f, (h_f, t_end) = self._forward_one(x, lengths, state_f)
        # reverse direction: forwards on the reversed valid parts, its
        # output reversed back (padding stays in place and zero)
        out_r, (h_r, _) = self.reverse(reverse_padded(x, lengths), lengths, state_r)
        out = torch.cat([out_f, reverse_padded(out_r, lengths)], dim=2)
        final = (torch.cat([h_f, h_r], dim=1), t_end)
        return self._forward_result(out, final, None, return_penalty)

    def _split_state(
        self, state: object, n: int, like: Tensor
    ) -> tuple[Tensor | None, Tensor | None]:
        """Per-direction initial ``h`` of a bidirectional network."""
        if state is None:
            return None, None
        if isinstance(state, Tensor):
            state = (state,)
        if not isinstance(state, tuple | list) or len(state) not in (1, 2):
            raise ValueError(
                f"state must be a tuple (h, t) or a tensor h, got {state!r:.60}"
            )
        H = self.hidden_size
        h = check_state_tensor(state[0], (n, 2 * H), like, "state h")
        if len(state) == 2:
            check_bidirectional_counter(state[1], n, like.device, "ClockworkRNN")
        return h[:, :H], h[:, H:]

    def _forward_one(
        self, x: Tensor, lengths: Tensor | Sequence[int] | None, state: object
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """:meth:`forward` of the forward direction alone."""
        lengths, T = check_input(x, lengths, self.input_size)
        N, M = x.shape[0], self.hidden_size
        h, t0 = self._check_state(state, N, x)
        W_hh = self.masked_weight_hh()
        # Finished sequences keep running on zeroed inputs: their states stay
        # bounded (tanh) and are never read; outputs are zeroed and the final
        # state gathered at the last valid step. Zeroing also keeps NaN
        # padding out of the gradients.
        x = zero_padded(x, lengths)
        xp = F.linear(x.transpose(0, 1), self.weight_xh, self.bias_h)  # (T, N, M)
        xs = xp.unbind(0)  # per-step views with one backward for all steps
        start = uniform_start(t0)
        hs: list[Tensor] = []
        if start is not None and is_nested(self.periods):
            counts = active_prefix_counts(self.periods, start, T)
            W_T = {a: W_hh[:a].T for a in {c * self.module_size for c in counts}}
            for t in range(T):
                a = counts[t] * self.module_size
                h_a = torch.tanh(torch.addmm(xs[t][:, :a], h, W_T[a]))
                h = h_a if a == M else torch.cat([h_a, h[:, a:]], dim=1)
                hs.append(h)
        else:
            steps = t0.unsqueeze(1) + torch.arange(T, device=t0.device)
            active = active_modules(self.periods, steps).repeat_interleave(
                self.module_size, dim=2
            )
            for t in range(T):
                h = self._cell_masked(xs[t], h, W_hh, active[:, t])
                hs.append(h)
        h_seq = torch.stack(hs, dim=1)
        t_end = t0 + (T if lengths is None else lengths.to(t0.device))
        return zero_padded(h_seq, lengths), (gather_last(h_seq, lengths), t_end)

    @staticmethod
    def _cell_masked(xp_t: Tensor, h: Tensor, W_hh: Tensor, active: Tensor) -> Tensor:
        h_new = torch.tanh(torch.addmm(xp_t, h, W_hh.T))
        return torch.where(active, h_new, h)

    def step(
        self, x_t: Tensor, state: tuple | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """One time step; iterating it over ``t`` equals :meth:`forward`.

        Parameters
        ----------
        x_t : Tensor of shape (N, input_size)
        state : tuple (h, t), optional

        Returns
        -------
        y_t : Tensor of shape (N, hidden_size)
        state : tuple (h, t + 1)

        Examples
        --------
        >>> net = ClockworkRNN(2, 3, 2)
        >>> y, (h, t) = net.step(torch.ones(1, 2))
        >>> y.shape, t.tolist()
        (torch.Size([1, 6]), [1])
        """
        if self.bidirectional:
            raise RuntimeError(
                "step() is not available for a bidirectional ClockworkRNN: the "
                "reverse direction needs the whole sequence"
            )
        check_step_input(x_t, self.input_size)
        h, t = self._check_state(state, x_t.shape[0], x_t)
        active = active_modules(self.periods, t).repeat_interleave(
            self.module_size, dim=1
        )
        xp_t = F.linear(x_t, self.weight_xh, self.bias_h)
        h = self._cell_masked(xp_t, h, self.masked_weight_hh(), active)
        return h, (h, t + 1)
