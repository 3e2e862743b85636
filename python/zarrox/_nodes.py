"""Reading and writing node metadata in either format (v3 ``zarr.json``, v2
``.zarray``/``.zgroup``/``.zattrs``), reading the legacy formats (v1 ``meta``/``attrs``, the
2022 draft v3 layout), and node paths."""

from __future__ import annotations

import os
from typing import Any

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, draft_v3, dumps, parse_node
from zarrox.metadata._checks import parse_json
from zarrox.metadata.draft_v3 import DraftArrayMetadata, DraftGroupMetadata
from zarrox.metadata.v1 import V1_ATTRS_KEY, V1_META_KEY, ArrayMetadataV1, loads_v1
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, dumps_v2, loads_v2
from zarrox.storage import LocalStore, MemoryStore, Store

METADATA_KEY = "zarr.json"
V2_ARRAY_KEY = ".zarray"
V2_GROUP_KEY = ".zgroup"
V2_ATTRS_KEY = ".zattrs"
NODE_KEYS = (METADATA_KEY, V2_ARRAY_KEY, V2_GROUP_KEY, V1_META_KEY)

ArrayMetadata = ArrayMetadataV3 | ArrayMetadataV2 | ArrayMetadataV1 | DraftArrayMetadata
GroupMetadata = GroupMetadataV3 | GroupMetadataV2 | DraftGroupMetadata
NodeMetadata = ArrayMetadata | GroupMetadata
#: formats zarrox reads but never writes (their metadata has a ``legacy_format``)
LegacyMetadata = ArrayMetadataV1 | DraftArrayMetadata | DraftGroupMetadata


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
    doc = parse_json(raw, f"zarr.json at '{path}': ")
    if not isinstance(doc, dict):
        raise MetadataError(f"zarr.json at '{path}': must be a JSON object")
    return doc


def _read_v2(store: Store, path: str, key: str) -> dict[str, Any] | None:
    raw = store.get(join(path, key))
    return None if raw is None else loads_v2(raw, key=key, path=path)


def _read_v1(store: Store, path: str) -> ArrayMetadataV1 | None:
    raw = store.get(join(path, V1_META_KEY))
    if raw is None:
        return None
    attrs = store.get(join(path, V1_ATTRS_KEY))
    return ArrayMetadataV1.from_json(
        loads_v1(raw, path=path),
        None if attrs is None else loads_v1(attrs, key=V1_ATTRS_KEY, path=path),
        path=path,
    )


def read_node(store: Store, path: str, zarr_format: int | None = None) -> NodeMetadata | None:
    """The metadata of the node at ``path`` (v3 first, then v2, v1 and the draft v3 layout,
    whose hierarchy's entry point is ``zarr.json`` at ``path`` or an ancestor), or None.
    Errors name the node, also those found in a document elsewhere (a draft hierarchy's entry
    point)."""
    try:
        return _read_node(store, path, zarr_format)
    except (MetadataError, UnsupportedError) as e:
        if f"'{path}'" in str(e):
            raise
        raise type(e)(f"node '{path}': {e}") from None


def _read_node(store: Store, path: str, zarr_format: int | None) -> NodeMetadata | None:
    if zarr_format in (None, 3):
        doc = read_document(store, path)
        if doc is not None:
            if draft_v3.is_entry_point(doc):
                hierarchy = draft_v3.Hierarchy.from_entry_point(store, path, doc)
                return draft_v3.read_node(store, hierarchy, "")
            return parse_node(doc, path=path)
    if zarr_format in (None, 2):
        zarray = _read_v2(store, path, V2_ARRAY_KEY)
        if zarray is not None:
            return ArrayMetadataV2.from_json(zarray, _read_v2(store, path, V2_ATTRS_KEY), path=path)
        zgroup = _read_v2(store, path, V2_GROUP_KEY)
        if zgroup is not None:
            return GroupMetadataV2.from_json(zgroup, _read_v2(store, path, V2_ATTRS_KEY), path=path)
    if zarr_format in (None, 1):
        v1 = _read_v1(store, path)
        if v1 is not None:
            return v1
    if zarr_format in (None, 3) and path:
        found = draft_v3.find_hierarchy(store, path)
        if found is not None:
            return draft_v3.read_node(store, *found)
    return None


def is_legacy(meta: object) -> bool:
    """Whether ``meta`` is of a format zarrox reads but does not write (v1, draft v3)."""
    return isinstance(meta, LegacyMetadata)


