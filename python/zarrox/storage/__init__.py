"""Stores: where keys and bytes live.

Local directories, memory, zip archives and object stores (S3, GCS, Azure, HTTP) are
implemented in Rust: the engine reads and writes them itself, with many requests in flight
on object stores. A zarr-python store object that has no Rust equivalent (its
``ZipStore``, ``FsspecStore``, ``MemoryStore``, wrappers) is served from Python: the engine
hands out its requests in rounds (:mod:`zarrox.storage.bridge`).

A store's name says who does its I/O: ``Rust...`` stores are read and written by the engine
(:class:`RustObjectStore` over a URL, :class:`RustObstoreStore` over an obstore S3, GCS,
Azure or HTTP store object), ``Python...`` stores by Python serving the engine's requests
(:class:`PythonServedStore`, the base of :class:`PythonObstoreStore` over an obstore store
only its own extension reaches and :class:`PythonZarrStore` over a zarr-python store).
The older names stay importable: ``ObjectStore`` (``RustObjectStore``; given an obstore store
object it answers a ``RustObstoreStore`` or ``PythonObstoreStore``), ``ObstoreStore``,
``ObstorePythonStore``, ``PythonStore`` and ``ServedStore``.

:func:`resolve_store` turns what a user passes (a path, a URL, a store object) into a store.
Every store pickles: a URL and the options given (never credentials read from the
environment), a memory store's contents, a zarr-python store object itself.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import warnings
import weakref
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from zarrox._core import StoreHandle, memory_items
from zarrox._post_import import when_imported
from zarrox.errors import ReadOnlyError, StorageOptionsError, WriteConflictError
from zarrox.storage.options import SCHEMES, fsspec_target, object_store_options
from zarrox.storage.replay import replaying

if TYPE_CHECKING:
    from zarr.abc.store import Store as ZarrPythonStore


class Store:
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
            if value is None:
                return None
            value = bytes(memoryview(value))
            if start < 0 and length is None:
                return value[len(value) + start :] if start else b""
            return value[start:] if length is None else value[start : start + int(length)]
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

    # -- serving the engine's requests from Python (stores Rust cannot reach) --
    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        """Perform a request: ``get`` (``arg`` None, ``(offset, length | None)`` or
        ``("suffix", n)``; None when missing), ``set`` (``arg``: the bytes), ``delete``."""
        if op == "get":
            if arg is None:
                return self.get(key)
            if arg[0] == "suffix":
                n = int(arg[1])
                if not n:
                    return b"" if self.exists(key) else None
                return self.get_range(key, -n)
            length = None if arg[1] is None else int(arg[1])
            return self.get_range(key, int(arg[0]), length)
        if op == "set":
            self.set(key, bytes(memoryview(arg)))
        elif op == "delete":
            self.delete(key)
        else:
            raise ValueError(f"unknown request {op!r}")
        return None

    def serve(self, session: Any) -> Any:
        """Run a Rust read session to its end, answering its requests."""
        while requests := session.step():
            session.answer([r[0] for r in requests], [self._answer(*r[1:]) for r in requests])
        return session

    def fetch(self, keys: list[str], needed: list[bool]) -> list[Any]:
        """The values of the ``needed`` ``keys`` (None elsewhere)."""
        return [self._answer("get", k) if n else None for k, n in zip(keys, needed, strict=True)]

    def store_values(self, keys: list[str], values: list[Any]) -> None:
        """Store encoded chunks (None: delete the key)."""
        if keys:
            self._check_writable(keys[0])
        for key, value in zip(keys, values, strict=True):
            self._answer("delete" if value is None else "set", key, value)


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


class LocalStore(Store):
    """A directory on the local filesystem; every write is atomic (temp file + rename).

    ``fsync`` (default: the ``store.fsync`` configuration) syncs every written file and
    its directory to disk before the write returns, so that a power loss keeps what was
    acknowledged (at a cost: see RELIABILITY.md). Nothing is written, deleted or listed
    through a directory that links outside ``root``."""

    def __init__(
        self, root: str | os.PathLike[str], *, read_only: bool = False, fsync: bool | None = None
    ) -> None:
        from zarrox.config import config

        self.root = Path(root)
        self.read_only = read_only
        self.fsync = bool(config["store.fsync"] if fsync is None else fsync)
        self.handle = StoreHandle.local(os.fspath(self.root), self.fsync)

    def remove_temporaries(self, older_than: float = 3600.0) -> int:
        """Remove the temporary files of writers that died mid-write (readers never see
        them): those whose process is gone, and any older than ``older_than`` seconds.
        Returns how many were removed (``zarrox clean STORE`` does the same)."""
        return self.handle.remove_temporaries(float(older_than))

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    @property
    def url(self) -> str:
        return self.root.absolute().as_uri()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalStore) and other.root == self.root

    def __hash__(self) -> int:
        return hash(("LocalStore", self.root))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_local_store, (os.fspath(self.root), self.read_only, self.fsync))


def _local_store(root: str, read_only: bool, fsync: bool) -> LocalStore:
    return LocalStore(root, read_only=read_only, fsync=fsync)


def _memory_store(items: dict[str, bytes], as_dict: bool = False) -> MemoryStore:
    if as_dict:
        return MemoryStore({k: _stored_value(v) for k, v in items.items()})
    store = MemoryStore()
    for key, value in items.items():
        store.set(key, value)
    return store


class MemoryStore(Store):
    """Keys and values held in memory, shared by every node opened on it. A pickled
    memory store carries its contents (the copy is independent of the original).

    ``MemoryStore(store_dict)``, as zarr-python's, keeps the values in ``store_dict`` (a
    dict or any mutable mapping; a dict given as a store does the same): every write goes
    into it as a zarr-python ``Buffer`` where zarr-python is imported, else as
    :class:`StoredBytes` (zarrox does not import zarr-python for it), so the same dict
    opens in zarr-python; values it already holds may be buffers, bytes or anything with
    the buffer protocol."""

    def __new__(cls, store_dict: MutableMapping[str, Any] | None = None) -> MemoryStore:
        if store_dict is not None and cls is MemoryStore:
            return super().__new__(DictMemoryStore)
        return super().__new__(cls)

    def __init__(self, store_dict: MutableMapping[str, Any] | None = None) -> None:
        self.handle = StoreHandle.memory()

    def __repr__(self) -> str:
        return f"MemoryStore(<{id(self):#x}>)"

    @property
    def url(self) -> str:
        return "memory://"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_memory_store, (dict(memory_items(self.handle)),))


class StoredBytes(bytes):
    """A value a dict-backed memory store wrote while zarr-python was not imported: bytes
    that zarr-python's ``MemoryStore`` reads as it reads its own ``Buffer`` values
    (``to_bytes()``, ``as_numpy_array()``, and slices that are ``StoredBytes`` too)."""

    def to_bytes(self) -> bytes:
        return bytes(self)

    def as_numpy_array(self) -> Any:
        """The bytes as a read-only uint8 numpy array (no copy)."""
        import numpy as np

        return np.frombuffer(self, dtype=np.uint8)

    def __getitem__(self, index: Any) -> Any:
        # zarr-python's MemoryStore slices a value before it reads it as a buffer
        value = super().__getitem__(index)
        return StoredBytes(value) if isinstance(index, slice) else value


def _stored_value(value: bytes) -> Any:
    """``value`` as a dict-backed memory store keeps it: a zarr-python CPU buffer (what its
    MemoryStore keeps) where zarr-python is imported, else :class:`StoredBytes`."""
    buffer = sys.modules.get("zarr.core.buffer.cpu")
    if buffer is None:
        return StoredBytes(value)
    return buffer.Buffer.from_bytes(value)


def _value_bytes(value: Any) -> Any:
    """The bytes of a value found in a dict-backed memory store: bytes, or a uint8 numpy
    array for a zarr-python buffer (no copy)."""
    if isinstance(value, bytes):
        return value
    as_array = getattr(value, "as_numpy_array", None)
    if as_array is not None:
        return as_array()
    to_bytes = getattr(value, "to_bytes", None)
    if to_bytes is not None:
        return to_bytes()
    return bytes(memoryview(value))


def _byte_range(value: Any, arg: Any) -> Any:
    """The part of ``value`` a get request's argument asks for (None: all of it,
    ``(offset, length | None)`` or ``("suffix", n)``)."""
    if arg is None:
        return value
    if arg[0] == "suffix":
        n = int(arg[1])
        return value[len(value) - n :] if n else value[:0]
    start, length = int(arg[0]), arg[1]
    return value[start:] if length is None else value[start : start + int(length)]


class PythonServedStore(Store):
    """A store whose keys Python reads and writes (``_answer``), serving the engine's
    requests: the base of stores over a Python mapping or an obstore object that Rust
    cannot reach."""

    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        """Perform a request: ``get`` (``arg`` None, ``(offset, length | None)`` or
        ``("suffix", n)``; None when missing), ``set`` (``arg``: the bytes), ``delete``."""
        raise NotImplementedError

    def get(self, key: str) -> bytes | None:
        got = self._answer("get", key)
        return None if got is None else bytes(memoryview(got))

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        arg = ("suffix", -start) if start < 0 and length is None else (start, length)
        got = self._answer("get", key, arg)
        return None if got is None else bytes(memoryview(got))

    def set(self, key: str, value: bytes) -> None:
        self._check_writable(key)
        self._answer("set", key, value)

    def delete(self, key: str) -> None:
        self._check_writable(key)
        self._answer("delete", key)

    def exists(self, key: str) -> bool:
        return self._answer("get", key) is not None

    def conditional_writes(self) -> bool:
        # Python stores have no generations: the last writer wins (README).
        return False

    def get_versioned(self, key: str) -> tuple[bytes | None, str]:
        return self.get(key), "unknown"

    def set_if(self, key: str, value: bytes, generation: str) -> bool:
        if generation != "unknown":
            raise WriteConflictError(
                f"{self.location(key)!r}: a store served from Python cannot write on condition"
            )
        self.set(key, value)
        return True

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return _split_listing(prefix, self.list_prefix(prefix))


class DictMemoryStore(PythonServedStore, MemoryStore):
    """A memory store whose values live in a mapping the user holds (see
    :class:`MemoryStore`)."""

    def __init__(self, store_dict: MutableMapping[str, Any] | None = None) -> None:
        self.store_dict: MutableMapping[str, Any] = {} if store_dict is None else store_dict
        self.handle = StoreHandle.caller("memory://")

    def __repr__(self) -> str:
        return f"MemoryStore(<dict {id(self.store_dict):#x}>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DictMemoryStore) and other.store_dict is self.store_dict

    def __hash__(self) -> int:
        return hash(("DictMemoryStore", id(self.store_dict)))

    def __reduce__(self) -> tuple[Any, ...]:
        items = {k: bytes(memoryview(_value_bytes(v))) for k, v in self.store_dict.items()}
        return (_memory_store, (items, True))

    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        if op == "get":
            value = self.store_dict.get(key)
            return None if value is None else _byte_range(_value_bytes(value), arg)
        if op == "set":
            self.store_dict[key] = _stored_value(bytes(memoryview(arg)))
        elif op == "delete":
            self.store_dict.pop(key, None)
        else:
            raise ValueError(f"unknown request {op!r}")
        return None

    def exists(self, key: str) -> bool:
        return key in self.store_dict

    def list_prefix(self, prefix: str) -> list[str]:
        return sorted(k for k in self.store_dict if k.startswith(prefix))


class PythonObstoreStore(PythonServedStore):
    """An obstore store whose state Rust cannot reach (``obstore.store.MemoryStore``,
    ``LocalStore``: they live in obstore's own extension), read and written through
    obstore's Python functions. It pickles as the obstore object does."""

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        self.obstore = store
        self.read_only = read_only
        self.handle = StoreHandle.caller(_obstore_url(store))

    def __repr__(self) -> str:
        return f"PythonObstoreStore({self.obstore!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PythonObstoreStore, (self.obstore,), {"read_only": self.read_only})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.read_only = state["read_only"]

    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        import obstore

        try:
            if op == "get":
                if arg is None:
                    return obstore.get(self.obstore, key).bytes()
                if arg[0] == "suffix":
                    if not int(arg[1]):
                        return b""
                    n = int(arg[1])
                    return obstore.get(self.obstore, key, options={"range": {"suffix": n}}).bytes()
                start, length = int(arg[0]), arg[1]
                if length is None:
                    return obstore.get(
                        self.obstore, key, options={"range": {"offset": start}}
                    ).bytes()
                if not int(length):
                    return b""
                return obstore.get_range(self.obstore, key, start=start, length=int(length))
            if op == "set":
                obstore.put(self.obstore, key, bytes(memoryview(arg)))
                return None
            if op == "delete":
                obstore.delete(self.obstore, key)
                return None
        except FileNotFoundError:
            return None
        raise ValueError(f"unknown request {op!r}")

    def list_prefix(self, prefix: str) -> list[str]:
        import obstore

        return sorted(
            o["path"] for batch in obstore.list(self.obstore, prefix or None) for o in batch
        )


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


class ZipStore(Store):
    """A zip archive, as zarr-python's ``ZipStore`` writes them (entries stored
    uncompressed). ``mode``: ``r`` (read only), ``w`` (a new archive), ``a`` (read and
    write, created if missing), ``x`` (a new archive that must not exist). Writes become
    visible to other readers of the file at each flush (after every array write) and at
    :meth:`close`; use the store as a context manager to close it."""

    #: Entries cannot be removed (written again, they are replaced).
    supports_deletes = False

    def __init__(self, path: str | os.PathLike[str], mode: str = "r") -> None:
        self.path = Path(path)
        self.mode = mode
        self.read_only = mode == "r"
        self.handle = StoreHandle.zip(os.fspath(self.path), mode)

    def __repr__(self) -> str:
        return f"ZipStore({str(self.path)!r}, mode={self.mode!r})"

    @property
    def url(self) -> str:
        return f"zip://{self.path.absolute()}"

    def __reduce__(self) -> tuple[Any, ...]:
        self.flush()
        return (ZipStore, (os.fspath(self.path), "r" if self.read_only else "a"))


class RustObjectStore(Store):
    """An object store: S3 or an S3-compatible endpoint (``s3://bucket/prefix``), Google
    Cloud Storage (``gs://``), Azure Blob Storage (``az://``, ``abfs://``) or a web server
    (``http(s)://``, read only), read and written by Rust with many requests in flight.

    ``storage_options`` (see :mod:`zarrox.storage.options`) hold credentials, endpoint,
    region and timeouts; without them the environment's are used. Only the options given
    here are pickled."""

    def __new__(
        cls,
        store: Any,
        storage_options: Mapping[str, Any] | None = None,
        *,
        read_only: bool = False,
    ) -> Any:
        if isinstance(store, str):
            return super().__new__(cls)
        # an obstore store object, as zarr-python's ObjectStore(store) takes it
        if storage_options:
            raise StorageOptionsError(
                "'storage_options' was provided but unused: an obstore store object "
                "carries its own configuration"
            )
        if type(store).__name__ in _RUST_OBSTORES:
            return RustObstoreStore(store, read_only=read_only)
        return PythonObstoreStore(store, read_only=read_only)

    def __init__(
        self,
        store: str,
        storage_options: Mapping[str, Any] | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """``store``: a URL (``s3://bucket/prefix``, ...), or an obstore store object
        (``obstore.store.S3Store``, ..., as zarr-python's ``ObjectStore`` takes it: read
        and written by Rust for S3, GCS, Azure and HTTP stores, through obstore's Python
        functions for the others)."""
        url = store
        self._url = url.rstrip("/")
        self.storage_options = dict(storage_options or {})
        scheme = url.split("://", 1)[0].lower()
        self.read_only = read_only or SCHEMES.get(scheme) == "http"
        self.handle = StoreHandle.object(
            self._url, object_store_options(self._url, self.storage_options)
        )

    def __repr__(self) -> str:
        return f"RustObjectStore({self._url!r})"

    @property
    def url(self) -> str:
        return self._url

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RustObjectStore)
            and other._url == self._url
            and other.storage_options == self.storage_options
        )

    def __hash__(self) -> int:
        return hash(("ObjectStore", self._url))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_object_store, (self._url, self.storage_options, self.read_only))


