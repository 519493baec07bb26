"""The prototype training variants of ``bench memory-hindsight``."""

import numpy as np
import pytest
import torch


def _serve(monkeypatch, X, y):
    """Make every dataset name of ``bench memory-hindsight`` load ``X, y``
    (the test split: every other sequence)."""
    from sklmn.benchmarks._bench import memory_hindsight as mh
    from sklmn.benchmarks._timeseries.datasets import _dataset_info

    data = (X, X[::2], y, y[::2])
    monkeypatch.setattr(
        mh, "_load", lambda name: (data, _dataset_info(name, "classification", data))
    )


def _serve_shifted(monkeypatch, y, shift):
    """``_serve`` sequences of 8 steps and one feature, the noise of each
    shifted by ``shift`` times its class."""
    rng = np.random.default_rng(0)
    _serve(monkeypatch, [rng.normal(size=(8, 1)) + shift * label for label in y], y)


def test_ensemble_records_a_consistent_committee(tmp_path, monkeypatch, capsys):
    import json

    from sklmn.benchmarks._bench import memory_hindsight as mh

    _serve_shifted(monkeypatch, np.repeat([0, 1], 10), 0.8)
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


def test_lagged_inputs_hold_the_last_inputs_with_zeros_before_the_start():
    from sklmn.benchmarks._bench.memory_hindsight import _lagged_inputs

    X = torch.arange(1.0, 9.0).reshape(2, 4, 1)
    targets, mask = _lagged_inputs(X, torch.tensor([4, 2]), 3)
    assert targets.shape == (2, 4, 3)
    torch.testing.assert_close(targets[0, 3], torch.tensor([4.0, 3.0, 2.0]))
    torch.testing.assert_close(targets[0, 1], torch.tensor([2.0, 1.0, 0.0]))
    torch.testing.assert_close(targets[1, 1], torch.tensor([6.0, 5.0, 0.0]))
    assert mask.tolist() == [[True] * 4, [True, True, False, False]]


def test_recon_trains_and_leaves_the_net_as_it_was():

    from sklmn.benchmarks._bench.memory_hindsight import _Recon
    from sklmn.estimators import LMNClassifier

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    X = [rng.normal(size=(int(rng.integers(5, 9)), 2)) + 0.5 * c for c in y]
    est = LMNClassifier(
        hidden_size=4, memory_size=6, max_iter=3, early_stopping=False,
        n_iter_no_change=10**6, random_state=0,
        callbacks=[("recon", _Recon(1.0, 2, "joint"))],
    )
    est.fit(X, y)
    cb = dict(est.net_.callbacks_)["recon"]
    assert len(cb.epochs_) == 3 and 0.0 <= cb.start_error_ <= 1.0
    # the net's own loss and no hook after the fit; predictions work
    assert "get_loss" not in vars(est.net_)
    assert not est.net_.module_.recurrent._forward_hooks
    assert est.predict(X).shape == (16,)


def test_recon_decoder_is_least_squares_and_the_term_adds_in_training_only():
    from types import SimpleNamespace

    from sklmn.benchmarks._bench.memory_hindsight import _Recon
    from sklmn.nn import LMN
    from sklmn.training import SequenceDataset

    torch.manual_seed(0)
    recurrent = LMN(2, 5, 6).double()
    data = SequenceDataset(torch.randn(10, 7, 2, dtype=torch.float64),
                           torch.tensor([7, 7, 6, 5, 5, 4, 3, 7, 2, 6]))
    net = SimpleNamespace(
        module_=SimpleNamespace(recurrent=recurrent),
        get_loss=lambda y_pred, y_true, X=None, training=False: y_pred.sum(),
    )
    cb = _Recon(2.0, 3)
    cb.on_train_begin(net, X=data)
    with torch.no_grad():
        states, _ = recurrent(data.X, lengths=data.lengths)
    assert 0.0 < cb.start_error_ < 1.0
    D = cb.D_.clone()
    for _ in range(5):  # no nearby decoder reconstructs the start better
        cb.D_ = D + 1e-3 * torch.randn_like(D)
        assert float(cb._error(states, data.X, data.lengths)) > cb.start_error_
    cb.D_ = D
    batch = {"X": data.X, "lengths": data.lengths}
    y_pred = torch.ones(3, dtype=torch.float64)
    recurrent.train()
    recurrent(data.X, lengths=data.lengths)  # the hook keeps the states
    loss = net.get_loss(y_pred, None, X=batch, training=True)
    torch.testing.assert_close(
        loss, torch.tensor(3.0 + 2.0 * cb.start_error_, dtype=torch.float64),
        rtol=1e-9, atol=0.0,
    )
    recurrent(data.X, lengths=data.lengths)
    torch.testing.assert_close(  # validation: the plain loss
        net.get_loss(y_pred, None, X=batch, training=False),
        torch.tensor(3.0, dtype=torch.float64), rtol=1e-12, atol=0.0,
    )
    cb.on_train_end(net)
    assert "get_loss" not in vars(net) and not recurrent._forward_hooks
