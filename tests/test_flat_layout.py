"""The flat layout: 2-D-only scikit-learn tools on sequences.

FlattenSequences / flatten_sequences turn sequences into ``(n, T * d)``;
SequenceReshaper, first step of a pipeline, turns the rows back into
sequences for the sklmn estimator behind it.
"""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.ensemble import BaggingClassifier, StackingClassifier
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsOneClassifier
from sklearn.multioutput import ClassifierChain, RegressorChain
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklmn import LMNClassifier, LMNRegressor, SequenceStandardScaler
from sklmn.persistence import load, save
from sklmn.preprocessing import FlattenSequences, SequenceReshaper, flatten_sequences
from sklmn.utils.estimator_checks import expected_failed_checks

T, D = 6, 2
TINY = dict(hidden_size=4, memory_size=4, max_iter=2, pretrainer=None, random_state=0)


@pytest.fixture(autouse=True)
def _single_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _data(n=36, seed=0, n_classes=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, T, D)
    s = X[:, :, 0].sum(axis=1)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _clf(**kw):
    return make_pipeline(SequenceReshaper(n_features=D, **kw), LMNClassifier(**TINY))


def _ragged(n=12, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(rng.randint(1, T + 1), D) for _ in range(n)]


# -- the layout itself --------------------------------------------------------


def test_flatten_is_time_major_reshape():
    X, _ = _data()
    flat = flatten_sequences(X)
    assert flat.shape == (len(X), T * D)
    np.testing.assert_array_equal(flat, X.reshape(len(X), -1))
    back = SequenceReshaper(n_features=D).fit_transform(flat)
    np.testing.assert_array_equal(back, X)


def test_ragged_sequences_are_nan_padded_and_read_back():
    X = _ragged()
    flat = flatten_sequences(X, n_timesteps=T)
    assert flat.shape == (len(X), T * D)
    seqs = SequenceReshaper(n_features=D).fit_transform(flat)
    for x, s in zip(X, seqs, strict=True):
        np.testing.assert_array_equal(s[: len(x)], x)
        assert np.isnan(s[len(x) :]).all()
    # an sklmn estimator reads the trailing NaN steps as padding: same
    # predictions as on the list itself
    est = LMNClassifier(**TINY).fit(X, np.arange(len(X)) % 2)
    np.testing.assert_allclose(est.predict_proba(seqs), est.predict_proba(X))


def test_flatten_sequences_keeps_the_fitted_width_and_refuses_longer():
    X = _ragged()
    fl = FlattenSequences().fit(X)
    assert fl.n_timesteps_ == max(len(x) for x in X)
    assert fl.transform([np.ones((1, D))]).shape == (1, fl.n_timesteps_ * D)
    with pytest.raises(ValueError, match="never truncated"):
        fl.transform([np.ones((fl.n_timesteps_ + 1, D))])
    with pytest.raises(ValueError, match="shorter than the longest"):
        FlattenSequences(n_timesteps=2).fit(np.ones((3, 4, D)))
    # univariate 2-D input is already the flat layout
    X2 = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(flatten_sequences(X2), X2)
    back = FlattenSequences().fit(X2).inverse_transform(X2)
    np.testing.assert_array_equal(back, X2[:, :, None])


def test_flatten_feature_names_out_name_every_step_and_feature():
    fl = FlattenSequences(n_timesteps=3).fit(np.zeros((4, 2, D)))
    assert fl.get_feature_names_out().tolist() == [
        f"x{j}_t{t}" for t in range(3) for j in range(D)
    ]
    assert fl.get_feature_names_out(["a", "b"]).tolist()[:3] == ["a_t0", "b_t0", "a_t1"]
    with pytest.raises(ValueError, match="length 2 \\(n_features_in_\\), got 3"):
        fl.get_feature_names_out(["a", "b", "c"])
    # a pipeline names the columns of the steps after the flattening
    pipe = make_pipeline(FlattenSequences(), StandardScaler()).fit(np.zeros((4, 2, D)))
    assert len(pipe.get_feature_names_out()) == 2 * D


