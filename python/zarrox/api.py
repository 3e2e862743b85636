"""zarr-python's top-level functions: opening and creating arrays and groups, saving and
loading. This is the public front; node discovery is :mod:`zarrox.nodes.discover`, node
creation :mod:`zarrox.nodes.create`."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from zarrox.array import Array
from zarrox.errors import ArrayNotFoundError, NodeNotFoundError, SpecError
from zarrox.group import Group, consolidate_metadata
from zarrox.metadata.v2 import DEFAULT_FILL
from zarrox.nodes import create as creation
from zarrox.nodes.create import (
    Mode,
    apply_mode,
    check_mode,
    guess_chunks,
    is_ndarray_like,
    like_arguments,
    normalize_chunks,
    shape_and_chunks,
    zarr_format_arg,
)
from zarrox.nodes.discover import read_node
from zarrox.nodes.node import is_array, join, normalize_path
from zarrox.storage import resolve_store
from zarrox.tensorstore_spec import ArrayView, is_spec, open_spec

__all__ = [
    "Mode",
    "array",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "group",
    "guess_chunks",
    "load",
    "normalize_chunks",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "save",
    "save_array",
    "save_group",
    "tree",
    "zeros",
    "zeros_like",
]


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
    return Array._make(
        creation.create_array(
            store=store,
            name=name,
            shape=shape,
            dtype=dtype,
            data=data,
            write_data=write_data,
            chunks=chunks,
            fill_value=fill_value,
            compressors=compressors,
            serializer=serializer,
            filters=filters,
            codecs=codecs,
            zarr_format=zarr_format,
            attributes=attributes,
            dimension_names=dimension_names,
            chunk_key_encoding=chunk_key_encoding,
            overwrite=overwrite,
            config=config,
            shards=shards,
            order=order,
            dimension_separator=dimension_separator,
            storage_options=storage_options,
        )
    )


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
    return Array._make(
        creation.array_from(
            store=store,
            data=data,
            write_data=write_data,
            name=name,
            chunks=chunks,
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
            storage_options=storage_options,
            overwrite=overwrite,
            config=config,
        )
    )


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
    return Array._make(
        creation.array_to_open(
            store=store,
            path=path,
            mode=mode,
            zarr_format=zarr_format,
            config=config,
            storage_options=storage_options,
            **kwargs,
        )
    )


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
    return Group._make(
        creation.new_group(
            store=store,
            path=path,
            attributes=attributes,
            overwrite=overwrite,
            zarr_format=zarr_format,
            storage_options=storage_options,
        )
    )


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
    return Group._make(
        creation.group_to_open(
            store=store,
            path=path,
            mode=mode,
            attributes=attributes,
            zarr_format=zarr_format,
            use_consolidated=use_consolidated,
            storage_options=storage_options,
        )
    )


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
    check_mode(mode)
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
    if is_array(meta):  # opened as found, without reading it again
        return Array._make(creation.opened_array(store, path, meta, mode))
    return Group._make(creation.opened_group(store, path, meta, mode, None))


def _spec_mode(path: str | None, mode: str, zarr_format: int | None) -> dict[str, bool]:
    """zarr-python's ``mode`` as TensorStore open options (``"a"``, the default, adds none)."""
    if path is not None or zarr_format is not None:
        raise SpecError("path and zarr_format do not apply to a spec: give them in the spec")
    check_mode(mode)
    return {
        "r": {"read": True, "write": False},
        "r+": {},
        "a": {},
        "w": {"create": True, "delete_existing": True, "open": False},
        "w-": {"create": True, "open": False},
    }[mode]


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
    return Array._make(
        creation.create(
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            compressor=compressor,
            fill_value=fill_value,
            order=order,
            store=store,
            synchronizer=synchronizer,
            overwrite=overwrite,
            path=path,
            chunk_store=chunk_store,
            filters=filters,
            cache_metadata=cache_metadata,
            cache_attrs=cache_attrs,
            read_only=read_only,
            object_codec=object_codec,
            dimension_separator=dimension_separator,
            write_empty_chunks=write_empty_chunks,
            zarr_version=zarr_version,
            zarr_format=zarr_format,
            meta_array=meta_array,
            attributes=attributes,
            chunk_shape=chunk_shape,
            chunk_key_encoding=chunk_key_encoding,
            codecs=codecs,
            dimension_names=dimension_names,
            storage_options=storage_options,
            config=config,
            mode=mode,
            data=data,
        )
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


def empty_like(a: Any, **kwargs: Any) -> Array:
    """An empty array like ``a`` (with its fill value when ``a`` is a zarrox array)."""
    like = like_arguments(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    return empty(**like)


def zeros_like(a: Any, **kwargs: Any) -> Array:
    """An array of zeros like ``a``."""
    return zeros(**(like_arguments(a) | kwargs))


def ones_like(a: Any, **kwargs: Any) -> Array:
    """An array of ones like ``a``."""
    return ones(**(like_arguments(a) | kwargs))


def full_like(a: Any, **kwargs: Any) -> Array:
    """An array like ``a`` filled with ``fill_value`` (by default ``a``'s, when it is a
    zarrox array)."""
    like = like_arguments(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    return full(**like)


def open_like(a: Any, path: str, **kwargs: Any) -> Array:
    """Open the array at ``path``, or in modes ``a``/``w``/``w-`` create it like ``a``
    (zarr-python's ``open_like``: ``mode`` left out only opens an existing array)."""
    like = like_arguments(a) | kwargs
    if isinstance(a, Array):
        like.setdefault("fill_value", a.metadata.fill_value)
    mode = like.pop("mode", None)
    zarr_format = zarr_format_arg(like.pop("zarr_version", None), like.pop("zarr_format", None))
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
    shape, chunks = shape_and_chunks(data)
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
    zarr_format = zarr_format_arg(zarr_version, zarr_format)
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
    Array._make(
        creation.array_to_save(
            store=store,
            arr=arr,
            zarr_version=zarr_version,
            zarr_format=zarr_format,
            path=path,
            storage_options=storage_options,
            **kwargs,
        )
    )


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
    zarr_format = zarr_format_arg(zarr_version, zarr_format) or 3
    for arg in args:
        if not is_ndarray_like(arg):
            raise TypeError(
                "All arguments must be numpy or other NDArrayLike arrays (except store, "
                "path, storage_options, and zarr_format)"
            )
    for k, v in kwargs.items():
        if not is_ndarray_like(v):
            raise TypeError(f"Keyword argument '{k}' must be a numpy or other NDArrayLike array")
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    store = resolve_store(store, storage_options=storage_options)
    path = normalize_path(path)
    apply_mode(store, path, "w")
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
    zarr_format = zarr_format_arg(zarr_version, zarr_format)
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
    zarr_format = zarr_format_arg(zarr_version, zarr_format)
    node = open(store, path=path, mode="r", zarr_format=zarr_format)
    if isinstance(node, Array):
        return node[...]
    return LazyLoader(node)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> Any:
    """The hierarchy below ``grp`` (deprecated, as in zarr-python: use ``grp.tree()``)."""
    warnings.warn("Use Group.tree instead.", DeprecationWarning, 2)
    return grp.tree(expand=expand, level=level)
