"""zarrox.open(spec): spec parsing and its errors, open modes, kvstores, views through index
transforms (against TensorStore's results), resizing with TensorStore's semantics, context
resources and caching options, and Array.spec()."""

from __future__ import annotations

import copy
import inspect
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrox
from zarrox import d
from zarrox._core import CodecChainSpec
from zarrox.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    MetadataError,
    MissingChunkError,
    ReadOnlyError,
    SpecError,
    SpecMismatchError,
    UnsupportedError,
)
from zarrox.storage import resolve_store

ts = pytest.importorskip("tensorstore")


def file_spec(path: Path, **extra: Any) -> dict[str, Any]:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{path}/"}, **extra}


def filled(
    path: Path, shape: tuple[int, ...] = (10, 20), chunks: tuple[int, ...] = (4, 6)
) -> zarrox.ArrayView:
    view = zarrox.open(
        file_spec(path),
        create=True,
        dtype="int32",
        shape=list(shape),
        chunk_layout={"write_chunk": {"shape": list(chunks)}},
    )
    view.write(np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape))
    return view


# -- invalid specs: a SpecError (a ValueError) naming the member ------------------------------

INVALID = [
    ({"driver": "zarr3", "kvstore": "memory://", "foo": 1}, "'foo'"),
    ({"driver": "n5", "kvstore": "memory://"}, "driver"),
    ({"driver": "zarr3"}, "kvstore"),
    ({"driver": "zarr3", "kvstore": {"driver": "nope"}}, "kvstore.driver"),
    ({"driver": "zarr3", "kvstore": "ftp://host/x"}, "kvstore"),
    ({"driver": "zarr3", "kvstore": {"driver": "file", "path": "/x", "bogus": 1}}, "'bogus'"),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"codecs": ["nope"]}},
        "metadata.codecs[0].name",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "metadata": {"codecs": [{"name": "gzip", "configuration": {"level": 12}}]},
        },
        "metadata.codecs[0].configuration.level",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"codecs": ["transpose"]}},
        "metadata.codecs[0].configuration",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "metadata": {"codecs": [{"name": "blosc", "configuration": {"cname": "foo"}}]},
        },
        "metadata.codecs[0].configuration.cname",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "metadata": {"codecs": [{"name": "gzip", "configuration": {"lvl": 1}}]},
        },
        "'lvl'",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"codecs": ["gzip", "bytes"]}},
        "metadata.codecs[1]",
    ),
    ({"driver": "zarr3", "kvstore": "memory://", "metadata": {"shape": [-1]}}, "metadata.shape[0]"),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"fill_value": 3}},
        "metadata.fill_value",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"node_type": "group"}},
        "metadata.node_type",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"zarr_format": 2}},
        "metadata.zarr_format",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "metadata": {"chunk_key_encoding": {"name": "v2", "configuration": {"separator": ":"}}},
        },
        "metadata.chunk_key_encoding.configuration.separator",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "metadata": {"storage_transformers": [{}]}},
        "metadata.storage_transformers",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "metadata": {"shape": [2], "dimension_names": ["a", "b"]},
        },
        "metadata.dimension_names",
    ),
    ({"driver": "zarr3", "kvstore": "memory://", "schema": {"dtype": 5}}, "schema.dtype"),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "schema": {"chunk_layout": {"inner_order": [0, 0]}},
        },
        "schema.chunk_layout.inner_order",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "schema": {"domain": {"shape": [2], "labels": ["a", "b"]}},
        },
        "schema.domain.labels",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "schema": {"dimension_units": ["4nm", 7j]}},
        "schema.dimension_units",
    ),
    (
        {
            "driver": "zarr3",
            "kvstore": "memory://",
            "transform": {"input_shape": [3], "output": [{"input_dimension": 1}]},
        },
        "transform.output[0].input_dimension",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "transform": {"input_shape": [3], "bad": 1}},
        "'bad'",
    ),
    (
        {"driver": "zarr3", "kvstore": "memory://", "recheck_cached_metadata": "never"},
        "recheck_cached_metadata",
    ),
    ({"driver": "zarr", "kvstore": "memory://", "metadata": {"order": "X"}}, "metadata.order"),
    ({"driver": "zarr", "kvstore": "memory://", "metadata": {"dtype": "<x9"}}, "metadata.dtype"),
    ({"driver": "zarr", "kvstore": "memory://", "key_encoding": "-"}, "key_encoding"),
]


@pytest.mark.parametrize("spec,member", INVALID, ids=[m for _, m in INVALID])
def test_invalid_specs_name_the_member(spec: dict[str, Any], member: str) -> None:
    with pytest.raises(SpecError) as info:
        zarrox.Spec(spec)
    assert member in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(SpecError):
        zarrox.open(spec)


def test_tensorstore_rejects_the_same_specs() -> None:
    """TensorStore refuses (at parse or open time) every spec of the table above, except the
    one naming a driver zarrox does not implement (n5)."""
    for spec, _ in INVALID:
        if spec["driver"] not in ("zarr3", "zarr"):
            continue
        with pytest.raises((ValueError, TypeError)):
            ts.open(spec, create=True, dtype=ts.uint8, shape=[2]).result()


