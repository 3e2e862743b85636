"""Rectilinear chunk grids live against zarr-python >= 3.4 (skipped with an older zarr):
zarr-python with zarrox as its codec pipeline against zarr-python's own pipeline, reads and
writes in every selection mode, resize and append; and arrays written by one of zarr-python
and zarrox's own API read and written by the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import shard_inner_chunks

zarr = pytest.importorskip("zarr", minversion="3.4", reason="rectilinear grids need zarr>=3.4")

import zarrox  # noqa: E402

ZARROX = {
    "codec_pipeline.path": "zarrox.ZarroxCodecPipeline",
    "codec_pipeline.strict": True,
    "array.rectilinear_chunks": True,
}
DEFAULT = {
    "codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "array.rectilinear_chunks": True,
}

#: (shape, create_array keywords)
LAYOUTS: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((23,), {"chunks": [[5, 1, 7, 10]]}),
    ((17, 9), {"chunks": [[2, 2, 2, 2, 4, 5], 4], "fill_value": -3}),
    ((6, 5, 7), {"chunks": [[1, 2, 3], [5], [3, 3, 1]], "compressors": None}),
    ((20, 6), {"chunks": (2, 3), "shards": [[4, 8, 8], [6]]}),
    ((12, 10), {"chunks": (3, 2), "shards": [[3, 9], [4, 6]]}),
    (
        (7, 5),
        {
            "chunks": [[3, 4], [1, 4]],
            "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}],
        },
    ),
]
IDS = ["1d", "2d-rle", "3d-raw", "sharded", "sharded-edges", "transposed"]


def _random_ops(shape: tuple[int, ...], rng: np.random.Generator) -> list[tuple[str, Any]]:
    """(mode, selection) pairs: basic with steps, orthogonal, coordinates, masks, blocks."""
    ops: list[tuple[str, Any]] = []
    for _ in range(8):
        basic = []
        for n in shape:
            a, b = sorted(int(x) for x in rng.integers(0, n + 1, 2))
            basic.append(slice(a, b, int(rng.integers(1, 4))) if rng.random() < 0.8 else a % n)
        ops.append(("basic", tuple(basic)))
        ops.append(
            (
                "orthogonal",
                tuple(np.unique(rng.integers(0, n, size=rng.integers(1, n + 1))) for n in shape),
            )
        )
        pts = tuple(rng.integers(0, n, size=6) for n in shape)
        flat = np.ravel_multi_index(pts, shape)
        _, first = np.unique(flat, return_index=True)
        ops.append(("coordinate", tuple(p[first] for p in pts)))
        ops.append(("mask", rng.random(shape) < 0.25))
        ops.append(("block", tuple(0 if rng.random() < 0.5 else slice(None) for _ in shape)))
    return ops


def _get(a: Any, mode: str, sel: Any) -> Any:
    return getattr(a, f"get_{mode}_selection")(sel)


def _set(a: Any, mode: str, sel: Any, v: Any) -> None:
    getattr(a, f"set_{mode}_selection")(sel, v)


@pytest.mark.parametrize(("shape", "kw"), LAYOUTS, ids=IDS)
def test_zarrox_pipeline_matches_zarrs_own(shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    stores = {"zarrox": zarr.storage.MemoryStore(), "default": zarr.storage.MemoryStore()}
    arrays = {}
    for which, cfg in (("zarrox", ZARROX), ("default", DEFAULT)):
        with zarr.config.set(cfg):
            arrays[which] = zarr.create_array(stores[which], shape=shape, dtype="i4", **kw)
    for mode, sel in _random_ops(shape, rng):
        with zarr.config.set(DEFAULT):
            want_shape = np.shape(_get(arrays["default"], mode, sel))
        value = rng.integers(-1000, 1000, size=want_shape, dtype="i4")
        for which, cfg in (("zarrox", ZARROX), ("default", DEFAULT)):
            with zarr.config.set(cfg):
                _set(arrays[which], mode, sel, value)
        with zarr.config.set(ZARROX):
            got = _get(arrays["zarrox"], mode, sel)
        with zarr.config.set(DEFAULT):
            want = _get(arrays["default"], mode, sel)
        np.testing.assert_array_equal(got, want, err_msg=f"{mode} {sel}")
    # same stored bytes, and each pipeline reads what the other wrote
    keys = sorted(k for k in stores["default"]._store_dict if k != "zarr.json")
    assert keys == sorted(k for k in stores["zarrox"]._store_dict if k != "zarr.json")
    for k in keys:
        ours = stores["zarrox"]._store_dict[k].to_bytes()
        theirs = stores["default"]._store_dict[k].to_bytes()
        if "shards" in kw:
            assert shard_inner_chunks(ours) == shard_inner_chunks(theirs), k
        else:
            assert ours == theirs, k
    with zarr.config.set(ZARROX):
        crossed = zarr.open_array(stores["default"], mode="r")[...]
    with zarr.config.set(DEFAULT):
        np.testing.assert_array_equal(crossed, arrays["default"][...])


@pytest.mark.parametrize(("shape", "kw"), LAYOUTS, ids=IDS)
def test_resize_and_append_through_zarrox_pipeline(
    shape: tuple[int, ...], kw: dict[str, Any]
) -> None:
    out = {}
    for which, cfg in (("zarrox", ZARROX), ("default", DEFAULT)):
        with zarr.config.set(cfg):
            a = zarr.create_array(zarr.storage.MemoryStore(), shape=shape, dtype="i4", **kw)
            a[...] = np.arange(np.prod(shape), dtype="i4").reshape(shape)
            # growth by a multiple of every inner chunk edge: a new shard edge must be one
            a.resize(tuple(n + 6 for n in shape))
            a.resize(tuple(max(1, n - 2) for n in shape))
            a.append(np.full((3, *a.shape[1:]), 7, "i4"), axis=0)
            out[which] = (a[...], a.metadata.to_dict())
    np.testing.assert_array_equal(out["zarrox"][0], out["default"][0])
    assert out["zarrox"][1] == out["default"][1]


@pytest.mark.parametrize(("shape", "kw"), LAYOUTS, ids=IDS)
def test_own_api_and_zarr_read_and_write_each_other(
    tmp_path: Path, shape: tuple[int, ...], kw: dict[str, Any]
) -> None:
    data = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    with zarr.config.set(DEFAULT):
        z = zarr.create_array(
            zarr.storage.LocalStore(tmp_path / "z"), shape=shape, dtype="i4", **kw
        )
        z[...] = data
    ours = zarrox.create_array(tmp_path / "x", shape=shape, dtype="i4", **kw)
    ours[...] = data
    assert (tmp_path / "x" / "zarr.json").read_bytes() == (
        tmp_path / "z" / "zarr.json"
    ).read_bytes()
    zfiles = sorted(
        p.relative_to(tmp_path / "z") for p in (tmp_path / "z").rglob("*") if p.is_file()
    )
    xfiles = sorted(
        p.relative_to(tmp_path / "x") for p in (tmp_path / "x").rglob("*") if p.is_file()
    )
    assert zfiles == xfiles
    for f in zfiles:
        ours, theirs = (tmp_path / "x" / f).read_bytes(), (tmp_path / "z" / f).read_bytes()
        if "shards" in kw and f.name != "zarr.json":
            assert shard_inner_chunks(ours) == shard_inner_chunks(theirs), f
        else:
            assert ours == theirs, f
    z_read = zarrox.open_array(tmp_path / "z", mode="r+")
    np.testing.assert_array_equal(z_read[...], data)
    for attr in ("cdata_shape", "nchunks", "read_chunk_sizes", "write_chunk_sizes"):
        assert getattr(z_read, attr) == getattr(z, attr), attr
    z_read.append(np.ones((6, *shape[1:]), "i4"))
    with zarr.config.set(DEFAULT):
        again = zarr.open_array(zarr.storage.LocalStore(tmp_path / "z"), mode="r")
        np.testing.assert_array_equal(
            again[...], np.concatenate([data, np.ones((6, *shape[1:]), "i4")])
        )
        assert again.write_chunk_sizes == z_read.write_chunk_sizes


def test_resize_refused_where_zarr_refuses_it(tmp_path: Path) -> None:
    """A growth that would make a shard edge no multiple of the inner chunk edge fails in
    both, before anything is written."""
    kw = {"shape": (20, 6), "dtype": "i4", "chunks": (2, 3), "shards": [[4, 8, 8], [6]]}
    with zarr.config.set(DEFAULT):
        z = zarr.create_array(zarr.storage.MemoryStore(), **kw)
        with pytest.raises(ValueError, match="divisible"):
            z.resize((25, 6))
    ours = zarrox.create_array(tmp_path, **kw)
    ours[...] = 1
    before = (tmp_path / "zarr.json").read_bytes()
    with pytest.raises(ValueError, match="divisible"):
        ours.resize((25, 6))
    assert (tmp_path / "zarr.json").read_bytes() == before
    assert ours.shape == (20, 6) and (ours[...] == 1).all()
