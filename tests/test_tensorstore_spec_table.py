"""TensorStore specs, checked against TensorStore itself.

Each spec of the table is created once with zarrox and once with TensorStore, in separate
directories. The stored metadata documents (``zarr.json`` or ``.zarray``) are compared member
by member: they must be identical, except for the differences the table lists (with their
reason), and when none are listed the bytes must be identical too. Then each library reads
the values the other wrote. A second table opens existing arrays with constraints that do not
match them: both libraries must refuse, and zarrox's error must name the member.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from zarrox.errors import SpecError, SpecMismatchError

ts = pytest.importorskip("tensorstore")

# (id, spec without kvstore, open options, {member: reason} of expected differences)
Case = tuple[str, dict[str, Any], dict[str, Any], dict[str, str]]


def v3(metadata: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"driver": "zarr3", "metadata": metadata, **extra}


def v2(metadata: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"driver": "zarr", "metadata": metadata, **extra}


I16 = {"shape": [10, 12], "data_type": "int16"}
LAYOUT_RW = {"read_chunk": {"shape": [5, 4]}, "write_chunk": {"shape": [10, 8]}}

CASES: list[Case] = [
    # -- codecs: names, partial and full configurations, defaults chosen as TensorStore does
    ("uint8-defaults", v3({"shape": [10, 10], "data_type": "uint8"}), {}, {}),
    ("int16-defaults", v3(I16), {}, {}),
    ("gzip-string", v3({**I16, "codecs": ["gzip"]}), {}, {}),
    (
        "gzip-level",
        v3({**I16, "codecs": [{"name": "gzip", "configuration": {"level": 9}}]}),
        {},
        {},
    ),
    ("zstd-string", v3({**I16, "codecs": ["zstd"]}), {}, {}),
    (
        "zstd-full",
        v3({**I16, "codecs": [{"name": "zstd", "configuration": {"level": 6, "checksum": True}}]}),
        {},
        {},
    ),
    ("blosc-string-int16", v3({**I16, "codecs": ["blosc"]}), {}, {}),
    (
        "blosc-string-uint8",
        v3({"shape": [9, 9], "data_type": "uint8", "codecs": ["blosc"]}),
        {},
        {},
    ),
    (
        "blosc-full",
        v3(
            {
                **I16,
                "codecs": [
                    {
                        "name": "blosc",
                        "configuration": {
                            "cname": "zstd",
                            "clevel": 9,
                            "shuffle": "bitshuffle",
                            "typesize": 2,
                            "blocksize": 0,
                        },
                    }
                ],
            }
        ),
        {},
        {},
    ),
    (
        "blosc-noshuffle",
        v3({**I16, "codecs": [{"name": "blosc", "configuration": {"shuffle": "noshuffle"}}]}),
        {},
        {},
    ),
    ("gzip-then-blosc", v3({**I16, "codecs": ["gzip", "blosc"]}), {}, {}),
    ("crc32c", v3({**I16, "codecs": ["crc32c"]}), {}, {}),
    ("zstd-crc32c", v3({**I16, "codecs": ["zstd", "crc32c"]}), {}, {}),
    (
        "transpose-F",
        v3({**I16, "codecs": [{"name": "transpose", "configuration": {"order": "F"}}]}),
        {},
        {},
    ),
    (
        "transpose-C",
        v3({**I16, "codecs": [{"name": "transpose", "configuration": {"order": "C"}}]}),
        {},
        {},
    ),
    (
        "transpose-rank3",
        v3(
            {
                "shape": [4, 5, 6],
                "data_type": "float32",
                "codecs": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, "gzip"],
            }
        ),
        {},
        {},
    ),
    (
        "bytes-big-endian",
        v3(
            {
                "shape": [7, 9],
                "data_type": "int32",
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
            }
        ),
        {},
        {},
    ),
    (
        "bytes-endian-dropped-for-uint8",
        v3(
            {
                "shape": [7, 9],
                "data_type": "uint8",
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
            }
        ),
        {},
        {},
    ),
    # -- sharding, given as a codec or through the chunk layout
    (
        "sharding-string",
        v3(
            {
                **I16,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 6]}},
                "codecs": ["sharding_indexed"],
            }
        ),
        {},
        {},
    ),
    (
        "sharding-partial",
        v3(
            {
                "shape": [20, 20],
                "data_type": "uint16",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
                "codecs": [
                    {
                        "name": "sharding_indexed",
                        "configuration": {
                            "chunk_shape": [5, 5],
                            "codecs": ["zstd"],
                            "index_location": "start",
                        },
                    }
                ],
            }
        ),
        {},
        {},
    ),
    (
        "sharding-index-codecs",
        v3(
            {
                **I16,
                "codecs": [
                    {
                        "name": "sharding_indexed",
                        "configuration": {"chunk_shape": [5, 6], "index_codecs": ["bytes"]},
                    }
                ],
            }
        ),
        {},
        {},
    ),
    ("layout-read-write", v3(I16, schema={"chunk_layout": LAYOUT_RW}), {}, {}),
    (
        "layout-read-write-schema-codec",
        v3(
            I16,
            schema={
                "chunk_layout": LAYOUT_RW,
                "codec": {"driver": "zarr3", "codecs": ["gzip", "crc32c"]},
            },
        ),
        {},
        {},
    ),
    (
        "layout-sharding-inner-order",
        v3(
            {**I16, "codecs": ["sharding_indexed"]},
            schema={"chunk_layout": {**LAYOUT_RW, "inner_order": [1, 0]}},
        ),
        {},
        {},
    ),
    (
        "layout-aspect-elements",
        v3({"shape": [100, 100], "data_type": "int16"}),
        {"chunk_layout": {"chunk": {"aspect_ratio": [2, 1], "elements": 50}}},
        {},
    ),
    (
        "layout-full-extent",
        v3({"shape": [30, 40], "data_type": "int16"}),
        {"chunk_layout": {"write_chunk": {"shape": [-1, 8]}}},
        {},
    ),
    (
        "layout-soft-read-shape",
        v3({"shape": [100, 100], "data_type": "int16"}),
        {
            "chunk_layout": {
                "read_chunk": {"shape_soft_constraint": [30, 100]},
                "write_chunk": {"shape": [100, 100]},
            }
        },
        {},
    ),
    (
        "layout-inner-order",
        v3({"shape": [20, 30], "data_type": "float64"}),
        {"chunk_layout": {"inner_order": [1, 0]}},
        {},
    ),
    ("layout-default-1M", v3({"shape": [2000, 3000], "data_type": "uint16"}), {}, {}),
    # -- schema: domain, labels, dimension names and units, fill values, data types
    (
        "schema-domain-labels",
        {
            "driver": "zarr3",
            "schema": {"dtype": "bool", "domain": {"shape": [6, 7], "labels": ["y", "x"]}},
        },
        {},
        {},
    ),
    (
        "schema-domain-bounds",
        {
            "driver": "zarr3",
            "dtype": "uint32",
            "schema": {"domain": {"inclusive_min": [0, 0], "exclusive_max": [5, 8]}},
        },
        {},
        {},
    ),
    ("dimension-names-null", v3({**I16, "dimension_names": ["x", None]}), {}, {}),
    ("dimension-names-empty", v3({**I16, "dimension_names": ["x", ""]}), {}, {}),
    (
        "dimension-units-schema",
        v3({**I16, "dimension_names": ["z", "y"]}),
        {"dimension_units": ["4nm", None]},
        {},
    ),
    (
        "dimension-units-attributes",
        v3({**I16, "attributes": {"a": 1, "dimension_units": ["2.5e3 s", "m"]}}),
        {},
        {},
    ),
    ("fill-int", v3({**I16, "fill_value": 7}), {}, {}),
    ("fill-nan", v3({"shape": [8, 8], "data_type": "float32", "fill_value": "NaN"}), {}, {}),
    ("fill-schema-float", v3({"shape": [8, 8], "data_type": "float32"}), {"fill_value": 0.1}, {}),
    (
        "fill-infinity",
        v3({"shape": [8, 8], "data_type": "float64", "fill_value": "-Infinity"}),
        {},
        {},
    ),
    (
        "fill-complex",
        v3({"shape": [8, 8], "data_type": "complex64", "fill_value": [1, "NaN"]}),
        {},
        {},
    ),
    ("dtype-bool", v3({"shape": [9, 3], "data_type": "bool", "fill_value": True}), {}, {}),
    ("dtype-bfloat16", v3({"shape": [16, 8], "data_type": "bfloat16", "codecs": ["zstd"]}), {}, {}),
    ("dtype-float16", v3({"shape": [16, 8], "data_type": "float16"}), {}, {}),
    (
        "dtype-uint64",
        v3({"shape": [16], "data_type": "uint64", "fill_value": 18446744073709551615}),
        {},
        {},
    ),
    ("dtype-complex128", v3({"shape": [5, 5], "data_type": "complex128"}), {}, {}),
    ("rank-0", v3({"shape": [], "data_type": "float32", "fill_value": 1.5}), {}, {}),
    ("options-only", {"driver": "zarr3"}, {"dtype": "int8", "shape": [11, 13]}, {}),
    # -- chunk key encodings
    (
        "cke-default-dot",
        v3(
            {
                **I16,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
            }
        ),
        {},
        {},
    ),
    (
        "cke-v2",
        v3(
            {
                **I16,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}},
                "chunk_key_encoding": {"name": "v2"},
            }
        ),
        {},
        {},
    ),
    (
        "cke-v2-slash",
        v3(
            {
                **I16,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}},
                "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}},
            }
        ),
        {},
        {},
    ),
    # -- kvstores as URLs, the driver's path member, spec URLs
    (
        "kvstore-url",
        {"driver": "zarr3", "kvstore": "URL"},
        {"dtype": "uint16", "shape": [6, 6]},
        {},
    ),
    (
        "kvstore-url-path",
        {"driver": "zarr3", "kvstore": "URL", "path": "group/array"},
        {"dtype": "uint16", "shape": [6, 6]},
        {},
    ),
    ("spec-url", {"url": "|zarr3:inner"}, {"dtype": "int32", "shape": [4, 4]}, {}),
    # -- zarr v2
    ("v2-defaults", v2({"shape": [10, 10], "dtype": "<i2"}), {}, {}),
    (
        "v2-schema-fill",
        {
            "driver": "zarr",
            "schema": {"domain": {"shape": [10, 20]}, "dtype": "float32", "fill_value": 5},
        },
        {},
        {},
    ),
    ("v2-zlib", v2({"shape": [10, 10], "dtype": ">i2", "compressor": {"id": "zlib"}}), {}, {}),
    ("v2-zstd", v2({"shape": [10, 10], "dtype": "<u4", "compressor": {"id": "zstd"}}), {}, {}),
    (
        "v2-bz2",
        v2({"shape": [10, 10], "dtype": "<f8", "compressor": {"id": "bz2", "level": 3}}),
        {},
        {},
    ),
    (
        "v2-uncompressed-F-slash",
        v2(
            {
                "shape": [10, 10],
                "dtype": ">i2",
                "compressor": None,
                "order": "F",
                "dimension_separator": "/",
                "chunks": [3, 7],
            }
        ),
        {},
        {},
    ),
    (
        "v2-blosc-full",
        v2(
            {
                "shape": [10, 10],
                "dtype": "<i4",
                "compressor": {
                    "id": "blosc",
                    "cname": "zstd",
                    "clevel": 3,
                    "shuffle": 2,
                    "blocksize": 0,
                },
            }
        ),
        {},
        {},
    ),
    (
        "v2-inner-order-F",
        {"driver": "zarr"},
        {"dtype": "float32", "shape": [10, 20], "chunk_layout": {"inner_order": [1, 0]}},
        {},
    ),
    (
        "v2-key-encoding",
        {"driver": "zarr", "key_encoding": "/"},
        {"dtype": "uint8", "shape": [6, 6], "chunk_layout": {"write_chunk": {"shape": [2, 3]}}},
        {},
    ),
    ("v2-bool", v2({"shape": [5, 5], "dtype": "|b1", "fill_value": False}), {}, {}),
    ("v2-default-chunks", v2({"shape": [3000, 1000], "dtype": "<f8"}), {}, {}),
    (
        "v2-schema-codec",
        {"driver": "zarr", "schema": {"codec": {"driver": "zarr", "compressor": {"id": "gzip"}}}},
        {"dtype": "int64", "shape": [8, 8]},
        {},
    ),
]


def _kvstore(spec: dict[str, Any], root: Path) -> dict[str, Any]:
    """The spec with a kvstore under ``root``: a file kvstore object, or a URL where the table
    says so."""
    spec = json.loads(json.dumps(spec))
    if "url" in spec:
        return {"url": f"file://{root}/{spec['url']}"}
    if spec.get("kvstore") == "URL":
        spec["kvstore"] = f"file://{root}/"
    else:
        spec["kvstore"] = {"driver": "file", "path": f"{root}/"}
    return spec


def _ts_options(options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if "chunk_layout" in out:
        out["chunk_layout"] = ts.ChunkLayout(out["chunk_layout"])
    if "dtype" in out:
        out["dtype"] = ts.dtype(out["dtype"])
    return out


def _open_ts(spec: dict[str, Any], **options: Any) -> Any:
    target = spec["url"] if "url" in spec else spec
    return ts.open(target, **_ts_options(options)).result()


def _open_zarrox(spec: dict[str, Any], **options: Any) -> zarrox.ArrayView:
    target = spec["url"] if "url" in spec else spec
    return zarrox.open(target, **options)


def _metadata_file(root: Path, driver: str, case_id: str) -> Path:
    name = "zarr.json" if driver == "zarr3" else ".zarray"
    sub = {"kvstore-url-path": "group/array", "spec-url": "inner"}.get(case_id, "")
    return root / sub / name if sub else root / name


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
        return out or {prefix: {}}
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out or {prefix: []}
    return {prefix: value}


def _differences(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    fa, fb = _flatten(a), _flatten(b)
    return {k for k in fa.keys() | fb.keys() if json.dumps(fa.get(k)) != json.dumps(fb.get(k))}


def _sample(view: Any, seed: int) -> tuple[tuple[slice, ...], np.ndarray]:
    """A region (at most 8 wide per dimension) and values of the view's dtype for it."""
    shape = tuple(view.shape)
    region = tuple(slice(0, min(n, 8)) for n in shape)
    sub = tuple(min(n, 8) for n in shape)
    rng = np.random.default_rng(seed)
    dtype = np.dtype(view.dtype.numpy_dtype) if hasattr(view.dtype, "numpy_dtype") else view.dtype
    if dtype.kind == "b":
        values = rng.integers(0, 2, sub).astype(bool)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -1000), min(info.max, 1000), sub, endpoint=True).astype(
            dtype
        )
    elif dtype.kind == "c":
        values = (rng.standard_normal(sub) + 1j * rng.standard_normal(sub)).astype(dtype)
    else:
        values = rng.standard_normal(sub).astype(dtype)
    return region, values


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_created_like_tensorstore(case: Case, tmp_path: Path) -> None:
    case_id, spec, options, expected = case
    zx_root, ts_root = tmp_path / "zarrox", tmp_path / "tensorstore"
    zx_spec, ts_spec = _kvstore(spec, zx_root), _kvstore(spec, ts_root)
    zx = _open_zarrox(zx_spec, create=True, **options)
    tsa = _open_ts(ts_spec, create=True, **options)
    driver = "zarr" if spec.get("driver") == "zarr" else "zarr3"
    zx_file = _metadata_file(zx_root, driver, case_id)
    ts_file = _metadata_file(ts_root, driver, case_id)
    zx_doc, ts_doc = json.loads(zx_file.read_bytes()), json.loads(ts_file.read_bytes())
    assert _differences(zx_doc, ts_doc) == set(expected), (zx_doc, ts_doc)
    if not expected:
        assert zx_file.read_bytes() == ts_file.read_bytes()
    if driver == "zarr":
        assert sorted(p.name for p in zx_file.parent.iterdir()) == sorted(
            p.name for p in ts_file.parent.iterdir()
        )

    # each library reads what the other wrote
    region, zx_values = _sample(zx, 1)
    _, ts_values = _sample(zx, 2)
    zx[region] = zx_values
    tsa[region] = ts_values
    from_ts = _open_zarrox(ts_spec)
    from_zx = _open_ts(zx_spec)
    np.testing.assert_array_equal(np.asarray(from_ts[region]), ts_values)
    np.testing.assert_array_equal(from_zx[region].read().result(), zx_values)
    # and the whole arrays agree element for element (fill values included) where small
    if np.prod(zx.shape) <= 10_000:
        zx_all = zx.read()
        ts_all = ts.open(zx_spec["url"] if "url" in zx_spec else zx_spec).result().read().result()
        np.testing.assert_array_equal(zx_all, ts_all)


