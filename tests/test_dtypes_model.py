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
from zarrox import _core
from zarrox.errors import MetadataError, UnsupportedDataTypeError, UnsupportedError
from zarrox.metadata.dtypes import (
    CONFIGURED_TYPES,
    FLOAT_FORMATS,
    SIMPLE_TYPES,
    V2_TYPES,
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
    v2_json_class,
)
from zarrox.metadata.dtypes.floats import float_dtype

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


# --------------------------------------------------------------------------------------------
# v2 dtype forms: each class parses its own
# --------------------------------------------------------------------------------------------

#: class -> v2 dtype forms it owns, and the numpy dtype each gives (byte order as stored)
V2_FORMS: dict[type[DataType], list[tuple[Any, Any]]] = {
    BoolType: [("|b1", "?"), ("<b1", "?")],
    IntType: [("<i4", "<i4"), (">u2", ">u2"), ("|u1", "u1"), ("<i1", "i1"), (">i8", ">i8")],
    FloatType: [("<f2", "<f2"), (">f4", ">f4"), ("<f8", "<f8")],
    ComplexType: [("<c8", "<c8"), (">c16", ">c16")],
    TimeType: [("<M8[ns]", "<M8[ns]"), (">m8[10s]", ">m8[10s]"), ("<M8", "<M8")],
    NullTerminatedBytesType: [("|S12", "S12"), ("<S1", "S1")],
    FixedUtf32Type: [("<U4", "<U4"), (">U1", ">U1")],
    RawBytesType: [("|V8", "V8")],
    StructType: [
        ([["a", "<i4"], ["b", ">f8", [2]]], [("a", "<i4"), ("b", ">f8", (2,))]),
        ([["c", [["d", "|u1"]]]], [("c", [("d", "u1")])]),
        (
            [["", "|V2"], ["x", "<i2"]],
            {"names": ["x"], "formats": ["<i2"], "offsets": [2], "itemsize": 4},
        ),
    ],
    ObjectType: [("|O", "O")],
}


@pytest.mark.parametrize("cls", list(V2_FORMS), ids=lambda c: c.__name__)
def test_each_class_parses_its_own_v2_forms(cls: type[DataType]) -> None:
    for form, want in V2_FORMS[cls]:
        assert [c for c in V2_TYPES if c.check_v2_json(form)] == [cls], form
        assert v2_json_class(form) is cls
        dt = cls.parse_v2_json(form)
        assert dt == np.dtype(want), form
        assert dt.str == np.dtype(want).str  # the stored byte order
        assert parse_v2_dtype(form) == dt
        info = v2_data_type(dt)
        assert type(info) is cls and cls.check_v2_dtype(dt)
        assert [c for c in V2_TYPES if c.check_v2_dtype(dt)] == [cls]


@pytest.mark.parametrize("cls", list(V2_FORMS), ids=lambda c: c.__name__)
def test_each_class_refuses_the_others_v2_forms(cls: type[DataType]) -> None:
    for other, forms in V2_FORMS.items():
        if other is cls:
            continue
        for form, _ in forms:
            assert not cls.check_v2_json(form)
            expected = (
                r"expected a list of fields"
                if cls is StructType
                else rf"is not a v2 dtype of {cls.__name__} \(type strings of kind "
            )
            with pytest.raises(MetadataError, match=r"^\.zarray at 'a': dtype: .*" + expected):
                cls.parse_v2_json(form, ".zarray at 'a': ")


#: class -> (invalid v2 form, what its MetadataError says), as the class states its rules
V2_RULES: list[tuple[type[DataType], Any, str]] = [
    (BoolType, "|b2", "'|b2': size 2 is not valid for kind 'b' (expected one of [1])"),
    (IntType, "<i3", "'<i3': size 3 is not valid for kind 'i' (expected one of [1, 2, 4, 8])"),
    (IntType, "|i4", "'|i4' needs a byte order, '<' or '>' (e.g. '<i4')"),
    (IntType, "<i4[s]", "'<i4[s]': only M8/m8 types take a [unit]"),
    (IntType, "<i", "'<i' has no size (e.g. '<i4', '|S5')"),
    (IntType, "i4", "'i4' is not a numpy type string with an explicit byte order"),
    (FloatType, "<f1", "'<f1': size 1 is not valid for kind 'f' (expected one of [2, 4, 8])"),
    (ComplexType, "<c4", "'<c4': size 4 is not valid for kind 'c' (expected one of [8, 16])"),
    (ComplexType, "|c8", "'|c8' needs a byte order"),
    (TimeType, "<M4[s]", "'<M4[s]': datetime types have size 8"),
    (TimeType, "<m8[fortnight]", "'<m8[fortnight]': unknown time unit 'fortnight'"),
    (TimeType, "<m8[0s]", "'<m8[0s]': the unit's scale must be positive"),
    (TimeType, "|M8[s]", "'|M8[s]' needs a byte order"),
    (NullTerminatedBytesType, "|S0", "'|S0': fixed-size types need a positive size"),
    (FixedUtf32Type, "|U3", "'|U3' needs a byte order"),
    (RawBytesType, "|V", "'|V' has no size"),
    (ObjectType, "|O8", "the object data type is written '|O', got '|O8'"),
    (ObjectType, "<O", "the object data type is written '|O', got '<O'"),
    (StructType, [], "a structured data type needs at least one field"),
    (StructType, [["a", "<i4"], ["a", "<f8"]], "dtype[1][0]: duplicate field name 'a'"),
]


