"""``Schema``: the driver-independent constraints of a spec (``rank``, ``dtype``, ``domain``,
``chunk_layout``, ``codec``, ``fill_value``, ``dimension_units``), as TensorStore parses and
merges them. The spec's top-level ``rank`` and ``dtype`` and the ``open``/``create`` keyword
options (``shape``, ``dtype``, ``chunk_layout``, ...) are merged into it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from zarrox._core import ChunkLayout
from zarrox.errors import MetadataError, SpecError, SpecMismatchError, UnsupportedError
from zarrox.tensorstore_spec._json import (
    as_json,
    check_members,
    expect_int,
    expect_object,
    expect_str,
    fail,
    is_int,
    member,
)
from zarrox.tensorstore_spec.index_space import INF, Dim, IndexDomain, merge_domains
from zarrox.tensorstore_spec.units import Units, merge_units, parse_units

_SCHEMA_MEMBERS = (
    "rank",
    "dtype",
    "domain",
    "chunk_layout",
    "codec",
    "fill_value",
    "dimension_units",
)


def dtype_name(value: object, where: str) -> str:
    """A TensorStore data type name (``"uint16"``, ``"bfloat16"``) from a name, a numpy
    dtype (or anything ``np.dtype`` takes) or a ``tensorstore.dtype``."""
    name = getattr(value, "name", None)
    if isinstance(value, str):
        return value
    if isinstance(name, str) and type(value).__module__.startswith("tensorstore"):
        return name
    try:
        return str(np.dtype(value).name)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise fail(where, f"expected a data type name, got {value!r}") from None


@dataclass
class Schema:
    rank: int | None = None
    dtype: str | None = None
    domain: IndexDomain | None = None
    chunk_layout: ChunkLayout | None = None
    codec: dict[str, Any] | None = None
    fill_value: Any = None
    dimension_units: Units | None = None

    @classmethod
    def from_json(cls, value: object, where: str = "schema") -> Schema:
        obj = expect_object(as_json(value), where)
        check_members(obj, _SCHEMA_MEMBERS, where)
        schema = cls()
        if "rank" in obj:
            schema.set_rank(expect_int(obj["rank"], member(where, "rank"), lo=0, hi=32), where)
        if "dtype" in obj:
            schema.set_dtype(expect_str(obj["dtype"], member(where, "dtype")), where)
        if "domain" in obj:
            schema.set_domain(IndexDomain.from_json(obj["domain"], member(where, "domain")), where)
        if "chunk_layout" in obj:
            at = member(where, "chunk_layout")
            schema.set_chunk_layout(ChunkLayout.from_json(obj["chunk_layout"], at), at)
        if "codec" in obj:
            schema.set_codec(obj["codec"], member(where, "codec"))
        if "fill_value" in obj:
            schema.set_fill_value(obj["fill_value"], member(where, "fill_value"))
        if "dimension_units" in obj:
            at = member(where, "dimension_units")
            schema.set_dimension_units(parse_units(obj["dimension_units"], at), at)
        return schema

    # ---- setters, each merging with what is already there -------------------------------

    def set_rank(self, rank: int, where: str) -> None:
        self.rank = merge_rank(self.rank, rank, where)

    def set_dtype(self, name: str, where: str) -> None:
        if self.dtype is not None and self.dtype != name:
            raise fail(
                member(where, "dtype"),
                f"{name!r} does not match the data type {self.dtype!r} given elsewhere",
            )
        self.dtype = name

    def set_domain(self, domain: IndexDomain, where: str) -> None:
        self.set_rank(domain.rank, member(where, "domain"))
        self.domain = merge_domains(self.domain, domain, member(where, "domain"))

    def set_chunk_layout(self, layout: ChunkLayout, where: str) -> None:
        if layout.rank is not None:
            self.set_rank(layout.rank, where)
        self.chunk_layout = (
            layout if self.chunk_layout is None else self.chunk_layout.merge(layout, where)
        )

    def set_codec(self, value: object, where: str) -> None:
        obj = expect_object(value, where)
        driver = obj.get("driver")
        if self.codec is not None:
            if driver is not None and self.codec.get("driver") not in (None, driver):
                raise fail(
                    member(where, "driver"),
                    f"codec driver {driver!r} does not match {self.codec.get('driver')!r}",
                )
            merged = copy.deepcopy(self.codec)
            for key, v in obj.items():
                if key in merged and merged[key] != v and key != "driver":
                    raise fail(member(where, key), f"{v!r} conflicts with {merged[key]!r}")
                merged[key] = copy.deepcopy(v)
            self.codec = merged
        else:
            self.codec = copy.deepcopy(obj)

    def set_fill_value(self, value: object, where: str) -> None:
        if value is None:
            return
        if not _is_scalar_json(value):
            raise fail(where, f"expected a scalar (number, boolean or string), got {value!r}")
        if self.fill_value is not None and self.fill_value != value:
            raise fail(where, f"{value!r} does not match the fill value {self.fill_value!r}")
        self.fill_value = value

    def set_dimension_units(self, units: Units, where: str) -> None:
        self.set_rank(len(units), where)
        self.dimension_units = merge_units(self.dimension_units, units, where)

    def merge(self, other: Schema, where: str = "schema") -> None:
        """Merge ``other``'s constraints into this schema."""
        if other.rank is not None:
            self.set_rank(other.rank, where)
        if other.dtype is not None:
            self.set_dtype(other.dtype, where)
        if other.domain is not None:
            self.set_domain(other.domain, where)
        if other.chunk_layout is not None:
            self.set_chunk_layout(other.chunk_layout, member(where, "chunk_layout"))
        if other.codec is not None:
            self.set_codec(other.codec, member(where, "codec"))
        if other.fill_value is not None:
            self.set_fill_value(other.fill_value, member(where, "fill_value"))
        if other.dimension_units is not None:
            self.set_dimension_units(other.dimension_units, member(where, "dimension_units"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.chunk_layout is not None and self.chunk_layout.to_json():
            out["chunk_layout"] = self.chunk_layout.to_json()
        if self.codec is not None:
            out["codec"] = copy.deepcopy(self.codec)
        if self.dimension_units is not None:
            out["dimension_units"] = [
                None if u is None else u.to_json() for u in self.dimension_units
            ]
        if self.domain is not None:
            out["domain"] = self.domain.to_json()
        if self.dtype is not None:
            out["dtype"] = self.dtype
        if self.fill_value is not None:
            out["fill_value"] = copy.deepcopy(self.fill_value)
        if self.rank is not None and not out.get("domain"):
            out["rank"] = self.rank
        return out

    @property
    def empty(self) -> bool:
        return not self.to_json()


def merge_rank(have: int | None, given: int | None, where: str) -> int | None:
    """The rank that ``have`` and ``given`` (each None when not constrained) name: they must
    not differ."""
    if have is not None and given is not None and have != given:
        raise fail(where, f"rank {given} does not match the rank {have} given elsewhere")
    return have if have is not None else given


def check_stored(
    schema: Schema, *, rank: int, dtype: str, data_type: Any, domain: IndexDomain, where: str
) -> None:
    """Fail where the schema's rank, data type or domain differ from a stored array's."""
    if schema.rank is not None and schema.rank != rank:
        raise SpecMismatchError(
            f"rank: the spec asks for rank {schema.rank}, the stored array has rank {rank}"
        )
    if schema.dtype is not None and schema.dtype != dtype:
        raise SpecMismatchError(
            f"dtype: the spec asks for {schema.dtype!r}, the stored array's data type is "
            f"{json.dumps(data_type)}"
        )
    if schema.domain is not None:
        try:
            merge_domains(schema.domain, domain, member(where, "domain"))
        except SpecError as e:
            raise SpecMismatchError(f"mismatch between metadata and schema: {e}") from None


def check_stored_chunks(
    layout: ChunkLayout,
    where: str,
    write_shape: list[int],
    read_shape: list[int],
    inner_order: Callable[[], list[int]],
) -> None:
    """Fail where the chunk layout (at ``where``) asks for other write or read chunk shapes,
    or another inner order, than a stored array's (``inner_order()``, asked only when the
    layout's inner order is a hard constraint)."""
    checks = (
        ("write_chunk", layout.write_chunk, write_shape),
        ("read_chunk", layout.read_chunk, read_shape),
    )
    for name, grid, have in checks:
        # -1 (the whole extent) is never a hard size; as in TensorStore, neither the aspect
        # ratio nor the number of elements is checked against a stored array
        hard = grid.hard_shape()
        if hard is not None and any(w and w != g for w, g in zip(hard, have, strict=True)):
            raise SpecMismatchError(
                f"{member(where, name)}.shape: the spec asks for {hard}, the stored array "
                f"has {have}"
            )
    if layout.inner_order is not None and layout.inner_order_hard:
        have_order = inner_order()
        if layout.inner_order != have_order:
            raise SpecMismatchError(
                f"{member(where, 'inner_order')}: the spec asks for {layout.inner_order}, the "
                f"stored array has {have_order}"
            )


# --------------------------------------------------------------------------------------------
# Parsing ``metadata`` and creating an array: what the zarr and zarr3 drivers share
# --------------------------------------------------------------------------------------------

_T = TypeVar("_T")


def metadata_dtype(value: object, where: str, parse: Callable[[Any], _T]) -> _T:
    """The data type ``value`` of ``metadata`` (at ``where``), read by the model's ``parse``
    (given a copy), whose errors say it is unsupported."""
    try:
        return parse(copy.deepcopy(value))
    except (MetadataError, UnsupportedError, TypeError, ValueError) as e:
        raise fail(where, f"unsupported data type {value!r}: {e}") from None


def metadata_fill(
    value: object,
    where: str,
    type_member: str,
    data_type: _T | None,
    parse: Callable[[object, _T], Any],
) -> Any:
    """``fill_value`` of ``metadata`` (at ``where``), read by the model's ``parse`` for the
    data type given beside it (``data_type``, the member ``type_member``; None when not
    given)."""
    at = member(where, "fill_value")
    if data_type is None:
        raise fail(at, f'must be given together with "{type_member}"')
    try:
        return parse(value, data_type)
    except (MetadataError, UnsupportedError) as e:
        raise fail(at, str(e)) from None


def creation_dtype(
    schema: Schema,
    given: _T | None,
    given_name: str | None,
    given_json: Any,
    member_name: str,
    from_schema: Callable[[str], _T],
) -> _T:
    """The data type of a new array: the metadata's (``given``, TensorStore name
    ``given_name``, written ``given_json`` as ``metadata.<member_name>``), which the schema's
    ``dtype`` must name, else the schema's (``from_schema(schema.dtype)``)."""
    if given is not None:
        if schema.dtype is not None and schema.dtype != given_name:
            raise fail(
                "dtype", f"{schema.dtype!r} does not match metadata.{member_name} {given_json!r}"
            )
        return given
    if schema.dtype is not None:
        return from_schema(schema.dtype)
    raise fail(
        "dtype", f"a data type must be given to create an array (dtype or metadata.{member_name})"
    )


def creation_domain(
    schema: Schema,
    rank: int | None,
    shape: Sequence[int] | None,
    labels: Sequence[str] = (),
) -> IndexDomain:
    """The domain of a new array: ``[0, shape)`` of the metadata (resizable upper bounds,
    unbounded where the metadata has no shape) merged with the schema's, which must be
    finite."""
    from_meta = None
    if rank is not None:
        dims = [
            Dim(0, INF if shape is None else shape[i] - 1, False, True, labels[i] if labels else "")
            for i in range(rank)
        ]
        from_meta = IndexDomain(dims)
    try:
        domain = merge_domains(schema.domain, from_meta, "schema.domain")
    except SpecError as e:
        raise SpecMismatchError(f"mismatch between metadata and schema: {e}") from None
    if domain is None or not domain.finite:
        raise fail(
            "domain",
            "the shape must be given to create an array (shape, schema.domain or metadata.shape)",
        )
    return domain


def created(parse: Callable[[], _T]) -> _T:
    """``parse()`` of the document of a new array by zarrox's model, whose errors say zarrox
    cannot create it."""
    try:
        return parse()
    except (MetadataError, UnsupportedError) as e:
        raise SpecError(f"metadata: zarrox cannot create this array: {e}") from None


def _is_scalar_json(value: object) -> bool:
    return isinstance(value, bool | str | float) or is_int(value)
