"""Numeric scalars in codec configurations (``scale_offset``, ``cast_value``).

zarr-python 3.4 reads these with its data types' ``from_json_scalar``, which accepts more than
the fill-value encoding the spec names: for integers also integral floats (``1.0``) and
integer strings (``"42"``); for floats also numeric strings (``"0.1"``) and ``"0x..."`` hex
strings of 4, 8 or 16 digits whatever the type (read as float16, float32 or float64 bits, then
cast). zarrox reads them the same way, so that what zarr-python writes opens here.

The Rust core takes these scalars in one unambiguous form (:func:`core_scalar`): integers as
JSON integers, floats as the hex string of their bits in the data type.

The data types are the eleven zarr-python casts and scales: ``int8`` .. ``uint64``,
``float16``, ``float32``, ``float64`` (:data:`NUMERIC_TYPES`).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from zarrox.metadata.dtypes import CORE_INTS
from zarrox.metadata.dtypes.floats import SPECIAL_FLOATS

__all__ = [
    "NUMERIC_TYPES",
    "core_scalar",
    "parse_scalar",
    "python_number",
]

#: The data types scale_offset and cast_value work on in zarr-python 3.4.
NUMERIC_TYPES: frozenset[str] = frozenset([*CORE_INTS, "float16", "float32", "float64"])
_HEX_FORMATS = {4: ">e", 8: ">f", 16: ">d"}


def _int_value(value: object) -> int:
    if isinstance(value, int):  # bool included, as isinstance(True, int) in zarr-python
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"{value!r} is not an integer")


def _float_value(value: object) -> float:
    if isinstance(value, str) and value in SPECIAL_FLOATS:
        return SPECIAL_FLOATS[value]
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.startswith("0x"):
        fmt = _HEX_FORMATS.get(len(value) - 2)
        if fmt is None:
            raise ValueError(f"hex float {value!r} must have 4, 8 or 16 digits")
        return float(struct.unpack(fmt, bytes.fromhex(value[2:]))[0])
    if isinstance(value, str):
        return float(value)
    raise ValueError(f"{value!r} is not a float")


def parse_scalar(value: object, dtype: np.dtype[Any]) -> np.generic:
    """``value`` as zarr-python 3.4 reads a scalar of ``dtype`` (``from_json_scalar``).

    Raises ValueError (or OverflowError) when zarr-python cannot read it.
    """
    if dtype.kind in "iu":
        number = _int_value(value)
        info = np.iinfo(dtype)
        if not int(info.min) <= number <= int(info.max):
            raise OverflowError(f"{number} is out of range for {dtype} [{info.min}, {info.max}]")
        return dtype.type(number)  # type: ignore[no-any-return]
    with np.errstate(over="ignore"):
        return dtype.type(_float_value(value))  # type: ignore[no-any-return]


def python_number(value: object, dtype: np.dtype[Any]) -> np.generic:
    """A scalar map entry as zarr-python 3.4 hands it to its casting backend: ``int(value)``
    for integer types, ``float(value)`` for floats (float16 through float32, as the backend
    converts it), as a scalar of ``dtype``. Raises ValueError, TypeError or OverflowError where
    zarr-python's cast fails."""
    if dtype.kind in "iu":
        if isinstance(value, list | dict):
            raise TypeError(f"{value!r} is not a number")
        number = int(value)  # type: ignore[call-overload]
        info = np.iinfo(dtype)
        if not int(info.min) <= number <= int(info.max):
            raise OverflowError(f"{number} is out of range for {dtype}")
        return dtype.type(number)  # type: ignore[no-any-return]
    if isinstance(value, list | dict):
        raise TypeError(f"{value!r} is not a number")
    as_float = float(value)  # type: ignore[arg-type]
    with np.errstate(over="ignore"):
        if dtype == np.float16:
            return np.float16(np.float32(as_float))
        return dtype.type(as_float)  # type: ignore[no-any-return]


def core_scalar(scalar: np.generic) -> int | str:
    """A scalar in the form the Rust core takes: an integer, or a float's bits in hex."""
    dtype = np.asarray(scalar).dtype
    if dtype.kind in "iu":
        return int(scalar)  # type: ignore[call-overload]
    bits = int(np.asarray(scalar, dtype=dtype).view(f"u{dtype.itemsize}"))
    return f"0x{bits:0{2 * dtype.itemsize}x}"
