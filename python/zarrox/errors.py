"""The exceptions zarrox raises.

Each subclasses the builtin a caller would naturally catch (``ValueError`` for bad
metadata and corrupt data, ``FileNotFoundError`` for missing nodes, ...), and every
message names the node, and for chunk errors the chunk key, where it happened.

Where zarr-python is imported (before zarrox or after it), the classes that have a
counterpart in ``zarr.errors`` also subclass it, so code written for zarr-python (``except
zarr.errors.ArrayNotFoundError``) catches zarrox's. zarrox does not import zarr-python for
that (it costs more than zarrox itself): the classes subclass the builtins only, and
:func:`_subclass_zarr_errors` adds zarr-python's classes to their bases when ``zarr.errors``
is imported (:mod:`zarrox._post_import`), or at once when it is imported already. An
``except`` clause matches on the real bases of the class, which this changes.
"""

from __future__ import annotations

import gzip
import lzma
import re
import zlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from zarrox._post_import import when_imported

E = TypeVar("E", bound=BaseException)
C = TypeVar("C", bound=type)

#: zarrox class -> (the name of its counterpart in ``zarr.errors``, the builtins its bases
#: end with that the counterpart replaces where it subclasses them), in the order of
#: definition (a class before its subclasses)
_COUNTERPARTS: dict[type, tuple[str, tuple[type, ...]]] = {}


def _zarr(name: str, *builtins: type) -> Callable[[C], C]:
    """A class that also subclasses ``zarr.errors.<name>`` where zarr-python is imported:
    its bases become those before ``builtins`` (which its bases end with), the zarr-python
    class, and those of ``builtins`` the zarr-python class does not already subclass (the
    builtin itself, for the Python forms below)."""

    def register(cls: C) -> C:
        if builtins and cls.__bases__[-len(builtins) :] != builtins:
            raise TypeError(f"{cls.__name__}'s bases do not end with {builtins}")
        _COUNTERPARTS[cls] = (name, builtins)
        return cls

    return register


def _subclass_zarr_errors(zarr_errors: ModuleType) -> None:
    """Give each class of :data:`_COUNTERPARTS` its ``zarr_errors`` class as a base (where
    zarr-python has it); idempotent. The layouts agree (the same builtins below), so Python
    allows the new bases."""
    for cls, (name, builtins) in _COUNTERPARTS.items():
        counterpart = getattr(zarr_errors, name, None)
        if not isinstance(counterpart, type) or issubclass(cls, counterpart):
            continue
        own = cls.__bases__[: len(cls.__bases__) - len(builtins)]
        cls.__bases__ = (
            *own,
            counterpart,
            *(b for b in builtins if not issubclass(counterpart, _builtin(b))),
        )


