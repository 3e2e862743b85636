"""zarr-python's codec pipeline on zarrox's Rust core.

Existing zarr-python code gets zarrox's speed by configuration alone::

    zarr.config.set({"codec_pipeline.path": "zarrox.ZarroxCodecPipeline"})
    # or: ZARR_CODEC_PIPELINE__PATH=zarrox.ZarroxCodecPipeline

zarr-python keeps doing the indexing: for each chunk it hands over the chunk's key (a
``ByteGetter``/``ByteSetter``), its spec, the selection inside the chunk and the matching
selection of the output (or input) buffer. :class:`ZarroxCodecPipeline` turns the batch into one
call to Rust (:class:`zarrox._core.ChunkCodec`), with the GIL released:

- a ``LocalStore``, an ``ObjectStore`` over obstore's S3, GCS, Azure or HTTP store, and an
  ``FsspecStore`` over s3fs, gcsfs, adlfs, fsspec's local or HTTP (read-only) file system
  (``s3://`` and ``gs://`` URLs with their ``storage_options``...) are read and written by
  Rust's engine directly, on the same objects with the same credentials (a shard's index and
  only the inner chunks needed; many requests in flight on object stores; writes that merge
  into a stored chunk or shard commit only on the version they read, so concurrent writers of
  disjoint parts lose nothing);
- every other store (memory, zip, wrappers, an ``FsspecStore`` over another file system or
  with options Rust has no equivalent for: :func:`zarrox.storage.options.fsspec_target`) is
  read on the Python side: the engine hands out its byte requests round by round (whole
  chunks; or a shard's index, then the byte ranges of the inner chunks needed), all requests
  of a round are fetched concurrently, and the fetched bytes stay in Rust; writes are encoded
  in one Rust call and stored concurrently. **Such writes are not protected**: a write into
  part of a stored chunk or shard is read, merged and stored unconditionally, so writers of
  the same chunk or shard at once can lose each other's cells (the last writer wins).

zarr-python 3.1 and newer releases are both served: from 3.2 on, ``read`` returns one
``GetResult`` per chunk (detected at import: :data:`READ_RETURNS_RESULTS`), and ``validate``
forwards its keyword arguments, whatever their types, to the codecs.

Each chunk's selection becomes, per chunk dimension, ``(start, stop, step)`` or an index array,
with the matching buffer dimension (``None`` where numpy drops the dimension); coordinate and mask
selections become flat point indices; anything else falls back to exact index maps computed
with numpy (so numpy's semantics, broadcasting included, are kept in every case).

Codecs and data types zarrox cannot express (a codec it does not know, a buffer that is not in
host memory) fall back to zarr-python's own ``BatchedCodecPipeline`` with a warning, or raise
:class:`zarrox.errors.UnsupportedError` when ``codec_pipeline.strict`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import warnings
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import zarr.abc.codec as _zarr_codec
from zarr.abc.codec import Codec, CodecPipeline
from zarr.abc.store import Store as _ZarrStore
from zarr.core.codec_pipeline import BatchedCodecPipeline, codecs_from_list
from zarr.core.config import config as zarr_config
from zarr.registry import register_pipeline
from zarr.storage import StorePath

from zarrox import _core
from zarrox.errors import MetadataError, StoreError, StorePermissionError, UnsupportedError
from zarrox.metadata import ArrayMetadataV3
from zarrox.metadata.description import ArrayDescription
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.pickle_codec import ALLOW_KEY, PIPELINE_OPT_IN, PickleStage, check_allowed
from zarrox.storage import (
    PythonZarrStore,
    RustObjectStore,
    RustObstoreStore,
    Store,
    from_zarr_store,
)
from zarrox.storage.bridge import as_bytes, byte_request, gather_limited, serve
from zarrox.values import (
    finish_read,
    fixed_payload,
    fortran_memory,
    one_value,
    read_target,
    var_array,
    var_item,
    var_items,
)

if TYPE_CHECKING:
    from zarr.abc.store import ByteGetter, ByteSetter
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

__all__ = ["ZarroxCodecPipeline"]

#: zarr-python >= 3.2: ``read`` returns one ``GetResult`` per chunk.
READ_RETURNS_RESULTS: bool = hasattr(_zarr_codec, "GetResult")
#: zarr-python >= 3.3: a store reads many byte ranges of one key at once
#: (``Store.get_ranges``), which its sharding codec uses for inner chunks.
STORES_GET_RANGES: bool = hasattr(_ZarrStore, "get_ranges")

_BatchItem = tuple[Any, "ArraySpec", Any, Any, bool]
#: what :meth:`ZarroxCodecPipeline._groups` groups: tuples with the chunk's ArraySpec second
_Item = TypeVar("_Item", bound=tuple[Any, ...])


def _strict() -> bool:
    value = zarr_config.get("codec_pipeline.strict", False)
    if isinstance(value, str):  # from the environment: ZARR_CODEC_PIPELINE__STRICT=true
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, bytes):
        return obj.decode("ascii")
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _plain_json(doc: Any) -> Any:
    """``doc`` with tuples as lists and numpy scalars as Python numbers."""
    return json.loads(json.dumps(doc, default=_json_default, allow_nan=True))


# --------------------------------------------------------------------------------------------
# The Rust codec of one kind of chunk
# --------------------------------------------------------------------------------------------


class _ChunkKind:
    """A Rust codec chain for chunks of one spec, and the numpy dtype it decodes to."""

    __slots__ = (
        "codec",
        "dtype",
        "shape",
        "sharded",
        "writes_in_part",
        "var",
        "utf8",
        "nbytes",
        "pickle",
        "fortran_chunks",
    )

    def __init__(
        self,
        codec: _core.ChunkCodec,
        dtype: np.dtype[Any],
        var: str | None,
        pickle: PickleStage | None = None,
    ) -> None:
        self.codec = codec
        self.dtype = dtype
        self.shape: tuple[int, ...] = tuple(codec.chunk_shape)
        #: shards whose inner chunks are read one by one
        self.sharded: bool = codec.sharded
        #: shards updated inner chunk by inner chunk (a lone sharding codec)
        self.writes_in_part: bool = codec.writes_in_part
        #: "string" / "bytes" for variable-length elements, else None
        self.var = var
        self.utf8 = var == "string"
        #: bytes of one decoded chunk
        self.nbytes = math.prod(self.shape) * dtype.itemsize
        #: the pickle codec outside the chain (a v2 array's), which Python runs
        self.pickle = pickle
        #: whether the chunks are stored in Fortran order (see :attr:`fortran_io`)
        self.fortran_chunks: bool = codec.fortran_chunks

    def unpickled(self, stored: Any, key: str) -> Any:
        """The bytes the chain decodes from a stored chunk of the pickle codec, unpickled
        only when zarr-python's ``array.allow_unsafe_pickle_decode`` is True (and, since
        numcodecs' ``Pickle`` decodes it, when numcodecs allows it too)."""
        if self.pickle is None or stored is None:
            return stored
        from numcodecs import Pickle

        where = f"chunk '{key}'"
        check_allowed(zarr_config.get(ALLOW_KEY, False), where, PIPELINE_OPT_IN)
        return self.pickle.decode(stored, where, unpickle=Pickle(self.pickle.protocol).decode)

    @property
    def fortran_io(self) -> bool:
        """Whether Rust may read and write these chunks in Fortran order (it decides per
        batch; see :func:`zarrox.values.fortran_memory`). Batches through the pickle codec,
        which Python runs around the chain, keep to C order."""
        return self.fortran_chunks and self.var is None and self.pickle is None

    def pickled(self, encoded: Any) -> Any:
        """The stored bytes of a chunk the chain encoded (through the pickle codec)."""
        if self.pickle is None or encoded is None:
            return encoded
        return self.pickle.encode(encoded)


