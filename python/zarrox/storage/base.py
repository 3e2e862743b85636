"""The store interface: :class:`Store`, what every zarrox store is (the engine's handle, the
read and write methods, serving the engine's requests from Python), and the warning of a
server that ignores byte ranges."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zarrox._core import StoreHandle
from zarrox.errors import ReadOnlyError
from zarrox.storage.replay import replaying

if TYPE_CHECKING:
    from zarr.abc.store import Store as ZarrPythonStore

    from zarrox.storage.bridge import Request, Round, Span


class ServesEngine:
    """Answers the engine's requests for chunks that Python reads and writes: read sessions
    (:meth:`serve`) and write batches (:meth:`fetch`, :meth:`store_values`). Each request
    is performed by :func:`zarrox.storage.bridge.answer` through the class's ``_read(key,
    span)``, ``_write(key, value)`` and ``_remove(key)``, at once, one by one; a class with
    async methods says otherwise in :meth:`_requests`."""

    def _perform(self, request: Request) -> Any:
        """Perform one of the engine's requests (at once)."""
        from zarrox.storage.bridge import answer

        return answer(self, request)

    def _requests(self) -> tuple[Callable[[Request], Any], Round, Callable[[Any], Any]]:
        """How the engine's requests are performed: one (``perform``), a round of them
        (``bridge.in_turn`` or ``bridge.concurrently``), and the coroutine of a whole read
        or write (``bridge.run_now``, or on an event loop)."""
        from zarrox.storage.bridge import in_turn, run_now

        return self._perform, in_turn, run_now

    def serve(self, session: Any) -> Any:
        """Run a Rust read session to its end, answering its requests."""
        from zarrox.storage.bridge import serve

        perform, each, run = self._requests()
        return run(serve(session, perform, each=each))

    def fetch(self, keys: list[str], needed: list[bool]) -> list[Any]:
        """The values of the ``needed`` ``keys`` (None elsewhere or where missing)."""
        from zarrox.storage.bridge import fetch_all

        perform, each, run = self._requests()
        wanted = [k if n else None for k, n in zip(keys, needed, strict=True)]
        return run(fetch_all(wanted, perform, each))  # type: ignore[no-any-return]

    def store_values(self, keys: list[str], values: list[Any]) -> None:
        """Store encoded chunks (None: delete the key)."""
        from zarrox.storage.bridge import store_all

        perform, each, run = self._requests()
        run(store_all(keys, values, perform, each))


