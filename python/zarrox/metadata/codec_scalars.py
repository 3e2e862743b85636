"""Numeric scalars in codec configurations (``scale_offset``, ``cast_value``).

zarr-python 3.4 reads these with its data types' ``from_json_scalar``, which accepts more than
the fill-value encoding the spec names: for integers also integral floats (``1.0``) and
integer strings (``"42"``); for floats also numeric strings (``"0.1"``) and ``"0x..."`` hex
strings of 4, 8 or 16 digits whatever the type (read as float16, float32 or float64 bits, then
cast). zarrox reads them the same way, so that what zarr-python writes opens here.

The Rust core takes these scalars in one unambiguous form (:func:`core_scalar`): integers as
JSON integers, floats as the hex string of their bits in the data type.

The data types are the eleven zarr-python casts and scales: ``int8`` .. ``uint64``,
``float16``, ``float32``, ``float64`` (:data:`NUMERIC_TYPES`).

The rules of these two codecs' configurations live here too (:func:`scale_offset_config`,
:func:`cast_value_config`): the core's chain rules (``rust/codec/chain_rules.rs``) call them,
through ``zarrox.metadata.codecs``, for each such codec of a chain.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata._checks import json_scalar
from zarrox.metadata.dtypes import CORE_INTS, DataType, parse_data_type_json
from zarrox.metadata.dtypes.floats import SPECIAL_FLOATS

__all__ = [
    "NUMERIC_TYPES",
    "NumericCtx",
    "cast_value_config",
    "core_scalar",
    "numeric_info",
    "parse_scalar",
    "python_number",
    "scale_offset_config",
]

#: The data types scale_offset and cast_value work on in zarr-python 3.4.
NUMERIC_TYPES: frozenset[str] = frozenset([*CORE_INTS, "float16", "float32", "float64"])
_HEX_FORMATS = {4: ">e", 8: ">f", 16: ">d"}


def _int_value(value: object) -> int:
    if isinstance(value, int):  # bool included, as isinstance(True, int) in zarr-python
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"{value!r} is not an integer")


def _float_value(value: object) -> float:
    if isinstance(value, str) and value in SPECIAL_FLOATS:
        return SPECIAL_FLOATS[value]
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.startswith("0x"):
        fmt = _HEX_FORMATS.get(len(value) - 2)
        if fmt is None:
            raise ValueError(f"hex float {value!r} must have 4, 8 or 16 digits")
        return float(struct.unpack(fmt, bytes.fromhex(value[2:]))[0])
    if isinstance(value, str):
        return float(value)
    raise ValueError(f"{value!r} is not a float")


def parse_scalar(value: object, dtype: np.dtype[Any]) -> np.generic:
    """``value`` as zarr-python 3.4 reads a scalar of ``dtype`` (``from_json_scalar``).

    Raises ValueError (or OverflowError) when zarr-python cannot read it.
    """
    if dtype.kind in "iu":
        number = _int_value(value)
        info = np.iinfo(dtype)
        if not int(info.min) <= number <= int(info.max):
            raise OverflowError(f"{number} is out of range for {dtype} [{info.min}, {info.max}]")
        return dtype.type(number)  # type: ignore[no-any-return]
    with np.errstate(over="ignore"):
        return dtype.type(_float_value(value))  # type: ignore[no-any-return]


def python_number(value: object, dtype: np.dtype[Any]) -> np.generic:
    """A scalar map entry as zarr-python 3.4 hands it to its casting backend: ``int(value)``
    for integer types, ``float(value)`` for floats (float16 through float32, as the backend
    converts it), as a scalar of ``dtype``. Raises ValueError, TypeError or OverflowError where
    zarr-python's cast fails."""
    if dtype.kind in "iu":
        if isinstance(value, list | dict):
            raise TypeError(f"{value!r} is not a number")
        number = int(value)  # type: ignore[call-overload]
        info = np.iinfo(dtype)
        if not int(info.min) <= number <= int(info.max):
            raise OverflowError(f"{number} is out of range for {dtype}")
        return dtype.type(number)  # type: ignore[no-any-return]
    if isinstance(value, list | dict):
        raise TypeError(f"{value!r} is not a number")
    as_float = float(value)  # type: ignore[arg-type]
    with np.errstate(over="ignore"):
        if dtype == np.float16:
            return np.float16(np.float32(as_float))
        return dtype.type(as_float)  # type: ignore[no-any-return]


def core_scalar(scalar: np.generic) -> int | str:
    """A scalar in the form the Rust core takes: an integer, or a float's bits in hex."""
    dtype = np.asarray(scalar).dtype
    if dtype.kind in "iu":
        return int(scalar)  # type: ignore[call-overload]
    bits = int(np.asarray(scalar, dtype=dtype).view(f"u{dtype.itemsize}"))
    return f"0x{bits:0{2 * dtype.itemsize}x}"


@dataclass(frozen=True)
class NumericCtx:
    """What a ``scale_offset`` or ``cast_value`` configuration is checked against."""

    info: DataType  # the data type of the chunks the codec encodes
    where: str  # message prefix, e.g. "zarr.json at 'a': "
    fill: bool  # fill in defaults (creation) rather than only validate (reading)
    form: str  # "json", "normalized" or "core"

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.info.dtype

    @property
    def data_type(self) -> str:
        return self.info.name

    def err(self, msg: str) -> MetadataError:
        return MetadataError(f"{self.where}{msg}")


