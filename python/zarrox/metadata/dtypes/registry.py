"""The registry: JSON (v3 ``data_type``, v2 ``dtype``), a numpy dtype or a user's dtype ->
its :class:`~zarrox.metadata.dtypes.base.DataType`."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError
from zarrox.metadata.dtypes.base import (
    DataType,
    ml_type_name,
    native_dtype,
    typestr,
    zarr_json_where,
)
from zarrox.metadata.dtypes.fixed import (
    LENGTH_TYPES,
    FixedUtf32Type,
    NullTerminatedBytesType,
    RawBytesType,
)
from zarrox.metadata.dtypes.floats import FLOAT_FORMATS
from zarrox.metadata.dtypes.numeric import (
    COMPLEX_TYPES,
    CORE_INTS,
    SMALL_INTS,
    BoolType,
    ComplexType,
    FloatType,
    IntType,
)
from zarrox.metadata.dtypes.struct import STRUCT_TYPES, StructType
from zarrox.metadata.dtypes.time import TIME_TYPES, TimeType
from zarrox.metadata.dtypes.v2_json import ml_v2_name, parse_v2_dtype, v2_json_class, v2_types
from zarrox.metadata.dtypes.variable import BYTES_NAMES, BytesType, StringType

__all__ = [
    "CONFIGURED_TYPES",
    "CORE_TYPES",
    "SIMPLE_TYPES",
    "V2_TYPES",
    "data_type_from_numpy",
    "from_zarr_python_dtype",
    "parse_data_type_json",
    "parse_v2_dtype",
    "v2_data_type",
    "v2_json_class",
    "v2_user_dtype",
    "vlen_codec_id",
]

#: the named core data types (the spec's; ``r<N>`` besides)
CORE_TYPES = ("bool", *CORE_INTS, "float16", "float32", "float64", "complex64", "complex128")
_ML_TYPES = frozenset([n for n, f in FLOAT_FORMATS.items() if f.ml] + list(SMALL_INTS))
_RAW_RE = re.compile(r"r([0-9]+)")

#: data types that take no configuration
SIMPLE_TYPES: frozenset[str] = frozenset(
    [*CORE_TYPES, *_ML_TYPES, *COMPLEX_TYPES, "string", *BYTES_NAMES]
)
#: data types that require a configuration
CONFIGURED_TYPES: frozenset[str] = frozenset([*TIME_TYPES, *LENGTH_TYPES, *STRUCT_TYPES])


# --------------------------------------------------------------------------------------------
# v3 data_type
# --------------------------------------------------------------------------------------------

_CACHE: dict[str, DataType] = {}


def parse_data_type_json(
    value: object, *, path: str | None = None, label: str = "data_type"
) -> DataType:
    """A v3 ``data_type`` member (a name or ``{"name", "configuration"}``) -> its data type.

    Malformed members raise MetadataError; names zarrox does not know raise UnsupportedError
    naming the type (and the node, with ``path``).
    """
    try:
        key = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    result = _parse(value, zarr_json_where(path), label)
    if key is not None:
        _CACHE[key] = result
    return result


def _parse(value: object, where: str, label: str) -> DataType:
    cfg: Mapping[str, Any] | None = None
    if isinstance(value, Mapping):
        unknown = sorted(
            str(k) for k in value if k not in ("name", "configuration", "must_understand")
        )
        if unknown:
            raise MetadataError(f"{where}{label}: unknown member(s) {unknown} in {dict(value)!r}")
        name = value.get("name")
        if not isinstance(name, str) or not name:
            raise MetadataError(f"{where}{label}: 'name' must be a non-empty string, got {name!r}")
        if value.get("must_understand", True) is not True:
            raise MetadataError(
                f'{where}{label}: "must_understand" must not be false for a data type'
            )
        cfg_v = value.get("configuration", {})
        if not isinstance(cfg_v, Mapping):
            raise MetadataError(f"{where}{label}.configuration: must be an object, got {cfg_v!r}")
        cfg = cfg_v if "configuration" in value else None
    elif isinstance(value, str):
        name = value
    else:
        raise MetadataError(f"{where}{label}: must be a data type name or an object, got {value!r}")

    raw = _RAW_RE.fullmatch(name)
    if name in SIMPLE_TYPES or raw:
        if cfg:
            raise MetadataError(
                f"{where}{label}: data type {name!r} takes no configuration, got {dict(cfg)!r}"
            )
        if raw:
            return RawBytesType.v3_raw_bits(name, int(raw.group(1)), where, label)
        return _simple(name, where)
    if name in CONFIGURED_TYPES:
        if cfg is None:
            raise MetadataError(f"{where}{label}: data type {name!r} requires a configuration")
        return _configured(name, cfg, where, label)
    if cfg:
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {name!r} (configuration {dict(cfg)!r})"
        )
    raise UnsupportedDataTypeError(f"{where}unsupported data type {name!r}")


def _simple(name: str, where: str) -> DataType:
    if name == "bool":
        return BoolType.v3()
    if name in CORE_INTS or name in SMALL_INTS:
        return IntType.v3(name, where)
    if name in FLOAT_FORMATS:
        return FloatType.v3(name, where)
    if name in COMPLEX_TYPES:
        return ComplexType.v3(name, where)
    if name == "string":
        return StringType.v3()
    return BytesType.v3(name)


def _configured(name: str, cfg: Mapping[str, Any], where: str, label: str) -> DataType:
    if name in TIME_TYPES:
        return TimeType.v3(name, cfg, where, label)
    if name == "fixed_length_utf32":
        return FixedUtf32Type.v3(name, cfg, where, label)
    if name == "null_terminated_bytes":
        return NullTerminatedBytesType.v3(name, cfg, where, label)
    if name == "raw_bytes":
        return RawBytesType.v3(name, cfg, where, label)
    return StructType.v3(name, cfg, where, label, _parse)


# --------------------------------------------------------------------------------------------
# numpy and user dtypes -> v3
# --------------------------------------------------------------------------------------------


def from_zarr_python_dtype(dtype: object, zarr_format: int) -> object:
    """A zarr-python data type object (``zarr.dtype.Int16()``, ``VariableLengthUTF8()``, ...)
    -> what zarrox's ``create`` takes for that format: the v3 data type JSON, or for v2 the
    numpy dtype (``str`` / ``bytes`` for the object types with a vlen codec). Anything else
    is returned unchanged. Recognised by its methods, so zarr need not be imported."""
    to_json = getattr(dtype, "to_json", None)
    if not (callable(to_json) and callable(getattr(dtype, "to_native_dtype", None))):
        return dtype
    if zarr_format == 3:
        return to_json(zarr_format=3)
    doc = to_json(zarr_format=2)
    codec = doc.get("object_codec_id") if isinstance(doc, Mapping) else None
    if codec is not None:
        return {"vlen-utf8": str, "vlen-bytes": bytes}.get(codec, dtype)
    return dtype.to_native_dtype()  # type: ignore[attr-defined]


def data_type_from_numpy(dtype: object, *, path: str | None = None) -> DataType:
    """A numpy dtype (anything ``np.dtype()`` accepts, any byte order) -> the v3 data type
    zarr-python 3.1 writes for it; ml_dtypes types get their registry names.

    ``str``, object and StringDType give ``string``; ``bytes`` gives ``bytes``; unsized ``U``
    and ``S`` give ``string`` and ``bytes`` too.
    """
    where = zarr_json_where(path)
    if dtype is str:
        return _simple("string", where)
    if dtype is bytes:
        return _simple("bytes", where)
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except (TypeError, ValueError) as e:
        raise UnsupportedDataTypeError(f"{where}unsupported data type {dtype!r}: {e}") from None
    return parse_data_type_json(_numpy_json(dt, where), path=path)


def _numpy_json(dt: np.dtype[Any], where: str) -> Any:
    if dt.subdtype is not None:
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {dt!r}: sub-array dtypes have no v3 data type"
        )
    ml_name = ml_type_name(dt)
    if ml_name in _ML_TYPES:
        return ml_name  # note: float8_e5m2 has kind "f", the others "V"
    t = dt.type
    kind = dt.kind
    if kind == "b":
        return "bool"
    if kind in "iufc":
        name = native_dtype(dt).name
        if name in CORE_TYPES:
            return name
    elif kind in "Mm":
        return TimeType.v3_json(dt)
    elif kind == "U":
        if dt.itemsize == 0:
            return "string"
        return {"name": "fixed_length_utf32", "configuration": {"length_bytes": dt.itemsize}}
    elif kind == "S":
        if dt.itemsize == 0:
            return "bytes"
        return {"name": "null_terminated_bytes", "configuration": {"length_bytes": dt.itemsize}}
    elif kind in "OT":
        return "string"
    elif kind == "V" and t is np.void:
        if dt.names is None:
            if dt.itemsize == 0:
                raise UnsupportedDataTypeError(f"{where}unsupported data type {dt!r}: empty void")
            return {"name": "raw_bytes", "configuration": {"length_bytes": dt.itemsize}}
        fields: list[Any] = []
        offset = 0
        for fname in dt.names:
            fdt, foffset = dt.fields[fname][:2]  # type: ignore[index]
            if foffset != offset:
                raise UnsupportedDataTypeError(
                    f"{where}unsupported data type {dt!r}: fields must be packed without "
                    "padding (the struct data type has no alignment)"
                )
            fjson = _numpy_json(fdt, where)
            if fjson in ("string", "bytes"):
                raise UnsupportedDataTypeError(
                    f"{where}unsupported data type {dt!r}: field {fname!r} is variable-length"
                )
            fields.append({"name": fname, "data_type": fjson})
            offset += fdt.itemsize
        if offset != dt.itemsize:
            raise UnsupportedDataTypeError(
                f"{where}unsupported data type {dt!r}: padding after the last field"
            )
        # the registered "struct" type, as zarr-python >= 3.2 writes it (3.1 wrote, and only
        # reads, the legacy "structured" form, which zarrox reads too)
        return {"name": "struct", "configuration": {"fields": fields}}
    raise UnsupportedDataTypeError(
        f"{where}unsupported data type {dt!r}: no v3 data type (core: {list(CORE_TYPES)}, r<N>; "
        "extensions: ml_dtypes types, datetime64/timedelta64, U, S, V, structured, str, bytes)"
    )


# --------------------------------------------------------------------------------------------
# v2 dtype
# --------------------------------------------------------------------------------------------

#: the data types of v2 arrays (each module registers its own, ``v2_json.v2_type``), asked
#: in turn whether a v2 ``dtype`` (JSON or numpy) is one of their forms
V2_TYPES = v2_types()


def _check_float_size(dt: np.dtype[Any], where: str) -> None:
    name = native_dtype(dt).name
    if dt.fields is None and dt.kind in "fc" and name not in FLOAT_FORMATS | COMPLEX_TYPES:
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {typestr(dt)!r} (extended precision floats)"
        )


@functools.lru_cache(maxsize=256)
def _v2_data_type(dt: np.dtype[Any]) -> DataType:
    _check_float_size(dt, "")
    try:
        v3_json = _numpy_json(dt, "")
    except UnsupportedDataTypeError:
        v3_json = None  # v2 layouts v3 has no type for (padding, sub-array fields)
    ml_v2_name(dt)  # an ml_dtypes type without a v2 name raises
    cls = next(cls for cls in V2_TYPES if cls.check_v2_dtype(dt))
    return cls.from_v2_dtype(dt, v3_json)


def v2_data_type(dtype: object) -> DataType:
    """A v2 array's numpy dtype (byte order as stored) -> its data type, whose methods give
    the ``.zarray`` ``dtype`` (:meth:`~DataType.v2_json`) and fill-value encodings.

    Sub-array dtypes and unsized ``S``/``U``/``V`` raise UnsupportedDataTypeError."""
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as e:
        raise UnsupportedDataTypeError(f"unsupported data type {dtype!r}: {e}") from None
    if dt.fields is None:
        if dt.subdtype is not None:
            raise UnsupportedDataTypeError(
                f"unsupported data type {dt!r}: a sub-array dtype is not a v2 array data type "
                "(add its shape to the array's shape)"
            )
        if dt.kind in "SUV" and dt.itemsize == 0:
            raise UnsupportedDataTypeError(
                f"unsupported data type {dt!r}: fixed-size types need a size"
            )
    return _v2_data_type(dt)


def vlen_codec_id(dtype: object) -> str | None:
    """The v2 filter a user dtype's object array takes: 'vlen-utf8' for str-like dtypes,
    'vlen-bytes' for bytes, None for the fixed-size dtypes."""
    if dtype is str or isinstance(dtype, np.dtypes.StringDType):
        return "vlen-utf8"
    if dtype is bytes:
        return "vlen-bytes"
    if dtype is object or (isinstance(dtype, str) and dtype in ("O", "|O", "object")):
        return "vlen-utf8"
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return "vlen-utf8"
    return None


def v2_user_dtype(dtype: object, where: str) -> np.dtype[Any]:
    """What a user gives as a v2 ``dtype`` -> the numpy dtype stored (native order written
    little-endian; str/bytes/object give ``|O``); only what a ``.zarray`` can hold."""
    if vlen_codec_id(dtype) is not None:
        return np.dtype("O")
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except (TypeError, ValueError) as e:
        if not isinstance(dtype, list):
            raise UnsupportedDataTypeError(f"{where}unsupported data type {dtype!r}: {e}") from None
        dt = parse_v2_dtype(dtype, where, "dtype")  # a v2 field list (lists, not tuples)
    if dt.hasobject or (dt.kind in "SU" and dt.itemsize == 0):
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {dtype!r}: variable-length strings and objects are "
            "not supported yet"
        )
    _check_float_size(dt, where)
    # Round-trip through the JSON form: only what a .zarray can hold gets through.
    return parse_v2_dtype(v2_data_type(dt).v2_json(), where, "dtype")
