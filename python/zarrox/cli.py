"""The ``zarrox`` command line: demo, info, tree, verify, copy, convert, bench.

Every command that reads a store takes what the Python API takes (a path, a ``file://``,
``memory://``, ``s3://``, ``gs://``, ``az://``, ``http(s)://`` URL or a ``.zip``), with
``--storage-option KEY=VALUE`` for credentials and endpoints. Long commands draw a progress bar
(rich) on stderr when it is a terminal. ``--json`` prints one JSON document instead of text.
Bad input ends with one line on stderr (``zarrox: error: ...``) and exit status 2; ``verify``
exits 1 when it finds corrupt chunks. ``ZARROX_DEBUG=1`` shows the traceback of an error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np

import zarrox
from zarrox import _core
from zarrox._progress import progress_bar, wanted
from zarrox.api import open_node
from zarrox.array import Array
from zarrox.codecs import BloscCodec
from zarrox.group import Group

DESCRIPTION = """\
Zarr arrays (v3, v2) with a parallel Rust core. Stores are local paths, .zip files or
URLs (file://, memory://, s3://, gs://, az://, http(s)://)."""

EPILOG = """\
examples:
  zarrox info data.zarr --path temperature
  zarrox verify s3://bucket/data.zarr --storage-option anon=true
  zarrox copy data.zarr backup.zip
  zarrox copy old.zarr new.zarr --zarr-format 3 --chunks 64,64 --shards 512,512 --compressor zstd:5
  zarrox --version

exit status: 0 success, 1 verify found corrupt chunks, 2 bad input or an error
(ZARROX_DEBUG=1 shows the traceback)."""


class CliError(Exception):
    """A bad argument found after parsing: reported like argparse's errors."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``zarrox: error: <what> (see zarrox <cmd> --help)``."""

    def error(self, message: str) -> NoReturn:
        hint = f"{self.prog} --help"
        sys.stderr.write(f"zarrox: error: {message} (see '{hint}')\n")
        raise SystemExit(2)


# -- argument types ---------------------------------------------------------------------------


def shape_arg(text: str) -> tuple[int, ...]:
    """``64,64,64`` -> (64, 64, 64): positive integers separated by commas."""
    try:
        values = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected positive integers separated by commas (e.g. 64,64,64), got {text!r}"
        ) from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def shards_arg(text: str) -> tuple[int, ...]:
    """A shard shape, or ``none`` (not sharded): ``()``."""
    return () if text.lower() == "none" else shape_arg(text)


