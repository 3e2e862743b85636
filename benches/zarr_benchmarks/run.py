#!/usr/bin/env python3
"""The field's benchmark suite (zarrs/zarr_benchmarks), here: every implementation script
beside this file run as a whole process, timed with its peak RSS, on the suite's data.

    python benches/zarr_benchmarks/run.py                   # 1024^3, best of 3
    python benches/zarr_benchmarks/run.py --scale 256       # a quick look at 256^3
    python benches/zarr_benchmarks/run.py --results benches/RESULTS.md

It generates the three arrays (uint16, ``(x + y*y // 32 + z**3) % 65536``, chunks of a
quarter of the edge: 256^3 at 1024^3; uncompressed, zstd level 0, and sharded with inner
chunks of a quarter of the chunk, zstd inside), unless ``--data`` holds them already; then,
per repetition, per dataset and case, it runs every implementation once, their order
rotating from one repetition to the next, so that a noisy phase of the host is shared. The
first repetition is an untimed warm-up (page cache, bytecode caches) in which every script
checks the values it read, and every round trip's copy is checked by the runner. A cell is
the best of ``--repeat`` timed runs: wall seconds of the whole process (imports included,
as the suite's ``time -v``) and its peak RSS (GNU time's, as the suite's; GB = 1e9 bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _suite  # noqa: E402

#: implementation -> (script, column label); standalone first, then the dask rows
IMPLS: dict[str, tuple[str, str]] = {
    "zarrox": ("zarrox_python.py", "zarrox"),
    "zarrox_pipeline": ("zarrox_pipeline_python.py", "zarr + zarrox pipeline"),
    "tensorstore": ("tensorstore_python.py", "tensorstore"),
    "zarrs_python": ("zarrs_python.py", "zarrs-python"),
    "zarrista": ("zarrista_python.py", "zarrista"),
    "zarr_python": ("zarr_python.py", "zarr-python"),
    "zarrox_dask": ("zarrox_dask_python.py", "zarrox dask"),
    "zarrs_dask_python": ("zarrs_dask_python.py", "zarrs dask"),
    "zarr_dask_python": ("zarr_dask_python.py", "zarr dask"),
}
DASK = ("zarrox_dask", "zarrs_dask_python", "zarr_dask_python")
#: zarrox's own columns; "best other" is the fastest of the rest of its group
OURS = ("zarrox", "zarrox_pipeline", "zarrox_dask")
#: case -> (row label, the script's arguments after the dataset path)
CASES: dict[str, tuple[str, list[str]]] = {
    "read-all": ("read all", ["--read-all"]),
    "chunks": ("chunk by chunk", ["--concurrent-chunks", "1"]),
    "chunks-async": ("chunks, all at once", ["--concurrent-chunks", "0"]),
    "roundtrip": ("round trip", []),
}


@dataclass
class Run:
    """One process: wall seconds, peak RSS in bytes, the timed span the script printed,
    or why it failed (``error``), or that the library cannot do it (``unsupported``)."""

    wall: float = math.nan
    rss: float = math.nan
    span: float = math.nan
    error: str = ""
    unsupported: bool = False


@dataclass
class Cell:
    runs: list[Run] = field(default_factory=list)

    def ok(self) -> list[Run]:
        return [r for r in self.runs if not r.error and not r.unsupported]

    def best(self, attr: str) -> float:
        values = [getattr(r, attr) for r in self.ok() if not math.isnan(getattr(r, attr))]
        return min(values) if values else math.nan

    def text(self, attr: str, fmt: str) -> str:
        if any(r.unsupported for r in self.runs):
            return "-"
        if any(r.error for r in self.runs) and not self.ok():
            return "FAILED"
        value = self.best(attr)
        return "" if math.isnan(value) else format(value, fmt)


# -- data ----------------------------------------------------------------------------------------


def layout(scale: int, chunk: int | None, inner: int | None) -> tuple[int, int, int]:
    """(array edge, chunk edge, inner chunk edge): the suite's proportions unless given."""
    c = chunk or max(1, scale * _suite.CHUNK // _suite.FULL)
    return scale, c, inner or max(1, c // 4)


def generate(
    root: Path, scale: int, chunk: int, inner: int, names: list[str] | None = None
) -> dict[str, Path]:
    """The arrays ``names`` (all three by default) under ``root``, written with zarrox a slab
    of chunks at a time (kept when a previous run finished writing them with this layout)."""
    import zarrox

    zstd = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    paths: dict[str, Path] = {}
    for name, (dirname, compressed, sharded) in _suite.DATASETS.items():
        if names is not None and name not in names:
            continue
        path = root / dirname
        paths[name] = path
        stamp = path / ".generated"
        want = json.dumps([scale, chunk, inner if sharded else None])
        if stamp.exists() and stamp.read_text() == want:
            continue
        shutil.rmtree(path, ignore_errors=True)
        shape = (scale,) * 3
        a = zarrox.create_array(
            str(path),
            shape=shape,
            dtype="uint16",
            chunks=(inner,) * 3 if sharded else (chunk,) * 3,
            shards=(chunk,) * 3 if sharded else None,
            compressors=zstd if compressed else None,
            fill_value=0,
        )
        for z0 in range(0, scale, chunk):
            for y0 in range(0, scale, chunk):
                region = (slice(z0, min(z0 + chunk, scale)), slice(y0, min(y0 + chunk, scale)))
                region += (slice(0, scale),)
                a[region] = _suite.expected(region)
        stamp.write_text(want)
        print(f"generated {path} ({_du(path) / 1e6:.0f} MB on disk)", flush=True)
    return paths


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def check_copy(source: Path, copy: Path) -> None:
    """Raise unless ``copy`` has ``source``'s layout and codecs and the generated values
    (read back with zarrox a slab of chunks at a time)."""
    import zarrox

    src = zarrox.open_array(str(source), mode="r")
    out = zarrox.open_array(str(copy), mode="r")
    for what in ("shape", "dtype", "chunks", "shards", "fill_value"):
        if getattr(src, what) != getattr(out, what):
            raise AssertionError(f"copy's {what} {getattr(out, what)} != {getattr(src, what)}")
    names = [c.get("name") for c in _codecs(out)]
    if names != [c.get("name") for c in _codecs(src)]:
        raise AssertionError(f"copy's codecs {_codecs(out)} != {_codecs(src)}")
    step = tuple(out.shards or out.chunks)
    for z0 in range(0, out.shape[0], step[0]):
        region = (slice(z0, min(z0 + step[0], out.shape[0])), *(slice(0, n) for n in out.shape[1:]))
        _suite.check(region, out[region], f"copy {copy}")


def _codecs(a: Any) -> list[dict[str, Any]]:
    """The codec chain of an array's zarr.json, with a shard's inner chain flattened in."""
    out: list[dict[str, Any]] = []
    for c in a.metadata.to_dict()["codecs"]:
        out.append(c)
        if c.get("name") == "sharding_indexed":
            out.extend(c.get("configuration", {}).get("codecs", []))
    return out


# -- running -------------------------------------------------------------------------------------


def worker_env() -> dict[str, str]:
    """The workers' environment: ours (PYTHONPATH included) with numpy's BLAS threads at one:
    idle OpenBLAS threads spin after ``import numpy`` and would take time from the cores the
    implementation runs on (no case calls BLAS)."""
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    return env


#: GNU time, as the suite measures (a process forked from it inherits its own small peak RSS)
TIME = shutil.which("time", path="/usr/bin:/bin") or ""


def run_one(impl: str, case: str, data: Path, out_root: Path, check: bool, timeout: float) -> Run:
    """Run one implementation's script on one case as a fresh process."""
    script, _ = IMPLS[impl]
    argv = [sys.executable, str(HERE / script)]
    out = out_root / f"copy-{impl}.zarr"
    if case == "roundtrip":
        shutil.rmtree(out, ignore_errors=True)
        argv += ["roundtrip", str(data), str(out)]
    else:
        argv += ["read", str(data), *CASES[case][1]]
    if check:
        argv.append("--check")
    os.sync()  # the previous copy's writeback lands before, not during, this run
    rss = math.nan
    with contextlib.ExitStack() as files:
        stdout, stderr, timed = (files.enter_context(tempfile.TemporaryFile("w+")) for _ in "123")
        if TIME:
            # ``-o``: its figures in a file of their own; %M: the peak RSS in KiB
            argv = [TIME, "-f", "%M", "-o", f"/dev/fd/{timed.fileno()}", *argv]
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdout=stdout,
            stderr=stderr,
            cwd=HERE,
            env=worker_env(),
            pass_fds=(timed.fileno(),),
        )
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        for f in (stdout, stderr, timed):
            f.seek(0)
        text, err, kib = stdout.read(), stderr.read(), timed.read().split()
        # Without GNU time, the child's own figure: it counts this process's peak RSS at the
        # moment the child started (Linux keeps the peak across exec), so the runner keeps
        # itself small (generation and checks run in processes of their own).
        rss = (
            float(kib[-1]) * 1024
            if TIME and kib and kib[-1].isdigit()
            else usage.ru_maxrss * 1024.0
        )
    run = Run(wall=wall, rss=rss)
    if proc.returncode != 0:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()] or [f"exit {proc.returncode}"]
        lines = [ln for ln in lines if not ln.startswith("Command exited with non-zero status")]
        run.error = (lines or [f"exit {proc.returncode}"])[-1][:300]
        return run
    if _suite.UNSUPPORTED in text:
        run.unsupported = True
        return run
    for line in text.splitlines():
        if line.startswith("elapsed_s "):
            run.span = float(line.split()[1])
    if case == "roundtrip":
        try:
            if check:
                in_process(["--internal-check-copy", str(data), str(out)])
        except RuntimeError as e:
            run.error = str(e)[:300]
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return run


