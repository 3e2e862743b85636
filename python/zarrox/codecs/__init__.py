"""Codecs as values: what ``Array.compressors``, ``.filters`` and ``.serializer`` return, and
what ``create_array(compressors=..., ...)`` takes, under zarr-python's names
(``zarrox.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")``, ...).

A codec is its metadata JSON: a ``dict`` (``{"name": ..., "configuration": {...}}`` for Zarr
v3; numcodecs' ``{"id": ..., ...}`` for a v2 compressor or filter), so it compares equal to the
plain dict, is accepted wherever a codec dict is (zarrox's and zarr-python's
``create_array``), and ``to_dict()`` / ``get_config()`` give it back as zarr-python's codec
objects do. The encoding itself happens in the Rust core; these classes only describe it.
Members left out take the Rust codecs' defaults (zarr-python's), except blosc's ``typesize``
and ``shuffle``, chosen from the array's data type when the array is created.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum, StrEnum
from typing import Any

from zarrox import _core

__all__ = [
    "BloscCname",
    "BloscCodec",
    "BloscShuffle",
    "BytesCodec",
    "Codec",
    "Crc32cCodec",
    "Endian",
    "GzipCodec",
    "NumcodecsConfig",
    "PackbitsCodec",
    "ShardingCodec",
    "ShardingCodecIndexLocation",
    "TransposeCodec",
    "VLenBytesCodec",
    "VLenUTF8Codec",
    "ZstdCodec",
    "codec_value",
    "numcodecs_value",
]


class BloscShuffle(StrEnum):
    noshuffle = "noshuffle"
    shuffle = "shuffle"
    bitshuffle = "bitshuffle"


class BloscCname(StrEnum):
    lz4 = "lz4"
    lz4hc = "lz4hc"
    blosclz = "blosclz"
    zstd = "zstd"
    snappy = "snappy"
    zlib = "zlib"


class Endian(StrEnum):
    big = "big"
    little = "little"


class ShardingCodecIndexLocation(StrEnum):
    start = "start"
    end = "end"


def _plain(value: Any) -> Any:
    """``value`` with enums replaced by their values and codecs by plain dicts (JSON)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):  # a zarr-python codec object
        return _plain(to_dict())
    return value


def _defaults(codec: Mapping[str, Any]) -> dict[str, Any]:
    """The complete configuration of ``codec`` (a v3 codec document) as the Rust codec
    fills it in, nested codecs in their document form (``name`` first)."""
    complete = json.loads(_core.codec_configuration(json.dumps(codec), 1))
    return {
        k: [{"name": c["name"], **{m: x for m, x in c.items() if m != "name"}} for c in v]
        if k in ("codecs", "index_codecs")
        else v
        for k, v in complete.items()
    }


_GZIP = _defaults({"name": "gzip"})
_ZSTD = _defaults({"name": "zstd"})
_BLOSC = _defaults({"name": "blosc"})
_BYTES = _defaults({"name": "bytes"})
_SHARDING = _defaults({"name": "sharding_indexed", "configuration": {"chunk_shape": [1]}})


