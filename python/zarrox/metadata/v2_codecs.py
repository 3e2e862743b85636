"""Zarr v2 codecs: numcodecs configurations in ``.zarray`` (``compressor``, ``filters``) and
their translation to the Rust core's codec chain.

Stored configurations are checked (:func:`check_codec`) and completed with numcodecs' defaults
(:func:`complete_codec`, what ``numcodecs.get_codec(config).get_config()`` gives); user
codecs become what zarr-python 3.1 writes (:func:`normalize_v2_codec`); :func:`core_codec` gives
the core's ``numcodecs.<id>`` codec, and :func:`filter_byte_order` follows the byte order of
the values through value filters.
"""

from __future__ import annotations

import functools
import json
import pickle
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata._checks import copy_json, document_where, json_scalar
from zarrox.metadata._checks import is_int as _is_int

#: the error prefix of a .zarray read without a path
_ZARRAY = document_where(".zarray", "")

__all__ = [
    "ARRAY_FILTER_IDS",
    "DEFAULT_COMPRESSOR_V2",
    "blosc_typesize_1",
    "byte_order",
    "check_codec",
    "complete_codec",
    "core_codec",
    "filter_byte_order",
    "normalize_v2_codec",
    "parse_compressor",
    "parse_filters",
    "user_compressor",
    "user_filters",
]

#: The compressor zarr-python 3.1 ``create_array(..., zarr_format=2)`` uses when none is given
#: (``numcodecs.Zstd(level=0)``, written without ``"checksum": false``). Note: zarr-python
#: 3.1's ``Group.create_array`` on a v2 group uses ``{"id": "blosc"}`` instead (lz4, clevel 5,
#: shuffle 1, blocksize 0).
DEFAULT_COMPRESSOR_V2: Mapping[str, Any] = {"id": "zstd", "level": 0}


def _is_big_endian(dt: np.dtype[Any]) -> bool:
    return dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder == "big")


def byte_order(dt: np.dtype[Any]) -> str:
    """``">"`` or ``"<"`` for multi-byte numeric types, ``"|"`` when the order does not matter."""
    if dt.byteorder == "|":
        return "|"
    return ">" if _is_big_endian(dt) else "<"


#: value filters: (input type member, output type member), as numcodecs views and casts
_FILTER_TYPE_MEMBERS = {
    "delta": ("dtype", "astype"),
    "fixedscaleoffset": ("dtype", "astype"),
    "quantize": ("dtype", "astype"),
    "astype": ("decode_dtype", "encode_dtype"),
}


def filter_byte_order(codec: Mapping[str, Any], values_order: str, i: int) -> str:
    """The byte order of a value filter's output, given its input's (see to_core_json).

    numcodecs views its input as the filter's ``dtype``: a chunk in the other byte order
    would be reinterpreted, which zarrox does not reproduce."""
    members = _FILTER_TYPE_MEMBERS.get(str(codec["name"]).removeprefix("numcodecs."))
    if members is None:
        return values_order
    config = codec["configuration"]
    in_order = byte_order(np.dtype(config[members[0]]))
    if "|" not in (in_order, values_order) and in_order != values_order:
        got = "big" if values_order == ">" else "little"
        raise UnsupportedError(
            f"{_ZARRAY}filters[{i}]: {members[0]} {config[members[0]]!r} has "
            f"the other byte order than the values it gets ({got}-endian); numcodecs would "
            "reinterpret their bytes: give the filter the array's byte order"
        )
    return byte_order(np.dtype(config[members[1]]))


#: numcodecs filters that transform values (array -> array); the others work on bytes
ARRAY_FILTER_IDS = frozenset(
    {"delta", "astype", "fixedscaleoffset", "quantize", "packbits", "bitround"}
)

_REQUIRED = object()
_DTYPE = object()  # a required numpy dtype member, written as dtype.str
_SAME_AS_DTYPE = object()  # defaults to the "dtype" member

#: numcodecs codecs whose members, allowed values and defaults are the Rust core's
#: (``_core.codec_configuration`` of ``numcodecs.<id>``, see ``rust/codec/numcodecs/``).
_CORE_CONFIGURED = frozenset({"zlib", "gzip", "bz2", "zstd", "blosc"})

