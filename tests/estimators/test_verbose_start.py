"""``verbose`` reports the start: one line per pretrainer run, the choice
between starts of ``input_expansion='auto'``, and a dropped start."""

import warnings

import numpy as np

from sklmn.estimators import LMNClassifier, LMNRegressor
from tests._helpers import _amplitude_task


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_verbose_reports_both_starts_and_the_choice(capsys):
    X, y = _amplitude_task()
    params = dict(hidden_size=8, memory_size=8, max_iter=2, random_state=0)
    est = _fit(LMNClassifier(**params, verbose=1), X, y)
    lines = capsys.readouterr().out.splitlines()
    starts = [line for line in lines if line.startswith("Start: LAESInitializer")]
    assert len(starts) == 2
    assert "expanded by 8 tanh steps" not in starts[0]
    assert "expanded by 8 tanh steps" in starts[1]
    scores = dict(est.input_expansion_scores_)
    assert f"readout cross-validated score {scores[0]:.4f}" in starts[0]
    assert f"C={est.pretrainer_.C_:g}" in starts[1]
    (choice,) = [line for line in lines if line.startswith("input_expansion=")]
    assert "keeps the expansion (K=8)" in choice and "margin 1/80" in choice
    # the start is reported before the first epoch
    first_epoch = next(i for i, line in enumerate(lines) if line.startswith("Epoch"))
    assert lines.index(choice) < first_epoch

    _fit(LMNClassifier(**params), X, y)
    assert capsys.readouterr().out == ""


def test_verbose_reports_a_dropped_start(capsys):
    # targets unrelated to the inputs: the start predicts no better than the
    # mean, and pretrainer='auto' trains from the random weights instead
    X, _ = _amplitude_task(n=60)
    target = np.random.RandomState(0).randn(60)  # leave-one-out R² -0.04
    est = LMNRegressor(
        hidden_size=8, memory_size=8, max_iter=2, random_state=0, verbose=1
    )
    _fit(est, X, target)
    out = capsys.readouterr().out
    assert est.pretrainer_ is None
    assert "Start: LAESInitializer" in out
    assert "training starts from the random weights" in out
