"""The whole benchmark suite in one command: every implementation, every dataset, the
indexing cases, the decode floor, and the project's performance targets.

For each dataset (3-D uint16, 32^3 chunks; stored ``raw``, ``zstd``, ``blosc`` (blosclz 9,
bitshuffle) and ``sharded`` (128^3 shards of 32^3 zstd inner chunks)) it generates the data
once, writes the reference copy with zarrox, then runs, each case in fresh worker processes
(``--rounds`` of them, ``--repeat`` timed samples each, medians):

* ``bench_read_write.py``'s read-all, read-chunks and write-all;
* ``bench_indexing.py``'s chunk, element, strided and vindex reads (on the ``zstd`` and
  ``sharded`` datasets only);
* the decode floor: zarrox's time to fetch and decode every stored chunk on all cores,
  with nothing placed in an output (``_core.decode_stored_chunks(a._handle)``), timed in the same
  worker as a zarrox read-all, interleaved, like ``zarrox bench``;
* the compression floor: zarrox's time to encode every chunk (inner chunk of a shard) again
  with its codecs on all cores, in a tight loop with nothing gathered, assembled or stored
  (``_core.encode_floor(a._handle, 1)``), timed in the same worker as a zarrox write-all,
  interleaved.

Implementations: zarrox (its own API), zarr-python on zarrox's codec pipeline, zarr-python,
zarr-python on the zarrs pipeline, tensorstore, and on zarr-python >= 3.3 (Python >= 3.12)
zarr-python on its own ``FusedCodecPipeline`` (``fused``). It prints a table per dataset (with each
case's time ratio to the fastest implementation that is not zarrox), then the targets, each
with its measured value and ``met`` / ``not met`` (``n/a`` when a case it needs was not run
or failed); ``--markdown FILE`` also writes all of it as Markdown. The exit status is 1 when
a case failed (an error or wrong data); a target that is not met does not change it.

    .venv/bin/python benches/run_all.py [--size 256] [--rounds 3] [--repeat 5]
        [--codecs raw,zstd,blosc,sharded] [--impls zarrox,pipeline,zarr,zarrs,tensorstore]
        [--sample-s 0.2] [--markdown FILE] [--tmpdir DIR] [--keep] [--seed 0] [--quick]

``--quick``: a smoke run (size 64, 1 round, 1 repeat, 0.05 s indexing samples, unless given).

``--s3`` adds ``bench_s3.py``'s part after the targets: the same implementations on S3 (moto on
127.0.0.1 behind a proxy adding ``--s3-latency-ms``, 20 ms, per request), zstd and sharded,
128 MiB (``--s3-size``), with the server's own ceiling beside the results.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bench_indexing as bi
import bench_read_write as brw
import bench_s3

INDEXING_CODECS = ("zstd", "sharded")
FLOOR = "floor"
DEFAULTS = {"size": "256", "rounds": 3, "repeat": 5, "sample_s": 0.2}
QUICK = {"size": "64", "rounds": 1, "repeat": 1, "sample_s": 0.05}
#: zarrox's read-all and write-all compare with the fastest of these (fused: zarr >= 3.3).
RIVALS = ("tensorstore", "zarrs", "fused")
#: zarr-python on zarrox's pipeline compares with the faster of these.
PIPELINE_PEERS = ("zarrs", "fused")
#: The limits (time ratios) of issue 21's targets; zarr 3.4's issue asked 0.8x of the
#: pipeline, which 0.7x includes.
LIMITS = {
    "read": 0.5,
    "write": 0.7,
    "read-chunks": 0.4,
    "pipeline": 0.7,
    "rss": 1.1,
    "decode floor": 1.1,
    "compression floor": 1.15,
}


# --------------------------------------------------------------------------- floor worker


def run_floor_worker(args: argparse.Namespace) -> dict[str, Any]:
    """zarrox read-all and the decode floor, interleaved, on one opened array; then zarrox
    write-all and the compression floor, interleaved."""
    import zarrox
    from zarrox import _core

    src = np.load(args.src)
    a = zarrox.open_array(args.dataset, mode="r")
    brw.check_equal(a[...], src, "zarrox warm-up read")  # warms the page cache and zarrox
    _core.decode_stored_chunks(a._handle)
    baseline = brw.reset_peak_rss()
    reads: list[float] = []
    floors: list[float] = []
    n_chunks, decoded = 0, 0
    for rep in range(args.repeat):
        t0 = time.perf_counter()
        out = a[...]
        reads.append(time.perf_counter() - t0)
        brw.check_equal(out, src, f"zarrox read #{rep}")
        del out
        t0 = time.perf_counter()
        n_chunks, decoded = _core.decode_stored_chunks(a._handle)
        floors.append(time.perf_counter() - t0)
    rss = brw.peak_rss_bytes() - baseline
    write = brw.make_impl("zarrox", brw.layout_from_args(args)).write
    out = Path(args.out_dir) / "floor-copy"
    writes: list[float] = []
    encodes: list[float] = []
    encoded = 0
    for rep in range(args.repeat + 1):  # the first pass warms up, untimed
        shutil.rmtree(out, ignore_errors=True)
        os.sync()
        t0 = time.perf_counter()
        write(out, src)
        took = time.perf_counter() - t0
        _, encoded, seconds = _core.encode_floor(a._handle, 1)
        if rep:
            writes.append(took)
            encodes.extend(seconds)
    brw.check_equal(zarrox.open_array(str(out), mode="r")[...], src, "zarrox floor write")
    shutil.rmtree(out, ignore_errors=True)
    return {
        "impl": "zarrox",
        "op": FLOOR,
        "times": floors,
        "read_times": reads,
        "calls": n_chunks,
        "decoded_nbytes": decoded,
        "write_times": writes,
        "encode_times": encodes,
        "encoded_nbytes": encoded,
        "threads": zarrox.get_num_threads(),
        "rss_peak_delta": rss,
    }


@dataclass
class Floor:
    """The floor worker's samples: ``floor.times`` the decode floor, ``read.times`` the
    zarrox read-all measured beside it; ``encode`` the compression floor and ``write`` the
    zarrox write-all beside it."""

    floor: brw.Case = field(default_factory=lambda: brw.Case("zarrox", FLOOR))
    read: brw.Case = field(default_factory=lambda: brw.Case("zarrox", "read"))
    encode: brw.Case = field(default_factory=lambda: brw.Case("zarrox", "encode floor"))
    write: brw.Case = field(default_factory=lambda: brw.Case("zarrox", "write"))
    decoded_nbytes: int = 0
    encoded_nbytes: int = 0
    threads: int = 0

    def describe(self) -> str:
        f, r = self.floor, self.read
        if f.error is not None:
            return f"decode floor: FAILED  {f.error}"
        return (
            f"decode floor: {f.calls} stored chunks, {self.decoded_nbytes / brw.MIB:.1f} MiB"
            f" decoded on {self.threads} threads in {f.median * 1e3:.1f} ms (min"
            f" {min(f.times) * 1e3:.1f}); zarrox read-all in the same workers"
            f" {r.median * 1e3:.1f} ms (min {min(r.times) * 1e3:.1f}):"
            f" read-all / floor {r.median / f.median:.2f}x\n"
            f"compression floor: the same chunks encoded again on {self.threads} threads"
            f" ({self.encoded_nbytes / brw.MIB:.1f} MiB) in {self.encode.median * 1e3:.1f} ms"
            f" (min {min(self.encode.times) * 1e3:.1f}); zarrox write-all in the same workers"
            f" {self.write.median * 1e3:.1f} ms (min {min(self.write.times) * 1e3:.1f}):"
            f" write-all / floor {self.write.median / self.encode.median:.2f}x"
        )


def measure_floor(ds: brw.Dataset, rounds: int, repeat: int) -> Floor:
    result = Floor()

    def run_one(case: brw.Case) -> None:
        argv = ["--worker", FLOOR, "--src", str(ds.source), "--dataset", str(ds.reference)]
        argv += ["--out-dir", str(ds.work / "written-floor"), *brw.layout_argv(ds.layout)]
        res = brw.spawn_worker(__file__, [*argv, "--repeat", str(repeat)])
        case.merge(res)
        result.read.times.extend(res["read_times"])
        result.write.times.extend(res["write_times"])
        result.encode.times.extend(res["encode_times"])
        result.decoded_nbytes, result.threads = res["decoded_nbytes"], res["threads"]
        result.encoded_nbytes = res["encoded_nbytes"]

    brw.run_rounds({(FLOOR, "zarrox"): result.floor}, [FLOOR], ["zarrox"], rounds, run_one)
    result.read.error = result.write.error = result.encode.error = result.floor.error
    return result


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    dataset: str
    what: str
    limit: float
    value: float | None
    detail: str

    @property
    def status(self) -> str:
        if self.value is None:
            return "n/a"
        return "met" if self.value <= self.limit else "not met"

    def cells(self) -> list[str]:
        value = "-" if self.value is None else f"{self.value:.2f}x"
        return [self.dataset, self.what, f"{self.limit:.2f}x", value, self.status, self.detail]


@dataclass
class DatasetResult:
    codec: str
    nbytes: int
    rw: list[brw.Case]
    indexing: list[brw.Case]
    floor: Floor | None

    def case(self, op: str, impl: str) -> brw.Case | None:
        return next((c for c in self.rw if c.op == op and c.impl == impl), None)

    def failures(self) -> list[str]:
        lines = brw.failure_lines(self.rw) + bi.failures(self.indexing)
        if self.floor is not None:
            lines += brw.failure_lines([self.floor.floor])
        return lines


def _ok(c: brw.Case | None) -> bool:
    return c is not None and c.error is None and bool(c.times)


def time_target(
    r: DatasetResult, what: str, limit: float, op: str, impl: str, rivals: Sequence[str]
) -> Target:
    """``impl``'s median time for ``op`` over the fastest of ``rivals`` (those measured)."""
    mine = r.case(op, impl)
    others = [c for c in (r.case(op, i) for i in rivals) if _ok(c)]
    missing = [brw.IMPLS[i] for i in rivals if not _ok(r.case(op, i))]
    if mine is None or not _ok(mine) or not others:
        need = ([] if _ok(mine) else [brw.IMPLS[impl]]) + missing
        return Target(r.codec, what, limit, None, "not run or failed: " + ", ".join(need))
    best = min(others, key=lambda c: c.median)
    detail = (
        f"{brw.IMPLS[impl]} {mine.median * 1e3:.1f} ms,"
        f" {brw.IMPLS[best.impl]} {best.median * 1e3:.1f} ms"
    )
    if missing:
        detail += " (not run or failed: " + ", ".join(missing) + ")"
    return Target(r.codec, what, limit, mine.median / best.median, detail)


