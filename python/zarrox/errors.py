"""The exceptions zarrox raises.

Each subclasses the builtin a caller would naturally catch (``ValueError`` for bad
metadata and corrupt data, ``FileNotFoundError`` for missing nodes, ...), and every
message names the node, and for chunk errors the chunk key, where it happened.
"""

from __future__ import annotations


class ZarroxError(Exception):
    """Base class of every zarrox exception."""


class MetadataError(ZarroxError, ValueError):
    """Metadata (zarr.json, .zarray, a codec configuration) is malformed or invalid."""


class UnsupportedError(ZarroxError, NotImplementedError):
    """A codec, data type, extension or feature that zarrox does not support."""


class NodeNotFoundError(ZarroxError, FileNotFoundError, ValueError):
    """No array or group exists at the path. Also a ValueError, as zarr-python's
    ``NodeNotFoundError`` is."""


class ArrayNotFoundError(NodeNotFoundError):
    """No array exists at the path."""


class GroupNotFoundError(NodeNotFoundError):
    """No group exists at the path."""


class ContainsNodeError(ZarroxError, FileExistsError, ValueError):
    """A node already exists where one is being created without ``overwrite=True``
    (or an array is where a parent group would be). Also a ValueError, as zarr-python's
    ``ContainsArrayError`` and ``ContainsGroupError`` are."""


class ContainsArrayError(ContainsNodeError):
    """An array is in the way (zarr-python's name)."""


class ContainsGroupError(ContainsNodeError):
    """A group is in the way (zarr-python's name)."""


class CodecError(ZarroxError, ValueError):
    """A chunk could not be encoded or decoded."""


class CorruptChunkError(CodecError):
    """Stored chunk bytes are truncated or corrupt."""


class ChecksumError(CorruptChunkError):
    """A stored checksum (crc32c) does not match the chunk's bytes."""


class SpecError(ZarroxError, ValueError):
    """A TensorStore-style JSON spec (or an option given with it) is invalid; the message
    names the offending member, e.g. ``metadata.codecs[1].configuration.level``."""


class SpecMismatchError(SpecError):
    """A constraint of a spec does not match the stored array it opens (its metadata or
    schema); the message names the member and both values."""


class MissingChunkError(ZarroxError, FileNotFoundError):
    """A read needed a chunk that is not stored, where the array was opened to require
    stored chunks (a spec's ``"fill_missing_data_reads": false``)."""


class StoreError(ZarroxError, OSError):
    """The store failed to read or write. Messages name the array, the chunk key and the
    store's URL or path."""


class StorePermissionError(StoreError, PermissionError):
    """The store refused access (HTTP 401/403: credentials, permissions)."""


class StoreTimeoutError(StoreError, TimeoutError):
    """A store request timed out (after its retries)."""


class ReadOnlyError(ZarroxError, PermissionError, ValueError):
    """A write was attempted on a node opened read-only. Also a ValueError, which is
    what zarr-python raises then."""


__all__ = [
    "ArrayNotFoundError",
    "ChecksumError",
    "CodecError",
    "ContainsArrayError",
    "ContainsGroupError",
    "ContainsNodeError",
    "CorruptChunkError",
    "GroupNotFoundError",
    "MetadataError",
    "MissingChunkError",
    "NodeNotFoundError",
    "ReadOnlyError",
    "SpecError",
    "SpecMismatchError",
    "StoreError",
    "StorePermissionError",
    "StoreTimeoutError",
    "UnsupportedError",
    "ZarroxError",
]
