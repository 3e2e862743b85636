"""zarr-python's ``FsspecStore`` under zarrox's codec pipeline (issue #43 item 3).

An ``FsspecStore`` over s3fs (an ``s3://`` URL with s3fs's storage options), fsspec's local
file system (``file://``) or its HTTP file system is read and written by the same Rust store
zarrox builds from that URL and those options: writes that merge into a stored shard are
conditional (the proxy in front of moto sees ``If-Match``), and zarrox's ``Array.info`` says
so. A file system that cannot be mapped (fsspec's memory file system, s3fs with an option Rust
has no equivalent for) keeps working through Python, and ``info`` says its writes are not
protected. The multi-process lost-update checks are in tests/test_concurrent_writers.py.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
from conftest import HttpSite
from zarrox.storage import LocalStore, PythonZarrStore, RustObjectStore, from_zarr_store
from zarrox.storage.options import fsspec_target

zarr = pytest.importorskip("zarr")
FsspecStore = zarr.storage.FsspecStore

ZARROX = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
DEFAULT = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
SHAPE = (32, 64)
DATA = np.arange(SHAPE[0] * SHAPE[1], dtype="int32").reshape(SHAPE)
#: one inner chunk of the first shard, negated: a write that merges into a stored shard
INNER = (slice(0, 8), slice(0, 16))
WANT = DATA.copy()
WANT[INNER] *= -1


@pytest.fixture(autouse=True)
def zarrox_pipeline() -> Iterator[None]:
    with zarr.config.set(ZARROX), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unstable-specification warnings: not under test
        yield


def write_sharded(store: Any) -> Any:
    """A sharded array written whole, then one inner chunk of a stored shard rewritten."""
    a = zarr.create_array(
        store, name="a", shape=SHAPE, chunks=(8, 16), shards=(16, 32), dtype="int32", fill_value=0
    )
    assert type(a._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
    a[...] = DATA
    a[INNER] = -DATA[INNER]
    return a


def zarr_python_reads(store: Any) -> np.ndarray:
    """The array as zarr-python's own pipeline reads it."""
    with zarr.config.set(DEFAULT):
        return np.asarray(zarr.open_array(store, path="a", mode="r")[...])


