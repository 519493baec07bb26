"""load_mnist_sequences (IDX files) and load_ptb_characters (text files)."""

import gzip

import numpy as np
import pytest

from sklmn.datasets import load_mnist_sequences, load_ptb_characters


def _idx(array: np.ndarray, magic: int) -> bytes:
    dims = b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return magic.to_bytes(4, "big") + dims + array.astype(np.uint8).tobytes()


@pytest.fixture
def mnist(tmp_path):
    rng = np.random.RandomState(0)
    raw = {
        "train": (rng.randint(0, 256, (12, 28, 28)), rng.randint(0, 10, 12)),
        "t10k": (rng.randint(0, 256, (3, 28, 28)), rng.randint(0, 10, 3)),
    }
    for part, (images, labels) in raw.items():
        (tmp_path / f"{part}-images-idx3-ubyte").write_bytes(_idx(images, 2051))
        # the labels gzipped: both forms are read
        with gzip.open(tmp_path / f"{part}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(_idx(labels, 2049))
    return tmp_path, raw


def test_mnist_pixel_sequences(mnist):
    folder, raw = mnist
    data = load_mnist_sequences(folder, n_valid=4, random_state=3)
    train_images, train_labels = raw["train"]
    assert data.X_train.shape == (8, 784, 1) and data.X_valid.shape == (4, 784, 1)
    assert data.X_test.shape == (3, 784, 1) and data.data.shape == (15, 784, 1)
    assert data.X_train.dtype == np.float32 and data.y_train.dtype == np.int64
    np.testing.assert_allclose(
        data.X_test[:, :, 0] * 255, raw["t10k"][0].reshape(3, 784), atol=1e-3
    )
    np.testing.assert_array_equal(data.y_test, raw["t10k"][1])
    # the validation images are the training images at valid_index
    np.testing.assert_array_equal(data.valid_index, np.sort(data.valid_index))
    np.testing.assert_allclose(
        data.X_valid[:, :, 0] * 255,
        train_images.reshape(12, 784)[data.valid_index],
        atol=1e-3,
    )
    np.testing.assert_array_equal(data.y_valid, train_labels[data.valid_index])
    rest = np.setdiff1d(np.arange(12), data.valid_index)
    np.testing.assert_array_equal(data.y_train, train_labels[rest])
    X, y = load_mnist_sequences(folder, n_valid=0, split="test", return_X_y=True)
    np.testing.assert_array_equal(y, raw["t10k"][1])


def test_mnist_permuted_and_rows(mnist):
    folder, _ = mnist
    plain = load_mnist_sequences(folder, n_valid=4, random_state=5)
    permuted = load_mnist_sequences(folder, permuted=True, n_valid=4, random_state=5)
    expected = np.random.RandomState(5).permutation(784)
    np.testing.assert_array_equal(permuted.permutation, expected)
    np.testing.assert_array_equal(plain.permutation, np.arange(784))
    # the same validation images whether permuted or not
    np.testing.assert_array_equal(plain.valid_index, permuted.valid_index)
    np.testing.assert_array_equal(permuted.data, plain.data[:, expected])
    rows = load_mnist_sequences(folder, mode="row", n_valid=0, dtype=np.float64)
    assert rows.X_train.shape == (12, 28, 28) and rows.X_valid.shape == (0, 28, 28)
    assert rows.X_train.dtype == np.float64
    pixels = load_mnist_sequences(folder, n_valid=0).X_train
    np.testing.assert_allclose(rows.X_train.reshape(12, 784, 1), pixels, atol=1e-6)
    assert 0.0 <= plain.data.min() and plain.data.max() <= 1.0


def test_mnist_malformed_files(mnist):
    folder, raw = mnist
    labels = folder / "t10k-labels-idx1-ubyte.gz"
    content = labels.read_bytes()
    labels.unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        load_mnist_sequences(folder)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(_idx(raw["t10k"][1], 2051))
    with pytest.raises(ValueError, match="magic number 0x00000803"):
        load_mnist_sequences(folder)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(_idx(raw["t10k"][1][:2], 2049))
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        load_mnist_sequences(folder)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(gzip.decompress(content)[:-1])
    with pytest.raises(ValueError, match=r"declares the dimensions \[3\]"):
        load_mnist_sequences(folder)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(_idx(np.array([1, 2, 12]), 2049))
    with pytest.raises(ValueError, match="digits 0 .. 9, found 12"):
        load_mnist_sequences(folder)


def test_mnist_bad_arguments(mnist, tmp_path_factory):
    folder, _ = mnist
    with pytest.raises(FileNotFoundError, match="four IDX files"):
        load_mnist_sequences(folder / "nothing")
    with pytest.raises(ValueError, match="mode must be"):
        load_mnist_sequences(folder, mode="column")
    with pytest.raises(ValueError, match="n_valid must be smaller than the 12"):
        load_mnist_sequences(folder, n_valid=12)
    with pytest.raises(ValueError, match="n_valid must be >= 0"):
        load_mnist_sequences(folder, n_valid=-1)
    with pytest.raises(TypeError, match="permuted must be a bool"):
        load_mnist_sequences(folder, permuted="yes")
    with pytest.raises(ValueError, match="dtype must be"):
        load_mnist_sequences(folder, dtype=np.int32)
    # None (numpy reads it as float64) and a name that is no dtype: named
    for bad in (None, "foo"):
        with pytest.raises(ValueError, match=f"dtype must be .*got {bad!r}"):
            load_mnist_sequences(folder, n_valid=2, dtype=bad)


SENTENCES = ["aer banknote <unk> co.", "the N years", "mr. <unk> 's"]


def _write_ptb(folder, kind, parts):
    folder.mkdir()
    for part, lines in parts.items():
        if kind == "char":
            text = "".join(
                " " + " ".join("_" if c == " " else c for c in line) + " \n"
                for line in lines
            )
            (folder / f"ptb.char.{part}.txt").write_text(text)
        else:
            text = "".join(f" {line} \n" for line in lines)
            (folder / f"ptb.{part}.txt").write_text(text)
    return folder


def test_ptb_character_and_word_files_give_the_same_streams(tmp_path):
    parts = {"train": SENTENCES, "valid": SENTENCES[1:], "test": SENTENCES[:1]}
    char = load_ptb_characters(_write_ptb(tmp_path / "c", "char", parts))
    word = load_ptb_characters(_write_ptb(tmp_path / "w", "word", parts))
    assert (char.source, word.source) == ("char", "word")
    assert (
        char.vocabulary == word.vocabulary == sorted(set("\n".join(SENTENCES) + "\n"))
    )
    for part in ("train", "valid", "test"):
        np.testing.assert_array_equal(char[part], word[part])
        assert char[part].dtype == np.int64
    text = "".join(char.vocabulary[i] for i in char.train)
    assert text == "".join(line + "\n" for line in SENTENCES)
    for kind in ("c", "w"):
        flat = load_ptb_characters(tmp_path / kind, line_end=False)
        assert "".join(flat.vocabulary[i] for i in flat.test) == SENTENCES[0]
        # sentences stay apart: the last word of one is not glued to the next
        assert "".join(flat.vocabulary[i] for i in flat.train) == " ".join(SENTENCES)


def test_ptb_errors(tmp_path):
    parts = {"train": ["abc"], "valid": ["abd"], "test": ["a"]}
    with pytest.raises(ValueError, match=r"does not: \['d'\]"):
        load_ptb_characters(_write_ptb(tmp_path / "a", "word", parts))
    folder = _write_ptb(tmp_path / "b", "char", {"train": ["ab"], "valid": ["a"]})
    with pytest.raises(FileNotFoundError, match=r"not \['ptb.char.test.txt'\]"):
        load_ptb_characters(folder)
    (folder / "ptb.char.test.txt").write_text(" ab c \n")
    with pytest.raises(ValueError, match="line 1: the token 'ab'"):
        load_ptb_characters(folder)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="ptb.char.train.txt"):
        load_ptb_characters(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_ptb_characters(tmp_path / "missing")
    with pytest.raises(TypeError, match="line_end must be a bool"):
        load_ptb_characters(folder, line_end=None)
