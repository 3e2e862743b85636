"""Property tests: zarrox arrays read and write exactly like numpy arrays holding the same data.

Shapes from 0-d to 4-d (zero-length dimensions included), random chunk shapes, the core data
types, random codec chains, random basic and orthogonal selections. Every comparison is
bit-exact (NaN payloads and signed zeros included).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrox

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

SETTINGS = settings(
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- strategies --------------------------------------------------------------------------------


@st.composite
def codec_chains(draw: Any, ndim: int, dtype: np.dtype[Any]) -> list[dict[str, Any]]:
    chain: list[dict[str, Any]] = []
    if ndim > 0 and draw(st.booleans()):
        order = draw(st.permutations(list(range(ndim))))
        chain.append({"name": "transpose", "configuration": {"order": list(order)}})
    if dtype.itemsize > 1:
        endian = draw(st.sampled_from(["little", "big"]))
        chain.append({"name": "bytes", "configuration": {"endian": endian}})
    else:
        chain.append({"name": "bytes"})
    compressors = draw(
        st.lists(st.sampled_from(["zstd", "gzip", "blosc", "crc32c"]), max_size=2, unique=True)
    )
    for name in compressors:
        if name == "zstd":
            cfg: dict[str, Any] = {
                "level": draw(st.integers(-1, 5)),
                "checksum": draw(st.booleans()),
            }
        elif name == "gzip":
            cfg = {"level": draw(st.integers(0, 9))}
        elif name == "blosc":
            cfg = {
                "cname": draw(st.sampled_from(["lz4", "lz4hc", "blosclz", "zstd", "zlib"])),
                "clevel": draw(st.integers(0, 9)),
                "shuffle": draw(st.sampled_from(["noshuffle", "shuffle", "bitshuffle"])),
                "typesize": dtype.itemsize,
                "blocksize": 0,
            }
        else:
            cfg = {}
        chain.append({"name": name, "configuration": cfg} if cfg else {"name": name})
    return chain


@st.composite
def sharded_chains(
    draw: Any, chunks: tuple[int, ...], dtype: np.dtype[Any]
) -> list[dict[str, Any]]:
    """A sharding_indexed chain: inner chunks dividing the (shard) chunk shape.

    With a transpose before it, the inner chunk shape divides the shard shape both as given and
    as transposed: zarrox's metadata layer checks the first, its Rust core the second (the
    spec's reading), so only such shapes are usable for now."""
    transpose = list(draw(st.permutations(list(range(len(chunks)))))) if chunks else None
    if transpose is not None and draw(st.booleans()):
        seen = [math.gcd(c, chunks[t]) for c, t in zip(chunks, transpose, strict=True)]
    else:
        transpose, seen = None, list(chunks)
    inner = [draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0])) for g in seen]
    index_codecs: list[dict[str, Any]] = [
        {"name": "bytes", "configuration": {"endian": draw(st.sampled_from(["little", "big"]))}}
    ]
    if draw(st.booleans()):
        index_codecs.append({"name": "crc32c"})
    chain: list[dict[str, Any]] = []
    if transpose is not None:
        chain.append({"name": "transpose", "configuration": {"order": transpose}})
    chain.append(
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": inner,
                "codecs": draw(codec_chains(len(chunks), dtype)),
                "index_codecs": index_codecs,
                "index_location": draw(st.sampled_from(["start", "end"])),
            },
        }
    )
    if draw(st.booleans()):
        chain.append({"name": "crc32c"})
    return chain


@st.composite
def array_specs(draw: Any, max_ndim: int = 4) -> dict[str, Any]:
    ndim = draw(st.integers(0, max_ndim))
    max_side = {0: 1, 1: 40, 2: 12, 3: 7, 4: 5}[ndim]
    shape = tuple(draw(st.integers(0, max_side)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, max(1, s + 1))) for s in shape)
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    codecs = draw(codec_chains(ndim, dtype))
    if draw(st.integers(0, 3)) == 0:
        codecs = draw(sharded_chains(chunks, dtype))
    seed = draw(st.integers(0, 2**32 - 1))
    key_encoding = {
        "name": draw(st.sampled_from(["default", "v2"])),
        "separator": draw(st.sampled_from(["/", "."])),
    }
    return {
        "shape": shape,
        "chunks": chunks,
        "dtype": dtype,
        "codecs": codecs,
        "chunk_key_encoding": key_encoding,
        "seed": seed,
    }


