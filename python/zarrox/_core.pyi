"""Type stubs of ``zarrox._core``, the compiled Rust extension (rust/python/*.rs).

The bindings only: argument conversion, GIL release and error mapping. Errors are raised as
the ``zarrox.errors`` classes. Keep in step with the ``#[pyfunction]``, ``#[pyclass]`` and
``#[pymethods]`` items there (tests/test_typing.py checks that every public name of the
compiled module is declared here).
"""

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from os import PathLike
from typing import Any, Literal, TypeAlias, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

__version__: str

# Encoded chunks as Rust takes them: bytes or any buffer; None where there is none.
_Encoded = Iterable[Buffer | None]
# The bytes of an array of values: a C-contiguous one-dimensional uint8 view.
_U8 = npt.NDArray[np.uint8]
# A value to write: a uint8 view of fixed-size elements (as `_U8`), one element's bytes or
# a string (written to every selected element), or variable-length items.
_Value = _U8 | bytes | str | Sequence[str | bytes]
# A chunk's region as Python describes it: a tuple of slices (and, for zarr-python's
# pipeline, integer arrays) per chunk.
_Regions = Sequence[Any]
# A request of a read session: (id, "get" | "set" | "delete", key, argument).
_Request = tuple[int, str, str, Any]
# The memory order of a buffer read into or written from.
_Order = Literal["C", "F"]
# Where a batch's chunks are: a store (Rust's, or `StoreHandle.caller`), the name of a store
# Python reads and writes itself, or the encoded chunks in hand.
_Chunks: TypeAlias = "StoreHandle | str | _Encoded"
# What a read returns: which chunks exist (into a buffer); (the variable-length values,
# which chunks exist); or the session that reads a store Python reads itself.
_ReadDone: TypeAlias = "list[bool] | tuple[list[Any], list[bool]] | ReadSession"

def set_num_threads(n: int) -> None:
    """Set the number of worker threads (0: one per core)."""

def get_num_threads() -> int:
    """The number of worker threads batches use."""

def set_io_concurrency(n: int) -> None:
    """Set the number of requests kept in flight on object stores (0: the default)."""

def set_conditional_writes(mode: str) -> None:
    """Set when writes that merge into stored values are conditional: "auto", "require"
    or "off" (``io.conditional_writes``)."""

def get_conditional_writes() -> str:
    """The ``io.conditional_writes`` mode in force."""

def write_retries() -> int:
    """How many chunk merges of this process lost a race and were tried again."""

def shard_index_cache() -> dict[str, int]:
    """The shard index cache of this process: entries, bytes, limit (bytes), hits, misses."""

def set_chunk_cache(bytes: int, recheck: str, seconds: float) -> None:
    """Configure the decoded-chunk cache: budget (0: off), recheck "always", "never", "open"
    or "within" ``seconds``."""

def chunk_cache() -> dict[str, int]:
    """The decoded-chunk cache of this process: entries, bytes, limit (bytes), hits, misses."""

class CachePool:
    """A pool of cached chunks with its own budget (a TensorStore spec's ``cache_pool``), and
    when the arrays given it check their chunks (``None``: ``cache.recheck``)."""

    def __new__(
        cls, total_bytes_limit: int, recheck: str | None = None, seconds: float = 0.0
    ) -> CachePool: ...
    def with_recheck(self, recheck: str | None = None, seconds: float = 0.0) -> CachePool: ...
    def stats(self) -> dict[str, int]: ...

def decode_stored_chunks(array: ArrayHandle) -> tuple[int, int]:
    """The benchmarks' decode floor: every stored chunk fetched and decoded, nothing placed:
    (chunks decoded, decoded bytes)."""

def encode_floor(array: ArrayHandle, repeat: int) -> tuple[int, int, list[float]]:
    """The benchmarks' compression floor: every stored chunk decoded once, then encoded
    ``repeat`` times, nothing stored: (chunks, encoded bytes, seconds of each pass)."""

