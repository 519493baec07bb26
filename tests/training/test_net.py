"""The skorch net of the estimators: the network wrapper, datasets, length
buckets, loss, scoring of the outputs, callbacks and persistence (the code
of ``sklmn/estimators/_net.py``)."""

import pickle
import re
import warnings

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from skorch.callbacks import Callback, GradientNormClipping

from sklmn._training import (
    ConvergenceMonitor,
    ModuleGradientClipping,
    SequenceDataset,
    SequenceLoss,
    SequenceNet,
    collate_batch,
    make_sequence_net,
    score_outputs,
)
from sklmn._training._data import SeededShuffleBatches
from sklmn.callbacks import DivergenceWarning
from sklmn.nn import LMN
from sklmn.utils.sequences import check_sequences
from tests._helpers import _lmn_clf, _lmn_reg, _pad, _ragged, _sequence_targets

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# --------------------------------------------------------------------------- #
# Numerics against straightforward per-sequence references
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("problem", ["multiclass", "multilabel", "continuous"])
@pytest.mark.parametrize("per_step", [False, True])
def test_sequence_loss_matches_per_sequence_reference(problem, per_step):
    gen = torch.Generator().manual_seed(0)
    N, T, k = 4, 5, 3
    lengths = torch.tensor([5, 2, 4, 1])
    shape = (N, T, k) if per_step else (N, k)
    y_pred = torch.randn(shape, generator=gen, dtype=torch.float64)
    if problem == "multiclass":
        y_true = torch.randint(0, k, shape[:-1], generator=gen)
        if per_step:
            for n in range(N):
                y_true[n, lengths[n] :] = -100
    elif problem == "multilabel":
        y_true = torch.randint(0, 2, shape, generator=gen).double()
    else:
        y_true = torch.randn(shape, generator=gen, dtype=torch.float64)
    loss = SequenceLoss(problem, per_step)(y_pred, y_true, lengths)

    # reference: python loop over valid (sequence, step) pairs
    terms = []
    for n in range(N):
        steps = range(int(lengths[n])) if per_step else [None]
        for t in steps:
            p = y_pred[n, t] if per_step else y_pred[n]
            q = y_true[n, t] if per_step else y_true[n]
            if problem == "multiclass":
                terms.append(float(-torch.log_softmax(p, 0)[q]))
            elif problem == "multilabel":
                prob = torch.sigmoid(p)
                bce = -(q * torch.log(prob) + (1 - q) * torch.log(1 - prob))
                terms.extend(bce.tolist())
            else:
                terms.extend(((p - q) ** 2).tolist())
    assert float(loss) == pytest.approx(np.mean(terms), rel=1e-10)


def test_sequence_net_reads_the_last_valid_step():
    torch.manual_seed(0)
    rnn = torch.nn.RNN(3, 4, batch_first=True)

    class Wrapped(torch.nn.Module):
        output_size = 4

        def forward(self, x, lengths=None):
            return rnn(x)[0], None

    net = SequenceNet(Wrapped(), 2)
    seqs = [torch.randn(t, 3) for t in (5, 2, 4)]
    x = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    out = net(x, lengths=torch.tensor([5, 2, 4]))
    for i, s in enumerate(seqs):  # each sequence alone, unpadded
        expected = net.readout(rnn(s[None])[0][0, -1])
        # float32, batch of 3 vs batch of 1: other BLAS paths, float32 rounding
        assert_allclose(out[i].detach(), expected.detach(), rtol=1e-5, atol=1e-5)


def test_forward_hooks_added_after_a_prediction_see_the_next_one():
    # predict runs a cached float64 copy of the module on the CPU: a hook
    # registered (or removed) after that copy was made must still count
    seqs = _ragged(n=12)
    est = _lmn_reg(max_iter=2).fit(seqs, _sequence_targets(seqs, "regression"))
    first = est.predict(seqs)
    seen = []
    handle = est.net_.module_.readout.register_forward_hook(
        lambda module, args, out: seen.append(args[0].shape[0])
    )
    assert_allclose(est.predict(seqs), first, rtol=1e-12, atol=1e-12)
    assert sum(seen) == len(seqs)
    handle.remove()
    est.predict(seqs)
    assert sum(seen) == len(seqs)