def random_values(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int) -> np.ndarray:
    """Random values of any bit pattern (NaNs with payloads, infinities, -0.0 included)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return np.frombuffer(rng.bytes(n), dtype=dtype).reshape(shape).copy()


def int_index(draw: Any, n: int) -> int:
    i = draw(st.integers(0, n - 1))
    return i - n if draw(st.booleans()) else i


@st.composite
def slices(draw: Any, n: int) -> slice:
    bound = st.none() | st.integers(-n - 3, n + 3)
    return slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, n + 2)))


@st.composite
def basic_selections(draw: Any, shape: tuple[int, ...]) -> Any:
    items: list[Any] = []
    for n in shape:
        if n > 0 and draw(st.booleans()):
            items.append(int_index(draw, n))
        else:
            items.append(draw(slices(n)))
    # Sometimes leave trailing dimensions implicit, or use an Ellipsis.
    form = draw(st.sampled_from(["full", "short", "ellipsis"]))
    if form == "short" and items:
        items = items[: draw(st.integers(0, len(items)))]
    elif form == "ellipsis":
        k = draw(st.integers(0, len(items)))
        j = draw(st.integers(k, len(items)))
        items = [*items[:k], Ellipsis, *items[j:]]
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def orthogonal_selections(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "array", "list", "mask"]))
        if kind == "int" and n > 0:
            items.append(int_index(draw, n))
        elif kind == "slice":
            items.append(draw(slices(n)))
        elif kind == "mask":
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool))
        elif n > 0:
            # any order, repeats, negative indices
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=2 * n + 2))
            items.append(idx if kind == "list" else np.array(idx, dtype=np.int64))
        else:
            items.append(slice(None))
    return tuple(items)


@st.composite
def coordinate_selections(draw: Any, shape: tuple[int, ...], unique: bool) -> tuple[Any, ...]:
    """One integer array per dimension, all of one length (points), any order."""
    if not shape or 0 in shape:
        return tuple(np.zeros(0, dtype=np.int64) for _ in shape)
    n_points = draw(st.integers(0, 2 * int(np.prod(shape)) if not unique else int(np.prod(shape))))
    flat = draw(
        st.lists(
            st.integers(0, int(np.prod(shape)) - 1),
            min_size=n_points,
            max_size=n_points,
            unique=unique,
        )
    )
    coords = np.unravel_index(np.array(flat, dtype=np.intp), shape)
    # Some dimensions as negative indices, some as python lists.
    out: list[Any] = []
    for c, n in zip(coords, shape, strict=True):
        c = c.astype(np.int64)
        if draw(st.booleans()):
            c = c - n
        out.append(c.tolist() if draw(st.booleans()) else c)
    return tuple(out)


# -- numpy reference ---------------------------------------------------------------------------


def numpy_orthogonal(shape: tuple[int, ...], selection: tuple[Any, ...]) -> tuple[Any, tuple]:
    """An ``np.ix_`` index equivalent to an orthogonal selection, and the result shape."""
    arrays = []
    result_shape = []
    for s, n in zip(selection, shape, strict=True):
        if isinstance(s, int):
            arrays.append(np.array([s % n], dtype=np.intp))
        elif isinstance(s, slice):
            idx = np.arange(*s.indices(n), dtype=np.intp)
            arrays.append(idx)
            result_shape.append(idx.size)
        else:
            a = np.asarray(s)
            idx = np.flatnonzero(a) if a.dtype == bool else a.astype(np.intp) % max(n, 1)
            arrays.append(idx.astype(np.intp))
            result_shape.append(idx.size)
    return (np.ix_(*arrays) if arrays else ()), tuple(result_shape)


def assert_same(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()


def make(spec: dict[str, Any]) -> tuple[zarrox.Array, np.ndarray]:
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=spec["shape"],
        dtype=spec["dtype"],
        chunks=spec["chunks"],
        codecs=spec["codecs"],
        chunk_key_encoding=spec["chunk_key_encoding"],
    )
    data = random_values(spec["shape"], spec["dtype"], spec["seed"])
    a[...] = data
    return a, data


# -- properties --------------------------------------------------------------------------------


@SETTINGS
@given(spec=array_specs())
def test_round_trip_whole_array(spec: dict[str, Any]) -> None:
    a, data = make(spec)
    assert_same(a[...], data)
    # Chunks are stored under the keys of the chunk key encoding, exactly one per chunk that
    # holds anything but the fill value (all zero bytes here): empty chunks are not written.
    enc = spec["chunk_key_encoding"]
    shape, chunks = spec["shape"], spec["chunks"]
    expected_keys = set()
    grid = [range(-(-s // c)) for s, c in zip(shape, chunks, strict=True)]
    for coords in itertools.product(*grid):
        region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunks, strict=True))
        if not np.ascontiguousarray(data[region]).view(np.uint8).any():
            continue
        if enc["name"] == "v2":
            key = enc["separator"].join(map(str, coords)) if coords else "0"
        else:
            key = "c" + "".join(f"{enc['separator']}{c}" for c in coords)
        expected_keys.add(key)
    assert set(a.store.list_prefix("")) - {"zarr.json"} == expected_keys
    # A second handle on the same store decodes the same bytes.
    b = zarrox.open_array(a.store, mode="r")
    assert_same(b[...], data)


@SETTINGS
@given(spec=array_specs(), data=st.data())
def test_basic_selection_read_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    sel = data.draw(basic_selections(spec["shape"]), label="selection")
    assert_same(a[sel], ref[sel])
    assert_same(a.get_basic_selection(sel), ref[sel])


@SETTINGS
@given(spec=array_specs(), data=st.data())
def test_basic_selection_write_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    sel = data.draw(basic_selections(spec["shape"]), label="selection")
    target_shape = ref[sel].shape
    if data.draw(st.booleans(), label="scalar value"):
        value: Any = random_values((), spec["dtype"], spec["seed"] + 1)[()]
    else:
        value = random_values(target_shape, spec["dtype"], spec["seed"] + 1)
    a[sel] = value
    ref[sel] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_orthogonal_selection_read_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    sel = data.draw(orthogonal_selections(spec["shape"]), label="selection")
    index, result_shape = numpy_orthogonal(spec["shape"], sel)
    expected = ref[index].reshape(result_shape)
    assert_same(a.oindex[sel], expected)
    assert_same(a.get_orthogonal_selection(sel), expected)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_orthogonal_selection_write_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    sel = data.draw(orthogonal_selections(spec["shape"]), label="selection")
    index, result_shape = numpy_orthogonal(spec["shape"], sel)
    value = random_values(result_shape, spec["dtype"], spec["seed"] + 7)
    a.oindex[sel] = value
    # numpy assigns repeated indices in order: the last value wins.
    ref[index] = value.reshape(ref[index].shape)
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_missing_chunks_read_as_fill_value(spec: dict[str, Any], data: st.DataObject) -> None:
    fill = random_values((), spec["dtype"], spec["seed"])[()]
    if fill != fill:  # NaN: a chunk of other NaNs would count as empty (as in zarr-python)
        fill = spec["dtype"].type(1)
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=spec["shape"],
        dtype=spec["dtype"],
        chunks=spec["chunks"],
        codecs=spec["codecs"],
        fill_value=fill,
    )
    ref = np.full(spec["shape"], fill, dtype=spec["dtype"])
    assert_same(a[...], ref)
    sel = data.draw(basic_selections(spec["shape"]), label="selection")
    value = random_values(ref[sel].shape, spec["dtype"], spec["seed"] + 3)
    a[sel] = value
    ref[sel] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_sequence_of_writes_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a = zarrox.create_array(
        zarrox.MemoryStore(),
        shape=spec["shape"],
        dtype=spec["dtype"],
        chunks=spec["chunks"],
        codecs=spec["codecs"],
    )
    ref = np.zeros(spec["shape"], dtype=spec["dtype"])
    for step in range(data.draw(st.integers(1, 4), label="writes")):
        sel = data.draw(basic_selections(spec["shape"]), label="selection")
        value = random_values(ref[sel].shape, spec["dtype"], spec["seed"] + step)
        a[sel] = value
        ref[sel] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_coordinate_selection_read_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    if not spec["shape"]:
        return
    sel = data.draw(coordinate_selections(spec["shape"], unique=False), label="selection")
    expected = ref[tuple(np.asarray(c, dtype=np.intp) for c in sel)]
    assert_same(a.vindex[sel], expected)
    assert_same(a.get_coordinate_selection(sel), expected)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_coordinate_selection_write_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    if not spec["shape"]:
        return
    sel = data.draw(coordinate_selections(spec["shape"], unique=True), label="selection")
    index = tuple(np.asarray(c, dtype=np.intp) for c in sel)
    value = random_values(ref[index].shape, spec["dtype"], spec["seed"] + 11)
    a.vindex[sel] = value
    ref[index] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_mask_selection_equals_numpy(spec: dict[str, Any], data: st.DataObject) -> None:
    a, ref = make(spec)
    if not spec["shape"]:
        return
    size = int(np.prod(spec["shape"]))
    flat = data.draw(st.lists(st.booleans(), min_size=size, max_size=size), label="mask")
    mask = np.array(flat, dtype=bool).reshape(spec["shape"])
    assert_same(a.vindex[mask], ref[mask])
    value = random_values(ref[mask].shape, spec["dtype"], spec["seed"] + 5)
    a.vindex[mask] = value
    ref[mask] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_broadcast_and_strided_values_write_equals_numpy(
    spec: dict[str, Any], data: st.DataObject
) -> None:
    """Values that are not the selection's C-contiguous shape: a scalar, a trailing
    part of the shape (broadcast), an F-ordered copy, a reversed (negative-stride) view."""
    a, ref = make(spec)
    sel = data.draw(basic_selections(spec["shape"]), label="selection")
    shape = ref[sel].shape
    kind = data.draw(st.sampled_from(["scalar", "broadcast", "fortran", "reversed"]), label="kind")
    full = random_values(shape, spec["dtype"], spec["seed"] + 3)
    value: Any
    if kind == "scalar":
        value = full.reshape(-1)[0] if full.size else random_values((1,), spec["dtype"], 1)[0]
    elif kind == "broadcast":
        keep = data.draw(st.integers(0, len(shape)), label="trailing dims")
        value = full[(0,) * (len(shape) - keep)] if full.size else full
    elif kind == "fortran":
        value = np.asfortranarray(full) if full.ndim else full  # (asfortranarray makes 0-d 1-d)
    else:
        value = full[tuple(slice(None, None, -1) for _ in shape)]
    a[sel] = value
    ref[sel] = value
    assert_same(a[...], ref)


@SETTINGS
@given(spec=array_specs(max_ndim=3), data=st.data())
def test_resize_sequence_equals_numpy_model(spec: dict[str, Any], data: st.DataObject) -> None:
    """Shrinking and growing, as zarr-python resizes: the overlap keeps its values; a chunk
    (shard) wholly beyond a new shape is deleted, so growing reads the fill value there,
    while a chunk the new edge cuts keeps its cells beyond the edge, which reappear when
    the array grows again. The model is the grid-aligned canvas the chunks cover."""
    if not spec["shape"]:
        return
    a, ref = make(spec)
    chunks = spec["chunks"]
    fill = np.asarray(a.fill_value, dtype=ref.dtype)

    def aligned(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(-(-n // c) * c for n, c in zip(shape, chunks, strict=True))

    canvas = np.full(aligned(ref.shape), fill, dtype=ref.dtype)
    canvas[tuple(slice(0, n) for n in ref.shape)] = ref
    for _ in range(data.draw(st.integers(1, 3), label="resizes")):
        new_shape = tuple(data.draw(st.integers(0, 2 * n + 3), label="dim") for n in spec["shape"])
        a.resize(new_shape)
        keep = aligned(new_shape)
        grown = np.full(tuple(map(max, canvas.shape, keep)), fill, dtype=ref.dtype)
        kept = tuple(slice(0, min(o, k)) for o, k in zip(canvas.shape, keep, strict=True))
        grown[kept] = canvas[kept]
        canvas = grown
        assert a.shape == new_shape
        assert_same(a[...], canvas[tuple(slice(0, n) for n in new_shape)])
