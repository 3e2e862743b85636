"""Helpers shared by arrays and groups: node paths and metadata documents."""

from __future__ import annotations

import json
from typing import Any

from zarrox.errors import MetadataError
from zarrox.storage import Store

METADATA_KEY = "zarr.json"


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
