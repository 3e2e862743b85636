"""The user-facing Array, with zarr-python's names and semantics."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from zarrox import _core
from zarrox.array_info import ArrayInfo
from zarrox.async_node import AsyncNode, run, run_metadata
from zarrox.attributes import Attributes
from zarrox.codecs import Codec, codec_value, numcodecs_value
from zarrox.config import config as global_config
from zarrox.errors import (
    MetadataError,
    ReadOnlyError,
    TransactionError,
    UnknownCodecError,
    UnsupportedError,
    in_node,
    names_node,
    naming_node,
)
from zarrox.indexing import (
    Selection,
    basic_selection,
    block_selection,
    coordinate_selection,
    is_fancy,
    is_mask,
    is_orthogonal_basic,
    is_pure_fancy,
    mask_selection,
    orthogonal_selection,
)
from zarrox.metadata import ArrayMetadataV3, fill_value_bytes
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.metadata.codecs import CODEC_KINDS, NUMCODECS_KINDS
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.nodes import create as creation
from zarrox.nodes.create import array_to_open
from zarrox.nodes.node import (
    NODE_KEYS,
    V2_ATTRS_KEY,
    ArrayMetadata,
    Node,
    conditional_writes,
    is_legacy,
    join,
    read_only_message,
    store_token,
    update_node,
    write_node,
)
from zarrox.nodes.plans import ArrayPlan
from zarrox.pickle_codec import PickledChunks
from zarrox.staging import current_transaction
from zarrox.storage import Store
from zarrox.storage.replay import moving_data
from zarrox.transfer import copy_values
from zarrox.values import (
    as_values,
    fixed_payload,
    fortran_memory,
    fortran_ordered,
    one_value,
    var_array,
    var_item,
    var_items,
)

if TYPE_CHECKING:
    from zarrox.tensorstore_spec.spec import Spec

#: the array an indexing view indexes (:class:`Array` or :class:`AsyncArray`)
_A = TypeVar("_A")


@dataclass(frozen=True)
class ArrayConfig:
    """The runtime configuration of an array (zarr-python's ``ArrayConfig``)."""

    order: str
    write_empty_chunks: bool

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "write_empty_chunks": self.write_empty_chunks}


