"""Chunks too large for the machine's memory, with no address-space limit (issue 35).

A chunk-sized buffer larger than the memory the process can have is refused with a
MemoryError naming the array and the chunk, before anything is allocated: an allocator that
only reserves address space (mimalloc, a lazily zeroed ``calloc``) would grant it and the
process would grow until the kernel's OOM killer ends it. Each case runs in a child process
whose resident memory the parent reads in a loop and that it kills past 1 GiB, so that a
regression is a failed test, not an exhausted machine (an address-space limit would change
the behaviour under test: see test_reliability.py for those)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import zarrox

#: the child's resident memory that fails a test (and kills the child)
RSS_LIMIT = 1 << 30
#: a chunk of (2**18, 2**18) int32: 256 GiB
SHAPE = (2**20, 2**20)
CHUNKS = (2**18, 2**18)
CHUNK_BYTES = 4 * 2**36


def available_bytes() -> int:
    with open("/proc/meminfo") as f:
        fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f}
    return fields["MemAvailable"] + fields.get("SwapFree", 0)


pytestmark = pytest.mark.skipif(
    available_bytes() >= 1 << 37, reason="this machine could allocate 128 GiB chunks"
)

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import zarrox

    path, name, action, pipeline = sys.argv[1:5]
    zarrox.config.set({"threading.max_workers": 2})
    if pipeline == "zarr":
        import zarr
        zarr.config.set({"codec_pipeline.path": "zarrox.ZarroxCodecPipeline",
                         "codec_pipeline.strict": True})
        a = zarr.open_array(f"{path}/{name}", mode="r+")
    else:
        a = zarrox.open_array(path, path=name, mode="r+")
    start = time.monotonic()
    try:
        if action == "write":
            a[0, 0] = 1
        elif action == "read-one":
            a[0, 0]
        elif action == "read-chunk":
            a[0 : 2**18, 0 : 2**18]
        result = {"outcome": "ok"}
    except Exception as e:  # the test asserts which class
        result = {"outcome": type(e).__name__, "message": str(e)}
    result["seconds"] = time.monotonic() - start
    print(json.dumps(result))
    """
)


def rss(pid: int) -> int:
    """The resident memory of process `pid` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def run_watched(path: Path, name: str, action: str, pipeline: str = "zarrox") -> dict[str, Any]:
    """Run CHILD for array `name` under `path`, reading its resident memory every 5 ms and
    killing it past RSS_LIMIT; its result with the peak resident memory seen."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), name, action, pipeline],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MALLOC_ARENA_MAX": "2"},
    )
    peak = 0
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None:
            peak = max(peak, rss(proc.pid))
            if peak > RSS_LIMIT or time.monotonic() > deadline:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                pytest.fail(f"child killed: resident {peak >> 20} MiB, {action} of {name}")
            time.sleep(0.005)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out, err = proc.communicate()
    assert proc.returncode == 0, f"child died ({proc.returncode}): {err[-2000:]}"
    result: dict[str, Any] = json.loads(out)
    result["peak_rss"] = peak
    return result


