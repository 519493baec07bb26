"""Time-series benchmark suite: ``python -m sklmn.benchmarks --suite timeseries``.

Every model of :data:`MODELS` is fitted on the standard train split of every
dataset of :data:`DATASETS` (six classification problems of the UCR/UEA
archives, CardanoSentiment and the adding problem for regression), once per
seed, with the library's default settings except ``random_state=seed``, on the
raw data (the suite rescales nothing). Test accuracy (classification) or RMSE
(regression), the fit's wall time, its number of epochs and the loss spikes of
its training curve go to a JSON file of raw results, one record per (dataset,
model, seed), written after every fit: an interrupted run resumes where it
stopped. A Markdown report puts the mean ± standard deviation over seeds next
to published 1NN-DTW and ROCKET accuracies.

Adding a model variant is one line, for example::

    MODELS["lmn_laes"] = {"classification": lambda seed, info: LMNClassifier(
        pretrainer=LAESInitializer(), random_state=seed)}

A factory receives the seed and a :class:`DatasetInfo` (sizes of the training
split) and returns an estimator, or ``(estimator, note)`` to record a note.
"""

from __future__ import annotations

import ast
import json
import math
import os
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = [
    "DATASETS",
    "MODELS",
    "VARIANTS",
    "model_registry_for",
    "PUBLISHED",
    "TUNING_DATASETS",
    "DatasetInfo",
    "SuiteDataset",
    "count_loss_spikes",
    "format_timeseries_report",
    "parse_model_spec",
    "run_timeseries_suite",
]

TASKS = ("classification", "regression")
METRICS = {"classification": "accuracy", "regression": "rmse"}
#: Datasets and number of seeds of ``--tuning``.
TUNING_DATASETS = ("BasicMotions", "ItalyPowerDemand", "ArrowHead")
TUNING_SEEDS = 2
#: The adding problem of the regression table: fixed size and data seed.
ADDING = {"length": 50, "n_train": 2000, "n_test": 1000, "random_state": 0}
LAES_COMPONENTS = 32


# -- datasets --
@dataclass(frozen=True)
class SuiteDataset:
    """A dataset of the suite: its task and a loader called only when needed.

    Parameters
    ----------
    task : {'classification', 'regression'}
    load : callable
        ``load() -> (X_train, X_test, y_train, y_test)``, X in any layout of
        :mod:`sklmn.utils.sequences`.
    description : str, default=''
        One line for ``--list``.
    """

    task: str
    load: Callable[[], tuple]
    description: str = ""


@dataclass(frozen=True)
class DatasetInfo:
    """Sizes of a training split, passed to the model factories.

    Parameters
    ----------
    name : str
    task : {'classification', 'regression'}
    n_train, n_test : int
        Number of training and test sequences.
    n_features : int
        Features (dimensions) per time step.
    max_length : int
        Longest training sequence.
    n_steps_total : int
        Number of valid time steps over all training sequences.
    n_classes : int or None
        Number of training classes (None for regression).
    """

    name: str
    task: str
    n_train: int
    n_test: int
    n_features: int
    max_length: int
    n_steps_total: int
    n_classes: int | None


def _archive_loader(name: str) -> Callable[[], tuple]:
    def load():
        from ..datasets import load_timeseries_dataset

        return load_timeseries_dataset(name, split="both")

    load.__qualname__ = f"load_{name}"
    return load


def _load_adding():
    from ..datasets import make_adding_problem

    n_train, n_test = ADDING["n_train"], ADDING["n_test"]
    X, y = make_adding_problem(
        n_train + n_test, length=ADDING["length"], random_state=ADDING["random_state"]
    )
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:]


