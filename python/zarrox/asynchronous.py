"""The asynchronous API, with zarr-python's names (``zarrox.api.asynchronous``,
``zarrox.AsyncArray``, ``zarrox.AsyncGroup``).

Every awaitable runs the synchronous call it mirrors in a worker thread
(:func:`asyncio.to_thread`), so the event loop stays free while the Rust core reads, decodes,
encodes and writes (it releases the GIL for the whole batch). Many awaits in flight at once
(``asyncio.gather``) run concurrently, each on its own thread, each parallel inside.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any

from zarrox import api as _api
from zarrox import hierarchy as _hierarchy
from zarrox.array import AsyncArray
from zarrox.async_node import run as _run
from zarrox.group import AsyncGroup, wrap


def _awaitable(func: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The coroutine function of the synchronous ``func``: same arguments, run in a thread,
    arrays and groups returned as AsyncArray / AsyncGroup."""

    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return wrap(await _run(func, *args, **kwargs))

    return run


# -- module-level functions (zarr.api.asynchronous) -----------------------------------------------

array = _awaitable(_api.array)
consolidate_metadata = _awaitable(_api.consolidate_metadata)
create = _awaitable(_api.create)
create_array = _awaitable(_api.create_array)
create_group = _awaitable(_api.create_group)
empty = _awaitable(_api.empty)
empty_like = _awaitable(_api.empty_like)
from_array = _awaitable(_api.from_array)
full = _awaitable(_api.full)
full_like = _awaitable(_api.full_like)
group = _awaitable(_api.group)
load = _awaitable(_api.load)
ones = _awaitable(_api.ones)
ones_like = _awaitable(_api.ones_like)
open = _awaitable(_api.open)  # noqa: A001 - zarr-python's name
open_array = _awaitable(_api.open_array)
open_consolidated = _awaitable(_api.open_consolidated)
open_group = _awaitable(_api.open_group)
open_like = _awaitable(_api.open_like)
save = _awaitable(_api.save)
save_array = _awaitable(_api.save_array)
save_group = _awaitable(_api.save_group)
tree = _awaitable(_api.tree)
zeros = _awaitable(_api.zeros)
zeros_like = _awaitable(_api.zeros_like)
copy = _awaitable(_hierarchy.copy)
copy_all = _awaitable(_hierarchy.copy_all)
copy_store = _awaitable(_hierarchy.copy_store)


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
