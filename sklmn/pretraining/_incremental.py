"""Incremental training of the multi-scale LMN.

Carta, Sperduti & Bacciu (2021), "Encoding-based memory modules for recurrent
neural networks", Alg. 2, §4.4; Carta, Sperduti & Bacciu (2020), "Incremental
training of a recurrent neural network exploiting a multi-scale dynamic
memory", §4.1, §5.3 (cited below as 2021 and 2020)."""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from skorch.callbacks import Callback
from torch import Tensor, nn

from .._training import FitContext, TrainingConverged, ctc_terms
from .._training._loss import rows_loss, valid_weights
from ..utils._compat import Interval, StrOptions
from ..utils._doc_link import _DocLinkMixin
from ._common import (
    fit_laes,
    make_laes,
    module_sequences,
    output_residual,
    padded_sequences,
    readout_targets,
    reverse_valid,
    ridge_readout,
    rows,
    subsample_clock,
    valid_mask,
)

__all__ = ["IncrementalTraining", "ModuleGrowth", "grow_multiscale_"]


def _ctc_loss_and_residual(
    out_rows: np.ndarray,
    y_encoded: np.ndarray,
    lengths: np.ndarray,
    weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Mean CTC loss of per-step output rows (weighted by ``weight``, one
    weight per sequence, when given) and its residual.

    ``out_rows`` are the outputs at the valid steps of all sequences in
    order; the residual (one row per valid step) is the negative gradient
    of each sequence's CTC loss with respect to its outputs, ``γ - softmax``
    (the posterior occupancy of the outputs by the alignments of the label
    sequence, minus the network's posteriors; Graves et al. 2006 §4.2), the
    counterpart of ``onehot - softmax`` for the cross-entropy.
    """
    lengths = np.asarray(lengths)
    T = int(lengths.max())
    mask = valid_mask(lengths, T)
    padded = np.zeros((len(lengths), T, out_rows.shape[1]))
    padded[mask] = out_rows
    with torch.enable_grad():
        outputs = torch.tensor(padded, dtype=torch.float64, requires_grad=True)
        terms = ctc_terms(
            outputs,
            torch.as_tensor(np.asarray(y_encoded), dtype=torch.int64),
            torch.as_tensor(lengths, dtype=torch.int64),
        )
        (grad,) = torch.autograd.grad(terms.sum(), outputs)
    terms = terms.detach().numpy()
    loss = terms.mean() if weight is None else np.average(terms, weights=weight)
    return float(loss), -grad.numpy()[mask]


def _ctc_loss(out_rows: np.ndarray, y_encoded: np.ndarray, lengths, weight) -> float:
    return _ctc_loss_and_residual(out_rows, y_encoded, lengths, weight)[0]


@torch.no_grad()
def grow_multiscale_(
    module: nn.Module,
    X: Tensor,
    lengths: Tensor,
    y_encoded: np.ndarray,
    *,
    problem: str,
    per_step: bool,
    n_components: int | None = None,
    memory_size: int | None = None,
    alpha: float = 1e-6,
    solver: str = "auto",
    fit_readout: bool = True,
    readout: str = "residual",
    sample_weight: np.ndarray | None = None,
    random_state=None,
) -> dict:
    r"""Add the next slower memory module to a ``SequenceNet`` (2021 Alg. 2).

    With ``g`` modules, module ``g`` (0-based, period ``2**g``) is appended
    (:meth:`~sklmn.nn.MultiScaleLMN.grow_`, all new weights zero) and

    1. its encoder block ``W_hm = A`` and diagonal block ``W_mm = B`` come from
       a LAES (``p = N``, the new module's memory units) fit on the current
       model's hidden sequences subsampled with stride ``2**g`` at the new
       module's clock phase (steps ``0, 2**g, 2 * 2**g, ...``); if the
       subsampled data have fewer than ``N`` directions the remaining rows
       stay zero;
    2. the readout (when it reads the memory) gains zero columns for the new
       module, so the network's outputs are unchanged so far (the hidden
       layer does not read the new module: its ``W_mh`` columns are zero);
    3. with ``fit_readout``, the readout is fitted by ridge least squares
       (the pseudoinverse for ``alpha = 0``), in one of two ways:

       - ``readout='residual'``: only the new readout columns (and a bias
         correction) are fitted, on the new module's states, to the
         residual, i.e. the negative gradient of the loss with respect to
         the outputs: ``y - ŷ`` for the squared error, ``onehot(y) -
         softmax(ŷ)`` for the cross-entropy, ``y - sigmoid(ŷ)`` for
         multilabel targets, ``γ - softmax(ŷ)`` per step for a CTC target
         (``γ`` the posterior occupancy of the outputs by the alignments of
         the label sequence, Graves et al. 2006). The trained columns are
         kept; for the squared error this can only lower the training loss.
       - ``readout='all_modules'``: the whole memory readout (all columns and
         the bias) is replaced by the fit of the targets themselves (class
         indicators, 0/1 labels or values) on the states of all the modules
         (2020 §4.1). The columns learned so far are discarded; with a
         cross-entropy loss the least-squares outputs are not calibrated
         logits, so the training loss may rise (``loss_after`` says).

    A bidirectional network grows both directions together: the reverse
    direction's new module gets the LAES of its own hidden sequences read in
    its own time order (each valid sequence reversed, then subsampled at the
    reverse clock's phase 0), and the readout columns of both new modules
    are fitted jointly.

    The Parameters are replaced: rebuild the optimizer afterwards.

    Parameters
    ----------
    module : SequenceNet
        Network with a :class:`~sklmn.nn.MultiScaleLMN` ``.recurrent``
        (unidirectional or bidirectional) and a linear ``.readout``;
        modified in place.
    X : Tensor of shape (n, T, d)
        Zero-padded training sequences.
    lengths : Tensor of shape (n,)
        Their lengths.
    y_encoded : ndarray
        Encoded targets (class indices, indicators or values).
    problem : {'multiclass', 'multilabel', 'continuous', 'ctc'}
        Kind of target (``'ctc'``: encoded label sequences, per-step
        outputs; only ``readout='residual'``).
    per_step : bool
        Per-time-step targets.
    n_components : int, default=None
        LAES components of the new module (None: its memory units).
    memory_size : int, default=None
        Memory units ``N`` of the new module (None: those of the last one).
    alpha : float, default=1e-6
        Relative ridge penalty of the readout fit.
    solver : str, default='auto'
        LAES solver; ``'auto'`` picks the cheaper of ``'gram'`` and
        ``'matrix_free'`` by a cost model.
    fit_readout : bool, default=True
        Fit the readout (else the new columns stay zero).
    readout : {'residual', 'all_modules'}, default='residual'
        What the readout fit does (see step 3 above): fit the new columns to
        the residual, or refit the whole memory readout to the targets on
        all modules' states (2020 §4.1).
    sample_weight : ndarray of shape (n,) or (n, T), default=None
        Weights of the training loss's terms (one per sequence, or per time
        step for per-step targets): the least-squares fit weights its rows
        with them and ``loss_before`` / ``loss_after`` are weighted means, as
        the estimator's loss. The LAES of the new module does not use them
        (it encodes the hidden sequences, not the targets).
    random_state : int, RandomState instance or None, default=None
        Seeds the ``'matrix_free'`` LAES solver of the new module (one seed
        drawn per direction); the other solvers are deterministic.

    Returns
    -------
    info : dict
        ``module`` (index of the new module), ``period``, ``n_components``
        (LAES components used), ``loss_before`` and ``loss_after`` (training
        loss before and after the readout fit; equal when the readout does
        not read the memory or ``fit_readout=False``).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklmn.training import SequenceNet
    >>> from sklmn.nn import MultiScaleLMN
    >>> from sklmn.pretraining import grow_multiscale_
    >>> _ = torch.manual_seed(0)
    >>> net = SequenceNet(MultiScaleLMN(1, 4, 2, 1), 1)
    >>> X, lengths = torch.randn(20, 8, 1), torch.full((20,), 8)
    >>> info = grow_multiscale_(net, X, lengths, np.random.randn(20, 1),
    ...                         problem="continuous", per_step=False)
    >>> net.recurrent.n_modules, info["period"]
    (2, 2)
    >>> info["loss_after"] <= info["loss_before"]
    True
    """
    if readout not in ("residual", "all_modules"):
        raise ValueError(
            f"readout must be 'residual' or 'all_modules', got {readout!r}"
        )
    ctc = problem == "ctc"
    if ctc and readout == "all_modules":
        raise ValueError(
            "readout='all_modules' fits the readout to the targets, which label "
            "sequences of a CTC target do not provide; use readout='residual'."
        )
    if ctc:
        per_step = True  # the CTC outputs are per step
    rec = module.recurrent
    if not (
        callable(getattr(rec, "grow_", None))
        and callable(getattr(rec, "init_module_from_laes_", None))
    ):
        raise ValueError(
            f"incremental training needs a MultiScaleLMN, got {type(rec).__name__}"
        )
    if module.readout.in_features != rec.output_size:
        raise ValueError(
            "incremental training reshapes a readout of the recurrent output "
            f"alone ({rec.output_size} features, pooling='last'), got a readout "
            f"of {module.readout.in_features} features (pooling="
            f"{getattr(module, 'pooling', 'last')!r})"
        )
    readout_mode = readout
    was_training = module.training
    module.eval()
    like = next(rec.parameters())
    X = X.to(device=like.device, dtype=like.dtype)
    n_out = module.readout.out_features
    lengths_np = lengths.cpu().numpy()
    if sample_weight is not None:
        shape = np.shape(sample_weight)
        if len(shape) not in (1, 2) or shape[0] != len(lengths_np):
            raise ValueError(
                f"sample_weight must have shape (n,) or (n, T) with n = "
                f"{len(lengths_np)} sequences, got shape {shape}"
            )
    w_rows = (
        None
        if sample_weight is None
        # the rows of rows(): the valid steps of the padded sequences
        else valid_weights(sample_weight, lengths_np, X.shape[1], per_step)
    )

    def states(Xb, lb):
        h, m, _ = rec.forward_states(Xb, lb)
        return h, m

    h_seq, m_seq = module_sequences(states, X, lengths)
    out_rows = (
        rows(m_seq, lengths_np, per_step)
        if rec.output == "memory"
        else rows(h_seq, lengths_np, per_step)
    )
    W_old = module.readout.weight.detach().cpu().double().numpy()
    b_old = module.readout.bias.detach().cpu().double().numpy()
    outputs = out_rows @ W_old.T + b_old
    if ctc:
        targets = None
        loss_before, ctc_residual = _ctc_loss_and_residual(
            outputs, y_encoded, lengths_np, sample_weight
        )
    else:
        targets = readout_targets(y_encoded, problem, n_out, lengths_np, per_step)
        loss_before = rows_loss(outputs, targets, problem, w_rows)

    g, H = rec.n_modules, rec.hidden_size
    N_m = rec.memory_sizes[-1] if memory_size is None else int(memory_size)
    n_dirs = rec.num_directions
    period = 2**g
    rng = check_random_state(random_state)
    blocks = []
    for j in range(n_dirs):
        # direction j's hidden sequences in the order that direction reads them
        h_j = h_seq[..., j * H : (j + 1) * H]
        if j == 1:
            h_j = reverse_valid(h_j, lengths_np)
        sub, sub_lengths = subsample_clock(h_j, lengths_np, period)
        bound = min(int(sub_lengths.sum()), int(sub_lengths.max()) * H)
        q = min(N_m if n_components is None else int(n_components), N_m, bound)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        laes = make_laes(q, solver, sub_lengths, H, random_state=seed)
        fit_laes(laes, padded_sequences(sub, sub_lengths))
        blocks.append((laes.A_, laes.B_))

    M_old = rec.total_memory_size
    rec.grow_(1, N_m)
    for j, (A, B) in enumerate(blocks):
        # the network maps the LAES to the new module's weights
        rec.init_module_from_laes_(g, A, B, direction=j)
    # memory output [forward modules, reverse modules]: direction j's old
    # columns and its new module's columns in the grown output
    M_new = M_old + N_m
    new_cols = torch.cat(
        [torch.arange(j * M_new + M_old, (j + 1) * M_new) for j in range(n_dirs)]
    )
    loss_after = loss_before
    if rec.output == "memory":
        old = module.readout
        readout = nn.Linear(
            rec.output_size, n_out, device=old.weight.device, dtype=old.weight.dtype
        )
        readout.weight.zero_()
        for j in range(n_dirs):
            readout.weight[:, j * M_new : j * M_new + M_old] = old.weight[
                :, j * M_old : (j + 1) * M_old
            ]
        readout.bias.copy_(old.bias)
        module.readout = readout
        if fit_readout:
            (m_new,) = module_sequences(
                lambda Xb, lb: (rec.forward_states(Xb, lb)[1],), X, lengths
            )
            like = dict(dtype=readout.weight.dtype, device=readout.weight.device)
            if readout_mode == "all_modules":
                # 2020 §4.1: the targets from the states of the whole memory
                feats = rows(m_new, lengths_np, per_step)
                W_all, b_all = ridge_readout(
                    feats, targets, alpha, sample_weight=w_rows
                )
                readout.weight.copy_(torch.as_tensor(W_all, **like))
                readout.bias.copy_(torch.as_tensor(b_all, **like))
                loss_after = rows_loss(
                    feats @ W_all.T + b_all, targets, problem, w_rows
                )
            else:
                feats = rows(m_new[..., new_cols.numpy()], lengths_np, per_step)
                if ctc:
                    residual = ctc_residual
                else:
                    residual = output_residual(outputs, targets, problem)
                W_new, b_new = ridge_readout(
                    feats, residual, alpha, sample_weight=w_rows
                )
                cols = new_cols.to(readout.weight.device)
                readout.weight[:, cols] = torch.as_tensor(W_new, **like)
                readout.bias.add_(torch.as_tensor(b_new, **like))
                new_outputs = outputs + feats @ W_new.T + b_new
                if ctc:
                    loss_after = _ctc_loss(
                        new_outputs, y_encoded, lengths_np, sample_weight
                    )
                else:
                    loss_after = rows_loss(new_outputs, targets, problem, w_rows)
    module.train(was_training)
    return {
        "module": g,
        "period": period,
        "n_components": q,
        "loss_before": loss_before,
        "loss_after": loss_after,
    }


class IncrementalTraining(_DocLinkMixin, BaseEstimator):
    r"""Incremental training of a multi-scale LMN (2021 Alg. 2, 2020 §4.1).

    Plugged into ``MultiScaleLMNClassifier/Regressor(incremental=...)``:
    training starts with one memory module; at the end of every stage (after
    ``epochs_per_module`` epochs, or earlier when the monitored score has not
    improved for ``patience`` epochs) the next slower module is added by
    :func:`grow_multiscale_` (LAES on the subsampled hidden states, readout
    by least squares, see ``readout``), the optimizer is rebuilt for the new
    parameters and the whole model is fine-tuned, until the estimator's
    ``n_modules`` (the maximum) is reached. A bidirectional multi-scale LMN
    (``bidirectional=True``) grows both directions together.

    The monitored score is the one the estimator's stopping rule monitors,
    as a score (higher is better): the negative validation loss with
    ``early_stopping=True`` (recommended, as in 2020 §5.3) and
    ``validation_metric='loss'``, the validation score with
    ``validation_metric='score'``, else the negative training loss.

    Two ways to end growth (``growth``):

    - ``'all'`` (the papers' procedure, 2021 Alg. 2 and 2020 §4.1: "until
      all the memory modules have been added"): every module is added on
      schedule; only the estimator's ordinary stopping rule ends training,
      counted across the stages: more than ``n_iter_no_change`` epochs
      without an improvement of the best monitored score of the whole run
      by more than ``tol`` (so training may end before the last module, as
      in 2020 §5.3, where it stopped at 8 of 9 modules). Training ends with
      the best model of the whole run (its number of modules included).
    - ``'adaptive'``: when a stage's best score does not beat the best score
      of the previous stages by more than ``min_improvement``, growth stops,
      the model of the best stage is restored (with its number of modules)
      and training ends. The estimator's stopping rule restarts at every new
      module; keep ``n_iter_no_change`` longer than a stage.

    After each growth the optimizer is rebuilt with a fresh state (the
    Parameters are new tensors): Adam's first steps then move every weight by
    about the learning rate, so a moderate ``learning_rate_init`` (e.g.
    0.003) keeps the transferred model from being jolted. Growth happens at
    most once per epoch, on the training sequences the estimator trains on
    (without its validation part).

    Parameters
    ----------
    epochs_per_module : int, default=10
        Epochs of every stage before the next module is added.
    patience : int or None, default=None
        Also add the next module when the monitored score has not improved
        for this many epochs of the stage (None: on the schedule only).
    growth : {'all', 'adaptive'}, default='all'
        ``'all'``: add every module, end by the ordinary stopping rule only
        (the papers' procedure); ``'adaptive'``: stop growing at the first
        stage that does not improve by ``min_improvement``.
    min_improvement : float, default=0.0
        With ``growth='adaptive'``: improvement of the best monitored score
        a new module must bring to be kept (ignored with ``'all'``).
    n_components : int or None, default=None
        LAES components of every new module (None: the module's memory
        units; at most those).
    alpha : float, default=1e-6
        Relative ridge penalty of the least-squares readout fit (0: the
        pseudoinverse of 2020 §4.1).
    readout : {'residual', 'all_modules'}, default='residual'
        Readout fit after each growth (see :func:`grow_multiscale_`):
        ``'residual'`` fits only the new module's readout columns to the
        residual of the current outputs (keeps what the readout learned);
        ``'all_modules'`` refits the whole memory readout to the targets on
        the states of all the modules (2020 §4.1).
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        LAES solver; ``'auto'`` picks the cheaper of ``'gram'`` and
        ``'matrix_free'`` by a cost model. The ``'matrix_free'`` solver is
        seeded from the estimator's ``random_state``.

    See Also
    --------
    grow_multiscale_ : One growth step.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import MultiScaleLMNRegressor
    >>> from sklmn.pretraining import IncrementalTraining
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 8, 1)
    >>> y = X[:, 0, 0]
    >>> reg = MultiScaleLMNRegressor(
    ...     hidden_size=8, memory_size=4, n_modules=3, max_iter=6,
    ...     early_stopping=False, n_iter_no_change=10,
    ...     incremental=IncrementalTraining(epochs_per_module=2),
    ...     random_state=0).fit(X, y)
    >>> [(s["n_modules"], s["epoch_added"]) for s in reg.module_history_]
    [(1, 0), (2, 2), (3, 4)]

    The readout of 2020 §4.1 (least squares on all modules' states), and the
    adaptive rule that stops growing at the first stage that brings no
    improvement:

    >>> inc = IncrementalTraining(epochs_per_module=2, growth="adaptive",
    ...                           readout="all_modules", alpha=0.0)
    >>> IncrementalTraining(growth="never").make_callback(None, max_modules=3)
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: The 'growth' parameter
    of IncrementalTraining must be a str among {...}. Got 'never' instead.
    """

    _parameter_constraints: dict = {
        "epochs_per_module": [Interval(Integral, 1, None, closed="left")],
        "patience": [Interval(Integral, 1, None, closed="left"), None],
        "growth": [StrOptions({"all", "adaptive"})],
        "min_improvement": [Real],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "readout": [StrOptions({"residual", "all_modules"})],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
    }

    def __init__(
        self,
        epochs_per_module=10,
        *,
        patience=None,
        growth="all",
        min_improvement=0.0,
        n_components=None,
        alpha=1e-6,
        readout="residual",
        solver="auto",
    ):
        self.epochs_per_module = epochs_per_module
        self.patience = patience
        self.growth = growth
        self.min_improvement = min_improvement
        self.n_components = n_components
        self.alpha = alpha
        self.readout = readout
        self.solver = solver

    def make_callback(
        self, context: FitContext, *, max_modules: int, module_sizes=None
    ):
        """The skorch callback that grows the network during training.

        Parameters
        ----------
        context : FitContext
            The fit: kind of target (``problem``, ``per_step``) and the
            estimator's stopping rule (``monitor``, ``tol``,
            ``n_iter_no_change``), which ``growth='all'`` counts across the
            stages.
        max_modules : int
            Maximum number of modules.
        module_sizes : tuple of int, optional
            Memory units of every module (``max_modules`` of them), so that
            growth adds module ``k`` with ``module_sizes[k]`` units (None:
            every new module as large as the last one).

        Returns
        -------
        callback : skorch.callbacks.Callback
        """
        self._validate_params()
        if context.problem == "ctc" and self.readout == "all_modules":
            raise ValueError(
                "IncrementalTraining(readout='all_modules') fits the readout to "
                "the targets, which a CTC target (label sequences) does not "
                "provide; use readout='residual' with target='ctc'."
            )
        return ModuleGrowth(
            self, context, max_modules=max_modules, module_sizes=module_sizes
        )


class ModuleGrowth(Callback):
    """skorch callback of :class:`IncrementalTraining` (runs before the
    estimator's stopping rule, after the validation score).

    Attributes
    ----------
    history_ : list of dict
        One entry per stage: ``n_modules``, ``epoch_added`` (epochs trained
        before the stage), ``best_score`` and ``best_epoch`` (monitored score,
        1-based epoch), ``loss_before_fit`` / ``loss_after_fit`` (training
        loss right after growth, before and after the least-squares readout
        fit; None for the first stage) and ``kept`` (whether the final model
        has at least this many modules).
    stopped_epoch_ : int or None
        With ``growth='all'``: the epoch at which the stopping rule, counted
        across the stages, ended training (None: it did not).
    """

    #: callbacks pickled before modules of different sizes: as the last one
    module_sizes = None

    def __init__(
        self,
        schedule: IncrementalTraining,
        context: FitContext,
        *,
        max_modules,
        module_sizes=None,
    ):
        self.schedule = schedule
        # the settings only: the context's training data must not be kept
        # (the callback is pickled with the fitted model)
        self.problem = context.problem
        self.per_step = context.per_step
        self.monitor = context.monitor
        self.tol = float(context.tol)
        self.n_iter_no_change = int(context.n_iter_no_change)
        self.max_modules = int(max_modules)
        self.module_sizes = None if module_sizes is None else tuple(module_sizes)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        g = net.module_.recurrent.n_modules
        self.history_ = [self._stage(g, 0)]
        self.growing_ = g < self.max_modules
        # the LAES of every growth is seeded from the fit's torch seed (the
        # estimator's random_state), not numpy's global state: two fits of
        # a seeded estimator grow the same modules
        self._rng = np.random.RandomState(torch.initial_seed() % 2**32)
        self._best_modules = {}
        self._since_best = 0
        # the ordinary stopping rule counted across the stages (growth='all')
        self._run_best = -np.inf
        self._since_run_best = 0
        self.stopped_epoch_ = None

    @staticmethod
    def _stage(g: int, epoch: int, info: dict | None = None) -> dict:
        return {
            "n_modules": g,
            "epoch_added": epoch,
            "best_score": -np.inf,
            "best_epoch": None,
            "loss_before_fit": None if info is None else info["loss_before"],
            "loss_after_fit": None if info is None else info["loss_after"],
            "kept": True,
        }

    def _best_previous(self) -> tuple[float, int | None]:
        scores = [s["best_score"] for s in self.history_[:-1]]
        if not scores:
            return -np.inf, None
        i = int(np.argmax(scores))
        return scores[i], i

    def _restore_best(self, net, margin: float | None = None) -> bool:
        """Restore the best earlier stage if the current one does not beat it
        by more than ``margin`` (default: ``min_improvement``)."""
        if margin is None:
            margin = self.schedule.min_improvement
        best, i = self._best_previous()
        current = self.history_[-1]["best_score"]
        if i is None or current > best + margin:
            return False
        net.module_ = self._best_modules[i]
        net.initialize_optimizer()
        for stage in self.history_[i + 1 :]:
            stage["kept"] = False
        # the stopping rule's saved best parameters have the old shapes
        net.restart_monitoring()
        return True

    def _score(self, net, row) -> float:
        """The quantity the estimator's stopping rule monitors, as a score."""
        if self.monitor == "valid_loss" and "valid_loss" in row:
            return -float(row["valid_loss"])
        if "valid_score" in row:
            return float(row["valid_score"])
        if "valid_loss" in row:
            return -float(row["valid_loss"])
        return -float(row["train_loss"])

    def _run_stop(self, net, score: float, epoch: int) -> bool:
        """Ordinary early stopping over the whole run (``growth='all'``)."""
        if score > self._run_best + self.tol:
            self._since_run_best = 0
        else:
            self._since_run_best += 1
        self._run_best = max(self._run_best, score)
        if self._since_run_best > self.n_iter_no_change:
            self.stopped_epoch_ = epoch
            return True
        return False

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        row = net.history[-1]
        epoch = len(net.history)
        score = self._score(net, row)
        stage = self.history_[-1]
        if score > stage["best_score"]:
            stage["best_score"], stage["best_epoch"] = float(score), epoch
            self._best_modules[len(self.history_) - 1] = copy.deepcopy(net.module_)
            self._since_best = 0
        else:
            self._since_best += 1
        adaptive = self.schedule.growth == "adaptive"
        if not adaptive and self._run_stop(net, score, epoch):
            self.growing_ = False
            raise TrainingConverged  # the best model of the run is restored
        if not self.growing_:
            return
        patience = self.schedule.patience
        done = epoch - stage["epoch_added"] >= self.schedule.epochs_per_module or (
            patience is not None and self._since_best >= patience
        )
        if not done:
            return
        if adaptive and self._restore_best(net):
            self.growing_ = False
            raise KeyboardInterrupt  # growth stopped: the best stage is kept
        if net.module_.recurrent.n_modules >= self.max_modules:
            self.growing_ = False
            return
        y = dataset_train.y.numpy()
        weight = getattr(dataset_train, "sample_weight", None)
        g = net.module_.recurrent.n_modules
        sizes = self.module_sizes
        info = grow_multiscale_(
            net.module_,
            dataset_train.X,
            dataset_train.lengths,
            y,
            problem=self.problem,
            per_step=self.per_step,
            n_components=self.schedule.n_components,
            memory_size=None if sizes is None else sizes[g],
            alpha=float(self.schedule.alpha),
            solver=self.schedule.solver,
            readout=self.schedule.readout,
            sample_weight=None if weight is None else weight.numpy(),
            random_state=int(self._rng.randint(np.iinfo(np.int32).max)),
        )
        # the new Parameters need new optimizer state
        net.initialize_optimizer()
        net.restart_monitoring()
        g = net.module_.recurrent.n_modules
        self.history_.append(self._stage(g, epoch, info))
        self._since_best = 0
        self.growing_ = g < self.max_modules

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if len(self.history_) > 1:
            # 'all': the best model of the run, like ordinary early stopping
            self._restore_best(net, None if self.schedule.growth == "adaptive" else 0.0)
        self._best_modules = {}  # do not pickle copies of the model
