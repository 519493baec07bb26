"""Bach chorales as 88-key binary piano rolls (Carta et al. 2021 §5.1)."""

from __future__ import annotations

import contextlib
import numbers
import os
import tempfile
import zipfile
import zlib
from fractions import Fraction

import numpy as np

from ._base import _bundled_path, _check_bool, _split_result, get_data_home

__all__ = ["load_bach_chorales"]

_FILE = "bach_chorales.npz"
N_KEYS = 88
LOWEST_MIDI = 21  # A0; the highest key, C8, is MIDI 108
N_RIEMENSCHNEIDER = 371  # chorales in music21's Riemenschneider numbering
N_CHORALES = 348  # after removing the 23 repeated ones
_SPLITS = ("train", "valid", "test")

_DESCR = """\
Bach chorales (piano rolls)
---------------------------
The four-part chorales of J. S. Bach in Riemenschneider's numbering (371),
as encoded in the corpus bundled with the ``music21`` package (MusicXML files
``bach/bwv*.mxl``; the compositions are in the public domain), converted to
88-key binary piano rolls for next-step prediction (Carta et al. 2021 §5.1, after
Boulanger-Lewandowski et al. 2012). Riemenschneider's collection repeats some
chorales: 21 numbers point to a file already listed and 2 more files hold
the same notes as an earlier one (bwv274 = bwv62.6, bwv69.6-a = bwv69.6);
keeping the first occurrence leaves 348 distinct chorales
(24 to 193 frames at one frame per quarter note).

Piano roll: key ``j`` (column) is MIDI pitch ``21 + j`` (A0 .. C8). The score
is sampled every ``1 / frames_per_quarter`` quarter notes (default: one frame
per quarter note, the usual JSB setup): frame ``k`` sits at time
``t_k = k / frames_per_quarter`` (quarter lengths from the first note of the
score, pickup included) and key ``p`` is 1 when a note of any part with
``offset <= t_k < offset + duration`` has pitch ``p``. Notes that sound only
between two sampling times (e.g. off-beat eighth-note passing tones at one
frame per quarter) are dropped, as in the common JSB piano rolls; repeats are
not expanded; grace notes (zero duration) never sound. A chorale of ``T``
frames gives X = frames ``0 .. T-2`` and y = frames ``1 .. T-1``.

Split: the original JSB split of Boulanger-Lewandowski et al. (229 / 76 / 77
of 382) is not part of music21, so sklmn uses a fixed split of about the same
proportions, decided by the corpus name of each chorale: with
``r = zlib.crc32(name.encode()) % 5``, r in {0, 1, 2} is train, 3 valid, 4
test (214 / 64 / 70 chorales). The label of a chorale does not depend on
``max_chorales`` or on the order of loading.

The one-frame-per-quarter rolls of all 348 chorales are shipped with sklmn
(``data/bach_chorales.npz``, bit-packed, rebuilt by
``python -m sklmn.datasets._build_chorales``), so loading them needs neither
music21 nor a network. Other ``frames_per_quarter`` are converted from the
music21 corpus (``pip install sklmn[music]``) and cached in
``get_data_home()``. Score with the frame-level accuracy of Bay et al. (2009).
"""


def _split_labels(names) -> np.ndarray:
    """Fixed train/valid/test label of each chorale, from a hash of its name."""
    table = np.array(["train", "train", "train", "valid", "test"])
    return table[[zlib.crc32(name.encode("ascii")) % 5 for name in names]]


def _score_events(score) -> list[tuple[Fraction, Fraction, int]]:
    """(start, end, MIDI pitch) of every sounding pitch of a music21 score."""
    events = []
    for element in score.flatten().notes:
        start = Fraction(element.offset)
        end = start + Fraction(element.quarterLength)
        for pitch in element.pitches:
            events.append((start, end, int(pitch.midi)))
    if not events:
        raise ValueError(f"score {score!r} has no notes.")
    return events


