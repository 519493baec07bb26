"""Every example of the gallery runs offline (small sizes) and writes its figure."""

import runpy
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("plot_*.py"))
#: examples that need an optional package (skipped without it)
NEEDS = {"plot_handwriting_ctc.py": "HersheyFonts"}


def test_there_are_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    if path.name in NEEDS:
        pytest.importorskip(NEEDS[path.name])
    monkeypatch.setenv("SKLMN_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("SKLMN_EXAMPLE_QUICK", "1")
    monkeypatch.chdir(tmp_path)
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
    assert list(tmp_path.glob("*.png")), f"{path.name} saved no figure"
