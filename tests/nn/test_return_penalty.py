"""The penalty of a forward pass as a return value (``return_penalty=True``),
the deprecated ``penalty()`` and the modules written before it."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

from sklmn.estimators import RNNRegressor
from sklmn.nn import (
    ENRNN,
    GRU,
    LMN,
    LSTM,
    ClockworkRNN,
    ElmanRNN,
    LinearRNN,
    LMNLayer,
    MultiScaleLMN,
    RecurrentModule,
    UnrolledRNN,
)
from sklmn.nn._base import accepts_return_penalty, forward_with_penalty
from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net
from tests._helpers import _ragged, _sequence_targets

# float32 modules against float64 references: a few float32 roundings
RTOL, ATOL = 1e-5, 1e-6


def _randomize(module, seed=0):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))


def _batch(seed=1, n=3, T=6, d=2):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, T, d, generator=gen)
    lengths = torch.tensor([T, 2, 4][:n])
    return x, lengths


def _deprecated_penalty(module):
    with pytest.warns(FutureWarning, match=r"penalty\(\) is deprecated"):
        return module.penalty()


# --------------------------------------------------------------------------- #
# Independent references (float64, one unpadded sequence at a time)
# --------------------------------------------------------------------------- #
def _ref_lmn_memories(lmn, x, lengths):
    """Memory sequences of every (layer, direction), per sequence, in the
    order each direction reads the sequence."""
    params = [
        {
            k: getattr(layer, k).detach().double().numpy()
            for k in ("weight_xh", "weight_mh", "bias_h", "weight_hm", "weight_mm")
        }
        for layer in lmn._all_layers()
    ]
    memories = {}  # (layer index in _all_layers order, sequence) -> (T, M)
    for n, length in enumerate(lengths.tolist()):
        inp = x[n, :length].double().numpy()
        for i in range(lmn.num_layers):
            outs = []
            for j in range(lmn.num_directions):
                k = i * lmn.num_directions + j
                p = params[k]
                seq = inp if j == 0 else inp[::-1]
                m = np.zeros(p["weight_mm"].shape[0])
                ms = []
                for x_t in seq:
                    h = np.tanh(p["weight_xh"] @ x_t + p["weight_mh"] @ m + p["bias_h"])
                    m = p["weight_hm"] @ h + p["weight_mm"] @ m
                    ms.append(m)
                ms = np.array(ms)
                memories[k, n] = ms
                outs.append(ms if j == 0 else ms[::-1])
            inp = np.concatenate(outs, axis=1)
    return memories


def _ref_norm_term(per_sequence_states):
    """Batch mean of each sequence's mean squared change of the state norm."""
    terms = []
    for ms in per_sequence_states:
        norms = np.r_[0.0, np.linalg.norm(ms, axis=1)]
        terms.append(np.mean(np.diff(norms) ** 2))
    return float(np.mean(terms))


def _ref_ortho_term(W):
    W = W.detach().double().numpy()
    return float(np.sum((W.T @ W - np.eye(W.shape[1])) ** 2))


def _ref_lmn_penalty(lmn, x, lengths):
    total = 0.0
    for layer in lmn._all_layers():
        total += lmn.orthogonality_penalty * _ref_ortho_term(layer.weight_mm)
    memories = _ref_lmn_memories(lmn, x, lengths)
    for k in range(len(lmn._all_layers())):
        states = [memories[k, n] for n in range(len(lengths))]
        total += lmn.norm_penalty * _ref_norm_term(states)
    return total


# --------------------------------------------------------------------------- #
# (a) the returned penalty: the old path's value and the formulas
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize(
    "penalties",
    [
        {"orthogonality_penalty": 0.3},
        {"norm_penalty": 0.7},
        {"orthogonality_penalty": 0.3, "norm_penalty": 0.7},
    ],
)
def test_lmn_returned_penalty_matches_old_path_and_formula(bidirectional, penalties):
    torch.manual_seed(0)
    lmn = LMN(2, 3, 4, num_layers=2, bidirectional=bidirectional, **penalties)
    _randomize(lmn, 3)
    x, lengths = _batch()
    out, (h, m), penalty = lmn(x, lengths, return_penalty=True)
    assert penalty.shape == () and penalty.dtype == torch.float32
    assert penalty.requires_grad
    # the same outputs as a plain call
    out2, (h2, m2) = lmn(x, lengths)
    torch.testing.assert_close(out, out2, rtol=0, atol=0)
    torch.testing.assert_close(m, m2, rtol=0, atol=0)
    # the deprecated path returns the last forward's penalty (same graph value)
    old = _deprecated_penalty(lmn)
    torch.testing.assert_close(old, penalty, rtol=RTOL, atol=ATOL)
    expected = _ref_lmn_penalty(lmn, x, lengths)
    assert float(penalty.detach()) > 0
    np.testing.assert_allclose(float(penalty.detach()), expected, rtol=RTOL, atol=ATOL)
    penalty.backward()
    assert lmn.layers[0].weight_mm.grad.abs().sum() > 0


