"""What the implementation scripts of the field's suite share (see README.md beside this
file): the data's values, the command line every script takes, and the ways of reading
chunk by chunk.

Each ``<implementation>.py`` beside this file imports its library first, then this module
(numpy and the standard library only, so the imports a script's process time includes are
its library's), and hands :func:`main` the few calls that differ between libraries.

    python <implementation>.py read PATH --read-all
    python <implementation>.py read PATH --concurrent-chunks N     # N = 1: a loop, one call
                                                                   # at a time; N > 1: asyncio,
                                                                   # N in flight; 0: all at once
    python <implementation>.py roundtrip PATH OUTPUT               # read PATH, write a copy

``--check`` also compares what was read with the values the data were generated from (the
runner's untimed warm-up round passes it). The script prints ``elapsed_s <seconds>``, the
time of the operation alone (after imports and opening); the runner times the whole process.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the three datasets: name -> (directory name, zstd?, inner chunk shape of a shard)
DATASETS: dict[str, tuple[str, bool, int | None]] = {
    "uncompressed": ("benchmark.zarr", False, None),
    "zstd": ("benchmark_compress.zarr", True, None),
    "sharded": ("benchmark_compress_shard.zarr", True, 64),
}
#: the suite's chunk (shard) edge and array edge at full scale
CHUNK = 256
FULL = 1024
#: what a script prints when its library cannot do the operation (the runner shows "-")
UNSUPPORTED = "unsupported:"

Region = tuple[slice, ...]


def expected(region: Region) -> np.ndarray:
    """The generator's values over ``region`` (3-D): ``(x + y*y // 32 + z**3) % 65536`` with
    z the first dimension and x the last, as the suite's ``generate_benchmark_array.rs``.
    uint16 sums wrap modulo 65536, so each term is reduced first and the sum broadcast."""
    z, y, x = (np.arange(s.start, s.stop, dtype=np.uint64) for s in region)
    zt = (z * z * z % 65536).astype(np.uint16)
    yt = (y * y // 32 % 65536).astype(np.uint16)
    xt = (x % 65536).astype(np.uint16)
    out: np.ndarray = zt[:, None, None] + yt[None, :, None] + xt[None, None, :]
    return out


def chunk_regions(shape: Sequence[int], chunks: Sequence[int]) -> Iterator[Region]:
    """The chunk-shaped regions that tile ``shape``, in C order, the last ones clipped."""
    axes = [
        [slice(i, min(i + c, n)) for i in range(0, n, c)]
        for n, c in zip(shape, chunks, strict=True)
    ]
    return itertools.product(*axes)


def check(region: Region, value: Any, what: str) -> None:
    """Raise when ``value`` differs from the generated values over ``region``: compared a
    slab of the first dimension at a time, so that the check's temporaries stay small."""
    got = np.asarray(value)
    shape = tuple(s.stop - s.start for s in region)
    if got.shape != shape or got.dtype != np.uint16:
        raise AssertionError(f"{what}: got {got.dtype} {got.shape}, want uint16 {shape}")
    z0 = region[0].start
    step = max(1, (1 << 22) // max(1, shape[1] * shape[2]))
    for i in range(0, shape[0], step):
        sub = (slice(z0 + i, z0 + min(i + step, shape[0])), *region[1:])
        if not np.array_equal(got[i : i + step], expected(sub)):
            raise AssertionError(f"{what}: values differ in {sub}")


@dataclass
class Library:
    """The calls of one implementation. ``open`` returns a handle the others take;
    ``chunk_shape`` is the shape of its stored objects (shards, else chunks: the suite reads
    a sharded array shard by shard); ``read_chunks`` replaces the generic chunk loops (dask
    schedules them itself); ``roundtrip`` reads ``path`` and writes a copy at ``output``
    with the same layout and codecs; ``open_async``, where given, opens the handle that
    ``read_async`` takes (else it takes ``open``'s)."""

    open: Callable[[str], Any]
    shape: Callable[[Any], Sequence[int]]
    chunk_shape: Callable[[Any], Sequence[int]]
    read_all: Callable[[Any], Any]
    read: Callable[[Any, Region], Any] | None = None
    read_async: Callable[[Any, Region], Awaitable[Any]] | None = None
    read_chunks: Callable[[Any, int, Callable[[Region, Any], None] | None], None] | None = None
    roundtrip: Callable[[str, str], None] | None = None
    open_async: Callable[[str], Awaitable[Any]] | None = None


async def _read_chunks(
    lib: Library, path: str, handle: Any, concurrent: int, verify: bool
) -> tuple[int, float]:
    """Read every stored object's region: one call at a time (``concurrent`` 1), or from
    asyncio with ``concurrent`` reads in flight (0: all at once, one task each). Returns the
    number of reads and the seconds they took."""
    async_handle = handle
    if lib.open_async is not None and concurrent != 1:
        async_handle = await lib.open_async(path)
    start = time.perf_counter()
    calls = await _read_regions(lib, handle, async_handle, concurrent, verify)
    return calls, time.perf_counter() - start


async def _read_regions(
    lib: Library, handle: Any, async_handle: Any, concurrent: int, verify: bool
) -> int:
    regions = list(chunk_regions(lib.shape(handle), lib.chunk_shape(handle)))

    def seen(region: Region, value: Any) -> None:
        if verify:
            check(region, value, f"chunk {region}")

    if lib.read_chunks is not None:
        lib.read_chunks(handle, concurrent, seen if verify else None)
        return len(regions)
    if concurrent == 1:
        if lib.read is None:
            raise NotImplementedError("no synchronous read")
        for region in regions:
            seen(region, lib.read(handle, region))
        return len(regions)
    read_async = lib.read_async
    if read_async is None:
        raise NotImplementedError("no asynchronous read")
    limit = asyncio.Semaphore(concurrent) if concurrent > 1 else None

    async def one(region: Region) -> None:
        if limit is None:
            seen(region, await read_async(async_handle, region))
            return
        async with limit:
            seen(region, await read_async(async_handle, region))

    async with asyncio.TaskGroup() as tasks:
        for region in regions:
            tasks.create_task(one(region))
    return len(regions)


def main(lib: Library, argv: Sequence[str] | None = None) -> int:
    """The command line of every implementation script (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="op", required=True)
    read = sub.add_parser("read")
    read.add_argument("path")
    how = read.add_mutually_exclusive_group(required=True)
    how.add_argument("--read-all", action="store_true")
    how.add_argument("--concurrent-chunks", type=int)
    read.add_argument("--check", action="store_true")
    trip = sub.add_parser("roundtrip")
    trip.add_argument("path")
    trip.add_argument("output")
    trip.add_argument("--check", action="store_true")  # the runner checks the copy
    args = parser.parse_args(argv)

    if args.op == "roundtrip":
        if lib.roundtrip is None:
            print(UNSUPPORTED, "this library writes no arrays")
            return 0
        start = time.perf_counter()
        lib.roundtrip(args.path, args.output)
        elapsed = time.perf_counter() - start
        print(f"elapsed_s {elapsed:.4f}")
        return 0

    handle = lib.open(args.path)
    if args.read_all:
        start = time.perf_counter()
        value = lib.read_all(handle)
        elapsed = time.perf_counter() - start
        print("shape", json.dumps(list(np.shape(value))))
        if args.check:
            check(tuple(slice(0, n) for n in lib.shape(handle)), value, "read all")
    else:
        try:
            calls, elapsed = asyncio.run(
                _read_chunks(lib, args.path, handle, args.concurrent_chunks, args.check)
            )
        except NotImplementedError as e:
            print(UNSUPPORTED, e)
            return 0
        print("reads", calls)
    print(f"elapsed_s {elapsed:.4f}")
    return 0


def run(lib: Library) -> None:
    sys.exit(main(lib))
