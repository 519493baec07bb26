"""Models saved by an earlier version still load and predict the same.

``saved_models/`` holds files written with the safe format (format version 1)
by the commit that added this test, with the outputs they gave then; later
changes (moved classes, new fitted attributes, new parameters with defaults)
must keep loading them. Regenerate nothing here: a file that no longer loads
is a compatibility break to fix, or to document with a new format version.
"""

from pathlib import Path

import numpy as np
import pytest

from sklmn.persistence import load

HERE = Path(__file__).parent / "saved_models"


@pytest.fixture(scope="module")
def expected():
    with np.load(HERE / "expected.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize(
    "name, method, key",
    [
        ("lmn_classifier.sklmn", "predict_proba", "clf"),
        ("mslmn_regressor.sklmn", "predict", "reg"),
        ("laes.sklmn", "transform", "laes"),
    ],
)
def test_files_of_format_1_load_and_predict_as_when_saved(expected, name, method, key):
    est = load(HERE / name)
    out = getattr(est, method)(expected["Xq"])
    # float32 networks: agreement to accumulation-order tolerance
    np.testing.assert_allclose(out, expected[key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["lmn_classifier.sklmn", "mslmn_regressor.sklmn"])
def test_parameters_added_since_keep_the_saved_models_behaviour(name):
    # written before pretrained_alpha existed: those models fine-tuned freely
    est = load(HERE / name)
    assert est.pretrained_alpha == 0.0  # the multi-scale default is now 10
