"""Values as the core takes and gives them, prepared in one place for both front doors
(``Array`` and zarr-python's codec pipeline): the bytes of fixed-size values in C order, or
in Fortran order where the chunks are stored that way; one value written everywhere; the
items of variable-length strings and bytes; the buffer a read decodes into.

Memory orders: numpy's ``ascontiguousarray`` / ``asfortranarray`` and copies between the two
orders, with Fortran-ordered data reordered on the core's threads (``_core.fortran_to_c``,
``rust/order.rs``) instead of by numpy's single-threaded strided copy. Other layouts, and
object arrays, are numpy's."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrox import _core
from zarrox.metadata.dtypes import cast_values

__all__ = [
    "as_values",
    "c_ordered",
    "copy_c_ordered",
    "finish_read",
    "fixed_payload",
    "fortran_memory",
    "fortran_ordered",
    "one_value",
    "read_target",
    "var_array",
    "var_item",
    "var_items",
]


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


# --------------------------------------------------------------------------------------------
# Values written
# --------------------------------------------------------------------------------------------


def as_values(value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """``value`` as an array of ``dtype``, converted as zarr-python does: arrays are cast
    (``astype``, which wraps out-of-range integers as numpy does); Python scalars, lists and
    tuples are converted by ``np.asarray(value, dtype)``, which raises OverflowError for an
    integer out of range, ValueError for NaN into an integer type and TypeError for a
    complex into a real type, as numpy's ``a[i] = value`` does, instead of storing a wrapped
    or truncated value."""
    if isinstance(value, np.generic):
        value = np.asarray(value)  # a 0-d array, as np.asarray makes of other scalars
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else cast_values(value, dtype)
    return np.asarray(value, dtype=dtype)


def fortran_memory(a: np.ndarray, dtype: np.dtype[Any], fortran_chunks: bool) -> np.ndarray | None:
    """``a.T`` (C-ordered: ``a``'s memory) when numpy lays ``a`` (an output read into, or
    values written) out in Fortran order and not in C order, or it is one value, and it
    holds elements of ``dtype``, and the chunks are stored in Fortran order
    (``fortran_chunks``, e.g. a v2 ``order: "F"`` array); else None. The core reads into
    (writes from) that memory with ``order="F"``, no chunk transposed."""
    if not fortran_chunks or a.dtype != dtype:
        return None
    if a.ndim != 0 and (a.ndim < 2 or a.flags.c_contiguous or not a.flags.f_contiguous):
        return None
    return a.T


def fixed_payload(
    values: np.ndarray, dtype: np.dtype[Any], fortran_chunks: bool
) -> tuple[np.ndarray, bool]:
    """The bytes (a uint8 view) of fixed-size ``values`` as ``dtype``, and whether they are
    in Fortran order (:func:`fortran_memory`: passed as they lie, nothing transposed); else
    in C order (C-ordered values are gathered per chunk and each chunk transposed: faster
    than reordering all of them first)."""
    fortran = fortran_memory(values, dtype, fortran_chunks) if values.ndim else None
    if fortran is not None:
        return fortran.reshape(-1).view(np.uint8), True
    return c_ordered(as_values(values, dtype)).reshape(-1).view(np.uint8), False


def one_value(value: Any, dtype: np.dtype[Any]) -> bytes:
    """The bytes of the first element of ``value`` as ``dtype`` (:func:`as_values`): a
    write of one value to every selected element."""
    return as_values(value, dtype).reshape(-1)[:1].tobytes()


def var_item(v: Any, utf8: bool) -> str | bytes:
    """One variable-length element as the core takes it: str (``utf8``) or bytes; a string
    array takes any value as its ``str``, as numpy's string dtypes do."""
    if isinstance(v, str | bytes):
        return v
    if isinstance(v, np.str_ | np.bytes_):
        return v.item()  # type: ignore[no-any-return]
    if utf8:
        return str(v)
    raise TypeError(f"variable-length bytes values must be bytes, got {type(v).__name__}")


def var_items(values: np.ndarray, utf8: bool) -> list[str | bytes]:
    """The variable-length elements of ``values`` in C order (see :func:`var_item`)."""
    return [var_item(v, utf8) for v in values.reshape(-1).tolist()]


# --------------------------------------------------------------------------------------------
# Values read
# --------------------------------------------------------------------------------------------


def var_array(items: list[Any], shape: tuple[int, ...], dtype: Any = object) -> np.ndarray:
    """Variable-length elements read (C order) as an array of ``shape`` and ``dtype``."""
    if np.dtype(dtype) == object:
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
    else:
        arr = np.array(items, dtype=dtype)
    return arr.reshape(shape)


def read_target(out: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """The buffer a read of fixed-size elements of ``dtype`` decodes into for ``out``:
    ``out`` itself when it is C-ordered, writeable and of ``dtype``, else a C-ordered copy
    that :func:`finish_read` copies back."""
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.writeable:
        return out
    return c_ordered(cast_values(out, dtype))


def finish_read(out: np.ndarray, target: np.ndarray) -> None:
    """Copy what was read into ``target`` (from :func:`read_target`) to ``out``."""
    if target is not out:
        copy_c_ordered(out, cast_values(target, out.dtype))
