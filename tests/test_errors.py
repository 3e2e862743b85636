"""Every documented error: the right zarrox.errors class (and the builtin it subclasses), with a
message naming the node, and the chunk key for chunk errors. No input crashes the interpreter."""

from __future__ import annotations

import json
import lzma
import pickle
import random
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr

import zarrox
from zarrox.errors import (
    ArrayNotFoundError,
    ChecksumError,
    CodecError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    CorruptChunkError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
    StoreError,
    UnsupportedError,
    ZarroxError,
)

NODE = "grp/arr"


# -- the class hierarchy -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (MetadataError, ValueError),
        (UnsupportedError, NotImplementedError),
        (NodeNotFoundError, FileNotFoundError),
        (ArrayNotFoundError, FileNotFoundError),
        (GroupNotFoundError, FileNotFoundError),
        (NodeNotFoundError, ValueError),
        (ArrayNotFoundError, ValueError),
        (GroupNotFoundError, ValueError),
        (ContainsNodeError, FileExistsError),
        (ContainsNodeError, ValueError),
        (ContainsArrayError, ContainsNodeError),
        (ContainsGroupError, ContainsNodeError),
        (ReadOnlyError, ValueError),
        (CodecError, ValueError),
        (CorruptChunkError, ValueError),
        (ChecksumError, ValueError),
        (StoreError, OSError),
        (ReadOnlyError, PermissionError),
    ],
)
def test_error_classes_subclass_builtins(cls: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(cls, ZarroxError)
    assert issubclass(cls, builtin)


def test_error_class_relations() -> None:
    assert issubclass(ArrayNotFoundError, NodeNotFoundError)
    assert issubclass(GroupNotFoundError, NodeNotFoundError)
    assert issubclass(CorruptChunkError, CodecError)
    assert issubclass(ChecksumError, CorruptChunkError)
    assert set(zarrox.errors.__all__) >= {
        "ArrayNotFoundError",
        "ChecksumError",
        "CorruptChunkError",
        "MetadataError",
        "UnsupportedError",
        "ZarroxError",
    }


# -- malformed metadata ------------------------------------------------------------------------


def make_array(root: Path, name: str = NODE, **kwargs: Any) -> zarrox.Array:
    kwargs.setdefault("shape", (8, 8))
    kwargs.setdefault("dtype", "int32")
    kwargs.setdefault("chunks", (4, 4))
    a = zarrox.create_array(root, name=name, **kwargs)
    a[...] = np.arange(64, dtype=a.dtype).reshape(8, 8) if a.shape == (8, 8) else 1
    return a


def read_doc(root: Path, node: str = NODE) -> dict[str, Any]:
    return json.loads((root / node / "zarr.json").read_text())


def write_doc(root: Path, doc: Any, node: str = NODE) -> None:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    (root / node / "zarr.json").write_text(text)


def _without(key: str) -> Any:
    def f(doc: dict[str, Any]) -> dict[str, Any]:
        del doc[key]
        return doc

    return f


def _with(key: str, value: Any) -> Any:
    def f(doc: dict[str, Any]) -> dict[str, Any]:
        doc[key] = value
        return doc

    return f


MALFORMED = {
    "not json": lambda doc: "{not json",
    "truncated json": lambda doc: json.dumps(doc)[:40],
    "not an object": lambda doc: [1, 2, 3],
    "missing shape": _without("shape"),
    "missing data_type": _without("data_type"),
    "missing chunk_grid": _without("chunk_grid"),
    "missing chunk_key_encoding": _without("chunk_key_encoding"),
    "missing fill_value": _without("fill_value"),
    "missing codecs": _without("codecs"),
    "missing zarr_format": _without("zarr_format"),
    "missing node_type": _without("node_type"),
    "zarr_format 2": _with("zarr_format", 2),
    "zarr_format string": _with("zarr_format", "3"),
    "node_type bogus": _with("node_type", "table"),
    "unknown member": _with("foo", {"bar": 1}),
    "unknown member must_understand true": _with("foo", {"must_understand": True}),
    "unknown member scalar": _with("foo", 1),
    "negative shape": _with("shape", [-1, 8]),
    "fill_value wrong type": _with("fill_value", "zero"),
    "codecs not a list": _with("codecs", {"name": "bytes"}),
    "codecs without serializer": _with("codecs", [{"name": "zstd"}]),
}


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("opener", ["open_array", "open", "group_getitem"])
def test_malformed_array_metadata(tmp_path: Path, case: str, opener: str) -> None:
    make_array(tmp_path)
    write_doc(tmp_path, MALFORMED[case](read_doc(tmp_path)))
    with pytest.raises(MetadataError) as info:
        if opener == "open_array":
            zarrox.open_array(tmp_path, path=NODE, mode="r")
        elif opener == "open":
            zarrox.open(tmp_path, path=NODE, mode="r")
        else:
            zarrox.open_group(tmp_path, path="grp", mode="r")["arr"]
    assert isinstance(info.value, ValueError)
    assert f"zarr.json at '{NODE}'" in str(info.value)


@pytest.mark.parametrize(
    "doc",
    [
        b"\xff\xfe\x00",
        b'{"zarr_format": 3}',
        b'{"zarr_format": 3, "node_type": "group", "extra": 1}',
        b'{"zarr_format": 4, "node_type": "group"}',
        b'{"zarr_format": 3, "node_type": "group", "attributes": [1]}',
        b"null",
    ],
)
def test_malformed_group_metadata(tmp_path: Path, doc: bytes) -> None:
    zarrox.create_group(tmp_path, path="outer/inner")
    (tmp_path / "outer" / "inner" / "zarr.json").write_bytes(doc)
    with pytest.raises(MetadataError, match="zarr.json at 'outer/inner'"):
        zarrox.open_group(tmp_path, path="outer/inner", mode="r")
    with pytest.raises(MetadataError, match="zarr.json at 'outer/inner'"):
        zarrox.open_group(tmp_path, path="outer", mode="r").members()


def test_unknown_member_with_must_understand_false_is_kept(tmp_path: Path) -> None:
    make_array(tmp_path)
    doc = read_doc(tmp_path)
    doc["my_extension"] = {"must_understand": False, "value": [1, 2]}
    write_doc(tmp_path, doc)
    a = zarrox.open_array(tmp_path, path=NODE, mode="r+")
    np.testing.assert_array_equal(a[...], np.arange(64).reshape(8, 8))
    a.attrs["touched"] = True  # rewrites zarr.json
    doc = read_doc(tmp_path)
    assert doc["my_extension"] == {"must_understand": False, "value": [1, 2]}
    assert doc["attributes"] == {"touched": True}


# -- unsupported features ----------------------------------------------------------------------


def test_unknown_codec_on_disk(tmp_path: Path) -> None:
    make_array(tmp_path)
    doc = read_doc(tmp_path)
    doc["codecs"].append({"name": "lzma", "configuration": {"preset": 6}})
    write_doc(tmp_path, doc)
    with pytest.raises(UnsupportedError) as info:
        zarrox.open_array(tmp_path, path=NODE, mode="r")
    assert isinstance(info.value, NotImplementedError)
    assert f"'{NODE}'" in str(info.value)
    assert "'lzma'" in str(info.value)


def test_unknown_data_type_on_disk(tmp_path: Path) -> None:
    make_array(tmp_path)
    write_doc(tmp_path, _with("data_type", "float8_e9m9")(read_doc(tmp_path)))
    with pytest.raises(UnsupportedError) as info:
        zarrox.open(tmp_path, path=NODE, mode="r")
    assert isinstance(info.value, NotImplementedError)
    assert f"'{NODE}'" in str(info.value)
    assert "'float8_e9m9'" in str(info.value)


def test_unknown_codec_on_create_names_node(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError) as info:
        zarrox.create_array(
            tmp_path, name=NODE, shape=(4,), dtype="int32", compressors=[{"name": "lzma"}]
        )
    assert f"'{NODE}'" in str(info.value) and "'lzma'" in str(info.value)
    assert not (tmp_path / NODE).exists()


@pytest.mark.parametrize(
    "dtype",
    ["float8_e9m9", "quaternion", np.dtype("g"), np.dtype("G"), np.dtype(("<i4", (2,)))],
)
def test_unknown_data_type_on_create_names_node(tmp_path: Path, dtype: Any) -> None:
    with pytest.raises(UnsupportedError) as info:
        zarrox.create_array(tmp_path, name=NODE, shape=(4,), dtype=dtype)
    assert isinstance(info.value, NotImplementedError)
    # The README promises that messages name the node.
    assert NODE in str(info.value)
    assert not (tmp_path / NODE).exists()


def test_invalid_raw_data_type_on_create(tmp_path: Path) -> None:
    # r<N> needs N a positive multiple of 8: malformed, not merely unsupported.
    with pytest.raises(MetadataError, match="r12"):
        zarrox.create_array(tmp_path, name=NODE, shape=(4,), dtype="r12")
    assert not (tmp_path / NODE).exists()


# -- missing and existing nodes ----------------------------------------------------------------


def test_missing_nodes(tmp_path: Path) -> None:
    zarrox.create_group(tmp_path, path="grp")
    with pytest.raises(ArrayNotFoundError, match="'grp/missing'") as info:
        zarrox.open_array(tmp_path, path="grp/missing", mode="r")
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(ArrayNotFoundError, match="'grp/missing'"):
        zarrox.open_array(tmp_path, path="grp/missing", mode="r+")
    with pytest.raises(GroupNotFoundError, match="'grp/missing'") as ginfo:
        zarrox.open_group(tmp_path, path="grp/missing", mode="r")
    assert isinstance(ginfo.value, FileNotFoundError)
    with pytest.raises(NodeNotFoundError, match="'grp/missing'"):
        zarrox.open(tmp_path, path="grp/missing", mode="r")
    with pytest.raises(FileNotFoundError):
        zarrox.open(tmp_path / "no-such-store", mode="r")
    assert not (tmp_path / "no-such-store").exists()
    with pytest.raises(KeyError):
        zarrox.open_group(tmp_path, path="grp", mode="r")["missing"]


def test_wrong_node_type(tmp_path: Path) -> None:
    make_array(tmp_path)
    with pytest.raises(ArrayNotFoundError, match="'grp'"):
        zarrox.open_array(tmp_path, path="grp", mode="r")
    with pytest.raises(GroupNotFoundError, match=f"'{NODE}'"):
        zarrox.open_group(tmp_path, path=NODE, mode="r")


def test_contains_node(tmp_path: Path) -> None:
    make_array(tmp_path)
    with pytest.raises(ContainsNodeError, match=f"'{NODE}'") as info:
        zarrox.create_array(tmp_path, name=NODE, shape=(2,), dtype="int8")
    assert isinstance(info.value, FileExistsError)
    with pytest.raises(ContainsNodeError, match=f"'{NODE}'"):
        zarrox.open_array(tmp_path, path=NODE, mode="w-", shape=(2,), dtype="int8")
    with pytest.raises(ContainsNodeError, match="'grp'"):
        zarrox.open_group(tmp_path, path="grp", mode="w-")
    with pytest.raises(ContainsNodeError, match="'grp'"):
        zarrox.create_group(tmp_path, path="grp")
    # Nothing below an array.
    with pytest.raises(ContainsNodeError, match=f"'{NODE}'"):
        zarrox.create_array(tmp_path, name=f"{NODE}/child", shape=(2,), dtype="int8")
    # The existing array is untouched.
    np.testing.assert_array_equal(
        zarrox.open_array(tmp_path, path=NODE, mode="r")[...], np.arange(64).reshape(8, 8)
    )


@pytest.mark.parametrize("lib", [zarr, zarrox], ids=["zarr", "zarrox"])
def test_node_errors_are_value_errors_like_zarr_python(tmp_path: Path, lib: Any) -> None:
    """zarr-python's node errors (not found, contains array/group, writes to a read-only
    array) are ValueErrors; code catching ValueError for zarr-python catches zarrox's."""
    root = tmp_path / "x"
    lib.create_array(root, name="g/a", shape=(2,), dtype="i1")
    cases = [
        (lambda: lib.create_array(root, name="g/a", shape=(2,), dtype="i1"), "ContainsArray"),
        (lambda: lib.create_group(root, path="g"), "ContainsGroup"),
        (lambda: lib.open_array(root, path="g/b", mode="r"), "ArrayNotFound"),
        (lambda: lib.open_group(root, path="h", mode="r"), "GroupNotFound"),
        (lambda: lib.open_array(root, path="g/a", mode="r").__setitem__(0, 1), ""),
        (lambda: lib.create_array(root, name="g/a/c", shape=(2,), dtype="i1"), ""),
    ]
    for call, name in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert type(info.value).__name__.startswith(name), info.value
    if lib is zarr:
        return
    with pytest.raises(ContainsArrayError, match="array already exists at 'g/a'"):
        zarrox.create_group(root, path="g/a")
    with pytest.raises(ContainsGroupError, match="group already exists at 'g'"):
        zarrox.create_array(root, name="g", shape=(2,), dtype="i1")
    with pytest.raises(ContainsArrayError, match="below the array at 'g/a'"):
        zarrox.create_group(root, path="g/a/c")


def test_read_only(tmp_path: Path) -> None:
    make_array(tmp_path)
    a = zarrox.open_array(tmp_path, path=NODE, mode="r")
    for write in (
        lambda: a.__setitem__((0, 0), 1),
        lambda: a.oindex.__setitem__(([0, 0], [1]), 1),
        lambda: a.attrs.__setitem__("k", 1),
        lambda: a.attrs.update(k=1),
    ):
        with pytest.raises(ReadOnlyError, match=f"'{NODE}'") as info:
            write()
        assert isinstance(info.value, PermissionError)
    g = zarrox.open_group(tmp_path, path="grp", mode="r")
    with pytest.raises(ReadOnlyError, match="'grp'"):
        g.create_group("x")
    with pytest.raises(ReadOnlyError, match="'grp'"):
        g.attrs["k"] = 1
    assert read_doc(tmp_path)["attributes"] == {}


def test_store_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a directory")
    with pytest.raises(StoreError) as info:
        zarrox.create_array(tmp_path / "afile", shape=(2,), dtype="int8")
    assert isinstance(info.value, OSError)
    assert "afile" in str(info.value)


# -- corrupt chunks ----------------------------------------------------------------------------


def chunk_error(a: zarrox.Array, cls: type[Exception], key: str) -> Exception:
    with pytest.raises(cls) as info:
        a[...]
    msg = str(info.value)
    assert f"'{a.path}'" in msg, msg
    assert key in msg, msg
    return info.value


def test_truncated_zstd_chunk(tmp_path: Path) -> None:
    make_array(tmp_path, compressors=[{"name": "zstd", "configuration": {"level": 3}}])
    path = tmp_path / NODE / "c" / "0" / "1"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    a = zarrox.open_array(tmp_path, path=NODE, mode="r")
    err = chunk_error(a, CorruptChunkError, "c/0/1")
    assert isinstance(err, ValueError) and not isinstance(err, ChecksumError)
    # Other chunks still read.
    np.testing.assert_array_equal(a[:4, :4], np.arange(64).reshape(8, 8)[:4, :4])
    np.testing.assert_array_equal(a[4:, :], np.arange(64).reshape(8, 8)[4:, :])


@pytest.mark.parametrize("zstd", [False, True])
def test_truncated_shard(tmp_path: Path, zstd: bool) -> None:
    # Index first, so cutting the file's tail leaves the index intact and the
    # last inner chunks' ranges pointing past the end.
    inner: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if zstd:
        inner.append({"name": "zstd", "configuration": {"level": 1}})
    sharding = {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2, 2],
            "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_location": "start",
        },
    }
    make_array(tmp_path, codecs=[sharding])
    path = tmp_path / NODE / "c" / "0" / "1"
    raw = path.read_bytes()
    path.write_bytes(raw[:-3])
    a = zarrox.open_array(tmp_path, path=NODE, mode="r")
    err = chunk_error(a, CorruptChunkError, "c/0/1")
    assert any(s in str(err) for s in ("past the end", "shorter", "ends at byte")), str(err)
    with pytest.raises(CorruptChunkError, match="c/0/1"):
        a[2:4, 6:8]  # the last inner chunk alone
    # The shard's first inner chunk and the other shards still read.
    want = np.arange(64).reshape(8, 8)
    np.testing.assert_array_equal(a[0:2, 4:6], want[0:2, 4:6])
    np.testing.assert_array_equal(a[:, :4], want[:, :4])
    np.testing.assert_array_equal(a[4:, :], want[4:, :])


