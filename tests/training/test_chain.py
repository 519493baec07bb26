"""The callback chain of the estimators (``sklmn/_training/_chain.py``) and
the custom events of the training net (``send_event``,
:class:`sklmn.callbacks.SequenceCallback`)."""

import pytest
import torch
from skorch.callbacks import Callback

from sklmn._training import ConvergenceMonitor, SequenceDataset, SequenceNet
from sklmn._training._chain import callback_chain, make_estimator_net
from sklmn.callbacks import RestoreOnDivergence, SequenceCallback
from sklmn.nn import LMN
from tests._helpers import _lmn_clf, _ragged, _sequence_targets


def _names(chain):
    return [
        entry[0] if isinstance(entry, tuple) else type(entry).__name__
        for entry in chain
    ]


def test_chain_order_with_stopping_rule():
    user = ("mine", Callback())
    chain = callback_chain(
        problem="multiclass",
        per_step=False,
        validation=True,
        gradient_clipping=1.0,
        model_callbacks=[("start", Callback())],
        user_callbacks=[user],
        verbose=True,
        plugin_callbacks=[("growth", Callback())],
        stopping=ConvergenceMonitor(1e-4, 10),
    )
    assert _names(chain) == [
        "valid_score",
        "gradient_clipping",
        "start",
        "mine",
        "progress",
        "restore_on_divergence",
        "growth",
        "convergence",
    ]
    # the user's callbacks are copied
    assert dict(chain)["mine"] is not user[1]


def test_chain_without_stopping_rule_has_no_guard_and_no_plugins():
    chain = callback_chain(
        problem="continuous",
        per_step=False,
        validation=False,
        gradient_clipping=None,
        plugin_callbacks=[("growth", Callback())],
    )
    assert chain == []


def test_chain_keeps_the_users_divergence_guard():
    chain = callback_chain(
        problem="continuous",
        per_step=False,
        validation=False,
        gradient_clipping=None,
        user_callbacks=[RestoreOnDivergence("last")],
        stopping=ConvergenceMonitor(1e-4, 10),
    )
    guards = [cb for cb in chain if isinstance(cb, RestoreOnDivergence)]
    assert len(guards) == 1 and guards[0].restore == "last"
    assert "restore_on_divergence" not in _names(chain)


class _Answer(SequenceCallback):
    def __init__(self, epoch):
        self.epoch = epoch

    def restore_best(self, net):
        return self.epoch


class _Restarts(Callback):  # not a SequenceCallback: found by its method
    def initialize(self):
        self.count_ = 0
        return self

    def restart(self, net):
        self.count_ += 1


def _net(callbacks):
    module = SequenceNet(LMN(2, 3, 3), 1)
    net = make_estimator_net(
        module,
        callbacks,
        problem="continuous",
        per_step=False,
        optimizer="adam",
        lr=1e-3,
        alpha=1e-4,
        max_iter=1,
        batch_size=4,
    )
    return net.initialize()


def test_send_event_skips_the_no_op_defaults():
    # a SequenceCallback that does not implement restore_best does not answer
    net = _net([("a", _Answer(3)), ("b", SequenceCallback()), ("c", _Restarts())])
    assert net.send_event("restore_best") == [3]
    assert net.restore_best_weights() == 3
    net.restart_monitoring()
    assert dict(net.callbacks_)["c"].count_ == 1


def test_restore_best_weights_without_an_answer_is_none():
    net = _net([("b", SequenceCallback())])
    assert net.restore_best_weights() is None


def test_divergence_is_sent_before_raising():
    seen = []

    class _Seen(SequenceCallback):
        def on_divergence(self, net, message):
            seen.append(message)

    net = _net([("seen", _Seen())])
    with pytest.raises(FloatingPointError, match="boom"):
        net.diverged("boom")
    assert seen == ["boom"] and net.divergence_ == "boom"


def test_estimator_net_scales_the_weight_decay():
    net = _net([])
    data = SequenceDataset(torch.randn(4, 3, 2), torch.full((4,), 3), torch.randn(4, 1))
    net.partial_fit(data)
    decays = sorted({g["weight_decay"] for g in net.optimizer_.param_groups})
    assert decays == [0.0, pytest.approx(1e-4 / 4)]


@pytest.mark.parametrize(
    "name", ["convergence", "restore_on_divergence", "valid_score", "progress", "start"]
)
def test_user_callback_named_like_an_own_one_is_refused_by_name(name):
    # skorch would only say "duplicate user-set callback name"
    with pytest.raises(ValueError, match=f"the name '{name}' is taken"):
        callback_chain(
            problem="multiclass",
            per_step=False,
            validation=True,
            gradient_clipping=1.0,
            model_callbacks=[("start", Callback())],
            user_callbacks=[(name, Callback())],
            verbose=True,
            stopping=ConvergenceMonitor(1e-4, 10),
        )


def test_user_divergence_guard_may_take_the_default_guards_name():
    # the default guard is only added without one of the user's
    chain = callback_chain(
        problem="multiclass",
        per_step=False,
        validation=False,
        gradient_clipping=None,
        user_callbacks=[("restore_on_divergence", RestoreOnDivergence("last"))],
        stopping=ConvergenceMonitor(1e-4, 10),
    )
    assert _names(chain) == ["restore_on_divergence", "convergence"]


@pytest.mark.parametrize(
    "entry",
    ["timer", 1, ("timer",), ("timer", 1), (1, Callback()), ("a", Callback(), 2)],
)
def test_an_entry_that_is_no_callback_is_refused_naming_it(entry):
    # skorch failed with "'str' object has no attribute 'set_params'" (or an
    # unpacking error)
    seqs = _ragged(n=12)
    est = _lmn_clf(max_iter=1, callbacks=[Callback(), entry])
    with pytest.raises(TypeError, match=r"callbacks\[1\] must be a skorch callback"):
        est.fit(seqs, _sequence_targets(seqs, "binary"))


def test_a_name_callback_list_is_a_named_pair():
    # skorch reads ['name', callback] as a pair: the chain did not, so the
    # name check and the user's divergence guard were missed
    guard = RestoreOnDivergence("last")
    chain = callback_chain(
        problem="multiclass",
        per_step=False,
        validation=False,
        gradient_clipping=None,
        user_callbacks=[["guard", guard], ["timer", Callback]],
        stopping=ConvergenceMonitor(1e-4, 10),
    )
    assert _names(chain) == ["guard", "timer", "convergence"]
    assert chain[0][1] is not guard and chain[0][1].restore == "last"
    with pytest.raises(ValueError, match="the name 'convergence' is taken"):
        callback_chain(
            problem="multiclass",
            per_step=False,
            validation=False,
            gradient_clipping=None,
            user_callbacks=[["convergence", Callback()]],
            stopping=ConvergenceMonitor(1e-4, 10),
        )
