"""Opening and creating arrays and groups: zarr-python's top-level functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from zarrox._nodes import (
    NodeMetadata,
    is_array,
    node_exists,
    normalize_path,
    read_node,
    write_node,
)
from zarrox._nodes import zarr_format as format_of
from zarrox.array import Array
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    UnsupportedError,
    ZarroxError,
)
from zarrox.group import Group
from zarrox.metadata import (
    ArrayMetadataV3,
    GroupMetadataV3,
    build_codecs,
    data_type_name,
    parse_data_type,
)
from zarrox.metadata.consolidated import (
    ZMETADATA_KEY,
    build_consolidated_v3,
    build_zmetadata,
    dumps_zmetadata,
    parse_consolidated_v3,
    parse_zmetadata,
    zmetadata_entries,
    zmetadata_nodes,
)
from zarrox.metadata.dtypes import from_zarr_python_dtype
from zarrox.metadata.v2 import DEFAULT_FILL, ArrayMetadataV2, GroupMetadataV2, loads_v2
from zarrox.metadata.v3 import parse_node
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
    """(v3 data type name, numpy dtype) of what a user passes as ``dtype``: a v3 data type
    (name or object), a zarr-python data type object, or anything ``np.dtype`` takes."""
    dtype = from_zarr_python_dtype(dtype, zarr_format=3)
    if isinstance(dtype, Mapping) and "name" in dtype:
        return parse_data_type(dtype, path=path)  # else a numpy dict ("names", "formats")
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


def _new_group_metadata(zarr_format: int, attributes: dict[str, Any] | None) -> NodeMetadata:
    if zarr_format == 2:
        return GroupMetadataV2(attributes=dict(attributes or {}))
    if zarr_format == 3:
        return GroupMetadataV3(attributes=dict(attributes or {}))
    raise UnsupportedError(f"zarr_format must be 2 or 3, got {zarr_format!r}")


def _ensure_parents(store: Store, path: str, zarr_format: int) -> None:
    """Create group metadata for every missing ancestor of ``path``, as zarr-python does."""
    if not path:
        return  # the root has no ancestors (a v2 .zgroup there would sit beside the .zarray)
    parts = path.split("/")[:-1]
    for i in range(len(parts) + 1):
        parent = "/".join(parts[:i])
        meta = read_node(store, parent)
        if meta is None:
            write_node(store, parent, _new_group_metadata(zarr_format, None))
        elif is_array(meta):
            raise ContainsArrayError(f"cannot create a node below the array at '{parent}'")


def _prepare_node_path(store: Store, path: str, overwrite: bool, zarr_format: int) -> None:
    if not overwrite and node_exists(store, path):
        try:
            meta = read_node(store, path)
        except ZarroxError:  # unreadable metadata: still a node in the way
            meta = None
        kind, error = (
            ("array", ContainsArrayError)
            if meta is not None and is_array(meta)
            else ("group", ContainsGroupError)
            if meta is not None
            else ("node", ContainsNodeError)
        )
        raise error(f"a {kind} already exists at '{path}' in {store!r}")
    if overwrite:
        store.delete_prefix(path + "/" if path else "")
    _ensure_parents(store, path, zarr_format)


def create_array(
    store: Any,
    *,
    name: str | None = None,
    shape: int | Sequence[int],
    dtype: Any,
    chunks: int | Sequence[int] | Literal["auto"] | None = "auto",
    fill_value: Any = DEFAULT_FILL,
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
    order: Literal["C", "F"] | None = None,
    dimension_separator: Literal[".", "/"] | None = None,
) -> Array:
    """Create an array and return it (zarr-python's ``create_array``).

    With ``shards`` (a shape, or ``{"shape": ..., "index_location": "start"|"end"}``),
    each stored object is a shard of that shape holding inner chunks of ``chunks``,
    encoded with ``filters``, ``serializer`` and ``compressors``.

    ``fill_value`` left out is the data type's default; an explicit None is the same
    for zarr_format=3, but ``null`` in a v2 array's ``.zarray``, as zarr-python writes.
    """
    if zarr_format not in (2, 3):
        raise UnsupportedError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    store = resolve_store(store)
    path = normalize_path(name)
    shape_t = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape_t):
        raise ValueError(f"shape must be non-negative, got {shape_t}")
    if zarr_format == 2:
        return _create_array_v2(
            store,
            path,
            shape_t,
            dtype,
            chunks,
            fill_value,
            compressors,
            filters,
            order,
            dimension_separator,
            attributes,
            overwrite,
            config,
        )
    if order is not None and order != "C":
        raise ValueError("order applies to zarr_format=2; for v3 use a transpose filter")
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
        data_type=data_type,
        chunk_shape=grid_shape,
        fill_value=None if fill_value is DEFAULT_FILL else fill_value,
        filters=filters,
        serializer=serializer,
        compressors=compressors,
        codecs=codecs,
        chunk_key_encoding=chunk_key_encoding,
        attributes=attributes,
        dimension_names=dimension_names,
        path=path,
    )
    _prepare_node_path(store, path, overwrite, 3)
    array = Array(store, path, meta, config=config)
    array._save_metadata()
    return array


def _create_array_v2(
    store: Store,
    path: str,
    shape: tuple[int, ...],
    dtype: Any,
    chunks: Any,
    fill_value: Any,
    compressors: Any,
    filters: Any,
    order: str | None,
    dimension_separator: str | None,
    attributes: dict[str, Any] | None,
    overwrite: bool,
    config: dict[str, Any] | None,
) -> Array:
    """``create_array(..., zarr_format=2)``: ``compressors`` is one numcodecs codec
    (a config dict or codec object, or a list of at most one), ``filters`` numcodecs codecs."""
    if chunks is None or chunks == "auto":
        try:
            itemsize = max(np.dtype(dtype).itemsize, 1)
        except TypeError:
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
    _prepare_node_path(store, path, overwrite, 2)
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
        if zarr_format is not None:
            kwargs["zarr_format"] = zarr_format
        return create_array(store, name=path, overwrite=mode == "w", config=config, **kwargs)
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a" and "shape" in kwargs:
            if zarr_format is not None:
                kwargs["zarr_format"] = zarr_format
            return create_array(store, name=path, config=config, **kwargs)
        raise ArrayNotFoundError(f"no array found at '{path}' in {store!r}")
    if not is_array(meta):
        raise ArrayNotFoundError(f"the node at '{path}' in {store!r} is a group, not an array")
    return Array(store, path, meta, read_only=mode == "r", config=config)  # type: ignore[arg-type]


def create_group(
    store: Any = None,
    *,
    path: str | None = None,
    attributes: dict[str, Any] | None = None,
    overwrite: bool = False,
    zarr_format: int = 3,
) -> Group:
    """Create a group and return it."""
    meta = _new_group_metadata(zarr_format, attributes)
    store = resolve_store(store)
    path = normalize_path(path)
    _prepare_node_path(store, path, overwrite, zarr_format)
    write_node(store, path, meta)
    return Group(store, path, meta)  # type: ignore[arg-type]


def _consolidated(store: Store, path: str, meta: NodeMetadata) -> dict[str, NodeMetadata] | None:
    """The consolidated metadata of the group at ``path`` (v3 inline, or v2
    ``.zmetadata``), by node path relative to it, or None when there is none."""
    if isinstance(meta, GroupMetadataV3):
        if meta.consolidated_metadata is None:
            return None
        docs = parse_consolidated_v3(meta.consolidated_metadata, path=path)
        nodes: dict[str, NodeMetadata] = {}
        for rel, doc in docs.items():
            node_path = f"{path}/{rel}" if path else rel
            nodes[rel] = parse_node(doc, path=node_path)
        return nodes
    key = f"{path}/{ZMETADATA_KEY}" if path else ZMETADATA_KEY
    raw = store.get(key)
    if raw is None:
        return None
    entries = parse_zmetadata(loads_v2(raw, key=ZMETADATA_KEY, path=path), path=path)
    found = zmetadata_nodes(entries, path=path)
    return {rel: m for rel, m in found.items() if rel}


def open_group(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    attributes: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    use_consolidated: bool | None = None,
) -> Group:
    """Open the group at ``path`` (either format); modes ``a``/``w``/``w-`` create
    it when needed. Consolidated metadata is used when present (``use_consolidated``
    None), required (True) or ignored (False)."""
    _check_mode(mode)
    store = resolve_store(store)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        return create_group(
            store,
            path=path,
            attributes=attributes,
            overwrite=mode == "w",
            zarr_format=zarr_format or 3,
        )
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a":
            return create_group(
                store, path=path, attributes=attributes, zarr_format=zarr_format or 3
            )
        raise GroupNotFoundError(f"no group found at '{path}' in {store!r}")
    if is_array(meta):
        if mode == "a":  # creating the group: the array is in the way, as zarr-python says
            raise ContainsArrayError(f"an array already exists at '{path}' in {store!r}")
        raise GroupNotFoundError(f"the node at '{path}' in {store!r} is an array, not a group")
    consolidated = None if use_consolidated is False else _consolidated(store, path, meta)
    if use_consolidated and consolidated is None:
        raise MetadataError(f"the group at '{path}' in {store!r} has no consolidated metadata")
    return Group(store, path, meta, read_only=mode == "r", consolidated=consolidated)  # type: ignore[arg-type]


def open_consolidated(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "r",
    zarr_format: int | None = None,
) -> Group:
    """Open a group through its consolidated metadata (which must exist)."""
    return open_group(store, path=path, mode=mode, zarr_format=zarr_format, use_consolidated=True)


def consolidate_metadata(
    store: Any, *, path: str | None = None, zarr_format: int | None = None
) -> Group:
    """Gather the metadata of every node below the group at ``path`` into one
    place: ``.zmetadata`` for a v2 group, ``consolidated_metadata`` in a v3
    group's zarr.json, as zarr-python writes them. Returns the group."""
    store = resolve_store(store)
    path = normalize_path(path)
    root = open_group(store, path=path, mode="r+", zarr_format=zarr_format, use_consolidated=False)
    nodes: dict[str, NodeMetadata] = {
        rel: node.metadata for rel, node in root.members(max_depth=None)
    }
    meta = root.metadata
    if isinstance(meta, GroupMetadataV3):
        if any(format_of(m) != 3 for m in nodes.values()):
            raise MetadataError(f"group '{path}' mixes v2 nodes into a v3 hierarchy")
        meta.consolidated_metadata = build_consolidated_v3(nodes, path=path)  # type: ignore[arg-type]
        write_node(store, path, meta)
    else:
        entries = zmetadata_entries({"": meta, **nodes})  # type: ignore[dict-item]
        key = f"{path}/{ZMETADATA_KEY}" if path else ZMETADATA_KEY
        store.set(key, dumps_zmetadata(build_zmetadata(entries, path=path)))
    return open_group(store, path=path, mode="r+", use_consolidated=True)


def open(  # noqa: A001 - zarr-python's name
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path`` (either format). When nothing is
    there, modes that may create make an array if ``shape`` is given, else a group."""
    _check_mode(mode)
    store = resolve_store(store)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        if "shape" in kwargs:
            return open_array(store, path=path, mode=mode, zarr_format=zarr_format, **kwargs)
        return open_group(store, path=path, mode=mode, zarr_format=zarr_format)
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a":
            if "shape" in kwargs:
                return create_array(store, name=path, zarr_format=zarr_format or 3, **kwargs)
            return create_group(store, path=path, zarr_format=zarr_format or 3)
        raise NodeNotFoundError(f"no array or group found at '{path}' in {store!r}")
    if is_array(meta):
        return open_array(store, path=path, mode=mode, zarr_format=zarr_format)
    return open_group(store, path=path, mode=mode, zarr_format=zarr_format)
