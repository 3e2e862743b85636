"""The asynchronous API, with zarr-python's names (``zarrox.api.asynchronous``,
``zarrox.AsyncArray``, ``zarrox.AsyncGroup``).

Every awaitable runs the synchronous call it mirrors in a worker thread
(:func:`asyncio.to_thread`), so the event loop stays free while the Rust core reads, decodes,
encodes and writes (it releases the GIL for the whole batch). Many awaits in flight at once
(``asyncio.gather``) run concurrently, each on its own thread, each parallel inside.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any, TypeVar

from zarrox import api as _api
from zarrox import hierarchy as _hierarchy
from zarrox.array import Array, register_view
from zarrox.group import Group

T = TypeVar("T")


def _wrap(value: Any) -> Any:
    """Arrays and groups as their asynchronous counterparts; anything else as it is."""
    if isinstance(value, Array):
        return AsyncArray(value)
    if isinstance(value, Group):
        return AsyncGroup(value)
    return value


def _unwrap(value: Any) -> Any:
    if isinstance(value, AsyncArray | AsyncGroup):
        return value._sync
    return value


async def _run(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    args = tuple(_unwrap(a) for a in args)
    kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
    return await asyncio.to_thread(func, *args, **kwargs)


def _awaitable(func: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The coroutine function of the synchronous ``func``: same arguments, run in a thread,
    arrays and groups returned as AsyncArray / AsyncGroup."""

    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return _wrap(await _run(func, *args, **kwargs))

    return run


class _AsyncIndex:
    """``async_array.oindex`` / ``.vindex``: awaitable ``getitem`` and ``setitem``."""

    def __init__(self, index: Any) -> None:
        self._index = index

    async def getitem(self, selection: Any) -> Any:
        return await asyncio.to_thread(self._index.__getitem__, selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        await asyncio.to_thread(self._index.__setitem__, selection, value)


class _AsyncNode:
    """An asynchronous view of a node: the properties that describe it are the synchronous
    node's (no I/O); the methods that do I/O are the subclass's coroutines."""

    _kind: type[Array] | type[Group]

    def __init__(self, node: Any) -> None:
        if not isinstance(node, self._kind):
            raise TypeError(
                f"{type(self).__name__} wraps a zarrox.{self._kind.__name__}, "
                f"got {type(node).__name__}"
            )
        self._sync = node

    @property
    def sync(self) -> Any:
        """The synchronous :class:`zarrox.Array` / :class:`zarrox.Group` of the same node."""
        return self._sync

    def __getattr__(self, name: str) -> Any:
        # shape, dtype, chunks, attrs, metadata, path, name, store, store_path, read_only,
        # compressors, info, ...: whatever describes the node
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._sync, name)
        if callable(value):
            raise AttributeError(
                f"{type(self).__name__!r} has no method {name!r}; use its awaitable methods "
                f"or the synchronous zarrox.{self._kind.__name__} (.sync)"
            )
        return value


