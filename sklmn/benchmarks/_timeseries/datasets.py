"""The time-series suite's datasets: the registry, their sizes and published accuracies.

Part of ``python -m sklmn.benchmarks --suite timeseries`` (see
:mod:`sklmn.benchmarks._timeseries`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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
        from ...datasets import load_timeseries_dataset

        return load_timeseries_dataset(name, split="both")

    load.__qualname__ = f"load_{name}"
    return load


def _load_adding():
    from ...datasets import make_adding_problem

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


def _dataset_info(name: str, task: str, data) -> DatasetInfo:
    from ...utils.sequences import check_sequences

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
