"""Legacy formats: Zarr v1 and the 2021-22 draft v3 layout, read and converted to v3.

The fixtures under ``fixtures/legacy/`` were written by the real writers (zarr-python 1.1.0 for
v1, zarr-python 2.18's experimental v3 API for the draft layout) or, for what no writer at hand
produces, built by hand from the spec; ``make_legacy_fixtures.py`` made them and says which is
which. Every array is read and compared with the values saved beside it; group listings and
attributes with ``expected.json``; writes must fail with a clear error; conversion to v3 must
keep values and attributes, and zarr-python 3.1 and tensorstore must read the result.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import tensorstore as ts
import zarr

import zarrox
from conftest import ZARR_VERSION
from zarrox.cli import main as cli_main
from zarrox.errors import MetadataError, ReadOnlyError, UnsupportedError
from zarrox.metadata.draft_v3 import DraftArrayMetadata
from zarrox.metadata.v1 import ArrayMetadataV1

warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=RuntimeWarning)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "legacy"
DRAFT_SETS = ("draft_zarr2", "draft_zarr2_root", "draft_spec", "draft_spec_noroot")
HIERARCHIES = ("draft_zarr2", "draft_spec", "draft_spec_noroot")


def _desc(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name / "expected.json").read_text())


def _expected(name: str, path: str) -> np.ndarray:
    return np.load(FIXTURES / name / "expected" / ((path or "root").replace("/", "__") + ".npy"))


def _store(name: str, path: str) -> tuple[Path, str]:
    """(store root, node path) of a fixture array."""
    if name == "v1_zarr1":
        return FIXTURES / name / "stores" / path, ""
    return FIXTURES / name / "store", path


CASES = [(name, path) for name in ("v1_zarr1", *DRAFT_SETS) for path in _desc(name)["arrays"]]
IDS = [f"{name}:{path or '/'}" for name, path in CASES]


def assert_values(actual: Any, expected: np.ndarray, *, converted: bool = False) -> None:
    """Same values and data type (``converted``: v3 structured types store their fields
    little-endian, so only the values of the fields must match)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    if converted and expected.dtype.fields is not None:
        assert actual.dtype.names == expected.dtype.names
        actual = actual.astype(expected.dtype)
    if expected.dtype.kind in "biufc":
        # numbers are read in native byte order
        assert actual.dtype == expected.dtype.newbyteorder("=")
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual.dtype == expected.dtype
        if expected.dtype.kind in "mM":
            np.testing.assert_array_equal(actual.view("i8"), expected.view("i8"))
        else:
            assert actual.tobytes() == expected.tobytes()


def test_fixtures_are_small() -> None:
    files = [p for p in FIXTURES.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 1024 * 1024
    for name in ("v1_zarr1", *DRAFT_SETS):
        store_files = [p for p in (FIXTURES / name).rglob("*") if p.is_file()]
        assert sum(p.stat().st_size for p in store_files) < 32 * 1024, name


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "path"), CASES, ids=IDS)
def test_read_every_fixture_array(name: str, path: str) -> None:
    info = _desc(name)["arrays"][path]
    expected = _expected(name, path)
    root, node = _store(name, path)
    a = zarrox.open_array(root, path=node)
    assert a.shape == tuple(info["shape"]) and a.ndim == expected.ndim
    assert a.chunks == tuple(info["chunks"])
    assert a.shards == (None if info.get("shards") is None else tuple(info["shards"]))
    assert dict(a.attrs) == info["attrs"]
    assert a.read_only
    assert a.zarr_format == (1 if name == "v1_zarr1" else 3)
    assert_values(a[...], expected)
    assert_values(np.asarray(a), expected)
    if expected.ndim:
        # partial, strided and orthogonal reads
        sel = tuple(slice(1, None, 2) for _ in range(expected.ndim))
        assert_values(a[sel], expected[sel])
        last = tuple(slice(n - 1, n) for n in expected.shape)
        assert_values(a[last], expected[last])
        idx = [np.array([n - 1, 0]) for n in expected.shape]
        assert_values(a.oindex[tuple(idx)], expected[np.ix_(*idx)])
    # also through zarrox.open and with an explicit format
    node_ = zarrox.open(root, path=node, mode="r")
    assert isinstance(node_, zarrox.Array)
    fmt = 1 if name == "v1_zarr1" else 3
    assert_values(zarrox.open_array(root, path=node, zarr_format=fmt)[...], expected)


