"""S3 benchmark: read-all, chunk-by-chunk reads and write-all of a 128 MiB uint16 array on S3
(moto on 127.0.0.1, behind a proxy that adds a fixed latency to every request, 20 ms by
default), zstd and sharded, for:

* ``zarrox``: zarrox's own API with ``s3://`` URLs (runs once ``zarrox.storage`` accepts them;
  until then the report says why it did not run);
* ``pipeline``: zarr-python on zarrox's codec pipeline, over obstore's ``S3Store``
  (``zarr.storage.ObjectStore``);
* ``zarr``: zarr-python on its own pipeline, over the same ``ObjectStore``;
* ``zarrs``: zarr-python on the zarrs pipeline, over the same ``ObjectStore``;
* ``tensorstore``: tensorstore's ``zarr3`` driver on its ``s3`` kvstore.

The dataset, layouts, checks, worker processes, scheduling and tables are those of
``bench_read_write.py`` (imported): 3-D uint16, 32^3 chunks, zstd level 1; sharded = 128^3
shards of 32^3 zstd inner chunks. The reference copy is written with zarrox to a local
directory and uploaded; every read is compared with the source; every written copy is read
back by its writer and its stored codec chain checked, then deleted (untimed).

* ``read``: open + read all in one call;
* ``read-chunks``: open + one call per chunk (inner chunk when sharded) for ``--chunk-calls``
  chunk positions spread evenly over the array (each is at least one request, so with the
  added latency a full pass of 2048 chunks would take over 40 s a sample);
* ``write``: create + write all under a fresh prefix.

moto is a Python server: on a small machine it, not the client, may set the pace. The report
therefore gives the server's ceiling, raw concurrent GETs and PUTs of the same objects with
obstore (directly and through the proxy), and for every case the CPU seconds moto and the
proxy spent per operation, so the ratios can be read for what they are.

    .venv/bin/python benches/bench_s3.py [--size 256,512,512] [--codecs zstd,sharded]
        [--latency-ms 20] [--chunk-calls 128] [--repeat 3] [--rounds 1]
        [--impls zarrox,pipeline,zarr,zarrs,tensorstore] [--ops read,read-chunks,write]
        [--markdown FILE] [--tmpdir DIR] [--keep] [--seed 0] [--quick]

``benches/run_all.py --s3`` runs it after the local suite. Internally the same file is the
worker (``--worker IMPL --op OP ...``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bench_read_write as brw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402  (tests/servers.py: moto, the latency proxy)

OPS = brw.OPS
CODECS = ("zstd", "sharded")
IMPLS = tuple(brw.IMPLS)
DEFAULTS = {"size": "256,512,512", "repeat": 3, "rounds": 1, "chunk_calls": 128}
QUICK = {"size": "64", "repeat": 1, "rounds": 1, "chunk_calls": 8}
RAW_CONCURRENCY = 32
RAW = "raw"


# --------------------------------------------------------------------------- implementations


def zarrox_s3_missing() -> str | None:
    """None when zarrox's own API takes ``s3://`` URLs, else why not (probed without I/O)."""
    import zarrox.storage

    opts = {"aws_endpoint": f"http://{servers.LOOPBACK}:9", "aws_region": servers.AWS_REGION}
    try:
        store = zarrox.storage.resolve_store("s3://probe/x.zarr", storage_options=opts)
    except Exception as e:  # noqa: BLE001 - any refusal means "not there yet"
        return f"zarrox.storage.resolve_store('s3://...') raises {type(e).__name__}: {e}"
    if isinstance(store, zarrox.storage.LocalStore | zarrox.storage.MemoryStore):
        return f"zarrox.storage.resolve_store('s3://...') gives a {type(store).__name__}"
    return None


