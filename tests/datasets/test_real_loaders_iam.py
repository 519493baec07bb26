"""load_iam_ondb on a tiny tree in the IAM-OnDB layout."""

import numpy as np
import pytest

from sklmn.datasets import load_iam_ondb

HEADER = (
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n<WhiteboardCaptureSession>\n'
    '  <WhiteboardDescription>\n    <SensorLocation corner="top_left"/>\n'
    '    <DiagonallyOppositeCoords x="6512" y="1376"/>\n'
    "  </WhiteboardDescription>\n  <StrokeSet>\n"
)


def _xml(strokes):
    body = []
    for stroke in strokes:
        body.append(f'    <Stroke colour="black" start_time="{stroke[0][2]}">')
        body += [f'      <Point x="{x}" y="{y}" time="{t}"/>' for x, y, t in stroke]
        body.append("    </Stroke>")
    return HEADER + "\n".join(body) + "\n  </StrokeSet>\n</WhiteboardCaptureSession>\n"


def _ascii(lines):
    csr = "\n".join(lines)
    return f"Data:\n\nOCR:\n\n{csr.upper()}\n\nCSR:\n\n{csr}\n\n"


STROKES = [[(100, 500, 10.0), (110, 480, 10.5), (130, 470, 11.0)],
           [(200, 500, 12.0)]]  # fmt: skip
FORMS = {  # form id -> (list, lines); a04-000a is listed but has no strokes
    "a01-000u": ("trainset.txt", ["A MOVE to stop", "Mr. Gaitskell"]),
    "a01-001w": ("testset_v.txt", ["from nominating"]),
    "a02-000x": ("testset_f.txt", ["any more"]),
    "a03-000y": ("testset_t.txt", ["Labour life Peers"]),
}


@pytest.fixture
def root(tmp_path):
    for form, (_, lines) in FORMS.items():
        group = form.split("-")[0]
        strokes = tmp_path / "lineStrokes" / group / form[:7]
        strokes.mkdir(parents=True, exist_ok=True)
        for i, _ in enumerate(lines, start=1):
            (strokes / f"{form}-{i:02d}.xml").write_text(_xml(STROKES))
        text = tmp_path / "ascii" / group / form[:7]
        text.mkdir(parents=True, exist_ok=True)
        (text / f"{form}.txt").write_text(_ascii(lines))
    lists = tmp_path / "task"
    lists.mkdir()
    for name in ("trainset.txt", "testset_v.txt", "testset_f.txt", "testset_t.txt"):
        forms = [f for f, (n, _) in FORMS.items() if n == name]
        if name == "testset_f.txt":
            forms.append("a04-000a")  # listed, no stroke file
        (lists / name).write_text("".join(f + "\n" for f in forms))
    return tmp_path


def test_lines_labels_and_split(root):
    data = load_iam_ondb(root)
    assert data.ids == ["a01-000u-01", "a01-000u-02", "a01-001w-01", "a02-000x-01",
                        "a03-000y-01"]  # fmt: skip
    assert data.y_train.tolist() == ["A MOVE to stop", "Mr. Gaitskell"]
    assert data.y_valid.tolist() == ["from nominating", "any more"]
    assert data.y_test.tolist() == ["Labour life Peers"]
    assert data.split_labels.tolist() == ["train"] * 2 + ["valid"] * 2 + ["test"]
    assert data.n_missing == 1
    assert data.feature_names == ["time", "x", "y", "end_stroke"]
    assert data.alphabet == sorted(set("".join(data.target.tolist())))
    X = data.X_train[0]
    expected = [[0.0, 0.0, 1.0, 0.0], [0.5, 1 / 3, 1 / 3, 0.0],
                [1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]  # fmt: skip
    np.testing.assert_allclose(X, expected, atol=1e-12)
    assert X.dtype == np.float64


def test_offsets_and_the_papers_assignment(root):
    data = load_iam_ondb(
        root,
        features="offsets",
        valid_lists=("testset_t.txt",),
        test_lists=("testset_v.txt", "testset_f.txt"),
    )
    assert data.y_valid.tolist() == ["Labour life Peers"]
    assert data.y_test.tolist() == ["from nominating", "any more"]
    # y points up: the pen moving from y=500 to y=480 on the board goes up
    expected = [[0, 0, 0], [10, 20, 0], [20, 10, 1], [70, -30, 1]]
    np.testing.assert_allclose(data.X_train[0], expected, atol=1e-12)
    X, y = load_iam_ondb(root, split="test", return_X_y=True)
    assert len(X) == len(y) == 1


def test_errors_name_the_problem(root):
    (root / "task" / "testset_t.txt").write_text("a01-000u\n")
    with pytest.raises(ValueError, match="a01-000u-01 is in both"):
        load_iam_ondb(root)
    (root / "task" / "testset_t.txt").unlink()
    with pytest.raises(FileNotFoundError, match="no split list testset_t.txt"):
        load_iam_ondb(root)
    (root / "task" / "testset_t.txt").write_text("a03-000y\n")
    xml = root / "lineStrokes" / "a03" / "a03-000" / "a03-000y-01.xml"
    xml.write_text("<StrokeSet><Stroke><Point x='1' y='2'/></Stroke></StrokeSet>")
    with pytest.raises(ValueError, match="numeric x, y and time"):
        load_iam_ondb(root)
    xml.write_text("<StrokeSet><Stroke>")
    with pytest.raises(ValueError, match="not well-formed XML"):
        load_iam_ondb(root)
    xml.write_text(_xml(STROKES))
    text = root / "ascii" / "a03" / "a03-000" / "a03-000y.txt"
    text.write_text("OCR:\n\nLabour\n")
    with pytest.raises(ValueError, match="no 'CSR:' section"):
        load_iam_ondb(root)
    text.unlink()
    with pytest.raises(FileNotFoundError, match="no transcription a03-000y.txt"):
        load_iam_ondb(root)
    with pytest.raises(FileNotFoundError, match="lineStrokes"):
        load_iam_ondb(root / "ascii")
    with pytest.raises(ValueError, match="features must be"):
        load_iam_ondb(root, features="raw")
    with pytest.raises(TypeError, match="valid_lists must be a tuple"):
        load_iam_ondb(root, valid_lists="testset_v.txt")