def test_table_size() -> None:
    """The brief asks for at least 40 specs; every one is compared in full."""
    assert len(CASES) >= 40
    assert all(not c[3] for c in CASES), "every spec writes the same document as TensorStore"


# -- open-time constraints that do not match the stored array: both libraries refuse ---------

BASE_V3 = {
    "driver": "zarr3",
    "metadata": {
        "shape": [10, 20],
        "data_type": "int16",
        "dimension_names": ["x", "y"],
        "attributes": {"a": 1},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 10]}},
        "codecs": ["gzip"],
    },
}
BASE_V2 = {"driver": "zarr", "metadata": {"shape": [10, 20], "dtype": "<i2", "chunks": [5, 10]}}

# (id, base, constraint members merged into the spec, open options, member zarrox names)
MISMATCHES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], str]] = [
    ("metadata-shape", BASE_V3, {"metadata": {"shape": [5, 20]}}, {}, "metadata.shape"),
    ("metadata-data_type", BASE_V3, {"metadata": {"data_type": "int32"}}, {}, "metadata.data_type"),
    ("dtype", BASE_V3, {"dtype": "int32"}, {}, "dtype"),
    ("rank", BASE_V3, {"rank": 3}, {}, "rank"),
    (
        "schema-domain-shape",
        BASE_V3,
        {"schema": {"domain": {"shape": [5, 20]}}},
        {},
        "schema.domain",
    ),
    (
        "schema-domain-labels",
        BASE_V3,
        {"schema": {"domain": {"labels": ["x", "z"]}}},
        {},
        "schema.domain",
    ),
    ("codecs-count", BASE_V3, {"metadata": {"codecs": ["zstd"]}}, {}, "metadata.codecs"),
    (
        "codecs-option",
        BASE_V3,
        {"metadata": {"codecs": [{"name": "gzip", "configuration": {"level": 1}}]}},
        {},
        "metadata.codecs",
    ),
    (
        "codecs-endian",
        BASE_V3,
        {"metadata": {"codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, "gzip"]}},
        {},
        "metadata.codecs",
    ),
    (
        "chunk-grid",
        BASE_V3,
        {"metadata": {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}}}},
        {},
        "metadata.chunk_grid",
    ),
    (
        "chunk-key-encoding",
        BASE_V3,
        {"metadata": {"chunk_key_encoding": {"name": "v2"}}},
        {},
        "metadata.chunk_key_encoding",
    ),
    (
        "fill-value",
        BASE_V3,
        {"metadata": {"data_type": "int16", "fill_value": 3}},
        {},
        "metadata.fill_value",
    ),
    ("schema-fill-value", BASE_V3, {"schema": {"fill_value": 3}}, {}, "schema.fill_value"),
    (
        "dimension-names",
        BASE_V3,
        {"metadata": {"dimension_names": ["x", "z"]}},
        {},
        "metadata.dimension_names",
    ),
    ("attributes", BASE_V3, {"metadata": {"attributes": {"a": 2}}}, {}, "metadata.attributes.a"),
    (
        "dimension-units",
        BASE_V3,
        {"schema": {"dimension_units": ["5nm", None]}},
        {},
        "dimension_units",
    ),
    (
        "chunk-layout",
        BASE_V3,
        {"schema": {"chunk_layout": {"write_chunk": {"shape": [5, 5]}}}},
        {},
        "chunk_layout.write_chunk",
    ),
    (
        "schema-codec",
        BASE_V3,
        {"schema": {"codec": {"driver": "zarr3", "codecs": ["zstd"]}}},
        {},
        "codec",
    ),
    ("shape-option", BASE_V3, {}, {"shape": [10, 21]}, "domain"),
    ("v2-dtype", BASE_V2, {"metadata": {"dtype": "<i4"}}, {}, "metadata.dtype"),
    ("v2-chunks", BASE_V2, {"metadata": {"chunks": [10, 10]}}, {}, "metadata.chunks"),
    ("v2-order", BASE_V2, {"metadata": {"order": "F"}}, {}, "metadata.order"),
    (
        "v2-compressor",
        BASE_V2,
        {"metadata": {"compressor": {"id": "zlib"}}},
        {},
        "metadata.compressor",
    ),
    ("v2-schema-dtype", BASE_V2, {"dtype": "float32"}, {}, "dtype"),
]


