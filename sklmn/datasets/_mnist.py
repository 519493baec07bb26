"""MNIST read from its IDX files as pixel sequences (sequential / permuted
MNIST)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._base import _check_bool, _split_result
from ._files import check_path, read_bytes, require_dir

__all__ = ["load_mnist_sequences"]

_SPLITS = ("train", "valid", "test")
#: (part, kind) -> accepted file names (each also with a ``.gz`` suffix)
_FILES = {
    ("train", "images"): ("train-images-idx3-ubyte", "train-images.idx3-ubyte"),
    ("train", "labels"): ("train-labels-idx1-ubyte", "train-labels.idx1-ubyte"),
    ("test", "images"): ("t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"),
    ("test", "labels"): ("t10k-labels-idx1-ubyte", "t10k-labels.idx1-ubyte"),
}
_LAYOUT = (
    "a folder holding the four IDX files of MNIST, gzipped (.gz) or not: "
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
    "t10k-labels-idx1-ubyte."
)

_DESCR = """\
MNIST sequences
---------------
The MNIST handwritten digits (LeCun, Cortes and Burges; 60000 training and
10000 test images of 28x28 pixels, 10 classes) read from the four standard
IDX files you already have (nothing is downloaded) as sequences: sequential
MNIST (one pixel per step, row-major, 784 steps) and permuted MNIST (the same
with a fixed random permutation of the pixels), after Le et al. (2015), as in
Carta et al. 2020b §5.2 (Table 2). ``mode='row'`` gives 28 steps of one row.
Pixels are scaled to [0, 1] (divided by 255). The validation part is
``n_valid`` training images drawn at random (the paper: 10000), removed from
the training part. Licence: the MNIST files (Y. LeCun and C. Cortes) are
commonly redistributed under CC BY-SA 3.0; their site states no licence.

