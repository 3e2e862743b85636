"""The 2021-22 draft Zarr v3 layout (``specs/seeds/``, written by zarr-python 2.x's
experimental v3 API): read support.

A hierarchy has an entry point ``zarr.json`` whose ``zarr_format`` is a URI:
``https://purl.org/zarr/spec/protocol/core/3.0`` (the form zarr-python 2.x wrote, with
``"metadata_encoding"`` a URI and ``"metadata_key_suffix"`` beside it) or
``https://purl.org/zarr/spec/core/3.0`` (the later draft: ``"metadata_encoding": {"type":
"json", "metadata_key_suffix": ".json"}``). Node metadata lives under ``meta/``, chunks under
``data/``:

==========================  ===============================  =================================
node                        metadata key                     chunk keys
==========================  ===============================  =================================
root array / group          ``meta/root.array.json`` /       ``data/root/c0/1``
                            ``meta/root.group.json``
``a/b``                     ``meta/root/a/b.array.json`` /   ``data/root/a/b/c0/1``
                            ``meta/root/a/b.group.json``
==========================  ===============================  =================================

The last draft (December 2022) dropped the ``root`` segment (``meta/array.json``,
``meta/a/b.group.json``, ``data/a/b/c0/1``); a ``core/3.0`` hierarchy without any
``meta/root`` key is read that way. A path with descendants but no group document is an
implicit group (empty attributes).

Array documents: ``shape``, ``data_type`` (numpy type strings such as ``"<f8"``, ``"bool"``,
``"u1"``, the later names ``"int16"``, ``"float32"``, ``"r16"``, or an extension object
``{"extension", "type", "fallback"}`` whose ``type`` is a numpy type string or field list),
``chunk_grid`` (``{"type": "regular", "chunk_shape", "separator"}``; zarr-python 2.x's
``dimension_separator`` member wins over the separator, as it did there),
``chunk_memory_layout`` (``"C"``/``"F"``), ``fill_value``, ``attributes``, ``extensions``, the
codecs (zarr-python 2.x: one ``compressor`` ``{"codec": URI, "configuration"}`` and numcodecs
``filters`` kept in ``attributes["filters"]``; the draft: ``codecs`` ``[{"type": URI,
"configuration"}]``, the ``endian`` codec setting the byte order), and ``storage_transformers``
(the sharding transformer only).

Everything maps onto the description the Rust core takes: the chunk memory layout ``F`` is a
``transpose`` codec, codecs named by URI are the numcodecs codecs of that name (same
bitstreams: zarr-python 2.x encoded them with numcodecs), chunk keys use the ``draft_v3``
encoding (``c1/0``) under the array's data prefix, and the sharding transformer
(``chunks_per_shard``; an index of (offset, nbytes) little-endian uint64 pairs in C order at the
end of each shard, 2^64-1 for an empty chunk) is the ``sharding_indexed`` codec with the array's
chunk shape as the inner chunk shape, shards of ``chunk_shape * chunks_per_shard``, the array's
codecs as inner codecs and ``index_codecs`` ``[bytes little]`` at the end.

zarrox never writes this layout: convert it to v3 with :func:`zarrox.convert`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from zarrox import _core
from zarrox.errors import (
    MetadataError,
    UnknownCodecError,
    UnsupportedDataTypeError,
    UnsupportedError,
)
from zarrox.metadata._checks import (
    check_chunks_length,
    copy_json,
    is_json_array,
    is_text,
    load_json_object,
    require_members,
)
from zarrox.metadata._checks import int_tuple as _int_tuple
from zarrox.metadata.description import ArrayDescription, describe_array
from zarrox.metadata.dtypes import CORE_TYPES, parse_v2_dtype, v2_data_type
from zarrox.metadata.v1 import LegacyArray, LegacyNode
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.metadata.v2_codecs import check_codec

__all__ = [
    "ENTRY_POINT_KEY",
    "FORMAT_URIS",
    "DraftArrayMetadata",
    "DraftGroupMetadata",
    "Hierarchy",
    "array_from_document",
    "group_from_document",
    "implicit_group",
    "is_entry_point",
]

ENTRY_POINT_KEY = "zarr.json"
PROTOCOL_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
CORE_URI = "https://purl.org/zarr/spec/core/3.0"
#: the ``zarr_format`` URIs of the entry point: zarr-python 2.x's, and the later draft's
FORMAT_URIS = (PROTOCOL_URI, CORE_URI)

_CODEC_URI = re.compile(r"https?://purl\.org/zarr/spec/codecs?/([A-Za-z0-9_-]+)(?:/[0-9.]+)?/?")
_SHARDING_URI = re.compile(
    r"https?://purl\.org/zarr/spec/(?:extensions/)?storage_transformers/sharding/1\.0/?"
)
#: codecs named by URI -> numcodecs ids (the same bitstreams)
_CODECS = ("gzip", "zlib", "blosc", "bz2", "lz4", "lzma", "zstd")
#: the core types by name -> their little-endian v2 type strings
_NAMED_TYPES = {
    **{name: np.dtype(name).newbyteorder("<").str for name in CORE_TYPES},
    # zarr-python 2.x wrote one-byte types without a byte order
    "i1": "|i1",
    "u1": "|u1",
    "b1": "|b1",
}
_RAW = re.compile(r"r([0-9]+)")
_ARRAY_MEMBERS = frozenset(
    {
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_memory_layout",
        "fill_value",
        "attributes",
        "extensions",
        "codecs",
        "compressor",
        "storage_transformers",
        "dimension_separator",
    }
)


def _where(key: str) -> str:
    return f"{key}: "


def _attributes(doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A copy of the document's ``attributes`` (``{}`` when absent), which must be an object."""
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, Mapping):
        raise MetadataError(f"{where}attributes: must be an object, got {attributes!r}")
    return copy_json(dict(attributes))


