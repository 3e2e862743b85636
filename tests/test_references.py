"""Kerchunk references read by the engine (issue #46): netCDF4/HDF5 files written here by
h5py, references made by kerchunk (where it is installed) or by hand from h5py's chunk
offsets, every variable read through zarrox compared with h5py's reading of the original
file, locally and from S3 (moto), where merged ranges make fewer requests than chunks."""

from __future__ import annotations

import base64
import json
import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from zarrox.errors import ReadOnlyError, StorageOptionsError
from zarrox.storage import ReferenceStore

h5py = pytest.importorskip("h5py", reason="h5py is not installed")

#: the datasets of the test file: name -> (h5py create_dataset keywords, values written)
DATASETS: dict[str, dict[str, Any]] = {
    "temp": dict(
        data=np.arange(600, dtype="<f4").reshape(20, 30) / 7,
        chunks=(5, 10),
        compression="gzip",
        shuffle=True,
        fillvalue=-9999.0,
    ),
    "big_endian": dict(
        data=np.arange(96, dtype=">i4").reshape(12, 8) - 40,
        chunks=(4, 8),
        compression="gzip",
        compression_opts=9,
    ),
    "u8": dict(data=np.arange(50, dtype="u1")),  # contiguous: one chunk
    "grp/pres": dict(data=np.linspace(0, 1, 80).reshape(10, 8), chunks=(4, 4)),
    "grp/sub/flags": dict(data=np.arange(33, dtype="i8") % 3, chunks=(10,), shuffle=True),
}


def _write_h5(path: Path, scale: int = 1) -> None:
    with h5py.File(path, "w") as f:
        for name, kw in DATASETS.items():
            kw = dict(kw)
            data = kw.pop("data")
            f.create_dataset(name, data=data * scale, **kw)
        # partly written: the chunks never written are not stored (the fill value)
        partial = f.create_dataset("count", shape=(40,), dtype="<i2", chunks=(7,), fillvalue=3)
        partial[:20] = np.arange(20)
        f.attrs["title"] = "made by h5py"
        f["temp"].attrs["units"] = "K"


VARIABLES = [*DATASETS, "count"]


@pytest.fixture(scope="module")
def h5_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("refs") / "data.h5"
    _write_h5(path)
    return path


