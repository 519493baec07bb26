"""The ENRNN state-split experiment (Fig. 6) and the controlled runs' script."""

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

from sklmn.benchmarks import EXPERIMENTS
from sklmn.benchmarks._bench import run_script
from sklmn.benchmarks._claims import CLAIM_ITEMS, claim_items_table
from sklmn.benchmarks._exp_enrnn import enrnn_split
from sklmn.benchmarks._experiments import FULL_ONLY

_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def split_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("split")
    return enrnn_split("test", out, lambda m: None, seed=0)


def test_split_is_registered_full_only():
    assert EXPERIMENTS["enrnn-split"][0] is enrnn_split
    assert "enrnn-split" in FULL_ONLY
    with pytest.raises(ValueError, match="full"):
        enrnn_split("quick", None, print)


def test_split_rows_curves_and_budget(split_run):
    # one row per split of the n units, each with its learning curve
    models = [r.model for r in split_run.rows]
    assert models == ["ENRNN 5/1", "ENRNN 3/3", "ENRNN 1/5", "predict 1"]
    for row in split_run.rows[:-1]:
        assert math.isfinite(row.value) and row.value >= 0
        assert "validation MSE per epoch: " in row.note
        curve = row.note.split("validation MSE per epoch: ")[1].split(", ")
        assert len(curve) == 2  # the test size's 2 epochs
    assert any("% of the paper's" in n for n in split_run.notes)
    if importlib.util.find_spec("matplotlib") is not None:
        assert [p.name for p in split_run.plots] == ["enrnn_split_validation.png"]
        assert split_run.plots[0].exists()


def test_split_claims_are_flagged_smaller_than_the_paper(split_run):
    texts = [c.text for c in split_run.claims]
    assert len(texts) == 3
    assert "best split" in texts[0]
    assert "Without a short-term state" in texts[1]
    assert "Without a long-term state" in texts[2]
    # T = 8 here: the report says "not tested at this size"
    assert all("the paper: T = 750" in c.smaller_than_paper for c in split_run.claims)
    assert all(c.reproduced in (True, False) for c in split_run.claims)
    (item,) = [it for it in CLAIM_ITEMS if it.key == "state-split"]
    assert item.experiment == "enrnn-split" and not item.status
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ")
        for line in claim_items_table([split_run])
        if line.startswith("| state-split")
    }
    assert rows["state-split"][6] == "not tested at this size"


def test_controls_write_their_raw_json(tmp_path, capsys):
    out = tmp_path / "adding.json"
    status = run_script(
        "enrnn-controls",
        ["--task", "adding", "--models", "ENRNN (coupling)", "--length", "10",
         "--chunk", "40", "--chunks", "2", "--n-val", "20", "--n-test", "20",
         "--out", str(out)],
    )  # fmt: skip
    assert status == 0
    record = json.loads(out.read_text())
    assert record["task"] == "adding problem T = 10"
    assert record["command"].endswith(f"--out {out}")
    (model,) = record["models"].values()
    assert model["sequences_presented"] == [40, 80]
    assert len(model["validation"]) == 2
    assert all(math.isfinite(v) and v >= 0 for v in model["validation"])
    assert math.isfinite(model["test_last"])
    assert "validation" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        run_script("enrnn-controls", ["--task", "adding", "--models", "GRU"])


def test_controls_seed_the_models(tmp_path):
    # --seed sets the models' random_state (the data stay those of seed 0)
    curves = {}
    for seed in (0, 1):
        out = tmp_path / f"adding-seed{seed}.json"
        argv = ["--task", "adding", "--models", "LSTM", "--length", "10",
                "--chunk", "40", "--chunks", "1", "--n-val", "20",
                "--n-test", "20", "--seed", str(seed), "--out", str(out)]  # fmt: skip
        assert run_script("enrnn-controls", argv) == 0
        record = json.loads(out.read_text())
        assert record["settings"]["seed"] == seed
        assert f"--seed {seed}" in record["command"]
        curves[seed] = record["models"]["LSTM"]["validation"]
    assert curves[0][0] != pytest.approx(curves[1][0], rel=1e-6)


@pytest.mark.parametrize("task", ["adding", "copy"])
def test_further_seeds_of_the_enrnn_controls_are_recorded_runs_of_that_seed(task):
    keys = {"adding": "adding-baseline", "copy": "copy2000-order"}
    item = next(it for it in CLAIM_ITEMS if it.key == keys[task])
    stem = f"results_enrnn_control_{task}"
    cited = sorted(set(map(int, re.findall(rf"{stem}-seed(\d+)\.json", item.control))))
    assert cited == [1, 2]
    for seed in cited:
        record = json.loads((_ROOT / f"benchmarks/{stem}-seed{seed}.json").read_text())
        assert record["settings"]["seed"] == seed
        assert f"--seed {seed}" in record["command"]
        assert set(record["models"]) == {"ENRNN (coupling)", "LSTM"}
        for model in record["models"].values():
            assert math.isfinite(model["test_last"])
            assert len(model["validation"]) == len(model["sequences_presented"])


def test_failing_enrnn_items_cite_their_controlled_runs():
    items = {it.key: it for it in CLAIM_ITEMS}
    for key in ("adding-converges", "adding-baseline", "copy2000-order"):
        assert "benchmarks/results_enrnn_control_" in items[key].control, key
    lines = claim_items_table([])
    row = next(ln for ln in lines if ln.startswith("| adding-baseline |"))
    assert "controlled run: " in row


