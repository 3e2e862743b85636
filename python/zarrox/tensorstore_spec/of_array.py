"""The TensorStore spec of a zarrox array (``Array.spec()``), and what a view keeps from the
spec it was opened with: built from the array's metadata, store and path alone, so that
array.py reaches it without importing the views (:mod:`view`, :mod:`driver`), which wrap
arrays."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.staging import StagingTransaction
from zarrox.storage import Store
from zarrox.tensorstore_spec import zarr2, zarr3
from zarrox.tensorstore_spec.index_space import IndexDomain, IndexTransform
from zarrox.tensorstore_spec.kvstore import KvStore, kvstore_of
from zarrox.tensorstore_spec.spec import ParsedSpec, Spec, driver_module

METADATA_KEYS = {"zarr3": "zarr.json", "zarr": ".zarray"}

StoredMetadata = zarr3.Zarr3Metadata | zarr2.Zarr2Metadata


class ArrayLike(Protocol):
    """What these functions read of a :class:`zarrox.Array`."""

    @property
    def metadata(self) -> Any: ...
    @property
    def store(self) -> Store: ...
    @property
    def path(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def dimension_names(self) -> Any: ...


@dataclass
class Settings:
    """What a view keeps from the spec it was opened with."""

    driver: str
    kvstore: KvStore
    recheck_cached_metadata: bool | str | float = "open"
    recheck_cached_data: bool | str | float = True
    threads: int | None = None
    fill_missing_data_reads: bool = True
    store_data_equal_to_fill_value: bool = False
    assume_metadata: bool = False
    resources: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    #: the transaction the view's reads and writes go through (``transaction=``,
    #: ``with_transaction``)
    transaction: StagingTransaction | None = None


def document_of(array: ArrayLike) -> tuple[str, dict[str, Any]]:
    """(driver, metadata document) of a zarrox array, as a spec's ``metadata``."""
    meta = array.metadata
    if isinstance(meta, ArrayMetadataV3):
        return "zarr3", zarr3.spec_metadata_json(meta.to_json())
    if isinstance(meta, ArrayMetadataV2):
        return "zarr", meta.to_json()
    raise MetadataError(
        f"array '{array.path}' is stored in a legacy format: it has no TensorStore spec "
        "(convert it with zarrox.convert)"
    )


def parse_stored(driver: str, doc: Mapping[str, Any], path: str) -> StoredMetadata:
    return driver_module(driver).stored_metadata(doc, path)  # type: ignore[no-any-return]


def base_domain(array: ArrayLike) -> IndexDomain:
    """The domain of a view of the whole array: its shape, upper bounds implicit (resizable),
    labelled with its dimension names when they are unique."""
    if isinstance(array.metadata, ArrayMetadataV2):
        return IndexDomain.from_shape(array.shape, implicit_upper=True)
    labels = IndexDomain.labels_of(array.dimension_names, array.ndim)
    return IndexDomain.from_shape(array.shape, implicit_upper=True, labels=labels)


def spec_of(
    settings: Settings,
    doc: Mapping[str, Any],
    stored: StoredMetadata,
    transform: IndexTransform,
    *,
    minimal_spec: bool = False,
) -> Spec:
    """A spec that reopens a view: driver, kvstore, data type, the stored metadata (left out
    with ``minimal_spec``) and the transform."""
    s = settings
    parsed = ParsedSpec(driver=s.driver, kvstore=s.kvstore)
    parsed.schema.set_dtype(driver_module(s.driver).ts_dtype_name(stored), "")
    if not minimal_spec:
        parsed.metadata = (
            zarr3.parse_metadata(zarr3.spec_metadata_json(doc))
            if s.driver == "zarr3"
            else zarr2.parse_metadata(doc)
        )
    parsed.transform = transform
    parsed.recheck_cached_metadata = s.recheck_cached_metadata
    parsed.recheck_cached_data = s.recheck_cached_data
    parsed.fill_missing_data_reads = s.fill_missing_data_reads
    parsed.store_data_equal_to_fill_value = s.store_data_equal_to_fill_value
    parsed.resources = dict(s.resources)
    parsed.context = dict(s.context)
    return Spec._from_parsed(parsed)


def array_spec(array: ArrayLike, *, minimal_spec: bool = False) -> Spec:
    """``Array.spec()``: a spec that reopens ``array`` (driver ``zarr3`` or ``zarr``)."""
    if getattr(array.metadata, "rectilinear", None) is not None:
        raise UnsupportedError(
            f"the array at '{array.path}' has a rectilinear chunk grid, which TensorStore's "
            "zarr3 driver does not describe"
        )
    driver, doc = document_of(array)
    settings = Settings(driver, kvstore_of(array.store, array.path))
    stored = parse_stored(driver, doc, array.path)
    transform = IndexTransform.identity(base_domain(array))
    return spec_of(settings, doc, stored, transform, minimal_spec=minimal_spec)


__all__ = [
    "METADATA_KEYS",
    "Settings",
    "StoredMetadata",
    "array_spec",
    "base_domain",
    "document_of",
    "parse_stored",
    "spec_of",
]
