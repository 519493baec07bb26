"""Shared numerical helpers of the pretraining algorithms.

Least-squares readouts, readout targets and state extraction. Everything here
works on float64 numpy arrays (LAES math) and torch modules (states).
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from scipy import linalg
from scipy.special import expit, softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits
from torch import Tensor, nn

from .._training._loss import rows_score
from .._training._module import POOLING_WIDTHS, extrema_valid, mean_valid
from ..laes import LAESTransformer
from ..utils.sequences import Sequences, lengths_to_mask

__all__: list[str] = []


def padded_sequences(data: np.ndarray, lengths: np.ndarray) -> Sequences:
    """The padded float64 ``Sequences`` of ``data`` (zeroed after every
    sequence's length), given to a ``LAESTransformer`` without a round trip
    through a list of arrays."""
    lengths = np.asarray(lengths, dtype=np.int64)
    mask = lengths_to_mask(lengths, data.shape[1])
    data = np.where(mask[..., None], np.asarray(data, dtype=np.float64), 0.0)
    return Sequences(data, lengths, ragged=False, univariate=False)


def valid_mask(lengths: np.ndarray, T: int) -> np.ndarray:
    """Boolean mask ``(n, T)`` of the valid steps."""
    return lengths_to_mask(lengths, T)


def readout_targets(
    y_encoded: np.ndarray,
    problem: str,
    n_outputs: int,
    lengths: np.ndarray,
    per_step: bool,
) -> np.ndarray:
    """Least-squares targets, one row per sequence or per valid step.

    One-hot rows for multiclass targets (encoded as class indices), the 0/1
    indicators for multilabel targets and the raw values for regression.
    """
    y = np.asarray(y_encoded)
    if per_step:
        y = y[valid_mask(lengths, y.shape[1])]
    if problem == "multiclass":
        return np.eye(n_outputs)[y.astype(np.int64)]
    return y.reshape(y.shape[0], -1).astype(np.float64)


def output_residual(
    outputs: np.ndarray, targets: np.ndarray, problem: str
) -> np.ndarray:
    """Negative gradient of the loss with respect to the outputs (per row).

    ``targets - outputs`` for the squared error, ``targets - softmax(outputs)``
    for the cross-entropy and ``targets - sigmoid(outputs)`` for the binary
    cross-entropy: a least-squares fit of new readout columns to it is one
    (Gauss-)Newton-like step on the readout, exact for the squared error.
    """
    if problem == "multiclass":
        return targets - softmax(outputs, axis=1)
    if problem == "multilabel":
        return targets - expit(outputs)
    return targets - outputs


def ridge_readout(
    features: np.ndarray,
    targets: np.ndarray,
    alpha: float,
    *,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Ridge least squares ``min_W ||F W^T + b - Y||^2 + alpha ||W||^2``.

    With ``alpha = 0`` the minimum-norm solution (pseudoinverse, as in
    Carta, Sperduti & Bacciu 2020, §4.1). Features and targets are centered
    when ``fit_intercept`` so that the intercept is not penalized. With
    ``sample_weight`` the squared errors of the rows are weighted (weighted
    centering; rows of weight zero do not count).

    Returns
    -------
    W : ndarray of shape (n_targets, n_features)
    b : ndarray of shape (n_targets,)
    """
    F_ = np.asarray(features, dtype=np.float64)
    Y = np.asarray(targets, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    if fit_intercept:
        f_mean = np.average(F_, axis=0, weights=w)
        y_mean = np.average(Y, axis=0, weights=w)
        F_, Y = F_ - f_mean, Y - y_mean
    if w is not None:  # weighted least squares: rows scaled by sqrt(w)
        root = np.sqrt(w)[:, None]
        F_, Y = F_ * root, Y * root
    if alpha > 0:
        # Scale-aware ridge: alpha is relative to the mean squared feature,
        # so it means the same for tiny and large states.
        gram = F_.T @ F_
        scale = np.trace(gram) / max(gram.shape[0], 1)
        if scale > 0:
            gram[np.diag_indices_from(gram)] += alpha * scale
            W = linalg.solve(gram, F_.T @ Y, assume_a="pos").T
        else:  # constant features: nothing to fit but the intercept
            W = np.zeros((Y.shape[1], F_.shape[1]))
    else:
        W = linalg.lstsq(F_, Y, lapack_driver="gelsd")[0].T
    b = (y_mean - W @ f_mean) if fit_intercept else np.zeros(Y.shape[1])
    return W, b


#: Grid of the ``alpha='gcv'`` ridge readout, relative to the mean squared
#: (centered) state.
GCV_ALPHAS = np.logspace(-4, 4, 17)


def ridge_gcv_readout(
    features: np.ndarray,
    targets: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Ridge readout whose penalty is chosen by generalized cross-validation.

    The efficient leave-one-out error of
    :class:`sklearn.linear_model.RidgeCV` over :data:`GCV_ALPHAS` (relative
    to the mean squared centered feature, as ``alpha`` in
    :func:`ridge_readout`), one penalty for all targets; ``sample_weight``
    weights the rows' squared errors (as ``RidgeCV``'s).

    Returns
    -------
    W : ndarray of shape (n_targets, n_features)
    b : ndarray of shape (n_targets,)
    alpha : float
        The chosen penalty, relative to the mean squared feature.
    loo_r2 : float
        Leave-one-out R² at that penalty: ``1 - LOO error / error of the
        (weighted) target mean``, both weighted mean squared errors over the
        rows and targets; 0 or below means the readout predicts a held-out
        row no better than the mean of the others. 0 for constant features
        (the readout predicts the mean), NaN for constant targets.
    """
    from sklearn.linear_model import RidgeCV

    F_ = np.asarray(features, dtype=np.float64)
    Y = np.asarray(targets, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    centered = F_ - np.average(F_, axis=0, weights=w)
    if w is not None:
        centered = centered * np.sqrt(w)[:, None]
    scale = float(np.sum(centered**2)) / max(F_.shape[1], 1)
    intercept = np.average(Y, axis=0, weights=w)
    if scale <= 0:  # constant features: nothing to fit but the intercept
        return np.zeros((Y.shape[1], F_.shape[1])), intercept, float("nan"), 0.0
    ridge = RidgeCV(alphas=GCV_ALPHAS * scale).fit(F_, Y, sample_weight=w)
    W = np.asarray(ridge.coef_).reshape(Y.shape[1], F_.shape[1])
    b = np.asarray(ridge.intercept_, dtype=np.float64).reshape(Y.shape[1])
    # RidgeCV's efficient leave-one-out error is the mean over rows and
    # targets of w * r^2 (its rows are scaled by sqrt(w)); the mean's error
    # on the same scale
    w_rows = np.ones(len(Y)) if w is None else w
    spread = float(np.mean(w_rows[:, None] * (Y - intercept) ** 2))
    loo_r2 = 1.0 + float(ridge.best_score_) / spread if spread > 0 else float("nan")
    return W, b, float(ridge.alpha_ / scale), loo_r2


def logistic_readout(
    features: np.ndarray,
    targets: np.ndarray,
    problem: str,
    C: float,
    *,
    sample_weight: np.ndarray | None = None,
    solver: str = "lbfgs",
) -> tuple[np.ndarray, np.ndarray]:
    """Cross-entropy readout ``(W, b)``: logistic regression of the targets.

    The readout the classifiers' training loss would fit with the states
    held fixed: multinomial logistic regression for one-hot (multiclass)
    target rows, one binary logistic regression per label for 0/1
    (multilabel) target rows; ``C`` is the inverse L2 penalty of
    :class:`sklearn.linear_model.LogisticRegression` (the intercepts are not
    penalized); ``sample_weight`` weights the rows' losses (as
    ``LogisticRegression``'s). A class or label with a single value in the
    targets gets a zero weight row and an intercept that predicts that value.
    ``solver`` is ``LogisticRegression``'s.

    Returns
    -------
    W : ndarray of shape (n_outputs, n_features)
    b : ndarray of shape (n_outputs,)
    """
    F_ = np.asarray(features, dtype=np.float64)
    Y = np.asarray(targets, dtype=np.float64)
    n_outputs = Y.shape[1]
    W, b = np.zeros((n_outputs, F_.shape[1])), np.zeros(n_outputs)

    def fit(labels):
        model = LogisticRegression(C=C, max_iter=5000, solver=solver)
        with warnings.catch_warnings():
            # unscaled states may need many iterations; the start need not
            # be the exact optimum, fine-tuning goes on from it
            warnings.simplefilter("ignore", ConvergenceWarning)
            return model.fit(F_, labels, sample_weight=sample_weight)

    if problem == "multiclass":
        labels = Y.argmax(axis=1)
        present = np.unique(labels)
        if len(present) < 2:  # one class: predicted by the intercepts alone
            b[:] = -_SURE_LOGIT
            b[present] = _SURE_LOGIT
            return W, b
        model = fit(labels)
        # classes absent from the rows: below every intercept of the others
        b[:] = min(0.0, model.intercept_.min()) - _SURE_LOGIT
        if len(present) == 2:  # binary: the logit of the second class
            b[present[0]] = 0.0
            W[present[1]], b[present[1]] = model.coef_[0], model.intercept_[0]
            return W, b
        W[present], b[present] = model.coef_, model.intercept_
        return W, b
    for k in range(n_outputs):  # multilabel: one binary problem per label
        labels = (Y[:, k] > 0.5).astype(np.int64)
        if labels.min() == labels.max():
            b[k] = _SURE_LOGIT if labels[0] else -_SURE_LOGIT
            continue
        model = fit(labels)
        W[k], b[k] = model.coef_[0], model.intercept_[0]
    return W, b


#: Logit of an output that the training targets never contradict.
_SURE_LOGIT = 10.0


def rows(states: np.ndarray, lengths: np.ndarray, per_step: bool) -> np.ndarray:
    """Feature rows: final valid state of each sequence, or every valid step."""
    states = np.asarray(states)
    if per_step:
        return states[valid_mask(lengths, states.shape[1])]
    return states[np.arange(states.shape[0]), np.asarray(lengths) - 1]


#: With ``pooling='last+mean'``, the pretrainer scales the mean block so
#: that its root-mean-square norm over the training sequences is this
#: fraction of the last states' (measured in ``docs/training.md``).
POOL_BLOCK_SCALE = 0.5


@torch.no_grad()
def readout_rows(
    module: nn.Module,
    states: np.ndarray,
    lengths: np.ndarray,
    per_step: bool,
    *,
    own_coordinates: bool = True,
) -> np.ndarray:
    """The rows the readout of ``module`` (a ``SequenceNet``) reads.

    :func:`rows` of the recurrent output ``states`` (N, T, F); with
    ``module.pooling == 'last+mean'`` (sequence targets), the final states
    side by side with the mean over the valid steps, that block scaled to
    :data:`POOL_BLOCK_SCALE` times the final states' root-mean-square norm;
    the scale is stored in ``module.pool_scale``, so that the network reads
    what the readout is fitted on. The block of extrema (and its scale,
    ``module.extrema_scale``) is taken in the start's coordinates: states
    in the network's own coordinates (``own_coordinates=True``, the
    network's output) are first turned by ``module.extrema_basis()``, as the
    network turns them; the linear LAES states (``False``) are already
    there.
    """
    last = rows(states, lengths, per_step)
    if per_step or getattr(module, "pooling", "last") == "last":
        return last
    # 'last+mean' and 'last+mean+max', and 'auto' until
    # :func:`choose_pooling_` decides
    states_t = torch.as_tensor(np.asarray(states))
    lengths_t = torch.as_tensor(np.asarray(lengths))
    rms_last = np.sqrt(np.mean(np.sum(last**2, axis=1)))

    def scaled(block: np.ndarray) -> tuple[float, np.ndarray]:
        rms = np.sqrt(np.mean(np.sum(block**2, axis=1)))
        scale = POOL_BLOCK_SCALE * rms_last / rms if rms > 0 else 1.0
        return float(scale), scale * block

    scale, mean = scaled(mean_valid(states_t, lengths_t).numpy())
    module.pool_scale.fill_(scale)
    blocks = [last, mean]
    if getattr(module, "extrema_scale", None) is not None:
        basis = module.extrema_basis() if own_coordinates else None
        if basis is not None:
            states_t = states_t @ basis.detach().cpu().to(states_t.dtype).T
        scale, extrema = scaled(extrema_valid(states_t, lengths_t).numpy())
        module.extrema_scale.fill_(scale)
        blocks.append(extrema)
    return np.hstack(blocks)


#: Folds and (at most) repeats of the cross-validation with which
#: ``pooling='auto'`` compares the readouts of a classification start.
POOLING_CV_FOLDS, POOLING_CV_REPEATS = 5, 4
#: The repeats stop once this many held-out rows are scored: every row is
#: held out once per repeat, so up to 266 rows take all
#: :data:`POOLING_CV_REPEATS` repeats and larger sets fewer (PLAID's 537
#: sequences two; ``docs/training.md``).
POOLING_CV_ROWS = 800


def cv_repeats(n_rows: int) -> int:
    """Repeats of the folds for ``n_rows`` rows: enough to score
    :data:`POOLING_CV_ROWS` held-out rows, from 1 to
    :data:`POOLING_CV_REPEATS`."""
    return int(min(POOLING_CV_REPEATS, max(1, -(-POOLING_CV_ROWS // max(n_rows, 1)))))


def cv_logistic_score(features, targets, problem, C, sample_weight) -> float:
    """Mean held-out score (accuracy) of :func:`logistic_readout` over
    repeated stratified folds of the rows (plain folds for multilabel rows;
    :func:`cv_repeats` repeats); NaN when a class has fewer than two
    rows."""
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

    labels = targets.argmax(axis=1) if problem == "multiclass" else None
    if labels is not None:
        smallest = int(np.bincount(labels)[np.unique(labels)].min())
        if smallest < 2 or len(np.unique(labels)) < 2:
            return float("nan")
        n_splits = min(POOLING_CV_FOLDS, smallest)
        splitter = RepeatedStratifiedKFold(
            n_splits=n_splits, n_repeats=cv_repeats(len(targets)), random_state=0
        )
    else:
        if len(targets) < 2:
            return float("nan")
        n_splits = min(POOLING_CV_FOLDS, len(targets))
        splitter = RepeatedKFold(
            n_splits=n_splits, n_repeats=cv_repeats(len(targets)), random_state=0
        )
    # Newton-CG (truncated Newton steps: Hessian-vector products) converges
    # in a few passes where L-BFGS takes thousands on the nearly separable
    # states of a few rows, and it stops nearer the optimum; Newton's method
    # with a Cholesky solve costs (features x classes)^3 per step, which
    # the wide readouts of a few dozen rows pay many times over
    # (docs/training.md, "The start's cross-validations by Newton-CG")
    scores = []
    for train, test in splitter.split(features, labels):
        weight = None if sample_weight is None else sample_weight[train]
        W, b = logistic_readout(
            features[train],
            targets[train],
            problem,
            C,
            sample_weight=weight,
            solver="newton-cg",
        )
        outputs = features[test] @ W.T + b
        scores.append(rows_score(outputs, targets[test], problem, False))
    return float(np.mean(scores))


@torch.no_grad()
def choose_pooling_(
    module: nn.Module,
    features: np.ndarray,
    targets: np.ndarray,
    problem: str,
    *,
    logistic: bool,
    C: float = 1.0,
    sample_weight: np.ndarray | None = None,
) -> tuple[str, dict, np.ndarray]:
    """Resolve ``pooling='auto'``: the pooled readouts or the last step only.

    ``features`` are the :func:`readout_rows` of a ``SequenceNet`` with
    ``pooling='auto'`` (the final states, then the scaled mean block, then,
    for a network that has one, the scaled block of maxima and minima; one
    row per sequence); ``targets`` the :func:`readout_targets`. The readout
    of the start (``logistic``: :func:`logistic_readout` at ``C``, scored by
    the mean accuracy over :func:`cv_repeats` repeats (4 up to 266
    sequences) of :data:`POOLING_CV_FOLDS` stratified folds; otherwise the
    ridge readout of :func:`ridge_gcv_readout`, scored by its leave-one-out
    R²) is cross-validated on each nested feature set: the final states,
    with the mean, with the mean and the extrema. Taken in that order, a
    larger set replaces the current choice only when it scores more than
    ``1 / n`` (one of the ``n`` training sequences) above it. The scales
    of the blocks left out (``module.pool_scale``,
    ``module.extrema_scale``) are set to 0, so that the network computes
    what the chosen pooling computes, and those blocks of the returned rows
    are zeroed.

    Returns
    -------
    pooling : {'last', 'last+mean', 'last+mean+max'}
    scores : dict
        The cross-validated score of each candidate.
    features : ndarray
        The rows the readout is fitted on.
    """
    features = np.asarray(features, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    extrema = getattr(module, "extrema_scale", None) is not None
    n_last = features.shape[1] // POOLING_WIDTHS["auto" if extrema else "last+mean"]
    # the nested candidates the network's blocks allow, in order
    widths = {
        name: k * n_last
        for name, k in POOLING_WIDTHS.items()
        if name != "auto" and k * n_last <= features.shape[1]
    }
    scores = {}
    for name, width in widths.items():
        rows_ = features[:, :width]
        if logistic:
            scores[name] = cv_logistic_score(rows_, targets, problem, C, sample_weight)
        else:
            scores[name] = ridge_gcv_readout(
                rows_, targets, sample_weight=sample_weight
            )[3]
    margin = 1.0 / max(len(features), 1)
    chosen = "last"
    for name in widths:
        if scores[name] > scores[chosen] + margin:  # NaN: False
            chosen = name
    if chosen == "last":
        module.pool_scale.fill_(0.0)
    if extrema and chosen != "last+mean+max":
        module.extrema_scale.fill_(0.0)
    features = features.copy()
    features[:, widths[chosen] :] = 0.0
    return chosen, scores, features


@torch.no_grad()
def set_linear_(layer: nn.Linear, W: np.ndarray, b: np.ndarray) -> None:
    """Copy ``W`` and ``b`` into a linear layer (its dtype and device)."""
    w = layer.weight
    layer.weight.copy_(torch.as_tensor(W, dtype=w.dtype, device=w.device))
    layer.bias.copy_(torch.as_tensor(b, dtype=w.dtype, device=w.device))


@torch.no_grad()
def subsample_clock(data: np.ndarray, lengths, period: int):
    """Steps ``0, period, 2 period, ...`` of every padded sequence (the steps
    at which a multi-scale memory module of that period updates) and their
    lengths."""
    sub = data[:, ::period]
    sub_lengths = (np.asarray(lengths) - 1) // period + 1
    return sub, sub_lengths


def module_sequences(
    fn, X: Tensor, lengths: Tensor, *, batch_size: int = 256
) -> list[np.ndarray]:
    """Run ``fn(Xb, lengths_b) -> tuple of (N, T, *) tensors`` by chunks.

    Returns the float64 arrays concatenated over the chunks; arrays with a
    time axis (3-D) are zero-padded to ``X.shape[1]`` steps.
    """
    T = int(X.shape[1])
    chunks: list[list[np.ndarray]] = []
    for start in range(0, int(X.shape[0]), batch_size):
        Xb, lb = X[start : start + batch_size], lengths[start : start + batch_size]
        outs = fn(Xb, lb)
        chunk = []
        for out in outs:
            arr = out.detach().to("cpu", torch.float64).numpy()
            if arr.ndim >= 3 and arr.shape[1] < T:
                pad = [(0, 0), (0, T - arr.shape[1])] + [(0, 0)] * (arr.ndim - 2)
                arr = np.pad(arr, pad)
            chunk.append(arr)
        chunks.append(chunk)
    return [np.concatenate(parts) for parts in zip(*chunks, strict=True)]


@torch.no_grad()
def network_states(recurrent: nn.Module, seqs: Sequences) -> np.ndarray:
    """Float64 outputs ``(n, T, units)`` of a recurrent network (its own
    dtype and device) on padded sequences, computed by chunks."""
    like = next(recurrent.parameters())
    (states,) = module_sequences(
        lambda Xb, lb: (recurrent(Xb, lengths=lb)[0],),
        torch.as_tensor(np.asarray(seqs.data), dtype=like.dtype, device=like.device),
        torch.as_tensor(np.asarray(seqs.lengths)),
    )
    return states


def readout_problem(context) -> tuple[str, bool]:
    """``(problem, per_step)`` of a fit, for a pretrainer that fits a
    least-squares readout to the targets (which a CTC target lacks)."""
    if context.problem == "ctc":
        raise ValueError(
            "the pretrainers fit a least-squares readout to the targets, which "
            "label sequences of target='ctc' do not provide; use pretrainer=None "
            "(or 'auto') with target='ctc'."
        )
    return context.problem, context.per_step


#: ``solver='auto'`` of the pretrainers never uses the Gram solver above this
#: many columns ``L * a`` (its ``(L a)^2`` matrix: 512 MiB at 8192).
GRAM_MAX_COLUMNS = 8192


def laes_rank_bound(lengths: np.ndarray, n_features: int) -> int:
    """Most LAES components the data support: ``min(n_steps, L * a)``.

    The rank of the LAES data matrix Ξ (one row per valid step, ``L * a``
    columns) is at most this.
    """
    lengths = np.asarray(lengths)
    return int(min(int(lengths.sum()), int(lengths.max()) * int(n_features)))


#: Power iterations of the matrix-free LAES solver in the pretrainers. Two
#: capture the energy of the transformer's default (4 or 7) to within 3e-4
#: (explained variance ratio) on the data tried, at about half the cost: an
#: initialization needs the leading subspace only roughly.
MATRIX_FREE_N_ITER = 2


def resolve_solver(
    solver: str, lengths: np.ndarray, n_features: int, n_components: int
) -> str:
    """The LAES solver for ``solver='auto'``; other values are returned as is.

    Picks the cheaper of the two by a cost model measured on one CPU thread
    (seconds; the fits of sklmn often share the cores)::

        gram        = 1e-10 (L a)^3 + 1e-9 n_steps L a^2   (eigh + lag moments)
        matrix_free = 1.2e-5 n_steps (p + 10) / 42 (n_iter + 1) / 3

    e.g. ``'gram'`` for 500 sequences x 300 steps x 1 feature (0.05 s against
    about 2 s) and for univariate series up to a few thousand steps,
    ``'matrix_free'`` for many features (hidden sequences, stacked layers:
    0.8 s against 6 s at 500 x 128 x 32), never ``'gram'`` above
    :data:`GRAM_MAX_COLUMNS` columns.
    """
    if solver != "auto":
        return solver
    lengths = np.asarray(lengths)
    L, a, n_steps = int(lengths.max()), int(n_features), int(lengths.sum())
    m = L * a
    if m > GRAM_MAX_COLUMNS:
        return "matrix_free"
    gram = 1e-10 * m**3 + 1e-9 * n_steps * L * a * a
    matrix_free = (
        1.2e-5 * n_steps * (n_components + 10) / 42 * (MATRIX_FREE_N_ITER + 1) / 3
    )
    return "gram" if gram <= matrix_free else "matrix_free"


def make_laes(
    n_components: int,
    solver: str,
    lengths: np.ndarray,
    n_features: int,
    **params,
) -> LAESTransformer:
    """An unfitted :class:`~sklmn.laes.LAESTransformer` for a pretrainer.

    ``solver='auto'`` is resolved by :func:`resolve_solver`; the matrix-free
    solver runs :data:`MATRIX_FREE_N_ITER` power iterations. ``params`` are
    passed on (``center``, ``return_sequences``, ``random_state``). Fit it
    with :func:`fit_laes`.
    """
    solver = resolve_solver(solver, lengths, n_features, n_components)
    if solver == "matrix_free":
        params.setdefault("n_iter", MATRIX_FREE_N_ITER)
    return LAESTransformer(n_components, solver=solver, **params)


def fit_laes(laes: LAESTransformer, sequences: Sequences) -> LAESTransformer:
    """Fit ``laes`` with one BLAS thread.

    The pretrainers' eigendecompositions and factorizations are small (the
    cost model of :func:`resolve_solver` keeps them so); threaded BLAS gains
    little on them and, on cores shared with other fits, waits for its
    threads: a 300 x 300 ``eigh`` took 1 s with two OpenBLAS threads on a
    busy 2-core machine and 0.01 s with one.

    The inputs are the pretrainers' own (e.g. hidden states subsampled at a
    slow clock: few steps of many features), so the channels-first warning
    meant for user data is silenced.
    """
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=".*looks like channels-first", category=UserWarning
        )
        return laes.fit(sequences)


def reduce_components(
    requested: int | None,
    default: int,
    limits: list[tuple[int, str]],
    notes: list[str],
    prefix: str = "",
) -> int:
    """``min(requested or default, *limits)``, with a note for every reduction.

    ``limits`` are ``(bound, reason)`` pairs applied in order; every bound
    that lowers the number of components appends ``"{prefix}n_components
    reduced from {p} to {bound}: {reason}"`` to ``notes``.
    """
    p = int(default if requested is None else requested)
    for bound, reason in limits:
        if bound < p:
            notes.append(f"{prefix}n_components reduced from {p} to {bound}: {reason}")
            p = int(bound)
    return p


def data_limit(
    lengths: np.ndarray, n_features: int, what: str = "features"
) -> tuple[int, str]:
    """``(bound, reason)`` of :func:`laes_rank_bound` for :func:`reduce_components`.

    ``what`` names the columns of a step in the reason (``"features"``, or
    ``"hidden units"`` for a LAES of hidden sequences).
    """
    lengths = np.asarray(lengths)
    bound = laes_rank_bound(lengths, n_features)
    reason = (
        f"the data support at most {bound} (min(total steps, longest length x "
        f"{what}) = min({int(lengths.sum())}, {int(lengths.max())} x "
        f"{int(n_features)}))"
    )
    return bound, reason


def reverse_valid(data: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Reverse the valid part of every sequence in time (padding stays zero).

    ``out[i, t] = data[i, lengths[i] - 1 - t]`` for ``t < lengths[i]``; its own
    inverse, as the reverse direction of a bidirectional network reads it.
    """
    lengths = np.asarray(lengths)
    src = lengths[:, None] - 1 - np.arange(data.shape[1])[None, :]
    valid = src >= 0
    out = np.take_along_axis(data, np.clip(src, 0, None)[:, :, None], axis=1)
    out[~valid] = 0.0
    return out


def laes_states(laes: LAESTransformer, seqs: Sequences) -> np.ndarray:
    """The states of a ``return_sequences=True`` LAES at every step of the
    padded ``seqs``, zero at padded steps."""
    states = laes.transform(seqs)
    return np.where(seqs.mask[..., None], states, 0.0)


def spectral_radius(M: np.ndarray) -> float:
    """Largest eigenvalue modulus of a square matrix (0 for an empty one)."""
    if M.size == 0:
        return 0.0
    return float(np.abs(np.linalg.eigvals(M)).max())
