"""Normalize user selections into per-dimension selections for the Rust core.

Each dimension becomes ``(start, stop, step)`` or a uint64 array of indices;
integer indices keep their dimension (length 1) in the buffer and are dropped
from the result's shape. The chunk projection itself happens in Rust.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox.errors import BoundsCheckError, NegativeStepError, VindexInvalidSelectionError
from zarrox.metadata.chunk_grid import RectilinearGrid

DimSelection = tuple[int, int, int] | np.ndarray


@dataclass(frozen=True)
class Selection:
    """A normalized selection of an array."""

    #: one entry per array dimension, as the Rust core takes it
    dims: list[DimSelection]
    #: shape of the buffer Rust reads into or writes from (one entry per dimension)
    buffer_shape: tuple[int, ...]
    #: shape of the result the user sees (integer-indexed dimensions dropped)
    result_shape: tuple[int, ...]


def _as_tuple(selection: Any) -> tuple[Any, ...]:
    return selection if isinstance(selection, tuple) else (selection,)


def _expand_ellipsis(selection: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    n_ellipsis = sum(1 for s in selection if s is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ellipsis == 1:
        i = next(k for k, s in enumerate(selection) if s is Ellipsis)
        fill = (slice(None),) * (ndim - (len(selection) - 1))
        selection = selection[:i] + fill + selection[i + 1 :]
    if len(selection) > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, "
            f"but {len(selection)} were indexed"
        )
    return selection + (slice(None),) * (ndim - len(selection))


def _is_integer(s: Any) -> bool:
    if isinstance(s, bool | np.bool_):
        return False
    if isinstance(s, np.ndarray):
        return s.ndim == 0 and s.dtype.kind in "iu"
    try:
        operator.index(s)
    except TypeError:
        return False
    return True


def _integer(s: Any, n: int, dim: int) -> int:
    i = operator.index(s.item() if isinstance(s, np.ndarray) else s)
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise BoundsCheckError(
            f"index {operator.index(s if not isinstance(s, np.ndarray) else s.item())} "
            f"is out of bounds for axis {dim} with size {n}"
        )
    return i


def _slice(s: slice, n: int) -> tuple[int, int, int]:
    if s.step is not None and operator.index(s.step) == 0:
        raise ValueError("slice step cannot be zero")  # as numpy and zarr-python say
    if s.step is not None and operator.index(s.step) < 1:
        raise NegativeStepError("only slices with step >= 1 are supported")
    start, stop, step = s.indices(n)
    return (start, max(stop, start), step)


def _slice_len(start: int, stop: int, step: int) -> int:
    return max(0, -(-(stop - start) // step))


def _as_index_array(s: Any) -> np.ndarray:
    """An index array from an array or a (nested) list. numpy turns lists holding integers
    beyond int64 (indices into dimensions of up to 2**64 - 1) into floats or objects; those
    keep their exact values, as an object array of Python ints."""
    arr = np.asarray(s)
    if not isinstance(s, np.ndarray) and arr.size and arr.dtype.kind in "fO":
        exact = np.asarray(s, dtype=object)
        if all(_is_integer(x) for x in exact.flat):
            return exact
    return arr


def _normalized(arr: np.ndarray, n: int, dim: int) -> np.ndarray:
    """Integer indices (negative ones counting from the end) as uint64 in ``[0, n)``, for any
    extent ``n`` below 2**64: no arithmetic here wraps or overflows int64."""
    if arr.dtype == object:
        flat = [operator.index(x) for x in arr.flat]
        out = []
        for i in flat:
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise BoundsCheckError(f"index {i} is out of bounds for axis {dim} with size {n}")
            out.append(j)
        return np.array(out, dtype=np.uint64).reshape(arr.shape)
    extent = np.uint64(n)
    if arr.dtype.kind == "u":
        idx = arr.astype(np.uint64)
        bad = idx >= extent
    else:
        signed = arr.astype(np.int64)
        negative = signed < 0
        as_unsigned = signed.view(np.uint64)
        # |i| of the negative ones (two's complement, exact for int64's minimum)
        magnitude = np.uint64(0) - as_unsigned
        bad = np.where(negative, magnitude > extent, as_unsigned >= extent)
        idx = np.where(negative, extent - np.minimum(magnitude, extent), as_unsigned)
    if bad.any():
        raise BoundsCheckError(f"index {arr[bad][0]} is out of bounds for axis {dim} with size {n}")
    return np.ascontiguousarray(idx, dtype=np.uint64)


def _index_array(s: Any, n: int, dim: int) -> np.ndarray:
    arr = _as_index_array(s)
    if arr.ndim != 1:
        raise IndexError(f"index arrays must be 1-dimensional (axis {dim})")
    if arr.dtype == bool:
        if arr.shape[0] != n:
            raise IndexError(
                f"boolean index of length {arr.shape[0]} does not match axis {dim} of size {n}"
            )
        return np.flatnonzero(arr).astype(np.uint64)
    if arr.size == 0:
        return np.zeros(0, dtype=np.uint64)
    if arr.dtype.kind not in "iuO":
        raise IndexError(
            f"arrays used as indices must be of integer or boolean type, got {arr.dtype}"
        )
    return _normalized(arr, n, dim)


def _unsupported(s: Any) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`) and integer or boolean arrays "
        f"are valid indices, got {type(s).__name__}"
    )


def basic_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """Integers, slices with positive steps, and one Ellipsis."""
    sel = _expand_ellipsis(_as_tuple(selection), len(shape))
    dims: list[DimSelection] = []
    buffer_shape: list[int] = []
    result_shape: list[int] = []
    for dim, (s, n) in enumerate(zip(sel, shape, strict=True)):
        if _is_integer(s):
            i = _integer(s, n, dim)
            dims.append((i, i + 1, 1))
            buffer_shape.append(1)
        elif isinstance(s, slice):
            start, stop, step = _slice(s, n)
            dims.append((start, stop, step))
            length = _slice_len(start, stop, step)
            buffer_shape.append(length)
            result_shape.append(length)
        else:
            raise _unsupported(s)
    return Selection(dims, tuple(buffer_shape), tuple(result_shape))


def orthogonal_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """Basic selection plus, per dimension, integer arrays (any order, repeats) or
    boolean masks: the outer product of the per-dimension selections."""
    sel = _expand_ellipsis(_as_tuple(selection), len(shape))
    dims: list[DimSelection] = []
    buffer_shape: list[int] = []
    result_shape: list[int] = []
    for dim, (s, n) in enumerate(zip(sel, shape, strict=True)):
        if _is_integer(s):
            i = _integer(s, n, dim)
            dims.append((i, i + 1, 1))
            buffer_shape.append(1)
        elif isinstance(s, slice):
            start, stop, step = _slice(s, n)
            dims.append((start, stop, step))
            length = _slice_len(start, stop, step)
            buffer_shape.append(length)
            result_shape.append(length)
        elif isinstance(s, list | np.ndarray):
            idx = _index_array(s, n, dim)
            dims.append(idx)
            buffer_shape.append(idx.shape[0])
            result_shape.append(idx.shape[0])
        else:
            raise _unsupported(s)
    return Selection(dims, tuple(buffer_shape), tuple(result_shape))


def is_fancy(selection: Any) -> bool:
    """Whether a selection holds index arrays or lists (not only ints and slices)."""
    return any(isinstance(s, list | np.ndarray) and np.ndim(s) > 0 for s in _as_tuple(selection))


def _points(arrays: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """Broadcast per-dimension integer index arrays into (K, ndim) uint64 points."""
    try:
        parts = np.broadcast_arrays(*[_as_index_array(a) for a in arrays])
    except ValueError as e:
        raise IndexError(f"coordinate arrays could not be broadcast together: {e}") from None
    result_shape = parts[0].shape if parts else ()
    cols = []
    for dim, (p, n) in enumerate(zip(parts, shape, strict=True)):
        if p.size and p.dtype.kind not in "iuO":
            raise IndexError(
                f"coordinate selections need integer arrays, got {p.dtype} for axis {dim}"
            )
        cols.append(_normalized(p.reshape(-1), n, dim) if p.size else np.zeros(0, np.uint64))
    k = math.prod(result_shape)
    points = np.stack(cols, axis=1) if cols else np.zeros((k, 0), dtype=np.uint64)
    return np.ascontiguousarray(points, dtype=np.uint64), tuple(result_shape)


def coordinate_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """One integer (array) per dimension, broadcast together; the result has the
    broadcast shape, one element per coordinate (numpy's advanced indexing)."""
    sel = _as_tuple(selection)
    if len(shape) == 0:
        raise IndexError("coordinate selection is not possible on a 0-dimensional array")
    if len(sel) != len(shape):
        raise IndexError(
            f"coordinate selection needs one index array per dimension ({len(shape)}), "
            f"got {len(sel)}"
        )
    for s in sel:
        if isinstance(s, slice) or s is Ellipsis or isinstance(s, bool | np.bool_):
            raise VindexInvalidSelectionError(
                "coordinate selections take integer arrays only; use oindex for slices"
            )
        if isinstance(s, np.ndarray) and s.dtype == bool:
            raise VindexInvalidSelectionError(
                "boolean arrays in a coordinate selection: use a mask selection"
            )
    # As in zarr-python, an integer is a coordinate array of length 1: one element
    # selected by integers comes back as an array of shape (1,).
    sel = tuple([s] if _is_integer(s) and not isinstance(s, np.ndarray) else s for s in sel)
    points, result_shape = _points(sel, shape)
    return Selection(points, (points.shape[0],), result_shape)  # type: ignore[arg-type]


def mask_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """A boolean array of the array's shape; the result is 1-d, in C order."""
    sel = _as_tuple(selection)
    mask = np.asarray(sel[0]) if len(sel) == 1 else None
    if mask is None or mask.dtype != bool or mask.shape != shape:
        raise IndexError(f"a mask selection is one boolean array of shape {shape}")
    if len(shape) == 0:
        raise IndexError("mask selection is not possible on a 0-dimensional array")
    points = np.ascontiguousarray(np.argwhere(mask), dtype=np.uint64)
    return Selection(points, (points.shape[0],), (points.shape[0],))  # type: ignore[arg-type]


def is_mask(selection: Any, shape: tuple[int, ...]) -> bool:
    sel = _as_tuple(selection)
    return (
        len(sel) == 1
        and isinstance(sel[0], np.ndarray)
        and sel[0].dtype == bool
        and sel[0].shape == shape
        and len(shape) > 0
    )


def block_selection(
    selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...] | RectilinearGrid
) -> Selection:
    """Whole blocks (chunks of the grid: a chunk shape, or a rectilinear grid whose block
    ``i`` is its chunk ``i``) by block index: integers keep their dimension; slices of blocks
    with step 1."""
    rect = chunks if isinstance(chunks, RectilinearGrid) else None

    def n_blocks(dim: int) -> int:
        if rect is not None:
            return rect.nchunks(dim, shape[dim])
        return -(-shape[dim] // chunks[dim])  # type: ignore[index]

    def offset(dim: int, b: int) -> int:
        """Where block ``b`` of ``dim`` starts (the extent past the last block)."""
        if b >= n_blocks(dim):
            return shape[dim]
        start = rect.chunk(dim, b)[0] if rect is not None else b * chunks[dim]  # type: ignore[index]
        return min(start, shape[dim])

    sel = _expand_ellipsis(_as_tuple(selection), len(shape))
    slices: list[slice] = []
    for dim, s in enumerate(sel):
        nb = n_blocks(dim)
        if _is_integer(s):
            b = operator.index(s.item() if isinstance(s, np.ndarray) else s)
            if b < 0:
                b += nb
            if not 0 <= b < nb:
                raise BoundsCheckError(
                    f"block index {s} is out of bounds for axis {dim} with {nb} blocks"
                )
            slices.append(slice(offset(dim, b), offset(dim, b + 1)))
        elif isinstance(s, slice):
            if s.step == 0:
                raise ValueError("slice step cannot be zero")
            if s.step not in (None, 1):
                raise IndexError("block selections support slices with step 1 only")
            start, stop, _ = s.indices(nb)
            stop = max(stop, start)
            slices.append(slice(offset(dim, start), offset(dim, stop)))
        else:
            raise IndexError(f"block selections take integers and slices, got {type(s).__name__}")
    return basic_selection(tuple(slices), shape)


def is_pure_fancy(selection: Any, shape: tuple[int, ...]) -> bool:
    """zarr-python's rule for ``a[...]``: a full-shape boolean mask, or one integer
    or integer array per dimension with at least one array, is a vindex selection."""
    if is_mask(selection, shape):
        return True
    sel = _as_tuple(selection)
    if len(sel) != len(shape) or not shape:
        return False
    arrays = 0
    for s in sel:
        if isinstance(s, list | np.ndarray) and np.ndim(s) > 0:
            if np.asarray(s).dtype == bool:
                return False
            arrays += 1
        elif not _is_integer(s):
            return False
    return arrays > 0


def is_orthogonal_basic(selection: Any, ndim: int) -> bool:
    """zarr-python's rule for ``a[...]`` without index arrays: Python integers and
    slices (no Ellipsis, no numpy integers) go through orthogonal indexing, whose
    result is an array (0-d for one element); anything else through basic indexing,
    whose result for one element is a numpy scalar."""
    sel = _as_tuple(selection)
    return ndim > 0 and len(sel) <= ndim and all(isinstance(s, int | slice) for s in sel)
