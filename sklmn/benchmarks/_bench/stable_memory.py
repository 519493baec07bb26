"""Prototype: the Schur memory parametrization plugged into today's LMN and
MS-LMN estimators without editing them (subclasses + a pretrainer wrapper).

Usage::

    python -m sklmn.benchmarks bench stable-memory \\
        --variants lmn_old lmn_free --datasets ArrowHead --seeds 0 1 \
        --out /tmp/proto.jsonl

One JSON line per (dataset, variant, seed): start accuracy (the model before
the first epoch), final accuracy, loss spikes, epochs, fit time, and the
largest radius of ``W_mm`` and of the linearized map ``W_mm + W_hm D W_mh``
(D = I and 16 random diagonal D in [0, I]) over the epochs.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import time
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator
from skorch.callbacks import Callback

from sklmn.benchmarks._timeseries.runner import count_loss_spikes
from sklmn.callbacks import TrainingNoise
from sklmn.datasets import load_timeseries_dataset
from sklmn.estimators import (
    LMNClassifier,
    MultiScaleLMNClassifier,
    RNNClassifier,
)
from sklmn.nn import LMN, LMNLayer, MultiScaleLMN
from sklmn.nn._clock import active_prefix_counts
from sklmn.nn._scan import lmn_scan, multiscale_scan
from sklmn.nn._stable_memory import SchurMemory, feedback_gain


# --------------------------------------------------------------------------- #
# Stable modules (class swap of today's layers)
# --------------------------------------------------------------------------- #
class StableLMNLayerMixin:
    def _effective(self):
        W_mm = self.memory()
        W_mh = self.weight_mh
        if self.feedback == "bounded":
            W_mh = feedback_gain(W_mm, self.memory.kind, self.weight_hm, W_mh) * W_mh
        return W_mm, W_mh

    def _scan(self, x_tm, m0, batch_sizes, weights=None):  # own weights
        W_mm, W_mh = self._effective()
        return lmn_scan(
            x_tm, m0, self.weight_xh, self.bias_h, W_mh, self.weight_hm, W_mm,
            self.bias_m, batch_sizes, self.truncate_gradient,
        )

    def _cell(self, x_t, m, weights=None):  # own weights
        W_mm, W_mh = self._effective()
        h = torch.tanh(x_t @ self.weight_xh.T + self.bias_h + m @ W_mh.T)
        m = h @ self.weight_hm.T + m @ W_mm.T
        if self.bias_m is not None:
            m = m + self.bias_m
        return h, m


class StableMSMixin:
    def masked_weight_mm(self):
        return self.memory()

    def _effective_mh(self, W_mm):
        if self.feedback == "bounded":
            return (
                feedback_gain(W_mm, self.memory.kind, self.weight_hm, self.weight_mh)
                * self.weight_mh
            )
        return self.weight_mh

    def _run_prefix(self, xp, m, W_mm, start, batch_sizes=None):
        counts = active_prefix_counts(self.periods, start, xp.shape[0])
        units = self._prefix_units(counts)
        return multiscale_scan(
            xp, m, self._effective_mh(W_mm), self.weight_hm, W_mm, units,
            batch_sizes, self.truncate_gradient,
        )


class StableLMNLayer(StableLMNLayerMixin, LMNLayer):
    pass


class StableMultiScaleLMN(StableMSMixin, MultiScaleLMN):
    pass


_STABLE = {LMNLayer: StableLMNLayer, MultiScaleLMN: StableMultiScaleLMN}


def _swap(obj, mixin):
    obj.__class__ = _STABLE[type(obj)]


@torch.no_grad()
def ring_start_(layer, memory, ring, normalize):
    """Ring init of the memory; W_hm rows scaled by gamma = sqrt(1 - r^2)."""
    r_min, r_max, phase = ring
    memory.reset_ring_(r_min, r_max, phase)
    if normalize:
        moduli = memory.eigenvalue_moduli()
        gamma = torch.sqrt(1 - moduli**2)
        layer.weight_hm.mul_(gamma.unsqueeze(1))


def make_stable_(recurrent, feedback, ring, normalize):
    """Turn an LMN / MultiScaleLMN into its Schur-memory version in place."""
    if isinstance(recurrent, LMN):
        for layer in recurrent._all_layers():
            _swap(layer, StableLMNLayerMixin)
            layer.feedback = feedback
            layer.memory = SchurMemory(
                layer.memory_size, dtype=layer.weight_xh.dtype
            )
            layer.weight_mm.requires_grad_(False)
            ring_start_(layer, layer.memory, ring, normalize)
    elif isinstance(recurrent, MultiScaleLMN):
        nets = [recurrent] + (
            [recurrent.reverse] if recurrent.reverse is not None else []
        )
        for net in nets:
            _swap(net, StableMSMixin)
            net.feedback = feedback
            net.memory = SchurMemory(
                net.total_memory_size, module_size=net.memory_size,
                dtype=net.weight_xh.dtype,
            )
            net.weight_mm.requires_grad_(False)
            ring_start_(net, net.memory, ring, normalize)
    else:
        raise TypeError(type(recurrent))
    return recurrent


def _rotate_cols_(W, Q, offset):
    M = Q.shape[0]
    Qt = Q.to(W.dtype)
    W[:, offset : offset + M] = W[:, offset : offset + M] @ Qt


@torch.no_grad()
def convert_(module, twin):
    """Copy the free ``twin`` (pretrained) into the stable ``module.recurrent``,
    rotating the memory coordinates; returns the clamping info."""
    stable = module.recurrent
    infos, qs = [], []
    if isinstance(stable, LMN):
        assert stable.num_layers == 1 and not stable.bidirectional
        pairs = [(stable.layers[0], twin.layers[0])]
    else:
        assert stable.reverse is None
        pairs = [(stable, twin)]
    for s, t in pairs:
        W_mm = t.masked_weight_mm() if isinstance(t, MultiScaleLMN) else t.weight_mm
        Q, info = s.memory.set_dense_(W_mm)
        infos.append(info)
        Qd = Q.to(s.weight_xh.dtype)
        s.weight_xh.copy_(t.weight_xh)
        s.bias_h.copy_(t.bias_h)
        s.weight_hm.copy_(Qd.T @ t.weight_hm)
        s.weight_mh.copy_(t.weight_mh @ Qd)
        if getattr(s, "bias_m", None) is not None:
            s.bias_m.copy_(Qd.T @ t.bias_m)
        qs.append(Q)
    # readout columns: [last (M), mean (M)] blocks
    Q = qs[0]
    M = Q.shape[0]
    W = module.readout.weight
    for offset in range(0, W.shape[1], M):
        _rotate_cols_(W, Q, offset)
    return infos


@torch.no_grad()
def normalize_states_(module, context):
    """Diagonal change of the memory coordinates: unit RMS state per unit
    on the training data (function unchanged)."""
    rec = module.recurrent
    X = torch.as_tensor(context.sequences.data)
    L = torch.as_tensor(context.sequences.lengths)
    out = rec(
        X.to(rec.weight_xh.dtype if hasattr(rec, "weight_xh") else torch.float32),
        lengths=L,
    )[0]
    mask = torch.arange(out.shape[1])[None, :] < L[:, None]
    rms = out[mask].double().pow(2).mean(0).sqrt()
    s = rms.clamp(min=1e-3 * float(rms.max()), max=None)
    s = torch.where(torch.isfinite(s) & (s > 0), s, torch.ones_like(s))
    if isinstance(rec, LMN):
        target = rec.layers[0]
    else:
        target = rec
    T = target.memory().double()
    T_new = T * s[None, :] / s[:, None]
    target.memory.set_quasi_triangular_(T_new)
    sd = s.to(target.weight_hm.dtype)
    target.weight_hm.div_(sd[:, None])
    target.weight_mh.mul_(sd[None, :])
    if getattr(target, "bias_m", None) is not None:
        target.bias_m.div_(sd)
    W = module.readout.weight
    M = s.shape[0]
    for offset in range(0, W.shape[1], M):
        W[:, offset : offset + M] *= sd[None, :]
    return s


class SchurStart(BaseEstimator):
    """Runs ``inner`` on a free twin of the network, then converts."""

    def __init__(self, inner=None, normalize=False):
        self.inner = inner
        self.normalize = normalize

    def initialize(self, module, context):
        stable = module.recurrent
        twin = copy.deepcopy(stable)
        # a free twin of the same class
        if isinstance(twin, LMN):
            for layer in twin._all_layers():
                layer.__class__ = type(layer).__mro__[2]
                layer.weight_mm.requires_grad_(True)
                del layer.memory
        else:
            twin.__class__ = type(stable).__mro__[2]
            twin.weight_mm.requires_grad_(True)
            del twin.memory
        module.recurrent = twin
        try:
            self.inner.initialize(module, context)
        finally:
            module.recurrent = stable
        self.convert_info_ = convert_(module, twin)
        if self.normalize:
            self.state_scale_ = normalize_states_(module, context).tolist()
        for key, value in vars(self.inner).items():
            if key.endswith("_") and not key.startswith("_"):
                setattr(self, key, value)
        return self


class MemoryLR(Callback):
    """Memory parameters (and optionally W_mh) at ``factor`` times the rate,
    or frozen (factor 0)."""

    def __init__(self, factor, feedback_too=False):
        self.factor, self.feedback_too = factor, feedback_too

    def on_train_begin(self, net, **kw):
        names = (".memory.",) + ((".weight_mh",) if self.feedback_too else ())
        chosen = [
            p
            for n, p in net.module_.named_parameters()
            if any(k in n for k in names)
        ]
        ids = {id(p) for p in chosen}
        opt = net.optimizer_
        base = opt.param_groups[0]
        for g in opt.param_groups:
            g["params"] = [p for p in g["params"] if id(p) not in ids]
        if self.factor == 0:
            for p in chosen:
                p.requires_grad_(False)
            return
        opt.add_param_group({"params": chosen, "lr": base["lr"] * self.factor})


def stable_estimator(base, feedback="free", ring=(0.4, 0.99, math.pi), normalize=True,
                     state_norm=False, memory_lr=None, noise=None):
    class Stable(base):
        def _build_module(self, input_size):
            rec = super()._build_module(input_size)
            return make_stable_(rec, feedback, ring, normalize)

        def _resolve_pretrainer(self, n_samples, context=None):
            p = super()._resolve_pretrainer(n_samples, context)
            return None if p is None else SchurStart(p, normalize=state_norm)

        def fit(self, X, y, **kw):
            if memory_lr is not None:
                cbs = list(self.callbacks or [])
                cbs.append(("memory_lr", MemoryLR(*memory_lr)))
                self.callbacks = cbs
            if noise is not None:
                cbs = list(self.callbacks or [])
                cbs.append(("noise", TrainingNoise(std=noise)))
                self.callbacks = cbs
            return super().fit(X, y, **kw)

    Stable.__name__ = f"Stable{base.__name__}"
    return Stable


# --------------------------------------------------------------------------- #
# Measurement callbacks
# --------------------------------------------------------------------------- #
def _maps(recurrent):
    """(W_mm, W_hm, W_mh_effective) of every layer / direction."""
    out = []
    if isinstance(recurrent, LMN):
        for layer in recurrent._all_layers():
            if hasattr(layer, "memory"):
                W_mm, W_mh = layer._effective()
            else:
                W_mm, W_mh = layer.weight_mm, layer.weight_mh
            out.append((W_mm, layer.weight_hm, W_mh))
    elif isinstance(recurrent, MultiScaleLMN):
        nets = [recurrent] + (
            [recurrent.reverse] if recurrent.reverse is not None else []
        )
        for net in nets:
            W_mm = net.masked_weight_mm()
            W_mh = net._effective_mh(W_mm) if hasattr(net, "memory") else net.weight_mh
            out.append((W_mm, net.weight_hm, W_mh))
    return out


def _rho(A):
    return float(np.abs(np.linalg.eigvals(A)).max())


class RadiusLog(Callback):
    def __init__(self, n_random=16, seed=0):
        self.n_random, self.seed = n_random, seed

    def _measure(self, net):
        rec = net.module_.recurrent
        if not isinstance(rec, LMN | MultiScaleLMN):
            return None
        rng = np.random.RandomState(self.seed)
        r_mm = r_id = r_rand = 0.0
        with torch.no_grad():
            for W_mm, W_hm, W_mh in _maps(rec):
                A = W_mm.double().numpy()
                F = W_hm.double().numpy()
                G = W_mh.double().numpy()
                r_mm = max(r_mm, _rho(A))
                r_id = max(r_id, _rho(A + F @ G))
                for _ in range(self.n_random):
                    d = rng.uniform(size=G.shape[0])
                    r_rand = max(r_rand, _rho(A + (F * d) @ G))
        return r_mm, r_id, r_rand

    def on_train_begin(self, net, **kw):
        self.log_ = [self._measure(net)]

    def on_epoch_end(self, net, **kw):
        self.log_.append(self._measure(net))


class StartRecorder(Callback):
    def on_train_begin(self, net, **kw):
        self.state_ = copy.deepcopy(net.module_.state_dict())


def _callback(est, cls):
    for _, cb in est.net_.callbacks_:
        if isinstance(cb, cls):
            return cb
    return None


# --------------------------------------------------------------------------- #
VARIANTS = {
    "lmn_old": lambda s: LMNClassifier(random_state=s),
    "lmn_free": lambda s: stable_estimator(LMNClassifier)(random_state=s),
    "lmn_bounded": lambda s: stable_estimator(LMNClassifier, "bounded")(random_state=s),
    "mslmn_old": lambda s: MultiScaleLMNClassifier(random_state=s),
    "mslmn_free": lambda s: stable_estimator(MultiScaleLMNClassifier)(random_state=s),
    "mslmn_bounded": lambda s: stable_estimator(MultiScaleLMNClassifier, "bounded")(
        random_state=s
    ),
    "lmn_none_old": lambda s: LMNClassifier(pretrainer=None, random_state=s),
    "lmn_none_free": lambda s: stable_estimator(LMNClassifier)(
        pretrainer=None, random_state=s
    ),
    "lmn_none_bounded": lambda s: stable_estimator(LMNClassifier, "bounded")(
        pretrainer=None, random_state=s
    ),
    "mslmn_none_old": lambda s: MultiScaleLMNClassifier(
        pretrainer=None, random_state=s
    ),
    "mslmn_none_free": lambda s: stable_estimator(MultiScaleLMNClassifier)(
        pretrainer=None, random_state=s
    ),
    "lmn_free_frozen": lambda s: stable_estimator(LMNClassifier, memory_lr=(0,))(
        random_state=s
    ),
    "lmn_free_frozen_both": lambda s: stable_estimator(
        LMNClassifier, memory_lr=(0, True)
    )(random_state=s),
    "lmn_free_lr0.1": lambda s: stable_estimator(LMNClassifier, memory_lr=(0.1,))(
        random_state=s
    ),
    "lmn_free_lr0.01": lambda s: stable_estimator(LMNClassifier, memory_lr=(0.01,))(
        random_state=s
    ),
    "lmn_free_norm": lambda s: stable_estimator(LMNClassifier, state_norm=True)(
        random_state=s
    ),
    "lmn_bounded_norm": lambda s: stable_estimator(
        LMNClassifier, "bounded", state_norm=True
    )(random_state=s),
    "mslmn_free_norm": lambda s: stable_estimator(
        MultiScaleLMNClassifier, state_norm=True
    )(random_state=s),
    "lmn_bounded_lr0.1": lambda s: stable_estimator(
        LMNClassifier, "bounded", memory_lr=(0.1,)
    )(random_state=s),
    "lmn_bounded_lr0.01": lambda s: stable_estimator(
        LMNClassifier, "bounded", memory_lr=(0.01,)
    )(random_state=s),
    "mslmn_bounded_lr0.01": lambda s: stable_estimator(
        MultiScaleLMNClassifier, "bounded", memory_lr=(0.01,)
    )(random_state=s),
    "mslmn_none_bounded": lambda s: stable_estimator(
        MultiScaleLMNClassifier, "bounded"
    )(pretrainer=None, random_state=s),
    "lmn_none_free_ring2": lambda s: stable_estimator(
        LMNClassifier, ring=(0.9, 0.999, math.pi / 10)
    )(pretrainer=None, random_state=s),
    "lmn_none_free_nonorm": lambda s: stable_estimator(LMNClassifier, normalize=False)(
        pretrainer=None, random_state=s
    ),
    "mslmn_none_free_ring2": lambda s: stable_estimator(
        MultiScaleLMNClassifier, ring=(0.9, 0.999, math.pi / 10)
    )(pretrainer=None, random_state=s),
    "lmn_free_lr0.01_both": lambda s: stable_estimator(
        LMNClassifier, memory_lr=(0.01, True)
    )(random_state=s),
    "mslmn_free_lr0.01_both": lambda s: stable_estimator(
        MultiScaleLMNClassifier, memory_lr=(0.01, True)
    )(random_state=s),
    "lmn_none_bounded_ring2": lambda s: stable_estimator(
        LMNClassifier, "bounded", ring=(0.9, 0.999, math.pi / 10)
    )(pretrainer=None, random_state=s),
    "mslmn_none_bounded_ring2": lambda s: stable_estimator(
        MultiScaleLMNClassifier, "bounded", ring=(0.9, 0.999, math.pi / 10)
    )(pretrainer=None, random_state=s),
    "lmn_none_free_ring2_lr0.1": lambda s: stable_estimator(
        LMNClassifier, ring=(0.9, 0.999, math.pi / 10), memory_lr=(0.1,)
    )(pretrainer=None, random_state=s),
    "lmn_none_free_ring2_lr0.01": lambda s: stable_estimator(
        LMNClassifier, ring=(0.9, 0.999, math.pi / 10), memory_lr=(0.01,)
    )(pretrainer=None, random_state=s),
    "mslmn_none_free_ring2_lr0.1": lambda s: stable_estimator(
        MultiScaleLMNClassifier, ring=(0.9, 0.999, math.pi / 10), memory_lr=(0.1,)
    )(pretrainer=None, random_state=s),
    "lmn_bounded_lr0.01_noise0.3": lambda s: stable_estimator(
        LMNClassifier, "bounded", memory_lr=(0.01,), noise=0.3
    )(random_state=s),
    "mslmn_bounded_lr0.01_noise0.3": lambda s: stable_estimator(
        MultiScaleLMNClassifier, "bounded", memory_lr=(0.01,), noise=0.3
    )(random_state=s),
    "lstm": lambda s: RNNClassifier(cell="lstm", random_state=s),
    "gru": lambda s: RNNClassifier(cell="gru", random_state=s),
}


def _param_variant(spec):
    """'name:key=value,key=value' -> factory with extra estimator params."""
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        k, _, v = item.partition("=")
        try:
            params[k] = json.loads(v)
        except json.JSONDecodeError:
            params[k] = v
    base = VARIANTS[name]

    def factory(s):
        est = base(s)
        return est.set_params(**params)

    return factory


def run_one(name, dataset, seed, data):
    Xtr, Xte, ytr, yte = data
    est = _param_variant(name)(seed)
    cbs = [("start_recorder", StartRecorder())]
    if not name.startswith(("lstm", "gru")):
        cbs.append(("radius_log", RadiusLog()))
    est.set_params(callbacks=cbs)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, ytr)
    fit_time = time.perf_counter() - t0
    final = float(est.score(Xte, yte))
    start_est = copy.deepcopy(est)
    rec = _callback(start_est, StartRecorder)
    start_est.net_.module_.load_state_dict(rec.state_)
    start = float(start_est.score(Xte, yte))
    losses = list(est.loss_curve_)
    out = {
        "dataset": dataset, "variant": name, "seed": seed, "start": start,
        "final": final, "spikes": count_loss_spikes(losses),
        "epochs": len(losses), "fit_time": fit_time,
        "anchor": getattr(est, "pretrained_alpha_", None),
    }
    log = _callback(est, RadiusLog)
    if log is not None and log.log_ and log.log_[0] is not None:
        arr = np.array(log.log_)
        out["rho_mm_max"], out["rho_I_max"], out["rho_D_max"] = arr.max(axis=0).tolist()
        out["rho_start"] = arr[0].tolist()
    pre = getattr(est, "pretrainer_", None)
    if pre is not None and hasattr(pre, "convert_info_"):
        out["clamped"] = [
            {"clamped": int(i["clamped"]), "excess": float(i["excess"])}
            for i in pre.convert_info_
        ]
    return out


def main(argv=None):
    """Fit the variants and append one JSON line per fit to ``--out``."""
    torch.set_num_threads(1)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", nargs="+", required=True)
    p.add_argument("--datasets", nargs="+",
                   default=["BasicMotions", "ItalyPowerDemand", "ArrowHead"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    done = set()
    try:
        with open(a.out) as f:
            for line in f:
                r = json.loads(line)
                done.add((r["dataset"], r["variant"], r["seed"]))
    except FileNotFoundError:
        pass
    for ds in a.datasets:
        data = load_timeseries_dataset(ds, split="both")
        for v in a.variants:
            for s in a.seeds:
                if (ds, v, s) in done:
                    continue
                r = run_one(v, ds, s, data)
                print(json.dumps(r), flush=True)
                with open(a.out, "a") as f:
                    f.write(json.dumps(r) + "\n")

