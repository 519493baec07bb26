"""The prototype training variants of ``bench memory-hindsight``."""

import torch
from torch.nn.utils import parametrize

from sklmn.benchmarks._bench.memory_hindsight import _ModeGain
from sklmn.nn import LMNLayer


def test_mode_gain_keeps_the_start_and_scales_the_steps():
    torch.manual_seed(0)
    layer = LMNLayer(2, 4, 4, memory_matrix="schur").double()
    W = torch.tensor(
        [[0.9, 0.3, 0.0, 0.1], [-0.2, 0.8, 0.0, 0.0],
         [0.0, 0.0, 0.5, 0.2], [0.0, 0.0, 0.0, -0.99]],
        dtype=torch.float64,
    )
    layer.set_memory_(W)
    before = layer.weight_hm.detach().clone()
    parametrize.register_parametrization(layer, "weight_hm", _ModeGain(layer))
    torch.testing.assert_close(layer.weight_hm, before, rtol=1e-12, atol=1e-14)
    # the trained V moves W_hm's row j by (1 - |lambda_j|) times its step
    moduli = layer.memory.eigenvalue_moduli()
    V = layer.parametrizations.weight_hm.original
    step = torch.randn_like(V)
    with torch.no_grad():
        V.add_(step)
    expected = before + (1 - moduli)[:, None] * step
    torch.testing.assert_close(layer.weight_hm, expected, rtol=1e-12, atol=1e-14)
    # moduli computed from the dense matrix: 0.9 +- i sqrt(0.06), 0.5, 0.99
    ref = torch.linalg.eigvals(W).abs().sort().values
    torch.testing.assert_close(moduli.sort().values, ref, rtol=1e-9, atol=1e-12)


def test_ensemble_records_a_consistent_committee(tmp_path, monkeypatch, capsys):
    import json

    import numpy as np

    from sklmn.benchmarks._bench import memory_hindsight as mh
    from sklmn.benchmarks._timeseries.datasets import _dataset_info

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 10)
    X = [rng.normal(size=(8, 1)) + 0.8 * label for label in y]
    data = (X, X[::2], y, y[::2])
    monkeypatch.setattr(
        mh, "_load", lambda name: (data, _dataset_info(name, "classification", data))
    )
    out = tmp_path / "ens.jsonl"
    mh.main(["ensemble", "--datasets", "toy", "--epochs", "2", "--folds", "2",
             "--out", str(out)])
    rec = json.loads(out.read_text())
    assert len(rec["chosen_epochs"]) == 2 and len(rec["members"]) == 2
    assert all(0 <= e <= 2 for e in rec["chosen_epochs"])
    assert len(rec["committee_per_epoch"]) == 3
    for key in ("start", "committee", "fold_starts"):
        assert 0.0 <= rec[key] <= 1.0
    assert "| toy | lmn | 0 |" in capsys.readouterr().out
