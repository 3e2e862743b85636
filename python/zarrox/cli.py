"""The ``zarrox`` command line: ``demo``, ``info``, ``tree``, ``convert``, ``bench``."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import zarrox
from zarrox.array import Array
from zarrox.group import Group


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


def make_volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth 3-D uint16 field with noise: compresses like real imaging data."""
    rng = np.random.default_rng(seed)
    axes = np.meshgrid(
        *[np.linspace(0, 4 * np.pi, n, dtype=np.float32) for n in shape], indexing="ij", sparse=True
    )
    field = sum(np.sin(a * (1 + i)) for i, a in enumerate(axes))
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-9) * 4000
    noise = rng.integers(0, 8, size=shape, dtype=np.uint16)
    return (np.asarray(field, dtype=np.float32).astype(np.uint16) + noise).astype(np.uint16)


def demo(args: argparse.Namespace) -> int:
    shape = tuple(int(s) for s in args.shape.split(","))
    chunks = tuple(int(s) for s in args.chunks.split(","))
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
    tmp = None
    root = Path(args.dir) if args.dir else Path(tmp := tempfile.mkdtemp(prefix="zarrox-demo-"))
    try:
        print(f"zarrox {zarrox.__version__} demo ({zarrox.get_num_threads()} threads)")
        data = make_volume(shape)
        print(
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
            dimension_names=["z", "y", "x"],
            attributes={"units": "counts"},
        )
        t0 = time.perf_counter()
        arr[...] = data
        t_write = time.perf_counter() - t0
        n_chunks, stored = _stored_bytes(group.store, "volume/")
        print(
            f"wrote {n_chunks} chunks to {root / 'volume'} in {t_write:.3f} s "
            f"({data.nbytes / t_write / 1e6:.0f} MB/s); stored {_size(stored)}, "
            f"ratio {data.nbytes / max(stored, 1):.2f}x"
        )
        reopened = zarrox.open_array(root, path="volume", mode="r")
        t0 = time.perf_counter()
        back = reopened[...]
        t_read = time.perf_counter() - t0
        print(f"read it back in {t_read:.3f} s ({data.nbytes / t_read / 1e6:.0f} MB/s)")
        if not np.array_equal(back, data):
            print("ERROR: the data read back differs from the data written", file=sys.stderr)
            return 1
        z = shape[0] // 2
        t0 = time.perf_counter()
        plane = reopened[z, ::2, ::2]
        t_slab = time.perf_counter() - t0
        if not np.array_equal(plane, data[z, ::2, ::2]):
            print("ERROR: a strided plane read back differs", file=sys.stderr)
            return 1
        print(f"strided plane [{z}, ::2, ::2] {plane.shape} read in {t_slab * 1e3:.1f} ms")
        print(f"verified: all {data.size} values equal; attributes {dict(reopened.attrs)}")
        print(zarrox.open_group(root, mode="r").tree())
        return 0
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def info(args: argparse.Namespace) -> int:
    node = zarrox.open(args.store, path=args.path, mode="r")
    if isinstance(node, Array):
        print(node.info)
    else:
        assert isinstance(node, Group)
        print(f"Type               : Group ({node.name})")
        print(f"Members            : {len(node)}")
        print(f"Attributes         : {dict(node.attrs)}")
    return 0


def tree(args: argparse.Namespace) -> int:
    print(zarrox.open_group(args.store, path=args.path, mode="r").tree())
    return 0


def convert(args: argparse.Namespace) -> int:
    shards = tuple(int(s) for s in args.shards.split(",")) if args.shards else None
    node = zarrox.convert(
        args.source, args.dest, path=args.path, shards=shards, overwrite=args.overwrite
    )
    where = args.dest or args.source
    kind = "array" if isinstance(node, Array) else "hierarchy"
    print(f"converted the {kind} at '{node.name}' to Zarr v3 in {where}")
    print(zarrox.open_group(where, mode="r").tree() if kind == "hierarchy" else node.info)
    return 0


def _progress(label: str, done: int, total: int) -> None:
    """A one-line progress bar on stderr (when it is a terminal)."""
    if not sys.stderr.isatty():
        return
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    print(
        f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}",
        end=end,
        file=sys.stderr,
        flush=True,
    )


def bench(args: argparse.Namespace) -> int:
    """Time read-all of an array against its decode floor (every stored chunk
    fetched and decoded on all threads, nothing placed in an output)."""
    a = zarrox.open_array(args.store, path=args.path, mode="r")
    a[...]  # warm the page cache
    reads, floors = [], []
    for i in range(args.repeat):
        t0 = time.perf_counter()
        a[...]
        reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        n, nbytes = a._handle.decode_stored_chunks()
        floors.append(time.perf_counter() - t0)
        _progress("bench", i + 1, args.repeat)
    read, floor = float(np.median(reads)), float(np.median(floors))
    print(
        f"array {a.name}: {a.shape} {a.dtype}, {n} stored chunks, {_size(a.nbytes)}, "
        f"{zarrox.get_num_threads()} threads, median of {args.repeat}"
    )
    print(f"read-all      {read * 1e3:9.2f} ms  {a.nbytes / read / 1e6:8.0f} MB/s")
    print(f"decode floor  {floor * 1e3:9.2f} ms  {nbytes / floor / 1e6:8.0f} MB/s")
    print(f"read-all / floor: {read / floor:.2f}x")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="zarrox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="write, read back and verify a real compressed dataset")
    p.add_argument("--dir", help="where to write (default: a temporary directory)")
    p.add_argument("--shape", default="256,256,256")
    p.add_argument("--chunks", default="64,64,64")
    p.add_argument("--codec", choices=["zstd", "blosc", "gzip", "none"], default="zstd")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.set_defaults(func=demo)
    for name, func, help_ in (
        ("info", info, "describe an array or group"),
        ("tree", tree, "print a group's hierarchy"),
    ):
        p = sub.add_parser(name, help=help_)
        p.add_argument("store", help="path of the store")
        p.add_argument("--path", default=None, help="node path inside the store")
        p.set_defaults(func=func)
    p = sub.add_parser("bench", help="time read-all of an array against its decode floor")
    p.add_argument("store", help="path of the store")
    p.add_argument("--path", default=None, help="array path inside the store")
    p.add_argument("--repeat", type=int, default=10)
    p.set_defaults(func=bench)
    p = sub.add_parser("convert", help="convert an array or hierarchy to Zarr v3")
    p.add_argument("source", help="path of the store to convert")
    p.add_argument("dest", nargs="?", default=None, help="where to write (default: in place)")
    p.add_argument("--path", default=None, help="node path inside the source store")
    p.add_argument("--shards", default=None, help="shard shape, e.g. 128,128,128")
    p.add_argument("--overwrite", action="store_true", help="replace what is at the destination")
    p.set_defaults(func=convert)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (zarrox.errors.ZarroxError, OSError) as e:
        print(f"zarrox: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
