"""The stream mode: StreamLanguageModel (truncated BPTT with a carried state)."""

import math
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from sklmn.estimators import StreamLanguageModel, _stream, _threads

#: de Bruijn sequence B(2, 4): every 4 consecutive bits occur once per
#: period of 16, so the next bit is a function of the last 4 (and of no
#: shorter context)
DE_BRUIJN = [0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1]

_SMALL = dict(hidden_size=8, embedding_dim=4, bptt=5, batch_size=3, max_iter=2)


def _small(cell="gru", **params):
    return StreamLanguageModel(cell, **{**_SMALL, "random_state": 0, **params})


@pytest.mark.parametrize(
    "cell, params",
    [
        ("lstm", {}),
        ("gru", {}),
        ("elman", {}),
        ("linear", {}),
        ("enrnn", {"short_size": 3, "cell_params": {"coupling": True}}),
        ("lmn", {"memory_size": 3, "num_layers": 2}),
    ],
)
def test_every_cell_fits_and_predicts_shapes(cell, params):
    stream = np.tile([0, 1, 2, 3, 1], 12)
    lm = _small(cell, **params).fit(stream, X_val=stream[:20])
    assert lm.n_tokens_ == 4
    np.testing.assert_array_equal(lm.vocabulary_, np.arange(4))
    assert lm.n_iter_ == 2 and len(lm.loss_curve_) == 2
    assert len(lm.validation_bpc_) == 2
    proba = lm.predict_proba(stream[:7])
    assert proba.shape == (7, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    assert lm.predict(stream[:7]).shape == (7,)
    assert math.isfinite(lm.bits_per_character(stream))
    assert lm.score(stream) == pytest.approx(-lm.bits_per_character(stream), abs=1e-12)


def test_text_vocabulary_and_generation():
    text = ["the cat ", "sat on the mat. "] * 10
    lm = _small().fit(text)
    assert "".join(lm.vocabulary_) == " .acehmnost"
    assert lm.predict_proba("mat").shape == (3, 11)
    assert set(lm.predict("the")) <= set(lm.vocabulary_)
    sample = lm.sample(12, prompt="the ", random_state=0)
    assert isinstance(sample, str) and len(sample) == 12
    assert set(sample) <= set(lm.vocabulary_)
    assert sample == lm.sample(12, prompt="the ", random_state=0)
    codes = _small().fit(np.array([0, 2, 1] * 10)).sample(5, random_state=0)
    assert codes.dtype.kind == "i" and codes.shape == (5,)


def test_bits_per_character_matches_a_full_forward(monkeypatch):
    """The chunked evaluation carries the state: it equals one forward pass
    over the whole stream, scored by hand."""
    rng = np.random.RandomState(0)
    stream = rng.randint(0, 5, size=60)
    for cell in ("lstm", "enrnn", "lmn"):
        lm = _small(cell, short_size=3, memory_size=3).fit(stream)
        monkeypatch.setattr(_stream, "_EVAL_CHUNK", 7)  # 9 chunks
        bpc = lm.bits_per_character(stream)
        proba = lm.predict_proba(stream)
        monkeypatch.undo()
        with torch.no_grad():
            tokens = torch.from_numpy(stream)[None]
            out, _ = lm.module_.recurrent(lm.module_.embedding(tokens))
            logits = lm.module_.readout(out)[0].double()
        logp = torch.log_softmax(logits, dim=1).numpy()
        expected = -np.mean(logp[np.arange(59), stream[1:]]) / np.log(2)
        assert bpc == pytest.approx(expected, rel=1e-5), cell
        np.testing.assert_allclose(proba, np.exp(logp), rtol=1e-5, atol=1e-7)


def test_training_carries_the_detached_state_and_resets_it_each_epoch(monkeypatch):
    seen = []
    forward = _stream._StreamNet.forward

    def spy(self, tokens, state=None):
        logits, new, penalty = forward(self, tokens, state)
        if self.training:
            seen.append((tokens.shape, state, new))
        return logits, new, penalty

    monkeypatch.setattr(_stream._StreamNet, "forward", spy)
    stream = np.arange(31) % 4  # 30 predictions: 3 tracks of 10 steps
    _small("lstm", bptt=4, max_iter=2).fit(stream)
    # 3 windows (4 + 4 + 2 steps) per epoch, 2 epochs
    assert [s[0] for s in seen] == [(3, 4), (3, 4), (3, 2)] * 2
    for epoch in range(2):
        first, *rest = seen[3 * epoch : 3 * epoch + 3]
        assert first[1] is None  # reset at every epoch start
        for previous, current in zip([first, *rest], rest, strict=False):
            for carried, produced in zip(current[1], previous[2], strict=True):
                # the previous window's final state, cut from its graph
                assert not carried.requires_grad
                torch.testing.assert_close(carried, produced.detach())


def test_windows_hold_contiguous_tracks(monkeypatch):
    seen = []
    forward = _stream._StreamNet.forward

    def spy(self, tokens, state=None):
        if self.training:
            seen.append(tokens.clone())
        return forward(self, tokens, state)

    monkeypatch.setattr(_stream._StreamNet, "forward", spy)
    stream = np.arange(23) % 7  # 22 predictions, 3 tracks of 7 (1 left over)
    _small("elman", bptt=3, max_iter=1).fit(stream)
    inputs = torch.cat(seen, dim=1).numpy()
    np.testing.assert_array_equal(inputs, stream[:21].reshape(3, 7))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_period_longer_than_bptt_is_learned_only_with_the_carried_state(
    monkeypatch, seed
):
    """The next bit of the de Bruijn stream depends on the last 4 bits; in
    windows of 4 steps only the last position sees 4 of them, so the others
    need the state carried in from the previous window."""
    stream = np.tile(DE_BRUIJN, 40)
    params = dict(
        hidden_size=16, bptt=4, batch_size=8, max_iter=20,
        learning_rate_init=0.03, random_state=seed,
    )  # fmt: skip
    carried = StreamLanguageModel("gru", embedding_dim=4, **params).fit(stream)
    assert carried.bits_per_character(stream) < 0.2
    # the best epoch, not the last: at this rate an epoch can spike (seen
    # with seed 1 on another torch build)
    assert min(carried.loss_curve_) / math.log(2) < 0.3
    monkeypatch.setattr(StreamLanguageModel, "_carry_state", False)
    reset = StreamLanguageModel("gru", embedding_dim=4, **params).fit(stream)
    # reset at every window: the first three positions of a window cannot
    # be predicted from the bits inside the window
    assert min(reset.loss_curve_) / math.log(2) > 0.5


def test_best_weights_are_those_of_the_lowest_validation_bpc():
    rng = np.random.RandomState(0)
    train = np.tile(rng.randint(0, 4, size=11), 8)
    val = rng.randint(0, 4, size=40)  # unrelated: validation gets worse
    lm = _small("lstm", max_iter=6, learning_rate_init=0.05).fit(train, X_val=val)
    best = int(np.argmin(lm.validation_bpc_))
    assert lm.best_epoch_ == best + 1
    assert lm.bits_per_character(val) == pytest.approx(
        lm.validation_bpc_[best], rel=1e-6
    )
    no_val = _small("lstm", max_iter=4).fit(train)
    assert no_val.validation_bpc_ is None
    assert no_val.best_epoch_ == int(np.argmin(no_val.loss_curve_)) + 1


def test_n_iter_no_change_stops_and_seeds_reproduce():
    rng = np.random.RandomState(0)
    train, val = rng.randint(0, 4, size=80), rng.randint(0, 4, size=40)
    lm = _small(max_iter=30, n_iter_no_change=2, learning_rate_init=0.05)
    lm.fit(train, X_val=val)
    assert lm.n_iter_ < 30
    again = clone(lm).fit(train, X_val=val)
    np.testing.assert_allclose(again.loss_curve_, lm.loss_curve_, rtol=1e-6)
    other = clone(lm).set_params(random_state=1).fit(train, X_val=val)
    assert not np.allclose(other.loss_curve_, lm.loss_curve_, rtol=1e-6)


def test_get_params_clone_and_not_fitted():
    lm = StreamLanguageModel("enrnn", short_size=5, cell_params={"coupling": True})
    params = lm.get_params()
    assert params["cell"] == "enrnn" and params["cell_params"] == {"coupling": True}
    twin = clone(lm)
    assert twin.get_params() == params and twin.cell_params is not lm.cell_params
    assert lm.set_params(bptt=7).bptt == 7
    for method in ("predict_proba", "predict", "bits_per_character", "score"):
        with pytest.raises(NotFittedError):
            getattr(lm, method)("abc")
    with pytest.raises(NotFittedError):
        lm.sample(3)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"cell": "transformer"}, "'cell' parameter"),
        ({"bptt": 0}, "'bptt' parameter"),
        ({"batch_size": 1.5}, "'batch_size' parameter"),
        ({"learning_rate_init": 0}, "'learning_rate_init' parameter"),
        ({"cell_params": {"hidden_size": 3}}, r"may not set \['hidden_size'\]"),
        ({"cell_params": {"bidirectional": True}}, "bidirectional"),
        ({"cell_params": {"short_size": 3}}, "may not set"),
        ({"cell": "gru", "cell_params": {"coupling": True}}, "does not fit cell='gru'"),
        ({"cell": "enrnn", "cell_params": {"activation": "sigmoid"}}, "sigmoid"),
    ],
)
def test_invalid_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        _small(**params).fit(np.arange(40) % 3)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.zeros((4, 5), dtype=int), r"shape \(4, 5\)"),
        (np.linspace(0, 1, 20), "dtype float64"),
        (np.array([0, 1, -2, 1] * 5), "-2 at position 2"),
        ([0, 1, 2], "3 tokens, too few for batch_size=3"),
        (["ab", 3], "element 1 is int"),
        # empty streams: numpy's "zero-size array" error, or "dtype float64"
        # for an empty list, before they were named as too short
        (np.array([], dtype=int), "0 tokens, too few for batch_size=3"),
        ([], "0 tokens, too few for batch_size=3"),
        # uint64 codes beyond int64 wrapped to negative indices
        (np.array([0, 2**63 + 5] * 4, dtype=np.uint64), "too large for an int64"),
    ],
)
def test_invalid_streams_are_named(X, match):
    with pytest.raises(ValueError, match=match):
        _small().fit(X)


