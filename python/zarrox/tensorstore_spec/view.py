"""``ArrayView``: what ``zarrox.open(spec)`` returns, a TensorStore-like handle on a zarrox
array through an index transform.

Indexing a view (``view[10:20, ::2]``, ``view[d["x"].translate_to[0]]``,
``view.translate_to[...]``, ``view.label[...]``, ``view.T``) makes a new view and reads
nothing. ``view.read()`` (or ``numpy.asarray(view)``) reads the selected region only, and
``view.write(value)`` (or ``view[...] = value``) writes it only: the transform becomes one
basic (strided) selection of the array, or, for index arrays and diagonals, one coordinate
selection.

Indices are TensorStore's: coordinates of the view's domain, never wrapped (``-1`` is the
coordinate -1), out-of-bounds slices an error. Implicit bounds (the resizable upper bounds of
a zarr array) are taken from the array's current shape when reading or writing.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from zarrox import _core
from zarrox.array import Array
from zarrox.config import config as global_config
from zarrox.config import recheck_mode
from zarrox.errors import (
    ArrayNotFoundError,
    MissingChunkError,
    ReadOnlyError,
    SpecMismatchError,
)
from zarrox.staging import StagingTransaction
from zarrox.tensorstore_spec import index_space, store_io
from zarrox.tensorstore_spec.index_space import IndexDomain, IndexTransform
from zarrox.tensorstore_spec.kvstore import kvstore_of
from zarrox.tensorstore_spec.of_array import (
    Settings,
    StoredMetadata,
    base_domain,
    document_of,
    parse_stored,
    spec_of,
)
from zarrox.tensorstore_spec.spec import Spec, driver_module
from zarrox.values import as_values


def cache_pool_bytes(resources: dict[str, Any], context: dict[str, Any]) -> int | None:
    """The ``total_bytes_limit`` of a spec's ``cache_pool`` (given in place, by reference to
    the context, or the context's own; 0, TensorStore's default, when the pool gives none);
    ``None`` when the spec names no pool."""
    pool: Any = resources.get("cache_pool", "cache_pool")
    if isinstance(pool, str):
        pool = context.get(pool)
    if not isinstance(pool, dict):
        return None
    limit = pool.get("total_bytes_limit", 0)
    return int(limit) if isinstance(limit, int) and not isinstance(limit, bool) else 0


def cache_pool_of(settings: Settings) -> _core.CachePool | None:
    """The cache pool of an opened spec, as TensorStore makes one per open: a spec that
    names a ``cache_pool`` gets a pool of its own of that budget, its chunks checked as
    ``recheck_cached_data`` says; ``None`` (the process's cache, ``cache.bytes`` and
    ``cache.recheck``) when it names none."""
    limit = cache_pool_bytes(settings.resources, settings.context)
    if limit is None:
        return None
    mode, seconds = recheck_mode(settings.recheck_cached_data)
    return _core.CachePool(limit, mode, seconds)


class _State:
    """The array a view reads, shared by the views made from one open: re-read when the
    spec asks for metadata revalidation (``recheck_cached_metadata``)."""

    def __init__(self, array: Array, doc: dict[str, Any], settings: Settings) -> None:
        self.array = array
        self.doc = doc
        self.settings = settings
        self.checked = time.monotonic()

    def current(self) -> Array:
        bound = self.settings.recheck_cached_metadata
        due = bound is True or (
            isinstance(bound, float) and time.monotonic() - self.checked >= bound
        )
        if due and not self.settings.assume_metadata:
            self.reload()
        return self.array

    def reload(self) -> dict[str, Any]:
        a = self.array
        doc = store_io.read_document(a.store, a.path, self.settings.driver)
        if doc is None:
            raise ArrayNotFoundError(
                f"the metadata of the array at '{a.path}' in {a.store!r} no longer exists"
            )
        driver = self.settings.driver
        if store_io.compatibility_key(driver, doc) != store_io.compatibility_key(driver, self.doc):
            raise SpecMismatchError(
                f"the metadata of the array at '{a.path}' changed incompatibly since it was "
                "opened (only the shape and the attributes may change)"
            )
        if doc != self.doc:
            self.doc = doc
            self.array = store_io.make_array(
                a.store,
                a.path,
                self.settings.driver,
                doc,
                read_only=a.read_only,
                write_empty_chunks=a.write_empty_chunks,
            )
            if a._cache_pool is not None:
                self.array._use_cache_pool(a._cache_pool)
        self.checked = time.monotonic()
        return doc


class ArrayView(index_space.TransformOps):
    """A TensorStore-style handle: a zarrox array seen through an index transform."""

    def __init__(
        self,
        array: Array,
        transform: IndexTransform | None = None,
        *,
        settings: Settings | None = None,
        document: dict[str, Any] | None = None,
        _state: _State | None = None,
    ) -> None:
        if _state is None:
            driver, doc = document_of(array)
            settings = settings or Settings(driver, kvstore_of(array.store, array.path))
            _state = _State(array, document if document is not None else doc, settings)
        self._state = _state
        if transform is None:
            transform = IndexTransform.identity(base_domain(array))
        if transform.output_rank != array.ndim:
            raise SpecMismatchError(
                f"transform: has output rank {transform.output_rank}, the array has rank "
                f"{array.ndim}"
            )
        self._transform = transform

    def _with(self, transform: IndexTransform) -> ArrayView:
        return ArrayView(self._state.array, transform, _state=self._state)

    # ---- description --------------------------------------------------------------------

    @property
    def array(self) -> Array:
        """The zarrox array underneath (its own indexing is zarr-python's)."""
        return self._state.array

    @property
    def transform(self) -> IndexTransform:
        return self._transform

    @property
    def domain(self) -> IndexDomain:
        return self._transform.domain

    @property
    def rank(self) -> int:
        return self.domain.rank

    ndim = rank

    @property
    def shape(self) -> tuple[int, ...]:
        return self.domain.shape

    @property
    def origin(self) -> tuple[int, ...]:
        return self.domain.origin

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.array.dtype

    @property
    def fill_value(self) -> Any:
        return self.array.fill_value

    @property
    def readable(self) -> bool:
        return True

    @property
    def writable(self) -> bool:
        return not self.array.read_only

    @property
    def mode(self) -> str:
        return "rw" if self.writable else "r"

    @property
    def kvstore(self) -> dict[str, Any]:
        return self._state.settings.kvstore.to_json()

    def _stored(self) -> StoredMetadata:
        return parse_stored(self._state.settings.driver, self._state.doc, self.array.path)

    @property
    def schema(self) -> dict[str, Any]:
        """The schema (TensorStore's ``TensorStore.schema``), its domain and per-dimension
        members as this view sees them."""
        base = driver_module(self._state.settings.driver).schema_of(self._stored())
        base["domain"] = self.domain.to_json()
        base["rank"] = self.rank
        perm = self._transform.permutation()
        if perm is None:
            base.pop("chunk_layout", None)
            base.pop("dimension_units", None)
            return base
        layout = base["chunk_layout"]
        for key in ("read_chunk", "write_chunk"):
            layout[key]["shape"] = [layout[key]["shape"][j] for j in perm]
        inv = {j: i for i, j in enumerate(perm)}
        layout["inner_order"] = [inv[j] for j in layout["inner_order"]]
        layout["grid_origin"] = [0] * self.rank
        if "dimension_units" in base:
            base["dimension_units"] = [base["dimension_units"][j] for j in perm]
        return base

    @property
    def chunk_layout(self) -> dict[str, Any]:
        return self.schema.get("chunk_layout", {})

    @property
    def codec(self) -> dict[str, Any]:
        return self.schema["codec"]

    @property
    def dimension_units(self) -> list[Any] | None:
        units = self.schema.get("dimension_units")
        return None if units is None else list(units)

    def spec(self, *, minimal_spec: bool = False) -> Spec:
        """A spec that reopens this view: driver, kvstore, data type, the stored metadata
        (left out with ``minimal_spec``) and the transform. A memory store is kept (not
        written to the JSON), so that ``zarrox.open(view.spec())`` opens the same one."""
        return spec_of(
            self._state.settings,
            self._state.doc,
            self._stored(),
            self._transform,
            minimal_spec=minimal_spec,
        )

    def __repr__(self) -> str:
        return (
            f"<zarrox.ArrayView driver={self._state.settings.driver} domain={self.domain} "
            f"dtype={self.dtype} path={self.array.path!r}>"
        )

    # ---- index operations: new views --------------------------------------------------

    def __getitem__(self, selection: Any) -> ArrayView:
        return self._with(index_space.apply_numpy_index(self._transform, selection))

    def _subscript(self, op: str) -> index_space.Subscript:
        every = index_space.DimExpression((slice(None),))
        return index_space.Subscript(lambda values: self[getattr(every, op)[values]])

    @property
    def T(self) -> ArrayView:  # noqa: N802 - numpy's name
        return self._with(index_space.transpose(self._transform))

    def transpose(self, axes: Sequence[int] | None = None) -> ArrayView:
        return self._with(index_space.transpose(self._transform, axes))

    # ---- reading and writing ----------------------------------------------------------

    @property
    def transaction(self) -> StagingTransaction | None:
        """The transaction this view's reads and writes go through (None: the store's,
        or the one of a ``with zarrox.transaction()`` block)."""
        return self._state.settings.transaction

    def with_transaction(self, transaction: StagingTransaction | None) -> ArrayView:
        """This view with its reads and writes going through ``transaction`` (a
        :class:`zarrox.Transaction`; None: none), as TensorStore's ``with_transaction``."""
        if transaction is not None and not isinstance(transaction, StagingTransaction):
            raise TypeError(f"expected a zarrox.Transaction, got {type(transaction).__name__}")
        state = _State(
            self._state.array,
            self._state.doc,
            replace(self._state.settings, transaction=transaction),
        )
        return ArrayView(self._state.array, self._transform, _state=state)

    @contextlib.contextmanager
    def _threads(self) -> Iterator[None]:
        """Reads and writes run with the spec's threads (``data_copy_concurrency``), in the
        view's transaction where it has one."""
        threads = self._state.settings.threads
        tx = self._state.settings.transaction
        with contextlib.ExitStack() as scope:
            if threads is not None:
                scope.enter_context(global_config.set({"threading.max_workers": threads}))
            if tx is not None:
                scope.enter_context(tx.staging())
            yield

    def read(self) -> np.ndarray:
        """The values of the view's domain, as a numpy array of its shape."""
        array = self._state.current()
        plan = _Plan(array, self._transform)
        if not self._state.settings.fill_missing_data_reads:
            _check_chunks_stored(array, plan)
        with self._threads():
            return plan.read(array)

    def write(self, value: Any) -> None:
        """Write ``value`` (broadcast to the view's shape) into the view's domain."""
        array = self._state.current()
        if array.read_only:
            raise ReadOnlyError(f"array '{array.path}' is opened read-only")
        plan = _Plan(array, self._transform)
        with self._threads():
            plan.write(array, value)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self[selection].write(value)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.read()
        return out if dtype is None else out.astype(dtype, copy=False)

    # ---- resizing ---------------------------------------------------------------------

    def resize(
        self,
        inclusive_min: Sequence[int | None] | None = None,
        exclusive_max: Sequence[int | None] | None = None,
        *,
        resize_metadata_only: bool = False,
        resize_tied_bounds: bool = False,
        expand_only: bool = False,
        shrink_only: bool = False,
    ) -> ArrayView:
        """Change the bounds of the array, TensorStore's way: bounds are given in this view's
        coordinates (None: unchanged) and map through the transform (only unit strides);
        lower bounds cannot change (zarr arrays start at 0); only implicit (resizable) upper
        bounds can. Shrinking deletes the chunks wholly outside the new bounds (none with
        ``resize_metadata_only``); data of the chunks cut by the new bound stays. Returns the
        resized view."""
        s = self._state.settings
        if s.assume_metadata:
            raise ValueError(
                "resize is not supported for an array opened with assume_metadata (the stored "
                "metadata is neither read nor written)"
            )
        rank = self.rank
        lows = list(inclusive_min) if inclusive_min is not None else [None] * rank
        highs = list(exclusive_max) if exclusive_max is not None else [None] * rank
        if len(lows) != rank or len(highs) != rank:
            raise ValueError(f"inclusive_min and exclusive_max must have rank {rank}")
        doc = self._state.reload()
        array = self._state.array
        old_shape = list(array.shape)
        new_shape = self._resized_shape(lows, highs, old_shape, resize_tied_bounds)
        for j, (old, new) in enumerate(zip(old_shape, new_shape, strict=True)):
            if expand_only and new < old:
                raise ValueError(
                    f"resize would shrink output dimension {j} from [0, {old}) to "
                    f"[0, {new}) but expand_only was specified"
                )
            if shrink_only and new > old:
                raise ValueError(
                    f"resize would expand output dimension {j} from [0, {old}) to "
                    f"[0, {new}) but shrink_only was specified"
                )
        if array.read_only:
            raise ReadOnlyError(f"array '{array.path}' is opened read-only")
        if not resize_metadata_only and any(
            n < o for n, o in zip(new_shape, old_shape, strict=True)
        ):
            grid = array._grid_chunks
            limit = [-(-n // c) for n, c in zip(new_shape, grid, strict=True)]
            for key, coords in array._handle.stored_chunks():
                if any(c >= g for c, g in zip(coords, limit, strict=True)):
                    array.store.delete(key)
        new_doc = dict(doc)
        new_doc["shape"] = new_shape
        store_io.write_document(array.store, array.path, s.driver, new_doc)
        self._state.reload()
        dims = [
            d if hi is None else d.with_inclusive_max(int(hi) - 1)
            for d, hi in zip(self.domain.dims, highs, strict=True)
        ]
        return self._with(IndexTransform(IndexDomain(dims), self._transform.output))

    def _resized_shape(
        self,
        lows: Sequence[int | None],
        highs: Sequence[int | None],
        old_shape: list[int],
        resize_tied_bounds: bool,
    ) -> list[int]:
        """The array's shape once the view's upper bounds are ``highs`` (None: unchanged)."""
        new_shape = list(old_shape)
        for k, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
            d = self.domain.dims[k]
            if lo is not None:
                raise ValueError(
                    f"invalid resize request for input dimension {k}: cannot change the lower "
                    f"bound {d} (zarr arrays start at 0)"
                )
            if hi is None:
                continue
            if not d.implicit_upper:
                raise ValueError(
                    f"invalid resize request for input dimension {k}: cannot change the "
                    f"explicit upper bound of {d}"
                )
            outputs = [j for j, m in enumerate(self._transform.output) if m.input_dimension == k]
            if not outputs:
                raise ValueError(
                    f"invalid resize request for input dimension {k}: no array dimension "
                    "depends on it"
                )
            if len(outputs) > 1 and not resize_tied_bounds:
                raise ValueError(
                    f"input dimension {k} bounds output dimensions {outputs}: pass "
                    "resize_tied_bounds=True to resize them all"
                )
            for j in outputs:
                m = self._transform.output[j]
                if m.stride != 1:
                    raise ValueError(
                        f"output dimension {j} depends on resized input dimension {k} with "
                        f"non-unit stride of {m.stride}"
                    )
                new_shape[j] = max(0, m.offset + int(hi))
        return new_shape


# --------------------------------------------------------------------------------------------
# From a transform to array selections
# --------------------------------------------------------------------------------------------


class _Plan:
    """A transform over an array of the current shape: its domain with the implicit bounds
    resolved, and the selection of the array it stands for, which the core evaluates
    (``IndexTransform.selection``: dimension order, strides and index arrays included; the
    result has the domain's shape), made for the buffer read into or the value written as it
    lies."""

    def __init__(self, array: Array, transform: IndexTransform) -> None:
        self._array_shape = list(array.shape)
        self.transform = transform
        bounds = transform.bounds(self._array_shape)
        self.shape = tuple(max(0, hi - lo + 1) for lo, hi in bounds)
        self.empty = any(n == 0 for n in self.shape)

    def _selection(self, steps: list[int] | None = None) -> _core.Selection:
        """The core's selection, its buffer C-ordered over the domain or with ``steps``."""
        return self.transform.selection(self._array_shape, steps)

    def read(self, array: Array) -> np.ndarray:
        if self.empty:
            return np.empty(self.shape, dtype=array.dtype)
        data = array._read(self._selection())
        # C order whatever the array's (np.ascontiguousarray would make 0-d 1-d)
        return data if data.flags.c_contiguous else np.array(data, order="C")

    def write(self, array: Array, value: Any) -> None:
        if self.empty:
            return
        try:
            arr = np.broadcast_to(np.asarray(value), self.shape)
        except ValueError:
            raise ValueError(
                f"cannot broadcast a value of shape {np.shape(value)} to the view's shape "
                f"{self.shape}"
            ) from None
        if not array._var_len:
            # fixed-size values written from their memory as it lies (a transposed value
            # into a transposed view: nothing reordered)
            values = as_values(arr, array.dtype)
            order = _memory_order(values)
            if order is not None:
                steps = [
                    s // values.itemsize if n > 1 else 0
                    for s, n in zip(values.strides, values.shape, strict=True)
                ]
                memory = values.transpose(order).reshape(-1).view(np.uint8)
                array._write_memory(self._selection(steps), memory)
                return
        array._write(self._selection(), arr)


def _memory_order(a: np.ndarray) -> list[int] | None:
    """The order of ``a``'s dimensions (outermost first) in which its memory is one
    C-ordered block, or None (a broadcast, reversed or gapped view)."""
    if any(s <= 0 for s, n in zip(a.strides, a.shape, strict=True) if n > 1):
        return None
    order = sorted(range(a.ndim), key=lambda k: a.strides[k], reverse=True)
    return order if a.transpose(order).flags.c_contiguous else None


def _check_chunks_stored(array: Array, plan: _Plan) -> None:
    """Raise MissingChunkError when the region read touches a chunk (a shard, when sharded)
    that is not stored."""
    if plan.empty:
        return
    ranges = [
        range(lo // grid, hi // grid + 1)
        for (lo, hi), grid in zip(
            plan.transform.output_ranges(plan._array_shape), array._grid_chunks, strict=True
        )
    ]
    meta = array.metadata
    for coords in np.ndindex(*[len(r) for r in ranges]):
        chunk = [r[i] for r, i in zip(ranges, coords, strict=True)]
        key = meta.encode_chunk_key(chunk)  # type: ignore[union-attr]
        full = f"{array.path}/{key}" if array.path else key
        if not array.store.exists(full):
            raise MissingChunkError(
                f"chunk {key!r} of array '{array.path}' is not stored and the array was opened "
                'with "fill_missing_data_reads": false'
            )


__all__ = ["ArrayView", "Settings"]
