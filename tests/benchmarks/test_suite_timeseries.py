"""Machinery of the time-series suite on tiny in-memory data (no wheels needed)."""

import json
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from sklmn.benchmarks import __main__ as cli
from sklmn.benchmarks._timeseries import (
    DATASETS,
    MODELS,
    PUBLISHED,
    DatasetInfo,
    SuiteDataset,
    count_loss_spikes,
    format_timeseries_report,
    parse_model_spec,
    run_timeseries_suite,
)
from sklmn.benchmarks._timeseries import runner as suite
from sklmn.benchmarks._timeseries.models import VARIANTS
from sklmn.estimators import LMNClassifier, LMNRegressor
from sklmn.pretraining import IncrementalTraining, ProjectionFineTuning


def _toy_classification():
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(4, 7), 1) for _ in range(24)]
    y = np.array(["up" if x[0, 0] > 0 else "down" for x in X])
    return X[:16], X[16:], y[:16], y[16:]


def _toy_regression():
    rng = np.random.RandomState(1)
    X = rng.rand(30, 5, 2)
    y = X[:, :, 0].sum(axis=1)
    return X[:20], X[20:], y[:20], y[20:]


TOY = {
    "toy_clf": SuiteDataset("classification", _toy_classification, "ragged toy"),
    "toy_reg": SuiteDataset("regression", _toy_regression, "2-dim toy"),
}


