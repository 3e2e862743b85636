"""The numeric data types: bool, integers (core and ml_dtypes' sub-byte ones), floats (IEEE
and ml_dtypes formats) and complex numbers (numpy's, and pairs of any float format)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError
from zarrox.metadata._checks import is_int, is_json_array
from zarrox.metadata.dtypes.base import (
    NO_CAST,
    Category,
    DataType,
    b64decode_str,
    b64encode,
    native_dtype,
)
from zarrox.metadata.dtypes.floats import (
    FLOAT_FORMATS,
    SPECIAL_FLOATS,
    FloatFormat,
    float_dtype,
    float_to_json,
    ml_dtype,
    parse_float,
    parse_v2_float,
    v2_float_json,
)
from zarrox.metadata.dtypes.v2_json import TypeStr, v2_type

__all__ = [
    "COMPLEX_TYPES",
    "CORE_INTS",
    "SMALL_INTS",
    "BoolType",
    "ComplexType",
    "FloatType",
    "IntType",
]

#: the core integer types
CORE_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: ml_dtypes' sub-byte integers: name -> (bits, min, max)
SMALL_INTS: dict[str, tuple[int, int, int]] = {
    "int2": (2, -2, 1),
    "int4": (4, -8, 7),
    "uint2": (2, 0, 3),
    "uint4": (4, 0, 15),
}
#: complex data type name -> component float format
COMPLEX_TYPES: dict[str, str] = {
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
#: the complex types numpy has, by their v3 names (aliases included)
_NUMPY_COMPLEX = {
    "complex64": "complex64",
    "complex128": "complex128",
    "complex_float32": "complex64",
    "complex_float64": "complex128",
}
_CORE_FLOATS = ("float16", "float32", "float64")
#: the sizes of long double and its complex (x86: 12 and 16, 24 and 32 bytes), which zarrox
#: knows as types it does not support rather than as malformed type strings
_EXTENDED_SIZES = (12, 16, 24, 32)


def _itemsizes(names: Sequence[str], kind: str) -> tuple[int, ...]:
    """The item sizes numpy gives the types ``names`` of numpy kind ``kind``."""
    return tuple(sorted({np.dtype(n).itemsize for n in names if np.dtype(n).kind == kind}))


def _check_numeric_size(
    ts: TypeStr, names: Sequence[str], where: str, label: str, extended: bool = False
) -> None:
    """A numeric type string's size must be that of one of the types ``names``."""
    sizes = _itemsizes(names, ts.kind)
    if ts.size in sizes:
        return
    if extended and ts.size in _EXTENDED_SIZES:
        raise UnsupportedDataTypeError(
            f"{where}unsupported data type {ts.text!r} (extended precision floats)"
        )
    raise MetadataError(
        f"{where}{label}: {ts.text!r}: size {ts.size} is not valid for kind {ts.kind!r} "
        f"(expected one of {list(sizes)})"
    )


def _json_form_or_real(dtype: DataType, value: object, where: str, label: str) -> Any:
    """What the bool, integer and float casts share: a str, list or tuple is a JSON form;
    a complex value is refused. Returns NO_CAST when neither applies."""
    if isinstance(value, str | list | tuple):
        return dtype.parse_fill(value, where)
    if isinstance(value, complex | np.complexfloating):
        raise MetadataError(f"{where}{label}: {value!r} is complex, {dtype.name} is not")
    return NO_CAST


