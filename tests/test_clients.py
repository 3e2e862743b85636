"""Real clients both ways (#36): zarrox writing into icechunk sessions, a store of the user's
(a ``zarrox.Store`` subclass), obstore's store objects as they are, static HTTP servers
that ignore ``Range`` (the ranges are cut out of whole values, with one warning per store),
and zarr-python and xarray reading and writing through zarrox's store objects (local,
memory, zip, S3). Servers run on 127.0.0.1 (tests/servers.py)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
import zarrox.storage
from conftest import assert_identical, make_data
from zarrox.errors import ReadOnlyError
from zarrox.storage import RustObjectStore, ZipStore

zarr = pytest.importorskip("zarr")


# --------------------------------------------------------------------------------------------
# icechunk: the own API writes inside a writable session


@pytest.fixture
def repo(tmp_path: Path) -> Any:
    icechunk = pytest.importorskip("icechunk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "ic")))


def test_icechunk_session_written_by_the_own_api(repo: Any) -> None:
    session = repo.writable_session("main")
    g = zarrox.open_group(session.store, mode="a", attributes={"title": "t"})
    c = g.create_array("c", shape=(40,), chunks=(10,), dtype="i4")
    c[:] = np.arange(40, dtype="i4")
    sub = g.create_group("sub")
    s = sub.create_array("s", shape=(12, 20), chunks=(3, 5), shards=(6, 10), dtype="f8")
    want = make_data("float64", (12, 20), seed=3)
    s[...] = want
    first = session.commit("first")

    session = repo.writable_session("main")
    g = zarrox.open_group(session.store, mode="a")
    c = g["c"]
    c.resize((50,))
    c[40:] = 7
    c.attrs["units"] = "m"
    g["sub/s"][0, :] = -1.0
    second = session.commit("second")

    want_c = np.concatenate([np.arange(40), np.full(10, 7)]).astype("i4")
    want_s = want.copy()
    want_s[0, :] = -1.0
    for store in (
        repo.readonly_session("main").store,
        repo.readonly_session(snapshot_id=second).store,
    ):
        ours = zarrox.open_group(store, mode="r")
        theirs = zarr.open_group(store, mode="r")
        assert ours.attrs["title"] == theirs.attrs["title"] == "t"
        assert_identical(ours["c"][...], want_c, "zarrox c")
        assert_identical(theirs["c"][...], want_c, "zarr-python c")
        assert dict(theirs["c"].attrs) == {"units": "m"}
        assert_identical(ours["sub/s"][...], want_s, "zarrox sharded")
        assert_identical(theirs["sub/s"][...], want_s, "zarr-python sharded")
    # the first snapshot is as it was
    old = repo.readonly_session(snapshot_id=first).store
    assert_identical(zarrox.open_array(old, path="c", mode="r")[...], np.arange(40, dtype="i4"), "")
    assert_identical(zarr.open_array(old, path="sub/s", mode="r")[...], want, "old sharded")
    assert dict(zarrox.open_array(old, path="c", mode="r").attrs) == {}


def test_icechunk_read_only_session_refuses_writes(repo: Any) -> None:
    session = repo.writable_session("main")
    zarrox.create_array(session.store, name="a", shape=(4,), dtype="u1")[:] = 5
    session.commit("one")
    store = repo.readonly_session("main").store
    with pytest.raises(ReadOnlyError, match="read-only"):
        zarrox.open_array(store, path="a", mode="r")[:] = 1
    with pytest.raises(ReadOnlyError, match="read-only"):
        zarrox.open_group(store, mode="a").create_array("b", shape=(3,), dtype="i1")
    with pytest.raises(ReadOnlyError, match="read-only"):
        zarrox.open_array(store, path="a", mode="r").attrs["x"] = 1
    assert_identical(zarr.open_array(store, path="a", mode="r")[...], np.full(4, 5, "u1"), "")


# --------------------------------------------------------------------------------------------
# A store of the user's


class DictStore(zarrox.Store):
    """A user's store: keys and values in a dict."""

    def __init__(self) -> None:
        self.d: dict[str, bytes] = {}
        self.ops: list[str] = []

    def get(self, key: str) -> bytes | None:
        self.ops.append("get")
        return self.d.get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        self.ops.append("get_range")
        value = self.d.get(key)
        if value is None:
            return None
        if start < 0:
            return value[start:]
        return value[start:] if length is None else value[start : start + length]

    def set(self, key: str, value: bytes) -> None:
        self.d[key] = bytes(value)

    def delete(self, key: str) -> None:
        self.d.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.d

    def list_prefix(self, prefix: str) -> list[str]:
        return sorted(k for k in self.d if k.startswith(prefix))


