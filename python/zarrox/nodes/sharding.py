"""The ``sharding_indexed`` codec of a sharded array: shard shape, inner chunks and the
inner codecs from ``create_array``'s ``shards``, ``filters``, ``serializer`` and
``compressors``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrox.metadata import build_codecs
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.nodes.rectilinear import rectilinear_spec


def sharding_codecs(
    shards: Sequence[int] | dict[str, Any],
    inner: tuple[int, ...],
    dt: np.dtype[Any],
    data_type: str | dict[str, Any],
    filters: Any,
    serializer: Any,
    compressors: Any,
    codecs: Any,
    array_shape: tuple[int, ...],
) -> tuple[tuple[int, ...] | RectilinearGrid, list[dict[str, Any]]]:
    """(shard shape or rectilinear shard grid, the one-codec chain) for
    ``create_array(..., shards=...)``."""
    if codecs is not None:
        raise ValueError("give either codecs= or shards=, not both")
    spec = shards["shape"] if isinstance(shards, dict) else shards
    # index_codecs, and index_location when not given, are the sharding codec's defaults,
    # filled in with the others when the metadata checks the chain
    location = (
        {"index_location": shards["index_location"]}
        if isinstance(shards, dict) and "index_location" in shards
        else {}
    )
    rect = rectilinear_spec(spec, array_shape, "shards", unit=inner)
    shape: tuple[int, ...] | RectilinearGrid
    if rect is not None:
        # zarr-python 3.4: inner chunks are regular in every shard, so every shard edge is
        # a multiple of the inner chunk edge.
        for d, c in enumerate(inner):
            bad = [e for e in rect.distinct_edges(d) if e % c]
            if bad:
                raise ValueError(
                    f"shard edge {bad[0]} in dimension {d} is not divisible by the inner "
                    f"chunk size {c}"
                )
        shape = rect
    else:
        shape = tuple(int(s) for s in spec)
        if len(shape) != len(inner) or any(s % c for s, c in zip(shape, inner, strict=True)):
            raise ValueError(
                f"shards {shape} must be a multiple of chunks {inner} in every dimension"
            )
    inner_codecs = build_codecs(
        dt,
        data_type=data_type,
        filters=filters,
        serializer=serializer,
        compressors=compressors,
        ndim=len(inner),
    )
    sharding = {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(inner),
            "codecs": inner_codecs,
            **location,
        },
    }
    return shape, [sharding]
