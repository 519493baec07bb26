"""The network every estimator trains: a recurrent module and a linear
readout."""

from __future__ import annotations

import contextlib
import warnings

import torch
from torch import Tensor, nn

from ..nn._base import forward_with_penalty, legacy_penalty
from ..nn._padding import gather_last, mask_from_lengths, zero_padded
from ._splines import SplineReadout

__all__ = ["POOLINGS", "POOLING_WIDTHS", "SequenceNet", "extrema_valid", "mean_valid"]

#: What a sequence-level readout reads (see :class:`SequenceNet`).
POOLINGS = ("last", "last+mean", "last+mean+max", "auto")
#: Width of each pooling's readout input, in units of the output width:
#: the last step, the mean, the maxima and minima (``'auto'`` holds all).
POOLING_WIDTHS = {"last": 1, "last+mean": 2, "last+mean+max": 4, "auto": 4}


def mean_valid(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Mean of each sequence's output over its valid steps.

    Parameters
    ----------
    output : Tensor of shape (N, T, F)
        Batch-first output, any values at padded steps.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: all ``T`` steps).

    Returns
    -------
    mean : Tensor of shape (N, F)

    Examples
    --------
    >>> out = torch.tensor([[[1.0], [3.0], [9.0]], [[2.0], [4.0], [6.0]]])
    >>> mean_valid(out, torch.tensor([2, 3])).flatten().tolist()
    [2.0, 4.0]
    """
    if lengths is None:
        return output.mean(dim=1)
    total = zero_padded(output, lengths).sum(dim=1)
    return total / lengths.to(device=output.device, dtype=output.dtype)[:, None]


def extrema_valid(output: Tensor, lengths: Tensor | None) -> Tensor:
    """Maximum and minimum of each sequence's output over its valid steps.

    Parameters
    ----------
    output : Tensor of shape (N, T, F)
        Batch-first output, any values at padded steps.
    lengths : Tensor of shape (N,) or None
        Valid lengths (``None``: all ``T`` steps).

    Returns
    -------
    extrema : Tensor of shape (N, 2 F)
        The maxima, then the minima.

    Examples
    --------
    >>> out = torch.tensor([[[1.0], [3.0], [9.0]], [[2.0], [4.0], [6.0]]])
    >>> extrema_valid(out, torch.tensor([2, 3])).tolist()
    [[3.0, 1.0], [6.0, 2.0]]
    """
    if lengths is None:
        high, low = output.amax(dim=1), output.amin(dim=1)
    else:
        valid = mask_from_lengths(lengths, output.shape[1], device=output.device)
        pad = ~valid[:, :, None]
        high = output.masked_fill(pad, float("-inf")).amax(dim=1)
        low = output.masked_fill(pad, float("inf")).amin(dim=1)
    return torch.cat([high, low], -1)


class SequenceNet(nn.Module):
    """A recurrent module followed by a linear readout.

    For sequence-level targets the readout reads the recurrent output at each
    sequence's last valid step (``pooling='last'``), or that output and the
    output's mean over the valid steps side by side, the mean multiplied by
    the buffer ``pool_scale`` (``pooling='last+mean'``; a pretrainer sets the
    scale, 1 otherwise). ``pooling='auto'`` has the same two blocks with the
    scale at 0 (the network computes what ``'last'`` computes, and the mean
    block's weights get no gradient) until a pretrainer that chooses the
    readout by cross-validation sets it (:class:`~sklmn.pretraining.LAESInitializer`).
    ``pooling='last+mean+max'`` adds a third block, the maximum and the
    minimum of the output over the valid steps (:func:`extrema_valid`),
    multiplied by the buffer ``extrema_scale``; ``'auto'`` holds it too, at
    scale 0 until the pretrainer's choice.
    For per-time-step targets the readout reads every step (the loss masks
    padded steps).

    A frozen start (:meth:`attach_start_`, the LMN estimators'
    ``fine_tuning='residual'``) is a second network of the same kind whose
    outputs are added to this one's: its parameters do not train, it runs
    in evaluation mode and without gradient, and this network learns what
    it leaves unexplained.

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
    pooling : {'last', 'last+mean', 'last+mean+max', 'auto'}, default='last'
        What a sequence-level readout reads (above); must be ``'last'`` with
        ``per_step=True``.

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

    def __init__(
        self,
        recurrent: nn.Module,
        n_outputs: int,
        *,
        per_step: bool = False,
        pooling: str = "last",
    ):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        if per_step and pooling != "last":
            raise ValueError(
                f"pooling={pooling!r} needs sequence-level targets; per-step "
                "outputs read every step (pooling='last')"
            )
        self.recurrent = recurrent
        self.per_step = bool(per_step)
        self.pooling = pooling
        n_in = int(recurrent.output_size)
        width = POOLING_WIDTHS[pooling]
        if pooling == "auto":
            # the readout of 'last' (the same random draws), and zero weights
            # on the pooled blocks: until a pretrainer resolves the pooling,
            # the network is the one pooling='last' builds
            last = nn.Linear(n_in, int(n_outputs))
            self.readout = nn.utils.skip_init(
                nn.Linear, width * n_in, int(n_outputs)
            )
            with torch.no_grad():
                self.readout.weight.zero_()
                self.readout.weight[:, :n_in].copy_(last.weight)
                self.readout.bias.copy_(last.bias)
        else:
            self.readout = nn.Linear(width * n_in, int(n_outputs))
        if pooling != "last":
            scale = 0.0 if pooling == "auto" else 1.0
            self.register_buffer("pool_scale", torch.tensor(scale))
        if width == 4:
            self.register_buffer("extrema_scale", torch.tensor(scale))
            # the extrema are read in the start's coordinates (absent from
            # networks saved before: theirs read the module's own)
            self.register_buffer("extrema_turn", torch.tensor(1.0))
        self.start = None
        self.splines = None

    def attach_start_(self, start: SequenceNet) -> None:
        """Add the outputs of ``start``, frozen, to this network's outputs.

        ``start`` (a network with the same inputs and outputs, e.g. a
        pretrained one) becomes the submodule ``start``: its parameters stop
        requiring gradients, it stays in evaluation mode when this network
        trains, and its forward pass runs without gradient. With this
        network's readout at zero the sum computes exactly what ``start``
        computes; training then fits the residual.

        Parameters
        ----------
        start : SequenceNet
            The frozen network; its outputs must have this network's shape.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet
        >>> start, net = SequenceNet(LMN(2, 3, 3), 2), SequenceNet(LMN(2, 3, 3), 2)
        >>> with torch.no_grad():
        ...     _ = net.readout.weight.zero_(), net.readout.bias.zero_()
        >>> net.attach_start_(start)
        >>> x = torch.randn(4, 5, 2)
        >>> torch.allclose(net(x), start(x))
        True
        >>> any(p.requires_grad for p in net.start.parameters())
        False
        """
        if not isinstance(start, SequenceNet):
            raise TypeError(
                f"start must be a SequenceNet, got {type(start).__name__}"
            )
        if start is self:
            raise ValueError("a network cannot be its own start")
        start.requires_grad_(False)
        self.start = start
        start.train(False)

    def attach_splines_(self, splines: SplineReadout) -> None:
        """Add a readout of the pooled features' splines to the linear one.

        The outputs become ``readout(z) + splines(z)`` for the pooled
        features ``z`` (:meth:`features`); ``splines`` becomes the submodule
        ``splines``. From then on the recurrent module is held fixed: the
        forward pass runs it without gradient, so that training (a
        ``partial_fit``, a warm start) moves the readouts only. The spline
        readout draws thresholds on the features, and features moved under
        it undo its fit. For sequence-level targets. The classifiers'
        projection fine-tuning attaches one when it predicts better
        (``docs/memory.md``, "The spline readout").

        Parameters
        ----------
        splines : SplineReadout
            Its knots must have one row per feature and its outputs the
            readout's.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet, SplineReadout
        >>> net = SequenceNet(LMN(2, 3, 3), 2)
        >>> x = torch.randn(4, 5, 2)
        >>> before = net(x)
        >>> net.attach_splines_(SplineReadout(torch.zeros(3, 4), 2))
        >>> torch.allclose(net(x), before)  # zero weights add nothing
        True
        """
        if not isinstance(splines, SplineReadout):
            raise TypeError(
                f"splines must be a SplineReadout, got {type(splines).__name__}"
            )
        if self.per_step:
            raise ValueError("a per-step readout has no pooled features to split")
        d, n_out = self.readout.in_features, self.readout.out_features
        if splines.knots.shape[0] != d or splines.weight.shape[0] != n_out:
            raise ValueError(
                f"splines must read {d} features into {n_out} outputs, got "
                f"{splines.knots.shape[0]} features and {splines.weight.shape[0]} "
                "outputs"
            )
        device, dtype = self.readout.weight.device, self.readout.weight.dtype
        self.splines = splines.to(device=device, dtype=dtype)

    def train(self, mode: bool = True) -> SequenceNet:
        """Set the training mode (:meth:`torch.nn.Module.train`); a frozen
        start (:meth:`attach_start_`) stays in evaluation mode."""
        super().train(mode)
        start = getattr(self, "start", None)
        if start is not None:
            start.train(False)
        return self

    @property
    def resolved_pooling(self) -> str:
        """What the readout reads now: ``'last'``, ``'last+mean'`` or
        ``'last+mean+max'`` (for ``pooling='auto'``, which pooled blocks have
        a scale above 0)."""
        pooling = getattr(self, "pooling", "last")  # models saved before
        if pooling == "auto":
            extrema = getattr(self, "extrema_scale", None)  # saved before: none
            if extrema is not None and float(extrema) != 0.0:
                return "last+mean+max"
            return "last+mean" if float(self.pool_scale) != 0.0 else "last"
        return pooling

    @torch.no_grad()
    def start_mean_block_(self, scale: float = 1.0) -> None:
        """Read the mean block at ``scale``, its readout weights set to zero.

        The outputs do not change (the block's weights are zero); training
        can then use the block. For networks with a mean block
        (``pooling='last+mean'`` or ``'auto'``).

        Parameters
        ----------
        scale : float, default=1.0
            The new ``pool_scale``.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet
        >>> net = SequenceNet(LMN(2, 3, 3), 2, pooling="auto")
        >>> net.resolved_pooling
        'last'
        >>> x = torch.randn(4, 5, 2)
        >>> before = net(x)
        >>> net.start_mean_block_()
        >>> net.resolved_pooling, torch.allclose(net(x), before)
        ('last+mean', True)
        """
        if getattr(self, "pooling", "last") == "last":
            raise ValueError("a pooling='last' network has no mean block")
        n_in = self._n_last()
        self.readout.weight[:, n_in:] = 0.0
        self.pool_scale.fill_(float(scale))
        extrema = getattr(self, "extrema_scale", None)
        if extrema is not None and self.pooling == "auto":
            extrema.fill_(0.0)  # 'auto' then reads what 'last+mean' reads

    @torch.no_grad()
    def start_pooled_blocks_(self, scale: float = 1.0) -> None:
        """Read the mean and the extrema blocks at ``scale``, their readout
        weights set to zero.

        As :meth:`start_mean_block_`, with the block of maxima and minima
        too, for networks that have one (``pooling='last+mean+max'`` or
        ``'auto'``); the outputs do not change.

        Parameters
        ----------
        scale : float, default=1.0
            The new ``pool_scale`` and ``extrema_scale``.

        Examples
        --------
        >>> import torch
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet
        >>> net = SequenceNet(LMN(2, 3, 3), 2, pooling="auto")
        >>> x = torch.randn(4, 5, 2)
        >>> before = net(x)
        >>> net.start_pooled_blocks_()
        >>> net.resolved_pooling, torch.allclose(net(x), before)
        ('last+mean+max', True)
        """
        if getattr(self, "extrema_scale", None) is None:
            raise ValueError(
                f"a pooling={getattr(self, 'pooling', 'last')!r} network has no "
                "block of extrema"
            )
        self.start_mean_block_(scale)
        self.extrema_scale.fill_(float(scale))

    @torch.no_grad()
    def match_saved_layout_(self, state_dict: dict, prefix: str = "") -> None:
        """Build the readout layout of a saved ``state_dict``, before loading it.

        Networks with ``pooling='auto'`` saved before the block of extrema
        existed read the last step and the mean only (a readout of twice the
        output width, no ``extrema_scale``): such a network drops its block
        of extrema here, so that the saved weights fit it. Networks saved
        before the extrema were read in the start's coordinates (no
        ``extrema_turn``) keep reading them in the module's own
        (:meth:`extrema_basis`). A network saved with a spline readout
        (:meth:`attach_splines_`) gets one of the saved shapes. A frozen
        start (``start``) is matched the same way. Other layouts are left as
        they are.

        Parameters
        ----------
        state_dict : dict
            The saved tensors, by name.
        prefix : str, default=''
            The prefix of this network's names in ``state_dict``.

        Examples
        --------
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet
        >>> net = SequenceNet(LMN(2, 3, 3), 2, pooling="auto")
        >>> new = ("extrema_scale", "extrema_turn")
        >>> old = {k: v for k, v in net.state_dict().items() if k not in new}
        >>> old["readout.weight"] = old["readout.weight"][:, :6]
        >>> net.match_saved_layout_(old)
        >>> net.readout.in_features, net.resolved_pooling
        (6, 'last')
        >>> _ = net.load_state_dict(old)
        """
        weight = state_dict.get(prefix + "readout.weight")
        if (
            getattr(self, "pooling", "last") == "auto"
            and getattr(self, "extrema_scale", None) is not None
            and prefix + "extrema_scale" not in state_dict
            and weight is not None
            and weight.shape[-1] == 2 * self._n_last()
        ):
            del self.extrema_scale
            old = self.readout
            self.readout = nn.Linear(
                2 * self._n_last(),
                old.out_features,
                device=old.weight.device,
                dtype=old.weight.dtype,
            )
        if (
            getattr(self, "extrema_turn", None) is not None
            and prefix + "extrema_turn" not in state_dict
            and prefix + "readout.weight" in state_dict
        ):
            del self.extrema_turn  # saved before: the module's coordinates
        knots = state_dict.get(prefix + "splines.knots")
        weight = state_dict.get(prefix + "splines.weight")
        if (
            getattr(self, "splines", None) is None
            and knots is not None
            and weight is not None
        ):  # a spline readout saved with the weights: built to load them
            self.attach_splines_(SplineReadout(
                knots.detach().cpu().double().numpy(), weight.shape[0],
                weight=weight.detach().cpu().double().numpy(), dtype=weight.dtype,
            ))
        start = getattr(self, "start", None)
        if start is not None:
            start.match_saved_layout_(state_dict, prefix + "start.")

    def _n_last(self) -> int:
        """Width of the last-step block of the readout's input."""
        return int(self.recurrent.output_size)

    def features(self, output: Tensor, lengths: Tensor | None) -> Tensor:
        """What the readout of a sequence-level target reads.

        Parameters
        ----------
        output : Tensor of shape (N, T, output_size)
            The recurrent module's output.
        lengths : Tensor of shape (N,) or None

        Returns
        -------
        features : Tensor of shape (N, readout.in_features)
        """
        last = gather_last(output, lengths)
        if getattr(self, "pooling", "last") == "last":  # models saved before
            return last
        blocks = [last, self.pool_scale * mean_valid(output, lengths)]
        extrema = getattr(self, "extrema_scale", None)  # saved before: none
        if extrema is not None:
            blocks.append(self._extrema_block(output, lengths, extrema))
        return torch.cat(blocks, -1)

    def _extrema_block(self, output: Tensor, lengths, scale: Tensor) -> Tensor:
        """``scale`` times the extrema of ``output`` turned by
        :meth:`extrema_basis`. A block switched off ('auto' without extrema)
        is zero with zero gradients, so on the CPU it is not computed (a CUDA
        scale is not read, which would wait for the device)."""
        if scale.device.type == "cpu" and float(scale) == 0.0:
            return output.new_zeros(output.shape[0], 2 * output.shape[2])
        basis = self.extrema_basis()
        if basis is not None:
            output = output @ basis.T
        return scale * extrema_valid(output, lengths)

    def extrema_basis(self) -> Tensor | None:
        """The turn of the recurrent output before its extrema are taken.

        A memory held in real Schur form (``memory_matrix='schur'``) turns
        its coordinates when it is set to a dense start (``m = P m'``); the
        last step and the mean are linear and the readout absorbs the turn,
        but the maximum and the minimum of each unit are not, so the block
        of extrema reads ``P m'``, the start's own coordinates: a network
        set to a start computes the same function whichever parametrization
        holds its memory. ``P`` is the recurrent module's ``output_basis()``
        (None without one, or for networks saved before the turn existed).

        Returns
        -------
        basis : Tensor of shape (F, F) or None
            ``P``; the block reads the extrema of ``output @ P.T``.

        Examples
        --------
        >>> from sklmn.nn import LMN
        >>> from sklmn.training import SequenceNet
        >>> net = SequenceNet(LMN(2, 3, 4, memory_matrix="schur"), 2,
        ...                   pooling="last+mean+max")
        >>> net.extrema_basis().shape
        torch.Size([4, 4])
        >>> SequenceNet(LMN(2, 3, 4), 2, pooling="last+mean+max").extrema_basis()
        """
        if getattr(self, "extrema_turn", None) is None:
            return None
        get = getattr(self.recurrent, "output_basis", None)
        return None if get is None else get()

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
        splines = getattr(self, "splines", None)  # models saved before: none
        # under a spline readout the recurrent part is held fixed
        with torch.no_grad() if splines is not None else contextlib.nullcontext():
            if return_penalty:
                (output, _), penalty = forward_with_penalty(
                    self.recurrent, X, lengths=lengths
                )
            else:
                output, _ = self.recurrent(X, lengths=lengths)
        if not self.per_step:
            output = self.features(output, lengths)
        outputs = self.readout(output)
        if splines is not None:
            outputs = outputs + splines(output)
        start = getattr(self, "start", None)  # models saved before: none
        if start is not None:
            with torch.no_grad():
                offset = start(X, lengths)
            outputs = outputs + offset
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
