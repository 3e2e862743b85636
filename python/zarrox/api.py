"""Opening and creating arrays and groups: zarr-python's top-level functions."""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from zarrox._nodes import (
    NodeMetadata,
    is_array,
    join,
    node_exists,
    normalize_path,
    read_node,
    write_node,
)
from zarrox._nodes import zarr_format as format_of
from zarrox.array import Array
from zarrox.config import config as global_config
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
    SpecError,
    UnsupportedError,
    ZarroxError,
)
from zarrox.group import Group
from zarrox.metadata import (
    ArrayMetadataV3,
    GroupMetadataV3,
    build_codecs,
)
from zarrox.metadata._checks import copy_json
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.metadata.consolidated import (
    ZMETADATA_KEY,
    build_consolidated_v3,
    build_zmetadata,
    check_parents,
    dumps_zmetadata,
    parse_consolidated_v3,
    parse_zmetadata,
    zmetadata_entries,
    zmetadata_nodes,
)
from zarrox.metadata.v2 import DEFAULT_FILL, ArrayMetadataV2, GroupMetadataV2, loads_v2
from zarrox.metadata.v3 import parse_node, resolve_data_type
from zarrox.storage import Store, resolve_store
from zarrox.tensorstore_spec import ArrayView, is_spec, open_spec

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


def _resolve_dtype(dtype: Any, path: str) -> tuple[Any, np.dtype[Any]]:
    """(v3 data type JSON, numpy dtype) of what a user passes as ``dtype`` (see
    :func:`resolve_data_type`)."""
    info = resolve_data_type(dtype, path)
    return copy_json(info.json), info.dtype


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
    shape: int | Sequence[int] | None = None,
    dtype: Any = None,
    data: Any = None,
    write_data: bool = True,
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
    storage_options: dict[str, Any] | None = None,
) -> Array:
    """Create an array and return it (zarr-python's ``create_array``).

    With ``shards`` (a shape, or ``{"shape": ..., "index_location": "start"|"end"}``),
    each stored object is a shard of that shape holding inner chunks of ``chunks``,
    encoded with ``filters``, ``serializer`` and ``compressors``.

    ``fill_value`` left out is the data type's default; an explicit None is the same
    for zarr_format=3, but ``null`` in a v2 array's ``.zarray``, as zarr-python writes.

    ``data`` (an array or array-like) gives the shape and data type (then ``shape`` and
    ``dtype`` must be left out) and, unless ``write_data=False``, the values: the array is
    made by :func:`from_array` with these arguments.
    """
    if data is not None:
        if shape is not None:
            raise ValueError(
                "The data parameter was used, but the shape parameter was also used. This is "
                "an error. Either use the data parameter, or the shape parameter, but not both."
            )
        if dtype is not None:
            raise ValueError(
                "The data parameter was used, but the dtype parameter was also used. This is "
                "an error. Either use the data parameter, or the dtype parameter, but not both."
            )
        return from_array(
            store,
            data=data,
            write_data=write_data,
            name=name,
            chunks=chunks if chunks is not None else "auto",
            shards=shards,
            filters=filters,
            compressors=compressors,
            serializer=serializer,
            fill_value=fill_value,
            order=order,
            zarr_format=zarr_format,
            attributes=attributes,
            chunk_key_encoding=chunk_key_encoding,
            dimension_names=dimension_names,
            overwrite=overwrite,
            config=config,
        )
    if shape is None:
        raise ValueError(
            "The data parameter was set to None, but shape was not specified. "
            "Either provide a value for data, or specify shape."
        )
    if dtype is None:
        raise ValueError(
            "The data parameter was set to None, but dtype was not specified. "
            "Either provide an array-like value for data, or specify dtype."
        )
    if zarr_format not in (2, 3):
        raise UnsupportedError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    store = resolve_store(store, storage_options=storage_options, mode="w" if overwrite else "a")
    path = normalize_path(name)
    shape_t = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape_t):
        raise ValueError(f"shape must be non-negative, got {shape_t}")
    if zarr_format == 2:
        if shards is not None:
            raise ValueError("Zarr format 2 arrays do not support `shards`.")
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
    rect_chunks = _rectilinear_spec(chunks, shape_t, "chunks")
    if rect_chunks is not None:
        if shards is not None:
            raise ValueError(
                "chunks must be regular when the array is sharded; give the shards edges instead"
            )
        chunk_shape: Any = rect_chunks
    elif chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunk_shape = guess_chunks(shape_t, dt.itemsize)
    elif isinstance(chunks, int | np.integer):
        chunk_shape = (int(chunks),) * len(shape_t)
    else:
        chunk_shape = tuple(int(c) for c in chunks)
    if rect_chunks is None and (
        len(chunk_shape) != len(shape_t) or any(c <= 0 for c in chunk_shape)
    ):
        raise ValueError(f"array '{path}': chunks {chunk_shape} do not fit shape {shape_t}")
    if shards is not None:
        try:
            grid_shape, codecs = _sharding_codecs(
                shards,
                chunk_shape,
                dt,
                data_type,
                filters,
                serializer,
                compressors,
                codecs,
                shape_t,
            )
        except ValueError as e:
            if f"'{path}'" in str(e):
                raise
            raise type(e)(f"array '{path}': {e}") from None
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
        # no names for no dimensions is no member, as zarr-python writes it
        dimension_names=dimension_names if dimension_names or shape_t else None,
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
    _prepare_node_path(store, path, overwrite, 2)
    array = Array(store, path, meta, config=config)
    array._save_metadata()
    return array


