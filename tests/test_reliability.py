"""Hostile inputs: chunk headers that claim huge sizes, decompression bombs, chunks too large
to allocate. Each is read or written in a child process under an address-space limit, where
an allocation the limit refuses aborts the process unless zarrox asks for memory fallibly and
never allocates beyond a chunk's decoded size: the child must raise a zarrox error (or
MemoryError) and exit normally."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox

#: decoded size of the chunks below (1 MiB of uint8)
CHUNK = 1 << 20
#: address space the child may use beyond what it holds after a warm-up read
HEADROOM = 1 << 30

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import zarrox

    path, name, action = sys.argv[1], sys.argv[2], sys.argv[3]
    zarrox.config.set({"threading.max_workers": 2})
    a = zarrox.open_array(path, path=name, mode="r" if action == "read" else "a")
    a[0:0]  # warm up: thread pool, codec contexts
    with open("/proc/self/status") as f:
        vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
    limit = vm + int(sys.argv[4])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        if action == "read":
            a[...]
        else:
            a[0] = 1
        result = {"outcome": "ok"}
    except Exception as e:  # the test asserts which class: zarrox's documented one (a
        # per-codec CorruptChunkError's base), else the builtin's
        documented = [c for c in type(e).__mro__ if c.__name__ in zarrox.errors.__all__]
        result = {"outcome": (documented or [type(e)])[0].__name__, "message": str(e)}
    print(json.dumps(result))
    """
)


