"""Caches between the engine and the stores (issue #34).

Shard indexes are cached by their shard's generation: reading one inner chunk of a shard whose
index is cached is one request, a range read conditional on that generation (``If-Match`` on an
object store, ``fstat`` of the opened file locally). A shard rewritten behind the cache is seen
at once: no stale index is ever used. Requests are counted by the fault proxy in front of moto."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
from conftest import assert_identical, make_data

SHAPE = (32, 64)
SHARDS = (16, 32)  # 2 x 2 shards
CHUNKS = (4, 8)  # 4 x 4 inner chunks per shard
N_SHARDS = 4
N_INNER = 64
FILL = -7


def inner_chunks() -> Iterator[tuple[slice, slice]]:
    """Every inner chunk's region, shard after shard."""
    for i in range(0, SHAPE[0], CHUNKS[0]):
        for j in range(0, SHAPE[1], CHUNKS[1]):
            yield slice(i, i + CHUNKS[0]), slice(j, j + CHUNKS[1])


def create(url: str, data: np.ndarray, **kwargs: Any) -> Any:
    a = zarrox.create_array(
        url,
        name="a",
        shape=SHAPE,
        dtype="int32",
        chunks=CHUNKS,
        shards=SHARDS,
        compressors=None,
        fill_value=FILL,
        **kwargs,
    )
    a[...] = data
    return a


def chunk_gets(proxy: servers.FaultProxy) -> list[dict[str, Any]]:
    return [e for e in proxy.log() if e["method"] == "GET" and "/a/c/" in e["path"]]


def read_chunk_by_chunk(a: Any, want: np.ndarray, what: str) -> None:
    for region in inner_chunks():
        assert_identical(a[region], want[region], f"{what}: inner chunk {region}")


def test_s3_one_request_per_inner_chunk_and_never_a_stale_index(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("index.zarr")
    data = make_data("int32", SHAPE, seed=3)
    create(url, data, storage_options=opts)
    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)

    s3_proxy.log(reset=True)
    read_chunk_by_chunk(a, data, "first pass")
    gets = chunk_gets(s3_proxy)
    assert len(gets) == N_INNER + N_SHARDS, [e["range"] for e in gets]
    assert all(e["range"] and e["status"] == 206 for e in gets), gets

    s3_proxy.log(reset=True)
    read_chunk_by_chunk(a, data, "second pass")
    gets = chunk_gets(s3_proxy)
    assert len(gets) == N_INNER, "one conditional range read per inner chunk, no index"
    index_bytes = 16 * 16 + 4
    assert all(e["bytes"] == CHUNKS[0] * CHUNKS[1] * 4 for e in gets), gets
    assert all(e["bytes"] != index_bytes for e in gets)

    # Another writer rewrites shard (0, 0) and deletes shard (1, 1) behind the cache.
    w = zarrox.open_array(url, path="a", mode="r+", storage_options=opts)
    new = data.copy()
    new[:16, :32] = make_data("int32", (16, 32), seed=4)
    w[:16, :32] = new[:16, :32]
    w[16:, 32:] = FILL
    new[16:, 32:] = FILL
    assert proxied_bucket.keys("index.zarr/a/c/1/1") == []
    s3_proxy.log(reset=True)
    assert_identical(a[0:4, 0:8], new[0:4, 0:8], "the rewritten shard at once")
    gets = chunk_gets(s3_proxy)
    # The conditional read fails (412: the shard changed); the shard, a few KiB (less than
    # the two round trips of reading its index and the chunk again), is read whole.
    assert [(e["status"], e["range"]) for e in gets] == [(412, gets[0]["range"]), (200, None)], gets
    read_chunk_by_chunk(a, new, "after the rewrite")


def test_local_shard_rewritten_behind_the_index_cache_is_seen_at_once(tmp_path: Path) -> None:
    url = str(tmp_path / "index.zarr")
    data = make_data("int32", SHAPE, seed=5)
    create(url, data)
    a = zarrox.open_array(url, path="a", mode="r")
    read_chunk_by_chunk(a, data, "first pass")
    w = zarrox.open_array(url, path="a", mode="r+")
    for seed in (6, 7, 8):
        new = make_data("int32", SHAPE, seed=seed)
        # Rewrite only some inner chunks: the shards keep their size.
        w[:, :] = new
        read_chunk_by_chunk(a, new, f"rewrite {seed}")
    w[:16, :32] = FILL
    assert_identical(a[4:8, 8:16], np.full((4, 8), FILL, "int32"), "an all-fill shard")