def make_s3_impl(impl: str, layout: brw.Layout, bucket: servers.S3Bucket) -> brw.Impl:
    """One implementation's calls on S3; ``open``/``write`` take a key prefix in the bucket."""
    kwargs = brw.create_kwargs(layout)
    if impl == "zarrox":
        import zarrox

        opts = bucket.object_store_options()

        def write_zarrox(prefix: Any, data: np.ndarray) -> None:
            a = zarrox.create_array(
                bucket.url(prefix),
                shape=data.shape,
                dtype=data.dtype,
                storage_options=opts,
                **kwargs,
            )
            a[...] = data

        return brw.Impl(
            open=lambda prefix: zarrox.open_array(
                bucket.url(prefix), mode="r", storage_options=opts
            ),
            get=lambda a, sel: a[sel],
            vget=lambda a, sel: a.vindex[sel],
            write=write_zarrox,
        )
    if impl in brw.ZARR_PIPELINES:
        import zarr

        checked = brw.use_zarr_pipeline(impl)

        def write_zarr(prefix: Any, data: np.ndarray) -> None:
            store = bucket.zarr_obstore(prefix)
            a = zarr.create_array(store=store, shape=data.shape, dtype=data.dtype, **kwargs)
            checked(a)[...] = data

        return brw.Impl(
            open=lambda prefix: checked(
                zarr.open_array(store=bucket.zarr_obstore(prefix, read_only=True), mode="r")
            ),
            get=lambda a, sel: a[sel],
            vget=lambda a, sel: a.vindex[sel],
            write=write_zarr,
        )
    if impl == "tensorstore":
        import tensorstore as ts

        def spec(prefix: Any) -> dict[str, Any]:
            return {"driver": "zarr3", "kvstore": bucket.tensorstore_kvstore(f"{prefix}/")}

        def write_ts(prefix: Any, data: np.ndarray) -> None:
            full = {**spec(prefix), "metadata": brw.zarr3_metadata(layout, data)}
            t = ts.open(full, create=True, open=False).result()
            t.write(data).result()

        return brw.Impl(
            open=lambda prefix: ts.open(spec(prefix), read=True).result(),
            get=lambda t, sel: t[sel].read().result(),
            vget=lambda t, sel: t.vindex[sel].read().result(),
            write=write_ts,
        )
    raise ValueError(f"unknown implementation {impl!r}")


# --------------------------------------------------------------------------- S3 helpers


def object_sizes(bucket: servers.S3Bucket, prefix: str) -> dict[str, int]:
    """Key -> size of every object under ``prefix`` (asked of moto directly)."""
    import obstore

    direct = servers.S3Bucket(bucket.direct_endpoint or bucket.endpoint, bucket.name)
    out: dict[str, int] = {}
    for batch in obstore.list(direct.obstore(), prefix=prefix.rstrip("/") + "/"):
        for meta in batch:
            out[meta["path"]] = meta["size"]
    return out


def delete_prefix(bucket: servers.S3Bucket, prefix: str) -> None:
    import obstore

    direct = servers.S3Bucket(bucket.direct_endpoint or bucket.endpoint, bucket.name)
    keys = list(object_sizes(bucket, prefix))
    for i in range(0, len(keys), 1000):
        obstore.delete(direct.obstore(), keys[i : i + 1000])


def check_layout_s3(bucket: servers.S3Bucket, prefix: str, layout: brw.Layout, what: str) -> None:
    """Raise AssertionError unless the array under ``prefix`` is stored as ``layout`` says."""
    raw = bucket.get(f"{prefix}/zarr.json")
    if raw is None:
        raise AssertionError(f"{what}: no zarr.json under {prefix}")
    meta = json.loads(raw)
    grid = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    got, want = brw.codec_names(meta["codecs"]), brw.codec_names(layout.codecs())
    if grid != layout.grid or got != want:
        raise AssertionError(f"{what}: stored as grid {grid} {got}, expected {layout.grid} {want}")


def upload(local: Path, bucket: servers.S3Bucket, prefix: str) -> int:
    """Copy the directory ``local`` to ``prefix`` (moto directly, concurrently); total bytes."""
    import obstore

    store = servers.S3Bucket(bucket.direct_endpoint or bucket.endpoint, bucket.name).obstore()
    files = [p for p in sorted(local.rglob("*")) if p.is_file()]

    async def put_all() -> None:
        gate = asyncio.Semaphore(RAW_CONCURRENCY)

        async def put(p: Path) -> None:
            async with gate:
                key = f"{prefix}/{p.relative_to(local).as_posix()}"
                await obstore.put_async(store, key, p.read_bytes())

        await asyncio.gather(*(put(p) for p in files))

    asyncio.run(put_all())
    return sum(p.stat().st_size for p in files)


