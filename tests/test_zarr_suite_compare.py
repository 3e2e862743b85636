"""tests/zarr_suite's comparison: which tests it reruns with zarr-python's own pipeline, how it
judges the two runs, and the pytest plugin that selects the rerun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "zarr_suite"
COMPARE = SUITE / "compare.py"


def junit(path: Path, cases: dict[str, str]) -> Path:
    """A JUnit XML file of ``{"module.Class::name": outcome}`` as pytest writes it."""
    body = {
        "passed": "",
        "failed": '<failure message="x">x</failure>',
        "error": '<error message="x">x</error>',
        "skipped": '<skipped type="pytest.skip" message="x">x</skipped>',
        "xfailed": '<skipped type="pytest.xfail" message="x"></skipped>',
    }
    rows = []
    for key, outcome in cases.items():
        classname, _, name = key.partition("::")
        rows.append(f'<testcase classname="{classname}" name="{name}">{body[outcome]}</testcase>')
    path.write_text(f"<testsuites><testsuite>{''.join(rows)}</testsuite></testsuites>")
    return path


def compare(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(COMPARE), *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    expected = tmp_path / "expected.txt"
    expected.write_text(
        "# comment\n"
        "tests/test_a.py::test_pinned | counts zarr-python's gets\n"
        "[zarr 9.9] tests/test_a.py::test_other_release | another release only\n"
    )
    zarrox = junit(
        tmp_path / "zarrox.xml",
        {
            "tests.test_a::test_ok": "passed",
            "tests.test_a::test_pinned": "failed",
            "tests.test_a::test_broken": "failed",
            "tests.test_a.TestThing::test_skip[x-1]": "skipped",
        },
    )
    return {"expected": expected, "zarrox": zarrox, "dir": tmp_path}


def test_not_passed_lists_the_tests_zarrox_did_not_pass_and_the_expected_ones(runs) -> None:
    out = compare(
        "not-passed", runs["zarrox"], "--expected", runs["expected"], "--version", "3.4.2"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "tests/test_a.py::TestThing::test_skip[x-1]",
        "tests/test_a.py::test_broken",
        "tests/test_a.py::test_pinned",
    ]


def test_a_subset_run_fails_on_a_test_only_the_default_pipeline_passes(runs) -> None:
    default = junit(
        runs["dir"] / "default.xml",
        {
            "tests.test_a::test_pinned": "passed",
            "tests.test_a::test_broken": "passed",
            "tests.test_a.TestThing::test_skip[x-1]": "skipped",
        },
    )
    out = compare(default, runs["zarrox"], "--expected", runs["expected"], "--subset")
    assert out.returncode == 1
    assert "4 tests:" in out.stdout.splitlines()[0]
    assert (
        "default  pipeline (rerun of the tests not passing with zarrox's): 2 passed" in out.stdout
    )
    assert (
        "expected: tests/test_a.py::test_pinned (failed): counts zarr-python's gets" in out.stdout
    )
    assert "UNEXPECTED: tests/test_a.py::test_broken (failed)" in out.stdout
    assert out.stdout.splitlines()[-1] == "zarr_suite: 1 passed, 1 failed, 1 skipped, 1 xfailed"


def test_a_subset_run_passes_when_the_default_pipeline_fails_the_same_test(runs) -> None:
    default = junit(
        runs["dir"] / "default.xml",
        {"tests.test_a::test_pinned": "passed", "tests.test_a::test_broken": "failed"},
    )
    out = compare(default, runs["zarrox"], "--expected", runs["expected"], "--subset")
    assert out.returncode == 0, out.stdout
    assert "UNEXPECTED" not in out.stdout
    assert out.stdout.splitlines()[-1] == "zarr_suite: 1 passed, 0 failed, 1 skipped, 1 xfailed"


def test_the_plugin_runs_only_the_listed_tests(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(
        "import pytest\n"
        "def test_one(): pass\n"
        "def test_two(): raise AssertionError('must not run')\n"
        "class TestGroup:\n"
        "    @pytest.mark.parametrize('v', ['a::b', 'c'])\n"
        "    def test_param(self, v): assert v == 'a::b'\n"
    )
    listed = tmp_path / "listed.txt"
    listed.write_text(
        "tests/test_sample.py::test_one\ntests/test_sample.py::TestGroup::test_param[a::b]\n"
    )
    env = {**os.environ, "ZARR_SUITE_ONLY": str(listed), "PYTHONPATH": str(SUITE)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "listed_tests",
            "-o",
            "addopts=",
            "tests",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed, 2 deselected" in out.stdout
