"""Plans: what the creation functions decide to make, which ``zarrox.Array._make`` and
``zarrox.Group._make`` turn into nodes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrox.nodes.node import (
    ArrayMetadata,
    GroupMetadata,
    NodeMetadata,
)
from zarrox.storage import Store


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