def test_an_empty_stream_to_score_is_named():
    lm = _small().fit([0, 1, 2] * 6)
    with pytest.raises(ValueError, match="X holds 0 token"):
        lm.predict_proba([])
    with pytest.raises(ValueError, match="X holds 0 token"):
        lm.predict(np.array([], dtype=np.int64))


@pytest.mark.parametrize(
    "device, match",
    [
        ("meta", "device='meta' cannot train"),
        ("gpu", "device must be a torch device .* got 'gpu'"),
        pytest.param(
            "cuda",
            "CUDA is not available",
            marks=pytest.mark.skipif(
                torch.cuda.is_available(), reason="needs a CPU-only machine"
            ),
        ),
    ],
)
def test_an_unusable_device_is_named_as_by_the_sequence_estimators(device, match):
    # they raised torch's RuntimeError or AssertionError from inside training
    stream = np.arange(40) % 3
    lm = _small().fit(stream)
    before = lm.predict_proba(stream[:5])
    with pytest.raises(ValueError, match=match):
        lm.set_params(device=device).fit(stream)
    np.testing.assert_allclose(lm.predict_proba(stream[:5]), before, rtol=1e-12)


def test_scored_streams_must_fit_the_vocabulary():
    lm = _small().fit("abcabcabcabcabc", X_val="cab")
    with pytest.raises(ValueError, match="outside the training vocabulary: 'd', 'z'"):
        lm.bits_per_character("abzd")
    with pytest.raises(ValueError, match="must be text"):
        lm.predict_proba([0, 1])
    with pytest.raises(ValueError, match="at least 2"):
        lm.bits_per_character("a")
    with pytest.raises(ValueError, match="X_val holds 1 token"):
        _small().fit("abcabcabcabc", X_val="a")
    codes = _small().fit([0, 1, 2] * 6)
    with pytest.raises(ValueError, match="code 5 at position 1"):
        codes.predict_proba([0, 5])
    with pytest.raises(ValueError, match="must be integer codes"):
        codes.predict_proba("ab")
    with pytest.raises(ValueError, match="n_tokens must be a positive int"):
        codes.sample(0)
    with pytest.raises(ValueError, match="temperature"):
        codes.sample(2, temperature=0.0)


