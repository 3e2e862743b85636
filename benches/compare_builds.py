"""Compare two builds of zarrox on the CPU-bound paths of the Rust core, in memory (no disk):
how RELIABILITY.md measured what ``overflow-checks = true`` costs. ``--local`` compares them
on a local directory instead (raw, zstd and sharded 128^3 uint16 in 32^3 chunks, all cores):
read-all, one chunk, chunk by chunk, write-all and partial writes (64 16^3 blocks), how
benches/RESULTS.md compares an engine change with the build before it. ``--pipeline DIR``
runs the same layouts and cases through zarr-python (``zarr.create_array``) with zarrox as its
codec pipeline: what a change of the Python layer costs or saves the drop-in backend.
``--metadata`` times opening and creating arrays (regular, sharded, rectilinear, and a
TensorStore spec), the work of the metadata layer.

Each build is a directory holding a ``zarrox`` package with its ``_core`` extension (put on
``PYTHONPATH`` in the worker processes). Workers alternate between the builds, ``--rounds``
each; a worker takes the minimum of 15 repeats per case (the least disturbed sample on a
shared machine), and the report the minimum over workers.

    cargo build --release --features python --lib \\
        --config 'profile.release.package.zarrox.overflow-checks=false'
    mkdir -p /tmp/off && cp -r python/zarrox /tmp/off/ && cp target/release/libzarrox.so \\
        /tmp/off/zarrox/_core.abi3.so          # then the same with the checks, into /tmp/on
    .venv/bin/python benches/compare_builds.py /tmp/off /tmp/on --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

#: Both workers time a case as the least of `repeats` calls, after one untimed call.
FASTEST = r"""
import time


def fastest(f, repeats):
    f()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        samples.append(time.perf_counter() - t0)
    return min(samples)
"""

WORKER = (
    FASTEST
    + r"""
import json, time
import numpy as np, zarrox

zarrox.config.set({"threading.max_workers": 1})
rng = np.random.default_rng(0)
s = zarrox.MemoryStore()
x = (np.arange(128**3, dtype="uint16") % 1000).reshape(128, 128, 128)
raw = zarrox.create_array(s, name="raw", shape=x.shape, dtype="uint16", chunks=(32, 32, 32),
                          compressors=None)
raw[...] = x
tr = zarrox.create_array(s, name="tr", shape=x.shape, dtype="uint16", chunks=(32, 32, 32),
                         codecs=[{"name": "transpose", "configuration": {"order": [2, 1, 0]}},
                                 {"name": "bytes", "configuration": {"endian": "big"}}])
tr[...] = x
delta = zarrox.create_array(s, name="d", shape=(1 << 20,), dtype="int32", chunks=(1 << 16,),
                            zarr_format=2, filters=[{"id": "delta", "dtype": "<i4"}],
                            compressors=None)
delta[...] = np.arange(1 << 20, dtype="int32")
points = tuple(rng.integers(0, 128, 200_000) for _ in range(3))
sh = zarrox.create_array(s, name="sh", shape=x.shape, dtype="uint16", chunks=(16, 16, 16),
                         shards=(64, 64, 64),
                         compressors=[{"name": "zstd", "configuration": {"level": 1}}])
sh[...] = x
corners = [(z, y, w) for z in range(0, 128, 32) for y in range(0, 128, 32)
           for w in range(0, 128, 32)]
cases = {
    "vindex, 200k points": lambda: raw.vindex[points],
    "strided a[::3, ::5, ::7]": lambda: raw[::3, ::5, ::7],
    "read-all, raw": lambda: raw[...],
    "read-all, transpose + big endian": lambda: tr[...],
    "read-all, delta filter (v2)": lambda: delta[...],
    "write-all, raw": lambda: raw.__setitem__(Ellipsis, x),
    "write-all, sharded zstd": lambda: sh.__setitem__(Ellipsis, x),
    "partial writes, sharded (64 calls)": lambda: [
        sh.__setitem__((slice(z + 8, z + 24), slice(y + 8, y + 24), slice(w + 8, w + 24)),
                       x[z:z + 16, y:y + 16, w:w + 16]) for z, y, w in corners],
}
print(json.dumps({name: fastest(f, 15) for name, f in cases.items()}))
"""
)

LOCAL_WORKER = (
    FASTEST
    + r"""
