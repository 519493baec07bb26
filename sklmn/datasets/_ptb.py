"""Penn Treebank as character streams (character-level language modelling)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from ._base import _check_bool
from ._files import check_path, require_dir

__all__ = ["load_ptb_characters"]

_SPLITS = ("train", "valid", "test")
_LAYOUT = (
    "a folder holding either the character files ptb.char.train.txt, "
    "ptb.char.valid.txt and ptb.char.test.txt (one sentence per line, "
    "characters separated by spaces, '_' between words) or the word files "
    "ptb.train.txt, ptb.valid.txt and ptb.test.txt (one sentence per line, "
    "words separated by spaces), as in Mikolov's simple-examples archive."
)

_DESCR = """\
Penn Treebank characters
------------------------
The Penn Treebank (Marcus, Marcinkiewicz and Santorini 1993) in the
preprocessed form of Mikolov et al. (2012): 10k-word vocabulary, other words
replaced by <unk>, numbers by N, one sentence per line, split into
ptb.train.txt / ptb.valid.txt / ptb.test.txt, with character versions
ptb.char.*.txt (the characters of each sentence separated by spaces, '_'
between words). The character-level language modelling set of Helfrich & Ye
2020 §5.4 (Table 2). sklmn never downloads it: pass the folder of the files
you have. Licence: the Penn Treebank is distributed by the Linguistic Data
Consortium (LDC99T42) under its licence; the preprocessed files come from
Mikolov's RNNLM toolkit examples.

Streams: each part is one integer-coded stream of characters. From the
character files, the tokens of a line are its characters ('_' is read as a
space); from the word files, the words of a line joined by single spaces
(<unk> is spelled out, as in the character files). Both give the same
stream. With ``line_end=True`` every line is followed by the character
'\\n' (the end of the sentence); with ``line_end=False`` consecutive lines
are separated by a space instead. The vocabulary is the sorted set of the
training characters; a validation or test character outside it is an error.
Score with bits per character: the cross-entropy in base 2.
"""


def _find_files(folder):
    entries = {p.name: p for p in folder.iterdir() if p.is_file()}
    for pattern, kind in (("ptb.char.{}.txt", "char"), ("ptb.{}.txt", "word")):
        names = [pattern.format(part) for part in _SPLITS]
        if all(name in entries for name in names):
            return [entries[name] for name in names], kind
        present = [name for name in names if name in entries]
        if present:
            missing = [name for name in names if name not in entries]
            raise FileNotFoundError(
                f"Penn Treebank: {str(folder)!r} has {present} but not "
                f"{missing}. Expected layout: {_LAYOUT}"
            )
    raise FileNotFoundError(
        f"Penn Treebank: no ptb.char.*.txt or ptb.*.txt files in {str(folder)!r}. "
        f"Expected layout: {_LAYOUT}"
    )


def _line_text(line: str, kind: str) -> str:
    tokens = line.split()
    if kind == "word":
        return " ".join(tokens)
    for token in tokens:
        if len(token) != 1:
            raise ValueError(
                f"the token {token!r} is not a single character (the character "
                "files separate every character by a space). Expected layout: "
                f"{_LAYOUT}"
            )
    return "".join(tokens).replace("_", " ")


def load_ptb_characters(path, *, line_end=True):
    """Load the Penn Treebank as integer-coded character streams.

    The character-level language modelling task of Helfrich & Ye 2020 §5.4:
    predict the next character of a long stream. Reads Mikolov's
    preprocessed files that you already have (character files, or the word
    files converted to characters; nothing is downloaded). See ``DESCR`` and
    the "Real data" page of the user guide.

    Parameters
    ----------
    path : str or path-like
        Folder with ``ptb.char.train.txt``, ``ptb.char.valid.txt`` and
        ``ptb.char.test.txt``, or with ``ptb.train.txt``, ``ptb.valid.txt``
        and ``ptb.test.txt`` (the character files win when both are there).
    line_end : bool, default=True
        Follow every line (sentence) by the character ``'\\n'``; False
        separates consecutive lines by a space.

    Returns
    -------
    data : Bunch
        ``train``, ``valid``, ``test``: int64 arrays, the character streams
        coded as indices into ``vocabulary`` (the sorted characters of the
        training stream, a list of str); ``source`` ('char' or 'word': the
        files read); ``DESCR``.

    Raises
    ------
    FileNotFoundError
        When the folder or one of the three files of a kind is missing.
    ValueError
        When a character file holds a multi-character token, or a
        validation or test character is not in the training vocabulary.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklmn.datasets import load_ptb_characters
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for part, text in (("train", " the cat <unk> \\n a dog \\n"),
    ...                        ("valid", " a cat \\n"), ("test", " the dog \\n")):
    ...         with open(os.path.join(tmp, f"ptb.{part}.txt"), "w") as f:
    ...             _ = f.write(text)
    ...     data = load_ptb_characters(tmp)
    >>> "".join(data.vocabulary[i] for i in data.valid)
    'a cat\\n'
    >>> data.source, len(data.vocabulary)
    ('word', 15)
    """
    folder = require_dir(check_path("path", path), "Penn Treebank", _LAYOUT)
    line_end = _check_bool("line_end", line_end)
    files, kind = _find_files(folder)
    texts = []
    for file in files:
        lines = file.read_text(encoding="utf-8").splitlines()
        pieces = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                pieces.append(_line_text(line, kind))
            except ValueError as exc:
                raise ValueError(f"{str(file)!r}, line {number}: {exc}") from None
            if line_end:
                pieces.append("\n")
        # without line ends, a space keeps the last word of a sentence apart
        # from the first word of the next
        text = "".join(pieces) if line_end else " ".join(pieces)
        if not text:
            raise ValueError(f"{str(file)!r} holds no text. Expected layout: {_LAYOUT}")
        texts.append(text)
    vocabulary = sorted(set(texts[0]))
    codes = {char: i for i, char in enumerate(vocabulary)}
    streams = {}
    for part, file, text in zip(_SPLITS, files, texts, strict=True):
        unknown = sorted(set(text) - set(codes))
        if unknown:
            raise ValueError(
                f"{str(file)!r} holds characters that the training file does not: "
                f"{unknown}."
            )
        streams[part] = np.array([codes[c] for c in text], dtype=np.int64)
    return Bunch(**streams, vocabulary=vocabulary, source=kind, DESCR=_DESCR)
