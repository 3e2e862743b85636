"""Rectilinear chunk grids (chunk edges that vary along a dimension) in zarrox's own API.

The fixtures under ``fixtures/rectilinear/`` were written by zarr-python 3.4.2
(``make_rectilinear_fixtures.py``): each array is read and compared with the values saved
beside it, every selection mode is checked against numpy on them, and arrays rebuilt with
zarrox from the same ``create_array`` arguments must write the same ``zarr.json`` and the same
chunk bytes. These tests need no zarr-python that knows rectilinear grids; the live
comparisons with zarr-python >= 3.4 are in test_rectilinear_zarr34.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from conftest import shard_inner_chunks
from zarrox.errors import MetadataError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rectilinear"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text())
NAMES = sorted(EXPECTED)
ANSWERS = ("cdata_shape", "nchunks", "read_chunk_sizes", "write_chunk_sizes", "chunks", "shards")


def _expected(name: str) -> np.ndarray:
    return np.load(FIXTURES / "expected" / f"{name}.npy")


def _as_json(v: Any) -> Any:
    return json.loads(json.dumps(v))


@pytest.fixture
def store_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture store."""
    dst = tmp_path / "store"
    shutil.copytree(FIXTURES / "store", dst)
    return dst


@pytest.mark.parametrize("name", NAMES)
def test_fixture_reads_as_written(name: str) -> None:
    a = zarrox.open_array(FIXTURES / "store", path=name, mode="r")
    want = _expected(name)
    got = a[...]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert a.metadata.to_json() == EXPECTED[name]["metadata"]


@pytest.mark.parametrize("name", NAMES)
def test_grid_answers_match_zarr_34(name: str) -> None:
    a = zarrox.open_array(FIXTURES / "store", path=name, mode="r")
    for attr in ANSWERS:
        want = EXPECTED[name][attr]
        if want is None and attr in ("chunks", "shards"):
            if attr == "shards" and a._sharding_config() is None:
                assert a.shards is None
                continue
            with pytest.raises(NotImplementedError, match="rectilinear"):
                getattr(a, attr)
            continue
        assert _as_json(getattr(a, attr)) == want, attr


def _random_selections(shape: tuple[int, ...], rng: np.random.Generator) -> list[Any]:
    """Basic slices with steps, integers, integer arrays, in several combinations."""
    out: list[Any] = []
    for _ in range(12):
        sel: list[Any] = []
        for n in shape:
            kind = rng.integers(4)
            if kind == 0:
                sel.append(int(rng.integers(n)))
            elif kind == 1:
                a, b = sorted(int(x) for x in rng.integers(0, n + 1, 2))
                sel.append(slice(a, b, int(rng.integers(1, 4))))
            elif kind == 2:
                sel.append(slice(int(rng.integers(n)), None, int(rng.integers(2, 6))))
            else:
                sel.append(slice(None))
        out.append(tuple(sel))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_selection_mode_reads_like_numpy(name: str) -> None:
    a = zarrox.open_array(FIXTURES / "store", path=name, mode="r")
    want = _expected(name)
    rng = np.random.default_rng(7)
    for sel in _random_selections(want.shape, rng):
        np.testing.assert_array_equal(a[sel], want[sel], err_msg=str(sel))
        if all(isinstance(s, slice) for s in sel):
            np.testing.assert_array_equal(a.get_basic_selection(sel), want[sel])
    for _ in range(10):
        idx = [np.sort(rng.choice(n, size=rng.integers(1, n + 1))) for n in want.shape]
        np.testing.assert_array_equal(a.oindex[tuple(idx)], want[np.ix_(*idx)])
        np.testing.assert_array_equal(a.get_orthogonal_selection(tuple(idx)), want[np.ix_(*idx)])
        pts = tuple(rng.integers(0, n, size=9) for n in want.shape)
        np.testing.assert_array_equal(a.vindex[pts], want[pts])
        np.testing.assert_array_equal(a.get_coordinate_selection(pts), want[pts])
        mask = rng.random(want.shape) < 0.3
        np.testing.assert_array_equal(a.vindex[mask], want[mask])
        np.testing.assert_array_equal(a.get_mask_selection(mask), want[mask])
        # integer arrays and bool arrays along the first dimension in basic indexing
        np.testing.assert_array_equal(a[idx[0]], want[idx[0]])
        bmask = rng.random(want.shape[0]) < 0.5
        np.testing.assert_array_equal(a.oindex[bmask], want[bmask])


