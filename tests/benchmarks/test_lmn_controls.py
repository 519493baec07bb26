import json
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