def _as_bool(value: object) -> Any:
    """A boolean, or the integer 0 or 1, as a numpy bool; NO_CAST for anything else."""
    if isinstance(value, bool | np.bool_) or (is_int(value) and value in (0, 1)):
        return np.bool_(value)
    return NO_CAST


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class BoolType(DataType):
    """``bool`` (numpy ``?``, v2 ``|b1``)."""

    V2_KINDS = "b"

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        _check_numeric_size(ts, ("bool",), where, label)

    @classmethod
    def v3(cls) -> BoolType:
        return cls("bool", "bool", np.dtype("bool"))

    @property
    def category(self) -> Category:
        return "bool"

    @property
    def core_name(self) -> str:
        return "bool"

    def packbits_layout(self) -> tuple[int, int]:
        return 1, 1

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        if isinstance(value, bool | np.bool_):
            return np.bool_(value)
        raise MetadataError(f"{where}{label}: expected true or false for bool, got {value!r}")

    def fill_to_json(self, scalar: Any) -> Any:
        return bool(scalar)

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        out = _json_form_or_real(self, value, where, label)
        if out is NO_CAST:
            out = _as_bool(value)
        if out is not NO_CAST:
            return out
        raise MetadataError(f"{where}{label}: expected a boolean for bool, got {value!r}")

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        out = _as_bool(value)
        if out is not NO_CAST:
            return out
        raise MetadataError(f"{where}{label}: expected true or false for bool, got {value!r}")

    def _v2_fill_json(self, value: Any) -> Any:
        return bool(value)

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        return _as_bool(value)


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class IntType(DataType):
    """The integers: ``int8`` .. ``uint64`` (numpy's) and ml_dtypes' ``int2``, ``int4``,
    ``uint2``, ``uint4`` (one byte per value in memory); v2's ``i`` and ``u`` type strings."""

    V2_KINDS = "iu"
    # TensorStore's v2 names (it has no uint2 or uint4)
    V2_NAMES = ("int2", "int4")

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        _check_numeric_size(ts, CORE_INTS, where, label)

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        return size > 1

    @classmethod
    def v3(cls, name: str, where: str) -> IntType:
        dt = np.dtype(name) if name in CORE_INTS else ml_dtype(name, where)
        return cls(name, name, dt)

    @property
    def category(self) -> Category:
        return "small_int" if self.name in SMALL_INTS else "int"

    @property
    def core_name(self) -> str | None:
        return self.name if self.name in CORE_INTS else None

    def _range(self) -> tuple[int, int]:
        if self.name in SMALL_INTS:
            _, lo, hi = SMALL_INTS[self.name]
            return lo, hi
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        size = self.dtype.itemsize
        if self.name in SMALL_INTS:
            return [], []
        return ([[0, size]] if size > 1 else []), []

    def packbits_layout(self) -> tuple[int, int]:
        if self.name in SMALL_INTS:
            return SMALL_INTS[self.name][0], 1
        return 8 * self.dtype.itemsize, 1

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        if isinstance(value, float) and value.is_integer():
            # The spec asks for an integer; zarr-python and tensorstore also read
            # 1.0 as 1, and so does zarrox (1.5 stays an error).
            value = int(value)
        if not is_int(value):
            raise MetadataError(
                f"{where}{label}: expected an integer for {self.name}, got {value!r}"
            )
        lo, hi = self._range()
        if not lo <= int(value) <= hi:  # type: ignore[call-overload]
            raise MetadataError(
                f"{where}{label}: {value} is out of range for {self.name} [{lo}, {hi}]"
            )
        if self.name in SMALL_INTS:
            return np.array(int(value), dtype=np.int64).astype(self.dtype)[()]  # type: ignore[call-overload]
        return np.array(int(value), dtype=self.dtype)[()]  # type: ignore[call-overload]

    def fill_to_json(self, scalar: Any) -> Any:
        if self.name in SMALL_INTS:
            return int(np.asarray(scalar, dtype=self.dtype).astype(np.int64))
        return int(scalar)

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        out = _json_form_or_real(self, value, where, label)
        if out is not NO_CAST:
            return out
        if isinstance(value, float | np.floating):
            if not float(value).is_integer():
                raise MetadataError(f"{where}{label}: {value!r} is not an integer ({self.name})")
            value = int(value)
        if isinstance(value, bool | np.bool_):
            value = int(value)
        if isinstance(value, np.generic) and not is_int(value):
            value = int(value)  # type: ignore[call-overload]
        return self.parse_fill(value, where)

    # ---- v2 --------------------------------------------------------------------------------

    def _parse_v2_fill(self, value: object, where: str, label: str) -> np.generic:
        if self.name in SMALL_INTS:  # TensorStore writes them as v3 does
            return cast(np.generic, self.parse_fill(value, where, label))
        dt = self.dtype
        as_int: int | None = None
        if is_int(value):
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
        return cast(np.generic, np.array(as_int, dtype=dt.newbyteorder("="))[()])

    def _v2_fill_json(self, value: Any) -> Any:
        return self.fill_to_json(value) if self.name in SMALL_INTS else int(value)

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if self.name in SMALL_INTS:
            return self._cast_fill(value, where, label)
        if isinstance(value, bool | np.bool_):
            value = int(value)
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        if is_int(value):
            return self._parse_v2_fill(int(value), where, label)  # type: ignore[call-overload]
        return NO_CAST


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _FloatParts(DataType):
    """What the float and complex types share: an element is ``_PARTS`` floats of the format
    ``fmt`` (a float; a complex number's real and imaginary parts)."""

    fmt: FloatFormat

    _PARTS: ClassVar[int]

    @property
    def float_format(self) -> FloatFormat:
        return self.fmt

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        fmt = self.fmt
        offsets = [fmt.size * i for i in range(self._PARTS)]
        swap = [[o, fmt.size] for o in offsets] if fmt.size > 1 else []
        floats: list[list[Any]] = [[o, fmt.core] for o in offsets] if fmt.core else []
        return swap, floats

    def packbits_layout(self) -> tuple[int, int]:
        return self.fmt.bits, self._PARTS