def test_info_shows_the_shard_index_cache(tmp_path: Path) -> None:
    url = str(tmp_path / "info.zarr")
    data = make_data("int32", SHAPE, seed=9)
    create(url, data)
    a = zarrox.open_array(url, path="a", mode="r")
    before = a.info.shard_index_cache
    read_chunk_by_chunk(a, data, "read")
    after = a.info.shard_index_cache
    assert after["hits"] - before["hits"] >= N_INNER - N_SHARDS
    assert after["misses"] - before["misses"] >= N_SHARDS
    assert 0 < after["bytes"] <= after["limit"]
    assert "Shard index cache" in repr(a.info)


# --------------------------------------------------------------------------------------------
# The decoded-chunk cache (cache.bytes, cache.recheck)
# --------------------------------------------------------------------------------------------

PLAIN_CHUNKS = (8, 16)  # 4 x 4 chunks, zstd
N_PLAIN = 16


def create_plain(url: str, data: np.ndarray, **kwargs: Any) -> Any:
    a = zarrox.create_array(
        url, name="a", shape=SHAPE, dtype="int32", chunks=PLAIN_CHUNKS, fill_value=FILL, **kwargs
    )
    a[...] = data
    return a


def cached(recheck: Any, size: int = 64 << 20) -> Any:
    return zarrox.config.set({"cache.bytes": size, "cache.recheck": recheck})


def replace_chunks(root: Path, new: np.ndarray) -> None:
    """Another writer: the chunks of ``new``, written elsewhere, renamed over the array's."""
    other = root.parent / (root.name + ".other")
    create_plain(str(other), new)
    for f in sorted((other / "a" / "c").rglob("*")):
        if f.is_file():
            f.replace(root / "a" / "c" / f.relative_to(other / "a" / "c"))


def test_config_keys_are_checked_and_restored() -> None:
    assert zarrox.config.get("cache.bytes") == 0
    with pytest.raises(ValueError, match="cache.recheck"):
        zarrox.config.set({"cache.recheck": "sometimes"})
    with pytest.raises(ValueError, match="cache.bytes"):
        zarrox.config.set({"cache.bytes": -1})
    with cached("open", 1 << 20):
        assert zarrox._core.chunk_cache()["limit"] == 1 << 20
    assert zarrox._core.chunk_cache()["limit"] == 0


@pytest.mark.parametrize("recheck", ["open", False])
def test_local_cached_reads_are_answered_after_the_files_are_gone(
    tmp_path: Path, recheck: Any
) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=11)
    create_plain(str(root), data)
    with cached(recheck):
        a = zarrox.open_array(str(root), path="a", mode="r")
        assert_identical(a[...], data, "first read")
        shutil.rmtree(root / "a" / "c")
        assert_identical(a[...], data, "answered from the cache")
        assert_identical(a[3:20, 5:40], data[3:20, 5:40], "a part, from the cache")
        b = zarrox.open_array(str(root), path="a", mode="r")
        got = b[...]
    if recheck == "open":
        # Cached before b was opened: checked, and gone.
        assert_identical(got, np.full(SHAPE, FILL, "int32"), "rechecked for a new array")
    else:
        assert_identical(got, data, "never rechecked")


def test_local_recheck_true_always_sees_a_rewrite(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=12)
    create_plain(str(root), data)
    with cached(True):
        a = zarrox.open_array(str(root), path="a", mode="r")
        assert_identical(a[...], data, "first read")
        before = zarrox._core.chunk_cache()
        assert_identical(a[...], data, "unchanged: from the cache after a stat")
        after = zarrox._core.chunk_cache()
        assert after["hits"] - before["hits"] == N_PLAIN
        for seed in (13, 14, 15):
            new = make_data("int32", SHAPE, seed=seed)
            replace_chunks(root, new)
            assert_identical(a[...], new, f"rewrite {seed}")
            shutil.rmtree(root.parent / (root.name + ".other"))
        # A write through zarrox itself leaves the cache too.
        w = zarrox.open_array(str(root), path="a", mode="r+")
        w[:8, :16] = 5
        assert (a[:8, :16] == 5).all()


def test_a_time_bound_expires(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=16)
    create_plain(str(root), data)
    with cached(0.5):
        a = zarrox.open_array(str(root), path="a", mode="r")
        assert_identical(a[...], data, "first read")
        new = make_data("int32", SHAPE, seed=17)
        t0 = time.monotonic()
        replace_chunks(root, new)
        stale = a[...]
        if time.monotonic() - t0 < 0.4:
            assert_identical(stale, data, "within the bound: the cached chunks")
        time.sleep(0.6)
        assert_identical(a[...], new, "the bound expired: checked, and read again")


