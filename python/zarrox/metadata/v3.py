"""Zarr v3 metadata: ``zarr.json`` documents for arrays and groups.

Reading is strict (the spec's rules, plus what zarr-python 3.1 writes); writing produces the
documents zarr-python 3.1 writes, member for member and in the same order, so that
``dumps(meta.to_json())`` is byte-identical to zarr-python's ``zarr.json``.

Every error message starts with the node, e.g. ``"zarr.json at 'a/b': missing member
'shape'"``. Malformed metadata raises :class:`zarrox.errors.MetadataError`; valid metadata
using something zarrox does not implement raises :class:`zarrox.errors.UnsupportedError`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata._checks import (
    check_chunks_length,
    check_object,
    check_zarr_format,
    copy_json,
    is_json_array,
    json_default,
    load_json_object,
    require_members,
    stored_chunk_sizes,
)
from zarrox.metadata._checks import int_tuple as _int_list
from zarrox.metadata._checks import is_int as _is_int
from zarrox.metadata.chunk_grid import RectilinearGrid, encode_chunk_key, parse_chunk_key_encoding
from zarrox.metadata.codecs import (
    _where,
    build_codecs,
    codecs_to_json,
    normalize_codecs,
    validate_codecs,
)
from zarrox.metadata.description import ArrayDescription, describe_array
from zarrox.metadata.dtypes import (
    CORE_TYPES,
    DataType,
    data_type_from_numpy,
    from_zarr_python_dtype,
    native_dtype,
    parse_data_type_json,
)

__all__ = [
    "CORE_DATA_TYPES",
    "ArrayMetadataV3",
    "DataType",
    "DataTypeJSON",
    "GroupMetadataV3",
    "cast_fill_value",
    "data_type_name",
    "default_fill_value",
    "dumps",
    "fill_value_bytes",
    "fill_value_to_json",
    "loads",
    "parse_data_type",
    "parse_fill_value",
    "parse_node",
]

# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------

_NAMED_TYPES: dict[str, np.dtype[Any]] = {name: np.dtype(name) for name in CORE_TYPES}
_RAW_RE = re.compile(r"r([0-9]+)")

#: A ``data_type`` member: a name, or ``{"name": ..., "configuration": {...}}``.
DataTypeJSON = str | dict[str, Any]


class _CoreDataTypes(Mapping[str, np.dtype[Any]]):
    """Read-only mapping: v3 core data type name -> numpy dtype in native byte order.

    Iterates over the 14 named types; lookups also resolve raw bits ``r<N>`` (``N`` a positive
    multiple of 8) to ``np.dtype(f"V{N // 8}")``.
    """

    def __getitem__(self, key: str) -> np.dtype[Any]:
        if key in _NAMED_TYPES:
            return _NAMED_TYPES[key]
        if isinstance(key, str):
            m = _RAW_RE.fullmatch(key)
            if m and int(m.group(1)) > 0 and int(m.group(1)) % 8 == 0:
                return np.dtype(f"V{int(m.group(1)) // 8}")
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMED_TYPES)

    def __len__(self) -> int:
        return len(_NAMED_TYPES)

    def __repr__(self) -> str:
        return f"CORE_DATA_TYPES({dict(_NAMED_TYPES)!r} + r<N>)"


CORE_DATA_TYPES: Mapping[str, np.dtype[Any]] = _CoreDataTypes()


def parse_data_type(
    value: object, *, path: str | None = None
) -> tuple[DataTypeJSON, np.dtype[Any]]:
    """The ``data_type`` member -> ``(normalized data_type, native numpy dtype)``.

    Accepts every core and extension data type of :mod:`zarrox.metadata.dtypes`, as a name or
    an object ``{"name", "configuration"}``. The normalized form is a name for types without
    configuration (``{"name": "float32"}`` -> ``"float32"``) and ``{"name", "configuration"}``
    otherwise. Unknown names raise UnsupportedError naming the type and the node.
    """
    info = parse_data_type_json(value, path=path)
    return copy_json(info.json), info.dtype


def data_type_name(dtype: object, *, path: str | None = None) -> DataTypeJSON:
    """Numpy dtype (anything ``np.dtype()`` accepts, any byte order) -> the v3 ``data_type``
    zarr-python 3.1 writes for it (ml_dtypes types -> their registry names).

    E.g. ``"float32"``, ``"bfloat16"``, ``{"name": "fixed_length_utf32", "configuration":
    {"length_bytes": 12}}`` for ``U3``, ``null_terminated_bytes`` for ``S``, ``raw_bytes`` for
    ``V``, ``numpy.datetime64`` for ``M8``, legacy ``structured`` for structured dtypes;
    ``str``/object/StringDType -> ``"string"``, ``bytes`` -> ``"bytes"``. Errors name the
    node at ``path`` when given.
    """
    return copy_json(data_type_from_numpy(dtype, path=path).json)


def _info_for(data_type: object, dtype: object = None) -> DataType:
    if data_type is None:
        return data_type_from_numpy(dtype)
    return parse_data_type_json(data_type)


# --------------------------------------------------------------------------------------------
# Fill values
# --------------------------------------------------------------------------------------------


def parse_fill_value(
    value: object, data_type: object, dtype: object = None, *, path: str | None = None
) -> Any:
    """The JSON ``fill_value`` -> numpy scalar of the data type's dtype (native byte order);
    ``str``/``bytes`` for the variable-length ``string``/``bytes``.

    - bool: a JSON boolean;
    - integers (``int2`` .. ``uint64``): a JSON integer in range (a JSON number with a
      fraction, ``0.0`` included, is rejected, as the spec requires);
    - floats (core and ml_dtypes formats): a number (rounded to nearest), ``"NaN"``,
      ``"Infinity"``, ``"-Infinity"`` (where the format has them), or ``"0x..."`` giving the
      raw bits (exactly two hex digits per byte);
    - complex: ``[real, imag]``, each one of the float forms;
    - raw ``r<N>``: an array of ``N / 8`` integers in ``[0, 255]`` (or, as tensorstore
      writes, the base64 of the bytes); ``raw_bytes``: base64 (or the array);
    - ``numpy.datetime64``/``timedelta64``: an int64 integer or ``"NaT"``;
    - ``fixed_length_utf32``: a string; ``null_terminated_bytes``: base64;
    - ``struct``/``structured``: an object with a member per field, or (legacy) the base64
      of the packed little-endian bytes;
    - ``string``: a string; ``bytes``: base64 or an array of integers in ``[0, 255]``.
    """
    info = _info_for(data_type, dtype)
    return info.parse_fill(value, _where(path))


def fill_value_to_json(scalar: object, data_type: object) -> Any:
    """Numpy (or Python) fill value -> its JSON form, as zarr-python 3.1 (or tensorstore, for
    the types zarr-python lacks) writes it.

    NaN -> ``"NaN"``, infinities -> ``"Infinity"``/``"-Infinity"``, complex -> ``[re, im]``,
    finite floats -> JSON numbers (the float64 value, as zarr-python writes). A NaN other than
    the canonical one (sign or payload differ) -> its hex bits, so that it round-trips
    bit-exactly. NaT -> ``-9223372036854775808``; ``raw_bytes``, ``null_terminated_bytes``,
    ``bytes`` and legacy ``structured`` -> base64; ``struct`` -> an object per field.
    """
    info = _info_for(data_type)
    dt = info.dtype
    if info.is_variable_length or not (isinstance(scalar, np.generic) and scalar.dtype == dt):
        scalar = info.cast_fill(scalar)
    return info.fill_to_json(scalar)


def default_fill_value(dtype: object, *, data_type: object = None) -> Any:
    """The fill value zarr-python records when none is given: zero / false / zero bytes,
    NaT for datetimes, ``""`` for strings, ``b""`` for ``bytes``."""
    return _info_for(data_type, dtype).default_fill()


def cast_fill_value(
    value: object, data_type: object, dtype: object = None, *, path: str | None = None
) -> Any:
    """A user-given fill value -> what :func:`parse_fill_value` returns; validates range.

    ``None`` gives :func:`default_fill_value`. Accepts numpy and Python scalars, the JSON forms
    of :func:`parse_fill_value` (``"NaN"``, hex strings, ``[re, im]``, lists of bytes, base64)
    and, for raw and byte-string types, a ``bytes`` object. For ``null_terminated_bytes``
    (numpy ``S``) a ``str`` is the text itself, ASCII-encoded as numpy and zarr-python do, not
    base64; for ``bytes`` it is UTF-8-encoded, as zarr-python does. A numpy scalar already of
    the dtype is returned unchanged (bit-exact).
    """
    return _info_for(data_type, dtype).cast_fill(value, _where(path))


def fill_value_bytes(scalar: object, dtype: object, *, data_type: object = None) -> bytes:
    """One element holding the fill value, as bytes in NATIVE byte order (for the Rust core).

    For the variable-length types: the UTF-8 bytes of a ``str``, the bytes of a ``bytes``.
    ``data_type`` (the v3 ``data_type``) picks the type where the numpy dtype is ambiguous
    (object arrays: a ``bytes`` scalar is taken as the ``bytes`` data type).
    """
    if data_type is not None:
        return parse_data_type_json(data_type).fill_bytes(scalar)
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    if dt.kind in "OT":
        if isinstance(scalar, bytes | bytearray | np.bytes_):
            return bytes(scalar)
        return str(scalar).encode("utf-8")
    return data_type_from_numpy(dt).fill_bytes(scalar)


# --------------------------------------------------------------------------------------------
# JSON encoding
# --------------------------------------------------------------------------------------------


def _find_non_finite(value: object, at: str) -> str | None:
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return at
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _find_non_finite(v, f"{at}.{k}" if at else str(k))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = _find_non_finite(v, f"{at}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        if not np.all(np.isfinite(value)):
            return at
    return None


def dumps(doc: Mapping[str, Any]) -> bytes:
    """Encode a metadata document as zarr-python writes it (2-space indent, ASCII-escaped).

    NaN and infinities are never written as bare tokens (invalid JSON): fill values use the
    spec's strings, and a non-finite float anywhere else (e.g. in attributes) raises
    MetadataError naming where it is. Numpy scalars and arrays are converted to JSON values.
    """
    bad = _find_non_finite(doc, "")
    if bad is not None:
        raise MetadataError(
            f"cannot encode a NaN or infinite float at {bad!r}: JSON has no such numbers "
            '(store it as a string such as "NaN")'
        )
    try:
        return json.dumps(doc, indent=2, allow_nan=False, default=json_default).encode()
    except (TypeError, ValueError) as e:
        raise MetadataError(f"cannot encode metadata as JSON: {e}") from None


def loads(data: bytes | str, *, path: str = "") -> dict[str, Any]:
    """Decode a ``zarr.json`` document; it must be a JSON object.

    Bare ``NaN``/``Infinity`` tokens are accepted (zarr-python writes them in attributes).
    """
    return load_json_object(data, _where(path))


# --------------------------------------------------------------------------------------------
# Member parsers
# --------------------------------------------------------------------------------------------


def _check_format(doc: Mapping[str, Any], node_type: str, where: str) -> None:
    check_zarr_format(doc, 3, where)
    require_members(doc, ("node_type",), where)
    if doc["node_type"] != node_type:
        raise MetadataError(f"{where}node_type: expected {node_type!r}, got {doc['node_type']!r}")


def _inner_chunk_shape(codecs: object) -> list[int] | None:
    """The inner chunk shape of a sharded array's codecs as stored (``true`` read as 1),
    or None."""
    if not isinstance(codecs, list):
        return None
    for c in codecs:
        if isinstance(c, Mapping) and c.get("name") == "sharding_indexed":
            cfg = c.get("configuration")
            inner = cfg.get("chunk_shape") if isinstance(cfg, Mapping) else None
            if isinstance(inner, list) and all(v is True or (_is_int(v) and v > 0) for v in inner):
                return [1 if v is True else int(v) for v in inner]
    return None


def _parse_chunk_grid(
    value: object, shape: Sequence[int], where: str, unset: Sequence[int] | None = None
) -> tuple[tuple[int, ...], RectilinearGrid | None]:
    """The chunk shape of a regular grid (sizes stored as 0/false/true read as zarr-python
    3.4 reads them, ``unset`` for 0), or of a rectilinear grid its first chunk's shape
    and the grid."""
    ndim = len(shape)
    if isinstance(value, str):
        raise MetadataError(
            f"{where}chunk_grid: {value!r} needs a configuration with 'chunk_shape'"
        )
    if not isinstance(value, Mapping):
        raise MetadataError(f"{where}chunk_grid: must be an object, got {value!r}")
    unknown = sorted(str(k) for k in value if k not in ("name", "configuration", "must_understand"))
    if unknown:
        raise MetadataError(f"{where}chunk_grid: unknown member(s) {unknown}")
    name = value.get("name")
    if value.get("must_understand", True) is not True:
        raise MetadataError(f'{where}chunk_grid: "must_understand" must not be false')
    if not isinstance(name, str):
        raise MetadataError(f"{where}chunk_grid.name: must be a string, got {name!r}")
    if name == "rectilinear":
        grid = RectilinearGrid.from_json(value.get("configuration"), shape, where)
        return grid.first_chunk_shape(), grid
    if name != "regular":
        raise UnsupportedError(
            f"{where}unsupported chunk grid {name!r} (only 'regular' and 'rectilinear')"
        )
    cfg = value.get("configuration")
    if not isinstance(cfg, Mapping) or "chunk_shape" not in cfg:
        raise MetadataError(
            f"{where}chunk_grid.configuration: missing member 'chunk_shape' (got {cfg!r})"
        )
    extra = sorted(str(k) for k in cfg if k != "chunk_shape")
    if extra:
        raise MetadataError(f"{where}chunk_grid.configuration: unknown member(s) {extra}")
    chunk_shape = stored_chunk_sizes(
        cfg["chunk_shape"], "chunk_grid.configuration.chunk_shape", where, shape, unset
    )
    if len(chunk_shape) != ndim:
        raise MetadataError(
            f"{where}chunk_grid.configuration.chunk_shape: {list(chunk_shape)} has "
            f"{len(chunk_shape)} dimension(s), shape has {ndim}"
        )
    return chunk_shape, None


def _check_shard_edges(
    grid: RectilinearGrid, codecs: Sequence[Mapping[str, Any]], where: str
) -> None:
    """Every shard edge of a rectilinear shard grid is a multiple of the inner chunk edge
    (zarr-python 3.4's rule: inner chunks are regular inside every shard)."""
    if len(codecs) != 1 or codecs[0].get("name") != "sharding_indexed":
        return
    inner = codecs[0].get("configuration", {}).get("chunk_shape", [])
    for d, n in enumerate(inner):
        for edge in grid.distinct_edges(d):
            if edge % n:
                raise MetadataError(
                    f"{where}chunk_grid: shard edge {edge} in dimension {d} is not divisible "
                    f"by the inner chunk size {n}"
                )


def parse_attributes(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise MetadataError(f"{where}attributes: must be an object, got {value!r}")
    return copy_json(dict(value))


def parse_dimension_names(value: object, ndim: int, where: str) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if not is_json_array(value) or not all(v is None or isinstance(v, str) for v in value):
        raise MetadataError(
            f"{where}dimension_names: must be an array of strings or nulls, got {value!r}"
        )
    if len(value) != ndim:
        raise MetadataError(
            f"{where}dimension_names: has {len(value)} entries, shape has {ndim} dimension(s)"
        )
    return tuple(value)


def _is_ignorable(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("must_understand") is False


def _parse_storage_transformers(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not is_json_array(value):
        raise MetadataError(f"{where}storage_transformers: must be an array, got {value!r}")
    for i, item in enumerate(value):
        if not _is_ignorable(item):
            name = item.get("name") if isinstance(item, Mapping) else item
            raise UnsupportedError(
                f"{where}storage_transformers[{i}]: unsupported storage transformer {name!r}"
            )
    return copy_json(list(value))


def parse_extra(doc: Mapping[str, Any], known: Sequence[str], where: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for key, value in doc.items():
        if key in known:
            continue
        if not _is_ignorable(value):
            raise MetadataError(
                f"{where}unknown member {key!r}: zarrox does not understand it and it is not "
                'an object with "must_understand": false'
            )
        extra[key] = copy_json(value)
    return extra


# --------------------------------------------------------------------------------------------
# Array metadata
# --------------------------------------------------------------------------------------------


def resolve_data_type(dtype: object, path: str) -> DataType:
    """What a user gives as ``dtype`` -> its data type: a v3 data type (a name or an
    ``{"name", ...}`` object), a zarr-python data type object, else anything ``np.dtype``
    takes (a dict with ``names`` and ``formats`` included)."""
    dtype = from_zarr_python_dtype(dtype, zarr_format=3)
    if isinstance(dtype, Mapping) and "name" in dtype:
        return parse_data_type_json(dtype, path=path)
    if isinstance(dtype, str):
        try:
            return parse_data_type_json(dtype, path=path)
        except UnsupportedError as e:
            try:
                np.dtype(dtype)
            except (TypeError, ValueError):
                raise e from None
    return data_type_from_numpy(dtype, path=path)


_ARRAY_REQUIRED = (
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
)
#: the members of an array's ``zarr.json`` (others are extensions)
ARRAY_MEMBERS = (*_ARRAY_REQUIRED, "attributes", "dimension_names", "storage_transformers")


def _normalized_codec(codec: object) -> dict[str, Any]:
    if isinstance(codec, str):
        return {"name": codec, "configuration": {}}
    if not isinstance(codec, Mapping):
        raise MetadataError(f"codec must be an object or a name, got {codec!r}")
    out = dict(codec)
    out["configuration"] = dict(out.get("configuration") or {})
    order = ["name", "configuration", "must_understand"]
    return {k: out[k] for k in sorted(out, key=lambda k: order.index(k) if k in order else 9)}


class _ZarrJson:
    """What the ``zarr.json`` documents of arrays and groups share."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The ``zarr.json`` document (zarr-python's name)."""
        return self.to_json()

    @property
    def zarr_format(self) -> Literal[3]:
        return 3


@dataclass(eq=False)
class ArrayMetadataV3(_ZarrJson):
    """A Zarr v3 array's ``zarr.json``.

    ``codecs`` entries are ``{"name": str, "configuration": dict}`` (configuration ``{}`` when
    the document had none; ``"must_understand"`` kept when present). ``chunk_key_encoding`` is
    ``{"name": "default"|"v2", "configuration": {"separator": "/"|"."}}``. ``extra`` holds
    unknown top-level members marked ``"must_understand": false``, written back unchanged.
    Equality compares the JSON documents (so NaN fill values compare equal bit-wise).

    ``data_type`` is the normalized ``data_type`` member (see :func:`parse_data_type`): a name
    such as ``"float32"`` or ``"bfloat16"``, or an object such as ``{"name":
    "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}``.
    ``fill_value`` is a numpy scalar of ``dtype``, or a ``str``/``bytes`` for the
    variable-length ``string``/``bytes`` types.
    """

    shape: tuple[int, ...]
    data_type: DataTypeJSON
    dtype: np.dtype[Any]
    chunk_shape: tuple[int, ...]
    chunk_key_encoding: dict[str, Any]
    fill_value: Any
    codecs: list[dict[str, Any]]
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    #: A rectilinear chunk grid (``chunk_shape`` is then its first chunk's shape).
    rectilinear: RectilinearGrid | None = None

    def __post_init__(self) -> None:
        self.shape = tuple(int(s) for s in self.shape)
        self.chunk_shape = tuple(int(c) for c in self.chunk_shape)
        self.data_type = copy_json(self.data_type)
        self.dtype = native_dtype(np.dtype(self.dtype))
        self.codecs = [_normalized_codec(c) for c in self.codecs]
        if self.dimension_names is not None:
            self.dimension_names = tuple(self.dimension_names)

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, path: str = "") -> ArrayMetadataV3:
        """Validate a decoded ``zarr.json`` array document."""
        where = _where(path)
        doc = check_object(doc, where)
        _check_format(doc, "array", where)
        require_members(doc, _ARRAY_REQUIRED, where)
        shape = _int_list(doc["shape"], "shape", where, positive=False)
        data_type, dtype = parse_data_type(doc["data_type"], path=path)
        chunk_shape, rectilinear = _parse_chunk_grid(
            doc["chunk_grid"], shape, where, _inner_chunk_shape(doc["codecs"])
        )
        cke = parse_chunk_key_encoding(doc["chunk_key_encoding"], where)
        fill_value = parse_fill_value(doc["fill_value"], data_type, dtype, path=path)
        codecs = validate_codecs(
            doc["codecs"],
            dtype=dtype,
            data_type=data_type,
            ndim=len(shape),
            chunk_shape=chunk_shape if rectilinear is None else None,
            path=path,
        )
        if rectilinear is not None:
            _check_shard_edges(rectilinear, codecs, where)
        attributes = parse_attributes(doc.get("attributes", {}), where)
        dimension_names = parse_dimension_names(doc.get("dimension_names"), len(shape), where)
        transformers = _parse_storage_transformers(doc.get("storage_transformers"), where)
        extra = parse_extra(doc, ARRAY_MEMBERS, where)
        return cls(
            shape=shape,
            data_type=data_type,
            dtype=dtype,
            chunk_shape=chunk_shape,
            chunk_key_encoding=cke,
            fill_value=fill_value,
            codecs=codecs,
            attributes=attributes,
            dimension_names=dimension_names,
            storage_transformers=transformers,
            extra=extra,
            rectilinear=rectilinear,
        )

    @classmethod
    def create(
        cls,
        *,
        shape: Sequence[int],
        dtype: object,
        chunk_shape: Sequence[int] | RectilinearGrid,
        fill_value: object = None,
        filters: object = None,
        serializer: object = "auto",
        compressors: object = "auto",
        codecs: object = None,
        chunk_key_encoding: object = None,
        attributes: Mapping[str, Any] | None = None,
        dimension_names: Sequence[str | None] | None = None,
        path: str = "",
        data_type: object = None,
    ) -> ArrayMetadataV3:
        """New array metadata with zarr-python 3.1 ``create_array`` defaults; fully validated.

        ``codecs``/``filters``/``serializer``/``compressors`` as in :func:`build_codecs`;
        ``chunk_key_encoding`` is None (``default`` with ``"/"``), a name, or an object
        (``{"name": "v2", "separator": "/"}`` or with ``configuration``); ``fill_value`` None
        gives zarr-python's default (zero/false, NaT, empty string).

        ``dtype`` is a numpy dtype (anything ``np.dtype()`` accepts: the data type is the one
        zarr-python writes for it, see :func:`data_type_name`), or a v3 ``data_type`` (a name
        such as ``"bfloat16"``, ``"string"``, ``"r16"``, or an object with configuration).
        ``data_type``, when given, is the v3 data type and wins over ``dtype``.
        """
        where = _where(path)
        info = resolve_data_type(dtype if data_type is None else data_type, path)
        name = copy_json(info.json)
        dt = info.dtype
        shape_t = _int_list(shape, "shape", where, positive=False)
        rectilinear = None
        if isinstance(chunk_shape, RectilinearGrid):
            rectilinear = chunk_shape
            chunk_shape = rectilinear.first_chunk_shape()
        chunks_t = _int_list(chunk_shape, "chunk_shape", where, positive=True)
        check_chunks_length(chunks_t, shape_t, "chunk_shape", where)
        chain = build_codecs(
            dt,
            data_type=name,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            codecs=codecs,
            ndim=len(shape_t),
            chunk_shape=chunks_t if rectilinear is None else None,
            path=path,
        )
        meta = cls(
            shape=shape_t,
            data_type=name,
            dtype=dt,
            chunk_shape=chunks_t,
            chunk_key_encoding=parse_chunk_key_encoding(
                "default" if chunk_key_encoding is None else chunk_key_encoding, where
            ),
            fill_value=info.cast_fill(fill_value, where),
            codecs=chain,
            attributes=dict(attributes or {}),
            dimension_names=None if dimension_names is None else tuple(dimension_names),
            rectilinear=rectilinear,
        )
        return cls.from_json(meta.to_json(), path=path)

    # ---- output ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document, members in zarr-python 3.1's order."""
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": copy_json(self.data_type),
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(self.chunk_shape)},
            }
            if self.rectilinear is None
            else self.rectilinear.to_json(),
            "chunk_key_encoding": copy_json(self.chunk_key_encoding),
            "fill_value": fill_value_to_json(self.fill_value, self.data_type),
            "codecs": codecs_to_json(self.codecs),
            "attributes": copy_json(self.attributes),
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc["zarr_format"] = 3
        doc["node_type"] = "array"
        doc["storage_transformers"] = copy_json(self.storage_transformers)
        doc.update(copy_json(self.extra))
        return doc

    @property
    def node_type(self) -> Literal["array"]:
        return "array"

    def to_core_json(self) -> ArrayDescription:
        """The :class:`~zarrox.metadata.description.ArrayDescription` the Rust core takes
        (fill bytes: :meth:`fill_bytes`): codecs complete (every default filled in,
        recursively), without ``must_understand``, ignorable unknown codecs left out;
        ``data_type`` the core's form (:meth:`~zarrox.metadata.dtypes.DataType.core_json`);
        a rectilinear grid as ``chunk_shapes``."""
        return describe_array(
            shape=self.shape,
            chunks=self.chunk_shape if self.rectilinear is None else self.rectilinear,
            data_type=self.info.core_json(),
            codecs=normalize_codecs(
                self.codecs,
                dtype=self.dtype,
                data_type=self.data_type,
                ndim=self.ndim,
                chunk_shape=self.chunk_shape if self.rectilinear is None else None,
                form="core",
            ),
            key_encoding={
                "name": self.chunk_key_encoding["name"],
                "separator": self.chunk_key_encoding["configuration"]["separator"],
            },
        )

    def fill_bytes(self) -> bytes:
        """The fill value as one element's bytes, native byte order (for ``string``/``bytes``:
        the UTF-8 / raw bytes of the value)."""
        return self.info.fill_bytes(self.fill_value)

    # ---- helpers -----------------------------------------------------------------------

    @property
    def info(self) -> DataType:
        """The parsed data type (numpy dtype, fill value rules, core descriptor)."""
        return parse_data_type_json(self.data_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_key_separator(self) -> str:
        return str(self.chunk_key_encoding["configuration"]["separator"])

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """Store key (relative to the array) of the chunk at grid index ``coords``."""
        return encode_chunk_key(self.chunk_key_encoding["name"], self.chunk_key_separator, coords)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV3):
            return NotImplemented
        return self.dtype == other.dtype and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------
# Group metadata
# --------------------------------------------------------------------------------------------

_GROUP_KNOWN = ("zarr_format", "node_type", "attributes", "consolidated_metadata")


@dataclass
class GroupMetadataV3(_ZarrJson):
    """A Zarr v3 group's ``zarr.json``.

    ``consolidated_metadata`` is the raw object zarr-python writes (``{"kind": "inline",
    "must_understand": false, "metadata": {...}}``) or None. ``extra`` as for arrays.
    """

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, path: str = "") -> GroupMetadataV3:
        where = _where(path)
        doc = check_object(doc, where)
        _check_format(doc, "group", where)
        attributes = parse_attributes(doc.get("attributes", {}), where)
        consolidated = doc.get("consolidated_metadata")
        if consolidated is not None:
            if not isinstance(consolidated, Mapping) or not isinstance(
                consolidated.get("metadata"), Mapping
            ):
                raise MetadataError(
                    f"{where}consolidated_metadata: must be an object with a 'metadata' object"
                )
            if consolidated.get("kind", "inline") != "inline":
                raise MetadataError(
                    f'{where}consolidated_metadata.kind: expected "inline", '
                    f"got {consolidated.get('kind')!r}"
                )
            consolidated = copy_json(dict(consolidated))
        extra = parse_extra(doc, _GROUP_KNOWN, where)
        return cls(attributes=attributes, consolidated_metadata=consolidated, extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document, members in zarr-python 3.1's order."""
        doc: dict[str, Any] = {"attributes": copy_json(self.attributes), "zarr_format": 3}
        if self.consolidated_metadata is not None:
            doc["consolidated_metadata"] = copy_json(self.consolidated_metadata)
        doc["node_type"] = "group"
        doc.update(copy_json(self.extra))
        return doc

    @property
    def node_type(self) -> Literal["group"]:
        return "group"


def parse_node(doc: Mapping[str, Any], *, path: str = "") -> ArrayMetadataV3 | GroupMetadataV3:
    """A decoded ``zarr.json`` -> array or group metadata, by ``node_type``."""
    where = _where(path)
    doc = check_object(doc, where)
    node_type = doc.get("node_type")
    require_members(doc, ("node_type",), where)
    if node_type == "array":
        return ArrayMetadataV3.from_json(doc, path=path)
    if node_type == "group":
        return GroupMetadataV3.from_json(doc, path=path)
    raise MetadataError(f"{where}node_type: expected 'array' or 'group', got {node_type!r}")
