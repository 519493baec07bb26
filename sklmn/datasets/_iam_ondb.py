"""IAM-OnDB: on-line handwritten text lines read from their XML stroke files."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from ._base import _split_result
from ._files import check_path, require_dir

__all__ = ["load_iam_ondb"]

_SPLITS = ("train", "valid", "test")
_FEATURES = {
    "paper": ["time", "x", "y", "end_stroke"],
    "offsets": ["dx", "dy", "pen_up"],
}
_LAYOUT = (
    "ROOT/lineStrokes/<a01>/<a01-000>/<a01-000u-01>.xml (StrokeSet / Stroke / "
    "Point with x, y and time attributes, one file per text line), "
    "ROOT/ascii/<a01>/<a01-000>/<a01-000u>.txt (the transcription of the form: "
    "the lines after 'CSR:', in line order) and the split lists trainset.txt, "
    "testset_v.txt, testset_t.txt and testset_f.txt (one form or line id per "
    "line) anywhere under ROOT."
)

_DESCR = """\
IAM On-Line Handwriting Database (IAM-OnDB)
-------------------------------------------
Liwicki & Bunke (2005), "IAM-OnDB - an on-line English sentence database
acquired from handwritten text on a whiteboard" (ICDAR): text lines written
by 221 writers on a whiteboard, recorded as pen trajectories (XML files of
strokes of (x, y, time) points) with their transcriptions. The database is
free for non-commercial research after registration with the University of
Bern (FKI group); sklmn never downloads it: pass the folder of the files
you have. The task of Carta et al. 2020a §5.3: recognize the characters of
a line (CTC) with a bidirectional network.

Features: ``features='paper'`` (Carta et al. 2020a §5.3): one row per point,
(time, x, y, end_stroke), where end_stroke is 1 at the last point of every
stroke, and time, x and y are min-max normalized to [0, 1] within every
stroke separately (as the paper states; a constant coordinate of a stroke
is 0). ``features='offsets'`` gives the layout of the offline stand-in
:func:`load_online_handwriting`: (dx, dy, pen_up), the displacement from the
previous point (0 for the first) in whiteboard units with y pointing up, and
1 at the last point of every stroke.

Labels: the line's transcription, the line of the 'CSR:' section of the
form's ascii file with the same number as the stroke file (``-01`` is the
first line), with the surrounding spaces removed.

