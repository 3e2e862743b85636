#!/usr/bin/env python3
"""dask over zarrox arrays (``zarrox.dask.from_zarr`` / ``to_zarr``), on dask's threaded
scheduler, doing what the suite's dask scripts do: blocks of the shard (chunk) shape, read
all with ``compute()``, chunk by chunk one delayed task per block, the round trip into an
array of the source's layout and codecs; the chunk loop is _dask.py's, as for zarr-python's
dask scripts."""

from __future__ import annotations

from typing import Any

from _dask import block_shape, read_chunks
from _suite import Library, run

import zarrox
import zarrox.dask


def _chunk_shape(z: zarrox.Array) -> tuple[int, ...]:
    return tuple(z.shards or z.chunks)


def open_dask(path: str) -> Any:
    z = zarrox.open_array(path, mode="r")
    return zarrox.dask.from_zarr(z, chunks=_chunk_shape(z))


def roundtrip(path: str, output: str) -> None:
    z = zarrox.open_array(path, mode="r")
    out = zarrox.from_array(output, data=z, write_data=False, overwrite=True)
    zarrox.dask.to_zarr(zarrox.dask.from_zarr(z, chunks=_chunk_shape(z)), out)


if __name__ == "__main__":
    import dask

    dask.config.set(scheduler="threads")
    run(
        Library(
            open=open_dask,
            shape=lambda arr: arr.shape,
            chunk_shape=block_shape,
            read_all=lambda arr: arr.compute(),
            read_chunks=read_chunks,
            roundtrip=roundtrip,
        )
    )
