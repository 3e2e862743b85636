"""Reading and writing the metadata document of a ``zarr3`` or ``zarr`` (v2) array the way
TensorStore does (``zarr.json`` or ``.zarray``, compact with sorted members, no ``.zattrs``),
and the zarrox :class:`~zarrox.Array` over it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from zarrox.array import Array
from zarrox.errors import ArrayNotFoundError
from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.v2 import ArrayMetadataV2, loads_v2
from zarrox.nodes import node as nodes
from zarrox.nodes.node import V2_ATTRS_KEY, join
from zarrox.storage import Store
from zarrox.tensorstore_spec._json import dumps
from zarrox.tensorstore_spec.of_array import (
    METADATA_KEYS,
)


def metadata_key(path: str, driver: str) -> str:
    return join(path, METADATA_KEYS[driver])


def read_document(store: Store, path: str, driver: str) -> dict[str, Any] | None:
    """The stored metadata document of the array at ``path``, or None when there is none."""
    if driver == "zarr":
        raw = store.get(metadata_key(path, driver))
        return None if raw is None else loads_v2(raw, path=path)
    doc = nodes.read_document(store, path)
    if doc is not None and doc.get("node_type") != "array":
        raise ArrayNotFoundError(
            f"{metadata_key(path, driver)}: the node is a {doc.get('node_type')!r}, not an array"
        )
    return doc


def write_document(store: Store, path: str, driver: str, doc: Mapping[str, Any]) -> None:
    store.set(metadata_key(path, driver), dumps(doc))


def make_array(
    store: Store,
    path: str,
    driver: str,
    doc: Mapping[str, Any],
    *,
    read_only: bool,
    write_empty_chunks: bool,
) -> Array:
    """The zarrox array over ``doc`` (a v2 array gets its ``.zattrs`` when there is one)."""
    meta: ArrayMetadataV3 | ArrayMetadataV2
    if driver == "zarr3":
        meta = ArrayMetadataV3.from_json(doc, path=path)
    else:
        raw_attrs = store.get(join(path, V2_ATTRS_KEY))
        attrs = None if raw_attrs is None else loads_v2(raw_attrs, key=V2_ATTRS_KEY, path=path)
        meta = ArrayMetadataV2.from_json(doc, attrs, path=path)
    return Array(
        store, path, meta, read_only=read_only, config={"write_empty_chunks": write_empty_chunks}
    )


def compatibility_key(driver: str, doc: Mapping[str, Any]) -> str:
    """What must not change while an array is open: everything but the shape and the
    attributes (compared in zarrox's normalized form, whoever wrote the document)."""
    normalized = (
        ArrayMetadataV3.from_json(doc).to_json()
        if driver == "zarr3"
        else ArrayMetadataV2.from_json(doc).to_json()
    )
    return json.dumps(
        {k: v for k, v in normalized.items() if k not in ("shape", "attributes")}, sort_keys=True
    )
