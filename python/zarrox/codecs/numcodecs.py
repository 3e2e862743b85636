"""The numcodecs codecs zarrox implements, as Zarr v3 codecs named ``numcodecs.<id>`` (what
zarr-python's ``zarr.codecs.numcodecs`` classes write): ``Delta(dtype="<i4")`` is
``{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}``."""

from __future__ import annotations

from typing import Any

from zarrox.codecs import Codec


class NumcodecsCodec(Codec):
    """A numcodecs codec in a v3 chain; the keyword arguments are its configuration."""

    def __init__(self, **codec_config: Any) -> None:
        codec_config.pop("id", None)
        super().__init__(configuration=codec_config)

    @property
    def codec_id(self) -> str:
        return self.name.split(".", 1)[1]


#: the classes below by their v3 codec name (``numcodecs.delta``)
_BY_NAME: dict[str, type[NumcodecsCodec]] = {}


def _make(class_name: str, codec_id: str) -> type[NumcodecsCodec]:
    name = f"numcodecs.{codec_id}"
    cls: type[NumcodecsCodec] = type(class_name, (NumcodecsCodec,), {"codec_name": name})
    _BY_NAME[name] = cls
    return cls


Adler32 = _make("Adler32", "adler32")
AsType = _make("AsType", "astype")
BZ2 = _make("BZ2", "bz2")
BitRound = _make("BitRound", "bitround")
Blosc = _make("Blosc", "blosc")
CRC32 = _make("CRC32", "crc32")
CRC32C = _make("CRC32C", "crc32c")
Delta = _make("Delta", "delta")
FixedScaleOffset = _make("FixedScaleOffset", "fixedscaleoffset")
Fletcher32 = _make("Fletcher32", "fletcher32")
GZip = _make("GZip", "gzip")
JenkinsLookup3 = _make("JenkinsLookup3", "jenkins_lookup3")
LZ4 = _make("LZ4", "lz4")
LZMA = _make("LZMA", "lzma")
PackBits = _make("PackBits", "packbits")
Quantize = _make("Quantize", "quantize")
Shuffle = _make("Shuffle", "shuffle")
Zlib = _make("Zlib", "zlib")
Zstd = _make("Zstd", "zstd")


def class_for(name: str) -> type[NumcodecsCodec] | None:
    """The class of the v3 codec ``name`` (``numcodecs.delta``), or None."""
    return _BY_NAME.get(name)


__all__ = [
    "BZ2",
    "CRC32",
    "CRC32C",
    "LZ4",
    "LZMA",
    "Adler32",
    "AsType",
    "BitRound",
    "Blosc",
    "Delta",
    "FixedScaleOffset",
    "Fletcher32",
    "GZip",
    "JenkinsLookup3",
    "NumcodecsCodec",
    "PackBits",
    "Quantize",
    "Shuffle",
    "Zlib",
    "Zstd",
    "class_for",
]
