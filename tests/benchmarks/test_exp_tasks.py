"""The papers' experiments score their tasks as the papers define them."""

import math
import wave

import numpy as np
import pytest

from sklmn.datasets import load_timit


def _write_wave(path, samples):
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as stream:
        stream.setnchannels(1)
        stream.setsampwidth(2)
        stream.setframerate(16000)
        stream.writeframes(samples.astype("<i2").tobytes())


@pytest.fixture(scope="module")
def spectra_tree(tmp_path_factory):
    """A TIMIT tree for the spectra task: training speakers, one of the
    development set (FAKS0) and one of the core test set (FELC0) with a
    short and a long utterance."""
    root = tmp_path_factory.mktemp("timit_spectra") / "timit"
    rng = np.random.RandomState(0)
    t = np.arange(24000) / 16000
    speech = 3000 * np.sin(2 * np.pi * 220 * t) * (1 + np.sin(2 * np.pi * 3 * t))
    utterances = [
        ("TRAIN/DR1/MAAA0/SX1", 8000),
        ("TRAIN/DR1/MBBB0/SX2", 12000),
        ("TEST/DR1/FAKS0/SX3", 8000),
        ("TEST/DR1/FELC0/SX4", 2400),
        ("TEST/DR1/FELC0/SX5", 24000),
    ]
    for name, n in utterances:
        samples = speech[:n] + rng.normal(0, 100, n)
        _write_wave(root / f"{name}.WAV", samples)
    return root


def test_timit_spectra_mse_is_pooled_over_every_test_frame(
    spectra_tree, tmp_path, monkeypatch
):
    # the MSE was the mean of per-utterance means, which weighs a short
    # utterance's frames more than a long one's; the report says (and the
    # paper's masked mean computes) the mean over all frames and bins
    from sklmn.benchmarks._exp_spectra import timit_spectra
    from sklmn.estimators import ENRNNRegressor, RNNRegressor

    def zeros(self, X):
        return [np.zeros_like(np.asarray(x, dtype=float)) for x in X]

    monkeypatch.setattr(ENRNNRegressor, "predict", zeros)
    monkeypatch.setattr(RNNRegressor, "predict", zeros)
    result = timit_spectra(
        "test", tmp_path, lambda _: None, seed=0, data_dir=spectra_tree.parent
    )
    y_test = load_timit(spectra_tree, task="spectra").y_test
    assert [len(t) for t in y_test] == [8, 92]
    pooled = sum(float(np.sum(t.astype(float) ** 2)) for t in y_test) / sum(
        t.size for t in y_test
    )
    per_utterance = float(np.mean([np.mean(t.astype(float) ** 2) for t in y_test]))
    assert abs(pooled - per_utterance) > 0.01 * pooled  # the test can tell
    rows = [r for r in result.rows if r.metric == "MSE"]
    assert [r.model for r in rows] == ["ENRNN", "LSTM"]
    for row in rows:
        assert math.isfinite(row.value)
        assert row.value == pytest.approx(pooled, rel=1e-9)
