"""``Spec``: a TensorStore JSON spec for the ``zarr3`` and ``zarr`` (v2) drivers, parsed and
checked member by member, and merged with the keyword options of ``open``
(``create=True``, ``shape=...``, ``dtype=...``, ``chunk_layout=...``, ...)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from zarrox._core import ChunkLayout
from zarrox.errors import SpecError, UnsupportedError
from zarrox.staging import StagingTransaction
from zarrox.tensorstore_spec import zarr2, zarr3
from zarrox.tensorstore_spec._json import (
    as_json,
    check_members,
    expect_bool,
    expect_int,
    expect_object,
    expect_str,
    fail,
    is_int,
    member,
)
from zarrox.tensorstore_spec.index_space import IndexDomain, IndexTransform
from zarrox.tensorstore_spec.kvstore import KvStore, parse_kvstore, parse_kvstore_url
from zarrox.tensorstore_spec.schema import Schema, dtype_name
from zarrox.tensorstore_spec.units import parse_units

DRIVERS = {"zarr3": "zarr3", "zarr": "zarr", "zarr2": "zarr"}
_COMMON = (
    "driver",
    "kvstore",
    "path",
    "context",
    "dtype",
    "rank",
    "transform",
    "schema",
    "open",
    "create",
    "delete_existing",
    "assume_metadata",
    "assume_cached_metadata",
    "cache_pool",
    "metadata_cache_pool",
    "data_copy_concurrency",
    "recheck_cached_metadata",
    "recheck_cached_data",
    "fill_missing_data_reads",
    "store_data_equal_to_fill_value",
    "metadata",
    "open_as_void",
)
_ZARR2_ONLY = ("field", "metadata_key", "key_encoding")
_FLAGS = ("open", "create", "delete_existing", "assume_metadata", "assume_cached_metadata")

#: the keyword options ``zarrox.open(spec, ...)`` takes, as ``tensorstore.open`` does
OPEN_OPTIONS = (
    "read",
    "write",
    *_FLAGS,
    "context",
    "transaction",
    "batch",
    "kvstore",
    "recheck_cached_metadata",
    "recheck_cached_data",
    "recheck_cached",
    "rank",
    "dtype",
    "domain",
    "shape",
    "chunk_layout",
    "codec",
    "fill_value",
    "dimension_units",
    "schema",
)


def _revalidation_bound(value: object, where: str) -> bool | str | float:
    """A ``CacheRevalidationBound``: true, false, "open", or a time in seconds."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if value == "open":
        return "open"
    if (is_int(value) or isinstance(value, float)) and value >= 0:  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    raise fail(where, f'expected true, false, "open" or a number of seconds, got {value!r}')


