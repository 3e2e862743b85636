"""VirtualiZarr's references read by the engine (issue #46): netCDF4-style HDF5 files written
here by h5py (dimension scales, gzip+shuffle, fletcher32, zstd and blosc through hdf5plugin,
fill values, chunks never written), references made by VirtualiZarr (``open_virtual_dataset``
with its ``HDFParser``, ``ds.vz.to_kerchunk`` as JSON or Parquet, several files combined along
time), every variable read through zarrox compared with h5py's (and xarray's) reading of the
original files."""

from __future__ import annotations

import functools
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from zarrox.storage import ReferenceStore

# VirtualiZarr 2.5.1 imports zarr-python internals that 3.2 renamed (RegularChunkGrid): it
# installs beside zarr-python 3.4 but does not import
pytest.importorskip(
    "virtualizarr", reason="virtualizarr is not installed or does not import", exc_type=ImportError
)
h5py = pytest.importorskip("h5py", reason="h5py is not installed")
xr = pytest.importorskip("xarray", reason="xarray is not installed")

NT, NLAT, NLON = 4, 6, 5
#: the variables of each file's root group (VirtualiZarr's dataset of it)
VARIABLES = ["time", "lat", "lon", "t2m", "precip", "count", "flags", "wind", "zs", "bl"]
#: those over time (concatenated when files are combined)
ALONG_TIME = {"time", "t2m", "precip", "count", "wind", "zs", "bl"}


def _dims(name: str) -> list[str]:
    """The dimensions of variable ``name`` (its dimension scales)."""
    return {
        "time": ["time"],
        "lat": ["lat"],
        "lon": ["lon"],
        "flags": ["lat"],
        "count": ["time", "lat"],
        "zs": ["time", "lat"],
    }.get(name, ["time", "lat", "lon"])


def _write_nc(path: Path, start: int = 0) -> None:
    """A netCDF4-style HDF5 file of the time steps ``start .. start + NT - 1``: dimension
    scales time, lat, lon and variables over them (files with consecutive starts combine along
    time), and a group ``grp`` without dimension scales."""
    hdf5plugin = pytest.importorskip("hdf5plugin", reason="hdf5plugin is not installed")
    shape = (NT, NLAT, NLON)
    t2m = np.arange(NT * NLAT * NLON, dtype="<f4").reshape(shape) / 3 + start * 100
    t2m[0, 0, :] = -9999.0  # the fill value, masked by xarray
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "made by h5py"
        time = f.create_dataset("time", data=np.arange(start, start + NT, dtype="<f8"))
        time.attrs["units"] = "days since 2000-01-01"
        time.attrs["calendar"] = "standard"
        lat = f.create_dataset("lat", data=np.linspace(-10, 10, NLAT, dtype="<f4"))
        lon = f.create_dataset("lon", data=np.arange(NLON, dtype=">i4") * 30)  # big-endian
        scales = {"time": time, "lat": lat, "lon": lon}
        for name, scale in scales.items():
            scale.make_scale(name)
        variables = {
            "t2m": f.create_dataset(
                "t2m",
                data=t2m,
                chunks=(1, 3, 5),
                compression="gzip",
                shuffle=True,
                fillvalue=-9999.0,
            ),
            "precip": f.create_dataset(
                "precip",
                data=(np.arange(t2m.size).reshape(shape) - 50 + start).astype(">i2"),
                chunks=(2, 6, 5),
                compression="gzip",
                compression_opts=9,
            ),
            # partial chunks along lat and lon (VirtualiZarr concatenates whole chunks along
            # time only), checksummed
            "wind": f.create_dataset(
                "wind",
                data=np.sin(np.arange(t2m.size) + start).reshape(shape),
                chunks=(2, 4, 2),
                fletcher32=True,
                shuffle=True,
            ),
            # compressible: HDF5 stores a chunk its optional filters do not shrink unfiltered
            # (its filter mask says so), which VirtualiZarr's references do not record
            "bl": f.create_dataset(
                "bl",
                data=np.repeat(np.arange(NT * NLAT, dtype="<f4") + start, NLON).reshape(shape),
                chunks=(2, 4, 5),
                **hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE),
            ),
            "zs": f.create_dataset(
                "zs",
                data=np.arange(NT * NLAT, dtype="<i4").reshape(NT, NLAT) * (start + 1),
                chunks=(2, 4),
                **hdf5plugin.Zstd(clevel=5),
            ),
            # partly written: the chunks never written are not stored (the fill value)
            "count": f.create_dataset(
                "count", shape=(NT, NLAT), dtype="<i8", chunks=(1, NLAT), fillvalue=3
            ),
            # contiguous: one chunk
            "flags": f.create_dataset("flags", data=np.arange(NLAT, dtype="u1") + 10),
        }
        variables["count"][:2] = np.arange(2 * NLAT).reshape(2, NLAT) + start
        variables["t2m"].attrs["units"] = "K"
        variables["t2m"].attrs["_FillValue"] = np.float32(-9999.0)
        variables["precip"].attrs["scale_factor"] = np.float32(0.5)
        variables["precip"].attrs["add_offset"] = np.float32(1.0)
        for name, var in variables.items():
            for axis, dim in enumerate(_dims(name)):
                var.dims[axis].attach_scale(scales[dim])
            if var.chunks is not None:
                masks = [
                    var.id.get_chunk_info(i).filter_mask for i in range(var.id.get_num_chunks())
                ]
                assert masks and not any(masks), (var.name, masks)
        grp = f.create_group("grp")
        grp.attrs["source"] = "sub"
        pres = grp.create_dataset(
            "pres", data=np.linspace(0, 1, 80).reshape(10, 8), chunks=(4, 4), compression="gzip"
        )
        pres.attrs["units"] = "hPa"


