"""Generated online handwriting (the offline stand-in for IAM-OnDB)."""

import sys

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklmn.datasets import load_online_handwriting, make_online_handwriting
from sklmn.datasets._handwriting import HANDWRITING_VOCABULARY

pytest.importorskip("HersheyFonts")


def _small(**kwargs):
    params = dict(
        n_writers=5, samples_per_writer=4, n_valid_writers=1, n_test_writers=1
    )
    params.update(kwargs)
    return load_online_handwriting(**params)


def test_shapes_layout_and_labels():
    X, y, writer = make_online_handwriting(
        30, n_writers=4, max_words=2, random_state=0, return_writers=True
    )
    assert len(X) == len(y) == len(writer) == 30
    assert writer.tolist() == [i % 4 for i in range(30)]
    words = set(HANDWRITING_VOCABULARY)
    for x, label in zip(X, y, strict=True):
        assert x.ndim == 2 and x.shape[1] == 3 and x.dtype == np.float64
        assert np.isfinite(x).all()
        assert set(np.unique(x[:, 2])) <= {0.0, 1.0}
        assert isinstance(label, str) and 1 <= len(label.split(" ")) <= 2
        assert set(label.split(" ")) <= words
        # long enough for any CTC alignment of the label
        assert len(x) >= 2 * len(label) + 1
        assert x[-1, 2] == 1.0  # the pen is lifted at the end


def test_pen_up_markers_end_the_strokes():
    X, y = make_online_handwriting(10, n_writers=2, random_state=1)
    for x, label in zip(X, y, strict=True):
        n_strokes = int(x[:, 2].sum())
        # every letter of the vocabulary has at least one stroke
        assert n_strokes >= len(label)
        # the pen is lifted at the last sample, and strokes are not empty
        ends = np.flatnonzero(x[:, 2])
        assert ends[-1] == len(x) - 1
        assert np.all(np.diff(np.concatenate([[-1], ends])) >= 1)
    # a letter drawn as one stroke by the font: one pen-up, at the end
    single = make_online_handwriting(3, n_writers=1, vocabulary=["o"], random_state=0)[
        0
    ]
    assert all(x[:, 2].sum() == 1 for x in single)


def test_determinism_and_seed_dependence():
    a = make_online_handwriting(6, n_writers=3, random_state=7)
    b = make_online_handwriting(6, n_writers=3, random_state=7)
    c = make_online_handwriting(6, n_writers=3, random_state=8)
    assert a[1].tolist() == b[1].tolist()
    for xa, xb in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(xa, xb)
    assert a[1].tolist() != c[1].tolist() or any(
        xa.shape != xc.shape or not np.allclose(xa, xc)
        for xa, xc in zip(a[0], c[0], strict=True)
    )


def test_samples_vary_within_a_writer_and_word():
    X, y = make_online_handwriting(6, n_writers=1, vocabulary=["line"], random_state=0)
    assert set(y.tolist()) == {"line"}
    lengths = {len(x) for x in X}
    assert len(lengths) > 1  # speed variation resamples the pen path
    ends = [np.cumsum(x[:, :2], axis=0)[-1] for x in X]
    assert np.ptp(np.array(ends)[:, 0]) > 0  # slant, size, jitter


def test_writer_independent_split():
    data = _small()
    train, valid, test = (
        set(data.writer_train.tolist()),
        set(data.writer_valid.tolist()),
        set(data.writer_test.tolist()),
    )
    assert train == {0, 1, 2} and valid == {3} and test == {4}
    assert len(data.X_train) == 12 and len(data.X_valid) == len(data.X_test) == 4
    assert len(data.data) == len(data.target) == len(data.writer) == 20
    assert data.feature_names == ["dx", "dy", "pen_up"]
    assert set(data.alphabet) <= set("abcdefghijklmnopqrstuvwxyz")
    assert {len(v) for v in data.writer_styles.values()} == {5}
    assert "Hershey" in data.DESCR and "public domain" in data.DESCR
    X, y = _small(split="test", return_X_y=True)
    assert y.tolist() == data.y_test.tolist()
    for a, b in zip(X, data.X_test, strict=True):
        np.testing.assert_array_equal(a, b)


def test_user_vocabulary_is_not_modified():
    vocabulary = ["ab", "xyz"]
    X, y = make_online_handwriting(4, vocabulary=vocabulary, random_state=0)
    assert vocabulary == ["ab", "xyz"]
    assert set(y.tolist()) <= {"ab", "xyz"}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "'n_samples' parameter.*Got 0"),
        ({"point_density": -1.0}, "'point_density' parameter.*Got -1.0"),
        ({"max_words": 1.5}, "'max_words' parameter.*Got 1.5"),
        ({"vocabulary": "word"}, "'vocabulary' parameter.*Got 'word'"),
    ],
)
def test_make_parameter_validation(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        make_online_handwriting(**kwargs)


def test_load_parameter_validation():
    with pytest.raises(ValueError, match="at least one training writer.*n_writers=3"):
        load_online_handwriting(n_writers=3, n_valid_writers=1, n_test_writers=2)
    with pytest.raises(InvalidParameterError, match="'split' parameter.*'dev'"):
        load_online_handwriting(split="dev")
    with pytest.raises(ValueError, match="without spaces, got 'two words'"):
        make_online_handwriting(2, vocabulary=["two words"])
    with pytest.raises(ValueError, match="must not be empty"):
        make_online_handwriting(2, vocabulary=[])


def test_missing_font_package_names_the_extra(monkeypatch):
    from sklmn.datasets import _handwriting

    _handwriting._font_glyphs.cache_clear()
    monkeypatch.setitem(sys.modules, "HersheyFonts", None)  # import fails
    try:
        with pytest.raises(ImportError, match=r"sklmn\[handwriting\]"):
            make_online_handwriting(2, random_state=0)
    finally:
        _handwriting._font_glyphs.cache_clear()