@pytest.mark.parametrize("name", NAMES)
def test_blocks_are_the_chunks_of_the_stored_grid(name: str) -> None:
    a = zarrox.open_array(FIXTURES / "store", path=name, mode="r")
    want = _expected(name)
    sizes = EXPECTED[name]["write_chunk_sizes"]
    starts = [np.concatenate([[0], np.cumsum(s)]).astype(int) for s in sizes]
    for d, s in enumerate(sizes):
        for b in range(len(s)):
            sel = tuple(b if k == d else slice(None) for k in range(want.ndim))
            region = tuple(
                slice(starts[d][b], starts[d][b + 1]) if k == d else slice(None)
                for k in range(want.ndim)
            )
            np.testing.assert_array_equal(a.blocks[sel], want[region])
            np.testing.assert_array_equal(a.get_block_selection(sel), want[region])
        if len(s) > 1:
            sel = tuple(slice(1, None) if k == d else slice(None) for k in range(want.ndim))
            region = tuple(
                slice(starts[d][1], None) if k == d else slice(None) for k in range(want.ndim)
            )
            np.testing.assert_array_equal(a.blocks[sel], want[region])
    with pytest.raises(IndexError):
        a.blocks[(len(sizes[0]),) + (0,) * (want.ndim - 1)]


@pytest.mark.parametrize("name", NAMES)
def test_writes_in_every_mode_match_numpy(name: str, store_copy: Path) -> None:
    a = zarrox.open_array(store_copy, path=name, mode="r+")
    model = _expected(name).copy()
    rng = np.random.default_rng(11)
    dtype = model.dtype

    def rand(shape: Any) -> np.ndarray:
        return (rng.random(shape) * 100).astype(dtype)

    for sel in _random_selections(model.shape, rng):
        v = rand(model[sel].shape)
        a[sel] = v
        model[sel] = v
    idx = tuple(np.unique(rng.choice(n, size=max(1, n // 2))) for n in model.shape)
    v = rand(model[np.ix_(*idx)].shape)
    a.oindex[idx] = v
    model[np.ix_(*idx)] = v
    pts = tuple(rng.integers(0, n, size=7) for n in model.shape)
    # distinct points only: numpy and zarr differ on which of two writes to one point wins
    flat = np.ravel_multi_index(pts, model.shape)
    _, first = np.unique(flat, return_index=True)
    pts = tuple(p[first] for p in pts)
    v = rand(len(first))
    a.vindex[pts] = v
    model[pts] = v
    mask = rng.random(model.shape) < 0.2
    v = rand(int(mask.sum()))
    a.set_mask_selection(mask, v)
    model[mask] = v
    block = tuple(0 for _ in model.shape)
    region = tuple(slice(0, s[0]) for s in EXPECTED[name]["write_chunk_sizes"])
    v = rand(model[region].shape)
    a.blocks[block] = v
    model[region] = v
    a[(slice(None),) * model.ndim] = a[...]  # a whole-array rewrite keeps everything
    np.testing.assert_array_equal(a[...], model)
    again = zarrox.open_array(store_copy, path=name, mode="r")
    np.testing.assert_array_equal(again[...], model)


def _create_like(store: Path, name: str) -> zarrox.Array:
    kw = dict(EXPECTED[name]["create"])
    for key in ("shape", "chunks"):
        if isinstance(kw.get(key), list) and key == "shape":
            kw[key] = tuple(kw[key])
    return zarrox.create_array(store, name=name, **kw)


@pytest.mark.parametrize("name", NAMES)
def test_zarrox_writes_the_same_metadata_and_chunks(name: str, tmp_path: Path) -> None:
    a = _create_like(tmp_path, name)
    want = _expected(name)
    if "resize" in EXPECTED[name]:
        # written whole, then shrunk: the chunks past the new end are deleted
        src = np.load(FIXTURES / "expected" / f"{name}.npy")
        full = np.zeros(tuple(EXPECTED[name]["create"]["shape"]), dtype=src.dtype)
        full[: src.shape[0]] = src
        a[...] = full
        a.resize(tuple(EXPECTED[name]["resize"]))
    else:
        region = tuple(slice(0, max(1, n - 3)) for n in want.shape)
        a[region] = want[region]
    ours = tmp_path / name
    theirs = FIXTURES / "store" / name
    assert json.loads((ours / "zarr.json").read_text()) == EXPECTED[name]["metadata"]
    assert (ours / "zarr.json").read_bytes() == (theirs / "zarr.json").read_bytes()
    if "resize" in EXPECTED[name]:
        # the rest of the values differ (the fixture's were random): compare the key set
        ours_keys = {p.relative_to(ours) for p in ours.rglob("*") if p.is_file()}
        theirs_keys = {p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()}
        assert ours_keys == theirs_keys
        return
    files = sorted(p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
    inner = EXPECTED[name]["chunks"] if "shards" in EXPECTED[name]["create"] else None
    for f in files:
        if f.name == "zarr.json" or inner is None:
            assert (ours / f).read_bytes() == (theirs / f).read_bytes(), f
        else:
            assert shard_inner_chunks((ours / f).read_bytes()) == shard_inner_chunks(
                (theirs / f).read_bytes()
            ), f


def test_create_accepts_zarr_34_chunk_forms(tmp_path: Path) -> None:
    # a list keeps its dimension rectilinear even with equal edges; -1 spans the axis
    a = zarrox.create_array(tmp_path, name="a", shape=(10, 6), chunks=[[1] * 10, -1], dtype="u1")
    assert a.metadata.to_json()["chunk_grid"] == {
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [[[1, 10]], 6]},
    }
    assert a.cdata_shape == (10, 1)
    b = zarrox.create_array(tmp_path, name="b", shape=(0,), chunks=[[4, 4]], dtype="u1")
    assert b.write_chunk_sizes == ((),) and b.nchunks == 0
    with pytest.raises(ValueError, match="do not sum"):
        zarrox.create_array(tmp_path, name="c", shape=(10,), chunks=[[4, 4]], dtype="u1")
    with pytest.raises(ValueError, match="positive"):
        zarrox.create_array(tmp_path, name="c", shape=(4,), chunks=[[4, 0]], dtype="u1")
    with pytest.raises(ValueError, match="dimensions"):
        zarrox.create_array(tmp_path, name="c", shape=(4, 4), chunks=[[4]], dtype="u1")
    with pytest.raises(ValueError, match="divisible"):
        zarrox.create_array(
            tmp_path, name="c", shape=(10,), chunks=(2,), shards=[[4, 3, 3]], dtype="u1"
        )
    with pytest.raises(ValueError, match="regular"):
        zarrox.create_array(
            tmp_path, name="c", shape=(8,), chunks=[[4, 4]], shards=[[8]], dtype="u1"
        )


def test_resize_and_append_grow_edges_as_zarr_34(tmp_path: Path) -> None:
    a = zarrox.create_array(tmp_path, name="a", shape=(10, 4), chunks=[[2, 3, 5], 3], dtype="i4")
    data = np.arange(40, dtype="i4").reshape(10, 4)
    a[...] = data
    grid = lambda arr: arr.metadata.to_json()["chunk_grid"]["configuration"]["chunk_shapes"]  # noqa: E731
    a.resize((13, 5))  # growth past the edges: one new chunk of the growth; steps stay
    assert grid(a) == [[2, 3, 5, 3], 3]
    assert a.write_chunk_sizes == ((2, 3, 5, 3), (3, 2))
    np.testing.assert_array_equal(a[:10, :4], data)
    assert (a[10:, :] == 0).all() and (a[:, 4:] == 0).all()
    a.resize((4, 5))  # a shrink keeps the edges; chunks wholly past the end go
    assert grid(a) == [[2, 3, 5, 3], 3]
    assert a.cdata_shape == (2, 2)
    stored = sorted(str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("c/*/*"))
    assert stored == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    # growing back: as zarr-python 3.4, the chunk that straddled the cut (rows 2-4) kept its
    # cells past it; rows of the deleted chunks read as the fill value
    a.resize((10, 5))
    want = np.zeros((10, 5), "i4")
    want[:5, :4] = data[:5]
    np.testing.assert_array_equal(a[...], want)
    new = a.append(np.ones((3, 5), "i4"))
    assert new == (13, 5) and grid(a) == [[2, 3, 5, 3], 3]
    a.append(np.ones((4, 5), "i4"))
    assert grid(a) == [[2, 3, 5, 3, 4], 3]
    assert a.read_chunk_sizes == ((2, 3, 5, 3, 4), (3, 2))
    np.testing.assert_array_equal(a[10:], np.ones((7, 5), "i4"))


def test_info_shows_variable_shapes(tmp_path: Path) -> None:
    a = zarrox.open_array(FIXTURES / "store", path="two_d_rle", mode="r")
    assert "Chunk shape" in repr(a.info) and "<variable>" in repr(a.info)
    s = zarrox.open_array(FIXTURES / "store", path="sharded", mode="r")
    info = repr(s.info)
    assert "(2, 3)" in info and "<variable>" in info


def _doc(chunk_shapes: Any, shape: list[int]) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "store" / "one_d" / "zarr.json").read_text())
    doc["shape"] = shape
    doc["chunk_grid"]["configuration"]["chunk_shapes"] = chunk_shapes
    return doc


@pytest.mark.parametrize(
    ("chunk_shapes", "shape", "match"),
    [
        ([[0, 4]], [4], "positive"),
        ([[-2, 4]], [2], "positive"),
        ([0], [4], "positive"),
        ([[4, 4]], [9], "below the extent"),
        ([[4, 4], 2], [8], "dimension"),
        ([[[4]]], [4], r"\[edge, count\]"),
        ([[[4, 1, 1]]], [4], r"\[edge, count\]"),
        ([[[4, 0]]], [4], "positive"),
        ([[]], [0], "at least one edge"),
        ([[2.5]], [2], "positive"),
        ("8", [8], "list"),
    ],
)
def test_invalid_grids_are_metadata_errors_naming_the_node(
    tmp_path: Path, chunk_shapes: Any, shape: list[int], match: str
) -> None:
    node = tmp_path / "bad"
    node.mkdir()
    (node / "zarr.json").write_text(json.dumps(_doc(chunk_shapes, shape)))
    with pytest.raises(MetadataError, match=match) as e:
        zarrox.open_array(tmp_path, path="bad", mode="r")
    assert "bad" in str(e.value)


def test_bad_kind_and_shard_edges_are_metadata_errors(tmp_path: Path) -> None:
    doc = _doc([[5, 1, 7, 10]], [23])
    doc["chunk_grid"]["configuration"]["kind"] = "external"
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match="inline"):
        zarrox.open_array(tmp_path, mode="r")
    doc = json.loads((FIXTURES / "store" / "sharded" / "zarr.json").read_text())
    doc["chunk_grid"]["configuration"]["chunk_shapes"] = [[4, 5, 11], [6]]
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match="divisible"):
        zarrox.open_array(tmp_path, mode="r")


