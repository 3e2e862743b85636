"""Zarr v1 (``specs/v1/v1.0.rst``, written by zarr-python 1.x): read support.

A v1 store holds one array: its metadata under the key ``meta`` (a JSON object with
``zarr_format`` 1, ``shape``, ``chunks``, ``dtype``, ``compression``, ``compression_opts``,
``fill_value`` and ``order``), its attributes under ``attrs`` and its chunks under ``0.0``,
``1.2``, ... (indices joined with ``"."``). Chunks overhang the array's edge (every chunk has the
full chunk shape) and each is the chunk's raw bytes passed through the compressor, with no header.

The array maps onto the v2 description the Rust core takes (:meth:`ArrayMetadataV1.to_v2`): the
compressions are the bitstreams numcodecs reads (zarr-python 1.x called ``zlib.compress``,
``bz2.compress``, ``lzma.compress`` and c-blosc's ``blosc_compress`` directly), so they become
``numcodecs.zlib``, ``numcodecs.bz2``, ``numcodecs.lzma`` and ``numcodecs.blosc``; ``none`` is no
codec.

Two details of what zarr-python 1.x actually wrote, checked against its source and its output:

- ``order``: its blosc compressor compressed the chunk's memory, so an ``"F"`` array's chunks
  are in F layout; its zlib, bz2, lzma and none compressors compressed ``ndarray.tobytes()``,
  which is C layout whatever the array's order. zarrox reads what was written: F layout for
  blosc, C layout otherwise (the spec says ``order`` gives the layout; zarr-python 1.x was the
  only v1 writer).
- ``fill_value``: missing chunks were ``ndarray.fill(fill_value)``, so any JSON scalar numpy
  can fill the data type with is taken the same way (``0`` for a structured type sets every
  field to 0; a string for ``S`` types); bare ``NaN``/``Infinity`` tokens are read. ``null``
  (the contents of missing chunks are undefined) reads as zeros, as v2 ``null`` does.

zarrox never writes v1: convert it to v3 with :func:`zarrox.convert`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NoReturn

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata._checks import (
    check_chunks_length,
    check_object,
    copy_json,
    document_where,
    parse_json,
    require_members,
)
from zarrox.metadata._checks import int_tuple as _int_tuple
from zarrox.metadata._checks import is_int as _is_int
from zarrox.metadata.description import ArrayDescription
from zarrox.metadata.dtypes import parse_v2_dtype
from zarrox.metadata.v2 import ArrayMetadataV2, check_order_and_separator
from zarrox.metadata.v2_codecs import complete_codec

__all__ = [
    "V1_ATTRS_KEY",
    "V1_COMPRESSIONS",
    "V1_META_KEY",
    "ArrayMetadataV1",
    "LegacyArray",
    "LegacyNode",
    "legacy_write_error",
    "loads_v1",
]

V1_META_KEY = "meta"
V1_ATTRS_KEY = "attrs"

#: The compressions zarr-python 1.x registered (``gzip`` was an alias of its zlib compressor).
V1_COMPRESSIONS = ("blosc", "zlib", "bz2", "lzma", "none")
_ALIASES = {"gzip": "zlib", None: "none"}

#: the members of a blosc compression_opts zarr-python 1.x read (others were ignored); the
#: ones left out are numcodecs' defaults, which were 1.x's
_BLOSC_OPTS = ("cname", "clevel", "shuffle")


def legacy_write_error(legacy_format: str) -> UnsupportedError:
    """The error for writing metadata of a format zarrox reads but never writes."""
    return UnsupportedError(
        f"zarrox reads {legacy_format} but does not write it: convert it to Zarr v3 with "
        "zarrox.convert(source, dest) or `zarrox convert SRC DST`"
    )


def loads_v1(data: bytes | str, *, key: str = V1_META_KEY, path: str = "") -> Any:
    """Decode a v1 ``meta`` or ``attrs`` document (bare ``NaN``/``Infinity`` accepted, as
    Python's json module wrote them)."""
    return parse_json(data, document_where(key, path))


def _level(opts: object, lo: int, hi: int, name: str, where: str) -> dict[str, int]:
    """``{"level": opts}`` (1.x took levels from ``lo`` to ``hi``), ``{}`` for the default."""
    if opts is None:
        return {}
    if not _is_int(opts) or not lo <= int(opts) <= hi:  # type: ignore[call-overload]
        raise MetadataError(
            f"{where}compression_opts: {name} takes a level from {lo} to {hi}, got {opts!r}"
        )
    return {"level": int(opts)}  # type: ignore[call-overload]


def _compressor(compression: str, opts: object, where: str) -> dict[str, Any] | None:
    """The numcodecs configuration that decodes a v1 compression's chunks, complete and
    checked as v2 checks one."""
    if compression == "none":
        return None
    if compression == "zlib":
        config: dict[str, Any] = {"id": "zlib", **_level(opts, 0, 9, "zlib", where)}
    elif compression == "bz2":
        config = {"id": "bz2", **_level(opts, 1, 9, "bz2", where)}
    elif opts is not None and not isinstance(opts, Mapping):
        raise MetadataError(f"{where}compression_opts: {compression} takes an object, got {opts!r}")
    elif compression == "blosc":
        given = dict(opts or {})
        config = {"id": "blosc", **{k: given[k] for k in _BLOSC_OPTS if k in given}}
        if "cname" in config:
            config["cname"] = str(config["cname"])
    else:
        # lzma: zarr-python 1.x's defaults were FORMAT_XZ, CHECK_NONE, preset 1 (not
        # numcodecs' CHECK_CRC64 and no preset).
        given = dict(opts or {})
        config = {
            "id": "lzma",
            "format": given.get("format", 1),
            "check": given.get("check", 0),
            "preset": given.get("preset", 1 if not given.get("filters") else None),
            "filters": copy_json(given.get("filters")),
        }
    return complete_codec(config, where, "compression_opts")


def _fill_scalar(value: object, dtype: np.dtype[Any], where: str) -> Any:
    """``fill_value`` as zarr-python 1.x applied it: ``ndarray.fill(value)``; None for null."""
    if value is None:
        return None
    if isinstance(value, Mapping | list):
        raise MetadataError(f"{where}fill_value: must be a scalar or null, got {value!r}")
    if isinstance(value, str) and dtype.kind in "fc" and value in ("NaN", "Infinity", "-Infinity"):
        value = float(value.replace("Infinity", "inf"))
    one = np.zeros((), dtype=dtype)
    try:
        one.fill(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise MetadataError(
            f"{where}fill_value: {value!r} does not fit data type {dtype.str}: {e}"
        ) from None
    return one[()]


class LegacyNode:
    """The metadata of a node in a format zarrox reads but never writes (v1, the draft v3
    layout)."""

    #: names the format in the error raised on any write
    legacy_format: ClassVar[str]

    def to_json(self) -> NoReturn:
        """Never: zarrox does not write this format (:func:`legacy_write_error`)."""
        raise legacy_write_error(self.legacy_format)


class LegacyArray(LegacyNode, ABC):
    """An array of a legacy format, read as the v2 array :meth:`to_v2` gives."""

    shape: tuple[int, ...]

    @abstractmethod
    def to_v2(self) -> ArrayMetadataV2:
        """The v2 array whose chunks are byte for byte this array's chunks."""

    def fill_bytes(self) -> bytes:
        return self.to_v2().fill_bytes()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def data_type(self) -> str:
        return self.to_v2().data_type


@dataclass(eq=False)
class ArrayMetadataV1(LegacyArray):
    """A Zarr v1 array: its ``meta`` and ``attrs`` documents.

    ``dtype`` keeps the stored byte order; ``compression`` is the canonical name (``none``
    for no compression) and ``compression_opts`` as stored; ``fill_value`` is a numpy scalar of
    ``dtype`` (None for ``null``).
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype[Any]
    compression: str = "none"
    compression_opts: Any = None
    fill_value: Any = None
    order: Literal["C", "F"] = "C"
    attributes: dict[str, Any] = field(default_factory=dict)

    zarr_format: ClassVar[int] = 1
    legacy_format: ClassVar[str] = "Zarr v1"

    @classmethod
    def from_json(cls, meta: object, attrs: object = None, *, path: str = "") -> ArrayMetadataV1:
        """Validate a decoded ``meta`` (and ``attrs``, None when absent)."""
        where = document_where(V1_META_KEY, path)
        meta = check_object(meta, where)
        if meta.get("zarr_format") != 1 or isinstance(meta.get("zarr_format"), bool):
            raise MetadataError(f"{where}zarr_format: expected 1, got {meta.get('zarr_format')!r}")
        require_members(
            meta, ("shape", "chunks", "dtype", "compression", "fill_value", "order"), where
        )
        shape = _int_tuple(meta["shape"], "shape", where, positive=False)
        chunks = _int_tuple(meta["chunks"], "chunks", where, positive=True)
        check_chunks_length(chunks, shape, "chunks", where)
        if not shape:
            raise UnsupportedError(f"{where}zero-dimensional v1 arrays are not supported")
        dtype = parse_v2_dtype(meta["dtype"], where)
        if dtype.hasobject:
            raise UnsupportedError(f"{where}object data types are not supported")
        compression = meta["compression"]
        if isinstance(compression, str):
            compression = _ALIASES.get(compression, compression)
        if compression not in V1_COMPRESSIONS:
            raise UnsupportedError(
                f"{where}unsupported compression {meta['compression']!r} "
                f"(v1 has {list(V1_COMPRESSIONS)})"
            )
        opts = copy_json(meta.get("compression_opts"))
        _compressor(compression, opts, where)  # checked as v2 checks a numcodecs configuration
        order = meta["order"]
        check_order_and_separator(order, None, where)
        if attrs is None:
            attributes: dict[str, Any] = {}
        elif isinstance(attrs, Mapping):
            attributes = copy_json(dict(attrs))
        else:
            raise MetadataError(f"{document_where(V1_ATTRS_KEY, path)}must be a JSON object")
        return cls(
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            compression=compression,
            compression_opts=opts,
            fill_value=_fill_scalar(meta["fill_value"], dtype, where),
            order=order,
            attributes=attributes,
        )

    # ---- the core description ----------------------------------------------------------

    @property
    def compressor(self) -> dict[str, Any] | None:
        """The numcodecs configuration that decodes the chunks (None for ``none``)."""
        return _compressor(self.compression, self.compression_opts, "")

    @property
    def filters(self) -> None:
        return None

    @property
    def layout(self) -> Literal["C", "F"]:
        """The layout of the bytes in a chunk, as zarr-python 1.x wrote them (see the module
        docstring): the array's order with blosc, C otherwise."""
        return self.order if self.compression == "blosc" else "C"

    def to_v2(self) -> ArrayMetadataV2:
        """The v2 array whose chunks are byte for byte this array's chunks."""
        return ArrayMetadataV2(
            shape=self.shape,
            chunks=self.chunks,
            dtype=self.dtype,
            compressor=self.compressor,
            filters=None,
            fill_value=self.fill_value,
            order=self.layout,
            dimension_separator=".",
        )

    def to_core_json(self) -> ArrayDescription:
        """The :class:`~zarrox.metadata.description.ArrayDescription` the Rust core takes:
        :meth:`to_v2`'s (chunk keys ``0.0``: the v2 encoding)."""
        return self.to_v2().to_core_json()

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self.chunks
