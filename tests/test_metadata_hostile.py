"""Metadata documents as an attacker (or a broken writer) makes them, in every format: each is a
MetadataError naming the node (never RecursionError, ValueError, UnicodeEncodeError, TypeError
or KeyError from inside the parser), and what zarr-python opens, zarrox opens."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import zarrox
from zarrox.errors import MetadataError

LEGACY = Path(__file__).parent / "fixtures" / "legacy"
NODE = "g/a"
DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DIGITS = "9" * 5000

V3_ARRAY = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [4],
    "data_type": "int32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {},
}
V2_ARRAY = {
    "zarr_format": 2,
    "shape": [4],
    "chunks": [2],
    "dtype": "<i4",
    "compressor": None,
    "fill_value": 0,
    "order": "C",
    "filters": None,
}
V1_META = json.loads((LEGACY / "v1_zarr1" / "stores" / "zlib_c_i4" / "meta").read_text())
DRAFT_ROOT = LEGACY / "draft_zarr2" / "store"
DRAFT_ENTRY = json.loads((DRAFT_ROOT / "zarr.json").read_text())
DRAFT_ARRAY = json.loads(
    (DRAFT_ROOT / "meta" / "root" / "codecs" / "bz2_u1.array.json").read_text()
)


def with_raw(doc: dict[str, Any], member: str, raw: str) -> bytes:
    """`doc` as JSON text with `member`'s value replaced by the raw JSON token `raw`."""
    text = json.dumps({**doc, member: "@@RAW@@"})
    return text.replace('"@@RAW@@"', raw).encode()


def store_v3(text: bytes) -> zarrox.MemoryStore:
    s = zarrox.MemoryStore()
    s.set(f"{NODE}/zarr.json", text)
    return s


def store_v2(text: bytes, attrs: bytes = b"{}") -> zarrox.MemoryStore:
    s = zarrox.MemoryStore()
    s.set(f"{NODE}/.zarray", text)
    s.set(f"{NODE}/.zattrs", attrs)
    return s


def store_v1(text: bytes) -> zarrox.MemoryStore:
    s = zarrox.MemoryStore()
    s.set(f"{NODE}/meta", text)
    s.set(f"{NODE}/attrs", b"{}")
    return s


def store_draft(array: bytes, entry: bytes | None = None) -> zarrox.MemoryStore:
    s = zarrox.MemoryStore()
    s.set("zarr.json", entry if entry is not None else json.dumps(DRAFT_ENTRY).encode())
    s.set("meta/root/g.group.json", b'{"attributes": {}}')
    s.set(f"meta/root/{NODE}.array.json", array)
    return s


def assert_metadata_error(store: zarrox.MemoryStore, match: str = "") -> MetadataError:
    with pytest.raises(MetadataError) as info:
        a = zarrox.open(store, path=NODE, mode="r")
        a[...]
    assert f"'{NODE}'" in str(info.value), str(info.value)
    assert match in str(info.value), str(info.value)
    return info.value


