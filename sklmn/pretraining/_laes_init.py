"""LAES initialization of the LMN and of the Elman RNN (paper 003 §3.2)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ..laes import LAESTransformer
from ..nn import LMN, ElmanRNN
from ._common import (
    pad_laes,
    problem_of,
    readout_targets,
    ridge_readout,
    rows,
    sequence_list,
    set_linear_,
)

__all__ = ["LAESInitializer"]


class LAESInitializer(BaseEstimator):
    r"""Initialize an LMN (or Elman RNN) from a linear autoencoder for sequences.

    Plugged into an estimator as ``LMNClassifier(pretrainer=LAESInitializer())``
    (also the LMN regressor and ``RNNClassifier/RNNRegressor(cell='elman')``):
    ``fit`` clones it into ``pretrainer_`` and calls :meth:`initialize` on the
    freshly built network before any gradient step. It

    1. fits a :class:`~sklmn.laes.LAESTransformer` with ``p`` components on
       the training input sequences;
    2. sets the LMN to ``W_xh = s A``, ``W_mh = 0``, ``W_hm = I / s``,
       ``W_mm = B``, ``b_h = -s A mu`` (003 §3.2), so that
       ``m_t = tanh(s A (x_t - mu)) / s + B m_{t-1}``: the LAES encoding with a
       tanh on the input projection, exactly linear in the limit ``s -> 0``;
       the Elman RNN to ``W_ih = s A``, ``W_hh = B``, ``b_ih = -s A mu``
       (Pasa & Sperduti 2014), whose state is ``s`` times the LAES state only
       while the tanh stays linear;
    3. fits the linear readout by ridge least squares on the (linear) LAES
       states: the final state of each sequence for sequence targets, every
       valid step for per-step targets; one-hot targets for multiclass
       classification, ±1 indicators for multilabel targets (the estimators
       predict a label where the output is positive), the raw values for
       regression. For the Elman RNN the readout weight is
       divided by ``s``.

    Right after step 3 the LMN predicts almost like the linear model (LAES
    states + the same readout), while the Elman RNN loses most of the
    linear model's accuracy (003 Table 4).

    Parameters
    ----------
    n_components : int, default=None
        Number ``p`` of LAES components. None uses the network's memory size
        (LMN: ``memory_size``, which must equal ``hidden_size`` since
        ``W_hm = I``; Elman: ``hidden_size``). A smaller ``p`` fills the
        first ``p`` units; the weights and readout columns of the other units
        are zero (they start at zero and are trained with the rest).
    center : bool, default=True
        Center the inputs on their mean ``mu`` (the bias absorbs it).
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        Solver of the LAES (see :class:`~sklmn.laes.LAESTransformer`).
    alpha : float, default=1e-6
        Ridge penalty of the readout, relative to the mean squared state
        (``0``: minimum-norm least squares).
    input_scale : float, default=1.0
        ``s`` above. ``1`` is the initialization of the paper; a smaller ``s``
        keeps the tanh in its linear range (the linear limit stays exact for
        the LMN because ``W_hm = I / s`` undoes the scale).
    random_state : int, RandomState instance or None, default=None
        Seeds the ``'matrix_free'`` LAES solver.

    Attributes
    ----------
    laes_ : LAESTransformer
        The fitted autoencoder (set by :meth:`initialize`).
    linear_score_ : float
        Training score of the linear model (LAES states + readout):
        accuracy for classification, R² for regression.

    See Also
    --------
    UnrolledPretrainer : Pretraining from an unrolled RNN (000 Alg. 1).
    sklmn.nn.LMN.init_from_laes_ : The weight transfer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import LMNClassifier
    >>> from sklmn.pretraining import LAESInitializer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 5, 2)
    >>> y = (X[:, 0, 0] > 0).astype(int)
    >>> clf = LMNClassifier(hidden_size=10, memory_size=10, max_iter=1,
    ...                     pretrainer=LAESInitializer(), random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # one epoch: not converged
    ...     clf = clf.fit(X, y)
    >>> clf.pretrainer_.laes_.n_components_, clf.pretrainer_.linear_score_
    (10, 1.0)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "center": ["boolean"],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "input_scale": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        center=True,
        solver="auto",
        alpha=1e-6,
        input_scale=1.0,
        random_state=None,
    ):
        self.n_components = n_components
        self.center = center
        self.solver = solver
        self.alpha = alpha
        self.input_scale = input_scale
        self.random_state = random_state

    def _memory_size(self, recurrent: torch.nn.Module) -> int:
        if isinstance(recurrent, LMN):
            if recurrent.num_layers != 1 or recurrent.bidirectional:
                raise ValueError(
                    "LAESInitializer needs a single-layer unidirectional LMN, got "
                    f"num_layers={recurrent.num_layers}, "
                    f"bidirectional={recurrent.bidirectional}"
                )
            layer = recurrent.layers[0]
            if layer.hidden_size != layer.memory_size:
                raise ValueError(
                    "LAESInitializer needs hidden_size == memory_size (W_hm = I), "
                    f"got hidden_size={layer.hidden_size}, "
                    f"memory_size={layer.memory_size}"
                )
            return int(layer.memory_size)
        if isinstance(recurrent, ElmanRNN):
            return int(recurrent.hidden_size)
        raise ValueError(
            "LAESInitializer initializes an LMN or an Elman RNN, got "
            f"{type(recurrent).__name__}"
        )

    def initialize(self, module: torch.nn.Module, seqs, y_encoded, *, estimator):
        """Initialize ``module`` (a ``SequenceNet``) in place from the data.

        Parameters
        ----------
        module : SequenceNet
            Network with ``.recurrent`` (:class:`~sklmn.nn.LMN` or
            :class:`~sklmn.nn.ElmanRNN`) and a linear ``.readout``.
        seqs : Sequences
            Validated training sequences (``data``, ``lengths``).
        y_encoded : ndarray
            Encoded training targets of the estimator.
        estimator : estimator
            The sequence estimator being fitted (gives the kind of target).

        Returns
        -------
        self : LAESInitializer
        """
        self._validate_params()
        problem, per_step = problem_of(estimator)
        recurrent = module.recurrent
        if isinstance(recurrent, LMN) and recurrent.output != "memory":
            raise ValueError(
                f"LAESInitializer needs an LMN with output='memory', got "
                f"output={recurrent.output!r}"
            )
        size = self._memory_size(recurrent)
        if self.n_components is not None and self.n_components > size:
            raise ValueError(
                f"n_components={self.n_components} must be at most the network's "
                f"memory size {size}"
            )
        p = size if self.n_components is None else int(self.n_components)
        seq_list = sequence_list(seqs.data, seqs.lengths)
        laes = LAESTransformer(
            p,
            solver=self.solver,
            center=self.center,
            return_sequences=True,
            random_state=self.random_state,
        )
        try:
            laes.fit(seq_list)
        except ValueError as exc:
            raise ValueError(
                f"LAESInitializer could not fit a LAES with {p} components: {exc} "
                "Use a smaller memory."
            ) from None
        s = float(self.input_scale)
        mean = laes.mean_ if self.center else None
        A, B = pad_laes(laes.A_, laes.B_, size)
        recurrent.init_from_laes_(s * A, B, mean)
        if isinstance(recurrent, LMN):
            with torch.no_grad():
                recurrent.layers[0].weight_hm.mul_(1.0 / s)
        states = laes.transform(seq_list)  # list of (T_i, p)
        padded = np.zeros((len(states), seqs.data.shape[1], p))
        for i, st in enumerate(states):
            padded[i, : len(st)] = st
        features = rows(padded, seqs.lengths, per_step)
        targets = readout_targets(
            y_encoded, problem, module.readout.out_features, seqs.lengths, per_step
        )
        if problem == "multilabel":
            # the estimators predict a label where the output (logit) is > 0
            targets = 2.0 * targets - 1.0
        W, b = ridge_readout(features, targets, float(self.alpha))
        self.linear_score_ = _score(features @ W.T + b, targets, problem)
        if isinstance(recurrent, ElmanRNN):
            W = W / s
        W = np.hstack([W, np.zeros((W.shape[0], size - p))])
        set_linear_(module.readout, W, b)
        self.laes_ = laes
        return self


def _score(outputs: np.ndarray, targets: np.ndarray, problem: str) -> float:
    if problem == "multiclass":
        return float(np.mean(outputs.argmax(1) == targets.argmax(1)))
    if problem == "multilabel":
        return float(np.mean(np.all((outputs > 0) == (targets > 0), axis=1)))
    resid = ((targets - outputs) ** 2).sum()
    total = ((targets - targets.mean(0)) ** 2).sum()
    return float(1.0 - resid / total) if total > 0 else 0.0
