"""``numpy.datetime64`` and ``numpy.timedelta64`` (v2 ``M8``/``m8``): an int64 count of a
unit times a scale factor; ``NaT`` is the smallest int64."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox.errors import MetadataError
from zarrox.metadata._checks import is_int
from zarrox.metadata.dtypes.base import NO_CAST, Category, DataType, cast_values
from zarrox.metadata.dtypes.v2_json import TypeStr, v2_type

__all__ = ["TIME_TYPES", "TIME_UNITS", "TimeType", "check_config_keys"]

#: v3 name -> numpy kind
TIME_TYPES = {"numpy.datetime64": "M8", "numpy.timedelta64": "m8"}
#: the units numpy (and both formats) name; zarr-python 3.4 reads "μs" too
TIME_UNITS = (
    *("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as"),
    "generic",
)
_MAX_SCALE_FACTOR = 2**31 - 1
_NAT = -(2**63)
#: the item size of every datetime64/timedelta64 (an int64 count)
_TIME_SIZE = np.dtype("M8").itemsize


def check_config_keys(
    name: str, cfg: Mapping[str, Any], required: tuple[str, ...], where: str, label: str
) -> None:
    """A v3 ``configuration`` must have exactly the members ``required``."""
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


def _nat(dt: np.dtype[Any]) -> np.generic:
    return np.array([_NAT], dtype=np.int64).view(dt.newbyteorder("="))[0]  # type: ignore[no-any-return]


@v2_type
@dataclass(frozen=True, eq=False)
class TimeType(DataType):
    """A datetime64 or timedelta64 type (``dtype`` carries the unit and scale); v2's ``M8``
    and ``m8`` type strings, with an optional ``[<scale><unit>]``."""

    V2_KINDS = "mM"
    _V2_TAKES_UNIT = True

    @classmethod
    def v3(cls, name: str, cfg: Mapping[str, Any], where: str, label: str) -> TimeType:
        clabel = f"{label}.configuration"
        check_config_keys(name, cfg, ("unit", "scale_factor"), where, label)
        unit, scale = cfg["unit"], cfg["scale_factor"]
        if unit not in TIME_UNITS:
            raise MetadataError(
                f"{where}{clabel}.unit: must be one of {list(TIME_UNITS)}, got {unit!r}"
            )
        if not is_int(scale) or not 1 <= scale <= _MAX_SCALE_FACTOR:
            raise MetadataError(
                f"{where}{clabel}.scale_factor: must be an integer in [1, {_MAX_SCALE_FACTOR}], "
                f"got {scale!r}"
            )
        # numpy spells the microsecond "us"; zarr-python 3.4 reads "μs" and writes "us". A
        # generic unit keeps its scale (numpy's "m8[2generic]"), as zarr-python 3.4 does.
        unit = "us" if unit == "μs" else unit
        dt = np.dtype(f"{TIME_TYPES[name]}[{int(scale)}{unit}]")
        config = {"unit": unit, "scale_factor": int(scale)}
        return cls(name, {"name": name, "configuration": config}, dt)

    @staticmethod
    def v3_json(dt: np.dtype[Any]) -> dict[str, Any]:
        """The v3 ``data_type`` of numpy time type ``dt``."""
        unit, count = np.datetime_data(dt)
        return {
            "name": "numpy.datetime64" if dt.kind == "M" else "numpy.timedelta64",
            "configuration": {"unit": unit, "scale_factor": int(count)},
        }

    @classmethod
    def _check_v2_typestr(cls, ts: TypeStr, where: str, label: str) -> None:
        value, unit = ts.text, ts.unit
        if ts.size != _TIME_SIZE:
            raise MetadataError(f"{where}{label}: {value!r}: datetime types have size {_TIME_SIZE}")
        if unit is not None and unit not in TIME_UNITS:
            raise MetadataError(
                f"{where}{label}: {value!r}: unknown time unit {unit!r} "
                f"(expected one of {list(TIME_UNITS)})"
            )
        if ts.scale is not None and ts.scale != "" and int(ts.scale) <= 0:
            raise MetadataError(f"{where}{label}: {value!r}: the unit's scale must be positive")

    @classmethod
    def _v2_has_byte_order(cls, size: int) -> bool:
        return size > 1

    @property
    def category(self) -> Category:
        return "datetime"

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        return [[0, self.dtype.itemsize]], []

    # ---- v3 --------------------------------------------------------------------------------

    def default_fill(self) -> Any:
        return np.array(_NAT, dtype=np.int64).view(self.dtype)[()]

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        dt = self.dtype
        if value == "NaT":
            return np.array(_NAT, dtype=np.int64).view(dt)[()]
        if not is_int(value) or not _NAT <= int(value) < 2**63:  # type: ignore[call-overload]
            raise MetadataError(
                f'{where}{label}: expected an int64 integer or "NaT" for {self.name}, got {value!r}'
            )
        return np.array(int(value), dtype=np.int64).view(dt)[()]  # type: ignore[call-overload]

    def fill_to_json(self, scalar: Any) -> Any:
        return int(np.asarray(scalar, dtype=self.dtype).view(np.int64))

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
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

    # ---- v2 --------------------------------------------------------------------------------

    def v2_core_name(self, where: str = "") -> str:
        return f"r{8 * self.dtype.itemsize}"

    def _parse_v2_fill(self, value: object, where: str, label: str) -> Any:
        if value == "NaT":
            return _nat(self.dtype)
        if not is_int(value):
            raise MetadataError(
                f'{where}{label}: expected an integer (or "NaT") for {self.v2_json()}, '
                f"got {value!r}"
            )
        info = np.iinfo(np.int64)
        if not info.min <= int(value) <= info.max:  # type: ignore[call-overload]
            raise MetadataError(f"{where}{label}: {value} is out of range for int64")
        return np.array([int(value)], dtype=np.int64).view(self.dtype.newbyteorder("="))[0]  # type: ignore[call-overload]

    def _v2_fill_json(self, value: Any) -> Any:
        return int(np.asarray(value, dtype=self.dtype.newbyteorder("=")).view(np.int64))

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        # np.timedelta64 is an np.signedinteger: test the time types first.
        if isinstance(value, str | np.datetime64 | np.timedelta64):
            return np.asarray(value, dtype=self.dtype.newbyteorder("="))[()]
        if is_int(value):
            return np.array([int(value)], dtype=np.int64).view(self.dtype.newbyteorder("="))[0]  # type: ignore[call-overload]
        return NO_CAST

    def default_v2_fill(self) -> Any:
        return _nat(self.dtype)

    def v2_fill_bytes(self, value: Any) -> bytes:
        if value is None:
            value = self.default_v2_fill()
        return cast_values(value, self.dtype).tobytes()
