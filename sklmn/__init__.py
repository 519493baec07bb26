"""sklmn: Linear Memory Networks and recurrent sequence models for scikit-learn."""

from ._version import __version__

__all__ = ["__version__"]
