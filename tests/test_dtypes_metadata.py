"""Extension data types in the v3 metadata layer, checked against zarr-python 3.1 and tensorstore.

Every zarr.json here is written by the library itself (or, for the types neither writes, spelled
as the registry's spec shows), then read by zarrox: the numpy dtype, the fill value (bit-exact),
the document written back and the descriptor given to the Rust core are checked.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given
from hypothesis import strategies as st

import zarrox
from conftest import ZARR_VERSION
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata import dtypes
from zarrox.metadata.codecs import build_codecs, normalize_codecs, validate_codecs
from zarrox.metadata.v3 import (
    ArrayMetadataV3,
    cast_fill_value,
    data_type_name,
    default_fill_value,
    dumps,
    fill_value_bytes,
    fill_value_to_json,
    loads,
    parse_data_type,
    parse_fill_value,
)

ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.fixture(autouse=True)
def _quiet_zarr() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def ml(name: str) -> np.dtype[Any]:
    return np.dtype(getattr(ml_dtypes, name))


def doc(data_type: Any, fill_value: Any, codecs: list[Any] | None = None) -> dict[str, Any]:
    """An array document as zarr-python lays it out."""
    return {
        "shape": [4],
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }


# ------------------------------------------------------------------------------------------
# documents written by zarr-python 3.1
# ------------------------------------------------------------------------------------------

NESTED = np.dtype(
    [("a", "u1"), ("p", [("x", "<f4"), ("y", "<f4")]), ("t", "M8[s]"), ("s", "S3"), ("u", "U2")]
)

# (numpy dtype given to zarr-python, fill value, the numpy dtype zarrox reads)
ZARR_CASES: list[tuple[Any, Any, Any]] = [
    ("U3", None, "U3"),
    ("U3", "hé", "U3"),
    (">U2", "ab", "U2"),
    ("S4", None, "S4"),
    ("S4", b"ab", "S4"),
    ("S4", b"abcd", "S4"),
    ("V5", None, "V5"),
    ("V3", b"\x01\x02\x03", "V3"),
    ("M8[s]", None, "M8[s]"),
    ("M8[10s]", np.datetime64(50, "s"), "M8[10s]"),
    ("M8[us]", np.datetime64("2020-01-02T03:04:05.123456"), "M8[us]"),
    ("M8[3D]", None, "M8[3D]"),
    ("M8", None, "M8"),
    ("m8[ns]", None, "m8[ns]"),
    ("m8[ms]", -7, "m8[ms]"),
    ([("a", "<i4"), ("b", "<f8")], None, [("a", "<i4"), ("b", "<f8")]),
    ([("a", "<i4"), ("b", "<f8")], (1, 2.5), [("a", "<i4"), ("b", "<f8")]),
    ([("a", "<i4"), ("b", "<f8")], (1, float("nan")), [("a", "<i4"), ("b", "<f8")]),
    ([("a", "u1"), ("b", "i1")], None, [("a", "u1"), ("b", "i1")]),
    (NESTED, None, NESTED),
    (str, None, np.dtypes.StringDType()),
    (str, "héllo", np.dtypes.StringDType()),
    (np.dtypes.StringDType(), "x", np.dtypes.StringDType()),
]


def _zarr_doc(tmp_path: Path, dtype: Any, fill_value: Any, **kwargs: Any) -> bytes:
    store = tmp_path / "a"
    extra = {} if fill_value is None else {"fill_value": fill_value}
    zarr.create_array(store=str(store), shape=(4,), chunks=(2,), dtype=dtype, **extra, **kwargs)
    return (store / "zarr.json").read_bytes()


@pytest.mark.parametrize(("dtype", "fill_value", "expected"), ZARR_CASES, ids=str)
def test_zarr_python_documents(tmp_path: Path, dtype: Any, fill_value: Any, expected: Any) -> None:
    raw = _zarr_doc(tmp_path, dtype, fill_value)
    doc_ = json.loads(raw)
    meta = ArrayMetadataV3.from_json(loads(raw), path="a")
    assert meta.dtype == np.dtype(expected)
    assert meta.data_type == doc_["data_type"]
    assert dumps(meta.to_json()) == raw  # byte-identical zarr.json
    if meta.dtype.fields is not None and ZARR_VERSION < (3, 2):
        assert data_type_name(dtype)["name"] == "struct"  # 3.1 wrote the legacy "structured"
    else:
        assert data_type_name(dtype) == doc_["data_type"]
    assert parse_data_type(doc_["data_type"]) == (doc_["data_type"], np.dtype(expected))
    # the fill value is the one zarr-python reads, bit for bit
    if dtype == "M8":  # zarr-python 3.1 cannot read its own generic datetime64 document
        theirs: Any = np.datetime64("NaT")
    else:
        theirs = zarr.open_array(str(tmp_path / "a"), mode="r").fill_value
    if meta.dtype.kind in "OT":
        assert meta.fill_value == theirs
        assert meta.fill_bytes() == str(theirs).encode()
    else:
        assert meta.fill_bytes() == np.asarray(theirs, dtype=meta.dtype).tobytes()
    # creating the same array in zarrox writes the same document (zarr-python 3.1 wrote the
    # legacy "structured" type, which it alone reads; zarrox writes "struct", as 3.2-3.4 do)
    created = ArrayMetadataV3.create(
        shape=(4,), dtype=dtype, chunk_shape=(2,), fill_value=fill_value
    )
    if doc_["data_type"] == "structured" or (
        isinstance(doc_["data_type"], dict) and doc_["data_type"]["name"] == "structured"
    ):
        assert ZARR_VERSION < (3, 2)
        assert created.to_json()["data_type"]["name"] == "struct"
    else:
        assert dumps(created.to_json()) == raw


def test_zarr_python_variable_length_bytes(tmp_path: Path) -> None:
    from zarr.core.dtype import VariableLengthBytes

    raw = _zarr_doc(tmp_path, VariableLengthBytes(), b"\x01\x02\x03")
    doc_ = json.loads(raw)
    assert doc_["data_type"] == "variable_length_bytes"  # zarr-python's name for "bytes"
    assert doc_["fill_value"] == "AQID"
    meta = ArrayMetadataV3.from_json(doc_, path="a")
    assert meta.dtype == np.dtype(object)
    assert meta.fill_value == b"\x01\x02\x03"
    assert meta.fill_bytes() == b"\x01\x02\x03"
    assert dumps(meta.to_json()) == raw
    assert meta.to_core_json()["data_type"] == "bytes"
    # zarrox writes the registry name, which zarr-python reads too
    created = ArrayMetadataV3.create(
        shape=(4,), dtype="bytes", chunk_shape=(2,), fill_value=b"\x01\x02\x03"
    )
    out = created.to_json()
    assert out["data_type"] == "bytes"
    assert {**out, "data_type": "variable_length_bytes"} == doc_
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "zarr.json").write_bytes(dumps(out))
    assert zarr.open_array(str(tmp_path / "b"), mode="r").fill_value == b"\x01\x02\x03"


@pytest.mark.parametrize(
    ("dtype", "fill_value"),
    [
        ("U3", "hé"),
        ("S4", b"ab"),
        ("V3", b"\x01\x02\x03"),
        ("M8[10s]", "NaT"),
        ("m8[ms]", -7),
        ([("a", "<i4"), ("b", "<f8")], (1, float("nan"))),
        (NESTED, None),
        ("string", "x"),
        ("bytes", b"\x00\x01"),
    ],
    ids=str,
)
def test_zarr_python_reads_what_zarrox_writes(tmp_path: Path, dtype: Any, fill_value: Any) -> None:
    meta = ArrayMetadataV3.create(shape=(4,), dtype=dtype, chunk_shape=(2,), fill_value=fill_value)
    (tmp_path / "zarr.json").write_bytes(dumps(meta.to_json()))
    if meta.dtype.fields is not None and ZARR_VERSION < (3, 2):
        # zarrox writes the registered "struct" type, which zarr-python reads from 3.2 on
        with pytest.raises(ValueError, match="struct"):
            zarr.open_array(str(tmp_path), mode="r")
        return
    arr = zarr.open_array(str(tmp_path), mode="r")
    if meta.dtype.kind in "OT":
        assert arr.fill_value == meta.fill_value
    else:
        assert np.asarray(arr.fill_value, dtype=meta.dtype).tobytes() == meta.fill_bytes()
        assert arr.dtype == meta.dtype


def _struct_endian(dtype: Any, codecs: list[Any]) -> list[Any]:
    """zarr-python 3.1 writes a structured dtype as the legacy "structured" type, whose
    bytes codec it leaves without "endian"; zarrox (like zarr-python 3.2-3.4) writes the
    "struct" type, whose bytes codec names it. The codecs 3.4 writes, from 3.1's."""
    if not isinstance(dtype, list) or ZARR_VERSION >= (3, 2):
        return codecs

    def fix(chain: list[Any]) -> list[Any]:
        out = []
        for c in chain:
            if c["name"] == "bytes" and "configuration" not in c:
                c = {"name": "bytes", "configuration": {"endian": "little"}}
            elif c["name"] == "sharding_indexed":
                cfg = dict(c["configuration"])
                cfg["codecs"] = fix(cfg["codecs"])
                c = {**c, "configuration": cfg}
            out.append(c)
        return out

    return fix(codecs)


