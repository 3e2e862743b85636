"""Readers while others rewrite: reads per second of one region of a shard while 1, 2 and 4
processes rewrite the whole shard as fast as they can, on a local directory and on S3 (moto,
started here on 127.0.0.1), for each reader implementation alternating within each repetition.

The array is 64 x 64 int32 in one shard of 16 x 16 inner chunks (zstd); each read takes a
32 x 32 region across four inner chunks, so a reader that reads the shard's index and then
the inner chunks' byte ranges finds the shard rewritten in between. Every rewrite stores one
value everywhere, so a read that mixes two versions shows. Readers:

* ``zarrox``: this checkout's zarrox (the installed one, or ``--after DIR``);
* ``before``: another build of zarrox (``--before DIR``: a directory holding a ``zarrox``
  package with its ``_core`` extension, as ``benches/compare_builds.py`` takes);
* ``tensorstore``: tensorstore's ``zarr3`` driver (no cache pool: every read asks the store).

The writers are zarrox processes (the same for every reader). Reported per store, writer
count and reader: reads per second (median over repetitions), reads that raised, reads that
mixed versions, and the read time against tensorstore's.

    .venv/bin/python benches/bench_readers_under_rewrites.py --before /work/builds/before
    .venv/bin/python benches/bench_readers_under_rewrites.py --stores local --seconds 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: moto on 127.0.0.1)

SHAPE = (64, 64)
REGION = "16:48, 16:48"

READER = r"""
import json, sys, time
import numpy as np

where, impl, seconds = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3])
if impl == "tensorstore":
    import tensorstore as ts
    a = ts.open({"driver": "zarr3", "kvstore": where["kvstore"]}, read=True).result()
    def read():
        return a[16:48, 16:48].read().result()
else:
    import zarrox
    a = zarrox.open_array(where["url"], path="a", mode="r", storage_options=where["options"])
    def read():
        return a[16:48, 16:48]
try:
    read()  # warm up (a reader that fails here is counted below)
except Exception:
    pass
reads = errors = mixed = 0
messages = []
t0 = time.perf_counter()
while time.perf_counter() - t0 < seconds:
    try:
        part = read()
    except Exception as e:  # counted: what the benchmark measures
        errors += 1
        messages.append(f"{type(e).__name__}: {e}"[:200])
        continue
    reads += 1
    mixed += int(not (part == part[0, 0]).all())
elapsed = time.perf_counter() - t0
print(json.dumps({"reads": reads, "errors": errors, "mixed": mixed, "seconds": elapsed,
                  "messages": messages[:3]}))
