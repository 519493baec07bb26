"""Runner and experiments of ``sklmn.benchmarks`` at tiny sizes.

Every experiment module keeps a private ``'test'`` entry in its ``_SIZES``
table; calling the listed function with ``preset='test'`` runs it in a
second or two and must still write rows, claims and plots.
"""

import importlib.util
import math
import pathlib
import re

import pytest

from sklmn.benchmarks import EXPERIMENTS, run_benchmarks
from sklmn.benchmarks._exp_common import (
    DIVERGED,
    fit_timed,
    ordering_holds,
    sizes_for,
)
from sklmn.benchmarks._runner import (
    Claim,
    ExperimentResult,
    Row,
    format_markdown,
)

MINE = [
    "copy-task",
    "adding-problem",
    "sequential-digits",
    "sequence-generation",
    "chorales",
    "common-suffix-words",
    # the handwriting generator needs the optional Hershey-Fonts package
    pytest.param(
        "handwriting",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("HersheyFonts") is None,
            reason="needs the optional Hershey-Fonts package",
        ),
    ),
]


def test_all_experiments_registered():
    names = {getattr(m, "values", (m,))[0] for m in MINE}
    assert names | {"laes-reconstruction"} <= set(EXPERIMENTS)


@pytest.fixture
def figure_texts(monkeypatch):
    """Every text of every figure saved while the test runs, by file name:
    ``{name: {"title": [...], "legend": [...], "all": [...], "lines": [...]}}``."""
    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    saved = {}
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        axes = self.get_axes()
        legends = [lg for ax in axes if (lg := ax.get_legend()) is not None]
        saved[pathlib.Path(fname).name] = {
            "title": [ax.get_title() for ax in axes]
            + ([self._suptitle.get_text()] if self._suptitle else []),
            "legend": [t.get_text() for lg in legends for t in lg.get_texts()],
            "all": [t.get_text() for t in self.findobj(Text)],
            "lines": [
                (line.get_label(), list(line.get_ydata()))
                for ax in axes
                for line in ax.get_lines()
            ],
        }
        return original(self, fname, *args, **kwargs)

    assert matplotlib is not None
    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def _check_figure_texts(name, saved):
    """Titles and labels are plain strings that say what the figure shows."""
    for fig, texts in saved.items():
        for text in texts["all"]:
            # a repr of a numpy scalar leaks into a label as np.str_('...')
            assert "np.str_(" not in text and "np.float" not in text, (fig, text)
        assert any(t.strip() for t in texts["title"]), f"{fig} has no title"
    if name == "adding-problem":
        texts = saved["adding_problem_loss.png"]
        curves = dict(texts["lines"])
        baseline = curves.pop("baseline (predict 1)")
        assert baseline[0] == pytest.approx(1 / 6)
        # the training MSE in the baseline's units: an untrained model
        # predicting about the mean is near the target variance (~0.17-0.2),
        # not near 1 (the standardized units)
        assert curves and all(0.0 < c[0] < 0.6 for c in curves.values()), curves
    if name == "handwriting":
        (title,) = [
            t
            for t in saved["handwriting_transcription.png"]["title"]
            if "test writer" in t
        ]
        assert re.search(r"wrote '[a-z]+'; the .+ read '[a-z]*' \((right|WRONG)", title)
        assert re.search(r"\d+ of \d+ test words transcribed exactly", title)


@pytest.mark.parametrize("name", MINE)
def test_experiment_writes_rows_claims_and_plots(name, tmp_path, figure_texts):
    fn, _ = EXPERIMENTS[name]
    messages = []
    result = fn("test", tmp_path, messages.append)
    _check_figure_texts(name, figure_texts)
    assert {p.name for p in result.plots} <= set(figure_texts)
    assert isinstance(result, ExperimentResult)
    assert result.name == name
    assert result.rows and all(isinstance(r, Row) for r in result.rows)
    # every model row names the paper's figure or explains why it has none
    assert any(r.paper for r in result.rows)
    assert all(
        math.isfinite(r.value) or r.note.startswith("pretraining not available")
        for r in result.rows
    )
    assert result.claims and all(isinstance(c, Claim) for c in result.claims)
    assert all(c.reproduced in (True, False, None) for c in result.claims)
    assert all(c.detail for c in result.claims)
    assert messages, "the experiment must log its progress"
    for path in result.plots:
        assert path.parent == tmp_path
        assert path.suffix == ".png"
        assert path.stat().st_size > 1000
    text = format_markdown([result], "test")
    assert all(r.model in text for r in result.rows)


