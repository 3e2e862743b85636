"""Many arrays in one round of I/O (issue #43, item 4): one time step of ``--vars`` (20)
variables of a dataset on S3 (moto on 127.0.0.1 behind tests/servers.py's fault proxy, which
adds ``--latency-ms`` (20) before every request), read by:

* ``zarrox-read-many``: ``zarrox.read_many([(a, sel) for a in arrays])``, every read's
  requests in flight together;
* ``zarrox-loop``: ``[a[sel] for a in arrays]``, one read after the other;
* ``tensorstore-batch``: ``with ts.Batch() as batch: futures = [t[sel].read(batch=batch)
  ...]``, then the results;
* ``tensorstore-loop``: ``[t[sel].read().result() for t in ...]``.

Dataset: ``--vars`` float32 arrays (time, y, x) = ``--shape`` (32,256,256), zstd, in two
layouts: ``chunked`` (chunks (1,128,128): a time step is 4 chunk objects per variable) and
``sharded`` (shards (1,256,256) of 128x128 inner chunks: one shard object per variable and
time step, whose 4 inner chunks a reader may fetch in one merged range request). Written with
zarrox locally, uploaded to moto directly (bench_s3.py's ``upload``), every variable opened
once before timing.

Within each repetition the implementations alternate (their order rotated per repetition),
after one untimed warm-up each; every read is of a time step no implementation read before
(no cache can answer it) and is compared with the data written. Reported: median seconds
(min-max), the requests the proxy saw per read of all variables, the median over the
latency (rounds of latency the read cost at least), moto's CPU seconds per read, and the
issue's targets: ``zarrox-read-many`` at most 0.6x ``zarrox-loop`` and no slower than
``tensorstore-batch``.

    PYTHONPATH=python .venv/bin/python benches/bench_batch_reads.py [--vars 20]
        [--shape 32,256,256] [--layouts chunked,sharded] [--latency-ms 20] [--repeat 7]
        [--impls zarrox-read-many,zarrox-loop,tensorstore-batch,tensorstore-loop]
        [--markdown FILE] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bench_s3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: moto, the latency proxy)

IMPLS = ("zarrox-read-many", "zarrox-loop", "tensorstore-batch", "tensorstore-loop")
LAYOUTS = ("chunked", "sharded")
CHUNK_YX = 128
SHARD_YX = 256

Read = Callable[[int], list[Any]]


@dataclass
class Result:
    times: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    moto_cpu: list[float] = field(default_factory=list)


def write_dataset(
    root: Path, layout: str, names: list[str], shape: tuple[int, ...], seed: int
) -> dict[str, np.ndarray]:
    """Write the variables under ``root`` with zarrox; their data, by name."""
    import zarrox

    rng = np.random.default_rng(seed)
    chunks = (1, CHUNK_YX, CHUNK_YX)
    shards = (1, SHARD_YX, SHARD_YX) if layout == "sharded" else None
    data = {}
    for name in names:
        ref = rng.standard_normal(shape, dtype=np.float32).round(2)
        a = zarrox.create_array(
            str(root / name),
            shape=shape,
            dtype=ref.dtype,
            chunks=chunks,
            shards=shards,
            fill_value=0,
        )
        a[...] = ref
        data[name] = ref
    return data


def make_impls(
    bucket: servers.S3Bucket, prefix: str, names: list[str], impls: list[str]
) -> dict[str, Read]:
    """Each implementation as a function of the time step, returning every variable's
    values there (the variables opened once, here)."""
    out: dict[str, Read] = {}
    if any(n.startswith("zarrox") for n in impls):
        import zarrox

        opts = bucket.object_store_options()
        arrays = [
            zarrox.open_array(bucket.url(f"{prefix}/{n}"), mode="r", storage_options=opts)
            for n in names
        ]
        out["zarrox-read-many"] = lambda t: zarrox.read_many([(a, t) for a in arrays])
        out["zarrox-loop"] = lambda t: [a[t] for a in arrays]
    if any(n.startswith("tensorstore") for n in impls):
        import tensorstore as ts

        stores = [
            ts.open(
                {"driver": "zarr3", "kvstore": bucket.tensorstore_kvstore(f"{prefix}/{n}/")},
                read=True,
            ).result()
            for n in names
        ]

        def ts_batch(t: int) -> list[Any]:
            with ts.Batch() as batch:
                futures = [s[t].read(batch=batch) for s in stores]
            return [f.result() for f in futures]

        out["tensorstore-batch"] = ts_batch
        out["tensorstore-loop"] = lambda t: [s[t].read().result() for s in stores]
    return {n: out[n] for n in impls}


def check(values: list[Any], data: dict[str, np.ndarray], t: int) -> str | None:
    """None when ``values`` are every variable's time step ``t``, else what differs."""
    if len(values) != len(data):
        return f"{len(values)} results for {len(data)} variables"
    for got, (name, ref) in zip(values, data.items(), strict=True):
        got = np.asarray(got)
        if got.shape != ref[t].shape or got.dtype != ref.dtype or not np.array_equal(got, ref[t]):
            return f"wrong data: {name}[{t}]"
    return None