def _object_store(url: str, storage_options: dict[str, Any], read_only: bool) -> RustObjectStore:
    return RustObjectStore(url, storage_options, read_only=read_only)


#: obstore store classes whose configuration Rust takes over (pyo3-object_store); the
#: others (MemoryStore, LocalStore) hold state only their own extension can reach
_RUST_OBSTORES = ("S3Store", "GCSStore", "AzureStore", "HTTPStore")


class RustObstoreStore(Store):
    """An obstore store object (``obstore.store.S3Store``, ``GCSStore``, ``AzureStore``,
    ``HTTPStore``, as zarr-python's ``ObjectStore`` wraps them), read and written by Rust.
    It pickles as the obstore object does."""

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        self.obstore = store
        self.read_only = read_only or type(store).__name__ == "HTTPStore"
        self.handle = StoreHandle.obstore(store, _obstore_url(store))

    def __repr__(self) -> str:
        return f"RustObstoreStore({self.obstore!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (RustObstoreStore, (self.obstore,), {"read_only": self.read_only})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.read_only = state["read_only"]


def _obstore_url(store: Any) -> str:
    """A URL naming an obstore store in messages."""
    name = type(store).__name__
    config = getattr(store, "config", None) or {}
    prefix = str(getattr(store, "prefix", None) or "").strip("/")
    if name == "S3Store":
        bucket = config.get("bucket") or config.get("aws_bucket") or "?"
        base = f"s3://{bucket}"
    elif name == "GCSStore":
        base = f"gs://{config.get('bucket') or config.get('google_bucket') or '?'}"
    elif name == "AzureStore":
        base = f"az://{config.get('container_name') or config.get('azure_container_name') or '?'}"
    elif name == "HTTPStore":
        base = str(getattr(store, "url", "") or "http://?").rstrip("/")
    else:
        base = f"{name.lower()}://"
    return f"{base}/{prefix}" if prefix else base


