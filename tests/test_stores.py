"""Stores through the own API: zip archives, zarr-python store objects (read and written
by Rust where it can, served from Python otherwise), URLs and storage options, pickling."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import zipfile

import numpy as np
import pytest
import zarr
import zarr.storage

import zarrox
from zarrox.errors import StorageOptionsError, StoreError
from zarrox.storage import (
    LocalStore,
    MemoryStore,
    PythonZarrStore,
    RustObjectStore,
    ZipStore,
    resolve_store,
)

SHARDED = {"chunks": (4, 4), "shards": (8, 8)}


def _data(shape=(16, 16), dtype="int32"):
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


# -- zip archives ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [{"chunks": (4, 4)}, SHARDED])
def test_zip_path_write_then_read_by_zarr_python(tmp_path, layout):
    path = tmp_path / "data.zip"
    a = zarrox.create_array(str(path), name="x", shape=(16, 16), dtype="int32", **layout)
    a[:] = _data()
    a[3, 5] = -1
    a.attrs["k"] = "v"
    want = _data()
    want[3, 5] = -1
    # zarr-python reads the archive as it is on disk now.
    with zarr.storage.ZipStore(path, mode="r") as zs:
        got = zarr.open_array(zs, path="x", mode="r")
        np.testing.assert_array_equal(got[:], want)
        assert got.attrs["k"] == "v"
    # One entry per key: rewritten keys replace the old entry.
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    assert len(names) == len(set(names)), names
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(path).infolist())


@pytest.mark.parametrize("layout", [{"chunks": (4, 4)}, SHARDED])
def test_zip_written_by_zarr_python_read_by_zarrox(tmp_path, layout):
    path = tmp_path / "z.zip"
    with zarr.storage.ZipStore(path, mode="w") as zs:
        z = zarr.create_array(zs, name="x", shape=(16, 16), dtype="int32", **layout)
        z[:] = _data()
    for store in (str(path), f"zip://{path}", ZipStore(path, "r")):
        a = zarrox.open_array(store, path="x", mode="r")
        np.testing.assert_array_equal(a[:], _data())
        np.testing.assert_array_equal(a[5:9, 2], _data()[5:9, 2])


def test_zip_entries_zarr_python_appended_twice_read_as_the_last(tmp_path):
    path = tmp_path / "dup.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("k", b"old")
        with pytest.warns(UserWarning):
            zf.writestr("k", b"new")
    assert ZipStore(path, "r").get("k") == b"new"


def test_zip_modes(tmp_path):
    path = tmp_path / "m.zip"
    with pytest.raises(zarrox.errors.NodeNotFoundError):
        ZipStore(path, "r")
    with ZipStore(path, "w") as s:
        s.set("a", b"1")
    with ZipStore(path, "a") as s:
        s.set("b", b"2")
        assert s.get("a") == b"1"
    r = ZipStore(path, "r")
    assert r.list_prefix("") == ["a", "b"]
    with pytest.raises(zarrox.errors.ReadOnlyError, match="read-only"):
        r.set("c", b"3")
    with pytest.raises(StoreError, match="already exists"):
        ZipStore(path, "x")
    with pytest.raises(ValueError, match="mode"):
        ZipStore(path, "q")


def test_zip_chunk_that_becomes_empty_is_rewritten_as_fill(tmp_path):
    path = tmp_path / "e.zip"
    a = zarrox.create_array(str(path), shape=(8,), chunks=(4,), dtype="int16", fill_value=0)
    a[:] = 1
    a[:4] = 0  # the chunk is all fill: a zip archive cannot delete it
    np.testing.assert_array_equal(a[:], [0, 0, 0, 0, 1, 1, 1, 1])
    with zarr.storage.ZipStore(path, mode="r") as zs:
        np.testing.assert_array_equal(zarr.open_array(zs, mode="r")[:], a[:])


# -- zarr-python store objects ---------------------------------------------------------------


def _zarr_stores(tmp_path):
    return {
        "LocalStore": zarr.storage.LocalStore(tmp_path / "local"),
        "MemoryStore": zarr.storage.MemoryStore(),
        "ZipStore": zarr.storage.ZipStore(tmp_path / "zs.zip", mode="w"),
        "FsspecStore": zarr.storage.FsspecStore.from_url("memory://zarrox-test-fsspec"),
        "LoggingStore": zarr.storage.LoggingStore(zarr.storage.MemoryStore()),
    }


@pytest.mark.parametrize(
    "kind", ["LocalStore", "MemoryStore", "ZipStore", "FsspecStore", "LoggingStore"]
)
@pytest.mark.parametrize("layout", [{"chunks": (4, 4)}, SHARDED])
def test_zarr_python_store_objects_both_ways(tmp_path, kind, layout):
    zs = _zarr_stores(tmp_path)[kind]
    adapted = resolve_store(zs)
    assert isinstance(adapted, LocalStore if kind == "LocalStore" else PythonZarrStore)
    a = zarrox.create_array(zs, name="x", shape=(16, 16), dtype="int32", **layout)
    a[:] = _data()
    a[1:3, 2:14] = 7
    a.vindex[[0, 15], [15, 0]] = [-1, -2]
    want = _data()
    want[1:3, 2:14] = 7
    want[0, 15], want[15, 0] = -1, -2
    np.testing.assert_array_equal(a[:], want)
    np.testing.assert_array_equal(a.oindex[[15, 1], 3:6], want[[15, 1], 3:6])
    z = zarr.open_array(zs, path="x")
    np.testing.assert_array_equal(z[:], want)
    z[4:8] = 5  # not the fill value: zarr-python cannot delete from a ZipStore
    want[4:8] = 5
    np.testing.assert_array_equal(zarrox.open_array(zs, path="x")[:], want)
    assert zarrox.open_group(zs, mode="r").array_keys() == ["x"] or kind == "ZipStore"
    if kind == "FsspecStore":
        import fsspec

        fsspec.filesystem("memory").rm("zarrox-test-fsspec", recursive=True)


def test_strings_through_a_python_store(tmp_path):
    zs = zarr.storage.MemoryStore()
    a = zarrox.create_array(zs, shape=(6,), chunks=(4,), dtype=str)
    a[:] = ["a", "bb", "", "dddd", "é", "f"]
    a[1] = "B"
    assert list(a[:]) == ["a", "B", "", "dddd", "é", "f"]
    assert list(zarr.open_array(zs)[:]) == ["a", "B", "", "dddd", "é", "f"]


def test_python_store_errors_name_the_key():
    class Failing(zarr.storage.MemoryStore):
        async def get(self, key, prototype, byte_range=None):
            if "/c/" in key or key.startswith("c/"):
                raise OSError("disk on fire")
            return await super().get(key, prototype, byte_range)

    zs = Failing()
    a = zarrox.create_array(zs, shape=(4,), chunks=(2,), dtype="int8")
    a[:] = 1
    # both chunks are fetched at once: the error names whichever failed first
    with pytest.raises(StoreError, match=r"get MemoryStore\(.*\)/c/[01]: disk on fire"):
        a[:]
    with pytest.raises(StoreError, match=r"/c/1: disk on fire"):
        a[3]


# -- URLs and storage options ----------------------------------------------------------------


def test_urls_resolve_to_stores(tmp_path):
    assert isinstance(resolve_store(str(tmp_path)), LocalStore)
    assert isinstance(resolve_store(tmp_path.as_uri()), LocalStore)
    assert isinstance(resolve_store("memory://"), MemoryStore)
    assert isinstance(resolve_store(str(tmp_path / "x.zip")), ZipStore)
    s3 = resolve_store("s3://bucket/x.zarr", storage_options={"anon": True, "region": "eu-west-1"})
    assert isinstance(s3, RustObjectStore) and s3.url == "s3://bucket/x.zarr"
    for url, options in (
        ("gs://bucket/x", {"anon": True}),
        ("az://container/x", {"account_name": "acct", "anon": True}),
        ("https://example.com/x.zarr", {}),
    ):
        options = {**options, "timeout": 5}
        assert isinstance(resolve_store(url, storage_options=options), RustObjectStore)
    with pytest.raises(ValueError, match="unsupported store URL"):
        resolve_store("ftp://host/x")
    with pytest.raises(TypeError, match="storage_options"):
        resolve_store(str(tmp_path), storage_options={"anon": True})
    with pytest.raises(ValueError, match="unknown storage option 'nope'"):
        resolve_store("s3://bucket/x", storage_options={"nope": 1})
    with pytest.raises(TypeError, match="cannot use int"):
        resolve_store(3)


def test_http_stores_are_read_only():
    s = resolve_store("http://127.0.0.1:9/x.zarr")
    assert s.read_only
    with pytest.raises(zarrox.errors.ReadOnlyError, match="read-only"):
        s.set("zarr.json", b"{}")


def test_unreachable_object_store_is_a_store_error_with_the_url():
    s = resolve_store(
        "s3://bucket/x.zarr",
        storage_options={
            "endpoint_url": "http://127.0.0.1:9",
            "key": "k",
            "secret": "s",
            "region": "us-east-1",
            "max_retries": 0,
            "connect_timeout": 1,
        },
    )
    with pytest.raises(StoreError, match=r"s3://bucket/x.zarr/zarr.json"):
        zarrox.open_array(s, mode="r")


# -- pickling --------------------------------------------------------------------------------


def _sum_in_child(obj):
    return float(np.asarray(obj[...]).sum())


@pytest.mark.parametrize("kind", ["local", "memory", "zip", "zarr-memory", "zarr-local"])
def test_arrays_groups_and_stores_pickle(tmp_path, kind):
    store = {
        "local": lambda: str(tmp_path / "p.zarr"),
        "memory": MemoryStore,
        "zip": lambda: str(tmp_path / "p.zip"),
        "zarr-memory": zarr.storage.MemoryStore,
        "zarr-local": lambda: zarr.storage.LocalStore(tmp_path / "zl"),
    }[kind]()
    g = zarrox.open_group(store, mode="w")
    a = g.create_array("x", shape=(8, 8), chunks=(4, 4), dtype="float64")
    a[:] = _data((8, 8), "float64")
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b[:], a[:])
    assert (b.shape, b.chunks, b.dtype, b.path) == (a.shape, a.chunks, a.dtype, a.path)
    g2 = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(g2["x"][:], a[:])
    s2 = pickle.loads(pickle.dumps(a.store))
    assert type(s2) is type(a.store)
    # In another process (spawned: nothing inherited but the pickle).
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        assert pool.apply(_sum_in_child, (a,)) == float(a[:].sum())


def test_pickled_object_stores_keep_given_options_only(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-the-environment")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    s = RustObjectStore("s3://bucket/x", {"region": "us-east-1"})
    data = pickle.dumps(s)
    assert b"from-the-environment" not in data and b"env-key" not in data
    assert pickle.loads(data).storage_options == {"region": "us-east-1"}


# -- local stores: links out of the root, crashed writers, durable writes -------------------


def test_nothing_is_deleted_or_written_through_a_link_out_of_the_store(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_bytes(b"keep me")
    root = tmp_path / "store.zarr"
    g = zarrox.open_group(str(root), mode="w")
    g.create_array("inside", shape=(4,), chunks=(2,), dtype="i1")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StoreError, match="outside the store's root"):
        zarrox.create_array(str(root), name="linked", shape=(4,), dtype="i1", overwrite=True)
    with pytest.raises(StoreError, match="outside the store's root"):
        del g["linked"]
    assert (outside / "precious").read_bytes() == b"keep me"
    s = LocalStore(root)
    assert "linked/precious" not in s.list_prefix("")
    with pytest.raises(StoreError, match="invalid store prefix"):
        s.list_prefix("../")
    with pytest.raises(StoreError, match="invalid store prefix"):
        s.list_dir("/")
    assert s.get("linked/precious") == b"keep me"  # reads follow links


def test_a_writer_killed_mid_write_leaves_whole_chunks_and_cleanable_temporaries(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "k.zarr"
    zarrox.create_array(str(root), shape=(4096,), chunks=(1,), dtype="int64")
    code = (
        "import numpy as np, zarrox\n"
        f"a = zarrox.open_array({str(root)!r}, mode='r+')\n"
        "i = 0\n"
        "while True:\n"
        "    a[i % 4096] = i + 1\n"
        "    i += 1\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(1.5)
    child.send_signal(signal.SIGKILL)
    child.wait()
    a = zarrox.open_array(str(root), mode="r")
    values = a[:]
    assert (values >= 0).all()  # every chunk read whole: the fill or a written value
    assert a.nchunks_initialized == int((values != 0).sum())
    # A temporary file left by the dead writer (simulated: its pid cannot be alive) is no
    # key, and `zarrox clean` removes it.
    leftover = root / "c" / f".7.zarrox-tmp-{2**31 - 1}-3"
    leftover.parent.mkdir(exist_ok=True)
    leftover.write_bytes(b"torn")
    assert not any(".zarrox-tmp-" in k for k in LocalStore(root).list_prefix(""))
    out = subprocess.run(
        [sys.executable, "-m", "zarrox.cli", "clean", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"removed": ' in out.stdout and not leftover.exists()


def test_fsync_mode_writes_and_reads_back(tmp_path):
    with zarrox.config.set({"store.fsync": True}):
        s = resolve_store(str(tmp_path / "d.zarr"))
    assert s.fsync
    a = zarrox.create_array(s, shape=(8, 8), chunks=(4, 4), dtype="int16")
    a[:] = _data((8, 8), "int16")
    np.testing.assert_array_equal(zarrox.open_array(str(tmp_path / "d.zarr"))[:], a[:])
    assert pickle.loads(pickle.dumps(s)).fsync
    assert not LocalStore(tmp_path / "e.zarr").fsync


# -- a dict as a store (zarr-python's MemoryStore(store_dict)) ------------------------------


@pytest.mark.parametrize("layout", ["plain", "sharded", "strings"])
def test_a_dict_is_a_memory_store_written_through(layout):
    store: dict = {}
    kwargs: dict = {"shape": (10, 6), "chunks": (4, 3), "dtype": "i4"}
    data: np.ndarray = np.arange(60, dtype="i4").reshape(10, 6)
    if layout == "sharded":
        kwargs["shards"] = (8, 6)
    if layout == "strings":
        kwargs["dtype"] = str
        data = np.array([f"v{i}" * (i % 4) for i in range(60)], dtype=object).reshape(10, 6)
    a = zarrox.create_array(store=store, **kwargs)
    a[:] = data
    # every key is in the user's dict, as zarr-python's buffers, and zarr-python reads them
    assert "zarr.json" in store
    assert json.loads(store["zarr.json"].to_bytes())["shape"] == [10, 6]
    assert all(isinstance(v, zarr.core.buffer.cpu.Buffer) for v in store.values())
    z = zarr.open_array(zarr.storage.MemoryStore(store), mode="r")
    np.testing.assert_array_equal(z[:], data)
    # partial reads and writes through the dict
    b = zarrox.open_array(store, mode="r+")
    assert b == a
    np.testing.assert_array_equal(b[3:9, 1:5], data[3:9, 1:5])
    b[0, 0] = data[9, 5]
    np.testing.assert_array_equal(z[0, 0], data[9, 5])
    # a pickled copy carries the contents, independent of the dict
    c = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(c[:], b[:])
    c[1, 1] = data[0, 1]
    np.testing.assert_array_equal(b[1, 1], data[1, 1])


def test_a_dict_written_by_zarr_python_opens_and_deletes():
    store: dict = {}
    z = zarr.create_array(zarr.storage.MemoryStore(store), shape=(7,), chunks=(2,), dtype="f8")
    z[:] = np.linspace(0, 1, 7)
    a = zarrox.open_array(zarrox.storage.MemoryStore(store))
    np.testing.assert_array_equal(a[:], np.linspace(0, 1, 7))
    a[:] = 0.0  # the fill value: chunks become empty and are deleted
    assert sorted(store) == ["zarr.json"]
    np.testing.assert_array_equal(z[:], np.zeros(7))
    g = zarrox.group(store={})
    g.create_array("x", shape=(3,), dtype="u1")[:] = [1, 2, 3]
    assert sorted(g.store.store_dict) == ["x/c/0", "x/zarr.json", "zarr.json"]


def test_object_store_takes_obstore_objects_rust_cannot_reach(tmp_path):
    obstore_store = pytest.importorskip("obstore.store")
    for inner in (obstore_store.MemoryStore(), obstore_store.LocalStore(str(tmp_path))):
        store = zarrox.storage.ObjectStore(inner)
        a = zarrox.create_array(store=store, shape=(9, 4), chunks=(4, 4), shards=(8, 4), dtype="u2")
        a[:] = np.arange(36, dtype="u2").reshape(9, 4)
        np.testing.assert_array_equal(a[5:9, 1], [21, 25, 29, 33])
        z = zarr.open_array(zarr.storage.ObjectStore(inner), mode="r")
        np.testing.assert_array_equal(z[:], a[:])
        ro = zarrox.storage.ObjectStore(store=inner, read_only=True)
        with pytest.raises(zarrox.errors.ReadOnlyError):
            zarrox.open_array(ro, mode="r+")[0, 0] = 1
    # stores whose configuration Rust takes over are read and written by Rust
    s3 = zarrox.storage.ObjectStore(obstore_store.S3Store("bkt", region="us-east-1"))
    assert type(s3).__name__ == "RustObstoreStore" and s3.handle.in_rust
    with pytest.raises(StorageOptionsError):
        zarrox.storage.ObjectStore(obstore_store.MemoryStore(), {"anon": True})


def test_store_names_say_who_does_the_io_and_the_old_names_still_work(tmp_path):
    storage = zarrox.storage
    old_to_new = {
        "ObjectStore": "RustObjectStore",
        "ObstoreStore": "RustObstoreStore",
        "ObstorePythonStore": "PythonObstoreStore",
        "PythonStore": "PythonZarrStore",
        "ServedStore": "PythonServedStore",
    }
    for old, new in old_to_new.items():
        assert getattr(storage, old) is getattr(storage, new), old
        assert getattr(storage, new).__name__ == new
    assert issubclass(storage.PythonZarrStore, storage.PythonServedStore)
    assert issubclass(storage.PythonObstoreStore, storage.PythonServedStore)
    served = storage.PythonZarrStore(zarr.storage.MemoryStore())
    assert not served.handle.in_rust and repr(served).startswith("PythonZarrStore(")
    s3 = storage.RustObjectStore("s3://bucket/x", {"region": "us-east-1"})
    assert s3.handle.in_rust and repr(s3) == "RustObjectStore('s3://bucket/x')"
    assert pickle.loads(pickle.dumps(s3)) == s3


def test_nodes_equal_when_at_the_same_place_with_the_same_metadata(tmp_path):
    a = zarrox.create_array(store=tmp_path / "x.zarr", shape=(4,), dtype="i8")
    same = zarrox.open_array(tmp_path / "x.zarr")
    assert a == same and hash(a) == hash(same) and a == pickle.loads(pickle.dumps(a))
    assert a != zarrox.create_array(store=tmp_path / "y.zarr", shape=(4,), dtype="i8")
    assert a != zarrox.create_array(
        store=tmp_path / "x.zarr", shape=(5,), dtype="i8", overwrite=True
    )
    g = zarrox.open_group(tmp_path / "g.zarr")
    assert g == zarrox.open_group(tmp_path / "g.zarr") and g != a
