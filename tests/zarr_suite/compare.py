"""Compare two runs of zarr-python's test suite (JUnit XML): its default codec pipeline and
zarrox's. Exit status 1 when a test that passes with the default pipeline does not pass with
zarrox's and ``expected_differences.txt`` does not name it.

    python tests/zarr_suite/compare.py DEFAULT.xml ZARROX.xml --expected FILE [--record MD]
    python tests/zarr_suite/compare.py not-passed ZARROX.xml --expected FILE  # ids to rerun

A test's default-pipeline outcome matters only where zarrox's is not "passed" (and for the
expected differences), so ``run.sh`` runs zarrox's pipeline first and the default pipeline
only on the tests ``not-passed`` lists (``--subset``); ``--record`` runs both in full.

``expected_differences.txt``: one test id (``tests/test_x.py::test_name[param]``) per line,
then `` | `` and the reason; ``#`` starts a comment line. A line that starts with
``[zarr 3.1]`` (or ``[zarr 3.1, 3.4]``) applies only to those zarr-python releases (the
version's leading components); a line without one applies to every release.
"""

from __future__ import annotations

import argparse
import platform
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed")


def case_id(module: str, name: str) -> str:
    """The id (``tests/test_x.py::TestClass::test_y[param]``) of the test JUnit XML names by
    ``classname`` ``module`` and ``name``."""
    # classname is "tests.test_codecs.test_blosc" or "...test_x.TestClass"
    path_parts: list[str] = []
    cls: list[str] = []
    for p in module.split("."):
        (cls if cls or (p[:1].isupper() and path_parts) else path_parts).append(p)
    if module:
        return "/".join(path_parts) + ".py::" + "::".join([*cls, name])
    return name.replace(".", "/") + ".py"  # a module that failed to import: its name


def outcomes(path: Path) -> dict[str, str]:
    """Test id -> outcome; a test reported twice (call and teardown) keeps its worst outcome."""
    rank = {o: i for i, o in enumerate(("passed", "skipped", "xfailed", "failed", "error"))}
    result: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        tid = case_id(case.get("classname", ""), case.get("name", ""))
        outcome = "passed"
        for child in case:
            if child.tag == "failure":
                outcome = "failed"
            elif child.tag == "error":
                outcome = "error"
            elif child.tag == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        old = result.get(tid)
        if old is None or rank[outcome] > rank[old]:
            result[tid] = outcome
    return result


def _applies(versions: str, version: str) -> bool:
    """Whether a ``[zarr 3.1, 3.4]`` tag's releases include ``version`` (e.g. ``3.4.2``)."""
    parts = version.split(".")
    for v in versions.split(","):
        want = v.strip().split(".")
        if want and parts[: len(want)] == want:
            return True
    return False