def is_entry_point(doc: object) -> bool:
    """Whether a decoded ``zarr.json`` is a draft entry point (``zarr_format`` a draft URI)."""
    return isinstance(doc, Mapping) and doc.get("zarr_format") in FORMAT_URIS


def _check_extensions(value: object, where: str) -> None:
    """Extensions this reader does not know must be ``must_understand: false``."""
    if value is None:
        return
    if not is_json_array(value):
        raise MetadataError(f"{where}extensions: must be an array, got {value!r}")
    for ext in value:
        if not isinstance(ext, Mapping):
            raise MetadataError(f"{where}extensions: each must be an object, got {ext!r}")
        if ext.get("must_understand", True) is not False:
            raise UnsupportedError(
                f"{where}unsupported extension {ext.get('extension')!r} (must_understand)"
            )


# --------------------------------------------------------------------------------------------
# The hierarchy: entry point and key layout
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hierarchy:
    """A draft hierarchy in a store: where its entry point is and how keys are formed.

    ``root`` is the store path of the directory holding ``zarr.json``; ``meta`` and ``data``
    are the metadata and chunk prefixes below it (``meta/root`` and ``data/root``, or ``meta``
    and ``data`` in the last draft's layout); ``suffix`` the metadata key suffix."""

    root: str
    meta: str
    data: str
    suffix: str = ".json"
    #: written by zarr-python 2.x (``zarr_format`` ``.../protocol/core/3.0``)
    zarr2: bool = False

    @classmethod
    def from_entry_point(cls, root: str, doc: Mapping[str, Any]) -> Hierarchy:
        """The hierarchy whose entry point ``doc`` is at ``root``, with the ``meta/root``
        layout; :meth:`without_root` is the last draft's layout, which a ``core/3.0``
        hierarchy has when the store holds nothing under ``meta/root`` (no root document at
        :meth:`array_key` or :meth:`group_key` ``("")``, nothing under
        :meth:`children_prefix` ``("")``)."""
        where = _where(_join(root, ENTRY_POINT_KEY))
        encoding = doc.get("metadata_encoding")
        if isinstance(encoding, Mapping):
            if encoding.get("type") != "json" or "extension" in encoding:
                raise UnsupportedError(f"{where}unsupported metadata_encoding {dict(encoding)!r}")
            suffix = encoding.get("metadata_key_suffix", ".json")
        elif encoding in (None, PROTOCOL_URI):
            suffix = doc.get("metadata_key_suffix", ".json")
        else:
            raise UnsupportedError(f"{where}unsupported metadata_encoding {encoding!r}")
        if not is_text(suffix) or "/" in suffix:
            raise MetadataError(
                f"{where}metadata_key_suffix: must be a string without '/', got {suffix!r}"
            )
        _check_extensions(doc.get("extensions"), where)
        zarr2 = doc.get("zarr_format") == PROTOCOL_URI
        return cls(root, "meta/root", "data/root", suffix, zarr2)

    def without_root(self) -> Hierarchy:
        """The same hierarchy in the last draft's layout (no ``root`` segment)."""
        return Hierarchy(self.root, "meta", "data", self.suffix, self.zarr2)

    def _meta_key(self, rel: str, kind: str) -> str:
        if rel:
            key = f"{self.meta}/{rel}.{kind}{self.suffix}"
        elif self.meta.endswith("/root"):
            key = f"{self.meta}.{kind}{self.suffix}"
        else:
            key = f"{self.meta}/{kind}{self.suffix}"
        return _join(self.root, key)

    def array_key(self, rel: str) -> str:
        """The store key of the array metadata document of node ``rel``."""
        return self._meta_key(rel, "array")

    def group_key(self, rel: str) -> str:
        return self._meta_key(rel, "group")

    def children_prefix(self, rel: str) -> str:
        """The store prefix ("" or ending in "/") listing the children of node ``rel``."""
        return _join(self.root, f"{self.meta}/{rel}" if rel else self.meta) + "/"

    def data_path(self, rel: str) -> str:
        """The store path under which the chunks of array ``rel`` are."""
        return _join(self.root, f"{self.data}/{rel}" if rel else self.data)

    def names_in_listing(self, keys: Sequence[str], dirs: Sequence[str]) -> list[str]:
        """Names of the nodes directly below a node, given the listing of its
        :meth:`children_prefix` (explicit nodes and implicit groups)."""
        names = set(dirs)
        for key in keys:
            name = key.rsplit("/", 1)[-1]
            for kind in ("array", "group"):
                ending = f".{kind}{self.suffix}"
                if name.endswith(ending) and len(name) > len(ending):
                    names.add(name[: -len(ending)])
        return sorted(names)


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a else b


