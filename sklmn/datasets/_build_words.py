"""Rebuild ``data/common_suffix_words.npz``, the spoken common-suffix words.

Run ``python -m sklmn.datasets._build_words`` (needs the ``espeak-ng``
program, e.g. ``apt-get install espeak-ng``; about 20 s). Each of the 25 words
of Carta et al. 2021 App. B is spoken by each of the 7 synthetic speakers in
``SPEAKERS`` (an espeak-ng voice + variant, speaking rate in words per minute,
pitch 0-99)::

    espeak-ng -v VOICE -s RATE -p PITCH -w out.wav WORD

The 22050 Hz output is resampled to 16 kHz (TIMIT's rate) with
``scipy.signal.resample_poly(x, 320, 441)``, rounded to int16, and trimmed to
the word: from 10 ms before the first to 10 ms after the last 10 ms block whose
RMS exceeds 1/30 (-29.5 dB) of the loudest block. The shipped file was made
with eSpeak NG 1.51 (Debian 12); other versions may differ slightly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from ._build_generation import synthesize
from ._words import SUFFIX_CLASSES

SPEAKERS = (
    # (voice+variant, rate wpm, pitch); the last two are the default test set
    ("en-us+m1", 150, 45),
    ("en-gb+f2", 140, 60),
    ("en-gb-scotland+m3", 160, 40),
    ("en-gb-x-rp+f4", 150, 70),
    ("en-029+m5", 135, 50),
    ("en-us-nyc+f1", 155, 55),
    ("en-gb-x-gbcwmd+m4", 145, 35),
)
SAMPLE_RATE = 16000
OUTPUT = Path(__file__).with_name("data") / "common_suffix_words.npz"


def trim(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """Cut leading and trailing silence (see the module docstring)."""
    block = sample_rate // 100
    n_blocks = samples.size // block
    x = samples[: n_blocks * block].astype(np.float64).reshape(n_blocks, block)
    rms = np.sqrt((x**2).mean(axis=1))
    loud = np.flatnonzero(rms > rms.max() / 30.0)
    start = max(0, (loud[0] - 1) * block)
    stop = min(samples.size, (loud[-1] + 2) * block)
    return samples[start:stop]


def main() -> None:
    audio, words, speakers = [], [], []
    for speaker, (voice, rate, pitch) in enumerate(SPEAKERS):
        for suffix_words in SUFFIX_CLASSES.values():
            for word in suffix_words:
                source_rate, samples = synthesize(word, voice, rate=rate, pitch=pitch)
                if source_rate != 22050:
                    raise RuntimeError(f"expected 22050 Hz, got {source_rate}.")
                resampled = resample_poly(samples.astype(np.float64), 320, 441)
                resampled = np.clip(np.rint(resampled), -32768, 32767)
                audio.append(trim(resampled.astype(np.int16), SAMPLE_RATE))
                words.append(word)
                speakers.append(speaker)
    lengths = np.array([a.size for a in audio], dtype=np.int64)
    np.savez_compressed(
        OUTPUT,
        audio=np.concatenate(audio),
        lengths=lengths,
        words=np.array(words),
        speakers=np.array(speakers, dtype=np.int64),
        speaker_names=np.array([f"{v} -s {r} -p {p}" for v, r, p in SPEAKERS]),
        sample_rate=np.int64(SAMPLE_RATE),
    )
    print(
        f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes): {len(audio)} words, "
        f"{lengths.min() / SAMPLE_RATE:.2f}-{lengths.max() / SAMPLE_RATE:.2f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
