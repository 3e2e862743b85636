"""Rectilinear chunk grids (per-dimension chunk sizes) as ``create_array`` takes them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrox.metadata.chunk_grid import RectilinearGrid


def rectilinear_spec(
    spec: Any, shape: tuple[int, ...], what: str, unit: Sequence[int] | None = None
) -> RectilinearGrid | None:
    """The rectilinear grid ``chunks=`` (or ``shards=``) declares when one of its entries is
    a list of edges (zarr-python 3.4's rule: a list keeps its dimension rectilinear even when
    its edges are equal; integers stay steps, ``-1`` one chunk spanning the axis, a multiple
    of ``unit``); None for any other form."""
    if isinstance(spec, RectilinearGrid):
        return spec
    if (
        spec is None
        or isinstance(spec, str | int | np.integer | dict)
        or not isinstance(spec, Sequence | np.ndarray)
    ):
        return None
    entries = list(spec)
    if not any(isinstance(e, Sequence | np.ndarray) and not isinstance(e, str) for e in entries):
        return None
    if len(entries) != len(shape):
        raise ValueError(
            f"{what} has {len(entries)} dimensions but shape has {len(shape)} dimensions"
        )
    dims: list[int | list[int]] = []
    for d, (entry, span) in enumerate(zip(entries, shape, strict=True)):
        if isinstance(entry, int | np.integer) and not isinstance(entry, bool | np.bool_):
            n = int(entry)
            if n == -1:
                u = 1 if unit is None else int(unit[d])
                n = u * max(1, -(-span // u))
            if n < 1:
                raise ValueError(f"Chunk size must be positive or -1, got {n}")
            dims.append(n)
            continue
        edges = list(entry)
        if not edges:
            raise ValueError("Chunk specification must not be empty")
        if not all(
            isinstance(e, int | np.integer) and not isinstance(e, bool | np.bool_) for e in edges
        ):
            raise TypeError(f"Each chunk size must be an integer; got {edges!r}")
        ints = [int(e) for e in edges]
        if any(e <= 0 for e in ints):
            raise ValueError(f"All chunk sizes must be positive, got {ints}")
        if span > 0 and sum(ints) != span:
            raise ValueError(f"Chunk sizes {ints} do not sum to span {span}")
        dims.append(ints)
    return RectilinearGrid(dims)
