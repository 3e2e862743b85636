"""Metadata operations awaited with no thread: the synchronous code run on the event loop
and replayed.

The awaitable forms of opening, creating and listing nodes and of updating attributes
(``AsyncGroup``, ``AsyncArray.open``, :mod:`zarrox.api.asynchronous`) run the synchronous
function they mirror, on the event loop itself, with a :class:`Replay` current. Each
operation of a store whose requests take network round trips (an object store,
references: ``StoreHandle.concurrent``) is then answered from the replay's log: the
operations done so far, in order, with their results. The first operation past the log
stops the run (:class:`NeedIO`, a ``BaseException`` that no handler of zarrox's catches);
the engine performs it through an awaitable it completes (``StoreHandle.op_async``), it is
appended to the log, and the function runs again from the start, each operation done
before answered from the log without I/O. The function is deterministic given what its
store operations return, so every run takes the same path up to the new operation, and
every operation, a write included, is done once.

Stores that answer at once (local files, memory, zip) are read and written directly, and
chunk data moved by the engine (:class:`NeedThread`) or more operations than
:data:`MAX_ROUNDS` make the rest of the run continue on a worker thread, the operations in
the log still answered from it, those after it done there.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

#: Operations one native run performs before it continues on a worker thread (each new
#: operation replays the function: a long run of them costs more than a thread).
MAX_ROUNDS = 32


class NeedIO(BaseException):
    """A replayed function asked for a store operation past its log."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(entry.op)
        self.entry = entry


class NeedThread(BaseException):
    """A replayed function moves chunk data through the engine: it continues on a worker
    thread."""


@dataclass
class Entry:
    """One store operation of a replayed function: the store, the ``StoreHandle`` method
    and its arguments, and what it returned or raised."""

    store: Any
    op: str
    args: tuple[Any, ...]
    result: Any = None
    error: BaseException | None = None

    @property
    def where(self) -> tuple[str, str]:
        return _where(self.store)


def _where(store: Any) -> tuple[str, str]:
    """A store as the log tells stores apart: a run may open the store of a URL anew,
    each run another object of the same store."""
    return type(store).__name__, store.location()


class Replay:
    """The log of a replayed function's store operations (see the module's text)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.position = 0
        #: on a worker thread: operations past the log are done there
        self.blocking = False

    def call(self, store: Any, op: str, args: tuple[Any, ...]) -> Any:
        """What ``store.handle.<op>(*args)`` returns, from the log or done now."""
        if self.position < len(self.entries):
            entry = self.entries[self.position]
            if entry.op != op or entry.args != args or entry.where != _where(store):
                raise RuntimeError(
                    f"internal error: a replayed metadata operation took another path "
                    f"({op} {args[:1]!r} where {entry.op} {entry.args[:1]!r} was done)"
                )
            self.position += 1
            if entry.error is not None:
                raise entry.error.with_traceback(None)
            return entry.result
        if self.blocking:
            return getattr(store.handle, op)(*args)
        raise NeedIO(Entry(store, op, args))

    async def perform(self, entry: Entry) -> None:
        """Do ``entry``'s operation through an awaitable the engine completes and log it."""
        op, args = entry.op, entry.args
        kwargs: dict[str, Any] = {}
        if args:
            kwargs["key"] = args[0]
        if op == "get_range":
            kwargs["start"], kwargs["length"] = args[1], args[2]
        elif op in ("set", "set_if"):
            kwargs["value"] = args[1]
            if op == "set_if":
                kwargs["generation"] = args[2]
        try:
            entry.result = await entry.store.handle.op_async(op, **kwargs)
        except Exception as e:  # raised where the function asked, when replayed
            entry.error = e
        self.entries.append(entry)


_CURRENT: ContextVar[Replay | None] = ContextVar("zarrox_replay", default=None)


def replaying(store: Any) -> Replay | None:
    """The replay that answers ``store``'s operations now, if any: one is current and the
    store's requests take round trips (the others are done directly)."""
    replay = _CURRENT.get()
    if replay is None or not store.handle.concurrent:
        return None
    return replay


def moving_data() -> None:
    """Called before the engine moves chunk data: a native run continues on a thread."""
    replay = _CURRENT.get()
    if replay is not None and not replay.blocking:
        raise NeedThread


def run_blocking(replay: Replay, func: Any, args: Any, kwargs: Any) -> Any:
    """``func`` run again on a worker thread: the logged operations answered from the
    log, the rest done here."""
    replay.blocking = True
    replay.position = 0
    token = _CURRENT.set(replay)
    try:
        return func(*args, **kwargs)
    finally:
        _CURRENT.reset(token)


async def run(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` on the event loop, its store operations awaited."""
    import asyncio

    replay = Replay()
    while True:
        replay.position = 0
        token = _CURRENT.set(replay)
        entry: Entry | None = None
        try:
            return func(*args, **kwargs)
        except NeedIO as need:
            entry = need.entry
        except NeedThread:
            pass
        finally:
            _CURRENT.reset(token)
        if entry is None or len(replay.entries) >= MAX_ROUNDS:
            return await asyncio.to_thread(run_blocking, replay, func, args, kwargs)
        await replay.perform(entry)