def measure(
    args: argparse.Namespace,
    moto: servers.ServerProcess,
    proxy: servers.FaultProxy,
    reads: dict[str, Read],
    data: dict[str, np.ndarray],
    failed: dict[str, str],
) -> dict[str, Result]:
    names = list(reads)
    results = {n: Result() for n in names}
    steps = args.shape[0]
    for i, name in enumerate(names):  # warm up: connections, threads; steps 0..n-1
        try:
            why = check(reads[name](i % steps), data, i % steps)
        except Exception as e:  # noqa: BLE001 - reported as a failed case
            why = f"{type(e).__name__}: {e}"
        if why:
            failed[name] = why
    step = len(names)
    for rep in range(args.repeat):
        k = rep % len(names)
        for name in names[k:] + names[:k]:
            if name in failed:
                continue
            t = step % steps  # a step not read before, unless --repeat outruns the steps
            step += 1
            proxy.log(reset=True)
            cpu = moto.cpu_seconds()
            start = time.perf_counter()
            try:
                values = reads[name](t)
            except Exception as e:  # noqa: BLE001 - reported as a failed case
                failed[name] = f"{type(e).__name__}: {e}"
                continue
            elapsed = time.perf_counter() - start
            results[name].moto_cpu.append(moto.cpu_seconds() - cpu)
            results[name].requests.append(len(proxy.log()))
            why = check(values, data, t)
            if why:
                failed[name] = why
                continue
            results[name].times.append(elapsed)
    return {n: r for n, r in results.items() if r.times and n not in failed}