def test_eviction_keeps_within_the_budget(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=18)
    create_plain(str(root), data)
    chunk_bytes = PLAIN_CHUNKS[0] * PLAIN_CHUNKS[1] * 4
    budget = 4 * chunk_bytes + 2048
    with cached(True, budget):
        a = zarrox.open_array(str(root), path="a", mode="r")
        for _ in range(2):
            assert_identical(a[...], data, "read through a small cache")
            stats = zarrox._core.chunk_cache()
            assert stats["limit"] == budget
            assert 0 < stats["bytes"] <= budget and 0 < stats["entries"] < N_PLAIN, stats
        assert "Chunk cache" in repr(a.info)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_forked_child_starts_with_an_empty_cache(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=19)
    create_plain(str(root), data)
    with cached(False):
        a = zarrox.open_array(str(root), path="a", mode="r")
        a[...]
        assert zarrox._core.chunk_cache()["entries"] > 0
        pid = os.fork()
        if pid == 0:
            empty = zarrox._core.chunk_cache()["entries"] == 0
            ok = empty and bool((a[...] == data).all())
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert zarrox._core.chunk_cache()["entries"] > 0


def test_concurrent_readers_share_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    data = make_data("int32", SHAPE, seed=20)
    create_plain(str(root), data)
    with cached(True):
        a = zarrox.open_array(str(root), path="a", mode="r")
        before = zarrox._core.chunk_cache()
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda i: a[i % 32 :, :], range(32)))
        for i, g in enumerate(got):
            assert_identical(g, data[i % 32 :, :], f"reader {i}")
        after = zarrox._core.chunk_cache()
        assert after["hits"] - before["hits"] > after["misses"] - before["misses"]


