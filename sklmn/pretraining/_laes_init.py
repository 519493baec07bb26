"""LAES initialization of the LMN and of the Elman RNN.

Carta, Sperduti & Bacciu (2020), "Autoencoder-based initialization for
recurrent neural networks with a linear memory", §3.2; Pasa & Sperduti (2014),
"Pre-training of recurrent neural networks via linear autoencoders".
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._training import FitContext
from .._training._loss import rows_score
from .._training._module import POOLING_WIDTHS
from ..utils._compat import Interval, StrOptions
from ..utils._doc_link import _DocLinkMixin
from ._common import (
    choose_pooling_,
    cv_logistic_score,
    data_limit,
    fit_laes,
    laes_states,
    logistic_readout,
    make_laes,
    module_sequences,
    network_states,
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
)
from ._laes_multiscale import initialize_multiscale

__all__ = ["LAESInitializer"]


def _check_C_candidates(candidates) -> tuple[float, ...]:
    """``C_candidates`` as a tuple of positive finite floats."""
    values = np.asarray(candidates, dtype=object).ravel()
    if not len(values):
        raise ValueError(
            f"C_candidates must hold at least one value, got {candidates!r}; "
            "None tries C only."
        )
    out = []
    for value in values:
        if (
            isinstance(value, bool)
            or not isinstance(value, Real)
            or not np.isfinite(value)
            or value <= 0
        ):
            raise ValueError(
                "C_candidates must hold positive finite numbers, got "
                f"{value!r} in {candidates!r}"
            )
        out.append(float(value))
    return tuple(out)


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

    **The hidden output (LMN-h, ``output='hidden'``).** The readout then
    reads the hidden units, which in the construction above carry only the
    current input. Another ``p`` hidden units of every layer expose the LAES
    memory: ``h_e = tanh(c m_{t-1})`` (``W_mh = c I`` on the LAES memory, no
    input, no bias), with ``c = s / (2 rms)`` for the root-mean-square
    ``rms`` of the layer's LAES states on the training data, so that the
    tanh stays near its linear range. Since ``m_t = W_hm h_t + B m_{t-1}``,
    the ``'ridge'`` readout ``W`` of the LAES states maps to the hidden
    units exactly in the linear limit: ``W W_hm`` on the input units and
    ``W B / c`` on the exposed ones; the ``'logistic'`` readout is fitted on
    the network's own hidden states. This needs ``p + min(p, features) <=
    hidden_size`` (the bound enters ``p`` like the others, with a note).

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
    C_candidates : sequence of float or None, default=None
        Other values of ``C`` (at least one) for the ``'logistic'`` readout of a
        sequence-level target, tried in order after ``C`` (and after the
        choice of ``pooling='auto'``, made at ``C``): each is scored by the
        same cross-validation as ``readout_cv_score_`` and replaces the
        current value only when it scores more than ``1 / n`` higher (``n``
        training sequences). The value used is ``C_``. None: ``C`` only. The
        LMN estimators' ``pretrainer='auto'`` sets it (``docs/training.md``,
        "The readout's penalty").
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
        on: the ``'logistic'`` readout's mean accuracy over repeated 5
        stratified folds of the sequences (4 repeats up to 266 sequences,
        fewer above: enough to score 800 held-out sequences; the readout
        refitted on the others; the LAES, unsupervised, is fitted once on
        all), the ``'ridge'`` readout's ``readout_loo_r2_``; NaN when a
        class has fewer than two training sequences (no stratified folds);
        None for per-step targets of the logistic readout and for a fixed
        ridge penalty. The LMN estimators' ``pretrained_alpha='auto'`` anchors
        fine-tuning to a start whose score is at least 0.9.
    pooling_ : {'last', 'last+mean', 'last+mean+max'}
        What the network's readout reads (its ``pooling``). A network built
        with ``pooling='auto'`` (the default of the LMN and multi-scale LMN
        estimators) is resolved here: the readout is fitted on the final
        states alone, on the final states with their mean over the valid
        steps, and on both with the states' maxima and minima over the
        valid steps, each cross-validated on the training sequences (the
        logistic readout: accuracy over repeated 5 stratified folds, as
        for ``readout_cv_score_``;
        the ridge readout: its leave-one-out R² at the penalty generalized
        cross-validation chooses). Taken in that order, a larger set
        replaces the current choice only when it scores more than ``1 / n``
        above it (``n`` training sequences); the network's blocks left out
        are switched off (scale 0).
    C_ : float or None
        The ``C`` of the ``'logistic'`` readout (``C``, or the one of
        ``C_candidates`` chosen); None for a ridge readout.
    C_scores_ : list of (float, float) or None
        ``(C, score)``: the cross-validated score of each value of ``C``
        tried, ``C`` first, then ``C_candidates`` in order; None without
        candidates.
    pooling_scores_ : dict or None
        The cross-validated scores of ``pooling='auto'``
        (``{'last': ..., 'last+mean': ..., 'last+mean+max': ...}``; NaN, and
        ``'last'`` kept, when a class has fewer than two training
        sequences); None for other poolings.

    See Also
    --------
    UnrolledPretrainer : Pretraining from an unrolled RNN.
    sklmn.laes.LAESTransformer : The autoencoder.

    Notes
    -----
    The network maps the autoencoders to its weights (its
    ``init_from_laes_``; the protocol of ``docs/extending.md``): this class
    fits them, hands them over and fits the readout. Supported networks:
    :class:`~sklmn.nn.LMN` with ``memory_matrix`` ``'free'`` or
    ``'spectral'`` (an orthogonal ``W_mm`` cannot hold ``B``; ``'schur'``
    with ``output='memory'`` only), any number of layers, uni- or
    bidirectional; and
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
    cross-validates its readout on the final states, with their mean, and
    with their mean and extrema, and keeps the best by a margin:

    >>> clf = LMNClassifier(hidden_size=10, memory_size=10, max_iter=1,
    ...                     random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X, y)
    >>> sorted(clf.pretrainer_.pooling_scores_)
    ['last', 'last+mean', 'last+mean+max']
    >>> clf.pretrainer_.pooling_ in clf.pretrainer_.pooling_scores_
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
        "C_": "float?",
        "C_scores_": "list?",
    }

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "center": ["boolean"],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"gcv"})],
        "readout": [StrOptions({"ridge", "logistic", "auto"})],
        "C": [Interval(Real, 0, None, closed="neither")],
        "C_candidates": ["array-like", None],
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
        C_candidates=None,
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
        self.C_candidates = C_candidates
        self.input_scale = input_scale
        self.modules = modules
        self.random_state = random_state

    @staticmethod
    def _check_network(recurrent: torch.nn.Module) -> None:
        """The network must follow the LAES protocol of the recurrent
        modules (``init_from_laes_`` and ``check_laes_init``; see
        ``docs/extending.md``) and accept a LAES start."""
        if not (
            callable(getattr(recurrent, "init_from_laes_", None))
            and callable(getattr(recurrent, "check_laes_init", None))
        ):
            raise ValueError(
                "LAESInitializer initializes an LMN, a multi-scale LMN, an "
                f"Elman RNN or a linear RNN, got {type(recurrent).__name__} (a "
                "module without init_from_laes_)"
            )
        recurrent.check_laes_init("LAESInitializer")

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
        if self.C_candidates is not None:
            _check_C_candidates(self.C_candidates)
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
        if getattr(recurrent, "periods", None) is not None:
            # a multi-clock memory: one LAES per memory module
            return self._initialize_multiscale(
                module, seqs, y_encoded, problem, per_step, weight
            )
        n_layers, n_dirs = recurrent.num_layers, recurrent.num_directions
        hidden = getattr(recurrent, "output", "memory") == "hidden"
        s = float(self.input_scale)
        memory_scales: list[float] = []
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
                extra, st = {}, None
                if hidden or (i == n_layers - 1 and not logistic):
                    st = laes_states(laes, padded)
                if hidden:
                    # the exposed memory units tanh(c m) at c = s / (2 rms(m))
                    c = _memory_scale(st, lengths, s)
                    extra["memory_scale"] = c
                    if i == n_layers - 1:
                        memory_scales.append(c)
                recurrent.init_from_laes_(
                    laes.A_,
                    laes.B_,
                    mean,
                    layer=i,
                    direction=j,
                    input_scale=s,
                    partial=True,
                    **extra,
                )
                H = recurrent.hidden_size
                factored = (
                    recurrent.laes_exposed_units(p, data.shape[2]).start < p
                    if hidden
                    else H < p
                )
                if factored and j == 0:  # the LMN factors A (see init_from_laes_)
                    r = min(p, data.shape[2])
                    notes.append(
                        f"{prefix}hidden_size={H} < n_components="
                        f"{p}: the LAES input matrix is factored, A = U S Vᵀ, "
                        f"W_xh = s Vᵀ on {r} hidden units and W_hm = U S / s"
                    )
                laes_dirs.append(laes)
                if i == n_layers - 1 and not logistic:
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
            features = readout_rows(
                module, states, lengths, per_step, own_coordinates=False
            )
            W, b = self._fit_readout(
                module, features, y_encoded, lengths, problem, per_step, weight
            )
            # the LAES units output laes_output_scale(s) times the LAES state
            W = W / recurrent.laes_output_scale(s)
            # LAES units of direction j are the first p of its block of outputs
            # (one block per pooled quantity: the final state, then the mean)
            unit = recurrent.output_size // n_dirs
            p_last = laes_layers[-1][0].n_components_
            n_blocks = W.shape[1] // (p_last * n_dirs)
            W_full = np.zeros((W.shape[0], n_blocks * unit * n_dirs))
            # a Schur memory turned its units: the linear blocks (the final
            # state, the mean) absorb the turn; the extrema are read in the
            # LAES's coordinates (SequenceNet.extrema_basis)
            bases = [_memory_basis(recurrent, j) for j in range(n_dirs)]
            n_linear = POOLING_WIDTHS["last+mean"]
            for q in range(n_blocks):
                for j in range(n_dirs):
                    out = (q * n_dirs + j) * unit
                    src = (q * n_dirs + j) * p_last
                    if hidden:  # read m_t through the hidden units
                        W_full[:, out : out + unit] = _hidden_readout(
                            recurrent,
                            j,
                            W[:, src : src + p_last],
                            laes_layers[-1][j].B_,
                            memory_scales[j],
                        )
                        continue
                    W_full[:, out : out + p_last] = W[:, src : src + p_last]
                    if bases[j] is not None and q < n_linear:
                        cols = slice(out, out + unit)
                        W_full[:, cols] = W_full[:, cols] @ bases[j]
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

    def _choose_C(self, features, targets, problem, weight) -> None:
        """Try ``C_candidates`` in order after ``C``: each replaces the
        current ``C_`` (and ``readout_cv_score_``) when its cross-validated
        score is more than ``1 / n`` higher; records ``C_scores_``."""
        candidates = _check_C_candidates(self.C_candidates)
        scores = {self.C_: self.readout_cv_score_}
        margin = 1.0 / max(len(features), 1)
        for C in candidates:
            if C in scores:
                continue
            scores[C] = cv_logistic_score(features, targets, problem, C, weight)
            if scores[C] > self.readout_cv_score_ + margin:  # NaN: False
                self.C_, self.readout_cv_score_ = C, scores[C]
        self.C_scores_ = [(C, float(score)) for C, score in scores.items()]

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
        self.C_, self.C_scores_ = None, None
        if logistic:
            self.C_ = float(self.C)
            if self.pooling_scores_ is not None:
                self.readout_cv_score_ = self.pooling_scores_[self.pooling_]
            elif per_step:  # rows are steps, not sequences: not measured
                self.readout_cv_score_ = None
            else:
                self.readout_cv_score_ = cv_logistic_score(
                    features, targets, problem, self.C_, weight
                )
            if self.C_candidates is not None and not per_step:
                self._choose_C(features, targets, problem, weight)
            W, b = logistic_readout(
                features, targets, problem, self.C_, sample_weight=weight
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
        """LAES initialization of a multi-scale LMN (one LAES per module);
        see :func:`~sklmn.pretraining._laes_multiscale.initialize_multiscale`."""
        return initialize_multiscale(
            self, module, seqs, y_encoded, problem, per_step, weight
        )

    def _n_components(self, recurrent, n_features, lengths, notes, prefix) -> int:
        """Components of one layer (see the class docstring), with notes:
        the network's bounds (``laes_capacity``; its size first) and the
        data's."""
        limits = list(recurrent.laes_capacity(n_features))
        limits.insert(1, data_limit(lengths, n_features))
        return reduce_components(self.n_components, limits[0][0], limits, notes, prefix)