def test_timit_spectra_stoi_skips_only_short_utterances():
    import numpy as np

    from sklmn.benchmarks._exp_spectra import _stoi_or_nan

    rng = np.random.default_rng(0)
    short = rng.normal(size=2000)  # 0.25 s at 8 kHz: under 30 frames
    assert math.isnan(_stoi_or_nan(short, short))
    wave = rng.normal(size=16000)
    assert _stoi_or_nan(wave, wave) == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError, match="non-finite"):
        _stoi_or_nan(wave, np.full_like(wave, np.nan))


def test_split_at_another_length_writes_its_raw_json(tmp_path, capsys):
    out = tmp_path / "split-T12-seed1.json"
    argv = ["--preset", "test", "--length", "12", "--seed", "1", "--out", str(out)]
    assert run_script("enrnn-split", argv) == 0
    record = json.loads(out.read_text())
    assert record["settings"] == {"length": 12, "seed": 1, "preset": "test"}
    assert record["command"].endswith(f"--seed 1 --out {out}")
    result = record["result"]
    assert result["seeds"] == [1] and result["cpu_seconds"] > 0
    assert result["rows"][0]["task"] == "adding problem T=12, n = 6 (test)"
    # T = 12 is still below the paper's 750: the claims say so
    assert all("T = 12; the paper: T = 750" in c["smaller_than_paper"]
               for c in result["claims"])  # fmt: skip
    assert "T = 12 (the paper: 750)" in result["notes"][1]
    if importlib.util.find_spec("matplotlib") is not None:
        assert result["plots"] == [str(out.with_suffix(".png"))]
        assert out.with_suffix(".png").exists()
    assert "best split" in capsys.readouterr().out
    with pytest.raises(ValueError, match="length must be an int >= 2, got 1"):
        enrnn_split("test", tmp_path, print, length=1)
    with pytest.raises(SystemExit):
        run_script("enrnn-split", ["--length", "1"])


def test_split_at_the_papers_length_tests_the_claims_there(tmp_path):
    result = enrnn_split("test", tmp_path, lambda m: None, seed=0, length=750)
    assert result.rows[0].task == "adding problem T=750, n = 6 (test)"
    assert all(c.smaller_than_paper == "" for c in result.claims)
    assert "(the paper: 750)" not in result.notes[1]


def test_split_records_of_several_seeds_merge_into_one_report(tmp_path):
    outs = []
    for seed, length in ((1, 12), (0, 12), (2, 10)):
        outs.append(tmp_path / f"split-T{length}-seed{seed}.json")
        argv = ["--preset", "test", "--length", str(length), "--seed", str(seed),
                "--out", str(outs[-1])]  # fmt: skip
        assert run_script("enrnn-split", argv) == 0
    report = tmp_path / "split-T12.md"
    argv = ["--merge", str(outs[0]), str(outs[1]), "--report", str(report)]
    assert run_script("enrnn-split", argv) == 0
    text = report.read_text()
    assert "The enrnn-split experiment at T = 12, seeds 0, 1" in text
    assert "| ENRNN 5/1 | MSE |" in text and " ± " in text
    payload = json.loads(report.with_suffix(".json").read_text())
    assert [r["seeds"] for r in payload["runs"]["enrnn-split"]] == [[0], [1]]
    (merged,) = payload["merged"]
    assert merged["seeds"] == [0, 1]
    assert all(c["seeds_holding"][1] == 2 for c in merged["claims"])
    # the claim-item section can be rendered again from that JSON
    assert run_script("claim-tables", ["--check", str(report)]) == 0
    with pytest.raises(SystemExit):  # T = 10 and T = 12 do not merge
        run_script("enrnn-split", ["--merge", str(outs[0]), str(outs[2]),
                                   "--report", str(report)])  # fmt: skip
    with pytest.raises(SystemExit):  # a seed twice
        run_script("enrnn-split", ["--merge", str(outs[0]), str(outs[0]),
                                   "--report", str(report)])  # fmt: skip
    with pytest.raises(SystemExit):  # no report
        run_script("enrnn-split", ["--merge", str(outs[0])])


def test_the_state_split_item_cites_its_runs_at_the_papers_length():
    (item,) = [it for it in CLAIM_ITEMS if it.key == "state-split"]
    assert "benchmarks/results_enrnn_split_T750.md" in item.control
    record = _ROOT / "benchmarks/results_enrnn_split_T750.json"
    payload = json.loads(record.read_text())
    runs = payload["runs"]["enrnn-split"]
    assert [r["seeds"] for r in runs] == [[0], [1], [2]]
    for seed, run in enumerate(runs):
        path = _ROOT / f"benchmarks/results_enrnn_split_T750-seed{seed}.json"
        record = json.loads(path.read_text())
        assert record["settings"] == {"length": 750, "seed": seed, "preset": "full"}
        assert f"--length 750 --seed {seed}" in record["command"]
        assert record["result"]["rows"] == run["rows"]
        # at the paper's T the claims are tested, not "not tested at this size"
        assert all(c["smaller_than_paper"] == "" for c in run["claims"])
    (merged,) = payload["merged"]
    assert [c["seeds_holding"] for c in merged["claims"]] == [[0, 3], [3, 3], [0, 3]]
