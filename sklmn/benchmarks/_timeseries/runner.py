"""The time-series suite's run loop: one fit per (dataset, model, seed), JSON
records."""

from __future__ import annotations

import functools
import json
import math
import os
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from numbers import Integral
from pathlib import Path

import numpy as np
import torch
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from .datasets import DATASETS, METRICS, DatasetInfo, SuiteDataset, _dataset_info
from .models import MODELS, parse_model_spec
from .probes import RadiusProbe, StartProbe
from .report import format_timeseries_report


# -- helpers --
def count_loss_spikes(losses, factor=2.0):
    """Count the epochs whose loss exceeds ``factor`` times the smallest
    earlier loss.

    An epoch ``t >= 1`` is a spike when ``loss[t] > factor * min(loss[:t])``:
    the training loss jumped well above the best value reached so far (a sign
    of an unstable run, e.g. an exploding linear memory). The first epoch is
    never one: the start is not an entry of ``loss_curve_``, whose values are
    the means of each epoch's minibatch losses, each measured before its
    update (with one minibatch per epoch, the first value is the start's
    loss).

    Parameters
    ----------
    losses : sequence of float
        Per-epoch training losses (``loss_curve_``).
    factor : float, default=2.0
        Jump ratio that counts as a spike (> 1).

    Returns
    -------
    n_spikes : int

    Examples
    --------
    >>> count_loss_spikes([1.0, 0.5, 0.4, 0.9, 0.3, 0.61])
    2
    >>> count_loss_spikes([1.0, 0.4, 0.9])  # above twice 0.4, not twice 1.0
    1
    >>> count_loss_spikes([])
    0
    """
    if not (isinstance(factor, int | float) and factor > 1):
        raise ValueError(f"factor must be a number > 1, got {factor!r}.")
    loss = np.asarray(list(losses), dtype=float)
    if loss.size < 2:
        return 0
    best = np.minimum.accumulate(loss)[:-1]
    return int(np.sum(loss[1:] > factor * best))


#: Per-process cache of loaded datasets, keyed by (run id, dataset name):
#: loky reuses its workers, so a worker fitting several models of a dataset
#: loads it once; a new run id evicts the previous run's data.
_DATA_CACHE: dict[tuple[str, str], tuple] = {}


@functools.cache
def _warm_up() -> None:
    """Import, once per process, what a first fit would import lazily.

    Building the first torch optimizer of a process imports ``torch._dynamo``
    (and sympy), which the first timed fit of every worker would otherwise
    count as its own fitting time.
    """
    torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])


def _final_step(est):
    return est.steps[-1][1] if isinstance(est, Pipeline) else est