class _Boom(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        raise RuntimeError("boom")


class _Diverge(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        warnings.warn("the loss grew at epoch 1", RuntimeWarning, stacklevel=2)
        raise FloatingPointError("non-finite loss at epoch 1")


class _Recovered(ClassifierMixin, BaseEstimator):
    """Fits, but reports that its training stopped at a divergence."""

    def fit(self, X, y):
        self.classes_, self.diverged_ = np.unique(y), True
        self.loss_curve_ = [1.0, 1e9]
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


TINY = {
    "lmn": {
        "classification": lambda seed, info: LMNClassifier(
            hidden_size=4, memory_size=4, max_iter=2, random_state=seed
        ),
        "regression": lambda seed, info: LMNRegressor(
            hidden_size=4, memory_size=4, max_iter=2, random_state=seed
        ),
    },
    # the real factories: LAES must be capped at L * d = 6 components here
    "laes_logreg": MODELS["laes_logreg"],
    "mean": MODELS["mean"],
    "ridge": MODELS["ridge"],
}


def run(tmp_path, **kwargs):
    kwargs.setdefault("dataset_registry", TOY)
    kwargs.setdefault("model_registry", TINY)
    kwargs.setdefault("seeds", 2)
    kwargs.setdefault("jobs", 1)
    messages = []
    records = run_timeseries_suite(output_dir=tmp_path, log=messages.append, **kwargs)
    return records, messages


def test_run_writes_json_and_report_and_resumes(tmp_path):
    records, log = run(tmp_path)
    # lmn x 2 tasks, laes_logreg on classification, mean/ridge on regression
    assert len(records) == 2 * (2 + 1 + 2)
    assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
    by = {(r["dataset"], r["model"], r["seed"]): r for r in records}
    lmn = by[("toy_clf", "lmn", 0)]
    assert lmn["metric"] == "accuracy" and 0 <= lmn["score"] <= 1
    assert lmn["n_iter"] == 2 and lmn["n_spikes"] is not None
    assert lmn["fit_seconds"] > 0 and "LMNClassifier" in lmn["estimator"]
    laes = by[("toy_clf", "laes_logreg", 1)]
    assert "capped at 6" in laes["note"] and laes["n_spikes"] is None
    ridge = by[("toy_reg", "ridge", 0)]
    assert ridge["metric"] == "rmse" and ridge["score"] >= 0
    assert by[("toy_reg", "mean", 0)]["n_iter"] is None
    assert any("running 10" in m for m in log)
    assert sum(m.startswith("[") for m in log) == 10

    stored = json.loads((tmp_path / "timeseries.json").read_text())
    assert len(stored["records"]) == 10 and "torch" in stored["versions"]
    report = (tmp_path / "timeseries.md").read_text()
    for heading in ("## Classification", "## Regression", "## Fit time", "## Loss"):
        assert heading in report
    assert "| toy_clf |" in report and "capped at 6" in report
    # "best sklmn" ignores the non-sklmn baselines (mean, ridge)
    reg_row = next(line for line in report.splitlines() if line.startswith("| toy_reg"))
    assert reg_row.endswith("| lmn |")

    # a second run finds everything done; --force refits
    again, log = run(tmp_path)
    assert any("10 already in" in m and "running 0" in m for m in log)
    assert [r["finished"] for r in again] == [r["finished"] for r in records]
    _, log = run(tmp_path, datasets=["toy_reg"], models=["mean"], force=True)
    assert any("running 2" in m for m in log)
    # report_only fits nothing: a third seed shows as n=2 of 3
    partial, log = run(tmp_path, datasets=["toy_reg"], seeds=3, report_only=True)
    assert any("running 0" in m for m in log) and {r["seed"] for r in partial} == {0, 1}
    assert "(n=2)" in (tmp_path / "timeseries.md").read_text()


def test_report_only_says_how_many_fits_the_file_holds(tmp_path):
    # it said that every selected fit was "already in" the file, even when
    # the file did not exist
    _, log = run(tmp_path, datasets=["toy_reg"], models=["mean"], report_only=True)
    assert any("0 found in" in m and "running 0" in m for m in log), log
    run(tmp_path, datasets=["toy_reg"], models=["mean"], seeds=1)
    _, log = run(tmp_path, datasets=["toy_reg"], models=["mean"], report_only=True)
    assert any("= 2 fits; 1 found in" in m for m in log), log


def test_overrides_errors_divergence_and_cap(tmp_path):
    registry = dict(TINY, boom={"classification": lambda s, i: _Boom()})
    registry["diverge"] = {"classification": lambda s, i: _Diverge()}
    registry["recover"] = {"classification": lambda s, i: _Recovered()}
    records, log = run(
        tmp_path,
        datasets=["toy_clf"],
        models=["lmn:max_iter=1,learning_rate_init=0.01", "boom", "diverge", "recover"],
        seeds=[3],
        model_registry=registry,
        max_fit_seconds=1e-9,
    )
    by = {r["model"]: r for r in records}
    lmn = by["lmn[max_iter=1,learning_rate_init=0.01]"]
    assert lmn["status"] == "ok" and lmn["n_iter"] == 1 and lmn["seed"] == 3
    assert "learning_rate_init=0.01" in lmn["estimator"]
    assert by["boom"]["status"] == "error"
    assert by["boom"]["error"] == "RuntimeError: boom"
    # every record has the documented keys (a failed fit lacked 'recovered')
    assert set(by["boom"]) == set(lmn) and by["boom"]["recovered"] is None
    assert by["diverge"]["status"] == "diverged"
    # what the fit warned before it diverged (lost: the record had none)
    assert by["diverge"]["warnings"] == ["RuntimeWarning: the loss grew at epoch 1"]
    assert any("FAILED: RuntimeError: boom" in m for m in log)
    assert any("over the 1e-09 s cap" in m for m in log)
    report = (tmp_path / "timeseries.md").read_text()
    assert "## Diverged or failed fits" in report and "## Fits over the" in report
    assert by["recover"]["status"] == "ok" and by["recover"]["recovered"]
    assert not lmn["recovered"]
    assert "- toy_clf / recover: 1 of 1 fits" in report
    # errors are retried on the next run, divergences are not
    _, log = run(
        tmp_path,
        datasets=["toy_clf"],
        models=["boom", "diverge"],
        seeds=[3],
        model_registry=registry,
    )
    assert any("1 already in" in m and "running 1" in m for m in log)


def test_parallel_jobs(tmp_path):
    records, _ = run(tmp_path, models=["mean", "ridge", "laes_logreg"], jobs=2)
    assert len(records) == 6 and all(r["status"] == "ok" for r in records)
    assert not suite._DATA_CACHE  # the parent's cache is emptied after a run


def test_cli_timeseries(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(DATASETS, "toy_clf", TOY["toy_clf"])
    monkeypatch.setitem(MODELS, "tiny_lmn", TINY["lmn"])
    argv = ["--suite", "timeseries", "--output-dir", str(tmp_path), "--jobs", "1"]
    argv += ["--datasets", "toy_clf", "--models", "tiny_lmn", "--seed-list", "5"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "toy_clf | tiny_lmn | seed 5: accuracy" in out
    records = json.loads((tmp_path / "timeseries.json").read_text())["records"]
    assert [(r["model"], r["seed"]) for r in records] == [("tiny_lmn", 5)]
    # --tuning writes its own report; explicit --datasets/--seeds win
    argv = ["--suite", "timeseries", "--output-dir", str(tmp_path), "--jobs", "1"]
    argv += [
        "--tuning",
        "--datasets",
        "toy_clf",
        "--models",
        "tiny_lmn",
        "--seeds",
        "1",
    ]
    assert cli.main(argv) == 0
    assert (tmp_path / "timeseries_tuning.md").exists()
    assert cli.main(["--suite", "timeseries", "--list"]) == 0
    assert "laes_logreg" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--suite", "timeseries", "--preset", "full"], "--preset: only with --suite"),
        (["--models", "lmn"], "--models: only with --suite timeseries"),
        (["--suite", "timeseries", "--models", "nope"], "unknown model"),
        (["--suite", "timeseries", "--datasets", "GunPoint"], "unknown dataset"),
        (["--suite", "timeseries", "--seeds", "0"], "seeds must be >= 1"),
        (["--suite", "timeseries", "--jobs", "0"], "--jobs must be >= 1"),
        (["--suite", "timeseries", "--max-fit-seconds", "0"], "must be > 0"),
        (["--suite", "timeseries", "--models", "lmn:lr"], "expected param=value"),
        # an option of the other suite given the value 0 was ignored
        (["--max-fit-seconds", "0"], "--max-fit-seconds: only with --suite timeseries"),
        (
            ["--suite", "timeseries", "--report-only", "--force"],
            "--force refits, --report-only fits nothing",
        ),
        # --tuning read --seeds 0 as "not given" and ran its 2 seeds
        (["--suite", "timeseries", "--tuning", "--seeds", "0"], "seeds must be >= 1"),
    ],
)
def test_cli_usage_errors(argv, message, capsys, monkeypatch):
    import sklmn.benchmarks._timeseries as timeseries

    # without the check, a run would start (the whole tuning subset)
    monkeypatch.setattr(timeseries, "run_timeseries_suite", pytest.fail)
    monkeypatch.setattr(cli, "run_benchmarks", pytest.fail)
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec, message",
    [
        ("lmn:foo=1", "model 'lmn[foo=1]' (classification): Invalid parameter 'foo'"),
        ("laes_logreg:ridge__alpha=1", "Invalid parameter 'ridge'"),
        # a value that the estimator's constraints refuse (every fit failed)
        (
            "lmn:hidden_size=-1",
            "model 'lmn[hidden_size=-1]' (classification): The 'hidden_size' "
            "parameter of LMNClassifier must be an int in the range [1, inf)",
        ),
        (
            "laes_logreg:logisticregression__C=-1",
            "The 'C' parameter of LogisticRegression must be a float",
        ),
    ],
)
def test_cli_unknown_override_is_a_usage_error(spec, message, capsys, monkeypatch):
    # every fit of the run failed on it, one FAILED line per dataset and seed
    import sklmn.benchmarks._timeseries as timeseries

    monkeypatch.setattr(timeseries, "run_timeseries_suite", pytest.fail)
    with pytest.raises(SystemExit) as exc:
        cli.main(["--suite", "timeseries", "--models", "mean", spec])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_argument_validation(tmp_path):
    with pytest.raises(ValueError, match=r"jobs must be an int >= 1, got 0"):
        run(tmp_path, jobs=0)
    with pytest.raises(ValueError, match=r"threads_per_job must be an int >= 1"):
        run(tmp_path, threads_per_job=0)
    with pytest.raises(ValueError, match=r"max_fit_seconds must be a number > 0"):
        run(tmp_path, max_fit_seconds=-1)
    with pytest.raises(ValueError, match=r"name must be a plain file stem"):
        run(tmp_path, name="a/b")
    with pytest.raises(TypeError, match=r"datasets must be a list of names"):
        run(tmp_path, datasets="toy_clf")
    with pytest.raises(TypeError, match=r"models must be a list of specs"):
        run(tmp_path, models="lmn")
    with pytest.raises(ValueError, match=r"unknown dataset\(s\) \['x'\]"):
        run(tmp_path, datasets=["x"])
    with pytest.raises(ValueError, match=r"datasets is empty"):
        run(tmp_path, datasets=[])
    with pytest.raises(ValueError, match=r"models is empty"):
        run(tmp_path, models=[])
    with pytest.raises(ValueError, match=r"seeds must be a non-empty list of ints"):
        run(tmp_path, seeds=[1.5])
    with pytest.raises(TypeError, match=r"seeds must be an int or a list of ints"):
        run(tmp_path, seeds=True)
    with pytest.raises(TypeError, match=r"seeds must be an int or a list of ints"):
        run(tmp_path, seeds=2.0)


def test_numpy_integer_seeds(tmp_path):
    # np.int64(2) failed with "'numpy.int64' object is not iterable", and a
    # list of numpy integers was refused as "not a list of ints"
    records, _ = run(tmp_path, datasets=["toy_reg"], models=["mean"], seeds=np.int64(2))
    assert [r["seed"] for r in records] == [0, 1]
    records, _ = run(
        tmp_path, datasets=["toy_reg"], models=["mean"], seeds=np.array([1, 3])
    )
    assert [r["seed"] for r in records] == [1, 3]
    assert all(type(r["seed"]) is int for r in records)


def test_model_without_factory_for_the_task_is_noted(tmp_path):
    records, log = run(tmp_path, datasets=["toy_reg"], models=["laes_logreg", "mean"])
    assert {r["model"] for r in records} == {"mean"}
    assert any("['laes_logreg']" in m and "do not run" in m for m in log)


def test_count_loss_spikes():
    assert count_loss_spikes([3.0]) == 0
    assert count_loss_spikes([1.0, 2.0, 2.1]) == 1  # 2.0 is not > 2 x 1.0
    assert count_loss_spikes([1.0, 0.1, 0.3, 0.25], factor=2.0) == 2
    with pytest.raises(ValueError, match=r"factor must be a number > 1, got 1"):
        count_loss_spikes([1.0], factor=1)


def test_parse_model_spec():
    assert parse_model_spec(" gru ") == ("gru", {}, "gru")
    name, overrides, label = parse_model_spec(
        "lmn:max_iter=5, pretrainer=None,optimizer='sgd',tag=x y"
    )
    assert overrides == {
        "max_iter": 5,
        "pretrainer": None,
        "optimizer": "sgd",
        "tag": "x y",
    }
    assert label == "lmn[max_iter=5,pretrainer=None,optimizer=sgd,tag=x y]"
    with pytest.raises(ValueError, match=r"non-empty string"):
        parse_model_spec("")
    with pytest.raises(ValueError, match=r"expected param=value after ':', got '=3'"):
        parse_model_spec("lmn:=3")


def test_parse_model_spec_keeps_commas_inside_brackets_and_quotes():
    # a tuple's commas split the spec (memory_ring=(0.5,0.999,1.5) was refused
    # with "expected param=value after ':', got '0.999'")
    name, overrides, label = parse_model_spec(
        "lmn:memory_ring=(0.5,0.999,1.5),tag='a,b',sizes=[1, 2],max_iter=3"
    )
    assert name == "lmn"
    assert overrides == {
        "memory_ring": (0.5, 0.999, 1.5),
        "tag": "a,b",
        "sizes": [1, 2],
        "max_iter": 3,
    }
    assert label == "lmn[memory_ring=(0.5, 0.999, 1.5),tag=a,b,sizes=[1, 2],max_iter=3]"
    with pytest.raises(ValueError, match=r"unbalanced brackets in 'memory_ring=\(0.5'"):
        parse_model_spec("lmn:memory_ring=(0.5")
    with pytest.raises(ValueError, match=r"unbalanced quote"):
        parse_model_spec("lmn:tag='a,b")
    # a parameter given twice was silently set to its last value
    with pytest.raises(ValueError, match=r"parameter 'max_iter' is given twice"):
        parse_model_spec("lmn:max_iter=3,max_iter=4")


def test_parse_model_spec_builds_settings_objects():
    # fine_tuning=ProjectionFineTuning(lr=0.003) was kept as a string, which
    # the estimator refuses: its settings could not be run through the suite
    name, overrides, label = parse_model_spec(
        "mslmn:fine_tuning=ProjectionFineTuning(lr=0.003, steps=50),max_iter=3"
    )
    assert name == "mslmn" and overrides["max_iter"] == 3
    settings = overrides["fine_tuning"]
    assert isinstance(settings, ProjectionFineTuning)
    assert (settings.lr, settings.steps, settings.every) == (0.003, 50, 20)
    # the label shows the object as written (its repr hides default values)
    assert label == (
        "mslmn[fine_tuning=ProjectionFineTuning(lr=0.003, steps=50),max_iter=3]"
    )
    incremental = parse_model_spec(
        "mslmn:incremental=IncrementalTraining(epochs_per_module=2)"
    )[1]["incremental"]
    assert isinstance(incremental, IncrementalTraining)
    assert incremental.epochs_per_module == 2
    # a name that is not a settings object stays a string
    assert parse_model_spec("lmn:tag=Foo(a=1)")[1] == {"tag": "Foo(a=1)"}
    with pytest.raises(ValueError, match=r"keyword arguments only"):
        parse_model_spec("lmn:fine_tuning=ProjectionFineTuning(0.1)")
    with pytest.raises(ValueError, match=r"the value of 'lr' .* not a Python literal"):
        parse_model_spec("lmn:fine_tuning=ProjectionFineTuning(lr=x)")
    with pytest.raises(ValueError, match=r"model spec .*'rate'"):
        parse_model_spec("lmn:fine_tuning=ProjectionFineTuning(rate=0.1)")


def test_settings_object_reaches_each_fit_as_its_own_copy(tmp_path):
    seen = []

    class _Record(ClassifierMixin, BaseEstimator):
        def __init__(self, settings=None):
            self.settings = settings

        def fit(self, X, y):
            seen.append(self.settings)
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])

    registry = {"rec": {"classification": lambda s, i: _Record()}}
    records, _ = run(
        tmp_path,
        datasets=["toy_clf"],
        models=["rec:settings=ProjectionFineTuning(steps=7)"],
        seeds=2,
        model_registry=registry,
    )
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert records[0]["model"] == "rec[settings=ProjectionFineTuning(steps=7)]"
    assert len(seen) == 2 and seen[0] is not seen[1]
    assert all(isinstance(v, ProjectionFineTuning) and v.steps == 7 for v in seen)