def test_huge_dimension_of_unit_edges_is_not_expanded(tmp_path: Path) -> None:
    n = 2**60
    doc = _doc([[[1, n]]], [n])
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    a = zarrox.open_array(tmp_path, mode="r+")
    assert a.cdata_shape == (n,)
    a[n - 3 : n : 2] = np.array([5, 6], "i4")
    np.testing.assert_array_equal(a[n - 4 :], np.array([0, 5, 0, 6], "i4"))
    np.testing.assert_array_equal(a[[0, n - 1]], np.array([0, 6], "i4"))
    assert a.blocks[n - 1].tolist() == [6]
    assert sorted(p.name for p in (tmp_path / "c").iterdir() if p.is_file()) == [
        str(n - 3),
        str(n - 1),
    ]


@pytest.mark.parametrize("name", ["two_d_rle", "sharded_edges", "overflow"])
def test_convert_keeps_a_rectilinear_grid(name: str, tmp_path: Path) -> None:
    out = zarrox.convert(FIXTURES / "store", tmp_path / "out", path=name)
    src = zarrox.open_array(FIXTURES / "store", path=name, mode="r")
    assert out.metadata.to_json()["chunk_grid"] == src.metadata.to_json()["chunk_grid"]
    assert out.metadata.codecs == src.metadata.codecs
    np.testing.assert_array_equal(out[...], _expected(name))
    assert out.write_chunk_sizes == src.write_chunk_sizes