def _fit_one(
    dataset_name: str,
    dataset: SuiteDataset,
    label: str,
    factory: Callable,
    overrides: dict,
    seed: int,
    threads: int,
    run_id: str,
) -> dict:
    """Fit and score one (dataset, model, seed); never raises (except ^C)."""
    import torch
    from threadpoolctl import threadpool_limits

    record = {
        "dataset": dataset_name,
        "task": dataset.task,
        "model": label,
        "seed": int(seed),
        "metric": METRICS[dataset.task],
        "score": None,
        "status": "error",
        "fit_seconds": None,
        "predict_seconds": None,
        "n_iter": None,
        "n_spikes": None,
        "final_loss": None,
        "start_score": None,
        "radii": None,
        "input_expansion": None,
        "splines": None,
        "recovered": None,
        "n_train": None,
        "n_test": None,
        "note": "",
        "warnings": [],
        "estimator": "",
        "error": None,
        "finished": None,
    }
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(threads), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            key = (run_id, dataset_name)
            if key not in _DATA_CACHE:
                for old in [k for k in _DATA_CACHE if k[0] != run_id]:
                    del _DATA_CACHE[old]
                data = dataset.load()
                info = _dataset_info(dataset_name, dataset.task, data)
                _DATA_CACHE[key] = (data, info)
            (X_train, X_test, y_train, y_test), info = _DATA_CACHE[key]
            record["n_train"], record["n_test"] = info.n_train, info.n_test
            built = factory(seed, info)
            est, note = built if isinstance(built, tuple) else (built, "")
            if overrides:
                # a settings object of the spec is shared by its fits: each
                # fit gets its own copy
                est.set_params(
                    **{k: clone(v, safe=False) for k, v in overrides.items()}
                )
            record["note"] = note
            record["estimator"] = repr(est)  # as configured, without the probes
            probes = _add_probes(_final_step(est))
            _warm_up()
            t0 = time.perf_counter()
            try:
                est.fit(X_train, y_train)
            except FloatingPointError as exc:
                record["fit_seconds"] = _fit_seconds(est, t0, probes)
                record["status"] = "diverged"
                record["error"] = f"FloatingPointError: {exc}"
                record["warnings"] = _warning_lines(caught)
                return record
            record["fit_seconds"] = _fit_seconds(est, t0, probes)
            t0 = time.perf_counter()
            pred = est.predict(X_test)
            record["predict_seconds"] = time.perf_counter() - t0
        score = _score(pred, y_test, dataset.task)
        record["score"] = score
        record["status"] = "ok" if math.isfinite(score) else "diverged"
        final = _final_step(est)
        n_iter = getattr(final, "n_iter_", None)
        if n_iter is not None:
            record["n_iter"] = int(np.max(n_iter))
        curve = getattr(final, "loss_curve_", None)
        if curve is not None:
            record["n_spikes"] = count_loss_spikes(curve)
            record["final_loss"] = float(curve[-1]) if len(curve) else None
        # fit recovered from a divergence (kept its best weights, warned)
        record["recovered"] = bool(getattr(final, "diverged_", False))
        steps = getattr(final, "input_expansion_", None)  # the LMN classifiers'
        record["input_expansion"] = None if steps is None else int(steps)
        splines = getattr(final, "projection_splines_", None)  # the projection's
        record["splines"] = None if splines is None else bool(splines)
        record["warnings"] = _warning_lines(caught)
        if probes:
            # the suite's own measurements: their failure is not the fit's
            try:
                record["start_score"] = _start_score(
                    est, X_test, y_test, dataset.task
                )
                radii = _probe(final, RadiusProbe).log_
                record["radii"] = radii if any(r is not None for r in radii) else None
            except Exception as exc:  # noqa: BLE001
                record["warnings"].append(
                    "probe failed: "
                    + "".join(traceback.format_exception_only(type(exc), exc))
                    .strip()[:200]
                )
    except Exception as exc:  # noqa: BLE001 - one failing fit must not end the run
        record["error"] = "".join(
            traceback.format_exception_only(type(exc), exc)
        ).strip()[:1000]
    finally:
        torch.set_num_threads(previous)
        record["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    return record


def _warning_lines(caught) -> list[str]:
    """The first five distinct warnings of a fit, one line each."""
    messages = dict.fromkeys(
        f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught
    )
    return list(messages)[:5]


def _add_probes(final) -> bool:
    """Add the start and radius probes to an sklmn network estimator."""
    if "callbacks" not in final.get_params(deep=False):
        return False
    callbacks = list(final.get_params(deep=False)["callbacks"] or [])
    callbacks += [("suite_radius", RadiusProbe())]
    final.set_params(callbacks=callbacks)
    # the start is copied before the model's own callbacks run: the
    # projection fine-tuning changes the network when training begins
    final._leading_callbacks = [("suite_start", StartProbe())]
    return True


def _fit_seconds(est, t0: float, probes: bool) -> float:
    """Wall seconds since ``t0``, less the time the suite's probes took."""
    elapsed = time.perf_counter() - t0
    net = getattr(_final_step(est), "net_", None)
    if not probes or net is None:  # a fit that failed keeps no net_
        return elapsed
    spent = sum(
        getattr(callback, "seconds_", 0.0)
        for _, callback in net.callbacks_
        if isinstance(callback, StartProbe | RadiusProbe)
    )
    return elapsed - spent


def _probe(final, kind):
    for _, callback in final.net_.callbacks_:
        if isinstance(callback, kind):
            return callback
    raise LookupError(kind.__name__)


def _start_score(est, X_test, y_test, task) -> float | None:
    """Test score of the network as it was before the first epoch."""
    import copy

    start = copy.deepcopy(est)
    final = _final_step(start)
    final.net_.module_ = _probe(final, StartProbe).module_
    return _score(start.predict(X_test), y_test, task)


def _score(pred, y_test, task) -> float:
    """Accuracy (classification) or RMSE (regression)."""
    if task == "classification":
        return float(np.mean(np.asarray(pred) == np.asarray(y_test)))
    diff = np.asarray(pred, dtype=float) - np.asarray(y_test, dtype=float)
    return float(np.sqrt(np.mean(diff**2)))


# -- results file --
def _key(record: dict) -> tuple:
    return (record["dataset"], record["model"], int(record["seed"]))


def _read_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path) as f:
        content = json.load(f)
    return list(content.get("records", []))


