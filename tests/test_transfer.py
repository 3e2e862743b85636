"""Copies block by block (``zarrox.transfer.copy_values``, what ``from_array``, ``copy``,
``convert`` and ``zarrox copy`` use): the next block is read on a thread of its own while the
current one is written, at most one block ahead; the values arrive exactly; a failing read
or write raises its own exception and leaves no thread behind."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from zarrox.transfer import block_shape, copy_values, regions

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "zarrox-copy-reader"]


@pytest.fixture(autouse=True)
def _no_thread_left() -> Any:
    yield
    assert readers() == []


class Source:
    """An array-like over ``values`` (not a numpy array, so it is read on the reader thread)
    that records its reads and can fail at one."""

    def __init__(self, values: np.ndarray, fail_at: int | None = None) -> None:
        self.values = values
        self.shape = values.shape
        self.dtype = values.dtype
        self.fail_at = fail_at
        self.reads: list[tuple[slice, ...]] = []
        self.read_two = threading.Event()

    def __getitem__(self, region: tuple[slice, ...]) -> np.ndarray:
        if len(self.reads) == self.fail_at:
            raise KeyError(f"no block at {region}")
        self.reads.append(region)
        if len(self.reads) == 2:
            self.read_two.set()
        return self.values[region].copy()


class Dest:
    """An array-like sink that records its writes (with the reads done at each) and can fail
    at one."""

    def __init__(self, like: Any, fail_at: int | None = None, shards: Any = None) -> None:
        self.shape = like.shape
        self.dtype = like.dtype
        self.chunks = like.chunks
        self.shards = shards
        self.out = np.zeros(like.shape, like.dtype)
        self.fail_at = fail_at
        self.writes: list[tuple[slice, ...]] = []
        self.bases: list[np.ndarray] = []
        self.source: Source | None = None
        self.reads_at_write: list[int] = []

    def __setitem__(self, region: tuple[slice, ...], values: np.ndarray) -> None:
        if len(self.writes) == self.fail_at:
            raise OSError(28, "No space left on device")
        if self.source is not None:
            self.reads_at_write.append(len(self.source.reads))
        base = values.base if isinstance(values.base, np.ndarray) else values
        if not any(base is b for b in self.bases):
            self.bases.append(base)
        self.out[region] = values
        self.writes.append(region)


def _make(path: Path, values: np.ndarray, chunks: Any, shards: Any = None) -> zarrox.Array:
    a = zarrox.create_array(
        str(path),
        shape=values.shape,
        dtype=values.dtype,
        chunks=chunks,
        shards=shards,
        compressors=ZSTD,
    )
    a[...] = values
    return a


@pytest.mark.parametrize(
    ("shape", "chunks", "shards", "dst_chunks", "dst_shards"),
    [
        ((37, 41, 29), (8, 8, 8), None, (8, 8, 8), None),  # edge chunks in every dimension
        ((37, 41, 29), (4, 8, 4), (8, 16, 8), (5, 6, 7), None),  # sharded to other chunks
        ((64, 48), (16, 16), None, (4, 8), (16, 16)),  # to sharded
        ((50, 33), (5, 4), (10, 12), (5, 4), (10, 12)),  # sharded both, partial shards
        ((1000,), (64,), None, (30,), (90,)),
        ((3, 4, 5, 6), (2, 2, 2, 2), None, (3, 1, 5, 4), None),
    ],
)
def test_values_copied_exactly(
    tmp_path: Path,
    shape: tuple[int, ...],
    chunks: tuple[int, ...],
    shards: tuple[int, ...] | None,
    dst_chunks: tuple[int, ...],
    dst_shards: tuple[int, ...] | None,
) -> None:
    values = np.random.default_rng(len(shape)).integers(0, 60000, shape).astype("u2")
    src = _make(tmp_path / "src.zarr", values, chunks, shards)
    for target in (1, 2000, 10**9):  # a block of one stored object, a few, all of them
        dst = zarrox.create_array(
            str(tmp_path / f"dst-{target}.zarr"),
            shape=shape,
            dtype="u2",
            chunks=dst_chunks,
            shards=dst_shards,
            compressors=ZSTD,
        )
        seen: list[int] = []
        n = copy_values(src, dst, target=target, progress=lambda done, _, s=seen: s.append(done))
        assert n == values.size and seen[-1] == values.size
        assert seen == sorted(seen)
        np.testing.assert_array_equal(dst[...], values)


def test_from_array_and_copy_of_sharded_arrays(tmp_path: Path) -> None:
    values = np.arange(40 * 30 * 20, dtype="i4").reshape(40, 30, 20)
    src = _make(tmp_path / "src.zarr", values, (5, 5, 5), (10, 15, 20))
    copy = zarrox.from_array(str(tmp_path / "copy.zarr"), data=src)
    assert copy.shards == src.shards and copy.chunks == src.chunks
    np.testing.assert_array_equal(copy[...], values)
    group = zarrox.open_group(str(tmp_path / "g.zarr"), mode="w")
    zarrox.copy(src, group, name="again")
    np.testing.assert_array_equal(group["again"][...], values)


def test_strings_and_array_likes_are_copied_too(tmp_path: Path) -> None:
    words = np.array([f"w{i}" * (i % 4) for i in range(70)], dtype=object).reshape(7, 10)
    src = zarrox.create_array(str(tmp_path / "s.zarr"), shape=(7, 10), dtype=str, chunks=(2, 3))
    src[...] = words
    dst = zarrox.from_array(str(tmp_path / "t.zarr"), data=src)
    assert dst[...].tolist() == words.tolist()
    values = np.arange(300, dtype="f8").reshape(15, 20)
    sink = zarrox.create_array(str(tmp_path / "f.zarr"), shape=(15, 20), dtype="f8", chunks=(4, 6))
    copy_values(Source(values), sink, target=1)
    np.testing.assert_array_equal(sink[...], values)


def test_the_next_block_is_read_while_one_is_written() -> None:
    """The first write waits until the second block has been read: without a reader running
    ahead it would wait in vain (and fail); the reader never runs more than a block ahead
    of the write being made (reads at each write <= its index + 2)."""
    values = np.arange(24 * 10, dtype="i8").reshape(24, 10)
    source = Source(values)
    dest = Dest(zarrox.zeros((24, 10), chunks=(2, 10), dtype="i8"))
    dest.source = source
    real = Dest.__setitem__

    def wait_then_write(self: Dest, region: tuple[slice, ...], v: np.ndarray) -> None:
        if not self.writes:
            assert source.read_two.wait(30), "block 2 was not read while block 1 was written"
        real(self, region, v)

    Dest.__setitem__ = wait_then_write  # type: ignore[method-assign]
    try:
        copy_values(source, dest, target=1)
    finally:
        Dest.__setitem__ = real  # type: ignore[method-assign]
    np.testing.assert_array_equal(dest.out, values)
    assert len(dest.writes) == 12
    assert all(reads <= k + 2 for k, reads in enumerate(dest.reads_at_write))


def test_a_zarrox_source_is_decoded_into_two_buffers_in_turn(tmp_path: Path) -> None:
    values = np.random.default_rng(1).integers(0, 9, (40, 12, 12)).astype("u1")
    src = _make(tmp_path / "src.zarr", values, (4, 12, 12))
    dest = Dest(src)
    copy_values(src, dest, target=4 * 12 * 12)  # ten blocks of one chunk
    np.testing.assert_array_equal(dest.out, values)
    assert len(dest.writes) == 10
    assert len(dest.bases) == 2


@pytest.mark.parametrize("fail_at", [0, 1, 5])
def test_a_failing_read_raises_its_error_and_joins_the_reader(fail_at: int) -> None:
    values = np.arange(80, dtype="i2").reshape(8, 10)
    source = Source(values, fail_at=fail_at)
    dest = Dest(zarrox.zeros((8, 10), chunks=(1, 10), dtype="i2"))
    with pytest.raises(KeyError, match="no block at"):
        copy_values(source, dest, target=1)
    assert len(dest.writes) <= fail_at
    assert readers() == []


@pytest.mark.parametrize("fail_at", [0, 3])
def test_a_failing_write_raises_its_error_and_stops_the_reader(fail_at: int) -> None:
    values = np.arange(800, dtype="i2").reshape(80, 10)
    source = Source(values)
    dest = Dest(zarrox.zeros((80, 10), chunks=(1, 10), dtype="i2"), fail_at=fail_at)
    with pytest.raises(OSError, match="No space left") as info:
        copy_values(source, dest, target=1)
    assert info.value.errno == 28
    assert readers() == []
    assert len(source.reads) <= fail_at + 3  # the reader stopped soon after


def test_a_corrupt_chunk_raises_what_a_read_raises(tmp_path: Path) -> None:
    values = np.arange(16 * 8, dtype="u2").reshape(16, 8)
    src = _make(tmp_path / "src.zarr", values, (2, 8))
    (tmp_path / "src.zarr" / "c" / "5" / "0").write_bytes(b"not zstd at all")
    with pytest.raises(Exception) as direct:
        src[10:12]
    dst = zarrox.create_array(str(tmp_path / "d.zarr"), shape=(16, 8), dtype="u2", chunks=(2, 8))
    with pytest.raises(type(direct.value)) as copied:
        copy_values(src, dst, target=1)
    assert str(copied.value) == str(direct.value)
    assert readers() == []
    np.testing.assert_array_equal(dst[:10], values[:10])  # the blocks before it were written


def test_blocks_stack_whole_objects_along_the_first_dimension() -> None:
    # 256^3 uint16 chunks: two stacked (a chunk is one contiguous run of the block)
    assert block_shape((1024,) * 3, (256,) * 3, 2, 64 << 20, stack=True) == (512, 256, 256)
    assert block_shape((1024,) * 3, (256,) * 3, 2, 64 << 20) == (256, 256, 512)
    assert block_shape((300, 1000), (100, 100), 8, 800_000, stack=True) == (300, 300)
    assert block_shape((3, 7), (2, 2), 1, 1, stack=True) == (2, 2)
    for step in ((2, 2), (300, 300)):
        seen = np.zeros((300, 1000), "i1")
        for region in regions((300, 1000), step):
            seen[region] += 1
        assert (seen == 1).all()


def test_values_in_memory_and_python_served_stores_are_copied_in_one_thread() -> None:
    """Nothing to read ahead for values in memory; one store object served in Python (a
    user's mapping) is not read and written from two threads at once."""
    from zarrox.transfer import _overlaps

    values = np.arange(60, dtype="i4").reshape(6, 10)
    arr = zarrox.zeros((6, 10), chunks=(1, 10), dtype="i4")
    assert not _overlaps(values, arr)
    assert _overlaps(Source(values), arr)
    mapping: dict[str, bytes] = {}
    a = zarrox.create_array(mapping, name="a", shape=(6, 10), chunks=(1, 10), dtype="i4")
    b = zarrox.create_array(mapping, name="b", shape=(6, 10), chunks=(1, 10), dtype="i4")
    assert not a._handle.in_rust and not b._handle.in_rust
    assert not _overlaps(a, b)
    assert _overlaps(a, arr) and _overlaps(arr, b)
    a[...] = values
    copy_values(a, b, target=1)
    np.testing.assert_array_equal(b[...], values)