def test_s3_cached_second_pass_requests(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("plain.zarr")
    data = make_data("int32", SHAPE, seed=21)
    create_plain(url, data, storage_options=opts)
    with cached("open"):
        a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
        s3_proxy.log(reset=True)
        assert_identical(a[...], data, "first pass")
        assert len(chunk_gets(s3_proxy)) == N_PLAIN
        s3_proxy.log(reset=True)
        assert_identical(a[...], data, "second pass")
        assert chunk_gets(s3_proxy) == [], "recheck 'open': no request"
        zarrox.config.set({"cache.recheck": True})
        s3_proxy.log(reset=True)
        assert_identical(a[...], data, "rechecked")
        gets = chunk_gets(s3_proxy)
        assert len(gets) == N_PLAIN, gets
        assert all(e["status"] == 304 and e["bytes"] == 0 for e in gets), gets
        # Another writer deletes the objects: seen at once.
        client = servers.s3_client(proxied_bucket.direct_endpoint or proxied_bucket.endpoint)
        for key in proxied_bucket.keys("plain.zarr/a/c/"):
            client.delete_object(Bucket=proxied_bucket.name, Key=key)
        assert_identical(a[...], np.full(SHAPE, FILL, "int32"), "deleted behind the cache")
        zarrox.config.set({"cache.recheck": False})
        assert_identical(a[...], np.full(SHAPE, FILL, "int32"), "missing chunks cached too")


# --------------------------------------------------------------------------------------------
# Decoded inner chunks of sharded arrays in the chunk cache, at their shard's generation
# --------------------------------------------------------------------------------------------


def chunk_requests(proxy: servers.FaultProxy, array: str = "a") -> list[dict[str, Any]]:
    """Every request for a chunk or shard of ``array`` (any method)."""
    return [e for e in proxy.log() if f"/{array}/c/" in e["path"]]


def bodyless(e: dict[str, Any]) -> bool:
    """A revalidation: a HEAD, or a conditional GET answered 304, with no body sent."""
    return e["bytes"] == 0 and (e["method"] == "HEAD" or e["status"] == 304)


def replace_shards(root: Path, new: np.ndarray) -> None:
    """Another writer: the shards of ``new``, written elsewhere, renamed over the array's."""
    other = root.parent / (root.name + ".other")
    shutil.rmtree(other, ignore_errors=True)
    create(str(other), new)
    for f in sorted((other / "a" / "c").rglob("*")):
        if f.is_file():
            f.replace(root / "a" / "c" / f.relative_to(other / "a" / "c"))
    shutil.rmtree(other)


def copy_objects(bucket: servers.S3Bucket, src: str, dst: str) -> None:
    """Another writer: every object under ``src`` copied over the same key under ``dst``
    (straight to moto, not through the proxy)."""
    client = servers.s3_client(bucket.direct_endpoint or bucket.endpoint)
    for key in bucket.keys(src):
        client.copy_object(
            Bucket=bucket.name,
            Key=dst + key[len(src) :],
            CopySource={"Bucket": bucket.name, "Key": key},
        )


def delete_objects(bucket: servers.S3Bucket, prefix: str) -> None:
    client = servers.s3_client(bucket.direct_endpoint or bucket.endpoint)
    for key in bucket.keys(prefix):
        client.delete_object(Bucket=bucket.name, Key=key)
    assert bucket.keys(prefix) == []


def test_s3_sharded_inner_chunks_are_cached_at_their_shards_generation(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    """First pass: at most one request per inner chunk plus one per shard (its index).
    recheck "open": a second pass makes no request. recheck True: one request per inner chunk
    read, without a body (a HEAD, or a conditional GET answered 304), and a shard rewritten or
    deleted by another writer is seen at once."""
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("sharded.zarr")
    data = make_data("int32", SHAPE, seed=31)
    new = make_data("int32", SHAPE, seed=32)
    create(url, data, storage_options=opts)
    create(proxied_bucket.url("sharded-new.zarr"), new, storage_options=opts)
    with cached("open"):
        a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
        s3_proxy.log(reset=True)
        read_chunk_by_chunk(a, data, "first pass")
        reqs = chunk_requests(s3_proxy)
        assert 0 < len(reqs) <= N_INNER + N_SHARDS, [(e["method"], e["range"]) for e in reqs]

        s3_proxy.log(reset=True)
        read_chunk_by_chunk(a, data, 'second pass, recheck "open"')
        reqs = chunk_requests(s3_proxy)
        assert reqs == [], f'recheck "open": {len(reqs)} requests, none expected: {reqs[:4]}'

        zarrox.config.set({"cache.recheck": True})
        s3_proxy.log(reset=True)
        read_chunk_by_chunk(a, data, "recheck True")
        reqs = chunk_requests(s3_proxy)
        assert len(reqs) == N_INNER, f"one revalidation per inner chunk read: {len(reqs)}"
        assert all(bodyless(e) for e in reqs), [e for e in reqs if not bodyless(e)][:4]

        # Another writer rewrites every shard: seen at once, then deletes them: fill.
        copy_objects(proxied_bucket, "sharded-new.zarr/a/c/", "sharded.zarr/a/c/")
        read_chunk_by_chunk(a, new, "recheck True, the shards rewritten")
        delete_objects(proxied_bucket, "sharded.zarr/a/c/")
        read_chunk_by_chunk(a, np.full(SHAPE, FILL, "int32"), "recheck True, the shards deleted")


@pytest.mark.parametrize("recheck", ["open", False])
def test_local_sharded_inner_chunks_answered_after_the_shards_are_gone(
    tmp_path: Path, recheck: Any
) -> None:
    root = tmp_path / "sharded.zarr"
    data = make_data("int32", SHAPE, seed=33)
    create(str(root), data)
    with cached(recheck):
        a = zarrox.open_array(str(root), path="a", mode="r")
        read_chunk_by_chunk(a, data, "first pass")
        shutil.rmtree(root / "a" / "c")
        read_chunk_by_chunk(a, data, f"recheck {recheck!r}, the shard files deleted")


def test_local_sharded_recheck_true_sees_a_rewritten_shard_at_once(tmp_path: Path) -> None:
    root = tmp_path / "sharded.zarr"
    data = make_data("int32", SHAPE, seed=34)
    create(str(root), data)
    with cached(True):
        a = zarrox.open_array(str(root), path="a", mode="r")
        read_chunk_by_chunk(a, data, "first pass")
        read_chunk_by_chunk(a, data, "second pass")
        for seed in (35, 36):
            new = make_data("int32", SHAPE, seed=seed)
            replace_shards(root, new)
            read_chunk_by_chunk(a, new, f"rewrite {seed}")
        shutil.rmtree(root / "a" / "c")
        read_chunk_by_chunk(a, np.full(SHAPE, FILL, "int32"), "the shard files deleted")


# --------------------------------------------------------------------------------------------
# Writes through zarrox put what they wrote in the cache
# --------------------------------------------------------------------------------------------

#: the region written: not aligned to chunks, inner chunks or shards
WRITTEN = (slice(5, 27), slice(3, 45))
#: the chunks it touches, whole: chunks of 8 x 16, inner chunks of 4 x 8
TOUCHED = {
    "plain": (slice(0, 32), slice(0, 48)),
    "sharded": (slice(4, 28), slice(0, 48)),
}
LAYOUTS = {"plain": create_plain, "sharded": create}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_s3_a_write_then_a_read_reads_nothing(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, layout: str
) -> None:
    """cache on, recheck "open": what a write wrote (the chunks it touched, merged with what
    was there) is read back from the cache, with no GET."""
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url(f"{layout}-w.zarr")
    data = make_data("int32", SHAPE, seed=37)
    LAYOUTS[layout](url, data, storage_options=opts)
    patch = make_data("int32", SHAPE, seed=38)[WRITTEN]
    want = data.copy()
    want[WRITTEN] = patch
    with cached("open"):
        a = zarrox.open_array(url, path="a", mode="r+", storage_options=opts)
        a[WRITTEN] = patch
        s3_proxy.log(reset=True)
        assert_identical(a[WRITTEN], want[WRITTEN], "the region written")
        touched = TOUCHED[layout]
        assert_identical(a[touched], want[touched], "the chunks the write touched")
        gets = [e for e in chunk_requests(s3_proxy) if e["method"] == "GET"]
        assert gets == [], f"{len(gets)} GETs after the write: {gets[:4]}"
        assert chunk_requests(s3_proxy) == []
    # the store has it too
    b = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    assert_identical(b[...], want, "read again without the cache")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_local_a_write_is_read_back_from_the_cache(tmp_path: Path, layout: str) -> None:
    """The same locally: after the write the chunk files are deleted, and the written values
    (not fill values) are read back."""
    root = tmp_path / f"{layout}.zarr"
    data = make_data("int32", SHAPE, seed=39)
    LAYOUTS[layout](str(root), data)
    patch = make_data("int32", SHAPE, seed=40)[WRITTEN]
    want = data.copy()
    want[WRITTEN] = patch
    with cached("open"):
        a = zarrox.open_array(str(root), path="a", mode="r+")
        a[WRITTEN] = patch
        shutil.rmtree(root / "a" / "c")
        assert_identical(a[WRITTEN], want[WRITTEN], "the region written, files deleted")
        touched = TOUCHED[layout]
        assert_identical(a[touched], want[touched], "the chunks it touched, files deleted")


# --------------------------------------------------------------------------------------------
# TensorStore specs: cache_pool and recheck_cached_data, side by side with tensorstore
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("recheck", [True, "open", False])
def test_tensorstore_specs_cache_as_tensorstore_does(tmp_path: Path, recheck: Any) -> None:
    ts = pytest.importorskip("tensorstore")
    root = tmp_path / "ts.zarr"
    data = make_data("int32", SHAPE, seed=22)
    create_plain(str(root), data)
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(root / "a")},
        "context": {"cache_pool": {"total_bytes_limit": 64 << 20}},
        "recheck_cached_data": recheck,
    }
    try:
        theirs = ts.open(spec).result()
        ours = zarrox.open(spec)
        assert_identical(theirs.read().result(), data, "tensorstore")
        assert_identical(ours.read(), data, "zarrox")
        assert ours.spec().to_json().get("recheck_cached_data", True) == recheck
        shutil.rmtree(root / "a" / "c")
        after_theirs = theirs.read().result()
        after_ours = ours.read()
        assert_identical(after_ours, after_theirs, f"recheck {recheck!r}: as tensorstore")
        want = np.full(SHAPE, FILL, "int32") if recheck is True else data
        assert_identical(after_ours, want, f"recheck {recheck!r}")
    finally:
        zarrox.config.set({"cache.bytes": 0, "cache.recheck": True})


