"""Zarr v2 metadata: ``.zarray``, ``.zgroup`` and ``.zattrs`` documents.

Reading is strict (the v2 spec's rules, plus the forms zarr-python 2.18 and 3.1 write and read);
writing produces the documents zarr-python writes. Two writers are reproduced byte for byte:

``"zarr3"`` (the default)
    zarr-python 3.1 with ``zarr_format=2``: ``.zarray`` members in the order ``shape, chunks,
    dtype, fill_value, order, filters, dimension_separator, compressor, zarr_format``, 2-space
    indent, ``.zattrs`` always written (``{}`` when empty).
``"zarr2"``
    zarr-python 2.18: keys sorted, 4-space indent, ``dimension_separator`` only when it was
    given (zarr 2.18 leaves out the default ``"."``).

The two agree on every value (``dtype`` as numpy's type string or field list, fill values as
below), so :meth:`ArrayMetadataV2.to_json` gives one dict and :func:`dumps_v2` picks the byte
form.

Fill values (``fill_value``), as both writers encode them:

- ``null``: no fill value (zarrox reads the data type's default then, see
  :meth:`~zarrox.metadata.dtypes.DataType.v2_fill_bytes`);
- bool: ``true``/``false``; integers (also M8/m8, as the int64 count, NaT being
  ``-9223372036854775808``): JSON integers;
- floats: numbers, ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; complex: ``[real, imag]``;
- ``S<n>``, ``V<n>`` and structured types: base64 of the bytes (for ``S``, the bytes given,
  which may be shorter than ``n``; trailing NULs are kept as read);
- ``U<n>``: the string itself;
- object (``|O``): whatever JSON value was stored, kept as is.

The data types and their fill-value encodings are :mod:`zarrox.metadata.dtypes`' (through
:func:`~zarrox.metadata.dtypes.v2_data_type`); the codecs are :mod:`zarrox.metadata.v2_codecs`'.

Every error message starts with the document and node, e.g. ``".zarray at 'a/b': fill_value:
..."``. Malformed metadata raises :class:`~zarrox.errors.MetadataError`; valid metadata that
zarrox cannot handle raises :class:`~zarrox.errors.UnsupportedError`.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError, naming_node
from zarrox.metadata._checks import (
    check_chunks_length,
    check_object,
    check_zarr_format,
    copy_json,
    document_where,
    json_default,
    load_json_object,
    require_members,
    stored_chunk_sizes,
)
from zarrox.metadata._checks import int_tuple as _int_tuple
from zarrox.metadata.chunk_grid import encode_chunk_key
from zarrox.metadata.description import ArrayDescription, describe_array
from zarrox.metadata.dtypes import (
    DataType,
    from_zarr_python_dtype,
    parse_v2_dtype,
    v2_data_type,
    v2_user_dtype,
    vlen_codec_id,
)
from zarrox.metadata.v2_codecs import (
    ARRAY_FILTER_IDS,
    DEFAULT_COMPRESSOR_V2,
    blosc_typesize_1,
    byte_order,
    core_codec,
    filter_byte_order,
    normalize_v2_codec,
    parse_compressor,
    parse_filters,
    user_compressor,
    user_filters,
)
from zarrox.pickle_codec import PickleStage

#: the error prefix of a .zarray read without a path
_ZARRAY = document_where(".zarray", "")

__all__ = [
    "DEFAULT_COMPRESSOR_V2",
    "DEFAULT_FILL",
    "ArrayMetadataV2",
    "GroupMetadataV2",
    "V2Style",
    "dumps_v2",
    "loads_v2",
    "normalize_v2_codec",
]

V2Style = Literal["zarr3", "zarr2"]


class _DefaultFill:
    """Sentinel: no fill value given, use the data type's default (as zarr-python does)."""

    def __repr__(self) -> str:
        return "DEFAULT_FILL"


#: ``fill_value`` default of :meth:`ArrayMetadataV2.create`: the data type's default value
#: (``None`` instead stores ``null``).
DEFAULT_FILL: Any = _DefaultFill()


# --------------------------------------------------------------------------------------------
# JSON encoding
# --------------------------------------------------------------------------------------------