def test_user_store_subclass() -> None:
    store = DictStore()
    g = zarrox.open_group(store, mode="w", attributes={"a": 1})
    plain = g.create_array("plain", shape=(10, 10), chunks=(3, 4), dtype="i2")
    sharded = g.create_array("sh", shape=(12,), chunks=(2,), shards=(6,), dtype="f4")
    want = np.arange(100, dtype="i2").reshape(10, 10)
    plain[...] = want
    sharded[...] = np.arange(12, dtype="f4")
    assert "plain/c/3/2" in store.d and "sh/c/1" in store.d
    store.ops.clear()
    assert_identical(sharded[7:9], np.array([7, 8], "f4"), "inner chunks")
    assert "get_range" in store.ops  # the shard index and inner chunks by range
    again = zarrox.open_group(store, mode="r")
    assert sorted(again.array_keys()) == ["plain", "sh"] and again.attrs["a"] == 1
    assert_identical(again["plain"][2:5, 7], want[2:5, 7], "read back")
    assert store.list_dir("plain/") == (["zarr.json"], ["c"])
    # deleting: a node, then a key
    del g["sh"]
    assert not any(k.startswith("sh/") for k in store.d)
    assert sorted(zarrox.open_group(store, mode="r").array_keys()) == ["plain"]
    # pickled with its values, served from Python again
    copy = pickle.loads(pickle.dumps(store))
    assert isinstance(copy, DictStore) and copy.d == store.d
    assert_identical(zarrox.open_array(copy, path="plain", mode="r")[...], want, "pickled")
    store.read_only = True
    with pytest.raises(ReadOnlyError, match="read-only"):
        zarrox.open_array(store, path="plain")[0, 0] = 1


def test_user_store_needs_only_get_set_delete_list() -> None:
    class Minimal(zarrox.Store):
        def __init__(self) -> None:
            self.d: dict[str, bytes] = {}

        def get(self, key: str) -> bytes | None:
            return self.d.get(key)

        def set(self, key: str, value: bytes) -> None:
            self.d[key] = bytes(value)

        def delete(self, key: str) -> None:
            self.d.pop(key, None)

        def list_prefix(self, prefix: str) -> list[str]:
            return sorted(k for k in self.d if k.startswith(prefix))

    store = Minimal()
    a = zarrox.create_array(store, shape=(20,), chunks=(4,), shards=(8,), dtype="u2")
    a[...] = np.arange(20, dtype="u2")
    assert_identical(zarrox.open_array(store, mode="r")[5:11], np.arange(5, 11, dtype="u2"), "")
    assert store.exists("zarr.json") and not store.exists("nope")
    assert store.get_range("zarr.json", 0, 1) == b"{"


# --------------------------------------------------------------------------------------------
# obstore's store objects, as they are


def test_raw_obstore_s3(s3_bucket: servers.S3Bucket) -> None:
    pytest.importorskip("obstore")
    prefix = f"raw-{uuid.uuid4().hex[:8]}"
    want = make_data("int32", (30, 20), seed=1)
    a = zarrox.create_array(
        s3_bucket.obstore(prefix),
        name="x",
        shape=want.shape,
        chunks=(10, 10),
        shards=(10, 20),
        dtype="i4",
    )
    a[...] = want
    assert (
        type(zarrox.storage.resolve_store(s3_bucket.obstore(prefix))).__name__ == "RustObstoreStore"
    )
    got = zarrox.open_array(s3_bucket.obstore(prefix), path="x", mode="r")
    assert_identical(got[...], want, "raw S3Store")
    assert f"{prefix}/x/c/2/0" in s3_bucket.keys(prefix)
    assert_identical(pickle.loads(pickle.dumps(got))[3:5, 7], want[3:5, 7], "pickled")