def test_zarr_python_codec_defaults() -> None:
    from zarr.storage import MemoryStore

    for dtype in ("U3", "S4", "V2", "M8[s]", [("a", "<i4"), ("b", "<f8")], str):
        for compressors in ("auto", [{"name": "blosc", "configuration": {}}], None):
            kwargs: dict[str, Any] = {} if compressors == "auto" else {"compressors": compressors}
            arr = zarr.create_array(
                store=MemoryStore(), shape=(8,), chunks=(4,), dtype=dtype, **kwargs
            )
            expected = _struct_endian(
                dtype, json.loads(json.dumps(arr.metadata.to_dict()["codecs"]))
            )
            got = build_codecs(dtype if dtype is not str else np.dtypes.StringDType(), **kwargs)
            assert got == expected, (dtype, compressors)
        arr = zarr.create_array(
            store=MemoryStore(), shape=(8,), chunks=(2,), shards=(4,), dtype=dtype
        )
        expected = _struct_endian(dtype, json.loads(json.dumps(arr.metadata.to_dict()["codecs"])))
        meta = ArrayMetadataV3.create(
            shape=(8,),
            dtype=dtype,
            chunk_shape=(4,),
            codecs=[
                {
                    "name": "sharding_indexed",
                    "configuration": {"chunk_shape": [2], "codecs": build_codecs(dtype)},
                }
            ],
        )
        assert meta.to_json()["codecs"] == expected


