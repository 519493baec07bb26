"""Models saved with ``pooling='auto'`` before the block of extrema existed
(a readout of the last step and the mean only) load and predict what they
predicted: ``SequenceNet.match_saved_layout_`` rebuilds their readout."""

from pathlib import Path

import numpy as np
import pytest

from sklmn import persistence

HERE = Path(__file__).parent / "saved_models"


@pytest.mark.parametrize("name", ["lmn", "mslmn"])
def test_auto_pooling_models_saved_before_the_extrema_block(name):
    expected = np.load(HERE / "auto_pooling_before_extrema.npz")
    est = persistence.load(HERE / f"{name}_auto_pooling_before_extrema.sklmn")
    module = est.net_.module_
    assert module.pooling == "auto"
    assert getattr(module, "extrema_scale", None) is None
    assert module.readout.in_features == 2 * module.recurrent.output_size
    assert module.resolved_pooling == est.pooling_ == "last+mean"
    np.testing.assert_allclose(
        est.predict_proba(list(expected["X"])), expected[name], rtol=1e-5, atol=1e-6
    )
