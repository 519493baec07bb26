"""The LMN papers' experiments of the full preset only (music LMN-h and
pret-RNN, the other music sets, pretraining vs size, the LAES of unrolled
hidden states, permuted digits, TIMIT framewise), at tiny sizes."""

import math
import pickle

import pytest

from sklmn.benchmarks import EXPERIMENTS, run_benchmarks
from sklmn.benchmarks._experiments import FULL_ONLY
from sklmn.benchmarks._runner import ExperimentResult, format_markdown

RUNS_HERE = [
    "music-lmn-hidden",
    "music-pret-rnn",
    "laes-memory-size",
    "laes-unrolled",
    "permuted-digits",
]
NEEDS_DATA = ["music-sets", "timit-framewise"]


@pytest.mark.parametrize("name", RUNS_HERE)
def test_experiment_runs_on_the_stand_in(name, tmp_path):
    messages = []
    result = EXPERIMENTS[name][0]("test", tmp_path, messages.append)
    assert isinstance(result, ExperimentResult) and result.name == name
    assert messages and result.rows and result.claims
    assert result.data.startswith("stand-in")
    assert any(r.paper for r in result.rows)
    # every row has a value, except the reference row that is not run
    for row in result.rows:
        assert math.isfinite(row.value) or row.note.startswith("not run"), row
    assert all(c.detail for c in result.claims)
    # the budget is stated against the paper's
    assert any("paper" in note for note in result.notes)
    for path in result.plots:
        assert path.parent == tmp_path and path.stat().st_size > 1000
    text = format_markdown([result], "test")
    assert all(r.model in text for r in result.rows)


@pytest.mark.parametrize("name", NEEDS_DATA)
def test_experiment_says_it_needs_the_real_data(name, tmp_path):
    for data_dir in (None, tmp_path):
        result = EXPERIMENTS[name][0](
            "test", tmp_path, lambda m: None, data_dir=data_dir
        )
        assert result.data.startswith("needs the real data")
        assert result.rows and all(math.isnan(r.value) for r in result.rows)
        assert all(r.note.startswith("needs the real data") for r in result.rows)
        assert all(r.paper for r in result.rows)
        assert result.claims and all(c.reproduced is None for c in result.claims)


def test_music_sets_run_on_a_pickle_in_the_original_format(tmp_path):
    # one set present (a dict of train/valid/test lists of pieces, each a
    # list of time steps holding tuples of MIDI note numbers), two absent
    rng = __import__("numpy").random.RandomState(0)

    def piece(n):
        return [tuple(int(k) for k in rng.choice(range(40, 80), 3)) for _ in range(n)]

    sets = {part: [piece(12) for _ in range(6)] for part in ("train", "valid", "test")}
    (tmp_path / "music").mkdir()
    with open(tmp_path / "music" / "Nottingham.pickle", "wb") as fh:
        pickle.dump(sets, fh, protocol=2)
    result = EXPERIMENTS["music-sets"][0](
        "test", tmp_path, lambda m: None, data_dir=tmp_path
    )
    assert "Nottingham" in result.data and result.data.startswith("real data")
    run = [r for r in result.rows if r.task.startswith("Nottingham")]
    assert {r.model for r in run} >= {"LMN-m", "pret-LMN-m", "LMN-h", "pret-RNN"}
    assert all(math.isfinite(r.value) for r in run if r.model != "RNN-RBM")
    absent = [r for r in result.rows if r.task.startswith("MuseData")]
    assert absent and all(r.note.startswith("needs the real data") for r in absent)
    verdicts = {c.text.split(" on ")[1].split(" ")[0]: c for c in result.claims}
    assert verdicts["MuseData"].reproduced is None
    assert verdicts["Nottingham"].reproduced in (True, False)


@pytest.mark.parametrize("name", RUNS_HERE + NEEDS_DATA)
def test_full_preset_only(name, tmp_path):
    assert name in FULL_ONLY
    module = __import__(EXPERIMENTS[name][0].__module__, fromlist=["_SIZES"])
    assert "full" in repr(vars(module))
    with pytest.raises(ValueError, match="full preset only"):
        run_benchmarks("quick", only=[name], output_dir=tmp_path)


def test_quick_preset_leaves_the_full_only_experiments_out(tmp_path, monkeypatch):
    ran = []

    def fake(name):
        def run(preset, output_dir, log, *, seed=0):
            ran.append(name)
            return ExperimentResult(name)

        return run

    for name in list(EXPERIMENTS):
        monkeypatch.setitem(EXPERIMENTS, name, (fake(name), "fake"))
    run_benchmarks("quick", output_dir=tmp_path, seeds=[0], log=lambda m: None)
    assert sorted(ran) == sorted(set(EXPERIMENTS) - FULL_ONLY)
