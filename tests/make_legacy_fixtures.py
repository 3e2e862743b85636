"""Make the legacy-format fixtures under ``tests/fixtures/legacy/`` (read by test_legacy.py).

Each fixture set is a directory with ``store/`` (or ``stores/<name>/`` for v1, which has one
array per store), ``expected/<node path with "/" as "__">.npy`` (the values every array must
read as) and ``expected.json`` (shapes, chunks, attributes, group listings). The expected
values are built here in numpy, independently of any reader, from what is written; every
writer's own read-back is checked against them before anything is saved.

Writers, and what was built by hand::

    v1_zarr1            zarr-python 1.1.0 (the last v1 release), run on Python 3.8 with
                        numpy 1.23: blosc (lz4, zstd, zlib; all shuffles), zlib, bz2, lzma
                        (xz, and raw with a delta + lzma2 filter chain), none; C and F order;
                        structured, bytes, bool, complex, big-endian types; fill values
                        (NaN, -Infinity, null included); missing and edge chunks.
    draft_zarr2         zarr-python 2.18.7 with ZARR_V3_EXPERIMENTAL_API=1 and
                        ZARR_V3_SHARDING=1: a hierarchy in the draft layout
                        (zarr_format ".../protocol/core/3.0", meta/root/..., data/root/...)
                        with explicit and implicit groups, gzip/blosc/zlib/bz2/lz4/lzma/zstd
                        compressors, a numcodecs filter (kept by zarr-python 2.x in
                        attributes["filters"]), "." and "/" separators, F order, extension
                        data types, null fill values and the sharding storage transformer.
    draft_zarr2_root    zarr-python 2.18.7: an array at the root (meta/root.array.json).
    draft_spec          BY HAND, from the draft spec in specs/seeds/: the later draft's form
                        (zarr_format ".../spec/core/3.0", metadata_encoding object, an
                        ignorable extension, "codecs" with "type" URIs, the endian codec,
                        data type names such as "int16" and "r16", an extension data type
                        with a fallback, "+Infinity" and "0x..." fill values, a 0-d array
                        keyed "c", sharding with the spec's extension URI, chunks placed out
                        of order in shards). No writer at hand produces it: zarr-python 2.x
                        wrote only the protocol/core form above, and no other draft writer
                        is installable here. Chunk bytes are encoded with numcodecs.
    draft_spec_noroot   BY HAND: the December 2022 draft's layout without the "root"
                        segment (meta/group.json, meta/x.array.json, data/x/c0/0), which no
                        writer at hand produces either.

Run it from the repository root (each writer runs in its own interpreter)::

    python tests/make_legacy_fixtures.py all \\
        --zarr1-python /tmp/venv-zarr1/bin/python --zarr2-python .venv-zarr2/bin/python

where /tmp/venv-zarr1 is a Python 3.8 venv with ``numpy<1.24`` and ``zarr==1.1.0`` (built
from its sdist with ``--no-build-isolation``), and .venv-zarr2 has zarr 2.18 and numcodecs
(zarr 2.18's sharding transformer imports pytest: give it one with ``--pytest-path``). The
hand-built sets run in the calling interpreter (needs numcodecs). This file keeps to Python 3.8
syntax for the zarr 1.1 run.
"""

# Python 3.8 runs this file (zarr 1.1): no zip(strict=...).
# ruff: noqa: B905

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "legacy")


def npy_name(path):
    return (path or "root").replace("/", "__") + ".npy"


def save_expected(dirname, arrays, groups):
    """Save expected values and the description of the nodes."""
    exp = os.path.join(dirname, "expected")
    os.makedirs(exp, exist_ok=True)
    desc = {"arrays": {}, "groups": groups}
    for path, info in arrays.items():
        values = info.pop("values")
        np.save(os.path.join(exp, npy_name(path)), values, allow_pickle=False)
        desc["arrays"][path] = info
    with open(os.path.join(dirname, "expected.json"), "w") as f:
        json.dump(desc, f, indent=1, sort_keys=True)
        f.write("\n")


