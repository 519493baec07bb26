"""The LMN classifiers' input expansion (``input_expansion``).

A fixed, fitted map applied to every standardized input step before the
network: each feature ``x`` is kept and read through ``K`` tanh steps at
the quantiles ``c_1 < ... < c_K`` of its training values,

    ``[x, tanh((x - c_1) / w), ..., tanh((x - c_K) / w)]``,

``w`` the mean gap between consecutive quantiles of that feature. The LAES
start then encodes the history of these ``d (K + 1)`` features: the linear
memory holds, besides the history of the input, that of how often and how
long the input stayed in each range of values, which a linear model of the
input history cannot represent (``docs/training.md``, "The input
expansion"). ``'auto'`` fits the start with and without the expansion and
keeps the one whose readout cross-validates better on the training
sequences by more than one sequence in ``n``.
"""

from __future__ import annotations

import dataclasses
import math
from numbers import Integral

import numpy as np
import torch

from ..pretraining import LAESInitializer
from ..utils._compat import Interval, StrOptions
from ..utils.sequences import Sequences

#: values of the float64 steps computed at once by ``expand_inputs``
_BLOCK_VALUES = 2**24
#: steps per feature of ``input_expansion='auto'``
AUTO_STEPS = 8
#: ``'auto'`` tries the expansion only up to this many input features (the
#: expanded input has ``(K + 1)`` times as many, and the LAES start's cost
#: grows with it)
AUTO_MAX_FEATURES = 16

INPUT_EXPANSION_CONSTRAINTS = {
    "input_expansion": [
        StrOptions({"auto", "none"}),
        Interval(Integral, 1, None, closed="left"),
    ],
}

#: docstring entry of ``input_expansion`` (the LMN classifiers)
INPUT_EXPANSION_DOC = f"""\
    input_expansion : 'auto', 'none' or int, default='auto'
        A fixed map of the standardized inputs before the network: each
        feature ``x`` is kept and read through ``K`` tanh steps,
        ``tanh((x - c_k) / w)``, at the quantiles ``c_k`` of its training
        values (``w`` the mean gap between them; each step standardized
        on the training sequences), so that the LAES start
        also remembers how long the input stayed in each range of values.
        An int is ``K``; ``'none'``: no expansion. ``'auto'``: the LAES
        start (``pretrainer='auto'`` or a
        :class:`~sklmn.pretraining.LAESInitializer`, kept, with a
        cross-validated readout, for one label per sequence) is fitted
        without and with ``K = {AUTO_STEPS}``, for inputs of up to
        {AUTO_MAX_FEATURES} features, and the expansion is kept when its
        readout's cross-validated accuracy on the training sequences
        (``readout_cv_score_``) is higher by more than one sequence in
        ``n`` (the second start is not fitted when the first one's
        accuracy leaves no room for that); otherwise, and without such a
        start, no expansion (the fit is then the one of ``'none'``). The
        choice is ``input_expansion_``.
        See ``docs/training.md``, "The input expansion".
"""

#: docstring entry of the fitted attributes of the expansion
INPUT_EXPANSION_ATTRIBUTES_DOC = """\
    input_expansion_ : int
        ``K``, the tanh steps per input feature of the fit (0: none).
    expansion_centers_ : ndarray of shape (K, n_features_in_) or None
        The steps' centers, in standardized units (None without expansion).
    expansion_widths_ : ndarray of shape (n_features_in_,) or None
        The steps' widths ``w`` per feature (None without expansion).
    expansion_mean_, expansion_scale_ : ndarray of shape (K, n_features_in_) or None
        Mean and standard deviation of each step's output on the training
        sequences: the network reads the steps standardized.
    input_expansion_scores_ : list of (int, float) or None
        ``input_expansion='auto'``: ``(K, cross-validated accuracy)`` of
        each start fitted (``K = 0``: without expansion; that one alone
        when the second start was not fitted or failed); None when
        nothing was compared.
"""


