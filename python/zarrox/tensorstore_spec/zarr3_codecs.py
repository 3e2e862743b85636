"""Partial zarr v3 codec chains, as the ``zarr3`` driver takes them in ``metadata.codecs`` and
``schema.codec``: codecs may be given as names (``"gzip"``), configurations may be partial or
left out, and the array -> bytes codec may be omitted. When an array is created, the chain
is *resolved*: every option gets the value TensorStore chooses, and the result is the
``codecs`` member TensorStore writes. When an array is opened, a chain constrains the stored
one: each option given must match.

The codecs TensorStore defines (``transpose``, ``bytes``, ``sharding_indexed``, ``gzip``,
``zstd``, ``blosc``, ``crc32c``) are checked option by option. The other codecs zarrox
implements (``vlen-utf8``, ``packbits``, ``numcodecs.*``) are accepted as given, their
configuration checked when the metadata is validated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.errors import SpecMismatchError
from zarrox.metadata.codecs import CODEC_KINDS, CODEC_REGISTRY, NUMCODECS_KINDS
from zarrox.tensorstore_spec._json import (
    check_members,
    expect_bool,
    expect_int,
    expect_int_list,
    expect_list,
    expect_object,
    expect_str,
    fail,
    member,
)

A2A, A2B, B2B = "array -> array", "array -> bytes", "bytes -> bytes"
_KIND = {"array->array": A2A, "array->bytes": A2B, "bytes->bytes": B2B}

_SHARDING_DEFAULTS = json.loads(
    _core.codec_configuration(
        '{"name": "sharding_indexed", "configuration": {"chunk_shape": [1]}}', 1
    )
)
#: the sharding codec's defaults (the core's, zarr-python's and TensorStore's alike)
DEFAULT_INDEX_CODECS: list[dict[str, Any]] = _SHARDING_DEFAULTS["index_codecs"]
DEFAULT_INDEX_LOCATION: str = _SHARDING_DEFAULTS["index_location"]


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@dataclass
class Codec:
    """One codec: its name and the options given (a sharding codec's ``codecs`` and
    ``index_codecs`` are :class:`Chain` objects). ``extension`` codecs (zarrox's own, unknown
    to TensorStore) keep their configuration as given."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    extension: bool = False

    @property
    def core_kind(self) -> str:
        """``array->array``, ``array->bytes`` or ``bytes->bytes`` (the core's registry)."""
        return CODEC_KINDS.get(self.name) or NUMCODECS_KINDS[self.name]

    @property
    def kind(self) -> str:
        return _KIND[self.core_kind]

    def to_json(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        for key, value in self.options.items():
            config[key] = value.to_json() if isinstance(value, Chain) else copy.deepcopy(value)
        out: dict[str, Any] = {"name": self.name}
        if config:
            out["configuration"] = config
        return out


@dataclass
class Chain:
    array_to_array: list[Codec] = field(default_factory=list)
    array_to_bytes: Codec | None = None
    bytes_to_bytes: list[Codec] = field(default_factory=list)

    @property
    def codecs(self) -> list[Codec]:
        a2b = [self.array_to_bytes] if self.array_to_bytes is not None else []
        return [*self.array_to_array, *a2b, *self.bytes_to_bytes]

    @property
    def sharding(self) -> Codec | None:
        a2b = self.array_to_bytes
        return a2b if a2b is not None and a2b.name == "sharding_indexed" else None

    @property
    def sharding_height(self) -> int:
        s = self.sharding
        if s is None:
            return 0
        sub = s.options.get("codecs")
        return 1 + (sub.sharding_height if isinstance(sub, Chain) else 0)

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.codecs]

    def copy(self) -> Chain:
        return copy.deepcopy(self)


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def _order(value: object, where: str) -> list[int] | str:
    if value in ("C", "F"):
        return str(value)
    order = expect_int_list(value, where, lo=0)
    if not _core.transpose_is_permutation(order, len(order)):
        raise fail(where, f'expected a permutation, "C" or "F", got {value!r}')
    return order


def _enum(choices: Sequence[str]) -> Callable[[object, str], str]:
    return lambda v, w: expect_str(v, w, choices)


def _int(lo: int | None, hi: int | None) -> Callable[[object, str], int]:
    return lambda v, w: expect_int(v, w, lo=lo, hi=hi)


