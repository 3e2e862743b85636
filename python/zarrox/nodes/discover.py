"""What is stored at a node path: one step reads the store and says which format and which
document (:func:`discover`), then that format's parser makes the metadata (:meth:`Found.parse`:
:mod:`zarrox.metadata.v3`, ``v2``, ``v1``, ``draft_v3``, which take documents, never a store).

The formats are probed in this order: v3 ``zarr.json`` (or, when its ``zarr_format`` is a draft
URI, the entry point of a 2022 draft v3 hierarchy rooted at the path), v2 ``.zarray`` then
``.zgroup`` (with ``.zattrs``), v1 ``meta`` (with ``attrs``), and last a draft v3 hierarchy
whose entry point is at an ancestor. ``zarr_format`` limits the probe to one format (3 covers
the draft layout). All store reads of node metadata live here (and consolidated metadata:
:func:`read_consolidated`); writing is :func:`zarrox.nodes.node.write_node`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from zarrox.errors import (
    MetadataError,
    UnsupportedError,
    in_node,
    names_node,
    naming_node,
)
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, draft_v3, parse_node
from zarrox.metadata._checks import parse_json
from zarrox.metadata.consolidated import (
    ZMETADATA_KEY,
    check_parents,
    parse_consolidated_v3,
    parse_zmetadata,
    zmetadata_nodes,
)
from zarrox.metadata.draft_v3 import DraftArrayMetadata, DraftGroupMetadata, Hierarchy
from zarrox.metadata.v1 import V1_ATTRS_KEY, V1_META_KEY, ArrayMetadataV1, loads_v1
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, loads_v2
from zarrox.storage import Store

METADATA_KEY = "zarr.json"
V2_ARRAY_KEY = ".zarray"
V2_GROUP_KEY = ".zgroup"
V2_ATTRS_KEY = ".zattrs"
#: the documents whose presence makes a path a node (besides a draft hierarchy's)
NODE_KEYS = (METADATA_KEY, V2_ARRAY_KEY, V2_GROUP_KEY, V1_META_KEY)

ArrayMetadata = ArrayMetadataV3 | ArrayMetadataV2 | ArrayMetadataV1 | DraftArrayMetadata
GroupMetadata = GroupMetadataV3 | GroupMetadataV2 | DraftGroupMetadata
NodeMetadata = ArrayMetadata | GroupMetadata

#: the layouts :func:`discover` tells apart
Format = Literal["v3", "v2", "v1", "draft"]


def node_key(path: str, name: str) -> str:
    """The store key of the document ``name`` of the node at ``path``."""
    return f"{path}/{name}" if path else name


@dataclass(frozen=True)
class Found:
    """The documents of a node, as :func:`discover` found them in the store.

    ``key`` is the store key of the node's metadata document (for an implicit draft group,
    which has none, the prefix listing its children); ``document`` its content: the decoded
    ``zarr.json`` for v3 (decoded to tell it from a draft entry point), the stored bytes
    otherwise, None for an implicit draft group; ``attributes`` the bytes of v2's
    ``.zattrs`` or v1's ``attrs`` when stored. A draft node names its ``hierarchy`` and its
    path ``rel`` inside it."""

    format: Format
    path: str
    key: str
    document: Any
    attributes: bytes | None = None
    hierarchy: Hierarchy | None = None
    rel: str = ""

    def parse(self) -> NodeMetadata:
        """The node's metadata, made by its format's parser. The parsers of v3, v2 and v1
        documents are given the node's path and name it in their errors (a draft node's
        errors name the hierarchy's documents)."""
        if self.format == "draft":
            return self._parse_draft()
        try:
            return self._parse_at_path()
        except (MetadataError, UnsupportedError) as e:
            naming_node(e, self.path)
            raise

    def _parse_at_path(self) -> NodeMetadata:
        path = self.path
        if self.format == "v3":
            return parse_node(self.document, path=path)
        if self.format == "v2":
            name = V2_ARRAY_KEY if self.key.endswith(V2_ARRAY_KEY) else V2_GROUP_KEY
            doc = loads_v2(self.document, key=name, path=path)
            attrs = (
                None
                if self.attributes is None
                else loads_v2(self.attributes, key=V2_ATTRS_KEY, path=path)
            )
            cls = ArrayMetadataV2 if name == V2_ARRAY_KEY else GroupMetadataV2
            return cls.from_json(doc, attrs, path=path)
        if self.format == "v1":
            return ArrayMetadataV1.from_json(
                loads_v1(self.document, path=path),
                None
                if self.attributes is None
                else loads_v1(self.attributes, key=V1_ATTRS_KEY, path=path),
                path=path,
            )
        raise AssertionError(self.format)

    def _parse_draft(self) -> NodeMetadata:
        assert self.hierarchy is not None
        if self.document is None:
            return draft_v3.implicit_group(self.hierarchy, self.rel)
        if self.key == self.hierarchy.array_key(self.rel):
            return draft_v3.array_from_document(self.document, self.hierarchy, self.rel)
        return draft_v3.group_from_document(self.document, self.hierarchy, self.rel)