def test_build_codecs_bytes_type() -> None:
    # zarr-python 3.1 writes these for VariableLengthBytes
    assert build_codecs(np.dtype(object), data_type="bytes") == [
        {"name": "vlen-bytes", "configuration": {}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
    ]
    assert build_codecs(np.dtype(object), data_type="variable_length_bytes", compressors=None) == [
        {"name": "vlen-bytes", "configuration": {}}
    ]
    assert build_codecs(np.dtype(object)) == [
        {"name": "vlen-utf8", "configuration": {}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
    ]
    assert build_codecs(ml("bfloat16"), compressors=None) == [
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]
    assert build_codecs(ml("float8_e4m3fn"), compressors=None) == [{"name": "bytes"}]
    assert build_codecs(ml("float8_e4m3fn"), compressors=[{"name": "blosc", "configuration": {}}])[
        1
    ]["configuration"] == {
        "typesize": 1,
        "cname": "zstd",
        "clevel": 5,
        "shuffle": "bitshuffle",
        "blocksize": 0,
    }
    # the registry's struct requires "endian" for multi-byte fields
    struct = {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int16"}]}}
    assert build_codecs(np.dtype([("a", "<i2")]), data_type=struct, compressors=None) == [
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]


# ------------------------------------------------------------------------------------------
# documents written by tensorstore
# ------------------------------------------------------------------------------------------

TS_CASES: list[tuple[str, Any]] = [
    ("bfloat16", None),
    ("bfloat16", "NaN"),
    ("bfloat16", "0xffc0"),
    ("bfloat16", "0x7fc1"),
    ("bfloat16", 0.1),
    ("bfloat16", "-Infinity"),
    ("float8_e3m4", None),
    ("float8_e3m4", "NaN"),
    ("float8_e4m3fn", None),
    ("float8_e4m3fn", "NaN"),
    ("float8_e4m3fn", "0xff"),
    ("float8_e4m3fn", 448.0),
    ("float8_e4m3fnuz", "NaN"),
    ("float8_e4m3fnuz", -0.5),
    ("float8_e4m3b11fnuz", "NaN"),
    ("float8_e5m2", "NaN"),
    ("float8_e5m2", "-Infinity"),
    ("float8_e5m2", 1.5),
    ("float8_e5m2fnuz", "NaN"),
    ("float8_e8m0fnu", None),
    ("float8_e8m0fnu", "NaN"),
    ("float4_e2m1fn", None),
    ("float4_e2m1fn", -6.0),
    ("float4_e2m1fn", 0.5),
    ("int2", -2),
    ("int2", 1),
    ("int4", None),
    ("int4", -8),
    ("int4", 7),
]


@pytest.mark.parametrize(("name", "fill_value"), TS_CASES, ids=str)
def test_tensorstore_documents(tmp_path: Path, name: str, fill_value: Any) -> None:
    ts = pytest.importorskip("tensorstore")
    metadata: dict[str, Any] = {
        "shape": [4],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "data_type": name,
    }
    if fill_value is not None:
        metadata["fill_value"] = fill_value
    kvstore = {"driver": "file", "path": str(tmp_path)}
    t = ts.open(
        {"driver": "zarr3", "kvstore": kvstore, "metadata": metadata, "create": True}
    ).result()
    doc_ = json.loads((tmp_path / "zarr.json").read_bytes())
    meta = ArrayMetadataV3.from_json(doc_, path="t")
    assert meta.dtype == ml(name) == t.dtype.numpy_dtype
    assert meta.data_type == name
    assert data_type_name(t.dtype.numpy_dtype) == name
    out = meta.to_json()
    for key in ("shape", "data_type", "fill_value", "codecs"):
        assert out[key] == doc_[key], key
    # the fill value is the one tensorstore reads (int2/int4: tensorstore sign-extends the
    # ignored upper bits, ml_dtypes does not; the values are equal)
    theirs = np.asarray(t[0].read().result())
    mine = np.frombuffer(meta.fill_bytes(), dtype=meta.dtype)[0]
    if name in ("int2", "int4"):
        assert int(mine) == int(theirs)
    else:
        assert meta.fill_bytes() == theirs.tobytes()


def test_tensorstore_reads_what_zarrox_writes(tmp_path: Path) -> None:
    ts = pytest.importorskip("tensorstore")
    for i, (name, fill) in enumerate(
        [("bfloat16", "0x7fc1"), ("float8_e5m2", "-Infinity"), ("int4", -3), ("float4_e2m1fn", 3.0)]
    ):
        meta = ArrayMetadataV3.create(shape=(4,), dtype=name, chunk_shape=(2,), fill_value=fill)
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "zarr.json").write_bytes(dumps(meta.to_json()))
        kvstore = {"driver": "file", "path": str(tmp_path / str(i))}
        t = ts.open({"driver": "zarr3", "kvstore": kvstore}).result()
        value = np.asarray(t[0].read().result())
        mine = np.frombuffer(meta.fill_bytes(), dtype=meta.dtype)
        if name == "bfloat16":  # a NaN: compare bits
            assert value.tobytes() == mine.tobytes() == b"\xc1\x7f"
        else:
            assert value.astype(np.float64) == mine.astype(np.float64)[0] == float(fill)


# ------------------------------------------------------------------------------------------
# documents in the registry's form (types neither writer produces)
# ------------------------------------------------------------------------------------------

POINT = {
    "name": "struct",
    "configuration": {
        "fields": [
            {"name": "x", "data_type": "float32"},
            {"name": "y", "data_type": "float32"},
        ]
    },
}
STRUCT = {
    "name": "struct",
    "configuration": {
        "fields": [
            {"name": "point", "data_type": POINT},
            {
                "name": "t",
                "data_type": {
                    "name": "numpy.datetime64",
                    "configuration": {"unit": "μs", "scale_factor": 1},
                },
            },
            {"name": "b", "data_type": "bfloat16"},
            {"name": "c", "data_type": "complex64"},
            {
                "name": "s",
                "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
            },
            {"name": "f", "data_type": "uint8"},
        ]
    },
}
STRUCT_DTYPE = np.dtype(
    [
        ("point", [("x", "<f4"), ("y", "<f4")]),
        ("t", "M8[us]"),
        ("b", ml("bfloat16")),
        ("c", "c8"),
        ("s", "U2"),
        ("f", "u1"),
    ]
)
BYTES_CODEC = [{"name": "bytes"}]

# (data_type, fill value, codecs, numpy dtype, fill bytes (hex), core descriptor)
REGISTRY_CASES: list[tuple[Any, Any, Any, Any, str, Any]] = [
    (
        STRUCT,
        {
            "point": {"x": 1.0, "y": "NaN"},
            "t": -9223372036854775808,
            "b": "0x7fc1",
            "c": [0.0, "-Infinity"],
            "s": "hé",
            "f": 7,
        },
        None,
        STRUCT_DTYPE,
        "0000803f0000c07f"
        + "0000000000000080"
        + "c17f"
        + "00000000000080ff"
        + "68000000e9000000"
        + "07",
        {
            "size": 35,
            "swap": [[0, 4], [4, 4], [8, 8], [16, 2], [18, 4], [22, 4], [26, 4], [30, 4]],
            "floats": [
                [0, "float32"],
                [4, "float32"],
                [16, "bfloat16"],
                [18, "float32"],
                [22, "float32"],
            ],
        },
    ),
    (
        POINT,
        {"x": 1.5, "y": -0.0},
        None,
        [("x", "<f4"), ("y", "<f4")],
        "0000c03f00000080",
        {"size": 8, "swap": [[0, 4], [4, 4]], "floats": [[0, "float32"], [4, "float32"]]},
    ),
    (
        {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "uint8"}]}},
        {"a": 255},
        BYTES_CODEC,
        [("a", "u1")],
        "ff",
        {"size": 1, "swap": [], "floats": []},
    ),
    (
        "complex_bfloat16",
        ["NaN", 1.5],
        None,
        [("real", ml("bfloat16")), ("imag", ml("bfloat16"))],
        "c07fc03f",
        {"size": 4, "swap": [[0, 2], [2, 2]], "floats": [[0, "bfloat16"], [2, "bfloat16"]]},
    ),
    (
        "complex_float16",
        [1.0, "-Infinity"],
        None,
        [("real", "<f2"), ("imag", "<f2")],
        "003c00fc",
        {"size": 4, "swap": [[0, 2], [2, 2]], "floats": [[0, "float16"], [2, "float16"]]},
    ),
    ("complex_float32", [1.0, 2.0], None, "c8", "0000803f00000040", "complex64"),
    (
        "complex_float64",
        ["NaN", 0.0],
        None,
        "c16",
        "000000000000f87f0000000000000000",
        "complex128",
    ),
    (
        "complex_float4_e2m1fn",
        [-6.0, 0.5],
        BYTES_CODEC,
        [("real", ml("float4_e2m1fn")), ("imag", ml("float4_e2m1fn"))],
        "0f01",
        {"size": 2, "swap": [], "floats": []},
    ),
    (
        "complex_float8_e8m0fnu",
        ["NaN", 1.0],
        BYTES_CODEC,
        [("real", ml("float8_e8m0fnu")), ("imag", ml("float8_e8m0fnu"))],
        "ff7f",
        {"size": 2, "swap": [], "floats": []},
    ),
    (
        "complex_float8_e4m3fnuz",
        ["NaN", 0.0009765625],
        BYTES_CODEC,
        [("real", ml("float8_e4m3fnuz")), ("imag", ml("float8_e4m3fnuz"))],
        "8001",
        {"size": 2, "swap": [], "floats": []},
    ),
    (
        "float8_e4m3",
        "Infinity",
        BYTES_CODEC,
        ml("float8_e4m3"),
        "78",
        {"size": 1, "swap": [], "floats": []},
    ),
    (
        "float8_e4m3",
        "NaN",
        BYTES_CODEC,
        ml("float8_e4m3"),
        "7c",
        {"size": 1, "swap": [], "floats": []},
    ),
    (
        "float6_e2m3fn",
        7.5,
        BYTES_CODEC,
        ml("float6_e2m3fn"),
        "1f",
        {"size": 1, "swap": [], "floats": []},
    ),
    (
        "float6_e3m2fn",
        -28.0,
        BYTES_CODEC,
        ml("float6_e3m2fn"),
        "3f",
        {"size": 1, "swap": [], "floats": []},
    ),
    ("uint2", 3, BYTES_CODEC, ml("uint2"), "03", {"size": 1, "swap": [], "floats": []}),
    ("uint4", 15, BYTES_CODEC, ml("uint4"), "0f", {"size": 1, "swap": [], "floats": []}),
    (
        {"name": "numpy.timedelta64", "configuration": {"unit": "as", "scale_factor": 2147483647}},
        -1,
        None,
        "m8[2147483647as]",
        "ffffffffffffffff",
        {"size": 8, "swap": [[0, 8]], "floats": []},
    ),
    (
        {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}},
        "Hi",
        None,
        "U3",
        "480000006900000000000000",
        {"size": 12, "swap": [[0, 4], [4, 4], [8, 4]], "floats": []},
    ),
    (
        {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}},
        "AQI=",
        BYTES_CODEC,
        "S3",
        "010200",
        {"size": 3, "swap": [], "floats": []},
    ),
    (
        {"name": "raw_bytes", "configuration": {"length_bytes": 2}},
        "AQI=",
        BYTES_CODEC,
        "V2",
        "0102",
        {"size": 2, "swap": [], "floats": []},
    ),
    ("r16", [1, 2], BYTES_CODEC, "V2", "0102", "r16"),
    (
        "string",
        "héllo",
        [{"name": "vlen-utf8", "configuration": {}}],
        np.dtypes.StringDType(),
        "68c3a96c6c6f",
        "string",
    ),
    ("bytes", "AQID", [{"name": "vlen-bytes", "configuration": {}}], object, "010203", "bytes"),
]


