"""Consolidated metadata: v2 ``.zmetadata`` and the v3 inline form in a group's ``zarr.json``.

v2 (``.zmetadata`` next to the root ``.zgroup``)::

    {"metadata": {".zgroup": {...}, ".zattrs": {...}, "a/.zattrs": {...}, "a/.zarray": {...}},
     "zarr_consolidated_format": 1}

Two writers are reproduced byte for byte (:func:`build_zmetadata` and
:func:`dumps_zmetadata`, ``style``):

``"zarr3"`` (zarr-python 3.1 ``consolidate_metadata``)
    ``".zgroup"`` then ``".zattrs"`` of the root, then for every node, ordered by depth and
    then by NFKC-casefolded path, its ``.zattrs`` (always, ``{}`` when empty) and its
    ``.zarray`` (in zarr-python 3.1's member order, ``dimension_separator`` always written)
    or ``.zgroup`` (which zarr-python 3.1 writes as ``{"zarr_format": 2,
    "consolidated_metadata": {"metadata": {}, "must_understand": false, "kind": "inline"}}``
    for every child group). Encoded on one line (``json.dumps`` defaults).
``"zarr2"`` (zarr-python 2.18 ``consolidate_metadata``)
    The documents as stored (``.zattrs`` only where the store has one), keys sorted, 4-space
    indent.

v3 (zarr-python 3.1 only; not part of the v3 spec): the root group's ``zarr.json`` has
``"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {<path>:
<zarr.json document>}}`` with every node below the group, flattened (keys are paths relative to
the group), ordered as above; child groups carry an empty inline ``consolidated_metadata``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from zarrox.errors import MetadataError
from zarrox.metadata._checks import (
    check_object,
    copy_json,
    document_where,
    is_text,
    require_members,
)
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, V2Style, dumps_v2
from zarrox.metadata.v3 import ArrayMetadataV3, GroupMetadataV3

__all__ = [
    "ZMETADATA_KEY",
    "build_consolidated_v3",
    "build_zmetadata",
    "dumps_zmetadata",
    "parse_consolidated_v3",
    "parse_zmetadata",
    "zmetadata_entries",
    "zmetadata_nodes",
]

#: The store key of v2 consolidated metadata (relative to the consolidated group).
ZMETADATA_KEY = ".zmetadata"

_V2_DOCS = (".zarray", ".zgroup", ".zattrs")
#: What zarr-python 3.1 writes for every child group's ``.zgroup`` in ``.zmetadata``.
_ZARR3_CHILD_ZGROUP_CM = {"metadata": {}, "must_understand": False, "kind": "inline"}


def _order_key(node_path: str) -> tuple[int, str]:
    """zarr-python 3.1's order of consolidated nodes: depth, then NFKC-casefolded path."""
    return node_path.count("/"), unicodedata.normalize("NFKC", node_path).casefold()


def _split_key(key: str) -> tuple[str, str] | None:
    """``"a/b/.zarray"`` -> ``("a/b", ".zarray")``; ``".zgroup"`` -> ``("", ".zgroup")``."""
    node, _, name = key.rpartition("/")
    if name not in _V2_DOCS:
        return None
    if key.startswith("/") or (node and (node.endswith("/") or "//" in node)):
        return None
    return node, name


# --------------------------------------------------------------------------------------------
# v2: .zmetadata
# --------------------------------------------------------------------------------------------


def parse_zmetadata(doc: object, *, path: str = "") -> dict[str, dict[str, Any]]:
    """Validate a decoded ``.zmetadata``; return its ``"metadata"`` mapping (a deep copy).

    Keys must be ``[<node path>/].zarray``, ``.zgroup`` or ``.zattrs``, and values objects; the
    documents themselves are checked by :func:`zmetadata_nodes`.
    """
    where = document_where(ZMETADATA_KEY, path)
    doc = check_object(doc, where)
    require_members(doc, ("zarr_consolidated_format",), where)
    fmt = doc["zarr_consolidated_format"]
    if isinstance(fmt, bool) or fmt != 1:
        raise MetadataError(f"{where}zarr_consolidated_format: expected 1, got {fmt!r}")
    require_members(doc, ("metadata",), where)
    metadata = doc["metadata"]
    if not isinstance(metadata, Mapping):
        raise MetadataError(f"{where}metadata: must be an object, got {metadata!r}")
    out: dict[str, dict[str, Any]] = {}
    for key, value in metadata.items():
        if not is_text(key) or _split_key(key) is None:
            raise MetadataError(
                f"{where}metadata: key {key!r} is not a metadata key (expected "
                "'[<path>/].zarray', '.zgroup' or '.zattrs')"
            )
        if not isinstance(value, Mapping):
            raise MetadataError(f"{where}metadata[{key!r}]: must be an object, got {value!r}")
        out[key] = copy_json(dict(value))
    return out