@pytest.mark.parametrize("name", MINE)
def test_experiment_sizes_cover_the_presets(name):
    module = __import__(EXPERIMENTS[name][0].__module__, fromlist=["_SIZES"])
    assert {"test", "quick", "full"} <= set(module._SIZES)
    with pytest.raises(ValueError, match="'huge'"):
        EXPERIMENTS[name][0]("huge", None, print)


def test_run_benchmarks_writes_report(tmp_path, monkeypatch):
    calls = []

    def _tiny(preset, output_dir, log, *, seed=0):
        calls.append(preset)
        log("working")
        return ExperimentResult(
            "tiny-demo",
            rows=[Row("task", "model", "metric", 0.25, "0.3")],
            claims=[Claim("claim", False, "why not")],
        )

    monkeypatch.setitem(EXPERIMENTS, "tiny-demo", (_tiny, "writes one row"))
    lines = []
    results = run_benchmarks(
        "quick", only=["tiny-demo"], output_dir=tmp_path, log=lines.append, seeds=[0]
    )
    assert calls == ["quick"]
    assert len(results) == 1 and results[0].seconds >= 0
    report = (tmp_path / "results.md").read_text()
    assert "| task | model | metric | 0.25 | 0.3 |  |" in report
    assert "| claim | **no** | why not |" in report
    assert any("tiny-demo: working" in line for line in lines)


@pytest.mark.parametrize(
    ("scores", "higher", "expected"),
    [
        ([3, 2, 1], True, True),
        ([1, 2, 3], True, False),
        ([1, 2, 3], False, True),
        ([1, float("nan")], True, False),
    ],
)
def test_ordering_holds(scores, higher, expected):
    assert ordering_holds(scores, higher_is_better=higher) is expected


def test_sizes_for_copies_the_entry():
    table = {"quick": {"n": 1}}
    sizes = sizes_for(table, "quick")
    sizes["n"] = 2
    assert table["quick"]["n"] == 1


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("sequential-digits", "LMN (LAES init.)"),
        ("chorales", "pretrained LMN"),
        ("common-suffix-words", "MS-LMN + incremental training"),
    ],
)
def test_experiment_without_pretraining_degrades_gracefully(
    name, model, tmp_path, monkeypatch
):
    fn, _ = EXPERIMENTS[name]
    module = __import__(fn.__module__, fromlist=["pretraining_or_reason"])
    reason = "pretraining not available (simulated)"
    monkeypatch.setattr(module, "pretraining_or_reason", lambda *names: (None, reason))
    result = fn("test", tmp_path, lambda msg: None)
    rows = [r for r in result.rows if r.model == model]
    assert len(rows) == 1
    assert math.isnan(rows[0].value) and rows[0].note == reason
    assert any(c.reproduced is None and c.detail == reason for c in result.claims)


@pytest.mark.parametrize("name", MINE)
def test_experiment_reports_diverged_models(name, tmp_path, monkeypatch):
    fn, _ = EXPERIMENTS[name]
    module = __import__(fn.__module__, fromlist=["fit_timed"])
    monkeypatch.setattr(module, "fit_timed", lambda *args, **kwargs: (None, 0.0))
    result = fn("test", tmp_path, lambda msg: None)
    diverged = [r for r in result.rows if r.note == DIVERGED]
    assert diverged and all(math.isnan(r.value) for r in diverged)
    # no claim can be confirmed without a trained model
    assert not any(c.reproduced for c in result.claims)


class _Diverging:
    def fit(self, X, y):
        raise FloatingPointError("loss is nan")


def test_fit_timed_returns_none_on_divergence():
    lines = []
    est, seconds = fit_timed(_Diverging(), None, None, lines.append, "M")
    assert est is None and seconds >= 0
    assert lines == [lines[0]] and "M: training diverged" in lines[0]


