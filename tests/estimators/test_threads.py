"""The thread policy of ``n_threads='auto'`` (its logic; timings are in
python -m sklmn.benchmarks bench threads)."""

import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (loads scipy's BLAS beside numpy's)
import torch
from skorch.callbacks import Callback
from threadpoolctl import ThreadpoolController, threadpool_info, threadpool_limits

from sklmn.estimators import LMNClassifier, RNNClassifier, _auto, _threads
from sklmn.estimators._auto import auto_threads


class Probe(Callback):
    def on_epoch_end(self, net, **kwargs):
        self.seen = torch.get_num_threads()
        self.blas = _blas_threads()


def _blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def _data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5, 2)), np.arange(n) % 2


def test_default_is_auto():
    assert LMNClassifier().n_threads == "auto"
    assert RNNClassifier().get_params()["n_threads"] == "auto"


def test_small_work_gets_one_thread():
    assert auto_threads(work=1_000, budget=16, cores=16) == 1
    assert auto_threads(work=1_999_999, budget=16, cores=16) == 1


def test_large_work_gets_the_budget_bounded_by_free_cores(monkeypatch):
    monkeypatch.setattr(_auto.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    assert auto_threads(work=1e8, budget=8, cores=16) == 8  # the budget
    assert auto_threads(work=1e8, budget=32, cores=16) == 16  # the cores
    assert auto_threads(work=1e8, budget=1, cores=16) == 1  # a joblib worker
    # two other busy processes (load 3 with this one): 14 of 16 cores free
    monkeypatch.setattr(_auto.os, "getloadavg", lambda: (3.0, 1.0, 1.0))
    assert auto_threads(work=1e8, budget=16, cores=16) == 14
    # a saturated machine: one thread
    monkeypatch.setattr(_auto.os, "getloadavg", lambda: (40.0, 1.0, 1.0))
    assert auto_threads(work=1e8, budget=16, cores=16) == 1


def test_no_load_average_leaves_the_budget(monkeypatch):
    def missing():
        raise OSError("no load average")

    monkeypatch.setattr(_auto.os, "getloadavg", missing)
    assert auto_threads(work=1e8, budget=4, cores=4) == 4


def test_work_is_batch_size_times_parameters(monkeypatch):
    seen = []
    monkeypatch.setattr(
        _threads, "auto_threads", lambda work, budget: seen.append(work) or 1
    )
    X, y = _data()
    clf = RNNClassifier(hidden_size=4, max_iter=1, batch_size=8, random_state=0)
    clf.fit(X, y)
    size = sum(p.numel() for p in clf.net_.module_.parameters())
    assert seen[0] == 8 * size
    # a batch_size above the training set: its batches hold the whole set
    seen.clear()
    clf.set_params(batch_size=64).fit(X, y)
    assert seen[0] == len(X) * size


def test_prediction_work_is_the_evaluation_batch_times_parameters(monkeypatch):
    # the predictions weighed the whole predicted set as one batch: a small
    # model predicting many sequences got every thread, where its batches
    # (of at least 256 sequences) are small work
    X, y = _data()
    clf = RNNClassifier(hidden_size=4, max_iter=1, batch_size=8, random_state=0)
    clf.fit(X, y)
    size = sum(p.numel() for p in clf.net_.module_.parameters())
    seen = []
    monkeypatch.setattr(
        _threads, "auto_threads", lambda work, budget: seen.append(work) or 1
    )
    batch = clf.net_.get_params_for("iterator_valid")["batch_size"]
    clf.predict(np.zeros((batch + 40, 2, 2)))
    clf.predict(X[:5])
    assert seen == [batch * size, 5 * size]


@pytest.mark.parametrize("resolved", [1, 2])
def test_auto_is_set_for_the_fit_and_restored(monkeypatch, resolved):
    monkeypatch.setattr(_threads, "auto_threads", lambda work, budget: resolved)
    before = torch.get_num_threads()
    X, y = _data()
    clf = RNNClassifier(
        hidden_size=3, max_iter=1, random_state=0, callbacks=[("probe", Probe())]
    ).fit(X, y)
    expected = min(resolved, _threads.machine_threads(resolved))
    assert dict(clf.net_.callbacks_)["probe"].seen == expected
    assert torch.get_num_threads() == before


def test_auto_does_not_wait_for_another_threads_setting(monkeypatch):
    """A fit with 'auto' whose thread count another thread holds runs under
    that setting (threaded fits stay concurrent); an int waits its turn."""
    before = torch.get_num_threads()
    # the holder must change the count (a call asking for the current count
    # takes no turn), and 'auto' must ask for another count than the holder's
    holding = 1 if before != 1 else 2
    if _threads.machine_threads(holding) == before:
        pytest.skip("needs a machine with two cores")
    monkeypatch.setattr(_threads, "auto_threads", lambda work, budget: before)
    X, y = _data()
    entered, release = threading.Event(), threading.Event()

    def hold():
        with _threads._torch_threads(holding):
            entered.set()
            release.wait(600)  # held until the fit below has ended

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert entered.wait(600)
        held = torch.get_num_threads()
        clf = RNNClassifier(
            hidden_size=3,
            max_iter=1,
            random_state=0,
            callbacks=[("probe", Probe())],
        )
        # 'auto' (another count) does not take the holder's turn
        clf.fit(X, y)
        assert dict(clf.net_.callbacks_)["probe"].seen == held
        assert torch.get_num_threads() == held
    finally:
        release.set()
        holder.join()
    assert torch.get_num_threads() == before


def test_invalid_n_threads_names_the_value():
    X, y = _data()
    with pytest.raises(ValueError, match="n_threads"):
        RNNClassifier(n_threads="many").fit(X, y)


def test_blas_pools_follow_the_fit_threads_and_are_restored(monkeypatch):
    """numpy's and scipy's BLAS pools run with the fit's thread count (an idle
    OpenBLAS worker spins, taking a core from the fit on a busy machine), are
    never raised, and are restored after the fit."""
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS library that threadpoolctl controls")
    monkeypatch.setattr(_threads, "auto_threads", lambda work, budget: 1)
    X, y = _data()
    probe = Probe()
    clf = RNNClassifier(
        hidden_size=3, max_iter=1, random_state=0, callbacks=[("probe", probe)]
    ).fit(X, y)
    assert dict(clf.net_.callbacks_)["probe"].blas == [1] * len(before)
    assert _blas_threads() == before
    # never raised above the process's own limit; n_threads=None: as is
    with threadpool_limits(limits=1, user_api="blas"):
        monkeypatch.setattr(_threads, "auto_threads", lambda work, budget: 2)
        clf.fit(X, y)
        assert dict(clf.net_.callbacks_)["probe"].blas == [1] * len(before)
    assert _blas_threads() == before
    clf.set_params(n_threads=None).fit(X, y)
    assert dict(clf.net_.callbacks_)["probe"].blas == before


def test_blas_limits_limit_each_pool_to_the_count_never_raising_one():
    """Each BLAS pool above the fit's count is limited to the count; one at
    or below it is left alone (the smallest pool's setting was applied to
    every pool: a pool at 3 threads fell to 1, not 2, beside one at 1)."""
    blas = ThreadpoolController().select(user_api="blas")
    files = [info["filepath"] for info in blas.info()]
    if len(files) < 2:
        pytest.skip("needs two BLAS libraries that threadpoolctl controls")

    def threads():
        now = {i["filepath"]: i["num_threads"] for i in blas.info()}
        return [now[f] for f in files[:2]]

    with (
        blas.select(filepath=files[0]).limit(limits=1),
        blas.select(filepath=files[1]).limit(limits=3),
    ):
        if threads() != [1, 3]:
            pytest.skip("the BLAS libraries do not take these thread counts")
        with _threads._blas_limits(2):
            assert threads() == [1, 2]
        assert threads() == [1, 3]
        with _threads._blas_limits(3):
            assert threads() == [1, 3]