def _kerchunk_refs(path: Path | str, url: str | None = None, inline: int = 0) -> dict[str, Any]:
    hdf = pytest.importorskip("kerchunk.hdf", reason="kerchunk is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with open(path, "rb") as f:
            refs = hdf.SingleHdf5ToZarr(f, url or str(path), inline_threshold=inline).translate()
    return refs  # type: ignore[no-any-return]


def _zarray(ds: Any, filters: list[dict[str, Any]] | None) -> str:
    chunks = ds.chunks or ds.shape
    return json.dumps(
        {
            "zarr_format": 2,
            "shape": list(ds.shape),
            "chunks": list(chunks),
            "dtype": ds.dtype.str,
            "fill_value": ds.fillvalue.item(),
            "order": "C",
            "compressor": None,
            "filters": filters,
            "dimension_separator": ".",
        }
    )


def _hand_refs(path: Path, url: str) -> dict[str, Any]:
    """Version 1 references made from h5py's chunk offsets (no kerchunk): every chunked
    dataset, its HDF5 filters as numcodecs filters, the file's URL a template."""
    refs: dict[str, Any] = {".zgroup": json.dumps({"zarr_format": 2})}
    with h5py.File(path, "r") as f:

        def visit(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Group):
                refs[f"{name}/.zgroup"] = json.dumps({"zarr_format": 2})
                return
            if obj.chunks is None:
                return
            filters: list[dict[str, Any]] = []
            if obj.shuffle:
                filters.append({"id": "shuffle", "elementsize": obj.dtype.itemsize})
            if obj.compression == "gzip":
                filters.append({"id": "zlib", "level": obj.compression_opts})
            if obj.fletcher32:
                filters.append({"id": "fletcher32"})
            refs[f"{name}/.zarray"] = _zarray(obj, filters or None)
            for i in range(obj.id.get_num_chunks()):
                info = obj.id.get_chunk_info(i)
                index = ".".join(
                    str(o // c) for o, c in zip(info.chunk_offset, obj.chunks, strict=True)
                )
                refs[f"{name}/{index}"] = ["{{f}}", info.byte_offset, info.size]

        f.visititems(visit)
    return {"version": 1, "templates": {"f": url}, "refs": refs}


def _check_all(group: Any, path: Path, names: list[str]) -> None:
    with h5py.File(path, "r") as f:
        for name in names:
            expected = f[name][...]
            got = group[name][...]
            assert got.dtype == expected.dtype.newbyteorder("=") or got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected, err_msg=name)
            # a part across chunk borders
            sel = tuple(slice(1, max(2, n - 1)) for n in expected.shape)
            np.testing.assert_array_equal(group[name][sel], expected[sel], err_msg=name)


def test_kerchunk_references_read_as_h5py_reads_the_file(h5_file: Path) -> None:
    refs = _kerchunk_refs(h5_file)
    group = zarrox.open_group(refs, mode="r")
    assert sorted(group.keys()) == ["big_endian", "count", "grp", "temp", "u8"]
    _check_all(group, h5_file, VARIABLES)
    assert group.attrs["title"] == "made by h5py"
    assert group["temp"].attrs["units"] == "K"
    # the chunks of "count" never written read as the fill value
    assert (group["count"][21:] == 3).all()


def test_front_doors(h5_file: Path, tmp_path: Path) -> None:
    refs = _kerchunk_refs(h5_file)
    json_path = tmp_path / "refs.json"
    json_path.write_text(json.dumps(refs))
    expected = h5py.File(h5_file, "r")["temp"][...]
    by_url = zarrox.open_group("reference://", storage_options={"fo": str(json_path)}, mode="r")
    np.testing.assert_array_equal(by_url["temp"][...], expected)
    by_path = zarrox.open_group(str(json_path), mode="r")
    np.testing.assert_array_equal(by_path["temp"][...], expected)
    array = zarrox.open_array(refs, path="temp", mode="r")
    np.testing.assert_array_equal(array[...], expected)
    store = ReferenceStore(json_path)
    assert store.url == f"reference://{json_path}"
    again = pickle.loads(pickle.dumps(store))
    np.testing.assert_array_equal(zarrox.open_array(again, path="temp")[...], expected)


def test_tensorstore_specs_name_references(h5_file: Path, tmp_path: Path) -> None:
    """zarrox's ``reference`` kvstore (fsspec's reference:// options as members) and its URL
    form ``reference://<references>``; an opened view's spec opens the same array again."""
    refs = _kerchunk_refs(h5_file)
    json_path = tmp_path / "refs.json"
    json_path.write_text(json.dumps(refs))
    parquet = _parquet_refs(refs, tmp_path / "refs.parq", record_size=3)
    expected = h5py.File(h5_file, "r")["grp/pres"][...]
    for kvstore in (
        {"driver": "reference", "fo": str(json_path), "path": "grp/pres"},
        {"driver": "reference", "fo": refs, "path": "grp/pres/", "coalesce_gap": 0},
        {"driver": "reference", "fo": str(parquet), "path": "grp/pres"},
    ):
        view = zarrox.open({"driver": "zarr", "kvstore": kvstore}, read=True)
        np.testing.assert_array_equal(view.read(), expected)
    view = zarrox.open(f"reference://{json_path}|zarr2:grp/pres", read=True)
    np.testing.assert_array_equal(view.read(), expected)
    spec = view.spec().to_json()
    assert spec["kvstore"] == {"driver": "reference", "fo": str(json_path), "path": "grp/pres/"}
    np.testing.assert_array_equal(zarrox.open(spec, read=True).read(), expected)
    with pytest.raises(ValueError, match="fo"):
        zarrox.open({"driver": "zarr", "kvstore": {"driver": "reference"}}, read=True)


def test_hand_made_version_1_references(h5_file: Path) -> None:
    refs = _hand_refs(h5_file, str(h5_file))
    group = zarrox.open_group(refs, mode="r")
    names = [n for n in VARIABLES if n != "u8"]
    _check_all(group, h5_file, names)


def test_fletcher32_chunks_decode(tmp_path: Path) -> None:
    """HDF5's fletcher32 filter (kerchunk skips such datasets; references made by hand)."""
    path = tmp_path / "f32.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset(
            "x", data=np.arange(101, dtype="<f8"), chunks=(10,), fletcher32=True, shuffle=True
        )
        f.create_dataset("y", data=np.arange(24, dtype="<i2"), chunks=(5,), fletcher32=True)
    group = zarrox.open_group(_hand_refs(path, str(path)), mode="r")
    _check_all(group, path, ["x", "y"])


def test_inline_values_and_writes_refused(h5_file: Path) -> None:
    data = np.arange(6, dtype="<u2")
    refs = {
        ".zgroup": '{"zarr_format": 2}',
        "a/.zarray": _zarray_for(data),
        "a/0": "base64:" + base64.b64encode(data.tobytes()).decode(),
        "b/.zarray": {"zarr_format": 2, **json.loads(_zarray_for(data))},
        "b/0": ["file://" + str(h5_file)],  # a whole object: only its size is checked here
    }
    group = zarrox.open_group(refs, mode="r")
    np.testing.assert_array_equal(group["a"][...], data)
    store = ReferenceStore(refs)
    assert store.list_dir("") == ([".zgroup"], ["a", "b"])
    assert store.get("b/0") == h5_file.read_bytes()
    with pytest.raises(ReadOnlyError):
        store.set("a/0", b"")
    with pytest.raises(ReadOnlyError):
        zarrox.open_group(refs, mode="r+")["a"][0] = 1


