"""Creating a Zarr v2 array (``create_array(zarr_format=2)``): its ``.zarray`` from
zarr-python's arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.nodes.chunks import guess_chunks
from zarrox.nodes.place import prepare_node_path
from zarrox.nodes.plans import ArrayPlan
from zarrox.storage import Store


def new_array_v2(
    store: Store,
    path: str,
    shape: tuple[int, ...],
    dtype: Any,
    chunks: Any,
    shards: Any,
    fill_value: Any,
    compressors: Any,
    filters: Any,
    order: str | None,
    dimension_separator: str | None,
    attributes: dict[str, Any] | None,
    overwrite: bool,
    config: dict[str, Any] | None,
) -> ArrayPlan:
    """``create_array(..., zarr_format=2)``: ``compressors`` is one numcodecs codec
    (a config dict or codec object, or a list of at most one), ``filters`` numcodecs codecs;
    ``shards`` must be None."""
    if shards is not None:
        raise ValueError("Zarr format 2 arrays do not support `shards`.")
    if chunks is None or chunks == "auto":
        try:
            itemsize = max(np.dtype(dtype).itemsize, 1)
        except (TypeError, ValueError):  # the metadata layer says what is wrong with it
            itemsize = 8
        chunk_shape: Any = guess_chunks(shape, itemsize)
    else:
        chunk_shape = chunks
    meta = ArrayMetadataV2.create(
        shape,
        dtype,
        chunk_shape,
        fill_value=fill_value,
        compressor=compressors,
        filters=filters,
        order=order or "C",
        dimension_separator=dimension_separator or ".",
        attributes=attributes,
        path=path,
    )
    prepare_node_path(store, path, overwrite, 2)
    return ArrayPlan(store, path, meta, config=config)
