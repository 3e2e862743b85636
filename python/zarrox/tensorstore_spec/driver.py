"""Opening a spec: the open modes of TensorStore's chunked drivers (``open``, ``create``,
``delete_existing``, ``assume_metadata``, ``assume_cached_metadata``), the context resources
zarrox maps onto its own settings, and the spec of an opened array.

Context resources and caching options, and what they become in zarrox:

- ``data_copy_concurrency`` (``{"limit": N}``): each read and write of the view runs with
  ``threading.max_workers`` = N (zarrox's decode and copy threads); ``"shared"`` (the
  default) leaves the configured thread count.
- ``cache_pool`` (``{"total_bytes_limit": N}``): as TensorStore makes one per open, the
  opened array (and every view of it) reads and writes through a data cache of its own of N
  bytes (0, TensorStore's default: nothing cached); a spec that names no pool uses the
  process's cache (``cache.bytes``, ``cache.recheck``). ``metadata_cache_pool``: accepted,
  no effect.
- ``recheck_cached_data``: how the pool's chunks are checked, as TensorStore does: ``true``
  before every use (a stat, a conditional request or a ``HEAD``), ``"open"`` when cached
  before the array was opened, ``false`` never, a number of seconds when older.
- ``recheck_cached_metadata``: ``"open"`` (default) and ``false`` read the metadata when
  opening; ``true`` re-reads it before every read and write; a number of seconds re-reads it
  when it is older. A changed shape is picked up; any other change is an error.
- ``file_io_concurrency``, ``file_io_sync``, request concurrency and retry resources:
  accepted, no effect (zarrox's stores choose their own I/O concurrency; local writes are
  atomic).
- ``store_data_equal_to_fill_value``: zarrox's ``write_empty_chunks``.
- ``fill_missing_data_reads: false``: reads fail with ``MissingChunkError`` when a chunk (a
  shard, for sharded arrays) they touch is not stored.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from zarrox.errors import ArrayNotFoundError, ContainsArrayError
from zarrox.tensorstore_spec import store_io, zarr2, zarr3
from zarrox.tensorstore_spec._json import expect_int, expect_object, fail
from zarrox.tensorstore_spec.index_space import IndexTransform
from zarrox.tensorstore_spec.kvstore import open_kvstore
from zarrox.tensorstore_spec.of_array import Settings, base_domain, parse_stored
from zarrox.tensorstore_spec.spec import ParsedSpec, apply_options, driver_module, parse_spec
from zarrox.tensorstore_spec.view import ArrayView, cache_pool_of

if TYPE_CHECKING:
    from zarrox.storage import Store


def _resolve_resource(parsed: ParsedSpec, key: str) -> dict[str, Any]:
    """The resource named by member ``key`` (inline, or a reference into ``context``)."""
    value = parsed.resources.get(key, key)
    seen = set()
    while isinstance(value, str):
        if value in seen:
            raise fail(key, f"context resource reference {value!r} is circular")
        seen.add(value)
        if value not in parsed.context:
            return {}
        value = parsed.context[value]
    if value is None:
        return {}
    return expect_object(value, key)


def _threads(parsed: ParsedSpec) -> int | None:
    resource = _resolve_resource(parsed, "data_copy_concurrency")
    limit = resource.get("limit", "shared")
    if limit == "shared":
        return None
    return expect_int(limit, "data_copy_concurrency.limit", lo=1)


def _open_mode(parsed: ParsedSpec) -> dict[str, bool]:
    f = parsed.flags
    create = f.get("create", False)
    open_ = f.get("open", not create)
    mode = {
        "open": open_,
        "create": create,
        "delete_existing": f.get("delete_existing", False),
        "assume_metadata": f.get("assume_metadata", False),
        "assume_cached_metadata": f.get("assume_cached_metadata", False),
    }
    if not (mode["open"] or mode["create"]):
        raise fail("open", "at least one of open and create must be true")
    if mode["delete_existing"]:
        if not mode["create"]:
            raise fail("delete_existing", "requires create to be true")
        if mode["open"]:
            raise fail("delete_existing", "cannot be combined with open")
    for key in ("assume_metadata", "assume_cached_metadata"):
        if mode[key] and not mode["open"]:
            raise fail(key, "requires open to be true")
    return mode


def _document(parsed: ParsedSpec, mode: dict[str, bool], store: Store, path: str) -> dict[str, Any]:
    """The array's metadata document under the open mode: the stored one (checked against
    the spec's constraints), or a new one (written unless assumed)."""
    driver = parsed.driver
    module = driver_module(driver)
    constraints = parsed.metadata or module.parse_metadata({})
    schema = parsed.schema

    def new_document() -> dict[str, Any]:
        if isinstance(constraints, zarr3.Zarr3Metadata):
            return zarr3.new_metadata(constraints, schema)
        return zarr2.new_metadata(constraints, schema, parsed.key_encoding)

    if mode["assume_metadata"] or mode["assume_cached_metadata"]:
        return new_document()
    if mode["delete_existing"]:
        doc = new_document()
        store.delete_prefix(f"{path}/" if path else "")
        store_io.write_document(store, path, driver, doc)
        return doc
    stored = store_io.read_document(store, path, driver)
    if stored is not None:
        if not mode["open"]:
            raise ContainsArrayError(
                f"cannot create the array: {store_io.metadata_key(path, driver)} already "
                f"exists in {store!r}"
            )
        meta = parse_stored(driver, stored, path)
        module.validate_metadata(meta, constraints)
        module.validate_schema(meta, schema)
        return stored
    if mode["create"]:
        doc = new_document()
        store_io.write_document(store, path, driver, doc)
        return doc
    raise ArrayNotFoundError(
        f"metadata at {store_io.metadata_key(path, driver)!r} in {store!r} does not exist"
    )


def open_spec(spec: object, **options: Any) -> ArrayView:
    """``zarrox.open(spec, **options)`` for a TensorStore spec."""
    parsed = apply_options(parse_spec(spec), options)
    mode = _open_mode(parsed)
    driver = parsed.driver
    store, path = open_kvstore(parsed.kvstore)
    read_only = parsed.write is False or (parsed.read is True and parsed.write is None)
    doc = _document(parsed, mode, store, path)
    array = store_io.make_array(
        store,
        path,
        driver,
        doc,
        read_only=read_only,
        write_empty_chunks=parsed.store_data_equal_to_fill_value,
    )
    kvstore = copy.copy(parsed.kvstore)
    kvstore.bound, kvstore.bound_path = store, path  # spec() reopens this very store
    settings = Settings(
        driver=driver,
        kvstore=kvstore,
        recheck_cached_metadata=parsed.recheck_cached_metadata,
        recheck_cached_data=parsed.recheck_cached_data,
        threads=_threads(parsed),
        fill_missing_data_reads=parsed.fill_missing_data_reads,
        store_data_equal_to_fill_value=parsed.store_data_equal_to_fill_value,
        assume_metadata=mode["assume_metadata"],
        resources=dict(parsed.resources),
        context=dict(parsed.context),
        transaction=parsed.transaction,
    )
    pool = cache_pool_of(settings)
    if pool is not None:
        array._use_cache_pool(pool)
    transform = parsed.transform
    if transform is not None and transform.output_rank != array.ndim:
        raise fail(
            "transform.output",
            f"has rank {transform.output_rank}, the array has rank {array.ndim}",
        )
    return ArrayView(
        array,
        transform or IndexTransform.identity(base_domain(array)),
        settings=settings,
        document=doc,
    )
