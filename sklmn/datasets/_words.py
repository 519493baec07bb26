"""Spoken common-suffix words (Carta et al. 2021 §5.5, App. B), synthesized offline."""

from __future__ import annotations

import numbers
from functools import lru_cache

import numpy as np

from ._base import _bundled_path, _check_bool, _split_result
from ._mfcc import mfcc

__all__ = ["load_common_suffix_words", "SUFFIX_CLASSES"]

_FILE = "common_suffix_words.npz"

#: The 25 words of Carta et al. 2021 App. B in its 5 suffix classes (class 1 .. 5).
SUFFIX_CLASSES = {
    "-ing": ("making", "walking", "cooking", "looking", "working"),
    "-ical": ("biblical", "cyclical", "technical", "classical", "critical"),
    "-ition": ("tradition", "addition", "audition", "recognition", "competition"),
    "-ians/-ions": (
        "musicians",
        "discussions",
        "regulations",
        "accusations",
        "conditions",
    ),
    "-way": ("subway", "leeway", "freeway", "highway", "hallway"),
}
_WORDS = tuple(word for words in SUFFIX_CLASSES.values() for word in words)
_N_SPEAKERS = 7

_DESCR = """\
Common-suffix spoken words
--------------------------
Stand-in for the Common Suffix TIMIT task of Carta et al. 2021 §5.5 (after the
Clockwork RNN paper): the 25 words of App. B, in 5 classes that share a long
suffix (-ing, -ical, -ition, -ians/-ions, -way), each spoken by 7 speakers (175
utterances, as in the paper). The target is the word (25 classes; word ``k``
has suffix class ``k // 5``), so a model must remember the beginning of the
word past the common ending. TIMIT is licensed, so sklmn ships speech
synthesized with espeak-ng instead: speaker ``s`` is an espeak-ng voice and
variant with its own rate and pitch (``speaker_names``; e.g. ``en-us+m1 -s 150
-p 45``), resampled to 16 kHz and trimmed to the word (build script:
``python -m sklmn.datasets._build_words``, eSpeak NG 1.51). The waveforms
(int16) are shipped in ``data/common_suffix_words.npz``; features are computed
at load time, so neither espeak-ng nor a network is needed.

Features (Carta et al. 2021 §5.5): 13 MFCCs from 25 ms Hamming windows every
``hop_ms`` (paper: 1 ms), pre-emphasis 0.97, 26 mel filters, orthonormal
DCT-II, coefficient 0 replaced by the log frame energy; each feature
standardized to mean 0 and variance 1 with the statistics of all frames of the
training utterances (``standardize=True``).

Split (speaker-independent): speakers 5 and 6 are the test set (2 per word,
50 utterances), speakers 0-4 the training set (5 per word, 125 utterances),
matching the paper's 5 train / 2 test utterances per word. The paper uses the
clean training set as its validation set and adds Gaussian noise (std 0.6) to
the training inputs during training.
"""


@lru_cache(maxsize=1)
def _read_archive():
    with np.load(_bundled_path(_FILE)) as archive:
        audio = np.split(archive["audio"], np.cumsum(archive["lengths"])[:-1])
        words = archive["words"].astype(str)
        speaker = archive["speakers"].astype(np.int64)
        speaker_names = archive["speaker_names"].astype(str)
        sample_rate = int(archive["sample_rate"])
    for wave in audio:
        wave.flags.writeable = False
    return tuple(audio), words, speaker, speaker_names, sample_rate


@lru_cache(maxsize=4)
def _features(hop_ms: float, window_ms: float, n_mfcc: int):
    """Unstandardized features of every utterance (cached; never handed out)."""
    audio, _, _, _, sample_rate = _read_archive()
    options = dict(n_mfcc=n_mfcc, window_ms=window_ms, hop_ms=hop_ms, energy=True)
    return tuple(mfcc(wave, sample_rate, **options) for wave in audio)


