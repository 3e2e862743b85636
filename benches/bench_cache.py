"""Cache benchmark (issue #34): chunk-by-chunk reads over S3 (moto on 127.0.0.1 behind the
latency proxy of ``tests/servers.py``, 20 ms per request by default), one call per chunk.

* ``sharded``: a 2-D int32 array of 16 shards of 64 inner chunks each, read inner chunk by
  inner chunk: the first pass reads each shard's index once (one request per inner chunk plus
  one per shard), a second pass uses the cached indexes (one conditional request per inner
  chunk);
* ``plain``: the same array in unsharded chunks with zstd, read chunk by chunk without the
  chunk cache, then with ``cache.bytes`` set: a cold pass, a second pass with ``cache.recheck``
  ``"open"`` (no request) and with ``True`` (one conditional request per chunk, 304s without
  bodies).

Every read is checked against the source; the table gives seconds per pass and requests per
pass (counted by the proxy).

    .venv/bin/python benches/bench_cache.py [--latency-ms 20] [--shape 256,512]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402
import zarrox  # noqa: E402


def regions(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[slice, ...]]:
    return [
        tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks, strict=True))
        for idx in np.ndindex(*(s // c for s, c in zip(shape, chunks, strict=True)))
    ]


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--shape", default="256,512")
    args = p.parse_args(argv)
    shape = tuple(int(s) for s in args.shape.split(","))
    shards, inner = (shape[0] // 4, shape[1] // 4), (shape[0] // 32, shape[1] // 32)
    data = np.random.default_rng(0).integers(0, 1000, shape, dtype="int32")
    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory() as work:
        for key, value in servers.isolated_aws_env(Path(work)).items():
            os.environ[key] = value
        with servers.start_moto() as moto:
            plan = servers.FaultPlan(latency_ms=args.latency_ms)
            with servers.FaultProxy(moto.port, plan) as proxy:
                bucket = servers.S3Bucket.create(moto.url).via(proxy.url)
                opts = bucket.object_store_options()
                for layout, kw in (
                    ("sharded", {"chunks": inner, "shards": shards, "compressors": None}),
                    ("plain", {"chunks": inner}),
                ):
                    url = bucket.url(f"{layout}.zarr")
                    zarrox.create_array(
                        url, name="a", shape=shape, dtype="int32", storage_options=opts, **kw
                    )[...] = data
                    rs = regions(shape, inner)
                    a = zarrox.open_array(url, path="a", mode="r", storage_options=opts)
                    if layout == "sharded":
                        rows.append(("sharded, first pass", *one_pass(a, data, rs, proxy)))
                        rows.append(("sharded, indexes cached", *one_pass(a, data, rs, proxy)))
                        continue
                    rows.append(("plain, no cache", *one_pass(a, data, rs, proxy)))
                    with zarrox.config.set({"cache.bytes": 256 << 20, "cache.recheck": "open"}):
                        rows.append(("plain, cache cold", *one_pass(a, data, rs, proxy)))
                        rows.append(
                            ('plain, cached, recheck "open"', *one_pass(a, data, rs, proxy))
                        )
                        zarrox.config.set({"cache.recheck": True})
                        rows.append(("plain, cached, recheck true", *one_pass(a, data, rs, proxy)))
    n = len(regions(shape, inner))
    print(f"{shape} int32, {n} chunks read one call each, {args.latency_ms:g} ms per request")
    print(f"{'case':<34} {'seconds':>8} {'requests':>9}")
    for name, seconds, requests in rows:
        print(f"{name:<34} {seconds:>8.2f} {requests:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
