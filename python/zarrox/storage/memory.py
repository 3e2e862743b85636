"""Memory: :class:`MemoryStore` (Rust's own memory, or a user's mapping as zarr-python's
``MemoryStore(store_dict)`` keeps values there: :class:`DictMemoryStore`)."""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from zarrox._core import StoreHandle, memory_items
from zarrox.storage.base import Store, cut_range
from zarrox.storage.served import PythonServedStore

if TYPE_CHECKING:
    from zarrox.storage.bridge import Span


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

    def _read(self, key: str, span: Span) -> Any:
        value = self.store_dict.get(key)
        if value is None:
            return None
        value = _value_bytes(value)
        return value if span is None else cut_range(value, *span)

    def _write(self, key: str, value: bytes) -> None:
        self.store_dict[key] = _stored_value(value)

    def _remove(self, key: str) -> None:
        self.store_dict.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.store_dict

    def list_prefix(self, prefix: str) -> list[str]:
        return sorted(k for k in self.store_dict if k.startswith(prefix))