def test_failed_fit_leaves_the_fitted_model_and_data_untouched():
    stream = np.array([0, 1, 2, 1] * 10)
    original = stream.copy()
    lm = _small().fit(stream)
    before = lm.predict_proba(stream[:5])
    with pytest.raises(ValueError, match="outside the training vocabulary"):
        lm.fit(stream, X_val=[0, 7])
    np.testing.assert_array_equal(lm.vocabulary_, np.arange(3))
    np.testing.assert_allclose(lm.predict_proba(stream[:5]), before, rtol=1e-12)
    np.testing.assert_array_equal(stream, original)


def test_divergence_in_the_first_epoch_raises():
    lm = _small("elman", learning_rate_init=1e30, gradient_clipping=None, max_iter=3)
    with pytest.raises(FloatingPointError, match="epoch"):
        lm.fit(np.arange(200) % 5)


def test_divergence_after_the_first_epoch_keeps_the_best_weights(monkeypatch):
    from sklmn.callbacks import DivergenceWarning

    calls = []
    cross_entropy = torch.nn.functional.cross_entropy

    def failing(*args, **kwargs):
        calls.append(1)
        loss = cross_entropy(*args, **kwargs)
        return loss * math.nan if len(calls) > 4 else loss  # 2 windows / epoch

    monkeypatch.setattr(_stream.F, "cross_entropy", failing)
    stream = np.arange(31) % 4
    with pytest.warns(DivergenceWarning, match="epoch 3 is not finite"):
        lm = _small("gru", bptt=5, max_iter=5).fit(stream)
    assert lm.diverged_ and lm.n_iter_ == 2 and lm.best_epoch_ in (1, 2)
    monkeypatch.undo()
    assert math.isfinite(lm.bits_per_character(stream))


