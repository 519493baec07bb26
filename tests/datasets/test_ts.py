"""The ``.ts`` reader and the offline loader of the seven archive datasets.

Parser tests run on small synthetic files written to temporary folders; the
tests on the real files skip (with the command that fetches them) when the
aeon/sktime wheels are not in the data folder.
"""

import importlib.util
import io
import types
import zipfile

import numpy as np
import pytest

from sklmn.datasets import _ucr, get_data_home, load_timeseries_dataset, load_ts_file
from sklmn.utils.sequences import check_sequences

HEADER = "@problemName toy\n@timeStamps false\n@classLabel true a b\n@data\n"


def parse(text, **kwargs):
    return load_ts_file(io.StringIO(text), **kwargs)


# -- valid files --
def test_univariate_classification_from_path(tmp_path):
    path = tmp_path / "toy.ts"
    path.write_text(
        "# a comment\n\n@problemName toy\n@univariate true\n@equalLength true\n"
        "@seriesLength 3\n@classLabel true a b\n@data\n1,2,3:a\n# mid comment\n"
        "4,5,6:b\n\n"
    )
    for source in (path, str(path)):
        X, y = load_ts_file(source)
        assert isinstance(X, list) and len(X) == 2
        assert all(x.dtype == np.float64 and x.shape == (3, 1) for x in X)
        np.testing.assert_array_equal(X[1].ravel(), [4, 5, 6])
        assert y.tolist() == ["a", "b"]
        assert y.dtype.kind == "U"
    # the layout goes straight into sklmn's input contract
    assert check_sequences(X).data.shape == (2, 3, 1)


def test_multivariate_ragged_and_metadata():
    text = (
        "@problemName mv\n@univariate false\n@dimensions 2\n@equalLength false\n"
        "@missing false\n@classLabel true x y z\n@data\n"
        "1,2,3:4,5,6:z\n7:8:x\n"
    )
    X, y, meta = parse(text, return_metadata=True)
    assert [x.shape for x in X] == [(3, 2), (1, 2)]
    np.testing.assert_array_equal(X[0], [[1, 4], [2, 5], [3, 6]])
    assert y.tolist() == ["z", "x"]
    assert meta == {
        "problem_name": "mv",
        "univariate": False,
        "equal_length": False,
        "missing": False,
        "series_length": None,
        "n_dimensions": 2,
        "class_labels": ["x", "y", "z"],
        "task": "classification",
        "n_cases": 2,
        "n_filled": 0,
    }


def test_regression_targets_are_floats():
    X, y, meta = parse(
        "@targetlabel true\n@data\n1,2:3,4:0.5\n5,6:7,8:-1e-2\n", return_metadata=True
    )
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, [0.5, -0.01])
    assert meta["task"] == "regression" and meta["n_dimensions"] == 2


def test_unlabelled_file_returns_none():
    X, y, meta = parse("@classLabel false\n@data\n1,2:3,4\n", return_metadata=True)
    assert y is None and meta["task"] is None
    assert X[0].shape == (2, 2)
    X, y = parse("@data\n1,2,3\n")  # no label keyword at all
    assert y is None and X[0].shape == (3, 1)


def test_case_insensitive_keywords_singular_dimension_crlf_and_bom():
    raw = (
        "\ufeff#c\r\n@PROBLEMNAME t\r\n@timestamps false\r\n@Dimension 2\r\n"
        "@CLASSLABEL true 1 2\r\n@DATA\r\n1,2:3,4:2\r\n"
    ).encode("utf-8")
    X, y = load_ts_file(io.BytesIO(raw))
    assert y.tolist() == ["2"] and X[0].shape == (2, 2)


def test_bom_in_text_stream_is_ignored():
    X, y = load_ts_file(io.StringIO("\ufeff@classLabel true a\n@data\n1:a\n"))
    assert y.tolist() == ["a"]


def test_declared_labels_keep_file_spelling():
    X, y = parse("@classLabel true 01 1\n@data\n1,2:01\n3,4:1\n")
    assert y.tolist() == ["01", "1"]


