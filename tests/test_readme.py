"""The README's Python snippets (and those of the docs pages that show
runnable code) run as written, without warnings, and print what they show.

Every fenced ``python`` block of README.md, ``docs/getting_started.md``,
``docs/extending.md`` (the plug-in protocol), ``docs/memory.md`` and the
user-guide pages ``input.md``, ``targets.md``, ``baselines.md`` and
``pretraining.md`` is executed in a fresh namespace, in a temporary working
directory. A block preceded by the line ``<!-- readme-test: skip -->`` (or,
in the MyST pages, the comment ``% readme-test: skip``) is skipped: at the
moment the ``check_estimator`` call of the getting-started page, which runs
scikit-learn's whole check list (the test suite runs it for every estimator
already), and the character-level Penn Treebank run of the baselines page,
which needs the data set and is a long training run.

Where a ``print(...)`` call is followed by a comment, on its last line or on
the next line alone, that comment is the line the call must print: the text
must match exactly, numbers within 0.002 (the last digit shown may round
the other way on another CPU).
"""

import ast
import contextlib
import io
import math
import re
import textwrap
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SKIP_MARKS = ("<!-- readme-test: skip -->", "% readme-test: skip")
PAGES = [
    README,
    ROOT / "docs" / "getting_started.md",
    ROOT / "docs" / "extending.md",
    ROOT / "docs" / "memory.md",
    ROOT / "docs" / "user_guide" / "input.md",
    ROOT / "docs" / "user_guide" / "targets.md",
    ROOT / "docs" / "user_guide" / "baselines.md",
    ROOT / "docs" / "user_guide" / "pretraining.md",
]


def _python_blocks(text):
    """``(heading, first line number, code, skipped)`` of every python block."""
    blocks, heading = [], "top"
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        if line.strip() == "```python":
            skipped = i > 0 and lines[i - 1].strip() in SKIP_MARKS
            start = i + 1
            end = start
            while lines[end].strip() != "```":
                end += 1
            # a block inside a list item is indented with it
            code = textwrap.dedent("\n".join(lines[start:end]))
            blocks.append((heading, start + 1, code, skipped))
            i = end
        i += 1
    return blocks


def _all_blocks():
    params = []
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        for block in _python_blocks(page.read_text(encoding="utf-8")):
            heading, lineno, _, _ = block
            slug = re.sub(r"\W+", "-", heading.lower()).strip("-")
            params.append(pytest.param(page, block, id=f"{name}:L{lineno}-{slug}"))
    return params


BLOCKS = _all_blocks()


def test_readme_has_python_blocks():
    readme_blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert len(readme_blocks) >= 3
    assert not any(skipped for *_, skipped in readme_blocks)


def test_readme_is_a_front_page():
    """The README stays short: details live in docs/."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def expected_prints(code):
    """The expected output line of each ``print`` call that shows one.

    Returns a list with one entry per top-level ``print(...)`` statement in
    source order: the comment that follows it, or None when none does
    (prints inside loops or functions are not read).
    """
    lines = code.splitlines()
    expected = []
    for node in ast.parse(code).body:
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
        ):
            continue
        last = lines[node.end_lineno - 1]
        comment = None
        tail = last[node.end_col_offset :].strip()
        if tail.startswith("#"):
            comment = tail[1:].strip()
        elif node.end_lineno < len(lines):
            following = lines[node.end_lineno].strip()
            if following.startswith("#"):
                comment = following[1:].strip()
        expected.append((node.lineno, comment))
    return [comment for _, comment in expected]


_NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


def _same_output(printed, expected):
    if _NUMBER.sub("#", printed) != _NUMBER.sub("#", expected):
        return False
    got, want = _NUMBER.findall(printed), _NUMBER.findall(expected)
    return all(
        math.isclose(float(g), float(w), abs_tol=2e-3)
        for g, w in zip(got, want, strict=False)
    )


def test_expected_prints_reads_comments():
    code = 'print(1)  # 1\nprint("a")\n# a\nx = 1\nprint(x)\n'
    assert expected_prints(code) == ["1", "a", None]
    assert _same_output("accuracy 0.955", "accuracy 0.956")
    assert not _same_output("accuracy 0.950", "accuracy 0.956")
    assert not _same_output("{'a': 16} 0.956", "{'a': 32} 0.956")


@pytest.mark.parametrize("page,block", BLOCKS)
def test_snippet_runs(page, block, tmp_path, monkeypatch):
    heading, lineno, code, skipped = block
    if skipped:
        pytest.skip(f"{page.name} block at line {lineno} is marked skip")
    _run_block(page, lineno, code, tmp_path, monkeypatch)


def _run_block(path, lineno, code, tmp_path, monkeypatch):
    """Run one snippet in a fresh namespace; it must not warn and must print
    what its comments show."""
    monkeypatch.chdir(tmp_path)
    compiled = compile(code, f"{path}:{lineno}", "exec")
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out):
            exec(compiled, {"__name__": "__snippet__"})
    messages = [f"{w.category.__name__}: {w.message}" for w in caught]
    assert not messages, f"{path.name} block at line {lineno} warns: {messages}"
    printed = out.getvalue().splitlines()
    expected = expected_prints(code)
    if all(want is None for want in expected):
        return
    assert len(printed) == len(expected), (
        f"{path.name} block at line {lineno} printed {printed!r}; "
        f"{len(expected)} print calls expected one line each"
    )
    for got, want in zip(printed, expected, strict=True):
        if want is not None:
            assert _same_output(got, want), (
                f"{path.name} block at line {lineno} printed {got!r}, "
                f"the page shows {want!r}"
            )
