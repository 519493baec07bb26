"""Variable projection (the callback of ``fine_tuning='projection'``): the
ridge objective against scikit-learn's ridge, the refitted readout written
exactly into the network's linear readout, the rule that keeps a copy."""

import copy

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression, Ridge

from sklmn._training import _projection
from sklmn._training._projection import (
    VariableProjection,
    _accuracy,
    _Readout,
    _settled,
    choose_copy,
    guard_split_count,
    ridge_held_out_error,
)
from sklmn.nn import LMN
from sklmn.training import SequenceDataset, SequenceNet, make_sequence_net


def _reference_error(F, Y, folds, alpha, weight=None):
    """The objective with scikit-learn's Ridge on the standardized features
    (standardized over all rows, then an intercept fitted per fold)."""
    F = np.asarray(F, dtype=np.float64)
    Z = (F - F.mean(0)) / (F.std(0, ddof=1) + 1e-6)
    total = 0.0
    for fit, held in folds:
        w = None if weight is None else weight[fit]
        model = Ridge(alpha=alpha).fit(Z[fit], Y[fit], sample_weight=w)
        errors = ((model.predict(Z[held]) - Y[held]) ** 2).sum(1)
        total += np.average(errors, weights=None if weight is None else weight[held])
    return total / len(folds)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.1, 10.0])
def test_ridge_objective_matches_sklearn_ridge(weighted, alpha):
    rng = np.random.RandomState(0)
    F = rng.randn(30, 4) * [1.0, 3.0, 0.5, 2.0] + [0.0, 1.0, -2.0, 5.0]
    Y = np.eye(3)[rng.randint(0, 3, 30)]
    weight = rng.uniform(0.2, 2.0, 30) if weighted else None
    order = rng.permutation(30)
    folds = [(np.setdiff1d(order, part), part) for part in np.split(order, 3)]
    got = ridge_held_out_error(
        torch.as_tensor(F),
        torch.as_tensor(Y),
        [(torch.as_tensor(a), torch.as_tensor(b)) for a, b in folds],
        alpha,
        None if weight is None else torch.as_tensor(weight),
    )
    expected = _reference_error(F, Y, folds, alpha, weight)
    np.testing.assert_allclose(float(got), expected, rtol=1e-9)


def test_ridge_objective_is_differentiable():
    F = torch.randn(12, 3, dtype=torch.float64, requires_grad=True)
    Y = torch.eye(2, dtype=torch.float64)[torch.arange(12) % 2]
    a, b = torch.arange(6), torch.arange(6, 12)
    folds = [(b, a), (a, b)]
    ridge_held_out_error(F, Y, folds, 1.0).backward()
    assert F.grad is not None and bool(torch.isfinite(F.grad).all())
    assert float(F.grad.abs().sum()) > 0


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_refitted_readout_is_written_exactly(n_classes):
    rng = np.random.RandomState(1)
    F = rng.randn(60, 5) * 4.0 + 2.0
    labels = rng.randint(0, n_classes, 60)
    labels[:n_classes] = np.arange(n_classes)
    readout = _Readout(F, labels, None)
    linear = torch.nn.Linear(5, n_classes).double()
    readout.write_(linear)
    logits = linear(torch.as_tensor(F)).detach().numpy()
    # an independent fit on the standardized features, at the chosen C
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    model = LogisticRegression(C=readout.C, max_iter=3000).fit(Z, labels)
    decision = model.decision_function(Z)
    if n_classes == 2:
        np.testing.assert_allclose(logits[:, 1] - logits[:, 0], decision, atol=1e-8)
    else:
        np.testing.assert_allclose(logits, decision, atol=1e-8)
    np.testing.assert_array_equal(logits.argmax(1), model.predict(Z))


def test_choose_copy_needs_more_than_one_held_out_sequence():
    assert choose_copy([0.5], 10) == 0
    assert choose_copy([0.5, 0.6], 10) == 0  # exactly one sequence better
    assert choose_copy([0.5, 0.61, 0.65, 0.75], 10) == 3
    assert choose_copy([0.5, 0.7, 0.75, 0.65], 10) == 1
    assert choose_copy([0.9, 0.5, 0.95], 10) == 0


def test_accuracy_of_vanishing_weights_is_unweighted():
    pred, labels = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0])
    assert _accuracy(pred, labels, np.zeros(4)) == 0.75
    assert _accuracy(pred, labels, np.array([1.0, 1.0, 2.0, 0.0])) == 0.5