def get_io_concurrency() -> int:
    """The number of requests kept in flight on object stores."""

def memory_items(store: StoreHandle) -> dict[str, bytes]:
    """Every key and value of an in-memory store (to pickle it)."""

def fortran_to_c(src: _U8, dst: _U8, shape: Sequence[int], itemsize: int) -> None:
    """Write into ``dst`` the elements ``src`` holds in Fortran order, in C order."""

def codec_configuration(codec: str, item_size: int) -> str:
    """The complete configuration (JSON) of one codec (JSON) for ``item_size``-byte
    elements."""

def numcodecs_members(id: str) -> list[str] | None:
    """The members numcodecs' ``get_config()`` gives for codec ``id``, or None."""

def codec_registry() -> str:
    """The codec registry (JSON): one entry per codec with its name, kind, members (types,
    ranges), numcodecs members and v2 id, nullable members, whether its encoded size is
    fixed, how zarr-python writes it and the members TensorStore takes."""

def codec_chain(
    codecs: object,
    data_type: dict[str, Any],
    chunks: tuple[int | None, list[int] | None],
    at: str,
    fill: bool,
    form: str,
    numeric: Callable[..., tuple[dict[str, Any], dict[str, Any] | None]],
) -> list[dict[str, Any]]:
    """The codec chain ``codecs`` checked against chunks of the data type whose facts
    ``data_type`` gives and ``(ndim, chunk_shape)``, completed with ``fill``, in ``form``
    (``"json"``, ``"normalized"``, ``"core"``); messages start with ``at``. ``numeric`` gives
    ``scale_offset``'s and ``cast_value``'s configurations."""

def chunks_per_shard(shard_shape: list[int], inner_shape: list[int]) -> list[int] | None:
    """The inner chunks per shard along each dimension, or None unless the inner chunk shape
    has the shard's dimensions and divides it (the sharding codec's rule)."""

def chunk_key_encoding(name: str, configuration: str) -> str:
    """The complete v3 ``chunk_key_encoding`` (JSON) of a name and configuration (JSON)."""

def data_type_size(core_json: str) -> int:
    """The size in bytes of an element of a core data type (JSON); 0 for variable length."""

def float_format_size(name: str) -> int:
    """The size in bytes of a float format (``float16``, ``bfloat16``, ...)."""

@final
class StoreHandle:
    """A store: read and written by Rust, or (``caller``) by the Python layer."""

    @staticmethod
    def local(root: str | PathLike[str], fsync: bool = False) -> StoreHandle: ...
    @staticmethod
    def memory() -> StoreHandle: ...
    @staticmethod
    def zip(path: str | PathLike[str], mode: str) -> StoreHandle: ...
    @staticmethod
    def object(url: str, options: Sequence[tuple[str, str]]) -> StoreHandle: ...
    @staticmethod
    def obstore(store: Any, url: str) -> StoreHandle: ...
    @staticmethod
    def references(
        name: str,
        json: str,
        protocol: str | None = None,
        options: Sequence[tuple[str, str]] = (),
        coalesce_gap: int | None = None,
        max_request: int = 0,
        records: tuple[
            StoreHandle,
            int,
            Sequence[tuple[str, Sequence[int]]],
            Callable[
                [str, bytes, int],
                tuple[
                    Sequence[str | None],
                    Sequence[int | None],
                    Sequence[int | None],
                    Sequence[bytes | None],
                ],
            ],
        ]
        | None = None,
        prefixes: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
    ) -> StoreHandle: ...
    @staticmethod
    def caller(name: str) -> StoreHandle: ...
    @property
    def in_rust(self) -> bool: ...
    @property
    def concurrent(self) -> bool: ...
    def op_async(
        self,
        op: str,
        key: str = "",
        value: Buffer | None = None,
        start: int = 0,
        length: int | None = None,
        generation: str | None = None,
    ) -> asyncio.Future[Any]: ...
    def remove_temporaries(self, older_than: float) -> int: ...
    def bytes_in_memory(self) -> int | None: ...
    def location(self, key: str) -> str: ...
    def get(self, key: str) -> bytes | None: ...
    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None: ...
    def set(self, key: str, value: Buffer) -> None: ...
    def delete(self, key: str) -> None: ...
    def conditional_writes(self) -> bool:
        """Whether writes to this store can be conditional on a generation (asked of an
        object store's server once)."""
    def get_versioned(self, key: str) -> tuple[bytes | None, str]:
        """``(value or None, generation)``: an opaque token for ``set_if``/``delete_if``."""
    def set_if(self, key: str, value: Buffer, generation: str) -> bool:
        """Store ``value`` if the key's generation is still ``generation``."""
    def delete_if(self, key: str, generation: str) -> bool:
        """Remove the key if its generation is still ``generation``."""
    def exists(self, key: str) -> bool: ...
    def list_prefix(self, prefix: str) -> list[str]: ...
    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]: ...
    def delete_prefix(self, prefix: str) -> None: ...
    def flush(self) -> None: ...

