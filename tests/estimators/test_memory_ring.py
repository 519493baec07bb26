"""``memory_ring`` / ``ring``: the random start of the ``'schur'`` memory,
checked on the dense matrices the modules build."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from sklearn.model_selection import GridSearchCV

from sklmn.estimators import LMNClassifier, LMNRegressor, MultiScaleLMNClassifier
from sklmn.estimators._ring import RING_CANDIDATES, choose_ring
from sklmn.nn import LMN, MultiScaleLMN
from sklmn.nn._lmn_schur import check_ring
from sklmn.persistence import load, save


def _moduli_and_angles(weight_mm):
    eig = torch.linalg.eigvals(weight_mm.detach().double())
    return eig.abs().numpy(), np.abs(np.angle(eig.numpy()))


def _data(n=30, T=8, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, d)
    return X, (X[:, :3, 0].sum(1) > 0).astype(int)


@pytest.mark.parametrize("ring", [(0.5, 0.6, 0.0), (0.2, 0.95, math.pi / 2)])
def test_lmn_ring_sets_the_eigenvalues(ring):
    torch.manual_seed(0)
    net = LMN(2, 6, 8, num_layers=2, bidirectional=True, memory_matrix="schur",
              ring=ring)
    for layer in [*net.layers, *net.layers_reverse]:
        moduli, angles = _moduli_and_angles(layer.weight_mm)
        assert moduli.min() >= ring[0] - 1e-9
        assert moduli.max() <= ring[1] + 1e-9
        assert angles.max() <= ring[2] + 1e-9


def test_multiscale_ring_sets_every_module_and_direction():
    torch.manual_seed(0)
    ring = (0.3, 0.4, 1.0)
    net = MultiScaleLMN(2, 6, 4, 3, memory_matrix="schur", bidirectional=True,
                        ring=ring)
    for direction in (net, net.reverse):
        moduli, angles = _moduli_and_angles(direction.masked_weight_mm())
        assert moduli.min() >= ring[0] - 1e-9 and moduli.max() <= ring[1] + 1e-9
        assert angles.max() <= ring[2] + 1e-9


def test_default_ring_is_the_models_own():
    torch.manual_seed(0)
    moduli, angles = _moduli_and_angles(
        LMN(2, 6, 16, memory_matrix="schur").layers[0].weight_mm
    )
    assert moduli.min() >= 0.9 - 1e-9 and moduli.max() <= 0.999 + 1e-9
    assert angles.max() <= math.pi / 20 + 1e-9


@pytest.mark.parametrize(
    "ring, message",
    [
        ((0.5, 1.0, 0.1), "r_max=1.0"),
        ((0.6, 0.5, 0.1), "r_min=0.6"),
        ((-0.1, 0.5, 0.1), "r_min=-0.1"),
        ((0.5, 0.6, 4.0), "max_angle must be in \\[0, pi\\], got 4.0"),
        ((0.5, 0.6), "got \\(0.5, 0.6\\)"),
        ("ring", "got 'ring'"),
    ],
)
def test_bad_rings_are_named(ring, message):
    with pytest.raises(ValueError, match=message):
        check_ring(ring)
    with pytest.raises(ValueError, match=message):
        LMN(2, 4, 4, memory_matrix="schur", ring=ring)


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_estimator_memory_ring(cls, tmp_path):
    X, y = _data()
    ring = (0.5, 0.6, 0.0)
    clf = cls(hidden_size=4, memory_size=4, pretrainer=None, memory_ring=ring,
              max_iter=1, learning_rate_init=1e-6, random_state=0).fit(X, y)
    rec = clf.net_.module_.recurrent
    dense = rec.layers[0].weight_mm if cls is LMNClassifier else rec.masked_weight_mm()
    moduli, _ = _moduli_and_angles(dense)
    assert moduli.min() >= 0.5 - 1e-3 and moduli.max() <= 0.6 + 1e-3
    save(clf, tmp_path / "m.skops")
    back = load(tmp_path / "m.skops")
    assert back.memory_ring == ring
    np.testing.assert_allclose(back.predict_proba(X), clf.predict_proba(X),
                               rtol=1e-5, atol=1e-6)


def test_estimator_bad_ring_names_the_parameter_and_leaves_the_model():
    X, y = _data()
    clf = LMNClassifier(hidden_size=4, memory_size=4, pretrainer=None, max_iter=1,
                        random_state=0).fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match="memory_ring: ring must have"):
        clf.set_params(memory_ring=(0.5, 1.2, 0.0)).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), before, rtol=1e-6, atol=1e-7)


def test_grid_search_tunes_the_ring():
    X, y = _data()
    grid = GridSearchCV(
        LMNClassifier(hidden_size=4, memory_size=4, pretrainer=None, max_iter=2,
                      random_state=0),
        {"memory_ring": [None, (0.9, 0.999, math.pi / 2)]},
        cv=2,
    ).fit(X, y)
    assert grid.best_params_["memory_ring"] in (None, (0.9, 0.999, math.pi / 2))
    assert len(grid.cv_results_["params"]) == 2


# ------------------------------------------------------- memory_ring='auto'



def _oscillations(n=60, T=24, seed=0):
    """Two classes told apart by the frequency of a noisy oscillation."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 2
    X = np.sin(np.where(y == 1, 1.2, 0.9)[:, None] * np.arange(T))[:, :, None]
    return X + rng.randn(n, T, 1), y


