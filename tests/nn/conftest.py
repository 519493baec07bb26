"""Fixtures shared by the module tests."""

import pytest
import torch
from threadpoolctl import threadpool_limits


@pytest.fixture
def one_thread():
    """The small training loops run fastest on one thread (torch and BLAS),
    and do not oversubscribe a shared machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        yield
    torch.set_num_threads(before)
