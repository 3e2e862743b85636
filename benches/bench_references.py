"""Virtual datasets (issue 46): a multi-file netCDF4-like dataset on S3 read through kerchunk
references, zarrox's reference store against the fsspec path.

The files are HDF5 written by h5py (``t2m`` over time, lat, lon with dimension scales, gzip
and shuffle, chunks of one time step and a quarter of the grid), uploaded to moto on
127.0.0.1, reached through the project's latency proxy (``tests/servers.py``) adding
``--latency-ms`` (20) to every request. kerchunk's ``SingleHdf5ToZarr`` indexes each file and
``MultiZarrToZarr`` combines them along time; the references are uploaded as JSON and as
Parquet (``kerchunk.df.refs_to_dataframe``). Implementations:

* ``zarrox``: ``zarrox.open_group("reference://", storage_options=...)`` on the JSON;
* ``zarrox-parquet``: the same on the Parquet directory (needs pyarrow);
* ``zarr-fsspec``: zarr-python over fsspec's ``ReferenceFileSystem`` (s3fs for the files)
  through ``zarr.storage.FsspecStore``;
* ``zarr-fsspec-zarrox``: the same code under zarrox's codec pipeline (the drop-in backend),
  which reads the chunks through zarrox's reference store;
* ``xarray-h5netcdf``: xarray reading the original files with h5netcdf over s3fs (skipped,
  with the reason printed, when h5netcdf is not installed).

Operations, each timed from opening (references and metadata read) to the values in memory,
and checked against the values written: ``whole`` (the variable read whole) and ``series``
(the time series at one grid point). Within each repetition the implementations alternate
(order rotated). Requests are counted by the proxy.

    .venv/bin/python benches/bench_references.py [--files 8] [--steps 24] [--repeat 3]
        [--latency-ms 20] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: moto, the latency proxy)

LAT, LON = 90, 180
CHUNK = (1, LAT // 2, LON // 2)
POINT = (30, 100)
IMPLS = ("zarrox", "zarrox-parquet", "zarr-fsspec", "zarr-fsspec-zarrox", "xarray-h5netcdf")
OPS = ("whole", "series")


def write_file(path: Path, start: int, steps: int) -> np.ndarray:
    import h5py

    rng = np.random.default_rng(start)
    lat = np.linspace(-89, 89, LAT, dtype="<f4")
    lon = np.linspace(0, 358, LON, dtype="<f4")
    base = 280 + 20 * np.cos(np.deg2rad(lat))[:, None] + np.sin(np.deg2rad(lon))[None, :]
    data = (base[None] + rng.normal(0, 1, (steps, LAT, LON))).astype("<f4")
    with h5py.File(path, "w") as f:
        t = f.create_dataset("time", data=np.arange(start, start + steps, dtype="<f8"))
        t.make_scale("time")
        la = f.create_dataset("lat", data=lat)
        la.make_scale("lat")
        lo = f.create_dataset("lon", data=lon)
        lo.make_scale("lon")
        v = f.create_dataset("t2m", data=data, chunks=CHUNK, compression="gzip", shuffle=True)
        for i, scale in enumerate((t, la, lo)):
            v.dims[i].attach_scale(scale)
    return data


def make_refs(paths: list[Path], urls: list[str]) -> dict[str, Any]:
    from kerchunk.combine import MultiZarrToZarr
    from kerchunk.hdf import SingleHdf5ToZarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        singles = []
        for path in paths:
            with open(path, "rb") as f:
                singles.append(SingleHdf5ToZarr(f, str(path), inline_threshold=0).translate())
        # combined from the local files (MultiZarrToZarr reads the time values), then
        # pointed at their copies on S3
        combined: dict[str, Any] = MultiZarrToZarr(
            singles, concat_dims=["time"], identical_dims=["lat", "lon"]
        ).translate()
    to_url = dict(zip(map(str, paths), urls, strict=True))
    for key, value in combined["refs"].items():
        if isinstance(value, list) and value and value[0] in to_url:
            combined["refs"][key] = [to_url[value[0]], *value[1:]]
    assert not combined.get("templates"), combined.get("templates")
    return combined


def parquet_dir(refs: dict[str, Any], root: Path) -> Path | None:
    """``kerchunk.df.refs_to_dataframe(refs, root, record_size=100)``; where fastparquet (its
    engine) is not installed, the same steps with fsspec's pyarrow engine."""
    try:
        import pyarrow  # noqa: F401
        from kerchunk.df import refs_to_dataframe
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import fastparquet  # noqa: F401
        except ImportError:
            import fsspec
            from fsspec.implementations.reference import LazyReferenceMapper

            out = LazyReferenceMapper.create(
                root=str(root), fs=fsspec.filesystem("file"), record_size=100, engine="pyarrow"
            )
            for key in sorted(refs["refs"]):
                out[key] = refs["refs"][key]
            out.flush()
        else:
            refs_to_dataframe(refs, str(root), record_size=100)
    return root