def test_sam_label_smoothing_and_state_noise_variants_record(
    tmp_path, monkeypatch, capsys
):
    import json

    from sklmn.benchmarks._bench import memory_hindsight as mh

    _serve_shifted(monkeypatch, np.repeat([0, 1, 2], 6), 0.8)
    out = tmp_path / "curves.jsonl"
    for variant in (
        ["--sam", "1e-9"],
        ["--sam", "0.5", "--sam-adaptive"],
        ["--sam", "0.5", "--sam-lr-scaled"],
        ["--label-smoothing", "0.3"],
        ["--state-noise", "0.3"],
    ):
        mh.main(["curves", "--datasets", "toy", "--epochs", "3", "--out", str(out),
                 *variant])
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r.get("sam", 0) for r in recs] == [1e-9, 0.5, 0.5, 0, 0]
    assert recs[1]["sam_adaptive"] and recs[2]["sam_lr_scaled"]
    assert recs[3]["label_smoothing"] == 0.3
    assert recs[4]["state_noise"] == 0.3
    for rec in recs:
        assert len(rec["accuracy"]) == 4 and len(rec["loss"]) == 3
        assert np.all(np.isfinite(rec["loss"]))
    # the smoothed loss is bounded below by the smoothed targets' entropy
    eps, k = 0.3, 3
    p = np.array([1 - eps + eps / k] + [eps / k] * (k - 1))
    assert min(recs[3]["loss"]) >= -np.sum(p * np.log(p)) - 1e-6
    assert "| toy | lmn | 0 |" in capsys.readouterr().out


def test_sam_step_with_a_vanishing_radius_is_the_plain_step():

    from sklmn import LMNClassifier
    from sklmn.benchmarks._bench.memory_hindsight import _SAM

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    X = [rng.normal(size=(6, 2)) + label for label in y]

    def fit(callbacks):
        est = LMNClassifier(
            hidden_size=4, memory_size=3, max_iter=3, early_stopping=False,
            n_iter_no_change=100, random_state=0, callbacks=callbacks,
        )
        return est.fit(X, y).loss_curve_

    plain, tiny = fit([]), fit([("sam", _SAM(1e-9))])
    np.testing.assert_allclose(tiny, plain, rtol=1e-4, atol=1e-6)
    moved = fit([("sam", _SAM(1.0))])
    assert not np.allclose(moved[1:], plain[1:], rtol=1e-4, atol=1e-6)


def test_resample_at_the_steps_is_the_identity_and_keeps_padding_zero():
    from sklmn.benchmarks._bench.memory_hindsight import _resample

    X = torch.arange(1.0, 13.0).reshape(2, 6, 1)
    X[1, 4:] = 0.0
    lengths = torch.tensor([6, 4])
    steps = torch.arange(6.0).expand(2, 6)
    torch.testing.assert_close(_resample(X, lengths, steps), X)
    half = _resample(X, lengths, steps + 0.5)  # clamped to the last valid step
    assert half[0, :, 0].tolist() == [1.5, 2.5, 3.5, 4.5, 5.5, 6.0]
    assert half[1, :, 0].tolist() == [7.5, 8.5, 9.5, 10.0, 0.0, 0.0]


def test_augment_changes_training_batches_only_and_not_in_place():
    from sklmn.benchmarks._bench.memory_hindsight import _Augment

    X = torch.zeros(2, 10, 1)
    X[0, :, 0] = torch.arange(10.0)
    X[1, :6, 0] = 10 * torch.arange(6.0)
    lengths = torch.tensor([10, 6])
    before = X.clone()
    cb = _Augment(crop=0.8, jitter=0.1, scale=0.1, warp=0.2)
    cb.gen_, cb.std_, cb.batches_ = torch.Generator().manual_seed(0), torch.ones(1), 0
    module = torch.nn.Identity()
    module.eval()
    assert cb._hook(module, (), {"X": X, "lengths": lengths}) is None
    module.train()
    _, kwargs = cb._hook(module, (), {"X": X, "lengths": lengths})
    out = kwargs["X"]
    assert torch.equal(X, before) and not torch.equal(out, X) and cb.batches_ == 1
    assert torch.all(out[1, 6:] == 0)  # padding stays padding
    crop = _Augment(crop=0.5)
    crop.gen_ = torch.Generator().manual_seed(0)
    window = crop._augment(X, lengths)  # a ramp stays a ramp of half the slope
    torch.testing.assert_close(
        window[0, 1:, 0] - window[0, :-1, 0], torch.full((9,), 0.5)
    )
    warp = _Augment(warp=0.3)
    warp.gen_ = torch.Generator().manual_seed(0)
    tau = warp._warp_positions(lengths, 10)  # monotone, from 0 to L - 1
    for row, n in zip(tau, lengths.tolist(), strict=True):
        assert row[0] == 0 and abs(float(row[n - 1]) - (n - 1)) < 1e-9
        assert torch.all(row[1:n] > row[: n - 1])