def _slow_classes(n=60, T=24, seed=0):
    """Two classes told apart by the sign of a slow drift."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 2
    X = (2 * y - 1)[:, None, None] * 0.05 * np.arange(T)[None, :, None]
    return X + rng.randn(n, T, 1), y


def test_choose_ring_prefers_the_fast_ring_on_fast_oscillations():
    X, y = _oscillations()
    seqs = SimpleNamespace(data=X, lengths=np.full(len(y), X.shape[1]))
    default = (0.9, 0.999, math.pi / 20)
    ring, scores = choose_ring(seqs, y, default, memory_size=8, random_state=0)
    assert ring in RING_CANDIDATES
    assert scores[ring] > scores[default] + 1 / len(y)
    # no later ring is clearly better than the chosen one
    later = RING_CANDIDATES[RING_CANDIDATES.index(ring) + 1:]
    assert all(scores[r] <= scores[ring] + 1 / len(y) for r in later)
    again, _ = choose_ring(seqs, y, default, memory_size=8, random_state=0)
    assert again == ring


def test_choose_ring_keeps_the_default_without_a_clear_gain():
    X, y = _slow_classes()
    seqs = SimpleNamespace(data=X, lengths=np.full(len(y), X.shape[1]))
    default = (0.9, 0.999, math.pi / 20)
    ring, scores = choose_ring(seqs, y, default, memory_size=8, random_state=0)
    assert ring == default
    assert set(scores) == {default, *RING_CANDIDATES}


def test_choose_ring_needs_three_sequences_per_class():
    X, y = _oscillations(n=20)
    y = y.copy()
    y[:2] = 2  # a class of two sequences
    seqs = SimpleNamespace(data=X, lengths=np.full(len(y), X.shape[1]))
    default = (0.9, 0.999, math.pi / 20)
    assert choose_ring(seqs, y, default, memory_size=8, random_state=0) == (
        default, {}
    )


def test_choose_ring_reads_only_valid_steps():
    X, y = _oscillations()
    lengths = np.full(len(y), X.shape[1])
    lengths[::3] = 12
    padded = X.copy()
    for i, L in enumerate(lengths):
        padded[i, L:] = 0.0
    other = padded.copy()
    for i, L in enumerate(lengths):
        other[i, L:] = 100.0  # padding must not matter
    default = (0.9, 0.999, math.pi / 20)
    a = choose_ring(SimpleNamespace(data=padded, lengths=lengths), y, default,
                    memory_size=8, random_state=0)
    b = choose_ring(SimpleNamespace(data=other, lengths=lengths), y, default,
                    memory_size=8, random_state=0)
    assert a[0] == b[0]
    for ring in a[1]:
        assert a[1][ring] == pytest.approx(b[1][ring], abs=1e-12)


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_auto_ring_from_scratch_builds_the_chosen_ring(cls):
    X, y = _oscillations()
    sizes = dict(hidden_size=6, memory_size=4)
    if cls is MultiScaleLMNClassifier:
        sizes["n_modules"] = 2
    clf = cls(**sizes, pretrainer=None, max_iter=1, learning_rate_init=1e-6,
              random_state=0).fit(X, y)
    assert clf.memory_ring == "auto"
    chosen = tuple(clf.memory_ring_)
    assert chosen in RING_CANDIDATES  # not the model's own ring
    rec = clf.net_.module_.recurrent
    dense = rec.layers[0].weight_mm if cls is LMNClassifier else rec.masked_weight_mm()
    moduli, angles = _moduli_and_angles(dense)
    assert moduli.min() >= chosen[0] - 1e-3 and moduli.max() <= chosen[1] + 1e-3
    assert angles.max() <= chosen[2] + 1e-3
    assert angles.max() > math.pi / 10  # beyond the models' own rings


def test_auto_ring_is_the_models_own_with_a_start_or_for_regressors():
    X, y = _oscillations()
    clf = LMNClassifier(hidden_size=6, memory_size=4, max_iter=1,
                        random_state=0).fit(X, y)
    assert clf.memory_ring_ is None  # the LAES start, free memory
    reg = LMNRegressor(hidden_size=6, memory_size=4, pretrainer=None, max_iter=1,
                       random_state=0).fit(X, X[:, -1, 0])
    assert reg.memory_ring_ is None
    per_step = LMNClassifier(hidden_size=6, memory_size=4, pretrainer=None,
                             target="timestep", max_iter=1, random_state=0)
    per_step.fit(X, np.repeat(y[:, None], X.shape[1], axis=1))
    assert per_step.memory_ring_ is None
    multilabel = LMNClassifier(hidden_size=6, memory_size=4, pretrainer=None,
                               max_iter=1, random_state=0)
    multilabel.fit(X, np.column_stack([y, 1 - y]))
    assert multilabel.memory_ring_ is None


def test_explicit_ring_is_kept_and_auto_ring_is_saved(tmp_path):
    X, y = _oscillations()
    ring = (0.5, 0.6, 0.1)
    clf = LMNClassifier(hidden_size=6, memory_size=4, pretrainer=None,
                        memory_ring=ring, max_iter=1, random_state=0).fit(X, y)
    assert clf.memory_ring_ == pytest.approx(list(ring))
    auto = LMNClassifier(hidden_size=6, memory_size=4, pretrainer=None,
                         max_iter=1, random_state=0).fit(X, y)
    save(auto, tmp_path / "m.skops")
    back = load(tmp_path / "m.skops")
    assert back.memory_ring_ == pytest.approx(auto.memory_ring_)
    np.testing.assert_allclose(back.predict_proba(X), auto.predict_proba(X),
                               rtol=1e-5, atol=1e-6)


def test_choose_ring_scores_a_subset_of_large_sets(monkeypatch):
    from sklmn.estimators import _ring

    X, y = _oscillations(n=90)
    seqs = SimpleNamespace(data=X, lengths=np.full(len(y), X.shape[1]))
    monkeypatch.setattr(_ring, "_MAX_SEQUENCES", 45)
    default = (0.9, 0.999, math.pi / 20)
    ring, scores = choose_ring(seqs, y, default, memory_size=8, random_state=0)
    assert ring in RING_CANDIDATES and set(scores) == {default, *RING_CANDIDATES}
    assert X.shape == (90, 24, 1)  # the data are not modified


@pytest.mark.parametrize("cls", [LMNClassifier, MultiScaleLMNClassifier])
def test_the_resolved_choices_are_documented_fitted_attributes(cls):
    # memory_ring_ was set by fit and saved, but missing from the
    # estimators' Attributes section
    docscrape = pytest.importorskip("numpydoc.docscrape")
    attributes = docscrape.ClassDoc(cls)["Attributes"]
    documented = {a.name.split(":")[0].strip() for a in attributes}
    names = set()
    for klass in cls.__mro__:
        names.update(vars(klass).get("_fitted_attributes", {}))
    resolved = {"memory_ring_", "memory_matrix_", "pooling_", "pretrained_alpha_"}
    assert resolved <= names
    assert resolved - documented == set()
