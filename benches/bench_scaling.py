"""Throughput against cores: read-all and write-all (and, if asked, read-chunks) of one
dataset, every implementation, with the workers pinned to the first N CPUs for each N.

Usage (from the repo root, in the project venv):
    python benches/bench_scaling.py --codec zstd --size 512 --cpu-counts 1,2,4,8,16
        [--impls zarrox,pipeline,zarrs,tensorstore] [--ops read,write] [--rounds 2]
        [--repeat 3] [--tmpdir /dev/shm]

Each CPU count runs the cases of ``bench_read_write.py`` (fresh workers, round-robin,
verified) with every worker's affinity mask set to CPUs 0..N-1 before it starts, so each
implementation sizes its thread pool to N (zarrox, zarrs and Python read the mask;
tensorstore's data-copy concurrency is set to N). The report: per CPU count the usual
table, then one table of medians with each implementation's speed-up over its own time
on the fewest CPUs, and zarrox's time over the fastest other implementation's per count.
A machine whose cores do not scale shows it in every implementation's column alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TypeGuard

import bench_read_write as brw

DEFAULT_OPS = ("read", "write")


def default_counts() -> list[int]:
    """1, 2, 4, ... up to the CPUs this process may use (that count last)."""
    usable = len(os.sched_getaffinity(0))
    counts = [1]
    while counts[-1] * 2 < usable:
        counts.append(counts[-1] * 2)
    return counts + [usable] if usable > 1 else counts


def parse_counts(text: str | None) -> list[int]:
    if not text:
        return default_counts()
    counts = [int(part) for part in text.split(",") if part.strip()]
    usable = len(os.sched_getaffinity(0))
    bad = [n for n in counts if not 1 <= n <= usable]
    if not counts or bad:
        raise SystemExit(f"--cpu-counts: each in 1..{usable} (the CPUs this process may use)")
    return sorted(set(counts))


def scaling_table(
    by_count: dict[int, list[brw.Case]], ops: Sequence[str], impls: Sequence[str]
) -> str:
    """Rows (op, implementation); per CPU count the median ms and the speed-up over the
    same case on the fewest CPUs; a row per op of zarrox / fastest other."""
    counts = sorted(by_count)
    columns = [brw.Column("op", 6, left=True), brw.Column("implementation", 19, left=True)]
    for n in counts:
        columns += [brw.Column(f"{n} cpu ms", 10), brw.Column("speed-up", 9)]
    found = {(c.op, c.impl, n): c for n, cases in by_count.items() for c in cases}

    def ok(c: brw.Case | None) -> TypeGuard[brw.Case]:
        return c is not None and c.error is None and bool(c.times)

    rows: list[list[str]] = []
    for op in ops:
        for impl in impls:
            row = [op, brw.IMPLS[impl]]
            base = found.get((op, impl, counts[0]))
            for n in counts:
                c = found.get((op, impl, n))
                if not ok(c):
                    row += ["failed", "-"]
                    continue
                up = f"{base.median / c.median:.2f}x" if ok(base) else "-"
                row += [f"{c.median * 1e3:.1f}", up]
            rows.append(row)
        row = [op, "zarrox / best other"]
        for n in counts:
            ref, best = brw.reference_and_best([c for c in by_count[n] if c.op == op])
            row += [f"{ref.median / best.median:.2f}x" if ref and best else "-", ""]
        rows.append(row)
    notes = [
        "speed-up = the same case's median on the fewest CPUs / its median here (ideal: the"
        " ratio of the CPU counts)",
        "zarrox / best other = zarrox's own API over the fastest implementation that is not"
        " zarrox, per CPU count",
    ]
    return brw.render_table(columns, rows, notes)


def run_driver(args: argparse.Namespace) -> int:
    counts = parse_counts(args.cpu_counts)
    by_count: dict[int, list[brw.Case]] = {}
    with brw.driver_setup(args, brw.OPS) as (ds, impls, ops):
        print(brw.method_text(args.rounds, args.repeat), flush=True)
        print(f"CPU counts: {', '.join(map(str, counts))}", flush=True)
        for n in counts:
            brw.set_worker_cpus(n)
            print(f"\n== workers on {brw.cpus_text()}", flush=True)
            by_count[n] = brw.measure(ds, impls, ops, args.rounds, args.repeat)
            print(brw.format_table(by_count[n], ds.src.nbytes))
        failed = [line for n in counts for line in brw.failure_lines(by_count[n])]
        print(f"\n== scaling ({ds.src.nbytes / brw.MIB:.1f} MiB)")
        status = brw.finish(scaling_table(by_count, ops, impls), failed)
        print(f"failed cases: {len(failed)}")
        return status


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    brw.add_common_args(p, brw.OPS)
    p.set_defaults(ops=",".join(DEFAULT_OPS), rounds=2, repeat=3)
    p.add_argument(
        "--cpu-counts",
        default=None,
        help="comma list of CPU counts; default 1, 2, 4, ... and all this process may use",
    )
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rounds < 1:
        p.error("--repeat and --rounds must be >= 1")
    if args.cpus is not None:
        p.error("--cpus: give --cpu-counts instead")
    return run_driver(args)


if __name__ == "__main__":
    sys.exit(main())
