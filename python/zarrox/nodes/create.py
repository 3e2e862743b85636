"""Creating arrays and groups, and opening them in a mode that may create them: the bodies of
zarr-python's creation functions (:mod:`zarrox.api` is their public front).

Everything here works on metadata and the store: it decides what a node is, prepares the path
(overwriting, missing parent groups) and says what to make as an :class:`ArrayPlan` or a
:class:`GroupPlan`, which :meth:`zarrox.Array._make` and :meth:`zarrox.Group._make` turn into
nodes (storing a new array's metadata once the array is made, then writing its values). So
``api``, ``array``, ``group``, ``hierarchy``, ``convert`` and ``cli`` all create nodes through
this module, which imports none of them.

Its parts, by concern: :mod:`~zarrox.nodes.plans` (what to make), :mod:`~zarrox.nodes.modes`
(open modes, ``zarr_format``), :mod:`~zarrox.nodes.chunks` (chunk guessing, ``chunks`` and
``dtype`` arguments), :mod:`~zarrox.nodes.place` (parent groups, overwriting),
:mod:`~zarrox.nodes.sharding` and :mod:`~zarrox.nodes.rectilinear` (shard and rectilinear
chunk specifications), :mod:`~zarrox.nodes.v2_create` (v2 arrays), :mod:`~zarrox.nodes.like`
(``*_like`` arguments, arrays given as data) and :mod:`~zarrox.nodes.write_hierarchy`
(``create_hierarchy``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from zarrox.config import config as global_config
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    GroupNotFoundError,
    MetadataError,
    UnsupportedError,
    in_node,
    names_node,
)
from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.v2 import DEFAULT_FILL
from zarrox.nodes.chunks import (
    guess_chunks,
    item_size,
    normalize_chunks,
    parse_shape,
    resolve_dtype,
)
from zarrox.nodes.discover import read_consolidated, read_node
from zarrox.nodes.like import (
    is_zarr_array,
    is_zarrox_array,
    kept_encoding,
)
from zarrox.nodes.modes import Mode, apply_mode, check_mode, zarr_format_arg
from zarrox.nodes.node import (
    NodeMetadata,
    is_array,
    normalize_path,
    write_node,
)
from zarrox.nodes.place import new_group_metadata, prepare_node_path
from zarrox.nodes.plans import ArrayPlan, GroupPlan
from zarrox.nodes.rectilinear import rectilinear_spec
from zarrox.nodes.sharding import sharding_codecs
from zarrox.nodes.v2_create import new_array_v2
from zarrox.storage import Store, resolve_store


def _check_shape_and_dtype(data: Any, shape: Any, dtype: Any) -> None:
    """``create_array``'s rule: ``data`` gives the shape and data type, else both are given."""
    if data is not None:
        for name, value in (("shape", shape), ("dtype", dtype)):
            if value is not None:
                raise ValueError(
                    f"The data parameter was used, but the {name} parameter was also used. "
                    f"This is an error. Either use the data parameter, or the {name} parameter, "
                    "but not both."
                )
    elif shape is None:
        raise ValueError(
            "The data parameter was set to None, but shape was not specified. "
            "Either provide a value for data, or specify shape."
        )
    elif dtype is None:
        raise ValueError(
            "The data parameter was set to None, but dtype was not specified. "
            "Either provide an array-like value for data, or specify dtype."
        )


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    """``create_array``'s ``shape`` (an int or a sequence of them) as a checked tuple."""
    shape_t = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape_t):
        raise ValueError(f"shape must be non-negative, got {shape_t}")
    return shape_t


def _chunk_shape_v3(
    chunks: Any, shape: tuple[int, ...], itemsize: int, sharded: bool, path: str
) -> Any:
    """The (inner) chunk shape, or rectilinear grid, ``create_array`` makes of ``chunks``."""
    rect_chunks = rectilinear_spec(chunks, shape, "chunks")
    if rect_chunks is not None:
        if sharded:
            raise ValueError(
                "chunks must be regular when the array is sharded; give the shards edges instead"
            )
        return rect_chunks
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunk_shape = guess_chunks(shape, itemsize)
    elif isinstance(chunks, int | np.integer):
        chunk_shape = (int(chunks),) * len(shape)
    else:
        chunk_shape = tuple(int(c) for c in chunks)
    if len(chunk_shape) != len(shape) or any(c <= 0 for c in chunk_shape):
        raise ValueError(f"array '{path}': chunks {chunk_shape} do not fit shape {shape}")
    return chunk_shape