"""


def rewrite(where: dict[str, Any], w: int, stop: Any, ready: Any) -> None:
    """Writer process: the whole shard again and again, each time one new value."""
    import numpy as np

    import zarrox

    zarrox.config.set({"threading.max_workers": 1})
    a = zarrox.open_array(where["url"], path="a", mode="r+", storage_options=where["options"])
    ready.release()
    i = 0
    while not stop.is_set():
        i += 1
        a[...] = np.full(SHAPE, 1000 * (w + 1) + i % 1000, dtype="int32")


def create(where: dict[str, Any]) -> None:
    import numpy as np

    import zarrox

    a = zarrox.create_array(
        where["url"],
        name="a",
        shape=SHAPE,
        chunks=(16, 16),
        shards=SHAPE,
        dtype="int32",
        fill_value=0,
        compressors=[{"name": "zstd", "configuration": {"level": 1}}],
        storage_options=where["options"],
        overwrite=True,
    )
    a[...] = np.full(SHAPE, 1, dtype="int32")


def read_for(
    where: dict[str, Any], impl: str, seconds: float, builds: dict[str, str | None]
) -> dict[str, Any]:
    env = dict(os.environ)
    build = builds.get(impl)
    if build:
        env["PYTHONPATH"] = build + os.pathsep + env.get("PYTHONPATH", "")
    kind = "tensorstore" if impl == "tensorstore" else "zarrox"
    out = subprocess.run(
        [sys.executable, "-c", READER, json.dumps(where), kind, str(seconds)],
        env=env,
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 120,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{impl} reader failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_case(
    where: dict[str, Any],
    writers: int,
    impls: list[str],
    repeat: int,
    seconds: float,
    builds: dict[str, str | None],
) -> dict[str, list[dict[str, Any]]]:
    create(where)
    ctx = multiprocessing.get_context("spawn")
    stop, ready = ctx.Event(), ctx.Semaphore(0)
    procs = [ctx.Process(target=rewrite, args=(where, w, stop, ready)) for w in range(writers)]
    for p in procs:
        p.start()
    results: dict[str, list[dict[str, Any]]] = {i: [] for i in impls}
    try:
        for _ in range(writers):
            if not ready.acquire(timeout=120):
                raise RuntimeError("a writer did not start")
        time.sleep(0.5)
        for r in range(repeat):
            order = impls if r % 2 == 0 else impls[::-1]
            for impl in order:
                results[impl].append(read_for(where, impl, seconds, builds))
    finally:
        stop.set()
        for p in procs:
            p.join(60)
            if p.is_alive():
                p.kill()
    return results


def summarize(results: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out = {}
    for impl, samples in results.items():
        rates = [s["reads"] / s["seconds"] for s in samples]
        out[impl] = {
            "reads_per_s": statistics.median(rates),
            "reads": sum(s["reads"] for s in samples),
            "errors": sum(s["errors"] for s in samples),
            "mixed": sum(s["mixed"] for s in samples),
            "messages": [m for s in samples for m in s["messages"]][:2],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stores", default="local,s3")
    ap.add_argument("--writers", default="1,2,4")
    ap.add_argument("--impls", default="zarrox,before,tensorstore")
    ap.add_argument("--before", help="directory of the build to compare with (impl 'before')")
    ap.add_argument("--after", help="directory of this build (default: the installed zarrox)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0, help="per reader sample")
    ap.add_argument("--dir", default=None, help="parent of the local array (a real disk)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    impls = [i for i in args.impls.split(",") if i]
    if "before" in impls and not args.before:
        impls.remove("before")
        print("(no --before build given: 'before' left out)")
    builds = {"before": args.before, "zarrox": args.after}
    report: dict[str, Any] = {}
    moto = None
    try:
        for store in args.stores.split(","):
            for writers in (int(w) for w in args.writers.split(",")):
                if store == "local":
                    root = tempfile.mkdtemp(dir=args.dir)
                    where = {
                        "url": root,
                        "options": None,
                        "kvstore": {"driver": "file", "path": root + "/a/"},
                    }
                else:
                    if moto is None:
                        moto = servers.start_moto()
                    bucket = servers.S3Bucket.create(moto.url)
                    where = {
                        "url": bucket.url("data.zarr"),
                        "options": bucket.object_store_options(),
                        "kvstore": bucket.tensorstore_kvstore("data.zarr/a/"),
                    }
                    os.environ.update(bucket.env())
                results = run_case(where, writers, impls, args.repeat, args.seconds, builds)
                summary = summarize(results)
                report[f"{store}/{writers}"] = summary
                ts_rate = summary.get("tensorstore", {}).get("reads_per_s")
                print(f"== {store}, {writers} writer(s)")
                for impl, s in summary.items():
                    vs = (
                        f"  time/read vs tensorstore {ts_rate / s['reads_per_s']:.2f}x"
                        if ts_rate and s["reads_per_s"] and impl != "tensorstore"
                        else ""
                    )
                    print(
                        f"   {impl:12} {s['reads_per_s']:9.1f} reads/s  reads {s['reads']:6}"
                        f"  raised {s['errors']:4}  mixed {s['mixed']}{vs}"
                    )
                    for m in s["messages"]:
                        print(f"      e.g. {m}")
    finally:
        if moto is not None:
            moto.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
