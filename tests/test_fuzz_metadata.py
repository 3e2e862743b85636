"""Fuzzing the metadata parsers of every format with hypothesis: valid documents of v3, v2,
v1, the draft v3 layout and both consolidated forms, mutated (members replaced by arbitrary
JSON, deleted or added; values made hostile: nesting thousands deep, integers of thousands of
digits, lone surrogates, huge structured sub-arrays), are stored where each format keeps them
and opened. The only exceptions allowed are zarrox's MetadataError and UnsupportedError (a
valid document zarrox does not support), and their messages name the node.

Deterministic in CI (derandomized, ``ZARROX_FUZZ_EXAMPLES`` examples per format, 200 by
default); for a long run: ``ZARROX_FUZZ_EXAMPLES=200000 ZARROX_FUZZ_RANDOM=1 pytest
tests/test_fuzz_metadata.py`` (see RELIABILITY.md).
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrox
from zarrox.errors import MetadataError, NodeNotFoundError, UnsupportedError

EXAMPLES = int(os.environ.get("ZARROX_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("ZARROX_FUZZ_RANDOM") != "1",
    suppress_health_check=list(HealthCheck),
    database=None,
)
LEGACY = Path(__file__).parent / "fixtures" / "legacy"


@pytest.fixture(autouse=True)
def _no_collection_while_fuzzing() -> Iterator[None]:
    """No garbage collection runs during a fuzz test: it would run whatever finalizer is due
    (an earlier module's, or one of this test's) at an arbitrary point, possibly inside a
    parse thousands of levels deep, where pytest's report of a failing finalizer hits the
    recursion limit and fails the test (seen once in CI on Python 3.11). Garbage is
    collected before and after, at a shallow depth, where such a finalizer is reported as
    the warning it is."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


NODE = "g/a"

# -- hostile values, spliced into the JSON text (json.dumps cannot write some of them) --------

RAW_VALUES = [
    "[" * 100_000 + "]" * 100_000,  # nesting deeper than any recursion limit
    '{"a":' * 3000 + "1" + "}" * 3000,
    "9" * 5000,  # more digits than int() converts
    "-" + "1" * 4400,
    '"\\ud800"',  # a lone surrogate
    '"a\\udfffb"',
    '[["f", "<i4", [100000000, 100000000]]]',  # a structured sub-array numpy cannot make
    '[["f", "<f8", [4294967296]]]',
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "18446744073709551616",
    "-9223372036854775809",
]

#: strings and keys that mean something to some parser
WORDS = [
    "zarr_format",
    "node_type",
    "array",
    "group",
    "shape",
    "chunks",
    "chunk_grid",
    "regular",
    "chunk_shape",
    "data_type",
    "dtype",
    "codecs",
    "compressor",
    "filters",
    "fill_value",
    "order",
    "C",
    "F",
    "attributes",
    "dimension_names",
    "chunk_key_encoding",
    "default",
    "v2",
    "separator",
    "/",
    ".",
    "name",
    "configuration",
    "must_understand",
    "id",
    "zlib",
    "blosc",
    "zstd",
    "gzip",
    "bytes",
    "endian",
    "little",
    "big",
    "transpose",
    "sharding_indexed",
    "crc32c",
    "vlen-utf8",
    "string",
    "int8",
    "uint64",
    "float32",
    "bfloat16",
    "<f8",
    ">i4",
    "|S4",
    "<U3",
    "|O",
    "|b1",
    "<M8[ns]",
    "<c16",
    "r16",
    "NaN",
    "Infinity",
    "-Infinity",
    "0x7fc00000",
    "AAAA",
    "metadata",
    "consolidated_metadata",
    "kind",
    "inline",
    "extensions",
    "storage_transformers",
    "chunk_memory_layout",
    "compression",
    "compression_opts",
    "dimension_separator",
    "https://purl.org/zarr/spec/protocol/core/3.0",
    "\ud800",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.sampled_from(WORDS)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(WORDS) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=10,
)


class Raw(str):
    """A placeholder for a raw JSON token (see RAW_VALUES)."""