# -- missing values --
def test_trailing_missing_in_every_dimension_is_padding():
    X, _ = parse(
        "@equalLength true\n@seriesLength 4\n@classLabel true a\n@data\n"
        "1,2,?,?:3,4,?,?:a\n1,2,3,4:5,6,7,8:a\n"
    )
    assert [len(x) for x in X] == [2, 4]
    assert not np.isnan(X[0]).any()


def test_nan_token_is_missing():
    X, _ = parse(HEADER + "1,2,NaN:a\n")
    assert X[0].ravel().tolist() == [1.0, 2.0]


def test_inner_missing_raises_naming_line_and_dimension():
    with pytest.raises(
        ValueError,
        match=r"line 5, dimension 1: missing value at "
        r"time step 1.*missing='interpolate'",
    ):
        parse(HEADER + "1,2,3:4,?,6:a\n")


def test_inner_missing_interpolated():
    X, _, meta = parse(
        HEADER + "1,?,?,4:?,2,?,6:a\n", missing="interpolate", return_metadata=True
    )
    np.testing.assert_allclose(X[0][:, 0], [1, 2, 3, 4])
    # a leading gap takes the first observed value
    np.testing.assert_allclose(X[0][:, 1], [2, 2, 4, 6])
    assert meta["n_filled"] == 4


def test_shorter_dimension_raises_or_is_extended():
    text = HEADER + "1,2,3:4,5:a\n"
    with pytest.raises(
        ValueError,
        match=r"line 5, dimension 1: 2 values but the "
        r"case is 3 steps long",
    ):
        parse(text)
    X, _ = parse(text, missing="interpolate")
    np.testing.assert_allclose(X[0], [[1, 4], [2, 5], [3, 5]])


def test_dimension_without_observed_value_raises_in_both_modes():
    for mode in ("raise", "interpolate"):
        with pytest.raises(ValueError, match=r"line 5, dimension 0: no observed"):
            parse(HEADER + "?,?,?:1,2,3:a\n", missing=mode)


def test_case_without_observed_value_raises():
    with pytest.raises(ValueError, match=r"line 5: the case has no observed value"):
        parse(HEADER + "?,?:?:a\n")


# -- malformed data lines --
@pytest.mark.parametrize(
    "line, message",
    [
        ("1,x,3:a", r"line 5, dimension 0: value 1 is 'x', not a number"),
        ("1,inf,3:a", r"line 5, dimension 0: value 1 is 'inf'; infinite"),
        ("1,2,:a", r"line 5, dimension 0: value 2 is '', not a number"),
        ("1,2::a", r"line 5, dimension 1: no values"),
        (
            "1,2,3:c",
            r"line 5: class label 'c' is not among the labels declared by "
            r"@classLabel \(line 3\): \['a', 'b'\]",
        ),
        ("1,2,3", r"line 5: expected dimensions followed by ':' and a label"),
        ("1,2,3: ", r"line 5: the label \(after the last ':'\) is empty"),
        ("@extra 1", r"line 5: header line '@extra' after @data"),
    ],
)
def test_bad_data_line(line, message):
    with pytest.raises(ValueError, match=message):
        parse(HEADER + line + "\n")


def test_dimension_count_against_declaration_and_first_case():
    with pytest.raises(
        ValueError,
        match=r"line 4: the case has 2 dimension\(s\), "
        r"expected 3 \(declared by @dimensions on line 1\)",
    ):
        parse("@dimensions 3\n@classLabel true a\n@data\n1:2:a\n")
    with pytest.raises(
        ValueError,
        match=r"line 4: the case has 2 dimension\(s\), "
        r"expected 1 \(declared by @univariate true on line 1\)",
    ):
        parse("@univariate true\n@classLabel true a\n@data\n1:2:a\n")
    with pytest.raises(
        ValueError,
        match=r"line 4: the case has 1 dimension\(s\), "
        r"expected 2 \(as the first case, on line 3\)",
    ):
        parse("@classLabel true a\n@data\n1:2:a\n1:a\n")


