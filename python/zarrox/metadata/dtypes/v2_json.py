"""v2 ``dtype`` JSON: the type-string grammar every data type's v2 parser shares
(:mod:`typestr`, re-exported here), and the table of data type classes, each registered by
:func:`v2_type`, that :func:`parse_v2_dtype` asks in turn. Which kinds, sizes and layouts
are valid is each class's own rule (``DataType.check_v2_json`` / ``DataType.parse_v2_json``)."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from zarrox.errors import MetadataError, UnsupportedDataTypeError
from zarrox.metadata.dtypes.base import DataType, ml_type_name
from zarrox.metadata.dtypes.typestr import TypeStr, not_a_typestr

__all__ = [
    "TypeStr",
    "ml_v2_name",
    "not_a_typestr",
    "parse_v2_dtype",
    "v2_json_class",
    "v2_type",
    "v2_types",
]

# --------------------------------------------------------------------------------------------
# the classes with v2 forms
# --------------------------------------------------------------------------------------------

_V2_TYPES: list[type[DataType]] = []
_T = TypeVar("_T", bound="type[DataType]")


def v2_type(cls: _T) -> _T:
    """Class decorator: ``cls`` has v2 ``dtype`` forms (its forms must not overlap those of
    the classes already registered: the order they are asked in does not matter)."""
    _V2_TYPES.append(cls)
    return cls


def v2_types() -> tuple[type[DataType], ...]:
    """The registered classes with v2 forms."""
    return tuple(_V2_TYPES)


def v2_json_class(value: object) -> type[DataType] | None:
    """The class whose v2 ``dtype`` form ``value`` is (valid or not), or None."""
    return next((cls for cls in _V2_TYPES if cls.check_v2_json(value)), None)


def ml_v2_name(dtype: np.dtype[Any]) -> str | None:
    """The v2 ``dtype`` name of an ml_dtypes type (TensorStore's, a class's ``V2_NAMES``);
    None for the other dtypes. UnsupportedDataTypeError for an ml_dtypes type v2 has no name
    for."""
    name = ml_type_name(dtype)
    if name is None or any(name in cls.V2_NAMES for cls in _V2_TYPES):
        return name
    names = ", ".join(n for cls in _V2_TYPES for n in cls.V2_NAMES)
    raise UnsupportedDataTypeError(
        f"unsupported data type {name!r} in zarr v2: the ml_dtypes types have v2 forms only "
        f"where TensorStore names them ({names}); use zarr_format=3"
    )


def parse_v2_dtype(value: object, where: str = "", label: str = "dtype") -> np.dtype[Any]:
    """A v2 ``dtype`` member -> numpy dtype, byte order as stored.

    Takes numpy type strings with an explicit byte order (``"<f8"``, ``">i2"``, ``"|b1"``,
    ``"|S12"``, ``"<U4"``, ``"|V8"``, ``"<M8[ns]"``, ``"<m8[10s]"``, ``"|O"``) and structured
    types as field lists ``[["a", "<i4"], ["b", "<f8", [2]], ["c", [["d", "|u1"]]]]`` (nested,
    with sub-array shapes, and ``["", "|V<n>"]`` padding as numpy's ``descr`` writes it);
    the class whose form it is parses it (``DataType.parse_v2_json``).
    ``where`` starts every error message (``".zarray at 'a': "``).
    """
    cls = v2_json_class(value)
    if cls is not None:
        return cls.parse_v2_json(value, where, label)
    if isinstance(value, str):
        raise not_a_typestr(value, where, label)
    raise MetadataError(
        f"{where}{label}: must be a numpy type string or a list of fields, got {value!r}"
    )