def mutate(doc: Any, data: st.DataObject, depth: int = 0) -> Any:
    """`doc` with one member somewhere replaced, removed or added."""
    children = (
        list(doc)
        if isinstance(doc, dict)
        else list(range(len(doc)))
        if isinstance(doc, list)
        else []
    )
    if children and depth < 6 and data.draw(st.integers(0, 9)) < 7:
        key = data.draw(st.sampled_from(children))
        out = dict(doc) if isinstance(doc, dict) else list(doc)
        out[key] = mutate(out[key], data, depth + 1)
        return out
    action = data.draw(st.integers(0, 9))
    if action < 2 and isinstance(doc, dict):
        return {**doc, data.draw(st.sampled_from(WORDS)): data.draw(json_values)}
    if action < 3 and isinstance(doc, dict) and doc:
        out = dict(doc)
        del out[data.draw(st.sampled_from(list(doc)))]
        return out
    if action < 5:
        return Raw(data.draw(st.sampled_from(RAW_VALUES)))
    return data.draw(json_values)


def to_text(doc: Any) -> bytes:
    """JSON text of `doc`, its Raw placeholders replaced by their raw tokens."""
    raws: list[str] = []

    def placeholder(value: Any) -> Any:
        if isinstance(value, Raw):
            raws.append(str(value))
            return f"@@RAW{len(raws) - 1}@@"
        if isinstance(value, dict):
            return {k: placeholder(v) for k, v in value.items()}
        if isinstance(value, list):
            return [placeholder(v) for v in value]
        return value

    text = json.dumps(placeholder(doc))
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    return text.encode("utf-8", "surrogatepass")


# -- valid documents of each format --------------------------------------------------------------


def documents(store: zarrox.MemoryStore, key: str) -> Any:
    raw = store.get(key)
    assert raw is not None, key
    return json.loads(raw)


def v3_docs() -> list[Any]:
    s = zarrox.MemoryStore()
    zarrox.create_array(
        s,
        name="x",
        shape=(7, 5),
        dtype="float32",
        chunks=(3, 2),
        dimension_names=["y", "x"],
        attributes={"k": [1, {"d": None}]},
        fill_value=float("nan"),
    )
    zarrox.create_array(
        s,
        name="y",
        shape=(64,),
        dtype="uint16",
        chunks=(8,),
        shards=(32,),
        compressors=[{"name": "zstd", "configuration": {"level": 3}}],
    )
    zarrox.create_array(s, name="z", shape=(4,), dtype=str, chunks=(2,))
    zarrox.create_array(
        s,
        name="w",
        shape=(3, 3),
        dtype="bfloat16",
        chunks=(3, 3),
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "crc32c"},
        ],
    )
    zarrox.create_group(s, path="gg", attributes={"a": 1})
    return [documents(s, f"{n}/zarr.json") for n in ("x", "y", "z", "w", "gg")]


def v2_docs() -> list[tuple[Any, Any]]:
    s = zarrox.MemoryStore()
    zarrox.create_array(
        s,
        name="x",
        shape=(10, 7),
        chunks=(4, 3),
        zarr_format=2,
        dtype=">i4",
        compressors={"id": "zlib", "level": 1},
        order="F",
        filters=[{"id": "delta", "dtype": ">i4"}],
        attributes={"u": "m"},
    )
    zarrox.create_array(
        s,
        name="y",
        shape=(5,),
        chunks=(5,),
        zarr_format=2,
        dtype=[("a", "<i2"), ("b", "<f4", (2,))],
    )
    zarrox.create_array(
        s, name="z", shape=(6,), chunks=(3,), zarr_format=2, dtype="<U4", fill_value="ab"
    )
    zarrox.create_array(s, name="v", shape=(6,), chunks=(3,), zarr_format=2, dtype=str)
    zarrox.create_array(s, name="t", shape=(2,), chunks=(2,), zarr_format=2, dtype="<M8[ns]")
    return [(documents(s, f"{n}/.zarray"), documents(s, f"{n}/.zattrs")) for n in "xyztv"]