def sample_chunks(shape: Sequence[int], chunks: Sequence[int], n: int) -> list[Any]:
    """``n`` chunk selections spread evenly over all of them, in C order (all when n <= 0)."""
    sels = brw.chunk_selections(shape, chunks)
    if n <= 0 or n >= len(sels):
        return sels
    picks = np.linspace(0, len(sels) - 1, n).round().astype(int)
    return [sels[i] for i in sorted(set(picks.tolist()))]


# --------------------------------------------------------------------------- workers


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    bucket = servers.S3Bucket(args.endpoint, args.bucket, args.direct)
    if args.worker == RAW:
        return run_raw_worker(args, bucket)
    layout = brw.layout_from_args(args)
    src = np.load(args.src)
    impl = make_s3_impl(args.worker, layout, bucket)
    baseline = brw.reset_peak_rss()
    times: list[float] = []
    result: dict[str, Any] = {"impl": args.worker, "op": args.op, "calls": 1}
    if args.op in ("read", "read-chunks"):
        sels: list[Any] = (
            [Ellipsis]
            if args.op == "read"
            else sample_chunks(src.shape, layout.chunks, args.chunk_calls)
        )

        name = f"{args.worker} {args.op}"
        times = brw.timed_reads(impl, args.prefix, sels, src, args.repeat, name)
        result["calls"] = len(sels)
    else:
        for rep in range(args.repeat + 1):  # the first one is an untimed warm-up
            prefix = f"{args.out_prefix}/w{rep}"
            t0 = time.perf_counter()
            impl.write(prefix, src)
            elapsed = time.perf_counter() - t0
            if rep:
                times.append(elapsed)
            if rep == args.repeat:
                brw.check_equal(impl.read(prefix), src, f"{args.worker} read-back of its write")
                check_layout_s3(bucket, prefix, layout, f"{args.worker} written copy")
                result["stored_bytes"] = sum(object_sizes(bucket, prefix).values())
            delete_prefix(bucket, prefix)
    result["rss_peak_delta"] = brw.peak_rss_bytes() - baseline
    result["times"] = times
    return result


def run_raw_worker(args: argparse.Namespace, bucket: servers.S3Bucket) -> dict[str, Any]:
    """Raw obstore GETs of every object under ``--prefix`` (``--op get``), or PUTs of as many
    objects of the same sizes under ``--out-prefix`` (``--op put``), ``RAW_CONCURRENCY`` at a
    time; ``--repeat`` timed passes after an untimed one."""
    import obstore

    store = bucket.obstore()
    sizes = object_sizes(bucket, args.prefix)
    keys = sorted(sizes)
    payload = {k: os.urandom(sizes[k]) for k in keys} if args.op == "put" else {}

    async def one_pass(rep: int) -> int:
        gate = asyncio.Semaphore(RAW_CONCURRENCY)

        async def get(key: str) -> int:
            async with gate:
                return len(await (await obstore.get_async(store, key)).bytes_async())

        async def put(i: int, key: str) -> int:
            async with gate:
                await obstore.put_async(store, f"{args.out_prefix}/r{rep}/{i}", payload[key])
                return len(payload[key])

        if args.op == "get":
            done = await asyncio.gather(*(get(k) for k in keys))
        else:
            done = await asyncio.gather(*(put(i, k) for i, k in enumerate(keys)))
        return sum(done)

    async def passes() -> tuple[list[float], int]:
        times: list[float] = []
        nbytes = 0
        for rep in range(args.repeat + 1):
            t0 = time.perf_counter()
            nbytes = await one_pass(rep)
            if rep:
                times.append(time.perf_counter() - t0)
        return times, nbytes

    times, nbytes = asyncio.run(passes())
    if args.op == "put":
        delete_prefix(bucket, args.out_prefix)
    return {"impl": RAW, "op": args.op, "times": times, "requests": len(keys), "bytes": nbytes}


# --------------------------------------------------------------------------- driver


@dataclass
class Load:
    """CPU seconds moto and the proxy spent during one case's workers, per operation."""

    moto: list[float] = field(default_factory=list)
    proxy: list[float] = field(default_factory=list)


