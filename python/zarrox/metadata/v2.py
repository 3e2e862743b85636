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

- ``null``: no fill value (see :func:`v2_fill_value_bytes` for what zarrox reads then);
- bool: ``true``/``false``; integers (also M8/m8, as the int64 count, NaT being
  ``-9223372036854775808``): JSON integers;
- floats: numbers, ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; complex: ``[real, imag]``;
- ``S<n>``, ``V<n>`` and structured types: base64 of the bytes (for ``S``, the bytes given,
  which may be shorter than ``n``; trailing NULs are kept as read);
- ``U<n>``: the string itself;
- object (``|O``): whatever JSON value was stored, kept as is.

Every error message starts with the document and node, e.g. ``".zarray at 'a/b': fill_value:
..."``. Malformed metadata raises :class:`~zarrox.errors.MetadataError`; valid metadata that
zarrox cannot handle raises :class:`~zarrox.errors.UnsupportedError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import pickle
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError, UnsupportedError
from zarrox.metadata._checks import copy_json, is_text, stored_chunk_sizes
from zarrox.metadata._checks import int_tuple as _int_tuple
from zarrox.metadata._checks import is_int as _is_int
from zarrox.metadata.dtypes import cast_values, from_zarr_python_dtype
from zarrox.metadata.v3 import load_json_object
from zarrox.pickle_codec import PickleStage

__all__ = [
    "DEFAULT_COMPRESSOR_V2",
    "DEFAULT_FILL",
    "ArrayMetadataV2",
    "GroupMetadataV2",
    "V2Style",
    "cast_v2_fill_value",
    "default_v2_fill_value",
    "dumps_v2",
    "loads_v2",
    "normalize_v2_codec",
    "parse_v2_dtype",
    "parse_v2_fill_value",
    "v2_core_data_type",
    "v2_dtype_json",
    "v2_fill_value_bytes",
    "v2_fill_value_json",
]

V2Style = Literal["zarr3", "zarr2"]

#: The compressor zarr-python 3.1 ``create_array(..., zarr_format=2)`` uses when none is given
#: (``numcodecs.Zstd(level=0)``, written without ``"checksum": false``). Note: zarr-python
#: 3.1's ``Group.create_array`` on a v2 group uses ``{"id": "blosc"}`` instead (lz4, clevel 5,
#: shuffle 1, blocksize 0).
DEFAULT_COMPRESSOR_V2: Mapping[str, Any] = {"id": "zstd", "level": 0}


class _DefaultFill:
    """Sentinel: no fill value given, use the data type's default (as zarr-python does)."""

    def __repr__(self) -> str:
        return "DEFAULT_FILL"


#: ``fill_value`` default of :meth:`ArrayMetadataV2.create`: the data type's default value
#: (``None`` instead stores ``null``).
DEFAULT_FILL: Any = _DefaultFill()


def _where(key: str, path: str | None) -> str:
    """The prefix of every error message: ``".zarray at 'a/b': "`` (empty if no path)."""
    return "" if path is None else f"{key} at {path!r}: "


# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------

_TYPESTR_RE = re.compile(r"([<>|])([biufcmMSUVO])([0-9]*)(?:\[([0-9]*)([A-Za-zμ]+)\])?")
_NUMERIC_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16)}
_DATETIME_UNITS = (
    *("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as"),
    "generic",
)


def _parse_typestr(value: str, where: str, label: str) -> np.dtype[Any]:
    m = _TYPESTR_RE.fullmatch(value)
    if m is None:
        raise MetadataError(
            f"{where}{label}: {value!r} is not a numpy type string with an explicit byte order "
            '(e.g. "<f8", ">i4", "|b1", "|S12", "<M8[ns]") or a list of fields'
        )
    order, kind, size_s, scale_s, unit = m.groups()
    size = int(size_s) if size_s else None
    if unit is not None and kind not in "mM":
        raise MetadataError(f"{where}{label}: {value!r}: only M8/m8 types take a [unit]")
    if kind == "O":
        if order != "|" or size is not None:
            raise MetadataError(
                f"{where}{label}: the object data type is written '|O', got {value!r}"
            )
        return np.dtype("O")
    if size is None:
        raise MetadataError(f"{where}{label}: {value!r} has no size (e.g. '<i4', '|S5')")
    if kind in _NUMERIC_SIZES:
        if size not in _NUMERIC_SIZES[kind]:
            if kind in "fc" and size in (12, 16, 24, 32):
                raise UnsupportedDataTypeError(
                    f"{where}unsupported data type {value!r} (extended precision floats)"
                )
            raise MetadataError(
                f"{where}{label}: {value!r}: size {size} is not valid for kind {kind!r} "
                f"(expected one of {list(_NUMERIC_SIZES[kind])})"
            )
    elif kind in "mM":
        if size != 8:
            raise MetadataError(f"{where}{label}: {value!r}: datetime types have size 8")
        if unit is not None and unit not in _DATETIME_UNITS:
            raise MetadataError(
                f"{where}{label}: {value!r}: unknown time unit {unit!r} "
                f"(expected one of {list(_DATETIME_UNITS)})"
            )
        if scale_s is not None and scale_s != "" and int(scale_s) <= 0:
            raise MetadataError(f"{where}{label}: {value!r}: the unit's scale must be positive")
    elif size <= 0:
        raise MetadataError(f"{where}{label}: {value!r}: fixed-size types need a positive size")
    swappable = kind in "iufcmMU" and (size > 1 or kind in "cU")
    if swappable and order == "|":
        raise MetadataError(
            f"{where}{label}: {value!r} needs a byte order, '<' or '>' (e.g. {'<' + value[1:]!r})"
        )
    # Types without a byte order are written with '|'; '<' and '>' are accepted for them and
    # dropped (numpy does the same).
    try:
        return np.dtype(value)
    except TypeError as e:  # pragma: no cover - the regex already screens the forms numpy takes
        raise MetadataError(f"{where}{label}: invalid data type {value!r}: {e}") from None


def _parse_fields(value: Sequence[Any], where: str, label: str) -> np.dtype[Any]:
    if len(value) == 0:
        raise MetadataError(f"{where}{label}: a structured data type needs at least one field")
    names: list[str] = []
    formats: list[Any] = []
    offsets: list[int] = []
    offset = 0
    for i, item in enumerate(value):
        ilabel = f"{label}[{i}]"
        if isinstance(item, str | bytes | Mapping) or not isinstance(item, Sequence):
            raise MetadataError(
                f"{where}{ilabel}: a field must be [name, type] or [name, type, shape], "
                f"got {item!r}"
            )
        if len(item) not in (2, 3):
            raise MetadataError(
                f"{where}{ilabel}: a field must be [name, type] or [name, type, shape], "
                f"got {len(item)} elements"
            )
        name = item[0]
        if not isinstance(name, str):
            raise MetadataError(f"{where}{ilabel}[0]: field name must be a string, got {name!r}")
        fdt = _parse_dtype(item[1], where, f"{ilabel}[1]")
        if fdt.hasobject:
            raise UnsupportedError(f"{where}{ilabel}: structured fields of object type")
        if len(item) == 3:
            shape = item[2]
            if (
                isinstance(shape, str | bytes | Mapping)
                or not isinstance(shape, Sequence)
                or not all(_is_int(s) and s > 0 for s in shape)
            ):
                raise MetadataError(
                    f"{where}{ilabel}[2]: field shape must be an array of positive integers, "
                    f"got {shape!r}"
                )
            try:
                fdt = np.dtype((fdt, tuple(int(s) for s in shape)))
            except (ValueError, OverflowError) as e:  # larger than numpy's dimensions or sizes
                raise MetadataError(
                    f"{where}{ilabel}[2]: field shape {shape!r} is too large: {e}"
                ) from None
        if name == "" and len(item) == 2 and fdt.kind == "V" and fdt.fields is None:
            offset += fdt.itemsize  # padding, as numpy's descr writes it
            continue
        if name == "":
            raise MetadataError(f"{where}{ilabel}[0]: field name must not be empty")
        if name in names:
            raise MetadataError(f"{where}{ilabel}[0]: duplicate field name {name!r}")
        names.append(name)
        formats.append(fdt)
        offsets.append(offset)
        offset += fdt.itemsize
    if not names:
        raise MetadataError(f"{where}{label}: a structured data type needs at least one field")
    try:
        return np.dtype(
            {"names": names, "formats": formats, "offsets": offsets, "itemsize": offset}
        )
    except (ValueError, OverflowError) as e:  # an element larger than numpy's item size
        raise MetadataError(f"{where}{label}: invalid structured data type: {e}") from None


def _parse_dtype(value: object, where: str, label: str) -> np.dtype[Any]:
    if isinstance(value, str):
        return _parse_typestr(value, where, label)
    if isinstance(value, list | tuple):
        return _parse_fields(value, where, label)
    raise MetadataError(
        f"{where}{label}: must be a numpy type string or a list of fields, got {value!r}"
    )


def parse_v2_dtype(value: object, *, path: str | None = None) -> np.dtype[Any]:
    """The ``.zarray`` ``dtype`` member -> numpy dtype, byte order as stored.

    Takes numpy type strings with an explicit byte order (``"<f8"``, ``">i2"``, ``"|b1"``,
    ``"|S12"``, ``"<U4"``, ``"|V8"``, ``"<M8[ns]"``, ``"<m8[10s]"``, ``"|O"``) and structured
    types as field lists ``[["a", "<i4"], ["b", "<f8", [2]], ["c", [["d", "|u1"]]]]`` (nested,
    with sub-array shapes, and ``["", "|V<n>"]`` padding as numpy's ``descr`` writes it).
    """
    return _parse_dtype(value, _where(".zarray", path), "dtype")


def _typestr(dt: np.dtype[Any]) -> str:
    """``dt.str``, with a generic time unit's scale that numpy leaves out of it
    (``"<m8[2generic]"``, as zarr-python 3.4 writes it)."""
    if dt.kind in "mM":
        unit, scale = np.datetime_data(dt)
        if unit == "generic" and scale != 1:
            return f"{dt.str}[{scale}generic]"
    return dt.str


def _fields_json(dt: np.dtype[Any]) -> list[Any]:
    """A structured dtype's field list (numpy's ``descr``, with :func:`_typestr` types)."""
    out: list[Any] = []
    for item in dt.descr:
        name, typ = item[0], item[1]
        if not isinstance(name, str):
            raise UnsupportedError(f"structured data type field titles are not supported: {name!r}")
        if name == "":  # padding, as numpy's descr writes it
            out.append([name, typ])
            continue
        field = dt.fields[name][0]  # type: ignore[index]
        base = field.base if field.subdtype is not None else field
        entry: list[Any] = [name, _fields_json(base) if base.fields is not None else _typestr(base)]
        if len(item) > 2:
            entry.append(list(item[2]))
        out.append(entry)
    return out


def v2_dtype_json(dtype: object) -> str | list[Any]:
    """Numpy dtype -> the ``.zarray`` ``dtype`` member (the inverse of :func:`parse_v2_dtype`).

    A type string (``dtype.str``) for simple types, a field list for structured types.
    """
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as e:
        raise UnsupportedDataTypeError(f"unsupported data type {dtype!r}: {e}") from None
    if dt.fields is not None:
        return _fields_json(dt)
    if dt.subdtype is not None:
        raise UnsupportedDataTypeError(
            f"unsupported data type {dt!r}: a sub-array dtype is not a v2 array data type "
            "(add its shape to the array's shape)"
        )
    if dt.kind in "SUV" and dt.itemsize == 0:
        raise UnsupportedDataTypeError(
            f"unsupported data type {dt!r}: fixed-size types need a size"
        )
    return _typestr(dt)


def _is_raw(dt: np.dtype[Any]) -> bool:
    """Types the core handles as raw bytes (``r<N>``), never byte-swapped."""
    return dt.kind in "SUVmM"


def v2_core_data_type(dtype: np.dtype[Any] | Any, *, path: str | None = None) -> str:
    """The v3 core data type name the Rust core uses for a v2 dtype.

    ``bool``, ``int8`` ... ``complex128`` for numeric types (any byte order); raw bits
    ``r<8 * itemsize>`` for ``S``, ``U``, ``V``, structured, ``M8`` and ``m8``. Object types
    raise UnsupportedError.
    """
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise UnsupportedDataTypeError(
            f"{_where('.zarray', path)}unsupported data type {v2_dtype_json(dt)!r}: "
            "variable-length strings and objects are not supported yet"
        )
    if _is_raw(dt):
        return f"r{8 * dt.itemsize}"
    return dt.newbyteorder("=").name


def _is_big_endian(dt: np.dtype[Any]) -> bool:
    return dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder == "big")


def _byte_order(dt: np.dtype[Any]) -> str:
    """``">"`` or ``"<"`` for multi-byte numeric types, ``"|"`` when the order does not matter."""
    if dt.byteorder == "|":
        return "|"
    return ">" if _is_big_endian(dt) else "<"


#: value filters: (input type member, output type member), as numcodecs views and casts
_FILTER_TYPE_MEMBERS = {
    "delta": ("dtype", "astype"),
    "fixedscaleoffset": ("dtype", "astype"),
    "quantize": ("dtype", "astype"),
    "astype": ("decode_dtype", "encode_dtype"),
}


def _filter_byte_order(codec: Mapping[str, Any], byte_order: str, i: int) -> str:
    """The byte order of a value filter's output, given its input's (see to_core_json).

    numcodecs views its input as the filter's ``dtype``: a chunk in the other byte order
    would be reinterpreted, which zarrox does not reproduce."""
    members = _FILTER_TYPE_MEMBERS.get(str(codec["name"]).removeprefix("numcodecs."))
    if members is None:
        return byte_order
    config = codec["configuration"]
    in_order = _byte_order(np.dtype(config[members[0]]))
    if "|" not in (in_order, byte_order) and in_order != byte_order:
        got = "big" if byte_order == ">" else "little"
        raise UnsupportedError(
            f"{_where('.zarray', '')}filters[{i}]: {members[0]} {config[members[0]]!r} has "
            f"the other byte order than the values it gets ({got}-endian); numcodecs would "
            "reinterpret their bytes: give the filter the array's byte order"
        )
    return _byte_order(np.dtype(config[members[1]]))


# --------------------------------------------------------------------------------------------
# Fill values
# --------------------------------------------------------------------------------------------

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_NAT = np.iinfo(np.int64).min


def _float_from_json(value: object, fdt: np.dtype[Any], where: str, label: str) -> np.generic:
    if isinstance(value, str):
        if value in _SPECIAL_FLOATS:
            return fdt.type(_SPECIAL_FLOATS[value])  # type: ignore[no-any-return]
        try:  # zarr-python 3.1 also reads numbers written as strings, e.g. "1.5"
            as_float = float(value)
        except ValueError:
            raise MetadataError(
                f'{where}{label}: {value!r} is not a valid float (use a number, "NaN", '
                '"Infinity" or "-Infinity")'
            ) from None
    elif isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise MetadataError(
            f'{where}{label}: expected a number, "NaN", "Infinity" or "-Infinity" for '
            f"{fdt.newbyteorder('=').name}, got {value!r}"
        )
    elif isinstance(value, complex | np.complexfloating):
        raise MetadataError(f"{where}{label}: expected a real number, got {value!r}")
    else:
        try:
            as_float = float(value)
        except OverflowError:
            as_float = math.inf if value > 0 else -math.inf  # type: ignore[operator]
    with np.errstate(over="ignore"):
        return fdt.type(as_float)  # type: ignore[no-any-return]


def _int_from_json(value: object, dt: np.dtype[Any], where: str, label: str) -> np.generic:
    as_int: int | None = None
    if _is_int(value):
        as_int = int(value)  # type: ignore[call-overload]
    elif isinstance(value, float) and value.is_integer():
        as_int = int(value)  # zarr-python 3.1 reads 0.0 as 0
    elif isinstance(value, str):
        try:
            as_int = int(value)  # and "42" as 42
        except ValueError:
            pass
    name = dt.newbyteorder("=").name
    if as_int is None:
        raise MetadataError(f"{where}{label}: expected an integer for {name}, got {value!r}")
    info = np.iinfo(dt)
    if not info.min <= as_int <= info.max:
        raise MetadataError(
            f"{where}{label}: {as_int} is out of range for {name} [{info.min}, {info.max}]"
        )
    return np.array(as_int, dtype=dt.newbyteorder("="))[()]  # type: ignore[no-any-return]


def _b64(value: object, where: str, label: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise MetadataError(f"{where}{label}: expected a base64 string for {what}, got {value!r}")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MetadataError(f"{where}{label}: {value!r} is not valid base64 ({what})") from None


def _datetime_scalar(as_int: int, dt: np.dtype[Any]) -> np.generic:
    return np.array([as_int], dtype=np.int64).view(dt.newbyteorder("="))[0]  # type: ignore[no-any-return]


def parse_v2_fill_value(value: object, dtype: np.dtype[Any], *, path: str | None = None) -> Any:
    """The ``.zarray`` ``fill_value`` -> numpy scalar (or None), for the stored ``dtype``.

    Numeric types give native-order numpy scalars; ``S`` gives ``np.bytes_``, ``U``
    ``np.str_``, ``V`` and structured types ``np.void`` (with the stored dtype), ``M8``/``m8``
    ``np.datetime64``/``np.timedelta64``. Object types keep the JSON value unchanged.
    """
    where = _where(".zarray", path)
    label = "fill_value"
    dt = np.dtype(dtype)
    if value is None:
        return None
    if dt.hasobject:
        # Object arrays hold strings or bytes: a list or an object is no fill value for them
        # (zarr-python refuses both), nor is text UTF-8 cannot encode (lone surrogates).
        if isinstance(value, list | Mapping) or (isinstance(value, str) and not is_text(value)):
            raise MetadataError(
                f"{where}{label}: an object array takes a string or scalar fill value (or null), "
                f"got {value!r}"
            )
        return value
    kind = dt.kind
    if kind == "b":
        if isinstance(value, bool | np.bool_) or (_is_int(value) and value in (0, 1)):
            return np.bool_(value)
        raise MetadataError(f"{where}{label}: expected true or false for bool, got {value!r}")
    if kind in "iu":
        return _int_from_json(value, dt, where, label)
    if kind == "f":
        return _float_from_json(value, dt.newbyteorder("="), where, label)
    if kind == "c":
        if (
            isinstance(value, str | bytes | Mapping)
            or not isinstance(value, Sequence)
            or len(value) != 2
        ):
            raise MetadataError(
                f"{where}{label}: expected [real, imag] for {dt.newbyteorder('=').name}, "
                f"got {value!r}"
            )
        fdt = np.dtype(f"f{dt.itemsize // 2}")
        re_ = _float_from_json(value[0], fdt, where, f"{label}[0]")
        im_ = _float_from_json(value[1], fdt, where, f"{label}[1]")
        return np.array([re_, im_], dtype=fdt).view(dt.newbyteorder("="))[0]
    if kind in "mM":
        if value == "NaT":
            return _datetime_scalar(_NAT, dt)
        if not _is_int(value):
            raise MetadataError(
                f'{where}{label}: expected an integer (or "NaT") for {v2_dtype_json(dt)}, '
                f"got {value!r}"
            )
        info = np.iinfo(np.int64)
        if not info.min <= int(value) <= info.max:  # type: ignore[call-overload]
            raise MetadataError(f"{where}{label}: {value} is out of range for int64")
        return _datetime_scalar(int(value), dt)  # type: ignore[call-overload]
    if kind == "S":
        raw = _b64(value, where, label, v2_dtype_json(dt))  # type: ignore[arg-type]
        if len(raw) > dt.itemsize:
            raise MetadataError(
                f"{where}{label}: {len(raw)} bytes do not fit in {v2_dtype_json(dt)!r}"
            )
        return np.bytes_(raw)
    if kind == "U":
        if not isinstance(value, str):
            raise MetadataError(
                f"{where}{label}: expected a string for {v2_dtype_json(dt)}, got {value!r}"
            )
        if len(value) > dt.itemsize // 4:
            raise MetadataError(
                f"{where}{label}: {value!r} is longer than {dt.itemsize // 4} characters "
                f"({v2_dtype_json(dt)})"
            )
        return np.str_(value)
    if kind == "V":
        what = "structured data types" if dt.fields is not None else v2_dtype_json(dt)
        raw = _b64(value, where, label, str(what))
        if len(raw) != dt.itemsize:
            raise MetadataError(
                f"{where}{label}: base64 value has {len(raw)} bytes, the data type has "
                f"{dt.itemsize}"
            )
        return np.frombuffer(raw, dtype=dt)[0]
    raise UnsupportedDataTypeError(
        f"{where}unsupported data type {dt!r} for fill_value"
    )  # pragma: no cover


def _float_json(x: Any) -> float | str:
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return float(x)


def v2_fill_value_json(value: Any, dtype: np.dtype[Any] | Any) -> Any:
    """Fill value (as :func:`parse_v2_fill_value` returns it) -> its JSON form, as zarr-python
    2.18 and 3.1 both write it."""
    dt = np.dtype(dtype)
    if value is None or dt.hasobject:
        return copy_json(value)
    kind = dt.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _float_json(value)
    if kind == "c":
        c = complex(value)
        return [_float_json(c.real), _float_json(c.imag)]
    if kind in "mM":
        native = dt.newbyteorder("=")
        return int(np.asarray(value, dtype=native).view(np.int64))
    if kind == "S":
        return base64.standard_b64encode(bytes(np.bytes_(value))).decode("ascii")
    if kind == "U":
        return str(value)
    if kind == "V":
        return base64.standard_b64encode(_raw_bytes(value, dt)).decode("ascii")
    raise UnsupportedDataTypeError(
        f"unsupported data type {dt!r} for fill_value"
    )  # pragma: no cover


def _raw_bytes(value: Any, dt: np.dtype[Any]) -> bytes:
    if isinstance(value, np.void) and value.dtype == dt:
        return value.tobytes()
    if isinstance(value, bytes | np.void):
        raw = value.tobytes() if isinstance(value, np.void) else value
        if len(raw) != dt.itemsize:
            raise MetadataError(
                f"fill value has {len(raw)} bytes, data type {v2_dtype_json(dt)!r} has "
                f"{dt.itemsize}"
            )
        return bytes(raw)
    return np.asarray(value, dtype=dt).tobytes()


def default_v2_fill_value(dtype: np.dtype[Any] | Any) -> Any:
    """The fill value zarr-python 3.1 uses when none is given (and for ``null`` when reading):
    zero / false / empty for every type except ``M8``/``m8``, which get NaT."""
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise UnsupportedDataTypeError(
            f"unsupported data type {v2_dtype_json(dt)!r}: variable-length strings and objects "
            "are not supported yet"
        )
    if dt.kind in "mM":
        return _datetime_scalar(_NAT, dt)
    if dt.kind == "S":
        return np.bytes_(b"")
    if dt.kind == "U":
        return np.str_("")
    if dt.kind == "V":
        return np.frombuffer(bytes(dt.itemsize), dtype=dt)[0]
    return np.zeros((), dtype=dt.newbyteorder("="))[()]


def cast_v2_fill_value(value: Any, dtype: np.dtype[Any] | Any, *, path: str | None = None) -> Any:
    """A user-given fill value (``create``) -> the form :func:`parse_v2_fill_value` returns.

    Takes Python and numpy scalars; the JSON forms too (``"NaN"``, base64 strings are NOT
    decoded: for ``S`` types a ``str`` is encoded as ASCII, as numpy does).
    """
    where = _where(".zarray", path)
    dt = np.dtype(dtype)
    if value is None:
        return None
    if dt.hasobject:
        if is_text(value):
            return value
        raise MetadataError(
            f"{where}fill_value: a v2 object array takes a str fill value (or None), got {value!r}"
        )
    label = "fill_value"
    kind = dt.kind
    native = dt.newbyteorder("=")
    try:
        if kind == "b":
            if isinstance(value, bool | np.bool_) or (_is_int(value) and value in (0, 1)):
                return np.bool_(value)
        elif kind in "iu":
            if isinstance(value, bool | np.bool_):
                value = int(value)
            if isinstance(value, float | np.floating) and float(value).is_integer():
                value = int(value)
            if _is_int(value):
                return _int_from_json(int(value), dt, where, label)
        elif kind == "f":
            if isinstance(value, np.floating):
                with np.errstate(over="ignore"):
                    return np.asarray(value).astype(native)[()]
            return _float_from_json(value, native, where, label)
        elif kind == "c":
            if isinstance(value, Sequence) and not isinstance(value, str | bytes):
                return parse_v2_fill_value(list(value), dt, path=path)
            if isinstance(value, int | float | complex | np.number) and not isinstance(
                value, bool | np.bool_
            ):
                with np.errstate(over="ignore"):
                    return np.asarray(value).astype(native)[()]
        elif kind in "mM":
            # np.timedelta64 is an np.signedinteger: test the time types first.
            if isinstance(value, str | np.datetime64 | np.timedelta64):
                return np.asarray(value, dtype=native)[()]
            if _is_int(value):
                return _datetime_scalar(int(value), dt)
        elif kind == "S":
            if isinstance(value, str):
                value = value.encode("ascii")
            if isinstance(value, bytes):
                if len(value) > dt.itemsize:
                    raise MetadataError(
                        f"{where}{label}: {value!r} is longer than {dt.itemsize} bytes"
                    )
                return np.bytes_(value)
        elif kind == "U":
            if isinstance(value, str):
                if len(value) > dt.itemsize // 4:
                    raise MetadataError(
                        f"{where}{label}: {value!r} is longer than {dt.itemsize // 4} characters"
                    )
                return np.str_(value)
        elif kind == "V":
            if isinstance(value, bytes | np.void):
                raw = value.tobytes() if isinstance(value, np.void) else value
                if len(raw) != dt.itemsize:
                    raise MetadataError(
                        f"{where}{label}: {len(raw)} bytes given, data type "
                        f"{v2_dtype_json(dt)!r} has {dt.itemsize}"
                    )
                return np.frombuffer(raw, dtype=dt)[0]
            if dt.fields is not None and (isinstance(value, tuple) or _is_int(value)):
                return np.array([value], dtype=dt)[0]
    except (TypeError, ValueError, UnicodeEncodeError) as e:
        if isinstance(e, MetadataError):
            raise
        raise MetadataError(
            f"{where}{label}: cannot use {value!r} for data type {v2_dtype_json(dt)!r}: {e}"
        ) from None
    raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {v2_dtype_json(dt)!r}")


def v2_fill_value_bytes(value: Any, dtype: np.dtype[Any] | Any) -> bytes:
    """One element holding the fill value, as bytes for the Rust core.

    Numeric types (bool, ints, floats, complex): NATIVE byte order (the core byte-swaps
    chunks). Raw types (``S``, ``U``, ``V``, structured, ``M8``, ``m8``, ``r<N>`` for the core,
    which never swaps them): the bytes in the STORED byte order, exactly as in a chunk.

    A ``null`` fill value means "uninitialized" in the v2 spec (the contents of missing chunks
    are undefined). zarrox, like zarr-python 3.1 when it reads such arrays, uses the data
    type's default instead (:func:`default_v2_fill_value`): zeros, except NaT for M8/m8.
    Object types raise UnsupportedError.
    """
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise UnsupportedDataTypeError(
            f"unsupported data type {v2_dtype_json(dt)!r}: variable-length strings and objects "
            "are not supported yet"
        )
    if value is None:
        value = default_v2_fill_value(dt)
    if _is_raw(dt):
        if dt.kind == "V":
            return _raw_bytes(value, dt)
        return cast_values(value, dt).tobytes()
    return np.asarray(value, dtype=dt.newbyteorder("=")).tobytes()


# --------------------------------------------------------------------------------------------
# Codecs (numcodecs configurations)
# --------------------------------------------------------------------------------------------

#: numcodecs filters that transform values (array -> array); the others work on bytes
ARRAY_FILTER_IDS = frozenset(
    {"delta", "astype", "fixedscaleoffset", "quantize", "packbits", "bitround"}
)

_REQUIRED = object()
_DTYPE = object()  # a required numpy dtype member, written as dtype.str
_SAME_AS_DTYPE = object()  # defaults to the "dtype" member

#: numcodecs ``get_config()`` members (in numcodecs' order) and defaults, by codec id.
_NUMCODECS_DEFAULTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "zlib": (("level", 1),),
    "gzip": (("level", 1),),
    "bz2": (("level", 1),),
    "zstd": (("level", 0), ("checksum", False)),
    "blosc": (("cname", "lz4"), ("clevel", 5), ("shuffle", 1), ("blocksize", 0)),
    "lz4": (("acceleration", 1),),
    "lzma": (("format", 1), ("check", -1), ("preset", None), ("filters", None)),
    "crc32": (),
    "crc32c": (),
    "adler32": (),
    "fletcher32": (),
    "packbits": (),
    "shuffle": (("elementsize", 4),),
    "bitround": (("keepbits", _REQUIRED),),
    "delta": (("dtype", _DTYPE), ("astype", _SAME_AS_DTYPE)),
    "fixedscaleoffset": (
        ("scale", _REQUIRED),
        ("offset", _REQUIRED),
        ("dtype", _DTYPE),
        ("astype", _SAME_AS_DTYPE),
    ),
    "quantize": (("digits", _REQUIRED), ("dtype", _DTYPE), ("astype", _SAME_AS_DTYPE)),
    "astype": (("encode_dtype", _DTYPE), ("decode_dtype", _DTYPE)),
    "categorize": (("labels", _REQUIRED), ("dtype", _DTYPE), ("astype", "|u1")),
    # numcodecs' default is pickle.HIGHEST_PROTOCOL (5 on every Python zarrox runs on)
    "pickle": (("protocol", pickle.HIGHEST_PROTOCOL),),
}
_DTYPE_MEMBERS = frozenset({"dtype", "astype", "encode_dtype", "decode_dtype"})
_BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy")
_INT_RANGES: dict[tuple[str, str], tuple[int, int]] = {
    ("zlib", "level"): (-1, 9),
    ("gzip", "level"): (0, 9),
    ("bz2", "level"): (1, 9),
    ("zstd", "level"): (-131072, 22),
    ("blosc", "clevel"): (0, 9),
    ("blosc", "shuffle"): (-1, 2),
    ("blosc", "blocksize"): (0, 2**31 - 1),
    ("lz4", "acceleration"): (-(2**31), 2**31 - 1),
    ("shuffle", "elementsize"): (1, 2**31 - 1),
    ("bitround", "keepbits"): (0, 64),
    ("pickle", "protocol"): (-1, pickle.HIGHEST_PROTOCOL),
}


def _check_codec(value: object, where: str, label: str) -> dict[str, Any]:
    """Validate one stored numcodecs configuration; return a copy."""
    if not isinstance(value, Mapping):
        raise MetadataError(
            f'{where}{label}: a codec must be an object with an "id", got {value!r}'
        )
    codec_id = value.get("id")
    if not isinstance(codec_id, str) or not codec_id:
        raise MetadataError(f'{where}{label}.id: a codec needs an "id" string, got {dict(value)!r}')
    for key, (lo, hi) in _INT_RANGES.items():
        if key[0] == codec_id and key[1] in value:
            v = value[key[1]]
            if not _is_int(v) or not lo <= v <= hi:
                raise MetadataError(
                    f"{where}{label}.{key[1]}: {codec_id} {key[1]} must be an integer from "
                    f"{lo} to {hi}, got {v!r}"
                )
    if codec_id == "zstd" and "checksum" in value and not isinstance(value["checksum"], bool):
        raise MetadataError(
            f"{where}{label}.checksum: must be a boolean, got {value['checksum']!r}"
        )
    if codec_id == "blosc" and "cname" in value and value["cname"] not in _BLOSC_CNAMES:
        raise MetadataError(
            f"{where}{label}.cname: must be one of {list(_BLOSC_CNAMES)}, got {value['cname']!r}"
        )
    for member in _DTYPE_MEMBERS:
        if member in value and codec_id in _NUMCODECS_DEFAULTS:
            try:
                np.dtype(value[member])
            except (TypeError, ValueError):  # ValueError: odd lists, lone surrogates
                raise MetadataError(
                    f"{where}{label}.{member}: not a data type: {value[member]!r}"
                ) from None
    return copy_json(dict(value))


def _complete_codec(config: Mapping[str, Any], where: str, label: str) -> dict[str, Any]:
    """A numcodecs configuration with every default filled in, in numcodecs' member order
    (what ``numcodecs.get_codec(config).get_config()`` gives). Unknown ids are returned as
    given (``"id"`` first)."""
    cfg = _check_codec(config, where, label)
    codec_id = cfg["id"]
    spec = _NUMCODECS_DEFAULTS.get(codec_id)
    if spec is None:
        return {"id": codec_id, **{k: v for k, v in cfg.items() if k != "id"}}
    out: dict[str, Any] = {"id": codec_id}
    for name, default in spec:
        if name in cfg:
            value = cfg[name]
        elif default is _SAME_AS_DTYPE:
            value = out["dtype"]
        elif default is _REQUIRED or default is _DTYPE:
            raise MetadataError(f"{where}{label}: codec {codec_id!r} requires member {name!r}")
        else:
            value = copy_json(default)
        if name in _DTYPE_MEMBERS and value is not None:
            value = np.dtype(value).str
        out[name] = value
    # Members this zarrox does not know (a newer numcodecs?) are kept, after the known ones.
    out.update({k: v for k, v in cfg.items() if k not in out})
    return out


def normalize_v2_codec(
    codec: object, *, compressor: bool = False, path: str | None = None, label: str = "codec"
) -> dict[str, Any]:
    """A numcodecs codec object or config dict -> the config zarr-python 3.1 writes.

    Objects with ``get_config()`` are asked for their configuration; dicts of known codecs get
    numcodecs' defaults filled in (``{"id": "zlib"}`` -> ``{"id": "zlib", "level": 1}``). As
    zarr-python 3.1 does, a zstd *compressor* without checksum is written without
    ``"checksum"``.
    """
    where = _where(".zarray", path)
    get_config = getattr(codec, "get_config", None)
    if callable(get_config) and not isinstance(codec, Mapping):
        codec = get_config()
    out = _complete_codec(codec, where, label)  # type: ignore[arg-type]
    if compressor and out["id"] == "zstd" and out.get("checksum") is False:
        del out["checksum"]
    return out


def _blosc_typesize_1(codecs: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """Blosc takes its typesize from the item size of what it is given (numcodecs'
    default): the chunk's values for the first codec after the value filters, but
    plain bytes (typesize 1) after a bytes filter (shuffle, checksums, a compressor)
    or a vlen codec. Sets ``typesize`` 1 on the blosc codecs from index ``first``."""
    for codec in codecs[first:]:
        config = codec["configuration"]
        if codec["name"] == "numcodecs.blosc" and config.get("typesize") is None:
            config["typesize"] = 1
    return codecs


def _core_codec(config: Mapping[str, Any], where: str, label: str) -> dict[str, Any]:
    full = _complete_codec(config, where, label)
    return {
        "name": f"numcodecs.{full['id']}",
        "configuration": {k: v for k, v in full.items() if k != "id"},
    }


# --------------------------------------------------------------------------------------------
# JSON encoding
# --------------------------------------------------------------------------------------------


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps_v2(doc: Any, *, style: V2Style = "zarr3") -> bytes:
    """Encode a ``.zarray``/``.zgroup``/``.zattrs`` document as zarr-python writes it.

    ``"zarr3"``: zarr-python 3.1 (2-space indent, members in the given order); ``"zarr2"``:
    zarr-python 2.18 (4-space indent, keys sorted). Both escape non-ASCII characters and, as
    both writers do, write non-finite floats in attributes as bare ``NaN``/``Infinity``.
    """
    try:
        if style == "zarr3":
            return json.dumps(doc, indent=2, allow_nan=True, default=_json_default).encode()
        if style == "zarr2":
            return json.dumps(
                doc,
                indent=4,
                sort_keys=True,
                ensure_ascii=True,
                separators=(",", ": "),
                default=_json_default,
            ).encode("ascii")
    except (TypeError, ValueError) as e:
        raise MetadataError(f"cannot encode metadata as JSON: {e}") from None
    raise ValueError(f'style must be "zarr3" or "zarr2", got {style!r}')


def loads_v2(data: bytes | str, *, key: str = ".zarray", path: str = "") -> dict[str, Any]:
    """Decode a v2 metadata document (``key`` names it in errors); it must be a JSON object.

    Bare ``NaN``/``Infinity`` tokens are accepted (both zarr-python versions write them in
    attributes).
    """
    return load_json_object(data, _where(key, path))


# --------------------------------------------------------------------------------------------
# Member parsers
# --------------------------------------------------------------------------------------------


def _check_object(doc: object, where: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise MetadataError(f"{where}expected a JSON object, got {type(doc).__name__}")
    return doc


def _check_format(doc: Mapping[str, Any], where: str) -> None:
    if "zarr_format" not in doc:
        raise MetadataError(f"{where}missing member 'zarr_format'")
    fmt = doc["zarr_format"]
    if not _is_int(fmt) or fmt != 2:
        raise MetadataError(f"{where}zarr_format: expected 2, got {fmt!r}")


def _parse_attributes(value: object, path: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise MetadataError(f"{_where('.zattrs', path)}must be a JSON object, got {value!r}")
    return copy_json(dict(value))


def _parse_compressor(value: object, where: str) -> dict[str, Any] | None:
    if value is None:
        return None
    _complete_codec(value, where, "compressor")  # validation: required members, types
    return _check_codec(value, where, "compressor")


def _parse_filters(value: object, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"{where}filters: must be null or an array of codecs, got {value!r}")
    out = []
    for i, f in enumerate(value):
        _complete_codec(f, where, f"filters[{i}]")  # validation: required members, types
        out.append(_check_codec(f, where, f"filters[{i}]"))
    return out


# --------------------------------------------------------------------------------------------
# Array metadata
# --------------------------------------------------------------------------------------------

_ARRAY_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order")


@dataclass(eq=False)
class ArrayMetadataV2:
    """A Zarr v2 array: its ``.zarray`` (and ``.zattrs``) documents.

    ``dtype`` keeps the stored byte order (``np.dtype(">i4")``). ``compressor`` and ``filters``
    are numcodecs configurations as stored (``filters`` ``[]`` is kept apart from ``None``).
    ``fill_value`` is as :func:`parse_v2_fill_value` returns it (None for ``null``).
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
        where = _where(".zarray", path)
        doc = _check_object(zarray, where)
        _check_format(doc, where)
        for key in (*_ARRAY_REQUIRED, "filters"):
            if key not in doc:
                raise MetadataError(f"{where}missing member {key!r}")
        shape = _int_tuple(doc["shape"], "shape", where, positive=False)
        chunks = stored_chunk_sizes(doc["chunks"], "chunks", where, shape)
        if len(chunks) != len(shape):
            raise MetadataError(
                f"{where}chunks: {list(chunks)} has {len(chunks)} dimension(s), shape "
                f"{list(shape)} has {len(shape)}"
            )
        dtype = parse_v2_dtype(doc["dtype"], path=path)
        compressor = _parse_compressor(doc["compressor"], where)
        filters = _parse_filters(doc["filters"], where)
        fill_value = parse_v2_fill_value(doc["fill_value"], dtype, path=path)
        order = doc["order"]
        if order not in ("C", "F"):
            raise MetadataError(f'{where}order: must be "C" or "F", got {order!r}')
        sep = doc.get("dimension_separator")
        if sep is not None and sep not in (".", "/"):
            raise MetadataError(f'{where}dimension_separator: must be "." or "/", got {sep!r}')
        return cls(
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            compressor=compressor,
            filters=filters,
            fill_value=fill_value,
            order=order,
            dimension_separator=sep or ".",
            attributes=_parse_attributes(zattrs, path),
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
        where = _where(".zarray", path)
        dtype = from_zarr_python_dtype(dtype, zarr_format=2)
        dt = _user_dtype(dtype, where)
        vlen = _vlen_kind(dtype)
        if vlen is not None:
            # Strings and bytes are object arrays serialized by a vlen filter, as
            # zarr-python writes them; the fill value defaults to empty.
            given = _user_filters(filters, path) or []
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
        if len(chunks_t) != len(shape_t):
            raise MetadataError(
                f"{where}chunks {list(chunks_t)} and shape {list(shape_t)} differ in length"
            )
        order = "C" if order is None else order
        if order not in ("C", "F"):
            raise MetadataError(f'{where}order: must be "C" or "F", got {order!r}')
        sep = "." if dimension_separator is None else dimension_separator
        if sep not in (".", "/"):
            raise MetadataError(f'{where}dimension_separator: must be "." or "/", got {sep!r}')
        fill = (
            default_v2_fill_value(dt)
            if fill_value is DEFAULT_FILL
            else cast_v2_fill_value(fill_value, dt, path=path)
        )
        meta = cls(
            shape=shape_t,
            chunks=chunks_t,
            dtype=dt,
            compressor=_user_compressor(compressor, path),
            filters=_user_filters(filters, path),
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
            "dtype": v2_dtype_json(self.dtype),
            "fill_value": v2_fill_value_json(self.fill_value, self.dtype),
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

    def to_core_json(self) -> dict[str, Any]:
        """The normalized description the Rust core consumes (fill bytes: :meth:`fill_bytes`).

        ``{"shape", "chunk_shape", "data_type", "codecs", "chunk_key_encoding": {"name": "v2",
        "separator"}}``. The codec chain: ``transpose`` (order reversed) for ``"F"`` order
        with ndim > 1; one ``numcodecs.<id>`` per filter; ``bytes`` (``endian`` "big" for
        big-endian dtypes, else "little"; after value filters, the byte order of the last
        filter's output type); ``numcodecs.<id>`` for the compressor. numcodecs
        configurations lose ``"id"`` and get numcodecs' defaults filled in (for the codecs
        zarrox knows). Object arrays: ``transpose`` for ``"F"`` order as above, the
        ``vlen-utf8`` / ``vlen-bytes`` filter, the filters after it and the compressor.
        """
        where = ""  # the configurations were validated when the metadata was made
        if self.pickle_stage() is not None:
            return self._without_pickle().to_core_json()
        if self.dtype.hasobject:
            return self._object_core_json()
        data_type = v2_core_data_type(self.dtype)
        codecs: list[dict[str, Any]] = []
        if self.order == "F" and self.ndim > 1:
            codecs.append(
                {"name": "transpose", "configuration": {"order": list(range(self.ndim))[::-1]}}
            )
        # v2 filters run in order on the chunk; those that work on values come
        # before the bytes serializer, those that work on bytes after it.
        # numcodecs stores a value filter's output in the byte order of its output
        # type ("astype", "encode_dtype"), so the last such type decides the stored
        # byte order, not the array's.
        after_bytes: list[dict[str, Any]] = []
        byte_order = _byte_order(self.dtype)
        for i, f in enumerate(self.filters or []):
            codec = _core_codec(f, where, f"filters[{i}]")
            if f.get("id") in ARRAY_FILTER_IDS:
                if after_bytes:
                    raise UnsupportedError(
                        f"{_where('.zarray', '')}filter {f.get('id')!r} works on values but "
                        f"follows a filter that works on bytes"
                    )
                byte_order = _filter_byte_order(codec, byte_order, i)
                codecs.append(codec)
            else:
                after_bytes.append(codec)
        endian = "big" if byte_order == ">" else "little"
        codecs.append({"name": "bytes", "configuration": {"endian": endian}})
        if self.compressor is not None:
            after_bytes.append(_core_codec(self.compressor, where, "compressor"))
        codecs.extend(_blosc_typesize_1(after_bytes, first=1))
        return {
            "shape": list(self.shape),
            "chunk_shape": list(self.chunks),
            "data_type": data_type,
            "codecs": codecs,
            "chunk_key_encoding": {"name": "v2", "separator": self.dimension_separator},
        }

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
            raise UnsupportedError(
                f"{_where('.zarray', '')}the pickle codec is supported as the compressor or "
                f"the last filter, not before {[f.get('id') for f in filters]!r} and "
                f"compressor {self.compressor!r}"
            )
        before_ids = [f.get("id") for f in before]
        if not self.dtype.hasobject and not before_ids:
            pickles: Literal["array", "bytearray"] = "array"
        elif self.dtype.hasobject and before_ids in (["vlen-utf8"], ["vlen-bytes"]):
            pickles = "bytearray"
        else:
            raise UnsupportedError(
                f"{_where('.zarray', '')}the pickle codec is supported after no filter, or "
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
        raise UnsupportedError(
            f"{_where('.zarray', '')}object arrays are supported with the vlen-utf8 or "
            f"vlen-bytes codec, this one has filters {ids}"
        )

    def _object_core_json(self) -> dict[str, Any]:
        """The core description of an object array of strings or bytes: the vlen
        codec serializes chunks; filters after it and the compressor follow."""
        pos, data_type = self._vlen_filter()
        filters = self.filters or []
        if pos > 0:
            raise UnsupportedError(
                f"{_where('.zarray', '')}filters before {filters[pos]['id']!r} in an object "
                "array are not supported"
            )
        codecs: list[dict[str, Any]] = []
        if self.order == "F" and self.ndim > 1:
            # The vlen codec serializes the chunk's elements in Fortran order
            # (zarr-python 2.18 and 3.1): the transpose codec reorders them first.
            codecs.append(
                {"name": "transpose", "configuration": {"order": list(range(self.ndim))[::-1]}}
            )
        codecs.append({"name": str(filters[pos]["id"])})
        after: list[dict[str, Any]] = []
        for i, f in enumerate(filters[pos + 1 :], start=pos + 1):
            after.append(_core_codec(f, "", f"filters[{i}]"))
        if self.compressor is not None:
            after.append(_core_codec(self.compressor, "", "compressor"))
        codecs.extend(_blosc_typesize_1(after, first=0))
        return {
            "shape": list(self.shape),
            "chunk_shape": list(self.chunks),
            "data_type": data_type,
            "codecs": codecs,
            "chunk_key_encoding": {"name": "v2", "separator": self.dimension_separator},
        }

    def fill_bytes(self) -> bytes:
        """The fill value as one element's bytes (see :func:`v2_fill_value_bytes`);
        for object arrays of strings or bytes, the fill value's bytes (empty when
        it is null or not a string)."""
        if self.dtype.hasobject:
            value = self.fill_value
            if isinstance(value, str):
                return value.encode("utf-8")
            if isinstance(value, bytes):
                return value
            return b""
        return v2_fill_value_bytes(self.fill_value, self.dtype)

    # ---- helpers -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self.chunks

    @property
    def data_type(self) -> str:
        """The v3 core data type name (see :func:`v2_core_data_type`); ``string`` or
        ``bytes`` for object arrays serialized by vlen-utf8 / vlen-bytes."""
        if self.dtype.hasobject:
            return self._vlen_filter()[1]
        return v2_core_data_type(self.dtype)

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """Store key (relative to the array) of the chunk at grid index ``coords``."""
        return self.dimension_separator.join(str(int(c)) for c in coords) if len(coords) else "0"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV2):
            return NotImplemented
        return (
            self.dtype == other.dtype
            and self.to_json() == other.to_json()
            and self.attributes == other.attributes
        )

    __hash__ = None  # type: ignore[assignment]


def _vlen_kind(dtype: object) -> str | None:
    """'vlen-utf8' for str-like dtypes, 'vlen-bytes' for bytes, None otherwise."""
    if dtype is str or isinstance(dtype, np.dtypes.StringDType):
        return "vlen-utf8"
    if dtype is bytes:
        return "vlen-bytes"
    if dtype is object or (isinstance(dtype, str) and dtype in ("O", "|O", "object")):
        return "vlen-utf8"
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return "vlen-utf8"
    return None


def _user_dtype(dtype: object, where: str) -> np.dtype[Any]:
    if _vlen_kind(dtype) is not None:
        return np.dtype("O")
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except (TypeError, ValueError) as e:
        if not isinstance(dtype, list):
            raise UnsupportedDataTypeError(f"{where}unsupported data type {dtype!r}: {e}") from None
        dt = _parse_dtype(dtype, where, "dtype")  # a v2 field list (lists, not tuples)
    if dt.hasobject or (dt.kind in "SU" and dt.itemsize == 0):
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {dtype!r}: variable-length strings and objects are "
            "not supported yet"
        )
    # Round-trip through the JSON form: only what a .zarray can hold gets through.
    return _parse_dtype(v2_dtype_json(dt), where, "dtype")


def _user_compressor(compressor: object, path: str) -> dict[str, Any] | None:
    where = _where(".zarray", path)
    if isinstance(compressor, str) and compressor == "auto":
        return dict(DEFAULT_COMPRESSOR_V2)
    if compressor is None:
        return None
    if isinstance(compressor, list | tuple):
        if len(compressor) == 0:
            return None
        if len(compressor) > 1:
            raise MetadataError(
                f"{where}compressor: a v2 array has at most one compressor, got {len(compressor)}"
            )
        compressor = compressor[0]
    return normalize_v2_codec(compressor, compressor=True, path=path, label="compressor")


def _user_filters(filters: object, path: str) -> list[dict[str, Any]] | None:
    if filters is None or (isinstance(filters, str) and filters == "auto"):
        return None
    items = list(filters) if isinstance(filters, list | tuple) else [filters]
    out = [normalize_v2_codec(f, path=path, label=f"filters[{i}]") for i, f in enumerate(items)]
    return out or None


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
        where = _where(".zgroup", path)
        doc = _check_object(zgroup, where)
        _check_format(doc, where)
        consolidated = doc.get("consolidated_metadata")
        if consolidated is not None and not isinstance(consolidated, Mapping):
            raise MetadataError(
                f"{where}consolidated_metadata: must be an object, got {consolidated!r}"
            )
        return cls(
            attributes=_parse_attributes(zattrs, path),
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