@pytest.mark.parametrize(
    "compressor",
    [
        {"name": "gzip", "configuration": {"level": 5}},
        {"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "shuffle"}},
        {"name": "blosc", "configuration": {"cname": "zstd", "shuffle": "bitshuffle"}},
        {"name": "zstd"},
    ],
)
def test_garbage_compressed_chunk(tmp_path: Path, compressor: dict[str, Any]) -> None:
    make_array(tmp_path, compressors=[compressor])
    rng = np.random.default_rng(1)
    (tmp_path / NODE / "c" / "1" / "0").write_bytes(rng.bytes(57))
    a = zarrox.open_array(tmp_path, path=NODE, mode="r")
    chunk_error(a, CorruptChunkError, "c/1/0")


def test_crc32c_flipped_byte(tmp_path: Path) -> None:
    make_array(
        tmp_path,
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    )
    path = tmp_path / NODE / "c" / "1" / "1"
    raw = bytearray(path.read_bytes())
    assert len(raw) == 4 * 16 + 4
    raw[5] ^= 0x01
    path.write_bytes(bytes(raw))
    a = zarrox.open_array(tmp_path, path=NODE, mode="r")
    err = chunk_error(a, ChecksumError, "c/1/1")
    assert isinstance(err, CorruptChunkError) and isinstance(err, ValueError)


def test_crc32c_after_compressor_flipped_byte(tmp_path: Path) -> None:
    make_array(
        tmp_path,
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "gzip"},
            {"name": "crc32c"},
        ],
    )
    path = tmp_path / NODE / "c" / "0" / "0"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x80
    path.write_bytes(bytes(raw))
    chunk_error(zarrox.open_array(tmp_path, path=NODE, mode="r"), ChecksumError, "c/0/0")