def _seeded_demo(preset, output_dir, log, *, seed=0):
    log(f"seed {seed}")
    value = {0: 0.6, 1: 0.4, 2: 0.7}[seed]
    return ExperimentResult(
        "seeded-demo",
        rows=[
            Row("task", "LMN", "accuracy", value, "0.5", f"kept epoch {seed}"),
            Row("task", "RNN", "accuracy", float("nan") if seed == 1 else 0.2),
        ],
        claims=[
            Claim("LMN beats 0.5", value > 0.5, f"LMN {value}"),
            Claim("LMN beats 0.3", value > 0.3, f"LMN {value}"),
            Claim("LMN beats 0.9", value > 0.9, f"LMN {value}"),
            Claim("small", value > 0.5, "x", smaller_than_paper="T = 3"),
        ],
        plots=[],
    )


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_seeds_are_merged_into_mean_spread_and_verdicts(tmp_path, n_jobs):
    from sklmn.benchmarks._runner import run_experiments

    lines = []
    (result,) = run_experiments(
        {"seeded-demo": (_seeded_demo, "three seeds")},
        "quick",
        output_dir=tmp_path,
        log=lines.append,
        seeds=[0, 1, 2],
        n_jobs=n_jobs,
    )
    assert result.seeds == [0, 1, 2]
    lmn, rnn = result.rows
    assert lmn.values == [0.6, 0.4, 0.7]
    assert lmn.value == pytest.approx(1.7 / 3)
    assert math.isnan(rnn.values[1]) and rnn.value == pytest.approx(0.2)
    verdicts = {c.text: (c.reproduced, c.seeds_holding) for c in result.claims}
    assert verdicts["LMN beats 0.5"] == (None, (2, 3))
    assert verdicts["LMN beats 0.3"] == (True, (3, 3))
    assert verdicts["LMN beats 0.9"] == (False, (0, 3))
    report = (tmp_path / "results.md").read_text()
    # mean ± sample standard deviation (0.1528), the first seed's note marked
    assert (
        "| task | LMN | accuracy | 0.5667 ± 0.1528 | 0.5 | kept epoch 0 [seed 0] |"
        in (report)
    )
    assert "0.2 ± 0 (1 of 3 runs failed)" in report
    assert "| LMN beats 0.5 | not distinguishable (holds on 2 of 3 seeds) |" in report
    assert "| LMN beats 0.3 | yes (3 of 3 seeds) |" in report
    assert "| LMN beats 0.9 | **no** (0 of 3 seeds) |" in report
    assert (
        "| small | not tested at this size | T = 3; at this size the claim is mixed"
        in (report)
    )
    assert "seed 0: LMN 0.6 — seed 1: LMN 0.4 — seed 2: LMN 0.7" in report
    assert "is mixed: x (every seed)" in report
    assert "| seeded-demo | 0, 1, 2 |" in report
    if n_jobs == 1:
        assert any("seeded-demo (seed 2): seed 2" in line for line in lines)


def _named_demo(preset, output_dir, log, *, seed=0):
    return ExperimentResult(
        "named-demo",
        rows=[Row("task", "LMN", "accuracy", float(seed))],
        claims=[Claim("LMN beats 1", seed > 1, f"LMN {seed}")],
    )


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_each_experiment_runs_its_own_seeds(tmp_path, n_jobs):
    from sklmn.benchmarks._runner import run_experiments

    lines = []
    results = run_experiments(
        {
            "seeded-demo": (_seeded_demo, "three seeds"),
            "named-demo": (_named_demo, "five seeds"),
        },
        "quick",
        output_dir=tmp_path,
        log=lines.append,
        seeds={"seeded-demo": [0, 1, 2], "named-demo": range(5)},
        n_jobs=n_jobs,
    )
    by_name = {r.name: r for r in results}
    assert by_name["seeded-demo"].seeds == [0, 1, 2]
    assert by_name["named-demo"].seeds == [0, 1, 2, 3, 4]
    assert by_name["named-demo"].rows[0].values == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert by_name["named-demo"].claims[0].seeds_holding == (3, 5)
    report = (tmp_path / "results.md").read_text()
    assert "| named-demo | 0, 1, 2, 3, 4 |" in report
    assert "| seeded-demo | 0, 1, 2 |" in report
    assert (
        "(seeds [0, 1, 2] for seeded-demo; [0, 1, 2, 3, 4] for named-demo)"
        in lines[0]
    )


def _plot_demo(preset, output_dir, log, *, seed=0):
    if seed == 0:
        raise RuntimeError("seed 0 fails")
    plot = pathlib.Path(output_dir) / "demo_curve.png"
    plot.write_bytes(b"png")
    return ExperimentResult(
        "plot-demo", rows=[Row("task", "LMN", "accuracy", 0.5)], plots=[plot]
    )


def test_a_later_seeds_plot_is_linked_in_its_folder(tmp_path):
    # when the first seed failed, the report showed the next seed's plot by
    # its file name alone: a missing image (or a stale one of an earlier run)
    from sklmn.benchmarks._runner import run_experiments

    (result,) = run_experiments(
        {"plot-demo": (_plot_demo, "")}, "quick", output_dir=tmp_path,
        log=lambda msg: None, seeds=[0, 1],
    )  # fmt: skip
    assert result.plots == [tmp_path / "seed1" / "demo_curve.png"]
    report = (tmp_path / "results.md").read_text()
    assert "![demo curve](seed1/demo_curve.png)" in report
    assert (tmp_path / "seed1" / "demo_curve.png").exists()


