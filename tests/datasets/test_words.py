import shutil
import subprocess

import numpy as np
import pytest

from sklmn.datasets import _words, load_common_suffix_words
from sklmn.datasets._mfcc import hz_to_mel, mel_filterbank, mel_to_hz, mfcc

# ---------------------------------------------------------------- MFCC


def _reference_mfcc(x, sr, n_mfcc, win_ms, hop_ms, n_mels, n_fft, a, energy):
    """Straightforward per-frame MFCC, written from the textbook definitions."""
    x = np.asarray(x, dtype=np.float64)
    y = x.copy()
    for n in range(1, len(x)):
        y[n] = x[n] - a * x[n - 1]
    win = round(win_ms * sr / 1000)
    hop = round(hop_ms * sr / 1000)
    hamming = [0.54 - 0.46 * np.cos(2 * np.pi * n / (win - 1)) for n in range(win)]
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    edges_mel = [mel(sr / 2) * j / (n_mels + 1) for j in range(n_mels + 2)]
    edges = [700 * (10 ** (m / 2595) - 1) for m in edges_mel]
    rows = []
    start = 0
    while start + win <= len(y):
        frame = [y[start + n] * hamming[n] for n in range(win)]
        spectrum = np.fft.fft(frame, n_fft)[: n_fft // 2 + 1]
        power = np.abs(spectrum) ** 2 / n_fft
        energies = []
        for j in range(1, n_mels + 1):
            lo, mid, hi = edges[j - 1], edges[j], edges[j + 1]
            total = 0.0
            for k, p in enumerate(power):
                f = k * sr / n_fft
                if lo < f <= mid:
                    total += p * (f - lo) / (mid - lo)
                elif mid < f < hi:
                    total += p * (hi - f) / (hi - mid)
            energies.append(np.log(total))
        coefficients = []
        for i in range(n_mfcc):
            scale = np.sqrt(1 / n_mels) if i == 0 else np.sqrt(2 / n_mels)
            coefficients.append(
                scale
                * sum(
                    energies[j] * np.cos(np.pi * i * (2 * j + 1) / (2 * n_mels))
                    for j in range(n_mels)
                )
            )
        if energy:
            coefficients[0] = np.log(power.sum())
        rows.append(coefficients)
        start += hop
    return np.array(rows)


@pytest.mark.parametrize("energy", [False, True])
@pytest.mark.parametrize("hop_ms", [10.0, 4.0])
def test_mfcc_matches_reference(energy, hop_ms):
    rng = np.random.RandomState(0)
    sr = 8000
    x = rng.standard_normal(1200)
    got = mfcc(x, sr, hop_ms=hop_ms, n_fft=256, energy=energy, n_mels=20)
    expected = _reference_mfcc(x, sr, 13, 25.0, hop_ms, 20, 256, 0.97, energy)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def _log_mel(C):
    """Invert the orthonormal DCT-II (n_mfcc = n_mels) by its transpose."""
    n = C.shape[1]
    j = np.arange(n)
    basis = np.cos(np.pi * np.outer(j, 2 * j + 1) / (2 * n))  # (coef, filter)
    basis[0] *= np.sqrt(1 / n)
    basis[1:] *= np.sqrt(2 / n)
    np.testing.assert_allclose(basis @ basis.T, np.eye(n), atol=1e-12)
    return C @ basis


@pytest.mark.parametrize("index", [4, 9, 15, 24])
@pytest.mark.parametrize("detune", [-0.2, 0.0, 0.2])
def test_pure_tone_peaks_at_the_nearest_filter(index, detune):
    # a tone within a fifth of the mel spacing of centre ``index``
    sr, n_mels = 16000, 26
    centres_mel = np.linspace(0, hz_to_mel(sr / 2), n_mels + 2)[1:-1]
    spacing = centres_mel[1] - centres_mel[0]
    freq = float(mel_to_hz(centres_mel[index] + detune * spacing))
    t = np.arange(sr // 4) / sr
    tone = np.sin(2 * np.pi * freq * t)
    C = mfcc(tone, sr, n_mfcc=n_mels, n_mels=n_mels, preemphasis=0.0)
    assert np.all(_log_mel(C).argmax(axis=1) == index)


@pytest.mark.parametrize("gain", [0.01, 3.0, 1000.0])
def test_gain_only_moves_coefficient_zero(gain):
    # log mel energies shift by 2 log(gain) in every filter; the orthonormal DCT
    # of a constant c over 26 filters is (sqrt(26) c, 0, ..., 0)
    rng = np.random.RandomState(1)
    x = rng.standard_normal(4000)
    base, scaled = mfcc(x, 16000), mfcc(gain * x, 16000)
    np.testing.assert_allclose(
        scaled[:, 0] - base[:, 0], np.sqrt(26) * 2 * np.log(gain), rtol=1e-9
    )
    np.testing.assert_allclose(scaled[:, 1:], base[:, 1:], rtol=0, atol=1e-9)


def test_chirp_energy_moves_up_the_filterbank():
    sr = 16000
    t = np.arange(sr) / sr
    chirp = np.sin(2 * np.pi * (200 * t + 3000 * t**2))  # 200 Hz -> 6200 Hz
    peaks = _log_mel(mfcc(chirp, sr, n_mfcc=26)).argmax(axis=1)
    assert peaks[0] <= 3 and peaks[-1] >= 22
    assert np.all(np.diff(peaks) >= 0)


@pytest.mark.parametrize(
    "n_samples, window_ms, hop_ms, expected",
    [
        (16000, 25.0, 10.0, 98),
        (400, 25.0, 10.0, 1),
        (10, 25.0, 10.0, 1),
        (1000, 25.0, 1.0, 38),
    ],
)
def test_mfcc_frame_count(n_samples, window_ms, hop_ms, expected):
    x = np.random.RandomState(2).standard_normal(n_samples)
    assert mfcc(x, 16000, window_ms=window_ms, hop_ms=hop_ms).shape == (expected, 13)


def test_filterbank_partition():
    fb = mel_filterbank(26, 512, 16000)
    # between the first and the last centre, neighbouring triangles sum to one
    freqs = np.arange(257) * 16000 / 512
    centres = mel_to_hz(np.linspace(0, hz_to_mel(8000), 28))[1:-1]
    inside = (freqs >= centres[0]) & (freqs <= centres[-1])
    np.testing.assert_allclose(fb[:, inside].sum(axis=0), 1.0, atol=1e-12)
    assert np.all((fb > 0).sum(axis=0) <= 2)


def test_mfcc_does_not_modify_input():
    x = np.random.RandomState(3).standard_normal(800)
    copy = x.copy()
    mfcc(x, 16000, energy=True)
    np.testing.assert_array_equal(x, copy)


@pytest.mark.parametrize(
    "args, kwargs, err, match",
    [
        ((np.zeros((2, 5)), 16000), {}, ValueError, r"1-D, got .* shape \(2, 5\)"),
        ((np.zeros(0), 16000), {}, ValueError, "at least one sample"),
        ((np.array([0.0, np.nan]), 16000), {}, ValueError, "nan at index 1"),
        ((np.zeros(500), 0), {}, ValueError, "sample_rate must be > 0, got 0"),
        ((np.zeros(500), 16000), {"n_mfcc": 30}, ValueError, "n_mels=26, got 30"),
        ((np.zeros(500), 16000), {"hop_ms": -1.0}, ValueError, "got -1.0"),
        ((np.zeros(500), 16000), {"n_fft": 256}, ValueError, "frame length 400"),
        ((np.zeros(500), 16000), {"preemphasis": 1.5}, ValueError, "got 1.5"),
        ((np.zeros(500), 16000), {"n_mels": 2.0}, TypeError, "n_mels must be an int"),
    ],
)
def test_mfcc_validation(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        mfcc(*args, **kwargs)


def test_filterbank_validation():
    with pytest.raises(ValueError, match="fmin=5000.0, fmax=4000.0"):
        mel_filterbank(26, 512, 16000, fmin=5000.0, fmax=4000.0)


# ---------------------------------------------------------------- words


@pytest.fixture(scope="module")
def words10():
    return load_common_suffix_words(hop_ms=10.0)


def test_words_sizes_and_split(words10):
    data = words10
    assert len(data.data) == 175 and len(data.X_train) == 125 and len(data.X_test) == 50
    assert data.target_names.tolist() == list(_words._WORDS)
    assert len(set(data.target_names.tolist())) == 25
    assert all(x.ndim == 2 and x.shape[1] == 13 for x in data.data)
    assert all(x.dtype == np.float64 and np.isfinite(x).all() for x in data.data)
    # every word 5 times in train and twice in test, by disjoint speakers
    np.testing.assert_array_equal(np.bincount(data.y_train), 5)
    np.testing.assert_array_equal(np.bincount(data.y_test), 2)
    assert set(data.speaker[~data.is_test]) == {0, 1, 2, 3, 4}
    assert set(data.speaker[data.is_test]) == {5, 6}
    np.testing.assert_array_equal(data.target // 5, data.suffix)
    for word, index in zip(data.words, data.target, strict=True):
        assert data.target_names[index] == word
        assert word.endswith(("ing", "ical", "ition", "ians", "ions", "way"))


def test_words_suffix_classes_follow_the_paper():
    # Carta et al. 2021 §5.5, in the paper's order
    assert _words.SUFFIX_CLASSES["-ical"] == (
        "biblical",
        "cyclical",
        "technical",
        "classical",
        "critical",
    )
    assert [w[0] for w in _words.SUFFIX_CLASSES.values()] == [
        "making",
        "biblical",
        "tradition",
        "musicians",
        "subway",
    ]


def test_words_audio(words10):
    assert words10.sample_rate == 16000
    durations = np.array([a.size for a in words10.audio]) / 16000
    assert durations.min() > 0.25 and durations.max() < 1.5
    for wave in words10.audio:
        assert wave.dtype == np.int16
        # trimmed as documented: 10 ms blocks louder (RMS) than 1/30 of the
        # loudest one start in the first two blocks and end in the last two
        n_blocks = wave.size // 160
        blocks = wave[: n_blocks * 160].astype(np.float64).reshape(n_blocks, 160)
        rms = np.sqrt((blocks**2).mean(axis=1))
        loud = np.flatnonzero(rms > rms.max() / 30)
        assert loud[0] <= 1 and loud[-1] >= n_blocks - 2


def test_words_standardized_on_training_frames(words10):
    frames = np.concatenate(words10.X_train)
    np.testing.assert_allclose(frames.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(frames.std(axis=0), 1.0, rtol=1e-10)
    raw = load_common_suffix_words(hop_ms=10.0, standardize=False)
    for a, b in zip(raw.data, words10.data, strict=True):
        np.testing.assert_allclose(
            (a - words10.feature_mean) / words10.feature_scale, b, rtol=1e-12
        )
    expected = mfcc(raw.audio[0], 16000, hop_ms=10.0, energy=True)
    np.testing.assert_allclose(raw.data[0], expected, rtol=1e-12)


def test_words_paper_features_are_long():
    data = load_common_suffix_words()  # 1 ms hop, as in Carta et al. 2021 §5.5
    lengths = np.array([len(x) for x in data.data])
    assert lengths.min() > 300 and lengths.max() < 1500


@pytest.mark.parametrize("split", ["train", "test", None])
@pytest.mark.parametrize("target", ["word", "suffix"])
def test_words_return_X_y(words10, split, target):
    X, y = load_common_suffix_words(
        split=split, target=target, hop_ms=10.0, return_X_y=True
    )
    key = "data" if split is None else f"X_{split}"
    assert len(X) == len(words10[key])
    np.testing.assert_array_equal(X[3], words10[key][3])
    expected = words10["target" if split is None else f"y_{split}"]
    np.testing.assert_array_equal(y, expected if target == "word" else expected // 5)


def test_words_other_test_speakers_and_determinism(words10):
    data = load_common_suffix_words(hop_ms=10.0, test_speakers=[0])
    assert len(data.X_test) == 25 and len(data.X_train) == 150
    assert set(data.speaker[data.is_test]) == {0}
    again = load_common_suffix_words(hop_ms=10.0)
    for a, b in zip(again.data, words10.data, strict=True):
        np.testing.assert_array_equal(a, b)


def test_words_returns_fresh_arrays():
    data = load_common_suffix_words(hop_ms=10.0, standardize=False)
    data.data[0][:] = 1e6
    data.audio[0][:] = 0
    data.words[0] = "xx"
    again = load_common_suffix_words(hop_ms=10.0, standardize=False)
    assert again.data[0].max() < 1e6
    assert np.abs(again.audio[0]).max() > 0
    assert again.words[0] == "making"


def test_words_need_no_external_tool(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the loader must not run a program")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setenv("PATH", "")
    _words._read_archive.cache_clear()
    _words._features.cache_clear()
    data = load_common_suffix_words(hop_ms=20.0)
    assert len(data.data) == 175


def test_words_beginning_is_informative(words10):
    # 1-nearest-neighbour on the mean of the first and last thirds of each
    # word: far above the 1/25 chance level on unseen speakers
    def summary(X):
        return np.array(
            [np.r_[x[: len(x) // 3].mean(0), x[-len(x) // 3 :].mean(0)] for x in X]
        )

    train, test = summary(words10.X_train), summary(words10.X_test)
    distances = ((test[:, None] - train[None]) ** 2).sum(axis=2)
    predicted = words10.y_train[distances.argmin(axis=1)]
    assert np.mean(predicted == words10.y_test) > 0.4


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"split": "valid"}, ValueError, "got 'valid'"),
        ({"target": "class"}, ValueError, "got 'class'"),
        ({"test_speakers": (7,)}, ValueError, r"ints in 0..6, got \(7,\)"),
        ({"test_speakers": ()}, ValueError, "non-empty"),
        ({"test_speakers": 5}, ValueError, "got 5"),
        ({"test_speakers": (1.5,)}, ValueError, r"got \(1.5,\)"),
        ({"test_speakers": range(7)}, ValueError, "at least one training speaker"),
        ({"hop_ms": 0}, ValueError, "hop_ms must be > 0, got 0"),
        ({"n_mfcc": 27}, ValueError, "n_mfcc must be <= n_mels=26, got 27"),
        ({"standardize": 1}, TypeError, "standardize must be a bool, got int: 1"),
    ],
)
def test_words_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        load_common_suffix_words(**kwargs)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_words_build_reproduces_shipped_audio(words10):
    from scipy.signal import resample_poly

    from sklmn.datasets import _build_generation, _build_words

    voice, rate, pitch = _build_words.SPEAKERS[6]
    _, samples = _build_generation.synthesize("leeway", voice, rate=rate, pitch=pitch)
    resampled = np.rint(resample_poly(samples.astype(np.float64), 320, 441))
    trimmed = _build_words.trim(resampled.astype(np.int16), 16000)
    index = np.flatnonzero((words10.words == "leeway") & (words10.speaker == 6))
    np.testing.assert_array_equal(trimmed, words10.audio[index[0]])
