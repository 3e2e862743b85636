"""xarray on zarrox: the ``engine="zarrox"`` backend, ``open_zarr`` and ``to_zarr``.

``xr.open_dataset(store, engine="zarrox")`` (and ``xr.open_datatree``) read Zarr v2 and v3
groups with zarrox's Rust core: the arrays stay lazy (``BackendArray`` with basic, outer and
vectorized indexing, one Rust call per selection), and everything else is xarray's own zarr
engine: the same variables, dimensions (``_ARRAY_DIMENSIONS`` in v2, ``dimension_names`` in
v3), attributes, encodings and CF decoding, because the store class here is xarray's
``ZarrStore`` with the zarr-python calls replaced by zarrox's.

``zarrox.xarray.to_zarr(ds, store, ...)`` writes a Dataset as ``Dataset.to_zarr`` does (same
arguments, modes, ``append_dim``, ``region``, encodings, consolidated metadata), through
zarrox. ``xr.open_zarr`` and ``Dataset.to_zarr`` always use zarr-python (they take zarrox
stores too, read and written through zarr-python), so use :func:`open_zarr` and
:func:`to_zarr` from here to have zarrox do the work.

NCZarr metadata (dimensions in ``.zarray``'s ``_NCZARR_ARRAY``) is not read. Writing goes
through xarray's zarr writer, which imports zarr-python, so writing needs it installed.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np
from xarray.backends.common import BackendEntrypoint, _normalize_path
from xarray.backends.store import StoreBackendEntrypoint
from xarray.backends.zarr import DIMENSION_KEY, ZarrArrayWrapper, ZarrStore
from xarray.core.utils import close_on_error

from zarrox.array import Array
from zarrox.group import Group
from zarrox.nodes.node import join
from zarrox.storage import Store

__all__ = [
    "ZarroxArrayWrapper",
    "ZarroxBackendEntrypoint",
    "ZarroxStore",
    "open_datatree",
    "open_dataset",
    "open_zarr",
    "to_zarr",
]


def _string_dtype(array: Array) -> Any:
    """numpy's StringDType for a v2 array of variable-length strings, which zarrox reads as
    objects and zarr-python (so xarray's zarr engine) as StringDType; else None."""
    string_dtype = getattr(np.dtypes, "StringDType", None)
    if string_dtype is None or array.dtype != object or array.metadata.data_type != "string":
        return None
    return string_dtype()


class ZarroxArrayWrapper(ZarrArrayWrapper):
    """A zarrox array as xarray's lazy ``BackendArray``: basic, outer (``oindex``) and
    vectorized (``vindex``) indexing, each one read through the Rust core; the awaitable
    forms run it off the event loop."""

    __slots__ = ("_strings",)

    def __init__(self, array: Array) -> None:
        super().__init__(array)
        self._strings = _string_dtype(array)
        if self._strings is not None:
            self.dtype = self._strings

    def _values(self, value: Any) -> Any:
        if self._strings is not None and isinstance(value, np.ndarray):
            return value.astype(self._strings)
        return value

    def _getitem(self, key: Any) -> Any:
        return self._values(self._array[key])

    def _oindex(self, key: Any) -> Any:
        return self._values(self._array.oindex[key])

    def _vindex(self, key: Any) -> Any:
        return self._values(self._array.vindex[key])

    async def _async_getitem(self, key: Any) -> Any:
        return self._values(await self._array.async_array.getitem(key))

    async def _async_oindex(self, key: Any) -> Any:
        return self._values(await self._array.async_array.oindex.getitem(key))

    async def _async_vindex(self, key: Any) -> Any:
        return self._values(await self._array.async_array.vindex.getitem(key))


def _open_group(store: Any, **kwargs: Any) -> Group:
    from zarrox.api import open_group

    if kwargs.get("storage_options") is None:
        kwargs.pop("storage_options", None)
    return open_group(store, **kwargs)


def _group_for(
    store: Any,
    *,
    mode: str,
    group: str | None,
    consolidated: bool | None,
    storage_options: dict[str, Any] | None,
    zarr_format: int | None,
) -> Group:
    """The zarrox group xarray's zarr engine would open for these arguments: through the
    consolidated metadata at the store's root when ``consolidated`` is True (required) or
    None (used when there, else a RuntimeWarning as xarray gives), else directly."""
    if isinstance(store, Group):
        root = store
        return root[group.strip("/")] if group and group.strip("/") else root  # type: ignore[return-value]
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    mode = "a" if mode == "a-" else mode
    common = dict(mode=mode, zarr_format=zarr_format, storage_options=storage_options)
    if consolidated is False:
        return _open_group(store, path=group, use_consolidated=False, **common)
    if consolidated:
        root = _open_group(store, use_consolidated=True, **common)
    else:
        try:
            root = _open_group(store, use_consolidated=True, **common)
        except (ValueError, FileNotFoundError) as e:
            if isinstance(e, FileNotFoundError) and mode == "r":
                raise
            root = _open_group(store, use_consolidated=False, **common)
            if mode == "r":
                warnings.warn(
                    "Failed to open Zarr store with consolidated metadata, but successfully "
                    "read with non-consolidated metadata. This is typically much slower for "
                    "opening a dataset. To silence this warning, consider:\n"
                    "1. Consolidating metadata in this existing store with "
                    "zarrox.consolidate_metadata().\n"
                    "2. Explicitly setting consolidated=False, to avoid trying to read "
                    "consolidate metadata, or\n"
                    "3. Explicitly setting consolidated=True, to raise an error in this case "
                    "instead of falling back to try reading non-consolidated metadata.",
                    RuntimeWarning,
                    4,
                )
    if group and group.strip("/"):
        node = root[group.strip("/")]
        if not isinstance(node, Group):
            raise ValueError(f"'{group}' is an array, not a group")
        return node
    return root


def _fill_value_as_mask(group: Group, use_zarr_fill_value_as_mask: bool | None) -> bool:
    if use_zarr_fill_value_as_mask is not None:
        return use_zarr_fill_value_as_mask
    # as xarray decides: v3 data does not mask its fill value, v2 data does
    return group.zarr_format != 3


class ZarroxStore(ZarrStore):
    """xarray's ``ZarrStore`` over a zarrox group: reading and writing variables, attributes,
    dimensions and encodings as xarray's zarr engine does, with zarrox doing the I/O."""

    __slots__ = ()

    @classmethod
    def open_group(  # type: ignore[override]
        cls,
        store: Any,
        mode: str = "r",
        group: str | None = None,
        consolidated: bool | None = False,
        consolidate_on_close: bool = False,
        storage_options: dict[str, Any] | None = None,
        append_dim: Hashable | None = None,
        write_region: Any = None,
        safe_chunks: bool = True,
        align_chunks: bool = False,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        write_empty: bool | None = None,
        cache_members: bool = True,
    ) -> ZarroxStore:
        zgroup = _group_for(
            store,
            mode=mode,
            group=group,
            consolidated=consolidated,
            storage_options=storage_options,
            zarr_format=zarr_format,
        )
        return cls(
            zgroup,
            mode,
            consolidate_on_close,
            append_dim,
            write_region,
            safe_chunks,
            write_empty,
            False,
            _fill_value_as_mask(zgroup, use_zarr_fill_value_as_mask),
            align_chunks=align_chunks,
            cache_members=cache_members,
        )

    @classmethod
    def open_store(  # type: ignore[override]
        cls,
        store: Any,
        mode: str = "r",
        group: str | None = None,
        consolidated: bool | None = False,
        consolidate_on_close: bool = False,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        **kwargs: Any,
    ) -> dict[str, ZarroxStore]:
        """One store per group below (and including) ``group``, by its path from the root
        ("/", "/a", "/a/b", ...), as xarray's DataTree reader wants them."""
        parent = "/" + (group or "").strip("/")
        root = _group_for(
            store,
            mode=mode,
            group=parent,
            consolidated=consolidated,
            storage_options=storage_options,
            zarr_format=zarr_format,
        )
        mask = _fill_value_as_mask(root, use_zarr_fill_value_as_mask)
        found = {parent: root}
        for rel, node in root.members(max_depth=None):
            if isinstance(node, Group):
                found[parent.rstrip("/") + "/" + rel] = node
        return {
            path: cls(g, mode, consolidate_on_close, None, None, True, None, False, mask)
            for path, g in found.items()
        }

    def array_keys(self) -> tuple[str, ...]:
        return tuple(k for k, node in self.members.items() if isinstance(node, Array))

    # zarrox's arrays where xarray's ZarrStore has zarr-python's (duck-typed alike)
    def arrays(self) -> tuple[tuple[str, Array], ...]:  # type: ignore[override]
        members: dict[str, Any] = self.members
        return tuple((k, node) for k, node in members.items() if isinstance(node, Array))

    def _check_dimensions(self, array: Array) -> None:
        # xarray's zarr engine would look for NCZarr metadata here, through zarr-python
        if array.zarr_format != 3 and DIMENSION_KEY not in array.attrs:
            raise KeyError(
                f"Zarr object is missing the attribute `{DIMENSION_KEY}`, which is required "
                "for xarray to determine variable dimensions (the zarrox engine does not "
                "read NCZarr metadata)."
            )

    def open_store_variable(self, name: str) -> Any:
        array = self.members[name]
        self._check_dimensions(array)  # type: ignore[arg-type]
        variable = super().open_store_variable(name)
        # the lazy array: zarrox's wrapper, with its awaitable indexing
        from xarray.core import indexing

        wrapper = ZarroxArrayWrapper(array)  # type: ignore[arg-type]
        variable._data = indexing.LazilyIndexedArray(wrapper)
        if wrapper.dtype.kind == "T":
            variable.encoding["dtype"] = wrapper.dtype
        return variable

    def get_dimensions(self) -> dict[Hashable, int]:
        for _, array in self.arrays():
            self._check_dimensions(array)
        return super().get_dimensions()  # type: ignore[no-any-return]

    def _open_existing_array(self, *, name: str) -> Array:  # type: ignore[override]
        if self._write_empty is not None:
            from zarrox.api import open_array

            return open_array(
                self.zarr_group.store,
                path=join(self.zarr_group.path, name),
                mode="r+",
                config={"write_empty_chunks": self._write_empty},
            )
        return self.zarr_group[name]  # type: ignore[no-any-return]

    def store(self, *args: Any, **kwargs: Any) -> None:
        consolidate, self._consolidate_on_close = self._consolidate_on_close, False
        try:
            super().store(*args, **kwargs)
        finally:
            self._consolidate_on_close = consolidate
        if consolidate:
            from zarrox.api import consolidate_metadata

            consolidate_metadata(
                self.zarr_group.store, zarr_format=self.zarr_group.metadata.zarr_format
            )

    def close(self) -> None:
        """Nothing to release: zarrox stores hold no open files between calls."""


def _decoded(store: ZarroxStore, **decode: Any) -> Any:
    """The dataset of ``store``, CF-decoded by xarray as its zarr engine decodes."""
    with close_on_error(store):
        return StoreBackendEntrypoint().open_dataset(store, **decode)


class ZarroxBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrox"``: Zarr v2 and v3 groups read through zarrox."""

    description = "Open Zarr stores (v2, v3) with zarrox's Rust core"
    url = "https://pypi.org/project/zarrox/"
    supports_groups = True
    open_dataset_parameters = (
        "filename_or_obj",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "drop_variables",
        "use_cftime",
        "decode_timedelta",
        "group",
        "mode",
        "consolidated",
        "storage_options",
        "zarr_format",
        "store",
        "use_zarr_fill_value_as_mask",
        "cache_members",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if isinstance(filename_or_obj, Store | Group):
            return True
        if isinstance(filename_or_obj, str | os.PathLike):
            _, ext = os.path.splitext(str(filename_or_obj).rstrip("/"))
            return ext == ".zarr"
        return False

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: Any = True,
        concat_characters: bool = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        store: ZarroxStore | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        cache_members: bool = True,
    ) -> Any:
        if not store:
            store = ZarroxStore.open_group(
                _normalize_path(filename_or_obj),
                group=group,
                mode=mode,
                consolidated=consolidated,
                consolidate_on_close=False,
                storage_options=storage_options,
                use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
                zarr_format=zarr_format,
                cache_members=cache_members,
            )
        return _decoded(
            store,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )

    def open_groups_as_dict(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
        **decode: Any,
    ) -> dict[str, Any]:
        """A dataset per group at or below ``group``, by path; ``decode`` are the CF decoding
        arguments of :meth:`open_dataset`."""
        from xarray.core.treenode import NodePath

        parent = str(NodePath("/") / NodePath(group)) if group else "/"
        stores = ZarroxStore.open_store(
            _normalize_path(filename_or_obj),
            group=parent,
            mode=mode,
            consolidated=consolidated,
            storage_options=storage_options,
            zarr_format=zarr_format,
            use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
        )
        return {
            str(NodePath(path).relative_to(parent)) if group else str(NodePath(path)): _decoded(
                node_store, **decode
            )
            for path, node_store in stores.items()
        }

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        from xarray.backends.common import datatree_from_dict_with_io_cleanup

        return datatree_from_dict_with_io_cleanup(
            self.open_groups_as_dict(filename_or_obj, **kwargs)
        )


def open_dataset(store: Any, **kwargs: Any) -> Any:
    """``xr.open_dataset(store, engine="zarrox", **kwargs)``."""
    import xarray as xr

    return xr.open_dataset(store, engine="zarrox", **kwargs)


def open_datatree(store: Any, **kwargs: Any) -> Any:
    """``xr.open_datatree(store, engine="zarrox", **kwargs)``."""
    import xarray as xr

    return xr.open_datatree(store, engine="zarrox", **kwargs)


def open_zarr(
    store: Any,
    group: str | None = None,
    chunks: Any = "default",
    consolidated: bool | None = None,
    storage_options: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    **kwargs: Any,
) -> Any:
    """``xr.open_zarr`` with the zarrox engine: the same defaults (variables as dask arrays
    in the stored chunks when dask is installed, consolidated metadata used when there)."""
    import xarray as xr

    if chunks == "default":
        try:
            import dask  # noqa: F401

            chunks = {}
        except ImportError:
            chunks = None
    backend_kwargs: dict[str, Any] = {"consolidated": consolidated, "zarr_format": zarr_format}
    if storage_options is not None:
        backend_kwargs["storage_options"] = storage_options
    return xr.open_dataset(
        store,
        engine="zarrox",
        group=group,
        chunks=chunks,
        backend_kwargs=backend_kwargs,
        **kwargs,
    )


def to_zarr(
    dataset: Any,
    store: Any = None,
    mode: str | None = None,
    group: str | None = None,
    encoding: Mapping[str, Any] | None = None,
    *,
    compute: bool = True,
    consolidated: bool | None = None,
    append_dim: Hashable | None = None,
    region: Any = None,
    safe_chunks: bool = True,
    align_chunks: bool = False,
    storage_options: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    write_empty_chunks: bool | None = None,
    chunkmanager_store_kwargs: dict[str, Any] | None = None,
) -> Any:
    """Write ``dataset`` to a Zarr store through zarrox, as ``dataset.to_zarr(store, ...)``
    writes it through zarr-python (same arguments and results: the store, or a dask
    ``Delayed`` with ``compute=False``). ``store`` is anything zarrox opens (a path, a URL,
    a zarrox store or group); ``None`` writes to a new in-memory store."""
    from xarray.backends.writers import (
        ArrayWriter,
        _validate_dataset_names,
        delayed_close_after_writes,
        dump_to_store,
    )
    from xarray.backends.zarr import _choose_default_mode

    from zarrox.storage import MemoryStore

    _validate_dataset_names(dataset)
    for variable in dataset.variables.values():
        if variable.size == 0:
            variable.load()  # zero-length dimensions: as xarray does
    chosen = _choose_default_mode(mode=mode, append_dim=append_dim, region=region)  # type: ignore[arg-type]
    if chosen == "r+":
        already_consolidated, consolidate_on_close = consolidated, False
    else:
        already_consolidated, consolidate_on_close = False, consolidated or consolidated is None
    zstore = ZarroxStore.open_group(
        MemoryStore() if store is None else store,
        mode=chosen,
        group=group,
        consolidated=already_consolidated,
        consolidate_on_close=consolidate_on_close,
        storage_options=storage_options,
        append_dim=append_dim,
        write_region=region,
        safe_chunks=safe_chunks,
        align_chunks=align_chunks,
        zarr_format=zarr_format,
        write_empty=write_empty_chunks,
    )
    dataset = zstore._validate_and_autodetect_region(dataset)
    zstore._validate_encoding(encoding or {})
    writer = ArrayWriter()
    try:
        dump_to_store(dataset, zstore, writer, encoding=encoding or {})
        writes = writer.sync(compute=compute, chunkmanager_store_kwargs=chunkmanager_store_kwargs)
    finally:
        if compute:
            zstore.close()
    if not compute:
        return delayed_close_after_writes(writes, zstore)
    return zstore
