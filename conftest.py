"""Test-session configuration shared by tests/ and the doctests in sklmn/."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

# Two cores, and pytest-xdist may run two workers: one intra-op thread each
# keeps them from oversubscribing the machine.
if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
    doctest_namespace["torch"] = torch