def check(name, got, expected, written=None):
    """Compare a writer's read-back with the expected values (only where ``written`` is
    true, when given: with a null fill value, missing chunks read as undefined values)."""
    got = np.asarray(got)
    if written is not None:
        got, expected = got[written], expected[written]
    if expected.dtype.kind in "mM":
        ok = np.array_equal(got.view("i8"), expected.view("i8"))
    elif expected.dtype.fields is not None:
        ok = got.tobytes() == expected.tobytes()
    elif expected.dtype.kind in "fc":
        ok = np.array_equal(got, expected, equal_nan=True)
    else:
        ok = np.array_equal(got, expected)
    if not ok or got.dtype != expected.dtype:
        raise SystemExit(f"{name}: the writer reads back\n{got!r}\nexpected\n{expected!r}")


def remove_partials(root):
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".partial"):
                os.remove(os.path.join(dirpath, f))


# --------------------------------------------------------------------------------------------
# Zarr v1: zarr-python 1.1.0
# --------------------------------------------------------------------------------------------

STRUCT_A = [("x", "<i2"), ("y", "<f8")]
STRUCT_B = [("a", "|u1"), ("b", ">i4"), ("c", "|S2")]


def _ramp(shape, dtype, start=1):
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.fields is not None:
        out = np.zeros(n, dtype=dt)
        for i, name in enumerate(dt.names):
            fdt = dt.fields[name][0]
            if fdt.kind == "S":
                out[name] = [f"{(k + i) % 100:02d}".encode() for k in range(n)]
            else:
                out[name] = (np.arange(n) * (i + 2) + start).astype(fdt)
        return out.reshape(shape)
    if dt.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dt.kind == "S":
        return np.array([f"v{k}".encode() for k in range(start, start + n)], dtype=dt).reshape(
            shape
        )
    if dt.kind == "c":
        return (np.arange(n) + start + 1j * (np.arange(n) - 2)).astype(dt).reshape(shape)
    return (np.arange(n) + start).astype(dt).reshape(shape)


