"""load_polyphonic_music: the pickles of the four music sets, and the
restricted unpickler that refuses anything but plain data."""

import io
import os
import pickle

import numpy as np
import pytest

from sklmn.datasets import load_polyphonic_music
from sklmn.datasets._polyphonic import _DataOnlyUnpickler, safe_load_pickle

SETS = {
    "train": [[(60, 64, 67), (62,), ()], [(21,), (108,), (21, 108)]],
    "valid": [[(48, 55), (50,)]],
    "test": [[(72,), (74,), (76,), (77,)]],
}


def _py2_pickle() -> bytes:
    """The bytes Python 2's cPickle writes (protocol 2) for a tiny set: byte
    strings (SHORT_BINSTRING) as keys, tuples of small ints as time steps."""
    out = [b"\x80\x02}q\x00("]  # PROTO 2, EMPTY_DICT, BINPUT 0, MARK
    for key, pieces in (("train", [[(60, 64), (62,)]]), ("valid", [[(48,), (50,)]]),
                        ("test", [[(72,), (74,)]])):  # fmt: skip
        out.append(b"U" + bytes([len(key)]) + key.encode())  # SHORT_BINSTRING
        out.append(b"]")  # the list of pieces
        for piece in pieces:
            out.append(b"](")  # a piece, MARK
            for step in piece:
                out.append(b"(" + b"".join(b"K" + bytes([n]) for n in step) + b"t")
            out.append(b"ea")  # APPENDS the steps, APPEND the piece
    out.append(b"u.")  # SETITEMS, STOP
    return b"".join(out)


def _write(tmp_path, data: bytes, name="set.pickle"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_piano_roll_layout_and_splits(tmp_path, protocol):
    path = _write(tmp_path, pickle.dumps(SETS, protocol=protocol))
    data = load_polyphonic_music(path)
    assert [len(data[f"X_{p}"]) for p in ("train", "valid", "test")] == [2, 1, 1]
    assert data.split_labels.tolist() == ["train", "train", "valid", "test"]
    first = data.rolls[0]
    assert first.shape == (3, 88) and first.dtype == np.uint8
    assert (np.flatnonzero(first[0]) + 21).tolist() == [60, 64, 67]
    assert (np.flatnonzero(first[1]) + 21).tolist() == [62]
    assert first[2].sum() == 0  # a silent step
    assert data.rolls[1][2, [0, 87]].tolist() == [1, 1]  # A0 and C8
    for X, y, roll in zip(data.data, data.target, data.rolls, strict=True):
        assert X.dtype == np.float64 and X.shape == (len(roll) - 1, 88)
        np.testing.assert_array_equal(X, roll[:-1])
        np.testing.assert_array_equal(y, roll[1:])
    X, y = load_polyphonic_music(path, split="test", return_X_y=True)
    assert len(X) == 1 and X[0].shape == (3, 88)
    np.testing.assert_array_equal(X[0][1:], y[0][:-1])


def test_python2_pickle_is_read_with_latin1_strings(tmp_path):
    data = load_polyphonic_music(_write(tmp_path, _py2_pickle()))
    assert (np.flatnonzero(data.X_train[0][0]) + 21).tolist() == [60, 64]
    assert (np.flatnonzero(data.y_test[0][0]) + 21).tolist() == [74]


def test_os_system_pickle_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    # GLOBAL os.system, then REDUCE: what a crafted pickle uses to run a command
    evil = f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()
    path = _write(tmp_path, evil)
    with pytest.raises(ValueError, match="opcode GLOBAL"):
        load_polyphonic_music(path)
    assert not marker.exists()


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


class _Plain:
    def __init__(self):
        self.notes = [60]


@pytest.mark.parametrize("protocol", [0, 1, 2, 3, 4, 5])
def test_reduce_and_copyreg_pickles_are_refused(tmp_path, protocol):
    for obj in (_Evil(), _Plain(), {"train": [[(60,)]], "x": {1, 2}}):
        data = pickle.dumps(obj, protocol=protocol)
        with pytest.raises(ValueError, match="opcode"):
            load_polyphonic_music(_write(tmp_path, data))


def test_extension_registry_opcode_is_refused(tmp_path):
    # EXT1 code 1: a global looked up in copyreg's extension registry
    with pytest.raises(ValueError, match="opcode EXT1"):
        load_polyphonic_music(_write(tmp_path, b"\x80\x02\x82\x01."))


def test_the_unpickler_itself_resolves_no_global():
    evil = b"cos\nsystem\n(S'true'\ntR."
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        _DataOnlyUnpickler(io.BytesIO(evil), encoding="latin1").load()
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        _DataOnlyUnpickler(io.BytesIO(b"P1\n."), encoding="latin1").load()


def test_safe_load_pickle_keeps_plain_data():
    value = {"a": [1, 2.5, "x", b"y", None, True, (1, (2,))]}
    for protocol in (0, 4):  # bytes need protocol 3+ (2 pickles them by a call)
        value["a"][3] = b"y" if protocol else "y"
        assert safe_load_pickle(pickle.dumps(value, protocol=protocol)) == value


@pytest.mark.parametrize(
    "content, match",
    [
        (b"not a pickle at all", "not a valid pickle"),
        (pickle.dumps([1, 2]), "holds a list, not a dict"),
        (pickle.dumps({"train": [], "valid": []}), r"missing \['test'\]"),
        (pickle.dumps({"train": [[(20,), (60,)]], "valid": [], "test": []}),
         "outside the 88 piano keys"),
        (pickle.dumps({"train": [[(109,), (60,)]], "valid": [], "test": []}),
         "MIDI note 109"),
        (pickle.dumps({"train": [[("C4",), (60,)]], "valid": [], "test": []}),
         "not a MIDI note number"),
        (pickle.dumps({"train": [[(60.0, float("nan")), (60,)]], "valid": [],
                       "test": []}),
         r"'train' piece 0, step 0 holds nan, not a MIDI note number"),
        (pickle.dumps({"train": [[(60,), (float("inf"),)]], "valid": [],
                       "test": []}),
         r"'train' piece 0, step 1 holds inf, not a MIDI note number"),
        (pickle.dumps({"train": [[(60,)]], "valid": [], "test": []}),
         "at least 2"),
        (pickle.dumps({"train": [[60, 61]], "valid": [], "test": []}),
         "list or tuple of MIDI note numbers"),
        (pickle.dumps({"train": 3, "valid": [], "test": []}), "list of pieces"),
    ],
)  # fmt: skip
def test_malformed_pickles_are_named(tmp_path, content, match):
    with pytest.raises(ValueError, match=match):
        load_polyphonic_music(_write(tmp_path, content))


def test_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="'train', 'valid' and 'test'"):
        load_polyphonic_music(tmp_path / "missing.pickle")
    path = _write(tmp_path, pickle.dumps(SETS))
    with pytest.raises(ValueError, match="split must be"):
        load_polyphonic_music(path, split="validation")
    with pytest.raises(TypeError, match="path must be a str"):
        load_polyphonic_music(3)
    with pytest.raises(TypeError, match="return_X_y must be a bool"):
        load_polyphonic_music(path, return_X_y=1)
