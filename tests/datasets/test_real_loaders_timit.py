"""load_timit on a tiny tree in the LDC layout, and the SPHERE reader."""

import wave

import numpy as np
import pytest

from sklmn.datasets import load_timit
from sklmn.datasets._sphere import read_audio, read_sphere
from sklmn.datasets._timit import _PHONES_39, TIMIT_PHONES


def sphere(samples, rate=16000, byte_format="01", coding="pcm", extra=()):
    lines = [
        "NIST_1A",
        "   1024",
        "database_id -s5 TIMIT",
        f"sample_count -i {len(samples)}",
        f"sample_rate -i {rate}",
        "channel_count -i 1",
        "sample_n_bytes -i 2",
        f"sample_byte_format -s2 {byte_format}",
        f"sample_coding -s{len(coding)} {coding}",
        *extra,
        "end_head",
    ]
    dtype = "<i2" if byte_format == "01" else ">i2"
    header = "\n".join(lines).encode().ljust(1024)
    return header + np.asarray(samples).astype(dtype).tobytes()


def test_sphere_reader_both_byte_orders():
    samples = np.array([0, 1, -1, 32767, -32768, 1234])
    for order in ("01", "10"):
        decoded, rate = read_sphere(sphere(samples, byte_format=order))
        np.testing.assert_array_equal(decoded, samples)
        assert decoded.dtype == np.int16 and rate == 16000


@pytest.mark.parametrize(
    "data, match",
    [
        (sphere([1, 2], coding="pcm,embedded-shorten-v2.00"), "sph2pipe"),
        (sphere([1, 2], coding="ulaw"), "sample_coding 'ulaw'"),
        (sphere([1, 2]).replace(b"\nend_head", b""), "no end_head"),
        (sphere([1, 2]).replace(b"sample_n_bytes -i 2", b"sample_n_bytes -i 1"),
         "1-byte samples"),
        (sphere([1, 2])[:-1], "declares 2 samples but holds 1"),
        (b"RIFF....", "not a NIST SPHERE"),
        (sphere([1, 2], extra=["weird line"]), "malformed SPHERE header line"),
    ],
)  # fmt: skip
def test_sphere_reader_refuses(data, match):
    with pytest.raises(ValueError, match=match):
        read_sphere(data)


def test_riff_files_are_read(tmp_path):
    path = tmp_path / "SX1.WAV"
    with wave.open(str(path), "wb") as stream:
        stream.setnchannels(1)
        stream.setsampwidth(2)
        stream.setframerate(16000)
        stream.writeframes(np.array([5, -7, 9], "<i2").tobytes())
    samples, rate = read_audio(path)
    assert samples.tolist() == [5, -7, 9] and rate == 16000
    path.write_bytes(b"junk")
    with pytest.raises(ValueError, match="neither a NIST SPHERE"):
        read_audio(path)


def _utterance(folder, sentence, samples, phones, words=(), riff=False):
    folder.mkdir(parents=True, exist_ok=True)
    if riff:
        with wave.open(str(folder / f"{sentence}.WAV"), "wb") as stream:
            stream.setnchannels(1)
            stream.setsampwidth(2)
            stream.setframerate(16000)
            stream.writeframes(np.asarray(samples).astype("<i2").tobytes())
    else:
        (folder / f"{sentence}.WAV").write_bytes(sphere(samples))
    (folder / f"{sentence}.PHN").write_text(
        "".join(f"{a} {b} {p}\n" for a, b, p in phones)
    )
    (folder / f"{sentence}.WRD").write_text(
        "".join(f"{a} {b} {w}\n" for a, b, w in words)
    )


def _tone(n, freq=1000.0, seed=0):
    t = np.arange(n) / 16000
    noise = np.random.RandomState(seed).normal(0, 50, n)
    return (3000 * np.sin(2 * np.pi * freq * t) + noise).astype(np.int16)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "timit"
    phones = [(0, 3000, "h#"), (3000, 5000, "ix"), (5000, 5200, "q"),
              (5200, 8000, "zh")]  # fmt: skip
    speakers = [
        ("TRAIN", "DR1", "FCJF0"), ("TRAIN", "DR2", "MABC0"),
        ("TEST", "DR1", "FELC0"),  # core test
        ("TEST", "DR1", "FAKS0"),  # development set
        ("TEST", "DR3", "MZZZ0"),  # other test speaker: in no part
    ]  # fmt: skip
    for i, (part, dialect, speaker) in enumerate(speakers):
        folder = root / part / dialect / speaker
        _utterance(folder, "SX1", _tone(8000, seed=i), phones, riff=i == 1)
        _utterance(folder, "SA1", _tone(8000, seed=i), phones)  # left out
    return root


