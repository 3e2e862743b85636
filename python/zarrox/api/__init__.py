"""zarr-python's top-level functions: opening and creating arrays and groups, saving and
loading. This is the public front; node discovery is :mod:`zarrox.nodes.discover`, node
creation :mod:`zarrox.nodes.create`."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

import numpy as np

from zarrox.array import Array
from zarrox.errors import ArrayNotFoundError, NodeNotFoundError, SpecError
from zarrox.group import Group, consolidate_metadata
from zarrox.nodes import create as creation
from zarrox.nodes.chunks import guess_chunks, normalize_chunks
from zarrox.nodes.create import is_ndarray_like
from zarrox.nodes.discover import read_node
from zarrox.nodes.like import like_arguments, shape_and_chunks
from zarrox.nodes.modes import Mode, apply_mode, check_mode, zarr_format_arg
from zarrox.nodes.node import is_array, is_spec, join, normalize_path
from zarrox.nodes.plans import ArrayPlan
from zarrox.storage import resolve_store

if TYPE_CHECKING:
    # the TensorStore layer is imported when a spec is opened, not with zarrox
    from zarrox.tensorstore_spec import ArrayView, Spec

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


P = ParamSpec("P")
Plan = TypeVar("Plan")
Node = TypeVar("Node")


def _front(name: str, build: Callable[P, Plan], make: Callable[[Plan], Node]) -> Callable[P, Node]:
    """zarr-python's function ``name`` over a creation function of :mod:`zarrox.nodes.create`:
    the same parameters and docstring (written once, there; private ``_``-parameters left out
    of the signature), answering what ``make`` makes of the plan."""

    @functools.wraps(build)
    def front(*args: P.args, **kwargs: P.kwargs) -> Node:
        return make(build(*args, **kwargs))

    signature = inspect.signature(build)
    front.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if not p.name.startswith("_")],
        return_annotation=inspect.signature(make).return_annotation,
    )
    front.__module__ = __name__
    front.__name__ = front.__qualname__ = name
    return front


def _saved(plan: ArrayPlan) -> None:
    """save_array answers nothing: the array is made (written) and dropped."""
    Array._make(plan)


create_array = _front("create_array", creation.create_array, Array._make)
from_array = _front("from_array", creation.array_from, Array._make)
open_array = _front("open_array", creation.array_to_open, Array._make)
create_group = _front("create_group", creation.new_group, Group._make)
open_group = _front("open_group", creation.group_to_open, Group._make)
create = _front("create", creation.create, Array._make)
save_array = _front("save_array", creation.array_to_save, _saved)


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


@overload
def open(  # noqa: A001 - zarr-python's name
    store: Spec,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> ArrayView: ...


@overload
def open(  # noqa: A001
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group | ArrayView: ...


def open(  # noqa: A001
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group | ArrayView:
    """Open the array or group at ``path`` (either format). When nothing is
    there, modes that may create make an array if ``shape`` is given, else a group.
    ``config`` is an array's runtime configuration (a TypeError for a group).

    Given a TensorStore spec instead of a store (a dict with ``"driver": "zarr3"`` or
    ``"zarr"``, a :class:`zarrox.Spec`, or a spec URL such as ``"file:///a.zarr/|zarr3:"``),
    opens or creates the array as TensorStore does and returns a :class:`zarrox.ArrayView`;
    ``kwargs`` are TensorStore's ``open`` options (``create``, ``shape``, ``dtype``, ...)."""
    if is_spec(store):
        from zarrox.tensorstore_spec import open_spec

        if config is not None:
            kwargs["config"] = config
        return open_spec(store, **_spec_mode(path, mode, zarr_format), **kwargs)
    return open_node(
        store,
        path=path,
        mode=mode,
        zarr_format=zarr_format,
        storage_options=storage_options,
        config=config,
        **kwargs,
    )


