"""Connectionist temporal classification (``target='ctc'``): the loss and the
decoders against brute-force references that enumerate every alignment,
padding invariance, the label error rate, errors, persistence and
learning on generated handwriting."""

import functools
import itertools
import warnings

import numpy as np
import pytest
import torch
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, cross_val_score

from sklmn._training import SequenceLoss, ctc_terms
from sklmn.estimators import (
    ENRNNClassifier,
    LMNClassifier,
    MultiScaleLMNClassifier,
    RNNClassifier,
    RNNRegressor,
)
from sklmn.estimators._ctc import beam_decode, ctc_min_length, greedy_decode
from sklmn.metrics import edit_distance, label_accuracy_scorer, label_error_rate
from sklmn.persistence import load, save
from sklmn.pretraining import IncrementalTraining, LAESInitializer


# ----------------------------------------------------------- brute force
def _collapse(path, blank):
    out, previous = [], None
    for c in path:
        if c != previous and c != blank:
            out.append(c)
        previous = c
    return tuple(out)


def _labelling_probabilities(log_probs, blank):
    """P(labelling | x) for every labelling, by enumerating all paths."""
    T, C = log_probs.shape
    probs = {}
    for path in itertools.product(range(C), repeat=T):
        p = float(np.exp(sum(log_probs[t, c] for t, c in enumerate(path))))
        key = _collapse(path, blank)
        probs[key] = probs.get(key, 0.0) + p
    return probs


def _random_log_probs(rng, T, C, sharpness=2.0):
    return log_softmax(sharpness * rng.randn(T, C), axis=-1)


def _batch(rng, lengths, targets, C):
    T = max(lengths)
    logits = rng.randn(len(lengths), T, C) * 2.0
    y = np.full((len(targets), max(1, max(map(len, targets)))), -100)
    for i, t in enumerate(targets):
        y[i, : len(t)] = t
    return logits, y


def test_ctc_loss_is_minus_log_of_the_sum_over_alignments():
    rng = np.random.RandomState(0)
    C, blank = 3, 2
    lengths = [4, 3, 5, 2]
    targets = [(0, 1), (1,), (0, 0), ()]
    logits, y = _batch(rng, lengths, targets, C)
    terms = ctc_terms(
        torch.tensor(logits), torch.tensor(y), torch.tensor(lengths)
    ).numpy()
    for i, (n, target) in enumerate(zip(lengths, targets, strict=True)):
        # the padded steps beyond lengths[i] hold random values: never read
        probs = _labelling_probabilities(log_softmax(logits[i, :n], axis=-1), blank)
        np.testing.assert_allclose(terms[i], -np.log(probs[target]), rtol=1e-10)
    loss = SequenceLoss("ctc")
    mean = loss(torch.tensor(logits), torch.tensor(y), torch.tensor(lengths))
    np.testing.assert_allclose(float(mean), terms.mean(), rtol=1e-10)
    weight = torch.tensor([1.0, 0.0, 3.0, 0.0], dtype=torch.float64)
    weighted = loss(
        torch.tensor(logits), torch.tensor(y), torch.tensor(lengths), weight
    )
    np.testing.assert_allclose(
        float(weighted), (terms[0] + 3 * terms[2]) / 4, rtol=1e-10
    )


def test_greedy_decoding_collapses_the_best_path():
    rng = np.random.RandomState(1)
    outputs = rng.randn(20, 7, 4)
    lengths = rng.randint(1, 8, size=20)
    decoded = greedy_decode(outputs, lengths, blank=3)
    for i, n in enumerate(lengths):
        best = outputs[i, :n].argmax(axis=1).tolist()
        assert tuple(decoded[i].tolist()) == _collapse(best, 3)


@pytest.mark.parametrize("seed", range(6))
def test_wide_beam_finds_the_most_probable_labelling(seed):
    rng = np.random.RandomState(seed)
    T, C, blank = 4, 3, 0  # blank first here: any index works
    log_probs = _random_log_probs(rng, T, C, sharpness=0.7)
    probs = _labelling_probabilities(log_probs, blank)
    best = max(probs, key=probs.get)
    # 1 + 2 + 4 + 8 + 16 prefixes of length <= 4 over 2 labels: exact
    (decoded,) = beam_decode(log_probs[None], [T], blank=blank, beam_width=31)
    assert tuple(decoded.tolist()) == best


