"""C-Blosc 1 against C-Blosc2 decoding the same blosc chunks, one thread, no I/O.

The chunks are what numcodecs' ``Blosc`` (c-blosc 1, the library zarrox links through
``blosc-src``) writes for the benchmark data (``bench_read_write.make_data``, 256^3 uint16 in
32^3 chunks, and the same values as float32); each is decoded by

- ``c-blosc1``: ``numcodecs.blosc.decompress`` (numcodecs' own build of c-blosc 1.21), and
- ``c-blosc2``: ``blosc2.decompress`` (python-blosc2's CMake build of C-Blosc2, with its
  runtime SIMD dispatch: SSE2, AVX2 and AVX-512 shuffles compiled in, chosen per CPU),

after checking that both give back the original bytes (C-Blosc2 reads c-blosc 1 frames).
Passes over all 512 chunks alternate between the two libraries; minima and medians per pass.
Needs ``numcodecs`` and ``blosc2`` (``pip install blosc2``; not part of the test extra).

    python benches/bench_blosc_decoders.py [--passes 40] [--size 256] [--variants a,b]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_read_write import make_data  # noqa: E402

#: name -> (dtype, cname, clevel, shuffle); shuffle 1 byte-shuffle, 2 bit-shuffle.
VARIANTS: dict[str, tuple[str, str, int, int]] = {
    "u16 blosclz-9 bitshuffle": ("uint16", "blosclz", 9, 2),  # the benchmark's blosc dataset
    "u16 blosclz-9 shuffle": ("uint16", "blosclz", 9, 1),
    "u16 lz4-5 shuffle": ("uint16", "lz4", 5, 1),  # numcodecs' Blosc() default
    "u16 zstd-5 shuffle": ("uint16", "zstd", 5, 1),  # zarr-python's BloscCodec() default
    "u16 zstd-5 bitshuffle": ("uint16", "zstd", 5, 2),
    "f32 blosclz-9 bitshuffle": ("float32", "blosclz", 9, 2),
    "f32 lz4-5 bitshuffle": ("float32", "lz4", 5, 2),
}


def chunks_of(a: np.ndarray, edge: int) -> list[np.ndarray]:
    return [
        np.ascontiguousarray(a[z : z + edge, y : y + edge, x : x + edge])
        for z in range(0, a.shape[0], edge)
        for y in range(0, a.shape[1], edge)
        for x in range(0, a.shape[2], edge)
    ]


def time_pass(
    decode: Callable[[bytes, np.ndarray], object], encoded: list[bytes], dest: np.ndarray
) -> float:
    """Seconds to decode every chunk of ``encoded`` into ``dest``, one after the other."""
    t0 = time.perf_counter()
    for e in encoded:
        decode(e, dest)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--passes", type=int, default=40, help="timed passes per library (40)")
    p.add_argument("--size", type=int, default=256, help="array edge (256)")
    p.add_argument("--chunk", type=int, default=32, help="chunk edge (32)")
    p.add_argument("--variants", default="", help="comma-separated subset of the names")
    args = p.parse_args(argv)

    wanted = [v.strip() for v in args.variants.split(",") if v.strip()] or list(VARIANTS)
    unknown = [v for v in wanted if v not in VARIANTS]
    if unknown:
        p.error(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    try:
        import blosc2
    except ImportError:
        p.error("needs python-blosc2 (pip install blosc2)")
    from numcodecs import Blosc, blosc

    blosc.set_nthreads(1)
    blosc.use_threads = False
    blosc2.set_nthreads(1)
    print(
        f"c-blosc1: numcodecs {blosc.__name__} (c-blosc {blosc.VERSION_STRING});"
        f" c-blosc2: python-blosc2 {blosc2.__version__} (C-Blosc2 {blosc2.blosclib_version})"
    )
    base = make_data((args.size,) * 3, 1)
    print(f"{'variant':26} {'ratio':>6} {'c-blosc1 min/med ms':>20} {'c-blosc2 min/med ms':>20}")
    for name in wanted:
        dtype, cname, clevel, shuffle = VARIANTS[name]
        data = base.astype(dtype)
        codec = Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=0)
        raw = chunks_of(data, args.chunk)
        encoded = [bytes(codec.encode(c)) for c in raw]
        dest = np.empty(raw[0].nbytes, dtype=np.uint8)
        for c, e in zip(raw, encoded, strict=True):
            if blosc2.decompress(e) != c.tobytes() or blosc.decompress(e) != c.tobytes():
                raise AssertionError(f"{name}: a chunk does not decode to its bytes")

        def one(e: bytes, d: np.ndarray) -> object:
            return blosc.decompress(e, d)

        def two(e: bytes, d: np.ndarray) -> object:
            return blosc2.decompress(e, dst=d)

        t1: list[float] = []
        t2: list[float] = []
        for _ in range(args.passes):
            t1.append(time_pass(one, encoded, dest))
            t2.append(time_pass(two, encoded, dest))
        ratio = sum(c.nbytes for c in raw) / sum(len(e) for e in encoded)
        print(
            f"{name:26} {ratio:6.2f} {min(t1) * 1e3:9.2f} /{statistics.median(t1) * 1e3:7.2f}"
            f"    {min(t2) * 1e3:9.2f} /{statistics.median(t2) * 1e3:7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
