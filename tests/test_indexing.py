"""Every selection mode against numpy, on v3 (plain and sharded) and v2 arrays (hypothesis),
plus resize, append, info and reads into a caller's buffer."""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrox

warnings.filterwarnings("ignore", category=UserWarning)

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def arrays(draw: st.DrawFn, min_dims: int = 0) -> tuple[zarrox.Array, np.ndarray]:
    """A random zarrox array (maybe sharded) filled with random data, and that data."""
    ndim = draw(st.integers(min_dims, 4))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    kwargs: dict[str, Any] = {}
    layout = draw(st.sampled_from(["v3", "v3-sharded", "v2"] if ndim else ["v3", "v2"]))
    if layout == "v3-sharded":
        kwargs["shards"] = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    elif layout == "v2":
        kwargs.update(
            zarr_format=2,
            order=draw(st.sampled_from(["C", "F"])),
            compressors={"id": "zlib", "level": 1},
        )
    dtype = draw(st.sampled_from(["int16", "float32", "uint8", "complex64"]))
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=shape,
        dtype=dtype,
        chunks=chunks,
        fill_value=draw(st.integers(0, 3)),
        **kwargs,
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    data = rng.integers(0, 100, size=shape).astype(dtype)
    a[...] = data
    return a, data


def index_arrays(draw: st.DrawFn, shape: tuple[int, ...], n: int) -> tuple[np.ndarray, ...]:
    """One integer index array per dimension (negative ones too), each of length n."""
    return tuple(
        np.array(draw(st.lists(st.integers(-s, s - 1), min_size=n, max_size=n)), dtype=np.int64)
        for s in shape
    )


@SETTINGS
@given(data=st.data(), arr=arrays(min_dims=1))
def test_coordinate_selection_matches_numpy(data: st.DataObject, arr: Any) -> None:
    a, x = arr
    if 0 in a.shape:
        return
    n = data.draw(st.integers(0, 12))
    idx = index_arrays(data.draw, a.shape, n)
    np.testing.assert_array_equal(a.vindex[idx], x[idx])
    np.testing.assert_array_equal(a.get_coordinate_selection(idx), x[idx])
    # Broadcasting: a column of indices against a row.
    if a.ndim == 2 and n:
        rows, cols = idx[0].reshape(-1, 1), idx[1].reshape(1, -1)
        np.testing.assert_array_equal(a.vindex[rows, cols], x[rows, cols])
    # Write: repeated coordinates take the last value, as in numpy.
    value = np.arange(n).astype(a.dtype) + 50
    a.vindex[idx] = value
    x[idx] = value
    np.testing.assert_array_equal(a[...], x)


@SETTINGS
@given(data=st.data(), arr=arrays(min_dims=1))
def test_mask_selection_matches_numpy(data: st.DataObject, arr: Any) -> None:
    a, x = arr
    mask = np.array(
        data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)), dtype=bool
    ).reshape(x.shape)
    np.testing.assert_array_equal(a.vindex[mask], x[mask])
    np.testing.assert_array_equal(a[mask], x[mask])
    a.set_mask_selection(mask, 77)
    x[mask] = 77
    np.testing.assert_array_equal(a[...], x)


