"""The ``zarr`` (v2) driver: ``metadata`` constraints (a ``.zarray`` whose members are all
optional), the ``.zarray`` TensorStore writes for a new array, and the checks that a stored
array matches a spec's constraints.

TensorStore's defaults for a new array: ``compressor`` blosc (lz4, clevel 5, automatic
shuffle), ``order`` C (F when ``chunk_layout.inner_order`` is reversed), ``fill_value`` null,
``filters`` null, ``dimension_separator`` ``"."``, chunks chosen from the chunk layout (about
a million elements). It writes no ``.zattrs``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrox._core import ChunkLayout
from zarrox.errors import MetadataError, SpecMismatchError, UnsupportedError
from zarrox.metadata.dtypes import parse_v2_dtype, v2_data_type
from zarrox.metadata.v2 import ARRAY_MEMBERS, ArrayMetadataV2
from zarrox.tensorstore_spec._json import (
    check_members,
    expect_int,
    expect_int_list,
    expect_list,
    expect_object,
    expect_str,
    expected,
    fail,
    member,
)
from zarrox.tensorstore_spec.index_space import IndexDomain
from zarrox.tensorstore_spec.schema import (
    Schema,
    check_stored,
    check_stored_chunks,
    created,
    creation_domain,
    creation_dtype,
    metadata_dtype,
    metadata_fill,
)

#: the members TensorStore fills in a compressor given by its id alone
_COMPRESSOR_DEFAULTS: dict[str, dict[str, Any]] = {
    "blosc": {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0},
    "zlib": {"level": 1},
    "gzip": {"level": 1},
    "bz2": {"level": 1},
    "zstd": {"level": 1},
}
_DEFAULT_COMPRESSOR = {"id": "blosc", **_COMPRESSOR_DEFAULTS["blosc"]}
#: TensorStore data type names written under their own name in ``.zarray``
_NAMED_DTYPES = ("bfloat16", "int2", "int4", "float4_e2m1fn") + tuple(
    f"float8_{s}"
    for s in ("e3m4", "e4m3fn", "e4m3fnuz", "e4m3b11fnuz", "e5m2", "e5m2fnuz", "e8m0fnu")
)


@dataclass
class Zarr2Metadata:
    shape: list[int] | None = None
    chunks: list[int] | None = None
    dtype_json: Any = None
    dtype: np.dtype[Any] | None = None
    fill_value: Any = None
    has_fill_value: bool = False
    order: str | None = None
    compressor: dict[str, Any] | None = None
    has_compressor: bool = False
    filters: list[Any] | None = None
    has_filters: bool = False
    dimension_separator: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def rank(self) -> int | None:
        for v in (self.shape, self.chunks):
            if v is not None:
                return len(v)
        return None

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)


def _complete_compressor(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    out = dict(_COMPRESSOR_DEFAULTS.get(str(value.get("id")), {}))
    out.update(value)
    return out


def parse_metadata(value: object, where: str = "metadata") -> Zarr2Metadata:
    obj = expect_object(value, where)
    check_members(obj, ARRAY_MEMBERS, where)
    meta = Zarr2Metadata(raw=copy.deepcopy(obj))
    if "zarr_format" in obj:
        expect_int(obj["zarr_format"], member(where, "zarr_format"), lo=2, hi=2)
    if "shape" in obj:
        meta.shape = expect_int_list(obj["shape"], member(where, "shape"), lo=0)
    if "chunks" in obj:
        meta.chunks = expect_int_list(obj["chunks"], member(where, "chunks"), lo=1)
    if meta.shape is not None and meta.chunks is not None and len(meta.shape) != len(meta.chunks):
        raise fail(
            member(where, "chunks"), f"has {len(meta.chunks)} elements, shape {len(meta.shape)}"
        )
    if "dtype" in obj:
        meta.dtype_json = copy.deepcopy(obj["dtype"])
        meta.dtype = _parse_dtype(obj["dtype"], member(where, "dtype"))
    if "fill_value" in obj:
        meta.fill_value = metadata_fill(
            obj["fill_value"],
            where,
            "dtype",
            meta.dtype,
            lambda value, dtype: v2_data_type(dtype).parse_v2_fill(value),
        )
        meta.has_fill_value = True
    if "order" in obj:
        meta.order = expect_str(obj["order"], member(where, "order"), ("C", "F"))
    if "compressor" in obj:
        at = member(where, "compressor")
        meta.has_compressor = True
        if obj["compressor"] is not None:
            comp = expect_object(obj["compressor"], at)
            expect_str(comp.get("id"), member(at, "id"))
            meta.compressor = _complete_compressor(comp)
    if "filters" in obj:
        at = member(where, "filters")
        meta.has_filters = True
        if obj["filters"] is not None:
            meta.filters = [
                expect_object(f, member(at, i))
                for i, f in enumerate(expect_list(obj["filters"], at))
            ]
    if "dimension_separator" in obj:
        meta.dimension_separator = expect_str(
            obj["dimension_separator"], member(where, "dimension_separator"), (".", "/")
        )
    return meta


def _parse_dtype(value: object, where: str) -> np.dtype[Any]:
    if isinstance(value, str) and value in _NAMED_DTYPES:
        return _named_dtype(value, where)
    return metadata_dtype(value, where, parse_v2_dtype)


def _named_dtype(name: str, where: str) -> np.dtype[Any]:
    try:
        import ml_dtypes  # noqa: PLC0415 - an optional dependency
    except ImportError:
        raise UnsupportedError(f"{where}: data type {name!r} needs ml_dtypes") from None
    return np.dtype(getattr(ml_dtypes, name))


def v2_dtype_for(name: str, where: str) -> Any:
    """The ``.zarray`` dtype TensorStore writes for a TensorStore data type name."""
    if name in _NAMED_DTYPES:
        return name
    try:
        dt = np.dtype(name)
    except TypeError:
        raise fail(where, f"data type {name!r} is not supported by the zarr driver") from None
    if dt.kind not in "biufc":
        raise fail(where, f"data type {name!r} is not supported by the zarr driver")
    if dt.itemsize == 1:
        return "|" + dt.str[1:]
    return v2_data_type(dt.newbyteorder("<")).v2_json()


def ts_dtype_name(meta: Zarr2Metadata) -> str:
    assert meta.dtype is not None
    if isinstance(meta.dtype_json, str) and meta.dtype_json in _NAMED_DTYPES:
        return meta.dtype_json
    return str(meta.dtype.newbyteorder("=").name)


def domain_of(meta: Zarr2Metadata) -> IndexDomain:
    assert meta.shape is not None
    return IndexDomain.from_shape(meta.shape, implicit_upper=True)


def inner_order_of(meta: Zarr2Metadata) -> list[int]:
    assert meta.shape is not None
    order = list(range(len(meta.shape)))
    return order[::-1] if meta.order == "F" else order


def schema_of(meta: Zarr2Metadata) -> dict[str, Any]:
    assert meta.shape is not None and meta.chunks is not None
    rank = len(meta.shape)
    return {
        "chunk_layout": {
            "grid_origin": [0] * rank,
            "inner_order": inner_order_of(meta),
            "read_chunk": {"shape": list(meta.chunks)},
            "write_chunk": {"shape": list(meta.chunks)},
        },
        "codec": {
            "compressor": copy.deepcopy(meta.compressor),
            "driver": "zarr",
            "filters": copy.deepcopy(meta.filters),
        },
        "domain": domain_of(meta).to_json(),
        "dtype": ts_dtype_name(meta),
        "fill_value": None
        if meta.fill_value is None
        else v2_data_type(meta.dtype).v2_fill_json(meta.fill_value),
        "rank": rank,
    }


def _codec_of_schema(schema: Schema, where: str) -> dict[str, Any] | None:
    if schema.codec is None:
        return None
    at = member(where, "codec")
    obj = dict(schema.codec)
    driver = obj.pop("driver", "zarr")
    if driver not in ("zarr", "zarr2"):
        raise fail(member(at, "driver"), f'expected "zarr" for the zarr driver, got {driver!r}')
    check_members(obj, ("compressor", "filters"), at)
    return obj


def _schema_dtype(name: str) -> tuple[Any, np.dtype[Any]]:
    """The ``.zarray`` dtype (as written, and parsed) of the schema's data type ``name``."""
    dtype_json = v2_dtype_for(name, "dtype")
    return dtype_json, _parse_dtype(dtype_json, "dtype")