@final
class ReadSession:
    """A read from a store Python reads itself: ``step()`` returns the requests to fetch,
    ``answer(ids, values)`` takes what was fetched; done when ``step()`` returns none."""

    def step(self) -> list[_Request]: ...
    def answer(self, ids: Sequence[int], values: _Encoded) -> None: ...
    def present(self) -> list[bool]: ...
    def values(self) -> list[Any]: ...

@final
class WriteBatch:
    """A write to a store Python writes itself: fetch the old chunks ``needs`` names, then
    ``encode(old)`` gives the new bytes per chunk (None: delete)."""

    @property
    def keys(self) -> list[str]: ...
    @property
    def needs(self) -> list[bool]: ...
    def encode(self, old: _Encoded) -> list[bytes | None]: ...

@final
class Selection:
    """A normalised selection of an array."""

    @staticmethod
    def basic(selection: Any, shape: Sequence[int]) -> Selection: ...
    @staticmethod
    def orthogonal(selection: Any, shape: Sequence[int]) -> Selection: ...
    @staticmethod
    def coordinate(selection: Any, shape: Sequence[int]) -> Selection: ...
    @staticmethod
    def mask(selection: Any, shape: Sequence[int]) -> Selection: ...
    @staticmethod
    def block(
        selection: Any, shape: Sequence[int], grid: Iterable[int | Sequence[Sequence[int]]]
    ) -> Selection: ...
    @property
    def buffer_shape(self) -> tuple[int, ...]: ...
    @property
    def is_orthogonal(self) -> bool: ...
    @property
    def result_shape(self) -> tuple[int, ...]: ...

INDEX_INF: int

@final
class Dim:
    def __new__(
        cls,
        inclusive_min: int,
        inclusive_max: int,
        implicit_lower: bool = False,
        implicit_upper: bool = False,
        label: str = "",
    ) -> Dim: ...
    inclusive_min: int
    inclusive_max: int
    exclusive_max: int
    implicit_lower: bool
    implicit_upper: bool
    label: str
    finite: bool
    size: int
    constraint: tuple[int, int]
    def shifted(self, delta: int) -> Dim: ...
    def with_inclusive_max(self, inclusive_max: int) -> Dim: ...

@final
class IndexDomain:
    def __new__(cls, dims: Sequence[Dim]) -> IndexDomain: ...
    @staticmethod
    def from_shape(
        shape: Sequence[int], *, implicit_upper: bool = False, labels: Sequence[str] = ()
    ) -> IndexDomain: ...
    @staticmethod
    def labels_of(names: Sequence[str | None] | None, rank: int) -> list[str]: ...
    @staticmethod
    def merge(a: IndexDomain | None, b: IndexDomain | None, at: str) -> IndexDomain | None: ...
    @staticmethod
    def from_json(value: object, at: str = "domain", *, prefix: str = "") -> IndexDomain: ...
    def to_json(self, prefix: str = "") -> dict[str, Any]: ...
    rank: int
    ndim: int
    dims: tuple[Dim, ...]
    labels: tuple[str, ...]
    inclusive_min: tuple[int, ...]
    origin: tuple[int, ...]
    exclusive_max: tuple[int, ...]
    inclusive_max: tuple[int, ...]
    shape: tuple[int, ...]
    implicit_lower_bounds: tuple[bool, ...]
    implicit_upper_bounds: tuple[bool, ...]
    finite: bool
    def __getitem__(self, key: int | str) -> Dim: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Dim]: ...

