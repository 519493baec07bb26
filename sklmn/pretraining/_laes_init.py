"""LAES initialization of the LMN and of the Elman RNN.

Carta, Sperduti & Bacciu (2020), "Autoencoder-based initialization for
recurrent neural networks with a linear memory", §3.2; Pasa & Sperduti (2014),
"Pre-training of recurrent neural networks via linear autoencoders".
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from .._training import FitContext
from .._training._loss import rows_score
from ..laes import XiOperator, randomized_svd_operator, xi_frobenius_sq
from ..nn import LMN, ElmanRNN, MultiScaleLMN
from ..utils._compat import Interval, StrOptions
from ..utils._doc_link import _DocLinkMixin
from ._common import (
    MATRIX_FREE_N_ITER,
    choose_pooling_,
    cv_logistic_score,
    data_limit,
    fit_laes,
    laes_states,
    logistic_readout,
    make_laes,
    module_sequences,
    network_states,
    numpy_weight,
    padded_sequences,
    readout_problem,
    readout_rows,
    readout_targets,
    reduce_components,
    reverse_valid,
    ridge_gcv_readout,
    ridge_readout,
    rows,
    set_linear_,
    set_weight_mm_,
    spectral_radius,
    subsample_clock,
    valid_mask,
)

__all__ = ["LAESInitializer"]


class LAESInitializer(_DocLinkMixin, BaseEstimator):
    r"""Initialize an LMN (or Elman RNN) from a linear autoencoder for sequences.

    Plugged into an estimator as ``LMNClassifier(pretrainer=LAESInitializer())``
    (also the LMN regressor and ``RNNClassifier/RNNRegressor(cell='elman')``):
    ``fit`` clones it into ``pretrainer_`` and calls :meth:`initialize` on the
    freshly built network before any gradient step. For every layer (and
    direction) it

    1. fits a :class:`~sklmn.laes.LAESTransformer` with ``p`` components
       (``A``, ``B``, input mean ``mu``) on the layer's training input
       sequences: the data for the first layer, the outputs of the
       initialized previous layer for the next ones, each sequence read
       backwards for the reverse direction of a bidirectional network;
    2. sets the first ``p`` memory units of the LMN layer to the LAES
       encoding (Carta, Sperduti & Bacciu 2020, §3.2): with ``hidden_size >=
       p``, ``W_xh = s A``, ``b_h = -s A mu``, ``W_mh = 0``, ``W_hm = I / s``
       and ``W_mm = B`` on the first ``p`` hidden and memory units, so that
       ``m_t = tanh(s A (x_t - mu)) / s + B m_{t-1}``, exactly the LAES
       encoding in the limit ``s -> 0``. With ``hidden_size < p`` the input
       matrix is factored, ``A = U S Vᵀ`` (thin SVD, ``r = min(p,
       n_features)`` columns), and the first ``r`` hidden units carry the
       input directions, ``W_xh = s Vᵀ``, ``b_h = -s Vᵀ mu``, ``W_hm = U S /
       s``: again ``m_t -> A (x_t - mu) + B m_{t-1}`` as ``s -> 0``. For the
       Elman RNN: ``W_ih = s A``, ``W_hh = B``, ``b_ih = -s A mu`` on the first
       ``p`` units (Pasa & Sperduti 2014), whose state is ``s`` times the LAES
       state only while the tanh stays linear;
    3. fits the linear readout on the final state of each sequence (sequence
       targets) or on every valid step (per-step targets), by ``readout``:

       - ``'ridge'`` (the paper's least squares): ridge regression on the
         (linear) LAES states of the last layer (both directions), with
         one-hot targets for multiclass classification, ±1 indicators for
         multilabel targets (the estimators predict a label where the output
         is positive) and the raw values for regression. For the Elman RNN
         the readout weight is divided by ``s``.
       - ``'logistic'`` (classification only): logistic regression with
         inverse penalty ``C`` on the initialized network's own states (all
         units, tanh included), multinomial for classes, one binary model per
         label for multilabel targets: the readout that the classifiers'
         cross-entropy loss would fit with the memory held fixed, so that
         fine-tuning starts where that loss is lowest for the pretrained
         memory.

    Right after step 3 the LMN predicts almost like the linear model (LAES
    states + the same readout), while the Elman RNN loses most of the
    linear model's accuracy (Carta, Sperduti & Bacciu 2020, Table 4).

    **Sizes the data or the network cannot hold are reduced, never an
    error.** The number of components of a layer is
    ``p = min(n_components or memory_size, memory_size, n_steps, L * a)``
    (``hidden_size`` instead of ``memory_size`` for the Elman RNN), where
    ``n_steps`` is the total number of valid training steps, ``L`` the longest
    length and ``a`` the layer's input features: ``min(n_steps, L * a)``
    bounds the rank of the LAES data matrix, so more components would only
    encode noise. An LMN layer with ``hidden_size < min(p, a)`` uses ``p =
    hidden_size``. Every reduction is recorded in :attr:`notes_`.

    **Units beyond the LAES keep the network's random initialization.** The
    other ``memory_size - p`` memory units and the hidden units not used by
    the LAES keep their random weights, the LAES units do not read them
    (zero ``W_mh`` rows of the LAES hidden units, zero ``W_hm`` and ``W_mm``
    blocks from the other units into the LAES memory) and the other hidden
    units do not read the (large) LAES memory states, so the network is the
    LAES network side by side with a smaller random network whose memory
    units still read all hidden units. The random block is rescaled so that
    its linearized memory map ``W_mm + W_hm W_mh`` has spectral radius at
    most the layer's ``init_radius`` (the LAES block ``B`` has norm at most
    one); the Elman RNN's other units keep their random rows. With the
    ``'ridge'`` readout the readout columns of the other units are zero (the
    network's outputs at initialization are those of the LAES units alone,
    while the other units receive gradients from the first training step);
    the ``'logistic'`` readout reads every unit.

    Parameters
    ----------
    n_components : int, default=None
        Requested number ``p`` of LAES components per layer and direction;
        None uses the memory size (LMN) or the hidden size (Elman). Reduced as
        described above when the network or the data cannot hold it.
    center : bool, default=True
        Center the inputs on their mean ``mu`` (the bias absorbs it).
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        Solver of the LAES (see :class:`~sklmn.laes.LAESTransformer`).
        ``'auto'`` picks the cheaper of ``'gram'`` and ``'matrix_free'`` by
        a cost model (Gram for short sequences of few features, e.g. 500
        sequences x 300 steps x 1 feature, matrix-free for many features or
        very long sequences).
    alpha : float or 'gcv', default=1e-6
        Ridge penalty of the ``'ridge'`` readout, relative to the mean squared
        state (``0``: minimum-norm least squares). ``'gcv'``: chosen among
        ``10**-4 ... 10**4`` (17 values) by generalized cross-validation
        (the efficient leave-one-out error of
        :class:`sklearn.linear_model.RidgeCV`), recorded in
        ``readout_alpha_``.
    readout : {'ridge', 'logistic', 'auto'}, default='ridge'
        How the readout is fitted (step 3 above). ``'auto'``: ``'logistic'``
        for classification targets, ``'ridge'`` for regression.
        ``'logistic'`` with regression targets raises a ``ValueError``.
    C : float, default=1.0
        Inverse L2 penalty of the ``'logistic'`` readout, as in
        :class:`sklearn.linear_model.LogisticRegression` (the loss is summed
        over the rows).
    input_scale : float, default=1.0
        ``s`` above. ``1`` is the initialization of the paper; a smaller ``s``
        keeps the tanh in its linear range (the linear limit stays exact for
        the LMN because ``W_hm`` divides by ``s``).
    modules : {'independent', 'residual'}, default='independent'
        How the modules of a multi-scale LMN share the history (ignored for
        other networks). ``'independent'``: each module's LAES is fitted on
        its own subsampled inputs (the construction of the papers'
        incremental training, applied to every module). On smooth series the
        modules then encode nearly the same leading directions of the
        history. ``'residual'``: module ``k`` (fastest first) is fitted to
        what the faster modules do not already encode: the rows of its data
        matrix Ξ_k (its subsampled, reversed histories) minus their
        least-squares fit on the faster modules' linear LAES states at the
        same steps, ``Ξ_k' = (I - Q Qᵀ) Ξ_k``; its ``A_k`` and ``B_k`` are
        formed from the leading right singular vectors of ``Ξ_k'`` (a
        randomized SVD through products with Ξ_k) as for any LAES. The row
        space of ``Ξ_k'`` is not closed under the one-step shift, so the
        recursion encodes it approximately. Directions that the faster
        modules encode entirely (singular values of ``Ξ_k'`` below ``1e-9``
        times the norm of Ξ_k, on short series) are dropped, with a note in
        ``notes_``. The multi-scale estimators' ``pretrainer='auto'`` uses
        ``'residual'`` (measured in ``docs/training.md``).
    random_state : int, RandomState instance or None, default=None
        Seeds the ``'matrix_free'`` LAES solver and the randomized SVD of
        ``modules='residual'``.

    Attributes
    ----------
    laes_ : LAESTransformer
        The autoencoder of the first layer's forward direction (the only one
        of a single-layer unidirectional network).
    laes_layers_ : list of list of LAESTransformer
        One autoencoder per layer and direction (forward, then reverse).
    n_components_ : int
        Number ``p`` of LAES components used by the first layer (both
        directions use the same ``p``; see ``laes_layers_`` for the others).
    notes_ : list of str
        What was adapted to the data and the network, e.g.
        ``"n_components reduced from 32 to 24: the data support at most 24
        (...)"``; empty when everything was used as requested.
    linear_score_ : float
        Training score of the readout on the states it was fitted on (see
        ``readout``): accuracy for classification, R² for regression.
    readout_alpha_ : float or None
        The relative ridge penalty of the ``'ridge'`` readout (``alpha``, or
        the one generalized cross-validation chose); None for the
        ``'logistic'`` readout.
    readout_loo_r2_ : float or None
        Leave-one-out R² of the readout chosen by generalized
        cross-validation (``alpha='gcv'``; None otherwise): 0 or below means
        the start predicts a held-out training sequence no better than the
        mean of the others. ``pretrainer='auto'`` of the LMN regressors
        discards a start whose R² is not above 0.01.
    readout_cv_score_ : float or None
        How well the start predicts training sequences it was not fitted
        on: the ``'logistic'`` readout's mean accuracy over 4 repeats of 5
        stratified folds of the sequences (the readout refitted on the
        others; the LAES, unsupervised, is fitted once on all), the
        ``'ridge'`` readout's ``readout_loo_r2_``; NaN when a class has
        fewer than two training sequences (no stratified folds); None for
        per-step targets of the logistic readout and for a fixed ridge
        penalty. The LMN estimators' ``pretrained_alpha='auto'`` anchors
        fine-tuning to a start whose score is at least 0.9.
    pooling_ : {'last', 'last+mean'}
        What the network's readout reads (its ``pooling``). A network built
        with ``pooling='auto'`` (the default of the LMN and multi-scale LMN
        estimators) is resolved here: the readout is fitted on the final
        states alone and on the final states with their mean over the
        valid steps, both cross-validated on the training sequences
        (the logistic readout: accuracy over 4 repeats of 5 stratified
        folds; the ridge readout: its leave-one-out R² at the penalty
        generalized cross-validation chooses), and the mean is kept only
        when it scores more than ``1 / n`` above the final states alone
        (``n`` training sequences); otherwise the network's mean block is
        switched off (scale 0), which computes what ``'last'`` computes.
    pooling_scores_ : dict or None
        The two cross-validated scores of ``pooling='auto'``
        (``{'last': ..., 'last+mean': ...}``; NaN, and ``'last'`` kept, when
        a class has fewer than two training sequences); None for other
        poolings.

    See Also
    --------
    UnrolledPretrainer : Pretraining from an unrolled RNN.
    sklmn.laes.LAESTransformer : The autoencoder.

    Notes
    -----
    Supported networks: :class:`~sklmn.nn.LMN` with ``output='memory'`` and
    ``memory_matrix`` ``'free'`` or ``'spectral'`` (an orthogonal ``W_mm``
    cannot hold ``B``), any number of layers, uni- or bidirectional; and
    :class:`~sklmn.nn.ElmanRNN` with the tanh nonlinearity, any number of
    layers, uni- or bidirectional. Other networks raise a ``ValueError``
    naming the unsupported option.

    References
    ----------
    A. Carta, A. Sperduti, D. Bacciu (2020), "Autoencoder-based initialization
    for recurrent neural networks with a linear memory", §3.2.
    L. Pasa, A. Sperduti (2014), "Pre-training of recurrent neural networks
    via linear autoencoders".

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
    >>> clf.pretrainer_.n_components_, clf.pretrainer_.linear_score_
    (10, 1.0)
    >>> clf.score(X, y) > 0.9
    True

    Five univariate steps support at most five components:

    >>> X1 = rng.randn(60, 5, 1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X1, (X1[:, 0, 0] > 0).astype(int))
    >>> clf.pretrainer_.n_components_
    5
    >>> print(clf.pretrainer_.notes_[0])  # doctest: +NORMALIZE_WHITESPACE
    n_components reduced from 10 to 5: the data support at most 5
    (min(total steps, longest length x features) = min(300, 5 x 1))

    The logistic readout (what ``pretrainer='auto'`` uses for classifiers)
    starts the classifier from a logistic regression of the network's states:

    >>> clf = LMNClassifier(hidden_size=10, memory_size=10, max_iter=1,
    ...                     pretrainer=LAESInitializer(readout="logistic"),
    ...                     random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X, y)
    >>> clf.pretrainer_.linear_score_ > 0.9
    True

    With ``pooling='auto'`` (the LMN estimators' default) the start
    cross-validates its readout with and without the mean of the states
    and keeps the better one:

    >>> clf = LMNClassifier(hidden_size=10, memory_size=10, max_iter=1,
    ...                     random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X, y)
    >>> sorted(clf.pretrainer_.pooling_scores_)
    ['last', 'last+mean']
    >>> clf.pretrainer_.pooling_ in ("last", "last+mean")
    True
    >>> 0 <= clf.pretrainer_.readout_cv_score_ <= 1
    True
    """

    #: Fitted attributes that :func:`sklmn.persistence.load` may set
    _fitted_attributes: dict = {
        "laes_": "estimator",
        "laes_layers_": "list",
        "n_components_": "int",
        "notes_": "list",
        "linear_score_": "float",
        "readout_alpha_": "float?",
        "readout_loo_r2_": "float?",
        "pooling_": "str",
        "pooling_scores_": "dict?",
        "readout_cv_score_": "float?",
    }

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "center": ["boolean"],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"gcv"})],
        "readout": [StrOptions({"ridge", "logistic", "auto"})],
        "C": [Interval(Real, 0, None, closed="neither")],
        "input_scale": [Interval(Real, 0, None, closed="neither")],
        "modules": [StrOptions({"independent", "residual"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        center=True,
        solver="auto",
        alpha=1e-6,
        readout="ridge",
        C=1.0,
        input_scale=1.0,
        modules="independent",
        random_state=None,
    ):
        self.n_components = n_components
        self.center = center
        self.solver = solver
        self.alpha = alpha
        self.readout = readout
        self.C = C
        self.input_scale = input_scale
        self.modules = modules
        self.random_state = random_state

    @staticmethod
    def _check_network(recurrent: torch.nn.Module) -> None:
        if isinstance(recurrent, LMN):
            if recurrent.output != "memory":
                raise ValueError(
                    "LAESInitializer needs an LMN with output='memory' (the "
                    f"readout reads the LAES memory), got output={recurrent.output!r}"
                )
            if recurrent.memory_matrix == "orthogonal":
                raise ValueError(
                    "LAESInitializer cannot set an orthogonal memory matrix to "
                    "the LAES matrix B: use memory_matrix='free' or 'spectral', "
                    "got memory_matrix='orthogonal'"
                )
            return
        if isinstance(recurrent, MultiScaleLMN):
            if recurrent.output != "memory":
                raise ValueError(
                    "LAESInitializer needs a multi-scale LMN with output='memory' "
                    f"(the readout reads the LAES memory), got "
                    f"output={recurrent.output!r}"
                )
            return
        if isinstance(recurrent, ElmanRNN):
            if recurrent.rnn.nonlinearity != "tanh":
                raise ValueError(
                    "LAESInitializer needs an Elman RNN with nonlinearity='tanh', "
                    f"got nonlinearity={recurrent.rnn.nonlinearity!r}"
                )
            return
        raise ValueError(
            "LAESInitializer initializes an LMN, a multi-scale LMN or an Elman "
            "RNN, got "
            f"{type(recurrent).__name__}"
        )

    def initialize(self, module: torch.nn.Module, context: FitContext):
        """Initialize ``module`` (a ``SequenceNet``) in place from the data.

        Parameters
        ----------
        module : SequenceNet
            Network with ``.recurrent`` (:class:`~sklmn.nn.LMN`,
            :class:`~sklmn.nn.MultiScaleLMN` or :class:`~sklmn.nn.ElmanRNN`)
            and a linear ``.readout``.
        context : FitContext
            The training sequences (``context.sequences``), their encoded
            targets (``context.y``) and the kind of target
            (``context.problem``, ``context.per_step``).

        Returns
        -------
        self : LAESInitializer
        """
        self._validate_params()
        problem, per_step = readout_problem(context)
        seqs, y_encoded = context.sequences, context.y
        recurrent = module.recurrent
        self._check_network(recurrent)
        # checked before any work: readout='logistic' rejects regression
        logistic = self._readout_kind(problem) == "logistic"
        lengths = np.asarray(seqs.lengths)
        # the readout's rows weigh as the loss's terms do
        weight = context.sample_weight
        if weight is not None and per_step:  # (n, T): the valid steps' rows
            weight = rows(np.asarray(weight), lengths, per_step)
        if isinstance(recurrent, MultiScaleLMN):
            return self._initialize_multiscale(
                module, seqs, y_encoded, problem, per_step, weight
            )
        is_lmn = isinstance(recurrent, LMN)
        n_layers, n_dirs = recurrent.num_layers, recurrent.num_directions
        s = float(self.input_scale)
        rng = check_random_state(self.random_state)
        notes: list[str] = []
        inputs = np.asarray(seqs.data, dtype=np.float64)
        laes_layers, last_states = [], []
        for i in range(n_layers):
            prefix = f"layer {i}: " if n_layers > 1 else ""
            p = self._n_components(recurrent, inputs.shape[2], lengths, notes, prefix)
            laes_dirs = []
            for j in range(n_dirs):
                data = inputs if j == 0 else reverse_valid(inputs, lengths)
                padded = padded_sequences(data, lengths)
                laes = make_laes(
                    p,
                    self.solver,
                    lengths,
                    data.shape[2],
                    center=self.center,
                    return_sequences=True,
                    random_state=int(rng.randint(np.iinfo(np.int32).max)),
                )
                fit_laes(laes, padded)
                mean = laes.mean_ if self.center else np.zeros(data.shape[2])
                if is_lmn:
                    layer = _lmn_layer(recurrent, i, j)
                    r = _init_lmn_layer_(layer, laes.A_, laes.B_, mean, s)
                    if r < p and j == 0:
                        notes.append(
                            f"{prefix}hidden_size={layer.hidden_size} < n_components="
                            f"{p}: the LAES input matrix is factored, A = U S Vᵀ, "
                            f"W_xh = s Vᵀ on {r} hidden units and W_hm = U S / s"
                        )
                else:
                    _init_elman_layer_(recurrent.rnn, i, j, laes.A_, laes.B_, mean, s)
                laes_dirs.append(laes)
                if i == n_layers - 1 and not logistic:
                    st = laes_states(laes, padded)
                    last_states.append(st if j == 0 else reverse_valid(st, lengths))
            laes_layers.append(laes_dirs)
            if i < n_layers - 1:
                inputs = _layer_outputs(recurrent, i, inputs, lengths)
        if logistic:
            # on the network's own states (tanh included), all units
            states = network_states(recurrent, seqs)
            features = readout_rows(module, states, lengths, per_step)
            W_full, b = self._fit_readout(
                module, features, y_encoded, lengths, problem, per_step, weight
            )
        else:
            states = np.concatenate(last_states, axis=2)
            features = readout_rows(module, states, lengths, per_step)
            W, b = self._fit_readout(
                module, features, y_encoded, lengths, problem, per_step, weight
            )
            if not is_lmn:
                W = W / s
            # LAES units of direction j are the first p of its block of outputs
            # (one block per pooled quantity: the final state, then the mean)
            unit = recurrent.memory_size if is_lmn else recurrent.hidden_size
            p_last = laes_layers[-1][0].n_components_
            n_blocks = W.shape[1] // (p_last * n_dirs)
            W_full = np.zeros((W.shape[0], n_blocks * unit * n_dirs))
            for q in range(n_blocks):
                for j in range(n_dirs):
                    out = (q * n_dirs + j) * unit
                    src = (q * n_dirs + j) * p_last
                    W_full[:, out : out + p_last] = W[:, src : src + p_last]
        set_linear_(module.readout, W_full, b)
        self.laes_layers_ = laes_layers
        self.laes_ = laes_layers[0][0]
        self.n_components_ = int(self.laes_.n_components_)
        self.notes_ = notes
        return self

    def _readout_kind(self, problem: str) -> str:
        """``'ridge'`` or ``'logistic'``: the ``readout`` used for ``problem``."""
        if self.readout == "auto":
            return "ridge" if problem == "continuous" else "logistic"
        if self.readout == "logistic" and problem == "continuous":
            raise ValueError(
                "readout='logistic' fits a classification readout, but the "
                "targets are continuous (regression); use readout='ridge' or "
                "'auto'"
            )
        return self.readout

    def _fit_readout(
        self, module, features, y_encoded, lengths, problem, per_step, weight=None
    ):
        """Readout ``(W, b)`` of ``features`` (rows of valid entries), by
        ``readout``, the rows weighted by ``weight`` (None: equally); sets
        ``linear_score_``."""
        targets = readout_targets(
            y_encoded, problem, module.readout.out_features, lengths, per_step
        )
        logistic = self._readout_kind(problem) == "logistic"
        if problem == "multilabel" and not logistic:
            # the estimators predict a label where the output (logit) is > 0
            targets = 2.0 * targets - 1.0
        self.pooling_ = getattr(module, "pooling", "last")
        self.pooling_scores_ = None
        if self.pooling_ == "auto" and not per_step:
            self.pooling_, self.pooling_scores_, features = choose_pooling_(
                module,
                features,
                targets,
                problem,
                logistic=logistic,
                C=float(self.C),
                sample_weight=weight,
            )
        if logistic:
            if self.pooling_scores_ is not None:
                self.readout_cv_score_ = self.pooling_scores_[self.pooling_]
            elif per_step:  # rows are steps, not sequences: not measured
                self.readout_cv_score_ = None
            else:
                self.readout_cv_score_ = cv_logistic_score(
                    features, targets, problem, float(self.C), weight
                )
            W, b = logistic_readout(
                features, targets, problem, float(self.C), sample_weight=weight
            )
            self.linear_score_ = rows_score(
                features @ W.T + b, targets, problem, per_step
            )
            self.readout_alpha_ = None
            self.readout_loo_r2_ = None
            return W, b
        if isinstance(self.alpha, str):  # 'gcv'
            W, b, self.readout_alpha_, self.readout_loo_r2_ = ridge_gcv_readout(
                features, targets, sample_weight=weight
            )
            self.readout_cv_score_ = self.readout_loo_r2_
        else:
            self.readout_loo_r2_ = self.readout_cv_score_ = None
            W, b = ridge_readout(
                features, targets, float(self.alpha), sample_weight=weight
            )
            self.readout_alpha_ = float(self.alpha)
        self.linear_score_ = rows_score(features @ W.T + b, targets, problem, per_step)
        return W, b

    def _initialize_multiscale(
        self, module, seqs, y_encoded, problem, per_step, weight=None
    ):
        """LAES initialization of a multi-scale LMN (one LAES per module).

        Module ``k`` (period ``2**k``) is set from a LAES of the centered
        inputs subsampled at its clock, ``z_t = W_in (x_t - mu)`` at ``t = 0,
        2**k, 2 * 2**k, ...``, with ``W_in`` the identity (``r = d``
        features) or, when ``hidden_size < d``, the top ``hidden_size``
        principal directions of the inputs. Module ``k`` keeps ``p_k =
        min(memory_size, what its subsampled data support)`` components; its
        diagonal block of ``W_mm`` is ``B_k`` and its off-diagonal blocks are
        zero (the construction of the incremental training of Carta, Sperduti
        & Bacciu, applied to all modules at once); its other units start at
        zero. The hidden units carry the input in one of two ways:

        - ``hidden_size >= p_0 + ... + p_{K-1}`` (the default sizes): module
          ``k`` reads its own ``p_k`` hidden units ``tanh(s A_k z_t)``
          through ``I / s``, the LMN's construction (see the class
          docstring) block by block, so that a one-module network starts as
          the LMN does;
        - otherwise the first ``r`` hidden units carry ``tanh(s z_t)`` for
          every module, read through ``A_k / s``.

        Both are the LAES encoding in the limit ``s -> 0``; at ``s = 1`` the
        first gives each module ``p_k`` nonlinear features of the input
        instead of ``r``. Measured on the tuning data (``docs/training.md``):
        the same mean accuracy of the start, the first better on two of the
        three sets. The readout is fitted (``readout``) on the memory states
        of the initialized network (tanh included).

        A bidirectional network gets the same construction in both
        directions (the same ``mu`` and ``W_in``), the reverse direction's
        modules from LAES of the sequences read backwards (each valid part
        reversed, then subsampled at the reverse clock). ``laes_layers_[j]``
        holds the modules' autoencoders of direction ``j`` (0: forward, 1:
        reverse) and ``n_components_`` counts the forward direction's
        components (the reverse one uses as many).
        """
        recurrent = module.recurrent
        lengths = np.asarray(seqs.lengths)
        data = np.asarray(seqs.data, dtype=np.float64)
        mask = valid_mask(lengths, data.shape[1])
        steps = data[mask]
        mu = steps.mean(axis=0) if self.center else np.zeros(data.shape[2])
        d, H, N = data.shape[2], recurrent.hidden_size, recurrent.memory_size
        s = float(self.input_scale)
        rng = check_random_state(self.random_state)
        notes: list[str] = []
        if H >= d:
            W_in = np.eye(d)
        else:
            _, _, Vt = np.linalg.svd(steps - mu, full_matrices=False)
            W_in = Vt[:H]
            notes.append(
                f"hidden_size={H} < {d} input features: the modules encode the "
                f"top {H} principal directions of the inputs"
            )
        r = W_in.shape[0]
        z = np.where(mask[..., None], (data - mu) @ W_in.T, 0.0)
        directions = [recurrent]
        if recurrent.reverse is not None:
            directions.append(recurrent.reverse)
        laes_dirs = []
        for j, net in enumerate(directions):
            # the reverse direction reads every valid sequence backwards
            z_j = z if j == 0 else reverse_valid(z, lengths)
            laes_modules = []
            # modules='residual': the linear LAES states of the fitted
            # modules, encoded once, (n, ticks, components) each
            module_states: list[np.ndarray] = []
            for k in range(net.n_modules):
                sub, sub_lengths = subsample_clock(z_j, lengths, net.periods[k])
                # reversal keeps the lengths: the reverse direction has the
                # same reductions, noted once
                p = reduce_components(
                    self.n_components,
                    N,
                    [data_limit(sub_lengths, r)],
                    notes if j == 0 else [],
                    f"module {k}: ",
                )
                laes = make_laes(
                    min(p, N),
                    self.solver,
                    sub_lengths,
                    r,
                    center=False,
                    random_state=int(rng.randint(np.iinfo(np.int32).max)),
                )
                fit_laes(laes, padded_sequences(sub, sub_lengths))
                residual = self.modules == "residual"
                if residual and module_states:
                    _fit_residual_module_(
                        laes,
                        sub,
                        sub_lengths,
                        net.periods[: k + 1],
                        module_states,
                        rng,
                        notes if j == 0 else [],
                        f"module {k}: ",
                    )
                if residual and k < net.n_modules - 1:
                    sub_c = np.ascontiguousarray(sub)
                    module_states.append(laes._encode(sub_c, sub_lengths, True)[1])
                laes_modules.append(laes)
            own_units = H >= sum(laes.A_.shape[0] for laes in laes_modules)
            _init_multiscale_direction_(net, laes_modules, W_in, mu, s, own_units)
            laes_dirs.append(laes_modules)
        states = network_states(recurrent, seqs)
        features = readout_rows(module, states, lengths, per_step)
        W, b = self._fit_readout(
            module, features, y_encoded, lengths, problem, per_step, weight
        )
        set_linear_(module.readout, W, b)
        self.laes_layers_ = laes_dirs
        self.laes_ = laes_dirs[0][0]
        self.n_components_ = int(sum(laes.A_.shape[0] for laes in laes_dirs[0]))
        self.notes_ = notes
        return self

    def _n_components(self, recurrent, n_features, lengths, notes, prefix) -> int:
        """Components of one layer (see the class docstring), with notes."""
        if isinstance(recurrent, LMN):
            size, name = recurrent.memory_size, "memory_size"
        else:
            size, name = recurrent.hidden_size, "hidden_size"
        limits = [
            (size, f"the network has {name}={size}"),
            data_limit(lengths, n_features),
        ]
        p = reduce_components(self.n_components, size, limits, notes, prefix)
        if isinstance(recurrent, LMN):
            H = recurrent.hidden_size
            if H < min(p, n_features):
                reason = (
                    f"hidden_size={H} is below both n_components and the "
                    f"{n_features} input features (the LAES input A = U S Vᵀ "
                    "needs min(p, features) hidden units)"
                )
                p = reduce_components(p, p, [(H, reason)], notes, prefix)
        return p


def _lmn_layer(recurrent: LMN, i: int, j: int):
    return recurrent.layers[i] if j == 0 else recurrent.layers_reverse[i]


@torch.no_grad()
def _init_lmn_layer_(layer, A: np.ndarray, B: np.ndarray, mu: np.ndarray, s: float):
    """LAES initialization of one LMN layer (see :class:`LAESInitializer`).

    The first ``p`` memory units and first ``r`` hidden units hold the LAES;
    the others keep their random weights, decoupled as documented. Returns
    ``r``, the number of hidden units used.
    """
    p = A.shape[0]
    H, M = layer.hidden_size, layer.memory_size
    if H >= p:  # the paper's W_xh = s A, W_hm = I / s
        r, W_in, W_out = p, A, np.eye(p)
    else:  # A = U S Vᵀ: the hidden units carry the input directions
        U, S, Vt = np.linalg.svd(A, full_matrices=False)
        r, W_in, W_out = S.shape[0], Vt, U * S
    W_xh, b_h = numpy_weight(layer.weight_xh), numpy_weight(layer.bias_h)
    W_mh, W_hm = numpy_weight(layer.weight_mh), numpy_weight(layer.weight_hm)
    W_mm = numpy_weight(layer.weight_mm)
    W_xh[:r] = s * W_in
    b_h[:r] = -s * (W_in @ mu)
    W_mh[:r] = 0.0  # LAES hidden units read no memory
    W_mh[r:, :p] = 0.0  # the other hidden units do not read the LAES memory
    W_hm[:p] = 0.0
    W_hm[:p, :r] = W_out / s
    W_mm[:p, :] = 0.0
    W_mm[p:, :p] = 0.0
    W_mm[:p, :p] = B
    radius = getattr(layer, "init_radius", None)
    if radius is not None and p < M:
        # the map is block triangular: eig(B) and eig of the random block
        rho = spectral_radius(W_mm[p:, p:] + W_hm[p:, r:] @ W_mh[r:, p:])
        if rho > radius:
            W_mm[p:, p:] *= radius / rho
            W_mh[r:, p:] *= radius / rho
    for param, value in (
        (layer.weight_xh, W_xh),
        (layer.bias_h, b_h),
        (layer.weight_mh, W_mh),
        (layer.weight_hm, W_hm),
    ):
        param.copy_(torch.as_tensor(value, dtype=param.dtype, device=param.device))
    set_weight_mm_(layer, W_mm)
    if layer.bias_m is not None:
        layer.bias_m[:p] = 0.0
    return r


@torch.no_grad()
def _init_multiscale_direction_(net, laes_modules, W_in, mu, s, own_units) -> None:
    """LAES initialization of one direction of a multi-scale LMN.

    ``laes_modules[k]`` is the LAES of the projected inputs ``W_in (x - mu)``
    subsampled at module ``k``'s clock. ``own_units``: module ``k`` reads its
    own ``p_k`` hidden units ``tanh(s A_k W_in (x - mu))`` through ``I / s``
    (the LMN's construction, one block per module); otherwise the first
    ``r`` hidden units carry ``tanh(s W_in (x - mu))`` for every module, read
    through ``A_k / s``.
    """
    W_xh, b_h = numpy_weight(net.weight_xh), numpy_weight(net.bias_h)
    W_mh = numpy_weight(net.weight_mh)
    W_hm = np.zeros_like(numpy_weight(net.weight_hm))
    W_mm = np.zeros_like(numpy_weight(net.weight_mm))
    r = W_in.shape[0]
    if not own_units:
        W_xh[:r] = s * W_in
        b_h[:r] = -s * (W_in @ mu)
        W_mh[:r] = 0.0
    unit = 0
    for k, laes in enumerate(laes_modules):
        p = laes.A_.shape[0]
        start = net.module_slice(k).start
        rows_k = slice(start, start + p)
        if own_units:
            A_in = laes.A_ @ W_in
            W_xh[unit : unit + p] = s * A_in
            b_h[unit : unit + p] = -s * (A_in @ mu)
            W_mh[unit : unit + p] = 0.0
            W_hm[rows_k, unit : unit + p] = np.eye(p) / s
            unit += p
        else:
            W_hm[rows_k, :r] = laes.A_ / s
        W_mm[rows_k, rows_k] = laes.B_
    for param, value in (
        (net.weight_xh, W_xh),
        (net.bias_h, b_h),
        (net.weight_mh, W_mh),
        (net.weight_hm, W_hm),
        (net.weight_mm, W_mm),
    ):
        param.copy_(torch.as_tensor(value, dtype=param.dtype, device=param.device))


def _module_tick_states(module_states, periods, sub_lengths) -> np.ndarray:
    """The faster modules' states (``module_states[i]``: all ticks of module
    ``i``, period ``periods[i]``) at every tick of a slower module (period
    ``periods[-1]``, valid ticks ``sub_lengths``): rows ``(valid tick,
    sequence-major)``, columns the modules' components side by side.

    A module of period ``P_i`` holds at time ``t`` the state of its last
    update, tick ``t // P_i`` of its subsampled sequence.
    """
    P_k = periods[-1]
    n_ticks = int(np.max(sub_lengths))
    mask_k = valid_mask(sub_lengths, n_ticks)
    times = np.arange(n_ticks) * P_k
    blocks = [
        states[:, times // P_i][mask_k]
        for P_i, states in zip(periods[:-1], module_states, strict=True)
    ]
    return np.concatenate(blocks, axis=1)


def _fit_residual_module_(
    laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
) -> None:
    """Refit a module's LAES on what the faster modules do not encode.

    ``laes`` is the module's fitted LAES (period ``periods[-1]``) of its
    subsampled inputs ``sub`` (valid ticks ``sub_lengths``);
    ``module_states`` the linear LAES states of the faster modules (periods
    ``periods[:-1]``), every tick. The module's data matrix Ξ_k (its
    subsampled, reversed histories) loses its least-squares fit on the
    faster modules' (linear) states at the same steps, ``Ξ_k' = (I - Q Qᵀ)
    Ξ_k`` with ``Q`` an orthonormal basis of those states, and the leading
    right singular vectors of ``Ξ_k'`` replace the module's components (so
    ``A_k`` and ``B_k``, formed from them as for any LAES). ``Ξ_k'`` is only
    ever used through products (the matrix-free operator of Ξ_k), so the
    cost is that of the matrix-free solver. One BLAS thread, as
    :func:`fit_laes`. Directions the faster modules already encode entirely
    (singular values of ``Ξ_k'`` below ``1e-9`` times the norm of Ξ_k) are
    dropped, with a note, keeping at least one component.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        _fit_residual(
            laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
        )


def _fit_residual(
    laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
) -> None:
    sub = np.ascontiguousarray(sub)
    M = _module_tick_states(module_states, periods, sub_lengths)
    U, sv, _ = np.linalg.svd(M, full_matrices=False)
    rank = int(np.sum(sv > sv[:1].max(initial=0.0) * max(M.shape) * 1e-12))
    Q = U[:, :rank]
    xi = XiOperator(sub, sub_lengths, n_lags=laes.max_length_, workers=1)

    def matmat(V):
        Y = xi.matmat(V)
        return Y - Q @ (Q.T @ Y)

    def rmatmat(Y):
        return xi.rmatmat(Y - Q @ (Q.T @ Y))

    residual = LinearOperator(
        xi.shape,
        matvec=lambda v: matmat(v.reshape(-1, 1)).ravel(),
        rmatvec=lambda y: rmatmat(y.reshape(-1, 1)).ravel(),
        matmat=matmat,
        rmatmat=rmatmat,
        dtype=np.float64,
    )
    s, comps = randomized_svd_operator(
        residual,
        laes.n_components_,
        n_iter=2 * MATRIX_FREE_N_ITER + 3,
        random_state=int(rng.randint(np.iinfo(np.int32).max)),
    )
    norm_sq = xi_frobenius_sq(sub, sub_lengths)
    rank = max(1, int(np.sum(s > 1e-9 * np.sqrt(norm_sq))))
    reason = "the faster modules already encode the rest of its history"
    rank = reduce_components(None, s.size, [(rank, reason)], notes, prefix)
    laes._set_solution(
        s[:rank],
        comps[:rank],
        laes.mean_,
        norm_sq,
        laes.max_length_,
        sub.shape[2],
        laes.n_steps_total_,
    )


@torch.no_grad()
def _init_elman_layer_(rnn, i, j, A, B, mu, s) -> None:
    """LAES initialization of the first ``p`` units of one ``torch.nn.RNN``
    layer and direction (Pasa & Sperduti 2014); the other units keep their
    random rows, the LAES units do not read them."""
    p = A.shape[0]
    sfx = f"_l{i}" + ("_reverse" if j == 1 else "")
    w_ih, w_hh = getattr(rnn, "weight_ih" + sfx), getattr(rnn, "weight_hh" + sfx)

    def as_like(value):
        return torch.as_tensor(value, dtype=w_ih.dtype, device=w_ih.device)

    w_ih[:p] = as_like(s * A)
    w_hh[:p] = 0.0
    w_hh[:p, :p] = as_like(B)
    if rnn.bias:
        getattr(rnn, "bias_ih" + sfx)[:p] = as_like(-s * (A @ mu))
        getattr(rnn, "bias_hh" + sfx)[:p] = 0.0


@torch.no_grad()
def _layer_outputs(recurrent, i: int, inputs: np.ndarray, lengths: np.ndarray):
    """Output sequences of layer ``i`` (all directions) of the initialized
    network: the inputs of layer ``i + 1``, float64, zero-padded."""
    if isinstance(recurrent, LMN):
        directions = [
            _lmn_layer(recurrent, i, j) for j in range(recurrent.num_directions)
        ]
        like = directions[0].weight_xh
    else:
        rnn = recurrent.rnn
        with torch.random.fork_rng(devices=[]):  # leave the seeded stream alone
            single = ElmanRNN(
                inputs.shape[2],
                recurrent.hidden_size,
                bidirectional=recurrent.bidirectional,
            )
        like = getattr(rnn, f"weight_ih_l{i}")
        single = single.to(dtype=like.dtype, device=like.device)
        for name, param in single.rnn.named_parameters():
            param.copy_(getattr(rnn, name.replace("_l0", f"_l{i}")))
        directions = [single]
    X = torch.as_tensor(inputs, dtype=like.dtype, device=like.device)
    L = torch.as_tensor(lengths)
    outs = []
    for j, layer in enumerate(directions):
        data = (
            X
            if j == 0
            else torch.as_tensor(
                reverse_valid(inputs, lengths), dtype=like.dtype, device=like.device
            )
        )
        (out,) = module_sequences(lambda Xb, lb, m=layer: (m(Xb, lb)[0],), data, L)
        outs.append(out if j == 0 else reverse_valid(out, lengths))
    return np.concatenate(outs, axis=2)