def dumps_v2(doc: Any, *, style: V2Style = "zarr3") -> bytes:
    """Encode a ``.zarray``/``.zgroup``/``.zattrs`` document as zarr-python writes it.

    ``"zarr3"``: zarr-python 3.1 (2-space indent, members in the given order); ``"zarr2"``:
    zarr-python 2.18 (4-space indent, keys sorted). Both escape non-ASCII characters and, as
    both writers do, write non-finite floats in attributes as bare ``NaN``/``Infinity``.
    """
    try:
        if style == "zarr3":
            return json.dumps(doc, indent=2, allow_nan=True, default=json_default).encode()
        if style == "zarr2":
            return json.dumps(
                doc,
                indent=4,
                sort_keys=True,
                ensure_ascii=True,
                separators=(",", ": "),
                default=json_default,
            ).encode("ascii")
    except (TypeError, ValueError) as e:
        raise MetadataError(f"cannot encode metadata as JSON: {e}") from None
    raise ValueError(f'style must be "zarr3" or "zarr2", got {style!r}')


def loads_v2(data: bytes | str, *, key: str = ".zarray", path: str = "") -> dict[str, Any]:
    """Decode a v2 metadata document (``key`` names it in errors); it must be a JSON object.

    Bare ``NaN``/``Infinity`` tokens are accepted (both zarr-python versions write them in
    attributes).
    """
    return load_json_object(data, document_where(key, path))


# --------------------------------------------------------------------------------------------
# Member parsers
# --------------------------------------------------------------------------------------------


def check_order_and_separator(order: object, sep: object, where: str) -> None:
    """``order`` must be ``"C"`` or ``"F"``, ``dimension_separator`` (None: not given) ``"."``
    or ``"/"``."""
    if order not in ("C", "F"):
        raise MetadataError(f'{where}order: must be "C" or "F", got {order!r}')
    if sep is not None and sep not in (".", "/"):
        raise MetadataError(f'{where}dimension_separator: must be "." or "/", got {sep!r}')


def _unsupported(message: str) -> UnsupportedError:
    """An UnsupportedError about a ``.zarray`` read without a path: ``message`` after the
    document's prefix, recorded as naming the node ('', as the prefix does)."""
    return naming_node(UnsupportedError(f"{_ZARRAY}{message}"), "")