def targets(r: DatasetResult) -> list[Target]:
    """The project's performance targets for one dataset (time ratios: lower is better)."""
    zx, pipe = brw.IMPLS["zarrox"], brw.IMPLS["pipeline"]
    rivals_here = [i for i in RIVALS if i in brw.IMPLS]
    rivals = ", ".join(brw.IMPLS[i] for i in rivals_here)
    out = [
        time_target(
            r, f"read-all: {zx} / min({rivals})", LIMITS["read"], "read", "zarrox", rivals_here
        ),
        time_target(
            r, f"write-all: {zx} / min({rivals})", LIMITS["write"], "write", "zarrox", rivals_here
        ),
        time_target(
            r,
            f"read-chunks: {zx} / tensorstore",
            LIMITS["read-chunks"],
            "read-chunks",
            "zarrox",
            ["tensorstore"],
        ),
    ]
    # the pipeline's peers: zarrs-python and, on zarr-python >= 3.3, its FusedCodecPipeline
    peers = [i for i in PIPELINE_PEERS if i in brw.IMPLS]
    for op, name in (("read", "read-all"), ("read-chunks", "read-chunks"), ("write", "write-all")):
        names = [brw.IMPLS[i] for i in peers]
        what = f"{name}: {pipe} / " + (names[0] if len(names) == 1 else f"min({', '.join(names)})")
        out.append(time_target(r, what, LIMITS["pipeline"], op, "pipeline", peers))
    read = r.case("read", "zarrox")
    what = f"read-all: {zx} peak RSS growth / bytes read"
    if _ok(read) and read is not None and read.rss_delta is not None:
        detail = f"+{read.rss_delta / brw.MIB:.1f} MiB for {r.nbytes / brw.MIB:.1f} MiB read"
        out.append(Target(r.codec, what, LIMITS["rss"], read.rss_delta / r.nbytes, detail))
    else:
        out.append(Target(r.codec, what, LIMITS["rss"], None, f"not run or failed: {zx} read"))
    what = f"read-all: {zx} / decode floor (same workers)"
    fl = r.floor
    if fl is not None and _ok(fl.floor) and fl.read.times:
        detail = (
            f"read-all {fl.read.median * 1e3:.1f} ms, floor {fl.floor.median * 1e3:.1f} ms"
            f" ({fl.floor.calls} chunks, {fl.threads} threads)"
        )
        ratio = fl.read.median / fl.floor.median
        out.append(Target(r.codec, what, LIMITS["decode floor"], ratio, detail))
    else:
        out.append(
            Target(r.codec, what, LIMITS["decode floor"], None, f"not run: {zx} decode floor")
        )
    what = f"write-all: {zx} / compression floor (same workers)"
    limit = LIMITS["compression floor"]
    if fl is not None and _ok(fl.encode) and fl.write.times:
        detail = (
            f"write-all {fl.write.median * 1e3:.1f} ms, floor {fl.encode.median * 1e3:.1f} ms"
            f" ({fl.threads} threads)"
        )
        out.append(Target(r.codec, what, limit, fl.write.median / fl.encode.median, detail))
    else:
        out.append(Target(r.codec, what, limit, None, f"not run: {zx} compression floor"))
    return out


