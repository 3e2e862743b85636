"""Serving the Rust engine's requests from a store written in Python (a zarr-python
store: ``ZipStore``, ``FsspecStore``, ``MemoryStore``, wrappers, ...; zarrox's stores Rust
cannot reach; the pickle stage around a store).

The engine hands out a round of requests at a time (a read session's ``step()``); they are
fetched concurrently on an event loop and answered; fetched bytes stay in Rust, so each one
crosses from Python once. Writes are encoded in Rust and stored concurrently here. One
dispatch performs a request (:func:`answer`); the same loops serve a store that answers at
once, the coroutine run with no event loop (:func:`in_turn`, :func:`run_now`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from zarrox.errors import StoreError

#: A request from Rust: (id, "get" | "set" | "delete", key, argument).
Request = tuple[int, str, str, Any]

#: A byte range as stores read it: None for the whole value, else ``(start, length)``:
#: ``start`` < 0 for the last ``-start`` bytes (``length`` None), ``length`` None for the
#: bytes from ``start`` to the end.
Span = tuple[int, int | None] | None

#: How a round of requests is performed (:func:`in_turn`, :func:`concurrently`).
Round = Callable[[Callable[[Request], Any], Sequence[Request]], Awaitable[list[Any]]]


def read_range(arg: Any) -> Span:
    """The byte range (:data:`Span`) a get request's argument asks for: None for the whole
    value, ``(offset, length | None)`` or ``("suffix", n)`` (an empty suffix is the empty
    range at 0)."""
    if arg is None:
        return None
    if arg[0] == "suffix":
        n = int(arg[1])
        return (-n, None) if n else (0, 0)
    return int(arg[0]), None if arg[1] is None else int(arg[1])


def answer(target: Any, request: Request) -> Any:
    """Perform ``request`` on ``target``: the one dispatch of the engine's requests.
    ``get`` reads ``target._read(key, span)`` (the bytes, None when missing; ``span`` from
    :func:`read_range`), ``set`` writes ``target._write(key, value)`` (``value``: bytes),
    ``delete`` removes ``target._remove(key)``. Returns what they return (for a target with
    async methods, the coroutine)."""
    _, op, key, arg = request
    if op == "get":
        return target._read(key, read_range(arg))
    if op == "set":
        return target._write(key, arg if type(arg) is bytes else bytes(memoryview(arg)))
    if op == "delete":
        return target._remove(key)
    raise ValueError(f"unknown request {op!r}")


def zarr_range(span: Span) -> Any:
    """The zarr-python byte request for ``span`` (see :data:`Span`)."""
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

    if span is None:
        return None
    start, length = span
    if length is None:
        return SuffixByteRequest(-start) if start < 0 else OffsetByteRequest(start)
    return RangeByteRequest(start, start + length)


def byte_request(arg: Any) -> Any:
    """A zarr-python byte request for a get request's argument: None for the whole value,
    ``(offset, length | None)`` or ``("suffix", n)``."""
    return zarr_range(read_range(arg))


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


async def concurrently(
    perform: Callable[[Request], Awaitable[Any]], requests: Sequence[Request]
) -> list[Any]:
    """The answers to ``requests``, performed concurrently (``perform`` is async)."""
    return await gather_limited([perform(r) for r in requests])


async def in_turn(perform: Callable[[Request], Any], requests: Sequence[Request]) -> list[Any]:
    """The answers to ``requests``, performed one by one (``perform`` answers at once)."""
    return [perform(r) for r in requests]


def run_now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits (its requests performed :func:`in_turn`) to its end,
    with no event loop; its result."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("internal error: a store answering at once waited")


class Answerer:
    """Performs requests on a zarr-python store: ``perform(request)`` returns the bytes of
    a get (None when missing), nothing for a set or delete (see :func:`answer`).
    ``location(key)`` names a key in error messages."""

    def __init__(self, store: Any, location: Callable[[str], str]) -> None:
        self.store = store
        self.location = location

    async def perform(self, request: Request) -> Any:
        _, op, key, _ = request
        try:
            return await answer(self, request)
        except (FileNotFoundError, StoreError, ValueError):  # io.UnsupportedOperation too
            raise
        except OSError as e:
            raise StoreError(f"{op} {self.location(key)}: {e}") from e

    async def _read(self, key: str, span: Span) -> Any:
        from zarr.core.buffer import default_buffer_prototype

        prototype = default_buffer_prototype()
        try:
            got = await self.store.get(key, prototype=prototype, byte_range=zarr_range(span))
        except (FileNotFoundError, KeyError):
            return None
        return as_bytes(got)

    async def _write(self, key: str, value: bytes) -> None:
        from zarr.core.buffer import default_buffer_prototype

        await self.store.set(key, default_buffer_prototype().buffer.from_bytes(value))

    async def _remove(self, key: str) -> None:
        await self.store.delete(key)


def serve_sync(session: Any, perform: Callable[[Request], Any]) -> Any:
    """Run a read session to its end, answering each round's requests one by one with
    ``perform`` (a store that answers at once, or must not be called concurrently).
    Returns the session."""
    return run_now(serve(session, perform, each=in_turn))


async def serve(
    session: Any,
    perform: Callable[[Request], Any],
    *,
    later_rounds: Callable[[list[Request]], Awaitable[list[Any]]] | None = None,
    step: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
    each: Round = concurrently,
) -> Any:
    """Run a read session to its end: perform each round of requests with ``perform``
    (``each``: concurrently, at most zarr-python's ``async.concurrency`` at a time, or
    :func:`in_turn`) and answer them. Returns the session.

    The first round asks for whole chunks or shard indexes; ``later_rounds`` (when given)
    fetches the rounds after it, which ask for byte ranges of inner chunks, its own way (a
    ranged read per shard). ``step`` runs the session's later steps, which decode what
    arrived (on a thread, for a large batch); the first only makes requests."""
    requests = session.step()
    first = True
    while requests:
        if first or later_rounds is None:
            answers = await each(perform, requests)
        else:
            answers = await later_rounds(requests)
        session.answer([r[0] for r in requests], answers)
        first = False
        requests = session.step() if step is None else await step(session.step)
    return session


async def store_all(
    keys: Sequence[str],
    values: Sequence[Any],
    perform: Callable[[Request], Any],
    each: Round = concurrently,
) -> None:
    """Store encoded chunks (None: delete the key), concurrently (or as ``each`` says)."""
    requests: list[Request] = [
        (i, "delete" if v is None else "set", k, v)
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]
    await each(perform, requests)


async def fetch_all(
    keys: Sequence[str | None], perform: Callable[[Request], Any], each: Round = concurrently
) -> list[Any]:
    """The values of ``keys`` (None entries: not wanted, None answers), concurrently (or as
    ``each`` says)."""
    requests: list[Request] = [(i, "get", k, None) for i, k in enumerate(keys) if k is not None]
    values: list[Any] = [None] * len(keys)
    for request, value in zip(requests, await each(perform, requests), strict=True):
        values[request[0]] = value
    return values
