"""Zarr metadata documents (v3 ``zarr.json``) and codec chains."""

from __future__ import annotations

from zarrox.metadata.codecs import (
    BLOSC_CNAMES,
    BLOSC_SHUFFLES,
    CODEC_KINDS,
    CodecForm,
    CodecKind,
    build_codecs,
    codecs_to_json,
    normalize_codecs,
    validate_codecs,
)
from zarrox.metadata.v3 import (
    CORE_DATA_TYPES,
    ArrayMetadataV3,
    GroupMetadataV3,
    cast_fill_value,
    data_type_name,
    default_fill_value,
    dumps,
    fill_value_bytes,
    fill_value_to_json,
    loads,
    parse_data_type,
    parse_fill_value,
    parse_node,
)

__all__ = [
    "BLOSC_CNAMES",
    "BLOSC_SHUFFLES",
    "CODEC_KINDS",
    "CORE_DATA_TYPES",
    "ArrayMetadataV3",
    "CodecForm",
    "CodecKind",
    "GroupMetadataV3",
    "build_codecs",
    "cast_fill_value",
    "codecs_to_json",
    "data_type_name",
    "default_fill_value",
    "dumps",
    "fill_value_bytes",
    "fill_value_to_json",
    "loads",
    "normalize_codecs",
    "parse_data_type",
    "parse_fill_value",
    "parse_node",
    "validate_codecs",
]
