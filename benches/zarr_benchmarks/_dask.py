"""What the dask scripts share (dask and numpy only, so that zarrox's dask script does not
import zarr-python): the suite's chunk-by-chunk read through dask, and the block shape."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import dask
import numpy as np
from _suite import Region


def read_chunks(arr: Any, concurrent: int, seen: Callable[[Region, Any], None] | None) -> None:
    """One delayed task per block that receives it and keeps nothing (``seen``, when
    checking, compares it first), on the threaded scheduler with ``concurrent`` workers
    (0: dask's default scheduler and workers)."""
    if concurrent > 0:
        dask.config.set(scheduler="threads", num_workers=concurrent)

    @dask.delayed
    def take(block: Any, region: Region) -> None:
        if seen is not None:
            seen(region, block)

    edges = [[0, *itertools.accumulate(sizes)] for sizes in arr.chunks]
    tasks = []
    for index, block in zip(np.ndindex(*arr.numblocks), arr.to_delayed().ravel(), strict=True):
        region = tuple(slice(edges[d][i], edges[d][i + 1]) for d, i in enumerate(index))
        tasks.append(take(block, region))
    dask.compute(tasks)


def block_shape(arr: Any) -> tuple[int, ...]:
    """The shape of a dask array's (first) block."""
    return tuple(sizes[0] for sizes in arr.chunks)
