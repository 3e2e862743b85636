"""Fixed-length strings and bytes: ``fixed_length_utf32`` (numpy ``U``),
``null_terminated_bytes`` (numpy ``S``), and raw bytes (``r<N>`` and ``raw_bytes``, numpy
``V``). The core handles them as raw bits, never byte-swapped as a whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox.errors import MetadataError
from zarrox.metadata._checks import is_int
from zarrox.metadata.dtypes.base import (
    NO_CAST,
    Category,
    DataType,
    b64decode,
    b64decode_str,
    b64encode,
    base64_or_byte_values,
    cast_values,
)
from zarrox.metadata.dtypes.time import check_config_keys
from zarrox.metadata.dtypes.v2_json import TypeStr, v2_type

__all__ = [
    "LENGTH_TYPES",
    "FixedUtf32Type",
    "NullTerminatedBytesType",
    "RawBytesType",
    "v2_void_bytes",
]

#: v3 name -> numpy kind of the types configured by ``length_bytes``
LENGTH_TYPES = {"fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V"}
#: the bytes of one UTF-32 code point (numpy's ``U1``)
_CODE_UNIT = np.dtype("U1").itemsize


def _length_bytes(name: str, cfg: Mapping[str, Any], where: str, label: str) -> int:
    check_config_keys(name, cfg, ("length_bytes",), where, label)
    n = cfg["length_bytes"]
    step = _CODE_UNIT if name == "fixed_length_utf32" else 1
    if not is_int(n) or n < step or n % step:
        raise MetadataError(
            f"{where}{label}.configuration.length_bytes: must be a positive "
            + (f"multiple of {step}" if step > 1 else "integer")
            + f", got {n!r}"
        )
    return int(n)


def _length_type(
    name: str, cfg: Mapping[str, Any], where: str, label: str
) -> tuple[str, dict[str, Any], np.dtype[Any]]:
    """``(name, data_type, numpy dtype)`` of a v3 type configured by ``length_bytes``
    (:data:`LENGTH_TYPES`)."""
    n = _length_bytes(name, cfg, where, label)
    kind = LENGTH_TYPES[name]
    count = n // _CODE_UNIT if kind == "U" else n
    return name, {"name": name, "configuration": {"length_bytes": n}}, np.dtype(f"{kind}{count}")


class _RawBits(DataType):
    """What the types the core holds as raw bits share in v2."""

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        if ts.size is not None and ts.size <= 0:
            raise MetadataError(
                f"{where}{label}: {ts.text!r}: fixed-size types need a positive size"
            )

    def v2_core_name(self, where: str = "") -> str:
        return f"r{8 * self.dtype.itemsize}"

    def v2_fill_bytes(self, value: Any) -> bytes:
        if value is None:
            value = self.default_v2_fill()
        return cast_values(value, self.dtype).tobytes()


def v2_void_bytes(value: Any, dt: np.dtype[Any], v2_json: object) -> bytes:
    """The bytes of a ``V`` or structured v2 fill value (stored byte order)."""
    if isinstance(value, np.void) and value.dtype == dt:
        return value.tobytes()
    if isinstance(value, bytes | np.void):
        raw = value.tobytes() if isinstance(value, np.void) else value
        if len(raw) != dt.itemsize:
            raise MetadataError(
                f"fill value has {len(raw)} bytes, data type {v2_json!r} has {dt.itemsize}"
            )
        return bytes(raw)
    return np.asarray(value, dtype=dt).tobytes()


class V2Void(_RawBits):
    """v2's ``V`` and structured types: fill values are the base64 of the stored bytes."""

    def _v2_what(self) -> str:
        return str(self.v2_json())

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        raw = b64decode_str(value, where, label, self._v2_what())
        if len(raw) != dt.itemsize:
            raise MetadataError(
                f"{where}{label}: base64 value has {len(raw)} bytes, the data type has "
                f"{dt.itemsize}"
            )
        return np.frombuffer(raw, dtype=dt)[0]

    def _v2_fill_json(self, value: Any) -> Any:
        return b64encode(v2_void_bytes(value, self.dtype, self.v2_json()))

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        if isinstance(value, bytes | np.void):
            raw = value.tobytes() if isinstance(value, np.void) else value
            if len(raw) != dt.itemsize:
                raise MetadataError(
                    f"{where}{label}: {len(raw)} bytes given, data type "
                    f"{self.v2_json()!r} has {dt.itemsize}"
                )
            return np.frombuffer(raw, dtype=dt)[0]
        return NO_CAST

    def default_v2_fill(self) -> Any:
        return np.frombuffer(bytes(self.dtype.itemsize), dtype=self.dtype)[0]

    def v2_fill_bytes(self, value: Any) -> bytes:
        if value is None:
            value = self.default_v2_fill()
        return v2_void_bytes(value, self.dtype, self.v2_json())


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class FixedUtf32Type(_RawBits):
    """``fixed_length_utf32``: numpy ``U<n>``, ``length_bytes`` = 4 n; v2 ``<U<n>``."""

    V2_KINDS = "U"

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        return True

    @classmethod
    def v3(cls, name: str, cfg: Mapping[str, Any], where: str, label: str) -> FixedUtf32Type:
        return cls(*_length_type(name, cfg, where, label))

    @property
    def category(self) -> Category:
        return "fixed_length_utf32"

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        unit = _CODE_UNIT
        return [[unit * i, unit] for i in range(self.dtype.itemsize // unit)], []

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        dt = self.dtype
        if not isinstance(value, str):
            raise MetadataError(f"{where}{label}: expected a string for {self.name}, got {value!r}")
        if len(value) > dt.itemsize // _CODE_UNIT:
            raise MetadataError(
                f"{where}{label}: {value!r} has more than the {dt.itemsize // _CODE_UNIT} code "
                f"point(s) of {self.name} with length_bytes {dt.itemsize}"
            )
        return np.array(value, dtype=dt)[()]

    def fill_to_json(self, scalar: Any) -> Any:
        return str(np.asarray(scalar, dtype=self.dtype)[()])

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        return self.parse_fill(value, where)

    # ---- v2 --------------------------------------------------------------------------------

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        if not isinstance(value, str):
            raise MetadataError(
                f"{where}{label}: expected a string for {self.v2_json()}, got {value!r}"
            )
        if len(value) > dt.itemsize // _CODE_UNIT:
            raise MetadataError(
                f"{where}{label}: {value!r} is longer than {dt.itemsize // _CODE_UNIT} characters "
                f"({self.v2_json()})"
            )
        return np.str_(value)

    def _v2_fill_json(self, value: Any) -> Any:
        return str(value)

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, str):
            if len(value) > self.dtype.itemsize // _CODE_UNIT:
                raise MetadataError(
                    f"{where}{label}: {value!r} is longer than {self.dtype.itemsize // _CODE_UNIT} "
                    "characters"
                )
            return np.str_(value)
        return NO_CAST

    def default_v2_fill(self) -> Any:
        return np.str_("")


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class NullTerminatedBytesType(_RawBits):
    """``null_terminated_bytes``: numpy ``S<n>``, ``length_bytes`` = n; v2 ``|S<n>``."""

    V2_KINDS = "S"

    @classmethod
    def v3(
        cls, name: str, cfg: Mapping[str, Any], where: str, label: str
    ) -> NullTerminatedBytesType:
        return cls(*_length_type(name, cfg, where, label))

    @property
    def category(self) -> Category:
        return "null_terminated_bytes"

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        dt = self.dtype
        if not isinstance(value, str):
            raise MetadataError(
                f"{where}{label}: expected a base64 string for {self.name}, got {value!r}"
            )
        raw = b64decode(value, where, label, self.name)
        if len(raw) > dt.itemsize:
            raise MetadataError(
                f"{where}{label}: {len(raw)} bytes do not fit {self.name} of "
                f"length_bytes {dt.itemsize}"
            )
        return np.array(raw, dtype=dt)[()]

    def fill_to_json(self, scalar: Any) -> Any:
        return b64encode(bytes(np.asarray(scalar, dtype=self.dtype)[()]))

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
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

    # ---- v2 --------------------------------------------------------------------------------

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        raw = b64decode_str(value, where, label, str(self.v2_json()))
        if len(raw) > self.dtype.itemsize:
            raise MetadataError(
                f"{where}{label}: {len(raw)} bytes do not fit in {self.v2_json()!r}"
            )
        return np.bytes_(raw)

    def _v2_fill_json(self, value: Any) -> Any:
        return b64encode(bytes(np.bytes_(value)))

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, str):
            value = value.encode("ascii")
        if isinstance(value, bytes):
            if len(value) > self.dtype.itemsize:
                raise MetadataError(
                    f"{where}{label}: {value!r} is longer than {self.dtype.itemsize} bytes"
                )
            return np.bytes_(value)
        return NO_CAST

    def default_v2_fill(self) -> Any:
        return np.bytes_(b"")