def _zarray_for(data: np.ndarray) -> str:
    return json.dumps(
        {
            "zarr_format": 2,
            "shape": list(data.shape),
            "chunks": list(data.shape),
            "dtype": data.dtype.str,
            "fill_value": 0,
            "order": "C",
            "compressor": None,
            "filters": None,
        }
    )


@pytest.mark.parametrize(
    ("refs", "match"),
    [
        ({"a/0": ["x.h5", 1]}, "'a/0'"),
        ({"a/0": 5, "b": ["x"]}, "'a/0'"),
        ({"version": 1, "refs": {"k": ["{{nope}}", 0, 1]}}, "nope"),
        ({"version": 1, "refs": {"k": "base64:*"}}, "'k'"),
    ],
)
def test_bad_references_name_the_key(refs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ReferenceStore(refs)


def test_missing_file_is_an_error_naming_the_key(tmp_path: Path) -> None:
    store = ReferenceStore({"k": [str(tmp_path / "gone.h5"), 0, 4]})
    with pytest.raises(Exception, match="'k'"):
        store.get("k")


def test_options(tmp_path: Path) -> None:
    from zarrox.errors import StorageOptionsError

    with pytest.raises(StorageOptionsError, match="unsupported"):
        zarrox.open_group("reference://", storage_options={"fo": {}, "nope": 1})
    with pytest.raises(StorageOptionsError, match="remote_protocol"):
        ReferenceStore({"a": ["x"]}, remote_options={"anon": True})
    with pytest.raises(FileNotFoundError, match="refs.parq"):
        ReferenceStore(str(tmp_path / "refs.parq"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty/\.zmetadata: not found"):
        ReferenceStore(tmp_path / "empty")


def test_xarray_reads_a_netcdf_like_file(tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    path = tmp_path / "nc.h5"
    _write_netcdf_like(path, start=0)
    refs = _kerchunk_refs(path)
    ds = xr.open_dataset(
        "reference://",
        engine="zarrox",
        storage_options={"fo": refs},
        mask_and_scale=False,
        consolidated=False,
    )
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(ds["t2m"].values, f["t2m"][...])
        np.testing.assert_array_equal(ds["time"].values, f["time"][...])
    assert ds["t2m"].dims == ("time", "lat")


def test_netcdf4_written_by_xarray_reads_as_xarray_reads_the_file(tmp_path: Path) -> None:
    """A netCDF4 file written by xarray with h5netcdf: an unlimited time dimension, gzip +
    shuffle chunks, several types with fill values (masked by xarray), CF time and scale
    encodings, a group; kerchunk's references opened by xarray through zarrox decode to the
    same dataset as xarray reading the file. (kerchunk 0.2.9 drops every variable with a
    ``_FillValue`` under numpy 2.4: the test extra asks for 0.2.10.)"""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf", reason="h5netcdf is not installed")
    rng = np.random.default_rng(7)
    nt, ny, nx = 6, 5, 7
    t2m = (280 + rng.normal(0, 5, (nt, ny, nx))).astype("f4")
    t2m[0, 0, :] = np.nan  # written as the fill value
    ds = xr.Dataset(
        {
            "t2m": (("time", "y", "x"), t2m, {"units": "K"}),
            "count": (("time", "y"), rng.integers(-50, 50, (nt, ny)).astype("i2")),
            "flags": (("y",), np.arange(ny, dtype="u1")),
            "precip": (("time", "y", "x"), rng.random((nt, ny, nx)) * 10),
            "wide": (("time",), np.arange(nt, dtype="i8") * 2**40),
        },
        coords={
            "time": np.arange(nt).astype("datetime64[D]").astype("datetime64[ns]"),
            "y": np.linspace(-2, 2, ny),
            "x": np.arange(nx, dtype="i4"),
        },
        attrs={"title": "written by xarray"},
    )
    encoding = {
        "t2m": {"zlib": True, "shuffle": True, "chunksizes": (2, 5, 4), "_FillValue": -999.0},
        "count": {"zlib": True, "chunksizes": (3, 5), "_FillValue": -32768},
        "precip": {"dtype": "i2", "scale_factor": 0.01, "_FillValue": -1, "zlib": True},
        "wide": {"chunksizes": (4,)},
    }
    path = tmp_path / "cf.nc"
    ds.to_netcdf(path, engine="h5netcdf", unlimited_dims=["time"], encoding=encoding)
    xr.Dataset({"depth": (("z",), np.arange(3.0))}).to_netcdf(
        path, mode="a", group="ocean", engine="h5netcdf"
    )
    with h5py.File(path, "r") as f:
        assert f["t2m"].maxshape[0] is None  # unlimited
    refs = _kerchunk_refs(path)
    for group in (None, "ocean"):
        expected = xr.open_dataset(path, engine="h5netcdf", group=group)
        got = xr.open_dataset(
            "reference://",
            engine="zarrox",
            storage_options={"fo": refs},
            group=group,
            consolidated=False,
        )
        if group == "ocean":
            # kerchunk names a group's dimension scales by their path in the file
            assert got["depth"].dims == ("ocean/z",)
            got = got.rename_dims({"ocean/z": "z"})
        else:
            assert np.isnan(got["t2m"].values[0, 0]).all()  # the fill value, masked
        xr.testing.assert_identical(got.load(), expected.load())


def _write_netcdf_like(path: Path, start: int) -> None:
    """A netCDF4-style file: dimension scales time and lat, a variable over both."""
    with h5py.File(path, "w") as f:
        time = f.create_dataset("time", data=np.arange(start, start + 4, dtype="<f8"))
        time.make_scale("time")
        lat = f.create_dataset("lat", data=np.linspace(-10, 10, 6, dtype="<f4"))
        lat.make_scale("lat")
        t2m = f.create_dataset(
            "t2m",
            data=np.arange(24, dtype="<f4").reshape(4, 6) + start * 100,
            chunks=(1, 6),
            compression="gzip",
            shuffle=True,
        )
        t2m.dims[0].attach_scale(time)
        t2m.dims[1].attach_scale(lat)


def test_multizarr_along_time(tmp_path: Path) -> None:
    combine = pytest.importorskip("kerchunk.combine", reason="kerchunk is not installed")
    paths = [tmp_path / f"part{i}.h5" for i in range(2)]
    for i, p in enumerate(paths):
        _write_netcdf_like(p, start=4 * i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        combined = combine.MultiZarrToZarr(
            [_kerchunk_refs(p) for p in paths], concat_dims=["time"], identical_dims=["lat"]
        ).translate()
    group = zarrox.open_group(combined, mode="r")
    parts = [h5py.File(p, "r") for p in paths]
    np.testing.assert_array_equal(group["t2m"][...], np.concatenate([f["t2m"][...] for f in parts]))
    np.testing.assert_array_equal(
        group["time"][...], np.concatenate([f["time"][...] for f in parts])
    )


def _write_netcdf3(path: Path) -> dict[str, np.ndarray]:
    """A netCDF3 (classic, big-endian) file written by scipy: record variables along the
    unlimited dimension, whose records interleave in the file, and fixed ones."""
    netcdf = pytest.importorskip("scipy.io", reason="scipy is not installed").netcdf_file
    values = {
        "time": np.arange(5) * 0.5,
        "temp": np.arange(35, dtype="f4").reshape(5, 7) / 3,
        "q": (np.arange(35).reshape(5, 7) - 17).astype("i2"),
        "mask": (np.arange(7) - 3).astype("i1"),
        "height": np.linspace(0, 1, 7),
    }
    with netcdf(path, "w", version=2) as f:
        f.title = "made by scipy"
        f.createDimension("time", None)
        f.createDimension("x", 7)
        for name, data in values.items():
            dims = ("time", "x") if data.ndim == 2 else ("time",) if name == "time" else ("x",)
            v = f.createVariable(name, data.dtype.str.lstrip("<>|="), dims)
            v[:] = data
        f.variables["temp"].units = "K"
    return values


def test_netcdf3_references_read_as_scipy_reads_the_file(tmp_path: Path) -> None:
    nc3 = pytest.importorskip("kerchunk.netCDF3", reason="kerchunk is not installed")
    path = tmp_path / "classic.nc"
    values = _write_netcdf3(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refs = nc3.NetCDF3ToZarr(str(path), inline_threshold=0).translate()
    group = zarrox.open_group(refs, mode="r")
    assert group.attrs["title"] == "made by scipy"
    assert group["temp"].attrs["units"] == "K"
    netcdf = pytest.importorskip("scipy.io").netcdf_file
    with netcdf(path, "r", mmap=False) as f:
        for name, written in values.items():
            expected = f.variables[name][:].copy()
            assert expected.dtype.byteorder == ">" or expected.dtype.itemsize == 1
            got = group[name][...]
            assert got.dtype == expected.dtype.newbyteorder("="), name
            np.testing.assert_array_equal(got, expected, err_msg=name)
            np.testing.assert_array_equal(got, written, err_msg=name)
        np.testing.assert_array_equal(group["temp"][1:4, 2:6], values["temp"][1:4, 2:6])


# -- S3 (moto), through the counting proxy ------------------------------------------------------


def _chunk_gets(proxy: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in proxy.log() if e["method"] == "GET" and e["path"].endswith(name)]


def test_s3_references_merge_ranges(
    h5_file: Path, s3_bucket: Any, proxied_bucket: Any, s3_proxy: Any, tmp_path: Path
) -> None:
    s3_bucket.put("files/data.h5", h5_file.read_bytes())
    url = s3_bucket.url("files/data.h5")
    refs = _kerchunk_refs(h5_file, url)
    s3_bucket.put("refs/data.json", json.dumps(refs).encode())
    options = {
        "fo": s3_bucket.url("refs/data.json"),
        "target_options": proxied_bucket.object_store_options(),
        "remote_protocol": "s3",
        "remote_options": proxied_bucket.object_store_options(),
    }
    group = zarrox.open_group("reference://", storage_options=options, mode="r")
    s3_proxy.log(reset=True)
    temp = group["temp"][...]
    chunks = sum(1 for k in refs["refs"] if k.startswith("temp/") and "/." not in k)
    gets = _chunk_gets(s3_proxy, "/files/data.h5")
    assert chunks == 12
    assert 0 < len(gets) < chunks, gets
    _check_all(group, h5_file, VARIABLES)
    np.testing.assert_array_equal(temp, h5py.File(h5_file, "r")["temp"][...])
    # with no merging, one request per chunk
    options["coalesce_gap"] = 0
    options["max_request"] = 1
    unmerged = zarrox.open_group("reference://", storage_options=options, mode="r")
    s3_proxy.log(reset=True)
    np.testing.assert_array_equal(unmerged["temp"][...], temp)
    assert len(_chunk_gets(s3_proxy, "/files/data.h5")) == chunks


def test_references_spanning_buckets_take_each_prefix_options(
    h5_file: Path, s3_bucket: Any, proxied_bucket: Any, s3_proxy: Any, moto_server: Any
) -> None:
    """References into two buckets: the files under a ``prefix_options`` prefix are read
    with its options (here straight from moto), the others with ``remote_options`` (through
    the counting proxy)."""
    import servers

    other = servers.S3Bucket.create(moto_server.url)
    for bucket in (s3_bucket, other):
        bucket.put("files/data.h5", h5_file.read_bytes())
    refs = _kerchunk_refs(h5_file, s3_bucket.url("files/data.h5"))
    for key, value in refs["refs"].items():
        if key.startswith("grp/") and isinstance(value, list):
            value[0] = other.url("files/data.h5")
    options = {
        "fo": refs,
        "remote_protocol": "s3",
        "remote_options": proxied_bucket.object_store_options(),
        "prefix_options": {other.url(): other.object_store_options()},
    }
    s3_proxy.log(reset=True)
    group = zarrox.open_group("reference://", storage_options=options, mode="r")
    _check_all(group, h5_file, VARIABLES)
    paths = {e["path"].split("/")[1] for e in s3_proxy.log()}
    assert paths == {s3_bucket.name}, paths  # the other bucket's reads went around the proxy
    # and the other way round
    options["prefix_options"] = {other.url(): proxied_bucket.object_store_options()}
    options["remote_options"] = s3_bucket.object_store_options()
    s3_proxy.log(reset=True)
    group = zarrox.open_group("reference://", storage_options=options, mode="r")
    _check_all(group, h5_file, VARIABLES)
    assert {e["path"].split("/")[1] for e in s3_proxy.log()} == {other.name}
    with pytest.raises(StorageOptionsError, match="prefix_options"):
        ReferenceStore(refs, prefix_options={"bucket/": {}})


def test_s3_hand_made_references_relative_urls(
    h5_file: Path, s3_bucket: Any, tmp_path: Path
) -> None:
    """URLs without a scheme take ``remote_protocol``'s."""
    s3_bucket.put("data.h5", h5_file.read_bytes())
    refs = _hand_refs(h5_file, f"{s3_bucket.name}/data.h5")
    store = ReferenceStore(
        refs, remote_protocol="s3", remote_options=s3_bucket.object_store_options()
    )
    names = [n for n in VARIABLES if n != "u8"]
    _check_all(zarrox.open_group(store, mode="r"), h5_file, names)


def test_zarr_v3_metadata_and_whole_object_references(tmp_path: Path) -> None:
    """References to a v3 array's own files: ``zarr.json`` inline, chunks whole objects."""
    data = np.arange(120, dtype="<i4").reshape(10, 12)
    written = zarrox.open_array(
        str(tmp_path / "v3.zarr"), mode="w", shape=data.shape, chunks=(4, 5), dtype="<i4"
    )
    written[...] = data
    root = tmp_path / "v3.zarr"
    refs: dict[str, Any] = {"zarr.json": (root / "zarr.json").read_text()}
    for chunk in (root / "c").rglob("*"):
        if chunk.is_file():
            refs[chunk.relative_to(root).as_posix()] = [str(chunk)]
    array = zarrox.open_array(refs, mode="r")
    assert array.metadata.zarr_format == 3
    np.testing.assert_array_equal(array[...], data)


def test_http_references(h5_file: Path, http_server: Any, http_root: Path) -> None:
    """Files on a web server, reached by URL."""
    (http_root / "refs-data.h5").write_bytes(h5_file.read_bytes())
    url = f"{http_server.url}/refs-data.h5"
    group = zarrox.open_group(_kerchunk_refs(h5_file, url), mode="r")
    _check_all(group, h5_file, VARIABLES)


def test_http_references_with_a_query(h5_file: Path, tmp_path: Path) -> None:
    """URLs that carry a query (a presigned URL's signature, an Azure SAS token): the
    server refuses a request without it, so every read shows the query went along."""
    pytest.importorskip("aiohttp")
    from servers import start_http

    (tmp_path / "data.h5").write_bytes(h5_file.read_bytes())
    with start_http(tmp_path, token="s3cr3t") as server:
        url = f"{server.url}/data.h5"
        group = zarrox.open_group(_kerchunk_refs(h5_file, url + "?token=s3cr3t"), mode="r")
        _check_all(group, h5_file, VARIABLES)
        # the same file under another query is another store: refused without the token
        refs = _kerchunk_refs(h5_file, url + "?token=wrong")
        with pytest.raises(OSError, match=r"temp/0\.0") as e:
            zarrox.open_group(refs, mode="r")["temp"][...]
        assert "403" in str(e.value) or "Forbidden" in str(e.value), str(e.value)
    # a query elsewhere would name what the store cannot ask for: refused, not dropped
    refs = _kerchunk_refs(h5_file, "s3://bucket/data.h5?versionId=3")
    with pytest.raises(ValueError, match="only read from http"):
        zarrox.open_group(refs, mode="r")["temp"][...]


def test_awaitable_reads(h5_file: Path) -> None:
    """Awaitable reads that the engine completes, many at once."""
    import asyncio

    store = ReferenceStore(_kerchunk_refs(h5_file))
    expected = h5py.File(h5_file, "r")["temp"][...]

    async def main() -> list[Any]:
        array = await zarrox.AsyncArray.open(store, path="temp")
        return list(await asyncio.gather(*(array.getitem(slice(i, i + 3)) for i in range(18))))

    for i, got in enumerate(asyncio.run(main())):
        np.testing.assert_array_equal(got, expected[i : i + 3])


# -- Parquet references (kerchunk.df) --------------------------------------------------------


def _parquet_refs(refs: dict[str, Any], directory: Path, record_size: int = 2) -> Path:
    """``kerchunk.df.refs_to_dataframe(refs, directory, record_size=...)``; where fastparquet
    (its engine) is not installed, the same steps with fsspec's pyarrow engine."""
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    df = pytest.importorskip("kerchunk.df", reason="kerchunk is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import fastparquet  # noqa: F401
        except ImportError:
            import fsspec
            from fsspec.implementations.reference import LazyReferenceMapper

            out = LazyReferenceMapper.create(
                root=str(directory),
                fs=fsspec.filesystem("file"),
                record_size=record_size,
                categorical_threshold=10,
                engine="pyarrow",
            )
            for key in sorted(refs["refs"]):
                out[key] = refs["refs"][key]
            out.flush()
        else:
            df.refs_to_dataframe(refs, str(directory), record_size=record_size)
    return directory


def test_parquet_references_read_as_h5py_reads_the_file(h5_file: Path, tmp_path: Path) -> None:
    # small chunks inline (raw), small records: several record files per variable
    refs = _kerchunk_refs(h5_file, inline=100)
    assert any(isinstance(v, str) and not v.startswith("{") for v in refs["refs"].values())
    root = _parquet_refs(refs, tmp_path / "refs.parq", record_size=3)
    assert len(list((root / "temp").glob("refs.*.parq"))) == 4
    for group in (
        zarrox.open_group("reference://", storage_options={"fo": str(root)}, mode="r"),
        zarrox.open_group(ReferenceStore(root), mode="r"),
    ):
        assert sorted(group.keys()) == ["big_endian", "count", "grp", "temp", "u8"]
        _check_all(group, h5_file, VARIABLES)
        assert group.attrs["title"] == "made by h5py"
        assert group["temp"].attrs["units"] == "K"
        # the chunks of "count" never written are missing rows: the fill value
        assert (group["count"][21:] == 3).all()
    again = pickle.loads(pickle.dumps(ReferenceStore(root)))
    _check_all(zarrox.open_group(again, mode="r"), h5_file, ["temp"])


def test_parquet_references_every_front_door(
    h5_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Parquet directory opens by its path as a JSON file does (a v2 store with
    consolidated ``.zmetadata`` stays a store); records load in awaitables, listing, the CLI
    (``zarrox copy`` to a real Zarr v3 hierarchy), a pickled store and a forked child."""
    import asyncio
    import multiprocessing

    from zarrox.cli import main

    refs = _kerchunk_refs(h5_file, inline=100)
    root = _parquet_refs(refs, tmp_path / "refs.parq", record_size=3)
    expected = h5py.File(h5_file, "r")["temp"][...]
    np.testing.assert_array_equal(zarrox.open_group(str(root), mode="r")["temp"][...], expected)
    v2 = zarrox.open_group(tmp_path / "v2", mode="w", zarr_format=2)
    v2.create_array("x", shape=(3,), dtype="i1")[...] = [1, 2, 3]
    zarrox.consolidate_metadata(tmp_path / "v2")
    assert zarrox.open_group(str(tmp_path / "v2"), mode="r")["x"][...].tolist() == [1, 2, 3]

    async def gather() -> list[Any]:
        array = await zarrox.AsyncArray.open(ReferenceStore(root), path="temp")
        return list(await asyncio.gather(*(array.getitem(slice(i, i + 3)) for i in range(18))))

    for i, got in enumerate(asyncio.run(gather())):
        np.testing.assert_array_equal(got, expected[i : i + 3])
    # listing loads the records: the chunks stored, not those never written
    store = ReferenceStore(root)
    count = zarrox.open_array(store, path="count", mode="r")
    assert count.nchunks_initialized == 3  # chunks 0..2 of 6 hold the 20 values written
    assert "temp/0.0" in set(store.list_prefix("temp/"))
    assert main(["tree", str(root)]) == 0
    assert "temp (20, 30) float32" in capsys.readouterr().out
    assert main(["copy", str(root), str(tmp_path / "real.zarr"), "--zarr-format", "3"]) == 0
    real = zarrox.open_group(tmp_path / "real.zarr", mode="r")
    assert real["temp"].metadata.zarr_format == 3
    _check_all(real, h5_file, VARIABLES)
    # a child forked with one record loaded and the others not reads them all
    group = zarrox.open_group(pickle.loads(pickle.dumps(ReferenceStore(root))), mode="r")
    np.testing.assert_array_equal(group["temp"][:5], expected[:5])
    _FORKED["group"] = group  # the child has it by the fork, not by a pickle
    ctx = multiprocessing.get_context("fork")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a threaded process
            with ctx.Pool(1) as pool:
                got = pool.apply_async(_read_forked_temp).get(timeout=120)
    finally:
        _FORKED.clear()
    np.testing.assert_array_equal(got, expected)


_FORKED: dict[str, Any] = {}


def _read_forked_temp() -> Any:
    return _FORKED["group"]["temp"][...]


def test_parquet_multizarr_along_time(tmp_path: Path) -> None:
    combine = pytest.importorskip("kerchunk.combine", reason="kerchunk is not installed")
    paths = [tmp_path / f"part{i}.h5" for i in range(3)]
    for i, p in enumerate(paths):
        _write_netcdf_like(p, start=4 * i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        combined = combine.MultiZarrToZarr(
            [_kerchunk_refs(p) for p in paths], concat_dims=["time"], identical_dims=["lat"]
        ).translate()
    root = _parquet_refs(combined, tmp_path / "combined", record_size=5)
    group = zarrox.open_group(ReferenceStore(root), mode="r")
    parts = [h5py.File(p, "r") for p in paths]
    np.testing.assert_array_equal(group["t2m"][...], np.concatenate([f["t2m"][...] for f in parts]))
    np.testing.assert_array_equal(
        group["t2m"][:, 2], np.concatenate([f["t2m"][:, 2] for f in parts])
    )
    np.testing.assert_array_equal(
        group["time"][...], np.concatenate([f["time"][...] for f in parts])
    )


def test_parquet_references_on_s3(
    h5_file: Path, s3_bucket: Any, proxied_bucket: Any, s3_proxy: Any, tmp_path: Path
) -> None:
    s3_bucket.put("files/data.h5", h5_file.read_bytes())
    refs = _kerchunk_refs(h5_file, s3_bucket.url("files/data.h5"), inline=100)
    root = _parquet_refs(refs, tmp_path / "refs", record_size=4)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            s3_bucket.put(f"refs/{path.relative_to(root).as_posix()}", path.read_bytes())
    options = {
        "fo": s3_bucket.url("refs"),
        "target_options": proxied_bucket.object_store_options(),
        "remote_protocol": "s3",
        "remote_options": proxied_bucket.object_store_options(),
    }
    s3_proxy.log(reset=True)
    group = zarrox.open_group("reference://", storage_options=options, mode="r")
    # opening reads the metadata, no record; a read fetches the records it covers
    paths = [e["path"] for e in s3_proxy.log(reset=True)]
    assert any(p.endswith("/.zmetadata") for p in paths), paths
    assert not any(p.endswith(".parq") for p in paths), paths
    with h5py.File(h5_file, "r") as f:
        # temp: 4 x 3 chunks, 4 per record: its first 5 rows are record 0's chunks
        np.testing.assert_array_equal(group["temp"][:5], f["temp"][:5])

    def records(reset: bool) -> list[str]:
        paths = (e["path"] for e in s3_proxy.log(reset=reset))
        return sorted(p.split("/refs/", 1)[1] for p in paths if p.endswith(".parq"))

    assert records(reset=True) == ["temp/refs.0.parq"]
    temp = group["temp"][...]
    assert records(reset=False) == ["temp/refs.1.parq", "temp/refs.2.parq"]
    assert 0 < len(_chunk_gets(s3_proxy, "/files/data.h5")) < 12
    np.testing.assert_array_equal(temp, h5py.File(h5_file, "r")["temp"][...])
    _check_all(group, h5_file, VARIABLES)


@pytest.mark.parametrize("kind", ["json", "parquet"])
def test_zarr_python_over_fsspec_reference_file_system_reads_through_rust(
    kind: str,
    h5_file: Path,
    s3_bucket: Any,
    proxied_bucket: Any,
    s3_proxy: Any,
    tmp_path: Path,
) -> None:
    """zarr-python's ``FsspecStore`` over fsspec's ``ReferenceFileSystem``, read by
    zarrox's pipeline: the engine's reference store serves it (chunks of one file merged
    into few requests), with the s3fs options mapped to Rust's."""
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("s3fs")
    from zarrox.storage import from_zarr_store

    s3_bucket.put("files/data.h5", h5_file.read_bytes())
    refs = _kerchunk_refs(h5_file, s3_bucket.url("files/data.h5"), inline=100)
    fo: Any = refs if kind == "json" else str(_parquet_refs(refs, tmp_path / "p", 4))
    options = {
        "fo": fo,
        "remote_protocol": "s3",
        "remote_options": {**proxied_bucket.fsspec_options(), "asynchronous": True},
        "asynchronous": True,
    }
    pipeline = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    with zarr.config.set(pipeline), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = zarr.storage.FsspecStore.from_url(
            "reference://", storage_options=options, read_only=True
        )
        assert isinstance(from_zarr_store(store), ReferenceStore)
        group = zarr.open_group(store, mode="r")
        s3_proxy.log(reset=True)
        temp = group["temp"][...]
        gets = _chunk_gets(s3_proxy, "/files/data.h5")
        assert 0 < len(gets) < 12, len(gets)  # 12 chunks: merged
        np.testing.assert_array_equal(temp, h5py.File(h5_file, "r")["temp"][...])
        _check_all(group, h5_file, VARIABLES)
    # a file system Rust cannot take faithfully (options of Python's clients only) stays
    # served from Python
    odd = {**options, "remote_options": {**options["remote_options"], "config_kwargs": {}}}
    odd["remote_options"]["config_kwargs"] = {"read_timeout": 5}
    store = zarr.storage.FsspecStore.from_url("reference://", storage_options=odd, read_only=True)
    assert not isinstance(from_zarr_store(store), ReferenceStore)


def test_malformed_parquet_references_name_the_file(h5_file: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
    root = _parquet_refs(_kerchunk_refs(h5_file), tmp_path / "refs", record_size=3)
    bad = root / "temp" / "refs.1.parq"
    bad.write_bytes(b"not parquet")
    # records load when read: the other variables, and temp's other records, read
    group = zarrox.open_group(ReferenceStore(root), mode="r")
    _check_all(group, h5_file, ["big_endian", "grp/pres"])
    with h5py.File(h5_file, "r") as f:
        np.testing.assert_array_equal(group["temp"][:5, :], f["temp"][:5, :])
    with pytest.raises(ValueError, match=r"temp/refs\.1\.parq: not a Parquet file"):
        group["temp"][...]
    # a record short of rows
    table = pq.read_table(root / "temp" / "refs.0.parq")
    pq.write_table(table.slice(0, 2), root / "temp" / "refs.0.parq")
    with pytest.raises(ValueError, match=r"temp/refs\.0\.parq: 2 rows, the record needs 3"):
        zarrox.open_group(ReferenceStore(root), mode="r")["temp"][:5, :]
    (root / ".zmetadata").write_text('{"metadata": {}}')
    with pytest.raises(ValueError, match=r"\.zmetadata: not kerchunk Parquet"):
        ReferenceStore(root)
    (root / ".zmetadata").unlink()
    with pytest.raises(FileNotFoundError, match=r"\.zmetadata: not found"):
        ReferenceStore(root)
