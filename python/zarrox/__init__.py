"""zarrox: Zarr arrays for Python, with a parallel Rust core."""

from zarrox import errors
from zarrox._core import __version__, get_num_threads, set_num_threads
from zarrox.api import (
    consolidate_metadata,
    create_array,
    create_group,
    open,
    open_array,
    open_consolidated,
    open_group,
)
from zarrox.array import Array
from zarrox.config import config
from zarrox.convert import convert
from zarrox.group import Group
from zarrox.storage import LocalStore, MemoryStore, Store

__all__ = [
    "Array",
    "Group",
    "LocalStore",
    "MemoryStore",
    "Store",
    "__version__",
    "config",
    "consolidate_metadata",
    "convert",
    "errors",
    "create_array",
    "create_group",
    "get_num_threads",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "set_num_threads",
]


def __getattr__(name: str) -> object:
    # The zarr-python codec pipeline imports zarr; load it only when asked for.
    if name == "ZarroxCodecPipeline":
        from zarrox.pipeline import ZarroxCodecPipeline

        return ZarroxCodecPipeline
    raise AttributeError(f"module 'zarrox' has no attribute {name!r}")