# -- corrupt chunks raise what zarr-python raises ---------------------------------------------

# Arrays zarr-python writes (its create_array arguments), one per codec: the bytes codec alone,
# every v3 compressor, crc32c, a shard (whose index has a crc32c) and numcodecs' v2 compressors
# and checksums.
ZARR_CODECS: dict[str, dict[str, Any]] = {
    "bytes": {"compressors": None},
    "zstd": {"compressors": [{"name": "zstd", "configuration": {"level": 3}}]},
    "gzip": {"compressors": [{"name": "gzip", "configuration": {"level": 5}}]},
    "blosc": {"compressors": [{"name": "blosc", "configuration": {"cname": "lz4"}}]},
    "crc32c": {"compressors": [{"name": "crc32c"}]},
    "sharding": {"shards": (16,), "chunks": (4,)},
    "sharding-zstd": {
        "shards": (16,),
        "chunks": (4,),
        "compressors": [{"name": "zstd", "configuration": {"level": 1}}],
    },
    **{
        f"v2-{id}": {"zarr_format": 2, "compressors": {"id": id}}
        for id in ("zlib", "gzip", "bz2", "lzma", "lz4", "zstd", "blosc")
    },
    "v2-none": {"zarr_format": 2, "compressors": None},
    **{
        f"v2-{id}": {"zarr_format": 2, "compressors": None, "filters": [{"id": id}]}
        for id in ("crc32", "adler32", "fletcher32", "jenkins_lookup3", "crc32c")
    },
}