def _resource(value: object, where: str) -> Any:
    """A context resource: an object, or a reference (``"cache_pool"``, ``"cache_pool#a"``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return None
    return expect_object(value, where)


def driver_module(driver: str) -> ModuleType:
    """The module of a driver's ``metadata`` (:mod:`.zarr3`, or :mod:`.zarr2` for ``zarr``):
    both have ``parse_metadata``, ``stored_metadata``, ``ts_dtype_name``, ``schema_of``,
    ``validate_metadata`` and ``validate_schema``."""
    return zarr3 if driver == "zarr3" else zarr2


@dataclass
class ParsedSpec:
    driver: str
    kvstore: KvStore
    schema: Schema = field(default_factory=Schema)
    transform: IndexTransform | None = None
    metadata: zarr3.Zarr3Metadata | zarr2.Zarr2Metadata | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    recheck_cached_metadata: bool | str | float = "open"
    recheck_cached_data: bool | str | float = True
    fill_missing_data_reads: bool = True
    store_data_equal_to_fill_value: bool = False
    key_encoding: str | None = None
    read: bool | None = None
    write: bool | None = None
    extra_json: dict[str, Any] = field(default_factory=dict)
    #: the ``transaction`` open option: a :class:`zarrox.Transaction` the view's reads and
    #: writes go through (not part of the JSON, as in TensorStore)
    transaction: StagingTransaction | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"driver": self.driver, "kvstore": self.kvstore.to_json()}
        if self.context:
            out["context"] = copy.deepcopy(self.context)
        schema = Schema(**{k: getattr(self.schema, k) for k in self.schema.__dataclass_fields__})
        if schema.dtype is not None:
            out["dtype"] = schema.dtype
            schema.dtype = None
        if self.transform is not None:
            out["transform"] = self.transform.to_json()
            # the schema's rank (the array's) is implied by the transform's output rank
            schema.rank = None if schema.rank == self.transform.output_rank else schema.rank
        schema_json = schema.to_json()
        if "rank" in schema_json and self.transform is None and len(schema_json) == 1:
            out["rank"] = schema_json.pop("rank")
        if schema_json:
            out["schema"] = schema_json
        if self.metadata is not None and self.metadata.to_json():
            meta = self.metadata.to_json()
            if meta != {"node_type": "array"}:
                out["metadata"] = meta
        for key, value in self.flags.items():
            out[key] = value
        for key, value in self.resources.items():
            out[key] = copy.deepcopy(value)
        if self.recheck_cached_metadata != "open":
            out["recheck_cached_metadata"] = self.recheck_cached_metadata
        if self.recheck_cached_data is not True:
            out["recheck_cached_data"] = self.recheck_cached_data
        if not self.fill_missing_data_reads:
            out["fill_missing_data_reads"] = False
        if self.store_data_equal_to_fill_value:
            out["store_data_equal_to_fill_value"] = True
        if self.key_encoding is not None:
            out["key_encoding"] = self.key_encoding
        out.update(copy.deepcopy(self.extra_json))
        return out

    def copy(self) -> ParsedSpec:
        out = copy.copy(self)
        out.schema = copy.deepcopy(self.schema)
        out.metadata = copy.deepcopy(self.metadata)
        out.flags = dict(self.flags)
        out.context = copy.deepcopy(self.context)
        out.resources = copy.deepcopy(self.resources)
        return out


def _parse_url_spec(url: str) -> dict[str, Any]:
    """``"file:///a.zarr/|zarr3:"`` (a kvstore URL, then the driver and a path)."""
    head, _, driver_part = url.rpartition("|")
    scheme, sep, path = driver_part.partition(":")
    if not head or not sep or scheme not in DRIVERS:
        raise SpecError(f"spec URL {url!r}: expected a kvstore URL followed by |zarr3: or |zarr2:")
    kv = parse_kvstore_url(head).joined(path)
    return {"driver": scheme, "kvstore": kv}


def parse_spec(value: object) -> ParsedSpec:
    if isinstance(value, Spec):
        return value._parsed.copy()
    if isinstance(value, str):
        obj: dict[str, Any] = _parse_url_spec(value)
    else:
        to_json = getattr(value, "to_json", None)
        if not isinstance(value, Mapping) and callable(to_json):
            value = to_json()  # e.g. a tensorstore.Spec
        raw = dict(expect_object(value, "spec"))
        kv = raw.pop("kvstore", None)
        obj = expect_object(as_json(raw), "spec")
        if kv is not None:
            obj["kvstore"] = kv if isinstance(kv, KvStore | str) else as_json(kv)
    driver_name = expect_str(obj.get("driver"), "driver", tuple(DRIVERS))
    driver = DRIVERS[driver_name]
    allowed = _COMMON + (_ZARR2_ONLY if driver == "zarr" else ())
    check_members(obj, allowed, "spec")
    if "kvstore" not in obj:
        raise fail("kvstore", "missing: a spec needs a kvstore")
    kv = parse_kvstore(obj["kvstore"], "kvstore")
    if "path" in obj:
        kv = kv.joined(expect_str(obj["path"], "path"))
    else:
        kv = kv.joined("")
    parsed = ParsedSpec(driver=driver, kvstore=kv)
    if obj.get("open_as_void"):
        raise UnsupportedError("open_as_void: raw byte access is not supported by zarrox")
    if "context" in obj:
        parsed.context = expect_object(obj["context"], "context")
    if "schema" in obj:
        parsed.schema = Schema.from_json(obj["schema"], "schema")
    if "dtype" in obj:
        parsed.schema.set_dtype(dtype_name(obj["dtype"], "dtype"), "")
    if "transform" in obj:
        parsed.transform = IndexTransform.from_json(obj["transform"], "transform")
    if "rank" in obj:
        rank = expect_int(obj["rank"], "rank", lo=0, hi=32)
        if parsed.transform is not None and parsed.transform.input_rank != rank:
            raise fail(
                "rank",
                f"{rank} does not match the transform's input rank {parsed.transform.input_rank}",
            )
        if parsed.transform is None:
            parsed.schema.set_rank(rank, "rank")
    if parsed.transform is not None:
        _check_schema_rank(parsed)
    for key in _FLAGS:
        if key in obj:
            parsed.flags[key] = expect_bool(obj[key], key)
    for key in ("cache_pool", "metadata_cache_pool", "data_copy_concurrency"):
        if key in obj:
            parsed.resources[key] = _resource(obj[key], key)
    for key in ("recheck_cached_metadata", "recheck_cached_data"):
        if key in obj:
            setattr(parsed, key, _revalidation_bound(obj[key], key))
    for key in ("fill_missing_data_reads", "store_data_equal_to_fill_value"):
        if key in obj:
            setattr(parsed, key, expect_bool(obj[key], key))
    if "metadata" in obj:
        parsed.metadata = driver_module(driver).parse_metadata(obj["metadata"], "metadata")
    if driver == "zarr":
        if obj.get("field") is not None:
            raise UnsupportedError("field: structured data type fields are not supported by zarrox")
        if obj.get("metadata_key", ".zarray") != ".zarray":
            raise UnsupportedError("metadata_key: zarrox reads and writes .zarray only")
        if "key_encoding" in obj:
            parsed.key_encoding = expect_str(obj["key_encoding"], "key_encoding", (".", "/"))
        if "field" in obj or "metadata_key" in obj:
            parsed.extra_json.update({k: obj[k] for k in ("field", "metadata_key") if k in obj})
    _check_metadata_rank(parsed)
    return parsed


def _check_schema_rank(parsed: ParsedSpec) -> None:
    """The JSON ``schema`` describes the array (the transform's output space)."""
    assert parsed.transform is not None
    _check_transform_rank(parsed.schema.rank, parsed.transform.output_rank, "output", "schema.rank")


def _check_transform_rank(rank: int | None, transform_rank: int, space: str, where: str) -> None:
    """A rank constraint (None: none) on the transform's ``space`` (``"input"``: the view,
    ``"output"``: the array) is the transform's rank there."""
    if rank is not None and rank != transform_rank:
        raise fail(where, f"{rank} does not match the transform's {space} rank {transform_rank}")


def _to_array_space(schema: Schema, transform: IndexTransform, where: str) -> Schema:
    """Schema constraints given as ``open`` options, which describe the view (the transform's
    input space), in the array's coordinates (the output space). Only transforms that map
    each dimension to one array dimension with a unit stride (permutations, translations)
    can carry dimension-wise constraints."""
    if schema.domain is None and schema.chunk_layout is None and schema.dimension_units is None:
        return schema
    perm = transform.permutation()
    if perm is None:
        raise fail(
            where,
            "domain, chunk_layout and dimension_units options need a transform that maps each "
            "dimension to one array dimension with a unit stride",
        )
    inv = {j: k for k, j in enumerate(perm)}
    out = copy.deepcopy(schema)
    out.rank = None
    if schema.domain is not None:
        dims = []
        for j in range(len(perm)):
            dims.append(schema.domain.dims[inv[j]].shifted(transform.output[j].offset))
        out.domain = IndexDomain(dims)
    if schema.dimension_units is not None:
        out.dimension_units = [schema.dimension_units[inv[j]] for j in range(len(perm))]
    if schema.chunk_layout is not None:
        offsets = [transform.output[j].offset for j in range(len(perm))]
        out.chunk_layout = schema.chunk_layout.permuted(perm, offsets, where)
    return out


def _check_metadata_rank(parsed: ParsedSpec) -> None:
    meta_rank = parsed.metadata.rank if parsed.metadata is not None else None
    rank = parsed.schema.rank if parsed.transform is None else None
    if meta_rank is not None and rank is not None and meta_rank != rank:
        raise fail("metadata", f"has rank {meta_rank}, but the spec's rank is {rank}")
    if parsed.transform is not None and meta_rank is not None:
        if parsed.transform.output_rank != meta_rank:
            raise fail(
                "transform.output",
                f"has rank {parsed.transform.output_rank}, the metadata's rank is {meta_rank}",
            )


def apply_options(parsed: ParsedSpec, options: Mapping[str, Any]) -> ParsedSpec:
    """Merge ``open`` keyword options into a parsed spec (a copy). Schema options describe
    the view: with a transform they are mapped to the array's coordinates."""
    out = parsed.copy()
    given = Schema()
    for key, value in options.items():
        where = f"option {key}"
        if key not in OPEN_OPTIONS:
            raise SpecError(f"{where}: unknown; expected one of {list(OPEN_OPTIONS)}")
        if value is None:
            continue
        if key in ("read", "write"):
            setattr(out, key, expect_bool(value, where))
        elif key in _FLAGS:
            out.flags[key] = expect_bool(value, where)
        elif key == "context":
            out.context.update(expect_object(as_json(value), where))
        elif key == "transaction":
            if not isinstance(value, StagingTransaction):
                raise SpecError(
                    f"{where}: expected a zarrox.Transaction, got {type(value).__name__}"
                )
            out.transaction = value
        elif key == "batch":
            continue  # reads and writes run at once; there is nothing to batch
        elif key == "kvstore":
            out.kvstore = parse_kvstore(
                as_json(value) if not isinstance(value, str) else value, where
            ).joined("")
        elif key == "recheck_cached":
            bound = _revalidation_bound(value, where)
            out.recheck_cached_metadata = out.recheck_cached_data = bound
        elif key in ("recheck_cached_metadata", "recheck_cached_data"):
            setattr(out, key, _revalidation_bound(value, where))
        elif key == "rank":
            given.set_rank(expect_int(value, where, lo=0, hi=32), where)
        elif key == "dtype":
            given.set_dtype(dtype_name(value, where), where)
        elif key == "domain":
            given.set_domain(IndexDomain.from_json(as_json(value), where), "")
        elif key == "shape":
            shape = [expect_int(s, member(where, i), lo=0) for i, s in enumerate(value)]
            given.set_domain(IndexDomain.from_shape(shape), "")
        elif key == "chunk_layout":
            given.set_chunk_layout(ChunkLayout.from_json(as_json(value), where), where)
        elif key == "codec":
            given.set_codec(as_json(value), where)
        elif key == "fill_value":
            fill = as_json(np.asarray(value)[()] if isinstance(value, np.ndarray) else value)
            given.set_fill_value(fill, where)
        elif key == "dimension_units":
            given.set_dimension_units(parse_units(list(value), where), where)
        elif key == "schema":
            given.merge(Schema.from_json(value, where), where)
    if out.transform is not None:
        _check_transform_rank(given.rank, out.transform.input_rank, "input", "option rank")
        given = _to_array_space(given, out.transform, "options")
    out.schema.merge(given, "options")
    if out.transform is not None:
        _check_schema_rank(out)
    _check_metadata_rank(out)
    return out


class Spec:
    """A TensorStore spec for the ``zarr3`` or ``zarr`` (v2) driver.

    Made from the JSON (a dict), a spec URL (``"file:///data/a.zarr/|zarr3:"``), another
    spec (``tensorstore.Spec`` too), or returned by ``Array.spec()``; invalid members raise
    :class:`zarrox.errors.SpecError` naming them. ``zarrox.open(spec, **options)`` opens it.
    """

    def __init__(self, json: object) -> None:  # noqa: A002 - TensorStore's name
        if not isinstance(json, Spec | str | Mapping):
            to_json = getattr(json, "to_json", None)
            if not callable(to_json):
                raise SpecError(f"cannot make a spec from {type(json).__name__}")
            source = to_json()
        else:
            source = json
        self._parsed = parse_spec(source)

    @classmethod
    def _from_parsed(cls, parsed: ParsedSpec) -> Spec:
        spec = cls.__new__(cls)
        spec._parsed = parsed
        return spec

    def to_json(self) -> dict[str, Any]:
        return self._parsed.to_json()

    def update(self, **options: Any) -> Spec:
        """A new spec with ``open`` keyword options merged in (``shape=...``, ...)."""
        return Spec._from_parsed(apply_options(self._parsed, options))

    @property
    def driver(self) -> str:
        return self._parsed.driver

    @property
    def kvstore(self) -> dict[str, Any]:
        return self._parsed.kvstore.to_json()

    @property
    def dtype(self) -> np.dtype[Any] | None:
        name = self._parsed.schema.dtype
        if name is None:
            meta = self._parsed.metadata
            return None if meta is None else meta.dtype
        try:
            from zarrox.metadata.v3 import resolve_data_type

            return resolve_data_type(name, "").dtype
        except (ValueError, TypeError, NotImplementedError):
            return None

    @property
    def rank(self) -> int | None:
        if self._parsed.transform is not None:
            return self._parsed.transform.input_rank
        if self._parsed.schema.rank is not None:
            return self._parsed.schema.rank
        return self._parsed.metadata.rank if self._parsed.metadata is not None else None

    @property
    def transform(self) -> IndexTransform | None:
        return self._parsed.transform

    @property
    def domain(self) -> IndexDomain | None:
        if self._parsed.transform is not None:
            return self._parsed.transform.domain
        return self._parsed.schema.domain

    @property
    def schema(self) -> dict[str, Any]:
        return self._parsed.schema.to_json()

    @property
    def open_mode(self) -> dict[str, bool]:
        return dict(self._parsed.flags)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spec):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        try:
            text = json.dumps(self.to_json(), sort_keys=True)
        except UnsupportedError:
            text = f"{{driver: {self.driver!r}, kvstore: {self._parsed.kvstore.bound!r}}}"
        return f"Spec({text})"
