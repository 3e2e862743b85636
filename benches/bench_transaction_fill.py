"""Filling a shard with many small writes, with and without a transaction (issue #43, item
4(b)): a shard of ``--grid``x``--grid`` (8x8 = 64) inner chunks of ``--inner``x``--inner``
(128x128) uint16, zstd, filled by:

* ``zarrox-tx``: the 64 inner-chunk writes inside ``with zarrox.transaction():``, committed
  as one write of the shard;
* ``zarrox-loop``: the 64 writes one after the other (each a read-modify-write of the shard);
* ``zarrox-whole``: one write of the whole shard (the floor a transaction aims at);
* ``tensorstore-tx``, ``tensorstore-loop``, ``tensorstore-whole``: the same through
  tensorstore (``with ts.Transaction() as txn: t.with_transaction(txn)[block] = ...``).

Stores: ``tmpfs`` (``--tmpfs-dir``, /dev/shm), ``disk`` (``--disk-dir``, an ext4 directory:
writes there pay for dirty pages and renames) and ``s3`` (moto on 127.0.0.1 behind
tests/servers.py's fault proxy adding ``--latency-ms`` (20) before every request).

One array per store with one shard per fill (every fill fills a shard nobody wrote before);
within each repetition the implementations alternate (order rotated per repetition) after one
untimed warm-up fill each; every filled shard is read back (untimed) and compared with what
was written. Reported: median seconds (min-max), requests per fill on S3, and the issue's
target: ``zarrox-tx`` at most 1.2x ``zarrox-whole``.

    PYTHONPATH=python .venv/bin/python benches/bench_transaction_fill.py [--stores tmpfs,disk,s3]
        [--impls ...] [--repeat 7] [--latency-ms 20] [--markdown FILE] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bench_s3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: moto, the latency proxy)

IMPLS = (
    "zarrox-tx",
    "zarrox-loop",
    "zarrox-whole",
    "tensorstore-tx",
    "tensorstore-loop",
    "tensorstore-whole",
)
STORES = ("tmpfs", "disk", "s3")

#: fill(shard index, the shard's data) -> None; read(shard index) -> the shard's values
Fill = Callable[[int, np.ndarray], None]
Read = Callable[[int], np.ndarray]


@dataclass
class Result:
    times: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)


@dataclass
class Layout:
    inner: int
    grid: int
    shards: int  # along the first dimension: one per fill

    @property
    def shard(self) -> int:
        return self.inner * self.grid

    @property
    def shape(self) -> tuple[int, int]:
        return (self.shards * self.shard, self.shard)

    def region(self, i: int) -> tuple[slice, slice]:
        return slice(i * self.shard, (i + 1) * self.shard), slice(0, self.shard)

    def blocks(self) -> list[tuple[slice, slice]]:
        """The inner chunks of a shard, as regions of the shard."""
        n = self.inner
        return [
            (slice(r * n, (r + 1) * n), slice(c * n, (c + 1) * n))
            for r in range(self.grid)
            for c in range(self.grid)
        ]


def shard_data(layout: Layout, i: int) -> np.ndarray:
    """Shard ``i``'s values: smooth, so that zstd has work and results differ per shard."""
    n = layout.shard
    y, x = np.mgrid[0:n, 0:n]
    return ((y * 3 + x * 7 + i * 101) % 4099).astype(np.uint16)


def create(url: str, layout: Layout, options: dict[str, Any] | None) -> None:
    import zarrox

    zarrox.create_array(
        url,
        shape=layout.shape,
        dtype="uint16",
        chunks=(layout.inner, layout.inner),
        shards=(layout.shard, layout.shard),
        compressors=[{"name": "zstd", "configuration": {"level": 3}}],
        fill_value=0,
        storage_options=options,
        overwrite=True,
    )


def zarrox_impls(url: str, layout: Layout, options: dict[str, Any] | None) -> dict[str, Fill]:
    import zarrox

    a = zarrox.open_array(url, mode="r+", storage_options=options)
    blocks = layout.blocks()

    def loop(i: int, data: np.ndarray) -> None:
        r0 = i * layout.shard
        for b0, b1 in blocks:
            a[r0 + b0.start : r0 + b0.stop, b1] = data[b0, b1]

    def tx(i: int, data: np.ndarray) -> None:
        with zarrox.transaction():
            loop(i, data)

    def whole(i: int, data: np.ndarray) -> None:
        a[layout.region(i)] = data

    return {"zarrox-tx": tx, "zarrox-loop": loop, "zarrox-whole": whole}


