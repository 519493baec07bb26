"""Model files that would hang, flood memory or load a broken model: each is
refused by ``load`` with a ``ModelFileError`` naming the member and the
value, before it costs memory (tracemalloc peak)."""

import io
import json
import tracemalloc
import zipfile

import numpy as np
import pytest

from sklmn.estimators import LMNClassifier
from sklmn.laes import LAESTransformer
from sklmn.persistence import MAX_BYTES, ModelFileError, load, save
from tests._helpers import _quiet

PEAK = 32 << 20


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.RandomState(0)
    X = rng.randn(12, 6, 2)
    y = rng.randint(0, 3, 12)
    lmn = LMNClassifier(hidden_size=3, memory_size=2, max_iter=2, random_state=0)
    _quiet(lmn.fit, X, y)
    path = tmp_path_factory.mktemp("saved") / "lmn.sklmn"
    save(lmn, path)
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    return {"members": members, "X": X, "lmn": lmn}


def _write(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _manifest(members):
    return json.loads(members["manifest.json"])


def _npy(arr):
    buffer = io.BytesIO()
    np.save(buffer, arr)
    return buffer.getvalue()


def _member_of(manifest, key):
    return manifest["estimator"]["attributes"][key]["__ndarray__"]


def _peak_of_refused_load(path, **kwargs):
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError) as info:
            load(path, **kwargs)
        return tracemalloc.get_traced_memory()[1], str(info.value)
    finally:
        tracemalloc.stop()


def test_zero_width_dtype_of_a_huge_shape_is_refused(saved, tmp_path):
    members = dict(saved["members"])
    manifest = _manifest(members)
    name = "arrays/names.npy"
    manifest["estimator"]["attributes"]["feature_names_in_"] = {"__ndarray__": name}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<U0", "fortran_order": False, "shape": (2**62,)}
    )
    members[name] = header.getvalue()
    members["manifest.json"] = json.dumps(manifest).encode()
    path = _write(tmp_path / "u0.sklmn", members)
    with pytest.raises(ModelFileError, match=r"names\.npy.*<U0"):
        load(path)


def test_shape_that_the_parameters_do_not_need_is_refused(saved, tmp_path):
    members = dict(saved["members"])
    manifest = _manifest(members)
    name = "arrays/names.npy"
    manifest["estimator"]["attributes"]["feature_names_in_"] = {"__ndarray__": name}
    members[name] = _npy(np.array(["a", "b", "c"]))  # 3 names, 2 features
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ModelFileError, match=r"names\.npy.*\(3,\).*\(2,\)"):
        load(_write(tmp_path / "names.sklmn", members))


@pytest.mark.parametrize(
    "key, values, match",
    [
        ("input_scale_", [np.nan, 1.0], "non-finite value nan"),
        ("input_scale_", [0.0, 1.0], "scales must be positive"),
        ("input_mean_", [np.inf, 0.0], "non-finite value inf"),
    ],
)
def test_non_finite_or_zero_statistics_are_refused(saved, tmp_path, key, values, match):
    members = dict(saved["members"])
    manifest = _manifest(members)
    members[_member_of(manifest, key)] = _npy(np.array(values))
    with pytest.raises(ModelFileError, match=rf"{key}.*{match}|{match}"):
        load(_write(tmp_path / "stat.sklmn", members))


def test_non_finite_weights_are_refused(saved, tmp_path):
    import torch

    members = dict(saved["members"])
    name = next(n for n in members if n.startswith("weights/"))
    state = torch.load(io.BytesIO(members[name]), weights_only=True)
    first = sorted(k for k, v in state.items() if v.is_floating_point())[0]
    state[first] = torch.full_like(state[first], float("nan"))
    buffer = io.BytesIO()
    torch.save(state, buffer)
    members[name] = buffer.getvalue()
    with pytest.raises(ModelFileError, match=rf"{name}.*{first}.*non-finite"):
        load(_write(tmp_path / "w.sklmn", members))


@pytest.mark.parametrize(
    "key, value",
    [("n_threads", 2**31 - 1), ("n_threads", 0), ("alpha", {"__float__": "nan"})],
)
def test_out_of_range_parameters_are_refused(saved, tmp_path, key, value):
    members = dict(saved["members"])
    manifest = _manifest(members)
    manifest["estimator"]["params"][key] = value
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ModelFileError, match=key):
        load(_write(tmp_path / "p.sklmn", members))