def _write_results(path: Path, records: list[dict]) -> None:
    import sklearn
    import torch

    from ... import __version__

    content = {
        "suite": "timeseries",
        "versions": {
            "sklmn": __version__,
            "torch": torch.__version__,
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
        },
        "records": sorted(records, key=_key),
    }
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(content, f, indent=1)
    os.replace(tmp, path)


# -- the run --
def run_timeseries_suite(
    *,
    datasets: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 5,
    jobs: int = 2,
    output_dir: str | os.PathLike = "benchmark_results",
    name: str = "timeseries",
    force: bool = False,
    report_only: bool = False,
    max_fit_seconds: float = 300.0,
    threads_per_job: int = 1,
    dataset_registry: dict[str, SuiteDataset] | None = None,
    model_registry: dict[str, dict[str, Callable]] | None = None,
    log: Callable[[str], None] = print,
) -> list[dict]:
    """Fit every selected model on every selected dataset, once per seed.

    Writes ``<output_dir>/<name>.json`` (raw records, rewritten after every
    fit) and ``<output_dir>/<name>.md`` (the report of the selected datasets,
    models and seeds).

    Parameters
    ----------
    datasets : list of str, default=None
        Names in the dataset registry (all when None).
    models : list of str, default=None
        Entries ``name`` or ``name:param=value,...`` (see
        :func:`parse_model_spec`); all registry models when None. A model runs
        on the datasets of the tasks it has a factory for.
    seeds : int or list of int, default=5
        Number of seeds (``0 .. seeds-1``) or the seeds themselves.
    jobs : int, default=2
        Fits run in parallel in that many worker processes (joblib's loky);
        1 runs them in this process.
    output_dir : str or path-like, default='benchmark_results'
    name : str, default='timeseries'
        Stem of the JSON and Markdown files.
    force : bool, default=False
        Refit (dataset, model, seed) triples already in the JSON file. Without
        it, they are skipped, except those that failed with an error.
    report_only : bool, default=False
        Fit nothing: write the report of the selection from the records
        already in the JSON file (a cell with fewer seeds than requested
        says so).
    max_fit_seconds : float, default=300
        Fits whose wall time exceeds it are flagged in the log and the report
        (they are not stopped).
    threads_per_job : int, default=1
        torch and BLAS threads of every fit.
    dataset_registry : dict, default=None
        ``{name: SuiteDataset}``; :data:`DATASETS` when None.
    model_registry : dict, default=None
        ``{name: {task: factory}}``; :data:`MODELS` when None.
    log : callable, default=print
        Progress sink.

    Returns
    -------
    records : list of dict
        The records of the selection (new and previously stored), sorted by
        dataset, model and seed. Keys: ``dataset``, ``task``, ``model``,
        ``seed``, ``metric`` (``'accuracy'`` or ``'rmse'``), ``score``,
        ``status`` (``'ok'``, ``'diverged'`` or ``'error'``), ``fit_seconds``
        (wall time of ``fit``, less the suite's own probes),
        ``predict_seconds``, ``n_iter``, ``n_spikes``, ``final_loss``,
        ``start_score`` (the test score of the network before its first
        epoch), ``radii`` (per epoch, the start first: the largest spectral
        radii of the memory map, see the report), ``input_expansion`` (the
        LMN classifiers' ``input_expansion_``), ``recovered`` (training
        stopped at a divergence, best weights kept), ``note``, ``warnings``,
        ``estimator`` (its repr), ``error``, ``finished``, ``n_train``,
        ``n_test``; a value that was not measured (a failed fit, a model
        without a loss curve or memory) is None.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklmn.benchmarks._timeseries.models import PadFlatten
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 5, 1)
    >>> y = np.where(X[:, 0, 0] > 0, "up", "down")
    >>> toy = SuiteDataset("classification", lambda: (X[:30], X[30:], y[:30], y[30:]))
    >>> registry = {"logreg": {"classification": lambda seed, info: make_pipeline(
    ...     PadFlatten(), LogisticRegression(random_state=seed))}}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     records = run_timeseries_suite(
    ...         seeds=2, jobs=1, output_dir=tmp, dataset_registry={"toy": toy},
    ...         model_registry=registry, log=lambda msg: None)
    >>> [(r["dataset"], r["model"], r["seed"], r["status"]) for r in records]
    [('toy', 'logreg', 0, 'ok'), ('toy', 'logreg', 1, 'ok')]
    >>> round(records[0]["score"], 2)
    0.8
    """
    dataset_registry = DATASETS if dataset_registry is None else dataset_registry
    model_registry = MODELS if model_registry is None else model_registry
    selected = _select_datasets(datasets, dataset_registry)
    specs = _select_models(models, model_registry)
    seed_list = _seed_list(seeds)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}.")
    if (
        isinstance(threads_per_job, bool)
        or not isinstance(threads_per_job, int)
        or (threads_per_job < 1)
    ):
        raise ValueError(
            f"threads_per_job must be an int >= 1, got {threads_per_job!r}."
        )
    if not (isinstance(max_fit_seconds, int | float) and max_fit_seconds > 0):
        raise ValueError(
            f"max_fit_seconds must be a number > 0, got {max_fit_seconds!r}."
        )
    if not isinstance(name, str) or not name or os.sep in name:
        raise ValueError(f"name must be a plain file stem, got {name!r}.")

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = output_dir / f"{name}.json", output_dir / f"{name}.md"
    stored = {_key(r): r for r in _read_results(json_path)}

    tasks, wanted = [], []
    for ds_name in selected:
        dataset = dataset_registry[ds_name]
        for base, overrides, label in specs:
            factory = model_registry[base].get(dataset.task)
            if factory is None:
                continue
            for seed in seed_list:
                key = (ds_name, label, seed)
                wanted.append(key)
                done = stored.get(key)
                if report_only or (
                    done is not None and not force and done.get("status") != "error"
                ):
                    continue
                tasks.append((ds_name, dataset, label, factory, overrides, seed))
    unused = [
        label
        for base, _, label in specs
        if not any(dataset_registry[d].task in model_registry[base] for d in selected)
    ]
    if unused:
        log(f"note: no selected dataset has the task of {unused}; they do not run")
    if report_only:  # nothing runs: say how many of the fits the file holds
        found = sum(key in stored for key in wanted)
        status = f"{found} found in {json_path} (report only), running 0"
    else:
        status = (
            f"{len(wanted) - len(tasks)} already in {json_path}, running "
            f"{len(tasks)} with {jobs} job(s)"
        )
    log(
        f"timeseries suite: {len(selected)} dataset(s) x {len(specs)} model(s) x "
        f"{len(seed_list)} seed(s) = {len(wanted)} fits; {status}"
    )
    t_all = time.perf_counter()
    run_id = uuid.uuid4().hex
    for i, record in enumerate(_execute(tasks, jobs, threads_per_job, run_id), 1):
        stored[_key(record)] = record
        _write_results(json_path, list(stored.values()))
        log(f"[{i}/{len(tasks)}] " + _progress_line(record, max_fit_seconds))
    records = [stored[k] for k in sorted(wanted) if k in stored]
    md_path.write_text(
        format_timeseries_report(
            records,
            max_fit_seconds=max_fit_seconds,
            dataset_order=selected,
            model_order=[label for _, _, label in specs],
            n_seeds=len(seed_list),
            descriptions={d: dataset_registry[d].description for d in selected},
        )
    )
    log(
        f"done in {time.perf_counter() - t_all:.1f} s; report: {md_path}, raw "
        f"results: {json_path}"
    )
    return sorted(records, key=_key)