def test_parameters_made_non_finite_by_an_epochs_last_update_are_a_divergence(
    monkeypatch,
):
    # every loss of the epoch is read before its update: non-finite weights
    # after the epoch's last update were kept as the best epoch's, and fit
    # returned a model that cannot score
    from sklmn.callbacks import DivergenceWarning

    calls, poisoned = [], [4]  # the last window of epoch 2 (2 windows / epoch)
    clip = torch.nn.utils.clip_grad_norm_

    def poisoning(parameters, *args, **kwargs):
        parameters = list(parameters)
        calls.append(1)
        if len(calls) == poisoned[0]:
            for p in parameters:
                p.grad.fill_(math.nan)
        return clip(parameters, *args, **kwargs)

    monkeypatch.setattr(_stream.nn.utils, "clip_grad_norm_", poisoning)
    stream = np.arange(31) % 4
    with pytest.warns(DivergenceWarning, match="parameters after epoch 2"):
        lm = _small("gru", bptt=5, max_iter=2).fit(stream)
    assert lm.diverged_ and lm.n_iter_ == 1 and lm.best_epoch_ == 1
    assert all(bool(torch.isfinite(p).all()) for p in lm.module_.parameters())
    assert math.isfinite(lm.bits_per_character(stream))
    calls.clear()
    poisoned[0] = 1  # the only window of epoch 1: no epoch to keep
    with pytest.raises(FloatingPointError, match="parameters after epoch 1"):
        _small("gru", bptt=5, max_iter=2).fit(np.arange(16) % 4)