@v2_type
@dataclass(frozen=True, eq=False)
class FloatType(_FloatParts):
    """The floats: ``float16/32/64`` and the ml_dtypes formats (``bfloat16``, ``float8_*``,
    ``float6_*``, ``float4_e2m1fn``); ``fmt`` says which."""

    V2_KINDS = "f"
    # TensorStore's v2 names: every ml_dtypes float it has (it has no float8_e4m3 and no
    # float6 types)
    V2_NAMES = (
        "bfloat16",
        "float8_e3m4",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e4m3b11fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float4_e2m1fn",
    )
    _PARTS = 1

    @classmethod
    def v3(cls, name: str, where: str) -> FloatType:
        fmt = FLOAT_FORMATS[name]
        return cls(name, name, float_dtype(fmt, where), fmt)

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        _check_numeric_size(ts, _CORE_FLOATS, where, label, extended=True)

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        return size > 1

    @classmethod
    def from_v2_dtype(cls, dtype: np.dtype[Any], v3_json: Any) -> FloatType:
        name = native_dtype(dtype).name
        return cls(name, name, dtype, FLOAT_FORMATS[name])

    @property
    def category(self) -> Category:
        return "float"

    @property
    def core_name(self) -> str | None:
        return self.name if self.name in _CORE_FLOATS else None

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        return parse_float(value, self.fmt, self.dtype, where, label)

    def fill_to_json(self, scalar: Any) -> Any:
        return float_to_json(scalar, self.fmt, self.dtype)

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        out = _json_form_or_real(self, value, where, label)
        if out is not NO_CAST:
            return out
        if isinstance(value, np.floating) and not self.fmt.ml:
            with np.errstate(over="ignore"):
                return np.asarray(value).astype(self.dtype)[()]
        if isinstance(value, np.generic) and not isinstance(value, np.number):
            value = float(value)  # type: ignore[arg-type]  # an ml_dtypes scalar
        return parse_float(value, self.fmt, self.dtype, where, label)

    # ---- v2 --------------------------------------------------------------------------------

    # The ml_dtypes formats' v2 fill values are TensorStore's: as in v3, except that a
    # format narrower than a byte (float4_e2m1fn) is the base64 of its byte.

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        if not self.fmt.ml:
            return parse_v2_float(value, native_dtype(self.dtype), where, label)
        if self.fmt.sub_byte_bits and isinstance(value, str) and value not in SPECIAL_FLOATS:
            raw = b64decode_str(value, where, label, self.name)
            if len(raw) != 1:
                raise MetadataError(
                    f"{where}{label}: expected the base64 of 1 byte for {self.name}, got {value!r}"
                )
            return np.frombuffer(raw, dtype=self.dtype)[0]
        return self.parse_fill(value, where, label)

    def _v2_fill_json(self, value: Any) -> Any:
        if not self.fmt.ml:
            return v2_float_json(value)
        if self.fmt.sub_byte_bits:
            return b64encode(np.asarray(value, dtype=self.dtype).tobytes())
        return self.fill_to_json(value)

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if self.fmt.ml:
            return self._cast_fill(value, where, label)
        native = native_dtype(self.dtype)
        if isinstance(value, np.floating):
            with np.errstate(over="ignore"):
                return np.asarray(value).astype(native)[()]
        return parse_v2_float(value, native, where, label)


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class ComplexType(_FloatParts):
    """Complex numbers: numpy's ``complex64``/``complex128`` (also named ``complex_float32``/
    ``complex_float64``), and pairs of any other float format (a structured dtype
    ``[("real", T), ("imag", T)]``, numpy having no such complex type); ``fmt`` is the
    components' format."""

    V2_KINDS = "c"
    _PARTS = 2

    @classmethod
    def v3(cls, name: str, where: str) -> ComplexType:
        fmt = FLOAT_FORMATS[COMPLEX_TYPES[name]]
        numpy_name = _NUMPY_COMPLEX.get(name)
        if numpy_name is not None:
            dt = np.dtype(numpy_name)
        else:
            comp = float_dtype(fmt, where)
            dt = np.dtype([("real", comp), ("imag", comp)])
        return cls(name, name, dt, fmt)

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        _check_numeric_size(ts, tuple(_NUMPY_COMPLEX.values()), where, label, extended=True)

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        return True

    @classmethod
    def from_v2_dtype(cls, dtype: np.dtype[Any], v3_json: Any) -> ComplexType:
        name = native_dtype(dtype).name
        return cls(name, name, dtype, FLOAT_FORMATS[COMPLEX_TYPES[name]])

    @property
    def category(self) -> Category:
        return "complex"

    @property
    def core_name(self) -> str | None:
        return _NUMPY_COMPLEX.get(self.name)

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
            raise MetadataError(
                f"{where}{label}: expected a two-element array [real, imag] for {self.name}, "
                f"got {value!r}"
            )
        fmt = self.fmt
        cdt = float_dtype(fmt, where)
        re_ = parse_float(value[0], fmt, cdt, where, f"{label}[0]")
        im_ = parse_float(value[1], fmt, cdt, where, f"{label}[1]")
        raw = np.array([re_, im_], dtype=cdt).tobytes()
        return np.frombuffer(raw, dtype=self.dtype)[0]

    def fill_to_json(self, scalar: Any) -> Any:
        fmt = self.fmt
        cdt = float_dtype(fmt, "")
        parts = np.frombuffer(np.asarray(scalar, dtype=self.dtype).tobytes(), dtype=cdt)
        return [float_to_json(parts[0], fmt, cdt), float_to_json(parts[1], fmt, cdt)]

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, str | list | tuple):
            return self.parse_fill(value, where)
        if isinstance(value, int | float | complex | np.number) and not isinstance(
            value, bool | np.bool_
        ):
            if not self.fmt.ml and self.dtype.kind == "c":
                with np.errstate(over="ignore"):
                    return np.asarray(value).astype(self.dtype)[()]
            z = complex(value)  # type: ignore[arg-type]
            return self.parse_fill([z.real, z.imag], where, label)
        raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {self.name}")

    # ---- v2 --------------------------------------------------------------------------------

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        if not is_json_array(value) or len(value) != 2:
            raise MetadataError(
                f"{where}{label}: expected [real, imag] for {dt.newbyteorder('=').name}, "
                f"got {value!r}"
            )
        fdt = np.dtype(f"f{dt.itemsize // 2}")
        re_ = parse_v2_float(value[0], fdt, where, f"{label}[0]")
        im_ = parse_v2_float(value[1], fdt, where, f"{label}[1]")
        return np.array([re_, im_], dtype=fdt).view(dt.newbyteorder("="))[0]

    def _v2_fill_json(self, value: Any) -> Any:
        c = complex(value)
        return [v2_float_json(c.real), v2_float_json(c.imag)]

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, Sequence) and not isinstance(value, str | bytes):
            return self.parse_v2_fill(list(value), where)
        if isinstance(value, int | float | complex | np.number) and not isinstance(
            value, bool | np.bool_
        ):
            with np.errstate(over="ignore"):
                return np.asarray(value).astype(native_dtype(self.dtype))[()]
        return NO_CAST
