"""The ``zarr3`` driver: ``metadata`` constraints, the ``zarr.json`` TensorStore writes for a new
array, and the checks that a stored array matches a spec's constraints.

``metadata`` is a ``zarr.json`` document whose members are all optional and whose codecs may
be partial (the core's ``CodecChainSpec``, ``codec/chain_spec.rs``). Creating an array
combines it with the schema as TensorStore's ``GetNewMetadata`` does (domain, data type, fill
value, dimension names and units, the chunk shapes chosen from the chunk layout, sharding
inserted when read and write chunks differ, codec defaults), and the document is written as
TensorStore writes it: sorted members, no whitespace, no empty ``attributes``.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrox._core import ChunkLayout, CodecChainSpec, codecs_with_index_location
from zarrox.errors import MetadataError, SpecError, SpecMismatchError, UnsupportedError
from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.chunk_grid import parse_chunk_key_encoding
from zarrox.metadata.v3 import (
    ARRAY_MEMBERS,
    default_fill_value,
    fill_value_to_json,
    parse_attributes,
    parse_dimension_names,
    parse_extra,
    parse_fill_value,
    resolve_data_type,
)
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
    merge_rank,
    metadata_dtype,
    metadata_fill,
)
from zarrox.tensorstore_spec.units import Units, merge_units, parse_units, units_to_strings

#: each chunk key encoding as the v3 model reads its name alone (the core's default separator)
_DEFAULT_ENCODING = {name: parse_chunk_key_encoding(name, "") for name in ("default", "v2")}


@dataclass
class Zarr3Metadata:
    """``zarr.json`` members; every one may be None (not constrained) in a spec. ``fill_value``
    is the parsed value (a numpy scalar), ``attributes`` the user attributes without
    ``dimension_units``, ``chunk_key_encoding`` the v3 model's form (``{"name",
    "configuration": {"separator"}}``)."""

    shape: list[int] | None = None
    data_type: Any = None
    dtype: np.dtype[Any] | None = None
    chunk_shape: list[int] | None = None
    chunk_key_encoding: dict[str, Any] | None = None
    fill_value: Any = None
    has_fill_value: bool = False
    codecs: CodecChainSpec | None = None
    codecs_json: list[Any] | None = None
    attributes: dict[str, Any] | None = None
    dimension_units: Units | None = None
    dimension_names: list[str | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def rank(self) -> int | None:
        for v in (self.shape, self.chunk_shape, self.dimension_names, self.dimension_units):
            if v is not None:
                return len(v)
        return None

    def to_json(self) -> dict[str, Any]:
        """The constraints as a ``metadata`` member (TensorStore's normalized form)."""
        out = {k: copy.deepcopy(v) for k, v in self.raw.items() if k != "codecs"}
        if self.codecs is not None:
            out["codecs"] = self.codecs.to_json()
        out.setdefault("node_type", "array")
        return out


@contextlib.contextmanager
def _v3_errors() -> Iterator[None]:
    """The errors of the v3 model's parsers, whose messages name the member, as spec errors."""
    try:
        yield
    except (MetadataError, UnsupportedError) as e:
        raise SpecError(str(e)) from None


def _parse_chunk_key_encoding(value: object, where: str) -> dict[str, Any]:
    """``chunk_key_encoding`` of the metadata at ``where`` in TensorStore's form (``name``,
    by default ``"default"``, and ``configuration`` only), read by the v3 model's parser."""
    at = member(where, "chunk_key_encoding")
    obj = expect_object(value, at)
    check_members(obj, ("name", "configuration"), at)
    name = expect_str(obj.get("name", "default"), member(at, "name"), ("default", "v2"))
    doc = {"name": name, "configuration": obj.get("configuration") or {}}
    with _v3_errors():
        return parse_chunk_key_encoding(doc, f"{where}.")


def chunk_key_encoding_json(cke: Mapping[str, Any]) -> dict[str, Any]:
    """The v3 model's chunk key encoding as TensorStore writes it: no default separator."""
    name = cke["name"]
    if cke == _DEFAULT_ENCODING.get(name):
        return {"name": name}
    return {"name": name, "configuration": copy.deepcopy(cke["configuration"])}


def _parse_chunk_grid(value: object, where: str) -> list[int] | None:
    obj = expect_object(value, where)
    check_members(obj, ("name", "configuration"), where)
    if "name" in obj:
        expect_str(obj["name"], member(where, "name"), ("regular",))
    config_at = member(where, "configuration")
    config = expect_object(obj.get("configuration") or {}, config_at)
    check_members(config, ("chunk_shape",), config_at)
    if "chunk_shape" not in config:
        return None
    return expect_int_list(config["chunk_shape"], member(config_at, "chunk_shape"), lo=1)


def _data_type(value: object, where: str) -> tuple[Any, np.dtype[Any]]:
    info = metadata_dtype(value, where, lambda v: resolve_data_type(v, ""))
    return copy.deepcopy(info.json), info.dtype


def parse_metadata(value: object, where: str = "metadata") -> Zarr3Metadata:
    """Parse ``metadata`` constraints (a stored document: :func:`stored_metadata`)."""
    obj = expect_object(value, where)
    meta = Zarr3Metadata(raw=copy.deepcopy(obj))
    with _v3_errors():
        meta.extra = parse_extra(obj, ARRAY_MEMBERS, f"{where}: ")
    if "zarr_format" in obj:
        expect_int(obj["zarr_format"], member(where, "zarr_format"), lo=3, hi=3)
    if "node_type" in obj:
        expect_str(obj["node_type"], member(where, "node_type"), ("array",))
    if "shape" in obj:
        meta.shape = expect_int_list(obj["shape"], member(where, "shape"), lo=0)
    if "data_type" in obj:
        meta.data_type, meta.dtype = _data_type(obj["data_type"], member(where, "data_type"))
    if "chunk_grid" in obj:
        meta.chunk_shape = _parse_chunk_grid(obj["chunk_grid"], member(where, "chunk_grid"))
    if "chunk_key_encoding" in obj:
        meta.chunk_key_encoding = _parse_chunk_key_encoding(obj["chunk_key_encoding"], where)
    if "fill_value" in obj:
        meta.fill_value = metadata_fill(
            obj["fill_value"],
            where,
            "data_type",
            meta.data_type,
            lambda value, data_type: parse_fill_value(value, data_type, meta.dtype),
        )
        meta.has_fill_value = True
    if "codecs" in obj:
        meta.codecs_json = copy.deepcopy(obj["codecs"])
        meta.codecs = CodecChainSpec.from_json(obj["codecs"], member(where, "codecs"))
    rank = meta.rank
    if "dimension_names" in obj:
        names = expect_list(obj["dimension_names"], member(where, "dimension_names"))
        rank = len(names) if rank is None else rank
        with _v3_errors():
            meta.dimension_names = list(parse_dimension_names(names, rank, f"{where}.") or ())
        rank = len(names)
    if "attributes" in obj:
        at = member(where, "attributes")
        with _v3_errors():
            attrs = parse_attributes(obj["attributes"], f"{where}.")
        if "dimension_units" in attrs:
            units = parse_units(attrs.pop("dimension_units"), member(at, "dimension_units"), rank)
            meta.dimension_units = units
        meta.attributes = attrs
    if "storage_transformers" in obj:
        at = member(where, "storage_transformers")
        if expect_list(obj["storage_transformers"], at):
            raise fail(at, "storage transformers are not supported")
    for name, value_ in (
        ("shape", meta.shape),
        ("chunk_grid.configuration.chunk_shape", meta.chunk_shape),
        ("dimension_names", meta.dimension_names),
        ("attributes.dimension_units", meta.dimension_units),
    ):
        if value_ is not None and meta.rank is not None and len(value_) != meta.rank:
            raise fail(member(where, name), f"has {len(value_)} elements, the rank is {meta.rank}")
    return meta


# --------------------------------------------------------------------------------------------
# Reading the schema of a stored array
# --------------------------------------------------------------------------------------------


def ts_dtype_name(meta: Zarr3Metadata) -> str:
    """The TensorStore data type name of the array (``data_type`` when it is a name)."""
    if isinstance(meta.data_type, str):
        return meta.data_type
    assert meta.dtype is not None
    return str(meta.dtype.name)


def domain_of(meta: Zarr3Metadata) -> IndexDomain:
    """``[0, shape)`` with resizable (implicit) upper bounds, labelled by the dimension names
    when they are unique."""
    assert meta.shape is not None
    labels = IndexDomain.labels_of(meta.dimension_names, len(meta.shape))
    return IndexDomain.from_shape(meta.shape, implicit_upper=True, labels=labels)


def read_chunk_shape_of(meta: Zarr3Metadata) -> list[int]:
    assert meta.chunk_shape is not None and meta.codecs is not None
    _, read_shape, _ = meta.codecs.decoded_layout(len(meta.chunk_shape))
    return read_shape or list(meta.chunk_shape)


def inner_order_of(meta: Zarr3Metadata) -> list[int]:
    assert meta.chunk_shape is not None and meta.codecs is not None
    rank = len(meta.chunk_shape)
    return meta.codecs.decoded_layout(rank)[0] or list(range(rank))


def schema_of(meta: Zarr3Metadata) -> dict[str, Any]:
    """The array's schema as TensorStore reports it (``TensorStore.schema``)."""
    assert meta.shape is not None and meta.chunk_shape is not None
    rank = len(meta.shape)
    out: dict[str, Any] = {
        "chunk_layout": {
            "grid_origin": [0] * rank,
            "inner_order": inner_order_of(meta),
            "read_chunk": {"shape": read_chunk_shape_of(meta)},
            "write_chunk": {"shape": list(meta.chunk_shape)},
        },
        "codec": {"codecs": codecs_with_index_location(meta.codecs_json), "driver": "zarr3"},
        "domain": domain_of(meta).to_json(),
        "dtype": ts_dtype_name(meta),
        "fill_value": fill_value_to_json(meta.fill_value, meta.data_type),
        "rank": rank,
    }
    if meta.dimension_units is not None and any(u is not None for u in meta.dimension_units):
        out["dimension_units"] = [None if u is None else u.to_json() for u in meta.dimension_units]
    return out


# --------------------------------------------------------------------------------------------
# Creating: the metadata TensorStore writes
# --------------------------------------------------------------------------------------------


def new_metadata(meta: Zarr3Metadata, schema: Schema) -> dict[str, Any]:
    """The ``zarr.json`` document TensorStore writes when it creates an array from these
    ``metadata`` constraints and ``schema``."""
    data_type, dtype = creation_dtype(
        schema,
        None if meta.data_type is None else (meta.data_type, meta.dtype),
        None if meta.data_type is None else ts_dtype_name(meta),
        meta.data_type,
        "data_type",
        lambda name: _data_type(name, "dtype"),
    )
    assert dtype is not None
    rank = merge_rank(meta.rank, schema.rank, "rank")
    labels = [] if rank is None else IndexDomain.labels_of(meta.dimension_names, rank)
    domain = creation_domain(schema, rank, meta.shape, labels)
    rank, shape = domain.rank, list(domain.shape)
    if meta.has_fill_value:
        fill = meta.fill_value
    elif schema.fill_value is not None:
        fill = _cast_schema_fill(schema.fill_value, data_type, dtype, "schema.fill_value")
    else:
        fill = default_fill_value(dtype, data_type=data_type)
    units = merge_units(meta.dimension_units, schema.dimension_units, "schema.dimension_units")
    if units is not None and len(units) != rank:
        raise fail("dimension_units", f"has {len(units)} units, the rank is {rank}")
    codecs, write_shape = _new_codecs(meta, schema, dtype, shape)
    doc: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": copy.deepcopy(data_type),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(write_shape)}},
        "chunk_key_encoding": chunk_key_encoding_json(
            meta.chunk_key_encoding or _DEFAULT_ENCODING["default"]
        ),
        "fill_value": fill_value_to_json(fill, data_type),
        "codecs": codecs,
    }
    attributes = dict(meta.attributes or {})
    if units is not None and any(u is not None for u in units):
        attributes["dimension_units"] = units_to_strings(units)
    if attributes:
        doc["attributes"] = attributes
    names = _new_dimension_names(meta, domain)
    if any(n is not None for n in names):
        doc["dimension_names"] = names
    doc.update(copy.deepcopy(meta.extra))
    stored = from_model(created(lambda: ArrayMetadataV3.from_json(doc)), doc, "metadata")
    validate_metadata(stored, meta)
    validate_schema(stored, schema)
    return doc


