"""The ``*_like`` arguments and arrays given as data: which shape, chunks, data type, fill
value and encoding they pass on."""

from __future__ import annotations

import warnings
from typing import Any

from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.nodes.node import (
    Node,
    is_array,
)


def is_zarrox_array(value: Any) -> bool:
    return isinstance(value, Node) and is_array(value._metadata)


def is_zarr_array(data: Any) -> bool:
    """Whether ``data`` is a Zarr array (zarrox's or zarr-python's), whose encoding
    ``from_array`` can keep."""
    if is_zarrox_array(data):
        return True
    cls = type(data)
    return cls.__name__ == "Array" and cls.__module__.startswith("zarr.")


def kept_encoding(data: Any, kw: dict[str, Any]) -> None:
    """Resolve ``"keep"`` and unset arguments of :func:`from_array` in ``kw`` from the source
    array ``data`` (what zarr-python keeps: chunks, shards, codecs in the same format, order,
    chunk key encoding, dimension names; the fill value only for ``fill_value=None``)."""
    meta = data.metadata
    src_format = int(meta.zarr_format)
    if kw["chunks"] == "keep":
        kw["chunks"] = tuple(data.chunks)
    if kw["shards"] == "keep":
        kw["shards"] = data.shards
    if kw["zarr_format"] is None:
        kw["zarr_format"] = src_format
    same = kw["zarr_format"] == src_format
    if kw["filters"] == "keep":
        kw["filters"] = (list(data.filters) or None) if same else "auto"
    if kw["compressors"] == "keep":
        kw["compressors"] = (list(data.compressors) or None) if same else "auto"
    if kw["serializer"] == "keep":
        kw["serializer"] = data.serializer if same and src_format == 3 else "auto"
    if kw["fill_value"] is None:
        kw["fill_value"] = data.fill_value
    if src_format == 2 and kw["zarr_format"] == 3 and data.order == "F":
        warnings.warn(
            "The 'order' attribute of a Zarr format 2 array does not have a direct analogue "
            "in Zarr format 3. The existing order='F' of the source Zarr format 2 array will "
            "be ignored.",
            UserWarning,
            4,
        )
    elif kw["order"] is None and kw["zarr_format"] == 2:
        kw["order"] = data.order
    if kw["chunk_key_encoding"] is None and same:
        if src_format == 2:
            kw["chunk_key_encoding"] = {
                "name": "v2",
                "separator": meta.dimension_separator,
            }
        else:
            encoding = meta.chunk_key_encoding
            kw["chunk_key_encoding"] = (
                encoding.to_dict() if hasattr(encoding, "to_dict") else dict(encoding)
            )
    if kw["dimension_names"] is None and src_format == 3:
        kw["dimension_names"] = meta.dimension_names


def shape_and_chunks(a: Any) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    shape = chunks = None
    if hasattr(a, "shape") and isinstance(a.shape, tuple):
        shape = a.shape
        if hasattr(a, "chunks") and isinstance(a.chunks, tuple) and len(a.chunks) == len(shape):
            chunks = a.chunks
        elif hasattr(a, "chunklen"):  # bcolz carray
            chunks = (a.chunklen,) + a.shape[1:]
    return shape, chunks


def like_arguments(
    a: Any, zarr_format: int | None = None, *, fill_value: bool = True
) -> dict[str, Any]:
    """The arguments of :func:`create` that make an array like ``a`` in ``zarr_format``, as
    zarr-python 3.4 takes them: shape, chunks and dtype; for a zarrox v2 or v3 array also
    its fill value (unless ``fill_value`` is false: zeros and ones bring their own), its
    zarr format (unless ``zarr_format`` asks for another) and, when the new array has its
    format, its encoding (v2: order, compressor, filters; v3: codecs), which does not carry
    over to the other format; never its attributes or names."""
    new: dict[str, Any] = {}
    shape, chunks = shape_and_chunks(a)
    if shape is not None:
        new["shape"] = shape
    if chunks is not None:
        new["chunks"] = chunks
    if hasattr(a, "dtype"):
        new["dtype"] = a.dtype
    if is_zarrox_array(a) and isinstance(a.metadata, ArrayMetadataV2 | ArrayMetadataV3):
        meta = a.metadata
        if fill_value:
            new["fill_value"] = meta.fill_value
        if zarr_format is None:
            zarr_format = meta.zarr_format
        if meta.zarr_format == zarr_format:
            if isinstance(meta, ArrayMetadataV2):
                new["order"] = a.order
                new["compressor"] = meta.compressor
                new["filters"] = meta.filters
            else:
                new["codecs"] = meta.codecs
    if zarr_format is not None:
        new["zarr_format"] = zarr_format
    return new
