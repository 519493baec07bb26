"""A given initial state (and ENRNN's given recurrent matrix) is moved to
the input's device and dtype, as the clocked modules do; the default zero
state is created there.

CUDA is not needed: the ``meta`` device stands for an accelerator (a CPU
state given with ``meta`` input failed with "Tensor on device cpu is not on
the expected device meta").
"""

import pytest
import torch

from sklmn.nn import ENRNN, LMN, LinearRNN

N, T, D = 3, 4, 2


def _linear():
    return LinearRNN(D, 3, num_layers=2), torch.zeros(2, N, 3)


def _lmn():
    return LMN(D, 3, 4), (None, torch.zeros(1, N, 4))


@pytest.mark.parametrize("make", [_linear, _lmn], ids=["linear", "lmn"])
def test_cpu_state_follows_input_to_another_device(make):
    module, state = make()
    module = module.to("meta")
    out, final = module(torch.empty(N, T, D, device="meta"), state=state)
    final = final[-1] if isinstance(final, tuple) else final
    assert out.device.type == "meta" and final.device.type == "meta"
    y, new = module.step(torch.empty(N, D, device="meta"), state)
    new = new[-1] if isinstance(new, tuple) else new
    assert y.device.type == "meta" and new.device.type == "meta"


def test_enrnn_step_moves_cpu_state_and_recurrent_matrix_to_the_input():
    rnn = ENRNN(D, 3, 2)
    W = rnn.recurrent_matrix().detach()  # evaluated on the CPU
    rnn = rnn.to("meta")  # its Cayley parametrization does not run on meta
    y, state = rnn.step(
        torch.empty(N, D, device="meta"), torch.zeros(N, 5), recurrent_matrix=W
    )
    assert y.device.type == "meta" and state.device.type == "meta"


@pytest.mark.parametrize(
    "module",
    [LinearRNN(D, 3), LMN(D, 3, 4), ENRNN(D, 3, 2)],
    ids=["linear", "lmn", "enrnn"],
)
def test_float64_input_gets_float64_states(module):
    module = module.double()
    x = torch.randn(N, T, D, dtype=torch.float64)
    out, final = module(x)  # default zero state: created as float64
    finals = final if isinstance(final, tuple) else (final,)
    assert out.dtype == torch.float64
    assert all(f.dtype == torch.float64 for f in finals)
    # a float32 zero state given with float64 input is converted
    given = tuple(torch.zeros_like(f, dtype=torch.float32) for f in finals)
    given = given if isinstance(final, tuple) else given[0]
    out2, _ = module(x, state=given)
    assert out2.dtype == torch.float64
    torch.testing.assert_close(out2, out, rtol=1e-5, atol=1e-6)
