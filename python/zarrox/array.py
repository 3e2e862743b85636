"""The user-facing Array, with zarr-python's names and semantics."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from zarrox import _core
from zarrox._nodes import METADATA_KEY, join
from zarrox.attributes import Attributes
from zarrox.config import config
from zarrox.errors import ReadOnlyError
from zarrox.indexing import Selection, basic_selection, is_fancy, orthogonal_selection
from zarrox.metadata import ArrayMetadataV3, dumps, fill_value_bytes
from zarrox.storage import Store


class OIndex:
    """``array.oindex[...]``: orthogonal (outer) indexing."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class Array:
    """A Zarr array in a store. Reads and writes go through the Rust core, one
    call per selection, in parallel over chunks."""

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadataV3,
        *,
        read_only: bool = False,
        config: dict[str, Any] | None = None,
    ) -> None:
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only
        self._config = dict(config or {})
        self._open_handle()

    def _open_handle(self) -> None:
        m = self._metadata
        self._handle = _core.ArrayHandle(
            self._store.handle,
            self._path,
            json.dumps(m.to_core_json()),
            fill_value_bytes(m.fill_value, m.dtype),
            self.write_empty_chunks,
        )

    # -- description -------------------------------------------------------
    @property
    def metadata(self) -> ArrayMetadataV3:
        return self._metadata

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    def _sharding_config(self) -> dict[str, Any] | None:
        codecs = self._metadata.codecs
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
        return self._metadata.dtype

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
        return str(self._config.get("order", config["array.order"]))

    @property
    def write_empty_chunks(self) -> bool:
        return bool(self._config.get("write_empty_chunks", config["array.write_empty_chunks"]))

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._metadata.dimension_names

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    @property
    def _attributes(self) -> dict[str, Any]:
        return self._metadata.attributes

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Number of stored objects (chunks, or shards) along each dimension."""
        grid = self._metadata.chunk_shape
        return tuple(-(-s // c) for s, c in zip(self.shape, grid, strict=True))

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def oindex(self) -> OIndex:
        return OIndex(self)

    def _save_metadata(self) -> None:
        self._check_writable()
        self._store.set(join(self._path, METADATA_KEY), dumps(self._metadata.to_json()))

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"array '{self._path}' is opened read-only")

    def __repr__(self) -> str:
        return f"<zarrox.Array {self.name} shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- reading -----------------------------------------------------------
    def _read(self, sel: Selection, out: np.ndarray | None = None) -> Any:
        if out is not None:
            if out.shape != sel.result_shape or out.dtype != self.dtype:
                raise ValueError(
                    f"out must have shape {sel.result_shape} and dtype {self.dtype}, "
                    f"got {out.shape} and {out.dtype}"
                )
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be a writeable C-contiguous array")
            buf = out.reshape(sel.buffer_shape)
        else:
            buf = np.empty(sel.buffer_shape, dtype=self.dtype)
        self._handle.read(sel.dims, buf.reshape(-1).view(np.uint8))
        result = buf.reshape(sel.result_shape)
        if out is not None:
            return out
        if self.order == "F" and result.ndim > 1:
            result = np.asfortranarray(result)
        if self.ndim == 0:
            return result[()]
        return result

    def __getitem__(self, selection: Any) -> Any:
        if is_fancy(selection):
            return self.get_orthogonal_selection(selection)
        return self.get_basic_selection(selection)

    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> Any:
        return self._read(basic_selection(selection, self.shape), out)

    def get_orthogonal_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        return self._read(orthogonal_selection(selection, self.shape), out)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = np.asarray(self[...])
        return a if dtype is None else a.astype(dtype, copy=False)

    # -- writing -----------------------------------------------------------
    def _write(self, sel: Selection, value: Any) -> None:
        self._check_writable()
        if math.prod(sel.buffer_shape) == 0:
            return
        arr = np.asarray(value)
        if arr.dtype != self.dtype:
            arr = arr.astype(self.dtype)
        try:
            arr = np.broadcast_to(arr, sel.result_shape)
        except ValueError:
            raise ValueError(
                f"could not broadcast value of shape {np.shape(value)} "
                f"into selection of shape {sel.result_shape}"
            ) from None
        buf = np.ascontiguousarray(arr.reshape(sel.buffer_shape))
        self._handle.write(sel.dims, buf.reshape(-1).view(np.uint8))

    def __setitem__(self, selection: Any, value: Any) -> None:
        if is_fancy(selection):
            self.set_orthogonal_selection(selection, value)
        else:
            self.set_basic_selection(selection, value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self._write(basic_selection(selection, self.shape), value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        sel = orthogonal_selection(selection, self.shape)
        for d in sel.dims:
            if isinstance(d, np.ndarray) and np.unique(d).size != d.size:
                # numpy semantics: the last of repeated assignments wins.
                return self._write_orthogonal_repeats(selection, value)
        self._write(sel, value)

    def _write_orthogonal_repeats(self, selection: Any, value: Any) -> None:
        # Reduce each index array to its unique indices, keeping the value at the
        # last occurrence, so each element is written once.
        sel = orthogonal_selection(selection, self.shape)
        arr = np.broadcast_to(np.asarray(value, dtype=self.dtype), sel.result_shape)
        arr = arr.reshape(sel.buffer_shape)
        dims: list[Any] = []
        for axis, d in enumerate(sel.dims):
            if isinstance(d, np.ndarray):
                rev = d[::-1]
                uniq, first_in_rev = np.unique(rev, return_index=True)
                take = d.size - 1 - first_in_rev
                arr = np.take(arr, take, axis=axis)
                dims.append(uniq)
            else:
                dims.append(d)
        self._check_writable()
        buf = np.ascontiguousarray(arr)
        self._handle.write(dims, buf.reshape(-1).view(np.uint8))