def _new_dimension_names(meta: Zarr3Metadata, domain: IndexDomain) -> list[str | None]:
    """The domain's labels; an unlabelled dimension is ``""`` where the metadata names it so,
    else null."""
    names: list[str | None] = []
    for i, label in enumerate(domain.labels):
        given = meta.dimension_names[i] if meta.dimension_names is not None else None
        names.append(label if label else ("" if given == "" else None))
    return names


def _new_codecs(
    meta: Zarr3Metadata, schema: Schema, dtype: np.dtype[Any], shape: list[int]
) -> tuple[list[dict[str, Any]], list[int]]:
    """The resolved ``codecs`` of a new array and its chunk (write) shape, from the codec
    chains of the metadata and the schema and the chunk layout: sharding is inserted when
    read chunks differ from write chunks."""
    rank = len(shape)
    schema_chain = CodecChainSpec.from_schema_codec(schema.codec, "schema")
    chain = meta.codecs or schema_chain
    if meta.codecs is not None and schema_chain is not None:
        chain = meta.codecs.merge(schema_chain, "codecs", strict=False, rank=rank)
    layout = schema.chunk_layout or ChunkLayout()
    layout = layout.merge(_layout_from_metadata(meta, rank), "chunk_layout")
    if layout.grid_origin is not None and any(
        h and v != 0
        for v, h in zip(layout.grid_origin, layout.grid_origin_hard or [], strict=False)
    ):
        raise fail(
            "chunk_layout.grid_origin", f"zarr arrays have grid origin 0, got {layout.grid_origin}"
        )
    # A chain without sharding decodes whole chunks: read chunks are write chunks.
    unsharded = meta.codecs is not None and not meta.codecs.has_sharding
    read_shape, write_shape = layout.choose_read_write_chunk_shapes(shape, unsharded)
    if unsharded and read_shape != write_shape:
        raise fail(
            "metadata.codecs",
            f"has no sharding_indexed codec, so read chunks are write chunks, but the chunk "
            f"layout asks for read chunks {read_shape} in write chunks {write_shape}",
        )
    # read chunks smaller than write chunks: sharding added where the chain has none
    codecs = (chain or CodecChainSpec()).resolve_new(
        dtype.itemsize, write_shape, read_shape, layout.inner_order
    )
    return codecs, list(write_shape)


