"""README.md's walk-through runs as written: its Python blocks, in order, in one namespace, on
real data (the files the eofs package ships), against S3 on a moto server when zarrox can open
s3:// URLs and the moto fixtures are there, and against a local path (the same code, only the
store replaced) always."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import zarrox

README = Path(__file__).resolve().parent.parent / "README.md"
STORE_LINE = re.compile(r'^store = "s3://[^"]+"', re.M)
OPTIONS_LINE = re.compile(r"^storage_options = \{[^\n]*\}", re.M)


def walkthrough() -> str:
    text = README.read_text()
    start, end = text.index("<!-- walkthrough -->"), text.index("<!-- /walkthrough -->")
    blocks = re.findall(r"```python\n(.*?)```", text[start:end], re.S)
    assert len(blocks) >= 3, "the walk-through has its Python blocks"
    return "\n".join(blocks)


def _run(code: str, store: str, options: Any, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("eofs", reason="the walk-through's data comes with eofs")
    pytest.importorskip("scipy", reason="eofs's netCDF files are read with scipy")
    assert len(STORE_LINE.findall(code)) == 1 and len(OPTIONS_LINE.findall(code)) == 1
    code = STORE_LINE.sub(f"store = {store!r}", code)
    code = OPTIONS_LINE.sub(f"storage_options = {options!r}", code)
    monkeypatch.chdir(cwd)
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, str(README), "exec"), namespace)
    # what the walk-through left behind is real
    back = namespace["back"]
    assert back.z.shape == (65, 1, 29, 49)
    assert zarrox.open_array(cwd / "sst_v3.zarr", path="sst").zarr_format == 3
    assert zarrox.open_array(cwd / "sst_v3.zarr", path="sst").dimension_names == (
        "time",
        "latitude",
        "longitude",
    )


def test_walkthrough_on_a_local_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(walkthrough(), str(tmp_path / "hgt.zarr"), None, tmp_path, monkeypatch)
    assert zarrox.open_array(tmp_path / "hgt.zarr", path="z").compressors[0].cname == "zstd"


def test_walkthrough_on_s3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    try:
        bucket = request.getfixturevalue("s3_bucket")
    except pytest.FixtureLookupError:
        pytest.skip("needs the moto S3 fixture s3_bucket (tests/conftest.py, tests/servers.py)")
    url, options = bucket.url("hgt.zarr"), bucket.object_store_options()
    try:
        zarrox.open_group(url, mode="w", storage_options=options)
    except (ValueError, TypeError) as e:
        pytest.skip(f"zarrox does not open s3:// URLs yet (the store API, issue 15): {e}")
    _run(walkthrough(), url, options, tmp_path, monkeypatch)
