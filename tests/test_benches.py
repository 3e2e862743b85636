"""The benchmark suite (``benches/``): a smoke run of ``run_all.py`` and its verification."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

import bench_read_write as brw  # noqa: E402
from conftest import ZARR_VERSION  # noqa: E402

DATASETS = ("zstd", "sharded")
#: the pipeline's peers: zarrs-python, and zarr-python's FusedCodecPipeline from zarr 3.3 on
PIPELINE_PEERS = (
    "min(zarr-python+zarrs, zarr-python fused)" if ZARR_VERSION >= (3, 3) else "zarr-python+zarrs"
)
#: zarrox's rivals: tensorstore, zarrs-python and (zarr >= 3.3) FusedCodecPipeline
RIVALS = (
    "min(tensorstore, zarr-python+zarrs, zarr-python fused)"
    if ZARR_VERSION >= (3, 3)
    else "min(tensorstore, zarr-python+zarrs)"
)
TARGETS = (
    f"read-all: zarrox / {RIVALS}",
    f"write-all: zarrox / {RIVALS}",
    "read-chunks: zarrox / tensorstore",
    *(
        f"{op}: zarr-python+zarrox / {PIPELINE_PEERS}"
        for op in ("read-all", "read-chunks", "write-all")
    ),
    "read-all: zarrox peak RSS growth / bytes read",
    "read-all: zarrox / decode floor (same workers)",
    "write-all: zarrox / compression floor (same workers)",
)


def run_bench(script: str, *argv: str) -> tuple[str, str]:
    """Run ``benches/<script>`` with ``argv``; (its stdout, the tail of its output for
    assertion messages), after checking that it exited 0 with no failed case."""
    proc = subprocess.run(
        [sys.executable, str(BENCHES / script), *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    context = out[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, context
    assert "failed cases: 0" in out, context
    return out, context


def test_run_all_quick_smoke(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    pytest.importorskip("tensorstore")
    md = tmp_path / "report.md"
    out, context = run_bench(
        "run_all.py",
        "--quick",
        "--size",
        "32",
        "--codecs",
        ",".join(DATASETS),
        "--impls",
        "zarrox,pipeline,tensorstore",
        "--markdown",
        str(md),
        "--tmpdir",
        str(tmp_path),
    )
    for codec in DATASETS:
        assert f"== dataset {codec}" in out, context
        assert f"-- {codec}: indexing" in out, context
    assert "decode floor: 1 stored chunks" in out, context
    assert "compression floor: the same chunks encoded again" in out, context
    summary = out[out.index("== targets") :]
    lines = summary.splitlines()
    for codec in DATASETS:
        for target in TARGETS:
            (line,) = [ln for ln in lines if ln.startswith(f"{codec:<9}{target} ")]
            found = re.search(r" (\d+\.\d\dx|-)  (met|not met|n/a) ", line)
            assert found, line
            # the pipeline's peers were not selected: the targets relative to them cannot be
            # evaluated
            if target.endswith(f"/ {PIPELINE_PEERS}"):
                assert found.groups() == ("-", "n/a"), line
            else:
                assert found[2] in ("met", "not met"), line
    assert any(ln.startswith("targets: ") and ln.endswith(" n/a") for ln in lines)
    text = md.read_text()
    assert "## targets" in text and "| dataset | target" in text
    # the scratch directory is removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


@pytest.mark.parametrize("shape", [(5, 7, 9), (3, 40), (200,), (2, 3, 4, 50), (1, 1, 1)])
@pytest.mark.parametrize("limit", [1, 16, 64, 10_000])
def test_blocks_tile_the_array_once_and_stay_small(shape: tuple[int, ...], limit: int) -> None:
    seen = np.zeros(shape, dtype=np.int64)
    for sel in brw.blocks(shape, limit):
        block = seen[sel]
        assert 1 <= block.size <= limit
        block += 1
    assert (seen == 1).all()


def test_check_equal_reports_the_first_difference() -> None:
    want = np.arange(4 * 300 * 300, dtype=np.uint16).reshape(4, 300, 300)
    brw.check_equal(want.copy(), want, "same")
    brw.check_equal(want[1:3, ::2, 5:], want[1:3, ::2, 5:], "views")
    brw.check_equal(np.uint16(7), np.asarray(7, dtype=np.uint16), "0-d")
    got = want.copy()
    got[2, 290, 17] += 1
    got[3, 0, 0] += 1
    with pytest.raises(AssertionError, match=r"first at \(2, 290, 17\)"):
        brw.check_equal(got, want, "one off")
    with pytest.raises(AssertionError, match="got int32"):
        brw.check_equal(want.astype(np.int32), want, "dtype")


def test_bench_s3_quick_smoke(tmp_path: Path) -> None:
    """bench_s3.py against moto behind the latency proxy: every case runs and is verified,
    the ceiling and the ratios are printed, and zarrox's own API either runs or says why not."""
    pytest.importorskip("moto.server")
    pytest.importorskip("obstore")
    pytest.importorskip("tensorstore")
    md = tmp_path / "s3.md"
    out, context = run_bench(
        "bench_s3.py",
        "--quick",
        "--size",
        "32",
        "--codecs",
        "sharded",
        "--impls",
        "zarrox,pipeline,zarr,tensorstore",
        "--markdown",
        str(md),
        "--tmpdir",
        str(tmp_path),
    )
    assert "== S3 dataset sharded" in out, context
    for op in ("GET", "PUT"):
        for via in ("moto directly", "through the latency proxy"):
            assert re.search(rf"  {op} +{via} +\d+ requests/s", out), context
    lines = out.splitlines()
    zarrox_ran = not any(ln.startswith("zarrox (own API, s3:// URLs): not run: ") for ln in lines)
    for op in ("read", "read-chunks", "write"):
        for impl in ("zarr-python+zarrox", "zarr-python", "tensorstore"):
            assert any(re.match(rf"{op} +{re.escape(impl)} +\d", ln) for ln in lines), context
        (ratios,) = [ln for ln in lines if re.match(rf"{op} +\d+\.\d\dx", ln)]
        cells = ratios.split()[1:]
        # pipeline/tensorstore and pipeline/zarr-python measured; zarrs was not selected
        assert cells[0] != "n/a" and cells[1] != "n/a" and cells[2] == "n/a", ratios
        assert (cells[3] != "n/a") == zarrox_ran, ratios
    assert "moto busy" in out and md.read_text().startswith("```")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s3.md"]


