"""Checks of JSON values that every metadata format (v1, v2, draft and final v3, codecs,
data types) shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from zarrox.errors import MetadataError


def is_int(value: object) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def int_tuple(value: object, label: str, where: str, *, positive: bool) -> tuple[int, ...]:
    """``value``, a JSON array of integers >= 1 (``positive``) or >= 0, as a tuple; a
    MetadataError naming ``where`` and ``label`` otherwise."""
    lowest = 1 if positive else 0
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(is_int(v) and v >= lowest for v in value)
    ):
        kind = "positive" if positive else "non-negative"
        raise MetadataError(f"{where}{label}: must be an array of {kind} integers, got {value!r}")
    return tuple(int(v) for v in value)
