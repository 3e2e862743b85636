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
are the Rust codecs' (``_core.codec_configuration``, see ``rust/codec/complete.rs``); the
rules of a chain (each codec against the array's data type, chunk shape and dimensions, the
order, sharding's inner chains, the three forms) are the core's too (``_core.codec_chain``,
``rust/codec/chain_rules.rs``). This module hands the core the array's data type facts and
keeps the rules of ``scale_offset`` and ``cast_value``, whose scalars are read as
zarr-python reads them with numpy (``codec_scalars``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from zarrox import _core
from zarrox.errors import MetadataError
from zarrox.metadata._checks import copy_json
from zarrox.metadata.codec_scalars import (
    NumericCtx,
    cast_value_config,
    numeric_info,
    scale_offset_config,
)
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


#: codecs with a fixed encoded size, the ones zarr-python 3.4 allows in a shard's index_codecs
FIXED_SIZE_CODECS: frozenset[str] = frozenset(
    n for n, c in CODEC_REGISTRY.items() if c["fixed_size"]
)


#: codecs zarr-python writes with ``"configuration": {}``
_ALWAYS_CONFIGURED = frozenset(n for n, c in CODEC_REGISTRY.items() if c["always_configured"])


def _always_configured(name: str) -> bool:
    """Whether zarr-python writes the codec with ``"configuration": {}`` when it is empty:
    the vlen codecs, and every ``numcodecs.<id>`` codec."""
    return name in _ALWAYS_CONFIGURED or name.startswith("numcodecs.")


_VLEN_CODECS = {"string": "vlen-utf8", "bytes": "vlen-bytes"}


def _facts(info: DataType) -> dict[str, Any]:
    """What the core's chain rules need to know of a data type (``DataFacts`` in
    ``rust/codec/chain_rules.rs``)."""
    fmt = info.float_format
    signed = (info.category == "small_int" and info.name.startswith("int")) or (
        info.category == "int" and info.dtype.kind == "i"
    )
    return {
        "name": info.name,
        "category": info.category,
        "item_size": info.dtype.itemsize,
        "has_byte_order": info.has_byte_order,
        "variable_length": info.is_variable_length,
        "packbits": info.packbits_layout(),
        "signed": signed,
        "float_format": None if fmt is None else (fmt.name, fmt.size),
    }


def _numeric_codec(
    name: str,
    cfg: dict[str, Any],
    complete: dict[str, Any],
    data_type: tuple[str, str],
    where_label: tuple[str, str],
    fill_form: tuple[bool, CodecForm],
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The rules of ``scale_offset`` and ``cast_value``, which the core's chain rules call
    (``numeric`` of ``_core.codec_chain``): the configuration in the chain's form and, for
    ``cast_value``, the facts of the data type later codecs see."""
    (type_name, category), (where, label), (fill, form) = data_type, where_label, fill_form
    numeric_info(name, type_name, category, where, label)
    ctx = NumericCtx(info=parse_data_type_json(type_name), where=where, fill=fill, form=form)
    if name == "scale_offset":
        return scale_offset_config(cfg, complete, ctx, label), None
    out, target = cast_value_config(cfg, complete, ctx, label)
    return out, _facts(target)


def _process_chain(
    codecs: object,
    info: DataType,
    ndim: int | None,
    chunk_shape: Sequence[int] | None,
    path: str | None,
    *,
    fill: bool,
    form: CodecForm,
) -> list[dict[str, Any]]:
    """Validate (and, with ``fill``, complete) a codec chain; return it in ``form``: the
    core's rules (``rust/codec/chain_rules.rs``), with this module's for the numeric codecs."""
    chunks = None if chunk_shape is None else [int(c) for c in chunk_shape]
    facts = _facts(info)
    where = _where(path)
    return _core.codec_chain(codecs, facts, (ndim, chunks), where, fill, form, _numeric_codec)


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
    info = _resolve_info(dtype, data_type, path)
    return _process_chain(codecs, info, ndim, chunk_shape, path, fill=False, form="normalized")


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
    info = _resolve_info(dtype, data_type, path)
    return _process_chain(codecs, info, ndim, chunk_shape, path, fill=True, form=form)


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
