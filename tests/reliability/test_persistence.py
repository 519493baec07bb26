"""Round trips through pickle, joblib and the safe format of sklmn.persistence."""

import builtins
import io
import json
import pickle
import warnings
import zipfile

import joblib
import numpy as np
import pytest
import torch
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from skorch.callbacks import Callback

from sklmn import pretraining
from sklmn.estimators import (
    ENRNNClassifier,
    ENRNNRegressor,
    LMNClassifier,
    LMNRegressor,
    MultiScaleLMNClassifier,
    MultiScaleLMNRegressor,
    RNNClassifier,
    RNNRegressor,
)
from sklmn.laes import LAESTransformer
from sklmn.persistence import SAFE_CLASSES, UntrustedTypeError, load, save
from sklmn.preprocessing import SequenceStandardScaler

_TINY = dict(max_iter=2, random_state=0)

# (id, factory, target kind); the LMN variants with parametrized memory
# matrices exercise modules with torch parametrizations
CASES = {
    "lmn_free": (lambda: LMNClassifier(hidden_size=3, memory_size=2, **_TINY), "cls"),
    "lmn_orthogonal": (
        lambda: LMNRegressor(
            hidden_size=3, memory_size=2, memory_matrix="orthogonal", **_TINY
        ),
        "reg",
    ),
    "lmn_spectral": (
        lambda: LMNClassifier(
            hidden_size=3, memory_size=2, memory_matrix="spectral", **_TINY
        ),
        "cls",
    ),
    "lmn_timestep_multilabel": (
        lambda: LMNClassifier(hidden_size=3, memory_size=2, target="timestep", **_TINY),
        "timestep_multilabel",
    ),
    "multiscale_cls": (
        lambda: MultiScaleLMNClassifier(
            hidden_size=3, memory_size=2, n_modules=2, **_TINY
        ),
        "cls",
    ),
    "multiscale_reg_timestep": (
        lambda: MultiScaleLMNRegressor(
            hidden_size=3, memory_size=2, n_modules=3, target="timestep", **_TINY
        ),
        "timestep_reg",
    ),
    "enrnn_cls": (lambda: ENRNNClassifier(hidden_size=3, short_size=2, **_TINY), "cls"),
    "enrnn_reg": (lambda: ENRNNRegressor(hidden_size=3, short_size=2, **_TINY), "reg2"),
    "rnn_lstm_cls": (
        lambda: RNNClassifier(cell="lstm", hidden_size=3, bidirectional=True, **_TINY),
        "cls",
    ),
    "rnn_clockwork_reg": (
        lambda: RNNRegressor(cell="clockwork", hidden_size=4, n_modules=2, **_TINY),
        "reg",
    ),
    "rnn_unrolled_cls": (
        lambda: RNNClassifier(cell="unrolled", hidden_size=3, tape_length=2, **_TINY),
        "cls",
    ),
    "enrnn_stacked_bidirectional": (
        lambda: ENRNNClassifier(
            hidden_size=3, short_size=2, num_layers=2, bidirectional=True, **_TINY
        ),
        "cls",
    ),
    "rnn_elman_orthogonal_init": (
        lambda: RNNRegressor(
            cell="elman", hidden_size=3, recurrent_init="orthogonal", **_TINY
        ),
        "reg",
    ),
    "rnn_linear_orthogonal": (
        lambda: RNNClassifier(
            cell="linear",
            hidden_size=3,
            bidirectional=True,
            recurrent_matrix="orthogonal",
            **_TINY,
        ),
        "cls",
    ),
    "laes": (lambda: LAESTransformer(n_components=3), "none"),
    "laes_centered_sequences": (
        lambda: LAESTransformer(n_components=2, center=True, return_sequences=True),
        "none",
    ),
}

# pickling these fails until sklmn.nn.LMNLayer (owned by nn-core) inherits
# PicklableParametrizationsMixin; the safe format does not need pickling


def _data(kind):
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(2, 7), 2) for _ in range(16)]
    if kind == "cls":
        y = np.array(["ab", "cd", "ef", "gh"] * 4)
    elif kind == "reg":
        y = rng.randn(16)
    elif kind == "reg2":
        y = rng.randn(16, 2)
    elif kind == "timestep_multilabel":
        y = [(rng.rand(len(x), 3) > 0.5).astype(int) for x in X]
    elif kind == "timestep_reg":
        y = [rng.randn(len(x)) for x in X]
    else:
        y = None
    return X, y