def new_metadata(meta: Zarr2Metadata, schema: Schema, key_encoding: str | None) -> dict[str, Any]:
    """The ``.zarray`` TensorStore writes for these constraints."""
    dtype_json, dtype = creation_dtype(
        schema,
        None if meta.dtype is None else (meta.dtype_json, meta.dtype),
        None if meta.dtype is None else ts_dtype_name(meta),
        meta.dtype_json,
        "dtype",
        _schema_dtype,
    )
    rank = meta.rank
    if schema.rank is not None:
        if rank is not None and rank != schema.rank:
            raise fail("rank", f"rank {schema.rank} does not match the metadata's rank {rank}")
        rank = schema.rank
    if schema.dimension_units is not None and any(u is not None for u in schema.dimension_units):
        raise fail("schema.dimension_units", "dimension units are not supported by the zarr driver")
    if schema.domain is not None and any(schema.domain.labels):
        raise fail("schema.domain.labels", "the zarr driver does not store dimension labels")
    shape = list(creation_domain(schema, rank, meta.shape).shape)
    chunks, order = _new_chunks_and_order(meta, schema, shape)
    compressor, filters = _new_codec(meta, schema)
    if meta.has_fill_value:
        fill = meta.fill_value
    elif schema.fill_value is not None:
        try:
            fill = v2_data_type(dtype).cast_v2_fill(schema.fill_value)
        except (MetadataError, UnsupportedError, TypeError, ValueError) as e:
            raise fail("schema.fill_value", str(e)) from None
    else:
        fill = None
    doc: dict[str, Any] = {
        "zarr_format": 2,
        "shape": shape,
        "chunks": chunks,
        "dtype": copy.deepcopy(dtype_json),
        "compressor": copy.deepcopy(compressor),
        "fill_value": None if fill is None else v2_data_type(dtype).v2_fill_json(fill),
        "order": order,
        "filters": copy.deepcopy(filters),
        "dimension_separator": meta.dimension_separator or key_encoding or ".",
    }
    stored = from_model(created(lambda: ArrayMetadataV2.from_json(doc)), doc)
    validate_metadata(stored, meta)
    validate_schema(stored, schema)
    return doc