@SETTINGS
@given(data=st.data(), arr=arrays())
def test_orthogonal_selection_matches_numpy(data: st.DataObject, arr: Any) -> None:
    a, x = arr
    sel: list[Any] = []
    for s in a.shape:
        kind = data.draw(st.sampled_from(["slice", "ints", "mask", "int"] if s else ["slice"]))
        if kind == "slice":
            start = data.draw(st.integers(-s - 2, s + 2))
            stop = data.draw(st.integers(-s - 2, s + 2))
            sel.append(slice(start, stop, data.draw(st.integers(1, 4))))
        elif kind == "ints":
            sel.append(np.array(data.draw(st.lists(st.integers(-s, s - 1), max_size=6))))
        elif kind == "mask":
            sel.append(np.array(data.draw(st.lists(st.booleans(), min_size=s, max_size=s))))
        else:
            sel.append(data.draw(st.integers(-s, s - 1)))
    # numpy's outer indexing is np.ix_ over the index arrays.
    expected = x
    for axis in reversed(range(len(sel))):
        s = sel[axis]
        if isinstance(s, np.ndarray):
            s = np.flatnonzero(s) if s.dtype == bool else s.astype(np.int64)
            expected = np.take(expected, s, axis=axis)
        else:
            expected = expected[(slice(None),) * axis + (s,)]
    np.testing.assert_array_equal(a.oindex[tuple(sel)], expected)
    # Write distinct values everywhere the selection reaches (so with repeated
    # indices it matters which assignment wins: the last, as in numpy).
    if expected.size:
        value = (np.arange(expected.size) % 97 + 3).astype(a.dtype).reshape(expected.shape)
        a.oindex[tuple(sel)] = value
        ref = x.copy()
        positions = [
            np.atleast_1d(
                np.arange(n)[s]
                if not isinstance(s, np.ndarray)
                else (np.flatnonzero(s) if s.dtype == bool else s % max(n, 1))
            )
            for s, n in zip(sel, a.shape, strict=True)
        ]
        ref[np.ix_(*positions)] = value.reshape([len(p) for p in positions])
        np.testing.assert_array_equal(a[...], ref)


@SETTINGS
@given(data=st.data(), arr=arrays(min_dims=1))
def test_block_selection_matches_numpy(data: st.DataObject, arr: Any) -> None:
    a, x = arr
    grid = a.shards or a.chunks  # zarr-python's blocks follow the stored objects
    sel: list[Any] = []
    expected = x
    for axis, (s, c) in enumerate(zip(a.shape, grid, strict=True)):
        n_blocks = math.ceil(s / c)
        if n_blocks and data.draw(st.booleans()):
            b = data.draw(st.integers(-n_blocks, n_blocks - 1))
            sel.append(b)
            b %= n_blocks
            region = slice(b * c, (b + 1) * c)
        else:
            start = data.draw(st.integers(0, n_blocks))
            stop = data.draw(st.integers(0, n_blocks))
            sel.append(slice(start, stop))
            region = slice(start * c, max(stop, start) * c)
        expected = expected[(slice(None),) * axis + (region,)]
    np.testing.assert_array_equal(a.blocks[tuple(sel)], expected)
    a.set_block_selection(tuple(sel), 5)
    ref = x.copy()
    ref_sel = []
    for s, c, n in zip(sel, grid, a.shape, strict=True):
        if isinstance(s, int):
            b = s % math.ceil(n / c)
            ref_sel.append(slice(b * c, (b + 1) * c))
        else:
            ref_sel.append(slice(s.start * c, max(s.stop, s.start) * c))
    ref[tuple(ref_sel)] = 5
    np.testing.assert_array_equal(a[...], ref)


def test_blocks_match_zarr_python() -> None:
    x = np.arange(120).reshape(12, 10)
    for kwargs in ({}, {"shards": (6, 10)}):
        a = zarrox.create_array(
            zarrox.MemoryStore(), shape=(12, 10), dtype="i8", chunks=(2, 5), **kwargs
        )
        z = zarr.create_array(
            zarr.storage.MemoryStore(), shape=(12, 10), dtype="i8", chunks=(2, 5), **kwargs
        )
        a[...] = x
        z[...] = x
        for sel in [(1,), (slice(0, 2), -1), (-1, slice(None))]:
            np.testing.assert_array_equal(a.blocks[sel], z.blocks[sel])
        assert (a.nchunks, a.cdata_shape) == (z.nchunks, z.cdata_shape)
        assert a.nchunks_initialized == z.nchunks_initialized