def _events_to_roll(events, frames_per_quarter: int) -> np.ndarray:
    """Sample note events into a (T, 88) uint8 piano roll (see DESCR)."""
    step = Fraction(1, frames_per_quarter)
    stop = max(end for _, end, _ in events)
    n_frames = -(-stop // step)  # ceil: frames at 0, step, ... < stop
    roll = np.zeros((int(n_frames), N_KEYS), dtype=np.uint8)
    for start, end, midi in events:
        key = midi - LOWEST_MIDI
        if not 0 <= key < N_KEYS:
            raise ValueError(f"pitch MIDI {midi} is outside the 88 keys 21..108.")
        first = -(-start // step)  # first sampling time >= start
        last = -(-end // step)  # first sampling time >= end (excluded)
        roll[int(first) : int(last), key] = 1
    return roll


def _score_to_roll(score, frames_per_quarter: int) -> np.ndarray:
    """Sample a music21 score into a (T, 88) uint8 piano roll."""
    return _events_to_roll(_score_events(score), frames_per_quarter)


def _convert_with_music21(frames_per_quarter: int, n: int):
    """Convert the first ``n`` distinct Riemenschneider chorales with music21."""
    try:
        from music21 import corpus
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "converting the Bach chorales at frames_per_quarter="
            f"{frames_per_quarter} needs music21: pip install 'sklmn[music]' "
            "(the bundled rolls use frames_per_quarter=1)."
        ) from exc
    iterator = corpus.chorales.Iterator(
        numberingSystem="riemenschneider", returnType="filename"
    )
    paths = list(iterator)
    if len(paths) != N_RIEMENSCHNEIDER:
        raise RuntimeError(
            f"expected {N_RIEMENSCHNEIDER} chorales in the music21 corpus, found "
            f"{len(paths)}."
        )
    rolls, names, seen = [], [], set()
    for path in paths:
        name = path.split("/")[-1]
        if name in names:  # a Riemenschneider number repeating a file
            continue
        events = _score_events(corpus.parse(path))
        key = tuple(sorted(events))
        if key in seen:  # a file repeating the notes of another one
            continue
        seen.add(key)
        rolls.append(_events_to_roll(events, frames_per_quarter))
        names.append(name)
        if len(rolls) == n:
            break
    return rolls, names


def _pack(rolls, names, path) -> None:
    """Write the rolls to ``path`` all or nothing: into a temporary file of
    the same folder, renamed to ``path`` once complete (an interrupted or
    failed write leaves no partial cache behind)."""
    lengths = np.array([len(r) for r in rolls], dtype=np.int64)
    packed = np.packbits(np.concatenate(rolls, axis=0), axis=1)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            np.savez_compressed(
                stream, packed=packed, lengths=lengths, names=np.array(names)
            )
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _unpack(path):
    with np.load(path) as archive:
        rolls = np.unpackbits(archive["packed"], axis=1, count=N_KEYS)
        lengths = archive["lengths"]
        names = [str(name) for name in archive["names"]]
    return np.split(rolls, np.cumsum(lengths)[:-1]), names


def load_bach_chorales(
    *,
    split=None,
    frames_per_quarter: int = 1,
    max_chorales=None,
    source: str = "auto",
    data_home=None,
    return_X_y: bool = False,
):
    """Load the Bach chorales as 88-key piano rolls for next-step prediction.

    Carta et al. 2021 §5.1: each frame is a binary vector over the 88 piano keys
    (MIDI 21 .. 108); the task is to predict frame ``t + 1`` from frames
    ``0 .. t``. Sequences are ragged (one array per chorale). See ``DESCR``
    for the sampling convention and the fixed train/valid/test split.

    Parameters
    ----------
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns every chorale there. The Bunch always holds all three parts.
    frames_per_quarter : int, default=1
        Frames per quarter note (1: quarter-note frames, 2: eighth notes, ...).
    max_chorales : int or None, default=None
        Use only the first ``max_chorales`` distinct chorales in
        Riemenschneider order (for quick experiments; each keeps its split
        label, so a small ``max_chorales`` may leave a part empty).
    source : {'auto', 'bundled', 'music21'}, default='auto'
        'bundled' reads the rolls shipped with sklmn (only for
        ``frames_per_quarter=1``); 'music21' converts the music21 corpus (or
        reads its cache in ``data_home``); 'auto' is 'bundled' when possible.
    data_home : str, path-like or None, default=None
        Cache folder of the music21 conversion (see :func:`get_data_home`).
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` / ``target``: lists of float64 arrays of shape
        ``(T_i - 1, 88)`` (X = frames ``0 .. T_i-2``, y = frames
        ``1 .. T_i-1``) of the selected split; ``X_train``, ``y_train``,
        ``X_valid``, ``y_valid``, ``X_test``, ``y_test``: the same per part;
        ``rolls`` (the full uint8 rolls of all loaded chorales), ``names``
        (music21 corpus names such as ``'bwv269'``), ``split_labels``
        (ndarray of 'train' / 'valid' / 'test' per chorale),
        ``frames_per_quarter``, ``DESCR``.
    (X, y) : tuple of lists
        When ``return_X_y=True``.

    Examples
    --------
    >>> from sklmn.datasets import load_bach_chorales
    >>> data = load_bach_chorales()
    >>> len(data.X_train), len(data.X_valid), len(data.X_test)
    (214, 64, 70)
    >>> data.X_train[0].shape[1], data.X_train[0].dtype
    (88, dtype('float64'))
    >>> X, y = load_bach_chorales(split="test", return_X_y=True)
    >>> bool((X[0][1:] == y[0][:-1]).all())
    True
    """
    if split is not None and split not in _SPLITS:
        raise ValueError(
            f"split must be 'train', 'valid', 'test' or None, got {split!r}."
        )
    if (
        isinstance(frames_per_quarter, bool)
        or not isinstance(frames_per_quarter, numbers.Integral)
        or frames_per_quarter < 1
    ):
        raise ValueError(
            f"frames_per_quarter must be a positive int, got {frames_per_quarter!r}."
        )
    frames_per_quarter = int(frames_per_quarter)
    if max_chorales is None:
        n = N_CHORALES
    elif (
        isinstance(max_chorales, bool)
        or not isinstance(max_chorales, numbers.Integral)
        or not 1 <= max_chorales
    ):
        raise ValueError(
            f"max_chorales must be a positive int or None, got {max_chorales!r}."
        )
    else:
        n = min(int(max_chorales), N_CHORALES)
    if source not in ("auto", "bundled", "music21"):
        raise ValueError(
            f"source must be 'auto', 'bundled' or 'music21', got {source!r}."
        )
    if source == "bundled" and frames_per_quarter != 1:
        raise ValueError(
            "the bundled rolls have frames_per_quarter=1, got "
            f"frames_per_quarter={frames_per_quarter!r}: use source='music21'."
        )
    if data_home is not None and not isinstance(data_home, str | os.PathLike):
        raise TypeError(
            "data_home must be a str, a path-like object or None, got "
            f"{type(data_home).__name__}: {data_home!r}."
        )
    return_X_y = _check_bool("return_X_y", return_X_y)

    if source == "bundled" or (source == "auto" and frames_per_quarter == 1):
        rolls, names = _unpack(_bundled_path(_FILE))
        rolls, names = rolls[:n], names[:n]
    else:
        home = get_data_home(data_home)
        full = home / f"bach_chorales_fpq{frames_per_quarter}_n{N_CHORALES}.npz"
        partial = home / f"bach_chorales_fpq{frames_per_quarter}_n{n}.npz"
        if full.exists() or partial.exists():
            cached = full if full.exists() else partial
            try:
                rolls, names = _unpack(cached)
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
                raise ValueError(
                    f"the cached conversion {str(cached)!r} cannot be read "
                    f"({exc}); delete it to convert the chorales again."
                ) from exc
            rolls, names = rolls[:n], names[:n]
        else:
            rolls, names = _convert_with_music21(frames_per_quarter, n)
            _pack(rolls, names, partial)

    labels = _split_labels(names)
    X_all = [roll[:-1].astype(np.float64) for roll in rolls]
    y_all = [roll[1:].astype(np.float64) for roll in rolls]
    parts = {}
    for name in _SPLITS:
        index = np.flatnonzero(labels == name)
        parts[f"X_{name}"] = [X_all[i] for i in index]
        parts[f"y_{name}"] = [y_all[i] for i in index]
    return _split_result(
        X_all,
        y_all,
        parts,
        split,
        return_X_y,
        rolls=rolls,
        names=names,
        split_labels=labels,
        frames_per_quarter=frames_per_quarter,
        DESCR=_DESCR,
    )