#: Packages whose codec classes zarrox implements by their JSON name; a codec class from
#: anywhere else (a user's subclass registered for a codec name, a third-party codec) is
#: Python code zarrox cannot run.
_OWN_PACKAGES = ("zarr", "numcodecs")


def _foreign_codec(codec: Any) -> str | None:
    """Why zarrox cannot run ``codec`` (and the codecs inside it), or None."""
    cls = type(codec)
    if cls.__module__.split(".")[0] not in _OWN_PACKAGES:
        return (
            f"codec {cls.__module__}.{cls.__qualname__} is not zarr-python's or numcodecs' "
            "own implementation"
        )
    inner: list[Any] = []
    for attr in ("codecs", "index_codecs", "filters"):
        inner.extend(getattr(codec, attr, None) or ())
    if getattr(codec, "compressor", None) is not None:
        inner.append(codec.compressor)
    for c in inner:
        why = _foreign_codec(c)
        if why is not None:
            return why
    return None


def _v3_kind(codecs: Sequence[Codec], spec: ArraySpec) -> _ChunkKind:
    shape = [int(s) for s in spec.shape]
    fill = spec.fill_value
    if fill is None:
        fill = spec.dtype.default_scalar()
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": spec.dtype.to_json(zarr_format=3),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": spec.dtype.to_json_scalar(fill, zarr_format=3),
        "codecs": [c.to_dict() for c in codecs],
        "attributes": {},
    }
    meta = ArrayMetadataV3.from_json(_plain_json(doc))
    core = meta.to_core_json()
    _carry_subchunk_write_orders(codecs, core["codecs"])
    return _make_kind(core, meta.fill_bytes(), meta.dtype)


def _carry_subchunk_write_orders(codecs: Sequence[Any], core_codecs: list[Any]) -> None:
    """Put the ``subchunk_write_order`` of zarr-python's sharding codec objects (zarr >= 3.4:
    how a written shard lays out its inner chunks, a setting metadata does not store) into
    the matching ``sharding_indexed`` configurations of the core's codecs, nested ones
    included."""
    objects = [c for c in codecs if hasattr(c, "subchunk_write_order")]
    docs = [d for d in core_codecs if d.get("name") == "sharding_indexed"]
    for codec, doc in zip(objects, docs, strict=False):
        config = doc.setdefault("configuration", {})
        config["subchunk_write_order"] = str(codec.subchunk_write_order)
        _carry_subchunk_write_orders(getattr(codec, "codecs", ()), config.get("codecs", []))