def _select_datasets(datasets, registry) -> list[str]:
    if datasets is None:
        return list(registry)
    if isinstance(datasets, str):
        raise TypeError(
            f"datasets must be a list of names, got the string {datasets!r}."
        )
    names = list(dict.fromkeys(datasets))
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ValueError(f"unknown dataset(s) {unknown}; known: {list(registry)}.")
    if not names:
        raise ValueError("datasets is empty.")
    return names


def _select_models(models, registry) -> list[tuple[str, dict, str]]:
    if models is None:
        return [(n, {}, n) for n in registry]
    if isinstance(models, str):
        raise TypeError(f"models must be a list of specs, got the string {models!r}.")
    specs = [parse_model_spec(m) for m in models]
    unknown = [base for base, _, _ in specs if base not in registry]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; known: {list(registry)}.")
    if not specs:
        raise ValueError("models is empty.")
    return list({label: (b, o, label) for b, o, label in specs}.values())


def _check_overrides(specs, registry, tasks=None) -> None:
    """Refuse parameter overrides that a model's estimators do not have, or
    values that their parameter constraints refuse (for the estimators of
    ``tasks`` only, every task when None: a classifier's option run on
    classification sets alone is not refused for the regressor).

    Each factory builds its estimator for a small stand-in dataset and the
    overrides are set on it, as every fit does, then the parameters are
    checked as ``fit`` checks them first (scikit-learn's parameter
    constraints of the estimator and of each pipeline step); a factory that
    cannot build for the stand-in is not checked (its fits report the
    error).
    """
    for base, overrides, label in specs:
        if not overrides:
            continue
        for task, factory in registry[base].items():
            if tasks is not None and task not in tasks:
                continue
            info = DatasetInfo(
                "parameter check", task, 20, 10, 1, 10, 200,
                2 if task == "classification" else None,
            )  # fmt: skip
            try:
                built = factory(0, info)
            except Exception:  # noqa: BLE001 - checked at fit time instead
                continue
            est = built[0] if isinstance(built, tuple) else built
            try:
                est.set_params(**overrides)
                steps = [s for _, s in est.steps] if isinstance(est, Pipeline) else []
                for step in [est, *steps]:
                    if hasattr(step, "_validate_params"):
                        step._validate_params()
            except ValueError as exc:  # InvalidParameterError included
                raise ValueError(f"model {label!r} ({task}): {exc}") from None