def test_pure_fancy_getitem_is_vindex_like_numpy() -> None:
    x = np.arange(30).reshape(5, 6)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(5, 6), dtype="i8", chunks=(2, 4))
    a[...] = x
    np.testing.assert_array_equal(a[[4, 0, 4], [5, 1, 0]], x[[4, 0, 4], [5, 1, 0]])
    np.testing.assert_array_equal(a[[4, 0], 2], x[[4, 0], 2])
    np.testing.assert_array_equal(a[[4, 0], :], x[[4, 0], :])  # orthogonal with a slice
    a[[1, 2], [3, 3]] = -1
    x[[1, 2], [3, 3]] = -1
    np.testing.assert_array_equal(a[...], x)


@pytest.mark.parametrize("shards", [None, (4, 6)])
def test_out_parameter_decodes_into_callers_buffer(shards: Any) -> None:
    x = np.arange(48, dtype="f8").reshape(8, 6)
    a = zarrox.create_array(
        zarrox.MemoryStore(), shape=(8, 6), dtype="f8", chunks=(2, 3), shards=shards
    )
    a[...] = x
    out = np.full((8, 6), np.nan)
    assert a.get_basic_selection(..., out=out) is out
    np.testing.assert_array_equal(out, x)
    out2 = np.empty(3)
    a.get_coordinate_selection(([1, 7, 0], [0, 5, 2]), out=out2)
    np.testing.assert_array_equal(out2, x[[1, 7, 0], [0, 5, 2]])
    out3 = np.empty((2, 6))
    a.get_orthogonal_selection(([5, 2], slice(None)), out=out3)
    np.testing.assert_array_equal(out3, x[[5, 2]])
    fortran = np.asfortranarray(np.empty((8, 6)))
    a.get_basic_selection(..., out=fortran)
    np.testing.assert_array_equal(fortran, x)
    with pytest.raises(ValueError, match="out must have shape"):
        a.get_basic_selection(..., out=np.empty((8, 5)))
    with pytest.raises(ValueError, match="out must have shape"):
        a.get_basic_selection(..., out=np.empty((8, 6), dtype="f4"))