def test_raw_obstore_local_and_memory(tmp_path: Path) -> None:
    obstore = pytest.importorskip("obstore")
    local = obstore.store.LocalStore(str(tmp_path))
    assert isinstance(zarrox.storage.resolve_store(local), zarrox.LocalStore)
    zarrox.create_array(local, name="x", shape=(9,), chunks=(2,), dtype="i8")[...] = np.arange(9)
    assert (tmp_path / "x" / "c" / "4").is_file()
    assert_identical(zarrox.open_array(str(tmp_path), path="x")[...], np.arange(9), "local")
    memory = obstore.store.MemoryStore()
    zarrox.create_array(memory, shape=(5,), chunks=(2,), dtype="u1")[...] = 4
    assert_identical(zarrox.open_array(memory, mode="r")[...], np.full(5, 4, "u1"), "memory")


# --------------------------------------------------------------------------------------------
# Static servers that ignore Range


def ignored_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "ignores byte ranges" in str(w.message)]


@pytest.fixture
def norange_site(http_root: Path, http_norange_server: servers.ServerProcess) -> tuple[Path, str]:
    """A fresh store directory, served by the server that ignores Range; what it holds."""
    root = http_root / f"norange-{uuid.uuid4().hex[:8]}.zarr"
    g = zarrox.open_group(str(root), mode="w")
    g.create_array("plain", shape=(30, 41), chunks=(8, 16), dtype="f8")[...] = DATA
    g.create_array("sh", shape=(30, 41), chunks=(5, 8), shards=(10, 24), dtype="f8")[...] = DATA
    g.create_group("sub").create_array("v", shape=(7,), chunks=(3,), dtype="i2")[...] = 3
    zarrox.consolidate_metadata(str(root))
    return root, f"{http_norange_server.url}/{root.name}"


DATA = make_data("float64", (30, 41), seed=5)


def test_http_without_range_own_api(norange_site: tuple[Path, str]) -> None:
    _, url = norange_site
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = zarrox.open_group(url, mode="r")
        assert sorted(g.array_keys()) == ["plain", "sh"]
        assert_identical(g["plain"][...], DATA, "unsharded")
        for _ in range(2):
            assert_identical(g["sh"][...], DATA, "sharded")
            assert_identical(g["sh"][10:15, 8:16], DATA[10:15, 8:16], "one inner chunk")
        assert_identical(g["sub/v"][...], np.full(7, 3, "i2"), "group member")
    [message] = ignored_warnings(caught)
    assert url in message


