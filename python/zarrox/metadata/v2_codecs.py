"""Zarr v2 codecs: numcodecs configurations in ``.zarray`` (``compressor``, ``filters``) and
their translation to the Rust core's codec chain.

Stored configurations are checked (:func:`check_codec`) and completed with numcodecs' defaults
(:func:`complete_codec`, what ``numcodecs.get_codec(config).get_config()`` gives), both by the
Rust core (``rust/codec/complete.rs``), which knows every codec's members and defaults; user
codecs become what zarr-python 3.1 writes (:func:`normalize_v2_codec`); :func:`core_codec` gives
the core's ``numcodecs.<id>`` codec, and :func:`filter_byte_order` follows the byte order of
the values through value filters.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.errors import MetadataError, UnsupportedError, naming_node
from zarrox.metadata._checks import (
    copy_json,
    document_where,
    is_json_array,
    is_text,
    json_scalar,
)
from zarrox.metadata.codecs import CODEC_REGISTRY

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
    "categorize": ("dtype", "astype"),
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
        raise naming_node(
            UnsupportedError(
                f"{_ZARRAY}filters[{i}]: {members[0]} {config[members[0]]!r} has "
                f"the other byte order than the values it gets ({got}-endian); numcodecs would "
                "reinterpret their bytes: give the filter the array's byte order"
            ),
            "",  # the message names the node as '' (_ZARRAY)
        )
    return byte_order(np.dtype(config[members[1]]))


#: numcodecs filters that transform values (array -> array); the others work on bytes
ARRAY_FILTER_IDS = frozenset(
    c["v2_id"]
    for c in CODEC_REGISTRY.values()
    if c["v2_id"] is not None and c["decodes"] and c["kind"] == "array->array"
)

#: numcodecs members that hold a numpy dtype, which numcodecs writes as ``dtype.str``
#: (``"int32"`` -> ``"<i4"``): the one normalisation the core leaves to numpy.
_DTYPE_MEMBERS = frozenset({"dtype", "astype", "encode_dtype", "decode_dtype"})


#: The members of numcodecs' ``get_config()`` of each codec whose configuration the Rust core
#: completes, in its order, by numcodecs id (the core's registry, ``rust/codec/registry.rs``).
_NUMCODECS_MEMBERS: dict[str, tuple[str, ...]] = {
    c["v2_id"]: tuple(c["numcodecs_members"])
    for c in CODEC_REGISTRY.values()
    if c["v2_id"] is not None
}


_CORE_MESSAGE = re.compile(r"codec '[^']*': '([^']*)' (.*)", re.DOTALL)


def _core_config(
    codec_id: str, members: tuple[str, ...], value: Mapping[str, Any], where: str, label: str
) -> dict[str, Any]:
    """numcodecs' complete configuration (without ``"id"``) of a codec the core completes,
    with its dtype members as numpy writes them. Only the members of its ``get_config()``
    are given to the core: the others (``typesize``, members of a newer numcodecs) are the
    caller's to keep."""
    known = {k: value[k] for k in members if k in value}
    for key in _DTYPE_MEMBERS.intersection(known):
        if known[key] is not None:
            known[key] = np.dtype(known[key]).str
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
        if problem == "is required":
            raise MetadataError(
                f"{where}{label}: codec {codec_id!r} requires member {key!r}"
            ) from None
        if problem.startswith(("must be an integer", "must not be null")):
            problem = f"{codec_id} {key} {problem}"
        raise MetadataError(f"{where}{label}.{key}: {problem}") from None


def _check_and_complete(
    value: object, where: str, label: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A copy of one stored numcodecs configuration, validated, and its completion (without
    ``"id"``) if the core completes the codec's configuration."""
    if not isinstance(value, Mapping):
        raise MetadataError(
            f'{where}{label}: a codec must be an object with an "id", got {value!r}'
        )
    codec_id = value.get("id")
    if not is_text(codec_id) or not codec_id:
        raise MetadataError(f'{where}{label}.id: a codec needs an "id" string, got {dict(value)!r}')
    members = _NUMCODECS_MEMBERS.get(codec_id)
    if members is None:
        return copy_json(dict(value)), None
    for member in _DTYPE_MEMBERS.intersection(members).intersection(value):
        try:
            np.dtype(value[member])
        except (TypeError, ValueError):  # ValueError: odd lists, lone surrogates
            raise MetadataError(
                f"{where}{label}.{member}: not a data type: {value[member]!r}"
            ) from None
    return copy_json(dict(value)), _core_config(codec_id, members, value, where, label)


def check_codec(value: object, where: str, label: str) -> dict[str, Any]:
    """Validate one stored numcodecs configuration; return a copy."""
    return _check_and_complete(value, where, label)[0]


def complete_codec(config: object, where: str, label: str) -> dict[str, Any]:
    """A numcodecs configuration with every default filled in, in numcodecs' member order
    (what ``numcodecs.get_codec(config).get_config()`` gives), from the Rust core. Unknown ids
    are returned as given (``"id"`` first)."""
    cfg, completed = _check_and_complete(config, where, label)
    out = {"id": cfg["id"], **(completed or {})}
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
    if not is_json_array(value):
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