class PythonZarrStore(PythonServedStore):
    """A zarr-python store object with no Rust equivalent (``ZipStore``, ``MemoryStore``,
    an ``FsspecStore`` over another file system or with options Rust cannot take,
    wrappers): its writes are not conditional (the last writer wins); metadata is read and
    written through its async methods, chunks through the engine's request rounds. It
    pickles as the wrapped store does."""

    def __init__(self, store: Any) -> None:
        from zarrox.storage.bridge import Answerer

        self.zarr_store = store
        self.read_only = bool(getattr(store, "read_only", False))
        self.handle = StoreHandle.caller(repr(store))
        self.answerer = Answerer(store, self.location)

    def __repr__(self) -> str:
        return f"PythonZarrStore({self.zarr_store!r})"

    def location(self, key: str = "") -> str:
        return f"{self.zarr_store!r}/{key}" if key else repr(self.zarr_store)

    def __reduce__(self) -> tuple[Any, ...]:
        return (PythonZarrStore, (self.zarr_store,))

    def run(self, coro: Any) -> Any:
        """Run a coroutine of the wrapped store (on zarr-python's event loop), the store
        opened first."""
        from zarr.core.sync import sync

        async def opened() -> Any:
            ensure = getattr(self.zarr_store, "_ensure_open", None)
            if ensure is not None:
                await ensure()
            return await coro

        return sync(opened())

    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        if op == "set":
            arg = bytes(memoryview(arg))
        return self.run(self.answerer.perform((0, op, key, arg)))

    def get(self, key: str) -> bytes | None:
        try:
            return super().get(key)
        except Exception as e:
            if _refused_probe(key, e):
                return None
            raise

    def exists(self, key: str) -> bool:
        try:
            return bool(self.run(self.zarr_store.exists(key)))
        except Exception as e:
            # zarr-python takes a KeyError as "missing" (icechunk raises one for a
            # v2 key that a v3-only store cannot hold)
            if isinstance(e, LookupError) or _refused_probe(key, e):
                return False
            raise

    def list_prefix(self, prefix: str) -> list[str]:
        async def collect() -> list[str]:
            return [k async for k in self.zarr_store.list_prefix(prefix)]

        return sorted(self.run(collect()))

    def close(self) -> None:
        self.zarr_store.close()

    def as_zarr_store(self) -> ZarrPythonStore:
        """The zarr-python store object this store serves."""
        return self.zarr_store

    def serve(self, session: Any) -> Any:
        """Run a Rust read session to its end, fetching its requests from the store."""
        from zarrox.storage.bridge import serve

        return self.run(serve(session, self.answerer.perform))

    def fetch(self, keys: list[str], needed: list[bool]) -> list[Any]:
        """The values of the ``needed`` ``keys`` (None elsewhere), fetched concurrently."""
        from zarrox.storage.bridge import fetch_all

        wanted = [k if n else None for k, n in zip(keys, needed, strict=True)]
        return self.run(fetch_all(wanted, self.answerer.perform))  # type: ignore[no-any-return]

    def store_values(self, keys: list[str], values: list[Any]) -> None:
        """Store encoded chunks (None: delete the key), concurrently."""
        from zarrox.storage.bridge import store_all

        self.run(store_all(keys, values, self.answerer.perform))

    @property
    def url(self) -> str:
        return repr(self.zarr_store)


