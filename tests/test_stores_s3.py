"""zarr-python with zarrox's codec pipeline (strict) on S3: moto on 127.0.0.1, reached through
obstore (``zarr.storage.ObjectStore``) and through s3fs (``zarr.storage.FsspecStore``: its
chunks read and written by the same Rust S3 store, metadata by s3fs).

Create, write, read, partial shard reads, listing, deletion, resize, consolidated metadata and
groups; every value compared exactly with numpy, the stored objects checked in the bucket, and
what zarrox's pipeline wrote read back by zarr-python's own pipeline. The fault proxy checks
which requests a read sends and that store failures reach the caller."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
from conftest import assert_identical, make_data, partial_writes, split_codecs

zarr = pytest.importorskip("zarr")
pytest.importorskip("obstore")
pytest.importorskip("s3fs")

ZARROX = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
DEFAULT = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
KINDS = ("obstore", "s3fs")
PREFIX = "x.zarr"

ZSTD = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
]
LAYOUTS: dict[str, dict[str, Any]] = {
    "v3-zstd": {"chunks": (8, 16), **split_codecs(ZSTD)},
    "v3-sharded": {"chunks": (4, 8), "shards": (16, 32), **split_codecs(ZSTD)},
    "v3-transpose-big-crc32c": {
        "chunks": (8, 16),
        **split_codecs(
            [
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "crc32c"},
            ]
        ),
    },
    "v2-zlib": {"chunks": (8, 16), "zarr_format": 2, "compressors": {"id": "zlib", "level": 1}},
}
#: Uncompressed inner chunks: the bytes a partial read may fetch are known.
SHARDED_RAW = {"chunks": (4, 8), "shards": (16, 32), "compressors": None}
SHAPE = (37, 45)  # edge chunks in both dimensions


@pytest.fixture(autouse=True)
def zarrox_pipeline() -> Iterator[None]:
    with zarr.config.set(ZARROX), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unstable-specification warnings: not under test
        yield


def zarr_store(bucket: servers.S3Bucket, kind: str, read_only: bool = False) -> Any:
    if kind == "obstore":
        return bucket.zarr_obstore(PREFIX, read_only=read_only)
    return bucket.zarr_s3fs(PREFIX, read_only=read_only)


def pipeline_of(a: Any) -> str:
    return type(a._async_array.codec_pipeline).__name__


def create(store: Any, name: str, layout: str, dtype: str = "int32", **extra: Any) -> Any:
    kwargs = SHARDED_RAW if layout == "v3-sharded-raw" else LAYOUTS[layout]
    a = zarr.create_array(
        store, name=name, shape=SHAPE, dtype=dtype, fill_value=-7, **kwargs, **extra
    )
    assert pipeline_of(a) == "ZarroxCodecPipeline"
    return a


def chunk_keys(bucket: servers.S3Bucket, array: str) -> list[str]:
    """The stored keys of ``array`` that are not metadata, relative to it."""
    base = f"{PREFIX}/{array}/"
    return [
        k[len(base) :]
        for k in bucket.keys(base)
        if not k.endswith(("zarr.json", ".zarray", ".zattrs"))
    ]


def expected_keys(layout: str, grid_ids: list[tuple[int, int]]) -> list[str]:
    if LAYOUTS[layout].get("zarr_format") == 2:
        return sorted(f"{i}.{j}" for i, j in grid_ids)
    return sorted(f"c/{i}/{j}" for i, j in grid_ids)


def grid(layout: str) -> tuple[int, int]:
    shape = LAYOUTS[layout].get("shards") or LAYOUTS[layout]["chunks"]
    return tuple(-(-s // c) for s, c in zip(SHAPE, shape, strict=True))  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Create, write, read
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", KINDS)
def test_write_read_and_stored_objects(s3_bucket: servers.S3Bucket, kind: str, layout: str) -> None:
    data = make_data("int32", SHAPE, seed=1)
    a = create(zarr_store(s3_bucket, kind), "a", layout)
    a[...] = data
    gz, gy = grid(layout)
    assert chunk_keys(s3_bucket, "a") == expected_keys(
        layout, [(i, j) for i in range(gz) for j in range(gy)]
    )
    # a fresh store object: nothing cached
    b = zarr.open_array(zarr_store(s3_bucket, kind, read_only=True), path="a", mode="r")
    assert pipeline_of(b) == "ZarroxCodecPipeline"
    assert_identical(b[...], data, "read all")
    assert_identical(b[3:30:4, 40:], data[3:30:4, 40:], "strided")
    assert_identical(b.oindex[[36, 0, 9], [44, 1]], data[np.ix_([36, 0, 9], [44, 1])], "oindex")
    assert_identical(b.vindex[[1, 36, 20], [44, 0, 7]], data[[1, 36, 20], [44, 0, 7]], "vindex")
    assert_identical(b[36, 44], data[36, 44], "one element")
    # zarr-python's own pipeline reads the same objects
    with zarr.config.set(DEFAULT):
        c = zarr.open_array(zarr_store(s3_bucket, kind, read_only=True), path="a", mode="r")
        assert pipeline_of(c) == "BatchedCodecPipeline"
        assert_identical(c[...], data, "zarr-python's pipeline")


@pytest.mark.parametrize("layout", ["v3-sharded", "v3-transpose-big-crc32c", "v2-zlib"])
@pytest.mark.parametrize("kind", KINDS)
def test_partial_writes(s3_bucket: servers.S3Bucket, kind: str, layout: str) -> None:
    a = create(zarr_store(s3_bucket, kind), "a", layout, dtype="float64")
    model = np.full(SHAPE, -7.0)
    partial_writes(a, model, seed=3)
    b = zarr.open_array(zarr_store(s3_bucket, kind, read_only=True), path="a", mode="r")
    assert_identical(b[...], model, "after partial writes")


@pytest.mark.parametrize("conditional", ["off", "auto"])
def test_fill_value_chunks_are_not_stored_and_deleted(
    s3_bucket: servers.S3Bucket, conditional: str
) -> None:
    a = create(zarr_store(s3_bucket, "obstore"), "a", "v3-zstd")
    a[...] = -7  # all fill value: nothing stored
    assert chunk_keys(s3_bucket, "a") == []
    a[0, 0] = 1
    a[20, 40] = 2
    assert chunk_keys(s3_bucket, "a") == ["c/0/0", "c/2/2"]
    a[0:8, 0:16] = -7  # a whole chunk back to the fill value: the object is deleted
    assert chunk_keys(s3_bucket, "a") == ["c/2/2"]
    a[0, 0] = 1
    with zarrox.config.set({"io.conditional_writes": conditional}):
        a[0, 0] = -7  # a merge that leaves the chunk all fill value
    if conditional == "off":
        # The last writer wins: the object is deleted.
        assert chunk_keys(s3_bucket, "a") == ["c/2/2"]
    else:
        # S3 (through object_store) has no conditional DELETE: the merge commits as a
        # conditional write of an all-fill chunk, so that a writer who committed into the
        # same chunk meanwhile is not deleted.
        assert chunk_keys(s3_bucket, "a") == ["c/0/0", "c/2/2"]
        assert s3_bucket.get(f"{PREFIX}/a/c/0/0") is not None
    model = np.full(SHAPE, -7, dtype="int32")
    model[20, 40] = 2
    assert_identical(a[...], model, "sparse array")


# --------------------------------------------------------------------------------------------
# Partial shard reads
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_inner_chunk_read_fetches_byte_ranges_only(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, kind: str
) -> None:
    data = make_data("int32", SHAPE, seed=2)
    a = create(zarr_store(proxied_bucket, kind), "a", "v3-sharded-raw")
    a[...] = data
    shard_key = f"{PREFIX}/a/c/0/0"
    shard_size = len(proxied_bucket.get(shard_key) or b"")
    inner = 4 * 8 * 4  # one inner chunk, uncompressed
    assert shard_size > 16 * inner
    b = zarr.open_array(zarr_store(proxied_bucket, kind, read_only=True), path="a", mode="r")
    s3_proxy.log(reset=True)
    assert_identical(b[4:8, 8:16], data[4:8, 8:16], "one inner chunk")
    assert_identical(b[1, 9], data[1, 9], "one element")
    gets = [e for e in s3_proxy.log() if e["method"] == "GET" and e["path"].endswith("/a/c/0/0")]
    assert gets, s3_proxy.log()
    assert all(e["range"] for e in gets), gets  # never the whole shard
    fetched = [(e["range"], e["bytes"]) for e in gets]
    index = 16 * 16 + 4
    # Both read by Rust (s3fs's options mapped to the same S3 store): the shard's index is
    # read once, then cached by the shard's generation (the second read is one conditional
    # range read).
    assert sum(e["bytes"] for e in gets) == 2 * inner + index, fetched


# --------------------------------------------------------------------------------------------
# Groups, listing, deletion, resize, consolidated metadata
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_groups_listing_and_deletion(s3_bucket: servers.S3Bucket, kind: str) -> None:
    store = zarr_store(s3_bucket, kind)
    root = zarr.open_group(store, mode="w", attributes={"title": "root"})
    sub = root.create_group("sub", attributes={"level": 1})
    data = make_data("uint16", SHAPE, seed=5)
    for parent, name in ((root, "a"), (sub, "b"), (sub, "c")):
        arr = parent.create_array(name, shape=SHAPE, dtype="uint16", chunks=(16, 16))
        assert pipeline_of(arr) == "ZarroxCodecPipeline"
        arr[...] = data
    g = zarr.open_group(zarr_store(s3_bucket, kind), mode="r")
    assert sorted(g.array_keys()) == ["a"] and sorted(g.group_keys()) == ["sub"]
    assert sorted(g["sub"].array_keys()) == ["b", "c"]
    assert g.attrs["title"] == "root" and g["sub"].attrs["level"] == 1
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["a", "sub", "sub/b", "sub/c"]
    assert_identical(g["sub/c"][...], data, "nested array")

    g = zarr.open_group(zarr_store(s3_bucket, kind), mode="a")
    del g["sub/b"]
    assert not [k for k in s3_bucket.keys(f"{PREFIX}/sub/b/")]
    assert sorted(g["sub"].array_keys()) == ["c"]
    assert s3_bucket.keys(f"{PREFIX}/sub/c/c/") != []  # the sibling keeps its chunks
    assert_identical(g["sub/c"][...], data, "sibling after deletion")


@pytest.mark.parametrize("kind", KINDS)
def test_resize_deletes_chunks_outside(s3_bucket: servers.S3Bucket, kind: str) -> None:
    data = make_data("int32", SHAPE, seed=6)
    a = create(zarr_store(s3_bucket, kind), "a", "v3-zstd")
    a[...] = data
    a.resize((20, 20))
    assert chunk_keys(s3_bucket, "a") == expected_keys(
        "v3-zstd", [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    )
    b = zarr.open_array(zarr_store(s3_bucket, kind), path="a")
    assert b.shape == (20, 20)
    assert_identical(b[...], data[:20, :20], "shrunk")
    b.resize((30, 50))
    got = zarr.open_array(zarr_store(s3_bucket, kind), path="a", mode="r")[...]
    assert_identical(got[:20, :20], data[:20, :20], "grown, old region")
    # chunks the shrink deleted come back as fill value; the kept edge chunks (rows 16-23,
    # columns 0-31) still hold what was written beyond the old shape, as in zarr-python
    assert (got[24:, :] == -7).all() and (got[:, 32:] == -7).all()
    with zarr.config.set(DEFAULT):
        theirs = zarr.open_array(zarr_store(s3_bucket, kind), path="a", mode="r")[...]
    assert_identical(got, theirs, "zarr-python's pipeline after the resizes")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata(s3_bucket: servers.S3Bucket, kind: str, zarr_format: int) -> None:
    store = zarr_store(s3_bucket, kind)
    root = zarr.open_group(store, mode="w", zarr_format=zarr_format)
    data = make_data("float32", SHAPE, seed=7)
    for name in ("a", "sub/b"):
        arr = root.create_array(name, shape=SHAPE, dtype="float32", chunks=(10, 10))
        arr[...] = data
    zarr.consolidate_metadata(zarr_store(s3_bucket, kind))
    consolidated = ".zmetadata" if zarr_format == 2 else "zarr.json"
    assert f"{PREFIX}/{consolidated}" in s3_bucket.keys(PREFIX)
    g = zarr.open_consolidated(
        zarr_store(s3_bucket, kind, read_only=True), zarr_format=zarr_format, mode="r"
    )
    assert g.metadata.consolidated_metadata is not None
    assert sorted(g.metadata.consolidated_metadata.flattened_metadata) == ["a", "sub", "sub/b"]
    assert_identical(g["a"][...], data, "a")
    assert_identical(g["sub/b"][2:9, ::3], data[2:9, ::3], "sub/b")


# --------------------------------------------------------------------------------------------
# Store failures (obstore through the fault proxy)
# --------------------------------------------------------------------------------------------


def written(bucket: servers.S3Bucket, layout: str = "v3-zstd") -> np.ndarray:
    data = make_data("int32", SHAPE, seed=8)
    create(zarr_store(bucket, "obstore"), "a", layout)[...] = data
    return data


def open_read(bucket: servers.S3Bucket) -> Any:
    return zarr.open_array(zarr_store(bucket, "obstore", read_only=True), path="a", mode="r")


@pytest.mark.parametrize(
    "rule",
    [
        servers.FaultRule("status", status=503, times=2),
        servers.FaultRule("status", status=500, times=1),
        servers.FaultRule("drop", times=2),
        servers.FaultRule("truncate", after_bytes=100, times=1),
    ],
    ids=["503-twice", "500-once", "reset-twice", "reset-mid-body-once"],
)
def test_transient_failures_are_retried(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, rule: servers.FaultRule
) -> None:
    data = written(proxied_bucket)
    a = open_read(proxied_bucket)
    rule.path_regex = r"/a/c/1/1$"
    with s3_proxy.faults(rule):
        assert_identical(a[...], data, "read through transient failures")
        assert any(e["action"] != "forward" for e in s3_proxy.log())


def test_a_missing_chunk_object_reads_as_fill(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    data = written(proxied_bucket)
    a = open_read(proxied_bucket)
    with s3_proxy.faults(servers.FaultRule("status", status=404, path_regex=r"/a/c/1/1$")):
        got = a[...]
    data[8:16, 16:32] = -7
    assert_identical(got, data, "chunk (1, 1) answered 404")


def error_of(fn: Any) -> BaseException:
    try:
        fn()
    except Exception as e:
        return e
    raise AssertionError("no exception")


def test_persistent_read_failure_reaches_the_caller_as_with_zarr_python(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    written(proxied_bucket)
    a = open_read(proxied_bucket)
    with s3_proxy.faults(servers.FaultRule("status", status=403, path_regex=r"/a/c/1/1$")):
        ours = error_of(lambda: a[...])
        with zarr.config.set(DEFAULT):
            theirs = error_of(lambda: open_read(proxied_bucket)[...])
    # zarrox reads obstore's stores in Rust: its StoreError is also the obstore exception
    # zarr-python's own pipeline raises, so code that catches that one still does.
    assert isinstance(ours, type(theirs)), (ours, theirs)
    assert isinstance(ours, zarrox.errors.StorePermissionError), ours
    assert "c/1/1" in str(ours)


def test_failed_write_is_not_reported_as_success(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    a = create(zarr_store(proxied_bucket, "obstore"), "a", "v3-zstd")
    data = make_data("int32", SHAPE, seed=9)
    rule = servers.FaultRule("status", status=403, methods=("PUT",), path_regex=r"/a/c/2/1$")
    with s3_proxy.faults(rule):
        error = error_of(lambda: a.__setitem__(Ellipsis, data))
        assert [e["status"] for e in s3_proxy.log() if e["action"] == "status"] == [403]
    assert "c/2/1" in str(error)
    assert "c/2/1" not in chunk_keys(proxied_bucket, "a")
