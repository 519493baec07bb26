"""Rebuild ``data/generation_speech.npz``, the sequence-generation recording.

Run ``python -m sklmn.datasets._build_generation`` (needs the ``espeak-ng``
program, e.g. ``apt-get install espeak-ng``; not needed to *load* the data).
The synthesized utterance is stored whole (int16 PCM) with the default offset
of the 300-sample window, the one with the largest energy, so that
:func:`sklmn.datasets.load_generation_signal` can cut other windows too.
Other espeak-ng versions may synthesize slightly different samples; the
shipped file was made with eSpeak NG 1.51 (Debian 12).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.io import wavfile

VOICE = "en-us"
RATE_WPM = 120
PITCH = 40
TEXT = "Hello, my lovely world."
WINDOW = 300
OUTPUT = Path(__file__).with_name("data") / "generation_speech.npz"


def synthesize(
    text: str, voice: str, *, rate: int, pitch: int
) -> tuple[int, np.ndarray]:
    """Speak ``text`` with espeak-ng; return (sample_rate, int16 samples)."""
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "out.wav"
        command = ["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch)]
        subprocess.run([*command, "-w", str(wav), text], check=True)
        sample_rate, samples = wavfile.read(wav)
    return int(sample_rate), np.asarray(samples, dtype=np.int16)


def loudest_window(samples: np.ndarray, width: int) -> int:
    """Start of the ``width``-sample window with the largest energy."""
    x = samples.astype(np.float64)
    cumulative = np.concatenate([[0.0], np.cumsum(x**2)])
    return int(np.argmax(cumulative[width:] - cumulative[:-width]))


def main() -> None:
    sample_rate, audio = synthesize(TEXT, VOICE, rate=RATE_WPM, pitch=PITCH)
    offset = loudest_window(audio, WINDOW)
    command = f'espeak-ng -v {VOICE} -s {RATE_WPM} -p {PITCH} -w out.wav "{TEXT}"'
    np.savez_compressed(
        OUTPUT,
        audio=audio,
        sample_rate=np.int64(sample_rate),
        offset=np.int64(offset),
        command=np.str_(command),
    )
    print(
        f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes): {audio.size} samples "
        f"at {sample_rate} Hz, default offset {offset}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
