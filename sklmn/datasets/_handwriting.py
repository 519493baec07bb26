"""Online handwriting rendered from single-stroke vector fonts.

An offline stand-in for IAM-OnDB (Liwicki & Bunke 2005), the online
handwriting task of Carta et al. 2020a §5: pen trajectories labelled with
their transcription. Words are drawn with the Hershey fonts (single-stroke
vector glyphs) shipped by the optional ``Hershey-Fonts`` package, then
distorted per writer and per sample.
"""

from __future__ import annotations

from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils._compat import Interval, StrOptions, validate_params
from ._base import _split_result

__all__ = [
    "HANDWRITING_VOCABULARY",
    "load_online_handwriting",
    "make_online_handwriting",
]

#: The default vocabulary: 60 short lowercase English words (2 to 7 letters)
#: covering every letter of the alphabet.
HANDWRITING_VOCABULARY = (
    "a", "an", "and", "are", "back", "big", "box", "but", "call", "can",
    "day", "dog", "each", "fix", "for", "from", "give", "good", "have", "her",
    "his", "just", "keep", "kind", "late", "like", "line", "make", "many", "may",
    "more", "name", "new", "not", "now", "of", "old", "only", "over", "part",
    "place", "quick", "quiet", "said", "small", "some", "than", "that", "the",
    "them", "very", "water", "way", "when", "which", "with", "word", "work",
    "year", "zero",
)  # fmt: skip

#: Fonts a writer may use: a cursive and an upright print style, both simplex
#: (every glyph drawn with a few single-line strokes).
_FONTS = ("scripts", "futural")

_INSTALL_HINT = (
    "the online handwriting generator needs the optional Hershey-Fonts package: "
    "pip install 'sklmn[handwriting]' (or pip install Hershey-Fonts==2.1.0)"
)

_DESCR = """\
Online handwriting (generated)
------------------------------
Offline stand-in for IAM-OnDB (Liwicki & Bunke 2005), the online handwriting
recognition task of Carta et al. 2020a §5 (a bidirectional network trained
with connectionist temporal classification maps pen trajectories to
character strings). IAM-OnDB needs a registration to download, so sklmn
generates pen trajectories instead: every sample is a word (or a short line
of words) from a fixed vocabulary, drawn with the Hershey fonts, written by
one of several synthetic writers.

Glyphs: the Hershey fonts, digitized by A. V. Hershey at the U.S. National
Bureau of Standards (NBS Special Publication 424, "Tables of Coordinates for
Hershey's Repertory of Occidental Type Fonts and Graphic Symbols"), as
shipped by the Hershey-Fonts package (version 2.1.0, MIT License; its
documentation states that the font data are in the public domain, only the
NTIS distribution format being restricted). A writer uses the simplex script
font ('scripts', cursive) or the simplex sans-serif font ('futural', print):
every glyph is a few single-line strokes, like pen strokes.

Writers: each writer draws a style once: font, slant (shear angle, radians,
normal around 0.15 with deviation 0.15), width factor (0.8 to 1.25), size
factor (0.8 to 1.25), extra letter spacing, speed (pen-path length between
two samples, 0.7 to 1.4 times 1 / point_density) and jitter (standard
deviation of the noise on every point, 0.8 to 2.5 percent of the letter
height).

Samples: the writer's style is perturbed per sample (slant, size and
baseline angle), the pen path of every stroke is resampled at a varying
speed (arc-length steps modulated by a smooth random profile along the whole
word, so the number of points of a letter changes from sample to sample),
and Gaussian jitter is added to every point. Units: the letter (cap) height
of the font is 1 before the size factor, y points up, the baseline is y = 0.

Layout: one row per pen sample, (dx, dy, pen_up): dx, dy the displacement
from the previous sample (from the origin, the left end of the baseline, for
the first one); pen_up is 1 at the last sample of every stroke (the pen is
lifted after it, so the next row's displacement is a pen-up move to the next
stroke) and 0 elsewhere, as the end-of-stroke flag of the IAM-OnDB
trajectories. Every sample has at least 2 * len(label) + 1 rows, so any label
fits a CTC alignment.

Split (writer-independent): the writers are split into training, validation
and test writers; a writer's samples are all in one part.
"""


@lru_cache(maxsize=4)
def _font_glyphs(font: str) -> dict:
    """``{char: (strokes, advance)}`` of a Hershey font, in letter-height units
    (strokes as read-only float arrays, y up, baseline at 0)."""
    try:
        from HersheyFonts import HersheyFonts
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    hf = HersheyFonts()
    hf.load_default_font(font)
    base = float(hf.render_options["base_line"])
    unit = base - float(hf.render_options["cap_line"])
    glyphs = {}
    for char, glyph in hf.all_glyphs.items():
        strokes = []
        for stroke in glyph.strokes:
            pts = np.asarray(stroke, dtype=np.float64).reshape(-1, 2)
            if len(pts) == 0:
                continue
            pts = np.column_stack([pts[:, 0] - glyph.left_offset, base - pts[:, 1]])
            pts /= unit
            pts.flags.writeable = False
            strokes.append(pts)
        glyphs[char] = (tuple(strokes), float(glyph.char_width) / unit)
    return glyphs


