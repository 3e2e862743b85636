"""References (kerchunk, VirtualiZarr): a read-only store whose keys are inline values or
byte ranges of other files (netCDF4/HDF5, TIFF, GRIB, ...), read by Rust.

The references are kerchunk's JSON, version 0 (``{key: value}``) or 1 (``{"version": 1,
"templates": ..., "gen": ..., "refs": ...}``), given as a dict, a local JSON file or the URL
of one. The referenced files are read by the engine from local disk or object stores
(``remote_protocol``/``remote_options``, as fsspec's ``ReferenceFileSystem`` takes them),
one store per bucket or host; chunks of one file read together are merged into fewer
ranged requests (``coalesce_gap`` bytes apart at most; the file's store's default).

Kerchunk's Parquet references (``kerchunk.df.refs_to_dataframe``, fsspec's
``LazyReferenceMapper``: a directory of ``.zmetadata`` and ``<var>/refs.<i>.parq``) are
loaded record by record: opening reads ``.zmetadata`` only; the engine fetches a record file
when one of its chunks is first read and pyarrow (the ``references`` extra) decodes it.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from zarrox._core import StoreHandle
from zarrox.errors import StorageOptionsError
from zarrox.storage.base import Store
from zarrox.storage.local import LocalStore
from zarrox.storage.object import RustObjectStore
from zarrox.storage.options import SCHEMES, object_store_options

#: storage_options of ``reference://`` (fsspec's names, and zarrox's merging options).
OPTIONS = frozenset(
    {
        "fo",
        "remote_protocol",
        "remote_options",
        "prefix_options",
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
    :class:`~zarrox.storage.RustObjectStore`) configure; ``prefix_options`` (``{URL prefix:
    storage options}``) configure the files whose URL starts with a prefix (the longest
    that matches), for references that span buckets or clouds with credentials of their
    own. Ranges of one file closer than ``coalesce_gap`` bytes are fetched in one request
    of at most ``max_request`` bytes."""

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
        prefix_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self._text, self._name, parquet = _load(fo, target_protocol, target_options)
        if isinstance(fo, os.PathLike):
            fo = os.fspath(fo)
        if isinstance(fo, str) and "://" not in fo and target_protocol is None:
            fo = os.path.abspath(fo)
        self._opened_from = (fo, target_protocol, dict(target_options or {}))
        # what a pickle re-opens: the text, or a Parquet directory (its records unread)
        self._source: Any = (
            {"__json__": self._text, "__name__": self._name}
            if parquet is None
            else self._opened_from
        )
        self.remote_protocol = _protocol(remote_protocol)
        self.remote_options = dict(remote_options or {})
        self.coalesce_gap = None if coalesce_gap is None else int(coalesce_gap)
        self.max_request = int(max_request or 0)
        self.prefix_options = {str(k): dict(v) for k, v in (prefix_options or {}).items()}
        prefixes = []
        for prefix, opts in self.prefix_options.items():
            scheme = prefix.split("://", 1)[0].lower() if "://" in prefix else ""
            if scheme not in SCHEMES:
                raise StorageOptionsError(
                    f"'prefix_options': {prefix!r} is not the URL prefix of an object store "
                    f"({', '.join(sorted(SCHEMES))})"
                )
            prefixes.append((prefix, object_store_options(f"{scheme}://", opts)))
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
            None if parquet is None else parquet.arguments(),
            prefixes,
        )

    def __repr__(self) -> str:
        return f"ReferenceStore({self._name!r})"

    def spec_members(self) -> dict[str, Any] | None:
        """The members of a TensorStore-style ``reference`` kvstore that opens these
        references again (None for references given as a dict, which have no name)."""
        fo, target_protocol, target_options = self._opened_from
        if not isinstance(fo, str):
            return None
        members: dict[str, Any] = {"fo": fo}
        if target_protocol:
            members["target_protocol"] = target_protocol
        if target_options:
            members["target_options"] = dict(target_options)
        if self.remote_protocol:
            members["remote_protocol"] = self.remote_protocol
        if self.remote_options:
            members["remote_options"] = dict(self.remote_options)
        if self.coalesce_gap is not None:
            members["coalesce_gap"] = self.coalesce_gap
        if self.max_request:
            members["max_request"] = self.max_request
        if self.prefix_options:
            members["prefix_options"] = dict(self.prefix_options)
        return members

    @property
    def url(self) -> str:
        return f"reference://{self._name}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _reference_store,
            (
                self._source,
                self.remote_protocol,
                self.remote_options,
                self.coalesce_gap,
                self.max_request,
                self.prefix_options,
            ),
        )


