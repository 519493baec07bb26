"""Unrolled-RNN pretraining of the LMN (paper 000 Alg. 1, §4.2-4.3; 004 §4.1)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from torch import Tensor, nn

from ..laes import LAESTransformer
from ..nn import LMN, TapeReadout, UnrolledRNN, init_lmn_from_unrolled_
from ..nn._base import gather_last
from ._common import (
    module_sequences,
    pad_laes,
    problem_of,
    sequence_list,
    set_linear_,
)

__all__ = ["UnrolledPretrainer"]


class _TapeNet(nn.Module):
    """Unrolled RNN + tape readout (000 eq. 11-12), one output per sequence
    (at its last valid step) or per step."""

    def __init__(self, urnn: UnrolledRNN, readout: TapeReadout, per_step: bool):
        super().__init__()
        self.urnn = urnn
        self.readout = readout
        self.per_step = per_step

    def forward(self, X: Tensor, lengths: Tensor | None = None) -> Tensor:
        h, _ = self.urnn(X, lengths=lengths)
        y = self.readout(h, lengths=lengths)
        return y if self.per_step else gather_last(y, lengths)

    def penalty(self) -> Tensor:
        return self.readout.bias.new_zeros(())


class UnrolledPretrainer(BaseEstimator):
    r"""Pretrain an LMN from an unrolled RNN and a LAES (000 Alg. 1).

    Plugged into an estimator as
    ``LMNClassifier(pretrainer=UnrolledPretrainer(tape_length=k))``; ``fit``
    clones it into ``pretrainer_`` and calls :meth:`initialize` before the
    end-to-end training (the fine-tuning of Alg. 1). :meth:`initialize`

    1. trains an unrolled RNN (URNN) ``h_t = tanh(W_xh x_t + Σ_{i=1..k} W_i
       h_{t-i} + b)`` with a tape readout ``y_t = Σ_{i=0..k} W'_i h_{t-i} +
       b'`` (:class:`~sklmn.nn.UnrolledRNN`, :class:`~sklmn.nn.TapeReadout`)
       with the estimator's loss, on the estimator's training sequences;
    2. collects its hidden sequences and fits a
       :class:`~sklmn.laes.LAESTransformer` with ``p = memory_size``
       components on them (no centering: the transfer has no memory bias);
    3. sets the LMN (:func:`~sklmn.nn.init_lmn_from_unrolled_`): ``W_xh``,
       ``b_h`` from the URNN, ``W_hm = A``, ``W_mm = B``,
       ``W_mh = [W_1 … W_k] U_k`` and the readout
       ``W_mo = [W'_0 … W'_k] U_{k+1}``, with
       ``U_k = [Aᵀ; AᵀBᵀ; …; Aᵀ(Bᵀ)^{k-1}]``.

    When the LAES is exact (``p`` at least the rank of its data matrix) the
    initialized LMN computes the URNN's outputs.

    Parameters
    ----------
    tape_length : int, default=4
        Number ``k`` of past hidden states on the URNN's tape.
    n_components : int, default=None
        LAES components ``p``; None is the LMN's ``memory_size``. A smaller
        ``p`` leaves the other memory units zero (their rows of ``A`` and
        ``B`` are zero). The URNN has the LMN's ``hidden_size`` units.
    max_iter : int, default=50
        Training epochs of the URNN.
    learning_rate_init : float, default=0.01
        Adam learning rate of the URNN.
    batch_size : int or 'auto', default='auto'
        Minibatch size (``'auto'``: ``min(200, n_samples)``).
    alpha : float, default=0.0
        Adam weight decay of the URNN.
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        LAES solver.
    random_state : int, RandomState instance or None, default=None
        Seeds the URNN's initialization and minibatches (torch's global
        random state is left untouched).

    Attributes
    ----------
    urnn_net_ : torch.nn.Module
        The trained URNN and its readout (``.urnn``, ``.readout``).
    laes_ : LAESTransformer
        The LAES fit on the URNN's hidden sequences.
    loss_curve_ : list of float
        Training loss of the URNN at every epoch.

    See Also
    --------
    LAESInitializer : Initialization from a LAES of the input sequences.

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
    >>> len(reg.pretrainer_.loss_curve_), reg.pretrainer_.laes_.n_components_
    (5, 8)
    """

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
    def _lmn_layer(recurrent: nn.Module):
        if not isinstance(recurrent, LMN):
            raise ValueError(
                f"UnrolledPretrainer initializes an LMN, got {type(recurrent).__name__}"
            )
        if recurrent.num_layers != 1 or recurrent.bidirectional:
            raise ValueError(
                "UnrolledPretrainer needs a single-layer unidirectional LMN, got "
                f"num_layers={recurrent.num_layers}, "
                f"bidirectional={recurrent.bidirectional}"
            )
        if recurrent.output != "memory":
            raise ValueError(
                "UnrolledPretrainer needs an LMN with output='memory' (the readout "
                f"W_mo reads the memory), got output={recurrent.output!r}"
            )
        return recurrent.layers[0]

    def initialize(self, module: nn.Module, seqs, y_encoded, *, estimator):
        """Pretrain and initialize ``module`` (a ``SequenceNet``) in place.

        Parameters
        ----------
        module : SequenceNet
            Network with an :class:`~sklmn.nn.LMN` ``.recurrent`` and a linear
            ``.readout``.
        seqs : Sequences
            Validated training sequences.
        y_encoded : ndarray
            Encoded training targets.
        estimator : estimator
            The sequence estimator being fitted (gives the loss).

        Returns
        -------
        self : UnrolledPretrainer
        """
        from ..estimators._net import (  # deferred: estimators import this package
            SequenceDataset,
            SequenceLoss,
            SequenceNeuralNet,
            collate_batch,
        )

        self._validate_params()
        problem, per_step = problem_of(estimator)
        layer = self._lmn_layer(module.recurrent)
        p, H, d = layer.memory_size, layer.hidden_size, layer.input_size
        if self.n_components is not None and self.n_components > p:
            raise ValueError(
                f"n_components={self.n_components} must be at most the LMN's "
                f"memory_size {p}"
            )
        size, p = p, p if self.n_components is None else int(self.n_components)
        rng = check_random_state(self.random_state)
        torch_seed, shuffle_seed = (int(s) for s in rng.randint(2**31 - 1, size=2))
        like = layer.weight_xh
        factory = {"device": like.device, "dtype": like.dtype}
        n_out, k = module.readout.out_features, int(self.tape_length)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(torch_seed)
            tape_net = _TapeNet(
                UnrolledRNN(d, H, k, **factory),
                TapeReadout(H, n_out, k, **factory),
                per_step,
            )
        n = seqs.n_samples
        batch_size = min(200, n) if self.batch_size == "auto" else int(self.batch_size)
        dataset = SequenceDataset(
            torch.from_numpy(seqs.data),
            torch.from_numpy(seqs.lengths),
            torch.from_numpy(np.asarray(y_encoded)),
            per_step=per_step,
        )
        net = SequenceNeuralNet(
            module=tape_net,
            criterion=SequenceLoss,
            criterion__problem=problem,
            criterion__per_step=per_step,
            optimizer=torch.optim.Adam,
            lr=self.learning_rate_init,
            optimizer__weight_decay=self.alpha,
            max_epochs=self.max_iter,
            batch_size=batch_size,
            iterator_train__shuffle=True,
            iterator_train__collate_fn=collate_batch,
            iterator_valid__collate_fn=collate_batch,
            train_split=None,
            verbose=0,
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
        laes = LAESTransformer(p, solver=self.solver, random_state=self.random_state)
        try:
            laes.fit(sequence_list(h_seq, seqs.lengths))
        except ValueError as exc:
            raise ValueError(
                f"UnrolledPretrainer could not fit a LAES with {p} components on "
                f"the hidden sequences: {exc} Use a smaller memory_size."
            ) from None
        # Alg. 1 lines 15-19: the transfer.
        A, B = pad_laes(laes.A_, laes.B_, size)
        W_mo, b_mo = init_lmn_from_unrolled_(
            layer, tape_net.urnn, tape_net.readout, A, B
        )
        set_linear_(module.readout, W_mo.cpu().numpy(), b_mo.cpu().numpy())
        self.urnn_net_ = tape_net
        self.laes_ = laes
        return self
