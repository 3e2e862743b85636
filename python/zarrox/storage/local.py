"""Local directories: :class:`LocalStore`, read and written by Rust (positioned reads, atomic
writes by rename, generations from file identity)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zarrox._core import StoreHandle
from zarrox.storage.base import Store


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