def parse_attributes(value: object, path: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise MetadataError(
            f"{document_where('.zattrs', path)}must be a JSON object, got {value!r}"
        )
    return copy_json(dict(value))


# --------------------------------------------------------------------------------------------
# Array metadata
# --------------------------------------------------------------------------------------------

_ARRAY_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order")
#: the members of ``.zarray``
ARRAY_MEMBERS = (
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "fill_value",
    "order",
    "compressor",
    "filters",
    "dimension_separator",
)


@dataclass(eq=False)
class ArrayMetadataV2:
    """A Zarr v2 array: its ``.zarray`` (and ``.zattrs``) documents.

    ``dtype`` keeps the stored byte order (``np.dtype(">i4")``). ``compressor`` and ``filters``
    are numcodecs configurations as stored (``filters`` ``[]`` is kept apart from ``None``).
    ``fill_value`` is as :meth:`~zarrox.metadata.dtypes.DataType.parse_v2_fill` returns it
    (None for ``null``).
    ``dimension_separator_given`` tells whether ``.zarray`` has the member (zarr-python 2.18
    leaves out the default ``"."``; 3.1 always writes it): :meth:`to_json` writes it back the
    same way. Unknown ``.zarray`` members are ignored, as the spec says. Equality compares the
    documents.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype[Any]
    compressor: dict[str, Any] | None = None
    filters: list[dict[str, Any]] | None = None
    fill_value: Any = None
    order: Literal["C", "F"] = "C"
    dimension_separator: Literal[".", "/"] = "."
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_separator_given: bool = True
    zarr_format: Literal[2] = field(default=2, init=False)

    def __post_init__(self) -> None:
        self.shape = tuple(int(s) for s in self.shape)
        self.chunks = tuple(int(c) for c in self.chunks)
        self.dtype = np.dtype(self.dtype)

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_json(
        cls,
        zarray: Mapping[str, Any],
        zattrs: Mapping[str, Any] | None = None,
        *,
        path: str = "",
    ) -> ArrayMetadataV2:
        """Validate a decoded ``.zarray`` (and ``.zattrs``, None when absent)."""
        where = document_where(".zarray", path)
        doc = check_object(zarray, where)
        check_zarr_format(doc, 2, where)
        require_members(doc, (*_ARRAY_REQUIRED, "filters"), where)
        shape = _int_tuple(doc["shape"], "shape", where, positive=False)
        chunks = stored_chunk_sizes(doc["chunks"], "chunks", where, shape)
        if len(chunks) != len(shape):
            raise MetadataError(
                f"{where}chunks: {list(chunks)} has {len(chunks)} dimension(s), shape "
                f"{list(shape)} has {len(shape)}"
            )
        dtype = parse_v2_dtype(doc["dtype"], where)
        compressor = parse_compressor(doc["compressor"], where)
        filters = parse_filters(doc["filters"], where)
        fill_value = v2_data_type(dtype).parse_v2_fill(doc["fill_value"], where)
        order = doc["order"]
        sep = doc.get("dimension_separator")
        check_order_and_separator(order, sep, where)
        return cls(
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            compressor=compressor,
            filters=filters,
            fill_value=fill_value,
            order=order,
            dimension_separator=sep or ".",
            attributes=parse_attributes(zattrs, path),
            dimension_separator_given=sep is not None,
        )

    @classmethod
    def create(
        cls,
        shape: int | Sequence[int],
        dtype: object,
        chunks: int | Sequence[int] | None = None,
        fill_value: Any = DEFAULT_FILL,
        compressor: object = "auto",
        filters: object = None,
        order: str | None = "C",
        dimension_separator: str | None = ".",
        attributes: Mapping[str, Any] | None = None,
        *,
        path: str = "",
    ) -> ArrayMetadataV2:
        """New v2 array metadata with zarr-python 3.1 ``create_array(..., zarr_format=2)``
        semantics; fully validated.

        - ``dtype``: anything ``np.dtype()`` takes (native order is written little-endian:
          ``"i4"`` -> ``"<i4"``), or a v2 field list. Object and variable-length string types
          raise UnsupportedError.
        - ``chunks``: a sequence, an int (every dimension), or None (one chunk).
        - ``fill_value``: :data:`DEFAULT_FILL` (the type's default: 0, false, ``""``, zero
          bytes, NaT for M8/m8), None (``null``), or a value.
        - ``compressor``: ``"auto"`` (:data:`DEFAULT_COMPRESSOR_V2`), None (none), a numcodecs
          config dict or codec object (``get_config()``), or a list of at most one of those.
        - ``filters``: None/``"auto"``/``[]`` (none), or a codec or list of codecs as above.
        - ``order``: ``"C"`` or ``"F"``; ``dimension_separator``: ``"."`` or ``"/"``.
        """
        where = document_where(".zarray", path)
        dtype = from_zarr_python_dtype(dtype, zarr_format=2)
        dt = v2_user_dtype(dtype, where)
        vlen = vlen_codec_id(dtype)
        if vlen is not None:
            # Strings and bytes are object arrays serialized by a vlen filter, as
            # zarr-python writes them; the fill value defaults to empty.
            given = user_filters(filters, path) or []
            if not any(f.get("id") in ("vlen-utf8", "vlen-bytes") for f in given):
                filters = [{"id": vlen}, *given]
            if fill_value is DEFAULT_FILL:
                # JSON holds no bytes: byte-string arrays get null (read as b"").
                fill_value = "" if vlen == "vlen-utf8" else None
        if isinstance(shape, int | np.integer):
            shape = (int(shape),)
        shape_t = _int_tuple(shape, "shape", where, positive=False)
        if chunks is None:
            chunks = tuple(max(s, 1) for s in shape_t)
        elif isinstance(chunks, int | np.integer):
            chunks = (int(chunks),) * len(shape_t)
        chunks_t = _int_tuple(chunks, "chunks", where, positive=True)
        check_chunks_length(chunks_t, shape_t, "chunks", where)
        order = "C" if order is None else order
        sep = "." if dimension_separator is None else dimension_separator
        check_order_and_separator(order, sep, where)
        fill = (
            v2_data_type(dt).default_v2_fill()
            if fill_value is DEFAULT_FILL
            else v2_data_type(dt).cast_v2_fill(fill_value, where)
        )
        meta = cls(
            shape=shape_t,
            chunks=chunks_t,
            dtype=dt,
            compressor=user_compressor(compressor, path),
            filters=user_filters(filters, path),
            fill_value=fill,
            order=order,  # type: ignore[arg-type]
            dimension_separator=sep,  # type: ignore[arg-type]
            attributes=copy_json(dict(attributes or {})),
        )
        return cls.from_json(meta.to_json(), meta.attributes_json(), path=path)

    # ---- output ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``.zarray`` document, members in zarr-python 3.1's order (zarr-python 2.18
        sorts them when it writes: use :func:`dumps_v2` with ``style="zarr2"``)."""
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": self.info.v2_json(),
            "fill_value": self.info.v2_fill_json(self.fill_value),
            "order": self.order,
            "filters": copy_json(self.filters),
        }
        if self.dimension_separator_given or self.dimension_separator != ".":
            doc["dimension_separator"] = self.dimension_separator
        doc["compressor"] = copy_json(self.compressor)
        doc["zarr_format"] = 2
        return doc

    def to_dict(self) -> dict[str, Any]:
        """``.zarray`` with the attributes (zarr-python's ``to_dict``)."""
        doc = self.to_json()
        doc["attributes"] = self.attributes_json()
        return doc

    def attributes_json(self) -> dict[str, Any]:
        """The ``.zattrs`` document."""
        return copy_json(self.attributes)

    def to_core_json(self) -> ArrayDescription:
        """The :class:`~zarrox.metadata.description.ArrayDescription` the Rust core takes
        (fill bytes: :meth:`fill_bytes`): chunk keys of the ``v2`` encoding, ``data_type``
        and ``codecs`` as :meth:`core_chain` gives them."""
        data_type, codecs = self.core_chain()
        return describe_array(
            shape=self.shape,
            chunks=self.chunks,
            data_type=data_type,
            codecs=codecs,
            key_encoding={"name": "v2", "separator": self.dimension_separator},
        )

    def core_chain(self) -> tuple[str | dict[str, Any], list[dict[str, Any]]]:
        """``(data_type, codecs)`` of the chunks, as the Rust core takes them (see
        :class:`~zarrox.metadata.description.ArrayDescription`).

        The codec chain: ``transpose`` (order reversed) for ``"F"`` order with ndim > 1; one
        ``numcodecs.<id>`` per filter; ``bytes`` (``endian`` "big" for big-endian dtypes,
        else "little"; after value filters, the byte order of the last filter's output
        type); ``numcodecs.<id>`` for the compressor. numcodecs configurations lose ``"id"``
        and get numcodecs' defaults filled in (for the codecs zarrox knows). Object arrays:
        ``transpose`` for ``"F"`` order as above, the ``vlen-utf8`` / ``vlen-bytes`` filter,
        the filters after it and the compressor. The ``pickle`` codec, which Python runs
        (:meth:`pickle_stage`), is left out.
        """
        where = ""  # the configurations were validated when the metadata was made
        if self.pickle_stage() is not None:
            return self._without_pickle().core_chain()
        if self.dtype.hasobject:
            return self._object_core_chain()
        data_type = self.info.v2_core_json()
        codecs = self.order_codecs()
        # v2 filters run in order on the chunk; those that work on values come
        # before the bytes serializer, those that work on bytes after it.
        # numcodecs stores a value filter's output in the byte order of its output
        # type ("astype", "encode_dtype"), so the last such type decides the stored
        # byte order, not the array's.
        after_bytes: list[dict[str, Any]] = []
        values_order = byte_order(self.dtype)
        for i, f in enumerate(self.filters or []):
            codec = core_codec(f, where, f"filters[{i}]")
            if f.get("id") in ARRAY_FILTER_IDS:
                if after_bytes:
                    raise _unsupported(
                        f"filter {f.get('id')!r} works on values but "
                        f"follows a filter that works on bytes"
                    )
                values_order = filter_byte_order(codec, values_order, i)
                codecs.append(codec)
            else:
                after_bytes.append(codec)
        endian = "big" if values_order == ">" else "little"
        codecs.append({"name": "bytes", "configuration": {"endian": endian}})
        if self.compressor is not None:
            after_bytes.append(core_codec(self.compressor, where, "compressor"))
        codecs.extend(blosc_typesize_1(after_bytes, first=1))
        return data_type, codecs

    def order_codecs(self) -> list[dict[str, Any]]:
        """The chain's first codecs: a ``transpose`` that reverses the axes of an ``"F"``
        order array of 2 or more dimensions (its chunks are stored in Fortran order)."""
        if self.order == "F" and self.ndim > 1:
            return [{"name": "transpose", "configuration": {"order": list(range(self.ndim))[::-1]}}]
        return []

    def pickle_stage(self) -> PickleStage | None:
        """The ``pickle`` codec of the chain, which Python runs around the engine (see
        :mod:`zarrox.pickle_codec`; the core description leaves it out), or None. It must
        be the outermost stage (the compressor, or the last filter with no compressor),
        with no filter before it, or, in an object array, only the vlen-utf8 / vlen-bytes
        filter: the layouts zarr-python writes. Anything else is unsupported."""
        filters = list(self.filters or [])
        if self.dtype.hasobject and not any(
            f.get("id") in ("vlen-utf8", "vlen-bytes") for f in filters
        ):
            return None  # pickle as an object array's codec: unsupported (_vlen_filter)
        if self.compressor is not None and self.compressor.get("id") == "pickle":
            codec, before = self.compressor, filters
        elif not any(f.get("id") == "pickle" for f in filters):
            return None
        elif self.compressor is None and filters[-1].get("id") == "pickle":
            codec, before = filters[-1], filters[:-1]
        else:
            raise _unsupported(
                f"the pickle codec is supported as the compressor or "
                f"the last filter, not before {[f.get('id') for f in filters]!r} and "
                f"compressor {self.compressor!r}"
            )
        before_ids = [f.get("id") for f in before]
        if not self.dtype.hasobject and not before_ids:
            pickles: Literal["array", "bytearray"] = "array"
        elif self.dtype.hasobject and before_ids in (["vlen-utf8"], ["vlen-bytes"]):
            pickles = "bytearray"
        else:
            raise _unsupported(
                f"the pickle codec is supported after no filter, or "
                f"after the vlen-utf8 or vlen-bytes filter of an object array; this "
                f"{self.dtype} array has filters {before_ids!r} before it"
            )
        protocol = codec.get("protocol", pickle.HIGHEST_PROTOCOL)
        return PickleStage(int(protocol), pickles, self.dtype, self.chunks, self.order)

    def _without_pickle(self) -> ArrayMetadataV2:
        """This metadata with its pickle codec (see :meth:`pickle_stage`) left out."""
        if self.compressor is not None and self.compressor.get("id") == "pickle":
            return replace(self, compressor=None)
        return replace(self, filters=list(self.filters or [])[:-1])

    def _vlen_filter(self) -> tuple[int, str]:
        """(position, v3 data type) of the filter that serializes an object array."""
        kinds = {"vlen-utf8": "string", "vlen-bytes": "bytes"}
        for i, f in enumerate(self.filters or []):
            if f.get("id") in kinds:
                return i, kinds[str(f["id"])]
        ids = [f.get("id") for f in self.filters or []]
        raise _unsupported(
            f"object arrays are supported with the vlen-utf8 or "
            f"vlen-bytes codec, this one has filters {ids}"
        )

    def _object_core_chain(self) -> tuple[str, list[dict[str, Any]]]:
        """:meth:`core_chain` of an object array of strings or bytes: the vlen codec
        serializes chunks; filters after it and the compressor follow."""
        pos, data_type = self._vlen_filter()
        filters = self.filters or []
        if pos > 0:
            raise _unsupported(
                f"filters before {filters[pos]['id']!r} in an object array are not supported"
            )
        # The vlen codec serializes the chunk's elements in Fortran order
        # (zarr-python 2.18 and 3.1): the transpose codec reorders them first.
        codecs = self.order_codecs()
        codecs.append({"name": str(filters[pos]["id"])})
        after: list[dict[str, Any]] = []
        for i, f in enumerate(filters[pos + 1 :], start=pos + 1):
            after.append(core_codec(f, "", f"filters[{i}]"))
        if self.compressor is not None:
            after.append(core_codec(self.compressor, "", "compressor"))
        codecs.extend(blosc_typesize_1(after, first=0))
        return data_type, codecs

    def fill_bytes(self) -> bytes:
        """The fill value as one element's bytes (see
        :meth:`~zarrox.metadata.dtypes.DataType.v2_fill_bytes`); for object arrays of strings
        or bytes, the fill value's bytes (empty when it is null or not a string)."""
        return self.info.v2_fill_bytes(self.fill_value)

    # ---- helpers -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self.chunks

    @property
    def info(self) -> DataType:
        """The data type (:func:`~zarrox.metadata.dtypes.v2_data_type`), stored byte order."""
        return v2_data_type(self.dtype)

    @property
    def data_type(self) -> str:
        """The v3 core data type name (see
        :meth:`~zarrox.metadata.dtypes.DataType.v2_core_name`); ``string`` or ``bytes`` for
        object arrays serialized by vlen-utf8 / vlen-bytes."""
        if self.dtype.hasobject:
            return self._vlen_filter()[1]
        return self.info.v2_core_name()

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """Store key (relative to the array) of the chunk at grid index ``coords``."""
        return encode_chunk_key("v2", self.dimension_separator, coords)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV2):
            return NotImplemented
        return (
            self.dtype == other.dtype
            and self.to_json() == other.to_json()
            and self.attributes == other.attributes
        )

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------
# Group metadata
# --------------------------------------------------------------------------------------------