def report(args: argparse.Namespace, layout: str, results: dict[str, Result]) -> str:
    vars_, (_, ny, nx) = args.vars, args.shape
    per_var = (ny // CHUNK_YX) * (nx // CHUNK_YX)
    what = (
        f"{per_var} chunks per variable"
        if layout == "chunked"
        else f"{(ny // SHARD_YX) * (nx // SHARD_YX)} shard(s) of {per_var} inner chunks "
        "per variable"
    )
    lines = [
        f"### {layout}: one time step of {vars_} variables ({ny}x{nx} float32, {what}, "
        f"{vars_ * per_var} chunks in all)",
        "",
        "| implementation | median s | min s | max s | requests | median / latency | moto CPU s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    med = {n: statistics.median(r.times) for n, r in results.items()}
    for n, r in results.items():
        reqs = sorted(set(r.requests))
        req = str(reqs[0]) if len(reqs) == 1 else f"{min(reqs)}-{max(reqs)}"
        lines.append(
            f"| {n} | {med[n]:.3f} | {min(r.times):.3f} | {max(r.times):.3f} | {req} | "
            f"{med[n] / (args.latency_ms / 1e3):.1f} | {statistics.median(r.moto_cpu):.3f} |"
        )
    lines.append("")
    ours = med.get("zarrox-read-many")
    if ours is not None and "zarrox-loop" in med:
        r = ours / med["zarrox-loop"]
        lines.append(
            f"- {layout}: zarrox-read-many / zarrox-loop: {r:.2f}x "
            f"(target <= 0.6x: {'met' if r <= 0.6 else 'not met'})"
        )
    if ours is not None and "tensorstore-batch" in med:
        r = ours / med["tensorstore-batch"]
        lines.append(
            f"- {layout}: zarrox-read-many / tensorstore-batch: {r:.2f}x "
            f"(target <= 1.0x: {'met' if r <= 1.0 else 'not met'})"
        )
    if "tensorstore-batch" in med and "tensorstore-loop" in med:
        r = med["tensorstore-batch"] / med["tensorstore-loop"]
        lines.append(f"- {layout}: tensorstore-batch / tensorstore-loop: {r:.2f}x")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> str:
    impls = [n for n in args.impls.split(",") if n]
    layouts = [n for n in args.layouts.split(",") if n]
    unknown = (set(impls) - set(IMPLS)) | (set(layouts) - set(LAYOUTS))
    if unknown:
        raise SystemExit(f"unknown implementations or layouts: {sorted(unknown)}")
    texts = [
        f"S3 = moto on 127.0.0.1 behind the fault proxy adding {args.latency_ms:g} ms before "
        f"every request; {args.repeat} repetition(s), implementations alternating (order "
        "rotated), each after an untimed warm-up; every read checked against the data "
        "written; requests = as the proxy logged them per read of all variables.\n"
    ]
    if any(n.startswith("zarrox") for n in impls):
        missing = bench_s3.zarrox_s3_missing()
        if missing:
            impls = [n for n in impls if not n.startswith("zarrox")]
            texts.append(f"zarrox: not run: {missing}\n")
    names = [f"v{i:02d}" for i in range(args.vars)]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench_s3.use_isolated_aws(work)
        with servers.start_moto() as moto:
            plan = servers.FaultPlan(latency_ms=args.latency_ms)
            with servers.FaultProxy(moto.port, plan) as proxy:
                bucket = servers.S3Bucket.create(moto.url).via(proxy.url)
                for layout in layouts:
                    local = work / layout
                    data = write_dataset(local, layout, names, args.shape, args.seed)
                    prefix = f"{layout}.zarr"
                    bench_s3.upload(local, bucket, prefix)
                    print(f"{layout}: measuring", file=sys.stderr, flush=True)
                    reads = make_impls(bucket, prefix, names, impls)
                    failed: dict[str, str] = {}
                    results = measure(args, moto, proxy, reads, data, failed)
                    args.failed.update({f"{layout} {n}": why for n, why in failed.items()})
                    texts.append(report(args, layout, results))
                    bench_s3.delete_prefix(bucket, prefix)
    return "\n".join(texts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--vars", type=int, default=20)
    p.add_argument("--shape", default="32,256,256", help="time,y,x (y, x multiples of 256)")
    p.add_argument("--layouts", default=",".join(LAYOUTS))
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--markdown", type=Path)
    p.add_argument("--quick", action="store_true", help="4 variables of 8x256x256, 1 repetition")
    args = p.parse_args()
    if args.quick:
        args.vars, args.shape, args.repeat = 4, "8,256,256", 1
    args.shape = tuple(int(s) for s in args.shape.split(","))
    if len(args.shape) != 3 or args.shape[1] % SHARD_YX or args.shape[2] % SHARD_YX:
        raise SystemExit(f"--shape: time,y,x with y and x multiples of {SHARD_YX}")
    args.failed = {}
    text = run(args)
    for name, why in args.failed.items():
        text += f"- {name} failed: {why}\n"
    text += f"\nfailed cases: {len(args.failed)}\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
