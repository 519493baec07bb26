"""The claim-item registry, its report table, and the full-preset-only experiments."""

import importlib.util
import math
import wave

import numpy as np
import pytest

from sklmn.benchmarks import EXPERIMENTS, run_benchmarks
from sklmn.benchmarks._claims import (
    CLAIM_ITEMS,
    NEEDS_DATA,
    REFERENCE_ROW,
    ClaimItem,
    claim_items_table,
)
from sklmn.benchmarks._exp_enrnn import gradient_maps, still_improving
from sklmn.benchmarks._experiments import FULL_ONLY
from sklmn.benchmarks._runner import (
    PAPERS,
    Claim,
    ExperimentResult,
    Row,
    format_markdown,
    merge_seeds,
)


def _table_rows(lines):
    """Table rows keyed by item key -> list of cells."""
    rows = {}
    for i, line in enumerate(lines):
        if i > 0 and line.startswith("## "):
            break  # the next section
        if line.startswith("| ") and not line.startswith("| item |"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            assert cells[0] not in rows, f"{cells[0]} listed twice"
            rows[cells[0]] = cells
    return rows


def test_registry_items_are_unique_and_complete():
    keys = [it.key for it in CLAIM_ITEMS]
    assert len(keys) == len(set(keys))
    texts = [(it.paper, it.item) for it in CLAIM_ITEMS]
    assert len(texts) == len(set(texts))
    # the audit counted about 40 items over the five papers
    assert len(CLAIM_ITEMS) >= 40
    papers = {short for short, *_ in PAPERS}
    assert {it.paper for it in CLAIM_ITEMS} == papers
    for it in CLAIM_ITEMS:
        assert it.item and it.paper_value, it.key
        # an item either names an experiment or says why none runs it
        assert it.experiment or it.status.startswith(
            ("not attempted", REFERENCE_ROW)
        ), it.key
        assert not (it.claim and it.models), it.key


def test_every_item_appears_once_in_the_report():
    text = format_markdown([], "full")
    lines = text.splitlines()
    start = lines.index("## Claim items of the five papers")
    rows = _table_rows(lines[start:])
    assert set(rows) == {it.key for it in CLAIM_ITEMS}
    # no experiment ran: each item says "no run" or its status
    for it in CLAIM_ITEMS:
        verdict = rows[it.key][6]
        assert verdict == (it.status or "no run"), (it.key, verdict)


def test_verdicts_come_from_the_claim_records():
    items = (
        ClaimItem("a", "P", "holds", "1", "exp", "claim A"),
        ClaimItem("b", "P", "fails", "1", "exp", "claim B"),
        ClaimItem("c", "P", "budget", "1", "exp", "claim C"),
        ClaimItem("d", "P", "mixed seeds", "1", "exp", "claim D"),
        ClaimItem("e", "P", "rows", "1", "exp", models=("LMN",)),
        ClaimItem("f", "P", "missing", "1", "exp", "claim Z"),
        ClaimItem("g", "P", "absent", "1", "other"),
        ClaimItem("h", "P", "full only", "1", "big"),
        ClaimItem("i", "P", "data", "1", "other", status=NEEDS_DATA),
        ClaimItem("j", "P", "smaller", "1", "exp", "claim E"),
    )
    res = ExperimentResult(
        "exp",
        rows=[Row("t", "LMN", "acc", 0.5)],
        claims=[
            Claim("claim A (paper)", True, "a = 1"),
            Claim("claim B (paper)", False, "b = 0"),
            Claim("claim C (paper)", False, "c = 0", budget_limited="5% of it"),
            Claim("claim D (paper)", None, "d", seeds_holding=(1, 3)),
            Claim("claim E (paper)", True, "e", smaller_than_paper="T = 5"),
        ],
        data="stand-in: something (no --data-dir given)",
    )
    rows = _table_rows(
        claim_items_table([res], items=items, full_only={"big"}, preset="quick")
    )
    verdict = {k: v[6] for k, v in rows.items()}
    assert verdict == {
        "a": "yes",
        "b": "**no**",
        "c": "budget-limited",
        "d": "not distinguishable (holds on 1 of 3 seeds)",
        "e": "rows only (no claim record)",
        "f": "no claim record in the run",
        "g": "no run",
        "h": "no run (full preset only)",
        "i": NEEDS_DATA,
        "j": "not tested at this size",
    }
    assert rows["a"][5].startswith("a = 1") and "stand-in" in rows["a"][5]
    assert rows["c"][5].startswith("5% of it; c = 0")
    assert rows["e"][5].startswith("LMN 0.5")


def test_budget_limited_survives_the_seed_merge():
    runs = [
        ExperimentResult(
            "x",
            claims=[Claim("c", False, "v", budget_limited=f"5%, curve {s}")],
            seeds=[s],
        )
        for s in (0, 1)
    ]
    merged = merge_seeds(runs)
    assert merged.claims[0].reproduced is False
    assert "seed 0: 5%, curve 0" in merged.claims[0].budget_limited
    assert "seed 1: 5%, curve 1" in merged.claims[0].budget_limited


def test_full_only_experiments_are_registered_and_refused_in_quick():
    assert FULL_ONLY <= set(EXPERIMENTS)
    for name in FULL_ONLY:
        with pytest.raises(ValueError, match="full preset only"):
            run_benchmarks("quick", only=[name])
    # the ENRNN paper's long tasks have no quick sizes at all (the LMN items
    # have small sizes of their own, which their tests run)
    for name in ("enrnn-adding", "enrnn-copy"):
        with pytest.raises(ValueError, match="full"):
            EXPERIMENTS[name][0]("quick", None, print)


@pytest.fixture(scope="module")
def test_runs(tmp_path_factory):
    """Every registered experiment at its tiny 'test' size, once."""
    out = tmp_path_factory.mktemp("claims")
    results = {}
    for name, (fn, _) in EXPERIMENTS.items():
        if name == "handwriting" and importlib.util.find_spec("HersheyFonts") is None:
            continue
        results[name] = fn("test", out, lambda m: None)
    return results


def test_registry_claim_texts_match_the_experiments(test_runs):
    # every item naming a registered experiment and a claim finds its
    # claim record (the texts of the registry do not go stale)
    for it in CLAIM_ITEMS:
        res = test_runs.get(it.experiment)
        if res is None or (it.status and not res.rows):
            continue  # not run here, or ran without the data it needs
        if it.claim:
            assert any(it.claim in c.text for c in res.claims), it.key
        for model in it.models:
            assert any(r.model == model for r in res.rows), (it.key, model)
    rows = _table_rows(claim_items_table(test_runs.values()))
    for it in CLAIM_ITEMS:
        if it.experiment in test_runs:
            assert rows[it.key][6] not in ("no run", "no claim record in the run")


def test_enrnn_experiments_write_curves_maps_and_budgets(test_runs):
    adding, copy = test_runs["enrnn-adding"], test_runs["enrnn-copy"]
    names = {p.name for p in adding.plots + copy.plots}
    if importlib.util.find_spec("matplotlib") is not None:
        assert {
            "enrnn_gradient_maps.png",
            "enrnn_adding_eigenvalues.png",
            "enrnn_adding_validation.png",
            "enrnn_copy_validation.png",
        } <= names
    # every run states its budget as a fraction of the paper's
    for res in (adding, copy):
        assert any("% of the paper's" in n for n in res.notes)
        assert all(math.isfinite(r.value) for r in res.rows)
    fig1 = next(c for c in adding.claims if "converges towards 0 MSE" in c.text)
    assert "LSTM" in fig1.detail and "epoch" in fig1.detail
    sweep = test_runs["generation-sweep"]
    assert len([r for r in sweep.rows if r.model.startswith("MS-LMN")]) == 2


def test_gradient_maps_are_causal(test_runs):
    from sklmn.datasets import make_adding_problem
    from sklmn.estimators import ENRNNRegressor

    X, y = make_adding_problem(20, length=6, random_state=0)
    est = ENRNNRegressor(
        hidden_size=3, short_size=2, coupling=True, max_iter=1, random_state=0
    ).fit(X, y)
    long, short = gradient_maps(est, X[:3])
    assert long.shape == short.shape == (6, 6)
    # h_tau does not depend on x_t for t > tau
    np.testing.assert_allclose(np.triu(long, 1), 0.0, atol=1e-7)
    np.testing.assert_allclose(np.triu(short, 1), 0.0, atol=1e-7)
    assert np.all(np.diag(long) > 0) and np.all(np.diag(short) > 0)


def test_still_improving():
    assert still_improving([5, 4, 3, 2, 1.5, 1.0])
    assert not still_improving([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert not still_improving([3, 2, 1])  # too short to tell
    assert not still_improving([1, 1, 1, 2, 2, 2])  # rising


def _write_tiny_timit(root):
    """Three speakers (training, development, core test), 2 utterances each."""
    speakers = [("TRAIN", "DR1", "FCJF0"), ("TEST", "DR1", "FAKS0"),
                ("TEST", "DR1", "FELC0")]  # fmt: skip
    rng = np.random.RandomState(0)
    for part, dialect, speaker in speakers:
        folder = root / part / dialect / speaker
        folder.mkdir(parents=True)
        for k, sentence in enumerate(("SX1", "SX2")):
            t = np.arange(12000) / 16000  # 0.75 s: long enough for STOI
            tone = 3000 * np.sin(2 * np.pi * (500 + 300 * k) * t)
            samples = (tone + rng.normal(0, 100, len(t))).astype("<i2")
            with wave.open(str(folder / f"{sentence}.WAV"), "wb") as stream:
                stream.setnchannels(1)
                stream.setsampwidth(2)
                stream.setframerate(16000)
                stream.writeframes(samples.tobytes())
            (folder / f"{sentence}.PHN").write_text("0 6000 h#\n")
            (folder / f"{sentence}.WRD").write_text("")


def test_timit_spectra_needs_the_data_and_runs_on_it(tmp_path):
    fn, _ = EXPERIMENTS["timit-spectra"]
    res = fn("test", tmp_path, lambda m: None)
    assert not res.rows and res.data.startswith("needs the real data")
    rows = _table_rows(claim_items_table([res]))
    assert rows["timit-spectra-mse"][6] == NEEDS_DATA
    _write_tiny_timit(tmp_path / "data" / "timit")
    res = fn("test", tmp_path, lambda m: None, data_dir=tmp_path / "data")
    assert res.data.startswith("real data: TIMIT")
    metrics = {(r.model, r.metric): r.value for r in res.rows}
    assert set(metrics) == {(m, k) for m in ("ENRNN", "LSTM")
                            for k in ("MSE", "SegSNR (dB)", "STOI")}  # fmt: skip
    assert all(math.isfinite(v) for v in metrics.values())
    assert all(-1.0 <= metrics[m, "STOI"] <= 1.0 for m in ("ENRNN", "LSTM"))
    assert any("higher STOI" in c.text for c in res.claims)
    assert all(-10.0 <= metrics[m, "SegSNR (dB)"] <= 35.0 for m in ("ENRNN", "LSTM"))
    assert all(c.reproduced in (True, False) for c in res.claims)
    rows = _table_rows(claim_items_table([res]))
    assert rows["timit-spectra-mse"][6] in ("yes", "**no**")
    assert rows["timit-spectra-perceptual"][6] in ("yes", "**no**")


def test_spectra_round_trip():
    from sklmn.benchmarks._exp_spectra import _stft, segmental_snr, spectra_to_wave

    wave_ = np.random.RandomState(0).normal(size=4096)
    spec = _stft(wave_)
    back = spectra_to_wave(np.log(np.abs(spec) + 1e-6), np.angle(spec))
    # the ends lack the overlap of a second window
    np.testing.assert_allclose(back[128:3968], wave_[128:3968], atol=1e-4)
    assert segmental_snr(wave_, wave_) == pytest.approx(35.0)
    assert segmental_snr(wave_, np.zeros_like(wave_)) == pytest.approx(0.0, abs=1e-6)


def test_the_docs_list_every_item():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    text = (root / "docs" / "user_guide" / "papers.md").read_text()
    missing = [it.key for it in CLAIM_ITEMS if f"| {it.key} |" not in text]
    assert not missing, f"docs/user_guide/papers.md lacks items {missing}"


def test_the_runner_keeps_the_raw_records_as_json(tmp_path, monkeypatch):
    import json

    def _tiny(preset, output_dir, log, *, seed=0):
        return ExperimentResult(
            "tiny-json",
            rows=[Row("t", "LMN", "acc", 0.5 + seed)],
            claims=[Claim("c", seed == 0, f"seed {seed}", budget_limited="5%")],
            seeds=[seed],
        )

    monkeypatch.setitem(EXPERIMENTS, "tiny-json", (_tiny, "writes one row"))
    run_benchmarks("quick", only=["tiny-json"], output_dir=tmp_path,
                   seeds=(0, 1), log=lambda m: None)  # fmt: skip
    payload = json.loads((tmp_path / "results.json").read_text())
    assert payload["preset"] == "quick"
    (merged,) = payload["merged"]
    assert merged["rows"][0]["values"] == [0.5, 1.5]
    assert merged["claims"][0]["seeds_holding"] == [1, 2]
    runs = payload["runs"]["tiny-json"]
    assert [r["seeds"] for r in runs] == [[0], [1]]
    assert runs[1]["claims"][0]["budget_limited"] == "5%"


def test_claim_tables_render_a_report_again_from_its_raw_json(tmp_path, monkeypatch):
    import json

    from sklmn.benchmarks._bench import claim_tables, run_script

    def _tiny(preset, output_dir, log, *, seed=0):
        return ExperimentResult(
            "copy-task", rows=[Row("t", "LMN", "acc", 0.5 + seed)],
            claims=[Claim("The LMN solves the copy task (>= 95%)", seed == 0,
                          f"seed {seed}")],
            seeds=[seed],
        )  # fmt: skip

    monkeypatch.setitem(EXPERIMENTS, "copy-task", (_tiny, "writes one row"))
    run_benchmarks("full", only=["copy-task"], output_dir=tmp_path,
                   seeds=(0, 1), log=lambda m: None)  # fmt: skip
    report = tmp_path / "results.md"
    fresh = report.read_text()
    merged = json.loads((tmp_path / "results.json").read_text())["merged"][0]
    result = claim_tables.result_from_record(merged)
    assert result.claims[0].seeds_holding == (1, 2)
    assert result.rows[0].values == pytest.approx([0.5, 1.5])
    # a report written with an older registry: its deviations differ
    (row,) = [ln for ln in fresh.split("\n") if ln.startswith("| copy-lmn |")]
    stale = fresh.replace(row, row.rsplit(" | ", 1)[0] + " | an old text |")
    report.write_text(stale)
    assert run_script("claim-tables", ["--check", str(report)]) == 1
    assert report.read_text() == stale  # --check writes nothing
    assert run_script("claim-tables", [str(report)]) == 0
    assert report.read_text() == fresh  # the rest of the report kept
    assert run_script("claim-tables", ["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / "results.json").unlink()
    with pytest.raises(SystemExit, match="no raw records"):
        run_script("claim-tables", [str(report)])


def test_the_char_ptb_control_cites_its_recorded_seeds():
    import json
    import pathlib

    (item,) = [it for it in CLAIM_ITEMS if it.key == "char-ptb"]
    assert "benchmarks/char_ptb_small/" in item.control
    root = pathlib.Path(__file__).resolve().parents[2]
    payload = json.loads((root / "benchmarks/char_ptb_small/results.json").read_text())
    runs = payload["runs"]["char-ptb"]
    assert [r["seeds"] for r in runs] == [[0], [1], [2], [3], [4]]
    (merged,) = payload["merged"]
    assert merged["seeds"] == [0, 1, 2, 3, 4]
    assert merged["claims"][0]["seeds_holding"] == [0, 5]
    assert "5 of 5 seeds" in item.control
