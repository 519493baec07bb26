import zlib
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sklmn.datasets import _chorales, get_data_home, load_bach_chorales


@pytest.fixture(scope="module")
def bundled():
    return load_bach_chorales()


def test_bundled_sizes_and_layout(bundled):
    assert len(bundled.rolls) == len(bundled.names) == 348
    assert len(set(bundled.names)) == 348
    assert (len(bundled.X_train), len(bundled.X_valid), len(bundled.X_test)) == (
        214,
        64,
        70,
    )
    for part in ("train", "valid", "test"):
        for X, y in zip(bundled[f"X_{part}"], bundled[f"y_{part}"], strict=True):
            assert X.shape == y.shape and X.shape[1] == 88
            assert X.dtype == y.dtype == np.float64
            # next-step prediction: y is X shifted by one frame
            np.testing.assert_array_equal(X[1:], y[:-1])
    lengths = [len(r) for r in bundled.rolls]
    assert min(lengths) == 24 and max(lengths) == 193


def test_bundled_rolls_look_like_four_part_chorales(bundled):
    frames = np.concatenate(bundled.rolls)
    assert set(np.unique(frames).tolist()) == {0, 1}
    # keys are MIDI 21 + column: SATB ranges lie between C2 (36) and D6 (86)
    used = np.flatnonzero(frames.any(axis=0)) + 21
    assert used.min() >= 36 and used.max() <= 90
    polyphony = frames.sum(axis=1)
    assert np.mean(polyphony == 4) > 0.8
    assert polyphony.max() <= 8


def test_split_is_a_fixed_hash_of_the_name(bundled):
    table = ["train", "train", "train", "valid", "test"]
    expected = [table[zlib.crc32(name.encode()) % 5] for name in bundled.names]
    assert bundled.split_labels.tolist() == expected
    index = {name: i for i, name in enumerate(bundled.names)}
    for part in ("train", "valid", "test"):
        rows = [i for i, label in enumerate(expected) if label == part]
        assert [index[bundled.names[i]] for i in rows] == rows
        for i, X in zip(rows, bundled[f"X_{part}"], strict=True):
            np.testing.assert_array_equal(X, bundled.rolls[i][:-1])


@pytest.mark.parametrize("split", ["train", "valid", "test", None])
def test_split_selection_and_return_X_y(bundled, split):
    X, y = load_bach_chorales(split=split, return_X_y=True)
    if split is None:
        assert len(X) == 348
    else:
        assert len(X) == len(bundled[f"X_{split}"])
        np.testing.assert_array_equal(X[-1], bundled[f"X_{split}"][-1])
        np.testing.assert_array_equal(y[0], bundled[f"y_{split}"][0])


def test_max_chorales_keeps_order_and_labels(bundled):
    small = load_bach_chorales(max_chorales=10)
    assert small.names == bundled.names[:10]
    assert small.split_labels.tolist() == bundled.split_labels[:10].tolist()
    assert len(small.X_train) + len(small.X_valid) + len(small.X_test) == 10


def test_returned_arrays_are_fresh():
    X, _ = load_bach_chorales(split="train", max_chorales=5, return_X_y=True)
    X[0][:] = 5.0
    X2, _ = load_bach_chorales(split="train", max_chorales=5, return_X_y=True)
    assert X2[0].max() == 1.0


def _fake_score(notes):
    """Duck-typed music21 score: (offset, quarter_length, [midi, ...]) tuples."""
    elements = [
        SimpleNamespace(
            offset=offset,
            quarterLength=length,
            pitches=[SimpleNamespace(midi=m) for m in midis],
        )
        for offset, length, midis in notes
    ]
    flat = SimpleNamespace(notes=elements)
    return SimpleNamespace(flatten=lambda: flat)


def _reference_roll(notes, frames_per_quarter):
    """Per-frame, per-note loop: key on when offset <= t_k < offset + length."""
    stop = max(Fraction(o) + Fraction(d) for o, d, _ in notes)
    n_frames = 0
    while Fraction(n_frames, frames_per_quarter) < stop:
        n_frames += 1
    roll = np.zeros((n_frames, 88), dtype=np.uint8)
    for k in range(n_frames):
        t = Fraction(k, frames_per_quarter)
        for offset, length, midis in notes:
            if Fraction(offset) <= t < Fraction(offset) + Fraction(length):
                for m in midis:
                    roll[k, m - 21] = 1
    return roll


NOTES = [
    (0.0, 1.5, [60, 64]),  # dotted quarter chord
    (1.5, 0.5, [62]),  # off-beat eighth: lost at one frame per quarter
    (2.0, 2.0, [21]),  # A0, lowest key
    (Fraction(4, 3), Fraction(1, 3), [108]),  # triplet eighth, C8
    (3.0, 0.0, [70]),  # grace note: never sounds
    (4.0, 0.25, [48]),  # last note ends at 4.25
]


@pytest.mark.parametrize("frames_per_quarter", [1, 2, 3, 4, 12])
def test_score_to_roll_matches_reference(frames_per_quarter):
    roll = _chorales._score_to_roll(_fake_score(NOTES), frames_per_quarter)
    expected = _reference_roll(NOTES, frames_per_quarter)
    np.testing.assert_array_equal(roll, expected)