def fit_expansion(seqs: Sequences, n_steps: int) -> tuple[np.ndarray, ...]:
    """The ``K`` tanh steps per feature fitted on the valid steps of
    ``seqs``: their centers and widths, and the mean and scale that
    standardize their outputs.

    Parameters
    ----------
    seqs : Sequences
        The (standardized) training sequences.
    n_steps : int
        ``K``, at least 1.

    Returns
    -------
    centers : ndarray of shape (n_steps, n_features), float64
        The quantiles ``(k + 1/2) / K`` of each feature's valid values.
    widths : ndarray of shape (n_features,), float64
        The mean gap between consecutive centers (the feature's standard
        deviation when ``K = 1`` or the centers coincide; 1 for a constant
        feature).
    mean, scale : ndarray of shape (n_steps, n_features), float64
        Mean and standard deviation of each step's output over the valid
        steps (scale 1 where it is constant), so that every expanded
        feature enters the network standardized, as the inputs do.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators._expansion import fit_expansion
    >>> from sklmn.utils.sequences import Sequences
    >>> data = np.arange(8.0).reshape(1, 8, 1)
    >>> seqs = Sequences(data, np.array([8]), ragged=False, univariate=False)
    >>> centers, widths, mean, scale = fit_expansion(seqs, 2)
    >>> centers.ravel().tolist(), widths.tolist()
    ([1.75, 5.25], [3.5])
    """
    values = np.asarray(seqs.data, dtype=np.float64)[seqs.mask]  # (steps, d)
    levels = (np.arange(n_steps) + 0.5) / n_steps
    centers = np.quantile(values, levels, axis=0).reshape(n_steps, -1)
    spread = values.std(axis=0)
    fallback = np.where(spread > 0, spread, 1.0)
    widths = np.diff(centers, axis=0).mean(axis=0) if n_steps > 1 else spread
    # coinciding centers (a feature of few distinct values): steps of the
    # width of the feature's spread
    widths = np.where(widths > 1e-6 * fallback, widths, fallback)
    steps = np.tanh((values[:, None, :] - centers) / widths)  # (steps, K, d)
    mean, std = steps.mean(axis=0), steps.std(axis=0)
    scale = np.where(std > 1e-8, std, 1.0)
    return centers, widths, mean, scale