def _order(spec: ArraySpec) -> str:
    """The memory order of a chunk spec (a v2 array's ``order``)."""
    order = getattr(spec, "order", None)
    return str(order if order is not None else spec.config.order)


def _v2_kind(codec: Any, spec: ArraySpec) -> _ChunkKind:
    shape = [int(s) for s in spec.shape]
    dtype_json = spec.dtype.to_json(zarr_format=2)
    fill = spec.fill_value
    doc = {
        "zarr_format": 2,
        "shape": shape,
        "chunks": shape,
        "dtype": dtype_json["name"] if isinstance(dtype_json, dict) else dtype_json,
        "fill_value": None if fill is None else spec.dtype.to_json_scalar(fill, zarr_format=2),
        "order": _order(spec),
        "filters": [f.get_config() for f in codec.filters] if codec.filters else None,
        "compressor": codec.compressor.get_config() if codec.compressor is not None else None,
        "dimension_separator": ".",
    }
    meta = ArrayMetadataV2.from_json(_plain_json(doc))
    core = meta.to_core_json()
    dt = meta.dtype
    if dt.kind in "biufc":
        dt = dt.newbyteorder("=")
    return _make_kind(core, meta.fill_bytes(), dt, meta.pickle_stage())


def _make_kind(
    core: ArrayDescription, fill: bytes, dtype: np.dtype[Any], pickle: PickleStage | None = None
) -> _ChunkKind:
    data_type = core["data_type"]
    var = data_type if data_type in ("string", "bytes") else None
    codec = _core.ChunkCodec(
        json.dumps(core["codecs"]), list(core["chunk_shape"]), json.dumps(data_type), fill
    )
    size = _core.data_type_size(json.dumps(data_type))
    if var is None and dtype.itemsize != size:
        raise UnsupportedError(
            f"data type {dtype} has {dtype.itemsize} bytes, zarrox's {data_type} has {size}"
        )
    return _ChunkKind(codec, np.dtype(dtype), var, pickle)


# --------------------------------------------------------------------------------------------
# zarr-python's per-chunk selections -> the regions Rust takes
# --------------------------------------------------------------------------------------------


