"""The ENRNN state-split experiment (Fig. 6) and the controlled runs' script."""

import importlib.util
import json
import math

import pytest

from sklmn.benchmarks import EXPERIMENTS
from sklmn.benchmarks._bench import run_script
from sklmn.benchmarks._claims import CLAIM_ITEMS, claim_items_table
from sklmn.benchmarks._exp_enrnn import enrnn_split
from sklmn.benchmarks._experiments import FULL_ONLY


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
