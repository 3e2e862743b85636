"""The user-facing Array, with zarr-python's names and semantics."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from zarrox import _core
from zarrox._nodes import (
    NODE_KEYS,
    V2_ATTRS_KEY,
    ArrayMetadata,
    Node,
    is_legacy,
    join,
    read_only_message,
    write_node,
)
from zarrox.attributes import Attributes
from zarrox.config import config as global_config
from zarrox.errors import ReadOnlyError
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
from zarrox.metadata.dtypes import cast_values
from zarrox.metadata.v2 import ArrayMetadataV2
from zarrox.storage import Store


class OIndex:
    """``array.oindex[...]``: orthogonal (outer) indexing."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class VIndex:
    """``array.vindex[...]``: coordinate (points) and mask selection, like numpy's
    advanced indexing."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        if is_mask(selection, self._array.shape):
            return self._array.get_mask_selection(selection)
        return self._array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        if is_mask(selection, self._array.shape):
            self._array.set_mask_selection(selection, value)
        else:
            self._array.set_coordinate_selection(selection, value)


class BlockIndex:
    """``array.blocks[...]``: whole chunks by block index."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


class Array(Node):
    """A Zarr array in a store. Reads and writes go through the Rust core, one
    call per selection, in parallel over chunks. Arrays of the legacy formats (v1, the
    draft v3 layout) are always read-only."""

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
        self._read_only = read_only or is_legacy(metadata)
        # Like zarr-python, the array keeps the configuration in force when it was opened.
        given = dict(config or {})
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
        m = self._metadata
        core = m.to_core_json()
        #: elements of variable length (strings, bytes) go through read_var/write_var
        self._var_len = core["data_type"] in ("string", "bytes")
        fill = (
            fill_value_bytes(m.fill_value, m.dtype)
            if isinstance(m, ArrayMetadataV3)
            else m.fill_bytes()
        )
        self._core = core
        #: `a[...]` of integers and slices goes through one Rust call (`_read_plain`)
        self._plain_reads = not self._var_len and self._order == "C" and len(m.shape) > 0
        self._handle = _core.ArrayHandle(
            self._store.handle,
            # the draft v3 layout keeps chunks apart from the node's path
            getattr(m, "data_path", self._path),
            json.dumps(core),
            fill,
            self.write_empty_chunks,
        )

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
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape: inner chunks when the array is sharded."""
        sharding = self._sharding_config()
        if sharding is not None:
            return tuple(int(c) for c in sharding["chunk_shape"])
        return self._metadata.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape, or None when the array is not sharded."""
        return self._metadata.chunk_shape if self._sharding_config() is not None else None

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
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks, strict=True))

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
    def _grid_chunks(self) -> tuple[int, ...]:
        """The chunk grid's shape of one stored object (the shard shape when sharded)."""
        return self._metadata.chunk_shape

    @property
    def nchunks_initialized(self) -> int:
        """Number of stored chunks; for a sharded array, the chunks of the stored
        shards (as zarr-python counts them)."""
        return len(self._handle.stored_chunks()) * self._chunks_per_object

    @property
    def nshards(self) -> int:
        """Number of objects of the grid (shards when sharded, else chunks)."""
        return math.prod(-(-s // c) for s, c in zip(self.shape, self._grid_chunks, strict=True))

    @property
    def nshards_initialized(self) -> int:
        """Number of stored objects (shards when sharded, else chunks)."""
        return len(self._handle.stored_chunks())

    def nbytes_stored(self) -> int:
        """Bytes the array's chunks (and metadata) take in the store (a method, as in
        zarr-python)."""
        total = 0
        for key, _ in self._handle.stored_chunks():
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

    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the attributes with one metadata write."""
        self.attrs.update(new_attributes)
        return self

    def resize(self, *new_shape: int | tuple[int, ...]) -> None:
        """Change the shape. As zarr-python does, shrinking deletes the chunks (shards)
        now wholly out of bounds and nothing else: a chunk that straddles the new edge keeps
        its cells beyond it, which reappear if the array grows again before a write replaces
        the chunk (a write into a shard keeps them, see ``__setitem__``)."""
        self._check_writable()
        shape = (
            tuple(int(s) for s in new_shape[0])
            if len(new_shape) == 1 and isinstance(new_shape[0], tuple | list)
            else tuple(int(s) for s in new_shape)  # type: ignore[arg-type]
        )
        if len(shape) != self.ndim or any(s < 0 for s in shape):
            raise ValueError(f"new shape {shape} does not fit a {self.ndim}-d array")
        grid = self._grid_chunks
        new_grid = [-(-s // c) for s, c in zip(shape, grid, strict=True)]
        for key, coords in self._handle.stored_chunks():
            if any(c >= g for c, g in zip(coords, new_grid, strict=True)):
                self._store.delete(key)
        self._metadata.shape = shape
        self._save_metadata()
        self._open_handle()

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` and write ``data`` there; returns the new shape."""
        self._check_writable()
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
        old = self.shape[axis]
        new_shape = tuple(s + arr.shape[axis] if d == axis else s for d, s in enumerate(self.shape))
        self.resize(new_shape)
        region = tuple(slice(old, None) if d == axis else slice(None) for d in range(self.ndim))
        self[region] = arr
        return new_shape

    def _save_metadata(self) -> None:
        self._check_writable()
        write_node(self._store, self._path, self._metadata)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(read_only_message("array", self._path, self._metadata))

    def __repr__(self) -> str:
        return f"<zarrox.Array {self.name} shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- reading -----------------------------------------------------------
    def _read_var(self, sel: Selection) -> np.ndarray:
        items = self._handle.read_var(sel.dims)
        if self.dtype == object:
            arr = np.empty(len(items), dtype=object)
            arr[:] = items
        else:
            arr = np.array(items, dtype=self.dtype)
        return arr.reshape(sel.result_shape)

    def _read(self, sel: Selection, out: np.ndarray | None = None, *, basic: bool = False) -> Any:
        """The selected values. As in zarr-python, a basic selection of one element
        (every dimension an integer, or a 0-d array) gives a numpy scalar; every other
        selection an array, 0-d included."""
        if self._var_len:
            result = self._read_var(sel)
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
            if out.flags.c_contiguous:
                # Decoded straight into the caller's buffer.
                self._handle.read(sel.dims, out.reshape(-1).view(np.uint8))
            else:
                out[...] = self._read(sel)
            return out
        buf = np.empty(sel.buffer_shape, dtype=self.dtype)
        self._handle.read(sel.dims, buf.reshape(-1).view(np.uint8))
        result = buf.reshape(sel.result_shape)
        if self.order == "F" and result.ndim > 1:
            result = np.asfortranarray(result)
        if basic and not sel.result_shape:
            return result[()]
        return result

    def _read_plain(self, selection: Any) -> np.ndarray | None:
        """A plain basic selection (Python integers in bounds, slices with positive
        steps, one Ellipsis) read in one Rust call; None for anything else."""
        got = self._handle.read_basic(selection)
        if got is None:
            return None
        data, shape = got
        return data.view(self.dtype).reshape(shape)  # type: ignore[no-any-return]

    def __getitem__(self, selection: Any) -> Any:
        if self._plain_reads:
            result = self._read_plain(selection)
            if result is not None:
                if not result.shape and not is_orthogonal_basic(selection, self.ndim):
                    return result[()]  # e.g. a[1, ..., 2]: a basic selection
                return result
        if is_pure_fancy(selection, self.shape):
            return self.vindex[selection]
        if is_fancy(selection) or is_orthogonal_basic(selection, self.ndim):
            return self.get_orthogonal_selection(selection)
        return self.get_basic_selection(selection)

    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        if out is None and self._plain_reads:
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
        return self._read(block_selection(selection, self.shape, self._grid_chunks), out)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
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

    def _write_var(self, sel: Selection, value: Any) -> None:
        arr = self._broadcast(np.asarray(value, dtype=self.dtype), sel, value)
        self._handle.write_var(sel.dims, arr.reshape(-1).tolist())

    def _values(self, value: Any) -> np.ndarray:
        """``value`` as an array of this array's dtype, converted as zarr-python does:
        arrays are cast (``astype``, which wraps out-of-range integers as numpy does);
        Python scalars, lists and tuples are converted by ``np.asarray(value, dtype)``,
        which raises OverflowError for an integer out of range, ValueError for NaN into
        an integer type and TypeError for a complex into a real type, as numpy's
        ``a[i] = value`` does, instead of storing a wrapped or truncated value."""
        if isinstance(value, np.ndarray | np.generic):
            return value if value.dtype == self.dtype else cast_values(value, self.dtype)
        return np.asarray(value, dtype=self.dtype)

    def _write_scalar(self, sel: Selection, value: Any) -> bool:
        """Write one value to every selected element without building a
        selection-sized buffer. False (nothing written) when the value is not
        one element of this array's kind; the general path reports that."""
        one: Any
        if self._var_len:
            one = np.asarray(value, dtype=self.dtype).reshape(-1).tolist()[0]
            if not isinstance(one, (str, bytes)):
                return False
        else:
            one = self._values(value).tobytes()
        self._handle.write_scalar(sel.dims, one)
        return True

    def _write(self, sel: Selection, value: Any) -> None:
        self._check_writable()
        if math.prod(sel.buffer_shape) == 0:
            return
        if np.ndim(value) == 0 and self._write_scalar(sel, value):
            return
        if self._var_len:
            return self._write_var(sel, value)
        arr = self._broadcast(self._values(value), sel, value)
        buf = np.ascontiguousarray(arr.reshape(sel.buffer_shape))
        self._handle.write(sel.dims, buf.reshape(-1).view(np.uint8))

    def __setitem__(self, selection: Any, value: Any) -> None:
        if is_pure_fancy(selection, self.shape):
            self.vindex[selection] = value
        elif is_fancy(selection):
            self.set_orthogonal_selection(selection, value)
        else:
            self.set_basic_selection(selection, value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
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
        self._write(block_selection(selection, self.shape, self._grid_chunks), value)


class ArrayInfo:
    """What ``Array.info`` shows."""

    def __init__(self, array: Array) -> None:
        a = array
        self.type = "Array"
        self.name = a.name
        self.zarr_format = a.zarr_format
        self.data_type = a.metadata.data_type
        self.dtype = a.dtype
        self.shape = a.shape
        self.chunks = a.chunks
        self.shards = a.shards
        self.fill_value = a.fill_value
        self.read_only = a.read_only
        self.store = repr(a.store)
        # The chain the core runs, whatever the format described it as.
        self.codecs = [str(c["name"]) for c in a._core["codecs"]]
        self.nbytes = a.nbytes
        self.nbytes_stored = a.nbytes_stored()
        self.nobjects_initialized = a.nshards_initialized
        self.nobjects = a.nshards
        self.attributes = len(a.attrs)

    @property
    def compression_ratio(self) -> float:
        return self.nbytes / self.nbytes_stored if self.nbytes_stored else float("nan")

    def __repr__(self) -> str:
        rows = [
            ("Type", self.type),
            ("Name", self.name),
            ("Zarr format", self.zarr_format),
            ("Data type", f"{self.data_type} ({self.dtype})"),
            ("Shape", self.shape),
            ("Chunk shape", self.chunks),
            ("Shard shape", self.shards if self.shards is not None else "not sharded"),
            ("Fill value", repr(self.fill_value)),
            ("Codecs", ", ".join(self.codecs)),
            ("Read-only", self.read_only),
            ("Store", self.store),
            ("Attributes", self.attributes),
            ("Stored objects", f"{self.nobjects_initialized} of {self.nobjects}"),
            ("No. bytes", f"{self.nbytes} ({_human(self.nbytes)})"),
            ("No. bytes stored", f"{self.nbytes_stored} ({_human(self.nbytes_stored)})"),
            ("Compression ratio", f"{self.compression_ratio:.2f}"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}} : {v}" for k, v in rows)

    __str__ = __repr__


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TiB"