def corrupt(raw: bytes, how: str) -> bytes:
    if how == "garbage":
        return b"\x00\x01garbage, not a chunk of any codec" * 2
    if how == "truncated":
        return raw[: len(raw) // 2]
    flipped = bytearray(raw)  # one byte inverted: in a shard, in its index (at the end)
    flipped[-6 if len(raw) > 64 else len(raw) // 2] ^= 0xFF
    return bytes(flipped)


def zarr_raises(root: Path, codec: str, how: str) -> tuple[str, BaseException | None]:
    """Write an array with zarr-python, corrupt its first chunk (or shard) as ``how`` says
    and read it with zarr-python's default pipeline: (the chunk key, what it raised)."""
    kwargs = dict(ZARR_CODECS[codec])
    kwargs.setdefault("chunks", (16,))
    if kwargs.get("filters"):  # zarr-python takes numcodecs objects there
        kwargs["filters"] = [numcodecs.get_codec(f) for f in kwargs["filters"]]
    key = "0" if kwargs.get("zarr_format") == 2 else "c/0"
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        a = zarr.create_array(root, name="a", shape=(32,), dtype="int32", **kwargs)
        a[...] = np.arange(32)
        path = root / "a" / key
        path.write_bytes(corrupt(path.read_bytes(), how))
        try:
            zarr.open_array(root, path="a", mode="r")[...]
        except Exception as e:
            return "a/" + key, e
    return "a/" + key, None


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning")
@pytest.mark.parametrize("how", ["garbage", "truncated", "flipped"])
@pytest.mark.parametrize("codec", list(ZARR_CODECS))
def test_corrupt_chunk_is_what_zarr_python_raises(tmp_path: Path, codec: str, how: str) -> None:
    key, expected = zarr_raises(tmp_path, codec, how)
    if expected is None:
        pytest.skip(f"zarr-python reads a {how} {codec} chunk without an error")
    # zarrox's own API, and zarr-python on zarrox's pipeline
    a = zarrox.open_array(tmp_path, path="a", mode="r")
    with pytest.raises(CorruptChunkError) as own:
        a[...]
    config = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline"}
    with zarr.config.set(config), pytest.raises(CorruptChunkError) as piped:
        zarr.open_array(tmp_path, path="a", mode="r")[...]
    for err in (own.value, piped.value):
        assert isinstance(err, type(expected)), (type(err).__mro__, repr(expected))
        assert f"'{key}'" in str(err), str(err)  # the chunk's store key, under the array's path
    assert "array 'a'" in str(own.value), str(own.value)


def test_corrupt_chunk_classes_are_per_codec() -> None:
    err = CorruptChunkError("array 'a', chunk 'a/c/0': zstd: invalid frame header")
    assert type(err).__name__ == "ZstdCorruptChunkError"
    assert isinstance(err, RuntimeError) and isinstance(err, ValueError)
    assert str(err) == "array 'a', chunk 'a/c/0': zstd: invalid frame header"
    # the first codec named, not one in an array's name or the detail
    err = CorruptChunkError("array 'zstd', chunk 'c/0': inner chunk [1]: gzip: bz2: no")
    assert isinstance(err, EOFError) and isinstance(err, OSError) and isinstance(err, zlib.error)
    err = ChecksumError("array 'a', chunk '0': fletcher32 checksum mismatch: stored 0x1")
    assert isinstance(err, ChecksumError) and isinstance(err, RuntimeError)
    assert isinstance(CorruptChunkError("chunk '0': lzma: corrupt"), lzma.LZMAError)
    # no codec named: a ValueError only
    err = CorruptChunkError("array 'a', chunk 'c/0': decoded 3 bytes, expected 64")
    assert type(err) is CorruptChunkError and not isinstance(err, RuntimeError)
    # they pickle (dask's processes), as their class
    again = pickle.loads(pickle.dumps(CorruptChunkError("chunk '0': gzip: bad")))
    assert type(again).__name__ == "GzipCorruptChunkError" and str(again) == "chunk '0': gzip: bad"


@pytest.mark.parametrize("change", ["longer", "shorter", "empty"])
def test_raw_chunk_of_wrong_size(tmp_path: Path, change: str) -> None:
    make_array(tmp_path, codecs=[{"name": "bytes", "configuration": {"endian": "little"}}])
    path = tmp_path / NODE / "c" / "0" / "0"
    raw = path.read_bytes()
    assert len(raw) == 64
    path.write_bytes({"longer": raw + b"\0\0", "shorter": raw[:-4], "empty": b""}[change])
    err = chunk_error(zarrox.open_array(tmp_path, path=NODE, mode="r"), CorruptChunkError, "c/0/0")
    assert "64" in str(err)


def test_chunk_key_named_with_v2_encoding(tmp_path: Path) -> None:
    make_array(
        tmp_path,
        compressors=None,
        chunk_key_encoding={"name": "v2", "separator": "."},
    )
    (tmp_path / NODE / "1.0").write_bytes(b"abc")
    chunk_error(zarrox.open_array(tmp_path, path=NODE, mode="r"), CorruptChunkError, "1.0")


def test_partial_write_into_corrupt_chunk_raises(tmp_path: Path) -> None:
    a = make_array(tmp_path, compressors=[{"name": "zstd"}])
    (tmp_path / NODE / "c" / "0" / "1").write_bytes(b"garbage!")
    with pytest.raises(CorruptChunkError, match="c/0/1"):
        a[0, 5] = -1  # needs the old chunk: read-modify-write
    assert (tmp_path / NODE / "c" / "0" / "1").read_bytes() == b"garbage!"
    # Overwriting the whole chunk does not need the old bytes.
    a[0:4, 4:8] = -1
    expected = np.arange(64).reshape(8, 8)
    expected[0:4, 4:8] = -1
    np.testing.assert_array_equal(a[...], expected)


# -- indexing errors ---------------------------------------------------------------------------


@pytest.fixture
def arr() -> zarrox.Array:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(10, 6), dtype="float64", chunks=(3, 4))
    a[...] = np.arange(60.0).reshape(10, 6)
    return a


@pytest.mark.parametrize(
    ("selection", "match"),
    [
        (10, "index 10 is out of bounds for axis 0 with size 10"),
        (-11, "index -11 is out of bounds for axis 0 with size 10"),
        ((0, 6), "index 6 is out of bounds for axis 1 with size 6"),
        ((slice(None), -7), "index -7 is out of bounds for axis 1 with size 6"),
        (slice(None, None, -1), "step"),
        ((slice(None), slice(5, 1, -2)), "step"),
        ((1, 2, 3), "too many indices"),
        ((Ellipsis, 1, 2, 3), "too many indices"),
        ((Ellipsis, Ellipsis), "single ellipsis"),
        (None, "valid indices"),
        (1.5, "valid indices"),
        ("a", "valid indices"),
    ],
)
def test_bad_basic_selection(arr: zarrox.Array, selection: Any, match: str) -> None:
    with pytest.raises(IndexError, match=match):
        arr[selection]
    with pytest.raises(IndexError, match=match):
        arr[selection] = 0.0
    with pytest.raises(IndexError, match=match):
        arr.get_basic_selection(selection)
    np.testing.assert_array_equal(arr[...], np.arange(60.0).reshape(10, 6))


@pytest.mark.parametrize(
    ("selection", "match"),
    [
        (([0, 10], slice(None)), "index 10 is out of bounds for axis 0"),
        (([-11],), "index -11 is out of bounds for axis 0"),
        ((slice(None), np.array([6])), "index 6 is out of bounds for axis 1"),
        ((np.ones(9, bool),), "boolean index of length 9"),
        ((slice(None), np.ones(7, bool)), "boolean index of length 7"),
        ((np.zeros((2, 2), int),), "1-dimensional"),
        ((np.array([1.0, 2.0]),), "integer or boolean"),
        (([0], [0], [0]), "too many indices"),
        ((slice(None, None, -1), [0]), "step"),
    ],
)
def test_bad_orthogonal_selection(arr: zarrox.Array, selection: Any, match: str) -> None:
    with pytest.raises(IndexError, match=match):
        arr.oindex[selection]
    with pytest.raises(IndexError, match=match):
        arr.oindex[selection] = 0.0
    np.testing.assert_array_equal(arr[...], np.arange(60.0).reshape(10, 6))


@pytest.mark.parametrize("selection", [slice(None, None, 0), (slice(None), slice(1, 4, 0))])
def test_zero_step_is_a_value_error_like_zarr_python(arr: zarrox.Array, selection: Any) -> None:
    z = zarr.create_array(zarr.storage.MemoryStore(), shape=(10, 6), dtype="f8", chunks=(3, 4))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        z[selection]
    for read in (arr.__getitem__, arr.get_basic_selection, arr.oindex.__getitem__):
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            read(selection)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        arr[selection] = 0.0
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        arr.blocks[selection]
    np.testing.assert_array_equal(arr[...], np.arange(60.0).reshape(10, 6))


@pytest.mark.parametrize(
    ("selection", "value"),
    [
        (slice(0, 2), np.ones((3, 6))),
        ((slice(None), 0), np.ones(9)),
        ((0, slice(0, 4)), [1.0, 2.0]),
        (Ellipsis, np.ones((10, 6, 2))),
    ],
)
def test_broadcast_mismatch_on_write(arr: zarrox.Array, selection: Any, value: Any) -> None:
    with pytest.raises(ValueError, match="broadcast"):
        arr[selection] = value
    np.testing.assert_array_equal(arr[...], np.arange(60.0).reshape(10, 6))


@pytest.mark.parametrize("selection", [([0, 1], [0, 1]), ([0, 0, 1], [2])])
def test_broadcast_mismatch_on_orthogonal_write(arr: zarrox.Array, selection: Any) -> None:
    with pytest.raises(ValueError, match="broadcast"):
        arr.oindex[selection] = np.ones((4, 4))
    np.testing.assert_array_equal(arr[...], np.arange(60.0).reshape(10, 6))


def test_out_buffer_errors(arr: zarrox.Array) -> None:
    with pytest.raises(ValueError, match=r"shape \(2, 6\)"):
        arr.get_basic_selection(slice(0, 2), out=np.empty((2, 5)))
    with pytest.raises(ValueError, match="dtype float64"):
        arr.get_basic_selection(slice(0, 2), out=np.empty((2, 6), dtype="float32"))
    readonly = np.empty((2, 6))
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        arr.get_basic_selection(slice(0, 2), out=readonly)


def test_invalid_mode_and_store() -> None:
    with pytest.raises(ValueError, match="mode"):
        zarrox.open_array(zarrox.MemoryStore(), mode="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unsupported store URL 'ftp://b/k'"):
        zarrox.create_array("ftp://b/k", shape=(1,), dtype="int8")
    with pytest.raises(TypeError, match="store"):
        zarrox.create_array(123, shape=(1,), dtype="int8")


# -- fuzzing: only zarrox errors, never a crash ------------------------------------------------

FUZZ_CHAINS: dict[str, list[dict[str, Any]]] = {
    "bytes": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "bytes-big-crc32c": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "crc32c"}],
    "zstd": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}],
    "gzip": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip"}],
    "blosc-lz4-shuffle": [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "shuffle"}},
    ],
    "blosc-zstd-bitshuffle": [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "blosc", "configuration": {"cname": "zstd", "shuffle": "bitshuffle"}},
    ],
    "transpose-zstd-crc32c": [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "zstd"},
        {"name": "crc32c"},
    ],
    "gzip-blosc": [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "gzip"},
        {"name": "blosc"},
    ],
}


