"""Zarr v3 metadata: ``zarr.json`` documents for arrays and groups.

Reading is strict (the spec's rules, plus what zarr-python 3.1 writes); writing produces the
documents zarr-python 3.1 writes, member for member and in the same order, so that
``dumps(meta.to_json())`` is byte-identical to zarr-python's ``zarr.json``.

Every error message starts with the node, e.g. ``"zarr.json at 'a/b': missing member
'shape'"``. Malformed metadata raises :class:`zarrox.errors.MetadataError`; valid metadata
using something zarrox does not implement raises :class:`zarrox.errors.UnsupportedError`.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata.codecs import (
    _where,
    build_codecs,
    codecs_to_json,
    normalize_codecs,
    validate_codecs,
)

__all__ = [
    "CORE_DATA_TYPES",
    "ArrayMetadataV3",
    "GroupMetadataV3",
    "cast_fill_value",
    "data_type_name",
    "default_fill_value",
    "dumps",
    "fill_value_bytes",
    "fill_value_to_json",
    "loads",
    "parse_data_type",
    "parse_fill_value",
    "parse_node",
]

# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------

_NAMED_TYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(name)
    for name in (
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
    )
}
_RAW_RE = re.compile(r"r([0-9]+)")


class _CoreDataTypes(Mapping[str, np.dtype[Any]]):
    """Read-only mapping: v3 core data type name -> numpy dtype in native byte order.

    Iterates over the 14 named types; lookups also resolve raw bits ``r<N>`` (``N`` a positive
    multiple of 8) to ``np.dtype(f"V{N // 8}")``.
    """

    def __getitem__(self, key: str) -> np.dtype[Any]:
        if key in _NAMED_TYPES:
            return _NAMED_TYPES[key]
        if isinstance(key, str):
            m = _RAW_RE.fullmatch(key)
            if m and int(m.group(1)) > 0 and int(m.group(1)) % 8 == 0:
                return np.dtype(f"V{int(m.group(1)) // 8}")
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMED_TYPES)

    def __len__(self) -> int:
        return len(_NAMED_TYPES)

    def __repr__(self) -> str:
        return f"CORE_DATA_TYPES({dict(_NAMED_TYPES)!r} + r<N>)"


CORE_DATA_TYPES: Mapping[str, np.dtype[Any]] = _CoreDataTypes()


def _is_raw(data_type: str) -> bool:
    return data_type.startswith("r") and data_type not in _NAMED_TYPES


def parse_data_type(value: object, *, path: str | None = None) -> tuple[str, np.dtype[Any]]:
    """The ``data_type`` member -> ``(v3 name, native numpy dtype)``.

    Accepts a core name (``"float32"``, ``"r16"``) or an object ``{"name": <core name>}``
    without configuration. Other names (extension data types) raise UnsupportedError.
    """
    where = _where(path)
    if isinstance(value, Mapping):
        unknown = sorted(
            str(k) for k in value if k not in ("name", "configuration", "must_understand")
        )
        if unknown:
            raise MetadataError(f"{where}data_type: unknown member(s) {unknown} in {dict(value)!r}")
        name = value.get("name")
        if not isinstance(name, str) or not name:
            raise MetadataError(
                f"{where}data_type: 'name' must be a non-empty string, got {name!r}"
            )
        if value.get("must_understand", True) is not True:
            raise MetadataError(
                f'{where}data_type: "must_understand" must not be false for a data type'
            )
        cfg = value.get("configuration", {})
        if not isinstance(cfg, Mapping):
            raise MetadataError(f"{where}data_type.configuration: must be an object, got {cfg!r}")
        if cfg and name in CORE_DATA_TYPES:
            raise MetadataError(
                f"{where}data_type: core data type {name!r} takes no configuration, got {cfg!r}"
            )
        if cfg:
            raise UnsupportedError(f"{where}unsupported data type {name!r} (configuration {cfg!r})")
        value = name
    if not isinstance(value, str):
        raise MetadataError(
            f"{where}data_type: must be a data type name or an object, got {value!r}"
        )
    try:
        return value, CORE_DATA_TYPES[value]
    except KeyError:
        pass
    if _RAW_RE.fullmatch(value):
        raise MetadataError(
            f"{where}data_type: raw data type {value!r} must have a positive number of bits "
            "that is a multiple of 8"
        )
    raise UnsupportedError(f"{where}unsupported data type {value!r}")


def data_type_name(dtype: object, *, path: str | None = None) -> str:
    """Numpy dtype (anything ``np.dtype()`` accepts, any byte order) -> v3 data type name.

    Unstructured void dtypes map to raw bits ``r<8 * itemsize>``. Errors name the
    node at ``path`` when given.
    """
    where = _where(path)
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as e:
        raise UnsupportedError(f"{where}unsupported data type {dtype!r}: {e}") from None
    if dt.kind == "V":
        # Only plain void is raw bits: ml_dtypes' types (bfloat16, float8_*, int4)
        # also have kind "V" but are numbers.
        if dt.type is np.void and dt.fields is None and dt.subdtype is None and dt.itemsize > 0:
            return f"r{8 * dt.itemsize}"
        what = (
            "structured and sub-array dtypes have no v3 core type"
            if dt.type is np.void
            else "not a v3 core data type"
        )
        raise UnsupportedError(f"{where}unsupported data type {dt!r}: {what}")
    if dt.kind in "biufc" and dt.subdtype is None:
        name = dt.newbyteorder("=").name
        if name in _NAMED_TYPES:
            return name
    raise UnsupportedError(
        f"{where}unsupported data type {dt!r}: the v3 core data types are "
        f"{sorted(_NAMED_TYPES)} and r<N>"
    )


# --------------------------------------------------------------------------------------------
# Fill values
# --------------------------------------------------------------------------------------------

_FLOAT_BITS = {2: np.dtype("uint16"), 4: np.dtype("uint32"), 8: np.dtype("uint64")}
#: The NaN denoted by "NaN": sign 0, mantissa MSB 1, all other mantissa bits 0.
_CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _parse_float(value: object, fdtype: np.dtype[Any], where: str, label: str) -> np.generic:
    """One float per the spec's JSON forms -> numpy scalar of ``fdtype`` (bit-exact for hex)."""
    size = fdtype.itemsize
    if isinstance(value, str):
        if value == "NaN":
            return np.array(_CANONICAL_NAN[size], dtype=_FLOAT_BITS[size]).view(fdtype)[()]
        if value == "Infinity":
            return fdtype.type(np.inf)
        if value == "-Infinity":
            return fdtype.type(-np.inf)
        if re.fullmatch(r"0x[0-9a-fA-F]+", value):
            ndigits = 2 * size
            if len(value) != 2 + ndigits:
                raise MetadataError(
                    f"{where}{label}: hex float {value!r} must have exactly {ndigits} hex "
                    f"digits for {fdtype.name}"
                )
            bits = int(value, 16)
            return np.array(bits, dtype=_FLOAT_BITS[size]).view(fdtype)[()]
        raise MetadataError(
            f"{where}{label}: {value!r} is not a valid float fill value (use a number, "
            f'"NaN", "Infinity", "-Infinity" or a {2 * size}-digit hex string "0x...")'
        )
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise MetadataError(
            f"{where}{label}: expected a number or a special float string for "
            f"{fdtype.name}, got {value!r}"
        )
    if isinstance(value, np.complexfloating):
        raise MetadataError(f"{where}{label}: expected a real number, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an integer too large for float64
        as_float = math.inf if value > 0 else -math.inf  # type: ignore[operator]
    with np.errstate(over="ignore"):
        return fdtype.type(as_float)


def parse_fill_value(
    value: object, data_type: str, dtype: np.dtype[Any] | Any, *, path: str | None = None
) -> np.generic:
    """The JSON ``fill_value`` -> numpy scalar of ``dtype`` (native byte order).

    - bool: a JSON boolean;
    - integers: a JSON integer in range (a JSON number with a fraction, ``0.0`` included, is
      rejected, as the spec requires);
    - floats: a number (rounded to nearest), ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, or
      ``"0x..."`` giving the raw bits (exactly 4/8/16 hex digits for float16/32/64);
    - complex: ``[real, imag]``, each one of the float forms;
    - raw ``r<N>``: an array of ``N / 8`` integers in ``[0, 255]``.
    """
    where = _where(path)
    dt = np.dtype(dtype).newbyteorder("=")
    label = "fill_value"
    if data_type == "bool":
        if isinstance(value, bool | np.bool_):
            return np.bool_(value)
        raise MetadataError(f"{where}{label}: expected true or false for bool, got {value!r}")
    if dt.kind in "iu":
        if not _is_int(value):
            raise MetadataError(
                f"{where}{label}: expected an integer for {data_type}, got {value!r}"
            )
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:  # type: ignore[call-overload]
            raise MetadataError(
                f"{where}{label}: {value} is out of range for {data_type} [{info.min}, {info.max}]"
            )
        return np.array(int(value), dtype=dt)[()]  # type: ignore[call-overload]
    if dt.kind == "f":
        return _parse_float(value, dt, where, label)
    if dt.kind == "c":
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
            raise MetadataError(
                f"{where}{label}: expected a two-element array [real, imag] for {data_type}, "
                f"got {value!r}"
            )
        fdt = np.dtype(f"f{dt.itemsize // 2}")
        re_ = _parse_float(value[0], fdt, where, f"{label}[0]")
        im_ = _parse_float(value[1], fdt, where, f"{label}[1]")
        return np.array([re_, im_], dtype=fdt).view(dt)[0]
    if dt.kind == "V" and _is_raw(data_type):
        n = dt.itemsize
        if (
            isinstance(value, str | bytes)
            or not isinstance(value, Sequence)
            or len(value) != n
            or not all(_is_int(b) and 0 <= b <= 255 for b in value)
        ):
            raise MetadataError(
                f"{where}{label}: expected an array of {n} integers in [0, 255] for "
                f"{data_type}, got {value!r}"
            )
        return np.frombuffer(bytes(int(b) for b in value), dtype=dt)[0]
    raise UnsupportedError(f"{where}unsupported data type {data_type!r} for fill_value")


def _float_to_json(x: np.generic, fdtype: np.dtype[Any]) -> float | str:
    size = fdtype.itemsize
    bits = int(np.asarray(x, dtype=fdtype).view(_FLOAT_BITS[size]))
    if np.isnan(x):
        if bits == _CANONICAL_NAN[size]:
            return "NaN"
        # Any other NaN keeps its bits (sign and payload): zarr-python would write "NaN".
        return f"0x{bits:0{2 * size}x}"
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return float(x)  # type: ignore[arg-type]


def fill_value_to_json(scalar: object, data_type: str) -> Any:
    """Numpy (or Python) fill value -> its JSON form, as zarr-python 3.1 writes it.

    NaN -> ``"NaN"``, infinities -> ``"Infinity"``/``"-Infinity"``, complex -> ``[re, im]``,
    finite floats -> JSON numbers (the float64 value, as zarr-python writes). A NaN other than
    the canonical one (sign or payload differ) -> its hex bits, so that it round-trips
    bit-exactly.
    """
    dt = CORE_DATA_TYPES.get(data_type)
    if dt is None:
        raise UnsupportedError(f"unsupported data type {data_type!r}")
    value = scalar if isinstance(scalar, np.generic) and scalar.dtype == dt else None
    if value is None:
        value = cast_fill_value(scalar, data_type, dt)
    if data_type == "bool":
        return bool(value)
    if dt.kind in "iu":
        return int(value)  # type: ignore[call-overload]
    if dt.kind == "f":
        return _float_to_json(value, dt)
    if dt.kind == "c":
        fdt = np.dtype(f"f{dt.itemsize // 2}")
        parts = np.asarray(value, dtype=dt).reshape(1).view(fdt)
        return [_float_to_json(parts[0], fdt), _float_to_json(parts[1], fdt)]
    return list(np.asarray(value, dtype=dt).tobytes())


def default_fill_value(dtype: np.dtype[Any] | Any) -> np.generic:
    """The fill value zarr-python records when none is given: zero / false / zero bytes."""
    return np.zeros((), dtype=np.dtype(dtype).newbyteorder("="))[()]


def cast_fill_value(
    value: object, data_type: str, dtype: np.dtype[Any] | Any, *, path: str | None = None
) -> np.generic:
    """A user-given fill value -> numpy scalar of ``dtype`` (native order); validates range.

    ``None`` gives :func:`default_fill_value`. Accepts numpy and Python scalars, the JSON forms
    of :func:`parse_fill_value` (``"NaN"``, hex strings, ``[re, im]``, lists of bytes) and, for
    raw types, a ``bytes`` object of the item size. A numpy scalar already of ``dtype`` is
    returned unchanged (bit-exact).
    """
    where = _where(path)
    dt = np.dtype(dtype).newbyteorder("=")
    if value is None:
        return default_fill_value(dt)
    if isinstance(value, np.generic) and value.dtype.newbyteorder("=") == dt:
        return np.asarray(value).astype(dt)[()]
    if isinstance(value, str | list | tuple):
        return parse_fill_value(value, data_type, dt, path=path)
    if dt.kind == "V":
        if isinstance(value, bytes | bytearray | np.void):
            raw = bytes(value)
            if len(raw) == dt.itemsize:
                return np.frombuffer(raw, dtype=dt)[0]
        raise MetadataError(
            f"{where}fill_value: expected {dt.itemsize} bytes for {data_type}, got {value!r}"
        )
    if isinstance(value, complex | np.complexfloating) and dt.kind != "c":
        raise MetadataError(f"{where}fill_value: {value!r} is complex, {data_type} is not")
    if dt.kind == "b":
        if isinstance(value, bool | np.bool_) or (_is_int(value) and value in (0, 1)):
            return np.bool_(value)
        raise MetadataError(f"{where}fill_value: expected a boolean for bool, got {value!r}")
    if dt.kind in "iu":
        if isinstance(value, float | np.floating):
            if not float(value).is_integer():
                raise MetadataError(f"{where}fill_value: {value!r} is not an integer ({data_type})")
            value = int(value)
        if isinstance(value, bool | np.bool_):
            value = int(value)
        return parse_fill_value(value, data_type, dt, path=path)
    if dt.kind == "f":
        if isinstance(value, np.floating):
            with np.errstate(over="ignore"):
                return np.asarray(value).astype(dt)[()]
        return _parse_float(value, dt, where, "fill_value")
    if dt.kind == "c":
        if isinstance(value, int | float | complex | np.number) and not isinstance(
            value, bool | np.bool_
        ):
            with np.errstate(over="ignore"):
                return np.asarray(value).astype(dt)[()]
    raise MetadataError(f"{where}fill_value: cannot use {value!r} for data type {data_type}")


def fill_value_bytes(scalar: object, dtype: np.dtype[Any] | Any) -> bytes:
    """One element holding the fill value, as bytes in NATIVE byte order (for the Rust core)."""
    dt = np.dtype(dtype).newbyteorder("=")
    if not (isinstance(scalar, np.generic) and scalar.dtype == dt):
        scalar = cast_fill_value(scalar, data_type_name(dt), dt)
    return np.asarray(scalar, dtype=dt).tobytes()


# --------------------------------------------------------------------------------------------
# JSON encoding
# --------------------------------------------------------------------------------------------


def _find_non_finite(value: object, at: str) -> str | None:
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return at
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _find_non_finite(v, f"{at}.{k}" if at else str(k))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = _find_non_finite(v, f"{at}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        if not np.all(np.isfinite(value)):
            return at
    return None


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps(doc: Mapping[str, Any]) -> bytes:
    """Encode a metadata document as zarr-python writes it (2-space indent, ASCII-escaped).

    NaN and infinities are never written as bare tokens (invalid JSON): fill values use the
    spec's strings, and a non-finite float anywhere else (e.g. in attributes) raises
    MetadataError naming where it is. Numpy scalars and arrays are converted to JSON values.
    """
    bad = _find_non_finite(doc, "")
    if bad is not None:
        raise MetadataError(
            f"cannot encode a NaN or infinite float at {bad!r}: JSON has no such numbers "
            '(store it as a string such as "NaN")'
        )
    try:
        return json.dumps(doc, indent=2, allow_nan=False, default=_json_default).encode()
    except (TypeError, ValueError) as e:
        raise MetadataError(f"cannot encode metadata as JSON: {e}") from None


def loads(data: bytes | str, *, path: str = "") -> dict[str, Any]:
    """Decode a ``zarr.json`` document; it must be a JSON object.

    Bare ``NaN``/``Infinity`` tokens are accepted (zarr-python writes them in attributes).
    """
    where = _where(path)
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MetadataError(f"{where}invalid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise MetadataError(f"{where}expected a JSON object, got {type(doc).__name__}")
    return doc


# --------------------------------------------------------------------------------------------
# Member parsers
# --------------------------------------------------------------------------------------------


def _check_object(doc: object, where: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise MetadataError(f"{where}expected a JSON object, got {type(doc).__name__}")
    return doc


def _check_format(doc: Mapping[str, Any], node_type: str, where: str) -> None:
    if "zarr_format" not in doc:
        raise MetadataError(f"{where}missing member 'zarr_format'")
    fmt = doc["zarr_format"]
    if not _is_int(fmt) or fmt != 3:
        raise MetadataError(f"{where}zarr_format: expected 3, got {fmt!r}")
    if "node_type" not in doc:
        raise MetadataError(f"{where}missing member 'node_type'")
    if doc["node_type"] != node_type:
        raise MetadataError(f"{where}node_type: expected {node_type!r}, got {doc['node_type']!r}")


def _int_list(value: object, label: str, where: str, *, positive: bool) -> tuple[int, ...]:
    lowest = 1 if positive else 0
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(_is_int(v) and v >= lowest for v in value)
    ):
        kind = "positive" if positive else "non-negative"
        raise MetadataError(f"{where}{label}: must be an array of {kind} integers, got {value!r}")
    return tuple(int(v) for v in value)


def _parse_chunk_grid(value: object, ndim: int, where: str) -> tuple[int, ...]:
    if isinstance(value, str):
        raise MetadataError(
            f"{where}chunk_grid: {value!r} needs a configuration with 'chunk_shape'"
        )
    if not isinstance(value, Mapping):
        raise MetadataError(f"{where}chunk_grid: must be an object, got {value!r}")
    unknown = sorted(str(k) for k in value if k not in ("name", "configuration", "must_understand"))
    if unknown:
        raise MetadataError(f"{where}chunk_grid: unknown member(s) {unknown}")
    name = value.get("name")
    if value.get("must_understand", True) is not True:
        raise MetadataError(f'{where}chunk_grid: "must_understand" must not be false')
    if not isinstance(name, str):
        raise MetadataError(f"{where}chunk_grid.name: must be a string, got {name!r}")
    if name != "regular":
        raise UnsupportedError(f"{where}unsupported chunk grid {name!r} (only 'regular')")
    cfg = value.get("configuration")
    if not isinstance(cfg, Mapping) or "chunk_shape" not in cfg:
        raise MetadataError(
            f"{where}chunk_grid.configuration: missing member 'chunk_shape' (got {cfg!r})"
        )
    extra = sorted(str(k) for k in cfg if k != "chunk_shape")
    if extra:
        raise MetadataError(f"{where}chunk_grid.configuration: unknown member(s) {extra}")
    chunk_shape = _int_list(
        cfg["chunk_shape"], "chunk_grid.configuration.chunk_shape", where, positive=True
    )
    if len(chunk_shape) != ndim:
        raise MetadataError(
            f"{where}chunk_grid.configuration.chunk_shape: {list(chunk_shape)} has "
            f"{len(chunk_shape)} dimension(s), shape has {ndim}"
        )
    return chunk_shape


_DEFAULT_SEPARATORS = {"default": "/", "v2": "."}


def _parse_chunk_key_encoding(value: object, where: str) -> dict[str, Any]:
    """-> ``{"name": "default"|"v2", "configuration": {"separator": "/"|"."}}``.

    Also takes zarr-python's user form ``{"name": ..., "separator": ...}``.
    """
    label = "chunk_key_encoding"
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping):
        raise MetadataError(f"{where}{label}: must be an object or a name, got {value!r}")
    allowed = ("name", "configuration", "must_understand", "separator")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise MetadataError(f"{where}{label}: unknown member(s) {unknown}")
    if value.get("must_understand", True) is not True:
        raise MetadataError(f'{where}{label}: "must_understand" must not be false')
    name = value.get("name")
    if not isinstance(name, str):
        raise MetadataError(f"{where}{label}.name: must be a string, got {name!r}")
    if name not in _DEFAULT_SEPARATORS:
        raise UnsupportedError(
            f"{where}unsupported chunk key encoding {name!r} (only 'default' and 'v2')"
        )
    cfg = value.get("configuration", {})
    if not isinstance(cfg, Mapping):
        raise MetadataError(f"{where}{label}.configuration: must be an object, got {cfg!r}")
    extra = sorted(str(k) for k in cfg if k != "separator")
    if extra:
        raise MetadataError(f"{where}{label}.configuration: unknown member(s) {extra}")
    sep = cfg.get("separator", value.get("separator", _DEFAULT_SEPARATORS[name]))
    if sep not in ("/", "."):
        raise MetadataError(
            f'{where}{label}.configuration.separator: must be "/" or ".", got {sep!r}'
        )
    return {"name": name, "configuration": {"separator": sep}}


def _parse_attributes(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise MetadataError(f"{where}attributes: must be an object, got {value!r}")
    return copy.deepcopy(dict(value))


def _parse_dimension_names(value: object, ndim: int, where: str) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(v is None or isinstance(v, str) for v in value)
    ):
        raise MetadataError(
            f"{where}dimension_names: must be an array of strings or nulls, got {value!r}"
        )
    if len(value) != ndim:
        raise MetadataError(
            f"{where}dimension_names: has {len(value)} entries, shape has {ndim} dimension(s)"
        )
    return tuple(value)


def _is_ignorable(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("must_understand") is False


def _parse_storage_transformers(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"{where}storage_transformers: must be an array, got {value!r}")
    for i, item in enumerate(value):
        if not _is_ignorable(item):
            name = item.get("name") if isinstance(item, Mapping) else item
            raise UnsupportedError(
                f"{where}storage_transformers[{i}]: unsupported storage transformer {name!r}"
            )
    return copy.deepcopy(list(value))


def _parse_extra(doc: Mapping[str, Any], known: Sequence[str], where: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for key, value in doc.items():
        if key in known:
            continue
        if not _is_ignorable(value):
            raise MetadataError(
                f"{where}unknown member {key!r}: zarrox does not understand it and it is not "
                'an object with "must_understand": false'
            )
        extra[key] = copy.deepcopy(value)
    return extra


# --------------------------------------------------------------------------------------------
# Array metadata
# --------------------------------------------------------------------------------------------

_ARRAY_REQUIRED = (
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
)
_ARRAY_KNOWN = (*_ARRAY_REQUIRED, "attributes", "dimension_names", "storage_transformers")


def _normalized_codec(codec: object) -> dict[str, Any]:
    if isinstance(codec, str):
        return {"name": codec, "configuration": {}}
    if not isinstance(codec, Mapping):
        raise MetadataError(f"codec must be an object or a name, got {codec!r}")
    out = dict(codec)
    out["configuration"] = dict(out.get("configuration") or {})
    order = ["name", "configuration", "must_understand"]
    return {k: out[k] for k in sorted(out, key=lambda k: order.index(k) if k in order else 9)}


@dataclass(eq=False)
class ArrayMetadataV3:
    """A Zarr v3 array's ``zarr.json``.

    ``codecs`` entries are ``{"name": str, "configuration": dict}`` (configuration ``{}`` when
    the document had none; ``"must_understand"`` kept when present). ``chunk_key_encoding`` is
    ``{"name": "default"|"v2", "configuration": {"separator": "/"|"."}}``. ``extra`` holds
    unknown top-level members marked ``"must_understand": false``, written back unchanged.
    Equality compares the JSON documents (so NaN fill values compare equal bit-wise).
    """

    shape: tuple[int, ...]
    data_type: str
    dtype: np.dtype[Any]
    chunk_shape: tuple[int, ...]
    chunk_key_encoding: dict[str, Any]
    fill_value: np.generic
    codecs: list[dict[str, Any]]
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.shape = tuple(int(s) for s in self.shape)
        self.chunk_shape = tuple(int(c) for c in self.chunk_shape)
        self.dtype = np.dtype(self.dtype).newbyteorder("=")
        self.codecs = [_normalized_codec(c) for c in self.codecs]
        if self.dimension_names is not None:
            self.dimension_names = tuple(self.dimension_names)

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, path: str = "") -> ArrayMetadataV3:
        """Validate a decoded ``zarr.json`` array document."""
        where = _where(path)
        doc = _check_object(doc, where)
        _check_format(doc, "array", where)
        for key in _ARRAY_REQUIRED:
            if key not in doc:
                raise MetadataError(f"{where}missing member {key!r}")
        shape = _int_list(doc["shape"], "shape", where, positive=False)
        data_type, dtype = parse_data_type(doc["data_type"], path=path)
        chunk_shape = _parse_chunk_grid(doc["chunk_grid"], len(shape), where)
        cke = _parse_chunk_key_encoding(doc["chunk_key_encoding"], where)
        fill_value = parse_fill_value(doc["fill_value"], data_type, dtype, path=path)
        codecs = validate_codecs(
            doc["codecs"],
            dtype=dtype,
            data_type=data_type,
            ndim=len(shape),
            chunk_shape=chunk_shape,
            path=path,
        )
        attributes = _parse_attributes(doc.get("attributes", {}), where)
        dimension_names = _parse_dimension_names(doc.get("dimension_names"), len(shape), where)
        transformers = _parse_storage_transformers(doc.get("storage_transformers"), where)
        extra = _parse_extra(doc, _ARRAY_KNOWN, where)
        return cls(
            shape=shape,
            data_type=data_type,
            dtype=dtype,
            chunk_shape=chunk_shape,
            chunk_key_encoding=cke,
            fill_value=fill_value,
            codecs=codecs,
            attributes=attributes,
            dimension_names=dimension_names,
            storage_transformers=transformers,
            extra=extra,
        )

    @classmethod
    def create(
        cls,
        *,
        shape: Sequence[int],
        dtype: object,
        chunk_shape: Sequence[int],
        fill_value: object = None,
        filters: object = None,
        serializer: object = "auto",
        compressors: object = "auto",
        codecs: object = None,
        chunk_key_encoding: object = None,
        attributes: Mapping[str, Any] | None = None,
        dimension_names: Sequence[str | None] | None = None,
        path: str = "",
    ) -> ArrayMetadataV3:
        """New array metadata with zarr-python 3.1 ``create_array`` defaults; fully validated.

        ``codecs``/``filters``/``serializer``/``compressors`` as in :func:`build_codecs`;
        ``chunk_key_encoding`` is None (``default`` with ``"/"``), a name, or an object
        (``{"name": "v2", "separator": "/"}`` or with ``configuration``); ``fill_value`` None
        gives zero/false.
        """
        where = _where(path)
        name = data_type_name(dtype)
        dt = CORE_DATA_TYPES[name]
        shape_t = _int_list(shape, "shape", where, positive=False)
        chunks_t = _int_list(chunk_shape, "chunk_shape", where, positive=True)
        if len(chunks_t) != len(shape_t):
            raise MetadataError(
                f"{where}chunk_shape {list(chunks_t)} and shape {list(shape_t)} differ in length"
            )
        chain = build_codecs(
            dt,
            data_type=name,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            codecs=codecs,
            ndim=len(shape_t),
            chunk_shape=chunks_t,
            path=path,
        )
        meta = cls(
            shape=shape_t,
            data_type=name,
            dtype=dt,
            chunk_shape=chunks_t,
            chunk_key_encoding=_parse_chunk_key_encoding(
                "default" if chunk_key_encoding is None else chunk_key_encoding, where
            ),
            fill_value=cast_fill_value(fill_value, name, dt, path=path),
            codecs=chain,
            attributes=dict(attributes or {}),
            dimension_names=None if dimension_names is None else tuple(dimension_names),
        )
        return cls.from_json(meta.to_json(), path=path)

    # ---- output ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document, members in zarr-python 3.1's order."""
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": self.data_type,
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(self.chunk_shape)},
            },
            "chunk_key_encoding": copy.deepcopy(self.chunk_key_encoding),
            "fill_value": fill_value_to_json(self.fill_value, self.data_type),
            "codecs": codecs_to_json(self.codecs),
            "attributes": copy.deepcopy(self.attributes),
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc["zarr_format"] = 3
        doc["node_type"] = "array"
        doc["storage_transformers"] = copy.deepcopy(self.storage_transformers)
        for key, value in self.extra.items():
            doc[key] = copy.deepcopy(value)
        return doc

    def to_core_json(self) -> dict[str, Any]:
        """The normalized description the Rust core consumes (fill bytes: :meth:`fill_bytes`).

        ``{"shape", "chunk_shape", "data_type", "codecs", "chunk_key_encoding": {"name",
        "separator"}}``; codecs are complete (every default filled in, recursively), without
        ``must_understand``, and ignorable unknown codecs are left out.
        """
        return {
            "shape": list(self.shape),
            "chunk_shape": list(self.chunk_shape),
            "data_type": self.data_type,
            "codecs": normalize_codecs(
                self.codecs,
                dtype=self.dtype,
                data_type=self.data_type,
                ndim=self.ndim,
                chunk_shape=self.chunk_shape,
                form="core",
            ),
            "chunk_key_encoding": {
                "name": self.chunk_key_encoding["name"],
                "separator": self.chunk_key_encoding["configuration"]["separator"],
            },
        }

    def fill_bytes(self) -> bytes:
        """The fill value as one element's bytes, native byte order."""
        return fill_value_bytes(self.fill_value, self.dtype)

    # ---- helpers -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_key_separator(self) -> str:
        return str(self.chunk_key_encoding["configuration"]["separator"])

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """Store key (relative to the array) of the chunk at grid index ``coords``."""
        sep = self.chunk_key_separator
        if self.chunk_key_encoding["name"] == "v2":
            return sep.join(str(int(c)) for c in coords) if len(coords) else "0"
        return "c" + "".join(f"{sep}{int(c)}" for c in coords)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV3):
            return NotImplemented
        return self.dtype == other.dtype and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------
