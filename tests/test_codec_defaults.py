"""Codec configuration defaults and chunk key encodings, defined once in the Rust codecs
(``_core.codec_configuration``, ``_core.chunk_key_encoding``) and pinned here against what
zarr-python (v3 codecs) and numcodecs (``numcodecs.<id>`` codecs, v2 compressors) write."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
import zarr.codecs
from zarr.core.chunk_key_encodings import DefaultChunkKeyEncoding, V2ChunkKeyEncoding

import zarrox
from zarrox import _core
from zarrox.codecs import BloscCodec, BytesCodec, GzipCodec, ShardingCodec, ZstdCodec
from zarrox.errors import MetadataError, SpecError, UnsupportedError
from zarrox.metadata.chunk_grid import parse_chunk_key_encoding
from zarrox.metadata.codecs import (
    BLOSC_CNAMES,
    BLOSC_SHUFFLES,
    CODEC_KINDS,
    CODEC_REGISTRY,
    FIXED_SIZE_CODECS,
    NUMCODECS_KINDS,
    normalize_codecs,
)
from zarrox.metadata.v2_codecs import ARRAY_FILTER_IDS, check_codec, complete_codec


def complete(codec: object, item_size: int = 1) -> dict[str, Any]:
    return json.loads(_core.codec_configuration(json.dumps(codec), item_size))  # type: ignore[no-any-return]


def as_json(value: object) -> Any:
    """A zarr-python document as JSON reads it back (tuples as lists)."""
    return json.loads(json.dumps(value))


# -- v3 codecs: zarr-python's defaults ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("gzip", zarr.codecs.GzipCodec()),
        ("zstd", zarr.codecs.ZstdCodec()),
        ("bytes", zarr.codecs.BytesCodec()),
        ("crc32c", zarr.codecs.Crc32cCodec()),
    ],
)
def test_v3_defaults_are_zarr_pythons(name: str, reference: Any) -> None:
    expected = as_json(reference.to_dict()).get("configuration", {})
    assert complete({"name": name}) == expected
    # in zarr-python's member order
    assert list(complete({"name": name})) == list(expected)


def test_sharding_defaults_are_zarr_pythons() -> None:
    expected = as_json(zarr.codecs.ShardingCodec(chunk_shape=(2, 3)).to_dict())["configuration"]
    got = complete({"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3]}})
    assert got == expected
    assert list(got) == list(expected)


@pytest.mark.parametrize("dtype", ["uint8", "bool", "int16", "float32", "complex128"])
def test_blosc_defaults_follow_the_item_size_as_zarr_python(dtype: str, tmp_path: Any) -> None:
    """zarr-python's BloscCodec(): cname zstd, clevel 5, blocksize 0, and from the data type
    typesize (its item size) and shuffle (bitshuffle for one-byte items, else shuffle)."""
    a = zarr.create_array(
        tmp_path / "a.zarr", shape=(4,), dtype=dtype, compressors=zarr.codecs.BloscCodec()
    )
    written = as_json(a.metadata.to_dict())["codecs"][1]["configuration"]
    itemsize = np.dtype(dtype).itemsize
    assert complete({"name": "blosc"}, itemsize) == written
    assert list(complete({"name": "blosc"}, itemsize)) == list(written)
    chain = normalize_codecs(["bytes", "blosc"], dtype=np.dtype(dtype))
    assert chain[1]["configuration"] == written
    z = zarrox.create_array(tmp_path / "b.zarr", shape=(4,), dtype=dtype, compressors="blosc")
    assert json.loads((tmp_path / "b.zarr" / "zarr.json").read_text())["codecs"][1] == {
        "name": "blosc",
        "configuration": written,
    }
    assert z.compressors[0].to_dict()["configuration"] == written


def test_blosc_choices_are_the_cores() -> None:
    from zarr.codecs import blosc

    # zarr-python's literals (3.4), or its enums (3.1)
    cnames = typing.get_args(getattr(blosc, "BloscCnameLiteral", None)) or [
        c.value for c in blosc.BloscCname
    ]
    shuffles = typing.get_args(getattr(blosc, "BloscShuffleLiteral", None)) or [
        s.value for s in blosc.BloscShuffle
    ]
    assert set(BLOSC_CNAMES) == set(cnames) - {"snappy"}
    assert set(BLOSC_SHUFFLES) == set(shuffles)


def test_given_members_are_kept() -> None:
    cfg = {"typesize": 8, "cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "blocksize": 64}
    assert complete({"name": "blosc", "configuration": cfg}, 2) == cfg
    assert complete({"name": "zstd", "configuration": {"checksum": True}}) == {
        "level": 0,
        "checksum": True,
    }


@pytest.mark.parametrize(
    ("codec", "error", "match"),
    [
        ({"name": "gzip", "configuration": {"level": 10}}, MetadataError, "0 to 9"),
        ({"name": "gzip", "configuration": {"level": None}}, MetadataError, "null"),
        ({"name": "zstd", "configuration": {"level": 23}}, MetadataError, "-131072 to 22"),
        ({"name": "zstd", "configuration": {"checksum": 1}}, MetadataError, "boolean"),
        ({"name": "blosc", "configuration": {"cname": "lzma"}}, MetadataError, "cname"),
        ({"name": "blosc", "configuration": {"cname": "snappy"}}, UnsupportedError, "snappy"),
        ({"name": "blosc", "configuration": {"typesize": 0}}, MetadataError, "typesize"),
        ({"name": "bytes", "configuration": {"endian": "native"}}, MetadataError, "endian"),
        ({"name": "crc32c", "configuration": {"x": 1}}, MetadataError, "unknown member 'x'"),
        ({"name": "sharding_indexed", "configuration": {}}, MetadataError, "chunk_shape"),
        ({"name": "transpose", "configuration": {}}, MetadataError, "order"),
        ({"name": "lzfse"}, UnsupportedError, "lzfse"),
    ],
)
def test_malformed_configurations(codec: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        complete(codec)


def test_metadata_errors_say_where() -> None:
    with pytest.raises(MetadataError, match=r"^zarr.json at 'a': codecs\[1\]: .*clevel"):
        normalize_codecs(
            ["bytes", {"name": "blosc", "configuration": {"clevel": 10}}],
            dtype=np.dtype("int32"),
            path="a",
        )


# -- zarrox.codecs classes take the same defaults ----------------------------------------------


def test_codec_classes_default_as_zarr_python() -> None:
    for ours, theirs in [
        (GzipCodec(), zarr.codecs.GzipCodec()),
        (ZstdCodec(), zarr.codecs.ZstdCodec()),
        (BytesCodec(), zarr.codecs.BytesCodec()),
        (ZstdCodec(level=3), zarr.codecs.ZstdCodec(level=3)),
        (
            BloscCodec(typesize=4, shuffle="shuffle"),
            zarr.codecs.BloscCodec(typesize=4, shuffle="shuffle"),
        ),
        (ShardingCodec(chunk_shape=(2,)), zarr.codecs.ShardingCodec(chunk_shape=(2,))),
    ]:
        assert ours.to_dict() == as_json(theirs.to_dict())
        assert json.dumps(ours.to_dict()) == json.dumps(as_json(theirs.to_dict()))
    # typesize and shuffle wait for the data type
    assert BloscCodec().configuration == {"cname": "zstd", "clevel": 5, "blocksize": 0}
    assert repr(GzipCodec()) == "GzipCodec(level=5)"


# -- numcodecs codecs: numcodecs' defaults -----------------------------------------------------


@pytest.mark.parametrize(
    "codec", [numcodecs.Zlib(), numcodecs.GZip(), numcodecs.BZ2(), numcodecs.Zstd()]
)
def test_numcodecs_defaults_are_numcodecs(codec: Any) -> None:
    expected = {k: v for k, v in codec.get_config().items() if k != "id"}
    got = complete({"name": f"numcodecs.{codec.codec_id}", "configuration": {}})
    assert got == expected
    assert list(got) == list(expected)


def test_numcodecs_blosc_defaults_are_numcodecs() -> None:
    expected = {k: v for k, v in numcodecs.Blosc().get_config().items() if k != "id"}
    assert complete({"name": "numcodecs.blosc", "configuration": {}}) == expected
    # numcodecs' Blosc and zarr-python's v3 BloscCodec differ
    assert expected["cname"] != complete({"name": "blosc"})["cname"]


@pytest.mark.parametrize("codec_id", ["zlib", "gzip", "bz2", "zstd", "blosc"])
def test_v2_compressors_complete_as_numcodecs(codec_id: str) -> None:
    """A .zarray compressor gets numcodecs' get_config(), from the core's defaults."""
    expected = numcodecs.get_codec({"id": codec_id}).get_config()
    got = complete_codec({"id": codec_id}, "", "compressor")
    assert got == expected
    assert list(got) == list(expected)


@pytest.mark.parametrize(
    "config",
    [{"id": "gzip", "level": -1}, {"id": "zstd", "level": 30}, {"id": "zstd", "level": -200000}],
)
def test_v2_compressor_levels_numcodecs_encodes_with(config: dict[str, Any]) -> None:
    """Levels numcodecs encodes with (zlib's -1, zstd's clamped ones) are valid."""
    data = np.arange(100, dtype="u1")
    codec = numcodecs.get_codec(dict(config))
    assert bytes(codec.decode(codec.encode(data))) == data.tobytes()
    assert complete_codec(config, "", "compressor") == codec.get_config()


def test_v2_blosc_cname_snappy_is_rejected_as_numcodecs_does() -> None:
    with pytest.raises(ValueError, match="snappy"):
        numcodecs.Blosc(cname="snappy").encode(np.zeros(4, "u1"))
    with pytest.raises(MetadataError, match=r"^\.zarray: compressor\.cname: must be one of"):
        check_codec({"id": "blosc", "cname": "snappy"}, ".zarray: ", "compressor")


# -- chunk key encodings -----------------------------------------------------------------------


def test_chunk_key_encoding_defaults_are_zarr_pythons() -> None:
    assert parse_chunk_key_encoding("default", "") == DefaultChunkKeyEncoding().to_dict()
    assert parse_chunk_key_encoding("v2", "") == V2ChunkKeyEncoding().to_dict()
    assert (
        parse_chunk_key_encoding({"name": "v2", "separator": "/"}, "")
        == V2ChunkKeyEncoding(separator="/").to_dict()
    )
    doc = {"name": "default", "configuration": {"separator": "."}}
    assert parse_chunk_key_encoding(doc, "") == doc
    assert list(parse_chunk_key_encoding("v2", "")) == ["name", "configuration"]


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ("suffix", UnsupportedError, "'suffix'"),
        ({"name": "default", "configuration": {"separator": "-"}}, MetadataError, "separator"),
        ({"name": "default", "configuration": {"sep": "/"}}, MetadataError, "unknown member"),
        ({"name": "default", "configuration": {"separator": None}}, MetadataError, "separator"),
        ({"name": "default", "must_understand": False}, MetadataError, "must_understand"),
        ({"name": 1}, MetadataError, "name"),
        (5, MetadataError, "object or a name"),
        ("\ud800", UnsupportedError, r"'\\ud800'"),
    ],
)
def test_chunk_key_encoding_errors(value: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as info:
        parse_chunk_key_encoding(value, "zarr.json at 'a': ")
    assert str(info.value).startswith("zarr.json at 'a': ")


def test_cast_value_defaults_are_zarr_pythons() -> None:
    cast_value = getattr(zarr.codecs, "CastValue", None)
    if cast_value is None:
        pytest.skip("zarr-python < 3.4 has no cast_value")
    params = inspect.signature(cast_value.__init__).parameters
    got = complete({"name": "cast_value", "configuration": {"data_type": "int8"}})
    assert got["rounding"] == params["rounding"].default
    assert got["out_of_range"] == params["out_of_range"].default
    assert got["scalar_map"] == params["scalar_map"].default
    # written without its defaults, as zarr-python writes it
    chain = normalize_codecs(
        [{"name": "cast_value", "configuration": {"data_type": "int8"}}, "bytes"],
        dtype=np.dtype("float32"),
    )
    assert chain[0] == as_json(cast_value(data_type="int8").to_dict())


def test_packbits_default_is_the_registrys() -> None:
    """zarr-python has no v3 packbits; the extension registry's README and schema.json
    (codecs/packbits) name "none" the default, and spell first_byte/last_byte
    start_byte/end_byte."""
    assert complete({"name": "packbits"}) == {"padding_encoding": "none"}
    for spelling, name in (("start_byte", "first_byte"), ("end_byte", "last_byte")):
        cfg = {"padding_encoding": spelling}
        assert complete({"name": "packbits", "configuration": cfg}) == {"padding_encoding": name}


# -- every numcodecs codec the core completes: numcodecs' get_config() -------------------------

#: one codec per id the core completes (``_core.numcodecs_members``), with its defaults, and
#: one with every member given a non-default value
_NUMCODECS_DEFAULT_AND_CUSTOM: list[tuple[Any, Any]] = [
    (numcodecs.Zlib(), numcodecs.Zlib(level=7)),
    (numcodecs.GZip(), numcodecs.GZip(level=3)),
    (numcodecs.BZ2(), numcodecs.BZ2(level=9)),
    (numcodecs.LZMA(), numcodecs.LZMA(format=2, preset=3)),
    (numcodecs.Zstd(), numcodecs.Zstd(level=4, checksum=True)),
    (numcodecs.LZ4(), numcodecs.LZ4(acceleration=5)),
    (numcodecs.Blosc(), numcodecs.Blosc(cname="zlib", clevel=2, shuffle=2, blocksize=256)),
    (numcodecs.Shuffle(), numcodecs.Shuffle(elementsize=8)),
    (numcodecs.CRC32(), numcodecs.CRC32(location="end")),
    (numcodecs.Adler32(), numcodecs.Adler32(location="end")),
    (numcodecs.CRC32C(), numcodecs.CRC32C(location="start")),
    (numcodecs.Fletcher32(), numcodecs.Fletcher32()),
    (numcodecs.JenkinsLookup3(), numcodecs.JenkinsLookup3(initval=9)),
    (numcodecs.PackBits(), numcodecs.PackBits()),
    (numcodecs.BitRound(keepbits=3), numcodecs.BitRound(keepbits=10)),
    (numcodecs.Delta(dtype="i4"), numcodecs.Delta(dtype="int64", astype=">i2")),
    (
        numcodecs.FixedScaleOffset(offset=0, scale=1, dtype="f8"),
        numcodecs.FixedScaleOffset(offset=1.5, scale=10, dtype="f4", astype="u1"),
    ),
    (numcodecs.Quantize(digits=2, dtype="f8"), numcodecs.Quantize(1, "f4", astype="f2")),
    (numcodecs.AsType("i2", "i4"), numcodecs.AsType(encode_dtype="f2", decode_dtype=">f8")),
    (numcodecs.Categorize(["a"], "U1"), numcodecs.Categorize(["a", "b"], "<U2", astype="u2")),
    (numcodecs.Pickle(), numcodecs.Pickle(protocol=2)),
]
#: the constructor arguments without which numcodecs builds no codec
_NUMCODECS_REQUIRED = {
    "bitround": ("keepbits",),
    "delta": ("dtype",),
    "fixedscaleoffset": ("offset", "scale", "dtype"),
    "quantize": ("digits", "dtype"),
    "astype": ("encode_dtype", "decode_dtype"),
    "categorize": ("labels", "dtype"),
}


def _given(codec: Any, keys: typing.Iterable[str]) -> dict[str, Any]:
    """The arguments ``keys`` of a numcodecs codec, as its get_config() gives them."""
    config = codec.get_config()
    return {"id": config["id"], **{k: config[k] for k in keys}}


def test_every_core_completed_numcodecs_codec_is_pinned() -> None:
    pinned = {default.codec_id for default, _ in _NUMCODECS_DEFAULT_AND_CUSTOM}
    assert {i for i in pinned if _core.numcodecs_members(i) is not None} == pinned
    assert _core.numcodecs_members("pcodec") is not None  # pinned below, with its extra
    assert _core.numcodecs_members("zfpy") is not None
    for codec_id in ("json2", "msgpack2", "vlen-utf8", "vlen-array", "nope"):
        assert _core.numcodecs_members(codec_id) is None


@pytest.mark.parametrize(
    ("default", "custom"),
    _NUMCODECS_DEFAULT_AND_CUSTOM,
    ids=[d.codec_id for d, _ in _NUMCODECS_DEFAULT_AND_CUSTOM],
)
def test_numcodecs_completion_is_get_config(default: Any, custom: Any) -> None:
    """From its required arguments only, and from every member as numcodecs writes it, a
    configuration completes to numcodecs' own ``get_config()``, in its member order; the
    members the core names are that order (without "id")."""
    codec_id = default.codec_id
    required = _NUMCODECS_REQUIRED.get(codec_id, ())
    for codec, config in ((default, _given(default, required)), (custom, custom.get_config())):
        expected = codec.get_config()
        got = complete_codec(config, "", "filters[0]")
        assert got == expected
        assert list(got) == list(expected)
    members = [k for k in default.get_config() if k != "id"]
    assert list(_core.numcodecs_members(codec_id)) == members or codec_id in (
        "crc32",
        "adler32",
        "crc32c",
    )


def test_numcodecs_dtype_members_are_written_as_numpy_does() -> None:
    """A dtype given by name is written as numpy's ``dtype.str``, as numcodecs writes it."""
    got = complete_codec({"id": "delta", "dtype": "int16"}, "", "filters[0]")
    expected = {"id": "delta", "dtype": "<i2", "astype": "<i2"}
    assert got == numcodecs.Delta(dtype="int16").get_config() == expected


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"id": "delta"}, r"^\.zarray: filters\[0\]: codec 'delta' requires member 'dtype'$"),
        ({"id": "bitround"}, r"filters\[0\]: codec 'bitround' requires member 'keepbits'"),
        ({"id": "categorize", "dtype": "U1"}, r"codec 'categorize' requires member 'labels'"),
        ({"id": "lz4", "acceleration": "x"}, r"filters\[0\]\.acceleration: lz4 acceleration"),
        ({"id": "shuffle", "elementsize": 2**40}, r"\.elementsize: shuffle elementsize must"),
        ({"id": "pickle", "protocol": 6}, r"\.protocol: pickle protocol must be an integer"),
        ({"id": "lz4", "acceleration": None}, r"\.acceleration: lz4 acceleration must not be"),
        ({"id": "crc32", "location": "middle"}, r"\.location: must be one of"),
        ({"id": "lzma", "check": 2}, r"filters\[0\]: .*integrity check 2"),
        ({"id": "jenkins_lookup3", "prefix": [256]}, r"\.prefix: must hold byte values"),
        ({"id": "fixedscaleoffset", "offset": "0", "scale": 1, "dtype": "f8"}, r"\.offset"),
        ({"id": "quantize", "digits": 1, "dtype": "nope"}, r"\.dtype: not a data type"),
    ],
)
def test_numcodecs_completion_errors(config: dict[str, Any], match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        complete_codec(config, ".zarray: ", "filters[0]")


@pytest.mark.parametrize(
    ("module_name", "class_name", "kwargs"),
    [
        ("pcodec", "PCodec", {}),
        (
            "pcodec",
            "PCodec",
            {
                "level": 3,
                "mode_spec": "classic",
                "delta_spec": "try_consecutive",
                "delta_encoding_order": 2,
                "equal_pages_up_to": 1000,
            },
        ),
        ("zfpy", "ZFPY", {}),
        ("zfpy", "ZFPY", {"mode": 2, "rate": 8.5}),
        ("zfpy", "ZFPY", {"mode": 3, "precision": 12}),
        ("zfpy", "ZFPY", {"mode": 1}),
    ],
)
def test_pcodec_and_zfpy_complete_as_numcodecs(
    module_name: str, class_name: str, kwargs: dict[str, Any]
) -> None:
    """numcodecs' serializers (optional extras): ``get_config()``, with zfpy's
    ``compression_kwargs`` derived from its mode, from the members given."""
    cls = getattr(pytest.importorskip(f"numcodecs.{module_name}"), class_name)
    expected = cls(**kwargs).get_config()
    given = {"id": expected["id"], **kwargs}
    for config in (given, expected):
        got = complete_codec(config, "", "compressor")
        assert got == expected
        assert list(got) == list(expected)


def test_codecs_the_core_does_not_complete_are_kept_as_given() -> None:
    assert complete_codec({"level": 1, "id": "newcodec"}, "", "compressor") == {
        "id": "newcodec",
        "level": 1,
    }
    # members numcodecs does not know are kept, after numcodecs' own
    got = complete_codec({"extra": 1, "id": "lz4"}, "", "compressor")
    assert list(got.items()) == [("id", "lz4"), ("acceleration", 1), ("extra", 1)]


# -- the registry codecs zarr-python 3.4 added ------------------------------------------------


def test_scale_offset_defaults_are_zarr_pythons() -> None:
    assert complete({"name": "scale_offset"}) == {"offset": 0, "scale": 1}
    assert list(complete({"name": "scale_offset"})) == ["offset", "scale"]
    cfg = {"scale": "0.5", "offset": 2}
    assert complete({"name": "scale_offset", "configuration": cfg}) == {"offset": 2, "scale": "0.5"}
    scale_offset = getattr(zarr.codecs, "ScaleOffset", None)
    if scale_offset is None:
        pytest.skip("zarr-python < 3.4 has no scale_offset")
    params = inspect.signature(scale_offset.__init__).parameters
    assert complete({"name": "scale_offset"}) == {
        "offset": params["offset"].default,
        "scale": params["scale"].default,
    }
    # written without its defaults, as zarr-python writes it
    chain = normalize_codecs(
        [{"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}}, "bytes"],
        dtype=np.dtype("float32"),
    )
    assert chain[0] == as_json(scale_offset(offset=0, scale=2).to_dict())


def test_bitround_and_reshape_members_are_the_cores() -> None:
    assert complete({"name": "bitround", "configuration": {"keepbits": 4}}) == {"keepbits": 4}
    cfg = {"shape": [[0, 1], -1]}
    assert complete({"name": "reshape", "configuration": cfg}) == cfg


@pytest.mark.parametrize(
    ("codec", "match"),
    [
        ({"name": "bitround"}, "'keepbits' is required"),
        ({"name": "bitround", "configuration": {"keepbits": -1}}, "keepbits"),
        ({"name": "bitround", "configuration": {"keepbits": 1, "mantissa_bits": 3}}, "unknown"),
        ({"name": "reshape"}, "'shape' is required"),
        ({"name": "reshape", "configuration": {"shape": None}}, "must not be null"),
        ({"name": "scale_offset", "configuration": {"shift": 1}}, "unknown member 'shift'"),
        ({"name": "scale_offset", "configuration": {"scale": None}}, "must not be null"),
    ],
)
def test_registry_codec_configuration_errors(codec: dict[str, Any], match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        complete(codec)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_bitround_rounds_numpys_mantissa_bits(dtype: str) -> None:
    """The core form of bitround tells the codec the mantissa bits of the float format (none
    for integers, whose low bits it rounds)."""
    chain = [{"name": "bitround", "configuration": {"keepbits": 3}}, "bytes"]
    (core, _) = normalize_codecs(chain, dtype=dtype, ndim=1, form="core")
    bits = np.finfo(dtype).nmant if dtype.startswith("float") else None
    assert core["configuration"] == {
        "keepbits": 3,
        "component_size": np.dtype(dtype).itemsize,
        "mantissa_bits": bits,
    }


# ---------------------------------------------------------------------------------------------
# The codec registry (rust/codec/registry.rs): the Python tables are views of it
# ---------------------------------------------------------------------------------------------


def test_the_python_tables_are_the_registrys() -> None:
    a2a, a2b, b2b = "array->array", "array->bytes", "bytes->bytes"
    assert dict(CODEC_KINDS) == {
        **dict.fromkeys(["transpose", "scale_offset", "cast_value", "bitround", "reshape"], a2a),
        **dict.fromkeys(["bytes", "sharding_indexed", "vlen-utf8", "vlen-bytes", "packbits"], a2b),
        **dict.fromkeys(["gzip", "zstd", "blosc", "crc32c"], b2b),
    }
    nc = "delta astype fixedscaleoffset quantize packbits bitround categorize".split()
    assert ARRAY_FILTER_IDS == set(nc)
    compressors = "zlib gzip bz2 lzma zstd lz4 blosc shuffle crc32 adler32 crc32c".split()
    assert dict(NUMCODECS_KINDS) == {
        **{f"numcodecs.{i}": a2a for i in nc},
        "numcodecs.pcodec": a2b,
        "numcodecs.zfpy": a2b,
        **{
            f"numcodecs.{i}": b2b for i in [*compressors, "base64", "fletcher32", "jenkins_lookup3"]
        },
    }
    checksums = ["crc32", "crc32c", "adler32", "fletcher32", "jenkins_lookup3"]
    assert FIXED_SIZE_CODECS == {
        "bytes",
        "transpose",
        "crc32c",
        "scale_offset",
        "cast_value",
        *(f"numcodecs.{i}" for i in checksums),
    }
    # completed, not decoded
    assert not CODEC_REGISTRY["numcodecs.pickle"]["decodes"]
    assert CODEC_REGISTRY["numcodecs.categorize"]["v2_id"] == "categorize"
    assert CODEC_REGISTRY["numcodecs.categorize"]["decodes"]
    assert CODEC_REGISTRY["gzip"]["defaults"] == [["level", 5]]
    assert CODEC_REGISTRY["sharding_indexed"]["defaults"] is None  # chunk_shape is required
    assert BLOSC_CNAMES == ("lz4", "lz4hc", "blosclz", "zstd", "zlib")
    assert BLOSC_SHUFFLES == ("noshuffle", "shuffle", "bitshuffle")
    for entry in CODEC_REGISTRY.values():
        members = entry["numcodecs_members"]
        if entry["v2_id"] is not None:
            assert list(_core.numcodecs_members(entry["v2_id"])) == members


def test_the_order_of_a_chain_is_the_registrys() -> None:
    def problem(chain: list[Any]) -> str:
        with pytest.raises(MetadataError) as e:
            normalize_codecs(chain, dtype="int8", ndim=1)
        return str(e.value)

    transpose = {"name": "transpose", "configuration": {"order": [0]}}
    assert normalize_codecs([transpose, "bytes", "gzip", "crc32c"], dtype="int8", ndim=1)
    assert "exactly one array->bytes codec" in problem(["gzip"])
    assert "found ['bytes', 'bytes']" in problem(["bytes", "bytes"])
    assert problem(["bytes", transpose]).startswith(
        "codecs[1]: array->array codec 'transpose' must come before"
    )
    with pytest.raises(MetadataError, match=r"codecs\[0\]: bytes->bytes codec 'crc32c' must come"):
        normalize_codecs(["crc32c", "gzip", "bytes"], dtype="int8", ndim=1)


def test_the_array_dependent_rules_are_the_codecs() -> None:
    def order(value: list[int], ndim: int) -> list[int]:
        chain = [{"name": "transpose", "configuration": {"order": value}}, "bytes"]
        return normalize_codecs(chain, dtype="int8", ndim=ndim)[0]["configuration"]["order"]

    assert order([2, 0, 1], 3) == [2, 0, 1]
    for value, ndim in (([0, 0], 2), ([0, 1], 3), ([-1, 0], 2)):
        with pytest.raises(MetadataError, match="is not a permutation"):
            order(value, ndim)
    assert _core.chunks_per_shard([8, 6], [2, 3]) == [4, 2]
    assert _core.chunks_per_shard([2**70], [2**69]) == [2]
    for shard, inner in (([8, 6], [3, 3]), ([8], [2, 2]), ([8], [0]), ([-8], [2])):
        assert _core.chunks_per_shard(shard, inner) is None


def test_tensorstore_options_are_the_registrys() -> None:
    """TensorStore's partial codec chains (``_core.CodecChainSpec``) take the registry's
    ``tensorstore`` members, with their ranges and choices."""
    options = {
        name: {m["key"]: m for m in entry["tensorstore"]}
        for name, entry in CODEC_REGISTRY.items()
        if entry["tensorstore"] is not None
    }
    assert list(options) == [
        "transpose",
        "bytes",
        "sharding_indexed",
        "gzip",
        "zstd",
        "blosc",
        "crc32c",
    ]
    assert list(options["blosc"]) == [
        "cname",
        "clevel",
        "shuffle",
        "typesize",
        "blocksize",
    ]
    assert [k for k, m in options["transpose"].items() if m["required"]] == ["order"]
    assert not any(m["required"] for m in options["sharding_indexed"].values())

    def parse(codec: dict[str, Any], where: str) -> list[dict[str, Any]]:
        return _core.CodecChainSpec.from_json([codec], where).to_json()  # type: ignore[no-any-return]

    # snappy is a cname TensorStore takes (zarrox's blosc lacks it), sorted among the others
    snappy = {"name": "blosc", "configuration": {"cname": "snappy"}}
    assert parse(snappy, "c") == [snappy]
    with pytest.raises(SpecError, match=r"c\[0\]\.configuration\.cname: expected one of "):
        parse({"name": "blosc", "configuration": {"cname": "x"}}, "c")
    with pytest.raises(SpecError, match="'blosclz', 'lz4', 'lz4hc', 'snappy', 'zlib', 'zstd'"):
        parse({"name": "blosc", "configuration": {"cname": "x"}}, "c")
    assert parse({"name": "blosc", "configuration": {"blocksize": 2**40}}, "c")
    for config, message in (
        ({"name": "gzip", "configuration": {"level": 10}}, r"range \[0, 9\], got 10"),
        ({"name": "zstd", "configuration": {"level": 23}}, r"range \[-131072, 22\]"),
        ({"name": "blosc", "configuration": {"typesize": 256}}, r"range \[1, 255\]"),
        ({"name": "blosc", "configuration": {"blocksize": -1}}, r"range \[0, \+inf\]"),
        ({"name": "bytes", "configuration": {"endian": "x"}}, r"\['little', 'big'\]"),
        ({"name": "transpose", "configuration": {"order": [0, 0]}}, "expected a permutation"),
        ({"name": "transpose"}, 'needs member "order"'),
    ):
        with pytest.raises(SpecError, match=message):
            parse(config, "c")
