"""The network every estimator trains: a recurrent module and a linear
readout."""

from __future__ import annotations

import warnings

from torch import Tensor, nn

from ..nn._base import forward_with_penalty, gather_last, legacy_penalty

__all__ = ["SequenceNet"]


class SequenceNet(nn.Module):
    """A recurrent module followed by a linear readout.

    For sequence-level targets the readout reads the recurrent output at each
    sequence's last valid step; for per-time-step targets it reads every step
    (the loss masks padded steps).

    The regularization term of the recurrent module travels as a return value:
    ``net(X, lengths, return_penalty=True)`` returns ``(outputs, penalty)``,
    which is how :class:`SequenceNeuralNet` adds it to the training and
    validation losses; a plain call returns the outputs only (predictions).

    Parameters
    ----------
    recurrent : nn.Module
        Module following the :mod:`sklmn.nn` protocol
        (``output, state = recurrent(x, lengths=lengths)``, attribute
        ``output_size``; ``forward`` with a keyword ``return_penalty`` that
        makes it return ``(output, state, penalty)``, or, for modules written
        without it, an optional ``penalty()`` method read after the forward).
    n_outputs : int
        Number of readout units (classes, labels or regression outputs).
    per_step : bool, default=False
        Return one output per time step ``(N, T, n_outputs)`` instead of one
        per sequence ``(N, n_outputs)``.

    Examples
    --------
    >>> import torch
    >>> from sklmn.training import SequenceNet
    >>> class Identity(torch.nn.Module):
    ...     output_size = 2
    ...
    ...     def forward(self, x, lengths=None):
    ...         return x, None
    >>> net = SequenceNet(Identity(), 3)
    >>> net(torch.zeros(4, 5, 2), lengths=torch.tensor([5, 3, 1, 2])).shape
    torch.Size([4, 3])
    >>> outputs, penalty = net(torch.zeros(4, 5, 2), return_penalty=True)
    >>> penalty
    tensor(0.)
    """

    def __init__(self, recurrent: nn.Module, n_outputs: int, *, per_step: bool = False):
        super().__init__()
        self.recurrent = recurrent
        self.readout = nn.Linear(int(recurrent.output_size), int(n_outputs))
        self.per_step = bool(per_step)

    def forward(
        self,
        X: Tensor,
        lengths: Tensor | None = None,
        *,
        return_penalty: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Readout of the recurrent output.

        Parameters
        ----------
        X : Tensor of shape (N, T, input_size)
            Zero-padded batch.
        lengths : Tensor of shape (N,), optional
            Valid lengths.
        return_penalty : bool, default=False
            Also return the recurrent module's regularization term of this
            forward pass (the term the training loss adds).

        Returns
        -------
        outputs : Tensor of shape (N, n_outputs) or (N, T, n_outputs)
            Logits (classification) or predictions (regression).
        penalty : Tensor of shape ()
            Only with ``return_penalty=True``: the penalty, differentiable
            w.r.t. the parameters (zero when the module has none).
        """
        if return_penalty:
            (output, _), penalty = forward_with_penalty(
                self.recurrent, X, lengths=lengths
            )
        else:
            output, _ = self.recurrent(X, lengths=lengths)
        if not self.per_step:
            output = gather_last(output, lengths)
        outputs = self.readout(output)
        return (outputs, penalty) if return_penalty else outputs

    def penalty(self) -> Tensor:
        """Regularization term of the recurrent module's last forward (or 0).

        Deprecated: emits a :class:`FutureWarning` and will be removed in a
        future release; call ``forward(X, lengths, return_penalty=True)``,
        which returns the penalty of that forward pass with the outputs.

        Returns
        -------
        penalty : Tensor of shape ()
        """
        warnings.warn(
            "SequenceNet.penalty() is deprecated and will be removed in a future "
            "release; use forward(X, lengths, return_penalty=True), which returns "
            "(outputs, penalty), instead.",
            FutureWarning,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            # the recurrent module's own penalty() warns the same
            warnings.simplefilter("ignore", FutureWarning)
            return legacy_penalty(self.recurrent)
