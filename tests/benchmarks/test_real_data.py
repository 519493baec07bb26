"""``--data-dir``: the experiments run on the papers' real data found there
(written here in the original formats, tiny) and say so in the report."""

import contextlib
import pickle
import wave

import numpy as np
import pytest

from sklmn.benchmarks import EXPERIMENTS
from sklmn.benchmarks.__main__ import main
from sklmn.benchmarks._real_data import REAL_DATA, data_note, locate
from sklmn.benchmarks._runner import (
    ExperimentResult,
    Row,
    _with_data_dir,
    run_experiments,
)


def _uses_data_dir(preset, output_dir, log, *, seed=0, data_dir=None):
    return ExperimentResult(
        "with-data",
        rows=[Row("t", "m", "acc", 1.0)],
        data=f"real data from {data_dir.name}" if data_dir else "stand-in",
    )


def _generated(preset, output_dir, log, *, seed=0):
    return ExperimentResult("generated", rows=[Row("t", "m", "acc", 1.0)])


def test_data_dir_reaches_the_experiments_that_take_it(tmp_path):
    data_dir = tmp_path / "realdata"
    data_dir.mkdir()
    with_data, generated = run_experiments(
        {
            "with-data": (_uses_data_dir, "takes data_dir"),
            "generated": (_generated, "does not"),
        },
        "quick",
        output_dir=tmp_path / "out",
        log=lambda _: None,
        seeds=[0, 1],
        data_dir=data_dir,
    )
    assert with_data.data == "real data from realdata"
    assert generated.data == ""
    report = (tmp_path / "out" / "results.md").read_text()
    assert "## Data" in report
    assert "| with-data | real data from realdata |" in report
    assert "| generated | generated or bundled (no real-data counterpart) |" in report
    # worker processes receive the bound function: it pickles
    bound = pickle.loads(pickle.dumps(_with_data_dir(_uses_data_dir, data_dir)))
    assert bound("quick", tmp_path, print).data == "real data from realdata"
    assert _with_data_dir(_generated, data_dir) is _generated
    with pytest.raises(ValueError, match="data_dir must be a folder"):
        run_experiments({}, "quick", output_dir=tmp_path, data_dir=tmp_path / "no")


def test_locate_and_the_report_line(tmp_path):
    assert set(REAL_DATA) <= set(EXPERIMENTS)
    assert locate("sequential-digits", tmp_path) is None
    note = data_note("sequential-digits", tmp_path, None, "8x8 digits")
    assert note == f"stand-in: 8x8 digits ({tmp_path / 'mnist'} not found)"
    (tmp_path / "mnist").mkdir()
    path = locate("sequential-digits", tmp_path)
    assert path == tmp_path / "mnist"
    assert data_note("sequential-digits", tmp_path, path, "x").startswith(
        "real data: MNIST (IDX files), read from"
    )


def test_cli_passes_data_dir_and_checks_it(tmp_path, monkeypatch, capsys):
    from sklmn.benchmarks import __main__ as cli

    calls = []
    monkeypatch.setattr(
        cli, "run_benchmarks", lambda preset, **kw: calls.append(kw) or []
    )
    assert main(["--data-dir", str(tmp_path), "--no-progress"]) == 0
    assert calls[0]["data_dir"] == str(tmp_path)
    with pytest.raises(SystemExit):
        main(["--data-dir", str(tmp_path / "missing")])
    assert "is not a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--suite", "timeseries", "--data-dir", str(tmp_path)])
    assert "only with --suite papers" in capsys.readouterr().err


def _idx(array, magic):
    dims = b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return magic.to_bytes(4, "big") + dims + array.astype(np.uint8).tobytes()


def _write_mnist(folder, rng):
    folder.mkdir()
    for part, n in (("train", 40), ("t10k", 20)):
        labels = np.arange(n) % 2
        images = rng.randint(0, 60, (n, 28, 28))
        images[labels == 1, :14] += 150  # class 1: a bright upper half
        (folder / f"{part}-images-idx3-ubyte").write_bytes(_idx(images, 2051))
        (folder / f"{part}-labels-idx1-ubyte").write_bytes(_idx(labels, 2049))