#: name -> (zarr 1.1 creation arguments, [regions written]); regions are tuples of slices
V1_ARRAYS = {
    "blosc_lz4_c_f8": (
        dict(
            shape=(7, 5),
            chunks=(3, 2),
            dtype="<f8",
            compression="blosc",
            compression_opts=dict(cname="lz4", clevel=5, shuffle=1),
            fill_value=float("nan"),
            order="C",
        ),
        [(slice(0, 4), slice(None)), (slice(6, 7), slice(4, 5))],
    ),
    "blosc_zstd_f_i2be": (
        dict(
            shape=(7, 5),
            chunks=(3, 2),
            dtype=">i2",
            compression="blosc",
            compression_opts=dict(cname="zstd", clevel=3, shuffle=2),
            fill_value=7,
            order="F",
        ),
        [(slice(1, 7), slice(0, 3)), (slice(0, 2), slice(4, 5))],
    ),
    "blosc_zlib_f_u4_3d": (
        dict(
            shape=(5, 4, 3),
            chunks=(2, 3, 2),
            dtype="<u4",
            compression="blosc",
            compression_opts=dict(cname="zlib", clevel=1, shuffle=0),
            fill_value=0,
            order="F",
        ),
        [(slice(0, 3), slice(0, 4), slice(1, 3)), (slice(4, 5), slice(3, 4), slice(2, 3))],
    ),
    "zlib_c_i4": (
        dict(
            shape=(7, 5),
            chunks=(3, 2),
            dtype="<i4",
            compression="zlib",
            compression_opts=1,
            fill_value=-1,
            order="C",
        ),
        [(slice(0, 4), slice(None))],
    ),
    "zlib_f_i4": (
        dict(
            shape=(7, 5),
            chunks=(3, 2),
            dtype="<i4",
            compression="zlib",
            compression_opts=6,
            fill_value=-1,
            order="F",
        ),
        [(slice(0, 4), slice(None)), (slice(6, 7), slice(4, 5))],
    ),
    "zlib_c_f2_ninf": (
        dict(
            shape=(9,),
            chunks=(4,),
            dtype="<f2",
            compression="zlib",
            compression_opts=9,
            fill_value=float("-inf"),
            order="C",
        ),
        [(slice(0, 3),), (slice(8, 9),)],
    ),
    "bz2_f_u1_3d": (
        dict(
            shape=(5, 4, 3),
            chunks=(2, 3, 2),
            dtype="|u1",
            compression="bz2",
            compression_opts=9,
            fill_value=255,
            order="F",
        ),
        [(slice(0, 5), slice(0, 2), slice(0, 3)), (slice(4, 5), slice(3, 4), slice(2, 3))],
    ),
    "lzma_xz_c_f4": (
        dict(
            shape=(9,),
            chunks=(4,),
            dtype="<f4",
            compression="lzma",
            compression_opts=None,
            fill_value=0.5,
            order="C",
        ),
        [(slice(1, 6),)],
    ),
    "lzma_raw_f_i8_null": (
        dict(
            shape=(6, 5),
            chunks=(4, 2),
            dtype="<i8",
            compression="lzma",
            # lzma.FORMAT_RAW with filters: FILTER_DELTA (3) and FILTER_LZMA2 (33)
            compression_opts=dict(
                format=3, check=0, filters=[dict(id=3, dist=8), dict(id=33, preset=1)]
            ),
            fill_value=None,
            order="F",
        ),
        # whole chunks only (null fill: a partly written chunk holds undefined values)
        [(slice(0, 4), slice(0, 2)), (slice(4, 6), slice(2, 4)), (slice(0, 4), slice(4, 5))],
    ),
    "none_c_b1": (
        dict(
            shape=(6, 5),
            chunks=(4, 4),
            dtype="|b1",
            compression="none",
            fill_value=True,
            order="C",
        ),
        [(slice(0, 4), slice(0, 4)), (slice(5, 6), slice(4, 5))],
    ),
    "none_f_c16": (
        dict(
            shape=(5, 3),
            chunks=(2, 2),
            dtype="<c16",
            compression="none",
            fill_value=0,
            order="F",
        ),
        [(slice(0, 3), slice(0, 3))],
    ),
    "struct_blosc_null": (
        dict(
            shape=(7,),
            chunks=(3,),
            dtype=STRUCT_A,
            compression="blosc",
            compression_opts=dict(cname="blosclz", clevel=9, shuffle=1),
            fill_value=None,
            order="C",
        ),
        [(slice(0, 3),), (slice(6, 7),)],
    ),
    "struct_none_zero_f": (
        dict(
            shape=(4, 3),
            chunks=(3, 2),
            dtype=STRUCT_B,
            compression="none",
            fill_value=0,
            order="F",
        ),
        [(slice(0, 3), slice(0, 2)), (slice(3, 4), slice(2, 3))],
    ),
    "bytes_s4_zlib": (
        dict(
            shape=(6,),
            chunks=(4,),
            dtype="|S4",
            compression="zlib",
            compression_opts=1,
            fill_value="zz",
            order="C",
        ),
        [(slice(4, 6),)],
    ),
}

V1_ATTRS = {
    "blosc_lz4_c_f8": {"title": "v1 by zarr 1.1", "nested": {"list": [1, 2, 3], "none": None}},
    "zlib_f_i4": {"units": "m", "scale": 0.5},
}


def make_v1(out):
    import zarr

    assert zarr.__version__.startswith("1."), zarr.__version__
    base = os.path.join(out, "v1_zarr1")
    shutil.rmtree(base, ignore_errors=True)
    arrays = {}
    for name, (kwargs, regions) in sorted(V1_ARRAYS.items()):
        kwargs = dict(kwargs)
        dtype = np.dtype(kwargs.pop("dtype"))
        path = os.path.join(base, "stores", name)
        z = zarr.open(path, mode="w", dtype=dtype, **kwargs)
        fill = kwargs["fill_value"]
        expected = np.zeros(kwargs["shape"], dtype=dtype)
        written = np.zeros(kwargs["shape"], dtype=bool)
        if fill is not None:
            expected.fill(fill)
        for i, region in enumerate(regions):
            shape = expected[region].shape
            values = _ramp(shape, dtype, start=1 + 10 * i)
            z[region] = values
            expected[region] = values
            written[region] = True
        for key, value in V1_ATTRS.get(name, {}).items():
            z.attrs[key] = value
        check(name, zarr.open(path, mode="r")[...], expected, None if fill is not None else written)
        arrays[name] = {
            "values": expected,
            "shape": list(expected.shape),
            "chunks": list(kwargs["chunks"]),
            "attrs": V1_ATTRS.get(name, {}),
            "writer": f"zarr-python {zarr.__version__}",
        }
        remove_partials(path)
    save_expected(base, arrays, {})


