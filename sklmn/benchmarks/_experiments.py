"""Imports every experiment module so that they register themselves."""

from . import _exp_laes  # noqa: F401