def _merge(created: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The spec that opens the created array, with the constraints ``extra`` (and none of
    the metadata it was created with)."""
    out = {k: v for k, v in created.items() if k != "metadata"}
    out.update(json.loads(json.dumps(extra)))
    return out


@pytest.mark.parametrize("case", MISMATCHES, ids=[c[0] for c in MISMATCHES])
def test_mismatching_constraints_fail_in_both(case: Any, tmp_path: Path) -> None:
    _, base, extra, options, member = case
    created = {
        **json.loads(json.dumps(base)),
        "kvstore": {"driver": "file", "path": f"{tmp_path}/"},
    }
    ts.open(
        created, create=True, **({"dimension_units": ["4nm", None]} if base is BASE_V3 else {})
    ).result()
    spec = _merge(created, extra)
    with pytest.raises(ValueError):
        ts.open(spec, **options).result()
    with pytest.raises(SpecError) as info:
        zarrox.open(spec, **options)
    assert member in str(info.value)
    # without the mismatching constraint, both open it
    zarrox.open({k: v for k, v in created.items() if k != "metadata"})
    ts.open({k: v for k, v in created.items() if k != "metadata"}).result()


# constraints that match: both open the array
MATCHES = [
    {"metadata": {"codecs": [{"name": "bytes"}, "gzip"]}},
    {"metadata": {"attributes": {}}},
    {"metadata": {"codecs": ["gzip"], "data_type": "int16", "fill_value": 0}},
    {"schema": {"domain": {"labels": ["x", "y"]}}},
    {"schema": {"dimension_units": ["4nm", None]}},
    {"schema": {"chunk_layout": {"write_chunk": {"shape": [5, 10]}}}},
    {"dtype": "int16", "rank": 2},
]


@pytest.mark.parametrize("extra", MATCHES, ids=[json.dumps(m) for m in MATCHES])
def test_matching_constraints_open_in_both(extra: dict[str, Any], tmp_path: Path) -> None:
    created = {
        **json.loads(json.dumps(BASE_V3)),
        "kvstore": {"driver": "file", "path": f"{tmp_path}/"},
    }
    ts.open(created, create=True, dimension_units=["4nm", None]).result()
    spec = _merge(created, extra)
    assert ts.open(spec).result().shape == (10, 20)
    assert zarrox.open(spec).shape == (10, 20)


def test_mismatch_is_a_spec_mismatch_error(tmp_path: Path) -> None:
    created = {
        **json.loads(json.dumps(BASE_V3)),
        "kvstore": {"driver": "file", "path": f"{tmp_path}/"},
    }
    zarrox.open(created, create=True)
    with pytest.raises(SpecMismatchError, match=r"metadata\.shape: expected \[5, 20\]"):
        zarrox.open({**created, "metadata": {"shape": [5, 20]}})


# -- random specs: the same document as TensorStore, or refused by both ------------------------

_DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def _random_codec(rng: np.random.Generator) -> Any:
    kind = rng.choice(
        ["gzip", "zstd", "blosc", "crc32c", "gzip-level", "zstd-full", "blosc-partial"]
    )
    if kind == "gzip-level":
        return {"name": "gzip", "configuration": {"level": int(rng.integers(0, 10))}}
    if kind == "zstd-full":
        config = {"level": int(rng.integers(-5, 20)), "checksum": bool(rng.integers(0, 2))}
        return {"name": "zstd", "configuration": config}
    if kind == "blosc-partial":
        choices = {
            "cname": ["lz4", "zstd", "blosclz", "zlib", "lz4hc"],
            "clevel": list(range(10)),
            "shuffle": ["noshuffle", "shuffle", "bitshuffle"],
            "blocksize": [0, 256],
        }
        config = {
            k: v[int(rng.integers(0, len(v)))] for k, v in choices.items() if rng.random() < 0.5
        }
        if rng.random() < 0.3 and config.get("shuffle") != "noshuffle":
            config["typesize"] = int(rng.integers(1, 9))
        return {"name": "blosc", "configuration": config}
    return str(kind)


def _random_v3_spec(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    rank = int(rng.integers(0, 4))
    shape = [int(rng.integers(1, 40)) for _ in range(rank)]
    meta: dict[str, Any] = {"data_type": str(rng.choice(_DTYPES + ["bfloat16"]))}
    options: dict[str, Any] = {}
    if rng.random() < 0.7:
        meta["shape"] = shape
    else:
        options["shape"] = shape
    spec: dict[str, Any] = {"driver": "zarr3", "metadata": meta}
    layout: dict[str, Any] = {}
    r = rng.random()
    if r < 0.3 and rank:
        write = [int(rng.integers(1, s + 1)) for s in shape]
        layout = {
            "write_chunk": {"shape": write},
            "read_chunk": {"shape": [max(1, w // int(rng.integers(1, 4))) for w in write]},
        }
    elif r < 0.5 and rank:
        layout = {
            "write_chunk": {"elements": int(rng.integers(1, 200))},
            "read_chunk": {"aspect_ratio": [float(rng.integers(1, 4)) for _ in shape]},
        }
    elif r < 0.6 and rank:
        layout = {"inner_order": [int(p) for p in rng.permutation(rank)]}
    elif r < 0.7 and rank:
        chunks = [int(rng.integers(1, s + 1)) for s in shape]
        meta["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": chunks}}
    codecs = [_random_codec(rng) for _ in range(int(rng.integers(0, 3)))]
    if codecs:
        if rng.random() < 0.5 and "read_chunk" not in layout:
            meta["codecs"] = codecs
        else:
            spec["schema"] = {"codec": {"driver": "zarr3", "codecs": codecs}}
    if layout:
        spec.setdefault("schema", {})["chunk_layout"] = layout
    if rng.random() < 0.3 and rank:
        units = [
            str(rng.choice(["nm", "4 um", "", "2.5s"])) if rng.random() < 0.7 else None
            for _ in shape
        ]
        spec.setdefault("schema", {})["dimension_units"] = units
    if rng.random() < 0.3 and rank:
        meta["dimension_names"] = [
            str(rng.choice(["x", "y", "z", ""])) if rng.random() < 0.7 else None for _ in shape
        ]
    if rng.random() < 0.3:
        cke: dict[str, Any] = {"name": str(rng.choice(["default", "v2"]))}
        if rng.random() < 0.5:
            cke["configuration"] = {"separator": str(rng.choice(["/", "."]))}
        meta["chunk_key_encoding"] = cke
    return spec, options


def _random_v2_spec(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    rank = int(rng.integers(0, 4))
    shape = [int(rng.integers(1, 40)) for _ in range(rank)]
    meta: dict[str, Any] = {}
    options: dict[str, Any] = {"dtype": str(rng.choice(_DTYPES)), "shape": shape}
    if rng.random() < 0.5:
        kind = str(rng.choice(["blosc", "zlib", "gzip", "bz2", "zstd", "none"]))
        meta["compressor"] = None if kind == "none" else {"id": kind}
        if kind == "blosc" and rng.random() < 0.5:
            meta["compressor"]["shuffle"] = int(rng.integers(-1, 3))
        if kind in ("zlib", "gzip", "zstd") and rng.random() < 0.5:
            meta["compressor"]["level"] = int(rng.integers(1, 9))
    if rng.random() < 0.3 and rank > 1:  # see test_zarr2_order_f_below_rank_2
        meta["order"] = str(rng.choice(["C", "F"]))
    if rng.random() < 0.3:
        meta["dimension_separator"] = str(rng.choice([".", "/"]))
    if rng.random() < 0.3 and rank:
        meta["chunks"] = [int(rng.integers(1, s + 1)) for s in shape]
    if rng.random() < 0.3:
        options["fill_value"] = True if options["dtype"] == "bool" else int(rng.integers(0, 2))
    spec: dict[str, Any] = {"driver": "zarr", "metadata": meta}
    if rng.random() < 0.3 and rank:
        spec["schema"] = {"chunk_layout": {"inner_order": [int(p) for p in rng.permutation(rank)]}}
    return spec, options


@pytest.mark.parametrize("driver", ["zarr3", "zarr"])
def test_random_specs_like_tensorstore(driver: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(18)
    make = _random_v3_spec if driver == "zarr3" else _random_v2_spec
    name = "zarr.json" if driver == "zarr3" else ".zarray"
    created = 0
    for case in range(150):
        spec, options = make(rng)
        results = []
        for lib in ("zarrox", "tensorstore"):
            root = tmp_path / f"{case}-{lib}"
            full = {
                **json.loads(json.dumps(spec)),
                "kvstore": {"driver": "file", "path": f"{root}/"},
            }
            try:
                if lib == "zarrox":
                    zarrox.open(full, create=True, **options)
                else:
                    _open_ts(full, create=True, **options)
            except (ValueError, TypeError):
                results.append(None)
                continue
            results.append((root / name).read_bytes())
        assert results[0] == results[1], (spec, options, results)
        created += results[0] is not None
    assert created > 100


def test_zarr2_order_f_below_rank_2(tmp_path: Path) -> None:
    """A deliberate difference: for arrays of rank 0 or 1, TensorStore (0.1.x) writes
    ``"order": "C"`` when ``"F"`` is asked for and then refuses its own array; zarrox writes
    the ``"F"`` that was asked for (C and F are the same layout at these ranks)."""
    spec = {"driver": "zarr", "metadata": {"order": "F"}}
    with pytest.raises(ValueError, match="order"):
        ts.open(
            {**spec, "kvstore": f"file://{tmp_path}/ts/"}, create=True, dtype=ts.uint8, shape=[5]
        ).result()
    view = zarrox.open(
        {**spec, "kvstore": f"file://{tmp_path}/zx/"}, create=True, dtype="uint8", shape=[5]
    )
    view[...] = [1, 2, 3, 4, 5]
    assert json.loads((tmp_path / "zx" / ".zarray").read_text())["order"] == "F"
    reread = ts.open({"driver": "zarr", "kvstore": f"file://{tmp_path}/zx/"}).result()
    assert reread.read().result().tolist() == [1, 2, 3, 4, 5]
