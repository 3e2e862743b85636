"""Codecs as values: what ``Array.compressors``, ``.filters`` and ``.serializer`` return, and
what ``create_array(compressors=..., ...)`` takes, under zarr-python's names
(``zarrox.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")``, ...).

A codec is its metadata JSON: a ``dict`` (``{"name": ..., "configuration": {...}}`` for Zarr
v3; numcodecs' ``{"id": ..., ...}`` for a v2 compressor or filter), so it compares equal to the
plain dict, is accepted wherever a codec dict is (zarrox's and zarr-python's
``create_array``), and ``to_dict()`` / ``get_config()`` give it back as zarr-python's codec
objects do. The encoding itself happens in the Rust core; these classes only describe it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum, StrEnum
from typing import Any

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

    def __init__(self, *, endian: Endian | str | None = "little") -> None:
        super().__init__(configuration={"endian": endian})


class TransposeCodec(Codec):
    codec_name = "transpose"

    def __init__(self, *, order: Iterable[int]) -> None:
        super().__init__(configuration={"order": [int(i) for i in order]})


class GzipCodec(Codec):
    codec_name = "gzip"

    def __init__(self, *, level: int = 5) -> None:
        super().__init__(configuration={"level": level})


class ZstdCodec(Codec):
    codec_name = "zstd"

    def __init__(self, *, level: int = 0, checksum: bool = False) -> None:
        super().__init__(configuration={"level": level, "checksum": checksum})


class BloscCodec(Codec):
    """Blosc; ``typesize`` and ``shuffle`` left out are chosen from the array's data type
    when the array is created (as zarr-python does)."""

    codec_name = "blosc"

    def __init__(
        self,
        *,
        typesize: int | None = None,
        cname: BloscCname | str = "zstd",
        clevel: int = 5,
        shuffle: BloscShuffle | str | None = None,
        blocksize: int = 0,
    ) -> None:
        super().__init__(
            configuration={
                "typesize": typesize,
                "cname": cname,
                "clevel": clevel,
                "shuffle": shuffle,
                "blocksize": blocksize,
            }
        )


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
        codecs: Iterable[Mapping[str, Any]] = ({"name": "bytes"},),
        index_codecs: Iterable[Mapping[str, Any]] = (
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "crc32c"},
        ),
        index_location: ShardingCodecIndexLocation | str = "end",
    ) -> None:
        super().__init__(
            configuration={
                "chunk_shape": [int(c) for c in chunk_shape],
                "codecs": list(codecs),
                "index_codecs": list(index_codecs),
                "index_location": index_location,
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
