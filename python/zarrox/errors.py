"""The exceptions zarrox raises.

Each subclasses the builtin a caller would naturally catch (``ValueError`` for bad
metadata and corrupt data, ``FileNotFoundError`` for missing nodes, ...), and every
message names the node, and for chunk errors the chunk key, where it happened.

When zarr-python is installed, the classes that have a counterpart in ``zarr.errors``
also subclass it, so code written for zarr-python (``except
zarr.errors.ArrayNotFoundError``) catches zarrox's. zarr-python stays optional: without
it the classes subclass the same builtins only.
"""

from __future__ import annotations

from typing import Any


def _zarr_errors() -> Any:
    try:
        import zarr.errors
    except ImportError:
        return None
    return zarr.errors


_ZARR_ERRORS = _zarr_errors()


def _zarr(name: str, *builtins: type) -> tuple[type, ...]:
    """Base classes: ``zarr.errors.<name>`` when zarr-python has it, followed by those of
    ``builtins`` it does not already subclass; else ``builtins``."""
    cls = getattr(_ZARR_ERRORS, name, None)
    if not isinstance(cls, type):
        return builtins
    return (cls, *(b for b in builtins if not issubclass(cls, b)))


class ZarroxError(Exception):
    """Base class of every zarrox exception."""


class MetadataError(ZarroxError, *_zarr("MetadataValidationError", ValueError)):
    """Metadata (zarr.json, .zarray, a codec configuration) is malformed or invalid."""


class UnsupportedError(ZarroxError, NotImplementedError):
    """A codec, data type, extension or feature that zarrox does not support."""


class NodeNotFoundError(ZarroxError, *_zarr("NodeNotFoundError", FileNotFoundError, ValueError)):
    """No array or group exists at the path. Also a ValueError, as zarr-python's
    ``NodeNotFoundError`` is."""


class ArrayNotFoundError(NodeNotFoundError, *_zarr("ArrayNotFoundError")):
    """No array exists at the path."""


class GroupNotFoundError(NodeNotFoundError, *_zarr("GroupNotFoundError")):
    """No group exists at the path."""


class ContainsNodeError(ZarroxError, FileExistsError, ValueError):
    """A node already exists where one is being created without ``overwrite=True``
    (or an array is where a parent group would be). Also a ValueError, as zarr-python's
    ``ContainsArrayError`` and ``ContainsGroupError`` are."""


class ContainsArrayError(ContainsNodeError, *_zarr("ContainsArrayError")):
    """An array is in the way (zarr-python's name)."""


class ContainsGroupError(ContainsNodeError, *_zarr("ContainsGroupError")):
    """A group is in the way (zarr-python's name)."""


class UnsupportedDataTypeError(UnsupportedError, TypeError, ValueError):
    """A data type zarrox does not know. A TypeError, as zarr-python raises when an array is
    created with one, and a ValueError, as it raises when it opens one."""


class UnknownCodecError(UnsupportedError, *_zarr("UnknownCodecError", KeyError, ValueError)):
    """A codec zarrox does not know. A KeyError, as zarr-python raises when an array is
    created with one, and a ValueError (zarr-python's ``UnknownCodecError``), as it raises
    when it opens one."""

    def __str__(self) -> str:
        # the message, not KeyError's repr of it
        return Exception.__str__(self)


class BoundsCheckError(*_zarr("BoundsCheckError", IndexError)):
    """An index is out of bounds (zarr-python's ``BoundsCheckError``)."""


class NegativeStepError(*_zarr("NegativeStepError", IndexError)):
    """A slice has a negative or zero step (zarr-python's ``NegativeStepError``)."""


class VindexInvalidSelectionError(*_zarr("VindexInvalidSelectionError", IndexError)):
    """A ``vindex`` selection that is neither coordinates nor a mask."""


class CopyError(ZarroxError, RuntimeError):
    """``copy``, ``copy_all`` or ``copy_store`` found something in the way (zarr-python 2's
    ``CopyError``)."""


class CodecError(ZarroxError, ValueError):
    """A chunk could not be encoded or decoded."""


class PickleCodecDisabledError(ZarroxError, *_zarr("PickleCodecDisabledError", ValueError)):
    """A chunk stored with the ``pickle`` codec was not decoded, because unpickling can run
    arbitrary code and the user has not opted in (``array.allow_unsafe_pickle_decode``; see
    :mod:`zarrox.pickle_codec`). zarr-python 3.4's ``PickleCodecDisabledError``."""


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


class StorageOptionsError(ZarroxError, TypeError, ValueError):
    """``storage_options`` given where they cannot apply (a local path, a store object). A
    TypeError, as zarr-python raises, and a ValueError."""


class StorePermissionError(StoreError, PermissionError):
    """The store refused access (HTTP 401/403: credentials, permissions)."""


class StoreTimeoutError(StoreError, TimeoutError):
    """A store request timed out (after its retries)."""


class WriteConflictError(StoreError):
    """A read-modify-write (a partial chunk or shard write, a metadata update) kept losing
    to other writers: each time it merged and wrote on the condition that the stored value
    was still the one it read, another writer had committed first, until the retries ran
    out. Nothing of it was written; the message names the array, the chunk and the store.
    Also raised where ``io.conditional_writes`` is ``"require"`` and the store cannot write
    on condition."""


class ReadOnlyError(ZarroxError, PermissionError, ValueError):
    """A write was attempted on a node opened read-only. Also a ValueError, which is
    what zarr-python raises then."""


__all__ = [
    "ArrayNotFoundError",
    "BoundsCheckError",
    "ChecksumError",
    "CodecError",
    "ContainsArrayError",
    "ContainsGroupError",
    "ContainsNodeError",
    "CopyError",
    "CorruptChunkError",
    "GroupNotFoundError",
    "MetadataError",
    "MissingChunkError",
    "NegativeStepError",
    "NodeNotFoundError",
    "PickleCodecDisabledError",
    "ReadOnlyError",
    "SpecError",
    "SpecMismatchError",
    "StoreError",
    "StorageOptionsError",
    "StorePermissionError",
    "StoreTimeoutError",
    "UnknownCodecError",
    "UnsupportedDataTypeError",
    "UnsupportedError",
    "VindexInvalidSelectionError",
    "WriteConflictError",
    "ZarroxError",
]
