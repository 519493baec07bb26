"""Utilities shared by sklmn estimators (input contract, validation)."""

from .sequences import (
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

__all__ = [
    "Sequences",
    "check_sequences",
    "validate_sequences",
    "pad_sequences",
    "unpad_sequences",
    "lengths_to_mask",
    "format_like_input",
    "to_channels_first",
    "from_channels_first",
]