def _data(n=48, T=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, T, 1, generator=g)
    y = (X[:, :3, 0].sum(1) > 0).long()
    return SequenceDataset(X, torch.full((n,), T), y), X, y


def _fit(projection, seed=0):
    torch.manual_seed(seed)
    data, X, y = _data()
    module = SequenceNet(LMN(1, 6, 4, memory_matrix="schur"), 2)
    start = copy.deepcopy(module.state_dict())
    net = make_sequence_net(
        module,
        problem="multiclass",
        per_step=False,
        lr=1e-12,
        max_epochs=1,
        batch_size=len(data),
        callbacks=[("projection", projection)],
    )
    return net.fit(data), start, X, y


def test_the_start_is_kept_when_no_copy_is_better(monkeypatch):
    monkeypatch.setattr(_projection, "choose_copy", lambda scores, n: 0)
    monkeypatch.setattr(_projection, "_settled", lambda *args: False)
    projection = VariableProjection(steps=4, every=2, random_state=0)
    net, start, _, _ = _fit(projection)
    assert projection.steps_ == 0 and projection.objective_ == []
    assert len(projection.held_out_scores_) == 3
    for key, value in net.module_.state_dict().items():
        # the start itself (at lr 1e-12 the epoch moves nothing measurable)
        np.testing.assert_allclose(value.numpy(), start[key].numpy(), atol=1e-9)


def test_a_kept_copy_has_the_logistic_readout_of_all_sequences(monkeypatch):
    monkeypatch.setattr(_projection, "choose_copy", lambda scores, n: 2)
    monkeypatch.setattr(_projection, "_settled", lambda *args: False)
    projection = VariableProjection(steps=4, every=2, lr=1e-2, random_state=0)
    net, start, X, y = _fit(projection)
    assert projection.steps_ == 4 and len(projection.objective_) == 4
    module = net.module_
    # the recurrent parameters moved, the readout is the refit's
    moved = [
        k for k, v in module.state_dict().items()
        if k.startswith("recurrent") and not torch.allclose(v, start[k])
    ]
    assert moved
    with torch.no_grad():
        states, _ = module.recurrent(X, lengths=torch.full((len(X),), X.shape[1]))
        F = module.features(states, None).double().numpy()
        logits = module(X).double().numpy()
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    model = LogisticRegression(C=projection.C_, max_iter=3000).fit(Z, y.numpy())
    np.testing.assert_allclose(
        logits[:, 1] - logits[:, 0], model.decision_function(Z), atol=1e-4
    )


def test_settled_when_no_later_copy_can_be_kept():
    # a copy is kept when it beats the kept one by more than one sequence
    assert _settled([1.0], 12, 1.0)
    assert _settled([11 / 12], 12, 1.0)  # 12 / 12 is not more than one better
    assert not _settled([10 / 12], 12, 1.0)
    assert _settled([0.5, 0.9], 10, 1.0)  # the copy kept, then nothing above it
    assert not _settled([0.5, 0.8], 10, 1.0)
    # weighted scores: the perfect score as the same weighted mean computes it
    assert _settled([0.7], 10, 0.79)
    assert not _settled([0.7], 10, 0.81)


def test_the_guard_run_stops_once_settled(monkeypatch):
    # a start that gets every held-out sequence right takes no step: no
    # objective is evaluated, the network is the start
    calls = []
    error = _projection.ridge_held_out_error
    monkeypatch.setattr(
        _projection, "ridge_held_out_error",
        lambda *args, **kw: calls.append(1) or error(*args, **kw),
    )
    monkeypatch.setattr(_projection, "_accuracy", lambda *args: 1.0)
    projection = VariableProjection(steps=4, every=2, random_state=0)
    net, start, _, _ = _fit(projection)
    assert projection.held_out_scores_ == [1.0] and projection.steps_ == 0
    assert calls == []
    for key, value in net.module_.state_dict().items():
        np.testing.assert_allclose(value.numpy(), start[key].numpy(), atol=1e-9)
    # stopped after the first copy: scores of the start and of that copy
    scores = iter([0.5, 1.0, 0.0])
    steps = VariableProjection(steps=6, every=2)
    data, _, _ = _data()
    module = SequenceNet(LMN(1, 6, 4, memory_matrix="schur"), 2)
    net = make_sequence_net(
        module, problem="multiclass", per_step=False, lr=1e-3, max_epochs=1,
        batch_size=len(data),
    ).initialize()
    _, objective, got = steps._run(
        net.module_, _projection._batches(net, [data]), 6, 0,
        score=lambda m, step: next(scores),
        stop=lambda s: _settled(s, 10, 1.0),
    )
    assert got == [0.5, 1.0] and len(objective) == 2


