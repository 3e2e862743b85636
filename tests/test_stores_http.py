"""zarr-python with zarrox's codec pipeline (strict) reading stores over HTTP, read-only:
written to a directory by zarr-python's own pipeline, served on 127.0.0.1 by a static server
with Range support and by one that ignores Range, read through fsspec's HTTPFileSystem
(``zarr.storage.FsspecStore``) and obstore's HTTPStore (``zarr.storage.ObjectStore``).

Arrays (v3, v2, sharded), groups and consolidated metadata; values compared exactly. A server
that ignores Range sends whole objects: the ranges are cut out of them, with a warning."""

from __future__ import annotations

import shutil
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
from conftest import HttpSite, assert_identical, make_data

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
obstore = pytest.importorskip("obstore")
pytest.importorskip("aiohttp")

ZARROX = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
CLIENTS = ("fsspec", "obstore")
SHAPE = (30, 41)
ZSTD = zarr.codecs.ZstdCodec(level=1)

#: What the published store holds: path -> (zarr-python create_array arguments).
ARRAYS: dict[str, dict[str, Any]] = {
    "v3/zstd": {"chunks": (8, 16), "compressors": ZSTD},
    "v3/sharded": {"chunks": (5, 8), "shards": (10, 24), "compressors": ZSTD},
    "v3/sub/raw": {"chunks": (7, 41), "compressors": None},
    "v2/zlib": {"chunks": (8, 16), "zarr_format": 2, "compressors": numcodecs.Zlib(level=1)},
    "v2/sub/F": {
        "chunks": (16, 8),
        "zarr_format": 2,
        "order": "F",
        "compressors": numcodecs.GZip(level=1),
    },
}
UNSHARDED = [p for p in ARRAYS if "sharded" not in p]


def data_of(path: str) -> np.ndarray:
    return make_data("float64", SHAPE, seed=sum(map(ord, path)))


@pytest.fixture(scope="module")
def published(http_root: Path, http_server: servers.ServerProcess) -> HttpSite:
    """A store written by zarr-python's own pipeline (two group trees, v3 and v2, each with
    consolidated metadata), in a directory the HTTP servers serve."""
    root = http_root / f"published-{uuid.uuid4().hex[:8]}.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fmt in (3, 2):
            zarr.open_group(root / f"v{fmt}", mode="w", zarr_format=fmt, attributes={"fmt": fmt})
        for path, kwargs in ARRAYS.items():
            kwargs = {"fill_value": np.nan, **kwargs}
            a = zarr.create_array(str(root), name=path, shape=SHAPE, dtype="float64", **kwargs)
            a[...] = data_of(path)
        for fmt in (3, 2):
            zarr.consolidate_metadata(str(root / f"v{fmt}"), zarr_format=fmt)
    return HttpSite(root, f"{http_server.url}/{root.name}")


@pytest.fixture(autouse=True)
def zarrox_pipeline() -> Iterator[None]:
    with zarr.config.set(ZARROX), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def http_store(url: str, client: str) -> Any:
    if client == "fsspec":
        from zarr.storage import FsspecStore

        return FsspecStore.from_url(url, read_only=True)
    from obstore.store import HTTPStore
    from zarr.storage import ObjectStore

    return ObjectStore(HTTPStore.from_url(url, client_options={"allow_http": True}), read_only=True)


