"""Fortran-ordered values: zarrox reorders them on the core's threads
(``_core.fortran_to_c``) rather than with numpy's single-threaded strided copy, for
v2 ``order: "F"`` reads and for F-ordered values given to writes. The results must be
exactly numpy's and zarr-python's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrox
from zarrox import _core
from zarrox.values import c_ordered, copy_c_ordered, fortran_ordered

DTYPES = [
    "u1",
    "<i2",
    ">i2",
    "<f4",
    "<f8",
    "<c16",
    "?",
    "<M8[s]",
    "V3",
    [("a", "<i4"), ("b", "u1")],
]
SHAPES = [(3, 5), (1, 7), (40, 33), (2, 3, 4), (33, 2, 65), (5, 1, 1, 3), (2, 3, 2, 3, 2), (0, 4)]


def _values(shape: tuple[int, ...], dtype: object) -> np.ndarray:
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    raw = np.random.default_rng(len(shape)).integers(0, 256, int(np.prod(shape)) * dt.itemsize)
    return raw.astype(np.uint8).view(dt).reshape(shape)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reordering_is_numpys(shape: tuple[int, ...], dtype: object) -> None:
    c = _values(shape, dtype)
    f = fortran_ordered(c)
    assert f.flags.f_contiguous and f.dtype == c.dtype
    assert f.tobytes(order="A") == np.asfortranarray(c).tobytes(order="A")
    back = c_ordered(f)
    assert back.flags.c_contiguous
    assert back.tobytes() == c.tobytes()


def test_other_layouts_are_left_to_numpy() -> None:
    a = np.arange(24, dtype="i4").reshape(4, 6)[:, ::2]  # neither C nor F contiguous
    assert c_ordered(a).tobytes() == np.ascontiguousarray(a).tobytes()
    objects = np.asfortranarray(np.array([["a", "bb"], ["c", "d"]], dtype=object))
    assert c_ordered(objects).flags.c_contiguous


def test_buffers_that_do_not_match_the_shape_are_value_errors() -> None:
    src = np.zeros(12, dtype=np.uint8)
    with pytest.raises(ValueError, match=r"shape \[2, 3\] and 4-byte elements has 24 bytes"):
        _core.fortran_to_c(src, np.zeros(12, dtype=np.uint8), [2, 3], 4)
    with pytest.raises(ValueError, match="too large"):
        _core.fortran_to_c(src, np.zeros(12, dtype=np.uint8), [2**62, 2**62], 1)


@pytest.mark.parametrize("dtype", ["<u2", ">f8", "V5"])
def test_v2_fortran_arrays_read_as_zarr_python_reads_them(tmp_path: Path, dtype: str) -> None:
    values = _values((37, 20, 9), dtype)
    z = zarr.create_array(
        tmp_path / "f",
        shape=values.shape,
        chunks=(16, 8, 4),
        dtype=values.dtype,
        zarr_format=2,
        order="F",
        fill_value=None,
        compressors=None,
    )
    z[...] = values
    ours = zarrox.open_array(tmp_path / "f", mode="r")
    got = ours[...]
    want = zarr.open_array(tmp_path / "f", mode="r")[...]
    # zarrox decodes to native byte order (zarr-python keeps the stored one)
    assert got.flags.f_contiguous and got.dtype == want.dtype.newbyteorder("=")
    assert got.tobytes(order="A") == np.asfortranarray(want.astype(got.dtype)).tobytes(order="A")
    part = ours[3:30, 2:, 1:8]
    assert part.flags.f_contiguous
    np.testing.assert_array_equal(part, values[3:30, 2:, 1:8])


@pytest.mark.parametrize("order", ["C", "F"])
def test_fortran_ordered_values_write_as_given(tmp_path: Path, order: str) -> None:
    values = np.asfortranarray(_values((30, 17, 5), "<i4"))
    a = zarrox.create_array(
        tmp_path / "a",
        shape=values.shape,
        chunks=(8, 8, 2),
        dtype="<i4",
        zarr_format=2,
        order=order,
    )
    a[...] = values
    a[1:20, 3:9, 2] = np.asfortranarray(values[:19, :6, 0] * 3)
    want = values.copy()
    want[1:20, 3:9, 2] = values[:19, :6, 0] * 3
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[...], want)


def test_copies_fill_fortran_and_other_outputs() -> None:
    src = _values((9, 4, 7), "<i2")
    outs = [
        np.empty((9, 4, 7), dtype="<i2", order="F"),
        np.empty((9, 4, 7), dtype="<i2"),
        np.empty((9, 8, 7), dtype="<i2")[:, ::2],
    ]
    for out in outs:
        copy_c_ordered(out, src)
        np.testing.assert_array_equal(out, src)


def test_the_pipeline_reads_and_writes_fortran_order_as_zarr_python(tmp_path: Path) -> None:
    values = np.asfortranarray(_values((37, 20, 9), "<u2"))
    want = values.copy()
    want[1:30, 2:9, 3] = values[:29, :7, 0] + 1
    pipeline = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    with zarr.config.set(pipeline):
        z = zarr.create_array(
            tmp_path / "f",
            shape=values.shape,
            chunks=(16, 8, 4),
            dtype="<u2",
            zarr_format=2,
            order="F",
            compressors=None,
        )
        z[...] = values
        z[1:30, 2:9, 3] = np.asfortranarray(values[:29, :7, 0] + 1)
        got = z[...]
        part = z[2:35, 1:19, 2:8]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(part, want[2:35, 1:19, 2:8])
    # the default pipeline reads the same bytes back
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "f", mode="r")[...], want)