def _ref_multiscale_penalty(net, x, lengths):
    """Soft orthogonality and norm stabilizer from the memory sequences that
    ``forward_states`` returns (the reverse direction's read backwards)."""
    _, m_seq, _ = net.forward_states(x, lengths)
    m_seq = m_seq.detach().double().numpy()
    directions = [net] if net.reverse is None else [net, net.reverse]
    M = net.total_memory_size
    total = 0.0
    for j, module in enumerate(directions):
        W = module.weight_mm * module.memory_mask
        total += module.orthogonality_penalty * _ref_ortho_term(W)
        states = []
        for n, length in enumerate(lengths.tolist()):
            ms = m_seq[n, :length, j * M : (j + 1) * M]
            states.append(ms if j == 0 else ms[::-1])
        total += module.norm_penalty * _ref_norm_term(states)
    return total


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize(
    "penalties",
    [
        {"orthogonality_penalty": 0.5},
        {"norm_penalty": 2.0},
        {"orthogonality_penalty": 0.5, "norm_penalty": 2.0},
    ],
)
def test_multiscale_returned_penalty_matches_old_path_and_formula(
    bidirectional, penalties
):
    torch.manual_seed(0)
    net = MultiScaleLMN(2, 3, 2, 3, bidirectional=bidirectional, **penalties)
    _randomize(net, 5)
    with torch.no_grad():  # keep the block structure of W_mm
        for module in [net] if net.reverse is None else [net, net.reverse]:
            module.weight_mm.mul_(module.memory_mask)
    x, lengths = _batch(seed=2)
    out, state, penalty = net(x, lengths, return_penalty=True)
    assert penalty.shape == () and penalty.requires_grad
    torch.testing.assert_close(out, net(x, lengths)[0], rtol=0, atol=0)
    torch.testing.assert_close(_deprecated_penalty(net), penalty, rtol=RTOL, atol=ATOL)
    *_, from_states = net.forward_states(x, lengths, return_penalty=True)
    torch.testing.assert_close(from_states, penalty, rtol=RTOL, atol=ATOL)
    expected = _ref_multiscale_penalty(net, x, lengths)
    assert float(penalty.detach()) > 0
    np.testing.assert_allclose(float(penalty.detach()), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMN(2, 3, 3),
        lambda: LMNLayer(2, 3, 3),
        lambda: MultiScaleLMN(2, 3, 2, 2, bidirectional=True),
        lambda: ENRNN(2, 3, 2),
        lambda: ClockworkRNN(2, 2, 2, bidirectional=True),
        lambda: UnrolledRNN(2, 3, 2, bidirectional=True),
        lambda: ElmanRNN(2, 3),
        lambda: LSTM(2, 3),
        lambda: GRU(2, 3),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_module_returns_a_zero_penalty_without_one(make, dtype):
    module = make().to(dtype)
    assert accepts_return_penalty(module)
    x, lengths = _batch()
    x = x.to(dtype)
    plain = module(x, lengths)
    out, state, penalty = module(x, lengths, return_penalty=True)
    assert len(plain) == 2
    torch.testing.assert_close(out, plain[0], rtol=0, atol=0)
    assert penalty.shape == () and penalty.dtype == dtype
    assert float(penalty.detach()) == 0.0


# --------------------------------------------------------------------------- #
# (b) the loss gets the penalty from the forward pass, not from the module
# --------------------------------------------------------------------------- #
def _dataset(n=8, T=5, d=2, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, T, d, generator=gen)
    lengths = torch.tensor([T, 3, 2, T, 4, 1, T, 2][:n])
    y = torch.randn(n, 1, generator=gen)
    return SequenceDataset(X, lengths, y)


def _data_loss(module, data):
    with torch.no_grad():
        out = module(data.X, lengths=data.lengths)
    return float(((out - data.y) ** 2).mean())


def test_loss_uses_the_returned_penalty_and_never_reads_the_module():
    torch.manual_seed(0)
    lmn = LMN(2, 4, 4, orthogonality_penalty=2.0, norm_penalty=0.5)
    module = SequenceNet(lmn, 1)
    data = _dataset()

    def forbidden():  # sklmn must not call penalty() on its own modules
        raise AssertionError("penalty() read after the forward")

    lmn.penalty = forbidden
    with torch.no_grad():
        _, expected_penalty = module(data.X, data.lengths, return_penalty=True)
    expected = _data_loss(module, data) + float(expected_penalty.detach())
    net = make_sequence_net(
        module,
        problem="continuous",
        per_step=False,
        lr=0.0,
        max_epochs=1,
        batch_size=len(data),
        valid_dataset=data,
    ).fit(data)
    assert float(expected_penalty.detach()) > 0
    assert net.history[-1, "train_loss"] == pytest.approx(expected, rel=1e-5)
    assert net.history[-1, "valid_loss"] == pytest.approx(expected, rel=1e-5)
    # predictions: the outputs alone
    assert net.predict_outputs(data).shape == (len(data), 1)
    assert net.infer({"X": data.X, "lengths": data.lengths}).shape == (len(data), 1)


def test_sequence_net_penalty_is_deprecated():
    torch.manual_seed(0)
    module = SequenceNet(LMN(2, 3, 3, orthogonality_penalty=1.0), 2)
    x, lengths = _batch()
    outputs, penalty = module(x, lengths, return_penalty=True)
    torch.testing.assert_close(outputs, module(x, lengths), rtol=0, atol=0)
    with pytest.warns(FutureWarning, match=r"SequenceNet.penalty\(\) is deprecated"):
        old = module.penalty()
    torch.testing.assert_close(old, penalty, rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- #
# (c) the deprecated penalty()
# --------------------------------------------------------------------------- #
def test_penalty_method_warns_and_returns_the_last_forward_penalty():
    lmn = LMN(2, 3, 3, norm_penalty=1.0)
    with pytest.warns(FutureWarning, match="return_penalty=True"):
        before = lmn.penalty()
    assert float(before.detach()) == 0.0  # no forward yet
    x, lengths = _batch()
    _, _, penalty = lmn(x, lengths, return_penalty=True)
    with pytest.warns(FutureWarning, match=r"LMN.penalty\(\) is deprecated"):
        after = lmn.penalty()
    torch.testing.assert_close(after, penalty, rtol=RTOL, atol=ATOL)
    with pytest.warns(FutureWarning):
        assert float(ElmanRNN(2, 3).penalty()) == 0.0


# --------------------------------------------------------------------------- #
# (d) modules written before return_penalty
# --------------------------------------------------------------------------- #
class OldProtocolRNN(torch.nn.Module):
    """A custom module of the protocol before return_penalty: penalty()."""

    scale = 0.5

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.rnn = torch.nn.RNN(input_size, hidden_size, batch_first=True)
        self.output_size = hidden_size

    def forward(self, x, lengths=None):
        return self.rnn(x)[0], None

    def penalty(self):
        return self.scale * self.rnn.weight_hh_l0.pow(2).sum()


class OldRecurrentSubclass(RecurrentModule):
    """A RecurrentModule subclass of the old protocol: it records its
    penalty in ``_last_penalty`` for the inherited ``penalty()``."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.output_size = input_size, hidden_size
        self.rnn = torch.nn.RNN(input_size, hidden_size, batch_first=True)

    def forward(self, x, lengths=None, state=None):
        out = self.rnn(x)[0]
        self._last_penalty = 0.5 * self.rnn.weight_hh_l0.pow(2).sum()
        return out, None


def test_old_protocol_is_detected_once_and_its_penalty_read():
    torch.manual_seed(0)
    old = OldProtocolRNN(2, 3)
    assert not accepts_return_penalty(old)
    assert accepts_return_penalty(LMN(2, 3, 3))
    x, lengths = _batch()
    (out, state), penalty = forward_with_penalty(old, x, lengths=lengths)
    torch.testing.assert_close(out, old(x)[0], rtol=0, atol=0)
    torch.testing.assert_close(penalty, old.penalty(), rtol=0, atol=0)
    # a module without any penalty: zero
    (out, _), zero = forward_with_penalty(torch.nn.Identity(), (x, None))
    assert float(zero.detach()) == 0.0


def test_old_protocol_module_trains_through_sequence_net():
    torch.manual_seed(0)
    module = SequenceNet(OldProtocolRNN(2, 4), 1)
    data = _dataset()
    expected = _data_loss(module, data) + float(module.recurrent.penalty().detach())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation for a custom penalty()
        outputs, penalty = module(data.X, data.lengths, return_penalty=True)
        net = make_sequence_net(
            module,
            problem="continuous",
            per_step=False,
            lr=0.0,
            max_epochs=1,
            batch_size=len(data),
        ).fit(data)
    assert float(penalty.detach()) > 0
    assert net.history[-1, "train_loss"] == pytest.approx(expected, rel=1e-5)


def test_old_recurrent_subclass_trains_with_a_deprecation_warning():
    torch.manual_seed(0)
    module = SequenceNet(OldRecurrentSubclass(2, 4), 1)
    data = _dataset()
    with torch.no_grad():
        module.recurrent(data.X)
    expected = _data_loss(module, data) + float(module.recurrent._recorded_penalty())
    with pytest.warns(FutureWarning, match="return_penalty=True"):
        net = make_sequence_net(
            module,
            problem="continuous",
            per_step=False,
            lr=0.0,
            max_epochs=1,
            batch_size=len(data),
        ).fit(data)
    assert net.history[-1, "train_loss"] == pytest.approx(expected, rel=1e-5)


class _OldProtocolRegressor(RNNRegressor):
    def _build_module(self, input_size):
        return OldProtocolRNN(input_size, self.hidden_size)


class _NoPenaltyRNN(OldProtocolRNN):
    scale = 0.0


class _NoPenaltyRegressor(RNNRegressor):
    def _build_module(self, input_size):
        return _NoPenaltyRNN(input_size, self.hidden_size)


def test_old_protocol_module_trains_inside_an_estimator():
    seqs = _ragged(n=20)
    y = _sequence_targets(seqs, "regression")
    kw = dict(hidden_size=4, max_iter=1, learning_rate_init=1e-12, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # stopped at max_iter
        plain = _NoPenaltyRegressor(**kw).fit(seqs, y)
        penalized = _OldProtocolRegressor(**kw).fit(seqs, y)
    W = penalized.net_.module_.recurrent.rnn.weight_hh_l0.detach().double()
    expected = 0.5 * float(W.pow(2).sum())
    assert penalized.loss_curve_[0] == pytest.approx(
        plain.loss_curve_[0] + expected, rel=1e-4
    )
    assert penalized.predict(seqs).shape == (20,)


# --------------------------------------------------------------------------- #
# (e) copies hold no autograd graph
# --------------------------------------------------------------------------- #
def _graph_tensors(module):
    found = []
    for sub in module.modules():
        for name, value in vars(sub).items():
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                found.append((type(sub).__name__, name))
    return found


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMN(2, 3, 3, norm_penalty=1.0, orthogonality_penalty=0.1),
        lambda: LMNLayer(2, 3, 3, memory_matrix="spectral"),
        lambda: MultiScaleLMN(2, 3, 2, 2, bidirectional=True, norm_penalty=1.0),
        lambda: ENRNN(2, 3, 2),
        lambda: SequenceNet(LMN(2, 3, 3, norm_penalty=1.0), 2),
    ],
)
def test_copies_after_a_forward_hold_no_graph_tensor(make):
    torch.manual_seed(0)
    module = make()
    x, lengths = _batch()
    first = module(x, lengths, return_penalty=True)
    if first[-1].requires_grad:  # recorded for the deprecated penalty()
        assert _graph_tensors(module)
    else:
        assert float(first[-1].detach()) == 0.0
    for copied in (copy.deepcopy(module), pickle.loads(pickle.dumps(module))):
        assert _graph_tensors(copied) == []
        again = copied(x, lengths, return_penalty=True)
        torch.testing.assert_close(again[-1], first[-1], rtol=0, atol=0)
        out_copy = again[0]
        torch.testing.assert_close(out_copy, first[0], rtol=0, atol=0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LMN(2, 3, 4, norm_penalty=0.1),
        lambda: LMN(
            2, 3, 4, num_layers=2, bidirectional=True, memory_matrix="schur",
            norm_penalty=0.1,
        ),
        lambda: LMNLayer(2, 3, 4),
        lambda: MultiScaleLMN(2, 3, 2, 2, bidirectional=True, norm_penalty=0.1),
        lambda: ENRNN(2, 3, 2),
        lambda: ClockworkRNN(2, 2, 2),
        lambda: UnrolledRNN(2, 3, 2),
        lambda: LinearRNN(2, 3),
        lambda: GRU(2, 3),
        lambda: LSTM(2, 3),
        lambda: ElmanRNN(2, 3),
    ],
)
@pytest.mark.parametrize("lengths", [None, "tensor", "list"])
def test_empty_batch_runs_forward_and_backward(make, lengths):
    """A batch of no sequence (lengths in 1..T hold vacuously): an empty
    output, a backward pass and a zero penalty, as torch.nn.RNN gives (the
    LMN kernel indexed its final states with a float tensor, the packed
    baselines refused empty lengths, the norm stabilizer's mean was NaN)."""
    module = make()
    x = torch.zeros(0, 4, 2, requires_grad=True)
    given = {"tensor": torch.zeros(0, dtype=torch.int64), "list": []}.get(lengths)
    out, _, penalty = module(x, given, return_penalty=True)
    assert out.shape == (0, 4, module.output_size)
    assert float(penalty.detach()) == 0.0
    (out.sum() + penalty).backward()
    assert x.grad.shape == x.shape
