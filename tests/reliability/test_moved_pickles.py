"""Models pickled before the training pieces moved from
``sklmn._training`` to ``sklmn._training`` still load and predict."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

from sklmn._training import SequenceNeuralNet

FIXTURE = Path(__file__).parent / "saved_models" / "before_training_layer.pkl"

# a pickle names numpy's modules: one written with numpy 2 needs numpy 2
# (the version-independent format is sklmn.persistence, tested elsewhere)
pytestmark = pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the fixture was pickled with numpy 2",
)


def _load():
    with warnings.catch_warnings():
        # scikit-learn warns when the pickling version differs (test-oldest)
        warnings.simplefilter("ignore")
        with open(FIXTURE, "rb") as handle:
            return pickle.load(handle)


def test_pickle_from_before_the_move_predicts_as_saved():
    saved = _load()
    clf, reg = saved["classifier"], saved["regressor"]
    assert isinstance(clf.net_, SequenceNeuralNet)
    np.testing.assert_allclose(
        clf.predict_proba(saved["X"]), saved["proba"], rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(
        reg.predict(saved["X"]), saved["pred"], rtol=1e-6, atol=1e-6
    )


def test_pickle_from_before_the_move_trains_on():
    clf = _load()["classifier"]
    assert clf.pretrained_alpha == 0.0  # a parameter added since: freely tuned
    rng = np.random.RandomState(1)
    X = rng.randn(20, 6, 2)
    y = (X[:, -1, 0] > 0).astype(int)
    clf.set_params(warm_start=True, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert clf.n_iter_ == 7
    assert np.isfinite(clf.predict_proba(X)).all()
