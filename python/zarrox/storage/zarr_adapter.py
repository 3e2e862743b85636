"""zarrox stores as zarr-python sees them: :class:`ZarrStoreView`, a
``zarr.abc.store.Store`` over a zarrox store (``store.as_zarr_store()``).

zarr-python's store API has the names of zarrox's (``get``, ``set``, ``exists``,
``delete``, ``list_prefix``, ``list_dir``) with other signatures, and async: one object
cannot answer both, so zarr-python is given this view, which reads and writes through the
zarrox store (in worker threads, so that zarr-python's event loop keeps many requests in
flight; its synchronous methods, which zarr-python 3.4 uses where it can, call the store
directly). This module imports zarr-python: it is imported only when a view is asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from zarr.abc.store import (
    ByteRequest,
    OffsetByteRequest,
    RangeByteRequest,
    Store,
    SuffixByteRequest,
)
from zarr.core.buffer import Buffer, BufferPrototype, default_buffer_prototype

if TYPE_CHECKING:
    from zarrox.storage import Store as ZarroxStore


def _read(store: ZarroxStore, key: str, byte_range: ByteRequest | None) -> bytes | None:
    """The bytes of ``key`` in ``byte_range`` (None: all of them); None when missing."""
    if byte_range is None:
        return store.get(key)
    if isinstance(byte_range, RangeByteRequest):
        length = max(byte_range.end - byte_range.start, 0)
        return store.get_range(key, byte_range.start, length)
    if isinstance(byte_range, OffsetByteRequest):
        return store.get_range(key, byte_range.offset, None)
    if isinstance(byte_range, SuffixByteRequest):
        if not byte_range.suffix:
            return b"" if store.exists(key) else None
        return store.get_range(key, -byte_range.suffix, None)
    raise TypeError(f"unexpected byte range {byte_range!r}")


class ZarrStoreView(Store):
    """A zarrox store (``store``) as a zarr-python store: what ``store.as_zarr_store()``
    returns, and what zarr-python (and xarray through it) uses where it is given a zarrox
    store. Reads and writes go to the zarrox store; ``read_only`` (or the store's own)
    refuses writes. It pickles as the zarrox store does."""

    supports_writes: bool = True
    supports_listing: bool = True

    def __init__(self, store: ZarroxStore, *, read_only: bool = False) -> None:
        super().__init__(read_only=read_only or bool(store.read_only))
        self.store = store

    @property
    def supports_deletes(self) -> bool:
        """Whether keys can be removed (not from a zip archive)."""
        return bool(getattr(self.store, "supports_deletes", True))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_view, (self.store, self.read_only))

    def with_read_only(self, read_only: bool = False) -> ZarrStoreView:
        return ZarrStoreView(self.store, read_only=read_only)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ZarrStoreView)
            and other.store == self.store
            and other.read_only == self.read_only
        )

    def __hash__(self) -> int:
        return hash(("ZarrStoreView", self.store))

    def __repr__(self) -> str:
        return f"ZarrStoreView({self.store!r})"

    def __str__(self) -> str:
        return self.store.url

    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        value = await asyncio.to_thread(_read, self.store, key, byte_range)
        return None if value is None else prototype.buffer.from_bytes(value)

    async def get_partial_values(
        self,
        prototype: BufferPrototype,
        key_ranges: Iterable[tuple[str, ByteRequest | None]],
    ) -> list[Buffer | None]:
        return list(await asyncio.gather(*(self.get(k, prototype, r) for k, r in key_ranges)))

    async def exists(self, key: str) -> bool:
        return await asyncio.to_thread(self.store.exists, key)

    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.set, key, value.to_bytes())

    async def delete(self, key: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.delete, key)

    async def delete_dir(self, prefix: str) -> None:
        self._check_writable()
        prefix = prefix.rstrip("/")
        await asyncio.to_thread(self.store.delete_prefix, f"{prefix}/" if prefix else "")

    async def list(self) -> AsyncIterator[str]:
        for key in await asyncio.to_thread(self.store.list_prefix, ""):
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in await asyncio.to_thread(self.store.list_prefix, prefix):
            yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        prefix = prefix.rstrip("/")
        keys, dirs = await asyncio.to_thread(self.store.list_dir, f"{prefix}/" if prefix else "")
        for name in (*keys, *dirs):
            yield name

    def close(self) -> None:
        """Make the writes so far visible (a zip archive's directory); the zarrox store
        stays open (it is the caller's)."""
        self.store.flush()
        super().close()

    # zarr-python 3.4's synchronous store surface (SupportsSyncStore)
    def get_sync(
        self,
        key: str,
        *,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        value = _read(self.store, key, byte_range)
        if value is None:
            return None
        return (prototype or default_buffer_prototype()).buffer.from_bytes(value)

    def set_sync(self, key: str, value: Buffer) -> None:
        self._check_writable()
        self.store.set(key, value.to_bytes())

    def delete_sync(self, key: str) -> None:
        self._check_writable()
        self.store.delete(key)


def _view(store: ZarroxStore, read_only: bool) -> ZarrStoreView:
    return ZarrStoreView(store, read_only=read_only)
