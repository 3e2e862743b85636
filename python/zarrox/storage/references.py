"""References (kerchunk, VirtualiZarr): a read-only store whose keys are inline values or
byte ranges of other files (netCDF4/HDF5, TIFF, GRIB, ...), read by Rust.

The references are kerchunk's JSON, version 0 (``{key: value}``) or 1 (``{"version": 1,
"templates": ..., "gen": ..., "refs": ...}``), given as a dict, a local JSON file or the URL
of one. The referenced files are read by the engine from local disk or object stores
(``remote_protocol``/``remote_options``, as fsspec's ``ReferenceFileSystem`` takes them),
one store per bucket or host; chunks of one file read together are merged into fewer
ranged requests (``coalesce_gap`` bytes apart at most; the file's store's default).
Parquet references are not read yet.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from zarrox._core import StoreHandle
from zarrox.errors import StorageOptionsError
from zarrox.storage import RustObjectStore, Store
from zarrox.storage.options import SCHEMES, object_store_options

#: storage_options of ``reference://`` (fsspec's names, and zarrox's merging options).
OPTIONS = frozenset(
    {
        "fo",
        "remote_protocol",
        "remote_options",
        "target_protocol",
        "target_options",
        "coalesce_gap",
        "max_request",
    }
)


class ReferenceStore(Store):
    """Kerchunk references as a read-only store.

    ``fo``: the references (a dict, a local JSON file, or the URL of one on an object store,
    opened with ``target_options``). ``remote_protocol`` is the protocol of referenced URLs
    written without one and the one ``remote_options`` (storage options as for
    :class:`~zarrox.storage.RustObjectStore`) configure. Ranges of one file closer than
    ``coalesce_gap`` bytes are fetched in one request of at most ``max_request`` bytes."""

    read_only = True

    def __init__(
        self,
        fo: Any,
        *,
        remote_protocol: str | None = None,
        remote_options: Mapping[str, Any] | None = None,
        target_protocol: str | None = None,
        target_options: Mapping[str, Any] | None = None,
        coalesce_gap: int | None = None,
        max_request: int | None = None,
    ) -> None:
        self._text, self._name = _load(fo, target_protocol, target_options)
        self.remote_protocol = _protocol(remote_protocol)
        self.remote_options = dict(remote_options or {})
        self.coalesce_gap = None if coalesce_gap is None else int(coalesce_gap)
        self.max_request = int(max_request or 0)
        options: list[tuple[str, str]] = []
        if self.remote_protocol in SCHEMES:
            options = object_store_options(f"{self.remote_protocol}://", self.remote_options)
        elif self.remote_options:
            raise StorageOptionsError(
                "'remote_options' need a 'remote_protocol' of an object store "
                f"({', '.join(sorted(SCHEMES))})"
            )
        self.handle = StoreHandle.references(
            self._name,
            self._text,
            self.remote_protocol,
            options,
            self.coalesce_gap,
            self.max_request,
        )

    def __repr__(self) -> str:
        return f"ReferenceStore({self._name!r})"

    @property
    def url(self) -> str:
        return f"reference://{self._name}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _reference_store,
            (
                {"__json__": self._text, "__name__": self._name},
                self.remote_protocol,
                self.remote_options,
                self.coalesce_gap,
                self.max_request,
            ),
        )


def _reference_store(
    fo: Any,
    remote_protocol: str | None,
    remote_options: dict[str, Any],
    coalesce_gap: int | None,
    max_request: int,
) -> ReferenceStore:
    return ReferenceStore(
        fo,
        remote_protocol=remote_protocol,
        remote_options=remote_options,
        coalesce_gap=coalesce_gap,
        max_request=max_request,
    )


def _protocol(protocol: Any) -> str | None:
    """fsspec's protocol (a name or a tuple of names) as one name; None for local files."""
    if isinstance(protocol, list | tuple):
        protocol = protocol[0] if protocol else None
    if protocol in (None, "", "file", "local"):
        return None
    return str(protocol)


def _inline(value: Any) -> Any:
    """``json.dumps``'s fallback: bytes values of in-memory references as kerchunk writes
    them to JSON."""
    if isinstance(value, bytes | bytearray | memoryview):
        return "base64:" + base64.b64encode(bytes(value)).decode()
    raise TypeError(f"references cannot hold a {type(value).__name__}")


def _load(
    fo: Any, target_protocol: str | None, target_options: Mapping[str, Any] | None
) -> tuple[str, str]:
    """The references' JSON text and a name for them."""
    if isinstance(fo, Mapping):
        if "__json__" in fo:  # unpickled
            return str(fo["__json__"]), str(fo["__name__"])
        return json.dumps(dict(fo), default=_inline), "<dict>"
    if isinstance(fo, os.PathLike):
        fo = os.fspath(fo)
    if not isinstance(fo, str):
        raise TypeError(f"references must be a dict, a path or a URL, not {type(fo).__name__}")
    protocol = _protocol(target_protocol)
    url = fo
    if "://" not in url and protocol is not None:
        url = f"{protocol}://{url}"
    if url.startswith("file://"):
        url = url[len("file://") :]
    if url.endswith((".parq", ".parquet")) or (
        "://" not in url and os.path.isdir(url) and os.path.exists(os.path.join(url, ".zmetadata"))
    ):
        raise NotImplementedError(f"{fo!r}: Parquet references are not read yet (JSON only)")
    if "://" in url:
        if url.split("://", 1)[0].lower() not in SCHEMES:
            raise ValueError(f"unsupported references URL {fo!r}")
        parent, _, name = url.rstrip("/").rpartition("/")
        store = RustObjectStore(parent, target_options)
        data = store.get(name)
        if data is None:
            raise FileNotFoundError(f"references {fo!r} not found")
        return bytes(data).decode(), url
    if target_options:
        raise StorageOptionsError("'target_options' apply to references at a URL only")
    with open(url, "rb") as f:
        return f.read().decode(), os.path.abspath(url)


def is_references(value: Any) -> bool:
    """Whether a mapping passed as a store is kerchunk references rather than a dict to keep
    values in: version 1, or a non-empty version 0 whose values are text, lists and JSON
    objects, one of them a list (a reference to another file)."""
    if not isinstance(value, Mapping) or not value:
        return False
    if value.get("version") == 1 and isinstance(value.get("refs"), Mapping):
        return True
    values = list(value.values())
    return all(isinstance(v, str | list | dict) for v in values) and any(
        isinstance(v, list) for v in values
    )


def from_options(url: str, storage_options: Mapping[str, Any] | None) -> ReferenceStore:
    """The store of ``reference://`` (``fo`` in ``storage_options``, or after the ``//``)."""
    opts = dict(storage_options or {})
    unknown = sorted(set(opts) - OPTIONS)
    if unknown:
        raise StorageOptionsError(
            f"unsupported storage option(s) of reference:// {unknown}: known are {sorted(OPTIONS)}"
        )
    fo = opts.pop("fo", None) or url[len("reference://") :] or None
    if fo is None:
        raise StorageOptionsError("reference:// needs the references: storage_options['fo']")
    return ReferenceStore(fo, **opts)