#: name -> dataset, in report order.
DATASETS: dict[str, SuiteDataset] = {
    "ArrowHead": SuiteDataset(
        "classification", _archive_loader("ArrowHead"), "UCR, 1 dim, T=251, 36/175"
    ),
    "BasicMotions": SuiteDataset(
        "classification", _archive_loader("BasicMotions"), "UEA, 6 dims, T=100, 40/40"
    ),
    "ItalyPowerDemand": SuiteDataset(
        "classification",
        _archive_loader("ItalyPowerDemand"),
        "UCR, 1 dim, T=24, 67/1029",
    ),
    "OSULeaf": SuiteDataset(
        "classification", _archive_loader("OSULeaf"), "UCR, 1 dim, T=427, 200/242"
    ),
    "PLAID": SuiteDataset(
        "classification",
        _archive_loader("PLAID"),
        "UCR, 1 dim, T=100..1344 (ragged), 537/537",
    ),
    "ACSF1": SuiteDataset(
        "classification", _archive_loader("ACSF1"), "UCR, 1 dim, T=1460, 100/100"
    ),
    "CardanoSentiment": SuiteDataset(
        "regression", _archive_loader("CardanoSentiment"), "TSER, 2 dims, T=24, 74/33"
    ),
    "AddingProblem": SuiteDataset(
        "regression",
        _load_adding,
        f"make_adding_problem, T={ADDING['length']}, "
        f"{ADDING['n_train']}/{ADDING['n_test']}, data seed {ADDING['random_state']}",
    ),
}


# -- models --
class PadFlatten(TransformerMixin, BaseEstimator):
    """Zero-pad sequences to the longest training length and flatten them.

    Turns any layout of :mod:`sklmn.utils.sequences` into a 2-D array
    ``(n_samples, max_length * n_features)`` for tabular estimators; test
    sequences longer than the longest training one are truncated.

    Examples
    --------
    >>> import numpy as np
    >>> PadFlatten().fit([np.ones((2, 1)), np.ones((3, 1))]).transform(
    ...     [np.full((1, 1), 2.0)]).tolist()
    [[2.0, 0.0, 0.0]]
    """

    def fit(self, X, y=None):
        """Record the longest training length and the number of features."""
        from ..utils.sequences import check_sequences

        seqs = check_sequences(X)
        self.max_length_ = seqs.n_timesteps
        self.n_features_in_ = seqs.n_features
        return self

    def transform(self, X):
        """Return the zero-padded, flattened sequences."""
        from ..utils.sequences import check_sequences

        data = check_sequences(X).data[:, : self.max_length_]
        out = np.zeros((data.shape[0], self.max_length_, data.shape[2]))
        out[:, : data.shape[1]] = data
        return out.reshape(len(out), -1)


def _laes_logreg(seed: int, info: DatasetInfo):
    from ..laes import LAESTransformer

    bound = min(info.n_steps_total, info.max_length * info.n_features)
    n_components = min(LAES_COMPONENTS, bound)
    note = ""
    if n_components < LAES_COMPONENTS:
        note = (
            f"LAES n_components capped at {n_components} (at most "
            f"min(n_steps_total, max_length * n_features) = {bound})"
        )
    model = make_pipeline(
        LAESTransformer(n_components=n_components, random_state=seed),
        LogisticRegression(max_iter=1000, random_state=seed),
    )
    return model, note


def _est(cls_name: str, **params):
    """Factory of ``sklmn.estimators.<cls_name>(**params, random_state=seed)``."""

    def factory(seed: int, info: DatasetInfo):
        from .. import estimators

        return getattr(estimators, cls_name)(**params, random_state=seed)

    factory.__qualname__ = (
        f"{cls_name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    )
    return factory


def _ridge(seed: int, info: DatasetInfo):
    return make_pipeline(
        PadFlatten(), StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13))
    )


def _mean(seed: int, info: DatasetInfo):
    return DummyRegressor(strategy="mean")