def test_framewise_frames_and_phone_labels(tree):
    data = load_timit(tree)
    assert [len(data[f"X_{p}"]) for p in ("train", "valid", "test")] == [2, 1, 1]
    assert data.utterances == [
        "TRAIN/DR1/FCJF0/SX1", "TRAIN/DR2/MABC0/SX1",
        "TEST/DR1/FAKS0/SX1", "TEST/DR1/FELC0/SX1",
    ]  # fmt: skip
    assert data.split_labels.tolist() == ["train", "train", "valid", "test"]
    X, y = data.X_train[0], data.y_train[0]
    n_frames = 1 + (8000 - 400) // 160
    assert X.shape == (n_frames, 26) and X.dtype == np.float32
    assert y.shape == (n_frames,) and y.dtype == np.int64
    centres = np.arange(n_frames) * 160 + 200
    names = data.target_names[y]
    assert list(data.target_names) == list(TIMIT_PHONES)
    assert set(names[centres < 3000]) == {"h#"}
    assert set(names[(centres >= 3000) & (centres < 5000)]) == {"ix"}
    assert set(names[(centres >= 5000) & (centres < 5200)]) == {"q"}
    assert set(names[centres >= 5200]) == {"zh"}
    # standardized with the training frames
    train = np.concatenate(data.X_train).astype(np.float64)
    np.testing.assert_allclose(train.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(train.std(axis=0), 1.0, atol=1e-3)


def test_framewise_39_phones_and_options(tree):
    data = load_timit(tree, phone_set=39, deltas=False, standardize=False)
    assert list(data.target_names) == list(_PHONES_39) and len(_PHONES_39) == 39
    names = data.target_names[data.y_test[0]]
    centres = np.arange(len(names)) * 160 + 200
    assert set(names[centres < 3000]) == {"sil"}
    # 'q' takes the class of the phone before it (ix -> ih)
    assert set(names[(centres >= 3000) & (centres < 5200)]) == {"ih"}
    assert set(names[centres >= 5200]) == {"sh"}
    assert data.X_test[0].shape[1] == 13
    np.testing.assert_array_equal(data.feature_scale, np.ones(13))
    X, y = load_timit(tree, split="valid", return_X_y=True)
    assert len(X) == len(y) == 1


def test_spectra_next_frame_prediction(tree):
    data = load_timit(tree, task="spectra")
    X, y = data.X_train[0], data.y_train[0]
    # 8000 samples at 16 kHz -> 4000 at 8 kHz -> 31 frames of 256 every 128
    assert X.shape == y.shape == (30, 129) and X.dtype == np.float32
    np.testing.assert_array_equal(X[1:], y[:-1])
    assert data.sample_rate == 8000 and len(data.audio[0]) == 4000
    # a 1 kHz tone peaks in bin 1000 / (8000 / 256) = 32
    assert int(np.argmax(X.mean(axis=0))) == 32
    assert np.isfinite(X).all()


def test_words_task(tmp_path):
    root = tmp_path / "TIMIT"
    (root / "TEST").mkdir(parents=True)
    phones = [(0, 4000, "h#")]
    # 'making' in its App. B sentence SX430 by 7 speakers, and once elsewhere
    for i in range(8):
        sentence = "SX430" if i < 7 else "SX12"
        folder = root / "TRAIN" / "DR1" / f"MSP{i}0"
        _utterance(folder, sentence, _tone(4000, seed=i), phones,
                   words=[(100, 2100, "making"), (2100, 3000, "the")])  # fmt: skip
    # 'subway' only twice
    for i in range(2):
        folder = root / "TEST" / "DR2" / f"FSW{i}0"
        _utterance(folder, "SX246", _tone(4000, seed=i), phones,
                   words=[(500, 3500, "subway")])  # fmt: skip
    with pytest.warns(UserWarning, match="fewer than 7 utterances"):
        data = load_timit(root, task="words", hop_ms=10.0)
    assert len(data.X_train) + len(data.X_test) == 9
    making = np.flatnonzero(data.words == "making")
    assert [data.utterances[i].split("/")[-1] for i in making] == ["SX430"] * 7
    assert data.split_labels[making].tolist() == ["train"] * 5 + ["test"] * 2
    assert all(len(data.audio[i]) == 2000 for i in making)
    assert data.X_train[0].shape == (1 + (2000 - 400) // 160, 13)
    assert data.target_names[data.y_train[0]] == "making"
    subway = np.flatnonzero(data.words == "subway")
    assert data.split_labels[subway].tolist() == ["train", "train"]
    with pytest.warns(UserWarning, match="'subway': 2"):
        suffix = load_timit(root, task="words", hop_ms=10.0, target="suffix")
    assert sorted(set(suffix.target.tolist())) == [0, 4]


def test_errors_name_the_problem(tree, tmp_path):
    with pytest.raises(FileNotFoundError, match="no TRAIN and TEST"):
        load_timit(tmp_path / "timit" / "TRAIN")
    with pytest.raises(ValueError, match="task must be"):
        load_timit(tree, task="phones")
    with pytest.raises(ValueError, match="phone_set must be 61 or 39"):
        load_timit(tree, phone_set=48)
    with pytest.raises(ValueError, match=r"split must be one of \['train', 'test'\]"):
        load_timit(tree, task="words", split="valid")
    with pytest.raises(ValueError, match="none of the 25 common-suffix words"):
        load_timit(tree, task="words")
    phn = tree / "TEST" / "DR1" / "FELC0" / "SX1.PHN"
    phn.write_text("0 3000 h#\n3000 oops\n")
    with pytest.raises(ValueError, match="expected 'START END LABEL'"):
        load_timit(tree)
    phn.write_text("0 3000 h#\n3000 8000 xyz\n")
    with pytest.raises(ValueError, match=r"not TIMIT phones: \['xyz'\]"):
        load_timit(tree)
    phn.unlink()
    with pytest.raises(FileNotFoundError, match="no SX1.PHN"):
        load_timit(tree)
    wav = tree / "TRAIN" / "DR1" / "FCJF0" / "SX1.WAV"
    wav.write_bytes(sphere(_tone(100), rate=8000))
    with pytest.raises(ValueError, match="8000 Hz"):
        load_timit(tree, task="spectra")
    wav.write_bytes(sphere(_tone(100), coding="pcm,embedded-shorten-v2.00"))
    with pytest.raises(ValueError, match="sph2pipe"):
        load_timit(tree, task="spectra")
