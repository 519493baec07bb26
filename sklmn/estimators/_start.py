"""The pretrained start of the estimators that have a ``pretrainer``.

:class:`_PretrainerMixin` runs a pretrainer before training (every
estimator with a ``pretrainer`` parameter); :class:`_PretrainedStartMixin`
adds the start policy of the LMN and multi-scale LMN estimators: whether a
``pretrainer='auto'`` start is kept, how strongly fine-tuning is anchored to
it (``pretrained_alpha``), and what the readout reads (``pooling``). The
generic base reaches them through its hooks ``_initialize_module``,
``_pooling`` and ``_start_callbacks``. The measurements behind the
thresholds are in ``docs/training.md``.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
from sklearn.base import clone

from .._training import AnchorToStart, FitContext, SequenceNet, valid_entries

__all__: list[str] = []

#: Leave-one-out R² a regressor's pretrained start must exceed to be kept by
#: ``pretrainer='auto'``: above 0 (the mean's), with a margin for the
#: optimism of the best of the GCV grid's penalties
_MIN_START_R2 = 0.01

#: ``pretrained_alpha='auto'``: fine-tuning is anchored with this strength to
#: a start whose cross-validated score (``readout_cv_score_`` of the
#: pretrainer: accuracy, or leave-one-out R²) is at least
#: ``_AUTO_ANCHOR_MIN_SCORE``, and free otherwise (docs/training.md)
_AUTO_ANCHOR, _AUTO_ANCHOR_MIN_SCORE = 10.0, 0.9


def _seed_plugin_(plugin, random_state) -> None:
    """Give ``plugin`` (a cloned pretrainer) a seed of the fit's own.

    A plug-in whose ``random_state`` is None would otherwise draw from
    numpy's global state, so that two fits of an estimator with an int
    ``random_state`` could differ. Its seed is derived from the seed of
    torch's generator inside the fit's seeded block (nothing is drawn, so no
    other random stream of the fit moves); an estimator without a
    ``random_state`` leaves the plug-in as it is.
    """
    if random_state is None:
        return
    params = plugin.get_params(deep=False) if hasattr(plugin, "get_params") else {}
    if "random_state" in params and params["random_state"] is None:
        seed = np.random.RandomState(torch.initial_seed() % 2**32)
        plugin.set_params(random_state=int(seed.randint(np.iinfo(np.int32).max)))


def _start_predicts(pretrainer) -> bool:
    """Whether a pretrained start predicts held-out training sequences
    better than their mean: its readout's leave-one-out R² is above
    ``_MIN_START_R2``, or was not measured (classification readouts, fixed
    ridge penalties)."""
    r2 = getattr(pretrainer, "readout_loo_r2_", None)
    return r2 is None or not np.isfinite(r2) or r2 > _MIN_START_R2


def _resolve_pooling_(module: SequenceNet, pretrainer) -> str:
    """The pooling ``module`` reads after its start: ``'auto'`` resolved.

    A pretrained start leaves it as it is: chosen by
    :class:`~sklmn.pretraining.LAESInitializer` (``pretrainer.pooling_``),
    the last step for a pretrainer that does not choose. Without a start (no
    pretrainer, or a regressor's rejected one) the mean block joins the
    readout at scale 1, its weights at zero, and the block of extrema stays
    off: the network's function at the start is unchanged, and training can
    use both blocks (docs/training.md, "Large training sets"; the extrema
    from scratch were measured and not taken, "The extrema block").
    """
    if module.pooling == "auto" and pretrainer is None:
        module.start_mean_block_()
    return module.resolved_pooling


@torch.no_grad()
def _predict_the_mean_(readout: torch.nn.Linear, context: FitContext) -> None:
    """Set a linear readout to predict the (weighted) mean of the training
    targets of ``context`` (continuous, in model units): zero weights, the
    mean as the bias."""
    y = np.asarray(context.y, dtype=np.float64)
    lengths = np.asarray(context.sequences.lengths)
    # the valid entries (steps) of the targets and of their weights
    y, _, *weight = valid_entries(
        context.per_step, y, y, lengths, context.sample_weight
    )
    mean = np.average(y.reshape(len(y), -1), axis=0, weights=(weight or [None])[0])
    readout.weight.zero_()
    readout.bias.copy_(torch.as_tensor(mean, dtype=readout.bias.dtype))


class _PretrainerMixin:
    """Estimators with a ``pretrainer`` parameter: the pretrainer, cloned
    into ``pretrainer_``, initializes the module before training."""

    #: the class to name when ``pretrainer__<key>`` is set on a string
    #: ``pretrainer`` ('auto') or None, see ``_BaseSequenceEstimator.set_params``
    _rule_parameter_objects: dict = {
        "pretrainer": "sklmn.pretraining.LAESInitializer"
    }

    def _resolve_pretrainer(self, n_samples: int, context: FitContext | None = None):
        """The pretrainer of a fit on ``n_samples`` sequences (the
        ``pretrainer`` parameter; the LMN estimators resolve ``'auto'``
        here, for the training data of ``context``)."""
        return self.pretrainer

    def _initialize_module(
        self, module: SequenceNet, context: FitContext, n_samples: int
    ) -> None:
        """Clone the pretrainer of this fit into ``pretrainer_`` (None
        without one) and let it initialize ``module`` from ``context`` (the
        training part of the data when a validation split is held out)."""
        pretrainer = self._resolve_pretrainer(n_samples, context)
        self.pretrainer_ = None
        if pretrainer is not None:
            self.pretrainer_ = clone(pretrainer)
            _seed_plugin_(self.pretrainer_, self.random_state)
            started = time.perf_counter()
            self.pretrainer_.initialize(module, context)
            if getattr(self, "verbose", 0):
                print(_start_line(self, time.perf_counter() - started))


def _start_line(estimator, seconds: float) -> str:
    """The line ``verbose`` prints after a pretrainer started the model: the
    pretrainer, the inputs it read, its readout's choices and
    cross-validated score, and the time it took."""
    pretrainer = estimator.pretrainer_
    parts = [f"Start: {type(pretrainer).__name__}"]
    note = estimator._input_map_note()
    if note:
        parts.append(note)
    pooling = getattr(pretrainer, "pooling_", None)
    if pooling is not None:
        parts.append(f"pooling {pooling!r}")
    C = getattr(pretrainer, "C_", None)
    if C is not None:
        parts.append(f"C={C:g}")
    score = getattr(pretrainer, "readout_cv_score_", None)
    if score is not None and np.isfinite(score):
        parts.append(f"readout cross-validated score {score:.4f}")
    return ", ".join(parts) + f" ({seconds:.1f}s)"


class _PretrainedStartMixin(_PretrainerMixin):
    """The start policy of the LMN estimators (``pretrainer='auto'``,
    ``pretrained_alpha``, ``pooling``)."""

    #: models saved before ``pretrained_alpha`` existed fine-tuned their start
    #: freely; models saved before ``pooling`` existed read the last step
    #: only; models saved before ``memory_lr_scale`` existed trained every
    #: parameter at one rate; models saved before ``fine_tuning`` existed
    #: fine-tuned the whole pretrained network; models saved before
    #: ``memory_ring`` existed drew the model's own ring (None)
    _added_parameter_values: dict = {
        "pretrained_alpha": 0.0,
        "pooling": "last",
        "memory_lr_scale": 1.0,
        "fine_tuning": "full",
        "memory_ring": None,
    }

    def _initialize_module(
        self, module: SequenceNet, context: FitContext, n_samples: int
    ) -> None:
        auto = isinstance(self.pretrainer, str)  # 'auto'
        random_start = copy.deepcopy(module.state_dict()) if auto else None
        super()._initialize_module(module, context, n_samples)
        if auto and self.pretrainer_ is not None:
            if not _start_predicts(self.pretrainer_):
                # a start whose readout predicts held-out training sequences
                # no better than their mean: a linear model of the history
                # that explains nothing, from which fine-tuning does not
                # escape. What it amounts to is kept: the training mean,
                # predicted by a zero readout on the random memory (the
                # epoch-0 candidate of the best weights; docs/training.md)
                module.load_state_dict(random_start)
                self.pretrainer_ = None
                if getattr(self, "verbose", 0):
                    print(
                        "pretrainer='auto': the start predicts no better than "
                        "the mean; training starts from the random weights"
                    )
                if context.problem == "continuous":
                    _predict_the_mean_(module.readout, context)
        self.pretrained_alpha_ = self._anchor_strength()
        self.pooling_ = _resolve_pooling_(module, self.pretrainer_)

    def _anchor_strength(self) -> float:
        """The anchor of this fit's fine-tuning: ``pretrained_alpha``, with
        ``'auto'`` resolved from ``pretrainer_`` (0 without one)."""
        if getattr(self, "pretrainer_", None) is None:
            return 0.0
        anchor = self.pretrained_alpha
        if not isinstance(anchor, str):
            return float(anchor)
        score = getattr(self.pretrainer_, "readout_cv_score_", None)
        strong = score is not None and np.isfinite(score)
        return _AUTO_ANCHOR if strong and score >= _AUTO_ANCHOR_MIN_SCORE else 0.0

    def _pooling(self) -> str:
        """The readout's pooling: ``pooling`` for sequence-level targets,
        ``'last'`` otherwise."""
        if self.target != "sequence":
            return "last"
        return self.pooling

    def _start_callbacks(self, context: FitContext) -> list:
        """Fine-tuning pulled toward the pretrained start (L2-SP), on a new
        model with a start and a nonzero ``pretrained_alpha_``."""
        anchor = getattr(self, "pretrained_alpha_", 0.0)
        if (
            anchor
            and not context.warm_start
            and getattr(self, "pretrainer_", None) is not None
        ):
            return [("anchor_to_start", AnchorToStart(float(anchor)))]
        return []