def test_fill_values_and_missing_chunks() -> None:
    v1 = FIXTURES / "v1_zarr1" / "stores"
    a = zarrox.open_array(v1 / "blosc_lz4_c_f8")
    assert np.isnan(a.fill_value) and np.isnan(a[6, 0])  # chunk (2, 0) is not stored
    assert not (v1 / "blosc_lz4_c_f8" / "2.0").exists()
    assert (v1 / "blosc_lz4_c_f8" / "2.2").exists()  # an edge chunk
    assert zarrox.open_array(v1 / "zlib_c_f2_ninf")[4] == -np.inf
    assert zarrox.open_array(v1 / "bytes_s4_zlib")[0] == b"zz"
    assert zarrox.open_array(v1 / "none_c_b1")[5, 0]
    # null: the values of missing chunks are undefined; zarrox reads zeros (as for v2)
    null = zarrox.open_array(v1 / "lzma_raw_f_i8_null")
    assert null.fill_value is None and null[5, 0] == 0
    assert zarrox.open_array(v1 / "struct_blosc_null")[4].tobytes() == bytes(10)
    # zarr-python 1.x filled missing chunks with ndarray.fill(0): the |S2 field gets b"0"
    zero = zarrox.open_array(v1 / "struct_none_zero_f")
    assert zero.fill_value.tobytes() == b"\x00" * 5 + b"0\x00"
    assert zero[3, 0].tobytes() == zero.fill_value.tobytes()
    draft = FIXTURES / "draft_zarr2" / "store"
    assert zarrox.open_array(draft, path="types/bytes_s3").fill_value == b"ab"
    assert zarrox.open_array(draft, path="codecs/zstd_c8")[6] == 1 + 2j
    assert np.isnat(zarrox.open_array(draft, path="types/datetime_s")[4])
    assert zarrox.open_array(draft, path="types/i8_null").fill_value is None
    spec = FIXTURES / "draft_spec" / "store"
    assert zarrox.open_array(spec, path="b/zstd_inf_f8")[5] == np.inf  # "+Infinity"
    assert zarrox.open_array(spec, path="a/endian_big_blosc_i2_f")[4, 0] == 32767  # "0x7fff"
    assert zarrox.open_array(spec, path="b/dot_sep_u8")[3, 4] == 1  # "0x0000000000000001"
    assert zarrox.open_array(spec, path="raw_r16")[4].tobytes() == b"\xbe\xef"  # "0xbeef"


@pytest.mark.parametrize("name", HIERARCHIES)
def test_group_listings(name: str) -> None:
    desc = _desc(name)
    root = FIXTURES / name / "store"
    for path, info in desc["groups"].items():
        g = zarrox.open_group(root, path=path, mode="r")
        assert isinstance(g, zarrox.Group) and g.read_only and g.zarr_format == 3
        assert dict(g.attrs) == info["attrs"], path
        assert g.array_keys() == info["arrays"], path
        assert g.group_keys() == info["groups"], path
        assert list(g) == sorted(info["arrays"] + info["groups"])
        assert len(g) == len(info["arrays"]) + len(info["groups"])
        assert [n for n, _ in g.members()] == sorted(info["arrays"] + info["groups"])
        assert g.metadata.explicit == info["explicit"]
        for child in info["arrays"] + info["groups"]:
            assert child in g
        assert "no-such-node" not in g
        with pytest.raises(KeyError):
            g["no-such-node"]
    g = zarrox.open_group(root, mode="r")
    everything = {n for n, _ in g.members(max_depth=None)}
    arrays = set(desc["arrays"])
    groups = set(desc["groups"]) - {""}
    assert everything == arrays | groups
    tree = str(g.tree())
    for path in arrays | groups:
        assert path.rsplit("/", 1)[-1] in tree
    # nodes are reached from their group too, with the same values
    for path in arrays:
        parent, _, base = path.rpartition("/")
        child = zarrox.open_group(root, path=parent)[base]
        assert isinstance(child, zarrox.Array)
        assert_values(child[...], _expected(name, path))