#: name -> {task: factory(seed, info) -> estimator or (estimator, note)}.
MODELS: dict[str, dict[str, Callable]] = {
    "lmn": {
        "classification": _est("LMNClassifier"),
        "regression": _est("LMNRegressor"),
    },
    "mslmn": {
        "classification": _est("MultiScaleLMNClassifier"),
        "regression": _est("MultiScaleLMNRegressor"),
    },
    "lstm": {
        "classification": _est("RNNClassifier", cell="lstm"),
        "regression": _est("RNNRegressor", cell="lstm"),
    },
    "gru": {"classification": _est("RNNClassifier", cell="gru")},
    "enrnn": {"classification": _est("ENRNNClassifier")},
    "laes_logreg": {"classification": _laes_logreg},
    "mean": {"regression": _mean},
    "ridge": {"regression": _ridge},
}


def _lmn_variant(prefix: str = "", **params):
    """Factories of LMN classifier/regressor variants for the default study
    (``prefix='MultiScale'``: of the multi-scale LMN)."""

    def make(cls_name: str):
        def factory(seed: int, info: DatasetInfo):
            from .. import estimators, pretraining

            # ("ClassName", {params}) builds a sklmn.pretraining object
            kwargs = {
                k: getattr(pretraining, v[0])(**v[1], random_state=seed)
                if isinstance(v, tuple)
                else v
                for k, v in params.items()
            }
            return getattr(estimators, cls_name)(**kwargs, random_state=seed)

        return factory

    return {
        "classification": make(f"{prefix}LMNClassifier"),
        "regression": make(f"{prefix}LMNRegressor"),
    }


def with_init_radius(base: type, radius: float | None) -> type:
    """A subclass of an LMN estimator class whose module starts at another
    ``init_radius`` (a class attribute, not a public parameter): ``None``
    without the stable initialization, or another radius of the linearized
    memory map."""
    name = "RawInit" if radius is None else f"Radius{radius:g}"
    return type(f"{name}{base.__name__}", (base,), {"_init_radius": radius})


def _raw_init(task_cls: str, radius=None, **params):
    def factory(seed: int, info: DatasetInfo):
        from .. import estimators

        cls = with_init_radius(getattr(estimators, task_cls), radius)
        return cls(**params, random_state=seed)

    return factory


#: Variants used to choose the defaults (``docs/training.md``); selected by
#: name with ``--models``, never run by default. Simple parameter changes
#: need no entry: ``--models "lmn:standardize=False"``.
VARIANTS: dict[str, dict[str, Callable]] = {
    # pretraining choices of the LMN
    "lmn_nopretrain": _lmn_variant(pretrainer=None),
    "lmn_unrolled": _lmn_variant(pretrainer=("UnrolledPretrainer", {})),
    "lmn_laes_paper": _lmn_variant(pretrainer=("LAESInitializer", {})),
    # the default LAES initialization without centring (the paper's, no bias)
    "lmn_laes_nocenter": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "center": False})
    ),
    # the stable initialization, without pretraining
    "lmn_rawinit": {
        "classification": _raw_init("LMNClassifier", pretrainer=None),
        "regression": _raw_init("LMNRegressor", pretrainer=None),
    },
    # the stable initialization at a radius closer to one
    "lmn_radius0.99": {
        "classification": _raw_init("LMNClassifier", 0.99),
        "regression": _raw_init("LMNRegressor", 0.99),
    },
    "mslmn_laes": {
        "classification": _est("MultiScaleLMNClassifier", pretrainer="auto"),
        "regression": _est("MultiScaleLMNRegressor", pretrainer="auto"),
    },
    # the LAES initialization with a logistic-regression readout
    "lmn_laes_logistic": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto"})
    ),
    "lmn_laes_logistic_C0.1": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto", "C": 0.1})
    ),
    # the ridge readout's penalty chosen by generalized cross-validation
    "lmn_laes_gcv": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto"})
    ),
    "mslmn_laes_gcv": _lmn_variant(
        "MultiScale",
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto"}),
    ),
    "mslmn_laes_logistic": _lmn_variant(
        "MultiScale", pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto"})
    ),
    # the LMN's start at other penalties of its logistic readout
    "lmn_laes_C0.3": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto", "C": 0.3})
    ),
    "lmn_laes_C3": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto", "C": 3.0})
    ),
    # the residual multi-scale start (mslmn_laes_gcv: the independent one,
    # the default before) at other penalties of its logistic readout
    "mslmn_laes_residual_C1": _lmn_variant(
        "MultiScale",
        pretrainer=(
            "LAESInitializer",
            {"alpha": "gcv", "readout": "auto", "modules": "residual"},
        ),
    ),
    "mslmn_laes_residual_C10": _lmn_variant(
        "MultiScale",
        pretrainer=(
            "LAESInitializer",
            {"alpha": "gcv", "readout": "auto", "modules": "residual", "C": 10.0},
        ),
    ),
}