# --------------------------------------------------------------------------------------------
# The draft v3 layout: zarr-python 2.18 (experimental v3 API)
# --------------------------------------------------------------------------------------------


def make_draft_zarr2(out):
    import numcodecs
    import zarr
    from zarr._storage.v3 import DirectoryStoreV3
    from zarr._storage.v3_storage_transformers import ShardingStorageTransformer

    assert zarr.__version__.startswith("2."), zarr.__version__
    writer = f"zarr-python {zarr.__version__} (ZARR_V3_EXPERIMENTAL_API)"
    base = os.path.join(out, "draft_zarr2")
    shutil.rmtree(base, ignore_errors=True)
    store = DirectoryStoreV3(os.path.join(base, "store"))
    arrays = {}

    def array(path, regions, attrs=None, **kwargs):
        kwargs.setdefault("zarr_version", 3)
        z = zarr.create(store=store, path=path, **kwargs)
        dtype = z.dtype
        fill = kwargs.get("fill_value", 0)
        expected = np.zeros(kwargs["shape"], dtype=dtype)
        written = np.zeros(kwargs["shape"], dtype=bool)
        if fill is not None:
            expected[...] = fill
        for i, region in enumerate(regions):
            values = _ramp(expected[region].shape, dtype, start=1 + 10 * i)
            z[region] = values
            expected[region] = values
            written[region] = True
        for key, value in (attrs or {}).items():
            z.attrs[key] = value
        back = zarr.open_array(store, path=path, mode="r", zarr_version=3)[...]
        check(path, back, expected, None if fill is not None else written)
        cps = None
        for t in kwargs.get("storage_transformers", []):
            cps = list(t.chunks_per_shard)
        arrays[path] = {
            "values": expected,
            "shape": list(expected.shape),
            "chunks": list(kwargs["chunks"]),
            "shards": None if cps is None else [c * n for c, n in zip(kwargs["chunks"], cps)],
            "attrs": attrs or {},
            "writer": writer,
        }

    root = zarr.group(store=store, zarr_version=3)
    root.attrs["title"] = "draft v3 hierarchy by zarr-python 2.18"
    root.attrs["nested"] = {"a": [1, 2], "b": None}
    grp = zarr.group(store=store, path="grp", zarr_version=3)
    grp.attrs["kind"] = "explicit"
    zarr.group(store=store, path="empty_group", zarr_version=3).attrs["empty"] = True

    array(
        "grp/sub/gzip_f_f4",
        [(slice(0, 4), slice(None)), (slice(6, 7), slice(4, 5))],
        attrs={"units": "K"},
        shape=(7, 5),
        chunks=(3, 2),
        dtype="<f4",
        compressor=numcodecs.GZip(5),
        fill_value=np.nan,
        order="F",
    )
    array(
        "blosc_dot_i4be",
        [(slice(2, 8),)],
        shape=(10,),
        chunks=(3,),
        dtype=">i4",
        compressor=numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE),
        fill_value=-1,
        dimension_separator=".",
    )
    array(
        "blosc_dot_u2_2d",
        [(slice(0, 3), slice(1, 4))],
        shape=(5, 4),
        chunks=(2, 3),
        dtype="<u2",
        compressor=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
        fill_value=3,
        dimension_separator=".",
    )
    array(
        "zlib_delta_i8",
        [(slice(0, 6),)],
        shape=(9,),
        chunks=(4,),
        dtype="<i8",
        filters=[numcodecs.Delta("<i8")],
        compressor=numcodecs.Zlib(1),
        fill_value=0,
    )
    for name, codec, dtype, fill in (
        ("bz2_u1", numcodecs.BZ2(1), "|u1", 9),
        ("lz4_f2", numcodecs.LZ4(), "<f2", -0.5),
        ("lzma_f8", numcodecs.LZMA(), "<f8", float("inf")),
        ("zstd_c8", numcodecs.Zstd(3), "<c8", 1 + 2j),
    ):
        array(
            "codecs/" + name,
            [(slice(0, 5),)],
            shape=(7,),
            chunks=(3,),
            dtype=dtype,
            compressor=codec,
            fill_value=fill,
        )
    array(
        "types/bool_none",
        [(slice(0, 2), slice(0, 3))],
        shape=(3, 4),
        chunks=(2, 2),
        dtype=bool,
        compressor=None,
        fill_value=True,
    )
    array(
        "types/datetime_s",
        [(slice(0, 3),)],
        shape=(5,),
        chunks=(2,),
        dtype="<M8[s]",
        fill_value=np.datetime64("NaT"),
    )
    array(
        "types/bytes_s3",
        [(slice(0, 3),)],
        shape=(5,),
        chunks=(2,),
        dtype="|S3",
        fill_value=b"ab",
    )
    array(
        "types/str_u3",
        [(slice(1, 3),)],
        shape=(5,),
        chunks=(2,),
        dtype="<U3",
        fill_value="q",
    )
    array(
        "types/struct_null",
        [(slice(0, 2),), (slice(4, 5),)],  # whole chunks: null fill leaves the rest undefined
        shape=(5,),
        chunks=(2,),
        dtype=STRUCT_A,
        fill_value=None,
    )
    array(
        "types/i8_null",
        [(slice(0, 2),)],
        shape=(5,),
        chunks=(2,),
        dtype="<i8",
        fill_value=None,
    )
    array(
        "sharded/u2_none",
        [(slice(0, 5), slice(0, 5)), (slice(8, 9), slice(6, 7))],
        shape=(9, 7),
        chunks=(2, 3),
        dtype="<u2",
        compressor=None,
        fill_value=5,
        storage_transformers=[ShardingStorageTransformer("indexed", chunks_per_shard=(2, 2))],
    )
    array(
        "sharded/f8_blosc_f",
        [(slice(0, 6), slice(0, 4)), (slice(9, 10), slice(7, 9)), (slice(2, 3), slice(5, 6))],
        shape=(10, 9),
        chunks=(3, 4),
        dtype="<f8",
        compressor=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
        fill_value=np.nan,
        order="F",
        storage_transformers=[ShardingStorageTransformer("indexed", chunks_per_shard=(2, 2))],
    )
    array(
        "sharded/i4_gzip_3d",
        [(slice(0, 2), slice(0, 6), slice(0, 3)), (slice(4, 5), slice(5, 6), slice(6, 7))],
        shape=(5, 6, 7),
        chunks=(2, 2, 3),
        dtype="<i4",
        compressor=numcodecs.GZip(1),
        fill_value=-1,
        storage_transformers=[ShardingStorageTransformer("indexed", chunks_per_shard=(2, 1, 2))],
    )
    array(
        "deep/er/est/arr",
        [(slice(0, 2),)],
        shape=(3,),
        chunks=(2,),
        dtype="<i2",
        compressor=numcodecs.Zlib(1),
        fill_value=4,
    )
    groups = {
        "": {
            "attrs": dict(root.attrs),
            "explicit": True,
            "arrays": ["blosc_dot_i4be", "blosc_dot_u2_2d", "zlib_delta_i8"],
            "groups": ["codecs", "deep", "empty_group", "grp", "sharded", "types"],
        },
        "grp": {"attrs": {"kind": "explicit"}, "explicit": True, "arrays": [], "groups": ["sub"]},
        "grp/sub": {"attrs": {}, "explicit": False, "arrays": ["gzip_f_f4"], "groups": []},
        "empty_group": {"attrs": {"empty": True}, "explicit": True, "arrays": [], "groups": []},
        "codecs": {
            "attrs": {},
            "explicit": False,
            "arrays": ["bz2_u1", "lz4_f2", "lzma_f8", "zstd_c8"],
            "groups": [],
        },
        "types": {
            "attrs": {},
            "explicit": False,
            "arrays": [
                "bool_none",
                "bytes_s3",
                "datetime_s",
                "i8_null",
                "str_u3",
                "struct_null",
            ],
            "groups": [],
        },
        "sharded": {
            "attrs": {},
            "explicit": False,
            "arrays": ["f8_blosc_f", "i4_gzip_3d", "u2_none"],
            "groups": [],
        },
        "deep": {"attrs": {}, "explicit": False, "arrays": [], "groups": ["er"]},
        "deep/er": {"attrs": {}, "explicit": False, "arrays": [], "groups": ["est"]},
        "deep/er/est": {"attrs": {}, "explicit": False, "arrays": ["arr"], "groups": []},
    }
    save_expected(base, arrays, groups)

    # An array at the root of its hierarchy.
    base = os.path.join(out, "draft_zarr2_root")
    shutil.rmtree(base, ignore_errors=True)
    store = DirectoryStoreV3(os.path.join(base, "store"))
    arrays = {}
    array(
        "",
        [(slice(0, 4), slice(0, 2)), (slice(5, 6), slice(3, 4))],
        attrs={"at": "root"},
        shape=(6, 4),
        chunks=(4, 3),
        dtype="<i2",
        compressor=numcodecs.Zlib(1),
        fill_value=9,
    )
    save_expected(base, arrays, {})


