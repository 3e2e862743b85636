"""Interoperability on S3 (moto on 127.0.0.1): zarr-python writes through obstore or s3fs (on
its own pipeline or zarrox's) and tensorstore's ``s3`` kvstore reads the very same objects, and
tensorstore writes what zarr-python reads (on both pipelines). Zarr v3 (zstd, sharded) and v2
(zlib, blosc); values compared exactly."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import servers
from conftest import assert_identical, make_data

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")
numcodecs = pytest.importorskip("numcodecs")
pytest.importorskip("obstore")
pytest.importorskip("s3fs")

PIPELINES = {
    "zarr-python": {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"},
    "zarrox": {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True},
}
SHAPE = (29, 35)
ZSTD_V3 = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
]

#: name -> (zarr-python create_array arguments, tensorstore driver, tensorstore metadata)
LAYOUTS: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "v3-zstd": (
        {"chunks": (8, 16), "compressors": zarr.codecs.ZstdCodec(level=1)},
        "zarr3",
        {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 16]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": ZSTD_V3,
        },
    ),
    "v3-sharded": (
        {"chunks": (4, 8), "shards": (16, 16), "compressors": zarr.codecs.ZstdCodec(level=1)},
        "zarr3",
        {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [4, 8],
                        "codecs": ZSTD_V3,
                        "index_codecs": [
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "crc32c"},
                        ],
                        "index_location": "end",
                    },
                }
            ],
        },
    ),
    "v2-zlib": (
        {"chunks": (10, 10), "zarr_format": 2, "compressors": numcodecs.Zlib(level=1)},
        "zarr",
        {"chunks": [10, 10], "compressor": {"id": "zlib", "level": 1}, "order": "C"},
    ),
    "v2-blosc-F": (
        {
            "chunks": (10, 12),
            "zarr_format": 2,
            "order": "F",
            "compressors": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
        },
        "zarr",
        {
            "chunks": [10, 12],
            "compressor": {
                "id": "blosc",
                "cname": "lz4",
                "clevel": 5,
                "shuffle": 1,
                "blocksize": 0,
            },
            "order": "F",
        },
    ),
}
FILL = -3


@pytest.fixture(autouse=True)
def _credentials(s3_bucket: servers.S3Bucket, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tensorstore's credentials come from the environment."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, s3_bucket.env()[key])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def zarr_store(bucket: servers.S3Bucket, client: str, read_only: bool = False) -> Any:
    if client == "obstore":
        return bucket.zarr_obstore("data.zarr", read_only=read_only)
    return bucket.zarr_s3fs("data.zarr", read_only=read_only)


def ts_spec(bucket: servers.S3Bucket, layout: str, name: str) -> dict[str, Any]:
    driver = LAYOUTS[layout][1]
    return {"driver": driver, "kvstore": bucket.tensorstore_kvstore(f"data.zarr/{name}/")}


def ts_write(bucket: servers.S3Bucket, layout: str, name: str, data: np.ndarray) -> None:
    _, driver, meta = LAYOUTS[layout]
    spec = ts_spec(bucket, layout, name)
    if driver == "zarr3":
        spec["metadata"] = {
            **meta,
            "shape": list(data.shape),
            "data_type": str(data.dtype),
            "fill_value": FILL,
        }
    else:
        spec["metadata"] = {
            **meta,
            "shape": list(data.shape),
            "dtype": data.dtype.str,
            "fill_value": FILL,
            "filters": None,
        }
    t = ts.open(spec, create=True, open=False).result()
    t.write(data).result()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("writer", "client"),
    [("zarr-python", "obstore"), ("zarr-python", "s3fs"), ("zarrox", "obstore")],
)
def test_zarr_python_writes_tensorstore_reads(
    s3_bucket: servers.S3Bucket, layout: str, writer: str, client: str
) -> None:
    data = make_data("int32", SHAPE, seed=11)
    with zarr.config.set(PIPELINES[writer]):
        a = zarr.create_array(
            zarr_store(s3_bucket, client),
            name="a",
            shape=SHAPE,
            dtype="int32",
            fill_value=FILL,
            **LAYOUTS[layout][0],
        )
        a[...] = data
        a[20:, 30:] = FILL  # whole chunks of fill value: not stored
    data[20:, 30:] = FILL
    t = ts.open(ts_spec(s3_bucket, layout, "a"), read=True).result()
    assert_identical(t.read().result(), data, f"tensorstore reading {writer}'s {layout}")
    assert_identical(t[3:27:4, 30:].read().result(), data[3:27:4, 30:], "tensorstore, strided")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("reader", list(PIPELINES))
@pytest.mark.parametrize("client", ["obstore", "s3fs"])
def test_tensorstore_writes_zarr_python_reads(
    s3_bucket: servers.S3Bucket, layout: str, reader: str, client: str
) -> None:
    data = make_data("int32", SHAPE, seed=12)
    data[:10, :10] = FILL  # tensorstore does not store chunks of fill value
    ts_write(s3_bucket, layout, "t", data)
    with zarr.config.set(PIPELINES[reader]):
        a = zarr.open_array(zarr_store(s3_bucket, client, read_only=True), path="t", mode="r")
        pipeline = type(a._async_array.codec_pipeline).__name__
        assert pipeline == ("ZarroxCodecPipeline" if reader == "zarrox" else "BatchedCodecPipeline")
        assert_identical(a[...], data, f"{reader} reading tensorstore's {layout}")
        assert_identical(a.oindex[[28, 0, 5], 3:33:6], data[[28, 0, 5]][:, 3:33:6], "oindex")


def test_tensorstore_partial_writes_onto_zarrox_written_array(s3_bucket: servers.S3Bucket) -> None:
    data = make_data("int32", SHAPE, seed=13)
    with zarr.config.set(PIPELINES["zarrox"]):
        a = zarr.create_array(
            zarr_store(s3_bucket, "obstore"),
            name="a",
            shape=SHAPE,
            dtype="int32",
            fill_value=FILL,
            **LAYOUTS["v3-sharded"][0],
        )
        a[...] = data
    t = ts.open(ts_spec(s3_bucket, "v3-sharded", "a"), read=True, write=True).result()
    patch = make_data("int32", (7, 9), seed=14)
    t[10:17, 13:22].write(patch).result()
    data[10:17, 13:22] = patch
    with zarr.config.set(PIPELINES["zarrox"]):
        b = zarr.open_array(zarr_store(s3_bucket, "obstore", read_only=True), path="a", mode="r")
        assert_identical(b[...], data, "zarrox's pipeline after tensorstore's partial write")
