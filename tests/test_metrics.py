"""sklmn.metrics against hand-computed values and naive references."""

import numpy as np
import pytest

from sklmn.metrics import frame_level_accuracy, normalized_mse


def _naive_frame_accuracy(frames_true, frames_pred):
    tp = fp = fn = 0
    for row_true, row_pred in zip(frames_true, frames_pred, strict=True):
        for a, b in zip(row_true, row_pred, strict=True):
            tp += a == 1 and b == 1
            fp += a == 0 and b == 1
            fn += a == 1 and b == 0
    return tp / (tp + fp + fn)


def test_frame_level_accuracy_hand_computed():
    y_true = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]])
    y_pred = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0]])
    # TP = 1 + 2 + 1 = 4, FP = 1, FN = 1 + 1 = 2 (true negatives ignored)
    assert frame_level_accuracy(y_true, y_pred) == pytest.approx(4 / 7, rel=1e-15)
    assert frame_level_accuracy(y_true, y_true) == 1.0
    assert frame_level_accuracy(y_true, np.zeros_like(y_true)) == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_frame_level_accuracy_ragged_and_padded_match_naive(seed):
    rng = np.random.RandomState(seed)
    lengths = [5, 2, 7]
    y_true = [rng.randint(0, 2, size=(t, 4)) for t in lengths]
    y_pred = [rng.randint(0, 2, size=(t, 4)) for t in lengths]
    expected = _naive_frame_accuracy(np.concatenate(y_true), np.concatenate(y_pred))
    assert frame_level_accuracy(y_true, y_pred) == pytest.approx(expected, rel=1e-15)

    def pad(seqs):
        out = np.full((3, 7, 4), np.nan)
        for i, s in enumerate(seqs):
            out[i, : len(s)] = s
        return out

    padded = frame_level_accuracy(pad(y_true), pad(y_pred))
    assert padded == pytest.approx(expected, rel=1e-15)


def test_frame_level_accuracy_zero_division_and_errors():
    silence = np.zeros((3, 2))
    assert frame_level_accuracy(silence, silence) == 1.0
    assert frame_level_accuracy(silence, silence, zero_division=0.0) == 0.0
    with pytest.raises(ValueError, match="binary indicators"):
        frame_level_accuracy([[0, 2]], [[0, 1]])
    with pytest.raises(ValueError, match="different shapes"):
        frame_level_accuracy(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="same layout"):
        frame_level_accuracy(
            [np.zeros((2, 2)), np.zeros((1, 2))], [np.zeros((1, 2)), np.zeros((2, 2))]
        )
    with pytest.raises(ValueError, match="NaN"):
        frame_level_accuracy([[np.nan, 1.0]], [[0.0, 1.0]])


def test_normalized_mse_hand_computed():
    y_true = np.array([1.0, 2.0, 3.0, 6.0])  # mean 3, spread 4 + 1 + 0 + 9 = 14
    y_pred = np.array([1.0, 3.0, 3.0, 4.0])  # error 0 + 1 + 0 + 4 = 5
    assert normalized_mse(y_true, y_pred) == pytest.approx(5 / 14, rel=1e-15)
    assert normalized_mse(y_true, np.full(4, 3.0)) == pytest.approx(1.0, rel=1e-15)
    assert normalized_mse(y_true, y_true) == 0.0


def test_normalized_mse_multioutput_ragged_padded():
    rng = np.random.RandomState(0)
    lengths = [4, 1, 6]
    y_true = [rng.randn(t, 2) for t in lengths]
    y_pred = [rng.randn(t, 2) for t in lengths]
    flat_true, flat_pred = np.concatenate(y_true), np.concatenate(y_pred)
    # naive: per-output means, sums over every valid step and output
    num = sum(
        (a - b) ** 2
        for rt, rp in zip(flat_true, flat_pred, strict=True)
        for a, b in zip(rt, rp, strict=True)
    )
    means = [np.mean(flat_true[:, j]) for j in range(2)]
    den = sum((row[j] - means[j]) ** 2 for row in flat_true for j in range(2))
    expected = num / den
    assert normalized_mse(y_true, y_pred) == pytest.approx(expected, rel=1e-12)
    assert normalized_mse(flat_true, flat_pred) == pytest.approx(expected, rel=1e-12)
    padded_true = np.full((3, 6, 2), np.nan)
    padded_pred = np.full((3, 6, 2), np.nan)
    for i, (a, b) in enumerate(zip(y_true, y_pred, strict=True)):
        padded_true[i, : len(a)] = a
        padded_pred[i, : len(b)] = b
    assert normalized_mse(padded_true, padded_pred) == pytest.approx(
        expected, rel=1e-12
    )


def test_normalized_mse_constant_target():
    assert normalized_mse([2.0, 2.0], [2.0, 2.0]) == 0.0
    assert normalized_mse([2.0, 2.0], [2.0, 3.0]) == float("inf")
    with pytest.raises(TypeError, match="numeric"):
        normalized_mse(["a"], ["b"])