def test_equal_length_is_checked():
    with pytest.raises(
        ValueError,
        match=r"line 4, dimension 0: 2 values, expected "
        r"3 \(@seriesLength on line 2\)",
    ):
        parse("@equalLength true\n@seriesLength 3\n@data\n1,2\n")
    with pytest.raises(
        ValueError,
        match=r"line 4, dimension 0: 1 values, expected "
        r"2 \(@equalLength true and the first case\)",
    ):
        parse("@equalLength true\n@data\n1,2\n3\n")
    # not checked when the header says the lengths differ
    X, _ = parse("@equalLength false\n@seriesLength 3\n@data\n1,2\n3\n")
    assert [len(x) for x in X] == [2, 1]


def test_regression_target_must_be_a_finite_number():
    with pytest.raises(
        ValueError,
        match=r"line 3: regression target 'high' is not "
        r"a number",
    ):
        parse("@targetLabel true\n@data\n1,2:high\n")
    with pytest.raises(
        ValueError,
        match=r"line 3: regression target 'nan' is not "
        r"finite",
    ):
        parse("@targetLabel true\n@data\n1,2:nan\n")


# -- malformed headers --
@pytest.mark.parametrize(
    "header, message",
    [
        ("@timeStamps true", r"line 1: @timeStamps true is not supported"),
        ("@univariate yes", r"line 1: @univariate must be true or false, got 'yes'"),
        ("@missing", r"line 1: @missing takes one value"),
        (
            "@dimensions two",
            r"line 1: @dimensions takes one positive integer, got "
            r"'two'",
        ),
        ("@seriesLength 0", r"line 1: @seriesLength must be >= 1, got 0"),
        ("@classLabel", r"line 1: @classLabel needs true"),
        (
            "@classLabel true",
            r"line 1: @classLabel true must be followed by the "
            r"class labels",
        ),
        ("@classLabel false a b", r"line 1: @classLabel false takes no labels"),
        ("@classLabel maybe a", r"line 1: @classLabel must be true or false"),
        ("@", r"line 1: empty header keyword"),
        ("@data now", r"line 1: @data takes no value"),
        ("1,2,3", r"line 1: data line before the @data header line"),
        (
            "@classLabel true a\n@targetLabel true",
            r"line 2: @targetLabel true and @classLabel true \(line 1\) cannot both",
        ),
        (
            "@univariate true\n@dimensions 2",
            r"line 2: @dimensions 2 contradicts @univariate true \(line 1\)",
        ),
        (
            "@dimension 2\n@dimensions 2",
            r"line 2: @dimensions repeats the header keyword of line 1",
        ),
    ],
)
def test_bad_header(header, message):
    with pytest.raises(ValueError, match=message):
        parse(header + "\n@data\n1,2:3,4\n")


def test_no_data_section_or_no_case():
    with pytest.raises(ValueError, match=r"no @data line"):
        parse("@problemName x\n")
    with pytest.raises(ValueError, match=r"no case after the @data line"):
        parse("@problemName x\n@data\n\n# nothing\n")


def test_unknown_keyword_warns_and_is_ignored():
    with pytest.warns(
        UserWarning,
        match=r"line 1: unknown header keyword "
        r"@frequency ignored",
    ):
        X, _ = parse("@frequency 30\n@data\n1,2\n")
    assert X[0].shape == (2, 1)


