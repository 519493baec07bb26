"""The polyphonic music sets of Boulanger-Lewandowski et al. (2012) as 88-key
piano rolls, read from their pickles with a restricted unpickler."""

from __future__ import annotations

import io
import math
import pickle
import pickletools

import numpy as np

from ._base import _check_bool, _split_result
from ._files import check_path

__all__ = ["load_polyphonic_music"]

N_KEYS = 88
LOWEST_MIDI = 21  # A0; the highest key, C8, is MIDI 108
_SPLITS = ("train", "valid", "test")

#: Opcodes that build only lists, tuples, dicts, numbers, strings, bytes,
#: booleans and None (plus framing and the memo). Every other opcode (GLOBAL,
#: STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, PERSID, sets, ...)
#: is refused before anything is built.
_SAFE_OPCODES = frozenset(
    """PROTO FRAME STOP MARK POP POP_MARK DUP
    EMPTY_LIST APPEND APPENDS LIST EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3
    EMPTY_DICT DICT SETITEM SETITEMS
    INT BININT BININT1 BININT2 LONG LONG1 LONG4 FLOAT BINFLOAT
    STRING BINSTRING SHORT_BINSTRING UNICODE BINUNICODE SHORT_BINUNICODE
    BINUNICODE8 BINBYTES SHORT_BINBYTES BINBYTES8 NONE NEWTRUE NEWFALSE
    PUT BINPUT LONG_BINPUT MEMOIZE GET BINGET LONG_BINGET""".split()
)

_LAYOUT = (
    "one pickle per data set (JSB Chorales, MuseData, Nottingham or "
    "Piano-midi.de, e.g. 'JSB Chorales.pickle'): a dict with the keys 'train', "
    "'valid' and 'test', each a list of pieces, each a list of time steps, "
    "each a list or tuple of the MIDI note numbers (21 .. 108) sounding then."
)

_DESCR = """\
Polyphonic music (Boulanger-Lewandowski et al. 2012)
----------------------------------------------------
The four polyphonic music sets of Boulanger-Lewandowski, Bengio and Vincent
(2012), "Modeling temporal dependencies in high-dimensional sequences:
application to polyphonic music generation and transcription" (ICML): JSB
Chorales, MuseData, Nottingham and Piano-midi.de, each distributed by the
authors as one Python pickle with its train / valid / test split (382, 783,
1037 and 124 pieces). The sets used in Bacciu et al. 2019 and Carta et al.
2021 §5.1 (Tables 1-3). sklmn never downloads them: pass the path of a pickle
you have. Licences: the pieces come from public-domain scores (JSB, the
Nottingham folk tunes) and from the MuseData and Piano-midi.de collections,
whose own terms apply (Piano-midi.de: CC BY-SA, Bernd Krueger); the split
and the pickles are the authors'.

Piano roll: key ``j`` (column) is MIDI pitch ``21 + j`` (A0 .. C8), one row
per time step of the pickle (the authors' sampling). A piece of ``T`` steps
gives X = steps ``0 .. T-2`` and y = steps ``1 .. T-1`` (next-step
prediction); score with :func:`sklmn.metrics.frame_level_accuracy`.

Safety: the pickle is read by a restricted unpickler that accepts only
lists, tuples, dicts, numbers, strings, bytes, booleans and None (Python 2
strings decoded as latin-1); a pickle naming any class or function (the way
a crafted pickle runs code) is refused before anything is built.
"""


