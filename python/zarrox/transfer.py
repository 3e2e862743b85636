"""Moving values between arrays in blocks: what ``from_array``, ``copy``, ``convert`` and
``zarrox copy`` use to fill a new array from another (a zarrox or zarr-python array, or any
array-like) with bounded memory.

A block is a whole number of the destination's stored objects (shards, or chunks when it is
not sharded), grown along the last dimensions first up to about :data:`BLOCK_BYTES`, so that
each read and each write is one call into the Rust core over many chunks (decoded and encoded
in parallel) and no stored object is written twice.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

#: the size a block of values grows to (unless one stored object is larger)
BLOCK_BYTES = 64 * 1024 * 1024

#: called after each block with (elements copied so far, elements in all)
Progress = Callable[[int, int], None]


def block_shape(
    shape: Sequence[int], grid: Sequence[int], itemsize: int, target: int = BLOCK_BYTES
) -> tuple[int, ...]:
    """A multiple of ``grid`` (the destination's stored object shape), grown along the last
    dimensions first while a block stays within ``target`` bytes, never past ``shape``."""
    block = [max(1, int(g)) for g in grid]
    for d in reversed(range(len(block))):
        nbytes = math.prod(block) * max(itemsize, 1)
        factor = max(1, target // max(nbytes, 1))
        cells = -(-int(shape[d]) // block[d]) if shape[d] else 1
        block[d] *= min(factor, cells)
        if factor < cells:
            break  # this dimension is not whole: the dimensions before it stay one object
    return tuple(block)


def regions(shape: Sequence[int], step: Sequence[int]) -> Iterator[tuple[slice, ...]]:
    """The blocks of ``step`` that tile ``shape``, in C order (the last ones clipped)."""
    axes = [
        [slice(i, min(i + s, n)) for i in range(0, n, s)] for n, s in zip(shape, step, strict=True)
    ]
    return itertools.product(*axes)


def write_grid(array: Any) -> tuple[int, ...]:
    """The shape of one stored object of ``array``: its shards, else its chunks."""
    shards = getattr(array, "shards", None)
    return tuple(shards) if shards else tuple(array.chunks)


def _rectilinear_sizes(array: Any) -> tuple[tuple[int, ...], ...] | None:
    """Per dimension, the data sizes of the stored objects of a zarrox array whose grid is
    rectilinear; None for any other array."""
    if getattr(array, "_rectilinear", None) is None:
        return None
    return tuple(array.write_chunk_sizes)


def copy_values(
    source: Any,
    dest: Any,
    *,
    progress: Progress | None = None,
    target: int = BLOCK_BYTES,
) -> int:
    """Copy every value of ``source`` (an array or array-like of ``dest``'s shape) into
    ``dest`` block by block; returns the number of elements copied."""
    shape = tuple(dest.shape)
    if tuple(np.shape(source) if not hasattr(source, "shape") else source.shape) != shape:
        raise ValueError(f"source of shape {source.shape} does not fit {shape}")
    total = math.prod(shape)
    if total == 0:
        if progress is not None:
            progress(0, 0)
        return 0
    if not shape:  # 0-d
        dest[...] = source[...]
        if progress is not None:
            progress(1, 1)
        return 1
    itemsize = max(np.dtype(dest.dtype).itemsize, 1) if dest.dtype.kind not in "OT" else 16
    sizes = _rectilinear_sizes(dest)
    if sizes is not None:
        # Chunks differ in shape: one stored object (chunk or shard) at a time.
        blocks: Iterator[tuple[slice, ...]] = itertools.product(
            *(
                [slice(int(a), int(a) + n) for a, n in zip(np.cumsum((0, *s)), s, strict=False)]
                for s in sizes
            )
        )
    else:
        blocks = regions(shape, block_shape(shape, write_grid(dest), itemsize, target))
    done = 0
    for region in blocks:
        dest[region] = np.asarray(source[region])
        done += math.prod(s.stop - s.start for s in region)
        if progress is not None:
            progress(done, total)
    return done
