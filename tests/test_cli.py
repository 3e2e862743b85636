"""The ``zarrox`` command line: ``demo``, ``info`` and ``tree``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrox
from zarrox.cli import main, make_volume


def run_cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zarrox.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **env},
    )


def test_demo_as_module_exits_0_and_verifies(tmp_path: Path) -> None:
    proc = run_cli("demo", "--shape", "64,64,64", "--chunks", "16,16,16", TMPDIR=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "verified: all 262144 values equal" in out
    assert "dataset: (64, 64, 64) uint16 volume, 512.0 KiB, chunks (16, 16, 16), codec zstd" in out
    assert "wrote 64 chunks" in out
    assert "└── volume (64, 64, 64) uint16" in out
    assert proc.stderr == ""
    # Without --keep the temporary store is removed.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("codec", ["zstd", "blosc", "gzip", "none"])
def test_demo_codecs(codec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "demo.zarr"
    rc = main(
        [
            "demo",
            "--shape",
            "32,48,40",
            "--chunks",
            "16,16,16",
            "--codec",
            codec,
            "--dir",
            str(store),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert f"codec {codec}" in out
    assert f"verified: all {32 * 48 * 40} values equal" in out
    assert "wrote 18 chunks" in out
    # The store it leaves behind is a real Zarr v3 hierarchy with the expected codecs.
    arr = zarrox.open_array(store, path="volume", mode="r")
    assert arr.shape == (32, 48, 40)
    assert arr.chunks == (16, 16, 16)
    assert arr.dtype == np.uint16
    assert arr.dimension_names == ("z", "y", "x")
    assert dict(arr.attrs) == {"units": "counts"}
    names = [c["name"] for c in arr.metadata.codecs]
    assert names == (["bytes"] if codec == "none" else ["bytes", codec])
    np.testing.assert_array_equal(arr[...], make_volume((32, 48, 40)))
    group = zarrox.open_group(store, mode="r")
    assert dict(group.attrs) == {"description": "zarrox demo"}


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    store = tmp_path / "made.zarr"
    rc = main(["demo", "--shape", "16,16,16", "--chunks", "8,8,8", "--dir", str(store)])
    assert rc == 0
    return store


def test_info_on_group(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["info", str(demo_store)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines == [
        "Type               : Group (/)",
        "Members            : 1",
        "Attributes         : {'description': 'zarrox demo'}",
    ]
    assert captured.err == ""


def fields(text: str) -> dict[str, str]:
    """``Label : value`` lines of ``zarrox info`` as a dict."""
    return {
        k.strip(): v.strip()
        for k, _, v in (line.partition(" : ") for line in text.splitlines())
        if v
    }


def test_info_on_array(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["info", str(demo_store), "--path", "volume"]) == 0
    info = fields(capsys.readouterr().out)
    assert info["Type"] == "Array" and info["Name"] == "/volume"
    assert info["Data type"] == "uint16 (uint16)"
    assert info["Shape"] == "(16, 16, 16)" and info["Chunk shape"] == "(8, 8, 8)"
    assert info["Codecs"] == "bytes, zstd"
    assert info["Stored objects"] == "8 of 8"
    assert info["No. bytes"] == "8192 (8.0 KiB)"
    assert info["Attributes"] == "1"
    # Chunks and the metadata document, as zarr-python's nbytes_stored counts them.
    stored = sum(p.stat().st_size for p in (demo_store / "volume").rglob("*") if p.is_file())
    assert info["No. bytes stored"] == f"{stored} ({stored / 1024:.1f} KiB)"
    assert float(info["Compression ratio"]) == pytest.approx(8192 / stored, abs=0.01)


def test_info_on_v2_and_legacy_arrays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = zarrox.create_array(
        tmp_path,
        shape=(4,),
        chunks=(2,),
        dtype=">i2",
        zarr_format=2,
        compressors={"id": "zlib", "level": 1},
    )
    a[...] = [1, 2, 3, 4]
    capsys.readouterr()
    assert main(["info", str(tmp_path)]) == 0
    info = fields(capsys.readouterr().out)
    assert info["Zarr format"] == "2" and info["Codecs"] == "bytes, numcodecs.zlib"


def test_info_and_tree_as_subprocess(demo_store: Path) -> None:
    proc = run_cli("info", str(demo_store), "--path", "volume")
    assert proc.returncode == 0, proc.stderr
    assert fields(proc.stdout)["Shape"] == "(16, 16, 16)"
    proc = run_cli("tree", str(demo_store))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "/\n└── volume (16, 16, 16) uint16\n"


def test_tree_nested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "t.zarr"
    root = zarrox.open_group(store, mode="w")
    root.create_array("b/arr", shape=(3, 4), dtype="int16", chunks=(3, 4))
    root.create_group("a")
    root.create_array("c", shape=(5,), dtype="float64", chunks=(5,))
    assert main(["tree", str(store)]) == 0
    assert capsys.readouterr().out == (
        "/\n├── a\n├── b\n│   └── arr (3, 4) int16\n└── c (5,) float64\n"
    )
    assert main(["tree", str(store), "--path", "b"]) == 0
    assert capsys.readouterr().out == "/b\n└── arr (3, 4) int16\n"


@pytest.mark.parametrize("command", ["info", "tree"])
def test_missing_store_exit_2(command: str, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such.zarr"
    proc = run_cli(command, str(missing))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("zarrox: ")
    assert str(missing) in proc.stderr
    assert "Traceback" not in proc.stderr
    # Reading does not create the directory.
    assert not missing.exists()
    assert not (tmp_path / "no").exists()


def test_missing_node_path_exit_2(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["info", str(demo_store), "--path", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "zarrox: " in captured.err and "'nope'" in captured.err
    # tree on an array is an error too: it names the node.
    assert main(["tree", str(demo_store), "--path", "volume"]) == 2
    captured = capsys.readouterr()
    assert "'volume'" in captured.err and "not a group" in captured.err


def test_corrupt_metadata_exit_2(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (demo_store / "volume" / "zarr.json").write_text("{not json")
    capsys.readouterr()
    assert main(["info", str(demo_store), "--path", "volume"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("zarrox: zarr.json at 'volume'")


def test_usage_errors() -> None:
    proc = run_cli()
    assert proc.returncode == 2
    assert "usage: zarrox" in proc.stderr
    proc = run_cli("demo", "--codec", "lzma")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def test_convert_command_makes_v3_sharded_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, dst = tmp_path / "v2", tmp_path / "v3"
    a = zarrox.create_array(
        src,
        name="x",
        shape=(8, 8),
        chunks=(4, 4),
        dtype="i2",
        zarr_format=2,
        compressors={"id": "zlib", "level": 1},
    )
    a[...] = np.arange(64).reshape(8, 8)
    assert main(["convert", str(src), str(dst), "--shards", "8,8"]) == 0
    assert "to Zarr v3" in capsys.readouterr().out
    b = zarrox.open_array(dst, path="x", mode="r")
    assert (b.zarr_format, b.shards) == (3, (8, 8))
    np.testing.assert_array_equal(b[...], np.arange(64).reshape(8, 8))
    # In place, with no destination.
    assert main(["convert", str(src)]) == 0
    assert zarrox.open_array(src, path="x").zarr_format == 3