@pytest.mark.parametrize("recheck", [True, "open", False])
def test_zarr_python_on_zarrox_pipeline_uses_the_cache(tmp_path: Path, recheck: Any) -> None:
    zarr = pytest.importorskip("zarr")
    pipeline = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    data = make_data("int32", SHAPE, seed=23)
    with zarr.config.set(pipeline), cached(recheck):
        z = zarr.create_array(
            str(tmp_path),
            name="a",
            shape=SHAPE,
            chunks=PLAIN_CHUNKS,
            dtype="int32",
            fill_value=FILL,
        )
        z[...] = data
        a = zarr.open_array(str(tmp_path), path="a", mode="r")
        assert_identical(np.asarray(a[...]), data, "first read")
        shutil.rmtree(tmp_path / "a" / "c")
        got = np.asarray(a[...])
    want = np.full(SHAPE, FILL, "int32") if recheck is True else data
    assert_identical(got, want, f"recheck {recheck!r}, the chunks deleted")


def test_a_spec_cache_pool_is_the_open_arrays_own(tmp_path: Path) -> None:
    """As TensorStore makes a context per open: the pool a spec names caches for that open
    (and its views) alone, with its own budget; the process's cache stays as configured."""
    ts = pytest.importorskip("tensorstore")
    root = tmp_path / "pool.zarr"
    data = make_data("int32", SHAPE, seed=24)
    create_plain(str(root), data)
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(root / "a")},
        "context": {"cache_pool": {"total_bytes_limit": 64 << 20}},
        "recheck_cached_data": False,
    }
    first_theirs = ts.open(spec).result()
    first = zarrox.open(spec)
    assert_identical(first.read(), data, "first open")
    assert_identical(first_theirs.read().result(), data, "tensorstore, first open")
    assert zarrox.config["cache.bytes"] == 0, "the process's budget is left alone"
    assert zarrox._core.chunk_cache()["entries"] == 0, "nothing went into the process's cache"
    shutil.rmtree(root / "a" / "c")
    # The first open (and a view of it) answers from its pool; a second open, with a pool
    # of its own, reads the store: the fill value, as a second tensorstore open does.
    assert_identical(first.read(), data, "first open, files gone")
    assert_identical(first[2:5].read(), data[2:5], "a view shares its open's pool")
    second = zarrox.open(spec)
    second_theirs = ts.open(spec).result()
    fill = np.full(SHAPE, FILL, "int32")
    assert_identical(second_theirs.read().result(), fill, "tensorstore, second open")
    assert_identical(second.read(), fill, "second open")
    # A pool of 0 bytes (TensorStore's default limit) caches nothing.
    again = tmp_path / "again.zarr"
    create_plain(str(again), data)
    kvstore = {"driver": "file", "path": str(again / "a")}
    none = zarrox.open({**spec, "kvstore": kvstore, "context": {"cache_pool": {}}})
    assert_identical(none.read(), data, "no pool budget")
    shutil.rmtree(again / "a" / "c")
    assert_identical(none.read(), fill, "nothing cached without a budget")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("recheck", [True, "open", False])
