"""What a user passes as a store (a path, a URL, a mapping, a store object of zarrox,
zarr-python or obstore, kerchunk references) resolved to a zarrox store."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from typing import Any

from zarrox.errors import StorageOptionsError
from zarrox.storage.base import Store
from zarrox.storage.local import LocalStore
from zarrox.storage.memory import MemoryStore
from zarrox.storage.object import RustObjectStore, _is_obstore, from_obstore
from zarrox.storage.options import SCHEMES
from zarrox.storage.zarr_python import _is_zarr_store, from_zarr_store
from zarrox.storage.zip import ZipStore


def resolve_store(
    store: Any, *, storage_options: Mapping[str, Any] | None = None, mode: str | None = None
) -> Store:
    """A store from what a user passes: a zarrox store, a zarr-python store object, None
    (a new memory store), a dict or other mutable mapping (a memory store keeping its
    values there, as zarr-python's ``MemoryStore(store_dict)``), a local path (``str`` or
    ``os.PathLike``; a path ending in ``.zip`` is a zip archive), or a URL: ``file://``,
    ``memory://``, ``zip://path.zip``, ``s3://``, ``gs://``, ``az://``/``abfs://``,
    ``http(s)://``; kerchunk references: ``reference://`` (their ``fo``,
    ``remote_protocol``, ``remote_options`` in ``storage_options``), a local ``.json``
    file of them or a dict of them (:class:`~zarrox.storage.references.ReferenceStore`).
    Otherwise ``storage_options`` apply to object store URLs only
    (:class:`~zarrox.errors.StorageOptionsError` otherwise, a TypeError as zarr-python
    raises and a ValueError). ``mode`` (zarr-python's ``r``/``r+``/``a``/``w``/``w-``)
    opens a zip archive."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if _references(store):
        from zarrox.storage.references import from_options

        if isinstance(store, str) and store.startswith("reference://"):
            return from_options(store, storage_options)
        return from_options("reference://", {**(storage_options or {}), "fo": store})
    if storage_options and not (isinstance(store, str) and _remote(store)):
        raise StorageOptionsError(
            "'storage_options' was provided but unused. 'storage_options' is only used "
            "when the store is passed as a URL of an object store (s3://, gs://, az://, "
            "http(s)://)."
        )
    if isinstance(store, Store):
        return store
    if store is None:
        return MemoryStore()
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if isinstance(store, bytes):
        store = store.decode()
    if isinstance(store, str):
        return _from_string(store, storage_options, mode)
    if isinstance(store, Mapping) and "driver" in store:
        raise TypeError("a TensorStore spec is opened with zarrox.open(spec)")
    if isinstance(store, MutableMapping):
        return MemoryStore(store)
    if _is_zarr_store(store):
        return from_zarr_store(store)
    if _is_obstore(store):
        return from_obstore(store)
    raise TypeError(f"cannot use {type(store).__name__} as a store")


def _references(store: Any) -> bool:
    """Whether ``store`` names kerchunk references: ``reference://``, a local ``.json``
    file, or a dict of references (see :func:`zarrox.storage.references.is_references`)."""
    if isinstance(store, str):
        if store.startswith("reference://"):
            return True
        if "://" in store:
            return False
        if store.lower().endswith(".json"):
            return os.path.isfile(store)
        return _parquet_references(store)
    if isinstance(store, Mapping) and not isinstance(store, Store):
        from zarrox.storage.references import is_references

        return is_references(store)
    return False


def _parquet_references(path: str) -> bool:
    """Whether ``path`` is a directory of kerchunk Parquet references: its ``.zmetadata``
    has their ``record_size`` (Zarr v2's consolidated metadata, also ``.zmetadata``, has
    not). A directory with a Zarr node at its top is a store: its ``.zmetadata``, which can
    be large, is not read here."""
    nodes = ("zarr.json", ".zgroup", ".zarray")
    if any(os.path.exists(os.path.join(path, name)) for name in nodes):
        return False
    try:
        with open(os.path.join(path, ".zmetadata"), "rb") as f:
            text = f.read()
    except OSError:  # not a directory, no .zmetadata
        return False
    if b'"record_size"' not in text:
        return False
    try:
        meta = json.loads(text)
    except ValueError:
        return False
    return isinstance(meta, dict) and "record_size" in meta and "metadata" in meta


def _remote(url: str) -> bool:
    return "://" in url and url.split("://", 1)[0].lower() in SCHEMES


def _zip_mode(mode: str | None) -> str:
    """The zip archive mode for zarr-python's access mode."""
    return {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "x", None: "a"}.get(mode, "a")


def _from_string(text: str, storage_options: Mapping[str, Any] | None, mode: str | None) -> Store:
    if text.startswith("memory://"):
        return MemoryStore()
    if text.startswith("zip://"):
        return ZipStore(text[len("zip://") :], _zip_mode(mode))
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif "://" in text:
        if _remote(text):
            return RustObjectStore(text, storage_options)
        raise ValueError(
            f"unsupported store URL {text!r}: use a local path, file://, memory://, zip://, "
            "s3://, gs://, az://, abfs:// or http(s)://"
        )
    if text.lower().endswith(".zip") and not os.path.isdir(text):
        return ZipStore(text, _zip_mode(mode))
    return LocalStore(text, read_only=mode == "r")