# -- sources and arguments --
def test_reads_zip_member_and_zipfile_path(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("d/toy.ts", HEADER + "1,2:a\n3,4:b\n")
    with zipfile.ZipFile(archive) as zf, zf.open("d/toy.ts") as f:
        X, y = load_ts_file(f)
    assert y.tolist() == ["a", "b"]
    X, y = load_ts_file(zipfile.Path(archive, "d/toy.ts"))
    assert [x.ravel().tolist() for x in X] == [[1, 2], [3, 4]]


def test_argument_validation(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"missing must be one of \('raise', "
        r"'interpolate'\), got 'drop'",
    ):
        parse(HEADER + "1:a\n", missing="drop")
    with pytest.raises(TypeError, match=r"return_metadata must be a bool, got int"):
        parse(HEADER + "1:a\n", return_metadata=1)
    with pytest.raises(TypeError, match=r"path must be a str.*got int: 3"):
        load_ts_file(3)
    bad = tmp_path / "latin1.ts"
    bad.write_bytes("# caf\xe9\n@data\n1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.ts is not UTF-8 text"):
        load_ts_file(bad)
    with pytest.raises(FileNotFoundError):
        load_ts_file(tmp_path / "absent.ts")


def test_reader_returning_something_else_is_refused():
    class Odd:
        def read(self):
            return 42

    with pytest.raises(TypeError, match=r"returned int, expected bytes or str"):
        load_ts_file(Odd())


# -- load_timeseries_dataset without the real wheels --
TOY_TRAIN = "@problemName ArrowHead\n@classLabel true 0 1 2\n@data\n1,2,3:0\n4,5,6:2\n"
TOY_TEST = "@problemName ArrowHead\n@classLabel true 0 1 2\n@data\n7,8,9:1\n"


@pytest.fixture
def no_installed_packages(monkeypatch):
    """Pretend aeon and sktime are not installed (they may be, elsewhere)."""
    monkeypatch.setattr(_ucr, "_installed_package_dirs", lambda package: [])


def test_unknown_name_and_bad_split():
    with pytest.raises(
        ValueError,
        match=r"unknown dataset 'GunPoint'; sklmn reads "
        r"only \['ArrowHead', 'BasicMotions', 'ItalyPowerDemand', "
        r"'OSULeaf', 'PLAID', 'ACSF1', 'CardanoSentiment'\]",
    ):
        load_timeseries_dataset("GunPoint")
    with pytest.raises(ValueError, match=r"unknown dataset 3"):
        load_timeseries_dataset(3)
    with pytest.raises(
        ValueError,
        match=r"split must be one of \('train', 'test', "
        r"'both'\), got 'all'",
    ):
        load_timeseries_dataset("ArrowHead", split="all")


def test_missing_files_error_names_the_command(tmp_path, no_installed_packages):
    with pytest.raises(
        FileNotFoundError,
        match=r"the train file of OSULeaf was not "
        r"found.*bash dev.sh data.*pip download --no-deps "
        r"aeon==1.6.0 sktime==1.2.0",
    ):
        load_timeseries_dataset("OSULeaf", data_home=tmp_path)


def test_bad_missing_is_named_before_the_files_are_looked_for(
    tmp_path, no_installed_packages
):
    # without the files, it was reported as a FileNotFoundError
    with pytest.raises(ValueError, match=r"missing must be one of .*got 'skip'"):
        load_timeseries_dataset("OSULeaf", missing="skip", data_home=tmp_path)


def _write_wheel(path, package, files):
    with zipfile.ZipFile(path, "w") as zf:
        for split, text in files.items():
            zf.writestr(f"{package}/datasets/data/ArrowHead/ArrowHead_{split}.ts", text)


def test_reads_from_a_wheel_in_the_data_home(tmp_path, no_installed_packages):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "aeon-0.0.1-py3-none-any.whl").write_bytes(b"not a zip")  # skipped
    _write_wheel(
        wheels / "sktime-9.9-py3-none-any.whl",
        "sktime",
        {"TRAIN": TOY_TRAIN, "TEST": TOY_TEST},
    )
    X, y = load_timeseries_dataset("ArrowHead", data_home=tmp_path)
    assert y.tolist() == ["0", "2"] and X[1].ravel().tolist() == [4, 5, 6]
    X_train, X_test, y_train, y_test = load_timeseries_dataset(
        "ArrowHead", split="both", data_home=tmp_path
    )
    assert len(X_train) == 2 and y_test.tolist() == ["1"]
    assert X_test[0].shape == (3, 1)