def _layout_from_metadata(meta: Zarr3Metadata, rank: int) -> ChunkLayout:
    write = None if meta.chunk_shape is None else list(meta.chunk_shape)
    read, inner_order = None, None
    if meta.codecs is not None:
        inner_order, read, read_is_whole_chunk = meta.codecs.decoded_layout(rank)
        if read is None and read_is_whole_chunk:
            read = write
    return ChunkLayout(
        rank,
        grid_origin=[0] * rank,
        inner_order=inner_order,
        write_chunk_shape=write,
        read_chunk_shape=read,
    )


def _cast_schema_fill(value: Any, data_type: Any, dtype: np.dtype[Any], where: str) -> Any:
    try:
        if isinstance(value, str) or dtype.kind in "biu":
            return parse_fill_value(value, data_type, dtype)
        return parse_fill_value(float(value), data_type, dtype)
    except (MetadataError, UnsupportedError, TypeError, ValueError) as e:
        raise fail(where, f"{value!r} is not a fill value for {data_type}: {e}") from None


# --------------------------------------------------------------------------------------------
# Opening: the stored array against the spec's constraints
# --------------------------------------------------------------------------------------------


def _identical(a: Any, b: Any) -> bool:
    """Fill values compare bit for bit (NaN equals NaN)."""
    if isinstance(a, np.generic) and isinstance(b, np.generic) and a.dtype == b.dtype:
        return a.tobytes() == b.tobytes() or (
            a.dtype.kind in "fc" and bool(np.all(np.isnan(a))) and bool(np.all(np.isnan(b)))
        )
    return bool(a == b)