def test_the_run_is_seeded():
    a = VariableProjection(steps=4, every=2, random_state=3)
    b = VariableProjection(steps=4, every=2, random_state=3)
    _fit(a)
    _fit(b)
    assert a.held_out_scores_ == b.held_out_scores_


def test_the_guard_start_is_fitted_on_three_quarters():
    seen = []

    def guard_start(rows):
        seen.append(rows)
        torch.manual_seed(1)
        return SequenceNet(LMN(1, 6, 4, memory_matrix="schur"), 2)

    projection = VariableProjection(
        steps=2, every=1, guard_start=guard_start, random_state=0
    )
    _, _, _, y = _fit(projection)
    (rows,) = seen
    assert len(rows) == 36 and len(set(rows.tolist())) == 36
    # stratified: the held-out quarter has both classes in proportion
    held = np.setdiff1d(np.arange(48), rows)
    assert abs(y.numpy()[held].mean() - y.numpy().mean()) < 0.1
    # scores are accuracies of the 12 held-out sequences
    assert len(projection.held_out_scores_) == 3
    assert all(abs(v * 12 - round(v * 12)) < 1e-9 for v in projection.held_out_scores_)


def test_several_quarters_pool_their_held_out_sequences(monkeypatch):
    # four quarters, each held out from a start on the other three: every
    # sequence is held out once, and a copy's score is its share right of
    # all 48 (the mean of the quarters' scores, 12 sequences each)
    seen, runs = [], []
    guard_scores = VariableProjection._guard_scores

    def spy(self, *args, **kwargs):
        run = guard_scores(self, *args, **kwargs)
        runs.append((run, args[-1] if "settle" not in kwargs else kwargs["settle"]))
        return run

    monkeypatch.setattr(VariableProjection, "_guard_scores", spy)

    def guard_start(rows):
        seen.append(rows)
        torch.manual_seed(1)
        return SequenceNet(LMN(1, 6, 4, memory_matrix="schur"), 2)

    projection = VariableProjection(
        steps=2, every=1, guard_start=guard_start, random_state=0, guard_splits=4
    )
    _, _, _, y = _fit(projection)
    assert projection.guard_splits_ == 4 and len(seen) == 4
    held = [np.setdiff1d(np.arange(48), rows) for rows in seen]
    assert sorted(np.concatenate(held).tolist()) == list(range(48))
    for part in held:  # stratified quarters
        assert len(part) == 12
        assert abs(y.numpy()[part].mean() - y.numpy().mean()) < 0.1
    # every quarter's run scores all its copies (no early stop)
    assert [settle for _, settle in runs] == [False] * 4
    assert all(len(run[0]) == 3 and run[1:] == (12, 12.0) for run, _ in runs)
    expected = np.mean([run[0] for run, _ in runs], axis=0)
    np.testing.assert_allclose(projection.held_out_scores_, expected, rtol=1e-12)
    assert all(abs(v * 48 - round(v * 48)) < 1e-9 for v in projection.held_out_scores_)


def test_weighted_quarters_pool_by_their_held_out_weight(monkeypatch):
    # with sequence weights, each quarter's score is its weighted accuracy
    # and the pooled score weighs it by the quarter's held-out weight
    runs = []
    guard_scores = VariableProjection._guard_scores

    def spy(self, *args, **kwargs):
        runs.append((args[3], guard_scores(self, *args, **kwargs)))
        return runs[-1][1]

    monkeypatch.setattr(VariableProjection, "_guard_scores", spy)
    data, X, y = _data()
    weight = torch.linspace(0.5, 2.0, len(y))
    data = SequenceDataset(X, data.lengths, y, sample_weight=weight)
    torch.manual_seed(0)
    projection = VariableProjection(
        steps=2, every=1, random_state=0, guard_splits=3
    )
    net = make_sequence_net(
        SequenceNet(LMN(1, 6, 4, memory_matrix="schur"), 2),
        problem="multiclass", per_step=False, lr=1e-12, max_epochs=1,
        batch_size=len(data), callbacks=[("projection", projection)],
    )
    net.fit(data)
    assert projection.guard_splits_ == 3 and len(runs) == 3
    for held_rows, (_, n_held, mass) in runs:
        assert n_held == len(held_rows)
        assert mass == pytest.approx(float(weight[held_rows].sum()), rel=1e-6)
    masses = np.array([run[2] for _, run in runs])
    expected = np.array([run[0] for _, run in runs]).T @ masses / masses.sum()
    np.testing.assert_allclose(projection.held_out_scores_, expected, rtol=1e-12)


