"""Serving the Rust engine's requests from a store written in Python (a zarr-python
store: ``ZipStore``, ``FsspecStore``, ``MemoryStore``, wrappers, ...).

The engine hands out a round of requests at a time (a read session's ``step()``); they are
fetched concurrently on an event loop and answered; fetched bytes stay in Rust, so each one
crosses from Python once. Writes are encoded in Rust and stored concurrently here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from zarrox.errors import StoreError

#: A request from Rust: (id, "get" | "set" | "delete", key, argument).
Request = tuple[int, str, str, Any]


def byte_request(arg: Any) -> Any:
    """A zarr-python byte request for a get request's argument: None for the whole value,
    ``(offset, length | None)`` or ``("suffix", n)``."""
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

    if arg is None:
        return None
    if arg[0] == "suffix":
        return SuffixByteRequest(int(arg[1]))
    offset, length = int(arg[0]), arg[1]
    if length is None:
        return OffsetByteRequest(offset)
    return RangeByteRequest(offset, offset + int(length))


def as_bytes(buf: Any) -> Any:
    """A zarr-python buffer's bytes for Rust: bytes or a numpy array (None stays None)."""
    if buf is None:
        return None
    try:
        return buf.as_numpy_array()
    except Exception:  # a buffer not in host memory
        return buf.to_bytes()


async def gather_limited(coros: Sequence[Any], limit: int | None = None) -> list[Any]:
    """Run ``coros`` concurrently, at most ``limit`` at a time (zarr-python's
    ``async.concurrency`` when not given)."""
    import asyncio  # here: the stores import this module, and import zarrox loads no asyncio

    if limit is None:
        try:
            from zarr.core.config import config as zarr_config

            limit = zarr_config.get("async.concurrency")
        except ImportError:
            limit = None
    limit = limit or len(coros) or 1
    if len(coros) <= limit:
        return list(await asyncio.gather(*coros))
    semaphore = asyncio.Semaphore(limit)

    async def bounded(coro: Any) -> Any:
        async with semaphore:
            return await coro

    return list(await asyncio.gather(*(bounded(c) for c in coros)))


class Answerer:
    """Performs requests on a zarr-python store: ``perform(request)`` returns the bytes of
    a get (None when missing), nothing for a set or delete. ``location(key)`` names a key
    in error messages."""

    def __init__(self, store: Any, location: Callable[[str], str]) -> None:
        self.store = store
        self.location = location

    async def perform(self, request: Request) -> Any:
        from zarr.core.buffer import default_buffer_prototype

        _, op, key, arg = request
        prototype = default_buffer_prototype()
        try:
            if op == "get":
                got = await self.store.get(key, prototype=prototype, byte_range=byte_request(arg))
                return as_bytes(got)
            if op == "set":
                await self.store.set(key, prototype.buffer.from_bytes(arg))
                return None
            if op == "delete":
                await self.store.delete(key)
                return None
        except (FileNotFoundError, KeyError):
            if op == "get":
                return None
            raise
        except StoreError:
            raise
        except (NotImplementedError, ValueError, TypeError):
            raise
        except OSError as e:
            raise StoreError(f"{op} {self.location(key)}: {e}") from e
        raise ValueError(f"unknown request {op!r}")


def serve_sync(session: Any, perform: Callable[[Request], Any]) -> Any:
    """Run a read session to its end, answering each round's requests one by one with
    ``perform`` (a store that answers at once, or must not be called concurrently).
    Returns the session."""
    while requests := session.step():
        session.answer([r[0] for r in requests], [perform(r) for r in requests])
    return session


async def serve(
    session: Any,
    perform: Callable[[Request], Awaitable[Any]],
    *,
    later_rounds: Callable[[list[Request]], Awaitable[list[Any]]] | None = None,
    step: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
) -> Any:
    """Run a read session to its end: fetch each round of requests concurrently with
    ``perform`` (at most zarr-python's ``async.concurrency`` at a time) and answer them.
    Returns the session.

    The first round asks for whole chunks or shard indexes; ``later_rounds`` (when given)
    fetches the rounds after it, which ask for byte ranges of inner chunks, its own way (a
    ranged read per shard). ``step`` runs the session's later steps, which decode what
    arrived (on a thread, for a large batch); the first only makes requests."""
    requests = session.step()
    first = True
    while requests:
        if first or later_rounds is None:
            answers = await gather_limited([perform(r) for r in requests])
        else:
            answers = await later_rounds(requests)
        session.answer([r[0] for r in requests], answers)
        first = False
        requests = session.step() if step is None else await step(session.step)
    return session


async def store_all(
    keys: Sequence[str], values: Sequence[Any], perform: Callable[[Request], Any]
) -> None:
    """Store encoded chunks (None: delete the key) concurrently."""
    requests: list[Request] = [
        (i, "delete" if v is None else "set", k, v)
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]
    await gather_limited([perform(r) for r in requests])


async def fetch_all(keys: Sequence[str | None], perform: Callable[[Request], Any]) -> list[Any]:
    """The values of ``keys`` (None entries: not wanted, None answers), concurrently."""

    async def one(i: int, key: str | None) -> Any:
        if key is None:
            return None
        return await perform((i, "get", key, None))

    return await gather_limited([one(i, k) for i, k in enumerate(keys)])
