"""TIMIT read from its standard folder tree: framewise phones, magnitude
spectra and the common-suffix words."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.fft import rfft
from scipy.signal import get_window, resample_poly

from ._base import _check_bool, _split_result, check_int
from ._files import check_path, find_child, require_dir
from ._mfcc import mfcc
from ._sphere import read_audio
from ._words import _WORDS, SUFFIX_CLASSES

__all__ = ["load_timit", "TIMIT_PHONES", "fold_phones"]

_TASKS = ("framewise", "spectra", "words")
_SPLITS = ("train", "valid", "test")
SAMPLE_RATE = 16000

_LAYOUT = (
    "the TIMIT tree of the LDC distribution: ROOT/TRAIN/DR1..DR8/<speaker>/"
    "<utterance>.WAV (NIST SPHERE or RIFF, 16-bit PCM, 16 kHz) with .PHN and "
    ".WRD next to it, and ROOT/TEST/... alike (upper or lower case; ROOT may "
    "also hold them in a TIMIT/ or data/ subfolder)."
)

#: The 61 phone labels of the TIMIT transcriptions (.PHN), sorted.
TIMIT_PHONES = tuple(
    """aa ae ah ao aw ax ax-h axr ay b bcl ch d dcl dh dx eh el em en eng epi
    er ey f g gcl h# hh hv ih ix iy jh k kcl l m n ng nx ow oy p pau pcl q r s
    sh t tcl th uh uw ux v w y z zh""".split()
)
#: Lee & Hon (1989): the 61 labels folded into 39 classes ('q' is dropped).
_FOLD = {
    "ao": "aa", "ax": "ah", "ax-h": "ah", "axr": "er", "hv": "hh", "ix": "ih",
    "el": "l", "em": "m", "en": "n", "nx": "n", "eng": "ng", "zh": "sh",
    "ux": "uw", "pcl": "sil", "tcl": "sil", "kcl": "sil", "bcl": "sil",
    "dcl": "sil", "gcl": "sil", "h#": "sil", "pau": "sil", "epi": "sil",
}  # fmt: skip
_PHONES_39 = tuple(sorted({_FOLD.get(p, p) for p in TIMIT_PHONES if p != "q"}))

#: The 24 speakers of the core test set and the 50 of the development set
#: (Halberstadt 1998), upper case.
_CORE_TEST = frozenset(
    """MDAB0 MWBT0 FELC0 MTAS1 MWEW0 FPAS0 MJMP0 MLNT0 FPKT0 MLLL0 MTLS0 FJLM0
    MBPM0 MKLT0 FNLP0 MCMJ0 MJDH0 FMGD0 MGRT0 MNJM0 FDHC0 MJLN0 MPAM0
    FMLD0""".split()
)
_DEV = frozenset(
    """FAKS0 FDAC1 FJEM0 MGWT0 MJAR0 MMDB1 MMDM2 MPDF0 FCMH0 FKMS0 MBDG0 MBWM0
    MCSH0 FADG0 FDMS0 FEDW0 MGJF0 MGLB0 MRTK0 MTAA0 MTDT0 MTHC0 MWJG0 FNMR0
    FREW0 FSEM0 MBNS0 MMJR0 MDLS0 MDLF0 MDVC0 MERS0 FMAH0 FDRW0 MRCS0 MRJM4
    FCAL1 MMWH0 FJSJ0 MAJC0 MJSW0 MREB0 FGJD0 FJMG0 MROA0 MTEB0 MJFC0 MRJR0
    FMML0 MRWS1""".split()
)
#: Carta et al. 2021 App. B: the TIMIT sentence of each common-suffix word.
_WORD_SENTENCE = {
    "making": "SX430", "walking": "SX320", "cooking": "SX177",
    "looking": "SX229", "working": "SX4", "biblical": "SX42",
    "cyclical": "SX146", "technical": "SX135", "classical": "SX52",
    "critical": "SX52", "tradition": "SX137", "addition": "SX45",
    "audition": "SX194", "recognition": "SX251", "competition": "SX141",
    "musicians": "SX15", "discussions": "SX40", "regulations": "SX41",
    "accusations": "SX191", "conditions": "SX349", "subway": "SX246",
    "leeway": "SX230", "freeway": "SX233", "highway": "SX233",
    "hallway": "SX106",
}  # fmt: skip
_N_PER_WORD = 7

_DESCR = """\
TIMIT
-----
The DARPA TIMIT Acoustic-Phonetic Continuous Speech Corpus (Garofolo et al.
1993; LDC93S1): 6300 sentences of 630 speakers of 8 dialect regions, 16 kHz
audio with time-aligned phone (.PHN) and word (.WRD) transcriptions. TIMIT
is licensed by the Linguistic Data Consortium: sklmn never downloads it and
ships none of it; pass the root of the tree you have. Audio files are read
as NIST SPHERE (uncompressed PCM) or RIFF WAVE.

