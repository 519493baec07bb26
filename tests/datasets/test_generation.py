import shutil

import numpy as np
import pytest

from sklmn.datasets import load_generation_signal


@pytest.mark.parametrize("n_samples", [300, 2, 1000])
@pytest.mark.parametrize("offset", [None, 5000, 40000])
def test_generation_layout_and_scaling(n_samples, offset):
    data = load_generation_signal(n_samples=n_samples, offset=offset)
    X, y = data.data, data.target
    assert X.shape == (1, n_samples, 1)
    assert y.shape == (1, n_samples)
    assert X.dtype == y.dtype == np.float64
    np.testing.assert_array_equal(X, 0.0)
    assert y.min() == -1.0 and y.max() == 1.0
    # y is the min-max scaled raw int16 window
    raw = data.raw.astype(np.float64)
    expected = 2.0 * (raw - raw.min()) / (raw.max() - raw.min()) - 1.0
    np.testing.assert_allclose(y[0], expected, rtol=0, atol=1e-12)
    assert data.sample_rate == 22050
    assert data.offset == (28173 if offset is None else offset)


def test_generation_default_window_is_voiced():
    data = load_generation_signal()
    raw = data.raw.astype(np.float64)
    # loud (int16 full scale is 32768) and oscillating: a vowel, not silence
    assert raw.std() > 5000
    crossings = np.count_nonzero(np.diff(np.signbit(raw)))
    assert 5 <= crossings <= 100
    # the default window is the loudest one of the recording
    other = load_generation_signal(offset=10000).raw.astype(np.float64)
    assert (raw**2).sum() > (other**2).sum()


def test_generation_windows_overlap_consistently():
    a = load_generation_signal(n_samples=300)
    b = load_generation_signal(n_samples=400, offset=a.offset - 100)
    np.testing.assert_array_equal(b.raw[100:], a.raw)


def test_generation_return_X_y_and_descr():
    X, y = load_generation_signal(return_X_y=True)
    data = load_generation_signal()
    np.testing.assert_array_equal(X, data.data)
    np.testing.assert_array_equal(y, data.target)
    assert 'espeak-ng -v en-us -s 120 -p 40 -w out.wav "Hello' in data.DESCR


def test_generation_returns_fresh_arrays():
    y = load_generation_signal().target
    y[:] = 7.0
    assert load_generation_signal().target.max() == 1.0


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"n_samples": 1}, ValueError, "n_samples must be >= 2, got 1"),
        ({"n_samples": 3.0}, TypeError, "n_samples must be an int"),
        ({"n_samples": True}, TypeError, "n_samples must be an int"),
        ({"offset": -1}, ValueError, r"offset must be in \[0, 63010\].*got -1"),
        ({"offset": 63011}, ValueError, "got 63011"),
        ({"offset": 1.5}, TypeError, "offset must be an int or None"),
        ({"offset": 0, "n_samples": 5}, ValueError, "is constant"),
        ({"return_X_y": 1}, TypeError, "return_X_y must be a bool, got int: 1"),
        # blamed the offset ("in [0, -999936690]"), which was not given
        ({"n_samples": 10**9}, ValueError, "n_samples must be at most 63310, got"),
        ({"n_samples": 40000}, ValueError, r"default window.*offset in \[0, 23310\]"),
    ],
)
def test_generation_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        load_generation_signal(**kwargs)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_generation_build_reproduces_shipped_recording():
    from sklmn.datasets import _build_generation as build

    sample_rate, audio = build.synthesize(
        build.TEXT, build.VOICE, rate=build.RATE_WPM, pitch=build.PITCH
    )
    data = load_generation_signal()
    assert sample_rate == data.sample_rate
    assert build.loudest_window(audio, 300) == data.offset
    np.testing.assert_array_equal(audio[data.offset : data.offset + 300], data.raw)