def test_beam_can_beat_the_best_path():
    # best path: blank, blank; the labelling (0,) is more probable (0.64)
    log_probs = np.log([[[0.4, 0.6], [0.4, 0.6]]])
    assert greedy_decode(log_probs, [2], blank=1)[0].tolist() == []
    assert beam_decode(log_probs, [2], blank=1, beam_width=1)[0].tolist() in ([], [0])
    assert beam_decode(log_probs, [2], blank=1, beam_width=3)[0].tolist() == [0]


def test_ctc_min_length_counts_repeats():
    assert ctc_min_length("aab") == 4
    assert ctc_min_length("abab") == 4
    assert ctc_min_length([]) == 0


# ---------------------------------------------------------------- metrics
@functools.cache
def _reference_distance(a, b):
    if not a or not b:
        return len(a) + len(b)
    return min(
        _reference_distance(a[1:], b) + 1,
        _reference_distance(a, b[1:]) + 1,
        _reference_distance(a[1:], b[1:]) + (a[0] != b[0]),
    )


def test_edit_distance_against_recursive_reference():
    rng = np.random.RandomState(0)
    for _ in range(200):
        a = "".join(rng.choice(list("abc"), size=rng.randint(0, 7)))
        b = "".join(rng.choice(list("abc"), size=rng.randint(0, 7)))
        assert edit_distance(a, b) == _reference_distance(a, b)
        assert edit_distance(list(a), tuple(b)) == _reference_distance(a, b)


def test_label_error_rate():
    assert label_error_rate(["ab", "c"], ["ab", "c"]) == 0.0
    assert label_error_rate(["abcd"], [""]) == 1.0
    assert label_error_rate(["ab"], ["abab"]) == 1.0  # insertions count
    np.testing.assert_allclose(
        label_error_rate(["ab", "cd"], ["a", ""], sample_weight=[3.0, 1.0]),
        (3 * 1 + 1 * 2) / (3 * 2 + 1 * 2),
    )
    assert label_error_rate([[1, 2]], [np.array([1, 3])]) == 0.5
    with pytest.raises(ValueError, match="total length 0"):
        label_error_rate([""], ["a"])
    with pytest.raises(ValueError, match="inconsistent numbers"):
        label_error_rate(["a"], ["a", "b"])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_label_error_rate_names_the_bad_weight(bad):
    with pytest.raises(ValueError, match=rf"sample_weight\[1\] = {bad!r}"):
        label_error_rate(["ab", "c"], ["a", "c"], sample_weight=[1.0, bad])
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        label_error_rate(["ab", "c"], ["a", "c"], sample_weight=[1.0, 1.0, 1.0])


def test_label_metrics_take_a_pandas_series():
    # fit and score take the transcriptions as a pandas Series, and
    # cross-validation passes it on to the scorer
    pd = pytest.importorskip("pandas")
    assert label_error_rate(pd.Series(["ab", "c"]), pd.Series(["a", "c"])) == (
        pytest.approx(1 / 3, abs=1e-12)
    )
    assert label_error_rate(pd.Series([[1, 2], [3]]), [[1, 2], [3, 3]]) == (
        pytest.approx(1 / 3, abs=1e-12)
    )
    X, words = _pulses(n=12)
    y = pd.Series(words)
    clf = RNNClassifier(hidden_size=3, target="ctc", max_iter=2, random_state=0)
    clf = _fit(clf, X, y)
    assert label_accuracy_scorer(clf, X, y) == pytest.approx(
        clf.score(X, y), abs=1e-12
    )


def test_edit_distance_names_the_bad_argument():
    with pytest.raises(ValueError, match="^b must be a string or a sequence"):
        edit_distance("ab", 5)
    with pytest.raises(ValueError, match=r"^y_pred\[1\] must be a string"):
        label_error_rate(["ab", "c"], ["a", 5])