#: numcodecs ``get_config()`` members (in numcodecs' order) and defaults of the other codecs,
#: by codec id.
_NUMCODECS_DEFAULTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "lz4": (("acceleration", 1),),
    "lzma": (("format", 1), ("check", -1), ("preset", None), ("filters", None)),
    "crc32": (),
    "crc32c": (),
    "adler32": (),
    "fletcher32": (),
    "packbits": (),
    "shuffle": (("elementsize", 4),),
    "bitround": (("keepbits", _REQUIRED),),
    "delta": (("dtype", _DTYPE), ("astype", _SAME_AS_DTYPE)),
    "fixedscaleoffset": (
        ("scale", _REQUIRED),
        ("offset", _REQUIRED),
        ("dtype", _DTYPE),
        ("astype", _SAME_AS_DTYPE),
    ),
    "quantize": (("digits", _REQUIRED), ("dtype", _DTYPE), ("astype", _SAME_AS_DTYPE)),
    "astype": (("encode_dtype", _DTYPE), ("decode_dtype", _DTYPE)),
    "categorize": (("labels", _REQUIRED), ("dtype", _DTYPE), ("astype", "|u1")),
    # numcodecs' default is pickle.HIGHEST_PROTOCOL (5 on every Python zarrox runs on)
    "pickle": (("protocol", pickle.HIGHEST_PROTOCOL),),
}
_DTYPE_MEMBERS = frozenset({"dtype", "astype", "encode_dtype", "decode_dtype"})
_INT_RANGES: dict[tuple[str, str], tuple[int, int]] = {
    ("lz4", "acceleration"): (-(2**31), 2**31 - 1),
    ("shuffle", "elementsize"): (1, 2**31 - 1),
    ("bitround", "keepbits"): (0, 64),
    ("pickle", "protocol"): (-1, pickle.HIGHEST_PROTOCOL),
}


@functools.cache
def _core_members(codec_id: str) -> tuple[str, ...]:
    """The members of numcodecs' ``get_config()`` of a core-configured codec, in its order."""
    return tuple(json.loads(_core.codec_configuration(f'"numcodecs.{codec_id}"', 1)))


_CORE_MESSAGE = re.compile(r"codec '[^']*': '([^']*)' (.*)", re.DOTALL)


def _core_config(codec_id: str, value: Mapping[str, Any], where: str, label: str) -> dict[str, Any]:
    """numcodecs' complete configuration (without ``"id"``) of a codec in
    ``_CORE_CONFIGURED``, as the Rust core checks and completes it. Only the members of its
    ``get_config()`` are given to the core: the others (``typesize``, members of a newer
    numcodecs) are the caller's to keep. A member given as null is an error (numcodecs would
    fail on it when encoding), not a default."""
    known = {k: v for k, v in value.items() if k in _core_members(codec_id)}
    for key, v in known.items():
        if v is None:
            raise MetadataError(f"{where}{label}.{key}: {codec_id} {key} must not be null")
    try:
        text = json.dumps(
            {"name": f"numcodecs.{codec_id}", "configuration": known},
            default=json_scalar,
            allow_nan=False,
        )
    except (TypeError, ValueError) as e:
        raise MetadataError(f"{where}{label}: {e}") from None
    try:
        return json.loads(_core.codec_configuration(text, 1))  # type: ignore[no-any-return]
    except MetadataError as e:
        m = _CORE_MESSAGE.fullmatch(str(e))
        if m is None:
            raise MetadataError(f"{where}{label}: {e}") from None
        key, problem = m.groups()
        if problem.startswith("must be an integer"):
            problem = f"{codec_id} {key} {problem}"
        raise MetadataError(f"{where}{label}.{key}: {problem}") from None


def check_codec(value: object, where: str, label: str) -> dict[str, Any]:
    """Validate one stored numcodecs configuration; return a copy."""
    if not isinstance(value, Mapping):
        raise MetadataError(
            f'{where}{label}: a codec must be an object with an "id", got {value!r}'
        )
    codec_id = value.get("id")
    if not isinstance(codec_id, str) or not codec_id:
        raise MetadataError(f'{where}{label}.id: a codec needs an "id" string, got {dict(value)!r}')
    if codec_id in _CORE_CONFIGURED:
        _core_config(codec_id, value, where, label)
    for key, (lo, hi) in _INT_RANGES.items():
        if key[0] == codec_id and key[1] in value:
            v = value[key[1]]
            if not _is_int(v) or not lo <= v <= hi:
                raise MetadataError(
                    f"{where}{label}.{key[1]}: {codec_id} {key[1]} must be an integer from "
                    f"{lo} to {hi}, got {v!r}"
                )
    for member in _DTYPE_MEMBERS:
        if member in value and codec_id in _NUMCODECS_DEFAULTS:
            try:
                np.dtype(value[member])
            except (TypeError, ValueError):  # ValueError: odd lists, lone surrogates
                raise MetadataError(
                    f"{where}{label}.{member}: not a data type: {value[member]!r}"
                ) from None
    return copy_json(dict(value))


