"""Eigenvalue Normalized RNN estimators (Helfrich & Ye 2020)."""

from __future__ import annotations

from numbers import Integral, Real

from ..nn import ENRNN
from ..utils._compat import Interval, StrOptions
from ._base import _BaseSequenceEstimator
from ._docs import fill_doc
from ._supervised import (
    CLASS_WEIGHT_CONSTRAINTS,
    _BaseSequenceClassifier,
    _BaseSequenceRegressor,
)

__all__ = ["ENRNNClassifier", "ENRNNRegressor"]

ENRNN_PARAMETERS_DOC = """\
    hidden_size : int, default=32
        Size of the long-term state, whose recurrent matrix is orthogonal
        (scoRNN Cayley parametrization).
    short_size : int, default=16
        Size of the short-term state, whose recurrent matrix is normalized to
        spectral radius below one.
    n_negative : int, default=0
        Number of -1 entries of the scoRNN diagonal ``D`` (at most
        ``hidden_size``).
    eps : float, default=1e-3
        ``ε`` of the normalization ``W_S = T / (ρ(T) + ε)``.
    latch : bool, default=True
        Switch the normalization on the first time ``ρ(T) > 1`` and keep it
        on (Helfrich & Ye 2020 §4); False normalizes from the start.
    coupling : bool, default=False
        Add the coupling block from the short- to the long-term state
        (Helfrich & Ye 2020 eq. 2-3).
    normalize : bool, default=True
        Normalize the short-term matrix (False: unconstrained, for
        ablations).
    activation : {'modrelu', 'relu', 'tanh'}, default='modrelu'
        Nonlinearity of the state update.
    num_layers : int, default=1
        Stacked layers, each with its own orthogonal and
        eigenvalue-normalized recurrent matrices (Helfrich & Ye 2020 compare
        single layers and note that the ENRNN can be stacked).
    bidirectional : bool, default=False
        Add a reverse direction at every layer, reading each sequence
        backwards (outputs concatenated)."""


class _ENRNNMixin:
    """Model parameters and module of the ENRNN estimators."""

    #: the parameters added after models were saved, with the values that
    #: keep those models' behaviour (see ``_persist.PersistenceMixin``)
    _added_parameter_values: dict = {"num_layers": 1, "bidirectional": False}

    _parameter_constraints = {
        **_BaseSequenceEstimator._parameter_constraints,
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "short_size": [Interval(Integral, 1, None, closed="left")],
        "n_negative": [Interval(Integral, 0, None, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left")],
        "latch": ["boolean"],
        "coupling": ["boolean"],
        "normalize": ["boolean"],
        "activation": [StrOptions({"modrelu", "relu", "tanh"})],
        "num_layers": [Interval(Integral, 1, None, closed="left")],
        "bidirectional": ["boolean"],
    }

    def _build_module(self, input_size: int) -> ENRNN:
        if self.n_negative > self.hidden_size:
            raise ValueError(
                f"n_negative must be at most hidden_size={self.hidden_size}, got "
                f"{self.n_negative!r}"
            )
        return ENRNN(
            input_size,
            self.hidden_size,
            self.short_size,
            n_negative=self.n_negative,
            eps=float(self.eps),
            latch=self.latch,
            coupling=self.coupling,
            normalize=self.normalize,
            activation=self.activation,
            num_layers=self.num_layers,
            bidirectional=self.bidirectional,
        )


@fill_doc(ENRNN_PARAMETERS_DOC)
class ENRNNClassifier(_ENRNNMixin, _BaseSequenceClassifier):
    """Eigenvalue Normalized RNN classifier.

    A recurrent network whose state has a long-term part with an orthogonal
    recurrent matrix and a short-term part whose recurrent matrix is divided
    by its spectral radius (Helfrich & Ye 2020 §3), with modReLU activations.

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
    %(fitted_attributes)s

    See Also
    --------
    ENRNNRegressor : The regressor counterpart.
    LMNClassifier : Linear Memory Network.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import ENRNNClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = [rng.randn(rng.randint(3, 8), 2) for _ in range(40)]
    >>> y = np.array(["up" if x[0, 0] > 0 else "down" for x in X])
    >>> clf = ENRNNClassifier(hidden_size=4, short_size=4, max_iter=5,
    ...                       random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape, clf.predict_proba(X[:3]).shape
    ((3,), (3, 2))
    """

    _parameter_constraints = {
        **_ENRNNMixin._parameter_constraints,
        **CLASS_WEIGHT_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_size=32,
        short_size=16,
        *,
        n_negative=0,
        eps=1e-3,
        latch=True,
        coupling=False,
        normalize=True,
        activation="modrelu",
        num_layers=1,
        bidirectional=False,
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
        self.hidden_size = hidden_size
        self.short_size = short_size
        self.n_negative = n_negative
        self.eps = eps
        self.latch = latch
        self.coupling = coupling
        self.normalize = normalize
        self.activation = activation
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.class_weight = class_weight
        self.decoding = decoding
        self.beam_width = beam_width


@fill_doc(ENRNN_PARAMETERS_DOC)
class ENRNNRegressor(_ENRNNMixin, _BaseSequenceRegressor):
    """Eigenvalue Normalized RNN regressor.

    A recurrent network whose state has a long-term part with an orthogonal
    recurrent matrix and a short-term part whose recurrent matrix is divided
    by its spectral radius (Helfrich & Ye 2020 §3), with modReLU activations.

    The readout is linear, trained with the squared error (single or multi-output,
    per sequence or per time step).

    Parameters
    ----------
    %(model_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    %(fitted_attributes)s

    See Also
    --------
    ENRNNClassifier : The classifier counterpart.
    LMNRegressor : Linear Memory Network.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import ENRNNRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 6, 1)
    >>> y = X[:, 0, 0]  # remember the first input
    >>> reg = ENRNNRegressor(hidden_size=4, short_size=4, max_iter=5,
    ...                      random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        hidden_size=32,
        short_size=16,
        *,
        n_negative=0,
        eps=1e-3,
        latch=True,
        coupling=False,
        normalize=True,
        activation="modrelu",
        num_layers=1,
        bidirectional=False,
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
        self.hidden_size = hidden_size
        self.short_size = short_size
        self.n_negative = n_negative
        self.eps = eps
        self.latch = latch
        self.coupling = coupling
        self.normalize = normalize
        self.activation = activation
        self.num_layers = num_layers
        self.bidirectional = bidirectional