def open_node(
    store: Any = None,
    *,
    path: str | None = None,
    mode: Mode = "a",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group:
    """:func:`open` of a store (not a TensorStore spec): the array or group at ``path``."""
    check_mode(mode)
    store = resolve_store(store, storage_options=storage_options, mode=mode)
    path = normalize_path(path)
    if mode in ("w", "w-"):
        if "shape" in kwargs:
            return open_array(
                store, path=path, mode=mode, zarr_format=zarr_format, config=config, **kwargs
            )
        _no_group_config(config, store, path)
        return open_group(store, path=path, mode=mode, zarr_format=zarr_format)
    meta = read_node(store, path, zarr_format)
    if meta is None:
        if mode == "a":
            if "shape" in kwargs:
                return create_array(
                    store, name=path, zarr_format=zarr_format or 3, config=config, **kwargs
                )
            _no_group_config(config, store, path)
            return create_group(store, path=path, zarr_format=zarr_format or 3)
        raise NodeNotFoundError(f"no array or group found at '{path}' in {store!r}")
    if is_array(meta):  # opened as found, without reading it again
        return Array._make(creation.opened_array(store, path, meta, mode, config))
    _no_group_config(config, store, path)
    return Group._make(creation.opened_group(store, path, meta, mode, None))


def _no_group_config(config: dict[str, Any] | None, store: Any, path: str) -> None:
    """zarr-python's error for an array's runtime ``config`` given to ``open`` of a group."""
    if config is not None:
        raise TypeError(
            f"config is the runtime configuration of an array, but '{path}' in {store!r} "
            "resolves to a group. Groups have no runtime configuration."
        )


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


def _like(a: Any, zarr_format: int | None, kwargs: dict[str, Any], fill: bool) -> dict[str, Any]:
    """:func:`create`'s arguments for an array like ``a`` (``fill``: with ``a``'s fill value
    unless ``kwargs`` give one), in ``a``'s zarr format unless ``zarr_format`` (or the
    deprecated ``zarr_version`` in ``kwargs``) asks for another."""
    zarr_format = zarr_format_arg(kwargs.pop("zarr_version", None), zarr_format, stacklevel=4)
    return like_arguments(a, zarr_format, fill_value=fill) | kwargs


def empty_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An empty array like ``a`` (see :func:`zeros_like`), with ``a``'s fill value when
    ``a`` is a zarrox array."""
    return empty(**_like(a, zarr_format, kwargs, fill=True))


def zeros_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of zeros like ``a``: its shape, chunks and data type, and for a zarrox array
    its zarr format (unless ``zarr_format`` asks for another) and, in that format, its
    encoding; ``kwargs`` go to :func:`create` and take precedence."""
    return zeros(**_like(a, zarr_format, kwargs, fill=False))


def ones_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of ones like ``a`` (see :func:`zeros_like`)."""
    return ones(**_like(a, zarr_format, kwargs, fill=False))


def full_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array like ``a`` (see :func:`zeros_like`) filled with ``fill_value``, by default
    ``a``'s when it is a zarrox array."""
    return full(**_like(a, zarr_format, kwargs, fill=True))


def open_like(a: Any, path: str, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Open the array at ``path`` (of either format unless ``zarr_format`` is given), or in
    modes ``a`` (the default) and ``w``/``w-`` create it like ``a`` (see :func:`zeros_like`)
    in ``zarr_format``, by default 3: ``a``'s format is not inherited, as in zarr-python."""
    zarr_format = zarr_format_arg(kwargs.pop("zarr_version", None), zarr_format)
    # created in zarr_format (3 unless given); opened in either format unless it is given
    like = like_arguments(a, zarr_format or 3) | kwargs
    mode: Mode = like.pop("mode", None) or "a"
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
        overwrite=mode == "w",
        **like,
    )


def array(data: Any, **kwargs: Any) -> Array:
    """A new array holding ``data`` (shape, dtype and, when it has them, chunks taken from
    it unless given); ``kwargs`` go to :func:`create`, ``shape`` among them being ignored."""
    z, data = _array_for(data, **kwargs)
    z[...] = data
    return z


def _array_for(data: Any, **kwargs: Any) -> tuple[Array, Any]:
    """:func:`array`'s new array, empty, and the data to write to it."""
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
    return create(**kwargs), data


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
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Save one numpy array (:func:`save_array`) or several (:func:`save_group`);
    ``kwargs`` are arrays by name (none at all: :func:`save_group`'s ValueError)."""
    zarr_format = zarr_format_arg(zarr_version, zarr_format)
    where: dict[str, Any] = {
        "zarr_format": zarr_format,
        "path": path,
        "storage_options": storage_options,
    }
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], **where)
    else:
        save_group(store, *args, **where, **kwargs)


class LazyLoader(Mapping[str, Any]):
    """The arrays of a group by name, each read into memory when it is looked up
    (what :func:`load` returns for a group)."""

    def __init__(self, group: Group) -> None:
        self._group = group
        self._names = group.array_keys()

    def __getitem__(self, name: str) -> Any:
        node = self._group[name] if name in self._names else None
        if not isinstance(node, Array):
            raise KeyError(name)
        return node[...]

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
    node = _load_node(store, path, zarr_format, zarr_version)
    if isinstance(node, Array):
        return node[...]
    return LazyLoader(node)


def _load_node(
    store: Any, path: str | None, zarr_format: int | None, zarr_version: int | None
) -> Array | Group:
    """The node :func:`load` reads."""
    zarr_format = zarr_format_arg(zarr_version, zarr_format)
    return open_node(store, path=path, mode="r", zarr_format=zarr_format)  # type: ignore[no-any-return]


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> Any:
    """The hierarchy below ``grp`` (deprecated, as in zarr-python: use ``grp.tree()``)."""
    warnings.warn("Use Group.tree instead.", DeprecationWarning, 2)
    return grp.tree(expand=expand, level=level)