def _write_music(folder, rng):
    folder.mkdir()

    def piece(n):
        return [
            tuple(int(k) for k in rng.choice(np.arange(48, 80), 3)) for _ in range(n)
        ]

    sets = {"train": [piece(12) for _ in range(6)], "valid": [piece(10)] * 2,
            "test": [piece(11)] * 2}  # fmt: skip
    (folder / "JSB Chorales.pickle").write_bytes(pickle.dumps(sets, protocol=2))


def _write_timit(root, rng):
    for w, word in enumerate(("making", "subway")):
        sentence = {"making": "SX430", "subway": "SX246"}[word]
        for i in range(7):
            folder = root / "TRAIN" / "DR1" / f"M{word[:2].upper()}{i}0"
            folder.mkdir(parents=True)
            t = np.arange(4000) / 16000
            tone = 3000 * np.sin(2 * np.pi * (300 + 700 * w) * t)
            samples = (tone + rng.normal(0, 100, 4000)).astype("<i2")
            with wave.open(str(folder / f"{sentence}.WAV"), "wb") as stream:
                stream.setnchannels(1)
                stream.setsampwidth(2)
                stream.setframerate(16000)
                stream.writeframes(samples.tobytes())
            (folder / f"{sentence}.PHN").write_text("0 4000 h#\n")
            (folder / f"{sentence}.WRD").write_text(f"200 3800 {word}\n")
    (root / "TEST").mkdir()


def _write_iam(root, rng):
    texts = {"trainset": ["ab", "ba", "ab", "ba"], "testset_v": ["ab"],
             "testset_f": ["ba"], "testset_t": ["ab", "ba"]}  # fmt: skip
    number = 0
    for name, lines in texts.items():
        forms = []
        for text in lines:
            form = f"a{number:02d}-000x"
            number += 1
            forms.append(form)
            strokes = []
            for s in range(4):
                points = "".join(
                    f'<Point x="{x}" y="{y}" time="{s + k / 10}"/>'
                    for k, (x, y) in enumerate(rng.randint(0, 100, (6, 2)))
                )
                strokes.append(f"<Stroke>{points}</Stroke>")
            xml = f"<WhiteboardCaptureSession><StrokeSet>{''.join(strokes)}"
            xml += "</StrokeSet></WhiteboardCaptureSession>"
            folder = root / "lineStrokes" / form[:3] / form[:7]
            folder.mkdir(parents=True)
            (folder / f"{form}-01.xml").write_text(xml)
            folder = root / "ascii" / form[:3] / form[:7]
            folder.mkdir(parents=True)
            (folder / f"{form}.txt").write_text(f"CSR:\n\n{text}\n")
        (root / f"{name}.txt").write_text("".join(f + "\n" for f in forms))


def _write_ptb(folder, rng):
    folder.mkdir()
    words = ["the", "cat", "sat", "on", "a", "mat", "<unk>", "N"]
    for part, n in (("train", 300), ("valid", 40), ("test", 40)):
        lines = [" ".join(rng.choice(words, 6)) for _ in range(n // 6)]
        (folder / f"ptb.{part}.txt").write_text("".join(f" {ln} \n" for ln in lines))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("papers_data")
    rng = np.random.RandomState(0)
    _write_mnist(root / "mnist", rng)
    _write_music(root / "music", rng)
    _write_timit(root / "timit", rng)
    _write_iam(root / "iam-ondb", rng)
    _write_ptb(root / "ptb", rng)
    return root


@pytest.mark.parametrize("name", sorted(REAL_DATA))
def test_experiment_runs_on_the_real_data_found(name, data_dir, tmp_path):
    fn, _ = EXPERIMENTS[name]
    # the tiny TIMIT holds 2 of the 25 words: the loader warns about the others
    expected = pytest.warns(UserWarning, match="fewer than 7 utterances")
    with expected if name == "common-suffix-words" else contextlib.nullcontext():
        result = fn("test", tmp_path, lambda _: None, data_dir=data_dir)
    assert result.data.startswith("real data: "), result.data
    assert str(data_dir) in result.data
    assert result.rows and not result.error
