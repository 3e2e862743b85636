"""Node paths and what arrays and groups share: writing their metadata (v3 ``zarr.json``,
v2 ``.zarray``/``.zgroup``/``.zattrs``), the read-only rules of the legacy formats, store
URLs. Reading what is stored at a path is :mod:`zarrox.nodes.discover`."""

from __future__ import annotations

import copy
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from zarrox._core import get_conditional_writes
from zarrox.errors import (
    MetadataError,
    UnsupportedError,
    WriteConflictError,
    names_node,
    naming_node,
)
from zarrox.metadata import ArrayMetadataV3, GroupMetadataV3, dumps
from zarrox.metadata._checks import parse_json
from zarrox.metadata.draft_v3 import DraftArrayMetadata, DraftGroupMetadata
from zarrox.metadata.v1 import ArrayMetadataV1
from zarrox.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, dumps_v2
from zarrox.nodes.discover import (
    METADATA_KEY,
    NODE_KEYS,
    V2_ARRAY_KEY,
    V2_ATTRS_KEY,
    V2_GROUP_KEY,
    ArrayMetadata,
    Found,
    GroupMetadata,
    NodeMetadata,
    read_document,
)
from zarrox.storage import LocalStore, MemoryStore, Store

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = [
    "METADATA_KEY",
    "NODE_KEYS",
    "V2_ARRAY_KEY",
    "V2_ATTRS_KEY",
    "V2_GROUP_KEY",
    "ArrayMetadata",
    "GroupMetadata",
    "LegacyMetadata",
    "Node",
    "NodeMetadata",
    "StorePath",
    "is_array",
    "is_legacy",
    "join",
    "normalize_path",
    "read_document",
    "read_only_message",
    "store_token",
    "store_url",
    "update_node",
    "write_node",
    "zarr_format",
]

#: formats zarrox reads but never writes (their metadata has a ``legacy_format``)
LegacyMetadata = ArrayMetadataV1 | DraftArrayMetadata | DraftGroupMetadata
#: formats zarrox writes
WritableMetadata = ArrayMetadataV3 | GroupMetadataV3 | ArrayMetadataV2 | GroupMetadataV2


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


def is_legacy(meta: object) -> TypeIs[LegacyMetadata]:
    """Whether ``meta`` is of a format zarrox reads but does not write (v1, draft v3)."""
    return isinstance(meta, LegacyMetadata)


def read_only_message(kind: str, path: str, meta: object) -> str:
    """The message of the ReadOnlyError a write to a read-only node raises."""
    if is_legacy(meta):
        return (
            f"{kind} '{path}' is stored in {meta.legacy_format}, which zarrox reads but does "
            "not write: convert it to Zarr v3 with zarrox.convert(source, dest) or "
            "`zarrox convert SRC DST`"
        )
    return f"{kind} '{path}' is opened read-only"


def write_node(store: Store, path: str, meta: NodeMetadata) -> None:
    """Store a node's metadata documents; errors (attributes JSON cannot hold) name it."""
    if is_legacy(meta):
        raise UnsupportedError(read_only_message("node", path, meta))
    for key, document in zip(_document_keys(path, meta), _documents(path, meta), strict=True):
        store.set(key, document)


def update_node(
    store: Store, path: str, meta: NodeMetadata, change: Callable[[NodeMetadata], None]
) -> NodeMetadata:
    """Apply ``change`` to the node's metadata and store it; the new metadata.

    Where writes are conditional (``io.conditional_writes``, see
    :func:`conditional_writes`), the change is applied to the documents as stored now and
    written only if they are still the versions read; when another writer committed first,
    they are read again and the change applied again (after a randomised backoff), so that
    two processes setting different attributes keep both and appends each get their own
    rows. Elsewhere ``change`` is applied to ``meta`` and written (the last writer wins)."""
    if is_legacy(meta):
        raise UnsupportedError(read_only_message("node", path, meta))
    keys = _document_keys(path, meta)
    if not conditional_writes(store, keys[0]):
        fresh = copy.deepcopy(meta)
        change(fresh)
        write_node(store, path, fresh)
        return fresh
    for wait in _backoff():
        read = [store.get_versioned(k) for k in keys]
        if read[0][0] is None:
            # The node's document is gone (deleted meanwhile): write it anew, on the
            # condition that it is still absent.
            fresh = copy.deepcopy(meta)
        else:
            fresh = _parse_documents(path, meta, [raw for raw, _ in read])
        change(fresh)
        documents = _documents(path, fresh)
        committed = True
        for key, (raw, generation), new in zip(keys, read, documents, strict=True):
            if raw == new:
                continue
            if not store.set_if(key, new, generation):
                committed = False
                break
        if committed:
            return fresh
        time.sleep(wait)
    raise WriteConflictError(
        f"node '{path}': {store.location(keys[0])!r} was changed by other writers each time "
        f"this update was applied ({_ATTEMPTS} attempts); nothing more was written"
    )


