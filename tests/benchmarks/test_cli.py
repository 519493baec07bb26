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
        ([], {"copy-task": [0], "laes-reconstruction": [0]}, True),
        (
            ["--preset", "full"],
            {"copy-task": [0, 1, 2], "laes-reconstruction": [0, 1, 2, 3, 4]},
            True,
        ),
        (["--seeds", "2", "--no-progress"], [0, 1], False),
        (["--preset", "full", "--seed-list", "3", "4"], [3, 4], True),
    ],
)
def test_papers_defaults(argv, seeds, progress, monkeypatch):
    from sklmn.benchmarks import EXPERIMENTS
    from sklmn.benchmarks import __main__ as cli

    calls = []

    def fake(preset, **kwargs):
        calls.append(kwargs)
        return []

    monkeypatch.setattr(cli, "run_benchmarks", fake)
    assert main(argv) == 0
    (kwargs,) = calls
    if isinstance(seeds, dict):  # each experiment its own seeds
        assert set(kwargs["seeds"]) == set(EXPERIMENTS)
        assert {k: kwargs["seeds"][k] for k in seeds} == seeds
    else:
        assert kwargs["seeds"] == seeds
    assert kwargs["progress"] is progress
    assert kwargs["n_jobs"] == 2


def test_full_preset_runs_five_seeds_where_a_seed_takes_under_a_minute():
    from sklmn.benchmarks._experiments import (
        DEFAULT_SEEDS,
        EXPERIMENTS,
        SEEDS_PER_EXPERIMENT,
        default_seeds,
    )

    assert set(SEEDS_PER_EXPERIMENT["full"]) <= set(EXPERIMENTS)
    full = default_seeds("full")
    assert all(len(full[n]) >= DEFAULT_SEEDS["full"] >= 3 for n in EXPERIMENTS)
    for name in ("laes-reconstruction", "sequential-digits", "char-ptb"):
        assert full[name] == [0, 1, 2, 3, 4]
    assert all(seeds == [0] for seeds in default_seeds("quick").values())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--only", "nope"], "--only: unknown experiment(s) ['nope']"),
        (["--only", "char-ptb"], "['char-ptb'] run in the full preset only"),
    ],
)
def test_only_names_are_usage_errors(argv, message, capsys, monkeypatch):
    # a usage error (exit status 2, the message on stderr), not a traceback
    # out of the runner
    from sklmn.benchmarks import __main__ as cli

    monkeypatch.setattr(cli, "run_benchmarks", pytest.fail)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_every_bench_prints_its_help(capsys):
    # --help ran layout-rule's whole measurement and was read as the results
    # file of stable-memory-report (FileNotFoundError)
    from sklmn.benchmarks._bench import SCRIPTS

    for name in SCRIPTS:
        with pytest.raises(SystemExit) as exc:
            main(["bench", name, "--help"])
        assert exc.value.code == 0, name
        out = capsys.readouterr().out
        assert out.startswith(f"usage: python -m sklmn.benchmarks bench {name}"), name


def test_bench_threads_refuses_unknown_cases(capsys):
    # an unknown case measured nothing and printed an empty table
    with pytest.raises(SystemExit) as exc:
        main(["bench", "threads", "--cases", "nope"])
    assert exc.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("suite", ["papers", "timeseries"])
