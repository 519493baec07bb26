"""Mel-frequency cepstral coefficients in plain numpy / scipy.

The pipeline is the textbook one (Davis & Mermelstein 1980; HTK book §5.6):
pre-emphasis, framing, Hamming window, power spectrum, triangular mel
filterbank, log, orthonormal DCT-II, keep the first coefficients. Carta et al. 2021
§5.5 additionally replaces the zeroth coefficient by the log frame energy
(``energy=True`` here).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.fft import dct, rfft
from scipy.sparse import csc_array

from ._base import check_int

__all__ = ["hz_to_mel", "mel_to_hz", "mel_filterbank", "mfcc"]


def hz_to_mel(f: np.ndarray | float) -> np.ndarray:
    """HTK mel scale ``m = 2595 log10(1 + f / 700)``.

    Examples
    --------
    >>> from sklmn.datasets._mfcc import hz_to_mel, mel_to_hz
    >>> round(float(hz_to_mel(1000.0)), 1)
    1000.0
    >>> round(float(mel_to_hz(hz_to_mel(440.0))), 6)
    440.0
    """
    return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def mel_to_hz(m: np.ndarray | float) -> np.ndarray:
    """Inverse of :func:`hz_to_mel`.

    Examples
    --------
    >>> from sklmn.datasets._mfcc import mel_to_hz
    >>> round(float(mel_to_hz(0.0)), 6)
    0.0
    """
    return 700.0 * (10.0 ** (np.asarray(m, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(
    n_mels: int, n_fft: int, sample_rate: float, fmin: float = 0.0, fmax=None
) -> np.ndarray:
    """Triangular filters equally spaced on the mel scale.

    Filter ``j`` rises linearly from 0 at centre ``j - 1`` to 1 at centre
    ``j`` and falls back to 0 at centre ``j + 1``, where the ``n_mels + 2``
    edge frequencies are equally spaced in mel between ``fmin`` and ``fmax``.
    The triangles are evaluated at the exact frequencies of the ``rfft`` bins
    (no rounding of the edges to bins), with peak height 1.

    Parameters
    ----------
    n_mels : int
        Number of filters.
    n_fft : int
        FFT length; the filters have ``n_fft // 2 + 1`` columns.
    sample_rate : float
        Sampling rate in Hz.
    fmin : float, default=0.0
        Lower edge of the first filter in Hz.
    fmax : float or None, default=None
        Upper edge of the last filter in Hz; None means ``sample_rate / 2``.

    Returns
    -------
    filters : ndarray of shape (n_mels, n_fft // 2 + 1)

    Examples
    --------
    >>> from sklmn.datasets._mfcc import mel_filterbank
    >>> fb = mel_filterbank(26, 512, 16000)
    >>> fb.shape
    (26, 257)
    >>> bool((fb >= 0).all() and (fb <= 1).all())
    True
    """
    n_mels = check_int("n_mels", n_mels, 1)
    n_fft = check_int("n_fft", n_fft, 2)
    if not sample_rate > 0:
        raise ValueError(f"sample_rate must be > 0, got {sample_rate!r}.")
    nyquist = sample_rate / 2.0
    fmax = nyquist if fmax is None else float(fmax)
    if not 0.0 <= fmin < fmax <= nyquist:
        raise ValueError(
            f"need 0 <= fmin < fmax <= sample_rate / 2 = {nyquist!r}, got "
            f"fmin={fmin!r}, fmax={fmax!r}."
        )
    edges = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    freqs = np.arange(n_fft // 2 + 1) * (sample_rate / n_fft)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (freqs - lower) / (centre - lower)
    falling = (upper - freqs) / (upper - centre)
    return np.clip(np.minimum(rising, falling), 0.0, None)


def _check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__}: {value!r}."
        )
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}.")
    return float(value)


def mfcc(
    signal,
    sample_rate: float,
    *,
    n_mfcc: int = 13,
    window_ms: float = 25.0,
    hop_ms: float = 10.0,
    n_mels: int = 26,
    n_fft: int | None = None,
    preemphasis: float = 0.97,
    fmin: float = 0.0,
    fmax: float | None = None,
    energy: bool = False,
) -> np.ndarray:
    """Mel-frequency cepstral coefficients of a mono signal.

    Steps: pre-emphasis ``x'[n] = x[n] - a x[n-1]`` (``x'[0] = x[0]``);
    frames of ``round(window_ms * sample_rate / 1000)`` samples every
    ``round(hop_ms * sample_rate / 1000)`` samples (frame ``k`` starts at
    ``k * hop``; a signal shorter than one window is zero-padded to one frame;
    trailing samples that do not fill a frame are dropped); Hamming window;
    power spectrum ``|rfft(frame, n_fft)|**2 / n_fft``; ``n_mels`` triangular
    mel filters (:func:`mel_filterbank`); natural log (floored at the float64
    ``tiny`` so silence stays finite); orthonormal DCT-II; first ``n_mfcc``
    coefficients.

    Parameters
    ----------
    signal : array-like of shape (n_samples,)
        Mono waveform (any scale; int16 PCM works).
    sample_rate : float
        Sampling rate in Hz.
    n_mfcc : int, default=13
        Number of cepstral coefficients kept (at most ``n_mels``).
    window_ms : float, default=25.0
        Frame length in milliseconds.
    hop_ms : float, default=10.0
        Frame step in milliseconds (Carta et al. 2021 §5.5 uses 1 ms).
    n_mels : int, default=26
        Number of mel filters.
    n_fft : int or None, default=None
        FFT length, at least the frame length; None means the next power of two.
    preemphasis : float, default=0.97
        Pre-emphasis coefficient ``a`` (0 disables it).
    fmin, fmax : float, default=0.0 and None
        Frequency range of the filterbank in Hz (None: Nyquist).
    energy : bool, default=False
        Replace coefficient 0 by the log frame energy
        ``log(sum_k |rfft(frame)|**2 / n_fft)`` of the windowed frame (paper
        Carta et al. 2021 §5.5).

    Returns
    -------
    coefficients : ndarray of shape (n_frames, n_mfcc), float64

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.datasets._mfcc import mfcc
    >>> t = np.arange(16000) / 16000
    >>> C = mfcc(np.sin(2 * np.pi * 440 * t), 16000)
    >>> C.shape
    (98, 13)
    >>> bool(np.isfinite(C).all())
    True
    """
    x = np.asarray(signal, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"signal must be 1-D, got an array of shape {x.shape}.")
    if x.size == 0:
        raise ValueError("signal must contain at least one sample, got 0.")
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise ValueError(
            f"signal must be finite, found {float(x[bad])!r} at index {bad}."
        )
    sample_rate = _check_positive("sample_rate", sample_rate)
    window_ms = _check_positive("window_ms", window_ms)
    hop_ms = _check_positive("hop_ms", hop_ms)
    n_mels = check_int("n_mels", n_mels, 1)
    n_mfcc = check_int("n_mfcc", n_mfcc, 1)
    if n_mfcc > n_mels:
        raise ValueError(f"n_mfcc must be <= n_mels={n_mels}, got {n_mfcc!r}.")
    if not isinstance(energy, bool | np.bool_):
        raise TypeError(f"energy must be a bool, got {energy!r}.")
    if not (isinstance(preemphasis, numbers.Real) and 0.0 <= preemphasis < 1.0):
        raise ValueError(f"preemphasis must be in [0, 1), got {preemphasis!r}.")
    win = max(1, round(window_ms * sample_rate / 1000.0))
    hop = max(1, round(hop_ms * sample_rate / 1000.0))
    if n_fft is None:
        n_fft = 1 << max(1, (win - 1).bit_length())
    n_fft = check_int("n_fft", n_fft, 2)
    if n_fft < win:
        raise ValueError(f"n_fft must be >= the frame length {win}, got {n_fft!r}.")

    emphasized = np.concatenate([x[:1], x[1:] - preemphasis * x[:-1]])
    if emphasized.size < win:
        emphasized = np.pad(emphasized, (0, win - emphasized.size))
    n_frames = 1 + (emphasized.size - win) // hop
    frames = np.lib.stride_tricks.sliding_window_view(emphasized, win)[::hop]
    frames = frames[:n_frames] * np.hamming(win)
    power = np.abs(rfft(frames, n=n_fft, axis=1)) ** 2 / n_fft
    # each bin feeds at most two triangles: a sparse product avoids dense BLAS
    # (whose threads dominate the cost for these small matrices)
    filters = csc_array(mel_filterbank(n_mels, n_fft, sample_rate, fmin, fmax).T)
    tiny = np.finfo(np.float64).tiny
    log_mel = np.log(np.maximum(power @ filters, tiny))
    coefficients = dct(log_mel, type=2, norm="ortho", axis=1)[:, :n_mfcc]
    if energy:
        coefficients[:, 0] = np.log(np.maximum(power.sum(axis=1), tiny))
    return coefficients
