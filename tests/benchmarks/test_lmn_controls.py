import json
import re
from pathlib import Path

import pytest

from sklmn.benchmarks._bench import run_script
from sklmn.benchmarks._claims import CLAIM_ITEMS

_ROOT = Path(__file__).resolve().parents[2]
_ITEMS = {
    "copy-lmn": "copy-lmn",
    "copy-lstm": "copy-lstm",
    "music-jsb-pretrained": "chorales-pretrained",
    "hand-incremental": "handwriting-incremental",
    "music-pret-rnn": "music-pret-rnn",
}


@pytest.mark.parametrize("key", sorted(_ITEMS))
def test_failing_lmn_items_cite_a_recorded_run(key):
    item = next(it for it in CLAIM_ITEMS if it.key == key)
    path = f"benchmarks/results_controls/{_ITEMS[key]}.json"
    assert path in item.control
    record = json.loads((_ROOT / path).read_text())
    assert record["item"] == _ITEMS[key]
    assert record["command"].startswith("python -m sklmn.benchmarks bench lmn-controls")
    assert record["outcome"] and record["models"]
    for model in record["models"].values():
        assert len(model["train_loss"]) == model["n_iter"] > 0


def test_controls_reject_a_bad_budget():
    with pytest.raises(SystemExit):
        run_script("lmn-controls", ["--item", "copy-lmn", "--epochs", "0"])


def test_controls_compare_with_the_baseline_of_their_own_seed():
    from sklmn.benchmarks._bench import lmn_controls

    table = lmn_controls._CHORALES_LMN
    assert lmn_controls._recorded(table, 1, "LMN") == pytest.approx(0.2732)
    with pytest.raises(SystemExit, match="no recorded LMN for seed 9"):
        lmn_controls._recorded(table, 9, "LMN")


@pytest.mark.parametrize("key", sorted(_ITEMS))
def test_further_seeds_of_a_control_are_recorded_runs_of_that_seed(key):
    item = next(it for it in CLAIM_ITEMS if it.key == key)
    cited = re.findall(rf"{_ITEMS[key]}-seed(\d+)\.json", item.control)
    for seed in map(int, cited):
        path = _ROOT / f"benchmarks/results_controls/{_ITEMS[key]}-seed{seed}.json"
        record = json.loads(path.read_text())
        assert record["settings"]["seed"] == seed
        assert f"--seed {seed}" in record["command"]
        # a recorded baseline of the experiment is that of the same seed
        baselines = [k for k in record.get("baseline", {}) if "seed" in k]
        assert all(f"seed {seed}," in k for k in baselines)