def in_process(argv: list[str]) -> None:
    """Run this script with ``argv`` (generation, a copy's check) in a process of its own,
    so that this one stays small; RuntimeError with its last line when it fails."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *argv],
        capture_output=True,
        text=True,
        env=worker_env(),
    )
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()] or ["failed"]
        raise RuntimeError(lines[-1])
    sys.stdout.write(proc.stdout)


# -- reports -------------------------------------------------------------------------------------


def pkg_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def host_line() -> str:
    pkgs = ("zarr", "zarrs", "tensorstore", "zarrista", "dask", "numpy")
    return (
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"zarrox {pkg_version('zarrox')} (from {_zarrox_dir()}), "
        + ", ".join(f"{p} {pkg_version(p)}" for p in pkgs)
    )


def _zarrox_dir() -> str:
    """Where the workers import zarrox from (found without importing it here)."""
    import importlib.util

    spec = importlib.util.find_spec("zarrox")
    origin = spec.origin if spec is not None else None
    return str(Path(origin).resolve().parent.parent) if origin else "not found"


def tables(
    results: dict[tuple[str, str, str], Cell],
    datasets: list[str],
    cases: list[str],
    impls: list[str],
) -> str:
    """The Markdown tables: seconds (the fastest of each group in bold), peak GB, the
    scripts' timed spans, and zarrox over the best other implementation of its group."""
    rows = [(d, c) for c in cases for d in datasets]
    groups = [[i for i in impls if i not in DASK], [i for i in impls if i in DASK]]
    lines: list[str] = []

    def table(title: str, attr: str, fmt: str, scale: float = 1.0, bold: bool = False) -> None:
        cols = [i for g in groups for i in g]
        lines.append(f"{title}\n")
        lines.append("| dataset | case | " + " | ".join(IMPLS[i][1] for i in cols) + " |")
        lines.append("|---|---|" + "---:|" * len(cols))
        for d, c in rows:
            cells = []
            best = {
                id(g): min(
                    (results[d, c, i].best(attr) for i in g if results[d, c, i].ok()),
                    default=math.nan,
                )
                for g in groups
            }
            for g in groups:
                for i in g:
                    cell = results[d, c, i]
                    text = cell.text(attr, fmt)
                    value = cell.best(attr)
                    if not math.isnan(value) and scale != 1.0:
                        text = format(value * scale, fmt)
                    if bold and not math.isnan(value) and value == best[id(g)] and len(g) > 1:
                        text = f"**{text}**"
                    cells.append(text)
            lines.append(f"| {d} | {CASES[c][0]} | " + " | ".join(cells) + " |")
        lines.append("")

    table(
        "Seconds, whole process (best of the repetitions; fastest in bold):",
        "wall",
        ".2f",
        bold=True,
    )
    table("Peak RSS, GB (the least of the repetitions):", "rss", ".2f", scale=1e-9)
    table(
        "Seconds of the operation alone (after imports and opening; what each script printed):",
        "span",
        ".2f",
        bold=True,
    )

    ratio_lines = [
        "zarrox over the fastest other implementation of its group (whole process;"
        " < 1: zarrox first):\n",
        "| dataset | case | ours | time / best other | best other |",
        "|---|---|---|---:|---|",
    ]
    for d, c in rows:
        for ours in OURS:
            if ours not in impls or not results[d, c, ours].ok():
                continue
            group = DASK if ours in DASK else [i for i in IMPLS if i not in DASK]
            others = [i for i in impls if i in group and i not in OURS and results[d, c, i].ok()]
            if not others:
                continue
            best = min(others, key=lambda i: results[d, c, i].best("wall"))
            ratio = results[d, c, ours].best("wall") / results[d, c, best].best("wall")
            ratio_lines.append(
                f"| {d} | {CASES[c][0]} | {IMPLS[ours][1]} | {ratio:.2f}x | {IMPLS[best][1]} |"
            )
    lines.extend(ratio_lines)
    lines.append("")
    failures = [
        f"- {IMPLS[i][1]}, {d}, {CASES[c][0]}: {r.error}"
        for (d, c, i), cell in results.items()
        for r in cell.runs
        if r.error
    ]
    if failures:
        lines.append("Failures:\n")
        lines.extend(dict.fromkeys(failures))
        lines.append("")
    return "\n".join(lines)