def validate_metadata(stored: Zarr3Metadata, c: Zarr3Metadata, where: str = "metadata") -> None:
    """Fail (naming the member) where the ``metadata`` constraints ``c`` differ from the
    stored metadata."""
    if c.data_type is not None and c.data_type != stored.data_type:
        raise expected(member(where, "data_type"), c.data_type, stored.data_type)
    if c.has_fill_value and not _identical(c.fill_value, stored.fill_value):
        raise expected(
            member(where, "fill_value"),
            fill_value_to_json(c.fill_value, stored.data_type),
            fill_value_to_json(stored.fill_value, stored.data_type),
        )
    if c.shape is not None and c.shape != stored.shape:
        raise expected(member(where, "shape"), c.shape, stored.shape)
    if c.chunk_shape is not None and c.chunk_shape != stored.chunk_shape:
        raise expected(
            member(where, "chunk_grid.configuration.chunk_shape"), c.chunk_shape, stored.chunk_shape
        )
    if c.chunk_key_encoding is not None and c.chunk_key_encoding != stored.chunk_key_encoding:
        assert stored.chunk_key_encoding is not None
        raise expected(
            member(where, "chunk_key_encoding"),
            chunk_key_encoding_json(c.chunk_key_encoding),
            chunk_key_encoding_json(stored.chunk_key_encoding),
        )
    if c.codecs is not None:
        assert stored.codecs is not None
        stored.codecs.merge(c.codecs, member(where, "codecs"), strict=True, rank=stored.rank)
    if c.dimension_names is not None and c.dimension_names != (
        stored.dimension_names or [None] * len(c.dimension_names)
    ):
        raise expected(member(where, "dimension_names"), c.dimension_names, stored.dimension_names)
    for key, value in (c.attributes or {}).items():
        have = (stored.attributes or {}).get(key, _MISSING)
        if have is _MISSING or have != value:
            raise expected(
                member(member(where, "attributes"), key),
                value,
                None if have is _MISSING else have,
            )
    if c.dimension_units is not None:
        have_units = stored.dimension_units or [None] * len(c.dimension_units)
        for i, unit in enumerate(c.dimension_units):
            if unit is not None and have_units[i] != unit:
                raise expected(
                    member(where, "attributes.dimension_units"),
                    units_to_strings(c.dimension_units),
                    None if stored.dimension_units is None else units_to_strings(have_units),
                )
    for key, value in c.extra.items():
        if stored.extra.get(key) != value:
            raise expected(member(where, key), value, stored.extra.get(key))