def _new_chunks_and_order(
    meta: Zarr2Metadata, schema: Schema, shape: list[int]
) -> tuple[list[int], str]:
    """The ``chunks`` (from the chunk layout) and ``order`` (C, or F when the layout's
    ``inner_order`` is reversed) of a new array."""
    layout = schema.chunk_layout or ChunkLayout()
    if meta.chunks is not None:
        layout = layout.merge(
            ChunkLayout(len(shape), write_chunk_shape=list(meta.chunks)), "chunk_layout"
        )
    chunks = layout.choose_chunk_shape(shape)
    if meta.order is not None:
        return chunks, meta.order
    order = "C"
    if layout.inner_order is not None and len(shape) > 1:
        if layout.inner_order == list(range(len(shape)))[::-1]:
            order = "F"
        elif layout.inner_order != list(range(len(shape))) and layout.inner_order_hard:
            raise fail(
                "chunk_layout.inner_order",
                f"{layout.inner_order}: zarr v2 stores chunks in C or F order only",
            )
    return chunks, order


def _new_codec(meta: Zarr2Metadata, schema: Schema) -> tuple[Any, Any]:
    """The ``compressor`` and ``filters`` of a new array: the metadata's, else the schema's
    codec's, else TensorStore's defaults."""
    codec = _codec_of_schema(schema, "schema") or {}
    if meta.has_compressor:
        compressor = meta.compressor
    elif "compressor" in codec:
        compressor = _complete_compressor(codec["compressor"])
    else:
        compressor = dict(_DEFAULT_COMPRESSOR)
    filters = meta.filters if meta.has_filters else codec.get("filters")
    return compressor, filters


