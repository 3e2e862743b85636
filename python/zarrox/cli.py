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
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

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


def _options(pairs: list[tuple[str, Any]] | None) -> dict[str, Any] | None:
    return dict(pairs) if pairs else None


def _store(url: str, pairs: list[tuple[str, Any]] | None) -> Any:
    """The store at ``url``, with the storage options given on the command line."""
    from zarrox.storage import resolve_store

    return resolve_store(url, storage_options=_options(pairs))


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


def make_volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth 3-D uint16 field with noise: compresses like real imaging data."""
    rng = np.random.default_rng(seed)
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


def demo(args: argparse.Namespace) -> int:
    from zarrox.transfer import block_shape, copy_values, regions

    shape, chunks = args.shape, args.chunks
    if len(shape) != len(chunks):
        raise CliError(f"--chunks {chunks} must have one entry per dimension of --shape {shape}")
    compressors = {
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
    }[args.codec]
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
        group = zarrox.open_group(root, mode="w", attributes={"description": "zarrox demo"})
        arr = group.create_array(
            "volume",
            shape=shape,
            dtype="uint16",
            chunks=chunks,
            compressors=compressors,
            dimension_names=["z", "y", "x"][-len(shape) :] if len(shape) <= 3 else None,
            attributes={"units": "counts"},
        )
        block = max(data.nbytes // 16, 1 << 20)
        with progress_bar("writing", enabled=show) as update:
            t0 = time.perf_counter()
            copy_values(data, arr, progress=lambda d, t: update(d * 2, t * 2), target=block)
            t_write = time.perf_counter() - t0
        n_chunks, stored = _stored_bytes(group.store, "volume/")
        say(
            f"wrote {n_chunks} chunks to {root / 'volume'} in {t_write:.3f} s "
            f"({data.nbytes / t_write / 1e6:.0f} MB/s); stored {_size(stored)}, "
            f"ratio {data.nbytes / max(stored, 1):.2f}x"
        )
        reopened = zarrox.open_array(root, path="volume", mode="r")
        back = np.empty_like(data)
        step = block_shape(shape, reopened.chunks, data.itemsize, block)
        with progress_bar("reading", enabled=show) as update:
            t0 = time.perf_counter()
            done = 0
            for region in regions(shape, step):
                reopened.get_basic_selection(region, out=back[region])
                done += back[region].nbytes
                update(done, data.nbytes)
            t_read = time.perf_counter() - t0
        say(f"read it back in {t_read:.3f} s ({data.nbytes / t_read / 1e6:.0f} MB/s)")
        if not np.array_equal(back, data):
            raise CliError("the data read back differs from the data written")
        z = shape[0] // 2
        t0 = time.perf_counter()
        plane = reopened[(z, *(slice(None, None, 2) for _ in shape[1:]))]
        t_slab = time.perf_counter() - t0
        if not np.array_equal(plane, data[(z, *(slice(None, None, 2) for _ in shape[1:]))]):
            raise CliError("a strided plane read back differs from the data written")
        say(f"strided plane [{z}, ::2, ::2] {plane.shape} read in {t_slab * 1e3:.1f} ms")
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


def copy(args: argparse.Namespace) -> int:
    from zarrox.hierarchy import copy_node, copy_store
    from zarrox.nodes.discover import node_exists
    from zarrox.nodes.node import normalize_path
    from zarrox.nodes.place import ensure_parents

    src_store = _store(args.source, args.storage_option)
    dst_store = _store(args.dest, args.dest_storage_option)
    path = normalize_path(args.path)
    dest_path = normalize_path(args.dest_path if args.dest_path is not None else args.path)
    node = open_node(src_store, path=path, mode="r")
    reencode = any(
        v is not None for v in (args.chunks, args.shards, args.compressor, args.zarr_format)
    )
    if not args.overwrite and node_exists(dst_store, dest_path):
        raise CliError(
            f"a node already exists at '/{dest_path}' of {args.dest}: give --overwrite to "
            "replace it"
        )
    show = wanted(args.no_progress)
    if not reencode:
        if args.overwrite:
            dst_store.delete_prefix(dest_path + "/" if dest_path else "")
        if dest_path and "/" in dest_path:
            ensure_parents(dst_store, dest_path, node.zarr_format)
        with progress_bar("copying", unit="items", enabled=show) as update:
            copied, _, nbytes = copy_store(
                src_store,
                dst_store,
                source_path=path,
                dest_path=dest_path,
                if_exists="replace",
                progress=update,
            )
        mode = "bytes"
    else:
        kwargs: dict[str, Any] = {}
        if args.zarr_format is not None:
            kwargs["zarr_format"] = args.zarr_format
        fmt = args.zarr_format or node.zarr_format
        if args.chunks is not None:
            kwargs["chunks"] = args.chunks
        if args.shards is not None:
            kwargs["shards"] = None if args.shards == () else args.shards
        if args.compressor is not None:
            kwargs["compressors"] = compressor_codec(args.compressor, fmt)
        with progress_bar("copying", enabled=show) as update:
            new = copy_node(
                node, dst_store, dest_path, overwrite=args.overwrite, progress=update, **kwargs
            )
        members = [] if isinstance(new, Array) else [n for _, n in new.members(None)]
        arrays = [new] if isinstance(new, Array) else [n for n in members if isinstance(n, Array)]
        copied = 1 + len(members)
        nbytes = sum(a.nbytes for a in arrays)
        mode = "re-encoded"
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
    from zarrox.nodes.discover import node_exists
    from zarrox.nodes.node import normalize_path

    src_store = _store(args.source, args.storage_option)
    dst_store = None if args.dest is None else _store(args.dest, args.dest_storage_option)
    dest_path = normalize_path(args.path)
    if dst_store is not None and not args.overwrite and node_exists(dst_store, dest_path):
        raise CliError(
            f"a node already exists at '/{dest_path}' of {args.dest}: give --overwrite to "
            "replace it"
        )
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

    def store_options(p: argparse.ArgumentParser, dest: bool = False) -> None:
        p.add_argument(
            "--storage-option",
            action="append",
            type=option_arg,
            metavar="KEY=VALUE",
            help="a storage option of the (source) store, e.g. endpoint_url=http://..., anon=true",
        )
        if dest:
            p.add_argument(
                "--dest-storage-option",
                action="append",
                type=option_arg,
                metavar="KEY=VALUE",
                help="a storage option of the destination store",
            )

    p = sub.add_parser(
        "demo", parents=[common], help="write, read back and verify a real compressed dataset"
    )
    p.add_argument("--dir", help="where to write (default: a temporary directory)")
    p.add_argument("--shape", type=shape_arg, default=(256, 256, 256), metavar="Z,Y,X")
    p.add_argument("--chunks", type=shape_arg, default=(64, 64, 64), metavar="Z,Y,X")
    p.add_argument("--codec", choices=["zstd", "blosc", "gzip", "none"], default="zstd")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.set_defaults(func=demo)

    for name, func, help_ in (
        ("info", info, "describe an array or group"),
        ("tree", tree, "print a group's hierarchy"),
    ):
        p = sub.add_parser(name, parents=[common], help=help_)
        p.add_argument("store", help="path or URL of the store")
        p.add_argument("--path", default=None, help="node path inside the store")
        store_options(p)
        p.set_defaults(func=func)

    p = sub.add_parser(
        "verify",
        parents=[common],
        help="decode every stored chunk; report missing and corrupt chunks",
        description="Decode every stored chunk of an array, or of every array below a group "
        "(checksums included), and report corrupt chunks, missing chunks (which read as the "
        "fill value) and keys that belong to no chunk. Exit status 1 when a chunk is corrupt "
        "(or, with --fail-on-missing, missing).",
    )
    p.add_argument("store", help="path or URL of the store")
    p.add_argument("--path", default=None, help="node path inside the store")
    p.add_argument("--fail-on-missing", action="store_true", help="missing chunks are failures too")
    p.add_argument(
        "--max-listed", type=positive_int, default=10, help="missing keys listed per array"
    )
    store_options(p)
    p.set_defaults(func=verify)

    p = sub.add_parser(
        "copy",
        parents=[common],
        help="copy an array or hierarchy to another store (optionally re-encoded)",
        description="Copy an array or hierarchy from one store to another (any two: local "
        "paths, .zip files, s3://, gs://, az://, memory://). Without re-encoding options the "
        "stored bytes are copied as they are; --chunks, --shards, --compressor or "
        "--zarr-format re-encode every array.",
    )
    p.add_argument("source", help="path or URL of the source store")
    p.add_argument("dest", help="path or URL of the destination store")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--dest-path", default=None, help="node path in the destination (--path)")
    p.add_argument("--chunks", type=shape_arg, default=None, metavar="Z,Y,X", help="rechunk")
    p.add_argument(
        "--shards",
        type=shards_arg,
        default=None,
        metavar="Z,Y,X",
        help="reshard (a shard shape, or none)",
    )
    p.add_argument(
        "--compressor",
        type=compressor_arg,
        default=None,
        metavar="NAME[:LEVEL]",
        help="recompress: zstd[:L], gzip[:L], blosc[:CNAME[:L]], zlib, bz2, lzma, lz4, none",
    )
    p.add_argument("--zarr-format", type=int, choices=[2, 3], default=None)
    p.add_argument("--overwrite", action="store_true", help="replace what is at the destination")
    store_options(p, dest=True)
    p.set_defaults(func=copy)

    p = sub.add_parser("convert", parents=[common], help="convert an array or hierarchy to Zarr v3")
    p.add_argument("source", help="path or URL of the store to convert")
    p.add_argument("dest", nargs="?", default=None, help="where to write (default: in place)")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--shards", type=shape_arg, default=None, metavar="Z,Y,X", help="shard shape")
    p.add_argument("--overwrite", action="store_true", help="replace what is at the destination")
    store_options(p, dest=True)
    p.set_defaults(func=convert)

    p = sub.add_parser(
        "clean",
        parents=[common],
        help="remove the temporary files of writers that died mid-write",
        description="Remove the temporary files a writer killed mid-write leaves in a local "
        "store (readers never see them): those whose process is gone, and any older than "
        "--older-than seconds.",
    )
    p.add_argument("store", help="path of the local store")
    p.add_argument("--older-than", type=float, default=3600.0, metavar="SECONDS")
    p.set_defaults(func=clean)

    p = sub.add_parser(
        "bench", parents=[common], help="time read-all of an array against its decode floor"
    )
    p.add_argument("store", help="path or URL of the store")
    p.add_argument("--path", default=None, help="array path inside the store")
    p.add_argument("--repeat", type=positive_int, default=10)
    store_options(p)
    p.set_defaults(func=bench)
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