def _chunk_shape(value: object, where: str) -> list[int]:
    return expect_int_list(value, where, lo=1)


_I64 = 2**63


def _option(member: dict[str, Any]) -> Callable[[object, str], Any]:
    """The parser of one member of the core's registry (its ``tensorstore`` members)."""
    kind = member["type"]
    if kind == "int":
        lo, hi = member["min"], member["max"]
        return _int(None if lo <= -_I64 else lo, None if hi >= _I64 - 1 else hi)
    if kind == "bool":
        return expect_bool
    if kind == "choice":
        # with the choices the specification names and zarrox lacks, in TensorStore's order
        unsupported = member["unsupported"]
        choices = member["choices"]
        return _enum(sorted([*choices, *unsupported]) if unsupported else choices)
    if kind == "order":
        return _order
    if kind == "shape":
        return _chunk_shape
    assert kind == "chain", kind
    return lambda v, w: parse_chain(v, w)


#: option parsers of the codecs TensorStore defines, from the core's registry
_OPTIONS: dict[str, dict[str, Callable[[object, str], Any]]] = {
    name: {m["key"]: _option(m) for m in entry["tensorstore"]}
    for name, entry in CODEC_REGISTRY.items()
    if entry["tensorstore"] is not None
}
#: the cnames TensorStore's blosc takes (``snappy`` too, which zarrox's blosc does not have)
BLOSC_CNAMES = tuple(
    sorted(
        c
        for m in CODEC_REGISTRY["blosc"]["tensorstore"]
        if m["key"] == "cname"
        for c in [*m["choices"], *m["unsupported"]]
    )
)
#: options a codec needs even in a partial chain (as TensorStore requires)
_REQUIRED = {
    name: tuple(m["key"] for m in entry["tensorstore"] if m["required"])
    for name, entry in CODEC_REGISTRY.items()
    if entry["tensorstore"] is not None
}


def parse_codec(value: object, where: str) -> Codec:
    """A codec given as a name or as ``{"name", "configuration"}``."""
    if isinstance(value, str):
        value = {"name": value}
    obj = expect_object(value, where)
    check_members(obj, ("name", "configuration", "must_understand"), where)
    if "name" not in obj:
        raise fail(where, 'missing member "name"')
    name = expect_str(obj["name"], member(where, "name"))
    config_at = member(where, "configuration")
    config = expect_object(obj.get("configuration") or {}, config_at)
    if name in _OPTIONS:
        parsers = _OPTIONS[name]
        check_members(config, tuple(parsers), config_at)
        for key in _REQUIRED.get(name, ()):
            if key not in config:
                raise fail(config_at, f'the {name} codec needs member "{key}"')
        options = {k: parsers[k](v, member(config_at, k)) for k, v in config.items()}
        return Codec(name, options)
    if name in CODEC_KINDS or name in NUMCODECS_KINDS:
        return Codec(name, copy.deepcopy(config), extension=True)
    known = sorted({*_OPTIONS, *CODEC_KINDS, *NUMCODECS_KINDS})
    raise fail(
        member(where, "name"), f"{name!r} is not a registered codec; expected one of {known}"
    )


def parse_chain(value: object, where: str, *, complete: bool = False) -> Chain:
    """A codec chain: array -> array codecs, at most one array -> bytes codec (required
    when ``complete``, as in stored metadata), then bytes -> bytes codecs."""
    items = expect_list(value, where)
    codecs = [parse_codec(item, member(where, i)) for i, item in enumerate(items)]
    _check_order(codecs, where)
    chain = Chain()
    for codec in codecs:
        if codec.kind == A2A:
            chain.array_to_array.append(codec)
        elif codec.kind == A2B:
            chain.array_to_bytes = codec
        else:
            chain.bytes_to_bytes.append(codec)
    if complete and chain.array_to_bytes is None:
        raise fail(where, "missing the array -> bytes codec")
    return chain


