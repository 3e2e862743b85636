#!/usr/bin/env python3
"""tensorstore's ``zarr3`` driver, as the suite's tensorstore_python scripts use it: no
cache pool; chunk reads ``t[domain].read()``; the round trip copies a batch of as many
stored objects as there are CPUs per transaction into an array of the source's schema."""

from __future__ import annotations

import os
from typing import Any

import tensorstore as ts
from _suite import Library, Region, chunk_regions, run


def _kvstore(path: str) -> dict[str, Any]:
    return {"driver": "file", "path": path}


def open_array(path: str) -> Any:
    return ts.open({"driver": "zarr3", "kvstore": _kvstore(path)}).result()


def chunk_shape(t: Any) -> tuple[int, ...]:
    return tuple(t.chunk_layout.write_chunk.shape)  # the shard (or chunk) shape


def _domain(region: Region) -> Any:
    return ts.IndexDomain([ts.Dim(inclusive_min=s.start, exclusive_max=s.stop) for s in region])


async def read_async(t: Any, region: Region) -> Any:
    return await t[_domain(region)].read()


def roundtrip(path: str, output: str) -> None:
    src = open_array(path)
    dst = ts.open(
        {
            "driver": "zarr3",
            "kvstore": _kvstore(output),
            "create": True,
            "delete_existing": True,
            "schema": src.schema,
        }
    ).result()
    per_batch = os.cpu_count() or 1
    regions = list(chunk_regions(dst.shape, chunk_shape(src)))
    for first in range(0, len(regions), per_batch):
        batch = regions[first : first + per_batch]
        with ts.Transaction() as txn:
            for region in batch:
                dst.with_transaction(txn)[region] = src[region]


if __name__ == "__main__":
    run(
        Library(
            open=open_array,
            shape=lambda t: t.shape,
            chunk_shape=chunk_shape,
            read_all=lambda t: t.read().result(),
            read=lambda t, region: t[_domain(region)].read().result(),
            read_async=read_async,
            roundtrip=roundtrip,
        )
    )