@pytest.mark.parametrize("shards", [None, (4, 4)])
def test_resize_shrink_then_grow_as_zarr_python(tmp_path: Any, shards: Any) -> None:
    """zarr-python's resize: shrinking deletes the chunks (shards) wholly out of bounds and
    nothing else, so the cells of a kept chunk beyond the new edge come back on growing."""
    a = zarrox.create_array(
        tmp_path, shape=(10, 10), dtype="i4", chunks=(2, 2), shards=shards, fill_value=-1
    )
    x = np.arange(100).reshape(10, 10)
    a[...] = x
    a.resize((5, 3))
    assert a.shape == (5, 3)
    np.testing.assert_array_equal(a[...], x[:5, :3])
    # Chunks wholly out of bounds are gone from the store.
    grid = shards or (2, 2)
    for _, coords in a._handle.stored_chunks():
        assert coords[0] * grid[0] < 5 and coords[1] * grid[1] < 3
    reopened = zarrox.open_array(tmp_path, mode="r")
    assert reopened.shape == (5, 3)
    a.resize(10, 10)
    kept = (-(-5 // grid[0]) * grid[0], -(-3 // grid[1]) * grid[1])  # (6, 4) or (8, 4)
    expected = np.full((10, 10), -1)
    expected[: kept[0], : kept[1]] = x[: kept[0], : kept[1]]
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("chunks", [(1,), (2,), (4,)])
def test_write_into_shrunk_shard_keeps_cells_beyond_shape(chunks: tuple[int, ...]) -> None:
    """zarr-python 3.4: a write covering a shard's part inside the array keeps the shard's
    cells beyond the shape; an unsharded chunk is replaced (its cells there become fill)."""
    for shards, expected in (((4,), [9, 9, 3, 4]), (None, [9, 9, 0, 0])):
        if shards is None and chunks != (4,):
            continue
        a = zarrox.create_array(
            zarrox.MemoryStore(), shape=(4,), chunks=chunks, shards=shards, dtype="i2"
        )
        a[:] = [1, 2, 3, 4]
        a.resize((2,))
        a[:] = [9, 9]
        a.resize((4,))
        np.testing.assert_array_equal(a[:], expected)


def test_append_along_axes() -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(2, 3), dtype="u1", chunks=(2, 2))
    a[...] = 1
    assert a.append(np.full((3, 3), 2)) == (5, 3)
    assert a.append(np.full((5, 1), 3), axis=1) == (5, 4)
    expected = np.array([[1, 1, 1, 3]] * 2 + [[2, 2, 2, 3]] * 3)
    np.testing.assert_array_equal(a[...], expected)
    with pytest.raises(ValueError, match="does not match"):
        a.append(np.zeros((1, 3)))


def test_info_and_counts(tmp_path: Any) -> None:
    a = zarrox.create_array(
        tmp_path, shape=(100, 100), dtype="u2", chunks=(10, 10), shards=(50, 50)
    )
    a[:50, :50] = 3
    info = a.info
    text = repr(info)
    for needle in [
        "Type",
        "Array",
        "uint16",
        "(100, 100)",
        "(10, 10)",
        "(50, 50)",
        "sharding_indexed",
        "Compression ratio",
        "1 of 4",
    ]:
        assert needle in text, needle
    assert info.nbytes == 20000
    assert 0 < info.nbytes_stored < 20000
    assert info.compression_ratio == pytest.approx(20000 / info.nbytes_stored)
    assert a.nchunks_initialized == 25 and a.nshards_initialized == 1
    assert a.update_attributes({"a": 1}) is a
    assert zarrox.open_array(tmp_path).attrs["a"] == 1


@pytest.mark.parametrize(
    "selection,exc",
    [
        (([0, 9], [0, 1]), IndexError),
        (([0, 1], slice(None)), None),  # orthogonal, valid
        ((np.array([0.5, 1.0]), [0, 1]), IndexError),
        ((slice(None), slice(None, None, -1)), IndexError),
        ((0, 0, 0), IndexError),
        (("a",), IndexError),
    ],
)
def test_malformed_selections_raise(selection: Any, exc: type[Exception] | None) -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(5, 5), dtype="i2", chunks=(2, 2))
    if exc is None:
        a[selection]
        return
    with pytest.raises(exc):
        a[selection]
    with pytest.raises(IndexError):
        a.vindex[[0, 5], [0, 0]]
    with pytest.raises(IndexError):
        a.vindex[np.ones((5, 4), dtype=bool)]
    with pytest.raises(IndexError):
        a.blocks[3]


@pytest.mark.parametrize(
    "selection",
    [
        slice(0, 10**30),
        slice(-(10**30), None),
        slice(None, None, 10**20),
        slice(-(10**30), 10**30, 3),
        slice(2**63 - 1, None),
        slice(None, -(2**63)),
        (slice(5, 2**63), slice(-(2**64), 2**64)),
        slice(np.int64(3), np.uint64(2**64 - 1)),
        (np.int64(-1), slice(np.uint8(1), np.int16(6), np.int32(2))),
    ],
)
def test_slice_bounds_of_any_size_clip_as_numpy(selection: Any) -> None:
    """Slice bounds past int64 (Python or numpy integers) clip as numpy's do."""
    ref = np.arange(20 * 7, dtype="int32").reshape(20, 7)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=ref.shape, dtype=ref.dtype, chunks=(6, 4))
    a[...] = ref
    for got in (a[selection], a.get_basic_selection(selection), a.oindex[selection]):
        assert got.shape == ref[selection].shape
        np.testing.assert_array_equal(got, ref[selection])


