"""What the time-series suite records for one fit, checked against
independent re-computations on tiny in-memory data (no wheels needed)."""

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
from skorch.callbacks import Callback

from sklmn.benchmarks._timeseries import SuiteDataset, probes, run_timeseries_suite
from sklmn.benchmarks._timeseries import runner as suite
from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier
from sklmn.pretraining import IncrementalTraining


def _toy():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 6, 1)
    y = np.where(X[:, -1, 0] > 0, "up", "down")
    return X[:28], X[28:], y[:28], y[28:]


class _FirstEpoch(Callback):
    """A copy of the network when the first epoch begins (after every
    callback's ``on_train_begin``)."""

    def on_train_begin(self, net, **kwargs):
        self.module_ = None

    def on_epoch_begin(self, net, **kwargs):
        if self.module_ is None:
            self.module_ = copy.deepcopy(net.module_)


TOY = {"toy": SuiteDataset("classification", _toy)}


def _run(tmp_path, registry, **kwargs):
    return run_timeseries_suite(
        seeds=[0], jobs=1, output_dir=tmp_path, dataset_registry=TOY,
        model_registry=registry, log=lambda msg: None, **kwargs,
    )  # fmt: skip


def test_start_score_of_a_network_that_grows_during_training(tmp_path):
    # the start was restored as a state dict into the grown network, which
    # failed: the record kept status 'ok' with an error, and lost n_iter,
    # n_spikes, the radii and the warnings
    def grow(seed, info):
        return MultiScaleLMNClassifier(
            hidden_size=4, memory_size=2, n_modules=2, pooling="last",
            incremental=IncrementalTraining(epochs_per_module=1),
            max_iter=3, random_state=seed,
        )  # fmt: skip

    (record,) = _run(tmp_path, {"grow": {"classification": grow}})
    assert record["status"] == "ok" and record["error"] is None, record["error"]
    assert record["n_iter"] == 3 and record["n_spikes"] is not None
    assert len(record["radii"]) == 4  # the start and every epoch
    # independently: the same fit, its network before the first epoch
    X_train, X_test, y_train, y_test = _toy()
    est = grow(0, None).set_params(callbacks=[("first", _FirstEpoch())])
    est.fit(X_train, y_train)
    assert est.net_.module_.recurrent.n_modules == 2  # it grew
    assert abs(record["score"] - np.mean(est.predict(X_test) == y_test)) < 1e-12
    first = dict(est.net_.callbacks_)["first"].module_
    assert first.recurrent.n_modules == 1
    start = copy.deepcopy(est)
    start.net_.module_ = first
    start_score = np.mean(start.predict(X_test) == y_test)
    assert abs(record["start_score"] - start_score) < 1e-12


def test_a_failing_probe_keeps_the_fit_record(tmp_path, monkeypatch):
    def boom(*args):
        raise RuntimeError("probe boom")

    monkeypatch.setattr(suite, "_start_score", boom)
    registry = {"lmn": {"classification": lambda seed, info: LMNClassifier(
        hidden_size=4, memory_size=4, max_iter=2, random_state=seed)}}  # fmt: skip
    (record,) = _run(tmp_path, registry)
    assert record["status"] == "ok" and record["error"] is None
    assert record["n_iter"] == 2 and record["n_spikes"] is not None
    assert record["start_score"] is None
    warned = record["warnings"]
    assert any("probe failed: RuntimeError: probe boom" in w for w in warned)


class _Clock:
    """A fake ``time`` module whose clock moves only when told to."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_fit_seconds_leave_out_the_probes(tmp_path, monkeypatch):
    # fit_seconds counted the suite's own probes (a copy of the start and
    # the radii after every epoch) as the model's fitting time
    clock = _Clock()

    def slow_radii(module, n_random=8, seed=0):
        clock.now += 10.0  # every radius measurement "takes" 10 s
        return None

    monkeypatch.setattr(suite, "time", clock)
    monkeypatch.setattr(probes, "time", clock)
    monkeypatch.setattr(probes, "map_radii", slow_radii)
    registry = {"lmn": {"classification": lambda seed, info: LMNClassifier(
        hidden_size=4, memory_size=4, max_iter=2, random_state=seed)}}  # fmt: skip
    (record,) = _run(tmp_path, registry)
    assert record["status"] == "ok" and record["n_iter"] == 2
    assert clock.now == 30.0  # the start and two epochs were measured
    assert abs(record["fit_seconds"]) < 1e-9


def test_the_first_fit_of_a_process_imports_nothing_heavy():
    # the first optimizer of a process imports torch._dynamo (and sympy):
    # counted as fitting time by the first fit of every worker
    code = """
import sys
import numpy as np
from sklmn.benchmarks._timeseries import runner
from sklmn.estimators import LMNClassifier
X = np.random.RandomState(0).randn(12, 4, 1)
y = np.where(X[:, 0, 0] > 0, "a", "b")
runner._warm_up()
before = set(sys.modules)
LMNClassifier(hidden_size=4, memory_size=4, max_iter=1, random_state=0).fit(X, y)
new = set(sys.modules) - before
print(sorted(m for m in new if m.startswith(("torch._dynamo", "sympy"))))
"""
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True, text=True, timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
