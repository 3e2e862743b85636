"""Cache benchmark (issue #34). Every read is checked against the source.

``s3`` section: chunk-by-chunk reads over S3 (moto on 127.0.0.1 behind the latency proxy of
``tests/servers.py``, 20 ms per request by default), one call per chunk, zarrox in this
process.

* ``sharded``: a 2-D int32 array of 16 shards of 64 inner chunks each, read inner chunk by
  inner chunk: the first pass reads each shard's index once (one request per inner chunk plus
  one per shard), a second pass uses the cached indexes (one conditional request per inner
  chunk);
* ``plain``: the same array in unsharded chunks with zstd, read chunk by chunk without the
  chunk cache, then with ``cache.bytes`` set: a cold pass, a second pass with ``cache.recheck``
  ``"open"`` (no request) and with ``True`` (one conditional request per chunk, 304s without
  bodies).

The table gives seconds per pass and requests per pass (counted by the proxy).

``compare`` section: a sharded int32 array on the same S3 (16 x 16 inner chunks in shards of
64 x 128, zstd), read inner chunk by inner chunk, one call each, by

* ``zarrox``: this build, ``cache.bytes`` 256 MiB, ``cache.recheck`` ``"open"``: a first and a
  second pass, then a third with ``cache.recheck`` ``True``;
* ``zarrox today``: the build before issue #34 (a directory holding a ``zarrox`` package with
  its ``_core``, ``--before``, default /tmp/before, put on ``PYTHONPATH`` of its worker as
  ``benches/compare_builds.py`` does): no chunk cache, two passes;
* ``tensorstore, no cache pool``: ``cache_pool.total_bytes_limit`` 0, two passes;
* ``tensorstore, cache pool``: 256 MiB, ``recheck_cached_data`` ``"open"``: a first and a second
  pass, then a third through a second handle on the same context with ``recheck_cached_data``
  ``true``.

``window`` section: a sliding window over a local 2-D int32 array in 64 x 64 chunks (zstd):
128 x 128 windows moving 16 elements at a time, row after row (each chunk is read by up to 81
windows), one pass, by zarrox with the cache (``cache.recheck`` ``"open"`` and ``True``: a
stat per chunk), zarrox without it, and tensorstore with a cache pool
(``recheck_cached_data`` ``"open"`` and ``true``).

In ``compare`` and ``window`` every implementation runs in a fresh worker process (the same
file, ``--worker``: a cold cache, and its own build of zarrox), the implementations alternate
within each repetition (``--repeat N``: their order rotates from one repetition to the next),
and the tables give the least seconds over the repetitions, then the ratios.

    .venv/bin/python benches/bench_cache.py [--sections s3,compare,window] [--repeat 3]
        [--latency-ms 20] [--shape 256,512] [--s3-grid 32] [--before /tmp/before]
        [--compare-shape 128,256] [--window-shape 1024,1024] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402
import zarrox  # noqa: E402

SECTIONS = ("s3", "compare", "window")
#: the build before issue #34, for the ``zarrox today`` worker
BEFORE = "/tmp/before"
CACHE_BYTES = 256 << 20
COMPARE_CHUNKS = (16, 16)
COMPARE_SHARDS = (64, 128)
WINDOW_CHUNKS = (64, 64)
WINDOW = (128, 128)
WINDOW_STEP = 16
ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
#: the zarrox package this process imported (its parent directory goes on a worker's
#: PYTHONPATH, so that the ``zarrox`` worker runs this very build)
THIS_BUILD = str(Path(zarrox.__file__).resolve().parent.parent)
READY, RESULT, DONE = "BENCH_READY", "BENCH_RESULT", "BENCH_DONE"


def regions(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[slice, ...]]:
    return [
        tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks, strict=True))
        for idx in np.ndindex(*(s // c for s, c in zip(shape, chunks, strict=True)))
    ]


def windows(shape: tuple[int, ...], window: tuple[int, ...], step: int) -> list[tuple[slice, ...]]:
    """Every ``window`` whose corner is a multiple of ``step``, row after row."""
    return [
        (slice(i, i + window[0]), slice(j, j + window[1]))
        for i in range(0, shape[0] - window[0] + 1, step)
        for j in range(0, shape[1] - window[1] + 1, step)
    ]


def source(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """The data every array of the benchmark holds (workers make it again from the seed)."""
    return np.random.default_rng(seed).integers(0, 1000, shape, dtype="int32")


def chunk_requests(proxy: Any) -> list[dict[str, Any]]:
    return [e for e in proxy.log() if "/a/c/" in e["path"]]


def one_pass(
    a: Any, data: np.ndarray, rs: list[tuple[slice, ...]], proxy: Any
) -> tuple[float, int]:
    proxy.log(reset=True)
    t0 = time.perf_counter()
    for r in rs:
        got = a[r]
        if not np.array_equal(got, data[r]):
            raise AssertionError(f"wrong values at {r}")
    seconds = time.perf_counter() - t0
    requests = sum(1 for e in proxy.log() if e["method"] == "GET" and "/a/c/" in e["path"])
    return seconds, requests


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "n/a"
    return f"{a / b:.2f}x" if a / b < 100 else f"{a / b:.0f}x"


# --------------------------------------------------------------------------- the s3 section


def section_s3(args: argparse.Namespace, bucket: servers.S3Bucket, proxy: Any) -> None:
    shape = tuple(int(s) for s in args.shape.split(","))
    grid = args.s3_grid
    shards, inner = (shape[0] // 4, shape[1] // 4), (shape[0] // grid, shape[1] // grid)
    data = np.random.default_rng(0).integers(0, 1000, shape, dtype="int32")
    opts = bucket.object_store_options()
    rows: list[tuple[str, float, int]] = []
    for layout, kw in (
        ("sharded", {"chunks": inner, "shards": shards, "compressors": None}),
        ("plain", {"chunks": inner}),
    ):
        url = bucket.url(f"{layout}.zarr")
        zarrox.create_array(url, name="a", shape=shape, dtype="int32", storage_options=opts, **kw)[
            ...
        ] = data
        rs = regions(shape, inner)
        a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
        if layout == "sharded":
            rows.append(("sharded, first pass", *one_pass(a, data, rs, proxy)))
            rows.append(("sharded, indexes cached", *one_pass(a, data, rs, proxy)))
            continue
        rows.append(("plain, no cache", *one_pass(a, data, rs, proxy)))
        with zarrox.config.set({"cache.bytes": CACHE_BYTES, "cache.recheck": "open"}):
            rows.append(("plain, cache cold", *one_pass(a, data, rs, proxy)))
            rows.append(('plain, cached, recheck "open"', *one_pass(a, data, rs, proxy)))
            zarrox.config.set({"cache.recheck": True})
            rows.append(("plain, cached, recheck true", *one_pass(a, data, rs, proxy)))
    n = len(regions(shape, inner))
    print(
        f"== s3: {shape} int32, {n} chunks read one call each, {args.latency_ms:g} ms per request"
    )
    print(f"{'case':<34} {'seconds':>8} {'requests':>9}")
    for name, seconds, requests in rows:
        print(f"{name:<34} {seconds:>8.2f} {requests:>9}")
    print()


# --------------------------------------------------------------------------- workers


def worker_passes(spec: dict[str, Any]) -> Iterator[tuple[str, Callable[[], None]]]:
    """(pass name, a function that runs the pass and checks every value) for the worker's
    task and implementation, in order; set-up (opening the array) happens between them,
    untimed."""
    task, impl = spec["task"], spec["impl"]
    shape = tuple(spec["shape"])
    data = source(shape, spec["seed"])
    if task == "compare":
        rs = regions(shape, tuple(spec["chunks"]))
    else:
        rs = windows(shape, tuple(spec["window"]), spec["step"])

    def run(read: Callable[[tuple[slice, ...]], Any]) -> Callable[[], None]:
        def go() -> None:
            for r in rs:
                got = np.asarray(read(r))
                if not np.array_equal(got, data[r]):
                    raise AssertionError(f"{impl}: wrong values at {r}")

        return go

    if impl.startswith("zarrox"):
        import zarrox as zx

        cache = spec.get("cache")
        if cache is not None:
            zx.config.set({"cache.bytes": CACHE_BYTES, "cache.recheck": cache})
        if task == "compare":
            a = zx.open_array(
                spec["url"], path="a", mode="r", storage_options=spec["storage_options"]
            )
        else:
            a = zx.open_array(spec["path"], path="a", mode="r")
        yield "first pass", run(a.__getitem__)
        if task == "compare":
            yield "second pass", run(a.__getitem__)
            if cache is not None:
                zx.config.set({"cache.recheck": True})
                yield "third pass, recheck true", run(a.__getitem__)
        return

    import tensorstore as ts

    pool = spec["cache_pool"]
    context = ts.Context({"cache_pool": {"total_bytes_limit": pool}})
    ts_spec = {"driver": "zarr3", "kvstore": spec["kvstore"]}
    if pool:
        ts_spec["recheck_cached_data"] = spec["recheck"]
    t = ts.open(ts_spec, read=True, context=context).result()
    yield "first pass", run(lambda r: t[r].read().result())
    if task == "compare":
        yield "second pass", run(lambda r: t[r].read().result())
        if pool:
            t2 = ts.open({**ts_spec, "recheck_cached_data": True}, read=True, context=context)
            t2 = t2.result()
            yield "third pass, recheck true", run(lambda r: t2[r].read().result())


def worker_main(spec: dict[str, Any]) -> None:
    """The worker: before each pass it says READY and waits for a line on stdin (the parent
    resets the proxy's request log), then runs the pass and says RESULT."""
    for name, go in worker_passes(spec):
        print(f"{READY} {name}", flush=True)
        if not sys.stdin.readline():
            return
        t0 = time.perf_counter()
        go()
        seconds = time.perf_counter() - t0
        print(f"{RESULT} {json.dumps({'pass': name, 'seconds': seconds})}", flush=True)
    print(DONE, flush=True)


def run_worker(spec: dict[str, Any], pythonpath: str, proxy: Any | None) -> list[dict[str, Any]]:
    """Run one worker; per pass: seconds, and with ``proxy`` the chunk requests it made and how
    many of them came back without a body (a HEAD, or a 304)."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    out: list[dict[str, Any]] = []
    try:
        for line in proc.stdout:
            line = line.strip()
            if line.startswith(READY):
                if proxy is not None:
                    proxy.log(reset=True)
                proc.stdin.write("go\n")
                proc.stdin.flush()
            elif line.startswith(RESULT):
                result = json.loads(line[len(RESULT) + 1 :])
                if proxy is not None:
                    reqs = chunk_requests(proxy)
                    result["requests"] = len(reqs)
                    result["no body"] = sum(1 for e in reqs if e["bytes"] == 0)
                out.append(result)
            elif line == DONE:
                break
    finally:
        proc.stdin.close()
        err = proc.stderr.read() if proc.stderr else ""
        rc = proc.wait(60)
    if rc != 0 or not out:
        raise RuntimeError(f"worker {spec['impl']} failed ({rc}): {err[-3000:]}")
    return out


def alternate(
    impls: dict[str, tuple[dict[str, Any], str]],
    repeat: int,
    proxy: Any | None,
    failed: list[str],
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Run every implementation once per repetition, the order rotating by one each time;
    per implementation and pass, the results of every repetition."""
    names = list(impls)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {n: {} for n in names}
    for rep in range(repeat):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            spec, pythonpath = impls[name]
            try:
                passes = run_worker(spec, pythonpath, proxy)
            except Exception as e:  # reported, and counted as failed
                failed.append(f"{name} (repetition {rep + 1}): {e}")
                print(f"  {name}: FAILED: {str(e)[-600:]}", flush=True)
                continue
            for p in passes:
                results[name].setdefault(p["pass"], []).append(p)
            print(
                f"  repetition {rep + 1}: {name}: "
                + ", ".join(f"{p['pass']} {p['seconds']:.3f} s" for p in passes),
                flush=True,
            )
    return results


def best(results: dict[str, dict[str, list[dict[str, Any]]]], impl: str, name: str) -> Any:
    """The fastest repetition's result of ``impl``'s pass ``name`` (None if it did not run)."""
    samples = results.get(impl, {}).get(name)
    return min(samples, key=lambda p: p["seconds"]) if samples else None


def seconds(results: dict[str, dict[str, list[dict[str, Any]]]], impl: str, name: str) -> Any:
    b = best(results, impl, name)
    return None if b is None else b["seconds"]


def print_table(
    results: dict[str, dict[str, list[dict[str, Any]]]], requests: bool, skipped: dict[str, str]
) -> None:
    head = f"{'implementation':<32} {'pass':<26} {'seconds':>8}"
    print(head + (f" {'requests':>9} {'no body':>8}" if requests else ""))
    for impl, passes in results.items():
        if impl in skipped:
            print(f"{impl:<32} not run: {skipped[impl]}")
            continue
        for name in passes:
            b = best(results, impl, name)
            line = f"{impl:<32} {name:<26} {b['seconds']:>8.3f}"
            if requests:
                line += f" {b['requests']:>9} {b['no body']:>8}"
            print(line)


# --------------------------------------------------------------------------- compare


def before_missing(before: str) -> str | None:
    """None when ``before`` holds a zarrox package with its extension, else why not."""
    pkg = Path(before) / "zarrox"
    if not before or not (pkg / "__init__.py").is_file():
        return f"no zarrox package at {before or '(none given)'}"
    if not any(pkg.glob("_core*.so")):
        return f"{pkg} has no _core extension"
    return None


def section_compare(
    args: argparse.Namespace, bucket: servers.S3Bucket, proxy: Any, failed: list[str]
) -> None:
    shape = tuple(int(s) for s in args.compare_shape.split(","))
    chunks, shards = COMPARE_CHUNKS, tuple(int(s) for s in args.compare_shards.split(","))
    seed = 1
    url = bucket.url("compare.zarr")
    opts = bucket.object_store_options()
    a = zarrox.create_array(
        url,
        name="a",
        shape=shape,
        dtype="int32",
        chunks=chunks,
        shards=shards,
        compressors=ZSTD,
        storage_options=opts,
    )
    a[...] = source(shape, seed)
    base = {"task": "compare", "shape": shape, "chunks": chunks, "seed": seed}
    zx = {**base, "url": url, "storage_options": opts}
    kv = bucket.tensorstore_kvstore("compare.zarr/a/")
    impls: dict[str, tuple[dict[str, Any], str]] = {
        "zarrox": ({**zx, "impl": "zarrox", "cache": "open"}, THIS_BUILD),
        "zarrox today": ({**zx, "impl": "zarrox today"}, args.before),
        "tensorstore, no cache pool": (
            {**base, "impl": "tensorstore", "kvstore": kv, "cache_pool": 0},
            THIS_BUILD,
        ),
        "tensorstore, cache pool": (
            {
                **base,
                "impl": "tensorstore",
                "kvstore": kv,
                "cache_pool": CACHE_BYTES,
                "recheck": "open",
            },
            THIS_BUILD,
        ),
    }
    skipped = {}
    why = before_missing(args.before)
    if why:
        skipped["zarrox today"] = why
    try:
        import tensorstore  # noqa: F401
    except ImportError:
        skipped["tensorstore, no cache pool"] = skipped["tensorstore, cache pool"] = (
            "tensorstore is not installed"
        )
    n = len(regions(shape, chunks))
    n_shards = len(regions(shape, shards))
    print(
        f"== compare: sharded {shape} int32, {n} inner chunks {chunks} in {n_shards} shards"
        f" {shards} (zstd) on S3, read one call each, {args.latency_ms:g} ms per request;"
        f" cache {CACHE_BYTES >> 20} MiB; least of {args.repeat} repetitions"
    )
    run = {k: v for k, v in impls.items() if k not in skipped}
    results = alternate(run, args.repeat, proxy, failed)
    print_table({k: results.get(k, {}) for k in impls}, True, skipped)
    first, second, third = "first pass", "second pass", "third pass, recheck true"
    zarrox_t = {p: seconds(results, "zarrox", p) for p in (first, second, third)}
    print(f"{'ratio':<46} {'first':>8} {'second':>8} {'third':>8}")
    for other in ("zarrox today", "tensorstore, cache pool", "tensorstore, no cache pool"):
        cells = [ratio(zarrox_t[p], seconds(results, other, p)) for p in (first, second, third)]
        print(f"{'zarrox / ' + other:<46} {cells[0]:>8} {cells[1]:>8} {cells[2]:>8}")
    for impl in impls:
        speedup = ratio(seconds(results, impl, first), seconds(results, impl, second))
        print(f"{'second pass speedup (first / second), ' + impl:<64} {speedup:>8}")
    print()


# --------------------------------------------------------------------------- window


def section_window(args: argparse.Namespace, work: Path, failed: list[str]) -> None:
    shape = tuple(int(s) for s in args.window_shape.split(","))
    chunks = tuple(int(s) for s in args.window_chunks.split(","))
    window = tuple(int(s) for s in args.window.split(","))
    step, seed = args.window_step, 2
    path = work / "window.zarr"
    a = zarrox.create_array(
        str(path), name="a", shape=shape, dtype="int32", chunks=chunks, compressors=ZSTD
    )
    a[...] = source(shape, seed)
    base = {"task": "window", "shape": shape, "window": window, "step": step, "seed": seed}
    zx = {**base, "path": str(path)}
    kv = {"driver": "file", "path": str(path / "a") + "/"}
    ts_base = {**base, "impl": "tensorstore", "kvstore": kv, "cache_pool": CACHE_BYTES}
    impls: dict[str, tuple[dict[str, Any], str]] = {
        'zarrox, cache, recheck "open"': ({**zx, "impl": "zarrox", "cache": "open"}, THIS_BUILD),
        "zarrox, cache, recheck true": ({**zx, "impl": "zarrox", "cache": True}, THIS_BUILD),
        "zarrox, no cache": ({**zx, "impl": "zarrox"}, THIS_BUILD),
        'tensorstore, cache pool, "open"': ({**ts_base, "recheck": "open"}, THIS_BUILD),
        "tensorstore, cache pool, true": ({**ts_base, "recheck": True}, THIS_BUILD),
    }
    skipped = {}
    try:
        import tensorstore  # noqa: F401
    except ImportError:
        for k in impls:
            if k.startswith("tensorstore"):
                skipped[k] = "tensorstore is not installed"
    n = len(windows(shape, window, step))
    print(
        f"== window: local {shape} int32 in {chunks} chunks (zstd), {n} windows {window}"
        f" moving {step} at a time, row after row; cache {CACHE_BYTES >> 20} MiB; least of"
        f" {args.repeat} repetitions"
    )
    run = {k: v for k, v in impls.items() if k not in skipped}
    results = alternate(run, args.repeat, None, failed)
    print_table({k: results.get(k, {}) for k in impls}, False, skipped)

    def t(impl: str) -> float | None:
        return seconds(results, impl, "first pass")

    cached_open, cached_true = 'zarrox, cache, recheck "open"', "zarrox, cache, recheck true"
    pairs = [
        (cached_open, "zarrox, no cache"),
        (cached_true, "zarrox, no cache"),
        (cached_open, 'tensorstore, cache pool, "open"'),
        (cached_true, "tensorstore, cache pool, true"),
        ("zarrox, no cache", 'tensorstore, cache pool, "open"'),
    ]
    for x, y in pairs:
        print(f"{x + ' / ' + y:<68} {ratio(t(x), t(y)):>8}")
    print()


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sections", default=",".join(SECTIONS), help="of " + ",".join(SECTIONS))
    p.add_argument("--latency-ms", type=float, default=None, help="20 (0 with --quick)")
    p.add_argument("--shape", default=None, help="s3 section: 256,512 (1024 chunks)")
    p.add_argument("--s3-grid", type=int, default=None, help="s3 section: chunks per side, 32")
    p.add_argument("--repeat", type=int, default=1, help="compare, window: repetitions")
    p.add_argument("--before", default=BEFORE, help="the build before issue #34 (zarrox today)")
    p.add_argument("--compare-shape", default=None, help="128,256: 128 inner chunks")
    p.add_argument("--compare-shards", default=None, help="64,128")
    p.add_argument("--window-shape", default=None, help="1024,1024")
    p.add_argument("--window-chunks", default=",".join(map(str, WINDOW_CHUNKS)))
    p.add_argument("--window", default=",".join(map(str, WINDOW)))
    p.add_argument("--window-step", type=int, default=WINDOW_STEP)
    p.add_argument("--quick", action="store_true", help="a smoke run: small sizes, no latency")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main(json.loads(args.worker))
        return 0
    quick = {"latency_ms": 0.0, "shape": "64,64", "s3_grid": 8, "compare_shape": "32,64"}
    quick |= {"compare_shards": "32,32", "window_shape": "256,256"}
    full = {"latency_ms": 20.0, "shape": "256,512", "s3_grid": 32, "compare_shape": "128,256"}
    full |= {"compare_shards": ",".join(map(str, COMPARE_SHARDS)), "window_shape": "1024,1024"}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.quick and args.window_step == WINDOW_STEP:
        args.window_step = 32
    sections = [s for s in args.sections.split(",") if s]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        p.error(f"unknown sections {sorted(unknown)}; choose from {','.join(SECTIONS)}")
    failed: list[str] = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        for key, value in servers.isolated_aws_env(Path(work)).items():
            os.environ[key] = value
        if "window" in sections:
            section_window(args, Path(work), failed)
        if {"s3", "compare"} & set(sections):
            with servers.start_moto() as moto:
                plan = servers.FaultPlan(latency_ms=args.latency_ms)
                with servers.FaultProxy(moto.port, plan) as proxy:
                    bucket = servers.S3Bucket.create(moto.url).via(proxy.url)
                    # tensorstore's s3 kvstore takes its credentials from the environment
                    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
                        os.environ[key] = bucket.env()[key]
                    if "compare" in sections:
                        section_compare(args, bucket, proxy, failed)
                    if "s3" in sections:
                        section_s3(args, bucket, proxy)
    print(f"{time.monotonic() - t0:.0f} s in all")
    print(f"failed cases: {len(failed)}" + "".join(f"\n  {f}" for f in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