def test_tensorstore_s3_specs_cache_as_tensorstore_does(
    s3_bucket: servers.S3Bucket, monkeypatch: pytest.MonkeyPatch, layout: str, recheck: Any
) -> None:
    """The same spec (an ``s3`` kvstore on moto, a cache_pool, recheck_cached_data) given to
    tensorstore and to zarrox: after another writer rewrites the objects, and after it deletes
    them, both answer the same: the cached values with ``false`` and ``"open"`` (cached after
    the open), what is stored now with ``true``."""
    ts = pytest.importorskip("tensorstore")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # tensorstore's credentials
        monkeypatch.setenv(key, s3_bucket.env()[key])
    opts = s3_bucket.object_store_options()
    data = make_data("int32", SHAPE, seed=41)
    new = make_data("int32", SHAPE, seed=42)
    LAYOUTS[layout](s3_bucket.url("ts.zarr"), data, storage_options=opts)
    LAYOUTS[layout](s3_bucket.url("ts-new.zarr"), new, storage_options=opts)
    spec = {
        "driver": "zarr3",
        "kvstore": s3_bucket.tensorstore_kvstore("ts.zarr/a/"),
        "context": {"cache_pool": {"total_bytes_limit": 64 << 20}},
        "recheck_cached_data": recheck,
    }
    try:
        theirs = ts.open(spec).result()
        ours = zarrox.open(spec)

        def both(want: np.ndarray, what: str) -> None:
            got_theirs = theirs.read().result()
            got_ours = ours.read()
            assert_identical(got_theirs, want, f"tensorstore, recheck {recheck!r}: {what}")
            assert_identical(got_ours, got_theirs, f"zarrox as tensorstore, {recheck!r}: {what}")

        both(data, "first read")
        both(data, "second read")
        copy_objects(s3_bucket, "ts-new.zarr/a/c/", "ts.zarr/a/c/")
        both(new if recheck is True else data, "rewritten by another writer")
        delete_objects(s3_bucket, "ts.zarr/a/c/")
        both(np.full(SHAPE, FILL, "int32") if recheck is True else data, "deleted")
    finally:
        zarrox.config.set({"cache.bytes": 0, "cache.recheck": True})


