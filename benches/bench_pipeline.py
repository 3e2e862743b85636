"""zarr-python with zarrox as its codec pipeline, against zarr-python with the zarrs pipeline
and zarr-python alone: read-all, read-chunks, write-all.

The same zarr-python calls (``zarr.create_array`` / ``zarr.open_array`` / ``a[...]``) run with
three codec pipelines, selected by configuration only:

* ``pipeline``: ``codec_pipeline.path = zarrox.ZarroxCodecPipeline`` (strict: no fallback);
* ``zarrs``: ``codec_pipeline.path = zarrs.ZarrsCodecPipeline`` (strict);
* ``zarr``: zarr-python's own ``BatchedCodecPipeline``;

and optionally ``zarrox``, zarrox's own API, for reference. The implementations, dataset,
layouts, workers, scheduling and verification are those of ``bench_read_write.py`` (this
script only picks the implementations and prints its own table); ``run_all.py`` runs the
same cases as part of the whole suite.

    .venv/bin/python benches/bench_pipeline.py [--codec zstd|raw|blosc|sharded] [--size 256]
        [--chunks 32] [--repeat 5] [--rounds 3] [--impls pipeline,zarrs,zarr]
        [--ops read,read-chunks,write]

Ratios are time ratios against zarr-python + zarrox (``t/pipeline``, > 1 = slower than it)
and the speed-up of each over zarr-python alone (``speed-up vs zarr``).
"""

from __future__ import annotations

import argparse
import sys

import bench_read_write as brw

PIPELINE = "pipeline"
DEFAULT_IMPLS = (PIPELINE, "zarrs", "zarr")


def format_table(cases: list[brw.Case], nbytes: int) -> str:
    columns = [
        brw.Column("op", 12, left=True),
        brw.Column("implementation", 21, left=True),
        brw.Column("median ms", 10),
        brw.Column("min ms", 9),
        brw.Column("MB/s", 8),
        brw.Column("us/call", 9),
        brw.Column("t/pipeline", 12),
        brw.Column("speed-up vs zarr", 18),
    ]
    rows: list[list[str]] = []
    for op in brw.OPS:
        op_cases = [c for c in cases if c.op == op]
        ok = {c.impl: c for c in op_cases if c.error is None and c.times}
        ref, plain = ok.get(PIPELINE), ok.get("zarr")
        for c in op_cases:
            name = brw.IMPLS[c.impl]
            if c.error is not None:
                rows.append([op, name, f"FAILED  {c.error[:90]}"])
                continue
            per_call = f"{c.median / c.calls * 1e6:.0f}" if (c.calls or 1) > 1 else "-"
            rows.append(
                [
                    op,
                    name,
                    f"{c.median * 1e3:.1f}",
                    f"{min(c.times) * 1e3:.1f}",
                    f"{nbytes / brw.MB / c.median:.0f}",
                    per_call,
                    f"{c.median / ref.median:.2f}x" if ref else "n/a",
                    f"{plain.median / c.median:.2f}x" if plain else "n/a",
                ]
            )
    notes = [
        "t/pipeline = median time / zarr-python+zarrox's (>1: slower than it); speed-up vs zarr"
        " = zarr-python alone's median / this row's (>1: faster than zarr-python alone)"
    ]
    return brw.render_table(columns, rows, notes)


def run_driver(args: argparse.Namespace) -> int:
    with brw.driver_setup(args, brw.OPS) as (ds, impls, ops):
        print(brw.method_text(args.rounds, args.repeat))
        print(
            "  zarr-python+zarrox, zarr-python+zarrs and zarr-python run the same zarr-python"
            " calls; only the codec pipeline differs.",
            flush=True,
        )
        cases = brw.measure(ds, impls, ops, args.rounds, args.repeat)
        return brw.finish(format_table(cases, ds.src.nbytes), brw.failure_lines(cases))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    brw.add_common_args(p, brw.OPS)
    p.set_defaults(impls=",".join(DEFAULT_IMPLS))
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rounds < 1:
        p.error("--repeat and --rounds must be >= 1")
    return run_driver(args)


if __name__ == "__main__":
    sys.exit(main())
