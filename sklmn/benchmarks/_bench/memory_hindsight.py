"""Fine-tuning the memory, in hindsight: the test accuracy of every epoch, and
what one optimizer step on each parameter group does to the LAES start.

Usage::

    python -m sklmn.benchmarks bench memory-hindsight curves \\
        --models lmn "lmn:memory_matrix=schur,memory_lr_scale=0.01" \\
        --datasets ArrowHead BasicMotions ItalyPowerDemand --seeds 0 1 \\
        --epochs 150 --out curves.jsonl
    python -m sklmn.benchmarks bench memory-hindsight step \\
        --models "lmn:memory_matrix=schur" lmn --datasets ArrowHead

``curves``: each model (a time-series suite spec, ``name:param=value,...``)
is fitted for ``--epochs`` epochs with no stopping rule; the network is
copied when training begins (the start, after any pretraining) and after
every epoch, and every copy is scored on the test split afterwards. Prints,
per fit, the start's accuracy, the best epoch in hindsight, the accuracy of
the weights the estimator's own rule would keep (the lowest training loss),
the last epoch's, and the loss spikes (epoch loss above twice the minimum
of all earlier ones); ``--out`` appends one JSON line per fit with the
curves.

``step``: from the start, four epochs in which only one parameter group
trains (the others frozen), for each group: the training loss per epoch
shows which group's steps leave the start's basin.

``cv``: the number of epochs chosen by ``--folds``-fold cross-validation
on the training sequences (stratified; each fold's model pretrained on its
own training part, scored after every epoch on the held-out part), the
epoch with the lowest mean held-out log-loss (0: the start); prints the
test accuracy of that epoch of a fit on the whole training split, with the
start's, the best in hindsight and the last.

``ensemble``: a committee of the ``--folds`` fold models of ``cv``, each
kept at the epoch of its own lowest held-out log-loss, their test
probabilities averaged; prints the start (fitted on the whole training
split), the committee of the fold models' starts, the committee, the
best committee of one common epoch in hindsight and the members' mean
test accuracy.

``lbfgs``: second-order fine-tuning of the start. Before the estimator's
first epoch (which then runs at a learning rate of 1e-12), the network is
trained full-batch by L-BFGS with a strong-Wolfe line search (history 20;
``--outer`` rounds of ``--inner`` iterations, every parameter the
estimator trains; with ``--anchor LAMBDA``, the objective adds ``LAMBDA /
2`` times the squared distance of the parameters to the start's), so that
the training loss falls at every accepted step; prints the start's test
accuracy, the best and the last of the rounds, and the training loss at
the start and at the end.

``projection``: the memory trained through a readout solved in closed form
(variable projection, Golub & Pereyra 1973, "The differentiation of
pseudo-inverses and nonlinear least squares problems whose variables
separate"), judged by cross-validation. Before the estimator's first epoch
(which then runs at a learning rate of 1e-12), full-batch Adam
(``--lr``) takes ``--steps`` steps on every trained parameter of the
recurrent network (not the readout); the objective of a step is the mean
held-out squared error of ridge regression of the one-hot classes on the
network's pooled features (standardized with the current means and
deviations), the ridge solved in closed form on ``--folds - 1`` folds and
scored on the last, the folds stratified and drawn anew for every step,
the penalty chosen on the start's features from 0.1, 1, 10, 100 and 1000
(the lowest held-out error over five fixed draws). Every ``--every``
steps the network is copied; each copy gets a new readout, logistic
regression on its standardized features with ``C`` in 0.01, 0.1, 1, 10
chosen by stratified cross-validation (the start, copy 0, keeps the
estimator's own). The number of steps is chosen on a held-out quarter:
the training split is divided 3:1 (stratified), the procedure runs on
the three quarters, and a copy replaces the current choice (the start
first) when its accuracy on the held-out quarter is higher by more than
one held-out sequence's worth; the procedure then runs on the whole
training split and the copy of the chosen step is the final model.
Prints the start's and the final model's test accuracy, the held-out
quarter's accuracy of every copy and the test accuracy of every copy of
the run on the whole split (in hindsight).

Two training variants for ``curves`` and ``cv`` (the prototypes of the
smooth fine-tuning, now the library's ``LinearWarmup`` and
``ModeInputNormalization``): ``--warmup N`` raises every parameter group's
learning rate linearly over the first ``N`` epochs; ``--normalize-input`` holds a Schur
memory's input matrix as ``W_hm = diag(1 - |lambda|) V`` and trains ``V``
(the start unchanged), so that one optimizer step moves each memory
unit's input in proportion to the gain ``1 / (1 - |lambda|)`` of its mode
divided out (the input normalization of Orvieto et al. 2023, with the
moduli of the current memory, not trained through).

``--recon LAMBDA`` (0: off) keeps the memory an autoencoder of the recent
input history during fine-tuning (the LAES objective kept alive, a
semantic anchor where L2-SP anchors the parameters): the training loss
adds ``LAMBDA`` times the mean squared error, divided per target by its
variance, of a linear decoder ``D`` (with bias) that predicts the last
``--recon-lags K`` network inputs ``x_t, ..., x_{t-K+1}`` (zeros before the
start, padded steps left out) from the recurrent module's output sequence:
the memory ``m_t`` of the last layer (all modules of a multi-scale LMN).
``D`` is the least-squares decoder of the start's memory states on the
training sequences, fitted when training begins; it stays fixed, or with
``--recon-decoder joint`` trains with the network (its own Adam at the
net's learning rate). The variance-normalized error is one minus the
decoder's R^2, so ``LAMBDA`` means the same on every set. Validation and
scoring read the classification loss only; the rule that keeps weights
reads the training loss, with the term.

Three regularizers aimed at generalization on small training sets:
``--sam RHO`` (sharpness-aware minimization, Foret et al. 2021, "Sharpness-
aware minimization for efficiently improving generalization"): each step
computes the gradient ``g``, moves the trainable weights to
``w + RHO g / ||g||`` (with ``--sam-adaptive``, ``w + RHO |w|^2 g / ||w g||``,
the scale-invariant variant of Kwon et al. 2021, "ASAM: adaptive
sharpness-aware minimization for scale-invariant learning of deep neural
networks"; with
``--sam-lr-scaled``, ``w + RHO s^2 g / ||s g||``, ``s`` each parameter
group's learning rate over the largest, so that the memory's groups are
perturbed as little as their learning rate scale), computes the
gradient there, puts the weights back and lets the net clip and step with
that second gradient (the loss recorded is the first one, at ``w``);
``--label-smoothing EPS``: the cross-entropy against targets
``(1 - EPS) onehot + EPS / n_classes``; ``--state-noise SIGMA``: while
training, Gaussian noise of standard deviation ``SIGMA`` times each output
unit's standard deviation on the first training batch (the start's) is
added to the recurrent network's output sequence, the memory states the
readout reads (not the states fed back: the recurrence runs in a fused
kernel).

Four augmentations of the training sequences, drawn anew for every
training batch by a forward pre-hook on the net's module while it trains
(validation, scoring and the LAES start, fitted before training begins,
see the sequences as they are; the batch is replaced, never modified in
place), applied in this order: ``--crop F`` (window slicing, Le Guennec,
Malinowski & Tavenard 2016, "Data augmentation for time series
classification using convolutional neural networks"; ``0 < F < 1``): each
sequence is replaced by a contiguous window of ``F`` times its span at a
uniform random start, linearly interpolated back to its own length (the
lengths the batch carries: a padded sequence is resampled within its
valid steps and stays padded); ``--time-warp SIGMA`` (Um et al. 2017,
"Data augmentation of wearable sensor data for Parkinson's disease
monitoring using convolutional neural networks"): each sequence is read
at the cumulative sum of a random speed curve rescaled to its span, the
speed drawn from N(1, SIGMA^2) at six evenly spaced knots of its time and
joined by cubic Hermite pieces with flat tangents, the steps linearly
interpolated; ``--scale S`` (Um et al. 2017): each sequence's features
multiplied by factors drawn from N(1, S^2), one per sequence and feature
(the network's inputs are standardized: the scaling is about each
feature's training mean); ``--jitter SIGMA`` (Um et al. 2017): Gaussian
noise of ``SIGMA`` times each input feature's standard deviation over the
valid steps of the training sequences (the network's inputs, so about
``SIGMA`` with the estimators' ``standardize=True``) added at the valid
steps. The training loss recorded (and the spikes counted on it) is the
augmented batches'; the rule that keeps weights recomputes the training
loss in evaluation mode after each epoch, on the sequences as they are.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import warnings

import numpy as np
import torch
from sklearn.model_selection import (
    StratifiedKFold,
    train_test_split,
)
from skorch.callbacks import Callback
from skorch.dataset import unpack_data
from torch.nn.utils import parametrize

from ..._training._projection import (
    VariableProjection,
    _batches,
    _Readout,
)
from ..._training._smooth import (
    LinearWarmup,
    ModeInputNormalization,
    memory_layers,
)
from ...nn._padding import mask_from_lengths, zero_padded
from .._timeseries.datasets import DATASETS, _dataset_info
from .._timeseries.models import model_registry_for, parse_model_spec
from .._timeseries.runner import count_loss_spikes

#: parameter groups of ``step`` (substrings of parameter names)
GROUPS = {
    "all": ("",),
    "readout": ("readout",),
    "input (W_xh, b_h)": ("weight_xh", "bias_h"),
    "W_hm": ("weight_hm",),
    "feedback W_mh": ("weight_mh",),
    "memory W_mm (free)": ("weight_mm",),
    "Schur eigenvalues": ("memory.eigen",),
    "Schur block shapes": ("memory.skew",),
    "Schur upper part": ("memory.upper",),
}


def _plain_state(module) -> dict:
    """A copy of ``module``'s state with each input ``W_hm`` that
    ``--normalize-input`` parametrized stored as the plain ``weight_hm``
    (the parametrization is written back when the fit ends)."""
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    for name, layer in module.named_modules():
        if parametrize.is_parametrized(layer, "weight_hm"):
            prefix = f"{name}." if name else ""
            del state[prefix + "parametrizations.weight_hm.original"]
            state[prefix + "weight_hm"] = layer.weight_hm.detach().clone()
    return state


class _Snapshots(Callback):
    def on_train_begin(self, net, **kwargs):
        self.states_ = [_plain_state(net.module_)]

    def on_epoch_end(self, net, **kwargs):
        self.states_.append(_plain_state(net.module_))


class _Only(Callback):
    def __init__(self, keys):
        self.keys = keys

    def on_train_begin(self, net, **kwargs):
        for name, param in net.module_.named_parameters():
            if not any(k in name for k in self.keys):
                param.requires_grad_(False)


class _NormalizeInput(ModeInputNormalization):
    """The library's mode input normalization, refused on a memory that is
    not a Schur one (a usage error of ``--normalize-input``)."""

    def on_train_begin(self, net, **kwargs):
        layers = memory_layers(net.module_.recurrent)
        if any(getattr(layer, "memory_matrix", "free") != "schur" for layer in layers):
            raise ValueError("--normalize-input needs memory_matrix='schur'")
        super().on_train_begin(net, **kwargs)


def _lagged_inputs(X, lengths, lags):
    """``(N, T, lags * d)``: ``x_t, x_{t-1}, ...`` per step, zeros before
    the start; with the mask ``(N, T)`` of the valid steps."""
    T = X.shape[1]
    padded = torch.nn.functional.pad(zero_padded(X, lengths), (0, 0, lags - 1, 0))
    targets = torch.cat(
        [padded[:, lags - 1 - k : lags - 1 - k + T] for k in range(lags)], dim=-1
    )
    return targets, mask_from_lengths(lengths, T, device=X.device)


class _Recon(Callback):
    """Training loss plus ``lam`` times the variance-normalized error of a
    linear decoder of the last ``lags`` inputs from the memory sequence."""

    def __init__(self, lam, lags, decoder="fixed"):
        self.lam, self.lags, self.decoder = lam, lags, decoder

    def _error(self, states, X, lengths):
        """Variance-normalized squared error per valid step and target, mean."""
        targets, mask = _lagged_inputs(X, lengths, self.lags)
        pred = states @ self.D_[:-1] + self.D_[-1]
        err = (pred - targets.to(pred)) ** 2 / self.var_
        return err[mask].mean()

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        recurrent = net.module_.recurrent
        if getattr(recurrent, "output", "memory") != "memory":
            raise ValueError("--recon needs output='memory'")
        data, lengths = X.X, X.lengths
        with torch.no_grad():
            states, _ = recurrent(data, lengths=lengths)
        targets, mask = _lagged_inputs(data, lengths, self.lags)
        M = states[mask].double()
        Y = targets[mask].double()
        F = torch.cat([M, M.new_ones(len(M), 1)], dim=1)
        D = torch.linalg.lstsq(F, Y, driver="gelsd").solution
        var = Y.var(dim=0)
        self.var_ = var.clamp_min(1e-8 * float(var.max().clamp_min(1e-30))).to(data)
        self.D_ = D.to(data).requires_grad_(self.decoder == "joint")
        if self.decoder == "joint":
            self.opt_ = torch.optim.Adam([self.D_], lr=net.lr)
        with torch.no_grad():
            self.start_error_ = float(self._error(states, data, lengths))
        self.epochs_, self.batches_ = [], []
        self.handle_ = recurrent.register_forward_hook(self._hook)
        self.get_loss_ = net.get_loss
        net.get_loss = self._get_loss  # instance attribute: removed at the end
        self.net_ = net

    def _hook(self, module, args, output):
        self.states_ = output[0] if module.training else None

    def _get_loss(self, y_pred, y_true, X=None, training=False, **kwargs):
        loss = self.get_loss_(y_pred, y_true, X=X, training=training, **kwargs)
        if not training or self.states_ is None:
            return loss
        term = self._error(self.states_, X["X"], X["lengths"])
        self.states_ = None
        self.batches_.append((float(term.detach()), len(X["lengths"])))
        return loss + self.lam * term

    def on_batch_end(self, net, training=False, **kwargs):
        if training and self.decoder == "joint":
            self.opt_.step()
            self.opt_.zero_grad()

    def on_epoch_end(self, net, **kwargs):
        if self.batches_:
            err, n = np.asarray(self.batches_).T
            self.epochs_.append(float(np.sum(err * n) / np.sum(n)))
        self.batches_ = []

    def on_train_end(self, net, **kwargs):
        self.handle_.remove()
        del net.get_loss  # back to the class's method
        self.states_ = self.net_ = None


class _SAM(Callback):
    """Sharpness-aware steps: the net's ``train_step_single`` wrapped so
    that the gradient it leaves is the one at the perturbed weights
    ``w + rho T^2 g / ||T g||`` (``T``: 1, ``|w|`` when ``adaptive``, each
    parameter group's learning rate over the largest when ``lr_scaled``)."""

    def __init__(self, rho, adaptive=False, lr_scaled=False):
        self.rho, self.adaptive, self.lr_scaled = rho, adaptive, lr_scaled

    def _scales(self, net, params):
        if self.adaptive:
            return [p.abs() for p in params]
        if not self.lr_scaled:
            return [1.0 for _ in params]
        groups = net.optimizer_.param_groups
        top = max(g["lr"] for g in groups)
        lr = {id(p): g["lr"] / top for g in groups for p in g["params"]}
        return [lr.get(id(p), 1.0) for p in params]

    def on_train_begin(self, net, **kwargs):
        single = type(net).train_step_single.__get__(net)

        def train_step_single(batch, **fit_params):
            step = single(batch, **fit_params)
            params = [p for p in net.module_.parameters() if p.grad is not None]
            with torch.no_grad():
                scales = self._scales(net, params)
                norm = torch.linalg.vector_norm(torch.stack([
                    torch.linalg.vector_norm(t * p.grad)
                    for t, p in zip(scales, params, strict=True)
                ]))
                if not torch.isfinite(norm) or norm == 0:
                    return step
                moves = [
                    self.rho * t * t * p.grad / norm
                    for t, p in zip(scales, params, strict=True)
                ]
                for p, e in zip(params, moves, strict=True):
                    p.add_(e)
            net._zero_grad_optimizer()
            try:
                single(batch, **fit_params)
            finally:
                with torch.no_grad():
                    for p, e in zip(params, moves, strict=True):
                        p.sub_(e)
            return step

        net.train_step_single = train_step_single

    def on_train_end(self, net, **kwargs):
        net.__dict__.pop("train_step_single", None)


class _LabelSmoothing(Callback):
    """The net's multiclass cross-entropy with smoothed targets."""

    def __init__(self, eps):
        self.eps = eps

    def on_train_begin(self, net, **kwargs):
        criterion = net.criterion_
        if criterion.problem != "multiclass" or criterion.per_step:
            raise ValueError("--label-smoothing needs a sequence-level multiclass loss")

        def forward(y_pred, y_true, lengths, sample_weight=None):
            terms = torch.nn.functional.cross_entropy(
                y_pred, y_true, reduction="none", label_smoothing=self.eps
            )
            if sample_weight is None:
                return terms.mean()
            weight = sample_weight.to(terms)
            return (terms * weight).sum() / weight.sum().clamp_min(1e-30)

        criterion.forward = forward

    def on_train_end(self, net, **kwargs):
        net.criterion_.__dict__.pop("forward", None)


class _StateNoise(Callback):
    """Training-only Gaussian noise on the recurrent output sequence."""

    def __init__(self, sigma):
        self.sigma = sigma

    def _hook(self, module, args, kwargs, output):
        if not module.training:
            return None
        seq = output[0]
        lengths = kwargs.get("lengths", args[1] if len(args) > 1 else None)
        if lengths is None:
            valid = torch.ones(seq.shape[:2], dtype=torch.bool, device=seq.device)
        else:
            valid = mask_from_lengths(lengths, seq.shape[1], device=seq.device)
        if self.std_ is None:
            self.std_ = seq.detach()[valid].std(dim=0)
        noise = torch.randn_like(seq) * (self.sigma * self.std_)
        return (seq + noise * valid[..., None], *output[1:])

    def on_train_begin(self, net, **kwargs):
        self.std_ = None
        self.handle_ = net.module_.recurrent.register_forward_hook(
            self._hook, with_kwargs=True
        )

    def on_train_end(self, net, **kwargs):
        self.handle_.remove()


def _resample(X, lengths, positions):
    """``X`` read at the fractional steps ``positions`` ``(N, T)`` of each
    sequence, linearly interpolated between neighbouring steps and clamped
    to the valid ones; padded steps (``t >= lengths``) zero."""
    N, T, d = X.shape
    lengths = lengths.to(X.device)
    last = (lengths - 1).clamp_min(0)[:, None]
    p = positions.clamp_min(0).minimum(last.to(positions))
    lo = p.floor().long().minimum(last)
    hi = (lo + 1).minimum(last)
    frac = (p - lo.to(p))[..., None].to(X)

    def take(idx):
        return torch.gather(X, 1, idx[..., None].expand(N, T, d))

    out = take(lo) * (1 - frac) + take(hi) * frac
    return out * mask_from_lengths(lengths, T, device=X.device)[..., None]


class _Augment(Callback):
    """Training-only augmentation of the network's input batches: window
    slicing (``crop``), smooth time warping (``warp``), per-sequence
    scaling (``scale``) and jitter (``jitter``), in that order. A forward
    pre-hook on the net's module replaces ``X`` (never in place) while the
    module trains; validation, scoring and the start never see it."""

    def __init__(self, crop=0.0, jitter=0.0, scale=0.0, warp=0.0, knots=4):
        self.crop, self.jitter, self.scale = crop, jitter, scale
        self.warp, self.knots = warp, knots

    def _crop_positions(self, lengths, T):
        """A window of ``crop`` times each sequence's span ``L - 1`` at a
        uniform random start, stretched over the ``L`` output steps."""
        span = (lengths - 1).clamp_min(0).to(torch.float64)
        u = torch.rand(len(lengths), generator=self.gen_, dtype=torch.float64)
        start = u * (1 - self.crop) * span
        t = torch.arange(T, dtype=torch.float64)
        return start[:, None] + self.crop * t[None, :]

    def _warp_positions(self, lengths, T):
        """The source step of each output step: the cumulative sum of a
        random speed curve, rescaled to the sequence's span. The speed is
        drawn from N(1, warp^2) at ``knots + 2`` evenly spaced knots of the
        normalized time and joined by cubic Hermite pieces with flat
        tangents (a C^1 curve)."""
        N, K = len(lengths), self.knots + 2
        v = 1 + self.warp * torch.randn(N, K, generator=self.gen_, dtype=torch.float64)
        v = v.clamp_min(1e-2)
        span = (lengths - 1).clamp_min(1).to(torch.float64)[:, None]
        t = torch.arange(T, dtype=torch.float64)[None, :]
        x = (t / span).clamp(max=1.0) * (K - 1)  # knot coordinates
        k = x.floor().long().clamp(max=K - 2)
        a = x - k
        h = a * a * (3 - 2 * a)
        v0, v1 = v.gather(1, k), v.gather(1, k + 1)
        speed = v0 + (v1 - v0) * h
        tau = speed.cumsum(1) - speed[:, :1]
        end = tau.gather(1, (lengths - 1).clamp_min(0)[:, None]).clamp_min(1e-12)
        return tau / end * (lengths - 1).clamp_min(0).to(torch.float64)[:, None]

    def _augment(self, X, lengths):
        N, T, d = X.shape
        lengths = lengths.cpu()
        if self.crop:
            X = _resample(X, lengths, self._crop_positions(lengths, T).to(X.device))
        if self.warp:
            X = _resample(X, lengths, self._warp_positions(lengths, T).to(X.device))
        valid = mask_from_lengths(lengths, T, device=X.device)[..., None]
        if self.scale:
            c = 1 + self.scale * torch.randn(N, 1, d, generator=self.gen_)
            X = X * c.to(X)
        if self.jitter:
            noise = torch.randn(N, T, d, generator=self.gen_).to(X)
            X = X + noise * (self.jitter * self.std_) * valid
        return X

    def _hook(self, module, args, kwargs):
        if not module.training:
            return None
        args, kwargs = list(args), dict(kwargs)
        X = kwargs["X"] if "X" in kwargs else args[0]
        lengths = kwargs.get("lengths", args[1] if len(args) > 1 else None)
        if lengths is None:
            lengths = torch.full((X.shape[0],), X.shape[1], dtype=torch.int64)
        X = self._augment(X, lengths)
        if "X" in kwargs:
            kwargs["X"] = X
        else:
            args[0] = X
        self.batches_ += 1
        return tuple(args), kwargs

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        data, lengths = X.X, X.lengths
        valid = mask_from_lengths(lengths, data.shape[1], device=data.device)
        self.std_ = data[valid].std(dim=0)  # each input feature's, all steps
        # drawn from the fit's seeded torch generator: reproducible fits
        self.gen_ = torch.Generator().manual_seed(int(torch.randint(2**62, ())))
        self.batches_ = 0
        self.handle_ = net.module_.register_forward_pre_hook(
            self._hook, with_kwargs=True
        )

    def on_train_end(self, net, **kwargs):
        self.handle_.remove()
        self.gen_ = None


def _variant_callbacks(args) -> list:
    callbacks = []
    if args.normalize_input:  # first: the other callbacks see its optimizer
        callbacks.append(("normalize", _NormalizeInput()))
    if getattr(args, "recon", 0):
        recon = _Recon(args.recon, args.recon_lags, args.recon_decoder)
        callbacks.append(("recon", recon))
    if args.warmup:
        callbacks.append(("warmup", LinearWarmup(args.warmup)))
    if getattr(args, "sam", 0):
        callbacks.append(
            ("sam", _SAM(args.sam, args.sam_adaptive, args.sam_lr_scaled))
        )
    if getattr(args, "label_smoothing", 0):
        callbacks.append(("smooth", _LabelSmoothing(args.label_smoothing)))
    if getattr(args, "state_noise", 0):
        callbacks.append(("noise", _StateNoise(args.state_noise)))
    augment = [getattr(args, k, 0) for k in ("crop", "jitter", "scale", "time_warp")]
    if any(augment):
        callbacks.append(("augment", _Augment(*augment)))
    return callbacks


def _variant_fields(args) -> dict:
    """The record fields of the variants (none when off), ``--recon``'s
    included."""
    fields = {
        "sam": getattr(args, "sam", 0),
        "sam_adaptive": getattr(args, "sam_adaptive", False),
        "sam_lr_scaled": getattr(args, "sam_lr_scaled", False),
        "label_smoothing": getattr(args, "label_smoothing", 0),
        "state_noise": getattr(args, "state_noise", 0),
        "crop": getattr(args, "crop", 0),
        "jitter": getattr(args, "jitter", 0),
        "scale": getattr(args, "scale", 0),
        "time_warp": getattr(args, "time_warp", 0),
    }
    return {k: v for k, v in fields.items() if v} | _recon_record(args)


def _estimator(spec, seed, info, epochs, callbacks, fine_tuning="full"):
    base, overrides, _ = parse_model_spec(spec)
    est = model_registry_for([spec])[base]["classification"](seed, info)
    est = est[0] if isinstance(est, tuple) else est
    # the variants build on the full fine-tuning (the smooth fine-tuning is
    # --warmup 10 --normalize-input with the slow Schur memory; projection
    # asks for 'smooth', the network it projects); an override may still ask
    # for another
    est.set_params(**{"fine_tuning": fine_tuning, **overrides})
    return est.set_params(
        max_iter=epochs,
        early_stopping=False,
        n_iter_no_change=10**6,
        callbacks=list(callbacks),
    )


def _load(name):
    data = DATASETS[name].load()
    return data, _dataset_info(name, "classification", data)


def _epoch_probas(spec, seed, info, args, X, y, evals):
    """Fit ``spec`` on ``(X, y)`` for ``args.epochs`` epochs; for each array
    of sequences in ``evals``, the class probabilities of the start and of
    every epoch (shape ``(epochs + 1, n, n_classes)``), with the fitted
    estimator, its training losses and the seconds the fit took."""
    callbacks = _variant_callbacks(args) + [("snap", _Snapshots())]
    est = _estimator(spec, seed, info, args.epochs, callbacks)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    seconds = time.perf_counter() - t0
    final = copy.deepcopy(est.net_.module_.state_dict())
    probas = [[] for _ in evals]
    for state in dict(est.net_.callbacks_)["snap"].states_:
        est.net_.module_.load_state_dict(state)
        for out, X_eval in zip(probas, evals, strict=True):
            out.append(est.predict_proba(X_eval))
    est.net_.module_.load_state_dict(final)
    args.recon_callback_ = dict(est.net_.callbacks_).get("recon")  # the fit's copy
    loss = [float(v) for v in est.loss_curve_]
    return [np.asarray(p) for p in probas], est, loss, seconds


def _accuracy(proba, y, classes):
    return float(np.mean(classes[proba.argmax(-1)] == y))


def _logloss(proba, y, classes):
    picked = proba[np.arange(len(y)), np.searchsorted(classes, y)]
    return float(-np.mean(np.log(np.clip(picked, 1e-12, None))))


def _epoch_scores(spec, seed, info, args, X, y, X_eval, y_eval):
    """Fit ``spec`` on ``(X, y)`` for ``args.epochs`` epochs; the accuracy
    and log-loss on ``(X_eval, y_eval)`` of the start and every epoch, the
    accuracy of the weights kept, the training losses and the seconds."""
    (probas,), est, loss, seconds = _epoch_probas(
        spec, seed, info, args, X, y, [X_eval]
    )
    y_eval = np.asarray(y_eval)
    kept = float(np.mean(est.predict(X_eval) == y_eval))
    acc = [_accuracy(p, y_eval, est.classes_) for p in probas]
    logloss = [_logloss(p, y_eval, est.classes_) for p in probas]
    return acc, logloss, kept, loss, seconds


def _recon_record(args) -> dict:
    """The ``--recon`` settings and, when on, the last fit's decoder error
    (the start's, then the mean over each epoch's training batches)."""
    if not getattr(args, "recon", 0):
        return {}
    cb = args.recon_callback_
    return {
        "recon": args.recon, "recon_lags": args.recon_lags,
        "recon_decoder": args.recon_decoder,
        "recon_error": [cb.start_error_, *cb.epochs_],
    }


def _runs(args):
    """``(dataset, model, seed, data, info)`` of every fit of a mode: each
    dataset loaded once, its labels as arrays."""
    for ds in args.datasets:
        (X_train, X_test, y_train, y_test), info = _load(ds)
        data = (X_train, X_test, np.asarray(y_train), np.asarray(y_test))
        for spec in args.models:
            for seed in args.seeds:
                yield ds, spec, seed, data, info


def _take(X, rows) -> list:
    """The sequences of ``X`` at ``rows``."""
    return [X[i] for i in rows]


def _append(path, rec) -> None:
    """Append ``rec`` as one JSON line to ``path`` (None: nowhere)."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def _cv(args) -> None:
    for ds, spec, seed, (X_train, X_test, y_train, y_test), info in _runs(args):
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=seed)
        held_out = []
        for fit_rows, eval_rows in folds.split(np.zeros(len(y_train)), y_train):
            _, logloss, *_ = _epoch_scores(
                spec, seed, info, args,
                _take(X_train, fit_rows), y_train[fit_rows],
                _take(X_train, eval_rows), y_train[eval_rows],
            )
            held_out.append(logloss)
        n = min(len(c) for c in held_out)
        mean = np.mean([c[:n] for c in held_out], axis=0)
        chosen = int(np.argmin(mean))
        acc, _, kept, loss, seconds = _epoch_scores(
            spec, seed, info, args, list(X_train), y_train, X_test, y_test
        )
        rec = {
            "dataset": ds, "model": spec, "seed": seed,
            "warmup": args.warmup, "normalize_input": args.normalize_input,
            "cv_logloss": [float(v) for v in mean], "chosen_epoch": chosen,
            "accuracy": acc, "loss": loss, "kept": kept,
            "spikes": count_loss_spikes(loss), **_variant_fields(args),
        }
        _append(args.out, rec)
        a = np.asarray(acc)
        at = a[min(chosen, len(a) - 1)]
        print(
            f"| {ds} | {spec} | {seed} | {a[0]:.3f} | {chosen} | {at:.3f} | "
            f"{a.max():.3f} (epoch {int(a.argmax())}) | {a[-1]:.3f} | "
            f"{rec['spikes']} |",
            flush=True,
        )


def _ensemble(args) -> None:
    for ds, spec, seed, (X_train, X_test, y_train, y_test), info in _runs(args):
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=seed)
        members, chosen, spikes, seconds = [], [], 0, 0.0
        for k, (fit_rows, eval_rows) in enumerate(
            folds.split(np.zeros(len(y_train)), y_train)
        ):
            (held, test), est, loss, sec = _epoch_probas(
                spec, seed + 100 * k, info, args,
                _take(X_train, fit_rows), y_train[fit_rows],
                [_take(X_train, eval_rows), list(X_test)],
            )
            classes = est.classes_
            held_loss = [_logloss(p, y_train[eval_rows], classes) for p in held]
            chosen.append(int(np.argmin(held_loss)))
            members.append(test)
            spikes += count_loss_spikes(loss)
            seconds += sec
        once = argparse.Namespace(**{**vars(args), "epochs": 1})
        (full,), est, _, _ = _epoch_probas(
            spec, seed, info, once, list(X_train), y_train, [list(X_test)]
        )
        n = min(len(m) for m in members)
        curve = [
            _accuracy(np.mean([m[e] for m in members], axis=0), y_test, classes)
            for e in range(n)
        ]
        committee = np.mean(
            [m[e] for m, e in zip(members, chosen, strict=True)], axis=0
        )
        rec = {
            "dataset": ds, "model": spec, "seed": seed,
            "warmup": args.warmup, "normalize_input": args.normalize_input,
            "start": _accuracy(full[0], y_test, est.classes_),
            "fold_starts": curve[0],
            "committee": _accuracy(committee, y_test, classes),
            "chosen_epochs": chosen, "committee_per_epoch": curve,
            "members": [
                _accuracy(m[e], y_test, classes)
                for m, e in zip(members, chosen, strict=True)
            ],
            "spikes": spikes, "fit_seconds": round(seconds, 2),
        }
        _append(args.out, rec)
        print(
            f"| {ds} | {spec} | {seed} | {rec['start']:.3f} | "
            f"{rec['fold_starts']:.3f} | {rec['committee']:.3f} "
            f"({', '.join(map(str, chosen))}) | {max(curve):.3f} "
            f"(epoch {int(np.argmax(curve))}) | "
            f"{np.mean(rec['members']):.3f} | {spikes} |",
            flush=True,
        )


def _curves(args) -> None:
    for ds, spec, seed, (X_train, X_test, y_train, y_test), info in _runs(args):
        acc, _, kept, loss, seconds = _epoch_scores(
            spec, seed, info, args, X_train, y_train, X_test, y_test
        )
        rec = {
            "dataset": ds, "model": spec, "seed": seed, "accuracy": acc,
            "loss": loss, "kept": kept, "spikes": count_loss_spikes(loss),
            "fit_seconds": round(seconds, 2),
            "warmup": args.warmup, "normalize_input": args.normalize_input,
            **_variant_fields(args),
        }
        _append(args.out, rec)
        a = np.asarray(acc)
        print(
            f"| {ds} | {spec} | {seed} | {a[0]:.3f} | {a.max():.3f} "
            f"(epoch {int(a.argmax())}) | {kept:.3f} | {a[-1]:.3f} | "
            f"{rec['spikes']} |",
            flush=True,
        )


def _step(args) -> None:
    for ds in args.datasets:
        (X_train, _, y_train, _), info = _load(ds)
        for spec in args.models:
            for label, keys in GROUPS.items():
                est = _estimator(spec, 0, info, 4, [("only", _Only(keys))])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        est.fit(X_train, y_train)
                    except RuntimeError:  # no parameter of this group
                        continue
                curve = ", ".join(f"{v:.3f}" for v in est.loss_curve_)
                print(f"| {ds} | {spec} | {label} | {curve} |", flush=True)


class _LBFGSRounds(Callback):
    """Full-batch L-BFGS on the training sequences before the first epoch:
    ``outer`` rounds of at most ``inner`` iterations, the module copied
    after each (see ``lbfgs`` in the module's docstring)."""

    def __init__(self, outer, inner, anchor):
        self.outer, self.inner, self.anchor = outer, inner, anchor

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        module = net.module_
        params = [p for p in module.parameters() if p.requires_grad]
        start = [p.detach().clone() for p in params]
        batches = list(net.get_iterator(net.get_dataset(X, y), training=False))
        n = sum(len(unpack_data(b)[1]) for b in batches)
        opt = torch.optim.LBFGS(
            params, lr=1, max_iter=self.inner, history_size=20,
            line_search_fn="strong_wolfe",
        )

        def closure():
            opt.zero_grad()
            total = 0.0
            for batch in batches:
                Xi, yi = unpack_data(batch)
                net._set_training(True)
                y_pred, penalty = net.infer_with_penalty(Xi)
                loss = net.get_loss(y_pred, yi, X=Xi, penalty=penalty)
                (loss * (len(yi) / n)).backward()
                total += float(loss) * len(yi) / n
            if self.anchor:
                dist = sum(
                    ((p - s) ** 2).sum()
                    for p, s in zip(params, start, strict=True)
                )
                (0.5 * self.anchor * dist).backward()
                total += 0.5 * self.anchor * float(dist)
            return torch.tensor(total)

        self.states_ = [_plain_state(module)]
        self.losses_ = [float(closure())]
        for _ in range(self.outer):
            opt.step(closure)  # returns the objective where the round began
            self.losses_.append(float(closure()))
            self.states_.append(_plain_state(module))


def _lbfgs(args) -> None:
    for ds, spec, seed, (X_train, X_test, y_train, y_test), info in _runs(args):
        rounds = _LBFGSRounds(args.outer, args.inner, args.anchor)
        est = _estimator(spec, seed, info, 1, [("lbfgs", rounds)])
        est.set_params(learning_rate_init=1e-12)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X_train, y_train)
        seconds = time.perf_counter() - t0
        rounds = dict(est.net_.callbacks_)["lbfgs"]
        acc = []
        for state in rounds.states_:
            est.net_.module_.load_state_dict(state)
            acc.append(float(np.mean(est.predict(X_test) == y_test)))
        rec = {
            "dataset": ds, "model": spec, "seed": seed, "accuracy": acc,
            "loss": rounds.losses_, "outer": args.outer,
            "inner": args.inner, "anchor": args.anchor,
            "fit_seconds": round(seconds, 2),
        }
        _append(args.out, rec)
        a = np.asarray(acc)
        print(
            f"| {ds} | {spec} | {seed} | {a[0]:.3f} | {a.max():.3f} "
            f"(round {int(a.argmax())}) | {a[-1]:.3f} | "
            f"{rounds.losses_[0]:.4f} -> {rounds.losses_[-1]:.4f} |",
            flush=True,
        )


class _ProjectionSteps(Callback):
    """``projection``'s steps before the first epoch (see the module's
    docstring); ``states_`` holds the start and every ``every``-th step."""

    def __init__(self, steps, every, lr, folds, seed):
        self.steps, self.every, self.lr = steps, every, lr
        self.folds, self.seed = folds, seed

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        # the library's steps (fine_tuning='projection'), a copy of the
        # network as each step's score
        steps = VariableProjection(every=self.every, lr=self.lr, folds=self.folds)
        batches = _batches(net, [net.get_dataset(X, y)])
        self.alpha_, self.objective_, self.states_ = steps._run(
            net.module_, batches, self.steps, self.seed,
            lambda module, step: _plain_state(module),
        )


def _readout_input(est, X) -> np.ndarray:
    """The readout's input of ``est`` on ``X``, in the order of ``X`` (the
    estimators predict the sequences sorted by decreasing length)."""
    got = []
    hook = est.net_.module_.readout.register_forward_hook(
        lambda module, args, output: got.append(args[0].detach().numpy())
    )
    try:
        est.predict_proba(X)
    finally:
        hook.remove()
    order = np.argsort([-len(x) for x in X], kind="stable")
    features = np.empty_like(np.concatenate(got))
    features[order] = np.concatenate(got)
    return features


def _refit_predictions(est, X, y, evals) -> list:
    """Labels predicted for each of ``evals`` by logistic regression on the
    standardized readout input of ``est``, fitted on ``(X, y)`` with ``C``
    chosen by stratified cross-validation (the readout that
    ``fine_tuning='projection'`` refits)."""
    classes, codes = np.unique(y, return_inverse=True)
    readout = _Readout(_readout_input(est, X).astype(np.float64), codes, None)
    return [classes[readout.predict(_readout_input(est, E))] for E in evals]


def _projection_run(spec, seed, info, args, X, y, evals) -> tuple[list, list]:
    """Fit ``spec`` with ``projection``'s steps on ``(X, y)``; per copy (the
    start first), the labels predicted for each of ``evals``, and the
    objective of every step."""
    steps = _ProjectionSteps(args.steps, args.every, args.lr, args.folds, seed)
    # the network of the smooth fine-tuning, the one the option projects
    est = _estimator(spec, seed, info, 1, [("projection", steps)], "smooth")
    est.set_params(learning_rate_init=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    steps = dict(est.net_.callbacks_)["projection"]
    predictions = []
    for i, state in enumerate(steps.states_):
        est.net_.module_.load_state_dict(state)
        if i == 0:  # the start, with the estimator's own readout
            predictions.append([est.predict(E) for E in evals])
        else:
            predictions.append(_refit_predictions(est, X, y, evals))
    return predictions, steps.objective_


def _projection(args) -> None:
    for ds, spec, seed, (X_train, X_test, y_train, y_test), info in _runs(args):
        t0 = time.perf_counter()
        fit_rows, held_rows = train_test_split(
            np.arange(len(y_train)), test_size=0.25, stratify=y_train,
            random_state=seed,
        )
        guard, _ = _projection_run(
            spec, seed, info, args, _take(X_train, fit_rows), y_train[fit_rows],
            [_take(X_train, held_rows)],
        )
        held = [float(np.mean(p[0] == y_train[held_rows])) for p in guard]
        chosen = 0
        for i in range(1, len(held)):
            if held[i] > held[chosen] + 1.0 / len(held_rows) + 1e-12:
                chosen = i
        full, objective = _projection_run(
            spec, seed, info, args, list(X_train), y_train, [list(X_test)]
        )
        test = [float(np.mean(p[0] == y_test)) for p in full]
        rec = {
            "dataset": ds, "model": spec, "seed": seed, "steps": args.steps,
            "every": args.every, "lr": args.lr, "held_out": held,
            "chosen": chosen, "test": test, "start": test[0],
            "final": test[chosen], "objective": objective,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        _append(args.out, rec)
        print(
            f"| {ds} | {spec} | {seed} | {test[0]:.3f} | {test[chosen]:.3f} "
            f"({chosen * args.every}) | "
            f"{' '.join(f'{v:.2f}' for v in held)} | "
            f"{' '.join(f'{v:.3f}' for v in test)} | {rec['seconds']} |",
            flush=True,
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what",
        choices=["curves", "step", "cv", "ensemble", "lbfgs", "projection"],
    )
    parser.add_argument("--models", nargs="+", default=["lmn"])
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["ArrowHead", "BasicMotions", "ItalyPowerDemand"],
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--out", default=None)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--normalize-input", action="store_true")
    parser.add_argument("--recon", type=float, default=0.0)
    parser.add_argument("--recon-lags", type=int, default=8)
    parser.add_argument(
        "--recon-decoder", choices=["fixed", "joint"], default="fixed"
    )
    parser.add_argument("--sam", type=float, default=0.0)
    parser.add_argument("--sam-adaptive", action="store_true")
    parser.add_argument("--sam-lr-scaled", action="store_true")
    parser.add_argument("--label-smoothing", type=float, default=0.0)
    parser.add_argument("--state-noise", type=float, default=0.0)
    parser.add_argument("--crop", type=float, default=0.0)
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument("--scale", type=float, default=0.0)
    parser.add_argument("--time-warp", type=float, default=0.0)
    parser.add_argument("--outer", type=int, default=10)
    parser.add_argument("--inner", type=int, default=5)
    parser.add_argument("--anchor", type=float, default=0.0)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args(argv)
    if args.outer < 1 or args.inner < 1 or not args.anchor >= 0:
        parser.error(
            f"--outer and --inner must be >= 1 and --anchor >= 0, got "
            f"{args.outer}, {args.inner} and {args.anchor}"
        )
    if args.steps < 1 or not 1 <= args.every <= args.steps or not args.lr > 0:
        parser.error(
            f"--steps must be >= 1, --every in [1, --steps] and --lr > 0, got "
            f"{args.steps}, {args.every} and {args.lr}"
        )
    if args.recon < 0 or args.recon_lags < 1:
        parser.error(
            f"--recon must be >= 0 and --recon-lags >= 1, got {args.recon} and "
            f"{args.recon_lags}"
        )
    if args.sam < 0 or args.state_noise < 0 or not 0 <= args.label_smoothing < 1:
        parser.error(
            f"--sam and --state-noise must be >= 0 and --label-smoothing in "
            f"[0, 1), got {args.sam}, {args.state_noise} and {args.label_smoothing}"
        )
    if args.crop and not 0 < args.crop < 1:
        parser.error(f"--crop must be in (0, 1) (0: off), got {args.crop}")
    for flag, value in (
        ("--jitter", args.jitter), ("--scale", args.scale),
        ("--time-warp", args.time_warp),
    ):
        if not value >= 0:
            parser.error(f"{flag} must be >= 0, got {value}")
    torch.set_num_threads(1)
    if args.what == "curves":
        print(
            "| dataset | model | seed | start | best in hindsight | kept | last "
            "| spikes |"
        )
        print("|---|---|---|---|---|---|---|---|")
        _curves(args)
    elif args.what == "cv":
        print(
            "| dataset | model | seed | start | epochs chosen | test at them | "
            "best in hindsight | last | spikes |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        _cv(args)
    elif args.what == "lbfgs":
        print(
            "| dataset | model | seed | start | best round in hindsight | last | "
            "training loss |"
        )
        print("|---|---|---|---|---|---|---|")
        _lbfgs(args)
    elif args.what == "projection":
        print(
            "| dataset | model | seed | start | final (steps) | held-out quarter "
            "per copy | test per copy (hindsight) | seconds |"
        )
        print("|---|---|---|---|---|---|---|---|")
        _projection(args)
    elif args.what == "ensemble":
        print(
            "| dataset | model | seed | start | fold starts | committee (epochs) | "
            "best committee in hindsight | members | spikes |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        _ensemble(args)
    else:
        print(
            "| dataset | model | trained group "
            "| training loss per epoch (start first) |"
        )
        print("|---|---|---|---|")
        _step(args)
    return 0