def _memory_scale(states: np.ndarray, lengths: np.ndarray, s: float) -> float:
    """Scale ``c = s / (2 rms)`` of the hidden units that expose a LAES
    memory (``output='hidden'``): ``tanh(c m)`` stays near its linear range
    for the memory states ``m`` of the training data (rms over the valid
    steps and units; ``c = s`` when they are all zero)."""
    valid = rows(np.asarray(states), np.asarray(lengths), True)
    rms = float(np.sqrt(np.mean(valid**2))) if valid.size else 0.0
    return s / (2.0 * rms) if rms > 0 else s


@torch.no_grad()
def _hidden_readout(recurrent, j: int, W: np.ndarray, B: np.ndarray, c: float):
    """Readout of the hidden units of direction ``j`` of the last layer of an
    ``output='hidden'`` LMN that computes ``W m_t`` in the linear limit:
    ``m_t = W_hm[:p] h_t + B m_{t-1}`` with ``m_{t-1} = atanh(h_e) / c`` on the
    exposed units ``h_e``, so ``W W_hm[:p]`` on every unit plus ``W B / c``
    on the exposed ones."""
    layers = recurrent.layers if j == 0 else recurrent.layers_reverse
    layer = layers[-1]
    p = W.shape[1]
    W_hm = layer.weight_hm.detach().cpu().double().numpy()
    out = W @ W_hm[:p]
    exposed = recurrent.laes_exposed_units(p, layer.input_size)
    out[:, exposed] += W @ B / c
    return out


@torch.no_grad()
def _memory_basis(recurrent, j: int) -> np.ndarray | None:
    """``memory_basis`` (float64) of direction ``j`` of the last layer of an
    LMN with a Schur memory, None otherwise."""
    layers = getattr(recurrent, "layers", None) if j == 0 else None
    if j == 1:
        layers = getattr(recurrent, "layers_reverse", None)
    basis = None if layers is None else getattr(layers[-1], "memory_basis", None)
    return None if basis is None else basis.detach().cpu().double().numpy()


def _layer_outputs(recurrent, i: int, inputs: np.ndarray, lengths: np.ndarray):
    """Output sequences of layer ``i`` (all directions) of the initialized
    network (its ``layer_outputs``): the inputs of layer ``i + 1``, float64,
    zero-padded."""
    like = next(recurrent.parameters())
    X = torch.as_tensor(inputs, dtype=like.dtype, device=like.device)
    (out,) = module_sequences(
        lambda Xb, lb: (recurrent.layer_outputs(i, Xb, lb),),
        X,
        torch.as_tensor(lengths),
    )
    return out