# --------------------------------------------------------------------------------------------
# Data types, fill values, codecs
# --------------------------------------------------------------------------------------------


def _parse_type_value(value: object, where: str) -> np.dtype[Any]:
    if isinstance(value, str):
        if value in _NAMED_TYPES:
            return np.dtype(_NAMED_TYPES[value])
        m = _RAW.fullmatch(value)
        if m:
            bits = int(m.group(1))
            if bits <= 0 or bits % 8:
                raise MetadataError(f"{where}data_type: {value!r}: bits must be a multiple of 8")
            return np.dtype(f"V{bits // 8}")
    return parse_v2_dtype(value, where, "data_type")


def parse_data_type(value: object, where: str) -> np.dtype[Any]:
    """``data_type`` -> numpy dtype (byte order as stored when the type names one)."""
    if isinstance(value, Mapping):
        if "type" not in value:
            raise MetadataError(f"{where}data_type: an extension data type needs 'type'")
        try:
            return _parse_type_value(value["type"], where)
        except (MetadataError, UnsupportedError):
            fallback = value.get("fallback")
            options = fallback if isinstance(fallback, list) else [fallback]
            for option in options:
                if option is None:
                    continue
                try:
                    return _parse_type_value(option, where)
                except (MetadataError, UnsupportedError):
                    continue
            raise UnsupportedDataTypeError(
                f"{where}unsupported data type {value.get('type')!r} "
                f"(extension {value.get('extension')!r}) and no usable fallback"
            ) from None
    try:
        return _parse_type_value(value, where)
    except MetadataError:
        if not isinstance(value, str):
            raise  # a field list numpy cannot make is invalid, not an unknown type
        raise UnsupportedDataTypeError(f"{where}unsupported data type {value!r}") from None