def _same_fill(a: Any, b: Any, dtype: np.dtype[Any]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    info = v2_data_type(dtype)
    return info.v2_fill_json(a) == info.v2_fill_json(b)


def validate_metadata(stored: Zarr2Metadata, c: Zarr2Metadata, where: str = "metadata") -> None:
    if c.dtype is not None and c.dtype != stored.dtype:
        raise expected(member(where, "dtype"), c.dtype_json, stored.dtype_json)
    if c.has_fill_value and not _same_fill(c.fill_value, stored.fill_value, stored.dtype):  # type: ignore[arg-type]
        raise expected(
            member(where, "fill_value"), c.raw.get("fill_value"), stored.raw.get("fill_value")
        )
    for name in ("shape", "chunks", "order", "dimension_separator"):
        want, got = getattr(c, name), getattr(stored, name)
        if name == "dimension_separator" and got is None:
            got = "."
        if want is not None and want != got:
            raise expected(member(where, name), want, got)
    if c.has_compressor and c.compressor != stored.compressor:
        raise expected(member(where, "compressor"), c.compressor, stored.compressor)
    if c.has_filters and c.filters != stored.filters:
        raise expected(member(where, "filters"), c.filters, stored.filters)


def validate_schema(stored: Zarr2Metadata, schema: Schema, where: str = "schema") -> None:
    assert stored.shape is not None and stored.chunks is not None
    rank = len(stored.shape)
    check_stored(
        schema,
        rank=rank,
        dtype=ts_dtype_name(stored),
        data_type=stored.dtype_json,
        domain=domain_of(stored),
        where=where,
    )
    if schema.chunk_layout is not None:
        check_stored_chunks(
            schema.chunk_layout,
            member(where, "chunk_layout"),
            stored.chunks,
            stored.chunks,
            lambda: inner_order_of(stored),
        )
    if schema.fill_value is not None:
        assert stored.dtype is not None
        want = v2_data_type(stored.dtype).cast_v2_fill(schema.fill_value)
        if not _same_fill(want, stored.fill_value, stored.dtype):
            raise SpecMismatchError(
                f"{where}.fill_value: the spec asks for {json.dumps(schema.fill_value)}, the "
                f"stored array has {json.dumps(stored.raw.get('fill_value'))}"
            )
    codec = _codec_of_schema(schema, where)
    if codec:
        if "compressor" in codec and _complete_compressor(codec["compressor"]) != stored.compressor:
            raise SpecMismatchError(
                f"{where}.codec.compressor: the spec asks for {json.dumps(codec['compressor'])}, "
                f"the stored array has {json.dumps(stored.compressor)}"
            )
        if "filters" in codec and codec["filters"] != stored.filters:
            raise SpecMismatchError(
                f"{where}.codec.filters: the spec asks for {json.dumps(codec['filters'])}, the "
                f"stored array has {json.dumps(stored.filters)}"
            )
    if schema.dimension_units is not None and any(u is not None for u in schema.dimension_units):
        raise SpecMismatchError(f"{where}.dimension_units: the zarr driver has no dimension units")


def stored_metadata(doc: Mapping[str, Any], path: str) -> Zarr2Metadata:
    """A stored ``.zarray``, read by the v2 model (:meth:`ArrayMetadataV2.from_json`, as
    zarrox reads it) and given as the members comparisons take."""
    return from_model(ArrayMetadataV2.from_json(doc, path=path), doc)


def from_model(model: ArrayMetadataV2, doc: Mapping[str, Any]) -> Zarr2Metadata:
    """The members of a stored array's model (``doc``, its ``.zarray``, for the members as
    written): every one given, the compressor completed as TensorStore completes it."""
    return Zarr2Metadata(
        shape=list(model.shape),
        chunks=list(model.chunks),
        dtype_json=copy.deepcopy(doc["dtype"]),
        dtype=model.dtype,
        fill_value=model.fill_value,
        has_fill_value=True,
        order=model.order,
        compressor=_complete_compressor(model.compressor),
        has_compressor=True,
        filters=None if model.filters is None else copy.deepcopy(list(model.filters)),
        has_filters=True,
        dimension_separator=model.dimension_separator if model.dimension_separator_given else None,
        raw={k: copy.deepcopy(v) for k, v in doc.items() if k in ARRAY_MEMBERS},
    )