# --------------------------------------------------------------------------------------------
# Peak memory: the cache keeps to its budget
# --------------------------------------------------------------------------------------------

#: 256 MiB of int32 in chunks (plain) or inner chunks (sharded, 16 MiB shards) of 1 MiB
BIG_SHAPE = (8192, 8192)
BIG_CHUNKS = (512, 512)
BIG_SHARDS = (2048, 2048)
BIG_READ = BIG_CHUNKS[0] * BIG_CHUNKS[1] * 4
BUDGET = 32 << 20
BLOSC = {"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle", "typesize": 4}
#: what the allocators (mimalloc in the engine, glibc under numpy) may keep beyond what is
#: live: freed pages not yet returned, per-thread heaps, the stores' read buffers
ALLOCATOR_SLACK = 48 << 20
#: the child's resident memory that kills it and fails the test
RSS_CAP = 2 << 30

MEMORY_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import numpy as np
    import zarrox

    path, budget = sys.argv[1], int(sys.argv[2])
    shape, chunks = (8192, 8192), (512, 512)

    def status(field):
        with open("/proc/self/status") as f:
            return next(int(ln.split()[1]) << 10 for ln in f if ln.startswith(field + ":"))

    zarrox.config.set({"cache.bytes": budget, "cache.recheck": "open"})
    a = zarrox.open_array(path, path="a", mode="r")
    regions = [
        (slice(i, i + chunks[0]), slice(j, j + chunks[1]))
        for i in range(0, shape[0], chunks[0])
        for j in range(0, shape[1], chunks[1])
    ]
    a[regions[0]]  # setup: the thread pool, the store, the codecs
    try:  # the peak starts afresh here (Linux: "5" resets VmHWM to VmRSS)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        peak = lambda: status("VmHWM")
    except OSError:
        peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
    base, largest = status("VmRSS"), 0
    for n in range(2):
        for r in regions:
            got = a[r]
            # the values: element (i, j) is i * shape[1] + j
            # (int32 throughout: one temporary the size of the read)
            rows = np.arange(r[0].start, r[0].stop, dtype="int32")[:, None] * shape[1]
            want = rows + np.arange(r[1].start, r[1].stop, dtype="int32")
            if not np.array_equal(got, want):
                raise SystemExit(f"pass {n}: wrong values at {r}")
            largest = max(largest, got.nbytes)
            del got, want, rows
    stats = zarrox._core.chunk_cache()
    print(json.dumps({"base": base, "peak": peak(), "largest": largest, "cache": stats}))
    """
)


def rss_of(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def run_memory_child(path: Path, budget: int) -> dict[str, Any]:
    """MEMORY_CHILD on the array at ``path`` with ``cache.bytes = budget``; a watcher thread
    reads its resident memory every 5 ms and kills it past RSS_CAP (the test fails)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", MEMORY_CHILD, str(path), str(budget)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MALLOC_ARENA_MAX": "2"},
    )
    killed: list[int] = []

    def watch() -> None:
        while proc.poll() is None:
            rss = rss_of(proc.pid)
            if rss > RSS_CAP:
                killed.append(rss)
                proc.send_signal(signal.SIGKILL)
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the child ran past 300 s: {err[-2000:]}")
    finally:
        watcher.join()
    if killed:
        pytest.fail(f"the child was killed: resident {killed[0] >> 20} MiB > {RSS_CAP >> 20} MiB")
    assert proc.returncode == 0, f"the child failed ({proc.returncode}): {err[-3000:]}"
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def big_arrays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """256 MiB arrays (blosc with bit shuffling: 2 MiB on disk), element (i, j) =
    i * 8192 + j, unsharded and sharded; written in bands of 2048 rows."""
    root = tmp_path_factory.mktemp("big")
    out = {}
    for layout, kw in (("plain", {}), ("sharded", {"shards": BIG_SHARDS})):
        a = zarrox.create_array(
            str(root / layout),
            name="a",
            shape=BIG_SHAPE,
            chunks=BIG_CHUNKS,
            dtype="int32",
            compressors=[{"name": "blosc", "configuration": BLOSC}],
            **kw,
        )
        band = BIG_SHARDS[0]
        for i in range(0, BIG_SHAPE[0], band):
            rows = np.arange(i, i + band, dtype="int64")[:, None] * BIG_SHAPE[1]
            a[i : i + band] = (rows + np.arange(BIG_SHAPE[1])).astype("int32")
        out[layout] = root / layout
    return out