def _builtin(cls: type) -> type:
    """The builtin exception ``cls`` is, or is the Python form of."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


# Python may give a class new bases only where its instances are laid out as before. A
# Python subclass of a builtin exception adds a slot (for weak references) that the builtin
# lacks, so a class whose layout comes from FileNotFoundError or IndexError itself could not
# take zarr-python's subclass of it (NodeNotFoundError, BoundsCheckError, ...) as a base.
# These forms of the builtins are Python classes laid out as zarr-python's are; the classes
# that may be rebased subclass them instead of the builtins.


class _FileNotFoundError(FileNotFoundError):
    """``FileNotFoundError``, laid out as its Python subclasses are."""


class _IndexError(IndexError):
    """``IndexError``, laid out as its Python subclasses are."""


class ZarroxError(Exception):
    """Base class of every zarrox exception."""


@_zarr("MetadataValidationError", ValueError)
class MetadataError(ZarroxError, ValueError):
    """Metadata (zarr.json, .zarray, a codec configuration) is malformed or invalid."""


class UnsupportedError(ZarroxError, NotImplementedError):
    """A codec, data type, extension or feature that zarrox does not support."""


@_zarr("NodeNotFoundError", _FileNotFoundError, ValueError)
class NodeNotFoundError(ZarroxError, _FileNotFoundError, ValueError):
    """No array or group exists at the path. Also a ValueError, as zarr-python's
    ``NodeNotFoundError`` is."""


@_zarr("ArrayNotFoundError")
class ArrayNotFoundError(NodeNotFoundError):
    """No array exists at the path."""


@_zarr("GroupNotFoundError")
class GroupNotFoundError(NodeNotFoundError):
    """No group exists at the path."""


class ContainsNodeError(ZarroxError, FileExistsError, ValueError):
    """A node already exists where one is being created without ``overwrite=True``
    (or an array is where a parent group would be). Also a ValueError, as zarr-python's
    ``ContainsArrayError`` and ``ContainsGroupError`` are."""


@_zarr("ContainsArrayError")
class ContainsArrayError(ContainsNodeError):
    """An array is in the way (zarr-python's name)."""


@_zarr("ContainsGroupError")
class ContainsGroupError(ContainsNodeError):
    """A group is in the way (zarr-python's name)."""


class UnsupportedDataTypeError(UnsupportedError, TypeError, ValueError):
    """A data type zarrox does not know. A TypeError, as zarr-python raises when an array is
    created with one, and a ValueError, as it raises when it opens one."""


@_zarr("UnknownCodecError", KeyError, ValueError)
class UnknownCodecError(UnsupportedError, KeyError, ValueError):
    """A codec zarrox does not know. A KeyError, as zarr-python raises when an array is
    created with one, and a ValueError (zarr-python's ``UnknownCodecError``), as it raises
    when it opens one."""

    def __str__(self) -> str:
        # the message, not KeyError's repr of it
        return Exception.__str__(self)


@_zarr("BoundsCheckError", _IndexError)
class BoundsCheckError(_IndexError):
    """An index is out of bounds (zarr-python's ``BoundsCheckError``)."""


@_zarr("NegativeStepError", _IndexError)
class NegativeStepError(_IndexError):
    """A slice has a negative or zero step (zarr-python's ``NegativeStepError``)."""


@_zarr("VindexInvalidSelectionError", _IndexError)
class VindexInvalidSelectionError(_IndexError):
    """A ``vindex`` selection that is neither coordinates nor a mask."""


class CopyError(ZarroxError, RuntimeError):
    """``copy``, ``copy_all`` or ``copy_store`` found something in the way (zarr-python 2's
    ``CopyError``)."""


class CodecError(ZarroxError, ValueError):
    """A chunk could not be encoded or decoded."""


@_zarr("PickleCodecDisabledError", ValueError)
class PickleCodecDisabledError(ZarroxError, ValueError):
    """A chunk stored with the ``pickle`` codec was not decoded, because unpickling can run
    arbitrary code and the user has not opted in (``array.allow_unsafe_pickle_decode``; see
    :mod:`zarrox.pickle_codec`). zarr-python 3.4's ``PickleCodecDisabledError``."""


class CorruptChunkError(CodecError):
    """Stored chunk bytes are truncated or corrupt.

    Also an instance of what zarr-python raises for the same bytes, which depends on the
    codec that failed (the Python library it decodes with): a ``RuntimeError`` for zstd,
    blosc, lz4, pcodec and numcodecs' checksums, a ``zlib.error`` for zlib, an
    ``OSError`` for bz2, ``gzip.BadGzipFile``, ``EOFError`` and ``zlib.error`` for gzip,
    an ``lzma.LZMAError`` for lzma; a ``ValueError`` otherwise (the bytes codec, a shard
    index, crc32c). ``CorruptChunkError(message)`` is then of the subclass of the codec
    that the message names (``"array 'a', chunk 'c/0': zstd: ..."``, as the core words
    them), e.g. ``ZstdCorruptChunkError``, so ``except RuntimeError`` around a zarr-python
    read catches zarrox's error for a corrupt zstd chunk too.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls in (CorruptChunkError, ChecksumError) and args and isinstance(args[0], str):
            cls = _codec_error_class(cls, args[0])
        if issubclass(cls, OSError):
            # ValueError's __new__ cannot make an OSError (their layouts differ)
            return OSError.__new__(cls, *args)
        return super().__new__(cls, *args, **kwargs)


class ChecksumError(CorruptChunkError):
    """A stored checksum (crc32c, or numcodecs' checksums) does not match the chunk's
    bytes."""


# The exceptions zarr-python raises for a corrupt chunk of each codec, beyond ValueError:
# those of the library it decodes with (numcodecs, zlib, gzip, bz2, lzma), for garbage,
# truncated and bit-flipped bytes (tests/test_errors.py checks them against zarr-python).
_CODEC_BASES: dict[str, tuple[type, ...]] = {
    "zstd": (RuntimeError,),
    "blosc": (RuntimeError,),
    "lz4": (RuntimeError,),
    "numcodecs.pcodec": (RuntimeError,),
    "zlib": (zlib.error,),
    "gzip": (gzip.BadGzipFile, EOFError, zlib.error),
    "bz2": (OSError,),
    "lzma": (lzma.LZMAError,),
    # numcodecs' checksums raise RuntimeError on a mismatch (zarr-python's v3 crc32c a
    # ValueError, which every CorruptChunkError is)
    "crc32c": (RuntimeError,),
    "crc32": (RuntimeError,),
    "adler32": (RuntimeError,),
    "fletcher32": (RuntimeError,),
    "jenkins_lookup3": (RuntimeError,),
}


def _class_name(codec: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"[._]", codec.removeprefix("numcodecs.")))


def _codec_class(base: type, codec: str) -> type:
    name = f"{_class_name(codec)}{base.__name__}"
    doc = (
        f"{base.__doc__.splitlines()[0] if base.__doc__ else ''} Codec {codec}: also "
        + ", ".join(f"{b.__module__}.{b.__qualname__}" for b in _CODEC_BASES[codec])
        + ", as zarr-python raises."
    )
    return type(name, (base, *_CODEC_BASES[codec]), {"__doc__": doc, "__module__": __name__})


_CODEC_CLASSES: dict[tuple[type, str], type] = {
    (base, codec): _codec_class(base, codec)
    for base in (CorruptChunkError, ChecksumError)
    for codec in _CODEC_BASES
}
globals().update({cls.__name__: cls for cls in _CODEC_CLASSES.values()})

# a codec's name where the core's messages put it: after "array '...', chunk '...': "
# (and "inner chunk [..]: " in a shard), leading a segment ("zstd: ...", "crc32c checksum
# mismatch: ...")
_SEGMENT = re.compile(r"(?:^|: )([a-z][a-z0-9_.]*)(?=[: ])")


def _codec_error_class(base: type, message: str) -> type:
    """The class of ``base`` for the codec that ``message`` names first, else ``base``."""
    for m in _SEGMENT.finditer(message):
        cls = _CODEC_CLASSES.get((base, m.group(1)))
        if cls is not None:
            return cls
    return base


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


class TransactionError(ZarroxError, RuntimeError):
    """A transaction (:class:`zarrox.Transaction`) cannot go on: it was committed or
    aborted already, its staged writes went over its budget (it is then aborted), or an
    operation that cannot be staged (``resize``, ``append``) was called inside it."""


class ReadOnlyError(ZarroxError, PermissionError, ValueError):
    """A write was attempted on a node opened read-only. Also a ValueError, which is
    what zarr-python raises then."""


# --------------------------------------------------------------------------------------------
# which node an error names: attached where it is raised, never read back from its message
# --------------------------------------------------------------------------------------------


def naming_node(error: E, path: str) -> E:
    """``error``, recorded as one whose message already names the node at ``path``: the code
    raising it put the node there (a parser given the node's path, the Rust core naming the
    array it opened), so callers further out do not name it again (:func:`in_node`). The
    innermost record stands: code further out that passes the error on does not change it."""
    if not hasattr(error, "zarrox_node"):
        error.zarrox_node = path  # type: ignore[attr-defined]
    return error


def names_node(error: BaseException, path: str) -> bool:
    """Whether ``error`` was recorded (:func:`naming_node`) as naming the node at ``path``."""
    return getattr(error, "zarrox_node", None) == path


def in_node(error: E, kind: str, path: str) -> E:
    """An error of ``error``'s type whose message begins with the node it happened at
    (``kind 'path': ``), recorded as naming it; for an error that does not name it already
    (:func:`names_node`)."""
    return naming_node(type(error)(f"{kind} '{path}': {error}"), path)


# zarr-python's classes join the bases once zarr.errors is imported (now, if it is already)
when_imported("zarr.errors", _subclass_zarr_errors)

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
    "TransactionError",
    "WriteConflictError",
    "ZarroxError",
]