def expected_differences(path: Path, version: str = "?") -> dict[str, str]:
    """The expected differences of zarr-python ``version``: test id -> reason."""
    found: dict[str, str] = {}
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[zarr "):
            tag, _, line = line[len("[zarr ") :].partition("]")
            if not _applies(tag, version):
                continue
            line = line.strip()
        tid, _, reason = line.partition(" | ")
        found[tid.strip()] = reason.strip()
    return found


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["not-passed"]:
        return not_passed(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("default", type=Path)
    p.add_argument("zarrox", type=Path)
    p.add_argument("--expected", type=Path, required=True)
    p.add_argument("--version", default="?")
    p.add_argument("--tests", default="")
    p.add_argument("--workers", default="?")
    p.add_argument("--durations", default="")
    p.add_argument("--record", type=Path)
    p.add_argument(
        "--subset",
        action="store_true",
        help="the default run covered only the tests `not-passed` listed",
    )
    args = p.parse_args(argv)

    default, zarrox = outcomes(args.default), outcomes(args.zarrox)
    expected = expected_differences(args.expected, args.version)
    counts = {
        name: Counter(run.values()) for name, run in (("default", default), ("zarrox", zarrox))
    }
    passed_default = {t for t, o in default.items() if o == "passed"}
    regressions = sorted(t for t in passed_default if zarrox.get(t) != "passed")
    unexpected = [t for t in regressions if t not in expected]
    # A test module that cannot even be collected (a missing test dependency) hides its
    # tests from both runs: count it as a failure rather than let it pass silently.
    uncollected = sorted(t for t, o in zarrox.items() if o == "error" and t not in regressions)
    allowed = [t for t in regressions if t in expected]
    stale = sorted(t for t in expected if t in default and t not in regressions)
    improvements = sorted(
        t for t, o in zarrox.items() if o == "passed" and default.get(t) in ("failed", "error")
    )
    durations = dict(d.split("=", 1) for d in args.durations.split() if "=" in d)

    lines = [
        f"zarr-python {args.version} test suite ({args.tests}), "
        f"{len(zarrox if args.subset else default)} tests:",
    ]
    for name in ("default", "zarrox"):
        c = counts[name]
        took = f", {durations[name]} s" if name in durations else ""
        rerun = " (rerun of the tests not passing with zarrox's)" if args.subset else ""
        lines.append(
            f"  {name:<8} pipeline{rerun if name == 'default' else ''}: "
            + ", ".join(f"{c[o]} {o}" for o in OUTCOMES if c[o] or o in ("passed", "failed"))
            + took
        )
    lines.append(
        f"  passed with the default pipeline but not with zarrox's: {len(regressions)} "
        f"({len(allowed)} expected, {len(unexpected)} unexpected)"
    )
    for t in allowed:
        lines.append(f"    expected: {t} ({zarrox.get(t, 'missing')}): {expected[t]}")
    for t in unexpected:
        lines.append(f"    UNEXPECTED: {t} ({zarrox.get(t, 'missing')})")
    for t in uncollected:
        lines.append(f"  ERROR in both runs (not collected, so none of its tests ran): {t}")
    for t in stale:
        lines.append(f"    note: expected difference no longer differs: {t}")
    if improvements:
        lines.append(f"  failed with the default pipeline, pass with zarrox's: {len(improvements)}")
        lines.extend(f"    {t}" for t in improvements)
    # The closing line: tests that pass with zarrox's pipeline; "failed" counts the
    # differences this comparison rejects, "xfailed" the expected, explained ones (and
    # the suite's own xfails), so no failing test goes uncounted.
    z = counts["zarrox"]
    lines.append(
        f"zarr_suite: {z['passed']} passed, {len(unexpected) + len(uncollected)} failed, "
        f"{z['skipped']} skipped, {z['xfailed'] + len(allowed)} xfailed"
    )
    print("\n".join(lines))

    if args.record:
        record(
            args,
            counts,
            durations,
            regressions,
            allowed,
            unexpected,
            improvements,
            expected,
            default,
            zarrox,
        )
    return 1 if unexpected or uncollected else 0


def not_passed(argv: list[str]) -> int:
    """``compare.py not-passed ZARROX.xml --expected FILE [--version V]``: print the ids of the
    tests that did not pass with zarrox's pipeline, and of the expected differences, one per
    line: the only tests whose default-pipeline outcome the comparison reads."""
    p = argparse.ArgumentParser(prog="compare.py not-passed", description=not_passed.__doc__)
    p.add_argument("zarrox", type=Path)
    p.add_argument("--expected", type=Path, required=True)
    p.add_argument("--version", default="?")
    args = p.parse_args(argv)
    ids = {t for t, o in outcomes(args.zarrox).items() if o != "passed"}
    ids.update(expected_differences(args.expected, args.version))
    print("\n".join(sorted(ids)))
    return 0


def record(
    args: argparse.Namespace,
    counts: dict[str, Counter[str]],
    durations: dict[str, str],
    regressions: list[str],
    allowed: list[str],
    unexpected: list[str],
    improvements: list[str],
    expected: dict[str, str],
    default: dict[str, str],
    zarrox: dict[str, str],
) -> None:
    total = len(default)
    rows = [
        "| pipeline | " + " | ".join(OUTCOMES) + " | wall time |",
        "| --- | " + " | ".join("---:" for _ in OUTCOMES) + " | ---: |",
    ]
    for name, label in (
        ("default", "zarr-python (BatchedCodecPipeline)"),
        ("zarrox", "zarrox (strict)"),
    ):
        c = counts[name]
        took = f"{durations[name]} s" if name in durations else "?"
        rows.append(f"| {label} | " + " | ".join(str(c[o]) for o in OUTCOMES) + f" | {took} |")
    diff = [f"- `{t}` ({zarrox.get(t, 'missing')}): {expected[t]}" for t in allowed]
    diff += [f"- `{t}` ({zarrox.get(t, 'missing')}): UNEXPECTED" for t in unexpected]
    better = [f"- `{t}`" for t in improvements]
    broken = [f"- `{t}`" for t, o in default.items() if o == "error" and zarrox.get(t) == "error"]
    text = f"""# zarr-python's test suite with zarrox as its codec pipeline

Generated by `bash tests/zarr_suite/run.sh --record` (also run by `tests/run.sh`).

zarr-python {args.version}'s own tests (from its sdist: `{args.tests}`; {total} tests) run
twice with the installed zarr-python: with its default codec pipeline, then with
`ZARR_CODEC_PIPELINE__PATH=zarrox.ZarroxCodecPipeline ZARR_CODEC_PIPELINE__STRICT=true`
(strict: no fallback to zarr-python's pipeline). Hypothesis is seeded (`--hypothesis-seed=0`)
so both runs see the same examples; pytest-xdist with {args.workers} workers on
{platform.machine()}, Python {platform.python_version()}.

{chr(10).join(rows)}

Passed with the default pipeline, not with zarrox's: **{len(regressions)}**
({len(allowed)} expected and explained below, {len(unexpected)} unexpected).

{chr(10).join(diff) if diff else "None."}

Failed with the default pipeline, pass with zarrox's: {len(improvements)}

{chr(10).join(better) if better else "None."}

Errors in both runs (test modules that need optional packages this run does not install):

{chr(10).join(broken) if broken else "None."}

The run fails (non-zero exit) on any unexpected difference; expected ones are listed, with
their reason, in `tests/zarr_suite/expected_differences.txt`. Strict mode means a test that
zarrox could not run would fail rather than silently use zarr-python's pipeline.
"""
    args.record.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