#: how many times a metadata update is tried before it gives up
_ATTEMPTS = 100


def _backoff() -> Iterator[float]:
    """Randomised exponential waits (seconds) between attempts: 1 ms doubling to 100 ms."""
    for attempt in range(1, _ATTEMPTS + 1):
        cap = min(0.001 * 2 ** min(attempt, 7), 0.1)
        yield random.uniform(cap / 2, cap)


def conditional_writes(store: Store, key: str = "") -> bool:
    """Whether read-modify-writes of ``store`` are conditional under the configuration's
    ``io.conditional_writes``: never when "off"; where the store can when "auto"; always
    when "require" (a :class:`~zarrox.errors.WriteConflictError` where it cannot)."""
    mode = get_conditional_writes()
    if mode == "off":
        return False
    able = store.conditional_writes()
    if mode == "require" and not able:
        raise WriteConflictError(
            f"{store.location(key)!r}: io.conditional_writes is 'require', and this store "
            "cannot write on condition (no generations, or a server that ignores "
            "If-Match/If-None-Match); set it to 'auto' or 'off' to let the last writer win"
        )
    return able


def _document_keys(path: str, meta: WritableMetadata) -> list[str]:
    """The keys of the node's metadata documents, the main one first."""
    if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3):
        return [join(path, METADATA_KEY)]
    key = V2_ARRAY_KEY if isinstance(meta, ArrayMetadataV2) else V2_GROUP_KEY
    return [join(path, key), join(path, V2_ATTRS_KEY)]


def _documents(path: str, meta: WritableMetadata) -> list[bytes]:
    """The metadata documents of the node at ``path`` as stored, in :func:`_document_keys`'
    order; errors (attributes JSON cannot hold) name the node."""
    try:
        if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3):
            return [dumps(meta.to_json())]
        return [dumps_v2(meta.to_json()), dumps_v2(meta.attributes_json())]  # type: ignore[union-attr]
    except MetadataError as e:
        if names_node(e, path):
            raise
        raise naming_node(MetadataError(f"node '{path}': {e}"), path) from None


def _parse_documents(
    path: str, meta: WritableMetadata, raw: list[bytes | None]
) -> WritableMetadata:
    """The metadata in the documents ``raw`` (of :func:`_document_keys`; the main one
    stored) of a node of ``meta``'s format."""
    main = raw[0]
    assert main is not None
    if isinstance(meta, ArrayMetadataV3 | GroupMetadataV3):
        doc = parse_json(main, f"zarr.json at '{path}': ")
        parsed = Found("v3", path, join(path, METADATA_KEY), doc).parse()
    else:
        parsed = Found("v2", path, _document_keys(path, meta)[0], main, raw[1]).parse()
    if is_legacy(parsed):
        raise UnsupportedError(read_only_message("node", path, parsed))
    return parsed


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


def is_spec(value: object) -> bool:
    """Whether ``zarrox.open`` should take ``value`` as a TensorStore spec: a dict with a
    ``"driver"``, a :class:`~zarrox.Spec` (or ``tensorstore.Spec``), or a spec URL
    (``"file:///a.zarr/|zarr3:"``). Decided without importing the TensorStore layer
    (:mod:`zarrox.tensorstore_spec`, imported when a spec is opened): a ``Spec`` exists
    only once its module has been imported."""
    spec_module = sys.modules.get("zarrox.tensorstore_spec.spec")
    if spec_module is not None and isinstance(value, spec_module.Spec):
        return True
    if isinstance(value, Mapping):
        return "driver" in value
    if isinstance(value, str):
        return any(f"|{d}:" in value for d in ("zarr3", "zarr2", "zarr"))
    return type(value).__module__.startswith("tensorstore") and callable(
        getattr(value, "to_json", None)
    )


def store_url(store: Store) -> str:
    """The URL of ``store``: its own ``url`` (``file://...``, ``memory://``, ...)."""
    return store.url


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