def _check_order(codecs: list[Codec], where: str) -> None:
    """The order of a (partial) chain, as the core's registry rules it
    (``_core.codec_order_problem``, which ``metadata.codecs`` asks too); a chain without its
    array -> bytes codec is checked as if that codec stood after the array -> array codecs
    it begins with."""
    kinds = [c.core_kind for c in codecs]
    at = list(range(len(codecs)))  # the codec at each position of ``kinds``
    if "array->bytes" not in kinds:
        first = next((i for i, k in enumerate(kinds) if k != "array->array"), len(kinds))
        kinds.insert(first, "array->bytes")
        at.insert(first, -1)
    problem = _core.codec_order_problem(kinds)
    if problem is None:
        return
    what, i = problem
    serializers = [j for j, c in enumerate(codecs) if c.kind == A2B]
    if what == "several array->bytes":
        second = serializers[1]
        raise fail(member(where, second), f"a second array -> bytes codec {codecs[second].name!r}")
    if what == "bytes->bytes before":
        a2b = serializers[0]
        raise fail(
            member(where, a2b),
            f"the array -> bytes codec {codecs[a2b].name!r} must come before "
            "the bytes -> bytes codecs",
        )
    assert what == "array->array after", problem
    codec = codecs[at[i]]
    raise fail(member(where, at[i]), f"the {A2A} codec {codec.name!r} must come before the others")


# --------------------------------------------------------------------------------------------
# Merging (opening: constraints against the stored chain; creating: metadata and schema)
# --------------------------------------------------------------------------------------------


def _mismatch(where: str, a: object, b: object, why: str) -> SpecMismatchError:
    return SpecMismatchError(f"{where}: cannot merge codec constraints {a} and {b}: {why}")


def _merge_codec(target: Codec, source: Codec, where: str, strict: bool, rank: int | None) -> Codec:
    if target.name != source.name:
        raise _mismatch(where, target.to_json(), source.to_json(), "different codecs")
    if target.extension or source.extension:
        if target.options and source.options and target.options != source.options:
            raise _mismatch(where, target.to_json(), source.to_json(), "configurations differ")
        return Codec(target.name, dict(target.options or source.options), True)
    options = dict(target.options)
    for key, value in source.options.items():
        if key not in options:
            options[key] = value
            continue
        mine = options[key]
        if isinstance(mine, Chain) and isinstance(value, Chain):
            options[key] = merge_chains(mine, value, member(where, key), strict, rank)
        elif key == "order" and rank is not None:
            if _resolve_order(mine, rank) != _resolve_order(value, rank):
                raise _mismatch(
                    where,
                    target.to_json(),
                    source.to_json(),
                    f'incompatible "{key}": {mine!r} vs {value!r}',
                )
        elif mine != value:
            raise _mismatch(
                where,
                target.to_json(),
                source.to_json(),
                f'incompatible "{key}": {mine!r} vs {value!r}',
            )
    return Codec(target.name, options)


def _merge_lists(
    targets: list[Codec],
    sources: list[Codec],
    kind: str,
    where: str,
    strict: bool,
    rank: int | None,
) -> list[Codec]:
    targets = list(targets)
    count = len(targets)
    mismatch = len(targets) != len(sources)
    if kind == A2A and not strict:
        # either side may have one more transpose at the end
        if len(sources) == len(targets) + 1 and sources[-1].name == "transpose":
            targets.append(sources[-1])
            mismatch = False
        elif len(sources) + 1 == len(targets) and targets[-1].name == "transpose":
            count -= 1
            mismatch = False
    if mismatch:
        raise _mismatch(
            where,
            [c.to_json() for c in targets],
            [c.to_json() for c in sources],
            f"mismatch in number of {kind} codecs ({len(targets)} vs {len(sources)})",
        )
    for i in range(count):
        targets[i] = _merge_codec(targets[i], sources[i], member(where, i), strict, rank)
    return targets


def merge_chains(
    target: Chain, source: Chain, where: str, strict: bool, rank: int | None = None
) -> Chain:
    """The chain both describe. ``strict`` (opening): the codecs must correspond one to
    one. Otherwise (a metadata chain and a schema codec chain) a chain without sharding
    may describe the inner chunks of the other's sharding codec."""
    if not strict:
        th, sh = target.sharding_height, source.sharding_height
        if th > sh and not target.array_to_array and not target.bytes_to_bytes:
            return _merge_into_shard(target, source, where, rank)
        if sh > th and not source.array_to_array and not source.bytes_to_bytes:
            return _merge_into_shard(source, target, where, rank)
    out = Chain()
    out.array_to_array = _merge_lists(
        target.array_to_array, source.array_to_array, A2A, where, strict, rank
    )
    if target.array_to_bytes is None:
        out.array_to_bytes = source.array_to_bytes
    elif source.array_to_bytes is None:
        out.array_to_bytes = target.array_to_bytes
    else:
        out.array_to_bytes = _merge_codec(
            target.array_to_bytes, source.array_to_bytes, where, strict, rank
        )
    out.bytes_to_bytes = _merge_lists(
        target.bytes_to_bytes, source.bytes_to_bytes, B2B, where, strict, rank
    )
    return out


