"""Offline datasets and generators of the papers' tasks."""

from ._base import get_data_home
from ._chorales import load_bach_chorales
from ._digits import load_sequential_digits
from ._generation import load_generation_signal
from ._handwriting import load_online_handwriting, make_online_handwriting
from ._iam_ondb import load_iam_ondb
from ._mnist import load_mnist_sequences
from ._polyphonic import load_polyphonic_music
from ._ptb import load_ptb_characters
from ._synthetic import make_adding_problem, make_copy_task
from ._timit import load_timit
from ._ts import load_ts_file
from ._ucr import load_timeseries_dataset
from ._words import load_common_suffix_words

__all__ = ["make_copy_task", "make_adding_problem", "load_sequential_digits"]
__all__ += [
    "get_data_home",
    "load_generation_signal",
    "load_bach_chorales",
    "load_common_suffix_words",
    "make_online_handwriting",
    "load_online_handwriting",
    "load_ts_file",
    "load_timeseries_dataset",
    "load_polyphonic_music",
    "load_mnist_sequences",
    "load_ptb_characters",
    "load_timit",
    "load_iam_ondb",
]