def test_augment_variants_record_and_reject_bad_values(tmp_path, monkeypatch, capsys):
    import json

    from sklmn.benchmarks._bench import memory_hindsight as mh

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    X = [rng.normal(size=(int(rng.integers(6, 10)), 2)) + 0.8 * c for c in y]
    _serve(monkeypatch, X, y)
    out = tmp_path / "curves.jsonl"
    for variant in (
        ["--crop", "0.8"],
        ["--jitter", "0.1", "--scale", "0.1"],
        ["--time-warp", "0.2"],
    ):
        mh.main(["curves", "--datasets", "toy", "--epochs", "2", "--out", str(out),
                 *variant])
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert recs[0]["crop"] == 0.8 and "jitter" not in recs[0]
    assert recs[1]["jitter"] == 0.1 and recs[1]["scale"] == 0.1
    assert recs[2]["time_warp"] == 0.2
    for rec in recs:
        assert len(rec["accuracy"]) == 3 and np.all(np.isfinite(rec["loss"]))
    for bad in (["--crop", "1.0"], ["--crop", "-0.2"], ["--jitter", "-1"]):
        with pytest.raises(SystemExit):
            mh.main(["curves", "--datasets", "toy", *bad])
        assert bad[1] in capsys.readouterr().err


def test_lbfgs_lowers_the_training_loss_and_records_every_round(
    tmp_path, monkeypatch, capsys
):
    import json

    from sklmn.benchmarks._bench import memory_hindsight as mh

    _serve_shifted(monkeypatch, np.repeat([0, 1], 12), 0.5)
    out = tmp_path / "lbfgs.jsonl"
    mh.main(["lbfgs", "--datasets", "toy", "--outer", "3", "--inner", "4",
             "--out", str(out)])
    rec = json.loads(out.read_text())
    assert len(rec["accuracy"]) == 4 and len(rec["loss"]) == 4
    assert all(0.0 <= a <= 1.0 for a in rec["accuracy"])
    # every accepted L-BFGS step lowers the objective (here the training loss)
    assert rec["loss"][-1] < rec["loss"][0]
    assert all(
        b <= a + 1e-6 for a, b in zip(rec["loss"], rec["loss"][1:], strict=False)
    )
    assert "| toy | lmn | 0 |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # --outer 0
        mh.main(["lbfgs", "--datasets", "toy", "--outer", "0"])
    assert refused.value.code == 2


def test_readout_input_is_in_the_order_of_the_sequences():
    from sklmn import LMNClassifier
    from sklmn.benchmarks._bench.memory_hindsight import _readout_input

    rng = np.random.default_rng(0)
    X = [rng.normal(size=(n, 1)) for n in (5, 9, 3, 9, 7)]
    est = LMNClassifier(max_iter=1, random_state=0).fit(X, [0, 1, 0, 1, 0])
    together = _readout_input(est, X)
    for i, x in enumerate(X):
        np.testing.assert_allclose(together[i], _readout_input(est, [x])[0],
                                   rtol=1e-10, atol=1e-12)


def test_projection_records_the_guarded_choice(tmp_path, monkeypatch, capsys):
    import json

    from sklmn.benchmarks._bench import memory_hindsight as mh

    _serve_shifted(monkeypatch, np.repeat([0, 1], 12), 0.5)
    out = tmp_path / "projection.jsonl"
    mh.main(["projection", "--datasets", "toy", "--steps", "4", "--every", "2",
             "--folds", "3", "--out", str(out)])
    rec = json.loads(out.read_text())
    assert len(rec["held_out"]) == len(rec["test"]) == 3
    assert len(rec["objective"]) == 4
    assert rec["final"] == rec["test"][rec["chosen"]]
    held = rec["held_out"]
    # a later copy is chosen only when it beats the start on the held-out
    # quarter by more than one of its 6 sequences
    assert rec["chosen"] == 0 or held[rec["chosen"]] > held[0] + 1 / 6
    assert "| toy | lmn | 0 |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # --every 0
        mh.main(["projection", "--datasets", "toy", "--every", "0"])
    assert refused.value.code == 2
