"""Opening and creating arrays and groups: zarr-python's top-level functions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from zarrox._nodes import METADATA_KEY, join, normalize_path, read_document
from zarrox.array import Array
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsNodeError,
    GroupNotFoundError,
    NodeNotFoundError,
    UnsupportedError,
)
from zarrox.group import Group, open_node
from zarrox.metadata import (
    ArrayMetadataV3,
    GroupMetadataV3,
    build_codecs,
    data_type_name,
    dumps,
    parse_data_type,
    parse_node,
)
from zarrox.storage import Store, resolve_store

Mode = Literal["r", "r+", "a", "w", "w-"]
_MODES = ("r", "r+", "a", "w", "w-")


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")


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


def _resolve_dtype(dtype: Any, path: str) -> tuple[str, np.dtype[Any]]:
    """(v3 data type name, numpy dtype) of what a user passes as ``dtype``."""
    if isinstance(dtype, str):
        try:
            return parse_data_type(dtype, path=path)
        except UnsupportedError:
            pass  # maybe a numpy type string ("<u2", "f8", "V4")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise UnsupportedError(f"array at '{path}': unsupported data type {dtype!r}") from None
    name = data_type_name(dt, path=path)
    return name, parse_data_type(name, path=path)[1]


def _write_group_document(store: Store, path: str, meta: GroupMetadataV3) -> None:
    store.set(join(path, METADATA_KEY), dumps(meta.to_json()))


def _ensure_parents(store: Store, path: str) -> None:
    """Create group metadata for every missing ancestor of ``path``, as zarr-python does."""
    parts = path.split("/")[:-1] if path else []
    for i in range(len(parts) + 1):
        parent = "/".join(parts[:i])
        doc = read_document(store, parent)
        if doc is None:
            _write_group_document(store, parent, GroupMetadataV3(attributes={}))
        elif doc.get("node_type") == "array":
            raise ContainsNodeError(f"cannot create a node below the array at '{parent}'")


def _prepare_node_path(store: Store, path: str, overwrite: bool) -> None:
    if store.exists(join(path, METADATA_KEY)):
        if not overwrite:
            raise ContainsNodeError(f"a node already exists at '{path}' in {store!r}")
    if overwrite:
        store.delete_prefix(path + "/" if path else "")
    _ensure_parents(store, path)


def create_array(
    store: Any,
    *,
    name: str | None = None,
    shape: int | Sequence[int],
    dtype: Any,
    chunks: int | Sequence[int] | Literal["auto"] | None = "auto",
    fill_value: Any = None,
    compressors: Any = "auto",
    serializer: Any = "auto",
    filters: Any = None,
    codecs: Any = None,
    zarr_format: int = 3,
    attributes: dict[str, Any] | None = None,
    dimension_names: Sequence[str | None] | None = None,
    chunk_key_encoding: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: dict[str, Any] | None = None,
    shards: Sequence[int] | dict[str, Any] | None = None,
) -> Array:
    """Create an array and return it (zarr-python's ``create_array``).

    With ``shards`` (a shape, or ``{"shape": ..., "index_location": "start"|"end"}``),
    each stored object is a shard of that shape holding inner chunks of ``chunks``,
    encoded with ``filters``, ``serializer`` and ``compressors``.
    """
    if zarr_format != 3:
        raise UnsupportedError(f"zarr_format={zarr_format} is not supported yet")
    store = resolve_store(store)
    path = normalize_path(name)
    shape_t = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape_t):
        raise ValueError(f"shape must be non-negative, got {shape_t}")
    data_type, dt = _resolve_dtype(dtype, path)
    if chunks is None or chunks == "auto":
        chunk_shape = guess_chunks(shape_t, dt.itemsize)
    elif isinstance(chunks, int | np.integer):
        chunk_shape = (int(chunks),) * len(shape_t)
    else:
        chunk_shape = tuple(int(c) for c in chunks)
    if len(chunk_shape) != len(shape_t) or any(c <= 0 for c in chunk_shape):
        raise ValueError(f"chunks {chunk_shape} do not fit shape {shape_t}")
    if shards is not None:
        grid_shape, codecs = _sharding_codecs(
            shards, chunk_shape, dt, data_type, filters, serializer, compressors, codecs
        )
        filters, serializer, compressors = None, "auto", "auto"
    else:
        grid_shape = chunk_shape
    meta = ArrayMetadataV3.create(
        shape=shape_t,
        dtype=dt,
        chunk_shape=grid_shape,
        fill_value=fill_value,
        filters=filters,
        serializer=serializer,
        compressors=compressors,
        codecs=codecs,
        chunk_key_encoding=chunk_key_encoding,
        attributes=attributes,
        dimension_names=dimension_names,
        path=path,
    )
    _prepare_node_path(store, path, overwrite)
    array = Array(store, path, meta, config=config)
    array._save_metadata()
    return array


def _sharding_codecs(
    shards: Sequence[int] | dict[str, Any],
    inner: tuple[int, ...],
    dt: np.dtype[Any],
    data_type: str,
    filters: Any,
    serializer: Any,
    compressors: Any,
    codecs: Any,
) -> tuple[tuple[int, ...], list[dict[str, Any]]]:
    """(shard shape, the one-codec chain) for ``create_array(..., shards=...)``."""
    if codecs is not None:
        raise ValueError("give either codecs= or shards=, not both")
    if isinstance(shards, dict):
        shape = tuple(int(s) for s in shards["shape"])
        location = shards.get("index_location", "end")
    else:
        shape, location = tuple(int(s) for s in shards), "end"
    if len(shape) != len(inner) or any(s % c for s, c in zip(shape, inner, strict=True)):
        raise ValueError(f"shards {shape} must be a multiple of chunks {inner} in every dimension")
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
            "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "crc32c"},
            ],
            "index_location": location,
        },
    }
    return shape, [sharding]


def open_array(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Open the array at ``path``. In modes ``a``/``w``/``w-`` it is created from
    ``kwargs`` (``shape``, ``dtype``, ...) when missing or overwritten."""
    _check_mode(mode)
    store = resolve_store(store)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        return create_array(store, name=path, overwrite=mode == "w", config=config, **kwargs)
    doc = read_document(store, path)
    if doc is None:
        if mode == "a" and "shape" in kwargs:
            return create_array(store, name=path, config=config, **kwargs)
        raise ArrayNotFoundError(f"no array found at '{path}' in {store!r}")
    meta = parse_node(doc, path=path)
    if not isinstance(meta, ArrayMetadataV3):
        raise ArrayNotFoundError(f"the node at '{path}' in {store!r} is a group, not an array")
    return Array(store, path, meta, read_only=mode == "r", config=config)


def create_group(
    store: Any = None,
    *,
    path: str | None = None,
    attributes: dict[str, Any] | None = None,
    overwrite: bool = False,
    zarr_format: int = 3,
) -> Group:
    """Create a group and return it."""
    if zarr_format != 3:
        raise UnsupportedError(f"zarr_format={zarr_format} is not supported yet")
    store = resolve_store(store)
    path = normalize_path(path)
    _prepare_node_path(store, path, overwrite)
    meta = GroupMetadataV3(attributes=dict(attributes or {}))
    _write_group_document(store, path, meta)
    return Group(store, path, meta)


def open_group(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    attributes: dict[str, Any] | None = None,
    zarr_format: int | None = None,
) -> Group:
    """Open the group at ``path``; modes ``a``/``w``/``w-`` create it when needed."""
    _check_mode(mode)
    store = resolve_store(store)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        return create_group(store, path=path, attributes=attributes, overwrite=mode == "w")
    doc = read_document(store, path)
    if doc is None:
        if mode == "a":
            return create_group(store, path=path, attributes=attributes)
        raise GroupNotFoundError(f"no group found at '{path}' in {store!r}")
    meta = parse_node(doc, path=path)
    if not isinstance(meta, GroupMetadataV3):
        raise GroupNotFoundError(f"the node at '{path}' in {store!r} is an array, not a group")
    return Group(store, path, meta, read_only=mode == "r")


def open(  # noqa: A001 - zarr-python's name
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``. When nothing is there, modes that may
    create make an array if ``shape`` is given, else a group."""
    _check_mode(mode)
    store = resolve_store(store)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        if "shape" in kwargs:
            return open_array(store, path=path, mode=mode, **kwargs)
        return open_group(store, path=path, mode=mode)
    try:
        return open_node(store, path, read_only=mode == "r")
    except NodeNotFoundError:
        if mode == "a":
            if "shape" in kwargs:
                return create_array(store, name=path, **kwargs)
            return create_group(store, path=path)
        raise
