"""Tests of the sequence input contract (sklmn.utils.sequences)."""

import numpy as np
import pytest

from sklmn.utils.sequences import (
    check_sequences,
    format_like_input,
    from_channels_first,
    lengths_to_mask,
    pad_sequences,
    to_channels_first,
    unpad_sequences,
    validate_sequences,
)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_3d_array_is_copied_and_kept(rng):
    X = rng.normal(size=(4, 6, 3))
    X_orig = X.copy()
    seqs = check_sequences(X)
    assert seqs.data.shape == (4, 6, 3)
    np.testing.assert_array_equal(seqs.lengths, [6, 6, 6, 6])
    assert not seqs.ragged and not seqs.univariate
    np.testing.assert_array_equal(seqs.data, X)
    seqs.data[0, 0, 0] = 123.0
    np.testing.assert_array_equal(X, X_orig)


def test_2d_array_is_univariate(rng):
    X = rng.normal(size=(5, 7))
    seqs = check_sequences(X)
    assert seqs.data.shape == (5, 7, 1)
    assert seqs.univariate and not seqs.ragged
    np.testing.assert_array_equal(seqs.data[:, :, 0], X)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_and_integer_input(dtype):
    seqs = check_sequences(np.arange(12).reshape(2, 3, 2), dtype=dtype)
    assert seqs.data.dtype == dtype
    np.testing.assert_array_equal(seqs.data.ravel(), np.arange(12))


def test_trailing_nan_is_padding_and_becomes_zero(rng):
    X = rng.normal(size=(3, 5, 2))
    X[0, 3:] = np.nan
    X[2, 1:] = np.nan
    X_orig = X.copy()
    seqs = check_sequences(X)
    np.testing.assert_array_equal(seqs.lengths, [3, 5, 1])
    assert np.all(seqs.data[~seqs.mask] == 0.0)
    np.testing.assert_array_equal(seqs.data[seqs.mask], X[seqs.mask])
    np.testing.assert_array_equal(X, X_orig)  # NaNs untouched in caller's array


def test_common_padding_is_trimmed(rng):
    X = rng.normal(size=(2, 5, 1))
    X[:, 3:] = np.nan
    seqs = check_sequences(X)
    assert seqs.n_timesteps == 3


def test_ragged_list(rng):
    items = [rng.normal(size=(4, 2)), rng.normal(size=(2, 2)), rng.normal(size=(7, 2))]
    seqs = check_sequences(items)
    assert seqs.ragged and not seqs.univariate
    assert seqs.data.shape == (3, 7, 2)
    np.testing.assert_array_equal(seqs.lengths, [4, 2, 7])
    for a, b in zip(seqs.sequences(), items, strict=True):
        np.testing.assert_array_equal(a, b)


def test_ragged_list_of_1d_is_univariate():
    seqs = check_sequences([np.arange(3.0), np.arange(1.0)])
    assert seqs.univariate and seqs.ragged
    assert seqs.data.shape == (2, 3, 1)


def test_list_item_with_trailing_nan_padding():
    seqs = check_sequences([np.array([[1.0], [np.nan]]), np.array([[2.0]])])
    np.testing.assert_array_equal(seqs.lengths, [1, 1])


def test_list_of_equal_length_arrays_stays_ragged_layout():
    seqs = check_sequences([np.zeros((3, 2)), np.ones((3, 2))])
    assert seqs.ragged
    seqs = check_sequences([[1.0, 2.0], [3.0, 4.0]])  # plain nested list = 2-D
    assert not seqs.ragged and seqs.univariate


@pytest.mark.parametrize(
    "position, kind", [((0, 2, 1), "NaN"), ((1, 0, 0), "infinity")]
)
def test_non_finite_inside_sequence_is_located(rng, position, kind):
    X = rng.normal(size=(2, 4, 2))
    X[position] = np.nan if kind == "NaN" else np.inf
    i, t, f = position
    with pytest.raises(
        ValueError, match=f"{kind} inside sequence {i} at time step {t}"
    ):
        check_sequences(X)


