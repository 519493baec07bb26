"""The benchmark report (format_markdown) and the pinned experiment settings."""

import pytest

from sklmn.benchmarks import EXPERIMENTS
from sklmn.benchmarks._exp_common import PINNED, pinned
from sklmn.benchmarks._runner import Claim, ExperimentResult, Row, format_markdown
from sklmn.estimators import LMNClassifier, LMNRegressor, RNNRegressor


def _table_rows(text, header):
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def _n_cells(line):
    # cells are separated by unescaped pipes
    return len(line.replace("\\|", "").strip("|").split("|"))


def test_pipes_in_cells_do_not_break_the_tables(tmp_path):
    res = ExperimentResult(
        "x",
        rows=[Row("task | a", "M", "error (%)", 1.0, "2", "|a - b| small")],
        claims=[Claim("|LAES - SVD| < 1", True, "gap |a - b| = 0.1")],
    )
    text = format_markdown([res], "quick")
    rows = _table_rows(text, "| task | model | metric | sklmn | paper | note |")
    assert rows and all(_n_cells(r) == 6 for r in rows)
    claims = _table_rows(text, "| claim | reproduced | detail |")
    assert claims and all(_n_cells(r) == 3 for r in claims)


def test_plots_are_embedded_as_images(tmp_path):
    res = ExperimentResult("x", plots=[tmp_path / "copy_task_loss.png"])
    text = format_markdown([res], "quick")
    assert "![copy task loss](copy_task_loss.png)" in text
    assert "- `copy_task_loss.png`" not in text


def test_claims_smaller_than_the_paper_are_not_verdicts():
    res = ExperimentResult(
        "x",
        claims=[
            Claim("solves T=100", True, "99%", smaller_than_paper="T = 30"),
            Claim("solves T=100 (full)", False, "50%"),
        ],
    )
    text = format_markdown([res], "quick")
    small, full = _table_rows(text, "| claim | reproduced | detail |")
    assert "| not tested at this size |" in small
    assert "T = 30" in small and "holds" in small
    assert "| **no** |" in full


def test_notes_and_papers_are_listed():
    res = ExperimentResult("copy-task", notes=["Selection: lowest validation loss."])
    text = format_markdown([res], "quick")
    assert "## Set-ups: selection rules and deviations from the papers" in text
    assert "  - Selection: lowest validation loss." in text
    assert "Carta et al. 2020a" in text and "Helfrich & Ye 2020" in text


def test_pinned_states_every_parameter():
    est = pinned(LMNClassifier, hidden_size=4, memory_size=4)
    assert est.pretrainer is None and est.early_stopping is False
    assert set(est.get_params(deep=False)) <= (
        set(PINNED["all"])
        | set(PINNED["classifier"])
        | set(PINNED["LMN"])
        | {"hidden_size", "memory_size"}
    )
    reg = pinned(LMNRegressor, hidden_size=4, memory_size=4)
    assert "class_weight" not in reg.get_params()
    with pytest.raises(ValueError, match=r"\['cell'"):
        pinned(RNNRegressor, hidden_size=3)


@pytest.mark.parametrize(
    "name",
    [
        "copy-task",
        "adding-problem",
        "sequential-digits",
        "sequence-generation",
        "chorales",
        "common-suffix-words",
    ],
)
def test_experiments_leave_no_library_policy_implicit(name, tmp_path, monkeypatch):
    fn, _ = EXPERIMENTS[name]
    module = __import__(fn.__module__, fromlist=["fit_timed"])
    seen = []

    def record(est, *args, **kwargs):
        seen.append(est)
        return None, 0.0

    monkeypatch.setattr(module, "fit_timed", record)
    result = fn("test", tmp_path, lambda msg: None)
    assert seen
    for est in seen:
        params = est.get_params(deep=False)
        # the library's 'auto' policies may change: every experiment decides
        for key in ("early_stopping", "batch_size", "pretrainer"):
            assert params.get(key) != "auto", (name, type(est).__name__, key)
    assert result.notes and any(n.startswith("Selection:") for n in result.notes)
