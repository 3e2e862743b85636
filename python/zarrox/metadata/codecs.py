"""Zarr v3 codec chains: validation, default filling and ``create_array``-style building.

Codecs travel through zarrox as plain JSON dicts. Three forms are used:

``json``
    What is written to ``zarr.json``, exactly as zarr-python 3.1 writes it: ``{"name": ...}``
    plus ``"configuration"`` only when it is not empty (``{"name": "crc32c"}``, and
    ``{"name": "bytes"}`` for data types without byte order) except for ``vlen-utf8``,
    ``vlen-bytes`` and the ``numcodecs.<id>`` codecs, which zarr-python writes with
    ``"configuration": {}``, plus
    ``"must_understand"`` when the source document had it.
``normalized``
    ``{"name": str, "configuration": dict}`` always (plus ``"must_understand"`` when given);
    the configuration is the one read from the document, validated but not completed. This
    is the form of :attr:`zarrox.metadata.v3.ArrayMetadataV3.codecs`.
``core``
    ``{"name": str, "configuration": dict}`` with every default filled in, recursively (inside
    ``sharding_indexed`` too), ``must_understand`` removed and unknown codecs marked
    ``"must_understand": false`` dropped. This is what the Rust core consumes.

The members of the ``bytes``, ``transpose``, ``gzip``, ``zstd``, ``blosc``, ``crc32c``,
``vlen-*`` and ``sharding_indexed`` configurations, the values they allow and their defaults
are the Rust codecs' (``_core.codec_configuration``, see ``rust/codec/complete.rs``); this
module adds what depends on the array (its data type, chunk shape and dimensions) and the
rules of the chain.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from zarrox import _core
from zarrox.errors import MetadataError, UnknownCodecError, UnsupportedError
from zarrox.metadata._checks import copy_json, json_scalar
from zarrox.metadata._checks import is_int as _is_int
from zarrox.metadata.codec_scalars import NUMERIC_TYPES, core_scalar, parse_scalar, python_number
from zarrox.metadata.dtypes import (
    DataType,
    data_type_from_numpy,
    native_dtype,
    parse_data_type_json,
)
from zarrox.metadata.dtypes import _where as _where

__all__ = [
    "FIXED_SIZE_CODECS",
    "BLOSC_CNAMES",
    "BLOSC_SHUFFLES",
    "CODEC_KINDS",
    "CODEC_REGISTRY",
    "CodecForm",
    "CodecKind",
    "build_codecs",
    "codecs_to_json",
    "normalize_codecs",
    "validate_codecs",
]

CodecKind = Literal["array->array", "array->bytes", "bytes->bytes"]
CodecForm = Literal["json", "normalized", "core"]

#: The Rust core's codec registry (``rust/codec/registry.rs``), by codec name: per codec its
#: kind, members (types, ranges), numcodecs members and v2 id, nullable members, whether its
#: encoded size is fixed, how zarr-python writes it and the members TensorStore takes. The
#: tables below are views of it.
CODEC_REGISTRY: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {entry["name"]: MappingProxyType(entry) for entry in json.loads(_core.codec_registry())}
)

#: The codecs zarrox understands, by name, with the kind of each.
CODEC_KINDS: Mapping[str, CodecKind] = MappingProxyType(
    {n: c["kind"] for n, c in CODEC_REGISTRY.items() if not n.startswith("numcodecs.")}
)

#: numcodecs codecs zarrox implements, as zarr-python names them in v3 metadata
#: (``numcodecs.<id>``, written through ``numcodecs.zarr3``); the core checks their
#: configurations.
NUMCODECS_KINDS: Mapping[str, CodecKind] = MappingProxyType(
    {n: c["kind"] for n, c in CODEC_REGISTRY.items() if n.startswith("numcodecs.") and c["decodes"]}
)


def _choices(codec: str, member: str) -> tuple[str, ...]:
    """The values a choice member of a codec takes, from the registry."""
    (m,) = (m for m in CODEC_REGISTRY[codec]["members"] if m["key"] == member)
    return tuple(m["choices"])


#: Blosc internal compressors zarrox supports (the spec also names "snappy": unsupported).
BLOSC_CNAMES: tuple[str, ...] = _choices("blosc", "cname")
BLOSC_SHUFFLES: tuple[str, ...] = _choices("blosc", "shuffle")

_INDEX_DTYPE = np.dtype("uint64")
#: codecs with a fixed encoded size, the ones zarr-python 3.4 allows in a shard's index_codecs
FIXED_SIZE_CODECS: frozenset[str] = frozenset(
    n for n, c in CODEC_REGISTRY.items() if c["fixed_size"]
)
_CODEC_MEMBERS = frozenset({"name", "configuration", "must_understand"})
#: codecs zarr-python writes with ``"configuration": {}``
_ALWAYS_CONFIGURED = frozenset(n for n, c in CODEC_REGISTRY.items() if c["always_configured"])


def _always_configured(name: str) -> bool:
    """Whether zarr-python writes the codec with ``"configuration": {}`` when it is empty:
    the vlen codecs, and every ``numcodecs.<id>`` codec."""
    return name in _ALWAYS_CONFIGURED or name.startswith("numcodecs.")


_VLEN_CODECS = {"string": "vlen-utf8", "bytes": "vlen-bytes"}


@dataclass(frozen=True)
class _Ctx:
    """What a codec configuration is checked against."""

    dtype: np.dtype[Any]
    data_type: str  # the data type's name, for messages
    info: DataType
    ndim: int | None
    chunk_shape: tuple[int, ...] | None
    where: str  # message prefix, e.g. "zarr.json at 'a': "
    label: str  # e.g. "codecs" or "codecs[0].configuration.codecs"
    fill: bool  # fill in defaults (creation) rather than only validate (reading)
    form: CodecForm
    index: bool = False  # checking a sharding index_codecs chain

    def err(self, msg: str) -> MetadataError:
        return MetadataError(f"{self.where}{msg}")


def _split_codec(
    codec: object, ctx: _Ctx, label: str
) -> tuple[str, dict[str, Any], bool | None, bool]:
    """Split a codec (short-hand name or object) into name, configuration, must_understand.

    The last item tells whether the object had a ``configuration`` member.
    """
    if isinstance(codec, str):
        if not codec:
            raise ctx.err(f"{label}: codec name must not be empty")
        return codec, {}, None, False
    if not isinstance(codec, Mapping):
        raise ctx.err(
            f"{label}: a codec must be an object with a 'name' or a name string, "
            f"got {type(codec).__name__} {codec!r}"
        )
    unknown = sorted(str(k) for k in codec if k not in _CODEC_MEMBERS)
    if unknown:
        raise ctx.err(f"{label}: unknown member(s) {unknown} in codec object {dict(codec)!r}")
    if "name" not in codec:
        raise ctx.err(f"{label}: codec object has no 'name' member: {dict(codec)!r}")
    name = codec["name"]
    if not isinstance(name, str) or not name:
        raise ctx.err(f"{label}.name: must be a non-empty string, got {name!r}")
    has_cfg = "configuration" in codec
    cfg = codec.get("configuration", {})
    if not isinstance(cfg, Mapping):
        raise ctx.err(
            f"{label}.configuration: codec {name!r} configuration must be an object, got {cfg!r}"
        )
    must_understand = codec.get("must_understand")
    if "must_understand" in codec and not isinstance(must_understand, bool):
        raise ctx.err(f"{label}.must_understand: must be a boolean, got {must_understand!r}")
    return name, copy_json(dict(cfg)), must_understand, has_cfg


def _complete_config(
    name: str, cfg: Mapping[str, Any], ctx: _Ctx, label: str, item_size: int = 1
) -> dict[str, Any]:
    """The complete configuration of codec ``name`` as its Rust codec defines it: members
    checked, defaults filled in (zarr-python's, in its member order). ``item_size``: the
    bytes per element of the chunks it encodes (blosc's ``typesize`` and ``shuffle``
    follow it). A malformed configuration raises the codec's error, prefixed with where."""
    try:
        text = json.dumps(
            {"name": name, "configuration": cfg}, default=json_scalar, allow_nan=False
        )
    except (TypeError, ValueError) as e:
        raise ctx.err(f"{label}.configuration: codec {name!r}: {e}") from None
    try:
        return json.loads(_core.codec_configuration(text, item_size))  # type: ignore[no-any-return]
    except (MetadataError, UnsupportedError) as e:
        raise type(e)(f"{ctx.where}{label}: {e}") from None


def _check_not_vlen(name: str, ctx: _Ctx, label: str) -> None:
    if ctx.info.is_variable_length:
        raise ctx.err(
            f"{label}: codec {name!r} cannot encode the variable-length data type "
            f"{ctx.data_type!r} (use {_VLEN_CODECS[ctx.info.category]!r})"
        )


def _cfg_bytes(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("bytes", cfg, ctx, label)
    _check_not_vlen("bytes", ctx, label)
    endian = cfg.get("endian")
    if ctx.info.has_byte_order and ctx.info.name == "structured":
        # zarr-python writes the legacy type without "endian" (and drops one given when it
        # creates); the spec says to read that as little-endian.
        if ctx.form == "core":
            return complete
        return {} if ctx.fill else cfg
    if ctx.info.has_byte_order:
        if endian is None and not ctx.fill:
            raise ctx.err(
                f"{label}.configuration.endian: the bytes codec requires 'endian' for "
                f"data type {ctx.data_type!r}"
            )
        return complete
    # One-byte, raw and byte-string types have no byte order: zarr-python drops "endian" when
    # it creates.
    if ctx.fill:
        return {}
    return cfg


def _cfg_vlen(name: str, category: str) -> Callable[[dict[str, Any], _Ctx, str], dict[str, Any]]:
    def check(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
        _complete_config(name, cfg, ctx, label)
        if ctx.info.category != category:
            raise ctx.err(
                f"{label}: codec {name!r} only encodes the {category!r} data type, not "
                f"{ctx.data_type!r}"
            )
        return {}

    return check


def _packbits_bit(cfg: dict[str, Any], keys: tuple[str, str], ctx: _Ctx, label: str) -> Any:
    given = [k for k in keys if k in cfg and cfg[k] is not None]
    if len(given) > 1:
        raise ctx.err(f"{label}.configuration: give one of {list(keys)}, not both")
    if not given:
        return None
    value = cfg[given[0]]
    if not _is_int(value) or value < 0:
        raise ctx.err(
            f"{label}.configuration.{given[0]}: must be a non-negative integer or null, "
            f"got {value!r}"
        )
    return int(value)


def _cfg_packbits(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("packbits", cfg, ctx, label)
    _check_not_vlen("packbits", ctx, label)
    layout = ctx.info.packbits_layout()
    if layout is None:
        raise ctx.err(f"{label}: codec 'packbits' does not support data type {ctx.data_type!r}")
    nbits = layout[0]
    first = _packbits_bit(cfg, ("first_bit", "start_bit"), ctx, label)
    last = _packbits_bit(cfg, ("last_bit", "end_bit"), ctx, label)
    first = 0 if first is None else first
    last = nbits - 1 if last is None else last
    if not first <= last < nbits:
        raise ctx.err(
            f"{label}.configuration: need first_bit <= last_bit < {nbits} (the bits of "
            f"{ctx.data_type!r}), got first_bit {first}, last_bit {last}"
        )
    if ctx.form == "core":
        info = ctx.info
        signed = (info.category == "small_int" and info.name.startswith("int")) or (
            info.category == "int" and info.dtype.kind == "i"
        )
        return {
            "padding_encoding": complete["padding_encoding"],
            "first_bit": first,
            "last_bit": last,
            # what the core needs to know of the data type
            "bits": nbits,
            "components": layout[1],
            "signed": signed,
        }
    return cfg


def _cfg_transpose(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    order = _complete_config("transpose", cfg, ctx, label)["order"]
    if (
        isinstance(order, str | bytes)
        or not isinstance(order, Sequence)
        or not all(_is_int(i) for i in order)
    ):
        raise ctx.err(f"{label}.configuration.order: must be an array of integers, got {order!r}")
    order_list = [int(i) for i in order]
    n = ctx.ndim if ctx.ndim is not None else len(order_list)
    if not _core.transpose_is_permutation(order_list, n):
        raise ctx.err(
            f"{label}.configuration.order: {order_list} is not a permutation of "
            f"{list(range(n))} (the chunks have {n} dimension(s))"
        )
    return {"order": order_list}


def _cfg_gzip(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("gzip", cfg, ctx, label)
    return complete if ctx.fill or "level" in cfg else cfg


def _cfg_complete(name: str) -> Callable[[dict[str, Any], _Ctx, str], dict[str, Any]]:
    """The checker of a codec whose rules are all the core's: its configuration completed
    (creating) or checked and kept as given (reading)."""

    def check(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
        complete = _complete_config(name, cfg, ctx, label)
        return complete if ctx.fill else cfg

    return check


def _cfg_blosc(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    # zarr-python uses 1 for the variable-length types (they have no item size)
    item_size = 1 if ctx.info.is_variable_length else ctx.dtype.itemsize
    complete = _complete_config("blosc", cfg, ctx, label, item_size)
    return complete if ctx.fill else cfg


def _positive_int_list(value: object, ctx: _Ctx, label: str) -> list[int]:
    if (
        isinstance(value, str | bytes)
        or not isinstance(value, Sequence)
        or not all(_is_int(v) and v > 0 for v in value)
    ):
        raise ctx.err(f"{label}: must be an array of positive integers, got {value!r}")
    return [int(v) for v in value]


def _cfg_sharding(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("sharding_indexed", cfg, ctx, label)
    clabel = f"{label}.configuration"
    raw = cfg["chunk_shape"]
    if isinstance(raw, list):  # JSON true (zarr-python 3.0 and 3.2 wrote it) is 1
        raw = [1 if v is True else v for v in raw]
    inner = _positive_int_list(raw, ctx, f"{clabel}.chunk_shape")
    if ctx.ndim is not None and len(inner) != ctx.ndim:
        raise ctx.err(
            f"{clabel}.chunk_shape: has {len(inner)} dimension(s), the array has {ctx.ndim}"
        )
    per_shard: tuple[int, ...] | None = None
    if ctx.chunk_shape is not None:
        divisions = _core.chunks_per_shard(list(ctx.chunk_shape), inner)
        if divisions is None:
            raise ctx.err(
                f"{clabel}.chunk_shape: inner chunk shape {inner} must evenly divide the "
                f"shard shape {list(ctx.chunk_shape)}"
            )
        per_shard = (*divisions, 2)
    for key in ("codecs", "index_codecs"):
        if key not in cfg and not ctx.fill:
            raise ctx.err(f"{clabel}: sharding_indexed requires member {key!r}")
    location = complete["index_location"]
    inner_codecs = cfg.get("codecs", complete["codecs"])
    index_codecs = cfg.get("index_codecs", complete["index_codecs"])
    inner_ctx = replace(
        ctx, chunk_shape=tuple(inner), ndim=len(inner), label=f"{clabel}.codecs", index=False
    )
    inner_out = _process_chain(inner_codecs, inner_ctx)
    index_ctx = replace(
        ctx,
        dtype=_INDEX_DTYPE,
        data_type="uint64",
        info=parse_data_type_json("uint64"),
        ndim=len(inner) + 1,
        chunk_shape=per_shard,
        label=f"{clabel}.index_codecs",
        index=True,
    )
    index_out = _process_chain(index_codecs, index_ctx)
    if not ctx.fill:
        return cfg
    return {
        "chunk_shape": inner,
        "codecs": inner_out,
        "index_codecs": index_out,
        "index_location": location,
    }


def _numeric_info(name: str, ctx: _Ctx, label: str) -> None:
    """Error unless the chunk's data type is one zarr-python 3.4 scales and casts."""
    if ctx.data_type in NUMERIC_TYPES:
        return
    if ctx.info.category in ("int", "small_int", "float"):
        raise UnsupportedError(
            f"{ctx.where}{label}: codec {name!r} on data type {ctx.data_type!r} is not "
            f"supported (zarrox and zarr-python take {sorted(NUMERIC_TYPES)})"
        )
    raise ctx.err(
        f"{label}: codec {name!r} only takes integer and floating-point data types, not "
        f"{ctx.data_type!r}"
    )


def _defaults(name: str) -> dict[str, Any]:
    """The configuration codec ``name`` completes to when given no members."""
    return dict(CODEC_REGISTRY[name]["defaults"])


def _cfg_scale_offset(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("scale_offset", cfg, ctx, label)
    _numeric_info("scale_offset", ctx, label)
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
        defaults = _defaults("scale_offset")
        return {k: cfg[k] for k, d in defaults.items() if k in cfg and cfg[k] != d}
    return cfg


def _cfg_cast_value(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    complete = _complete_config("cast_value", cfg, ctx, label)
    clabel = f"{label}.configuration"
    _numeric_info("cast_value", ctx, label)
    target = parse_data_type_json(cfg["data_type"], label=f"{clabel}.data_type")
    if target.name not in NUMERIC_TYPES:
        _numeric_info("cast_value", replace(ctx, data_type=target.name, info=target), clabel)
    rounding = complete["rounding"]
    out_of_range = complete["out_of_range"]
    if out_of_range == "wrap" and target.dtype.kind not in "iu":
        raise ctx.err(
            f"{clabel}.out_of_range: 'wrap' is only valid for integer target types, not "
            f"{target.name!r}"
        )
    maps = _scalar_maps(cfg.get("scalar_map"), ctx.dtype, target.dtype, ctx, clabel)
    if ctx.form == "core":
        return {
            "data_type": target.name,
            "rounding": rounding,
            "out_of_range": out_of_range,
            "scalar_map": {
                direction: [[core_scalar(k), core_scalar(v)] for k, v in entries]
                for direction, (_, entries) in maps.items()
            },
        }
    if not ctx.fill:
        return cfg
    # As zarr-python writes it: defaults left out, each map as de-duplicated pairs.
    out: dict[str, Any] = {"data_type": target.json}
    default = _complete_config("cast_value", {"data_type": cfg["data_type"]}, ctx, label)
    if rounding != default["rounding"]:
        out["rounding"] = rounding
    if out_of_range is not None:
        out["out_of_range"] = out_of_range
    if maps:
        out["scalar_map"] = {d: [list(p) for p in pairs] for d, (pairs, _) in maps.items()}
    return out


def _scalar_maps(
    value: object, source: np.dtype[Any], target: np.dtype[Any], ctx: _Ctx, label: str
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


def _cfg_bitround(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    keepbits = _complete_config("bitround", cfg, ctx, label)["keepbits"]
    info = ctx.info
    fmt = info.float_format
    mantissa = None if fmt is None else _core.bitround_mantissa_bits(fmt.name)
    if info.category == "int" or info.category == "datetime":
        component, mantissa = info.dtype.itemsize, None
    elif info.category in ("float", "complex") and fmt is not None and mantissa is not None:
        component = fmt.size
    else:
        raise UnsupportedError(
            f"{ctx.where}{label}: codec 'bitround' does not support data type {ctx.data_type!r}"
        )
    if ctx.form == "core":
        return {
            "keepbits": int(keepbits),
            "component_size": component,
            "mantissa_bits": mantissa,
        }
    return {"keepbits": int(keepbits)} if ctx.fill else cfg


def _cfg_reshape(cfg: dict[str, Any], ctx: _Ctx, label: str) -> dict[str, Any]:
    _complete_config("reshape", cfg, ctx, label)
    _reshape_output(cfg["shape"], ctx, label)
    return {"shape": copy_json(cfg["shape"])} if ctx.fill or ctx.form == "core" else cfg


def _reshape_output(spec: object, ctx: _Ctx, label: str) -> tuple[int, ...] | None:
    """The chunk shape after ``reshape`` with ``shape`` = ``spec`` (None when the input shape
    is unknown): the core's rule (``_core.reshape_output_shape``); a MetadataError if
    ``spec`` is malformed or does not fit the chunk."""
    where = f"{label}.configuration.shape"
    if isinstance(spec, str | bytes | Mapping) or not isinstance(spec, Sequence):
        raise ctx.err(f"{where}: must be an array, got {spec!r}")
    # (the configuration is JSON already: _complete_config had the core complete it)
    chunk = None if ctx.chunk_shape is None else [int(c) for c in ctx.chunk_shape]
    try:
        shape = _core.reshape_output_shape(json.dumps(list(spec)), chunk, ctx.ndim)
    except MetadataError as e:
        raise ctx.err(f"{where}: {e}") from None
    return None if shape is None else tuple(shape)


#: the codecs with rules that need numpy or the array's data type model (the others are
#: checked by the core alone: ``_cfg_complete``)
_CONFIG_CHECKERS = {
    "bytes": _cfg_bytes,
    "transpose": _cfg_transpose,
    "gzip": _cfg_gzip,
    "blosc": _cfg_blosc,
    "sharding_indexed": _cfg_sharding,
    "vlen-utf8": _cfg_vlen("vlen-utf8", "string"),
    "vlen-bytes": _cfg_vlen("vlen-bytes", "bytes"),
    "packbits": _cfg_packbits,
    "scale_offset": _cfg_scale_offset,
    "cast_value": _cfg_cast_value,
    "bitround": _cfg_bitround,
    "reshape": _cfg_reshape,
}


def _emit(
    name: str, cfg: dict[str, Any], must_understand: bool | None, form: CodecForm
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if form == "json":
        if cfg or _always_configured(name):
            out["configuration"] = cfg
    else:
        out["configuration"] = cfg
    if must_understand is not None and form != "core":
        out["must_understand"] = must_understand
    return out


def _process_chain(codecs: object, ctx: _Ctx) -> list[dict[str, Any]]:
    """Validate (and, with ``ctx.fill``, complete) a codec chain; return it in ``ctx.form``."""
    label = ctx.label
    if isinstance(codecs, str | bytes | Mapping) or not isinstance(codecs, Sequence):
        raise ctx.err(f"{label}: must be an array of codecs, got {codecs!r}")
    if len(codecs) == 0:
        raise ctx.err(f"{label}: must not be empty (an array->bytes codec is required)")
    out: list[dict[str, Any]] = []
    kinds: list[tuple[CodecKind, str, str]] = []
    for i, codec in enumerate(codecs):
        item_label = f"{label}[{i}]"
        name, cfg, must_understand, _ = _split_codec(codec, ctx, item_label)
        # a codec of the registry with no array-dependent rules of numpy's is the core's alone
        checker = _CONFIG_CHECKERS.get(name) or (
            _cfg_complete(name) if name in CODEC_KINDS else None
        )
        if ctx.index and name not in FIXED_SIZE_CODECS and (checker or name in NUMCODECS_KINDS):
            raise ctx.err(
                f"{item_label}: codec {name!r} cannot be used in index_codecs (the shard index "
                f"must have a fixed size: use {', '.join(sorted(FIXED_SIZE_CODECS))})"
            )
        if checker is None and name in NUMCODECS_KINDS:
            kinds.append((NUMCODECS_KINDS[name], name, item_label))
            out.append(_emit(name, dict(cfg), must_understand, ctx.form))
            continue
        if checker is None:
            if must_understand is False:
                # The spec lets an implementation ignore such a codec: keep it in the document,
                # leave it out of the chain given to the core.
                if ctx.form != "core":
                    out.append(_emit(name, cfg, must_understand, ctx.form))
                continue
            raise UnknownCodecError(
                f"{ctx.where}{item_label}: unsupported codec {name!r} "
                f"(zarrox supports {sorted(CODEC_KINDS)} and numcodecs.<id> for "
                f"{sorted(n.split('.', 1)[1] for n in NUMCODECS_KINDS)})"
            )
        kind = CODEC_KINDS[name]
        new_cfg = checker(cfg, replace(ctx, label=item_label), item_label)
        kinds.append((kind, name, item_label))
        out.append(_emit(name, new_cfg, must_understand, ctx.form))
        # Later codecs see the chunk as this one encodes it.
        if name == "transpose" and ctx.chunk_shape is not None:
            order = new_cfg["order"]
            ctx = replace(ctx, chunk_shape=tuple(ctx.chunk_shape[d] for d in order))
        elif name == "cast_value":
            target = parse_data_type_json(cfg["data_type"])
            ctx = replace(ctx, dtype=target.dtype, data_type=target.name, info=target)
        elif name == "reshape":
            shape = _reshape_output(cfg["shape"], ctx, item_label)
            ctx = replace(ctx, chunk_shape=shape, ndim=len(cfg["shape"]))
    _check_order(kinds, ctx)
    return out


#: the array->bytes codecs, as the message of a chain without one lists them
_SERIALIZERS = [n for n, k in {**CODEC_KINDS, **NUMCODECS_KINDS}.items() if k == "array->bytes"]


def _check_order(kinds: list[tuple[CodecKind, str, str]], ctx: _Ctx) -> None:
    """The order of a chain, as the core's registry rules it."""
    problem = _core.codec_order_problem([kind for kind, _, _ in kinds])
    if problem is None:
        return
    what, i = problem
    if what == "no array->bytes":
        raise ctx.err(
            f"{ctx.label}: must contain exactly one array->bytes codec "
            f"({', '.join(_SERIALIZERS[:-1])} or {_SERIALIZERS[-1]}), found none in "
            f"{[n for _, n, _ in kinds]}"
        )
    if what == "several array->bytes":
        raise ctx.err(
            f"{ctx.label}: must contain exactly one array->bytes codec, found "
            f"{[name for kind, name, _ in kinds if kind == 'array->bytes']}"
        )
    _, name, lab = kinds[i]
    if what == "array->array after":
        raise ctx.err(f"{lab}: array->array codec {name!r} must come before the array->bytes codec")
    raise ctx.err(f"{lab}: bytes->bytes codec {name!r} must come after the array->bytes codec")


def _resolve_info(dtype: object, data_type: object, path: str | None) -> DataType:
    """The data type of a chain: ``data_type`` (a v3 ``data_type`` value) checked against the
    numpy ``dtype``, or the one zarr-python writes for ``dtype``."""
    if data_type is None:
        return data_type_from_numpy(dtype, path=path)
    info = parse_data_type_json(data_type, path=path)
    dt = native_dtype(np.dtype(dtype))  # type: ignore[call-overload]
    if info.dtype != dt and not (info.is_variable_length and dt.kind in "OT"):
        raise MetadataError(
            f"{_where(path)}data type {data_type!r} does not match numpy dtype {dt}"
        )
    return info


def _ctx(
    dtype: np.dtype[Any] | Any,
    data_type: object,
    ndim: int | None,
    chunk_shape: Sequence[int] | None,
    path: str | None,
    *,
    fill: bool,
    form: CodecForm,
) -> _Ctx:
    info = _resolve_info(dtype, data_type, path)
    if chunk_shape is not None and ndim is None:
        ndim = len(chunk_shape)
    return _Ctx(
        dtype=info.dtype,
        data_type=info.name,
        info=info,
        ndim=ndim,
        chunk_shape=None if chunk_shape is None else tuple(int(c) for c in chunk_shape),
        where=_where(path),
        label="codecs",
        fill=fill,
        form=form,
    )


def validate_codecs(
    codecs: object,
    *,
    dtype: np.dtype[Any] | Any,
    data_type: str | Mapping[str, Any] | None = None,
    ndim: int | None = None,
    chunk_shape: Sequence[int] | None = None,
    path: str | None = None,
) -> list[dict[str, Any]]:
    """Validate the ``codecs`` member of a stored ``zarr.json``; return it in ``normalized`` form.

    Nothing is filled in: configurations are kept as stored (so that writing the document back
    reproduces it). Unknown codec names raise :class:`UnsupportedError` unless the codec object
    says ``"must_understand": false``; malformed codecs raise :class:`MetadataError`.
    """
    ctx = _ctx(dtype, data_type, ndim, chunk_shape, path, fill=False, form="normalized")
    return _process_chain(codecs, ctx)


def normalize_codecs(
    codecs: object,
    *,
    dtype: np.dtype[Any] | Any,
    data_type: str | Mapping[str, Any] | None = None,
    ndim: int | None = None,
    chunk_shape: Sequence[int] | None = None,
    form: CodecForm = "json",
    path: str | None = None,
) -> list[dict[str, Any]]:
    """Validate a codec chain and fill in every default the way zarr-python 3.1 does.

    ``form="json"`` gives the chain as zarr-python writes it to ``zarr.json``; ``form="core"``
    the complete form the Rust core consumes (see the module docstring).
    """
    ctx = _ctx(dtype, data_type, ndim, chunk_shape, path, fill=True, form=form)
    return _process_chain(codecs, ctx)


def codecs_to_json(codecs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Codecs in ``normalized`` (or any) dict form -> the ``zarr.json`` form.

    Drops empty ``configuration`` members (as zarr-python writes ``{"name": "crc32c"}``); nested
    configurations are deep-copied unchanged.
    """
    out = []
    for codec in codecs:
        if isinstance(codec, str):
            out.append({"name": codec})
            continue
        d: dict[str, Any] = {"name": codec["name"]}
        cfg = codec.get("configuration")
        if cfg or _always_configured(codec["name"]):
            d["configuration"] = copy_json(dict(cfg or {}))
        if "must_understand" in codec:
            d["must_understand"] = codec["must_understand"]
        out.append(d)
    return out


def _codec_json(value: object) -> object:
    """A codec object with ``to_dict()`` (zarr-python's codec classes) as its JSON; other
    values as they are."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, str | Mapping):
        return to_dict()
    return value


def _as_codec_list(value: object, what: str, where: str) -> list[object]:
    value = _codec_json(value)
    if isinstance(value, str | Mapping):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, bytes):
        return [_codec_json(v) for v in value]
    raise MetadataError(
        f"{where}{what} must be a codec (an object with 'name', or a name), a list of "
        f"codecs, or None; got {value!r}"
    )


def _check_kind(items: list[object], expected: CodecKind, what: str, where: str) -> None:
    for item in items:
        if isinstance(item, str):
            name: object = item
        elif isinstance(item, Mapping):
            name = item.get("name")
        else:
            raise MetadataError(
                f"{where}{what}: a codec must be an object with a 'name' or a name string, "
                f"got {item!r}"
            )
        kind = CODEC_KINDS.get(name) if isinstance(name, str) else None
        if kind is not None and kind != expected:
            raise MetadataError(
                f"{where}{what}: codec {name!r} is an {kind} codec, {what} takes {expected} codecs"
            )


def build_codecs(
    dtype: np.dtype[Any] | Any,
    *,
    data_type: str | Mapping[str, Any] | None = None,
    filters: object = None,
    serializer: object = "auto",
    compressors: object = "auto",
    codecs: object = None,
    ndim: int | None = None,
    chunk_shape: Sequence[int] | None = None,
    path: str | None = None,
) -> list[dict[str, Any]]:
    """The ``codecs`` list, as zarr-python 3.1 writes it, for ``create_array``-style arguments.

    - ``codecs``: a full v3 chain; when given, ``filters``/``serializer``/``compressors`` are
      ignored.
    - ``filters``: ``None``, ``"auto"`` or ``[]`` (none), a codec, or a list of array->array
      codecs.
    - ``serializer``: ``"auto"`` (``vlen-utf8`` for ``string``, ``vlen-bytes`` for ``bytes``,
      else the ``bytes`` codec: ``{"endian": "little"}`` for data types with a byte order,
      without configuration for the others and for the legacy ``structured``) or an
      array->bytes codec.
    - ``compressors``: ``"auto"`` (zstd level 0, no checksum), ``None`` or ``[]`` (none), a
      codec, or a list of bytes->bytes codecs.

    A codec is ``{"name": ..., "configuration": {...}}`` with ``configuration`` optional, or a
    bare name. Missing configuration members get zarr-python's defaults, as the Rust codecs
    define them (``rust/codec/complete.rs``); blosc's ``typesize`` and ``shuffle`` follow the
    data type's item size.
    ``ndim`` (the array's number of dimensions) checks transpose orders and sharding chunk
    shapes; ``chunk_shape`` (the array's chunk shape) also checks that sharding inner chunks
    divide it.
    """
    where = _where(path)
    if codecs is not None:
        chain = _as_codec_list(codecs, "codecs", where)
    else:
        chain = []
        if filters is not None and not (isinstance(filters, str) and filters == "auto"):
            items = _as_codec_list(filters, "filters", where)
            _check_kind(items, "array->array", "filters", where)
            chain.extend(items)
        if isinstance(serializer, str) and serializer == "auto":
            info = _resolve_info(dtype, data_type, path)
            chain.append({"name": _VLEN_CODECS.get(info.category, "bytes")})
        else:
            serializer = _codec_json(serializer)
            if not isinstance(serializer, str | Mapping):
                raise MetadataError(
                    f'{where}serializer must be "auto" or one array->bytes codec, '
                    f"got {serializer!r}"
                )
            _check_kind([serializer], "array->bytes", "serializer", where)
            chain.append(serializer)
        if isinstance(compressors, str) and compressors == "auto":
            chain.append({"name": "zstd"})
        elif compressors is not None:
            items = _as_codec_list(compressors, "compressors", where)
            _check_kind(items, "bytes->bytes", "compressors", where)
            chain.extend(items)
    return normalize_codecs(
        chain,
        dtype=dtype,
        data_type=data_type,
        ndim=ndim,
        chunk_shape=chunk_shape,
        form="json",
        path=path,
    )
