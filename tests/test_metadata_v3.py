"""Tests of the Zarr v3 metadata layer (zarrox.metadata), checked against zarr-python 3.1."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st
from zarr.storage import MemoryStore

import zarrox
from conftest import ZARR_VERSION
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata.codecs import build_codecs, normalize_codecs, validate_codecs
from zarrox.metadata.v3 import (
    CORE_DATA_TYPES,
    ArrayMetadataV3,
    GroupMetadataV3,
    cast_fill_value,
    data_type_name,
    dumps,
    fill_value_bytes,
    fill_value_to_json,
    loads,
    parse_data_type,
    parse_fill_value,
    parse_node,
)

NAMED_TYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
FLOAT_BITS = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}


@pytest.fixture(autouse=True)
def _quiet_zarr() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def zarr_json(tmp_path: Path, name: str = "a", **kwargs: Any) -> tuple[bytes, dict[str, Any]]:
    """Create an array with zarr-python; return its zarr.json bytes and decoded document."""
    store = tmp_path / name
    zarr.create_array(store=str(store), **kwargs)
    raw = (store / "zarr.json").read_bytes()
    return raw, json.loads(raw)


def zarr_codecs(**kwargs: Any) -> list[dict[str, Any]]:
    """The codecs list zarr-python writes for these create_array arguments (JSON form)."""
    kwargs.setdefault("shape", (16, 16))
    kwargs.setdefault("chunks", (8, 8))
    arr = zarr.create_array(store=MemoryStore(), **kwargs)
    return json.loads(json.dumps(arr.metadata.to_dict()["codecs"]))


def base_doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "shape": [10, 20],
        "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    doc.update(overrides)
    return doc


def bits(x: np.generic) -> bytes:
    return np.asarray(x).tobytes()


# ------------------------------------------------------------------------------------------
# data types
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMED_TYPES)
def test_core_data_types_round_trip(name: str) -> None:
    dt = CORE_DATA_TYPES[name]
    assert dt == np.dtype(name)
    assert dt.isnative
    assert parse_data_type(name) == (name, dt)
    assert data_type_name(dt) == name
    assert data_type_name(dt.newbyteorder(">")) == name
    assert data_type_name(dt.str) == name


def test_core_data_types_mapping() -> None:
    assert sorted(CORE_DATA_TYPES) == sorted(NAMED_TYPES)
    assert len(CORE_DATA_TYPES) == 14
    assert CORE_DATA_TYPES["r8"] == np.dtype("V1")
    assert CORE_DATA_TYPES["r24"] == np.dtype("V3")
    assert "r16" in CORE_DATA_TYPES
    assert "r12" not in CORE_DATA_TYPES
    assert "r0" not in CORE_DATA_TYPES


def test_raw_data_types() -> None:
    assert parse_data_type("r8") == ("r8", np.dtype("V1"))
    assert parse_data_type("r128") == ("r128", np.dtype("V16"))
    # numpy void is zarr-python's raw_bytes (zarr-python 3.1 does not read r<N>)
    assert data_type_name(np.dtype("V3")) == {
        "name": "raw_bytes",
        "configuration": {"length_bytes": 3},
    }
    for bad in ("r0", "r12", "r7"):
        with pytest.raises(MetadataError, match="multiple of 8"):
            parse_data_type(bad)


def test_data_type_name_python_types() -> None:
    assert data_type_name(bool) == "bool"
    assert data_type_name(float) == "float64"
    assert data_type_name("<u2") == "uint16"
    assert data_type_name(">c8") == "complex64"
    assert data_type_name(np.float16) == "float16"


@pytest.mark.parametrize(
    "dtype",
    [
        "f16",
        "c32",
        ("i4", (2,)),
        [("a", "i4", (2,))],
        np.dtype([("a", "u1"), ("b", "<i4")], align=True),
        [("a", "O")],
        "V0",
    ],
)
def test_data_type_name_unsupported(dtype: Any) -> None:
    # (U, S, O, M8, m8 and structured dtypes are extension data types now: see
    # test_dtypes_metadata.py)
    try:
        np.dtype(dtype)
    except TypeError:
        pytest.skip("dtype not available on this platform")
    with pytest.raises(UnsupportedError):
        data_type_name(dtype)


def test_parse_data_type_forms() -> None:
    assert parse_data_type({"name": "float32"}) == ("float32", np.dtype("float32"))
    with pytest.raises(UnsupportedError, match="'posit16'"):
        parse_data_type("posit16")
    with pytest.raises(UnsupportedError, match="'my.type'"):
        parse_data_type({"name": "my.type", "configuration": {"x": 1}})
    with pytest.raises(MetadataError, match="scale_factor"):
        parse_data_type({"name": "numpy.datetime64", "configuration": {"unit": "s"}})
    with pytest.raises(MetadataError, match="takes no configuration"):
        parse_data_type({"name": "float32", "configuration": {"x": 1}})
    with pytest.raises(MetadataError, match="must_understand"):
        parse_data_type({"name": "float32", "must_understand": False})
    with pytest.raises(MetadataError, match="data_type"):
        parse_data_type(3)
    with pytest.raises(MetadataError, match="^zarr.json at 'x/y': data_type"):
        parse_data_type(None, path="x/y")


# ------------------------------------------------------------------------------------------
# fill values
# ------------------------------------------------------------------------------------------

FILL_CASES: list[tuple[str, Any, Any]] = [
    # (data type, JSON value, expected numpy value)
    ("bool", True, np.True_),
    ("bool", False, np.False_),
    ("int8", -128, np.int8(-128)),
    ("int8", 127, np.int8(127)),
    ("uint8", 255, np.uint8(255)),
    ("int16", -32768, np.int16(-32768)),
    ("uint16", 65535, np.uint16(65535)),
    ("int32", 2**31 - 1, np.int32(2**31 - 1)),
    ("uint32", 2**32 - 1, np.uint32(2**32 - 1)),
    ("int64", -(2**63), np.int64(-(2**63))),
    ("uint64", 2**64 - 1, np.uint64(2**64 - 1)),
    ("float16", 1.5, np.float16(1.5)),
    ("float16", 0.0999755859375, np.float16(0.1)),
    ("float32", 0.10000000149011612, np.float32(0.1)),
    ("float32", -0.0, np.float32(-0.0)),
    ("float64", 1e300, np.float64(1e300)),
    ("float64", 5e-324, np.float64(5e-324)),
    ("float32", "Infinity", np.float32(np.inf)),
    ("float64", "-Infinity", np.float64(-np.inf)),
    ("complex64", [1.0, 2.0], np.complex64(1 + 2j)),
    ("complex128", ["Infinity", -0.5], np.complex128(complex(np.inf, -0.5))),
    ("r16", [1, 255], np.frombuffer(b"\x01\xff", dtype="V2")[0]),
    ("r8", [0], np.zeros((), dtype="V1")[()]),
]


@pytest.mark.parametrize(("data_type", "value", "expected"), FILL_CASES)
def test_fill_value_round_trip(data_type: str, value: Any, expected: np.generic) -> None:
    dt = CORE_DATA_TYPES[data_type]
    parsed = parse_fill_value(value, data_type, dt)
    assert parsed.dtype == dt
    assert bits(parsed) == bits(expected)
    out = fill_value_to_json(parsed, data_type)
    assert out == value
    assert type(out) is type(value)
    assert bits(parse_fill_value(out, data_type, dt)) == bits(parsed)
    assert fill_value_bytes(parsed, dt) == np.asarray(expected, dtype=dt).tobytes()


@pytest.mark.parametrize(
    ("data_type", "canonical"),
    [("float16", 0x7E00), ("float32", 0x7FC00000), ("float64", 0x7FF8000000000000)],
)
def test_fill_value_nan_forms(data_type: str, canonical: int) -> None:
    dt = CORE_DATA_TYPES[data_type]
    udt = np.dtype(FLOAT_BITS[data_type])
    ndigits = 2 * dt.itemsize
    nan = parse_fill_value("NaN", data_type, dt)
    assert np.isnan(nan)
    assert int(np.asarray(nan).view(udt)) == canonical
    assert fill_value_to_json(nan, data_type) == "NaN"
    # the canonical NaN spelled in hex is written back as "NaN"
    hex_canonical = f"0x{canonical:0{ndigits}x}"
    assert fill_value_to_json(parse_fill_value(hex_canonical, data_type, dt), data_type) == "NaN"
    # a NaN with a payload, and a negative NaN, keep their bits through hex
    for pattern in (canonical | 1, canonical | (1 << (8 * dt.itemsize - 1)), canonical + 5):
        text = f"0x{pattern:0{ndigits}x}"
        parsed = parse_fill_value(text, data_type, dt)
        assert int(np.asarray(parsed).view(udt)) == pattern
        assert fill_value_to_json(parsed, data_type) == text
        assert fill_value_bytes(parsed, dt) == np.array(pattern, dtype=udt).tobytes()
    # upper-case hex is accepted; written back in lower case
    upper = "0x" + f"{canonical | 1:0{ndigits}x}".upper()
    assert fill_value_to_json(parse_fill_value(upper, data_type, dt), data_type) == upper.lower()
    # hex of a finite number
    one = np.asarray(dt.type(1.0)).view(udt)
    assert parse_fill_value(f"0x{int(one):0{ndigits}x}", data_type, dt) == 1.0
    # wrong number of digits
    for wrong in (ndigits - 1, ndigits + 1, 2 * ndigits):
        with pytest.raises(MetadataError, match=f"exactly {ndigits} hex digits"):
            parse_fill_value("0x" + "7" * wrong, data_type, dt)


def test_fill_value_numpy_nan_payloads() -> None:
    # np.nan is the canonical NaN; -np.nan is not and must keep its sign bit.
    assert fill_value_to_json(np.float64(np.nan), "float64") == "NaN"
    neg = np.float64(-np.nan)
    assert fill_value_to_json(neg, "float64") == "0xfff8000000000000"
    assert fill_value_to_json(np.float32(np.nan), "float32") == "NaN"


@given(st.integers(min_value=0, max_value=2**16 - 1))
def test_float16_any_bits_round_trip(pattern: int) -> None:
    x = np.array(pattern, dtype=np.uint16).view(np.float16)[()]
    out = fill_value_to_json(x, "float16")
    back = parse_fill_value(json.loads(json.dumps(out)), "float16", np.dtype("float16"))
    assert bits(back) == bits(x)


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(0, 2**32 - 1))
def test_complex64_any_bits_round_trip(a: int, b: int) -> None:
    x = np.array([a, b], dtype=np.uint32).view(np.complex64)[0]
    out = fill_value_to_json(x, "complex64")
    back = parse_fill_value(json.loads(json.dumps(out)), "complex64", np.dtype("complex64"))
    assert bits(back) == bits(x)


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_float64_any_bits_round_trip(pattern: int) -> None:
    x = np.array(pattern, dtype=np.uint64).view(np.float64)[()]
    out = fill_value_to_json(x, "float64")
    text = dumps({"fill_value": out})
    back = parse_fill_value(json.loads(text)["fill_value"], "float64", np.dtype("float64"))
    assert bits(back) == bits(x)
    assert fill_value_bytes(back, np.dtype("float64")) == np.uint64(pattern).tobytes()


def test_complex_nan_components() -> None:
    dt = np.dtype("complex64")
    x = parse_fill_value(["NaN", "0x7fc00001"], "complex64", dt)
    parts = np.asarray(x).reshape(1).view(np.uint32)
    assert list(parts) == [0x7FC00000, 0x7FC00001]
    assert fill_value_to_json(x, "complex64") == ["NaN", "0x7fc00001"]
    assert fill_value_bytes(x, dt) == np.array(parts, dtype=np.uint32).tobytes()
    with pytest.raises(MetadataError, match="8 hex digits"):
        parse_fill_value(["0x7ff8000000000000", 0], "complex64", dt)


def test_float_numbers_are_rounded() -> None:
    assert parse_fill_value(1e40, "float32", np.dtype("float32")) == np.inf
    assert parse_fill_value(70000, "float16", np.dtype("float16")) == np.inf
    assert parse_fill_value(3, "float64", np.dtype("float64")) == 3.0
    assert parse_fill_value(10**400, "float64", np.dtype("float64")) == np.inf


BAD_FILLS: list[tuple[str, Any, str]] = [
    ("bool", 0, "true or false"),
    ("bool", "true", "true or false"),
    ("bool", None, "true or false"),
    ("int8", 128, "out of range"),
    ("int8", -129, "out of range"),
    ("uint8", -1, "out of range"),
    ("uint64", 2**64, "out of range"),
    ("int64", 2**63, "out of range"),
    ("int32", 1.5, "expected an integer"),
    ("int32", 1.5, "expected an integer"),
    ("int32", "1", "expected an integer"),
    ("int32", True, "expected an integer"),
    ("int32", None, "expected an integer"),
    ("float32", "nan", "not a valid float"),
    ("float32", "inf", "not a valid float"),
    ("float32", "1.5", "not a valid float"),
    ("float32", "0x7fc0000g", "not a valid float"),
    ("float32", True, "expected a number"),
    ("float32", None, "expected a number"),
    ("float32", [1.0], "expected a number"),
    ("float64", "0x7fc00000", "exactly 16 hex digits"),
    ("complex64", 1.0, "two-element array"),
    ("complex64", [1.0, 2.0, 3.0], "two-element array"),
    ("complex128", [1.0, "x"], r"fill_value\[1\]"),
    ("r16", [1], "array of 2 integers"),
    ("r16", [1, 256], "array of 2 integers"),
    ("r16", "AAAA", "array of 2 integers"),  # base64 (as tensorstore writes) of 3 bytes
    ("r16", "A", "not valid base64"),
]


@pytest.mark.parametrize(("data_type", "value", "message"), BAD_FILLS)
def test_bad_fill_values(data_type: str, value: Any, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        parse_fill_value(value, data_type, CORE_DATA_TYPES[data_type])
    with pytest.raises(MetadataError, match="^zarr.json at 'p': fill_value"):
        ArrayMetadataV3.from_json(
            base_doc(data_type=data_type, fill_value=value, codecs=[{"name": "bytes"}]),
            path="p",
        )


def test_fill_value_bytes_is_native_order() -> None:
    assert fill_value_bytes(np.int32(1), np.dtype("int32")) == np.int32(1).tobytes()
    assert fill_value_bytes(np.int32(1), np.dtype(">i4")) == np.int32(1).tobytes()
    assert fill_value_bytes(7, np.dtype("uint16")) == np.uint16(7).tobytes()
    assert fill_value_bytes(np.float16(2.0), "float16") == np.float16(2.0).tobytes()
    assert fill_value_bytes(True, np.dtype(bool)) == b"\x01"
    assert fill_value_bytes(b"\x01\x02\x03", np.dtype("V3")) == b"\x01\x02\x03"


def test_cast_fill_value() -> None:
    assert bits(cast_fill_value(None, "float64", np.dtype("f8"))) == bits(np.float64(0))
    assert bits(cast_fill_value(None, "complex64", np.dtype("c8"))) == bits(np.complex64(0))
    assert cast_fill_value(None, "r24", np.dtype("V3")).tobytes() == b"\0\0\0"
    assert cast_fill_value(3.0, "int8", np.dtype("i1")) == 3
    assert cast_fill_value("NaN", "float32", np.dtype("f4")).dtype == np.float32
    assert cast_fill_value(1 + 2j, "complex128", np.dtype("c16")) == 1 + 2j
    payload = np.array(0x7FC00123, dtype=np.uint32).view(np.float32)[()]
    assert bits(cast_fill_value(payload, "float32", np.dtype("f4"))) == bits(payload)
    with pytest.raises(MetadataError, match="out of range"):
        cast_fill_value(300, "uint8", np.dtype("u1"))
    with pytest.raises(MetadataError, match="not an integer"):
        cast_fill_value(1.5, "int8", np.dtype("i1"))


# ------------------------------------------------------------------------------------------
# documents written by zarr-python
# ------------------------------------------------------------------------------------------

ZARR_ARRAYS: list[dict[str, Any]] = [
    {"shape": (100, 50), "chunks": (10, 7), "dtype": "float64"},
    {"shape": (5,), "chunks": (2,), "dtype": "uint8", "fill_value": 7},
    {"shape": (5,), "chunks": (5,), "dtype": "bool", "fill_value": True},
    {"shape": (), "chunks": (), "dtype": "int32", "fill_value": -3},
    {"shape": (0, 4), "chunks": (1, 4), "dtype": "int64"},
    {"shape": (8,), "chunks": (4,), "dtype": "float32", "fill_value": float("nan")},
    {"shape": (8,), "chunks": (4,), "dtype": "float16", "fill_value": float("-inf")},
    {"shape": (8,), "chunks": (4,), "dtype": "float32", "fill_value": 0.1},
    {"shape": (8,), "chunks": (4,), "dtype": "complex128", "fill_value": complex(np.nan, 2)},
    {"shape": (8,), "chunks": (4,), "dtype": "uint64", "fill_value": 2**64 - 1},
    {
        "shape": (6, 6),
        "chunks": (3, 3),
        "dtype": "int16",
        "dimension_names": ["y", None],
        "attributes": {"units": "m", "nested": {"a": [1, 2.5, None, "é"]}},
    },
    {"shape": (6,), "chunks": (3,), "dtype": "int16", "chunk_key_encoding": {"name": "v2"}},
    {
        "shape": (6,),
        "chunks": (3,),
        "dtype": "int16",
        "chunk_key_encoding": {"name": "v2", "separator": "/"},
    },
    {
        "shape": (6,),
        "chunks": (3,),
        "dtype": "uint32",
        "chunk_key_encoding": {"name": "default", "separator": "."},
    },
    {
        "shape": (16, 16),
        "chunks": (4, 4),
        "dtype": "float32",
        "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}],
        "serializer": {"name": "bytes", "configuration": {"endian": "big"}},
        "compressors": [
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3}},
            {"name": "crc32c", "configuration": {}},
        ],
    },
    {
        "shape": (16, 16),
        "chunks": (4, 4),
        "shards": (8, 8),
        "dtype": "uint16",
        "compressors": {"name": "gzip", "configuration": {"level": 9}},
    },
    {"shape": (9,), "chunks": (3,), "dtype": "int8", "compressors": None},
]


@pytest.mark.parametrize("kwargs", ZARR_ARRAYS, ids=lambda k: f"{k['dtype']}-{len(k)}")
def test_zarr_python_documents_round_trip(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    raw, doc = zarr_json(tmp_path, **kwargs)
    meta = ArrayMetadataV3.from_json(loads(raw), path="a")
    assert meta.shape == tuple(kwargs["shape"])
    assert meta.dtype == np.dtype(kwargs["dtype"])
    assert meta.data_type == doc["data_type"]
    assert meta.chunk_shape == tuple(doc["chunk_grid"]["configuration"]["chunk_shape"])
    assert meta.chunk_key_encoding == doc["chunk_key_encoding"]
    assert meta.attributes == doc["attributes"]
    assert all(set(c) == {"name", "configuration"} for c in meta.codecs)
    if "dimension_names" in kwargs:
        assert meta.dimension_names == tuple(kwargs["dimension_names"])
    else:
        assert meta.dimension_names is None
    out = meta.to_json()
    assert out == doc
    assert list(out) == list(doc)  # member order too
    assert dumps(out) == raw  # byte-identical zarr.json
    assert parse_node(doc) == meta
    core = meta.to_core_json()
    assert core["shape"] == list(kwargs["shape"])
    assert core["data_type"] == doc["data_type"]
    assert core["chunk_key_encoding"] == {
        "name": doc["chunk_key_encoding"]["name"],
        "separator": doc["chunk_key_encoding"]["configuration"]["separator"],
    }
    assert all(set(c) == {"name", "configuration"} for c in core["codecs"])
    # fill bytes equal what zarr-python reads for an unwritten chunk
    arr = zarr.open_array(str(tmp_path / "a"), mode="r")
    expected = np.asarray(arr.fill_value, dtype=meta.dtype).tobytes()
    got = meta.fill_bytes()
    if meta.dtype.kind in "fc" and np.isnan(np.asarray(arr.fill_value)).any():
        assert np.isnan(np.frombuffer(got, dtype=meta.dtype)).any()
    else:
        assert got == expected


def test_zarr_python_fields(tmp_path: Path) -> None:
    _, doc = zarr_json(
        tmp_path,
        shape=(6, 4),
        chunks=(3, 2),
        dtype="<f4",
        fill_value=-1.5,
        dimension_names=["t", "x"],
        chunk_key_encoding={"name": "v2"},
    )
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.shape == (6, 4)
    assert meta.chunk_shape == (3, 2)
    assert meta.data_type == "float32"
    assert meta.fill_value == np.float32(-1.5)
    assert meta.fill_value.dtype == np.float32
    assert meta.dimension_names == ("t", "x")
    assert meta.chunk_key_encoding == {"name": "v2", "configuration": {"separator": "."}}
    assert meta.codecs == [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
    ]
    assert meta.encode_chunk_key((1, 0)) == "1.0"
    assert meta.storage_transformers == []
    assert meta.extra == {}
    assert meta.to_core_json() == {
        "shape": [6, 4],
        "chunk_shape": [3, 2],
        "data_type": "float32",
        "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
        ],
        "chunk_key_encoding": {"name": "v2", "separator": "."},
    }


def test_chunk_key_encoding_keys() -> None:
    meta = ArrayMetadataV3.from_json(base_doc())
    assert meta.encode_chunk_key((1, 23)) == "c/1/23"
    meta0 = ArrayMetadataV3.from_json(
        base_doc(
            shape=[],
            chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}},
        )
    )
    assert meta0.encode_chunk_key(()) == "c"
    v2 = ArrayMetadataV3.from_json(
        base_doc(
            shape=[],
            chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}},
            chunk_key_encoding={"name": "v2"},
        )
    )
    assert v2.encode_chunk_key(()) == "0"
    dot = ArrayMetadataV3.from_json(
        base_doc(chunk_key_encoding={"name": "default", "configuration": {"separator": "."}})
    )
    assert dot.encode_chunk_key((1, 23)) == "c.1.23"


def test_chunk_key_encoding_defaults() -> None:
    meta = ArrayMetadataV3.from_json(base_doc(chunk_key_encoding={"name": "default"}))
    assert meta.chunk_key_encoding == {"name": "default", "configuration": {"separator": "/"}}
    meta = ArrayMetadataV3.from_json(base_doc(chunk_key_encoding="v2"))
    assert meta.chunk_key_encoding == {"name": "v2", "configuration": {"separator": "."}}


def test_zarr_python_group_documents(tmp_path: Path) -> None:
    root = tmp_path / "g"
    group = zarr.create_group(store=str(root), attributes={"title": "x", "n": [1, 2]})
    raw = (root / "zarr.json").read_bytes()
    meta = GroupMetadataV3.from_json(loads(raw), path="")
    assert meta.attributes == {"title": "x", "n": [1, 2]}
    assert meta.consolidated_metadata is None
    assert dumps(meta.to_json()) == raw

    group.create_array("arr", shape=(3,), dtype="int16")
    group.create_group("sub")
    zarr.consolidate_metadata(str(root))
    raw = (root / "zarr.json").read_bytes()
    doc = json.loads(raw)
    meta = parse_node(doc, path="")
    assert isinstance(meta, GroupMetadataV3)
    assert meta.consolidated_metadata is not None
    assert set(meta.consolidated_metadata["metadata"]) == {"arr", "sub"}
    assert meta.to_json() == doc
    assert list(meta.to_json()) == list(doc)
    assert dumps(meta.to_json()) == raw
    inner = parse_node(meta.consolidated_metadata["metadata"]["arr"], path="arr")
    assert isinstance(inner, ArrayMetadataV3)
    assert inner.data_type == "int16"


# ------------------------------------------------------------------------------------------
# zarr-python and tensorstore read what zarrox writes
# ------------------------------------------------------------------------------------------

WRITE_CASES: list[dict[str, Any]] = [
    {"dtype": "float32", "fill_value": np.array(0x7FC00123, np.uint32).view(np.float32)[()]},
    {"dtype": "float64", "fill_value": -np.inf, "compressors": {"name": "gzip"}},
    {"dtype": "int16", "fill_value": -5, "chunk_key_encoding": {"name": "v2", "separator": "/"}},
    {"dtype": "uint8", "fill_value": 200, "compressors": [{"name": "blosc"}, "crc32c"]},
    {"dtype": "complex64", "fill_value": 1 - 2j, "dimension_names": ["a", None]},
    {"dtype": "bool", "fill_value": True, "compressors": None},
    {
        "dtype": "float32",
        "fill_value": 2.5,
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {"chunk_shape": [2, 3], "codecs": [{"name": "bytes"}]},
            }
        ],
    },
]


@pytest.mark.parametrize("case", WRITE_CASES, ids=lambda c: c["dtype"])
def test_written_documents_are_read_by_zarr_python(tmp_path: Path, case: dict[str, Any]) -> None:
    case = dict(case)
    dtype = case.pop("dtype")
    meta = ArrayMetadataV3.create(
        shape=(4, 6), dtype=dtype, chunk_shape=(4, 6), attributes={"k": "v"}, **case
    )
    (tmp_path / "zarr.json").write_bytes(dumps(meta.to_json()))
    arr = zarr.open_array(str(tmp_path), mode="r")
    assert arr.shape == (4, 6)
    assert arr.dtype == np.dtype(dtype)
    assert arr.attrs["k"] == "v"
    assert json.loads(json.dumps(arr.metadata.to_dict()["codecs"])) == meta.to_json()["codecs"]
    data = arr[...]
    fill = np.frombuffer(meta.fill_bytes(), dtype=meta.dtype)[0]
    if meta.dtype.kind in "fc" and np.isnan(fill):
        assert np.isnan(data).all()
    else:
        assert (data == fill).all()


@pytest.mark.parametrize("case", WRITE_CASES, ids=lambda c: c["dtype"])
def test_written_documents_are_read_by_tensorstore(tmp_path: Path, case: dict[str, Any]) -> None:
    ts = pytest.importorskip("tensorstore")
    case = dict(case)
    dtype = case.pop("dtype")
    meta = ArrayMetadataV3.create(shape=(4, 6), dtype=dtype, chunk_shape=(4, 6), **case)
    (tmp_path / "zarr.json").write_bytes(dumps(meta.to_json()))
    arr = ts.open(
        {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}
    ).result()
    assert tuple(arr.shape) == (4, 6)
    data = arr.read().result()
    assert data.dtype == np.dtype(dtype)
    # tensorstore keeps the exact fill bits, NaN payloads included
    assert data.reshape(-1)[:1].tobytes() == meta.fill_bytes()


# ------------------------------------------------------------------------------------------
# malformed documents
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member",
    [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
    ],
)
def test_missing_member(member: str) -> None:
    doc = base_doc()
    del doc[member]
    with pytest.raises(MetadataError, match=f"^zarr.json at 'a/b': missing member '{member}'"):
        ArrayMetadataV3.from_json(doc, path="a/b")


BAD_MEMBERS: list[tuple[dict[str, Any], str]] = [
    ({"zarr_format": 2}, "zarr_format"),
    ({"zarr_format": "3"}, "zarr_format"),
    ({"node_type": "group"}, "node_type"),
    ({"shape": [10, -1]}, "shape"),
    ({"shape": [10, 2.0]}, "shape"),
    ({"shape": "10"}, "shape"),
    ({"shape": [10, True]}, "shape"),
    ({"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}}}, "chunk_shape"),
    ({"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, -2]}}}, "chunk_shape"),
    ({"chunk_grid": {"name": "regular", "configuration": {}}}, "chunk_shape"),
    ({"chunk_grid": {"name": "regular"}}, "chunk_shape"),
    ({"chunk_grid": "regular"}, "chunk_grid"),
    (
        {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5], "x": 1}}},
        "chunk_grid.configuration",
    ),
    (
        {
            "chunk_grid": {
                "name": "regular",
                "must_understand": False,
                "configuration": {"chunk_shape": [5, 5]},
            }
        },
        "must_understand",
    ),
    ({"chunk_key_encoding": {"name": "default", "configuration": {"separator": "-"}}}, "separator"),
    ({"chunk_key_encoding": 5}, "chunk_key_encoding"),
    (
        {"chunk_key_encoding": {"name": "v2", "configuration": {"sep": "."}}},
        "chunk_key_encoding.configuration",
    ),
    ({"fill_value": None}, "fill_value"),
    ({"codecs": []}, "codecs"),
    ({"codecs": {"name": "bytes"}}, "codecs"),
    ({"codecs": [{"name": "bytes"}]}, "endian"),
    ({"codecs": [{"name": "bytes", "configuration": {"endian": "middle"}}]}, "endian"),
    ({"codecs": [{"configuration": {}}]}, "name"),
    (
        {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}, "extra": 1}]},
        r"codecs\[0\]",
    ),
    ({"codecs": [{"name": "zstd", "configuration": {"level": 1}}]}, "array->bytes"),
    (
        {
            "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "bytes", "configuration": {"endian": "little"}},
            ]
        },
        "exactly one",
    ),
    (
        {
            "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "transpose", "configuration": {"order": [1, 0]}},
            ]
        },
        "before",
    ),
    (
        {
            "codecs": [
                {"name": "gzip", "configuration": {"level": 1}},
                {"name": "bytes", "configuration": {"endian": "little"}},
            ]
        },
        "after",
    ),
    (
        {
            "codecs": [
                {"name": "transpose", "configuration": {"order": [0, 0]}},
                {"name": "bytes", "configuration": {"endian": "little"}},
            ]
        },
        "permutation",
    ),
    (
        {
            "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "gzip", "configuration": {"level": 10}},
            ]
        },
        "level",
    ),
    (
        {
            "codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "gzip", "configuration": {"lvl": 1}},
            ]
        },
        "lvl",
    ),
    ({"attributes": []}, "attributes"),
    ({"dimension_names": ["x"]}, "dimension_names"),
    ({"dimension_names": ["x", 1]}, "dimension_names"),
    ({"dimension_names": "xy"}, "dimension_names"),
    ({"storage_transformers": {}}, "storage_transformers"),
]


@pytest.mark.parametrize(("overrides", "member"), BAD_MEMBERS)
def test_malformed_member(overrides: dict[str, Any], member: str) -> None:
    with pytest.raises(MetadataError, match=member) as info:
        ArrayMetadataV3.from_json(base_doc(**overrides), path="x/y")
    assert str(info.value).startswith("zarr.json at 'x/y': ")


def test_not_an_object() -> None:
    with pytest.raises(MetadataError, match="^zarr.json at 'a': expected a JSON object"):
        ArrayMetadataV3.from_json([], path="a")  # type: ignore[arg-type]
    with pytest.raises(MetadataError, match="node_type"):
        parse_node({"zarr_format": 3, "node_type": "table"})
    with pytest.raises(MetadataError, match="missing member 'node_type'"):
        parse_node({"zarr_format": 3})
    with pytest.raises(MetadataError, match="invalid JSON"):
        loads(b"{", path="a")
    with pytest.raises(MetadataError, match="expected a JSON object"):
        loads(b"[1]", path="a")


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"data_type": "posit16"}, "'posit16'"),
        # rectilinear grids are read (test_rectilinear.py); other grid extensions are not
        ({"chunk_grid": {"name": "variable", "configuration": {}}}, "'variable'"),
        ({"chunk_key_encoding": {"name": "suffix"}}, "'suffix'"),
        (
            {
                "codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "numcodecs.msgpack2", "configuration": {}},
                ]
            },
            "'numcodecs.msgpack2'",
        ),
        ({"storage_transformers": [{"name": "x"}]}, "storage transformer 'x'"),
        (
            {
                "codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "blosc", "configuration": {"cname": "snappy"}},
                ]
            },
            "snappy",
        ),
    ],
)
def test_unsupported(overrides: dict[str, Any], match: str) -> None:
    with pytest.raises(UnsupportedError, match=match) as info:
        ArrayMetadataV3.from_json(base_doc(**overrides), path="n")
    assert str(info.value).startswith("zarr.json at 'n': ")


# ------------------------------------------------------------------------------------------
# extensions: must_understand
# ------------------------------------------------------------------------------------------


def test_must_understand_false_member_is_preserved(tmp_path: Path) -> None:
    ext = {"must_understand": False, "name": "my.ext", "configuration": {"x": [1, 2]}}
    doc = base_doc(my_extension=ext)
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.extra == {"my_extension": ext}
    out = meta.to_json()
    assert out == doc
    assert list(out)[-1] == "my_extension"
    # zarr-python reads it and writes it at the same place
    (tmp_path / "zarr.json").write_bytes(dumps(out))
    arr = zarr.open_array(str(tmp_path), mode="r")
    assert arr.metadata.to_dict()["my_extension"] == ext
    assert json.loads(json.dumps(arr.metadata.to_dict())) == out


def test_must_understand_member_rejected() -> None:
    for value in ({"name": "x"}, {"must_understand": True}, 5, "x", {"must_understand": "false"}):
        with pytest.raises(MetadataError, match="unknown member 'ext'") as info:
            ArrayMetadataV3.from_json(base_doc(ext=value), path="a/b")
        assert str(info.value).startswith("zarr.json at 'a/b': ")
    with pytest.raises(MetadataError, match="unknown member 'ext'"):
        GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group", "ext": 1})


def test_group_must_understand_false_member_is_preserved() -> None:
    doc = {
        "attributes": {"a": 1},
        "zarr_format": 3,
        "node_type": "group",
        "ext": {"must_understand": False, "v": 1},
    }
    meta = GroupMetadataV3.from_json(doc)
    assert meta.extra == {"ext": {"must_understand": False, "v": 1}}
    assert meta.to_json() == doc
    assert list(meta.to_json()) == list(doc)
    assert GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group"}).to_json() == {
        "attributes": {},
        "zarr_format": 3,
        "node_type": "group",
    }
    with pytest.raises(MetadataError, match="consolidated_metadata"):
        GroupMetadataV3.from_json(
            {"zarr_format": 3, "node_type": "group", "consolidated_metadata": {"kind": "inline"}}
        )


def test_ignorable_codec_and_storage_transformer() -> None:
    ignorable = {"name": "my.checksum", "configuration": {"a": 1}, "must_understand": False}
    transformer = {"name": "my.cache", "must_understand": False}
    doc = base_doc(
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, ignorable],
        storage_transformers=[transformer],
    )
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.to_json() == doc
    assert meta.storage_transformers == [transformer]
    assert meta.to_core_json()["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]


def test_shorthand_codec_names() -> None:
    doc = base_doc(codecs=[{"name": "bytes", "configuration": {"endian": "big"}}, "crc32c"])
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.codecs[1] == {"name": "crc32c", "configuration": {}}
    assert meta.to_json()["codecs"][1] == {"name": "crc32c"}
    assert meta.to_core_json()["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "crc32c", "configuration": {}},
    ]


def test_core_json_fills_defaults_recursively() -> None:
    doc = base_doc(
        data_type="uint8",
        codecs=[
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [5, 1],
                    "codecs": [{"name": "bytes"}, {"name": "blosc", "configuration": {}}],
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                },
            },
            {"name": "gzip"},
        ],
    )
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.to_json() == doc  # nothing filled in on the document
    assert meta.to_core_json()["codecs"] == [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [5, 1],
                "codecs": [
                    {"name": "bytes", "configuration": {}},
                    {
                        "name": "blosc",
                        "configuration": {
                            "typesize": 1,
                            "cname": "zstd",
                            "clevel": 5,
                            "shuffle": "bitshuffle",
                            "blocksize": 0,
                        },
                    },
                ],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c", "configuration": {}},
                ],
                "index_location": "end",
            },
        },
        {"name": "gzip", "configuration": {"level": 5}},
    ]


@pytest.mark.parametrize(
    ("sharding", "match"),
    [
        (
            {
                "chunk_shape": [3, 5],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            },
            "divide",
        ),
        ({"chunk_shape": [5], "codecs": [], "index_codecs": []}, "dimension"),
        (
            {
                "chunk_shape": [5, 5],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            },
            "'codecs'",
        ),
        (
            {
                "chunk_shape": [5, 5],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "zstd", "configuration": {"level": 0}},
                ],
            },
            "index_codecs",
        ),
        (
            {
                "chunk_shape": [5, 5],
                "codecs": [{"name": "bytes"}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            },
            "endian",
        ),
        (
            {
                "chunk_shape": [5, 5],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_location": "middle",
            },
            "index_location",
        ),
    ],
)
def test_bad_sharding(sharding: dict[str, Any], match: str) -> None:
    doc = base_doc(codecs=[{"name": "sharding_indexed", "configuration": sharding}])
    with pytest.raises(MetadataError, match=match):
        ArrayMetadataV3.from_json(doc, path="s")


# ------------------------------------------------------------------------------------------
# dumps
# ------------------------------------------------------------------------------------------


def test_dumps_never_writes_bare_nan() -> None:
    meta = ArrayMetadataV3.create(shape=(2,), dtype="f8", chunk_shape=(2,), fill_value=np.nan)
    text = dumps(meta.to_json()).decode()
    assert '"fill_value": "NaN"' in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    with pytest.raises(MetadataError, match="attributes.x"):
        dumps({"attributes": {"x": float("nan")}})
    with pytest.raises(MetadataError, match=r"a\[1\]"):
        dumps({"a": [1.0, np.float32(np.inf)]})
    assert dumps({"a": np.int64(3), "b": np.arange(2), "c": (1, 2)}) == (
        b'{\n  "a": 3,\n  "b": [\n    0,\n    1\n  ],\n  "c": [\n    1,\n    2\n  ]\n}'
    )
    # zarr-python writes bare NaN in attributes: we read it
    assert np.isnan(loads(b'{"x": NaN}')["x"])


def test_create_matches_zarr_python(tmp_path: Path) -> None:
    raw, doc = zarr_json(
        tmp_path,
        shape=(30, 20),
        chunks=(10, 10),
        dtype="int32",
        fill_value=-1,
        attributes={"a": [1]},
        dimension_names=("y", "x"),
    )
    meta = ArrayMetadataV3.create(
        shape=(30, 20),
        dtype=np.int32,
        chunk_shape=(10, 10),
        fill_value=-1,
        attributes={"a": [1]},
        dimension_names=["y", "x"],
    )
    assert dumps(meta.to_json()) == raw
    assert meta == ArrayMetadataV3.from_json(doc)
    with pytest.raises(MetadataError, match="differ in length"):
        ArrayMetadataV3.create(shape=(3,), dtype="i4", chunk_shape=(1, 1))


def test_equality_and_copy() -> None:
    a = ArrayMetadataV3.create(shape=(2,), dtype="f4", chunk_shape=(1,), fill_value=np.nan)
    b = copy.deepcopy(a)
    assert a == b
    b.attributes["x"] = 1
    assert a != b


# ------------------------------------------------------------------------------------------
# build_codecs vs zarr-python create_array
# ------------------------------------------------------------------------------------------

CODEC_CASES: list[dict[str, Any]] = [
    {"dtype": "uint8"},
    {"dtype": "int8"},
    {"dtype": "bool"},
    {"dtype": "int16"},
    {"dtype": "float64"},
    {"dtype": "complex128"},
    {"dtype": "float32", "compressors": None},
    {"dtype": "float32", "compressors": []},
    {"dtype": "uint16", "serializer": {"name": "bytes", "configuration": {"endian": "big"}}},
    {"dtype": "uint16", "serializer": {"name": "bytes"}},
    {"dtype": "uint8", "serializer": {"name": "bytes", "configuration": {"endian": "big"}}},
    {"dtype": "int32", "compressors": {"name": "gzip", "configuration": {"level": 1}}},
    {"dtype": "int32", "compressors": [{"name": "gzip", "configuration": {}}]},
    {"dtype": "int32", "compressors": [{"name": "zstd", "configuration": {"level": 7}}]},
    {"dtype": "int32", "compressors": [{"name": "zstd", "configuration": {"checksum": True}}]},
    {"dtype": "float64", "compressors": [{"name": "blosc", "configuration": {}}]},
    {"dtype": "uint8", "compressors": [{"name": "blosc", "configuration": {}}]},
    {"dtype": "bool", "compressors": [{"name": "blosc", "configuration": {"cname": "lz4"}}]},
    {
        "dtype": "float32",
        "compressors": [
            {
                "name": "blosc",
                "configuration": {"cname": "zlib", "clevel": 9, "shuffle": "noshuffle"},
            }
        ],
    },
    {"dtype": "int64", "compressors": [{"name": "blosc", "configuration": {"typesize": 2}}]},
    {"dtype": "float32", "compressors": [{"name": "crc32c"}]},
    {
        "dtype": "float32",
        "compressors": [{"name": "gzip", "configuration": {}}, {"name": "crc32c"}],
    },
    {"dtype": "float32", "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}]},
    {"dtype": "float32", "filters": {"name": "transpose", "configuration": {"order": (1, 0)}}},
    {
        "dtype": "int16",
        "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}],
        "serializer": {"name": "bytes", "configuration": {"endian": "big"}},
        "compressors": [{"name": "blosc", "configuration": {"cname": "lz4hc"}}, {"name": "crc32c"}],
    },
]


@pytest.mark.parametrize("case", CODEC_CASES)
def test_build_codecs_matches_zarr_python(case: dict[str, Any]) -> None:
    serializer = case.get("serializer")
    if (
        ZARR_VERSION >= (3, 2)
        and serializer == {"name": "bytes"}
        and np.dtype(case["dtype"]).itemsize > 1
    ):
        # zarr-python >= 3.2 wants "endian" for multi-byte types; zarrox (as 3.1) fills in
        # little-endian, the spec's default
        with pytest.raises(ValueError, match="endian"):
            zarr_codecs(**case)
        case = {**case, "serializer": {"name": "bytes", "configuration": {"endian": "little"}}}
    expected = zarr_codecs(**case)
    dtype = np.dtype(case["dtype"])
    kwargs = {k: v for k, v in case.items() if k != "dtype"}
    got = build_codecs(dtype, data_type=data_type_name(dtype), ndim=2, **kwargs)
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # member order too


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ({"name": "gzip"}, {"name": "gzip", "configuration": {}}),
        ("gzip", {"name": "gzip", "configuration": {}}),
        ({"name": "zstd"}, {"name": "zstd", "configuration": {}}),
        ({"name": "blosc"}, {"name": "blosc", "configuration": {}}),
        ("crc32c", {"name": "crc32c"}),
    ],
)
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_build_codecs_short_forms(short: Any, full: dict[str, Any], dtype: str) -> None:
    # zarr-python needs a "configuration" member; zarrox fills in the same defaults without.
    expected = zarr_codecs(dtype=dtype, compressors=[full])
    assert build_codecs(np.dtype(dtype), data_type=dtype, compressors=[short]) == expected
    assert build_codecs(np.dtype(dtype), data_type=dtype, compressors=short) == expected


def test_build_codecs_sharding_matches_zarr_python() -> None:
    for dtype, compressors in (
        ("uint16", "auto"),
        ("uint8", None),
        ("float64", [{"name": "gzip"}]),
    ):
        kwargs: dict[str, Any] = {} if compressors == "auto" else {"compressors": compressors}
        zkwargs = dict(kwargs)
        if compressors is not None and compressors != "auto":
            zkwargs["compressors"] = [{"name": "gzip", "configuration": {}}]
        expected = zarr_codecs(dtype=dtype, shards=(16, 16), chunks=(8, 4), **zkwargs)
        inner = build_codecs(np.dtype(dtype), data_type=dtype, **kwargs)
        got = build_codecs(
            np.dtype(dtype),
            data_type=dtype,
            codecs=[
                {
                    "name": "sharding_indexed",
                    "configuration": {"chunk_shape": [8, 4], "codecs": inner},
                }
            ],
            ndim=2,
            chunk_shape=(16, 16),
        )
        assert got == expected


def test_build_codecs_codecs_override_matches_zarr_python() -> None:
    chain = [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes"},
        {"name": "gzip", "configuration": {}},
        {"name": "crc32c"},
    ]
    zchain = chain
    if ZARR_VERSION >= (3, 2):  # "endian" required for multi-byte types (see above)
        little = {"name": "bytes", "configuration": {"endian": "little"}}
        zchain = [little if c == {"name": "bytes"} else c for c in chain]
    arr = zarr.create(
        shape=(8, 8), chunks=(4, 4), dtype="u2", zarr_format=3, store=MemoryStore(), codecs=zchain
    )
    expected = json.loads(json.dumps(arr.metadata.to_dict()["codecs"]))
    got = build_codecs(
        np.dtype("u2"), data_type="uint16", codecs=chain, compressors=None, filters=[], ndim=2
    )
    assert got == expected
    inner = [
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "blosc", "configuration": {}},
    ]
    sharding = [
        {"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": inner}}
    ]
    arr = zarr.create(
        shape=(8, 8), chunks=(8, 8), dtype="u1", zarr_format=3, store=MemoryStore(), codecs=sharding
    )
    expected = json.loads(json.dumps(arr.metadata.to_dict()["codecs"]))
    assert build_codecs(np.dtype("u1"), data_type="uint8", codecs=sharding, ndim=2) == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"compressors": [{"name": "gzip", "configuration": {"level": 10}}]},
            MetadataError,
            "0 to 9",
        ),
        (
            {"compressors": [{"name": "gzip", "configuration": {"level": "1"}}]},
            MetadataError,
            "level",
        ),
        ({"compressors": [{"name": "zstd", "configuration": {"level": 23}}]}, MetadataError, "22"),
        (
            {"compressors": [{"name": "zstd", "configuration": {"checksum": 1}}]},
            MetadataError,
            "checksum",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"cname": "lzma"}}]},
            MetadataError,
            "cname",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"cname": "snappy"}}]},
            UnsupportedError,
            "snappy",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"clevel": 10}}]},
            MetadataError,
            "clevel",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"shuffle": 1}}]},
            MetadataError,
            "shuffle",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"typesize": 0}}]},
            MetadataError,
            "typesize",
        ),
        (
            {"compressors": [{"name": "blosc", "configuration": {"blocksize": -1}}]},
            MetadataError,
            "blocksize",
        ),
        ({"compressors": [{"name": "crc32c", "configuration": {"x": 1}}]}, MetadataError, "'x'"),
        ({"compressors": [{"name": "bytes"}]}, MetadataError, "compressors"),
        ({"compressors": [{"name": "lz4"}]}, UnsupportedError, "'lz4'"),
        ({"compressors": 5}, MetadataError, "compressors"),
        ({"filters": [{"name": "gzip", "configuration": {"level": 1}}]}, MetadataError, "filters"),
        (
            {"filters": [{"name": "transpose", "configuration": {"order": [0, 1, 2]}}]},
            MetadataError,
            "permutation",
        ),
        (
            {"filters": [{"name": "transpose", "configuration": {"order": [1, 1]}}]},
            MetadataError,
            "permutation",
        ),
        (
            {"filters": [{"name": "transpose", "configuration": {"order": "C"}}]},
            MetadataError,
            "order",
        ),
        ({"filters": [{"name": "transpose"}]}, MetadataError, "order"),
        ({"serializer": {"name": "zstd"}}, MetadataError, "serializer"),
        ({"serializer": [{"name": "bytes"}]}, MetadataError, "serializer"),
        (
            {"serializer": {"name": "bytes", "configuration": {"endian": "native"}}},
            MetadataError,
            "endian",
        ),
        ({"serializer": {"name": "vlen-utf8"}}, MetadataError, "only encodes the 'string'"),
        ({"serializer": {"name": "vlen-bytes"}}, MetadataError, "only encodes the 'bytes'"),
        (
            {"serializer": {"name": "packbits", "configuration": {"last_bit": 32}}},
            MetadataError,
            "first_bit <= last_bit < 32",
        ),
        ({"compressors": [{"name": "zfp"}]}, UnsupportedError, "'zfp'"),
        ({"codecs": [{"name": "zstd"}]}, MetadataError, "array->bytes"),
        (
            {
                "codecs": [
                    {"name": "bytes"},
                    {"name": "transpose", "configuration": {"order": [0, 1]}},
                ]
            },
            MetadataError,
            "before",
        ),
        (
            {"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 3]}}]},
            MetadataError,
            "divide",
        ),
        (
            {"codecs": [{"name": "sharding_indexed", "configuration": {}}]},
            MetadataError,
            "chunk_shape",
        ),
    ],
)
def test_build_codecs_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build_codecs(np.dtype("f4"), data_type="float32", ndim=2, chunk_shape=(8, 8), **kwargs)


def test_build_codecs_misc() -> None:
    # filters "auto" is no filters, as in zarr-python
    assert build_codecs(np.dtype("i4"), data_type="int32", filters="auto") == build_codecs(
        np.dtype("i4"), data_type="int32"
    )
    # raw types have no byte order
    assert build_codecs(np.dtype("V4"), data_type="r32", compressors=None) == [{"name": "bytes"}]
    with pytest.raises(MetadataError, match="does not match"):
        build_codecs(np.dtype("i4"), data_type="int64")
    # validate_codecs keeps configurations as stored; normalize_codecs completes them
    stored = [{"name": "bytes"}, {"name": "gzip", "configuration": {}}]
    assert validate_codecs(stored, dtype=np.dtype("u1")) == [
        {"name": "bytes", "configuration": {}},
        {"name": "gzip", "configuration": {}},
    ]
    assert normalize_codecs(stored, dtype=np.dtype("u1"), form="core") == [
        {"name": "bytes", "configuration": {}},
        {"name": "gzip", "configuration": {"level": 5}},
    ]


TS_METADATA: list[dict[str, Any]] = [
    {"data_type": "uint8"},
    {"data_type": "float64", "fill_value": "0x7ff8000000000001"},
    {"data_type": "complex64", "fill_value": [1, "NaN"], "dimension_names": ["a", "b"]},
    {
        "data_type": "int16",
        "codecs": [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {
                "name": "blosc",
                "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2},
            },
        ],
    },
    {
        "data_type": "uint16",
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}],
    },
    {"data_type": "float16", "codecs": [{"name": "bytes"}, {"name": "zstd"}, {"name": "crc32c"}]},
]


@pytest.mark.parametrize("metadata", TS_METADATA, ids=lambda m: m["data_type"])
def test_tensorstore_documents(tmp_path: Path, metadata: dict[str, Any]) -> None:
    ts = pytest.importorskip("tensorstore")
    spec_metadata = {
        "shape": [4, 4],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
        **metadata,
    }
    kvstore = {"driver": "file", "path": str(tmp_path)}
    ts.open(
        {"driver": "zarr3", "kvstore": kvstore, "metadata": spec_metadata, "create": True}
    ).result()
    doc = json.loads((tmp_path / "zarr.json").read_bytes())
    meta = ArrayMetadataV3.from_json(doc, path="t")
    assert meta.shape == (4, 4)
    assert meta.data_type == metadata["data_type"]
    out = meta.to_json()
    # tensorstore writes {"name": "default"}; zarrox writes the separator explicitly
    assert out["chunk_key_encoding"] == {"name": "default", "configuration": {"separator": "/"}}
    for key, value in doc.items():
        if key != "chunk_key_encoding":
            assert out[key] == value, key
    assert all(set(c) == {"name", "configuration"} for c in meta.to_core_json()["codecs"])


_LE = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize(
    ("chunk_shape", "codecs"),
    [
        ([2**40, 2**40], [_LE]),  # 2**81 bytes: the size wraps around in usize
        ([2**62], [_LE]),  # 2**63 bytes: fits in u64, not in one buffer
        ([2**64 - 1], [_LE]),
        (
            [2**31, 2**30],  # 2**61 inner chunks: an index of 2**65 bytes
            [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [1, 1],
                        "codecs": [_LE],
                        "index_codecs": [_LE, {"name": "crc32c"}],
                    },
                }
            ],
        ),
    ],
    ids=["wraps", "over-isize", "u64-max", "shard-index"],
)
def test_chunks_too_large_for_a_buffer_are_refused(
    tmp_path: Path, chunk_shape: list[int], codecs: list[dict[str, Any]]
) -> None:
    """zarrox wrapped the byte size around or panicked ("capacity overflow", "range end
    index out of range") on writes; tensorstore refuses such metadata at open."""
    import zarrox

    shape = [4] * len(chunk_shape)
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0,
        "codecs": codecs,
    }
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(UnsupportedError, match=r"larger than the \d+ bytes a buffer can hold"):
        zarrox.open_array(tmp_path, mode="r+")


