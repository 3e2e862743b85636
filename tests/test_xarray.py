"""engine="zarrox" and zarrox.xarray.to_zarr against xarray's own zarr engine (zarr-python) on
the same stores: the same datasets (values, dims, coords, attributes, CF decoding), the same
encodings, lazy indexing of every kind, and, for writes, the same bytes in the store."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
zx = pytest.importorskip("zarrox.xarray")


def make_dataset() -> Any:
    """A small dataset with what CF decoding touches: NaN, packed integers with scale_factor
    and _FillValue, times and time deltas, strings of both kinds, booleans, a scalar, a
    dimension without coordinate, attributes on everything."""
    rng = np.random.default_rng(0)
    time = pd.date_range("2020-01-01", periods=24, freq="6h")
    lat = np.linspace(-30, 30, 13)
    lon = np.linspace(0, 90, 16)
    air = (280 + 10 * rng.random((24, 13, 16))).astype("f4")
    air[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {
            "air": (("time", "lat", "lon"), air, {"units": "K", "long_name": "air temperature"}),
            "precip": (("time", "lat", "lon"), rng.random((24, 13, 16)) * 5),
            "station": (("lat",), np.array([f"s{i}" for i in range(13)])),
            "label": (
                ("lat",),
                np.array([f"label-{i}" * (i % 3) for i in range(13)], dtype=object),
            ),
            "flag": (("time",), rng.integers(0, 3, 24).astype("i2")),
            "valid": (("time",), rng.random(24) > 0.5),
            "lag": (("time",), pd.to_timedelta(np.arange(24), unit="h")),
            "member": (("ens",), np.arange(3, dtype="u1")),
            "scalar": ((), 3.5, {"note": "0-d"}),
        },
        coords={
            "time": time,
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": lon,
            "height": ((), 2.0, {"units": "m"}),
        },
        attrs={"title": "synthetic", "history": "made by the tests", "version": 3},
    )
    ds["precip"].encoding = {"scale_factor": 0.01, "dtype": "i2", "_FillValue": -9999}
    ds["air"].encoding = {"chunks": (6, 13, 8)}
    return ds


def _codec_json(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return [_codec_json(v) for v in value]
    if hasattr(value, "to_dict"):
        return json.loads(json.dumps(value.to_dict(), default=str))
    return value.get_config()


def _encodings(ds: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for name, var in ds.variables.items():
        enc = dict(var.encoding)
        enc.pop("source", None)
        for key in ("compressors", "filters", "serializer"):
            if key in enc:
                enc[key] = _codec_json(enc[key])
        out[name] = {k: _comparable(v) for k, v in enc.items()}
    return out


def _comparable(value: Any) -> Any:
    if isinstance(value, float | np.floating) and np.isnan(value):
        return "NaN"  # equal to itself
    if isinstance(value, np.dtype) and value.kind in "biufcmM":
        return ("dtype", value.kind, value.itemsize)  # '<f4' and 'float32' alike
    return value


def _quiet() -> Any:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, bool], Path]:
    """The dataset written by xarray's zarr engine (zarr-python), in both formats, with and
    without consolidated metadata."""
    root = tmp_path_factory.mktemp("xr")
    ds = make_dataset()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fmt in (2, 3):
            for consolidated in (True, False):
                path = root / f"v{fmt}-{'c' if consolidated else 'n'}.zarr"
                ds.to_zarr(path, zarr_format=fmt, mode="w", consolidated=consolidated)
                out[fmt, consolidated] = path
    return out


def _open_both(path: Path, **kwargs: Any) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = xr.open_dataset(path, engine="zarr", **kwargs)
        ours = xr.open_dataset(path, engine="zarrox", **kwargs)
    return theirs, ours


def test_the_engine_is_registered() -> None:
    assert "zarrox" in xr.backends.list_engines()
    assert isinstance(xr.backends.list_engines()["zarrox"], zx.ZarroxBackendEntrypoint)


@pytest.mark.parametrize("consolidated", [True, False])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"decode_times": False}, {"mask_and_scale": False}, {"decode_cf": False}],
    ids=["decoded", "raw-times", "raw-values", "undecoded"],
)
def test_open_dataset_matches_zarr_engine(
    stores: dict[tuple[int, bool], Path], fmt: int, consolidated: bool, kwargs: dict[str, Any]
) -> None:
    theirs, ours = _open_both(stores[fmt, consolidated], consolidated=consolidated, **kwargs)
    xr.testing.assert_identical(ours, theirs)
    assert _encodings(ours) == _encodings(theirs)
    for name in ours.variables:
        assert ours[name].dtype == theirs[name].dtype, name


@pytest.mark.parametrize("fmt", [2, 3])
def test_open_dataset_with_dask_chunks(stores: dict[tuple[int, bool], Path], fmt: int) -> None:
    pytest.importorskip("dask")
    theirs, ours = _open_both(stores[fmt, True], chunks={})
    assert ours.air.chunks == theirs.air.chunks == ((6, 6, 6, 6), (13,), (8, 8))
    xr.testing.assert_identical(ours.compute(), theirs.compute())
    theirs, ours = _open_both(stores[fmt, True], chunks={"time": 5})
    assert ours.air.chunks == theirs.air.chunks
    xr.testing.assert_identical(ours.mean("time").compute(), theirs.mean("time").compute())


@pytest.mark.parametrize("fmt", [2, 3])
def test_arrays_stay_lazy_and_index_every_way(
    stores: dict[tuple[int, bool], Path], fmt: int
) -> None:
    theirs, ours = _open_both(stores[fmt, True])
    data = ours.air.variable._data
    assert not isinstance(data, np.ndarray)  # nothing read yet
    for _ in range(5):  # below xarray's caching and copy-on-write layers
        data = data.array
        if isinstance(data, zx.ZarroxArrayWrapper):
            break
    assert isinstance(data, zx.ZarroxArrayWrapper)
    selections = [
        {"time": 3},  # basic
        {"time": slice(2, 20, 3), "lon": slice(None, None, 2)},  # basic, strided
        {"lat": [0, 4, 5, 12], "lon": [1, 3]},  # outer
        {"time": np.array([True, False] * 12)},  # outer by mask
        {  # vectorized
            "lat": xr.DataArray([1, 2, 7], dims="pts"),
            "lon": xr.DataArray([0, 15, 3], dims="pts"),
        },
        {  # vectorized, broadcast to 2-d
            "time": xr.DataArray([[0, 1], [5, 7]], dims=("a", "b")),
            "lon": xr.DataArray([[2, 2], [3, 4]], dims=("a", "b")),
        },
    ]
    for sel in selections:
        for name in ("air", "precip", "valid", "label"):
            got = ours[name].isel({k: v for k, v in sel.items() if k in ours[name].dims})
            want = theirs[name].isel({k: v for k, v in sel.items() if k in theirs[name].dims})
            xr.testing.assert_identical(got.load(), want.load())


def test_async_loading(stores: dict[tuple[int, bool], Path]) -> None:
    theirs, ours = _open_both(stores[3, True])
    if not hasattr(ours, "load_async"):
        pytest.skip("this xarray has no load_async")
    loaded = asyncio.run(ours.isel(lat=[1, 5], lon=slice(2, 9)).load_async())
    xr.testing.assert_identical(loaded, theirs.isel(lat=[1, 5], lon=slice(2, 9)).load())
    vec = ours.air.isel(lat=xr.DataArray([1, 2], dims="p"), lon=xr.DataArray([3, 4], dims="p"))
    got = asyncio.run(vec.load_async())
    want = theirs.air.isel(lat=xr.DataArray([1, 2], dims="p"), lon=xr.DataArray([3, 4], dims="p"))
    xr.testing.assert_identical(got, want.load())


def _stored(root: Path) -> dict[str, Any]:
    """Every file below ``root``: metadata documents parsed, chunks as bytes."""
    out: dict[str, Any] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(root))
            is_meta = p.name in ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")
            out[rel] = json.loads(p.read_text()) if is_meta else p.read_bytes()
    return out


@pytest.mark.parametrize("consolidated", [True, False, None])
@pytest.mark.parametrize("fmt", [2, 3])
def test_to_zarr_writes_what_the_zarr_engine_writes(
    tmp_path: Path, fmt: int, consolidated: bool | None
) -> None:
    ds = make_dataset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "theirs.zarr", zarr_format=fmt, consolidated=consolidated)
        result = zx.to_zarr(ds, tmp_path / "ours.zarr", zarr_format=fmt, consolidated=consolidated)
    assert isinstance(result, zx.ZarroxStore)
    assert _stored(tmp_path / "ours.zarr") == _stored(tmp_path / "theirs.zarr")
    theirs, ours = _open_both(tmp_path / "ours.zarr")
    xr.testing.assert_identical(ours, theirs)
    xr.testing.assert_identical(ours.drop_vars("precip"), ds.drop_vars("precip"))
    xr.testing.assert_allclose(ours.precip, ds.precip, atol=0.005)  # packed: scale_factor 0.01


@pytest.mark.parametrize("fmt", [2, 3])
def test_round_trips_between_the_engines(
    stores: dict[tuple[int, bool], Path], tmp_path: Path, fmt: int
) -> None:
    """Encodings read by one engine are written by the other as they were."""
    theirs, ours = _open_both(stores[fmt, True])
    if fmt == 2:
        # zarr-python 3.1 writes a StringDType variable with a vlen-utf8 filter as a '<U16'
        # array it cannot open again (with either engine's encodings): leave it out
        theirs, ours = theirs.drop_vars("label"), ours.drop_vars("label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.to_zarr(tmp_path / "a.zarr", zarr_format=fmt)  # zarrox encodings, zarr-python writes
        zx.to_zarr(theirs, tmp_path / "b.zarr", zarr_format=fmt)  # zarr-python's, zarrox writes
    # (both re-encode the times with the units their decoding kept, not as first written)
    assert _stored(tmp_path / "a.zarr") == _stored(tmp_path / "b.zarr")


@pytest.mark.parametrize("fmt", [2, 3])
def test_dask_datasets_and_delayed_writes(tmp_path: Path, fmt: int) -> None:
    pytest.importorskip("dask")
    ds = make_dataset().chunk({"time": 6, "lat": 13, "lon": 8})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "theirs.zarr", zarr_format=fmt)
        delayed = zx.to_zarr(ds, tmp_path / "ours.zarr", zarr_format=fmt, compute=False)
        assert not zarrox.open_array(tmp_path / "ours.zarr", path="air").nchunks_initialized
        delayed.compute()
    assert _stored(tmp_path / "ours.zarr") == _stored(tmp_path / "theirs.zarr")
    # dask chunks that split a Zarr chunk: the same error as xarray's engine
    bad = make_dataset().chunk({"time": 5})
    with pytest.raises(ValueError, match="chunk"):
        zx.to_zarr(bad, tmp_path / "bad.zarr", zarr_format=fmt)


@pytest.mark.parametrize("fmt", [2, 3])
def test_append_and_region_writes(tmp_path: Path, fmt: int) -> None:
    ds = make_dataset()
    first, second = ds.isel(time=slice(0, 12)), ds.isel(time=slice(12, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first.to_zarr(tmp_path / "theirs.zarr", zarr_format=fmt)
        second.to_zarr(tmp_path / "theirs.zarr", append_dim="time")
        zx.to_zarr(first, tmp_path / "ours.zarr", zarr_format=fmt)
        zx.to_zarr(second, tmp_path / "ours.zarr", append_dim="time")
    assert _stored(tmp_path / "ours.zarr") == _stored(tmp_path / "theirs.zarr")
    theirs, ours = _open_both(tmp_path / "ours.zarr")
    xr.testing.assert_identical(ours, theirs)
    xr.testing.assert_identical(ours.air.drop_encoding(), ds.air.drop_encoding())
    # a region: new values for 6 time steps of the time-dependent variables
    update = (ds.isel(time=slice(6, 12))[["air", "precip"]] * 0 + 1).drop_vars(
        ["lat", "lon", "height", "time"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        update.to_zarr(tmp_path / "theirs.zarr", region={"time": slice(6, 12)})
        zx.to_zarr(update, tmp_path / "ours.zarr", region={"time": slice(6, 12)})
    assert _stored(tmp_path / "ours.zarr") == _stored(tmp_path / "theirs.zarr")
    _, ours = _open_both(tmp_path / "ours.zarr")
    assert (ours.air.isel(time=slice(6, 12)) == 1).all()
    # writing a variable that is not there in mode r+: xarray's error
    with pytest.raises(ValueError, match="non-pre-existing"):
        zx.to_zarr(ds[["air"]].rename(air="new"), tmp_path / "ours.zarr", mode="r+")
    with pytest.raises(zarrox.errors.ContainsGroupError):
        zx.to_zarr(ds, tmp_path / "ours.zarr", mode="w-")


def test_groups_and_datatrees(tmp_path: Path) -> None:
    ds = make_dataset()
    small = ds[["flag", "valid"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zx.to_zarr(ds, tmp_path / "t.zarr", group="model/run1", consolidated=False)
        zx.to_zarr(small, tmp_path / "t.zarr", group="model", mode="a", consolidated=False)
        zarrox.consolidate_metadata(tmp_path / "t.zarr")
    for group in ("model", "model/run1", "/model/run1"):
        theirs, ours = _open_both(tmp_path / "t.zarr", group=group)
        xr.testing.assert_identical(ours, theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = xr.open_datatree(tmp_path / "t.zarr", engine="zarr")
        got = xr.open_datatree(tmp_path / "t.zarr", engine="zarrox")
        sub = xr.open_datatree(tmp_path / "t.zarr", engine="zarrox", group="model")
    xr.testing.assert_identical(got, want)
    assert sorted(got.groups) == ["/", "/model", "/model/run1"]
    xr.testing.assert_identical(sub["run1"].to_dataset(), want["model/run1"].to_dataset())
    # a zarrox group or store as the source
    group = zarrox.open_group(tmp_path / "t.zarr", path="model/run1", mode="r")
    xr.testing.assert_identical(xr.open_dataset(group, engine="zarrox"), theirs)
    via_store = xr.open_dataset(zarrox.LocalStore(tmp_path / "t.zarr"), group="model/run1")
    xr.testing.assert_identical(via_store, theirs)  # guessed: a zarrox store is zarrox's


def test_open_zarr(stores: dict[tuple[int, bool], Path]) -> None:
    pytest.importorskip("dask")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = xr.open_zarr(stores[3, True])
        got = zx.open_zarr(stores[3, True])
    assert got.air.chunks == want.air.chunks
    xr.testing.assert_identical(got, want)
    assert zx.open_zarr(stores[2, True], chunks=None).air.chunks is None


def test_consolidated_metadata_choices(stores: dict[tuple[int, bool], Path]) -> None:
    for engine in ("zarr", "zarrox"):
        with pytest.warns(RuntimeWarning, match="consolidated"):
            xr.open_dataset(stores[3, False], engine=engine)
        with pytest.raises(ValueError), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            xr.open_dataset(stores[3, False], engine=engine, consolidated=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        xr.open_dataset(stores[3, False], engine="zarrox", consolidated=False)
        xr.open_dataset(stores[3, True], engine="zarrox")


def test_missing_dimension_names_is_xarrays_key_error(tmp_path: Path) -> None:
    g = zarrox.open_group(tmp_path / "s.zarr", mode="w", zarr_format=2)
    g.create_array("x", shape=(3,), dtype="i4")
    for engine in ("zarr", "zarrox"):
        with pytest.raises(KeyError, match="_ARRAY_DIMENSIONS"):
            xr.open_dataset(tmp_path / "s.zarr", engine=engine, consolidated=False)
    with pytest.raises(FileNotFoundError):
        xr.open_dataset(tmp_path / "missing.zarr", engine="zarrox")


def test_a_converted_v2_store_opens_as_the_same_dataset(tmp_path: Path) -> None:
    """zarrox.convert turns xarray's _ARRAY_DIMENSIONS into dimension_names, where xarray
    reads dimensions in v3."""
    ds = make_dataset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "v2.zarr", zarr_format=2)
        zarrox.convert(tmp_path / "v2.zarr", tmp_path / "v3.zarr")
        before = xr.open_dataset(tmp_path / "v2.zarr", engine="zarr")
        for engine in ("zarr", "zarrox"):
            after = xr.open_dataset(tmp_path / "v3.zarr", engine=engine, consolidated=False)
            xr.testing.assert_identical(after, before)
    air = zarrox.open_array(tmp_path / "v3.zarr", path="air")
    assert air.dimension_names == ("time", "lat", "lon")
    assert "_ARRAY_DIMENSIONS" not in air.attrs and air.attrs["units"] == "K"
