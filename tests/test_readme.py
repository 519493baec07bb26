"""The README's Python snippets run as written, without warnings.

Every fenced ``python`` block of README.md (and of ``docs/extending.md``,
the plug-in protocol) is executed in a fresh namespace,
in a temporary working directory. A block preceded by the line
``<!-- readme-test: skip -->`` is skipped (none is, at the moment).
"""

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SKIP_MARK = "<!-- readme-test: skip -->"


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
            skipped = i > 0 and lines[i - 1].strip() == SKIP_MARK
            start = i + 1
            end = start
            while lines[end].strip() != "```":
                end += 1
            blocks.append((heading, start + 1, "\n".join(lines[start:end]), skipped))
            i = end
        i += 1
    return blocks


BLOCKS = _python_blocks(README.read_text(encoding="utf-8"))


def _block_id(block):
    heading, lineno, _, _ = block
    return f"L{lineno}-" + re.sub(r"\W+", "-", heading.lower()).strip("-")


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[_block_id(b) for b in BLOCKS])
def test_readme_block_runs(block, tmp_path, monkeypatch):
    heading, lineno, code, skipped = block
    if skipped:
        pytest.skip(f"README block at line {lineno} is marked {SKIP_MARK}")
    _run_block(README, lineno, code, tmp_path, monkeypatch)


def _run_block(path, lineno, code, tmp_path, monkeypatch):
    """Run one snippet in a fresh namespace; it must not warn."""
    monkeypatch.chdir(tmp_path)
    compiled = compile(code, f"{path}:{lineno}", "exec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compiled, {"__name__": "__snippet__"})
    messages = [f"{w.category.__name__}: {w.message}" for w in caught]
    assert not messages, f"{path.name} block at line {lineno} warns: {messages}"


EXTENDING = README.parent / "docs" / "extending.md"
EXTENDING_BLOCKS = _python_blocks(EXTENDING.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "block", EXTENDING_BLOCKS, ids=[_block_id(b) for b in EXTENDING_BLOCKS]
)
def test_extending_block_runs(block, tmp_path, monkeypatch):
    _, lineno, code, _ = block
    _run_block(EXTENDING, lineno, code, tmp_path, monkeypatch)