def test_workers_run_on_the_cpus_asked_for(tmp_path: Path) -> None:
    """``--cpus N`` pins each worker to the first N CPUs before it starts, and zarrox's pool
    in the worker takes its size from them."""
    import os

    script = tmp_path / "worker.py"
    script.write_text(
        "import json, os, zarrox\n"
        f"print({brw.RESULT_TAG!r} + json.dumps({{'cpus': sorted(os.sched_getaffinity(0)),"
        " 'threads': zarrox.get_num_threads()}))\n"
    )
    allowed = sorted(os.sched_getaffinity(0))
    try:
        assert brw.set_worker_cpus(1) == allowed[:1]
        assert brw.spawn_worker(str(script), []) == {"cpus": allowed[:1], "threads": 1}
        assert "pinned" in brw.host_line()
        assert brw.set_worker_cpus(None) is None
        assert brw.spawn_worker(str(script), [])["cpus"] == allowed
        with pytest.raises(ValueError, match="may use"):
            brw.set_worker_cpus(len(allowed) + 1)
    finally:
        brw.set_worker_cpus(None)


def test_bench_tensorstore_views_smoke(tmp_path: Path) -> None:
    """bench_tensorstore_views.py on the zarrox under test: every case runs, reads checked."""
    out, context = run_bench(
        "bench_tensorstore_views.py", "--data", str(tmp_path), "--repeat", "1", "--inner", "1"
    )
    assert "composing an index array (x100)" in out, context