def memory_bound(largest: int) -> int:
    """What a chunk-by-chunk pass may add to the resident memory: the cache's budget, the
    largest single read (its output and the expected values it is compared with: twice) and
    the allocators' slack."""
    return BUDGET + 2 * largest + ALLOCATOR_SLACK


@pytest.mark.parametrize("layout", ["plain", "sharded"])
def test_a_cached_workload_keeps_to_the_budget(big_arrays: dict[str, Path], layout: str) -> None:
    """256 MiB read chunk by chunk twice through a 32 MiB cache: the peak resident memory grows
    by at most the budget, the largest single read and the allocators' slack."""
    got = run_memory_child(big_arrays[layout], BUDGET)
    growth = got["peak"] - got["base"]
    assert got["largest"] == BIG_READ
    assert got["cache"]["limit"] == BUDGET and got["cache"]["bytes"] <= BUDGET, got
    bound = memory_bound(got["largest"])
    assert growth <= bound, (
        f"peak resident memory grew by {growth >> 20} MiB, more than {bound >> 20} MiB (the "
        f"budget {BUDGET >> 20} MiB, twice the largest read, {ALLOCATOR_SLACK >> 20} MiB of"
        f" slack): {got}"
    )


@pytest.mark.parametrize("layout", ["plain", "sharded"])
def test_the_memory_check_sees_a_cache_that_keeps_everything(
    big_arrays: dict[str, Path], layout: str
) -> None:
    """The control of the test above: with a budget larger than the array the cache keeps all
    256 MiB, and the same measurement is over the bound. (Sharded: the inner chunks are
    cached too.)"""
    got = run_memory_child(big_arrays[layout], 1 << 30)
    growth = got["peak"] - got["base"]
    assert got["cache"]["bytes"] >= BIG_SHAPE[0] * BIG_SHAPE[1] * 4, got
    assert growth > memory_bound(got["largest"]), got


@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "sharded"])
def test_a_shrinking_resize_leaves_nothing_of_its_chunks_in_the_cache(
    tmp_path: Path, sharded: bool
) -> None:
    """Chunks a resize deletes leave the cache too: grown back, the array reads the fill
    value there even with recheck False (nothing is checked against the store)."""
    data = np.arange(64, dtype="int32") + 1
    shards = {"shards": (16,)} if sharded else {}
    with cached(False):
        a = zarrox.create_array(
            str(tmp_path), shape=(64,), chunks=(8,), dtype="int32", fill_value=-1, **shards
        )
        a[:] = data
        assert_identical(a[:], data, "cached")
        a.resize((16,))
        a.resize((64,))
        want = np.concatenate([data[:16], np.full(48, -1, "int32")])
        assert_identical(a[:], want, "grown back after a shrink")


def test_s3_a_scan_reads_ahead_and_jumps_do_not(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    """With the cache on, a read that continues where the previous read of a shard ended
    brings the inner chunks after it in the same request (one more, then twice as many
    each time): a chunk-by-chunk scan makes a few requests per shard. Reads in the other
    order never continue one another: one request per inner chunk plus one per shard, no
    byte read ahead."""
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("ahead.zarr")
    data = make_data("int32", SHAPE, seed=35)
    create(url, data, storage_options=opts)
    with cached("open"):
        a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
        s3_proxy.log(reset=True)
        read_chunk_by_chunk(a, data, "a scan")
        scan = chunk_requests(s3_proxy)
        assert len(scan) <= 8 * N_SHARDS, f"{len(scan)} requests for {N_INNER} inner chunks"
        s3_proxy.log(reset=True)
        read_chunk_by_chunk(a, data, "the scan again: all cached")
        assert chunk_requests(s3_proxy) == []
    other = proxied_bucket.url("backwards.zarr")  # no index of it cached yet
    create(other, data, storage_options=opts)
    with cached("open"):
        b = zarrox.open_array(other, path="a", mode="r", storage_options=opts)
        s3_proxy.log(reset=True)
        for region in reversed(list(inner_chunks())):
            assert_identical(b[region], data[region], f"backwards: {region}")
        jumps = chunk_requests(s3_proxy)
        assert len(jumps) == N_INNER + N_SHARDS, len(jumps)
        inner_bytes = 4 * CHUNKS[0] * CHUNKS[1]
        ranges = [e for e in jumps if not str(e["range"]).startswith("bytes=-")]  # no index
        assert len(ranges) == N_INNER
        assert all(e["bytes"] == inner_bytes for e in ranges), [e["bytes"] for e in ranges][:8]