def tensorstore_impls(kvstore: dict[str, Any], layout: Layout) -> dict[str, Fill]:
    import tensorstore as ts

    t = ts.open({"driver": "zarr3", "kvstore": kvstore}, read=True, write=True).result()
    blocks = layout.blocks()

    def loop_on(target: Any, i: int, data: np.ndarray) -> None:
        r0 = i * layout.shard
        for b0, b1 in blocks:
            target[r0 + b0.start : r0 + b0.stop, b1.start : b1.stop] = data[b0, b1]

    def tx(i: int, data: np.ndarray) -> None:
        with ts.Transaction() as txn:
            loop_on(t.with_transaction(txn), i, data)

    def whole(i: int, data: np.ndarray) -> None:
        s0, s1 = layout.region(i)
        t[s0.start : s0.stop, s1.start : s1.stop] = data

    return {
        "tensorstore-tx": tx,
        "tensorstore-loop": lambda i, data: loop_on(t, i, data),
        "tensorstore-whole": whole,
    }


def reader(url: str, options: dict[str, Any] | None, layout: Layout) -> Read:
    import zarrox

    a = zarrox.open_array(url, mode="r", storage_options=options)
    return lambda i: a[layout.region(i)]


def measure(
    args: argparse.Namespace,
    layout: Layout,
    fills: dict[str, Fill],
    read: Read,
    proxy: servers.FaultProxy | None,
    failed: dict[str, str],
) -> dict[str, Result]:
    names = list(fills)
    results = {n: Result() for n in names}
    shard = 0

    def one(name: str, timed: bool) -> None:
        nonlocal shard
        i, shard = shard, shard + 1
        data = shard_data(layout, i)
        if proxy is not None:
            proxy.log(reset=True)
        start = time.perf_counter()
        try:
            fills[name](i, data)
        except Exception as e:  # noqa: BLE001 - reported as a failed case
            failed[name] = f"{type(e).__name__}: {e}"
            return
        elapsed = time.perf_counter() - start
        requests = len(proxy.log()) if proxy is not None else 0
        if not np.array_equal(read(i), data):
            failed[name] = f"wrong data in shard {i}"
            return
        if timed:
            results[name].times.append(elapsed)
            results[name].requests.append(requests)

    for name in names:  # warm up: files, connections, pools
        one(name, timed=False)
    for rep in range(args.repeat):
        k = rep % len(names)
        for name in names[k:] + names[:k]:
            if name not in failed:
                one(name, timed=True)
    return {n: r for n, r in results.items() if r.times and n not in failed}


def report(args: argparse.Namespace, store: str, layout: Layout, res: dict[str, Result]) -> str:
    n = layout.grid * layout.grid
    mib = layout.shard * layout.shard * 2 / 2**20
    lines = [
        f"### {store}: a {layout.shard}x{layout.shard} uint16 shard ({mib:.0f} MiB) of {n} "
        f"inner chunks of {layout.inner}x{layout.inner}, zstd",
        "",
        "| implementation | median s | min s | max s | requests per fill |",
        "| --- | --- | --- | --- | --- |",
    ]
    med = {name: statistics.median(r.times) for name, r in res.items()}
    for name, r in res.items():
        reqs = sorted(set(r.requests))
        span = str(reqs[0]) if len(reqs) == 1 else f"{reqs[0]}-{reqs[-1]}"
        req = span if store == "s3" else "-"
        lines.append(
            f"| {name} | {med[name]:.4f} | {min(r.times):.4f} | {max(r.times):.4f} | {req} |"
        )
    lines.append("")
    for impl in ("zarrox", "tensorstore"):
        tx, whole, loop = (med.get(f"{impl}-{k}") for k in ("tx", "whole", "loop"))
        if tx is not None and whole is not None:
            ratio = tx / whole
            target = f" (target <= 1.2x: {'met' if ratio <= 1.2 else 'not met'})"
            lines.append(
                f"- {store}: {impl}-tx / {impl}-whole: {ratio:.2f}x"
                + (target if impl == "zarrox" else "")
            )
        if tx is not None and loop is not None:
            lines.append(f"- {store}: {impl}-tx / {impl}-loop: {tx / loop:.2f}x")
    if "zarrox-tx" in med and "tensorstore-tx" in med:
        ratio = med["zarrox-tx"] / med["tensorstore-tx"]
        lines.append(f"- {store}: zarrox-tx / tensorstore-tx: {ratio:.2f}x")
    return "\n".join(lines) + "\n"