def _check_fonts_available() -> None:
    try:
        import HersheyFonts  # noqa: F401
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


def _check_vocabulary(vocabulary) -> tuple[str, ...]:
    if vocabulary is None:
        return HANDWRITING_VOCABULARY
    if isinstance(vocabulary, str):
        raise ValueError(
            f"vocabulary must be a list of words, got the string {vocabulary!r}."
        )
    words = tuple(vocabulary)
    allowed = {chr(c) for c in range(33, 127)}  # printable ASCII without space
    for word in words:
        if not isinstance(word, str) or not word or not set(word) <= allowed:
            raise ValueError(
                "vocabulary must hold non-empty words of printable ASCII "
                f"characters without spaces, got {word!r}."
            )
    if not words:
        raise ValueError(f"vocabulary must not be empty, got {vocabulary!r}.")
    return words


def _draw_writers(n_writers: int, rng: np.random.RandomState) -> dict:
    """Style parameters of ``n_writers`` writers (see ``DESCR``)."""
    return {
        "font": np.array([_FONTS[i] for i in rng.randint(0, len(_FONTS), n_writers)]),
        "slant": rng.normal(0.15, 0.15, n_writers),
        "width": rng.uniform(0.8, 1.25, n_writers),
        "size": rng.uniform(0.8, 1.25, n_writers),
        "spacing": rng.uniform(-0.02, 0.12, n_writers),
        "speed": rng.uniform(0.7, 1.4, n_writers),
        "jitter": rng.uniform(0.008, 0.025, n_writers),
    }


def _layout(text: str, glyphs: dict, spacing: float) -> list[np.ndarray]:
    """Strokes of ``text`` laid out left to right (letter-height units)."""
    strokes, cursor = [], 0.0
    for char in text:
        glyph_strokes, advance = glyphs.get(char, ((), 0.5))
        for stroke in glyph_strokes:
            strokes.append(stroke + np.array([cursor, 0.0]))
        cursor += advance + spacing
    return strokes


