"""Blosc chunks are byte for byte what numcodecs' c-blosc 1 writes, and numcodecs' bytes read back.

Round trips through other implementations (tests/test_interop_*) pass as long as the bytes
decode; these tests pin the bytes themselves, for every compressor, shuffle and element size
zarrox offers, in v3 (``blosc``) and v2 (numcodecs ``blosc``) arrays. A second blosc library
linked beside c-blosc 1 (C-Blosc2 defines the same ``blosclz_compress`` symbol with another
signature) changed blosclz + bitshuffle output while every round trip still passed.
"""

from __future__ import annotations

from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrox

CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
#: 48 x 96 elements: a 36 KiB uint64 chunk spans several blosc blocks at the higher levels.
SHAPE = (48, 96)


def smooth_noise(dtype: str, seed: int) -> np.ndarray:
    """Values that compress (a gradient) but not to nothing (noise), as ``dtype``."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0 : SHAPE[0], 0 : SHAPE[1]]
    field = 500.0 + 3.0 * y + 2.0 * x + rng.normal(0.0, 2.0, SHAPE)
    return field.astype(dtype)


def numcodecs_bytes(data: np.ndarray, cname: str, clevel: int, shuffle: int) -> bytes:
    codec = numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=0)
    return bytes(codec.encode(np.ascontiguousarray(data)))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "uint64"])
@pytest.mark.parametrize("shuffle", list(SHUFFLES))
@pytest.mark.parametrize("cname", CNAMES)
def test_v3_blosc_chunk_bytes_are_numcodecs_bytes(
    tmp_path: Path, cname: str, shuffle: str, dtype: str
) -> None:
    data = smooth_noise(dtype, 1)
    clevel = 9 if cname == "blosclz" else 5
    itemsize = data.dtype.itemsize
    config = {"cname": cname, "clevel": clevel, "shuffle": shuffle, "typesize": itemsize}
    zarrox.create_array(
        tmp_path / "a",
        data=data,
        chunks=SHAPE,
        compressors={"name": "blosc", "configuration": {**config, "blocksize": 0}},
    )
    got = (tmp_path / "a" / "c" / "0" / "0").read_bytes()
    assert got == numcodecs_bytes(data, cname, clevel, SHUFFLES[shuffle])


@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize("cname", CNAMES)
def test_v2_blosc_chunk_bytes_are_numcodecs_bytes(tmp_path: Path, cname: str, shuffle: int) -> None:
    data = smooth_noise("<i4", 2)
    compressor = {"id": "blosc", "cname": cname, "clevel": 7, "shuffle": shuffle, "blocksize": 0}
    zarrox.create_array(
        tmp_path / "a", data=data, chunks=SHAPE, compressors=compressor, zarr_format=2
    )
    assert (tmp_path / "a" / "0.0").read_bytes() == numcodecs_bytes(data, cname, 7, shuffle)


@pytest.mark.parametrize("shuffle", list(SHUFFLES))
@pytest.mark.parametrize("cname", CNAMES)
def test_numcodecs_blosc_bytes_decode_in_zarrox(tmp_path: Path, cname: str, shuffle: str) -> None:
    """A chunk numcodecs wrote, put in place of zarrox's own, reads back as its values."""
    data = smooth_noise("uint16", 3)
    config = {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 2, "blocksize": 0}
    a = zarrox.create_array(
        tmp_path / "a",
        shape=SHAPE,
        dtype="uint16",
        chunks=SHAPE,
        compressors={"name": "blosc", "configuration": config},
    )
    (tmp_path / "a" / "c" / "0").mkdir(parents=True)
    (tmp_path / "a" / "c" / "0" / "0").write_bytes(
        numcodecs_bytes(data, cname, 5, SHUFFLES[shuffle])
    )
    np.testing.assert_array_equal(a[...], data)


#: 7 x 4999 elements: for 8- and 16-byte types several blosc blocks, the last one a remainder
#: that is not a whole number of SIMD lanes (nor of 8 elements, bit-shuffling's unit).
UNEVEN = (7, 4999)


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shuffle", list(SHUFFLES))
@pytest.mark.parametrize("cname", ["lz4", "zstd", "blosclz"])
def test_uneven_multi_block_chunks_match_numcodecs_both_ways(
    tmp_path: Path, cname: str, shuffle: str, dtype: str
) -> None:
    """The shuffles c-blosc picks at run time (SSE2, AVX2) write numcodecs' bytes and read them.

    zarrox compiles c-blosc's AVX2 shuffles beside the SSE2 ones and lets c-blosc choose by
    CPU; these chunks take every path of both shuffles: many blocks, a short last block, and
    element sizes 2 to 16.
    """
    rng = np.random.default_rng(4)
    data = (np.cumsum(rng.normal(0.0, 1.0, UNEVEN), axis=1) * 100).astype(dtype)
    clevel = 9 if cname == "blosclz" else 5
    itemsize = data.dtype.itemsize
    config = {"cname": cname, "clevel": clevel, "shuffle": shuffle, "typesize": itemsize}
    theirs = numcodecs_bytes(data, cname, clevel, SHUFFLES[shuffle])
    zarrox.create_array(
        tmp_path / "a",
        data=data,
        chunks=UNEVEN,
        compressors={"name": "blosc", "configuration": {**config, "blocksize": 0}},
    )
    assert (tmp_path / "a" / "c" / "0" / "0").read_bytes() == theirs
    np.testing.assert_array_equal(zarrox.open_array(tmp_path / "a", mode="r")[...], data)