def expand_inputs(seqs: Sequences, expansion: tuple[np.ndarray, ...]) -> Sequences:
    """``seqs`` with every feature followed by its standardized tanh steps (a
    new :class:`~sklmn.utils.sequences.Sequences`; padding stays zero, the
    caller's arrays are not modified).

    Parameters
    ----------
    seqs : Sequences
        Standardized sequences with ``d`` features.
    expansion : tuple of ndarray
        ``(centers, widths, mean, scale)`` of :func:`fit_expansion`.

    Returns
    -------
    Sequences
        ``d (K + 1)`` features per step: the ``d`` inputs, then the first
        step of every feature, the second, and so on, each step
        ``(tanh((x - c) / w) - mean) / scale``; in the dtype of
        ``seqs.data``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators._expansion import expand_inputs
    >>> from sklmn.utils.sequences import Sequences
    >>> seqs = Sequences(np.zeros((1, 3, 1)), np.array([2]), ragged=True,
    ...                  univariate=False)
    >>> plain = (np.array([[-1.0], [1.0]]), np.array([2.0]), np.zeros((2, 1)),
    ...          np.ones((2, 1)))
    >>> out = expand_inputs(seqs, plain)
    >>> out.data.shape, np.round(out.data[0, 0], 3).tolist()
    ((1, 3, 3), [0.0, 0.462, -0.462])
    """
    centers, widths, mean, scale = expansion
    data = np.asarray(seqs.data)
    n, t, d = data.shape
    out = np.zeros((n, t, d * (1 + len(centers))), dtype=data.dtype)
    out[:, :, :d] = data
    # computed in float64, a block of sequences at a time (the steps of a
    # large set are several times the size of its inputs)
    block = max(1, _BLOCK_VALUES // max(1, t * out.shape[2]))
    for start in range(0, n, block):
        z = data[start : start + block].astype(np.float64)
        steps = (np.tanh((z[:, :, None, :] - centers) / widths) - mean) / scale
        # (rows, t, K d): the first step of every feature, then the second...
        out[start : start + block, :, d:] = steps.reshape(len(z), t, -1)
    out[~seqs.mask] = 0.0
    return dataclasses.replace(seqs, data=out, univariate=False)


class _InputExpansionMixin:
    """``input_expansion`` of the LMN classifiers: the fitted map, the
    network's input size, and the ``'auto'`` choice between two starts."""

    _fitted_attributes = {
        "input_expansion_": "int",
        "expansion_centers_": "array?",
        "expansion_widths_": "array?",
        "expansion_mean_": "array?",
        "expansion_scale_": "array?",
        "input_expansion_scores_": "list?",
    }

    #: models saved before ``input_expansion`` existed read their inputs
    #: as they are
    _added_parameter_values: dict = {"input_expansion": "none"}

    def _fit_input_expansion(self, seqs: Sequences) -> None:
        # K of this start: the int; for 'auto' and 'none' 0, unless this is
        # 'auto''s second start (_choose_start)
        steps = getattr(self, "_expansion_trial", None)
        if steps is None:
            value = self.input_expansion
            steps = 0 if isinstance(value, str) else int(value)
        self.input_expansion_ = int(steps)
        self.input_expansion_scores_ = None
        fitted = fit_expansion(seqs, steps) if steps else (None,) * 4
        (
            self.expansion_centers_,
            self.expansion_widths_,
            self.expansion_mean_,
            self.expansion_scale_,
        ) = fitted

    def _input_map(self, seqs: Sequences) -> Sequences:
        if getattr(self, "expansion_centers_", None) is None:  # none, or older
            return seqs
        fitted = (
            self.expansion_centers_,
            self.expansion_widths_,
            self.expansion_mean_,
            self.expansion_scale_,
        )
        return expand_inputs(seqs, fitted)

    def _input_map_note(self) -> str | None:
        steps = getattr(self, "input_expansion_", 0)
        return f"on the inputs expanded by {steps} tanh steps" if steps else None

    def _sklmn_state_(self) -> dict:
        state = super()._sklmn_state_()
        # the expanded input the network is built for is a size too
        steps = getattr(self, "input_expansion_", None)
        if steps is not None:
            state["sizes"]["input_expansion_"] = steps
        return state

    def _network_input_size(self) -> int:
        steps = int(getattr(self, "input_expansion_", 0))  # 0 in older models
        return int(self.n_features_in_) * (1 + steps)

    def _expansion_eligible(self, prepared) -> bool:
        """Whether ``'auto'`` compares a start with the expansion."""
        context = prepared.context
        score = getattr(self.pretrainer_, "readout_cv_score_", None)
        return (
            isinstance(self.input_expansion, str)
            and self.input_expansion == "auto"
            and isinstance(self.pretrainer_, LAESInitializer)
            and score is not None
            and math.isfinite(score)
            and context.problem == "multiclass"
            and not context.per_step
            and prepared.sequences.n_features <= AUTO_MAX_FEATURES
        )

    def _choose_start(self, module, prepared, second_start):
        """``'auto'``: the started module and its prepared data, or those of
        a second start with the expansion when its readout cross-validates
        better by more than one sequence in ``n`` (``second_start()``
        prepares, builds and starts it)."""
        if not self._expansion_eligible(prepared):
            return module, prepared
        base_score = float(self.pretrainer_.readout_cv_score_)
        n = prepared.context.sequences.n_samples
        if base_score + 1.0 / n >= 1.0:
            # an accuracy cannot pass the margin above this score: the second
            # start could not be kept, so it is not fitted
            self.input_expansion_scores_ = [(0, base_score)]
            if self.verbose:
                print(
                    "input_expansion='auto': no second start (the first's "
                    f"score {base_score:.4f} leaves no room above the margin)"
                )
            return module, prepared
        kept = dict(vars(self))
        rng = torch.get_rng_state()
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
        self._expansion_trial = AUTO_STEPS
        try:
            trial_module, trial_prepared = second_start()
            trial_score = getattr(self.pretrainer_, "readout_cv_score_", None)
        except (ValueError, ArithmeticError, torch.linalg.LinAlgError, MemoryError):
            # a start that fails on the expanded inputs (a singular LAES, too
            # large an input) leaves the first one, which succeeded
            trial_score = None
        finally:
            del self._expansion_trial
        scores = [(0, base_score)]
        if trial_score is not None and math.isfinite(trial_score):
            scores.append((AUTO_STEPS, float(trial_score)))
            if trial_score > base_score + 1.0 / n:
                self.input_expansion_scores_ = scores
                self._say_expansion(scores, n, AUTO_STEPS)
                return trial_module, trial_prepared
        # keep the first start: the estimator and torch's generator as it left
        # them (the fit then goes on exactly as without the trial)
        vars(self).clear()
        vars(self).update(kept)
        torch.set_rng_state(rng)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
        self.input_expansion_scores_ = scores
        self._say_expansion(scores, n, 0)
        return module, prepared

    def _say_expansion(self, scores, n: int, kept: int) -> None:
        """With ``verbose``: the scores ``'auto'`` compared and its choice."""
        if not self.verbose:
            return
        compared = ", ".join(f"K={k}: {score:.4f}" for k, score in scores)
        choice = f"the expansion (K={kept})" if kept else "no expansion"
        print(
            f"input_expansion='auto': {compared} (margin 1/{n}); keeps {choice}"
        )
