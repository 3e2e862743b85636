"""Where a new node goes: the parent groups it needs, and what already at its path an
overwrite removes or forbids."""

from __future__ import annotations

from typing import Any

from zarrox.errors import (
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    UnsupportedError,
    ZarroxError,
)
from zarrox.metadata import GroupMetadataV3
from zarrox.metadata.v2 import GroupMetadataV2
from zarrox.nodes.discover import node_exists, read_node
from zarrox.nodes.node import (
    NodeMetadata,
    is_array,
    write_node,
)
from zarrox.storage import Store


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