def fuzzed_chunks(good: bytes, rng: random.Random, n: int) -> list[bytes]:
    out = [b"", good[:1], good[:-1], good + b"\0"]
    for _ in range(n):
        mode = rng.randrange(4)
        if mode == 0:
            out.append(rng.randbytes(rng.randrange(0, 600)))
        elif mode == 1:
            out.append(good[: rng.randrange(len(good))])
        elif mode == 2:
            b = bytearray(good)
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            out.append(bytes(b))
        else:
            out.append(good + rng.randbytes(rng.randrange(1, 40)))
    return out


@pytest.mark.parametrize("chain", list(FUZZ_CHAINS))
def test_fuzz_chunk_bytes_only_zarrox_errors(chain: str) -> None:
    store = zarrox.MemoryStore()
    a = zarrox.create_array(
        store, name="f", shape=(16, 16), dtype="float32", chunks=(8, 8), codecs=FUZZ_CHAINS[chain]
    )
    expected = np.arange(256, dtype="float32").reshape(16, 16)
    a[...] = expected
    good = store.get("f/c/0/1")
    assert good is not None
    rng = random.Random(chain)
    for data in fuzzed_chunks(good, rng, 150):
        store.set("f/c/0/1", data)
        try:
            got = a[...]
        except CorruptChunkError as e:
            assert "'f/c/0/1'" in str(e) or "c/0/1" in str(e)
        else:
            # A mutation that decodes must still give the right shape; the untouched
            # chunks are intact.
            assert got.shape == (16, 16) and got.dtype == np.float32
            np.testing.assert_array_equal(got[8:], expected[8:])
        # Writing over a corrupt chunk partially is refused or succeeds; never a crash.
        try:
            a[0, 9] = 1.0
        except CorruptChunkError:
            pass
    if "crc32c" in chain:
        store.set("f/c/0/1", bytes([good[0] ^ 1]) + good[1:])
        with pytest.raises(ChecksumError):
            a[...]


