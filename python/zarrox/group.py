"""The user-facing Group, with zarr-python's names and semantics."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import numpy as np

from zarrox.array import Array, AsyncArray
from zarrox.async_node import AsyncNode, gather, run, run_metadata
from zarrox.attributes import Attributes
from zarrox.errors import MetadataError, NodeNotFoundError, ReadOnlyError
from zarrox.metadata import GroupMetadataV3
from zarrox.metadata.consolidated import (
    ZMETADATA_KEY,
    build_consolidated_v3,
    build_zmetadata,
    dumps_zmetadata,
    zmetadata_entries,
)
from zarrox.nodes import create as creation
from zarrox.nodes.create import array_to_save, group_to_open, new_group
from zarrox.nodes.discover import child_names, node_exists, read_node
from zarrox.nodes.like import like_arguments
from zarrox.nodes.node import (
    GroupMetadata,
    Node,
    NodeMetadata,
    is_array,
    is_legacy,
    join,
    normalize_path,
    read_only_message,
    update_node,
    write_node,
)
from zarrox.nodes.node import zarr_format as format_of
from zarrox.nodes.plans import GroupPlan
from zarrox.nodes.write_hierarchy import write_hierarchy
from zarrox.storage import Store, resolve_store

#: node metadata of a group's descendants by path relative to it, from consolidated metadata
Consolidated = Mapping[str, NodeMetadata]


def make_node(
    store: Store,
    path: str,
    meta: NodeMetadata,
    *,
    read_only: bool = False,
    consolidated: Consolidated | None = None,
) -> Array | Group:
    if is_array(meta):
        return Array(store, path, meta, read_only=read_only)  # type: ignore[arg-type]
    return Group(store, path, meta, read_only=read_only, consolidated=consolidated)  # type: ignore[arg-type]


def open_node(store: Store, path: str, *, read_only: bool = False) -> Array | Group:
    """The array or group at ``path`` (either format); NodeNotFoundError if none."""
    meta = read_node(store, path)
    if meta is None:
        raise NodeNotFoundError(f"no array or group found at '{path}' in {store!r}")
    return make_node(store, path, meta, read_only=read_only)


def _below(consolidated: Consolidated, name: str) -> dict[str, NodeMetadata]:
    prefix = name + "/"
    return {k[len(prefix) :]: v for k, v in consolidated.items() if k.startswith(prefix)}


class Group(Node):
    """A Zarr group: a node with attributes whose children are arrays and groups.

    A group opened from consolidated metadata looks its descendants up there
    instead of in the store. Groups of the legacy formats (the draft v3 layout) are always
    read-only."""

    _metadata: GroupMetadata

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: GroupMetadata,
        *,
        read_only: bool = False,
        consolidated: Consolidated | None = None,
    ) -> None:
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only or is_legacy(metadata) or store.read_only
        self._consolidated = consolidated

    @classmethod
    def open(cls, store: Any, zarr_format: int | None = 3) -> Group:
        """The group at the root of ``store`` (zarr-python's ``Group.open``)."""
        return cls._make(group_to_open(store, mode="r+", zarr_format=zarr_format))

    @classmethod
    def from_store(
        cls,
        store: Any,
        *,
        attributes: dict[str, Any] | None = None,
        zarr_format: int = 3,
        overwrite: bool = False,
    ) -> Group:
        """A new group at the root of ``store`` (zarr-python's ``Group.from_store``)."""
        return cls._make(
            new_group(store, attributes=attributes, zarr_format=zarr_format, overwrite=overwrite)
        )

    @classmethod
    def _make(cls, plan: GroupPlan) -> Group:
        """The group ``plan`` describes (:mod:`zarrox.nodes.create`)."""
        return cls(
            plan.store,
            plan.path,
            plan.metadata,
            read_only=plan.read_only,
            consolidated=plan.consolidated,
        )

    @property
    def metadata(self) -> GroupMetadata:
        return self._metadata

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def _attributes(self) -> dict[str, Any]:
        return self._metadata.attributes

    def _update_metadata(self, change: Callable[[Any], None]) -> None:
        """Apply ``change`` to the stored metadata and store it (a read-modify-write,
        conditional where the store allows: see :func:`zarrox.nodes.node.update_node`)."""
        self._check_writable()
        self._metadata = update_node(self._store, self._path, self._metadata, change)  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<zarrox.Group {self.store_path}>"

    def update_attributes(self, new_attributes: dict[str, Any]) -> Group:
        """Merge ``new_attributes`` into the attributes with one metadata write."""
        self.attrs.update(new_attributes)
        return self

    @property
    def info(self) -> GroupInfo:
        """What the group's metadata says (name, format, read-only, store); member counts
        only when consolidated metadata lists them (see :meth:`info_complete`)."""
        members = None
        if self._consolidated is not None:
            members = list(self._consolidated.values())
        return GroupInfo(self, members)

    def info_complete(self) -> GroupInfo:
        """:attr:`info` with the number of members, arrays and groups below the group."""
        return GroupInfo(self, [node.metadata for _, node in self.members(max_depth=None)])

    # -- children ----------------------------------------------------------
    def _child_path(self, name: str) -> str:
        return join(self._path, normalize_path(name))

    def __getitem__(self, name: str) -> Array | Group:
        rel = normalize_path(name)
        if self._consolidated is not None and rel in self._consolidated:
            return make_node(
                self._store,
                self._child_path(rel),
                self._consolidated[rel],
                read_only=self._read_only,
                consolidated=_below(self._consolidated, rel),
            )
        try:
            return open_node(self._store, self._child_path(rel), read_only=self._read_only)
        except NodeNotFoundError:
            raise KeyError(name) from None

    def get(self, path: str, default: Any = None) -> Any:
        """The member at ``path``, or ``default`` when there is none."""
        try:
            return self[path]
        except KeyError:
            return default

    def __setitem__(self, name: str, value: Any) -> None:
        """Store ``value`` (an array-like) as a new array ``name`` with the default
        settings, replacing what is there (zarr-python's fast path)."""
        self._check_writable()
        Array._make(
            array_to_save(
                self._store,
                value if hasattr(value, "shape") else np.asarray(value),
                zarr_format=self.zarr_format,
                path=self._child_path(name),
                overwrite=True,
            )
        )

    def __delitem__(self, name: str) -> None:
        """Delete the child (or descendant, by path) ``name`` with everything below it:
        metadata and chunks. As in zarr-python, deleting a name that is not there does
        nothing."""
        self._check_writable()
        rel = normalize_path(name)
        if not rel:
            raise ValueError(f"cannot delete group {self.name} from itself")
        self._store.delete_prefix(self._child_path(rel) + "/")
        if self._consolidated is not None:
            # The consolidated metadata must not list the deleted nodes any more.
            again = consolidate_metadata(self._store, path=self._path)
            self._metadata, self._consolidated = again._metadata, again._consolidated

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if self._consolidated is not None and normalize_path(name) in self._consolidated:
            return True
        return node_exists(self._store, self._child_path(name))

    def _child_names(self) -> list[str]:
        if self._consolidated is not None:
            return sorted({k.split("/", 1)[0] for k in self._consolidated})
        return child_names(self._store, self._path, self._metadata)

    def __iter__(self) -> Iterator[str]:
        return iter(self._child_names())

    def __len__(self) -> int:
        return len(self._child_names())

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """(name, node) pairs of the children, sorted by name; ``max_depth`` > 0
        or None also yields descendants, named by their path below this group."""
        out: list[tuple[str, Array | Group]] = []
        for name in self._child_names():
            node = self[name]
            out.append((name, node))
            if isinstance(node, Group) and (max_depth is None or max_depth > 0):
                deeper = None if max_depth is None else max_depth - 1
                out.extend((f"{name}/{n}", c) for n, c in node.members(deeper))
        return tuple(out)

    def keys(self) -> list[str]:
        return self._child_names()

    def nmembers(self, max_depth: int | None = 0) -> int:
        """The number of members, down to ``max_depth`` levels below the children (None:
        all)."""
        if max_depth is not None and max_depth < 0:
            raise ValueError(f"max_depth must be None or >= 0. Got '{max_depth}' instead")
        if self._consolidated is not None:
            if max_depth is None:
                return len(self._consolidated)
            return sum(1 for k in self._consolidated if k.count("/") <= max_depth)
        return len(self.members(max_depth=max_depth))

    def array_values(self) -> Iterator[Array]:
        return (node for _, node in self.arrays())

    def group_values(self) -> Iterator[Group]:
        return (node for _, node in self.groups())

    def array_keys(self) -> list[str]:
        return [n for n, node in self.members() if isinstance(node, Array)]

    def group_keys(self) -> list[str]:
        return [n for n, node in self.members() if isinstance(node, Group)]

    def arrays(self) -> list[tuple[str, Array]]:
        return [(n, node) for n, node in self.members() if isinstance(node, Array)]

    def groups(self) -> list[tuple[str, Group]]:
        return [(n, node) for n, node in self.members() if isinstance(node, Group)]

    def create_array(self, name: str, *, compressor: Any = "auto", **kwargs: Any) -> Array:
        """Create an array below this group (in the group's format by default).

        As zarr-python's ``Group.create_array``: ``compressor`` (one codec, deprecated) is
        ``compressors=[compressor]``, and a v2 array given neither is compressed with
        numcodecs' default Blosc (lz4), where the module-level ``create_array`` uses zstd.
        """
        self._check_writable()
        kwargs.setdefault("zarr_format", self.zarr_format)
        compressors = kwargs.get("compressors", "auto")
        auto = isinstance(compressors, str) and compressors == "auto"
        if not (isinstance(compressor, str) and compressor == "auto"):
            if not auto:
                raise ValueError("Cannot specify both `compressor` and `compressors`.")
            if kwargs["zarr_format"] == 3:
                warnings.warn(
                    "The `compressor` argument is deprecated. Use `compressors` instead.",
                    UserWarning,
                    2,
                )
            kwargs["compressors"] = None if compressor is None else [compressor]
        elif kwargs["zarr_format"] == 2 and auto:
            kwargs["compressors"] = {"id": "blosc"}
        plan = creation.create_array(self._store, name=self._child_path(name), **kwargs)
        return Array._make(plan)

    def create(self, name: str, **kwargs: Any) -> Array:
        """:meth:`create_array` (zarr-python's alias)."""
        return self.create_array(name, **kwargs)

    def array(self, name: str, **kwargs: Any) -> Array:
        """:meth:`create_array` (zarr-python's deprecated alias)."""
        warnings.warn("Use Group.create_array instead.", DeprecationWarning, 2)
        return self.create_array(name, **kwargs)

    def create_dataset(self, name: str, **kwargs: Any) -> Array:
        """Create an array, h5py style: ``data`` is written to it, and gives the data type
        when ``dtype`` is left out (zarr-python's deprecated ``create_dataset``)."""
        warnings.warn("Use Group.create_array instead.", DeprecationWarning, 2)
        data = kwargs.pop("data", None)
        if data is not None:
            data = data if hasattr(data, "dtype") else np.asarray(data)
            kwargs.setdefault("dtype", data.dtype)
            kwargs.setdefault("shape", data.shape)
        array = self.create_array(name, **kwargs)
        if data is not None:
            array[...] = data
        return array

    def require_array(
        self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False, **kwargs: Any
    ) -> Array:
        """The array ``name``, created (with ``kwargs``) when missing. An existing one must
        have ``shape`` and a data type ``dtype`` can be cast from (``exact``: equal);
        otherwise TypeError, as in zarr-python."""
        node = self.get(name)
        if node is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if not isinstance(node, Array):
            raise TypeError(f"Incompatible object ({type(node).__name__}) already exists")
        want = (int(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
        if want != node.shape:
            raise TypeError(f"Incompatible shape ({node.shape} vs {want})")
        dt = np.dtype(dtype)
        if (node.dtype != dt) if exact else not np.can_cast(node.dtype, dt):
            raise TypeError(f"Incompatible dtype ({node.dtype} vs {dt})")
        return node

    def require_dataset(self, name: str, *, shape: Any, **kwargs: Any) -> Array:
        """:meth:`require_array` (h5py's name)."""
        return self.require_array(name, shape=shape, **kwargs)

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        return tuple(self.require_group(name) for name in names)

    def _create_like(
        self, name: str, like: Any = None, keep_fill: bool = False, **kwargs: Any
    ) -> Array:
        """A new array ``name`` made by zarr-python's ``create`` from ``kwargs``, and from
        the shape, chunks and data type of ``like`` when given, with its encoding when it
        has the new array's format (the group's, unless ``kwargs`` name another);
        ``keep_fill``: its fill value too, when it is a zarrox array and ``kwargs`` have
        none."""
        self._check_writable()
        kwargs.setdefault("zarr_format", self.zarr_format)
        if like is not None:
            # In the group's format: ``like``'s encoding only when it has that format too.
            kwargs = like_arguments(like, kwargs["zarr_format"], fill_value=keep_fill) | kwargs
        plan = creation.create(store=self._store, path=self._child_path(name), **kwargs)
        return Array._make(plan)

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """A new array ``name`` whose fill value is 0."""
        return self._create_like(name, shape=shape, fill_value=0, **kwargs)

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._create_like(name, shape=shape, fill_value=1, **kwargs)

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._create_like(name, shape=shape, **kwargs)

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        return self._create_like(name, shape=shape, fill_value=fill_value, **kwargs)

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create_like(name, data, fill_value=0, **kwargs)

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create_like(name, data, fill_value=1, **kwargs)

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._create_like(name, data, True, **kwargs)

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        if "fill_value" not in kwargs and not isinstance(data, Array):
            raise TypeError("full() missing 1 required positional argument: 'fill_value'")
        return self._create_like(name, data, True, **kwargs)

    def create_hierarchy(
        self, nodes: Mapping[str, Any], *, overwrite: bool = False
    ) -> Iterator[tuple[str, Array | Group]]:
        """Create ``nodes`` (metadata by path) below this group; see
        :func:`zarrox.create_hierarchy`. Yields (path relative to this group, node)."""
        self._check_writable()
        prefix = self._path + "/" if self._path else ""
        for path, meta in write_hierarchy(
            self._store,
            {self._child_path(k) if normalize_path(k) else self._path: v for k, v in nodes.items()},
            overwrite,
        ):
            if path.startswith(prefix) or path == self._path:
                node = make_node(self._store, path, meta)
                yield path[len(prefix) :] if path != self._path else "", node

    def create_group(
        self,
        name: str,
        *,
        attributes: dict[str, Any] | None = None,
        overwrite: bool = False,
        zarr_format: int | None = None,
    ) -> Group:
        self._check_writable()
        return Group._make(
            new_group(
                self._store,
                path=self._child_path(name),
                attributes=attributes,
                overwrite=overwrite,
                zarr_format=zarr_format or self.zarr_format,
            )
        )

    def require_group(self, name: str) -> Group:
        """The child group ``name``, created if it does not exist."""
        if name in self:
            node = self[name]
            if not isinstance(node, Group):
                raise TypeError(f"'{name}' in {self.name} is an array, not a group")
            return node
        return self.create_group(name)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(read_only_message("group", self._path, self._metadata))

    def tree(self, expand: bool | None = None, level: int | None = None) -> TreeView:
        """The hierarchy below this group, down to ``level`` groups deep (0: the
        children only; None: all). ``expand`` is not supported, as in zarr-python."""
        if expand is not None:
            raise NotImplementedError("'expand' is not yet implemented.")
        return TreeView(self, level)


class GroupInfo:
    """What ``Group.info`` and ``Group.info_complete()`` show."""

    def __init__(self, group: Group, members: list[NodeMetadata] | None) -> None:
        self.name = group.name
        self.type = "Group"
        self.zarr_format = group.zarr_format
        self.read_only = group.read_only
        self.store_type = type(group.store).__name__
        self.count_members = None if members is None else len(members)
        self.count_arrays = None if members is None else sum(1 for m in members if is_array(m))
        self.count_groups = None if members is None else len(members) - (self.count_arrays or 0)

    def __repr__(self) -> str:
        rows: list[tuple[str, Any]] = [
            ("Name", self.name),
            ("Type", self.type),
            ("Zarr format", self.zarr_format),
            ("Read-only", self.read_only),
            ("Store type", self.store_type),
        ]
        if self.count_members is not None:
            rows += [
                ("No. members", self.count_members),
                ("No. arrays", self.count_arrays),
                ("No. groups", self.count_groups),
            ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}} : {v}" for k, v in rows)

    __str__ = __repr__


class TreeView:
    """A text rendering of a group's hierarchy (``print(group.tree())``)."""

    def __init__(self, group: Group, level: int | None = None) -> None:
        self._group = group
        self._level = level

    def _lines(self, group: Group, indent: str, depth: int = 0) -> list[str]:
        lines = []
        members = group.members()
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Array):
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
            else:
                lines.append(f"{indent}{branch}{name}")
                if self._level is None or depth < self._level:
                    pad = "    " if last else "│   "
                    lines.extend(self._lines(node, indent + pad, depth + 1))
        return lines

    def __str__(self) -> str:
        return "\n".join([self._group.name, *self._lines(self._group, "")])

    __repr__ = __str__


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
    root = Group._make(
        group_to_open(store, path=path, mode="r+", zarr_format=zarr_format, use_consolidated=False)
    )
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
        store.set(join(path, ZMETADATA_KEY), dumps_zmetadata(build_zmetadata(entries, path=path)))
    return Group._make(group_to_open(store, path=path, mode="r+", use_consolidated=True))


def wrap(value: Any) -> Any:
    """Arrays and groups as their asynchronous counterparts; anything else as it is."""
    if isinstance(value, Array):
        return AsyncArray(value)
    if isinstance(value, Group):
        return AsyncGroup(value)
    return value


def _open_group(*args: Any, **kwargs: Any) -> Group:
    """``zarrox.open_group``: the group opened (see :func:`zarrox.nodes.create.group_to_open`)."""
    return Group._make(creation.group_to_open(*args, **kwargs))


class AsyncGroup(AsyncNode):
    """A group whose member lookups and changes are awaited (zarr-python's ``AsyncGroup``);
    members come back as AsyncArray / AsyncGroup. Wraps a :class:`zarrox.Group`.

    Its methods read and write metadata documents and listings: on the event loop, their
    requests awaited through the engine, on object stores and references (else, and
    ``setitem`` and ``info_complete``, on a worker thread); the arrays it gives read and
    write their chunks through awaitables the engine completes (:class:`zarrox.AsyncArray`)."""

    _kind = Group
    _sync: Group

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = None, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(
            await run_metadata(store, _open_group, store, zarr_format=zarr_format, **kwargs)
        )

    @classmethod
    async def from_store(
        cls,
        store: Any,
        *,
        attributes: dict[str, Any] | None = None,
        zarr_format: int = 3,
        overwrite: bool = False,
    ) -> AsyncGroup:
        return AsyncGroup(
            await run_metadata(
                store,
                Group.from_store,
                store,
                attributes=attributes,
                zarr_format=zarr_format,
                overwrite=overwrite,
            )
        )

    def __repr__(self) -> str:
        return f"<zarrox.AsyncGroup {self._sync.store_path}>"

    async def _metadata(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        """``func(*args, **kwargs)``, a metadata operation on this group's store
        (:func:`~zarrox.async_node.run_metadata`)."""
        return await run_metadata(self._sync.store, func, *args, **kwargs)

    async def _new_array(
        self, make: Callable[..., Array], /, *args: Any, **kwargs: Any
    ) -> AsyncArray:
        """The array ``make(*args, **kwargs)`` (a :class:`Group` method that creates or
        finds one) gives, run as :meth:`_metadata` runs it, as an AsyncArray."""
        return AsyncArray(await self._metadata(make, *args, **kwargs))

    # -- members -------------------------------------------------------------------------
    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        return wrap(await self._metadata(self._sync.__getitem__, key))  # type: ignore[no-any-return]

    async def get(self, key: str, default: Any = None) -> Any:
        try:
            return await self.getitem(key)
        except KeyError:
            return default

    async def setitem(self, key: str, value: Any) -> None:
        await run(self._sync.__setitem__, key, value)

    async def delitem(self, key: str) -> None:
        await self._metadata(self._sync.__delitem__, key)

    async def contains(self, key: str) -> bool:
        return await self._metadata(self._sync.__contains__, key)

    async def nmembers(self, max_depth: int | None = 0) -> int:
        return await self._metadata(self._sync.nmembers, max_depth)

    async def members(
        self, max_depth: int | None = 0
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        for name, node in await self._metadata(self._sync.members, max_depth):
            yield name, wrap(node)

    async def keys(self) -> AsyncIterator[str]:
        for name in await self._metadata(self._sync.keys):
            yield name

    async def array_keys(self) -> AsyncIterator[str]:
        for name in await self._metadata(self._sync.array_keys):
            yield name

    async def group_keys(self) -> AsyncIterator[str]:
        for name in await self._metadata(self._sync.group_keys):
            yield name

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        for name, node in await self._metadata(self._sync.arrays):
            yield name, AsyncArray(node)

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        for name, node in await self._metadata(self._sync.groups):
            yield name, AsyncGroup(node)

    async def array_values(self) -> AsyncIterator[AsyncArray]:
        async for _, node in self.arrays():
            yield node

    async def group_values(self) -> AsyncIterator[AsyncGroup]:
        async for _, node in self.groups():
            yield node

    # -- creating ------------------------------------------------------------------------
    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.create_array, name, **kwargs)

    async def create_dataset(self, name: str, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.create_dataset, name, **kwargs)

    async def require_array(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.require_array, name, shape=shape, **kwargs)

    async def require_dataset(self, name: str, *, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self.require_array(name, shape=shape, **kwargs)

    async def create_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await self._metadata(self._sync.create_group, name, **kwargs))

    async def require_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await self._metadata(self._sync.require_group, name, **kwargs))

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        return tuple(await gather(*(self.require_group(n) for n in names)))

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.zeros, name=name, shape=shape, **kwargs)

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.ones, name=name, shape=shape, **kwargs)

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.empty, name=name, shape=shape, **kwargs)

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(
            self._sync.full,
            name=name,
            shape=shape,
            fill_value=fill_value,
            **kwargs,
        )

    async def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.zeros_like, name=name, data=data, **kwargs)

    async def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.ones_like, name=name, data=data, **kwargs)

    async def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.empty_like, name=name, data=data, **kwargs)

    async def full_like(self, *, name: str, data: Any, **kwargs: Any) -> AsyncArray:
        return await self._new_array(self._sync.full_like, name=name, data=data, **kwargs)

    async def create_hierarchy(
        self, nodes: Mapping[str, Any], *, overwrite: bool = False
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        created = await self._metadata(
            lambda: list(self._sync.create_hierarchy(nodes, overwrite=overwrite)),
        )
        for path, node in created:
            yield path, wrap(node)

    # -- changing and inspecting ---------------------------------------------------------
    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncGroup:
        await self._metadata(self._sync.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> Any:
        return await run(self._sync.info_complete)

    async def tree(self, expand: bool | None = None, level: int | None = None) -> Any:
        return await self._metadata(self._sync.tree, expand=expand, level=level)
