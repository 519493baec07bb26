"""Variable projection: the recurrent network trained through the readout
that is refitted after it.

Fine-tuning a LAES start by the cross-entropy trains the readout with the
memory, and on small training sets the jointly trained readout overfits
first: the same networks with a refitted, regularized readout predict
better (``docs/memory.md``, "Thirteenth round"). :class:`VariableProjection`
trains the recurrent parameters only, by the cross-validated error of a
ridge readout solved in closed form (the readout is projected out, as in
variable projection: Golub and Pereyra 1973, "The differentiation of pseudo-
inverses and nonlinear least squares problems whose variables separate"),
refits a logistic readout on the result, and keeps the number of steps that
predicts held-out sequences best (none: the start). The estimators'
``fine_tuning='projection'`` runs it before the epochs of the smooth
fine-tuning.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from skorch.callbacks import Callback
from skorch.dataset import unpack_data
from skorch.utils import to_tensor
from torch.utils.data import Subset

from ..nn._checks import check_positive_int
from ._smooth import _mode_gains, normalize_mode_inputs_
from ._splines import SplineReadout, hat_basis, quantile_knots, ramp_weights

__all__ = [
    "VariableProjection",
    "choose_copy",
    "choose_splines",
    "guard_split_count",
    "ridge_held_out_error",
    "write_splines_",
]

#: ridge penalties the start's features choose from (the objective's) and
#: the ``C`` of the refitted logistic readouts (chosen by cross-validation)
_ALPHAS = (0.1, 1.0, 10.0, 100.0, 1000.0)
_CS = (0.01, 0.1, 1.0, 10.0)
#: knots per feature of the spline readout (``docs/memory.md``, "A
#: per-feature readout": nine quantile knots recover the trees' PLAID gain)
_N_KNOTS = 9
#: how many more training sequences the splines' cross-validation must get
#: right than the linear readout's (more than this many)
_SPLINE_MARGIN = 2
#: fold draws that score each ridge penalty at the start
_ALPHA_DRAWS = 5
#: the fraction of the sequences held out to choose the steps
_GUARD_FRACTION = 0.25
#: the stratified quarters that ``guard_splits`` holds out in turn
_N_QUARTERS = int(round(1 / _GUARD_FRACTION))
#: the fewest held-out sequences the guard chooses steps on: with fewer
#: (36 training sequences or fewer) one sequence moves a copy's score by
#: more than 10 points, and on ArrowHead's quarter of 9 no fit that kept
#: steps gained test accuracy (docs/memory.md, "Modules of different sizes")
_MIN_GUARD_HELD = 10
#: ``guard_splits='auto'``: quarters held out in turn until about this many
#: sequences are scored (at most the four quarters of the sequences)
_GUARD_ROWS = 100
#: the most sequences of a batch of the projection's forward passes: on
#: PLAID (537 sequences of 100 to 1344 steps, one thread) a forward and
#: backward pass over all of them, batched by decreasing length, takes 0.77 s
#: in batches of 64 against 1.5 s in batches of 200 for the multi-scale LMN,
#: 0.31 s against 0.42 s for the LMN (0.65 s in batches of 200 in the data's
#: order); ``docs/memory.md``, "The projection made cheaper"
_BATCH_SIZE = 64


def ridge_held_out_error(F, Y, folds, alpha, weight=None) -> torch.Tensor:
    """Mean over ``folds`` of the held-out squared error of ridge
    regression of ``Y`` on the standardized ``F``, with an intercept, solved
    in closed form on each fold's training rows (differentiable in ``F``).

    Parameters
    ----------
    F : Tensor of shape (n, d)
        Features (standardized over all ``n`` rows before the folds).
    Y : Tensor of shape (n, k)
        Targets (one-hot rows for classes).
    folds : list of (Tensor, Tensor)
        Index tensors of each fold's training rows and held-out rows.
    alpha : float
        The ridge penalty (``alpha * ||W||^2``; the intercept is free).
    weight : Tensor of shape (n,) or None, default=None
        Weights of the rows in the fits and in the held-out means.

    Returns
    -------
    error : Tensor of shape ()
        The mean over folds of the (weighted) mean over held-out rows of the
        squared error summed over the ``k`` targets.

    Examples
    --------
    >>> import torch
    >>> F = torch.randn(20, 3, dtype=torch.float64)
    >>> Y = F @ torch.ones(3, 1, dtype=torch.float64)
    >>> folds = [(torch.arange(10, 20), torch.arange(10)),
    ...          (torch.arange(10), torch.arange(10, 20))]
    >>> float(ridge_held_out_error(F, Y, folds, alpha=1e-9)) < 1e-12
    True
    """
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    eye = torch.eye(Z.shape[1], dtype=Z.dtype, device=Z.device)
    total = Z.new_zeros(())
    for fit, held in folds:
        Zf, Yf = Z[fit], Y[fit]
        w = None if weight is None else weight[fit][:, None]
        if w is None:
            z_mean, y_mean = Zf.mean(0), Yf.mean(0)
        else:
            z_mean = (w * Zf).sum(0) / w.sum()
            y_mean = (w * Yf).sum(0) / w.sum()
        Zc = Zf - z_mean
        Zw = Zc if w is None else w * Zc
        W = torch.linalg.solve(Zw.T @ Zc + alpha * eye, Zw.T @ (Yf - y_mean))
        errors = (((Z[held] - z_mean) @ W + y_mean - Y[held]) ** 2).sum(1)
        if weight is None:
            total = total + errors.mean()
        else:
            total = total + (weight[held] * errors).sum() / weight[held].sum()
    return total / len(folds)


def choose_copy(scores, n_held: int) -> int:
    """The index of the copy kept from the held-out ``scores`` of the start
    (first) and the copies: the first that beats the best so far by more
    than one held-out sequence (``1 / n_held``), 0 for the start.

    Examples
    --------
    >>> choose_copy([0.70, 0.72, 0.80, 0.81], n_held=20)
    2
    >>> choose_copy([0.70, 0.74], n_held=20)
    0
    """
    chosen = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[chosen] + 1.0 / n_held + 1e-12:
            chosen = i
    return chosen


class _Batches(list):
    """Batches whose concatenated rows are permuted: ``restore`` (an index
    array) puts them back in the order of the data."""

    restore: np.ndarray


def guard_split_count(guard_splits, n_sequences: int) -> int:
    """How many quarters of ``n_sequences`` the guard holds out in turn.

    Parameters
    ----------
    guard_splits : int or 'auto'
        An int from 1 to 4 is taken as it is; ``'auto'`` takes as many
        quarters as score about :data:`_GUARD_ROWS` sequences (one quarter
        from 397 sequences up, all four up to 132).
    n_sequences : int
        The training sequences.

    Returns
    -------
    n_splits : int
        From 1 to 4.

    Examples
    --------
    >>> guard_split_count("auto", 36), guard_split_count("auto", 200)
    (4, 2)
    >>> guard_split_count("auto", 537), guard_split_count(3, 537)
    (1, 3)
    """
    if isinstance(guard_splits, str) and guard_splits == "auto":
        n_held = max(int(np.ceil(_GUARD_FRACTION * n_sequences)), 1)
        return int(min(_N_QUARTERS, -(-_GUARD_ROWS // n_held)))
    if (isinstance(guard_splits, str | bool | np.bool_)
            or not isinstance(guard_splits, int | np.integer)
            or not 1 <= guard_splits <= _N_QUARTERS):
        raise ValueError(
            f"guard_splits must be an int from 1 to {_N_QUARTERS} or 'auto', "
            f"got {guard_splits!r}"
        )
    return int(guard_splits)


def _lengths(dataset) -> np.ndarray | None:
    """The lengths of the sequences of a ``SequenceDataset`` or of a
    ``Subset`` of one, in order (None for other datasets)."""
    if isinstance(dataset, Subset):
        lengths = _lengths(dataset.dataset)
        return None if lengths is None else lengths[np.asarray(dataset.indices)]
    lengths = getattr(dataset, "lengths", None)
    return None if lengths is None else np.asarray(lengths).reshape(-1)


def _settled(scores, n_held: int, perfect: float) -> bool:
    """Whether :func:`choose_copy` keeps its choice among ``scores``
    whatever the later copies score: the copy it keeps cannot be beaten by
    more than one held-out sequence, since no copy scores above
    ``perfect`` (the score of every held-out sequence right)."""
    kept = scores[choose_copy(scores, n_held)]
    return not perfect > kept + 1.0 / n_held + 1e-12


def _batches(net, datasets) -> _Batches:
    """The batches of every dataset of ``datasets`` (not shuffled), with
    their inputs on the net's device. Each dataset's sequences are taken by
    decreasing length, in batches of at most :data:`_BATCH_SIZE` (and the
    net's batch size), so that a batch pads little and stays small;
    :func:`_pooled` and :func:`_labels_weights` return the rows in the
    datasets' order."""
    out, order, offset = _Batches(), [], 0
    for dataset in datasets:
        lengths = _lengths(dataset)
        rows = np.arange(len(dataset))
        if lengths is not None:
            rows = np.argsort(-lengths, kind="stable")
        order.append(offset + rows)
        offset += len(rows)
        for start in range(0, len(rows), _BATCH_SIZE):
            chunk = Subset(dataset, rows[start:start + _BATCH_SIZE].tolist())
            for batch in net.get_iterator(chunk, training=False):
                x, y = unpack_data(batch)
                out.append((to_tensor(x, device=net.device), y))
    order = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
    out.restore = np.argsort(order, kind="stable")
    return out


def _restore(batches, rows):
    """``rows`` (concatenated over the :class:`_Batches` ``batches``) in the
    data's order."""
    if isinstance(rows, torch.Tensor):
        return rows[torch.as_tensor(batches.restore, device=rows.device)]
    return rows[batches.restore]


def _pooled(module, batches) -> torch.Tensor:
    """The readout's input (pooled features) of every sequence of
    ``batches``, differentiable in the recurrent parameters."""
    out = []
    for x, _ in batches:
        states, _ = module.recurrent(x["X"], lengths=x.get("lengths"))
        out.append(module.features(states, x.get("lengths")))
    return _restore(batches, torch.cat(out).float())


def _labels_weights(batches) -> tuple[np.ndarray, np.ndarray | None]:
    """Class indices and sequence weights (None when unweighted) of
    ``batches``."""
    labels = np.concatenate([np.asarray(y).reshape(-1) for _, y in batches])
    labels = _restore(batches, labels.astype(np.int64))
    weights = [x.get("sample_weight") for x, _ in batches]
    if any(w is None for w in weights):
        return labels, None
    return labels, _restore(batches, torch.cat(weights).detach().cpu().numpy())


def _scoring_weight(weight):
    """``weight``, or None when the weights all vanish (then unweighted)."""
    if weight is not None and not float(np.sum(weight)) > 0:
        return None
    return weight


def _accuracy(pred, labels, weight) -> float:
    """Accuracy, weighted when the weights do not all vanish."""
    return float(np.average(pred == labels, weights=_scoring_weight(weight)))


def _fit_logistic(Z, labels, weight, C) -> LogisticRegression:
    return LogisticRegression(C=C, max_iter=3000).fit(Z, labels, sample_weight=weight)


def _best_C(Z, labels, weight) -> tuple[float, float]:
    """The best mean accuracy (weighted) of a logistic readout of ``Z`` over
    stratified folds (5, fewer when a class has fewer rows; not shuffled)
    among the ``C`` of :data:`_CS`, and its ``C`` (the first best; ``-inf``
    and 1.0 when a class has a single row)."""
    counts = np.bincount(labels)
    k = int(min(5, counts[counts > 0].min()))
    best, chosen = -np.inf, 1.0
    if k < 2:
        return best, chosen
    splits = list(StratifiedKFold(k).split(Z, labels))
    for C in _CS:
        scores = []
        for a, b in splits:
            model = _fit_logistic(
                Z[a], labels[a], None if weight is None else weight[a], C
            )
            scores.append(_accuracy(
                model.predict(Z[b]), labels[b], None if weight is None else weight[b]
            ))
        if np.mean(scores) > best + 1e-9:
            best, chosen = float(np.mean(scores)), C
    return best, chosen


def _cross_validated_splines(F, labels, weight, n_knots=_N_KNOTS) -> tuple:
    """The knots of ``F`` (:func:`quantile_knots`), its hat basis, and the
    best cross-validated accuracy and ``C`` of a logistic readout of the
    hats (:func:`_best_C`)."""
    knots = quantile_knots(F, n_knots)
    H = hat_basis(F, knots)
    best, C = _best_C(H, labels, weight)
    return knots, H, best, C


def choose_splines(F, labels, weight=None, n_knots=_N_KNOTS) -> dict:
    """Cross-validate a logistic readout of the spline basis of the features
    ``F`` against one of the standardized features.

    Each readout takes the ``C`` of :data:`_CS` with the best mean accuracy
    over stratified folds (5, fewer when a class has fewer rows; the same
    folds for both); the splines are the hats (:func:`hat_basis`) of each
    feature at its ``n_knots`` quantiles. They are chosen when their best
    score is above the standardized readout's by more than two training
    sequences' worth (``2 / n``): on a few dozen sequences a difference of
    one or two is the folds' noise (``docs/memory.md``, "The spline
    readout").

    Parameters
    ----------
    F : ndarray of shape (n, d)
        The pooled features of the training sequences.
    labels : ndarray of shape (n,)
        Class indices.
    weight : ndarray of shape (n,) or None, default=None
        Sequence weights (the fits and the scores).
    n_knots : int, default=9
        Knots per feature.

    Returns
    -------
    choice : dict
        ``'splines'`` (bool), ``'scores'`` (the best mean accuracy of the
        ``'linear'`` and ``'splines'`` readouts), ``'knots'`` (d, n_knots)
        and ``'C'`` (the splines' best), and with splines chosen ``'model'``
        (the ``LogisticRegression`` fitted on the hats of all rows).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> F = rng.randn(60, 2)
    >>> labels = (np.abs(F[:, 0]) > 0.7).astype(int)  # no linear boundary
    >>> choice = choose_splines(F, labels)
    >>> choice["splines"], choice["scores"]["splines"] > choice["scores"]["linear"]
    (True, True)
    """
    F = np.asarray(F, dtype=np.float64)
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    linear, _ = _best_C(Z, labels, weight)
    knots, H, splines, C = _cross_validated_splines(F, labels, weight, n_knots)
    choice = {
        "splines": bool(splines > linear + _SPLINE_MARGIN / len(labels) + 1e-9),
        "scores": {"linear": float(linear), "splines": float(splines)},
        "knots": knots,
        "C": C,
    }
    if choice["splines"]:
        choice["model"] = _fit_logistic(H, labels, weight, C)
    return choice


def _logits(model: LogisticRegression) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients and intercepts of the logits of every class (for two
    classes, ``(0, w z + b)``: the same probabilities as the sigmoid)."""
    coef, intercept = model.coef_, model.intercept_
    if coef.shape[0] == 1:
        coef = np.vstack([np.zeros_like(coef), coef])
        intercept = np.concatenate([[0.0], intercept])
    return coef, intercept


@torch.no_grad()
def write_splines_(module, choice: dict) -> None:
    """Make the logistic readout of the spline basis in ``choice``
    (:func:`choose_splines`) the network's: its linear readout's weights
    set to zero, its bias and a :class:`SplineReadout` to the logits."""
    coef, intercept = _logits(choice["model"])
    d = choice["knots"].shape[0]
    weight, bias = ramp_weights(coef, intercept, d)
    readout = module.readout
    readout.weight.zero_()
    readout.bias.copy_(torch.as_tensor(bias, dtype=readout.bias.dtype))
    module.attach_splines_(
        SplineReadout(
            choice["knots"], readout.out_features, weight=weight,
            dtype=readout.weight.dtype,
        )
    )


def _spline_accuracy(F, labels, weight, C, F_held, held_labels, held_weight):
    """Accuracy on ``F_held`` of the logistic readout (penalty ``C``) of the
    spline basis of ``F`` (knots at ``F``'s quantiles)."""
    knots = quantile_knots(F, _N_KNOTS)
    model = _fit_logistic(hat_basis(F, knots), labels, weight, C)
    pred = model.predict(hat_basis(F_held, knots))
    return _accuracy(pred, held_labels, held_weight)


class _Readout:
    """A logistic readout of standardized features, ``C`` chosen by
    stratified cross-validation (weighted accuracy)."""

    def __init__(self, F, labels, weight):
        self.mean, self.std = F.mean(0), F.std(0) + 1e-6
        Z = (F - self.mean) / self.std
        self.score, self.C = _best_C(Z, labels, weight)
        self.model = _fit_logistic(Z, labels, weight, self.C)

    def predict(self, F) -> np.ndarray:
        return self.model.predict((F - self.mean) / self.std)

    @torch.no_grad()
    def write_(self, readout: torch.nn.Linear) -> None:
        """Write the readout into the linear ``readout`` (logits over the
        ``readout.out_features`` classes; the standardization folded in)."""
        coef, intercept = _logits(self.model)
        weight = coef / self.std
        bias = intercept - weight @ self.mean
        readout.weight.copy_(torch.as_tensor(weight, dtype=readout.weight.dtype))
        readout.bias.copy_(torch.as_tensor(bias, dtype=readout.bias.dtype))


class VariableProjection(Callback):
    """Train the recurrent network through the readout that is refitted
    after it, before the first epoch.

    At the beginning of training, the recurrent parameters of
    ``net.module_`` (not the readout) take full-batch Adam steps at
    learning rate ``lr`` on the cross-validated squared error of a ridge
    readout of the one-hot classes from the network's pooled features
    (:func:`ridge_held_out_error`: ``folds`` stratified folds, drawn anew at
    every step; the ridge penalty the start's features predict best with).
    The number of steps is chosen first on a stratified quarter of the
    sequences held out: a start fitted on the other three quarters
    (``guard_start``) takes ``steps`` steps on them, every ``every`` steps a
    copy gets a logistic readout of its standardized features (``C`` chosen
    by stratified cross-validation), and the start (with its own readout)
    and the copies are scored on the held-out quarter; the copy kept is the
    first that beats the best so far by more than one held-out sequence
    (:func:`choose_copy`). None, or a quarter of fewer than 10 sequences
    (36 training sequences or fewer): the network is left as it is. Otherwise the
    network takes that many steps on all the sequences, and its readout
    becomes the logistic readout of all of them, written into the linear
    readout (the standardization folded into its weights).

    For classifiers of one label per sequence (class indices as targets).
    See ``docs/memory.md``, "Variable projection".

    Parameters
    ----------
    steps : int, default=100
        Adam steps of the run that chooses the number kept.
    every : int, default=20
        Steps between two scored copies (a copy is scored after every
        multiple of ``every`` up to ``steps``).
    lr : float, default=1e-3
        Adam's learning rate.
    folds : int, default=5
        Folds of the ridge objective (fewer when a class has fewer
        sequences).
    dataset : SequenceDataset or None, default=None
        The sequences to project on (those the start was fitted on); None:
        the data the net is fitted on.
    guard_start : callable or None, default=None
        ``guard_start(rows)`` returns a network of the same architecture
        started on the sequences ``rows`` of the data only, or None when it
        has none (then the network is left as it is). None: a copy of
        ``net.module_`` judged with refitted readouts only (its own readout
        has seen the held-out quarter).
    random_state : int or None, default=None
        Seed of the held-out quarter and of the folds.
    splines : bool, default=False
        Cross-validate a logistic readout of each pooled feature's
        piecewise-linear splines against one of the standardized features
        (:func:`choose_splines`) on the start's features. Where the splines
        win, the guard scores the start and every copy with a spline
        readout (knots at the quantiles of the copy's features on the three
        quarters, the ``C`` of that comparison) instead of the logistic
        readout of the standardized features, and after the steps a spline
        readout fitted on the features they leave (its ``C`` chosen again
        by cross-validation) is attached to the network
        (:meth:`~sklmn.training.SequenceNet.attach_splines_`; the linear
        readout is then set to zero). Where they lose, the two readouts are
        compared again on the features after the steps (when some are
        kept) and the splines attached if they win there.
    guard_splits : int or 'auto', default=1
        How many quarters are held out in turn (1 to 4): with more than
        one, the sequences are cut into four stratified quarters, a start
        is fitted on the other three for each of the first
        ``guard_splits`` of them, and every copy is scored on the held-out
        sequences of all of them together (their share right; the margin
        one sequence of all of them). ``'auto'``: as many as score about
        a hundred sequences (:func:`guard_split_count`).

    ``dataset`` and ``guard_start`` are released (set to None) once the
    projection has run, so that the fitted net keeps neither.

    Attributes
    ----------
    steps_ : int
        The steps kept (0: the network left as it is).
    held_out_scores_ : list of float
        Held-out accuracy of the guard's start and of every scored copy
        (empty when no choice was made). The guard's run stops once no later
        copy could be kept, when beating the kept one by more than one
        held-out sequence would take more than every held-out sequence
        right: a start that gets all of them right, or all but one, takes
        no step. With several quarters, the accuracy on all their held-out
        sequences together, and every quarter's run scores every copy.
    objective_ : list of float
        The ridge objective at every step of the run on all the sequences
        (empty when none is kept).
    alpha_ : float or None
        The ridge penalty of that run (None when none is kept).
    C_ : float or None
        The ``C`` of the logistic readout written into the network's readout
        (None when none is kept).
    splines_ : bool
        Whether a spline readout was attached.
    splines_scores_ : dict
        The cross-validated accuracies of the ``'linear'`` and
        ``'splines'`` readouts in the comparison that decided (empty when
        none was compared).
    guard_readout_ : {'linear', 'splines'} or None
        The readout the guard scored its copies with (None when no choice
        of the steps was made).
    guard_splits_ : int
        The quarters held out (0 when no choice of the steps was made).

    Examples
    --------
    >>> import torch
    >>> from sklmn._training._projection import VariableProjection
    >>> from sklmn.nn import LMN
    >>> from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
    >>> X = torch.randn(40, 6, 1)
    >>> y = (X[:, :, 0].sum(1) > 0).long()
    >>> data = SequenceDataset(X, torch.full((40,), 6), y)
    >>> module = SequenceNet(LMN(1, 4, 4, memory_matrix="schur"), 2)
    >>> projection = VariableProjection(steps=4, every=2, random_state=0)
    >>> net = make_sequence_net(
    ...     module, problem="multiclass", per_step=False, lr=1e-12,
    ...     max_epochs=1, batch_size=40,
    ...     callbacks=[("projection", projection)]).fit(data)
    >>> projection.steps_ in (0, 2, 4)  # the steps kept
    True
    """

    def __init__(
        self,
        steps=100,
        every=20,
        lr=1e-3,
        folds=5,
        dataset=None,
        guard_start=None,
        random_state=None,
        splines=False,
        guard_splits=1,
    ):
        self.splines = splines
        self.guard_splits = guard_splits
        self.steps = steps
        self.every = every
        self.lr = lr
        self.folds = folds
        self.dataset = dataset
        self.guard_start = guard_start
        self.random_state = random_state

    def __setstate__(self, state):
        # a callback pickled before guard_splits existed held out one quarter
        state = dict(state)
        state.setdefault("guard_splits", 1)
        self.__dict__.update(state)

    def _check_params(self) -> None:
        check_positive_int("steps", self.steps)
        check_positive_int("every", self.every)
        check_positive_int("folds", self.folds)
        if not isinstance(self.splines, bool | np.bool_):
            raise ValueError(f"splines must be a bool, got {self.splines!r}")
        if self.folds < 2:
            raise ValueError(f"folds must be at least 2, got {self.folds}")
        guard_split_count(self.guard_splits, 1)  # raises on a bad value
        if not (isinstance(self.lr, int | float) and np.isfinite(self.lr)
                and self.lr > 0):
            raise ValueError(f"lr must be a positive float, got {self.lr!r}")

    def _run(self, module, batches, steps, seed, score=None, stop=None) -> tuple:
        """``steps`` steps on ``batches``; with ``score`` (called on the
        module and the step), its value at the start and at every
        ``every``-th step, until ``stop`` (called on the scores so far)
        says the rest cannot change the choice."""
        scores = [] if score is None else [score(module, 0)]
        if stop is not None and stop(scores):
            return None, [], scores
        labels, weight = _labels_weights(batches)
        device = next(module.parameters()).device
        Y = torch.nn.functional.one_hot(torch.as_tensor(labels)).float().to(device)
        w = None if weight is None else torch.as_tensor(weight).float().to(device)
        counts = np.bincount(labels)
        k = int(min(self.folds, counts[counts > 0].min()))
        rng = np.random.default_rng(seed)

        def draw():
            split = StratifiedKFold(
                k, shuffle=True, random_state=int(rng.integers(2**31))
            ).split(labels, labels)
            return [(torch.as_tensor(a, device=device),
                     torch.as_tensor(b, device=device)) for a, b in split]

        with torch.no_grad():
            F0 = _pooled(module, batches)
            fixed = [draw() for _ in range(_ALPHA_DRAWS)]
            errors = [
                np.mean([float(ridge_held_out_error(F0, Y, f, a, w)) for f in fixed])
                for a in _ALPHAS
            ]
        alpha = _ALPHAS[int(np.argmin(errors))]
        params = [p for p in module.recurrent.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(params, lr=self.lr)
        objective = []
        for step in range(1, steps + 1):
            optimizer.zero_grad()
            loss = ridge_held_out_error(_pooled(module, batches), Y, draw(), alpha, w)
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"variable projection: the objective is "
                    f"{float(loss.detach())} at step {step}"
                )
            loss.backward()
            optimizer.step()
            objective.append(float(loss.detach()))
            if score is not None and step % self.every == 0:
                scores.append(score(module, step))
                if stop is not None and stop(scores):
                    break
        return alpha, objective, scores

    @staticmethod
    def _features(module, batches) -> np.ndarray:
        with torch.no_grad():
            return _pooled(module, batches).double().cpu().numpy()

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        try:
            self._check_params()
            self.steps_, self.objective_, self.alpha_, self.C_ = 0, [], None, None
            self.held_out_scores_, self.splines_, self.splines_scores_ = [], False, {}
            self.guard_readout_, self.guard_splits_ = None, 0
            # the sequences, or None when a class has fewer than two of them
            found = self._sequences(net, X)
            if found is not None:
                start = None  # the readouts compared on the start's features
                if self.splines:
                    start = choose_splines(
                        self._features(net.module_, found[1]), *found[2:]
                    )
                self._project(net, *found, start=start)
                if start is not None:
                    self._attach_splines(net, found[1], *found[2:], start)
        finally:
            # the data and the guard's start are not kept with the net
            self.dataset = self.guard_start = None

    def _sequences(self, net, X):
        """``(dataset, batches, labels, weights)`` of the sequences to
        project on, or None when a class has fewer than two of them."""
        n_classes = net.module_.readout.out_features
        dataset = X if self.dataset is None else self.dataset
        batches = _batches(net, [dataset])
        labels, weights = _labels_weights(batches)
        counts = np.bincount(labels, minlength=n_classes)
        if counts.size != n_classes or counts.min() < 2:
            return None
        return dataset, batches, labels, weights

    def _attach_splines(self, net, batches, labels, weights, start) -> None:
        """Attach the spline readout (the optimizer then rebuilt over its
        weights) where ``start`` (:func:`choose_splines` on the start's
        features) chose it, fitted on the features after the steps (its
        ``C`` chosen again by cross-validation on them); elsewhere compare
        the two readouts again on those features, unless no step was kept,
        and attach it if it wins."""
        module = net.module_
        choice = start  # no step kept: the start's features are the network's
        if self.steps_:
            F = self._features(module, batches)
            if start["splines"]:
                knots, H, _, C = _cross_validated_splines(F, labels, weights)
                model = _fit_logistic(H, labels, weights, C)
                choice = dict(start, knots=knots, C=C, model=model)
            else:
                choice = choose_splines(F, labels, weights)
        self.splines_scores_ = choice["scores"]
        if choice["splines"]:
            write_splines_(module, choice)
            self.splines_ = True
            net.initialize_optimizer()

    def _splits(self, labels, seed) -> list:
        """The ``(fit_rows, held_rows)`` of the guard: one stratified quarter
        held out, or with several splits the first ``guard_splits`` of the
        four stratified quarters, each held out in turn (``[]``: too few
        sequences for every class on both sides, or a quarter of fewer than
        ``_MIN_GUARD_HELD`` sequences)."""
        counts = np.bincount(labels)
        n_held = int(np.ceil(_GUARD_FRACTION * len(labels)))
        if min(n_held, len(labels) - n_held) < counts.size:
            return []  # too few sequences for every class on both sides
        if n_held < _MIN_GUARD_HELD:
            return []  # too few to tell the copies apart: the start is kept
        n_splits = guard_split_count(self.guard_splits, len(labels))
        rows = np.arange(len(labels))
        if n_splits == 1 or counts.max() < _N_QUARTERS:  # no four quarters
            fit_rows, held_rows = train_test_split(
                rows, test_size=_GUARD_FRACTION, stratify=labels,
                random_state=seed % 2**31,
            )
            splits = [(fit_rows, held_rows)]
        else:
            quarters = StratifiedKFold(
                _N_QUARTERS, shuffle=True, random_state=seed % 2**31
            )
            with warnings.catch_warnings():
                # a class of fewer than four sequences is missing from a quarter
                warnings.simplefilter("ignore", UserWarning)
                splits = list(quarters.split(rows, labels))[:n_splits]
        out = []
        for fit_rows, held_rows in splits:
            fit_counts = np.bincount(labels[fit_rows], minlength=counts.size)
            if fit_counts.min() < 2:
                return []  # the guard's objective needs two folds of every class
            out.append((np.sort(fit_rows), np.sort(held_rows)))
        return out

    def _project(self, net, dataset, everything, labels, weights, start) -> None:
        module = net.module_
        seed = self.random_state
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        splits = self._splits(labels, seed)
        # the readout the fit ends with where the start chose the splines
        spline_C = None if start is None or not start["splines"] else start["C"]
        runs = []
        for i, (fit_rows, held_rows) in enumerate(splits):
            run = self._guard_scores(
                net, dataset, fit_rows, held_rows, (seed + i) % 2**31, spline_C,
                settle=len(splits) == 1,
            )
            if run is None:
                return
            runs.append(run)
        if not runs:
            return
        self.guard_readout_ = "linear" if spline_C is None else "splines"
        self.guard_splits_ = len(runs)
        # the held-out sequences of every split pooled: each copy's share
        # right of all of them (weighted as the scores are)
        # (several quarters' runs all score every copy: no early stop)
        n_held = sum(n for _, n, _ in runs)
        scores = runs[0][0] if len(runs) == 1 else [
            float(v) for v in np.average(
                [run[0] for run in runs], axis=0, weights=[m for _, _, m in runs]
            )
        ]
        self.held_out_scores_ = scores
        chosen = choose_copy(scores, n_held)
        if chosen == 0:
            return
        self.steps_ = chosen * self.every
        self.alpha_, self.objective_, _ = self._run(
            module, everything, self.steps_, seed
        )
        readout = _Readout(self._features(module, everything), labels, weights)
        readout.write_(module.readout)
        self.C_ = readout.C

    def _guard_scores(
        self, net, dataset, fit_rows, held_rows, seed, spline_C, settle
    ):
        """The held-out accuracies of the guard's start (fitted on
        ``fit_rows``) and of its copies every ``every`` steps on those rows,
        with the number of held-out sequences and their total weight; None
        when no start can be fitted. With ``settle``, the run stops once
        the choice among the scores cannot change."""
        module = net.module_
        own = self.guard_start is not None  # a start of the three quarters
        guard = self.guard_start(fit_rows) if own else copy.deepcopy(module)
        if guard is None:
            return None
        guard.to(next(module.parameters()).device)
        if _mode_gains(module) and not _mode_gains(guard):
            normalize_mode_inputs_(guard)  # trained as the network is
        fit_batches = _batches(net, [Subset(dataset, fit_rows.tolist())])
        held_batches = _batches(net, [Subset(dataset, held_rows.tolist())])
        fit_labels, fit_weight = _labels_weights(fit_batches)
        held_labels, held_weight = _labels_weights(held_batches)

        def score(candidate, step):
            if spline_C is not None:
                return _spline_accuracy(
                    self._features(candidate, fit_batches), fit_labels, fit_weight,
                    spline_C, self._features(candidate, held_batches),
                    held_labels, held_weight,
                )
            if own and step == 0:  # the start, with its own readout
                with torch.no_grad():
                    logits = _restore(held_batches, torch.cat([
                        candidate(x["X"], x.get("lengths")) for x, _ in held_batches
                    ]))
                pred = logits.argmax(1).cpu().numpy()
            else:
                readout = _Readout(
                    self._features(candidate, fit_batches), fit_labels, fit_weight
                )
                pred = readout.predict(self._features(candidate, held_batches))
            return _accuracy(pred, held_labels, held_weight)

        # no copy scores above every held-out sequence right: once the kept
        # copy cannot be beaten by more than one, the rest are not run
        perfect = _accuracy(held_labels, held_labels, held_weight)
        _, _, scores = self._run(
            guard, fit_batches, self.steps, seed, score,
            stop=(lambda scores: _settled(scores, len(held_labels), perfect))
            if settle else None,
        )
        del guard
        weight = _scoring_weight(held_weight)
        mass = float(len(held_labels) if weight is None else np.sum(weight))
        return [float(v) for v in scores], len(held_labels), mass
