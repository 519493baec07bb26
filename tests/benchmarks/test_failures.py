"""What the benchmark report says when a run diverges, fails or loses its worker."""

import os
import signal
import sys
import warnings

import numpy as np
import pytest

from sklmn.benchmarks._exp_common import (
    divergence_note,
    fit_timed,
    kept_epoch,
    pinned,
)
from sklmn.benchmarks._progress import PoolEvent, RunProgress, _record_restarts
from sklmn.benchmarks._runner import (
    ExperimentResult,
    Row,
    format_markdown,
    merge_seeds,
    run_experiments,
)
from sklmn.estimators import LMNRegressor


def _diverging_fit():
    rng = np.random.RandomState(0)
    X = rng.randn(32, 10, 1)
    y = X.sum(axis=(1, 2)) * 1e3
    est = pinned(
        LMNRegressor,
        hidden_size=4,
        memory_size=4,
        max_iter=5,
        learning_rate_init=100.0,
        gradient_clipping=None,
        standardize=False,
    )
    lines = []
    est, _ = fit_timed(est, X, y, lines.append, "LMN, lr 100")
    return est, lines


def test_a_diverged_row_says_where_and_how():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # fit_timed reports it, stderr stays quiet
        est, lines = _diverging_fit()
    assert est is not None and est.diverged_
    note = kept_epoch(est)
    # the row says it diverged, at which epoch, with the loss that did it
    assert note.startswith("**training diverged at epoch 1: ")
    assert "loss" in note and ("nan" in note or "inf" in note or "e+" in note)
    assert f"kept epoch {est.best_epoch_}" in note
    assert "training diverged at epoch 1" in lines[-1]
    report = format_markdown(
        [ExperimentResult("x", rows=[Row("t", "LMN, lr 100", "MSE", 1.0, "", note)])],
        "quick",
    )
    assert "training diverged at epoch 1" in report


def test_no_divergence_note_for_a_sound_fit():
    class Sound:
        diverged_ = False
        n_iter_, best_epoch_, validation_loss_curve_ = 3, 3, None

    assert divergence_note(Sound()) == ""
    assert kept_epoch(Sound()) == "3 epochs, kept epoch 3 (lowest training loss)"


def _ok(preset, output_dir, log, *, seed=0):
    log("fine")
    return ExperimentResult("ok", rows=[Row("task", "LMN", "acc", 0.5 + seed)])


def _boom(preset, output_dir, log, *, seed=0):
    if seed == 1:
        raise RuntimeError("out of cheese")
    return ExperimentResult("boom", rows=[Row("task", "LMN", "acc", 0.25)])


def _killed(preset, output_dir, log, *, seed=0):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_failed_run_is_reported_with_its_cause(tmp_path, n_jobs):
    lines = []
    ok, boom = run_experiments(
        {"ok": (_ok, ""), "boom": (_boom, "")},
        "quick",
        output_dir=tmp_path,
        log=lines.append,
        seeds=[0, 1],
        n_jobs=n_jobs,
    )
    assert ok.error == "" and ok.seeds == [0, 1]
    assert [r.values for r in ok.rows] == [[0.5, 1.5]]
    # seed 0 of 'boom' is reported, seed 1 failed with its cause
    assert boom.seeds == [0] and boom.rows[0].value == pytest.approx(0.25)
    assert boom.error == "seed 1: RuntimeError: out of cheese"
    report = (tmp_path / "results.md").read_text()
    assert "## Failures and worker events" in report
    assert "- **boom** failed: seed 1: RuntimeError: out of cheese" in report
    assert "traceback (last lines)" in report and "out of cheese" in report
    assert any("failed runs: boom" in line for line in lines)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_killed_worker_is_reported_and_the_other_runs_finish(tmp_path):
    ok, killed = run_experiments(
        {"ok": (_ok, ""), "killed": (_killed, "")},
        "quick",
        output_dir=tmp_path,
        log=lambda msg: None,
        seeds=[0],
        n_jobs=2,
    )
    assert ok.error == "" and ok.rows
    assert killed.error.startswith("its worker process was killed (")
    report = (tmp_path / "results.md").read_text()
    assert "a worker process was killed (runs: killed)" in report
    assert "a worker process was killed again (runs: killed)" in report
    assert "SIGKILL" in report or "exit code" in report


def test_a_worker_restart_warning_is_explained():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(
            "A worker stopped while some jobs were given to the executor. This "
            "can be caused by a too short worker timeout or by a memory leak.",
            UserWarning,
            stacklevel=1,  # stand-ins for loky's warnings: raised right here
        )
        warnings.warn("something else", UserWarning, stacklevel=1)
    events: list[PoolEvent] = []
    with pytest.warns(UserWarning, match="something else"):  # passed on
        _record_restarts(caught, events)
    (event,) = events
    assert "A worker stopped" in event.what
    assert "memory grew by more than" in event.cause
    assert "No run was lost" in event.cause
    text = format_markdown([ExperimentResult("x")], "quick", events)
    assert "## Failures and worker events" in text and "No run was lost" in text


def test_merge_keeps_every_failure():
    runs = [ExperimentResult("x", seeds=[s], error=f"E{s}") for s in (0, 1)]
    merged = merge_seeds(runs)
    assert merged.error == "seed 0: E0; seed 1: E1" and merged.rows == []


def test_progress_counts_fits_and_estimates_the_rest():
    bars = RunProgress([("a", 0), ("b", 0)], {"a": (2, 10.0)}, print, enabled=False)
    assert bars.total == pytest.approx(70.0)  # 'b' has no recorded cost: 60 s
    bars.event("start", ("a", 0), 1)
    bars.event("fit", ("a", 0), None)
    assert 0.5 <= bars.fraction(("a", 0)) < 1.0
    bars.event("done", ("a", 0), None)
    assert bars.done_weight == pytest.approx(10.0) and bars.n_done == 1
    bars.event("fit", ("a", 0), None)  # a late event of a finished run: ignored
    bars.close()