def test_run_experiments_rejects_bad_seeds_and_jobs(tmp_path):
    from sklmn.benchmarks._runner import run_experiments

    exps = {"seeded-demo": (_seeded_demo, "three seeds")}
    with pytest.raises(ValueError, match="seeds must be distinct"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds=[0, 0])
    with pytest.raises(ValueError, match="seeds must be distinct.*got \\[\\]"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds={"seeded-demo": []})
    with pytest.raises(ValueError, match="no entry for experiment.*seeded-demo"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds={"other": [0]})
    with pytest.raises(ValueError, match="n_jobs must be >= 1, got 0"):
        run_experiments(exps, "quick", output_dir=tmp_path, n_jobs=0)
    # int() read 0.5 as seed 0 and '1' as seed 1; a count was not iterable
    with pytest.raises(ValueError, match=r"seeds must be integers, got 0.5 in"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"seeds must be integers, got '1'"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds=["1"])
    with pytest.raises(TypeError, match=r"seeds must be a sequence of ints, got 3"):
        run_experiments(exps, "quick", output_dir=tmp_path, seeds=3)
    assert not list(tmp_path.iterdir())  # refused before anything ran


def test_copy_task_reports_the_learning_curve_trend_and_the_controlled_run(tmp_path):
    # short budgets: the claims' details give the validation loss per step at
    # the first, middle and last epoch next to the memoryless solution's,
    # S ln(K) / (T + 2 S) = 10 ln 8 / 25 at the test size (T = 5)
    fn, _ = EXPERIMENTS["copy-task"]
    result = fn("test", tmp_path, lambda msg: None)
    lmn, _, lstm = result.claims
    expected = f"(memoryless solution {10 * math.log(8) / 25:.3g})"
    for claim in (lmn, lstm):
        assert "at the first, middle and last epoch: T = 5: " in claim.detail
        assert expected in claim.detail
    # the controlled run (the LMN with a truncated gradient) is a row and is
    # quoted in the LMN claim, with the gradient reach at initialization
    assert any(r.model == "LMN, truncated gradient" for r in result.rows)
    assert "LMN, truncated gradient" in lmn.detail
    assert "gradient norm of the copied steps' outputs" in lmn.detail


def test_copy_task_gradient_reach_matches_an_explicit_loop():
    # the diagnostic against a step-by-step recurrence with plain autograd:
    # the truncated gradient reads m_{t-1} detached in the hidden layer
    import torch

    from sklmn.benchmarks._exp_copy import _gradient_reach
    from sklmn.datasets import make_copy_task
    from sklmn.nn import LMN

    X, _ = make_copy_task(6, n_symbols=10, delay=30, n_classes=8, random_state=0)
    got = _gradient_reach(X.shape[2], 8, X, seed=3)
    torch.manual_seed(3)
    layer = LMN(X.shape[2], 8, 8, memory_matrix="orthogonal").layers[0]
    W_xh, W_mh = layer.weight_xh.detach(), layer.weight_mh.detach()
    W_hm, W_mm = layer.weight_hm.detach(), layer.weight_mm.detach()
    for truncate in (False, True):
        x = torch.as_tensor(X, dtype=torch.float32).requires_grad_(True)
        m = torch.zeros(X.shape[0], 8)
        outputs = []
        for t in range(X.shape[1]):
            m_in = m.detach() if truncate else m
            h = torch.tanh(x[:, t] @ W_xh.T + layer.bias_h.detach() + m_in @ W_mh.T)
            m = h @ W_hm.T + m @ W_mm.T
            outputs.append(m)
        (grad,) = torch.autograd.grad(torch.stack(outputs, 1)[:, -10:].sum(), x)
        key = "truncated" if truncate else "full"
        assert abs(got[key] - float(grad[:, :10].norm())) <= 1e-4 * got[key]
    radius = torch.linalg.eigvals(W_mm + W_hm @ W_mh).abs().max()
    assert abs(got["radius"] - float(radius)) < 1e-5
    final_norm = float(m.detach().norm(dim=1).mean())
    assert abs(got["memory_norm"] - final_norm) < 1e-4 * got["memory_norm"]
    assert got["full"] > got["truncated"]