def _array_metadata_v3(
    path: str,
    shape: tuple[int, ...],
    dtype: Any,
    chunks: Any,
    shards: Any,
    order: str | None,
    fill_value: Any,
    encoding: dict[str, Any],
    attributes: dict[str, Any] | None,
    dimension_names: Sequence[str | None] | None,
    chunk_key_encoding: dict[str, Any] | None,
) -> ArrayMetadataV3:
    """The metadata of a new v3 array; ``encoding``: its ``filters``, ``serializer``,
    ``compressors`` and ``codecs`` (with ``shards``, the inner chunks' codecs)."""
    if order is not None and order != "C":
        raise ValueError("order applies to zarr_format=2; for v3 use a transpose filter")
    data_type, dt = resolve_dtype(dtype, path)
    chunk_shape = _chunk_shape_v3(chunks, shape, dt.itemsize, shards is not None, path)
    grid_shape = chunk_shape
    if shards is not None:
        try:
            grid_shape, codecs = sharding_codecs(
                shards, chunk_shape, dt, data_type, **encoding, array_shape=shape
            )
        except ValueError as e:
            if names_node(e, path):
                raise
            raise in_node(e, "array", path) from None
        encoding = dict(filters=None, serializer="auto", compressors="auto", codecs=codecs)
    return ArrayMetadataV3.create(
        shape=shape,
        dtype=dt,
        data_type=data_type,
        chunk_shape=grid_shape,
        fill_value=None if fill_value is DEFAULT_FILL else fill_value,
        chunk_key_encoding=chunk_key_encoding,
        attributes=attributes,
        # no names for no dimensions is no member, as zarr-python writes it
        dimension_names=dimension_names if dimension_names or shape else None,
        path=path,
        **encoding,
    )


#: the arguments of :func:`create_array` it passes on to :func:`array_from` with ``data``
_PASSED_TO_ARRAY_FROM = frozenset(
    "data write_data name shards filters compressors serializer fill_value order zarr_format "
    "attributes chunk_key_encoding dimension_names storage_options overwrite config".split()
)


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
    _check_shape_and_dtype(data, shape, dtype)
    if data is not None:
        passed = {key: value for key, value in locals().items() if key in _PASSED_TO_ARRAY_FROM}
        return array_from(store, chunks="auto" if chunks is None else chunks, **passed)
    if zarr_format not in (2, 3):
        raise UnsupportedError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    store = resolve_store(store, storage_options=storage_options, mode="w" if overwrite else "a")
    path = normalize_path(name)
    if zarr_format == 2:
        return new_array_v2(
            store,
            path,
            _shape_tuple(shape),
            dtype,
            chunks,
            shards,
            fill_value,
            compressors,
            filters,
            order,
            dimension_separator,
            attributes,
            overwrite,
            config,
        )
    encoding = dict(filters=filters, serializer=serializer, compressors=compressors, codecs=codecs)
    meta = _array_metadata_v3(
        path,
        _shape_tuple(shape),
        dtype,
        chunks,
        shards,
        order,
        fill_value,
        encoding,
        attributes=attributes,
        dimension_names=dimension_names,
        chunk_key_encoding=chunk_key_encoding,
    )
    prepare_node_path(store, path, overwrite, 3)
    return ArrayPlan(store, path, meta, config=config)


#: what ``"keep"`` means in :func:`array_from` for data that is not a Zarr array
_KEEP_DEFAULTS = (
    ("chunks", "auto"),
    ("shards", None),
    ("filters", "auto"),
    ("compressors", "auto"),
    ("serializer", "auto"),
)


def _resolve_kept(data: Any, kw: dict[str, Any]) -> Any:
    """Resolve ``"keep"`` and the Zarr format in :func:`array_from`'s arguments ``kw`` from
    ``data``; returns ``data``, made an array when it is only array-like."""
    if is_zarr_array(data):
        kept_encoding(data, kw)
        return data
    for key, default in _KEEP_DEFAULTS:
        if isinstance(kw[key], str) and kw[key] == "keep":
            kw[key] = default
    if kw["zarr_format"] is None:
        kw["zarr_format"] = 3
    if not hasattr(data, "dtype") or not hasattr(data, "shape"):
        data = np.array(data)
    return data


def _to_v2_arguments(kw: dict[str, Any]) -> None:
    """Make :func:`array_from`'s arguments ``kw`` those of a v2 array: one compressor, no
    serializer, a dimension separator for a chunk key encoding and no dimension names."""
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
    data = _resolve_kept(data, kw)
    if kw["zarr_format"] == 2:
        _to_v2_arguments(kw)
    dtype = data.dtype
    if is_zarrox_array(data) and data.metadata.data_type in ("string", "bytes"):
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


