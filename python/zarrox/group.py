"""The user-facing Group, with zarr-python's names and semantics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from zarrox._nodes import (
    GroupMetadata,
    Node,
    NodeMetadata,
    child_names,
    is_array,
    is_legacy,
    join,
    node_exists,
    normalize_path,
    read_node,
    read_only_message,
    write_node,
)
from zarrox.array import Array
from zarrox.attributes import Attributes
from zarrox.errors import NodeNotFoundError, ReadOnlyError
from zarrox.storage import Store

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
        self._read_only = read_only or is_legacy(metadata)
        self._consolidated = consolidated

    @property
    def metadata(self) -> GroupMetadata:
        return self._metadata

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def _attributes(self) -> dict[str, Any]:
        return self._metadata.attributes

    def _save_metadata(self) -> None:
        self._check_writable()
        write_node(self._store, self._path, self._metadata)

    def __repr__(self) -> str:
        return f"<zarrox.Group {self.name}>"

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
            from zarrox.api import consolidate_metadata

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

    def array_keys(self) -> list[str]:
        return [n for n, node in self.members() if isinstance(node, Array)]

    def group_keys(self) -> list[str]:
        return [n for n, node in self.members() if isinstance(node, Group)]

    def arrays(self) -> list[tuple[str, Array]]:
        return [(n, node) for n, node in self.members() if isinstance(node, Array)]

    def groups(self) -> list[tuple[str, Group]]:
        return [(n, node) for n, node in self.members() if isinstance(node, Group)]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array below this group (in the group's format by default)."""
        from zarrox.api import create_array

        self._check_writable()
        kwargs.setdefault("zarr_format", self.zarr_format)
        return create_array(self._store, name=self._child_path(name), **kwargs)

    def create_group(
        self,
        name: str,
        *,
        attributes: dict[str, Any] | None = None,
        overwrite: bool = False,
        zarr_format: int | None = None,
    ) -> Group:
        from zarrox.api import create_group

        self._check_writable()
        return create_group(
            self._store,
            path=self._child_path(name),
            attributes=attributes,
            overwrite=overwrite,
            zarr_format=zarr_format or self.zarr_format,
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