@pytest.mark.parametrize(
    ("shape", "stored", "codecs", "expected", "warns"),
    [
        ([0, 4], [False, True], None, (1, 1), False),
        ([0, 4], [0, 2], None, (1, 2), False),
        ([6, 4], [0, 2], None, (1, 2), True),
        ([6, 4], [True, 4], None, (1, 4), False),
        (
            [8, 8],
            [0, 8],
            [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [4, True],
                        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                        "index_codecs": [
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "crc32c"},
                        ],
                        "index_location": "end",
                    },
                }
            ],
            (4, 8),
            True,
        ),
    ],
)
def test_stored_chunk_sizes_zero_false_true(
    tmp_path: Path,
    shape: list[int],
    stored: list[Any],
    codecs: Any,
    expected: tuple[int, ...],
    warns: bool,
) -> None:
    """zarr-python 3.4 reads a stored chunk size of true as 1 and 0 or false (what zarr
    wrote for zero-length axes and chunks=(0,)/False) as 1, or a sharded array's inner chunk
    size, warning when the axis is not empty; zarrox reads them the same and stores the
    repaired sizes with its next metadata update."""
    doc = base_doc(
        shape=shape,
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": stored}},
    )
    if codecs is not None:
        doc["codecs"] = codecs
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = zarrox.open_array(tmp_path, mode="a")
    assert a.chunks == expected or a.metadata.chunk_shape == expected
    assert any("holds only its fill value" in str(w.message) for w in caught) == warns
    a.update_attributes({})
    repaired = json.loads((tmp_path / "zarr.json").read_text())
    assert repaired["chunk_grid"]["configuration"]["chunk_shape"] == list(expected)
    if ZARR_VERSION >= (3, 4):
        (tmp_path / "zarr.json").write_text(json.dumps(doc))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = zarr.open_array(str(tmp_path), mode="r")
        assert tuple(z.metadata.chunk_grid.chunk_shape) == expected


def test_stored_chunk_sizes_reject_negative_and_strings() -> None:
    for bad in ([-1, 2], ["4", 2], [1.5, 2]):
        doc = base_doc(chunk_grid={"name": "regular", "configuration": {"chunk_shape": bad}})
        with pytest.raises(MetadataError, match="chunk_shape"):
            ArrayMetadataV3.from_json(doc)
