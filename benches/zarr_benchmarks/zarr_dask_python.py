#!/usr/bin/env python3
"""dask over zarr-python arrays, as the suite's zarr_dask_python scripts: ``da.from_zarr``
with the shard (chunk) shape as dask's chunks; read all with ``compute()``; chunk by chunk,
one delayed task per block that takes the block and keeps nothing, on the threaded
scheduler with N workers (N = 0: dask's default scheduler); the round trip ``da.to_zarr``.
``async.concurrency`` is unlimited, as there. The zarrs and zarrox dask scripts reuse these
calls."""

from __future__ import annotations

from typing import Any

import dask.array as da
import zarr
from _dask import block_shape, read_chunks
from _suite import Library, run
from zarr_python import chunk_shape, open_array


def open_dask(path: str) -> Any:
    z = open_array(path)
    return da.from_zarr(z, chunks=chunk_shape(z))


def roundtrip(path: str, output: str) -> None:
    """``da.to_zarr`` into an array of the source's layout and codecs, created first (the
    suite's script lets ``to_zarr`` create it with zarr-python's default codecs, which do not
    shard; here every copy keeps the source's layout)."""
    z = open_array(path)
    out = zarr.create(
        store=zarr.storage.LocalStore(output),
        mode="w",
        shape=z.shape,
        chunks=chunk_shape(z),
        dtype=z.dtype,
        codecs=z.metadata.codecs,
        fill_value=z.fill_value,
    )
    da.to_zarr(da.from_zarr(z, chunks=chunk_shape(z)), out)


LIBRARY = Library(
    open=open_dask,
    shape=lambda arr: arr.shape,
    chunk_shape=block_shape,
    read_all=lambda arr: arr.compute(),
    read_chunks=read_chunks,
    roundtrip=roundtrip,
)

if __name__ == "__main__":
    zarr.config.set({"async.concurrency": None})
    run(LIBRARY)
