"""What ``Array.info`` shows (zarr-python's ``ArrayInfo``): the array's description, its
storage, and the process's caches it reads through."""

from __future__ import annotations

from typing import Any

from zarrox import _core
from zarrox.errors import StoreError


class ArrayInfo:
    """What ``Array.info`` shows."""

    def __init__(self, array: Any) -> None:
        # ``array``: a zarrox.Array (not imported: array.py imports this module)
        a = array
        self.type = "Array"
        self.name = a.name
        self.zarr_format = a.zarr_format
        self.data_type = a.metadata.data_type
        self.dtype = a.dtype
        self.shape = a.shape
        # Shapes a rectilinear grid does not have show as zarr-python 3.4 shows them.
        sharded = a._sharding_config() is not None
        rect = a._rectilinear is not None
        self.chunks: Any = "<variable>" if rect and not sharded else a.chunks
        self.shards: Any = "<variable>" if rect and sharded else a.shards
        self.fill_value = a.fill_value
        self.read_only = a.read_only
        self.store = repr(a.store)
        # The chain the core runs, whatever the format described it as.
        self.codecs = [str(c["name"]) for c in a._core["codecs"]]
        self.nbytes = a.nbytes
        self.nbytes_stored = a.nbytes_stored()
        self.nobjects_initialized = a.nshards_initialized
        self.nobjects = a.nshards
        self.attributes = len(a.attrs)
        self.conditional_writes = _conditional_writes_text(a)
        #: the process's shard index cache: entries, bytes, limit, hits, misses
        self.shard_index_cache = _core.shard_index_cache()
        #: the decoded-chunk cache the array reads through (the process's, ``cache.bytes``,
        #: or a TensorStore spec's ``cache_pool``): entries, bytes, limit, hits, misses
        self.chunk_cache = a._handle.cache_stats()

    @property
    def compression_ratio(self) -> float:
        return self.nbytes / self.nbytes_stored if self.nbytes_stored else float("nan")

    def __repr__(self) -> str:
        rows = [
            ("Type", self.type),
            ("Name", self.name),
            ("Zarr format", self.zarr_format),
            ("Data type", f"{self.data_type} ({self.dtype})"),
            ("Shape", self.shape),
            ("Chunk shape", self.chunks),
            ("Shard shape", self.shards if self.shards is not None else "not sharded"),
            ("Fill value", repr(self.fill_value)),
            ("Codecs", ", ".join(self.codecs)),
            ("Read-only", self.read_only),
            ("Store", self.store),
            ("Conditional writes", self.conditional_writes),
            ("Attributes", self.attributes),
            ("Stored objects", f"{self.nobjects_initialized} of {self.nobjects}"),
            ("No. bytes", f"{self.nbytes} ({_human(self.nbytes)})"),
            ("No. bytes stored", f"{self.nbytes_stored} ({_human(self.nbytes_stored)})"),
            ("Compression ratio", f"{self.compression_ratio:.2f}"),
            ("Shard index cache", _cache_text(self.shard_index_cache)),
            ("Chunk cache", _cache_text(self.chunk_cache) if self.chunk_cache["limit"] else "off"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}} : {v}" for k, v in rows)

    __str__ = __repr__


def _cache_text(stats: dict[str, int]) -> str:
    """A cache's use in words (the whole process's)."""
    return (
        f"{_human(stats['bytes'])} of {_human(stats['limit'])} "
        f"({stats['entries']} entries), {stats['hits']} hits, {stats['misses']} misses"
    )


def _conditional_writes_text(a: Any) -> str:
    """Whether writes that merge into stored chunks and metadata are conditional on what
    they read (``io.conditional_writes`` and what the store can do)."""
    if a.read_only:
        return "not used (read-only)"
    mode = _core.get_conditional_writes()
    if mode == "off":
        return "off (io.conditional_writes): the last writer wins"
    try:
        able = a.store.conditional_writes()
    except StoreError as e:  # the probe could not write (credentials, a server error)
        return f"unknown: the store could not be asked ({e})"
    if able:
        return f"yes ({mode}): merges commit only on the version they read"
    if mode == "require":
        return "required, but this store cannot: writes that merge fail"
    return "no: this store cannot write on condition; the last writer wins"


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TiB"