#: the metadata documents of the formats before v3 (v2, v1) that zarrox looks for where
#: zarr-python does not; a store that holds v3 only (icechunk) may refuse these keys
_LEGACY_METADATA = frozenset({".zarray", ".zgroup", ".zattrs", ".zmetadata", "meta", "attrs"})


def _refused_probe(key: str, error: Exception) -> bool:
    """Whether ``error``, raised by a zarr-python store for ``key``, means "no such
    value": the store refuses a legacy metadata key it can never hold. icechunk 2 raises
    a KeyError or ValueError there ("v2 key not found", "invalid zarr key format"),
    icechunk 1 its own ``IcechunkError``; any other error (a network failure) stays one."""
    if key.rsplit("/", 1)[-1] not in _LEGACY_METADATA:
        return False
    from_icechunk = type(error).__module__.split(".")[0] == "icechunk"
    return from_icechunk or isinstance(error, LookupError | ValueError)


#: zarrox stores of zarr-python store objects, so that one Rust store serves each: by the
#: object's id, with a weak reference to it and where it is (a LocalStore can move).
_ADAPTED: dict[int, tuple[weakref.ref[Any], Any, Store]] = {}


def from_zarr_store(store: Any) -> Store:
    """The zarrox store for a zarr-python store object: Rust's own where one exists
    (``LocalStore``, ``ObjectStore`` over an obstore S3, GCS, Azure or HTTP store,
    ``FsspecStore`` over s3fs, gcsfs, adlfs, fsspec's local or HTTP file system with
    options Rust can take: :func:`zarrox.storage.options.fsspec_target`, or over fsspec's
    ``ReferenceFileSystem``: :func:`~zarrox.storage.references.from_reference_file_system`),
    else one served
    from Python (whose writes are not conditional: the last writer wins)."""
    where = getattr(store, "root", None)
    found = _ADAPTED.get(id(store))
    if found is not None and found[0]() is store and found[1] == where:
        return found[2]
    adapted = _adapt(store)
    try:
        _ADAPTED[id(store)] = (weakref.ref(store), where, adapted)
        weakref.finalize(store, _ADAPTED.pop, id(store), None)
    except TypeError:  # not weak-referenceable: adapt again next time
        pass
    return adapted