@pytest.mark.parametrize(
    ("data_type", "fill_value", "codecs", "dtype", "fill_hex", "core"),
    REGISTRY_CASES,
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_registry_documents(
    data_type: Any, fill_value: Any, codecs: Any, dtype: Any, fill_hex: str, core: Any
) -> None:
    d = doc(data_type, fill_value, codecs)
    meta = ArrayMetadataV3.from_json(d, path="x")
    assert meta.dtype == np.dtype(dtype)
    assert meta.fill_bytes().hex() == fill_hex
    out = meta.to_json()
    # written back as read, except the unit "μs", which zarr-python 3.4 writes as numpy's "us"
    expected = json.loads(json.dumps(d).replace("\\u03bcs", "us"))
    assert out == expected
    assert list(out) == list(d)
    assert meta.to_core_json()["data_type"] == core
    assert ArrayMetadataV3.from_json(json.loads(dumps(out))) == meta


def test_registry_alternative_forms() -> None:
    # written back in the normalized form
    meta = ArrayMetadataV3.from_json(doc({"name": "bfloat16", "configuration": {}}, 1.0))
    assert meta.to_json()["data_type"] == "bfloat16"
    # fields as pairs under the new name, a field type as {"name": ...}
    struct = {"name": "struct", "configuration": {"fields": [["a", {"name": "int16"}]]}}
    meta = ArrayMetadataV3.from_json(doc(struct, {"a": -1}))
    assert meta.data_type == {
        "name": "struct",
        "configuration": {"fields": [{"name": "a", "data_type": "int16"}]},
    }
    # a base64 fill value for struct, an object for structured
    meta = ArrayMetadataV3.from_json(doc(struct, "//8="))
    assert meta.fill_value["a"] == -1
    assert meta.to_json()["fill_value"] == {"a": -1}
    legacy = {"name": "structured", "configuration": {"fields": [["a", "int16"]]}}
    meta = ArrayMetadataV3.from_json(doc(legacy, {"a": -2}, [{"name": "bytes"}]))
    assert meta.to_json()["fill_value"] == "/v8="
    # zarr-python's structured without "endian" is little-endian for the core
    assert meta.to_core_json()["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]
    # datetime: "NaT" and int64 min are the same value; zarr-python writes the number
    for nat in ("NaT", -(2**63)):
        dt = {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
        meta = ArrayMetadataV3.from_json(doc(dt, nat))
        assert np.isnat(meta.fill_value)
        assert meta.to_json()["fill_value"] == -(2**63)
    # bytes: an array of integers, written back as base64 (zarr-python's form)
    meta = ArrayMetadataV3.from_json(doc("bytes", [1, 2, 3], [{"name": "vlen-bytes"}]))
    assert meta.fill_value == b"\x01\x02\x03"
    assert meta.to_json()["fill_value"] == "AQID"
    # r<N>: base64 (tensorstore's form) is read too; written as the core spec's array
    meta = ArrayMetadataV3.from_json(doc("r16", "AQI=", [{"name": "bytes"}]))
    assert meta.to_json()["fill_value"] == [1, 2]


# ------------------------------------------------------------------------------------------
# numpy dtype <-> data type
# ------------------------------------------------------------------------------------------

ML_NAMES = [
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "int2",
    "int4",
    "uint2",
    "uint4",
]


@pytest.mark.parametrize("name", ML_NAMES)
def test_ml_dtypes_names(name: str) -> None:
    dt = ml(name)
    assert data_type_name(dt) == name
    assert data_type_name(getattr(ml_dtypes, name)) == name
    assert parse_data_type(name) == (name, dt)
    assert parse_data_type({"name": name}) == (name, dt)
    core = ArrayMetadataV3.create(shape=(2,), dtype=dt, chunk_shape=(2,)).to_core_json()
    size = dt.itemsize
    if name == "bfloat16":
        assert core["data_type"] == {"size": 2, "swap": [[0, 2]], "floats": [[0, "bfloat16"]]}
    else:
        assert core["data_type"] == {"size": size, "swap": [], "floats": []}


def test_data_type_name_table() -> None:
    assert data_type_name("U3") == {
        "name": "fixed_length_utf32",
        "configuration": {"length_bytes": 12},
    }
    assert data_type_name(">U1") == {
        "name": "fixed_length_utf32",
        "configuration": {"length_bytes": 4},
    }
    assert data_type_name("S2") == {
        "name": "null_terminated_bytes",
        "configuration": {"length_bytes": 2},
    }
    assert data_type_name("V7") == {"name": "raw_bytes", "configuration": {"length_bytes": 7}}
    assert data_type_name("M8[10s]") == {
        "name": "numpy.datetime64",
        "configuration": {"unit": "s", "scale_factor": 10},
    }
    assert data_type_name(">m8[us]") == {
        "name": "numpy.timedelta64",
        "configuration": {"unit": "us", "scale_factor": 1},
    }
    # the registered struct type with object fields, as zarr-python >= 3.2 writes it
    assert data_type_name([("a", ">i2"), ("b", [("c", "U1")])]) == {
        "name": "struct",
        "configuration": {
            "fields": [
                {"name": "a", "data_type": "int16"},
                {
                    "name": "b",
                    "data_type": {
                        "name": "struct",
                        "configuration": {
                            "fields": [
                                {
                                    "name": "c",
                                    "data_type": {
                                        "name": "fixed_length_utf32",
                                        "configuration": {"length_bytes": 4},
                                    },
                                }
                            ]
                        },
                    },
                },
            ]
        },
    }
    for dt in (str, object, "O", np.dtypes.StringDType(), "U"):
        assert data_type_name(dt) == "string"
    assert data_type_name(bytes) == "bytes"
    # what parse_data_type gives back maps to the same name
    for name in ("U3", "S2", "V7", "M8[10s]", "m8[us]", [("a", "<i2")]):
        dt = parse_data_type(data_type_name(name))[1]
        assert dt == np.dtype(name)
        assert data_type_name(dt) == data_type_name(name)


def test_create_accepts_v3_names_and_objects() -> None:
    for dtype, expected in [
        ("string", np.dtypes.StringDType()),
        ("bytes", np.dtype(object)),
        ("r16", np.dtype("V2")),
        ("bfloat16", ml("bfloat16")),
        ("complex_bfloat16", np.dtype([("real", ml("bfloat16")), ("imag", ml("bfloat16"))])),
        ({"name": "numpy.datetime64", "configuration": {"unit": "h", "scale_factor": 2}}, "M8[2h]"),
        ("<u2", np.dtype("u2")),
        ("S3", np.dtype("S3")),
    ]:
        meta = ArrayMetadataV3.create(shape=(2,), dtype=dtype, chunk_shape=(2,))
        assert meta.dtype == np.dtype(expected)
    meta = ArrayMetadataV3.create(
        shape=(2,), dtype=np.dtype(object), data_type="bytes", chunk_shape=(2,)
    )
    assert meta.data_type == "bytes"
    assert meta.to_json()["codecs"][0] == {"name": "vlen-bytes", "configuration": {}}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_accepts_zarr_python_data_type_objects(zarr_format: int) -> None:
    """zarr-python 3.1 users pass ``zarr.dtype`` objects; zarrox refused every one. The
    metadata written must be what zarr-python writes for the same object."""
    zd = zarr.core.dtype
    objects = [
        zd.Int16(),
        zd.Float64(endianness="big"),
        zd.Bool(),
        zd.Complex64(),
        zd.VariableLengthUTF8(),
        zd.FixedLengthUTF32(length=3),
        zd.NullTerminatedBytes(length=4),
        zd.DateTime64(unit="s", scale_factor=1),
        zd.Structured(fields=(("a", zd.Int8()), ("b", zd.Float32()))),
    ]
    if zarr_format == 3:
        objects.append(zd.VariableLengthBytes())
    key = "zarr.json" if zarr_format == 3 else ".zarray"
    members = (
        ["data_type", "fill_value", "codecs"]
        if zarr_format == 3
        else ["dtype", "fill_value", "filters", "compressor"]
    )
    for obj in objects:
        ours, theirs = zarrox.MemoryStore(), zarr.storage.MemoryStore()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python's "unstable specification" warnings
            got = zarrox.create_array(ours, shape=(2,), dtype=obj, zarr_format=zarr_format)
            ref = zarr.create_array(theirs, shape=(2,), dtype=obj, zarr_format=zarr_format)
        mine = json.loads(ours.get(key))
        want = json.loads(theirs._store_dict[key].to_bytes())
        assert {m: mine.get(m) for m in members} == {m: want.get(m) for m in members}, obj
        if ref.dtype.kind not in "OT":  # zarrox reads in native byte order
            assert got.dtype == ref.dtype.newbyteorder("="), obj


# ------------------------------------------------------------------------------------------
# fill values
# ------------------------------------------------------------------------------------------

# (data type, JSON value, bits of the element (hex, little-endian memory))
FILL_CASES: list[tuple[Any, Any, str]] = [
    ("bfloat16", "NaN", "c07f"),
    ("bfloat16", "0x7fc0", "c07f"),
    ("bfloat16", "0xffc1", "c1ff"),
    ("bfloat16", 1.0, "803f"),
    ("bfloat16", -0.0, "0080"),
    ("bfloat16", "Infinity", "807f"),
    ("float8_e3m4", "NaN", "78"),
    ("float8_e4m3", "NaN", "7c"),
    ("float8_e4m3fn", "NaN", "7f"),
    ("float8_e4m3fnuz", "NaN", "80"),
    ("float8_e4m3b11fnuz", "NaN", "80"),
    ("float8_e5m2", "NaN", "7e"),
    ("float8_e5m2fnuz", "NaN", "80"),
    ("float8_e8m0fnu", "NaN", "ff"),
    ("float8_e8m0fnu", 1.0, "7f"),
    ("float8_e8m0fnu", 0.0, "00"),
    ("float4_e2m1fn", -0.0, "08"),
    ("float4_e2m1fn", "0x07", "07"),
    ("float6_e2m3fn", -7.5, "3f"),
    ("int2", -2, "02"),
    ("uint4", 15, "0f"),
    ("int4", -1, "0f"),
    ("complex_bfloat16", ["0x7fc1", "-Infinity"], "c17f80ff"),
    ("complex_float16", ["NaN", 2.0], "007e0040"),
    (
        {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}},
        5,
        "0500000000000000",
    ),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}, "", "0000000000000000"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}, "", "0000"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}, "YWI=", "6162"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 2}}, "AP8=", "00ff"),
    ({"name": "structured", "configuration": {"fields": [["a", "int16"]]}}, "AQA=", "0100"),
    ("string", "", ""),
    ("bytes", "", ""),
]