def read_document(store: Store, path: str) -> dict[str, Any] | None:
    """The parsed zarr.json of the node at ``path``, or None if there is none."""
    raw = store.get(node_key(path, METADATA_KEY))
    if raw is None:
        return None
    try:
        doc = parse_json(raw, f"zarr.json at '{path}': ")
    except MetadataError as e:
        naming_node(e, path)  # its message begins with where it was given
        raise
    if not isinstance(doc, dict):
        raise naming_node(MetadataError(f"zarr.json at '{path}': must be a JSON object"), path)
    return doc


def discover(store: Store, path: str, zarr_format: int | None = None) -> Found | None:
    """Which format and which document the node at ``path`` has (probing the formats in the
    order of the module's docstring), or None when there is no node."""
    if zarr_format in (None, 3):
        doc = read_document(store, path)
        if doc is not None:
            if draft_v3.is_entry_point(doc):
                return _draft_node(store, path, _hierarchy(store, path, doc), "")
            return Found("v3", path, node_key(path, METADATA_KEY), doc)
    if zarr_format in (None, 2):
        for name in (V2_ARRAY_KEY, V2_GROUP_KEY):
            raw = store.get(node_key(path, name))
            if raw is not None:
                attrs = store.get(node_key(path, V2_ATTRS_KEY))
                return Found("v2", path, node_key(path, name), raw, attrs)
    if zarr_format in (None, 1):
        raw = store.get(node_key(path, V1_META_KEY))
        if raw is not None:
            attrs = store.get(node_key(path, V1_ATTRS_KEY))
            return Found("v1", path, node_key(path, V1_META_KEY), raw, attrs)
    if zarr_format in (None, 3) and path:
        hierarchy = find_hierarchy(store, path)
        if hierarchy is not None:
            return _draft_node(store, path, *hierarchy)
    return None


def read_node(store: Store, path: str, zarr_format: int | None = None) -> NodeMetadata | None:
    """The metadata of the node at ``path`` (:func:`discover`, then its format's parser),
    or None. Errors name the node, also those found in a document elsewhere (a draft
    hierarchy's entry point)."""
    try:
        found = discover(store, path, zarr_format)
        return None if found is None else found.parse()
    except (MetadataError, UnsupportedError) as e:
        if names_node(e, path):
            raise
        raise in_node(e, "node", path) from None


def node_exists(store: Store, path: str) -> bool:
    """Whether a node's metadata is at ``path`` (a draft node's must also parse)."""
    if any(store.exists(node_key(path, key)) for key in NODE_KEYS):
        return True
    hierarchy = find_hierarchy(store, path) if path else None
    if hierarchy is None:
        return False
    found = _draft_node(store, path, *hierarchy)
    return found is not None and found.parse() is not None