import json, os, shutil, sys, tempfile, time
import numpy as np, zarrox

if sys.argv[2] == "pipeline":
    # the same calls through zarr-python, zarrox's codec pipeline doing the work
    import zarr

    zarr.config.set(
        {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    )
    create_array = zarr.create_array
else:
    create_array = zarrox.create_array
root = tempfile.mkdtemp(dir=sys.argv[1])
x = (np.arange(128**3, dtype="uint16") % 1000).reshape(128, 128, 128)
zstd = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
layouts = {
    "raw": {"compressors": None},
    "zstd": {"compressors": zstd},
    "sharded": {"compressors": zstd, "shards": (64, 64, 64)},
}
out = {}
for name, kw in layouts.items():
    a = create_array(os.path.join(root, name), shape=x.shape, dtype="uint16",
                     chunks=(32, 32, 32), **kw)
    a[...] = x
    corners = [(z, y, w) for z in range(0, 128, 32) for y in range(0, 128, 32)
               for w in range(0, 128, 32)]
    n = [0]

    def write(a=a, name=name, kw=kw):
        n[0] += 1
        w = create_array(os.path.join(root, f"{name}-w{n[0]}"), shape=x.shape,
                         dtype="uint16", chunks=(32, 32, 32), **kw)
        w[...] = x

    def partial(a=a, name=name):
        # Into existing chunks: half a chunk per call (a read-modify-write of the chunk),
        # or one inner chunk per call (of its shard).
        if name == "sharded":
            for z, y, w in corners:
                a[z:z + 32, y:y + 32, w:w + 32] = x[z:z + 32, y:y + 32, w:w + 32]
        else:
            for z, y, w in corners:
                a[z:z + 16, y:y + 32, w:w + 32] = x[z:z + 16, y:y + 32, w:w + 32]

    cases = {
        f"{name}: read-all": lambda a=a: a[...],
        f"{name}: one chunk": lambda a=a: a[32:64, 32:64, 32:64],
        f"{name}: chunk by chunk (64 calls)": lambda a=a: [
            a[z:z + 32, y:y + 32, w:w + 32] for z, y, w in corners],
        f"{name}: write-all": write,
        # partial writes: a 16^3 block at the centre of each chunk (of a shard: read,
        # merge, encode and assemble the shard again)
        f"{name}: partial writes (64 calls)": lambda a=a: [
            a.__setitem__((slice(z + 8, z + 24), slice(y + 8, y + 24), slice(w + 8, w + 24)),
                          x[z:z + 16, y:y + 16, w:w + 16]) for z, y, w in corners],
        f"{name}: one value written (64 calls)": lambda a=a: [
            a.__setitem__((slice(z, z + 16), slice(y, y + 16), slice(w, w + 16)), 7)
            for z, y, w in corners],
    }
    if name == "sharded":
        cases["sharded: one inner chunk per call (64 calls)"] = partial
    elif name == "zstd":
        cases["zstd: half a chunk per call (64 calls)"] = partial
    for case, f in cases.items():
        out[case] = fastest(f, 9)
try:
    import tensorstore as ts
except ImportError:
    ts = None
if sys.argv[2] == "pipeline":
    ts = None  # tensorstore's row is for zarrox's own API
if ts is not None:
    # The same sharded partial writes through tensorstore, for scale (it commits each on the
    # shard's generation too).
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                 "path": os.path.join(root, "ts")}, "create": True,
                 "metadata": {"shape": list(x.shape), "data_type": "uint16",
                              "chunk_grid": {"name": "regular",
                                             "configuration": {"chunk_shape": [64, 64, 64]}},
                              "codecs": [{"name": "sharding_indexed", "configuration": {
                                  "chunk_shape": [32, 32, 32],
                                  "codecs": [{"name": "bytes",
                                              "configuration": {"endian": "little"}},
                                             {"name": "zstd", "configuration": {
                                                 "level": 1, "checksum": False}}]}}]},
                 "context": {"cache_pool": {"total_bytes_limit": 0}}}).result()
    t[...].write(x).result()

    def ts_partial():
        for z, y, w in corners:
            t[z:z + 32, y:y + 32, w:w + 32].write(x[z:z + 32, y:y + 32, w:w + 32]).result()

    out["tensorstore sharded: one inner chunk per call"] = fastest(ts_partial, 9)
