"""Per-call cost (issue 42, item 2): reading and writing a 128 MiB array one 64 KiB chunk per
call, zarrox against zarrista (zarrs' Python API) and tensorstore, in one process.

The array is 8192 x 8192 uint16 (a smooth field plus noise, so it compresses as real data
does) in 128 x 256 chunks (64 KiB, 2048 of them), stored four ways: ``raw`` (bytes only),
``zstd`` (level 1), ``blosc`` (lz4, byte shuffle) and ``sharded`` (1024 x 1024 shards of
those 64 KiB inner chunks, each zstd level 1). Every implementation reads the same files,
written once by zarrox, and writes into empty arrays of the same metadata (made untimed
before each run).

* ``read``: one basic selection per chunk, ``a[r0:r1, c0:c1]`` (zarrista: ``np.asarray(z[...])``,
  tensorstore: ``t[...].read().result()``), the chunks in row-major order;
* ``write``: the same selections written with the matching block of the source array
  (tensorstore: ``t[...].write(block).result()``).

Each repetition runs every implementation once per case, in an order rotated by one each
repetition (so a noisy phase of the machine is shared), after an untimed warm-up repetition
(page cache, pools, the files of the first write). The last result of every implementation
is compared with the source: a wrong answer fails the run. Reported: the median time, the
time per call, and zarrox's ratio to the faster of zarrista and tensorstore (the issue's goal:
at most 0.8). ``--tmpdir`` chooses where the files go (a tmpfs and an ext4 disk behave
differently for writes).

    .venv/bin/python benches/bench_per_call.py [--repeat 7] [--cases read,write]
        [--codecs raw,zstd,blosc,sharded] [--impls zarrox,zarrista,tensorstore]
        [--tmpdir DIR] [--markdown FILE] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SHAPE = (8192, 8192)
CHUNKS = (128, 256)
SHARDS = (1024, 1024)
DTYPE = "uint16"
CODECS = ("raw", "zstd", "blosc", "sharded")
IMPLS = ("zarrox", "zarrista", "tensorstore")
PEERS = ("zarrista", "tensorstore")
GOAL = 0.8


def source() -> np.ndarray:
    """The data: a smooth field plus a little noise (compressible, not trivially)."""
    y, x = np.ogrid[: SHAPE[0], : SHAPE[1]]
    field = 20000 + 8000 * np.sin(y / 300.0) * np.cos(x / 500.0)
    noise = np.random.default_rng(42).integers(0, 64, size=SHAPE)
    return (field + noise).astype(DTYPE)


def create_kwargs(codec: str) -> dict[str, Any]:
    """zarrox.create_array's arguments for ``codec``."""
    import zarrox

    kw: dict[str, Any] = {"shape": SHAPE, "dtype": DTYPE, "chunks": CHUNKS, "fill_value": 0}
    if codec == "raw":
        kw["compressors"] = None
    elif codec == "zstd":
        kw["compressors"] = zarrox.codecs.ZstdCodec(level=1)
    elif codec == "blosc":
        kw["compressors"] = zarrox.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")
    elif codec == "sharded":
        kw["shards"] = SHARDS
        kw["compressors"] = zarrox.codecs.ZstdCodec(level=1)
    else:
        raise ValueError(codec)
    return kw


def selections() -> list[tuple[slice, slice]]:
    return [
        (slice(r, r + CHUNKS[0]), slice(c, c + CHUNKS[1]))
        for r in range(0, SHAPE[0], CHUNKS[0])
        for c in range(0, SHAPE[1], CHUNKS[1])
    ]


def make_empty(path: Path, codec: str) -> None:
    """An empty array of ``codec``'s layout at ``path`` (its metadata only)."""
    import zarrox

    shutil.rmtree(path, ignore_errors=True)
    zarrox.create_array(str(path), **create_kwargs(codec))


def opener(impl: str) -> Callable[[Path], Any]:
    """``impl``'s way to open the array at a path for reading and writing."""
    if impl == "zarrox":
        import zarrox

        return lambda p: zarrox.open_array(str(p), mode="r+")
    if impl == "zarrista":
        import zarrista
        from zarrista.store import FilesystemStore

        return lambda p: zarrista.Array.open(FilesystemStore(str(p)), "/")
    if impl == "tensorstore":
        import tensorstore as ts

        spec = {"driver": "zarr3", "kvstore": {"driver": "file"}}
        return lambda p: ts.open({**spec, "kvstore": {"driver": "file", "path": str(p)}}).result()
    raise ValueError(impl)