def test_http_without_range_pipeline(norange_site: tuple[Path, str]) -> None:
    pytest.importorskip("aiohttp")
    from zarr.storage import FsspecStore

    _, url = norange_site
    config = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    with zarr.config.set(config), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = FsspecStore.from_url(url, read_only=True)
        g = zarr.open_group(store, mode="r")
        assert g.metadata.consolidated_metadata is not None
        sh = g["sh"]
        assert type(sh._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
        assert_identical(sh[...], DATA, "sharded")
        assert_identical(sh[10:15, 8:16], DATA[10:15, 8:16], "one inner chunk")
        assert_identical(g["plain"][3:29:5, 7:], DATA[3:29:5, 7:], "unsharded")
        # zarrox's own API on the same zarr-python store object
        assert_identical(zarrox.open_array(store, path="sh", mode="r")[...], DATA, "own API")
    assert len(ignored_warnings(caught)) == 1, ignored_warnings(caught)


# --------------------------------------------------------------------------------------------
# zarr-python and xarray take zarrox's stores: one store object passed around a program that
# uses both libraries (local, memory, zip, S3 on moto)

STORE_KINDS = ["local", "memory", "zip", "s3"]


@pytest.fixture(params=STORE_KINDS)
def zarrox_stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[zarrox.Store, Callable[[], zarrox.Store]]:
    """A zarrox store of one kind, and how the same data is opened again as a new object
    (writable; the memory store is the one object)."""
    kind = request.param
    if kind == "local":
        path = tmp_path / "d.zarr"
        return zarrox.LocalStore(path), lambda: zarrox.LocalStore(path)
    if kind == "memory":
        memory = zarrox.MemoryStore()
        return memory, lambda: memory
    if kind == "zip":
        archive = tmp_path / "d.zip"
        return ZipStore(archive, mode="w"), lambda: ZipStore(archive, mode="a")
    bucket: servers.S3Bucket = request.getfixturevalue("s3_bucket")
    url, options = bucket.url("d.zarr"), bucket.object_store_options()
    return RustObjectStore(url, options), lambda: RustObjectStore(url, options)


def test_zarr_python_writes_through_zarrox_stores(
    zarrox_stores: tuple[zarrox.Store, Callable[[], zarrox.Store]],
) -> None:
    store, again = zarrox_stores
    want = make_data("int32", (30, 20), seed=2)
    want_s = make_data("float64", (12, 20), seed=3)
    zarr.open_group(store, mode="w", attributes={"title": "t"})
    a = zarr.create_array(store, name="a", shape=want.shape, chunks=(10, 10), dtype="i4")
    a[...] = want
    s = zarr.create_array(
        store, name="sub/s", shape=want_s.shape, chunks=(3, 5), shards=(6, 10), dtype="f8"
    )
    s[...] = want_s
    # zarr-python reads back through the store: whole chunks and a shard's byte ranges
    assert_identical(zarr.open_array(store, path="a")[...], want, "zarr-python")
    assert_identical(zarr.open_array(store, path="sub/s")[2:9, 3:17], want_s[2:9, 3:17], "ranges")
    assert sorted(zarr.open_group(store, mode="r").keys()) == ["a", "sub"]
    store.close()  # a zip archive's directory
    # zarrox reads what zarr-python wrote, through the same store and a new one
    for where in (store, again()):
        assert_identical(zarrox.open_array(where, path="a", mode="r")[...], want, "zarrox")
        assert_identical(zarrox.open_array(where, path="sub/s", mode="r")[...], want_s, "sharded")
        assert zarrox.open_group(where, mode="r").attrs["title"] == "t"


def test_zarrox_writes_zarr_python_reads_and_writes(
    zarrox_stores: tuple[zarrox.Store, Callable[[], zarrox.Store]],
) -> None:
    store, again = zarrox_stores
    want = make_data("int32", (30, 20), seed=4)
    g = zarrox.open_group(store, mode="w", attributes={"title": "t"})
    g.create_array("a", shape=want.shape, chunks=(10, 10), shards=(10, 20), dtype="i4")[...] = want
    store.close()
    back = again()
    z = zarr.open_array(back, path="a")
    assert_identical(z[...], want, "zarr-python")
    assert_identical(z[3:27, 5], want[3:27, 5], "zarr-python, ranges")
    assert zarr.open_group(back).attrs["title"] == "t"
    z[0, :] = -1
    z.attrs["units"] = "m"
    back.close()
    want[0, :] = -1
    got = zarrox.open_array(again(), path="a", mode="r")
    assert_identical(got[...], want, "zarrox reads zarr-python's write")
    assert got.attrs["units"] == "m"


def test_zarr_python_opens_zarrox_store_objects_as_given(tmp_path: Path) -> None:
    """The issue's own lines: zarr.open_array(zarrox.LocalStore(p)), a read-only store,
    and the view each store gives zarr-python (store.as_zarr_store())."""
    p = tmp_path / "x.zarr"
    zarrox.create_array(str(p), shape=(9,), chunks=(4,), dtype="i8")[...] = np.arange(9)
    assert_identical(zarr.open_array(zarrox.LocalStore(p))[...], np.arange(9), "LocalStore")
    read_only = zarrox.LocalStore(p, read_only=True)
    z = zarr.open_array(read_only)
    assert_identical(z[2:5], np.arange(2, 5), "read-only store")
    with pytest.raises(ValueError, match="read-only"):
        z[0] = 5
    with pytest.raises(ValueError, match="read-only"):
        zarr.open_array(zarrox.LocalStore(p), mode="r")[0] = 5
    # the view: a zarr-python store over the zarrox store, which zarrox takes back as it was
    store = zarrox.LocalStore(p)
    view = store.as_zarr_store()
    assert isinstance(view, zarr.abc.store.Store)
    assert view == store.as_zarr_store() and str(view) == store.url
    assert zarrox.storage.resolve_store(view) is store
    twin = zarrox.storage.resolve_store(view.with_read_only(True))  # zarr-python's mode="r"
    assert twin.read_only and twin.handle is store.handle
    with pytest.raises(ReadOnlyError):
        twin.set("k", b"v")
    assert pickle.loads(pickle.dumps(view)) == view
    assert_identical(zarr.open_array(view)[...], np.arange(9), "the view")
    # a zarr-python store that zarrox serves from Python is given back to zarr-python as is
    zarr_memory = zarr.storage.MemoryStore()
    assert zarrox.storage.resolve_store(zarr_memory).as_zarr_store() is zarr_memory
    assert view.supports_deletes
    assert not ZipStore(tmp_path / "z.zip", mode="w").as_zarr_store().supports_deletes


def test_zarr_python_in_a_fresh_process_and_zarrox_without_it(tmp_path: Path) -> None:
    """zarr-python takes zarrox stores as soon as zarrox is imported; without zarr-python
    zarrox works and only the view is missing."""
    p = tmp_path / "x.zarr"
    zarrox.create_array(str(p), shape=(5,), chunks=(2,), dtype="i2")[...] = 3
    with_zarr = (
        "import zarrox, zarr\n"
        f"print(zarr.open_array(zarrox.LocalStore({str(p)!r}))[...].tolist())\n"
    )
    without_zarr = (
        "import sys; sys.modules['zarr'] = None\n"
        "import zarrox\n"
        f"store = zarrox.LocalStore({str(p)!r})\n"
        "print(zarrox.open_array(store)[...].tolist())\n"
        "try:\n    store.as_zarr_store()\nexcept ImportError:\n    print('no view')\n"
    )
    for code, want in [(with_zarr, "[3, 3, 3, 3, 3]"), (without_zarr, "[3, 3, 3, 3, 3]\nno view")]:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == want


@pytest.mark.parametrize("pipeline", ["zarr-python", "zarrox"])
def test_zarr_python_pipelines_on_zarrox_stores(tmp_path: Path, pipeline: str) -> None:
    """With zarrox's codec pipeline, a store Rust reads (LocalStore) is read by Rust, one
    served from Python (a store of the user's) through the view."""
    config = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline"} if pipeline == "zarrox" else {}
    want = make_data("float32", (20, 30), seed=6)
    with zarr.config.set(config):
        for store in (zarrox.LocalStore(tmp_path / "p.zarr"), DictStore()):
            z = zarr.create_array(
                store, shape=want.shape, chunks=(7, 8), shards=(14, 16), dtype="f4"
            )
            z[...] = want
            assert_identical(zarr.open_array(store)[1:19, 2:29], want[1:19, 2:29], repr(store))
            assert_identical(zarrox.open_array(store)[...], want, repr(store))


def test_xarray_through_zarrox_stores(
    zarrox_stores: tuple[zarrox.Store, Callable[[], zarrox.Store]],
) -> None:
    xr = pytest.importorskip("xarray")
    store, again = zarrox_stores
    data = make_data("float64", (30, 20), seed=7)
    ds = xr.Dataset(
        {"t": (("x", "y"), data, {"units": "K"})},
        coords={"x": np.arange(30), "y": np.linspace(0.0, 1.0, 20)},
        attrs={"title": "t"},
    )
    ds.to_zarr(store, mode="w", encoding={"t": {"chunks": (10, 10)}})
    assert_identical(xr.open_zarr(store)["t"].values, data, "xarray reads back")
    store.close()
    back = again()
    got = xr.open_zarr(back)
    xr.testing.assert_identical(got.load(), ds)
    # zarrox reads what xarray wrote, xarray what zarrox wrote
    t = zarrox.open_array(back, path="t")
    assert_identical(t[...], data, "zarrox")
    t[0, :] = 0.0
    back.close()
    data[0, :] = 0.0
    assert_identical(xr.open_zarr(again(), consolidated=False)["t"].values, data, "zarrox's write")