@pytest.mark.parametrize("index", [10**30, -(10**30), (0, 2**63), (2**64 + 1, 0)])
def test_integer_indices_past_int64_raise_index_error(index: Any) -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(20, 7), dtype="int32", chunks=(6, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        a[index]


@pytest.mark.parametrize(
    "selection",
    [
        (slice(0, 4), slice(2, 7), 3),
        (-1, slice(None), slice(None, None, 3)),
        (Ellipsis, 2),
        (1, Ellipsis, slice(-3, None)),
        (slice(5, 2), 0),  # empty
        (slice(-100, 100, 2),),
        4,
        Ellipsis,
        (),
    ],
)
def test_plain_basic_reads_take_one_rust_call_and_match_numpy(selection: Any) -> None:
    ref = np.arange(7 * 8 * 9, dtype=">i4").reshape(7, 8, 9)
    a = zarrox.create_array(
        zarrox.MemoryStore(), shape=ref.shape, dtype=ref.dtype, chunks=(3, 4, 4), fill_value=0
    )
    a[...] = ref
    fast = a._read_plain(selection)
    assert fast is not None, "plain selections take the one-call path"
    for got in (fast, a[selection], a.get_basic_selection(selection)):
        assert got.dtype == a.dtype and got.shape == ref[selection].shape
        np.testing.assert_array_equal(got, ref[selection])


PLAIN_WRITES = [
    (slice(0, 4), slice(2, 7), 3),
    (-1, slice(None), slice(None, None, 3)),
    (Ellipsis, 2),
    (1, Ellipsis, slice(-3, None)),
    (slice(2, 5),),
    (6, 7, 8),
    Ellipsis,
    (),
]


@pytest.mark.parametrize("selection", PLAIN_WRITES)
@pytest.mark.parametrize("dtype", ["<i4", ">f8", "M8[s]", [("a", "<u2"), ("b", "S3")]])
def test_plain_basic_writes_take_one_rust_call_and_match_numpy(selection: Any, dtype: Any) -> None:
    dt = np.dtype(dtype)
    shape = (7, 8, 9)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=shape, dtype=dt, chunks=(3, 4, 4))
    empty = a[...]  # the fill value everywhere
    ref = empty.copy()
    values = np.arange(math.prod(ref[selection].shape) or 1).astype(np.uint16).astype("u8")
    typed = np.empty(ref[selection].shape, dtype=a.dtype)
    typed.reshape(-1).view(np.uint8)[:] = np.resize(
        values.view(np.uint8), typed.nbytes
    )  # arbitrary bytes of the array's own type, whatever it is
    ref[selection] = typed
    assert a._handle.write_basic(selection, typed, a._plain_dtype), "one-call path"
    np.testing.assert_array_equal(a[...], ref)
    # the read of the same selection: one call, typed, of the selection's shape
    got = a._read_plain(selection)
    assert got is not None and got.dtype == a.dtype and got.shape == ref[selection].shape
    np.testing.assert_array_equal(got, ref[selection])
    # through the front doors too
    a[...] = empty
    a[selection] = typed
    a.set_basic_selection((Ellipsis,), a[...])  # an unchanged rewrite of everything
    np.testing.assert_array_equal(a[...], ref)


@pytest.mark.parametrize(
    "value",
    [
        np.arange(20, dtype="<i8").reshape(4, 5),  # another dtype: cast
        np.arange(5, dtype="<i4"),  # broadcast along the first dimension
        7,  # a Python scalar
        np.int32(7),
        [[1, 2, 3, 4, 5]] * 4,  # a list
    ],
)
def test_other_write_values_take_the_general_path(value: Any) -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(6, 7), dtype="<i4", chunks=(4, 3))
    ref = np.zeros((6, 7), dtype="<i4")
    sel = (slice(1, 5), slice(2, 7))
    assert not a._handle.write_basic(sel, value, a._plain_dtype)
    assert not a[...].any(), "nothing was written by the refusal"
    a[sel] = value
    ref[sel] = value
    np.testing.assert_array_equal(a[...], ref)


