"""Whole hierarchies at once: ``create_hierarchy`` (zarr-python 3.1) and ``copy``,
``copy_all``, ``copy_store`` (zarr-python 2.x, which 3.x names but does not implement).

``copy_store`` moves stored bytes (metadata documents and chunks, as they are); ``copy`` and
``copy_all`` copy arrays and groups node by node through the API, so the destination may use
other chunks or codecs (``create_kws``) and another store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, Literal

from zarrox.array import Array
from zarrox.errors import CopyError
from zarrox.group import Group, make_node
from zarrox.nodes.create import array_from, new_group
from zarrox.nodes.discover import read_node
from zarrox.nodes.node import join, normalize_path
from zarrox.nodes.place import new_group_metadata, prepare_node_path
from zarrox.nodes.write_hierarchy import write_hierarchy
from zarrox.storage import resolve_store
from zarrox.transfer import ValueBytes

IfExists = Literal["raise", "replace", "skip", "skip_initialized"]


# -- create_hierarchy ----------------------------------------------------------------------------


def create_hierarchy(
    *, store: Any, nodes: Mapping[str, Any], overwrite: bool = False
) -> Iterator[tuple[str, Array | Group]]:
    """Create the arrays and groups ``nodes`` describes (metadata by path) and every group
    above them that is missing (zarr-python's ``create_hierarchy``); yields (path, node).

    All nodes must have the same Zarr format. A group that already exists where only an
    implied parent group is needed is kept; an explicit node where one exists is an error
    (ContainsArrayError / ContainsGroupError) unless ``overwrite``, which replaces it.
    """
    store = resolve_store(store)
    for key, meta in write_hierarchy(store, nodes, overwrite):
        yield key, make_node(store, key, meta)


# -- copy_store ----------------------------------------------------------------------------------

Log = Callable[[str], None] | str | IO[str] | None


class _Logger:
    """zarr-python 2's ``log`` argument: a callable, a file path, or a file-like object."""

    def __init__(self, log: Log) -> None:
        self._close: IO[str] | None = None
        if log is None:
            self.write: Callable[[str], None] = lambda msg: None
        elif callable(log):
            self.write = log
        elif isinstance(log, str):
            self._close = open(log, mode="w")  # noqa: SIM115 - closed in close()
            stream = self._close
            self.write = lambda msg: print(msg, file=stream)
        elif hasattr(log, "write"):
            self.write = lambda msg: print(msg, file=log)  # type: ignore[arg-type]
        else:
            raise TypeError(f"log must be a callable, a file path or a file-like, got {log!r}")

    def close(self) -> None:
        if self._close is not None:
            self._close.close()


def _summary(log: _Logger, dry_run: bool, copied: int, skipped: int, nbytes: int) -> None:
    prefix = "dry run: " if dry_run else ""
    log.write(f"{prefix}all done: {copied:,} copied, {skipped:,} skipped, {nbytes:,} bytes copied")


def _patterns(value: str | Iterable[str] | None, flags: int) -> list[re.Pattern[str]]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [re.compile(p, flags) for p in items]


def copy_store(
    source: Any,
    dest: Any,
    source_path: str = "",
    dest_path: str = "",
    excludes: str | Iterable[str] | None = None,
    includes: str | Iterable[str] | None = None,
    flags: int = 0,
    if_exists: Literal["raise", "replace", "skip"] = "raise",
    dry_run: bool = False,
    log: Log = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int, int]:
    """Copy the stored bytes of every key below ``source_path`` of ``source`` to the same
    key below ``dest_path`` of ``dest`` (zarr-python 2's ``copy_store``); returns (keys
    copied, keys skipped, bytes copied). ``progress(done, total)`` (zarrox's addition) is told
    the number of keys handled.

    ``excludes`` and ``includes`` are regular expressions (``flags``: their ``re`` flags)
    searched in the source keys: an excluded key is not copied unless it is also included.
    A key already in ``dest`` raises CopyError (``if_exists="raise"``), is overwritten
    (``"replace"``) or left alone (``"skip"``). ``dry_run`` only counts; ``log`` gets one
    line per key and a summary.
    """
    if if_exists not in ("raise", "replace", "skip"):
        raise ValueError(f"if_exists must be 'raise', 'replace' or 'skip', got {if_exists!r}")
    src = resolve_store(source)
    dst = resolve_store(dest)
    source_path = normalize_path(source_path)
    dest_path = normalize_path(dest_path)
    excluded = _patterns(excludes, flags)
    included = _patterns(includes, flags)
    logger = _Logger(log)
    prefix = source_path + "/" if source_path else ""
    copied = skipped = nbytes = 0
    try:
        keys = sorted(src.list_prefix(prefix))
        for i, key in enumerate(keys):
            if progress is not None:
                progress(i, len(keys))
            if any(p.search(key) for p in excluded) and not any(p.search(key) for p in included):
                continue
            dest_key = join(dest_path, key[len(prefix) :])
            if dst.exists(dest_key):
                if if_exists == "raise":
                    raise CopyError(f"key {dest_key!r} exists in destination")
                if if_exists == "skip":
                    skipped += 1
                    logger.write(f"skip {key} -> {dest_key}")
                    continue
            logger.write(f"copy {key} -> {dest_key}")
            value = src.get(key)
            if value is None:
                continue
            if not dry_run:
                dst.set(dest_key, value)
            copied += 1
            nbytes += len(value)
        if progress is not None:
            progress(len(keys), len(keys))
        _summary(logger, dry_run, copied, skipped, nbytes)
    finally:
        logger.close()
    return copied, skipped, nbytes


# -- copy, copy_all ------------------------------------------------------------------------------


def _array_create_args(create_kws: Mapping[str, Any], zarr_format: int) -> dict[str, Any]:
    """How :func:`copy` makes the destination array: like the source array (shape, chunks,
    shards, data type, codecs, fill value, order, dimension names: ``"keep"``) in the
    destination group's ``zarr_format``, with ``create_kws`` on top."""
    kw: dict[str, Any] = dict(create_kws)
    fmt = kw.pop("zarr_format", zarr_format)
    args: dict[str, Any] = dict(
        chunks=kw.pop("chunks", "keep"),
        shards=kw.pop("shards", "keep"),
        filters=kw.pop("filters", "keep"),
        compressors=kw.pop("compressors", "keep"),
        serializer=kw.pop("serializer", "keep"),
        fill_value=kw.pop("fill_value", None),
        zarr_format=fmt,
    )
    if "compressor" in kw:  # zarr-python 2's name
        compressor = kw.pop("compressor")
        args["compressors"] = None if compressor is None else [compressor]
    args.update(kw)
    return args


def _tracker(report: Callable[[int, int], None] | None, nodes: list[Any]) -> ValueBytes:
    """The progress of copying ``nodes``: its total is the bytes of every array at or below
    them (counted only when there is a ``report``)."""
    total = 0
    if report is not None:
        for node in nodes:
            if isinstance(node, Array):
                total += node.nbytes
            else:
                members = node.members(max_depth=None)
                total += sum(a.nbytes for _, a in members if isinstance(a, Array))
    return ValueBytes(report, total)


@dataclass(frozen=True)
class _CopyRun:
    """How one :func:`copy`, :func:`copy_all` or :func:`copy_node` copies every node."""

    log: _Logger
    shallow: bool
    without_attrs: bool
    if_exists: IfExists
    dry_run: bool
    create_kws: Mapping[str, Any]
    progress: ValueBytes


def _copy(
    run: _CopyRun, source: Array | Group, dest: Group | None, dest_path: str, root: bool
) -> tuple[int, int, int]:
    """Copy ``source`` to ``dest_path`` below the group ``dest`` (None: a group a dry run
    has not created, so nothing is there yet); ``root``: ``source`` is what was asked for,
    whose children even a shallow copy copies."""
    existing = dest.get(dest_path.rsplit("/", 1)[-1]) if dest is not None else None
    if isinstance(source, Array):
        return _copy_array(run, source, dest, dest_path, existing)
    return _copy_group(run, source, dest, dest_path, existing, root)


def _copy_members(
    run: _CopyRun, source: Group, dest: Group | None, dest_path: str
) -> tuple[int, int, int]:
    """Copy the members of ``source`` below ``dest_path`` (the path of ``dest``)."""
    copied = skipped = nbytes = 0
    for name, child in source.members():
        c, s, b = _copy(run, child, dest, join(dest_path, name), False)
        copied, skipped, nbytes = copied + c, skipped + s, nbytes + b
    return copied, skipped, nbytes


def _copy_array(
    run: _CopyRun, source: Array, dest: Group | None, dest_path: str, existing: Any
) -> tuple[int, int, int]:
    shown = "/" + dest_path
    if existing is not None:
        if run.if_exists == "raise":
            raise CopyError(f"an object {shown!r} already exists in the destination")
        if run.if_exists == "skip" or (
            run.if_exists == "skip_initialized"
            and isinstance(existing, Array)
            and existing.nchunks_initialized == existing.nchunks
        ):
            run.log.write(f"skip {source.name} -> {shown}")
            return 0, 1, 0
    run.log.write(f"copy {source.name} -> {shown} {source.shape} {source.dtype}")
    if run.dry_run or dest is None:
        run.progress.skip(source)
        return 1, 0, source.nbytes
    if existing is not None:
        dest.store.delete_prefix(dest_path + "/")
    new = Array._make(
        array_from(
            dest.store,
            name=dest_path,
            data=source,
            write_data=False,
            attributes=None if run.without_attrs else dict(source.attrs),
            **_array_create_args(run.create_kws, dest.zarr_format),
        )
    )
    run.progress.copy(source, new)
    return 1, 0, source.nbytes


def _copy_group(
    run: _CopyRun, source: Group, dest: Group | None, dest_path: str, existing: Any, root: bool
) -> tuple[int, int, int]:
    shown = "/" + dest_path
    if existing is not None and not isinstance(existing, Group):
        if run.if_exists == "raise":
            raise CopyError(f"an array {shown!r} already exists in the destination")
        if run.if_exists in ("skip", "skip_initialized"):
            run.log.write(f"skip {source.name} -> {shown}")
            return 0, 1, 0
    run.log.write(f"copy {source.name} -> {shown}")
    target: Group | None
    if run.dry_run or dest is None:
        target = existing if isinstance(existing, Group) else None
    else:
        if existing is not None and not isinstance(existing, Group):
            dest.store.delete_prefix(dest_path + "/")
        target = dest.require_group(dest_path.rsplit("/", 1)[-1])
        if not run.without_attrs:
            target.attrs.update(dict(source.attrs))
    if not root and run.shallow:
        return 1, 0, 0
    copied, skipped, nbytes = _copy_members(run, source, target, dest_path)
    return 1 + copied, skipped, nbytes


def copy_node(
    source: Array | Group,
    dest: Any,
    dest_path: str = "",
    *,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
    **create_kws: Any,
) -> Array | Group:
    """Copy the array or group ``source`` (with everything below it and the attributes) to
    ``dest_path`` of the store ``dest``, which may be another kind of store: what ``zarrox
    copy`` does when it re-encodes. Arrays keep their encoding unless ``create_kws`` change
    it (``chunks``, ``shards``, ``compressors``, ``filters``, ``zarr_format``, ...); the Zarr
    format is the source's unless ``zarr_format`` is given. A node already at ``dest_path``
    is an error unless ``overwrite``. ``progress(done, total)`` is told the bytes of values
    copied so far. Returns the new node."""
    store = resolve_store(dest)
    dest_path = normalize_path(dest_path)
    fmt = int(create_kws.get("zarr_format", source.zarr_format))
    prepare_node_path(store, dest_path, overwrite, fmt)  # with the missing parent groups
    kws = {**create_kws, "zarr_format": fmt}
    run = _CopyRun(_Logger(None), False, False, "raise", False, kws, _tracker(progress, [source]))
    if isinstance(source, Array):
        parent_path, _, name = dest_path.rpartition("/")
        parent = Group(store, parent_path, new_group_metadata(fmt, None))  # type: ignore[arg-type]
        _copy(run, source, parent, dest_path, True)
        return parent[name] if name else make_node(store, "", read_node(store, "", fmt))  # type: ignore[arg-type]
    group = Group._make(
        new_group(store, path=dest_path, attributes=dict(source.attrs), zarr_format=fmt)
    )
    _copy_members(run, source, group, dest_path)
    return group


def _check_copy_args(if_exists: str, dest: Any) -> None:
    if if_exists not in ("raise", "replace", "skip", "skip_initialized"):
        raise ValueError(
            f"if_exists must be 'raise', 'replace', 'skip' or 'skip_initialized', got {if_exists!r}"
        )
    if not isinstance(dest, Group):
        raise TypeError(f"dest must be a zarrox Group, got {type(dest).__name__}")


def copy(
    source: Array | Group,
    dest: Group,
    name: str | None = None,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Log = None,
    if_exists: IfExists = "raise",
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy the array or group ``source`` into the group ``dest`` as ``name`` (by default
    its own name), with its attributes (unless ``without_attrs``) and, for a group, its
    members (only the children when ``shallow``) (zarr-python 2's ``copy``). Arrays keep
    their chunks, shards and codecs unless ``create_kws`` (``chunks``, ``shards``,
    ``compressors``, ``compressor``, ``filters``, ``zarr_format``, ...) say otherwise.

    An existing node ``name`` raises CopyError (``if_exists="raise"``), is replaced, or left
    as it is (``"skip"``; ``"skip_initialized"``: arrays whose chunks are all stored).
    Returns (nodes copied, nodes skipped, bytes of values copied). ``progress(done, total)``
    (zarrox's addition) is told the bytes of values copied so far.
    """
    _check_copy_args(if_exists, dest)
    if name is None:
        name = source.basename
        if not name:
            raise TypeError("must provide a name for the copy of the root group")
    logger = _Logger(log)
    tracker = _tracker(progress, [source])
    run = _CopyRun(logger, shallow, without_attrs, if_exists, dry_run, create_kws, tracker)
    try:
        result = _copy(run, source, dest, join(dest.path, normalize_path(name)), True)
        _summary(logger, dry_run, *result)
    finally:
        logger.close()
    return result


def copy_all(
    source: Group,
    dest: Group,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Log = None,
    if_exists: IfExists = "raise",
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into the group ``dest`` (and ``source``'s
    attributes into ``dest``'s, unless ``without_attrs``), as :func:`copy` copies one
    (zarr-python 2's ``copy_all``). Returns (nodes copied, nodes skipped, bytes copied)."""
    _check_copy_args(if_exists, dest)
    logger = _Logger(log)
    tracker = _tracker(progress, [child for _, child in source.members()])
    run = _CopyRun(logger, shallow, without_attrs, if_exists, dry_run, create_kws, tracker)
    try:
        result = _copy_members(run, source, dest, dest.path)
        if not without_attrs and not dry_run:
            dest.attrs.update(dict(source.attrs))
        _summary(logger, dry_run, *result)
    finally:
        logger.close()
    return result


__all__ = ["copy", "copy_all", "copy_node", "copy_store", "create_hierarchy"]