def test_convert_to_a_rectilinear_shard_grid(tmp_path: Path) -> None:
    data = np.arange(12 * 8, dtype="u2").reshape(12, 8)
    src = zarrox.create_array(tmp_path / "src", shape=data.shape, chunks=(3, 4), dtype="u2")
    src[...] = data
    out = zarrox.convert(tmp_path / "src", tmp_path / "dst", shards=[[3, 9], 8])
    assert out.metadata.to_json()["chunk_grid"] == {
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [[3, 9], 8]},
    }
    assert out.chunks == (3, 4) and out.write_chunk_sizes == ((3, 9), (8,))
    np.testing.assert_array_equal(out[...], data)
    with pytest.raises(ValueError, match="divisible"):
        zarrox.convert(tmp_path / "src", tmp_path / "bad", shards=[[4, 8], 8])


def test_dask_reads_rectilinear_chunks() -> None:
    da = pytest.importorskip("dask.array")
    a = zarrox.open_array(FIXTURES / "store", path="two_d_rle", mode="r")
    d = a.to_dask()
    assert d.chunks == a.read_chunk_sizes
    np.testing.assert_array_equal(da.asarray(d).compute(), _expected("two_d_rle"))


def test_tensorstore_spec_is_refused() -> None:
    a = zarrox.open_array(FIXTURES / "store", path="one_d", mode="r")
    with pytest.raises(zarrox.errors.UnsupportedError, match="rectilinear"):
        a.spec()