def test_weights_edited_through_data_after_a_prediction_are_seen():
    # an edit through .data leaves the parameters' version counters alone:
    # the cached float64 copy of the module went on predicting the old weights
    seqs = _ragged(n=12)
    est = _lmn_reg(max_iter=2).fit(seqs, _sequence_targets(seqs, "regression"))
    est.predict(seqs)
    readout = est.net_.module_.readout
    readout.weight.data.zero_()
    readout.bias.data = torch.zeros_like(readout.bias)
    expected = np.full(len(seqs), float(est.target_mean_[0]))
    assert_allclose(est.predict(seqs), expected, rtol=1e-12, atol=1e-12)
    readout.bias.data.fill_(1.0)
    expected += float(est.target_scale_[0])
    assert_allclose(est.predict(seqs), expected, rtol=1e-12, atol=1e-12)


def test_predictions_do_not_depend_on_padding_or_batch():
    seqs = _ragged(n=25)
    y = _sequence_targets(seqs, "regression")
    est = _lmn_reg(max_iter=3).fit(seqs, y)
    alone = np.array([est.predict([s])[0] for s in seqs])
    assert_allclose(est.predict(seqs), alone, rtol=1e-12, atol=1e-12)
    assert_allclose(est.predict(_pad(seqs)), alone, rtol=1e-12, atol=1e-12)


def test_score_outputs_multiclass_per_step():
    outputs = np.zeros((2, 3, 2))
    outputs[0, :, 1] = 1.0  # predicts class 1 everywhere in sequence 0
    y_true = np.array([[1, 0, 1], [0, -100, -100]])
    # valid steps: (0,0) ok, (0,1) wrong, (0,2) ok, (1,0) ok -> 3/4
    assert score_outputs("multiclass", True, y_true, outputs, [3, 1]) == 0.75


# --------------------------------------------------------------------------- #
# Training: best weights, progress, divergence, penalty
# --------------------------------------------------------------------------- #
def test_early_stopping_restores_best_epoch():
    seqs = _ragged(n=60)
    y = _sequence_targets(seqs, "multiclass")
    est = _lmn_clf(
        early_stopping=True,
        max_iter=60,
        n_iter_no_change=3,
        learning_rate_init=0.1,
        validation_metric="score",
        pretrainer=None,  # (a pretrained start may itself be the best)
    ).fit(seqs, y)
    assert len(est.validation_scores_) == est.n_iter_ < 60
    assert est.best_epoch_ > 0
    assert est.best_validation_score_ == max(est.validation_scores_)
    assert est.best_validation_score_ == est.validation_scores_[est.best_epoch_ - 1]
    if est.best_epoch_ > 0:
        assert est.best_loss_ == est.validation_loss_curve_[est.best_epoch_ - 1]
    assert np.isfinite(est.best_loss_)
    # the restored parameters give the best validation score again; rebuild
    # the validation set from the seeds fit draws from random_state=0
    seeds = np.random.RandomState(0).randint(np.iinfo(np.int32).max, size=3)
    # the net sees the standardized inputs
    standardized = est._standardized_inputs(check_sequences(seqs, dtype=np.float32))
    X_t = torch.from_numpy(standardized.data)
    lengths = torch.tensor([len(s) for s in seqs])
    y_enc = np.searchsorted(est.classes_, y)
    dataset = SequenceDataset(X_t, lengths, torch.from_numpy(y_enc))
    _, valid, _ = est._split(dataset, y_enc, int(seeds[2]))
    assert len(valid) == 6
    outputs = est.net_.predict_outputs(valid)
    score = score_outputs(
        "multiclass", False, valid.y.numpy(), outputs, valid.lengths.numpy()
    )
    assert score == pytest.approx(est.best_validation_score_, abs=1e-12)
    # the split is seeded: same random_state, same validation set
    again = clone(est).fit(seqs, y)
    assert again.validation_scores_ == est.validation_scores_


def test_verbose_prints_progress(capsys):
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "binary")
    _lmn_clf(max_iter=50, tol=1e3, n_iter_no_change=1, verbose=1).fit(seqs, y)
    out = capsys.readouterr().out
    assert re.search(r"Epoch 1: loss = \d+\.\d+", out)
    assert "Epoch 2:" in out and "Epoch 3:" not in out
    assert "did not improve more than tol=1000.0 for 1 consecutive epochs" in out
    _lmn_clf(max_iter=2).fit(seqs, y)
    assert capsys.readouterr().out == ""


