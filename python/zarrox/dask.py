"""dask arrays over zarrox arrays: ``from_zarr`` and ``to_zarr`` with the arguments of
``dask.array.from_zarr`` / ``dask.array.to_zarr``, for zarrox arrays and anything zarrox opens
(paths, URLs, stores).

``dask.array.from_zarr`` itself only takes zarr-python arrays (it hands anything else to
``zarr.open_array``), so use these, ``zarrox.Array.to_dask()``, or ``dask.array.from_array``
(a zarrox array is array-like; its dask token is deterministic). Each dask task reads or writes
its block with one call into the Rust core. Writes are split along the array's stored objects
(shards, or chunks), so no two tasks write the same chunk.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from zarrox.array import Array
from zarrox.array_dask import dask_array, dask_array_module, dask_tokenize
from zarrox.transfer import write_grid

__all__ = ["from_zarr", "to_zarr"]


def from_zarr(
    url: Any,
    component: str | None = None,
    storage_options: dict[str, Any] | None = None,
    chunks: Any = None,
    name: str | None = None,
    inline_array: bool = False,
    **kwargs: Any,
) -> Any:
    """A dask array reading the zarrox array ``url`` (an Array, or a store, path or URL
    with the array at ``component``) lazily. ``chunks`` defaults to the array's chunks;
    ``kwargs`` go to :func:`zarrox.open_array`. The name is a token of the array (store,
    path, metadata) and the arguments, so opening the same array twice gives the same
    graph keys, and a metadata change new ones."""
    dask_tokenize()  # dask must be installed before anything is opened
    dask_array_module()
    from zarrox.api import open_array

    if isinstance(url, Array):
        z = url
    else:
        open_kwargs = dict(kwargs)
        open_kwargs.setdefault("mode", "r")
        if storage_options:
            open_kwargs["storage_options"] = storage_options
        z = open_array(url, path=component, **open_kwargs)
    return dask_array(
        z,
        component,
        storage_options,
        chunks=chunks,
        name=name,
        inline_array=inline_array,
        **kwargs,
    )


def _aligned(chunks: Sequence[Sequence[int]], grid: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether every dask block boundary is a boundary of ``grid`` (or the array's end)."""
    for dim_chunks, g, n in zip(chunks, grid, shape, strict=True):
        edge = 0
        for c in dim_chunks:
            edge += c
            if edge % g and edge != n:
                return False
    return True


def _regular_chunks(chunks: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """The chunk shape of a regular dask chunking (all equal but a smaller last), or None."""
    out = []
    for dim in chunks:
        if not dim:
            out.append(1)
            continue
        first = dim[0]
        if any(c != first for c in dim[:-1]) or dim[-1] > first:
            return None
        out.append(max(first, 1))
    return tuple(out)


def to_zarr(
    arr: Any,
    url: Any,
    component: str | None = None,
    storage_options: dict[str, Any] | None = None,
    region: tuple[slice, ...] | None = None,
    compute: bool = True,
    return_stored: bool = False,
    mode: str = "a",
    **kwargs: Any,
) -> Any:
    """Store the dask array ``arr`` in a zarrox array (dask's ``to_zarr``).

    ``url`` is an existing zarrox Array (``region`` says where in it; the default is all of
    it) or a store, path or URL where an array is created at ``component`` (``mode="w"``
    replaces one that is there) with the dask array's shape, data type and chunks, and
    ``kwargs`` for :func:`zarrox.create_array` (``compressors``, ``shards``, ...). The dask
    array is rechunked where its blocks would split a stored object (shard or chunk), so that
    parallel tasks never write the same object. Returns what ``dask.array.store`` returns.
    """
    da = dask_array_module()
    if not isinstance(arr, da.Array):
        arr = da.asarray(arr)
    if any(math.isnan(s) for s in arr.shape):
        raise ValueError(
            "Saving a dask array with unknown chunk sizes is not supported: call "
            "compute_chunk_sizes() first"
        )
    if isinstance(url, Array):
        z = url
    else:
        if region is not None:
            raise ValueError("region is only used when url is an existing zarrox Array")
        z = _open_or_create(arr, url, component, storage_options, mode, kwargs)
    regions = None if region is None else tuple(_normalize_region(region, z.shape))
    target_shape = z.shape if regions is None else tuple(s.stop - s.start for s in regions)
    if tuple(arr.shape) != tuple(target_shape):
        raise ValueError(f"the dask array's shape {arr.shape} does not fit {target_shape}")
    grid = write_grid(z)
    offset = (0,) * z.ndim if regions is None else tuple(s.start for s in regions)
    if any(o % g for o, g in zip(offset, grid, strict=True)) or not _aligned(
        arr.chunks, grid, arr.shape
    ):
        arr = arr.rechunk(
            tuple(
                _grid_chunks(n, max(g, want // g * g), g, o)
                for n, want, g, o in zip(arr.shape, arr.chunksize, grid, offset, strict=True)
            )
        )
    return arr.store(z, lock=False, compute=compute, return_stored=return_stored, regions=regions)


def _open_or_create(
    arr: Any,
    url: Any,
    component: str | None,
    storage_options: dict[str, Any] | None,
    mode: str,
    kwargs: dict[str, Any],
) -> Array:
    """The array :func:`to_zarr` writes ``arr`` to at ``component`` of ``url``: opened
    (``mode="r+"``) or created like ``arr`` with ``kwargs``."""
    from zarrox.api import create_array, open_array

    if mode not in ("a", "w", "w-", "r+"):
        raise ValueError(f"mode must be 'a', 'w', 'w-' or 'r+', got {mode!r}")
    extra: dict[str, Any] = {"storage_options": storage_options} if storage_options else {}
    if mode == "r+":
        return open_array(url, path=component, mode="r+", **extra)
    chunks = kwargs.pop("chunks", None) or _regular_chunks(arr.chunks)
    if chunks is None:
        warnings.warn(
            "The dask array has irregular chunks; it is rechunked to regular ones "
            f"({arr.chunksize}) for the Zarr array.",
            UserWarning,
            3,
        )
        chunks = arr.chunksize
    return create_array(
        url,
        name=component,
        shape=arr.shape,
        dtype=kwargs.pop("dtype", arr.dtype),
        chunks=chunks,
        overwrite=mode == "w",
        **extra,
        **kwargs,
    )


def _normalize_region(region: Any, shape: Sequence[int]) -> list[slice]:
    region = region if isinstance(region, tuple) else (region,)
    if len(region) > len(shape):
        raise ValueError(f"region {region} has more dimensions than the array ({len(shape)})")
    out = []
    for d, n in enumerate(shape):
        s = region[d] if d < len(region) else slice(None)
        if not isinstance(s, slice):
            raise TypeError(f"region must be slices, got {s!r}")
        start, stop, step = s.indices(n)
        if step != 1:
            raise ValueError("region slices must have step 1")
        out.append(slice(start, stop))
    return out


def _grid_chunks(n: int, block: int, grid: int, offset: int) -> tuple[int, ...]:
    """Block sizes along one dimension of ``n`` elements written at ``offset``: ``block``
    (a multiple of ``grid``) each, the first one shortened so that every boundary falls on a
    boundary of ``grid``."""
    if n == 0:
        return (0,)
    sizes = []
    done = min(n, grid - offset % grid) if offset % grid else 0
    if done:
        sizes.append(done)
    while done < n:
        step = min(block, n - done)
        sizes.append(step)
        done += step
    return tuple(sizes)
