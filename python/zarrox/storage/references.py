"""References (kerchunk, VirtualiZarr): a read-only store whose keys are inline values or
byte ranges of other files (netCDF4/HDF5, TIFF, GRIB, ...), read by Rust.

The references are kerchunk's JSON, version 0 (``{key: value}``) or 1 (``{"version": 1,
"templates": ..., "gen": ..., "refs": ...}``), given as a dict, a local JSON file or the URL
of one. The referenced files are read by the engine from local disk or object stores
(``remote_protocol``/``remote_options``, as fsspec's ``ReferenceFileSystem`` takes them),
one store per bucket or host; chunks of one file read together are merged into fewer
ranged requests (``coalesce_gap`` bytes apart at most; the file's store's default).

Kerchunk's Parquet references (``kerchunk.df.refs_to_dataframe``, fsspec's
``LazyReferenceMapper``: a directory of ``.zmetadata`` and ``<var>/refs.<i>.parq``) are read
with pyarrow (the ``references`` extra) when the store is opened: every record file of every
variable, their rows handed to the engine as the JSON references are.
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
    if "://" not in url and os.path.isdir(url):
        if target_options:
            raise StorageOptionsError("'target_options' apply to references at a URL only")
        root = os.path.abspath(url)

        def read_local(name: str) -> bytes | None:
            try:
                with open(os.path.join(root, name), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                return None

        refs = _parquet_refs(root, read_local)
        return json.dumps(refs, default=_inline), root
    if "://" in url:
        if url.split("://", 1)[0].lower() not in SCHEMES:
            raise ValueError(f"unsupported references URL {fo!r}")
        if not url.endswith(".json"):
            directory = RustObjectStore(url.rstrip("/"), target_options)
            zmetadata = directory.get(".zmetadata")
            if zmetadata is not None:
                read = _store_reader(directory)
                refs = _parquet_refs(
                    url.rstrip("/"),
                    lambda name: bytes(zmetadata) if name == ".zmetadata" else read(name),
                )
                return json.dumps(refs, default=_inline), url.rstrip("/")
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


def _store_reader(store: Store) -> Any:
    def read(name: str) -> bytes | None:
        data = store.get(name)
        return None if data is None else bytes(data)

    return read


def _chunk_grid(root: str, field: str, zarray: Any) -> list[int]:
    """Chunks along each axis of ``field``, as fsspec's ``LazyReferenceMapper`` counts them
    (a scalar: one chunk)."""
    try:
        shape, chunks = zarray["shape"], zarray["chunks"]
        grid = [-(-int(s) // int(c)) for s, c in zip(shape, chunks, strict=True)]
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise ValueError(
            f"{root}/.zmetadata: {field}/.zarray has no valid 'shape' and 'chunks' ({e})"
        ) from None
    return grid or [1]


def _parquet_refs(root: str, read: Any) -> dict[str, Any]:
    """The references of a kerchunk Parquet directory as a version 0 dict. ``read(name)``:
    the bytes of a file of the directory, None if it is absent. Record ``i`` of a variable
    (``<var>/refs.<i>.parq``) holds its chunks ``i * record_size`` to ``(i + 1) *
    record_size - 1``, numbered in C order over the chunk grid, keys ``<var>/i.j...``; a row
    whose ``raw`` is set is an inline value, one with a ``path`` a reference (offset and
    size 0: the whole file), one with neither a missing chunk (the fill value)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            f"{root}: Parquet references need pyarrow (pip install 'zarrox[references]')"
        ) from None
    import io
    import itertools
    import math
    from concurrent.futures import ThreadPoolExecutor

    text = read(".zmetadata")
    if text is None:
        raise FileNotFoundError(f"{root}/.zmetadata: not found (not Parquet references)")
    try:
        meta = json.loads(text)
        metadata = meta["metadata"]
        record_size = int(meta["record_size"])
        if not isinstance(metadata, dict) or record_size < 1:
            raise ValueError("'metadata' must be an object and 'record_size' positive")
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(
            f"{root}/.zmetadata: not kerchunk Parquet references' metadata ({e!r})"
        ) from None
    refs: dict[str, Any] = {}
    for key, value in metadata.items():
        refs[key] = value if isinstance(value, str) else json.dumps(value)
    fields = sorted(k[: -len("/.zarray")] for k in metadata if k.endswith("/.zarray"))
    grids = {}
    for field in fields:
        zarray = metadata[f"{field}/.zarray"]
        if isinstance(zarray, str):
            zarray = json.loads(zarray)
        grids[field] = _chunk_grid(root, field, zarray)
    # the record files fetched together (one request each on an object store)
    names = [
        f"{field}/refs.{record}.parq"
        for field, grid in grids.items()
        for record in range(-(-math.prod(grid) // record_size))
    ]
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(names)))) as pool:
        files = dict(zip(names, pool.map(read, names), strict=True))
    for field, grid in grids.items():
        keys = (
            f"{field}/" + ".".join(map(str, index))
            for index in itertools.product(*(range(n) for n in grid))
        )
        total = math.prod(grid)
        for record in range(-(-total // record_size)):
            name = f"{field}/refs.{record}.parq"
            rows = record_size if record < total // record_size else total % record_size
            data = files[name]
            if data is None:  # as fsspec: an absent record's chunks are missing
                for _ in itertools.islice(keys, rows):
                    pass
                continue
            try:
                table = pq.read_table(io.BytesIO(data))
            except Exception as e:  # pyarrow's errors: ArrowInvalid, OSError, ...
                raise ValueError(f"{root}/{name}: not a Parquet file ({e})") from None
            columns = {c: table.column(c).to_pylist() for c in table.column_names}
            if "path" not in columns and "raw" not in columns:
                raise ValueError(
                    f"{root}/{name}: no 'path' or 'raw' column (has {table.column_names})"
                )
            if table.num_rows < rows:
                raise ValueError(
                    f"{root}/{name}: {table.num_rows} rows, record {record} of {field!r} "
                    f"needs {rows}"
                )
            none = itertools.repeat(None)
            paths = columns.get("path", none)
            offsets = columns.get("offset", none)
            sizes = columns.get("size", none)
            raws = columns.get("raw", none)
            for key, path, offset, size, raw in zip(
                itertools.islice(keys, rows), paths, offsets, sizes, raws, strict=False
            ):
                if raw is not None:
                    refs[key] = raw if isinstance(raw, bytes) else str(raw).encode()
                elif path is not None:
                    offset, size = int(offset or 0), int(size or 0)
                    refs[key] = [path] if offset == 0 and size == 0 else [path, offset, size]
    return refs


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
