"""Every example of the gallery runs offline (small sizes), writes its figure,
and its figure says what the example did.

Each example runs in its quick mode (``SKLMN_EXAMPLE_QUICK=1``, as in the
documentation build). Then the texts of every open figure (titles, axis
labels, legend entries, annotations) are checked against the example's own
objects: no ``np.str_(...)``-style repr in any text; a legend entry that says
"random" belongs to an estimator of the example with ``pretrainer=None``, one
that says "LAES" to an estimator whose start was a LAES; a transcription shown
in a title is the correct one; epoch axes have integer ticks.
"""

import re
import runpy
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.text import Text
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

from sklmn.pretraining import LAESInitializer

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
        namespace = runpy.run_path(str(path), run_name="__main__")
        figures = [plt.figure(n) for n in plt.get_fignums()]
        assert figures, f"{path.name} drew no figure"
        problems = []
        for fig in figures:
            problems += figure_problems(fig, labelled_estimators(namespace))
    finally:
        plt.close("all")
    assert not problems, f"{path.name}: " + "; ".join(problems)
    assert list(tmp_path.glob("*.png")), f"{path.name} saved no figure"


#: a NumPy scalar's repr, e.g. ``np.str_('box')`` or ``np.float64(0.5)``
_NUMPY_REPR = re.compile(r"\bnp\.\w+\(")
#: a transcription shown in a title: ``written: 'box', transcribed: 'box'``
_TRANSCRIPTION = re.compile(r"written: '([^']*)', transcribed: '([^']*)'")


def labelled_estimators(namespace):
    """``{label: estimator}`` of every dict of the example keyed by strings."""
    found = {}
    for value in namespace.values():
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            for label, est in value.items():
                if isinstance(est, Pipeline):
                    est = est[-1]
                if isinstance(est, BaseEstimator):
                    found[label] = est
    return found


def _start(est):
    """``'random'``, ``'laes'`` or ``'other'``: how the estimator started."""
    params = est.get_params(deep=False)
    if "pretrainer" not in params:
        return "random"
    if params["pretrainer"] is None:
        return "random"
    fitted = getattr(est, "pretrainer_", None)
    if isinstance(fitted, LAESInitializer) or isinstance(
        params["pretrainer"], LAESInitializer
    ):
        return "laes"
    return "other"


def figure_problems(fig, estimators):
    """What the figure's texts claim that the example's objects contradict."""
    problems = []
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text()]
    for text in texts:
        if _NUMPY_REPR.search(text):
            problems.append(f"a NumPy repr in the text {text!r}")
        match = _TRANSCRIPTION.search(text)
        if match and match.group(1) != match.group(2):
            problems.append(f"the figure shows a wrong transcription: {text!r}")
    for ax in fig.axes:
        legend = ax.get_legend()
        labels = [t.get_text() for t in legend.get_texts()] if legend else []
        for label in labels:
            words = label.lower()
            est = estimators.get(label)
            if "random" in words:
                if est is None:
                    problems.append(f"legend {label!r}: no estimator of that label")
                elif _start(est) != "random":
                    problems.append(
                        f"legend {label!r} says random, but the estimator's "
                        f"pretrainer is {est.get_params()['pretrainer']!r}"
                    )
            if "laes" in words and est is not None and _start(est) != "laes":
                problems.append(f"legend {label!r} says LAES, the estimator has none")
        if "epoch" in ax.get_xlabel().lower():
            lo, hi = ax.get_xlim()
            ticks = [x for x in ax.get_xticks() if lo <= x <= hi]
            if not np.allclose(ticks, np.round(ticks)):
                problems.append(f"fractional epoch ticks {ticks}")
    return problems


def test_figure_problems_catches_mislabels():
    import matplotlib.pyplot as plt

    from sklmn import LMNClassifier

    fig, ax = plt.subplots()
    try:
        ax.plot([1, 1.5, 2], [0, 1, 2], label="LMN, random start")
        ax.set_title("written: np.str_('box'), transcribed: 'ixix'")
        ax.set_xlabel("epoch")
        ax.legend()
        fig.canvas.draw()
        problems = figure_problems(fig, {"LMN, random start": LMNClassifier()})
        assert any("NumPy repr" in p for p in problems)
        assert any("says random" in p for p in problems)
        assert any("fractional epoch ticks" in p for p in problems)
        problems = figure_problems(
            fig, {"LMN, random start": LMNClassifier(pretrainer=None)}
        )
        assert not any("says random" in p for p in problems)
        ax.set_title("written: 'box', transcribed: 'fox'")
        assert any("wrong transcription" in p for p in figure_problems(fig, {}))
    finally:
        plt.close(fig)
