"""Incremental training and LAES initialization of the bidirectional MS-LMN.

The reverse direction's new modules must come from its own hidden (or input)
sequences read backwards: the growth of a bidirectional network equals, in
its reverse half, the growth of a unidirectional network holding the reverse
weights and reading the reversed sequences.
"""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn._training import SequenceNet
from sklmn.estimators import MultiScaleLMNClassifier
from sklmn.nn import MultiScaleLMN
from sklmn.nn._padding import reverse_padded
from sklmn.pretraining import IncrementalTraining, LAESInitializer, grow_multiscale_
from sklmn.utils.sequences import check_sequences
from tests._contexts import fit_context

# float64 LAES fits of identical data, in another order of summation
ATOL = 1e-8


def _data(n=24, T=9, seed=0):
    rng = np.random.RandomState(seed)
    X = torch.from_numpy(rng.randn(n, T, 1))
    lengths = torch.from_numpy(rng.randint(2, T + 1, n))
    X = X * (torch.arange(T)[None, :, None] < lengths[:, None, None])
    y = rng.randn(n, 1)
    return X, lengths, y


def _bi_net(seed=0, n_modules=1):
    torch.manual_seed(seed)
    rec = MultiScaleLMN(1, 5, 3, n_modules, bidirectional=True)
    return SequenceNet(rec, 1).double()


def _reverse_as_unidirectional(net):
    """A unidirectional SequenceNet with the reverse weights and the readout
    columns of the reverse direction."""
    rec = net.recurrent
    uni = SequenceNet(MultiScaleLMN(1, 5, 3, rec.n_modules), 1).double()
    uni.recurrent.load_state_dict(rec.reverse.state_dict())
    M = rec.total_memory_size
    with torch.no_grad():
        uni.readout.weight.copy_(net.readout.weight[:, M:])
        uni.readout.bias.copy_(net.readout.bias)
    return uni


def test_growth_of_the_reverse_direction_reads_reversed_sequences():
    X, lengths, y = _data()
    net = _bi_net(n_modules=2)
    uni = _reverse_as_unidirectional(net)
    with torch.no_grad():
        before = net(X, lengths)
    kwargs = dict(problem="continuous", per_step=False, solver="gram")
    info = grow_multiscale_(net, X, lengths, y, fit_readout=False, **kwargs)
    X_rev = reverse_padded(X, lengths)
    grow_multiscale_(uni, X_rev, lengths, y, fit_readout=False, **kwargs)
    rec = net.recurrent
    assert rec.n_modules == rec.reverse.n_modules == 3 and info["module"] == 2
    assert net.readout.in_features == rec.output_size == 18
    rows = rec.module_slice(2)
    for name in ("weight_hm", "weight_mm"):
        got = getattr(rec.reverse, name).detach()[rows]
        expected = getattr(uni.recurrent, name).detach()[rows]
        torch.testing.assert_close(got, expected, atol=ATOL, rtol=0)
        # the forward direction's module was set too, and differently
        assert getattr(rec, name).detach()[rows].abs().sum() > 0
    # without the readout fit the network computes the same function
    with torch.no_grad():
        after = net(X, lengths)
    torch.testing.assert_close(after, before, atol=1e-12, rtol=0)
    # and the readout was remapped: old reverse columns moved behind the
    # forward direction's new module, new columns zero
    W = net.readout.weight.detach()
    assert torch.all(W[:, 6:9] == 0) and torch.all(W[:, 15:18] == 0)


@pytest.mark.parametrize("readout", ["residual", "all_modules"])
def test_bidirectional_readout_fit_lowers_the_loss(readout):
    X, lengths, y = _data(seed=1)
    net = _bi_net(seed=1)
    info = grow_multiscale_(
        net, X, lengths, y, problem="continuous", per_step=False, readout=readout
    )
    assert info["loss_after"] <= info["loss_before"] + 1e-12
    with torch.no_grad():
        out = net(X, lengths).numpy()
    np.testing.assert_allclose(np.mean((out - y) ** 2), info["loss_after"], rtol=1e-6)


def test_estimator_grows_both_directions_and_predicts():
    rng = np.random.RandomState(0)
    X = [rng.randn(rng.randint(4, 10), 2) for _ in range(40)]
    y = np.array([int(x[-1, 0] > 0) for x in X])  # the last step: easy backwards
    clf = MultiScaleLMNClassifier(
        hidden_size=6,
        memory_size=2,
        n_modules=3,
        bidirectional=True,
        max_iter=4,
        early_stopping=False,
        incremental=IncrementalTraining(epochs_per_module=1),
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    rec = clf.net_.module_.recurrent
    assert rec.bidirectional and rec.n_modules == rec.reverse.n_modules == 3
    assert [s["n_modules"] for s in clf.module_history_] == [1, 2, 3]
    assert clf.net_.module_.readout.in_features == 12
    assert clf.predict_proba(X[:5]).shape == (5, 2)
    assert set(clf.predict(X)) <= {0, 1}


def test_laes_initialization_of_both_directions():
    X, lengths, y = _data(n=30, seed=2)
    seqs = [X[i, : int(n)].numpy() for i, n in enumerate(lengths)]
    seqs_rev = [s[::-1].copy() for s in seqs]

    def initialized(data, bidirectional, seed):
        torch.manual_seed(seed)
        net = SequenceNet(MultiScaleLMN(1, 4, 3, 2, bidirectional=bidirectional), 1)
        net = net.double()
        init = LAESInitializer(solver="gram", input_scale=1e-3)
        init.initialize(net, fit_context(check_sequences(data), y[:, 0], "continuous"))
        return net, init

    bi, init = initialized(seqs, True, 0)
    rev, _ = initialized(seqs_rev, False, 1)
    assert len(init.laes_layers_) == 2 and len(init.laes_layers_[1]) == 2
    # the LAES part (1 input feature: the first hidden unit) of the reverse
    # direction; the other hidden units keep their random weights
    for name, part in (
        ("weight_xh", slice(0, 1)),
        ("bias_h", slice(0, 1)),
        ("weight_hm", slice(None)),
        ("weight_mm", slice(None)),
    ):
        got = getattr(bi.recurrent.reverse, name).detach()[part]
        expected = getattr(rev.recurrent, name).detach()[part]
        torch.testing.assert_close(got, expected, atol=ATOL, rtol=0)
    # the readout is fitted on both directions' memories
    assert bi.readout.in_features == 12
    assert bi.readout.weight.detach()[:, 6:].abs().sum() > 0