Split (writer-independent, the official lists of the IAM-OnDB-t1 task):
trainset.txt is the training part (5364 lines), testset_v.txt and
testset_f.txt the validation part (1438 + 1518 = 2956) and testset_t.txt
the test part (3859), as Graves et al. (2009). Carta et al. 2020a report
5364 / 3859 / 2956 lines for train / validation / test, that is the two
middle lists swapped: pass ``valid_lists=('testset_t.txt',)`` and
``test_lists=('testset_v.txt', 'testset_f.txt')`` for that assignment. A
list names forms (e.g. ``a01-000u``, all their lines) or single lines
(``a01-000u-01``); listed lines without a stroke file are counted in
``n_missing``.
"""


def _index(folder, suffix: str) -> dict:
    return {path.stem: path for path in sorted(folder.rglob(f"*{suffix}"))}


def _find_list(root, name: str):
    matches = sorted(root.rglob(name))
    if not matches:
        raise FileNotFoundError(
            f"IAM-OnDB: no split list {name} under {str(root)!r}. Expected "
            f"layout: {_LAYOUT}"
        )
    return matches[0]


def _read_ids(path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def _read_strokes(path) -> list[np.ndarray]:
    """The ``(n_points, 3)`` arrays ``(x, y, time)`` of every stroke."""
    try:
        tree = ET.parse(path)
    except ET.ParseError as exc:
        raise ValueError(f"{str(path)!r} is not well-formed XML: {exc}") from None
    strokes = []
    for stroke in tree.getroot().iter("Stroke"):
        try:
            points = [
                (float(p.get("x")), float(p.get("y")), float(p.get("time")))
                for p in stroke.iter("Point")
            ]
        except (TypeError, ValueError):
            raise ValueError(
                f"{str(path)!r}: every Point needs numeric x, y and time "
                f"attributes. Expected layout: {_LAYOUT}"
            ) from None
        if points:
            strokes.append(np.array(points, dtype=np.float64))
    if not strokes:
        raise ValueError(
            f"{str(path)!r} has no StrokeSet/Stroke/Point. Expected layout: {_LAYOUT}"
        )
    return strokes


def _csr_lines(path) -> list[str]:
    lines = path.read_text(encoding="latin1").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "CSR:":
            body = lines[i + 1 :]
            while body and not body[0].strip():
                body = body[1:]
            while body and not body[-1].strip():
                body = body[:-1]
            return [line.strip() for line in body]
    raise ValueError(f"{str(path)!r} has no 'CSR:' section. Expected layout: {_LAYOUT}")


def _features(strokes, kind: str) -> np.ndarray:
    ends = np.concatenate([np.arange(len(s)) == len(s) - 1 for s in strokes])
    if kind == "offsets":
        xy = np.concatenate(strokes)[:, :2] * np.array([1.0, -1.0])
        deltas = np.diff(xy, axis=0, prepend=xy[:1])
        return np.column_stack([deltas, ends])
    rows = []
    for stroke in strokes:
        values = stroke[:, [2, 0, 1]]  # time, x, y
        low, span = values.min(axis=0), np.ptp(values, axis=0)
        rows.append((values - low) / np.where(span > 0, span, 1.0))
    return np.column_stack([np.concatenate(rows), ends])


def load_iam_ondb(
    root,
    *,
    features="paper",
    valid_lists=("testset_v.txt", "testset_f.txt"),
    test_lists=("testset_t.txt",),
    split=None,
    return_X_y=False,
):
    """Load IAM-OnDB text lines as pen trajectories with their transcriptions.

    Reads the XML stroke files, the ascii transcriptions and the official
    writer-independent split lists of the IAM On-Line Handwriting Database
    (Liwicki & Bunke 2005) that you already have (nothing is downloaded),
    for the handwriting recognition task of Carta et al. 2020a §5.3. The real
    counterpart of :func:`load_online_handwriting`. See ``DESCR`` for the
    features, labels, split and licence, and the "Real data" page of the user
    guide.

    Parameters
    ----------
    root : str or path-like
        Folder holding ``lineStrokes/``, ``ascii/`` and the split lists
        ``trainset.txt``, ``testset_v.txt``, ``testset_t.txt`` and
        ``testset_f.txt`` (searched anywhere under ``root``).
    features : {'paper', 'offsets'}, default='paper'
        ``(time, x, y, end_stroke)`` normalized per stroke (the paper) or
        ``(dx, dy, pen_up)`` as the stand-in.
    valid_lists : tuple of str, default=('testset_v.txt', 'testset_f.txt')
        Split lists whose lines form the validation part.
    test_lists : tuple of str, default=('testset_t.txt',)
        Split lists whose lines form the test part (``trainset.txt`` is
        always the training part).
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns every listed line (train, valid, test).
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data``: list of float64 arrays ``(T_i, 4)`` (or ``(T_i, 3)``);
        ``target``: array of transcriptions (str); ``X_train``, ``y_train``,
        ``X_valid``, ``y_valid``, ``X_test``, ``y_test``: the parts;
        ``ids`` (line ids such as ``'a01-000u-01'``), ``split_labels``,
        ``alphabet`` (sorted characters of the labels), ``feature_names``,
        ``n_missing`` (listed lines without a stroke file), ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Raises
    ------
    FileNotFoundError
        When a folder, a split list or a transcription is missing.
    ValueError
        When a file is malformed, a line has no transcription, or a line is
        in two parts.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklmn.datasets import load_iam_ondb
    >>> stroke = ('<WhiteboardCaptureSession><StrokeSet>'
    ...           '<Stroke><Point x="10" y="50" time="1.0"/>'
    ...           '<Point x="20" y="40" time="1.5"/></Stroke>'
    ...           '<Stroke><Point x="30" y="50" time="2.0"/></Stroke>'
    ...           '</StrokeSet></WhiteboardCaptureSession>')
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for form, text in (("a01-000u", "Hi"), ("a01-001w", "yes"),
    ...                        ("a02-000x", "no"), ("a02-001y", "ok")):
    ...         folder = Path(tmp, "lineStrokes", "a01", form[:7])
    ...         folder.mkdir(parents=True, exist_ok=True)
    ...         _ = Path(folder, form + "-01.xml").write_text(stroke)
    ...         folder = Path(tmp, "ascii", "a01", form[:7])
    ...         folder.mkdir(parents=True, exist_ok=True)
    ...         ascii_text = f"OCR:\\n\\n{text}\\n\\nCSR:\\n\\n{text}\\n"
    ...         _ = Path(folder, form + ".txt").write_text(ascii_text)
    ...     for name, form in (("trainset", "a01-000u"), ("testset_v", "a01-001w"),
    ...                        ("testset_f", "a02-000x"), ("testset_t", "a02-001y")):
    ...         _ = Path(tmp, name + ".txt").write_text(form + "\\n")
    ...     data = load_iam_ondb(tmp)
    >>> data.y_train.tolist(), data.y_valid.tolist(), data.y_test.tolist()
    (['Hi'], ['yes', 'no'], ['ok'])
    >>> data.X_train[0].tolist()
    [[0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]
    """
    root = require_dir(check_path("root", root), "IAM-OnDB", _LAYOUT)
    if features not in _FEATURES:
        raise ValueError(f"features must be 'paper' or 'offsets', got {features!r}.")
    lists = {}
    for name, value in (("valid_lists", valid_lists), ("test_lists", test_lists)):
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError(
                f"{name} must be a tuple of list file names, got {value!r}."
            )
        lists[name] = tuple(value)
    if split is not None and split not in _SPLITS:
        raise ValueError(
            f"split must be 'train', 'valid', 'test' or None, got {split!r}."
        )
    if not isinstance(return_X_y, bool):
        raise TypeError(f"return_X_y must be a bool, got {return_X_y!r}.")
    strokes_dir = require_dir(root / "lineStrokes", "IAM-OnDB", _LAYOUT)
    ascii_dir = require_dir(root / "ascii", "IAM-OnDB", _LAYOUT)
    line_files = _index(strokes_dir, ".xml")
    form_lines: dict[str, list[str]] = {}
    for line_id in line_files:
        form_lines.setdefault(line_id.rsplit("-", 1)[0], []).append(line_id)
    texts = _index(ascii_dir, ".txt")

    assignment, n_missing = {}, 0
    for part, names in (
        ("train", ("trainset.txt",)),
        ("valid", lists["valid_lists"]),
        ("test", lists["test_lists"]),
    ):
        for name in names:
            for entry in _read_ids(_find_list(root, name)):
                found = form_lines.get(entry) or (
                    [entry] if entry in line_files else []
                )
                n_missing += not found
                for line_id in found:
                    if assignment.setdefault(line_id, part) != part:
                        raise ValueError(
                            f"IAM-OnDB: the line {line_id} is in both the "
                            f"{assignment[line_id]} and the {part} lists."
                        )
    if not assignment:
        raise FileNotFoundError(
            f"IAM-OnDB: no listed line has a stroke file under {str(strokes_dir)!r}."
            f" Expected layout: {_LAYOUT}"
        )
    order = {part: i for i, part in enumerate(_SPLITS)}
    ids = sorted(assignment, key=lambda line_id: (order[assignment[line_id]], line_id))
    X, y, csr_cache = [], [], {}
    for line_id in ids:
        form, number = line_id.rsplit("-", 1)
        if form not in texts:
            raise FileNotFoundError(
                f"IAM-OnDB: no transcription {form}.txt under {str(ascii_dir)!r}. "
                f"Expected layout: {_LAYOUT}"
            )
        if form not in csr_cache:
            csr_cache[form] = _csr_lines(texts[form])
        lines = csr_cache[form]
        if not number.isdigit() or not 1 <= int(number) <= len(lines):
            raise ValueError(
                f"IAM-OnDB: {str(texts[form])!r} has {len(lines)} CSR lines, no "
                f"line for the stroke file {line_id}.xml."
            )
        X.append(_features(_read_strokes(line_files[line_id]), features))
        y.append(lines[int(number) - 1])
    y = np.array(y, dtype=str)
    labels = np.array([assignment[line_id] for line_id in ids])
    parts = {}
    for name in _SPLITS:
        index = np.flatnonzero(labels == name)
        parts[f"X_{name}"] = [X[i] for i in index]
        parts[f"y_{name}"] = y[index]
    return _split_result(
        X,
        y,
        parts,
        split,
        return_X_y,
        ids=ids,
        split_labels=labels,
        alphabet=sorted(set("".join(y.tolist()))),
        feature_names=list(_FEATURES[features]),
        n_missing=int(n_missing),
        DESCR=_DESCR,
    )
