import numpy as np
import pytest

from sklmn.datasets import load_sequential_digits, make_adding_problem, make_copy_task


@pytest.mark.parametrize("S, T, K", [(10, 100, 8), (3, 1, 2), (1, 5, 4)])
def test_copy_task_layout(S, T, K):
    X, y = make_copy_task(20, n_symbols=S, delay=T, n_classes=K, random_state=1)
    assert X.shape == (20, 2 * S + T, K + 2)
    np.testing.assert_array_equal(X.sum(axis=2), 1.0)
    codes = X.argmax(axis=2)
    # symbols first, then blanks with a single delimiter at S + T - 1
    assert codes[:, :S].max() < K
    assert np.all(codes[:, S + T - 1] == K + 1)
    assert np.all(np.delete(codes[:, S:], T - 1, axis=1) == K)
    # target: S + T blanks then the symbols
    assert np.all(y[:, : S + T] == K)
    np.testing.assert_array_equal(y[:, S + T :], codes[:, :S])
    codes2, y2 = make_copy_task(
        20, n_symbols=S, delay=T, n_classes=K, one_hot=False, random_state=1
    )
    np.testing.assert_array_equal(codes2, codes)
    np.testing.assert_array_equal(y2, y)


def test_copy_task_seeded():
    a = make_copy_task(5, random_state=3)
    b = make_copy_task(5, random_state=3)
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"n_samples": 0}, ValueError, "n_samples must be >= 1, got 0"),
        ({"n_symbols": 2.5}, TypeError, "n_symbols must be an int"),
        ({"n_classes": 1}, ValueError, "n_classes must be >= 2, got 1"),
        ({"delay": True}, TypeError, "delay must be an int"),
        # any value was read as a truth value: 'no' gave one-hot inputs
        ({"one_hot": "no"}, TypeError, "one_hot must be a bool, got str: 'no'"),
    ],
)
def test_copy_task_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        make_copy_task(**kwargs)


def test_adding_problem():
    X, y = make_adding_problem(2000, length=50, random_state=0)
    assert X.shape == (2000, 50, 2)
    markers = X[:, :, 1]
    np.testing.assert_array_equal(markers.sum(axis=1), 2.0)
    assert np.all(markers[:, :25].sum(axis=1) == 1)
    assert np.all(markers[:, 25:].sum(axis=1) == 1)
    np.testing.assert_allclose(y, (X[:, :, 0] * markers).sum(axis=1))
    # predicting 1 always gives MSE ~ 1/6
    assert abs(np.mean((y - 1.0) ** 2) - 1 / 6) < 0.02
    with pytest.raises(ValueError, match="length must be >= 2, got 1"):
        make_adding_problem(3, length=1)


def test_sequential_digits_variants():
    X, y = load_sequential_digits(return_X_y=True)
    rows = load_sequential_digits(mode="row")
    np.testing.assert_array_equal(rows.data.reshape(-1, 64), X[:, :, 0])
    assert X.min() >= 0.0 and X.max() <= 1.0
    perm = load_sequential_digits(permuted=True, random_state=5)
    assert not np.array_equal(perm.permutation, np.arange(64))
    np.testing.assert_array_equal(perm.data[:, :, 0], X[:, perm.permutation, 0])
    again = load_sequential_digits(permuted=True, random_state=5)
    np.testing.assert_array_equal(again.permutation, perm.permutation)
    with pytest.raises(ValueError, match="mode must be 'pixel' or 'row', got 'col'"):
        load_sequential_digits(mode="col")


@pytest.mark.parametrize("name", ["permuted", "return_X_y"])
def test_sequential_digits_refuses_non_bool_flags(name):
    # any value was read as a truth value ('no' permuted the pixels)
    with pytest.raises(TypeError, match=f"{name} must be a bool, got str: 'no'"):
        load_sequential_digits(**{name: "no"})
