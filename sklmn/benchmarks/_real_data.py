"""The papers' own data sets, found under ``--data-dir`` when the user has
them; the experiments use their offline stand-ins otherwise.

Expected layout of ``DIR`` (each entry optional; the report says, per
experiment, which data ran):

- ``DIR/music/JSB Chorales.pickle``: the JSB Chorales pickle of
  Boulanger-Lewandowski et al. 2012 (experiment ``chorales``; read by
  :func:`sklmn.datasets.load_polyphonic_music`);
- ``DIR/mnist/``: the four MNIST IDX files (``sequential-digits``;
  :func:`sklmn.datasets.load_mnist_sequences`);
- ``DIR/timit/``: the TIMIT tree with ``TRAIN/`` and ``TEST/``
  (``common-suffix-words``, ``timit-framewise``;
  :func:`sklmn.datasets.load_timit`);
- ``DIR/music/MuseData.pickle``, ``Nottingham.pickle``,
  ``Piano-midi.de.pickle``: the other three pickles (``music-sets``);
- ``DIR/iam-ondb/``: IAM-OnDB's ``lineStrokes/``, ``ascii/`` and split
  lists (``handwriting``; :func:`sklmn.datasets.load_iam_ondb`);
- ``DIR/ptb/``: the Penn Treebank files of Mikolov's archive,
  ``ptb.char.{train,valid,test}.txt`` or ``ptb.{train,valid,test}.txt``
  (``char-ptb``; :func:`sklmn.datasets.load_ptb_characters`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["REAL_DATA", "data_note", "locate"]

#: experiment -> (path under DIR, what it holds)
REAL_DATA = {
    "chorales": (
        "music/JSB Chorales.pickle",
        "JSB Chorales (Boulanger-Lewandowski et al. 2012 pickle)",
    ),
    "sequential-digits": ("mnist", "MNIST (IDX files)"),
    "common-suffix-words": ("timit", "TIMIT (LDC tree)"),
    "handwriting": ("iam-ondb", "IAM-OnDB (XML strokes, official split lists)"),
    "timit-framewise": ("timit", "TIMIT (LDC tree)"),
    "char-ptb": ("ptb", "Penn Treebank characters (Mikolov's files)"),
}


def locate(name: str, data_dir) -> Path | None:
    """The path of experiment ``name``'s real data under ``data_dir``, or
    None when ``data_dir`` is None or does not hold it.

    Examples
    --------
    >>> import tempfile
    >>> from sklmn.benchmarks._real_data import locate
    >>> locate("chorales", None) is None
    True
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "mnist").mkdir()
    ...     locate("sequential-digits", tmp).name
    'mnist'
    """
    if data_dir is None:
        return None
    path = Path(data_dir) / REAL_DATA[name][0]
    return path if path.exists() else None


def data_note(name: str, data_dir, path: Path | None, stand_in: str) -> str:
    """The report's line on the data experiment ``name`` used.

    Examples
    --------
    >>> from sklmn.benchmarks._real_data import data_note
    >>> data_note("chorales", None, None, "music21's Bach chorales")
    "stand-in: music21's Bach chorales (no --data-dir given)"
    """
    if path is not None:
        return f"real data: {REAL_DATA[name][1]}, read from {path}"
    if data_dir is None:
        return f"stand-in: {stand_in} (no --data-dir given)"
    where = Path(data_dir) / REAL_DATA[name][0]
    return f"stand-in: {stand_in} ({where} not found)"