@final
class OutputMap:
    def __new__(
        cls,
        offset: int = 0,
        stride: int = 1,
        input_dimension: int | None = None,
        index_array: np.ndarray | None = None,
    ) -> OutputMap: ...
    offset: int
    stride: int
    input_dimension: int | None
    index_array: np.ndarray | None
    is_constant: bool
    def to_json(self) -> dict[str, Any]: ...

@final
class IndexTransform:
    def __new__(
        cls, domain: IndexDomain, output: Sequence[OutputMap] | None = None
    ) -> IndexTransform: ...
    @staticmethod
    def identity(domain: IndexDomain) -> IndexTransform: ...
    @staticmethod
    def from_json(value: object, at: str = "transform") -> IndexTransform: ...
    def to_json(self) -> dict[str, Any]: ...
    domain: IndexDomain
    output: tuple[OutputMap, ...]
    is_identity_maps: bool
    input_rank: int
    output_rank: int
    def compose(self, inner: IndexTransform) -> IndexTransform: ...
    def permutation(self) -> list[int] | None: ...
    def index(
        self, terms: tuple[Any, ...], selected: list[int], allow_newaxis: bool
    ) -> tuple[IndexTransform, list[int]]: ...
    def translate(self, dims: list[int], values: list[int | None], to: bool) -> IndexTransform: ...
    def label(self, dims: list[int], names: list[str]) -> IndexTransform: ...
    def stride(self, dims: list[int], strides: list[int]) -> IndexTransform: ...
    def reorder(self, perm: list[int]) -> IndexTransform: ...
    def move_dims(
        self, dims: list[int], targets: list[int]
    ) -> tuple[IndexTransform, list[int]]: ...
    def bounds(self, shape: Sequence[int]) -> list[tuple[int, int]]: ...
    def output_ranges(self, shape: Sequence[int]) -> list[tuple[int, int]]: ...
    def selection(self, shape: Sequence[int], steps: list[int] | None = None) -> Selection: ...

@final
class ChunkGrid:
    @staticmethod
    def from_json(value: object, at: str = "grid") -> ChunkGrid: ...
    def to_json(self) -> dict[str, Any]: ...
    shape: list[int] | None
    shape_hard: list[bool] | None
    aspect_ratio: list[float] | None
    aspect_ratio_hard: list[bool] | None
    elements: int | None
    elements_hard: bool
    empty: bool
    def hard_shape(self) -> list[int] | None: ...

@final
class RectilinearGrid:
    def __new__(
        cls, chunk_shapes: Sequence[int | Sequence[int | Sequence[int]]]
    ) -> RectilinearGrid: ...
    @staticmethod
    def from_edges(dims: Sequence[int | Sequence[int]]) -> RectilinearGrid: ...
    @property
    def dims(self) -> tuple[int | tuple[tuple[int, int], ...], ...]: ...
    @staticmethod
    def from_json(configuration: object, shape: Sequence[int], prefix: str) -> RectilinearGrid: ...
    def to_json(self) -> dict[str, Any]: ...
    def core_json(self) -> list[Any]: ...
    def nchunks(self, d: int, extent: int) -> int: ...
    def grid_shape(self, shape: Sequence[int]) -> tuple[int, ...]: ...
    def chunk(self, d: int, c: int) -> tuple[int, int]: ...
    def data_sizes(self, d: int, extent: int) -> tuple[int, ...]: ...
    def distinct_edges(self, d: int) -> list[int]: ...
    def first_chunk_shape(self) -> tuple[int, ...]: ...
    def resized(self, shape: Sequence[int]) -> RectilinearGrid: ...

