"""A zarrox array as a dask array (``Array.to_dask()``, and :func:`zarrox.dask.from_zarr`
once it has the array): each dask task reads its block with one call into the Rust core.
Only dask is imported, when called; the array is used through its own methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def dask_array_module() -> Any:
    """``dask.array``, or an ImportError that says how to install it."""
    try:
        import dask.array as da
    except ImportError:
        raise ImportError("zarrox.dask needs dask: pip install 'dask[array]'") from None
    return da


def dask_tokenize() -> Callable[..., str]:
    """dask's ``tokenize`` (dask must be installed)."""
    from dask.base import tokenize

    return tokenize  # type: ignore[no-any-return]


def dask_array(
    z: Any,
    component: str | None = None,
    storage_options: dict[str, Any] | None = None,
    chunks: Any = None,
    name: str | None = None,
    inline_array: bool = False,
    **kwargs: Any,
) -> Any:
    """A dask array reading the zarrox array ``z`` lazily; the arguments are those of
    :func:`zarrox.dask.from_zarr` (``component``, ``storage_options`` and ``kwargs`` only
    enter the graph's name). The name is a token of the array (store, path, metadata) and
    the arguments, so the same array opened twice gives the same graph keys, and a metadata
    change new ones."""
    tokenize = dask_tokenize()
    da = dask_array_module()
    source: Any = z
    if getattr(z, "_rectilinear", None) is not None and z._sharding_config() is None:
        # A rectilinear grid has no chunk shape (``chunks`` raises, as in zarr-python 3.4):
        # dask is given its chunks per dimension, as dask itself writes them.
        source = PerDimensionChunks(z)
        chunks = z.read_chunk_sizes if chunks is None else chunks
    elif chunks is None:
        chunks = z.chunks
    if name is None:
        name = "from-zarrox-" + tokenize(z, component, storage_options, chunks, **kwargs)
    meta = np.empty((0,) * z.ndim, dtype=z.dtype)
    return da.from_array(
        source, chunks, name=name, inline_array=inline_array, meta=meta, lock=False
    )


class PerDimensionChunks:
    """An array whose ``chunks`` are per-dimension chunk sizes (dask's form), reading
    through the zarrox array it wraps."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim
        self.chunks = array.read_chunk_sizes

    def __getitem__(self, selection: Any) -> Any:
        return self.array[selection]


__all__ = ["PerDimensionChunks", "dask_array", "dask_array_module", "dask_tokenize"]