@pytest.mark.parametrize(("data_type", "value", "fill_hex"), FILL_CASES, ids=str)
def test_fill_value_round_trip(data_type: Any, value: Any, fill_hex: str) -> None:
    _, dt = parse_data_type(data_type)
    parsed = parse_fill_value(value, data_type, dt)
    assert fill_value_bytes(parsed, dt, data_type=data_type).hex() == fill_hex
    out = fill_value_to_json(parsed, data_type)
    if value in ("0x7fc0",):
        assert out == "NaN"
    elif data_type in ("bfloat16", "float4_e2m1fn") and value == -0.0:
        assert out == -0.0 and str(out) == "-0.0"
    elif data_type == "float4_e2m1fn" and value == "0x07":
        assert out == 6.0  # hex of a finite number is written as the number
    else:
        assert out == value
    back = parse_fill_value(json.loads(json.dumps(out)), data_type, dt)
    assert fill_value_bytes(back, dt, data_type=data_type) == fill_value_bytes(
        parsed, dt, data_type=data_type
    )


@pytest.mark.parametrize("name", [n for n in ML_NAMES if n.startswith("float")])
def test_small_float_every_bit_pattern_round_trips(name: str) -> None:
    dt = ml(name)
    nbits = dtypes.FLOAT_FORMATS[name].bits if dt.itemsize == 1 else 16
    patterns = range(1 << nbits) if dt.itemsize == 1 else range(0, 1 << 16, 7)
    udt = np.uint8 if dt.itemsize == 1 else np.uint16
    for pattern in patterns:
        x = np.array(pattern, dtype=udt).view(dt)[()]
        out = fill_value_to_json(x, name)
        back = parse_fill_value(json.loads(json.dumps(out)), name, dt)
        assert np.asarray(back).view(udt) == pattern, (name, hex(pattern), out)