def reader(impl: str, a: Any, sels: list[tuple[slice, slice]]) -> Callable[[], list[Any]]:
    if impl == "zarrox":
        return lambda: [a[s] for s in sels]
    if impl == "zarrista":
        return lambda: [np.asarray(a[s]) for s in sels]
    return lambda: [a[s].read().result() for s in sels]


def writer(
    impl: str, a: Any, sels: list[tuple[slice, slice]], data: np.ndarray
) -> Callable[[], None]:
    blocks = [np.ascontiguousarray(data[s]) for s in sels]
    pairs = list(zip(sels, blocks, strict=True))
    if impl in ("zarrox", "zarrista"):

        def write() -> None:
            for s, b in pairs:
                a[s] = b

    else:

        def write() -> None:
            for s, b in pairs:
                a[s].write(b).result()

    return write


def check(blocks: list[Any], sels: list[tuple[slice, slice]], data: np.ndarray, what: str) -> None:
    for s, got in zip(sels, blocks, strict=True):
        if not np.array_equal(np.asarray(got), data[s]):
            raise SystemExit(f"{what}: wrong values at {s}")


def run(args: argparse.Namespace) -> dict[tuple[str, str, str], list[float]]:
    import zarrox

    data = source()
    sels = selections()
    root = Path(tempfile.mkdtemp(prefix="bench_per_call_", dir=args.tmpdir))
    times: dict[tuple[str, str, str], list[float]] = {}
    try:
        for codec in args.codecs:
            stored = root / f"{codec}.zarr"
            zarrox.from_array(
                str(stored),
                data=data,
                **{k: v for k, v in create_kwargs(codec).items() if k not in ("shape", "dtype")},
            )
            for case in args.cases:
                for rep in range(args.repeat + 1):  # the first is the warm-up
                    shift = rep % len(args.impls)
                    for impl in args.impls[shift:] + args.impls[:shift]:
                        open_ = opener(impl)
                        if case == "read":
                            fn = reader(impl, open_(stored), sels)
                            t0 = time.perf_counter()
                            got = fn()
                            took = time.perf_counter() - t0
                            if rep == args.repeat:
                                check(got, sels, data, f"{impl} {codec} read")
                            del got
                        else:
                            dest = root / f"{codec}-{impl}.zarr"
                            make_empty(dest, codec)
                            fn = writer(impl, open_(dest), sels, data)
                            t0 = time.perf_counter()
                            fn()
                            took = time.perf_counter() - t0
                            if rep == args.repeat:
                                back = zarrox.open_array(str(dest), mode="r")[...]
                                if not np.array_equal(back, data):
                                    raise SystemExit(f"{impl} {codec} write: wrong values")
                        if rep:
                            times.setdefault((codec, case, impl), []).append(took)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return times


def table(args: argparse.Namespace, times: dict[tuple[str, str, str], list[float]]) -> str:
    n = len(selections())
    head = "| codec | case | " + " | ".join(args.impls) + " | zarrox / faster peer |"
    lines = [head, "|" + "---|" * (len(args.impls) + 3)]
    for codec in args.codecs:
        for case in args.cases:
            med = {i: statistics.median(times[(codec, case, i)]) for i in args.impls}
            cells = [f"{med[i]:.3f} s ({med[i] / n * 1e6:.0f} us)" for i in args.impls]
            peers = [med[p] for p in PEERS if p in med]
            ratio = f"{med['zarrox'] / min(peers):.2f}" if peers and "zarrox" in med else "-"
            lines.append(f"| {codec} | {case} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--cases", default="read,write")
    p.add_argument("--codecs", default=",".join(CODECS))
    p.add_argument(
        "--impls",
        default=",".join(i for i in IMPLS if importlib.util.find_spec(i) is not None),
        help="default: those of zarrox, zarrista, tensorstore that are installed",
    )
    p.add_argument("--tmpdir", default=None)
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument(
        "--quick", action="store_true", help="a 1024 x 1024 array (64 chunks), for a smoke run"
    )
    args = p.parse_args()
    if args.quick:
        global SHAPE
        SHAPE = (1024, 1024)
    args.cases = args.cases.split(",")
    args.codecs = args.codecs.split(",")
    args.impls = args.impls.split(",")
    times = run(args)
    text = table(args, times)
    where = args.tmpdir or tempfile.gettempdir()
    n = len(selections())
    print(f"{n} calls of 64 KiB per run, median of {args.repeat}, files in {where}")
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    print("failed cases: 0")  # a wrong value read or written ends the run before this
    return 0


if __name__ == "__main__":
    sys.exit(main())