def test_partial_nan_trailing_step_is_an_error(rng):
    X = rng.normal(size=(1, 3, 2))
    X[0, 2, 0] = np.nan  # not NaN in every feature: not padding
    with pytest.raises(ValueError, match="NaN inside sequence 0 at time step 2"):
        check_sequences(X)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.full((2, 3, 1), np.nan), "Sequence 0 of X is empty"),
        ([np.zeros((0, 2)), np.zeros((2, 2))], "Sequence 0 of X is empty"),
        # every sequence empty (no time step at all to pad to)
        ([np.zeros((0, 2))], "Sequence 0 of X is empty"),
        ([np.zeros(0), np.zeros(0)], "Sequence 0 of X is empty"),
        ([np.zeros((3, 2)), np.zeros((2, 3))], "Inconsistent numbers of features"),
        ([np.zeros(3), np.zeros((2, 1))], "mixes 1-D sequences"),
        (np.zeros((2, 3, 4, 5)), "Found array with dim 4"),
        (np.zeros(5), "got 1D array instead"),
        (np.zeros((0, 3)), "0 sample"),
        ([], "0 sample"),
        (np.zeros((2, 3), dtype=complex), "Complex data not supported"),
        ([np.zeros((2, 2, 2))], "has 3 dimensions"),
    ],
)
def test_value_errors(X, match):
    with pytest.raises(ValueError, match=match):
        check_sequences(X)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([["a", "b"], ["c", "d"]]), "non-numeric"),
        (np.array([[1.0, {"a": 1}]], dtype=object), "non-numeric"),
        (None, "must be an array-like"),
        (3.0, "must be an array-like"),
        # numpy wraps these whole in a 0-d object array (an AttributeError)
        ((x for x in [[1.0]]), "X must be an array-like of numbers, got generator"),
        ({"a": [1.0]}, "X must be an array-like of numbers, got dict"),
        ([[1.0, 2.0], iter([3.0])], r"X\[1\] must be an array-like of numbers"),
    ],
)
def test_type_errors(X, match):
    with pytest.raises(TypeError, match=match):
        check_sequences(X)


def test_sparse_is_rejected():
    sp = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match="Sparse input"):
        check_sequences(sp.csr_matrix(np.eye(3)))


def test_object_array_of_numbers_is_accepted():
    X = np.arange(6.0).reshape(2, 3).astype(object)
    np.testing.assert_array_equal(check_sequences(X).data[:, :, 0], X.astype(float))


def test_ensure_min_length():
    with pytest.raises(ValueError, match="at least 2 are required"):
        check_sequences([np.zeros(3), np.zeros(1)], ensure_min_length=2)


def test_validate_sequences_sets_and_checks_n_features():
    class Est:
        pass

    est = Est()
    validate_sequences(est, np.zeros((2, 3, 4)), reset=True)
    assert est.n_features_in_ == 4
    validate_sequences(est, [np.zeros((5, 4))], reset=False)
    with pytest.raises(ValueError, match="X has 2 features per time step, but Est"):
        validate_sequences(est, np.zeros((2, 3, 2)), reset=False)


def test_pad_unpad_round_trip(rng):
    items = [rng.normal(size=(n, 3)) for n in (4, 1, 6)]
    padded, lengths = pad_sequences(items, value=-1.0)
    assert padded.shape == (3, 6, 3)
    assert np.all(padded[1, 1:] == -1.0)
    for a, b in zip(unpad_sequences(padded, lengths), items, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="lengths has shape"):
        unpad_sequences(padded, [1, 2])


@pytest.mark.parametrize(
    "seqs, match",
    [
        # a 1-feature sequence was broadcast over every column
        ([np.zeros((2, 3)), np.ones((1, 1))], "sequence 1 has 1"),
        ([np.zeros((2, 3)), np.ones((1, 2))], "sequence 1 has 2"),
        ([np.zeros((2, 3, 1))], r"seqs\[0\] has shape \(2, 3, 1\)"),
        ([np.zeros(2), 1.0], r"seqs\[1\] has shape \(\)"),
    ],
)
def test_pad_sequences_refuses_inconsistent_items(seqs, match):
    with pytest.raises(ValueError, match=match):
        pad_sequences(seqs)


@pytest.mark.parametrize("bad", [-1, 4, 1.5])
def test_unpad_sequences_refuses_lengths_out_of_range(bad):
    # -1 gave T - 1 steps, 4 was cut to the padded 3 steps, 1.5 to 1
    with pytest.raises(ValueError, match="lengths must be integers in \\[0, 3\\]"):
        unpad_sequences(np.zeros((2, 3, 1)), [2, bad])