def test_paths_that_are_not_nodes() -> None:
    root = FIXTURES / "draft_zarr2" / "store"
    with pytest.raises(zarrox.errors.ArrayNotFoundError):
        zarrox.open_array(root, path="grp/nothing", mode="r")
    with pytest.raises(zarrox.errors.GroupNotFoundError):
        zarrox.open_group(root, path="grp/sub/gzip_f_f4", mode="r")  # an array
    with pytest.raises(zarrox.errors.ArrayNotFoundError):
        zarrox.open_array(root, path="grp/sub", mode="r")  # an implicit group
    with pytest.raises(zarrox.errors.NodeNotFoundError):
        zarrox.open(root, path="meta/root", mode="r")  # the layout's own prefixes
    assert isinstance(zarrox.open(root, path="deep/er", mode="r"), zarrox.Group)
    # a draft hierarchy below the store's root is found from its entry point
    parent = FIXTURES / "draft_spec"
    a = zarrox.open_array(parent, path="store/a/gzip_f4", mode="r")
    assert_values(a[...], _expected("draft_spec", "a/gzip_f4"))
    assert zarrox.open_group(parent, path="store", mode="r").group_keys() == ["a", "b"]


def test_v1_chunks_are_numcodecs_bitstreams() -> None:
    """zarr-python 1.x's own blosc/zlib/bz2/lzma chunks decode with numcodecs, to the chunk's
    bytes in the layout zarrox reads (F with blosc when order is F, C otherwise)."""
    for name in _desc("v1_zarr1")["arrays"]:
        meta = zarrox.open_array(FIXTURES / "v1_zarr1" / "stores" / name).metadata
        assert isinstance(meta, ArrayMetadataV1)
        codec = None if meta.compressor is None else numcodecs.get_codec(meta.compressor)
        expected = _expected("v1_zarr1", name)
        for key in (FIXTURES / "v1_zarr1" / "stores" / name).iterdir():
            if key.name in ("meta", "attrs"):
                continue
            coords = tuple(int(c) for c in key.name.split("."))
            raw = key.read_bytes()
            decoded = bytes(codec.decode(raw)) if codec is not None else raw
            chunk = np.frombuffer(decoded, dtype=meta.dtype)
            chunk = chunk.reshape(meta.chunks, order=meta.layout)
            region = tuple(
                slice(i * c, min((i + 1) * c, n))
                for i, c, n in zip(coords, meta.chunks, meta.shape, strict=True)
            )
            inside = chunk[tuple(slice(0, r.stop - r.start) for r in region)]
            assert inside.tobytes() == np.ascontiguousarray(expected[region]).tobytes(), key
    # the F-order quirk: zarr-python 1.x's non-blosc compressors wrote C layout
    zlib_f = zarrox.open_array(FIXTURES / "v1_zarr1" / "stores" / "zlib_f_i4").metadata
    blosc_f = zarrox.open_array(FIXTURES / "v1_zarr1" / "stores" / "blosc_zstd_f_i2be").metadata
    assert zlib_f.order == "F" and zlib_f.layout == "C"
    assert [c["name"] for c in zlib_f.to_core_json()["codecs"]] == ["bytes", "numcodecs.zlib"]
    assert blosc_f.layout == "F"
    assert [c["name"] for c in blosc_f.to_core_json()["codecs"]] == [
        "transpose",
        "bytes",
        "numcodecs.blosc",
    ]


