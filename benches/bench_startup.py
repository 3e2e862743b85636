"""Start-up cost (issue 42): the time a fresh process takes to ``import`` numpy, zarrox,
tensorstore, zarrista and zarr-python, and to run ``zarrox --help`` and ``zarrox info PATH``,
each as a new Python process (the whole process: interpreter start, imports, exit).

Every repetition runs every case once, in an order rotated by one each repetition (the
cases alternate, so the machine's drift spreads over all of them); an untimed warm-up
repetition comes first (page cache, bytecode caches). Reported: the median and min of each
case, its ratio to ``import numpy`` (medians), and its excess over ``import numpy``: the
median of the differences within each repetition (paired, so a slow phase of the machine
counts against both). Issue 42's targets: ``import zarrox`` within numpy's + 0.15 s,
``zarrox --help`` and ``zarrox info PATH`` within numpy's + 0.3 s.

A library that cannot be imported (zarrista, tensorstore, zarr-python not installed) is
skipped and says so. The processes run with ``PYTHONDONTWRITEBYTECODE`` unset, so sources
on ``PYTHONPATH`` (a checkout) get bytecode caches in the warm-up as an installed package
has them, and with ``OPENBLAS_NUM_THREADS=1`` (as the other benchmarks: OpenBLAS's threads
spin after ``import numpy``).

    .venv/bin/python benches/bench_startup.py [--repeat 15] [--python PATH] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: the console script's code (``zarrox = "zarrox.cli:main"``)
CLI = "import sys; from zarrox.cli import main; sys.argv[0] = 'zarrox'; sys.exit(main())"

#: name -> (code, library it needs or None)
IMPORTS = {
    "python -c pass": ("pass", None),
    "import numpy": ("import numpy", "numpy"),
    "import zarrox": ("import zarrox", "zarrox"),
    "import tensorstore": ("import tensorstore", "tensorstore"),
    "import zarrista": ("import zarrista", "zarrista"),
    "import zarr": ("import zarr", "zarr"),
}
BASELINE = "import numpy"
#: case -> the most it may exceed the baseline by (s), issue 42's targets
LIMITS = {"import zarrox": 0.15, "zarrox --help": 0.3, "zarrox info PATH": 0.3}


@dataclass
class Case:
    name: str
    argv: list[str]
    times: list[float] = field(default_factory=list)
    error: str | None = None


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def importable(python: str, module: str, env: dict[str, str]) -> str | None:
    """None if ``module`` imports in ``python``, else why not (the error's last line)."""
    proc = subprocess.run(
        [python, "-c", f"import {module}"], capture_output=True, text=True, env=env, timeout=300
    )
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {proc.returncode}"


def versions(python: str, env: dict[str, str]) -> str:
    """The interpreter's and the libraries' versions, as the timed processes see them."""
    code = (
        "import sys\n"
        "from importlib.metadata import version, PackageNotFoundError\n"
        "found = [f'Python {sys.version.split()[0]}']\n"
        f"for d in {[m for _, m in IMPORTS.values() if m]!r}:\n"
        "    try:\n"
        "        found.append(f'{d} {version(d)}')\n"
        "    except PackageNotFoundError:\n"
        "        pass\n"
        "print(', '.join(found))\n"
    )
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return proc.stdout.strip()


def write_info_array(root: Path, python: str, env: dict[str, str]) -> Path:
    """A small zstd array for ``zarrox info PATH`` (written by a child: this process need
    not import zarrox)."""
    path = root / "info.zarr"
    code = (
        "import numpy as np, zarrox\n"
        f"a = zarrox.create_array({str(path)!r}, shape=(256, 256), chunks=(64, 64), "
        "dtype='f4', attributes={'units': 'm'})\n"
        "a[:] = np.arange(256 * 256, dtype='f4').reshape(256, 256)\n"
    )
    subprocess.run([python, "-c", code], check=True, env=env, timeout=300)
    return path


def run_once(case: Case, env: dict[str, str]) -> float | None:
    start = time.perf_counter()
    proc = subprocess.run(
        case.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=300
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()
        case.error = tail[-1] if tail else f"exit status {proc.returncode}"
        return None
    return elapsed


def measure(cases: list[Case], repeat: int, env: dict[str, str]) -> None:
    for rep in range(-1, repeat):  # -1: the untimed warm-up
        shift = max(rep, 0) % len(cases)
        for case in cases[shift:] + cases[:shift]:
            if case.error is not None:
                continue
            elapsed = run_once(case, env)
            if elapsed is not None and rep >= 0:
                case.times.append(elapsed)


def paired_excess(case: Case, base: Case) -> float:
    """The median over repetitions of (case - base): repetition i of each is the i-th."""
    return statistics.median(a - b for a, b in zip(case.times, base.times, strict=False))


def report(cases: list[Case], skipped: dict[str, str], repeat: int, about: str) -> str:
    by_name = {c.name: c for c in cases}
    base = by_name.get(BASELINE)
    lines = [
        f"{about}; {os.cpu_count()} CPUs; {repeat} repetitions, cases alternating; "
        "whole processes.",
        "",
        f"| case | median ms | min ms | / {BASELINE} | - {BASELINE} (paired) ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for case in cases:
        if case.error is not None or not case.times:
            lines.append(f"| {case.name} | FAILED: {case.error} | | | |")
            continue
        med, low = statistics.median(case.times), min(case.times)
        ratio = excess = ""
        if base is not None and base.times and base.error is None:
            ratio = f"{med / statistics.median(base.times):.2f}x"
            excess = f"{paired_excess(case, base) * 1e3:+.0f}"
        lines.append(f"| {case.name} | {med * 1e3:.0f} | {low * 1e3:.0f} | {ratio} | {excess} |")
    for name, why in skipped.items():
        lines.append(f"| {name} | skipped: {why} | | | |")
    lines += ["", "targets (issue 42):", ""]
    for name, limit in LIMITS.items():
        case = by_name.get(name)
        if case is None or base is None or case.error or base.error or not case.times:
            lines.append(f"- {name}: n/a")
            continue
        excess = paired_excess(case, base)
        status = "met" if excess <= limit else "not met"
        lines.append(
            f"- {name} - {BASELINE}: {excess * 1e3:+.0f} ms (limit +{limit * 1e3:.0f} ms): {status}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed repetitions (15)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to time")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the report")
    args = parser.parse_args(argv)
    env = child_env()
    cases: list[Case] = []
    skipped: dict[str, str] = {}
    for name, (code, module) in IMPORTS.items():
        why = None if module is None else importable(args.python, module, env)
        if why is None:
            cases.append(Case(name, [args.python, "-c", code]))
        else:
            skipped[name] = why
    if "import zarrox" not in skipped:
        with tempfile.TemporaryDirectory(prefix="zarrox-startup-") as tmp:
            info_path = write_info_array(Path(tmp), args.python, env)
            cases.append(Case("zarrox --help", [args.python, "-c", CLI, "--help"]))
            cases.append(Case("zarrox info PATH", [args.python, "-c", CLI, "info", str(info_path)]))
            measure(cases, args.repeat, env)
    else:
        measure(cases, args.repeat, env)
    text = report(cases, skipped, args.repeat, versions(args.python, env))
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n")
    return 1 if any(c.error for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
