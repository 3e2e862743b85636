"""Structured data types: v3's ``struct`` (fields as objects, fill value an object per
field) and the legacy ``structured`` zarr-python 3.1 writes (fields as ``[name, data_type]``
pairs, fill value base64); v2's field lists (nested, with sub-array shapes and padding)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata._checks import is_int, is_json_array
from zarrox.metadata.dtypes.base import (
    NO_CAST,
    Category,
    DataType,
    b64decode,
    b64encode,
    little_endian,
    typestr,
)
from zarrox.metadata.dtypes.fixed import V2Void
from zarrox.metadata.dtypes.time import check_config_keys
from zarrox.metadata.dtypes.v2_json import ml_v2_name, parse_v2_dtype, v2_type

__all__ = ["STRUCT_TYPES", "StructType", "v2_fields_json"]

STRUCT_TYPES = ("struct", "structured")


def v2_fields_json(dt: np.dtype[Any]) -> list[Any]:
    """A structured dtype's v2 field list (numpy's ``descr``, with :func:`typestr` types and
    the ml_dtypes types' v2 names, as TensorStore writes them)."""
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
        entry: list[Any] = [
            name,
            v2_fields_json(base) if base.fields is not None else ml_v2_name(base) or typestr(base),
        ]
        if len(item) > 2:
            entry.append(list(item[2]))
        out.append(entry)
    return out


def _sub_array(fdt: np.dtype[Any], shape: object, where: str, label: str) -> np.dtype[Any]:
    """A v2 field's type ``fdt`` with its ``shape`` (the field's third member)."""
    if not is_json_array(shape) or not all(is_int(s) and s > 0 for s in shape):
        raise MetadataError(
            f"{where}{label}: field shape must be an array of positive integers, got {shape!r}"
        )
    try:
        return np.dtype((fdt, tuple(int(s) for s in shape)))
    except (ValueError, OverflowError) as e:  # larger than numpy's dimensions or sizes
        raise MetadataError(f"{where}{label}: field shape {shape!r} is too large: {e}") from None


@v2_type
@dataclass(frozen=True, eq=False)
class StructType(V2Void):
    """A structured type; ``members`` are the v3 fields (empty for a v2 instance, whose fill
    values are the stored bytes)."""

    members: tuple[tuple[str, DataType], ...] = ()

    # ---- v2 dtype: field lists -------------------------------------------------------------

    @classmethod
    def check_v2_json(cls, value: object) -> bool:
        return isinstance(value, list | tuple)

    @classmethod
    def parse_v2_json(cls, value: object, where: str = "", label: str = "dtype") -> np.dtype[Any]:
        """A v2 field list ``[["a", "<i4"], ["b", "<f8", [2]], ["c", [["d", "|u1"]]]]``
        (nested, with sub-array shapes, and ``["", "|V<n>"]`` padding as numpy's ``descr``
        writes it) -> structured numpy dtype, byte order as stored."""
        if not cls.check_v2_json(value):
            raise MetadataError(f"{where}{label}: expected a list of fields, got {value!r}")
        # a field's type is any v2 dtype, parsed by its own class
        items: Sequence[Any] = value  # type: ignore[assignment]
        if len(items) == 0:
            raise MetadataError(f"{where}{label}: a structured data type needs at least one field")
        names: list[str] = []
        formats: list[Any] = []
        offsets: list[int] = []
        offset = 0
        for i, item in enumerate(items):
            ilabel = f"{label}[{i}]"
            if not is_json_array(item):
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
                raise MetadataError(
                    f"{where}{ilabel}[0]: field name must be a string, got {name!r}"
                )
            fdt = parse_v2_dtype(item[1], where, f"{ilabel}[1]")
            if fdt.hasobject:
                raise UnsupportedError(f"{where}{ilabel}: structured fields of object type")
            if len(item) == 3:
                fdt = _sub_array(fdt, item[2], where, f"{ilabel}[2]")
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

    @classmethod
    def check_v2_dtype(cls, dtype: np.dtype[Any]) -> bool:
        return dtype.fields is not None

    @classmethod
    def v3(
        cls,
        name: str,
        cfg: Mapping[str, Any],
        where: str,
        label: str,
        parse: Callable[[object, str, str], DataType],
    ) -> StructType:
        """``parse(json, where, label)`` reads a field's data type."""
        clabel = f"{label}.configuration"
        check_config_keys(name, cfg, ("fields",), where, label)
        items = cfg["fields"]
        if not is_json_array(items) or not items:
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
            sub = parse(ftype, where, f"{flabel}.data_type")
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
        return cls(name, doc, dt, tuple(fields))

    @property
    def category(self) -> Category:
        return "struct"

    @property
    def fields(self) -> tuple[tuple[str, DataType], ...]:
        return self.members

    def components(self) -> tuple[list[list[int]], list[list[Any]]]:
        swap: list[list[int]] = []
        floats: list[list[Any]] = []
        offset = 0
        for _, sub in self.members:
            s, f = sub.components()
            swap += [[offset + o, n] for o, n in s]
            floats += [[offset + o, fmt_] for o, fmt_ in f]
            offset += sub.dtype.itemsize
        return swap, floats

    # ---- v3 --------------------------------------------------------------------------------

    def default_fill(self) -> Any:
        # zarr-python 3.4: every field zero (no bytes for strings and raw bytes, a zero
        # count for datetimes), i.e. an element of zero bytes
        return np.zeros(1, dtype=self.dtype)[0]

    def parse_fill(self, value: object, where: str = "", label: str = "fill_value") -> Any:
        dt = self.dtype
        if isinstance(value, str):
            # legacy: the base64 of the packed little-endian bytes
            raw = b64decode(value, where, label, self.name)
            if len(raw) != dt.itemsize:
                raise MetadataError(
                    f"{where}{label}: base64 fill value has {len(raw)} bytes, {self.name} has "
                    f"{dt.itemsize}"
                )
            return np.frombuffer(raw, dtype=little_endian(dt)).astype(dt)[0]
        if not isinstance(value, Mapping):
            raise MetadataError(
                f"{where}{label}: expected an object with a member per field (or a base64 "
                f"string) for {self.name}, got {value!r}"
            )
        names = [n for n, _ in self.members]
        missing = [n for n in names if n not in value]
        extra = sorted(str(k) for k in value if k not in names)
        if missing or extra:
            raise MetadataError(
                f"{where}{label}: the fill value must have exactly the fields {names}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {extra}" if extra else "")
            )
        out = np.zeros((), dtype=dt)
        for name, sub in self.members:
            out[name] = sub.parse_fill(value[name], where, f"{label}.{name}")
        return out[()]

    def fill_to_json(self, scalar: Any) -> Any:
        value = np.asarray(scalar, dtype=self.dtype)
        if self.name == "structured":
            return b64encode(value.astype(little_endian(self.dtype)).tobytes())
        return {name: sub.fill_to_json(value[name][()]) for name, sub in self.members}

    def _cast_fill(self, value: object, where: str, label: str) -> Any:
        dt = self.dtype
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

    # ---- v2 --------------------------------------------------------------------------------

    def v2_json(self) -> list[Any]:
        return v2_fields_json(self.dtype)

    def _v2_what(self) -> str:
        return "structured data types"

    def _cast_v2_fill(self, value: object, where: str, label: str) -> Any:
        out = super()._cast_v2_fill(value, where, label)
        if out is NO_CAST and (isinstance(value, tuple) or is_int(value)):
            return np.array([value], dtype=self.dtype)[0]
        return out