def _fitted(case):
    make, kind = CASES[case]
    X, y = _data(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 2 epochs
        return make().fit(X, y), X, y


def _outputs(est, X):
    methods = ["predict", "predict_proba", "transform", "reconstruction_error"]
    out = {}
    for name in methods:
        if hasattr(est, name):
            out[name] = getattr(est, name)(X)
    if hasattr(est, "inverse_transform"):
        Z = np.ones((2, est.n_components_))
        out["inverse_transform"] = est.inverse_transform(Z, lengths=3)
    return out


def _assert_same_outputs(a, b):
    assert a.keys() == b.keys()
    for key in a:
        va, vb = a[key], b[key]
        if isinstance(va, list):
            assert len(va) == len(vb)
            for x, z in zip(va, vb, strict=True):
                np.testing.assert_array_equal(x, z, err_msg=key)
        else:
            np.testing.assert_array_equal(va, vb, err_msg=key)


@pytest.mark.parametrize("case", list(CASES))
def test_safe_format_round_trip_gives_identical_predictions(case, tmp_path):
    est, X, _ = _fitted(case)
    path = tmp_path / "model.sklmn"
    save(est, path)
    loaded = load(path)
    assert type(loaded) is type(est)
    assert loaded.get_params() == est.get_params()
    _assert_same_outputs(_outputs(est, X), _outputs(loaded, X))
    if hasattr(est, "net_"):
        assert loaded.n_iter_ == est.n_iter_ and loaded.loss_curve_ == est.loss_curve_
        for key, value in est.net_.module_.state_dict().items():
            torch.testing.assert_close(
                loaded.net_.module_.state_dict()[key], value, rtol=0, atol=0
            )


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("library", ["pickle", "joblib"])
def test_pickle_and_joblib_round_trips(case, library, tmp_path):
    est, X, _ = _fitted(case)
    if library == "pickle":
        loaded = pickle.loads(pickle.dumps(est))
    else:
        joblib.dump(est, tmp_path / "model.joblib")
        loaded = joblib.load(tmp_path / "model.joblib")
    _assert_same_outputs(_outputs(est, X), _outputs(loaded, X))


def test_loaded_model_warm_starts(tmp_path):
    est, X, y = _fitted("lmn_free")
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn").set_params(warm_start=True, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.fit(X, y)
    assert loaded.n_iter_ == est.n_iter_ + 1


def test_unfitted_estimator_round_trip(tmp_path):
    est = LMNRegressor(hidden_size=5, gradient_clipping=1.5, batch_size=7)
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn")
    assert loaded.get_params() == est.get_params()
    assert not hasattr(loaded, "net_")


def test_numpy_scalar_parameters_round_trip(tmp_path):
    # a grid over np.arange, or RandomizedSearchCV with scipy.stats.randint,
    # sets numpy integers; they were written with shape (1,) and the loader
    # refused the file as corrupt
    X = np.random.RandomState(0).randn(12, 4, 2)
    y = np.arange(12) % 2
    est = LMNClassifier(
        hidden_size=np.int64(3),
        memory_size=np.int32(2),
        random_state=np.int64(0),
        max_iter=np.int64(2),
        warm_start=np.bool_(False),
    ).fit(X, y)
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn")
    for name in ("hidden_size", "memory_size", "random_state", "max_iter"):
        value = loaded.get_params()[name]
        assert np.ndim(value) == 0 and value == est.get_params()[name], name
    np.testing.assert_allclose(
        loaded.predict_proba(X), est.predict_proba(X), rtol=0, atol=1e-6
    )


@pytest.mark.parametrize(
    "class_weight", [{0: 3.0, 1: 1.0, 2: 0.5}, {np.int64(0): 3.0}, {0: 2.0, "x": 1.0}]
)
def test_class_weight_with_integer_labels_round_trips(class_weight, tmp_path):
    # a dict with keys other than strings (the class_weight of integer
    # labels) was refused by save ("dict key 0 is not a string")
    est = LMNClassifier(class_weight=class_weight, hidden_size=3, memory_size=2)
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn").get_params()["class_weight"]
    assert loaded == class_weight
    assert [type(k) for k in loaded] == [type(k) for k in class_weight]


def test_class_weight_with_integer_labels_predicts_the_same_after_load(tmp_path):
    X = np.random.RandomState(0).randn(12, 4, 2)
    y = np.arange(12) % 3
    est = LMNClassifier(
        class_weight={0: 3.0, 1: 1.0, 2: 0.5}, hidden_size=3, memory_size=2, **_TINY
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    save(est, tmp_path / "m.sklmn")
    np.testing.assert_allclose(
        load(tmp_path / "m.sklmn").predict_proba(X),
        est.predict_proba(X),
        rtol=0,
        atol=1e-6,
    )


def test_dict_keys_that_are_not_scalars_are_named(tmp_path):
    with pytest.raises(TypeError, match=r"dict key \(1, 2\) is not a string, a number"):
        save(LMNClassifier(class_weight={(1, 2): 1.0}), tmp_path / "m.sklmn")


def test_estimators_fitted_on_a_dataframe_round_trip(tmp_path):
    # a 2-D DataFrame's columns are time steps: feature_names_in_ has one
    # name per step while n_features_in_ is 1, and load refused the archive
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(12, 5)), columns=list("abcde"))
    for est in (
        LAESTransformer(n_components=2).fit(df),
        SequenceStandardScaler().fit(df),
    ):
        save(est, tmp_path / "m.sklmn")
        loaded = load(tmp_path / "m.sklmn")
        np.testing.assert_array_equal(loaded.feature_names_in_, list("abcde"))
        np.testing.assert_allclose(
            np.asarray(loaded.transform(df)), np.asarray(est.transform(df)), atol=1e-12
        )