def _seed_list(seeds) -> list[int]:
    if isinstance(seeds, bool | str | bytes) or not isinstance(
        seeds, Integral | Iterable
    ):
        raise TypeError(f"seeds must be an int or a list of ints, got {seeds!r}.")
    if isinstance(seeds, Integral):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {seeds}.")
        return list(range(int(seeds)))
    out = list(dict.fromkeys(seeds))
    if not out or not all(
        isinstance(s, Integral) and not isinstance(s, bool) for s in out
    ):
        raise ValueError(f"seeds must be a non-empty list of ints, got {seeds!r}.")
    out = list(dict.fromkeys(int(s) for s in out))
    if min(out) < 0:
        raise ValueError(f"seeds must be >= 0 (numpy seeds), got {seeds!r}.")
    return out


def _execute(tasks, jobs: int, threads: int, run_id: str):
    """Yield the records of ``tasks`` as they complete."""
    try:
        if jobs == 1 or len(tasks) <= 1:
            for task in tasks:
                yield _fit_one(*task, threads, run_id)
            return
        from joblib import Parallel, delayed

        parallel = Parallel(
            n_jobs=jobs, backend="loky", return_as="generator_unordered"
        )
        yield from parallel(delayed(_fit_one)(*task, threads, run_id) for task in tasks)
    finally:
        for key in [k for k in _DATA_CACHE if k[0] == run_id]:
            del _DATA_CACHE[key]


def _progress_line(r: dict, cap: float) -> str:
    head = f"{r['dataset']} | {r['model']} | seed {r['seed']}: "
    if r["status"] == "error":
        return head + f"FAILED: {r['error']}"
    parts = []
    if r["status"] == "diverged":
        parts.append("diverged")
    if r["score"] is not None:
        parts.append(f"{r['metric']} {r['score']:.4f}")
    if r["fit_seconds"] is not None:
        flag = f" (over the {cap:g} s cap)" if r["fit_seconds"] > cap else ""
        parts.append(f"fit {r['fit_seconds']:.1f} s{flag}")
    if r["n_iter"] is not None:
        parts.append(f"{r['n_iter']} iterations")
    if r["n_spikes"] is not None:
        parts.append(f"{r['n_spikes']} loss spike(s)")
    if r["note"]:
        parts.append(r["note"])
    return head + ", ".join(parts)
