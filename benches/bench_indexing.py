"""Indexing benchmark: per-call overhead of small reads, a strided read and a random
coordinate (vindex) read — zarrox (own API, and as zarr-python's codec pipeline) against
zarr-python, zarr-python + zarrs, tensorstore.

One run writes a 256^3 uint16 dataset (zstd level 1, 32^3 chunks) once with zarrox, then
times, for every implementation, each in fresh worker processes, on an array opened once
(untimed):

* ``chunk``:   ``a[0:32, 0:32, 0:32]``, one whole chunk, repeated many times (us per call);
* ``element``: ``a[100, 100, 100]``, one element, repeated many times (us per call);
* ``straddle``: ``a[16:48, 16:48, 16:48]``, a chunk-sized block across 8 chunks, repeated
  many times (us per call): a small read that needs several chunks;
* ``strided``: ``a[::7, ::7, ::7]`` (ms per call);
* ``vindex``:  ``a.vindex[z, y, x]`` for 1% of the elements (0.01 * size random points,
  fixed seed, unsorted, duplicates possible) (ms per call).

tensorstore does ``t[sel].read().result()`` / ``t.vindex[sel].read().result()``. Every
result is compared with the same selection of the numpy source. The dataset, the
implementations, the worker processes and the round-robin scheduling are those of
``bench_read_write.py`` (imported, not copied).

    .venv/bin/python benches/bench_indexing.py [--size 256] [--chunks 32] [--codec zstd]
        [--repeat 5] [--rounds 3] [--sample-s 0.2]
        [--impls zarrox,pipeline,zarr,zarrs,tensorstore]
        [--ops chunk,element,straddle,strided,vindex]
        [--tmpdir DIR] [--keep]

``benches/run_all.py`` runs it on the zstd and sharded datasets of its suite.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_read_write import (
    IMPLS,
    MIB,
    Case,
    Column,
    Dataset,
    Layout,
    WorkerError,
    add_common_args,
    add_worker_args,
    check_equal,
    dispatch,
    driver_setup,
    failure_lines,
    finish,
    layout_from_args,
    make_impl,
    peak_rss_bytes,
    ratio_cells,
    reference_and_best,
    render_table,
    reset_peak_rss,
    run_rounds,
    spawn_worker,
)

OPS = ("chunk", "element", "straddle", "strided", "vindex")
UNIT = {
    "chunk": ("us", 1e6),
    "element": ("us", 1e6),
    "straddle": ("us", 1e6),
    "strided": ("ms", 1e3),
    "vindex": ("ms", 1e3),
}
STRIDE = 7
VINDEX_FRACTION = 0.01
MAX_CALLS = 100_000
# zarrs-python runs strict (no silent fallback); it rejects strided and vindex selections
UNSUPPORTED = "unsupported by the zarrs pipeline (strict; DiscontiguousArrayError)"


def selection(op: str, shape: tuple[int, ...], layout: Layout, seed: int) -> Any:
    """The selection ``op`` reads (for ``vindex``: a tuple of coordinate arrays)."""
    if op == "chunk":
        return tuple(slice(0, min(c, n)) for c, n in zip(layout.chunks, shape, strict=True))
    if op == "element":
        return tuple(min(100, n - 1) for n in shape)
    if op == "straddle":
        return tuple(
            slice(min(c // 2, n - 1), min(c // 2 + c, n))
            for c, n in zip(layout.chunks, shape, strict=True)
        )
    if op == "strided":
        return (slice(None, None, STRIDE),) * len(shape)
    if op == "vindex":
        rng = np.random.default_rng(seed + 1)
        npoints = max(1, int(VINDEX_FRACTION * math.prod(shape)))
        return tuple(rng.integers(0, n, size=npoints, dtype=np.int64) for n in shape)
    raise ValueError(f"unknown op {op!r}")


def describe(op: str, shape: tuple[int, ...], layout: Layout, seed: int) -> str:
    sel = selection(op, shape, layout, seed)
    if op == "chunk":
        return "a[" + ", ".join(f"{s.start}:{s.stop}" for s in sel) + "] (one whole chunk)"
    if op == "element":
        return "a[" + ", ".join(map(str, sel)) + "]"
    if op == "straddle":
        return "a[" + ", ".join(f"{s.start}:{s.stop}" for s in sel) + "] (a chunk's size, 8 chunks)"
    if op == "strided":
        out = tuple(len(range(0, n, STRIDE)) for n in shape)
        return f"a[{', '.join([f'::{STRIDE}'] * len(shape))}] -> {out}"
    return (
        f"a.vindex[z, y, x], {len(sel[0])} random points ({VINDEX_FRACTION:.0%}, seed {seed + 1})"
    )


# --------------------------------------------------------------------------- worker


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    layout = layout_from_args(args)
    src = np.load(args.src)
    impl = make_impl(args.worker, layout)
    sel = selection(args.op, src.shape, layout, args.seed)
    want = src[sel]
    fetch = impl.vget if args.op == "vindex" else impl.get
    a = impl.open(Path(args.dataset))  # untimed: this benchmark is about reads
    what = f"{args.worker} {args.op}"
    baseline = reset_peak_rss()

    def sample(n: int) -> float:
        """n calls, each timed alone and its result verified (untimed); mean time per call."""
        total = 0.0
        for _ in range(n):
            t0 = time.perf_counter()
            got = fetch(a, sel)
            total += time.perf_counter() - t0
            check_equal(got, want, what)
        return total / n

    # untimed: warm-up (page cache, implementation), then size a sample to ~--sample-s
    # from warm calls, growing a trial batch until it takes a quarter of that
    sample(1)
    n = 1
    while True:
        per_call = sample(n)
        if n * per_call >= args.sample_s / 4 or n >= MAX_CALLS:
            break
        n *= 4
    calls = max(1, min(MAX_CALLS, round(args.sample_s / per_call)))
    times = [sample(calls) for _ in range(args.repeat)]
    return {
        "impl": args.worker,
        "op": args.op,
        "times": times,
        "calls": calls,
        "rss_peak_delta": peak_rss_bytes() - baseline,
    }


# --------------------------------------------------------------------------- driver


def format_table(cases: list[Case], markdown: bool = False) -> str:
    columns = [
        Column("op", 9, left=True),
        Column("implementation", 19, left=True),
        Column("calls", 7),
        Column("median", 10),
        Column("min", 10),
        Column("", 7, left=True),
        Column("t/zarrox", 10),
        Column("t/best-other", 14),
        Column("peak RSS +MiB", 15),
    ]
    rows: list[list[str]] = []
    notes: list[str] = []
    for op in OPS:
        op_cases = [c for c in cases if c.op == op]
        ref, best = reference_and_best(op_cases)
        if best is not None:
            notes.append(f"{op} {IMPLS[best.impl]}")
        unit, scale = UNIT[op]
        for c in op_cases:
            name = IMPLS[c.impl]
            if c.error is not None:
                label = "n/a" if c.error == UNSUPPORTED else "FAILED"
                rows.append([op, name, label, f"  {c.error[:90]}"])
                continue
            r_ref, r_best = ratio_cells(c, ref, best)
            rss = f"{c.rss_delta / MIB:.0f}" if c.rss_delta is not None else "?"
            rows.append(
                [
                    op,
                    name,
                    f"{c.calls}",
                    f"{c.median * scale:.1f}",
                    f"{min(c.times) * scale:.1f}",
                    f"{unit}/call",
                    r_ref,
                    r_best,
                    rss,
                ]
            )
    if notes:
        notes = ["best-other = fastest implementation that is not zarrox: " + ", ".join(notes)]
    return render_table(columns, rows, notes, markdown)


def method_text(rounds: int, repeat: int, sample_s: float) -> str:
    return (
        f"method: per implementation and op, {rounds} fresh worker process(es), run"
        f" round-robin; each opens the array once (untimed),\n"
        f"  warms up, then takes {repeat} samples of `calls` reads (sized to"
        f" ~{sample_s} s per sample). Each read is timed alone\n"
        f"  and its result verified against numpy (untimed); a sample is the mean time per"
        f" call. Median/min of the {rounds * repeat} samples.\n"
        f"  Ratios are time ratios (>1 = slower). peak RSS + = worker VmHWM growth during"
        f" the reads. Page cache warm."
    )


def selections_text(shape: tuple[int, ...], layout: Layout, ops: list[str], seed: int) -> str:
    return "\n".join(f"  {op:<8} = {describe(op, shape, layout, seed)}" for op in ops)


def failures(cases: list[Case]) -> list[str]:
    """The failed cases, as lines; a selection zarrs rejects (strict) is not a failure."""
    return failure_lines(cases, ignore=(UNSUPPORTED,))


def measure(
    ds: Dataset,
    impls: list[str],
    ops: list[str],
    rounds: int,
    repeat: int,
    sample_s: float,
    seed: int,
) -> list[Case]:
    """Run every (op, impl) case on ``ds`` in ``rounds`` fresh workers (this script in worker
    mode), round-robin; return the cases, failed ones with their ``error`` set."""

    def run_one(case: Case) -> None:
        argv = ds.worker_argv(case.impl, case.op, repeat)
        argv += ["--sample-s", str(sample_s), "--seed", str(seed)]
        try:
            case.merge(spawn_worker(__file__, argv))
        except WorkerError as e:
            if case.impl == "zarrs" and "DiscontiguousArrayError" in str(e):
                e = WorkerError(UNSUPPORTED)
            raise e from None

    def fmt(c: Case) -> str:
        unit, scale = UNIT[c.op]
        return f"{c.median * scale:.1f} {unit}/call"

    cases = {(op, impl): Case(impl, op) for op in ops for impl in impls}
    run_rounds(cases, ops, impls, rounds, run_one, fmt)
    return list(cases.values())


def run_driver(args: argparse.Namespace) -> int:
    with driver_setup(args, OPS) as (ds, impls, ops):
        print(method_text(args.rounds, args.repeat, args.sample_s))
        print(selections_text(ds.src.shape, ds.layout, ops, args.seed))
        print(flush=True)
        cases = measure(ds, impls, ops, args.rounds, args.repeat, args.sample_s, args.seed)
        return finish(format_table(cases), failures(cases))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, OPS)
    add_worker_args(p, OPS)
    p.add_argument(
        "--sample-s", type=float, default=0.2, help="target seconds per sample; default 0.2"
    )
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rounds < 1 or args.sample_s <= 0:
        p.error("--repeat and --rounds must be >= 1, --sample-s > 0")
    return dispatch(args, run_worker, run_driver)


if __name__ == "__main__":
    sys.exit(main())
