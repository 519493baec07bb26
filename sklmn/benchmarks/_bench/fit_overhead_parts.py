"""The measured pieces of ``bench fit-overhead``: data, hand loop, timed fits, probes.

The command line and the report are in :mod:`sklmn.benchmarks._bench.fit_overhead`.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import statistics
import sys
import time
import warnings
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F

#: name: (sequences, steps T, features d, shortest length); "acceptance" is
#: the case of the acceptance figure (400 sequences of 40 steps, all full)
DATA = {
    "small": (200, 50, 4, 25),
    "medium": (2000, 100, 8, 50),
    "acceptance": (400, 40, 4, 40),
}
N_CLASSES = 3

#: the clocks of ``--clock``: wall time, or the CPU time of the process
#: (with one torch thread, the work of the fit, without the time spent
#: waiting for a core that other processes hold)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_CLOCK = [time.perf_counter]


def set_clock(name: str) -> None:
    """Time with the clock ``name`` of :data:`CLOCKS` from now on."""
    _CLOCK[0] = CLOCKS[name]


def now() -> float:
    """The current reading of the clock chosen by :func:`set_clock`."""
    return _CLOCK[0]()


# ---------------------------------------------------------------------- data
def make_data(n: int, T: int, d: int, shortest: int | None = None, seed: int = 0):
    """NaN-padded float32 array for ``fit`` and the zero-padded tensors of the
    hand loop (same sequences, lengths uniform in ``shortest``..T, by default
    T/2..T, 3 classes)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d).astype(np.float32)
    lengths = rng.randint(T // 2 if shortest is None else shortest, T + 1, size=n)
    mask = np.arange(T)[None, :] < lengths[:, None]
    score = (X[:, :, 0] * mask).sum(1) / np.sqrt(lengths)
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(np.int64)
    X_nan = np.where(mask[:, :, None], X, np.nan).astype(np.float32)
    X_zero = torch.from_numpy(np.where(mask[:, :, None], X, 0.0).astype(np.float32))
    return (
        X_nan,
        y,
        (X_zero, torch.from_numpy(lengths.astype(np.int64)), torch.from_numpy(y)),
    )


def make_estimator(model: str, epochs: int, batch: int):
    from sklmn.estimators import LMNClassifier, RNNClassifier

    kw = dict(
        max_iter=epochs,
        batch_size=batch,
        early_stopping=False,
        standardize=False,
        n_iter_no_change=10 * epochs + 10,
        tol=0.0,
        random_state=0,
    )
    if model == "lstm":
        return RNNClassifier(cell="lstm", **kw)
    return LMNClassifier(pretrainer=None, **kw)


# ------------------------------------------------------------------ hand loop
def hand_optimizer(module, lr: float, weight_decay: float):
    """Adam with weight decay on weights only (as ``fit``: biases undecayed)."""
    weights, biases = [], []
    for name, p in module.named_parameters():
        (biases if name.rsplit(".", 1)[-1].startswith("bias") else weights).append(p)
    return torch.optim.Adam(
        [{"params": weights}, {"params": biases, "weight_decay": 0.0}],
        lr=lr,
        weight_decay=weight_decay,
    )


def eval_subsample(n: int, seed: int = 0) -> torch.Tensor:
    """The training sequences fit's stopping rule measures (its
    ``train_eval_size='auto'``): all of them up to 128, else a fixed random
    eighth, at least 128, drawn with the shuffle seed; in decreasing length
    order they make its evaluation batches."""
    size = min(n, max(128, -(-n // 8)))
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:size]


def _eval_loss(module, X, lengths, y, batch: int, index=None) -> float:
    """Evaluation-mode loss of ``module`` on the sequences ``index`` (all:
    None), in batches of ``batch`` sequences sorted by decreasing length."""
    if index is None:
        index = torch.arange(len(y))
    index = index[torch.argsort(lengths[index], descending=True, stable=True)]
    module.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(index), batch):
            idx = index[i : i + batch]
            lb = lengths[idx]
            out = module(X[idx, : int(lb.max())], lengths=lb)
            total += float(F.cross_entropy(out, y[idx])) * len(idx)
    module.train()
    return total / len(index)


def hand_loop(
    module, tensors, *, epochs, batch, lr, weight_decay, clip, evaluate=False, seed=0
):
    """Train ``module`` by hand; returns the per-epoch mean training losses.

    With ``evaluate``, what fit's best-weight selection does: the loss of
    the weights before training and after every epoch on the sequences of
    :func:`eval_subsample` (batches of ``max(batch, 256)``, fit's evaluation
    batch size), a copy of the weights when it is the lowest so far, and
    the best weights loaded at the end.
    """
    X, lengths, y = tensors
    n = len(y)
    opt = hand_optimizer(module, lr, weight_decay)
    gen = torch.Generator().manual_seed(seed)
    eval_batch = max(batch, 256)  # fit's iterator_valid batch size
    index = eval_subsample(n, seed) if evaluate else None
    best = _eval_loss(module, X, lengths, y, eval_batch, index) if evaluate else None
    best_state = None
    if evaluate:
        best_state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    module.train()
    curve = []
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for i in range(0, n, batch):
            idx = perm[i : i + batch]
            lb = lengths[idx]
            xb = X[idx, : int(lb.max())]
            opt.zero_grad()
            loss = F.cross_entropy(module(xb, lengths=lb), y[idx])
            loss.backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
            opt.step()
            total += loss.item() * len(idx)
        curve.append(total / n)
        if evaluate:
            value = _eval_loss(module, X, lengths, y, eval_batch, index)
            if value < best:
                best = value
                best_state = {
                    k: v.detach().clone() for k, v in module.state_dict().items()
                }
    if evaluate and best_state is not None:
        module.load_state_dict(best_state)
    return curve


# ------------------------------------------------------------ fit variants
_CLASSES: tuple = ()


def _training_classes():
    """(net class, stopping-rule class, module defining the stopping rule,
    dataset class) that ``fit`` really uses, read off a tiny fitted
    estimator (they moved between modules in the ``sklmn/_training``
    refactor)."""
    global _CLASSES
    if not _CLASSES:
        X, y, _ = make_data(8, 4, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = make_estimator("lmn", 1, 4).fit(X, y)
        net = est.net_
        cm = type(dict(net.callbacks_)["convergence"])
        dataset_cls = _dataset_class(type(net))
        _CLASSES = (type(net), cm, sys.modules[cm.__module__], dataset_cls)
    return _CLASSES


def _dataset_class(net_cls):
    """Class of the training dataset (the first one the net iterates over
    in training)."""
    seen = []
    original = net_cls.get_iterator

    def spy(self, dataset, training=False):
        if training:
            seen.append(type(dataset))
        return original(self, dataset, training=training)

    net_cls.get_iterator = spy
    try:
        X, y, _ = make_data(8, 4, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_estimator("lmn", 1, 4).fit(X, y)
    finally:
        net_cls.get_iterator = original
    return seen[0]


def _monitor_class():
    _, cm, cm_module, _ = _training_classes()
    return cm_module, cm


@contextlib.contextmanager
def timed_monitor(sink: list):
    """Accumulate the seconds spent in the stopping rule into ``sink``."""
    _, cm = _monitor_class()
    originals = {}
    for name in ("on_train_begin", "on_epoch_end", "on_train_end"):
        original = cm.__dict__.get(name)
        if original is None:
            continue
        originals[name] = original

        def wrapper(self, *a, _f=original, **k):
            t0 = now()
            try:
                return _f(self, *a, **k)
            finally:
                sink.append(now() - t0)

        setattr(cm, name, wrapper)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(cm, name, original)


@contextlib.contextmanager
def no_best_weight_eval():
    """Stopping rule without its evaluation passes and state snapshots: it
    monitors the epoch's running training loss and keeps the last weights."""
    net_mod, cm = _monitor_class()
    saved = (cm._measure_start, cm._value, net_mod.snapshot_state)
    cm._measure_start = lambda self, net: (np.inf, None)
    cm._value = lambda self, net, row: float(row["train_loss"])
    net_mod.snapshot_state = lambda module: None
    try:
        yield
    finally:
        cm._measure_start, cm._value, net_mod.snapshot_state = saved


@contextlib.contextmanager
def timed_epochs(sink: list):
    """Accumulate the seconds of the training passes of the epochs
    (``run_single_epoch`` with ``training=True``) into ``sink``."""
    import skorch.net

    owner = skorch.net.NeuralNet
    cls = _training_classes()[0]
    if "run_single_epoch" in cls.__dict__:
        owner = cls
    original = owner.__dict__["run_single_epoch"]

    def wrapper(self, iterator, training, *a, **k):
        if not training:
            return original(self, iterator, training, *a, **k)
        t0 = now()
        try:
            return original(self, iterator, training, *a, **k)
        finally:
            sink.append(now() - t0)

    owner.run_single_epoch = wrapper
    try:
        yield
    finally:
        owner.run_single_epoch = original


def run_fit(model, X, y, epochs, batch, context=contextlib.nullcontext):
    """(total s, training passes s, stopping-rule s, estimator) of one fit."""
    est = make_estimator(model, epochs, batch)
    sink: list = []
    passes: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with timed_monitor(sink), timed_epochs(passes), context():
            t0 = now()
            est.fit(X, y)
            total = now() - t0
    hist = est.net_.history
    if len(hist) != epochs:
        raise RuntimeError(f"fit ran {len(hist)} epochs, expected {epochs}")
    return total, float(sum(passes)), float(sum(sink)), est


# --------------------------------------------------------------- prototypes
def _fast_iterator(self, dataset, training=False):
    """Prototype of SequenceNeuralNet.get_iterator without a DataLoader: the
    same seeded permutation, batches fetched whole by __getitems__."""
    if not training:
        return _PROTO_ORIG["get_iterator"](self, dataset, training=training)
    batch = self.batch_size
    gen = torch.Generator().manual_seed(int(self.shuffle_seed))

    class _Batches:
        def __len__(self_):
            return -(-len(dataset) // batch)

        def __iter__(self_):
            perm = torch.randperm(len(dataset), generator=gen)
            for i in range(0, len(dataset), batch):
                yield dataset.__getitems__(perm[i : i + batch])

    return _Batches()


_PROTO_ORIG: dict = {}

#: evaluation batch of the "evalsort" prototype: fit's own (max(batch, 256));
#: measured on the medium data, 1 thread, eval pass of the LMN (LSTM) in ms:
#: 64: 99 (104), 256: 53 (71), 1024: 81 (107), 2048: 88 (116) unsorted and
#: 71 (81), 39 (62), 58 (91), 94 (122) sorted by length: larger batches lose
#: (cache), sorting by length saves 27% (13%)
EVAL_BATCH = 256


def _fast_eval_iterator(self, dataset, training=False):
    """Prototype of the evaluation iterator of best-weight selection:
    sequences in decreasing length order, so that each batch (trimmed to
    its longest sequence) wastes little on padding. Only valid where the
    loss is all that is read (a mean is order-invariant), not where outputs
    are matched to targets (or they must be put back in order)."""
    if training:
        return _PROTO_ORIG["get_iterator"](self, dataset, training=training)
    order = torch.argsort(dataset.lengths, descending=True, stable=True)

    class _Batches:
        def __len__(self_):
            return -(-len(dataset) // EVAL_BATCH)

        def __iter__(self_):
            for i in range(0, len(dataset), EVAL_BATCH):
                yield dataset.__getitems__(order[i : i + EVAL_BATCH])

    return _Batches()


def _lean_train_step(self, batch, **fit_params):
    """Prototype of a SequenceNeuralNet.train_step without the closure, the
    TeeGenerator and the notify('on_grad_computed') round: zero_grad, forward,
    loss, backward, clip (when the net clips), step."""
    self._zero_grad_optimizer()
    step = self.train_step_single(batch, **fit_params)
    clip = getattr(self, "_proto_clip", None)
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(self.module_.parameters(), clip)
    else:
        self.notify(
            "on_grad_computed",
            named_parameters=list(self.get_all_learnable_params()),
            batch=batch,
            training=True,
        )
    self.optimizer_.step()
    return step


def _set_training_once(self, training=True):
    """Prototype: switch train/eval mode only when it changes."""
    if getattr(self, "_proto_mode", None) is training:
        return
    self._proto_mode = training
    _PROTO_ORIG["_set_training"](self, training)


@contextlib.contextmanager
def prototype(names: set[str]):
    """Monkey-patch SequenceNeuralNet / skorch with the named prototypes."""
    from skorch.callbacks import GradientNormClipping

    cls = _training_classes()[0]
    patches = []  # (owner, attribute, original)

    def patch(owner, attr, value):
        patches.append((owner, attr, owner.__dict__.get(attr, getattr(owner, attr))))
        setattr(owner, attr, value)

    _PROTO_ORIG["get_iterator"] = cls.get_iterator
    _PROTO_ORIG["_set_training"] = cls._set_training
    if "loader" in names:
        patch(cls, "get_iterator", _fast_iterator)
    if "step" in names:
        # the clipping callback becomes a no-op; the lean step clips directly
        orig_initialize = cls.initialize_callbacks

        def initialize_callbacks(self):
            out = orig_initialize(self)
            clip = None
            for _, cb in self.callbacks_:
                if isinstance(cb, GradientNormClipping):
                    clip = cb.gradient_clip_value
            self._proto_clip = clip
            return out

        patch(cls, "initialize_callbacks", initialize_callbacks)
        patch(cls, "train_step", _lean_train_step)
        patch(GradientNormClipping, "on_grad_computed", lambda self, *a, **k: None)
    if "mode" in names:
        patch(cls, "_set_training", _set_training_once)
    if "evalsort" in names:
        if "loader" in names:

            def both(self, dataset, training=False):
                if training:
                    return _fast_iterator(self, dataset, training=True)
                return _fast_eval_iterator(self, dataset, training=False)

            patch(cls, "get_iterator", both)
        else:
            patch(cls, "get_iterator", _fast_eval_iterator)
    if "noeval" in names:
        with no_best_weight_eval():
            try:
                yield
            finally:
                for owner, attr, original in reversed(patches):
                    setattr(owner, attr, original)
        return
    try:
        yield
    finally:
        for owner, attr, original in reversed(patches):
            setattr(owner, attr, original)


# ------------------------------------------------------------------ breakdown
@contextlib.contextmanager
def wrapped(acc: dict, targets):
    """Accumulate the wall time of each (owner, attribute, label) into acc."""
    saved = []
    for owner, attr, label in targets:
        original = owner.__dict__.get(attr)
        if original is None:
            original = getattr(owner, attr)
        saved.append((owner, attr, original))

        def wrapper(*a, _f=original, _label=label, **k):
            t0 = now()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] += now() - t0

        setattr(owner, attr, wrapper)
    try:
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def breakdown(model, X, y, epochs, batch, rounds: int):
    """Seconds per epoch of fit's components (median over rounds)."""
    import skorch.net
    from skorch.callbacks import GradientNormClipping
    from skorch.history import History

    cls, cm, cm_module, dataset_cls = _training_classes()
    dl_iter = torch.utils.data.dataloader._BaseDataLoaderIter
    results = defaultdict(list)
    for _ in range(rounds):
        acc: dict = defaultdict(float)
        targets = [
            (dl_iter, "__next__", "data: DataLoader.__next__ (incl. __getitems__)"),
            (dataset_cls, "__getitems__", "data: SequenceDataset.__getitems__"),
            (cls, "get_iterator", "data: get_iterator (DataLoader setup)"),
            (cls, "infer", "forward: net.infer (module forward)"),
            (cls, "get_loss", "loss: get_loss (criterion + penalty + isfinite)"),
            (torch.Tensor, "backward", "backward: loss.backward"),
            (GradientNormClipping, "on_grad_computed", "clip: GradientNormClipping"),
            (cls, "_zero_grad_optimizer", "optimizer: zero_grad"),
            (cls, "_set_training", "skorch: _set_training (module.train/eval)"),
            (cls, "notify", "skorch: notify (all callback hooks)"),
            (History, "record_batch", "skorch: history.record_batch"),
            (History, "new_batch", "skorch: history.new_batch"),
            (cls, "train_step", "step: train_step total"),
            (cls, "train_step_single", "step: train_step_single"),
            (skorch.net.NeuralNet, "run_single_epoch", "epoch: run_single_epoch"),
            (cm, "on_epoch_end", "best-weight: ConvergenceMonitor.on_epoch_end"),
            (cm, "on_train_begin", "best-weight: ConvergenceMonitor.on_train_begin"),
            (cm_module, "dataset_loss", "best-weight: dataset_loss"),
        ]
        if hasattr(cm_module, "_mean_loss"):  # the evaluation of cached batches
            targets.append((cm_module, "_mean_loss", "best-weight: _mean_loss"))
        opt_cls = torch.optim.Adam
        targets.append((opt_cls, "step", "optimizer: Adam.step (incl. closure)"))
        targets += _setup_targets(model, cls)
        with wrapped(acc, targets):
            total, dur, mon, est = run_fit(model, X, y, epochs, batch)
        acc["fit total"] = total
        acc["fit epochs (training passes)"] = dur
        for k, v in acc.items():
            results[k].append(v / epochs)
    return {k: statistics.median(v) for k, v in results.items()}


def _setup_targets(model, net_cls):
    """Wrappable setup steps of fit (input validation, module build, net
    initialization), where they exist in this version of sklmn."""
    import inspect

    est_cls = type(make_estimator(model, 1, 1))
    fit_module = sys.modules[inspect.unwrap(est_cls.fit).__module__]
    found = []
    for owner, attr, label in (
        (fit_module, "validate_sequences", "setup: validate_sequences"),
        (est_cls, "_encode_target", "setup: _encode_target"),
        (est_cls, "_build_module", "setup: _build_module (module init)"),
        (est_cls, "_make_net", "setup: _make_net"),
        (net_cls, "initialize", "setup: net.initialize (optimizer, callbacks)"),
    ):
        if hasattr(owner, attr):
            found.append((owner, attr, label))
    return found


def profile_fit(model, X, y, epochs, batch, top: int) -> str:
    pr = cProfile.Profile()
    pr.enable()
    run_fit(model, X, y, epochs, batch)
    pr.disable()
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


# ----------------------------------------------------------------------- main
def _fmt(v: float) -> str:
    return f"{1000 * v:.0f}" if v >= 0.1 else f"{1000 * v:.1f}"