def zmetadata_nodes(
    entries: Mapping[str, Mapping[str, Any]], *, path: str = ""
) -> dict[str, ArrayMetadataV2 | GroupMetadataV2]:
    """``.zmetadata`` entries -> metadata per node path (``""`` for the consolidated group).

    ``path`` (the consolidated group's path) only prefixes node paths in error messages. A node
    with both ``.zarray`` and ``.zgroup``, or with only ``.zattrs``, is a MetadataError.
    """
    where = document_where(ZMETADATA_KEY, path)
    docs: dict[str, dict[str, Mapping[str, Any]]] = {}
    for key, value in entries.items():
        split = _split_key(key)
        if split is None:
            raise MetadataError(f"{where}metadata: key {key!r} is not a metadata key")
        docs.setdefault(split[0], {})[split[1]] = value
    out: dict[str, ArrayMetadataV2 | GroupMetadataV2] = {}
    for node in sorted(docs, key=_order_key):
        found = docs[node]
        full = "/".join(p for p in (path, node) if p)
        zattrs = found.get(".zattrs")
        if ".zarray" in found and ".zgroup" in found:
            raise MetadataError(f"{where}node {node!r} has both .zarray and .zgroup")
        if ".zarray" in found:
            out[node] = ArrayMetadataV2.from_json(found[".zarray"], zattrs, path=full)
        elif ".zgroup" in found:
            out[node] = GroupMetadataV2.from_json(found[".zgroup"], zattrs, path=full)
        else:
            raise MetadataError(f"{where}node {node!r} has .zattrs but neither .zarray nor .zgroup")
    return out


def zmetadata_entries(
    nodes: Mapping[str, ArrayMetadataV2 | GroupMetadataV2],
) -> dict[str, dict[str, Any]]:
    """Metadata per node path (``""`` for the group itself) -> ``.zmetadata`` entries."""
    out: dict[str, dict[str, Any]] = {}
    for node, meta in nodes.items():
        prefix = f"{node}/" if node else ""
        name = ".zarray" if isinstance(meta, ArrayMetadataV2) else ".zgroup"
        out[f"{prefix}{name}"] = meta.to_json()
        out[f"{prefix}.zattrs"] = meta.attributes_json()
    return out


def build_zmetadata(
    entries: Mapping[str, Mapping[str, Any]], *, style: V2Style = "zarr3", path: str = ""
) -> dict[str, Any]:
    """The ``.zmetadata`` document for these entries (``{"a/.zarray": {...}, ...}``, the
    group's own ``.zgroup``/``.zattrs`` included or not), as zarr-python writes it.

    ``style="zarr3"`` normalizes as zarr-python 3.1 does (see the module docstring: each
    ``.zarray`` is validated and rewritten in 3.1's form, ``.zattrs`` added where missing,
    child ``.zgroup`` get 3.1's ``consolidated_metadata`` member); ``style="zarr2"`` keeps the
    documents as given, keys sorted.
    """
    where = document_where(ZMETADATA_KEY, path)
    for key in entries:
        if not isinstance(key, str) or _split_key(key) is None:
            raise MetadataError(f"{where}metadata: key {key!r} is not a metadata key")
    if style == "zarr2":
        return {
            "metadata": {k: copy_json(dict(entries[k])) for k in sorted(entries)},
            "zarr_consolidated_format": 1,
        }
    if style != "zarr3":
        raise ValueError(f'style must be "zarr3" or "zarr2", got {style!r}')
    if ".zarray" in entries:
        raise MetadataError(
            f"{where}metadata: '.zarray' at the root: consolidated metadata belongs to a group"
        )
    nodes = zmetadata_nodes(
        {k: v for k, v in entries.items() if k not in (".zgroup", ".zattrs")}, path=path
    )
    root_attrs = entries.get(".zattrs", {})
    if not isinstance(root_attrs, Mapping):
        raise MetadataError(f"{where}metadata['.zattrs']: must be an object")
    if ".zgroup" in entries:
        GroupMetadataV2.from_json(entries[".zgroup"], root_attrs, path=path)
    metadata: dict[str, Any] = {
        ".zgroup": {"zarr_format": 2},
        ".zattrs": copy_json(dict(root_attrs)),
    }
    for node, meta in nodes.items():  # already in zarr-python 3.1's order
        metadata[f"{node}/.zattrs"] = meta.attributes_json()
        if isinstance(meta, ArrayMetadataV2):
            meta.dimension_separator_given = True
            metadata[f"{node}/.zarray"] = meta.to_json()
        else:
            metadata[f"{node}/.zgroup"] = {
                "zarr_format": 2,
                "consolidated_metadata": copy_json(_ZARR3_CHILD_ZGROUP_CM),
            }
    return {"metadata": metadata, "zarr_consolidated_format": 1}