def _adapt(store: Any) -> Store:
    name = type(store).__name__
    module = type(store).__module__.split(".")[0]
    read_only = bool(getattr(store, "read_only", False))
    if module == "zarrox" and name == "ZarrStoreView":
        # a zarrox store handed to zarr-python and back: the store itself (for a read-only
        # view of a writable store, its read-only twin)
        own: Store = store.store
        return _read_only_twin(own) if read_only and not own.read_only else own
    if module == "zarr" and name == "LocalStore":
        return LocalStore(store.root, read_only=read_only)
    if module == "zarr" and name == "ObjectStore":
        inner = store.store
        if type(inner).__name__ in _RUST_OBSTORES:
            return RustObstoreStore(inner, read_only=read_only)
        if _is_obstore(inner) and type(inner).__name__ == "LocalStore":
            return LocalStore(inner.prefix, read_only=read_only)
    if module == "zarr" and name == "FsspecStore":
        from zarrox.storage.references import from_reference_file_system

        references = from_reference_file_system(store.fs, store.path)
        if references is not None:
            return references
        target = fsspec_target(store.fs, store.path)
        if target is not None and target[0] == "file":
            return LocalStore(store.path, read_only=read_only)
        if target is not None:
            return RustObjectStore(target[0], target[1], read_only=read_only)
    return PythonZarrStore(store)