def test_real_registry_factories_build_default_estimators():
    info = DatasetInfo("d", "classification", 10, 5, 1, 24, 240, 2)
    for name, factories in MODELS.items():
        for factory in factories.values():
            built = factory(7, info)
            est, note = built if isinstance(built, tuple) else (built, "")
            params = est.get_params()
            seeded = {k: v for k, v in params.items() if k.endswith("random_state")}
            if name not in ("mean", "ridge"):
                assert seeded and all(v == 7 for v in seeded.values()), name
    lmn = MODELS["lmn"]["classification"](0, info)
    assert lmn.get_params() == LMNClassifier(random_state=0).get_params()
    laes, note = MODELS["laes_logreg"]["classification"](0, info)
    assert laes[0].n_components == 24 and "capped at 24" in note
    laes, note = MODELS["laes_logreg"]["classification"](
        0, DatasetInfo("d", "classification", 10, 5, 6, 100, 1000, 4)
    )
    assert laes[0].n_components == 32 and note == ""


def test_published_values_are_accuracies_of_known_datasets():
    for ds, values in PUBLISHED.items():
        assert DATASETS[ds].task == "classification"
        assert all(0 < v < 1 for v in values.values())


def test_report_means_and_best():
    recs = []
    for ds, scores in {"ArrowHead": (0.5, 0.9), "BasicMotions": (0.6, 0.4)}.items():
        for model, score in zip(("a", "b"), scores, strict=True):
            recs.append(
                dict(
                    dataset=ds,
                    task="classification",
                    model=model,
                    seed=0,
                    metric="accuracy",
                    score=score,
                    status="ok",
                    fit_seconds=1.0,
                    n_iter=None,
                    n_spikes=None,
                    note="",
                )
            )
    text = format_timeseries_report(recs, n_seeds=2)
    assert (
        "| ArrowHead | 0.500 (n=1) | 0.900 (n=1) | b | 0.703 | 0.800 | 0.814 |" in text
    )
    assert "| BasicMotions | 0.600 (n=1) | 0.400 (n=1) | a |  |  |  |" in text
    assert (
        "| mean over datasets | 0.550 (fewer seeds in 2) | 0.650 (fewer seeds in 2) "
        "| b | 0.703 (1/2 datasets) | "
        "0.800 (1/2 datasets) | 0.814 (1/2 datasets) |" in text
    )
    assert "| mean over the" not in text  # a single dataset with published values


