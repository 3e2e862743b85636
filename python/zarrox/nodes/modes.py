"""Open modes (``r``, ``r+``, ``a``, ``w``, ``w-``) and the ``zarr_format`` argument: checking
them, and clearing what a mode overwrites."""

from __future__ import annotations

import warnings
from typing import Literal

from zarrox.errors import (
    ContainsNodeError,
    ReadOnlyError,
)
from zarrox.storage import Store

Mode = Literal["r", "r+", "a", "w", "w-"]


_MODES = ("r", "r+", "a", "w", "w-")


def check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")


def zarr_format_arg(
    zarr_version: int | None, zarr_format: int | None, stacklevel: int = 3
) -> int | None:
    """``zarr_format``, or the deprecated ``zarr_version``, as zarr-python reads them."""
    if zarr_format is not None and zarr_version is not None and zarr_format != zarr_version:
        raise ValueError(
            f"zarr_format {zarr_format} does not match zarr_version {zarr_version}, "
            "please only set one"
        )
    if zarr_version is not None:
        warnings.warn("zarr_version is deprecated, use zarr_format", DeprecationWarning, stacklevel)
        return zarr_version
    return zarr_format


def apply_mode(store: Store, path: str, mode: str) -> None:
    """What zarr-python does to the store when it opens ``path`` in ``mode`` to write
    there: ``w`` empties it, ``w-`` refuses a path holding anything, ``r`` refuses to write."""
    check_mode(mode)
    prefix = f"{path}/" if path else ""
    if mode == "r":
        raise ReadOnlyError("store was opened in read-only mode and does not support writing")
    if mode == "w-" and store.list_prefix(prefix):
        raise ContainsNodeError(
            f"Cannot create '{path}' with mode 'w-' because it already contains data. "
            "Use mode 'w' to overwrite or 'a' to append."
        )
    if mode == "w":
        store.delete_prefix(prefix)