FUZZ_SCRIPT = textwrap.dedent(
    """
    import json, random, sys
    import numpy as np
    import zarrox
    from zarrox import errors
    from zarrox.errors import ZarroxError

    chains = json.loads(sys.argv[1])
    rng = random.Random(7)
    outcomes = {}
    for name, codecs in chains.items():
        for dtype in ("uint8", "int16", "float64", "complex64"):
            s = zarrox.MemoryStore()
            a = zarrox.create_array(s, shape=(5, 7), dtype=dtype, chunks=(4, 4), codecs=codecs)
            a[...] = np.arange(35).reshape(5, 7).astype(dtype)
            good = s.get("c/1/1")
            for i in range(120):
                r = rng.randrange(3)
                if r == 0:
                    data = rng.randbytes(rng.randrange(0, 300))
                elif r == 1:
                    data = good[: rng.randrange(len(good) + 1)]
                else:
                    b = bytearray(good)
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                    data = bytes(b)
                s.set("c/1/1", data)
                try:
                    a[...]
                    a.oindex[[4, 0], [6, 6]]
                    key = "ok"
                except ZarroxError as e:
                    # the documented class (a per-codec one's base: CorruptChunkError...)
                    key = next(
                        c.__name__ for c in type(e).__mro__ if c.__name__ in errors.__all__
                    )
                outcomes[key] = outcomes.get(key, 0) + 1
    print(json.dumps(outcomes))
    """
)


