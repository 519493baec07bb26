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