def test_unpad_sequences_reads_nested_lists_and_refuses_1d():
    # a nested list was an AttributeError, a 1-D array an IndexError
    out = unpad_sequences([[1.0, 2.0], [3.0, 4.0]], [2, 1])
    assert [o.tolist() for o in out] == [[1.0, 2.0], [3.0]]
    with pytest.raises(ValueError, match=r"at least 2 dimensions.*\(3,\)"):
        unpad_sequences(np.zeros(3), [1, 1, 1])


def test_lengths_to_mask():
    mask = lengths_to_mask([3, 1, 2])
    assert mask.shape == (3, 3)
    np.testing.assert_array_equal(mask.sum(axis=1), [3, 1, 2])


def test_format_like_input_array_and_list(rng):
    X = rng.normal(size=(2, 4, 1))
    X[1, 2:] = np.nan
    seqs = check_sequences(X)
    out = format_like_input(np.ones((2, 4, 3)), seqs)
    assert out.shape == (2, 4, 3)
    assert np.isnan(out[1, 2:]).all() and not np.isnan(out[0]).any()
    # NaN padding reads back as the same lengths
    np.testing.assert_array_equal(check_sequences(out).lengths, seqs.lengths)

    seqs = check_sequences([np.zeros((3, 1)), np.zeros((1, 1))])
    out = format_like_input(np.ones((2, 3, 2)), seqs)
    assert [o.shape for o in out] == [(3, 2), (1, 2)]
    with pytest.raises(ValueError, match="values has shape"):
        format_like_input(np.ones((3, 3, 2)), seqs)


@pytest.mark.parametrize("dtype", [bool, np.int64])
@pytest.mark.parametrize("fill", [np.nan, np.float32(np.nan), np.float64(np.nan)])
def test_format_like_input_nan_fill_of_integer_or_boolean_values(dtype, fill):
    # a numpy NaN (not a Python float) was cast to the minimum int64, and any
    # NaN to True in boolean values: padding read as valid steps
    X = np.array([[1.0, 2.0], [3.0, np.nan]])
    seqs = check_sequences(X)
    values = np.ones((2, 2, 1), dtype=dtype)
    out = format_like_input(values, seqs, fill=fill)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(
        np.isnan(out[:, :, 0]), [[False, False], [False, True]]
    )
    np.testing.assert_array_equal(out[~np.isnan(out)], 1.0)
    assert values.dtype == dtype and values.all()  # the input unchanged
    # an integer fill keeps the dtype
    assert format_like_input(values, seqs, fill=0).dtype == dtype


@pytest.mark.parametrize(
    "lengths, n_timesteps, match",
    [
        ([-1, 2], None, "got -1 for sequence 0"),  # was an all-False row
        ([2, 1.5], 3, "got 1.5 for sequence 1"),  # was truncated to 1
        ([np.nan], 2, "got nan for sequence 0"),  # was numpy's cast error
        ([[1, 2]], None, r"shape \(1, 2\)"),  # was a 3-D mask
        (3, None, r"shape \(\)"),  # was an IndexError
        ([1], -1, "got -1"),  # was an empty mask
        ([1], 2.5, "got 2.5"),  # was read as 2
    ],
)
def test_lengths_to_mask_refuses_bad_lengths(lengths, n_timesteps, match):
    with pytest.raises(ValueError, match=match):
        lengths_to_mask(lengths, n_timesteps)


def test_lengths_to_mask_accepts_integer_likes():
    expected = [[True, False, False], [True, True, False]]
    for lengths in ([1, 2], [1.0, 2.0], np.array([1, 2], dtype=np.uint8)):
        np.testing.assert_array_equal(lengths_to_mask(lengths, np.int64(3)), expected)
    assert lengths_to_mask([], 3).shape == (0, 3)
    # a length above n_timesteps fills its row
    np.testing.assert_array_equal(lengths_to_mask([5], 2), [[True, True]])


