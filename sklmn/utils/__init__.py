"""Utilities shared by sklmn estimators (input contract, validation)."""

from . import sequences
from .sequences import (  # noqa: F401 - exported via the computed __all__
    Sequences,
    check_sequences,
    format_like_input,
    from_channels_first,
    lengths_to_mask,
    pad_sequences,
    to_channels_first,
    unpad_sequences,
    validate_sequences,
)

# the public names of :mod:`sklmn.utils.sequences` imported above, in its order
__all__ = [name for name in sequences.__all__ if name in globals()]