class AsyncArray(_AsyncNode):
    """An array whose reads, writes and metadata changes are awaited (zarr-python's
    ``AsyncArray``). Wraps a :class:`zarrox.Array` (``AsyncArray(array)``); the properties
    describing the array are the same."""

    _kind = Array
    _sync: Array

    # -- opening and creating ------------------------------------------------------------
    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = None, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(_api.open_array, store, zarr_format=zarr_format, **kwargs))

    @classmethod
    async def create(cls, store: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(_api.create_array, store, **kwargs))

    def __repr__(self) -> str:
        return f"<zarrox.AsyncArray {self._sync.store_path} shape={self.shape} dtype={self.dtype}>"

    @property
    def oindex(self) -> _AsyncIndex:
        return _AsyncIndex(self._sync.oindex)

    @property
    def vindex(self) -> _AsyncIndex:
        return _AsyncIndex(self._sync.vindex)

    # -- reading and writing -------------------------------------------------------------
    async def getitem(self, selection: Any) -> Any:
        return await asyncio.to_thread(self._sync.__getitem__, selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        await asyncio.to_thread(self._sync.__setitem__, selection, value)

    async def get_basic_selection(self, selection: Any = Ellipsis, **kwargs: Any) -> Any:
        return await _run(self._sync.get_basic_selection, selection, **kwargs)

    async def get_orthogonal_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await _run(self._sync.get_orthogonal_selection, selection, **kwargs)

    async def get_coordinate_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await _run(self._sync.get_coordinate_selection, selection, **kwargs)

    async def get_mask_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await _run(self._sync.get_mask_selection, selection, **kwargs)

    async def get_block_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await _run(self._sync.get_block_selection, selection, **kwargs)

    async def set_basic_selection(self, selection: Any, value: Any) -> None:
        await _run(self._sync.set_basic_selection, selection, value)

    async def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        await _run(self._sync.set_orthogonal_selection, selection, value)

    async def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        await _run(self._sync.set_coordinate_selection, selection, value)

    async def set_mask_selection(self, selection: Any, value: Any) -> None:
        await _run(self._sync.set_mask_selection, selection, value)

    async def set_block_selection(self, selection: Any, value: Any) -> None:
        await _run(self._sync.set_block_selection, selection, value)

    # -- changing and inspecting ---------------------------------------------------------
    async def resize(self, new_shape: Any) -> None:
        await _run(self._sync.resize, new_shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        return await _run(self._sync.append, data, axis=axis)

    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncArray:
        await _run(self._sync.update_attributes, new_attributes)
        return self

    async def nchunks_initialized(self) -> int:
        return await asyncio.to_thread(lambda: self._sync.nchunks_initialized)

    async def nshards_initialized(self) -> int:
        return await asyncio.to_thread(lambda: self._sync.nshards_initialized)

    async def nbytes_stored(self) -> int:
        return await _run(self._sync.nbytes_stored)

    async def info_complete(self) -> Any:
        return await _run(self._sync.info_complete)


register_view("async", AsyncArray)


class AsyncGroup(_AsyncNode):
    """A group whose member lookups and changes are awaited (zarr-python's ``AsyncGroup``);
    members come back as AsyncArray / AsyncGroup. Wraps a :class:`zarrox.Group`."""

    _kind = Group
    _sync: Group

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = None, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await _run(_api.open_group, store, zarr_format=zarr_format, **kwargs))

    @classmethod
    async def from_store(
        cls,
        store: Any,
        *,
        attributes: dict[str, Any] | None = None,
        zarr_format: int = 3,
        overwrite: bool = False,
    ) -> AsyncGroup:
        return AsyncGroup(
            await _run(
                _api.create_group,
                store,
                attributes=attributes,
                zarr_format=zarr_format,
                overwrite=overwrite,
            )
        )

    def __repr__(self) -> str:
        return f"<zarrox.AsyncGroup {self._sync.store_path}>"

    # -- members -------------------------------------------------------------------------
    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        return _wrap(await asyncio.to_thread(self._sync.__getitem__, key))  # type: ignore[no-any-return]

    async def get(self, key: str, default: Any = None) -> Any:
        try:
            return await self.getitem(key)
        except KeyError:
            return default

    async def setitem(self, key: str, value: Any) -> None:
        await asyncio.to_thread(self._sync.__setitem__, key, value)

    async def delitem(self, key: str) -> None:
        await asyncio.to_thread(self._sync.__delitem__, key)

    async def contains(self, key: str) -> bool:
        return await asyncio.to_thread(self._sync.__contains__, key)

    async def nmembers(self, max_depth: int | None = 0) -> int:
        return await _run(self._sync.nmembers, max_depth)

    async def members(
        self, max_depth: int | None = 0
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        for name, node in await _run(self._sync.members, max_depth):
            yield name, _wrap(node)

    async def keys(self) -> AsyncIterator[str]:
        for name in await _run(self._sync.keys):
            yield name

    async def array_keys(self) -> AsyncIterator[str]:
        for name in await _run(self._sync.array_keys):
            yield name

    async def group_keys(self) -> AsyncIterator[str]:
        for name in await _run(self._sync.group_keys):
            yield name

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        for name, node in await _run(self._sync.arrays):
            yield name, AsyncArray(node)

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        for name, node in await _run(self._sync.groups):
            yield name, AsyncGroup(node)

    async def array_values(self) -> AsyncIterator[AsyncArray]:
        async for _, node in self.arrays():
            yield node

    async def group_values(self) -> AsyncIterator[AsyncGroup]:
        async for _, node in self.groups():
            yield node

    # -- creating ------------------------------------------------------------------------
    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.create_array, name, **kwargs))

    async def create_dataset(self, name: str, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.create_dataset, name, **kwargs))

    async def require_array(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.require_array, name, shape=shape, **kwargs))

    async def require_dataset(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self.require_array(name, shape=shape, **kwargs)

    async def create_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await _run(self._sync.create_group, name, **kwargs))

    async def require_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await _run(self._sync.require_group, name, **kwargs))

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        return tuple(await asyncio.gather(*(self.require_group(n) for n in names)))

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.zeros, name=name, shape=shape, **kwargs))

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.ones, name=name, shape=shape, **kwargs))

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.empty, name=name, shape=shape, **kwargs))

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(
            await _run(self._sync.full, name=name, shape=shape, fill_value=fill_value, **kwargs)
        )

    async def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.zeros_like, name=name, data=data, **kwargs))

    async def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.ones_like, name=name, data=data, **kwargs))

    async def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.empty_like, name=name, data=data, **kwargs))

    async def full_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await _run(self._sync.full_like, name=name, data=data, **kwargs))

    async def create_hierarchy(
        self, nodes: Mapping[str, Any], *, overwrite: bool = False
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        created = await _run(lambda: list(self._sync.create_hierarchy(nodes, overwrite=overwrite)))
        for path, node in created:
            yield path, _wrap(node)

    # -- changing and inspecting ---------------------------------------------------------
    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncGroup:
        await _run(self._sync.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> Any:
        return await _run(self._sync.info_complete)

    async def tree(self, expand: bool | None = None, level: int | None = None) -> Any:
        return await _run(self._sync.tree, expand=expand, level=level)


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
        yield path, _wrap(node)


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