def put_chunk(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def run_child(path: Path, name: str, action: str) -> dict[str, Any]:
    """Read (or write one element of) array `name` under `path` in a child process whose
    address space is limited to what it uses plus HEADROOM."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), name, action, str(HEADROOM)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"MALLOC_ARENA_MAX": "2", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


ZEROS = bytes(64 << 20)


def zstd_frame_claiming(size: int) -> bytes:
    """A 16-byte zstd frame whose header declares `size` decoded bytes (single segment, 8-byte
    content size) and whose only block is an empty raw block."""
    return b"\x28\xb5\x2f\xfd" + b"\xe0" + size.to_bytes(8, "little") + b"\x01\x00\x00"


def blosc_header_claiming(size: int) -> bytes:
    """A 16-byte blosc header (version 2, byte shuffle, typesize 1) declaring `size` bytes."""
    return bytes([2, 1, 1, 1]) + b"".join(v.to_bytes(4, "little") for v in (size, 1 << 16, 16))


def gzip_bomb() -> bytes:
    """48 gzip members of 64 MiB of zeros each: 3 GiB from about 3 MiB."""
    return gzip.compress(ZEROS, 9) * 48


def zlib_bomb() -> bytes:
    """One zlib stream whose full-flush segments repeat: 3 GiB of zeros, never finished."""
    c = zlib.compressobj(9)
    head = c.compress(ZEROS) + c.flush(zlib.Z_FULL_FLUSH)
    segment = c.compress(ZEROS) + c.flush(zlib.Z_FULL_FLUSH)
    return head + segment * 47


def bz2_bomb() -> bytes:
    return bz2.compress(ZEROS, 1) * 48


def lzma_bomb() -> bytes:
    return lzma.compress(ZEROS, preset=0) * 48


V3_BYTES = {"name": "bytes"}

#: (array metadata for create_array, chunk bytes) per hostile chunk
BOMBS: dict[str, tuple[dict[str, Any], Callable[[], bytes]]] = {
    "zstd-header-2^34": (
        {"codecs": [V3_BYTES, {"name": "zstd"}]},
        lambda: zstd_frame_claiming(1 << 34),
    ),
    "numcodecs.zstd-header-2^34": (
        {"zarr_format": 2, "compressors": {"id": "zstd"}},
        lambda: zstd_frame_claiming(1 << 34),
    ),
    "blosc-header-2GiB": (
        {"codecs": [V3_BYTES, {"name": "blosc"}]},
        lambda: blosc_header_claiming((1 << 31) - 17),
    ),
    "numcodecs.blosc-header-2GiB": (
        {"zarr_format": 2, "compressors": {"id": "blosc"}},
        lambda: blosc_header_claiming((1 << 31) - 17),
    ),
    "gzip-bomb": ({"codecs": [V3_BYTES, {"name": "gzip"}]}, gzip_bomb),
    "numcodecs.gzip-bomb": ({"zarr_format": 2, "compressors": {"id": "gzip"}}, gzip_bomb),
    "zlib-bomb": ({"zarr_format": 2, "compressors": {"id": "zlib"}}, zlib_bomb),
    "bz2-bomb": ({"zarr_format": 2, "compressors": {"id": "bz2"}}, bz2_bomb),
    "lzma-bomb": ({"zarr_format": 2, "compressors": {"id": "lzma"}}, lzma_bomb),
    # The outer compressor's output is bounded by the inner one's largest encoding of a chunk.
    "zstd-over-gzip-bomb": (
        {"codecs": [V3_BYTES, {"name": "zstd"}, {"name": "gzip"}]},
        lambda: gzip.compress(ZEROS, 9) * 48,
    ),
}


@pytest.mark.parametrize("case", list(BOMBS))
def test_hostile_chunk_is_a_corrupt_chunk_error_not_an_allocation(
    case: str, tmp_path: Path
) -> None:
    meta, make = BOMBS[case]
    zarrox.create_array(tmp_path, name="a", shape=(CHUNK,), dtype="uint8", chunks=(CHUNK,), **meta)
    key = "0" if meta.get("zarr_format") == 2 else "c/0"
    put_chunk(tmp_path / "a" / key, make())
    got = run_child(tmp_path, "a", "read")
    assert got["outcome"] == "CorruptChunkError", got
    assert f"'a/{key}'" in got["message"], got


def test_variable_length_chunk_header_claims_are_not_trusted(tmp_path: Path) -> None:
    """Strings have no fixed decoded size; a header's claim is still checked against what its
    compressed bytes can hold before anything is allocated."""
    for name, codecs in {
        "zstd": [{"name": "vlen-utf8"}, {"name": "zstd"}],
        "blosc": [{"name": "vlen-utf8"}, {"name": "blosc"}],
    }.items():
        zarrox.create_array(tmp_path, name=name, shape=(4,), dtype=str, chunks=(4,), codecs=codecs)
        claim = zstd_frame_claiming(1 << 34) if name == "zstd" else blosc_header_claiming(1 << 31)
        put_chunk(tmp_path / name / "c" / "0", claim)
        got = run_child(tmp_path, name, "read")
        assert got["outcome"] == "CorruptChunkError", (name, got)


def test_variable_length_bomb_grows_fallibly(tmp_path: Path) -> None:
    """A gzip bomb in a string chunk: its output is only bounded by memory, so decoding grows
    the buffer as output arrives and an allocation the limit refuses is a MemoryError."""
    zarrox.create_array(
        tmp_path,
        name="s",
        shape=(4,),
        dtype=str,
        chunks=(4,),
        codecs=[{"name": "vlen-utf8"}, {"name": "gzip"}],
    )
    put_chunk(tmp_path / "s" / "c" / "0", gzip_bomb())
    got = run_child(tmp_path, "s", "read")
    assert got["outcome"] in {"MemoryError", "CorruptChunkError"}, got
    assert "'s/c/0'" in got["message"], got


def test_chunk_too_large_to_allocate_is_a_memory_error(tmp_path: Path) -> None:
    """256 GiB chunks: creating the array works (nothing is allocated); writing one element
    needs the whole chunk in memory, which the limit refuses: MemoryError naming the array
    and the chunk, not an abort."""
    zarrox.create_array(
        tmp_path, name="big", shape=(1 << 40,), dtype="uint8", chunks=(1 << 38,), compressors=None
    )
    got = run_child(tmp_path, "big", "write")
    assert got["outcome"] == "MemoryError", got
    assert "'big'" in got["message"] and "big/c/0" in got["message"], got


# -- shapes, offsets and chunk ids near 2**64 ---------------------------------------------------

HUGE = 2**64 - 1


def test_selections_at_the_end_of_a_2_to_the_64_array() -> None:
    """The last chunk of shape (2**64-1,) in chunks of 2 (or 2**62) ends past 2**64: its
    bounds must not wrap (they did: reads returned uninitialised memory, writes wrote
    nothing)."""
    store = zarrox.MemoryStore()
    a = zarrox.create_array(
        store, name="a", shape=(HUGE,), chunks=(2,), dtype="uint8", fill_value=7
    )
    a[-1:] = 5
    a[-4] = 9
    np.testing.assert_array_equal(a[-5:], [7, 9, 7, 7, 5])
    assert sorted(store.list_prefix("a/c/")) == [f"a/c/{HUGE // 2 - 2}", f"a/c/{HUGE // 2}"]
    np.testing.assert_array_equal(a.oindex[[HUGE - 1, HUGE - 4, 0]], [5, 9, 7])
    np.testing.assert_array_equal(a.vindex[[HUGE - 1, -4, 2**63]], [5, 9, 7])
    np.testing.assert_array_equal(a[np.array([-1, -4], dtype=np.int64)], [5, 9])
    np.testing.assert_array_equal(a[np.array([HUGE - 1], dtype=np.uint64)], [5])
    a.vindex[[-2, 2**63 + 1]] = [3, 4]
    np.testing.assert_array_equal(a.vindex[[HUGE - 2, 2**63 + 1]], [3, 4])
    with pytest.raises(IndexError):
        a.vindex[[HUGE]]
    with pytest.raises(IndexError):
        a.oindex[[-HUGE - 1]]
    with pytest.raises(IndexError):
        a[np.array([2**64 - 1], dtype=np.uint64)]
    big = zarrox.create_array(
        store, name="big", shape=(HUGE,), chunks=(2**62,), dtype="uint8", fill_value=7
    )
    np.testing.assert_array_equal(big[-8:], [7] * 8)
    np.testing.assert_array_equal(big.vindex[[HUGE - 1, 0]], [7, 7])


def test_point_selections_in_a_grid_of_2_to_the_186_chunks() -> None:
    """Chunk ids of a 3-d grid of 2**62 chunks per dimension do not fit 128 bits: two points
    must never share a chunk because their ids wrapped (they did: (0,0,0) and (64,0,0))."""
    a = zarrox.create_array(
        zarrox.MemoryStore(), shape=(HUGE,) * 3, chunks=(4, 4, 4), dtype="uint8", fill_value=0
    )
    a.vindex[[0, 64, 2**63], [0, 0, 5], [0, 0, HUGE - 1]] = np.array([1, 2, 3], dtype="uint8")
    assert (a[0, 0, 0], a[64, 0, 0], a[2**63, 5, HUGE - 1]) == (1, 2, 3)
    np.testing.assert_array_equal(
        a.vindex[[64, 0, 2**63, 1], [0, 0, 5, 0], [0, 0, -1, 0]], [2, 1, 3, 0]
    )
