"""Unrolled-RNN pretraining of the LMN.

Carta, Sperduti & Bacciu (2021), "Encoding-based memory modules for recurrent
neural networks", §4.1-4.3 and Alg. 1; Bacciu, Carta & Sperduti (2019),
"Linear memory networks", §4.1.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from torch import Tensor, nn

from .._training import FitContext, SequenceDataset, make_sequence_net
from ..nn import TapeReadout, UnrolledRNN
from ..nn._padding import gather_last
from ..utils._compat import Interval, StrOptions
from ..utils._doc_link import _DocLinkMixin
from ._common import (
    data_limit,
    fit_laes,
    logistic_readout,
    make_laes,
    module_sequences,
    network_states,
    padded_sequences,
    readout_problem,
    readout_targets,
    reduce_components,
    ridge_readout,
    rows,
    set_linear_,
)

__all__ = ["UnrolledPretrainer"]


class _TapeNet(nn.Module):
    """Unrolled RNN + tape readout, one output per sequence
    (at its last valid step) or per step."""

    def __init__(self, urnn: UnrolledRNN, readout: TapeReadout, per_step: bool):
        super().__init__()
        self.urnn = urnn
        self.readout = readout
        self.per_step = per_step

    def forward(
        self, X: Tensor, lengths: Tensor | None = None, *, return_penalty: bool = False
    ) -> Tensor | tuple[Tensor, Tensor]:
        h, _ = self.urnn(X, lengths=lengths)
        y = self.readout(h, lengths=lengths)
        y = y if self.per_step else gather_last(y, lengths)
        # the unrolled RNN and the tape readout have no penalty
        return (y, self.readout.bias.new_zeros(())) if return_penalty else y


class UnrolledPretrainer(_DocLinkMixin, BaseEstimator):
    r"""Pretrain an LMN from an unrolled RNN and a LAES.

    The pretraining of Carta, Sperduti & Bacciu (2021), Alg. 1, plugged into
    an estimator as
    ``LMNClassifier(pretrainer=UnrolledPretrainer(tape_length=k))``; ``fit``
    clones it into ``pretrainer_`` and calls :meth:`initialize` before the
    end-to-end training (the fine-tuning of Alg. 1). :meth:`initialize`

    1. trains an unrolled RNN (URNN) ``h_t = tanh(W_xh x_t + Σ_{i=1..k} W_i
       h_{t-i} + b)`` with a tape readout ``y_t = Σ_{i=0..k} W'_i h_{t-i} +
       b'`` (:class:`~sklmn.nn.UnrolledRNN`, :class:`~sklmn.nn.TapeReadout`)
       with the estimator's loss, on the estimator's training sequences, for
       ``max_iter`` epochs of Adam; the URNN has the LMN's ``hidden_size``
       units;
    2. collects its hidden sequences and fits a
       :class:`~sklmn.laes.LAESTransformer` with ``p`` components on them
       (no centering: the transfer has no memory bias);
    3. has the LMN set its first ``p`` memory units
       (:meth:`~sklmn.nn.LMN.init_from_unrolled_`, which applies
       :func:`~sklmn.nn.init_lmn_from_unrolled_`): ``W_xh``, ``b_h`` from
       the URNN, ``W_hm = A``, ``W_mm = B``, ``W_mh = [W_1 … W_k] U_k`` and
       the readout ``W_mo = [W'_0 … W'_k] U_{k+1}``, with
       ``U_k = [Aᵀ; AᵀBᵀ; …; Aᵀ(Bᵀ)^{k-1}]``.

    When the LAES is exact (``p`` at least the rank of its data matrix) the
    initialized LMN computes the URNN's outputs.

    **Sizes the data cannot hold are reduced, never an error:**
    ``p = min(n_components or memory_size, memory_size, n_steps, L *
    hidden_size)``, with ``n_steps`` the total number of valid training steps
    and ``L`` the longest length (``min(n_steps, L * hidden_size)`` bounds the
    rank of the LAES data matrix of the hidden sequences). Every reduction is
    recorded in :attr:`notes_`. ``hidden_size`` and ``memory_size`` may
    differ.

    **Memory units beyond the LAES keep the network's random
    initialization:** their ``W_hm`` rows (they read the hidden units) and
    their diagonal block of ``W_mm``, rescaled to spectral radius at most
    the layer's ``init_radius``; the hidden units do not read them (zero
    ``W_mh`` columns), the LAES units neither (zero ``W_mm`` blocks) and their
    readout columns are zero, so the outputs at initialization are the
    transferred ones while these units receive gradients from the first
    training step.

    Cost: the URNN's training dominates, ``max_iter`` epochs of
    backpropagation through time over the training set, followed by one LAES
    of ``L * hidden_size`` columns (matrix-free solver for long sequences).
    For 500 sequences of 300 steps, 1 feature, ``hidden_size=32``, one torch
    thread on a busy 2-core machine: about 0.35 s per epoch and 3 s for the
    LAES, 21 s with the default 50 epochs (two torch threads on the same
    busy cores: 147 s, the threads wait for each other on these small
    matrices).

    Parameters
    ----------
    tape_length : int, default=4
        Number ``k`` of past hidden states on the URNN's tape.
    n_components : int, default=None
        Requested LAES components ``p``; None is the LMN's ``memory_size``.
        Reduced as described above when the network or the data cannot hold
        it.
    max_iter : int, default=50
        Training epochs of the URNN.
    learning_rate_init : float, default=0.01
        Adam learning rate of the URNN.
    batch_size : int or 'auto', default='auto'
        Minibatch size (``'auto'``: ``min(200, n_samples)``).
    alpha : float, default=0.0
        Adam weight decay of the URNN.
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        LAES solver; ``'auto'`` picks the cheaper of ``'gram'`` and
        ``'matrix_free'`` by a cost model (matrix-free for the hidden
        sequences of long inputs).
    random_state : int, RandomState instance or None, default=None
        Seeds the URNN's initialization and minibatches (torch's global
        random state is left untouched) and the matrix-free LAES solver.

    Attributes
    ----------
    urnn_net_ : torch.nn.Module
        The trained URNN and its readout (``.urnn``, ``.readout``).
    laes_ : LAESTransformer
        The LAES fit on the URNN's hidden sequences.
    n_components_ : int
        Number ``p`` of LAES components used.
    notes_ : list of str
        What was adapted to the data and the network, e.g.
        ``"n_components reduced from 32 to 10: the data support at most 10
        (...)"``; empty when everything was used as requested.
    loss_curve_ : list of float
        Training loss of the URNN at every epoch.

    See Also
    --------
    LAESInitializer : Initialization from a LAES of the input sequences.

    Notes
    -----
    Only single-layer unidirectional LMNs with ``memory_matrix`` ``'free'``,
    ``'spectral'`` or ``'schur'`` (the transfer converted exactly, see
    ``docs/memory.md``; ``'schur'`` with ``output='memory'`` only) can be
    pretrained: the URNN→LMN equivalence is defined for one forward layer.
    With ``output='hidden'`` (LMN-h, Carta et al. 2021 §3.1) the transfer
    is the same (the LMN's hidden units then hold the URNN's hidden state
    when the LAES is exact), and the readout, which reads the hidden units
    and cannot hold the tape readout, is fitted on the initialized
    network's own hidden states (logistic regression with ``C = 1`` for
    classification, least squares for regression). Other LMNs raise a
    ``ValueError`` that names the unsupported option.

    References
    ----------
    A. Carta, A. Sperduti, D. Bacciu (2021), "Encoding-based memory modules for
    recurrent neural networks", §4.1-4.3, Alg. 1.
    D. Bacciu, A. Carta, A. Sperduti (2019), "Linear memory networks", §4.1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import LMNRegressor
    >>> from sklmn.pretraining import UnrolledPretrainer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(50, 6, 1)
    >>> y = X[:, 0, 0]
    >>> reg = LMNRegressor(hidden_size=4, memory_size=8, max_iter=2,
    ...                    pretrainer=UnrolledPretrainer(tape_length=3, max_iter=5,
    ...                                                  random_state=0),
    ...                    random_state=0).fit(X, y)
    >>> len(reg.pretrainer_.loss_curve_), reg.pretrainer_.n_components_
    (5, 8)
    """

    #: Fitted attributes that :func:`sklmn.persistence.load` may set (the
    #: unrolled network ``urnn_net_`` is a torch module and is not saved)
    _fitted_attributes: dict = {
        "loss_curve_": "list",
        "laes_": "estimator",
        "n_components_": "int",
        "notes_": "list",
    }

    _parameter_constraints: dict = {
        "tape_length": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [
            StrOptions({"auto"}),
            Interval(Integral, 1, None, closed="left"),
        ],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        tape_length=4,
        *,
        n_components=None,
        max_iter=50,
        learning_rate_init=0.01,
        batch_size="auto",
        alpha=0.0,
        solver="auto",
        random_state=None,
    ):
        self.tape_length = tape_length
        self.n_components = n_components
        self.max_iter = max_iter
        self.learning_rate_init = learning_rate_init
        self.batch_size = batch_size
        self.alpha = alpha
        self.solver = solver
        self.random_state = random_state

    @staticmethod
    def _check_network(recurrent: nn.Module) -> None:
        """The network must take the unrolled transfer
        (``init_from_unrolled_``, see ``docs/extending.md``): one forward
        layer whose readout reads the memory."""
        if not callable(getattr(recurrent, "init_from_unrolled_", None)):
            raise ValueError(
                f"UnrolledPretrainer initializes an LMN, got {type(recurrent).__name__}"
            )
        if recurrent.num_layers != 1:
            raise ValueError(
                "UnrolledPretrainer supports only num_layers=1 (the unrolled RNN "
                f"has one layer), got num_layers={recurrent.num_layers}; use "
                "LAESInitializer for stacked LMNs"
            )
        if recurrent.bidirectional:
            raise ValueError(
                "UnrolledPretrainer supports only bidirectional=False (the unrolled "
                "RNN reads the sequences forwards), got bidirectional=True; use "
                "LAESInitializer for bidirectional LMNs"
            )
        recurrent.check_laes_init("UnrolledPretrainer")

    def initialize(self, module: nn.Module, context: FitContext):
        """Pretrain and initialize ``module`` (a ``SequenceNet``) in place.

        Parameters
        ----------
        module : SequenceNet
            Network with an :class:`~sklmn.nn.LMN` ``.recurrent`` and a linear
            ``.readout``.
        context : FitContext
            The training sequences (``context.sequences``), their encoded
            targets (``context.y``) and the kind of target, which gives the
            loss of the unrolled network (``context.problem``,
            ``context.per_step``); the loss weights ``context.sample_weight``
            (when given) weight the unrolled network's loss as they weight
            the estimator's.

        Returns
        -------
        self : UnrolledPretrainer
        """
        self._validate_params()
        problem, per_step = readout_problem(context)
        seqs, y_encoded = context.sequences, context.y
        recurrent = module.recurrent
        self._check_network(recurrent)
        size, H = recurrent.memory_size, recurrent.hidden_size
        d = recurrent.input_size
        lengths = np.asarray(seqs.lengths)
        notes: list[str] = []
        limits = [
            (size, f"the network has memory_size={size}"),
            data_limit(lengths, H, "hidden units"),
        ]
        p = reduce_components(self.n_components, size, limits, notes)
        rng = check_random_state(self.random_state)
        torch_seed, shuffle_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))
        like = next(recurrent.parameters())
        factory = {"device": like.device, "dtype": like.dtype}
        n_out, k = module.readout.out_features, int(self.tape_length)
        # manual_seed seeds every CUDA device too: their states are restored
        cuda = torch.cuda.is_available()
        devices = list(range(torch.cuda.device_count())) if cuda else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(torch_seed)
            tape_net = _TapeNet(
                UnrolledRNN(d, H, k, **factory),
                TapeReadout(H, n_out, k, **factory),
                per_step,
            )
        n = seqs.n_samples
        batch_size = min(200, n) if self.batch_size == "auto" else int(self.batch_size)
        weight = context.sample_weight
        dataset = SequenceDataset(
            torch.from_numpy(seqs.data),
            torch.from_numpy(seqs.lengths),
            torch.from_numpy(np.asarray(y_encoded)),
            per_step=per_step,
            # the URNN minimizes the weighted loss that fine-tuning goes on with
            sample_weight=None if weight is None else torch.from_numpy(weight),
        )
        net = make_sequence_net(
            tape_net,
            problem=problem,
            per_step=per_step,
            lr=self.learning_rate_init,
            weight_decay=self.alpha,
            max_epochs=self.max_iter,
            batch_size=batch_size,
            device=str(like.device),
            shuffle_seed=shuffle_seed,
        )
        net.initialize()
        net.partial_fit(dataset)
        self.loss_curve_ = [float(v) for v in net.history[:, "train_loss"]]
        tape_net = net.module_
        tape_net.eval()

        # Alg. 1 lines 12-14: LAES on the URNN's hidden sequences.
        (h_seq,) = module_sequences(
            lambda Xb, lb: (tape_net.urnn(Xb.to(like.device), lengths=lb)[0],),
            dataset.X,
            dataset.lengths,
        )
        laes_seed = int(rng.randint(np.iinfo(np.int32).max))
        laes = make_laes(p, self.solver, lengths, H, random_state=laes_seed)
        fit_laes(laes, padded_sequences(h_seq, lengths))
        # Alg. 1 lines 15-19: the transfer, on the first p memory units (the
        # network maps the LAES and the URNN to its weights)
        W_mo, b_mo = recurrent.init_from_unrolled_(
            tape_net.urnn, tape_net.readout, laes.A_, laes.B_
        )
        if getattr(recurrent, "output", "memory") == "hidden":
            # LMN-h: the readout reads the hidden units, which hold the
            # URNN's hidden state; fitted on the network's own hidden states
            W_mo, b_mo = self._hidden_readout(module, context, problem, per_step)
        else:
            W_mo, b_mo = W_mo.cpu().numpy(), b_mo.cpu().numpy()
        # a pooled readout (pooling='last+mean') also reads the mean of the
        # memory: zero weights there, so that the start is the transfer
        W_read = np.zeros((W_mo.shape[0], module.readout.in_features))
        W_read[:, : W_mo.shape[1]] = W_mo
        set_linear_(module.readout, W_read, b_mo)
        self.urnn_net_ = tape_net
        self.laes_ = laes
        self.n_components_ = int(laes.n_components_)
        self.notes_ = notes
        return self

    @staticmethod
    def _hidden_readout(module, context, problem, per_step):
        """Readout ``(W, b)`` of an ``output='hidden'`` LMN, fitted on the
        final (or every valid) hidden state of the initialized network:
        logistic regression (``C = 1``) for classification, least squares
        (relative ridge ``1e-6``) for regression, the rows weighted by the
        loss weights."""
        seqs = context.sequences
        lengths = np.asarray(seqs.lengths)
        states = network_states(module.recurrent, seqs)
        features = rows(states, lengths, per_step)
        targets = readout_targets(
            context.y, problem, module.readout.out_features, lengths, per_step
        )
        weight = context.sample_weight
        if weight is not None and per_step:
            weight = rows(np.asarray(weight), lengths, per_step)
        if problem == "continuous":
            return ridge_readout(features, targets, 1e-6, sample_weight=weight)
        return logistic_readout(features, targets, problem, 1.0, sample_weight=weight)