def test_n_threads_has_an_upper_bound_in_the_constructor():
    X, y = np.zeros((4, 3, 1)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="n_threads"):
        LMNClassifier(n_threads=2**31 - 1).fit(X, y)


def test_nan_loss_curve_loads_when_tagged_and_is_refused_otherwise(saved, tmp_path):
    members = dict(saved["members"])
    manifest = _manifest(members)
    node = manifest["estimator"]
    node["attributes"]["loss_curve_"][-1] = {"__float__": "nan"}
    node["nonfinite"] = ["loss_curve_"]  # as save writes it for a diverged fit
    members["manifest.json"] = json.dumps(manifest).encode()
    loaded = load(_write(tmp_path / "tagged.sklmn", members))
    assert np.isnan(loaded.loss_curve_[-1])
    np.testing.assert_allclose(
        loaded.predict_proba(saved["X"]), saved["lmn"].predict_proba(saved["X"])
    )
    node["nonfinite"] = []
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ModelFileError, match="loss_curve_.*nan"):
        load(_write(tmp_path / "untagged.sklmn", members))
    del node["nonfinite"]  # files written before the tags: read by name
    members["manifest.json"] = json.dumps(manifest).encode()
    assert np.isnan(load(_write(tmp_path / "old.sklmn", members)).loss_curve_[-1])


def test_save_tags_the_nan_by_design_values(tmp_path):
    X = np.random.RandomState(0).randn(6, 4, 2)
    laes = LAESTransformer(n_components=2).fit(X)
    path = tmp_path / "laes.sklmn"
    save(laes, path)
    with zipfile.ZipFile(path) as archive:
        node = json.loads(archive.read("manifest.json"))["estimator"]
    assert node["nonfinite"] == []


def test_manifest_of_empty_dicts_is_refused_before_it_costs_memory(saved, tmp_path):
    manifest = _manifest(saved["members"])
    manifest["estimator"]["attributes"]["loss_curve_"] = "@@"
    text = json.dumps(manifest)
    n = ((8 << 20) - len(text) - 16) // 3
    body = "[" + "{}," * n + "{}]"
    data = text.replace('"@@"', body).encode()
    assert (7 << 20) < len(data) <= 8 << 20
    path = _write(tmp_path / "dicts.sklmn", {**saved["members"], "manifest.json": data})
    assert path.stat().st_size < 64 << 10
    peak, message = _peak_of_refused_load(path, max_bytes=8 << 20)
    assert peak < PEAK, peak
    assert "manifest.json" in message


def test_deep_manifest_is_refused(saved, tmp_path):
    manifest = _manifest(saved["members"])
    manifest["estimator"]["attributes"]["loss_curve_"] = "@@"
    data = json.dumps(manifest).replace('"@@"', "[" * 5000 + "]" * 5000).encode()
    path = _write(tmp_path / "deep.sklmn", {**saved["members"], "manifest.json": data})
    with pytest.raises(ModelFileError, match="deeper"):
        load(path)


@pytest.mark.parametrize("max_bytes", [8 << 20, None])
def test_zip_bomb_is_refused_before_it_is_inflated(saved, tmp_path, max_bytes):
    path = tmp_path / "bomb.sklmn"
    zeros = bytes(1 << 20)
    # as many 256 MiB members of zeros as pass the limit, the others intact
    # (deflating zeros is what the test spends its time on)
    limit = MAX_BYTES if max_bytes is None else max_bytes
    n_bombs = limit // (256 << 20) + 1
    arrays = [name for name in saved["members"] if name.startswith("arrays/")]
    assert len(arrays) >= n_bombs
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in saved["members"].items():
            if name not in arrays[:n_bombs]:
                archive.writestr(name, data)
                continue
            with archive.open(name, "w", force_zip64=True) as member:
                for _ in range(256):
                    member.write(zeros)
    kwargs = {} if max_bytes is None else {"max_bytes": max_bytes}
    peak, message = _peak_of_refused_load(path, **kwargs)
    assert peak < PEAK, peak
    assert "arrays/" in message
