"""zarrox's own API on remote and zip stores (issue 15, the store API of STORE_API.md):
``s3://`` URLs with ``storage_options`` or the environment, ``http://`` read-only, ``.zip``
paths, zarr-python store objects, pickled arrays, groups and stores used in other processes,
and store failures injected by the fault proxy.

Real servers on 127.0.0.1 (``servers.py``): moto for S3, the static HTTP servers (with and
without Range), the fault proxy in front of either.

Each group of tests switches itself on when ``zarrox.storage`` has the feature (probed without
I/O, not by version) and is skipped with the reason until then. What is expected of failures:

* a 404 for a chunk is a missing chunk: it reads as the fill value; a 404 (or nothing) for the
  metadata is ``ArrayNotFoundError`` / ``GroupNotFoundError``;
* 403, persistent 5xx, timeouts and connections reset (also mid-body) raise
  ``zarrox.errors.StoreError`` whose message names the array's chunk key (``a/c/1/1``) and
  the store's URL; transient ones (the retry succeeds) give the exact values; a server that
  ignores Range where byte ranges are needed gives them out of whole objects, with a warning;
* a write that fails raises ``StoreError`` too and leaves no object for the key that failed;
* writes to an ``http://`` store raise ``ReadOnlyError``; ``storage_options`` with a local
  path raises ``ValueError``.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import pickle
import subprocess
import sys
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
import zarrox.storage
from conftest import HttpSite, assert_identical, make_data
from zarrox.errors import (
    ArrayNotFoundError,
    GroupNotFoundError,
    ReadOnlyError,
    StoreError,
)

zarr = pytest.importorskip("zarr")
pytest.importorskip("obstore")
pytest.importorskip("s3fs")

SHAPE = (37, 45)
CHUNKS = (8, 16)  # a 5 x 3 grid with edge chunks
FILL = -7
#: Where the closed port the probes name lies: no probe can reach anything.
NOWHERE = f"http://{servers.LOOPBACK}:9"


# --------------------------------------------------------------------------------------------
# Feature probes (no I/O): each returns None when zarrox has the feature, else why not
# --------------------------------------------------------------------------------------------


def _resolves_to_remote(store: Any, **kwargs: Any) -> str | None:
    resolve = zarrox.storage.resolve_store
    try:
        resolved = resolve(store, **kwargs)
    except Exception as e:  # noqa: BLE001 - any refusal means "not there yet"
        return f"zarrox.storage.resolve_store({store!r}) raises {type(e).__name__}: {e}"
    if isinstance(resolved, zarrox.storage.LocalStore | zarrox.storage.MemoryStore):
        return f"zarrox.storage.resolve_store({store!r}) gives a {type(resolved).__name__}"
    return None


@functools.cache
def s3_missing() -> str | None:
    options = {
        "aws_access_key_id": "probe",
        "aws_secret_access_key": "probe",
        "aws_endpoint": NOWHERE,
        "aws_region": servers.AWS_REGION,
        "aws_allow_http": "true",
    }
    return _resolves_to_remote("s3://probe-bucket/x.zarr", storage_options=options)


@functools.cache
def http_missing() -> str | None:
    return _resolves_to_remote(f"{NOWHERE}/x.zarr", mode="r")


@functools.cache
def zip_missing(tmp: str) -> str | None:
    path = Path(tmp) / "probe.zip"
    with zipfile.ZipFile(path, "w"):
        pass
    if not hasattr(zarrox.storage, "ZipStore"):
        return "zarrox.storage has no ZipStore"
    return _resolves_to_remote(str(path), mode="r")


@functools.cache
def zarr_python_stores_missing() -> str | None:
    return _resolves_to_remote(zarr.storage.MemoryStore())


@functools.cache
def pickling_missing(tmp: str) -> str | None:
    a = zarrox.create_array(
        str(Path(tmp) / "probe.zarr"), shape=(2,), dtype="i1", chunks=(1,), overwrite=True
    )
    try:
        pickle.loads(pickle.dumps(a))
        pickle.loads(pickle.dumps(a._store))
    except Exception as e:  # noqa: BLE001 - any refusal means "not there yet"
        return f"zarrox arrays or stores do not pickle: {type(e).__name__}: {e}"
    return None


def require(missing: str | None, feature: str) -> None:
    if missing is not None:
        pytest.skip(f"{feature} not in zarrox.storage yet (issue 15): {missing}")


@pytest.fixture
def s3_api() -> None:
    require(s3_missing(), "s3:// URLs")


@pytest.fixture
def http_api() -> None:
    require(http_missing(), "http:// URLs")


@pytest.fixture
def zip_api(tmp_path_factory: pytest.TempPathFactory) -> None:
    require(zip_missing(str(tmp_path_factory.getbasetemp())), ".zip paths")


@pytest.fixture
def zarr_python_stores_api() -> None:
    require(zarr_python_stores_missing(), "zarr-python store objects")


@pytest.fixture
def pickling_api(tmp_path_factory: pytest.TempPathFactory) -> None:
    require(pickling_missing(str(tmp_path_factory.getbasetemp())), "pickling")


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def data_of(seed: int, dtype: str = "int32", shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    return make_data(dtype, shape, seed=seed)


def check_reads(a: Any, want: np.ndarray, what: str) -> None:
    assert_identical(a[...], want, f"{what}: all")
    assert_identical(a[3:30:4, 40:], want[3:30:4, 40:], f"{what}: strided")
    assert_identical(a.oindex[[36, 0, 9], [44, 1]], want[np.ix_([36, 0, 9], [44, 1])], what)
    assert_identical(a.vindex[[1, 36, 20], [44, 0, 7]], want[[1, 36, 20], [44, 0, 7]], what)
    assert_identical(a[36, 44], want[36, 44], f"{what}: one element")


def assert_names(error: BaseException, *parts: str) -> None:
    """The message of ``error`` names every one of ``parts``."""
    text = str(error)
    for part in parts:
        assert part in text, f"{part!r} is not named in {type(error).__name__}: {text}"


def chunk_objects(bucket: servers.S3Bucket, array_prefix: str) -> list[str]:
    base = array_prefix.rstrip("/") + "/"
    return [
        k[len(base) :]
        for k in bucket.keys(base)
        if not k.endswith(("zarr.json", ".zarray", ".zattrs"))
    ]


def grid_keys(shape: tuple[int, ...] = SHAPE, chunks: tuple[int, ...] = CHUNKS) -> list[str]:
    return sorted(
        "c/" + "/".join(map(str, idx))
        for idx in np.ndindex(*(-(-s // c) for s, c in zip(shape, chunks, strict=True)))
    )


def zarr_read(store: Any, path: str) -> np.ndarray:
    """What zarr-python (its own pipeline) reads at ``path`` of a zarr-python store."""
    default = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
    with zarr.config.set(default):
        return np.asarray(zarr.open_array(store, path=path)[...])


def new_array(url: Any, name: str = "a", **kwargs: Any) -> Any:
    """A zarrox array of SHAPE/CHUNKS int32 at ``url`` holding ``data_of(1)``."""
    options = {"shape": SHAPE, "dtype": "int32", "chunks": CHUNKS, "fill_value": FILL}
    a = zarrox.create_array(url, name=name, **{**options, **kwargs})
    a[...] = data_of(1, str(a.dtype))
    return a


# --------------------------------------------------------------------------------------------
# S3
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["object_store", "fsspec"])
def test_s3_write_read_with_storage_options(
    s3_api: None, s3_bucket: servers.S3Bucket, style: str
) -> None:
    opts = (
        s3_bucket.object_store_options() if style == "object_store" else s3_bucket.fsspec_options()
    )
    if style == "fsspec":  # s3fs's cache switches mean nothing to zarrox
        opts = {
            k: v for k, v in opts.items() if k not in ("use_listings_cache", "skip_instance_cache")
        }
    url = s3_bucket.url("x.zarr")
    new_array(url, storage_options=opts)
    assert s3_bucket.keys("x.zarr/a/") == sorted(
        ["x.zarr/a/zarr.json", *(f"x.zarr/a/{k}" for k in grid_keys())]
    )
    b = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    check_reads(b, data_of(1), "zarrox")
    # the path may also be part of the URL
    check_reads(zarrox.open_array(f"{url}/a", mode="r", storage_options=opts), data_of(1), "url")
    assert_identical(zarr_read(s3_bucket.zarr_obstore("x.zarr"), "a"), data_of(1), "zarr-python")


def test_s3_credentials_from_the_environment(
    s3_api: None, s3_bucket: servers.S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in s3_bucket.env().items():
        monkeypatch.setenv(key, value)
    new_array(s3_bucket.url("env.zarr"))
    check_reads(zarrox.open_array(s3_bucket.url("env.zarr/a"), mode="r"), data_of(1), "env")
    assert chunk_objects(s3_bucket, "env.zarr/a") == grid_keys()


def test_s3_store_object_url_and_reopen(s3_api: None, s3_bucket: servers.S3Bucket) -> None:
    opts = s3_bucket.object_store_options()
    url = s3_bucket.url("x.zarr")
    store = zarrox.storage.resolve_store(url, storage_options=opts)
    assert isinstance(store, zarrox.storage.RustObjectStore)
    assert store.url == url
    direct = zarrox.storage.RustObjectStore(url, storage_options=opts)
    assert direct.url == url
    new_array(store)
    again = zarrox.storage.resolve_store(store.url, storage_options=opts)
    check_reads(zarrox.open_array(again, path="a", mode="r"), data_of(1), "reopened by url")
    assert zarrox.storage.resolve_store(store) is store


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_s3_layouts_read_by_zarr_python(
    s3_api: None, s3_bucket: servers.S3Bucket, zarr_format: int
) -> None:
    opts = s3_bucket.object_store_options()
    url = s3_bucket.url("x.zarr")
    kwargs: dict[str, Any] = {"storage_options": opts, "zarr_format": zarr_format}
    if zarr_format == 2:
        kwargs["compressors"] = {"id": "zlib", "level": 1}
    new_array(url, name="plain", **kwargs)
    if zarr_format == 3:
        new_array(url, name="sharded", chunks=(4, 8), shards=CHUNKS, storage_options=opts)
    for name in ("plain", "sharded") if zarr_format == 3 else ("plain",):
        got = zarr_read(s3_bucket.zarr_obstore("x.zarr"), name)
        assert_identical(got, data_of(1), f"zarr-python reading zarrox's {name}")


def test_s3_inner_chunk_reads_fetch_byte_ranges_only(
    s3_api: None, proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("x.zarr")
    new_array(url, chunks=(4, 8), shards=(16, 32), compressors=None, storage_options=opts)
    puts = [e for e in s3_proxy.log() if e["method"] == "PUT" and "/a/c/" in e["path"]]
    assert len(puts) == len(grid_keys(SHAPE, (16, 32)))  # one PUT per shard
    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    s3_proxy.log(reset=True)
    assert_identical(a[4:8, 8:16], data_of(1)[4:8, 8:16], "one inner chunk")
    gets = [e for e in s3_proxy.log() if e["method"] == "GET"]
    assert gets and all(e["path"].endswith("/a/c/0/0") and e["range"] for e in gets), gets
    index = 16 * 16 + 4
    assert sum(e["bytes"] for e in gets) <= index + 4 * 8 * 4, gets


def test_s3_groups_consolidated_listing_deletion(
    s3_api: None, proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("tree.zarr")
    g = zarrox.open_group(url, mode="w", storage_options=opts, attributes={"k": 1})
    sub = g.create_group("sub")
    for parent, name in ((g, "a"), (sub, "b"), (sub, "c")):
        parent.create_array(name, shape=SHAPE, dtype="int32", chunks=CHUNKS)[...] = data_of(2)
    g = zarrox.open_group(url, mode="r", storage_options=opts)
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["a", "sub", "sub/b", "sub/c"]
    assert g.attrs["k"] == 1

    zarrox.consolidate_metadata(url, storage_options=opts)
    zg = zarr.open_consolidated(proxied_bucket.zarr_obstore("tree.zarr"), mode="r")
    assert sorted(zg.metadata.consolidated_metadata.flattened_metadata) == [
        "a",
        "sub",
        "sub/b",
        "sub/c",
    ]
    s3_proxy.log(reset=True)
    g = zarrox.open_group(url, mode="r", storage_options=opts)
    assert_identical(g["sub/c"][...], data_of(2), "through consolidated metadata")
    fetched = [e["path"] for e in s3_proxy.log() if e["method"] == "GET"]
    assert [p for p in fetched if p.endswith("zarr.json")] == [
        f"/{proxied_bucket.name}/tree.zarr/zarr.json"
    ], fetched

    g = zarrox.open_group(url, mode="a", storage_options=opts, use_consolidated=False)
    del g["sub/b"]
    assert proxied_bucket.keys("tree.zarr/sub/b/") == []
    assert chunk_objects(proxied_bucket, "tree.zarr/sub/c") == grid_keys()


def test_s3_resize_and_empty_chunks(s3_api: None, s3_bucket: servers.S3Bucket) -> None:
    opts = s3_bucket.object_store_options()
    a = new_array(s3_bucket.url("x.zarr"), storage_options=opts)
    a.resize((20, 20))
    assert chunk_objects(s3_bucket, "x.zarr/a") == [
        "c/0/0",
        "c/0/1",
        "c/1/0",
        "c/1/1",
        "c/2/0",
        "c/2/1",
    ]
    a.resize(SHAPE)
    got = zarrox.open_array(s3_bucket.url("x.zarr/a"), mode="r", storage_options=opts)[...]
    assert_identical(got[:20, :20], data_of(1)[:20, :20], "grown again, old region")
    assert (got[24:, :] == FILL).all() and (got[:, 32:] == FILL).all()  # deleted chunks
    assert_identical(got, zarr_read(s3_bucket.zarr_obstore("x.zarr"), "a"), "as zarr-python")
    a[...] = FILL  # all fill value: every chunk object goes
    assert chunk_objects(s3_bucket, "x.zarr/a") == []


#: A short-lived process: read an array over s3:// and exit.
READ_AND_EXIT = """
import json, sys
import numpy as np
import zarrox
a = zarrox.open_array(sys.argv[1], mode="r", storage_options=json.loads(sys.argv[2]))
print(int(np.asarray(a[...], dtype=np.int64).sum()), flush=True)
"""


def test_processes_exit_cleanly_after_s3_io(s3_api: None, s3_bucket: servers.S3Bucket) -> None:
    """A Tokio runtime still running when the interpreter shuts down can abort the process
    after its last line (obstore 0.12 does, about 1 run in 20): every one of these exits 0."""
    opts = s3_bucket.object_store_options()
    new_array(s3_bucket.url("exit.zarr"), storage_options=opts)
    argv = [sys.executable, "-c", READ_AND_EXIT, s3_bucket.url("exit.zarr/a"), json.dumps(opts)]
    want = str(int(data_of(1).astype(np.int64).sum()))
    for _ in range(6):
        procs = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert (proc.returncode, out.strip()) == (0, want), err[-2000:]


def test_storage_options_with_a_local_path_raise_value_error(s3_api: None, tmp_path: Path) -> None:
    opts = {"aws_region": servers.AWS_REGION}
    with pytest.raises(ValueError, match="storage_options"):
        zarrox.storage.resolve_store(tmp_path / "x.zarr", storage_options=opts)
    with pytest.raises(ValueError, match="storage_options"):
        zarrox.create_array(str(tmp_path / "x.zarr"), shape=(2,), dtype="i1", storage_options=opts)
    with pytest.raises(ValueError, match="storage_options"):
        zarrox.open_array(str(tmp_path / "x.zarr"), mode="r", storage_options=opts)


# --------------------------------------------------------------------------------------------
# HTTP (read-only)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def published(http_site: HttpSite) -> HttpSite:
    """A group written by zarr-python: a v3 array, a sharded one, a v2 one, a nested group,
    consolidated."""
    root = str(http_site.dir)
    zarr.open_group(root, mode="w", attributes={"made": "zarr-python"})
    zarr.create_array(root, name="zstd", shape=SHAPE, dtype="int32", chunks=CHUNKS)[...] = data_of(
        3
    )
    zarr.create_array(
        root, name="sub/sharded", shape=SHAPE, dtype="int32", chunks=(4, 8), shards=(16, 32)
    )[...] = data_of(4)
    zarr.consolidate_metadata(root)
    v2 = str(http_site.dir / "v2.zarr")
    zarr.create_array(v2, shape=SHAPE, dtype="int32", chunks=CHUNKS, zarr_format=2)[...] = data_of(
        5
    )
    return http_site


def test_http_arrays_and_groups(http_api: None, published: HttpSite) -> None:
    g = zarrox.open_group(published.url, mode="r")
    assert g.attrs["made"] == "zarr-python"
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["sub", "sub/sharded", "zstd"]
    check_reads(g["zstd"], data_of(3), "group member")
    check_reads(g["sub/sharded"], data_of(4), "sharded member")
    check_reads(zarrox.open_array(published.url + "/zstd", mode="r"), data_of(3), "url path")
    check_reads(zarrox.open_array(published.url, path="sub/sharded", mode="r"), data_of(4), "path")
    check_reads(zarrox.open_array(published.url + "/v2.zarr", mode="r"), data_of(5), "v2")


def test_http_inner_chunk_reads_fetch_byte_ranges_only(
    http_api: None, published: HttpSite, http_proxy: servers.FaultProxy
) -> None:
    site = published.at(http_proxy.url)
    a = zarrox.open_array(site.url, path="sub/sharded", mode="r")
    http_proxy.log(reset=True)
    assert_identical(a[4:8, 8:16], data_of(4)[4:8, 8:16], "one inner chunk")
    gets = [e for e in http_proxy.log() if e["method"] == "GET"]
    assert gets and all(e["path"].endswith("/sub/sharded/c/0/0") for e in gets), gets
    assert all(e["range"] and e["status"] == 206 for e in gets), gets
    shard = (published.dir / "sub/sharded/c/0/0").stat().st_size
    assert sum(e["bytes"] for e in gets) < shard / 4, (gets, shard)


def test_http_is_read_only(http_api: None, published: HttpSite) -> None:
    a = zarrox.open_array(published.url, path="zstd", mode="r")
    with pytest.raises(ReadOnlyError):
        a[0, 0] = 1
    with pytest.raises(ReadOnlyError):
        zarrox.create_array(published.url, name="new", shape=(2,), dtype="i1")
    with pytest.raises(ReadOnlyError):
        zarrox.open_group(published.url, mode="w")
    assert not (published.dir / "new").exists()
    assert_identical(zarrox.open_array(published.url + "/zstd", mode="r")[...], data_of(3), "")


def test_http_missing_nodes(http_api: None, published: HttpSite) -> None:
    with pytest.raises(ArrayNotFoundError):
        zarrox.open_array(published.url + "/absent", mode="r")
    with pytest.raises(GroupNotFoundError):
        zarrox.open_group(published.url + "/absent", mode="r")


def test_http_server_ignoring_range(
    http_api: None, published: HttpSite, http_norange_server: servers.ServerProcess
) -> None:
    site = published.at(http_norange_server.url)
    # whole objects only: fine
    check_reads(zarrox.open_array(site.url, path="zstd", mode="r"), data_of(3), "no Range")
    # an inner chunk needs byte ranges: they are cut out of the whole shard, with a warning
    a = zarrox.open_array(site.url, path="sub/sharded", mode="r")
    want = np.asarray(zarr.open_array(str(published.dir), path="sub/sharded", mode="r")[...])
    with pytest.warns(RuntimeWarning, match="ignores byte ranges"):
        assert_identical(a[4:8, 8:16], want[4:8, 8:16], "one inner chunk")
    assert_identical(a[...], want, "all")


def test_http_forbidden_chunk(
    http_api: None, published: HttpSite, http_proxy: servers.FaultProxy
) -> None:
    site = published.at(http_proxy.url)
    a = zarrox.open_array(site.url, path="zstd", mode="r")
    with http_proxy.faults(servers.FaultRule("status", status=403, path_regex=r"/zstd/c/1/1$")):
        with pytest.raises(StoreError) as exc:
            a[...]
    assert_names(exc.value, "zstd/c/1/1", site.url)


# --------------------------------------------------------------------------------------------
# Zip
# --------------------------------------------------------------------------------------------


@pytest.fixture
def zarr_python_zip(tmp_path: Path) -> Path:
    path = tmp_path / "made-by-zarr.zip"
    store = zarr.storage.ZipStore(path, mode="w")
    zarr.open_group(store, mode="w", attributes={"made": "zarr-python"})
    zarr.create_array(store, name="a", shape=SHAPE, dtype="int32", chunks=CHUNKS)[...] = data_of(6)
    zarr.create_array(
        store, name="g/s", shape=SHAPE, dtype="int32", chunks=(4, 8), shards=(16, 32)
    )[...] = data_of(7)
    zarr.consolidate_metadata(store)
    store.close()
    return path


@pytest.mark.parametrize("form", ["path", "str", "zip-url"])
def test_zip_written_by_zarr_python(zip_api: None, zarr_python_zip: Path, form: str) -> None:
    store: Any = {
        "path": zarr_python_zip,
        "str": str(zarr_python_zip),
        "zip-url": f"zip://{zarr_python_zip}",
    }[form]
    g = zarrox.open_group(store, mode="r")
    assert g.attrs["made"] == "zarr-python"
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["a", "g", "g/s"]
    check_reads(g["a"], data_of(6), "zip a")
    check_reads(zarrox.open_array(store, path="g/s", mode="r"), data_of(7), "zip g/s")


def test_zip_path_written_by_zarrox_is_complete_after_each_write(
    zip_api: None, tmp_path: Path
) -> None:
    path = tmp_path / "by-path.zip"
    a = new_array(str(path))
    assert zipfile.is_zipfile(path)  # no close needed: every write call leaves a whole archive
    assert_identical(zarr_read(zarr.storage.ZipStore(path, mode="r"), "a"), data_of(1), "first")
    a[0:8, 0:16] = 5
    want = data_of(1)
    want[0:8, 0:16] = 5
    assert_identical(zarr_read(zarr.storage.ZipStore(path, mode="r"), "a"), want, "rewritten")
    check_reads(zarrox.open_array(path, path="a", mode="r"), want, "zarrox again")


def test_zip_written_by_zarrox(zip_api: None, tmp_path: Path) -> None:
    path = tmp_path / "made-by-zarrox.zip"
    store = zarrox.storage.ZipStore(path, mode="w")
    new_array(store)
    new_array(store, name="g/s", chunks=(4, 8), shards=(16, 32))
    store.close()
    assert zipfile.is_zipfile(path)
    zstore = zarr.storage.ZipStore(path, mode="r")
    for name in ("a", "g/s"):
        assert_identical(zarr_read(zstore, name), data_of(1), f"zarr-python reading {name}")
    check_reads(zarrox.open_array(path, path="g/s", mode="r"), data_of(1), "zarrox again")


# --------------------------------------------------------------------------------------------
# zarr-python store objects
# --------------------------------------------------------------------------------------------


ZARR_STORES: dict[str, Callable[[servers.S3Bucket, Path], Any]] = {
    "LocalStore": lambda b, tmp: zarr.storage.LocalStore(tmp / "local.zarr"),
    "MemoryStore": lambda b, tmp: zarr.storage.MemoryStore(),
    "ZipStore": lambda b, tmp: zarr.storage.ZipStore(tmp / "z.zip", mode="a"),
    "ObjectStore-S3": lambda b, tmp: b.zarr_obstore("o.zarr"),
    "FsspecStore-s3fs": lambda b, tmp: b.zarr_s3fs("f.zarr"),
}


@pytest.mark.parametrize("kind", ZARR_STORES)
def test_zarr_python_store_objects(
    zarr_python_stores_api: None, s3_bucket: servers.S3Bucket, tmp_path: Path, kind: str
) -> None:
    store = ZARR_STORES[kind](s3_bucket, tmp_path)
    new_array(store, chunks=(4, 8), shards=(16, 32))
    check_reads(zarrox.open_array(store, path="a", mode="r"), data_of(1), f"zarrox on {kind}")
    assert_identical(zarr_read(store, "a"), data_of(1), f"zarr-python on {kind}")
    g = zarrox.open_group(store, mode="r")
    assert [k for k, _ in g.members()] == ["a"]


# --------------------------------------------------------------------------------------------
# Pickling, and use in other processes
# --------------------------------------------------------------------------------------------


def _child_read(node: Any, name: str | None, sel: Any) -> np.ndarray:
    arr = node[name] if name is not None else node
    return np.asarray(arr[sel])


def _child_write(arr: Any, sel: Any, value: np.ndarray) -> None:
    arr[sel] = value


@pytest.fixture(params=["spawn", "fork"])
def pool(request: pytest.FixtureRequest) -> Iterator[ProcessPoolExecutor]:
    ctx = multiprocessing.get_context(request.param)
    with ProcessPoolExecutor(2, mp_context=ctx) as executor:
        yield executor


def test_pickled_s3_nodes_in_other_processes(
    s3_api: None, pickling_api: None, s3_bucket: servers.S3Bucket, pool: ProcessPoolExecutor
) -> None:
    opts = s3_bucket.object_store_options()
    url = s3_bucket.url("p.zarr")
    g = zarrox.open_group(url, mode="w", storage_options=opts)
    a = g.create_array("a", shape=SHAPE, dtype="int32", chunks=CHUNKS, fill_value=FILL)
    a[...] = data_of(1)
    want = data_of(1)
    # reads: the array, and the group's member, in other processes
    futures = [
        pool.submit(_child_read, a, None, (slice(i, i + 8), slice(None))) for i in (0, 8, 32)
    ]
    futures.append(pool.submit(_child_read, g, "a", (slice(None), slice(40, None))))
    for fut, sel in zip(
        futures, [np.s_[0:8], np.s_[8:16], np.s_[32:40], np.s_[:, 40:]], strict=True
    ):
        assert_identical(fut.result(timeout=120), want[sel], f"read in a child: {sel}")
    # writes in other processes, to disjoint chunks, seen here
    pool.submit(_child_write, a, np.s_[0:8, 0:16], np.full((8, 16), 11, "int32")).result(120)
    pool.submit(_child_write, a, np.s_[8:16, 16:32], np.full((8, 16), 12, "int32")).result(120)
    want[0:8, 0:16], want[8:16, 16:32] = 11, 12
    check_reads(zarrox.open_array(url, path="a", mode="r", storage_options=opts), want, "parent")


def test_pickled_stores_and_local_arrays(
    s3_api: None, pickling_api: None, s3_bucket: servers.S3Bucket, tmp_path: Path
) -> None:
    opts = s3_bucket.object_store_options()
    store = zarrox.storage.resolve_store(s3_bucket.url("q.zarr"), storage_options=opts)
    new_array(store)
    again = pickle.loads(pickle.dumps(store))
    assert type(again) is type(store) and again.url == store.url
    check_reads(zarrox.open_array(again, path="a", mode="r"), data_of(1), "unpickled S3 store")
    local = new_array(str(tmp_path / "l.zarr"))
    check_reads(pickle.loads(pickle.dumps(local)), data_of(1), "unpickled local array")
    group = zarrox.open_group(str(tmp_path / "l.zarr"), mode="r")
    check_reads(pickle.loads(pickle.dumps(group))["a"], data_of(1), "unpickled local group")


# --------------------------------------------------------------------------------------------
# Store failures (the fault proxy in front of moto)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def faulty(
    s3_api: None, proxied_bucket: servers.S3Bucket
) -> tuple[servers.S3Bucket, dict[str, Any], str]:
    """(the bucket through the proxy, its storage options, the store URL), with array ``a``
    written. The options time requests out after 500 ms (object_store's ``timeout``) and
    retry 3 times from a 50 ms backoff (zarrox's own ``max_retries``, ``backoff_initial``),
    so that persistent failures fail fast."""
    opts = {
        **proxied_bucket.object_store_options(),
        "timeout": "500ms",
        "max_retries": "3",
        "backoff_initial": "0.05",
    }
    url = proxied_bucket.url("x.zarr")
    new_array(url, storage_options=opts)
    return proxied_bucket, opts, url


CHUNK_11 = r"/x\.zarr/a/c/1/1$"


@pytest.mark.parametrize(
    "rule",
    [
        servers.FaultRule("status", status=503, path_regex=CHUNK_11, times=2),
        servers.FaultRule("status", status=500, path_regex=CHUNK_11, times=1),
        servers.FaultRule("drop", path_regex=CHUNK_11, times=2),
        servers.FaultRule("truncate", after_bytes=100, path_regex=CHUNK_11, times=1),
        servers.FaultRule("delay", delay_s=3, path_regex=CHUNK_11, times=1),
    ],
    ids=["503-twice", "500-once", "reset-twice", "reset-mid-body-once", "timeout-once"],
)
def test_transient_failures_give_exact_values(
    faulty: tuple[servers.S3Bucket, dict[str, Any], str],
    s3_proxy: servers.FaultProxy,
    rule: servers.FaultRule,
) -> None:
    _, opts, url = faulty
    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    with s3_proxy.faults(rule):
        check_reads(a, data_of(1), f"through {rule.action}")
        assert any(e["action"] == rule.action for e in s3_proxy.log())


def test_missing_chunk_is_fill_and_missing_metadata_not_found(
    faulty: tuple[servers.S3Bucket, dict[str, Any], str], s3_proxy: servers.FaultProxy
) -> None:
    _, opts, url = faulty
    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    with s3_proxy.faults(servers.FaultRule("status", status=404, path_regex=CHUNK_11)):
        got = a[...]
    want = data_of(1)
    want[8:16, 16:32] = FILL
    assert_identical(got, want, "chunk (1, 1) answered 404")
    with pytest.raises(ArrayNotFoundError):
        zarrox.open_array(url, path="absent", mode="r", storage_options=opts)
    with pytest.raises(GroupNotFoundError):
        zarrox.open_group(url + "/absent", mode="r", storage_options=opts)


@pytest.mark.parametrize(
    "rule",
    [
        servers.FaultRule("status", status=403, path_regex=CHUNK_11),
        servers.FaultRule("status", status=503, path_regex=CHUNK_11),
        servers.FaultRule("drop", path_regex=CHUNK_11),
        servers.FaultRule("truncate", after_bytes=0, path_regex=CHUNK_11),
        servers.FaultRule("delay", delay_s=3, path_regex=CHUNK_11),
    ],
    ids=["403", "503", "reset", "reset-mid-body", "timeout"],
)
def test_persistent_read_failures_raise_store_error(
    faulty: tuple[servers.S3Bucket, dict[str, Any], str],
    s3_proxy: servers.FaultProxy,
    rule: servers.FaultRule,
) -> None:
    _, opts, url = faulty
    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    t0 = time.monotonic()
    with s3_proxy.faults(rule), pytest.raises(StoreError) as exc:
        a[...]
    assert time.monotonic() - t0 < 30  # 4 attempts of at most 0.5 s, short backoffs
    assert_names(exc.value, "a/c/1/1", url)


def test_forbidden_metadata_is_a_store_error_not_a_missing_array(
    faulty: tuple[servers.S3Bucket, dict[str, Any], str], s3_proxy: servers.FaultProxy
) -> None:
    _, opts, url = faulty
    with s3_proxy.faults(servers.FaultRule("status", status=403, path_regex=r"/x\.zarr/a/")):
        with pytest.raises(StoreError) as exc:
            zarrox.open_array(url, path="a", mode="r", storage_options=opts)
    assert not isinstance(exc.value, FileNotFoundError)
    assert_names(exc.value, "a/zarr.json", url)


@pytest.mark.parametrize(
    "rule",
    [
        servers.FaultRule("status", status=403, methods=("PUT",), path_regex=r"/b/c/2/1$"),
        servers.FaultRule("drop", methods=("PUT",), path_regex=r"/b/c/2/1$"),
    ],
    ids=["403", "reset"],
)
def test_failed_writes_raise_and_leave_nothing_behind(
    faulty: tuple[servers.S3Bucket, dict[str, Any], str],
    s3_proxy: servers.FaultProxy,
    rule: servers.FaultRule,
) -> None:
    bucket, opts, url = faulty
    b = zarrox.create_array(
        url, name="b", shape=SHAPE, dtype="int32", chunks=CHUNKS, storage_options=opts
    )
    with s3_proxy.faults(rule), pytest.raises(StoreError) as exc:
        b[...] = data_of(8)
    assert_names(exc.value, "b/c/2/1", url)
    assert "c/2/1" not in chunk_objects(bucket, "x.zarr/b")
    # creating an array whose metadata cannot be written fails, and leaves no metadata
    meta_rule = servers.FaultRule("status", status=403, methods=("PUT",), path_regex=r"/c\.zarr/")
    with s3_proxy.faults(meta_rule), pytest.raises(StoreError):
        zarrox.create_array(bucket.url("c.zarr"), shape=SHAPE, dtype="int32", storage_options=opts)
    assert bucket.keys("c.zarr/") == []