def _generic_region(
    chunk_sel: Any,
    buf_sel: Any,
    chunk_shape: list[int],
    buf_shape: list[int],
    drop_axes: list[int],
    writing: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Exact (chunk, buffer) flat index pairs from numpy's own indexing, broadcasting
    included, for the selections the Rust core leaves to numpy (mixed index arrays and
    slices, broadcasts it does not express); ``buf_sel`` None: a write of one value, the
    chunk side alone."""
    cidx = np.arange(math.prod(chunk_shape), dtype=np.int64).reshape(chunk_shape)[chunk_sel]
    if buf_sel is None:
        return np.ascontiguousarray(np.asarray(cidx).reshape(-1)), None
    bidx = np.arange(math.prod(buf_shape), dtype=np.int64).reshape(buf_shape)[buf_sel]
    axes = tuple(drop_axes)
    if writing:
        bidx = np.asarray(bidx)
        if axes:
            bidx = bidx[tuple(None if i in axes else slice(None) for i in range(len(chunk_shape)))]
        bidx = np.broadcast_to(bidx, np.shape(cidx))
    else:
        cidx = np.asarray(cidx)
        if axes:
            cidx = cidx.squeeze(axis=axes)
        cidx = np.broadcast_to(cidx, np.shape(bidx))
    return (
        np.ascontiguousarray(np.asarray(cidx).reshape(-1)),
        np.ascontiguousarray(np.asarray(bidx).reshape(-1)),
    )


#: a memory order, as ``ChunkCodec`` takes it
_Order = Literal["C", "F"]
#: ``ChunkCodec.read``'s arguments after the buffer, before the order: the buffer's shape,
#: and :func:`_zarr_form`'s two
_ReadTail = tuple[list[int], list[int], Any]


def _zarr_form(drop_axes: tuple[int, ...]) -> tuple[list[int], Any]:
    """The last two arguments of a ``ChunkCodec`` call taking zarr-python's per-chunk
    selections as they are: the Rust core normalises each ``chunk_selection`` /
    ``out_selection`` pair into a region itself (``rust/selection.rs``), handing back to
    :func:`_generic_region` only what needs numpy's general indexing."""
    return list(drop_axes), _generic_region


# --------------------------------------------------------------------------------------------
# Stores
# --------------------------------------------------------------------------------------------


def _rust_store(items: Sequence[_BatchItem]) -> tuple[Any, Store] | None:
    """(the zarr-python store, zarrox's Rust store for it) when every chunk of the batch is
    in one store that Rust reads and writes itself (a ``LocalStore``, an ``ObjectStore`` over
    obstore's S3, GCS, Azure or HTTP store, an ``FsspecStore`` over a file system Rust can
    reach: see :func:`zarrox.storage.from_zarr_store`), else None."""
    store = getattr(items[0][0], "store", None)
    if store is None:
        return None
    for item in items:
        if getattr(item[0], "store", None) is not store:
            return None
    adapted = from_zarr_store(store)
    if isinstance(adapted, PythonZarrStore) or adapted._in_python:
        # (a zarrox store served from Python, handed to zarr-python: its as_zarr_store() view)
        return None
    return store, adapted


@contextlib.contextmanager
def _as_its_errors(store: Store) -> Iterator[None]:
    """For an obstore store read by Rust: a store error also is the obstore exception
    zarr-python's own pipeline would raise there (code that catches
    ``obstore.exceptions.PermissionDeniedError`` keeps working)."""
    try:
        yield
    except StoreError as e:
        if not isinstance(store, RustObstoreStore):
            raise
        raise _obstore_flavoured(e) from e


def _obstore_flavoured(e: StoreError) -> StoreError:
    import obstore.exceptions as ox

    if isinstance(e, StorePermissionError):
        theirs: type[Exception] = ox.PermissionDeniedError
    elif "not supported" in str(e).lower():
        theirs = ox.NotSupportedError
    else:
        theirs = ox.GenericError
    ours = type(e)
    both = _FLAVOURS.get((ours, theirs))
    if both is None:
        both = _FLAVOURS[(ours, theirs)] = type(ours.__name__, (ours, theirs), {})
    return both(*e.args)


_FLAVOURS: dict[tuple[type, type], type[StoreError]] = {}


async def _open(store: Any) -> None:
    if not getattr(store, "_is_open", True):
        await store._open()


#: A Rust call over at most this many decoded bytes (read, write, decode or encode) runs on
#: the event loop's own thread (the GIL released): handing it to a worker thread and back
#: costs ~30 us, more than decoding or encoding 64 KiB. Larger ones go to a worker thread,
#: so that concurrent calls overlap.
_INLINE_BYTES = 64 * 1024


async def _run_native(nbytes: int | None, func: Any, func_async: Any, *args: Any) -> Any:
    """``func(*args)`` (a ``ChunkCodec`` read or write of a store Rust reads): inline when it
    works on at most ``_INLINE_BYTES`` decoded bytes, else (``nbytes`` None: network I/O)
    awaiting ``func_async(*args)``, the awaitable the engine completes (no Python thread;
    the requests on the engine's I/O runtime, decoding on its worker pool). A read the
    engine refuses in the order asked returns None at once, as ``func`` does."""
    if nbytes is not None and nbytes <= _INLINE_BYTES:
        return func(*args)
    pending = func_async(*args)
    return None if pending is None else await pending


async def _run_blocking(nbytes: int | None, func: Any, *args: Any) -> Any:
    """``func(*args)``: inline when it works on at most ``_INLINE_BYTES`` decoded bytes
    (``nbytes`` None: always on a thread, e.g. network I/O), else on a worker thread."""
    if nbytes is not None and nbytes <= _INLINE_BYTES:
        return func(*args)
    return await asyncio.to_thread(func, *args)


# --------------------------------------------------------------------------------------------
# The pipeline
# --------------------------------------------------------------------------------------------


class _Fallback(Exception):
    """zarrox cannot express this batch; zarr-python's own pipeline has to run it."""


class ZarroxCodecPipeline(CodecPipeline):
    """A zarr-python ``CodecPipeline`` whose reads, writes, decodes and encodes run in zarrox's
    Rust core, one call per batch with the GIL released. See the module documentation."""

    __module__ = "zarrox"

    def __init__(self, codecs: Iterable[Codec]) -> None:
        self._codecs: tuple[Codec, ...] = tuple(codecs)
        self._init_state()

    def _init_state(self) -> None:
        self._kinds: dict[Any, _ChunkKind] = {}
        self._last: tuple[Any, ...] | None = None
        self._python: BatchedCodecPipeline | None = None

    # -- construction, identity, pickling --------------------------------------------------
    @classmethod
    def from_codecs(cls, codecs: Iterable[Codec], *, batch_size: int | None = None) -> Any:
        codecs = tuple(codecs)
        # zarr-python's own checks of the codec order, and its warning about a sharding
        # codec combined with others (which disables partial reads here too).
        codecs_from_list(codecs)
        return cls(codecs)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Any:
        # Each codec evolves against what the codecs before it produce (cast_value changes
        # the data type the bytes codec sees), as zarr-python 3.4 threads the spec.
        evolved = []
        for codec in self._codecs:
            codec = codec.evolve_from_array_spec(array_spec=array_spec)
            evolved.append(codec)
            array_spec = codec.resolve_metadata(array_spec)
        return type(self)(evolved)

    def __iter__(self) -> Iterator[Codec]:
        return iter(self._codecs)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._codecs == self._codecs  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._codecs))

    def __repr__(self) -> str:
        return f"ZarroxCodecPipeline(codecs={list(self._codecs)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"codecs": self._codecs}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._codecs = tuple(state["codecs"])
        self._init_state()

    # -- what zarr-python asks of every pipeline ------------------------------------------
    @property
    def supports_partial_decode(self) -> bool:
        return False

    @property
    def supports_partial_encode(self) -> bool:
        return False

    def validate(self, **kwargs: Any) -> None:
        for codec in self._codecs:
            codec.validate(**kwargs)

    def compute_encoded_size(self, byte_length: int, array_spec: ArraySpec) -> int:
        for codec in self._codecs:
            byte_length = codec.compute_encoded_size(byte_length, array_spec)
            array_spec = codec.resolve_metadata(array_spec)
        return byte_length

    # -- codecs per chunk spec ------------------------------------------------------------
    def _kind(self, spec: ArraySpec) -> _ChunkKind:
        last = self._last
        if (
            last is not None
            and last[0] == spec.shape
            and last[1] is spec.dtype
            and last[2] is spec.fill_value
            and last[3] == _order(spec)
        ):
            return last[4]  # type: ignore[no-any-return]
        v2 = self._is_v2()
        fill = spec.fill_value
        key = (
            tuple(spec.shape),
            json.dumps(_plain_json(spec.dtype.to_json(zarr_format=2 if v2 else 3))),
            json.dumps(
                None
                if fill is None
                else _plain_json(spec.dtype.to_json_scalar(fill, zarr_format=2 if v2 else 3))
            ),
            _order(spec) if v2 else None,
        )
        kind = self._kinds.get(key)
        if kind is None:
            for codec in self._codecs:
                why = _foreign_codec(codec)
                if why is not None:
                    raise _Fallback(why)
            try:
                kind = _v2_kind(self._codecs[0], spec) if v2 else _v3_kind(self._codecs, spec)
            except (UnsupportedError, MetadataError, NotImplementedError, TypeError) as e:
                raise _Fallback(str(e)) from e
            self._kinds[key] = kind
        self._last = (spec.shape, spec.dtype, spec.fill_value, _order(spec), kind)
        return kind

    def _is_v2(self) -> bool:
        return len(self._codecs) == 1 and type(self._codecs[0]).__name__ == "V2Codec"

    def _groups(self, items: list[_Item]) -> list[tuple[_ChunkKind, list[_Item]]]:
        """``items`` (each with its chunk's ArraySpec second) by the kind of their chunks,
        in the order each kind first comes."""
        groups: dict[int, tuple[_ChunkKind, list[_Item]]] = {}
        for item in items:
            kind = self._kind(item[1])
            entry = groups.get(id(kind))
            if entry is None:
                groups[id(kind)] = (kind, [item])
            else:
                entry[1].append(item)
        return list(groups.values())

    def _python_pipeline(self, why: str) -> BatchedCodecPipeline:
        if _strict():
            raise UnsupportedError(
                f"zarrox cannot run this array's chunks ({why}), and codec_pipeline.strict "
                "forbids falling back to zarr-python's own codec pipeline"
            )
        warnings.warn(
            f"zarrox cannot run this array's chunks ({why}); using zarr-python's own codec "
            "pipeline",
            UserWarning,
            stacklevel=3,
        )
        if self._python is None:
            self._python = BatchedCodecPipeline.from_codecs(self._codecs)
        return self._python

    # -- read -----------------------------------------------------------------------------
    async def read(
        self,
        batch_info: Iterable[tuple[ByteGetter, ArraySpec, Any, Any, bool]],
        out: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> Any:
        items = list(batch_info)
        present: list[bool] = []
        if items:
            try:
                present = await self._read(items, out, tuple(drop_axes))
            except _Fallback as e:
                # zarr-python 3.1's read returns None, later ones a result per chunk
                read: Any = self._python_pipeline(str(e)).read
                return await read(items, out, drop_axes)
        if READ_RETURNS_RESULTS:
            return tuple({"status": "present" if p else "missing"} for p in present)
        return None

    async def _read(
        self, items: list[_BatchItem], out: NDBuffer, drop_axes: tuple[int, ...]
    ) -> list[bool]:
        out_arr = out.as_ndarray_like()
        if not isinstance(out_arr, np.ndarray):
            raise _Fallback(f"the output is a {type(out_arr).__name__}, not a numpy array")
        present: dict[int, bool] = {}
        order = {id(item): i for i, item in enumerate(items)}
        for kind, group in self._groups(items):
            got = await self._read_group(kind, group, out_arr, drop_axes)
            for item, p in zip(group, got, strict=True):
                present[order[id(item)]] = p
        return [present[i] for i in range(len(items))]

    async def _read_group(
        self,
        kind: _ChunkKind,
        items: list[_BatchItem],
        out: np.ndarray,
        drop_axes: tuple[int, ...],
    ) -> list[bool]:
        # ``ChunkCodec.read``'s arguments after the store, the keys and the buffer
        regions = ([item[2] for item in items], [item[3] for item in items])
        after: _ReadTail = (list(out.shape), *_zarr_form(drop_axes))
        # what the batch decodes: whole chunks, or for shards about what is read
        nbytes: int | None = out.nbytes if kind.sharded else len(items) * kind.nbytes
        keys = [str(getattr(item[0], "path", "")) for item in items]
        rust = _rust_store(items) if kind.pickle is None else None
        errors: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        read: Callable[[np.ndarray | None, _Order], Awaitable[Any]]
        if rust is not None:
            zarr_store, store = rust
            await _open(zarr_store)
            if isinstance(store, (RustObstoreStore, RustObjectStore)):
                nbytes = None  # network I/O: awaited, so that batches overlap
            errors = _as_its_errors(store)

            async def read(buffer: np.ndarray | None, order: _Order) -> Any:
                """Read into ``buffer`` (None: variable-length values, returned)."""
                view = None if buffer is None else buffer.reshape(-1).view(np.uint8)
                codec = kind.codec
                return await _run_native(
                    nbytes,
                    codec.read,
                    codec.read_async,
                    store.handle,
                    keys,
                    *regions,
                    view,
                    *after,
                    order,
                )

        else:
            read = self._served_read(kind, items, keys, regions, after, nbytes)
        with errors:
            if kind.var is not None:
                values, present = await read(None, "C")
                self._place_var(out, values, regions[1])
                return list(present)
            return list(await self._read_fixed(kind, out, read))

    def _served_read(
        self,
        kind: _ChunkKind,
        items: list[_BatchItem],
        keys: list[str],
        regions: tuple[list[Any], list[Any]],
        after: _ReadTail,
        nbytes: int | None,
    ) -> Callable[[np.ndarray | None, _Order], Awaitable[Any]]:
        """A read of a batch from a store read on the Python side: the engine asks for whole
        chunks, or for a shard's index and then the byte ranges of the inner chunks needed,
        round by round; each round is fetched concurrently, and the bytes stay in Rust.
        Requests name the chunk by key (a placeholder for byte getters without one, e.g. the
        inner chunks zarr-python's own sharding codec hands over)."""
        if "" in keys or len(set(keys)) < len(keys):
            keys = [f"#{i}" for i in range(len(items))]
        getters = {key: item for key, item in zip(keys, items, strict=True)}
        name = repr(getattr(items[0][0], "store", ""))

        async def perform(request: Any) -> Any:
            _, _, key, arg = request
            getter, spec = getters[key][0], getters[key][1]
            got = as_bytes(await getter.get(prototype=spec.prototype, byte_range=byte_request(arg)))
            return kind.unpickled(got, str(getattr(getter, "path", key)))

        async def read(buffer: np.ndarray | None, order: _Order) -> Any:
            view = None if buffer is None else buffer.reshape(-1).view(np.uint8)
            session = kind.codec.read(name, keys, *regions, view, *after, order)
            if session is None:
                return None
            assert isinstance(session, _core.ReadSession)
            await self._serve(session, perform, getters, nbytes)
            return (session.values(), session.present()) if buffer is None else session.present()

        return read

    async def _read_fixed(
        self,
        kind: _ChunkKind,
        out: np.ndarray,
        read: Callable[[np.ndarray | None, _Order], Awaitable[Any]],
    ) -> Any:
        """Which chunks exist, reading fixed-size elements into ``out`` with ``read(buffer,
        order)`` (a ``ChunkCodec.read`` of the batch): in Fortran order into ``out``'s
        memory (:func:`zarrox.values.fortran_memory`) when Rust reads the batch that way (else it
        returns None, having read nothing), else into ``out`` or a C-ordered copy."""
        fortran = fortran_memory(out, kind.dtype, kind.fortran_io)
        if fortran is not None:
            present = await read(fortran, "F")
            if present is not None:
                return present
        target = read_target(out, kind.dtype)
        present = await read(target, "C")
        finish_read(out, target)
        return present

    @staticmethod
    async def _serve(
        session: Any, perform: Any, getters: dict[str, _BatchItem], nbytes: int | None
    ) -> None:
        """Run a read session to its end (:func:`zarrox.storage.bridge.serve`), its later
        steps (decoding what arrived) inline or on a thread by the batch's size. Rounds
        after the first ask for byte ranges of a shard's inner chunks: on zarr-python >=
        3.3, one ``Store.get_ranges`` call per shard, as zarr-python's sharding codec makes
        (see :func:`_get_ranges`)."""

        async def later_rounds(requests: list[Any]) -> list[Any]:
            return await _ranges_round(requests, perform, getters)

        async def step(func: Any) -> Any:
            return await _run_blocking(nbytes, func)

        await serve(
            session, perform, later_rounds=later_rounds if STORES_GET_RANGES else None, step=step
        )

    @staticmethod
    def _place_var(out: np.ndarray, values: list[Any], out_sels: list[Any]) -> None:
        """Put variable-length values (the buffer's C order) where the chunks' regions
        (zarr-python's ``out_selection`` of each chunk) are."""
        result = var_array(values, out.shape)
        covered = np.zeros(out.shape, dtype=bool)
        for out_sel in out_sels:
            covered[out_sel] = True
        if covered.all():
            out[...] = result
        else:
            out[covered] = result[covered]

    # -- write ----------------------------------------------------------------------------
    async def write(
        self,
        batch_info: Iterable[tuple[ByteSetter, ArraySpec, Any, Any, bool]],
        value: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> None:
        items = list(batch_info)
        if not items:
            return
        try:
            await self._write(items, value, tuple(drop_axes))
        except _Fallback as e:
            await self._python_pipeline(str(e)).write(items, value, drop_axes)

    async def _write(
        self, items: list[_BatchItem], value: NDBuffer, drop_axes: tuple[int, ...]
    ) -> None:
        value_arr = value.as_ndarray_like()
        if not isinstance(value_arr, np.ndarray):
            raise _Fallback(f"the value is a {type(value_arr).__name__}, not a numpy array")
        for kind, group in self._groups(items):
            await self._write_group(kind, group, value_arr, drop_axes)

    async def _write_group(
        self,
        kind: _ChunkKind,
        items: list[_BatchItem],
        value: np.ndarray,
        drop_axes: tuple[int, ...],
    ) -> None:
        # zarr-python writes a 0-d value (and any one-element value into 0-d chunks) as is
        scalar = value.ndim == 0 or (not kind.shape and value.size == 1)
        # a Fortran-ordered value: Rust writes its memory with no chunk transposed when the
        # chunks are stored in Fortran order and the batch allows, else copies it to C order
        payload: Any
        fortran = False
        if kind.var is not None:
            if scalar:
                payload = var_item(value.reshape(-1)[0] if value.size else "", kind.utf8)
            else:
                payload = var_items(value, kind.utf8)
        elif scalar:
            # one value everywhere: any order will do
            payload, fortran = one_value(value, kind.dtype), kind.fortran_io
        else:
            payload, fortran = fixed_payload(value, kind.dtype, kind.fortran_io)
        value_shape = [] if scalar else list(value.shape)
        # One Rust call per write_empty_chunks setting (zarr-python uses one per array).
        for write_empty in (False, True):
            part = [i for i in items if bool(i[1].config.write_empty_chunks) == write_empty]
            if not part:
                continue
            args = (
                [bool(item[4]) for item in part],
                [item[2] for item in part],
                None if scalar else [item[3] for item in part],
                payload,
                value_shape,
                write_empty,
                *_zarr_form(drop_axes),
                "F" if fortran else "C",
            )
            rust = _rust_store(part) if kind.pickle is None else None
            if rust is None:
                await self._encode_and_store(kind, part, args)
                continue
            zarr_store, store = rust
            await _open(zarr_store)
            zarr_store._check_writable()
            network = isinstance(store, (RustObstoreStore, RustObjectStore))
            with _as_its_errors(store):
                await _run_native(
                    None if network else len(part) * kind.nbytes,
                    kind.codec.write,
                    kind.codec.write_async,
                    store.handle,
                    [item[0].path for item in part],
                    *args,
                )

    async def _encode_and_store(
        self, kind: _ChunkKind, items: list[_BatchItem], args: tuple[Any, ...]
    ) -> None:
        """Write a batch to a store served here (``args``: ``ChunkCodec.write``'s after the
        store and the keys): the write waits for the old chunks it needs."""
        keys = [str(getattr(item[0], "path", "")) for item in items]
        batch = kind.codec.write(repr(getattr(items[0][0], "store", "")), keys, *args)
        assert isinstance(batch, _core.WriteBatch)

        async def existing(item: _BatchItem, needed: bool) -> Any:
            if not needed:
                return None
            got = as_bytes(await item[0].get(prototype=item[1].prototype))
            return kind.unpickled(got, str(getattr(item[0], "path", "")))

        old = await gather_limited(
            [existing(item, needed) for item, needed in zip(items, batch.needs, strict=True)]
        )
        new = await _run_blocking(len(items) * kind.nbytes, batch.encode, old)

        async def store(item: _BatchItem, data: bytes | None) -> None:
            if data is None:
                await item[0].delete()
            else:
                await item[0].set(item[1].prototype.buffer.from_bytes(kind.pickled(data)))

        await gather_limited([store(item, data) for item, data in zip(items, new, strict=True)])

    # -- whole chunks ---------------------------------------------------------------------
    async def decode(
        self, chunk_bytes_and_specs: Iterable[tuple[Buffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        pairs = list(chunk_bytes_and_specs)
        try:
            return await self._decode(pairs)
        except _Fallback as e:
            return await self._python_pipeline(str(e)).decode(pairs)

    async def _decode(self, pairs: list[tuple[Buffer | None, ArraySpec]]) -> list[NDBuffer | None]:
        results: list[NDBuffer | None] = [None] * len(pairs)
        todo = [(i, s, b) for i, (b, s) in enumerate(pairs) if b is not None]
        for kind, group in self._groups(todo):
            stacked, chunk_sels, buf_sels = _stacked(kind.shape, len(group))
            keys = [f"#{i}" for i, _, _ in group]
            encoded = [
                kind.unpickled(as_bytes(b), k) for k, (_, _, b) in zip(keys, group, strict=True)
            ]
            if kind.var is not None:
                values, _ = await _run_blocking(
                    len(group) * kind.nbytes,
                    kind.codec.read,
                    encoded,
                    keys,
                    chunk_sels,
                    buf_sels,
                    None,
                    list(stacked),
                )
                arrays = var_array(values, stacked)
            else:
                arrays = np.empty(stacked, dtype=kind.dtype)
                await _run_blocking(
                    arrays.nbytes,
                    kind.codec.read,
                    encoded,
                    keys,
                    chunk_sels,
                    buf_sels,
                    arrays.reshape(-1).view(np.uint8),
                    list(stacked),
                )
            for k, (i, spec, _) in enumerate(group):
                # an ndarray is zarr-python's NDArrayLike (which some numpy stubs disagree on)
                chunk: Any = _unstack(arrays, kind.shape, k)
                if kind.var is not None:
                    chunk = chunk.astype(spec.dtype.to_native_dtype())
                results[i] = spec.prototype.nd_buffer.from_ndarray_like(chunk)
        return results

    async def encode(
        self, chunk_arrays_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[Buffer | None]:
        pairs = list(chunk_arrays_and_specs)
        try:
            return await self._encode(pairs)
        except _Fallback as e:
            return await self._python_pipeline(str(e)).encode(pairs)

    async def _encode(self, pairs: list[tuple[NDBuffer | None, ArraySpec]]) -> list[Buffer | None]:
        results: list[Buffer | None] = [None] * len(pairs)
        todo: list[tuple[int, ArraySpec, np.ndarray]] = []
        for i, (a, s) in enumerate(pairs):
            if a is None:
                continue
            self._kind(s)  # a chunk zarrox cannot run falls back for that reason first
            arr = a.as_ndarray_like()
            if not isinstance(arr, np.ndarray):
                raise _Fallback(f"the chunk is a {type(arr).__name__}, not a numpy array")
            todo.append((i, s, arr))
        for kind, group in self._groups(todo):
            stacked, chunk_sels, buf_sels = _stacked(kind.shape, len(group))
            parts = [np.broadcast_to(arr, kind.shape) for _, _, arr in group]
            payload: Any
            if kind.var is not None:
                payload = [v for p in parts for v in var_items(p, kind.utf8)]
            else:
                payload = np.concatenate([fixed_payload(p, kind.dtype, False)[0] for p in parts])
            keys = [f"#{i}" for i, _, _ in group]
            new = await _run_blocking(
                len(group) * kind.nbytes,
                kind.codec.write,
                [None] * len(group),
                keys,
                [False] * len(group),
                chunk_sels,
                buf_sels,
                payload,
                list(stacked),
                True,
            )
            for (i, spec, _), data in zip(group, new, strict=True):
                results[i] = (
                    None if data is None else spec.prototype.buffer.from_bytes(kind.pickled(data))
                )
        return results


async def _ranges_round(
    requests: list[Any], perform: Any, getters: dict[str, _BatchItem]
) -> list[Any]:
    """The answers to a round of byte-range requests: one :func:`_get_ranges` call per key
    read through a ``StorePath`` (the array's own chunks), one ``perform`` per request
    elsewhere (the inner chunks zarr-python's own sharding codec hands over)."""
    answers: list[Any] = [None] * len(requests)
    by_key: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        by_key.setdefault(r[2], []).append(i)

    async def one_key(key: str, at: list[int]) -> None:
        getter, spec = getters[key][0], getters[key][1]
        if isinstance(getter, StorePath) and all(requests[i][3] for i in at):
            got = await _get_ranges(getter, spec, [requests[i][3] for i in at])
        else:
            got = await gather_limited([perform(requests[i]) for i in at])
        for i, g in zip(at, got, strict=True):
            answers[i] = g

    await gather_limited([one_key(k, at) for k, at in by_key.items()])
    return answers


async def _get_ranges(getter: Any, spec: ArraySpec, args: list[Any]) -> list[Any]:
    """The byte ranges ``args`` (the engine's, see :func:`byte_request`) of one shard, in
    one ``Store.get_ranges`` call with the array's ``sharding_coalesce_max_gap_bytes`` and
    ``sharding_coalesce_max_bytes``, as zarr-python's sharding codec reads them. A shard
    gone since its index was read answers None everywhere (the engine reads its inner
    chunks as the fill value, as zarr-python does); other failures propagate."""
    cfg = spec.config
    kwargs = {
        "max_gap_bytes": getattr(
            cfg,
            "sharding_coalesce_max_gap_bytes",
            zarr_config.get("array.sharding_coalesce_max_gap_bytes", 1 << 20),
        ),
        "max_coalesced_bytes": getattr(
            cfg,
            "sharding_coalesce_max_bytes",
            zarr_config.get("array.sharding_coalesce_max_bytes", 16 << 20),
        ),
    }
    parts: list[Any] = [None] * len(args)
    try:
        async for group in getter.store.get_ranges(
            getter.path, [byte_request(a) for a in args], prototype=spec.prototype, **kwargs
        ):
            for i, buf in group:
                parts[i] = as_bytes(buf)
    except BaseExceptionGroup as eg:
        _, rest = eg.split(FileNotFoundError)
        if rest is not None:
            raise rest from None
        return [None] * len(args)
    return parts


def _stacked(shape: tuple[int, ...], n: int) -> tuple[tuple[int, ...], list[Any], list[Any]]:
    """A buffer holding ``n`` whole chunks one after another, and each chunk's region in it."""
    size: tuple[int, ...]
    if not shape:
        size = (n,)
        return size, [np.zeros(1, dtype=np.int64)] * n, [np.array([k]) for k in range(n)]
    c0 = shape[0]
    size = (n * c0, *shape[1:])
    full = [(0, s, 1) for s in shape]
    chunk_sels = [full] * n
    buf_sels = [[(k * c0, (k + 1) * c0, 1), *full[1:]] for k in range(n)]
    return size, chunk_sels, buf_sels


def _unstack(arrays: np.ndarray, shape: tuple[int, ...], k: int) -> np.ndarray:
    if not shape:
        return arrays[k : k + 1].reshape(())
    c0 = shape[0]
    return arrays[k * c0 : (k + 1) * c0]


register_pipeline(ZarroxCodecPipeline)
