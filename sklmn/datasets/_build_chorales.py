"""Rebuild ``data/bach_chorales.npz`` from the music21 corpus.

Run ``python -m sklmn.datasets._build_chorales`` (needs ``music21``; about a
minute). Writes the one-frame-per-quarter piano rolls of the 348 distinct
Riemenschneider chorales, bit-packed (see ``load_bach_chorales.DESCR``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ._chorales import N_CHORALES, _convert_with_music21, _pack

OUTPUT = Path(__file__).with_name("data") / "bach_chorales.npz"


def main() -> None:
    import music21

    rolls, names = _convert_with_music21(1, N_CHORALES)
    _pack(rolls, names, OUTPUT)
    frames = sum(len(r) for r in rolls)
    print(
        f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes): {len(rolls)} chorales, "
        f"{frames} frames, music21 {music21.__version__}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