# --------------------------------------------------------------------------------------------
# The later draft's form, by hand from the spec
# --------------------------------------------------------------------------------------------

CORE_URI = "https://purl.org/zarr/spec/core/3.0"
CODEC = "https://purl.org/zarr/spec/codec/%s/1.0"
CODECS = "https://purl.org/zarr/spec/codecs/%s/1.0"  # the spec's blosc/endian pages say codecs
SHARDING = "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0"
MAX_U64 = 2**64 - 1


def _put(root, key, value):
    path = os.path.join(root, *key.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(value, (dict, list)):
        value = (json.dumps(value, indent=2) + "\n").encode()
    with open(path, "wb") as f:
        f.write(value)


def _chunks(shape, chunks):
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    return list(np.ndindex(*grid))


def _chunk_array(values, fill, coords, chunks):
    """The full chunk at ``coords`` (edge chunks padded with the fill value), or None if it
    holds only the fill value (left out of the store)."""
    region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunks))
    part = values[region]
    full = np.empty(chunks, dtype=values.dtype)
    full[...] = fill
    full[tuple(slice(0, n) for n in part.shape)] = part
    return full


class HandArray:
    """An array of a hand-built draft hierarchy: metadata document and encoded chunks."""

    def __init__(self, shape, chunks, dtype, fill, fill_json, data_type, codecs, encode, **kw):
        self.shape, self.chunks, self.dtype = tuple(shape), tuple(chunks), np.dtype(dtype)
        self.fill, self.codecs, self.encode = fill, codecs, encode
        self.order = kw.get("order", "C")
        self.separator = kw.get("separator", "/")
        self.cps = kw.get("chunks_per_shard")
        self.attrs = kw.get("attrs", {})
        self.doc = {
            "shape": list(shape),
            "data_type": data_type,
            "chunk_grid": {"type": "regular", "chunk_shape": list(chunks), "separator": "/"},
            "chunk_memory_layout": self.order,
            "fill_value": fill_json,
            "extensions": [],
            "attributes": self.attrs,
        }
        self.doc["chunk_grid"]["separator"] = self.separator
        if codecs:
            self.doc["codecs"] = codecs
        if self.cps:
            self.doc["storage_transformers"] = [
                {
                    "extension": SHARDING,
                    "type": "indexed",
                    "configuration": {"chunks_per_shard": list(self.cps)},
                }
            ]
        self.values = np.empty(shape, dtype=self.dtype)
        self.values[...] = fill

    def key(self, coords):
        return "c" + self.separator.join(str(c) for c in coords)

    def encoded(self, coords):
        chunk = _chunk_array(self.values, self.fill, coords, self.chunks)
        if self.order == "F":
            chunk = chunk.T
        return self.encode(np.ascontiguousarray(chunk).tobytes())

    def is_fill(self, coords):
        region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, self.chunks))
        part = self.values[region]
        same = np.full(part.shape, self.fill, dtype=self.dtype)
        return part.tobytes() == same.tobytes()

    def write(self, root, meta_key, data_prefix):
        _put(root, meta_key, self.doc)
        stored = [c for c in _chunks(self.shape, self.chunks) if not self.is_fill(c)]
        if not self.cps:
            for coords in stored:
                _put(root, data_prefix + self.key(coords), self.encoded(coords))
            return
        shards = {}
        for coords in stored:
            shard = tuple(c // n for c, n in zip(coords, self.cps))
            shards.setdefault(shard, []).append(coords)
        for shard, members in shards.items():
            index = np.full(tuple(self.cps) + (2,), MAX_U64, dtype="<u8")
            body = b"\x00" * 5  # unused bytes before the first chunk are allowed
            for coords in reversed(members):  # any order: here the reverse of C order
                data = self.encoded(coords)
                local = tuple(c % n for c, n in zip(coords, self.cps))
                index[local] = (len(body), len(data))
                body += data
            _put(root, data_prefix + self.key(shard), body + index.tobytes())

    def describe(self):
        shards = None if not self.cps else [c * n for c, n in zip(self.chunks, self.cps)]
        return {
            "values": self.values,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "shards": shards,
            "attrs": self.attrs,
            "writer": "hand-built from the draft spec",
        }


def make_hand(out):
    import numcodecs

    def gzip(level):
        return numcodecs.GZip(level).encode

    # ---- draft_spec: meta/root layout, the later draft's documents ----
    base = os.path.join(out, "draft_spec")
    shutil.rmtree(base, ignore_errors=True)
    root = os.path.join(base, "store")
    _put(
        root,
        "zarr.json",
        {
            "zarr_format": CORE_URI,
            "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
            "extensions": [
                {
                    "extension": "http://example.org/zarr/extension/foo",
                    "must_understand": False,
                    "configuration": {"foo": "bar"},
                }
            ],
        },
    )
    _put(root, "meta/root.group.json", {"attributes": {"spam": "ham", "eggs": 42}})
    _put(root, "meta/root/b.group.json", {"attributes": {"explicit": True}})
    arrays = {}

    a = HandArray(
        (7, 5),
        (3, 2),
        "<f4",
        np.nan,
        "NaN",
        "float32",
        [{"type": CODEC % "gzip", "configuration": {"level": 1}}],
        gzip(1),
        attrs={"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]},
    )
    a.values[:4] = np.arange(20, dtype="<f4").reshape(4, 5)
    a.values[6, 4] = -2.5
    arrays["a/gzip_f4"] = a

    blosc = numcodecs.Blosc("lz4", 1, numcodecs.Blosc.SHUFFLE)
    a = HandArray(
        (5, 7),
        (2, 3),
        ">i2",
        np.int16(32767),
        "0x7fff",
        "int16",
        [
            {"type": CODECS % "endian", "configuration": {"endian": "big"}},
            {
                "type": CODECS % "blosc",
                "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 1, "blocksize": 0},
            },
        ],
        blosc.encode,
        order="F",
    )
    a.values[:3, 1:6] = np.arange(15, dtype=">i2").reshape(3, 5) - 7
    a.values[4, 6] = -300
    arrays["a/endian_big_blosc_i2_f"] = a

    a = HandArray(
        (6,),
        (4,),
        "<f8",
        np.inf,
        "+Infinity",
        "float64",
        [{"type": CODEC % "zstd", "configuration": {"level": 3, "checksum": False}}],
        numcodecs.Zstd(3).encode,
        separator=".",
    )
    a.values[1:3] = [1.5, -0.0]
    arrays["b/zstd_inf_f8"] = a

    a = HandArray(
        (4, 5),
        (2, 2),
        "<u8",
        np.uint64(1),
        "0x0000000000000001",
        "uint64",
        [],
        lambda b: b,
        separator=".",
    )
    a.values[:2, :4] = np.arange(8, dtype="<u8").reshape(2, 4) * 2**40
    arrays["b/dot_sep_u8"] = a

    a = HandArray(
        (5,),
        (2,),
        "|V2",
        np.frombuffer(b"\xbe\xef", dtype="V2")[0],
        "0xbeef",
        "r16",
        [],
        lambda b: b,
    )
    a.values[0] = np.frombuffer(b"\x01\x02", dtype="V2")[0]
    a.values[3] = np.frombuffer(b"\x03\x04", dtype="V2")[0]
    arrays["raw_r16"] = a

    gzip6 = [{"type": CODEC % "gzip", "configuration": {"level": 6}}]
    a = HandArray((), (), "<f8", 0.0, 0.0, "float64", gzip6, gzip(6))  # 0-d: the key is "c"
    a.values[()] = 2.75
    arrays["zerod_f8"] = a

    a = HandArray(
        (6,),
        (4,),
        "<i4",
        0,
        0,
        {
            "extension": "https://example.org/zarr/data-types/unknown/1.0",
            "type": "an-unknown-type",
            "fallback": ["also-unknown", "int32"],
        },
        [],
        lambda b: b,
    )
    a.values[:3] = [5, -6, 7]
    arrays["ext_fallback_i4"] = a

    a = HandArray(
        (9, 7),
        (2, 3),
        "<u2",
        np.uint16(5),
        5,
        "uint16",
        [{"type": CODEC % "gzip", "configuration": {"level": 1}}],
        gzip(1),
        chunks_per_shard=(2, 2),
    )
    a.values[:5, :5] = np.arange(25, dtype="<u2").reshape(5, 5) + 100
    a.values[8, 6] = 9
    arrays["sharded_u2"] = a

    for path, arr in arrays.items():
        arr.write(root, f"meta/root/{path}.array.json", f"data/root/{path}/")
    groups = {
        "": {
            "attrs": {"spam": "ham", "eggs": 42},
            "explicit": True,
            "arrays": ["ext_fallback_i4", "raw_r16", "sharded_u2", "zerod_f8"],
            "groups": ["a", "b"],
        },
        "a": {
            "attrs": {},
            "explicit": False,
            "arrays": ["endian_big_blosc_i2_f", "gzip_f4"],
            "groups": [],
        },
        "b": {
            "attrs": {"explicit": True},
            "explicit": True,
            "arrays": ["dot_sep_u8", "zstd_inf_f8"],
            "groups": [],
        },
    }
    save_expected(base, {p: a.describe() for p, a in arrays.items()}, groups)

    # ---- draft_spec_noroot: the December 2022 layout (no "root" segment) ----
    base = os.path.join(out, "draft_spec_noroot")
    shutil.rmtree(base, ignore_errors=True)
    root = os.path.join(base, "store")
    _put(
        root,
        "zarr.json",
        {
            "zarr_format": CORE_URI,
            "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
            "extensions": [],
        },
    )
    _put(root, "meta/group.json", {"attributes": {"layout": "no root segment"}})
    arrays = {}
    a = HandArray(
        (5, 4),
        (2, 3),
        "<i4",
        -1,
        -1,
        "int32",
        [{"type": CODEC % "gzip", "configuration": {"level": 1}}],
        gzip(1),
        attrs={"x": 1},
    )
    a.values[:3, :3] = np.arange(9).reshape(3, 3)
    arrays["x"] = a
    a = HandArray((3,), (2,), "<f4", 0.25, 0.25, "float32", [], lambda b: b)
    a.values[2] = 8.0
    arrays["g/y"] = a
    for path, arr in arrays.items():
        arr.write(root, f"meta/{path}.array.json", f"data/{path}/")
    groups = {
        "": {
            "attrs": {"layout": "no root segment"},
            "explicit": True,
            "arrays": ["x"],
            "groups": ["g"],
        },
        "g": {"attrs": {}, "explicit": False, "arrays": ["y"], "groups": []},
    }
    save_expected(base, {p: a.describe() for p, a in arrays.items()}, groups)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["all", "v1", "draft-zarr2", "hand"])
    p.add_argument("--out", default=OUT)
    p.add_argument("--zarr1-python", default="/tmp/venv-zarr1/bin/python")
    p.add_argument("--zarr2-python", default=os.path.join(HERE, "..", ".venv-zarr2/bin/python"))
    p.add_argument("--pytest-path", default=None, help="PYTHONPATH with pytest for zarr 2.18")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.what == "v1":
        make_v1(args.out)
    elif args.what == "draft-zarr2":
        make_draft_zarr2(args.out)
    elif args.what == "hand":
        make_hand(args.out)
    else:
        me = os.path.abspath(__file__)
        subprocess.check_call([args.zarr1_python, me, "v1", "--out", args.out])
        env = dict(os.environ, ZARR_V3_EXPERIMENTAL_API="1", ZARR_V3_SHARDING="1")
        if args.pytest_path:
            env["PYTHONPATH"] = args.pytest_path
        subprocess.check_call(
            [args.zarr2_python, "-W", "ignore", me, "draft-zarr2", "--out", args.out], env=env
        )
        make_hand(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
