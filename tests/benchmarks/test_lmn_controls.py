import json
import re
from pathlib import Path

import numpy as np
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


#: controls whose records are not per-epoch classification curves
_NEW_ITEMS = ("generation-sweep-size", "laes-init-quality")


def _record(name):
    return json.loads((_ROOT / f"benchmarks/results_controls/{name}.json").read_text())


@pytest.mark.parametrize("key", _NEW_ITEMS)
def test_new_controls_are_cited_by_their_items(key):
    item = next(it for it in CLAIM_ITEMS if it.key == key)
    assert f"benchmarks/results_controls/{key}.json" in item.control
    record = _record(key)
    assert record["item"] == key
    assert record["command"].startswith(
        f"python -m sklmn.benchmarks bench lmn-controls --item {key}"
    )
    assert record["outcome"].endswith((": holds", ": does not hold"))
    for seed in map(int, re.findall(rf"{key}-seed(\d+)\.json", item.control)):
        other = _record(f"{key}-seed{seed}")
        assert other["settings"]["seed"] == seed
        assert f"--seed {seed}" in other["command"]


def test_sweep_control_runs_the_table4_epochs_and_reports_the_best_size():
    from sklmn.benchmarks import _exp_generation

    record = _record("generation-sweep-size")
    best = {}
    for label, model in record["models"].items():
        name, size = label.rsplit(", ~", 1)
        assert model["epochs"] == _exp_generation._PAPER_EPOCHS[name]
        assert model["n_iter"] == model["epochs"]
        assert 1 <= model["kept_epoch"] <= model["n_iter"]
        assert np.isfinite(model["nmse"]) and model["nmse"] >= 0
        size = int(size.split()[0])
        if name not in best or model["nmse"] < best[name][1]:
            best[name] = (size, model["nmse"])
    # the outcome names the size of lowest recorded NMSE per model
    for name, (size, _) in best.items():
        assert f"{name} ~{size}" in record["outcome"]
    holds = all(size == 1000 for size, _ in best.values())
    assert record["outcome"].endswith(": holds" if holds else ": does not hold")


def test_sweep_control_reruns_the_models_that_missed_in_the_recorded_sweep():
    from sklmn.benchmarks._bench import lmn_controls

    runs = json.loads((_ROOT / "benchmarks/results_generation_sweep.json").read_text())
    for run in runs["runs"]["generation-sweep"]:
        (seed,) = run["seeds"]
        nmse = {}
        for row in run["rows"]:
            name, size = row["model"].rsplit(", ~", 1)
            nmse.setdefault(name, {})[int(size.split()[0])] = row["value"]
        missed = {k for k, v in nmse.items() if min(v, key=v.get) != max(v)}
        assert set(lmn_controls._SWEEP_MISSED[seed]) == missed
    with pytest.raises(SystemExit, match="no recorded generation sweep for seed 9"):
        lmn_controls._recorded(lmn_controls._SWEEP_MISSED, 9, "generation sweep")


def test_laes_control_outcome_matches_its_recorded_accuracies():
    record = _record("laes-init-quality")
    assert record["settings"]["input_scale"] == pytest.approx(0.01)
    models = record["models"]
    gaps = []
    for label, lmn in models.items():
        if not label.startswith("LMN"):
            continue
        where = label.split("), ", 1)[1]
        lin = models[f"Linear RNN, {where}"]
        for split in ("train", "test"):
            gaps.append(abs(lmn[f"{split}_accuracy"] - lin[f"{split}_accuracy"]))
    assert len(gaps) == 8  # sequential and permuted, 64 and 10 components
    holds = max(gaps) <= 0.01
    assert record["outcome"].endswith(": holds" if holds else ": does not hold")


def test_laes_control_rejects_a_bad_input_scale():
    with pytest.raises(SystemExit):
        run_script(
            "lmn-controls", ["--item", "laes-init-quality", "--input-scale", "0"]
        )


def test_laes_control_rejects_an_epoch_budget():
    with pytest.raises(SystemExit):
        run_script("lmn-controls", ["--item", "laes-init-quality", "--epochs", "5"])