def test_cli_tuple_override_reaches_the_run(monkeypatch):
    import sklmn.benchmarks._timeseries as timeseries

    calls = []
    monkeypatch.setattr(
        timeseries, "run_timeseries_suite", lambda **kw: calls.append(kw) or []
    )
    spec = "lmn:memory_ring=(0.5,0.999,1.5)"
    assert cli.main(["--suite", "timeseries", "--models", spec]) == 0
    assert calls[0]["models"] == [spec]
    est = MODELS["lmn"]["classification"](0, None)
    est.set_params(**parse_model_spec(spec)[1])
    assert est.memory_ring == (0.5, 0.999, 1.5)


def test_init_radius_variants_use_the_free_memory():
    # the radius rescales the free memory's random start; a Schur memory's
    # ring start ignores it, so on the regressors' Schur default the two
    # variants fitted exactly the default model (compared on the memory
    # matrix: the predictions of a LAES start barely depend on it)
    info = DatasetInfo("d", "regression", 10, 5, 2, 15, 150, 1)
    X = np.random.RandomState(0).randn(12, 15, 2)
    y = X.sum(axis=(1, 2))

    def memory(est):
        return est.net_.module_.recurrent.layers[0].weight_mm.detach().numpy()

    default = memory(LMNRegressor(max_iter=1, random_state=0).fit(X, y))
    for name in ("lmn_rawinit", "lmn_radius0.99"):
        for task in ("classification", "regression"):
            est = VARIANTS[name][task](0, info)
            assert est.get_params()["memory_matrix"] == "free", (name, task)
        est = VARIANTS[name]["regression"](0, info).set_params(max_iter=1)
        assert np.abs(memory(est.fit(X, y)) - default).max() > 1e-6, name


def test_cli_checks_a_classifier_option_on_classification_sets_only(
    capsys, monkeypatch
):
    # input_expansion exists on the LMN classifiers, not the regressors: a
    # run on classification sets takes it, one with a regression set refuses
    import sklmn.benchmarks._timeseries as timeseries

    calls = []
    monkeypatch.setattr(
        timeseries, "run_timeseries_suite", lambda **kw: calls.append(kw) or []
    )
    spec = "lmn:input_expansion=4"
    args = ["--suite", "timeseries", "--models", spec, "--datasets"]
    assert cli.main([*args, "ArrowHead"]) == 0
    assert calls[0]["models"] == [spec]
    with pytest.raises(SystemExit) as exc:
        cli.main([*args, "ArrowHead", "CardanoSentiment"])
    assert exc.value.code == 2
    assert "(regression): Invalid parameter 'input_expansion'" in (
        capsys.readouterr().err
    )