def test_draft_shards_follow_the_spec() -> None:
    """Read a zarr-python 2.18 shard by the spec's rules (index of little-endian uint64
    (offset, nbytes) pairs in C order at the end, 2^64-1 for empty) and compare."""
    root = FIXTURES / "draft_zarr2" / "store"
    a = zarrox.open_array(root, path="sharded/u2_none")
    meta = a.metadata
    assert isinstance(meta, DraftArrayMetadata) and meta.chunks_per_shard == (2, 2)
    sharding = meta.to_core_json()["codecs"][0]
    assert sharding["name"] == "sharding_indexed"
    assert sharding["configuration"]["chunk_shape"] == [2, 3]
    assert sharding["configuration"]["index_codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]
    assert sharding["configuration"]["index_location"] == "end"
    expected = _expected("draft_zarr2", "sharded/u2_none")
    seen_empty = 0
    data_dir = root / "data" / "root" / "sharded" / "u2_none"
    shards = sorted(p for p in data_dir.rglob("*") if p.is_file())
    assert [p.relative_to(data_dir).as_posix() for p in shards] == ["c0/0", "c1/0", "c2/1"]
    for shard in shards:
        s = tuple(int(p) for p in shard.relative_to(data_dir).as_posix()[1:].split("/"))
        data = shard.read_bytes()
        index = np.frombuffer(data[-16 * 4 :], dtype="<u8").reshape(2, 2, 2)
        for local in np.ndindex(2, 2):
            offset, nbytes = (int(v) for v in index[local])
            if (offset, nbytes) == (2**64 - 1, 2**64 - 1):
                seen_empty += 1
                continue
            chunk = np.frombuffer(data[offset : offset + nbytes], dtype="<u2").reshape(2, 3)
            r0, c0 = (s[0] * 2 + local[0]) * 2, (s[1] * 2 + local[1]) * 3
            part = expected[r0 : r0 + 2, c0 : c0 + 3]
            np.testing.assert_array_equal(chunk[: part.shape[0], : part.shape[1]], part)
    assert seen_empty > 0
    assert a.nshards_initialized == 3 and a.nshards == 6


# --------------------------------------------------------------------------------------------
# Writes are refused
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "path"),
    [
        (FIXTURES / "v1_zarr1" / "stores" / "zlib_c_i4", ""),
        (FIXTURES / "draft_zarr2" / "store", "grp/sub/gzip_f_f4"),
        (FIXTURES / "draft_spec" / "store", "sharded_u2"),
    ],
)
def test_writes_raise_a_clear_error(root: Path, path: str) -> None:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    a = zarrox.open_array(root, path=path, mode="r+")
    assert a.read_only
    for write in (
        lambda: a.__setitem__((slice(0, 1),) * a.ndim, 0),
        lambda: a.attrs.__setitem__("x", 1),
        lambda: a.resize(tuple(2 * n for n in a.shape)),
        lambda: a.append(np.zeros((1, *a.shape[1:]), dtype=a.dtype)),
    ):
        with pytest.raises(ReadOnlyError, match="convert"):
            write()
    assert "x" not in a.attrs
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before


def test_group_writes_raise_a_clear_error() -> None:
    root = FIXTURES / "draft_zarr2" / "store"
    g = zarrox.open_group(root, path="grp", mode="a")
    with pytest.raises(ReadOnlyError, match="draft Zarr v3 layout.*convert"):
        g.attrs["x"] = 1
    with pytest.raises(ReadOnlyError, match="convert"):
        g.create_array("new", shape=(2,), dtype="i4")
    with pytest.raises(ReadOnlyError, match="convert"):
        g.create_group("new")
    with pytest.raises((ReadOnlyError, UnsupportedError), match="convert"):
        zarrox.consolidate_metadata(root)
    assert not (root / "zarr.json").read_text().count("node_type")
    assert dict(g.attrs) == {"kind": "explicit"}


