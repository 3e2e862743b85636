"""Many writers, one array: ``--writers`` processes each write their own inner chunks of the
same shards (or their own quarter of the same unsharded chunks), one write per call, for
``--rounds`` rounds, under ``io.conditional_writes`` = each of ``--modes``; the modes
alternate within each repetition. Reports per mode: writes per second (all writers), merges
retried per write (lost races), and cells lost (cells that do not hold what their writer
wrote last; "off" is how zarrox, and zarr-python, behaved before conditional writes).

    .venv/bin/python benches/bench_many_writers.py --dir /tmp --repeat 3
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

SHAPE = (64, 64)


def blocks(layout: str, writers: int, w: int) -> list[tuple[slice, slice]]:
    if layout == "shards":
        return [
            (slice(i * 8, i * 8 + 8), slice(j * 8, j * 8 + 8))
            for i in range(8)
            for j in range(8)
            if (i * 8 + j) % writers == w
        ]
    rows = 32 // writers
    return [
        (slice(ci * 32 + w * rows, ci * 32 + (w + 1) * rows), slice(cj * 32, cj * 32 + 32))
        for ci in range(2)
        for cj in range(2)
    ]


def writer(
    path: str,
    layout: str,
    mode: str,
    writers: int,
    w: int,
    rounds: int,
    start: multiprocessing.synchronize.Barrier,
    results: multiprocessing.Queue,
) -> None:
    import zarrox
    from zarrox import _core

    zarrox.config.set({"io.conditional_writes": mode, "threading.max_workers": 1})
    a = zarrox.open_array(path, path="a", mode="r+")
    mine = blocks(layout, writers, w)
    start.wait()
    t0 = time.perf_counter()
    for r in range(rounds):
        for b in mine:
            a[b] = r * 64 + w + 1
    results.put((w, time.perf_counter() - t0, len(mine) * rounds, _core.write_retries()))


def run(root: str, layout: str, mode: str, writers: int, rounds: int) -> dict[str, float]:
    import zarrox

    path = tempfile.mkdtemp(dir=root)
    kw = {"chunks": (8, 8), "shards": (32, 32)} if layout == "shards" else {"chunks": (32, 32)}
    zarrox.create_array(
        path,
        name="a",
        shape=SHAPE,
        dtype="int32",
        fill_value=0,
        compressors=[{"name": "zstd", "configuration": {"level": 1}}],
        **kw,
    )
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(writers)
    results: multiprocessing.Queue = ctx.Queue()
    procs = [
        ctx.Process(target=writer, args=(path, layout, mode, writers, w, rounds, start, results))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    got = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    want = np.zeros(SHAPE, dtype="int32")
    for w in range(writers):
        for b in blocks(layout, writers, w):
            want[b] = (rounds - 1) * 64 + w + 1
    lost = int((zarrox.open_array(path, path="a", mode="r")[...] != want).sum())
    shutil.rmtree(path)
    writes = sum(n for _, _, n, _ in got)
    return {
        "writes/s": writes / max(t for _, t, _, _ in got),
        "retries/write": sum(r for *_, r in got) / writes,
        "lost": lost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the arrays go")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default="off,auto")
    parser.add_argument("--layouts", default="shards,chunks")
    args = parser.parse_args()
    modes = args.modes.split(",")
    for layout in args.layouts.split(","):
        runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
        for rep in range(args.repeat):
            for mode in modes if rep % 2 == 0 else modes[::-1]:
                runs[mode].append(run(args.dir, layout, mode, args.writers, args.rounds))
        print(f"{layout}, {args.writers} writers x {args.rounds} rounds, {os.cpu_count()} CPUs:")
        print(f"  {'mode':6} {'writes/s':>9} {'retries/write':>14} {'cells lost (of 4096)':>22}")
        for mode, rs in runs.items():
            print(
                f"  {mode:6} {statistics.median(r['writes/s'] for r in rs):9.0f} "
                f"{statistics.median(r['retries/write'] for r in rs):14.3f} "
                f"{', '.join(str(int(r['lost'])) for r in rs):>22}"
            )


if __name__ == "__main__":
    main()