def test_a_state_that_overflows_at_the_last_token_is_not_a_silent_nan():
    # the likelihood reads the distributions after every token but the last:
    # predict_proba returned a NaN row there, predict a token picked from it,
    # sample numpy's "probabilities contain NaN"
    stream = np.tile([0, 1, 2, 3], 12)
    lm = _small("linear", hidden_size=4, max_iter=1).fit(stream)
    with torch.no_grad():  # a state that grows tenfold per step
        lm.module_.recurrent.weight_hh_l0.copy_(10.0 * torch.eye(4))
        logits, _, _ = lm.module_(torch.from_numpy(stream).unsqueeze(0))
    finite = torch.isfinite(logits[0]).all(dim=1).numpy()
    last = int(np.argmin(finite))  # the first position that overflows
    assert 0 < last and finite[:last].all()
    prompt = stream[: last + 1]
    for method in (lm.predict_proba, lm.predict):
        with pytest.raises(FloatingPointError, match="not finite"):
            method(prompt)
    with pytest.raises(FloatingPointError, match="not finite"):
        lm.sample(2, prompt=prompt, random_state=0)
    assert np.isfinite(lm.predict_proba(stream[:last])).all()


def test_pickle_round_trip():
    stream = np.array([0, 1, 2, 1] * 10)
    lm = _small("enrnn", short_size=3).fit(stream)
    loaded = pickle.loads(pickle.dumps(lm))
    np.testing.assert_allclose(
        loaded.predict_proba(stream), lm.predict_proba(stream), rtol=1e-6
    )


def test_safe_persistence_keeps_the_parameters_and_refuses_the_network(tmp_path):
    from sklmn.persistence import load, save

    lm = _small("enrnn", short_size=3, cell_params={"coupling": True})
    save(lm, tmp_path / "unfitted.sklmn")
    assert load(tmp_path / "unfitted.sklmn").get_params() == lm.get_params()
    lm.fit(np.array([0, 1, 2, 1] * 10))
    with pytest.raises(TypeError, match="module_"):
        save(lm, tmp_path / "fitted.sklmn")


def test_auto_threads_weigh_the_tracks_of_each_pass(monkeypatch):
    # fit runs batch_size parallel tracks, the evaluation one track: the
    # evaluation was weighed as batch_size tracks (every thread for a small
    # model)
    seen = []
    monkeypatch.setattr(
        _threads, "auto_threads", lambda work, budget: seen.append(work) or 1
    )
    stream = np.tile(np.arange(5), 40)
    lm = _small(batch_size=4, n_threads="auto").fit(stream)
    size = sum(p.numel() for p in lm.module_.parameters())
    assert seen == [4 * size]
    lm.bits_per_character(stream[:50])
    assert seen == [4 * size, size]


def test_tags_declare_the_inputs_fit_accepts():
    # the tags were BaseEstimator's: a 2-D array (refused), no 1-D or text
    tags = StreamLanguageModel().__sklearn_tags__().input_tags
    assert tags.one_d_array and tags.string and not tags.two_d_array
    lm = StreamLanguageModel(hidden_size=4, max_iter=1, batch_size=2, bptt=3)
    lm.fit(np.arange(20) % 4)
    lm.fit("abcd" * 5)
    with pytest.raises(ValueError, match=r"shape \(10, 2\)"):
        lm.fit((np.arange(20) % 4).reshape(10, 2))