def test_format_holds_no_pickle(tmp_path, monkeypatch):
    est, X, _ = _fitted("lmn_spectral")
    path = tmp_path / "m.sklmn"
    save(est, path)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))
        for name in names:
            if name.endswith(".npy"):  # plain arrays: load without pickle
                np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
            elif name.endswith(".pt"):  # tensors only
                torch.load(io.BytesIO(archive.read(name)), weights_only=True)
    assert {n.rsplit(".", 1)[-1] for n in names} <= {"json", "npy", "pt"}
    assert manifest["estimator"]["class"] == "sklmn.estimators.LMNClassifier"
    expected = est.predict_proba(X)

    # loading works with Python's pickle machinery disabled entirely
    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    np.testing.assert_array_equal(load(path).predict_proba(X), expected)


def _rewrite_manifest(path, edit):
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    manifest = json.loads(members["manifest.json"])
    edit(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.mark.parametrize(
    "name",
    ["os.system", "builtins.eval", "subprocess.Popen", "sklearn.pipeline.Pipeline"],
)
def test_tampered_class_name_is_rejected_before_import(name, tmp_path, monkeypatch):
    est, _, _ = _fitted("laes")
    path = tmp_path / "m.sklmn"
    save(est, path)

    def set_class(manifest):
        manifest["estimator"]["class"] = name

    _rewrite_manifest(path, set_class)
    imported = []
    real_import = builtins.__import__

    def spy_import(module, *args, **kwargs):
        imported.append(module)
        return real_import(module, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", spy_import)
    with pytest.raises(UntrustedTypeError, match=f"'{name}'.*trusted="):
        load(path)
    assert name.rpartition(".")[0] not in imported


def test_nested_class_names_are_checked_and_trusted_opt_in(tmp_path):
    rng = np.random.RandomState(0)
    X, y = rng.randn(10, 5, 2), rng.randn(10)
    pipe = make_pipeline(LAESTransformer(n_components=3), Ridge(alpha=0.5)).fit(X, y)
    path = tmp_path / "pipe.sklmn"
    save(pipe, path)
    with pytest.raises(UntrustedTypeError, match="sklearn.pipeline.Pipeline"):
        load(path)
    with pytest.raises(UntrustedTypeError, match="Ridge"):
        load(path, trusted=["sklearn.pipeline.Pipeline"])
    loaded = load(
        path, trusted=["sklearn.pipeline.Pipeline", "sklearn.linear_model.Ridge"]
    )
    np.testing.assert_array_equal(loaded.predict(X), pipe.predict(X))


def test_nested_pretrainer_round_trip(tmp_path):
    est = LMNRegressor(
        hidden_size=3,
        memory_size=3,
        pretrainer=pretraining.LAESInitializer(),
        **_TINY,
    )
    X, y = _data("reg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    save(est, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn")
    assert type(loaded.pretrainer) is type(est.pretrainer)
    assert type(loaded.pretrainer_) is type(est.pretrainer_)

    def flat(params):  # nested estimators compare by their own parameters
        return {k: v for k, v in params.items() if not hasattr(v, "get_params")}

    assert flat(loaded.get_params(deep=True)) == flat(est.get_params(deep=True))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


class _Spy(Callback):
    pass


def test_unserializable_parameter_is_named(tmp_path):
    est = LMNClassifier(callbacks=[("spy", _Spy())])
    with pytest.raises(TypeError, match=r"LMNClassifier\.callbacks.*_Spy"):
        save(est, tmp_path / "m.sklmn")
    with pytest.raises(TypeError, match="save expects a scikit-learn estimator"):
        save(torch.nn.Linear(2, 2), tmp_path / "m.sklmn")


@pytest.mark.parametrize("value", [10**9, -3, "x"])
def test_tampered_fitted_parameters_are_rejected(value, tmp_path):
    # the network is rebuilt from the parameters it was fitted with
    # (_fitted_params), so these are bounded and validated like the others
    est, _, _ = _fitted("lmn_free")
    path = tmp_path / "m.sklmn"
    save(est, path)

    def edit(manifest):
        fitted = manifest["estimator"]["attributes"]["_fitted_params"]
        fitted["__dict__"]["hidden_size"] = value

    _rewrite_manifest(path, edit)
    with pytest.raises(ValueError, match="Corrupt archive.*hidden_size"):
        load(path)


@pytest.mark.parametrize("value", [10**9, -3])
def test_tampered_resolved_memory_size_is_rejected(value, tmp_path):
    # memory_size='auto' rebuilds the network from the fit's memory_size_,
    # which is bounded by the saved weights like the parameters
    rng = np.random.RandomState(0)
    X = rng.randn(130, 5, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    est = LMNClassifier(hidden_size=4, max_iter=1, random_state=0).fit(X, y)
    assert est.memory_size_ == 64
    path = tmp_path / "m.sklmn"
    save(est, path)

    def edit(manifest):
        manifest["estimator"]["attributes"]["memory_size_"] = value

    _rewrite_manifest(path, edit)
    with pytest.raises(ValueError, match="Corrupt archive.*memory_size_"):
        load(path)


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [("memory_size_", {"__tuple__": [10**9, 12]}, "memory_size_"),
     ("memory_size_", {"__tuple__": [-5, 12]}, "memory_size"),
     ("memory_size_", [32, 12], "memory_size_"),
     ("hidden_size_", 10**9, "hidden_size_")],
)
def test_tampered_module_sizes_are_rejected(name, value, match, tmp_path):
    # the multi-scale classifier rebuilds its network from the fit's module
    # sizes, bounded through their total by the saved weights
    rng = np.random.RandomState(0)
    X = rng.randn(40, 5, 2)
    y = (X[:, 0, 0] > 0).astype(int)
    est = MultiScaleLMNClassifier(n_modules=2, max_iter=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.memory_size_ == (32, 12)
    path = tmp_path / "m.sklmn"
    save(est, path)

    def edit(manifest):
        manifest["estimator"]["attributes"][name] = value

    _rewrite_manifest(path, edit)
    with pytest.raises(ValueError, match=f"Corrupt archive.*{match}"):
        load(path)


def test_not_an_archive_and_future_versions_are_rejected(tmp_path):
    bad = tmp_path / "bad.sklmn"
    bad.write_bytes(b"\x80\x04not a zip")
    with pytest.raises(ValueError, match="not an archive written by"):
        load(bad)
    est, _, _ = _fitted("laes")
    path = tmp_path / "m.sklmn"
    save(est, path)

    def bump(manifest):
        manifest["format_version"] = 99

    _rewrite_manifest(path, bump)
    with pytest.raises(ValueError, match="format version 99"):
        load(path)


def test_model_saved_on_gpu_loads_on_cpu(tmp_path):
    """A manifest naming a CUDA device loads on the CPU when CUDA is missing."""
    est, X, _ = _fitted("enrnn_cls")
    path = tmp_path / "m.sklmn"
    save(est, path)

    def on_gpu(manifest):
        manifest["estimator"]["net"]["device"] = "cuda:0"
        manifest["estimator"]["params"]["device"] = "cuda"

    _rewrite_manifest(path, on_gpu)
    loaded = load(path)
    expected_device = "cuda" if torch.cuda.is_available() else "cpu"
    assert next(loaded.net_.module_.parameters()).device.type == expected_device
    np.testing.assert_allclose(
        loaded.predict_proba(X), est.predict_proba(X), rtol=1e-5, atol=1e-6
    )


def test_safe_classes_cover_every_public_estimator():
    import sklmn

    for name in sklmn.__all__:
        obj = getattr(sklmn, name)
        if isinstance(obj, type):
            assert any(s.endswith(f".{name}") for s in SAFE_CLASSES), name


def test_laes_partial_fit_continues_after_load(tmp_path):
    rng = np.random.RandomState(0)
    X1, X2 = rng.randn(6, 5, 2), rng.randn(4, 5, 2)
    laes = LAESTransformer(n_components=3).partial_fit(X1)
    save(laes, tmp_path / "m.sklmn")
    loaded = load(tmp_path / "m.sklmn").partial_fit(X2)
    laes.partial_fit(X2)
    np.testing.assert_array_equal(loaded.transform(X1), laes.transform(X1))


def test_incremental_and_unrolled_pretraining_round_trips(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(30, 8, 1)
    y = X[:, 0, 0]
    grown = MultiScaleLMNRegressor(
        hidden_size=4,
        memory_size=2,
        n_modules=3,
        max_iter=6,
        incremental=pretraining.IncrementalTraining(
            epochs_per_module=2, min_improvement=-1.0
        ),
        random_state=0,
    )
    unrolled = LMNClassifier(
        hidden_size=4,
        memory_size=4,
        max_iter=2,
        pretrainer=pretraining.UnrolledPretrainer(),
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grown.fit(X, y)
        unrolled.fit(X, (y > 0).astype(int))
    assert grown.net_.module_.recurrent.n_modules == 3  # grown during fit
    save(grown, tmp_path / "grown.sklmn")
    np.testing.assert_array_equal(
        load(tmp_path / "grown.sklmn").predict(X), grown.predict(X)
    )
    # the pretrainer keeps its unrolled network (a torch module) as a
    # diagnostic fitted attribute: always left out (not needed to predict)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save(unrolled, tmp_path / "unrolled.sklmn")
    loaded = load(tmp_path / "unrolled.sklmn")
    assert not hasattr(loaded.pretrainer_, "urnn_net_")
    np.testing.assert_array_equal(loaded.predict_proba(X), unrolled.predict_proba(X))


def test_save_never_sets_the_fitted_parameters_on_the_estimator(tmp_path, monkeypatch):
    """The network is described by the parameters of the last fit, read
    from a copy: another thread that predicts or reads the parameters while
    the model is saved sees the estimator as it is, never the fit's values."""
    est, X, y = _fitted("lmn_free")
    est.set_params(hidden_size=7)  # the next fit's; the network has 3 units
    seen = []
    cls = type(est)
    names = cls._model_parameter_names

    def spy(self):  # called while the sizes of the fitted network are read
        seen.append(est.get_params(deep=False)["hidden_size"])
        return names(self)

    monkeypatch.setattr(cls, "_model_parameter_names", spy)
    save(est, tmp_path / "m.sklmn")
    assert seen and set(seen) == {7}
    loaded = load(tmp_path / "m.sklmn")
    assert set(seen) == {7}
    assert loaded.hidden_size == 7
    assert loaded.net_.module_.recurrent.hidden_size == 3
    np.testing.assert_allclose(
        loaded.predict_proba(X), est.predict_proba(X), rtol=1e-6, atol=1e-7
    )