@dataclass
class GroupMetadataV2:
    """A Zarr v2 group: its ``.zgroup`` (``{"zarr_format": 2}``) and ``.zattrs``.

    ``consolidated_metadata`` keeps the member zarr-python 3.1 puts in the ``.zgroup`` entries
    of child groups inside ``.zmetadata`` (``{"metadata": {}, "must_understand": false, "kind":
    "inline"}``), so that such entries are written back unchanged; other ``.zgroup`` members
    are ignored (as zarr-python does).
    """

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: dict[str, Any] | None = None
    zarr_format: Literal[2] = field(default=2, init=False)

    @classmethod
    def from_json(
        cls,
        zgroup: Mapping[str, Any],
        zattrs: Mapping[str, Any] | None = None,
        *,
        path: str = "",
    ) -> GroupMetadataV2:
        where = document_where(".zgroup", path)
        doc = check_object(zgroup, where)
        check_zarr_format(doc, 2, where)
        consolidated = doc.get("consolidated_metadata")
        if consolidated is not None and not isinstance(consolidated, Mapping):
            raise MetadataError(
                f"{where}consolidated_metadata: must be an object, got {consolidated!r}"
            )
        return cls(
            attributes=parse_attributes(zattrs, path),
            consolidated_metadata=None if consolidated is None else copy_json(dict(consolidated)),
        )

    def to_json(self) -> dict[str, Any]:
        """The ``.zgroup`` document."""
        doc: dict[str, Any] = {"zarr_format": 2}
        if self.consolidated_metadata is not None:
            doc["consolidated_metadata"] = copy_json(self.consolidated_metadata)
        return doc

    def to_dict(self) -> dict[str, Any]:
        """``.zgroup`` with the attributes (zarr-python's ``to_dict``)."""
        return {"attributes": self.attributes_json(), **self.to_json()}

    def attributes_json(self) -> dict[str, Any]:
        """The ``.zattrs`` document."""
        return copy_json(self.attributes)