def option_arg(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--storage-option``; the value read as JSON when it is JSON
    (``true``, ``3``), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    return key, parsed


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


_COMPRESSORS = ("zstd", "gzip", "blosc", "zlib", "bz2", "lzma", "lz4", "none")
#: the numcodecs member that holds a compressor's level
_LEVEL_KEY = {
    "zstd": "level",
    "gzip": "level",
    "zlib": "level",
    "bz2": "level",
    "lzma": "preset",
    "lz4": "acceleration",
}


def compressor_arg(text: str) -> tuple[str, ...]:
    """``zstd``, ``zstd:5``, ``blosc:lz4:5``, ``none``, ...: checked here, made into a codec
    for the destination's format by :func:`compressor_codec`."""
    parts = tuple(p.strip() for p in text.split(":"))
    name = parts[0].lower()
    if name not in _COMPRESSORS:
        raise argparse.ArgumentTypeError(
            f"unknown compressor {parts[0]!r} (one of {', '.join(_COMPRESSORS)})"
        )
    numbers = parts[2:] if name == "blosc" else parts[1:]
    if len(parts) > (3 if name == "blosc" else 2) or (name == "none" and len(parts) > 1):
        raise argparse.ArgumentTypeError(f"too many fields in compressor {text!r}")
    for n in numbers:
        if not n.lstrip("-").isdigit():
            raise argparse.ArgumentTypeError(f"compressor level must be an integer, got {n!r}")
    return (name, *parts[1:])


def compressor_codec(spec: tuple[str, ...], zarr_format: int) -> list[dict[str, Any]] | None:
    """The ``compressors`` argument for ``spec`` (see :func:`compressor_arg`)."""
    name = spec[0]
    if name == "none":
        return None
    if name == "blosc":
        # the v3 blosc codec's cname, in v2 too (not numcodecs' lz4)
        cname = spec[1] if len(spec) > 1 else BloscCodec().configuration["cname"]
        config: dict[str, Any] = {"cname": cname}
        if len(spec) > 2:
            config["clevel"] = int(spec[2])
    else:
        config = {_LEVEL_KEY[name]: int(spec[1])} if len(spec) > 1 else {}
    if zarr_format == 2:
        return [{"id": name, **config}]
    if name in ("zstd", "gzip", "blosc"):
        return [{"name": name, "configuration": config}]
    return [{"name": f"numcodecs.{name}", "configuration": config}]


# -- helpers ------------------------------------------------------------------------------------


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"


def _stored_bytes(store: zarrox.Store, prefix: str) -> tuple[int, int]:
    """(number of chunk keys, their total size) under an array's prefix."""
    keys = [k for k in store.list_prefix(prefix) if not k.endswith("zarr.json")]
    total = 0
    for k in keys:
        v = store.get(k)
        total += len(v) if v is not None else 0
    return len(keys), total


def _store(url: str, pairs: list[tuple[str, Any]] | None) -> Any:
    """The store at ``url``, with the storage options given on the command line."""
    from zarrox.storage import resolve_store

    return resolve_store(url, storage_options=dict(pairs) if pairs else None)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


def _print_json(doc: Any) -> None:
    print(json.dumps(doc, indent=2, default=_json_default, allow_nan=True))


def make_volume(shape: tuple[int, ...]) -> np.ndarray:
    """A smooth 3-D uint16 field with noise: compresses like real imaging data."""
    rng = np.random.default_rng(0)
    axes = np.meshgrid(
        *[np.linspace(0, 4 * np.pi, n, dtype=np.float32) for n in shape], indexing="ij", sparse=True
    )
    field: np.ndarray = np.zeros((), np.float32)
    for i, a in enumerate(axes):
        field = field + np.sin(a * (1 + i))
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-9) * 4000
    noise = rng.integers(0, 8, size=shape, dtype=np.uint16)
    return (np.asarray(field, dtype=np.float32).astype(np.uint16) + noise).astype(np.uint16)


# -- commands -------------------------------------------------------------------------------------


def _demo_compressors(codec: str) -> list[dict[str, Any]] | None:
    """The ``compressors`` of the demo's array for ``--codec``."""
    return {
        "zstd": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
        "blosc": [
            {
                "name": "blosc",
                "configuration": {
                    "cname": "lz4",
                    "clevel": 5,
                    "shuffle": "bitshuffle",
                    "typesize": 2,
                    "blocksize": 0,
                },
            }
        ],
        "gzip": [{"name": "gzip", "configuration": {"level": 1}}],
        "none": None,
    }[codec]


def _demo_write(
    root: Path, data: np.ndarray, args: argparse.Namespace, block: int, show: bool
) -> tuple[Group, float]:
    """Write the demo's group and its array of ``data``: (the group, seconds writing)."""
    from zarrox.transfer import copy_values

    shape = data.shape
    group = zarrox.open_group(root, mode="w", attributes={"description": "zarrox demo"})
    arr = group.create_array(
        "volume",
        shape=shape,
        dtype="uint16",
        chunks=args.chunks,
        compressors=_demo_compressors(args.codec),
        dimension_names=["z", "y", "x"][-len(shape) :] if len(shape) <= 3 else None,
        attributes={"units": "counts"},
    )
    with progress_bar("writing", enabled=show) as update:
        t0 = time.perf_counter()
        copy_values(data, arr, progress=lambda d, t: update(d * 2, t * 2), target=block)
        return group, time.perf_counter() - t0