def child_names(store: Store, path: str, meta: NodeMetadata | None = None) -> list[str]:
    """Names of the nodes directly below ``path`` (a group with metadata ``meta``), sorted."""
    if isinstance(meta, DraftGroupMetadata):
        assert meta.hierarchy is not None
        keys, dirs = store.list_dir(meta.hierarchy.children_prefix(meta.rel))
        return meta.hierarchy.names_in_listing(keys, dirs)
    prefix = path + "/" if path else ""
    _, dirs = store.list_dir(prefix)
    return [d for d in dirs if node_exists(store, prefix + d)]


def read_consolidated(
    store: Store, path: str, meta: NodeMetadata
) -> dict[str, NodeMetadata] | None:
    """The consolidated metadata of the group at ``path`` (v3 inline, or v2
    ``.zmetadata``), by node path relative to it, or None when there is none."""
    if isinstance(meta, GroupMetadataV3):
        if meta.consolidated_metadata is None:
            return None
        docs = parse_consolidated_v3(meta.consolidated_metadata, path=path)
        nodes: dict[str, NodeMetadata] = {}
        for rel, doc in docs.items():
            nodes[rel] = parse_node(doc, path=node_key(path, rel))
        where = f"zarr.json at {path!r}: consolidated_metadata: "
    else:
        raw = store.get(node_key(path, ZMETADATA_KEY))
        if raw is None:
            return None
        entries = parse_zmetadata(loads_v2(raw, key=ZMETADATA_KEY, path=path), path=path)
        nodes = {rel: m for rel, m in zmetadata_nodes(entries, path=path).items() if rel}
        where = f"{ZMETADATA_KEY} at {path!r}: "
    check_parents(nodes, lambda m: isinstance(m, GroupMetadataV3 | GroupMetadataV2), where)
    return nodes


# -- the 2022 draft v3 layout ------------------------------------------------------------------


def find_hierarchy(store: Store, path: str) -> tuple[Hierarchy, str] | None:
    """The draft hierarchy ``path`` belongs to and the node's path inside it, or None.

    Looks for ``zarr.json`` at ``path`` and its ancestors, nearest first; the first one found
    decides (a draft entry point: this hierarchy; anything else: None)."""
    parts = path.split("/") if path else []
    for i in range(len(parts), -1, -1):
        root = "/".join(parts[:i])
        raw = store.get(node_key(root, draft_v3.ENTRY_POINT_KEY))
        if raw is None:
            continue
        try:
            doc = parse_json(raw, "")
        except MetadataError:
            return None
        if not draft_v3.is_entry_point(doc):
            return None
        return _hierarchy(store, root, doc), "/".join(parts[i:])
    return None


def _hierarchy(store: Store, root: str, doc: dict[str, Any]) -> Hierarchy:
    """The hierarchy of the entry point ``doc`` at ``root``, in the layout its store holds."""
    hierarchy = Hierarchy.from_entry_point(root, doc)
    if hierarchy.zarr2 or _has_root_layout(store, hierarchy):
        return hierarchy
    return hierarchy.without_root()


def _has_root_layout(store: Store, hierarchy: Hierarchy) -> bool:
    if any(store.exists(k) for k in (hierarchy.array_key(""), hierarchy.group_key(""))):
        return True
    listed, dirs = store.list_dir(hierarchy.children_prefix(""))
    return bool(listed or dirs)


def _draft_node(store: Store, path: str, hierarchy: Hierarchy, rel: str) -> Found | None:
    """The node ``rel`` of a draft hierarchy: an array, an explicit or implicit group, or
    None."""
    for key in (hierarchy.array_key(rel), hierarchy.group_key(rel)):
        raw = store.get(key)
        if raw is not None:
            return Found("draft", path, key, raw, hierarchy=hierarchy, rel=rel)
    prefix = hierarchy.children_prefix(rel)
    keys, dirs = store.list_dir(prefix)
    if not rel or keys or dirs:
        return Found("draft", path, prefix, None, hierarchy=hierarchy, rel=rel)
    return None
