"""Creating arrays and groups, and opening them in a mode that may create them: the bodies of
zarr-python's creation functions (:mod:`zarrox.api` is their public front).

Everything here works on metadata and the store: it decides what a node is, prepares the path
(overwriting, missing parent groups) and says what to make as an :class:`ArrayPlan` or a
:class:`GroupPlan`, which :meth:`zarrox.Array._make` and :meth:`zarrox.Group._make` turn into
nodes (storing a new array's metadata once the array is made, then writing its values). So
``api``, ``array``, ``group``, ``hierarchy``, ``convert`` and ``cli`` all create nodes through
this module, which imports none of them.
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from zarrox.config import config as global_config
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    ReadOnlyError,
    UnsupportedError,
    ZarroxError,
)
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, build_codecs, parse_node
from zarrox.metadata._checks import copy_json
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.metadata.v2 import DEFAULT_FILL, ArrayMetadataV2, GroupMetadataV2
from zarrox.metadata.v3 import resolve_data_type
from zarrox.nodes.discover import node_exists, read_consolidated, read_node
from zarrox.nodes.node import (
    ArrayMetadata,
    GroupMetadata,
    Node,
    NodeMetadata,
    is_array,
    normalize_path,
    write_node,
)
from zarrox.nodes.node import zarr_format as format_of
from zarrox.storage import Store, resolve_store


@dataclass(frozen=True)
class ArrayPlan:
    """An array to make (:meth:`zarrox.Array._make`): where, its metadata, its runtime
    configuration (``config``), whether it opens read-only; ``new``: its metadata is to be
    stored once the array is made (False for an array opened as it is); ``values``: what to
    write into it then, copied a block of whole shards (or chunks) at a time
    (``copy_in_blocks``, as ``from_array`` does) or assigned at once."""

    store: Store
    path: str
    metadata: ArrayMetadata
    config: dict[str, Any] | None = None
    read_only: bool = False
    new: bool = True
    values: Any = None
    copy_in_blocks: bool = False


@dataclass(frozen=True)
class GroupPlan:
    """A group to make (:meth:`zarrox.Group._make`), whose metadata is already stored: where,
    its metadata, whether it opens read-only, its consolidated metadata (node metadata by
    path relative to it) when it is used."""

    store: Store
    path: str
    metadata: GroupMetadata
    read_only: bool = False
    consolidated: Mapping[str, NodeMetadata] | None = None


def _is_zarrox_array(value: Any) -> bool:
    return isinstance(value, Node) and is_array(value._metadata)


Mode = Literal["r", "r+", "a", "w", "w-"]


_MODES = ("r", "r+", "a", "w", "w-")


def check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")


def zarr_format_arg(
    zarr_version: int | None, zarr_format: int | None, stacklevel: int = 3
) -> int | None:
    """``zarr_format``, or the deprecated ``zarr_version``, as zarr-python reads them."""
    if zarr_format is not None and zarr_version is not None and zarr_format != zarr_version:
        raise ValueError(
            f"zarr_format {zarr_format} does not match zarr_version {zarr_version}, "
            "please only set one"
        )
    if zarr_version is not None:
        warnings.warn("zarr_version is deprecated, use zarr_format", DeprecationWarning, stacklevel)
        return zarr_version
    return zarr_format


def apply_mode(store: Store, path: str, mode: str) -> None:
    """What zarr-python does to the store when it opens ``path`` in ``mode`` to write
    there: ``w`` empties it, ``w-`` refuses a path holding anything, ``r`` refuses to write."""
    check_mode(mode)
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
    name, dt = resolve_dtype("float64" if dtype is None else dtype, "")
    if name in ("string", "bytes") or dt.kind in "OT":
        return 1
    return max(dt.itemsize, 1)


def resolve_dtype(dtype: Any, path: str) -> tuple[Any, np.dtype[Any]]:
    """(v3 data type JSON, numpy dtype) of what a user passes as ``dtype`` (see
    :func:`resolve_data_type`)."""
    info = resolve_data_type(dtype, path)
    return copy_json(info.json), info.dtype


def new_group_metadata(zarr_format: int, attributes: dict[str, Any] | None) -> NodeMetadata:
    if zarr_format == 2:
        return GroupMetadataV2(attributes=dict(attributes or {}))
    if zarr_format == 3:
        return GroupMetadataV3(attributes=dict(attributes or {}))
    raise UnsupportedError(f"zarr_format must be 2 or 3, got {zarr_format!r}")


def ensure_parents(store: Store, path: str, zarr_format: int) -> None:
    """Create group metadata for every ancestor of ``path`` that has none in ``zarr_format``,
    as zarr-python does (a group of the other format there gets one of this format beside
    it)."""
    if not path:
        return  # the root has no ancestors (a v2 .zgroup there would sit beside the .zarray)
    parts = path.split("/")[:-1]
    for i in range(len(parts) + 1):
        parent = "/".join(parts[:i])
        meta = read_node(store, parent, zarr_format)
        if meta is None:
            write_node(store, parent, new_group_metadata(zarr_format, None))
        elif is_array(meta):
            raise ContainsArrayError(f"cannot create a node below the array at '{parent}'")


def prepare_node_path(store: Store, path: str, overwrite: bool, zarr_format: int) -> None:
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
    ensure_parents(store, path, zarr_format)


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
) -> ArrayPlan:
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
        return array_from(
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
        return _new_array_v2(
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
    data_type, dt = resolve_dtype(dtype, path)
    rect_chunks = rectilinear_spec(chunks, shape_t, "chunks")
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
            grid_shape, codecs = sharding_codecs(
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
    prepare_node_path(store, path, overwrite, 3)
    return ArrayPlan(store, path, meta, config=config)


def _new_array_v2(
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
) -> ArrayPlan:
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
    prepare_node_path(store, path, overwrite, 2)
    return ArrayPlan(store, path, meta, config=config)


def _is_zarr_array(data: Any) -> bool:
    """Whether ``data`` is a Zarr array (zarrox's or zarr-python's), whose encoding
    ``from_array`` can keep."""
    if _is_zarrox_array(data):
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


def array_from(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Literal["auto", "keep"] | int | Sequence[int] = "keep",
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
) -> ArrayPlan:
    """A new array like ``data`` (zarr-python's ``from_array``), holding its values unless
    ``write_data=False``.

    ``data`` is a Zarr array (zarrox's or zarr-python's) or any array-like. ``"keep"``
    (the default of ``chunks``, ``shards``, ``filters``, ``compressors`` and ``serializer``)
    takes the source array's encoding (codecs only when the Zarr format stays the same), or
    for other data the defaults; ``fill_value=None`` takes the source array's fill value. The
    values are copied a block of whole destination shards (or chunks) at a time.
    """
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
    if _is_zarrox_array(data) and data.metadata.data_type in ("string", "bytes"):
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
    return replace(new, values=data, copy_in_blocks=True) if write_data else new


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
    return RectilinearGrid.from_edges(dims)


_NOT_USED = (  # accepted by zarr-python's create, warned about and ignored, in its order
    "synchronizer",
    "chunk_store",
    "cache_metadata",
    "cache_attrs",
    "object_codec",
    "read_only",
    "meta_array",
)


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
    _stacklevel: int = 2,
) -> ArrayPlan:
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

    ``_stacklevel``: the frame the warnings point at, counted from this function's caller
    (1), as ``warnings.warn`` counts them: 2 is the caller of a public front that calls
    this function.
    """
    zarr_format = zarr_format_arg(zarr_version, zarr_format, _stacklevel + 2) or 3
    given = locals()
    for name in _NOT_USED:
        if given[name] is not None:
            warnings.warn(f"{name} is not yet implemented", RuntimeWarning, _stacklevel + 1)
    if write_empty_chunks is not None:
        _warn_write_empty_chunks_kwarg(_stacklevel + 2)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    apply_mode(store, path, "a" if mode is None else mode)
    array_config = dict(config or {})
    if write_empty_chunks is not None:
        if config is not None:
            warnings.warn(
                "Both write_empty_chunks and config keyword arguments are set. This is "
                "redundant. When both are set, write_empty_chunks will be used instead of "
                "the value in config.",
                UserWarning,
                _stacklevel + 1,
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
            _warn_order_kwarg(_stacklevel + 2)
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
    return array if data is None else replace(array, values=data)


def _warn_write_empty_chunks_kwarg(stacklevel: int) -> None:
    warnings.warn(
        "The `write_empty_chunks` keyword argument is deprecated and will be removed in "
        "future versions. To control whether empty chunks are written to storage, either use "
        "the `config` keyword argument, as in `config={'write_empty_chunks': True}`,or change "
        "the global 'array.write_empty_chunks' configuration variable.",
        RuntimeWarning,
        stacklevel,
    )


def _warn_order_kwarg(stacklevel: int) -> None:
    warnings.warn(
        "The `order` keyword argument has no effect for Zarr format 3 arrays. To control the "
        "memory layout of the array, either use the `config` keyword argument, as in "
        "`config={'order': 'C'}`,or change the global 'array.order' configuration variable.",
        RuntimeWarning,
        stacklevel,
    )


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


def _array_to_create(
    store: Store, path: str, overwrite: bool, config: dict[str, Any] | None, kwargs: dict[str, Any]
) -> ArrayPlan:
    """The array ``open_array`` creates: through :func:`create` (as zarr-python does) when
    ``kwargs`` use its keywords (``compressor``, ``chunk_shape``, ...), else through
    :func:`create_array`, whose keywords (``compressors``, ``shards``, ...) zarrox also takes."""
    if _LEGACY_CREATE_ONLY.intersection(kwargs):
        # the warnings point at the caller of array_to_open (api.open_array, Array.open)
        return create(
            store=store, path=path, overwrite=overwrite, config=config, _stacklevel=3, **kwargs
        )
    return create_array(store, name=path, overwrite=overwrite, config=config, **kwargs)


def array_to_open(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    config: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> ArrayPlan:
    """Open the array at ``path``. In modes ``a``/``w``/``w-`` it is created from
    ``kwargs`` (``shape``, ``dtype``, ...) when missing or overwritten."""
    check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    if zarr_format is not None:
        kwargs["zarr_format"] = zarr_format
    if mode in ("w", "w-"):
        return _array_to_create(store, path, mode == "w", config, kwargs)
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a" and "shape" in kwargs:
            return _array_to_create(store, path, False, config, kwargs)
        raise ArrayNotFoundError(f"no array found at '{path}' in {store!r}")
    if not is_array(meta):
        raise ArrayNotFoundError(f"the node at '{path}' in {store!r} is a group, not an array")
    return opened_array(store, path, meta, mode, config)


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
    if _is_zarrox_array(a) and isinstance(a.metadata, ArrayMetadataV2 | ArrayMetadataV3):
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


def is_ndarray_like(value: Any) -> bool:
    """zarr-python's ``NDArrayLike`` check (numpy arrays pass, numpy scalars do not)."""
    return all(hasattr(value, name) for name in _NDARRAY_LIKE)


def array_to_save(
    store: Any,
    arr: Any,
    *,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> ArrayPlan:
    """Save a numpy array as a new array at ``path`` (zarr-python's ``save_array``).
    ``mode`` (default ``a``: fail if a node is there) and ``overwrite`` control what
    happens to existing data; the other ``kwargs`` are those of :func:`create` that
    describe the array (``compressor``, ``codecs``, ``fill_value``, ...)."""
    zarr_format = zarr_format_arg(zarr_version, zarr_format, 4) or 3
    if not is_ndarray_like(arr):
        raise TypeError("arr argument must be numpy or other NDArrayLike array")
    mode = kwargs.pop("mode", "a")
    overwrite = kwargs.pop("overwrite", None) or mode == "w"
    for key in kwargs:
        if key not in _SAVE_ARRAY_KWARGS:
            raise TypeError(f"save_array() got an unexpected keyword argument {key!r}")
    store = resolve_store(store, storage_options=storage_options)
    path = normalize_path(path)
    apply_mode(store, path, mode)
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
    return replace(new, values=arr)


def new_group(
    store: Any = None,
    *,
    path: str | None = None,
    attributes: dict[str, Any] | None = None,
    overwrite: bool = False,
    zarr_format: int = 3,
    storage_options: dict[str, Any] | None = None,
) -> GroupPlan:
    """Create a group and return it."""
    meta = new_group_metadata(zarr_format, attributes)
    store = resolve_store(store, storage_options=storage_options, mode="w" if overwrite else "a")
    path = normalize_path(path)
    prepare_node_path(store, path, overwrite, zarr_format)
    write_node(store, path, meta)
    return GroupPlan(store, path, meta)  # type: ignore[arg-type]


def group_to_open(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    attributes: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    use_consolidated: bool | None = None,
    storage_options: dict[str, Any] | None = None,
    cache_attrs: bool | None = None,
    synchronizer: Any = None,
    chunk_store: Any = None,
    meta_array: Any = None,
    zarr_version: int | None = None,
) -> GroupPlan:
    """Open the group at ``path`` (either format); modes ``a``/``w``/``w-`` create
    it when needed. Consolidated metadata is used when present (``use_consolidated``
    None), required (True) or ignored (False). ``cache_attrs``, ``synchronizer``,
    ``chunk_store`` and ``meta_array`` are accepted and unused, as in zarr-python 3;
    ``zarr_version`` is the deprecated name of ``zarr_format``."""
    zarr_format = zarr_format_arg(zarr_version, zarr_format, 4)
    check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        return new_group(
            store,
            path=path,
            attributes=attributes,
            overwrite=mode == "w",
            zarr_format=zarr_format or 3,
        )
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a":
            return new_group(store, path=path, attributes=attributes, zarr_format=zarr_format or 3)
        raise GroupNotFoundError(f"no group found at '{path}' in {store!r}")
    return opened_group(store, path, meta, mode, use_consolidated)


def opened_array(
    store: Store, path: str, meta: NodeMetadata, mode: str, config: dict[str, Any] | None = None
) -> ArrayPlan:
    """The array whose metadata ``meta`` was read at ``path``, opened in ``mode``."""
    if not is_array(meta):
        raise ArrayNotFoundError(f"the node at '{path}' in {store!r} is a group, not an array")
    return ArrayPlan(store, path, meta, config=config, read_only=mode == "r", new=False)  # type: ignore[arg-type]


def opened_group(
    store: Store, path: str, meta: NodeMetadata, mode: str, use_consolidated: bool | None
) -> GroupPlan:
    """The group whose metadata ``meta`` was read at ``path``, opened in ``mode`` with its
    consolidated metadata (used when present with ``use_consolidated`` None, required with
    True, ignored with False)."""
    if is_array(meta):
        if mode == "a":  # creating the group: the array is in the way, as zarr-python says
            raise ContainsArrayError(f"an array already exists at '{path}' in {store!r}")
        raise GroupNotFoundError(f"the node at '{path}' in {store!r} is an array, not a group")
    consolidated = None if use_consolidated is False else read_consolidated(store, path, meta)
    if use_consolidated and consolidated is None:
        raise MetadataError(f"the group at '{path}' in {store!r} has no consolidated metadata")
    return GroupPlan(store, path, meta, read_only=mode == "r", consolidated=consolidated)  # type: ignore[arg-type]


def _json_scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "value"):  # enums
        return value.value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"cannot describe {value!r} as JSON")


def _as_metadata(value: Any, path: str) -> NodeMetadata:
    """zarrox metadata for a node of ``create_hierarchy``: zarrox's own metadata objects, or
    zarr-python's (``GroupMetadata``, ``ArrayV3Metadata``, ``ArrayV2Metadata``: anything with
    ``to_dict()``), or such a document as a dict."""
    if isinstance(value, ArrayMetadataV3 | GroupMetadataV3 | ArrayMetadataV2 | GroupMetadataV2):
        return value
    doc = value.to_dict() if callable(getattr(value, "to_dict", None)) else value
    if not isinstance(doc, Mapping):
        raise TypeError(f"node '{path}': expected array or group metadata, got {value!r}")
    # tuples, numpy scalars and enums of zarr-python's documents -> plain JSON
    doc = json.loads(json.dumps(dict(doc), default=_json_scalar))
    fmt = doc.get("zarr_format", 3)
    if fmt == 3:
        doc.setdefault("node_type", "group")
        return parse_node(doc, path=path)
    if fmt == 2:
        attrs = doc.pop("attributes", None) or {}
        doc.pop("node_type", None)
        if "shape" in doc:
            return ArrayMetadataV2.from_json(doc, attrs, path=path)
        return GroupMetadataV2(attributes=dict(attrs))
    raise ValueError(f"node '{path}': zarr_format must be 2 or 3, got {fmt!r}")


def write_hierarchy(
    store: Store, nodes: Mapping[str, Any], overwrite: bool = False
) -> Iterator[tuple[str, NodeMetadata]]:
    """Store the arrays and groups ``nodes`` describes (metadata by path) and every group
    above them that is missing (zarr-python's ``create_hierarchy``); yields (path, metadata)
    as each is stored.

    All nodes must have the same Zarr format. A group that already exists where only an
    implied parent group is needed is kept; an explicit node where one exists is an error
    (ContainsArrayError / ContainsGroupError) unless ``overwrite``, which replaces it.
    """
    explicit = {normalize_path(k): _as_metadata(v, k) for k, v in nodes.items()}
    if not explicit:
        return
    formats = {format_of(m) for m in explicit.values()}
    if len(formats) != 1:
        raise ValueError(f"all nodes must have the same zarr_format, got {sorted(formats)}")
    fmt = formats.pop()
    implied: set[str] = set()
    for key in explicit:
        parts = key.split("/") if key else []
        for i in range(len(parts)):
            parent = "/".join(parts[:i])
            if parent in explicit:
                if is_array(explicit[parent]):
                    raise ValueError(
                        f"The node at {parent} contains other nodes, but it is not a Zarr "
                        "group. This is invalid. Only Zarr groups can contain other nodes."
                    )
            else:
                implied.add(parent)
    to_write: dict[str, NodeMetadata] = {}
    for key in sorted(implied, key=lambda k: (k.count("/"), k) if k else (-1, k)):
        existing = read_node(store, key, fmt)
        if existing is None:
            to_write[key] = new_group_metadata(fmt, None)
        elif is_array(existing):
            raise ContainsArrayError(f"An array exists in store {store!r} at path {key!r}.")
    for key, meta in explicit.items():
        existing = read_node(store, key, fmt)
        if existing is not None:
            if overwrite:
                store.delete_prefix(key + "/" if key else "")
            elif is_array(existing):
                raise ContainsArrayError(f"An array exists in store {store!r} at path {key!r}.")
            else:
                raise ContainsGroupError(f"A group exists in store {store!r} at path {key!r}.")
        to_write[key] = meta
    for key in sorted(to_write, key=lambda k: (k.count("/"), k) if k else (-1, k)):
        meta = to_write[key]
        write_node(store, key, meta)
        yield key, meta
