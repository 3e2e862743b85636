"""Stores: where keys and bytes live.

Local directories, memory, zip archives and object stores (S3, GCS, Azure, HTTP) are
implemented in Rust: the engine reads and writes them itself, with many requests in flight
on object stores. A zarr-python store object that has no Rust equivalent (its
``ZipStore``, ``FsspecStore``, ``MemoryStore``, wrappers) is served from Python: the engine
hands out its requests in rounds (:mod:`zarrox.storage.bridge`).

A store's name says who does its I/O: ``Rust...`` stores are read and written by the engine
(:class:`RustObjectStore` over a URL, :class:`RustObstoreStore` over an obstore S3, GCS,
Azure or HTTP store object), ``Python...`` stores by Python serving the engine's requests
(:class:`PythonServedStore`, the base of :class:`PythonObstoreStore` over an obstore store
only its own extension reaches and :class:`PythonZarrStore` over a zarr-python store).
The older names stay importable: ``ObjectStore`` (``RustObjectStore``; given an obstore store
object it answers a ``RustObstoreStore`` or ``PythonObstoreStore``), ``ObstoreStore``,
``ObstorePythonStore``, ``PythonStore`` and ``ServedStore``.

:func:`resolve_store` turns what a user passes (a path, a URL, a store object) into a store.
Every store pickles: a URL and the options given (never credentials read from the
environment), a memory store's contents, a zarr-python store object itself.
"""

from __future__ import annotations

from zarrox.storage.base import Store, warn_ranges_ignored
from zarrox.storage.local import LocalStore
from zarrox.storage.memory import DictMemoryStore, MemoryStore
from zarrox.storage.object import (
    PythonObstoreStore,
    RustObjectStore,
    RustObstoreStore,
    from_obstore,
)
from zarrox.storage.references import ReferenceStore
from zarrox.storage.resolve import resolve_store
from zarrox.storage.served import PythonServedStore
from zarrox.storage.zarr_python import PythonZarrStore, from_zarr_store
from zarrox.storage.zip import ZipStore

# isort: split
# the reducers that pickles made before the stores had modules of their own name here
from zarrox.storage.local import _local_store as _local_store
from zarrox.storage.memory import _memory_store as _memory_store
from zarrox.storage.object import _object_store as _object_store

#: The names these stores had before their names said who does the I/O (Rust, or Python
#: serving the engine's requests); kept so that code written against them keeps working.
ObjectStore = RustObjectStore
ObstoreStore = RustObstoreStore
ObstorePythonStore = PythonObstoreStore
PythonStore = PythonZarrStore
ServedStore = PythonServedStore

__all__ = [
    "DictMemoryStore",
    "LocalStore",
    "MemoryStore",
    "ObjectStore",
    "ObstorePythonStore",
    "ObstoreStore",
    "PythonObstoreStore",
    "PythonServedStore",
    "PythonStore",
    "PythonZarrStore",
    "ReferenceStore",
    "RustObjectStore",
    "RustObstoreStore",
    "ServedStore",
    "Store",
    "ZipStore",
    "from_obstore",
    "from_zarr_store",
    "resolve_store",
    "warn_ranges_ignored",
]