def test_flatten_in_column_transformer_with_pandas_output():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer

    frame = pd.DataFrame(
        np.arange(12.0).reshape(4, 3), columns=["a", "b", "c"], index=list("pqrs")
    )
    fl = FlattenSequences().fit(frame)  # univariate sequences, steps as columns
    names = fl.get_feature_names_out(frame.columns)  # as ColumnTransformer asks
    assert names.tolist() == ["x0_t0", "x0_t1", "x0_t2"]
    names = fl.get_feature_names_out(["price"])  # the feature of a step
    assert names.tolist() == ["price_t0", "price_t1", "price_t2"]
    with pytest.raises(ValueError, match="not equal to feature_names_in_"):
        fl.get_feature_names_out(["c", "b", "a"])
    ct = ColumnTransformer([("flat", FlattenSequences(n_timesteps=4), ["a", "b", "c"])])
    out = ct.set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == [f"flat__x0_t{t}" for t in range(4)]
    assert out.index.equals(frame.index)
    assert out["flat__x0_t3"].isna().all()  # the layout is wider than the frame
    alone = FlattenSequences(n_timesteps=T).set_output(transform="pandas")
    alone = alone.fit_transform(_ragged(n=3))
    assert list(alone.columns)[:2] == ["x0_t0", "x1_t0"]
    assert alone.shape == (3, T * D)


@pytest.mark.parametrize("where", ["last", "first"])
def test_static_columns_are_repeated_at_every_valid_step(where):
    X = _ragged(n=5)
    flat = flatten_sequences(X, n_timesteps=T)
    static = np.arange(10.0).reshape(5, 2)
    wide = np.hstack([flat, static] if where == "last" else [static, flat])
    rs = SequenceReshaper(n_features=D, n_timesteps=T, static_columns=where).fit(wide)
    assert (rs.n_timesteps_, rs.n_static_) == (T, 2)
    seqs = rs.transform(wide)
    assert seqs.shape == (5, T, D + 2)
    for i, x in enumerate(X):
        np.testing.assert_array_equal(seqs[i, : len(x), :D], x)
        repeated = np.tile(static[i], (len(x), 1))
        np.testing.assert_array_equal(seqs[i, : len(x), D:], repeated)
        assert np.isnan(seqs[i, len(x) :]).all()  # padding stays padding
    np.testing.assert_array_equal(rs.inverse_transform(seqs), wide)


def test_reshaper_errors():
    with pytest.raises(ValueError, match="not a multiple of n_features=2"):
        SequenceReshaper(n_features=2).fit(np.ones((3, 5)))
    with pytest.raises(ValueError, match="fewer than n_timesteps"):
        SequenceReshaper(n_features=2, n_timesteps=3).fit(np.ones((3, 5)))
    rs = SequenceReshaper(n_features=2).fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="4 features"):
        rs.transform(np.ones((3, 6)))


def test_failed_fit_leaves_a_fitted_transformer_as_it_was():
    # fit set n_features_in_ before refusing the data: the fitted
    # transformer then refused the data it was fitted on
    X, _ = _data()
    flatten = FlattenSequences(n_timesteps=T).fit(X)
    with pytest.raises(ValueError, match="shorter than the longest"):
        flatten.fit(np.ones((3, T + 1, D + 1)))
    assert (flatten.n_features_in_, flatten.n_timesteps_) == (D, T)
    assert flatten.transform(X).shape == (len(X), T * D)
    flat = flatten_sequences(X)
    reshaper = SequenceReshaper(n_features=D).fit(flat)
    with pytest.raises(ValueError, match="not a multiple"):
        reshaper.fit(np.ones((3, 2 * D + 1)))
    assert (reshaper.n_features_in_, reshaper.n_timesteps_) == (T * D, T)
    np.testing.assert_array_equal(reshaper.transform(flat), X)


def test_persistence_round_trip(tmp_path):
    X, y = _data()
    flat = flatten_sequences(X)
    for est in (SequenceReshaper(n_features=D, n_timesteps=T - 1), FlattenSequences()):
        est.fit(flat if isinstance(est, SequenceReshaper) else X)
        save(est, tmp_path / "m.skops")
        loaded = load(tmp_path / "m.skops")
        data = flat if isinstance(est, SequenceReshaper) else X
        np.testing.assert_array_equal(loaded.transform(data), est.transform(data))


# -- 2-D-only scikit-learn tools ------------------------------------------------


def test_bagging():
    X, y = _data()
    flat = flatten_sequences(X)
    bag = BaggingClassifier(_clf(), n_estimators=2, random_state=0).fit(flat, y)
    assert bag.predict_proba(flat).shape == (len(X), 3)
    # every member saw sequences of T steps and D features
    assert all(m[-1].n_features_in_ == D for m in bag.estimators_)


