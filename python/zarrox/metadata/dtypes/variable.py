"""Variable-length data types: v3's ``string`` (numpy StringDType, object before numpy 2) and
``bytes`` (object; zarr-python 3.1 spells it ``variable_length_bytes``), and v2's object
type ``|O`` (strings or bytes, serialized by the vlen-utf8 / vlen-bytes filter)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError
from zarrox.metadata._checks import copy_json, is_text
from zarrox.metadata.dtypes.base import Category, DataType, b64encode, base64_or_byte_values
from zarrox.metadata.dtypes.v2_json import v2_type

__all__ = ["BYTES_NAMES", "BytesType", "ObjectType", "StringType", "string_dtype"]

#: the spellings of the variable-length bytes type (zarr-python 3.1 writes the second)
BYTES_NAMES = ("bytes", "variable_length_bytes")


def string_dtype() -> np.dtype[Any]:
    """numpy's StringDType, or object before numpy 2."""
    cls = getattr(np.dtypes, "StringDType", None)
    return np.dtype(cls()) if cls is not None else np.dtype(object)


class _Variable(DataType):
    @property
    def is_variable_length(self) -> bool:
        return True

    def core_json(self) -> str:
        return self.category

    # v2 stores strings and bytes as its object type (ObjectType), with a vlen filter

    def v2_json(self) -> str:
        return "|O"

    def v2_core_name(self, where: str = "") -> str:
        raise self._no_form("v2", where)

    def default_v2_fill(self) -> Any:
        raise self._no_form("v2")

    def v2_fill_bytes(self, value: Any) -> bytes:
        raise self._no_form("v2")


@dataclass(frozen=True, eq=False)
class StringType(_Variable):
    """``string``: UTF-8 text of any length."""

    @classmethod
    def v3(cls) -> StringType:
        return cls("string", "string", string_dtype())

    @property
    def category(self) -> Category:
        return "string"

    def default_fill(self) -> Any:
        return ""

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        if not is_text(value):  # lone surrogates cannot be stored as UTF-8
            raise MetadataError(
                f"{where}{label}: expected a string (of Unicode characters) for string, "
                f"got {value!r}"
            )
        return value

    def fill_to_json(self, scalar: Any) -> Any:
        return str(scalar)

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        if is_text(value):
            return str(value)
        raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {self.name}")

    def fill_bytes(self, scalar: Any) -> bytes:
        """The UTF-8 bytes of the fill value."""
        return str(scalar).encode("utf-8")


@dataclass(frozen=True, eq=False)
class BytesType(_Variable):
    """``bytes`` (also ``variable_length_bytes``): bytes of any length."""

    @classmethod
    def v3(cls, name: str) -> BytesType:
        return cls(name, name, np.dtype(object))

    @property
    def category(self) -> Category:
        return "bytes"

    def default_fill(self) -> Any:
        return b""

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        raw = base64_or_byte_values(value, where, label, self.name)
        if raw is not None:
            return raw
        raise MetadataError(
            f"{where}{label}: expected a base64 string or an array of integers in [0, 255] "
            f"for {self.name}, got {value!r}"
        )

    def fill_to_json(self, scalar: Any) -> Any:
        return b64encode(bytes(scalar))

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        if isinstance(value, bytes | bytearray):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8")  # the text, as zarr-python; never base64
        if isinstance(value, list | tuple):
            return self.parse_fill(value, where)
        raise MetadataError(f"{where}{label}: cannot use {value!r} for data type {self.name}")

    def fill_bytes(self, scalar: Any) -> bytes:
        """The fill value's bytes."""
        return bytes(scalar)


@v2_type
@dataclass(frozen=True, eq=False)
class ObjectType(DataType):
    """v2's object type ``|O``: strings or bytes of any length, the fill value whatever JSON
    value was stored (a string or a scalar, or null)."""

    V2_KINDS = "O"

    @classmethod
    def parse_v2_json(cls, value: object, where: str = "", label: str = "dtype") -> np.dtype[Any]:
        ts = cls._own_typestr(value, where, label)
        if ts.order != "|" or ts.size is not None:
            raise MetadataError(
                f"{where}{label}: the object data type is written '|O', got {value!r}"
            )
        return np.dtype("O")

    @classmethod
    def check_v2_dtype(cls, dtype: np.dtype[Any]) -> bool:
        return dtype.kind in "OT"  # object, and numpy's StringDType

    @classmethod
    def from_v2_dtype(cls, dtype: np.dtype[Any], v3_json: Any) -> ObjectType:
        return cls("object", None, dtype)

    @property
    def category(self) -> Category:
        return "object"

    @property
    def is_variable_length(self) -> bool:
        return True

    def default_fill(self) -> Any:
        raise self._no_form("v3")

    def _unsupported(self, where: str = "") -> UnsupportedDataTypeError:
        return UnsupportedDataTypeError(
            f"{where}unsupported data type {self.v2_json()!r}: variable-length strings and "
            "objects are not supported yet"
        )

    def v2_core_name(self, where: str = "") -> str:
        raise self._unsupported(where)

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        # Object arrays hold strings or bytes: a list or an object is no fill value for them
        # (zarr-python refuses both), nor is text UTF-8 cannot encode (lone surrogates).
        if isinstance(value, list | Mapping) or (isinstance(value, str) and not is_text(value)):
            raise MetadataError(
                f"{where}{label}: an object array takes a string or scalar fill value (or null), "
                f"got {value!r}"
            )
        return value

    def _v2_fill_json(self, value: Any) -> Any:
        return copy_json(value)

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        if is_text(value):
            return value
        raise MetadataError(
            f"{where}{label}: a v2 object array takes a str fill value (or None), got {value!r}"
        )

    def default_v2_fill(self) -> Any:
        raise self._unsupported()

    def v2_fill_bytes(self, value: Any) -> bytes:
        """The fill value's bytes (a string's UTF-8), empty when it is null or not a string."""
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, bytes):
            return value
        return b""
