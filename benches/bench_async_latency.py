"""Awaits in flight on a slow store (issue #42, item 3): ``--reads`` one-chunk reads (256)
started at once on an HTTP store that answers every request after ``--latency-ms`` (20 ms).

The benchmark starts its own server on 127.0.0.1: tests/servers.py's static HTTP server
behind its fault proxy with the added latency. The array (``--reads`` x ``--row`` uint16,
one row per chunk, zstd) is written with zarrox into the served directory first.

Implementations, each timed from the first read started to the last result in hand, every
result checked against the source:

* ``zarrox-await``: ``await asyncio.gather(*(a.getitem(i) ...))`` on a ``zarrox.AsyncArray``
  (awaitables the engine completes, no Python thread);
* ``zarrox-to-thread``: the old path, ``asyncio.to_thread(array.__getitem__, i)`` per read
  (awaits bounded by the default executor's threads);
* ``zarrox-threads``: zarrox's blocking API from a pool of ``--threads`` (64) Python threads;
* ``tensorstore``: tensorstore's futures (``t[i].read()`` for every row, then the results).

Within each repetition the implementations alternate (their order rotated per repetition);
each one's median over ``--repeat`` repetitions is reported, with the issue's targets:
``zarrox-await`` at most 0.75x tensorstore, and no slower than ``zarrox-threads``.

``--op open``: the same number of opens of the array instead (metadata: ``zarr.json``),
``zarrox.api.asynchronous.open_array`` (the synchronous code on the event loop, its requests
awaited through the engine), ``asyncio.to_thread(zarrox.open_array, ...)``, the blocking
``zarrox.open_array`` from the thread pool, and tensorstore's ``ts.open`` futures.

    PYTHONPATH=python .venv/bin/python benches/bench_async_latency.py [--reads 256]
        [--latency-ms 20] [--row 8192] [--threads 64] [--repeat 7] [--markdown FILE]
        [--impls zarrox-await,zarrox-to-thread,zarrox-threads,tensorstore] [--op read|open]
        [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: the HTTP server and the latency proxy)

IMPLS = ("zarrox-await", "zarrox-to-thread", "zarrox-threads", "tensorstore")


def make_open_impls(
    url: str, opens: int, threads: int, names: list[str]
) -> dict[str, Callable[[], list[Any]]]:
    """Each implementation as a function that opens the array ``opens`` times at once and
    returns the shapes."""
    import zarrox
    import zarrox.api.asynchronous as za

    def zarrox_await() -> list[Any]:
        async def main() -> list[Any]:
            opened = (za.open_array(url, mode="r") for _ in range(opens))
            return [a.shape for a in await asyncio.gather(*opened)]

        return asyncio.run(main())

    def zarrox_to_thread() -> list[Any]:
        async def main() -> list[Any]:
            opened = (asyncio.to_thread(zarrox.open_array, url, mode="r") for _ in range(opens))
            return [a.shape for a in await asyncio.gather(*opened)]

        return asyncio.run(main())

    pool = ThreadPoolExecutor(threads)

    def zarrox_threads() -> list[Any]:
        return [a.shape for a in pool.map(lambda _: zarrox.open_array(url, mode="r"), range(opens))]

    impls = {
        "zarrox-await": zarrox_await,
        "zarrox-to-thread": zarrox_to_thread,
        "zarrox-threads": zarrox_threads,
    }
    if "tensorstore" in names:
        import tensorstore as ts

        spec = {"driver": "zarr3", "kvstore": url + "/", "recheck_cached_metadata": True}

        def tensorstore() -> list[Any]:
            futures = [ts.open(spec, read=True) for _ in range(opens)]
            return [tuple(f.result().shape) for f in futures]

        impls["tensorstore"] = tensorstore
    return {name: impls[name] for name in names}


def make_impls(
    url: str, reads: int, threads: int, names: list[str]
) -> dict[str, Callable[[], list[Any]]]:
    """Each implementation as a function that runs the reads and returns the rows."""
    import zarrox

    sync = zarrox.open_array(url, mode="r")

    def zarrox_await() -> list[Any]:
        async def main() -> list[Any]:
            a = zarrox.AsyncArray(sync)
            return list(await asyncio.gather(*(a.getitem(i) for i in range(reads))))

        return asyncio.run(main())

    def zarrox_to_thread() -> list[Any]:
        async def main() -> list[Any]:
            reads_ = (asyncio.to_thread(sync.__getitem__, i) for i in range(reads))
            return list(await asyncio.gather(*reads_))

        return asyncio.run(main())

    pool = ThreadPoolExecutor(threads)

    def zarrox_threads() -> list[Any]:
        return list(pool.map(sync.__getitem__, range(reads)))

    impls = {
        "zarrox-await": zarrox_await,
        "zarrox-to-thread": zarrox_to_thread,
        "zarrox-threads": zarrox_threads,
    }
    if "tensorstore" in names:
        import tensorstore as ts

        t = ts.open({"driver": "zarr3", "kvstore": url + "/"}, read=True).result()

        def tensorstore() -> list[Any]:
            futures = [t[i].read() for i in range(reads)]
            return [f.result() for f in futures]

        impls["tensorstore"] = tensorstore
    return {name: impls[name] for name in names}


def run(args: argparse.Namespace) -> dict[str, list[float]]:
    import zarrox

    names = [n for n in args.impls.split(",") if n]
    unknown = set(names) - set(IMPLS)
    if unknown:
        raise SystemExit(f"unknown implementations: {sorted(unknown)}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ref = (np.arange(args.reads * args.row, dtype="uint32") % 65521).astype("uint16")
        ref = ref.reshape(args.reads, args.row)
        z = zarrox.create_array(
            str(root / "a.zarr"), shape=ref.shape, dtype=ref.dtype, chunks=(1, args.row)
        )
        z[...] = ref
        times: dict[str, list[float]] = {n: [] for n in names}
        failed = args.failed
        with servers.start_http(root) as http, servers.FaultProxy(http.port) as proxy:
            proxy.configure(servers.FaultPlan(latency_ms=args.latency_ms))
            make = make_open_impls if args.op == "open" else make_impls
            impls = make(f"{proxy.url}/a.zarr", args.reads, args.threads, names)
            want: Any = [ref.shape] * args.reads if args.op == "open" else ref
            for name, impl in impls.items():  # warm up: connections, metadata, threads
                attempt(name, impl, want, failed)
            for rep in range(args.repeat):
                k = rep % len(names)
                for name in names[k:] + names[:k]:
                    if name in failed:
                        continue
                    start = time.perf_counter()
                    if attempt(name, impls[name], want, failed):
                        times[name].append(time.perf_counter() - start)
    return {n: t for n, t in times.items() if t and n not in failed}


def attempt(name: str, impl: Callable[[], list[Any]], ref: Any, failed: dict[str, str]) -> bool:
    """Run ``impl`` and check its rows (or, opening, the shapes); False (the reason in
    ``failed``) when it fails."""
    try:
        rows = impl()
    except Exception as e:  # noqa: BLE001 - reported as a failed case
        failed[name] = f"{type(e).__name__}: {e}"
        return False
    if isinstance(ref, list):
        if [tuple(r) for r in rows] != ref:
            failed[name] = "wrong shapes"
            return False
        return True
    if not np.array_equal(np.stack([np.asarray(r) for r in rows]), ref):
        failed[name] = "wrong data"
        return False
    return True


def report(args: argparse.Namespace, times: dict[str, list[float]]) -> str:
    med = {n: statistics.median(t) for n, t in times.items()}
    what = "opens of the array" if args.op == "open" else "one-chunk reads"
    lines = [
        f"{args.reads} {what} in flight ({args.row * 2 // 1024} KiB chunks, zstd), "
        f"HTTP store answering after {args.latency_ms:g} ms, {args.repeat} repetitions, "
        "implementations alternating; medians (min-max):",
        "",
        "| implementation | median s | min s | max s |",
        "| --- | --- | --- | --- |",
    ]
    for n, t in times.items():
        lines.append(f"| {n} | {med[n]:.3f} | {min(t):.3f} | {max(t):.3f} |")
    lines.append("")
    ours = med.get("zarrox-await")
    if ours is not None and "tensorstore" in med:
        r = ours / med["tensorstore"]
        lines.append(
            f"- zarrox-await / tensorstore: {r:.2f}x (target <= 0.75x: "
            f"{'met' if r <= 0.75 else 'not met'})"
        )
    if ours is not None and "zarrox-threads" in med:
        r = ours / med["zarrox-threads"]
        lines.append(
            f"- zarrox-await / zarrox-threads ({args.threads} threads): {r:.2f}x "
            f"(target <= 1.0x: {'met' if r <= 1.0 else 'not met'})"
        )
    if ours is not None and "zarrox-to-thread" in med:
        lines.append(f"- zarrox-to-thread / zarrox-await: {med['zarrox-to-thread'] / ours:.2f}x")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reads", type=int, default=256)
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--row", type=int, default=8192, help="elements (uint16) per chunk")
    p.add_argument("--threads", type=int, default=64)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--markdown", type=Path)
    p.add_argument("--quick", action="store_true", help="32 reads, 2 repetitions")
    p.add_argument("--op", choices=("read", "open"), default="read")
    args = p.parse_args()
    if args.quick:
        args.reads, args.repeat = 32, 2
    args.failed = {}
    text = report(args, run(args))
    for name, why in args.failed.items():
        text += f"- {name} failed: {why}\n"
    text += f"\nfailed cases: {len(args.failed)}\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