def _read_only_twin(store: Store) -> Store:
    """``store`` refusing writes: the same keys through the same Rust store."""
    twin = object.__new__(type(store))
    twin.__dict__.update(store.__dict__)
    twin.read_only = True
    return twin


def _is_obstore(store: Any) -> bool:
    """Whether ``store`` is one of obstore's store objects."""
    return type(store).__module__.split(".")[0] == "obstore" and type(store).__name__ in (
        *_RUST_OBSTORES,
        "LocalStore",
        "MemoryStore",
    )


def from_obstore(store: Any) -> Store:
    """The zarrox store for an obstore store object: S3, GCS, Azure and HTTP stores read
    and written by Rust over obstore's configuration, a ``LocalStore`` as zarrox's own
    local store on its directory, a ``MemoryStore`` (whose state only obstore reaches)
    through obstore's functions."""
    if type(store).__name__ == "LocalStore":
        return LocalStore(store.prefix)
    return RustObjectStore(store)  # type: ignore[no-any-return]


def _is_zarr_store(store: Any) -> bool:
    # a zarr-python store exists only once zarr-python is imported: not imported for this
    store_module = sys.modules.get("zarr.abc.store")
    return store_module is not None and isinstance(store, store_module.Store)


def resolve_store(
    store: Any, *, storage_options: Mapping[str, Any] | None = None, mode: str | None = None
) -> Store:
    """A store from what a user passes: a zarrox store, a zarr-python store object, None
    (a new memory store), a dict or other mutable mapping (a memory store keeping its
    values there, as zarr-python's ``MemoryStore(store_dict)``), a local path (``str`` or
    ``os.PathLike``; a path ending in ``.zip`` is a zip archive), or a URL: ``file://``,
    ``memory://``, ``zip://path.zip``, ``s3://``, ``gs://``, ``az://``/``abfs://``,
    ``http(s)://``; kerchunk references: ``reference://`` (their ``fo``,
    ``remote_protocol``, ``remote_options`` in ``storage_options``), a local ``.json``
    file of them or a dict of them (:class:`~zarrox.storage.references.ReferenceStore`).
    Otherwise ``storage_options`` apply to object store URLs only
    (:class:`~zarrox.errors.StorageOptionsError` otherwise, a TypeError as zarr-python
    raises and a ValueError). ``mode`` (zarr-python's ``r``/``r+``/``a``/``w``/``w-``)
    opens a zip archive."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if _references(store):
        from zarrox.storage.references import from_options

        if isinstance(store, str) and store.startswith("reference://"):
            return from_options(store, storage_options)
        return from_options("reference://", {**(storage_options or {}), "fo": store})
    if storage_options and not (isinstance(store, str) and _remote(store)):
        raise StorageOptionsError(
            "'storage_options' was provided but unused. 'storage_options' is only used "
            "when the store is passed as a URL of an object store (s3://, gs://, az://, "
            "http(s)://)."
        )
    if isinstance(store, Store):
        return store
    if store is None:
        return MemoryStore()
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if isinstance(store, bytes):
        store = store.decode()
    if isinstance(store, str):
        return _from_string(store, storage_options, mode)
    if isinstance(store, Mapping) and "driver" in store:
        raise TypeError("a TensorStore spec is opened with zarrox.open(spec)")
    if isinstance(store, MutableMapping):
        return MemoryStore(store)
    if _is_zarr_store(store):
        return from_zarr_store(store)
    if _is_obstore(store):
        return from_obstore(store)
    raise TypeError(f"cannot use {type(store).__name__} as a store")


def _references(store: Any) -> bool:
    """Whether ``store`` names kerchunk references: ``reference://``, a local ``.json``
    file, or a dict of references (see :func:`zarrox.storage.references.is_references`)."""
    if isinstance(store, str):
        if store.startswith("reference://"):
            return True
        if "://" in store:
            return False
        if store.lower().endswith(".json"):
            return os.path.isfile(store)
        return _parquet_references(store)
    if isinstance(store, Mapping) and not isinstance(store, Store):
        from zarrox.storage.references import is_references

        return is_references(store)
    return False


def _parquet_references(path: str) -> bool:
    """Whether ``path`` is a directory of kerchunk Parquet references: its ``.zmetadata``
    has their ``record_size`` (Zarr v2's consolidated metadata, also ``.zmetadata``, has
    not). A directory with a Zarr node at its top is a store: its ``.zmetadata``, which can
    be large, is not read here."""
    nodes = ("zarr.json", ".zgroup", ".zarray")
    if any(os.path.exists(os.path.join(path, name)) for name in nodes):
        return False
    try:
        with open(os.path.join(path, ".zmetadata"), "rb") as f:
            text = f.read()
    except OSError:  # not a directory, no .zmetadata
        return False
    if b'"record_size"' not in text:
        return False
    try:
        meta = json.loads(text)
    except ValueError:
        return False
    return isinstance(meta, dict) and "record_size" in meta and "metadata" in meta


def _remote(url: str) -> bool:
    return "://" in url and url.split("://", 1)[0].lower() in SCHEMES


def _zip_mode(mode: str | None) -> str:
    """The zip archive mode for zarr-python's access mode."""
    return {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "x", None: "a"}.get(mode, "a")