def test_bench_scaling_smoke(tmp_path: Path) -> None:
    """bench_scaling.py: a table per CPU count and the scaling table, every case verified."""
    pytest.importorskip("zarrs")
    out, context = run_bench(
        "bench_scaling.py",
        *("--size", "16", "--cpu-counts", "1", "--impls", "zarrox,zarrs"),
        *("--rounds", "1", "--repeat", "1", "--tmpdir", str(tmp_path)),
    )
    assert "== workers on 1 CPUs (workers pinned to" in out, context
    table = out.split("== scaling", 1)[1]
    for op in ("read", "write"):
        assert re.search(rf"^{op}\s+zarrox\s+[\d.]+\s+1\.00x", table, re.M), context
        assert re.search(rf"^{op}\s+zarrox / best other\s+[\d.]+x", table, re.M), context


def test_bench_cache_quick_smoke() -> None:
    """bench_cache.py: every section runs (moto without added latency, small arrays), every
    read is checked in the workers, the tables and ratios are printed. The ``zarrox today``
    worker runs this very build (``--before``), so its subprocess path is exercised too."""
    pytest.importorskip("moto.server")
    pytest.importorskip("tensorstore")
    import zarrox

    this_build = str(Path(zarrox.__file__).resolve().parent.parent)
    out, context = run_bench("bench_cache.py", "--quick", "--repeat", "2", "--before", this_build)
    for section in ("== window:", "== compare:", "== s3:"):
        assert section in out, context
    lines = out.splitlines()
    for impl, passes in (
        ("zarrox", ("first pass", "second pass", "third pass, recheck true")),
        ("zarrox today", ("first pass", "second pass")),
        ("tensorstore, no cache pool", ("first pass", "second pass")),
        ("tensorstore, cache pool", ("first pass", "second pass", "third pass, recheck true")),
    ):
        for name in passes:
            row = rf"{re.escape(impl)} +{name} +\d+\.\d{{3}} +\d+ +\d+$"
            assert any(re.match(row, ln) for ln in lines), (impl, name, context)
    ratio = r"(\d+\.\d\dx|\d+x)"
    for other in ("zarrox today", "tensorstore, cache pool", "tensorstore, no cache pool"):
        (line,) = [ln for ln in lines if ln.startswith(f"zarrox / {other} ")]
        assert re.search(rf" {ratio} +{ratio} ", line), line
    assert sum(ln.startswith("second pass speedup") for ln in lines) == 4, context
    for impl in ('zarrox, cache, recheck "open"', "zarrox, no cache", "tensorstore, cache pool"):
        assert any(ln.startswith(impl) and re.search(r"first pass +\d", ln) for ln in lines)
    assert sum(bool(re.search(rf" / .* {ratio}$", ln)) for ln in lines) >= 5, context
    assert "plain, cached, recheck true" in out, context