# --------------------------------------------------------------------------------------------


@v2_type
@dataclass(frozen=True, eq=False)
class RawBytesType(V2Void):
    """Raw bytes, numpy ``V<n>``: the core's ``r<8n>`` (fill value an array of byte values)
    and the registry's ``raw_bytes`` with ``length_bytes`` n (fill value base64); v2 ``|V<n>``
    (a void dtype without fields)."""

    V2_KINDS = "V"

    @classmethod
    def from_v2_dtype(cls, dtype: np.dtype[Any], v3_json: Any) -> RawBytesType:
        # v2 has no r<N>: every fieldless void is raw bytes (the ml_dtypes types are not
        # voids here: check_v2_dtype leaves them to the classes that name them)
        return cls("raw_bytes", v3_json, dtype)

    @classmethod
    def v3_raw_bits(cls, name: str, nbits: int, where: str, label: str) -> RawBytesType:
        if nbits <= 0 or nbits % 8:
            raise MetadataError(
                f"{where}{label}: raw data type {name!r} must have a positive number of bits "
                "that is a multiple of 8"
            )
        return cls(name, name, np.dtype(f"V{nbits // 8}"))

    @classmethod
    def v3(cls, name: str, cfg: Mapping[str, Any], where: str, label: str) -> RawBytesType:
        return cls(*_length_type(name, cfg, where, label))

    @property
    def category(self) -> Category:
        return "raw_bytes" if self.name == "raw_bytes" else "raw"

    @property
    def core_name(self) -> str | None:
        return None if self.name == "raw_bytes" else self.name

    # ---- v3 --------------------------------------------------------------------------------

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        n = self.dtype.itemsize
        # base64: zarr-python's raw_bytes, and tensorstore's r<N>
        raw = base64_or_byte_values(value, where, label, self.name)
        if raw is None or len(raw) != n:
            raise MetadataError(
                f"{where}{label}: expected an array of {n} integers in [0, 255] (or the "
                f"base64 of {n} bytes) for {self.name}, got {value!r}"
            )
        return np.frombuffer(raw, dtype=self.dtype)[0]

    def fill_to_json(self, scalar: Any) -> Any:
        raw = np.asarray(scalar, dtype=self.dtype).tobytes()
        return b64encode(raw) if self.name == "raw_bytes" else list(raw)

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
        if isinstance(value, str | list | tuple):
            return self.parse_fill(value, where)
        if isinstance(value, bytes | bytearray | np.void):
            raw = value.tobytes() if isinstance(value, np.void) else bytes(value)
            if len(raw) == dt.itemsize:
                return np.frombuffer(raw, dtype=dt)[0]
        raise MetadataError(
            f"{where}{label}: expected {dt.itemsize} bytes for {self.name}, got {value!r}"
        )
