"""Baseline recurrent estimators: Elman RNN, LSTM, GRU, linear RNN, Clockwork
RNN and unrolled RNN behind one class per task with a ``cell`` parameter.

One class with a ``cell`` parameter (rather than one class per cell) lets a
benchmark or a grid search compare the baselines by changing one parameter,
with every other setting shared (``GridSearchCV(RNNClassifier(), {"cell":
["elman", "lstm", "gru"]})``).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch

from ..nn import GRU, LSTM, ClockworkRNN, ElmanRNN, LinearRNN, UnrolledRNN
from ..utils._compat import HasMethods, Interval, StrOptions
from ._base import _BaseSequenceEstimator
from ._docs import fill_doc
from ._start import _PretrainerMixin
from ._supervised import (
    CLASS_WEIGHT_CONSTRAINTS,
    _BaseSequenceClassifier,
    _BaseSequenceRegressor,
)

__all__ = ["RNNClassifier", "RNNRegressor"]

_STACKED_CELLS = {"elman": ElmanRNN, "lstm": LSTM, "gru": GRU, "linear": LinearRNN}

RNN_PARAMETERS_DOC = """\
    cell : {'elman', 'lstm', 'gru', 'linear', 'clockwork', 'unrolled'}, \
default='lstm'
        Recurrent cell: Elman (tanh) RNN, LSTM, GRU, linear RNN
        (:class:`~sklmn.nn.LinearRNN`, no nonlinearity: the "linear RNN"
        baseline of Carta et al. 2020b), Clockwork RNN (Koutník
        et al. 2014; ``n_modules`` modules with periods ``2**k``, the clock
        of the multi-scale LMN) or unrolled RNN (Carta et al. 2021 eq. 11; reads a
        tape of its last ``tape_length`` states).
    hidden_size : int, default=32
        Hidden units (per direction; for ``'clockwork'`` the total over the
        modules, a multiple of ``n_modules``).
    num_layers : int, default=1
        Stacked layers (``'elman'``, ``'lstm'``, ``'gru'``, ``'linear'``
        only).
    bidirectional : bool, default=False
        Add a reverse direction reading each sequence backwards (outputs
        concatenated), for every cell.
    dropout : float, default=0.0
        Dropout between stacked layers (``'elman'``, ``'lstm'``, ``'gru'``,
        ``'linear'`` only).
    recurrent_init : {'uniform', 'orthogonal'}, default='uniform'
        Initialization of the recurrent matrices of the ``'elman'``,
        ``'lstm'``, ``'gru'`` and ``'linear'`` cells: uniform in
        ``±1/sqrt(hidden_size)`` (torch's), or random orthogonal (one
        block per gate), the "RNN (ortho init.)" baseline of Carta et al.
        2020b with ``cell='elman'``; input weights are uniform either way.
        See ``docs/user_guide/baselines.md``.
    recurrent_matrix : {'free', 'orthogonal'}, default='free'
        Constraint on the recurrent matrix of ``cell='linear'``:
        ``'orthogonal'`` keeps it orthogonal during training (the "RNN
        (linear orthogonal)" of Carta et al. 2020b); other cells accept only
        ``'free'``.
    forget_bias : float, default=1.0
        Initial forget-gate bias of ``cell='lstm'`` (see
        :class:`~sklmn.nn.LSTM`): 1 is Keras' ``unit_forget_bias``
        (Jozefowicz et al. 2015), 0 torch's expected value, 5 Carta et al.'s
        choice for sequence generation; ignored by the other cells.
    n_modules : int, default=4
        Number of clock modules of ``cell='clockwork'``; ignored by the
        other cells.
    tape_length : int, default=4
        Number of past states read by ``cell='unrolled'``; ignored by the
        other cells.
    pretrainer : object or None, default=None
        Initialization from the data before training, e.g.
        :class:`~sklmn.pretraining.LAESInitializer` (``cell='elman'``: LAES
        initialization of Pasa & Sperduti 2014; ``cell='linear'``: the
        LAES itself, the "linear-RNN" of Carta et al. 2020b): an object with a method
        ``initialize(module, context)`` (see :mod:`sklmn.training`), cloned in
        ``fit`` into ``pretrainer_`` (not on warm starts)."""


class _RNNMixin(_PretrainerMixin):
    """Model parameters and module of the baseline estimators."""

    _fitted_attributes = {"pretrainer_": "estimator?"}

    #: the parameters added after models were saved, with the values that
    #: keep those models' behaviour (see ``_persist.PersistenceMixin``)
    _added_parameter_values: dict = {
        "recurrent_init": "uniform",
        "recurrent_matrix": "free",
    }

    _parameter_constraints = {
        **_BaseSequenceEstimator._parameter_constraints,
        "cell": [
            StrOptions({"elman", "lstm", "gru", "linear", "clockwork", "unrolled"})
        ],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "num_layers": [Interval(Integral, 1, None, closed="left")],
        "bidirectional": ["boolean"],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "recurrent_init": [StrOptions({"uniform", "orthogonal"})],
        "recurrent_matrix": [StrOptions({"free", "orthogonal"})],
        "forget_bias": [Interval(Real, -np.inf, np.inf, closed="neither")],
        "n_modules": [Interval(Integral, 1, None, closed="left")],
        "tape_length": [Interval(Integral, 1, None, closed="left")],
        "pretrainer": [None, HasMethods(["initialize"])],
    }

    def _build_module(self, input_size: int) -> torch.nn.Module:
        if self.recurrent_matrix != "free" and self.cell != "linear":
            raise ValueError(
                f"recurrent_matrix={self.recurrent_matrix!r} applies to "
                f"cell='linear' only, got cell={self.cell!r}; the other cells "
                "accept recurrent_matrix='free'."
            )
        if self.cell in _STACKED_CELLS:
            extra = {}
            if self.cell == "lstm":  # ElmanRNN and GRU have no forget gate
                extra["forget_bias"] = float(self.forget_bias)
            if self.cell == "linear":
                extra["recurrent_matrix"] = self.recurrent_matrix
            return _STACKED_CELLS[self.cell](
                input_size,
                self.hidden_size,
                num_layers=self.num_layers,
                bidirectional=self.bidirectional,
                dropout=float(self.dropout),
                recurrent_init=self.recurrent_init,
                **extra,
            )
        unsupported = {
            name: getattr(self, name)
            for name, default in (
                ("num_layers", 1),
                ("dropout", 0.0),
                ("recurrent_init", "uniform"),
            )
            if getattr(self, name) != default
        }
        if unsupported:
            raise ValueError(
                f"cell={self.cell!r} does not support {unsupported!r}; "
                "num_layers, dropout and recurrent_init apply to the 'elman', "
                "'lstm', 'gru' and 'linear' cells only."
            )
        if self.cell == "clockwork":
            if self.hidden_size % self.n_modules:
                raise ValueError(
                    f"hidden_size must be a multiple of n_modules for "
                    f"cell='clockwork', got hidden_size={self.hidden_size} and "
                    f"n_modules={self.n_modules}."
                )
            return ClockworkRNN(
                input_size,
                self.hidden_size // self.n_modules,
                self.n_modules,
                bidirectional=self.bidirectional,
            )
        return UnrolledRNN(
            input_size,
            self.hidden_size,
            self.tape_length,
            bidirectional=self.bidirectional,
        )


@fill_doc(RNN_PARAMETERS_DOC)
class RNNClassifier(_RNNMixin, _BaseSequenceClassifier):
    """Recurrent baseline classifier (Elman, LSTM, GRU, linear, Clockwork, unrolled).

    The baselines of the LMN papers behind one class: the ``cell`` parameter
    picks the recurrent module, every training setting is shared with the
    LMN estimators so that comparisons are on equal footing.

    The readout is linear, trained with cross-entropy on logits (multiclass,
    including binary) or binary cross-entropy (multilabel indicator
    targets).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s
    %(class_weight)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_labels)`` for multilabel targets).
    pretrainer_ : object
        The clone of ``pretrainer`` that initialized the model (when given).
    %(fitted_attributes)s

    See Also
    --------
    RNNRegressor : The regressor counterpart.
    LMNClassifier : Linear Memory Network.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = [rng.randn(rng.randint(3, 8), 2) for _ in range(40)]
    >>> y = np.array(["up" if x[0, 0] > 0 else "down" for x in X])
    >>> clf = RNNClassifier(cell='gru', hidden_size=8, max_iter=5,
    ...                     random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape, clf.predict_proba(X[:3]).shape
    ((3,), (3, 2))
    """

    _parameter_constraints = {
        **_RNNMixin._parameter_constraints,
        **CLASS_WEIGHT_CONSTRAINTS,
    }

    def __init__(
        self,
        cell="lstm",
        hidden_size=32,
        *,
        num_layers=1,
        bidirectional=False,
        dropout=0.0,
        recurrent_init="uniform",
        recurrent_matrix="free",
        forget_bias=1.0,
        n_modules=4,
        tape_length=4,
        target="sequence",
        standardize=True,
        max_iter=200,
        batch_size="auto",
        bucket_by_length=False,
        learning_rate_init="auto",
        learning_rate="constant",
        alpha=1e-4,
        optimizer="adam",
        gradient_clipping=1.0,
        early_stopping="auto",
        validation_metric="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        verbose=0,
        random_state=None,
        device="cpu",
        n_threads="auto",
        input_layout=None,
        callbacks=None,
        pretrainer=None,
        class_weight=None,
        decoding="greedy",
        beam_width=10,
    ):
        super().__init__(
            target=target,
            standardize=standardize,
            max_iter=max_iter,
            batch_size=batch_size,
            bucket_by_length=bucket_by_length,
            learning_rate_init=learning_rate_init,
            learning_rate=learning_rate,
            alpha=alpha,
            optimizer=optimizer,
            gradient_clipping=gradient_clipping,
            early_stopping=early_stopping,
            validation_metric=validation_metric,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            verbose=verbose,
            random_state=random_state,
            device=device,
            n_threads=n_threads,
            input_layout=input_layout,
            callbacks=callbacks,
        )
        self.cell = cell
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.dropout = dropout
        self.recurrent_init = recurrent_init
        self.recurrent_matrix = recurrent_matrix
        self.forget_bias = forget_bias
        self.n_modules = n_modules
        self.tape_length = tape_length
        self.pretrainer = pretrainer
        self.class_weight = class_weight
        self.decoding = decoding
        self.beam_width = beam_width


@fill_doc(RNN_PARAMETERS_DOC)
class RNNRegressor(_RNNMixin, _BaseSequenceRegressor):
    """Recurrent baseline regressor (Elman, LSTM, GRU, linear, Clockwork, unrolled).

    The baselines of the LMN papers behind one class: the ``cell`` parameter
    picks the recurrent module, every training setting is shared with the
    LMN estimators so that comparisons are on equal footing.

    The readout is linear, trained with the squared error (single or multi-output,
    per sequence or per time step).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    pretrainer_ : object
        The clone of ``pretrainer`` that initialized the model (when given).
    %(fitted_attributes)s

    See Also
    --------
    RNNClassifier : The classifier counterpart.
    LMNRegressor : Linear Memory Network.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import RNNRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 6, 1)
    >>> y = X[:, 0, 0]  # remember the first input
    >>> reg = RNNRegressor(cell='gru', hidden_size=8, max_iter=5,
    ...                    random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        cell="lstm",
        hidden_size=32,
        *,
        num_layers=1,
        bidirectional=False,
        dropout=0.0,
        recurrent_init="uniform",
        recurrent_matrix="free",
        forget_bias=1.0,
        n_modules=4,
        tape_length=4,
        target="sequence",
        standardize=True,
        max_iter=200,
        batch_size="auto",
        bucket_by_length=False,
        learning_rate_init="auto",
        learning_rate="adaptive",
        alpha=1e-4,
        optimizer="adam",
        gradient_clipping=1.0,
        early_stopping="auto",
        validation_metric="loss",
        validation_fraction=0.1,
        n_iter_no_change=20,
        tol=1e-4,
        warm_start=False,
        verbose=0,
        random_state=None,
        device="cpu",
        n_threads="auto",
        input_layout=None,
        callbacks=None,
        pretrainer=None,
    ):
        super().__init__(
            target=target,
            standardize=standardize,
            max_iter=max_iter,
            batch_size=batch_size,
            bucket_by_length=bucket_by_length,
            learning_rate_init=learning_rate_init,
            learning_rate=learning_rate,
            alpha=alpha,
            optimizer=optimizer,
            gradient_clipping=gradient_clipping,
            early_stopping=early_stopping,
            validation_metric=validation_metric,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            warm_start=warm_start,
            verbose=verbose,
            random_state=random_state,
            device=device,
            n_threads=n_threads,
            input_layout=input_layout,
            callbacks=callbacks,
        )
        self.cell = cell
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.dropout = dropout
        self.recurrent_init = recurrent_init
        self.recurrent_matrix = recurrent_matrix
        self.forget_bias = forget_bias
        self.n_modules = n_modules
        self.tape_length = tape_length
        self.pretrainer = pretrainer