def load_common_suffix_words(
    *,
    split=None,
    target: str = "word",
    test_speakers=(5, 6),
    hop_ms: float = 1.0,
    window_ms: float = 25.0,
    n_mfcc: int = 13,
    standardize: bool = True,
    return_X_y: bool = False,
):
    """Load the spoken common-suffix words as MFCC sequences.

    Carta et al. 2021 §5.5: classify a spoken word among 25 whose endings are shared
    by groups of 5, so the class is decided by the beginning of the
    sequence. The speech is synthesized (espeak-ng) and shipped with sklmn;
    see ``DESCR`` for the provenance, the features and the split.

    Parameters
    ----------
    split : {'train', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns all 175 utterances. The Bunch always holds both parts.
    target : {'word', 'suffix'}, default='word'
        Classify the word (25 classes, the paper's task) or only its suffix
        class (5 classes, an easier control task).
    test_speakers : tuple of int, default=(5, 6)
        Speakers (0 .. 6) held out as the test set.
    hop_ms : float, default=1.0
        MFCC frame step in milliseconds (the paper's 1 ms gives about 400 to
        900 steps per word; 10 ms gives about 40 to 90).
    window_ms : float, default=25.0
        MFCC frame length in milliseconds.
    n_mfcc : int, default=13
        Number of cepstral coefficients (coefficient 0 is the log energy).
    standardize : bool, default=True
        Standardize every feature with the mean and standard deviation of all
        training frames.
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data``: list of float64 arrays of shape ``(T_i, n_mfcc)``;
        ``target``: int64 array of word (or suffix) indices; ``X_train``,
        ``y_train``, ``X_test``, ``y_test``: the same per part;
        ``target_names`` (the 25 words, or the 5 suffixes), ``words`` (the
        word of each utterance), ``suffix`` (its suffix class 0 .. 4),
        ``speaker`` (0 .. 6), ``speaker_names``, ``is_test`` (bool mask),
        ``audio`` (list of int16 waveforms), ``sample_rate`` (16000),
        ``feature_mean`` and ``feature_scale`` (the standardization, zeros and
        ones when ``standardize=False``), ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Examples
    --------
    >>> from sklmn.datasets import load_common_suffix_words
    >>> data = load_common_suffix_words(hop_ms=10.0)
    >>> len(data.X_train), len(data.X_test), data.X_train[0].shape[1]
    (125, 50, 13)
    >>> data.target_names[:3].tolist()
    ['making', 'walking', 'cooking']
    >>> X, y = load_common_suffix_words(split="test", target="suffix",
    ...                                 hop_ms=10.0, return_X_y=True)
    >>> sorted(set(y.tolist()))
    [0, 1, 2, 3, 4]
    """
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be 'train', 'test' or None, got {split!r}.")
    if target not in ("word", "suffix"):
        raise ValueError(f"target must be 'word' or 'suffix', got {target!r}.")
    try:
        held_out = sorted({int(s) for s in test_speakers})
        valid = all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool)
            for s in test_speakers
        )
    except TypeError:
        valid = False
    if not valid or not held_out or not set(held_out) <= set(range(_N_SPEAKERS)):
        raise ValueError(
            f"test_speakers must be a non-empty collection of ints in 0..6, got "
            f"{test_speakers!r}."
        )
    if len(held_out) == _N_SPEAKERS:
        raise ValueError(
            f"test_speakers must leave at least one training speaker, got "
            f"{test_speakers!r}."
        )
    standardize = _check_bool("standardize", standardize)
    return_X_y = _check_bool("return_X_y", return_X_y)

    audio, words, speaker, speaker_names, sample_rate = _read_archive()
    audio = [wave.copy() for wave in audio]
    words, speaker, speaker_names = words.copy(), speaker.copy(), speaker_names.copy()
    # validates hop_ms, window_ms and n_mfcc (with messages naming the values)
    mfcc(np.zeros(1), sample_rate, n_mfcc=n_mfcc, window_ms=window_ms, hop_ms=hop_ms)
    features = [f.copy() for f in _features(float(hop_ms), float(window_ms), n_mfcc)]
    is_test = np.isin(speaker, held_out)
    if standardize:
        frames = np.concatenate([features[i] for i in np.flatnonzero(~is_test)])
        mean = frames.mean(axis=0)
        scale = frames.std(axis=0)
        scale[scale == 0.0] = 1.0
        features = [(f - mean) / scale for f in features]
    else:
        mean, scale = np.zeros(n_mfcc), np.ones(n_mfcc)

    word_index = np.array([_WORDS.index(w) for w in words], dtype=np.int64)
    suffix = word_index // 5
    if target == "word":
        y, target_names = word_index, np.array(_WORDS)
    else:
        y, target_names = suffix, np.array(list(SUFFIX_CLASSES))
    train_idx, test_idx = np.flatnonzero(~is_test), np.flatnonzero(is_test)
    parts = {
        "X_train": [features[i] for i in train_idx],
        "y_train": y[train_idx],
        "X_test": [features[i] for i in test_idx],
        "y_test": y[test_idx],
    }
    return _split_result(
        features,
        y,
        parts,
        split,
        return_X_y,
        target_names=target_names,
        words=words,
        suffix=suffix,
        speaker=speaker,
        speaker_names=speaker_names,
        is_test=is_test,
        audio=audio,
        sample_rate=sample_rate,
        feature_mean=mean,
        feature_scale=scale,
        DESCR=_DESCR,
    )
