"""The CUDA-graph replay of the LMN time loop (sklmn.nn.set_cuda_graphs).

The replay must give what the eager loop gives, call after call (the first
call of a shape runs eagerly, the second captures, later ones replay), for
ragged batches and the truncated gradient too. The GPU tests skip on a
machine without CUDA; the switch itself is tested everywhere.
"""

import pytest
import torch

from sklmn.nn import LMN, _scan, set_cuda_graphs

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.fixture
def graphs_on():
    previous = set_cuda_graphs(True)
    yield
    set_cuda_graphs(previous)


def test_switch_returns_previous_setting_and_validates():
    previous = set_cuda_graphs(False)
    try:
        assert set_cuda_graphs(True) is False
        assert set_cuda_graphs(False) is True
        with pytest.raises(TypeError, match="enabled must be a bool, got 1"):
            set_cuda_graphs(1)
    finally:
        set_cuda_graphs(previous)


def test_cpu_never_uses_graphs(graphs_on):
    key = (torch.device("cpu"), torch.float32, 3, 2, 4, 4, None)
    for _ in range(3):
        assert _scan._cuda_graph("forward", key, None, None) is None


class _FakeSteps(_scan._GraphedSteps):
    """The buffers of a captured loop without a GPU (no capture, no replay)."""

    def __init__(self, fn, tensors, static):
        self.buffers = {k: v.detach().clone() for k, v in tensors.items()}
        self.lock = None
        self.graph = None

    def run(self, **inputs):
        for name, value in inputs.items():
            self.buffers[name].copy_(value)


def test_graph_captured_in_inference_mode_is_not_reused_outside(monkeypatch):
    """A loop captured under torch.inference_mode holds inference buffers,
    which cannot be written outside it: training after two inference calls
    of the same shape gets a graph of its own."""
    monkeypatch.setattr(_scan, "_GraphedSteps", _FakeSteps)
    monkeypatch.setattr(_scan, "_GRAPHS", _scan.OrderedDict())
    monkeypatch.setattr(_scan, "_SEEN", _scan.OrderedDict())
    monkeypatch.setattr(_scan, "_GRAPHS_ENABLED", True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    key = (torch.device("cuda"), torch.float32, 3, 2, 4, 4, None)

    def tensors():
        return {"Z": torch.zeros(3, 2, 8)}

    with torch.inference_mode():
        assert _scan._cuda_graph("forward", key, None, tensors) is None  # eager
        steps = _scan._cuda_graph("forward", key, None, tensors)  # capture
        assert steps.buffers["Z"].is_inference()
    for _ in range(2):  # eager, then a capture outside inference mode
        other = _scan._cuda_graph("forward", key, None, tensors)
        if other is not None:
            assert not other.buffers["Z"].is_inference()
            other.run(Z=torch.ones(3, 2, 8))
    assert other is not None and other is not steps
    with torch.inference_mode():  # the inference graph is kept for inference
        assert _scan._cuda_graph("forward", key, None, tensors) is steps


def _run(lengths, truncate, seed):
    """Outputs and gradients of one LMN forward + backward on the GPU."""
    torch.manual_seed(0)
    net = LMN(3, 8, 6, truncate_gradient=truncate).cuda()
    gen = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(5, 7, 3, generator=gen).cuda().requires_grad_(True)
    out, (h, m) = net(x, lengths=lengths)
    loss = (out * torch.linspace(-1, 1, out.shape[-1], device="cuda")).sum()
    loss = loss + m.pow(2).sum()
    loss.backward()
    grads = [p.grad.clone() for p in net.parameters()]
    return [out.detach(), m.detach(), x.grad.clone(), *grads]


@cuda
@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("truncate", [False, True])
def test_replay_matches_eager_call_after_call(graphs_on, ragged, truncate):
    lengths = torch.tensor([7, 3, 5, 7, 1]) if ragged else None
    set_cuda_graphs(False)
    eager = [_run(lengths, truncate, seed) for seed in range(4)]
    set_cuda_graphs(True)
    # call 1 eager, call 2 captures, calls 3-4 replay, each on new data
    graphed = [_run(lengths, truncate, seed) for seed in range(4)]
    for want, got in zip(eager, graphed, strict=True):
        for a, b in zip(want, got, strict=True):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


@cuda
def test_two_forwards_before_one_backward(graphs_on):
    """Outputs of a replay are copies: a second run of the same graph before
    the backward (both directions of a layer, two heads) leaves the first
    run's saved tensors intact."""
    torch.manual_seed(0)
    net = LMN(2, 4, 4).cuda()
    xs = [torch.randn(3, 5, 2, device="cuda") for _ in range(4)]

    def loss_of_pair(a, b):
        return net(a)[0].pow(2).sum() + 2 * net(b)[0].pow(2).sum()

    set_cuda_graphs(False)
    net.zero_grad()
    loss_of_pair(xs[2], xs[3]).backward()
    want = [p.grad.clone() for p in net.parameters()]
    set_cuda_graphs(True)
    loss_of_pair(xs[0], xs[1])  # first and second call of the shape: capture
    net.zero_grad()
    loss_of_pair(xs[2], xs[3]).backward()  # replays
    for p, w in zip(net.parameters(), want, strict=True):
        torch.testing.assert_close(p.grad, w, rtol=1e-5, atol=1e-6)


def _forward_backward(net, x):
    """Output, input gradient and parameter gradients of one forward and
    backward (a fixed weighting of the outputs as the loss)."""
    x = x.clone().requires_grad_(True)
    out = net(x)[0]
    weights = torch.linspace(-1, 1, out.shape[-1], device=out.device)
    (out * weights).sum().backward()
    grads = [p.grad.detach().cpu() for p in net.parameters() if p.grad is not None]
    return [out.detach().cpu(), x.grad.detach().cpu(), *grads]


@cuda
@pytest.mark.parametrize("multiscale", [False, True])
def test_schur_memory_on_gpu_matches_cpu(graphs_on, multiscale):
    """The Schur memory (dense W_mm built from its blocks each forward) gives
    on the GPU, replayed or not, what its CPU copy gives."""
    from sklmn.nn import MultiScaleLMN

    torch.manual_seed(0)
    if multiscale:
        net = MultiScaleLMN(3, 8, 3, 2, memory_matrix="schur", bidirectional=True)
    else:
        net = LMN(3, 8, 6, memory_matrix="schur", ring=(0.5, 0.999, 3.14))
    x = torch.randn(5, 9, 3)
    expected = _forward_backward(net, x)
    net.zero_grad(set_to_none=True)
    net.cuda()
    for _ in range(3):  # eager, capture, replay
        net.zero_grad(set_to_none=True)
        got = _forward_backward(net, x.cuda())
        assert len(got) == len(expected)
        for a, b in zip(got, expected, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@cuda
def test_training_after_inference_mode_calls(graphs_on):
    """Two forward passes of a shape under torch.inference_mode (the second
    captures a graph) do not break training on that shape."""
    torch.manual_seed(0)
    net = LMN(2, 4, 4).cuda()
    x = torch.randn(3, 5, 2, device="cuda")
    with torch.inference_mode():
        for _ in range(2):
            want = net(x)[0].clone()
    for _ in range(3):  # eager, capture, replay
        net.zero_grad()
        out = net(x)[0]
        out.pow(2).sum().backward()
        torch.testing.assert_close(out.detach(), want, rtol=1e-5, atol=1e-6)
        assert all(torch.isfinite(p.grad).all() for p in net.parameters())