@final
class ChunkLayout:
    def __new__(
        cls,
        rank: int | None = None,
        *,
        grid_origin: Sequence[int] | None = None,
        inner_order: Sequence[int] | None = None,
        write_chunk_shape: Sequence[int] | None = None,
        read_chunk_shape: Sequence[int] | None = None,
    ) -> ChunkLayout: ...
    @staticmethod
    def from_json(value: object, at: str = "chunk_layout") -> ChunkLayout: ...
    def to_json(self) -> dict[str, Any]: ...
    def merge(self, other: ChunkLayout, at: str = "chunk_layout") -> ChunkLayout: ...
    def permuted(
        self, perm: Sequence[int], offsets: Sequence[int], at: str = "chunk_layout"
    ) -> ChunkLayout: ...
    def choose_read_write_chunk_shapes(
        self, domain_shape: Sequence[int], read_is_write: bool = False
    ) -> tuple[list[int], list[int]]: ...
    def choose_chunk_shape(self, domain_shape: Sequence[int]) -> list[int]: ...
    rank: int | None
    grid_origin: list[int | None] | None
    grid_origin_hard: list[bool] | None
    inner_order: list[int] | None
    inner_order_hard: bool
    write_chunk: ChunkGrid
    read_chunk: ChunkGrid
    codec_chunk: ChunkGrid

@final
class CodecChainSpec:
    """A partial zarr v3 codec chain, as TensorStore's ``zarr3`` driver takes it."""

    def __new__(cls) -> CodecChainSpec: ...
    @staticmethod
    def from_json(value: object, at: str = "codecs", complete: bool = False) -> CodecChainSpec: ...
    @staticmethod
    def from_schema_codec(codec: object | None, at: str = "schema") -> CodecChainSpec | None: ...
    def to_json(self) -> list[dict[str, Any]]: ...
    @property
    def has_sharding(self) -> bool: ...
    def merge(
        self, other: CodecChainSpec, at: str, strict: bool, rank: int | None = None
    ) -> CodecChainSpec: ...
    def decoded_layout(self, rank: int) -> tuple[list[int] | None, list[int] | None, bool]: ...
    def resolve_new(
        self,
        item_size: int,
        chunk_shape: Sequence[int],
        read_chunk_shape: Sequence[int],
        inner_order: Sequence[int] | None = None,
    ) -> list[dict[str, Any]]: ...

def codecs_with_index_location(codecs: Any) -> Any: ...

@final
class ArrayHandle:
    """An opened array: reads and writes whole selections in one call."""

    def __new__(
        cls,
        store: StoreHandle,
        path: str,
        metadata_json: str,
        fill_value: bytes,
        write_empty_chunks: bool = False,
        cache: CachePool | None = None,
    ) -> ArrayHandle: ...
    def cache_stats(self) -> dict[str, int]: ...
    def delete_chunks(self, keys: list[str]) -> None: ...
    @property
    def in_rust(self) -> bool: ...
    @property
    def fortran_chunks(self) -> bool: ...
    def read(
        self, selection_: Selection, out: _U8 | None = None, order: _Order = "C"
    ) -> _ReadDone: ...
    def read_basic(self, selection_: Any, dtype: np.dtype[Any]) -> np.ndarray | None: ...
    def write_basic(self, selection_: Any, value: Any, dtype: np.dtype[Any]) -> bool: ...
    def stage_basic(
        self, selection_: Any, value: Any, dtype: np.dtype[Any], marks: ArrayHandle
    ) -> list[list[int]] | None: ...
    def write(
        self, selection_: Selection, value: _Value, order: _Order = "C"
    ) -> WriteBatch | None: ...
    def read_async(
        self, selection_: Selection, out: _U8 | None = None, order: _Order = "C"
    ) -> asyncio.Future[Any]:
        """``read`` of a store Rust reads as a future of the running loop that the engine
        completes (which chunks exist, or (values, which chunks exist)); ``out`` is held
        until it is done. Cancelling it cancels the read."""
    def write_async(
        self, selection_: Selection, value: _Value, order: _Order = "C"
    ) -> asyncio.Future[None]:
        """``write`` to a store Rust writes as a future the engine completes."""
    def chunk_key(self, coords: Sequence[int]) -> str: ...
    def stored_chunks(self) -> list[tuple[str, list[int]]]: ...
    def chunk_coords(self, keys: Sequence[str]) -> list[tuple[str, list[int]]]: ...

