"""zarrox: Zarr arrays for Python, with a parallel Rust core.

``import zarrox`` loads numpy and the core, nothing else until it is used: the TensorStore
layer (``zarrox.Spec``, ``zarrox.ArrayView``, ``zarrox.d``) and the zarr-python codec
pipeline (``zarrox.ZarroxCodecPipeline``) are imported when first named; zarr-python, xarray,
dask, rich and asyncio when a function needs them.
"""

import sys as _sys
import typing as _typing

from zarrox import (
    api,
    codecs,
    dask,  # noqa: F401 - zarrox.dask without importing it by name, as before
    errors,
)
from zarrox._core import __version__, get_num_threads, set_num_threads
from zarrox.api import (
    array,
    asynchronous,
    consolidate_metadata,
    create,
    create_array,
    create_group,
    empty,
    empty_like,
    from_array,
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
from zarrox.api.asynchronous import AsyncArray, AsyncGroup
from zarrox.array import Array
from zarrox.batching import Batch, batch, read_many
from zarrox.config import config
from zarrox.convert import convert
from zarrox.group import Group
from zarrox.hierarchy import copy, copy_all, copy_store, create_hierarchy
from zarrox.storage import LocalStore, MemoryStore, Store
from zarrox.transactions import Transaction, transaction

# zarr-python's module layout: zarrox.api.synchronous is zarrox.api, and the awaitable API
# zarrox.api.asynchronous, also named zarrox.asynchronous (import zarrox.asynchronous works).
api.synchronous = api  # type: ignore[attr-defined]
_sys.modules.setdefault("zarrox.api.synchronous", api)
_sys.modules.setdefault("zarrox.asynchronous", asynchronous)

__all__ = [
    "Array",
    "ArrayView",
    "AsyncArray",
    "AsyncGroup",
    "Batch",
    "Group",
    "LocalStore",
    "MemoryStore",
    "Spec",
    "Store",
    "Transaction",
    "__version__",
    "api",
    "array",
    "batch",
    "codecs",
    "config",
    "consolidate_metadata",
    "convert",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "d",
    "create_hierarchy",
    "empty",
    "empty_like",
    "errors",
    "from_array",
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
    "read_many",
    "save",
    "save_array",
    "save_group",
    "set_num_threads",
    "transaction",
    "tree",
    "zeros",
    "zeros_like",
]


#: the names imported when first asked for: name -> (its module, its name there; None: the
#: module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "ArrayView": ("zarrox.tensorstore_spec", "ArrayView"),
    "Spec": ("zarrox.tensorstore_spec", "Spec"),
    "d": ("zarrox.tensorstore_spec", "d"),
    "tensorstore_spec": ("zarrox.tensorstore_spec", None),
    # the zarr-python codec pipeline imports zarr-python
    "ZarroxCodecPipeline": ("zarrox.pipeline", "ZarroxCodecPipeline"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'zarrox' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    found = importlib.import_module(module)
    value = found if attribute is None else getattr(found, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


if _typing.TYPE_CHECKING:
    from zarrox import tensorstore_spec as tensorstore_spec
    from zarrox.pipeline import ZarroxCodecPipeline as ZarroxCodecPipeline
    from zarrox.tensorstore_spec import ArrayView, Spec, d
