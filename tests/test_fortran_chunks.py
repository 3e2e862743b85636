"""Arrays whose chunks are stored in Fortran order (Zarr v2 ``order: "F"``, or a v3 chain
that begins with a ``transpose`` reversing every axis) read into Fortran-ordered results and
take Fortran-ordered values through the core's reversed view (``ArrayHandle.read(...,
fortran=True)``): the chunks' bytes go straight to the result, no chunk transposed. The
values, the memory order and the stored bytes must be those of the ordinary path and of
zarr-python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr

import zarrox

SHAPES = [((13, 7), (4, 3)), ((13, 7, 9), (4, 3, 5)), ((5, 6, 7, 8), (2, 3, 4, 5))]


def _values(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    raw = np.random.default_rng(seed).integers(
        0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize
    )
    values = raw.astype(np.uint8).view(dtype).reshape(shape)
    if values.dtype.kind == "f":
        values = np.nan_to_num(values)
    return values


def _store(kind: str, tmp_path: Path) -> Any:
    # "local": Rust reads and writes the files; "served": Python serves the chunks (sessions)
    return str(tmp_path / "a") if kind == "local" else {}


def _v2(store: Any, values: np.ndarray, chunks: tuple[int, ...], **kw: Any) -> zarrox.Array:
    return zarrox.create_array(
        store,
        shape=values.shape,
        chunks=chunks,
        dtype=values.dtype,
        zarr_format=2,
        order="F",
        **kw,
    )


def _selections(shape: tuple[int, ...]) -> list[tuple[str, Any]]:
    n = len(shape)
    return [
        ("basic", (slice(1, None, 2),) + (slice(None),) * (n - 1)),
        ("basic", (2,) + (slice(1, -1),) * (n - 1)),
        ("basic", (Ellipsis, 3)),
        ("basic", (slice(None, None, 3), 1)),
        ("oindex", (np.array([3, 0, 2, 2]), slice(None), np.array([1, 0, 6]))[:n]),
        ("oindex", (np.arange(shape[0]) % 3 == 0,) + (slice(None, 4),) * (n - 1)),
        ("vindex", tuple(np.array([0, 1, 2, 4]) % s for s in shape)),
        ("blocks", (slice(1, None), 0)),
    ]


def _numpy_selection(values: np.ndarray, how: str, sel: Any, chunks: tuple[int, ...]) -> Any:
    if how == "oindex":
        return values[
            np.ix_(
                *[
                    np.arange(s)[k]
                    for s, k in zip(
                        values.shape, sel + (slice(None),) * (values.ndim - len(sel)), strict=True
                    )
                ]
            )
        ]
    if how == "blocks":
        blocks = tuple(
            slice(k.start * c if k.start else None, None)
            if isinstance(k, slice)
            else slice(k * c, (k + 1) * c)
            for k, c in zip(sel, chunks[: len(sel)], strict=True)
        )
        return values[blocks]
    return values[sel]


@pytest.mark.parametrize("kind", ["local", "served"])
@pytest.mark.parametrize("dtype", ["<u2", ">f8", "V5", "|b1"])
@pytest.mark.parametrize(("shape", "chunks"), SHAPES, ids=str)
def test_reads_of_every_selection_are_numpys_in_fortran_order(
    tmp_path: Path, kind: str, dtype: str, shape: tuple[int, ...], chunks: tuple[int, ...]
) -> None:
    values = _values(shape, dtype)
    a = _v2(_store(kind, tmp_path), values, chunks, fill_value=None)
    assert a._handle.fortran_chunks and a._handle.in_rust == (kind == "local")
    a[...] = values
    whole = a[...]
    assert whole.flags.f_contiguous
    assert whole.tobytes(order="A") == np.asfortranarray(values.astype(whole.dtype)).tobytes(
        order="A"
    )
    for how, sel in _selections(shape):
        got = getattr(a, how)[sel] if how != "basic" else a[sel]
        want = _numpy_selection(values, how, sel, chunks)
        np.testing.assert_array_equal(got, want, err_msg=f"{how} {sel}")
        if got.ndim > 1:
            assert got.flags.f_contiguous, (how, sel)


@pytest.mark.parametrize("kind", ["local", "served"])
def test_missing_chunks_read_as_the_fill_value(tmp_path: Path, kind: str) -> None:
    values = _values((13, 7, 9), "<i4")
    a = _v2(_store(kind, tmp_path), values, (4, 3, 5), fill_value=-7)
    a[2:6, 1:5, 3:8] = values[2:6, 1:5, 3:8]
    want = np.full(values.shape, -7, dtype="<i4")
    want[2:6, 1:5, 3:8] = values[2:6, 1:5, 3:8]
    got = a[...]
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a[1:12:3, ::2, 4], want[1:12:3, ::2, 4])


@pytest.mark.parametrize("compressor", [None, {"id": "zstd", "level": 1}])
@pytest.mark.parametrize("value_order", ["C", "F"])
def test_writes_store_zarr_pythons_bytes(tmp_path: Path, compressor: Any, value_order: str) -> None:
    values = _values((13, 7, 9), "<u2")
    codec = numcodecs.get_codec(compressor) if compressor else None
    ours = _v2(str(tmp_path / "ours"), values, (4, 3, 5), compressors=codec, fill_value=0)
    theirs = zarr.create_array(
        tmp_path / "theirs",
        shape=values.shape,
        chunks=(4, 3, 5),
        dtype=values.dtype,
        zarr_format=2,
        order="F",
        compressors=codec,
        fill_value=0,
    )
    ours[...] = np.asarray(values, order=value_order)
    theirs[...] = values
    ours[2:11, 1:6, 4] = np.asarray(values[:9, :5, 1] + 1, order=value_order)
    theirs[2:11, 1:6, 4] = values[:9, :5, 1] + 1
    ours[5:, ::2] = 3
    theirs[5:, ::2] = 3
    names = sorted(p.name for p in (tmp_path / "theirs").iterdir() if not p.name.startswith("."))
    assert names == sorted(
        p.name for p in (tmp_path / "ours").iterdir() if not p.name.startswith(".")
    )
    for name in names:
        assert (tmp_path / "ours" / name).read_bytes() == (
            tmp_path / "theirs" / name
        ).read_bytes(), name


@pytest.mark.parametrize("kind", ["local", "served"])
def test_fortran_ordered_writes_of_every_kind_read_back(tmp_path: Path, kind: str) -> None:
    values = _values((13, 7, 9), "<i4")
    a = _v2(_store(kind, tmp_path), values, (4, 3, 5), fill_value=0)
    want = np.zeros(values.shape, dtype="<i4")
    a[...] = np.asfortranarray(values)
    want[...] = values
    a.oindex[[0, 5, 2], :, [8, 1]] = np.asfortranarray(np.full((3, 7, 2), 9, dtype="<i4"))
    want[np.ix_([0, 5, 2], range(7), [8, 1])] = 9
    a.vindex[[1, 2], [3, 4], [5, 6]] = [11, 12]
    want[[1, 2], [3, 4], [5, 6]] = [11, 12]
    a.blocks[1, 2] = np.asfortranarray(values[:4, :1] * 2)
    want[4:8, 6:7] = values[:4, :1] * 2
    a[3:12, ::3, 2:7] = np.asfortranarray(values[:9, :3, :5])
    want[3:12, ::3, 2:7] = values[:9, :3, :5]
    np.testing.assert_array_equal(a[...], want)


def test_fill_value_writes_delete_chunks_through_the_view(tmp_path: Path) -> None:
    values = _values((8, 6, 4), "<f4")
    a = _v2(str(tmp_path / "a"), values, (4, 3, 2), fill_value=0.0)
    a[...] = np.asfortranarray(values)
    assert len(a._stored_chunks()) == 8
    a[:4] = 0.0
    a[4:, :3] = np.zeros((4, 3, 4), dtype="<f4", order="F")
    stored = sorted(key.rsplit("/", 1)[-1] for key, _ in a._stored_chunks())
    assert stored == ["1.1.0", "1.1.1"]
    want = np.zeros_like(values)
    want[4:, 3:] = values[4:, 3:]
    np.testing.assert_array_equal(a[...], want)


def test_reads_into_a_fortran_ordered_out(tmp_path: Path) -> None:
    values = _values((13, 7, 9), "<i2")
    a = _v2(str(tmp_path / "a"), values, (4, 3, 5))
    a[...] = values
    out = np.empty((13, 7, 9), dtype="<i2", order="F")
    assert a.get_basic_selection(Ellipsis, out=out) is out
    np.testing.assert_array_equal(out, values)
    out = np.empty((5, 7, 3), dtype="<i2", order="F")
    a.get_orthogonal_selection((slice(2, 7), slice(None), [0, 4, 8]), out=out)
    np.testing.assert_array_equal(out, values[2:7][:, :, [0, 4, 8]])


@pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec")
def test_v3_sharded_chunks_in_fortran_order_read_as_zarr_python(tmp_path: Path) -> None:
    values = _values((20, 12, 10), "<u2")
    # the transpose outside the sharding codec: shards whose inner chunks are stored with
    # their axes reversed (zarr-python puts `filters` of a sharded array inside the shard)
    z = zarr.create_array(
        tmp_path / "s",
        shape=values.shape,
        chunks=(8, 12, 8),
        dtype=values.dtype,
        filters=[zarr.codecs.TransposeCodec(order=(2, 1, 0))],
        serializer=zarr.codecs.ShardingCodec(
            chunk_shape=(4, 6, 4),
            codecs=[zarr.codecs.BytesCodec(), zarr.codecs.ZstdCodec(level=1)],
        ),
        compressors=None,
    )
    assert [c["name"] for c in z.metadata.to_dict()["codecs"]] == ["transpose", "sharding_indexed"]
    z[...] = values
    a = zarrox.open_array(tmp_path / "s", mode="r+", config={"order": "F"})
    assert a._handle.fortran_chunks
    got = a[...]
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, values)
    np.testing.assert_array_equal(a[3:17, 5:, ::4], values[3:17, 5:, ::4])
    a[1:19, 2:11, 3] = np.asfortranarray(values[1:19, 2:11, 3] + 1)
    values[1:19, 2:11, 3] += 1
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "s", mode="r")[...], values)


def test_rectilinear_grids_reverse_their_edges() -> None:
    a = zarrox.create_array(
        {},
        shape=(10, 7),
        chunks=[[3, 7], [2, 5]],
        dtype="<i2",
        filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
        config={"order": "F"},
    )
    assert a._handle.fortran_chunks
    values = np.arange(70, dtype="<i2").reshape(10, 7)
    a[...] = np.asfortranarray(values)
    np.testing.assert_array_equal(a[...], values)
    np.testing.assert_array_equal(a[2:9, 1:6], values[2:9, 1:6])
    a[...] = values  # C-ordered: the chunks transposed one by one
    assert a[...].flags.f_contiguous
    np.testing.assert_array_equal(a[...], values)


@pytest.mark.parametrize(
    ("order", "filters", "fortran"),
    [
        ("C", None, False),
        ("F", None, True),
        ("C", [{"name": "transpose", "configuration": {"order": [0, 2, 1]}}], False),
        ("C", [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}], True),
    ],
)
def test_only_chunks_in_fortran_order_have_the_view(
    order: str, filters: Any, fortran: bool
) -> None:
    if filters is None:
        a = zarrox.create_array(
            {}, shape=(4, 5, 6), chunks=(2, 2, 2), dtype="i4", zarr_format=2, order=order
        )
    else:
        a = zarrox.create_array({}, shape=(4, 5, 6), chunks=(2, 2, 2), dtype="i4", filters=filters)
    assert a._handle.fortran_chunks is fortran
    one_d = zarrox.create_array({}, shape=(9,), chunks=(2,), dtype="i4", zarr_format=2, order="F")
    assert not one_d._handle.fortran_chunks


def test_the_view_refuses_points_and_arrays_without_it() -> None:
    f = zarrox.create_array({}, shape=(4, 5), chunks=(2, 2), dtype="u1", zarr_format=2, order="F")
    c = zarrox.create_array({}, shape=(4, 5), chunks=(2, 2), dtype="u1", zarr_format=2, order="C")
    points = zarrox._core.Selection.coordinate(([0, 1], [2, 3]), [4, 5])
    box = zarrox._core.Selection.basic((slice(None), slice(None)), [4, 5])
    buf = np.zeros(20, dtype=np.uint8)
    with pytest.raises(ValueError, match="needs an orthogonal selection"):
        f._handle.read(points, buf[:2], "F")
    with pytest.raises(ValueError, match="chunks are stored in Fortran order"):
        c._handle.read(box, buf, "F")


@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_the_pipeline_reads_and_writes_fortran_order_untransposed(
    tmp_path: Path, store_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarrox import pipeline as zp

    # per ChunkCodec call: whether it ran in Fortran order (a read asked for "F" returns
    # None when Rust cannot; a write asked for "F" can, as the view test below shows)
    flipped: list[bool] = []

    def recording(*args: Any) -> Any:
        kind = real(*args)
        kind.codec = _Recording(kind.codec, flipped)
        return kind

    real = zp._make_kind
    monkeypatch.setattr(zp, "_make_kind", recording)
    values = _values((13, 7, 9), "<u2")
    want = values.copy()
    store = str(tmp_path / "f") if store_kind == "local" else zarr.storage.MemoryStore()
    config = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    with zarr.config.set(config):
        z = zarr.create_array(
            store,
            shape=values.shape,
            chunks=(4, 3, 5),
            dtype="<u2",
            zarr_format=2,
            order="F",
            compressors=numcodecs.Zstd(level=1),
        )
        z[...] = np.asfortranarray(values)
        z[1:12, 2:6, 3] = np.asfortranarray(values[:11, :4, 0] + 1)
        want[1:12, 2:6, 3] = values[:11, :4, 0] + 1
        z[2, :, ::2] = 5
        want[2, :, ::2] = 5
        assert all(flipped) and len(flipped) == 3
        z[5:, 1] = values[5:, 1] + 2  # C-ordered: the chunks transposed one by one
        assert flipped[3:] == [False]
        want[5:, 1] = values[5:, 1] + 2
        got = z[...]
        assert got.flags.f_contiguous
        np.testing.assert_array_equal(got, want)
        for sel in [(slice(2, 11), slice(1, None), slice(None, None, 2)), (3, slice(None), 4)]:
            np.testing.assert_array_equal(z[sel], want[sel])
        np.testing.assert_array_equal(
            z.oindex[[0, 4, 2], :, [1, 8]], want[np.ix_([0, 4, 2], range(7), [1, 8])]
        )
        np.testing.assert_array_equal(
            z.vindex[[0, 4], [1, 2], [3, 8]], want[[0, 4], [1, 2], [3, 8]]
        )
    assert flipped.count(True) >= 5
    if store_kind == "local":
        # zarr-python's own pipeline reads the same bytes back
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "f"), mode="r")[...], want)


class _Recording:
    """A ``ChunkCodec`` noting, per read and write, whether it ran in Fortran order."""

    def __init__(self, codec: zarrox._core.ChunkCodec, flipped: list[bool]) -> None:
        self._codec = codec
        self._flipped = flipped

    def __getattr__(self, name: str) -> Any:
        return getattr(self._codec, name)

    def read(self, *args: Any) -> Any:
        got = self._codec.read(*args)
        if got is not None:  # (None: "F" refused, and a C-ordered read follows)
            self._flipped.append(args[-1] == "F")
        return got

    def write(self, *args: Any) -> Any:
        self._flipped.append(args[-1] == "F" and self._codec.fortran_chunks)
        return self._codec.write(*args)


def _codec(order: str) -> zarrox._core.ChunkCodec:
    """uint16 chunks of (4, 3) stored in C order, or in Fortran order (a chain that begins
    by reversing every axis)."""
    codecs: list[Any] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if order == "F":
        codecs.insert(0, {"name": "transpose", "configuration": {"order": [1, 0]}})
    return zarrox._core.ChunkCodec(json.dumps(codecs), [4, 3], '"uint16"', bytes(2))


@pytest.mark.parametrize("chunk_order", ["C", "F"])
def test_chunk_codec_takes_fortran_ordered_buffers(chunk_order: str) -> None:
    """``ChunkCodec.read``/``write`` with ``order="F"``: the buffer is the memory of a
    Fortran-ordered one (its ``.T``), the selections and shape as zarr-python has them.
    With chunks stored in Fortran order the chunk's bytes are that memory itself; a read
    Rust cannot do in that order returns None and reads nothing; a write it cannot do
    copies the value to C order itself. Either way the stored bytes are the C order's."""
    codec = _codec(chunk_order)
    assert codec.fortran_chunks is (chunk_order == "F")
    value = np.asfortranarray(np.arange(24, dtype="<u2").reshape(6, 4))
    chunk_sels = [(slice(0, 4), slice(0, 3)), (slice(0, 2), slice(0, 3))]
    value_sels = [(slice(0, 4), slice(1, 4)), (slice(4, 6), slice(0, 3))]
    whole = np.ascontiguousarray(value)

    def write(buffer: np.ndarray, order: Any) -> Any:
        flat = buffer.reshape(-1).view(np.uint8)
        args = (chunk_sels, value_sels, flat, [6, 4], True, [], None, order)
        return codec.write([None, None], ["a", "b"], [True, False], *args)

    stored = write(value.T, "F")
    assert stored == write(whole, "C")
    if chunk_order == "F":  # the chunk's bytes: the value's memory, untransposed
        assert stored[0] == np.asfortranarray(value[0:4, 1:4]).tobytes(order="A")

    def read(out: np.ndarray, order: Any, sels: Any = chunk_sels, drop: Any = ()) -> Any:
        flat = out.reshape(-1).view(np.uint8)
        return codec.read(stored, ["a", "b"], sels, value_sels, flat, [6, 4], drop, None, order)

    out = np.asfortranarray(np.zeros((6, 4), dtype="<u2"))
    got = read(out.T, "F")
    if chunk_order == "C":
        assert got is None and not out.any()  # nothing read: the caller reads in C order
    else:
        assert got == [True, True]
        want = np.zeros((6, 4), dtype="<u2")
        want[0:4, 1:4] = value[0:4, 1:4]
        want[4:6, 0:3] = value[4:6, 0:3]
        np.testing.assert_array_equal(out, want)
        # an index array per dimension is still a box: read in that order too, and right
        box_sels = [(np.array([0, 2, 3]), slice(0, 3))]
        one = (["a"], box_sels, [(slice(0, 3), slice(1, 4))])
        c_out, f_out = np.zeros((6, 4), dtype="<u2"), np.asfortranarray(np.zeros((6, 4), "<u2"))
        for buffer, order in ((c_out, "C"), (f_out.T, "F")):
            flat = buffer.reshape(-1).view(np.uint8)
            assert codec.read(stored[:1], *one, flat, [6, 4], None, None, order) == [True]
        np.testing.assert_array_equal(f_out, c_out)
        assert c_out[0:3, 1:4].tolist() == value[[0, 2, 3], 1:4].tolist()
        # not in that order: points (flat indices), which read nothing
        points = ([np.array([0, 5])], [np.array([1, 2])])
        flat = f_out.T.reshape(-1).view(np.uint8)
        assert codec.read(stored[:1], ["a"], *points, flat, [6, 4], None, None, "F") is None
    with pytest.raises(ValueError, match="memory order"):
        read(out.T, "A")