@dataclass
class Ceiling:
    """Raw obstore throughput: (op, via) -> (median s, requests, bytes)."""

    rows: dict[tuple[str, str], tuple[float, int, int]] = field(default_factory=dict)
    error: str | None = None

    def text(self, latency_ms: float) -> list[str]:
        if self.error:
            return [f"server ceiling: FAILED  {self.error}"]
        out = [
            f"server ceiling (raw obstore, {RAW_CONCURRENCY} requests in flight, the reference"
            " copy's objects; medians):"
        ]
        for (op, via), (t, n, nbytes) in self.rows.items():
            out.append(
                f"  {op.upper():<4} {via:<28} {n / t:8.0f} requests/s {nbytes / brw.MB / t:8.1f}"
                f" MB/s  ({n} objects, {nbytes / brw.MIB:.1f} MiB in {t * 1e3:.0f} ms)"
            )
        out.append(
            f"  ({latency_ms:g} ms per request at {RAW_CONCURRENCY} in flight alone would allow"
            f" {RAW_CONCURRENCY / (latency_ms / 1e3) if latency_ms else float('inf'):.0f}"
            " requests/s)"
        )
        return out


@dataclass
class Environment:
    """The servers and the bucket the benchmark runs against."""

    moto: servers.ServerProcess
    proxy: servers.FaultProxy
    bucket: servers.S3Bucket  # reached through the proxy

    def worker_argv(self) -> list[str]:
        return [
            "--endpoint",
            self.bucket.endpoint,
            "--direct",
            self.bucket.direct_endpoint or "",
            "--bucket",
            self.bucket.name,
        ]

    def cpu(self) -> tuple[float, float]:
        return self.moto.cpu_seconds(), self.proxy.cpu_seconds()


def measure_ceiling(env: Environment, prefix: str, repeat: int) -> Ceiling:
    out = Ceiling()
    direct = servers.S3Bucket(env.bucket.direct_endpoint or "", env.bucket.name)
    vias = {"moto directly": direct, "through the latency proxy": env.bucket}
    try:
        for op in ("get", "put"):
            for via, bucket in vias.items():
                argv = [
                    "--worker",
                    RAW,
                    "--op",
                    op,
                    "--endpoint",
                    bucket.endpoint,
                    "--direct",
                    env.bucket.direct_endpoint or "",
                    "--bucket",
                    bucket.name,
                    "--prefix",
                    prefix,
                    "--out-prefix",
                    "raw-put",
                    "--repeat",
                    str(repeat),
                ]
                res = brw.spawn_worker(__file__, argv)
                out.rows[(op, via)] = (
                    statistics.median(res["times"]),
                    res["requests"],
                    res["bytes"],
                )
    except brw.WorkerError as e:
        out.error = str(e)
    return out


def measure(
    env: Environment,
    ds: brw.Dataset,
    prefix: str,
    impls: Sequence[str],
    ops: Sequence[str],
    args: argparse.Namespace,
) -> tuple[list[brw.Case], dict[tuple[str, str], Load]]:
    loads: dict[tuple[str, str], Load] = {}

    def run_one(case: brw.Case) -> None:
        argv = [
            "--worker",
            case.impl,
            "--op",
            case.op,
            "--src",
            str(ds.source),
            "--prefix",
            prefix,
            "--out-prefix",
            f"written/{ds.layout.codec}/{case.impl}",
            "--repeat",
            str(args.repeat),
            "--chunk-calls",
            str(args.chunk_calls),
            *env.worker_argv(),
            *brw.layout_argv(ds.layout),
        ]
        before = env.cpu()
        res = brw.spawn_worker(__file__, argv)
        after = env.cpu()
        ops_run = args.repeat + 1  # the warm-up too
        load = loads.setdefault((case.op, case.impl), Load())
        load.moto.append((after[0] - before[0]) / ops_run)
        load.proxy.append((after[1] - before[1]) / ops_run)
        case.merge(res)
        if case.op == "write":
            case.stored_bytes = res["stored_bytes"]

    cases = {(op, impl): brw.Case(impl, op) for op in ops for impl in impls}
    brw.run_rounds(cases, ops, impls, args.rounds, run_one)
    return list(cases.values()), loads


