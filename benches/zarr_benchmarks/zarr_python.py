#!/usr/bin/env python3
"""zarr-python with its own codec pipeline, configured as the suite's zarr_python scripts
(``async.concurrency`` 10). The other zarr-python scripts (zarrs', zarrox's pipeline) import
the calls from here and set their pipeline first."""

from __future__ import annotations

from typing import Any

import zarr
from _suite import Library, Region, run
from zarr.storage import LocalStore


def open_array(path: str) -> Any:
    return zarr.open_array(store=LocalStore(path, read_only=True), mode="r")


def chunk_shape(a: Any) -> tuple[int, ...]:
    return tuple(a.shards or a.chunks)


async def read_async(a: Any, region: Region) -> Any:
    return await a._async_array.getitem(region)


def roundtrip(path: str, output: str) -> None:
    """``out[:] = src[:]`` into an array of the source's layout and codecs. (The suite's
    script passes ``chunks=dataset.chunks``, which for a sharded array is the inner chunk
    shape, so its copy has shards of one inner chunk; here every copy keeps the source's
    shards.)"""
    src = open_array(path)
    out = zarr.create(
        store=LocalStore(output),
        mode="w",
        shape=src.shape,
        chunks=chunk_shape(src),
        dtype=src.dtype,
        codecs=src.metadata.codecs,
        fill_value=src.fill_value,
    )
    out[:] = src[:]


LIBRARY = Library(
    open=open_array,
    shape=lambda a: a.shape,
    chunk_shape=chunk_shape,
    read_all=lambda a: a[:],
    read=lambda a, region: a[region],
    read_async=read_async,
    roundtrip=roundtrip,
)

if __name__ == "__main__":
    zarr.config.set({"async.concurrency": 10})
    run(LIBRARY)