def v1_docs() -> list[tuple[Any, Any]]:
    stores = sorted((LEGACY / "v1_zarr1" / "stores").iterdir())
    return [
        (json.loads((d / "meta").read_text()), json.loads((d / "attrs").read_text()))
        for d in stores
    ]


def draft_docs() -> tuple[Any, list[Any]]:
    root = LEGACY / "draft_zarr2" / "store"
    entry = json.loads((root / "zarr.json").read_text())
    arrays = sorted((root / "meta" / "root").rglob("*.array.json"))
    return entry, [json.loads(p.read_text()) for p in arrays[:8]]


def consolidated_docs() -> tuple[Any, Any]:
    s2 = zarrox.MemoryStore()
    zarrox.create_group(s2, zarr_format=2, attributes={"top": True})
    zarrox.create_array(s2, name=NODE, shape=(4, 4), chunks=(2, 2), dtype="<f8", zarr_format=2)
    zarrox.create_array(s2, name="g/b", shape=(3,), chunks=(3,), dtype="|u1", zarr_format=2)
    zarrox.consolidate_metadata(s2)
    s3 = zarrox.MemoryStore()
    zarrox.create_group(s3)
    zarrox.create_array(s3, name=NODE, shape=(4, 4), chunks=(2, 2), dtype="float64")
    zarrox.create_array(s3, name="g/b", shape=(3,), chunks=(3,), dtype=str)
    zarrox.consolidate_metadata(s3)
    return documents(s2, ".zmetadata"), documents(s3, "zarr.json")


#: how errors about the members of the consolidated group name them
MEMBERS = ("''", "'g'", f"'{NODE}'", "'g/b'")
V3 = v3_docs()
V2 = v2_docs()
V1 = v1_docs()
DRAFT_ENTRY, DRAFT = draft_docs()
ZMETADATA, CONSOLIDATED_V3 = consolidated_docs()

# -- opening, and what may go wrong ----------------------------------------------------------------


def exercise(node: Any) -> None:
    """What opening a node lets a user do without data: describe it, read one element."""
    if isinstance(node, zarrox.Array):
        _ = (node.shape, node.dtype, node.chunks, node.fill_value, node.attrs.asdict())
        if node.ndim and 0 < math.prod(node.shape):
            node[(0,) * node.ndim]
    else:
        _ = node.attrs.asdict()
        for _name, member in node.members():
            exercise(member)


def check_open(
    open_node: Callable[[], Any], names: tuple[str, ...], not_found_ok: bool = False
) -> None:
    """Open and exercise a node: fine, or a MetadataError / UnsupportedError naming the node
    (one of ``names``: the node, or for consolidated metadata its document or a member). A
    NodeNotFoundError only where a mutation may have removed the node (``not_found_ok``)."""
    try:
        exercise(open_node())
    except (MetadataError, UnsupportedError) as e:
        assert any(n in str(e) for n in names), f"{type(e).__name__} names none of {names}: {e}"
    except NodeNotFoundError:
        if not not_found_ok:
            raise


def put(store: zarrox.MemoryStore, key: str, doc: Any) -> None:
    store.set(key, to_text(doc))


@FUZZ
@given(st.data())
def test_fuzz_v3(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    put(s, "g/zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": {}})
    put(s, f"{NODE}/zarr.json", mutate(data.draw(st.sampled_from(V3)), data))
    check_open(lambda: zarrox.open(s, path=NODE, mode="r"), (f"'{NODE}'",))


