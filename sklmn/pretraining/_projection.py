"""The settings of ``fine_tuning='projection'`` as a scikit-learn object."""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import BaseEstimator

from .._training._projection import VariableProjection
from ..utils._compat import Interval, StrOptions
from ..utils._doc_link import _DocLinkMixin

__all__ = ["ProjectionFineTuning"]


class ProjectionFineTuning(_DocLinkMixin, BaseEstimator):
    """The memory trained through the readout that is refitted after it.

    Passed as ``fine_tuning=ProjectionFineTuning(...)`` to
    :class:`~sklmn.estimators.LMNClassifier` or
    :class:`~sklmn.estimators.MultiScaleLMNClassifier`, it is
    ``fine_tuning='projection'`` with these settings, which
    :class:`~sklearn.model_selection.GridSearchCV` can then tune
    (``fine_tuning__steps``, ``fine_tuning__lr``, ...).

    Before the smooth fine-tuning's first epoch, the recurrent part of the
    started network (not its readout) takes full-batch Adam steps on the
    cross-validated squared error of a ridge readout of the one-hot classes,
    solved in closed form (variable projection: Golub and Pereyra 1973, "The
    differentiation of pseudo-inverses and nonlinear least squares problems
    whose variables separate"); a logistic readout refitted on the result is
    written into the network's linear readout. How many steps are kept is
    chosen on stratified quarters of the start's sequences, each held out
    from a second start fitted on the other three (``guard_splits`` of
    them): a copy every ``every`` steps is scored there, and the first that
    predicts them better than the best so far by more than one sequence is
    kept (none: the start). With 36 training sequences or fewer (a quarter
    of fewer than 10) no steps are taken: one sequence would move a copy's
    score by more than 10 points. The steps kept
    are the fitted estimator's ``projection_steps_``. See
    ``docs/memory.md``, "Variable projection" and "The projection made
    cheaper".

    Parameters
    ----------
    steps : int, default=100
        Adam steps of the held-out quarter's run: the most steps kept.
    every : int, default=20
        Steps between two scored copies (at most ``steps``); the steps kept
        are a multiple of it.
    lr : float, default=1e-3
        Adam's learning rate.
    folds : int, default=5
        Folds of the ridge objective, drawn anew at every step (fewer when
        a class has fewer sequences; at least 2).
    splines : bool, default=True
        Give the network a readout of each pooled
        feature's piecewise-linear splines (knots at nine quantiles of the
        training sequences' features) when a logistic readout of them
        cross-validates better on the training sequences than one of the
        standardized features, by more than two sequences; the fitted
        estimator's ``projection_splines_`` says whether it did. Where
        the comparison on the start's features already prefers the splines,
        the copies are also scored on the held-out quarter with a spline
        readout, so that the steps kept are those that serve it, and the
        splines are attached after them. False: the linear readout only.
        See ``docs/memory.md``, "The spline readout" and "The guard reads
        the splines".
    guard_splits : int or 'auto', default=1
        How many of the four stratified quarters of the sequences are held
        out in turn to choose the steps (1 to 4), each from a start fitted
        on the other three; a copy's score is then its share right of all
        the held-out sequences together, and the margin one sequence of
        them all. ``'auto'``: as many quarters as hold out about a hundred
        sequences (all four up to 132 sequences, one from 397 up). More
        than one costs a start and a guard's run per quarter. See
        ``docs/memory.md``, "Several held-out quarters".

    See Also
    --------
    sklmn.estimators.LMNClassifier : its ``fine_tuning`` parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.estimators import LMNClassifier
    >>> from sklmn.pretraining import ProjectionFineTuning
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 10, 2)
    >>> y = (X[:, :3, 0].sum(1) > 0).astype(int)
    >>> clf = LMNClassifier(
    ...     hidden_size=6, memory_size=4, max_iter=3, random_state=0,
    ...     fine_tuning=ProjectionFineTuning(steps=20, every=10),
    ... ).fit(X, y)
    >>> clf.fine_tuning_, clf.projection_steps_ in (0, 10, 20)
    ('projection', True)
    """

    _parameter_constraints: dict = {
        "steps": [Interval(Integral, 1, None, closed="left")],
        "every": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "folds": [Interval(Integral, 2, None, closed="left")],
        "splines": ["boolean"],
        "guard_splits": [
            Interval(Integral, 1, 4, closed="both"), StrOptions({"auto"}),
        ],
    }

    def __init__(
        self, steps=100, every=20, lr=1e-3, folds=5, splines=True, guard_splits=1
    ):
        self.steps = steps
        self.every = every
        self.lr = lr
        self.folds = folds
        self.splines = splines
        self.guard_splits = guard_splits

    def __setstate__(self, state):
        # settings pickled before guard_splits existed held out one quarter
        state = dict(state)
        state.setdefault("guard_splits", 1)
        super().__setstate__(state)

    def validate(self) -> None:
        """Check the settings; a bad one raises an error that names it.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A setting of the wrong type or out of its range.
        ValueError
            ``every`` above ``steps`` (no copy would be scored).

        Examples
        --------
        >>> from sklmn.pretraining import ProjectionFineTuning
        >>> ProjectionFineTuning(every=50, steps=20).validate()
        Traceback (most recent call last):
        ...
        ValueError: every must be at most steps (no copy would be scored), got ...
        """
        self._validate_params()
        if self.every > self.steps:
            raise ValueError(
                f"every must be at most steps (no copy would be scored), got "
                f"every={self.every} and steps={self.steps}"
            )

    def make_callback(self, *, dataset, guard_start, random_state):
        """The skorch callback that runs the steps at the start of training.

        Parameters
        ----------
        dataset : SequenceDataset
            The sequences the start was fitted on.
        guard_start : callable
            ``guard_start(rows)``: a network of the same architecture started
            on the sequences ``rows`` only.
        random_state : int
            Seed of the held-out quarter and of the folds.

        Returns
        -------
        callback : skorch.callbacks.Callback
            A ``VariableProjection`` callback with these settings.
        """
        self.validate()
        return VariableProjection(
            steps=self.steps,
            every=self.every,
            lr=float(self.lr),
            folds=self.folds,
            dataset=dataset,
            guard_start=guard_start,
            random_state=random_state,
            splines=bool(self.splines),
            guard_splits=self.guard_splits,
        )