def _resample(
    stroke: np.ndarray, step: float, start: float, phases: np.ndarray, depth: float
) -> np.ndarray:
    """Resample a polyline at arc-length steps of varying size.

    The local step is ``step * exp(depth * profile(s))`` with ``profile`` a
    smooth function of the arc length ``s`` along the whole text (``start``
    is the arc length before this stroke); both ends of the stroke are kept.
    """
    seg = np.linalg.norm(np.diff(stroke, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    length = cum[-1]
    if length <= 0.0:
        return stroke[:1].copy()
    n = max(1, int(np.ceil(length / step)))
    s = start + (np.arange(n) + 0.5) * (length / n)
    profile = np.sin(phases[0] + 2.3 * s) + 0.5 * np.sin(phases[1] + 5.1 * s)
    widths = np.exp(depth * profile)
    # n + 1 samples (both ends), spaced in proportion to the local speed
    positions = np.concatenate([[0.0], np.cumsum(widths)]) * (length / widths.sum())
    x = np.interp(positions, cum, stroke[:, 0])
    y = np.interp(positions, cum, stroke[:, 1])
    return np.column_stack([x, y])


def _render(
    text: str, writer: dict, density: float, rng: np.random.RandomState
) -> np.ndarray:
    """One ``(T, 3)`` trajectory ``(dx, dy, pen_up)`` of ``text``."""
    glyphs = _font_glyphs(str(writer["font"]))
    slant = writer["slant"] + rng.normal(0.0, 0.05)
    size = writer["size"] * np.exp(rng.normal(0.0, 0.05))
    angle = rng.normal(0.0, 0.03)
    width = writer["width"] * np.exp(rng.normal(0.0, 0.03))
    step = writer["speed"] * np.exp(rng.normal(0.0, 0.1)) / density
    phases = rng.uniform(0.0, 2 * np.pi, 2)
    depth = rng.uniform(0.1, 0.4)
    strokes = _layout(text, glyphs, writer["spacing"])
    shear = np.array([[width, np.tan(slant)], [0.0, 1.0]])
    c, s = np.cos(angle), np.sin(angle)
    transform = size * np.array([[c, -s], [s, c]]) @ shear
    label_min = 2 * len(text) + 1
    while True:
        points, ends, start = [], [], 0.0
        for stroke in strokes:
            pts = _resample(stroke, step, start, phases, depth)
            start += float(np.sum(np.linalg.norm(np.diff(stroke, axis=0), axis=1)))
            points.append(pts)
            ends.append(len(pts))
        if sum(ends) >= label_min:
            break
        step /= 2.0  # too few samples for a CTC alignment: sample more densely
    xy = np.concatenate(points) @ transform.T
    xy += rng.normal(0.0, writer["jitter"] * size, xy.shape)
    pen_up = np.zeros(len(xy))
    pen_up[np.cumsum(ends) - 1] = 1.0
    deltas = np.diff(xy, axis=0, prepend=np.zeros((1, 2)))
    return np.column_stack([deltas, pen_up])


def _check_fonts_and_generate(
    n_samples, n_writers, vocabulary, max_words, point_density, rng
):
    """Samples ``i`` written by writer ``i % n_writers``; returns
    ``(X, labels, writer, styles)``."""
    _check_fonts_available()
    words = _check_vocabulary(vocabulary)
    styles = _draw_writers(n_writers, rng)
    X, labels = [], []
    writer = np.arange(n_samples, dtype=np.int64) % n_writers
    for w in writer:
        n_words = rng.randint(1, max_words + 1)
        text = " ".join(words[i] for i in rng.randint(0, len(words), n_words))
        style = {key: values[w] for key, values in styles.items()}
        X.append(_render(text, style, point_density, rng))
        labels.append(text)
    return X, np.array(labels, dtype=str), writer, styles


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_writers": [Interval(Integral, 1, None, closed="left")],
        "vocabulary": ["array-like", None],
        "max_words": [Interval(Integral, 1, None, closed="left")],
        "point_density": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "return_writers": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_online_handwriting(
    n_samples=200,
    *,
    n_writers=10,
    vocabulary=None,
    max_words=1,
    point_density=10.0,
    random_state=None,
    return_writers=False,
):
    """Generate online handwriting: pen trajectories and their transcriptions.

    A stand-in for IAM-OnDB (Liwicki & Bunke 2005; Carta et al. 2020a §5):
    words from a fixed vocabulary drawn with the single-stroke Hershey fonts
    by ``n_writers`` synthetic writers, each with its own font, slant,
    width, size, spacing, speed and jitter, perturbed per sample (slant,
    size, baseline angle, speed profile along the pen path, jitter). See
    :func:`load_online_handwriting` for a writer-independent split and the
    full description of the generation and of the fonts' provenance.

    Needs the optional ``Hershey-Fonts`` package (``pip install
    'sklmn[handwriting]'``).

    Parameters
    ----------
    n_samples : int, default=200
        Number of trajectories. Sample ``i`` is written by writer
        ``i % n_writers``.
    n_writers : int, default=10
        Number of writers (styles).
    vocabulary : list of str or None, default=None
        Words to write (printable ASCII, no spaces); None uses
        :data:`HANDWRITING_VOCABULARY` (60 lowercase English words).
    max_words : int, default=1
        Every sample is a line of 1 to ``max_words`` words (uniformly),
        separated by single spaces; the space is part of the label.
    point_density : float, default=10.0
        Pen samples per unit of pen path (the unit is the letter height) at
        a writer's speed 1; writers range from 0.7 to 1.4 times slower steps.
    random_state : int, RandomState instance or None, default=None
        Seed of the writers' styles and of every sample.
    return_writers : bool, default=False
        Also return the writer of every sample.

    Returns
    -------
    X : list of ndarray of shape (T_i, 3)
        Float64 trajectories, one row per pen sample: ``(dx, dy, pen_up)``,
        the displacement from the previous sample (from the baseline origin
        for the first one) and 1 at the last sample of every stroke (the pen
        is lifted after it). ``T_i >= 2 * len(y[i]) + 1``.
    y : ndarray of shape (n_samples,), dtype str
        The written text of every sample.
    writer : ndarray of shape (n_samples,), dtype int64
        The writer of every sample (only with ``return_writers=True``).

    Raises
    ------
    ImportError
        When the ``Hershey-Fonts`` package is not installed.

    See Also
    --------
    load_online_handwriting : Training, validation and test writers.

    Examples
    --------
    >>> from sklmn.datasets import make_online_handwriting
    >>> X, y = make_online_handwriting(3, n_writers=2, random_state=0)
    >>> len(X), X[0].shape[1], y.dtype.kind
    (3, 3, 'U')
    >>> all(len(x) >= 2 * len(label) + 1 for x, label in zip(X, y))
    True
    >>> float(X[0][-1, 2])  # the pen is lifted at the end
    1.0
    """
    rng = check_random_state(random_state)
    X, y, writer, _ = _check_fonts_and_generate(
        n_samples, n_writers, vocabulary, max_words, float(point_density), rng
    )
    return (X, y, writer) if return_writers else (X, y)


@validate_params(
    {
        "n_writers": [Interval(Integral, 3, None, closed="left")],
        "samples_per_writer": [Interval(Integral, 1, None, closed="left")],
        "n_valid_writers": [Interval(Integral, 1, None, closed="left")],
        "n_test_writers": [Interval(Integral, 1, None, closed="left")],
        "vocabulary": ["array-like", None],
        "max_words": [Interval(Integral, 1, None, closed="left")],
        "point_density": [Interval(Real, 0, None, closed="neither")],
        "split": [StrOptions({"train", "valid", "test"}), None],
        "random_state": ["random_state"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_online_handwriting(
    *,
    n_writers=12,
    samples_per_writer=40,
    n_valid_writers=2,
    n_test_writers=2,
    vocabulary=None,
    max_words=1,
    point_density=10.0,
    split=None,
    random_state=0,
    return_X_y=False,
):
    """Generated online handwriting with a writer-independent split.

    The offline stand-in for IAM-OnDB (Liwicki & Bunke 2005) of the online
    handwriting experiment of Carta et al. 2020a §5: pen trajectories
    ``(dx, dy, pen_up)`` labelled with the written word (or line), written
    by ``n_writers`` synthetic writers; the last ``n_valid_writers +
    n_test_writers`` writers are held out, so validation and test measure
    recognition of unseen writers. Generated on the fly (seeded), from the
    Hershey fonts of the optional ``Hershey-Fonts`` package (``pip install
    'sklmn[handwriting]'``); see ``DESCR`` for the generation, the layout
    and the fonts' provenance and licence.

    Parameters
    ----------
    n_writers : int, default=12
        Number of writers (at least 3).
    samples_per_writer : int, default=40
        Samples written by every writer.
    n_valid_writers : int, default=2
        Writers of the validation part.
    n_test_writers : int, default=2
        Writers of the test part (the last ones).
    vocabulary : list of str or None, default=None
        Words to write; None uses :data:`HANDWRITING_VOCABULARY`.
    max_words : int, default=1
        Lines of 1 to ``max_words`` words separated by spaces.
    point_density : float, default=10.0
        Pen samples per unit of pen path (letter height) at speed 1.
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns every sample. The Bunch always holds the three parts.
    random_state : int, RandomState instance or None, default=0
        Seed of the writers and of every sample.
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data``: list of float64 arrays of shape ``(T_i, 3)``; ``target``:
        array of label strings; ``X_train``, ``y_train``, ``X_valid``,
        ``y_valid``, ``X_test``, ``y_test``: the same per part; ``writer``
        (writer of every sample), ``writer_train``, ``writer_valid``,
        ``writer_test``; ``writer_styles`` (dict of per-writer arrays:
        ``font``, ``slant``, ``width``, ``size``, ``spacing``, ``speed``,
        ``jitter``); ``vocabulary``; ``alphabet`` (sorted characters of the
        labels); ``feature_names`` (``['dx', 'dy', 'pen_up']``); ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Raises
    ------
    ImportError
        When the ``Hershey-Fonts`` package is not installed.

    See Also
    --------
    make_online_handwriting : The generator.

    Examples
    --------
    >>> from sklmn.datasets import load_online_handwriting
    >>> data = load_online_handwriting(n_writers=4, samples_per_writer=3,
    ...                                n_valid_writers=1, n_test_writers=1)
    >>> len(data.X_train), len(data.X_valid), len(data.X_test)
    (6, 3, 3)
    >>> sorted(set(data.writer_test.tolist()))
    [3]
    >>> data.feature_names
    ['dx', 'dy', 'pen_up']
    """
    if n_valid_writers + n_test_writers >= n_writers:
        raise ValueError(
            "n_valid_writers + n_test_writers must leave at least one training "
            f"writer, got n_valid_writers={n_valid_writers}, "
            f"n_test_writers={n_test_writers} and n_writers={n_writers}."
        )
    rng = check_random_state(random_state)
    words = _check_vocabulary(vocabulary)
    X, y, writer, styles = _check_fonts_and_generate(
        n_writers * samples_per_writer,
        n_writers,
        words,
        max_words,
        float(point_density),
        rng,
    )
    n_train = n_writers - n_valid_writers - n_test_writers
    part = np.where(
        writer < n_train, 0, np.where(writer < n_train + n_valid_writers, 1, 2)
    )
    parts = {}
    for code, name in enumerate(("train", "valid", "test")):
        idx = np.flatnonzero(part == code)
        parts[f"X_{name}"] = [X[i] for i in idx]
        parts[f"y_{name}"] = y[idx]
        parts[f"writer_{name}"] = writer[idx]
    return _split_result(
        X,
        y,
        parts,
        split,
        return_X_y,
        writer=writer,
        writer_styles=styles,
        vocabulary=list(words),
        alphabet=sorted(set("".join(y.tolist()))),
        feature_names=["dx", "dy", "pen_up"],
        DESCR=_DESCR,
    )