# ------------------------------------------------------------- estimators
def _pulses(n=40, seed=0, length=2):
    """Words over {a, b}; a letter is a negative ('a') or positive ('b')
    pulse followed by a rest step (2 steps per letter)."""
    rng = np.random.RandomState(seed)
    words = [
        "".join(rng.choice(["a", "b"], size=rng.randint(1, length + 1)))
        for _ in range(n)
    ]
    X = [
        np.array([[v, 1.0 - abs(v)] for c in w for v in (2.0 * (c == "b") - 1, 0.0)])
        for w in words
    ]
    return X, words


def _fit(est, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, **kwargs)


ESTIMATORS = {
    "rnn": RNNClassifier(hidden_size=6),
    "lstm_bi": RNNClassifier(cell="lstm", hidden_size=4, bidirectional=True),
    "clockwork_bi": RNNClassifier(
        cell="clockwork", hidden_size=4, n_modules=2, bidirectional=True
    ),
    "lmn": LMNClassifier(hidden_size=4, memory_size=4),
    "mslmn_bi": MultiScaleLMNClassifier(
        hidden_size=4, memory_size=2, n_modules=2, bidirectional=True
    ),
    "enrnn": ENRNNClassifier(hidden_size=4),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_module_fits_ctc_and_padding_never_changes_outputs(name):
    X, words = _pulses(24)
    est = clone(ESTIMATORS[name]).set_params(target="ctc", max_iter=3, random_state=0)
    _fit(est, X, words)
    assert est.classes_.tolist() == ["a", "b"]
    assert est.n_outputs_ == 3
    proba = est.predict_proba(X)
    assert isinstance(proba, list)
    assert [p.shape for p in proba] == [(len(x), 3) for x in X]
    np.testing.assert_allclose([p.sum(axis=1) for p in proba[:1]], 1.0)
    # a sequence alone, or batched with longer ones (padding), or in a
    # NaN-padded array: the same posteriors
    alone = est.predict_proba(X[3:4])[0]
    np.testing.assert_allclose(alone, proba[3], rtol=1e-9, atol=1e-12)
    T = max(map(len, X))
    padded = np.full((len(X), T, 2), np.nan)
    for i, x in enumerate(X):
        padded[i, : len(x)] = x
    proba_padded = est.predict_proba(padded)
    assert proba_padded.shape == (len(X), T, 3)
    np.testing.assert_allclose(
        proba_padded[3, : len(X[3])], proba[3], rtol=1e-9, atol=1e-12
    )
    assert np.isnan(proba_padded[3, len(X[3]) :]).all()
    pred = est.predict(X)
    assert pred.shape == (len(X),) and pred.dtype == object
    assert all(isinstance(p, str) and set(p) <= {"a", "b"} for p in pred)
    log_proba = est.predict_log_proba(X[:2])
    np.testing.assert_allclose(np.exp(log_proba[0]), proba[0], rtol=1e-9)


def test_ctc_learns_and_score_is_one_minus_label_error_rate():
    X, words = _pulses(40)
    est = RNNClassifier(
        hidden_size=8,
        target="ctc",
        max_iter=15,
        batch_size=8,
        learning_rate_init=0.03,
        random_state=0,
    )
    _fit(est, X, words)
    pred = est.predict(X)
    score = est.score(X, words)
    assert score > 0.9
    np.testing.assert_allclose(score, 1 - label_error_rate(words, pred))
    w = np.linspace(0.5, 2.0, len(X))
    np.testing.assert_allclose(
        est.score(X, words, sample_weight=w),
        1 - label_error_rate(words, pred, sample_weight=w),
    )
    scores = cross_val_score(
        clone(est).set_params(max_iter=2),
        X,
        words,
        cv=KFold(2),
        scoring=label_accuracy_scorer,
    )
    assert scores.shape == (2,)
    # beam search decodes the same model
    beam = clone(est).set_params(decoding="beam", beam_width=4)
    beam.__dict__.update({k: v for k, v in vars(est).items() if k.endswith("_")})
    assert beam.score(X, words) > 0.9


def test_label_lists_give_list_predictions_and_int_alphabet():
    X, words = _pulses(20)
    y = [[10 if c == "a" else 20 for c in w] for w in words]
    est = _fit(
        RNNClassifier(hidden_size=4, target="ctc", max_iter=2, random_state=0), X, y
    )
    assert est.classes_.tolist() == [10, 20]
    pred = est.predict(X[:4])
    assert all(isinstance(p, list) and set(p) <= {10, 20} for p in pred)
    assert y == [[10 if c == "a" else 20 for c in w] for w in words]  # untouched


def test_a_pandas_series_of_transcriptions_is_a_target():
    # a DataFrame column of label sequences (pandas, as X accepts it) was
    # refused as "not a list of label sequences"
    pd = pytest.importorskip("pandas")
    X, words = _pulses(20)
    est = RNNClassifier(hidden_size=4, target="ctc", max_iter=2, random_state=0)
    frame = pd.DataFrame({"text": words, "codes": [[ord(c) for c in w] for w in words]})
    from_series = _fit(clone(est), X, frame["text"])
    from_list = _fit(clone(est), X, words)
    assert from_series.classes_.tolist() == ["a", "b"]
    assert from_series.predict(X[:4]).tolist() == from_list.predict(X[:4]).tolist()
    assert from_series.score(X, frame["text"]) == pytest.approx(
        from_list.score(X, words), abs=1e-12
    )
    codes = _fit(clone(est), X, frame["codes"])
    assert codes.classes_.tolist() == [ord("a"), ord("b")]


def test_sample_weight_and_early_stopping_with_the_ctc_loss():
    X, words = _pulses(40)
    X_val, words_val = _pulses(10, seed=1)
    w = np.ones(len(X))
    w[:5] = 0.0
    original = w.copy()
    est = RNNClassifier(
        hidden_size=4,
        target="ctc",
        max_iter=4,
        random_state=0,
        early_stopping=True,
        validation_metric="score",
    )
    _fit(est, X, words, sample_weight=w, X_val=X_val, y_val=words_val)
    np.testing.assert_array_equal(w, original)
    assert len(est.validation_scores_) == est.n_iter_
    assert all(s <= 1.0 for s in est.validation_scores_)
    assert len(est.validation_loss_curve_) == est.n_iter_
    assert np.isfinite(est.best_loss_)
    # a split of X (no X_val) works as well, with the loss monitored
    est = _fit(clone(est).set_params(validation_metric="loss"), X, words)
    assert np.isfinite(est.validation_loss_curve_).all()


def test_standardize_and_partial_fit():
    X, words = _pulses(20)
    est = RNNClassifier(hidden_size=4, target="ctc", random_state=0)
    est.partial_fit(X[:10], words[:10], classes=["a", "b"])
    est.partial_fit(X[10:], words[10:])
    assert est.n_iter_ == 2 and est.input_mean_.shape == (2,)
    with pytest.raises(ValueError, match="not seen in the first call"):
        est.partial_fit(X[:1], ["c"])


def test_ctc_errors():
    X, words = _pulses(12)
    est = RNNClassifier(hidden_size=4, target="ctc", max_iter=1, random_state=0)
    too_short = list(words)
    too_short[2] = "a" * len(X[2])  # needs 2 T - 1 steps (blanks between)
    with pytest.raises(ValueError, match=r"Sequence 2 of X has \d+ time steps"):
        _fit(clone(est), X, too_short)
    with pytest.raises(ValueError, match="mix strings and numbers"):
        _fit(clone(est), X, [["a", 1]] + [["a"]] * 11)
    with pytest.raises(ValueError, match="single string"):
        _fit(clone(est), X, "ab")
    with pytest.raises(ValueError, match="no label at all"):
        _fit(clone(est), X, [""] * 12)
    with pytest.raises(ValueError, match="class_weight is not supported"):
        _fit(clone(est).set_params(class_weight="balanced"), X, words)
    with pytest.raises(ValueError, match="needs a classifier"):
        _fit(RNNRegressor(target="ctc"), X, words)
    with pytest.raises(ValueError, match="pretrainer=None"):
        _fit(LMNClassifier(target="ctc", pretrainer=LAESInitializer()), X, words)
    with pytest.raises(ValueError, match="decoding"):
        _fit(clone(est).set_params(decoding="viterbi"), X, words)
    fitted = _fit(clone(est), X, words)
    with pytest.raises(ValueError, match=r"not seen in fit \('c'\)"):
        fitted.score(X, ["c"] * 12)


@pytest.mark.parametrize("labels", ["strings", "ints"])
def test_ctc_estimators_save_and_load(tmp_path, labels):
    X, words = _pulses(16)
    y = words if labels == "strings" else [[ord(c) for c in w] for w in words]
    est = _fit(
        MultiScaleLMNClassifier(
            hidden_size=4,
            memory_size=2,
            n_modules=2,
            bidirectional=True,
            target="ctc",
            max_iter=2,
            random_state=0,
        ),
        X,
        y,
    )
    save(est, tmp_path / "ctc.sklmn")
    loaded = load(tmp_path / "ctc.sklmn")
    np.testing.assert_allclose(
        np.concatenate(loaded.predict_proba(X)), np.concatenate(est.predict_proba(X))
    )
    assert loaded.predict(X).tolist() == est.predict(X).tolist()
    assert loaded.score(X, y) == est.score(X, y)


def test_incremental_bidirectional_multiscale_grows_with_ctc():
    X, words = _pulses(30, length=3)
    est = MultiScaleLMNClassifier(
        hidden_size=4,
        memory_size=2,
        n_modules=3,
        bidirectional=True,
        target="ctc",
        max_iter=6,
        early_stopping=False,
        random_state=0,
        incremental=IncrementalTraining(epochs_per_module=2),
    )
    _fit(est, X, words)
    stages = est.module_history_
    assert [s["n_modules"] for s in stages] == [1, 2, 3]
    assert all(np.isfinite(s["loss_after_fit"]) for s in stages[1:])
    assert est.predict(X).shape == (len(X),)
    with pytest.raises(ValueError, match="readout='residual'"):
        _fit(
            clone(est).set_params(
                incremental=IncrementalTraining(readout="all_modules")
            ),
            X,
            words,
        )


def test_ctc_residual_is_occupancy_minus_posteriors():
    from sklmn.pretraining._incremental import _ctc_loss_and_residual

    rng = np.random.RandomState(0)
    lengths = np.array([4, 3])
    rows = rng.randn(int(lengths.sum()), 3)
    y = np.array([[0, 1], [1, -100]])
    loss, residual = _ctc_loss_and_residual(rows, y, lengths)
    # γ and the posteriors both sum to one at every step
    np.testing.assert_allclose(residual.sum(axis=1), 0.0, atol=1e-12)
    occupancy = residual + softmax(rows, axis=1)
    assert (occupancy > -1e-12).all()
    # no alignment of 'a b' occupies label 'a' at the last step
    np.testing.assert_allclose(occupancy[3, 0], 0.0, atol=1e-12)
    probs = _labelling_probabilities(log_softmax(rows[:4], axis=1), blank=2)
    np.testing.assert_allclose(
        loss,
        0.5
        * (
            -np.log(probs[(0, 1)])
            - np.log(_labelling_probabilities(log_softmax(rows[4:], axis=1), 2)[(1,)])
        ),
    )


def test_handwriting_single_letters_are_learned():
    pytest.importorskip("HersheyFonts")
    from sklmn.datasets import make_online_handwriting

    kwargs = dict(n_writers=6, vocabulary=["o", "l", "x"], point_density=4.0)
    X, y = make_online_handwriting(90, random_state=0, **kwargs)
    X_test, y_test = make_online_handwriting(60, random_state=1, **kwargs)
    est = RNNClassifier(
        cell="elman",
        hidden_size=8,
        bidirectional=True,
        target="ctc",
        max_iter=15,
        batch_size=16,
        learning_rate_init=0.02,
        early_stopping=False,
        random_state=0,
    )
    _fit(est, X, y)
    # chance: 1/3 for the most frequent letter on every sample (measured
    # 0.83 to 0.93 over seeds)
    assert est.score(X_test, y_test) > 0.6
