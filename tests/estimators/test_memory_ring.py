"""``memory_ring`` / ``ring``: the random start of the ``'schur'`` memory,
checked on the dense matrices the modules build."""

import math

import numpy as np
import pytest
import torch
from sklearn.model_selection import GridSearchCV

from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier
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
