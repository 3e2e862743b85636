"""Zarr v3 data types: the core types and the extension types zarr-python 3.1 and tensorstore write.

A :class:`DataType` is one parsed ``data_type`` member. It knows its numpy dtype (native byte
order), how its fill value is written in JSON (reading, writing and casting user values), the
bytes of one element holding the fill value, and the descriptor the Rust core consumes.

Names as the registry (https://github.com/zarr-developers/zarr-extensions) and the writers spell
them:

- core: ``bool``, ``int8`` .. ``uint64``, ``float16/32/64``, ``complex64/128``, ``r<N>``;
- ml_dtypes types (imported lazily; ``pip install zarrox[ml]``): ``bfloat16``, ``float8_*``,
  ``float4_e2m1fn``, ``float6_*``, ``int2``, ``int4``, ``uint2``, ``uint4``;
- complex types: ``complex_float32``/``complex_float64`` (aliases of complex64/complex128),
  ``complex_float16``, ``complex_bfloat16``, ``complex_float8_*``, ``complex_float4_e2m1fn``,
  ``complex_float6_*``; numpy has no such complex types, so all but the two aliases map to a
  structured dtype ``[("real", T), ("imag", T)]``;
- ``numpy.datetime64`` / ``numpy.timedelta64`` (configuration ``unit``, ``scale_factor``);
- ``fixed_length_utf32`` (numpy ``U``), ``null_terminated_bytes`` (numpy ``S``), ``raw_bytes``
  (numpy ``V``), each with configuration ``length_bytes``;
- ``struct`` (fields as objects, fill value an object) and the legacy ``structured`` that
  zarr-python 3.1 writes (fields as ``[name, data_type]`` pairs, fill value base64);
- variable-length ``string`` (numpy StringDType, object before numpy 2) and ``bytes`` (object;
  zarr-python 3.1 spells it ``variable_length_bytes``).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError, UnsupportedError
from zarrox.metadata._checks import is_int as _is_int
from zarrox.metadata._checks import is_text

__all__ = [
    "CORE_INTS",
    "DataType",
    "FloatFormat",
    "data_type_from_numpy",
    "cast_values",
    "native_dtype",
    "parse_data_type_json",
]

Category = Literal[
    "bool",
    "int",
    "small_int",
    "float",
    "complex",
    "raw",
    "raw_bytes",
    "null_terminated_bytes",
    "fixed_length_utf32",
    "datetime",
    "struct",
    "string",
    "bytes",
]


def _where(path: str | None) -> str:
    """The prefix of every error message: ``"zarr.json at 'a/b': "`` (empty if no path)."""
    return "" if path is None else f"zarr.json at {path!r}: "


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatFormat:
    """A floating-point format: the core ones, and the ml_dtypes ones."""

    name: str
    size: int  #: bytes per value in memory
    bits: int  #: bits of the encoding (4 and 6 for the sub-byte formats)
    nan: int | None  #: the bits "NaN" denotes; None when the format has no NaN
    has_inf: bool
    core: str | None  #: format named in the core descriptor's "floats" (None: small float)

    @property
    def ml(self) -> bool:
        return self.name not in ("float16", "float32", "float64")


_FLOAT_FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("float16", 2, 16, 0x7E00, True, "float16"),
        FloatFormat("float32", 4, 32, 0x7FC00000, True, "float32"),
        FloatFormat("float64", 8, 64, 0x7FF8000000000000, True, "float64"),
        FloatFormat("bfloat16", 2, 16, 0x7FC0, True, "bfloat16"),
        FloatFormat("float8_e3m4", 1, 8, 0x78, True, None),
        FloatFormat("float8_e4m3", 1, 8, 0x7C, True, None),
        # Not in the registry; tensorstore writes it. NaN is 0x7f/0xff; "NaN" is ml_dtypes' 0x7f.
        FloatFormat("float8_e4m3fn", 1, 8, 0x7F, False, None),
        FloatFormat("float8_e4m3fnuz", 1, 8, 0x80, False, None),
        FloatFormat("float8_e4m3b11fnuz", 1, 8, 0x80, False, None),
        FloatFormat("float8_e5m2", 1, 8, 0x7E, True, None),
        FloatFormat("float8_e5m2fnuz", 1, 8, 0x80, False, None),
        FloatFormat("float8_e8m0fnu", 1, 8, 0xFF, False, None),
        FloatFormat("float4_e2m1fn", 1, 4, None, False, None),
        FloatFormat("float6_e2m3fn", 1, 6, None, False, None),
        FloatFormat("float6_e3m2fn", 1, 6, None, False, None),
    )
}

#: name -> (bits, min, max)
_SMALL_INTS: dict[str, tuple[int, int, int]] = {
    "int2": (2, -2, 1),
    "int4": (4, -8, 7),
    "uint2": (2, 0, 3),
    "uint4": (4, 0, 15),
}
#: the core integer types
CORE_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

#: complex data type name -> component float format
_COMPLEX: dict[str, str] = {
    "complex64": "float32",
    "complex128": "float64",
    "complex_float32": "float32",
    "complex_float64": "float64",
    "complex_float16": "float16",
    "complex_bfloat16": "bfloat16",
    **{
        f"complex_{n}": n
        for n in (
            "float8_e3m4",
            "float8_e4m3",
            "float8_e4m3fnuz",
            "float8_e4m3b11fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn",
            "float6_e2m3fn",
            "float6_e3m2fn",
        )
    },
}
#: the complex types numpy has
_NUMPY_COMPLEX = {"complex64": "complex64", "complex128": "complex128"}
_COMPLEX_ALIASES = {"complex_float32": "complex64", "complex_float64": "complex128"}

_ML_TYPES = frozenset([n for n, f in _FLOAT_FORMATS.items() if f.ml] + list(_SMALL_INTS))
_TIME_TYPES = {"numpy.datetime64": "M8", "numpy.timedelta64": "m8"}
_TIME_UNITS = (
    "Y",
    "M",
    "W",
    "D",
    "h",
    "m",
    "s",
    "ms",
    "us",
    "μs",
    "ns",
    "ps",
    "fs",
    "as",
    "generic",
)
_MAX_SCALE_FACTOR = 2**31 - 1
_NAT = -(2**63)
_LENGTH_TYPES = ("fixed_length_utf32", "null_terminated_bytes", "raw_bytes")
_STRUCT_TYPES = ("struct", "structured")
#: the spellings of the variable-length bytes type (zarr-python 3.1 writes the second)
_BYTES_NAMES = ("bytes", "variable_length_bytes")
_NAMED_CORE = ("bool", *CORE_INTS, "float16", "float32", "float64", "complex64", "complex128")
_RAW_RE = re.compile(r"r([0-9]+)")
_UINT_FOR_SIZE = {
    1: np.dtype("uint8"),
    2: np.dtype("uint16"),
    4: np.dtype("uint32"),
    8: np.dtype("uint64"),
}

#: data types that take no configuration
SIMPLE_TYPES: frozenset[str] = frozenset(
    [*_NAMED_CORE, *_ML_TYPES, *_COMPLEX, "string", *_BYTES_NAMES]
)
#: data types that require a configuration
CONFIGURED_TYPES: frozenset[str] = frozenset([*_TIME_TYPES, *_LENGTH_TYPES, *_STRUCT_TYPES])


def _ml_dtypes(name: str, where: str) -> Any:
    try:
        import ml_dtypes
    except ImportError:
        raise UnsupportedError(
            f"{where}data type {name!r} needs the ml_dtypes package: pip install zarrox[ml]"
        ) from None
    return ml_dtypes


def _ml_dtype(name: str, where: str) -> np.dtype[Any]:
    mod = _ml_dtypes(name, where)
    t = getattr(mod, name, None)
    if t is None:
        raise UnsupportedError(
            f"{where}data type {name!r} needs a newer ml_dtypes (installed: "
            f"{getattr(mod, '__version__', '?')}): pip install -U zarrox[ml]"
        )
    return np.dtype(t)


def _float_dtype(fmt: FloatFormat, where: str) -> np.dtype[Any]:
    return _ml_dtype(fmt.name, where) if fmt.ml else np.dtype(fmt.name)


def _string_dtype() -> np.dtype[Any]:
    cls = getattr(np.dtypes, "StringDType", None)
    return np.dtype(cls()) if cls is not None else np.dtype(object)


def native_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """``dtype`` in native byte order (structured dtypes field by field)."""
    if dtype.kind in "OT":
        return dtype
    try:
        return dtype.newbyteorder("=")
    except (TypeError, ValueError):
        return dtype


def cast_values(values: Any, dtype: np.dtype[Any] | Any) -> np.ndarray:
    """``np.asarray(values, dtype)``, except for datetime64/timedelta64 of the same unit and
    scale in another byte order, which are byte-swapped through int64: numpy does not swap
    them when casting generic-unit times (``>m8[2generic]`` to ``<m8[2generic]``)."""
    dt = np.dtype(dtype)
    arr = np.asarray(values)
    src = arr.dtype
    if (
        dt.kind in "mM"
        and src.kind == dt.kind
        and src != dt
        and np.datetime_data(src) == np.datetime_data(dt)
    ):
        ints = arr.view(src.str[0] + "i8").astype(dt.str[0] + "i8")
        return ints.view(dt)
    return np.asarray(arr, dtype=dt)


def _b64decode(value: str, where: str, label: str, what: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MetadataError(f"{where}{label}: {value!r} is not valid base64 ({what})") from None


def _b64encode(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


# --------------------------------------------------------------------------------------------
# Floats
# --------------------------------------------------------------------------------------------


def _from_bits(bits: int, fmt: FloatFormat, dt: np.dtype[Any]) -> np.generic:
    return np.array(bits, dtype=_UINT_FOR_SIZE[fmt.size]).view(dt)[()]  # type: ignore[no-any-return]


def _to_bits(x: object, fmt: FloatFormat, dt: np.dtype[Any]) -> int:
    return int(np.asarray(x, dtype=dt).view(_UINT_FOR_SIZE[fmt.size]))


def _parse_float(
    value: object, fmt: FloatFormat, dt: np.dtype[Any], where: str, label: str
) -> np.generic:
    """One float per the spec's JSON forms -> numpy scalar of ``dt`` (bit-exact for hex)."""
    name = fmt.name
    if isinstance(value, str):
        if value == "NaN":
            if fmt.nan is None:
                raise MetadataError(f'{where}{label}: "NaN" is not a value of {name} (no NaN)')
            return _from_bits(fmt.nan, fmt, dt)
        if value in ("Infinity", "-Infinity"):
            if not fmt.has_inf:
                raise MetadataError(
                    f'{where}{label}: "{value}" is not a value of {name} (no infinities)'
                )
            return dt.type(math.inf if value == "Infinity" else -math.inf)  # type: ignore[no-any-return]
        if re.fullmatch(r"0x[0-9a-fA-F]+", value):
            ndigits = 2 * fmt.size
            if len(value) != 2 + ndigits:
                raise MetadataError(
                    f"{where}{label}: hex float {value!r} must have exactly {ndigits} hex "
                    f"digits for {name}"
                )
            bits = int(value, 16)
            if bits >= 1 << fmt.bits:
                raise MetadataError(
                    f"{where}{label}: hex float {value!r} has more than the {fmt.bits} bits "
                    f"of {name}"
                )
            return _from_bits(bits, fmt, dt)
        raise MetadataError(
            f"{where}{label}: {value!r} is not a valid float fill value (use a number, "
            f'"NaN", "Infinity", "-Infinity" or a {2 * fmt.size}-digit hex string "0x...")'
        )
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise MetadataError(
            f"{where}{label}: expected a number or a special float string for {name}, got {value!r}"
        )
    if isinstance(value, np.complexfloating):
        raise MetadataError(f"{where}{label}: expected a real number, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an integer too large for float64
        as_float = math.inf if value > 0 else -math.inf  # type: ignore[operator]
    if not fmt.ml:
        with np.errstate(over="ignore"):
            return dt.type(as_float)  # type: ignore[no-any-return]
    return _round_small_float(as_float, fmt, dt, where, label)


def _round_small_float(
    v: float, fmt: FloatFormat, dt: np.dtype[Any], where: str, label: str
) -> np.generic:
    """A float64 -> ``fmt`` rounded to nearest, rejecting what the format cannot hold."""
    name = fmt.name
    if math.isnan(v):
        if fmt.nan is None:
            raise MetadataError(f"{where}{label}: NaN is not a value of {name} (no NaN)")
        return _from_bits(fmt.nan, fmt, dt)
    if math.isinf(v) and not fmt.has_inf:
        raise MetadataError(f"{where}{label}: {v} is not a value of {name} (no infinities)")
    if name == "float8_e8m0fnu":
        if v < 0:
            raise MetadataError(f"{where}{label}: {v} is out of range for {name} (unsigned)")
        if v == 0:
            # No zero: 0.0 denotes the smallest value, 2**-127 (bits 0x00), which is what
            # tensorstore writes 0.0 for.
            return _from_bits(0, fmt, dt)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.array(v, dtype=np.float64).astype(dt)[()]
    finite = bool(np.isfinite(out))
    if math.isfinite(v) and not fmt.has_inf and not finite:
        raise MetadataError(f"{where}{label}: {v} is out of range for {name}")
    if fmt.nan is None and abs(v) > float(_ml_dtypes(name, where).finfo(dt).max):
        raise MetadataError(f"{where}{label}: {v} is out of range for {name}")
    return out  # type: ignore[no-any-return]


def _float_to_json(x: object, fmt: FloatFormat, dt: np.dtype[Any]) -> float | str:
    bits = _to_bits(x, fmt, dt)
    value = np.asarray(x, dtype=dt)[()]
    if fmt.nan is not None and np.isnan(value):
        if bits == fmt.nan:
            return "NaN"
        # Any other NaN keeps its bits (sign and payload): zarr-python would write "NaN".
        return f"0x{bits:0{2 * fmt.size}x}"
    if np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if fmt.name == "float8_e8m0fnu" and bits == 0:
        return 0.0  # see _round_small_float
    return float(value)


# --------------------------------------------------------------------------------------------
# DataType
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DataType:
    """One parsed v3 data type.

    ``name`` is the name as written (``"structured"``, ``"variable_length_bytes"`` and
    ``"complex_float32"`` stay as they are); ``json`` the normalized ``data_type`` member
    written back (a string for types without configuration, else ``{"name", "configuration"}``);
    ``dtype`` the numpy dtype, native byte order.
    """

    name: str
    json: Any
    dtype: np.dtype[Any]
    category: Category
    float_format: FloatFormat | None = None
    fields: tuple[tuple[str, DataType], ...] = ()

    # ---- shape of an element ---------------------------------------------------------------

    @property
    def is_variable_length(self) -> bool:
        return self.category in ("string", "bytes")

    @property
    def core_name(self) -> str | None:
        """The Rust core's name for a core type (aliases resolved), else None."""
        if self.name in _NAMED_CORE or self.category == "raw":
            return self.name
        return _COMPLEX_ALIASES.get(self.name)

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        """``(swap, floats)`` of one element: byte-order components ``[offset, length]`` and
        IEEE-like float components ``[offset, format]``."""
        c = self.category
        size = self.dtype.itemsize
        if c == "int":
            return ([[0, size]] if size > 1 else []), []
        if c in ("float", "complex"):
            fmt = self.float_format
            assert fmt is not None
            offsets = (0,) if c == "float" else (0, fmt.size)
            swap = [[o, fmt.size] for o in offsets] if fmt.size > 1 else []
            floats: list[list[Any]] = [[o, fmt.core] for o in offsets] if fmt.core else []
            return swap, floats
        if c == "datetime":
            return [[0, 8]], []
        if c == "fixed_length_utf32":
            return [[4 * i, 4] for i in range(size // 4)], []
        if c == "struct":
            swap, floats = [], []
            offset = 0
            for _, sub in self.fields:
                s, f = sub.components()
                swap += [[offset + o, n] for o, n in s]
                floats += [[offset + o, fmt_] for o, fmt_ in f]
                offset += sub.dtype.itemsize
            return swap, floats
        return [], []  # bool, small ints, raw bytes, fixed bytes

    @property
    def has_byte_order(self) -> bool:
        """Whether the bytes codec's ``endian`` applies (some component is multi-byte)."""
        return not self.is_variable_length and bool(self.components()[0])

    def core_json(self) -> str | dict[str, Any]:
        """``data_type`` as the Rust core takes it (see ``ArrayMetadataV3.to_core_json``)."""
        core = self.core_name
        if core is not None:
            return core
        if self.category == "string":
            return "string"
        if self.category == "bytes":
            return "bytes"
        swap, floats = self.components()
        return {"size": self.dtype.itemsize, "swap": swap, "floats": floats}

    def packbits_layout(self) -> tuple[int, int] | None:
        """``(bits per component, components)`` for the packbits codec; None if unsupported."""
        c = self.category
        if c == "bool":
            return 1, 1
        if c == "small_int":
            return _SMALL_INTS[self.name][0], 1
        if c == "int":
            return 8 * self.dtype.itemsize, 1
        if c in ("float", "complex"):
            assert self.float_format is not None
            return self.float_format.bits, 1 if c == "float" else 2
        return None

    # ---- fill values -----------------------------------------------------------------------

    def default_fill(self) -> Any:
        """The fill value zarr-python records when none is given."""
        c = self.category
        if c == "string":
            return ""
        if c == "bytes":
            return b""
        if c == "datetime":
            return np.array(_NAT, dtype=np.int64).view(self.dtype)[()]
        if c == "struct":
            # zarr-python 3.4: every field zero (no bytes for strings and raw bytes, a zero
            # count for datetimes), i.e. an element of zero bytes
            return np.zeros(1, dtype=self.dtype)[0]
        return np.zeros((), dtype=self.dtype)[()]

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        """The JSON fill value -> numpy scalar of :attr:`dtype` (``str``/``bytes`` for the
        variable-length types)."""
        c = self.category
        dt = self.dtype
        if c == "bool":
            if isinstance(value, bool | np.bool_):
                return np.bool_(value)
            raise MetadataError(f"{where}{label}: expected true or false for bool, got {value!r}")
        if c in ("int", "small_int"):
            if isinstance(value, float) and value.is_integer():
                # The spec asks for an integer; zarr-python and tensorstore also read
                # 1.0 as 1, and so does zarrox (1.5 stays an error).
                value = int(value)
            if not _is_int(value):
                raise MetadataError(
                    f"{where}{label}: expected an integer for {self.name}, got {value!r}"
                )
            if c == "int":
                info = np.iinfo(dt)
                lo, hi = int(info.min), int(info.max)
            else:
                _, lo, hi = _SMALL_INTS[self.name]
            if not lo <= int(value) <= hi:  # type: ignore[call-overload]
                raise MetadataError(
                    f"{where}{label}: {value} is out of range for {self.name} [{lo}, {hi}]"
                )
            if c == "int":
                return np.array(int(value), dtype=dt)[()]  # type: ignore[call-overload]
            return np.array(int(value), dtype=np.int64).astype(dt)[()]  # type: ignore[call-overload]
        if c == "float":
            assert self.float_format is not None
            return _parse_float(value, self.float_format, dt, where, label)
        if c == "complex":
            return self._parse_complex(value, where, label)
        if c in ("raw", "raw_bytes"):
            return self._parse_raw(value, where, label)
        if c == "null_terminated_bytes":
            if not isinstance(value, str):
                raise MetadataError(
                    f"{where}{label}: expected a base64 string for {self.name}, got {value!r}"
                )
            raw = _b64decode(value, where, label, self.name)
            if len(raw) > dt.itemsize:
                raise MetadataError(
                    f"{where}{label}: {len(raw)} bytes do not fit {self.name} of "
                    f"length_bytes {dt.itemsize}"
                )
            return np.array(raw, dtype=dt)[()]
        if c == "fixed_length_utf32":
            if not isinstance(value, str):
                raise MetadataError(
                    f"{where}{label}: expected a string for {self.name}, got {value!r}"
                )
            if len(value) > dt.itemsize // 4:
                raise MetadataError(
                    f"{where}{label}: {value!r} has more than the {dt.itemsize // 4} code "
                    f"point(s) of {self.name} with length_bytes {dt.itemsize}"
                )
            return np.array(value, dtype=dt)[()]
        if c == "datetime":
            if value == "NaT":
                return np.array(_NAT, dtype=np.int64).view(dt)[()]
            if not _is_int(value) or not _NAT <= int(value) < 2**63:  # type: ignore[call-overload]
                raise MetadataError(
                    f'{where}{label}: expected an int64 integer or "NaT" for {self.name}, '
                    f"got {value!r}"
                )
            return np.array(int(value), dtype=np.int64).view(dt)[()]  # type: ignore[call-overload]
        if c == "struct":
            return self._parse_struct(value, where, label)
        if c == "string":
            if not is_text(value):  # lone surrogates cannot be stored as UTF-8
                raise MetadataError(
                    f"{where}{label}: expected a string (of Unicode characters) for string, "
                    f"got {value!r}"
                )
            return value
        # bytes
        if isinstance(value, str):
            return _b64decode(value, where, label, self.name)
        if (
            isinstance(value, Sequence)
            and not isinstance(value, bytes)
            and all(_is_int(b) and 0 <= b <= 255 for b in value)
        ):
            return bytes(int(b) for b in value)
        raise MetadataError(
            f"{where}{label}: expected a base64 string or an array of integers in [0, 255] "
            f"for {self.name}, got {value!r}"
        )

    def _parse_complex(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
            raise MetadataError(
                f"{where}{label}: expected a two-element array [real, imag] for {self.name}, "
                f"got {value!r}"
            )
        fmt = self.float_format
        assert fmt is not None
        cdt = _float_dtype(fmt, where)
        re_ = _parse_float(value[0], fmt, cdt, where, f"{label}[0]")
        im_ = _parse_float(value[1], fmt, cdt, where, f"{label}[1]")
        raw = np.array([re_, im_], dtype=cdt).tobytes()
        return np.frombuffer(raw, dtype=self.dtype)[0]

    def _parse_raw(self, value: object, where: str, label: str) -> Any:
        n = self.dtype.itemsize
        raw: bytes | None = None
        if isinstance(value, str):
            # base64: zarr-python's raw_bytes, and tensorstore's r<N>
            raw = _b64decode(value, where, label, self.name)
        elif (
            isinstance(value, Sequence)
            and not isinstance(value, bytes)
            and all(_is_int(b) and 0 <= b <= 255 for b in value)
        ):
            raw = bytes(int(b) for b in value)
        if raw is None or len(raw) != n:
            raise MetadataError(
                f"{where}{label}: expected an array of {n} integers in [0, 255] (or the "
                f"base64 of {n} bytes) for {self.name}, got {value!r}"
            )
        return np.frombuffer(raw, dtype=self.dtype)[0]

    def _parse_struct(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        if isinstance(value, str):
            # legacy: the base64 of the packed little-endian bytes
            raw = _b64decode(value, where, label, self.name)
            if len(raw) != dt.itemsize:
                raise MetadataError(
                    f"{where}{label}: base64 fill value has {len(raw)} bytes, {self.name} has "
                    f"{dt.itemsize}"
                )
            return np.frombuffer(raw, dtype=_little(dt)).astype(dt)[0]
        if not isinstance(value, Mapping):
            raise MetadataError(
                f"{where}{label}: expected an object with a member per field (or a base64 "
                f"string) for {self.name}, got {value!r}"
            )
        names = [n for n, _ in self.fields]
        missing = [n for n in names if n not in value]
        extra = sorted(str(k) for k in value if k not in names)
        if missing or extra:
            raise MetadataError(
                f"{where}{label}: the fill value must have exactly the fields {names}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {extra}" if extra else "")
            )
        out = np.zeros((), dtype=dt)
        for name, sub in self.fields:
            out[name] = sub.parse_fill(value[name], where, f"{label}.{name}")
        return out[()]

    def fill_to_json(self, scalar: Any) -> Any:
        """A fill value as returned by :meth:`parse_fill`/:meth:`cast_fill` -> its JSON form,
        as zarr-python 3.1 (or, for the types it lacks, tensorstore) writes it."""
        c = self.category
        dt = self.dtype
        if c == "bool":
            return bool(scalar)
        if c == "int":
            return int(scalar)
        if c == "small_int":
            return int(np.asarray(scalar, dtype=dt).astype(np.int64))
        if c == "float":
            assert self.float_format is not None
            return _float_to_json(scalar, self.float_format, dt)
        if c == "complex":
            fmt = self.float_format
            assert fmt is not None
            cdt = _float_dtype(fmt, "")
            parts = np.frombuffer(np.asarray(scalar, dtype=dt).tobytes(), dtype=cdt)
            return [_float_to_json(parts[0], fmt, cdt), _float_to_json(parts[1], fmt, cdt)]
        if c == "raw":
            return list(np.asarray(scalar, dtype=dt).tobytes())
        if c == "raw_bytes":
            return _b64encode(np.asarray(scalar, dtype=dt).tobytes())
        if c == "null_terminated_bytes":
            return _b64encode(bytes(np.asarray(scalar, dtype=dt)[()]))
        if c == "fixed_length_utf32":
            return str(np.asarray(scalar, dtype=dt)[()])
        if c == "datetime":
            return int(np.asarray(scalar, dtype=dt).view(np.int64))
        if c == "struct":
            value = np.asarray(scalar, dtype=dt)
            if self.name == "structured":
                return _b64encode(value.astype(_little(dt)).tobytes())
            return {name: sub.fill_to_json(value[name][()]) for name, sub in self.fields}
        if c == "string":
            return str(scalar)
        return _b64encode(bytes(scalar))

    def cast_fill(self, value: object, where: str = "") -> Any:
        """A user-given fill value -> what :meth:`parse_fill` returns; ``None`` gives
        :meth:`default_fill`. Accepts the JSON forms, numpy scalars (kept bit-exact when
        already of :attr:`dtype`) and Python values."""
        c = self.category
        dt = self.dtype
        label = "fill_value"
        if value is None:
            return self.default_fill()
        if not self.is_variable_length and isinstance(value, np.generic):
            if native_dtype(value.dtype) == dt:
                return np.asarray(value).astype(dt)[()]
        if c in ("string", "bytes"):
            if c == "string" and is_text(value):
                return str(value)
            if c == "bytes" and isinstance(value, bytes | bytearray):
                return bytes(value)
            if c == "bytes" and isinstance(value, str):
                return value.encode("utf-8")  # the text, as zarr-python; never base64
            if c == "bytes" and isinstance(value, list | tuple):
                return self.parse_fill(value, where)
            raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {self.name}")
        if c == "struct":
            return self._cast_struct(value, where)
        if c == "datetime":
            return self._cast_time(value, where)
        if c == "fixed_length_utf32":
            return self.parse_fill(value, where)
        if c == "null_terminated_bytes":
            if isinstance(value, str):
                # a str is the text, encoded as numpy (and zarr-python) do; never base64
                try:
                    value = value.encode("ascii")
                except UnicodeEncodeError:
                    raise MetadataError(
                        f"{where}{label}: {value!r} is not ASCII; {self.name} (numpy "
                        f"{dt.str}) takes bytes"
                    ) from None
            if isinstance(value, bytes | bytearray):
                if len(value) > dt.itemsize:
                    raise MetadataError(
                        f"{where}{label}: {bytes(value)!r} is longer than {dt.itemsize} bytes"
                    )
                return np.array(bytes(value), dtype=dt)[()]
            return self.parse_fill(value, where)
        if isinstance(value, str | list | tuple):
            return self.parse_fill(value, where)
        if c in ("raw", "raw_bytes"):
            if isinstance(value, bytes | bytearray | np.void):
                raw = bytes(value)
                if len(raw) == dt.itemsize:
                    return np.frombuffer(raw, dtype=dt)[0]
            raise MetadataError(
                f"{where}{label}: expected {dt.itemsize} bytes for {self.name}, got {value!r}"
            )
        if isinstance(value, complex | np.complexfloating) and c != "complex":
            raise MetadataError(f"{where}{label}: {value!r} is complex, {self.name} is not")
        if c == "bool":
            if isinstance(value, bool | np.bool_) or (_is_int(value) and value in (0, 1)):
                return np.bool_(value)
            raise MetadataError(f"{where}{label}: expected a boolean for bool, got {value!r}")
        if c in ("int", "small_int"):
            if isinstance(value, float | np.floating):
                if not float(value).is_integer():
                    raise MetadataError(
                        f"{where}{label}: {value!r} is not an integer ({self.name})"
                    )
                value = int(value)
            if isinstance(value, bool | np.bool_):
                value = int(value)
            if isinstance(value, np.generic) and not _is_int(value):
                value = int(value)  # type: ignore[call-overload]
            return self.parse_fill(value, where)
        fmt = self.float_format
        if c == "float":
            assert fmt is not None
            if isinstance(value, np.floating) and not fmt.ml:
                with np.errstate(over="ignore"):
                    return np.asarray(value).astype(dt)[()]
            if isinstance(value, np.generic) and not isinstance(value, np.number):
                value = float(value)  # type: ignore[arg-type]  # an ml_dtypes scalar
            return _parse_float(value, fmt, dt, where, label)
        if c == "complex" and fmt is not None:
            if isinstance(value, int | float | complex | np.number) and not isinstance(
                value, bool | np.bool_
            ):
                if not fmt.ml and self.dtype.kind == "c":
                    with np.errstate(over="ignore"):
                        return np.asarray(value).astype(dt)[()]
                z = complex(value)  # type: ignore[arg-type]
                return self._parse_complex([z.real, z.imag], where, label)
        raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {self.name}")

    def _cast_time(self, value: object, where: str) -> Any:
        dt = self.dtype
        label = "fill_value"
        if isinstance(value, np.datetime64 | np.timedelta64):
            if (dt.kind == "M") != isinstance(value, np.datetime64):
                raise MetadataError(f"{where}{label}: {value!r} is not a {self.name} value")
            return np.asarray(value).astype(dt)[()]
        if isinstance(value, str) and value != "NaT" and dt.kind == "M":
            try:
                return np.datetime64(value).astype(dt)
            except ValueError as e:
                raise MetadataError(f"{where}{label}: {value!r}: {e}") from None
        if isinstance(value, np.integer):
            value = int(value)
        return self.parse_fill(value, where)

    def _cast_struct(self, value: object, where: str) -> Any:
        dt = self.dtype
        label = "fill_value"
        if isinstance(value, str | Mapping):
            return self.parse_fill(value, where)
        if isinstance(value, bytes | bytearray) and len(value) == dt.itemsize:
            return np.frombuffer(bytes(value), dtype=dt)[0]
        try:
            if isinstance(value, np.void):
                return np.asarray(value).astype(dt)[()]
            item = tuple(value) if isinstance(value, list | tuple) else value
            return np.array([item], dtype=dt)[0]
        except (TypeError, ValueError) as e:
            raise MetadataError(
                f"{where}{label}: cannot use {value!r} for data type {self.name}: {e}"
            ) from None

    def fill_bytes(self, scalar: Any) -> bytes:
        """One element holding ``scalar``, native byte order; for the variable-length types
        the UTF-8 or raw bytes of the value."""
        if self.category == "string":
            return str(scalar).encode("utf-8")
        if self.category == "bytes":
            return bytes(scalar)
        dt = self.dtype
        if not (isinstance(scalar, np.generic) and scalar.dtype == dt):
            scalar = self.cast_fill(scalar)
        return np.asarray(scalar, dtype=dt).tobytes()


def _little(dt: np.dtype[Any]) -> np.dtype[Any]:
    try:
        return dt.newbyteorder("<")
    except (TypeError, ValueError):
        return dt


# --------------------------------------------------------------------------------------------
# Parsing the data_type member
# --------------------------------------------------------------------------------------------

_CACHE: dict[str, DataType] = {}


def parse_data_type_json(
    value: object, *, path: str | None = None, label: str = "data_type"
) -> DataType:
    """A ``data_type`` member (a name or ``{"name", "configuration"}``) -> :class:`DataType`.

    Malformed members raise MetadataError; names zarrox does not know raise UnsupportedError
    naming the type (and the node, with ``path``).
    """
    try:
        key = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    result = _parse(value, _where(path), label)
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

    if name in SIMPLE_TYPES or _RAW_RE.fullmatch(name):
        if cfg:
            raise MetadataError(
                f"{where}{label}: data type {name!r} takes no configuration, got {dict(cfg)!r}"
            )
        return _simple(name, where, label)
    if name in CONFIGURED_TYPES:
        if cfg is None:
            raise MetadataError(f"{where}{label}: data type {name!r} requires a configuration")
        return _configured(name, cfg, where, label)
    if cfg:
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {name!r} (configuration {dict(cfg)!r})"
        )
    raise UnsupportedDataTypeError(f"{where}unsupported data type {name!r}")


def _simple(name: str, where: str, label: str) -> DataType:
    if name == "bool":
        return DataType(name, name, np.dtype("bool"), "bool")
    if name in CORE_INTS:
        return DataType(name, name, np.dtype(name), "int")
    if name in _SMALL_INTS:
        return DataType(name, name, _ml_dtype(name, where), "small_int")
    if name in _FLOAT_FORMATS:
        fmt = _FLOAT_FORMATS[name]
        return DataType(name, name, _float_dtype(fmt, where), "float", fmt)
    if name in _COMPLEX:
        fmt = _FLOAT_FORMATS[_COMPLEX[name]]
        numpy_name = _NUMPY_COMPLEX.get(name) or _COMPLEX_ALIASES.get(name)
        if numpy_name is not None:
            dt = np.dtype(numpy_name)
        else:
            comp = _float_dtype(fmt, where)
            dt = np.dtype([("real", comp), ("imag", comp)])
        return DataType(name, name, dt, "complex", fmt)
    if name == "string":
        return DataType(name, name, _string_dtype(), "string")
    if name in _BYTES_NAMES:
        return DataType(name, name, np.dtype(object), "bytes")
    m = _RAW_RE.fullmatch(name)
    assert m is not None
    nbits = int(m.group(1))
    if nbits <= 0 or nbits % 8:
        raise MetadataError(
            f"{where}{label}: raw data type {name!r} must have a positive number of bits "
            "that is a multiple of 8"
        )
    return DataType(name, name, np.dtype(f"V{nbits // 8}"), "raw")


def _check_cfg_keys(
    name: str, cfg: Mapping[str, Any], required: Sequence[str], where: str, label: str
) -> None:
    extra = sorted(str(k) for k in cfg if k not in required)
    if extra:
        raise MetadataError(
            f"{where}{label}.configuration: unknown member(s) {extra} for data type {name!r}"
        )
    missing = [k for k in required if k not in cfg]
    if missing:
        raise MetadataError(
            f"{where}{label}.configuration: data type {name!r} requires member(s) {missing}"
        )


def _configured(name: str, cfg: Mapping[str, Any], where: str, label: str) -> DataType:
    clabel = f"{label}.configuration"
    if name in _TIME_TYPES:
        _check_cfg_keys(name, cfg, ("unit", "scale_factor"), where, label)
        unit, scale = cfg["unit"], cfg["scale_factor"]
        if unit not in _TIME_UNITS:
            raise MetadataError(
                f"{where}{clabel}.unit: must be one of {list(_TIME_UNITS)}, got {unit!r}"
            )
        if not _is_int(scale) or not 1 <= scale <= _MAX_SCALE_FACTOR:
            raise MetadataError(
                f"{where}{clabel}.scale_factor: must be an integer in [1, {_MAX_SCALE_FACTOR}], "
                f"got {scale!r}"
            )
        # numpy spells the microsecond "us"; zarr-python 3.4 reads "μs" and writes "us". A
        # generic unit keeps its scale (numpy's "m8[2generic]"), as zarr-python 3.4 does.
        unit = "us" if unit == "μs" else unit
        dt = np.dtype(f"{_TIME_TYPES[name]}[{int(scale)}{unit}]")
        config = {"unit": unit, "scale_factor": int(scale)}
        return DataType(name, {"name": name, "configuration": config}, dt, "datetime")
    if name in _LENGTH_TYPES:
        _check_cfg_keys(name, cfg, ("length_bytes",), where, label)
        n = cfg["length_bytes"]
        step = 4 if name == "fixed_length_utf32" else 1
        if not _is_int(n) or n < step or n % step:
            raise MetadataError(
                f"{where}{clabel}.length_bytes: must be a positive "
                + ("multiple of 4" if step == 4 else "integer")
                + f", got {n!r}"
            )
        n = int(n)
        if name == "fixed_length_utf32":
            dt, cat = np.dtype(f"U{n // 4}"), "fixed_length_utf32"
        elif name == "null_terminated_bytes":
            dt, cat = np.dtype(f"S{n}"), "null_terminated_bytes"
        else:
            dt, cat = np.dtype(f"V{n}"), "raw_bytes"
        return DataType(
            name,
            {"name": name, "configuration": {"length_bytes": n}},
            dt,
            cat,  # type: ignore[arg-type]
        )
    # struct / structured
    _check_cfg_keys(name, cfg, ("fields",), where, label)
    items = cfg["fields"]
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence) or not items:
        raise MetadataError(f"{where}{clabel}.fields: must be a non-empty array, got {items!r}")
    fields: list[tuple[str, DataType]] = []
    for i, item in enumerate(items):
        flabel = f"{clabel}.fields[{i}]"
        if isinstance(item, Mapping):
            if set(item) != {"name", "data_type"}:
                raise MetadataError(
                    f"{where}{flabel}: a field must be an object with exactly 'name' and "
                    f"'data_type', got {dict(item)!r}"
                )
            fname, ftype = item["name"], item["data_type"]
        elif isinstance(item, list | tuple) and len(item) == 2:
            fname, ftype = item
        else:
            raise MetadataError(
                f"{where}{flabel}: a field must be an object {{'name', 'data_type'}} or a "
                f"[name, data_type] pair, got {item!r}"
            )
        if not isinstance(fname, str) or not fname:
            raise MetadataError(
                f"{where}{flabel}: field name must be a non-empty string, got {fname!r}"
            )
        if any(fname == n for n, _ in fields):
            raise MetadataError(f"{where}{flabel}: duplicate field name {fname!r}")
        sub = _parse(ftype, where, f"{flabel}.data_type")
        if sub.is_variable_length:
            raise MetadataError(
                f"{where}{flabel}.data_type: a field must have a fixed size, {sub.name!r} is "
                "variable-length"
            )
        fields.append((fname, sub))
    dt = np.dtype([(n, sub.dtype) for n, sub in fields])
    if name == "struct":
        out_fields: list[Any] = [{"name": n, "data_type": sub.json} for n, sub in fields]
    else:
        out_fields = [[n, sub.json] for n, sub in fields]
    doc = {"name": name, "configuration": {"fields": out_fields}}
    return DataType(name, doc, dt, "struct", None, tuple(fields))


# --------------------------------------------------------------------------------------------
# From numpy
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
    """A numpy dtype (anything ``np.dtype()`` accepts, any byte order) -> the :class:`DataType`
    zarr-python 3.1 writes for it; ml_dtypes types get their registry names.

    ``str``, object and StringDType give ``string``; ``bytes`` gives ``bytes``; unsized ``U``
    and ``S`` give ``string`` and ``bytes`` too.
    """
    where = _where(path)
    if dtype is str:
        return _simple("string", where, "data_type")
    if dtype is bytes:
        return _simple("bytes", where, "data_type")
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
    t = dt.type
    if str(getattr(t, "__module__", "")).startswith("ml_dtypes") and t.__name__ in _ML_TYPES:
        return t.__name__  # note: float8_e5m2 has kind "f", the others "V"
    kind = dt.kind
    if kind == "b":
        return "bool"
    if kind in "iufc":
        name = native_dtype(dt).name
        if name in _NAMED_CORE:
            return name
    elif kind in "Mm":
        unit, count = np.datetime_data(dt)
        return {
            "name": "numpy.datetime64" if kind == "M" else "numpy.timedelta64",
            "configuration": {"unit": unit, "scale_factor": int(count)},
        }
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
        f"{where}unsupported data type {dt!r}: no v3 data type (core: {list(_NAMED_CORE)}, r<N>; "
        "extensions: ml_dtypes types, datetime64/timedelta64, U, S, V, structured, str, bytes)"
    )
