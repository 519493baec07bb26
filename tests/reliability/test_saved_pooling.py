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


@pytest.mark.parametrize("name", ["lmn", "mslmn"])
def test_schur_models_saved_before_the_extrema_were_turned(name):
    """A Schur memory's extrema block read the memory's own coordinates before
    ``SequenceNet.extrema_basis`` existed; such models keep reading them."""
    expected = np.load(HERE / "schur_extrema_before_turn.npz")
    est = persistence.load(HERE / f"{name}_schur_extrema_before_turn.sklmn")
    module = est.net_.module_
    assert module.resolved_pooling == "last+mean+max"
    assert module.extrema_basis() is None
    assert module.recurrent.output_basis() is not None
    np.testing.assert_allclose(
        est.predict_proba(list(expected["X"])), expected[name], rtol=1e-5, atol=1e-6
    )
    # the same model as written now reads the extrema in the start's coordinates
    fresh = type(module)(
        module.recurrent, module.readout.out_features, pooling=module.pooling
    )
    assert fresh.extrema_basis() is not None