def test_score_to_roll_convention_by_hand():
    roll = _chorales._score_to_roll(_fake_score(NOTES), 1)
    assert roll.shape == (5, 88)
    assert np.flatnonzero(roll[0]).tolist() == [60 - 21, 64 - 21]
    # the chord holds until 1.5; the eighth 62 (1.5-2) and the triplet 108
    # (4/3-5/3) sound between sampling times and are dropped
    assert np.flatnonzero(roll[1]).tolist() == [60 - 21, 64 - 21]
    assert np.flatnonzero(roll[2]).tolist() == [0]
    assert np.flatnonzero(roll[3]).tolist() == [0]
    assert np.flatnonzero(roll[4]).tolist() == [48 - 21]


def test_score_to_roll_rejects_out_of_range_pitch():
    with pytest.raises(ValueError, match="pitch MIDI 109 is outside"):
        _chorales._score_to_roll(_fake_score([(0.0, 1.0, [109])]), 1)


def test_get_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKLMN_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert (tmp_path / "env").is_dir()
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("SKLMN_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / ".cache" / "sklmn"
    with pytest.raises(TypeError, match="data_home must be a str.*got int: 3"):
        get_data_home(3)


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"split": "validation"}, ValueError, "got 'validation'"),
        ({"frames_per_quarter": 0}, ValueError, "positive int, got 0"),
        ({"frames_per_quarter": 1.0}, ValueError, "positive int, got 1.0"),
        ({"max_chorales": 0}, ValueError, "max_chorales must be .* got 0"),
        ({"max_chorales": True}, ValueError, "max_chorales must be .* got True"),
        ({"source": "web"}, ValueError, "got 'web'"),
        (
            {"source": "bundled", "frames_per_quarter": 2},
            ValueError,
            "frames_per_quarter=2: use source='music21'",
        ),
        ({"data_home": 1}, TypeError, "data_home must be .* got int: 1"),
        ({"return_X_y": "yes"}, TypeError, "return_X_y must be a bool"),
    ],
)
def test_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        load_bach_chorales(**kwargs)


def test_music21_conversion_matches_bundled_and_caches(tmp_path, monkeypatch):
    pytest.importorskip("music21")
    bundled = load_bach_chorales(max_chorales=3)
    fresh = load_bach_chorales(max_chorales=3, source="music21", data_home=tmp_path)
    assert fresh.names == bundled.names
    for a, b in zip(fresh.rolls, bundled.rolls, strict=True):
        np.testing.assert_array_equal(a, b)
    assert (tmp_path / "bach_chorales_fpq1_n3.npz").is_file()

    def fail(*args):
        raise AssertionError("the cache was not used")

    monkeypatch.setattr(_chorales, "_convert_with_music21", fail)
    cached = load_bach_chorales(max_chorales=3, source="music21", data_home=tmp_path)
    for a, b in zip(cached.rolls, bundled.rolls, strict=True):
        np.testing.assert_array_equal(a, b)


def test_music21_finer_frames_contain_the_quarter_frames(tmp_path):
    pytest.importorskip("music21")
    quarter = load_bach_chorales(max_chorales=2)
    eighth = load_bach_chorales(
        max_chorales=2, frames_per_quarter=2, data_home=tmp_path
    )
    assert eighth.frames_per_quarter == 2
    for fine, coarse in zip(eighth.rolls, quarter.rolls, strict=True):
        # sampling times k of the quarter grid are the even times 2k of the
        # eighth grid
        assert len(fine) in (2 * len(coarse) - 1, 2 * len(coarse))
        np.testing.assert_array_equal(fine[::2], coarse)


def test_bundled_rolls_need_no_music21(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "music21", None)  # import music21 fails
    data = load_bach_chorales(max_chorales=4, data_home=tmp_path)
    assert len(data.rolls) == 4
    with pytest.raises(
        ImportError, match=r"needs music21: pip install 'sklmn\[music\]'"
    ):
        load_bach_chorales(frames_per_quarter=2, max_chorales=1, data_home=tmp_path)


def _fake_conversion(frames_per_quarter, n):
    rolls = [np.eye(N, 88, dtype=np.uint8) for N in range(3, 3 + n)]
    return rolls, [f"bwv{i}" for i in range(n)]


def test_interrupted_cache_write_leaves_no_partial_cache(tmp_path, monkeypatch):
    """A conversion whose cache write fails (disk full, Ctrl-C) leaves no
    partial file: the next call converts again (a truncated cache was read
    and failed with numpy's zip error at every later call)."""
    monkeypatch.setattr(_chorales, "_convert_with_music21", _fake_conversion)
    real = np.savez_compressed

    def broken(file, **arrays):
        partial = b"PK\x03\x04 a partial zip"
        if hasattr(file, "write"):
            file.write(partial)
        else:
            Path(file).write_bytes(partial)
        raise OSError("No space left on device")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="No space left"):
        load_bach_chorales(frames_per_quarter=2, max_chorales=2, data_home=tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(np, "savez_compressed", real)
    options = dict(frames_per_quarter=2, max_chorales=2, data_home=tmp_path)
    data = load_bach_chorales(**options)
    assert [len(r) for r in data.rolls] == [3, 4]
    assert [p.name for p in tmp_path.iterdir()] == ["bach_chorales_fpq2_n2.npz"]

    def fail(*args):
        raise AssertionError("the cache was not used")

    monkeypatch.setattr(_chorales, "_convert_with_music21", fail)
    cached = load_bach_chorales(**options)
    for a, b in zip(cached.rolls, data.rolls, strict=True):
        np.testing.assert_array_equal(a, b)


def test_unreadable_cache_names_the_file_to_delete(tmp_path):
    (tmp_path / "bach_chorales_fpq2_n2.npz").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"bach_chorales_fpq2_n2.npz.*delete it"):
        load_bach_chorales(frames_per_quarter=2, max_chorales=2, data_home=tmp_path)
