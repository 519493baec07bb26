"""Offline datasets and generators of the papers' tasks."""

from ._digits import load_sequential_digits
from ._synthetic import make_adding_problem, make_copy_task

__all__ = ["make_copy_task", "make_adding_problem", "load_sequential_digits"]