# --------------------------------------------------------------------------------------------
# Conversion to v3
# --------------------------------------------------------------------------------------------


def _check_converted(out: Path, name: str, path: str) -> None:
    info = _desc(name)["arrays"][path]
    expected = _expected(name, path)
    b = zarrox.open_array(out, path=path, mode="r")
    assert b.zarr_format == 3
    assert dict(b.attrs) == info["attrs"]
    assert b.chunks == tuple(info["chunks"])
    assert b.shards == (None if info.get("shards") is None else tuple(info["shards"]))
    assert_values(b[...], expected, converted=True)
    # zarr-python reads the converted array (3.1 reads only the legacy "structured", not the
    # "struct" zarrox writes, as 3.2-3.4 do)
    if ZARR_VERSION < (3, 2) and expected.dtype.fields is not None:
        return
    z = zarr.open_array(str(out), path=path, mode="r")
    got = np.asarray(z[...])
    if expected.dtype.kind in "biufc":
        np.testing.assert_array_equal(got, expected)
    elif expected.dtype.kind in "mM":
        np.testing.assert_array_equal(got.view("i8"), expected.view("i8"))
    elif expected.dtype.kind in "SU":
        np.testing.assert_array_equal(got, expected)
    # tensorstore too, for the types its zarr3 driver has
    if expected.dtype.kind in "biufc":
        kv = {"driver": "file", "path": str(out / path) + "/"}
        t = ts.open({"driver": "zarr3", "kvstore": kv}, open=True).result()
        np.testing.assert_array_equal(np.asarray(t.read().result()), expected)