@given(st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1))
def test_complex_bfloat16_any_bits_round_trip(a: int, b: int) -> None:
    _, dt = parse_data_type("complex_bfloat16")
    x = np.array([a, b], dtype=np.uint16).view(dt)[0]
    out = fill_value_to_json(x, "complex_bfloat16")
    back = parse_fill_value(json.loads(json.dumps(out)), "complex_bfloat16", dt)
    assert np.asarray(back).tobytes() == np.asarray(x).tobytes()


def test_defaults_and_casts() -> None:
    # zarr-python's defaults
    assert np.isnat(default_fill_value(np.dtype("M8[s]")))
    assert default_fill_value(np.dtype("U2")) == ""
    assert default_fill_value(str) == ""
    assert default_fill_value(np.dtype(object), data_type="bytes") == b""
    # zarr-python 3.4: every field zero, strings and raw bytes empty (3.1 cast 0, giving b"0")
    assert default_fill_value(NESTED).tobytes() == bytes(NESTED.itemsize)
    # user values
    m8 = np.dtype("M8[10s]")
    assert cast_fill_value(np.datetime64(50, "s"), data_type_name(m8), m8).astype(np.int64) == 5
    assert cast_fill_value("1970-01-01T00:01:40", data_type_name(m8), m8).astype(np.int64) == 10
    assert np.isnat(cast_fill_value("NaT", data_type_name(m8), m8))
    with pytest.raises(MetadataError, match="not a numpy.datetime64"):
        cast_fill_value(np.timedelta64(1, "s"), data_type_name(m8), m8)
    assert cast_fill_value(1.5, "bfloat16") == ml_dtypes.bfloat16(1.5)
    assert cast_fill_value(ml_dtypes.float8_e5m2(2.0), "bfloat16") == 2.0
    assert cast_fill_value(-3.0, "int4") == -3
    x = cast_fill_value(1 + 2j, "complex_bfloat16")
    assert (float(x["real"]), float(x["imag"])) == (1.0, 2.0)
    s = cast_fill_value((1, 2.5), data_type_name([("a", "<i4"), ("b", "<f8")]))
    assert (int(s["a"]), float(s["b"])) == (1, 2.5)
    assert cast_fill_value(b"ab", data_type_name("S3")) == b"ab"
    with pytest.raises(MetadataError, match="longer than 3 bytes"):
        cast_fill_value(b"abcd", data_type_name("S3"))
    assert cast_fill_value("x", "string") == "x"
    assert cast_fill_value(bytearray(b"x"), "bytes") == b"x"
    with pytest.raises(MetadataError, match="cannot use"):
        cast_fill_value(1, "string")
    # bit-exact numpy scalars
    nan = np.array(0xFFC1, dtype=np.uint16).view(ml("bfloat16"))[()]
    assert fill_value_to_json(nan, "bfloat16") == "0xffc1"
    assert fill_value_bytes(nan, ml("bfloat16")) == b"\xc1\xff"
    assert fill_value_bytes("é", np.dtype(object)) == "é".encode()
    assert fill_value_bytes(b"\x00", np.dtype(object)) == b"\x00"


def test_str_fill_value_of_a_byte_string_type_is_its_text(tmp_path: Path) -> None:
    """A str fill value for numpy S types was decoded as base64: "abcd" gave b"i\xb7\x1d"
    and "YWI=" gave b"ab". zarr-python 3.1 (and zarrox's own v2 path) take the text."""
    for fill in ("abcd", "YWI=", "ab"):
        ref = zarr.create_array(tmp_path / f"zp-{fill}", shape=(2,), dtype="S4", fill_value=fill)
        got = zarrox.create_array(tmp_path / f"zx-{fill}", shape=(2,), dtype="S4", fill_value=fill)
        assert got.fill_value == ref.fill_value == fill.encode()
        assert got[...].tolist() == ref[...].tolist() == [fill.encode()] * 2
        doc = json.loads((tmp_path / f"zx-{fill}" / "zarr.json").read_text())
        assert doc["fill_value"] == ref.metadata.to_dict()["fill_value"]
    assert cast_fill_value("ab", data_type_name("S3")) == b"ab"
    with pytest.raises(MetadataError, match="longer than 3 bytes"):
        cast_fill_value("abcd", data_type_name("S3"))
    with pytest.raises(MetadataError, match="not ASCII"):
        cast_fill_value("é", data_type_name("S3"))
    # the JSON form is still base64
    assert parse_fill_value("YWI=", data_type_name("S3")) == b"ab"


def test_str_fill_value_of_the_bytes_type_is_its_text(tmp_path: Path) -> None:
    """A str fill value for the variable-length bytes type was decoded as base64: "abcd"
    gave b"i\xb7\x1d". zarr-python 3.1 takes the UTF-8 of the text."""
    vlen_bytes = zarr.core.dtype.VariableLengthBytes()
    for fill in ("abcd", "YWI=", "é"):
        ref = zarr.create_array(
            tmp_path / f"zp-{fill}", shape=(2,), dtype=vlen_bytes, fill_value=fill
        )
        got = zarrox.create_array(tmp_path / f"zx-{fill}", shape=(2,), dtype=bytes, fill_value=fill)
        assert got.fill_value == ref.fill_value == fill.encode()
        assert got[...].tolist() == ref[...].tolist() == [fill.encode()] * 2
        doc = json.loads((tmp_path / f"zx-{fill}" / "zarr.json").read_text())
        assert doc["fill_value"] == ref.metadata.to_dict()["fill_value"]
    assert cast_fill_value([97, 98], "bytes") == b"ab"
    assert parse_fill_value("YWI=", "bytes") == b"ab"  # the JSON form is still base64


