"""The ``zarrox`` command line: every command through a subprocess or ``main`` (exit status,
output, JSON), one-line errors for bad input, and progress bars only on a terminal."""

from __future__ import annotations

import json
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
    assert err.startswith("zarrox: error: zarr.json at 'volume'")
    assert len(err.splitlines()) == 1


def test_usage_errors() -> None:
    proc = run_cli()
    assert proc.returncode == 2
    assert proc.stderr.startswith("zarrox: error: a command is required")
    assert "see 'zarrox --help'" in proc.stderr
    proc = run_cli("demo", "--codec", "lzma")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


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
    # Not over what is there, unless asked: the error says how to proceed, and the
    # destination is left as it was.
    before = (dst / "zarr.json").read_bytes()
    proc = run_cli("convert", str(src), str(dst))
    _one_line_error(proc, "a node already exists at '/'", str(dst), "--overwrite")
    assert (dst / "zarr.json").read_bytes() == before
    assert main(["convert", str(src), str(dst), "--overwrite"]) == 0
    c = zarrox.open_array(dst, path="x", mode="r")
    assert (c.zarr_format, c.shards) == (3, None)
    np.testing.assert_array_equal(c[...], np.arange(64).reshape(8, 8))
    # In place, with no destination.
    assert main(["convert", str(src)]) == 0
    assert zarrox.open_array(src, path="x").zarr_format == 3


# -- one-line errors for bad input ------------------------------------------------------------