@pytest.mark.parametrize("name", DRAFT_SETS)
def test_convert_draft_hierarchy(tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    node = zarrox.convert(FIXTURES / name / "store", out)
    desc = _desc(name)
    for path in desc["arrays"]:
        _check_converted(out, name, path)
    for path, info in desc["groups"].items():
        g = zarrox.open_group(out, path=path, mode="r")
        assert g.zarr_format == 3 and dict(g.attrs) == info["attrs"]
        assert g.array_keys() == info["arrays"] and g.group_keys() == info["groups"]
        if ZARR_VERSION < (3, 2) and '"struct"' in "".join(
            p.read_text() for p in out.rglob("zarr.json")
        ):
            continue  # zarr-python 3.1 reads only the legacy "structured", not "struct"
        assert dict(zarr.open_group(str(out), path=path, mode="r").attrs) == info["attrs"]
    assert isinstance(node, zarrox.Array if "" in desc["arrays"] else zarrox.Group)
    assert not (out / "meta").exists() and not (out / "data").exists()


def test_convert_draft_subtree_and_reshard(tmp_path: Path) -> None:
    src = FIXTURES / "draft_zarr2" / "store"
    out = tmp_path / "sub"
    zarrox.convert(src, out, path="sharded", dest_path="")
    assert sorted(zarrox.open_group(out).array_keys()) == ["f8_blosc_f", "i4_gzip_3d", "u2_none"]
    b = zarrox.open_array(out, path="u2_none")
    assert b.shards == (4, 6) and b.chunks == (2, 3)
    assert_values(b[...], _expected("draft_zarr2", "sharded/u2_none"))
    # other shards on request
    out2 = tmp_path / "re"
    zarrox.convert(src, out2, path="sharded/u2_none", dest_path="", shards=(2, 6))
    c = zarrox.open_array(out2)
    assert c.shards == (2, 6) and c.chunks == (2, 3)
    assert_values(c[...], _expected("draft_zarr2", "sharded/u2_none"))
    # the draft layout is never converted in place
    with pytest.raises(UnsupportedError, match="destination"):
        zarrox.convert(src)


@pytest.mark.parametrize("array", sorted(_desc("v1_zarr1")["arrays"]))
def test_convert_v1(tmp_path: Path, array: str) -> None:
    src = FIXTURES / "v1_zarr1" / "stores" / array
    node = zarrox.convert(src, tmp_path / "out")
    assert isinstance(node, zarrox.Array)
    info = _desc("v1_zarr1")["arrays"][array]
    expected = _expected("v1_zarr1", array)
    b = zarrox.open_array(tmp_path / "out", mode="r")
    assert b.zarr_format == 3 and dict(b.attrs) == info["attrs"] and b.shards is None
    assert_values(b[...], expected, converted=True)
    if expected.dtype.kind in "biufc":
        np.testing.assert_array_equal(
            np.asarray(zarr.open_array(str(tmp_path / "out"))[...]), expected
        )
        kv = {"driver": "file", "path": str(tmp_path / "out") + "/"}
        t = ts.open({"driver": "zarr3", "kvstore": kv}, open=True).result()
        np.testing.assert_array_equal(np.asarray(t.read().result()), expected)
    # in place: the v1 documents and chunks are replaced by v3 ones
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    zarrox.convert(copy, shards=tuple(2 * c for c in info["chunks"]))
    names = {p.name for p in copy.iterdir()}
    assert "meta" not in names and "attrs" not in names and "zarr.json" in names
    assert not any("." in n for n in names - {"zarr.json"})
    c = zarrox.open_array(copy, mode="r")
    assert c.shards == tuple(2 * n for n in info["chunks"]) and dict(c.attrs) == info["attrs"]
    assert_values(c[...], expected, converted=True)


def test_convert_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["convert", str(FIXTURES / "draft_spec" / "store"), str(tmp_path / "a")]) == 0
    assert "hierarchy" in capsys.readouterr().out
    _check_converted(tmp_path / "a", "draft_spec", "sharded_u2")
    v1 = FIXTURES / "v1_zarr1" / "stores" / "zlib_f_i4"
    assert cli_main(["convert", str(v1), str(tmp_path / "b"), "--shards", "6,4"]) == 0
    b = zarrox.open_array(tmp_path / "b")
    assert b.shards == (6, 4)
    assert_values(b[...], _expected("v1_zarr1", "zlib_f_i4"))
    assert cli_main(["convert", str(FIXTURES / "draft_zarr2" / "store")]) == 2
    assert "destination" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Metadata errors
# --------------------------------------------------------------------------------------------

