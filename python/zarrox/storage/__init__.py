"""Stores: where keys and bytes live. LocalStore and MemoryStore are implemented
in Rust; `resolve_store` turns what a user passes (a path, a URL, a store) into one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zarrox._core import StoreHandle


class Store:
    """A key-value store backed by the Rust core."""

    handle: StoreHandle

    def get(self, key: str) -> bytes | None:
        return self.handle.get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        return self.handle.get_range(key, start, length)

    def set(self, key: str, value: bytes) -> None:
        self.handle.set(key, value)

    def delete(self, key: str) -> None:
        self.handle.delete(key)

    def exists(self, key: str) -> bool:
        return self.handle.exists(key)

    def list_prefix(self, prefix: str) -> list[str]:
        return self.handle.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """(keys, sub-directories) directly under ``prefix`` ("" or ending in "/")."""
        return self.handle.list_dir(prefix)

    def delete_prefix(self, prefix: str) -> None:
        self.handle.delete_prefix(prefix)


class LocalStore(Store):
    """A directory on the local filesystem; every write is atomic (temp file + rename)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.handle = StoreHandle.local(os.fspath(self.root))

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalStore) and other.root == self.root

    def __hash__(self) -> int:
        return hash(("LocalStore", self.root))


class MemoryStore(Store):
    """Keys and values held in memory, shared by every node opened on it."""

    def __init__(self) -> None:
        self.handle = StoreHandle.memory()

    def __repr__(self) -> str:
        return f"MemoryStore(<{id(self):#x}>)"


def resolve_store(store: Any) -> Store:
    """A Store from a Store, a path (str or os.PathLike), ``file://...`` or ``memory://``."""
    if isinstance(store, Store):
        return store
    if store is None:
        return MemoryStore()
    if isinstance(store, os.PathLike):
        return LocalStore(store)
    if isinstance(store, str):
        if store.startswith("memory://"):
            return MemoryStore()
        if store.startswith("file://"):
            return LocalStore(store[len("file://") :])
        if "://" in store:
            raise ValueError(f"unsupported store URL {store!r}: use a local path or memory://")
        return LocalStore(store)
    raise TypeError(f"cannot use {type(store).__name__} as a store")


__all__ = ["LocalStore", "MemoryStore", "Store", "resolve_store"]
