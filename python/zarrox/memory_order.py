"""Memory orders: numpy's ``ascontiguousarray`` / ``asfortranarray`` and copies between
the two orders, with Fortran-ordered data reordered on the core's threads
(``_core.fortran_to_c``, ``rust/order.rs``) instead of by numpy's single-threaded strided
copy. Other layouts, and object arrays, are numpy's."""

from __future__ import annotations

import numpy as np

from zarrox import _core

__all__ = ["c_ordered", "copy_c_ordered", "fortran_ordered"]


def c_ordered(a: np.ndarray) -> np.ndarray:
    """``np.ascontiguousarray(a)``; a Fortran-ordered ``a`` is reordered on the core's
    threads rather than by numpy's single-threaded strided copy."""
    if a.flags.c_contiguous or not a.flags.f_contiguous or a.dtype.hasobject:
        return np.ascontiguousarray(a)
    out = np.empty(a.shape, dtype=a.dtype)
    # ``a.T`` is C-ordered and ``out.T`` Fortran-ordered: the copy below, transposed.
    copy_c_ordered(out.T, a.T)
    return out


def fortran_ordered(a: np.ndarray) -> np.ndarray:
    """``np.asfortranarray(a)`` of a C-contiguous ``a``, reordered on the core's threads."""
    if a.flags.f_contiguous or not a.flags.c_contiguous or a.dtype.hasobject:
        return np.asfortranarray(a)
    out = np.empty(a.shape, dtype=a.dtype, order="F")
    copy_c_ordered(out, a)
    return out


def copy_c_ordered(out: np.ndarray, src: np.ndarray) -> None:
    """``out[...] = src`` for a C-contiguous ``src`` of ``out``'s shape and data type; an
    F-contiguous ``out`` is filled on the core's threads."""
    if (
        src.shape != out.shape
        or src.dtype != out.dtype
        or out.flags.c_contiguous
        or not out.flags.f_contiguous
        or not src.flags.c_contiguous
        or out.dtype.hasobject
    ):
        out[...] = src
        return
    _core.fortran_to_c(
        src.reshape(-1).view(np.uint8),
        out.T.reshape(-1).view(np.uint8),
        list(out.shape[::-1]),
        out.dtype.itemsize,
    )