HOSTILE: dict[str, Callable[[], zarrox.MemoryStore]] = {
    # JSON Python cannot decode: RecursionError and ValueError inside json.loads
    "v3 nesting": lambda: store_v3(with_raw(V3_ARRAY, "attributes", DEEP_ARRAY)),
    "v2 nesting": lambda: store_v2(with_raw(V2_ARRAY, "filters", DEEP_ARRAY)),
    "v2 attrs nesting": lambda: store_v2(json.dumps(V2_ARRAY).encode(), DEEP_ARRAY.encode()),
    "v1 nesting": lambda: store_v1(with_raw(V1_META, "compression_opts", DEEP_ARRAY)),
    "draft nesting": lambda: store_draft(with_raw(DRAFT_ARRAY, "attributes", DEEP_ARRAY)),
    "v3 digits": lambda: store_v3(with_raw(V3_ARRAY, "fill_value", DIGITS)),
    "v2 digits": lambda: store_v2(with_raw(V2_ARRAY, "fill_value", DIGITS)),
    "v1 digits": lambda: store_v1(with_raw(V1_META, "fill_value", DIGITS)),
    "draft digits": lambda: store_draft(with_raw(DRAFT_ARRAY, "fill_value", DIGITS)),
    # text UTF-8 cannot encode (lone surrogates), where it would become bytes
    "v3 string fill surrogate": lambda: store_v3(
        with_raw(
            {**V3_ARRAY, "data_type": "string", "codecs": [{"name": "vlen-utf8"}]},
            "fill_value",
            '"\\ud800"',
        )
    ),
    "v2 object fill surrogate": lambda: store_v2(
        with_raw(
            {**V2_ARRAY, "dtype": "|O", "filters": [{"id": "vlen-utf8"}]},
            "fill_value",
            '"a\\udfffb"',
        )
    ),
    "draft key suffix surrogate": lambda: store_draft(
        json.dumps(DRAFT_ARRAY).encode(),
        with_raw(DRAFT_ENTRY, "metadata_key_suffix", '"\\ud800.json"'),
    ),
    # structured types numpy cannot make (numpy ValueError)
    "v2 huge sub-array": lambda: store_v2(
        json.dumps({**V2_ARRAY, "dtype": [["f", "<i4", [100000000, 100000000]]]}).encode()
    ),
    "v1 huge sub-array": lambda: store_v1(
        json.dumps({**V1_META, "dtype": [["f", "<f8", [4294967296]]]}).encode()
    ),
    "draft huge sub-array": lambda: store_draft(
        json.dumps({**DRAFT_ARRAY, "data_type": [["f", "<i4", [100000000, 100000000]]]}).encode()
    ),
    # shapes beyond what the core counts in
    "v3 shape 2**64": lambda: store_v3(json.dumps({**V3_ARRAY, "shape": [2**64]}).encode()),
    "draft shape 2**64": lambda: store_draft(
        json.dumps({**DRAFT_ARRAY, "shape": [2**64]}).encode()
    ),
    # errors found in a document other than the node's, or late: they must still name it
    "v1 compressor configuration": lambda: store_v1(
        json.dumps(
            {**V1_META, "compression": "blosc", "compression_opts": {"shuffle": [1]}}
        ).encode()
    ),
    "draft compressor configuration": lambda: store_draft(
        json.dumps(
            {
                **DRAFT_ARRAY,
                "compressor": {
                    "codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
                    "configuration": {"cname": "lz4", "shuffle": [1]},
                },
            }
        ).encode()
    ),
    "draft entry point": lambda: store_draft(
        json.dumps(DRAFT_ARRAY).encode(), json.dumps({**DRAFT_ENTRY, "extensions": 5}).encode()
    ),
    # numpy's ValueErrors on a filter's data type (found by the fuzzer's longer runs)
    "v2 filter dtype object": lambda: store_v2(
        json.dumps({**V2_ARRAY, "filters": [{"id": "delta", "dtype": {"a": "x"}}]}).encode()
    ),
    "v2 filter dtype surrogate": lambda: store_v2(
        with_raw(
            {**V2_ARRAY, "filters": "@@F@@"}, "filters", '[{"id": "delta", "dtype": "\\ud800"}]'
        )
    ),
    # zarr-python refuses lists and objects as fill values of string arrays
    "v2 vlen-utf8 list fill": lambda: store_v2(
        json.dumps(
            {**V2_ARRAY, "dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": [1, 2]}
        ).encode()
    ),
    "v2 vlen-bytes object fill": lambda: store_v2(
        json.dumps(
            {**V2_ARRAY, "dtype": "|O", "filters": [{"id": "vlen-bytes"}], "fill_value": {"a": 1}}
        ).encode()
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_metadata_is_a_metadata_error_naming_the_node(case: str) -> None:
    assert_metadata_error(HOSTILE[case]())


def test_an_entry_point_python_cannot_decode_makes_no_draft_hierarchy() -> None:
    """A root zarr.json nested too deep to decode is no draft entry point: the node below it
    is not found (it was a RecursionError)."""
    s = store_draft(
        json.dumps(DRAFT_ARRAY).encode(), with_raw(DRAFT_ENTRY, "extensions", DEEP_ARRAY)
    )
    with pytest.raises(zarrox.errors.NodeNotFoundError, match=f"'{NODE}'"):
        zarrox.open(s, path=NODE, mode="r")


def test_list_and_dict_fill_values_of_v2_string_arrays_are_refused_as_zarr_python_does(
    tmp_path: Path,
) -> None:
    import zarr

    for vlen in ("vlen-utf8", "vlen-bytes"):
        for fill in ([1, 2], {"a": 1}, []):
            doc = {**V2_ARRAY, "dtype": "|O", "filters": [{"id": vlen}], "fill_value": fill}
            node = tmp_path / f"{vlen}-{type(fill).__name__}-{len(fill)}"
            node.mkdir()
            (node / ".zarray").write_text(json.dumps(doc))
            with pytest.raises(TypeError):
                zarr.open_array(str(node), mode="r")
            with pytest.raises(MetadataError, match="object array takes a string"):
                zarrox.open_array(str(node), mode="r")
    # What zarr-python reads, zarrox reads.
    doc = {**V2_ARRAY, "dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": "x"}
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / ".zarray").write_text(json.dumps(doc))
    assert zarrox.open_array(str(tmp_path / "ok"), mode="r").fill_value == "x"


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("fmt", [2, 3])
def test_attributes_500_deep_open_and_update(tmp_path: Path, fmt: int) -> None:
    """zarr-python opens attributes nested 500 deep; zarrox used to fail in copy.deepcopy."""
    import zarr

    deep = nested(500)
    a = zarrox.create_array(tmp_path, name=NODE, shape=(2,), dtype="i2", zarr_format=fmt)
    key = "zarr.json" if fmt == 3 else ".zattrs"
    path = tmp_path / NODE / key
    doc = json.loads(path.read_text())
    if fmt == 3:
        doc["attributes"] = {"deep": deep}
    else:
        doc = {"deep": deep}
    path.write_text(json.dumps(doc))
    assert zarr.open_array(str(tmp_path / NODE), mode="r").attrs["deep"] == deep
    a = zarrox.open_array(tmp_path, path=NODE, mode="r+")
    assert a.attrs["deep"] == deep
    a.attrs["more"] = 1
    again = zarrox.open_array(tmp_path, path=NODE, mode="r")
    assert again.attrs.asdict() == {"deep": deep, "more": 1}
    g = zarrox.consolidate_metadata(tmp_path)
    assert g[NODE].attrs["deep"] == deep


def test_consolidated_metadata_must_list_the_parents_of_its_nodes() -> None:
    """A consolidated document listing 'g/a' but not the group 'g' was a KeyError when the
    group's members were listed; it is a MetadataError when the group is opened."""
    for fmt in (2, 3):
        s = zarrox.MemoryStore()
        zarrox.create_group(s, zarr_format=fmt)
        zarrox.create_array(s, name=NODE, shape=(2,), dtype="i1", zarr_format=fmt)
        zarrox.consolidate_metadata(s)
        if fmt == 3:
            doc = json.loads(s.get("zarr.json"))  # type: ignore[arg-type]
            del doc["consolidated_metadata"]["metadata"]["g"]
            s.set("zarr.json", json.dumps(doc).encode())
        else:
            doc = json.loads(s.get(".zmetadata"))  # type: ignore[arg-type]
            del doc["metadata"]["g/.zgroup"], doc["metadata"]["g/.zattrs"]
            s.set(".zmetadata", json.dumps(doc).encode())
        with pytest.raises(MetadataError, match="'g/a' is listed without its parent group 'g'"):
            zarrox.open_consolidated(s)


def test_errors_writing_metadata_name_the_node() -> None:
    s = zarrox.MemoryStore()
    for fmt in (2, 3):
        a = zarrox.create_array(s, name=f"{NODE}{fmt}", shape=(2,), dtype="i1", zarr_format=fmt)
        with pytest.raises(MetadataError, match=f"node '{NODE}{fmt}': cannot encode"):
            a.attrs["x"] = object()
        with pytest.raises(ValueError, match=f"array '{NODE}{fmt}': new shape"):
            a.resize(2**64)


DEEP_ARGUMENTS = r"""
import json, sys
import zarrox

def deep(n):
    value = []
    for _ in range(n):
        value = [value]
    return value

looped = {"name": "bytes"}
looped["configuration"] = looped
calls = {
    "deep codecs": lambda: zarrox.create_array({}, shape=(4,), dtype="i4", codecs=deep(100_000)),
    "looped codec": lambda: zarrox.create_array({}, shape=(4,), dtype="i4", codecs=[looped]),
    "deep grid": lambda: zarrox._core.RectilinearGrid([deep(100_000)]),
}
out = {}
for name, call in calls.items():
    try:
        call()
        out[name] = ["no error", ""]
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def test_arguments_nested_past_the_json_limit_raise_and_never_crash() -> None:
    """Codecs and chunk edges given as Python objects nested 100,000 deep, or containing
    themselves, are a clear error: the core converts Python JSON recursively and stops at
    serde_json's depth (128) instead of overflowing its stack (which it did). In a child
    process: a crash must not take pytest down."""
    proc = subprocess.run(
        [sys.executable, "-c", DEEP_ARGUMENTS], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out == {
        "deep codecs": ["SpecError", "codecs: JSON nested more than 128 levels deep"],
        "looped codec": ["SpecError", "codecs: JSON nested more than 128 levels deep"],
        "deep grid": ["SpecError", "chunk_shapes: JSON nested more than 128 levels deep"],
    }