@contextmanager
def s3_bucket(args: argparse.Namespace, work: Path) -> Iterator[tuple[Any, servers.FaultProxy]]:
    bench_s3.use_isolated_aws(work)
    with servers.start_moto() as moto:
        plan = servers.FaultPlan(latency_ms=args.latency_ms)
        with servers.FaultProxy(moto.port, plan) as proxy:
            yield servers.S3Bucket.create(moto.url).via(proxy.url), proxy


def run_store(args: argparse.Namespace, store: str, impls: list[str], work: Path) -> str:
    layout = Layout(args.inner, args.grid, shards=len(impls) * (args.repeat + 1))
    failed: dict[str, str] = {}
    scope = s3_bucket(args, work) if store == "s3" else contextlib.nullcontext()
    with scope as s3:
        if s3 is None:
            base = args.tmpfs_dir if store == "tmpfs" else args.disk_dir
            root = Path(tempfile.mkdtemp(prefix="bench_tx_", dir=base))
            url, options, proxy = str(root / "a.zarr"), None, None
            kvstore: dict[str, Any] = {"driver": "file", "path": str(root / "a.zarr") + "/"}
        else:
            bucket, proxy = s3
            url, options = bucket.url("a.zarr"), bucket.object_store_options()
            kvstore = bucket.tensorstore_kvstore("a.zarr/")
        create(url, layout, options)
        fills: dict[str, Fill] = {}
        if any(n.startswith("zarrox") for n in impls):
            fills.update(zarrox_impls(url, layout, options))
        if any(n.startswith("tensorstore") for n in impls):
            fills.update(tensorstore_impls(kvstore, layout))
        fills = {n: fills[n] for n in impls}
        print(f"{store}: measuring", file=sys.stderr, flush=True)
        results = measure(args, layout, fills, reader(url, options, layout), proxy, failed)
    args.failed.update({f"{store} {n}": why for n, why in failed.items()})
    return report(args, store, layout, results)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--stores", default=",".join(STORES))
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--inner", type=int, default=128)
    p.add_argument("--grid", type=int, default=8, help="inner chunks per shard side")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--tmpfs-dir", default="/dev/shm")
    p.add_argument("--disk-dir", default=None, help="an ext4 directory (default: the temp dir)")
    p.add_argument("--markdown", type=Path)
    p.add_argument("--quick", action="store_true", help="tmpfs only, 4x4 inner chunks of 32x32")
    args = p.parse_args()
    if args.quick:
        args.stores, args.inner, args.grid, args.repeat = "tmpfs", 32, 4, 1
    impls = [n for n in args.impls.split(",") if n]
    stores = [n for n in args.stores.split(",") if n]
    unknown = (set(impls) - set(IMPLS)) | (set(stores) - set(STORES))
    if unknown:
        raise SystemExit(f"unknown implementations or stores: {sorted(unknown)}")
    if any(n.startswith("tensorstore") for n in impls):
        try:
            import tensorstore  # noqa: F401
        except ImportError:
            impls = [n for n in impls if not n.startswith("tensorstore")]
    args.failed = {}
    texts = [
        f"{args.repeat} repetition(s), implementations alternating (order rotated), each after "
        "an untimed warm-up fill; every fill a shard nobody wrote before, read back and "
        f"compared; S3: moto behind the fault proxy adding {args.latency_ms:g} ms per request.\n"
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for store in stores:
            texts.append(run_store(args, store, impls, Path(tmp)))
    text = "\n".join(texts)
    for name, why in args.failed.items():
        text += f"- {name} failed: {why}\n"
    text += f"\nfailed cases: {len(args.failed)}\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