@FUZZ
@given(st.data())
def test_fuzz_v2(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    put(s, "g/.zgroup", {"zarr_format": 2})
    zarray, zattrs = data.draw(st.sampled_from(V2))
    which = data.draw(st.integers(0, 3))
    put(s, f"{NODE}/.zarray", mutate(zarray, data) if which else zarray)
    put(s, f"{NODE}/.zattrs", mutate(zattrs, data) if which != 1 else zattrs)
    check_open(lambda: zarrox.open(s, path=NODE, mode="r"), (f"'{NODE}'",))


@FUZZ
@given(st.data())
def test_fuzz_v2_group(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    put(s, f"{NODE}/.zgroup", mutate({"zarr_format": 2}, data))
    put(s, f"{NODE}/.zattrs", mutate({"a": [1, 2]}, data))
    check_open(lambda: zarrox.open(s, path=NODE, mode="r"), (f"'{NODE}'",))


@FUZZ
@given(st.data())
def test_fuzz_v1(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    meta, attrs = data.draw(st.sampled_from(V1))
    which = data.draw(st.integers(0, 3))
    put(s, f"{NODE}/meta", mutate(meta, data) if which else meta)
    put(s, f"{NODE}/attrs", mutate(attrs, data) if which != 1 else attrs)
    check_open(lambda: zarrox.open(s, path=NODE, mode="r"), (f"'{NODE}'",))


@FUZZ
@given(st.data())
def test_fuzz_draft_v3(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    entry_mutated = data.draw(st.integers(0, 4)) == 0
    put(s, "zarr.json", mutate(DRAFT_ENTRY, data) if entry_mutated else DRAFT_ENTRY)
    put(s, "meta/root/g.group.json", {"attributes": {}})
    put(s, f"meta/root/{NODE}.array.json", mutate(data.draw(st.sampled_from(DRAFT)), data))
    # A mutated entry point may no longer make a draft hierarchy: then there is no node.
    check_open(
        lambda: zarrox.open(s, path=NODE, mode="r"), (f"'{NODE}'",), not_found_ok=entry_mutated
    )


@FUZZ
@given(st.data())
def test_fuzz_consolidated_v2(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    put(s, ".zgroup", {"zarr_format": 2})
    put(s, ".zmetadata", mutate(ZMETADATA, data))
    check_open(lambda: zarrox.open_consolidated(s), (".zmetadata", *MEMBERS))


@FUZZ
@given(st.data())
def test_fuzz_consolidated_v3(data: st.DataObject) -> None:
    s = zarrox.MemoryStore()
    put(s, "zarr.json", mutate(CONSOLIDATED_V3, data))
    check_open(lambda: zarrox.open_consolidated(s), ("zarr.json", *MEMBERS))


def test_the_fuzzed_documents_are_valid_before_mutation() -> None:
    """Each base document opens: the mutations start from real metadata."""
    for doc in V3:
        s = zarrox.MemoryStore()
        put(s, f"{NODE}/zarr.json", doc)
        exercise(zarrox.open(s, path=NODE, mode="r"))
    for zarray, zattrs in V2:
        s = zarrox.MemoryStore()
        put(s, f"{NODE}/.zarray", zarray)
        put(s, f"{NODE}/.zattrs", zattrs)
        exercise(zarrox.open(s, path=NODE, mode="r"))
    for meta, attrs in V1:
        s = zarrox.MemoryStore()
        put(s, f"{NODE}/meta", meta)
        put(s, f"{NODE}/attrs", attrs)
        exercise(zarrox.open(s, path=NODE, mode="r"))
    for doc in DRAFT:
        s = zarrox.MemoryStore()
        put(s, "zarr.json", DRAFT_ENTRY)
        put(s, f"meta/root/{NODE}.array.json", doc)
        exercise(zarrox.open(s, path=NODE, mode="r"))
    for key, doc in ((".zmetadata", ZMETADATA), ("zarr.json", CONSOLIDATED_V3)):
        s = zarrox.MemoryStore()
        if key == ".zmetadata":
            put(s, ".zgroup", {"zarr_format": 2})
        put(s, key, doc)
        g = zarrox.open_consolidated(s)
        exercise(g)
        assert isinstance(g[NODE], zarrox.Array)
    assert np.isnan(zarrox.open(_store_with(V3[0]), path=NODE, mode="r").fill_value)


def _store_with(doc: Any) -> zarrox.MemoryStore:
    s = zarrox.MemoryStore()
    put(s, f"{NODE}/zarr.json", doc)
    return s


pytestmark = pytest.mark.filterwarnings("ignore")