def _parse_fill(value: object, dtype: np.dtype[Any], where: str) -> Any:
    """The draft's forms (``"+Infinity"``, ``"0x..."``/``"0b..."`` bits) and zarr-python 2.x's
    (its v2 encoding: ``"NaN"``, base64 bytes, ``[re, im]``, ``null``)."""
    if isinstance(value, str) and dtype.kind in "fc" and value == "+Infinity":
        value = "Infinity"
    if isinstance(value, str) and value[:2] in ("0x", "0b") and dtype.kind not in "SU":
        base = 16 if value[1] == "x" else 2
        try:
            bits = int(value[2:], base)
        except ValueError:
            raise MetadataError(f"{where}fill_value: {value!r} is not a valid number") from None
        if bits >= 256**dtype.itemsize:
            raise MetadataError(f"{where}fill_value: {value!r} does not fit {dtype.itemsize} bytes")
        raw = bits.to_bytes(dtype.itemsize, "big")
        if dtype.kind in "biufcmM" and dtype.itemsize > 1:
            # the digits give the value's bits: most significant first
            return np.frombuffer(raw, dtype=dtype.newbyteorder(">"))[0].astype(
                dtype.newbyteorder("=")
            )
        return np.frombuffer(raw, dtype=dtype)[0]
    try:
        return v2_data_type(dtype).parse_v2_fill(value)
    except MetadataError as e:
        raise MetadataError(f"{where}{e}") from None


def _codec_name(uri: object, where: str) -> str:
    m = _CODEC_URI.fullmatch(uri) if isinstance(uri, str) else None
    name = m.group(1) if m else None
    if name not in (*_CODECS, "endian"):
        raise UnknownCodecError(f"{where}unsupported codec {uri!r}")
    return str(name)


def _numcodecs(name: str, config: object, where: str) -> dict[str, Any]:
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise MetadataError(f"{where}codec {name!r}: configuration must be an object")
    codec = {"id": name, **{k: copy_json(v) for k, v in config.items() if k != "id"}}
    # The configuration as v2 checks a numcodecs one (zarr-python 2.x wrote it with numcodecs).
    return check_codec(codec, where, f"codec {name!r}")


