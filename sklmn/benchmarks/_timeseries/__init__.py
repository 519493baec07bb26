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

The suite is split by role: :mod:`.datasets` (the dataset registry and the
published accuracies), :mod:`.models` (the model registry and its variants),
:mod:`.runner` (the fits and their JSON records) and :mod:`.report` (the
Markdown report).
"""

from .datasets import (
    DATASETS,
    PUBLISHED,
    TUNING_DATASETS,
    TUNING_SEEDS,
    DatasetInfo,
    SuiteDataset,
)
from .models import MODELS, VARIANTS, model_registry_for, parse_model_spec
from .report import format_timeseries_report
from .runner import count_loss_spikes, run_timeseries_suite

__all__ = [
    "DATASETS",
    "MODELS",
    "VARIANTS",
    "model_registry_for",
    "PUBLISHED",
    "TUNING_DATASETS",
    "TUNING_SEEDS",
    "DatasetInfo",
    "SuiteDataset",
    "count_loss_spikes",
    "format_timeseries_report",
    "parse_model_spec",
    "run_timeseries_suite",
]