def test_non_finite_loss_is_a_divergence():
    seqs = _ragged(n=20)
    y = np.full(20, 1e30)  # squared error overflows float32
    est = _lmn_reg(max_iter=3, standardize=False, pretrainer=None)
    with warnings.catch_warnings():  # made an error: fit fails, nothing fitted
        warnings.simplefilter("error", DivergenceWarning)
        with pytest.raises(DivergenceWarning, match="diverged at epoch 1.*data loss"):
            est.fit(seqs, y)
    assert not hasattr(est, "net_")
    # by default: the starting weights are kept, with the cause in a warning
    with pytest.warns(DivergenceWarning, match="diverged at epoch 1.*data loss"):
        est.fit(seqs, y)
    assert est.diverged_ and est.n_iter_ == 0


def test_penalty_is_added_to_the_loss():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "regression")
    plain = _lmn_reg(max_iter=1, learning_rate_init=1e-12).fit(seqs, y)
    penalized = _lmn_reg(
        max_iter=1, learning_rate_init=1e-12, orthogonality_penalty=10.0
    ).fit(seqs, y)
    W = plain.net_.module_.recurrent.layers[0].weight_mm.detach().double()
    ortho = 10.0 * float(((W.T @ W - torch.eye(W.shape[0])) ** 2).sum())
    assert penalized.loss_curve_[0] == pytest.approx(
        plain.loss_curve_[0] + ortho, rel=1e-4
    )


# --------------------------------------------------------------------------- #
# Persistence of the net
# --------------------------------------------------------------------------- #
@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a CPU-only machine")
def test_model_saved_from_cuda_device_loads_on_cpu():
    # A net trained on a GPU pickles its tensors (the module parameter too)
    # in skorch's torch-aware state, which maps them to the CPU on load.
    from skorch.exceptions import DeviceWarning

    seqs = _ragged(n=10)
    est = _lmn_reg(max_iter=1).fit(seqs, np.arange(10.0))
    state = est.net_.__getstate__()
    assert "module" not in state and "module_" not in state
    est.net_.device = "cuda"  # what a GPU-trained net records
    with pytest.warns(DeviceWarning, match="(?i)cuda"):
        loaded = pickle.loads(pickle.dumps(est))
    assert torch.device(loaded.net_.device).type == "cpu"
    assert_array_equal(loaded.predict(seqs), est.predict(seqs))


# --------------------------------------------------------------------------- #
# Length-bucketed batches
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("pool_batches", [1, 50])
def test_length_bucket_sampler(pool_batches):
    from sklmn._training import LengthBucketBatchSampler

    lengths = torch.from_numpy(np.random.RandomState(0).randint(1, 100, size=103))
    sampler = LengthBucketBatchSampler(
        lengths, 10, torch.Generator().manual_seed(0), pool_batches=pool_batches
    )
    batches = list(sampler)
    assert len(batches) == len(sampler)
    # every sequence exactly once per epoch
    assert sorted(i for b in batches for i in b) == list(range(103))
    assert all(len(b) <= 10 for b in batches)
    if pool_batches == 50:  # one pool: batches are disjoint ranges of lengths
        ranges = sorted((int(lengths[b].min()), int(lengths[b].max())) for b in batches)
        assert all(
            hi <= lo for (_, hi), (lo, _) in zip(ranges[:-1], ranges[1:], strict=True)
        )
    # batches come in random order, and a new order every epoch
    assert list(sampler) != batches


def test_bucket_by_length_training_is_reproducible():
    seqs = _ragged(n=40, low=2, high=30)
    y = _sequence_targets(seqs, "regression")
    a = _lmn_reg(max_iter=3, batch_size=8, bucket_by_length=True).fit(seqs, y)
    b = _lmn_reg(max_iter=3, batch_size=8, bucket_by_length=True).fit(seqs, y)
    c = _lmn_reg(max_iter=3, batch_size=8).fit(seqs, y)
    assert a.loss_curve_ == b.loss_curve_
    # other batches: a different training, not just other rounding
    assert not np.allclose(a.loss_curve_, c.loss_curve_, rtol=1e-3, atol=0)
    assert_array_equal(a.predict(seqs), b.predict(seqs))