def _merge_into_shard(sharded: Chain, inner: Chain, where: str, rank: int | None) -> Chain:
    out = sharded.copy()
    assert out.array_to_bytes is not None
    sub = out.array_to_bytes.options.get("codecs")
    out.array_to_bytes.options["codecs"] = (
        inner.copy() if sub is None else merge_chains(sub, inner, where, False, rank)
    )
    return out


# --------------------------------------------------------------------------------------------
# Chunk layout implied by a chain
# --------------------------------------------------------------------------------------------


def _resolve_order(order: list[int] | str, rank: int) -> list[int]:
    if order == "C":
        return list(range(rank))
    if order == "F":
        return list(range(rank))[::-1]
    assert isinstance(order, list)
    return order


def _invert(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


@dataclass
class DecodedLayout:
    """What a chain says about the chunks it decodes: the storage order of elements, the
    shape of the read chunks (sharding: inner chunks), and whether read chunks are the
    whole chunk (no sharding)."""

    inner_order: list[int] | None = None
    read_chunk_shape: list[int] | None = None
    read_is_whole_chunk: bool = False


def decoded_layout(chain: Chain, rank: int) -> DecodedLayout:
    perm = list(range(rank))  # encoded dim i = decoded dim perm[i]
    for c in chain.array_to_array:
        if c.name == "transpose":
            order = _resolve_order(c.options["order"], rank)
            if len(order) != rank:
                raise fail("codecs", f"transpose order {order} does not have rank {rank}")
            perm = [perm[o] for o in order]
    a2b = chain.array_to_bytes
    if a2b is None:
        return DecodedLayout(perm if chain.array_to_array else None)
    if a2b.name == "sharding_indexed":
        out = DecodedLayout()
        shape = a2b.options.get("chunk_shape")
        if shape is not None:
            if len(shape) != rank:
                raise fail("codecs", f"sharding chunk_shape {shape} does not have rank {rank}")
            inv = _invert(perm)
            out.read_chunk_shape = [shape[inv[i]] for i in range(rank)]
        sub = a2b.options.get("codecs")
        if isinstance(sub, Chain):
            inner = decoded_layout(sub, rank)
            if inner.inner_order is not None:
                out.inner_order = [perm[o] for o in inner.inner_order]
        return out
    return DecodedLayout(perm, None, True)


# --------------------------------------------------------------------------------------------
# Resolving (creating): every option chosen as TensorStore chooses it
# --------------------------------------------------------------------------------------------


def _is_endian_invariant(dtype: np.dtype[Any]) -> bool:
    return dtype.itemsize <= 1


def _resolve_b2b(codec: Codec, item_bits: int, where: str) -> tuple[dict[str, Any], int]:
    """(resolved JSON, item bits of the encoded bytes) of a bytes -> bytes codec."""
    o = codec.options
    if codec.extension:
        return codec.to_json(), -1
    if codec.name == "gzip":
        return {"name": "gzip", "configuration": {"level": o.get("level", 6)}}, -1
    if codec.name == "zstd":
        zstd = {"level": o.get("level", 3), "checksum": o.get("checksum", False)}
        return {"name": "zstd", "configuration": zstd}, -1
    if codec.name == "crc32c":
        return {"name": "crc32c"}, -1
    assert codec.name == "blosc"
    shuffle = o.get("shuffle")
    typesize = o.get("typesize")
    if shuffle != "noshuffle" and typesize is None:
        if item_bits == -1 or item_bits % 8 != 0 or item_bits // 8 > 255:
            if shuffle is None:
                shuffle, typesize = "noshuffle", 1
            else:
                raise fail(
                    where,
                    "typesize must be given: the size of the items blosc compresses here is not "
                    "known",
                )
        else:
            typesize = item_bits // 8
    typesize = typesize or 1
    if shuffle is None:
        shuffle = "bitshuffle" if typesize == 1 else "shuffle"
    config: dict[str, Any] = {
        "cname": o.get("cname", "lz4"),
        "clevel": o.get("clevel", 5),
        "shuffle": shuffle,
        "blocksize": o.get("blocksize", 0),
    }
    if shuffle != "noshuffle":
        config["typesize"] = typesize
    return {"name": "blosc", "configuration": config}, -1


def resolve_chain(
    chain: Chain,
    *,
    dtype: np.dtype[Any],
    chunk_shape: Sequence[int],
    inner_order: Sequence[int] | None,
    read_chunk_shape: Sequence[int] | None,
    where: str = "metadata.codecs",
) -> list[dict[str, Any]]:
    """The complete ``codecs`` member TensorStore writes for ``chain`` on chunks of
    ``chunk_shape`` and data type ``dtype``; ``inner_order`` (the requested storage order of
    chunk elements) may add a transpose before the innermost ``bytes`` codec;
    ``read_chunk_shape`` is the sharding codec's inner chunk shape when it has none."""
    rank = len(chunk_shape)
    out: list[dict[str, Any]] = []
    shape = list(chunk_shape)
    order = None if inner_order is None else list(inner_order)
    read_shape = None if read_chunk_shape is None else list(read_chunk_shape)
    for i, c in enumerate(chain.array_to_array):
        if c.extension:
            out.append(c.to_json())
            continue
        perm = _resolve_order(c.options["order"], rank)
        if len(perm) != rank:
            raise fail(
                member(member(where, i), "configuration.order"),
                f"{perm} has {len(perm)} dimensions, the array has {rank}",
            )
        out.append({"name": "transpose", "configuration": {"order": perm}})
        inv = _invert(perm)
        shape = [shape[p] for p in perm]
        if read_shape is not None:
            read_shape = [read_shape[p] for p in perm]
        if order is not None:
            order = [inv[k] for k in order]
    a2b = chain.array_to_bytes or Codec("bytes")
    at = member(where, len(chain.array_to_array))
    if a2b.extension:
        out.append(a2b.to_json())
    elif a2b.name == "sharding_indexed":
        out.append(_resolve_sharding(a2b, dtype, shape, order, read_shape, at))
    else:
        if order is not None and order != list(range(rank)):
            out.append({"name": "transpose", "configuration": {"order": order}})
        endian = a2b.options.get("endian", "little")
        out.append(
            {"name": "bytes"}
            if _is_endian_invariant(dtype)
            else {"name": "bytes", "configuration": {"endian": endian}}
        )
    item_bits = dtype.itemsize * 8
    for j, c in enumerate(chain.bytes_to_bytes):
        resolved, item_bits = _resolve_b2b(c, item_bits, member(where, len(out) + j))
        out.append(resolved)
    return out


def _resolve_sharding(
    codec: Codec,
    dtype: np.dtype[Any],
    shard_shape: list[int],
    inner_order: list[int] | None,
    read_shape: list[int] | None,
    where: str,
) -> dict[str, Any]:
    o = codec.options
    inner = o.get("chunk_shape") or read_shape or shard_shape
    if len(inner) != len(shard_shape):
        raise fail(
            member(where, "configuration.chunk_shape"),
            f"{inner} has {len(inner)} dimensions, the array has {len(shard_shape)}",
        )
    if _core.chunks_per_shard(shard_shape, list(inner)) is None:
        raise fail(
            member(where, "configuration.chunk_shape"),
            f"the inner chunk shape {inner} does not divide the shard shape {shard_shape}",
        )
    sub = o.get("codecs") or Chain()
    index = o.get("index_codecs") or parse_chain(DEFAULT_INDEX_CODECS, "index_codecs")
    config: dict[str, Any] = {
        "chunk_shape": list(inner),
        "codecs": resolve_chain(
            sub,
            dtype=dtype,
            chunk_shape=inner,
            inner_order=inner_order,
            read_chunk_shape=None,
            where=member(where, "configuration.codecs"),
        ),
        "index_codecs": resolve_chain(
            index,
            dtype=np.dtype("<u8"),
            chunk_shape=[*inner, 2],
            inner_order=None,
            read_chunk_shape=None,
            where=member(where, "configuration.index_codecs"),
        ),
    }
    if "index_location" in o:
        if o["index_location"] != DEFAULT_INDEX_LOCATION:
            config["index_location"] = o["index_location"]
    return {"name": "sharding_indexed", "configuration": config}