shutil.rmtree(root)
print(json.dumps(out))
"""
)


#: ``--metadata``: what opening and creating arrays costs, the work of the metadata layer (the
#: codec chain rules, the chunk grids, TensorStore's partial chains) more than of the engine.
METADATA_WORKER = (
    FASTEST
    + r"""
import json
import zarrox
from zarrox.tensorstore_spec.driver import open_spec

s = zarrox.MemoryStore()
zstd = [{"name": "zstd", "configuration": {"level": 1}}]
def create_sharded():
    zarrox.create_array(s, name="sh", shape=(4096, 4096), dtype="float32", chunks=(64, 64),
                        shards=(512, 512), compressors=zstd, overwrite=True)
def create_plain():
    zarrox.create_array(s, name="pl", shape=(4096, 4096), dtype="uint16", chunks=(256, 256),
                        overwrite=True)
def create_rectilinear():
    zarrox.create_array(s, name="rc", shape=(100, 60), dtype="int32",
                        chunks=[[10, 20, 30, 40], 6], overwrite=True)
sharding = {"name": "sharding_indexed",
            "configuration": {"chunk_shape": [50, 50], "codecs": ["bytes", "zstd"]}}
spec = {"driver": "zarr3", "kvstore": {"driver": "memory"}, "create": True,
        "metadata": {"shape": [1000, 1000], "data_type": "float32", "codecs": [sharding],
                     "chunk_grid": {"name": "regular",
                                    "configuration": {"chunk_shape": [500, 500]}}}}
create_sharded(); create_plain(); create_rectilinear()
cases = {
    "create sharded": create_sharded,
    "create plain": create_plain,
    "create rectilinear": create_rectilinear,
    "open sharded": lambda: zarrox.open_array(s, path="sh", mode="r"),
    "open rectilinear": lambda: zarrox.open_array(s, path="rc", mode="r"),
    "tensorstore spec create": lambda: open_spec(spec),
}
print(json.dumps({name: fastest(f, 30) for name, f in cases.items()}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="directory with the first build's zarrox package")
    parser.add_argument("b", help="directory with the second build's zarrox package")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument(
        "--local", metavar="DIR", help="compare on local directories under DIR instead of memory"
    )
    parser.add_argument(
        "--pipeline",
        metavar="DIR",
        help="compare as zarr-python's codec pipeline on local directories under DIR",
    )
    parser.add_argument(
        "--metadata", action="store_true", help="compare opening and creating arrays in memory"
    )
    args = parser.parse_args()
    if args.metadata:
        worker = [METADATA_WORKER]
    elif args.pipeline:
        worker = [LOCAL_WORKER, args.pipeline, "pipeline"]
    else:
        worker = [LOCAL_WORKER, args.local, "zarrox"] if args.local else [WORKER]
    results: dict[str, list[dict[str, float]]] = {args.a: [], args.b: []}
    for r in range(args.rounds):
        for build in (args.a, args.b) if r % 2 == 0 else (args.b, args.a):
            proc = subprocess.run(
                [sys.executable, "-c", *worker],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": build},
                check=True,
            )
            results[build].append(json.loads(proc.stdout))
    print(f"{'case':40} {'a min ms':>9} {'b min ms':>9} {'b / a':>7}")
    ratios = []
    for case in results[args.a][0]:
        a = min(d[case] for d in results[args.a]) * 1e3
        b = min(d[case] for d in results[args.b]) * 1e3
        ratios.append(b / a)
        print(f"{case:40} {a:9.2f} {b:9.2f} {b / a:7.3f}")
    print(f"geometric mean b / a: {statistics.geometric_mean(ratios):.3f}")


if __name__ == "__main__":
    main()