V1_META = {
    "zarr_format": 1,
    "shape": [4],
    "chunks": [2],
    "dtype": "<i4",
    "compression": "zlib",
    "compression_opts": 1,
    "fill_value": 0,
    "order": "C",
}


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"compression": "snappy"}, UnsupportedError, "compression 'snappy'"),
        ({"order": "K"}, MetadataError, "order"),
        ({"chunks": [2, 2]}, MetadataError, "differ in length"),
        ({"dtype": "i4"}, MetadataError, "byte order"),
        ({"fill_value": 2**40}, MetadataError, "fill_value"),
        ({"compression_opts": 12}, MetadataError, "level"),
        ({"shape": [], "chunks": []}, UnsupportedError, "zero-dimensional"),
    ],
)
def test_v1_metadata_errors(change: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ArrayMetadataV1.from_json({**V1_META, **change}, path="a")


def test_v1_gzip_alias_and_defaults() -> None:
    meta = ArrayMetadataV1.from_json({**V1_META, "compression": "gzip", "compression_opts": None})
    assert meta.compressor == {"id": "zlib", "level": 1}  # zarr 1.x's alias of zlib
    meta = ArrayMetadataV1.from_json({**V1_META, "dtype": "<f8", "fill_value": "NaN"})
    assert np.isnan(meta.fill_value)
    assert ArrayMetadataV1.from_json({**V1_META, "compression": "none"}).compressor is None


def _draft_store(
    tmp_path: Path, array_doc: dict[str, Any], entry: dict[str, Any] | None = None
) -> Path:
    root = tmp_path / "draft"
    (root / "meta" / "root").mkdir(parents=True)
    (root / "zarr.json").write_text(
        json.dumps(
            entry
            or {
                "zarr_format": "https://purl.org/zarr/spec/core/3.0",
                "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
                "extensions": [],
            }
        )
    )
    (root / "meta" / "root" / "x.array.json").write_text(json.dumps(array_doc))
    return root


ARRAY_DOC = {
    "shape": [4],
    "data_type": "int32",
    "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
    "chunk_memory_layout": "C",
    "fill_value": 0,
    "attributes": {},
    "extensions": [],
}


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"codecs": [{"type": "https://example.org/codec/x"}]}, UnsupportedError, "codec"),
        ({"data_type": "int128"}, UnsupportedError, "data type"),
        ({"chunk_memory_layout": "Z"}, UnsupportedError, "chunk_memory_layout"),
        ({"chunk_grid": {"type": "rectilinear"}}, UnsupportedError, "chunk grid"),
        ({"extensions": [{"extension": "x", "must_understand": True}]}, UnsupportedError, "x"),
        ({"storage_transformers": [{"extension": "x", "type": "y"}]}, UnsupportedError, "storage"),
        ({"surprise": 1}, UnsupportedError, "surprise"),
        ({"fill_value": "0x1ffffffff"}, MetadataError, "fill_value"),
    ],
)
def test_draft_metadata_errors(
    tmp_path: Path, change: dict[str, Any], error: type, match: str
) -> None:
    root = _draft_store(tmp_path, {**ARRAY_DOC, **change})
    with pytest.raises(error, match=match):
        zarrox.open_array(root, path="x")


def test_draft_entry_point_errors(tmp_path: Path) -> None:
    entry = {
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": [{"extension": "http://example.org/x", "must_understand": True}],
    }
    root = _draft_store(tmp_path, ARRAY_DOC, entry)
    with pytest.raises(UnsupportedError, match="example.org/x"):
        zarrox.open_array(root, path="x")
    entry = {**entry, "extensions": [], "metadata_encoding": {"type": "msgpack"}}
    (root / "zarr.json").write_text(json.dumps(entry))
    with pytest.raises(UnsupportedError, match="metadata_encoding"):
        zarrox.open_group(root, mode="r")


def test_zero_dimensional_draft_array_from_zarr2(tmp_path: Path) -> None:
    """zarr-python 2.x keyed a 0-d array's chunk 'c0' (the draft says 'c')."""
    import os
    import subprocess

    python = Path(
        os.environ.get(
            "ZARROX_ZARR2_PYTHON", FIXTURES.parents[2] / ".venv-zarr2" / "bin" / "python"
        )
    )
    if not python.exists():
        if os.environ.get("CI"):
            pytest.fail(f"zarr-python 2.18 virtualenv missing: {python}")
        pytest.skip("zarr-python 2.18 virtualenv missing (tests/run.sh creates it)")
    code = (
        "import zarr\n"
        f"s = zarr.DirectoryStoreV3({str(tmp_path)!r})\n"
        "a = zarr.create(shape=(), dtype='f8', store=s, path='x', zarr_version=3,"
        " fill_value=-1.0)\n"
        "a[()] = 4.5\n"
        "zarr.create(shape=(), dtype='i2', store=s, path='empty', zarr_version=3,"
        " fill_value=7)\n"
    )
    env = {**os.environ, "ZARR_V3_EXPERIMENTAL_API": "1"}
    subprocess.run([str(python), "-c", code], check=True, env=env, capture_output=True)
    assert (tmp_path / "data" / "root" / "x" / "c0").exists()
    a = zarrox.open_array(tmp_path, path="x")
    assert a.shape == () and a[()] == 4.5
    assert zarrox.open_array(tmp_path, path="empty")[()] == 7
    assert sorted(zarrox.open_group(tmp_path).array_keys()) == ["empty", "x"]
