"""Hostile and corrupt model files: every one ends in ``ModelFileError``
(a ValueError) quickly, without large allocations; warm starts after a safe
load work for estimators with nested objects."""

import copy
import io
import json
import struct
import zipfile

import numpy as np
import pytest
import torch

from sklmn import pretraining
from sklmn.estimators import LMNClassifier, LMNRegressor, MultiScaleLMNRegressor
from sklmn.laes import LAESTransformer
from sklmn.persistence import ModelFileError, UntrustedTypeError, load, save
from tests._helpers import _quiet


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Members of the archives of a tiny fitted LMN classifier and LAES."""
    rng = np.random.RandomState(0)
    X = rng.randn(12, 6, 2)
    y = rng.randint(0, 3, 12)
    lmn = LMNClassifier(hidden_size=3, memory_size=2, max_iter=2, random_state=0)
    _quiet(lmn.fit, X, y)
    laes = LAESTransformer(n_components=2).fit(X)
    out = {}
    for name, est in (("lmn", lmn), ("laes", laes)):
        path = tmp_path_factory.mktemp("saved") / f"{name}.sklmn"
        save(est, path)
        with zipfile.ZipFile(path) as archive:
            out[name] = {n: archive.read(n) for n in archive.namelist()}
    out["X"] = X
    return out


def _write(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _manifest(members):
    return json.loads(members["manifest.json"])


def _with_manifest(members, manifest):
    out = dict(members)
    out["manifest.json"] = (
        manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
    )
    return out


def _assert_rejected_or_usable(path, X):
    try:
        est = load(path)
    except ModelFileError:
        return "rejected"
    # a variant that loads is a working model
    if hasattr(est, "net_"):
        assert np.isfinite(est.predict_proba(X)).all()
    elif hasattr(est, "components_"):
        assert np.isfinite(est.transform(X)).all()
    return "loaded"


# ------------------------------------------------------ reported attacks
@pytest.mark.parametrize(
    "where, key, value",
    [
        ("params", "hidden_size", 12000),
        ("params", "num_layers", 10**6),
        ("params", "memory_size", 2**40),
        ("attributes", "n_features_in_", 10**9),
        ("attributes", "n_outputs_", 10**9),
        ("net", "n_modules", 10**9),
        ("attributes", "n_features_in_", "2"),
        ("attributes", "n_features_in_", -5),
        ("params", "device", "not-a-device"),
        ("net", "device", "cuda:abc"),
    ],
)
def test_tampered_sizes_and_types_are_rejected(saved, tmp_path, where, key, value):
    manifest = _manifest(saved["lmn"])
    manifest["estimator"][where][key] = value
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    with pytest.raises(ModelFileError):
        load(path)


@pytest.mark.parametrize(
    "where, key", [("params", "num_layers"), ("params", "hidden_size")]
)
def test_tampered_parameters_within_the_size_bound_do_not_build(
    saved, tmp_path, where, key
):
    # the network is rebuilt from the parameters of the fit (_fitted_params):
    # a parameter changed after it (set_params, or a tampered manifest within
    # the size bound) is what the next fit builds, not the loaded network
    manifest = _manifest(saved["lmn"])
    manifest["estimator"][where][key] = 1000
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    assert _assert_rejected_or_usable(path, saved["X"]) == "loaded"
    loaded = load(path)
    assert getattr(loaded, key) == 1000
    assert loaded._fitted_params[key] != 1000
    n_weights = sum(p.numel() for p in loaded.net_.module_.parameters())
    assert n_weights < 1000


@pytest.mark.parametrize(
    "pairs",
    [
        [[0, 1.0], [0, 2.0]],  # a key twice
        [[[1, 2], 1.0]],  # a key that is not a scalar
        [[{"__tuple__": [1]}, 1.0]],
        [[0, 1.0, 2.0]],  # not a pair
        [0],
        "not a list",
    ],
)
def test_malformed_dict_pairs_are_rejected(saved, tmp_path, pairs):
    manifest = _manifest(saved["lmn"])
    manifest["estimator"]["params"]["class_weight"] = {"__pairs__": pairs}
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    with pytest.raises(ModelFileError):
        load(path)

@pytest.mark.parametrize("version", [-5, 0, "1", 1.0, True, None, 99])
def test_bad_format_versions_are_rejected(saved, tmp_path, version):
    manifest = _manifest(saved["lmn"])
    manifest["format_version"] = version
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    with pytest.raises(ModelFileError, match="format version"):
        load(path)


@pytest.mark.parametrize(
    "name", ["predict", "fit", "__class__", "net_", "get_params", "coef_"]
)
def test_only_listed_fitted_attributes_can_be_set(saved, tmp_path, name):
    manifest = _manifest(saved["lmn"])
    manifest["estimator"]["attributes"][name] = 1
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    with pytest.raises(ModelFileError, match="not a fitted attribute"):
        load(path)


def _declare_size(data: bytes, member: str, size: int) -> bytes:
    """Patch the central directory to declare ``size`` uncompressed bytes."""
    data = bytearray(data)
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) >= 0:
        n = struct.unpack("<H", data[start + 28 : start + 30])[0]
        if data[start + 46 : start + 46 + n] == member.encode():
            data[start + 24 : start + 28] = struct.pack("<I", size)
        start += 4
    return bytes(data)


def test_declared_uncompressed_sizes_are_checked_before_reading(saved, tmp_path):
    members = saved["laes"]
    npy = sorted(n for n in members if n.endswith(".npy"))[0]
    path = _write(tmp_path / "m.sklmn", members)
    bomb = tmp_path / "bomb.sklmn"
    bomb.write_bytes(_declare_size(path.read_bytes(), npy, 2**31 - 1))
    with pytest.raises(ModelFileError, match="declares 2147483647 bytes"):
        load(bomb)
    # a real bomb: 4 MiB of zeros deflate to a few KiB
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(2**20, dtype=np.float32))
    real = _write(tmp_path / "real.sklmn", {**members, npy: buffer.getvalue()})
    assert real.stat().st_size < 2**16
    with pytest.raises(ModelFileError, match="max_bytes"):
        load(real, max_bytes=2**20)


def test_exceptions_of_corrupt_files_are_one_documented_type(saved, tmp_path):
    assert issubclass(UntrustedTypeError, ModelFileError)
    assert issubclass(ModelFileError, ValueError)
    deep = b'{"format": "sklmn-safe-estimator", "format_version": 1, "estimator": '
    deep += b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ModelFileError):
        load(_write(tmp_path / "deep.sklmn", {"manifest.json": deep}))
    with pytest.raises(FileNotFoundError):  # not a file problem: an OSError
        load(tmp_path / "missing.sklmn")


# ------------------------------------------------------ generated fuzz corpus
_HOSTILE_VALUES = [
    -5,
    0,
    2**62,
    "2",
    2.5,
    None,
    True,
    [],
    {},
    {"__float__": "nan"},
    {"__ndarray__": "arrays/missing.npy"},
    {"__tuple__": 3},
    {"__estimator__": {"class": "os.system"}},
    {"__unknown__": 1},
]

_LMN_PATHS = [
    ("estimator", "params", "hidden_size"),
    ("estimator", "params", "memory_matrix"),
    ("estimator", "params", "target"),
    ("estimator", "attributes", "n_features_in_"),
    ("estimator", "attributes", "n_outputs_"),
    ("estimator", "attributes", "classes_"),
    ("estimator", "attributes", "_problem"),
    ("estimator", "attributes", "input_mean_"),
    ("estimator", "net", "state_dict"),
    ("estimator", "net", "n_modules"),
]
_LAES_PATHS = [
    ("estimator", "attributes", "A_"),
    ("estimator", "attributes", "n_components_"),
]


def _set_path(manifest, path, value):
    node = manifest
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _variants(saved):
    """(id, members) of >= 100 hostile variants of the two archives."""
    for name, paths in (("lmn", _LMN_PATHS), ("laes", _LAES_PATHS)):
        members = saved[name]
        for path in paths:
            for i, value in enumerate(_HOSTILE_VALUES):
                manifest = _manifest(members)
                _set_path(manifest, path, copy.deepcopy(value))
                yield f"{name}-{path[-1]}-{i}", _with_manifest(members, manifest)
        for key in ("class", "params", "attributes", "net"):
            manifest = _manifest(members)
            manifest["estimator"].pop(key, None)
            yield f"{name}-drop-{key}", _with_manifest(members, manifest)
        for member, data in members.items():
            for cut in (0, 10, len(data) // 2):
                yield f"{name}-truncate-{member}-{cut}", {**members, member: data[:cut]}
            flipped = bytearray(data)
            flipped[len(data) // 3] ^= 0xFF
            yield f"{name}-flip-{member}", {**members, member: bytes(flipped)}
        for text in (b"", b"[]", b"{", b'{"format": NaN}', b"\xff\xfe"):
            yield f"{name}-manifest-{text[:4]!r}", _with_manifest(members, text)
    lmn = saved["lmn"]
    arrays = sorted(n for n in lmn if n.endswith(".npy"))
    weights = next(n for n in lmn if n.endswith(".pt"))
    yield "swap-arrays", {**lmn, arrays[0]: lmn[arrays[-1]], arrays[-1]: lmn[arrays[0]]}
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    yield "object-npy", {**lmn, arrays[0]: buffer.getvalue()}
    huge_header = lmn[arrays[0]].replace(b"'shape': (", b"'shape': (99999999999, ")
    yield "npy-huge-shape", {**lmn, arrays[0]: huge_header}
    legacy = io.BytesIO()
    torch.save({"x": torch.zeros(2)}, legacy, _use_new_zipfile_serialization=False)
    yield "legacy-torch-pickle", {**lmn, weights: legacy.getvalue()}
    other = io.BytesIO()
    torch.save({"readout.weight": torch.zeros(3, 2)}, other)
    yield "wrong-state-dict", {**lmn, weights: other.getvalue()}
    yield "npy-as-weights", {**lmn, weights: lmn[arrays[0]]}
    yield "no-manifest", {k: v for k, v in lmn.items() if k != "manifest.json"}


def test_hostile_file_corpus(saved, tmp_path):
    variants = list(_variants(saved))
    assert len(variants) >= 100
    outcomes = {}
    for i, (name, members) in enumerate(variants):
        path = _write(tmp_path / f"{i}.sklmn", members)
        try:
            outcomes[name] = _assert_rejected_or_usable(path, saved["X"])
        except Exception as exc:  # pragma: no cover - the failure message
            msg = f"variant {name}: {type(exc).__name__}: {exc}"
            raise AssertionError(msg) from exc
    # nearly every variant is rejected; the few that load are working models
    rejected = sum(o == "rejected" for o in outcomes.values())
    assert rejected >= 0.9 * len(outcomes)


# ----------------------------------------------- warm starts after safe load
def _warm_start_after_load(est, X, y, tmp_path):
    _quiet(est.fit, X, y)
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn").set_params(warm_start=True, max_iter=1)
    _quiet(loaded.fit, X, y)
    assert loaded.n_iter_ == est.n_iter_ + 1
    # a real change of a nested object's parameters is still refused
    return loaded


def test_warm_start_after_load_with_nested_objects(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(20, 6, 1)
    y = X[:, 0, 0]
    cases = [
        LMNRegressor(
            hidden_size=3,
            memory_size=3,
            pretrainer=pretraining.LAESInitializer(),
            max_iter=2,
            random_state=0,
        ),
        LMNClassifier(
            hidden_size=3,
            memory_size=3,
            pretrainer=pretraining.UnrolledPretrainer(),
            max_iter=2,
            random_state=0,
        ),
        MultiScaleLMNRegressor(
            hidden_size=3,
            memory_size=2,
            n_modules=2,
            incremental=pretraining.IncrementalTraining(
                epochs_per_module=1, min_improvement=-1.0
            ),
            max_iter=3,
            random_state=0,
        ),
    ]
    for est in cases:
        target = (y > 0).astype(int) if hasattr(est, "predict_proba") else y
        loaded = _warm_start_after_load(est, X, target, tmp_path)
        nested = "incremental" if hasattr(est, "incremental") else "pretrainer"
        other = pretraining.LAESInitializer(n_components=2)
        if nested == "incremental":
            other = pretraining.IncrementalTraining(epochs_per_module=5)
        match = f"cannot change the model's parameters.*{nested}"
        with pytest.raises(ValueError, match=match):
            loaded.set_params(**{nested: other}).fit(X, target)


@pytest.mark.parametrize("name, value", [("predict_", 1), ("n_components_", "2")])
def test_pretrainer_attributes_are_listed_and_typed(saved, tmp_path, name, value):
    # the default LMN classifier saves its LAES initializer as a nested node
    manifest = _manifest(saved["lmn"])
    node = manifest["estimator"]["attributes"]["pretrainer_"]["__estimator__"]
    node["attributes"][name] = value
    path = _write(tmp_path / "m.sklmn", _with_manifest(saved["lmn"], manifest))
    with pytest.raises(ModelFileError):
        load(path)