def _is_zarr_array(data: Any) -> bool:
    """Whether ``data`` is a Zarr array (zarrox's or zarr-python's), whose encoding
    ``from_array`` can keep."""
    if isinstance(data, Array):
        return True
    cls = type(data)
    return cls.__name__ == "Array" and cls.__module__.startswith("zarr.")


def _kept_encoding(data: Any, kw: dict[str, Any]) -> None:
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
            3,
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


def from_array(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Literal["auto", "keep"] | Sequence[int] = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    fill_value: Any = DEFAULT_FILL,
    order: Literal["C", "F"] | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: dict[str, Any] | None = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: dict[str, Any] | None = None,
) -> Array:
    """A new array like ``data`` (zarr-python's ``from_array``), holding its values unless
    ``write_data=False``.

    ``data`` is a Zarr array (zarrox's or zarr-python's) or any array-like. ``"keep"``
    (the default of ``chunks``, ``shards``, ``filters``, ``compressors`` and ``serializer``)
    takes the source array's encoding (codecs only when the Zarr format stays the same), or
    for other data the defaults; ``fill_value=None`` takes the source array's fill value. The
    values are copied a block of whole destination shards (or chunks) at a time.
    """
    from zarrox.transfer import copy_values

    kw: dict[str, Any] = dict(
        chunks=chunks,
        shards=shards,
        filters=filters,
        compressors=compressors,
        serializer=serializer,
        fill_value=fill_value,
        order=order,
        zarr_format=zarr_format,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names,
    )
    if _is_zarr_array(data):
        _kept_encoding(data, kw)
    else:
        for key, default in (
            ("chunks", "auto"),
            ("shards", None),
            ("filters", "auto"),
            ("compressors", "auto"),
            ("serializer", "auto"),
        ):
            if isinstance(kw[key], str) and kw[key] == "keep":
                kw[key] = default
        if kw["zarr_format"] is None:
            kw["zarr_format"] = 3
        if not hasattr(data, "dtype") or not hasattr(data, "shape"):
            data = np.array(data)
    if kw["zarr_format"] == 2:
        # v2 arrays have one compressor, no serializer and no chunk key encoding
        for key, value in (("serializer", "auto"), ("chunk_key_encoding", None)):
            if kw[key] not in (value, None) and not (
                key == "chunk_key_encoding" and kw[key].get("name") == "v2"
            ):
                raise ValueError(f"{key} cannot be used for arrays with zarr_format 2")
        encoding = kw.pop("chunk_key_encoding")
        kw.pop("serializer")
        if encoding is not None:
            kw["dimension_separator"] = encoding.get("separator") or (
                encoding.get("configuration") or {}
            ).get("separator", ".")
        if kw["dimension_names"] is not None:
            kw["dimension_names"] = None  # v2 has none; xarray keeps them in attributes
    dtype = data.dtype
    if isinstance(data, Array) and data.metadata.data_type in ("string", "bytes"):
        # variable-length strings or bytes, whatever numpy type holds them
        dtype = str if data.metadata.data_type == "string" else bytes
    new = create_array(
        store,
        name=name,
        shape=tuple(data.shape),
        dtype=dtype,
        attributes=attributes,
        overwrite=overwrite,
        config=config,
        storage_options=storage_options,
        **kw,
    )
    if write_data:
        copy_values(data, new)
    return new


