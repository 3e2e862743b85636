"""Object stores: S3, GCS, Azure and HTTP by URL (:class:`RustObjectStore`) or as obstore
store objects (:class:`RustObstoreStore` where Rust takes their configuration,
:class:`PythonObstoreStore` where only obstore's own extension reaches their state)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from zarrox._core import StoreHandle
from zarrox.errors import StorageOptionsError
from zarrox.storage.base import Store
from zarrox.storage.local import LocalStore
from zarrox.storage.options import SCHEMES, object_store_options
from zarrox.storage.served import PythonServedStore

if TYPE_CHECKING:
    from zarrox.storage.bridge import Span


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


class _OfObstore:
    """A store over an obstore store object (``obstore``): it pickles as that object does,
    with whether it is read-only."""

    obstore: Any
    read_only: bool

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.obstore!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.obstore,), {"read_only": self.read_only})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.read_only = state["read_only"]


class RustObstoreStore(_OfObstore, Store):
    """An obstore store object (``obstore.store.S3Store``, ``GCSStore``, ``AzureStore``,
    ``HTTPStore``, as zarr-python's ``ObjectStore`` wraps them), read and written by Rust.
    It pickles as the obstore object does."""

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        self.obstore = store
        self.read_only = read_only or type(store).__name__ == "HTTPStore"
        self.handle = StoreHandle.obstore(store, _obstore_url(store))


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


class PythonObstoreStore(_OfObstore, PythonServedStore):
    """An obstore store whose state Rust cannot reach (``obstore.store.MemoryStore``,
    ``LocalStore``: they live in obstore's own extension), read and written through
    obstore's Python functions. It pickles as the obstore object does."""

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        self.obstore = store
        self.read_only = read_only
        self.handle = StoreHandle.caller(_obstore_url(store))

    def _read(self, key: str, span: Span) -> Any:
        import obstore

        with suppress(FileNotFoundError):
            if span is None:
                return obstore.get(self.obstore, key).bytes()
            start, length = span
            if length is None:
                where: Any = {"suffix": -start} if start < 0 else {"offset": start}
                return obstore.get(self.obstore, key, options={"range": where}).bytes()
            if not length:
                return b""
            return obstore.get_range(self.obstore, key, start=start, length=length)
        return None

    def _write(self, key: str, value: bytes) -> None:
        import obstore

        with suppress(FileNotFoundError):
            obstore.put(self.obstore, key, value)

    def _remove(self, key: str) -> None:
        import obstore

        with suppress(FileNotFoundError):
            obstore.delete(self.obstore, key)

    def list_prefix(self, prefix: str) -> list[str]:
        import obstore

        return sorted(
            o["path"] for batch in obstore.list(self.obstore, prefix or None) for o in batch
        )


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
