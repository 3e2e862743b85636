"""zarr-python's store objects and zarrox's: a zarr-python store served to the engine (Rust's
own store where one exists, else :class:`PythonZarrStore`), and zarr-python's
``make_store`` wrapped to take zarrox stores when zarr-python is imported (without
importing it here; the view zarr-python is handed, which imports it, is
:mod:`zarrox.storage.zarr_adapter`)."""

from __future__ import annotations

import functools
import sys
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any

from zarrox._core import StoreHandle
from zarrox._post_import import when_imported
from zarrox.storage.base import Store
from zarrox.storage.local import LocalStore
from zarrox.storage.object import _RUST_OBSTORES, RustObjectStore, RustObstoreStore, _is_obstore
from zarrox.storage.options import fsspec_target
from zarrox.storage.served import PythonServedStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from zarr.abc.store import Store as ZarrPythonStore

    from zarrox.storage.bridge import Request, Round


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

    def _perform(self, request: Request) -> Any:
        return self.run(self.answerer.perform(request))

    def _requests(self) -> tuple[Callable[[Request], Any], Round, Callable[[Any], Any]]:
        # fetched concurrently on zarr-python's event loop
        from zarrox.storage.bridge import concurrently

        return self.answerer.perform, concurrently, self.run

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


def _is_zarr_store(store: Any) -> bool:
    # a zarr-python store exists only once zarr-python is imported: not imported for this
    store_module = sys.modules.get("zarr.abc.store")
    return store_module is not None and isinstance(store, store_module.Store)


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