def test_aeon_wheel_wins_over_sktime_and_missing_member_falls_through(
    tmp_path, no_installed_packages
):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _write_wheel(wheels / "aeon-1.6.0-py3-none-any.whl", "aeon", {"TRAIN": TOY_TRAIN})
    _write_wheel(
        wheels / "sktime-1.2.0-py3-none-any.whl",
        "sktime",
        {"TRAIN": TOY_TEST, "TEST": TOY_TEST},
    )
    _, y = load_timeseries_dataset("ArrowHead", data_home=tmp_path)
    assert y.tolist() == ["0", "2"]  # aeon's copy
    _, y = load_timeseries_dataset("ArrowHead", split="test", data_home=tmp_path)
    assert y.tolist() == ["1"]  # only sktime's wheel has the test file


def test_installed_package_folder_comes_first(tmp_path, monkeypatch):
    site = tmp_path / "site"
    folder = site / "aeon" / "datasets" / "data" / "ArrowHead"
    folder.mkdir(parents=True)
    (folder / "ArrowHead_TRAIN.ts").write_text(TOY_TEST)
    real_find_spec = importlib.util.find_spec

    def fake_find_spec(name, *args):
        if name == "aeon":
            return types.SimpleNamespace(
                submodule_search_locations=[str(site / "aeon")]
            )
        if name == "sktime":
            return None
        return real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    _, y = load_timeseries_dataset("ArrowHead", data_home=tmp_path / "home")
    assert y.tolist() == ["1"]


def test_installed_package_lookup_does_not_import():
    assert _ucr._installed_package_dirs("sklmn_no_such_package") == []
    dirs = _ucr._installed_package_dirs("sklmn")
    assert dirs and (dirs[0] / "datasets").is_dir()


# -- the real files (need the wheels) --
def _real_files_available():
    try:
        _ucr._locate("ArrowHead", "train", None)
        _ucr._locate("PLAID", "train", None)
        _ucr._locate("CardanoSentiment", "train", None)
    except FileNotFoundError:
        return False
    return True


needs_wheels = pytest.mark.skipif(
    not _real_files_available(),
    reason="the aeon/sktime wheels holding the .ts files are not in "
    f"{get_data_home() / 'wheels'}; fetch them with `bash dev.sh data`",
)


@needs_wheels
@pytest.mark.parametrize("name", list(_ucr._DATASETS))
def test_real_dataset_shapes(name):
    task, dims, length, n_train, n_test, n_classes = _ucr._DATASETS[name]
    X_train, X_test, y_train, y_test = load_timeseries_dataset(name, split="both")
    assert (len(X_train), len(X_test)) == (n_train, n_test)
    assert len(y_train) == n_train and len(y_test) == n_test
    for x in X_train[:5] + X_test[:5]:
        assert x.ndim == 2 and x.shape[1] == dims and x.dtype == np.float64
        assert np.isfinite(x).all()
        if length != "varies":
            assert x.shape[0] == length
    if task == "classification":
        assert y_train.dtype.kind == "U"
        assert len(set(y_train)) == n_classes
    else:
        assert y_train.dtype == np.float64 and np.isfinite(y_train).all()


@needs_wheels
def test_real_plaid_is_ragged():
    X, _ = load_timeseries_dataset("PLAID")
    lengths = {len(x) for x in X}
    assert len(lengths) > 1
    seqs = check_sequences(X)
    assert seqs.ragged and seqs.lengths.max() == max(lengths)


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.ts"
    path.write_text(HEADER + "1,2:c\n")
    with pytest.raises(ValueError, match=r"bad\.ts: line 5: class label 'c'"):
        load_ts_file(path)
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("d/inner.ts", "@problemName x\n")
    with zipfile.ZipFile(archive) as zf, zf.open("d/inner.ts") as f:
        with pytest.raises(ValueError, match=r"d/inner\.ts: no @data line"):
            load_ts_file(f)