def _one_line_error(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("zarrox: error: ")
    for text in expected:
        assert text in proc.stderr


def test_bad_arguments_are_one_line_errors(demo_store: Path, tmp_path: Path) -> None:
    _one_line_error(run_cli("demo", "--shape", "x"), "--shape", "'x'")
    _one_line_error(run_cli("demo", "--shape", "8,-8,8"), "positive")
    _one_line_error(run_cli("demo", "--shape", "8,8,8", "--chunks", "4,4"), "--chunks")
    _one_line_error(run_cli("convert", str(demo_store), "--shards", "a,b"), "--shards", "'a,b'")
    _one_line_error(
        run_cli("convert", str(demo_store), str(tmp_path / "c.zarr"), "--shards", "8,8"),
        "shards (8, 8)",
    )
    _one_line_error(run_cli("copy", str(demo_store), str(tmp_path / "x"), "--chunks", "1,,2"))
    _one_line_error(
        run_cli("copy", str(demo_store), str(tmp_path / "x"), "--compressor", "snappy"),
        "unknown compressor",
    )
    _one_line_error(
        run_cli("copy", str(demo_store), str(tmp_path / "x"), "--compressor", "zstd:high"),
        "integer",
    )
    _one_line_error(run_cli("info", str(demo_store), "--storage-option", "novalue"), "KEY=VALUE")
    _one_line_error(run_cli("bench", str(demo_store), "--repeat", "0"), "positive")
    _one_line_error(run_cli("bench", str(demo_store)), "group", "--path")
    _one_line_error(run_cli("info", "nosuchscheme://bucket/data.zarr"), "nosuchscheme://")
    _one_line_error(run_cli("verify", str(tmp_path / "missing.zarr")), "missing.zarr")
    _one_line_error(run_cli("copy", str(tmp_path / "missing.zarr"), str(tmp_path / "y")))
    _one_line_error(run_cli("nosuchcommand"), "invalid choice")


def test_version_and_help() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"zarrox {zarrox.__version__}"
    for args in (
        ["--help"],
        *([c, "--help"] for c in ("demo", "info", "tree", "verify", "copy", "convert", "bench")),
    ):
        proc = run_cli(*args)
        assert proc.returncode == 0, args
        assert "``" not in proc.stdout and ":func:" not in proc.stdout  # no raw markup
        assert proc.stdout.startswith("usage: zarrox")
    assert "verify" in run_cli("--help").stdout and "copy" in run_cli("--help").stdout


# -- progress bars ------------------------------------------------------------------------------


def _run_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; (exit status, what it drew there)."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "zarrox.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    rc = proc.wait(timeout=300)
    os.close(leader)
    return rc, b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize(
    ("command", "label"),
    [
        (["verify"], "verifying"),
        (["copy", "--compressor", "gzip"], "copying"),
        (["copy"], "copying"),
        (["bench", "--path", "volume", "--repeat", "2"], "bench"),
    ],
)
def test_progress_bars_only_on_a_terminal(
    demo_store: Path, tmp_path: Path, command: list[str], label: str
) -> None:
    args = [command[0], str(demo_store)]
    if command[0] == "copy":
        args.append(str(tmp_path / "copied.zarr"))
    args += command[1:]
    rc, drawn = _run_on_a_terminal(*args)
    assert rc == 0, drawn
    assert label in drawn and "100%" in drawn
    if command[0] == "copy":
        shutil_rmtree(tmp_path / "copied.zarr")
    proc = run_cli(*args)  # stderr is a pipe: nothing drawn
    assert proc.returncode == 0 and proc.stderr == ""
    if command[0] == "copy":
        shutil_rmtree(tmp_path / "copied.zarr")
    rc, drawn = _run_on_a_terminal(*args, "--no-progress")
    assert rc == 0 and label not in drawn


def test_demo_draws_progress_on_a_terminal(tmp_path: Path) -> None:
    rc, drawn = _run_on_a_terminal("demo", "--shape", "32,32,32", "--chunks", "8,8,8")
    assert rc == 0
    assert "writing" in drawn and "reading" in drawn


def shutil_rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# -- verify -------------------------------------------------------------------------------------


@pytest.fixture
def checked_store(tmp_path: Path) -> Path:
    """A hierarchy whose chunks carry checksums: a chunked array, a sharded one, a v2 one."""
    store = tmp_path / "checked.zarr"
    g = zarrox.open_group(store, mode="w")
    a = g.create_array("a", shape=(40, 40), chunks=(10, 10), dtype="f8",
                       compressors=[{"name": "zstd"}, {"name": "crc32c"}])  # fmt: skip
    a[...] = np.random.default_rng(0).random((40, 40))
    s = g.create_array("s", shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                       compressors=[{"name": "crc32c"}])  # fmt: skip
    s[...] = np.arange(64)
    v2 = zarrox.create_array(store, name="v2", shape=(30,), chunks=(10,), dtype="u2",
                             zarr_format=2, compressors={"id": "zlib"})  # fmt: skip
    v2[:20] = 7  # the third chunk is missing
    return store


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def test_verify_finds_nothing_wrong_in_a_good_store(checked_store: Path) -> None:
    proc = run_cli("verify", str(checked_store))
    assert proc.returncode == 0, proc.stderr
    assert "ok       /a: 16 of 16 objects stored" in proc.stdout
    assert "ok       /s: 2 of 2 objects stored" in proc.stdout
    assert "ok       /v2: 2 of 3 objects stored, 1 missing" in proc.stdout
    assert "missing  v2/2 (reads as the fill value)" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("3 arrays checked: 0 corrupt, 1 missing")
    # missing chunks fail only when asked
    assert run_cli("verify", str(checked_store), "--fail-on-missing").returncode == 1
    assert run_cli("verify", str(checked_store), "--path", "a", "--fail-on-missing").returncode == 0


def test_verify_reports_corrupt_chunks_by_key(checked_store: Path) -> None:
    _flip(checked_store / "a" / "c" / "1" / "2", 12)
    (checked_store / "a" / "c" / "3" / "3").write_bytes(b"\x00\x01")  # truncated
    _flip(checked_store / "s" / "c" / "1", 5)  # an inner chunk of a shard
    _flip(checked_store / "v2" / "1", 3)  # zlib stream broken
    (checked_store / "a" / "c" / "9").mkdir()
    (checked_store / "a" / "c" / "9" / "9").write_bytes(b"stray")
    proc = run_cli("verify", str(checked_store))
    assert proc.returncode == 1
    out = proc.stdout
    assert "CORRUPT  /a: 16 of 16 objects stored, 2 corrupt" in out
    assert "corrupt  a/c/1/2: array 'a', chunk 'a/c/1/2': crc32c checksum mismatch" in out
    assert "corrupt  a/c/3/3: " in out
    assert "corrupt  s/c/1: " in out and "inner chunk 0" in out
    assert "corrupt  v2/1: " in out
    assert "unexpected key a/c/9/9" in out
    assert out.splitlines()[-1].startswith("3 arrays checked: 4 corrupt, 1 missing")
    proc = run_cli("verify", str(checked_store), "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False and report["corrupt"] == 4 and report["missing"] == 1
    by_path = {a["path"]: a for a in report["arrays"]}
    assert [(p["key"], p["kind"]) for p in by_path["/a"]["corrupt"]] == [
        ("a/c/1/2", "checksum"),
        ("a/c/3/3", "corrupt"),
    ]
    assert by_path["/s"]["corrupt"][0]["kind"] == "checksum"
    assert by_path["/v2"]["missing"] == ["v2/2"]
    assert by_path["/a"]["unexpected"] == ["a/c/9/9"]
    # the library function reports the same
    from zarrox.verify import verify

    assert verify(checked_store).to_dict() == report


def test_verify_of_unreadable_metadata_is_an_error(checked_store: Path) -> None:
    (checked_store / "a" / "zarr.json").write_text("{")
    _one_line_error(run_cli("verify", str(checked_store), "--path", "a"), "zarr.json at 'a'")


# -- copy ---------------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_copy_copies_stored_bytes(checked_store: Path, tmp_path: Path) -> None:
    dest = tmp_path / "copy.zarr"
    proc = run_cli("copy", str(checked_store), str(dest), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["mode"] == "bytes" and result["kind"] == "hierarchy"
    assert _files(dest) == _files(checked_store)
    assert result["copied"] == len(_files(dest))
    assert result["bytes"] == sum(len(v) for v in _files(dest).values())
    # not over what is there, unless asked
    _one_line_error(run_cli("copy", str(checked_store), str(dest)), "--overwrite")
    (dest / "a" / "c" / "0" / "0").write_bytes(b"junk")
    (dest / "stale").mkdir()
    (dest / "stale" / "zarr.json").write_text("{}")
    assert run_cli("copy", str(checked_store), str(dest), "--overwrite").returncode == 0
    assert _files(dest) == _files(checked_store)  # replaced, stale keys gone
    # one array, to another path (its parent groups created)
    proc = run_cli("copy", str(checked_store), str(tmp_path / "one.zarr"), "--path", "s",
                   "--dest-path", "x/y")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    moved = zarrox.open_array(tmp_path / "one.zarr", path="x/y")
    assert np.array_equal(moved[...], np.arange(64)) and moved.shards == (32,)
    assert isinstance(zarrox.open(tmp_path / "one.zarr", path="x"), zarrox.Group)


def test_copy_recompresses_rechunks_and_reshards(checked_store: Path, tmp_path: Path) -> None:
    dest = tmp_path / "re.zarr"
    proc = run_cli("copy", str(checked_store), str(dest), "--path", "a", "--chunks", "8,8",
                   "--shards", "16,40", "--compressor", "blosc:lz4:7")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "re-encoded" in proc.stdout
    src = zarrox.open_array(checked_store, path="a")
    new = zarrox.open_array(dest, path="a")
    assert (new.chunks, new.shards) == ((8, 8), (16, 40))
    assert new.compressors[0].to_dict()["configuration"]["cname"] == "lz4"
    assert new.compressors[0].to_dict()["configuration"]["clevel"] == 7
    assert np.array_equal(new[...], src[...])
    # everything to Zarr v2, with a numcodecs compressor, and back
    v2 = tmp_path / "v2.zarr"
    proc = run_cli("copy", str(checked_store), str(v2), "--zarr-format", "2", "--shards", "none",
                   "--compressor", "zlib:3", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["copied"] == 4  # the group and its three arrays
    for name in ("a", "s", "v2"):
        copied = zarrox.open_array(v2, path=name)
        assert copied.zarr_format == 2 and copied.compressor.get_config()["level"] == 3
        assert np.array_equal(copied[...], zarrox.open_array(checked_store, path=name)[...])
    import zarr

    assert np.array_equal(zarr.open_array(v2, path="s")[...], np.arange(64))
    back = tmp_path / "back.zarr"
    assert run_cli("copy", str(v2), str(back), "--zarr-format", "3", "--compressor",
                   "none").returncode == 0  # fmt: skip
    assert zarrox.open_array(back, path="a").compressors == ()
    assert np.array_equal(zarrox.open_array(back, path="a")[...], src[...])


def test_json_output_of_info_tree_convert_bench(demo_store: Path, tmp_path: Path) -> None:
    proc = run_cli("info", str(demo_store), "--path", "volume", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["type"] == "array" and doc["shape"] == [16, 16, 16] and doc["chunks"] == [8, 8, 8]
    assert doc["codecs"] == ["bytes", "zstd"] and doc["objects_stored"] == 8
    assert doc["dimension_names"] == ["z", "y", "x"] and doc["attributes"] == {"units": "counts"}
    doc = json.loads(run_cli("info", str(demo_store), "--json").stdout)
    assert doc == {
        "type": "group",
        "path": "/",
        "zarr_format": 3,
        "attributes": {"description": "zarrox demo"},
        "members": ["volume"],
        "store": doc["store"],
    }
    assert json.loads(run_cli("tree", str(demo_store), "--json").stdout) == {
        "type": "group",
        "path": "/",
        "members": [{"name": "volume", "type": "array", "shape": [16, 16, 16], "dtype": "uint16"}],
    }
    doc = json.loads(run_cli("bench", str(demo_store), "--path", "volume", "--repeat", "2",
                             "--json").stdout)  # fmt: skip
    assert doc["array"] == "/volume" and doc["repeat"] == 2 and doc["read_seconds"] > 0
    proc = run_cli("convert", str(demo_store), str(tmp_path / "c.zarr"), "--shards", "16,16,16",
                   "--json")  # fmt: skip
    assert json.loads(proc.stdout) == {
        "converted": "hierarchy",
        "path": "/",
        "dest": str(tmp_path / "c.zarr"),
        "zarr_format": 3,
    }
    doc = json.loads(run_cli("demo", "--shape", "16,16,16", "--chunks", "8,8,8", "--json").stdout)
    assert doc["verified"] is True and doc["chunks_written"] == 8
