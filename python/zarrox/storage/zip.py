"""Zip archives: :class:`ZipStore`, as zarr-python's ``ZipStore`` writes them, read and
written by Rust."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zarrox._core import StoreHandle
from zarrox.storage.base import Store


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