@pytest.mark.parametrize(
    "value",
    [
        np.asfortranarray(np.arange(20, dtype="<i4").reshape(4, 5)),  # Fortran-ordered
        np.arange(40, dtype="<i4").reshape(4, 10)[:, ::2],  # strided
        np.arange(20, dtype="<i4").reshape(5, 4).T,  # transposed
        np.broadcast_to(np.arange(5, dtype="<i4"), (4, 5)),  # a broadcast view
    ],
)
def test_values_of_the_arrays_dtype_and_shape_in_any_layout_take_one_call(value: Any) -> None:
    """Not C-contiguous but of the selection's shape and the array's dtype: copied to C
    order in the one call (what the general path would copy), and stored right."""
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(6, 7), dtype="<i4", chunks=(4, 3))
    ref = np.zeros((6, 7), dtype="<i4")
    sel = (slice(1, 5), slice(2, 7))
    assert a._handle.write_basic(sel, value, a._plain_dtype), "one-call path"
    ref[sel] = value
    np.testing.assert_array_equal(a[...], ref)


def test_plain_writes_keep_the_general_paths_errors() -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(6, 7), dtype="<i4", chunks=(4, 3))
    with pytest.raises(IndexError):
        a[9, 0:2] = np.zeros(2, dtype="<i4")
    with pytest.raises(ValueError, match="broadcast"):
        a[0:2, 0:2] = np.zeros((3, 3), dtype="<i4")
    ro = zarrox.open_array(a.store, mode="r")
    with pytest.raises(zarrox.errors.ReadOnlyError):
        ro[0:2, 0:2] = np.zeros((2, 2), dtype="<i4")
    assert not a[...].any()


@pytest.mark.parametrize(
    "selection,error",
    [
        ((np.int64(2), slice(None)), None),  # numpy integers: the general path
        ((0, 0, 0), IndexError),  # too many indices
        ((9,), IndexError),  # out of bounds
        ((-6, 0), IndexError),
        ((slice(None, None, -1),), IndexError),  # zarr-python refuses negative steps too
        ((Ellipsis, Ellipsis), IndexError),
        (("a",), IndexError),
    ],
)
def test_other_basic_selections_take_the_general_path(
    selection: Any, error: type[Exception] | None
) -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(5, 6), dtype="u2", chunks=(2, 4))
    ref = np.arange(30, dtype="u2").reshape(5, 6)
    a[...] = ref
    assert a._read_plain(selection) is None
    if error is not None:
        with pytest.raises(error):
            a[selection]
        with pytest.raises(error):
            a.get_basic_selection(selection)
        return
    np.testing.assert_array_equal(a[selection], ref[selection])