class Store(ServesEngine):
    """A key-value store. ``handle`` is the Rust side the engine reads and writes
    (for a store served from Python, a handle that says so).

    A store of your own: subclass ``Store`` and implement ``get(key)`` (bytes, or None
    when missing), ``set(key, value)``, ``delete(key)`` and ``list_prefix(prefix)``
    (the sorted keys that start with it); ``get_range(key, start, length)`` and
    ``exists(key)`` are optional (by default they read the whole value). The engine
    reads and writes it from Python, as zarr-python's stores (see README)."""

    #: Writes are refused (a store opened read-only, an HTTP store).
    read_only: bool = False

    def __getattr__(self, name: str) -> Any:
        # a store of the user's (a subclass that sets no handle) is served from Python
        if name == "handle":
            handle = StoreHandle.caller(f"{type(self).__name__}(<{id(self):#x}>)")
            self.__dict__["handle"] = handle
            return handle
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        handle = state.get("handle")
        if handle is not None and not handle.in_rust:
            del state["handle"]  # made again when next needed
        return state

    @property
    def _in_python(self) -> bool:
        """Whether Python reads and writes this store (Rust does not)."""
        return not self.handle.in_rust

    def get(self, key: str) -> bytes | None:
        if (replay := replaying(self)) is not None:
            return replay.call(self, "get", (key,))  # type: ignore[no-any-return]
        return self.handle.get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        if (replay := replaying(self)) is not None:
            return replay.call(self, "get_range", (key, start, length))  # type: ignore[no-any-return]
        if self._in_python:
            value = self.get(key)
            return None if value is None else cut_range(bytes(memoryview(value)), start, length)
        return self.handle.get_range(key, start, length)

    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot write {self.location(key)!r}: the store is read-only")

    def set(self, key: str, value: bytes) -> None:
        self._check_writable(key)
        if (replay := replaying(self)) is not None:
            replay.call(self, "set", (key, bytes(memoryview(value))))
            return
        self.handle.set(key, value)

    def delete(self, key: str) -> None:
        self._check_writable(key)
        if (replay := replaying(self)) is not None:
            replay.call(self, "delete", (key,))
            return
        self.handle.delete(key)

    def exists(self, key: str) -> bool:
        if (replay := replaying(self)) is not None:
            return bool(replay.call(self, "exists", (key,)))
        if self._in_python:
            return self.get(key) is not None
        return self.handle.exists(key)

    def conditional_writes(self) -> bool:
        """Whether writes can be conditional on what was read (generations): local
        directories and memory always; object stores whose server honours If-Match and
        If-None-Match (asked once); stores served from Python and zip archives never."""
        if (replay := replaying(self)) is not None:
            return bool(replay.call(self, "conditional_writes", ()))
        return bool(self.handle.conditional_writes())

    def get_versioned(self, key: str) -> tuple[bytes | None, str]:
        """The value under ``key`` (None: missing) and its generation, an opaque token for
        :meth:`set_if` (``"unknown"`` where the store cannot tell versions apart)."""
        if (replay := replaying(self)) is not None:
            value, generation = replay.call(self, "get_versioned", (key,))
        else:
            value, generation = self.handle.get_versioned(key)
        return value, generation

    def set_if(self, key: str, value: bytes, generation: str) -> bool:
        """Store ``value`` under ``key`` if its generation is still ``generation`` (from
        :meth:`get_versioned`; ``"absent"``: only if there is no value; ``"unknown"``:
        unconditionally). Whether it was written: False when another writer committed
        first (nothing was written)."""
        self._check_writable(key)
        if (replay := replaying(self)) is not None:
            args = (key, bytes(memoryview(value)), generation)
            return bool(replay.call(self, "set_if", args))
        return bool(self.handle.set_if(key, value, generation))

    def list_prefix(self, prefix: str) -> list[str]:
        if (replay := replaying(self)) is not None:
            return list(replay.call(self, "list_prefix", (prefix,)))
        return self.handle.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """(keys, sub-directories) directly under ``prefix`` ("" or ending in "/")."""
        if (replay := replaying(self)) is not None:
            keys, dirs = replay.call(self, "list_dir", (prefix,))
            return list(keys), list(dirs)
        if self._in_python:
            return _split_listing(prefix, sorted(self.list_prefix(prefix)))
        return self.handle.list_dir(prefix)

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable(prefix)
        if (replay := replaying(self)) is not None:
            replay.call(self, "delete_prefix", (prefix,))
            return
        if self._in_python:
            for key in self.list_prefix(prefix):
                self.delete(key)
            return
        self.handle.delete_prefix(prefix)

    def flush(self) -> None:
        """Make the writes so far visible to other readers (a zip archive's directory)."""
        if not self._in_python:
            self.handle.flush()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def location(self, key: str = "") -> str:
        """Where ``key`` (or the store itself) is: a path or URL."""
        return self.handle.location(key).rstrip("/") if not key else self.handle.location(key)

    @property
    def url(self) -> str:
        """A URL that, with the store's options, opens this store again."""
        return self.location()

    def as_zarr_store(self) -> ZarrPythonStore:
        """This store as zarr-python sees it: a ``zarr.abc.store.Store`` that reads and
        writes here (:class:`~zarrox.storage.zarr_adapter.ZarrStoreView`). zarr-python and
        xarray take the zarrox store itself too: they are handed this (see README)."""
        from zarrox.storage.zarr_adapter import ZarrStoreView

        return ZarrStoreView(self)

    # -- what the engine's requests are performed with, for a store Python serves
    # (bridge.answer): its own methods
    def _read(self, key: str, span: Span) -> Any:
        return self.get(key) if span is None else self.get_range(key, *span)

    def _write(self, key: str, value: bytes) -> None:
        self.set(key, value)

    def _remove(self, key: str) -> None:
        self.delete(key)

    def store_values(self, keys: list[str], values: list[Any]) -> None:
        """Store encoded chunks (None: delete the key)."""
        if keys:
            self._check_writable(keys[0])
        super().store_values(keys, values)


_WARNED_RANGES: set[str] = set()


def warn_ranges_ignored(store: str) -> None:
    """Warn (once per store) that the store at ``store`` ignores byte ranges: its server
    sends whole values, out of which the ranges asked for are cut (called by Rust)."""
    if store in _WARNED_RANGES:
        return
    _WARNED_RANGES.add(store)
    warnings.warn(
        f"the store {store} ignores byte ranges (its server sends whole values): reading "
        "the ranges out of whole values, which costs more transfer",
        RuntimeWarning,
        stacklevel=2,
    )


def cut_range(value: Any, start: int, length: int | None) -> Any:
    """The part of ``value`` (bytes, an array) that ``get_range(key, start, length)`` asks
    for (see :data:`zarrox.storage.bridge.Span`)."""
    if length is None:
        return value[len(value) + start :] if start < 0 else value[start:]
    return value[start : start + int(length)]


def _split_listing(prefix: str, keys: list[str]) -> tuple[list[str], list[str]]:
    """(keys, sub-directories) directly under ``prefix`` from the sorted ``keys`` that
    start with it."""
    names: list[str] = []
    dirs: set[str] = set()
    for key in keys:
        rest = key[len(prefix) :]
        if "/" in rest:
            dirs.add(rest.split("/", 1)[0])
        elif rest:
            names.append(rest)
    return sorted(names), sorted(dirs)