def _reference_store(
    source: Any,
    remote_protocol: str | None,
    remote_options: dict[str, Any],
    coalesce_gap: int | None,
    max_request: int,
    prefix_options: dict[str, dict[str, Any]],
) -> ReferenceStore:
    fo, target_protocol, target_options = (
        (source, None, None) if isinstance(source, Mapping) else source
    )
    return ReferenceStore(
        fo,
        target_protocol=target_protocol,
        target_options=target_options,
        remote_protocol=remote_protocol,
        remote_options=remote_options,
        coalesce_gap=coalesce_gap,
        max_request=max_request,
        prefix_options=prefix_options,
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


class _Parquet:
    """Kerchunk Parquet references: the directory's store, the record size and each
    variable's chunk grid (the chunk references are loaded record by record)."""

    def __init__(self, directory: Store, record_size: int, grids: dict[str, list[int]]) -> None:
        self.directory = directory
        self.record_size = record_size
        self.grids = grids

    def arguments(self) -> tuple[Any, int, list[tuple[str, list[int]]], Any]:
        """``StoreHandle.references``' ``records``."""
        return (self.directory.handle, self.record_size, list(self.grids.items()), _decode_record)


def _load(
    fo: Any, target_protocol: str | None, target_options: Mapping[str, Any] | None
) -> tuple[str, str, _Parquet | None]:
    """The references' JSON text, a name for them, and for Parquet references their
    records (the text is then the metadata only)."""
    if isinstance(fo, Mapping):
        if "__json__" in fo:  # unpickled
            return str(fo["__json__"]), str(fo["__name__"]), None
        return json.dumps(dict(fo), default=_inline), "<dict>", None
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
        directory: Store = LocalStore(root, read_only=True)
        return _parquet(root, directory, directory.get(".zmetadata"))
    if "://" in url:
        if url.split("://", 1)[0].lower() not in SCHEMES:
            raise ValueError(f"unsupported references URL {fo!r}")
        if not url.endswith(".json"):
            directory = RustObjectStore(url.rstrip("/"), target_options, read_only=True)
            zmetadata = directory.get(".zmetadata")
            if zmetadata is not None:
                return _parquet(url.rstrip("/"), directory, zmetadata)
        parent, _, name = url.rstrip("/").rpartition("/")
        store = RustObjectStore(parent, target_options)
        data = store.get(name)
        if data is None:
            raise FileNotFoundError(f"references {fo!r} not found")
        return bytes(data).decode(), url, None
    if target_options:
        raise StorageOptionsError("'target_options' apply to references at a URL only")
    with open(url, "rb") as f:
        return f.read().decode(), os.path.abspath(url), None


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


def _parquet(root: str, directory: Store, text: bytes | None) -> tuple[str, str, _Parquet]:
    """The metadata and records of a kerchunk Parquet directory (``text``: its
    ``.zmetadata``, None when absent). Record ``i`` of a variable
    (``<var>/refs.<i>.parq``) holds its chunks ``i * record_size`` to ``(i + 1) *
    record_size - 1``, numbered in C order over the chunk grid, keys ``<var>/i.j...``; the
    engine loads a record when one of its chunks is first read (:func:`_decode_record`)."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError(
            f"{root}: Parquet references need pyarrow (pip install 'zarrox[references]')"
        ) from None
    if text is None:
        raise FileNotFoundError(f"{root}/.zmetadata: not found (not Parquet references)")
    try:
        meta = json.loads(bytes(text))
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
    grids = {}
    for key in sorted(metadata):
        if key.endswith("/.zarray"):
            field = key[: -len("/.zarray")]
            zarray = metadata[key]
            if isinstance(zarray, str):
                zarray = json.loads(zarray)
            grids[field] = _chunk_grid(root, field, zarray)
    return json.dumps(refs), root, _Parquet(directory, record_size, grids)


def _decode_record(
    name: str, data: bytes, rows: int
) -> tuple[list[str | None], list[int | None], list[int | None], list[bytes | None]]:
    """The first ``rows`` rows of a record file as columns: a row whose ``raw`` is set is an
    inline value, one with a ``path`` a reference (offset and size 0: the whole file), one
    with neither a missing chunk (the fill value). Called by the engine."""
    import io

    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as e:  # pyarrow's errors: ArrowInvalid, OSError, ...
        raise ValueError(f"{name}: not a Parquet file ({e})") from None
    if "path" not in table.column_names and "raw" not in table.column_names:
        raise ValueError(f"{name}: no 'path' or 'raw' column (has {table.column_names})")
    if table.num_rows < rows:
        raise ValueError(f"{name}: {table.num_rows} rows, the record needs {rows}")
    table = table.slice(0, rows)

    def column(c: str) -> list[Any]:
        return table.column(c).to_pylist() if c in table.column_names else [None] * rows

    raws = [
        None if r is None else r if isinstance(r, bytes) else str(r).encode() for r in column("raw")
    ]
    paths = [None if p is None else str(p) for p in column("path")]
    offsets = [None if o is None else int(o) for o in column("offset")]
    sizes = [None if z is None else int(z) for z in column("size")]
    return paths, offsets, sizes, raws


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


def from_reference_file_system(fs: Any, path: str) -> ReferenceStore | None:
    """The reference store of fsspec's ``ReferenceFileSystem`` (zarr-python's
    ``FsspecStore`` over ``reference://``): its references (the dict it parsed, or the
    Parquet directory of its ``LazyReferenceMapper``) read by the engine from the stores
    its file systems map to (:func:`~zarrox.storage.options.fsspec_target`; one per
    protocol, as fsspec chooses them). None (the file system stays served from Python)
    when it is not one, is rooted below its top, or reads files through a file system or
    options Rust cannot take faithfully."""
    from zarrox.storage.options import fsspec_target, unwrapped_fs

    fs = unwrapped_fs(fs)
    if (type(fs).__module__, type(fs).__name__) != (
        "fsspec.implementations.reference",
        "ReferenceFileSystem",
    ) or str(path).strip("/"):
        return None
    # the file systems of the referenced files: each remote one's options (by its
    # protocols' prefixes), the default one's (URLs without a protocol) as remote options
    prefix_options: dict[str, dict[str, Any]] = {}
    mapped: dict[int, dict[str, Any]] = {}
    for fsi in {id(f): unwrapped_fs(f) for f in fs.fss.values()}.values():
        protocols = fsi.protocol if isinstance(fsi.protocol, list | tuple) else [fsi.protocol]
        if _protocol(protocols) is None:
            continue
        family = SCHEMES.get(str(protocols[0]))
        probe = "https://host/x" if family == "http" else "bucket/x"
        target = fsspec_target(fsi, probe) if family is not None else None
        if target is None:
            return None
        mapped[id(fsi)] = target[1]
        for protocol in protocols:
            prefix_options[f"{protocol}://"] = target[1]
    default = unwrapped_fs(fs.fss.get(None))
    remote_protocol = _protocol(getattr(default, "protocol", None))
    remote_options = mapped.get(id(default), {})
    refs = fs.references
    if type(refs).__name__ == "LazyReferenceMapper":
        target = fsspec_target(refs.fs, refs.root)
        if target is None:
            return None
        fo, target_options = (refs.root, None) if target[0] == "file" else target
    elif isinstance(refs, Mapping) and not any(callable(v) for v in refs.values()):
        fo, target_options = dict(refs), None
    else:
        return None
    return ReferenceStore(
        fo,
        remote_protocol=remote_protocol,
        remote_options=remote_options,
        target_options=target_options,
        prefix_options=prefix_options,
    )