def read_only_message(kind: str, path: str, meta: object) -> str:
    """The message of the ReadOnlyError a write to a read-only node raises."""
    if is_legacy(meta):
        return (
            f"{kind} '{path}' is stored in {meta.legacy_format}, which zarrox reads but does "  # type: ignore[union-attr]
            "not write: convert it to Zarr v3 with zarrox.convert(source, dest) or "
            "`zarrox convert SRC DST`"
        )
    return f"{kind} '{path}' is opened read-only"


def write_node(store: Store, path: str, meta: NodeMetadata) -> None:
    """Store a node's metadata documents; errors (attributes JSON cannot hold) name it."""
    if is_legacy(meta):
        raise UnsupportedError(read_only_message("node", path, meta))
    try:
        _write_node(store, path, meta)
    except MetadataError as e:
        if f"'{path}'" in str(e):
            raise
        raise MetadataError(f"node '{path}': {e}") from None


def _write_node(store: Store, path: str, meta: NodeMetadata) -> None:
    if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3):
        store.set(join(path, METADATA_KEY), dumps(meta.to_json()))
        return
    key = V2_ARRAY_KEY if isinstance(meta, ArrayMetadataV2) else V2_GROUP_KEY
    store.set(join(path, key), dumps_v2(meta.to_json()))
    store.set(join(path, V2_ATTRS_KEY), dumps_v2(meta.attributes_json()))


def node_exists(store: Store, path: str) -> bool:
    if any(store.exists(join(path, key)) for key in NODE_KEYS):
        return True
    found = draft_v3.find_hierarchy(store, path) if path else None
    return found is not None and draft_v3.read_node(store, *found) is not None


def child_names(store: Store, path: str, meta: NodeMetadata | None = None) -> list[str]:
    """Names of the nodes directly below ``path`` (a group with metadata ``meta``), sorted."""
    if isinstance(meta, DraftGroupMetadata):
        return meta.child_names(store)
    prefix = path + "/" if path else ""
    _, dirs = store.list_dir(prefix)
    return [d for d in dirs if node_exists(store, prefix + d)]


def is_array(meta: NodeMetadata) -> bool:
    return isinstance(
        meta, ArrayMetadataV3 | ArrayMetadataV2 | ArrayMetadataV1 | DraftArrayMetadata
    )


def zarr_format(meta: NodeMetadata) -> int:
    """3 for v3 (and the draft v3 layout, as zarr-python 2.x reported it), 2, or 1."""
    if isinstance(
        meta, ArrayMetadataV3 | GroupMetadataV3 | DraftArrayMetadata | DraftGroupMetadata
    ):
        return 3
    return 1 if isinstance(meta, ArrayMetadataV1) else 2


def store_url(store: Store) -> str:
    """The URL of ``store`` as zarr-python prints it (``file://...``, ``memory://<id>``, or
    the store's own ``url``)."""
    url = getattr(store, "url", None)
    if isinstance(url, str):
        return url
    if isinstance(store, LocalStore):
        return f"file://{store.root.as_posix()}"
    if isinstance(store, MemoryStore):
        return f"memory://{id(store)}"
    return repr(store)


def store_token(store: Store) -> tuple[str, ...]:
    """What identifies ``store``'s data for dask: the absolute path of a local store, the
    identity of a memory store, else its URL."""
    if isinstance(store, LocalStore):
        return ("file", os.path.abspath(store.root))
    if isinstance(store, MemoryStore):
        return ("memory", str(id(store)))
    return ("url", store_url(store))


class StorePath:
    """A store and a path in it (zarr-python's ``StorePath``): ``str()`` is the node's URL."""

    def __init__(self, store: Store, path: str = "") -> None:
        self.store = store
        self.path = normalize_path(path)

    def __truediv__(self, other: str) -> StorePath:
        return StorePath(self.store, join(self.path, normalize_path(other)))

    def __str__(self) -> str:
        url = store_url(self.store)
        return f"{url.rstrip('/')}/{self.path}" if self.path else url

    def __repr__(self) -> str:
        return f"StorePath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StorePath) and other.store == self.store and other.path == self.path
        )

    def __hash__(self) -> int:
        return hash((id(self.store), self.path))


class Node:
    """What arrays and groups share: where they are and what describes them."""

    _store: Store
    _path: str
    _metadata: NodeMetadata
    _read_only: bool

    def __eq__(self, other: object) -> bool:
        """The same kind of node at the same path of an equal store, with equal metadata
        (as zarr-python compares arrays and groups: an unpickled copy equals the original)."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Node)
        return (
            self._path == other._path
            and self._store == other._store
            and self._metadata == other._metadata
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._path))

    @property
    def zarr_format(self) -> int:
        return zarr_format(self._metadata)

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
    def store_path(self) -> StorePath:
        """The store and the node's path in it (``str()``: the node's URL)."""
        return StorePath(self._store, self._path)
