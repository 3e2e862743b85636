"""The asynchronous API, with zarr-python's names (``zarrox.api.asynchronous``,
``zarrox.AsyncArray``, ``zarrox.AsyncGroup``).

Reads and writes of array data (``AsyncArray``'s getitem, setitem and selections,
:func:`load` and :func:`array` here) are awaitables that the Rust engine completes, with no
Python thread per await: an object store's requests run on the engine's I/O runtime, decoding
and encoding on its worker pool, and cancelling the awaiting task cancels the requests not yet
answered; a store that answers at once (local files, memory, zip) is read by one job on the
worker pool. Thousands of awaits in flight at once (``asyncio.gather``) are fine.

Opening and creating nodes, listings and attributes on object stores and references run the
synchronous call they mirror on the event loop, each request awaited through the engine
(:mod:`zarrox.storage.replay`). The rest (the same on local files, memory and zip archives,
copies, saving arrays, and stores served from Python) runs the synchronous call in a worker
thread (:func:`asyncio.to_thread`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any

from zarrox import api as _api
from zarrox import hierarchy as _hierarchy
from zarrox.array import Array, AsyncArray
from zarrox.async_node import run as _run
from zarrox.async_node import run_metadata as _run_metadata
from zarrox.group import AsyncGroup, wrap


def _awaitable(func: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The coroutine function of the synchronous ``func``: same arguments, run in a thread,
    arrays and groups returned as AsyncArray / AsyncGroup."""

    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return wrap(await _run(func, *args, **kwargs))

    return run


def _metadata(func: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The coroutine function of the synchronous ``func``, which opens, creates or lists
    nodes: on the event loop with its requests awaited through the engine where its
    ``store`` is an object store or references (:func:`zarrox.async_node.run_metadata`);
    arrays and groups returned as AsyncArray / AsyncGroup."""
    import inspect

    signature = inspect.signature(func)

    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind_partial(*args, **kwargs).arguments
        except TypeError:  # the call raises it, as the synchronous one does
            bound = {}
        store = bound.get("store", kwargs.get("store"))
        return wrap(await _run_metadata(store, func, *args, **kwargs))

    return run


# -- module-level functions (zarr.api.asynchronous) -----------------------------------------------

consolidate_metadata = _metadata(_api.consolidate_metadata)
create = _metadata(_api.create)
create_array = _metadata(_api.create_array)
create_group = _metadata(_api.create_group)
empty = _metadata(_api.empty)
empty_like = _awaitable(_api.empty_like)
from_array = _awaitable(_api.from_array)
full = _metadata(_api.full)
full_like = _awaitable(_api.full_like)
group = _metadata(_api.group)
ones = _metadata(_api.ones)
ones_like = _awaitable(_api.ones_like)
open = _metadata(_api.open)  # noqa: A001 - zarr-python's name
open_array = _metadata(_api.open_array)
open_consolidated = _metadata(_api.open_consolidated)
open_group = _metadata(_api.open_group)
open_like = _awaitable(_api.open_like)
save = _awaitable(_api.save)
save_array = _awaitable(_api.save_array)
save_group = _awaitable(_api.save_group)
tree = _metadata(_api.tree)
zeros = _metadata(_api.zeros)
zeros_like = _awaitable(_api.zeros_like)
copy = _awaitable(_hierarchy.copy)
copy_all = _awaitable(_hierarchy.copy_all)
copy_store = _awaitable(_hierarchy.copy_store)


async def array(data: Any, **kwargs: Any) -> AsyncArray:
    """:func:`zarrox.array`: created on a worker thread, ``data`` written through an
    awaitable the engine completes."""
    created, data = await _run(_api._array_for, data, **kwargs)
    new = AsyncArray(created)
    await new.setitem(Ellipsis, data)
    return new


async def load(
    store: Any,
    path: str | None = None,
    zarr_format: int | None = None,
    zarr_version: int | None = None,
) -> Any:
    """:func:`zarrox.load`: the node opened on a worker thread, an array's data read through
    an awaitable the engine completes (a group: :class:`zarrox.api.LazyLoader`, which reads
    each array when looked up)."""
    node = await _run(_api._load_node, store, path, zarr_format, zarr_version)
    if isinstance(node, Array):
        return await AsyncArray(node).getitem(Ellipsis)
    return _api.LazyLoader(node)


async def create_hierarchy(
    *, store: Any, nodes: Mapping[str, Any], overwrite: bool = False
) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
    """:func:`zarrox.create_hierarchy`, yielding AsyncArray / AsyncGroup."""
    created = await _run(
        lambda: list(_hierarchy.create_hierarchy(store=store, nodes=nodes, overwrite=overwrite))
    )
    for path, node in created:
        yield path, wrap(node)


__all__ = [
    "AsyncArray",
    "AsyncGroup",
    "array",
    "consolidate_metadata",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "create_hierarchy",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
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
    "tree",
    "zeros",
    "zeros_like",
]