def test_integral_float_fill_value_of_an_integer_type(tmp_path: Path) -> None:
    """The spec asks for an integer, but zarr-python 3.1 and tensorstore both read an
    integral float such as 1.0 (which other writers produce) as that integer."""
    ts = pytest.importorskip("tensorstore")
    assert parse_fill_value(1.0, "int2") == 1
    assert parse_fill_value(-8.0, "int4") == -8
    for fill in (1.0, 1e3, -0.0):
        d = tmp_path / f"a{fill}"
        d.mkdir()
        meta = doc("int16", fill, None)
        (d / "zarr.json").write_text(json.dumps(meta))
        want = np.full(4, int(fill), dtype="int16")
        np.testing.assert_array_equal(zarr.open_array(d, mode="r")[...], want)
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(d)}}
        np.testing.assert_array_equal(ts.open(spec).result().read().result(), want)
        got = zarrox.open_array(d, mode="r")
        assert got.fill_value == int(fill) and got.fill_value.dtype == np.int16
        np.testing.assert_array_equal(got[...], want)


BAD_FILLS: list[tuple[Any, Any, str]] = [
    ("bfloat16", "0x7fc", "exactly 4 hex digits"),
    ("bfloat16", "nan", "not a valid float"),
    ("float4_e2m1fn", "NaN", "no NaN"),
    ("float4_e2m1fn", "0x10", "more than the 4 bits"),
    ("float4_e2m1fn", 7.0, "out of range"),
    ("float6_e3m2fn", "Infinity", "no infinities"),
    ("float8_e4m3fn", "Infinity", "no infinities"),
    ("float8_e4m3fnuz", 1e6, "out of range"),
    ("float8_e8m0fnu", -1.0, "out of range"),
    ("int4", 8, r"out of range for int4 \[-8, 7\]"),
    ("uint2", -1, "out of range"),
    ("int2", 1.5, "expected an integer"),
    ("int16", 1.5, "expected an integer"),
    ("uint8", 1e3, "out of range"),
    ("complex_bfloat16", 1.0, "two-element array"),
    ("complex_float4_e2m1fn", [0, "NaN"], r"fill_value\[1\]: \"NaN\""),
    (
        {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}},
        2**63,
        "int64",
    ),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}, "nat", "NaT"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}}, "ab", "code point"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}}, 1, "expected a string"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}}, "YWI=", "do not fit"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}}, "?", "base64"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 2}}, "AA==", "2 integers"),
    (STRUCT, {"point": {"x": 1.0, "y": 2.0}}, "missing"),
    (POINT, {"x": 1.0, "y": 2.0, "z": 0}, r"unknown \['z'\]"),
    (POINT, {"x": 1.0, "y": "x"}, r"fill_value\.y"),
    (POINT, "AAAA", "has 3 bytes"),
    (POINT, [1.0, 2.0], "an object"),
    ("string", 1, "expected a string"),
    ("bytes", [256], "base64 string or an array"),
]


@pytest.mark.parametrize(("data_type", "value", "message"), BAD_FILLS, ids=str)
def test_bad_fill_values(data_type: Any, value: Any, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        parse_fill_value(value, data_type)
    codecs = None
    if data_type == "string":
        codecs = [{"name": "vlen-utf8"}]
    elif data_type == "bytes":
        codecs = [{"name": "vlen-bytes"}]
    with pytest.raises(MetadataError, match="^zarr.json at 'p': fill_value"):
        ArrayMetadataV3.from_json(doc(data_type, value, codecs), path="p")


# ------------------------------------------------------------------------------------------
# codecs
# ------------------------------------------------------------------------------------------


def test_vlen_codecs() -> None:
    assert validate_codecs([{"name": "vlen-utf8"}], dtype=np.dtype(object), data_type="string") == [
        {"name": "vlen-utf8", "configuration": {}}
    ]
    with pytest.raises(MetadataError, match="only encodes the 'string' data type, not 'int16'"):
        ArrayMetadataV3.from_json(doc("int16", 0, [{"name": "vlen-utf8"}]), path="p")
    with pytest.raises(MetadataError, match="only encodes the 'bytes' data type, not 'string'"):
        ArrayMetadataV3.from_json(doc("string", "", [{"name": "vlen-bytes"}]), path="p")
    with pytest.raises(MetadataError, match="cannot encode the variable-length data type"):
        ArrayMetadataV3.from_json(doc("string", "", [{"name": "bytes"}]), path="p")
    with pytest.raises(MetadataError, match="use 'vlen-bytes'"):
        ArrayMetadataV3.from_json(doc("bytes", "", [{"name": "packbits"}]), path="p")
    with pytest.raises(MetadataError, match="unknown member"):
        ArrayMetadataV3.from_json(
            doc("string", "", [{"name": "vlen-utf8", "configuration": {"x": 1}}]), path="p"
        )
    with pytest.raises(MetadataError, match="exactly one array->bytes"):
        ArrayMetadataV3.from_json(
            doc("string", "", [{"name": "vlen-utf8"}, {"name": "vlen-utf8"}]), path="p"
        )
    # inside a shard, and with transpose before
    sharded = [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [1],
                "codecs": [{"name": "vlen-utf8"}, {"name": "zstd"}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            },
        }
    ]
    meta = ArrayMetadataV3.from_json(doc("string", "", sharded))
    inner = meta.to_core_json()["codecs"][0]["configuration"]["codecs"]
    assert inner[0] == {"name": "vlen-utf8", "configuration": {}}
    transposed = [{"name": "transpose", "configuration": {"order": [0]}}, {"name": "vlen-bytes"}]
    assert ArrayMetadataV3.from_json(doc("bytes", "", transposed)).to_core_json()["codecs"][1] == {
        "name": "vlen-bytes",
        "configuration": {},
    }