def format_loads(cases: Sequence[brw.Case], loads: dict[tuple[str, str], Load]) -> str:
    columns = [
        brw.Column("op", 12, left=True),
        brw.Column("implementation", 19, left=True),
        brw.Column("median s", 9),
        brw.Column("moto CPU s/op", 14),
        brw.Column("proxy CPU s/op", 15),
        brw.Column("moto busy", 10),
    ]
    rows = []
    for c in cases:
        load = loads.get((c.op, c.impl))
        if c.error is not None or load is None or not c.times:
            continue
        moto = statistics.median(load.moto)
        rows.append(
            [
                c.op,
                brw.IMPLS[c.impl],
                f"{c.median:.2f}",
                f"{moto:.2f}",
                f"{statistics.median(load.proxy):.2f}",
                f"{moto / c.median:.0%}",
            ]
        )
    notes = [
        "moto busy = moto's CPU time per operation / the operation's median time: near 100%,"
        " moto (one core at most, Python) sets the pace, not the client"
    ]
    return brw.render_table(columns, rows, notes)


RATIOS = (
    ("pipeline", "tensorstore"),
    ("pipeline", "zarr"),
    ("pipeline", "zarrs"),
    ("zarrox", "tensorstore"),
    ("zarrox", "zarr"),
)


def format_ratios(cases: Sequence[brw.Case]) -> str:
    columns = [brw.Column("op", 12, left=True)] + [
        brw.Column(f"{brw.IMPLS[a]} / {brw.IMPLS[b]}", len(brw.IMPLS[a] + brw.IMPLS[b]) + 5)
        for a, b in RATIOS
    ]
    by = {(c.op, c.impl): c for c in cases if c.error is None and c.times}
    rows = []
    for op in OPS:
        cells = [op]
        for a, b in RATIOS:
            ca, cb = by.get((op, a)), by.get((op, b))
            cells.append(f"{ca.median / cb.median:.2f}x" if ca and cb else "n/a")
        if any(cell != "n/a" for cell in cells[1:]):
            rows.append(cells)
    return brw.render_table(columns, rows, ["time ratios: below 1, the zarrox side is faster"])


def method_text(args: argparse.Namespace) -> str:
    return "\n".join(
        [
            f"method: per implementation and op, {args.rounds} fresh worker process(es), each"
            f" with an untimed warm-up and {args.repeat} timed repeats; medians.",
            "  S3 = moto (in memory) on 127.0.0.1 behind the fault proxy adding"
            f" {args.latency_ms:g} ms before every request is forwarded.",
            "  zarr-python (its pipeline, zarrox's, zarrs's) reads and writes through obstore's"
            " S3Store (zarr.storage.ObjectStore);",
            "  tensorstore through its s3 kvstore; zarrox's own API through s3:// URLs."
            " Library defaults for concurrency",
            "  (zarr-python async.concurrency 10, tensorstore s3_request_concurrency 32).",
            "  read = open + read all; read-chunks = open + one call per chunk (inner chunk when"
            f" sharded) at {args.chunk_calls} positions",
            "  spread over the array; write = create + write all under a fresh prefix (deleted"
            " after, untimed). Every read is",
            "  compared with the source; each writer's last copy is read back and its codec"
            " chain checked.",
        ]
    )


def use_isolated_aws(work: Path) -> None:
    """This process's AWS settings: none of the user's (config under ``work``), moto's
    credentials in the environment (tensorstore's s3 kvstore takes them from there)."""
    for key, value in servers.isolated_aws_env(work).items():
        os.environ[key] = value
    os.environ["AWS_ACCESS_KEY_ID"] = servers.AWS_KEY_ID
    os.environ["AWS_SECRET_ACCESS_KEY"] = servers.AWS_SECRET