@pytest.fixture(scope="module")
def nc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vz") / "data.nc"
    _write_nc(path)
    return path


@pytest.fixture(scope="module")
def nc_parts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("vz-parts")
    paths = [root / f"part{i}.nc" for i in range(3)]
    for i, path in enumerate(paths):
        _write_nc(path, start=NT * i)
    return paths


def _registry() -> Any:
    """Local files for VirtualiZarr's parsers (``file://`` URLs)."""
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore

    return ObjectStoreRegistry({"file://": LocalStore()})


def _virtual(path: Path, **parser_options: Any) -> Any:
    """VirtualiZarr's virtual dataset of one HDF5 file (its coordinates loaded, the rest
    chunk references)."""
    from virtualizarr import open_virtual_dataset
    from virtualizarr.parsers import HDFParser

    with warnings.catch_warnings():
        # zarr-python: "Numcodecs codecs are not in the Zarr version 3 specification"
        warnings.simplefilter("ignore")
        return open_virtual_dataset(
            path.as_uri(), registry=_registry(), parser=HDFParser(**parser_options)
        )


def _combined(paths: list[Path], how: str) -> Any:
    """VirtualiZarr's virtual datasets of ``paths`` combined along time."""
    options = dict(
        data_vars="minimal", coords="minimal", compat="override", combine_attrs="override"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "concat":
            return xr.concat([_virtual(p) for p in paths], dim="time", **options)
        from virtualizarr import open_virtual_mfdataset
        from virtualizarr.parsers import HDFParser

        return open_virtual_mfdataset(
            [p.as_uri() for p in paths],
            registry=_registry(),
            parser=HDFParser(),
            combine="nested",
            concat_dim="time",
            **options,
        )


def _to_json(vds: Any, path: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vds.vz.to_kerchunk(str(path), format="json")
    return path


def _to_parquet(
    vds: Any, directory: Path, monkeypatch: pytest.MonkeyPatch, record_size: int
) -> Path:
    """``ds.vz.to_kerchunk(directory, format="parquet")`` (kerchunk.df's writer, fsspec's
    ``LazyReferenceMapper``); where fastparquet (its default engine) is not installed, the
    mapper made with fsspec's pyarrow engine."""
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    pytest.importorskip("kerchunk.df", reason="kerchunk (VirtualiZarr's Parquet writer)")
    try:
        import fastparquet  # noqa: F401
    except ImportError:
        from fsspec.implementations.reference import LazyReferenceMapper

        create = functools.partial(LazyReferenceMapper.create, engine="pyarrow")
        monkeypatch.setattr(LazyReferenceMapper, "create", staticmethod(create))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vds.vz.to_kerchunk(str(directory), format="parquet", record_size=record_size)
    return directory


def _expected(paths: list[Path], name: str) -> np.ndarray:
    """h5py's reading of variable ``name``: concatenated along time over ``paths``."""
    import hdf5plugin  # noqa: F401  (h5py's zstd and blosc filters)

    parts = []
    for path in paths:
        with h5py.File(path, "r") as f:
            parts.append(f[name][...])
    return np.concatenate(parts) if name in ALONG_TIME else parts[0]


def _check_all(group: Any, paths: list[Path], names: list[str]) -> None:
    for name in names:
        expected = _expected(paths, name)
        got = group[name][...]
        assert got.dtype == expected.dtype.newbyteorder("="), name
        np.testing.assert_array_equal(got, expected, err_msg=name)
        # a part across chunk borders
        sel = tuple(slice(1, max(2, n - 1)) for n in expected.shape)
        np.testing.assert_array_equal(group[name][sel], expected[sel], err_msg=name)


def _check_attrs(group: Any) -> None:
    assert group.attrs["title"] == "made by h5py"
    assert group["t2m"].attrs["units"] == "K"
    assert group["time"].attrs["units"] == "days since 2000-01-01"
    assert group["precip"].attrs["scale_factor"] == 0.5
    assert group["precip"].attrs["add_offset"] == 1.0
    for name in VARIABLES:
        dims = _dims(name)
        assert group[name].attrs["_ARRAY_DIMENSIONS"] == dims, name


def _chunk_urls(refs: dict[str, Any]) -> set[str]:
    return {v[0] for v in refs["refs"].values() if isinstance(v, list)}


def test_json_references_read_as_h5py_reads_the_file(nc_file: Path, tmp_path: Path) -> None:
    vds = _virtual(nc_file)
    json_path = _to_json(vds, tmp_path / "refs.json")
    refs = json.loads(json_path.read_text())
    assert refs["version"] == 1
    assert _chunk_urls(refs) == {str(nc_file)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        as_dict = vds.vz.to_kerchunk(format="dict")
    for group in (
        zarrox.open_group("reference://", storage_options={"fo": str(json_path)}, mode="r"),
        zarrox.open_group(str(json_path), mode="r"),
        zarrox.open_group(as_dict, mode="r"),
    ):
        assert sorted(group.keys()) == sorted(VARIABLES)
        _check_all(group, [nc_file], VARIABLES)
        _check_attrs(group)
        # the chunks of "count" never written read as the fill value
        assert (group["count"][2:] == 3).all()
    array = zarrox.open_array(str(json_path), path="t2m", mode="r")
    np.testing.assert_array_equal(array[:, 2, 1:4], _expected([nc_file], "t2m")[:, 2, 1:4])


def test_xarray_reads_the_references_as_the_file(nc_file: Path, tmp_path: Path) -> None:
    json_path = _to_json(_virtual(nc_file), tmp_path / "refs.json")
    raw = xr.open_dataset(
        "reference://",
        engine="zarrox",
        storage_options={"fo": str(json_path)},
        mask_and_scale=False,
        consolidated=False,
    )
    assert sorted(raw.variables) == sorted(VARIABLES)
    assert raw.attrs["title"] == "made by h5py"
    for name in VARIABLES:
        assert list(raw[name].dims) == _dims(name), name
        if name != "time":
            np.testing.assert_array_equal(raw[name].values, _expected([nc_file], name), name)
    days = _expected([nc_file], "time").astype("timedelta64[D]")
    np.testing.assert_array_equal(raw["time"].values, np.datetime64("2000-01-01", "ns") + days)
    decoded = xr.open_dataset(json_path, engine="zarrox", consolidated=False)
    t2m = _expected([nc_file], "t2m")
    assert (t2m == -9999).sum() == NLON
    np.testing.assert_array_equal(decoded["t2m"].values, np.where(t2m == -9999, np.nan, t2m))
    assert decoded["t2m"].attrs["units"] == "K"
    np.testing.assert_array_equal(decoded["time"].values, raw["time"].values)


def test_netcdf4_file_written_by_xarray(tmp_path: Path) -> None:
    """A netCDF4 file written by xarray (h5netcdf): the references opened by xarray through
    zarrox give the dataset xarray reads from the file, values, attributes and encodings."""
    pytest.importorskip("h5netcdf", reason="h5netcdf is not installed")
    pd = pytest.importorskip("pandas")
    shape = (NT, NLAT, NLON)
    t2m = np.arange(NT * NLAT * NLON, dtype="f4").reshape(shape) / 3
    t2m[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {
            "t2m": (("time", "lat", "lon"), t2m, {"units": "K", "long_name": "temperature"}),
            "q": (("time", "lat"), (np.arange(NT * NLAT).reshape(NT, NLAT) - 7).astype("i2")),
            "n": (("lat",), np.arange(NLAT, dtype="u1")),
        },
        coords={
            "time": pd.date_range("2001-01-01", periods=NT),
            "lat": np.linspace(-5, 5, NLAT),
            "lon": np.arange(NLON, dtype="i4"),
        },
        attrs={"title": "made by xarray", "history": "test"},
    )
    path = tmp_path / "xr.nc"
    ds.to_netcdf(
        path,
        engine="h5netcdf",
        unlimited_dims=["time"],
        encoding={
            "t2m": {"zlib": True, "shuffle": True, "chunksizes": (1, 3, 5), "_FillValue": -9999.0},
            "q": {"zlib": True, "complevel": 9, "chunksizes": (2, 6), "_FillValue": -32767},
            "n": {"_FillValue": 255},
        },
    )
    json_path = _to_json(_virtual(path), tmp_path / "refs.json")
    expected = xr.open_dataset(path, engine="h5netcdf")
    got = xr.open_dataset(
        "reference://", engine="zarrox", storage_options={"fo": str(json_path)}, consolidated=False
    )
    xr.testing.assert_identical(got.load(), expected.load())
    assert np.isnan(got["t2m"].values[0, 0, 0])
    np.testing.assert_array_equal(got["t2m"].values, ds["t2m"].values)
    for name in ("q", "n"):
        assert got[name].encoding["dtype"] == ds[name].dtype, name


def test_parquet_references_read_as_h5py_reads_the_file(
    nc_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _to_parquet(_virtual(nc_file), tmp_path / "refs.parq", monkeypatch, record_size=3)
    # 8 chunks of t2m in records of 3: several record files
    assert len(list((root / "t2m").glob("refs.*.parq"))) == 3
    for group in (
        zarrox.open_group("reference://", storage_options={"fo": str(root)}, mode="r"),
        zarrox.open_group(ReferenceStore(root), mode="r"),
    ):
        assert sorted(group.keys()) == sorted(VARIABLES)
        _check_all(group, [nc_file], VARIABLES)
        _check_attrs(group)
        assert (group["count"][2:] == 3).all()


@pytest.mark.parametrize(
    ("how", "fmt"), [("concat", "json"), ("mfdataset", "json"), ("concat", "parquet")]
)
def test_files_combined_along_time(
    nc_parts: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, fmt: str
) -> None:
    combined = _combined(nc_parts, how)
    assert combined.sizes["time"] == 3 * NT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _chunk_urls(combined.vz.to_kerchunk(format="dict")) == {str(p) for p in nc_parts}
    if fmt == "json":
        refs = _to_json(combined, tmp_path / "combined.json")
    else:
        refs = _to_parquet(combined, tmp_path / "combined.parq", monkeypatch, record_size=5)
    group = zarrox.open_group("reference://", storage_options={"fo": str(refs)}, mode="r")
    assert sorted(group.keys()) == sorted(VARIABLES)
    _check_all(group, nc_parts, VARIABLES)
    _check_attrs(group)
    # a time series at one point, across the three files
    np.testing.assert_array_equal(group["t2m"][:, 2, 3], _expected(nc_parts, "t2m")[:, 2, 3])
    # each file's chunks of "count" never written: the fill value
    count = group["count"][...]
    for i in range(3):
        assert (count[i * NT + 2 : (i + 1) * NT] == 3).all()
        assert (count[i * NT : i * NT + 2] != 3).any()
    ds = xr.open_dataset(
        "reference://",
        engine="zarrox",
        storage_options={"fo": str(refs)},
        mask_and_scale=False,
        consolidated=False,
    )
    days = _expected(nc_parts, "time").astype("timedelta64[D]")
    np.testing.assert_array_equal(ds["time"].values, np.datetime64("2000-01-01", "ns") + days)
    np.testing.assert_array_equal(ds["wind"].values, _expected(nc_parts, "wind"))


def test_subgroup_references(nc_file: Path) -> None:
    """``HDFParser(group=...)``: one group of the file (no dimension scales: phony dims)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refs = _virtual(nc_file, group="grp").vz.to_kerchunk(format="dict")
    group = zarrox.open_group(refs, mode="r")
    assert list(group.keys()) == ["pres"]
    with h5py.File(nc_file, "r") as f:
        expected = f["grp/pres"][...]
    np.testing.assert_array_equal(group["pres"][...], expected)
    np.testing.assert_array_equal(group["pres"][3:9, 1:6], expected[3:9, 1:6])
    assert group.attrs["source"] == "sub"
    assert group["pres"].attrs["units"] == "hPa"


def test_renamed_paths_over_http(
    nc_file: Path, http_server: Any, http_root: Path, tmp_path: Path
) -> None:
    """``ds.vz.rename_paths``: the references moved to the file's copy on a web server."""
    shutil.copy(nc_file, http_root / "vz-data.nc")
    url = f"{http_server.url}/vz-data.nc"
    # the chunks never written have the path "": renamed too, they would become references
    # [url, 0, 0] (zero bytes, not the fill value; zarr-python fails on them as well)
    moved = _virtual(nc_file).vz.rename_paths(lambda old: url if old else old)
    json_path = _to_json(moved, tmp_path / "refs.json")
    assert _chunk_urls(json.loads(json_path.read_text())) == {url}
    group = zarrox.open_group(str(json_path), mode="r")
    _check_all(group, [nc_file], VARIABLES)
