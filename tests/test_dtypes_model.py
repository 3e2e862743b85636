"""The data-type model (zarrox.metadata.dtypes): one class per data type, resolved by the
registry from v3 JSON, v2 JSON or numpy dtypes, with both formats' JSON and fill-value
encodings compared with what zarr-python's data types write."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from zarr.core.dtype import get_data_type_from_native_dtype

from conftest import ZARR_VERSION
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata.dtypes import (
    CONFIGURED_TYPES,
    SIMPLE_TYPES,
    BoolType,
    BytesType,
    ComplexType,
    DataType,
    FixedUtf32Type,
    FloatType,
    IntType,
    NullTerminatedBytesType,
    ObjectType,
    RawBytesType,
    StringType,
    StructType,
    TimeType,
    data_type_from_numpy,
    parse_data_type_json,
    parse_v2_dtype,
    v2_data_type,
)

STRUCT = [("a", "<i4"), ("b", ">f8")]

#: numpy dtype (any byte order) -> fill values to encode
CASES: list[tuple[Any, list[Any]]] = [
    ("?", [True, False]),
    ("<i1", [0, -128, 127]),
    (">i2", [1, -5]),
    ("<u4", [0, 2**32 - 1]),
    (">i8", [-(2**63), 7]),
    ("<u8", [2**64 - 1]),
    ("<f2", [1.5, math.nan, -math.inf, -0.0]),
    (">f4", [0.1, math.inf]),
    ("<f8", [1e300, math.nan, -0.0]),
    ("<c8", [complex(1, 2), complex(math.nan, math.inf)]),
    (">c16", [complex(-0.5, 1e-300)]),
    ("<M8[ns]", [np.datetime64("NaT"), np.datetime64("2020-01-01T00:00:00", "ns")]),
    (">m8[10s]", [np.timedelta64(5 * 10, "s"), np.timedelta64("NaT")]),
    ("<U3", ["", "ab", "héo"]),
    ("|S4", [b"", b"ab", b"\x00\xff"]),
    ("|V5", [b"\x01\x02\x03\x04\x05"]),
    (STRUCT, [(1, 2.5), (-1, math.inf)]),
]
IDS = [str(c[0]) if not isinstance(c[0], list) else "struct" for c in CASES]


def _json(value: Any) -> Any:
    """What a document holds: zarr-python gives tuples for complex numbers."""
    return json.loads(json.dumps(value))


def _zarr(dt: np.dtype[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python's "no Zarr V3 specification" warnings
        return get_data_type_from_native_dtype(dt)


def _scalar(value: Any, dt: np.dtype[Any]) -> Any:
    if isinstance(value, tuple):
        return np.array([value], dtype=dt)[0]
    return np.array(value, dtype=dt)[()]


def _same(a: Any, b: Any, dt: np.dtype[Any]) -> bool:
    """Bit-equal as elements of ``dt``."""
    return bool(np.asarray(a, dtype=dt).tobytes() == np.asarray(b, dtype=dt).tobytes())


@pytest.mark.parametrize(("dtype", "values"), CASES, ids=IDS)
def test_v3_forms_match_zarr_python(dtype: Any, values: list[Any]) -> None:
    dt = np.dtype(dtype)
    native = dt.newbyteorder("=")
    info = data_type_from_numpy(dt)
    zdt = _zarr(native)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zjson = zdt.to_json(zarr_format=3)
        if not (isinstance(dtype, list) and ZARR_VERSION < (3, 2)):  # 3.1 writes "structured"
            assert info.json == zjson
            default = _json(zdt.to_json_scalar(zdt.default_scalar(), zarr_format=3))
            assert info.fill_to_json(info.default_fill()) == default
        for value in values:
            scalar = _scalar(value, native)
            got = info.fill_to_json(info.cast_fill(scalar))
            if not (isinstance(dtype, list) and ZARR_VERSION < (3, 2)):
                assert got == _json(zdt.to_json_scalar(scalar, zarr_format=3)), value
            # the round trip: JSON -> scalar -> the same JSON and bits
            parsed = info.parse_fill(got)
            assert info.fill_to_json(parsed) == got
            assert _same(parsed, scalar, info.dtype), value
            if zjson == info.json:
                assert _same(zdt.from_json_scalar(got, zarr_format=3), parsed, info.dtype)
    # the registry gives the same data type back from its JSON
    assert parse_data_type_json(info.json) is info


@pytest.mark.parametrize(("dtype", "values"), CASES, ids=IDS)
def test_v2_forms_match_zarr_python(dtype: Any, values: list[Any]) -> None:
    dt = parse_v2_dtype(dtype) if isinstance(dtype, list) else np.dtype(dtype)
    info = v2_data_type(dt)
    assert info.dtype == dt  # v2 keeps the stored byte order
    zdt = _zarr(dt)
    assert info.v2_json() == _json(zdt.to_json(zarr_format=2)["name"])
    assert parse_v2_dtype(info.v2_json()) == dt
    default = _json(zdt.to_json_scalar(zdt.default_scalar(), zarr_format=2))
    assert info.v2_fill_json(info.default_v2_fill()) == default
    for value in values:
        scalar = _scalar(value, dt)
        got = info.v2_fill_json(info.cast_v2_fill(scalar))
        assert got == _json(zdt.to_json_scalar(scalar, zarr_format=2)), value
        parsed = info.parse_v2_fill(got)
        assert info.v2_fill_json(parsed) == got
        # the element's bytes: numeric types in native order, the others as stored
        swapped = dt.kind in "biufc"
        want = np.asarray(scalar, dtype=dt.newbyteorder("=") if swapped else dt).tobytes()
        assert info.v2_fill_bytes(parsed) == want, value


def test_variable_length_types_match_zarr_python() -> None:
    info = data_type_from_numpy(str)
    zdt = _zarr(np.dtype(np.dtypes.StringDType()))
    assert info.json == zdt.to_json(zarr_format=3)
    for value in ("", "héllo"):
        assert info.fill_to_json(info.cast_fill(value)) == zdt.to_json_scalar(value, zarr_format=3)
        assert info.fill_bytes(value) == value.encode("utf-8")
    # v2 stores strings as its object type; the fill value is the string itself
    v2 = v2_data_type(np.dtype("O"))
    assert isinstance(v2, ObjectType)
    assert v2.v2_json() == zdt.to_json(zarr_format=2)["name"] == "|O"
    assert v2.v2_fill_json(v2.cast_v2_fill("héllo")) == zdt.to_json_scalar("héllo", zarr_format=2)
    assert v2.v2_fill_bytes("héllo") == "héllo".encode()
    # bytes: base64 in v3
    b = parse_data_type_json("bytes")
    assert b.fill_to_json(b.cast_fill(b"\x00\x01")) == "AAE="
    assert b.parse_fill([0, 1]) == b"\x00\x01"


@pytest.mark.parametrize(
    ("data_type", "cls"),
    [
        ("bool", BoolType),
        ("int32", IntType),
        ("uint64", IntType),
        ("float64", FloatType),
        ("complex128", ComplexType),
        ("complex_float32", ComplexType),
        ("r16", RawBytesType),
        ("string", StringType),
        ("variable_length_bytes", BytesType),
        ({"name": "raw_bytes", "configuration": {"length_bytes": 3}}, RawBytesType),
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}, FixedUtf32Type),
        (
            {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}},
            NullTerminatedBytesType,
        ),
        ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}, TimeType),
        (
            {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "uint8"}]}},
            StructType,
        ),
    ],
)
def test_registry_resolves_v3_json_to_its_class(data_type: Any, cls: type[DataType]) -> None:
    info = parse_data_type_json(data_type)
    assert type(info) is cls
    assert info.json == data_type
    assert parse_data_type_json(info.json) is info


@pytest.mark.parametrize(
    ("dtype", "cls", "core"),
    [
        ("|b1", BoolType, "bool"),
        (">i4", IntType, "int32"),
        ("<f2", FloatType, "float16"),
        (">c8", ComplexType, "complex64"),
        ("<M8[us]", TimeType, "r64"),
        ("<U2", FixedUtf32Type, "r64"),
        ("|S3", NullTerminatedBytesType, "r24"),
        ("|V2", RawBytesType, "r16"),
        ([["a", "<i2"], ["", "|V2"], ["b", "|u1", [3]]], StructType, "r56"),
    ],
)
def test_registry_resolves_v2_json_to_its_class(dtype: Any, cls: type[DataType], core: str) -> None:
    info = v2_data_type(parse_v2_dtype(dtype))
    assert type(info) is cls
    assert info.v2_json() == dtype
    assert info.v2_core_name() == core


def test_every_v3_name_round_trips() -> None:
    """Every data type zarrox reads gives its JSON back and a default fill value that
    survives its JSON form (ml_dtypes types included)."""
    configured = {
        "numpy.datetime64": {"unit": "ms", "scale_factor": 2},
        "numpy.timedelta64": {"unit": "generic", "scale_factor": 3},
        "fixed_length_utf32": {"length_bytes": 12},
        "null_terminated_bytes": {"length_bytes": 5},
        "raw_bytes": {"length_bytes": 5},
        "struct": {"fields": [{"name": "a", "data_type": "bfloat16"}]},
        "structured": {"fields": [["a", "int4"], ["b", "complex_float16"]]},
    }
    assert set(configured) == CONFIGURED_TYPES
    docs: list[Any] = sorted(SIMPLE_TYPES)
    docs += [{"name": n, "configuration": c} for n, c in configured.items()]
    for doc in docs:
        info = parse_data_type_json(doc)
        assert info.json == doc
        fill = info.fill_to_json(info.default_fill())
        assert info.fill_to_json(info.parse_fill(fill)) == fill, doc
        assert len(info.fill_bytes(info.default_fill())) == (
            0 if info.is_variable_length else info.dtype.itemsize
        )


def test_errors_name_the_array() -> None:
    with pytest.raises(UnsupportedError, match=r"^zarr.json at 'a/b': unsupported data type 'x'"):
        parse_data_type_json("x", path="a/b")
    info = v2_data_type(np.dtype("<i2"))
    with pytest.raises(
        MetadataError, match=r"^\.zarray at 'a': fill_value: expected an integer for int16"
    ):
        info.parse_v2_fill("x", ".zarray at 'a': ")
    with pytest.raises(MetadataError, match=r"^\.zarray at 'a': fill_value: cannot use 1.5"):
        info.cast_v2_fill(1.5, ".zarray at 'a': ")
    with pytest.raises(MetadataError, match=r"^zarr.json at 'a': fill_value: 40000 is out"):
        parse_data_type_json("int16").cast_fill(40000, "zarr.json at 'a': ")


def test_a_type_without_a_form_in_a_format_says_so() -> None:
    with pytest.raises(UnsupportedError, match="'string' has no v2 fill value encoding"):
        parse_data_type_json("string").parse_v2_fill("a")
    with pytest.raises(UnsupportedError, match="'object' has no v3 fill value encoding"):
        v2_data_type(np.dtype("O")).cast_fill("a")
    with pytest.raises(UnsupportedError, match="extended precision"):
        v2_data_type(np.dtype("longdouble"))
