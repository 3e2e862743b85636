"""Reading and writing node metadata in either format (v3 ``zarr.json``, v2
``.zarray``/``.zgroup``/``.zattrs``), and node paths."""

from __future__ import annotations

import json
from typing import Any

from zarrox.errors import MetadataError
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, dumps, parse_node
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, dumps_v2, loads_v2
from zarrox.storage import Store

METADATA_KEY = "zarr.json"
V2_ARRAY_KEY = ".zarray"
V2_GROUP_KEY = ".zgroup"
V2_ATTRS_KEY = ".zattrs"
NODE_KEYS = (METADATA_KEY, V2_ARRAY_KEY, V2_GROUP_KEY)

ArrayMetadata = ArrayMetadataV3 | ArrayMetadataV2
GroupMetadata = GroupMetadataV3 | GroupMetadataV2
NodeMetadata = ArrayMetadata | GroupMetadata


def normalize_path(path: str | None) -> str:
    """A node path without leading or trailing slashes ("" for the root)."""
    if not path:
        return ""
    parts = [p for p in str(path).split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"invalid node path {path!r}")
    return "/".join(parts)


def join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def read_document(store: Store, path: str) -> dict[str, Any] | None:
    """The parsed zarr.json of the node at ``path``, or None if there is none."""
    raw = store.get(join(path, METADATA_KEY))
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise MetadataError(f"zarr.json at '{path}': not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise MetadataError(f"zarr.json at '{path}': must be a JSON object")
    return doc


def _read_v2(store: Store, path: str, key: str) -> dict[str, Any] | None:
    raw = store.get(join(path, key))
    return None if raw is None else loads_v2(raw, key=key, path=path)


def read_node(store: Store, path: str, zarr_format: int | None = None) -> NodeMetadata | None:
    """The metadata of the node at ``path`` (v3 first, then v2), or None."""
    if zarr_format in (None, 3):
        doc = read_document(store, path)
        if doc is not None:
            return parse_node(doc, path=path)
    if zarr_format in (None, 2):
        zarray = _read_v2(store, path, V2_ARRAY_KEY)
        if zarray is not None:
            return ArrayMetadataV2.from_json(zarray, _read_v2(store, path, V2_ATTRS_KEY), path=path)
        zgroup = _read_v2(store, path, V2_GROUP_KEY)
        if zgroup is not None:
            return GroupMetadataV2.from_json(zgroup, _read_v2(store, path, V2_ATTRS_KEY), path=path)
    return None


def write_node(store: Store, path: str, meta: NodeMetadata) -> None:
    """Store a node's metadata documents."""
    if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3):
        store.set(join(path, METADATA_KEY), dumps(meta.to_json()))
        return
    key = V2_ARRAY_KEY if isinstance(meta, ArrayMetadataV2) else V2_GROUP_KEY
    store.set(join(path, key), dumps_v2(meta.to_json()))
    store.set(join(path, V2_ATTRS_KEY), dumps_v2(meta.attributes_json()))


def node_exists(store: Store, path: str) -> bool:
    return any(store.exists(join(path, key)) for key in NODE_KEYS)


def child_names(store: Store, path: str) -> list[str]:
    """Names of the nodes directly below ``path``, sorted."""
    prefix = path + "/" if path else ""
    _, dirs = store.list_dir(prefix)
    return [d for d in dirs if node_exists(store, prefix + d)]


def is_array(meta: NodeMetadata) -> bool:
    return isinstance(meta, ArrayMetadataV3 | ArrayMetadataV2)


def zarr_format(meta: NodeMetadata) -> int:
    return 3 if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3) else 2