_MISSING = object()


def validate_schema(stored: Zarr3Metadata, schema: Schema, where: str = "schema") -> None:
    """Fail (naming the member) where the schema constraints differ from the stored array."""
    assert stored.shape is not None and stored.chunk_shape is not None
    rank = len(stored.shape)
    check_stored(
        schema,
        rank=rank,
        dtype=ts_dtype_name(stored),
        data_type=stored.data_type,
        domain=domain_of(stored),
        where=where,
    )
    if schema.chunk_layout is not None:
        _validate_layout(stored, schema.chunk_layout, member(where, "chunk_layout"))
    if schema.fill_value is not None:
        assert stored.dtype is not None
        want = _cast_schema_fill(
            schema.fill_value,
            stored.data_type,
            stored.dtype,
            member(where, "fill_value"),
        )
        if not _identical(want, stored.fill_value):
            raise SpecMismatchError(
                f"{member(where, 'fill_value')}: the spec asks for fill value "
                f"{json.dumps(fill_value_to_json(want, stored.data_type))}, the stored array has "
                f"{json.dumps(fill_value_to_json(stored.fill_value, stored.data_type))}"
            )
    chain = CodecChainSpec.from_schema_codec(schema.codec, where)
    if chain is not None:
        assert stored.codecs is not None
        try:
            stored.codecs.merge(chain, member(where, "codec"), strict=False, rank=rank)
        except SpecError as e:
            raise SpecMismatchError(
                f"codec from metadata does not match codec in schema: {e}"
            ) from None
    if schema.dimension_units is not None:
        try:
            merge_units(
                stored.dimension_units, schema.dimension_units, member(where, "dimension_units")
            )
        except SpecError as e:
            raise SpecMismatchError(str(e)) from None


