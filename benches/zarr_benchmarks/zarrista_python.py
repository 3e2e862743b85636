#!/usr/bin/env python3
"""zarrista (zarrs' own Python API): ``Array.open`` on a ``FilesystemStore``, ``a[...]``
converted to numpy; chunk reads from asyncio through ``AsyncArray`` on obstore's
``LocalStore`` (zarrista's async API takes obstore stores); the round trip ``out[...] =
src[...]`` (through numpy) into an array built ``like`` the source, as the zarr-python
scripts copy."""

from __future__ import annotations

from typing import Any

import numpy as np
import zarrista
from _suite import Library, Region, run
from zarrista.store import FilesystemStore


def open_array(path: str) -> Any:
    return zarrista.Array.open(FilesystemStore(path), "/")


async def open_async(path: str) -> Any:
    from obstore.store import LocalStore

    return await zarrista.AsyncArray.open(LocalStore(path), "/")


def chunk_shape(a: Any) -> tuple[int, ...]:
    return tuple(a.chunk_shape([0] * a.ndim))  # the shard (or chunk) shape


async def read_async(a: Any, region: Region) -> Any:
    return np.asarray(await a.retrieve_array_subset(region))


def roundtrip(path: str, output: str) -> None:
    src = open_array(path)
    dst = zarrista.ArrayBuilder.like(src).create(FilesystemStore(output), "/")
    dst[...] = np.asarray(src[...])


if __name__ == "__main__":
    run(
        Library(
            open=open_array,
            shape=lambda a: a.shape,
            chunk_shape=chunk_shape,
            read_all=lambda a: np.asarray(a[...]),
            read=lambda a, region: np.asarray(a[region]),
            read_async=read_async,
            roundtrip=roundtrip,
            open_async=open_async,
        )
    )