@pytest.mark.parametrize(("cls", "value", "message"), V2_RULES, ids=str)
def test_each_class_states_its_own_v2_rules(cls: type[DataType], value: Any, message: str) -> None:
    for parse in (cls.parse_v2_json, parse_v2_dtype):
        with pytest.raises(MetadataError) as info:
            parse(value, ".zarray at 'a': ")
        assert type(info.value) is MetadataError
        assert str(info.value).startswith(".zarray at 'a': dtype")
        assert message in str(info.value)


def test_struct_fields_of_object_type_are_unsupported() -> None:
    with pytest.raises(UnsupportedError) as info:
        StructType.parse_v2_json([["a", "|O"]], ".zarray at 'a': ")
    assert str(info.value) == ".zarray at 'a': dtype[0]: structured fields of object type"


def test_extended_precision_floats_are_unsupported_not_malformed() -> None:
    for cls, value in ((FloatType, "<f16"), (ComplexType, ">c32"), (FloatType, "<f12")):
        with pytest.raises(UnsupportedDataTypeError) as info:
            cls.parse_v2_json(value, ".zarray at 'a': ")
        assert str(info.value) == (
            f".zarray at 'a': unsupported data type {value!r} (extended precision floats)"
        )


def test_the_registry_names_what_no_class_owns() -> None:
    with pytest.raises(MetadataError) as info:
        parse_v2_dtype("float32", "W: ")
    assert str(info.value).startswith("W: dtype: 'float32' is not a numpy type string")
    with pytest.raises(MetadataError) as info:
        parse_v2_dtype(3, "W: ")
    assert str(info.value) == "W: dtype: must be a numpy type string or a list of fields, got 3"
    assert v2_json_class("<x4") is None and v2_json_class({"a": 1}) is None


# --------------------------------------------------------------------------------------------
# sizes: numpy's item size, the core's size (asked through _core) and the v3 JSON agree
# --------------------------------------------------------------------------------------------


def _registry_types() -> list[DataType]:
    configured = {
        "numpy.datetime64": {"unit": "ns", "scale_factor": 1},
        "numpy.timedelta64": {"unit": "s", "scale_factor": 10},
        "fixed_length_utf32": {"length_bytes": 12},
        "null_terminated_bytes": {"length_bytes": 5},
        "raw_bytes": {"length_bytes": 3},
        "struct": {
            "fields": [{"name": "a", "data_type": "int16"}, {"name": "b", "data_type": "bfloat16"}]
        },
        "structured": {"fields": [["a", "float32"], ["b", "complex_float16"]]},
    }
    assert set(configured) == CONFIGURED_TYPES
    docs: list[Any] = [*sorted(SIMPLE_TYPES), "r8", "r24", "r64"]
    docs += [{"name": n, "configuration": c} for n, c in configured.items()]
    return [parse_data_type_json(doc) for doc in docs]


@pytest.mark.parametrize("info", _registry_types(), ids=lambda i: i.name)
def test_core_size_equals_numpy_itemsize(info: DataType) -> None:
    core = json.dumps(info.core_json())
    want = 0 if info.is_variable_length else info.dtype.itemsize
    assert _core.data_type_size(core) == want
    # the v3 JSON round-trips to the same data type
    assert parse_data_type_json(json.loads(json.dumps(info.json))) is info
    fmt = info.float_format
    if fmt is not None:
        assert fmt.size == float_dtype(fmt, "").itemsize
        if fmt.core is not None:
            assert _core.float_format_size(fmt.core) == fmt.size
    for _, fmt_name in info.components()[1]:
        assert _core.float_format_size(fmt_name) == FLOAT_FORMATS[fmt_name].size


@pytest.mark.parametrize(
    "form", [f for forms in V2_FORMS.values() for f, _ in forms if f != "|O"], ids=str
)
def test_core_size_of_v2_types_equals_numpy_itemsize(form: Any) -> None:
    info = v2_data_type(parse_v2_dtype(form))
    assert _core.data_type_size(json.dumps(info.v2_core_name())) == info.dtype.itemsize


def test_every_float_format_has_numpys_size() -> None:
    for name, fmt in FLOAT_FORMATS.items():
        assert fmt.size == float_dtype(fmt, "").itemsize, name
        assert fmt.bits <= 8 * fmt.size
        if fmt.core is not None:
            assert _core.float_format_size(fmt.core) == fmt.size
    with pytest.raises(MetadataError, match="unknown float format 'float8'"):
        _core.float_format_size("float8")
    with pytest.raises(UnsupportedError, match="unknown data type 'float128'"):
        _core.data_type_size('"float128"')
