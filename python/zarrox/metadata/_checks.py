"""Checks of JSON values that every metadata format (v1, v2, draft and final v3, codecs,
data types) shares."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard, TypeVar

import numpy as np

from zarrox.errors import MetadataError

T = TypeVar("T")

#: The largest extent of a shape or chunk shape: 2**64 - 1, what the Rust core counts in.
MAX_EXTENT = 2**64 - 1


def document_where(key: str, path: str | None) -> str:
    """The prefix of a legacy document's error messages: ``".zarray at 'a/b': "`` (empty if no
    path)."""
    return "" if path is None else f"{key} at {path!r}: "


def parse_json(data: bytes | str, where: str) -> Any:
    """Decode a metadata document (bare ``NaN``/``Infinity`` accepted, as Python's json module
    writes them); invalid JSON, UTF-8, nesting too deep for Python to decode and integers of
    more digits than Python converts are a MetadataError starting with ``where``."""
    try:
        return json.loads(data)
    except RecursionError:
        raise MetadataError(f"{where}invalid JSON: nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise MetadataError(f"{where}invalid JSON: {e}") from None


def check_object(doc: object, where: str) -> Mapping[str, Any]:
    """``doc``, which must be a JSON object: a MetadataError starting with ``where`` otherwise."""
    if not isinstance(doc, Mapping):
        raise MetadataError(f"{where}expected a JSON object, got {type(doc).__name__}")
    return doc


def load_json_object(data: bytes | str, where: str) -> dict[str, Any]:
    """Decode JSON that must be an object; errors start with ``where``."""
    doc: dict[str, Any] = parse_json(data, where)
    check_object(doc, where)
    return doc


def require_members(doc: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    """``doc`` has every member of ``keys``: a MetadataError naming the first it lacks
    otherwise."""
    for key in keys:
        if key not in doc:
            raise MetadataError(f"{where}missing member {key!r}")


def check_zarr_format(doc: Mapping[str, Any], zarr_format: int, where: str) -> None:
    """``doc`` has the member ``zarr_format``, the integer ``zarr_format`` (v2 and v3)."""
    require_members(doc, ("zarr_format",), where)
    fmt = doc["zarr_format"]
    if not is_int(fmt) or fmt != zarr_format:
        raise MetadataError(f"{where}zarr_format: expected {zarr_format}, got {fmt!r}")


def is_text(value: object) -> bool:
    """A string that UTF-8 can encode: no lone surrogates (JSON's ``"\\ud800"`` escapes
    decode to them), so that it can become a store key or go to Rust."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_scalar(value: object) -> object:
    """``json.dumps``' ``default``: numpy scalars as the Python numbers JSON writes."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def json_default(obj: object) -> Any:
    """``json.dumps``' ``default`` for metadata documents: numpy arrays as lists, numpy
    scalars as the Python values JSON writes."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def copy_json(value: T) -> T:
    """A deep copy of a JSON value (dicts and lists of scalars; tuples too), made without
    recursion: documents nested deeper than Python's recursion limit allows copy.deepcopy to
    go (attributes 500 levels deep, which zarr-python reads) copy as well."""
    if isinstance(value, tuple):
        return tuple(copy_json(v) for v in value)  # type: ignore[return-value]
    if not isinstance(value, dict | list):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        src, dst = stack.pop()
        for key, item in src.items() if isinstance(src, dict) else enumerate(src):
            if isinstance(item, dict | list):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child))
            elif isinstance(item, tuple):
                child = copy_json(item)
            else:
                child = item
            if isinstance(dst, dict):
                dst[key] = child
            else:
                dst.append(child)
    return root  # type: ignore[no-any-return]


def is_int(value: object) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def is_json_array(value: object) -> TypeGuard[Sequence[Any]]:
    """A sequence as JSON arrays are read: not a string, bytes or an object."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | Mapping)


def int_tuple(value: object, label: str, where: str, *, positive: bool) -> tuple[int, ...]:
    """``value``, a JSON array of integers >= 1 (``positive``) or >= 0, as a tuple; a
    MetadataError naming ``where`` and ``label`` otherwise."""
    lowest = 1 if positive else 0
    if not is_json_array(value) or not all(is_int(v) and lowest <= v <= MAX_EXTENT for v in value):
        kind = "positive" if positive else "non-negative"
        raise MetadataError(
            f"{where}{label}: must be an array of {kind} integers below 2**64, got {value!r}"
        )
    return tuple(int(v) for v in value)


def check_chunks_length(
    chunks: Sequence[int], shape: Sequence[int], label: str, where: str
) -> None:
    """The chunk shape given (``label``) has one size per dimension of ``shape``."""
    if len(chunks) != len(shape):
        raise MetadataError(
            f"{where}{label} {list(chunks)} and shape {list(shape)} differ in length"
        )


def stored_chunk_sizes(
    value: object,
    label: str,
    where: str,
    shape: Sequence[int],
    unset: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """Chunk sizes as stored (v2 ``chunks``, v3 ``chunk_shape``), read as zarr-python 3.4
    reads them: JSON ``true`` (zarr-python 3.0 and 3.2 wrote it for ``chunks=True``) is 1;
    0 or ``false`` (zarr-python wrote them for zero-length axes before 3.4, and for
    ``chunks=(0,)``/``False`` from 2.18.7 to 3.2.1) is 1, or ``unset[d]`` (a sharded
    array's inner chunk size), with a warning when the axis is not empty: such an array
    holds only its fill value. Anything else must be a positive integer."""
    if not is_json_array(value):
        raise MetadataError(f"{where}{label}: must be an array of positive integers, got {value!r}")
    sizes: list[int] = []
    repaired: list[int] = []
    for d, v in enumerate(value):
        if v is True:
            sizes.append(1)
        elif v is False or (is_int(v) and v == 0):
            sizes.append(int(unset[d]) if unset is not None and d < len(unset) else 1)
            repaired.append(d)
        elif is_int(v) and v > 0:
            sizes.append(int(v))
        else:
            raise MetadataError(
                f"{where}{label}: must be an array of positive integers, got {value!r}"
            )
    if any(d < len(shape) and shape[d] > 0 for d in repaired):
        import warnings

        warnings.warn(
            f"{where}{label} {value!r}: a chunk size of 0 or false (as zarr-python wrote for "
            f"chunks=(0,) or False) is read as {sizes}; such an array holds only its fill "
            "value. Recreate it with the chunk shape you want, or store valid metadata "
            "(any metadata update, e.g. update_attributes({}), writes these sizes)",
            UserWarning,
            stacklevel=3,
        )
    return tuple(sizes)