def reader(impl: str, bucket: servers.S3Bucket, nfiles: int) -> Callable[[str], np.ndarray] | str:
    """``read(op)`` for ``impl``, or why it cannot run."""
    s3 = bucket.object_store_options()
    if impl in ("zarrox", "zarrox-parquet"):
        import zarrox

        fo = bucket.url("refs.json" if impl == "zarrox" else "refs.parq")

        def read_zarrox(op: str) -> np.ndarray:
            opts = {"fo": fo, "target_options": s3, "remote_protocol": "s3", "remote_options": s3}
            v = zarrox.open_group("reference://", storage_options=opts, mode="r")["t2m"]
            return v[...] if op == "whole" else v[:, POINT[0], POINT[1]]

        return read_zarrox
    if impl in ("zarr-fsspec", "zarr-fsspec-zarrox"):
        import contextlib

        import fsspec
        import zarr

        def pipeline() -> Any:
            # zarr.config.set applies when made: one per read
            if impl == "zarr-fsspec":
                return contextlib.nullcontext()
            return zarr.config.set({"codec_pipeline.path": "zarrox.ZarroxCodecPipeline"})

        def read_zarr(op: str) -> np.ndarray:
            s3fs_options = {**bucket.fsspec_options(), "asynchronous": True}
            fs = fsspec.filesystem(
                "reference",
                fo=bucket.url("refs.json"),
                target_protocol="s3",
                target_options=bucket.fsspec_options(),
                remote_protocol="s3",
                remote_options=s3fs_options,
                asynchronous=True,
                skip_instance_cache=True,
            )
            store = zarr.storage.FsspecStore(fs, read_only=True, path="")
            with pipeline():
                v = zarr.open_group(store, mode="r", zarr_format=2)["t2m"]
                return np.asarray(v[...] if op == "whole" else v[:, POINT[0], POINT[1]])

        return read_zarr
    try:
        import h5netcdf  # noqa: F401
        import s3fs
        import xarray as xr
    except ImportError as e:
        return f"not run: {e.name} is not installed"

    def read_xarray(op: str) -> np.ndarray:
        fs = s3fs.S3FileSystem(**bucket.fsspec_options())
        parts = []
        for i in range(nfiles):
            with fs.open(bucket.url(f"files/part{i}.nc"), "rb") as f:
                ds = xr.open_dataset(f, engine="h5netcdf", phony_dims="sort")
                v = ds["t2m"]
                parts.append(v.values if op == "whole" else v[:, POINT[0], POINT[1]].values)
                ds.close()
        return np.concatenate(parts)

    return read_xarray


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--steps", type=int, default=24, help="time steps per file")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--quick", action="store_true", help="2 files of 4 steps, 1 repetition")
    args = p.parse_args(argv)
    if args.quick:
        args.files, args.steps, args.repeat = 2, 4, 1
    impls = [i for i in args.impls.split(",") if i]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with servers.start_moto() as moto:
            plan = servers.FaultPlan(latency_ms=args.latency_ms)
            with servers.FaultProxy(moto.port, plan) as proxy:
                direct = servers.S3Bucket.create(moto.url)
                bucket = direct.via(proxy.url)
                paths = [tmp / f"part{i}.nc" for i in range(args.files)]
                data = np.concatenate(
                    [write_file(p, i * args.steps, args.steps) for i, p in enumerate(paths)]
                )
                urls = [direct.url(f"files/{p.name}") for p in paths]
                for path in paths:
                    direct.put(f"files/{path.name}", path.read_bytes())
                refs = make_refs(paths, urls)
                direct.put("refs.json", json.dumps(refs).encode())
                pq = parquet_dir(refs, tmp / "refs.parq")
                if pq is not None:
                    for f in sorted(pq.rglob("*")):
                        if f.is_file():
                            direct.put(f"refs.parq/{f.relative_to(pq).as_posix()}", f.read_bytes())
                nchunks = sum(1 for k in refs["refs"] if k.startswith("t2m/") and "/." not in k)
                expected = {"whole": data, "series": data[:, POINT[0], POINT[1]]}
                readers: dict[str, Callable[[str], np.ndarray]] = {}
                for impl in impls:
                    r = reader(impl, bucket, args.files)
                    if impl == "zarrox-parquet" and pq is None:
                        r = "not run: pyarrow is not installed"
                    if isinstance(r, str):
                        print(f"{impl}: {r}")
                    else:
                        readers[impl] = r
                times: dict[tuple[str, str], list[float]] = {}
                requests: dict[tuple[str, str], int] = {}
                names = list(readers)
                for rep in range(args.repeat):
                    order = names[rep % len(names) :] + names[: rep % len(names)]
                    for impl in order:
                        for op in OPS:
                            proxy.log(reset=True)
                            t0 = time.perf_counter()
                            try:
                                got = readers[impl](op)
                            except Exception as e:  # noqa: BLE001 - reported, counted
                                print(f"{impl} {op}: FAILED: {type(e).__name__}: {e}")
                                failed += 1
                                continue
                            times.setdefault((impl, op), []).append(time.perf_counter() - t0)
                            requests[(impl, op)] = len(proxy.log())
                            if not np.array_equal(got, expected[op]):
                                print(f"{impl} {op}: WRONG VALUES")
                                failed += 1
    shape = data.shape
    print(
        f"\n== {args.files} files, t2m {shape} float32 gzip+shuffle, chunks {CHUNK}:"
        f" {nchunks} chunks, {data.nbytes / 2**20:.1f} MiB; {args.latency_ms:g} ms per request;"
        f" median of {args.repeat} (open + read)"
    )
    print(f"{'op':<8} {'implementation':<20} {'seconds':>9} {'requests':>9} {'vs zarr-fsspec':>15}")
    for op in OPS:
        base = times.get(("zarr-fsspec", op))
        for impl in names:
            ts = times.get((impl, op))
            if not ts:
                continue
            med = statistics.median(ts)
            ratio = f"{statistics.median(base) / med:.2f}x" if base else "n/a"
            print(f"{op:<8} {impl:<20} {med:>9.3f} {requests[(impl, op)]:>9} {ratio:>15}")
    print(f"chunks of t2m: {nchunks} (series: {nchunks // 4} hold the point)")
    print(f"failed cases: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