def test_bench_startup_smoke(tmp_path: Path) -> None:
    """bench_startup.py runs every case as a process (one repetition) and reports each with
    its ratio to ``import numpy`` and the targets; what it cannot import it skips."""
    report = tmp_path / "startup.md"
    proc = subprocess.run(
        [sys.executable, str(BENCHES / "bench_startup.py"), "--repeat", "1", "--markdown", report],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert report.read_text() == out
    for case in ("import numpy", "import zarrox", "zarrox --help", "zarrox info PATH"):
        row = re.search(
            rf"^\| {re.escape(case)} \| (\d+) \| (\d+) \| ([0-9.]+)x \| ([-+]\d+) \|$", out, re.M
        )
        assert row is not None, (case, out)
    for optional in ("import tensorstore", "import zarrista"):
        assert re.search(rf"^\| {optional} \| (\d+|skipped: .+) \|", out, re.M), (optional, out)
    for case in ("import zarrox", "zarrox --help", "zarrox info PATH"):
        assert re.search(
            rf"^- {case} - import numpy: [-+]\d+ ms \(limit \+\d+ ms\): (met|not met)$", out, re.M
        ), out
    assert "FAILED" not in out


def test_bench_async_latency_quick_smoke(tmp_path: Path) -> None:
    """bench_async_latency.py starts its own latency server, runs every implementation on
    the same reads (each result checked) and reports medians and the issue's targets."""
    pytest.importorskip("aiohttp")
    pytest.importorskip("tensorstore")
    md = tmp_path / "async.md"
    out, context = run_bench("bench_async_latency.py", "--quick", "--markdown", str(md))
    for impl in ("zarrox-await", "zarrox-to-thread", "zarrox-threads", "tensorstore"):
        assert re.search(rf"^\| {impl} \| \d+\.\d{{3}} \|", out, re.M), context
    assert re.search(r"zarrox-await / tensorstore: \d+\.\d\dx", out), context
    assert re.search(r"zarrox-await / zarrox-threads \(64 threads\): \d+\.\d\dx", out), context
    assert md.read_text() in out


def test_bench_batch_reads_quick_smoke(tmp_path: Path) -> None:
    """bench_batch_reads.py starts moto behind its latency proxy, reads one time step of
    every variable with each implementation (each result checked), and reports medians,
    the requests the proxy saw and the issue's targets, for both layouts."""
    pytest.importorskip("moto.server")
    pytest.importorskip("obstore")
    pytest.importorskip("tensorstore")
    md = tmp_path / "batch.md"
    out, context = run_bench("bench_batch_reads.py", "--quick", "--markdown", str(md))
    for layout in ("chunked", "sharded"):
        assert f"### {layout}: one time step of 4 variables" in out, context
        for impl in ("zarrox-read-many", "zarrox-loop", "tensorstore-batch", "tensorstore-loop"):
            assert re.search(
                rf"^\| {impl} \| \d+\.\d{{3}} \|( [\d.]+ \|){{2}} \d+ \|", out, re.M
            ), context
        assert re.search(rf"{layout}: zarrox-read-many / zarrox-loop: \d+\.\d\dx", out), context
        assert re.search(rf"{layout}: zarrox-read-many / tensorstore-batch: \d+\.\d\dx", out), (
            context
        )
    assert md.read_text() in out


def test_bench_transaction_fill_quick_smoke(tmp_path: Path) -> None:
    """bench_transaction_fill.py fills shards with and without a transaction and whole with
    each implementation it finds, checks every shard it filled, and reports the ratios."""
    md = tmp_path / "tx.md"
    impls = ["zarrox-tx", "zarrox-loop", "zarrox-whole"]
    if importlib.util.find_spec("tensorstore") is not None:
        impls += ["tensorstore-tx", "tensorstore-loop", "tensorstore-whole"]
    out, context = run_bench(
        "bench_transaction_fill.py",
        "--quick",
        "--impls",
        ",".join(impls),
        "--tmpfs-dir",
        str(tmp_path),
        "--markdown",
        str(md),
    )
    assert "### tmpfs: a 128x128 uint16 shard" in out, context
    for impl in impls:
        assert re.search(rf"^\| {impl} \| \d+\.\d{{4}} \|", out, re.M), context
    assert re.search(r"tmpfs: zarrox-tx / zarrox-whole: \d+\.\d\dx \(target", out), context
    assert re.search(r"tmpfs: zarrox-tx / zarrox-loop: \d+\.\d\dx", out), context
    assert "failed cases: 0" in out, context
    assert md.read_text() in out


def test_bench_per_call_quick_smoke(tmp_path: Path) -> None:
    """bench_per_call.py reads and writes chunk by chunk with every implementation it finds,
    checks what each read and wrote, and reports every codec and case with zarrox's ratio."""
    md = tmp_path / "per_call.md"
    impls = ["zarrox"] + [
        m for m in ("zarrista", "tensorstore") if importlib.util.find_spec(m) is not None
    ]
    run_bench(
        "bench_per_call.py",
        "--quick",
        "--repeat",
        "1",
        "--impls",
        ",".join(impls),
        "--tmpdir",
        str(tmp_path),
        "--markdown",
        str(md),
    )
    rows = [line.split("|")[1:-1] for line in md.read_text().splitlines()[2:]]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [
        (codec, case) for codec in ("raw", "zstd", "blosc", "sharded") for case in ("read", "write")
    ]
    for row in rows:
        assert all(" s (" in cell for cell in row[2:-1]), row
        if len(impls) > 1:
            assert float(row[-1]) > 0


def test_field_suite_smoke(tmp_path: Path) -> None:
    """benches/zarr_benchmarks/run.py at 32^3: it generates the sharded array, runs one
    implementation's scripts as processes (a checked warm-up, then one timed round), checks
    the round trip's copy, and appends its tables to a results file."""
    results = tmp_path / "RESULTS.md"
    results.write_text("# results\n")
    out, context = run_suite(
        *("--scale", "32", "--repeat", "1", "--impls", "zarrox", "--datasets", "sharded"),
        *("--cases", "chunks,roundtrip", "--data", str(tmp_path / "data")),
        *("--results", str(results)),
    )
    text = results.read_text()
    assert text.startswith("# results\n\n## The field's suite (zarrs/zarr_benchmarks) at 32^3")
    for case in ("chunk by chunk", "round trip"):
        assert re.search(rf"^\| sharded \| {case} \| \*?\*?\d+\.\d\d", text, re.M), text
    assert "8^3 shards of 2^3 inner chunks" in text
    assert "[warm-up] sharded      roundtrip    zarrox" in out, context
    data = tmp_path / "data" / "32-8-2"
    assert sorted(p.name for p in data.iterdir()) == ["benchmark_compress_shard.zarr"]
    assert "plot" in out


def run_suite(*argv: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, str(BENCHES / "zarr_benchmarks" / "run.py"), *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )
    context = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, context
    return proc.stdout, context


def test_bench_references_quick_smoke() -> None:
    """bench_references.py (issue 46): a virtual dataset on moto behind the latency proxy;
    every implementation that can run is verified and tabled, with its requests."""
    pytest.importorskip("moto.server")
    pytest.importorskip("h5py")
    pytest.importorskip("kerchunk.hdf")
    pytest.importorskip("s3fs")
    out, context = run_bench("bench_references.py", "--quick")
    lines = out.splitlines()
    impls = ["zarrox", "zarr-fsspec", "zarr-fsspec-zarrox"]
    if importlib.util.find_spec("h5netcdf") is not None:
        impls.append("xarray-h5netcdf")  # the original files, read by xarray
    for op in ("whole", "series"):
        for impl in impls:
            assert any(re.match(rf"{op} +{impl} +\d+\.\d+ +\d+ +\d", ln) for ln in lines), context
    assert "chunks of t2m: 32" in out, context


def test_compare_builds_metadata_smoke() -> None:
    """compare_builds.py --metadata with the zarrox under test as both builds: every case is
    timed in both and given a ratio."""
    import zarrox

    build = str(Path(zarrox.__file__).resolve().parent.parent)
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCHES / "compare_builds.py"),
            build,
            build,
            "--metadata",
            "--rounds",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = {line[:40].strip(): line.split() for line in proc.stdout.splitlines()[1:-1]}
    assert set(rows) == {
        "create sharded",
        "create plain",
        "create rectilinear",
        "open sharded",
        "open rectilinear",
        "tensorstore spec create",
    }
    assert all(float(row[-1]) > 0 for row in rows.values())
    assert "geometric mean b / a" in proc.stdout