def complete_codec(config: Mapping[str, Any], where: str, label: str) -> dict[str, Any]:
    """A numcodecs configuration with every default filled in, in numcodecs' member order
    (what ``numcodecs.get_codec(config).get_config()`` gives). Unknown ids are returned as
    given (``"id"`` first)."""
    cfg = check_codec(config, where, label)
    codec_id = cfg["id"]
    if codec_id in _CORE_CONFIGURED:
        out = {"id": codec_id, **_core_config(codec_id, cfg, where, label)}
        out.update({k: v for k, v in cfg.items() if k not in out})
        return out
    spec = _NUMCODECS_DEFAULTS.get(codec_id)
    if spec is None:
        return {"id": codec_id, **{k: v for k, v in cfg.items() if k != "id"}}
    out: dict[str, Any] = {"id": codec_id}
    for name, default in spec:
        if name in cfg:
            value = cfg[name]
        elif default is _SAME_AS_DTYPE:
            value = out["dtype"]
        elif default is _REQUIRED or default is _DTYPE:
            raise MetadataError(f"{where}{label}: codec {codec_id!r} requires member {name!r}")
        else:
            value = copy_json(default)
        if name in _DTYPE_MEMBERS and value is not None:
            value = np.dtype(value).str
        out[name] = value
    # Members this zarrox does not know (a newer numcodecs?) are kept, after the known ones.
    out.update({k: v for k, v in cfg.items() if k not in out})
    return out


def normalize_v2_codec(
    codec: object, *, compressor: bool = False, path: str | None = None, label: str = "codec"
) -> dict[str, Any]:
    """A numcodecs codec object or config dict -> the config zarr-python 3.1 writes.

    Objects with ``get_config()`` are asked for their configuration; dicts of known codecs get
    numcodecs' defaults filled in (``{"id": "zlib"}`` -> ``{"id": "zlib", "level": 1}``). As
    zarr-python 3.1 does, a zstd *compressor* without checksum is written without
    ``"checksum"``.
    """
    where = document_where(".zarray", path)
    get_config = getattr(codec, "get_config", None)
    if callable(get_config) and not isinstance(codec, Mapping):
        codec = get_config()
    out = complete_codec(codec, where, label)  # type: ignore[arg-type]
    if compressor and out["id"] == "zstd" and out.get("checksum") is False:
        del out["checksum"]
    return out


def blosc_typesize_1(codecs: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """Blosc takes its typesize from the item size of what it is given (numcodecs'
    default): the chunk's values for the first codec after the value filters, but
    plain bytes (typesize 1) after a bytes filter (shuffle, checksums, a compressor)
    or a vlen codec. Sets ``typesize`` 1 on the blosc codecs from index ``first``."""
    for codec in codecs[first:]:
        config = codec["configuration"]
        if codec["name"] == "numcodecs.blosc" and config.get("typesize") is None:
            config["typesize"] = 1
    return codecs


def core_codec(config: Mapping[str, Any], where: str, label: str) -> dict[str, Any]:
    full = complete_codec(config, where, label)
    return {
        "name": f"numcodecs.{full['id']}",
        "configuration": {k: v for k, v in full.items() if k != "id"},
    }


def parse_compressor(value: object, where: str) -> dict[str, Any] | None:
    if value is None:
        return None
    complete_codec(value, where, "compressor")  # validation: required members, types
    return check_codec(value, where, "compressor")


def parse_filters(value: object, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"{where}filters: must be null or an array of codecs, got {value!r}")
    out = []
    for i, f in enumerate(value):
        complete_codec(f, where, f"filters[{i}]")  # validation: required members, types
        out.append(check_codec(f, where, f"filters[{i}]"))
    return out


def user_compressor(compressor: object, path: str) -> dict[str, Any] | None:
    where = document_where(".zarray", path)
    if isinstance(compressor, str) and compressor == "auto":
        return dict(DEFAULT_COMPRESSOR_V2)
    if compressor is None:
        return None
    if isinstance(compressor, list | tuple):
        if len(compressor) == 0:
            return None
        if len(compressor) > 1:
            raise MetadataError(
                f"{where}compressor: a v2 array has at most one compressor, got {len(compressor)}"
            )
        compressor = compressor[0]
    return normalize_v2_codec(compressor, compressor=True, path=path, label="compressor")


def user_filters(filters: object, path: str) -> list[dict[str, Any]] | None:
    if filters is None or (isinstance(filters, str) and filters == "auto"):
        return None
    items = list(filters) if isinstance(filters, list | tuple) else [filters]
    out = [normalize_v2_codec(f, path=path, label=f"filters[{i}]") for i, f in enumerate(items)]
    return out or None
