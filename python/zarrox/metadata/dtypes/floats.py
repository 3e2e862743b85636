"""Floating-point formats (IEEE and ml_dtypes) and their JSON scalar encodings.

v3 (the spec's fill values): numbers, ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (where the
format has them) and ``"0x..."`` raw bits; v2 (zarr-python 2.18 and 3.1): numbers,
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` and numbers written as strings (``"1.5"``).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError

__all__ = [
    "FLOAT_FORMATS",
    "SPECIAL_FLOATS",
    "FloatFormat",
    "float_dtype",
    "float_to_json",
    "ml_dtype",
    "ml_dtypes_module",
    "parse_float",
    "parse_v2_float",
    "v2_float_json",
]


@dataclass(frozen=True)
class FloatFormat:
    """A floating-point format: the core ones, and the ml_dtypes ones. Its size is numpy's
    (ml_dtypes') item size, stated nowhere else."""

    name: str
    nan: int | None  #: the bits "NaN" denotes; None when the format has no NaN
    has_inf: bool
    core: str | None  #: format named in the core descriptor's "floats" (None: small float)
    sub_byte_bits: int | None = None  #: the bits of a format narrower than its byte

    @property
    def ml(self) -> bool:
        return self.name not in ("float16", "float32", "float64")

    @functools.cached_property
    def size(self) -> int:
        """Bytes per value in memory: numpy's item size (UnsupportedError for an ml_dtypes
        format without ml_dtypes installed)."""
        return float_dtype(self, "").itemsize

    @property
    def bits(self) -> int:
        """Bits of the encoding: the whole item, or 4 and 6 for the sub-byte formats."""
        return self.sub_byte_bits or 8 * self.size


FLOAT_FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("float16", 0x7E00, True, "float16"),
        FloatFormat("float32", 0x7FC00000, True, "float32"),
        FloatFormat("float64", 0x7FF8000000000000, True, "float64"),
        FloatFormat("bfloat16", 0x7FC0, True, "bfloat16"),
        FloatFormat("float8_e3m4", 0x78, True, None),
        FloatFormat("float8_e4m3", 0x7C, True, None),
        # Not in the registry; tensorstore writes it. NaN is 0x7f/0xff; "NaN" is ml_dtypes' 0x7f.
        FloatFormat("float8_e4m3fn", 0x7F, False, None),
        FloatFormat("float8_e4m3fnuz", 0x80, False, None),
        FloatFormat("float8_e4m3b11fnuz", 0x80, False, None),
        FloatFormat("float8_e5m2", 0x7E, True, None),
        FloatFormat("float8_e5m2fnuz", 0x80, False, None),
        FloatFormat("float8_e8m0fnu", 0xFF, False, None),
        FloatFormat("float4_e2m1fn", None, False, None, sub_byte_bits=4),
        FloatFormat("float6_e2m3fn", None, False, None, sub_byte_bits=6),
        FloatFormat("float6_e3m2fn", None, False, None, sub_byte_bits=6),
    )
}
#: the JSON strings both formats write for non-finite floats
SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def ml_dtypes_module(name: str, where: str) -> Any:
    """The ml_dtypes module, which data type ``name`` needs (UnsupportedError without it)."""
    try:
        import ml_dtypes
    except ImportError:
        raise UnsupportedError(
            f"{where}data type {name!r} needs the ml_dtypes package: pip install zarrox[ml]"
        ) from None
    return ml_dtypes


def ml_dtype(name: str, where: str) -> np.dtype[Any]:
    """The numpy dtype of the ml_dtypes type ``name``."""
    mod = ml_dtypes_module(name, where)
    t = getattr(mod, name, None)
    if t is None:
        raise UnsupportedError(
            f"{where}data type {name!r} needs a newer ml_dtypes (installed: "
            f"{getattr(mod, '__version__', '?')}): pip install -U zarrox[ml]"
        )
    return np.dtype(t)


def float_dtype(fmt: FloatFormat, where: str) -> np.dtype[Any]:
    return ml_dtype(fmt.name, where) if fmt.ml else np.dtype(fmt.name)


# ---- v3 ------------------------------------------------------------------------------------


def _uint(fmt: FloatFormat) -> np.dtype[Any]:
    """The unsigned integer of the format's size, to read and write its bits."""
    return np.dtype(f"u{fmt.size}")


def _from_bits(bits: int, fmt: FloatFormat, dt: np.dtype[Any]) -> np.generic:
    return cast(np.generic, np.array(bits, dtype=_uint(fmt)).view(dt)[()])


def _to_bits(x: object, fmt: FloatFormat, dt: np.dtype[Any]) -> int:
    return int(np.asarray(x, dtype=dt).view(_uint(fmt)))


def parse_float(
    value: object, fmt: FloatFormat, dt: np.dtype[Any], where: str, label: str
) -> np.generic:
    """One float per the v3 spec's JSON forms -> numpy scalar of ``dt`` (bit-exact for hex)."""
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
    if fmt.nan is None and abs(v) > float(ml_dtypes_module(name, where).finfo(dt).max):
        raise MetadataError(f"{where}{label}: {v} is out of range for {name}")
    return cast(np.generic, out)


def float_to_json(x: object, fmt: FloatFormat, dt: np.dtype[Any]) -> float | str:
    """One float -> its v3 JSON form (a NaN other than the canonical one keeps its bits)."""
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


# ---- v2 ------------------------------------------------------------------------------------


def parse_v2_float(value: object, fdt: np.dtype[Any], where: str, label: str) -> np.generic:
    """One float per the v2 writers' JSON forms -> numpy scalar of ``fdt``."""
    if isinstance(value, str):
        if value in SPECIAL_FLOATS:
            return fdt.type(SPECIAL_FLOATS[value])  # type: ignore[no-any-return]
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


def v2_float_json(x: Any) -> float | str:
    """One float -> its v2 JSON form."""
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return float(x)