def numeric_info(name: str, data_type: str, category: str, where: str, label: str) -> None:
    """Error unless the chunk's data type is one zarr-python 3.4 scales and casts."""
    if data_type in NUMERIC_TYPES:
        return
    if category in ("int", "small_int", "float"):
        raise UnsupportedError(
            f"{where}{label}: codec {name!r} on data type {data_type!r} is not "
            f"supported (zarrox and zarr-python take {sorted(NUMERIC_TYPES)})"
        )
    raise MetadataError(
        f"{where}{label}: codec {name!r} only takes integer and floating-point data types, not "
        f"{data_type!r}"
    )


def scale_offset_config(
    cfg: dict[str, Any], complete: dict[str, Any], ctx: NumericCtx, label: str
) -> dict[str, Any]:
    parsed = {}
    for key, default in complete.items():
        value = cfg.get(key, default)
        if not isinstance(value, int | float | str) or isinstance(value, np.generic):
            raise ctx.err(
                f"{label}.configuration.{key}: must be a number or a string, got {value!r}"
            )
        try:
            parsed[key] = parse_scalar(value, ctx.dtype)
        except (TypeError, ValueError, OverflowError) as e:
            raise ctx.err(
                f"{label}.configuration.{key}: {value!r} is not a value of {ctx.data_type} ({e})"
            ) from None
    if parsed["scale"] == 0:
        raise ctx.err(f"{label}.configuration.scale: must not be zero")
    if ctx.form == "core":
        return {key: core_scalar(v) for key, v in parsed.items()}
    if ctx.fill:
        # As zarr-python writes it: members equal to their default are left out.
        defaults = _complete_default({"name": "scale_offset"})
        return {k: cfg[k] for k, d in defaults.items() if k in cfg and cfg[k] != d}
    return cfg


def cast_value_config(
    cfg: dict[str, Any], complete: dict[str, Any], ctx: NumericCtx, label: str
) -> tuple[dict[str, Any], DataType]:
    """cast_value's configuration in the chain's form, and the data type it casts to."""
    clabel = f"{label}.configuration"
    target = parse_data_type_json(cfg["data_type"], label=f"{clabel}.data_type")
    numeric_info("cast_value", target.name, target.category, ctx.where, clabel)
    rounding = complete["rounding"]
    out_of_range = complete["out_of_range"]
    if out_of_range == "wrap" and target.dtype.kind not in "iu":
        raise ctx.err(
            f"{clabel}.out_of_range: 'wrap' is only valid for integer target types, not "
            f"{target.name!r}"
        )
    maps = _scalar_maps(cfg.get("scalar_map"), ctx.dtype, target.dtype, ctx, clabel)
    if ctx.form == "core":
        core = {
            "data_type": target.name,
            "rounding": rounding,
            "out_of_range": out_of_range,
            "scalar_map": {
                direction: [[core_scalar(k), core_scalar(v)] for k, v in entries]
                for direction, (_, entries) in maps.items()
            },
        }
        return core, target
    if not ctx.fill:
        return cfg, target
    # As zarr-python writes it: defaults left out, each map as de-duplicated pairs.
    out: dict[str, Any] = {"data_type": target.json}
    default = {"name": "cast_value", "configuration": {"data_type": cfg["data_type"]}}
    if rounding != _complete_default(default)["rounding"]:
        out["rounding"] = rounding
    if out_of_range is not None:
        out["out_of_range"] = out_of_range
    if maps:
        out["scalar_map"] = {d: [list(p) for p in pairs] for d, (pairs, _) in maps.items()}
    return out, target


def _scalar_maps(
    value: object, source: np.dtype[Any], target: np.dtype[Any], ctx: NumericCtx, label: str
) -> dict[str, tuple[list[tuple[Any, Any]], list[tuple[np.generic, np.generic]]]]:
    """cast_value's ``scalar_map``, per direction: the pairs as zarr-python keeps them (a dict
    of the JSON pairs: a repeated key keeps its first place and its last value) and the same
    pairs as the typed values zarr-python casts with (again a dict, of those values)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ctx.err(f"{label}.scalar_map: must be an object, got {value!r}")
    unknown = sorted(str(k) for k in value if k not in ("encode", "decode"))
    if unknown:
        raise ctx.err(f"{label}.scalar_map: unknown member(s) {unknown}")
    out = {}
    for direction, (src, dst) in (("encode", (source, target)), ("decode", (target, source))):
        entries = value.get(direction)
        if entries is None:
            continue
        where = f"{label}.scalar_map.{direction}"
        try:
            pairs = dict(entries)
        except (TypeError, ValueError):
            raise ctx.err(
                f"{where}: must be a list of [key, value] pairs, got {entries!r}"
            ) from None
        # keyed as zarr-python keys them: int(key) or float(key)
        typed: dict[Any, tuple[np.generic, np.generic]] = {}
        for k, v in pairs.items():
            for what, item, dt in (("key", k, src), ("value", v, dst)):
                try:
                    parse_scalar(item, dt)
                except (TypeError, ValueError, OverflowError):
                    raise ctx.err(f"{where}: {what} {item!r} is not a value of {dt}") from None
            try:
                key, val = python_number(k, src), python_number(v, dst)
                python_key = int(k) if src.kind in "iu" else float(k)
            except (TypeError, ValueError, OverflowError) as e:
                raise ctx.err(
                    f"{where}: zarr-python cannot cast with the entry [{k!r}, {v!r}] ({e})"
                ) from None
            first = typed.get(python_key)
            typed[python_key] = (key if first is None else first[0], val)
        out[direction] = (list(pairs.items()), list(typed.values()))
    return out


def _complete_default(codec: dict[str, Any]) -> dict[str, Any]:
    """The configuration the core completes ``codec`` (a codec object) to."""
    text = json.dumps(codec, default=json_scalar, allow_nan=False)
    return json.loads(_core.codec_configuration(text, 1))  # type: ignore[no-any-return]
