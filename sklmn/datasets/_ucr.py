"""Seven datasets of the UCR/UEA/TSER archives, read offline from aeon/sktime.

The ``.ts`` files ship inside the wheels of two PyPI packages, ``aeon==1.6.0``
and ``sktime==1.2.0``. sklmn does not import (or require) either package: it
reads the files from an installed copy's data folder when there is one, else
straight from a wheel file kept in ``get_data_home() / "wheels"`` (fetched once
by ``bash dev.sh data``). Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

from ._base import get_data_home
from ._ts import _MISSING_OPTIONS, load_ts_file

__all__ = ["load_timeseries_dataset"]

#: name -> (task, number of dimensions, series length, n_train, n_test, n classes)
_DATASETS: dict[str, tuple[str, int, object, int, int, int | None]] = {
    "ArrowHead": ("classification", 1, 251, 36, 175, 3),
    "BasicMotions": ("classification", 6, 100, 40, 40, 4),
    "ItalyPowerDemand": ("classification", 1, 24, 67, 1029, 2),
    "OSULeaf": ("classification", 1, 427, 200, 242, 6),
    "PLAID": ("classification", 1, "varies", 537, 537, 11),
    "ACSF1": ("classification", 1, 1460, 100, 100, 10),
    "CardanoSentiment": ("regression", 2, 24, 74, 33, None),
}
_PACKAGES = ("aeon", "sktime")
_SPLITS = ("train", "test", "both")
_WHEELS_SUBDIR = "wheels"
_FETCH_COMMAND = "bash dev.sh data"


def load_timeseries_dataset(name, *, split="train", missing="raise", data_home=None):
    """Load one of seven benchmark datasets of the UCR/UEA/TSER archives.

    The standard train/test splits, exactly as shipped with the archives;
    values are those of the files (sklmn rescales nothing).

    ====================  ==============  ====  ======  =====  ====  =======
    name                  task            dims  length  train  test  classes
    ====================  ==============  ====  ======  =====  ====  =======
    ``ArrowHead``         classification  1     251     36     175   3
    ``BasicMotions``      classification  6     100     40     40    4
    ``ItalyPowerDemand``  classification  1     24      67     1029  2
    ``OSULeaf``           classification  1     427     200    242   6
    ``PLAID``             classification  1     varies  537    537   11
    ``ACSF1``             classification  1     1460    100    100   10
    ``CardanoSentiment``  regression      2     24      74     33    -
    ====================  ==============  ====  ======  =====  ====  =======

    Parameters
    ----------
    name : str
        One of the seven names above (case-sensitive).
    split : {'train', 'test', 'both'}, default='train'
        Which standard split to return.
    missing : {'raise', 'interpolate'}, default='raise'
        Passed to :func:`load_ts_file` (none of these seven files has missing
        values; PLAID's cases simply have different lengths).
    data_home : str, path-like or None, default=None
        Folder whose ``wheels/`` subfolder holds the aeon/sktime wheels; see
        :func:`get_data_home` (``SKLMN_DATA`` or ``~/.cache/sklmn``).

    Returns
    -------
    X, y : list of ndarray of shape (T_i, n_dims), ndarray of shape (n,)
        For ``split='train'`` or ``'test'``: the series in sklmn's
        variable-length layout (time first, float64) and the targets (class
        labels as strings, as in the files; floats for CardanoSentiment).
    X_train, X_test, y_train, y_test : lists and ndarrays
        For ``split='both'`` (the order of
        :func:`sklearn.model_selection.train_test_split`).

    Raises
    ------
    ValueError
        For another name (the message lists the seven), a bad ``split`` or
        a bad ``missing``.
    FileNotFoundError
        When neither an installed aeon/sktime nor a wheel in
        ``data_home/wheels`` holds the file; the message gives the command
        that fetches the wheels (``bash dev.sh data``).

    Notes
    -----
    Files are looked up in this order, without importing aeon or sktime:

    1. the ``datasets/data/<name>/`` folder of an installed ``aeon`` or
       ``sktime`` package (located with :func:`importlib.util.find_spec`);
    2. a wheel ``aeon-*.whl`` or ``sktime-*.whl`` in ``data_home/wheels``,
       read as a zip archive without extracting it. ``aeon==1.6.0`` holds all
       but PLAID, ``sktime==1.2.0`` all but CardanoSentiment.

    Sources. The univariate problems are from the UCR archive (H. A. Dau, A.
    Bagnall, K. Kamgar, C.-C. M. Yeh, Y. Zhu, S. Gharghabi, C. A.
    Ratanamahatana, E. Keogh, "The UCR time series archive", IEEE/CAA Journal
    of Automatica Sinica, 2019): ArrowHead (L. Ye and E. Keogh), OSULeaf (A.
    Grandhi), ItalyPowerDemand (J. J. van Wijk, E. Keogh, L. Wei), ACSF1 (C.
    Gisler et al. 2013, edited by P. Schäfer and U. Leser) and PLAID (J. Gao et
    al. 2014, edited by P. Schäfer and U. Leser). BasicMotions is from the UEA
    multivariate archive (A. Bagnall, H. A. Dau, J. Lines, M. Flynn, J. Large,
    A. Bostrom, P. Southam, E. Keogh, "The UEA multivariate time series
    classification archive, 2018", arXiv:1811.00075). CardanoSentiment
    (hourly close price and traded volume of the Cardano cryptocurrency over a
    day; target: that day's normalized sentiment score) is one of the problems
    added to the time series extrinsic regression archive of C. W. Tan, C.
    Bergmeir, F. Petitjean, G. I. Webb ("Time series extrinsic regression",
    Data Mining and Knowledge Discovery, 2021) by D. Guijo-Rubio, M.
    Middlehurst, G. Arcencio, D. F. Silva, A. Bagnall ("Unsupervised feature
    based algorithms for time series extrinsic regression", Data Mining and
    Knowledge Discovery, 2024; arXiv:2305.01429), as aeon's documentation of
    the dataset states.

    Examples
    --------
    >>> from sklmn.datasets import load_timeseries_dataset
    >>> load_timeseries_dataset("GunPoint")
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'GunPoint'; sklmn reads only ['ArrowHead', ...
    >>> X, y = load_timeseries_dataset("BasicMotions")  # doctest: +SKIP
    >>> len(X), X[0].shape, sorted(set(y))  # doctest: +SKIP
    (40, (100, 6), ['Badminton', 'Running', 'Standing', 'Walking'])
    """
    if not isinstance(name, str) or name not in _DATASETS:
        raise ValueError(
            f"unknown dataset {name!r}; sklmn reads only {list(_DATASETS)}."
        )
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {_SPLITS}, got {split!r}.")
    if missing not in _MISSING_OPTIONS:  # before the files are looked for
        raise ValueError(f"missing must be one of {_MISSING_OPTIONS}, got {missing!r}.")
    if split == "both":
        X_train, y_train = _load_split(name, "train", missing, data_home)
        X_test, y_test = _load_split(name, "test", missing, data_home)
        return X_train, X_test, y_train, y_test
    return _load_split(name, split, missing, data_home)


def _load_split(name: str, split: str, missing: str, data_home):
    where = _locate(name, split, data_home)
    if isinstance(where, Path):
        return load_ts_file(where, missing=missing)
    wheel, member = where
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as f:
        return load_ts_file(f, missing=missing)


def _member(package: str, name: str, split: str) -> str:
    return f"{package}/datasets/data/{name}/{name}_{split.upper()}.ts"


def _installed_package_dirs(package: str) -> list[Path]:
    """Folders of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _locate(name: str, split: str, data_home):
    """Path of the file, or (wheel path, member) to read from a wheel."""
    for package in _PACKAGES:
        for folder in _installed_package_dirs(package):
            path = folder.parent / _member(package, name, split)
            if path.is_file():
                return path
    wheels = get_data_home(data_home) / _WHEELS_SUBDIR
    for package in _PACKAGES:
        for wheel in sorted(wheels.glob(f"{package}-*.whl"), reverse=True):
            member = _member(package, name, split)
            try:
                with zipfile.ZipFile(wheel) as zf:
                    zf.getinfo(member)
            except KeyError:
                continue
            except (OSError, zipfile.BadZipFile):
                continue  # an unreadable or partly downloaded wheel
            return wheel, member
    raise FileNotFoundError(
        f"the {split} file of {name} was not found: no installed aeon or sktime "
        f"package holds it and no aeon-*.whl / sktime-*.whl wheel in {wheels} "
        f"does. Fetch the wheels once (about 15 MB) with `{_FETCH_COMMAND}`, which "
        "runs `python -m pip download --no-deps aeon==1.6.0 sktime==1.2.0 -d "
        f"{wheels}`; sklmn then reads the files offline."
    )