def model_registry_for(models) -> dict[str, dict[str, Callable]]:
    """:data:`MODELS`, plus :data:`VARIANTS` when models are named."""
    return dict(MODELS) if models is None else {**MODELS, **VARIANTS}


#: Registry models that are not sklmn models (left out of "best sklmn").
BASELINES = ("mean", "ridge")

#: Models whose loss spikes the report lists first (the others with a
#: ``loss_curve_`` follow).
SPIKE_MODELS = ("lmn", "mslmn")


# -- published accuracies --
#: dataset -> {column: test accuracy on the standard split}; see PUBLISHED_SOURCES.
PUBLISHED: dict[str, dict[str, float]] = {
    # 1 - error rates of the UCR archive's DataSummary.csv (2018 release):
    # "DTW (w=100)" (full window) and "DTW (learned_w)"; ROCKET: mean of 10 runs,
    # results/results_ucr.csv of the ROCKET authors' repository
    "ArrowHead": {"dtw_full": 0.7029, "dtw_learned": 0.8000, "rocket": 0.8143},
    "ItalyPowerDemand": {"dtw_full": 0.9504, "dtw_learned": 0.9553, "rocket": 0.9696},
    "OSULeaf": {"dtw_full": 0.5909, "dtw_learned": 0.6116, "rocket": 0.9409},
    "PLAID": {"dtw_full": 0.8361, "dtw_learned": 0.8343, "rocket": 0.9026},
    "ACSF1": {"dtw_full": 0.6400, "dtw_learned": 0.6200, "rocket": 0.8860},
    "BasicMotions": {},
}
PUBLISHED_COLUMNS = (
    ("dtw_full", "1NN-DTW†"),
    ("dtw_learned", "1NN-DTW (learned w)†"),
    ("rocket", "ROCKET‡"),
)
PUBLISHED_SOURCES = """\
† UCR time series archive, 2018 release (H. A. Dau et al., "The UCR time
series archive", IEEE/CAA Journal of Automatica Sinica, 2019): the archive's
summary table (DataSummary.csv) lists the test error rate of
1-nearest-neighbour with unconstrained DTW ("DTW (w=100)") and with the
warping window learned by leave-one-out cross-validation on the train split
("DTW (learned_w)"); the table shows 1 - error. Error rates as published
(full / learned window): ArrowHead 0.2971 / 0.2000, ItalyPowerDemand
0.0496 / 0.0447, OSULeaf 0.4091 / 0.3884, PLAID 0.1639 / 0.1657, ACSF1
0.3600 / 0.3800.

‡ A. Dempster, F. Petitjean, G. I. Webb, "ROCKET: exceptionally fast and
accurate time series classification using random convolutional kernels",
Data Mining and Knowledge Discovery, 2020: mean test accuracy of 10 runs on
the standard split, from the results file of the authors' code release
(results/results_ucr.csv): ACSF1 0.886, ArrowHead 0.81428571,
ItalyPowerDemand 0.96958212, OSULeaf 0.94090909, PLAID 0.90260708 (their
experiment script pads variable-length series, PLAID here, to the longest
one, as in the archive's 2018 release).

BasicMotions (multivariate): no published 1NN-DTW or ROCKET accuracy was
found in the sources that could be consulted (the UEA archive paper, A.
Bagnall et al. 2018, and the multivariate bake-off, A. P. Ruiz et al., Data
Mining and Knowledge Discovery 2021, report such results, but their tables
were not available); the cells are left empty rather than quoted from
memory."""