@pytest.mark.parametrize(
    "seqs, kwargs, match",
    [
        # was inf in the result (float32 overflow)
        ([[1.0], [2.0, 1e300]], {"dtype": np.float32}, r"seqs\[1\].*too large"),
        # was the minimum int64 at the padded step
        ([[1, 2], [3]], {"value": np.nan, "dtype": np.int64}, "value=nan"),
        # the errors below named no sequence
        ([[1.0], [1j]], {}, r"Complex data not supported: seqs\[1\]"),
        ([[1.0], ["a"]], {}, r"seqs\[1\] could not be converted"),
        ([[1.0], [[1.0, 2.0], [3.0]]], {}, r"seqs\[1\] could not be read"),
    ],
)
def test_pad_sequences_refuses_values_it_cannot_store(seqs, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pad_sequences(seqs, **kwargs)


def test_pad_sequences_integer_dtype_with_integer_fill():
    padded, lengths = pad_sequences([[1, 2], [3]], value=-1, dtype=np.int64)
    assert padded.dtype == np.int64
    np.testing.assert_array_equal(padded[:, :, 0], [[1, 2], [3, -1]])
    padded, _ = pad_sequences([[1, 2], [3]], dtype=np.int64)  # default 0.0
    np.testing.assert_array_equal(padded[:, :, 0], [[1, 2], [3, 0]])


@pytest.mark.parametrize("dtype", [np.int64, bool, "foo"])
def test_check_sequences_refuses_non_floating_dtype(dtype):
    # int64 read NaN padding as the minimum int64: valid time steps
    X = np.array([[1.0, 2.0], [3.0, np.nan]])
    with pytest.raises(ValueError, match="dtype must be a floating dtype"):
        check_sequences(X, dtype=dtype)


@pytest.mark.parametrize("value", [-1, 2.5, True, "2"])
def test_check_sequences_refuses_bad_ensure_min_length(value):
    with pytest.raises(ValueError, match=f"ensure_min_length.*got {value!r}"):
        check_sequences(np.ones((2, 3)), ensure_min_length=value)


def test_check_sequences_of_sequences_refuses_values_too_large_for_dtype():
    # the copy of a validated float64 Sequences into float32 was infinity
    seqs = check_sequences(np.array([[1.0, 1e300]]))
    with pytest.raises(ValueError, match=r"1e\+300 at index \(0, 1, 0\)"):
        check_sequences(seqs, dtype=np.float32)
    np.testing.assert_allclose(
        check_sequences(check_sequences([[1.0, 2.0]]), dtype=np.float32).data[0, :, 0],
        [1.0, 2.0],
    )


def test_check_sequences_python_integer_too_large_names_the_item():
    # was a bare OverflowError "int too large to convert to float"
    X = [np.array([1, 10**400], dtype=object)]
    with pytest.raises(ValueError, match=r"X\[0\] contains a value too large"):
        check_sequences(X)


def test_list_of_sequences_without_features_says_so():
    # was "Sequence 0 of X is empty", though it has 3 steps
    with pytest.raises(ValueError, match=r"0 features per time step.*\(3, 0\)"):
        check_sequences([np.zeros((3, 0)), np.zeros((2, 0))])


def test_to_channels_first_lists_of_univariate_or_bad_items():
    # 1-D items stayed 1-D (from_channels_first then refused them) and 3-D
    # items were transposed whole
    out = to_channels_first([np.arange(3.0), [4.0, 5.0]])
    assert [a.shape for a in out] == [(1, 3), (1, 2)]
    back = from_channels_first(out)
    np.testing.assert_array_equal(back[1], [[4.0], [5.0]])
    with pytest.raises(ValueError, match=r"X\[1\] has shape \(2, 2, 2\)"):
        to_channels_first([np.zeros((3, 2)), np.zeros((2, 2, 2))])


def test_channels_first_adapters(rng):
    X = rng.normal(size=(3, 5, 2))
    X_cf = to_channels_first(X)
    assert X_cf.shape == (3, 2, 5)
    np.testing.assert_array_equal(from_channels_first(X_cf), X)
    ragged_cf = [rng.normal(size=(2, n)) for n in (3, 5)]
    ragged = from_channels_first(ragged_cf)
    assert [r.shape for r in ragged] == [(3, 2), (5, 2)]
    back = to_channels_first(ragged)
    for a, b in zip(back, ragged_cf, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="expects a 3-D array"):
        from_channels_first(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="expects a 3-D array"):
        to_channels_first(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="must be 2-D"):
        from_channels_first([np.zeros(3)])
