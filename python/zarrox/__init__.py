"""zarrox: Zarr arrays for Python, with a parallel Rust core."""

from zarrox import errors
from zarrox._core import __version__, get_num_threads, set_num_threads
from zarrox.api import (
    array,
    consolidate_metadata,
    create,
    create_array,
    create_group,
    empty,
    empty_like,
    full,
    full_like,
    group,
    load,
    ones,
    ones_like,
    open,
    open_array,
    open_consolidated,
    open_group,
    open_like,
    save,
    save_array,
    save_group,
    tree,
    zeros,
    zeros_like,
)
from zarrox.array import Array
from zarrox.config import config
from zarrox.convert import convert
from zarrox.group import Group
from zarrox.storage import LocalStore, MemoryStore, Store
from zarrox.tensorstore_spec import ArrayView, Spec, d

__all__ = [
    "Array",
    "ArrayView",
    "Group",
    "LocalStore",
    "MemoryStore",
    "Spec",
    "Store",
    "__version__",
    "array",
    "config",
    "consolidate_metadata",
    "convert",
    "create",
    "create_array",
    "create_group",
    "d",
    "empty",
    "empty_like",
    "errors",
    "full",
    "full_like",
    "get_num_threads",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "save",
    "save_array",
    "save_group",
    "set_num_threads",
    "tree",
    "zeros",
    "zeros_like",
]


def __getattr__(name: str) -> object:
    # The zarr-python codec pipeline imports zarr; load it only when asked for.
    if name == "ZarroxCodecPipeline":
        from zarrox.pipeline import ZarroxCodecPipeline

        return ZarroxCodecPipeline
    raise AttributeError(f"module 'zarrox' has no attribute {name!r}")