# -- helpers --
def count_loss_spikes(losses, factor=2.0):
    """Count the epochs whose loss exceeds ``factor`` times every earlier loss.

    An epoch ``t >= 1`` is a spike when ``loss[t] > factor * min(loss[:t])``:
    the training loss jumped well above the best value reached so far (a sign
    of an unstable run, e.g. an exploding linear memory).

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


def parse_model_spec(spec):
    """Split a ``--models`` entry ``name[:param=value,...]``.

    Values are Python literals (numbers, True/False/None, quoted strings,
    tuples); anything else is kept as a string. For a pipeline, name the step
    as scikit-learn does (``laes_logreg:logisticregression__C=0.1``).

    Parameters
    ----------
    spec : str

    Returns
    -------
    name : str
        Registry name.
    overrides : dict
        Parameters set with ``set_params`` after the factory.
    label : str
        Name of the variant in the results (``spec`` normalized).

    Examples
    --------
    >>> parse_model_spec("lmn")
    ('lmn', {}, 'lmn')
    >>> parse_model_spec("lmn:learning_rate_init=0.003,optimizer=adamw")
    ('lmn', {'learning_rate_init': 0.003, 'optimizer': 'adamw'}, \
'lmn[learning_rate_init=0.003,optimizer=adamw]')
    >>> parse_model_spec("lmn:0.003")
    Traceback (most recent call last):
    ...
    ValueError: model spec 'lmn:0.003': expected param=value after ':', got '0.003'.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model spec must be a non-empty string, got {spec!r}.")
    name, _, rest = spec.strip().partition(":")
    overrides = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(
                f"model spec {spec!r}: expected param=value after ':', got {item!r}."
            )
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            value = raw.strip()
        overrides[key.strip()] = value
    label = name
    if overrides:
        label += "[" + ",".join(f"{k}={v}" for k, v in overrides.items()) + "]"
    return name, overrides, label


def _dataset_info(name: str, task: str, data) -> DatasetInfo:
    from ..utils.sequences import check_sequences

    X_train, X_test, y_train, _ = data
    seqs = check_sequences(X_train)
    return DatasetInfo(
        name=name,
        task=task,
        n_train=seqs.n_samples,
        n_test=len(X_test),
        n_features=seqs.n_features,
        max_length=seqs.n_timesteps,
        n_steps_total=seqs.n_steps_total,
        n_classes=len(np.unique(y_train)) if task == "classification" else None,
    )


