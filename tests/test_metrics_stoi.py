"""sklmn.metrics.short_time_objective_intelligibility (Taal et al. 2011)."""

import numpy as np
import pytest

from sklmn.metrics import _stoi_band_matrix
from sklmn.metrics import short_time_objective_intelligibility as stoi


def _speech_like(rate=8000, seconds=3.0, seed=0):
    """A voiced signal with a gliding pitch and syllable-rate (4 Hz) loudness."""
    rng = np.random.default_rng(seed)
    n = int(rate * seconds)
    t = np.arange(n) / rate
    syllables = np.repeat(rng.uniform(0.2, 1.0, int(seconds * 4) + 1), rate // 4)[:n]
    envelope = np.clip(np.sin(2 * np.pi * 4 * t + rng.uniform(0, 6)), 0, None) ** 2
    phase = 2 * np.pi * np.cumsum(120 + 30 * np.sin(2 * np.pi * 0.7 * t)) / rate
    voiced = sum(
        np.sin(k * phase) / k * (1 + np.sin(2 * np.pi * (1.5 + 0.5 * k) * t + k))
        for k in range(1, 25)
    )
    return envelope * syllables * voiced


def _at_snr(x, noise, snr_db):
    scale = np.sqrt(np.mean(x**2) / np.mean(noise**2)) / 10 ** (snr_db / 20)
    return x + scale * noise


def test_identical_signals_score_one():
    x = _speech_like()
    assert stoi(x, x, sample_rate=8000) == pytest.approx(1.0, abs=1e-9)
    assert stoi(x, x.copy(), sample_rate=10000) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_independent_noise_scores_near_zero(seed):
    rng = np.random.default_rng(seed)
    clean, other = rng.normal(size=30000), rng.normal(size=30000)
    assert abs(stoi(clean, other, sample_rate=10000)) < 0.1


def test_monotone_in_snr_for_speech_like_signals():
    x = _speech_like()
    noise = np.random.default_rng(1).normal(size=x.shape)
    scores = [stoi(x, _at_snr(x, noise, snr), sample_rate=8000)
              for snr in (-10, -5, 0, 5, 10, 20)]  # fmt: skip
    assert np.all(np.diff(scores) > 0.005), scores
    assert scores[0] < 0.75 and scores[-1] > 0.95


def test_invariant_to_a_global_gain():
    x = _speech_like(seed=3)
    y = _at_snr(x, np.random.default_rng(4).normal(size=x.shape), 0.0)
    ref = stoi(x, y, sample_rate=8000)
    for gain in (1e-3, 0.5, 7.0, 1e4):
        assert stoi(x, gain * y, sample_rate=8000) == pytest.approx(ref, abs=1e-9)


def test_silent_frames_are_removed():
    # silence added to both signals does not count (the frames more than
    # 40 dB below the loudest are dropped before the analysis)
    x = _speech_like(rate=10000, seed=5)
    y = _at_snr(x, np.random.default_rng(6).normal(size=x.shape), 5.0)
    pad = np.zeros(128 * 40)
    ref = stoi(x, y, sample_rate=10000)
    padded = stoi(np.r_[pad, x, pad], np.r_[pad, y, pad], sample_rate=10000)
    assert padded == pytest.approx(ref, abs=0.01)


def test_resampling_to_10_khz():
    # the same signal given at 8 and 16 kHz scores alike
    x8 = _speech_like(rate=8000, seed=7)
    y8 = _at_snr(x8, np.random.default_rng(8).normal(size=x8.shape), 0.0)
    t8 = np.arange(len(x8))
    t16 = np.arange(2 * len(x8)) / 2
    x16, y16 = np.interp(t16, t8, x8), np.interp(t16, t8, y8)
    assert stoi(x16, y16, sample_rate=16000) == pytest.approx(
        stoi(x8, y8, sample_rate=8000), abs=0.05
    )


def test_one_third_octave_bands():
    bands = _stoi_band_matrix()
    assert bands.shape == (15, 257)
    assert np.all(bands.sum(axis=0) <= 1)  # disjoint
    first = np.flatnonzero(bands.sum(axis=0))
    # contiguous from about 150 * 2**(-1/6) Hz up to 150 * 2**(14/3 + 1/6) Hz
    np.testing.assert_array_equal(first, np.arange(first[0], first[-1] + 1))
    hz = 10000 / 512
    assert first[0] * hz == pytest.approx(150 * 2 ** (-1 / 6), abs=hz / 2)
    top = 150 * 2 ** (14 / 3 + 1 / 6)
    assert (first[-1] + 1) * hz == pytest.approx(top, abs=hz / 2)


def test_inputs_are_not_modified():
    x = _speech_like()
    y = x + 0.1
    x0, y0 = x.copy(), y.copy()
    stoi(x, y, sample_rate=8000)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize(
    "clean, processed, rate, match",
    # fmt: off
    [
        (np.ones(8000), np.ones(7999), 8000, "samples, got 8000 and 7999"),
        (np.ones((2, 8000)), np.ones((2, 8000)), 8000, r"1-D waveform.*\(2, 8"),
        (np.r_[np.nan, np.ones(7999)], np.ones(8000), 8000, "clean holds non-fin"),
        (np.ones(8000), np.r_[np.inf, np.ones(7999)], 8000, "processed holds non"),
        (np.ones(8000), np.ones(8000), 0, "positive integer.*got 0"),
        (np.ones(8000), np.ones(8000), 8000.5, "positive integer.*got 8000.5"),
        (np.ones(8000), np.ones(8000), True, "positive integer.*got True"),
        (np.zeros(8000), np.ones(8000), 8000, "clean is silent"),
        (np.ones(2000), np.ones(2000), 8000, "at least 30 frames.*got 18"),
        # shorter than one frame: a NumPy error on an empty maximum before
        (np.ones(100), np.ones(100), 10000, "at least 30 frames.*got 0"),
        (np.ones(1), np.ones(1), 16000, "at least 30 frames.*got 0"),
    ],
    # fmt: on
)
def test_clear_errors(clean, processed, rate, match):
    with pytest.raises(ValueError, match=match):
        stoi(clean, processed, sample_rate=rate)


def test_non_numeric_input():
    with pytest.raises(TypeError, match="clean must be numeric"):
        stoi(np.array(["a"] * 8000), np.ones(8000), sample_rate=8000)