class _DataOnlyUnpickler(pickle.Unpickler):
    """Unpickler that resolves no global name and no persistent id."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            f"refusing to load the global {module}.{name}: the music pickles "
            "hold only lists, tuples, dicts, numbers and strings."
        )

    def persistent_load(self, pid):
        raise pickle.UnpicklingError(
            "refusing a persistent id: the music pickles hold only lists, "
            "tuples, dicts, numbers and strings."
        )


def safe_load_pickle(data: bytes, source: str = "the pickle"):
    """Unpickle ``data`` holding only lists, tuples, dicts, numbers, strings,
    bytes, booleans and None; any other opcode raises ValueError naming it.

    Examples
    --------
    >>> import pickle
    >>> from sklmn.datasets._polyphonic import safe_load_pickle
    >>> safe_load_pickle(pickle.dumps({"train": [[(60, 64), ()]]}, protocol=2))
    {'train': [[(60, 64), ()]]}
    >>> safe_load_pickle(pickle.dumps(print))
    Traceback (most recent call last):
    ...
    ValueError: the pickle uses the opcode STACK_GLOBAL at byte ... to load it ...
    """
    try:
        opcodes = [(op.name, pos) for op, _, pos in pickletools.genops(data)]
    except Exception as exc:  # pickletools raises ValueError and others on junk
        raise ValueError(f"{source} is not a valid pickle: {exc}") from None
    for name, position in opcodes:
        if name not in _SAFE_OPCODES:
            raise ValueError(
                f"{source} uses the opcode {name} at byte {position}, which "
                "only pickles of objects other than lists, tuples, dicts, "
                "numbers and strings need: refusing to load it (a pickle naming "
                "a class or function can run code)."
            )
    try:
        return _DataOnlyUnpickler(io.BytesIO(data), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, TypeError, IndexError) as exc:
        raise ValueError(f"{source} is not a valid pickle: {exc}") from exc


def _piece_to_roll(piece, where: str) -> np.ndarray:
    if not isinstance(piece, list | tuple):
        raise ValueError(
            f"{where} must be a list of time steps, got {type(piece).__name__}. "
            f"Expected layout: {_LAYOUT}"
        )
    roll = np.zeros((len(piece), N_KEYS), dtype=np.uint8)
    for t, step in enumerate(piece):
        if not isinstance(step, list | tuple):
            raise ValueError(
                f"{where}, step {t} must be a list or tuple of MIDI note numbers, "
                f"got {type(step).__name__}: {step!r}. Expected layout: {_LAYOUT}"
            )
        for note in step:
            ok = isinstance(note, int | float) and not isinstance(note, bool)
            if not ok or not math.isfinite(note) or note != int(note):
                raise ValueError(
                    f"{where}, step {t} holds {note!r}, not a MIDI note number."
                )
            key = int(note) - LOWEST_MIDI
            if not 0 <= key < N_KEYS:
                raise ValueError(
                    f"{where}, step {t} holds the MIDI note {note!r}, outside "
                    "the 88 piano keys 21 .. 108."
                )
            roll[t, key] = 1
    if len(piece) < 2:
        raise ValueError(
            f"{where} has {len(piece)} time step(s): next-step prediction needs "
            "at least 2."
        )
    return roll


def load_polyphonic_music(path, *, split=None, return_X_y=False):
    """Load one of the four polyphonic music pickles as 88-key piano rolls.

    Reads a pickle of Boulanger-Lewandowski et al. (2012) (JSB Chorales,
    MuseData, Nottingham or Piano-midi.de) that you already have (nothing is
    downloaded) with a restricted unpickler that cannot run code, and turns
    every piece into a binary piano roll for next-step prediction (Carta et
    al. 2021 §5.1). See ``DESCR`` for the provenance, the licences and the
    layout, and the "Real data" page of the user guide.

    Parameters
    ----------
    path : str or path-like
        The pickle (a dict of ``'train'`` / ``'valid'`` / ``'test'`` lists
        of pieces, each a list of time steps, each a list or tuple of MIDI
        note numbers).
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns every piece (train, then valid, then test). The Bunch always
        holds all three parts.
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` / ``target``: lists of float64 arrays of shape
        ``(T_i - 1, 88)`` (X = steps ``0 .. T_i-2``, y = steps ``1 .. T_i-1``);
        ``X_train``, ``y_train``, ``X_valid``, ``y_valid``, ``X_test``,
        ``y_test``: the same per part; ``rolls`` (the uint8 rolls of every
        piece), ``split_labels`` (ndarray of 'train' / 'valid' / 'test' per
        piece), ``DESCR``.
    (X, y) : tuple of lists
        When ``return_X_y=True``.

    Raises
    ------
    FileNotFoundError
        When ``path`` is not a file.
    ValueError
        When the file is not a pickle of the expected layout, or uses any
        pickle opcode beyond lists, tuples, dicts, numbers and strings.

    Examples
    --------
    >>> import os, pickle, tempfile
    >>> from sklmn.datasets import load_polyphonic_music
    >>> sets = {"train": [[(60, 64, 67), (62,), ()]], "valid": [[(48,), (50,)]],
    ...         "test": [[(21, 108), (21,)]]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "tiny.pickle")
    ...     with open(path, "wb") as f:
    ...         pickle.dump(sets, f, protocol=2)
    ...     data = load_polyphonic_music(path)
    >>> len(data.X_train), data.X_train[0].shape
    (1, (2, 88))
    >>> data.X_train[0][0].nonzero()[0] + 21  # MIDI notes of the first step
    array([60, 64, 67])
    >>> data.rolls[2][0, [0, 87]]  # keys A0 and C8
    array([1, 1], dtype=uint8)
    >>> X, y = load_polyphonic_music("JSB Chorales.pickle",
    ...                              split="test", return_X_y=True)  # doctest: +SKIP
    """
    path = check_path("path", path)
    if split is not None and split not in _SPLITS:
        raise ValueError(
            f"split must be 'train', 'valid', 'test' or None, got {split!r}."
        )
    return_X_y = _check_bool("return_X_y", return_X_y)
    if not path.is_file():
        raise FileNotFoundError(
            f"no polyphonic music pickle at {str(path)!r}. Expected: {_LAYOUT}"
        )
    sets = safe_load_pickle(path.read_bytes(), source=f"{str(path)!r}")
    if not isinstance(sets, dict):
        raise ValueError(
            f"{str(path)!r} holds a {type(sets).__name__}, not a dict. "
            f"Expected layout: {_LAYOUT}"
        )
    keys = {k.decode("latin1") if isinstance(k, bytes) else k: k for k in sets}
    missing = [name for name in _SPLITS if name not in keys]
    if missing:
        raise ValueError(
            f"{str(path)!r} has the keys {sorted(map(str, keys))}, missing "
            f"{missing}. Expected layout: {_LAYOUT}"
        )
    rolls, labels = [], []
    for name in _SPLITS:
        pieces = sets[keys[name]]
        if not isinstance(pieces, list | tuple):
            raise ValueError(
                f"{str(path)!r}: {name!r} must be a list of pieces, got "
                f"{type(pieces).__name__}. Expected layout: {_LAYOUT}"
            )
        for i, piece in enumerate(pieces):
            rolls.append(_piece_to_roll(piece, f"{name!r} piece {i}"))
            labels.append(name)
    labels = np.array(labels)
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
        split_labels=labels,
        DESCR=_DESCR,
    )