#: Per-process cache of loaded datasets, keyed by (run id, dataset name):
#: loky reuses its workers, so a worker fitting several models of a dataset
#: loads it once; a new run id evicts the previous run's data.
_DATA_CACHE: dict[tuple[str, str], tuple] = {}


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
                est.set_params(**overrides)
            record["note"] = note
            record["estimator"] = repr(est)
            t0 = time.perf_counter()
            try:
                est.fit(X_train, y_train)
            except FloatingPointError as exc:
                record["fit_seconds"] = time.perf_counter() - t0
                record["status"] = "diverged"
                record["error"] = f"FloatingPointError: {exc}"
                return record
            record["fit_seconds"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            pred = est.predict(X_test)
            record["predict_seconds"] = time.perf_counter() - t0
        if dataset.task == "classification":
            score = float(np.mean(np.asarray(pred) == np.asarray(y_test)))
        else:
            diff = np.asarray(pred, dtype=float) - np.asarray(y_test, dtype=float)
            score = float(np.sqrt(np.mean(diff**2)))
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
        messages = dict.fromkeys(
            f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught
        )
        record["warnings"] = list(messages)[:5]
    except Exception as exc:  # noqa: BLE001 - one failing fit must not end the run
        record["error"] = "".join(
            traceback.format_exception_only(type(exc), exc)
        ).strip()[:1000]
    finally:
        torch.set_num_threads(previous)
        record["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    return record


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

    from .. import __version__

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
        ``status`` (``'ok'``, ``'diverged'`` or ``'error'``), ``fit_seconds``,
        ``predict_seconds``, ``n_iter``, ``n_spikes``, ``final_loss``,
        ``note``, ``warnings``, ``estimator`` (its repr), ``error``,
        ``finished``, ``n_train``, ``n_test``.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
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
    log(
        f"timeseries suite: {len(selected)} dataset(s) x {len(specs)} model(s) x "
        f"{len(seed_list)} seed(s) = {len(wanted)} fits; {len(wanted) - len(tasks)} "
        f"already in {json_path}, running {len(tasks)} with {jobs} job(s)"
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


def _seed_list(seeds) -> list[int]:
    if isinstance(seeds, bool):
        raise TypeError(f"seeds must be an int or a list of ints, got {seeds!r}.")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {seeds}.")
        return list(range(seeds))
    out = list(dict.fromkeys(seeds))
    if not out or not all(isinstance(s, int) and not isinstance(s, bool) for s in out):
        raise ValueError(f"seeds must be a non-empty list of ints, got {seeds!r}.")
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


# -- report --
def _mean_std(values: list[float], digits: int = 3) -> str:
    if not values:
        return ""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1):.{digits}f}"


def format_timeseries_report(
    records,
    *,
    max_fit_seconds=300.0,
    dataset_order=None,
    model_order=None,
    n_seeds=None,
    descriptions=None,
):
    """Render the Markdown report of the time-series suite.

    Parameters
    ----------
    records : list of dict
        Records as returned by :func:`run_timeseries_suite`.
    max_fit_seconds : float, default=300
        Cap above which fits are flagged.
    dataset_order, model_order : list of str, default=None
        Row and column order (order of first appearance when None).
    n_seeds : int, default=None
        Seeds requested per cell; cells with fewer results say how many.
    descriptions : dict, default=None
        One line per dataset for the list of datasets.

    Returns
    -------
    text : str

    Examples
    --------
    >>> recs = [dict(dataset="ArrowHead", task="classification", model="lmn",
    ...              seed=s, metric="accuracy", score=v, status="ok",
    ...              fit_seconds=1.0, n_iter=10, n_spikes=0, note="")
    ...         for s, v in enumerate([0.7, 0.8])]
    >>> text = format_timeseries_report(recs)
    >>> print(text.splitlines()[8])
    | ArrowHead | 0.750 ± 0.071 | lmn | 0.703 | 0.800 | 0.814 |
    """
    records = list(records)
    datasets = list(dataset_order or dict.fromkeys(r["dataset"] for r in records))
    models = list(model_order or dict.fromkeys(r["model"] for r in records))
    by_cell: dict[tuple, list[dict]] = {}
    for r in records:
        by_cell.setdefault((r["dataset"], r["model"]), []).append(r)
    task_of = {r["dataset"]: r["task"] for r in records}

    def ok_scores(ds, m):
        return [r["score"] for r in by_cell.get((ds, m), []) if r.get("status") == "ok"]

    lines = ["# sklmn time-series suite", ""]
    lines += [
        "Test accuracy (classification) or test RMSE (regression) on the standard "
        "train/test splits, mean ± sample standard deviation over seeds; every "
        "model with its library defaults except `random_state=seed`, on the raw "
        "data (no rescaling by the suite). A cell with fewer results than "
        "requested says `(n=k)`; fits that diverged or failed are listed below "
        "and left out of the means.",
    ]
    for task in TASKS:
        rows = [d for d in datasets if task_of.get(d) == task]
        cols = [m for m in models if any((d, m) in by_cell for d in rows)]
        if not rows or not cols:
            continue
        lines += _score_table(task, rows, cols, ok_scores, by_cell, n_seeds)
    lines += _time_table(datasets, models, by_cell, max_fit_seconds)
    lines += _spike_table(datasets, models, by_cell)
    lines += _problem_list(records, max_fit_seconds)
    if descriptions and any(descriptions.values()):
        lines += ["", "## Datasets", ""]
        lines += [
            f"- **{d}**: {descriptions[d]}" for d in datasets if d in descriptions
        ]
    if any(task_of.get(d) == "classification" for d in datasets):
        lines += ["", "## Sources of the published accuracies", ""]
        lines += PUBLISHED_SOURCES.splitlines()
    return "\n".join(lines) + "\n"


def _base(label: str) -> str:
    """Registry name of a model label (``'lmn[max_iter=5]'`` -> ``'lmn'``)."""
    return label.split("[", 1)[0]


def _score_table(task, rows, cols, ok_scores, by_cell, n_seeds):
    higher = task == "classification"
    pick = max if higher else min
    metric = "accuracy ↑" if higher else "RMSE ↓"
    pub = PUBLISHED_COLUMNS if higher else ()
    lines = ["", f"## {task.capitalize()} (test {metric})", ""]
    header = ["dataset", *cols, "best sklmn", *(title for _, title in pub)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    means: dict[str, dict[str, float]] = {}  # dataset -> model -> mean score
    for ds in rows:
        cells, means[ds] = [], {}
        for m in cols:
            vals = ok_scores(ds, m)
            cell = _mean_std(vals)
            expected = n_seeds if n_seeds is not None else len(by_cell.get((ds, m), []))
            if vals and len(vals) < expected:
                cell += f" (n={len(vals)})"
            cells.append(cell)
            if vals:
                means[ds][m] = float(np.mean(vals))
        ours = {m: v for m, v in means[ds].items() if _base(m) not in BASELINES}
        best = pick(ours, key=ours.get) if ours else ""
        pub_cells = [
            "" if (v := PUBLISHED.get(ds, {}).get(k)) is None else f"{v:.3f}"
            for k, _ in pub
        ]
        lines.append("| " + " | ".join([ds, *cells, best, *pub_cells]) + " |")

    def mean_row(title, subset):
        cells, complete = [], {}
        for m in cols:
            vals = [means[d][m] for d in subset if m in means[d]]
            if not vals:
                cells.append("")
                continue
            cells.append(f"{np.mean(vals):.3f}")
            if len(vals) == len(subset):
                complete[m] = float(np.mean(vals))
            else:
                cells[-1] += f" ({len(vals)}/{len(subset)} datasets)"
        complete = {m: v for m, v in complete.items() if _base(m) not in BASELINES}
        best = pick(complete, key=complete.get) if complete else ""
        pub_cells = []
        for k, _ in pub:
            vals = [PUBLISHED[d][k] for d in subset if k in PUBLISHED.get(d, {})]
            cell = f"{np.mean(vals):.3f}" if vals else ""
            if vals and len(vals) < len(subset):
                cell += f" ({len(vals)}/{len(subset)} datasets)"
            pub_cells.append(cell)
        return "| " + " | ".join([title, *cells, best, *pub_cells]) + " |"

    if len(rows) > 1:
        lines.append(mean_row("mean over datasets", rows))
        with_pub = [d for d in rows if all(k in PUBLISHED.get(d, {}) for k, _ in pub)]
        if pub and 1 < len(with_pub) < len(rows):
            lines.append(
                mean_row(
                    f"mean over the {len(with_pub)} with published values", with_pub
                )
            )
        if not higher:
            lines += [
                "",
                "RMSE is in the units of each dataset's target: the mean over "
                "datasets mixes scales and is only a rough summary.",
            ]
    return lines


def _time_table(datasets, models, by_cell, cap):
    cols = [m for m in models if any((d, m) in by_cell for d in datasets)]
    if not cols:
        return []
    lines = [
        "",
        "## Fit time (mean wall seconds per fit) and iterations",
        "",
        f"`s / it`: mean seconds / mean iterations (epochs, or the solver's "
        f"iterations); ⚠k: k fits over the {cap:g} s cap (not stopped).",
        "",
        "| dataset | " + " | ".join(cols) + " |",
        "|" + "---|" * (len(cols) + 1),
    ]
    for ds in datasets:
        cells = []
        for m in cols:
            recs = [
                r for r in by_cell.get((ds, m), []) if r.get("fit_seconds") is not None
            ]
            if not recs:
                cells.append("")
                continue
            secs = [r["fit_seconds"] for r in recs]
            its = [r["n_iter"] for r in recs if r.get("n_iter") is not None]
            cell = f"{np.mean(secs):.1f}"
            if its:
                cell += f" / {np.mean(its):.0f}"
            over = sum(s > cap for s in secs)
            if over:
                cell += f" ⚠{over}"
            cells.append(cell)
        if any(cells):
            lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return lines


def _spike_table(datasets, models, by_cell):
    with_curve = [
        m
        for m in models
        if any(
            r.get("n_spikes") is not None
            for d in datasets
            for r in by_cell.get((d, m), [])
        )
    ]
    cols = sorted(
        with_curve, key=lambda m: (_base(m) not in SPIKE_MODELS, with_curve.index(m))
    )
    if not cols:
        return []
    lines = [
        "",
        "## Loss spikes",
        "",
        "An epoch is a spike when its training loss exceeds twice the minimum "
        "of all earlier epochs. Cells: total spikes over the seeds (fits with "
        "at least one spike / fits).",
        "",
        "| dataset | " + " | ".join(cols) + " |",
        "|" + "---|" * (len(cols) + 1),
    ]
    for ds in datasets:
        cells = []
        for m in cols:
            spikes = [
                r["n_spikes"]
                for r in by_cell.get((ds, m), [])
                if r.get("n_spikes") is not None
            ]
            if not spikes:
                cells.append("")
                continue
            hit = sum(s > 0 for s in spikes)
            cells.append(f"{sum(spikes)} ({hit}/{len(spikes)})")
        if any(cells):
            lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return lines


def _problem_list(records, cap):
    lines = []
    bad = [r for r in records if r.get("status") != "ok"]
    slow = [r for r in records if (r.get("fit_seconds") or 0) > cap]
    notes = sorted(
        {(r["dataset"], r["model"], r["note"]) for r in records if r.get("note")}
    )
    if bad:
        lines += ["", "## Diverged or failed fits", ""]
        lines += [
            f"- {r['dataset']} / {r['model']} / seed {r['seed']}: {r['status']}: "
            f"{r.get('error') or ''}"
            for r in bad
        ]
    recovered: dict[tuple, list] = {}
    for r in records:
        recovered.setdefault((r["dataset"], r["model"]), []).append(
            bool(r.get("recovered"))
        )
    recovered = {k: v for k, v in recovered.items() if any(v)}
    if recovered:
        lines += ["", "## Fits stopped at a divergence (best weights kept)", ""]
        lines += [
            f"- {d} / {m}: {sum(v)} of {len(v)} fits"
            for (d, m), v in sorted(recovered.items())
        ]
    if slow:
        lines += ["", f"## Fits over the {cap:g} s cap", ""]
        lines += [
            f"- {r['dataset']} / {r['model']} / seed {r['seed']}: "
            f"{r['fit_seconds']:.0f} s"
            for r in slow
        ]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {d} / {m}: {note}" for d, m, note in notes]
    return lines
