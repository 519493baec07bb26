"""pandas input: time-column DataFrames, feature names and set_output."""

import warnings

import numpy as np
import pytest

from sklmn.estimators import RNNClassifier
from sklmn.laes import LAESTransformer
from sklmn.utils.sequences import check_sequences

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(20, 8)), columns=[f"t{i}" for i in range(8)])


@pytest.mark.parametrize(
    "make",
    [lambda: LAESTransformer(n_components=3), lambda: RNNClassifier(max_iter=2)],
    ids=["laes", "rnn"],
)
def test_feature_names_as_scikit_learn(frame, make):
    y = (frame["t7"] > 0).astype(int).to_numpy()
    est = make().fit(frame, y)
    assert est.feature_names_in_.tolist() == list(frame.columns)
    assert est.n_features_in_ == 1  # features per time step
    use = est.transform if hasattr(est, "transform") else est.predict
    with pytest.raises(ValueError, match="feature names should match"):
        use(frame[frame.columns[::-1]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        use(frame.to_numpy())
    unnamed = make().fit(frame.to_numpy(), y)
    assert not hasattr(unnamed, "feature_names_in_")
    use = unnamed.transform if hasattr(unnamed, "transform") else unnamed.predict
    with pytest.warns(UserWarning, match="has feature names, but"):
        use(frame)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make().fit(frame, y)  # refit with names: no feature-name warning
    assert not [w for w in caught if "feature names" in str(w.message)]


def test_laes_feature_names_out_and_pandas_output(frame):
    from sklearn.compose import ColumnTransformer

    laes = LAESTransformer(n_components=3).fit(frame)
    assert laes.get_feature_names_out(frame.columns).tolist() == [
        "laes0",
        "laes1",
        "laes2",
    ]
    with pytest.raises(ValueError, match="not equal to feature_names_in_"):
        laes.get_feature_names_out(frame.columns[::-1])
    with pytest.raises(ValueError, match="length 1"):
        laes.get_feature_names_out(["a", "b"])
    ct = ColumnTransformer([("laes", LAESTransformer(n_components=3), list(frame))])
    out = ct.set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == ["laes__laes0", "laes__laes1", "laes__laes2"]
    assert out.index.equals(frame.index)
    alone = LAESTransformer(n_components=2).set_output(transform="pandas")
    assert list(alone.fit_transform(frame).columns) == ["laes0", "laes1"]


def test_pandas_output_of_3d_states_is_a_clear_error(frame):
    laes = LAESTransformer(n_components=2, return_sequences=True)
    laes.set_output(transform="pandas")
    with pytest.raises(ValueError, match="return_sequences=True"):
        laes.fit_transform(frame)
    laes.set_output(transform="default")
    assert laes.fit_transform(frame).shape == (20, 8, 2)


def test_nested_frame_error_says_how_to_convert():
    # sktime's nested DataFrame (one Series per channel in each cell) failed
    # with numpy's "setting an array element with a sequence"
    X = pd.DataFrame(
        {
            "c0": [pd.Series([1.0, 2.0, 3.0]), pd.Series([1.0, 2.0])],
            "c1": [pd.Series([4.0, 5.0, 6.0]), pd.Series([3.0, 4.0])],
        }
    )
    with pytest.raises(ValueError, match="cells that are themselves sequences"):
        check_sequences(X)
    # the conversion the message gives
    seqs = check_sequences([np.column_stack(row) for row in X.to_numpy()])
    assert seqs.lengths.tolist() == [3, 2] and seqs.n_features == 2
    np.testing.assert_array_equal(seqs.data[1, :2], [[1.0, 3.0], [2.0, 4.0]])