def _from_string(text: str, storage_options: Mapping[str, Any] | None, mode: str | None) -> Store:
    if text.startswith("memory://"):
        return MemoryStore()
    if text.startswith("zip://"):
        return ZipStore(text[len("zip://") :], _zip_mode(mode))
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif "://" in text:
        if _remote(text):
            return RustObjectStore(text, storage_options)
        raise ValueError(
            f"unsupported store URL {text!r}: use a local path, file://, memory://, zip://, "
            "s3://, gs://, az://, abfs:// or http(s)://"
        )
    if text.lower().endswith(".zip") and not os.path.isdir(text):
        return ZipStore(text, _zip_mode(mode))
    return LocalStore(text, read_only=mode == "r")


# -- zarr-python and xarray take zarrox stores ----------------------------------------------
# zarr-python resolves what it is given as a store in one function, make_store (every entry
# point reaches it through make_store_path), which takes only its own Store class and
# offers no hook. zarrox wraps it where zarr-python is imported, without importing it: when
# zarr.storage._common is imported (at once if it is already; zarrox._post_import), a
# zarrox store is replaced by store.as_zarr_store(), anything else passes through as it was.


def _take_zarrox_stores(common: ModuleType) -> None:
    """Make ``common.make_store`` (zarr-python's) take zarrox stores; idempotent."""
    make_store = getattr(common, "make_store", None)
    if make_store is None or getattr(make_store, "_takes_zarrox_stores", False):
        return

    @functools.wraps(make_store)
    async def make_store_taking_zarrox_stores(store_like: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(store_like, Store):
            store_like = store_like.as_zarr_store()
        return await make_store(store_like, *args, **kwargs)

    setattr(make_store_taking_zarrox_stores, "_takes_zarrox_stores", True)  # noqa: B010
    setattr(common, "make_store", make_store_taking_zarrox_stores)  # noqa: B010


when_imported("zarr.storage._common", _take_zarrox_stores)

#: The names these stores had before their names said who does the I/O (Rust, or Python
#: serving the engine's requests); kept so that code written against them keeps working.
ObjectStore = RustObjectStore
ObstoreStore = RustObstoreStore
ObstorePythonStore = PythonObstoreStore
PythonStore = PythonZarrStore
ServedStore = PythonServedStore

from zarrox.storage.references import ReferenceStore  # noqa: E402 - it subclasses Store

__all__ = [
    "LocalStore",
    "MemoryStore",
    "ObjectStore",
    "ObstorePythonStore",
    "ObstoreStore",
    "PythonObstoreStore",
    "PythonServedStore",
    "PythonStore",
    "PythonZarrStore",
    "ReferenceStore",
    "RustObjectStore",
    "RustObstoreStore",
    "ServedStore",
    "Store",
    "ZipStore",
    "from_zarr_store",
    "resolve_store",
]