def run_s3(args: argparse.Namespace, work: Path, emit: Callable[[str], None]) -> list[str]:
    """Start the servers, run every dataset, hand each part of the report to ``emit``; the
    failure lines."""
    shape = brw.parse_shape(args.size, 3)
    codecs = brw.parse_choices(args.codecs, CODECS, "codec")
    impls = brw.parse_choices(args.impls, IMPLS, "implementation")
    ops = brw.parse_choices(args.ops, OPS, "op")
    failures: list[str] = []
    if "zarrox" in impls:
        missing = zarrox_s3_missing()
        if missing:
            impls.remove("zarrox")
            emit(f"zarrox (own API, s3:// URLs): not run: {missing}")
    use_isolated_aws(work)
    with servers.start_moto() as moto:
        plan = servers.FaultPlan(latency_ms=args.latency_ms)
        with servers.FaultProxy(moto.port, plan) as proxy:
            bucket = servers.S3Bucket.create(moto.url).via(proxy.url)
            env = Environment(moto, proxy, bucket)
            emit(method_text(args))
            for i, codec in enumerate(codecs):
                ds = brw.make_dataset(work / codec, shape, brw.make_layout(codec), args.seed)
                prefix = f"reference/{codec}.zarr"
                t0 = time.perf_counter()
                upload(ds.reference, bucket, prefix)
                emit(f"\n== S3 dataset {codec}\n{ds.describe()}")
                emit(f"uploaded to s3://{bucket.name}/{prefix} in {time.perf_counter() - t0:.1f} s")
                if i == 0:
                    emit("\n".join(measure_ceiling(env, prefix, args.repeat).text(args.latency_ms)))
                print(f"S3 dataset {codec}: measuring", file=sys.stderr, flush=True)
                cases, loads = measure(env, ds, prefix, impls, ops, args)
                emit(brw.format_table(cases, ds.src.nbytes))
                emit(format_ratios(cases))
                emit(format_loads(cases, loads))
                failures += [f"S3 {codec}: {line}" for line in brw.failure_lines(cases)]
                delete_prefix(bucket, prefix)
    return failures


def add_s3_args(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The S3 part's options (``prefix`` "s3-" when run_all.py adds them to its own)."""
    p.add_argument(f"--{prefix}latency-ms", type=float, default=20.0, help="per request; 20")
    p.add_argument(
        f"--{prefix}chunk-calls",
        type=int,
        default=None,
        help="read-chunks: chunk positions per sample (0: all); default 128",
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default=None, help="edge N (N^3) or Z,Y,X; default 256,512,512")
    p.add_argument("--codecs", default=",".join(CODECS), help="comma list of zstd,sharded")
    p.add_argument("--impls", default=",".join(IMPLS), help="comma list of " + ",".join(IMPLS))
    p.add_argument("--ops", default=",".join(OPS), help="comma list of " + ",".join(OPS))
    p.add_argument("--repeat", type=int, default=None, help="timed repeats per worker; 3")
    p.add_argument("--rounds", type=int, default=None, help="fresh workers per case; 1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--markdown", default=None, help="also write the report here (as text)")
    p.add_argument("--tmpdir", default=None, help="parent of the scratch directory")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--quick", action="store_true", help="smoke run: size 64, 1 repeat")
    add_s3_args(p)
    # worker mode (internal)
    p.add_argument("--worker", choices=(*IMPLS, RAW), help=argparse.SUPPRESS)
    p.add_argument("--op", help=argparse.SUPPRESS)
    p.add_argument("--src", help=argparse.SUPPRESS)
    p.add_argument("--prefix", help=argparse.SUPPRESS)
    p.add_argument("--out-prefix", help=argparse.SUPPRESS)
    p.add_argument("--endpoint", help=argparse.SUPPRESS)
    p.add_argument("--direct", help=argparse.SUPPRESS)
    p.add_argument("--bucket", help=argparse.SUPPRESS)
    p.add_argument("--codec", default="zstd", help=argparse.SUPPRESS)
    p.add_argument("--chunks", default=None, help=argparse.SUPPRESS)
    p.add_argument("--shards", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.repeat < 1 or args.rounds < 1:
        p.error("--repeat and --rounds must be >= 1")
    if args.worker:
        print(brw.RESULT_TAG + json.dumps(run_worker(args)), flush=True)
        sys.stderr.flush()
        # The work is done and verified: leave without interpreter shutdown. obstore 0.12's
        # Tokio runtime is not stopped before Py_Finalize, and a process that used it aborts
        # at exit now and then (SIGABRT after its last line, about 1 run in 20 here).
        os._exit(0)
    lines: list[str] = []

    def emit(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    emit(
        brw.host_line() + f", moto {brw.pkg_version('moto')}, obstore {brw.pkg_version('obstore')}"
    )
    with brw.scratch_dir(args) as work:
        failed = run_s3(args, work, emit)
    emit(f"failed cases: {len(failed)}" + "".join(f"\n  {f}" for f in failed))
    if args.markdown:
        Path(args.markdown).write_text("```\n" + "\n".join(lines) + "\n```\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