def test_s3_url_goes_through_rust_with_conditional_writes(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    pytest.importorskip("s3fs")
    url, opts = proxied_bucket.url("d.zarr"), proxied_bucket.fsspec_options()
    store = FsspecStore.from_url(url, storage_options=opts)
    rust = from_zarr_store(store)
    assert isinstance(rust, RustObjectStore) and rust.url == url
    s3_proxy.log(reset=True)
    write_sharded(store)
    puts = [e for e in s3_proxy.log() if e["method"] == "PUT" and e["path"].endswith("/a/c/0/0")]
    assert [bool(e["if_match"]) for e in puts] == [False, True], puts
    np.testing.assert_array_equal(zarr_python_reads(FsspecStore.from_url(url, opts)), WANT)
    b = zarr.open_array(FsspecStore.from_url(url, opts, read_only=True), path="a", mode="r")
    np.testing.assert_array_equal(b[...], WANT)
    np.testing.assert_array_equal(b[3:21, 5:50], WANT[3:21, 5:50])
    info = zarrox.open_array(store, path="a").info
    assert info.conditional_writes.startswith("yes"), info.conditional_writes


def test_local_file_url_goes_through_rust(tmp_path: Path) -> None:
    root = tmp_path / "d.zarr"
    store = FsspecStore.from_url(f"file://{root}", storage_options={"auto_mkdir": True})
    rust = from_zarr_store(store)
    assert isinstance(rust, LocalStore) and rust.root == root
    write_sharded(store)
    np.testing.assert_array_equal(zarr_python_reads(zarr.storage.LocalStore(root)), WANT)
    b = zarr.open_array(FsspecStore.from_url(f"file://{root}", read_only=True), path="a")
    np.testing.assert_array_equal(b[...], WANT)
    assert zarrox.open_array(store, path="a").info.conditional_writes.startswith("yes")


def test_http_url_is_read_by_rust(http_site: HttpSite) -> None:
    pytest.importorskip("aiohttp")
    write_sharded(zarr.storage.LocalStore(http_site.dir))
    store = FsspecStore.from_url(http_site.url, read_only=True)
    rust = from_zarr_store(store)
    assert isinstance(rust, RustObjectStore) and rust.read_only
    b = zarr.open_array(store, path="a", mode="r")
    np.testing.assert_array_equal(b[...], WANT)
    np.testing.assert_array_equal(b[9:30, 17:40], WANT[9:30, 17:40])


def unprotected(store: Any) -> None:
    """``store`` is served from Python, works, and says its writes are not protected."""
    served = from_zarr_store(store)
    assert isinstance(served, PythonZarrStore) and not served.conditional_writes()
    write_sharded(store)
    np.testing.assert_array_equal(np.asarray(zarr.open_array(store, path="a")[...]), WANT)
    np.testing.assert_array_equal(zarr_python_reads(store), WANT)
    text = zarrox.open_array(store, path="a").info.conditional_writes
    assert text.startswith("no") and "last writer wins" in text, text


def test_memory_file_system_stays_in_python_and_is_unprotected() -> None:
    store = FsspecStore.from_url(f"memory://fsspec-{uuid.uuid4().hex}/d.zarr")
    assert fsspec_target(store.fs, store.path) is None
    unprotected(store)


def test_s3fs_with_an_option_rust_cannot_take_stays_in_python(
    s3_bucket: servers.S3Bucket,
) -> None:
    pytest.importorskip("s3fs")
    opts = {**s3_bucket.fsspec_options(), "config_kwargs": {"max_pool_connections": 4}}
    store = FsspecStore.from_url(s3_bucket.url("d.zarr"), storage_options=opts)
    assert fsspec_target(store.fs, store.path) is None
    unprotected(store)


@pytest.mark.parametrize(
    "options, mapped",
    [
        (
            {"key": "k", "secret": "s", "endpoint_url": "http://127.0.0.1:9"},
            {"key": "k", "secret": "s", "endpoint_url": "http://127.0.0.1:9"},
        ),
        ({"anon": True, "use_listings_cache": False}, {"anon": True}),
        (
            {"username": "k", "password": "s", "client_kwargs": {"region_name": "eu-west-1"}},
            {"key": "k", "secret": "s", "client_kwargs": {"region_name": "eu-west-1"}},
        ),
        ({"anon": True, "requester_pays": True}, None),
        ({"anon": True, "client_kwargs": {"verify": False}}, None),
        ({"profile": "dev"}, None),
    ],
)
def test_s3fs_options_mapped(options: dict[str, Any], mapped: dict[str, Any] | None) -> None:
    s3fs = pytest.importorskip("s3fs")
    fs = s3fs.S3FileSystem(skip_instance_cache=True, **options)
    want = None if mapped is None else ("s3://bkt/p/q", mapped)
    assert fsspec_target(fs, "bkt/p/q/") == want


def test_gcsfs_mapped() -> None:
    gcsfs = pytest.importorskip("gcsfs")

    def target(**options: Any) -> Any:
        return fsspec_target(gcsfs.GCSFileSystem(skip_instance_cache=True, **options), "bkt/p")

    assert target(token="anon") == ("gs://bkt/p", {"anon": True})
    assert target(token="anon", project="x", access="read_only") == ("gs://bkt/p", {"anon": True})
    assert target(token="anon", endpoint_url="http://127.0.0.1:9") is None
    assert target(token="anon", requester_pays=True) is None
    assert isinstance(RustObjectStore(*target(token="anon")), RustObjectStore)


def test_adlfs_mapped() -> None:
    adlfs = pytest.importorskip("adlfs")

    def target(**options: Any) -> Any:
        fs = adlfs.AzureBlobFileSystem(skip_instance_cache=True, **options)
        return fsspec_target(fs, "container/p/")

    key = {"account_name": "acct", "account_key": "a2V5"}
    assert target(**key) == ("az://container/p", key)
    assert target(account_name="acct", anon=True) == (
        "az://container/p",
        {"account_name": "acct", "anon": True},
    )
    assert target(
        connection_string="DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;"
        "EndpointSuffix=core.windows.net"
    ) == ("az://container/p", key)
    emulator = (
        "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;"
        "BlobEndpoint=http://127.0.0.1:10000/acct;"
    )
    assert target(connection_string=emulator) == (
        "az://container/p",
        {**key, "azure_storage_endpoint": "http://127.0.0.1:10000/acct", "allow_http": "true"},
    )
    other_cloud = (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;"
        "EndpointSuffix=core.chinacloudapi.cn"
    )
    assert target(connection_string=other_cloud) is None
    assert target(**key, version_aware=True) is None
    # each mapping builds the Rust store
    assert isinstance(RustObjectStore(*target(connection_string=emulator)), RustObjectStore)
