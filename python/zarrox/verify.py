"""Checking that every stored chunk of an array (or of every array below a group) decodes:
``zarrox.verify.verify(store)`` and ``zarrox verify STORE``.

Each stored object (a shard, or a chunk when the array is not sharded) is decoded by the Rust
core with its whole codec chain, so checksums (crc32c, zstd's content checksum, numcodecs'
crc32/adler32/fletcher32) are checked and truncated or garbled bytes are found. Chunks not in
the store are listed as missing: they read as the fill value, which is not an error unless
asked (``missing_is_error``). Keys below an array that are no chunk of its grid are listed as
unexpected.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from zarrox.array import Array
from zarrox.errors import ChecksumError, ZarroxError
from zarrox.group import Group
from zarrox.nodes.node import NODE_KEYS, V2_ATTRS_KEY
from zarrox.transfer import BLOCK_BYTES, block_shape, regions

#: called after each block of an array with (bytes checked so far, bytes in all arrays)
Progress = Callable[[int, int], None]


@dataclass
class ChunkProblem:
    """A stored object that does not decode."""

    key: str
    kind: str  # "checksum" (a checksum does not match) or "corrupt" (any other failure)
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "kind": self.kind, "message": self.message}


@dataclass
class ArrayReport:
    """What :func:`verify` found in one array."""

    path: str
    objects: int  # objects of the grid (shards, or chunks)
    stored: int
    missing: list[str] = field(default_factory=list)
    corrupt: list[ChunkProblem] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    error: str | None = None  # the array could not be opened at all

    @property
    def ok(self) -> bool:
        return self.error is None and not self.corrupt

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": "/" + self.path,
            "objects": self.objects,
            "stored": self.stored,
            "missing": self.missing,
            "corrupt": [p.to_dict() for p in self.corrupt],
            "unexpected": self.unexpected,
            "error": self.error,
            "ok": self.ok,
        }


@dataclass
class Report:
    """What :func:`verify` found in every array checked."""

    arrays: list[ArrayReport]

    def ok(self, missing_is_error: bool = False) -> bool:
        return all(a.ok and not (missing_is_error and a.missing) for a in self.arrays)

    def to_dict(self, missing_is_error: bool = False) -> dict[str, Any]:
        return {
            "ok": self.ok(missing_is_error),
            "arrays": [a.to_dict() for a in self.arrays],
            "corrupt": sum(len(a.corrupt) for a in self.arrays),
            "missing": sum(len(a.missing) for a in self.arrays),
        }


def _kind(error: Exception) -> str:
    return "checksum" if isinstance(error, ChecksumError) else "corrupt"


def _grid(array: Array) -> tuple[int, ...]:
    return array.shards or array.chunks


def _object_region(coords: tuple[int, ...], array: Array) -> tuple[slice, ...]:
    grid = _grid(array)
    return tuple(
        slice(c * g, min((c + 1) * g, n)) for c, g, n in zip(coords, grid, array.shape, strict=True)
    )


def _check_one(array: Array, key: str, coords: tuple[int, ...]) -> ChunkProblem | None:
    try:
        array.get_basic_selection(_object_region(coords, array))
    except (ZarroxError, ValueError, OSError) as e:
        return ChunkProblem(key, _kind(e), str(e))
    return None


def verify_array(
    array: Array, progress: Callable[[int], None] | None = None, block_bytes: int | None = None
) -> ArrayReport:
    """Decode every stored object of ``array``; ``progress`` gets the bytes checked after each
    block. Blocks of many objects are read at once; a block that fails is read again one
    object at a time to name each bad one."""
    grid = _grid(array)
    cells = tuple(-(-n // g) for n, g in zip(array.shape, grid, strict=True))
    expected = {
        array._handle.chunk_key(list(coords)): coords
        for coords in itertools.product(*(range(c) for c in cells))
    }
    stored = {
        key: tuple(int(c) for c in coords)
        for key, coords in array._stored_chunks()
        if key in expected
    }
    report = ArrayReport(
        path=array.path,
        objects=len(expected),
        stored=len(stored),
        missing=sorted(k for k in expected if k not in stored),
    )
    # keys below the array that are neither its metadata nor a chunk of its grid (arrays
    # have no children, so nothing else belongs there)
    prefix = array.path + "/" if array.path else ""
    metadata = {prefix + k for k in (*NODE_KEYS, V2_ATTRS_KEY)}
    report.unexpected = sorted(
        k for k in array.store.list_prefix(prefix) if k not in metadata and k not in stored
    )
    if not array.shape or math.prod(array.shape) == 0:
        for key, coords in stored.items():
            problem = _check_one(array, key, coords)
            if problem is not None:
                report.corrupt.append(problem)
        return report
    itemsize = max(array.dtype.itemsize, 1) if array.dtype.kind not in "OT" else 16
    target = BLOCK_BYTES if block_bytes is None else block_bytes
    step = block_shape(array.shape, grid, itemsize, target)
    by_coords = {coords: key for key, coords in stored.items()}
    for region in regions(array.shape, step):
        try:
            array.get_basic_selection(region)
        except (ZarroxError, ValueError, OSError):
            for coords in _objects_in(region, grid):
                found = by_coords.get(coords)
                if found is not None:
                    problem = _check_one(array, found, coords)
                    if problem is not None:
                        report.corrupt.append(problem)
        if progress is not None:
            progress(math.prod(s.stop - s.start for s in region) * itemsize)
    report.corrupt.sort(key=lambda p: p.key)
    return report


def _objects_in(region: tuple[slice, ...], grid: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    axes = [range(s.start // g, -(-s.stop // g)) for s, g in zip(region, grid, strict=True)]
    return itertools.product(*axes)


def verify(
    store: Any,
    *,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> Report:
    """Check every array at or below ``path`` of ``store``; see the module docstring."""
    from zarrox.api import open_node

    extra: dict[str, Any] = {"storage_options": storage_options} if storage_options else {}
    node = open_node(store, path=path, mode="r", **extra)
    arrays: list[Array] = []
    reports: list[ArrayReport] = []
    if isinstance(node, Array):
        arrays.append(node)
    else:
        assert isinstance(node, Group)
        try:
            members = node.members(max_depth=None)
        except ZarroxError as e:
            return Report([ArrayReport(node.path, 0, 0, error=str(e))])
        arrays.extend(a for _, a in members if isinstance(a, Array))
    total = sum(a.nbytes if a.dtype.kind not in "OT" else a.size * 16 for a in arrays)
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    for array in arrays:
        try:
            reports.append(verify_array(array, advance))
        except ZarroxError as e:
            reports.append(ArrayReport(array.path, 0, 0, error=str(e)))
    return Report(reports)


__all__ = ["ArrayReport", "ChunkProblem", "Report", "verify", "verify_array"]