# Group metadata
# --------------------------------------------------------------------------------------------

_GROUP_KNOWN = ("zarr_format", "node_type", "attributes", "consolidated_metadata")


@dataclass
class GroupMetadataV3:
    """A Zarr v3 group's ``zarr.json``.

    ``consolidated_metadata`` is the raw object zarr-python writes (``{"kind": "inline",
    "must_understand": false, "metadata": {...}}``) or None. ``extra`` as for arrays.
    """

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, path: str = "") -> GroupMetadataV3:
        where = _where(path)
        doc = _check_object(doc, where)
        _check_format(doc, "group", where)
        attributes = _parse_attributes(doc.get("attributes", {}), where)
        consolidated = doc.get("consolidated_metadata")
        if consolidated is not None:
            if not isinstance(consolidated, Mapping) or not isinstance(
                consolidated.get("metadata"), Mapping
            ):
                raise MetadataError(
                    f"{where}consolidated_metadata: must be an object with a 'metadata' object"
                )
            if consolidated.get("kind", "inline") != "inline":
                raise MetadataError(
                    f'{where}consolidated_metadata.kind: expected "inline", '
                    f"got {consolidated.get('kind')!r}"
                )
            consolidated = copy.deepcopy(dict(consolidated))
        extra = _parse_extra(doc, _GROUP_KNOWN, where)
        return cls(attributes=attributes, consolidated_metadata=consolidated, extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document, members in zarr-python 3.1's order."""
        doc: dict[str, Any] = {"attributes": copy.deepcopy(self.attributes), "zarr_format": 3}
        if self.consolidated_metadata is not None:
            doc["consolidated_metadata"] = copy.deepcopy(self.consolidated_metadata)
        doc["node_type"] = "group"
        for key, value in self.extra.items():
            doc[key] = copy.deepcopy(value)
        return doc


def parse_node(doc: Mapping[str, Any], *, path: str = "") -> ArrayMetadataV3 | GroupMetadataV3:
    """A decoded ``zarr.json`` -> array or group metadata, by ``node_type``."""
    where = _where(path)
    doc = _check_object(doc, where)
    node_type = doc.get("node_type")
    if "node_type" not in doc:
        raise MetadataError(f"{where}missing member 'node_type'")
    if node_type == "array":
        return ArrayMetadataV3.from_json(doc, path=path)
    if node_type == "group":
        return GroupMetadataV3.from_json(doc, path=path)
    raise MetadataError(f"{where}node_type: expected 'array' or 'group', got {node_type!r}")