# --------------------------------------------------------------------------- #
# The lean training plumbing behaves as skorch's
# --------------------------------------------------------------------------- #
def _tiny_net():
    module = SequenceNet(LMN(2, 3, 3), 2)
    data = SequenceDataset(
        torch.randn(8, 4, 2, generator=torch.Generator().manual_seed(0)),
        torch.full((8,), 4),
        torch.tensor([0, 1] * 4),
    )
    net = make_sequence_net(
        module, problem="multiclass", per_step=False, lr=1e-2, max_epochs=1,
        batch_size=4,
    ).fit(data)
    return net, data


def test_set_training_switches_every_submodule():
    net, _ = _tiny_net()
    net.module_.readout.eval()  # one submodule out of step
    net._set_training(True)
    assert all(m.training for m in net.module_.modules())
    net._set_training(False)
    assert not any(m.training for m in net.module_.modules())
    net._set_training(False)  # already there: stays
    assert not any(m.training for m in net.module_.modules())
    net._set_training(True)
    assert all(m.training for m in net.module_.modules())


def test_get_loss_adds_the_penalty_unless_it_is_a_constant_zero():
    net, data = _tiny_net()
    batch, y = data.__getitems__([0, 1, 2, 3])
    out = net.module_(batch["X"], lengths=batch["lengths"])
    data_loss = net.criterion_(out, y, batch["lengths"])
    zero = torch.zeros(())
    torch.testing.assert_close(net.get_loss(out, y, X=batch, penalty=zero), data_loss)
    torch.testing.assert_close(
        net.get_loss(out, y, X=batch, penalty=torch.tensor(0.5)), data_loss + 0.5
    )
    w = torch.tensor(0.0, requires_grad=True)
    loss = net.get_loss(out, y, X=batch, penalty=2.0 * w)  # zero, with a gradient
    loss.backward()
    assert w.grad is not None and float(w.grad) == pytest.approx(2.0)
    # the fast path of a CPU batch and skorch's conversions agree
    fast, _ = net.infer_with_penalty(batch)
    slow, _ = net.infer_with_penalty({k: v.numpy() for k, v in batch.items()})
    torch.testing.assert_close(fast, slow)


@pytest.mark.parametrize("n, batch_size", [(10, 3), (12, 4), (5, 8), (1, 1)])
def test_seeded_shuffle_batches_are_the_dataloaders(n, batch_size):
    data = SequenceDataset(
        torch.randn(n, 5, 2, generator=torch.Generator().manual_seed(1)),
        torch.from_numpy(np.random.RandomState(0).randint(1, 6, size=n)),
        torch.arange(n),
    )
    lean = SeededShuffleBatches(data, batch_size, torch.Generator().manual_seed(3))
    loader = torch.utils.data.DataLoader(
        data,
        batch_size=batch_size,
        shuffle=True,
        collate_fn=collate_batch,
        generator=torch.Generator().manual_seed(3),
    )
    assert len(lean) == len(loader)
    for _ in range(3):  # the generator advances alike from epoch to epoch
        pairs = list(zip(lean, loader, strict=True))
        assert len(pairs) == len(loader)
        for (xa, ya), (xb, yb) in pairs:
            assert torch.equal(ya, yb)  # the targets are the sequence indices
            assert torch.equal(xa["lengths"], xb["lengths"])
            assert torch.equal(xa["X"], xb["X"])  # copied values


def test_training_batches_without_dataloader_only_with_default_settings():
    net, data = _tiny_net()
    assert isinstance(net.get_iterator(data, training=True), SeededShuffleBatches)
    assert isinstance(
        net.get_iterator(data, training=False), torch.utils.data.DataLoader
    )
    for setting in ({"iterator_train__drop_last": True}, {"bucket_by_length": True}):
        other = make_sequence_net(
            SequenceNet(LMN(2, 3, 3), 2),
            problem="multiclass",
            per_step=False,
            lr=1e-2,
            max_epochs=1,
            batch_size=4,
        ).set_params(**setting)
        assert not isinstance(
            other.get_iterator(data, training=True), SeededShuffleBatches
        )


class _AdamWithClosure(torch.optim.Adam):
    """Adam under another type: trained through skorch's closure."""