def zstd_rle_frame(size: int, byte: int) -> bytes:
    """A valid zstd frame of `size` copies of `byte`, in RLE blocks of 128 KiB: 256 GiB in
    8 MiB."""
    block = 1 << 17
    assert size % block == 0
    header = b"\x28\xb5\x2f\xfd\xe0" + size.to_bytes(8, "little")
    rle = ((block << 3) | (1 << 1)).to_bytes(3, "little") + bytes([byte])
    last = ((block << 3) | (1 << 1) | 1).to_bytes(3, "little") + bytes([byte])
    return header + rle * (size // block - 1) + last


def assert_refused(got: dict[str, Any], name: str, key: str) -> None:
    assert got["outcome"] == "MemoryError", got
    assert f"array '{name}'" in got["message"] and f"'{key}'" in got["message"], got
    assert "cannot allocate" in got["message"], got
    assert got["seconds"] < 1, got
    assert got["peak_rss"] < RSS_LIMIT, got


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_writing_into_a_chunk_too_large_for_memory_is_a_memory_error(
    tmp_path: Path, zarr_format: int
) -> None:
    """Issue 35: one element of a 256 GiB chunk; the chunk is missing, so the write builds it
    from the fill value."""
    zarrox.create_array(
        tmp_path, name="a", shape=SHAPE, chunks=CHUNKS, dtype="int32", zarr_format=zarr_format
    )
    key = "a/c/0/0" if zarr_format == 3 else "a/0.0"
    got = run_watched(tmp_path, "a", "write")
    assert_refused(got, "a", key)
    assert f"cannot allocate {CHUNK_BYTES} bytes" in got["message"], got
    assert not (tmp_path / key).exists()


def stored_chunk(tmp_path: Path) -> Path:
    """Array 'a' with its first 256 GiB chunk stored (zstd, every byte 1)."""
    zarrox.create_array(
        tmp_path,
        name="a",
        shape=SHAPE,
        chunks=CHUNKS,
        dtype="int32",
        compressors=[{"name": "zstd"}],
    )
    chunk = tmp_path / "a" / "c" / "0" / "0"
    chunk.parent.mkdir(parents=True)
    chunk.write_bytes(zstd_rle_frame(CHUNK_BYTES, 1))
    return chunk


@pytest.mark.parametrize("pipeline", ["zarrox", "zarr"])
def test_writing_into_a_stored_chunk_too_large_for_memory_leaves_it_as_it_was(
    tmp_path: Path, pipeline: str
) -> None:
    """The old chunk would be decoded to merge the new element: refused, and nothing is
    written. Through the own API and zarr-python's pipeline."""
    chunk = stored_chunk(tmp_path)
    before = chunk.read_bytes()
    got = run_watched(tmp_path, "a", "write", pipeline)
    assert got["outcome"] == "MemoryError", got
    assert got["seconds"] < 1 and got["peak_rss"] < RSS_LIMIT, got
    if pipeline == "zarrox":
        assert_refused(got, "a", "a/c/0/0")
    assert chunk.read_bytes() == before


@pytest.mark.parametrize("pipeline", ["zarrox", "zarr"])
def test_reading_one_element_of_a_stored_chunk_too_large_for_memory(
    tmp_path: Path, pipeline: str
) -> None:
    """A one-element output, but the whole chunk would be decoded."""
    stored_chunk(tmp_path)
    got = run_watched(tmp_path, "a", "read-one", pipeline)
    assert got["outcome"] == "MemoryError", got
    assert got["seconds"] < 1 and got["peak_rss"] < RSS_LIMIT, got
    if pipeline == "zarrox":
        assert_refused(got, "a", "a/c/0/0")


def test_reading_a_whole_chunk_too_large_for_memory(tmp_path: Path) -> None:
    """The output itself is 256 GiB: numpy refuses to allocate it (MemoryError)."""
    stored_chunk(tmp_path)
    got = run_watched(tmp_path, "a", "read-chunk")
    assert got["outcome"] == "MemoryError", got
    assert got["seconds"] < 1 and got["peak_rss"] < RSS_LIMIT, got


def test_writing_into_a_shard_too_large_for_memory(tmp_path: Path) -> None:
    """A 256 GiB shard of two 128 GiB inner chunks: the inner chunk the write touches is
    refused, and the shard is not written."""
    zarrox.create_array(
        tmp_path,
        name="a",
        shape=SHAPE,
        shards=CHUNKS,
        chunks=(2**18, 2**17),
        dtype="int32",
    )
    got = run_watched(tmp_path, "a", "write")
    assert_refused(got, "a", "a/c/0/0")
    assert f"cannot allocate {CHUNK_BYTES // 2} bytes" in got["message"], got
    assert not (tmp_path / "a" / "c" / "0" / "0").exists()
    assert zarrox.open_array(tmp_path, path="a")[0, 0] == 0


def test_rle_frame_helper_makes_a_valid_chunk(tmp_path: Path) -> None:
    """The stored chunk above is a valid zstd frame (checked on a small one)."""
    a = zarrox.create_array(
        tmp_path,
        name="s",
        shape=(1 << 16,),
        chunks=(1 << 16,),
        dtype="int32",
        compressors=[{"name": "zstd"}],
    )
    (tmp_path / "s" / "c").mkdir(parents=True, exist_ok=True)
    (tmp_path / "s" / "c" / "0").write_bytes(zstd_rle_frame(1 << 18, 1))
    assert (a[...] == 0x01010101).all()