def _config_dict(config: Any) -> dict[str, Any]:
    """An array configuration as a dict: from a dict, or an ArrayConfig (zarrox's or
    zarr-python's)."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    keys = ("order", "write_empty_chunks")
    if all(hasattr(config, k) for k in keys):
        return {k: getattr(config, k) for k in keys}
    raise TypeError(f"config must be a dict or an ArrayConfig, got {config!r}")


class _IO:
    """The chunk I/O a step of a read or write asks for (see :func:`_run_io`)."""

    READ = "read"  # into a buffer: (READ, selection, uint8 view, Fortran order)
    READ_VAR = "read_var"  # variable-length values, sent back: (READ_VAR, selection, None, False)
    WRITE = "write"  # (WRITE, selection, uint8 view / one element / list, Fortran order)


#: one chunk I/O of a read or write: (kind, selection, buffer or value, Fortran order)
_IOStep = tuple[str, Any, Any, bool]
#: a read's steps: yields its chunk I/O, is sent what each gave, returns the result
_Steps = Generator[_IOStep, Any, Any]


def _do_io(array: Array, step: _IOStep) -> Any:
    """Run one chunk I/O step of ``array`` with the blocking core calls (inside a
    transaction: writes staged, reads seeing them, see :mod:`zarrox.transactions`)."""
    tx = current_transaction()
    if tx is not None:
        if step[0] == _IO.WRITE:
            tx.stage(array, step)
            return None
        return tx.read(array, step, lambda: _do_store_io(array, step))
    return _do_store_io(array, step)


def _do_store_io(array: Array, step: _IOStep) -> Any:
    """:func:`_do_io` on the store itself."""
    moving_data()
    kind, dims, arg, fortran = step
    if kind == _IO.READ:
        array._io_read(dims, arg, fortran)
        return None
    if kind == _IO.READ_VAR:
        return array._io_read_var(dims)
    array._io_write(dims, arg, fortran)
    return None


def _run_io(array: Array, steps: _Steps) -> Any:
    """The result of a read's steps, each chunk I/O run with the blocking core calls
    (:class:`AsyncArray` awaits the same steps, :func:`_await_io`)."""
    try:
        step = next(steps)
        while True:
            step = steps.send(_do_io(array, step))
    except StopIteration as done:
        return done.value


async def _await_io(array: Array, step: _IOStep) -> Any:
    """Await one chunk I/O step of ``array`` (a store Rust reads): an awaitable that the
    engine completes, no Python thread (see ``ArrayHandle.read_async``)."""
    tx = current_transaction()
    if tx is not None:
        if step[0] == _IO.WRITE:
            tx.stage(array, step)
            return None
        plan = tx.read_plan(array, step)
        if plan is not None:
            return tx.finish_read(plan, step, await _await_store_io(array, step))
    return await _await_store_io(array, step)


async def _await_store_io(array: Array, step: _IOStep) -> Any:
    """:func:`_await_io` on the store itself."""
    kind, dims, arg, fortran = step
    handle = array._handle
    if kind == _IO.READ:
        await handle.read_async(dims, arg, "F" if fortran else "C")
        return None
    if kind == _IO.READ_VAR:
        values, _ = await handle.read_async(dims)
        return values
    await handle.write_async(dims, arg, "F" if fortran else "C")
    return None


class _Indexer(Generic[_A]):
    """An array's indexing view (``array.oindex``, ``.vindex``, ``.blocks``; their awaitable
    forms): the array it indexes."""

    def __init__(self, array: _A) -> None:
        self._array = array


class OIndex(_Indexer["Array"]):
    """``array.oindex[...]``: orthogonal (outer) indexing."""

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class VIndex(_Indexer["Array"]):
    """``array.vindex[...]``: coordinate (points) and mask selection, like numpy's
    advanced indexing."""

    def __getitem__(self, selection: Any) -> Any:
        if is_mask(selection, self._array.shape):
            return self._array.get_mask_selection(selection)
        return self._array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        if is_mask(selection, self._array.shape):
            self._array.set_mask_selection(selection, value)
        else:
            self._array.set_coordinate_selection(selection, value)


class BlockIndex(_Indexer["Array"]):
    """``array.blocks[...]``: whole chunks by block index."""

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


class Array(Node):
    """A Zarr array in a store. Reads and writes go through the Rust core, one
    call per selection, in parallel over chunks. Arrays of the legacy formats (v1, the
    draft v3 layout) are always read-only."""

    _metadata: ArrayMetadata
    #: the data cache pool of its own (a TensorStore spec's ``cache_pool``); ``None``: the
    #: process's (``cache.bytes``)
    _cache_pool: _core.CachePool | None = None

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadata,
        *,
        read_only: bool = False,
        config: dict[str, Any] | None = None,
    ) -> None:
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only or is_legacy(metadata) or store.read_only
        # Like zarr-python, the array keeps the configuration in force when it was opened.
        given = _config_dict(config)
        unknown = set(given) - {"order", "write_empty_chunks"}
        if unknown:
            raise ValueError(f"unknown array config keys {sorted(unknown)}")
        self._order = str(given.get("order", global_config["array.order"]))
        if isinstance(metadata, ArrayMetadataV2):
            # zarr-python 3.1 reads a v2 array in the order of its metadata, whatever
            # the configuration says, and reports that order.
            self._order = metadata.order
        if self._order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {self._order!r}")
        self._write_empty_chunks = bool(
            given.get("write_empty_chunks", global_config["array.write_empty_chunks"])
        )
        self._open_handle()

    def _open_handle(self) -> None:
        try:
            self._make_handle()
        except (MetadataError, UnsupportedError) as e:
            # The Rust core names the path chunks are under (another one in the draft v3
            # layout); the node is what the user opened.
            if names_node(e, self._path):
                raise
            raise in_node(e, "array", self._path) from None

    def _make_handle(self) -> None:
        m = self._metadata
        core = m.to_core_json()
        for codec in core["codecs"]:
            if codec["name"] not in CODEC_KINDS and codec["name"] not in NUMCODECS_KINDS:
                error = UnknownCodecError(
                    f"array '{self._path}': unknown codec {codec['name']!r} (zarrox supports "
                    f"{sorted(CODEC_KINDS)} and {sorted(NUMCODECS_KINDS)})"
                )
                raise naming_node(error, self._path)
        #: elements of variable length (strings, bytes) are read into and written from lists
        self._var_len = core["data_type"] in ("string", "bytes")
        self._utf8 = core["data_type"] == "string"
        fill = (
            fill_value_bytes(m.fill_value, m.dtype)
            if isinstance(m, ArrayMetadataV3)
            else m.fill_bytes()
        )
        self._core = core
        #: which stored array this is to a transaction (zarrox.transactions), when asked
        self._transaction_key: tuple[Any, ...] | None = None
        #: one element of the fill value, as the core takes it
        self._fill_bytes = fill
        #: `a[...]` of integers and slices goes through one Rust call (`_read_plain`)
        self._plain_reads = not self._var_len and self._order == "C" and len(m.shape) > 0
        #: `a[...] = values` of such a selection and an array of exactly its dtype and
        #: shape goes through one Rust call too
        self._plain_writes = self._plain_reads and not self._read_only
        #: the numpy data type of those reads and writes (:attr:`dtype`, computed once)
        self._plain_dtype = self.dtype
        #: where the engine's chunk requests go: the store, or for chunks of the pickle
        #: codec, which only Python can run, the store through that codec
        stage = m.pickle_stage() if isinstance(m, ArrayMetadataV2) else None
        self._chunk_io: Any = (
            self._store
            if stage is None
            else PickledChunks(self._store, stage, self._store.location(self._path))
        )
        # the draft v3 layout keeps chunks apart from the node's path
        chunk_path = getattr(m, "data_path", self._path)
        try:
            self._handle = _core.ArrayHandle(
                self._chunk_io.handle,
                chunk_path,
                json.dumps(core),
                fill,
                self.write_empty_chunks,
                cache=self._cache_pool,
            )
        except (MetadataError, UnsupportedError) as e:
            # the core's errors name the array by the path it was given (``array 'a/b': ``)
            naming_node(e, chunk_path.strip("/"))
            raise

    def _use_cache_pool(self, pool: _core.CachePool | None) -> None:
        """Read and write through ``pool`` from now on (``None``: the process's cache)."""
        self._cache_pool = pool
        self._open_handle()

    # -- chunk I/O: Rust's own stores, or a store served from Python ---------
    def _fortran_io(self, dims: Any) -> bool:
        """Whether the selection ``dims`` can be read into (written from) a
        Fortran-ordered buffer with no chunk transposed: the chunks are stored in Fortran
        order (a v2 ``order: "F"`` array) and the selection is one per dimension."""
        return bool(self._handle.fortran_chunks and dims.is_orthogonal)

    def _io_read(self, dims: Any, buf: np.ndarray, fortran: bool = False) -> None:
        """Read the selection ``dims`` into ``buf`` (a uint8 view of the result; with
        ``fortran``, of the Fortran-ordered result, see :meth:`_fortran_io`)."""
        got = self._handle.read(dims, buf, "F" if fortran else "C")
        if isinstance(got, _core.ReadSession):
            self._chunk_io.serve(got)

    def _io_read_var(self, dims: Any) -> list[Any]:
        """The variable-length elements of the selection ``dims``."""
        got = self._handle.read(dims)
        if isinstance(got, _core.ReadSession):
            self._chunk_io.serve(got)
            return got.values()
        assert isinstance(got, tuple)
        return got[0]

    def _io_write(self, dims: Any, value: Any, fortran: bool = False) -> None:
        """Write ``value`` to the selection ``dims``: a uint8 view of the values (with
        ``fortran``, of the Fortran-ordered values, see :meth:`_fortran_io`), one
        element's bytes or str (broadcast), or a list of variable-length values."""
        batch = self._handle.write(dims, value, "F" if fortran else "C")
        if batch is not None:
            store = self._chunk_io
            old = store.fetch(batch.keys, batch.needs)
            store.store_values(batch.keys, batch.encode(old))

    def _stored_chunks(self) -> list[tuple[str, list[int]]]:
        """(key, grid coordinates) of every stored chunk (or shard)."""
        if self._handle.in_rust:
            return self._handle.stored_chunks()  # type: ignore[no-any-return]
        data_path = getattr(self._metadata, "data_path", self._path)
        prefix = f"{data_path}/" if data_path else ""
        return self._handle.chunk_coords(self._store.list_prefix(prefix))  # type: ignore[no-any-return]

    # -- pickling: the store (see zarrox.storage), path, metadata and settings --
    def __reduce__(self) -> tuple[Any, ...]:
        config = {"order": self._order, "write_empty_chunks": self._write_empty_chunks}
        return (_restore_array, (self._store, self._path, self._metadata, self._read_only, config))

    @classmethod
    def open(cls, store: Any, **kwargs: Any) -> Array:
        """The array at ``store`` (zarr-python's ``Array.open``; ``kwargs`` as
        :func:`zarrox.open_array` takes them)."""
        kwargs.setdefault("mode", "r+")
        return cls._make(array_to_open(store, **kwargs))

    @classmethod
    def create(cls, store: Any, **kwargs: Any) -> Array:
        """A new array in ``store`` (zarr-python's ``Array.create``: :func:`create_array`)."""
        return cls._make(creation.create_array(store, **kwargs))

    @classmethod
    def _make(cls, plan: ArrayPlan) -> Array:
        """The array ``plan`` describes (:mod:`zarrox.nodes.create`): made, then its new
        metadata stored and its values written."""
        array = cls(
            plan.store, plan.path, plan.metadata, read_only=plan.read_only, config=plan.config
        )
        if plan.new:
            array._save_metadata()
        if plan.values is not None:
            if plan.copy_in_blocks:
                copy_values(plan.values, array)
            else:
                array[...] = plan.values
        return array

    # -- description -------------------------------------------------------
    @property
    def metadata(self) -> ArrayMetadata:
        return self._metadata

    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    def _sharding_config(self) -> dict[str, Any] | None:
        codecs = (
            self._metadata.codecs
            if isinstance(self._metadata, ArrayMetadataV3)
            else self._core["codecs"]  # e.g. the draft v3 sharding storage transformer
        )
        if len(codecs) == 1 and codecs[0]["name"] == "sharding_indexed":
            return dict(codecs[0].get("configuration") or {})
        return None

    @property
    def _rectilinear(self) -> RectilinearGrid | None:
        """The stored chunk (or shard) grid when it is rectilinear."""
        return getattr(self._metadata, "rectilinear", None)

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape: inner chunks when the array is sharded. Undefined (as in
        zarr-python 3.4) for an array with a rectilinear chunk grid that is not sharded: see
        :attr:`read_chunk_sizes`."""
        sharding = self._sharding_config()
        if sharding is not None:
            return tuple(int(c) for c in sharding["chunk_shape"])
        if self._rectilinear is not None:
            raise NotImplementedError(
                "The `chunks` attribute is only defined for arrays using regular chunk grids. "
                "This array has a rectilinear chunk grid. Use `read_chunk_sizes` for general "
                "access."
            )
        return self._metadata.chunk_shape

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the data sizes of the chunks reads use (inner chunks when sharded),
        clipped at the array's extent (dask's ``chunks`` convention)."""
        sharding = self._sharding_config()
        if sharding is not None:
            return _regular_sizes(self.shape, tuple(int(c) for c in sharding["chunk_shape"]))
        return self.write_chunk_sizes

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the data sizes of the stored chunks (shards when sharded),
        clipped at the array's extent."""
        grid = self._rectilinear
        if grid is None:
            return _regular_sizes(self.shape, self._metadata.chunk_shape)
        return tuple(grid.data_sizes(d, n) for d, n in enumerate(self.shape))

    def _codec_chain(self) -> list[dict[str, Any]]:
        """The v3 chain of one chunk (the inner chunks' chain when sharded)."""
        sharding = self._sharding_config()
        if sharding is not None:
            return list(sharding.get("codecs") or [])
        if isinstance(self._metadata, ArrayMetadataV3):
            return list(self._metadata.codecs)
        return list(self._core["codecs"])

    def _codecs_of_kind(self, kind: str) -> list[dict[str, Any]]:
        kinds = {**CODEC_KINDS, **NUMCODECS_KINDS}
        return [c for c in self._codec_chain() if kinds.get(c["name"]) == kind]

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array->array codecs (v2: the numcodecs filters, as numcodecs codec objects
        when numcodecs is installed), as zarr-python reports them: of the inner chunks when
        sharded."""
        if isinstance(self._metadata, ArrayMetadataV2):
            return tuple(numcodecs_value(f) for f in self._metadata.filters or [])
        return tuple(codec_value(c) for c in self._codecs_of_kind("array->array"))

    @property
    def serializer(self) -> Codec | None:
        """The array->bytes codec (None for a v2 array)."""
        if isinstance(self._metadata, ArrayMetadataV2):
            return None
        found = self._codecs_of_kind("array->bytes")
        return codec_value(found[0]) if found else None

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes->bytes codecs (v2: the compressor, when there is one)."""
        if isinstance(self._metadata, ArrayMetadataV2):
            c = self._metadata.compressor
            return () if c is None else (numcodecs_value(c),)
        return tuple(codec_value(c) for c in self._codecs_of_kind("bytes->bytes"))

    @property
    def compressor(self) -> Any:
        """A v2 array's compressor (zarr-python's deprecated name; v3 arrays have
        ``compressors``)."""
        if not isinstance(self._metadata, ArrayMetadataV2):
            raise TypeError("`compressor` is not available for Zarr format 3 arrays.")
        c = self._metadata.compressor
        return None if c is None else numcodecs_value(c)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape, or None when the array is not sharded."""
        if self._sharding_config() is None:
            return None
        if self._rectilinear is not None:
            raise NotImplementedError(
                "The `shards` attribute is only defined for arrays using regular chunk grids. "
                "This array has a rectilinear chunk grid. Use `write_chunk_sizes` for general "
                "access."
            )
        return self._metadata.chunk_shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The data type of values read. v2 (and v1, draft v3) numbers are returned in
        native byte order (the core decodes to native order); other types keep theirs."""
        dt = self._metadata.dtype
        if not isinstance(self._metadata, ArrayMetadataV3) and dt.kind in "biufc":
            return dt.newbyteorder("=")
        return dt

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def fill_value(self) -> Any:
        return self._metadata.fill_value

    @property
    def order(self) -> str:
        return self._order

    @property
    def write_empty_chunks(self) -> bool:
        return self._write_empty_chunks

    @property
    def config(self) -> ArrayConfig:
        """The runtime configuration the array was opened with (zarr-python's
        ``ArrayConfig``: ``order``, ``write_empty_chunks``)."""
        return ArrayConfig(order=self._order, write_empty_chunks=self._write_empty_chunks)

    def with_config(self, config: Any) -> Array:
        """The same array with ``config`` (a dict or ArrayConfig) on top of its own."""
        merged = {**self.config.to_dict(), **_config_dict(config)}
        return Array(
            self._store, self._path, self._metadata, read_only=self._read_only, config=merged
        )

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return getattr(self._metadata, "dimension_names", None)

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def _attributes(self) -> dict[str, Any]:
        return self._metadata.attributes

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Number of chunks (inner chunks, when sharded) along each dimension."""
        if self._rectilinear is not None and self._sharding_config() is None:
            return self._stored_grid_shape
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks, strict=True))

    @property
    def _stored_grid_shape(self) -> tuple[int, ...]:
        """Number of stored objects (shards when sharded, else chunks) along each dimension."""
        grid = self._rectilinear
        if grid is not None:
            return grid.grid_shape(self.shape)
        return tuple(-(-s // c) for s, c in zip(self.shape, self._grid_chunks, strict=True))

    def _chunks_in_object(self, coords: tuple[int, ...]) -> int:
        """Chunks in the stored object at ``coords``: chunks in that shard, or 1."""
        sharding = self._sharding_config()
        if sharding is None:
            return 1
        grid = self._rectilinear
        inner = [int(c) for c in sharding["chunk_shape"]]
        if grid is None:
            return self._chunks_per_object
        return math.prod(
            grid.chunk(d, c)[1] // n for d, (c, n) in enumerate(zip(coords, inner, strict=True))
        )

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def _chunks_per_object(self) -> int:
        """Chunks in one stored object: chunks per shard, or 1."""
        return math.prod(g // c for g, c in zip(self._grid_chunks, self.chunks, strict=True))

    @property
    def oindex(self) -> OIndex:
        return OIndex(self)

    @property
    def vindex(self) -> VIndex:
        return VIndex(self)

    @property
    def blocks(self) -> BlockIndex:
        return BlockIndex(self)

    @property
    def _block_grid(self) -> tuple[int, ...] | RectilinearGrid:
        """The grid ``blocks`` index: the stored grid (shards when sharded)."""
        return self._rectilinear or self._grid_chunks

    @property
    def _grid_chunks(self) -> tuple[int, ...]:
        """The chunk grid's shape of one stored object (the shard shape when sharded)."""
        return self._metadata.chunk_shape

    @property
    def nchunks_initialized(self) -> int:
        """Number of stored chunks; for a sharded array, the chunks of the stored
        shards (as zarr-python counts them)."""
        if self._rectilinear is not None:
            return sum(self._chunks_in_object(tuple(c)) for _, c in self._stored_chunks())
        return len(self._stored_chunks()) * self._chunks_per_object

    @property
    def nshards(self) -> int:
        """Number of objects of the grid (shards when sharded, else chunks)."""
        return math.prod(self._stored_grid_shape)

    @property
    def nshards_initialized(self) -> int:
        """Number of stored objects (shards when sharded, else chunks)."""
        return len(self._stored_chunks())

    def nbytes_stored(self) -> int:
        """Bytes the array's chunks (and metadata) take in the store (a method, as in
        zarr-python)."""
        total = 0
        for key, _ in self._stored_chunks():
            value = self._store.get(key)
            total += len(value) if value is not None else 0
        for key in (*NODE_KEYS, V2_ATTRS_KEY):
            meta = self._store.get(join(self._path, key))
            total += len(meta) if meta is not None else 0
        return total

    @property
    def info(self) -> ArrayInfo:
        """A readable summary (type, dtype, shape, chunks, shards, codecs, stored
        bytes, compression ratio)."""
        return ArrayInfo(self)

    def spec(self, *, minimal_spec: bool = False) -> Spec:
        """The TensorStore spec (driver ``zarr3`` or ``zarr``) that reopens this array with
        ``zarrox.open`` (or TensorStore: ``spec.to_json()``)."""
        from zarrox.tensorstore_spec.of_array import array_spec

        return array_spec(self, minimal_spec=minimal_spec)

    def info_complete(self) -> ArrayInfo:
        """:attr:`info` (zarr-python's name for the summary that counts stored bytes)."""
        return ArrayInfo(self)

    @property
    def async_array(self) -> AsyncArray:
        """This array with awaitable methods (:class:`zarrox.AsyncArray`)."""
        return AsyncArray(self)

    def to_dask(self, chunks: Any = None, **kwargs: Any) -> Any:
        """A dask array reading this array lazily (see :func:`zarrox.dask.from_zarr`)."""
        from zarrox.array_dask import dask_array

        return dask_array(self, chunks=chunks, **kwargs)

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        # The same array opened twice has the same token; a metadata change (shape,
        # codecs, attributes, ...) changes it.
        return (
            "zarrox.Array",
            store_token(self._store),
            self._path,
            json.dumps(self._metadata_document(), sort_keys=True, default=repr),
            self._order,
        )

    def _metadata_document(self) -> dict[str, Any]:
        """Everything the metadata says, as JSON (legacy formats: what the core is given)."""
        m = self._metadata
        if is_legacy(m):
            return {"core": self._core, "attributes": m.attributes, "fill": repr(m.fill_value)}
        doc = m.to_json()
        if isinstance(m, ArrayMetadataV2):
            doc["attributes"] = m.attributes_json()
        return doc

    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the attributes with one metadata write."""
        self.attrs.update(new_attributes)
        return self

    def resize(self, *new_shape: int | tuple[int, ...]) -> None:
        """Change the shape. As zarr-python does, shrinking deletes the chunks (shards)
        now wholly out of bounds and nothing else: a chunk that straddles the new edge keeps
        its cells beyond it, which reappear if the array grows again before a write replaces
        the chunk (a write into a shard keeps them, see ``__setitem__``). The metadata is
        updated by a read-modify-write (see ``io.conditional_writes``)."""
        self._check_writable()
        self._check_no_transaction("resize")
        shape = (
            tuple(int(s) for s in new_shape[0])
            if len(new_shape) == 1 and isinstance(new_shape[0], tuple | list)
            else tuple(int(s) for s in new_shape)  # type: ignore[arg-type]
        )
        self._change_shape(lambda _: shape)

    def _change_shape(self, new_shape: Callable[[tuple[int, ...]], tuple[int, ...]]) -> None:
        """Set the shape to ``new_shape(the stored shape)``, in a read-modify-write of the
        stored metadata, then delete the chunks wholly outside the new shape."""
        ndim = self.ndim
        shrunk: list[int] = []

        def change(meta: Any) -> None:
            shape = new_shape(tuple(meta.shape))
            shrunk[:] = [d for d in range(min(ndim, len(shape))) if shape[d] < meta.shape[d]]
            if len(shape) != ndim or any(not 0 <= s < 2**64 for s in shape):
                raise ValueError(
                    f"array '{self._path}': new shape {shape} does not fit a {ndim}-d array "
                    "(extents from 0 to 2**64 - 1)"
                )
            rect = getattr(meta, "rectilinear", None)
            if rect is not None:
                # The grown edges must make valid metadata (a shard edge must stay a
                # multiple of the inner chunk edge): checked before anything is written,
                # as zarr-python 3.4; its edges grow as zarr-python 3.4 grows them.
                new_rect = rect.resized(shape)
                doc = {**meta.to_json(), "shape": list(shape)}
                doc["chunk_grid"] = new_rect.to_json()
                type(meta).from_json(doc, path=self._path)
                meta.rectilinear = new_rect
            meta.shape = shape

        self._update_metadata(change)
        if not shrunk:
            # Nothing left the array. (Chunks past the new edge of a grown axis may be
            # another process's, which grew the array further since.)
            return
        # The chunks of the old grid outside the box it shares with the new one go, as in
        # zarr-python 3.4.
        new_grid = self._stored_grid_shape
        gone = [
            key
            for key, coords in self._stored_chunks()
            if any(coords[d] >= new_grid[d] for d in shrunk)
        ]
        if self._handle.in_rust:
            self._handle.delete_chunks(gone)  # the data cache forgets them too
        else:
            for key in gone:
                self._store.delete(key)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` and write ``data`` there; returns the new shape. The shape
        grows by a read-modify-write of the stored metadata, so that processes appending
        to one array at once each get their own rows (see ``io.conditional_writes``)."""
        self._check_writable()
        self._check_no_transaction("append")
        arr = np.asarray(data)
        if arr.ndim != self.ndim:
            raise ValueError(f"data has {arr.ndim} dimensions, the array has {self.ndim}")
        axis = axis + self.ndim if axis < 0 else axis
        if not 0 <= axis < self.ndim:
            raise ValueError(f"axis {axis} is out of range for a {self.ndim}-d array")
        for d in range(self.ndim):
            if d != axis and arr.shape[d] != self.shape[d]:
                raise ValueError(
                    f"data of shape {arr.shape} does not match the array's shape {self.shape} "
                    f"outside axis {axis}"
                )
        grown_from: list[int] = []

        def grow(shape: tuple[int, ...]) -> tuple[int, ...]:
            grown_from[:] = [shape[axis]]
            return tuple(s + arr.shape[axis] if d == axis else s for d, s in enumerate(shape))

        self._change_shape(grow)
        old = grown_from[0]
        region = tuple(
            slice(old, old + arr.shape[axis]) if d == axis else slice(None)
            for d in range(self.ndim)
        )
        self._appending_view(axis)[region] = arr
        return self.shape

    def _appending_view(self, axis: int) -> Array:
        """The array to write appended rows through. Where other processes may append at
        the same time (conditional writes), an unsharded regular array is viewed with
        ``axis`` padded to whole chunks: the edge chunk the new rows end in is then merged
        into (conditionally), not replaced as the last chunk of the array, which would
        erase the rows that a later append put in the same chunk."""
        if (
            self._sharding_config() is not None
            or self._rectilinear is not None
            or not conditional_writes(self._store)
        ):
            return self
        step = self._grid_chunks[axis]
        padded = list(self.shape)
        padded[axis] = -(-padded[axis] // step) * step
        if padded[axis] == self.shape[axis]:
            return self
        view = copy.copy(self)
        view._metadata = copy.deepcopy(self._metadata)
        view._metadata.shape = tuple(padded)
        view._open_handle()
        return view

    def _save_metadata(self) -> None:
        self._check_writable()
        write_node(self._store, self._path, self._metadata)

    def _update_metadata(self, change: Callable[[Any], None]) -> None:
        """Apply ``change`` to the stored metadata and store it (a read-modify-write,
        conditional where the store allows: see :func:`zarrox.nodes.node.update_node`);
        the array then follows the stored metadata (a shape another process changed
        included)."""
        self._check_writable()
        self._metadata = update_node(self._store, self._path, self._metadata, change)  # type: ignore[assignment]
        self._open_handle()

    def _check_no_transaction(self, what: str) -> None:
        """A shape change is not staged: refused inside a transaction."""
        if current_transaction() is not None:
            raise TransactionError(
                f"array '{self._path}': {what} changes the metadata at once and cannot be "
                "staged in a transaction; call it before or after the transaction"
            )

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(read_only_message("array", self._path, self._metadata))

    def __repr__(self) -> str:
        return f"<zarrox.Array {self.store_path} shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- reading -----------------------------------------------------------
    def _read(self, sel: Selection, out: np.ndarray | None = None, *, basic: bool = False) -> Any:
        """The selected values. As in zarr-python, a basic selection of one element
        (every dimension an integer, or a 0-d array) gives a numpy scalar; every other
        selection an array, 0-d included."""
        return _run_io(self, self._read_steps(sel, out, basic=basic))

    def _read_steps(self, sel: Selection, out: np.ndarray | None, *, basic: bool) -> _Steps:
        """What :meth:`_read` does, its chunk I/O yielded (see :func:`_run_io`): so that
        :class:`AsyncArray` awaits the same steps."""
        if self._var_len:
            items = yield _IO.READ_VAR, sel, None, False
            result = var_array(items, sel.result_shape, self.dtype)
            if out is not None:
                out[...] = result
                return out
            return result[()] if basic and not sel.result_shape else result
        if out is not None:
            if out.shape != sel.result_shape or out.dtype != self.dtype:
                raise ValueError(
                    f"out must have shape {sel.result_shape} and dtype {self.dtype}, "
                    f"got {out.shape} and {out.dtype}"
                )
            if not out.flags.writeable:
                raise ValueError("out must be writeable")
            out_memory = fortran_memory(out, self.dtype, self._fortran_io(sel))
            if out.flags.c_contiguous:
                # Decoded straight into the caller's buffer.
                yield _IO.READ, sel, out.reshape(-1).view(np.uint8), False
            elif out_memory is not None:
                yield _IO.READ, sel, out_memory.reshape(-1).view(np.uint8), True
            else:
                out[...] = yield from self._read_steps(sel, None, basic=False)
            return out
        fortran = self.order == "F" and len(sel.result_shape) > 1
        if fortran and self._fortran_io(sel):
            # Fortran-ordered chunks straight into the Fortran-ordered result.
            buf = np.empty(sel.buffer_shape[::-1], dtype=self.dtype)
            yield _IO.READ, sel, buf.reshape(-1).view(np.uint8), True
            result = buf.reshape(sel.result_shape[::-1]).T
        else:
            buf = np.empty(sel.buffer_shape, dtype=self.dtype)
            yield _IO.READ, sel, buf.reshape(-1).view(np.uint8), False
            result = buf.reshape(sel.result_shape)
            if fortran:
                result = fortran_ordered(result)
        if basic and not sel.result_shape:
            return result[()]
        return result

    def _read_plain(self, selection: Any) -> np.ndarray | None:
        """A plain basic selection (Python integers in bounds, slices with positive
        steps, one Ellipsis) read in one Rust call into an array of its dtype and
        shape; None for anything else."""
        moving_data()
        return self._handle.read_basic(selection, self._plain_dtype)

    def _write_plain(self, selection: Any, value: Any) -> bool:
        """Write (or stage, inside a transaction) ``value`` to a plain basic selection in
        one Rust call when it is an array of exactly its dtype and shape; False for anything
        else (the general path has the write)."""
        tx = current_transaction()
        if tx is None:
            moving_data()
            return bool(self._handle.write_basic(selection, value, self._plain_dtype))
        return tx.stage_plain(self, selection, value)

    def _item_selection(self, selection: Any) -> tuple[Selection, bool]:
        """``selection`` parsed as ``a[selection]`` parses it: a coordinate or mask selection
        (``vindex``), an orthogonal one, or a basic one; and whether it is basic (a basic
        selection of one element reads a numpy scalar). :class:`AsyncArray` and
        :func:`zarrox.read_many` parse with it too."""
        shape = self.shape
        if is_pure_fancy(selection, shape):
            if is_mask(selection, shape):
                return mask_selection(selection, shape), False
            return coordinate_selection(selection, shape), False
        if is_fancy(selection) or is_orthogonal_basic(selection, self.ndim):
            return orthogonal_selection(selection, shape), False
        return basic_selection(selection, shape), True

    def __getitem__(self, selection: Any) -> Any:
        if self._plain_reads and current_transaction() is None:
            result = self._read_plain(selection)
            if result is not None:
                if not result.shape and not is_orthogonal_basic(selection, self.ndim):
                    return result[()]  # e.g. a[1, ..., 2]: a basic selection
                return result
        sel, basic = self._item_selection(selection)
        return self._read(sel, basic=basic)

    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        if out is None and self._plain_reads and current_transaction() is None:
            result = self._read_plain(selection)
            if result is not None:
                return result[()] if not result.shape else result
        return self._read(basic_selection(selection, self.shape), out, basic=True)

    def get_orthogonal_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(orthogonal_selection(selection, self.shape), out)

    def get_coordinate_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(coordinate_selection(selection, self.shape), out)

    def get_mask_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(mask_selection(selection, self.shape), out)

    def get_block_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(block_selection(selection, self.shape, self._block_grid), out)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            # the values are always read into a new array, as zarr-python says
            raise ValueError("`copy=False` is not supported. This method always creates a copy.")
        a = np.asarray(self[...])
        return a if dtype is None else a.astype(dtype, copy=False)

    # -- writing -----------------------------------------------------------
    @staticmethod
    def _broadcast(arr: np.ndarray, sel: Selection, value: Any) -> np.ndarray:
        """``arr`` (the converted ``value``) broadcast to the selection's shape."""
        try:
            return np.broadcast_to(arr, sel.result_shape)
        except ValueError:
            raise ValueError(
                f"could not broadcast value of shape {np.shape(value)} "
                f"into selection of shape {sel.result_shape}"
            ) from None

    def _write_scalar(self, sel: Selection, value: Any) -> _IOStep:
        """The write of one value to every selected element, with no selection-sized
        buffer (see :mod:`zarrox.values`)."""
        if self._var_len:
            one = np.asarray(value, dtype=self.dtype).reshape(-1).tolist()[0]
            return _IO.WRITE, sel, var_item(one, self._utf8), False
        # One value everywhere: any order will do, and Fortran-ordered chunks take it
        # untransposed.
        return _IO.WRITE, sel, one_value(value, self.dtype), self._fortran_io(sel)

    def _write(self, sel: Selection, value: Any) -> None:
        step = self._write_step(sel, value)
        if step is not None:
            _do_io(self, step)

    def _write_memory(self, sel: Selection, memory: np.ndarray) -> None:
        """Write fixed-size values given as the bytes (a uint8 view) of the buffer
        ``sel`` lays out (e.g. a TensorStore view's selection with the value's own steps,
        ``_core.IndexTransform.selection``), nothing reordered here."""
        self._check_writable()
        if math.prod(sel.buffer_shape):
            _do_io(self, (_IO.WRITE, sel, memory, False))

    def _write_step(self, sel: Selection, value: Any) -> _IOStep | None:
        """What :meth:`_write` does: its one chunk I/O (None: nothing to write), which
        :class:`AsyncArray` awaits."""
        self._check_writable()
        if math.prod(sel.buffer_shape) == 0:
            return None
        if np.ndim(value) == 0:
            return self._write_scalar(sel, value)
        if self._var_len:
            arr = self._broadcast(np.asarray(value, dtype=self.dtype), sel, value)
            return _IO.WRITE, sel, var_items(arr, self._utf8), False
        arr = self._broadcast(as_values(value, self.dtype), sel, value)
        payload, fortran = fixed_payload(
            arr.reshape(sel.buffer_shape), self.dtype, self._fortran_io(sel)
        )
        return _IO.WRITE, sel, payload, fortran

    def __setitem__(self, selection: Any, value: Any) -> None:
        if self._plain_writes and self._write_plain(selection, value):
            return  # a plain selection and an array of its shape and dtype: one Rust call
        if is_pure_fancy(selection, self.shape):
            self.vindex[selection] = value
        elif is_fancy(selection):
            self.set_orthogonal_selection(selection, value)
        else:
            self.set_basic_selection(selection, value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        if self._plain_writes and self._write_plain(selection, value):
            return
        self._write(basic_selection(selection, self.shape), value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        # Repeated indices: the core copies each chunk's elements in output order,
        # so the last assignment wins, as in numpy.
        self._write(orthogonal_selection(selection, self.shape), value)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        self._write(coordinate_selection(selection, self.shape), value)

    def set_mask_selection(self, selection: Any, value: Any) -> None:
        self._write(mask_selection(selection, self.shape), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        self._write(block_selection(selection, self.shape, self._block_grid), value)


def _regular_sizes(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Per dimension, the data sizes of regular chunks clipped at the extent."""
    return tuple(
        tuple(min(c, n - i) for i in range(0, n, c)) for n, c in zip(shape, chunks, strict=True)
    )


def _restore_array(
    store: Store, path: str, metadata: ArrayMetadata, read_only: bool, config: dict[str, Any]
) -> Array:
    """An unpickled array (see ``Array.__reduce__``)."""
    return Array(store, path, metadata, read_only=read_only, config=config)


def _open_array(*args: Any, **kwargs: Any) -> Array:
    """``zarrox.open_array``: the array opened (see :func:`zarrox.nodes.create.array_to_open`)."""
    return Array._make(creation.array_to_open(*args, **kwargs))


class AsyncArray(AsyncNode):
    """An array whose reads, writes and metadata changes are awaited (zarr-python's
    ``AsyncArray``). Wraps a :class:`zarrox.Array` (``AsyncArray(array)``); the properties
    describing the array are the same.

    Reads and writes of a store Rust reads (local files, memory, zip, object stores) are
    awaitables that the engine completes: no Python thread per await; an object store's
    requests run on the engine's I/O runtime and decoding on its worker pool; cancelling
    the awaiting task cancels the requests not yet answered. A buffer given as ``out`` is
    written while the event loop runs: leave it alone until the read is done. Reads and
    writes of a store served from Python (and the pickle codec) run the blocking call on a
    worker thread. Opening, creating, resizing and attribute updates (a few small metadata
    documents) also run on a worker thread."""

    _kind = Array
    _sync: Array

    # -- opening and creating ------------------------------------------------------------
    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = None, **kwargs: Any) -> AsyncArray:
        """The array at ``store`` (metadata read on a worker thread)."""
        return AsyncArray(
            await run_metadata(store, _open_array, store, zarr_format=zarr_format, **kwargs)
        )

    @classmethod
    async def create(cls, store: Any, **kwargs: Any) -> AsyncArray:
        """A new array (metadata written on a worker thread)."""
        return AsyncArray(await run_metadata(store, Array.create, store, **kwargs))

    def __repr__(self) -> str:
        return f"<zarrox.AsyncArray {self._sync.store_path} shape={self.shape} dtype={self.dtype}>"

    @property
    def oindex(self) -> _AsyncOIndex:
        return _AsyncOIndex(self)

    @property
    def vindex(self) -> _AsyncVIndex:
        return _AsyncVIndex(self)

    # -- reading and writing -------------------------------------------------------------
    def _native(self) -> bool:
        """Whether the engine completes this array's reads and writes (a store Rust reads)."""
        return bool(self._sync._handle.in_rust)

    async def _read(
        self, sel: Selection, out: np.ndarray | None = None, basic: bool = False
    ) -> Any:
        """:meth:`Array._read`'s steps, each chunk I/O awaited; where the engine does not
        complete this array's reads, :meth:`Array._read` on a worker thread."""
        array = self._sync
        if not self._native():
            return await run(array._read, sel, out, basic=basic)
        steps = array._read_steps(sel, out, basic=basic)
        try:
            step = next(steps)
            while True:
                step = steps.send(await _await_io(array, step))
        except StopIteration as done:
            return done.value

    async def _write(self, sel: Selection, value: Any) -> None:
        """:meth:`Array._write`, its chunk I/O awaited (on a worker thread where the engine
        does not complete this array's writes)."""
        if not self._native():
            return await run(self._sync._write, sel, value)
        step = self._sync._write_step(sel, value)
        if step is not None:
            await _await_io(self._sync, step)

    async def getitem(self, selection: Any) -> Any:
        sel, basic = self._sync._item_selection(selection)
        return await self._read(sel, basic=basic)

    async def setitem(self, selection: Any, value: Any) -> None:
        if is_pure_fancy(selection, self._sync.shape):
            await self.vindex.setitem(selection, value)
        elif is_fancy(selection):
            await self.set_orthogonal_selection(selection, value)
        else:
            await self.set_basic_selection(selection, value)

    async def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        sel = basic_selection(selection, self._sync.shape)
        return await self._read(sel, out, basic=True)

    async def get_orthogonal_selection(
        self, selection: Any, *, out: np.ndarray | None = None
    ) -> Any:
        return await self._read(orthogonal_selection(selection, self._sync.shape), out)

    async def get_coordinate_selection(
        self, selection: Any, *, out: np.ndarray | None = None
    ) -> Any:
        return await self._read(coordinate_selection(selection, self._sync.shape), out)

    async def get_mask_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return await self._read(mask_selection(selection, self._sync.shape), out)

    async def get_block_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        a = self._sync
        return await self._read(block_selection(selection, a.shape, a._block_grid), out)

    async def set_basic_selection(self, selection: Any, value: Any) -> None:
        await self._write(basic_selection(selection, self._sync.shape), value)

    async def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        await self._write(orthogonal_selection(selection, self._sync.shape), value)

    async def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        await self._write(coordinate_selection(selection, self._sync.shape), value)

    async def set_mask_selection(self, selection: Any, value: Any) -> None:
        await self._write(mask_selection(selection, self._sync.shape), value)

    async def set_block_selection(self, selection: Any, value: Any) -> None:
        a = self._sync
        await self._write(block_selection(selection, a.shape, a._block_grid), value)

    # -- changing and inspecting (metadata and listings: on a worker thread) -------------
    async def resize(self, new_shape: Any) -> None:
        await run(self._sync.resize, new_shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        return await run(self._sync.append, data, axis=axis)

    async def update_attributes(self, new_attributes: dict[str, Any]) -> AsyncArray:
        await run_metadata(self._sync.store, self._sync.update_attributes, new_attributes)
        return self

    async def nchunks_initialized(self) -> int:
        return await run(lambda: self._sync.nchunks_initialized)

    async def nshards_initialized(self) -> int:
        return await run(lambda: self._sync.nshards_initialized)

    async def nbytes_stored(self) -> int:
        return await run(self._sync.nbytes_stored)

    async def info_complete(self) -> Any:
        return await run(self._sync.info_complete)


class _AsyncOIndex(_Indexer[AsyncArray]):
    """``async_array.oindex``: awaitable orthogonal ``getitem`` and ``setitem``."""

    async def getitem(self, selection: Any) -> Any:
        return await self._array.get_orthogonal_selection(selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        await self._array.set_orthogonal_selection(selection, value)


class _AsyncVIndex(_Indexer[AsyncArray]):
    """``async_array.vindex``: awaitable coordinate and mask ``getitem`` and ``setitem``."""

    async def getitem(self, selection: Any) -> Any:
        if is_mask(selection, self._array._sync.shape):
            return await self._array.get_mask_selection(selection)
        return await self._array.get_coordinate_selection(selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        if is_mask(selection, self._array._sync.shape):
            await self._array.set_mask_selection(selection, value)
        else:
            await self._array.set_coordinate_selection(selection, value)