def _given_or_default(given: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` members, ``defaults`` for those that are None."""
    return {k: defaults[k] if v is None else v for k, v in given.items()}


class Codec(dict[str, Any]):
    """A Zarr v3 codec: ``{"name": ..., "configuration": {...}}``."""

    codec_name: str = ""

    def __init__(self, name: str | None = None, configuration: Mapping[str, Any] | None = None):
        name = name or self.codec_name
        if not name:
            raise TypeError("a codec needs a name")
        doc: dict[str, Any] = {"name": name}
        config = {k: v for k, v in _plain(dict(configuration or {})).items() if v is not None}
        if config:
            doc["configuration"] = config
        super().__init__(doc)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Codec:
        """The codec of a v3 codec document (``{"name", "configuration"}``)."""
        from zarrox.metadata.codecs import codecs_to_json

        new = cls.__new__(cls)
        # as zarr.json has it: {"name": "crc32c"}, but {"name": "vlen-utf8", "configuration": {}}
        dict.__init__(new, codecs_to_json([doc])[0])
        return new

    @property
    def name(self) -> str:
        return str(self["name"])

    @property
    def configuration(self) -> dict[str, Any]:
        return dict(self.get("configuration") or {})

    def to_dict(self) -> dict[str, Any]:
        """The codec's metadata JSON (a new plain dict)."""
        return copy.deepcopy(dict(self))

    def __getattr__(self, key: str) -> Any:
        # configuration members as attributes, as zarr-python's codec objects have them
        config = self.get("configuration") or {}
        if key in config:
            return config[key]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.configuration.items())
        if type(self) is Codec:
            return f"Codec(name={self.name!r}{', ' if args else ''}{args})"
        return f"{type(self).__name__}({args})"


class BytesCodec(Codec):
    codec_name = "bytes"

    def __init__(self, *, endian: Endian | str | None = _BYTES["endian"]) -> None:
        super().__init__(configuration={"endian": endian})


class TransposeCodec(Codec):
    codec_name = "transpose"

    def __init__(self, *, order: Iterable[int]) -> None:
        super().__init__(configuration={"order": [int(i) for i in order]})


class GzipCodec(Codec):
    codec_name = "gzip"

    def __init__(self, *, level: int | None = None) -> None:
        super().__init__(configuration=_given_or_default({"level": level}, _GZIP))


class ZstdCodec(Codec):
    codec_name = "zstd"

    def __init__(self, *, level: int | None = None, checksum: bool | None = None) -> None:
        super().__init__(
            configuration=_given_or_default({"level": level, "checksum": checksum}, _ZSTD)
        )


class BloscCodec(Codec):
    """Blosc; ``typesize`` and ``shuffle`` left out are chosen from the array's data type
    when the array is created (as zarr-python does)."""

    codec_name = "blosc"

    def __init__(
        self,
        *,
        typesize: int | None = None,
        cname: BloscCname | str | None = None,
        clevel: int | None = None,
        shuffle: BloscShuffle | str | None = None,
        blocksize: int | None = None,
    ) -> None:
        given = {"cname": cname, "clevel": clevel, "blocksize": blocksize}
        config = {"typesize": typesize, **_given_or_default(given, _BLOSC), "shuffle": shuffle}
        # in zarr-python's member order
        super().__init__(configuration={k: config[k] for k in _BLOSC})


class Crc32cCodec(Codec):
    codec_name = "crc32c"

    def __init__(self) -> None:
        super().__init__()


class VLenUTF8Codec(Codec):
    codec_name = "vlen-utf8"

    def __init__(self) -> None:
        super().__init__()


class VLenBytesCodec(Codec):
    codec_name = "vlen-bytes"

    def __init__(self) -> None:
        super().__init__()


class PackbitsCodec(Codec):
    codec_name = "packbits"

    def __init__(self, *, padding_encoding: str | None = None) -> None:
        super().__init__(configuration={"padding_encoding": padding_encoding})


class ShardingCodec(Codec):
    codec_name = "sharding_indexed"

    def __init__(
        self,
        *,
        chunk_shape: Sequence[int],
        codecs: Iterable[Mapping[str, Any]] | None = None,
        index_codecs: Iterable[Mapping[str, Any]] | None = None,
        index_location: ShardingCodecIndexLocation | str | None = None,
    ) -> None:
        given = {
            "codecs": None if codecs is None else list(codecs),
            "index_codecs": None if index_codecs is None else list(index_codecs),
            "index_location": index_location,
        }
        super().__init__(
            configuration={
                "chunk_shape": [int(c) for c in chunk_shape],
                **_given_or_default(given, _SHARDING),
            }
        )


_BY_NAME: dict[str, type[Codec]] = {
    cls.codec_name: cls
    for cls in (
        BytesCodec,
        TransposeCodec,
        GzipCodec,
        ZstdCodec,
        BloscCodec,
        Crc32cCodec,
        VLenUTF8Codec,
        VLenBytesCodec,
        PackbitsCodec,
        ShardingCodec,
    )
}


def codec_value(doc: Mapping[str, Any]) -> Codec:
    """The codec object of a v3 codec document: its named class (``numcodecs.<id>`` ones
    from :mod:`zarrox.codecs.numcodecs`), or :class:`Codec`."""
    from zarrox.codecs import numcodecs

    name = str(doc["name"])
    cls = _BY_NAME.get(name) or numcodecs.class_for(name) or Codec
    return cls.from_dict(doc)


class NumcodecsConfig(dict[str, Any]):
    """A v2 compressor or filter: numcodecs' configuration (``{"id": "zstd", "level": 0}``),
    with numcodecs' ``codec_id`` and ``get_config()``."""

    @property
    def codec_id(self) -> str:
        return str(self["id"])

    def get_config(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self))

    def to_dict(self) -> dict[str, Any]:
        return self.get_config()

    def __repr__(self) -> str:
        from zarrox.codecs import numcodecs

        cls = numcodecs.class_for(f"numcodecs.{self.codec_id}")
        label = cls.__name__ if cls is not None else self.codec_id
        args = ", ".join(f"{k}={v!r}" for k, v in self.items() if k != "id")
        return f"{label}({args})"


def numcodecs_value(config: Mapping[str, Any]) -> Any:
    """A v2 compressor or filter as zarr-python gives it: numcodecs' codec object when
    numcodecs is installed and has the codec, else its configuration with every default
    filled in (what ``numcodecs.get_codec(config).get_config()`` gives) as a
    :class:`NumcodecsConfig`."""
    from zarrox.metadata.v2_codecs import complete_codec

    complete = NumcodecsConfig(complete_codec(config, "", "codec"))
    try:
        import numcodecs

        return numcodecs.get_codec(dict(complete))
    except Exception:  # no numcodecs, or not this codec (or its optional dependency)
        return complete