def _validate_layout(stored: Zarr3Metadata, layout: ChunkLayout, where: str) -> None:
    assert stored.chunk_shape is not None
    rank = len(stored.chunk_shape)
    if layout.rank is not None and layout.rank != rank:
        raise SpecMismatchError(f"{where}: has rank {layout.rank}, the stored array {rank}")
    check_stored_chunks(
        layout,
        where,
        list(stored.chunk_shape),
        read_chunk_shape_of(stored),
        lambda: inner_order_of(stored),
    )
    if layout.grid_origin is not None and layout.grid_origin_hard is not None:
        for v, h in zip(layout.grid_origin, layout.grid_origin_hard, strict=True):
            if h and v != 0:
                raise SpecMismatchError(
                    f"{member(where, 'grid_origin')}: {layout.grid_origin} (zarr arrays have "
                    "grid origin 0)"
                )


def stored_metadata(doc: Mapping[str, Any], path: str) -> Zarr3Metadata:
    """A stored ``zarr.json`` array document, read by the v3 model
    (:meth:`ArrayMetadataV3.from_json`, as zarrox reads it) and given as the members
    comparisons take."""
    where = "zarr.json" + (f" at {path!r}" if path else "")
    try:
        return from_model(ArrayMetadataV3.from_json(doc, path=path), doc, where)
    except SpecError as e:
        raise MetadataError(f"{e}") from None


def from_model(model: ArrayMetadataV3, doc: Mapping[str, Any], where: str) -> Zarr3Metadata:
    """The members of a stored array's model (``doc``, its document, for the codecs as
    written): every one given, ``dimension_units`` taken out of the attributes."""
    if model.rectilinear is not None:
        raise UnsupportedError(
            f"{where}: a rectilinear chunk grid, which TensorStore's zarr3 driver does not describe"
        )
    attributes = copy.deepcopy(model.attributes)
    units = None
    if "dimension_units" in attributes:
        units = parse_units(
            attributes.pop("dimension_units"), f"{where}.attributes.dimension_units", model.ndim
        )
    return Zarr3Metadata(
        shape=list(model.shape),
        data_type=copy.deepcopy(model.data_type),
        dtype=model.dtype,
        chunk_shape=list(model.chunk_shape),
        chunk_key_encoding=copy.deepcopy(model.chunk_key_encoding),
        fill_value=model.fill_value,
        has_fill_value=True,
        codecs=CodecChainSpec.from_json(doc["codecs"], f"{where}.codecs", complete=True),
        codecs_json=copy.deepcopy(doc["codecs"]),
        attributes=attributes,
        dimension_units=units,
        dimension_names=None if model.dimension_names is None else list(model.dimension_names),
        extra=copy.deepcopy(model.extra),
        raw=copy.deepcopy(dict(doc)),
    )


def spec_metadata_json(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The stored document as the ``metadata`` member of a spec that reopens the array:
    without zarr-python's empty ``attributes`` and ``storage_transformers``."""
    out = copy.deepcopy(dict(doc))
    if out.get("attributes") == {}:
        del out["attributes"]
    if out.get("storage_transformers") == []:
        del out["storage_transformers"]
    return out
