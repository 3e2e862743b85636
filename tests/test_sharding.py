"""sharding_indexed: interop both ways with zarr-python and tensorstore, and
partial writes checked against numpy."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrox

warnings.filterwarnings("ignore", category=UserWarning)

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def sharding(
    inner: list[int],
    codecs: list[dict[str, Any]],
    *,
    location: str = "end",
    index_codecs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": inner,
            "codecs": codecs,
            "index_codecs": index_codecs if index_codecs is not None else [BYTES_LE, CRC],
            "index_location": location,
        },
    }


def data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 1000, size=shape).astype(dtype)


#: (name, outer shard shape, codecs) — every variant issue 3 names.
CASES: list[tuple[str, tuple[int, ...], list[dict[str, Any]]]] = [
    ("index-end-crc", (8, 12), [sharding([4, 3], [BYTES_LE])]),
    ("index-start-crc", (8, 12), [sharding([4, 3], [BYTES_LE], location="start")]),
    ("index-no-crc", (8, 12), [sharding([2, 6], [BYTES_LE], index_codecs=[BYTES_LE])]),
    (
        "zstd-inner",
        (8, 12),
        [sharding([4, 4], [BYTES_LE, {"name": "zstd", "configuration": {"level": 1}}])],
    ),
    (
        "transpose-big-endian-inside",
        (8, 12),
        [
            sharding(
                [4, 6],
                [
                    {"name": "transpose", "configuration": {"order": [1, 0]}},
                    BYTES_BE,
                    {"name": "gzip", "configuration": {"level": 1}},
                ],
            )
        ],
    ),
    (
        "nested",
        (8, 12),
        [
            sharding(
                [4, 6],
                [sharding([2, 3], [BYTES_LE, CRC], location="start")],
            )
        ],
    ),
    (
        "transpose-outside",
        (8, 12),
        [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            sharding([4, 4], [BYTES_LE]),
        ],
    ),
]

SHAPE = (21, 29)  # partial edge shards in both dimensions


def write_pattern(target: Any, x: np.ndarray) -> None:
    """Write all but one region, so some shards and inner chunks stay missing."""
    target[:8, :] = x[:8, :]
    target[8:16, :12] = x[8:16, :12]
    target[19:, 25:] = x[19:, 25:]


def expected(x: np.ndarray, fill: Any) -> np.ndarray:
    e = np.full_like(x, fill)
    write_pattern(e, x)
    return e


@pytest.mark.parametrize("name,shard,codecs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_zarrox_writes_others_read(
    tmp_path: Path, name: str, shard: tuple[int, ...], codecs: list[dict[str, Any]], dtype: str
) -> None:
    x = data(SHAPE, dtype)
    fill = 7 if dtype == "uint16" else np.float32(-np.inf)
    a = zarrox.create_array(
        tmp_path, name="a", shape=SHAPE, dtype=dtype, chunks=shard, codecs=codecs, fill_value=fill
    )
    write_pattern(a, x)
    want = expected(x, fill)
    np.testing.assert_array_equal(a[...], want)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), path="a", mode="r")[...], want)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "a")}})
    np.testing.assert_array_equal(t.result().read().result(), want)


@pytest.mark.parametrize("name,shard,codecs", CASES, ids=[c[0] for c in CASES])
def test_zarr_python_writes_zarrox_reads(
    tmp_path: Path, name: str, shard: tuple[int, ...], codecs: list[dict[str, Any]]
) -> None:
    x = data(SHAPE, "int32", seed=1)
    # zarr-python takes any chain as filters (array->array) + serializer (here the
    # sharding codec) with no compressors.
    z = zarr.create_array(
        str(tmp_path),
        name="z",
        shape=SHAPE,
        dtype="int32",
        chunks=shard,
        fill_value=-5,
        filters=codecs[:-1] or None,
        serializer=codecs[-1],
        compressors=None,
    )
    stored = json.loads((tmp_path / "z" / "zarr.json").read_text())["codecs"]
    assert [c["name"] for c in stored] == [c["name"] for c in codecs]
    write_pattern(z, x)
    want = expected(x, -5)
    a = zarrox.open_array(tmp_path, path="z", mode="r")
    assert (a.shards, a.chunks) == (z.shards, z.chunks)
    np.testing.assert_array_equal(a[...], want)
    np.testing.assert_array_equal(a[3:17:2, ::5], want[3:17:2, ::5])


@pytest.mark.parametrize("name,shard,codecs", CASES, ids=[c[0] for c in CASES])
def test_tensorstore_writes_zarrox_reads(
    tmp_path: Path, name: str, shard: tuple[int, ...], codecs: list[dict[str, Any]]
) -> None:
    x = data(SHAPE, "uint16", seed=2)
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
        "metadata": {
            "shape": list(SHAPE),
            "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 3,
            "codecs": codecs,
        },
        "create": True,
    }
    t = ts.open(spec).result()
    write_pattern(_TsSetter(t), x)
    want = expected(x, 3)
    a = zarrox.open_array(tmp_path, path="t", mode="r")
    np.testing.assert_array_equal(a[...], want)
    # Partial update by zarrox of a tensorstore shard, read back by tensorstore.
    b = zarrox.open_array(tmp_path, path="t", mode="r+")
    b[5:10, 2:4] = 999
    want[5:10, 2:4] = 999
    t2 = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t")}})
    np.testing.assert_array_equal(t2.result().read().result(), want)


class _TsSetter:
    """``target[sel] = value`` for a tensorstore array."""

    def __init__(self, t: Any) -> None:
        self.t = t

    def __setitem__(self, sel: Any, value: np.ndarray) -> None:
        self.t[sel].write(value).result()


def test_create_array_shards_matches_zarr_python(tmp_path: Path) -> None:
    kwargs: dict[str, Any] = dict(
        shape=(40, 30),
        dtype="uint16",
        chunks=(5, 10),
        shards=(20, 30),
        compressors=None,
    )
    a = zarrox.create_array(tmp_path / "x", **kwargs)
    z = zarr.create_array(str(tmp_path / "z"), **kwargs)
    on_disk = [json.loads((tmp_path / n / "zarr.json").read_text()) for n in ("x", "z")]
    assert on_disk[0]["codecs"] == on_disk[1]["codecs"]
    assert (a.chunks, a.shards) == (z.chunks, z.shards) == ((5, 10), (20, 30))
    x = data((40, 30), "uint16")
    a[...] = x
    z[...] = x
    # Inner chunk order may differ (zarr-python writes Morton order, the spec allows
    # any), but through each file's own index every inner chunk's bytes are equal.
    n = 4 * 3  # inner chunks per shard
    for key in ["c/0/0", "c/1/0"]:
        chunks = []
        for root in ("x", "z"):
            raw = (tmp_path / root / key).read_bytes()
            index = struct.unpack(f"<{2 * n}Q", raw[-4 - 16 * n : -4])
            chunks.append([raw[o : o + m] for o, m in zip(index[::2], index[1::2], strict=True)])
        assert chunks[0] == chunks[1]
        assert all(len(c) == 5 * 10 * 2 for c in chunks[0])
    b = zarrox.create_array(
        tmp_path / "s",
        shards={"shape": (20, 30), "index_location": "start"},
        **{k: v for k, v in kwargs.items() if k != "shards"},
    )
    assert b.metadata.to_json()["codecs"][0]["configuration"]["index_location"] == "start"
    with pytest.raises(ValueError, match="multiple of chunks"):
        zarrox.create_array(tmp_path / "bad", shape=(10,), dtype="u1", chunks=(3,), shards=(4,))


def test_empty_shards_are_not_stored(tmp_path: Path) -> None:
    a = zarrox.create_array(
        tmp_path, shape=(16, 16), dtype="int8", chunks=(4, 4), shards=(8, 8), fill_value=0
    )
    a[0, 0] = 1
    assert sorted(p.name for p in (tmp_path / "c" / "0").iterdir()) == ["0"]
    a[0, 0] = 0
    assert not (tmp_path / "c" / "0" / "0").exists()


def test_corrupt_shard_index_names_the_shard(tmp_path: Path) -> None:
    a = zarrox.create_array(tmp_path, shape=(8,), dtype="uint8", chunks=(2,), shards=(8,))
    a[...] = np.arange(8, dtype="uint8")
    path = tmp_path / "c" / "0"
    raw = bytearray(path.read_bytes())
    raw[-6] ^= 0xFF  # inside the index, before the checksum
    path.write_bytes(bytes(raw))
    with pytest.raises(zarrox.errors.ChecksumError, match=r"chunk 'c/0'.*crc32c"):
        a[...]
    path.write_bytes(bytes(raw[:5]))
    with pytest.raises(zarrox.errors.CorruptChunkError, match="chunk 'c/0'"):
        a[...]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 20), st.integers(1, 20)),
    inner=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    per_shard=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    writes=st.lists(
        st.tuples(st.integers(0, 19), st.integers(0, 20), st.integers(0, 19), st.integers(0, 20)),
        min_size=1,
        max_size=4,
    ),
    location=st.sampled_from(["start", "end"]),
)
def test_partial_writes_match_numpy(
    shape: tuple[int, int],
    inner: tuple[int, int],
    per_shard: tuple[int, int],
    writes: list[tuple[int, int, int, int]],
    location: str,
) -> None:
    shard = (inner[0] * per_shard[0], inner[1] * per_shard[1])
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=shape,
        dtype="int16",
        chunks=inner,
        shards={"shape": shard, "index_location": location},
        fill_value=-1,
    )
    ref = np.full(shape, -1, dtype="int16")
    for n, (r0, r1, c0, c1) in enumerate(writes):
        sel = (slice(r0, r1), slice(c0, c1))
        value = np.arange(ref[sel].size, dtype="int16").reshape(ref[sel].shape) + n * 100
        a[sel] = value
        ref[sel] = value
        np.testing.assert_array_equal(a[...], ref)
    np.testing.assert_array_equal(a[1::3, ::2], ref[1::3, ::2])


def test_reading_one_inner_chunk_starts_no_threads(tmp_path: Path) -> None:
    """One inner chunk is read on the calling thread: neither zarrox's pool nor rayon's
    global pool (which a stray call outside zarrox's pool would start) gets threads."""
    import os
    import subprocess
    import sys
    import textwrap

    a = zarrox.create_array(tmp_path, shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="u2")
    a[...] = np.arange(64, dtype="u2").reshape(8, 8)
    script = textwrap.dedent(
        f"""
        import os, zarrox
        a = zarrox.open_array({str(tmp_path)!r}, mode="r")
        assert a[2:4, 4:6].tolist() == [[20, 21], [28, 29]]
        assert a[5, 5] == 45
        print(len(os.listdir("/proc/self/task")))
        """
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "1", out.stdout + out.stderr


def test_opening_a_shard_of_many_inner_chunks_allocates_no_index(tmp_path: Path) -> None:
    """zarrox encoded a whole empty shard index when opening the array, to learn its size:
    with 2**40 inner chunks per shard (a 16 TiB index) the process aborted ("memory
    allocation failed") on open. The index size is now computed; reading a missing shard
    needs no index, as with zarr-python."""
    import subprocess
    import sys

    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [2**21, 2**21],
        "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2**20, 2**20]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 7,
        "codecs": [sharding([1, 1], [BYTES_LE])],
    }
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    script = (
        "import resource, sys, zarrox\n"
        "resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))\n"
        "a = zarrox.open_array(sys.argv[1])\n"
        "print(a[5, 2**21 - 1], a[:2, :3].tolist())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "7 [[7, 7, 7], [7, 7, 7]]"
    assert zarr.open_array(tmp_path, mode="r")[5, 2**21 - 1] == 7