Random draws: ``random_state`` first draws the pixel permutation (784
values; drawn even when ``permuted=False``, so the validation images do not
depend on ``permuted``), then the validation images. With an int seed the
permutation is the one of ``numpy.random.RandomState(seed).permutation(784)``.
"""


def _read_idx(path, magic: int, ndim: int):
    """Parse an IDX file of unsigned bytes: magic number, dimensions, data."""
    data = read_bytes(path)
    if len(data) < 4 + 4 * ndim:
        raise ValueError(
            f"{str(path)!r} is too short ({len(data)} bytes) for an IDX header. "
            f"Expected layout: {_LAYOUT}"
        )
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        raise ValueError(
            f"{str(path)!r} starts with the magic number {found:#010x}, expected "
            f"{magic:#010x} (IDX, unsigned bytes, {ndim} dimension(s)). "
            f"Expected layout: {_LAYOUT}"
        )
    dims = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    start = 4 + 4 * ndim
    expected = int(np.prod(dims))
    if len(data) - start != expected:
        raise ValueError(
            f"{str(path)!r} declares the dimensions {dims} ({expected} bytes of "
            f"data) but holds {len(data) - start} bytes after its header."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=start).reshape(dims)


def _find(folder, part: str, kind: str):
    names = _FILES[(part, kind)]
    for name in names:
        for candidate in (name, name + ".gz"):
            if (folder / candidate).is_file():
                return folder / candidate
    raise FileNotFoundError(
        f"MNIST: no {names[0]} (or {names[0]}.gz) in {str(folder)!r}. "
        f"Expected layout: {_LAYOUT}"
    )


def _read_part(folder, part: str):
    images = _read_idx(_find(folder, part, "images"), 0x00000803, 3)
    labels = _read_idx(_find(folder, part, "labels"), 0x00000801, 1)
    if images.shape[1:] != (28, 28):
        raise ValueError(
            f"MNIST {part} images must be 28x28, got {images.shape[1]}x"
            f"{images.shape[2]}."
        )
    if len(images) != len(labels):
        raise ValueError(
            f"MNIST {part}: {len(images)} images but {len(labels)} labels."
        )
    if labels.size and labels.max() > 9:
        raise ValueError(
            f"MNIST {part} labels must be digits 0 .. 9, found {int(labels.max())}."
        )
    return images.reshape(len(images), 784), labels


def load_mnist_sequences(
    path,
    *,
    mode="pixel",
    permuted=False,
    random_state=0,
    n_valid=10000,
    split=None,
    dtype=np.float32,
    return_X_y=False,
):
    """Load MNIST from its IDX files as sequences (sequential / permuted MNIST).

    Carta et al. 2020b §5.2 after Le et al. (2015): every image is read one
    pixel per step (784 steps of 1 feature), in order or through a fixed
    random permutation. Reads the four standard IDX files that you already
    have (nothing is downloaded); the options are named as in
    :func:`load_sequential_digits`, the offline stand-in. See ``DESCR``
    and the "Real data" page of the user guide.

    Parameters
    ----------
    path : str or path-like
        Folder with ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``, each
        gzipped (``.gz``) or not.
    mode : {'pixel', 'row'}, default='pixel'
        One pixel per step (784 steps, 1 feature) or one row per step (28
        steps, 28 features).
    permuted : bool, default=False
        Read the pixels through a fixed random permutation (permuted MNIST).
    random_state : int, RandomState instance or None, default=0
        Seed of the permutation and of the validation images (see ``DESCR``).
    n_valid : int, default=10000
        Training images moved, at random, to the validation part (the paper:
        10000); 0 leaves the validation part empty.
    split : {'train', 'valid', 'test'} or None, default=None
        Part returned as ``data`` / ``target`` (and by ``return_X_y``); None
        returns all 70000 images (train, valid, test in that order).
    dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        Type of the pixel values (float32 keeps all of MNIST under 0.3 GB).
    return_X_y : bool, default=False
        Return ``(X, y)`` of the selected ``split`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data``: array of shape ``(n, 784, 1)`` or ``(n, 28, 28)``;
        ``target``: int64 digits; ``X_train``, ``y_train``, ``X_valid``,
        ``y_valid``, ``X_test``, ``y_test``: the parts (views of ``data``);
        ``permutation`` (the pixel order, identity when not permuted),
        ``valid_index`` (positions in the IDX training file of the
        validation images), ``DESCR``.
    (X, y) : tuple
        When ``return_X_y=True``.

    Raises
    ------
    FileNotFoundError
        When the folder or one of the four files is missing.
    ValueError
        When a file is not an IDX file of the expected type and size.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklmn.datasets import load_mnist_sequences
    >>> def write_idx(path, array, magic):
    ...     dims = b"".join(d.to_bytes(4, "big") for d in array.shape)
    ...     with open(path, "wb") as f:
    ...         f.write(magic.to_bytes(4, "big") + dims + array.tobytes())
    >>> rng = np.random.RandomState(0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for part, n in (("train", 6), ("t10k", 2)):
    ...         images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    ...         labels = np.arange(n, dtype=np.uint8)
    ...         write_idx(os.path.join(tmp, f"{part}-images-idx3-ubyte"), images, 2051)
    ...         write_idx(os.path.join(tmp, f"{part}-labels-idx1-ubyte"), labels, 2049)
    ...     data = load_mnist_sequences(tmp, permuted=True, n_valid=2)
    >>> data.X_train.shape, data.X_valid.shape, data.X_test.shape
    ((4, 784, 1), (2, 784, 1), (2, 784, 1))
    >>> X, y = load_mnist_sequences("mnist/", split="test",
    ...                             return_X_y=True)  # doctest: +SKIP
    """
    folder = require_dir(check_path("path", path), "MNIST", _LAYOUT)
    if mode not in ("pixel", "row"):
        raise ValueError(f"mode must be 'pixel' or 'row', got {mode!r}.")
    permuted = _check_bool("permuted", permuted)
    if isinstance(n_valid, bool) or not isinstance(n_valid, numbers.Integral):
        raise TypeError(
            f"n_valid must be an int, got {type(n_valid).__name__}: {n_valid!r}."
        )
    if n_valid < 0:
        raise ValueError(f"n_valid must be >= 0, got {n_valid!r}.")
    if split is not None and split not in _SPLITS:
        raise ValueError(
            f"split must be 'train', 'valid', 'test' or None, got {split!r}."
        )
    try:  # not a dtype at all ('foo'): refused below
        chosen = np.dtype(dtype)
    except TypeError:
        chosen = None
    # np.dtype(None) is float64 (and equals None): None is refused as well
    if dtype is None or chosen is None or chosen.type not in (np.float32, np.float64):
        raise ValueError(
            f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}."
        )
    return_X_y = _check_bool("return_X_y", return_X_y)

    train_images, train_labels = _read_part(folder, "train")
    test_images, test_labels = _read_part(folder, "test")
    if n_valid >= len(train_images):
        raise ValueError(
            f"n_valid must be smaller than the {len(train_images)} training "
            f"images, got {n_valid!r}."
        )
    rng = check_random_state(random_state)
    draw = rng.permutation(784)
    permutation = draw if permuted else np.arange(784)
    valid_index = np.sort(rng.choice(len(train_images), n_valid, replace=False))
    keep = np.setdiff1d(np.arange(len(train_images)), valid_index)
    order = np.concatenate([keep, valid_index])
    images = np.concatenate([train_images[order], test_images])
    y = np.concatenate([train_labels[order], test_labels]).astype(np.int64)
    X = images[:, permutation].astype(dtype)
    X /= 255.0
    X = X[:, :, None] if mode == "pixel" else X.reshape(-1, 28, 28)
    bounds = np.cumsum([len(keep), n_valid])
    parts = {}
    edges = ((0, bounds[0]), (bounds[0], bounds[1]), (bounds[1], len(X)))
    for name, (lo, hi) in zip(_SPLITS, edges, strict=True):
        parts[f"X_{name}"], parts[f"y_{name}"] = X[lo:hi], y[lo:hi]
    return _split_result(
        X,
        y,
        parts,
        split,
        return_X_y,
        permutation=permutation,
        valid_index=valid_index,
        DESCR=_DESCR,
    )