_NOT_USED = (  # accepted by zarr-python's create, warned about and ignored, in its order
    "synchronizer",
    "chunk_store",
    "cache_metadata",
    "cache_attrs",
    "object_codec",
    "read_only",
    "meta_array",
)


def _warn_ignored(given: dict[str, Any], stacklevel: int) -> None:
    """:func:`create`'s warnings about the arguments in ``given`` it ignores or deprecates."""
    for name in _NOT_USED:
        if given[name] is not None:
            warnings.warn(f"{name} is not yet implemented", RuntimeWarning, stacklevel)
    if given["write_empty_chunks"] is not None:
        _warn_write_empty_chunks_kwarg(stacklevel + 1)


def _array_config(
    config: dict[str, Any] | None, write_empty_chunks: bool | None, stacklevel: int
) -> dict[str, Any]:
    """``config`` with ``write_empty_chunks`` (which wins, with a warning) in it."""
    array_config = dict(config or {})
    if write_empty_chunks is not None:
        if config is not None:
            warnings.warn(
                "Both write_empty_chunks and config keyword arguments are set. This is "
                "redundant. When both are set, write_empty_chunks will be used instead of "
                "the value in config.",
                UserWarning,
                stacklevel,
            )
        array_config["write_empty_chunks"] = write_empty_chunks
    return array_config


def _shape_and_chunks(
    shape: Any, chunks: Any, chunk_shape: Any, dtype: Any, zarr_format: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`create`'s shape and chunk shape (from ``chunks`` or ``chunk_shape``)."""
    shape_t = parse_shape(shape)
    if chunks is not None and chunk_shape is not None:
        raise ValueError("Only one of chunk_shape or chunks can be provided.")
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")
    itemsize = item_size(dtype, zarr_format)
    return shape_t, normalize_chunks(chunks if chunks else chunk_shape, shape_t, itemsize)


#: the arguments of :func:`create` that only the other Zarr format takes, with a hint, by format
_OTHER_FORMAT_ONLY = {
    3: (
        ("dimension_separator", "Use chunk_key_encoding instead."),
        ("filters", "Use array-to-array codecs instead."),
        ("compressor", "Use bytes-to-bytes codecs instead."),
    ),
    2: (
        ("codecs", "Use filters and compressor instead."),
        ("chunk_key_encoding", "Use dimension_separator instead."),
        ("dimension_names", ""),
    ),
}


def _format_arguments(
    zarr_format: int, given: dict[str, Any], array_config: dict[str, Any], stacklevel: int
) -> dict[str, Any]:
    """The arguments of :func:`create_array` that :func:`create` makes of its arguments
    ``given`` that depend on the Zarr format (for v2, an ``order`` given is stored in
    ``array_config``); giving an argument of the other format is a ValueError."""
    for name, hint in _OTHER_FORMAT_ONLY[zarr_format]:
        value = given[name]
        unset = (
            isinstance(value, str) and value == "auto" if name == "compressor" else value is None
        )
        if not unset:
            raise ValueError(
                f"{name} cannot be used for arrays with zarr_format {zarr_format}."
                + (f" {hint}" if hint else "")
            )
    order = given["order"]
    if zarr_format == 3:
        if order is not None:
            _warn_order_kwarg(stacklevel)
        encoding = given["chunk_key_encoding"]
        if isinstance(encoding, tuple):
            encoding = {"name": encoding[0], "separator": encoding[1]}
        return dict(
            codecs=None if given["codecs"] is None else list(given["codecs"]),
            chunk_key_encoding=encoding,
            dimension_names=list(given["dimension_names"]) if given["dimension_names"] else None,
        )
    if order is None:
        order = array_config.get("order", global_config["array.order"])
    else:
        array_config["order"] = order
    return dict(
        compressors=given["compressor"],
        filters=given["filters"],
        order=order,
        dimension_separator=given["dimension_separator"],
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
    # a helper's warnings count its own frame too: _stacklevel + 2 points where create's would
    _warn_ignored(locals(), _stacklevel + 2)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    apply_mode(store, path, "a" if mode is None else mode)
    array_config = _array_config(config, write_empty_chunks, _stacklevel + 2)
    shape_t, chunk_grid = _shape_and_chunks(shape, chunks, chunk_shape, dtype, zarr_format)
    by_format = _format_arguments(zarr_format, locals(), array_config, _stacklevel + 3)
    array = create_array(
        store,
        name=path,
        shape=shape_t,
        dtype="float64" if dtype is None else dtype,
        chunks=chunk_grid,
        fill_value=fill_value,
        zarr_format=zarr_format,
        attributes=attributes,
        overwrite=overwrite,
        config=array_config,
        **by_format,
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