def _demo_read(array: Array, data: np.ndarray, block: int, show: bool) -> tuple[np.ndarray, float]:
    """Read ``array`` back a block at a time: (its values, seconds reading)."""
    from zarrox.transfer import block_shape, regions

    back = np.empty_like(data)
    step = block_shape(data.shape, array.chunks, data.itemsize, block)
    with progress_bar("reading", enabled=show) as update:
        t0 = time.perf_counter()
        done = 0
        for region in regions(data.shape, step):
            array.get_basic_selection(region, out=back[region])
            done += back[region].nbytes
            update(done, data.nbytes)
        return back, time.perf_counter() - t0


def _demo_plane(array: Array, data: np.ndarray) -> str:
    """Read a strided plane of ``array`` and check it: what to say about it."""
    z = data.shape[0] // 2
    strided = (z, *(slice(None, None, 2) for _ in data.shape[1:]))
    t0 = time.perf_counter()
    plane = array[strided]
    t_slab = time.perf_counter() - t0
    if not np.array_equal(plane, data[strided]):
        raise CliError("a strided plane read back differs from the data written")
    return f"strided plane [{z}, ::2, ::2] {plane.shape} read in {t_slab * 1e3:.1f} ms"


def demo(args: argparse.Namespace) -> int:
    shape, chunks = args.shape, args.chunks
    if len(shape) != len(chunks):
        raise CliError(f"--chunks {chunks} must have one entry per dimension of --shape {shape}")
    show = wanted(args.no_progress)
    say = (lambda *a, **k: None) if args.json else print
    tmp = None
    root = Path(args.dir) if args.dir else Path(tmp := tempfile.mkdtemp(prefix="zarrox-demo-"))
    try:
        say(f"zarrox {zarrox.__version__} demo ({zarrox.get_num_threads()} threads)")
        data = make_volume(shape)
        say(
            f"dataset: {shape} uint16 volume, {_size(data.nbytes)}, chunks {chunks}, "
            f"codec {args.codec}"
        )
        block = max(data.nbytes // 16, 1 << 20)
        group, t_write = _demo_write(root, data, args, block, show)
        n_chunks, stored = _stored_bytes(group.store, "volume/")
        say(
            f"wrote {n_chunks} chunks to {root / 'volume'} in {t_write:.3f} s "
            f"({data.nbytes / t_write / 1e6:.0f} MB/s); stored {_size(stored)}, "
            f"ratio {data.nbytes / max(stored, 1):.2f}x"
        )
        reopened = zarrox.open_array(root, path="volume", mode="r")
        back, t_read = _demo_read(reopened, data, block, show)
        say(f"read it back in {t_read:.3f} s ({data.nbytes / t_read / 1e6:.0f} MB/s)")
        if not np.array_equal(back, data):
            raise CliError("the data read back differs from the data written")
        say(_demo_plane(reopened, data))
        say(f"verified: all {data.size} values equal; attributes {dict(reopened.attrs)}")
        say(zarrox.open_group(root, mode="r").tree())
        if args.json:
            _print_json(
                {
                    "verified": True,
                    "shape": shape,
                    "chunks": chunks,
                    "codec": args.codec,
                    "nbytes": data.nbytes,
                    "chunks_written": n_chunks,
                    "nbytes_stored": stored,
                    "write_seconds": t_write,
                    "read_seconds": t_read,
                    "threads": zarrox.get_num_threads(),
                    "store": str(root) if tmp is None or args.keep else None,
                }
            )
        return 0
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _open(args: argparse.Namespace) -> Array | Group:
    return open_node(_store(args.store, args.storage_option), path=args.path, mode="r")


def _array_json(a: Array) -> dict[str, Any]:
    info = a.info
    return {
        "type": "array",
        "path": a.name,
        "zarr_format": a.zarr_format,
        "shape": list(a.shape),
        "chunks": list(a.chunks),
        "shards": None if a.shards is None else list(a.shards),
        "dtype": str(a.dtype),
        "data_type": a.metadata.data_type,
        "fill_value": a.fill_value,
        "codecs": info.codecs,
        "dimension_names": a.dimension_names,
        "attributes": dict(a.attrs),
        "nbytes": info.nbytes,
        "nbytes_stored": info.nbytes_stored,
        "objects": info.nobjects,
        "objects_stored": info.nobjects_initialized,
        "read_only": a.read_only,
        "store": str(a.store_path),
    }


def info(args: argparse.Namespace) -> int:
    node = _open(args)
    if args.json:
        if isinstance(node, Array):
            _print_json(_array_json(node))
        else:
            _print_json(
                {
                    "type": "group",
                    "path": node.name,
                    "zarr_format": node.zarr_format,
                    "attributes": dict(node.attrs),
                    "members": node.keys(),
                    "store": str(node.store_path),
                }
            )
        return 0
    if isinstance(node, Array):
        print(node.info)
    else:
        print(f"Type               : Group ({node.name})")
        print(f"Members            : {len(node)}")
        print(f"Attributes         : {dict(node.attrs)}")
    return 0


def _tree_json(group: Group) -> dict[str, Any]:
    members = []
    for name, node in group.members():
        if isinstance(node, Array):
            members.append(
                {"name": name, "type": "array", "shape": list(node.shape), "dtype": str(node.dtype)}
            )
        else:
            members.append({"name": name, **_tree_json(node)})
    return {"type": "group", "path": group.name, "members": members}


def tree(args: argparse.Namespace) -> int:
    group = zarrox.open_group(_store(args.store, args.storage_option), path=args.path, mode="r")
    if args.json:
        _print_json(_tree_json(group))
    else:
        print(group.tree())
    return 0


def verify(args: argparse.Namespace) -> int:
    from zarrox.verify import verify as run_verify

    store = _store(args.store, args.storage_option)
    with progress_bar("verifying", enabled=wanted(args.no_progress)) as update:
        report = run_verify(store, path=args.path, progress=update)
    ok = report.ok(args.fail_on_missing)
    if args.json:
        _print_json(report.to_dict(args.fail_on_missing))
        return 0 if ok else 1
    for a in report.arrays:
        where = "/" + a.path
        if a.error is not None:
            print(f"ERROR    {where}: {a.error}")
            continue
        status = "ok" if a.ok else "CORRUPT"
        line = f"{status:<8} {where}: {a.stored} of {a.objects} objects stored"
        if a.missing:
            line += f", {len(a.missing)} missing"
        if a.corrupt:
            line += f", {len(a.corrupt)} corrupt"
        print(line)
        for problem in a.corrupt:
            print(f"  corrupt  {problem.key}: {problem.message}")
        for key in a.missing[: args.max_listed]:
            print(f"  missing  {key} (reads as the fill value)")
        if len(a.missing) > args.max_listed:
            print(f"  ... {len(a.missing) - args.max_listed} more missing")
        for key in a.unexpected[: args.max_listed]:
            print(f"  unexpected key {key} (not a chunk of the array)")
    corrupt = sum(len(a.corrupt) for a in report.arrays)
    missing = sum(len(a.missing) for a in report.arrays)
    errors = sum(a.error is not None for a in report.arrays)
    print(
        f"{len(report.arrays)} arrays checked: {corrupt} corrupt, {missing} missing"
        + (f", {errors} unreadable" if errors else "")
        + (" (missing chunks fail with --fail-on-missing)" if missing and ok else "")
    )
    return 0 if ok else 1


def _refuse_existing(store: Any, path: str, where: str, overwrite: bool) -> None:
    """A CliError when a node is at ``path`` of ``store`` (``where``) and not ``overwrite``."""
    from zarrox.nodes.discover import node_exists

    if not overwrite and node_exists(store, path):
        raise CliError(
            f"a node already exists at '/{path}' of {where}: give --overwrite to replace it"
        )


def _copy_bytes(
    args: argparse.Namespace, src: Any, dst: Any, node: Array | Group, path: str, dest_path: str
) -> tuple[int, int]:
    """Copy the stored bytes of ``node`` as they are: (keys copied, bytes copied)."""
    from zarrox.hierarchy import copy_store
    from zarrox.nodes.place import ensure_parents

    if args.overwrite:
        dst.delete_prefix(dest_path + "/" if dest_path else "")
    if dest_path and "/" in dest_path:
        ensure_parents(dst, dest_path, node.zarr_format)
    with progress_bar("copying", unit="items", enabled=wanted(args.no_progress)) as update:
        copied, _, nbytes = copy_store(
            src,
            dst,
            source_path=path,
            dest_path=dest_path,
            if_exists="replace",
            progress=update,
        )
    return copied, nbytes


def _copy_reencoded(
    args: argparse.Namespace, node: Array | Group, dst: Any, dest_path: str
) -> tuple[int, int]:
    """Copy ``node`` re-encoded as the options say: (nodes copied, bytes of values)."""
    from zarrox.hierarchy import copy_node

    kwargs: dict[str, Any] = {}
    if args.zarr_format is not None:
        kwargs["zarr_format"] = args.zarr_format
    if args.chunks is not None:
        kwargs["chunks"] = args.chunks
    if args.shards is not None:
        kwargs["shards"] = None if args.shards == () else args.shards
    if args.compressor is not None:
        fmt = args.zarr_format or node.zarr_format
        kwargs["compressors"] = compressor_codec(args.compressor, fmt)
    with progress_bar("copying", enabled=wanted(args.no_progress)) as update:
        new = copy_node(node, dst, dest_path, overwrite=args.overwrite, progress=update, **kwargs)
    members = [] if isinstance(new, Array) else [n for _, n in new.members(None)]
    arrays = [new] if isinstance(new, Array) else [n for n in members if isinstance(n, Array)]
    return 1 + len(members), sum(a.nbytes for a in arrays)


def copy(args: argparse.Namespace) -> int:
    from zarrox.nodes.node import normalize_path

    src_store = _store(args.source, args.storage_option)
    dst_store = _store(args.dest, args.dest_storage_option)
    path = normalize_path(args.path)
    dest_path = normalize_path(args.dest_path if args.dest_path is not None else args.path)
    node = open_node(src_store, path=path, mode="r")
    reencode = any(
        v is not None for v in (args.chunks, args.shards, args.compressor, args.zarr_format)
    )
    _refuse_existing(dst_store, dest_path, args.dest, args.overwrite)
    if reencode:
        copied, nbytes = _copy_reencoded(args, node, dst_store, dest_path)
        mode = "re-encoded"
    else:
        copied, nbytes = _copy_bytes(args, src_store, dst_store, node, path, dest_path)
        mode = "bytes"
    kind = "array" if isinstance(node, Array) else "hierarchy"
    if args.json:
        _print_json(
            {
                "source": args.source,
                "dest": args.dest,
                "path": "/" + path,
                "dest_path": "/" + dest_path,
                "kind": kind,
                "mode": mode,
                "copied": copied,
                "bytes": nbytes,
            }
        )
    else:
        if mode == "bytes":
            what = f"{copied} keys, {_size(nbytes)} stored"
        else:
            what = f"{copied} nodes, {_size(nbytes)} of values re-encoded"
        print(
            f"copied the {kind} at '/{path}' of {args.source} to '/{dest_path}' of "
            f"{args.dest} ({what})"
        )
    return 0


def convert(args: argparse.Namespace) -> int:
    from zarrox.nodes.node import normalize_path

    src_store = _store(args.source, args.storage_option)
    dst_store = None if args.dest is None else _store(args.dest, args.dest_storage_option)
    dest_path = normalize_path(args.path)
    if dst_store is not None:
        _refuse_existing(dst_store, dest_path, args.dest, args.overwrite)
    with progress_bar("converting", enabled=wanted(args.no_progress)) as update:
        node = zarrox.convert(
            src_store,
            dst_store,
            path=args.path,
            shards=args.shards,
            overwrite=args.overwrite,
            progress=update,
        )
    where = args.dest or args.source
    kind = "array" if isinstance(node, Array) else "hierarchy"
    if args.json:
        _print_json({"converted": kind, "path": node.name, "dest": where, "zarr_format": 3})
        return 0
    print(f"converted the {kind} at '{node.name}' to Zarr v3 in {where}")
    print(node.tree() if isinstance(node, Group) else node.info)
    return 0


def bench(args: argparse.Namespace) -> int:
    """Time read-all of an array against its decode floor (every stored chunk
    fetched and decoded on all threads, nothing placed in an output)."""
    node = _open(args)
    if not isinstance(node, Array):
        raise CliError(f"'{node.name}' is a group: give the array with --path")
    a = node
    a[...]  # warm the page cache
    reads, floors = [], []
    n = nbytes = 0
    with progress_bar("bench", unit="items", enabled=wanted(args.no_progress)) as update:
        for i in range(args.repeat):
            t0 = time.perf_counter()
            a[...]
            reads.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            n, nbytes = _core.decode_stored_chunks(a._handle)
            floors.append(time.perf_counter() - t0)
            update(i + 1, args.repeat)
    read, floor = float(np.median(reads)), float(np.median(floors))
    if args.json:
        _print_json(
            {
                "array": a.name,
                "shape": list(a.shape),
                "dtype": str(a.dtype),
                "stored_chunks": n,
                "nbytes": a.nbytes,
                "threads": zarrox.get_num_threads(),
                "repeat": args.repeat,
                "read_seconds": read,
                "floor_seconds": floor,
                "ratio": read / floor if floor else None,
            }
        )
        return 0
    print(
        f"array {a.name}: {a.shape} {a.dtype}, {n} stored chunks, {_size(a.nbytes)}, "
        f"{zarrox.get_num_threads()} threads, median of {args.repeat}"
    )
    print(f"read-all      {read * 1e3:9.2f} ms  {a.nbytes / read / 1e6:8.0f} MB/s")
    print(f"decode floor  {floor * 1e3:9.2f} ms  {nbytes / floor / 1e6:8.0f} MB/s")
    print(f"read-all / floor: {read / floor:.2f}x")
    return 0


def clean(args: argparse.Namespace) -> int:
    from zarrox.storage import LocalStore

    store = _store(args.store, None)
    if not isinstance(store, LocalStore):
        raise ValueError(f"{args.store}: only a local store has temporary files to clean")
    removed = store.remove_temporaries(args.older_than)
    if args.json:
        _print_json({"store": args.store, "removed": removed})
    else:
        print(f"removed {removed} temporary file{'s' if removed != 1 else ''} from {args.store}")
    return 0


# -- the parser -----------------------------------------------------------------------------------


_Argument = tuple[tuple[str, ...], dict[str, Any]]


def _arg(*flags: str, **kwargs: Any) -> _Argument:
    """One ``add_argument`` call of a command: its flags and keywords."""
    return flags, kwargs


_STORE = _arg("store", help="path or URL of the store")
_PATH = _arg("--path", default=None, help="node path inside the store")
_SOURCE_PATH = _arg("--path", default=None, help="node path inside the source store")
_OVERWRITE = _arg("--overwrite", action="store_true", help="replace what is at the destination")
_STORAGE_OPTION = _arg(
    "--storage-option",
    action="append",
    type=option_arg,
    metavar="KEY=VALUE",
    help="a storage option of the (source) store, e.g. endpoint_url=http://..., anon=true",
)
_DEST_STORAGE_OPTION = _arg(
    "--dest-storage-option",
    action="append",
    type=option_arg,
    metavar="KEY=VALUE",
    help="a storage option of the destination store",
)


class _Command(NamedTuple):
    name: str
    func: Callable[[argparse.Namespace], int]
    help: str
    arguments: tuple[_Argument, ...]
    description: str | None = None


#: the subcommands, in the order ``zarrox --help`` lists them
_COMMANDS = (
    _Command(
        "demo",
        demo,
        "write, read back and verify a real compressed dataset",
        (
            _arg("--dir", help="where to write (default: a temporary directory)"),
            _arg("--shape", type=shape_arg, default=(256, 256, 256), metavar="Z,Y,X"),
            _arg("--chunks", type=shape_arg, default=(64, 64, 64), metavar="Z,Y,X"),
            _arg("--codec", choices=["zstd", "blosc", "gzip", "none"], default="zstd"),
            _arg("--keep", action="store_true", help="keep the temporary directory"),
        ),
    ),
    _Command("info", info, "describe an array or group", (_STORE, _PATH, _STORAGE_OPTION)),
    _Command("tree", tree, "print a group's hierarchy", (_STORE, _PATH, _STORAGE_OPTION)),
    _Command(
        "verify",
        verify,
        "decode every stored chunk; report missing and corrupt chunks",
        (
            _STORE,
            _PATH,
            _arg("--fail-on-missing", action="store_true", help="missing chunks are failures too"),
            _arg(
                "--max-listed", type=positive_int, default=10, help="missing keys listed per array"
            ),
            _STORAGE_OPTION,
        ),
        "Decode every stored chunk of an array, or of every array below a group (checksums "
        "included), and report corrupt chunks, missing chunks (which read as the fill value) "
        "and keys that belong to no chunk. Exit status 1 when a chunk is corrupt (or, with "
        "--fail-on-missing, missing).",
    ),
    _Command(
        "copy",
        copy,
        "copy an array or hierarchy to another store (optionally re-encoded)",
        (
            _arg("source", help="path or URL of the source store"),
            _arg("dest", help="path or URL of the destination store"),
            _SOURCE_PATH,
            _arg("--dest-path", default=None, help="node path in the destination (--path)"),
            _arg("--chunks", type=shape_arg, default=None, metavar="Z,Y,X", help="rechunk"),
            _arg(
                "--shards",
                type=shards_arg,
                default=None,
                metavar="Z,Y,X",
                help="reshard (a shard shape, or none)",
            ),
            _arg(
                "--compressor",
                type=compressor_arg,
                default=None,
                metavar="NAME[:LEVEL]",
                help="recompress: zstd[:L], gzip[:L], blosc[:CNAME[:L]], zlib, bz2, lzma, lz4, "
                "none",
            ),
            _arg("--zarr-format", type=int, choices=[2, 3], default=None),
            _OVERWRITE,
            _STORAGE_OPTION,
            _DEST_STORAGE_OPTION,
        ),
        "Copy an array or hierarchy from one store to another (any two: local paths, .zip "
        "files, s3://, gs://, az://, memory://). Without re-encoding options the stored bytes "
        "are copied as they are; --chunks, --shards, --compressor or --zarr-format re-encode "
        "every array.",
    ),
    _Command(
        "convert",
        convert,
        "convert an array or hierarchy to Zarr v3",
        (
            _arg("source", help="path or URL of the store to convert"),
            _arg("dest", nargs="?", default=None, help="where to write (default: in place)"),
            _SOURCE_PATH,
            _arg("--shards", type=shape_arg, default=None, metavar="Z,Y,X", help="shard shape"),
            _OVERWRITE,
            _STORAGE_OPTION,
            _DEST_STORAGE_OPTION,
        ),
    ),
    _Command(
        "clean",
        clean,
        "remove the temporary files of writers that died mid-write",
        (
            _arg("store", help="path of the local store"),
            _arg("--older-than", type=float, default=3600.0, metavar="SECONDS"),
        ),
        "Remove the temporary files a writer killed mid-write leaves in a local store (readers "
        "never see them): those whose process is gone, and any older than --older-than "
        "seconds.",
    ),
    _Command(
        "bench",
        bench,
        "time read-all of an array against its decode floor",
        (
            _STORE,
            _arg("--path", default=None, help="array path inside the store"),
            _arg("--repeat", type=positive_int, default=10),
            _STORAGE_OPTION,
        ),
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="zarrox",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"zarrox {zarrox.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--no-progress", action="store_true", help="no progress bar (there is none off a terminal)"
    )
    for command in _COMMANDS:
        p = sub.add_parser(
            command.name, parents=[common], help=command.help, description=command.description
        )
        for flags, kwargs in command.arguments:
            p.add_argument(*flags, **kwargs)
        p.set_defaults(func=command.func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error(
            "a command is required: demo, info, tree, verify, copy, convert, clean or bench"
        )
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("zarrox: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (zarrox ... | head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:
        if os.environ.get("ZARROX_DEBUG"):
            raise
        message = str(e) if str(e) else type(e).__name__
        if isinstance(e, KeyError) and e.args:
            message = str(e.args[0])
        first = message.strip().splitlines()[0] if message.strip() else type(e).__name__
        print(f"zarrox: error: {first}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
