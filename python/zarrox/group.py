"""The user-facing Group, with zarr-python's names and semantics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zarrox._nodes import METADATA_KEY, join, normalize_path, read_document
from zarrox.array import Array
from zarrox.attributes import Attributes
from zarrox.errors import NodeNotFoundError, ReadOnlyError
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, dumps, parse_node
from zarrox.storage import Store


def open_node(store: Store, path: str, *, read_only: bool = False) -> Array | Group:
    """The array or group at ``path``; NodeNotFoundError if there is none."""
    doc = read_document(store, path)
    if doc is None:
        raise NodeNotFoundError(f"no array or group found at '{path}' in {store!r}")
    meta = parse_node(doc, path=path)
    if isinstance(meta, ArrayMetadataV3):
        return Array(store, path, meta, read_only=read_only)
    return Group(store, path, meta, read_only=read_only)


class Group:
    """A Zarr group: a node with attributes whose children are arrays and groups."""

    def __init__(
        self, store: Store, path: str, metadata: GroupMetadataV3, *, read_only: bool = False
    ) -> None:
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only

    @property
    def metadata(self) -> GroupMetadataV3:
        return self._metadata

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def _attributes(self) -> dict[str, Any]:
        return self._metadata.attributes

    def _save_metadata(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"group '{self._path}' is opened read-only")
        self._store.set(join(self._path, METADATA_KEY), dumps(self._metadata.to_json()))

    def __repr__(self) -> str:
        return f"<zarrox.Group {self.name}>"

    # -- children ----------------------------------------------------------
    def _child_path(self, name: str) -> str:
        return join(self._path, normalize_path(name))

    def __getitem__(self, name: str) -> Array | Group:
        try:
            return open_node(self._store, self._child_path(name), read_only=self._read_only)
        except NodeNotFoundError:
            raise KeyError(name) from None

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return self._store.exists(join(self._child_path(name), METADATA_KEY))

    def _child_names(self) -> list[str]:
        prefix = self._path + "/" if self._path else ""
        _, dirs = self._store.list_dir(prefix)
        return [d for d in dirs if self._store.exists(f"{prefix}{d}/{METADATA_KEY}")]

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
        from zarrox.api import create_array

        self._check_writable()
        return create_array(self._store, name=self._child_path(name), **kwargs)

    def create_group(
        self, name: str, *, attributes: dict[str, Any] | None = None, overwrite: bool = False
    ) -> Group:
        from zarrox.api import create_group

        self._check_writable()
        return create_group(
            self._store, path=self._child_path(name), attributes=attributes, overwrite=overwrite
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
            raise ReadOnlyError(f"group '{self._path}' is opened read-only")

    def tree(self) -> TreeView:
        return TreeView(self)


class TreeView:
    """A text rendering of a group's hierarchy (``print(group.tree())``)."""

    def __init__(self, group: Group) -> None:
        self._group = group

    def _lines(self, group: Group, indent: str) -> list[str]:
        lines = []
        members = group.members()
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Array):
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
            else:
                lines.append(f"{indent}{branch}{name}")
                lines.extend(self._lines(node, indent + ("    " if last else "│   ")))
        return lines

    def __str__(self) -> str:
        return "\n".join([self._group.name, *self._lines(self._group, "")])

    __repr__ = __str__