def test_bagging_with_variable_length_sequences():
    X = _ragged(n=20)
    y = np.arange(len(X)) % 2
    flat = flatten_sequences(X, n_timesteps=T)
    bag = BaggingClassifier(_clf(), n_estimators=2, random_state=0).fit(flat, y)
    assert bag.predict(flat).shape == (len(X),)


def test_one_vs_one():
    X, y = _data()
    flat = flatten_sequences(X)
    ovo = OneVsOneClassifier(_clf()).fit(flat, y)
    assert len(ovo.estimators_) == 3  # 3 classes: 3 pairs
    assert set(ovo.predict(flat)) <= {0, 1, 2}


def test_classifier_chain_reads_previous_labels_as_static_features():
    X, y = _data(n_classes=2)
    Y = np.column_stack([y, 1 - y, (X[:, 0, 1] > 0).astype(int)])
    flat = flatten_sequences(X)
    chain = ClassifierChain(_clf(n_timesteps=T), order=[0, 1, 2]).fit(flat, Y)
    # link k sees the sequence plus the k previous labels at every step
    assert [e[-1].n_features_in_ for e in chain.estimators_] == [D, D + 1, D + 2]
    assert chain.predict(flat).shape == Y.shape


def test_regressor_chain():
    X, _ = _data()
    Y = np.column_stack([X[:, :, 0].sum(axis=1), X[:, -1, 1]])
    flat = flatten_sequences(X)
    reg = make_pipeline(
        SequenceReshaper(n_features=D, n_timesteps=T), LMNRegressor(**TINY)
    )
    chain = RegressorChain(reg).fit(flat, Y)
    assert [e[-1].n_features_in_ for e in chain.estimators_] == [D, D + 1]
    assert chain.predict(flat).shape == Y.shape


def test_permutation_importance_per_cell():
    X, y = _data()
    flat = flatten_sequences(X)
    model = _clf().fit(flat, y)
    result = permutation_importance(model, flat, y, n_repeats=2, random_state=0)
    assert result.importances_mean.shape == (T * D,)
    assert result.importances_mean.reshape(T, D).shape == (T, D)


def test_standard_scaler_on_the_flat_layout_and_sequence_scaler_after_it():
    X = _ragged(n=15)
    y = np.arange(len(X)) % 2
    flat = flatten_sequences(X, n_timesteps=T)
    # StandardScaler: one mean per (step, feature) column; NaN padding kept
    z = StandardScaler().fit_transform(flat)
    assert np.array_equal(np.isnan(z), np.isnan(flat))
    model = make_pipeline(StandardScaler(), _clf()).fit(flat, y)
    assert model.predict(flat).shape == (len(X),)
    # SequenceStandardScaler after the reshaper: one mean per feature
    model = make_pipeline(
        SequenceReshaper(n_features=D), SequenceStandardScaler(), LMNClassifier(**TINY)
    ).fit(flat, y)
    np.testing.assert_allclose(model[1].mean_, np.concatenate(X).mean(axis=0))


def test_stacking_with_passthrough():
    X, y = _data()
    flat = flatten_sequences(X)
    # a tabular final estimator on [predictions, flat X]
    stack = StackingClassifier(
        [("lmn", _clf())], final_estimator=LogisticRegression(), passthrough=True, cv=2
    ).fit(flat, y)
    assert stack.predict(flat).shape == (len(X),)
    # an sklmn final estimator: the predictions come first, as static features
    final = _clf(n_timesteps=T, static_columns="first")
    stack = StackingClassifier(
        [("lmn", _clf())], final_estimator=final, passthrough=True, cv=2
    ).fit(flat, y)
    assert stack.final_estimator_[-1].n_features_in_ == D + 3  # 3 class probabilities
    assert stack.predict(flat).shape == (len(X),)


def test_clone_keeps_parameters():
    rs = SequenceReshaper(n_features=3, n_timesteps=4, static_columns="first")
    assert clone(rs).get_params() == rs.get_params()


@parametrize_with_checks(
    [SequenceReshaper(), SequenceReshaper(n_timesteps=1), FlattenSequences()],
    expected_failed_checks=expected_failed_checks,
    # the expected failures do not depend on the machine: a pass is an error
    xfail_strict=True,
)
def test_sklearn_compatible_transformer(estimator, check):
    check(estimator)
