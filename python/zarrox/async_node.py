"""What the awaitable forms of arrays and groups share (``AsyncArray`` in array.py,
``AsyncGroup`` in group.py, the functions of :mod:`zarrox.api.asynchronous`).

Reads and writes of arrays in stores Rust reads are awaitables the engine completes (see
``AsyncArray``). Opening and creating nodes, listings and attribute updates on those stores
run on the event loop, their requests awaited through the engine (:func:`run_metadata`).
What is left runs as a synchronous call in a worker thread (:func:`run`,
:func:`asyncio.to_thread`): copies and stores served from Python. asyncio is imported when
first awaited, not with ``import zarrox``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def unwrap(value: Any) -> Any:
    """An awaitable node as its synchronous node; anything else as it is."""
    if isinstance(value, AsyncNode):
        return value._sync
    return value


async def to_thread(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a worker thread (:func:`asyncio.to_thread`)."""
    import asyncio

    return await asyncio.to_thread(func, *args, **kwargs)


async def gather(*awaitables: Awaitable[T]) -> list[T]:
    """The results of ``awaitables``, awaited together (:func:`asyncio.gather`)."""
    import asyncio

    return list(await asyncio.gather(*awaitables))


async def run(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a worker thread, awaitable nodes among the arguments
    passed as their synchronous nodes."""
    args = tuple(unwrap(a) for a in args)
    kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    return await to_thread(func, *args, **kwargs)


async def run_metadata(store: Any, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)``, a metadata operation (opening, creating, listing nodes,
    attributes) on ``store`` (a store or what names one): on the event loop with its
    requests awaited through the engine (:mod:`zarrox.storage.replay`) where they take
    network round trips (object stores, references), else in a worker thread (:func:`run`)."""
    if not _takes_round_trips(store):
        return await run(func, *args, **kwargs)
    from zarrox.storage.replay import run as replayed

    args = tuple(unwrap(a) for a in args)
    kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    return await replayed(func, *args, **kwargs)  # type: ignore[no-any-return]


def _takes_round_trips(store: Any) -> bool:
    """Whether ``store`` is (or names) a store whose requests the engine keeps in flight on
    its I/O runtime: an object store or references, as a zarrox store or a URL. Stores that
    answer at once (local files, memory, zip) stay on a worker thread: a large listing
    there would hold the event loop."""
    import os

    from zarrox.storage import Store
    from zarrox.storage.options import SCHEMES

    if isinstance(store, os.PathLike):
        return False
    if isinstance(store, str):
        scheme = store.split("://", 1)[0].lower() if "://" in store else ""
        return scheme in SCHEMES or scheme == "reference"
    return isinstance(store, Store) and bool(store.handle.concurrent)


class AsyncNode:
    """An asynchronous view of a node: the properties that describe it are the synchronous
    node's (no I/O); the methods that do I/O are the subclass's coroutines."""

    _kind: type

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


__all__ = ["AsyncNode", "gather", "run", "run_metadata", "to_thread", "unwrap"]
