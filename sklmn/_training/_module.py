"""The network every estimator trains: a recurrent module and a linear
readout."""

from __future__ import annotations

from torch import Tensor, nn

from ..nn._base import gather_last

__all__ = ["SequenceNet"]


class SequenceNet(nn.Module):
    """A recurrent module followed by a linear readout.

    For sequence-level targets the readout reads the recurrent output at each
    sequence's last valid step; for per-time-step targets it reads every step
    (the loss masks padded steps).

    Parameters
    ----------
    recurrent : nn.Module
        Module following the :mod:`sklmn.nn` protocol
        (``output, state = recurrent(x, lengths=lengths)``, attribute
        ``output_size``, optional ``penalty()``).
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
    """

    def __init__(self, recurrent: nn.Module, n_outputs: int, *, per_step: bool = False):
        super().__init__()
        self.recurrent = recurrent
        self.readout = nn.Linear(int(recurrent.output_size), int(n_outputs))
        self.per_step = bool(per_step)

    def forward(self, X: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Readout of the recurrent output.

        Parameters
        ----------
        X : Tensor of shape (N, T, input_size)
            Zero-padded batch.
        lengths : Tensor of shape (N,), optional
            Valid lengths.

        Returns
        -------
        outputs : Tensor of shape (N, n_outputs) or (N, T, n_outputs)
            Logits (classification) or predictions (regression).
        """
        output, _ = self.recurrent(X, lengths=lengths)
        if not self.per_step:
            output = gather_last(output, lengths)
        return self.readout(output)

    def penalty(self) -> Tensor:
        """Regularization term of the recurrent module's last forward (or 0)."""
        penalty = getattr(self.recurrent, "penalty", None)
        if penalty is None:
            return self.readout.weight.new_zeros(())
        return penalty()
