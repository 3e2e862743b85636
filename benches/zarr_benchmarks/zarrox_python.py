#!/usr/bin/env python3
"""zarrox's own API: ``open_array`` and ``a[...]``; chunk reads from asyncio through
``zarrox.AsyncArray``; the round trip is ``zarrox.from_array`` (the source's layout and
codecs, copied a block of whole shards or chunks at a time)."""

from __future__ import annotations

from typing import Any

from _suite import Library, Region, run

import zarrox


def open_array(path: str) -> zarrox.Array:
    return zarrox.open_array(path, mode="r")


def chunk_shape(a: zarrox.Array) -> tuple[int, ...]:
    return tuple(a.shards or a.chunks)


async def read_async(a: zarrox.Array, region: Region) -> Any:
    return await zarrox.AsyncArray(a).getitem(region)


def roundtrip(path: str, output: str) -> None:
    zarrox.from_array(output, data=open_array(path), overwrite=True)


if __name__ == "__main__":
    run(
        Library(
            open=open_array,
            shape=lambda a: a.shape,
            chunk_shape=chunk_shape,
            read_all=lambda a: a[...],
            read=lambda a, region: a[region],
            read_async=read_async,
            roundtrip=roundtrip,
        )
    )