def dumps_zmetadata(doc: Mapping[str, Any], *, style: V2Style = "zarr3") -> bytes:
    """Encode a ``.zmetadata`` document as zarr-python 3.1 (one line) or 2.18 (sorted,
    4-space indent) writes it."""
    if style == "zarr3":
        try:
            return json.dumps(doc, allow_nan=True).encode()
        except (TypeError, ValueError) as e:
            raise MetadataError(f"cannot encode metadata as JSON: {e}") from None
    return dumps_v2(doc, style=style)


# --------------------------------------------------------------------------------------------
# v3: inline consolidated metadata
# --------------------------------------------------------------------------------------------


def parse_consolidated_v3(value: object, *, path: str = "") -> dict[str, dict[str, Any]]:
    """A group's ``consolidated_metadata`` member -> ``{node path: zarr.json document}``.

    Checks the envelope (``kind`` "inline", ``must_understand`` false, ``metadata`` an object)
    and that every entry is a v3 array or group document (``zarr_format`` 3, ``node_type``);
    the documents are returned as stored (deep copies), to be parsed with
    :func:`zarrox.metadata.v3.parse_node` when needed.
    """
    where = f"zarr.json at {path!r}: consolidated_metadata"
    if not isinstance(value, Mapping):
        raise MetadataError(f"{where}: must be an object, got {value!r}")
    kind = value.get("kind")
    if kind != "inline":
        raise MetadataError(f'{where}.kind: expected "inline", got {kind!r}')
    if value.get("must_understand", False) is not False:
        raise MetadataError(
            f"{where}.must_understand: expected false, got {value.get('must_understand')!r}"
        )
    metadata = value.get("metadata")
    if not isinstance(metadata, Mapping):
        raise MetadataError(f"{where}.metadata: must be an object, got {metadata!r}")
    out: dict[str, dict[str, Any]] = {}
    for key, doc in metadata.items():
        label = f"{where}.metadata[{key!r}]"
        if not is_text(key) or not key or key.startswith("/") or key.endswith("/"):
            raise MetadataError(f"{label}: not a node path")
        if not isinstance(doc, Mapping):
            raise MetadataError(f"{label}: must be an object, got {doc!r}")
        if doc.get("zarr_format") != 3 or isinstance(doc.get("zarr_format"), bool):
            raise MetadataError(f"{label}.zarr_format: expected 3, got {doc.get('zarr_format')!r}")
        if doc.get("node_type") not in ("array", "group"):
            raise MetadataError(
                f"{label}.node_type: expected 'array' or 'group', got {doc.get('node_type')!r}"
            )
        out[key] = copy_json(dict(doc))
    return out


def check_parents(
    nodes: Mapping[str, object], is_group: Callable[[object], bool], where: str
) -> None:
    """Error unless every node of consolidated metadata (by path relative to the consolidated
    group) has its parent listed, as a group: a hierarchy, not a list of paths."""
    for rel in nodes:
        parent = rel.rpartition("/")[0]
        if parent and (parent not in nodes or not is_group(nodes[parent])):
            raise MetadataError(
                f"{where}node {rel!r} is listed without its parent group {parent!r}"
            )


def build_consolidated_v3(
    nodes: Mapping[str, Mapping[str, Any] | ArrayMetadataV3 | GroupMetadataV3],
    *,
    path: str = "",
) -> dict[str, Any]:
    """The ``consolidated_metadata`` member zarr-python 3.1 ``consolidate_metadata`` writes.

    ``nodes``: every node below the group, by path relative to it (``"a"``, ``"a/b"``), as
    ``zarr.json`` documents or metadata objects. Array documents are kept as given; group
    documents are rewritten with an empty inline ``consolidated_metadata``, as zarr-python 3.1
    flattens nested groups.
    """
    entries: list[tuple[str, dict[str, Any]]] = []
    for key, node in nodes.items():
        if isinstance(node, ArrayMetadataV3 | GroupMetadataV3):
            node = node.to_json()
        if not isinstance(node, Mapping):
            raise MetadataError(f"zarr.json at {path!r}: node {key!r} must be a document")
        if node.get("node_type") == "group":
            full = "/".join(p for p in (path, key) if p)
            group = GroupMetadataV3.from_json(node, path=full)
            group.consolidated_metadata = {
                "kind": "inline",
                "must_understand": False,
                "metadata": {},
            }
            doc = group.to_json()
        else:
            doc = copy_json(dict(node))
        entries.append((key, doc))
    entries.sort(key=lambda item: _order_key(item[0]))
    out = {"kind": "inline", "must_understand": False, "metadata": dict(entries)}
    parse_consolidated_v3(out, path=path)
    return out