@final
class ChunkCodec:
    """A codec chain for zarr-python's codec pipeline: decodes and encodes batches of
    chunks, and reads and writes them from and to a store."""

    def __new__(
        cls, codecs_json: str, chunk_shape: Sequence[int], data_type_json: str, fill_value: bytes
    ) -> ChunkCodec: ...
    @property
    def fortran_chunks(self) -> bool: ...
    @property
    def chunk_shape(self) -> list[int]: ...
    @property
    def sharded(self) -> bool: ...
    @property
    def writes_in_part(self) -> bool: ...
    def read(
        self,
        chunks: _Chunks,
        keys: Sequence[str],
        chunk_selections: _Regions,
        out_selections: _Regions,
        out: _U8 | None,
        out_shape: Sequence[int],
        drop_axes: Sequence[int] | None = None,
        generic: Any = None,
        order: _Order = "C",
    ) -> _ReadDone | None: ...
    def write(
        self,
        chunks: _Chunks,
        keys: Sequence[str],
        complete: Sequence[bool],
        chunk_selections: _Regions,
        value_selections: _Regions | None,
        value: _Value,
        value_shape: Sequence[int],
        write_empty: bool,
        drop_axes: Sequence[int] | None = None,
        generic: Any = None,
        order: _Order = "C",
    ) -> WriteBatch | list[bytes | None] | None: ...
    def read_async(
        self,
        chunks: StoreHandle,
        keys: Sequence[str],
        chunk_selections: _Regions,
        out_selections: _Regions,
        out: _U8 | None,
        out_shape: Sequence[int],
        drop_axes: Sequence[int] | None = None,
        generic: Any = None,
        order: _Order = "C",
    ) -> asyncio.Future[Any] | None:
        """``read`` of a store Rust reads as a future the engine completes; None at once
        where ``read`` returns None."""
    def write_async(
        self,
        chunks: StoreHandle,
        keys: Sequence[str],
        complete: Sequence[bool],
        chunk_selections: _Regions,
        value_selections: _Regions | None,
        value: _Value,
        value_shape: Sequence[int],
        write_empty: bool,
        drop_axes: Sequence[int] | None = None,
        generic: Any = None,
        order: _Order = "C",
    ) -> asyncio.Future[None]:
        """``write`` to a store Rust writes as a future the engine completes."""

def write_many(
    writes: Sequence[tuple[ArrayHandle, Selection, _Value, _Order, str]],
) -> list[Exception | None]:
    """Every (array, selection, value, order, where the array is) written at once (stores
    Rust writes), each read-modify-write conditional on the generation it read; one entry
    per write once all have ended: None, or its error (beginning with where its array is)."""

def write_many_async(
    writes: Sequence[tuple[ArrayHandle, Selection, _Value, _Order, str]],
) -> asyncio.Future[list[Exception | None]]:
    """``write_many`` as a future the engine completes."""

def read_many(reads: list[tuple[ArrayHandle, Selection, _U8, _Order, str]]) -> None:
    """Every (array, selection, uint8 view of the result, order, where the array is) read
    at once (stores Rust reads); the first read's error, beginning with where its array
    is, raised once all have ended."""