def test_guard_split_count():
    # 'auto': quarters until about a hundred sequences are held out
    assert [guard_split_count("auto", n) for n in (8, 36, 132, 133, 200)] == [
        4, 4, 4, 3, 2,
    ]
    assert guard_split_count("auto", 396) == 2
    assert guard_split_count("auto", 397) == 1
    assert guard_split_count(3, 10) == 3
    for bad in (0, 5, "many", True, 2.0):
        with pytest.raises(ValueError, match="guard_splits must be an int from 1 to 4"):
            guard_split_count(bad, 40)


def test_no_guard_start_leaves_the_network():
    projection = VariableProjection(steps=2, every=1, guard_start=lambda rows: None)
    net, start, _, _ = _fit(projection)
    assert projection.steps_ == 0 and projection.held_out_scores_ == []
    for key, value in net.module_.state_dict().items():
        np.testing.assert_allclose(value.numpy(), start[key].numpy(), atol=1e-9)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(steps=0), "steps"),
        (dict(every=0), "every"),
        (dict(folds=1), "folds must be at least 2, got 1"),
        (dict(lr=-1.0), "lr must be a positive float, got -1.0"),
        (dict(lr="fast"), "lr must be a positive float, got 'fast'"),
        (dict(guard_splits=5), "guard_splits must be an int from 1 to 4 or "),
    ],
)
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        _fit(VariableProjection(**params))


@pytest.mark.parametrize("limit", [2, 64])
def test_batches_by_length_give_the_rows_in_the_data_order(limit, monkeypatch):
    # ragged sequences, batched by decreasing length (at most ``limit`` and
    # the net's 3 per batch): the pooled features, labels and weights come
    # back in the data's order, each sequence's features those of the
    # sequence run alone (float64)
    monkeypatch.setattr(_projection, "_BATCH_SIZE", limit)
    torch.manual_seed(0)
    lengths = torch.tensor([3, 9, 5, 9, 2, 7, 4, 8])
    X = torch.randn(8, 9, 2, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    weight = torch.linspace(0.5, 2.0, 8, dtype=torch.float64)
    data = SequenceDataset(X, lengths, y, sample_weight=weight)
    module = SequenceNet(LMN(2, 3, 4, memory_matrix="schur"), 3).double()
    net = make_sequence_net(
        module, problem="multiclass", per_step=False, lr=1e-3, max_epochs=1,
        batch_size=3,
    ).initialize()
    sub = torch.utils.data.Subset(data, [6, 1, 4, 3])
    batches = _projection._batches(net, [data, sub])
    rows = list(range(8)) + [6, 1, 4, 3]
    with torch.no_grad():
        got = _projection._pooled(net.module_, batches).double()
        alone = torch.cat([
            net.module_.features(
                net.module_.recurrent(X[i:i + 1, : lengths[i]],
                                      lengths=lengths[i:i + 1])[0],
                lengths[i:i + 1],
            )
            for i in rows
        ]).float().double()
    torch.testing.assert_close(got, alone, rtol=1e-5, atol=1e-6)
    labels, weights = _projection._labels_weights(batches)
    np.testing.assert_array_equal(labels, y[rows].numpy())
    np.testing.assert_allclose(weights, weight[rows].numpy())
    # the batches pad little: sorted by decreasing length in each dataset
    maxima = [int(x["lengths"].max()) for x, _ in batches]
    assert maxima == ([9, 7, 3, 9, 2] if limit == 64 else [9, 8, 5, 3, 9, 4])


def test_a_callback_pickled_before_guard_splits_holds_out_one_quarter():
    import pickle

    from sklmn.pretraining import ProjectionFineTuning

    for obj in (
        VariableProjection(guard_splits=4), ProjectionFineTuning(guard_splits=4)
    ):
        state = dict(obj.__getstate__())
        del state["guard_splits"]  # as pickled before the parameter existed
        old = type(obj).__new__(type(obj))
        old.__setstate__(state)
        assert old.guard_splits == 1
        assert pickle.loads(pickle.dumps(old)).guard_splits == 1