def test_invalid_options_name_the_option() -> None:
    with pytest.raises(SpecError, match="option bogus"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://"}, bogus=1)
    with pytest.raises(SpecError, match="dtype"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://", "dtype": "int8"}, dtype="int16")
    with pytest.raises(SpecError, match="delete_existing"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://"}, delete_existing=True)
    with pytest.raises(SpecError, match="assume_metadata"):
        zarrox.open(
            {"driver": "zarr3", "kvstore": "memory://"},
            create=True,
            assume_metadata=True,
            dtype="int8",
            shape=[2],
        )
    with pytest.raises(SpecError, match="path and zarr_format"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://"}, path="a")
    with pytest.raises(SpecError, match="dtype"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://"}, create=True, shape=[3])
    with pytest.raises(SpecError, match="domain"):
        zarrox.open({"driver": "zarr3", "kvstore": "memory://"}, create=True, dtype="int8")


# -- specs as objects, URLs and TensorStore specs -----------------------------------------------


def test_spec_json_is_normalized_like_tensorstore() -> None:
    raw = {
        "driver": "zarr3",
        "kvstore": "file:///tmp/x/",
        "path": "a/b",
        "metadata": {"codecs": ["gzip", {"name": "zstd"}]},
        "schema": {"dimension_units": ["4nm", [3, "s"]]},
    }
    spec = zarrox.Spec(raw).to_json()
    expected = ts.Spec(raw).to_json()
    assert spec["kvstore"] == expected["kvstore"] == {"driver": "file", "path": "/tmp/x/a/b/"}
    assert spec["metadata"]["codecs"] == expected["metadata"]["codecs"]
    assert spec["schema"]["dimension_units"] == expected["schema"]["dimension_units"]
    assert zarrox.Spec(ts.Spec(raw)) == zarrox.Spec(raw)
    assert zarrox.Spec(zarrox.Spec(raw).to_json()) == zarrox.Spec(raw)


@pytest.mark.parametrize(
    "url,kvstore",
    [
        ("memory://a/b", {"driver": "memory", "path": "a/b/"}),
        ("s3://bucket/x/y", {"driver": "s3", "bucket": "bucket", "path": "x/y/"}),
        ("gs://bucket/x/y/", {"driver": "gcs", "bucket": "bucket", "path": "x/y/"}),
        (
            "https://example.com/x/y",
            {"driver": "http", "base_url": "https://example.com", "path": "/x/y/"},
        ),
        (
            "file:///tmp/a.zip|zip:inner",
            {"driver": "zip", "base": {"driver": "file", "path": "/tmp/a.zip"}, "path": "inner/"},
        ),
    ],
)
def test_kvstore_urls_as_tensorstore_reads_them(url: str, kvstore: dict[str, Any]) -> None:
    spec = {"driver": "zarr3", "kvstore": url}
    assert zarrox.Spec(spec).kvstore == kvstore == ts.Spec(spec).to_json()["kvstore"]


def test_spec_urls(tmp_path: Path) -> None:
    view = zarrox.open(f"file://{tmp_path}/|zarr3:a/b", create=True, dtype="uint8", shape=[3])
    view[...] = [1, 2, 3]
    assert (tmp_path / "a" / "b" / "zarr.json").exists()
    assert ts.open(f"file://{tmp_path}/a/b/|zarr3:").result().read().result().tolist() == [1, 2, 3]
    assert zarrox.Spec(f"file://{tmp_path}|zarr2:x").to_json() == {
        "driver": "zarr",
        "kvstore": {"driver": "file", "path": f"{tmp_path}/x/"},
    }


def test_tensorstore_spec_objects_open(tmp_path: Path) -> None:
    t = ts.open(file_spec(tmp_path), create=True, dtype=ts.float32, shape=[4, 5]).result()
    t[1, 2] = 7.5
    view = zarrox.open(t.spec())
    assert view.read()[1, 2] == 7.5
    assert view.spec().to_json()["kvstore"] == t.spec().to_json()["kvstore"]


def test_zarr_python_paths_still_open_as_before(tmp_path: Path) -> None:
    a = zarrox.open(str(tmp_path / "z"), mode="w", shape=(3,), dtype="i4")
    assert isinstance(a, zarrox.Array)


# -- open modes ------------------------------------------------------------------------------------


def test_open_modes(tmp_path: Path) -> None:
    spec = file_spec(tmp_path)
    with pytest.raises(ArrayNotFoundError, match="zarr.json"):
        zarrox.open(spec)
    first = zarrox.open(spec, create=True, dtype="uint16", shape=[4, 4])
    first[...] = 3
    with pytest.raises(ContainsArrayError, match="already exists"):
        zarrox.open(spec, create=True, dtype="uint16", shape=[4, 4])
    again = zarrox.open(spec, open=True, create=True, dtype="uint16", shape=[4, 4])
    assert again.read().sum() == 48
    fresh = zarrox.open(spec, create=True, delete_existing=True, dtype="uint16", shape=[2, 2])
    assert fresh.shape == (2, 2) and fresh.read().sum() == 0
    assert sorted(os.listdir(tmp_path)) == ["zarr.json"]  # the old chunks are gone


def test_read_only_mode(tmp_path: Path) -> None:
    filled(tmp_path)
    view = zarrox.open(file_spec(tmp_path), read=True)
    assert not view.writable and view.mode == "r"
    with pytest.raises(ReadOnlyError):
        view[0, 0] = 1
    assert zarrox.open(file_spec(tmp_path), mode="r").mode == "r"


def test_zarr_modes_map_to_open_modes(tmp_path: Path) -> None:
    spec = file_spec(tmp_path)
    zarrox.open(spec, mode="w-", dtype="int8", shape=[2])
    with pytest.raises(ContainsArrayError):
        zarrox.open(spec, mode="w-", dtype="int8", shape=[2])
    assert zarrox.open(spec, mode="w", dtype="int8", shape=[5]).shape == (5,)


def test_assume_metadata_reads_no_metadata(tmp_path: Path) -> None:
    t = ts.open(file_spec(tmp_path), create=True, dtype=ts.int16, shape=[6, 6]).result()
    t[...] = np.arange(36, dtype=np.int16).reshape(6, 6)
    (tmp_path / "zarr.json").unlink()
    spec = file_spec(tmp_path, metadata={"shape": [6, 6], "data_type": "int16"})
    view = zarrox.open(spec, assume_metadata=True)
    np.testing.assert_array_equal(view.read(), np.arange(36).reshape(6, 6))
    view[0, 0] = 100
    assert not (tmp_path / "zarr.json").exists()  # neither read nor written
    assert ts.open(spec, assume_metadata=True).result()[0, 0].read().result() == 100
    with pytest.raises(ValueError, match="assume_metadata"):
        view.resize(exclusive_max=[8, None])


def test_assume_cached_metadata_resizes_the_stored_metadata(tmp_path: Path) -> None:
    ts.open(file_spec(tmp_path), create=True, dtype=ts.int16, shape=[6, 6]).result()
    spec = file_spec(tmp_path, metadata={"shape": [6, 6], "data_type": "int16"})
    view = zarrox.open(spec, assume_cached_metadata=True)
    view.resize(exclusive_max=[9, None])
    assert json.loads((tmp_path / "zarr.json").read_text())["shape"] == [9, 6]


# -- memory kvstore -------------------------------------------------------------------------------


def test_memory_kvstore_is_fresh_per_open_but_spec_reopens_it() -> None:
    spec = {"driver": "zarr3", "kvstore": "memory://data/a"}
    view = zarrox.open(spec, create=True, dtype="float64", shape=[3])
    view[...] = [1.0, 2.0, 3.0]
    with pytest.raises(ArrayNotFoundError):
        zarrox.open(spec)  # a new context, as in TensorStore: a new memory store
    again = zarrox.open(view.spec())
    assert again.read().tolist() == [1.0, 2.0, 3.0]
    assert view.spec().to_json()["kvstore"] == {"driver": "memory", "path": "data/a/"}
    assert view.array.path == "data/a"


# -- views: TensorStore's indexing, lazily applied ------------------------------------------------


def _pair(tmp_path: Path) -> tuple[zarrox.ArrayView, Any]:
    view = filled(tmp_path / "zx")
    t = ts.open(file_spec(tmp_path / "zx")).result()
    return view, t


VIEW_OPS = [
    ("slice", lambda v, t: (v[2:8], t[2:8])),
    ("strided", lambda v, t: (v[2:8:3, 1:19:4], t[2:8:3, 1:19:4])),
    ("negative-step", lambda v, t: (v[8:2:-3, ::-5], t[8:2:-3, ::-5])),
    ("integer", lambda v, t: (v[5], t[5])),
    ("ellipsis", lambda v, t: (v[..., 3], t[..., 3])),
    ("newaxis", lambda v, t: (v[None, 3:5], t[ts.newaxis, 3:5])),
    (
        "translate_to",
        lambda v, t: (
            v.translate_to[100, 200][103:106, 210],
            t.translate_to[100, 200][103:106, 210],
        ),
    ),
    ("translate_by", lambda v, t: (v.translate_by[-5, 5][-3:0], t.translate_by[-5, 5][-3:0])),
    ("transpose", lambda v, t: (v.T[3:7, 1:4], t.T[3:7, 1:4])),
    ("transpose-flip", lambda v, t: (v.T[::-3, 8:1:-2], t.T[::-3, 8:1:-2])),
    (
        "transpose-newaxis",
        lambda v, t: (v.T[None, 2:19:4, None, 1:9], t.T[ts.newaxis, 2:19:4, ts.newaxis, 1:9]),
    ),
    (
        "label-dim-expr",
        lambda v, t: (
            v.label["y", "x"][d["x"].translate_to[0]][d["x"][4:9]],
            t.label["y", "x"][ts.d["x"].translate_to[0]][ts.d["x"][4:9]],
        ),
    ),
    ("stride", lambda v, t: (v[d[1].stride[3]], t[ts.d[1].stride[3]])),
    ("negative-stride", lambda v, t: (v[d[0].stride[-2]], t[ts.d[0].stride[-2]])),
    ("dim-transpose", lambda v, t: (v[d[1, 0].transpose[0, 1]], t[ts.d[1, 0].transpose[0, 1]])),
    (
        "chained",
        lambda v, t: (
            v[1:9][d[0].translate_by[10]][12:15, ::7],
            t[1:9][ts.d[0].translate_by[10]][12:15, ::7],
        ),
    ),
    ("select-then-index", lambda v, t: (v[d[1][3]][2:4], t[ts.d[1][3]][2:4])),
]


@pytest.mark.parametrize("op", VIEW_OPS, ids=[o[0] for o in VIEW_OPS])
def test_views_read_as_tensorstore(op: Any, tmp_path: Path) -> None:
    view, t = _pair(tmp_path)
    zv, tv = op[1](view, t)
    assert zv.domain.to_json() == json.loads(json.dumps(tv.domain.to_json()))
    np.testing.assert_array_equal(zv.read(), tv.read().result())
    # the transform of the view's spec is TensorStore's
    assert zv.spec().to_json()["transform"] == tv.spec().to_json()["transform"]


@pytest.mark.parametrize("op", VIEW_OPS, ids=[o[0] for o in VIEW_OPS])
def test_views_write_as_tensorstore(op: Any, tmp_path: Path) -> None:
    view, _ = _pair(tmp_path)
    ref = ts.open(file_spec(tmp_path / "ref"), create=True, dtype=ts.int32, shape=[10, 20]).result()
    ref[...] = np.arange(200, dtype=np.int32).reshape(10, 20)
    zv, tv = op[1](view, ref)
    values = (np.arange(int(np.prod(zv.shape)), dtype=np.int32) * -1 - 1).reshape(zv.shape)
    zv.write(values)
    tv.write(values).result()
    np.testing.assert_array_equal(view.read(), ref.read().result())


@pytest.mark.parametrize("layout", ["fortran", "transposed", "reversed", "broadcast"])
@pytest.mark.parametrize("op", ["transpose", "transpose-flip", "transpose-newaxis", "strided"])
def test_views_write_values_as_they_lie(op: str, layout: str, tmp_path: Path) -> None:
    """A value in any memory layout writes what TensorStore writes (the core takes a value
    whose memory is one block in some dimension order as it lies, others in C order)."""
    view, _ = _pair(tmp_path)
    ref = ts.open(file_spec(tmp_path / "ref"), create=True, dtype=ts.int32, shape=[10, 20]).result()
    ref[...] = np.arange(200, dtype=np.int32).reshape(10, 20)
    zv, tv = dict(VIEW_OPS)[op](view, ref)
    values = (np.arange(int(np.prod(zv.shape)), dtype=np.int32) * -1 - 1).reshape(zv.shape)
    if layout == "fortran":
        values = np.asfortranarray(values)
    elif layout == "transposed":
        values = np.ascontiguousarray(values.T).T
    elif layout == "reversed":
        values = np.ascontiguousarray(values[::-1])[::-1]
    else:
        values = np.broadcast_to(values[..., :1], values.shape)
    zv.write(values)
    tv.write(values).result()
    np.testing.assert_array_equal(view.read(), ref.read().result())


def test_views_out_of_bounds_fail_like_tensorstore(tmp_path: Path) -> None:
    view, t = _pair(tmp_path)
    with pytest.raises(IndexError):
        view[-1]  # TensorStore does not wrap negative indices
    with pytest.raises(IndexError):
        t[-1]
    beyond = view[0:30]  # the upper bound is implicit: allowed until read
    assert beyond.shape == (30, 20) == t[0:30].shape
    with pytest.raises(IndexError, match="array dimension 0"):
        beyond.read()
    with pytest.raises(ValueError):
        t[0:30].read().result()
    with pytest.raises(IndexError):
        view[2:5][0:6]  # explicit bounds are checked at once


def test_view_reads_and_writes_only_the_selected_chunks(tmp_path: Path) -> None:
    view = filled(tmp_path, shape=(12, 12), chunks=(4, 4))
    # corrupt every chunk but the one at grid (1, 2): reading elsewhere would fail
    for key in (tmp_path / "c").rglob("*"):
        if key.is_file() and key.relative_to(tmp_path / "c").parts != ("1", "2"):
            key.write_bytes(b"garbage")
    sub = view[5:7, 9:11]
    np.testing.assert_array_equal(sub.read(), np.arange(144).reshape(12, 12)[5:7, 9:11])
    sub.write(-1)
    stored = [
        k.relative_to(tmp_path / "c").parts for k in (tmp_path / "c").rglob("*") if k.is_file()
    ]
    assert ("1", "2") in stored
    assert (tmp_path / "c" / "0" / "0").read_bytes() == b"garbage"  # untouched


def test_transform_in_spec_from_tensorstore(tmp_path: Path) -> None:
    view, t = _pair(tmp_path)
    tv = t[2:8:3].translate_to[5, 100]
    opened = zarrox.open(tv.spec().to_json())
    assert opened.domain.to_json() == json.loads(json.dumps(tv.domain.to_json()))
    np.testing.assert_array_equal(opened.read(), tv.read().result())
    back = ts.open(view[1:4, ::-2].spec().to_json()).result()
    np.testing.assert_array_equal(back.read().result(), view[1:4, ::-2].read())


def test_index_array_transforms(tmp_path: Path) -> None:
    view, t = _pair(tmp_path)
    spec = file_spec(
        tmp_path / "zx",
        transform={
            "input_shape": [3, 2],
            "output": [
                {"index_array": [[1], [5], [9]]},
                {"input_dimension": 1, "offset": 4, "stride": 2},
            ],
        },
    )
    np.testing.assert_array_equal(zarrox.open(spec).read(), ts.open(spec).result().read().result())
    zarrox.open(spec).write([[0, 1]])
    np.testing.assert_array_equal(view.read(), t.read().result())
    assert view.read()[5, 6] == 1


INDEX_ARRAY_OPS = [
    ("reversed", lambda v, d: v[::-1]),
    ("one", lambda v, d: v[1]),
    ("strided-translated", lambda v, d: v.translate_to[5, 10][5:8:2, 11]),
    ("transposed", lambda v, d: v.T[1:, ::-1]),
    ("dim-expr-ellipsis", lambda v, d: v[d[0, 1][..., 1]][::2]),
    ("dim-expr-ellipsis-first", lambda v, d: v[d[0, 1][1, ...]]),
    ("dim-expr-transpose", lambda v, d: v[d[1].transpose[0]][d[0].stride[-1]]),
]


@pytest.mark.parametrize("op", INDEX_ARRAY_OPS, ids=[o[0] for o in INDEX_ARRAY_OPS])
def test_operations_on_index_array_views_as_tensorstore(op: Any, tmp_path: Path) -> None:
    """Indexing a view whose transform has an index array composes the array (gathers its
    values at the new domain's positions; one value left is a constant), as TensorStore
    does: the domain, the transform and the values read are TensorStore's."""
    _pair(tmp_path)
    transform = {
        "input_inclusive_min": [0, 0],
        "input_shape": [3, 2],
        "output": [
            {"index_array": [[1], [5], [9]], "offset": -1},
            {"input_dimension": 1, "offset": 4, "stride": 2},
        ],
    }
    spec = file_spec(tmp_path / "zx", transform=transform)
    ours, theirs = op[1](zarrox.open(spec), d), op[1](ts.open(spec).result(), ts.d)
    assert ours.domain.to_json() == json.loads(json.dumps(theirs.domain.to_json()))
    assert ours.spec().to_json()["transform"] == theirs.spec().to_json()["transform"]
    np.testing.assert_array_equal(ours.read(), theirs.read().result())


def test_domains_and_transforms_copy_and_pickle(tmp_path: Path) -> None:
    view, _ = _pair(tmp_path)
    moved = view.translate_to[3, 4][d[1].label["x"]]
    for value in (moved.domain, moved.transform, moved.domain[0], moved.transform.output[1]):
        assert copy.deepcopy(value) == value
        if not isinstance(value, zarrox._core.OutputMap):
            assert pickle.loads(pickle.dumps(value)) == value
    assert moved.domain["x"].inclusive_min == 4 and moved.domain[-1] == moved.domain["x"]
    with pytest.raises(SpecError, match=r"transform.output\[0\].index_array: dimension 0 has"):
        zarrox._core.IndexTransform.from_json(
            {"input_shape": [2], "output": [{"index_array": [1, 2, 3]}]}
        )


def test_chunk_layouts_copy_pickle_and_write_tensorstore_json() -> None:
    doc = {
        "grid_origin_soft_constraint": [1, 2],
        "inner_order": [1, 0],
        "chunk": {"aspect_ratio": [1, 2]},
        "write_chunk": {"shape": [-1, 8], "elements": 64},
    }
    layout = zarrox._core.ChunkLayout.from_json(doc)
    assert layout.to_json() == ts.ChunkLayout(doc).to_json()
    assert zarrox._core.ChunkLayout(3).to_json() == {"rank": 3}
    values = (layout, layout.write_chunk, zarrox._core.ChunkLayout(2, write_chunk_shape=[4, 4]))
    for value in values:
        assert copy.deepcopy(value) is value
        assert pickle.loads(pickle.dumps(value)) == value
    assert layout.write_chunk.hard_shape() == [0, 8]  # -1 is a soft constraint
    with pytest.raises(SpecError, match=r"chunk_layout.write_chunk.shape: hard constraint 4"):
        layout.merge(zarrox._core.ChunkLayout.from_json({"write_chunk": {"shape": [3, 4]}}))


@pytest.mark.parametrize(
    "transform",
    [
        # a diagonal: one input dimension for both array dimensions
        {
            "input_shape": [6],
            "output": [{"input_dimension": 0}, {"input_dimension": 0, "offset": 2}],
        },
        # a broadcast input dimension (no array dimension follows it), transposed
        {"input_shape": [3, 4], "output": [{"input_dimension": 1, "offset": 5}, {"offset": 7}]},
        # an index array, strided and offset, beside a reversed dimension
        {
            "input_shape": [2, 5],
            "output": [
                {"index_array": [[1], [3]], "offset": 1, "stride": 2},
                {"input_dimension": 1, "offset": 12, "stride": -3},
            ],
        },
    ],
    ids=["diagonal", "broadcast", "index-array-and-flip"],
)
@pytest.mark.parametrize("layout", ["C", "fortran"])
def test_general_transforms_as_tensorstore(
    transform: dict[str, Any], layout: str, tmp_path: Path
) -> None:
    """Transforms the core reads and writes as points (see ``_core.IndexTransform.selection``):
    zarrox reads what TensorStore reads, and writes what TensorStore writes into a copy, a
    Fortran-ordered value too (its points listed in its memory's order)."""
    view, t = _pair(tmp_path)
    ref_spec = file_spec(tmp_path / "ref")
    ref = ts.open(ref_spec, create=True, dtype=ts.int32, shape=[10, 20]).result()
    ref[...] = np.arange(200, dtype=np.int32).reshape(10, 20)
    ours = zarrox.open(file_spec(tmp_path / "zx", transform=transform))
    theirs = ts.open({**ref_spec, "transform": transform}).result()
    np.testing.assert_array_equal(ours.read(), theirs.read().result())
    values = -np.arange(1, int(np.prod(ours.shape)) + 1, dtype=np.int32).reshape(ours.shape)
    if transform["input_shape"] == [3, 4]:
        values = values[:1].repeat(3, axis=0)  # broadcast positions take one value
    if layout == "fortran":
        values = np.asfortranarray(values)
    ours.write(values)
    theirs.write(values).result()
    np.testing.assert_array_equal(view.read(), ref.read().result())
    assert (view.read() < 0).any()


def test_rank_zero_views(tmp_path: Path) -> None:
    view = zarrox.open(file_spec(tmp_path), create=True, dtype="float32", shape=[])
    view.write(2.5)
    assert view.read().shape == () and float(view.read()) == 2.5
    assert float(ts.open(file_spec(tmp_path)).result().read().result()) == 2.5
    assert view[None].read().tolist() == [2.5]


# -- resize, as TensorStore resizes --------------------------------------------------------------


def _chunk_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "c").rglob("*") if p.is_file())


def test_resize_matches_tensorstore(tmp_path: Path) -> None:
    zx = filled(tmp_path / "zx", shape=(10, 20), chunks=(4, 4))
    t = ts.open(
        file_spec(tmp_path / "ts"),
        create=True,
        dtype=ts.int32,
        shape=[10, 20],
        chunk_layout=ts.ChunkLayout(write_chunk_shape=[4, 4]),
    ).result()
    t[...] = np.arange(200, dtype=np.int32).reshape(10, 20)
    steps = [
        {"exclusive_max": [12, None]},
        {"exclusive_max": [5, None]},
        {"exclusive_max": [9, 30]},
        {"exclusive_max": [2, None], "resize_metadata_only": True},
        {"exclusive_max": [9, None], "resize_metadata_only": True},
    ]
    for step in steps:
        zx = zx.resize(**step)
        t = t.resize(**step).result()
        assert zx.domain.to_json() == json.loads(json.dumps(t.domain.to_json()))
        assert _chunk_files(tmp_path / "zx") == _chunk_files(tmp_path / "ts")
        np.testing.assert_array_equal(zx.read(), t.read().result())
        zx_doc = json.loads((tmp_path / "zx" / "zarr.json").read_text())
        assert zx_doc == json.loads((tmp_path / "ts" / "zarr.json").read_text())


def test_resize_errors_match_tensorstore(tmp_path: Path) -> None:
    view = filled(tmp_path)
    t = ts.open(file_spec(tmp_path)).result()
    cases = [
        ({"exclusive_max": [5, None], "expand_only": True}, "expand_only"),
        ({"exclusive_max": [30, None], "shrink_only": True}, "shrink_only"),
        ({"inclusive_min": [1, None]}, "lower bound"),
        ({"exclusive_max": [7]}, "rank 2"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            view.resize(**kwargs)
        with pytest.raises(ValueError):
            t.resize(**kwargs).result()
    with pytest.raises(ValueError, match="explicit upper bound"):
        view[2:5].resize(exclusive_max=[8, None])
    with pytest.raises(ValueError, match="non-unit stride"):
        view[d[0].stride[2]].resize(exclusive_max=[8, None])
    translated = view.translate_by[10, 0].resize(exclusive_max=[25, None])
    assert translated.domain.exclusive_max == (25, 20)
    assert view.domain.exclusive_max == (10, 20)  # views are immutable; the array grew
    assert zarrox.open(file_spec(tmp_path)).shape == (15, 20)
    narrowed = view.resize(exclusive_max=[None, 7], resize_tied_bounds=True)
    assert narrowed.shape == (10, 7)  # this view's first bound stays as it was opened
    assert zarrox.open(file_spec(tmp_path)).shape == (15, 7)


# -- context resources and caching options ---------------------------------------------------------


def test_data_copy_concurrency_sets_threads_for_each_operation(
    tmp_path: Path, monkeypatch: Any
) -> None:
    filled(tmp_path)
    seen: list[Any] = []
    real = zarrox.config.set

    def record(values: Any) -> Any:
        seen.append(dict(values))
        return real(values)

    monkeypatch.setattr(zarrox.config, "set", record)
    spec = file_spec(
        tmp_path, data_copy_concurrency={"limit": 2}, cache_pool={"total_bytes_limit": 10**6}
    )
    view = zarrox.open(spec)
    view.read()
    view[0, 0] = 5
    # The threads hold for each read and write; the cache pool is the open's own (the
    # process's cache configuration is left alone).
    scoped = {"threading.max_workers": 2}
    assert seen == [scoped, scoped]
    assert zarrox.config["threading.max_workers"] is None  # restored
    assert zarrox.config["cache.bytes"] == 0
    assert view.array.info.chunk_cache["limit"] == 10**6
    seen.clear()
    ref = file_spec(
        tmp_path,
        data_copy_concurrency="data_copy_concurrency#a",
        context={"data_copy_concurrency#a": {"limit": 3}},
    )
    zarrox.open(ref).read()
    assert seen == [{"threading.max_workers": 3}]
    seen.clear()
    zarrox.open(file_spec(tmp_path, data_copy_concurrency={"limit": "shared"})).read()
    assert seen == []


def test_recheck_cached_metadata(tmp_path: Path) -> None:
    filled(tmp_path)
    fresh = zarrox.open(file_spec(tmp_path, recheck_cached_metadata=True))
    at_open = zarrox.open(file_spec(tmp_path))
    ts.open(file_spec(tmp_path)).result().resize(exclusive_max=[12, None]).result()
    assert fresh.read().shape == (12, 20)  # re-read before the read
    assert at_open.read().shape == (10, 20)  # "open": the metadata of the open
    ts.open(
        file_spec(tmp_path), create=True, delete_existing=True, dtype=ts.float32, shape=[2]
    ).result()
    with pytest.raises(SpecMismatchError, match="changed incompatibly"):
        fresh.read()


def test_store_data_equal_to_fill_value_and_fill_missing_data_reads(tmp_path: Path) -> None:
    spec = file_spec(tmp_path, store_data_equal_to_fill_value=True)
    view = zarrox.open(
        spec, create=True, dtype="uint8", shape=[8], chunk_layout={"write_chunk": {"shape": [4]}}
    )
    view[0:4] = 0  # equal to the fill value, stored anyway
    assert (tmp_path / "c" / "0").exists()
    strict = zarrox.open(file_spec(tmp_path, fill_missing_data_reads=False))
    assert strict[0:4].read().tolist() == [0, 0, 0, 0]
    with pytest.raises(MissingChunkError, match="'c/1'"):
        strict[2:6].read()
    t = ts.open(file_spec(tmp_path, fill_missing_data_reads=False)).result()
    with pytest.raises(ValueError):
        t[2:6].read().result()


# -- Array.spec() ----------------------------------------------------------------------------------


def test_array_spec_of_zarr_python_arrays(tmp_path: Path) -> None:
    z3 = zarr.create_array(
        str(tmp_path / "g3"),
        name="a/b",
        shape=(6, 7),
        chunks=(2, 3),
        dtype="f4",
        dimension_names=["y", "x"],
        compressors=[{"name": "zstd", "configuration": {"level": 3}}],
    )
    z3[...] = np.arange(42).reshape(6, 7)
    z2 = zarr.create_array(
        str(tmp_path / "g2"), shape=(5,), chunks=(2,), dtype="<i8", zarr_format=2
    )
    z2[...] = np.arange(5)
    for root, path, driver in ((tmp_path / "g3", "a/b", "zarr3"), (tmp_path / "g2", None, "zarr")):
        array = zarrox.open_array(str(root), path=path)
        spec = array.spec()
        assert spec.driver == driver
        assert spec.to_json()["kvstore"]["path"] == f"{root}/" + (f"{path}/" if path else "")
        np.testing.assert_array_equal(zarrox.open(spec).read(), array[...])
        np.testing.assert_array_equal(ts.open(spec.to_json()).result().read().result(), array[...])
    labels = zarrox.open_array(str(tmp_path / "g3"), path="a/b").spec().to_json()["transform"]
    assert labels["input_labels"] == ["y", "x"]
    minimal = zarrox.open_array(str(tmp_path / "g3"), path="a/b").spec(minimal_spec=True).to_json()
    assert "metadata" not in minimal


def test_view_schema_like_tensorstore(tmp_path: Path) -> None:
    spec = file_spec(
        tmp_path,
        metadata={"shape": [100, 100], "data_type": "int16", "dimension_names": ["y", "x"]},
        schema={
            "chunk_layout": {"read_chunk": {"shape": [10, 10]}, "write_chunk": {"shape": [50, 50]}}
        },
    )
    view = zarrox.open(spec, create=True, dimension_units=["4nm", None])
    t = ts.open(file_spec(tmp_path)).result()
    assert view.schema == json.loads(json.dumps(t.schema.to_json()))
    assert view.T.schema == json.loads(json.dumps(t.T.schema.to_json()))
    assert view.dimension_units == [[4.0, "nm"], None]


# -- kvstores backed by the store API of issue 15 ------------------------------------------------

_HAS_STORAGE_OPTIONS = "storage_options" in inspect.signature(resolve_store).parameters
_HAS_ZIP = hasattr(zarrox.storage, "ZipStore")
_HAS_OBJECT_STORE = hasattr(zarrox.storage, "ObjectStore") and _HAS_STORAGE_OPTIONS


@pytest.mark.skipif(
    not _HAS_ZIP, reason="zarrox.storage has no ZipStore yet (issue 15's zip store is not on main)"
)
def test_zip_kvstore(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    view = zarrox.open(f"file://{archive}|zip:inner|zarr3:", create=True, dtype="int16", shape=[4])
    view[...] = [1, 2, 3, 4]
    assert view.spec().to_json()["kvstore"] == {
        "driver": "zip",
        "base": {"driver": "file", "path": str(archive)},
        "path": "inner/",
    }
    close = getattr(view.array.store, "close", None)
    if callable(close):
        close()
    reread = ts.open({"driver": "zarr3", "kvstore": f"file://{archive}|zip:inner"}).result()
    assert reread.read().result().tolist() == [1, 2, 3, 4]
    assert zarrox.open(f"file://{archive}|zip:inner|zarr3:", read=True).read().tolist() == [
        1,
        2,
        3,
        4,
    ]


@pytest.mark.skipif(
    not _HAS_OBJECT_STORE,
    reason="zarrox.storage has no ObjectStore with storage_options yet (issue 15 is not on main)",
)
@pytest.mark.parametrize(
    "kvstore,url_part",
    [
        (
            {
                "driver": "s3",
                "bucket": "bucket",
                "path": "prefix/",
                "endpoint": "http://localhost:9",
                "aws_region": "us-east-1",
                "aws_credentials": {"type": "anonymous"},
            },
            "bucket/prefix",
        ),
        ("gs://bucket/prefix/", "bucket/prefix"),
        ("https://example.com/data.zarr/", "example.com/data.zarr"),
    ],
)
def test_object_store_kvstores(kvstore: Any, url_part: str) -> None:
    from zarrox.tensorstore_spec.kvstore import kvstore_of, open_kvstore, parse_kvstore

    parsed = parse_kvstore(kvstore)
    store, path = open_kvstore(parsed)
    assert path == "" and url_part in store.url
    # the store's URL gives back the kvstore's driver and path
    back = kvstore_of(store, "").to_json()
    assert back["driver"] == parsed.driver and back["path"].strip("/") == parsed.path.strip("/")


@pytest.mark.skipif(_HAS_OBJECT_STORE, reason="object stores are available")
def test_cloud_kvstores_fail_clearly_until_their_stores_exist() -> None:
    with pytest.raises(UnsupportedError, match="s3"):
        zarrox.open({"driver": "zarr3", "kvstore": "s3://bucket/prefix/"})


# -- schema constraints with a transform: JSON in the array's space, options in the view's -----


def test_schema_with_a_transform_as_tensorstore(tmp_path: Path) -> None:
    base = file_spec(tmp_path)
    t = ts.open(
        base,
        create=True,
        dtype=ts.int32,
        shape=[10, 20],
        chunk_layout=ts.ChunkLayout(write_chunk_shape=[4, 6]),
        dimension_units=["nm", "s"],
    ).result()
    transform = t.T.translate_by[3, 0].spec().to_json()["transform"]
    spec = {**base, "transform": transform}
    cases: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
        ({"schema": {"chunk_layout": {"write_chunk": {"shape": [4, 6]}}}}, {}, True),
        ({"schema": {"chunk_layout": {"write_chunk": {"shape": [6, 4]}}}}, {}, False),
        ({}, {"chunk_layout": {"write_chunk": {"shape": [6, 4]}}}, True),
        ({}, {"chunk_layout": {"write_chunk": {"shape": [4, 6]}}}, False),
        ({"schema": {"dimension_units": ["nm", "s"]}}, {}, True),
        ({"schema": {"dimension_units": ["s", "nm"]}}, {}, False),
        ({}, {"dimension_units": ["s", "nm"]}, True),
        ({}, {"dimension_units": ["nm", "s"]}, False),
        ({"schema": {"domain": {"shape": [10, 20]}}}, {}, True),
        ({"schema": {"domain": {"shape": [20, 10]}}}, {}, False),
        ({"rank": 2}, {"rank": 2}, True),
    ]
    for extra, options, opens in cases:
        ts_options = dict(options)
        if "chunk_layout" in ts_options:
            ts_options["chunk_layout"] = ts.ChunkLayout(ts_options["chunk_layout"])
        if opens:
            assert zarrox.open({**spec, **extra}, **options).domain == zarrox.open(spec).domain
            ts.open({**spec, **extra}, **ts_options).result()
        else:
            with pytest.raises(SpecError):
                zarrox.open({**spec, **extra}, **options)
            with pytest.raises(ValueError):
                ts.open({**spec, **extra}, **ts_options).result()


def test_zarr2_resize_matches_tensorstore(tmp_path: Path) -> None:
    spec = {"driver": "zarr", "metadata": {"chunks": [3, 3]}}
    zx = zarrox.open(
        {**spec, "kvstore": f"file://{tmp_path}/zx/"}, create=True, dtype="int16", shape=[7, 7]
    )
    t = ts.open(
        {**spec, "kvstore": f"file://{tmp_path}/ts/"}, create=True, dtype=ts.int16, shape=[7, 7]
    ).result()
    values = np.arange(49, dtype=np.int16).reshape(7, 7)
    zx.write(values)
    t.write(values).result()
    for step in ({"exclusive_max": [4, None]}, {"exclusive_max": [9, 8]}):
        zx = zx.resize(**step)
        t = t.resize(**step).result()
        assert sorted(os.listdir(tmp_path / "zx")) == sorted(os.listdir(tmp_path / "ts"))
        assert (tmp_path / "zx" / ".zarray").read_bytes() == (
            tmp_path / "ts" / ".zarray"
        ).read_bytes()
        np.testing.assert_array_equal(zx.read(), t.read().result())


def test_spec_properties_and_update() -> None:
    spec = zarrox.Spec({"driver": "zarr3", "kvstore": "memory://", "dtype": "uint16", "rank": 2})
    assert spec.driver == "zarr3" and spec.rank == 2 and spec.dtype == np.dtype("uint16")
    assert spec.kvstore == {"driver": "memory"}
    updated = spec.update(shape=[3, 4], create=True)
    assert updated.domain is not None and updated.domain.shape == (3, 4)
    assert updated.open_mode == {"create": True}
    assert spec.domain is None  # specs are immutable
    view = zarrox.open(updated)
    assert view.shape == (3, 4) and view.dtype == np.dtype("uint16")
    assert "zarrox.ArrayView" in repr(view) and "Spec(" in repr(spec)


def test_kvstore_option_replaces_the_spec_kvstore(tmp_path: Path) -> None:
    view = zarrox.open(
        {"driver": "zarr3", "kvstore": "memory://"},
        kvstore=f"file://{tmp_path}/k/",
        create=True,
        dtype="uint8",
        shape=[2],
    )
    view[...] = 9
    assert ts.open(f"file://{tmp_path}/k/|zarr3:").result().read().result().tolist() == [9, 9]


def test_kvstores_map_to_resolve_store_urls_and_options(monkeypatch: Any) -> None:
    """What each kvstore asks zarrox.storage.resolve_store for (the URL and the storage
    options of STORE_API), checked with a stand-in until the object and zip stores land."""
    from zarrox.tensorstore_spec import kvstore as kv

    calls: list[tuple[str, Any]] = []

    def fake_resolve(store: Any, *, storage_options: Any = None, mode: str = "a") -> Any:
        calls.append((store, storage_options))
        return zarrox.MemoryStore()

    monkeypatch.setattr(kv, "resolve_store", fake_resolve)
    cases = [
        (
            {
                "driver": "s3",
                "bucket": "b",
                "path": "p/q/",
                "endpoint": "http://minio:9000",
                "aws_region": "eu-west-1",
                "aws_credentials": {"type": "anonymous"},
            },
            (
                "s3://b/p/q",
                {"endpoint_url": "http://minio:9000", "region": "eu-west-1", "anon": True},
            ),
        ),
        ("s3://b/p/", ("s3://b/p", None)),
        ("gs://b/p/", ("gs://b/p", None)),
        (
            {"driver": "http", "base_url": "https://h.org/a?x=1", "path": "b c"},
            ("https://h.org/a/b%20c?x=1", None),
        ),
        ("file:///tmp/a.zip|zip:inner", ("zip:///tmp/a.zip", None)),
    ]
    for spec, expected in cases:
        calls.clear()
        kv.open_kvstore(kv.parse_kvstore(spec))
        assert calls == [expected]
    for bad, member in (
        ({"driver": "s3", "bucket": "b", "requester_pays": True}, "requester_pays"),
        (
            {"driver": "gcs", "bucket": "b", "gcs_user_project": {"project_id": "x"}},
            "gcs_user_project",
        ),
        ({"driver": "http", "base_url": "https://h", "headers": ["a: b"]}, "headers"),
        ({"driver": "zip", "base": "memory://a.zip"}, "base"),
    ):
        with pytest.raises(UnsupportedError, match=member):
            kv.open_kvstore(kv.parse_kvstore(bad))


def _random_op(rng: np.random.Generator, rank: int) -> tuple[str, Any, Any]:
    """One random index operation, as (description, zarrox form, tensorstore form)."""
    kind = rng.choice(
        ["slice", "int", "translate_by", "translate_to", "stride", "transpose", "newaxis"]
    )
    dim = int(rng.integers(0, rank)) if rank else 0
    if kind == "slice" and rank:
        start, stop = sorted(int(x) for x in rng.integers(-3, 25, 2))
        step = int(rng.choice([1, 2, 3, -1, -2]))
        if step < 0:
            start, stop = stop, start
        sl = slice(start, stop, step)
        return f"d[{dim}][{sl}]", d[dim][sl], ts.d[dim][sl]
    if kind == "int" and rank:
        i = int(rng.integers(-2, 22))
        return f"d[{dim}][{i}]", d[dim][i], ts.d[dim][i]
    if kind == "translate_by" and rank:
        k = int(rng.integers(-50, 50))
        return f"d[{dim}].translate_by[{k}]", d[dim].translate_by[k], ts.d[dim].translate_by[k]
    if kind == "translate_to" and rank:
        k = int(rng.integers(-50, 50))
        return f"d[{dim}].translate_to[{k}]", d[dim].translate_to[k], ts.d[dim].translate_to[k]
    if kind == "stride" and rank:
        s = int(rng.choice([2, 3, -1, -2]))
        return f"d[{dim}].stride[{s}]", d[dim].stride[s], ts.d[dim].stride[s]
    if kind == "transpose" and rank > 1:
        perm = [int(p) for p in rng.permutation(rank)]
        return f"d[:].transpose[{perm}]", d[:].transpose[perm], ts.d[:].transpose[perm]
    return "[None]", None, ts.newaxis


def test_random_index_chains_match_tensorstore(tmp_path: Path) -> None:
    view, t = _pair(tmp_path)
    rng = np.random.default_rng(18)
    checked = 0
    for case in range(300):
        zv, tv, steps = view, t, []
        for _ in range(int(rng.integers(1, 4))):
            text, zop, top = _random_op(rng, zv.rank)
            steps.append(text)
            try:
                tv = tv[top]
            except (IndexError, ValueError):
                with pytest.raises((IndexError, ValueError)):
                    zv[zop]
                break
            zv = zv[zop]
            assert zv.domain.to_json() == json.loads(json.dumps(tv.domain.to_json())), steps
        else:
            try:
                expected = tv.read().result()
            except ValueError:
                with pytest.raises(IndexError):
                    zv.read()
                continue
            np.testing.assert_array_equal(zv.read(), expected, err_msg=str(steps))
            values = np.full(zv.shape, -case, dtype=np.int32)
            zv.write(values)
            tv.write(values).result()
            np.testing.assert_array_equal(view.read(), t.read().result(), err_msg=str(steps))
            checked += 1
    assert checked > 100


_T = {"name": "transpose", "configuration": {"order": [0]}}


@pytest.mark.parametrize(
    ("codecs", "error"),
    [
        (["gzip", _T], r"codecs\[1\]: the array -> array codec 'transpose' must come before"),
        (["bytes", "gzip", _T], r"codecs\[2\]: the array -> array codec 'transpose' must come"),
        (["gzip", "bytes"], r"codecs\[1\]: the array -> bytes codec 'bytes' must come before"),
        (["bytes", "gzip", "bytes"], r"codecs\[2\]: a second array -> bytes codec 'bytes'"),
        (["gzip", "bytes", "bytes"], r"codecs\[2\]: a second array -> bytes codec 'bytes'"),
    ],
)
def test_partial_codec_chain_order(codecs: list[Any], error: str) -> None:
    """A ``metadata.codecs`` chain is ordered by the core's rule (the one zarr.json's codecs
    follow), its array -> bytes codec optional."""
    with pytest.raises(SpecError, match=error):
        CodecChainSpec.from_json(codecs, "metadata.codecs")
    # without the misplaced codec a partial chain is fine
    chain = CodecChainSpec.from_json([_T, "gzip"], "metadata.codecs")
    assert chain.to_json() == [_T, {"name": "gzip"}]
    with pytest.raises(SpecError, match="missing the array -> bytes codec"):
        CodecChainSpec.from_json([_T, "gzip"], "metadata.codecs", complete=True)


def test_partial_codec_chains_are_values() -> None:
    """A chain (the core's ``CodecChainSpec``) compares, copies and pickles by its JSON; a
    constraint that does not merge is a SpecMismatchError naming the codec."""
    chain = CodecChainSpec.from_json(["bytes", {"name": "gzip", "configuration": {"level": 1}}])
    assert pickle.loads(pickle.dumps(chain)) == chain == copy.deepcopy(chain)
    assert CodecChainSpec() == CodecChainSpec.from_json([]) != chain
    other = CodecChainSpec.from_json(["gzip"])
    assert chain.merge(other, "codecs", strict=True) == chain
    with pytest.raises(SpecMismatchError, match=r'^codecs\[0\]: .*incompatible "level": 1 vs 2'):
        chain.merge(
            CodecChainSpec.from_json(["bytes", {"name": "gzip", "configuration": {"level": 2}}]),
            "codecs",
            strict=True,
        )
    assert CodecChainSpec.from_schema_codec(None) is None
    assert CodecChainSpec.from_schema_codec({"driver": "zarr3"}) is None
    with pytest.raises(SpecError, match=r"schema\.codec\.driver: expected \"zarr3\""):
        CodecChainSpec.from_schema_codec({"driver": "zarr"})


def test_stored_zarr_json_is_read_by_the_v3_model(tmp_path: Path) -> None:
    """The stored ``zarr.json`` an opened spec is checked against is read as zarrox reads
    it (ArrayMetadataV3): its dimension units come out of the attributes, its faults are
    the model's."""
    zarrox.create_array(
        tmp_path / "a",
        shape=(4, 6),
        chunks=(2, 3),
        dtype="int16",
        fill_value=7,
        attributes={"dimension_units": ["4 nm", None], "title": "t"},
        dimension_names=["y", "x"],
    )
    view = zarrox.open(file_spec(tmp_path / "a", metadata={"attributes": {"title": "t"}}))
    schema = view.schema
    assert schema["dimension_units"] == [[4.0, "nm"], None]
    assert schema["fill_value"] == 7
    assert schema["domain"]["labels"] == ["y", "x"]
    with pytest.raises(SpecMismatchError, match=r"metadata\.attributes\.title: expected"):
        zarrox.open(file_spec(tmp_path / "a", metadata={"attributes": {"title": "u"}}))
    path = tmp_path / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    del doc["fill_value"]
    path.write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match="missing member 'fill_value'"):
        zarrox.open(file_spec(tmp_path / "a"))


def test_stored_zarray_is_read_by_the_v2_model(tmp_path: Path) -> None:
    """The stored ``.zarray`` an opened spec is checked against is read as zarrox reads it
    (ArrayMetadataV2): a fault is the model's, named by the document."""
    zarrox.create_array(tmp_path / "a", shape=(4,), chunks=(2,), dtype="<i2", zarr_format=2)
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": f"{tmp_path / 'a'}/"}}
    with pytest.raises(SpecMismatchError, match=r"metadata\.chunks: expected \[3\]"):
        zarrox.open({**spec, "metadata": {"chunks": [3]}})
    path = tmp_path / "a" / ".zarray"
    doc = json.loads(path.read_text())
    doc["order"] = "K"
    path.write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=r'\.zarray at .*order: must be "C" or "F"'):
        zarrox.open(spec)


def test_stored_rectilinear_grid_is_unsupported(tmp_path: Path) -> None:
    """A valid array TensorStore's zarr3 driver cannot describe is unsupported, not
    malformed."""
    shapes = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[1, 3]]}}
    zarrox.create_array(tmp_path / "a", shape=(4,), chunks=(2,), dtype="<i2")
    path = tmp_path / "a" / "zarr.json"
    doc = json.loads(path.read_text())
    doc["chunk_grid"] = shapes
    path.write_text(json.dumps(doc))
    assert zarrox.open_array(tmp_path / "a").metadata.rectilinear is not None
    with pytest.raises(UnsupportedError, match="rectilinear chunk grid"):
        zarrox.open(file_spec(tmp_path / "a"))
