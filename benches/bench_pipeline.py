"""zarr-python with zarrox as its codec pipeline, against zarr-python with the zarrs pipeline
and zarr-python alone: read-all, read-chunks, write-all.

The same zarr-python calls (``zarr.create_array`` / ``zarr.open_array`` / ``a[...]``) run with
three codec pipelines, selected by configuration only:

* ``pipeline``: ``codec_pipeline.path = zarrox.ZarroxCodecPipeline`` (strict: no fallback);
* ``zarrs``: ``codec_pipeline.path = zarrs.ZarrsCodecPipeline`` (strict);
* ``zarr``: zarr-python's own ``BatchedCodecPipeline``;

and optionally ``zarrox``, zarrox's own API, for reference. Dataset, layouts, workers,
scheduling and verification are those of ``bench_read_write.py`` (imported from it): each case
runs in fresh worker processes, round-robin, every read is compared with the source and every
written copy is read back and its codec chain checked.

    .venv/bin/python benches/bench_pipeline.py [--codec zstd|raw|blosc|sharded] [--size 256]
        [--chunks 64] [--repeat 5] [--rounds 3] [--impls pipeline,zarrs,zarr]
        [--ops read,read-chunks,write]

Ratios are time ratios against zarr-python + zarrox (``t/pipeline``, > 1 = slower than it)
and the speed-up of zarrox's pipeline over each (``pipeline speed-up``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_read_write as brw  # noqa: E402

PIPELINE = "pipeline"
brw.IMPLS[PIPELINE] = "zarr-python+zarrox"
DEFAULT_IMPLS = (PIPELINE, "zarrs", "zarr")
_make_impl = brw.make_impl


def make_impl(impl: str, layout: brw.Layout) -> brw.Impl:
    """``bench_read_write.make_impl`` plus zarr-python with zarrox's codec pipeline."""
    if impl != PIPELINE:
        return _make_impl(impl, layout)
    import zarr

    zarr.config.set(
        {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    )
    plain = _make_impl("zarr", layout)  # the same zarr-python calls, now on zarrox's pipeline

    def opened(path: Path) -> Any:
        a = plain.open(path)
        kind = type(a._async_array.codec_pipeline).__name__
        if kind != "ZarroxCodecPipeline":
            raise AssertionError(f"zarr-python runs {kind}, not zarrox's pipeline")
        return a

    return brw.Impl(open=opened, get=plain.get, vget=plain.vget, write=plain.write)


brw.make_impl = make_impl  # the shared worker and reference writer use this one


def format_table(cases: list[brw.Case], nbytes: int) -> str:
    head = (
        f"{'op':<12}{'implementation':<21}{'median ms':>10}{'min ms':>9}{'MB/s':>8}"
        f"{'us/call':>9}{'t/pipeline':>12}{'speed-up vs zarr':>18}"
    )
    rows = [head, "-" * len(head)]
    for op in brw.OPS:
        op_cases = [c for c in cases if c.op == op]
        ok = {c.impl: c for c in op_cases if c.error is None and c.times}
        ref, plain = ok.get(PIPELINE), ok.get("zarr")
        for c in op_cases:
            name = brw.IMPLS[c.impl]
            if c.error is not None:
                rows.append(f"{op:<12}{name:<21}FAILED  {c.error[:90]}")
                continue
            ratio = f"{c.median / ref.median:.2f}x" if ref else "n/a"
            speedup = f"{plain.median / c.median:.2f}x" if plain else "n/a"
            per_call = f"{c.median / c.calls * 1e6:.0f}" if (c.calls or 1) > 1 else "-"
            rows.append(
                f"{op:<12}{name:<21}{c.median * 1e3:>10.1f}{min(c.times) * 1e3:>9.1f}"
                f"{nbytes / brw.MB / c.median:>8.0f}{per_call:>9}{ratio:>12}{speedup:>18}"
            )
    rows.append(
        "t/pipeline = median time / zarr-python+zarrox's (>1: slower than it); speed-up vs zarr"
        " = zarr-python alone's median / this row's (>1: faster than zarr-python alone)"
    )
    return "\n".join(rows)


def run_driver(args: argparse.Namespace) -> int:
    shape = brw.parse_shape(args.size, 3)
    layout = brw.layout_from_args(args)
    impls = brw.parse_choices(args.impls, tuple(brw.IMPLS), "implementation")
    ops = brw.parse_choices(args.ops, brw.OPS, "op")
    with brw.scratch_dir(args) as work:
        src, dataset_line = brw.write_reference(work, shape, layout, args.seed)
        print(dataset_line)
        print(brw.host_line())
        n_chunks = len(brw.chunk_selections(shape, layout.chunks))
        print(
            f"method: as bench_read_write.py ({args.rounds} fresh workers per case, round-robin,"
            f" {args.repeat} timed repeats each, median of all samples; warm page cache);\n"
            "  every implementation runs the same zarr-python calls, only the codec pipeline"
            " differs;\n"
            f"  read = a[...]; read-chunks = {n_chunks} calls a[z0:z1, y0:y1, x0:x1];"
            " write = create + a[...] = data.",
            flush=True,
        )

        def run_one(case: brw.Case) -> None:
            argv = [
                "--worker",
                case.impl,
                "--op",
                case.op,
                "--src",
                str(work / "source.npy"),
                "--dataset",
                str(work / "reference.zarr"),
                "--out-dir",
                str(work / f"written-{case.impl}"),
                "--repeat",
                str(args.repeat),
                *brw.layout_argv(layout),
            ]
            res = brw.spawn_worker(__file__, argv)
            case.merge(res)
            if case.op == "write":
                case.stored_bytes = res["stored_bytes"]
                try:  # every copy must read back identically with zarrox's own API
                    zx = brw.make_impl("zarrox", layout)
                    brw.check_equal(zx.read(Path(res["copy"])), src, f"zarrox reading {case.impl}")
                except Exception as e:  # report, keep going
                    case.error = f"its written copy fails the zarrox check: {type(e).__name__}: {e}"

        cases = {(op, impl): brw.Case(impl, op) for op in ops for impl in impls}
        brw.run_rounds(cases, ops, impls, args.rounds, run_one)
        print(flush=True)
        print(format_table(list(cases.values()), src.nbytes))
        failed = [c for c in cases.values() if c.error]
        for c in failed:
            print(f"FAILED {c.op} {brw.IMPLS[c.impl]}: {c.error}")
        return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    brw.add_common_args(
        p, brw.OPS, "chunk edge or Z,Y,X (inner chunks when sharded); default 64, 32"
    )
    p.set_defaults(impls=",".join(DEFAULT_IMPLS))
    p.add_argument("--codec", choices=brw.CODECS, default="zstd")
    p.add_argument(
        "--shards", default=None, help="shard edge or Z,Y,X for --codec sharded; default 128"
    )
    p.add_argument("--out-dir", help=argparse.SUPPRESS)  # worker mode (internal)
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rounds < 1:
        p.error("--repeat and --rounds must be >= 1")
    if args.worker:
        print(brw.RESULT_TAG + json.dumps(brw.run_worker(args)), flush=True)
        return 0
    return run_driver(args)


if __name__ == "__main__":
    sys.exit(main())