Splits (task 'framewise' and 'spectra'): the SA sentences (read by every
speaker) are left out; train is the TRAIN part (3696 utterances), valid the
50 speakers of the development set and test the 24 speakers of the core
test set (400 and 192 utterances; Halberstadt 1998), the 3696 / 400 / 192
of Wisdom et al. (2016) used by Helfrich & Ye 2020. Other TEST speakers are
in no part.

task='framewise' (Carta et al. 2020b §5.3, after Graves & Schmidhuber 2005):
one feature vector per 10 ms frame: 13 MFCCs of a 25 ms Hamming window
(coefficient 0 replaced by the log frame energy) and, with ``deltas=True``,
their first derivatives (regression over +-2 frames), 26 features,
standardized with the training frames' mean and standard deviation. The
target of a frame is the phone of the .PHN segment holding the frame's
centre: the 61 TIMIT labels (``phone_set=61``) or the 39 classes of Lee &
Hon (1989) (``phone_set=39``; a 'q' frame takes the label of the frame
before it, 'sil' at the start). The papers do not state the features or the
phone set beyond "the setup of Jose et al. (2018)".

task='spectra' (Helfrich & Ye 2020 §5.3, after Wisdom et al. 2016): the
audio (scaled to [-1, 1]) is downsampled to 8 kHz (polyphase filter) and cut
into frames of 256 samples (32 ms) every 128 samples with a periodic Hann
window (the end zero-padded to a whole frame); the features are the
log-magnitudes ``log(|STFT| + 1e-6)`` of the 129 frequency bins. X = frames
``0 .. T-2``, y = frames ``1 .. T-1`` (predict the next frame, MSE); the
8 kHz waveforms are in ``audio`` for time-domain scores.