def test_f_order_and_zero_d_arrays_read_through_the_general_path() -> None:
    ref = np.arange(12, dtype="f8").reshape(3, 4)
    f = zarrox.create_array(
        zarrox.MemoryStore(), shape=(3, 4), dtype="f8", chunks=(2, 2), config={"order": "F"}
    )
    f[...] = ref
    got = f[0:3, 1:4]
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, ref[0:3, 1:4])
    z = zarrox.create_array(zarrox.MemoryStore(), shape=(), dtype="i8", fill_value=5)
    assert z[()] == 5 and z[...] == 5


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"shards": (4, 6)},
        {"zarr_format": 2, "compressors": {"id": "zlib", "level": 1}},
        {"zarr_format": 2, "order": "F"},
    ],
)
@pytest.mark.parametrize("dtype", ["int16", ">f8", "complex64", "bool", "M8[s]"])
def test_scalar_writes_match_numpy_and_store_the_same_bytes(layout: Any, dtype: str) -> None:
    shape, chunks = (9, 13), (2, 3)  # edge chunks on both axes
    rng = np.random.default_rng(5)
    ref = rng.integers(0, 2, size=shape).astype(dtype)
    scalar = np.array(1, dtype=dtype)[()]
    writes: list[tuple[str, Any]] = [
        ("basic", (Ellipsis,)),
        ("basic", (slice(1, 8, 3), slice(None))),
        ("basic", (4, slice(2, None))),
        ("orthogonal", (np.array([0, 8, 3]), slice(None, None, 2))),
        ("coordinate", (np.array([0, 8, 8]), np.array([12, 0, 5]))),
        ("mask", (rng.random(shape) < 0.3,)),
        ("block", (slice(1, 3), 1)),
    ]
    stores = []
    for as_scalar in (True, False):
        a = zarrox.create_array(
            zarrox.MemoryStore(), shape=shape, chunks=chunks, dtype=dtype, fill_value=0, **layout
        )
        want = ref.copy()
        a[...] = want
        for mode, sel in writes:
            if mode == "block":
                view = a.blocks
                grid = a.shards or a.chunks
                region = tuple(
                    slice(s.start * c, min(s.stop * c, n))
                    if isinstance(s, slice)
                    else slice(s * c, min((s + 1) * c, n))
                    for s, c, n in zip(sel, grid, shape, strict=True)
                )
            else:
                view = {
                    "basic": a,
                    "orthogonal": a.oindex,
                    "coordinate": a.vindex,
                    "mask": a.vindex,
                }[mode]
                region = sel
                if mode == "orthogonal":
                    region = np.ix_(sel[0], np.arange(shape[1])[sel[1]])
            target = want[region]
            value = scalar if as_scalar else np.full(np.shape(target), scalar, dtype=dtype)
            view[sel] = value
            want[region] = scalar
            np.testing.assert_array_equal(a[...], want, err_msg=f"{mode} {sel}")
        a[...] = 0  # the fill value: every chunk is deleted, edges included
        metadata = ("zarr.json", ".zarray", ".zattrs", ".zgroup")
        assert [k for k in a.store.list_prefix("") if not k.endswith(metadata)] == []
        full = np.full(shape, scalar, dtype=dtype)
        a[...] = scalar if as_scalar else full
        np.testing.assert_array_equal(a[...], full)
        stores.append({k: a.store.get(k) for k in a.store.list_prefix("")})
    # A scalar (each whole chunk encoded once and reused) stores the same bytes
    # as the equivalent full array.
    assert stores[0] == stores[1]


def test_scalar_writes_build_no_selection_sized_buffer(monkeypatch: Any) -> None:
    a = zarrox.create_array(zarrox.MemoryStore(), shape=(10, 10), chunks=(3, 3), dtype="u1")
    s = zarrox.create_array(zarrox.MemoryStore(), shape=(7,), chunks=(2,), dtype=str)

    def no_broadcast(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a scalar write broadcast its value")

    monkeypatch.setattr(np, "broadcast_to", no_broadcast)
    a[2:9, 1] = 7
    a.oindex[[0, 9], :] = np.uint8(3)
    s[...] = "é"
    s[1:3] = b"x".decode()
    monkeypatch.undo()
    want = np.zeros((10, 10), "u1")
    want[2:9, 1] = 7
    want[[0, 9], :] = 3
    np.testing.assert_array_equal(a[...], want)
    assert list(s[...]) == ["é", "x", "x", "é", "é", "é", "é"]
    with pytest.raises(ValueError):
        a[0, 0] = "not a number"


def test_points_on_a_large_chunk_grid_keep_their_order() -> None:
    """More chunks than points takes the comparison-sort grouping of points by chunk
    (fewer chunks than points a counting sort): both keep repeats and selection order."""
    shape = (300, 300)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=shape, chunks=(2, 2), dtype="int32")
    rng = np.random.default_rng(3)
    z, y = rng.integers(0, 300, size=40), rng.integers(0, 300, size=40)
    z[5], y[5] = z[17], y[17]  # a repeated point: the last write wins, as in numpy
    values = np.arange(40, dtype="int32") + 1
    a.vindex[z, y] = values
    want = np.zeros(shape, dtype="int32")
    want[z, y] = values
    np.testing.assert_array_equal(a.vindex[z, y], want[z, y])
    np.testing.assert_array_equal(a.vindex[z[::-1], y[::-1]], want[z[::-1], y[::-1]])
    np.testing.assert_array_equal(a[...], want)


