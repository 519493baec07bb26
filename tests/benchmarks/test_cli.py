"""Command line of ``python -m sklmn.benchmarks``: help text, missing plots."""

import pytest

from sklmn.benchmarks.__main__ import _parser, main


def test_every_option_has_help():
    parser = _parser()
    undocumented = [
        action.option_strings
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert not undocumented


def test_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for action in _parser()._actions:
        for flag in action.option_strings:
            assert flag in out


def test_runner_says_when_plots_are_left_out(tmp_path, monkeypatch):
    from sklmn.benchmarks import EXPERIMENTS, _plotting, run_benchmarks
    from sklmn.benchmarks._runner import ExperimentResult

    monkeypatch.setattr(_plotting, "pyplot", lambda: None)

    def _tiny(preset, output_dir, log, *, seed=0):
        return ExperimentResult("tiny-no-plot")

    monkeypatch.setitem(EXPERIMENTS, "tiny-no-plot", (_tiny, "writes nothing"))
    lines = []
    run_benchmarks(
        "quick", only=["tiny-no-plot"], output_dir=tmp_path, log=lines.append
    )
    assert any("matplotlib is not installed" in line for line in lines)


def test_bench_lists_runs_and_rejects_benchmarks(capsys):
    from sklmn.benchmarks._bench import SCRIPTS

    assert main(["bench"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in SCRIPTS)
    assert main(["bench", "nope"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["bench", "enrnn", "--help"])
    assert exc.value.code == 0
    # the benchmark's own arguments, under the one command's name
    assert "usage: python -m sklmn.benchmarks bench enrnn" in capsys.readouterr().out


def test_every_bench_module_has_a_main():
    import importlib

    from sklmn.benchmarks._bench import SCRIPTS

    for name, (module, description) in SCRIPTS.items():
        mod = importlib.import_module(f"sklmn.benchmarks._bench.{module}")
        assert callable(mod.main), name
        assert description


@pytest.mark.parametrize(
    ("argv", "seeds", "progress"),
    [
        ([], [0], True),
        (["--preset", "full"], [0, 1, 2], True),
        (["--seeds", "2", "--no-progress"], [0, 1], False),
    ],
)
def test_papers_defaults(argv, seeds, progress, monkeypatch):
    from sklmn.benchmarks import __main__ as cli

    calls = []

    def fake(preset, **kwargs):
        calls.append(kwargs)
        return []

    monkeypatch.setattr(cli, "run_benchmarks", fake)
    assert main(argv) == 0
    (kwargs,) = calls
    assert kwargs["seeds"] == seeds and kwargs["progress"] is progress
    assert kwargs["n_jobs"] == 2
