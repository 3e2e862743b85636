#!/usr/bin/env python3
"""What bounds a row of the field's suite: measured, in one process per dataset, on the
arrays ``run.py`` generated (``--data`` as given to it).

    python benches/zarr_benchmarks/bounds.py --data /work/bench-data-suite [--scale 1024]

For each library, ``import`` alone (a fresh interpreter running ``import X``, less one
running nothing). Then per dataset, in one warm process, repeated with the libraries
alternating, best of ``--repeat``: the read-all of zarrox, tensorstore and zarrista (seconds
and the minor page faults it took: each fault maps a page of the output, or of a temporary);
zarrox's decode floor (every stored chunk fetched and decoded on all cores, nothing placed:
``_core.decode_stored_chunks``); the same decode on one core (``set_num_threads(1)``: the
per-core decode throughput); zarrox's compression floor (every chunk, or inner chunk, encoded
again on all cores, nothing gathered or stored: ``_core.encode_floor``); and zarrox's round
trip (``from_array``) with its CPU seconds and faults.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _suite  # noqa: E402


def import_seconds(module: str, repeat: int) -> float:
    """The least wall time of ``python -c 'import module'`` less ``python -c 'pass'``."""

    def best(code: str) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - t0)
        return min(times)

    return best(f"import {module}") - best("pass")


def measured(fn: Callable[[], Any]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process, minor faults) of ``fn()``."""
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    del out
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, r1.ru_minflt - r0.ru_minflt


def dataset_bounds(path: Path, repeat: int, scratch: Path) -> dict[str, tuple[float, float, int]]:
    import numpy as np
    import tensorstore as ts
    import zarrista
    from zarrista.store import FilesystemStore

    import zarrox
    from zarrox import _core

    a = zarrox.open_array(str(path), mode="r")
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()
    z = zarrista.Array.open(FilesystemStore(str(path)), "/")
    threads = zarrox.get_num_threads()

    def one_core_decode() -> Any:
        zarrox.set_num_threads(1)
        try:
            return _core.decode_stored_chunks(a._handle)
        finally:
            zarrox.set_num_threads(threads)

    def copy() -> Any:
        shutil.rmtree(scratch, ignore_errors=True)
        return zarrox.from_array(str(scratch), data=a)

    cases: dict[str, Callable[[], Any]] = {
        "zarrox read-all": lambda: a[...],
        "tensorstore read-all": lambda: t.read().result(),
        "zarrista read-all": lambda: np.asarray(z[...]),
        "zarrox decode floor": lambda: _core.decode_stored_chunks(a._handle),
        "zarrox decode, one core": one_core_decode,
        "zarrox compression floor": lambda: _core.encode_floor(a._handle, 1),
        "zarrox round trip": copy,
    }
    for fn in cases.values():  # warm: page cache, pools
        fn()
    best: dict[str, tuple[float, float, int]] = {}
    names = list(cases)
    for rep in range(repeat):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            got = measured(cases[name])
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    shutil.rmtree(scratch, ignore_errors=True)
    return best


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="run.py's --data")
    p.add_argument("--scale", type=int, default=_suite.FULL)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--datasets", default=",".join(_suite.DATASETS))
    args = p.parse_args()
    chunk = args.scale * _suite.CHUNK // _suite.FULL
    root = Path(args.data) / f"{args.scale}-{chunk}-{chunk // 4}"
    print("import alone (seconds, least of the repeats, less an empty interpreter's start):\n")
    print("| module | s |\n|---|---:|")
    for module in ("zarrox", "tensorstore", "zarrista", "zarr", "zarrs", "dask.array"):
        print(f"| {module} | {import_seconds(module, args.repeat):.2f} |", flush=True)
    nbytes = args.scale**3 * 2
    for name in args.datasets.split(","):
        path = root / _suite.DATASETS[name][0]
        best = dataset_bounds(path, args.repeat, root / "bounds-copy.zarr")
        print(f"\n{name} ({nbytes / 1e9:.2f} GB of values):\n")
        print("| what | wall s | CPU s | GB/s | minor faults |\n|---|---:|---:|---:|---:|")
        for what, (wall, cpu, faults) in best.items():
            print(f"| {what} | {wall:.3f} | {cpu:.2f} | {nbytes / wall / 1e9:.2f} | {faults} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