def test_output_dir_that_is_a_file_is_a_usage_error(suite, tmp_path, capsys):
    # it was a FileExistsError traceback out of mkdir
    path = tmp_path / "results.md"
    path.write_text("")
    with pytest.raises(SystemExit) as exc:
        main(["--suite", suite, "--output-dir", str(path)])
    assert exc.value.code == 2
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed-list", "-1"], "the seeds must be >= 0 (numpy seeds), got [-1]"),
        (["--seed-list", "2", "-3"], "the seeds must be >= 0 (numpy seeds)"),
        (["--seeds", "0"], "--seeds must be >= 1, got 0"),
        (["--seeds", "-2"], "--seeds must be >= 1, got -2"),
        (["--suite", "timeseries", "--seed-list", "-1"], "seeds must be >= 0"),
    ],
)
def test_bad_seeds_are_usage_errors(argv, message, capsys, monkeypatch):
    # a negative seed ran every experiment, each failing inside its worker
    # on the estimators' random_state check (exit status 1, a report of
    # failures); the time-series suite recorded every fit as failed
    from sklmn.benchmarks import __main__ as cli
    from sklmn.benchmarks import _timeseries

    monkeypatch.setattr(cli, "run_benchmarks", pytest.fail)
    monkeypatch.setattr(_timeseries, "run_timeseries_suite", pytest.fail)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_runner_rejects_negative_seeds(tmp_path):
    from sklmn.benchmarks._runner import ExperimentResult, run_experiments

    def _tiny(preset, output_dir, log, *, seed=0):
        return ExperimentResult("tiny")

    with pytest.raises(ValueError, match=r"seeds must be >= 0 \(numpy seeds\)"):
        run_experiments({"tiny": (_tiny, "")}, "quick", output_dir=tmp_path,
                        seeds=[-1])
    with pytest.raises(ValueError, match=r"seeds must be >= 0 \(numpy seeds\)"):
        run_experiments({"tiny": (_tiny, "")}, "quick", output_dir=tmp_path,
                        seeds={"tiny": [0, -2]})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["copy-budget", "--epochs", "0"], "--epochs: must be an int >= 1, got '0'"),
        (["copy-budget", "--seed", "-1"], "--seed: must be an int >= 0, got '-1'"),
        (["copy-budget", "--hidden", "x"], "--hidden: must be an int >= 1, got 'x'"),
        (["copy-budget", "--set", "truncate_gradient"], "--set: expected PARAM=VALUE"),
        (["copy-budget", "--set", "nope=1"], "--set: Invalid parameter 'nope'"),
        (["enrnn-split", "--seed", "-1"], "--seed: must be an int >= 0"),
        (["lmn-controls", "--item", "copy-lmn", "--seed", "-2"], "--seed: must be"),
        (["enrnn-controls", "--task", "adding", "--seed", "-1"], "--seed: must be"),
        (["enrnn-controls", "--task", "copy", "--chunks", "0"], "--chunks: must be"),
        (["enrnn-controls", "--task", "copy", "--length", "1"], "--length: must be"),
        (["chorales-pretraining", "--memory", "0"], "--memory: must be an int >= 1"),
        (["chorales-pretraining", "--pre-epochs", "-1"], "--pre-epochs: must be"),
        (["claim-tables", "nope/results.md"], "no such report: nope/results.md"),
    ],
)
def test_bench_bad_arguments_are_usage_errors(argv, message, capsys):
    # they were tracebacks out of the estimators' parameter checks (after
    # the data were built) or out of read_text; a bad --set literal was a
    # SyntaxError
    with pytest.raises(SystemExit) as exc:
        main(["bench", *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_data_dir_help_names_every_folder_read():
    # the help left out DIR/ptb/ (char-ptb) and the music-sets pickles
    from sklmn.benchmarks._exp_music_claims import _SET_FILES
    from sklmn.benchmarks._real_data import REAL_DATA

    action = next(a for a in _parser()._actions if "--data-dir" in a.option_strings)
    text = " ".join(action.help.split())
    for path, _ in REAL_DATA.values():
        top = path.split("/")[0]
        assert f"DIR/{top}" in text, path
    for filename in _SET_FILES.values():
        assert filename.removesuffix(".pickle") in text, filename


def test_list_marks_the_experiments_of_the_full_preset_only(capsys):
    # the quick preset (bash dev.sh demo) leaves them out, and --only refuses
    # them without --preset full; the list did not say which they were
    from sklmn.benchmarks import EXPERIMENTS
    from sklmn.benchmarks._experiments import FULL_ONLY

    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(EXPERIMENTS)
    marked = {line.split()[0] for line in lines if "[--preset full only]" in line}
    assert marked == set(FULL_ONLY) and FULL_ONLY < set(EXPERIMENTS)