def format_targets(found: Sequence[Target], markdown: bool = False) -> str:
    columns = [
        brw.Column("dataset", 9, left=True),
        brw.Column("target (ratio, lower is better)", 62, left=True),
        brw.Column("limit", 8),
        brw.Column("measured", 10),
        brw.Column("status", 9, left=True),
        brw.Column("detail", 0, left=True),
    ]
    counts = {s: sum(t.status == s for t in found) for s in ("met", "not met", "n/a")}
    notes = ["targets: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    return brw.render_table(columns, [t.cells() for t in found], notes, markdown)


# --------------------------------------------------------------------------- report


class Report:
    """Prints the text report as it goes and keeps its Markdown twin for ``--markdown``."""

    def __init__(self) -> None:
        self.md: list[str] = []

    def heading(self, title: str, level: int = 2) -> None:
        print(f"\n{'==' if level <= 2 else '--'} {title}")
        self.md.append(f"{'#' * level} {title}")

    def line(self, text: str) -> None:
        print(text)
        self.md.append(text)

    def pre(self, text: str) -> None:
        print(text)
        self.md.append(f"```\n{text}\n```")

    def table(self, text: str, markdown: str) -> None:
        print(text, flush=True)
        self.md.append(markdown)

    def write(self, path: Path) -> None:
        path.write_text("\n\n".join(self.md) + "\n")


def run_dataset(
    report: Report, args: argparse.Namespace, work: Path, codec: str, impls: list[str]
) -> DatasetResult:
    shape = brw.parse_shape(args.size, 3)
    ds = brw.make_dataset(work / codec, shape, brw.make_layout(codec), args.seed)
    report.heading(f"dataset {codec}")
    report.line(ds.describe())
    print(f"dataset {codec}: measuring", file=sys.stderr, flush=True)
    rw = brw.measure(ds, impls, brw.OPS, args.rounds, args.repeat)
    indexing: list[brw.Case] = []
    if codec in INDEXING_CODECS:
        indexing = bi.measure(
            ds, impls, list(bi.OPS), args.rounds, args.repeat, args.sample_s, args.seed
        )
    floor = measure_floor(ds, args.rounds, args.repeat) if "zarrox" in impls else None
    result = DatasetResult(codec, ds.src.nbytes, rw, indexing, floor)

    report.heading(f"{codec}: read-all, read-chunks, write-all", 3)
    report.table(brw.format_table(rw, ds.src.nbytes), brw.format_table(rw, ds.src.nbytes, True))
    report.heading(f"{codec}: indexing", 3)
    if indexing:
        report.pre(bi.selections_text(shape, ds.layout, list(bi.OPS), args.seed))
        report.table(bi.format_table(indexing), bi.format_table(indexing, True))
    else:
        report.line(
            "not run on this dataset: the indexing cases run on the "
            + " and ".join(INDEXING_CODECS)
            + " datasets only"
        )
    report.heading(f"{codec}: decode floor", 3)
    report.line(floor.describe() if floor else "decode floor: not run (zarrox not selected)")
    for line in result.failures():
        report.line(line)
    if not args.keep:  # the next dataset needs the disk space more
        shutil.rmtree(ds.work, ignore_errors=True)
    return result


def run_s3_part(report: Report, args: argparse.Namespace, impls: list[str]) -> list[str]:
    """``bench_s3.py`` on its datasets (its defaults, or its quick settings with ``--quick``),
    the same implementations; returns its failure lines."""
    settings = bench_s3.QUICK if args.quick else bench_s3.DEFAULTS
    s3_args = argparse.Namespace(
        size=args.s3_size or settings["size"],
        codecs=",".join(bench_s3.CODECS),
        impls=",".join(impls),
        ops=",".join(bench_s3.OPS),
        repeat=settings["repeat"],
        rounds=settings["rounds"],
        seed=args.seed,
        latency_ms=args.s3_latency_ms,
        chunk_calls=settings["chunk_calls"] if args.s3_chunk_calls is None else args.s3_chunk_calls,
    )
    report.heading("S3: moto behind a latency proxy (bench_s3.py)")
    print("S3 part: starting moto and the latency proxy", file=sys.stderr, flush=True)
    with brw.scratch_dir(args) as work:
        return bench_s3.run_s3(s3_args, work, report.pre)


def run_suite(args: argparse.Namespace) -> int:
    codecs = brw.parse_choices(args.codecs, brw.CODECS, "codec")
    impls = brw.parse_choices(args.impls, tuple(brw.IMPLS), "implementation")
    brw.set_worker_cpus(args.cpus)
    report = Report()
    report.heading("zarrox benchmark suite", 1)
    report.line(brw.host_line())
    report.line(
        f"datasets: {', '.join(codecs)}; size {args.size} uint16, 32^3 chunks (sharded:"
        f" 128^3 shards); implementations: {', '.join(brw.IMPLS[i] for i in impls)}"
    )
    report.pre(
        brw.method_text(args.rounds, args.repeat)
        + "\nindexing (zstd and sharded datasets only): "
        + bi.method_text(args.rounds, args.repeat, args.sample_s).removeprefix("method: ")
        + "\ndecode floor: zarrox fetches and decodes every stored chunk on all threads, output"
        " discarded; timed\n  interleaved with zarrox read-all (opened once) in the same"
        f" {args.rounds} fresh worker(s), {args.repeat} repeats each; medians."
        + "\ncompression floor: zarrox encodes every chunk (inner chunk) of the reference copy"
        " again on all threads,\n  nothing stored; timed interleaved with zarrox write-all in"
        " the same workers."
    )
    results: list[DatasetResult] = []
    with brw.scratch_dir(args) as work:
        for codec in codecs:
            results.append(run_dataset(report, args, work, codec, impls))
    found = [t for r in results for t in targets(r)]
    report.heading("targets")
    report.table(format_targets(found), format_targets(found, markdown=True))
    failed = [line for r in results for line in r.failures()]
    if args.s3:
        failed += run_s3_part(report, args, impls)
    report.line(f"failed cases: {len(failed)}" + "".join(f"\n  {f}" for f in failed))
    if args.markdown:
        report.write(Path(args.markdown))
        print(f"wrote {args.markdown}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default=None, help="edge N (N^3) or Z,Y,X; default 256")
    p.add_argument("--rounds", type=int, default=None, help="fresh workers per case; default 3")
    p.add_argument("--repeat", type=int, default=None, help="timed repeats per worker; default 5")
    p.add_argument("--sample-s", type=float, default=None, help="indexing sample seconds; 0.2")
    p.add_argument(
        "--codecs",
        default=",".join(brw.DEFAULT_CODECS),
        help=f"comma list of datasets, of {','.join(brw.CODECS)}",
    )
    p.add_argument("--impls", default=",".join(brw.IMPLS), help="comma list of implementations")
    p.add_argument("--markdown", default=None, help="also write the report as Markdown here")
    p.add_argument("--tmpdir", default=None, help="parent of the scratch directory")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="smoke run: size 64, 1 round, 1 repeat")
    p.add_argument(
        "--cpus", type=int, default=None, help="pin workers to the first N CPUs; default all"
    )
    p.add_argument(
        "--s3", action="store_true", help="also run the S3 benchmark (bench_s3.py; moto, latency)"
    )
    p.add_argument("--s3-size", default=None, help="S3 dataset size; default 256,512,512")
    bench_s3.add_s3_args(p, "s3-")
    # floor worker mode (internal)
    p.add_argument("--worker", choices=(FLOOR,), help=argparse.SUPPRESS)
    p.add_argument("--src", help=argparse.SUPPRESS)
    p.add_argument("--dataset", help=argparse.SUPPRESS)
    p.add_argument("--out-dir", help=argparse.SUPPRESS)
    p.add_argument("--codec", default="zstd", help=argparse.SUPPRESS)
    p.add_argument("--chunks", default=None, help=argparse.SUPPRESS)
    p.add_argument("--shards", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.repeat < 1 or args.rounds < 1 or args.sample_s <= 0:
        p.error("--repeat and --rounds must be >= 1, --sample-s > 0")
    return brw.dispatch(args, run_floor_worker, run_suite)


if __name__ == "__main__":
    sys.exit(main())
