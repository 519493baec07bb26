"""Classes moved between modules of sklmn.nn stay importable from their old
paths, which pickles (and ``torch.save`` files) written before the move name."""

import importlib
import pickle

import pytest
import torch

from sklmn.nn import LMN, ClockworkRNN, MultiScaleLMN
from sklmn.nn.parametrizations import SpectralRadiusNormalization

MOVED = [
    ("sklmn.nn._multiscale", "ClockworkRNN", ClockworkRNN),
    (
        "sklmn.nn.parametrizations",
        "_SpectralRadiusNormalization",
        SpectralRadiusNormalization,
    ),
    ("sklmn.nn._lmn", "lmn_scan", importlib.import_module("sklmn.nn._scan").lmn_scan),
]


@pytest.mark.parametrize(("module", "name", "obj"), MOVED)
def test_old_path_resolves(module, name, obj):
    # pickle.Unpickler.find_class does exactly this lookup
    assert getattr(importlib.import_module(module), name) is obj


def test_pickles_of_moved_classes_round_trip():
    _ = torch.manual_seed(0)
    x, lengths = torch.randn(2, 5, 3), torch.tensor([5, 3])
    for net in (
        ClockworkRNN(3, 2, 3, bidirectional=True),
        MultiScaleLMN(3, 4, 2, 2, memory_matrix="spectral"),
        LMN(3, 4, 2, memory_matrix="spectral"),
    ):
        copy = pickle.loads(pickle.dumps(net))
        torch.testing.assert_close(copy(x, lengths)[0], net(x, lengths)[0])