def plot(
    results: dict[tuple[str, str, str], Cell],
    datasets: list[str],
    cases: list[str],
    impls: list[str],
    path: Path,
    title: str,
) -> str:
    """A bar chart per case (seconds above, peak GB below), one bar per implementation and
    dataset; "" when matplotlib is missing (then the reason)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.rcParams["svg.fonttype"] = "none"  # text as text: a smaller file, searchable
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, axes = plt.subplots(2, len(cases), figsize=(4.5 * len(cases), 7), squeeze=False)
    width = 0.8 / max(1, len(impls))
    for col, c in enumerate(cases):
        for row, (attr, unit, scale) in enumerate((("wall", "s", 1.0), ("rss", "GB", 1e-9))):
            ax = axes[row][col]
            for k, i in enumerate(impls):
                values = [results[d, c, i].best(attr) * scale for d in datasets]
                xs = [j + (k - (len(impls) - 1) / 2) * width for j in range(len(datasets))]
                ax.bar(
                    xs,
                    values,
                    width,
                    label=IMPLS[i][1],
                    color=f"C{k % 10}",
                    hatch="//" if i in DASK else None,
                )
            ax.set_xticks(range(len(datasets)), datasets)
            ax.set_ylabel(unit)
            if row == 0:
                ax.set_title(CASES[c][0])
    axes[0][0].legend(fontsize=7, ncols=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return ""


# -- the command ---------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=_suite.FULL, help="array edge (1024)")
    p.add_argument("--chunk", type=int, help="chunk (shard) edge: the suite's quarter of --scale")
    p.add_argument("--inner", type=int, help="inner chunk edge of the sharded array: a quarter")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (best of)")
    p.add_argument("--no-warmup", action="store_true", help="no untimed, checked first round")
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--datasets", default=",".join(_suite.DATASETS))
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--data", help="where the arrays are (kept); default: a temporary directory")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    p.add_argument("--results", help="append the report to this Markdown file as a section")
    p.add_argument("--plot", help="the plot's path (default: beside --results, .svg)")
    p.add_argument("--title", default="", help="the section's heading in --results")
    args = p.parse_args(argv)
    for name, known in (("impls", IMPLS), ("datasets", _suite.DATASETS), ("cases", CASES)):
        chosen = [x for x in getattr(args, name).split(",") if x]
        unknown = [x for x in chosen if x not in known]
        if unknown:
            p.error(f"--{name}: unknown {unknown}; known: {','.join(known)}")
        setattr(args, name, chosen)
    return args


def main(argv: list[str] | None = None) -> int:
    internal = list(argv if argv is not None else sys.argv[1:])
    if internal[:1] == ["--internal-check-copy"]:
        check_copy(Path(internal[1]), Path(internal[2]))
        return 0
    if internal[:1] == ["--internal-generate"]:
        root, scale, chunk, inner = Path(internal[1]), *(int(x) for x in internal[2:5])
        generate(root, scale, chunk, inner, internal[5].split(","))
        return 0
    args = parse_args(argv)
    scale, chunk, inner = layout(args.scale, args.chunk, args.inner)
    impls = [i for i in IMPLS if i in args.impls]
    with contextlib.ExitStack() as stack:
        if args.data:
            root = Path(args.data) / f"{scale}-{chunk}-{inner}"
            root.mkdir(parents=True, exist_ok=True)
        else:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zarr-suite-")))
        out_root = root / "copies"
        out_root.mkdir(exist_ok=True)
        stack.callback(shutil.rmtree, out_root, True)
        print(f"host: {host_line()}", flush=True)
        in_process(
            ["--internal-generate", str(root), str(scale), str(chunk), str(inner)]
            + [",".join(args.datasets)]
        )
        paths = {d: root / _suite.DATASETS[d][0] for d in args.datasets}
        results = {(d, c, i): Cell() for d in args.datasets for c in args.cases for i in impls}
        rounds = ([] if args.no_warmup else ["warm-up"]) + list(range(args.repeat))
        started = time.perf_counter()
        for n, rnd in enumerate(rounds):
            for d in args.datasets:
                for c in args.cases:
                    shift = n % len(impls)
                    for i in impls[shift:] + impls[:shift]:
                        run = run_one(i, c, paths[d], out_root, rnd == "warm-up", args.timeout)
                        state = (
                            "-"
                            if run.unsupported
                            else run.error or f"{run.wall:.2f} s, {run.rss / 1e9:.2f} GB"
                        )
                        print(f"[{rnd}] {d:12} {c:12} {i:18} {state}", flush=True)
                        if rnd != "warm-up" or run.error:
                            results[d, c, i].runs.append(run)
        minutes = (time.perf_counter() - started) / 60
    cmd = "python benches/zarr_benchmarks/run.py " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:])
    )
    report = "\n".join(
        [
            f"{scale}^3 uint16, chunks {chunk}^3, sharded: {chunk}^3 shards of {inner}^3 inner "
            f"chunks; best of {args.repeat}, implementations alternating within each "
            f"repetition ({minutes:.0f} minutes in all).",
            "",
            f"Host: {host_line()}.",
            "",
            f"`{cmd.strip()}`",
            "",
            tables(results, args.datasets, args.cases, impls),
        ]
    )
    print()
    print(report)
    if args.results:
        results_path = Path(args.results)
        plot_path = (
            Path(args.plot) if args.plot else results_path.with_name(f"zarr_benchmarks_{scale}.svg")
        )
        note = plot(results, args.datasets, args.cases, impls, plot_path, f"{scale}^3 uint16")
        figure = (
            f"![the suite at {scale}^3]({os.path.relpath(plot_path, results_path.parent)})"
            if not note
            else f"({note}.)"
        )
        title = args.title or f"The field's suite (zarrs/zarr_benchmarks) at {scale}^3"
        with open(results_path, "a") as f:
            f.write(f"\n## {title}\n\n{report}\n{figure}\n")
        print(f"appended to {results_path}" + (f"; {note}" if note else f"; plot {plot_path}"))
    failed = any(r.error for cell in results.values() for r in cell.runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
