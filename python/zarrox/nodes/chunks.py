"""Chunk shapes: guessing one from the shape and item size as zarr-python does, and
normalizing what users pass as ``chunks``."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrox.metadata._checks import copy_json
from zarrox.metadata.v3 import resolve_data_type


def guess_chunks(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """The chunk shape zarr-python chooses by default (h5py's heuristic): a target
    chunk size that grows with the dataset (128 KiB to 64 MiB), reached by halving
    the dimensions in turn, first to last."""
    if not shape:
        return ()
    base, smallest, largest = 256 * 1024, 128 * 1024, 64 * 1024 * 1024
    chunks = [float(max(1, int(s))) for s in shape]
    total = math.prod(chunks) * itemsize
    target = base * 2 ** math.log10(total / (1024.0 * 1024))
    target = min(max(target, smallest), largest)
    i = 0
    while True:
        nbytes = math.prod(chunks) * itemsize
        close = nbytes < target or abs(nbytes - target) / target < 0.5
        if (close and nbytes < largest) or math.prod(chunks) == 1:
            break
        d = i % len(chunks)
        chunks[d] = math.ceil(chunks[d] / 2.0)
        i += 1
    return tuple(int(c) for c in chunks)


def normalize_chunks(chunks: Any, shape: tuple[int, ...], typesize: int) -> tuple[int, ...]:
    """zarr-python's ``normalize_chunks``: None or True guess a chunk shape, False is
    one chunk, an int is repeated, missing trailing dimensions and -1/None take the
    array's extent, dask-style chunks (a tuple per dimension) must be regular."""
    if chunks is None or chunks is True:
        return guess_chunks(shape, typesize)
    if chunks is False:
        return shape
    if isinstance(chunks, numbers.Integral):
        chunks = tuple(int(chunks) for _ in shape)
    if all(isinstance(c, tuple | list) for c in chunks):
        for i, c in enumerate(chunks):
            if any(x != y for x, y in itertools.pairwise(c[:-1])) or (len(c) > 1 and c[-1] > c[0]):
                raise ValueError(
                    f"Irregular chunk sizes in dimension {i}: {tuple(c)}. "
                    "Only uniform chunks (with an optional smaller final chunk) are supported."
                )
        chunks = tuple(c[0] for c in chunks)
    chunks = tuple(chunks)
    if len(chunks) > len(shape):
        raise ValueError("too many dimensions in chunks")
    if len(chunks) < len(shape):
        chunks += shape[len(chunks) :]
    chunks = tuple(s if c is None or c == -1 else c for s, c in zip(shape, chunks, strict=True))
    if not all(isinstance(c, numbers.Integral) for c in chunks):
        raise TypeError("non integer value in chunks")
    return tuple(int(c) for c in chunks)


def parse_shape(shape: Any) -> tuple[int, ...]:
    shape_t = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    for s in shape_t:
        if not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"Expected a non-negative integer. Got {s} instead")
    return tuple(int(s) for s in shape_t)


def item_size(dtype: Any, zarr_format: int) -> int:
    """The element size zarr-python guesses chunks with: 1 for variable-length types."""
    if zarr_format == 2 and not isinstance(dtype, str) and dtype is not None:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is not None and dt.kind == "O":
            return 1
    name, dt = resolve_dtype("float64" if dtype is None else dtype, "")
    if name in ("string", "bytes") or dt.kind in "OT":
        return 1
    return max(dt.itemsize, 1)


def resolve_dtype(dtype: Any, path: str) -> tuple[Any, np.dtype[Any]]:
    """(v3 data type JSON, numpy dtype) of what a user passes as ``dtype`` (see
    :func:`resolve_data_type`)."""
    info = resolve_data_type(dtype, path)
    return copy_json(info.json), info.dtype