@pytest.mark.parametrize("dtype", ["int64", "uint64", "int16", "uint8", "list"])
def test_many_points_of_any_index_type_match_numpy(dtype: str) -> None:
    """Thousands of points (negative ones counting from the end where the type is signed),
    grouped by chunk and placed back in selection order; a broadcast scalar and column."""
    ref = np.arange(40 * 30 * 20, dtype="int32").reshape(40, 30, 20)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=ref.shape, dtype="int32", chunks=(7, 6, 5))
    a[...] = ref
    rng = np.random.default_rng(7)
    signed = dtype in ("int64", "int16", "list")
    idx = tuple(
        rng.integers(-n if signed else 0, n, size=5000).astype(dtype if dtype != "list" else "i8")
        for n in ref.shape
    )
    if dtype == "list":  # lists of Python integers
        idx = tuple([int(v) for v in i] for i in idx)
    np.testing.assert_array_equal(a.vindex[idx], ref[idx])
    # a scalar and a column broadcast against a row
    col = np.asarray(idx[1][:50], dtype="int64").reshape(-1, 1)
    row = np.asarray(idx[2][:40], dtype="int64").reshape(1, -1)
    np.testing.assert_array_equal(a.vindex[3, col, row], ref[3, col, row])


@pytest.mark.parametrize(
    "index,message",
    [
        (
            (np.array([0, 40]), np.array([0, 0]), np.array([0, 0])),
            "index 40 is out of bounds for axis 0 with size 40",
        ),
        (
            (np.array([0, 0]), np.array([-31, 0]), np.array([0, 0])),
            "index -31 is out of bounds for axis 1 with size 30",
        ),
        (
            (np.array([0], dtype="uint64"), np.array([0]), np.array([2**64 - 1], dtype="uint64")),
            "index 18446744073709551615 is out of bounds for axis 2 with size 20",
        ),
        ((np.array([0]), np.array([0]), [2**70]), "out of bounds for axis 2 with size 20"),
    ],
)
def test_points_out_of_bounds_name_the_index_and_axis(index: Any, message: str) -> None:
    a = zarrox.create_array(
        zarrox.MemoryStore(), shape=(40, 30, 20), dtype="int32", chunks=(7, 6, 5)
    )
    with pytest.raises(IndexError, match=re.escape(message)):
        a.vindex[index]


def test_index_arrays_in_any_memory_layout_match_numpy() -> None:
    """Index arrays and masks that are Fortran-ordered or strided views are read in C order,
    as numpy reads them (a C-contiguous buffer is taken whole)."""
    ref = np.arange(12 * 10, dtype="int32").reshape(12, 10)
    a = zarrox.create_array(zarrox.MemoryStore(), shape=ref.shape, dtype="int32", chunks=(5, 3))
    a[...] = ref
    rng = np.random.default_rng(11)
    rows = rng.integers(-12, 12, size=(6, 4))
    cols = rng.integers(0, 10, size=(6, 4)).astype("uint16")
    for r, c in [
        (np.asfortranarray(rows), np.asfortranarray(cols)),
        (rows[:, ::2], cols[::1, 1::2]),
        (rows.T, cols.T),
    ]:
        assert not (r.flags.c_contiguous and c.flags.c_contiguous)
        np.testing.assert_array_equal(a.vindex[r, c], ref[r, c])
        np.testing.assert_array_equal(a.oindex[r[:, 0], c[0]], ref[np.ix_(r[:, 0], c[0])])
    mask = np.asfortranarray(rng.random(ref.shape) < 0.3)
    np.testing.assert_array_equal(a.vindex[mask], ref[mask])
    np.testing.assert_array_equal(a.vindex[mask.T.T[::1]], ref[mask])