# --------------------------------------------------------------------------------------------
# Node metadata
# --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class DraftArrayMetadata(LegacyArray):
    """An array of a draft v3 hierarchy.

    ``chunk_shape`` is the shape of one stored object (a shard when ``chunks_per_shard`` is
    given; ``inner_chunks`` is then the array's chunk shape); ``dtype`` has the stored byte
    order; ``compressor`` and ``filters`` are numcodecs configurations (bytes filters after the
    bytes, the compressor last); ``data_path`` is the store path the chunk keys are under.
    """

    shape: tuple[int, ...]
    inner_chunks: tuple[int, ...]
    dtype: np.dtype[Any]
    fill_value: Any = None
    order: Literal["C", "F"] = "C"
    compressor: dict[str, Any] | None = None
    filters: list[dict[str, Any]] | None = None
    chunks_per_shard: tuple[int, ...] | None = None
    separator: Literal["/", "."] = "/"
    attributes: dict[str, Any] = field(default_factory=dict)
    data_path: str = ""
    #: the key of a 0-d array's one chunk: "c" as the draft says, "c0" as zarr-python 2.x wrote
    zero_d_key: Literal["c", "c0"] = "c"

    zarr_format: ClassVar[int] = 3
    legacy_format: ClassVar[str] = "the 2022 draft Zarr v3 layout"

    @classmethod
    def from_json(
        cls, doc: Mapping[str, Any], *, key: str, data_path: str, zarr2: bool = False
    ) -> DraftArrayMetadata:
        """Validate a decoded array document; ``zarr2``: written by zarr-python 2.x."""
        where = _where(key)
        unknown = sorted(str(k) for k in doc if k not in _ARRAY_MEMBERS)
        if unknown:
            raise UnsupportedError(f"{where}unknown member(s) {unknown}")
        require_members(doc, ("shape", "data_type", "chunk_grid", "chunk_memory_layout"), where)
        shape = _int_tuple(doc["shape"], "shape", where, positive=False)
        grid = doc["chunk_grid"]
        if not isinstance(grid, Mapping):
            raise MetadataError(f"{where}chunk_grid: must be an object, got {grid!r}")
        if grid.get("type") != "regular" or "extension" in grid:
            raise UnsupportedError(f"{where}unsupported chunk grid {dict(grid)!r}")
        chunks = _int_tuple(grid.get("chunk_shape"), "chunk_grid.chunk_shape", where, positive=True)
        check_chunks_length(chunks, shape, "chunk_grid.chunk_shape", where)
        separator = doc.get("dimension_separator") or grid.get("separator", "/")
        if separator not in ("/", "."):
            raise MetadataError(
                f'{where}chunk_grid.separator: must be "/" or ".", got {separator!r}'
            )
        dtype = parse_data_type(doc["data_type"], where)
        layout = doc["chunk_memory_layout"]
        if layout not in ("C", "F"):
            raise UnsupportedError(f"{where}unsupported chunk_memory_layout {layout!r}")
        attributes = _attributes(doc, where)
        _check_extensions(doc.get("extensions"), where)
        dtype, compressor, filters = cls._codecs(doc, attributes, dtype, zarr2, where)
        return cls(
            # zarr-python 2.x keyed the one chunk of a 0-d array 'c0', not 'c' as the draft says
            zero_d_key="c0" if zarr2 else "c",
            shape=shape,
            inner_chunks=chunks,
            dtype=dtype,
            fill_value=_parse_fill(doc.get("fill_value"), dtype, where),
            order=layout,
            compressor=compressor,
            filters=filters,
            chunks_per_shard=_sharding(doc.get("storage_transformers"), len(shape), where),
            separator=separator,
            attributes=attributes,
            data_path=data_path,
        )

    @staticmethod
    def _codecs(
        doc: Mapping[str, Any],
        attributes: dict[str, Any],
        dtype: np.dtype[Any],
        zarr2: bool,
        where: str,
    ) -> tuple[np.dtype[Any], dict[str, Any] | None, list[dict[str, Any]] | None]:
        """(dtype with the byte order the chunks have, compressor, filters)."""
        if "codecs" in doc and "compressor" in doc:
            raise MetadataError(f"{where}has both 'codecs' and 'compressor'")
        chain: list[dict[str, Any]] = []
        filters: list[dict[str, Any]] | None = None
        if "compressor" in doc:
            # zarr-python 2.x: one compressor, numcodecs filters in attributes["filters"]
            comp = doc["compressor"]
            if comp is not None:
                if not isinstance(comp, Mapping):
                    raise MetadataError(f"{where}compressor: must be an object, got {comp!r}")
                name = _codec_name(comp.get("codec"), where)
                chain.append(_numcodecs(name, comp.get("configuration"), where))
        codecs = doc.get("codecs") or []
        if not is_json_array(codecs):
            raise MetadataError(f"{where}codecs: must be an array, got {codecs!r}")
        for i, codec in enumerate(codecs):
            if not isinstance(codec, Mapping):
                raise MetadataError(f"{where}codecs[{i}]: must be an object, got {codec!r}")
            name = _codec_name(codec.get("type", codec.get("codec")), where)
            config = codec.get("configuration") or {}
            if name == "endian":
                endian = config.get("endian") if isinstance(config, Mapping) else None
                if endian not in ("little", "big") or chain:
                    raise MetadataError(
                        f"{where}codecs[{i}]: the endian codec comes first and takes "
                        f'"endian": "little" or "big", got {codec!r}'
                    )
                if dtype.kind in "biufcmM" and dtype.itemsize > 1:
                    dtype = dtype.newbyteorder("<" if endian == "little" else ">")
                continue
            chain.append(_numcodecs(name, config, where))
        if zarr2 and "filters" in attributes:
            filters = attributes.pop("filters")
            if filters is not None and (
                not isinstance(filters, list) or not all(isinstance(f, Mapping) for f in filters)
            ):
                raise MetadataError(
                    f"{where}attributes.filters: must be a list of numcodecs configurations"
                )
        if len(chain) > 1:
            filters = [*(filters or []), *chain[:-1]]
        compressor = chain[-1] if chain else None
        return dtype, compressor, filters or None

    # ---- the core description ----------------------------------------------------------

    def to_v2(self) -> ArrayMetadataV2:
        """The v2 array whose chunks (inner chunks, when sharded) are this array's chunks."""
        return ArrayMetadataV2(
            shape=self.shape,
            chunks=self.inner_chunks,
            dtype=self.dtype,
            compressor=self.compressor,
            filters=self.filters,
            fill_value=self.fill_value,
            order=self.order,
            dimension_separator=".",
        )

    def to_core_json(self) -> ArrayDescription:
        """The :class:`~zarrox.metadata.description.ArrayDescription` the Rust core takes:
        the chunks (inner chunks, when sharded) of :meth:`to_v2`, keys of the ``draft_v3``
        encoding."""
        data_type, codecs = self.to_v2().core_chain()
        if self.chunks_per_shard is not None:
            # the transformer's index: little-endian pairs without a checksum, at the end
            # (the core's default location)
            sharding = {
                "chunk_shape": list(self.inner_chunks),
                "codecs": codecs,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            }
            text = json.dumps({"name": "sharding_indexed", "configuration": sharding})
            codecs = [
                {
                    "name": "sharding_indexed",
                    "configuration": json.loads(_core.codec_configuration(text, 1)),
                }
            ]
        return describe_array(
            shape=self.shape,
            chunks=self.chunk_shape,
            data_type=data_type,
            codecs=codecs,
            key_encoding={
                "name": "draft_v3",
                "separator": self.separator,
                "zero_d_key": self.zero_d_key,
            },
        )

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The shape of one stored object: the shard shape when sharded, else the chunk shape."""
        if self.chunks_per_shard is None:
            return self.inner_chunks
        return tuple(c * n for c, n in zip(self.inner_chunks, self.chunks_per_shard, strict=True))


def _sharding(value: object, ndim: int, where: str) -> tuple[int, ...] | None:
    """``chunks_per_shard`` of the sharding transformer (None without one)."""
    if not value:
        return None
    if not is_json_array(value):
        raise MetadataError(f"{where}storage_transformers: must be an array, got {value!r}")
    if len(value) != 1:
        raise UnsupportedError(f"{where}only one storage transformer (sharding) is supported")
    t = value[0]
    if not isinstance(t, Mapping) or not (
        isinstance(t.get("extension"), str) and _SHARDING_URI.fullmatch(t["extension"])
    ):
        raise UnsupportedError(f"{where}unsupported storage transformer {t!r}")
    if t.get("type") != "indexed":
        raise UnsupportedError(f"{where}unsupported sharding type {t.get('type')!r}")
    config = t.get("configuration")
    if not isinstance(config, Mapping):
        raise MetadataError(f"{where}sharding: missing configuration")
    cps = _int_tuple(
        config.get("chunks_per_shard"), "sharding chunks_per_shard", where, positive=True
    )
    if len(cps) != ndim:
        raise MetadataError(f"{where}sharding chunks_per_shard {list(cps)} must have {ndim} items")
    return cps


@dataclass(eq=False)
class DraftGroupMetadata(LegacyNode):
    """A group of a draft v3 hierarchy: explicit (with a ``.group.json``) or implicit."""

    attributes: dict[str, Any] = field(default_factory=dict)
    explicit: bool = True
    hierarchy: Hierarchy | None = None
    #: the node's path inside its hierarchy
    rel: str = ""

    zarr_format: ClassVar[int] = 3
    legacy_format: ClassVar[str] = "the 2022 draft Zarr v3 layout"


def array_from_document(raw: bytes, hierarchy: Hierarchy, rel: str) -> DraftArrayMetadata:
    """The array ``rel`` of ``hierarchy`` whose document (at :meth:`Hierarchy.array_key`)
    is ``raw``."""
    key = hierarchy.array_key(rel)
    return DraftArrayMetadata.from_json(
        load_json_object(raw, _where(key)),
        key=key,
        data_path=hierarchy.data_path(rel),
        zarr2=hierarchy.zarr2,
    )


def group_from_document(raw: bytes, hierarchy: Hierarchy, rel: str) -> DraftGroupMetadata:
    """The explicit group ``rel`` of ``hierarchy`` whose document (at
    :meth:`Hierarchy.group_key`) is ``raw``."""
    key = hierarchy.group_key(rel)
    doc = load_json_object(raw, _where(key))
    attributes = _attributes(doc, _where(key))
    _check_extensions(doc.get("extensions"), _where(key))
    return DraftGroupMetadata(attributes, True, hierarchy, rel)


def implicit_group(hierarchy: Hierarchy, rel: str) -> DraftGroupMetadata:
    """The group ``rel`` of ``hierarchy`` that has descendants but no document."""
    return DraftGroupMetadata({}, False, hierarchy, rel)