def test_packbits() -> None:
    meta = ArrayMetadataV3.from_json(doc("int4", 0, [{"name": "packbits"}]))
    assert meta.to_json()["codecs"] == [{"name": "packbits"}]
    assert meta.to_core_json()["codecs"] == [
        {
            "name": "packbits",
            "configuration": {
                "padding_encoding": "none",
                "first_bit": 0,
                "last_bit": 3,
                # what the core needs of the data type: int4 is 4 signed bits
                "bits": 4,
                "components": 1,
                "signed": True,
            },
        }
    ]
    cfg = {"padding_encoding": "first_byte", "first_bit": None, "last_bit": 2}
    meta = ArrayMetadataV3.from_json(
        doc("complex_float6_e2m3fn", [0, 0], [{"name": "packbits", "configuration": cfg}])
    )
    assert meta.to_json()["codecs"] == [{"name": "packbits", "configuration": cfg}]
    assert meta.to_core_json()["codecs"][0]["configuration"] == {
        "padding_encoding": "first_byte",
        "first_bit": 0,
        "last_bit": 2,
        "bits": 6,
        "components": 2,
        "signed": False,
    }
    # the registry schema's spelling
    alt = {"padding_encoding": "end_byte", "start_bit": 1, "end_bit": 2}
    core = normalize_codecs(
        [{"name": "packbits", "configuration": alt}],
        dtype=ml("uint4"),
        data_type="uint4",
        form="core",
    )
    assert core[0]["configuration"] == {
        "padding_encoding": "last_byte",
        "first_bit": 1,
        "last_bit": 2,
        "bits": 4,
        "components": 1,
        "signed": False,
    }
    # bool packs one bit; int16 sixteen
    for data_type, last in (("bool", 0), ("int16", 15), ("bfloat16", 15), ("complex64", 31)):
        core = normalize_codecs(
            [{"name": "packbits"}],
            dtype=parse_data_type(data_type)[1],
            data_type=data_type,
            form="core",
        )
        assert core[0]["configuration"]["last_bit"] == last
    for bad, message in [
        ({"padding_encoding": "middle"}, "padding_encoding"),
        ({"first_bit": 3, "last_bit": 2}, "first_bit <= last_bit"),
        ({"last_bit": 4}, "last_bit < 4"),
        ({"first_bit": -1}, "non-negative"),
        ({"first_bit": 0, "start_bit": 0}, "not both"),
        ({"x": 1}, "unknown member"),
    ]:
        with pytest.raises(MetadataError, match=message):
            ArrayMetadataV3.from_json(
                doc("uint4", 0, [{"name": "packbits", "configuration": bad}]), path="p"
            )
    for data_type, fill in [
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}}, ""),
        (POINT, {"x": 0, "y": 0}),
    ]:
        with pytest.raises(MetadataError, match="packbits' does not support"):
            ArrayMetadataV3.from_json(doc(data_type, fill, [{"name": "packbits"}]), path="p")


def test_byte_order_rules() -> None:
    # types with a byte order need "endian" (as for core types); the others do not
    dt64 = {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}
    for data_type, fill in [("bfloat16", 0), (dt64, 0), (POINT, {"x": 0, "y": 0})]:
        with pytest.raises(MetadataError, match="requires 'endian'"):
            ArrayMetadataV3.from_json(doc(data_type, fill, [{"name": "bytes"}]), path="p")
    for data_type, fill in [("float8_e5m2", 0), ("int4", 0), ("complex_float8_e5m2", [0, 0])]:
        meta = ArrayMetadataV3.from_json(doc(data_type, fill, [{"name": "bytes"}]))
        assert meta.to_core_json()["codecs"] == [{"name": "bytes", "configuration": {}}]
    big = [{"name": "bytes", "configuration": {"endian": "big"}}]
    meta = ArrayMetadataV3.from_json(doc("complex_bfloat16", [1.0, 0.0], big))
    assert meta.to_core_json()["codecs"] == big


# ------------------------------------------------------------------------------------------
# data type errors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data_type", "error", "message"),
    [
        ("float8_e4m3fnx", UnsupportedError, "unsupported data type 'float8_e4m3fnx'"),
        ("complex_float8_e4m3fn", UnsupportedError, "'complex_float8_e4m3fn'"),
        ({"name": "x.y", "configuration": {"a": 1}}, UnsupportedError, "'x.y'"),
        (
            {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "posit8"}]}},
            UnsupportedError,
            "'posit8'",
        ),
        (
            {"name": "numpy.datetime64", "configuration": {"unit": "s"}},
            MetadataError,
            "scale_factor",
        ),
        (
            {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}},
            MetadataError,
            "scale_factor",
        ),
        (
            {"name": "numpy.timedelta64", "configuration": {"unit": "sec", "scale_factor": 1}},
            MetadataError,
            "unit",
        ),
        ("numpy.datetime64", MetadataError, "requires a configuration"),
        (
            {"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}},
            MetadataError,
            "multiple of 4",
        ),
        (
            {"name": "null_terminated_bytes", "configuration": {"length_bytes": 0}},
            MetadataError,
            "positive",
        ),
        ({"name": "raw_bytes", "configuration": {"length_bytes": 2, "x": 1}}, MetadataError, "'x'"),
        ({"name": "bfloat16", "configuration": {"x": 1}}, MetadataError, "takes no configuration"),
        ({"name": "struct", "configuration": {"fields": []}}, MetadataError, "non-empty"),
        (
            {"name": "struct", "configuration": {"fields": [["a", "int8"], ["a", "int8"]]}},
            MetadataError,
            "duplicate field name 'a'",
        ),
        (
            {"name": "struct", "configuration": {"fields": [["a", "string"]]}},
            MetadataError,
            "fixed size",
        ),
        (
            {"name": "struct", "configuration": {"fields": [{"name": "a"}]}},
            MetadataError,
            "exactly 'name' and 'data_type'",
        ),
        (
            {"name": "struct", "configuration": {"fields": [["", "int8"]]}},
            MetadataError,
            "non-empty",
        ),
    ],
    ids=str,
)
def test_data_type_errors(data_type: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as info:
        ArrayMetadataV3.from_json(doc(data_type, 0), path="g/a")
    assert str(info.value).startswith("zarr.json at 'g/a': ")


@pytest.mark.parametrize(
    "dtype",
    [
        np.dtype([("a", "u1"), ("b", "<i4")], align=True),
        np.dtype({"names": ["a"], "formats": ["u1"], "offsets": [1], "itemsize": 2}),
        [("a", "<i4", (2,))],
        [("a", "O")],
        "V0",
        "f16",
    ],
    ids=str,
)
def test_data_type_name_unsupported(dtype: Any) -> None:
    try:
        np.dtype(dtype)
    except TypeError:
        pytest.skip("dtype not available on this platform")
    with pytest.raises(UnsupportedError, match="^zarr.json at 'n': unsupported data type"):
        data_type_name(dtype, path="n")


def test_without_ml_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import fails
    monkeypatch.setattr(dtypes.registry, "_CACHE", {})
    for name in ("bfloat16", "int4", "complex_bfloat16"):
        with pytest.raises(UnsupportedError, match=r"pip install zarrox\[ml\]") as info:
            ArrayMetadataV3.from_json(doc(name, 0), path="a")
        assert f"'{name if 'complex' not in name else 'bfloat16'}'" in str(info.value)
        assert str(info.value).startswith("zarr.json at 'a': ")
    # types that need no ml_dtypes
    assert parse_data_type("complex_float16")[1] == np.dtype([("real", "<f2"), ("imag", "<f2")])
    assert parse_data_type("float32")[1] == np.dtype("float32")