def test_fuzz_in_subprocess_never_crashes() -> None:
    chains = {k: v for k, v in FUZZ_CHAINS.items() if "transpose" not in k}
    chains["transpose-gzip"] = [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "gzip"},
    ]
    chains["crc32c-zstd-crc32c"] = [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "crc32c"},
        {"name": "zstd"},
        {"name": "crc32c"},
    ]
    proc = subprocess.run(
        [sys.executable, "-c", FUZZ_SCRIPT, json.dumps(chains)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcomes = json.loads(proc.stdout)
    assert set(outcomes) <= {"ok", "CorruptChunkError", "ChecksumError"}, outcomes
    assert outcomes.get("CorruptChunkError", 0) > 0
    assert outcomes.get("ChecksumError", 0) > 0


def test_fuzz_metadata_only_zarrox_errors() -> None:
    """Random mutations of a valid zarr.json give MetadataError/UnsupportedError (or open)."""
    store = zarrox.MemoryStore()
    a = zarrox.create_array(
        store,
        name="g/a",
        shape=(6, 5),
        dtype="float32",
        chunks=(3, 2),
        dimension_names=["y", "x"],
        attributes={"k": 1},
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "blosc"},
            {"name": "crc32c"},
        ],
    )
    a[...] = 1.5
    raw = store.get("g/a/zarr.json")
    assert raw is not None
    doc = json.loads(raw)
    rng = random.Random(3)
    keys = ["name", "configuration", "must_understand", "order", "endian", "chunk_shape"]

    def random_json(depth: int = 0) -> Any:
        k = rng.randrange(9 if depth < 2 else 6)
        if k < 6:
            return [None, True, rng.randint(-5, 10**20), rng.random() * 1e3, "x", -1][k]
        if k < 8:
            return [random_json(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(keys): random_json(depth + 1) for _ in range(rng.randrange(3))}

    def mutate(x: Any) -> Any:
        if isinstance(x, dict | list) and x and rng.random() < 0.8:
            x = dict(x) if isinstance(x, dict) else list(x)
            k = rng.choice(list(x)) if isinstance(x, dict) else rng.randrange(len(x))
            r = rng.random()
            if r < 0.2:
                del x[k]
            elif r < 0.6:
                x[k] = mutate(x[k])
            else:
                x[k] = random_json()
            return x
        return random_json()

    outcomes: dict[str, int] = {}
    for _ in range(1500):
        store.set("g/a/zarr.json", json.dumps(mutate(mutate(doc))).encode())
        try:
            node = zarrox.open(store, path="g/a", mode="r")
            if isinstance(node, zarrox.Array):
                node[...]
            key = "ok"
        except (MetadataError, UnsupportedError, CorruptChunkError) as e:
            assert "'g/a'" in str(e), str(e)
            key = type(e).__name__
        outcomes[key] = outcomes.get(key, 0) + 1
    assert outcomes.get("MetadataError", 0) > 500


def test_error_context_is_attached_where_the_error_is_raised(tmp_path: Path) -> None:
    """Whether an error names its node already is recorded by the code raising it (a parser
    given the node's path, the Rust core naming the array it opened), not looked for in its
    message: callers further out add the node only to errors that do not name it, and a
    message that merely quotes the path does not count."""
    from zarrox.errors import in_node, names_node, naming_node

    plain = MetadataError("codec 'a': bad")  # mentions 'a', but not as its node
    assert not names_node(plain, "a")
    wrapped = in_node(plain, "array", "a")
    assert type(wrapped) is MetadataError and str(wrapped) == "array 'a': codec 'a': bad"
    assert names_node(wrapped, "a") and not names_node(wrapped, "b")
    assert names_node(naming_node(MetadataError("x"), "p"), "p")

    # a v3 document the parser rejects: its error names the node once
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "x"}))
    with pytest.raises(MetadataError) as info:
        zarrox.open(tmp_path, path="a")
    assert names_node(info.value, "a")
    assert str(info.value).count("'a'") == 1, str(info.value)
