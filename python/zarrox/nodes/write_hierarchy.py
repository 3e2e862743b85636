"""Writing a hierarchy of nodes at once (``create_hierarchy``): node metadata (objects or
dicts) checked, then written parents first."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarrox.errors import (
    ContainsArrayError,
    ContainsGroupError,
)
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, parse_node
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrox.nodes.discover import read_node
from zarrox.nodes.node import (
    NodeMetadata,
    is_array,
    normalize_path,
    write_node,
)
from zarrox.nodes.node import zarr_format as format_of
from zarrox.nodes.place import new_group_metadata
from zarrox.storage import Store


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