def open_array(url: str, client: str, path: str) -> Any:
    a = zarr.open_array(http_store(url, client), path=path, mode="r")
    assert type(a._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
    return a


def check_reads(a: Any, want: np.ndarray, what: str) -> None:
    assert_identical(a[...], want, f"{what}: all")
    assert_identical(a[3:29:5, 7:], want[3:29:5, 7:], f"{what}: strided")
    assert_identical(a[29, 40], want[29, 40], f"{what}: last element")
    assert_identical(a.oindex[[0, 29], [40, 3, 8]], want[np.ix_([0, 29], [40, 3, 8])], what)


@pytest.mark.parametrize("path", list(ARRAYS))
@pytest.mark.parametrize("client", CLIENTS)
def test_arrays_over_http_with_range(published: HttpSite, client: str, path: str) -> None:
    check_reads(open_array(published.url, client, path), data_of(path), f"{client} {path}")


@pytest.mark.parametrize("path", UNSHARDED)
@pytest.mark.parametrize("client", CLIENTS)
def test_unsharded_arrays_over_http_without_range(
    published: HttpSite, http_norange_server: servers.ServerProcess, client: str, path: str
) -> None:
    site = published.at(http_norange_server.url)
    check_reads(open_array(site.url, client, path), data_of(path), f"{client} {path}")


@pytest.mark.parametrize("client", CLIENTS)
def test_inner_chunk_over_http_fetches_byte_ranges_only(
    published: HttpSite, http_proxy: servers.FaultProxy, client: str
) -> None:
    site = published.at(http_proxy.url)
    a = open_array(site.url, client, "v3/sharded")
    http_proxy.log(reset=True)
    want = data_of("v3/sharded")
    assert_identical(a[10:15, 8:16], want[10:15, 8:16], "one inner chunk")
    gets = [e for e in http_proxy.log() if e["method"] == "GET"]
    assert [e["path"].rsplit("/", 3)[1:] for e in gets] == [["c", "1", "0"]] * len(gets)
    assert all(e["range"] and e["status"] == 206 for e in gets), gets
    shard = (published.dir / "v3/sharded/c/1/0").stat().st_size
    assert sum(e["bytes"] for e in gets) < shard / 3, (gets, shard)


@pytest.mark.parametrize("client", CLIENTS)
def test_sharded_over_http_without_range_cuts_ranges_out_of_whole_shards(
    published: HttpSite, http_norange_server: servers.ServerProcess, client: str
) -> None:
    # the server sends whole shards: zarrox takes the ranges it asked for out of them (Rust's
    # object store, for obstore's HTTPStore and fsspec's HTTP file system alike), and warns
    # once per store (each client gets a copy of its own: a store already warned about
    # stays quiet)
    copy = published.dir.with_name(f"{published.dir.stem}-{client}.zarr")
    if not copy.exists():
        shutil.copytree(published.dir, copy)
    site = HttpSite(copy, f"{http_norange_server.url}/{copy.name}")
    a = open_array(site.url, client, "v3/sharded")
    want = data_of("v3/sharded")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_identical(a[10:15, 8:16], want[10:15, 8:16], f"{client} one inner chunk")
        check_reads(a, want, f"{client} sharded")
    assert [w.category for w in caught if "ignores byte ranges" in str(w.message)] == [
        RuntimeWarning
    ]


@pytest.mark.parametrize("fmt", [3, 2])
@pytest.mark.parametrize("client", CLIENTS)
def test_consolidated_groups_over_http(
    published: HttpSite, http_proxy: servers.FaultProxy, client: str, fmt: int
) -> None:
    site = published.at(http_proxy.url)
    g = zarr.open_group(http_store(f"{site.url}/v{fmt}", client), mode="r", zarr_format=fmt)
    assert g.metadata.consolidated_metadata is not None
    assert g.attrs["fmt"] == fmt
    prefix = f"v{fmt}/"
    want = sorted(p[len(prefix) :] for p in ARRAYS if p.startswith(prefix))
    assert sorted(g.array_keys()) == [k for k in want if "/" not in k]
    assert sorted(g.group_keys()) == ["sub"]
    assert sorted(k for k, _ in g.members(max_depth=None)) == sorted([*want, "sub"])
    http_proxy.log(reset=True)
    for name in want:
        arr = g[name]
        assert type(arr._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
        assert_identical(arr[...], data_of(prefix + name), name)
    # every member's metadata came from the consolidated document: only chunks were fetched
    fetched = {e["path"].rsplit("/", 1)[1] for e in http_proxy.log()}
    assert not fetched & {"zarr.json", ".zarray", ".zattrs", ".zgroup"}, fetched


@pytest.mark.parametrize("client", CLIENTS)
def test_missing_chunk_over_http_reads_as_fill(
    published: HttpSite, http_proxy: servers.FaultProxy, client: str
) -> None:
    site = published.at(http_proxy.url)
    a = open_array(site.url, client, "v3/zstd")
    with http_proxy.faults(servers.FaultRule("status", status=404, path_regex=r"/c/1/2$")):
        got = a[...]
    want = data_of("v3/zstd")
    want[8:16, 32:] = np.nan
    assert_identical(got, want, "chunk (1, 2) answered 404")


def test_transient_http_failures_are_retried_by_obstore(
    published: HttpSite, http_proxy: servers.FaultProxy
) -> None:
    site = published.at(http_proxy.url)
    a = open_array(site.url, "obstore", "v3/sharded")
    with http_proxy.faults(
        servers.FaultRule("status", status=503, path_regex=r"/c/0/0$", times=2),
        servers.FaultRule("truncate", after_bytes=10, path_regex=r"/c/1/1$", times=1),
    ):
        assert_identical(a[...], data_of("v3/sharded"), "through transient failures")
        assert sorted(e["action"] for e in http_proxy.log() if e["action"] != "forward") == [
            "status",
            "status",
            "truncate",
        ]
