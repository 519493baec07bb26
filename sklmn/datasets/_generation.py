"""Sequence-generation task of Carta et al. 2021 §5.4 (after Koutník et al. 2014)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import Bunch

from ._base import _bundled_path, _check_bool

__all__ = ["load_generation_signal"]

_FILE = "generation_speech.npz"

_DESCR = """\
Sequence generation
-------------------
Carta et al. 2021 §5.4 (after the Clockwork RNN paper): a model with no external input
must output ``n_samples`` consecutive samples of a recording, scaled to
[-1, 1]; score with the normalized MSE sum((y - y_hat)**2) / sum((y - mean(y))**2).
The paper cut 300 samples from a music file at 44.1 kHz; the recording of the
paper is not available, so sklmn ships synthetic speech instead.

Provenance of ``data/generation_speech.npz`` (rebuilt by
``python -m sklmn.datasets._build_generation``): eSpeak NG 1.51 (Debian 12),

    espeak-ng -v en-us -s 120 -p 40 -w out.wav "Hello, my lovely world."

i.e. voice en-us, 120 words per minute, pitch 40, 22050 Hz mono int16, 63310
samples (2.87 s), stored whole. The default window starts at sample 28173, the
300-sample window of largest energy (the stressed vowel of "lovely", pitch
about 110 Hz: 1.5 glottal periods with formant ringing inside each, so
structure at two time scales). The window is min-max scaled to [-1, 1].

Task layout, for a per-time-step regressor: one sequence (n = 1) of
``n_samples`` steps with one all-zero input feature, X of shape
(1, n_samples, 1), and the per-step target y of shape (1, n_samples).
"""


def load_generation_signal(*, n_samples: int = 300, offset=None, return_X_y=False):
    """Load the sequence-generation task: reproduce a recording from zero input.

    Carta et al. 2021 §5.4: ``n_samples`` consecutive samples of a recording, scaled
    to [-1, 1], to be generated with no external input. The recording is
    speech synthesized with espeak-ng and shipped with sklmn (see ``DESCR``
    for the exact command); no external tool or download is needed.

    Parameters
    ----------
    n_samples : int, default=300
        Length of the sequence (the paper uses 300).
    offset : int or None, default=None
        First sample of the window in the 22050 Hz recording (63310 samples).
        None selects the default window (sample 28173, the loudest 300-sample
        window, in a voiced vowel).
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (X, zeros of shape (1, n_samples, 1)), ``target`` (y, float64
        of shape (1, n_samples), min-max scaled so that its minimum is -1 and
        its maximum 1), ``raw`` (the int16 samples of the window),
        ``sample_rate`` (22050), ``offset``, ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Examples
    --------
    >>> from sklmn.datasets import load_generation_signal
    >>> X, y = load_generation_signal(return_X_y=True)
    >>> X.shape, y.shape
    ((1, 300, 1), (1, 300))
    >>> float(y.min()), float(y.max()), float(abs(X).max())
    (-1.0, 1.0, 0.0)
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(
            f"n_samples must be an int, got {type(n_samples).__name__}: {n_samples!r}."
        )
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples!r}.")
    return_X_y = _check_bool("return_X_y", return_X_y)
    with np.load(_bundled_path(_FILE)) as archive:
        audio = archive["audio"]
        sample_rate = int(archive["sample_rate"])
        default_offset = int(archive["offset"])
    if n_samples > audio.size:
        raise ValueError(
            f"n_samples must be at most {audio.size}, got {n_samples!r} (the "
            f"recording has {audio.size} samples)."
        )
    given = offset
    if offset is None:
        offset = default_offset
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise TypeError(
            f"offset must be an int or None, got {type(offset).__name__}: {offset!r}."
        )
    if given is None and offset > audio.size - n_samples:
        raise ValueError(
            f"the default window starts at sample {offset}, too late for "
            f"n_samples={n_samples} (the recording has {audio.size} samples): "
            f"pass an offset in [0, {audio.size - n_samples}]."
        )
    if not 0 <= offset <= audio.size - n_samples:
        raise ValueError(
            f"offset must be in [0, {audio.size - n_samples}] for "
            f"n_samples={n_samples} (the recording has {audio.size} samples), "
            f"got {offset!r}."
        )
    raw = audio[offset : offset + n_samples].copy()
    signal = raw.astype(np.float64)
    low, high = signal.min(), signal.max()
    if high == low:
        raise ValueError(
            f"the window [{offset}, {offset + n_samples}) is constant "
            f"({float(low)!r}): choose another offset."
        )
    y = (2.0 * (signal - low) / (high - low) - 1.0)[None, :]
    X = np.zeros((1, n_samples, 1))
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        raw=raw,
        sample_rate=sample_rate,
        offset=int(offset),
        DESCR=_DESCR,
    )