task='words' (Carta et al. 2021 §5.5 and App. B): the 25 common-suffix words
cut out of the sentences with the .WRD times, 7 utterances per word: those
of the sentence listed in App. B first, then other occurrences, each in
(part, dialect, speaker) order. The 5th and 6th (0-based) are the test part,
the first 5 the training part (5 train / 2 test per word, as the paper; its
exact utterances are not published). Features as
:func:`load_common_suffix_words` (13 MFCCs, 25 ms window every ``hop_ms``,
default 1 ms, energy as coefficient 0, standardized with the training
frames).
"""


def _timit_root(root):
    root = require_dir(root, "TIMIT", _LAYOUT)
    nested = [p for p in sorted(root.iterdir()) if p.name.lower() in ("timit", "data")]
    for candidate in (root, *nested):
        if not candidate.is_dir():
            continue
        names = {p.name.lower() for p in candidate.iterdir() if p.is_dir()}
        if {"train", "test"} <= names:
            return candidate
    raise FileNotFoundError(
        f"TIMIT: no TRAIN and TEST folders in {str(root)!r}. Expected layout: {_LAYOUT}"
    )


def _utterances(root, include_sa: bool):
    """``(part, dialect, speaker, sentence, audio path)`` of every utterance
    (part 'TRAIN' or 'TEST', names upper case), sorted."""
    out = []
    for part in ("TRAIN", "TEST"):
        part_dir = find_child(root, [part], "TIMIT", _LAYOUT)
        for dialect in sorted(part_dir.iterdir()):
            if not (dialect.is_dir() and dialect.name.upper().startswith("DR")):
                continue
            for speaker in sorted(dialect.iterdir()):
                if not speaker.is_dir():
                    continue
                audio = {}
                for file in sorted(speaker.iterdir()):
                    stem, _, suffix = file.name.partition(".")
                    if suffix.lower() not in ("wav", "wav.wav"):
                        continue
                    # prefer STEM.WAV over a converted STEM.WAV.wav copy
                    audio.setdefault(stem.upper(), file)
                for sentence, path in sorted(audio.items()):
                    if sentence.startswith("SA") and not include_sa:
                        continue
                    out.append(
                        (
                            part,
                            dialect.name.upper(),
                            speaker.name.upper(),
                            sentence,
                            path,
                        )
                    )
    if not out:
        raise FileNotFoundError(
            f"TIMIT: no .WAV files under {str(root)!r}. Expected layout: {_LAYOUT}"
        )
    return out


def _companion(audio_path, suffix: str):
    stem = audio_path.name.partition(".")[0]
    for candidate in (stem + suffix.upper(), stem + suffix.lower()):
        path = audio_path.with_name(candidate)
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"TIMIT: no {stem}{suffix.upper()} next to {str(audio_path)!r}. Expected "
        f"layout: {_LAYOUT}"
    )


def _read_segments(path, allow_empty: bool = False):
    """``(start, end, label)`` lines of a .PHN or .WRD file."""
    segments = []
    for number, line in enumerate(path.read_text(encoding="latin1").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            start, end, label = int(parts[0]), int(parts[1]), parts[2]
        except (IndexError, ValueError):
            raise ValueError(
                f"{str(path)!r}, line {number}: expected 'START END LABEL' "
                f"(sample numbers and a label), got {line!r}."
            ) from None
        if not 0 <= start < end:
            raise ValueError(
                f"{str(path)!r}, line {number}: the segment {start}..{end} is empty "
                "or negative."
            )
        segments.append((start, end, label.lower()))
    if not segments and not allow_empty:
        raise ValueError(f"{str(path)!r} holds no segment.")
    return segments


def _read_wave(path):
    samples, rate = read_audio(path)
    if rate != SAMPLE_RATE:
        raise ValueError(
            f"{str(path)!r} is sampled at {rate} Hz, TIMIT at {SAMPLE_RATE} Hz."
        )
    return samples


def fold_phones(labels, phone_set: int = 39):
    """Fold TIMIT phone labels into the 39 classes of Lee & Hon (1989).

    ``'q'`` (the glottal stop, dropped by Lee & Hon) takes the class of the
    label before it (``'sil'`` at the start). ``phone_set=61`` returns the
    labels unchanged.

    Examples
    --------
    >>> from sklmn.datasets._timit import fold_phones
    >>> fold_phones(["h#", "ix", "q", "zh", "pau"])
    ['sil', 'ih', 'ih', 'sh', 'sil']
    """
    if phone_set == 61:
        return list(labels)
    folded, last = [], "sil"
    for label in labels:
        last = last if label == "q" else _FOLD.get(label, label)
        folded.append(last)
    return folded


def _deltas(features: np.ndarray, width: int = 2) -> np.ndarray:
    """Regression deltas over +-``width`` frames (edges repeated)."""
    padded = np.pad(features, ((width, width), (0, 0)), mode="edge")
    n = len(features)
    num = sum(
        k * (padded[width + k : width + k + n] - padded[width - k : width - k + n])
        for k in range(1, width + 1)
    )
    return num / (2 * sum(k * k for k in range(1, width + 1)))


def _framewise(samples, segments, phone_set, deltas, n_mfcc):
    win, hop = 400, 160  # 25 ms every 10 ms at 16 kHz
    features = mfcc(
        samples, SAMPLE_RATE, n_mfcc=n_mfcc, window_ms=25.0, hop_ms=10.0, energy=True
    )
    if deltas:
        features = np.hstack([features, _deltas(features)])
    centres = np.arange(len(features)) * hop + win // 2
    starts = np.array([s for s, _, _ in segments])
    index = np.clip(np.searchsorted(starts, centres, side="right") - 1, 0, None)
    labels = fold_phones([segments[i][2] for i in index], phone_set)
    return features, labels


_STFT_SIZE, _STFT_HOP, _LOG_FLOOR = 256, 128, 1e-6


def _spectra(samples):
    wave = resample_poly(samples.astype(np.float64) / 32768.0, 1, 2)
    n_frames = max(1, -(-(len(wave) - _STFT_SIZE) // _STFT_HOP) + 1)
    padded = np.pad(wave, (0, (n_frames - 1) * _STFT_HOP + _STFT_SIZE - len(wave)))
    frames = np.lib.stride_tricks.sliding_window_view(padded, _STFT_SIZE)[::_STFT_HOP]
    window = get_window("hann", _STFT_SIZE)
    magnitude = np.abs(rfft(frames[:n_frames] * window, axis=1))
    return np.log(magnitude + _LOG_FLOOR), wave


def _split_of(part: str, speaker: str):
    if part == "TRAIN":
        return "train"
    if speaker in _CORE_TEST:
        return "test"
    if speaker in _DEV:
        return "valid"
    return None


def _standardize(features, is_train):
    train = [f for f, keep in zip(features, is_train, strict=True) if keep]
    if not train:
        raise ValueError(
            "TIMIT: no training utterance found, so the features cannot be "
            f"standardized (use standardize=False). Expected layout: {_LAYOUT}"
        )
    frames = np.concatenate(train)
    mean, scale = frames.mean(axis=0), frames.std(axis=0)
    scale[scale == 0.0] = 1.0
    return [((f - mean) / scale) for f in features], mean, scale


def _word_occurrences(utterances):
    """For each of the 25 words, its first 7 occurrences (see DESCR)."""
    found = {word: [] for word in _WORDS}
    for part, dialect, speaker, sentence, path in utterances:
        segments = _read_segments(_companion(path, ".wrd"), allow_empty=True)
        for start, end, word in segments:
            if word in found:
                rank = 0 if sentence == _WORD_SENTENCE[word] else 1
                found[word].append(
                    (rank, part, dialect, speaker, sentence, path, start, end)
                )
    return {
        word: sorted(items, key=lambda t: t[:5])[:_N_PER_WORD]
        for word, items in found.items()
    }


def load_timit(
    root,
    *,
    task="framewise",
    split=None,
    phone_set=61,
    deltas=True,
    hop_ms=1.0,
    n_mfcc=13,
    standardize=True,
    target="word",
    return_X_y=False,
):
    """Load TIMIT from its folder tree for one of the papers' three tasks.

    Reads the LDC TIMIT tree that you already have (nothing is downloaded;
    NIST SPHERE or RIFF audio, .PHN and .WRD transcriptions) and builds the
    framewise phone classification of Carta et al. 2020b §5.3, the
    magnitude-spectrum prediction of Helfrich & Ye 2020 §5.3, or the
    common-suffix word classification of Carta et al. 2021 §5.5 (the real
    counterpart of :func:`load_common_suffix_words`). See ``DESCR`` for the
    features, labels and splits of each task, and the "Real data" page of
    the user guide.

    Parameters
    ----------
    root : str or path-like
        The folder holding ``TRAIN`` and ``TEST`` (either case).
    task : {'framewise', 'spectra', 'words'}, default='framewise'
        The task (see ``DESCR``).
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns every utterance of the parts. Task 'words' has no 'valid'.
    phone_set : {61, 39}, default=61
        Task 'framewise': the 61 TIMIT phone labels or the 39 classes of
        Lee & Hon (1989).
    deltas : bool, default=True
        Task 'framewise': append the first derivatives of the 13 features.
    hop_ms : float, default=1.0
        Task 'words': MFCC frame step in milliseconds (the paper's 1 ms).
    n_mfcc : int, default=13
        Tasks 'framewise' and 'words': cepstral coefficients per frame
        (coefficient 0 is the log energy).
    standardize : bool, default=True
        Tasks 'framewise' and 'words': standardize every feature with the
        mean and standard deviation of all training frames.
    target : {'word', 'suffix'}, default='word'
        Task 'words': classify the word (25 classes) or its suffix class (5).
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` / ``target`` and ``X_<part>`` / ``y_<part>`` for the parts
        of the task. 'framewise': lists of float32 arrays ``(T_i, 26)`` and
        int64 arrays ``(T_i,)`` of phone indices into ``target_names``.
        'spectra': lists of float32 arrays ``(T_i - 1, 129)`` for both X and
        y (y is X one frame later), ``audio`` (8 kHz float64 waveforms),
        ``sample_rate`` (8000). 'words': lists of float64 arrays
        ``(T_i, n_mfcc)`` and int64 word (or suffix) indices,
        ``target_names``, ``words``, ``audio`` (int16 word cut-outs),
        ``sample_rate`` (16000). All: ``utterances`` (``'TRAIN/DR1/FCJF0/SI1027'``
        per sequence), ``split_labels``, ``feature_mean`` and
        ``feature_scale`` (the standardization, when it applies), ``DESCR``.
    (X, y) : tuple of lists
        When ``return_X_y=True``.

    Raises
    ------
    FileNotFoundError
        When the tree, an audio file's .PHN or .WRD, or every utterance is
        missing.
    ValueError
        When a file is malformed, compressed with shorten (decompress with
        sph2pipe), or not sampled at 16 kHz.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from sklmn.datasets import load_timit
    >>> def sphere(samples):
    ...     lines = ["NIST_1A", "   1024", "sample_rate -i 16000",
    ...              "sample_n_bytes -i 2", "channel_count -i 1",
    ...              f"sample_count -i {len(samples)}",
    ...              "sample_byte_format -s2 01", "sample_coding -s3 pcm", "end_head"]
    ...     header = "\\n".join(lines).encode().ljust(1024)
    ...     return header + samples.astype("<i2").tobytes()
    >>> rng = np.random.RandomState(0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for part, speaker in (("TRAIN", "FCJF0"), ("TEST", "FELC0")):
    ...         folder = Path(tmp, part, "DR1", speaker)
    ...         folder.mkdir(parents=True)
    ...         wave = sphere(rng.randint(-999, 999, 8000))  # 0.5 s
    ...         _ = Path(folder, "SX1.WAV").write_bytes(wave)
    ...         _ = Path(folder, "SX1.PHN").write_text("0 3000 h#\\n3000 8000 iy\\n")
    ...         _ = Path(folder, "SX1.WRD").write_text("3000 8000 e\\n")
    ...     data = load_timit(tmp, task="framewise")
    ...     spectra = load_timit(tmp, task="spectra")
    >>> len(data.X_train), data.X_train[0].shape
    (1, (48, 26))
    >>> str(data.target_names[data.y_train[0][-1]])  # the phone of the last frame
    'iy'
    >>> spectra.X_test[0].shape
    (30, 129)
    >>> X, y = load_timit("/data/TIMIT", task="words",
    ...                   return_X_y=True)  # doctest: +SKIP
    """
    root = check_path("root", root)
    if task not in _TASKS:
        raise ValueError(
            f"task must be 'framewise', 'spectra' or 'words', got {task!r}."
        )
    splits = ("train", "test") if task == "words" else _SPLITS
    if split is not None and split not in splits:
        raise ValueError(
            f"split must be one of {list(splits)} or None for task={task!r}, got "
            f"{split!r}."
        )
    if isinstance(phone_set, bool) or phone_set not in (61, 39):
        raise ValueError(f"phone_set must be 61 or 39, got {phone_set!r}.")
    deltas = _check_bool("deltas", deltas)
    standardize = _check_bool("standardize", standardize)
    return_X_y = _check_bool("return_X_y", return_X_y)
    n_mfcc = check_int("n_mfcc", n_mfcc, 1)
    if (
        isinstance(hop_ms, bool)
        or not isinstance(hop_ms, numbers.Real)
        or not hop_ms > 0
    ):
        raise ValueError(f"hop_ms must be a positive number, got {hop_ms!r}.")
    if target not in ("word", "suffix"):
        raise ValueError(f"target must be 'word' or 'suffix', got {target!r}.")
    root = _timit_root(root)
    utterances = _utterances(root, include_sa=task == "words")

    extra = {}
    X, y, names, labels = [], [], [], []
    if task == "words":
        occurrences = _word_occurrences(utterances)
        short = {w: len(o) for w, o in occurrences.items() if len(o) < _N_PER_WORD}
        if not any(occurrences.values()):
            raise ValueError(
                f"TIMIT: none of the 25 common-suffix words is in the .WRD files "
                f"under {str(root)!r}."
            )
        if short:
            warnings.warn(
                f"TIMIT: fewer than {_N_PER_WORD} utterances of the words {short} "
                "(word: count found); the task keeps those found.",
                UserWarning,
                stacklevel=2,
            )
        audio, words, cache = [], [], {}
        for word in _WORDS:
            for rank, item in enumerate(occurrences[word]):
                _, part, dialect, speaker, sentence, path, start, end = item
                if path not in cache:
                    cache[path] = _read_wave(path)
                cut = cache[path][start:end].copy()
                if cut.size == 0:
                    raise ValueError(
                        f"{str(path)!r}: the word {word!r} at {start}..{end} lies "
                        "past the end of the audio."
                    )
                audio.append(cut)
                words.append(word)
                labels.append("test" if rank >= 5 else "train")
                names.append(f"{part}/{dialect}/{speaker}/{sentence}")
                X.append(
                    mfcc(
                        cut,
                        SAMPLE_RATE,
                        n_mfcc=n_mfcc,
                        window_ms=25.0,
                        hop_ms=float(hop_ms),
                        energy=True,
                    )
                )
        word_index = np.array([_WORDS.index(w) for w in words], dtype=np.int64)
        if target == "word":
            y_all, target_names = word_index, np.array(_WORDS)
        else:
            y_all, target_names = word_index // 5, np.array(list(SUFFIX_CLASSES))
        y = list(y_all)
        extra.update(
            target_names=target_names,
            words=np.array(words),
            audio=audio,
            sample_rate=SAMPLE_RATE,
        )
    else:
        target_names = np.array(TIMIT_PHONES if phone_set == 61 else _PHONES_39)
        codes = {p: i for i, p in enumerate(target_names)}
        waves = []
        for part, dialect, speaker, sentence, path in utterances:
            label = _split_of(part, speaker)
            if label is None:
                continue
            samples = _read_wave(path)
            if task == "framewise":
                segments = _read_segments(_companion(path, ".phn"))
                unknown = sorted({s[2] for s in segments} - set(TIMIT_PHONES))
                if unknown:
                    raise ValueError(
                        f"{str(_companion(path, '.phn'))!r} holds labels that are "
                        f"not TIMIT phones: {unknown}."
                    )
                features, phones = _framewise(
                    samples, segments, phone_set, deltas, n_mfcc
                )
                X.append(features)
                y.append(np.array([codes[p] for p in phones], dtype=np.int64))
            else:
                spectrum, wave = _spectra(samples)
                if len(spectrum) < 2:
                    raise ValueError(f"{str(path)!r} is shorter than two STFT frames.")
                spectrum = spectrum.astype(np.float32)
                X.append(spectrum[:-1])
                y.append(spectrum[1:])
                waves.append(wave)
            labels.append(label)
            names.append(f"{part}/{dialect}/{speaker}/{sentence}")
        if not labels:
            raise FileNotFoundError(
                f"TIMIT: no utterance of the training, development or core test "
                f"speakers under {str(root)!r}. Expected layout: {_LAYOUT}"
            )
        if task == "framewise":
            extra["target_names"] = target_names
        else:
            extra.update(audio=waves, sample_rate=8000)
    labels = np.array(labels)
    if task != "spectra":
        if standardize:
            X, mean, scale = _standardize(X, labels == "train")
        else:
            mean, scale = np.zeros(X[0].shape[1]), np.ones(X[0].shape[1])
        dtype = np.float32 if task == "framewise" else np.float64
        X = [x.astype(dtype) for x in X]
        extra.update(feature_mean=mean, feature_scale=scale)
    y_array = np.array(y, dtype=np.int64) if task == "words" else y
    parts = {}
    for name in splits:
        index = np.flatnonzero(labels == name)
        parts[f"X_{name}"] = [X[i] for i in index]
        parts[f"y_{name}"] = (
            y_array[index] if task == "words" else [y[i] for i in index]
        )
    return _split_result(
        X,
        y_array,
        parts,
        split,
        return_X_y,
        utterances=names,
        split_labels=labels,
        DESCR=_DESCR,
        **extra,
    )