def test_step_without_closure_is_skorchs_step():
    seqs = _ragged(n=30, low=2, high=9)
    dataset = SequenceDataset(
        torch.from_numpy(_pad(seqs, fill=0.0).astype(np.float32)),
        torch.tensor([len(s) for s in seqs]),
        torch.from_numpy(_sequence_targets(seqs, "binary").astype(np.int64)),
    )
    grads_seen = []

    class CountGradients(Callback):
        def on_grad_computed(self, net, named_parameters, **kwargs):
            grads_seen.append(len([p for _, p in named_parameters]))

    weights = []
    for optimizer in (torch.optim.Adam, _AdamWithClosure):
        torch.manual_seed(0)
        net = make_sequence_net(
            SequenceNet(LMN(3, 4, 4), 2),
            problem="multiclass",
            per_step=False,
            lr=1e-2,
            max_epochs=3,
            batch_size=8,
            optimizer=optimizer,
            callbacks=[("count", CountGradients())],
        ).fit(dataset)
        weights.append([p.detach().clone() for p in net.module_.parameters()])
        # skorch's history: one loss and one batch size per batch
        sizes = net.history[-1, "batches", :, "train_batch_size"]
        assert sizes == [8, 8, 8, 6]
    for a, b in zip(*weights, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    n_params = len(list(net.module_.parameters()))
    assert grads_seen == [n_params] * 24  # every step, both paths


def test_stopping_rule_collates_its_subsample_once_per_fit():
    seqs = _ragged(n=300, low=2, high=9)
    y = _sequence_targets(seqs, "binary")
    # the training loss monitored (the smooth fine-tuning's held-out
    # quarter monitors the validation loss)
    clf = _lmn_clf(max_iter=3, n_iter_no_change=10, fine_tuning="full").fit(seqs, y)
    monitor = dict(clf.net_.callbacks_)["convergence"]
    assert isinstance(monitor, ConvergenceMonitor)
    # nothing of the training data is kept with the fitted model
    assert monitor._train_batches is None and monitor._train is None
    built = []
    original = ConvergenceMonitor._collate_train_subset

    def spy(self, net, dataset):
        batches = original(self, net, dataset)
        built.append(sum(len(b[0]["lengths"]) for b in batches))
        return batches

    ConvergenceMonitor._collate_train_subset = spy
    try:
        again = clone(clf).fit(seqs, y)
    finally:
        ConvergenceMonitor._collate_train_subset = original
    assert built == [128]  # once, the subsample of 300 sequences
    assert_allclose(again.loss_curve_, clf.loss_curve_, rtol=1e-6)


def test_notify_calls_every_hook_but_skorchs_inherited_no_ops():
    calls = []

    class Defined(Callback):
        def on_batch_end(self, net, **kwargs):
            calls.append("class")

    patched = Callback()  # a hook set on the instance is called too
    patched.on_batch_begin = lambda net, **kwargs: calls.append("instance")
    data = SequenceDataset(
        torch.randn(8, 4, 2), torch.full((8,), 4), torch.arange(8) % 2
    )
    net = make_sequence_net(
        SequenceNet(LMN(2, 3, 3), 2),
        problem="multiclass",
        per_step=False,
        lr=1e-2,
        max_epochs=2,
        batch_size=4,
        callbacks=[("defined", Defined()), ("patched", patched)],
    ).fit(data)
    assert calls.count("class") == calls.count("instance") == 4  # 2 x 2 batches
    assert len(net.history) == 2 and len(net.history[-1, "batches"]) == 2


def test_module_gradient_clipping_is_skorchs_clipping():
    data = SequenceDataset(
        torch.randn(16, 5, 2, generator=torch.Generator().manual_seed(0)),
        torch.full((16,), 5),
        torch.arange(16) % 2,
    )
    weights, clippers = [], []
    for clip in (ModuleGradientClipping(0.05), GradientNormClipping(0.05), None):
        torch.manual_seed(0)
        net = make_sequence_net(
            SequenceNet(LMN(2, 4, 4), 2),
            problem="multiclass",
            per_step=False,
            lr=0.1,
            max_epochs=3,
            batch_size=4,
            callbacks=[] if clip is None else [("clip", clip)],
        ).fit(data)
        flat = [p.detach().reshape(-1) for p in net.module_.parameters()]
        weights.append(torch.cat(flat))
        clippers.append(dict(net.callbacks_).get("clip"))
    assert clippers[0]._module_only  # one module, a criterion without parameters
    torch.testing.assert_close(weights[0], weights[1], rtol=1e-6, atol=1e-7)
    assert not torch.allclose(weights[0], weights[2], rtol=1e-3, atol=1e-4)
