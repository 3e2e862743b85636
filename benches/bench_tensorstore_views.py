"""TensorStore views (``zarrox.open(spec)``): reads and writes through transforms, and the
cost of building views (index operations, dimension expressions, index-array compositions),
for two builds of zarrox compared in one run.

Each repetition runs one process per build, the builds alternating; a process times every
case (best of ``--inner``) and the run keeps each case's best over the repetitions::

    python benches/bench_tensorstore_views.py --build /tmp/before --build /tmp/after \\
        --data /dev/shm --repeat 4

``--build`` is a folder that holds a ``zarrox`` package (with its compiled ``_core``); with
none, the installed zarrox runs alone. The data is a 2048^2 float32 array in 256^2 chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _fastest(f: Callable[[], Any], n: int) -> float:
    f()
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def _cases(v: Any, x: np.ndarray, d: Any) -> dict[str, Callable[[], Any]]:
    small = {"driver": "zarr3", "kvstore": v.spec().to_json()["kvstore"]}
    gathered = {
        **small,
        "transform": {
            "input_shape": [64, 256],
            "output": [
                {"index_array": [[i * 31] for i in range(64)]},
                {"input_dimension": 1, "offset": 100},
            ],
        },
    }
    import zarrox

    indexed = zarrox.open(gathered)
    return {
        "view read": lambda: v.read(),
        "transposed view read (v.T)": lambda: v.T.read(),
        "reversed rows read (v[::-1])": lambda: v[::-1].read(),
        "transposed view write (v.T)": lambda: v.T.write(x.T),
        "C-ordered value into v.T": lambda: v.T.write(x),
        "strided transposed read (v.T[::2, ::3])": lambda: v.T[::2, ::3].read(),
        "index-array rows read": lambda: indexed.read(),
        "one chunk through a chain of operations": lambda: v.translate_to[10, 10][d[0].label["y"]][
            d["y"][20:276]
        ][..., 10:266].T.read(),
        "building views only (x100)": lambda: [
            v[3:900:2].translate_by[5, 5].T[d[0].stride[2]] for _ in range(100)
        ],
        "composing an index array (x100)": lambda: [indexed[::-1, 3:9] for _ in range(100)],
    }


def _worker(data: str, inner: int) -> None:
    import zarrox

    root = tempfile.mkdtemp(dir=data)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": root + "/a/"}}
    x = np.arange(2048 * 2048, dtype="float32").reshape(2048, 2048)
    v = zarrox.open(
        spec,
        create=True,
        dtype="float32",
        shape=[2048, 2048],
        chunk_layout={"write_chunk": {"shape": [256, 256]}},
    )
    v.write(x)
    cases = _cases(v, x, zarrox.d)
    out = {k: _fastest(f, inner) for k, f in cases.items()}
    v.write(x)
    # every read checked against numpy
    rows = [i * 31 for i in range(64)]
    expected = {
        "view read": x,
        "transposed view read (v.T)": x.T,
        "reversed rows read (v[::-1])": x[::-1],
        "strided transposed read (v.T[::2, ::3])": x.T[::2, ::3],
        "index-array rows read": x[rows, 100:356],
        "one chunk through a chain of operations": x[10:266, 0:256].T,
    }
    for case, want in expected.items():
        assert np.array_equal(cases[case](), want), case
    subprocess.run(["rm", "-rf", root], check=True)
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", default=[], help="folder with a zarrox")
    parser.add_argument("--data", default=tempfile.gettempdir())
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--inner", type=int, default=15)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.data, args.inner)
        return
    builds = args.build or [""]
    best: dict[str, dict[str, float]] = {b: {} for b in builds}
    for _ in range(args.repeat):
        for b in builds:
            env = dict(os.environ, PYTHONPATH=b) if b else dict(os.environ)
            cmd = [sys.executable, __file__, "--worker", "--data", args.data]
            cmd += ["--inner", str(args.inner)]
            run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            for k, t in json.loads(run.stdout.splitlines()[-1]).items():
                best[b][k] = min(best[b].get(k, float("inf")), t)
    print("failed cases: 0 (every read checked against numpy in every process)")
    first = builds[0]
    names = [os.path.basename(b.rstrip("/")) or "installed" for b in builds]
    print(f"{'case':45s}" + "".join(f"{n:>12s}" for n in names) + "   ratio (last/first)")
    for case in best[first]:
        times = [best[b][case] * 1e3 for b in builds]
        ratio = times[-1] / times[0]
        print(f"{case:45s}" + "".join(f"{t:10.2f}ms" for t in times) + f"   {ratio:.3f}")


if __name__ == "__main__":
    main()