def test_stores_python_reads_and_writes_chunk_by_chunk() -> None:
    """A store the engine asks in request rounds (a zarr-python store): each chunk of a
    rectilinear grid still decodes and encodes with its own shape."""
    zarr = pytest.importorskip("zarr")
    from zarrox.storage import PythonZarrStore

    store = PythonZarrStore(zarr.storage.MemoryStore())
    a = zarrox.create_array(
        store, name="a", shape=(17, 9), chunks=[[2, 2, 2, 2, 4, 5], 4], dtype="f8", fill_value=-1
    )
    assert not a._handle.in_rust
    want = np.full((17, 9), -1.0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        r0, r1 = sorted(int(x) for x in rng.integers(0, 18, 2))
        c0, c1 = sorted(int(x) for x in rng.integers(0, 10, 2))
        v = rng.random((r1 - r0, c1 - c0))
        a[r0:r1, c0:c1] = v
        want[r0:r1, c0:c1] = v
        pts = (rng.integers(0, 17, 5), rng.integers(0, 9, 5))
        np.testing.assert_array_equal(a.vindex[pts], want[pts])
    np.testing.assert_array_equal(a[...], want)
    b = zarrox.create_array(
        store, name="sh", shape=(20, 6), chunks=(2, 3), shards=[[4, 8, 8], [6]], dtype="i2"
    )
    b[3:17, 1:5] = 5
    w = np.zeros((20, 6), "i2")
    w[3:17, 1:5] = 5
    np.testing.assert_array_equal(b[...], w)
    np.testing.assert_array_equal(b[::3, ::2], w[::3, ::2])


def test_grid_object_answers_copies_and_pickles() -> None:
    import copy
    import pickle

    from zarrox.metadata.chunk_grid import RectilinearGrid

    grid = RectilinearGrid([4, [3, 3, [2, 2], 5]])
    assert grid.core_json() == [4, [[3, 2], [2, 2], [5, 1]]]
    assert grid.to_json() == {
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [4, [[3, 2], [2, 2], 5]]},
    }
    assert list(grid.to_json()) == ["name", "configuration"]
    assert list(grid.to_json()["configuration"]) == ["kind", "chunk_shapes"]
    assert grid.grid_shape([10, 12]) == (3, 5)
    assert grid.data_sizes(1, 12) == (3, 3, 2, 2, 2)
    assert grid.data_sizes(0, 10) == (4, 4, 2)
    assert grid.data_sizes(1, 9) == (3, 3, 2, 1)
    assert grid.chunk(1, 3) == (8, 2)
    assert grid.first_chunk_shape() == (4, 3)
    assert grid.distinct_edges(1) == [2, 3, 5]
    assert grid.resized([20, 20]).core_json() == [4, [[3, 2], [2, 2], [5, 2]]]
    assert grid.resized([5, 5]) == grid
    assert grid.resized([20, 20]).to_json()["configuration"]["chunk_shapes"][1] == [
        [3, 2],
        [2, 2],
        [5, 2],
    ]
    for other in (copy.deepcopy(grid), pickle.loads(pickle.dumps(grid))):
        assert other == grid and hash(other) == hash(grid)
    assert grid != RectilinearGrid([4, [3, 3, 2, 5]])
    assert grid == RectilinearGrid([4, [[3, 2], [2, 2], 5]])
    assert grid.dims == (4, ((3, 2), (2, 2), (5, 1)))
    assert RectilinearGrid.from_edges([4, [3, 3, 2, 2, 5]]) == grid
    with pytest.raises(IndexError):
        grid.chunk(1, 5)
    with pytest.raises(IndexError):
        grid.nchunks(2, 5)
    with pytest.raises(MetadataError, match="positive"):
        RectilinearGrid([[3, 0]])
