"""User selections of an array: which kind a key is (zarr-python's rules for ``a[...]``),
and its normalisation, which the Rust core does (``rust/selection.rs``: ellipsis expansion,
negative indices, bounds errors, slices, integer and boolean arrays, broadcast coordinates,
blocks of the grid). A :class:`Selection` holds the normalised selection, the shape of the
buffer the core reads into or writes from (integer-indexed dimensions kept, length 1) and
the shape the user sees (those dropped).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.metadata.chunk_grid import RectilinearGrid

Selection = _core.Selection


def basic_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """Integers, slices with positive steps, and one Ellipsis."""
    return _core.Selection.basic(selection, list(shape))


def orthogonal_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """Basic selection plus, per dimension, integer arrays (any order, repeats) or
    boolean masks: the outer product of the per-dimension selections."""
    return _core.Selection.orthogonal(selection, list(shape))


def coordinate_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """One integer (array) per dimension, broadcast together; the result has the
    broadcast shape, one element per coordinate (numpy's advanced indexing)."""
    return _core.Selection.coordinate(selection, list(shape))


def mask_selection(selection: Any, shape: tuple[int, ...]) -> Selection:
    """A boolean array of the array's shape; the result is 1-d, in C order."""
    return _core.Selection.mask(selection, list(shape))


def block_selection(
    selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...] | RectilinearGrid
) -> Selection:
    """Whole blocks (chunks of the grid: a chunk shape, or a rectilinear grid whose block
    ``i`` is its chunk ``i``) by block index: integers keep their dimension; slices of blocks
    with step 1."""
    grid = chunks.core_json() if isinstance(chunks, RectilinearGrid) else list(chunks)
    return _core.Selection.block(selection, list(shape), grid)


def _as_tuple(selection: Any) -> tuple[Any, ...]:
    return selection if isinstance(selection, tuple) else (selection,)


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


def is_fancy(selection: Any) -> bool:
    """Whether a selection holds index arrays or lists (not only ints and slices)."""
    return any(isinstance(s, list | np.ndarray) and np.ndim(s) > 0 for s in _as_tuple(selection))


def is_mask(selection: Any, shape: tuple[int, ...]) -> bool:
    sel = _as_tuple(selection)
    return (
        len(sel) == 1
        and isinstance(sel[0], np.ndarray)
        and sel[0].dtype == bool
        and sel[0].shape == shape
        and len(shape) > 0
    )


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