def _sharding_codecs(
    shards: Sequence[int] | dict[str, Any],
    inner: tuple[int, ...],
    dt: np.dtype[Any],
    data_type: str,
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
    spec, location = (
        (shards["shape"], shards.get("index_location", "end"))
        if isinstance(shards, dict)
        else (shards, "end")
    )
    rect = _rectilinear_spec(spec, array_shape, "shards", unit=inner)
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
            "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "crc32c"},
            ],
            "index_location": location,
        },
    }
    return shape, [sharding]


def _rectilinear_spec(
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
    return RectilinearGrid.from_edges(dims)


#: keywords only zarr-python's legacy ``create`` takes, which its ``open_array`` uses
_LEGACY_CREATE_ONLY = frozenset(
    {
        "compressor",
        "chunk_shape",
        "object_codec",
        "write_empty_chunks",
        "synchronizer",
        "chunk_store",
        "cache_metadata",
        "cache_attrs",
        "meta_array",
        "read_only",
        "zarr_version",
    }
)


def _create_for_open(
    store: Store, path: str, overwrite: bool, config: dict[str, Any] | None, kwargs: dict[str, Any]
) -> Array:
    """The array ``open_array`` creates: through :func:`create` (as zarr-python does) when
    ``kwargs`` use its keywords (``compressor``, ``chunk_shape``, ...), else through
    :func:`create_array`, whose keywords (``compressors``, ``shards``, ...) zarrox also takes."""
    if _LEGACY_CREATE_ONLY.intersection(kwargs):
        return create(store=store, path=path, overwrite=overwrite, config=config, **kwargs)
    return create_array(store, name=path, overwrite=overwrite, config=config, **kwargs)


def open_array(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    config: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Open the array at ``path``. In modes ``a``/``w``/``w-`` it is created from
    ``kwargs`` (``shape``, ``dtype``, ...) when missing or overwritten."""
    _check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    if zarr_format is not None:
        kwargs["zarr_format"] = zarr_format
    if mode in ("w", "w-"):
        return _create_for_open(store, path, mode == "w", config, kwargs)
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a" and "shape" in kwargs:
            return _create_for_open(store, path, False, config, kwargs)
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
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Create a group and return it."""
    meta = _new_group_metadata(zarr_format, attributes)
    store = resolve_store(store, storage_options=storage_options, mode="w" if overwrite else "a")
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
        where = f"zarr.json at {path!r}: consolidated_metadata: "
    else:
        key = f"{path}/{ZMETADATA_KEY}" if path else ZMETADATA_KEY
        raw = store.get(key)
        if raw is None:
            return None
        entries = parse_zmetadata(loads_v2(raw, key=ZMETADATA_KEY, path=path), path=path)
        nodes = {rel: m for rel, m in zmetadata_nodes(entries, path=path).items() if rel}
        where = f"{ZMETADATA_KEY} at {path!r}: "
    check_parents(nodes, lambda m: isinstance(m, GroupMetadataV3 | GroupMetadataV2), where)
    return nodes


def open_group(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    attributes: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    use_consolidated: bool | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open the group at ``path`` (either format); modes ``a``/``w``/``w-`` create
    it when needed. Consolidated metadata is used when present (``use_consolidated``
    None), required (True) or ignored (False)."""
    _check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
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
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open a group through its consolidated metadata (which must exist)."""
    return open_group(
        store,
        path=path,
        mode=mode,
        zarr_format=zarr_format,
        use_consolidated=True,
        storage_options=storage_options,
    )


def consolidate_metadata(
    store: Any,
    *,
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Gather the metadata of every node below the group at ``path`` into one
    place: ``.zmetadata`` for a v2 group, ``consolidated_metadata`` in a v3
    group's zarr.json, as zarr-python writes them. Returns the group."""
    store = resolve_store(store, storage_options=storage_options)
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
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group | ArrayView:
    """Open the array or group at ``path`` (either format). When nothing is
    there, modes that may create make an array if ``shape`` is given, else a group.

    Given a TensorStore spec instead of a store (a dict with ``"driver": "zarr3"`` or
    ``"zarr"``, a :class:`zarrox.Spec`, or a spec URL such as ``"file:///a.zarr/|zarr3:"``),
    opens or creates the array as TensorStore does and returns a :class:`zarrox.ArrayView`;
    ``kwargs`` are TensorStore's ``open`` options (``create``, ``shape``, ``dtype``, ...)."""
    if is_spec(store):
        return open_spec(store, **_spec_mode(path, mode, zarr_format), **kwargs)
    _check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
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


def _spec_mode(path: str | None, mode: str, zarr_format: int | None) -> dict[str, bool]:
    """zarr-python's ``mode`` as TensorStore open options (``"a"``, the default, adds none)."""
    if path is not None or zarr_format is not None:
        raise SpecError("path and zarr_format do not apply to a spec: give them in the spec")
    _check_mode(mode)
    return {
        "r": {"read": True, "write": False},
        "r+": {},
        "a": {},
        "w": {"create": True, "delete_existing": True, "open": False},
        "w-": {"create": True, "open": False},
    }[mode]


# -- zarr-python's legacy-style creation and convenience functions ------------------------------

_NOT_USED = (  # accepted by zarr-python's create, warned about and ignored, in its order
    "synchronizer",
    "chunk_store",
    "cache_metadata",
    "cache_attrs",
    "object_codec",
    "read_only",
    "meta_array",
)


def _zarr_format_arg(zarr_version: int | None, zarr_format: int | None) -> int | None:
    """``zarr_format``, or the deprecated ``zarr_version``, as zarr-python reads them."""
    if zarr_format is not None and zarr_version is not None and zarr_format != zarr_version:
        raise ValueError(
            f"zarr_format {zarr_format} does not match zarr_version {zarr_version}, "
            "please only set one"
        )
    if zarr_version is not None:
        warnings.warn("zarr_version is deprecated, use zarr_format", DeprecationWarning, 3)
        return zarr_version
    return zarr_format


def _apply_mode(store: Store, path: str, mode: str) -> None:
    """What zarr-python does to the store when it opens ``path`` in ``mode`` to write
    there: ``w`` empties it, ``w-`` refuses a path holding anything, ``r`` refuses to write."""
    _check_mode(mode)
    prefix = f"{path}/" if path else ""
    if mode == "r":
        raise ReadOnlyError("store was opened in read-only mode and does not support writing")
    if mode == "w-" and store.list_prefix(prefix):
        raise ContainsNodeError(
            f"Cannot create '{path}' with mode 'w-' because it already contains data. "
            "Use mode 'w' to overwrite or 'a' to append."
        )
    if mode == "w":
        store.delete_prefix(prefix)


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


def _parse_shape(shape: Any) -> tuple[int, ...]:
    shape_t = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    for s in shape_t:
        if not isinstance(s, numbers.Integral) or s < 0:
            raise ValueError(f"Expected a non-negative integer. Got {s} instead")
    return tuple(int(s) for s in shape_t)


def _item_size(dtype: Any, zarr_format: int) -> int:
    """The element size zarr-python guesses chunks with: 1 for variable-length types."""
    if zarr_format == 2 and not isinstance(dtype, str) and dtype is not None:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is not None and dt.kind == "O":
            return 1
    name, dt = _resolve_dtype("float64" if dtype is None else dtype, "")
    if name in ("string", "bytes") or dt.kind in "OT":
        return 1
    return max(dt.itemsize, 1)


def create(
    shape: tuple[int, ...] | int,
    *,
    chunks: tuple[int, ...] | int | bool | None = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = DEFAULT_FILL,
    order: Literal["C", "F"] | None = None,
    store: Any = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: Any = None,
    filters: Any = None,
    cache_metadata: bool | None = None,
    cache_attrs: bool | None = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    dimension_separator: Literal[".", "/"] | None = None,
    write_empty_chunks: bool | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_shape: tuple[int, ...] | int | None = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    mode: Mode | None = None,
    data: Any = None,
) -> Array:
    """Create an array (zarr-python's legacy-style ``create``).

    ``chunks`` (or ``chunk_shape``, not both) is normalized as by :func:`normalize_chunks`
    (a false value guesses, as in zarr-python). Zarr format 2 takes ``compressor``
    (``"auto"``: zstd level 0), ``filters``, ``order`` and ``dimension_separator``;
    format 3 takes ``codecs``, ``chunk_key_encoding`` (a dict or a ``(name, separator)``
    tuple) and ``dimension_names``; giving one format's arguments to the other is a
    ValueError. ``fill_value`` left out is the data type's default; None is too, except
    in format 2, where it is stored as ``null``. The arguments zarr-python ignores
    (``synchronizer``, ``chunk_store``, ``cache_metadata``, ``cache_attrs``,
    ``object_codec``, ``read_only``, ``meta_array``) are ignored with its warning;
    ``write_empty_chunks`` is deprecated for ``config``. ``data`` is written to the new array.
    """
    zarr_format = _zarr_format_arg(zarr_version, zarr_format) or 3
    given = locals()
    for name in _NOT_USED:
        if given[name] is not None:
            warnings.warn(f"{name} is not yet implemented", RuntimeWarning, 2)
    if write_empty_chunks is not None:
        _warn_write_empty_chunks_kwarg()
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    _apply_mode(store, path, "a" if mode is None else mode)
    array_config = dict(config or {})
    if write_empty_chunks is not None:
        if config is not None:
            warnings.warn(
                "Both write_empty_chunks and config keyword arguments are set. This is "
                "redundant. When both are set, write_empty_chunks will be used instead of "
                "the value in config.",
                UserWarning,
                2,
            )
        array_config["write_empty_chunks"] = write_empty_chunks
    shape_t = _parse_shape(shape)
    if chunks is not None and chunk_shape is not None:
        raise ValueError("Only one of chunk_shape or chunks can be provided.")
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")
    itemsize = _item_size(dtype, zarr_format)
    chunk_grid = normalize_chunks(chunks if chunks else chunk_shape, shape_t, itemsize)
    dtype = "float64" if dtype is None else dtype
    common: dict[str, Any] = dict(
        name=path,
        shape=shape_t,
        dtype=dtype,
        chunks=chunk_grid,
        fill_value=fill_value,
        zarr_format=zarr_format,
        attributes=attributes,
        overwrite=overwrite,
        config=array_config,
    )
    if zarr_format == 3:
        if dimension_separator is not None:
            raise ValueError(
                "dimension_separator cannot be used for arrays with zarr_format 3. "
                "Use chunk_key_encoding instead."
            )
        if filters is not None:
            raise ValueError(
                "filters cannot be used for arrays with zarr_format 3. "
                "Use array-to-array codecs instead."
            )
        if not (isinstance(compressor, str) and compressor == "auto"):
            raise ValueError(
                "compressor cannot be used for arrays with zarr_format 3. "
                "Use bytes-to-bytes codecs instead."
            )
        if order is not None:
            _warn_order_kwarg()
        if isinstance(chunk_key_encoding, tuple):
            chunk_key_encoding = {"name": chunk_key_encoding[0], "separator": chunk_key_encoding[1]}
        array = create_array(
            store,
            codecs=None if codecs is None else list(codecs),
            chunk_key_encoding=chunk_key_encoding,
            dimension_names=list(dimension_names) if dimension_names else None,
            **common,
        )
    else:
        if codecs is not None:
            raise ValueError(
                "codecs cannot be used for arrays with zarr_format 2. "
                "Use filters and compressor instead."
            )
        if chunk_key_encoding is not None:
            raise ValueError(
                "chunk_key_encoding cannot be used for arrays with zarr_format 2. "
                "Use dimension_separator instead."
            )
        if dimension_names is not None:
            raise ValueError("dimension_names cannot be used for arrays with zarr_format 2.")
        if order is None:
            order = array_config.get("order", global_config["array.order"])
        else:
            array_config["order"] = order
        array = create_array(
            store,
            compressors=compressor,
            filters=filters,
            order=order,
            dimension_separator=dimension_separator,
            **common,
        )
    if data is not None:
        array[...] = data
    return array


def _warn_write_empty_chunks_kwarg() -> None:
    warnings.warn(
        "The `write_empty_chunks` keyword argument is deprecated and will be removed in "
        "future versions. To control whether empty chunks are written to storage, either use "
        "the `config` keyword argument, as in `config={'write_empty_chunks': True}`,or change "
        "the global 'array.write_empty_chunks' configuration variable.",
        RuntimeWarning,
        3,
    )


def _warn_order_kwarg() -> None:
    warnings.warn(
        "The `order` keyword argument has no effect for Zarr format 3 arrays. To control the "
        "memory layout of the array, either use the `config` keyword argument, as in "
        "`config={'order': 'C'}`,or change the global 'array.order' configuration variable.",
        RuntimeWarning,
        3,
    )


def empty(shape: tuple[int, ...] | int, **kwargs: Any) -> Array:
    """An array whose unwritten elements read as its fill value (the type's default
    unless given); ``kwargs`` go to :func:`create`."""
    return create(shape=shape, **kwargs)


def zeros(shape: tuple[int, ...] | int, **kwargs: Any) -> Array:
    """An array with fill value 0; ``kwargs`` go to :func:`create`."""
    return create(shape=shape, fill_value=0, **kwargs)


def ones(shape: tuple[int, ...] | int, **kwargs: Any) -> Array:
    """An array with fill value 1; ``kwargs`` go to :func:`create`."""
    return create(shape=shape, fill_value=1, **kwargs)


def full(shape: tuple[int, ...] | int, fill_value: Any, **kwargs: Any) -> Array:
    """An array with fill value ``fill_value``; ``kwargs`` go to :func:`create`."""
    return create(shape=shape, fill_value=fill_value, **kwargs)


def _shape_chunks(a: Any) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    shape = chunks = None
    if hasattr(a, "shape") and isinstance(a.shape, tuple):
        shape = a.shape
        if hasattr(a, "chunks") and isinstance(a.chunks, tuple) and len(a.chunks) == len(shape):
            chunks = a.chunks
        elif hasattr(a, "chunklen"):  # bcolz carray
            chunks = (a.chunklen,) + a.shape[1:]
    return shape, chunks


def _like_args(a: Any) -> dict[str, Any]:
    """The arguments of :func:`create` that make an array like ``a``, as zarr-python
    takes them: shape, chunks and dtype, and for a zarrox array its encoding
    (v2: order, compressor, filters; v3: codecs), not its attributes or names."""
    new: dict[str, Any] = {}
    shape, chunks = _shape_chunks(a)
    if shape is not None:
        new["shape"] = shape
    if chunks is not None:
        new["chunks"] = chunks
    if hasattr(a, "dtype"):
        new["dtype"] = a.dtype
    if isinstance(a, Array):
        meta = a.metadata
        if isinstance(meta, ArrayMetadataV2):
            new["order"] = a.order
            new["compressor"] = meta.compressor
            new["filters"] = meta.filters
        else:
            new["codecs"] = meta.codecs  # type: ignore[union-attr]
    return new


def empty_like(a: Any, **kwargs: Any) -> Array:
    """An empty array like ``a`` (with its fill value when ``a`` is a zarrox array)."""
    like = _like_args(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    return empty(**like)


def zeros_like(a: Any, **kwargs: Any) -> Array:
    """An array of zeros like ``a``."""
    return zeros(**(_like_args(a) | kwargs))


def ones_like(a: Any, **kwargs: Any) -> Array:
    """An array of ones like ``a``."""
    return ones(**(_like_args(a) | kwargs))


def full_like(a: Any, **kwargs: Any) -> Array:
    """An array like ``a`` filled with ``fill_value`` (by default ``a``'s, when it is a
    zarrox array)."""
    like = _like_args(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    return full(**like)


def open_like(a: Any, path: str, **kwargs: Any) -> Array:
    """Open the array at ``path``, or in modes ``a``/``w``/``w-`` create it like ``a``
    (zarr-python's ``open_like``: ``mode`` left out only opens an existing array)."""
    like = _like_args(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    mode = like.pop("mode", None)
    zarr_format = _zarr_format_arg(like.pop("zarr_version", None), like.pop("zarr_format", None))
    store = resolve_store(
        like.pop("store", None), storage_options=like.pop("storage_options", None), mode=mode
    )
    path = normalize_path(path)
    if mode not in ("w", "w-"):
        try:
            return open_array(
                store, path=path, mode="r" if mode == "r" else "r+", zarr_format=zarr_format
            )
        except ArrayNotFoundError:
            if mode != "a":
                raise
    return create(
        store=store,
        path=path,
        mode=mode,
        zarr_format=zarr_format or 3,
        overwrite=mode == "w",
        **like,
    )


def array(data: Any, **kwargs: Any) -> Array:
    """A new array holding ``data`` (shape, dtype and, when it has them, chunks taken from
    it unless given); ``kwargs`` go to :func:`create`, ``shape`` among them being ignored."""
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asanyarray(data)
    if kwargs.get("dtype") is None:
        kwargs["dtype"] = data.dtype
    shape, chunks = _shape_chunks(data)
    kwargs["shape"] = shape
    if kwargs.get("chunks") is None:
        kwargs["chunks"] = chunks
    if kwargs.pop("read_only", False):
        raise ValueError("read_only=True is no longer supported when creating new arrays")
    z = create(**kwargs)
    z[...] = data
    return z


def group(
    store: Any = None,
    *,
    overwrite: bool = False,
    chunk_store: Any = None,
    cache_attrs: bool | None = None,
    synchronizer: Any = None,
    path: str | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open the group at ``path``, creating it (with ``attributes``) when missing, or
    anew with ``overwrite=True`` (zarr-python's ``group``). ``chunk_store``,
    ``cache_attrs``, ``synchronizer`` and ``meta_array`` are ignored with a warning."""
    zarr_format = _zarr_format_arg(zarr_version, zarr_format)
    for name, value in (
        ("cache_attrs", cache_attrs),
        ("synchronizer", synchronizer),
        ("meta_array", meta_array),
        ("chunk_store", chunk_store),
    ):
        if value is not None:
            warnings.warn(f"{name} is not yet implemented", RuntimeWarning, 2)
    return open_group(
        store,
        path=path,
        mode="w" if overwrite else "a",
        attributes=attributes,
        zarr_format=zarr_format,
        storage_options=storage_options,
    )


#: the keywords zarr-python's save_array passes on to the array it creates
_SAVE_ARRAY_KWARGS = frozenset(
    {
        "fill_value",
        "attributes",
        "chunk_shape",
        "chunk_key_encoding",
        "codecs",
        "dimension_names",
        "dimension_separator",
        "order",
        "filters",
        "compressor",
        "config",
    }
)

_NDARRAY_LIKE = (
    "dtype",
    "ndim",
    "size",
    "shape",
    "__len__",
    "__getitem__",
    "__setitem__",
    "__array__",
    "reshape",
    "view",
    "astype",
    "fill",
    "copy",
    "transpose",
    "ravel",
    "all",
)


def _is_ndarray_like(value: Any) -> bool:
    """zarr-python's ``NDArrayLike`` check (numpy arrays pass, numpy scalars do not)."""
    return all(hasattr(value, name) for name in _NDARRAY_LIKE)


def save_array(
    store: Any,
    arr: Any,
    *,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Save a numpy array as a new array at ``path`` (zarr-python's ``save_array``).
    ``mode`` (default ``a``: fail if a node is there) and ``overwrite`` control what
    happens to existing data; the other ``kwargs`` are those of :func:`create` that
    describe the array (``compressor``, ``codecs``, ``fill_value``, ...)."""
    zarr_format = _zarr_format_arg(zarr_version, zarr_format) or 3
    if not _is_ndarray_like(arr):
        raise TypeError("arr argument must be numpy or other NDArrayLike array")
    mode = kwargs.pop("mode", "a")
    overwrite = kwargs.pop("overwrite", None) or mode == "w"
    for key in kwargs:
        if key not in _SAVE_ARRAY_KWARGS:
            raise TypeError(f"save_array() got an unexpected keyword argument {key!r}")
    store = resolve_store(store, storage_options=storage_options)
    path = normalize_path(path)
    _apply_mode(store, path, mode)
    new = create(
        store=store,
        path=path,
        zarr_format=zarr_format,
        shape=arr.shape,
        dtype=arr.dtype,
        chunks=getattr(arr, "chunks", None),
        overwrite=overwrite,
        **kwargs,
    )
    new[...] = arr


def save_group(
    store: Any,
    *args: Any,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Save numpy arrays into the group at ``path``, which is emptied first: positional
    ones as ``arr_0``, ``arr_1``, ..., keyword ones under their names (zarr-python's
    ``save_group``)."""
    zarr_format = _zarr_format_arg(zarr_version, zarr_format) or 3
    for arg in args:
        if not _is_ndarray_like(arg):
            raise TypeError(
                "All arguments must be numpy or other NDArrayLike arrays (except store, "
                "path, storage_options, and zarr_format)"
            )
    for k, v in kwargs.items():
        if not _is_ndarray_like(v):
            raise TypeError(f"Keyword argument '{k}' must be a numpy or other NDArrayLike array")
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    store = resolve_store(store, storage_options=storage_options)
    path = normalize_path(path)
    _apply_mode(store, path, "w")
    named = {f"arr_{i}": arr for i, arr in enumerate(args)} | kwargs
    for name, arr in named.items():
        save_array(store, arr, zarr_format=zarr_format, path=join(path, name))


def save(
    store: Any,
    *args: Any,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    **kwargs: Any,
) -> None:
    """Save one numpy array (:func:`save_array`) or several (:func:`save_group`)."""
    zarr_format = _zarr_format_arg(zarr_version, zarr_format)
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=zarr_format, path=path)
    else:
        save_group(store, *args, zarr_format=zarr_format, path=path, **kwargs)


class LazyLoader(Mapping[str, Any]):
    """The arrays of a group by name, each read into memory when it is looked up
    (what :func:`load` returns for a group)."""

    def __init__(self, group: Group) -> None:
        self._group = group
        self._names = group.array_keys()

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        return self._group[name][...]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __repr__(self) -> str:
        return f"<LazyLoader: {', '.join(self._names)}>"


def load(
    store: Any,
    path: str | None = None,
    zarr_format: int | None = None,
    zarr_version: int | None = None,
) -> Any:
    """Read the array at ``path`` into a numpy array; for a group, a read-only mapping
    of its arrays' names to their data, each read when looked up."""
    zarr_format = _zarr_format_arg(zarr_version, zarr_format)
    node = open(store, path=path, mode="r", zarr_format=zarr_format)
    if isinstance(node, Array):
        return node[...]
    return LazyLoader(node)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> Any:
    """The hierarchy below ``grp`` (deprecated, as in zarr-python: use ``grp.tree()``)."""
    warnings.warn("Use Group.tree instead.", DeprecationWarning, 2)
    return grp.tree(expand=expand, level=level)
